/*
 * ci-rank: hybrid ranked search over the index: which chunks, and so which files,
 * answer a question.
 *
 * The command: its options, the index's server (ci-rank serve, libcommon/index/fork-server.h)
 * and the records written.  The ranker is libcommon/rank (rank/rank.h): a file
 * per signal (keyword, symbol, path, structure, change, semantic), the fusion
 * (weighted reciprocal rank, then the learned model of share/rank/model.json,
 * compiled in), context bundles and similar.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "core/human.h"
#include "index/index.h"
#include "index/vecsnap.h"
#include "fleet/serve.h"
#include "index/fork-server.h"
#include "rank/rank.h"
#include "rank/model.h"
#include "embed/embed.h"
#include "embed/embedtext.h"

#include <errno.h>
#include <getopt.h>

static const char usage_text[] =
	"usage: ci-rank [options] [context] <query>\n"
	"   or: ci-rank [options] similar <path>:<symbol>|<path>:<line>|<text>\n"
	"   or: ci-rank [options] similar --scan [--threshold <x>]\n"
	"   or: ci-rank [--index <db>] serve [--idle <seconds>] [--stop]\n"
	"\n"
	"Hybrid ranked search: write hit records, best first, and a summary record.\n"
	"With `context`, a bundle: the best chunks and the files that change with them,\n"
	"within a budget of lines.  With `similar`, the chunks whose vectors are nearest\n"
	"a chunk's or a text's; with --scan, clusters of near-duplicate chunks.\n"
	"With `serve`, a resident server for the index that runs each ci-rank command\n"
	"line with the model and the vectors already in memory; ci-rank starts one\n"
	"itself for an index with vectors and uses it while it runs.\n"
	"\n"
	"      --index <db>        the index (default: $CI_INDEX, or <root>/.ci-index/index.db)\n"
	"      --query-file <file> the query is the text of <file> ('-': standard input), of\n"
	"                          any size: for issue texts over the command line's limit\n"
	"      --shards <set>      every index of a shard set (a directory or a manifest);\n"
	"                          hits merged by score\n"
	"      --mode <mode>       hybrid (default), keyword or semantic\n"
	"      --type <kind>       only chunks of this kind (function, class, method, ...)\n"
	"      --lang <lang>       only files in this language\n"
	"      --path <prefix>     only files under this path\n"
	"      --scope <scope>     impl, test or all (default: impl, unless the query is\n"
	"                          about tests)\n"
	"      --limit <n>         at most <n> hits (1-200; default 10)\n"
	"      --per-file <n>      at most <n> hits per file (default 1)\n"
	"      --min-score <x>     drop hits scoring below <x> (0-1)\n"
	"      --format <fmt>      locate (default: path, lines, symbol, score) or full (with text)\n"
	"      --explain           each hit's signals, ranks and their contributions\n"
	"      --fusion <how>      learned (default in hybrid and semantic mode: the model\n"
	"                          of share/rank/model.json, compiled in) or rrf (weighted\n"
	"                          reciprocal rank, the default of keyword mode; also:\n"
	"                          CI_RANK_FUSION)\n"
	"      --model <file>      the learned fusion with this model instead\n"
	"      --features <file>   write each candidate file's features (NDJSON) to <file>\n"
	"      --chunk-order <how> model (default: a file's chunks by the learned model's\n"
	"                          chunk member, so its hit is the function that answers;\n"
	"                          evidence without one), evidence (by their own keyword,\n"
	"                          symbol and semantic ranks) or fused (by the fused score)\n"
	"      --chunk-expand <n>  every chunk of the first <n> files a candidate for the\n"
	"                          chunk order, not only those a signal found (0-20;\n"
	"                          default 5; 0: those only)\n"
	"      --chunk-features <file> write the features of the best files' chunks\n"
	"                          (NDJSON) to <file>\n"
	"      --semantic-idf <p>  weigh the query's words by their idf in the index to\n"
	"                          the power <p> when a static model (ci-code) embeds it\n"
	"                          (0-4; 0: all alike; default 0)\n"
	"      --semantic-title <w> the words of the query's first line count <w> times\n"
	"                          in its vector, with a static model (0-20; default 3\n"
	"                          in semantic mode, 1 in hybrid mode)\n"
	"      --segment-weight <part>=<w> what a word of that part of the query weighs\n"
	"                          in the lexical signals (title, prose, code, trace, log,\n"
	"                          env, noise; 0-20; defaults 6 1 1 1 0.25 0 0); repeatable\n"
	"      --semantic-path <w> with a static model, order the semantic signal's chunks\n"
	"                          by their cosine plus <w> times their file path's (0-4;\n"
	"                          default 0.6 in semantic mode, 0 in hybrid mode)\n"
	"      --budget <lines>    context: at most this many lines in all (10-100000; default 300)\n"
	"      --depth <n>         context: follow co-change coupling <n> steps (0-2; default 1)\n"
	"      --max-coupled <n>   context: at most <n> coupled files per hit (0-20; default 3)\n"
	"      --threshold <x>     context: coupling scores below <x> are ignored (0-1; default 0.3);\n"
	"                          similar --scan: the cosine that makes two chunks near\n"
	"                          duplicates (default 0.85)\n"
	"      --scan              similar: cluster near-duplicate chunks across the index\n"
	"      --no-server         run here, not in the index's server (also: CI_RANK_SERVER=0)\n"
	"      --json              NDJSON records even on a terminal (also: CI_FORMAT=json)\n"
	"      --idle <seconds>    serve: exit after this long without a request (default\n"
	"                          $CI_RANK_SERVER_IDLE, else 600)\n"
	"      --stop              serve: stop the index's server\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum { OPT_INDEX = 256, OPT_MODE, OPT_TYPE, OPT_LANG, OPT_PATH, OPT_SCOPE, OPT_LIMIT,
	OPT_PER_FILE, OPT_MIN_SCORE, OPT_FORMAT, OPT_EXPLAIN, OPT_BUDGET, OPT_DEPTH, OPT_MAX_COUPLED,
	OPT_THRESHOLD, OPT_SCAN, OPT_NO_SERVER, OPT_IDLE, OPT_STOP, OPT_JSON, OPT_FUSION, OPT_MODEL,
	OPT_FEATURES, OPT_CHUNK_ORDER, OPT_CHUNK_FEATURES, OPT_CHUNK_EXPAND, OPT_QUERY_FILE, OPT_SEM_IDF, OPT_SEM_TITLE,
	OPT_SEM_PATH, OPT_SEG_WEIGHT };

static const struct option long_options[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "per-file", required_argument, NULL, OPT_PER_FILE },
	{ "min-score", required_argument, NULL, OPT_MIN_SCORE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "max-coupled", required_argument, NULL, OPT_MAX_COUPLED },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "scan", no_argument, NULL, OPT_SCAN },
	{ "no-server", no_argument, NULL, OPT_NO_SERVER },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "stop", no_argument, NULL, OPT_STOP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "fusion", required_argument, NULL, OPT_FUSION },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "features", required_argument, NULL, OPT_FEATURES },
	{ "chunk-order", required_argument, NULL, OPT_CHUNK_ORDER },
	{ "chunk-features", required_argument, NULL, OPT_CHUNK_FEATURES },
	{ "chunk-expand", required_argument, NULL, OPT_CHUNK_EXPAND },
	{ "query-file", required_argument, NULL, OPT_QUERY_FILE },
	{ "semantic-idf", required_argument, NULL, OPT_SEM_IDF },
	{ "semantic-title", required_argument, NULL, OPT_SEM_TITLE },
	{ "segment-weight", required_argument, NULL, OPT_SEG_WEIGHT },
	{ "semantic-path", required_argument, NULL, OPT_SEM_PATH },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct options {
	struct rank_opts r;	/* the query's */
	const char *index;	/* --index */
	int context;		/* the context command */
	int similar;		/* the similar command */
	int scan;		/* similar --scan */
	int threshold_set;	/* --threshold given */
	int no_server;		/* --no-server */
	long idle;		/* serve --idle seconds (0: not given) */
	int stop;		/* serve --stop */
	int json;		/* --json */
	const char *query_file;	/* --query-file */
};

