/*
 * util.c: error reporting and allocation helpers (see util.h).
 */
#include "core/common.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <getopt.h>
#include <limits.h>
#include <unistd.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

const char *progname = "ci";
int verbosity;
static int error_code = EXIT_IO;	/* written by util_init_code() only, before any work */

/*
 * The name before main() runs: a constructor that reads the environment
 * (lang.c's test hook) reports a bad value under the command's name.
 */
__attribute__((constructor(101))) static void progname_early(void)
{
	progname = program_invocation_short_name;
	if (!strncmp(progname, "lt-", 3))
		progname += 3;
}

void util_init(const char *argv0)
{
	util_init_code(argv0, EXIT_IO);
}

int util_error_code(void)
{
	return error_code;
}

void util_init_code(const char *argv0, int code)
{
	const char *slash;

	error_code = code;
	if (argv0 && *argv0) {
		slash = strrchr(argv0, '/');
		progname = slash ? slash + 1 : argv0;
		/* libtool-style wrappers and ASan builds keep the name */
		if (!strncmp(progname, "lt-", 3))
			progname += 3;
	}
	signal(SIGPIPE, SIG_DFL);
}

/* Where this thread's messages go instead of stderr (util_report_to), or NULL. */
static __thread struct buf *report_sink;

void util_report_to(struct buf *b)
{
	report_sink = b;
}

/* What die() on this thread does instead of ending the process (util_trap_die), or NULL. */
static __thread const struct util_trap *die_trap;

void util_trap_die(const struct util_trap *t)
{
	die_trap = t;
}

/* A die() on a thread with a trap: the message to its sink, then the trap's end of the thread. */
static void trapped(int code)
{
	const struct util_trap *t = die_trap;

	die_trap = NULL;
	t->caught(t->arg, code);
	abort();	/* caught does not return */
}

static void vreport(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	struct buf b = BUF_INIT;

	buf_addf(&b, "%s: %s", progname, prefix);
	buf_vaddf(&b, fmt, ap);
	if (suffix)
		buf_addf(&b, ": %s", suffix);
	buf_addch(&b, '\n');
	if (report_sink) {
		buf_add(report_sink, b.buf, b.len);
		buf_release(&b);
		return;
	}
	fflush(stdout);
	fwrite(b.buf, 1, b.len, stderr);
	buf_release(&b);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vreport("", fmt, ap, strerror(e));
	va_end(ap);
	errno = e;
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void die_code(int code, const char *fmt, ...)
{
	va_list ap;

	if (die_trap) {
		/* a thread's query that ends, not the process: said as its own */
		va_start(ap, fmt);
		vreport("", fmt, ap, NULL);
		va_end(ap);
		trapped(code);
	}
	report_sink = NULL;	/* the end of the process: said where it is seen */
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	exit(code);
}

void die(const char *fmt, ...)
{
	va_list ap;

	if (die_trap) {
		/* a thread's query that ends, not the process: said as its own */
		va_start(ap, fmt);
		vreport("", fmt, ap, NULL);
		va_end(ap);
		trapped(error_code);
	}
	report_sink = NULL;	/* the end of the process: said where it is seen */
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	exit(error_code);
}

void usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	report_sink = NULL;	/* the end of the process: said where it is seen */
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	fputs(usage, stderr);
	exit(EXIT_USAGE);
}

static void *oom(size_t n)
{
	fprintf(stderr, "%s: out of memory allocating %zu bytes\n", progname, n);
	exit(error_code);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	return p ? p : oom(n);
}

void *xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);

	return p ? p : oom(nmemb * n);
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	return q ? q : oom(n);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	return p ? p : oom(strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	return p ? p : oom(n);
}

char *xasprintf(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return buf_detach(&b, NULL);
}

int close_stdout(int ret)
{
	int failed = ferror(stdout);

	if (fflush(stdout) != 0)
		failed = 1;
	if (fclose(stdout) != 0)
		failed = 1;
	if (failed) {
		if (errno == EPIPE)
			return ret;
		error_errno("write error on standard output");
		return error_code;
	}
	return ret;
}

long parse_long_arg(const char *usage, const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage_error(usage, "%s: expected an integer from %ld to %ld, got '%s'", opt, min, max, s);
	return v;
}

long env_long(const char *name, long min, long max, long def, int flags)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!errno && end != s && !*end && v >= min && v <= max)
		return v;
	if (flags & ENV_WARN) {
		warning("$%s: expected an integer from %ld to %ld, got '%s': using %ld", name, min, max, s, def);
		return def;
	}
	die_code(EXIT_USAGE, "$%s: expected an integer from %ld to %ld, got '%s'", name, min, max, s);
}

int env_choice(const char *name, const char *const *words, int def, int flags)
{
	const char *s = getenv(name);
	struct buf b = BUF_INIT;
	int i;

	if (!s || !*s)
		return def;
	for (i = 0; words[i]; i++)
		if (!strcmp(s, words[i]))
			return i;
	for (i = 0; words[i]; i++)
		buf_addf(&b, "%s'%s'", i ? ", " : "", words[i]);
	if (flags & ENV_WARN) {
		warning("$%s: expected one of %s, got '%s': ignored", name, b.buf, s);
		buf_release(&b);
		return def;
	}
	die_code(EXIT_USAGE, "$%s: expected one of %s, got '%s'", name, b.buf, s);
}

int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

