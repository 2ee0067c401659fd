/*
 * ci-grep: exact and regex search over a repository, writing match records
 * (NDJSON) or path:line:col:text lines.
 *
 * The command: its options, turned into a query of the grep engine
 * (libcommon/search/search.h), run over the paths given.  What is here and
 * not there: rg's names for -t, the index's server asked through the fork
 * server (libcommon/index/fork-server.c), and a shard set handed to libcommon/fleet.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "fleet/prune.h"
#include "fleet/serve.h"
#include "index/fork-server.h"
#include "core/human.h"
#include "parse/lang.h"
#include "index/index.h"
#include "search/search.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>

static const char usage_text[] =
	"usage: ci-grep [options] <pattern> [<path>...]\n"
	"   or: ci-grep --files [options] [<path>...]\n"
	"   or: ci-grep --type-list\n"
	"\n"
	"Write the lines of the files under the current directory (or the paths given,\n"
	"in a repository or not) that match <pattern>, a PCRE2 regular expression, with\n"
	"paths relative to the current directory (or as given), as rg does.  With an\n"
	"index (ci-index build), only the files that can match are read.  As rg, hidden\n"
	"files and what .gitignore, .ignore and .rgignore list are left out; so are\n"
	"vendored trees, generated files and lock files.  NDJSON match records unless\n"
	"stdout is a terminal.\n"
	"\n"
	"  -e, --regexp <pattern>      the pattern (for one starting with '-')\n"
	"  -F, --fixed-strings         <pattern> is a literal string\n"
	"  -i, --ignore-case           match case-insensitively\n"
	"  -S, --smart-case            match case-insensitively unless <pattern> has an\n"
	"                              uppercase letter\n"
	"  -s, --case-sensitive        match case-sensitively (the default; the last of\n"
	"                              -i, -S and -s wins)\n"
	"  -w, --word-regexp           match whole words only\n"
	"  -x, --line-regexp           match whole lines only\n"
	"  -v, --invert-match          write the lines that do not match\n"
	"  -n, --line-number           accepted, as rg does: line numbers are always written\n"
	"  -A, --after-context <n>     show <n> lines after each matching line\n"
	"  -B, --before-context <n>    show <n> lines before each matching line\n"
	"  -C, --context <n>           show <n> lines before and after\n"
	"  -g, --glob <glob>           search only paths matching <glob>; '!<glob>' leaves\n"
	"                              them out (repeatable)\n"
	"  -t, --type <lang>           search only files in <lang>: c, python, py, ... (repeatable;\n"
	"                              --type-list lists them)\n"
	"  -m, --max-count <n>         stop reading a file after <n> matching lines\n"
	"  -o, --only-matching         write each match, not its line (context lines too,\n"
	"                              with -A, -B or -C, as rg)\n"
	"  -r, --replace <text>        write each match replaced by <text>: $1, ${name} are\n"
	"                              the pattern's groups, $0 the match, $$ a '$'\n"
	"  -q, --quiet                 write nothing; exit 0 at the first match\n"
	"  -l, --files-with-matches    write only the paths of files with a match\n"
	"  -L, --files-without-match   write only the paths of files without a match\n"
	"      --files                 write the paths of the files a search would read\n"
	"      --type-list             list the names -t accepts and exit\n"
	"  -c, --count                 write the number of matching lines of each file\n"
	"      --json                  write NDJSON records (the default unless on a terminal)\n"
	"      --color <when>          colour paths, line numbers and matches as rg: never,\n"
	"                              auto (on a terminal, the default) or always (--colour)\n"
	"      --no-json               write path:line:col:text lines (the default on a terminal;\n"
	"                              CI_FORMAT=text makes it the default everywhere, as\n"
	"                              `ci-grep -l --no-json x | xargs ...` wants)\n"
	"      --index <db>            use the index <db> (default: $CI_INDEX, else\n"
	"                              <root>/.ci-index/index.db when it exists)\n"
	"      --shards <set>          every index of a shard set (a directory or a\n"
	"                              manifest), merged by repository\n"
	"      --no-index              scan the files even if there is an index\n"
	"      --check <what>          what an indexed search checks for changes since the\n"
	"                              index: files (every directory and file: the results of\n"
	"                              a scan, the default), dirs (the directories only:\n"
	"                              misses files rewritten in place), none (nothing)\n"
	"      --trust-index           the same as --check none\n"
	"      --max-filesize <bytes>  skip files larger than this (default 1048576; 0: no limit)\n"
	"  -a, --text                  search binary files as text\n"
	"      --include-vendored      also search vendored and generated files\n"
	"      --hidden                also search hidden files and directories (names\n"
	"                              starting with '.'; .git is never searched)\n"
	"      --no-ignore             do not honour .gitignore, .git/info/exclude, .ignore\n"
	"                              and .rgignore\n"
	"  -u, --unrestricted          -u: --no-ignore; -uu: and --hidden; -uuu: and binary\n"
	"                              files found by the walk are searched too\n"
	"      --stats                 report on stderr what was read and how long it took\n"
	"  -j, --threads <n>           search with <n> threads (default: the number of CPUs)\n"
	"  -h, --help                  show this help and exit\n"
	"      --version               show the version and exit\n";

enum {
	OPT_JSON = 256, OPT_NO_JSON, OPT_INDEX, OPT_NO_INDEX, OPT_MAX_SIZE, OPT_VENDORED,
	OPT_NO_IGNORE, OPT_STATS, OPT_TRUST_INDEX, OPT_CHECK, OPT_FILES, OPT_TYPE_LIST,
	OPT_HIDDEN, OPT_COLOR,
};

static const struct option long_options[] = {
	{ "regexp", required_argument, NULL, 'e' },
	{ "fixed-strings", no_argument, NULL, 'F' },
	{ "ignore-case", no_argument, NULL, 'i' },
	{ "line-number", no_argument, NULL, 'n' },
	{ "word-regexp", no_argument, NULL, 'w' },
	{ "line-regexp", no_argument, NULL, 'x' },
	{ "smart-case", no_argument, NULL, 'S' },
	{ "case-sensitive", no_argument, NULL, 's' },
	{ "replace", required_argument, NULL, 'r' },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "colour", required_argument, NULL, OPT_COLOR },
	{ "hidden", no_argument, NULL, OPT_HIDDEN },
	{ "unrestricted", no_argument, NULL, 'u' },
	{ "invert-match", no_argument, NULL, 'v' },
	{ "only-matching", no_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "files-without-match", no_argument, NULL, 'L' },
	{ "files", no_argument, NULL, OPT_FILES },
	{ "type-list", no_argument, NULL, OPT_TYPE_LIST },
	{ "text", no_argument, NULL, 'a' },
	{ "after-context", required_argument, NULL, 'A' },
	{ "before-context", required_argument, NULL, 'B' },
	{ "context", required_argument, NULL, 'C' },
	{ "glob", required_argument, NULL, 'g' },
	{ "type", required_argument, NULL, 't' },
	{ "max-count", required_argument, NULL, 'm' },
	{ "files-with-matches", no_argument, NULL, 'l' },
	{ "count", no_argument, NULL, 'c' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "no-json", no_argument, NULL, OPT_NO_JSON },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "no-index", no_argument, NULL, OPT_NO_INDEX },
	{ "trust-index", no_argument, NULL, OPT_TRUST_INDEX },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "max-filesize", required_argument, NULL, OPT_MAX_SIZE },
	{ "include-vendored", no_argument, NULL, OPT_VENDORED },
	{ "no-ignore", no_argument, NULL, OPT_NO_IGNORE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "threads", required_argument, NULL, 'j' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* What the command line says, beside the query's options. */