/* share/rank/model.json, compiled in (rank-model.c, by scripts/embed-text) */
extern const char ci_rank_model_json[];

/*
 * What a server's callbacks need (struct fork_server_ops passes them no
 * pointer): what the server preloaded, and whether this process is one of
 * its workers.
 */
static struct rank_preload pre;
static int server_child;

/* The formatter of records for people, when one runs (human.h): for atexit. */
static pid_t human_pid;

static void human_at_exit(void)
{
	human_finish(human_pid);
}

static double parse_range(const char *opt, const char *arg, double lo, double hi)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (errno || end == arg || *end || !(x >= lo && x <= hi))
		usage_error(usage_text, "%s: expected a number from %g to %g, got '%s'", opt, lo, hi, arg);
	return x;
}

static double parse_unit(const char *opt, const char *arg)
{
	return parse_range(opt, arg, 0, 1);
}

/* --segment-weight <part>=<w>: a part of the query (segment.h) and its weight. */
static void parse_segment_weight(struct rank_opts *r, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : 0;

	for (int k = 0; eq && k < SEG_MAX; k++)
		if (n == strlen(rank_seg_name[k]) && !strncmp(arg, rank_seg_name[k], n)) {
			r->seg_weight[k] = parse_range("--segment-weight", eq + 1, 0, 20);
			return;
		}
	usage_error(usage_text,
		    "--segment-weight: expected <part>=<w>, the part one of title, prose, code, trace, log, env, noise; got '%s'",
		    arg);
}

