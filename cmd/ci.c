/*
 * ci: one command in front of the others, as git is.
 *
 *   ci search --query <q> [--intent <i>] [--limit <n>] [--lang <l>]   ci-rank
 *   ci status                                                         ci-index status
 *   ci reindex [--incremental]                                        ci-index build|update
 *   ci refs --symbol <name> [--limit <n>]                             ci-refs refs
 *   ci cycles [--scope <path>]                                        ci-refs cycles
 *   ci metadata                              ci-index status + package manifests
 *   ci memory list|add|remove                       .codebase-context/memory.json
 *   ci style-guide [--query <q>] [--category <c>]   rules from the documentation
 *   ci patterns [--category <c>]            the index's imports + git history
 *   ci grep|index|rank|refs-raw|mcp|fleet <args>... ci-grep, ci-index, ci-rank, ci-refs, ci-mcp, ci-fleet
 *
 * The subcommands and their flags are those of the codebase-context CLI, so that
 * a script written against it works against ci: errors on stderr with exit code 1,
 * human-readable output on a terminal and --json (NDJSON records) for machines.
 * A mapped subcommand execs its program (found beside this binary first, then on
 * PATH, never through a shell); only on a terminal without --json does ci stay
 * and turn the records into lines of text.
 */
#include "core/common.h"
#include "core/human.h"

#include <errno.h>
#include <stdarg.h>
#include <strings.h>
#include <limits.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <jansson.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>

#include "index/index.h"
#include "core/toml-json.h"
#include "embed/vec.h"

static const char usage_text[] =
	"usage: ci [-h] <subcommand> [<args>]\n"
	"\n"
	"Subcommands (flags as in the codebase-context CLI; each takes --json):\n"
	"  search <q> | --query <q> [--intent explore|edit|refactor|migrate] [--limit <n>] [--lang <l>]\n"
	"           [--snippets]    ranked search (ci-rank), search quality, related memories;\n"
	"                           edit, refactor, migrate: the preflight card\n"
	"  metadata                 languages, file counts and dependencies (package.json,\n"
	"                           pyproject.toml, requirements.txt, go.mod, Cargo.toml)\n"
	"  status                   what the index holds (ci-index status)\n"
	"  reindex [--incremental]  build the index anew, or update it (ci-index)\n"
	"  refs --symbol <name> [--limit <n>]\n"
	"                           where a symbol is referenced (ci-refs refs)\n"
	"  cycles [--scope <path>]  import cycles (ci-refs cycles)\n"
	"  bundle --query <q> [--budget <n>] [--depth <n>] [--max-coupled <n>] [--threshold <x>]\n"
	"           [--limit <n>] [--agent <a>]\n"
	"                           a context bundle (ci-rank context), recorded as an injection\n"
	"  feedback submit --injection-id <id> --rating useful|noise|harmful [--agent] [--reason]\n"
	"  feedback list [--rating <r>] [--agent <a>] [--limit <n>]\n"
	"  feedback stats\n"
	"  feedback lineage store --feedback-ids <n,...> --action-type <t> --description <d>\n"
	"           [--bead <b>] [--commit-hash <h>] [--agent <a>]\n"
	"  feedback lineage list [--feedback-id <n>] [--bead <b>] [--commit-hash <h>] [--limit <n>]\n"
	"                           ratings of injections and what was done about them (in the index)\n"
	"  beads search --query <q> [--priority 1-4] [--status <s>] [--assignee <a>] [--limit <n>]\n"
	"           [--mode hybrid|keyword|semantic]\n"
	"                           the issues of .beads/issues.jsonl, ranked\n"
	"  archive search --query <q> [--source <name>] [--filter <name>] [--after <date>]\n"
	"           [--before <date>] [--limit <n>] [--mode hybrid|keyword|semantic]\n"
	"  archive recent --after <date> [--source <name>] [--limit <n>]\n"
	"                           dated Markdown and JSONL records of the sources in\n"
	"                           .bobbin/config.toml ([[archive.sources]])\n"
	"  grep-chunks --pattern <p> [--ignore-case] [--regex] [--type <kind>] [--limit <n>]\n"
	"                           exact or regex matches (ci-grep) by the indexed chunk\n"
	"                           holding them\n"
	"  memory list [--category <c>] [--type <t>] [--query <q>]\n"
	"  memory add --type <t> --category <c> --memory <text> [--reason <r>]\n"
	"  memory remove <id>       the team memory in .codebase-context/memory.json\n"
	"  style-guide [--query <q>] [--category <c>]\n"
	"                           rules from STYLE*, CONTRIBUTING* (their style sections),\n"
	"                           docs/**, .editorconfig, linter configuration, the README\n"
	"  context                  a Markdown overview: languages, dependencies, patterns, memory\n"
	"  patterns [--category all|di|state|testing|libraries]\n"
	"                           import patterns: frequencies, trends from git history\n"
	"  grep|index|rank|refs-raw|mcp|fleet <args>...\n"
	"                           run ci-grep, ci-index, ci-rank, ci-refs, ci-mcp or ci-fleet\n"
	"  help                     show this help\n"
	"\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n";

#define MEMORY_FILE ".codebase-context/memory.json"

/* The programs of the pass-through subcommands. */
static const struct {
	const char *name;	/* the subcommand */
	const char *prog;	/* the program it runs */
} passthrough[] = {
	{ "grep", "ci-grep" },
	{ "index", "ci-index" },
	{ "rank", "ci-rank" },
	{ "refs-raw", "ci-refs" },
	{ "mcp", "ci-mcp" },
	{ "fleet", "ci-fleet" },
};

/* "ci: <message>" on stderr, then exit with code. */
static void vfail(int code, const char *fmt, va_list ap) __attribute__((noreturn));
static void vfail(int code, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(code);
}

/*
 * A usage error of a subcommand (an unknown option, a missing or malformed
 * argument): the message, then exit 2, as every ci command does.
 */
static void usage_fail(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
static void usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(EXIT_USAGE, fmt, ap);
}

/* Any other error of a subcommand, as codebase-context reports it: exit 1. */
static void fail(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(1, fmt, ap);
}

/* Replace this process by <prog> with the arguments argv (argv[0] is set here). */
static void run_exec(const char *prog, char **argv) __attribute__((noreturn));
static void run_exec(const char *prog, char **argv)
{
	char *path = find_prog(prog);

	argv[0] = (char *)prog;
	fflush(stdout);
	execvp(path, argv);
	fprintf(stderr, "%s: cannot run '%s': %s\n", progname, path, strerror(errno));
	free(path);
	exit(1);
}

/* One record as a line of text: its scalar fields as key=value, the rest as JSON. */
/* Records for people: those of human.h's formatter (grouped by file, in colour). */
static int human_color(void)
{
	const char *nc = getenv("NO_COLOR");

	return !(nc && *nc);
}


/* Whether children's stderr goes to /dev/null (questions whose "no" is an answer). */
static int quiet_children;
/* When not -1, the file children read as their standard input. */
static int child_stdin = -1;

/*
 * Start prog with argv, its standard output a pipe: the pid, and the pipe's
 * reading end in *rfd.  Dies on failure.
 */
static pid_t spawn_reading(const char *prog, char **argv, int *rfd)
{
	pid_t pid = spawn_reader(prog, argv, NULL, child_stdin, quiet_children, rfd);

	if (pid < 0)
		die_code(EXIT_IO, "cannot start %s: %s", prog, strerror(errno));
	return pid;
}
/*
 * Run <prog> with argv; with json, exec it (its NDJSON is the output); else read
 * its records and write each as a line of text.  Returns its exit status.
 */
static int run(const char *prog, char **argv, int json)
{
	int rfd, status, ret;
	pid_t pid;
	FILE *in;

	if (json || !isatty(STDOUT_FILENO))
		run_exec(prog, argv);
	pid = spawn_reading(prog, argv, &rfd);
	in = fdopen(rfd, "r");
	if (!in)
		die_code(EXIT_IO, "cannot read from %s: %s", prog, strerror(errno));
	human_format(in, stdout, human_color());
	fclose(in);
	if (waitpid(pid, &status, 0) < 0)
		die_code(EXIT_IO, "cannot wait for %s: %s", prog, strerror(errno));
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	return close_stdout(ret);
}

/* ---- the arguments of a subcommand -------------------------------------------- */

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

static int flag_index(const char *const *list, const char *name, size_t len)
{
	int i;

	for (i = 0; list && list[i]; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], name, len))
			return i;
	return -1;
}

/*
 * Print the part of usage_text about subcommand sub (the entries whose first word
 * is sub's, with their continuation lines) and exit 0: `ci search --help`.
 */
