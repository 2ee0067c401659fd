/*
 * unit-mcp.c: TAP tests of libcommon/mcp without spawning a command: the
 * tools/list of every profile against its table (the seed tool surface of
 * the ci profile by name), a tool's arguments through its jq input program to
 * the argv of its command (kit's search_text_pattern and
 * find_symbol_occurrences, ci's grep), the checks of the arguments, and
 * JSON-RPC lines parsed and answered by a server writing to memory.
 */
#include "mcp/internal.h"

#include <errno.h>
#include <unistd.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

/* argv joined by spaces; malloc'd. */
static char *joined(char **argv)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; argv[i]; i++)
		buf_addf(&b, "%s%s", i ? " " : "", argv[i]);
	return buf_detach(&b, NULL);
}

/* Serve the profile name's table on srv, its programs compiled now. */
static int use_profile(struct mcp_server *srv, const char *name)
{
	mcp_map_release(&srv->map);
	json_decref(srv->table);
	srv->table = NULL;
	return mcp_load_profile(srv, name, 1);
}

/* Every profile's tools/list lists each tool of its table with its schemas. */
static void test_tools_list(struct mcp_server *srv)
{
	static const char *const ci_tools[] = { "search", "grep", "symbols", "references", "read", "context",
						"related", "impact", "callers", "callees", "trace", "dead", "arch",
						"history", "status" };

	for (size_t p = 0; p < mcp_profiles_nr; p++) {
		json_t *list, *tools, *t;
		size_t i, same = 0;
		char desc[128];

		if (use_profile(srv, mcp_profiles[p].name) < 0) {
			ok(0, "a profile compiled in loads");
			continue;
		}
		list = mcp_tools_list(srv);
		tools = json_object_get(list, "tools");
		json_array_foreach(json_object_get(srv->table, "tools"), i, t) {
			json_t *l = json_array_get(tools, i);
			same += json_equal(json_object_get(l, "name"), json_object_get(t, "name")) &&
				json_equal(json_object_get(l, "description"), json_object_get(t, "description")) &&
				json_equal(json_object_get(l, "inputSchema"), json_object_get(t, "inputSchema")) &&
				!json_object_get(l, "argv") && !json_object_get(l, "input");
		}
		snprintf(desc, sizeof(desc), "%s: tools/list has its %zu tools with their schemas, no argv",
			 mcp_profiles[p].name, json_array_size(json_object_get(srv->table, "tools")));
		ok(same && same == json_array_size(tools) &&
		   same == json_array_size(json_object_get(srv->table, "tools")), desc);
		if (!strcmp(mcp_profiles[p].name, "ci")) {
			int all = json_array_size(tools) == ARRAY_SIZE(ci_tools);
			for (i = 0; all && i < ARRAY_SIZE(ci_tools); i++)
				all = !strcmp(json_string_value(json_object_get(json_array_get(tools, i), "name")),
					      ci_tools[i]);
			ok(all, "ci: the seed tools, in order");
			t = mcp_find_tool(srv, "grep");
			ok(t && json_is_object(json_object_get(json_object_get(json_object_get(t, "inputSchema"),
				"properties"), "pattern")), "ci: grep's schema has its pattern");
		}
		json_decref(list);
	}
	ok(use_profile(srv, "no-such-profile") < 0 && !srv->table, "an unknown profile is refused");
}

/* The argv of tool name for args (JSON), or NULL with *why; malloc'd. */
static char *argv_of(struct mcp_server *srv, const char *name, const char *args_json, char **why)
{
	json_t *tool = mcp_find_tool(srv, name), *args = json_loads(args_json, 0, NULL), *prepared, *groups;
	char **argv, *s = NULL;

	*why = mcp_validate(json_object_get(tool, "inputSchema"), args);
	if (*why)
		goto done;
	prepared = mcp_map_prepare(&srv->map, tool, args, why);
	if (!prepared)
		goto done;
	groups = mcp_pick_argv(tool, prepared);
	if (groups) {
		argv = mcp_build_argv(groups, prepared, json_object_get(tool, "inputSchema"));
		s = joined(argv);
		mcp_free_argv(argv);
	}
	json_decref(prepared);
done:
	json_decref(args);
	return s;
}

