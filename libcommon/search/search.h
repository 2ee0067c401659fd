/*
 * search/search.h: the grep engine of ci-grep: a query (a PCRE2 pattern or a
 * literal, and how to write what it finds) run over the files of one or more
 * trees, with or without an index.
 *
 * A query is a struct search: the options (struct search_opts, filled by the
 * caller, then completed by search_open with what they imply), the compiled
 * pattern and its bounds, and the state of the tree being searched.  Nothing
 * lives outside it: two queries may run in one process, one after the other
 * or at once.
 *
 * The files to read come from the walker (libcommon/parse/walk) or from the
 * index (libcommon/index: its trigram candidates, checked against the tree);
 * they are read by threads, each file searched whole at once (finder.c,
 * scan.c), its output formatted (output.c) and written in path order.  The
 * files of the library, by concern:
 *
 *   pattern.c  the pattern compiled, and how lines are looked for (matcher)
 *   finder.c   a literal found by SIMD (finder.h), newlines counted
 *   scan.c     one buffer searched: lines, context, -v, the regex's bounds
 *   output.c   records and lines: context, -o, -r, --color, -c, -l
 *   select.c   which files: globs, -t, the scope of the paths given, the walk
 *   read.c     reading the files by threads, writing their output in order
 *   plan.c     the index's candidates, and which indexed files to check
 *   dirs.c     the tree checked by its directories (and the index's server)
 *   search.c   the query: open, search the trees, --stats
 */
#ifndef CI_SEARCH_H
#define CI_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parse/walk.h"

struct buf;
struct ci_index;
struct lang;
struct matcher;
struct scope;

/* Exit statuses beside EXIT_OK (0) and EXIT_NOTHING (1), as rg has them. */
#define SEARCH_EXIT_INCOMPLETE EXIT_USAGE	/* 2: a limit stopped a search, results may be incomplete */
#define SEARCH_EXIT_ERROR EXIT_USAGE		/* 2: any error, whatever was written */

/* The bounds of a regex (see bounded_match in scan.c), unless the caller sets others. */
#define SEARCH_MATCH_LIMIT 2000000	/* PCRE2 backtracking steps for one start, at most */
#define SEARCH_FILE_BUDGET_MS 2000	/* time for one file before giving up on it */

/* What an indexed search checks of the tree (--check). */
enum search_check {
	SEARCH_CHECK_FILES,	/* every directory and every file: the same results as a scan */
	SEARCH_CHECK_DIRS,	/* the directories: files rewritten in place since the index are missed */
	SEARCH_CHECK_NONE,	/* nothing: the index's candidates only (--trust-index) */
};

/* A -g glob. */
struct search_glob {
	const char *pat;	/* without the '!' and a leading '/' */
	int exclude;		/* '!': leave matching paths out */
	int has_slash;		/* matched against paths, not names */
};

/*
 * Ask the index's server (ci-index serve) the question q about the index ix
 * at index_path: 0 with its answer in *ans (malloc'd) and *body at the line
 * after its "STAMP <updated>", when it answers for the index as this search
 * reads it (its last update is the one that wrote the index); else 1 (*ans
 * NULL).  The caller's: the fork server belongs to the commands.
 */
typedef int search_ask_fn(struct ci_index *ix, const char *index_path, const char *q, char **ans, char **body,
			  void *data);

/* The options of a query; search_opts_init gives the defaults. */
struct search_opts {
	const char *pattern;		/* as given (search_join_patterns for several) */
	int fixed, icase, word;		/* -F, -i, -w */
	int line_regexp;		/* -x: the pattern matches the whole line */
	int invert;			/* -v: the lines that do not match */
	int only;			/* -o: each match, not its line */
	int quiet;			/* -q: no output, stop at the first match */
	int files_without;		/* -L */
	int list_files;			/* --files: the files, no pattern */
	int text;			/* -a: binary files are searched as text */
	int binary;			/* -uuu: binary files found by the walk are searched,
					   as named ones are ("binary file matches") */
	const char *replace;		/* -r: each match is written as this, or NULL */
	int color;			/* --color: escape sequences as rg's */
	long before, after;		/* -B, -A (-C sets both) */
	long max_count;			/* -m; 0: no limit */
	int files_only, count;		/* -l, -c */
	int json;			/* NDJSON out, else path:line:col:text */
	const char *index;		/* --index, or NULL */
	struct ci_index *index_handle;	/* o.index already open (a shard server's): used, never
					   closed; NULL: opened by the search */
	struct walker *walker_handle;	/* the tree's walker already open on the index's root (a
					   shard server's): used with this search's walk options,
					   what it reads as it goes kept in it; never closed */
	int whole_tree;			/* search_tree with no paths: the whole tree, paths relative
					   to its root, wherever the current directory is (a shard's) */
	int no_index;			/* --no-index */
	int check;			/* --check: enum search_check */
	struct walk_opts walk;		/* walker rules */
	int stats;			/* --stats */
	int threads;			/* -j */
	const struct search_glob *globs;	/* -g, in order (the caller's) */
	size_t globs_nr;
	const struct lang *const *langs;	/* -t (the caller's) */
	size_t langs_nr;
	uint32_t match_limit;		/* PCRE2's match limit for one start (at least 1) */
	long file_budget_ms;		/* time for one file; 0: none at all */
	search_ask_fn *ask;		/* the index's server, or NULL: none asked */
	void *ask_data;			/* its payload */
	void (*on_quiet_match)(void);	/* -q: called by the thread that found a match,
					   e.g. to exit at once; NULL: the search goes on */