struct cli {
	struct search_opts o;		/* the query's options */
	struct search_glob *globs;	/* -g, in order (o.globs) */
	size_t globs_nr, globs_alloc;
	const struct lang **langs;	/* -t (o.langs) */
	size_t langs_nr, langs_alloc;
	const char **patterns;		/* -e, in order */
	size_t patterns_nr, patterns_alloc;
	struct buf alt;			/* several -e as one regex: o.pattern */
	int smart;			/* -S */
	int type_list;			/* --type-list */
	int unrestricted;		/* -u, counted */
	int hidden;			/* --hidden */
	int color;			/* --color: 1 always, 0 never, -1 auto */
	int json;			/* --json 1, --no-json 0, else -1 */
};

/* The index's server of the searches of this process (a socket per index). */
struct server_hook {
	char *exe;			/* ci-index, beside this program */
	char *sock;			/* the socket of ... */
	char *looked;			/* ... this index, or NULL */
};

/*
 * Ask the index's server (ci-index serve: ci-index's, beside this program) the
 * question q (search_ask_fn).  A question no server answers (none started, or
 * it idled out) starts one for the searches after this one, as `ci-index
 * update` does, if its updates can write the index.  CI_INDEX_SERVER=0 leaves
 * the server out.
 */
static int server_ask(struct ci_index *ix, const char *index_path, const char *q, char **ans, char **body,
		      void *data)
{
	struct server_hook *h = data;
	const char *updated = index_meta(ix, "updated");
	char *nl;
	int rc;

	*ans = NULL;
	if (server_env("CI_INDEX_SERVER") == SERVER_OFF || !index_path || !updated || !*updated)
		return 1;
	if (!h->looked || strcmp(h->looked, index_path)) {
		/* another tree's index (paths of several trees given) */
		free(h->looked);
		free(h->sock);
		h->sock = NULL;
		h->looked = xstrdup(index_path);
		if (!h->exe)
			h->exe = find_prog("ci-index");
		h->sock = strchr(h->exe, '/') ? fork_server_socket_of("index", index_path, h->exe) : NULL;
	}
	if (!h->sock)
		return 1;
	rc = fork_server_query(h->sock, q, ans, FORK_SERVER_SEARCH_MS);
	if (rc < 0) {
		/* none answered: one for the searches after this one (a server
		 * that is there but hung keeps its lock: another would not start) */
		if (rc != FORK_SERVER_HUNG && !access(index_path, W_OK))
			fork_server_spawn_of(h->exe, index_path, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_WARN));
		free(h->sock);
		h->sock = NULL;	/* asked once */
		return 1;
	}
	if (strncmp(*ans, "STAMP ", 6) || !(nl = strchr(*ans, '\n')) ||
	    (size_t)(nl - *ans - 6) != strlen(updated) || strncmp(*ans + 6, updated, strlen(updated))) {
		free(*ans);
		*ans = NULL;
		return 1;
	}
	*body = nl + 1;
	return 0;
}

