/*
 * ci-refs: definitions, references, imports and their graph, from the index.
 *
 *   ci-refs defs|refs|occurrences <name>    where a symbol is defined / used
 *   ci-refs symbols <file>                  what a file defines
 *   ci-refs search <name-or-pattern>        symbol search: exact, prefix, fuzzy
 *   ci-refs deps <file> [--reverse|--both]  imports, resolved to files
 *   ci-refs cycles [--scope <path>]         import cycles
 *   ci-refs impact <file|file:symbol>       what a change may affect
 *   ci-refs callers|callees <name>          calls bound to definitions
 *   ci-refs trace <from> <to>               call paths between two symbols
 *   ci-refs dead                            definitions nothing reaches
 *   ci-refs arch                            packages, layering, clusters
 *
 * Every answer is syntactic: definitions and references come from tree-sitter
 * tags queries, not from a compiler, so records say "confidence":"syntactic";
 * and a question about a language without a grammar gets an explicit
 * "unsupported" record rather than an empty list.
 *
 * The engine is libcommon/graph (refs.h); this file parses the options,
 * opens the index and runs one query.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "fleet/serve.h"
#include "fleet/xrefs.h"
#include "graph/cgraph.h"
#include "graph/refs.h"
#include "core/human.h"
#include "index/index.h"
#include "parse/walk.h"

#include <errno.h>
#include <getopt.h>
#include <sys/mman.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: ci-refs [options] <command> [<arg>...]\n"
	"\n"
	"Commands:\n"
	"  defs <name>             where <name> is defined (Class.method, module.func narrow)\n"
	"  refs <name>             where <name> is referenced\n"
	"  occurrences <name>      definitions, references and imports of <name>\n"
	"  symbols <file>          every symbol a file defines\n"
	"  search <query>          symbols by name: exact, then prefix, then fuzzy\n"
	"  deps <file>             the files <file> imports (--reverse: that import it)\n"
	"  cycles                  import cycles (strongly connected components)\n"
	"  impact <file>[:<symbol>]  files a change may affect, with the signals\n"
	"  callers <name>          the calls that reach <name>, each with how it binds\n"
	"  callees <name>          the calls inside <name>, each with the definition it reaches\n"
	"  trace <from> <to>       call paths from <from> to <to>, shortest first\n"
	"  dead                    definitions nothing reaches (entry points left out)\n"
	"  arch                    packages, entry points, layering by imports, clusters\n"
	"\n"
	"Options:\n"
	"      --index <db>        the index (default: $CI_INDEX, or <root>/.ci-index/index.db)\n"
	"      --shards <set>      every index of a shard set (a directory or a manifest), merged\n"
	"      --kind <kind>       only this kind (function, method, class, interface, type,\n"
	"                          variable, ... or call, type for references)\n"
	"      --path <prefix>     only files under this path\n"
	"      --lang <lang>       only files in this language\n"
	"      --limit <n>         at most <n> records (1-10000; default 100)\n"
	"      --reverse           deps: the files that import <file>\n"
	"      --both              deps: both directions\n"
	"      --scope <path>      cycles: only files under this path\n"
	"      --type-imports      cycles: count Python imports under `if TYPE_CHECKING:`\n"
	"      --depth <n>         impact: follow reverse imports <n> levels (0-3; default 2);\n"
	"                          trace: paths of at most <n> calls (1-30; default 8);\n"
	"                          callers, callees: <n> levels of calls (1-10; default 1)\n"
	"      --by-name           callers, callees, trace, dead: a Python call no rule binds\n"
	"                          (an unknown receiver) binds by name, as in other languages\n"
	"      --mode <mode>       impact: the signals, combined (default: all), deps (imports\n"
	"                          and references), coupling or semantic\n"
	"      --json              NDJSON records even on a terminal (also: CI_FORMAT=json)\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum { OPT_INDEX = 256, OPT_KIND, OPT_PATH, OPT_LANG, OPT_LIMIT, OPT_REVERSE, OPT_BOTH,
	OPT_SCOPE, OPT_DEPTH, OPT_MODE, OPT_JSON, OPT_TYPE_IMPORTS, OPT_BY_NAME };

static const struct option long_options[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "both", no_argument, NULL, OPT_BOTH },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "type-imports", no_argument, NULL, OPT_TYPE_IMPORTS },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "by-name", no_argument, NULL, OPT_BY_NAME },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The command and its argument, from the command line. */
struct invocation {
	const char *cmd;	/* defs, refs, ..., cycles */
	const char *arg;	/* its argument, NULL for cycles, dead, arch */
	const char *arg2;	/* trace's second argument */
	const char *index;	/* --index */
	int json;		/* --json */
};