/* One option of the command line: -1, or the exit status of one that ends the command (-h). */
static int parse_option(struct options *o, int c, int argc, char **argv)
{
	struct rank_opts *r = &o->r;

	switch (c) {
	case OPT_INDEX: o->index = optarg; break;
	case OPT_MODE:
		if (strcmp(optarg, "hybrid") && strcmp(optarg, "keyword") && strcmp(optarg, "semantic"))
			usage_error(usage_text, "--mode: expected hybrid, keyword or semantic, got '%s'", optarg);
		r->mode = optarg;
		break;
	case OPT_TYPE: r->type = optarg; break;
	case OPT_LANG: r->lang = optarg; break;
	case OPT_PATH: r->path = optarg; break;
	case OPT_SCOPE:
		if (strcmp(optarg, "impl") && strcmp(optarg, "test") && strcmp(optarg, "all"))
			usage_error(usage_text, "--scope: expected impl, test or all, got '%s'", optarg);
		r->scope = optarg;
		break;
	case OPT_LIMIT: r->limit = parse_long_arg(usage_text, "--limit", optarg, 1, 200); break;
	case OPT_PER_FILE: r->per_file = parse_long_arg(usage_text, "--per-file", optarg, 1, 1000); break;
	case OPT_MIN_SCORE: r->min_score = parse_unit("--min-score", optarg); break;
	case OPT_FORMAT:
		if (!strcmp(optarg, "full"))
			r->full = 1;
		else if (strcmp(optarg, "locate"))
			usage_error(usage_text, "--format: expected locate or full, got '%s'", optarg);
		break;
	case OPT_EXPLAIN: r->explain = 1; break;
	case OPT_BUDGET: r->budget = parse_long_arg(usage_text, "--budget", optarg, 10, 100000); break;
	case OPT_DEPTH: r->depth = parse_long_arg(usage_text, "--depth", optarg, 0, 2); break;
	case OPT_MAX_COUPLED: r->max_coupled = parse_long_arg(usage_text, "--max-coupled", optarg, 0, 20); break;
	case OPT_SCAN: o->scan = 1; break;
	case OPT_NO_SERVER: o->no_server = 1; break;
	case OPT_JSON: o->json = 1; break;
	case OPT_IDLE: o->idle = parse_long_arg(usage_text, "--idle", optarg, 1, 86400 * 365); break;
	case OPT_STOP: o->stop = 1; break;
	case OPT_FUSION:
		if (strcmp(optarg, "rrf") && strcmp(optarg, "learned"))
			usage_error(usage_text, "--fusion: expected rrf or learned, got '%s'", optarg);
		r->learned = !strcmp(optarg, "learned");
		break;
	case OPT_MODEL: r->model = optarg; r->learned = 1; break;
	case OPT_FEATURES: r->features = optarg; break;
	case OPT_CHUNK_ORDER:
		if (!strcmp(optarg, "model"))
			r->chunk_order = RANK_CHUNKS_MODEL;
		else if (!strcmp(optarg, "evidence"))
			r->chunk_order = RANK_CHUNKS_EVIDENCE;
		else if (!strcmp(optarg, "fused"))
			r->chunk_order = RANK_CHUNKS_FUSED;
		else
			usage_error(usage_text, "--chunk-order: expected model, evidence or fused, got '%s'",
				    optarg);
		break;
	case OPT_CHUNK_FEATURES: r->chunk_features = optarg; break;
	case OPT_CHUNK_EXPAND: r->chunk_expand = (int)parse_long_arg(usage_text, "--chunk-expand", optarg, 0, 20); break;
	case OPT_QUERY_FILE: o->query_file = optarg; break;
	case OPT_SEM_IDF: r->sem_idf = parse_range("--semantic-idf", optarg, 0, 4); break;
	case OPT_SEM_TITLE: r->sem_title = parse_range("--semantic-title", optarg, 0, 20); break;
	case OPT_SEG_WEIGHT: parse_segment_weight(r, optarg); break;
	case OPT_SEM_PATH: r->sem_path = parse_range("--semantic-path", optarg, 0, 4); break;
	case OPT_THRESHOLD:
		o->threshold_set = 1;
		r->threshold = parse_unit("--threshold", optarg);
		break;
	case OPT_VERSION:
		return print_version("ci-rank");
	case 'h':
		fputs(usage_text, stdout);
		return close_stdout(EXIT_OK);
	default:
		usage_error(usage_text, "%s", bad_option(c, argc, argv));
	}
	return -1;
}

