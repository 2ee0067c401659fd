/*
 * libcommon/fleet/serve.h: a shard set's query in ci-grep, ci-rank and ci-refs:
 * libcommon/fleet's fan-out, and its resident server over libcommon/index/fork-server.
 *
 *   <cmd> --shards <set> --shards-serve   serve the set: every shard's index
 *                                          opened once and kept open; each
 *                                          query a worker forked from it
 *   <cmd> --shards <set> --shards-stop    stop that server
 *
 * A query over the set (`<cmd> --shards <set> ...`) is answered by the set's
 * server when one runs (its socket: fork_server_socket("<cmd>-shards", set)),
 * else here (fleet_run: threads, or a process a shard).  CI_SHARDS_SERVER=0
 * leaves the server out; CI_SHARDS_SERVER_IDLE: the seconds a server waits
 * for a query before it exits (default 600).
 */
#ifndef CI_FLEET_SERVE_H
#define CI_FLEET_SERVE_H

#include "fleet/fleet.h"

/* The command line argv (with --shards) of cmd: its exit status. */
int fleet_command(const struct fleet_cmd *cmd, int argc, char **argv);

#endif
