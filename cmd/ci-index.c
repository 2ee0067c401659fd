/*
 * ci-index: create, update, inspect and fill the SQLite index of a repository.
 *
 *   ci-index build [<path>]     chunk the repository into a new index
 *   ci-index update             re-read what changed since
 *   ci-index status             what the index holds, as JSON
 *   ci-index load               store records read from standard input
 *   ci-index drop               delete the index
 *
 * Shaped by two workloads: a first build of a large tree (everything goes through
 * the same record loader as `ci-chunk | ci-index load`, into a new file that
 * replaces the old one only when complete), and an agent's edit loop (an update
 * after one changed file stats the tree, re-reads that file, and commits one
 * transaction, in tens of milliseconds).
 *
 * This file is the command: options, the subcommands' arguments, and the
 * index's server as its callers see it (an update handed to it, a server
 * started after a build).  The engine is libcommon/index (run.h).
 */
#include "core/common.h"
#include "index/run.h"
#include "index/server.h"
#include "index/fork-server.h"
#include "index/index.h"
#include "graph/gstore.h"
#include "embed/vec.h"

#include <getopt.h>
#include <time.h>
#include <git2.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static const char usage_text[] =
	"usage: ci-index [--index <db>] [options] <command> [<args>]\n"
	"\n"
	"Commands:\n"
	"  build [<path>]          index the repository containing <path> (default: .) anew\n"
	"  build --rev <rev> [<path>]\n"
	"                          index the tree of commit <rev> from git's object\n"
	"                          database, without a checkout (a snapshot: no update)\n"
	"  update                  re-read files changed since the last build or update\n"
	"  status                  print what the index holds as a JSON record\n"
	"  load                    store records (file, chunk, def, ref, import, commit,\n"
	"                          coupling) read from standard input\n"
	"  check                   read the whole index (PRAGMA quick_check): ok, or what\n"
	"                          is damaged (exit 3)\n"
	"  drop                    delete the index\n"
	"  serve [--idle <s>] [--stop]\n"
	"                          watch the tree and run updates from memory (started by\n"
	"                          update itself; exits after <s> idle seconds, default\n"
	"                          $CI_INDEX_SERVER_IDLE, else 600)\n"
	"\n"
	"Options:\n"
	"      --index <db>        the index file (default: $CI_INDEX, or\n"
	"                          <root>/.ci-index/index.db)\n"
	"      --embed             build, update, load: embed (in-process) the chunks and\n"
	"                          commits that have no vector; update and load do so\n"
	"                          anyway when the index holds vectors\n"
	"      --history           build, update: also store the git history (commits and\n"
	"                          co-change coupling): ci-couple history | ci-index load\n"
	"      --model <model>     the embedding model, a name (use-lite, ci-code) or a\n"
	"                          directory (default: the index's, else as ci-embed's)\n"
	"      --dims <n>          ci-code's vectors cut to their first <n> values, as\n"
	"                          ci-embed --dims (model \"ci-code/<n>\"; default: the\n"
	"                          index's, else all)\n"
	"      --vectors <format>  store vectors as f32 or int8 (a byte per value and a\n"
	"                          scale per vector; default: the index's, else f32)\n"
	"  -j, --threads <n>       parse and embed with <n> threads (default: the number of CPUs)\n"
	"      --progress          report progress on stderr even when it is not a terminal\n"
	"      --no-progress       never report progress\n"
	"      --no-graph          build, update: do not store the call graph's answers\n"
	"                          (ci-refs dead and arch then bind the whole graph)\n"
	"      --no-server         update: run here, not in the index's server, and start\n"
	"                          none (also: CI_INDEX_SERVER=0)\n"
	"  -v, --verbose           say more on stderr\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