/* Arguments through the tables' jq input programs to argv. */
static void test_argv(struct mcp_server *srv)
{
	char *s, *why;

	use_profile(srv, "kit");
	s = argv_of(srv, "search_text_pattern",
		    "{\"query\":\"foo(\",\"case_sensitive\":true,\"file_extensions\":[\".py\",\"js\"]}", &why);
	ok(s && !strcmp(s, "ci-grep --json -F -C 2 -g *.py -g *.js -e foo( --"),
	   "kit search_text_pattern: literal (-F), case kept, default context, extensions as globs");
	free(s);
	s = argv_of(srv, "search_text_pattern", "{\"query\":\"a\",\"file_extensions\":[\"*/x\"]}", &why);
	ok(!s && why && strstr(why, "'*/x' is not a file extension"), "kit: the input program refuses a bad extension");
	free(why);
	s = argv_of(srv, "find_symbol_occurrences",
		    "{\"symbol_name\":\"main\",\"find_references\":false,\"target_paths\":[\"src\"]}", &why);
	ok(s && !strcmp(s, "ci-refs --path src --limit 1000 defs -- main"),
	   "kit find_symbol_occurrences: definitions only picks the defs variant, one path");
	free(s);
	s = argv_of(srv, "find_symbol_occurrences",
		    "{\"symbol_name\":\"main\",\"target_paths\":[\"a\",\"b\"]}", &why);
	ok(s && !strcmp(s, "ci-refs --limit 10000 occurrences -- main"),
	   "kit find_symbol_occurrences: both kinds, several paths: occurrences, a larger limit");
	free(s);
	s = argv_of(srv, "find_symbol_occurrences",
		    "{\"symbol_name\":\"m\",\"find_definitions\":false,\"find_references\":false}", &why);
	ok(!s && why && !strcmp(why, "parameters 'find_definitions' and 'find_references' are both false: "
				    "there is nothing to find"), "kit: error(...) in the input program is the reason");
	free(why);

	use_profile(srv, "ci");
	s = argv_of(srv, "grep", "{\"pattern\":\"x y\",\"ignore_case\":true,\"glob\":\"*.c\"}", &why);
	ok(s && !strcmp(s, "ci-grep --json -i -C 0 -g *.c -e x y"),
	   "ci grep: no input program: flags, defaults, a value as one element, absent groups left out");
	free(s);
	s = argv_of(srv, "grep", "{\"pattern\":\"\"}", &why);
	ok(!s && why && !strcmp(why, "parameter 'pattern' must not be empty"), "schema: minLength");
	free(why);
	s = argv_of(srv, "grep", "{\"pattern\":\"x\",\"context\":11}", &why);
	ok(!s && why && !strcmp(why, "parameter 'context' must be from 0 to 10, got 11"), "schema: maximum");
	free(why);
	s = argv_of(srv, "grep", "{\"pattern\":\"x\",\"nope\":1}", &why);
	ok(!s && why && !strcmp(why, "unknown parameter 'nope'"), "schema: an unknown parameter");
	free(why);
}

/* Paths and words: what the argv builder leans on. */
static void test_helpers(void)
{
	const char *why = NULL;
	char *s;

	s = mcp_confine_lexical("/r", "a/./b//c", &why);
	ok(s && !strcmp(s, "a/b/c"), "confine_lexical: . and empty parts go");
	free(s);
	s = mcp_confine_lexical("/r", "/r/x", &why);
	ok(s && !strcmp(s, "x"), "confine_lexical: an absolute path under the root");
	free(s);
	s = mcp_confine_lexical("/r", "a/../../etc", &why);
	ok(!s && !strcmp(why, "is outside the repository"), "confine_lexical: .. is refused");
	s = mcp_confine_lexical("/r", "/rx/y", &why);
	ok(!s && !strcmp(why, "is outside the repository"), "confine_lexical: a sibling of the root is outside");
	s = mcp_words_regex("where is parse_config called from the loader");
	ok(!strcmp(s, "(?:parse_config)"), "words_regex: the identifiers when there are some");
	free(s);
	s = mcp_words_regex("where does the loader read files");
	ok(!strcmp(s, "(?:loader|read)"), "words_regex: else the uncommon words of four letters or more");
	free(s);
	s = mcp_words_regex("a+b");
	ok(!strcmp(s, "a\\+b"), "words_regex: no words: the query as a literal");
	free(s);
}

