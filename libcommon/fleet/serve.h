/*
 * libcommon/fleet/serve.h: a shard set's query in ci-grep, ci-rank and ci-refs:
 * libcommon/fleet's fan-out, and its resident server over libcommon/index/fork-server.
 *
 *   <cmd> --shards <set> --shards-serve   serve the set: every shard's index
 *                                          opened once and kept open; each
 *                                          query answered in the server, on
 *                                          its threads (or, when it must be,
 *                                          a worker forked from it)
 *   <cmd> --shards <set> --shards-stop    stop that server
 *
 * A query over the set (`<cmd> --shards <set> ...`) is answered by the set's
 * server when one runs (its socket: fork_server_socket("<cmd>-shards", set)),
 * else here (fleet_run: threads, or a process a shard).  The server answers a
 * query itself when its caller found the command line good for threads
 * (fleet_here_ok; its usage errors are then the caller's): no fork of a
 * process holding every shard open, none of the copy-on-write faults after
 * it, and what a query prepares lazily stays prepared for the next (a fork
 * and its faults were a third to three quarters of a query's CPU over 1,000
 * small shards, SCALE.md).  Queries are then answered one at a time.
 * CI_SHARDS_SERVER=0 leaves the server out, CI_SHARDS_HERE=0 has it fork a
 * worker for the query; CI_SHARDS_SERVER_IDLE: the seconds a server waits
 * for a query before it exits (default 600).
 */
#ifndef CI_FLEET_SERVE_H
#define CI_FLEET_SERVE_H

#include "fleet/fleet.h"

/* The command line argv (with --shards) of cmd: its exit status. */
int fleet_command(const struct fleet_cmd *cmd, int argc, char **argv);

#endif