static const struct option long_options[] = {
	{ "index", required_argument, NULL, 'I' },
	{ "threads", required_argument, NULL, 'j' },
	{ "embed", no_argument, NULL, 'E' },
	{ "history", no_argument, NULL, 'H' },
	{ "model", required_argument, NULL, 'M' },
	{ "dims", required_argument, NULL, 'D' },
	{ "vectors", required_argument, NULL, 'V' },
	{ "progress", no_argument, NULL, 'P' },
	{ "no-progress", no_argument, NULL, 'N' },
	{ "no-server", no_argument, NULL, 'S' },
	{ "no-graph", no_argument, NULL, 'G' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};
/*
 * An update run by the index's server if one answers: its exit status, else
 * -1 (run it here); then a server is started for the next one.
 */
/*
 * The index that a server may serve for this command line (malloc'd), and its
 * socket into *sock (NULL when there is no private place for one); NULL when
 * no server is to be used (a worker, --no-server, CI_INDEX_SERVER=0, no index).
 */
static char *server_index(const struct ix_run *r, char **sock)
{
	char *path;

	*sock = NULL;
	if (r->srv || r->o.no_server || server_env("CI_INDEX_SERVER") == SERVER_OFF)
		return NULL;
	path = r->o.index ? xstrdup(r->o.index) : index_find(".");
	if (!path || access(path, F_OK) < 0) {
		free(path);
		return NULL;
	}
	*sock = fork_server_socket("index", path);
	return path;
}

/*
 * Say once, on a terminal, that a build or update left the index's server
 * running: a process that lives on after the command is no surprise then.
 */
static void server_notice(const struct ix_run *r)
{
	if (r->srv || !isatty(2))
		return;
	fprintf(stderr, "%s: the index's server runs in the background (it keeps searches "
		"fast and exits after %ld s idle; 'ci-index serve --stop' stops it, "
		"CI_INDEX_SERVER=0 starts none)\n", progname, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE));
}

static int update_in_server(const struct ix_run *r, int argc, char **argv)
{
	int always = server_env("CI_INDEX_SERVER") == SERVER_ALWAYS;
	char *sock, *path = server_index(r, &sock);
	int rc = -1;

	if (sock) {
		rc = fork_server_call(sock, argc, argv);
		if (rc < 0) {
			fork_server_spawn(path, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE));
			server_notice(r);
			/* always: wait for it (its start takes a second or two), up to a minute */
			for (int i = 0; rc < 0 && always && i < 3000; i++) {
				struct timespec ts = { 0, 20000000 };
				nanosleep(&ts, NULL);
				rc = fork_server_call(sock, argc, argv);
			}
		}
	}
	free(sock);
	free(path);
	return rc;
}

/*
 * After a build of a work tree (not --rev): the index's server for the next
 * commands, started anew.  One that watched the index the build replaced
 * vouches for nothing in it (its last update is not this index's); a new one
 * runs its own first update and then does (server.c).
 */
static void server_after_build(struct ix_run *r)
{
	char *sock, *path;
	int i;

	if (r->build_rev)
		return;	/* a commit's tree: nothing to watch */
	path = server_index(r, &sock);
	if (sock) {
		if (fork_server_stop(sock) == 0) {
			/* gone once its socket is (it lets its lock go just before) */
			for (i = 0; i < 200 && access(sock, F_OK) == 0; i++) {
				struct timespec ts = { 0, 10000000 };
				nanosleep(&ts, NULL);
			}
		}
		/* until it holds its lock: a `serve --stop` right after the build
		 * then waits for it and stops it, instead of finding none */
		int done = -1;
		if (fork_server_spawn_wait(path, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE), &done) == 0)
			server_notice(r);
		/* the server holds its lock: the build's may go, and its first
		 * update (which takes the index's lock) is waited for, so that what
		 * changes in the tree after the build is the next update's */
		if (r->build_lock >= 0) {
			close(r->build_lock);
			r->build_lock = -1;
		}
		fork_server_wait_done(done, 60000);
	}
	free(sock);
	free(path);
}


/*
 * The server of `ci-index serve` in this process: fork_server_ops' callbacks
 * carry no payload, so they find it here; a worker (forked from the server)
 * finds it too, and its update reads the server's watch through it.  NULL in
 * any other process.
 */
static struct ix_server *server;

int main(int argc, char **argv);

