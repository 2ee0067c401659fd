/*
 * mcp.h: libcommon/mcp, a Model Context Protocol server that serves ci's
 * commands as tools, over stdio (one JSON-RPC message a line) or Streamable
 * HTTP (libmicrohttpd).  cmd/ci-mcp.c parses the options, fills a struct
 * mcp_server and calls mcp_serve(); everything the server holds is in that
 * context, so a test can build one, feed it lines and read its answers.
 *
 * The tools are data: a table in share/mcp/<profile>.json (compiled in, so the
 * server works uninstalled; --table reads another) gives each tool its name,
 * description, JSON Schemas and the argv of the command that answers it, as
 * groups of elements where a "{param}" element is replaced by the parameter's
 * value as one whole argv element (never through a shell) and a group whose
 * parameters are absent is left out.  The command's NDJSON records become the
 * result's structuredContent ({"results": [...], "count": n}) and a text block;
 * its exit status 1 is "nothing found", 2 and 3 are tool errors with its message
 * (but 2 after some records, ci-grep's "results may be incomplete", gives them,
 * marked "incomplete", with the message).  A tool may map its arguments and
 * answers with jq programs (map.h).
 *
 * The workload that shaped it: a coding agent fires several calls at once, some
 * slow (ranked search on a big repository, an index being built), and gives up
 * on a call after about 15 seconds.  So every call is a child process group, one
 * poll() loop multiplexes the client and the children, a call can be cancelled
 * (its group is killed) and reports progress, and a call that needs an index
 * that is still being built waits a few seconds (wait_s) and then answers from
 * what is ready: a table entry's "fallback" (a lexical ci-grep scan, which needs
 * no index), saying in "preparing" what is still under way.
 *
 * Threads: the poll loop in the main thread owns the calls and the children.
 * With HTTP, libmicrohttpd runs a thread per connection; a connection hands
 * each JSON-RPC message to the loop through an inbox (a mutex and a wake-up
 * pipe) and reads what the loop sends back from its stream (a queue of messages
 * under the same mutex), as one JSON body or as server-sent events.
 *
 * A table's "resources" (codebase-context's codebase://context) are read the
 * same way: resources/read runs the resource's argv as a call and answers the
 * text of its first record.
 *
 * The files, by concern:
 *   table.c     the tool tables: profiles compiled in, checks, a profile's
 *               configuration file (TOML), tools/list, --shards' "repo"
 *   map.c       the jq programs of a table (libjq): arguments in, answers out
 *   args.c      validation against a tool's schema, paths confined to the
 *               repository, arguments to argv
 *   proc.c      the composition: a command as a child process group; the
 *               index built or updated in the background (ci-index)
 *   call.c      tool calls: queued, waiting for the index, running, answered
 *   read.c      the built-in read tool (work tree or a commit, libgit2)
 *   protocol.c  sessions and streams, JSON-RPC requests and answers, logging
 *   http.c      the Streamable HTTP transport and its Origin/Host/token checks
 *   serve.c     the poll loop, the server's life (init, shutdown, release)
 *
 * A call's flow: mcp_serve (serve.c) reads a line, mcp_handle_line and
 * mcp_handle (protocol.c) parse it, mcp_tools_call (call.c) checks the
 * arguments (mcp_validate, mcp_confine: args.c), runs the tool's input program
 * (mcp_map_prepare: map.c) and queues a call; mcp_advance_calls starts it
 * (mcp_build_argv, then mcp_proc_start: proc.c) when a job slot and the index
 * allow; the loop reads its pipes, and mcp_command_result turns its records
 * into the answer (through the output and text programs when the tool has
 * them), which mcp_reply sends on the call's stream.
 *
 * NEEDSWORK: the bobbin profile is a table file still to write (ci, kit,
 * shaktiman, abstract and codebase-context exist); server-sent event streams
 * cannot be resumed (no event ids, Last-Event-ID is ignored); tools/list has no
 * pagination.
 */
#ifndef CI_MCP_H
#define CI_MCP_H

#include "core/common.h"
#include "mcp/map.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* MCP logging levels (RFC 5424 severities), least severe first: mcp_log_levels[]. */
enum { MCP_LOG_DEBUG, MCP_LOG_INFO, MCP_LOG_NOTICE, MCP_LOG_WARNING, MCP_LOG_ERROR };
extern const char *const mcp_log_levels[8];
/* The protocol versions spoken, newest first. */
extern const char *const mcp_versions[3];

/* The profiles compiled in (share/mcp/<name>.json). */
struct mcp_profile {
	const char *name;	/* "ci", "kit", ... */
	const char *json;	/* its table */
};
extern const struct mcp_profile mcp_profiles[];
extern const size_t mcp_profiles_nr;

/*
 * A session: one client.  Over stdio there is one; over HTTP, one per
 * initialize, named by its Mcp-Session-Id.  Sessions live until the server
 * exits (a DELETE marks one deleted), so a stream's pointer stays valid.
 */
