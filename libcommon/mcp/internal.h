/*
 * internal.h: what the files of libcommon/mcp share among themselves (and
 * with its unit tests and fuzz target); the contract for callers is mcp.h.
 */
#ifndef CI_MCP_INTERNAL_H
#define CI_MCP_INTERNAL_H

#include "mcp/mcp.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define MCP_MAX_BODY (16 << 20)	/* the largest HTTP body (and stdio line / 4) */
#define MCP_MAX_SESSIONS 1000	/* HTTP sessions at once */

enum mcp_call_state {
	CALL_QUEUED,		/* waiting for a free job slot */
	CALL_WAIT_INDEX,	/* waiting for ci-index update */
	CALL_RUNNING,		/* its command runs */
};

/* A tool call (or a resources/read) from its request to its answer. */
struct mcp_call {
	struct mcp_call *next;	/* calls in arrival order */
	struct mcp_server *srv;	/* the server it belongs to */
	json_t *id;		/* the request's id */
	struct mcp_stream *st;	/* where the answer goes (a reference) */
	json_t *tool;		/* its table entry (borrowed from table) */
	json_t *args;		/* validated arguments, paths confined (owned) */
	json_t *token;		/* _meta.progressToken, or NULL (owned) */
	enum mcp_call_state state;	/* where it is */
	int wants_index;	/* the tool reads the index */
	char *root;		/* the repository it runs in (borrowed) */
	int force_index;	/* wait for a fresh index however long it takes */
	long long started;	/* ms */
	long long deadline;	/* ms: --timeout */
	long long next_tick;	/* ms: the next progress notification */
	int ticks;		/* progress notifications sent */
	char *label;		/* what it runs, for progress messages */
	char *preparing;	/* what is still being prepared (answer note), or NULL */
	int spec;		/* its fallback runs while it waits for the index */
	int spec_done;		/* and has finished: p holds its answer */
	int resource;		/* a resources/read: tool is the table's resource entry */
	struct mcp_proc p;	/* its command */
};

/* A message from a connection thread for the loop. */
struct mcp_inmsg {
	struct mcp_inmsg *next;	/* the inbox's order */
	json_t *msg;		/* owned */
	struct mcp_stream *st;	/* a reference */
	int close_session;	/* DELETE: cancel the session's calls */
};

/* serve.c */
long long mcp_now_ms(void);

/* protocol.c: streams, answers, logging */
struct mcp_stream *mcp_stream_new(struct mcp_server *srv, struct mcp_session *sess, int refs);
void mcp_stream_unref_locked(struct mcp_stream *st);
void mcp_stream_unref(struct mcp_stream *st);
void mcp_stream_close(struct mcp_stream *st);
/* Send one message (which this consumes a reference of) to a stream. */
void mcp_send_json(struct mcp_stream *st, json_t *msg, int last);
void mcp_reply(struct mcp_stream *st, json_t *id, json_t *result);
void mcp_reply_error(struct mcp_stream *st, json_t *id, int code, const char *msg);
/*
 * Log: on stderr with -v, and as notifications/message to a client that asked
 * for this level (logging/setLevel): on st when the event belongs to one of its
 * requests, else to the stdio client or every HTTP session's GET stream.
 */
void mcp_log(struct mcp_server *srv, struct mcp_stream *st, int level, const char *fmt, ...) CI_PRINTF(4, 5);
/* A tool result that is an error the model should see (isError). */
json_t *mcp_tool_error(const char *fmt, ...) CI_PRINTF(1, 2);
/* A successful result: structuredContent sc (consumed) and its JSON as text. */
json_t *mcp_tool_result(json_t *sc);
/* Handle one JSON-RPC message from the client behind st (which this borrows). */
void mcp_handle(struct mcp_stream *st, json_t *msg);

/* args.c */
extern const char mcp_shards_repo_key[];
pcre2_code *mcp_pattern_compile(const char *re, char *why, size_t n);
char **mcp_shards_argv(json_t *tool, json_t *args, char **argv);

/* proc.c: child processes and the indexer */
void mcp_proc_init(struct mcp_proc *p);
int mcp_proc_start(struct mcp_server *srv, struct mcp_proc *p, char **argv, int in_fd);
int mcp_text_fd(const char *text, size_t len);
void mcp_child_reset(void);
void mcp_proc_kill(struct mcp_proc *p);
int mcp_proc_read(struct mcp_proc *p, int k);
void mcp_proc_release(struct mcp_proc *p);
void mcp_indexer_progress(struct mcp_server *srv);
char *mcp_indexer_doing(struct mcp_server *srv);
char *mcp_indexer_doing_msg(struct mcp_server *srv);
int mcp_index_exists(struct mcp_server *srv);
void mcp_indexer_start(struct mcp_server *srv);
void mcp_indexer_finished(struct mcp_server *srv);

/* call.c */
void mcp_call_free(struct mcp_call *c);
void mcp_call_unlink(struct mcp_call *c);
void mcp_call_progress(struct mcp_call *c, const char *msg);
void mcp_call_answer(struct mcp_call *c, json_t *r);
json_t *mcp_command_result(struct mcp_call *c);
void mcp_advance_calls(struct mcp_server *srv);
int mcp_call_uses_id(struct mcp_server *srv, struct mcp_session *sess, json_t *id);
void mcp_tools_call(struct mcp_stream *st, json_t *id, json_t *tool, json_t *args, json_t *token);
void mcp_queue_call(struct mcp_stream *st, json_t *id, json_t *tool, json_t *args, json_t *token, int resource);
void mcp_cancel(struct mcp_server *srv, struct mcp_session *sess, json_t *rid, const char *reason);

/* read.c */
json_t *mcp_builtin_read(struct mcp_server *srv, json_t *args);

/* http.c */
void mcp_drain_inbox(struct mcp_server *srv);

#endif
