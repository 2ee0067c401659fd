/*
 * mcp-map.h: the jq programs of ci-mcp's tool tables (libjq).
 */
#ifndef CI_MCP_MAP_H
#define CI_MCP_MAP_H

#include <jansson.h>

/*
 * The keys of a tool whose value is a jq program: "input" (the call's
 * arguments, defaults filled in, to the arguments the argv is built from:
 * derived parameters, rules JSON Schema cannot say), "output" (what the
 * command said to structuredContent) and "text" (structuredContent to the
 * result's text block).  A program is a string or an array of strings (lines).
 */

/* Compile the tool's programs; 0, or -1 with *err (malloc'd) saying what is wrong. */
int mcp_map_compile(json_t *tool, char **err);

/*
 * Run the tool's program key on input (borrowed): its first output, new
 * (NULL when the tool has no such program, with *err NULL), or NULL with *err
 * (malloc'd): the message of error(...) in the program, or of a program that
 * gave nothing.
 */
json_t *mcp_map_run(json_t *tool, const char *key, json_t *input, char **err);

/* Free the compiled programs. */
void mcp_map_release(void);

#endif