static void sub_help(const char *sub)
{
	size_t wl = strcspn(sub, " ");
	const char *p = usage_text;
	int in = 0;

	printf("usage: ci %.*s ...\n\n", (int)wl, sub);
	while (*p) {
		size_t n = strcspn(p, "\n");
		if (n > 2 && p[0] == ' ' && p[1] == ' ' && p[2] != ' ')
			in = !strncmp(p + 2, sub, wl) && (p[2 + wl] == ' ' || p[2 + wl] == '\n');
		else if (n == 0 || p[0] != ' ')
			in = 0;
		if (in)
			printf("%.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	exit(close_stdout(EXIT_OK));
}

/*
 * --list-options of a subcommand, for completion scripts (scripts/gen-completions):
 * its flags, "--name=" for one that takes a value, one a line; exit 0.
 */
static void sub_list_options(const struct flags *f)
{
	int i;

	for (i = 0; f->names && f->names[i]; i++)
		printf("--%s=\n", f->names[i]);
	for (i = 0; f->bools && f->bools[i]; i++)
		printf("--%s\n", f->bools[i]);
	puts("--help");
	exit(close_stdout(EXIT_OK));
}

/* Parse argv (after the subcommand) into f; an unknown flag fails (exit 2). */
static void parse_flags(struct flags *f, int argc, char **argv)
{
	int i, k;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq;
		size_t len;

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			sub_help(f->sub);
		if (!strcmp(a, "--list-options"))
			sub_list_options(f);

		if (a[0] != '-' || a[1] != '-' || !a[2]) {
			if (f->args_nr >= (int)ARRAY_SIZE(f->args))
				usage_fail("%s: too many arguments", f->sub);
			f->args[f->args_nr++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		if ((k = flag_index(f->names, a, len)) >= 0) {
			if (eq)
				f->values[k] = eq + 1;
			else if (i + 1 < argc)
				f->values[k] = argv[++i];
			else
				usage_fail("%s: option '--%s' needs a value", f->sub, a);
		} else if (!eq && (k = flag_index(f->bools, a, len)) >= 0) {
			f->set[k] = 1;
		} else {
			usage_fail("%s: unknown option '--%.*s'", f->sub, (int)len, a);
		}
	}
}

/*
 * parse_flags() for a subcommand that takes options only: a positional argument
 * is an error, with a hint at the option it may have meant (use, or NULL).
 */
static void parse_options(struct flags *f, int argc, char **argv, const char *use)
{
	parse_flags(f, argc, argv);
	if (f->args_nr && use)
		usage_fail("%s: unexpected argument '%s' (use --%s)", f->sub, f->args[0], use);
	if (f->args_nr)
		usage_fail("%s: unexpected argument '%s'", f->sub, f->args[0]);
}

/* A --limit value: a whole number from 1 to max, or fail. */
static const char *check_limit(const char *sub, const char *s, long max)
{
	char *end;
	long n;

	errno = 0;
	n = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || *end || end == s || n < 1 || n > max)
		usage_fail("%s: --limit must be a whole number from 1 to %ld, not '%s'", sub, max,
		     s ? s : "");
	return s;
}

/* ---- the mapped subcommands ----------------------------------------------------- */

static json_t *records_of(const char *prog, char **argv, int *rc);
static void put_json(json_t *rec);
static int want_json(int json);
static void memory_score(json_t *m, time_t now);
static json_t *memory_new(const char *type, const char *category, const char *text,
			  const char *reason, const char *date);
static int memory_has(json_t *all, const char *id);
static int memory_from_git(void);
static void search_enrich(json_t *recs, const char *query, const char *intent);

/* Write the records (as JSON lines, or for people), release them, exit with rc. */
static int emit_records(json_t *recs, int json, int rc)
{
	json_t *r;
	size_t i;

	if (!json) {
		/* the records' lines, read back by the formatter */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (!mem)
			die_code(EXIT_IO, "out of memory");
		json_array_foreach(recs, i, r) {
			char *s = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
			fprintf(mem, "%s\n", s ? s : "null");
			free(s);
		}
		fclose(mem);
		mem = fmemopen(text, len, "r");
		if (mem) {
			human_format(mem, stdout, human_color());
			fclose(mem);
		}
		free(text);
		json_decref(recs);
		return close_stdout(rc);
	}
	json_array_foreach(recs, i, r)
		put_json(r);
	json_decref(recs);
	return close_stdout(rc);
}

static int cmd_search(int argc, char **argv)
{
	static const char *const names[] = { "query", "intent", "limit", "lang", "framework", "layer", NULL };
	static const char *const bools[] = { "json", "snippets", NULL };
	static const char *const intents[] = { "explore", "edit", "refactor", "migrate" };
	struct flags f = { .sub = "search", .names = names, .bools = bools };
	char *av[12];
	int n = 1, rc;
	size_t i;
	json_t *recs;

	parse_flags(&f, argc, argv);
	if (f.args_nr && f.values[0])
		usage_fail("search: a query and --query: give one");
	if (f.args_nr) {
		/* ci search "where are chunks cut": the words are the query */
		static struct buf q = BUF_INIT;
		for (int k = 0; k < f.args_nr; k++) {
			if (k)
				buf_addch(&q, ' ');
			buf_addstr(&q, f.args[k]);
		}
		f.values[0] = q.buf;
	}
	if (!f.values[0] || !*f.values[0])
		usage_fail("search: a query is required (ci search <query>, or --query <q>)");
	if (f.values[1]) {
		for (i = 0; i < ARRAY_SIZE(intents); i++)
			if (!strcmp(f.values[1], intents[i]))
				break;
		if (i == ARRAY_SIZE(intents))
			usage_fail("search: --intent must be explore, edit, refactor or migrate, not '%s'",
			     f.values[1]);
	}
	if (f.values[4] || f.values[5])
		usage_fail("search: --%s is not supported (ci knows no frameworks or layers)",
		     f.values[4] ? "framework" : "layer");
	if (f.values[2]) {
		av[n++] = "--limit";
		av[n++] = (char *)check_limit("search", f.values[2], 200);
	}
	if (f.values[3]) {
		av[n++] = "--lang";
		av[n++] = (char *)f.values[3];
	}
	if (f.set[1]) {
		av[n++] = "--format";
		av[n++] = "full";
	}
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	recs = records_of("ci-rank", av, &rc);
	if (rc >= 2) {
		json_decref(recs);
		return rc;	/* ci-rank said why on stderr */
	}
	search_enrich(recs, f.values[0], f.values[1] ? f.values[1] : "explore");
	return emit_records(recs, want_json(f.set[0]), rc);
}

static int cmd_status(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "status", .bools = bools };
	char *av[] = { NULL, "status", NULL };

	parse_options(&f, argc, argv, NULL);
	return run("ci-index", av, f.set[0]);
}

static int cmd_reindex(int argc, char **argv)
{
	static const char *const names[] = { "reason", NULL };
	static const char *const bools[] = { "json", "incremental", NULL };
	struct flags f = { .sub = "reindex", .names = names, .bools = bools };
	char *av[] = { NULL, NULL, NULL };
	json_t *recs;
	int rc;

	parse_options(&f, argc, argv, NULL);
	av[1] = f.set[1] ? "update" : "build";
	recs = records_of("ci-index", av, &rc);
	if (rc) {
		json_decref(recs);
		fail("reindex: ci-index %s failed", av[1]);
	}
	json_array_append_new(recs, json_pack("{s:s,s:s,s:i}", "_type", "git_memories", "source",
					      "conventional commits of the last 90 days",
					      "added", memory_from_git()));
	return emit_records(recs, want_json(f.set[0]), 0);
}

/*
 * grep-chunks: ci-grep's exact matches gathered by the indexed chunk that holds
 * them (the smallest one; a line of a file the index has not chunked stands
 * alone), in ci-grep's order: bobbin's grep, found by the regex engine rather
 * than by full-text search.
 */
static json_t *index_status(const char *sub);

static int cmd_grep_chunks(int argc, char **argv)
{
	static const char *const names[] = { "pattern", "type", "limit", NULL };
	static const char *const bools[] = { "json", "ignore-case", "regex", NULL };
	struct flags f = { .sub = "grep-chunks", .names = names, .bools = bools };
	char *av[10];
	int n = 1, rc;
	long limit, max = 0;
	size_t i, j;
	json_t *matches, *m, *out = json_array(), *status;
	struct ci_index *ix = NULL;
	sqlite3_stmt *st = NULL;
	char *path;

	parse_options(&f, argc, argv, "pattern");
	if (!f.values[0] || !*f.values[0])
		usage_fail("grep-chunks: --pattern is required");
	limit = atol(check_limit("grep-chunks", f.values[2] ? f.values[2] : "10", 10000));
	av[n++] = "--json";
	av[n++] = "--hidden";	/* what the index holds: its chunks' files */
	if (f.set[1])
		av[n++] = "-i";
	if (!f.set[2])
		av[n++] = "-F";
	av[n++] = "-e";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	status = index_status("grep-chunks");
	{
		/* the whole repository, its paths root-relative as the index has them */
		const char *root = json_string_value(json_object_get(status, "root"));
		if (root && chdir(root) < 0)
			fail("grep-chunks: cannot enter '%s': %s", root, strerror(errno));
	}
	matches = records_of("ci-grep", av, &rc);
	if (rc > 1) {
		json_decref(matches);
		json_decref(status);
		json_decref(out);
		return rc;	/* ci-grep said why */
	}
	path = index_default_path(json_string_value(json_object_get(status, "root")));
	if (index_open(&ix, path, INDEX_READONLY) ||
	    sqlite3_prepare_v2(index_db(ix), "SELECT c.id, c.start_line, c.end_line, c.kind, c.name, b.lang, "
			       "ci_inflate(c.text) FROM files f JOIN chunks c ON c.blob_id = f.blob_id "
			       "JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?1 AND c.start_line <= ?2 "
			       "AND c.end_line >= ?2 ORDER BY c.end_line - c.start_line, c.start_line LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		fail("grep-chunks: cannot read the index '%s'", path);
	json_array_foreach(matches, i, m) {
		const char *p = json_string_value(json_object_get(m, "path"));
		json_int_t line = json_integer_value(json_object_get(m, "line"));
		json_t *c = NULL, *hit = json_pack("{s:I, s:O}", "line", line, "text", json_object_get(m, "text"));
		json_int_t id = -line;	/* a line the index has no chunk for */
		const char *kind = "lines";

		if (!p || !line) {
			json_decref(hit);
			continue;
		}
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, p, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, line);
		if (sqlite3_step(st) == SQLITE_ROW) {
			id = sqlite3_column_int64(st, 0);
			kind = (const char *)sqlite3_column_text(st, 3);
		}
		if (f.values[1] && strcmp(kind, f.values[1])) {
			json_decref(hit);
			continue;
		}
		/* ci-grep writes a file's matches together: look back over this file's chunks only */
		for (j = json_array_size(out), c = NULL; j > 0; j--) {
			json_t *prev = json_array_get(out, j - 1);
			if (strcmp(json_string_value(json_object_get(prev, "path")), p))
				break;
			if (json_integer_value(json_object_get(prev, "id")) == id) {
				c = prev;
				break;
			}
		}
		if (!c) {
			if ((long)json_array_size(out) >= limit) {
				json_decref(hit);
				continue;
			}
			c = id < 0 ? json_pack("{s:s, s:s, s:I, s:I, s:s, s:n, s:n, s:[], s:O}", "_type", "grep_chunk",
						"path", p, "start_line", line, "end_line", line, "kind", "lines",
						"name", "lang", "matches", "text", json_object_get(m, "text")) :
				json_pack("{s:s, s:s, s:I, s:I, s:s, s:s?, s:s?, s:[], s:s?}", "_type", "grep_chunk",
					  "path", p, "start_line", (json_int_t)sqlite3_column_int64(st, 1),
					  "end_line", (json_int_t)sqlite3_column_int64(st, 2), "kind", kind,
					  "name", (const char *)sqlite3_column_text(st, 4),
					  "lang", (const char *)sqlite3_column_text(st, 5), "matches",
					  "text", (const char *)sqlite3_column_text(st, 6));
			json_object_set_new(c, "id", json_integer(id));
			json_array_append_new(out, c);
		}
		json_array_append_new(json_object_get(c, "matches"), hit);
		if ((long)json_array_size(json_object_get(c, "matches")) > max)
			max = (long)json_array_size(json_object_get(c, "matches"));
	}
	sqlite3_finalize(st);
	index_close(ix);
	free(path);
	json_decref(matches);
	json_decref(status);
	/* score: matching lines, relative to the chunk with most; the id was for grouping */
	json_array_foreach(out, i, m) {
		json_object_del(m, "id");
		json_object_set_new(m, "score", json_real((double)json_array_size(json_object_get(m, "matches")) /
						       (double)(max ? max : 1)));
	}
	rc = json_array_size(out) ? 0 : 1;
	if (rc)
		fprintf(stderr, "%s: grep-chunks: no match for '%s'\n", progname, f.values[0]);
	return emit_records(out, want_json(f.set[0]), rc);
}

static int cmd_refs(int argc, char **argv)
{
	static const char *const names[] = { "symbol", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "refs", .names = names, .bools = bools };
	char *av[8];
	int n = 1;

	parse_options(&f, argc, argv, "symbol");
	if (!f.values[0] || !*f.values[0])
		usage_fail("refs: --symbol is required");
	if (f.values[1]) {
		av[n++] = "--limit";
		av[n++] = (char *)check_limit("refs", f.values[1], 10000);
	}
	av[n++] = "refs";
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	return run("ci-refs", av, f.set[0]);
}

static int cmd_cycles(int argc, char **argv)
{
	static const char *const names[] = { "scope", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "cycles", .names = names, .bools = bools };
	char *av[6];
	int n = 1;

	parse_options(&f, argc, argv, "scope");
	if (f.values[0]) {
		av[n++] = "--scope";
		av[n++] = (char *)f.values[0];
	}
	av[n++] = "cycles";
	av[n] = NULL;
	return run("ci-refs", av, f.set[0]);
}

/* ---- memory ----------------------------------------------------------------------- */

static const char *const memory_types[] = { "convention", "decision", "gotcha", "failure", NULL };

/* The memories of .codebase-context/memory.json (an empty array when there is none). */
static json_t *memory_load(void)
{
	json_error_t err;
	json_t *all;

	if (access(MEMORY_FILE, F_OK) && errno == ENOENT)
		return json_array();
	all = json_load_file(MEMORY_FILE, 0, &err);
	if (!all)
		fail("memory: %s:%d: %s", MEMORY_FILE, err.line, err.text);
	if (!json_is_array(all)) {
		json_decref(all);
		fail("memory: %s: expected a JSON array", MEMORY_FILE);
	}
	return all;
}

/* Write the memories back (through a temporary file and a rename); steals all. */
static void memory_save(json_t *all)
{
	const char *tmp = MEMORY_FILE ".tmp";

	if (mkdir(".codebase-context", 0777) && errno != EEXIST) {
		json_decref(all);
		fail("memory: cannot create '.codebase-context': %s", strerror(errno));
	}
	if (json_dump_file(all, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	    rename(tmp, MEMORY_FILE)) {
		json_decref(all);
		unlink(tmp);
		fail("memory: cannot write '%s'", MEMORY_FILE);
	}
	json_decref(all);
}

/* A case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return !n;
}

static const char *str_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int memory_list(struct flags *f)
{
	json_t *all = memory_load(), *m, *out = json_array();
	size_t i;

	time_t now = time(NULL);

	json_array_foreach(all, i, m) {
		memory_score(m, now);
		if (f->values[0] && strcmp(str_field(m, "category"), f->values[0]))
			continue;
		if (f->values[1] && strcmp(str_field(m, "type"), f->values[1]))
			continue;
		if (f->values[2] && !contains_ci(str_field(m, "memory"), f->values[2]) &&
		    !contains_ci(str_field(m, "reason"), f->values[2]))
			continue;
		json_array_append(out, m);
	}
	json_array_foreach(out, i, m) {
		if (f->set[0]) {
			char *s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);

			puts(s ? s : "");
			free(s);
		} else {
			printf("%s  [%s] %s: %s  (confidence %.2f%s)\n", str_field(m, "id"),
			       str_field(m, "type"), str_field(m, "category"), str_field(m, "memory"),
			       json_real_value(json_object_get(m, "confidence")),
			       json_is_true(json_object_get(m, "stale")) ? ", stale" : "");
		}
	}
	if (!f->set[0] && !json_array_size(out))
		puts("no memories");
	json_decref(out);
	json_decref(all);
	return close_stdout(0);
}

static int memory_add(struct flags *f)
{
	const char *type = f->values[1], *category = f->values[0], *text = f->values[3];
	const char *reason = f->values[4] ? f->values[4] : "";
	json_t *all, *m;
	char date[32];
	time_t now = time(NULL);
	struct tm tm;
	int i;

	if (!type || !category || !text || !*text)
		usage_fail("memory add: --type, --category and --memory are required");
	for (i = 0; memory_types[i]; i++)
		if (!strcmp(type, memory_types[i]))
			break;
	if (!memory_types[i])
		usage_fail("memory add: --type must be convention, decision, gotcha or failure, not '%s'",
		     type);
	if (!*category)
		usage_fail("memory add: --category must not be empty");
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* the id: FNV-1a of what the memory says, so that the same memory is the same id */
	m = memory_new(type, category, text, reason, date);
	all = memory_load();
	if (memory_has(all, str_field(m, "id"))) {
		char id[64];

		snprintf(id, sizeof(id), "%s", str_field(m, "id"));
		json_decref(all);
		json_decref(m);
		fail("memory add: the same memory is there already (%s)", id);
	}
	json_array_append(all, m);
	memory_save(all);
	if (f->set[0]) {
		char *s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);

		puts(s ? s : "");
		free(s);
	} else {
		printf("remembered %s\n", str_field(m, "id"));
	}
	json_decref(m);
	return close_stdout(0);
}

static int memory_remove(struct flags *f)
{
	json_t *all, *m;
	size_t i;

	if (f->args_nr != 2)
		usage_fail("memory remove: give one <id>");
	all = memory_load();
	json_array_foreach(all, i, m)
		if (!strcmp(str_field(m, "id"), f->args[1]))
			break;
	if (i == json_array_size(all)) {
		json_decref(all);
		fail("memory remove: no memory '%s'", f->args[1]);
	}
	json_array_remove(all, i);
	memory_save(all);
	if (f->set[0]) {
		json_t *r = json_pack("{s:s}", "removed", f->args[1]);
		char *s = json_dumps(r, JSON_COMPACT);

		puts(s ? s : "");
		free(s);
		json_decref(r);
	} else
		printf("removed %s\n", f->args[1]);
	return close_stdout(0);
}

static int cmd_memory(int argc, char **argv)
{
	static const char *const names[] = { "category", "type", "query", "memory", "reason", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "memory", .names = names, .bools = bools };
	const char *verb;

	parse_flags(&f, argc, argv);
	verb = f.args_nr ? f.args[0] : "";
	if (!strcmp(verb, "list")) {
		if (f.args_nr != 1 || f.values[3] || f.values[4])
			usage_fail("memory list: takes --category, --type, --query and --json only");
		if (f.values[1] && flag_index(memory_types, f.values[1], strlen(f.values[1])) < 0)
			usage_fail("memory list: --type must be convention, decision, gotcha or failure, not '%s'",
			     f.values[1]);
		return memory_list(&f);
	}
	if (!strcmp(verb, "add")) {
		if (f.args_nr != 1 || f.values[2])
			usage_fail("memory add: takes --type, --category, --memory, --reason and --json only");
		return memory_add(&f);
	}
	if (!strcmp(verb, "remove"))
		return memory_remove(&f);
	usage_fail("memory: expected list, add or remove%s%s", *verb ? ", not " : "", verb);
}

/* ---- metadata ----------------------------------------------------------------------- */

/*
 * Run <prog> with argv and read all it writes on stdout into out (a buf the caller
 * releases).  Returns its exit status.
 */
static int capture(struct buf *out, const char *prog, char **argv)
{
	int rfd, status;
	pid_t pid;
	char chunk[8192];
	ssize_t n;

	pid = spawn_reading(prog, argv, &rfd);
	while ((n = read(rfd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_code(EXIT_IO, "cannot read from %s: %s", prog, strerror(errno));
		buf_add(out, chunk, (size_t)n);
	}
	close(rfd);
	if (waitpid(pid, &status, 0) < 0)
		die_code(EXIT_IO, "cannot wait for %s: %s", prog, strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Append {manifest, name, version} to deps; a blank name is skipped. */
static void add_dep(json_t *deps, const char *manifest, const char *name, size_t name_len,
		    const char *version)
{
	char *n, *v;
	size_t v_len;

	while (name_len && (name[name_len - 1] == ' ' || name[name_len - 1] == '\t'))
		name_len--;
	if (!name_len)
		return;
	if (!version)
		version = "";
	version += strspn(version, " \t");
	v_len = strcspn(version, "\"'");	/* a quoted requirement ends at its quote */
	while (v_len && (version[v_len - 1] == ' ' || version[v_len - 1] == '\t'))
		v_len--;
	n = xstrndup(name, name_len);
	v = xstrndup(version, v_len);
	json_array_append_new(deps, json_pack("{s:s,s:s,s:s}", "manifest", manifest, "name", n,
					      "version", v));
	free(n);
	free(v);
}

/* package.json: the keys of dependencies and devDependencies. */
static void deps_package_json(json_t *deps)
{
	static const char *const sections[] = { "dependencies", "devDependencies" };
	json_t *pkg = json_load_file("package.json", 0, NULL), *v;
	const char *key;
	size_t i;

	if (!pkg)
		return;
	for (i = 0; i < ARRAY_SIZE(sections); i++)
		json_object_foreach(json_object_get(pkg, sections[i]), key, v)
			add_dep(deps, "package.json", key, strlen(key), json_string_value(v));
	json_decref(pkg);
}

/* The end of a requirement's name: "requests>=2 ; python_version..." */
static size_t req_name_len(const char *s)
{
	return strcspn(s, "=<>!~[; \t\"'@,");
}

/* The line manifests: requirements.txt lines, go.mod require lines. */
static void deps_text(json_t *deps, const char *manifest)
{
	FILE *fp = fopen(manifest, "r");
	char *line = NULL;
	size_t cap = 0;
	int in_require = 0;

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *e;

		s[strcspn(s, "\r\n")] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (!strcmp(manifest, "requirements.txt")) {
			s[strcspn(s, ";#")] = '\0';	/* no environment markers, no comment */
			if (*s != '-')
				add_dep(deps, manifest, s, req_name_len(s), s + req_name_len(s));
		} else if (in_require && *s == ')') {
			in_require = 0;
		} else if (!strncmp(s, "require (", 9) || !strcmp(s, "require(")) {
			in_require = 1;
		} else if (in_require || !strncmp(s, "require ", 8)) {
			if (!in_require)
				s += 8;
			e = s + strcspn(s, " \t");
			e += strspn(e, " \t");
			e[strcspn(e, " \t")] = '\0';	/* no "// indirect" */
			add_dep(deps, manifest, s, strcspn(s, " \t"), e);
		}
	}
	free(line);
	fclose(fp);
}

/* A requirement string "name>=1.2 ; marker" as a dependency. */
static void add_req(json_t *deps, const char *manifest, const char *req)
{
	size_t n = req_name_len(req);

	add_dep(deps, manifest, req, n, req + n);
}

/* name = "1" or name = { version = "1", ... } entries of a TOML table. */
static void add_table_deps(json_t *deps, const char *manifest, json_t *t)
{
	const char *name;
	json_t *v;

	json_object_foreach(t, name, v) {
		const char *ver = json_string_value(json_is_object(v) ? json_object_get(v, "version") : v);
		if (!strcmp(manifest, "pyproject.toml") && !strcmp(name, "python"))
			continue;	/* poetry's interpreter, not a package */
		add_dep(deps, manifest, name, strlen(name), ver ? ver : "");
	}
}

/* Requirement strings of an array (PEP 621, PEP 735). */
static void add_array_reqs(json_t *deps, const char *manifest, json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (json_is_string(v))
			add_req(deps, manifest, json_string_value(v));
}

/*
 * pyproject.toml and Cargo.toml, parsed with toml++ (toml_file_json): PEP 621's
 * [project] dependencies and optional-dependencies, PEP 735's dependency-groups,
 * Poetry's [tool.poetry.*dependencies] and groups; Cargo's dependencies,
 * dev-dependencies and build-dependencies, also under [target.*].  A file that
 * does not parse is a warning and gives nothing.
 */
static void deps_toml(json_t *deps, const char *manifest)
{
	static const char *const cargo_kinds[] = { "dependencies", "dev-dependencies",
						   "build-dependencies" };
	char *err = NULL, *text;
	json_t *root, *t, *v;
	const char *key;
	size_t i;

	if (access(manifest, F_OK) < 0)
		return;
	text = toml_file_json(manifest, &err);
	root = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (!root) {
		warning("metadata: %s: %s", manifest, err ? err : "not TOML");
		free(err);
		return;
	}
	if (!strcmp(manifest, "pyproject.toml")) {
		json_t *project = json_object_get(root, "project");
		json_t *poetry = json_object_get(json_object_get(root, "tool"), "poetry");

		add_array_reqs(deps, manifest, json_object_get(project, "dependencies"));
		json_object_foreach(json_object_get(project, "optional-dependencies"), key, v)
			add_array_reqs(deps, manifest, v);
		json_object_foreach(json_object_get(root, "dependency-groups"), key, v)
			add_array_reqs(deps, manifest, v);
		add_table_deps(deps, manifest, json_object_get(poetry, "dependencies"));
		add_table_deps(deps, manifest, json_object_get(poetry, "dev-dependencies"));
		json_object_foreach(json_object_get(poetry, "group"), key, v)
			add_table_deps(deps, manifest, json_object_get(v, "dependencies"));
	} else {
		for (i = 0; i < ARRAY_SIZE(cargo_kinds); i++)
			add_table_deps(deps, manifest, json_object_get(root, cargo_kinds[i]));
		json_object_foreach(json_object_get(root, "target"), key, t)
			for (i = 0; i < ARRAY_SIZE(cargo_kinds); i++)
				add_table_deps(deps, manifest, json_object_get(t, cargo_kinds[i]));
	}
	json_decref(root);
}

static int cmd_metadata(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	static const char *const manifests[] = { "requirements.txt", "pyproject.toml", "go.mod",
						 "Cargo.toml" };
	struct flags f = { .sub = "metadata", .bools = bools };
	char *av[] = { NULL, "status", NULL };
	struct buf out = BUF_INIT;
	json_t *status, *meta, *deps, *v;
	const char *key;
	size_t i;
	int rc;

	parse_options(&f, argc, argv, NULL);
	rc = capture(&out, "ci-index", av);
	status = rc ? NULL : json_loadb(out.buf, out.len, JSON_DISABLE_EOF_CHECK, NULL);
	buf_release(&out);
	if (!json_is_object(status)) {
		json_decref(status);
		fail("metadata: no index status (run 'ci reindex' first)");
	}
	deps = json_array();
	deps_package_json(deps);
	for (i = 0; i < ARRAY_SIZE(manifests); i++) {
		if (strstr(manifests[i], ".toml"))
			deps_toml(deps, manifests[i]);
		else
			deps_text(deps, manifests[i]);
	}
	meta = json_pack("{s:s,s:O,s:O,s:O,s:O,s:O,s:o}", "_type", "metadata",
			 "root", json_object_get(status, "root"),
			 "files", json_object_get(status, "files"),
			 "chunks", json_object_get(status, "chunks"),
			 "languages", json_object_get(status, "languages"),
			 "commit", json_object_get(status, "commit"),
			 "dependencies", deps);
	json_decref(status);
	if (!meta)
		fail("metadata: the index status lacks a field");
	if (f.set[0] || !isatty(STDOUT_FILENO)) {
		char *s = json_dumps(meta, JSON_COMPACT | JSON_PRESERVE_ORDER);

		puts(s ? s : "");
		free(s);
	} else {
		printf("root: %s\nfiles: %lld\n", json_string_value(json_object_get(meta, "root")),
		       (long long)json_integer_value(json_object_get(meta, "files")));
		json_object_foreach(json_object_get(meta, "languages"), key, v)
			printf("language: %s (%lld files)\n", key, (long long)json_integer_value(v));
		json_array_foreach(json_object_get(meta, "dependencies"), i, v)
			printf("dependency: %s %s (%s)\n", str_field(v, "name"), str_field(v, "version"),
			       str_field(v, "manifest"));
	}
	json_decref(meta);
	return close_stdout(0);
}

/* ---- records of a command ---------------------------------------------------------- */

/*
 * Run <prog> with argv and parse its NDJSON output: an array of the records (lines
 * that are not JSON are left out), the exit status in *rc.  Cannot fail.
 */
static json_t *records_of(const char *prog, char **argv, int *rc)
{
	struct buf out = BUF_INIT;
	json_t *recs = json_array();
	const char *s, *e;

	*rc = capture(&out, prog, argv);
	for (s = out.buf; s < out.buf + out.len; s = e + 1) {
		json_t *r;

		e = memchr(s, '\n', (size_t)(out.buf + out.len - s));
		if (!e)
			e = out.buf + out.len;
		r = json_loadb(s, (size_t)(e - s), 0, NULL);
		if (r)
			json_array_append_new(recs, r);
	}
	buf_release(&out);
	return recs;
}

/* Write one record as a line of compact JSON. */
static void put_json(json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));

	puts(s ? s : "");
	free(s);
}

/* Whether output is for machines: --json, or not a terminal. */
static int want_json(int json)
{
	return json || !isatty(STDOUT_FILENO);
}

/* ---- git history: commits of ci-couple ------------------------------------------------ */

/*
 * The commit records of the repository's history (ci-couple history, read from
 * git), newest first: the newest 2000 at most; since is a ci-couple --since
 * value or NULL.  An empty array outside a git repository or without commits.
 *
 * NEEDSWORK: each search and patterns call reads the history again; on a big
 * repository the index's stored history (ci-couple history | ci-index load)
 * would be cheaper, once something keeps it up to date.
 */
static json_t *git_commits(const char *since)
{
	char *av[] = { NULL, "--no-index", "--max-commits", "2000", "history", "--since", (char *)since, NULL };
	json_t *recs, *out = json_array(), *r;
	size_t i;
	int rc;

	if (!since)
		av[5] = NULL;
	recs = records_of("ci-couple", av, &rc);
	json_array_foreach(recs, i, r)
		if (!strcmp(str_field(r, "_type"), "commit"))
			json_array_append(out, r);
	json_decref(recs);
	return out;
}

/* ---- patterns ------------------------------------------------------------------------- */

static const char *const pattern_categories[] = { "all", "di", "state", "testing", "libraries", NULL };

/* Packages that say a category: testing frameworks, state stores, DI containers. */
static const struct {
	const char *category;	/* di, state or testing */
	const char *name;	/* the package (a trailing '/' matches a scope) */
} known_packages[] = {
	{ "testing", "pytest" }, { "testing", "unittest" }, { "testing", "nose" },
	{ "testing", "hypothesis" }, { "testing", "jest" }, { "testing", "vitest" },
	{ "testing", "mocha" }, { "testing", "chai" }, { "testing", "jasmine" },
	{ "testing", "sinon" }, { "testing", "@testing-library/" }, { "testing", "cypress" },
	{ "testing", "@playwright/test" }, { "testing", "supertest" }, { "testing", "testing" },
	{ "testing", "github.com/stretchr/testify" }, { "testing", "org.junit" },
	{ "testing", "org.mockito" }, { "testing", "check.h" }, { "testing", "cmocka.h" },
	{ "state", "redux" }, { "state", "@reduxjs/toolkit" }, { "state", "react-redux" },
	{ "state", "zustand" }, { "state", "mobx" }, { "state", "vuex" }, { "state", "pinia" },
	{ "state", "@ngrx/" }, { "state", "recoil" }, { "state", "jotai" }, { "state", "xstate" },
	{ "di", "inversify" }, { "di", "tsyringe" }, { "di", "typedi" }, { "di", "injector" },
	{ "di", "dependency_injector" }, { "di", "@nestjs/common" }, { "di", "@angular/core" },
	{ "di", "github.com/google/wire" }, { "di", "go.uber.org/fx" }, { "di", "go.uber.org/dig" },
	{ "di", "com.google.inject" }, { "di", "dagger" },
};

/*
 * The package an import names: "@scope/pkg" for a scoped npm name, the module
 * path up to a known package for Go and Java, else the first segment ("os.path"
 * is "os", "lodash/fp" is "lodash").  NULL for a relative import.  Malloc'd.
 */
static char *import_package(const char *target)
{
	size_t n;

	if (!*target || *target == '.' || *target == '/')
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(known_packages); i++) {
		const char *k = known_packages[i].name;
		size_t l = strlen(k);

		if (k[l - 1] == '/' ? !strncmp(target, k, l) :
		    !strncmp(target, k, l) && strchr("/.:", target[l] ? target[l] : '/'))
			return k[l - 1] == '/' ? xstrndup(target, l + strcspn(target + l, "/")) :
						 xstrdup(k);
	}
	if (*target == '@') {
		n = strcspn(target, "/");
		if (target[n])
			n += 1 + strcspn(target + n + 1, "/");
		return xstrndup(target, n);
	}
	if (strchr(target, '/') && strchr(target, '.') && strchr(target, '.') < strchr(target, '/'))
		return xstrdup(target);	/* a Go module path: github.com/x/y */
	n = strcspn(target, "/.:");
	return n ? xstrndup(target, n) : NULL;
}

static const char *package_category(const char *pkg)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_packages); i++) {
		const char *k = known_packages[i].name;
		size_t l = strlen(k);

		if (k[l - 1] == '/' ? !strncmp(pkg, k, l) : !strcmp(pkg, k))
			return known_packages[i].category;
	}
	return "libraries";
}