int read_file(const char *path, char **out, size_t *len)
{
	struct buf b = BUF_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return error_errno("cannot open '%s'", path);
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return error_errno("cannot read '%s'", path);
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		buf_grow(&b, (size_t)st.st_size + 1);
	for (;;) {
		buf_grow(&b, 65536);
		n = read(fd, b.buf + b.len, b.alloc - b.len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error_errno("cannot read '%s'", path);
			close(fd);
			buf_release(&b);
			return -1;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
		b.buf[b.len] = '\0';
	}
	close(fd);
	*out = buf_detach(&b, len);
	return 0;
}

const char *bad_option(int c, int argc, char **argv)
{
	static char msg[256];
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (c == ':') {
		if (optopt && arg[0] == '-' && arg[1] != '-')
			snprintf(msg, sizeof(msg), "option '-%c' needs a value", optopt);
		else
			snprintf(msg, sizeof(msg), "option '%.200s' needs a value", arg);
	} else if (optopt && optopt < 256) {
		snprintf(msg, sizeof(msg), "unknown option '-%c'", optopt);
	} else {
		snprintf(msg, sizeof(msg), "unknown option '%.200s'", arg);
	}
	return msg;
}

/* Where <prog> is: beside this binary, else on PATH. */
char *find_prog(const char *prog)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash, *p;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			p = xasprintf("%s/%s", self, prog);
			if (!access(p, X_OK))
				return p;
			free(p);
		}
	}
	return xstrdup(prog);
}

pid_t spawn_reader(const char *prog, char **argv, const char *dir, int in_fd, int quiet, int *rfd)
{
	char *path = find_prog(prog);
	int fd[2], saved;
	pid_t pid;

	if (pipe(fd) < 0) {
		free(path);
		return -1;
	}
	argv[0] = (char *)prog;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(fd[0]);
		if (dup2(fd[1], STDOUT_FILENO) < 0 || (in_fd >= 0 && dup2(in_fd, STDIN_FILENO) < 0))
			_exit(127);
		close(fd[1]);
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0 && dup2(null, STDERR_FILENO) >= 0)
				close(null);
		}
		if (dir && chdir(dir) < 0) {
			fprintf(stderr, "%s: cannot enter '%s': %s\n", progname, dir, strerror(errno));
			_exit(127);
		}
		execvp(path, argv);
		fprintf(stderr, "%s: cannot run '%s': %s\n", progname, path, strerror(errno));
		_exit(127);
	}
	saved = errno;
	free(path);
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		errno = saved;
		return -1;
	}
	*rfd = fd[0];
	return pid;
}

struct batches {
	size_t n, batch;
	size_t next;		/* the next batch's first item (atomic) */
	void (*fn)(size_t lo, size_t hi, void *ctx);
	void *ctx;
};

static void *batches_worker(void *arg)
{
	struct batches *b = arg;
	size_t lo;

	while ((lo = __atomic_fetch_add(&b->next, b->batch, __ATOMIC_RELAXED)) < b->n)
		b->fn(lo, lo + b->batch < b->n ? lo + b->batch : b->n, b->ctx);
	return NULL;
}

void parallel_batches(size_t n, size_t batch, int threads,
		      void (*fn)(size_t lo, size_t hi, void *ctx), void *ctx)
{
	struct batches b = { n, batch ? batch : 1, 0, fn, ctx };
	pthread_t tids[63];
	int started = 0, i;

	if (n >= 2 * b.batch)
		while (started < threads - 1 && started < (int)ARRAY_SIZE(tids) &&
		       pthread_create(&tids[started], NULL, batches_worker, &b) == 0)
			started++;
	batches_worker(&b);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
}

#define HUGE_PAGE (2u << 20)

void *huge_alloc(size_t size)
{
	size_t len = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	unsigned char *p, *q;
	size_t head;

	if (!size)
		return NULL;
	if (size < HUGE_ALLOC_MIN) {
		/* aligned as a cache line, as a mapping's start is at least */
		p = aligned_alloc(64, (size + 63) & ~(size_t)63);
		if (!p)
			die("out of memory (%zu bytes)", size);
		return memset(p, 0, size);
	}
	/* map a huge page more, to start on a huge page's boundary */
	p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("out of memory (%zu bytes)", size);
	q = (unsigned char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	head = (size_t)(q - p);
	if (head)
		munmap(p, head);
	munmap(q + len, HUGE_PAGE - head);
	madvise(q, len, MADV_HUGEPAGE);	/* advice: without THP it is plain memory */
	return q;
}

void huge_free(void *p, size_t size)
{
	if (p && size < HUGE_ALLOC_MIN)
		free(p);
	else if (p)
		munmap(p, (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1));
}

void qsort_unsorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
}

char *cache_file(const char *name)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir, *path;

	if (xdg && *xdg == '/') {
		dir = xasprintf("%s/ci", xdg);
	} else if (home && *home == '/') {
		char *cache = xasprintf("%s/.cache", home);
		mkdir(cache, 0755);
		free(cache);
		dir = xasprintf("%s/.cache/ci", home);
	} else {
		return NULL;
	}
	mkdir(dir, 0755);
	path = xasprintf("%s/%s", dir, name);
	free(dir);
	return path;
}

uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

int print_version(const char *prog)
{
	printf("%s (ci) %s\n", prog, PACKAGE_VERSION);
	return close_stdout(0);
}

void list_options(int argc, char **argv, const struct option *opts)
{
	if (argc != 2 || strcmp(argv[1], "--list-options"))
		return;
	for (; opts->name; opts++)
		printf("--%s%s\n", opts->name, opts->has_arg == required_argument ? "=" : "");
	exit(close_stdout(EXIT_OK));
}
