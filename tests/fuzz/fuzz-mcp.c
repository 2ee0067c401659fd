/*
 * fuzz-mcp.c: ci-mcp's JSON-RPC handler with each profile's tool table, in
 * process: cmd/ci-mcp.c is compiled into this target (its main() renamed), and
 * each input's lines are handed to handle_line() as the stdio transport would.
 *
 * Input: a profile byte (ci, kit, shaktiman, abstract, codebase-context,
 * bobbin), then JSON-RPC messages a line each.  A tools/call goes through the
 * schema check, the repository and path checks and the table's jq input
 * program as when served; the calls it queues then have their command lines
 * built (pick_argv, build_argv) and are dropped, never run.  Replies go to
 * /dev/null.  The profile's table is loaded for each input and released after
 * it, jq programs included.  Properties: no crash, no leak, and every built argv has a
 * command and no NULL before its end.
 */
int ci_mcp_main(int argc, char **argv);
#define main ci_mcp_main
#include "../../cmd/ci-mcp.c"
#undef main
#include "fuzz.h"

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
	/* an empty repository: tools that need an index or files find none */
	root = home = xstrdup(dir);
	ALLOC_GROW(repos, 1, repos_alloc);
	repos[0].name = xstrdup("fuzz");
	repos[0].root = xstrdup(dir);
	repos_nr = 1;
	index_path = xasprintf("%s/.ci-index/index.db", dir);
	bindir = xstrdup("/nonexistent");
	git_libgit2_init();
}

/* Build the argv of every queued call, check it, and drop the call. */
static void drop_calls(void)
{
	while (calls) {
		struct call *c = calls;
		json_t *schema = json_object_get(c->tool, "inputSchema");
		json_t *groups = pick_argv(c->tool, c->args);

		if (groups) {
			char **argv = build_argv(groups, c->args, schema);
			if (!argv[0])
				fuzz_fail("a tool's argv is empty");
			free_argv(argv);
		}
		call_unlink(c);
		call_free(c);
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
	table = load_profile(profiles[data[0] % ARRAY_SIZE(profiles)].name, 0);
	p = (const char *)data + 1;
	end = (const char *)data + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		handle_line(p, n);
		drop_calls();
		p += n + 1;
	}
	mcp_map_release();
	json_decref(table);
	table = NULL;
	return 0;
}