static unsigned parse_mode(const char *s)
{
	if (!strcmp(s, "combined"))
		return REFS_M_ALL;
	if (!strcmp(s, "deps"))
		return REFS_M_DEPS;
	if (!strcmp(s, "coupling"))
		return REFS_M_COUPLING;
	if (!strcmp(s, "semantic"))
		return REFS_M_SEMANTIC;
	usage_error(usage_text, "--mode must be combined, deps, coupling or semantic, not '%s'", s);
	return 0;
}

/* The command and its argument; exits on a usage error. */
static void parse_command(struct invocation *inv, int argc, char **argv)
{
	const char *cmd;

	if (optind >= argc)
		usage_error(usage_text, "no command given");
	cmd = inv->cmd = argv[optind++];
	if (!strcmp(cmd, "cycles") || !strcmp(cmd, "dead") || !strcmp(cmd, "arch")) {
		if (optind < argc)
			usage_error(usage_text, "%s takes no argument%s", cmd,
				    !strcmp(cmd, "cycles") ? " (use --scope)" : " (use --path, --kind)");
	} else if (!strcmp(cmd, "trace")) {
		if (optind + 2 != argc)
			usage_error(usage_text, "trace takes two arguments, <from> and <to>");
		inv->arg = argv[optind];
		inv->arg2 = argv[optind + 1];
		if (!*inv->arg || !*inv->arg2)
			usage_error(usage_text, "trace: an argument is empty");
	} else if (!strcmp(cmd, "defs") || !strcmp(cmd, "refs") || !strcmp(cmd, "occurrences") ||
		   !strcmp(cmd, "symbols") || !strcmp(cmd, "search") || !strcmp(cmd, "deps") ||
		   !strcmp(cmd, "impact") || !strcmp(cmd, "callers") || !strcmp(cmd, "callees")) {
		if (optind + 1 != argc)
			usage_error(usage_text, "%s takes one argument", cmd);
		inv->arg = argv[optind];
		if (!*inv->arg)
			usage_error(usage_text, "%s: the argument is empty", cmd);
	} else {
		usage_error(usage_text, "unknown command '%s'", cmd);
	}
}

/* Parse the options into o and inv; returns -1 to go on, else the exit status. */
static int parse_options(struct refs_opts *o, struct invocation *inv, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_INDEX: inv->index = optarg; break;
		case OPT_KIND: o->kind = optarg; break;
		case OPT_PATH: o->path = optarg; break;
		case OPT_LANG: o->lang = optarg; break;
		case OPT_LIMIT: o->limit = parse_long_arg(usage_text, "--limit", optarg, 1, 10000); break;
		case OPT_REVERSE: o->reverse = 1; break;
		case OPT_BOTH: o->both = 1; break;
		case OPT_SCOPE: o->scope = optarg; break;
		case OPT_TYPE_IMPORTS: o->type_imports = 1; break;
		case OPT_BY_NAME: o->by_name = 1; break;
		case OPT_DEPTH: o->depth = parse_long_arg(usage_text, "--depth", optarg, 0, 30); break;
		case OPT_JSON: inv->json = 1; break;
		case OPT_MODE: o->mode = parse_mode(optarg); break;
		case OPT_VERSION:
			return print_version("ci-refs");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	parse_command(inv, argc, argv);
	if (!strcmp(inv->cmd, "trace") || !strcmp(inv->cmd, "callers") || !strcmp(inv->cmd, "callees")) {
		if (o->depth < 0)
			o->depth = strcmp(inv->cmd, "trace") ? 1 : 8;
		else if (o->depth < 1)
			usage_error(usage_text, "--depth: %s needs at least 1", inv->cmd);
		else if (o->depth > 10 && strcmp(inv->cmd, "trace"))
			usage_error(usage_text, "--depth must be between 1 and 10 for %s", inv->cmd);
	} else if (o->depth < 0) {
		o->depth = 2;
	} else if (o->depth > 3) {
		usage_error(usage_text, "--depth must be between 0 and 3 for %s", inv->cmd);
	}
	if (o->kind && !*o->kind)
		usage_error(usage_text, "--kind: empty");
	return -1;
}

