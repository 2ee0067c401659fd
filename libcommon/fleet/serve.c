/*
 * libcommon/fleet/serve.c: a shard set's query, here or in the set's server
 * (fleet/serve.h).  The server is a fork server (fork-server.h) whose
 * preload opens every shard's index (struct fleet_pool); each query is
 * answered on threads over those open indexes, in the server itself
 * (pool_here) or in a worker forked from it: no process, no SQLite open and
 * no schema read a shard.
 */
#include "core/common.h"
#include "fleet/serve.h"
#include "index/fork-server.h"

#include <string.h>
#include <unistd.h>

/* The server's shards and command: the data of its fork_server_ops. */
struct served {
	struct fleet_pool pool;
	const struct fleet_cmd *cmd;
};

static const char *const sock_kind[] = { "grep-shards", "rank-shards", "refs-shards" };

/* Before the server serves: every shard opened (libgit2 too, for ci-grep's walks). */
static void pool_preload(void *data, const char *spec)
{
	struct served *sv = data;

	if (fleet_pool_open(&sv->pool, sv->cmd, spec) < 0)
		exit(EXIT_IO);
}

/* Before each query: a shard published again since is opened again (the set itself is the server's). */
static void pool_refresh(void *data, const char *spec)
{
	struct served *sv = data;

	(void)spec;
	fleet_pool_refresh(&sv->pool);
}

static int pool_run(void *data, int argc, char **argv)
{
	struct served *sv = data;

	optind = 0;
	return fleet_run(sv->cmd, &sv->pool, argc, argv);
}

/*
 * May the server answer this request itself (fork_server_ops.here)?  When its
 * caller checked the command line (fleet_here_ok: CI_FLEET_HERE=1 in the
 * request's environment) and few threads are parked (FLEET_PARKED_MAX).
 */
static int pool_here(void *data, int argc, char **argv, char **envv)
{
	struct served *sv = data;

	(void)argc;
	(void)argv;
	if (sv->pool.parked >= FLEET_PARKED_MAX)
		return 0;
	for (; *envv; envv++)
		if (!strcmp(*envv, "CI_FLEET_HERE=1"))
			return 1;
	return 0;
}

/* Is option opt among the options of argv (before "--")? */
static int has_opt(int argc, char **argv, const char *opt)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], opt))
			return 1;
	return 0;
}

int fleet_command(const struct fleet_cmd *cmd, int argc, char **argv)
{
	struct served served = { .cmd = cmd };
	const struct fork_server_ops ops = {
		.data = &served,
		.preload = pool_preload, .refresh = pool_refresh, .run = pool_run, .here = pool_here,
	};
	const char *spec = fleet_wanted(argc, argv);
	int serve = has_opt(argc, argv, "--shards-serve"), stop = has_opt(argc, argv, "--shards-stop");
	char *sock;
	int rc;

	if (serve || stop) {
		int others = 0;

		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "--shards") && i + 1 < argc)
				i++;
			else if (strncmp(argv[i], "--shards=", 9) && strcmp(argv[i], "--shards-serve") &&
				 strcmp(argv[i], "--shards-stop"))
				others++;
		if (others || serve + stop != 1)
			die_code(EXIT_USAGE, "--shards-%s takes --shards <set> and nothing else",
				 serve ? "serve" : "stop");
		rc = fork_server_command(sock_kind[cmd->kind], spec, stop,
					 fork_server_idle("CI_SHARDS_SERVER_IDLE", ENV_DIE), &ops);
		if (serve)
			fleet_pool_release(&served.pool);
		return rc;
	}
	if (server_env("CI_SHARDS_SERVER") != SERVER_OFF && (sock = fork_server_socket(sock_kind[cmd->kind], spec))) {
		const char *here = getenv("CI_SHARDS_HERE");

		/* a server there: may it answer in itself, not in a worker forked for it? */
		if (!access(sock, F_OK) && !(here && !strcmp(here, "0")) && fleet_here_ok(cmd, argc, argv)) {
			setenv("CI_FLEET_HERE", "1", 1);
			/* as fleet_run sets it: the server's run then changes no environment of its own */
			setenv("CI_FLEET_CHILD", "1", 1);
		}
		rc = fork_server_call(sock, argc, argv);
		unsetenv("CI_FLEET_HERE");
		free(sock);
		if (rc >= 0)
			return rc;
	}
	return fleet_run(cmd, NULL, argc, argv);
}