/* -q: the answer is known, nothing was written. */
static void quiet_exit(void)
{
	_exit(EXIT_OK);
}

static void add_glob(struct cli *c, const char *arg)
{
	struct search_glob *g;

	ALLOC_GROW(c->globs, c->globs_nr + 1, c->globs_alloc);
	g = &c->globs[c->globs_nr++];
	g->exclude = arg[0] == '!';
	if (g->exclude)
		arg++;
	while (*arg == '/')
		arg++;
	g->pat = arg;
	g->has_slash = !!strchr(arg, '/');
	if (!*arg)
		usage_error(usage_text, "-g: empty glob");
}

/*
 * rg's type names for -t where they are not ci's language names (rg --type-list):
 * each selects the languages listed, separated by spaces.
 */
static const struct { const char *name, *langs; } type_aliases[] = {
	{ "config", "ini" }, { "cs", "csharp" }, { "docker", "dockerfile" },
	{ "js", "javascript" }, { "md", "markdown" }, { "py", "python" },
	{ "sh", "bash" }, { "ts", "typescript tsx" }, { "txt", "text" },
};

/* The languages -t name selects, space-separated (an alias's, or name itself), or NULL. */
static const char *type_langs(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(type_aliases); i++)
		if (!strcmp(type_aliases[i].name, name))
			return type_aliases[i].langs;
	return lang_by_name(name) ? name : NULL;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --type-list: each name -t accepts, sorted, with the languages it selects. */
