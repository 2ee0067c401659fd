/*
 * fuzz-mcp.c: ci-mcp's JSON-RPC handler with each profile's tool table, in
 * process: a server of libcommon/mcp (mcp.h) is built once, and each input's
 * lines are handed to mcp_handle_line() as the stdio transport would.
 *
 * Input: a profile byte (ci, kit, shaktiman, abstract, codebase-context,
 * bobbin), then JSON-RPC messages a line each.  A tools/call goes through the
 * schema check, the repository and path checks and the table's jq input
 * program as when served; the calls it queues then have their command lines
 * built (mcp_pick_argv, mcp_build_argv) and are dropped, never run.  Replies
 * go to /dev/null.  The profile's table is loaded for each input and released
 * after it, jq programs included.  Properties: no crash, no leak, and every
 * built argv has a command and no NULL before its end.
 */
#include "mcp/internal.h"
#include "fuzz.h"

#include <git2.h>

static struct mcp_server srv;

static void fuzz_init(void)
{
	static int done;
	char dir[] = "/tmp/ci-fuzz-mcp.XXXXXX";

	if (done)
		return;
	done = 1;
	if (!freopen("/dev/null", "w", stdout))
		abort();
	util_init("ci-mcp");
	if (!mkdtemp(dir))
		abort();
	mcp_server_init(&srv);
	/* an empty repository: tools that need an index or files find none */
	srv.root = srv.home = xstrdup(dir);
	ALLOC_GROW(srv.repos, 1, srv.repos_alloc);
	srv.repos[0].name = xstrdup("fuzz");
	srv.repos[0].root = xstrdup(dir);
	srv.repos_nr = 1;
	srv.index_path = xasprintf("%s/.ci-index/index.db", dir);
	srv.bindir = xstrdup("/nonexistent");
	git_libgit2_init();
}

/* Build the argv of every queued call, check it, and drop the call. */
static void drop_calls(void)
{
	while (srv.calls) {
		struct mcp_call *c = srv.calls;
		json_t *schema = json_object_get(c->tool, "inputSchema");
		json_t *groups = mcp_pick_argv(c->tool, c->args);

		if (groups) {
			char **argv = mcp_build_argv(groups, c->args, schema);
			if (!argv[0])
				fuzz_fail("a tool's argv is empty");
			mcp_free_argv(argv);
		}
		mcp_call_unlink(c);
		mcp_call_free(c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p, *end;

	fuzz_init();
	if (size < 1)
		return 0;
	/* the table anew for each input (its jq programs compiled when first run,
	   torn down after), so that no input leaves state for the next */
	if (mcp_load_profile(&srv, mcp_profiles[data[0] % mcp_profiles_nr].name, 0) < 0)
		abort();
	p = (const char *)data + 1;
	end = (const char *)data + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		mcp_handle_line(&srv, p, n);
		drop_calls();
		p += n + 1;
	}
	mcp_map_release(&srv.map);
	json_decref(srv.table);
	srv.table = NULL;
	return 0;
}