/* Where the element p (the very string, not its text) was in v: -1 when nowhere. */
static int arg_pos(char **v, int n, const char *p)
{
	for (int i = 0; i < n; i++)
		if (v[i] == p)
			return i;
	return -1;
}

/*
 * --query-file: the text of path ('-': standard input) into q, or an exit
 * with a message (a file that cannot be read, one with a NUL byte: not a text).
 */
static void read_query_file(const char *path, struct buf *q)
{
	char *text;
	size_t len;

	if (read_file(strcmp(path, "-") ? path : "/dev/stdin", &text, &len) < 0)
		exit(EXIT_IO);
	if (memchr(text, '\0', len))
		die_code(EXIT_USAGE, "--query-file '%s': a NUL byte: not a text", path);
	if (!len)
		die_code(EXIT_USAGE, "--query-file '%s': empty: no query given", path);
	buf_add(q, text, len);
	free(text);
}

/*
 * The command word after the options (serve, context, similar), then the
 * query's words into q.  given: the command line as given.  Returns -1, or
 * 0 for serve.
 */
static int parse_words(struct options *o, int argc, char **argv, char **given, struct buf *q)
{
	int word_is_query = 0;

	/*
	 * A word after "--" is the query's, never a command: `ci-rank -- serve`
	 * looks for serve (getopt moves "--" before the words that were ahead of
	 * it, so where each was is read from the command line as given).
	 */
	if (optind > 1 && optind < argc && !strcmp(argv[optind - 1], "--") &&
	    arg_pos(given, argc, argv[optind]) > arg_pos(given, argc, argv[optind - 1]))
		word_is_query = 1;
	if (!word_is_query && optind < argc && !strcmp(argv[optind], "serve")) {
		if (optind + 1 != argc)
			usage_error(usage_text, "serve takes no arguments");
		return 0;
	}
	if (o->idle || o->stop)
		usage_error(usage_text, "--%s goes with serve", o->idle ? "idle" : "stop");
	if (!word_is_query && (optind + 1 < argc || (o->query_file && optind + 1 == argc)) &&
	    !strcmp(argv[optind], "context")) {
		o->context = 1;
		optind++;
	} else if (!word_is_query && optind < argc && !strcmp(argv[optind], "similar")) {
		o->similar = 1;
		optind++;
		if (!o->threshold_set)
			o->r.threshold = 0.85;
		if (o->scan && optind < argc)
			usage_error(usage_text, "similar --scan takes no target");
		if (!o->scan && optind + 1 != argc)
			usage_error(usage_text, "similar: expected one target: <path>:<symbol>, <path>:<line> or a text");
	} else if (o->scan) {
		usage_error(usage_text, "--scan goes with similar");
	}
	if (o->query_file) {	/* read by whoever answers: a server's worker has our stdin */
		if (optind < argc || o->scan)
			usage_error(usage_text, "--query-file: the query is the file's, not the command line's");
		return -1;
	}
	for (int i = optind; i < argc; i++) {
		if (q->len)
			buf_addch(q, ' ');
		buf_addstr(q, argv[i]);
	}
	if (!q->len && !o->scan)
		usage_error(usage_text, "no query given");
	return -1;
}