/* Open the index: --index, or the default one of the repository here. */
static int open_index(struct ci_index **ix, const char *index)
{
	char *path;
	int rc;

	if (index) {
		path = xstrdup(index);
	} else {
		struct walker w;
		struct walk_opts wo = WALK_OPTS_INIT;
		if (walker_open(&w, ".", &wo) < 0)
			return EXIT_IO;
		path = index_default_path(w.root);
		walker_close(&w);
	}
	rc = index_open(ix, path, INDEX_READONLY);
	if (rc > 0)
		error("no index at '%s': run 'ci-index build' first", path);
	free(path);
	return rc ? EXIT_IO : EXIT_OK;
}

/* Run the query the command names. */
static int run(struct refs *r, const char *cmd, const char *arg, const char *arg2)
{
	if (!strcmp(cmd, "trace"))
		return refs_trace(r, arg, arg2);
	if (!strcmp(cmd, "dead"))
		return refs_dead(r);
	if (!strcmp(cmd, "arch"))
		return refs_arch(r);
	if (!strcmp(cmd, "defs"))
		return refs_occurrences(r, arg, 1, 0, 0);
	if (!strcmp(cmd, "refs"))
		return refs_occurrences(r, arg, 0, 1, 0);
	if (!strcmp(cmd, "occurrences"))
		return refs_occurrences(r, arg, 1, 1, 1);
	if (!strcmp(cmd, "symbols"))
		return refs_symbols(r, arg);
	if (!strcmp(cmd, "search"))
		return refs_search(r, arg);
	if (!strcmp(cmd, "deps"))
		return refs_deps(r, arg);
	if (!strcmp(cmd, "impact"))
		return refs_impact(r, arg);
	if ((!strcmp(cmd, "callers") || !strcmp(cmd, "callees")) && r->o.depth > 1)
		return refs_calls_deep(r, arg, !strcmp(cmd, "callees"));
	if (!strcmp(cmd, "callers") || !strcmp(cmd, "callees"))
		return refs_calls(r, arg, !strcmp(cmd, "callees"));
	return refs_cycles(r);
}

/* The formatter of records for people, when one runs (human.h). */
static pid_t human_pid;

static void human_at_exit(void)
{
	human_finish(human_pid);
}

/* ---- a shard set: each shard's query on a thread (libcommon/fleet) ---- */

/* The query of every shard: the command line parsed once. */
struct shards_query {
	struct refs_opts o;
	struct invocation inv;
	int facts;		/* each shard's facts for the references across repositories too */
};

/* The shards' command line (fleet_cmd.prepare): 0 with *state, 1 for --help and --version. */
static int shards_prepare(int argc, char **argv, void **state)
{
	struct shards_query *sq;
	int c;

	*state = NULL;
	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)
		if (!strcmp(argv[c], "-h") || !strcmp(argv[c], "--help") || !strcmp(argv[c], "--version"))
			return 1;
	sq = xcalloc(1, sizeof(*sq));
	sq->o = (struct refs_opts){ .limit = 100, .depth = -1, .mode = REFS_M_ALL };
	opterr = 0;
	parse_options(&sq->o, &sq->inv, argc, argv);
	sq->facts = getenv("CI_XREFS_FACTS") && xrefs_wanted(sq->inv.cmd);
	*state = sq;
	return 0;
}

/* One shard (fleet_cmd.shard): the query on its index, as `ci-refs --index <it>`. */
static int shards_one(void *state, struct ci_index *ix, const char *index_path, void *res,
		      struct buf *out, struct buf *err)
{
	const struct shards_query *sq = state;
	struct refs r;
	char *ob = NULL;
	size_t on = 0;
	FILE *fp = open_memstream(&ob, &on);
	int ret;

	(void)index_path;
	(void)res;
	(void)err;
	if (!fp)
		die("cannot open a stream in memory: %s", strerror(errno));
	refs_init(&r, ix, &sq->o, fp);
	ret = run(&r, sq->inv.cmd, sq->inv.arg, sq->inv.arg2);
	refs_release(&r);
	fclose(fp);
	buf_add(out, ob, on);
	free(ob);
	if (sq->facts)
		xrefs_facts(ix, sq->inv.cmd, sq->inv.arg, out);
	return ret;
}

static void shards_release(void *state)
{
	free(state);
}