/* In a worker: the command line, as a process of its own would run it. */
static int run_main(int argc, char **argv)
{
	ix_server_worker_init(server);
	optind = 0;	/* getopt anew */
	return main(argc, argv);
}

static int server_run(void *data, int argc, char **argv)
{
	(void)data;
	return run_main(argc, argv);
}

static void srv_preload(void *s, const char *path) { ix_server_preload(s, path); }
static void srv_refresh(void *s, const char *path) { ix_server_refresh(s, path); }
static int srv_watch_fd(void *s) { return ix_server_watch_fd(s); }
static void srv_events(void *s) { ix_server_events(s); }
static void srv_forked(void *s, pid_t pid) { ix_server_forked(s, pid); }
static void srv_ended(void *s, pid_t pid, int status) { ix_server_ended(s, pid, status); }
static void srv_query(void *s, const char *q, struct buf *out) { ix_server_query(s, q, out); }

static int cmd_serve(struct ix_run *r, int argc, char **argv)
{
	struct fork_server_ops ops = {
		.preload = srv_preload, .refresh = srv_refresh, .run = server_run,
		.watch_fd = srv_watch_fd, .on_watch = srv_events,
		.forked = srv_forked, .ended = srv_ended, .query = srv_query,
	};
	long idle = 0;
	int stop = 0, i, ret;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--stop"))
			stop = 1;
		else if (!strcmp(argv[i], "--idle")) {
			if (i + 1 == argc)
				usage_error(usage_text, "serve: --idle needs a number of seconds");
			idle = parse_long_arg(usage_text, "--idle", argv[++i], 1, 86400L * 365);
		} else
			usage_error(usage_text, "serve: unexpected argument '%s'", argv[i]);
	}
	server = ix_server_new(run_main);
	ops.data = server;
	ret = fork_server_command("index", r->o.index, stop,
				  idle ? idle : fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE), &ops);
	ix_server_free(server);
	server = NULL;
	return ret;
}

static int cmd_build(struct ix_run *r, int argc, char **argv)
{
	const char *rev = NULL, *start = NULL;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--rev")) {
			if (i + 1 >= argc)
				usage_error(usage_text, "build: --rev needs a revision");
			rev = argv[++i];
		} else if (!strncmp(argv[i], "--rev=", 6)) {
			rev = argv[i] + 6;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usage_error(usage_text, "build: unknown option '%s'", argv[i]);
		} else if (start) {
			usage_error(usage_text, "build takes at most one path");
		} else {
			start = argv[i];
		}
	}
	if (rev && !*rev)
		usage_error(usage_text, "build: --rev needs a revision");
	ret = ix_build(r, start, rev);
	if (ret == EXIT_OK && r->o.history)
		ret = ix_load_history(r, r->build_dir, 0, rev);
	if (ret == EXIT_OK)
		gstore_run(r, NULL);
	if (ret == EXIT_OK)
		server_after_build(r);
	return ret;
}

/* update, here (not in the index's server). */
static int cmd_update(struct ix_run *r, int cmd_argc)
{
	struct gstore_hook h;
	int ret;

	if (cmd_argc)
		usage_error(usage_text, "update takes no arguments");
	gstore_hook_attach(r, &h);
	ret = ix_update(r);
	gstore_hook_detach(r, &h);
	if (ret == EXIT_OK && r->o.history) {
		ix_run_close_deferred(r);	/* the history is stored under the same lock */
		ret = ix_load_history(r, ".", 1, NULL);
	}
	if (ret == EXIT_OK)
		gstore_run(r, &h);
	gstore_hook_free(&h);
	return ret;
}