/* ---- the server (libcommon/index/fork-server.h) ---- */

/*
 * In the server, before it serves and before each fork: the snapshot of the
 * vectors and the model, and the candidates' metadata (rank/preload.c).
 */
static void server_preload(void *data, const char *path)
{
	rank_preload_refresh(data, path);
	rank_preload_meta_now(data, path);
}

static void server_refresh_all(void *data, const char *path)
{
	rank_preload_refresh(data, path);
	rank_preload_meta_check(data, path, fork_server_child_init);
}

static int meta_watch_fd(void *data)
{
	return rank_preload_watch_fd(data);
}

static void meta_on_watch(void *data)
{
	rank_preload_on_watch(data);
}

int main(int argc, char **argv);

/* In a worker: the command line, as a process of its own would run it. */
static int server_run(void *data, int argc, char **argv)
{
	(void)data;
	server_child = 1;
	optind = 0;	/* getopt anew */
	return main(argc, argv);
}

static int serve(const struct options *o)
{
	static const struct fork_server_ops ops = {
		.data = &pre,
		.preload = server_preload, .refresh = server_refresh_all, .run = server_run,
		.watch_fd = meta_watch_fd, .on_watch = meta_on_watch,
	};

	rank_preload_init(&pre);
	return fork_server_command("rank", o->index, o->stop,
				   o->idle ? o->idle : fork_server_idle("CI_RANK_SERVER_IDLE", ENV_DIE), &ops);
}

/*
 * Run this command line (argc, argv as given) in the index's server if one
 * answers: its exit status, else -1 (run it here).  An index with a snapshot
 * of its vectors gets a server started for the next command.
 */
static int call_server(const struct options *o, const char *path, int argc, char **argv)
{
	char *sock, *vec;
	int rc;

	if (o->no_server || server_env("CI_RANK_SERVER") == SERVER_OFF)
		return -1;
	sock = fork_server_socket("rank", path);
	if (!sock)
		return -1;
	rc = fork_server_call(sock, argc, argv);
	if (rc < 0) {
		vec = vecsnap_path(path);
		if (access(vec, R_OK) == 0)
			fork_server_spawn(path, fork_server_idle("CI_RANK_SERVER_IDLE", ENV_WARN));
		free(vec);
	}
	free(sock);
	return rc;
}

