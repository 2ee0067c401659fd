/*
 * cmd/rank-server.h: ci-rank's resident server, a fork server for one index.
 *
 * A query's own work is a few milliseconds; starting a process to do it costs
 * as much again: loading shared libraries, setting up SQLite, mapping the
 * model's weights (26 MB) and the snapshot of the vectors (70 MB for 137k
 * chunks).  `ci-rank serve` does that once, then forks a worker per request
 * that runs the request's command line as `ci-rank` would, in the caller's
 * directory and environment, with the caller's standard input, output and
 * error (passed over the socket), and reports its exit status back.  The
 * worker is an ordinary ci-rank run that finds the model and the snapshot
 * already in memory (from where the server read them: so the answers are the
 * same, byte for byte), opens the index itself and checks, as any run does,
 * that the snapshot is the one the index names.
 *
 * The socket is $XDG_RUNTIME_DIR/ci/rank-<key>.sock, else
 * /tmp/ci-<uid>/rank-<key>.sock, in a directory of the user's alone (mode
 * 0700, checked); key hashes the index's real path and the identity of the
 * ci-rank binary, so a rebuilt ci-rank does not talk to an old server.
 */
#ifndef CI_RANK_SERVER_H
#define CI_RANK_SERVER_H

struct rank_server_ops {
	/* in the server, before it serves: read what the workers share */
	void (*preload)(const char *index_path);
	/* before each fork: read again what changed since */
	void (*refresh)(const char *index_path);
	/* in a worker: the command line's exit status */
	int (*run)(int argc, char **argv);
};

/* The socket of the server for the index at index_path (malloc'd), or NULL
 * when there is no private place for one (nothing reported). */
char *rank_server_socket(const char *index_path);

/*
 * Have the server at sock run argv (argc of them) with this process's
 * directory, environment and standard streams.  Returns the exit status, or -1
 * when no server answered (nothing was run: run it here).
 */
int rank_server_call(const char *sock, int argc, char **argv);

/* Start a server for index_path in the background (a session of its own;
 * idle_s: seconds without a request before it exits).  Nothing reported. */
void rank_server_spawn(const char *index_path, long idle_s);

/*
 * Serve at sock until idle_s seconds pass without a request or a stop request
 * comes: 0, 1 when another server already serves there, -1 on an error
 * (reported).
 */
int rank_server_serve(const char *sock, const char *index_path, long idle_s,
		      const struct rank_server_ops *ops);

/* Ask the server at sock to stop: 0, or 1 when none answered. */
int rank_server_stop(const char *sock);

#endif