/* The refs command of a shard set's command line and its argument (options skipped), or NULL. */
static const char *shards_command(int argc, char **argv, const char **arg)
{
	static const char *const valued[] = { "--index", "--kind", "--path", "--lang", "--limit", "--scope",
		"--depth", "--mode", "--shards", "--shards-repo", "--shards-mode", NULL };
	const char *cmd = NULL;

	*arg = NULL;
	for (int i = 1; i < argc; i++) {
		int takes = 0;

		if (!strcmp(argv[i], "--")) {
			if (!cmd && i + 1 < argc)
				cmd = argv[++i];
			if (i + 1 < argc)
				*arg = argv[i + 1];
			break;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			for (int k = 0; valued[k]; k++)
				takes |= !strcmp(argv[i], valued[k]);
			i += takes;
			continue;
		}
		if (cmd) {
			*arg = argv[i];
			break;
		}
		cmd = argv[i];
	}
	return cmd;
}

/*
 * A shard set's refs, callers or impact: the fan-out's answer (with each
 * shard's facts) taken in memory, then the references across repositories
 * added (libcommon/fleet/xrefs.h).  CI_XREFS=0: the fan-out's answer alone.
 */
static int shards_main(const struct fleet_cmd *cmd, int argc, char **argv)
{
	const char *arg, *what = shards_command(argc, argv, &arg), *env = getenv("CI_XREFS");
	int mfd, saved, ret;
	long n;
	char *in;
	off_t len;

	if (!xrefs_wanted(what) || !arg || (env && !strcmp(env, "0")))
		return fleet_command(cmd, argc, argv);
	fflush(stdout);
	if ((mfd = memfd_create("ci-refs-shards", MFD_CLOEXEC)) < 0 || (saved = dup(1)) < 0 || dup2(mfd, 1) < 0)
		die_code(EXIT_IO, "cannot keep the shards' answer: %s", strerror(errno));
	setenv("CI_XREFS_FACTS", "1", 1);
	ret = fleet_command(cmd, argc, argv);
	fflush(stdout);
	if (dup2(saved, 1) < 0 || (len = lseek(mfd, 0, SEEK_END)) < 0)
		die_code(EXIT_IO, "cannot read the shards' answer: %s", strerror(errno));
	close(saved);
	in = xmalloc(len + 1);
	if (pread(mfd, in, len, 0) != len)
		die_code(EXIT_IO, "cannot read the shards' answer: %s", strerror(errno));
	close(mfd);
	n = xrefs_resolve(what, arg, in, (size_t)len, stdout);
	free(in);
	if (n < 0)
		return EXIT_IO;
	return ret == EXIT_NOTHING && n > 0 ? EXIT_OK : ret;
}

int main(int argc, char **argv)
{
	struct refs_opts o = { .limit = 100, .depth = -1, .mode = REFS_M_ALL };
	struct invocation inv = { 0 };
	struct ci_index *ix;
	struct refs r;
	int ret;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	opterr = 0;
	if (fleet_wanted(argc, argv)) {	/* a shard set: libcommon/fleet, cmd/fleet-serve.h */
		const struct fleet_cmd cmd = { FLEET_REFS, main, shards_prepare, shards_one, shards_release, NULL, NULL, NULL };

		return close_stdout(shards_main(&cmd, argc, argv));
	}
	if ((ret = parse_options(&o, &inv, argc, argv)) >= 0)
		return ret;
	if (human_wanted(inv.json) && (human_pid = human_start()) > 0)
		atexit(human_at_exit);
	if ((ret = open_index(&ix, inv.index)) != EXIT_OK)
		return ret;
	refs_init(&r, ix, &o, stdout);
	{
		/* one read transaction: one snapshot, not a lock taken per statement
		 * (impact on Linux runs thousands) */
		int txn = sqlite3_exec(r.db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
		ret = run(&r, inv.cmd, inv.arg, inv.arg2);
		if (txn)
			sqlite3_exec(r.db, "COMMIT", NULL, NULL, NULL);
	}
	refs_release(&r);
	if (getenv("CI_FLEET_CHILD") && getenv("CI_XREFS_FACTS") && xrefs_wanted(inv.cmd)) {
		/* a shard of a set (--shards-mode fork): its facts after its answer */
		struct buf facts = BUF_INIT;

		xrefs_facts(ix, inv.cmd, inv.arg, &facts);
		fflush(stdout);
		fwrite(facts.buf, 1, facts.len, stdout);
		buf_release(&facts);
	}
	index_close(ix);
	return close_stdout(ret);
}