struct mcp_session {
	struct mcp_session *next;	/* all sessions (HTTP) */
	char id[33];		/* Mcp-Session-Id: 128 random bits in hex */
	int log_level;		/* least severe level sent (logging/setLevel); -1: none */
	int deleted;		/* DELETE seen: requests get 404 */
	struct mcp_stream *get;	/* its open GET stream, or NULL */
};

/*
 * A stream: where the answers to one message go.  The stdio stream writes to
 * the server's out.  An HTTP stream is a queue read by the connection's thread;
 * it is closed when the answer to its request is queued.  All fields but cond
 * are guarded by the server's lock.
 */
struct mcp_stream {
	struct mcp_server *srv;	/* the server it belongs to */
	int http;		/* 0: the stdio stream */
	int refs;		/* the connection and the loop each hold one */
	struct mcp_session *sess;	/* the client */
	char **q;		/* queued messages (malloc'd JSON text) */
	size_t q_nr, q_alloc, q_head;
	int closed;		/* the answer was queued: nothing follows */
	int gone;		/* the connection went away: drop what comes */
	int is_get;		/* the session's GET stream */
	int fd;			/* an event stream's socket, to see the client hang up; -1: none */
	pthread_cond_t cond;	/* signalled when a message is queued or it closes */
};

/*
 * A command running in its own process group, its stdout and stderr read by
 * the poll loop.  stdout is kept up to max_output bytes (then the group is
 * killed and the answer marked truncated), stderr up to 64 KiB.
 */
struct mcp_proc {
	pid_t pid;		/* also the process group; 0 when not running */
	int fd[2];		/* stdout, stderr; -1 once at end of file */
	struct buf out, err;	/* what they said */
	int truncated;		/* stdout went over max_output or max_lines */
	long max_lines;		/* keep at most this many records; 0: no limit */
	long lines;		/* records read so far */
	int tail_err;		/* keep the end of stderr (progress reports), not its start */
	int status;		/* exit status once reaped; 128+n for signal n */
	size_t max_output;	/* cap on stdout's bytes */
};

/* The index, built or updated in the background by ci-index. */
struct mcp_indexer {
	struct mcp_proc p;	/* `ci-index update` while it runs */
	int running;		/* p is running */
	long long started;	/* when it started (ms) */
	long long done;		/* when the last one ended (ms); 0: never */
	int built;		/* it builds a new index (there was none) */
	char *last_error;	/* what the last failed update said */
	size_t files_done;	/* its progress report: files done */
	size_t files_total;	/* of this many */
};

/* A repository served (--repo), chosen by a call's "repo" argument. */
struct mcp_repo {
	char *name;		/* what a call names it by (owned) */
	char *root;		/* its root directory, absolute (owned) */
};

/* A resident server of the shard set served (shards.c), of one command. */
#define MCP_SHARD_SERVERS 3	/* ci-grep, ci-rank, ci-refs */
struct mcp_shard_server {
	const char *cmd;	/* the command whose server it is */
	char *sock;		/* its socket (owned), or NULL: none can be made */
	pid_t pid;		/* the server this one started, or 0 */
};

struct mcp_call;
struct mcp_inmsg;
struct MHD_Daemon;

/*
 * The server: options (set by the caller before mcp_serve, after
 * mcp_server_init), the table, the calls, the sessions and the transports.
 */
struct mcp_server {
	/* options */
	long timeout_s;		/* time limit of one tool call (default 120) */
	long wait_s;		/* how long a call waits for the index (default 5) */
	long max_jobs;		/* tool calls run at once (default 4) */
	size_t max_output;	/* cap on one result's bytes (default 1 MiB) */
	char *shards;		/* a shard set served (absolute path, owned), or NULL */
	int shard_servers;	/* start the set's servers (default 1; --no-shard-server) */
	struct mcp_repo *repos;	/* the repositories served; the first is the default */
	size_t repos_nr, repos_alloc;
	char **allow_origins;	/* web origins accepted besides loopback ones (owned) */
	size_t allow_origins_nr, allow_origins_alloc;
	const char *http_token;	/* the bearer token HTTP requests need (CI_MCP_TOKEN), or NULL */
	char *home;		/* the current directory's repository (owned) */
	char *index_path;	/* the index the commands use (owned) */
	char *bindir;		/* where the commands are (owned) */
	FILE *out;		/* where the stdio transport writes (stdout) */
	volatile sig_atomic_t *stopping;	/* set (by a signal handler) to stop */
	int sig_fd;		/* readable when stopping is set; -1: none */

	/* the table and its programs */
	json_t *table;		/* the tool table being served (owned) */
	struct mcp_map map;	/* its compiled jq programs, what sessions remember */

	/* state */
	char *root;		/* repository root of the call at hand (borrowed: home or a repo's) */
	struct mcp_indexer indexer;	/* the background index build */
	struct mcp_shard_server shard_srv[MCP_SHARD_SERVERS];	/* --shards: the set's servers */
	struct mcp_call *calls;	/* in arrival order */
	int running_jobs;	/* calls whose command runs */
	volatile sig_atomic_t stop_flag;	/* what stopping points to by default */

