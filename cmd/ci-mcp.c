/*
 * ci-mcp: a Model Context Protocol server that serves ci's commands as tools,
 * over stdio (one JSON-RPC message a line) or Streamable HTTP.  This file
 * parses the options and starts the server; the server is libcommon/mcp
 * (mcp.h says how it works: the tool tables, the jq mapping, the transports,
 * the calls as child process groups).
 */
#include "core/common.h"
#include "mcp/mcp.h"
#include "parse/walk.h"
#include "fleet/fleet.h"
#include "index/fork-server.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <git2.h>
#include <signal.h>

static const char usage_text[] =
	"usage: ci-mcp [--list-tools] [--profile <name>] [--table <file>] [--http <addr>] [options]\n"
	"\n"
	"Serve ci's commands as MCP tools for the repository containing the current\n"
	"directory: over standard input and output (JSON-RPC 2.0, one message a line),\n"
	"or over Streamable HTTP with --http.\n"
	"\n"
	"      --list-tools        print the tool table as JSON and exit\n"
	"      --profile <name>    the tool set to serve (default: ci)\n"
	"      --table <file>      serve the tool table in <file> instead of a profile's\n"
	"      --http <addr>       serve Streamable HTTP at http://<addr>/mcp (host:port;\n"
	"                          port 0 picks one) instead of standard input and output\n"
	"      --allow-remote      let --http listen on an address that is not loopback\n"
	"      --allow-origin <o>  also accept requests from the web origin <o> (repeatable)\n"
	"      --timeout <s>       time limit of one tool call (1-3600; default 120)\n"
	"      --wait <s>          how long a call waits for the index before it answers\n"
	"                          from what is ready (0-600; default 5)\n"
	"      --jobs <n>          tool calls run at once; more wait their turn (1-64; default 4)\n"
	"      --max-output <n>    cap on one result's bytes (1024-67108864; default 1048576)\n"
	"      --repo <name>=<dir> serve the repository at <dir> as <name>, chosen by a call's\n"
	"                          \"repo\" argument (repeatable; default: the current one)\n"
	"      --shards <set>      serve a shard set (a directory or a manifest of indexes):\n"
	"                          searches run over every shard, or those of a call's \"repo\"\n"
	"      --no-shard-server   with --shards: start no resident server of the set (the\n"
	"                          commands then open every shard's index at each call)\n"
	"  -v, --verbose           log requests on stderr\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum { OPT_LIST = 256, OPT_PROFILE, OPT_TABLE, OPT_HTTP, OPT_ALLOW_REMOTE, OPT_ALLOW_ORIGIN,
       OPT_TIMEOUT, OPT_WAIT, OPT_JOBS, OPT_MAX_OUTPUT, OPT_REPO, OPT_SHARDS, OPT_NO_SHARD_SERVER };

static const struct option long_options[] = {
	{ "list-tools", no_argument, NULL, OPT_LIST },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "table", required_argument, NULL, OPT_TABLE },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
	{ "allow-origin", required_argument, NULL, OPT_ALLOW_ORIGIN },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
	{ "repo", required_argument, NULL, OPT_REPO },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "no-shard-server", no_argument, NULL, OPT_NO_SHARD_SERVER },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* What main() is asked besides the server's own options. */
struct options {
	const char *profile;	/* --profile (default ci) */
	const char *table_file;	/* --table, or NULL */
	const char *http_addr;	/* --http, or NULL: stdio */
	const char *shards;	/* --shards, or NULL */
	int list;		/* --list-tools */
	int allow_remote;	/* --allow-remote */
};

/* For the signal handler: it sets stopping and wakes the loop through sig_pipe. */
static volatile sig_atomic_t stopping;	/* SIGINT or SIGTERM seen */
static int sig_pipe[2] = { -1, -1 };	/* the signal handler's wake-up */

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	stopping = 1;
	if (write(sig_pipe[1], &c, 1) < 0)
		(void)0;
	errno = saved;
}