static void print_type_list(void)
{
	const struct lang *const *all;
	const char **names = NULL;
	size_t nr = 0, alloc = 0, i;
	struct buf b = BUF_INIT;

	for (all = lang_all(); *all; all++) {
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = (*all)->name;
	}
	for (i = 0; i < ARRAY_SIZE(type_aliases); i++) {
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = type_aliases[i].name;
	}
	qsort(names, nr, sizeof(*names), cmp_strp);
	for (i = 0; i < nr; i++) {
		const char *p;

		buf_reset(&b);
		buf_addf(&b, "%s: ", names[i]);
		for (p = type_langs(names[i]); *p; p++) {
			if (*p == ' ')
				buf_addstr(&b, ", ");
			else
				buf_addch(&b, *p);
		}
		buf_addch(&b, '\n');
		fwrite(b.buf, 1, b.len, stdout);
	}
	buf_release(&b);
	free(names);
}

static void add_lang(struct cli *c, const char *name)
{
	const char *langs = type_langs(name), *p, *e;
	const struct lang *const *all;
	struct buf b = BUF_INIT;

	if (!langs) {
		for (all = lang_all(); *all; all++)
			buf_addf(&b, "%s%s", b.len ? ", " : "", (*all)->name);
		usage_error(usage_text, "-t: unknown language '%s' (known: %s; --type-list lists rg's names too)",
			    name, b.buf);
	}
	for (p = langs; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ' ');
		buf_reset(&b);
		buf_add(&b, p, (size_t)(e - p));
		ALLOC_GROW(c->langs, c->langs_nr + 1, c->langs_alloc);
		c->langs[c->langs_nr++] = lang_by_name(b.buf);
		assert(c->langs[c->langs_nr - 1]);
	}
	buf_release(&b);
}

/* --color's argument: 1 always, 0 never, -1 auto. */
static int color_arg(const char *arg)
{
	if (!strcmp(arg, "never"))
		return 0;
	if (!strcmp(arg, "always") || !strcmp(arg, "ansi"))
		return 1;
	if (!strcmp(arg, "auto"))
		return -1;
	usage_error(usage_text, "--color: '%s' is not never, auto or always", arg);
}

/* --check's argument. */
static int check_arg(const char *arg)
{
	if (!strcmp(arg, "files"))
		return SEARCH_CHECK_FILES;
	if (!strcmp(arg, "dirs"))
		return SEARCH_CHECK_DIRS;
	if (!strcmp(arg, "none"))
		return SEARCH_CHECK_NONE;
	usage_error(usage_text, "--check: '%s' is not files, dirs or none", arg);
}

/* One option of getopt's, c, into cl.  Returns -1, or an exit status (--help, --version). */
static int parse_option(struct cli *cl, int c, int argc, char **argv)
{
	struct search_opts *o = &cl->o;

	switch (c) {
	case 'e':
		ALLOC_GROW(cl->patterns, cl->patterns_nr + 1, cl->patterns_alloc);
		cl->patterns[cl->patterns_nr++] = optarg;
		break;
	case 'F': o->fixed = 1; break;
	case 'i': o->icase = 1; cl->smart = 0; break;	/* the last of -i, -S, -s wins (rg) */
	case 's': o->icase = 0; cl->smart = 0; break;
	case 'r': o->replace = optarg; break;
	case 'u': cl->unrestricted++; break;
	case OPT_HIDDEN: cl->hidden = 1; break;
	case OPT_COLOR: cl->color = color_arg(optarg); break;
	case 'n': break;	/* line numbers are always written (rg's -n) */
	case 'w': o->word = 1; o->line_regexp = 0; break;	/* the last of -w and -x wins, as in rg */
	case 'x': o->line_regexp = 1; o->word = 0; break;
	case 'S': cl->smart = 1; o->icase = 0; break;
	case 'v': o->invert = 1; break;
	case 'o': o->only = 1; break;
	case 'q': o->quiet = 1; break;
	case 'a': o->text = 1; break;
	case 'L': o->files_without = 1; break;
	case OPT_FILES: o->list_files = 1; break;
	case OPT_TYPE_LIST: cl->type_list = 1; break;
	case 'A': o->after = parse_long_arg(usage_text, "--after-context", optarg, 0, 1000000); break;
	case 'B': o->before = parse_long_arg(usage_text, "--before-context", optarg, 0, 1000000); break;
	case 'C':
		o->after = o->before = parse_long_arg(usage_text, "--context", optarg, 0, 1000000);
		break;
	case 'g': add_glob(cl, optarg); break;
	case 't': add_lang(cl, optarg); break;
	case 'm': o->max_count = parse_long_arg(usage_text, "--max-count", optarg, 1, LONG_MAX); break;
	case 'l': o->files_only = 1; break;
	case 'c': o->count = 1; break;
	case OPT_JSON: cl->json = 1; break;
	case OPT_NO_JSON: cl->json = 0; break;
	case OPT_INDEX: o->index = optarg; break;
	case OPT_NO_INDEX: o->no_index = 1; break;
	case OPT_TRUST_INDEX: o->check = SEARCH_CHECK_NONE; break;
	case OPT_CHECK: o->check = check_arg(optarg); break;
	case OPT_MAX_SIZE:
		o->walk.max_filesize = (uint64_t)parse_long_arg(usage_text, "--max-filesize", optarg, 0, 1L << 40);
		break;
	case OPT_VENDORED: o->walk.include_vendored = 1; break;
	case OPT_NO_IGNORE: o->walk.no_ignore = 1; break;
	case OPT_STATS: o->stats = 1; break;
	case 'j': o->threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256); break;
	case OPT_VERSION:
		return print_version("ci-grep");
	case 'h':
		fputs(usage_text, stdout);
		return close_stdout(EXIT_OK);
	default:
		usage_error(usage_text, "%s", bad_option(c, argc, argv));
	}
	return -1;
}