/* The repository root and index path, from ci-index status; fails without an index. */
static json_t *index_status(const char *sub)
{
	char *av[] = { NULL, "status", NULL };
	struct buf out = BUF_INIT;
	json_t *status;
	int rc = capture(&out, "ci-index", av);

	status = rc ? NULL : json_loadb(out.buf, out.len, JSON_DISABLE_EOF_CHECK, NULL);
	buf_release(&out);
	if (!json_is_object(status) || !json_is_string(json_object_get(status, "root"))) {
		json_decref(status);
		fail("%s: no index (run 'ci reindex' first)", sub);
	}
	return status;
}

/*
 * The imports of the index as {file: [package, ...]} (external imports only:
 * those that resolve to no file of the repository), files and packages sorted.
 */
static json_t *index_imports(const char *sub)
{
	json_t *status = index_status(sub), *by_file = json_object();
	char *path = index_default_path(json_string_value(json_object_get(status, "root")));
	struct ci_index *ix = NULL;
	sqlite3_stmt *st = NULL;
	int rc;

	if (index_open(&ix, path, INDEX_READONLY))
		fail("%s: cannot open the index '%s'", sub, path);
	if (sqlite3_prepare_v2(index_db(ix), "SELECT DISTINCT path, target FROM imports "
			       "WHERE resolved IS NULL ORDER BY path, target", -1, &st, NULL) != SQLITE_OK)
		fail("%s: %s", sub, sqlite3_errmsg(index_db(ix)));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *file = (const char *)sqlite3_column_text(st, 0);
		char *pkg = import_package((const char *)sqlite3_column_text(st, 1));
		json_t *list, *v;
		size_t i;

		if (!pkg)
			continue;
		list = json_object_get(by_file, file);
		if (!list)
			json_object_set_new(by_file, file, list = json_array());
		json_array_foreach(list, i, v)
			if (!strcmp(json_string_value(v), pkg))
				break;
		if (i == json_array_size(list))
			json_array_append_new(list, json_string(pkg));
		free(pkg);
	}
	if (rc != SQLITE_DONE)
		fail("%s: %s", sub, sqlite3_errmsg(index_db(ix)));
	sqlite3_finalize(st);
	index_close(ix);
	free(path);
	json_decref(status);
	return by_file;
}

#define DAY 86400
#define RISING_DAYS 90		/* first used this recently before the newest commit */
#define DECLINING_DAYS 180	/* not touched for this long before it */

/* A date (UTC) of seconds since the epoch, as YYYY-MM-DD into out[11]. */
static void ymd(char *out, json_int_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 11, "%Y-%m-%d", &tm);
}

static int cmp_pattern(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(str_field(x, "category"), str_field(y, "category"));
	json_int_t nx = json_integer_value(json_object_get(x, "count"));
	json_int_t ny = json_integer_value(json_object_get(y, "count"));

	if (c)
		return c;
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return strcmp(str_field(x, "name"), str_field(y, "name"));
}

/*
 * The team's patterns: for each package the files import, in its category (di,
 * state, testing, libraries), how many files use it, its adoption in the
 * category (of the files using any of the category's packages), and its trend
 * from git history: Rising when its files were first committed within 90 days
 * of the newest commit, Declining when none was touched in the 180 days before
 * it, else Stable.  Then golden files (those using the most di/state/testing
 * patterns) and conflicts (two patterns of a category both above 20%).  Returns
 * {patterns: [...], goldenFiles: [...], conflicts: [...]} of category (or "all").
 */
static json_t *patterns_compute(const char *sub, const char *category)
{
	json_t *by_file = index_imports(sub), *commits = git_commits(NULL);
	json_t *pats = json_object(), *cat_files = json_object(), *first = json_object(), *last = json_object();
	json_t *list, *v, *c, *f, *out, *arr, *golden, *conflicts;
	json_int_t newest = 0;
	const char *file, *key;
	size_t i, j, n;
	json_t **sorted;

	/* when each file was first and last committed */
	json_array_foreach(commits, i, c) {
		json_int_t t = json_integer_value(json_object_get(c, "time"));

		if (t > newest)
			newest = t;
		json_array_foreach(json_object_get(c, "files"), j, f) {
			const char *p = str_field(f, "path");
			json_t *a = json_object_get(first, p), *b = json_object_get(last, p);

			if (!a || json_integer_value(a) > t)
				json_object_set_new(first, p, json_integer(t));
			if (!b || json_integer_value(b) < t)
				json_object_set_new(last, p, json_integer(t));
		}
	}
	json_object_foreach(by_file, file, list) {
		json_array_foreach(list, i, v) {
			const char *pkg = json_string_value(v), *cat = package_category(pkg);
			json_t *p = json_object_get(pats, pkg), *cf = json_object_get(cat_files, cat);
			json_t *a = json_object_get(first, file), *b = json_object_get(last, file);

			if (!p) {
				p = json_pack("{s:s,s:s,s:i,s:[],s:i,s:i}", "category", cat, "name", pkg,
					      "count", 0, "files", "first", 0, "last", 0);
				json_object_set_new(pats, pkg, p);
			}
			json_object_set_new(p, "count", json_integer(json_integer_value(json_object_get(p, "count")) + 1));
			json_array_append_new(json_object_get(p, "files"), json_string(file));
			if (a && (!json_integer_value(json_object_get(p, "first")) ||
				  json_integer_value(a) < json_integer_value(json_object_get(p, "first"))))
				json_object_set(p, "first", a);
			if (b && json_integer_value(b) > json_integer_value(json_object_get(p, "last")))
				json_object_set(p, "last", b);
			if (!cf)
				json_object_set_new(cat_files, cat, cf = json_object());
			json_object_set_new(cf, file, json_true());
		}
	}
	n = json_object_size(pats);
	sorted = xcalloc(n + 1, sizeof(*sorted));
	i = 0;
	json_object_foreach(pats, key, v)
		sorted[i++] = v;
	qsort(sorted, n, sizeof(*sorted), cmp_pattern);
	arr = json_array();
	for (i = 0; i < n; i++) {
		json_t *p = sorted[i], *r;
		const char *cat = str_field(p, "category");
		json_int_t cnt = json_integer_value(json_object_get(p, "count"));
		json_int_t total = (json_int_t)json_object_size(json_object_get(cat_files, cat));
		json_int_t a = json_integer_value(json_object_get(p, "first"));
		json_int_t b = json_integer_value(json_object_get(p, "last"));
		int pct = total ? (int)((cnt * 100 + total / 2) / total) : 0;
		const char *trend = "Stable";
		char pcts[16], d[11] = "";
		json_t *files;

		if (strcmp(category, "all") && strcmp(category, cat))
			continue;
		files = json_array();
		if (b && newest - b > (json_int_t)DECLINING_DAYS * DAY)
			trend = "Declining";
		else if (a && newest - a <= (json_int_t)RISING_DAYS * DAY && newest - a >= 0 &&
			 json_array_size(commits) > 1 && a > json_integer_value(json_object_get(
				 json_array_get(commits, json_array_size(commits) - 1), "time")))
			trend = "Rising";	/* newer than the first commit: adopted later */
		if (b)
			ymd(d, b);
		snprintf(pcts, sizeof(pcts), "%d%%", pct);
		json_array_foreach(json_object_get(p, "files"), j, f)
			if (j < 3)
				json_array_append(files, f);
		r = json_pack("{s:s,s:s,s:s,s:I,s:s,s:i,s:s,s:s,s:o}", "_type", "pattern", "category", cat,
			      "name", str_field(p, "name"), "count", cnt, "frequency", pcts, "adoption", pct,
			      "trend", trend, "lastUsed", d, "files", files);
		json_array_append_new(arr, r);
	}
	/* golden files: the files using the most di/state/testing patterns (else any) */
	golden = json_array();
	for (int pass = 0; pass < 2 && !json_array_size(golden); pass++) {
		json_t *scores = json_array();
		int most = 0;

		json_object_foreach(by_file, file, list) {
			int k = 0;

			json_array_foreach(list, i, v)
				if (pass || strcmp(package_category(json_string_value(v)), "libraries"))
					k++;
			if (k)
				json_array_append_new(scores, json_pack("{s:s,s:s,s:i}", "_type", "golden_file",
									"file", file, "patterns", k));
			if (k > most)
				most = k;
		}
		/* the most patterns first, then by path (by_file was filled in path order) */
		for (int best = most; best > 0 && json_array_size(golden) < 3; best--)
			json_array_foreach(scores, i, v)
				if (json_integer_value(json_object_get(v, "patterns")) == best &&
				    json_array_size(golden) < 3)
					json_array_append(golden, v);
		json_decref(scores);
	}
	conflicts = json_array();
	for (i = 0; i < json_array_size(arr); i++)
		for (j = i + 1; j < json_array_size(arr); j++) {
			json_t *x = json_array_get(arr, i), *y = json_array_get(arr, j);

			if (strcmp(str_field(x, "category"), str_field(y, "category")) ||
			    !strcmp(str_field(x, "category"), "libraries") ||
			    json_integer_value(json_object_get(x, "adoption")) <= 20 ||
			    json_integer_value(json_object_get(y, "adoption")) <= 20)
				continue;
			json_array_append_new(conflicts, json_pack("{s:s,s:s,s:[s,s]}", "_type", "conflict",
				"category", str_field(x, "category"), "patterns", str_field(x, "name"),
				str_field(y, "name")));
		}
	out = json_pack("{s:o,s:o,s:o}", "patterns", arr, "goldenFiles", golden, "conflicts", conflicts);
	free(sorted);
	json_decref(pats);
	json_decref(cat_files);
	json_decref(first);
	json_decref(last);
	json_decref(commits);
	json_decref(by_file);
	return out;
}

