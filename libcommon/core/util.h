/*
 * util.h: error reporting, allocation that cannot fail, and process exit helpers
 * shared by every ci command.
 *
 * Conventions (see STYLE.md): library code reports an error once with error() or
 * error_errno() and returns a negative value; only cmd/ code exits.  Allocation
 * failure dies inside xmalloc() so callers never check.
 */
#ifndef CI_UTIL_H
#define CI_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Exit codes shared by all commands. */
enum {
	EXIT_OK = 0,		/* something was found / done */
	EXIT_NOTHING = 1,	/* nothing selected (grep convention) */
	EXIT_USAGE = 2,		/* usage error or bad pattern; nothing was read */
	EXIT_IO = 3,		/* I/O error, malformed record, library error */
};

extern const char *progname;	/* "ci-chunk"; set by util_init() */
extern int verbosity;		/* 0 quiet, 1 -v, 2 -vv */

/*
 * Set progname from argv[0] and restore default SIGPIPE (die quietly).  An
 * error that ends the command (die(), an allocation failure, close_stdout()'s
 * write error) exits with EXIT_IO.
 */
void util_init(const char *argv0);
/*
 * The same, with the status such an error exits with given: error_code
 * (ci-grep: 2, as rg has it).  It is the process's, fixed at its start: no
 * library changes it (util_error_code() reads it).
 */
void util_init_code(const char *argv0, int error_code);
/* The status of an error that ends the command: EXIT_IO, or util_init_code's. */
int util_error_code(void);

#define CI_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* "<prog>: <msg>" on stderr; returns -1 so callers can `return error(...)`. */
int error(const char *fmt, ...) CI_PRINTF(1, 2);
/* Same, with ": <strerror(errno)>" appended. */
int error_errno(const char *fmt, ...) CI_PRINTF(1, 2);
/* "<prog>: warning: <msg>" on stderr. */
void warning(const char *fmt, ...) CI_PRINTF(1, 2);
/*
 * The messages of error(), error_errno() and warning() in the calling thread
 * appended to b instead of stderr (NULL: stderr again); die() and
 * usage_error() still write to stderr.  For a library that answers several
 * queries on threads and reports each one's messages as its own
 * (libcommon/fleet's shards).
 */
struct buf;
void util_report_to(struct buf *b);
/*
 * A trap of die() and die_code() on the calling thread (NULL: none): the
 * message goes where the thread's messages go (util_report_to), then
 * caught(arg, code) is called on the dying thread instead of exit(code); it
 * must not return (it parks the thread: what the thread held stays held,
 * its memory reachable).  For a library whose threads each answer a query of
 * their own and must not end the process when one of them fails
 * (libcommon/fleet's shards).
 */
struct util_trap {
	void (*caught)(void *arg, int code);
	void *arg;
};
void util_trap_die(const struct util_trap *t);
/* Print "<prog>: <msg>" and exit with code. */
void die_code(int code, const char *fmt, ...) CI_PRINTF(2, 3) __attribute__((noreturn));
/* die_code(util_error_code(), ...) */
void die(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
/* Usage error: "<prog>: <msg>", then the usage text, on stderr; exit 2. */
void usage_error(const char *usage, const char *fmt, ...) CI_PRINTF(2, 3) __attribute__((noreturn));

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) CI_PRINTF(1, 2);

/* Grow array x (x_nr used, x_alloc allocated) so that it holds at least nr items. */
#define ALLOC_GROW(x, nr, alloc) do { \
	if ((size_t)(nr) > (size_t)(alloc)) { \
		size_t alloc_ = (size_t)(alloc) < 16 ? 16 : (size_t)(alloc); \
		while (alloc_ < (size_t)(nr)) \
			alloc_ = alloc_ + alloc_ / 2; \
		(x) = xrealloc((x), alloc_ * sizeof(*(x))); \
		(alloc) = alloc_; \
	} \
} while (0)

/*
 * Flush and close stdout; a write error (a full disk, a closed pipe) becomes a
 * message and util_error_code().  main() ends with `return close_stdout(ret);`.
 */
int close_stdout(int ret);

/* The getopt value of every command's --version. */
#define OPT_VERSION 1000
/* --version: "<prog> (ci) <version>" on stdout; main's exit status. */
int print_version(const char *prog);