/* ---- a query ---- */

/*
 * --fusion not given: CI_RANK_FUSION, else learned in hybrid and semantic
 * mode (the model's members were fitted on those modes' signals; keyword mode
 * has none). 0, or -1 after a message.
 */
static int fusion_default(struct rank_opts *r)
{
	const char *f = getenv("CI_RANK_FUSION");

	if (r->learned >= 0)
		return 0;
	if (f && *f && strcmp(f, "rrf") && strcmp(f, "learned"))
		return error("CI_RANK_FUSION: expected rrf or learned, got '%s'", f);
	if (f && *f)
		r->learned = !strcmp(f, "learned");
	else
		r->learned = !strcmp(r->mode, "hybrid") || !strcmp(r->mode, "semantic");
	return 0;
}

/*
 * The answer of the query q over r into out: an exit status; *failed set
 * when the query could not be answered (nothing to write).
 */
static int run_query(struct options *o, const struct ranker *r, const char *q, struct buf *out, int *failed)
{
	struct rank_query rq;
	int ret;

	rank_query_init(&rq, r, &o->r, q);
	if (o->similar) {
		ret = o->scan ? rank_similar_scan(&rq, out) : rank_similar_nearest(&rq, out, q);
		goto done;
	}
	*failed = 1;
	if (rank_query_signals(&rq) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	rank_query_fuse(&rq);
	if (fusion_default(&o->r) < 0) {
		ret = EXIT_USAGE;
		goto done;
	}
	if ((o->r.learned || o->r.features || o->r.chunk_features) && rank_learned_fusion(&rq) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	if ((o->r.chunk_order != RANK_CHUNKS_FUSED || o->r.chunk_features) && rank_order_chunks(&rq) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	*failed = 0;
	ret = o->context ? rank_context_bundle(&rq, out) : rank_write_hits(&rq, out);
done:
	rank_query_release(&rq);
	return ret;
}

/* Open the index at path and answer: an exit status. */
static int run(struct options *o, const char *path, const char *q, struct rank_trace *trace)
{
	struct ci_index *ix;
	struct ranker r;
	struct buf out = BUF_INIT;
	int rc, ret, failed = 0;

	/*
	 * SQLite's page cache on huge pages: setting it up touches every slot,
	 * so its size is zeroed by the kernel in every process (a worker too).
	 * A query used 600-810 pages of 8 KiB on 137k chunks; 4 MiB (the rest
	 * from malloc) answered 2-3 ms sooner at p50 than 16 (A/B, 60 queries each).
	 */
	index_huge_page_cache(4 << 20);
	rank_trace(trace, "open");
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc) {
		if (rc > 0)
			error("no index at '%s': run 'ci-index build' first", path);
		return EXIT_IO;
	}
	ranker_init(&r, index_db(ix), path, server_child ? &pre : NULL, trace);
	ret = run_query(o, &r, q, &out, &failed);
	if (failed) {
		buf_release(&out);
		index_close(ix);
		return ret;
	}
	rank_trace(trace, "answered");
	fwrite(out.buf, 1, out.len, stdout);
	buf_release(&out);
	index_close(ix);
	ret = close_stdout(ret);
	rank_trace(trace, "closed");
	return ret;
}

/* ---- a shard set: each shard's query on a thread (libcommon/fleet) ---- */

/* The query of every shard: the command line parsed once. */
struct shards_query {
	struct options o;
	struct buf q;		/* the query's words */
	struct rank_model model[RANK_MEMBERS];	/* the learned fusion's members (by RANK_MEMBER_*
						   bits), read once (o.r.model_parsed) */
	struct embed_model *path_model;	/* ci-code, read once when a member weighs path_cosine or names_cosine */
};

/*
 * The shards' command line (fleet_cmd.prepare): 0 with *state, or 1 for what
 * only a process of its own answers (--features, --chunk-features write a file, serve,
 * --help, --version).
 */
static int shards_prepare(int argc, char **argv, void **state)
{
	struct shards_query *sq;
	char **given;
	int c;

	*state = NULL;
	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)
		if (!strcmp(argv[c], "-h") || !strcmp(argv[c], "--help") || !strcmp(argv[c], "--version"))
			return 1;
	sq = xcalloc(1, sizeof(*sq));
	buf_init(&sq->q, 0);
	rank_opts_init(&sq->o.r);
	sq->o.r.model_json = ci_rank_model_json;
	given = xcalloc((size_t)argc + 1, sizeof(*given));
	memcpy(given, argv, (size_t)argc * sizeof(*given));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1)
		parse_option(&sq->o, c, argc, argv);
	c = parse_words(&sq->o, argc, argv, given, &sq->q);
	free(given);
	if (c != 0 && sq->o.query_file)
		read_query_file(sq->o.query_file, &sq->q);
	if (c == 0 || sq->o.r.features || sq->o.r.chunk_features) {
		buf_release(&sq->q);
		free(sq);
		return 1;
	}
	if (fusion_default(&sq->o.r) < 0)
		exit(EXIT_USAGE);
	if (sq->o.r.learned > 0) {
		struct buf why = BUF_INIT;
		int k;

		util_report_to(&why);	/* a model that cannot be read: each shard says so, as alone */
		for (k = 0; k < RANK_MEMBERS && !rank_model_load(&sq->o.r, &sq->model[k], k); k++)
			;
		for (int j = 0; k == RANK_MEMBERS && j < RANK_MEMBERS; j++)
			sq->o.r.model_parsed[j] = &sq->model[j];
		/* ci-code for path_cosine..., once for every shard (a shard reads it itself when this fails) */
		for (int j = 0; k == RANK_MEMBERS && j < RANK_MEMBERS; j++)
			if (rank_model_cosines(&sq->model[j])) {
				if (embed_model_open(&sq->path_model, embed_model_resolve("ci-code")) < 0)
					sq->path_model = NULL;
				break;
			}
		sq->o.r.path_model = sq->path_model;
		util_report_to(NULL);
		buf_release(&why);
	}
	*state = sq;
	return 0;
}