/*
 * The memories that go with the patterns of a category, as "memory" records
 * with their confidence: all of them for all, testing's for testing,
 * dependencies' for libraries, architecture's for di and state.
 */
static json_t *patterns_memories(const char *cat)
{
	const char *want = !strcmp(cat, "testing") ? "testing" : !strcmp(cat, "libraries") ? "dependencies" :
			   !strcmp(cat, "all") ? NULL : "architecture";
	json_t *all = memory_load(), *out = json_array(), *m;
	time_t now = time(NULL);
	size_t i;

	json_array_foreach(all, i, m) {
		json_t *r;

		if (want && strcmp(str_field(m, "category"), want))
			continue;
		r = json_pack("{s:s}", "_type", "memory");
		memory_score(m, now);
		json_object_update(r, m);
		json_array_append_new(out, r);
	}
	json_decref(all);
	return out;
}

static int cmd_patterns(int argc, char **argv)
{
	static const char *const names[] = { "category", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "patterns", .names = names, .bools = bools };
	const char *cat;
	json_t *all, *mems, *v;
	size_t i;

	parse_options(&f, argc, argv, "category");
	cat = f.values[0] ? f.values[0] : "all";
	if (flag_index(pattern_categories, cat, strlen(cat)) < 0)
		usage_fail("patterns: --category must be all, di, state, testing or libraries, not '%s'", cat);
	all = patterns_compute("patterns", cat);
	mems = patterns_memories(cat);
	if (want_json(f.set[0])) {
		json_array_foreach(json_object_get(all, "patterns"), i, v)
			put_json(v);
		json_array_foreach(json_object_get(all, "goldenFiles"), i, v)
			put_json(v);
		json_array_foreach(json_object_get(all, "conflicts"), i, v)
			put_json(v);
		json_array_foreach(mems, i, v)
			put_json(v);
	} else {
		if (!json_array_size(json_object_get(all, "patterns")))
			printf("no %s patterns in the index's imports\n", cat);
		json_array_foreach(json_object_get(all, "patterns"), i, v)
			printf("%-9s %-24s %4s of files (%lld)  %s\n", str_field(v, "category"),
			       str_field(v, "name"), str_field(v, "frequency"),
			       (long long)json_integer_value(json_object_get(v, "count")), str_field(v, "trend"));
		json_array_foreach(json_object_get(all, "goldenFiles"), i, v)
			printf("golden file: %s (%lld patterns)\n", str_field(v, "file"),
			       (long long)json_integer_value(json_object_get(v, "patterns")));
		json_array_foreach(json_object_get(all, "conflicts"), i, v)
			printf("conflict in %s: %s and %s both above 20%%\n", str_field(v, "category"),
			       json_string_value(json_array_get(json_object_get(v, "patterns"), 0)),
			       json_string_value(json_array_get(json_object_get(v, "patterns"), 1)));
		json_array_foreach(mems, i, v)
			printf("memory: [%s] %s: %s (confidence %.2f%s)\n", str_field(v, "type"),
			       str_field(v, "category"), str_field(v, "memory"),
			       json_real_value(json_object_get(v, "confidence")),
			       json_is_true(json_object_get(v, "stale")) ? ", stale" : "");
	}
	json_decref(mems);
	json_decref(all);
	return close_stdout(0);
}

/* ---- memory: ids, confidence decay, git extraction ------------------------------------------ */

#define STALE_BELOW 0.3		/* memories below this confidence are flagged stale */

/* The half-life in days of a memory's confidence; 0: it never decays. */
static double memory_half_life(const char *type)
{
	if (!strcmp(type, "decision"))
		return 180;
	if (!strcmp(type, "gotcha") || !strcmp(type, "failure"))
		return 90;
	return 0;	/* conventions */
}

/*
 * Add to m its "confidence" now (1 halved every half-life of its type since its
 * date; conventions keep 1) and "stale" (below 0.3).  A date that does not parse
 * counts as today.
 */
static void memory_score(json_t *m, time_t now)
{
	struct tm tm;
	double hl = memory_half_life(str_field(m, "type")), conf = 1, age;
	const char *d = str_field(m, "date");
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(d, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		end = strptime(d, "%Y-%m-%d", &tm);
	if (end && hl > 0) {
		age = difftime(now, timegm(&tm)) / DAY;
		if (age > 0)
			conf = pow(0.5, age / hl);
	}
	json_object_set_new(m, "confidence", json_real(round(conf * 1000) / 1000));
	json_object_set_new(m, "stale", json_boolean(conf < STALE_BELOW));
}

/* A new memory record; its id is FNV-1a of type, category and text. */
static json_t *memory_new(const char *type, const char *category, const char *text,
			  const char *reason, const char *date)
{
	/* not FNV1A_BASIS (a digit short of it), but stored ids depend on it */
	uint64_t h = 1469598103934665603ULL;
	const char *parts[] = { type, category, text };
	char id[17];

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		h = fnv1a(h, parts[i], strlen(parts[i]));
	snprintf(id, sizeof(id), "%016llx", (unsigned long long)h);
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "type", type, "category", category,
			 "memory", text, "reason", reason, "date", date);
}

static int memory_has(json_t *all, const char *id)
{
	size_t k;
	json_t *old;

	json_array_foreach(all, k, old)
		if (!strcmp(str_field(old, "id"), id))
			return 1;
	return 0;
}

/*
 * Memories from conventional commits of the last 90 days (before the newest
 * commit): "type(scope)!: subject".  feat, perf and refactor are decisions, fix
 * a gotcha, revert a failure, docs, style, test, build, ci and chore conventions;
 * the category is testing for test, tooling for build, ci and chore, conventions
 * for docs and style, architecture for the rest; a scope prefixes the text.  Adds those
 * not there already to memory.json; returns how many.
 */
static int memory_from_git(void)
{
	static const struct { const char *prefix, *type, *category; } kinds[] = {
		{ "feat", "decision", "architecture" }, { "perf", "decision", "architecture" },
		{ "refactor", "decision", "architecture" }, { "fix", "gotcha", "architecture" },
		{ "revert", "failure", "architecture" }, { "docs", "convention", "conventions" },
		{ "style", "convention", "conventions" }, { "test", "convention", "testing" },
		{ "build", "convention", "tooling" }, { "ci", "convention", "tooling" },
		{ "chore", "convention", "tooling" },
	};
	json_t *commits = git_commits("90 days ago"), *all = memory_load(), *c;
	size_t i, k;
	int added = 0;

	json_array_foreach(commits, i, c) {
		const char *msg = str_field(c, "message"), *s;
		size_t subj_len = strcspn(msg, "\n"), n;
		char *scope = NULL, *text, *reason, date[32];
		json_t *m;

		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			n = strlen(kinds[k].prefix);
			if (!strncmp(msg, kinds[k].prefix, n) && strchr("(!:", msg[n]))
				break;
		}
		if (k == ARRAY_SIZE(kinds))
			continue;
		s = msg + n;
		if (*s == '(') {
			size_t l = strcspn(s + 1, ")\n");

			if (s[1 + l] != ')' || !l)
				continue;
			scope = xstrndup(s + 1, l);
			s += l + 2;
		}
		if (*s == '!')
			s++;
		if (*s != ':' || s[1] != ' ' || (size_t)(s + 2 - msg) >= subj_len) {
			free(scope);
			continue;
		}
		text = xstrndup(s + 2, subj_len - (size_t)(s + 2 - msg));
		reason = xasprintf("git commit %.7s: %.*s", str_field(c, "sha"), (int)subj_len, msg);
		{
			time_t t = (time_t)json_integer_value(json_object_get(c, "time"));
			struct tm tm;

			gmtime_r(&t, &tm);
			strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
		}
		if (scope) {	/* "fix(parser): x" remembers "parser: x" */
			char *t = xasprintf("%s: %s", scope, text);

			free(text);
			text = t;
		}
		m = memory_new(kinds[k].type, kinds[k].category, text, reason, date);
		json_object_set_new(m, "source", json_string("git"));
		if (!memory_has(all, str_field(m, "id"))) {
			json_array_append(all, m);
			added++;
		}
		json_decref(m);
		free(text);
		free(reason);
		free(scope);
	}
	json_decref(commits);
	if (added)
		memory_save(all);
	else
		json_decref(all);
	return added;
}

/* ---- style guide ---------------------------------------------------------------------- */

/* A heading that is about style: its words. */
static int style_heading(const char *h)
{
	static const char *const words[] = { "style", "convention", "guideline", "coding standard",
					     "formatting", "lint", "naming", "pep 8", "pep8", "commit",
					     "type hint", "docstring", "test", NULL };

	for (int i = 0; words[i]; i++)
		if (contains_ci(h, words[i]))
			return 1;
	return 0;
}

/* One style rule: where it was written (file, line, section) and what it says. */
static void add_rule(json_t *rules, const char *file, int lineno, const char *section, const char *rule)
{
	json_array_append_new(rules, json_pack("{s:s,s:s,s:i,s:s,s:s}", "_type", "style_rule", "file", file,
					       "line", lineno, "section", section, "rule", rule));
}

/* An RST heading underline: one punctuation character repeated, 3 or more. */
static int rst_underline(const char *s)
{
	size_t n = strlen(s);

	if (n < 3 || !strchr("=-~^\"'`#*+_:.", *s))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (s[i] != *s)
			return 0;
	return 1;
}

/* A list item's text (-, *, +, 1., #.), or NULL. */
static char *list_item(char *s)
{
	char *e;

	if ((*s == '-' || *s == '*' || *s == '+') && s[1] == ' ')
		return s + 2;
	if (*s == '#' && s[1] == '.' && s[2] == ' ')
		return s + 3;
	if (isdigit((unsigned char)*s) && (e = s + strspn(s, "0123456789")) && (*e == '.' || *e == ')') &&
	    e[1] == ' ')
		return e + 2;
	return NULL;
}

/*
 * The rules of one document (Markdown, or reStructuredText when rst): under a
 * heading about style (every heading when all), each list item, and each
 * paragraph (its lines joined), with the heading as section.  Code blocks are
 * left out.  Appends {file, line, section, rule}.
 */
static void style_doc(json_t *rules, const char *file, int all, int rst)
{
	FILE *fp = fopen(file, "r");
	char *line = NULL, *section = xstrdup(""), *prev = NULL;
	size_t cap = 0;
	int lineno = 0, fence = 0, in_style = all, para_line = 0;
	struct buf para = BUF_INIT;

	if (!fp)
		return;
#define FLUSH_PARA() do { \
		if (para.len && in_style) \
			add_rule(rules, file, para_line, section, para.buf); \
		buf_reset(&para); \
	} while (0)
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *item;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		if (!rst && (!strncmp(s, "```", 3) || !strncmp(s, "~~~", 3))) {
			FLUSH_PARA();
			fence = !fence;
			continue;
		}
		if (fence)
			continue;
		if (!rst && *s == '#') {
			FLUSH_PARA();
			s += strspn(s, "#");
			s += strspn(s, " \t");
			free(section);
			section = xstrdup(s);
			in_style = all || style_heading(section);
			continue;
		}
		if (rst && rst_underline(s) && prev && *prev && !rst_underline(prev)) {
			/* the paragraph so far was the heading's title */
			buf_reset(&para);
			free(section);
			section = xstrdup(prev);
			in_style = all || style_heading(section);
			free(prev);
			prev = NULL;
			continue;
		}
		if (rst && (rst_underline(s) || !strncmp(s, ".. ", 3))) {
			FLUSH_PARA();
			free(prev);
			prev = NULL;
			continue;
		}
		free(prev);
		prev = xstrdup(s + strspn(s, " \t"));
		if (rst && (*s == ' ' || *s == '\t') && !para.len)
			continue;	/* an indented block: code, or a directive's body */
		s += strspn(s, " \t");
		if (!*s) {
			FLUSH_PARA();
			continue;
		}
		if ((item = list_item(s)) != NULL) {
			FLUSH_PARA();
			item += strspn(item, " \t");
			if (*item && in_style)
				add_rule(rules, file, lineno, section, item);
			continue;
		}
		if (!para.len)
			para_line = lineno;
		else
			buf_addch(&para, ' ');
		buf_addstr(&para, s);
	}
	FLUSH_PARA();
#undef FLUSH_PARA
	free(prev);
	buf_release(&para);
	free(section);
	free(line);
	fclose(fp);
}

/*
 * An INI-like file (.editorconfig, setup.cfg, tox.ini, .flake8): each
 * "key = value" under a [section] that want() accepts (NULL: every section).
 */
static void style_ini(json_t *rules, const char *file, int (*want)(const char *section))
{
	FILE *fp = fopen(file, "r");
	char *line = NULL, *section = xstrdup("");
	size_t cap = 0;
	int lineno = 0, keep = !want, rule_line = 0;
	struct buf rule = BUF_INIT;	/* a key's line and its continuation lines */

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		if ((*s == ' ' || *s == '\t') && rule.len) {
			s += strspn(s, " \t");
			if (*s && *s != '#' && *s != ';') {
				buf_addch(&rule, ' ');
				buf_addstr(&rule, s);
			}
			continue;
		}
		if (rule.len) {
			add_rule(rules, file, rule_line, section, rule.buf);
			buf_reset(&rule);
		}
		if (!*s || *s == '#' || *s == ';' || *s == ' ' || *s == '\t')
			continue;
		if (*s == '[') {
			free(section);
			section = xstrdup(s);
			keep = !want || want(section);
			continue;
		}
		if (!keep || !strchr(s, '=') || !strncmp(s, "root", 4))
			continue;
		buf_addstr(&rule, s);
		rule_line = lineno;
	}
	if (rule.len)
		add_rule(rules, file, rule_line, section, rule.buf);
	buf_release(&rule);
	free(section);
	free(line);
	fclose(fp);
}

/*
 * The line of a file, whose text (NUL-terminated) the caller read once, where
 * key is set ("key =" or "key:" at a line's start), or 0.
 */
static int key_line(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *line = text;
	int lineno = 0;

	while (*line) {
		const char *s = line + strspn(line, " \t\""), *nl = strchr(line, '\n');
		lineno++;
		/* a key at the end of the text, with no newline after it, counts */
		if (!strncmp(s, key, kl) && (s[kl] == '\0' || strchr(" \t=:\"", s[kl])))
			return lineno;
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

/* The sections of setup.cfg and tox.ini that configure a linter or formatter. */
static int linter_section(const char *sec)
{
	static const char *const tools[] = { "[flake8]", "[isort]", "[pycodestyle]", "[pydocstyle]",
		"[pylint", "[tool:isort]", "[yapf]", "[black]", "[mypy]", NULL };

	for (int i = 0; tools[i]; i++)
		if (!strncmp(sec, tools[i], strlen(tools[i])))
			return 1;
	return 0;
}

/* A YAML-ish configuration (.clang-format, .rubocop.yml, .eslintrc.yml, ...): its
 * top-level "key: value" lines; .pre-commit-config.yaml: its hooks' ids. */
static void style_yaml(json_t *rules, const char *file)
{
	FILE *fp = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, precommit = !strcmp(file, ".pre-commit-config.yaml");

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *t;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		if (precommit) {
			t = s + strspn(s, " \t-");
			if (!strncmp(t, "id:", 3)) {
				char *r = xasprintf("pre-commit hook %s", t + 3 + strspn(t + 3, " \t"));
				add_rule(rules, file, lineno, "hooks", r);
				free(r);
			}
			continue;
		}
		if (!*s || *s == ' ' || *s == '\t' || *s == '#' || *s == '-' || !strchr(s, ':') ||
		    !strcmp(s, "---"))
			continue;
		add_rule(rules, file, lineno, "", s);
	}
	free(line);
	fclose(fp);
}

/* Flatten a JSON configuration object into "a.b = value" rules. */
static void style_json_obj(json_t *rules, const char *file, const char *text, const char *section,
			   const char *prefix, json_t *obj, int depth)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		char *key = *prefix ? xasprintf("%s.%s", prefix, k) : xstrdup(k);
		if (json_is_object(v) && depth < 4) {
			style_json_obj(rules, file, text, section, key, v, depth + 1);
		} else {
			char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			char *r = xasprintf("%s = %s", key, val ? val : "");
			add_rule(rules, file, key_line(text, k), section, r);
			free(r);
			free(val);
		}
		free(key);
	}
}

/*
 * pyproject.toml's [tool.<linter>] tables, and .eslintrc.json's rules.  The
 * file is read once: the parser and the line of each key (key_line) read the
 * same text.
 */
