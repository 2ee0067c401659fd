/*
 * libcommon/index/fork-server.h: the resident servers of ci-rank and ci-index, fork
 * servers for one index.
 *
 * A command's own work can be a few milliseconds; starting a process to do it
 * costs as much again: loading shared libraries, initialising libgit2 (it
 * parses every CA certificate of the system), compiling tree-sitter queries,
 * reading a model's weights or the snapshot of the vectors.  `ci-rank serve`
 * and `ci-index serve` do that once, then fork a worker per request that runs
 * the request's command line as the command would, in the caller's directory
 * and environment, with the caller's standard input, output and error (passed
 * over the socket), and report its exit status back.  The worker is an
 * ordinary run that finds what the server prepared already in memory.
 *
 * The socket is $XDG_RUNTIME_DIR/ci/<kind>-<key>.sock, else
 * /tmp/ci-<uid>/<kind>-<key>.sock, in a directory of the user's alone (mode
 * 0700, checked); key hashes the index's real path and the identity of the
 * binary, so a rebuilt command does not talk to an old server.
 */
#ifndef CI_FORK_SERVER_H
#define CI_FORK_SERVER_H

#include <sys/types.h>

struct buf;

struct fork_server_ops {
	/* given to every callback: the caller's server state */
	void *data;
	/* in the server, before it serves: read what the workers share */
	void (*preload)(void *data, const char *index_path);
	/* before each fork: read again what changed since */
	void (*refresh)(void *data, const char *index_path);
	/* in a worker: the command line's exit status */
	int (*run)(void *data, int argc, char **argv);
	/* optional: a descriptor the server also waits on (-1: none), and what
	 * to do when it is readable */
	int (*watch_fd)(void *data);
	void (*on_watch)(void *data);
	/* optional: a worker started, and ended with this wait status */
	void (*forked)(void *data, pid_t pid);
	void (*ended)(void *data, pid_t pid, int status);
	/* optional: a question the server answers itself (fork_server_query):
	 * the answer appended to out */
	void (*query)(void *data, const char *q, struct buf *out);
	/*
	 * optional: may the server answer this request (argv, its environment
	 * envv) itself, without a worker?  Then run() is called in the server,
	 * with the caller's streams on 0, 1 and 2, its directory and envv as
	 * the environment for the time of the call (the worker's pid sent is 0);
	 * it must neither exit nor die, and leaves nothing of the request's
	 * behind but what it keeps on purpose.  Requests are then answered one
	 * at a time.
	 */
	int (*here)(void *data, int argc, char **argv, char **envv);
};

/*
 * The pipe on which fork_server_spawn_wait's caller waits for this server's
 * preload (-1: none, or taken already), taken by a preload that starts more
 * the caller should wait for (ci-index's first update, in a child);
 * fork_server_ready_say(fd) then tells it (closes it; -1: nothing).  A pipe
 * nobody took is closed once the preload returns.
 */
int fork_server_ready_take(void);
void fork_server_ready_say(int fd);

/* The socket of the kind's server ("rank", "index") for the index at
 * index_path (malloc'd), or NULL when there is no private place for one
 * (nothing reported). */
char *fork_server_socket(const char *kind, const char *index_path);
/* The same for the server that the binary at exe runs (another command's). */
char *fork_server_socket_of(const char *kind, const char *index_path, const char *exe);

/*
 * Ask the server at sock a question that it answers itself (ops->query), the
 * NUL-terminated q: 0 with the answer in *out (malloc'd, NUL-terminated), -1
 * when no server answered (none listens, or it hung up), or
 * FORK_SERVER_HUNG when one took the question but gave no whole answer within
 * timeout_ms milliseconds (a server stopped by SIGSTOP, or hung): connecting,
 * sending and receiving all count against it.  timeout_ms < 0: no bound.
 */