struct option;
/*
 * For completion scripts (scripts/gen-completions): when --list-options is the
 * only argument, print the long options of opts (ended by a NULL name), one a
 * line, "--name" or "--name=" for one that takes a value, and exit 0 (3 on a
 * write error); otherwise return.  Each main() calls it first, so it is in no
 * table and in no usage.
 */
void list_options(int argc, char **argv, const struct option *opts);

/* Parse a non-negative integer option value; usage_error() on junk or out of range. */
long parse_long_arg(const char *usage, const char *opt, const char *s, long min, long max);

/*
 * Numbers and enumerated values from the environment, read one way everywhere.
 * A variable unset or empty gives def.  Junk (not a whole decimal integer, or
 * not one of the words), or a number outside [min, max], is the user's
 * mistake and is said so, naming the variable:
 *   "<prog>: $NAME: expected an integer from MIN to MAX, got 'x'"
 *   "<prog>: $NAME: expected one of 'a', 'b', got 'x'"
 * and the command exits 2 (EXIT_USAGE) before doing anything, as for a bad
 * option; with ENV_WARN the same words are a warning and def is used, for
 * a value that only tunes something in the background of a command that must
 * not fail for it (the idle time of a server a search starts for later ones).
 */
enum {
	ENV_DIE = 0,		/* exit 2 on a bad value */
	ENV_WARN = 1,		/* warn, use the default */
};
long env_long(const char *name, long min, long max, long def, int flags);
/* words: NULL-ended; returns the index of the value among them, or def. */
int env_choice(const char *name, const char *const *words, int def, int flags);

/*
 * After getopt_long() returned c, '?' or ':' (with opterr = 0 and an option string
 * starting with ':'): what was wrong, as "unknown option '--x'" or "option '-j'
 * needs a value".  Returns a static string.
 */
const char *bad_option(int c, int argc, char **argv);

/* Number of online CPUs, at least 1. */
int online_cpus(void);

/*
 * The path of <prog> beside this binary when it is there and executable, else
 * <prog> itself (for execvp to find on PATH).  The caller frees the result.
 */
char *find_prog(const char *prog);

/*
 * Start prog (found by find_prog(); argv[0] is set to prog) with argv, in dir
 * (NULL: here), its standard input in_fd (-1: this one's), its standard error
 * /dev/null when quiet, its standard output a pipe whose reading end is *rfd.
 * The pid, or -1 with errno set.  A program that cannot be run says so on the
 * standard error and exits 127.
 */
pid_t spawn_reader(const char *prog, char **argv, const char *dir, int in_fd, int quiet, int *rfd);

/*
 * Call fn(lo, hi, ctx) for the ranges [lo, hi) that cover [0, n), batch items
 * each, taken in turn by up to threads threads (the caller's among them; one
 * when n is under two batches, or when a thread cannot be started).  fn runs
 * concurrently with itself: what it shares in ctx it updates atomically.
 */
void parallel_batches(size_t n, size_t batch, int threads,
		      void (*fn)(size_t lo, size_t hi, void *ctx), void *ctx);

/* Read a whole file into a malloc'd buffer (NUL-terminated; *len excludes it). */
int read_file(const char *path, char **out, size_t *len);

/*
 * size bytes of zeroed memory in transparent huge pages where the kernel has
 * them (a page fault then brings 2 MiB, not 4 KiB); dies when out of memory.
 * huge_free(p, size) gives it back.  Under HUGE_ALLOC_MIN bytes it is plain
 * malloc'd memory (zeroed, aligned to 64 bytes): a huge page zeroed, and a mapping made and unmapped, for
 * a few KiB (a small shard's table, once a query) cost far more than they save.
 */
#define HUGE_ALLOC_MIN (256u << 10)
void *huge_alloc(size_t size);
void huge_free(void *p, size_t size);

/* FNV-1a, 64 bits, over p[0..n), continuing from h (FNV1A_BASIS to start). */
#define FNV1A_BASIS 0xcbf29ce484222325ull
uint64_t fnv1a(uint64_t h, const void *p, size_t n);

/* qsort(), unless the n elements are already in order (one pass to see). */
void qsort_unsorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/*
 * The path of a cache file of ci's: $XDG_CACHE_HOME/ci/<name>, else
 * $HOME/.cache/ci/<name> (the directories made when missing); NULL when
 * neither variable holds an absolute path.  Malloc'd.
 */
char *cache_file(const char *name);

#endif