static void style_config_json(json_t *rules, const char *file)
{
	static const char *const tools[] = { "ruff", "black", "isort", "flake8", "pylint", "yapf",
					     "pydocstyle", "autopep8", NULL };
	char *err = NULL, *json = NULL, *text = NULL;
	size_t len;
	json_t *root;

	if (read_file(file, &text, &len) < 0)
		return;
	if (!strstr(file, ".toml")) {
		json_error_t jerr;
		root = json_loadb(text, len, 0, &jerr);
		if (root) {
			style_json_obj(rules, file, text, "", "", root, 0);
			json_decref(root);
		}
		free(text);
		return;
	}
	json = toml_text_json(text, len, file, &err);
	root = json ? json_loads(json, 0, NULL) : NULL;
	free(json);
	free(err);
	for (int i = 0; root && tools[i]; i++) {
		json_t *t = json_object_get(json_object_get(root, "tool"), tools[i]);
		if (json_is_object(t)) {
			char *sec = xasprintf("[tool.%s]", tools[i]);
			style_json_obj(rules, file, text, sec, "", t, 0);
			free(sec);
		}
	}
	json_decref(root);
	free(text);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a file name is a style document: STYLE*, *style*, *convention*,
 * CONTRIBUTING*, CODING_STANDARDS*, in Markdown, reStructuredText or text. */
static int style_doc_name(const char *name, int *all)
{
	const char *dot = strrchr(name, '.');

	if (!dot || (strcasecmp(dot, ".md") && strcasecmp(dot, ".rst") && strcasecmp(dot, ".txt")))
		return 0;
	*all = contains_ci(name, "style") || contains_ci(name, "convention") ||
	       contains_ci(name, "coding_standard") || contains_ci(name, "coding-standard");
	return *all || contains_ci(name, "contributing");
}

/* docs/ (or doc/) to depth 3: the style documents, into a sorted list. */
static void find_style_docs(const char *dir, int depth, char ***docs, size_t *nr, size_t *alloc)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int all;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char *p;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < 3) {
			find_style_docs(p, depth + 1, docs, nr, alloc);
		} else if (S_ISREG(st.st_mode) && style_doc_name(de->d_name, &all)) {
			ALLOC_GROW(*docs, *nr + 1, *alloc);
			(*docs)[(*nr)++] = p;
			p = NULL;
		}
		free(p);
	}
	closedir(d);
}

/*
 * The style rules of the project, in this order: the style documents at the top,
 * in .github/ and under docs/ or doc/ (STYLE*, CODE_STYLE*, CODING_STANDARDS*,
 * CONVENTIONS*, *style*, whole; CONTRIBUTING* only its sections about style),
 * Markdown or reStructuredText; .editorconfig; the linters' and formatters'
 * configuration (pyproject.toml [tool.ruff|black|isort|flake8|...], setup.cfg,
 * tox.ini and .flake8 linter sections, .clang-format, .rubocop.yml, .eslintrc*,
 * .prettierrc*, rustfmt.toml, .pre-commit-config.yaml hooks); then the README's
 * sections about style.  *sources gets the files read.
 */
static json_t *style_rules(json_t **sources)
{
	static const char *const yaml[] = { ".clang-format", ".rubocop.yml", ".eslintrc.yml",
		".eslintrc.yaml", ".prettierrc", ".prettierrc.yml", ".prettierrc.yaml", ".golangci.yml",
		".pre-commit-config.yaml", NULL };
	static const char *const jsons[] = { ".eslintrc.json", ".eslintrc", ".prettierrc.json", NULL };
	json_t *rules = json_array();
	char **docs = NULL;
	size_t docs_nr = 0, docs_alloc = 0, i;
	DIR *d;
	struct dirent *de;
	int all;

	*sources = json_array();
	if ((d = opendir(".")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (style_doc_name(de->d_name, &all)) {
				ALLOC_GROW(docs, docs_nr + 1, docs_alloc);
				docs[docs_nr++] = xstrdup(de->d_name);
			}
		}
		closedir(d);
	}
	find_style_docs(".github", 1, &docs, &docs_nr, &docs_alloc);
	find_style_docs("docs", 1, &docs, &docs_nr, &docs_alloc);
	find_style_docs("doc", 1, &docs, &docs_nr, &docs_alloc);
	/* documents named for style before CONTRIBUTING ones; by path within each */
	if (docs_nr)
		qsort(docs, docs_nr, sizeof(*docs), cmp_str);
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < docs_nr; i++) {
			const char *base = strrchr(docs[i], '/') ? strrchr(docs[i], '/') + 1 : docs[i];
			const char *dot = strrchr(base, '.');
			size_t before = json_array_size(rules);

			style_doc_name(base, &all);
			if (all != !pass)
				continue;
			style_doc(rules, docs[i], all, dot && !strcasecmp(dot, ".rst"));
			if (all || json_array_size(rules) > before)
				json_array_append_new(*sources, json_string(docs[i]));
		}
	for (i = 0; i < docs_nr; i++)
		free(docs[i]);
	free(docs);
	if (!access(".editorconfig", R_OK)) {
		json_array_append_new(*sources, json_string(".editorconfig"));
		style_ini(rules, ".editorconfig", NULL);
	}
	{
		static const char *const lint_ini[] = { "setup.cfg", "tox.ini", ".flake8", NULL };
		for (i = 0; lint_ini[i]; i++) {
			size_t before = json_array_size(rules);
			if (access(lint_ini[i], R_OK))
				continue;
			style_ini(rules, lint_ini[i], strcmp(lint_ini[i], ".flake8") ? linter_section : NULL);
			if (json_array_size(rules) > before)
				json_array_append_new(*sources, json_string(lint_ini[i]));
		}
	}
	if (!access("pyproject.toml", R_OK)) {
		size_t before = json_array_size(rules);
		style_config_json(rules, "pyproject.toml");
		if (json_array_size(rules) > before)
			json_array_append_new(*sources, json_string("pyproject.toml"));
	}
	if (!access("rustfmt.toml", R_OK) || !access(".rustfmt.toml", R_OK)) {
		const char *f = !access("rustfmt.toml", R_OK) ? "rustfmt.toml" : ".rustfmt.toml";
		json_array_append_new(*sources, json_string(f));
		style_ini(rules, f, NULL);
	}
	for (i = 0; yaml[i]; i++)
		if (!access(yaml[i], R_OK)) {
			json_array_append_new(*sources, json_string(yaml[i]));
			style_yaml(rules, yaml[i]);
		}
	for (i = 0; jsons[i]; i++)
		if (!access(jsons[i], R_OK)) {
			json_array_append_new(*sources, json_string(jsons[i]));
			style_config_json(rules, jsons[i]);
		}
	if (!access("README.md", R_OK) || !access("README.rst", R_OK)) {
		const char *f = !access("README.md", R_OK) ? "README.md" : "README.rst";
		size_t before = json_array_size(rules);

		style_doc(rules, f, 0, !strcmp(f, "README.rst"));
		if (json_array_size(rules) > before)
			json_array_append_new(*sources, json_string(f));
	}
	return rules;
}

static int cmd_style_guide(int argc, char **argv)
{
	static const char *const names[] = { "query", "category", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "style-guide", .names = names, .bools = bools };
	json_t *sources, *rules, *r;
	size_t i;
	int shown = 0;

	parse_options(&f, argc, argv, "query");
	if (f.values[0] && !*f.values[0])
		usage_fail("style-guide: --query must not be empty");
	if (f.values[1] && !*f.values[1])
		usage_fail("style-guide: --category must not be empty");
	rules = style_rules(&sources);
	if (!json_array_size(sources)) {
		json_decref(rules);
		json_decref(sources);
		fail("style-guide: no style guide found (CONTRIBUTING.md, STYLE.md, docs/*style*.md, "
		     ".editorconfig or a README section on style)");
	}
	json_array_foreach(rules, i, r) {
		if (f.values[1] && !contains_ci(str_field(r, "section"), f.values[1]) &&
		    !contains_ci(str_field(r, "file"), f.values[1]))
			continue;
		if (f.values[0] && !contains_ci(str_field(r, "rule"), f.values[0]) &&
		    !contains_ci(str_field(r, "section"), f.values[0]))
			continue;
		shown++;
		if (want_json(f.set[0]))
			put_json(r);
		else
			printf("%s:%lld: [%s] %s\n", str_field(r, "file"),
			       (long long)json_integer_value(json_object_get(r, "line")),
			       str_field(r, "section"), str_field(r, "rule"));
	}
	if (!shown && !want_json(f.set[0]))
		puts("no style rules match");
	json_decref(rules);
	json_decref(sources);
	return close_stdout(0);
}

/* ---- search: enrichment, search quality, the preflight card ---------------------------------- */

/* Whether a memory shares a word (3 letters or more) with the query. */
static int memory_related(json_t *m, const char *query)
{
	const char *s = query;

	while (*s) {
		size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (n >= 3) {
			char *w = xstrndup(s, n);
			int hit = contains_ci(str_field(m, "memory"), w) ||
				  contains_ci(str_field(m, "category"), w) ||
				  contains_ci(str_field(m, "reason"), w);

			free(w);
			if (hit)
				return 1;
		}
		s += n ? n : 1;
	}
	return 0;
}

/* The files that import path (ci-refs deps --reverse), a new array of paths. */
static json_t *importers_of(const char *path)
{
	char *av[] = { NULL, "--limit", "1000", "deps", "--reverse", "--", (char *)path, NULL };
	json_t *recs, *out = json_array(), *r, *v;
	size_t i, j;
	int rc;

	quiet_children = 1;	/* "imported by no file" is an answer, not an error */
	recs = records_of("ci-refs", av, &rc);
	quiet_children = 0;
	json_array_foreach(recs, i, r) {
		const char *p = str_field(r, "path");

		if (strcmp(str_field(r, "_type"), "dep") || !*p || !strcmp(p, path))
			continue;
		json_array_foreach(out, j, v)
			if (!strcmp(json_string_value(v), p))
				break;
		if (j == json_array_size(out))
			json_array_append_new(out, json_string(p));
	}
	json_decref(recs);
	return out;
}

static int array_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

static int is_test_path(const char *p)
{
	return contains_ci(p, "test") || contains_ci(p, "spec");
}

/*
 * Enrich the hits of a ci-rank answer and add what codebase-context's search
 * adds: per hit importedByCount, hasTests, the trend of the patterns its file
 * uses and a patternWarning when one is declining; a search_quality record;
 * up to 3 related_memory records; with an edit, refactor or migrate intent, the
 * preflight record.  recs are ci-rank's records (modified in place).
 */
static void search_enrich(json_t *recs, const char *query, const char *intent)
{
	json_t *pats = patterns_compute("search", "all"), *mems = memory_load(), *summary = NULL;
	json_t *files = json_array(), *callers = json_array(), *related = json_array(), *r, *v, *p;
	json_t *doo = json_array(), *avoid = json_array(), *warnings = json_array(), *help = json_array();
	time_t now = time(NULL);
	size_t i, j, hits = 0, covered = 0;
	double top = 0;
	int stale = 0;

	json_array_foreach(recs, i, r) {
		const char *path = str_field(r, "path");
		json_t *imp;
		const char *trend = NULL;
		char *warn = NULL;

		if (!strcmp(str_field(r, "_type"), "summary"))
			summary = r;
		if (strcmp(str_field(r, "_type"), "hit"))
			continue;
		if (!hits++)
			top = json_number_value(json_object_get(r, "score"));
		if (array_has(files, path))
			continue;
		json_array_append_new(files, json_string(path));
		imp = importers_of(path);
		json_array_foreach(imp, j, v)
			if (!array_has(callers, json_string_value(v)))
				json_array_append(callers, v);
		json_object_set_new(r, "importedByCount", json_integer((json_int_t)json_array_size(imp)));
		{
			json_t *callers3 = json_array(), *tests3 = json_array();

			json_array_foreach(imp, j, v) {
				json_t *to = is_test_path(json_string_value(v)) ? tests3 : callers3;

				if (json_array_size(to) < 3)
					json_array_append(to, v);
			}
			json_object_set_new(r, "hasTests", json_boolean(json_array_size(tests3) > 0));
			json_object_set_new(r, "callers", callers3);
			json_object_set_new(r, "tests", tests3);
		}
		json_decref(imp);
		json_array_foreach(json_object_get(pats, "patterns"), j, p) {
			if (!array_has(json_object_get(p, "files"), path))
				continue;
			if (!strcmp(str_field(p, "trend"), "Declining") && !warn)
				warn = xasprintf("uses %s, a declining %s pattern (%s of files)", str_field(p, "name"),
						 str_field(p, "category"), str_field(p, "frequency"));
			if (strcmp(str_field(p, "trend"), "Stable") && !trend)
				trend = str_field(p, "trend");
		}
		if (trend)
			json_object_set_new(r, "trend", json_string(trend));
		if (warn)
			json_object_set_new(r, "patternWarning", json_string(warn));
		free(warn);
	}
	json_array_foreach(callers, i, v)
		covered += array_has(files, json_string_value(v));
	/* related memories: those sharing a word with the query, freshest first as stored */
	json_array_foreach(mems, i, v) {
		memory_score(v, now);
		if (!memory_related(v, query))
			continue;
		stale |= json_is_true(json_object_get(v, "stale"));
		if (json_array_size(related) < 3) {
			json_t *m = json_pack("{s:s}", "_type", "related_memory");

			json_object_update(m, v);
			json_array_append_new(related, m);
		}
		if (!strcmp(str_field(v, "type"), "failure") && json_array_size(warnings) < 3)
			json_array_append_new(warnings, json_string(str_field(v, "memory")));
	}
	{
		const char *q = summary ? str_field(summary, "quality") : "low";
		const char *hint = summary ? json_string_value(json_object_get(summary, "hint")) : NULL;
		json_t *sq = json_pack("{s:s,s:s,s:f,s:s,s:I}", "_type", "search_quality",
				       "status", !strcmp(q, "low") ? "low_confidence" : "ok",
				       "confidence", round(top * 1000) / 1000, "quality", q,
				       "resultCount", (json_int_t)hits);

		if (hint)
			json_object_set_new(sq, "hint", json_string(hint));
		json_array_append_new(recs, sq);
	}
	json_array_foreach(related, i, v)
		json_array_append(recs, v);
	if (intent && strcmp(intent, "explore")) {
		json_t *card = json_pack("{s:s,s:s}", "_type", "preflight", "intent", intent), *impact_files;
		json_t *golden = NULL;
		size_t ncallers = json_array_size(callers), nconf = json_array_size(json_object_get(pats, "conflicts"));
		int low = !summary || !strcmp(str_field(summary, "quality"), "low");
		double code = top > 1 ? 100 : top * 100, align, support, score;
		char *cov, *next = NULL;
		int ready;

		/* do: adopted patterns by adoption (di, state, testing before libraries); avoid: declining */
		for (int pass = 0; pass < 2; pass++)
			json_array_foreach(json_object_get(pats, "patterns"), i, p) {
				int lib = !strcmp(str_field(p, "category"), "libraries");
				char *s;

				if (lib != pass)
					continue;
				s = xasprintf("%s (%s %s)", str_field(p, "name"), str_field(p, "frequency"),
					      str_field(p, "category"));
				if (!strcmp(str_field(p, "trend"), "Declining")) {
					if (json_array_size(avoid) < 3)
						json_array_append_new(avoid, json_string(s));
				} else if (json_array_size(doo) < 3) {
					json_array_append_new(doo, json_string(s));
				}
				free(s);
			}
		/* the best example: the first golden file that uses no declining pattern */
		json_array_foreach(json_object_get(pats, "goldenFiles"), i, v) {
			int declining = 0;

			json_array_foreach(json_object_get(pats, "patterns"), j, p)
				declining |= !strcmp(str_field(p, "trend"), "Declining") &&
					     array_has(json_object_get(p, "files"), str_field(v, "file"));
			if (!declining) {
				golden = v;
				break;
			}
		}
		impact_files = json_array();
		json_array_foreach(callers, i, v)
			if (!array_has(files, json_string_value(v)) && json_array_size(impact_files) < 3)
				json_array_append(impact_files, v);
		cov = xasprintf("%zu/%zu callers in results", covered, ncallers);
		align = !json_array_size(doo) ? 0 : nconf ? 50 : 100;
		support = json_array_size(related) ? (stale ? 50 : 100) : 0;
		score = 0.45 * code + 0.30 * align + 0.25 * support;
		ready = score >= 40 && !low && !stale && !nconf && hits >= 2 &&
			(!ncallers || covered * 2 >= ncallers);
		if (low)
			json_array_append_new(help, json_string("search again with an identifier, a file name or an "
								"error message from the code (search quality is low)"));
		json_array_foreach(impact_files, i, v) {
			char *s = xasprintf("read %s: it imports a file in the results", json_string_value(v));

			if (json_array_size(help) < 4)
				json_array_append_new(help, json_string(s));
			free(s);
		}
		if (nconf && json_array_size(help) < 4)
			json_array_append_new(help, json_string("call get_team_patterns: two patterns of a category "
								"are both above 20% (a conflict)"));
		if (stale && json_array_size(help) < 4)
			json_array_append_new(help, json_string("check the stale memories related to this query "
								"(get_memory) and remember what holds now"));
		if (!json_array_size(related) && json_array_size(help) < 4)
			json_array_append_new(help, json_string("call get_memory for the team's conventions, "
								"decisions and past failures in this area"));
		if (hits < 2 && json_array_size(help) < 4)
			json_array_append_new(help, json_string("search with other words: one result is thin evidence"));
		if (!ready) {
			if (low)
				next = xstrdup("search quality is low: search again with more specific words");
			else if (ncallers && covered * 2 < ncallers)
				next = xasprintf("%zu of %zu callers missing: search for %s", ncallers - covered,
						 ncallers, json_string_value(json_array_get(impact_files, 0)));
			else if (nconf)
				next = xstrdup("patterns conflict: call get_team_patterns to see which one to follow");
			else if (stale)
				next = xstrdup("related memories are stale: verify them with get_memory");
			else if (hits < 2)
				next = xstrdup("only one result: search with other words");
			else
				next = xstrdup("evidence is thin: call get_memory and get_team_patterns for this area");
		}
		json_object_set_new(card, "ready", json_boolean(ready));
		if (next)
			json_object_set_new(card, "nextAction", json_string(next));
		if (json_array_size(warnings))
			json_object_set(card, "warnings", warnings);
		json_object_set_new(card, "patterns", json_pack("{s:O,s:O}", "do", doo, "avoid", avoid));
		if (golden)
			json_object_set(card, "bestExample", json_object_get(golden, "file"));
		json_object_set_new(card, "impact", json_pack("{s:s,s:o}", "coverage", cov, "files", impact_files));
		if (!ready && json_array_size(help))
			json_object_set(card, "whatWouldHelp", help);
		json_array_append_new(recs, card);
		free(cov);
		free(next);
	}
	json_decref(doo);
	json_decref(avoid);
	json_decref(warnings);
	json_decref(help);
	json_decref(related);
	json_decref(callers);
	json_decref(files);
	json_decref(mems);
	json_decref(pats);
}