#define FORK_SERVER_HUNG (-2)
#define FORK_SERVER_STATUS_MS 2000	/* ci-index status: is a server there, which */
#define FORK_SERVER_SEARCH_MS 5000	/* ci-grep's questions (then it searches alone) */
/*
 * The pid of the process that holds the lock of the server at sock (a server
 * running or starting, answering or not; from /proc/locks), or 0.
 */
long fork_server_lock_pid(const char *sock);
int fork_server_query(const char *sock, const char *q, char **out, int timeout_ms);

/*
 * Have the server at sock run argv (argc of them) with this process's
 * directory, environment and standard streams.  Returns the exit status, or -1
 * when no server answered (nothing was run: run it here).
 */
int fork_server_call(const char *sock, int argc, char **argv);

/* Start a server for index_path in the background (a session of its own;
 * idle_s: seconds without a request before it exits).  Nothing reported. */
void fork_server_spawn(const char *index_path, long idle_s);
/* The same for the server that the binary at exe runs (another command's). */
void fork_server_spawn_of(const char *exe, const char *index_path, long idle_s);
/*
 * fork_server_spawn, then wait (up to a minute) until the server holds its
 * lock, so that a stop right after (fork_server_stop) finds it starting and
 * waits for it: 0, or -1 when it ended first (another server runs there) or
 * could not be started.  done_fd (may be NULL): on 0, a descriptor for
 * fork_server_wait_done, which waits until the server's preload is done
 * (ci-index's: its first update is in).
 */
int fork_server_spawn_wait(const char *index_path, long idle_s, int *done_fd);
/* Wait up to timeout_ms (< 0: no bound) for the end of fork_server_spawn_wait's
 * done_fd, then close it; fd < 0: nothing. */
void fork_server_wait_done(int fd, int timeout_ms);

/*
 * The seconds a server waits for a request before it exits: the environment
 * variable env_name (CI_INDEX_SERVER_IDLE, CI_RANK_SERVER_IDLE), an integer
 * from 1 to FORK_SERVER_IDLE_MAX, else 600.  Another value: env_long()'s
 * message, and exit 2 (flags ENV_DIE) or the default (ENV_WARN: a search that
 * only starts a server for the searches after it).
 */
#define FORK_SERVER_IDLE_MAX 31536000L	/* a year */
long fork_server_idle(const char *env_name, int flags);

/*
 * Whether commands use the index's server: the environment variable env_name
 * (CI_INDEX_SERVER, CI_RANK_SERVER) is "0" (SERVER_OFF), "1" or unset
 * (SERVER_ON), or "always" (SERVER_ALWAYS: wait for one to start); anything
 * else exits 2 with env_choice()'s message.
 */
enum { SERVER_OFF, SERVER_ON, SERVER_ALWAYS };
int server_env(const char *env_name);

/*
 * Serve at sock until idle_s seconds pass without a request or a stop request
 * comes: 0, 1 when another server already serves there, -1 on an error
 * (reported).
 */
int fork_server_serve(const char *sock, const char *index_path, long idle_s,
		      const struct fork_server_ops *ops);

/*
 * In a worker: give the caller its exit status now, with what was written to
 * its streams flushed, and let go of them (they become /dev/null): what the
 * worker does after (closing a database, a checkpoint) no longer holds the
 * caller up.  The status at exit is then not sent again.
 */
void fork_server_reply(int status);

/*
 * The serve command of kind's server for the index (index_opt, else the one
 * found from the current directory): stop it, or serve until idle_s seconds
 * pass without a request.  Returns the command's exit status (messages said).
 */
int fork_server_command(const char *kind, const char *index_opt, int stop, long idle_s,
			const struct fork_server_ops *ops);

/* In the server (a callback): stop once the request at hand is served. */
void fork_server_stop_soon(void);

/*
 * In a child the server forked itself (not a request's worker): let go of
 * what is the server's alone, its lock (held by a child, it would keep a new
 * server from starting until the child ends).
 */
void fork_server_child_init(void);

/* Ask the server at sock to stop, waiting (up to a minute) for one that is
 * starting to listen: 0, or 1 when none answered. */
int fork_server_stop(const char *sock);

#endif
