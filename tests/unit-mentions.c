/*
 * unit-mentions.c: TAP tests of what the index stores from a file's text for
 * the call graph: a definition's flags and the main guard (parse/tagtext.h),
 * and the mention text (index/mentions.h): a reference's position and a
 * definition's own name are no mentions, a mention on an import line or
 * inside a definition of that name is kept with its line, a string "cmd_"
 * is a prefix.
 */
#include "core/common.h"
#include "index/mentions.h"
#include "parse/tagtext.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void is_str(const char *got, const char *want, const char *desc)
{
	int ok = got && !strcmp(got, want);

	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		printf("#   got:\n%s\n#   expected:\n%s\n", got ? got : "(null)", want);
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

static const char *const *the_lines;
static long the_nr;

static const char *line_at(void *ctx, long l)
{
	(void)ctx;
	return l >= 1 && l <= the_nr ? the_lines[l - 1] : NULL;
}

int main(int argc, char **argv)
{
	static const char *const py[] = {
		"from app.util import helper",		/* 1: helper on an import line */
		"",
		"@app.route(\"/\")",			/* 3 */
		"",
		"def run(cb):",				/* 5: run is the definition's own name */
		"    register(on_event)  # on_event",	/* 6: register a call, the comment no mention */
		"    x = run",				/* 7: run inside run */
		"    getattr(self, \"cmd_\" + cb)",	/* 8: a prefix */
		"    return on_event",			/* 9 */
		"",
		"if __name__ == \"__main__\":",		/* 11 */
	};
	static const char *const c[] = {
		"__attribute__((constructor)) static void init(void)",
		"{",
		"}",
	};
	struct mn_pos refs[] = { { 6, 5 }, { 8, 5 } };	/* register(...), getattr(...) */
	struct mn_def defs[] = { { "run", 5, 9 } };
	struct buf out = BUF_INIT;

	util_init(argv[0]);
	(void)argc;
	printf("1..6\n");
	the_lines = py;
	the_nr = (long)ARRAY_SIZE(py);
	is_int(tagtext_def_flags(line_at, NULL, 5), TAGTEXT_DECORATED, "flags: a decorator above, a blank line between");
	is_int(tagtext_def_flags(line_at, NULL, 1), 0, "flags: none on the first line");
	is_int(tagtext_main_guard(line_at, NULL, the_nr), 11, "main guard: its line");
	mentions_text(&out, line_at, NULL, the_nr, "python", refs, ARRAY_SIZE(refs), defs, ARRAY_SIZE(defs));
	is_str(out.buf,
	       ">from 1\n>app 1\n>util 1\n>import 1\n>helper 1\n=run 7\n$cmd_\n$__main__\n"
	       "__main__ 1\n__name__ 1\napp 1\ncb 2\ncmd_ 1\ndef 1\nif 1\non_event 2\nreturn 1\nroute 1\n"
	       "self 1\nx 1\n",
	       "mentions: import lines and run inside run with their lines, the others counted by name");
	the_lines = c;
	the_nr = (long)ARRAY_SIZE(c);
	is_int(tagtext_def_flags(line_at, NULL, 1), TAGTEXT_DECORATED, "flags: a C constructor");
	mentions_text(&out, line_at, NULL, 0, "c", NULL, 0, NULL, 0);
	is_int((long)out.len, 0, "mentions: no lines, no text");
	buf_release(&out);
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
