/*
 * map.h: the jq programs of ci-mcp's tool tables (libjq), part of
 * libcommon/mcp (mcp.h).  A struct mcp_map holds one table's compiled
 * programs and what its tools remember of each client's session.
 */
#ifndef CI_MCP_MAP_H
#define CI_MCP_MAP_H

#include <jansson.h>
#include <stddef.h>

struct mcp_prog;
struct mcp_memo;

/* The compiled programs of a table; zeroed is empty. */
struct mcp_map {
	struct mcp_prog *progs;	/* one per tool and program key */
	size_t progs_nr, progs_alloc;
	struct mcp_memo *memos;	/* what the tools remember, per session */
	size_t memos_nr, memos_alloc;
	int lazy;		/* compile each program when first run */
};

/*
 * The keys of a tool whose value is a jq program: "input" (the call's
 * arguments, defaults filled in, to the arguments the argv is built from:
 * derived parameters, rules JSON Schema cannot say), "output" (what the
 * command said to structuredContent), "text" (structuredContent to the
 * result's text block) and "session" ({"session", "structuredContent", "args"}
 * to what the tool remembers of the client's session, which the next output
 * program reads as .session).  A program is a string or an array of strings.
 * The table's "config" object has one program, "defaults": a configuration
 * file's contents to {tool: {parameter: default}}.
 */

/*
 * From now on, keep programs to compile when first run (for tables already
 * known to compile); the default compiles them at once.
 */
void mcp_map_lazy(struct mcp_map *m, int on);

/* Compile the tool's programs; 0, or -1 with *err (malloc'd) saying what is wrong. */
int mcp_map_compile(struct mcp_map *m, json_t *tool, char **err);

/*
 * Run the tool's program key on input (borrowed): its first output, new
 * (NULL when the tool has no such program, with *err NULL), or NULL with *err
 * (malloc'd): the message of error(...) in the program, or of a program that
 * gave nothing.
 */
json_t *mcp_map_run(struct mcp_map *m, json_t *tool, const char *key, json_t *input, char **err);

/*
 * The arguments the argv of a call is built from: args (borrowed) with the
 * schema's defaults filled in, through the tool's "input" program; new.  A
 * tool with neither "input" nor "output" keeps args as they are.  NULL with
 * *why (malloc'd) when the program refuses them.
 */
json_t *mcp_map_prepare(struct mcp_map *m, json_t *tool, json_t *args, char **why);

/*
 * A tool's answer from in (borrowed): *sc, the output program's object, and
 * *text, the text program's string or NULL (no text program), both new.
 * NULL, or what is wrong (malloc'd) with both set to NULL.
 */
char *mcp_map_answer(struct mcp_map *m, json_t *tool, json_t *in, json_t **sc, json_t **text);

/* What a tool remembers of a client's session (borrowed), or NULL. */
json_t *mcp_map_session_get(struct mcp_map *m, const void *sess, json_t *tool);

/* Remember state (consumed) for the tool and the client's session. */
void mcp_map_session_set(struct mcp_map *m, const void *sess, json_t *tool, json_t *state);

/* Free the compiled programs and what the sessions remember. */
void mcp_map_release(struct mcp_map *m);

#endif