	/* implied by the above: set by search_open */
	int globs_include;		/* some glob is not an exclusion */
	int all_files;			/* -v, -L, --files: every file is read, not
					   the index's trigram candidates alone */
	int trust_index;		/* --check none: check nothing */
	int walk_default;		/* walk options are the index's (the defaults) */
};

/* A query: its options, its pattern, the tree being searched. */
struct search {
	struct search_opts o;		/* the options, completed */
	struct matcher *m;		/* the pattern compiled */
	FILE *out, *err;		/* where records and warnings go (stdout, stderr) */
	int wrote;			/* something was written: the "--" between files' context */
	/* the tree being searched (search_tree sets them, and clears them after) */
	const struct scope *scope;	/* the paths searched: what output paths are relative to */
	struct walker *filter;		/* the index's files are checked against this walker's
					   hidden and .ignore rules, or NULL */
	const char *index_path;		/* the index searched, or NULL */
};

/* The defaults: no pattern, the walker's defaults, a thread per CPU. Cannot fail. */
void search_opts_init(struct search_opts *o);

/*
 * Start a query: *out owns a copy of o (the pattern, globs and langs are still
 * the caller's, to keep until search_close), completed with what the options
 * imply, and the pattern compiled.  Returns 0, or -1 after reporting an invalid
 * pattern (with a hint to use -F) or one that holds a newline.
 */
int search_open(struct search **out, const struct search_opts *o);
void search_close(struct search *q);

/*
 * Search the trees of the paths given (each in the repository, or directory
 * outside any, that holds it), or with none the current directory's tree,
 * writing to q->out in path order.  Returns EXIT_OK when something matched,
 * EXIT_NOTHING when not, SEARCH_EXIT_ERROR after an error (a path that does
 * not exist, a file that cannot be read), else SEARCH_EXIT_INCOMPLETE when a
 * limit cut the search of a file short.
 */
int search_paths(struct search *q, char **paths, size_t nr);

/*
 * Search one tree: the one that holds start, at the paths args[0..nr) as the
 * user wrote them, or with none the current directory.  own_index: the tree
 * of the current directory, where o.index and $CI_INDEX apply.  Returns as
 * search_paths does.
 */
int search_tree(struct search *q, const char *start, char **args, size_t nr, int own_index);

/*
 * Search buf[0..len) as the file path, appending what q writes of it to out
 * (records or lines: matches, context, -c, -l).  Returns the number of matching
 * lines (-v: not matching); *limited is 1 when a PCRE2 limit, 2 when the time
 * budget, cut the search short, else 0.  Used by the threads for each file;
 * here, for a buffer of the caller's.
 */
long search_buffer(struct search *q, const char *path, const char *buf, size_t len, struct buf *out,
		   int *limited);

/*
 * -S: does the pattern hold an uppercase letter?  Not one after a backslash
 * (\S, \W, \p{Lu} are classes, not letters).
 * NEEDSWORK: ASCII letters only; rg also sees non-ASCII uppercase letters.
 */
int search_has_uppercase(const char *pattern);

/*
 * Several -e: one regex of alternatives matching a line that any of them
 * matches, as with rg and grep, each in a group; with fixed each is escaped.
 * Appended to out.
 */
void search_join_patterns(struct buf *out, const char *const *patterns, size_t nr, int fixed);

/* The kind of search the pattern gets ("literal", "regex", ...) and its literal, or NULL (--stats). */
const char *search_kind_name(const struct search *q);
const char *search_literal(const struct search *q);
/*
 * The trigram query (FTS5 syntax, trigram.h) that an indexed file must
 * satisfy for a search of the whole tree that trusts its index
 * (--trust-index, no path given) to read it, or NULL when such a search may
 * read files without it (-v, -L, --files, checking the tree, no trigram):
 * where the index holds no file that satisfies it, that search reads nothing
 * (libcommon/fleet's shard pruning).
 */
const char *search_trigram_need(const struct search *q);

#endif
