/*
 * ci.h: what the files of the `ci` front command share (the files of cmd/ci/, one a
 * group of subcommands, as git's builtins): the arguments of a subcommand,
 * running the other ci programs and reading their records, writing records.
 * The engines are in libcommon/context/.
 */
#ifndef CI_CMD_CI_H
#define CI_CMD_CI_H

#include "core/common.h"

#include <stdarg.h>
#include <sys/types.h>
#include <jansson.h>

#include "context/context.h"
#include "context/memory.h"

/* main.c: the usage of every subcommand, for `ci <sub> --help`. */
extern const char ci_usage_text[];

/* ---- args.c: the arguments of a subcommand ---- */

/* The flags one subcommand accepts, and what it was given. */
struct flags {
	const char *sub;		/* the subcommand, for messages */
	const char *const *names;	/* the flags that take a value (without --) */
	const char *values[8];		/* their values, NULL when not given */
	const char *const *bools;	/* the flags without a value */
	int set[8];			/* whether each was given */
	const char *args[4];		/* the positional arguments */
	int args_nr;			/* how many */
};

/* The position of name[0..len) in the NULL-ended list, or -1. */
int flag_index(const char *const *list, const char *name, size_t len);
/* Parse argv (after the subcommand) into f; an unknown flag fails (exit 2). */
void parse_flags(struct flags *f, int argc, char **argv);
/*
 * parse_flags() for a subcommand that takes options only: a positional argument
 * is an error, with a hint at the option it may have meant (use, or NULL).
 */
void parse_options(struct flags *f, int argc, char **argv, const char *use);
/* A --limit value: a whole number from 1 to max, or fail (exit 2). */
const char *check_limit(const char *sub, const char *s, long max);
/* A string value, or NULL when not given or empty. */
const char *given(const char *v);

/* A usage error of a subcommand: "ci: <message>", exit 2. */
void usage_fail(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
/* Any other error of a subcommand, as codebase-context reports it: exit 1. */
void fail(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
/* A library's error, said already: exit 1. */
void fail_said(void) __attribute__((noreturn));

/* ---- run.c: the other programs, and records ---- */

/* How a child is started. */
struct child_opts {
	int quiet;	/* its stderr to /dev/null (questions whose "no" is an answer) */
	int in_fd;	/* its standard input (-1: ours) */
};

/* Replace this process by <prog> with the arguments argv (argv[0] is set here). */
void run_exec(const char *prog, char **argv) __attribute__((noreturn));
/*
 * Run <prog> with argv; with json (or not on a terminal), exec it (its NDJSON is
 * the output); else read its records and write them for people.  Its exit status.
 */
int run(const char *prog, char **argv, int json);
/* Run <prog> with argv and read all it writes on stdout into out; its exit status. */
int capture(struct buf *out, const char *prog, char **argv, const struct child_opts *co);
/*
 * Run <prog> with argv (co NULL: as ours) and parse its NDJSON output: an array
 * of the records (lines that are not JSON are left out), the exit status in
 * *rc.  Cannot fail.
 */
json_t *records_of(const char *prog, char **argv, const struct child_opts *co, int *rc);
/* Write one record as a line of compact JSON. */
void put_json(json_t *rec);
/* Whether output is for machines: --json, or not a terminal. */
int want_json(int json);
/* Write the records (as JSON lines, or for people), release them; returns close_stdout(rc). */
int emit_records(json_t *recs, int json, int rc);
/* The repository root and index path, from ci-index status; fails without an index. */
json_t *index_status(const char *sub);
/* The index's path for the status (malloc'd). */
char *status_index_path(json_t *status);
/*
 * The commit records of the repository's history (ci-couple history), newest
 * first, 2000 at most; since is a ci-couple --since value or NULL.  An empty
 * array outside a git repository or without commits.
 */
json_t *git_commits(const char *since);
/* The memories of .codebase-context/memory.json into ms; fails (exit 1) when it is broken. */
void memory_open_or_fail(struct memory_store *ms);
/* The patterns of category from the index's imports and the history; fails without an index. */
json_t *patterns_of(const char *sub, const char *category);

/* The TOML parser of libcommon/core/toml-json.cc, for the library. */
extern const struct context_toml ci_toml;

/* ---- the subcommands, one group a file ---- */
int cmd_search(int argc, char **argv);		/* search.c */
int cmd_grep_chunks(int argc, char **argv);	/* search.c */
int cmd_status(int argc, char **argv);		/* index.c */
int cmd_reindex(int argc, char **argv);		/* index.c */
int cmd_refs(int argc, char **argv);		/* index.c */
int cmd_cycles(int argc, char **argv);		/* index.c */
int cmd_metadata(int argc, char **argv);	/* index.c */
int cmd_memory(int argc, char **argv);		/* memory.c */
int cmd_patterns(int argc, char **argv);	/* patterns.c */
int cmd_context(int argc, char **argv);		/* patterns.c */
int cmd_style_guide(int argc, char **argv);	/* style.c */
int cmd_beads(int argc, char **argv);		/* records.c */
int cmd_archive(int argc, char **argv);		/* records.c */
int cmd_feedback(int argc, char **argv);	/* feedback.c */
int cmd_bundle(int argc, char **argv);		/* feedback.c */

#endif