/* ---- context: the codebase://context overview ----------------------------------------------- */

/*
 * A Markdown overview for an agent starting work: the languages, dependencies,
 * the team's patterns and golden files, conflicts, and the memories with their
 * confidence.  With --json one record {"_type":"context","text":...}.
 */
static int cmd_context(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "context", .bools = bools };
	char *av[] = { NULL, "metadata", "--json", NULL };
	json_t *recs, *meta, *pats, *mems, *v, *m;
	struct buf b = BUF_INIT;
	const char *key;
	time_t now = time(NULL);
	size_t i;
	int rc;

	parse_options(&f, argc, argv, NULL);
	recs = records_of("ci", av, &rc);
	meta = json_array_get(recs, 0);
	if (rc || !json_is_object(meta))
		fail("context: no index (run 'ci reindex' first)");
	pats = patterns_compute("context", "all");
	mems = memory_load();
	buf_addf(&b, "# Codebase context: %s\n\n", strrchr(str_field(meta, "root"), '/') ?
		 strrchr(str_field(meta, "root"), '/') + 1 : str_field(meta, "root"));
	buf_addf(&b, "%lld files, %lld chunks indexed at commit %s.\n\n## Languages\n\n",
		 (long long)json_integer_value(json_object_get(meta, "files")),
		 (long long)json_integer_value(json_object_get(meta, "chunks")),
		 json_is_string(json_object_get(meta, "commit")) ? str_field(meta, "commit") : "(none)");
	json_object_foreach(json_object_get(meta, "languages"), key, v)
		buf_addf(&b, "- %s: %lld files\n", key, (long long)json_integer_value(v));
	buf_addstr(&b, "\n## Dependencies\n\n");
	if (!json_array_size(json_object_get(meta, "dependencies")))
		buf_addstr(&b, "(no package manifest)\n");
	json_array_foreach(json_object_get(meta, "dependencies"), i, v)
		buf_addf(&b, "- %s %s (%s)\n", str_field(v, "name"), str_field(v, "version"),
			 str_field(v, "manifest"));
	buf_addstr(&b, "\n## Team patterns\n\n");
	if (!json_array_size(json_object_get(pats, "patterns")))
		buf_addstr(&b, "(no imports of packages)\n");
	json_array_foreach(json_object_get(pats, "patterns"), i, v)
		buf_addf(&b, "- %s: %s, %s of files (%lld), %s\n", str_field(v, "category"), str_field(v, "name"),
			 str_field(v, "frequency"), (long long)json_integer_value(json_object_get(v, "count")),
			 str_field(v, "trend"));
	json_array_foreach(json_object_get(pats, "goldenFiles"), i, v)
		buf_addf(&b, "%s%s", i ? ", " : "\nGolden files: ", str_field(v, "file"));
	if (json_array_size(json_object_get(pats, "goldenFiles")))
		buf_addch(&b, '\n');
	json_array_foreach(json_object_get(pats, "conflicts"), i, v)
		buf_addf(&b, "\nConflict in %s: %s and %s are both above 20%%.\n", str_field(v, "category"),
			 json_string_value(json_array_get(json_object_get(v, "patterns"), 0)),
			 json_string_value(json_array_get(json_object_get(v, "patterns"), 1)));
	buf_addstr(&b, "\n## Team memory\n\n");
	if (!json_array_size(mems))
		buf_addstr(&b, "(none: remember conventions, decisions, gotchas and failures with 'ci memory add')\n");
	json_array_foreach(mems, i, m) {
		memory_score(m, now);
		buf_addf(&b, "- [%s] %s: %s (confidence %.2f%s)\n", str_field(m, "type"), str_field(m, "category"),
			 str_field(m, "memory"), json_real_value(json_object_get(m, "confidence")),
			 json_is_true(json_object_get(m, "stale")) ? ", stale" : "");
	}
	if (f.set[0]) {
		json_t *r = json_pack("{s:s,s:s}", "_type", "context", "text", b.buf);

		put_json(r);
		json_decref(r);
	} else {
		fputs(b.buf, stdout);
	}
	buf_release(&b);
	json_decref(mems);
	json_decref(pats);
	json_decref(recs);
	return close_stdout(0);
}

/* ---- beads and archive records (bobbin's search_beads, archive_search, archive_recent) ---- */

static sqlite3_stmt *prepare_or_fail(sqlite3 *db, const char *sub, const char *sql);
static const char *given(const char *v);

/* A record to rank: its text, and the record written for it. */
struct doc {
	char *text;		/* what is searched (owned) */
	json_t *rec;		/* the output record (owned) */
	char date[11];		/* YYYY-MM-DD, or "" */
	double score;		/* 0-1 after ranking; < 0: not found */
};

static void docs_free(struct doc *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].text);
		json_decref(d[i].rec);
	}
	free(d);
}

/* The words of a query as an FTS5 OR of quoted terms; NULL when it has none. */
static char *fts_or_query(const char *q)
{
	struct buf b = BUF_INIT;
	const unsigned char *p = (const unsigned char *)q;

	while (*p) {
		const unsigned char *w;
		while (*p && !isalnum(*p) && *p < 0x80)
			p++;
		w = p;
		while (*p && (isalnum(*p) || *p >= 0x80))
			p++;
		if (p > w)
			buf_addf(&b, "%s\"%.*s\"", b.len ? " OR " : "", (int)(p - w), (const char *)w);
	}
	if (!b.len) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* Does the query have a word to search for? */
static int has_words(const char *q)
{
	char *m = q ? fts_or_query(q) : NULL;
	int r = m != NULL;

	free(m);
	return r;
}

/* Keyword ranks: FTS5 bm25 over the texts in memory; score[i] = relevance 0-1, -1 if no match. */
static void rank_keyword(const char *sub, const char *query, struct doc *d, size_t n, double *score)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char *match = fts_or_query(query);
	double best = 0;
	size_t i;

	for (i = 0; i < n; i++)
		score[i] = -1;
	if (!match)
		return;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, "CREATE VIRTUAL TABLE d USING fts5(t, tokenize = 'porter unicode61')", NULL, NULL,
			 NULL) != SQLITE_OK)
		fail("%s: cannot create the search table: %s", sub, sqlite3_errmsg(db));
	st = prepare_or_fail(db, sub, "INSERT INTO d(rowid, t) VALUES (?1, ?2)");
	for (i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(st, 2, d[i].text, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			fail("%s: %s", sub, sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	st = prepare_or_fail(db, sub, "SELECT rowid, -bm25(d) FROM d WHERE d MATCH ?1");
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		i = (size_t)sqlite3_column_int64(st, 0) - 1;
		score[i] = sqlite3_column_double(st, 1);
		if (score[i] > best)
			best = score[i];
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(match);
	/* a match is a match, even on words every record has (bm25 gives them nothing) */
	for (i = 0; i < n; i++)
		if (score[i] >= 0)
			score[i] = best > 0 && score[i] / best > 0.001 ? score[i] / best : 0.001;
}

/* The vectors of texts (n of them) and of the query, by ci-embed; 0 when it cannot. */
static size_t embed_texts(const char *query, struct doc *d, size_t n, float **vecs, float **qv)
{
	char tmpl[] = "/tmp/ci-embed-XXXXXX";
	char *av[] = { NULL, "--fields", "text", "--no-progress", NULL };
	char *qav[] = { NULL, "--query", (char *)query, NULL };
	int fd = mkstemp(tmpl), rc, saved = quiet_children;
	json_t *recs, *r;
	size_t dim = 0, i;
	FILE *f;

	*vecs = *qv = NULL;
	if (fd < 0)
		return 0;
	unlink(tmpl);
	f = fdopen(fd, "w+");
	if (!f) {
		close(fd);
		return 0;
	}
	for (i = 0; i < n; i++) {
		json_t *c = json_pack("{s:s, s:s, s:i, s:i, s:s}", "_type", "chunk", "path", "record",
				      "start_line", 1, "end_line", 1, "text", d[i].text);
		char *line = json_dumps(c, JSON_COMPACT);
		fprintf(f, "%s\n", line ? line : "{}");
		free(line);
		json_decref(c);
	}
	fflush(f);
	rewind(f);
	child_stdin = fileno(f);
	quiet_children = 1;
	recs = records_of("ci-embed", av, &rc);
	child_stdin = -1;
	fclose(f);
	if (!rc && json_array_size(recs) == n) {
		json_t *q = records_of("ci-embed", qav, &rc);
		r = json_array_get(q, 0);
		if (!rc && r && vec_from_base64(qv, &dim, json_string_value(json_object_get(r, "vec")),
						json_string_length(json_object_get(r, "vec"))) == 0 && dim) {
			*vecs = xcalloc(n * dim, sizeof(float));
			json_array_foreach(recs, i, r) {
				float *v = NULL;
				size_t vd = 0;
				json_t *b = json_object_get(r, "vec");
				if (vec_from_base64(&v, &vd, json_string_value(b), json_string_length(b)) == 0 && vd == dim)
					memcpy(*vecs + i * dim, v, dim * sizeof(float));
				free(v);
			}
		} else {
			dim = 0;
		}
		json_decref(q);
	}
	quiet_children = saved;
	json_decref(recs);
	if (!dim) {
		free(*qv);
		*qv = NULL;
	}
	return dim;
}

/*
 * Score the docs for the query: keyword (FTS5 bm25), semantic (cosine of
 * ci-embed vectors) or hybrid (their mean).
 * Semantic search that cannot be done fails; hybrid then says so on stderr and
 * ranks by keyword.
 */
static void rank_docs(const char *sub, const char *query, const char *mode, struct doc *d, size_t n)
{
	double *kw = xcalloc(n + 1, sizeof(double)), *sem = xcalloc(n + 1, sizeof(double));
	float *vecs = NULL, *qv = NULL;
	size_t dim = 0, i, k;

	if (strcmp(mode, "semantic"))
		rank_keyword(sub, query, d, n, kw);
	if (strcmp(mode, "keyword") && n) {
		dim = embed_texts(query, d, n, &vecs, &qv);
		if (!dim && !strcmp(mode, "semantic"))
			fail("%s: semantic search is not available: ci-embed found no model (scripts/setup fetches it; "
			     "or use mode keyword)", sub);
		if (!dim) {
			fprintf(stderr, "%s: %s: no embedding model: ranked by keywords only\n", progname, sub);
			mode = "keyword";
		}
	}
	for (i = 0; i < n && dim; i++) {
		double dot = 0, nq = 0, nv = 0;
		for (k = 0; k < dim; k++) {
			dot += (double)qv[k] * vecs[i * dim + k];
			nq += (double)qv[k] * qv[k];
			nv += (double)vecs[i * dim + k] * vecs[i * dim + k];
		}
		sem[i] = nq > 0 && nv > 0 ? dot / sqrt(nq * nv) : 0;
		if (sem[i] < 0)
			sem[i] = 0;
	}
	for (i = 0; i < n; i++) {
		if (!strcmp(mode, "keyword"))
			d[i].score = kw[i];
		else if (!strcmp(mode, "semantic"))
			d[i].score = sem[i];
	}
	/* hybrid: the mean of the two, so that a record only one finds scores at most half */
	if (!strcmp(mode, "hybrid"))
		for (i = 0; i < n; i++)
			d[i].score = 0.5 * (kw[i] > 0 ? kw[i] : 0) + 0.5 * sem[i];
	for (i = 0; i < n; i++)
		d[i].score = d[i].score < 0 ? -1 : floor(d[i].score * 1000 + 0.5) / 1000;
	free(kw);
	free(sem);
	free(vecs);
	free(qv);
}

static const char *doc_path(const struct doc *x)
{
	const char *p = json_string_value(json_object_get(x->rec, "path"));

	return p ? p : "";
}

static int cmp_doc_score(const void *a, const void *b)
{
	const struct doc *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return strcmp(doc_path(x), doc_path(y));
}

/* Newest first, then by path. */
static int cmp_doc_recent(const void *a, const void *b)
{
	const struct doc *x = a, *y = b;
	int c = strcmp(y->date, x->date);

	return c ? c : strcmp(doc_path(x), doc_path(y));
}

/* The first max bytes of s, cut at a character boundary, with "..." when cut (malloc'd). */
static char *cut_text(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return xstrdup(s);
	while (max && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return xasprintf("%.*s...", (int)max, s);
}

static const char *mode_arg(const char *sub, const char *m)
{
	if (!m)
		return "hybrid";
	if (strcmp(m, "hybrid") && strcmp(m, "keyword") && strcmp(m, "semantic"))
		usage_fail("%s: --mode must be hybrid, keyword or semantic, not '%s'", sub, m);
	return m;
}

/* A string field of a bead as text ("" when absent; numbers and arrays as JSON). */
static char *field_text(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v || json_is_null(v))
		return xstrdup("");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static int cmd_beads(int argc, char **argv)
{
	static const char *const names[] = { "query", "priority", "status", "assignee", "limit", "mode", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const fields[] = { "title", "description", "design", "acceptance_criteria", "notes",
					      "labels", "issue_type" };
	struct flags f = { .sub = "beads search", .names = names, .bools = bools };
	struct doc *d = NULL;
	size_t n = 0, alloc = 0, i, lineno = 0, shown = 0;
	long prio = 0, limit;
	const char *mode;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	json_t *out = json_array();
	FILE *fp;

	if (!argc || strcmp(argv[0], "search"))
		usage_fail("beads: expected search");
	parse_options(&f, argc - 1, argv + 1, "query");
	if (!given(f.values[0]) || !has_words(f.values[0]))
		usage_fail("beads search: --query needs words to search for");
	if (f.values[1]) {
		char *end;
		prio = strtol(f.values[1], &end, 10);
		if (*end || end == f.values[1] || prio < 1 || prio > 4)
			usage_fail("beads search: --priority must be 1 to 4, not '%s'", f.values[1]);
	}
	limit = atol(check_limit("beads search", f.values[4] ? f.values[4] : "10", 100));
	mode = mode_arg("beads search", f.values[5]);
	fp = fopen(".beads/issues.jsonl", "r");
	if (!fp)
		fail("no beads in this repository (.beads/issues.jsonl not found)");
	while ((len = getline(&line, &cap, fp)) >= 0) {
		json_t *b, *v;
		struct buf t = BUF_INIT;
		char *desc, *snip, *title, *status, *assignee;
		lineno++;
		if (len <= 1)
			continue;
		b = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_object(b) || !json_is_string(json_object_get(b, "id"))) {
			fprintf(stderr, "%s: .beads/issues.jsonl:%zu: not an issue record, left out\n", progname, lineno);
			json_decref(b);
			continue;
		}
		v = json_object_get(b, "priority");
		if (prio && (!json_is_integer(v) || json_integer_value(v) != prio))
			goto skip;
		if (given(f.values[2]) && strcasecmp(json_string_value(json_object_get(b, "status")) ?
						     json_string_value(json_object_get(b, "status")) : "", f.values[2]))
			goto skip;
		if (given(f.values[3]) && strcasecmp(json_string_value(json_object_get(b, "assignee")) ?
						     json_string_value(json_object_get(b, "assignee")) : "", f.values[3]))
			goto skip;
		for (i = 0; i < ARRAY_SIZE(fields); i++) {
			char *x = field_text(b, fields[i]);
			buf_addf(&t, "%s\n", x);
			free(x);
		}
		ALLOC_GROW(d, n + 1, alloc);
		memset(&d[n], 0, sizeof(d[n]));
		d[n].text = buf_detach(&t, NULL);
		desc = field_text(b, "description");
		snip = cut_text(desc, 200);
		title = field_text(b, "title");
		status = field_text(b, "status");
		assignee = field_text(b, "assignee");
		/* path: for ties; not written */
		d[n].rec = json_pack("{s:s, s:O, s:s, s:o, s:s, s:s, s:f, s:s, s:o}", "_type", "bead",
				     "bead_id", json_object_get(b, "id"), "title", title,
				     "priority", json_is_integer(v) ? json_sprintf("P%lld", (long long)json_integer_value(v)) :
				     json_string(""), "status", status, "assignee", assignee,
				     "relevance_score", 0.0, "snippet", snip,
				     "path", json_sprintf(".beads/issues.jsonl:%zu", lineno));
		free(title);
		free(status);
		free(assignee);
		free(desc);
		free(snip);
		n++;
skip:
		json_decref(b);
	}
	free(line);
	fclose(fp);
	rank_docs("beads search", f.values[0], mode, d, n);
	qsort(d, n, sizeof(*d), cmp_doc_score);
	for (i = 0; i < n && (long)shown < limit; i++) {
		if (d[i].score <= 0)
			continue;
		json_object_set_new(d[i].rec, "relevance_score", json_real(d[i].score));
		json_object_del(d[i].rec, "path");
		json_array_append(out, d[i].rec);
		shown++;
	}
	docs_free(d, n);
	if (!shown)
		fprintf(stderr, "%s: beads search: no bead matches '%s'\n", progname, f.values[0]);
	return emit_records(out, want_json(f.set[0]), shown ? 0 : 1);
}

/* An archive source of .bobbin/config.toml. */
struct source {
	const char *name, *path, *schema, *name_field;	/* borrowed from the config */
};

/* "YYYY-MM-DD" at s (a date field, or in a path as YYYY/MM/DD or YYYY-MM-DD) into out[11]. */
static int date_at(const char *s, char out[11])
{
	if (isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
	    isdigit((unsigned char)s[3]) && (s[4] == '-' || s[4] == '/') && isdigit((unsigned char)s[5]) &&
	    isdigit((unsigned char)s[6]) && s[7] == s[4] && isdigit((unsigned char)s[8]) && isdigit((unsigned char)s[9])) {
		snprintf(out, 11, "%.4s-%.2s-%.2s", s, s + 5, s + 8);
		return 1;
	}
	return 0;
}

static void date_of(const char *field, const char *path, char out[11])
{
	out[0] = '\0';
	if (field && date_at(field, out))
		return;
	for (; path && *path; path++)
		if (date_at(path, out))
			return;
}

static void check_date(const char *sub, const char *opt, const char *v)
{
	char d[11];
	int y, m, dd;

	if (v && (strlen(v) != 10 || !date_at(v, d) || v[4] != '-' || sscanf(v, "%d-%d-%d", &y, &m, &dd) != 3 ||
		  m < 1 || m > 12 || dd < 1 || dd > 31))
		usage_fail("%s: %s must be a date, YYYY-MM-DD, not '%s'", sub, opt, v);
}

/* Add a record of source src to the docs. */
static void add_record(struct doc **d, size_t *n, size_t *alloc, const struct source *src, const char *rel,
		       json_t *meta, const char *body)
{
	const char *id = json_string_value(json_object_get(meta, "id"));
	const char *nf = src->name_field ? json_string_value(json_object_get(meta, src->name_field)) : NULL;
	const char *df = json_string_value(json_object_get(meta, "timestamp"));
	char *name, *content = cut_text(body, 500), epoch_day[11];
	json_t *ts = json_object_get(meta, "timestamp");
	struct doc *x;

	/* a JSONL timestamp in seconds (or milliseconds) since the epoch */
	if (json_is_number(ts) && json_number_value(ts) > 0 && json_number_value(ts) < 1e15) {
		double t = json_number_value(ts);
		time_t secs = (time_t)(t > 1e11 ? t / 1000 : t);
		struct tm tm;
		if (gmtime_r(&secs, &tm) && strftime(epoch_day, sizeof(epoch_day), "%Y-%m-%d", &tm))
			df = epoch_day;
	}

	if (!df)
		df = json_string_value(json_object_get(meta, "date"));
	name = nf ? xasprintf("%s/%s", nf, id ? id : rel) : xstrdup(id ? id : rel);
	ALLOC_GROW(*d, *n + 1, *alloc);
	x = &(*d)[(*n)++];
	memset(x, 0, sizeof(*x));
	date_of(df, rel, x->date);
	x->text = xasprintf("%s\n%s", name, body);
	x->rec = json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:s, s:s}", "_type", "archive_record", "id", id, "source",
			   src->name, "name", name, "date", x->date[0] ? x->date : NULL, "path", rel, "content", content);
	free(name);
	free(content);
}

/* Markdown: "---" frontmatter of "key: value" lines (a nested block's keys flattened), then the body. */
static void read_markdown(struct doc **d, size_t *n, size_t *alloc, const struct source *src, const char *rel,
			  const char *text)
{
	json_t *meta = json_object();
	const char *p = text, *body = text;

	if (!strncmp(p, "---\n", 4) || !strncmp(p, "---\r\n", 5)) {
		p += p[3] == '\r' ? 5 : 4;
		while (*p) {
			const char *e = strchr(p, '\n'), *colon;
			size_t l = e ? (size_t)(e - p) : strlen(p);
			if (l && p[l - 1] == '\r')	/* CRLF lines */
				l--;
			if (l == 3 && !strncmp(p, "---", 3)) {
				body = e ? e + 1 : p + l;
				break;
			}
			colon = memchr(p, ':', l);
			if (colon) {
				const char *k = p, *v = colon + 1;
				while (k < colon && (*k == ' ' || *k == '\t'))
					k++;
				while (v < p + l && (*v == ' ' || *v == '\t'))
					v++;
				if (colon > k && v < p + l) {
					char *key = xstrndup(k, (size_t)(colon - k)), *val = xstrndup(v, (size_t)(p + l - v));
					size_t vl = strlen(val);
					if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
						memmove(val, val + 1, vl - 2);
						val[vl - 2] = '\0';
					}
					json_t *jv = json_string(val);	/* NULL: not UTF-8 */
					json_object_set_new(meta, key, jv ? jv : json_null());
					free(key);
					free(val);
				}
			}
			p = e ? e + 1 : p + l;
		}
	}
	if (src->schema && (!json_string_value(json_object_get(meta, "schema")) ||
			    strcmp(json_string_value(json_object_get(meta, "schema")), src->schema))) {
		json_decref(meta);
		return;	/* another kind of record */
	}
	body += strspn(body, "\n");
	add_record(d, n, alloc, src, rel, meta, body);
	json_decref(meta);
}