/* --repo <name>=<dir>: a repository to serve, its root resolved later. */
static void add_repo(struct mcp_server *srv, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		usage_error(usage_text, "--repo wants <name>=<dir>, got '%s'", arg);
	ALLOC_GROW(srv->repos, srv->repos_nr + 1, srv->repos_alloc);
	srv->repos[srv->repos_nr].name = xstrndup(arg, (size_t)(eq - arg));
	srv->repos[srv->repos_nr++].root = xstrdup(eq + 1);
}

/* Parse the options into o and srv; exits for -h, --version and usage errors. */
static void parse_options(struct options *o, struct mcp_server *srv, int argc, char **argv)
{
	int c;

	list_options(argc, argv, long_options);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_LIST: o->list = 1; break;
		case OPT_PROFILE: o->profile = optarg; break;
		case OPT_TABLE: o->table_file = optarg; break;
		case OPT_HTTP: o->http_addr = optarg; break;
		case OPT_ALLOW_REMOTE: o->allow_remote = 1; break;
		case OPT_ALLOW_ORIGIN:
			ALLOC_GROW(srv->allow_origins, srv->allow_origins_nr + 1, srv->allow_origins_alloc);
			srv->allow_origins[srv->allow_origins_nr++] = xstrdup(optarg);
			break;
		case OPT_TIMEOUT: srv->timeout_s = parse_long_arg(usage_text, "--timeout", optarg, 1, 3600); break;
		case OPT_WAIT: srv->wait_s = parse_long_arg(usage_text, "--wait", optarg, 0, 600); break;
		case OPT_JOBS: srv->max_jobs = parse_long_arg(usage_text, "--jobs", optarg, 1, 64); break;
		case OPT_MAX_OUTPUT:
			srv->max_output = (size_t)parse_long_arg(usage_text, "--max-output", optarg, 1024, 64L << 20);
			break;
		case OPT_SHARDS: o->shards = optarg; break;
		case OPT_NO_SHARD_SERVER: srv->shard_servers = 0; break;
		case OPT_REPO: add_repo(srv, optarg); break;
		case 'v': verbosity++; break;
		case OPT_VERSION:
			exit(print_version("ci-mcp"));
		case 'h':
			fputs(usage_text, stdout);
			exit(close_stdout(EXIT_OK));
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind < argc)
		usage_error(usage_text, "unexpected argument '%s'", argv[optind]);
}

/* The directory of this program (the commands are beside it); malloc'd. */
static char *self_dir(void)
{
	char *self = realpath("/proc/self/exe", NULL);

	if (self && strrchr(self, '/')) {
		*strrchr(self, '/') = '\0';
		return self;
	}
	free(self);
	return xstrdup(".");
}

/* Load the table asked for; an unknown profile is a usage error naming those known. */
static void load_table(struct mcp_server *srv, const struct options *o)
{
	char known[256] = "";
	size_t len = 0;

	if (o->table_file) {
		mcp_load_table(srv, o->table_file);
		return;
	}
	if (mcp_load_profile(srv, o->profile, o->list) == 0)
		return;
	/* the names compiled in, so that the message names every profile */
	for (size_t i = 0; i < mcp_profiles_nr && len < sizeof(known); i++)
		len += snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "", mcp_profiles[i].name);
	usage_error(usage_text, "unknown profile '%s' (known: %s)", o->profile, known);
}

/* --shards: check the set, hand it to the commands ($CI_SHARDS), give the tools "repo". */
static void use_shards(struct mcp_server *srv, const char *shards)
{
	struct fleet_set set = { 0 };
	char *abs = realpath(shards, NULL);

	if (!abs || fleet_set_load(&set, abs) < 0)
		die_code(EXIT_IO, "--shards: cannot serve '%s'%s%s", shards, abs ? "" : ": ",
			 abs ? "" : strerror(errno));
	fleet_set_release(&set);
	srv->shards = abs;
	setenv("CI_SHARDS", srv->shards, 1);
	mcp_shards_tools(srv->table);
}