/*
 * The pattern: the -e patterns (several: one regex of alternatives), or the
 * first argument; none with --files.  Usage errors exit.
 */
static void take_pattern(struct cli *cl, int argc, char **argv)
{
	struct search_opts *o = &cl->o;

	if (cl->patterns_nr == 1) {
		o->pattern = cl->patterns[0];
	} else if (cl->patterns_nr > 1) {
		search_join_patterns(&cl->alt, cl->patterns, cl->patterns_nr, o->fixed);
		o->fixed = 0;
		o->pattern = cl->alt.buf;
	}
	if (cl->type_list)
		return;
	if (o->list_files) {
		/* no pattern: every argument is a path; the matcher is never used */
		if (o->pattern)
			usage_error(usage_text, "--files takes no pattern");
		o->pattern = "";
	}
	if (!o->pattern) {
		if (optind >= argc)
			usage_error(usage_text, "no pattern given");
		o->pattern = argv[optind++];
	}
}

/* What the options imply, and the environment's say (exits on a bad value). */
static void finish_options(struct cli *cl)
{
	struct search_opts *o = &cl->o;

	if (o->files_only + o->count + o->files_without > 1)
		usage_error(usage_text, "-l, -L and -c cannot be used together");
	if (cl->smart && !search_has_uppercase(o->pattern))
		o->icase = 1;
	/* -u: --no-ignore; -uu: and --hidden; -uuu: and binary files (rg) */
	if (cl->unrestricted >= 1)
		o->walk.no_ignore = 1;
	if (cl->unrestricted >= 2)
		cl->hidden = 1;
	if (cl->unrestricted >= 3)
		o->binary = 1;
	o->walk.skip_hidden = !cl->hidden;
	o->walk.ignore_files = 1;
	/* the regex's bounds (tests set tiny ones) */
	o->match_limit = (uint32_t)env_long("CI_GREP_MATCH_LIMIT", 1, UINT32_MAX, SEARCH_MATCH_LIMIT, ENV_DIE);
	o->file_budget_ms = env_long("CI_GREP_FILE_TIME_MS", 0, 86400000L, SEARCH_FILE_BUDGET_MS, ENV_DIE);
	if (o->index && o->no_index)
		usage_error(usage_text, "--index and --no-index cannot be used together");
	if (cl->json < 0)	/* text or json: the format wherever output goes */
		cl->json = human_env_format();
	o->json = cl->json >= 0 ? cl->json : !isatty(STDOUT_FILENO);
	/* rg's colours on a terminal (not with NO_COLOR or TERM=dumb), never in records */
	if (cl->color < 0)
		cl->color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
			    !(getenv("TERM") && !strcmp(getenv("TERM"), "dumb"));
	o->color = cl->color && !o->json;
	o->globs = cl->globs;
	o->globs_nr = cl->globs_nr;
	o->langs = cl->langs;
	o->langs_nr = cl->langs_nr;
}