/* JSONL: a record a line; its text from text, content, body or message. */
static void read_jsonl(struct doc **d, size_t *n, size_t *alloc, const struct source *src, const char *rel,
		       const char *text)
{
	static const char *const keys[] = { "text", "content", "body", "message" };
	const char *p = text;
	size_t lineno = 0;

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		json_t *r;
		lineno++;
		if (l) {
			r = json_loadb(p, l, 0, NULL);
			if (!json_is_object(r)) {
				fprintf(stderr, "%s: %s/%s:%zu: not a JSON object, left out\n", progname, src->path, rel,
					lineno);
			} else {
				const char *body = NULL;
				char *at = xasprintf("%s:%zu", rel, lineno);
				for (size_t k = 0; k < ARRAY_SIZE(keys) && !body; k++)
					body = json_string_value(json_object_get(r, keys[k]));
				if (json_is_integer(json_object_get(r, "id")))
					json_object_set_new(r, "id", json_sprintf("%lld", (long long)json_integer_value(json_object_get(r, "id"))));
				add_record(d, n, alloc, src, at, r, body ? body : "");
				free(at);
			}
			json_decref(r);
		}
		p = e ? e + 1 : p + l;
	}
}

/* Every .md and .jsonl file under dir/rel, in path order. */
static void read_source_dir(struct doc **d, size_t *n, size_t *alloc, const struct source *src, const char *rel)
{
	char *dir = *rel ? xasprintf("%s/%s", src->path, rel) : xstrdup(src->path);
	DIR *dh = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, al = 0, i;

	if (!dh)
		fail("archive: cannot read '%s' (source '%s'): %s", dir, src->name, strerror(errno));
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		ALLOC_GROW(names, nr + 1, al);
		names[nr++] = xstrdup(de->d_name);
	}
	closedir(dh);
	qsort(names, nr, sizeof(*names), cmp_str);
	for (i = 0; i < nr; i++) {
		char *r = *rel ? xasprintf("%s/%s", rel, names[i]) : xstrdup(names[i]);
		char *full = xasprintf("%s/%s", src->path, r), *text = NULL;
		size_t len = 0, nl = strlen(names[i]);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			read_source_dir(d, n, alloc, src, r);
		} else if ((nl > 3 && !strcmp(names[i] + nl - 3, ".md")) ||
			   (nl > 6 && !strcmp(names[i] + nl - 6, ".jsonl"))) {
			if (read_file(full, &text, &len) < 0)
				fail("archive: cannot read '%s': %s", full, strerror(errno));
			if (memchr(text, '\0', len))
				fprintf(stderr, "%s: %s: binary, left out\n", progname, full);
			else if (names[i][nl - 1] == 'd')
				read_markdown(d, n, alloc, src, r, text);
			else
				read_jsonl(d, n, alloc, src, r, text);
			free(text);
		}
		free(full);
		free(r);
		free(names[i]);
	}
	free(names);
	free(dir);
}

/* The archive sources of .bobbin/config.toml (the config JSON in *cfg, to free). */
static struct source *archive_sources(const char *sub, json_t **cfg, size_t *nr)
{
	char *err = NULL, *text;
	json_t *arch, *srcs, *e;
	struct source *s;
	size_t i;
	json_error_t je;

	*nr = 0;
	*cfg = NULL;
	if (access(".bobbin/config.toml", F_OK) < 0)
		fail("%s: no archive sources configured ([[archive.sources]] in .bobbin/config.toml)", sub);
	text = toml_file_json(".bobbin/config.toml", &err);
	if (!text)
		fail("%s: .bobbin/config.toml: %s", sub, err ? err : "cannot read");
	*cfg = json_loads(text, 0, &je);
	free(text);
	arch = json_object_get(*cfg, "archive");
	srcs = json_object_get(arch, "sources");
	if (!json_is_true(json_object_get(arch, "enabled")) || !json_array_size(srcs))
		fail("%s: no archive sources configured ([archive] enabled = true and [[archive.sources]] in "
		     ".bobbin/config.toml)", sub);
	s = xcalloc(json_array_size(srcs), sizeof(*s));
	json_array_foreach(srcs, i, e) {
		s[i].name = json_string_value(json_object_get(e, "name"));
		s[i].path = json_string_value(json_object_get(e, "path"));
		s[i].schema = json_string_value(json_object_get(e, "schema"));
		s[i].name_field = json_string_value(json_object_get(e, "name_field"));
		if (!s[i].name || !*s[i].name || !s[i].path || !*s[i].path)
			fail("%s: .bobbin/config.toml: archive source %zu needs a name and a path", sub, i + 1);
	}
	*nr = json_array_size(srcs);
	return s;
}

static int cmd_archive(int argc, char **argv)
{
	static const char *const names[] = { "query", "source", "filter", "after", "before", "limit", "mode", NULL };
	static const char *const bools[] = { "json", NULL };
	int recent = argc && !strcmp(argv[0], "recent");
	const char *sub = recent ? "archive recent" : "archive search", *mode;
	struct flags f = { .sub = sub, .names = names, .bools = bools };
	struct source *src;
	struct doc *d = NULL;
	size_t nsrc, n = 0, alloc = 0, i, shown = 0;
	long limit;
	json_t *cfg, *out = json_array();

	if (!argc || (strcmp(argv[0], "search") && strcmp(argv[0], "recent")))
		usage_fail("archive: expected search or recent");
	parse_options(&f, argc - 1, argv + 1, NULL);
	if (!recent && (!given(f.values[0]) || !has_words(f.values[0])))
		usage_fail("archive search: --query needs words to search for");
	if (recent && !f.values[3])
		usage_fail("archive recent: --after is required (YYYY-MM-DD)");
	check_date(sub, "--after", f.values[3]);
	check_date(sub, "--before", f.values[4]);
	limit = atol(check_limit(sub, f.values[5] ? f.values[5] : recent ? "20" : "10", 100));
	mode = mode_arg(sub, f.values[6]);
	src = archive_sources(sub, &cfg, &nsrc);
	if (given(f.values[1])) {
		for (i = 0; i < nsrc; i++)
			if (!strcmp(src[i].name, f.values[1]))
				break;
		if (i == nsrc)
			fail("%s: no archive source '%s' in .bobbin/config.toml", sub, f.values[1]);
	}
	for (i = 0; i < nsrc; i++) {
		size_t first = n, j, k = first;
		if (given(f.values[1]) && strcmp(src[i].name, f.values[1]))
			continue;
		read_source_dir(&d, &n, &alloc, &src[i], "");
		/* the filters, before ranking */
		for (j = first; j < n; j++) {
			const char *name = json_string_value(json_object_get(d[j].rec, "name"));
			size_t fl = f.values[2] ? strlen(f.values[2]) : 0;
			int keep = (!f.values[3] || (d[j].date[0] && strcmp(d[j].date, f.values[3]) >= 0)) &&
				   (!f.values[4] || (d[j].date[0] && strcmp(d[j].date, f.values[4]) <= 0)) &&
				   (!given(f.values[2]) || (!strncmp(name, f.values[2], fl) && name[fl] == '/'));
			if (keep) {
				d[k++] = d[j];
			} else {
				free(d[j].text);
				json_decref(d[j].rec);
			}
		}
		n = k;
	}
	if (recent) {
		qsort(d, n, sizeof(*d), cmp_doc_recent);
	} else {
		rank_docs(sub, f.values[0], mode, d, n);
		qsort(d, n, sizeof(*d), cmp_doc_score);
	}
	for (i = 0; i < n && (long)shown < limit; i++) {
		if (!recent && d[i].score <= 0)
			continue;
		if (!recent)
			json_object_set_new(d[i].rec, "score", json_real(d[i].score));
		json_array_append(out, d[i].rec);
		shown++;
	}
	docs_free(d, n);
	free(src);
	json_decref(cfg);
	if (!shown)
		fprintf(stderr, "%s: %s: no archive record%s\n", progname, sub,
			recent ? " after that date" : " matches");
	return emit_records(out, want_json(f.set[0]), shown ? 0 : 1);
}

/* ---- feedback and bundle (bobbin's feedback tools) ---------------------------------- */

/* The index, opened to read or (with its feedback tables) to write; fails without one. */
static struct ci_index *feedback_open(const char *sub, int write)
{
	json_t *status = index_status(sub);
	char *path = index_default_path(json_string_value(json_object_get(status, "root")));
	struct ci_index *ix = NULL;
	char *err = NULL;

	if (index_open(&ix, path, write ? 0 : INDEX_READONLY))
		fail("%s: cannot open the index '%s'", sub, path);
	if (write && sqlite3_exec(index_db(ix), CI_FEEDBACK_TABLES, NULL, NULL, &err) != SQLITE_OK)
		fail("%s: cannot write the index '%s': %s", sub, path, err ? err : "");
	free(path);
	json_decref(status);
	return ix;
}

/* Does the index have table name (an index no feedback was written to has none)? */
static int has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int r = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		r = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return r;
}

/* Now, UTC, as 2026-05-01T12:00:00Z ($SOURCE_DATE_EPOCH when set, for reproducible output). */
static void now_iso(char out[21])
{
	time_t t = (time_t)env_long("SOURCE_DATE_EPOCH", 0, LONG_MAX, (long)time(NULL), ENV_DIE);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Who is giving feedback: --agent, else $GT_ROLE, $BD_ACTOR, else unknown (as bobbin). */
static const char *agent_of(const char *given)
{
	const char *e;

	if (given && *given)
		return given;
	if ((e = getenv("GT_ROLE")) && *e)
		return e;
	if ((e = getenv("BD_ACTOR")) && *e)
		return e;
	return "unknown";
}

/* The rows of st as records of type type, columns by name; a column "feedback_ids" is JSON. */
static json_t *rows_of(sqlite3_stmt *st, const char *sub, const char *type)
{
	json_t *recs = json_array();
	int rc, i;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *r = json_pack("{s:s}", "_type", type);
		for (i = 0; i < sqlite3_column_count(st); i++) {
			const char *name = sqlite3_column_name(st, i);
			json_t *v;
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_INTEGER: v = json_integer(sqlite3_column_int64(st, i)); break;
			case SQLITE_FLOAT: v = json_real(sqlite3_column_double(st, i)); break;
			case SQLITE_NULL: v = json_null(); break;
			default:
				if (!strcmp(name, "feedback_ids") || !strcmp(name, "files"))
					v = json_loads((const char *)sqlite3_column_text(st, i), 0, NULL);
				else
					v = json_string((const char *)sqlite3_column_text(st, i));
				if (!v)
					v = json_null();
			}
			json_object_set_new(r, name, v);
		}
		json_array_append_new(recs, r);
	}
	if (rc != SQLITE_DONE)
		fail("%s: %s", sub, sqlite3_errmsg(sqlite3_db_handle(st)));
	sqlite3_finalize(st);
	return recs;
}

