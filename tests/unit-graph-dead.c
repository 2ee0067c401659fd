/*
 * unit-graph-dead.c: TAP tests of what dead leaves out (cgraph.h): test
 * paths, entry points by name, decorators and dunder methods; and of
 * bind_fits(), by which an unbound call keeps every definition it may reach.
 */
#include "core/common.h"
#include "graph/cgraph.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void is_str(const char *got, const char *want, const char *desc)
{
	int ok = (!got && !want) || (got && want && !strcmp(got, want));

	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		printf("#   got %s, expected %s\n", got ? got : "(null)", want ? want : "(null)");
		failures++;
	}
}

static void is_int(long got, long want, const char *desc)
{
	printf("%sok %d - %s\n", got == want ? "" : "not ", ++test_nr, desc);
	if (got != want) {
		printf("#   got %ld, expected %ld\n", got, want);
		failures++;
	}
}

/* The entry reason of a definition named name in path. */
static const char *entry(const char *name, const char *path, int decorated)
{
	struct cg_file f = { 0 };
	char *kind = (char *)"function";
	struct cgraph g = { .files = &f, .files_nr = 1, .kinds = &kind, .kinds_nr = 1 };
	struct cg_def d = { 0 };
	char block[64];

	f.path = (char *)path;
	g.strs = (char *[]){ block };
	snprintf(block, sizeof(block), "@%s", name);	/* (byte 0 of the first block unused) */
	d.name_at = 1;
	d.decorated = decorated;
	return cgraph_entry_reason(&g, &d);
}

int main(int argc, char **argv)
{
	struct bind_def m = { "a.py", "Job", 0 }, f = { "b.py", NULL, 0 };

	(void)argc;
	util_init(argv[0]);
	printf("1..23\n");
	is_int(cgraph_is_test_path("tests/unit-bind.c"), 1, "test path: tests/");
	is_int(cgraph_is_test_path("src/pkg/test/x.py"), 1, "test path: /test/");
	is_int(cgraph_is_test_path("pkg/test_api.py"), 1, "test path: test_*.py");
	is_int(cgraph_is_test_path("pkg/api_test.go"), 1, "test path: *_test.go");
	is_int(cgraph_is_test_path("web/app.spec.ts"), 1, "test path: *.spec.ts");
	is_int(cgraph_is_test_path("web/app.test.js"), 1, "test path: *.test.js");
	is_int(cgraph_is_test_path("conftest.py"), 1, "test path: conftest.py");
	is_int(cgraph_is_test_path("t/helper/test-tool.c"), 1, "test path: t/ (git's)");
	is_int(cgraph_is_test_path("src/tools/x.c"), 0, "not a test path: tools/");
	is_int(cgraph_is_test_path("src/testimony.py"), 0, "not a test path: testimony.py");
	is_int(cgraph_is_test_path("src/contest/latest.py"), 0, "not a test path: contest/latest.py");
	is_str(entry("main", "src/x.c", 0), "main", "entry: main");
	is_str(entry("LLVMFuzzerTestOneInput", "fuzz/f.c", 0), "main", "entry: a fuzzer's");
	is_str(entry("test_parse", "src/x.py", 0), "test", "entry: test_ function");
	is_str(entry("TestParse", "src/x.go", 0), "test", "entry: Go TestXxx");
	is_str(entry("helper", "tests/x.py", 0), "test", "entry: anything in a test file");
	is_str(entry("__init__", "src/x.py", 0), "dunder", "entry: dunder method");
	is_str(entry("__", "src/x.py", 0), NULL, "not dunder: __ alone");
	is_str(entry("index", "web/views.py", 1), "decorated", "entry: decorated");
	is_str(entry("index", "web/views.py", 0), NULL, "no entry: a plain function");
	is_int(bind_fits("c.py", NULL, RECV_OTHER, &m), 1, "fits: x.run() may reach a method");
	is_int(bind_fits("c.py", NULL, RECV_BARE, &m), 0, "fits: run() reaches no method");
	is_int(bind_fits("b.py", NULL, RECV_OTHER, &f), 0, "fits: x.run() reaches no function of its own file");
	return failures ? 1 : 0;
}