/* The repositories served: the current one, and each --repo's root; 0 or -1. */
static int find_repos(struct mcp_server *srv)
{
	struct walker w;
	struct walk_opts wo = WALK_OPTS_INIT;

	if (walker_open(&w, ".", &wo) < 0)
		return -1;
	srv->root = srv->home = xstrdup(w.root);
	walker_close(&w);
	for (size_t i = 0; i < srv->repos_nr; i++) {
		char *dir = srv->repos[i].root;
		if (walker_open(&w, dir, &wo) < 0)
			die("--repo %s: cannot open '%s'", srv->repos[i].name, dir);
		srv->repos[i].root = xstrdup(w.root);
		walker_close(&w);
		free(dir);
	}
	if (!srv->repos_nr) {	/* the current repository under its directory's name */
		const char *slash = strrchr(srv->root, '/');
		ALLOC_GROW(srv->repos, 1, srv->repos_alloc);
		srv->repos[0].name = xstrdup(slash && slash[1] ? slash + 1 : srv->root);
		srv->repos[0].root = xstrdup(srv->root);
		srv->repos_nr = 1;
	}
	return 0;
}

/*
 * A configuration file the server cannot start with: say why, release libjq's
 * states (their stacks are not reachable from them while a program runs), exit.
 */
static void apply_config(struct mcp_server *srv)
{
	char *err;

	if (mcp_apply_config(srv, &err) == 0)
		return;
	error("%s", err);
	free(err);
	mcp_server_release(srv);
	exit(EXIT_IO);
}

static void catch_signals(struct mcp_server *srv)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("cannot make a pipe: %s", strerror(errno));
	srv->stopping = &stopping;
	srv->sig_fd = sig_pipe[0];
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* Serve the repository (after the table is loaded); the exit status. */
static int run(struct mcp_server *srv, const struct options *o)
{
	const char *index = getenv("CI_INDEX");
	int ret;

	srv->http_token = getenv("CI_MCP_TOKEN");
	if (srv->http_token && !*srv->http_token)
		srv->http_token = NULL;
	if (find_repos(srv) < 0)
		return EXIT_IO;
	apply_config(srv);
	srv->index_path = index && *index ? xstrdup(index) : xasprintf("%s/.ci-index/index.db", srv->root);
	git_libgit2_init();
	catch_signals(srv);
	/* the shard set's servers (CI_SHARDS_SERVER=0: none, as in the commands) */
	if (srv->shards && srv->shard_servers && server_env("CI_SHARDS_SERVER") != SERVER_OFF)
		mcp_shard_servers_start(srv);
	if (o->http_addr) {
		char *why;
		if (mcp_http_start(srv, o->http_addr, o->allow_remote, &why) < 0)
			usage_error(usage_text, "%s", why);
	}
	ret = mcp_serve(srv, !!o->http_addr);
	mcp_server_shutdown(srv);
	git_libgit2_shutdown();
	for (int k = 0; k < 2; k++)
		close(sig_pipe[k]);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = { .profile = "ci" };
	struct mcp_server srv;
	int ret;

	util_init(argv[0]);
	/* the commands it runs write records for it: NDJSON, whatever the user's taste */
	unsetenv("CI_FORMAT");
	mcp_server_init(&srv);
	parse_options(&o, &srv, argc, argv);
	srv.bindir = self_dir();
	load_table(&srv, &o);
	if (o.shards)
		use_shards(&srv, o.shards);
	if (o.list) {
		char *s = json_dumps(srv.table, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		mcp_server_release(&srv);
		return close_stdout(EXIT_OK);
	}
	ret = run(&srv, &o);
	mcp_server_release(&srv);
	return close_stdout(ret);
}