static sqlite3_stmt *prepare_or_fail(sqlite3 *db, const char *sub, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail("%s: %s", sub, sqlite3_errmsg(db));
	return st;
}

static void step_done_or_fail(sqlite3_stmt *st, const char *sub)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		fail("%s: %s", sub, sqlite3_errmsg(sqlite3_db_handle(st)));
	sqlite3_finalize(st);
}

/* A string value, or NULL when not given or empty. */
static const char *given(const char *v)
{
	return v && *v ? v : NULL;
}

/* Write the row just inserted (sql selects it by ?1, its id) as a record of type, close ix, exit 0. */
static int emit_inserted(struct ci_index *ix, const char *sub, const char *sql, const char *type, int json)
{
	sqlite3_stmt *st = prepare_or_fail(index_db(ix), sub, sql);
	json_t *recs;

	sqlite3_bind_int64(st, 1, sqlite3_last_insert_rowid(index_db(ix)));
	recs = rows_of(st, sub, type);
	index_close(ix);
	return emit_records(recs, want_json(json), 0);
}

static int feedback_submit(int argc, char **argv)
{
	static const char *const names[] = { "injection-id", "rating", "agent", "reason", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const ratings[] = { "useful", "noise", "harmful" };
	struct flags f = { .sub = "feedback submit", .names = names, .bools = bools };
	const char *id, *rating;
	struct ci_index *ix;
	sqlite3_stmt *st;
	char ts[21];
	size_t i;

	parse_options(&f, argc, argv, NULL);
	id = f.values[0] ? f.values[0] + strspn(f.values[0], " \t\n") : "";
	if (!*id)
		usage_fail("feedback submit: injection_id required (from [injection_id: inj-xxx] in context injection output)");
	rating = f.values[1] ? f.values[1] : "";
	for (i = 0; i < ARRAY_SIZE(ratings); i++)
		if (!strcmp(rating, ratings[i]))
			break;
	if (i == ARRAY_SIZE(ratings))
		usage_fail("feedback submit: rating must be one of: useful, noise, harmful");
	if (f.values[3] && strlen(f.values[3]) > 1000)
		usage_fail("feedback submit: reason too long (max 1000 chars)");
	ix = feedback_open("feedback submit", 1);
	now_iso(ts);
	st = prepare_or_fail(index_db(ix), "feedback submit",
			     "INSERT INTO feedback(injection_id, agent, rating, reason, timestamp) VALUES (?1, ?2, ?3, ?4, ?5)");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, agent_of(f.values[2]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, rating, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, f.values[3] ? f.values[3] : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ts, -1, SQLITE_STATIC);
	step_done_or_fail(st, "feedback submit");
	return emit_inserted(ix, "feedback submit", "SELECT id, injection_id, rating, agent, reason, timestamp "
			     "FROM feedback WHERE id = ?1", "feedback", f.set[0]);
}

static int feedback_list(int argc, char **argv)
{
	static const char *const names[] = { "rating", "agent", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "feedback list", .names = names, .bools = bools };
	struct ci_index *ix;
	sqlite3_stmt *st;
	json_t *recs;

	parse_options(&f, argc, argv, NULL);
	check_limit("feedback list", f.values[2] ? f.values[2] : "20", 50);
	ix = feedback_open("feedback list", 0);
	if (!has_table(index_db(ix), "feedback")) {
		index_close(ix);
		return emit_records(json_array(), want_json(f.set[0]), 0);
	}
	st = prepare_or_fail(index_db(ix), "feedback list", "SELECT id, injection_id, rating, agent, reason, timestamp "
			     "FROM feedback WHERE (?1 IS NULL OR rating = ?1) AND (?2 IS NULL OR agent = ?2) "
			     "ORDER BY id DESC LIMIT ?3");
	sqlite3_bind_text(st, 1, given(f.values[0]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, given(f.values[1]), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f.values[2] ? atol(f.values[2]) : 20);
	recs = rows_of(st, "feedback list", "feedback");
	index_close(ix);
	return emit_records(recs, want_json(f.set[0]), 0);
}

static long count_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = prepare_or_fail(db, "feedback stats", sql);
	long n = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : 0;

	sqlite3_finalize(st);
	return n;
}

static int feedback_stats(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "feedback stats", .bools = bools };
	struct ci_index *ix;
	sqlite3 *db;
	long inj = 0, fb = 0, rated = 0, useful = 0, noise = 0, harmful = 0, lin = 0, acted = 0;
	json_t *rec;

	parse_options(&f, argc, argv, NULL);
	ix = feedback_open("feedback stats", 0);
	db = index_db(ix);
	if (has_table(db, "feedback")) {
		inj = count_of(db, "SELECT count(*) FROM injections");
		fb = count_of(db, "SELECT count(*) FROM feedback");
		rated = count_of(db, "SELECT count(DISTINCT injection_id) FROM feedback "
				 "WHERE injection_id IN (SELECT id FROM injections)");
		useful = count_of(db, "SELECT count(*) FROM feedback WHERE rating = 'useful'");
		noise = count_of(db, "SELECT count(*) FROM feedback WHERE rating = 'noise'");
		harmful = count_of(db, "SELECT count(*) FROM feedback WHERE rating = 'harmful'");
		lin = count_of(db, "SELECT count(*) FROM feedback_lineage");
		acted = count_of(db, "SELECT count(DISTINCT j.value) FROM feedback_lineage l, json_each(l.feedback_ids) j "
				 "WHERE j.value IN (SELECT id FROM feedback)");
	}
	index_close(ix);
	/* coverage: the share of injections rated at least once */
	rec = json_pack("{s:s, s:i, s:i, s:o, s:i, s:i, s:i, s:i, s:i, s:i}", "_type", "feedback_stats",
			"total_injections", (json_int_t)inj, "total_feedback", (json_int_t)fb,
			"coverage", inj ? json_real(floor((double)rated / (double)inj * 1000 + 0.5) / 1000) : json_null(),
			"useful", (json_int_t)useful, "noise", (json_int_t)noise, "harmful", (json_int_t)harmful,
			"lineage_records", (json_int_t)lin, "actioned", (json_int_t)acted,
			"unactioned", (json_int_t)(fb - acted));
	return emit_records(json_pack("[o]", rec), want_json(f.set[0]), 0);
}

static int lineage_store(int argc, char **argv)
{
	static const char *const names[] = { "feedback-ids", "action-type", "description", "bead", "commit-hash",
					     "agent", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const actions[] = { "code_fix", "config_change", "tag_effect", "access_rule",
					       "exclusion_rule" };
	struct flags f = { .sub = "feedback lineage store", .names = names, .bools = bools };
	const char *s = NULL;
	json_t *ids = json_array(), *recs;
	struct ci_index *ix;
	sqlite3_stmt *st;
	char ts[21], *idtext;
	size_t i;

	parse_options(&f, argc, argv, NULL);
	for (s = f.values[0] ? f.values[0] : ""; *s; ) {
		char *end;
		long id;
		errno = 0;
		id = strtol(s, &end, 10);
		if (errno || end == s || id < 1 || (*end && *end != ','))
			usage_fail("feedback lineage store: feedback_ids must be record ids (whole numbers), not '%s'",
			     f.values[0]);
		json_array_append_new(ids, json_integer(id));
		s = *end ? end + 1 : end;
	}
	if (!json_array_size(ids))
		usage_fail("feedback lineage store: feedback_ids must not be empty");
	for (i = 0; i < ARRAY_SIZE(actions); i++)
		if (f.values[1] && !strcmp(f.values[1], actions[i]))
			break;
	if (i == ARRAY_SIZE(actions))
		usage_fail("feedback lineage store: action_type must be one of: code_fix, config_change, tag_effect, "
		     "access_rule, exclusion_rule");
	if (!given(f.values[2]))
		usage_fail("feedback lineage store: description required (what was done)");
	ix = feedback_open("feedback lineage store", 1);
	st = prepare_or_fail(index_db(ix), "feedback lineage store", "SELECT 1 FROM feedback WHERE id = ?1");
	json_array_foreach(ids, i, recs) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, json_integer_value(recs));
		if (sqlite3_step(st) != SQLITE_ROW)
			fail("feedback lineage store: no feedback record %lld (see feedback list)",
			     (long long)json_integer_value(recs));
	}
	sqlite3_finalize(st);
	now_iso(ts);
	idtext = json_dumps(ids, JSON_COMPACT);
	st = prepare_or_fail(index_db(ix), "feedback lineage store",
			     "INSERT INTO feedback_lineage(feedback_ids, action_type, bead, commit_hash, description, "
			     "agent, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	sqlite3_bind_text(st, 1, idtext, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, f.values[1], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, given(f.values[3]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, given(f.values[4]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, f.values[2], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, agent_of(f.values[5]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, ts, -1, SQLITE_STATIC);
	step_done_or_fail(st, "feedback lineage store");
	free(idtext);
	json_decref(ids);
	return emit_inserted(ix, "feedback lineage store", "SELECT id, feedback_ids, action_type, bead, commit_hash, "
			     "description, agent, timestamp FROM feedback_lineage WHERE id = ?1", "lineage", f.set[0]);
}

static int lineage_list(int argc, char **argv)
{
	static const char *const names[] = { "feedback-id", "bead", "commit-hash", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "feedback lineage list", .names = names, .bools = bools };
	struct ci_index *ix;
	sqlite3_stmt *st;
	json_t *recs;
	long fid = 0;

	parse_options(&f, argc, argv, NULL);
	check_limit("feedback lineage list", f.values[3] ? f.values[3] : "20", 50);
	if (f.values[0]) {
		char *end;
		fid = strtol(f.values[0], &end, 10);
		if (*end || end == f.values[0] || fid < 1)
			usage_fail("feedback lineage list: --feedback-id must be a record id, not '%s'", f.values[0]);
	}
	ix = feedback_open("feedback lineage list", 0);
	if (!has_table(index_db(ix), "feedback_lineage")) {
		index_close(ix);
		return emit_records(json_array(), want_json(f.set[0]), 0);
	}
	st = prepare_or_fail(index_db(ix), "feedback lineage list", "SELECT id, feedback_ids, action_type, bead, "
			     "commit_hash, description, agent, timestamp FROM feedback_lineage l "
			     "WHERE (?1 = 0 OR EXISTS (SELECT 1 FROM json_each(l.feedback_ids) j WHERE j.value = ?1)) "
			     "AND (?2 IS NULL OR bead = ?2) AND (?3 IS NULL OR commit_hash = ?3) ORDER BY id DESC LIMIT ?4");
	sqlite3_bind_int64(st, 1, fid);
	sqlite3_bind_text(st, 2, given(f.values[1]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, given(f.values[2]), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, f.values[3] ? atol(f.values[3]) : 20);
	recs = rows_of(st, "feedback lineage list", "lineage");
	index_close(ix);
	return emit_records(recs, want_json(f.set[0]), 0);
}

static int cmd_feedback(int argc, char **argv)
{
	const char *what = argc ? argv[0] : "";

	if (!strcmp(what, "submit"))
		return feedback_submit(argc - 1, argv + 1);
	if (!strcmp(what, "list"))
		return feedback_list(argc - 1, argv + 1);
	if (!strcmp(what, "stats"))
		return feedback_stats(argc - 1, argv + 1);
	if (!strcmp(what, "lineage") && argc > 1 && !strcmp(argv[1], "store"))
		return lineage_store(argc - 2, argv + 2);
	if (!strcmp(what, "lineage") && argc > 1 && !strcmp(argv[1], "list"))
		return lineage_list(argc - 2, argv + 2);
	usage_fail("feedback: expected submit, list, stats, lineage store or lineage list%s%s%s",
	     *what ? ", not '" : "", what, *what ? "'" : "");
}

/*
 * bundle: ci-rank's context bundle, recorded in the index as an injection
 * (inj-<n>) that feedback can name, and its record last.
 */
static int cmd_bundle(int argc, char **argv)
{
	static const char *const names[] = { "query", "budget", "depth", "max-coupled", "threshold", "limit", "agent",
					     NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const opts[] = { NULL, "--budget", "--depth", "--max-coupled", "--threshold", "--limit" };
	struct flags f = { .sub = "bundle", .names = names, .bools = bools };
	char *av[16], ts[21], *files_text, *id;
	json_t *recs, *r, *files = json_array();
	struct ci_index *ix;
	sqlite3_stmt *st;
	int n = 1, rc, k;
	size_t i, j;

	parse_options(&f, argc, argv, "query");
	if (!given(f.values[0]))
		usage_fail("bundle: --query is required");
	for (k = 1; k <= 5; k++)
		if (f.values[k]) {
			av[n++] = (char *)opts[k];
			av[n++] = (char *)f.values[k];
		}
	av[n++] = "context";
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	recs = records_of("ci-rank", av, &rc);
	if (rc) {	/* nothing to inject, or ci-rank said why */
		json_decref(files);
		return emit_records(recs, want_json(f.set[0]), rc);
	}
	json_array_foreach(recs, i, r) {
		const char *p = json_string_value(json_object_get(r, "path"));
		json_t *e;
		if (!p)
			continue;
		json_array_foreach(files, j, e)
			if (!strcmp(json_string_value(e), p))
				break;
		if (j == json_array_size(files))
			json_array_append_new(files, json_string(p));
	}
	ix = feedback_open("bundle", 1);
	now_iso(ts);
	files_text = json_dumps(files, JSON_COMPACT);
	/*
	 * The injection is recorded only once its records are out: its id is
	 * taken and its row written in a transaction committed after standard
	 * output is flushed and closed without error, and rolled back otherwise
	 * (a reader that went away: SIGPIPE ends the process before the commit).
	 */
	if (sqlite3_exec(index_db(ix), "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		fail("bundle: cannot write the index: %s", sqlite3_errmsg(index_db(ix)));
	st = prepare_or_fail(index_db(ix), "bundle", "SELECT coalesce(max(CAST(substr(id, 5) AS INTEGER)), 0) + 1 "
			     "FROM injections WHERE id LIKE 'inj-%'");
	id = xasprintf("inj-%lld", sqlite3_step(st) == SQLITE_ROW ? (long long)sqlite3_column_int64(st, 0) : 1LL);
	sqlite3_finalize(st);
	st = prepare_or_fail(index_db(ix), "bundle", "INSERT INTO injections(id, query, agent, files, timestamp) "
			     "VALUES (?1, ?2, ?3, ?4, ?5)");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, f.values[0], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, agent_of(f.values[6]), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, files_text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ts, -1, SQLITE_STATIC);
	step_done_or_fail(st, "bundle");
	json_array_append_new(recs, json_pack("{s:s, s:s, s:s, s:o}", "_type", "injection", "injection_id", id,
					      "query", f.values[0], "files", files));
	rc = emit_records(recs, want_json(f.set[0]), 0);
	if (rc == 0 && sqlite3_exec(index_db(ix), "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		error("bundle: %s was given out but cannot be recorded: %s", id, sqlite3_errmsg(index_db(ix)));
		rc = 1;
	}
	if (rc != 0)
		sqlite3_exec(index_db(ix), "ROLLBACK", NULL, NULL, NULL);
	index_close(ix);
	free(files_text);
	free(id);
	return rc;
}

/* ---- main ---------------------------------------------------------------------------- */

/* The subcommands ci answers itself (the codebase-context CLI). */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subcommands[] = {
	{ "search", cmd_search },
	{ "status", cmd_status },
	{ "reindex", cmd_reindex },
	{ "refs", cmd_refs },
	{ "grep-chunks", cmd_grep_chunks },
	{ "feedback", cmd_feedback },
	{ "bundle", cmd_bundle },
	{ "beads", cmd_beads },
	{ "archive", cmd_archive },
	{ "cycles", cmd_cycles },
	{ "metadata", cmd_metadata },
	{ "memory", cmd_memory },
	{ "context", cmd_context },
	{ "patterns", cmd_patterns },
	{ "style-guide", cmd_style_guide },
};

int main(int argc, char **argv)
{
	const char *sub;
	size_t i;

	util_init(argv[0]);
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		fputs(usage_text, stdout);
		return close_stdout(EXIT_OK);
	}
	if (!strcmp(sub, "--version"))
		return print_version("ci");
	if (!strcmp(sub, "--list-options") && argc == 2) {
		fputs("--help\n--version\n", stdout);
		return close_stdout(EXIT_OK);
	}
	if (sub[0] == '-')
		usage_error(usage_text, "unknown option '%s'", sub);
	for (i = 0; i < ARRAY_SIZE(passthrough); i++)
		if (!strcmp(sub, passthrough[i].name))
			run_exec(passthrough[i].prog, argv + 1);
	/* the commands below read their children's records: NDJSON, whatever the user's taste */
	unsetenv("CI_FORMAT");
	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(sub, subcommands[i].name))
			return subcommands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "%s: unknown subcommand '%s'\n", progname, sub);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}