/* ---- a shard set: each shard's query on a thread (libcommon/fleet) ---- */

/* The query of every shard: the command line parsed once. */
struct shards_query {
	struct cli cl;
	char *need;		/* the trigram query a shard must satisfy to be read (fleet/prune.h), or NULL */
};

/* A shard server's part of a shard (fleet_cmd.resident). */
struct shards_res {
	struct walker *w;		/* its tree's walker, or NULL */
	struct fleet_trigrams *tri;	/* its trigrams, or NULL: always asked */
};

/*
 * The shards' command line (fleet_cmd.prepare): 0 with *state, or 1 for what
 * only a process of its own answers: paths (relative to each shard's root),
 * -q (it exits at the first match), --stats, --type-list, --help, --version.
 */
static void shards_release(void *state);

static int shards_prepare(int argc, char **argv, void **state)
{
	struct shards_query *sq;
	int c;

	*state = NULL;
	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)
		if (!strcmp(argv[c], "-h") || !strcmp(argv[c], "--help") || !strcmp(argv[c], "--version"))
			return 1;
	sq = xcalloc(1, sizeof(*sq));
	sq->cl = (struct cli){ .alt = BUF_INIT, .color = 0, .json = 1 };	/* as into a pipe */
	search_opts_init(&sq->cl.o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:FiwnA:B:C:g:t:m:lcj:hvoqLxSasr:u", long_options, NULL)) != -1)
		parse_option(&sq->cl, c, argc, argv);
	take_pattern(&sq->cl, argc, argv);
	free(sq->cl.patterns);
	sq->cl.patterns = NULL;
	if (sq->cl.type_list || optind < argc || sq->cl.o.quiet || sq->cl.o.stats) {
		buf_release(&sq->cl.alt);
		free(sq->cl.globs);
		free(sq->cl.langs);
		free(sq);
		return 1;
	}
	finish_options(&sq->cl);
	sq->cl.o.threads = 1;	/* a thread a shard already */
	sq->cl.o.whole_tree = 1;
	{
		/* what a shard must hold to be searched (a pattern that does not compile: every shard says so) */
		struct buf quiet = BUF_INIT;
		struct search *q;

		util_report_to(&quiet);
		if (search_open(&q, &sq->cl.o) == 0) {
			const char *need = search_trigram_need(q);

			sq->need = need ? xstrdup(need) : NULL;
			search_close(q);
		}
		util_report_to(NULL);
		buf_release(&quiet);
	}
	*state = sq;
	return 0;
}

/* fleet_cmd.skip: the shard's trigrams cannot satisfy the query's (fleet/prune.h). */
static int shards_skip(void *state, void *res)
{
	const struct shards_query *sq = state;
	const struct shards_res *sr = res;

	return sq->need && sr->tri && !fleet_trigrams_may_match(sr->tri, sq->need);
}

/* One shard (fleet_cmd.shard): the search of its tree, as `ci-grep --index <it>` run there. */
static int shards_one(void *state, struct ci_index *ix, const char *index_path, void *res,
		      struct buf *out, struct buf *err)
{
	const struct shards_query *sq = state;
	struct search_opts o = sq->cl.o;
	struct search *q;
	char *ob = NULL, *eb = NULL;
	size_t on = 0, en = 0;
	int ret;

	o.index = index_path;
	o.index_handle = ix;
	o.walker_handle = res ? ((struct shards_res *)res)->w : NULL;
	if (search_open(&q, &o) < 0)
		return EXIT_USAGE;
	q->out = open_memstream(&ob, &on);
	q->err = open_memstream(&eb, &en);
	if (!q->out || !q->err)
		die("cannot open a stream in memory: %s", strerror(errno));
	ret = search_tree(q, index_root(ix), NULL, 0, 1);
	fclose(q->out);
	fclose(q->err);
	buf_add(out, ob, on);
	buf_add(err, eb, en);
	free(ob);
	free(eb);
	search_close(q);
	return ret;
}