static int parse_options(struct ix_opts *o, int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:j:vh", long_options, NULL)) != -1) {
		switch (c) {
		case 'I': o->index = optarg; break;
		case 'j':
			o->threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
			break;
		case 'P': o->progress = 1; break;
		case 'E': o->embed = 1; break;
		case 'H': o->history = 1; break;
		case 'M': o->model = optarg; break;
		case 'D': o->dims = parse_long_arg(usage_text, "--dims", optarg, 1, 4096); break;
		case 'V': {
			enum vec_format f;
			if (vec_format_parse(&f, optarg) < 0)
				usage_error(usage_text, "--vectors: expected f32 or int8, not '%s'", optarg);
			o->vectors = optarg;
			break;
		}
		case 'N': o->progress = 0; break;
		case 'S': o->no_server = 1; break;
		case 'G': o->no_graph = 1; break;
		case 'v': verbosity++; break;
		case OPT_VERSION:
			return print_version("ci-index");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (o->progress < 0)
		o->progress = isatty(2);
	return -1;
}

/* A command that takes no arguments: usage when it has some. */
static void no_args(const char *cmd, int argc, const char *what)
{
	if (argc)
		usage_error(usage_text, "%s %s", cmd, what);
}

/* Run the command argv[0] (argc: it and its arguments). */
static int dispatch(struct ix_run *r, int argc, char **argv)
{
	const char *cmd = argv[0];
	int ret;

	/* these repair a damaged index, and check what they read themselves */
	if (!strcmp(cmd, "build") || !strcmp(cmd, "update") || !strcmp(cmd, "serve"))
		r->o.damage = INDEX_NOTE_DAMAGE;
	/* libgit2 is loaded and started when first needed (cmd/git-lazy.c, walk_git_start) */
	if (!strcmp(cmd, "build"))
		return cmd_build(r, argc - 1, argv + 1);
	if (!strcmp(cmd, "update"))
		return cmd_update(r, argc - 1);
	if (!strcmp(cmd, "status")) {
		no_args("status", argc - 1, "takes no arguments");
		return ix_status(r, stdout);
	}
	if (!strcmp(cmd, "load")) {
		no_args("load", argc - 1, "reads standard input and takes no arguments");
		return ix_load(r, ".", stdin, "<stdin>", NULL);
	}
	if (!strcmp(cmd, "drop")) {
		no_args("drop", argc - 1, "takes no arguments");
		return ix_drop(r);
	}
	if (!strcmp(cmd, "check")) {
		no_args("check", argc - 1, "takes no arguments");
		if ((ret = ix_check(r)) == EXIT_OK)
			puts("ok");
		return ret;
	}
	if (!strcmp(cmd, "serve"))
		return cmd_serve(r, argc - 1, argv + 1);
	usage_error(usage_text, "unknown command '%s'", cmd);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct ix_run run;
	char **whole;
	int ret;

	util_init(argv[0]);
#ifdef __GLIBC__
	/*
	 * A fixed trim threshold (glibc's own): glibc raises it with each large
	 * block freed, up to 64 MiB, and the free top of an arena is given back
	 * only on a free() into it: the parsing and embedding threads' arenas
	 * kept theirs resident once the threads had ended, under the peak of
	 * the call graph's store that follows (4 MB on fs/, kernel/ and mm/,
	 * 21 MB on the whole Linux tree: bench/README.md, "Session 21").
	 */
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
#endif
	list_options(argc, argv, long_options);
	ix_run_init(&run);
	run.srv = server;	/* a worker of this process's server, or NULL */
	/* the command line as given, for the server (getopt may permute argv) */
	whole = xcalloc((size_t)argc + 1, sizeof(*whole));
	memcpy(whole, argv, (size_t)argc * sizeof(*whole));
	if ((ret = parse_options(&run.o, argc, argv)) >= 0) {
		free(whole);
		return ret;
	}
	/* anew in a server's worker: the server's own environment is not the caller's */
	ix_run_hooks(&run);
	if (optind >= argc)
		usage_error(usage_text, "no command given");
	if (!strcmp(argv[optind], "update") && (ret = update_in_server(&run, argc, whole)) >= 0) {
		free(whole);
		return ret;	/* the server's worker ran it */
	}
	free(whole);
	ret = dispatch(&run, argc - optind, argv + optind);
	ix_run_release(&run);
	ret = close_stdout(ret);
	if (run.srv && run.deferred_ix) {
		/* the caller has its answer; the WAL is checkpointed after */
		fork_server_reply(ret);
		ix_run_close_deferred(&run);
	}
	git_libgit2_shutdown();
	return ret;
}