	/* sessions and transports */
	pthread_mutex_t lock;	/* guards streams, sessions and the inbox */
	struct mcp_session stdio_session;	/* the stdio client */
	struct mcp_stream stdio_stream;	/* writes to out */
	struct MHD_Daemon *daemon;	/* the HTTP server, or NULL (stdio) */
	struct mcp_session *sessions;	/* HTTP sessions */
	size_t sessions_nr;
	struct mcp_inmsg *inbox, **inbox_tail;	/* messages from connections for the loop */
	int wake_pipe[2];	/* wakes the loop when the inbox gets one */
	int http_loopback;	/* bound to a loopback address: check Host too */
	long http_port;		/* the port listened on */
};

/* ---- serve.c: the server's life ---- */

/* Set the defaults: no table, stdio to stdout, the limits above.  Cannot fail. */
void mcp_server_init(struct mcp_server *srv);

/*
 * Serve until stdin ends (stdio) or *srv->stopping is set (both); http:
 * serve the HTTP transport started by mcp_http_start instead of stdin.
 * Returns the exit status.  Call mcp_server_shutdown after it.
 */
int mcp_serve(struct mcp_server *srv, int http);

/* Stop everything: calls, the indexer, the HTTP server.  Cannot fail. */
void mcp_server_shutdown(struct mcp_server *srv);

/* Free what the server holds (the table, its programs, the options it owns). */
void mcp_server_release(struct mcp_server *srv);

/* ---- shards.c: the resident servers of the shard set served ---- */

/*
 * Start `<cmd> --shards <set> --shards-serve` for ci-grep, ci-rank and
 * ci-refs (srv->shards set, srv->shard_servers on) and wait until each
 * listens; the commands the calls run then use them (fleet/serve.h).  A
 * server that cannot start is said on stderr; its command's queries are
 * answered in the command's own process.  Cannot fail.
 */
void mcp_shard_servers_start(struct mcp_server *srv);
/* Before a call runs cmd: its server started again, with a message, if it ended. */
void mcp_shard_servers_check(struct mcp_server *srv, const char *cmd);
/* Stop the servers started (mcp_server_shutdown does). */
void mcp_shard_servers_stop(struct mcp_server *srv);

/* ---- table.c: tool tables ---- */

/*
 * Load the table of a profile into srv->table: compiled in, else
 * share/mcp/<name>.json under bindir or in the package data directory.  eager:
 * compile the jq programs of a table compiled in now (else when first run).
 * 0; -1 when there is no such profile; dies on a table that is wrong.
 */
int mcp_load_profile(struct mcp_server *srv, const char *name, int eager);

/* Load the table in file into srv->table; dies on a table that is wrong. */
void mcp_load_table(struct mcp_server *srv, const char *file);

/*
 * Check that a tool table has what the server relies on, compiling its jq
 * programs into srv->map; NULL, or what is wrong (malloc'd, naming name).
 */
char *mcp_table_check(struct mcp_server *srv, json_t *t, const char *name);

/*
 * A profile's configuration file (the table's "config": a TOML file in the
 * repository and a jq program "defaults") into the tools' input schemas.  0
 * (no file, or its defaults applied), or -1 with *err (malloc'd) saying why.
 */
int mcp_apply_config(struct mcp_server *srv, char **err);

/* --shards: give each tool of the table a "repo" parameter.  Cannot fail. */
void mcp_shards_tools(json_t *table);

/* The table's tool called name (borrowed), or NULL. */
json_t *mcp_find_tool(struct mcp_server *srv, const char *name);

/* The result of tools/list; new. */
json_t *mcp_tools_list(struct mcp_server *srv);

/* ---- args.c: arguments to argv ---- */

/* NULL if args fit the schema (the subset the tables use), else a malloc'd message. */
char *mcp_validate(json_t *schema, json_t *args);

/*
 * Resolve a client's path against root; refuse what leaves it (.., an absolute
 * path elsewhere, a symlink out).  A malloc'd root-relative path, or NULL with
 * *why set.
 */
char *mcp_confine(const char *root, const char *p, const char **why);

/* The same without the file system, for a path inside a commit. */
char *mcp_confine_lexical(const char *root, const char *p, const char **why);

/* "{query|words}": the query's words as a PCRE2 alternation; malloc'd. */
char *mcp_words_regex(const char *q);

/* Which argv groups of the tool serve these arguments (borrowed), or NULL. */
json_t *mcp_pick_argv(json_t *tool, json_t *args);

/*
 * Build argv from groups of elements; a NULL-terminated malloc'd vector (free
 * with mcp_free_argv).  A group whose parameter is an array is repeated for
 * each element.
 */
char **mcp_build_argv(json_t *groups, json_t *args, json_t *schema);
void mcp_free_argv(char **argv);

/* ---- protocol.c: JSON-RPC ---- */

/* Parse one line of the stdio transport and handle it. */
void mcp_handle_line(struct mcp_server *srv, const char *s, size_t n);

/* ---- http.c: Streamable HTTP ---- */

/*
 * Listen at addr ("host:port", port 0 picks one) with a thread per
 * connection.  0; -2 with *why (malloc'd) for an address that is wrong (a
 * usage error); dies when it cannot listen.
 */
int mcp_http_start(struct mcp_server *srv, const char *addr, int allow_remote, char **why);

#endif