/*
 * A search of the shard answered once in the server, its answer dropped: the
 * statements it asks the index (index_kept) are then prepared, and its meta
 * values read, for every worker forked after.
 */
static void shards_warm(struct ci_index *ix, const char *index_path, struct walker *w)
{
	char *argv[] = { (char *)"ci-grep", (char *)"ci_warm_up", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	struct shards_res sr = { .w = w };
	void *state;

	optind = 0;
	if (shards_prepare(2, argv, &state) == 0) {
		util_report_to(&err);
		shards_one(state, ix, index_path, &sr, &out, &err);
		util_report_to(NULL);
		shards_release(state);
	}
	buf_release(&out);
	buf_release(&err);
}

/*
 * A shard server's (fleet_cmd.resident): the walker of the shard's tree,
 * opened once (libgit2's repository open and its configuration were a fifth
 * of a shard's query), its ignore files read.  NULL where it cannot be
 * opened: each query opens it then, and says why.
 */
static void *shards_resident(struct ci_index *ix, const char *index_path)
{
	struct shards_res *sr = xcalloc(1, sizeof(*sr));
	struct walker *w = xmalloc(sizeof(*w));
	struct search_opts so;
	struct buf why = BUF_INIT;
	int rc;

	(void)index_path;
	search_opts_init(&so);
	util_report_to(&why);
	rc = walker_open(w, index_root(ix), &so.walk);
	util_report_to(NULL);
	buf_release(&why);
	if (rc < 0) {
		free(w);
		return sr;	/* no walker: each query opens it, and says why; never skipped */
	}
	w->opts.skip_hidden = w->opts.ignore_files = 1;
	walker_path_excluded(w, "ci-warm", 0);
	w->opts = so.walk;
	sr->w = w;
	sr->tri = fleet_trigrams_of(ix);	/* before the warm-up keeps its statements */
	shards_warm(ix, index_path, w);
	return sr;
}

static void shards_resident_release(void *res)
{
	struct shards_res *sr = res;

	if (sr->w) {
		walker_close(sr->w);
		free(sr->w);
	}
	fleet_trigrams_free(sr->tri);
	free(sr);
}

static void shards_release(void *state)
{
	struct shards_query *sq = state;

	buf_release(&sq->cl.alt);
	free(sq->cl.globs);
	free(sq->cl.langs);
	free(sq->need);
	free(sq);
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];	/* stdout's buffer: flushed by close_stdout, after main's frame */
	struct cli cl = { .alt = BUF_INIT, .color = -1, .json = -1 };
	struct server_hook hook = { 0 };
	struct search *q;
	int c, ret;

	util_init_code(argv[0], SEARCH_EXIT_ERROR);	/* die(), a write error: 2, not 3 */
	list_options(argc, argv, long_options);
	if (fleet_wanted(argc, argv)) {	/* a shard set: libcommon/fleet, libcommon/fleet/serve.h */
		const struct fleet_cmd cmd = { FLEET_GREP, main, shards_prepare, shards_one, shards_release,
					       shards_resident, shards_resident_release, shards_skip };

		return close_stdout(fleet_command(&cmd, argc, argv));
	}
	search_opts_init(&cl.o);

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:FiwnA:B:C:g:t:m:lcj:hvoqLxSasr:u", long_options, NULL)) != -1)
		if ((ret = parse_option(&cl, c, argc, argv)) >= 0)
			return ret;
	take_pattern(&cl, argc, argv);
	free(cl.patterns);
	if (cl.type_list) {
		print_type_list();
		return close_stdout(EXIT_OK);
	}
	finish_options(&cl);
	cl.o.ask = server_ask;
	cl.o.ask_data = &hook;
	cl.o.on_quiet_match = quiet_exit;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	if (search_open(&q, &cl.o) < 0)
		exit(EXIT_USAGE);	/* a bad pattern */
	ret = search_paths(q, argv + optind, (size_t)(argc - optind));
	search_close(q);
	buf_release(&cl.alt);
	free(cl.globs);
	free(cl.langs);
	free(hook.exe);
	free(hook.sock);
	free(hook.looked);
	return close_stdout(ret);
}