/* One shard (fleet_cmd.shard): the answer over its index, as `ci-rank --index <it>`. */
static int shards_one(void *state, struct ci_index *ix, const char *index_path, void *res,
		      struct buf *out, struct buf *err)
{
	struct shards_query *sq = state;	/* read-only: fusion_default ran in prepare */
	struct ranker r;
	int ret, failed = 0;
	size_t at = out->len;

	(void)err;
	ranker_init(&r, index_db(ix), index_path, res, NULL);
	ret = run_query(&sq->o, &r, sq->q.buf, out, &failed);
	if (failed)
		buf_setlen(out, at);
	sqlite3_exec(index_db(ix), "ROLLBACK", NULL, NULL, NULL);	/* ranker_init's read transaction */
	return ret;
}

static void shards_release(void *state)
{
	struct shards_query *sq = state;

	if (sq->path_model)
		embed_model_close(sq->path_model);
	buf_release(&sq->q);
	free(sq);
}

/*
 * Queries of 1 to 3 of the shard's most common terms answered once in the
 * server (the answers dropped): the statements a query prepares are then
 * prepared (kept by res's cache), and the pages it reads are in the
 * connection's cache, for every worker forked after.
 */
static void shards_warm(struct ci_index *ix, const char *index_path, const struct rank_preload *res)
{
	sqlite3_stmt *st;
	struct buf words = BUF_INIT, out = BUF_INIT, why = BUF_INIT;
	struct options o;
	int failed;

	if (sqlite3_prepare_v2(index_db(ix), "SELECT term FROM term_df ORDER BY df DESC, term LIMIT 3", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	memset(&o, 0, sizeof(o));
	rank_opts_init(&o.r);
	o.r.model_json = ci_rank_model_json;
	util_report_to(&why);
	while (sqlite3_step(st) == SQLITE_ROW && fusion_default(&o.r) == 0) {
		struct ranker r;

		buf_addf(&words, "%s%s", words.len ? " " : "", (const char *)sqlite3_column_text(st, 0));
		ranker_init(&r, index_db(ix), index_path, res, NULL);
		run_query(&o, &r, words.buf, &out, &failed);
		sqlite3_exec(index_db(ix), "ROLLBACK", NULL, NULL, NULL);
		buf_reset(&out);
	}
	util_report_to(NULL);
	sqlite3_finalize(st);
	buf_release(&words);
	buf_release(&out);
	buf_release(&why);
}

/* A shard server's (fleet_cmd.resident): the shard's candidates' metadata and statements, kept. */
static void *shards_resident(struct ci_index *ix, const char *index_path)
{
	struct rank_preload *res;

	/*
	 * ranker_init leaves a connection with kept statements as it is: its
	 * cache as ranker_init sets it, but the file left mapped (index_open's
	 * mapping, its pages mapped by the warm-up in the server): a worker
	 * over 1,000 small shards used 400 ms of CPU a query so, 470-590 with
	 * the pages read into the cache (bench/fleet.sh's query, 4 runs each)
	 */
	sqlite3_exec(index_db(ix), "PRAGMA cache_size = -65536", NULL, NULL, NULL);
	/*
	 * and the table of the terms' document counts, made here, outside a
	 * query's transaction: made in one, it went with its rollback, and
	 * made again each query it changed the schema, which makes every kept
	 * statement prepare itself again
	 */
	sqlite3_exec(index_db(ix), "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab USING fts5vocab(main, chunks_fts, row)",
		     NULL, NULL, NULL);
	res = rank_preload_of_db(index_db(ix));
	if (res)
		shards_warm(ix, index_path, res);
	return res;
}

static void shards_resident_release(void *res)
{
	rank_preload_free(res);
}

int main(int argc, char **argv)
{
	struct options o;
	struct rank_trace trace = RANK_TRACE_INIT;
	struct buf q = BUF_INIT;
	char **given, *path;
	int c, rc;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	if (server_child)
		rank_trace(&trace, "worker");
	if (fleet_wanted(argc, argv)) {	/* a shard set: libcommon/fleet, cmd/fleet-serve.h */
		const struct fleet_cmd cmd = { FLEET_RANK, main, shards_prepare, shards_one, shards_release,
					       shards_resident, shards_resident_release, NULL };

		return close_stdout(fleet_command(&cmd, argc, argv));
	}

	/* the command line as given, for the server (getopt permutes argv) */
	given = xcalloc((size_t)argc + 1, sizeof(*given));
	memcpy(given, argv, (size_t)argc * sizeof(*given));
	memset(&o, 0, sizeof(o));
	rank_opts_init(&o.r);
	o.r.model_json = ci_rank_model_json;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1)
		if ((rc = parse_option(&o, c, argc, argv)) >= 0)
			goto done;
	if (parse_words(&o, argc, argv, given, &q) == 0) {
		rc = serve(&o);
		goto done;
	}
	if (!server_child && human_wanted(o.json) && (human_pid = human_start()) > 0)
		atexit(human_at_exit);
	if (o.index) {
		path = xstrdup(o.index);
	} else if (!(path = index_find("."))) {
		error_errno("cannot open '.'");
		rc = EXIT_IO;
		goto done;
	}
	if (server_child || (rc = call_server(&o, path, argc, given)) < 0) {
		if (o.query_file)
			read_query_file(o.query_file, &q);
		rc = run(&o, path, q.buf, &trace);
	}
	free(path);
done:
	free(given);
	buf_release(&q);
	return rc;
}