/* Feed line to srv; the answer it wrote (parsed; new), or NULL when none. */
static json_t *answer(struct mcp_server *srv, char **mem, size_t *len, size_t *off, const char *line)
{
	json_t *r = NULL;

	mcp_handle_line(srv, line, strlen(line));
	fflush(srv->out);
	if (*len > *off)
		r = json_loadb(*mem + *off, *len - *off, JSON_DISABLE_EOF_CHECK, NULL);
	*off = *len;
	return r;
}

static int error_code(json_t *r)
{
	return (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

/* JSON-RPC requests parsed and answered on the stdio transport, nothing spawned. */
static void test_protocol(struct mcp_server *srv)
{
	char *mem = NULL, *argv;
	size_t len = 0, off = 0;
	json_t *r;
	struct mcp_call *c;

	use_profile(srv, "ci");
	srv->out = open_memstream(&mem, &len);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
			"\"params\":{\"protocolVersion\":\"2025-03-26\"}}");
	ok(json_integer_value(json_object_get(r, "id")) == 1 &&
	   !strcmp(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")), "2025-03-26") &&
	   json_object_get(json_object_get(json_object_get(r, "result"), "capabilities"), "tools"),
	   "initialize: the client's protocol version, the tools capability");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	ok(!r, "a notification is not answered");
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\r");
	ok(!strcmp(json_string_value(json_object_get(r, "id")), "p") &&
	   json_object_size(json_object_get(r, "result")) == 0, "ping: an empty result, the id kept (CR dropped)");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	ok(json_array_size(json_object_get(json_object_get(r, "result"), "tools")) == 15, "tools/list: fifteen tools");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":");
	ok(error_code(r) == -32700 && json_is_null(json_object_get(r, "id")), "not JSON: a parse error, id null");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]");
	ok(error_code(r) == -32600, "a batch is refused");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}");
	ok(error_code(r) == -32600, "jsonrpc must be 2.0");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"nope\"}");
	ok(error_code(r) == -32601 && !strcmp(json_string_value(json_object_get(json_object_get(r, "error"),
			"message")), "method not found: 'nope'"), "an unknown method");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
			"\"params\":{\"name\":\"grep\",\"arguments\":{}}}");
	ok(json_is_true(json_object_get(json_object_get(r, "result"), "isError")) &&
	   !strcmp(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(r, "result"),
			"content"), 0), "text")), "missing required parameter 'pattern'") && !srv->calls,
	   "tools/call with bad arguments: a tool error, nothing queued");
	json_decref(r);
	r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
			"\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"main\",\"word\":true}}}");
	c = srv->calls;
	ok(!r && c && c->state == CALL_QUEUED && json_integer_value(c->id) == 7 && !c->p.pid,
	   "tools/call: queued for the loop, not answered yet, nothing running");
	json_decref(r);
	if (c) {
		char **v = mcp_build_argv(mcp_pick_argv(c->tool, c->args), c->args,
					  json_object_get(c->tool, "inputSchema"));
		argv = joined(v);
		ok(!strcmp(argv, "ci-grep --json -w -C 0 -e main"), "the queued call's argv");
		free(argv);
		mcp_free_argv(v);
		r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
				"\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"x\"}}}");
		ok(error_code(r) == -32600, "a second request with the id of one in progress is refused");
		json_decref(r);
		r = answer(srv, &mem, &len, &off, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
				"\"params\":{\"requestId\":7}}");
		ok(!r && !srv->calls, "notifications/cancelled drops the call, answering nothing");
	}
	fclose(srv->out);
	srv->out = stdout;
	free(mem);
}

int main(int argc, char **argv)
{
	struct mcp_server srv;
	char dir[] = "/tmp/unit-mcp.XXXXXX";

	(void)argc;
	util_init(argv[0]);
	if (!mkdtemp(dir))
		die("cannot make a directory: %s", strerror(errno));
	mcp_server_init(&srv);
	srv.root = srv.home = xstrdup(dir);
	srv.index_path = xasprintf("%s/.ci-index/index.db", dir);
	srv.bindir = xstrdup("/nonexistent");

	test_tools_list(&srv);
	test_argv(&srv);
	test_helpers();
	test_protocol(&srv);

	mcp_server_shutdown(&srv);
	mcp_server_release(&srv);
	rmdir(dir);
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
