/*
 * unit-search.c: TAP tests of libcommon/search: queries run over a buffer in
 * memory, as ci-grep runs them over each file, and what they write: context
 * lines and their "--", -o, -r's expansion ($1, ${name}, $0, $$), --color's
 * escape sequences, -c, -l, -v, -m, records; the smart case rule, several -e
 * joined, the kind of search a pattern gets, a pattern refused, PCRE2's limit,
 * and two queries alive in one process.
 */
#include "core/common.h"
#include "search/search.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

static const char text[] =
	"alpha one\n"
	"beta two\n"
	"gamma three\n"
	"delta four\n"
	"epsilon five\n"
	"zeta six\n";

/* The options of a query for pattern, written for people, as ci-grep --no-json. */
static void opts_for(struct search_opts *o, const char *pattern)
{
	search_opts_init(o);
	o->pattern = pattern;
	o->threads = 1;
}

/*
 * Run the query o over buf as the file "f": what it writes, compared with
 * want (printed on a mismatch); *n: the lines it selected.
 */
static int writes(const struct search_opts *o, const char *buf, const char *want, long *n)
{
	struct search *q;
	struct buf out = BUF_INIT;
	int limited = -1, same;
	long nr;

	if (search_open(&q, o) < 0)
		return 0;
	nr = search_buffer(q, "f", buf, strlen(buf), &out, &limited);
	search_close(q);
	if (n)
		*n = nr;
	same = !strcmp(out.buf, want) && limited == 0;
	if (!same)
		printf("# wrote (limited %d):\n%s# wanted:\n%s", limited, out.buf, want);
	buf_release(&out);
	return same;
}

static void test_lines(void)
{
	struct search_opts o;
	long n = 0;

	opts_for(&o, "three");
	ok(writes(&o, text, "f:3:7:gamma three\n", &n) && n == 1, "a literal: path, line, column, text");
	o.before = o.after = 1;
	ok(writes(&o, text, "f-2-beta two\nf:3:7:gamma three\nf-4-delta four\n", NULL),
	   "-C1: the lines around it, with - around their numbers");
	opts_for(&o, "one|five");
	o.before = o.after = 1;
	ok(writes(&o, text, "f:1:7:alpha one\nf-2-beta two\n--\nf-4-delta four\nf:5:9:epsilon five\nf-6-zeta six\n",
		  &n) && n == 2, "-C1: '--' between groups of lines apart");
	opts_for(&o, "three");
	o.json = 1;
	o.before = o.after = 1;
	ok(writes(&o, text, "{\"_type\":\"match\",\"path\":\"f\",\"line\":3,\"col\":7,\"text\":\"gamma three\","
		  "\"before\":[\"beta two\"],\"after\":[\"delta four\"]}\n", NULL),
	   "-C1 as a record: the context as arrays");
	opts_for(&o, "a");
	o.max_count = 2;
	ok(writes(&o, text, "f:1:1:alpha one\nf:2:4:beta two\n", &n) && n == 2, "-m 2: the first two lines");
	opts_for(&o, "a");
	o.invert = 1;
	ok(writes(&o, text, "f:5:1:epsilon five\n", &n) && n == 1, "-v: the lines without a match, column 1");
	o.count = 1;
	ok(writes(&o, text, "f:1\n", NULL), "-v -c: their number");
	opts_for(&o, "a");
	o.count = 1;
	o.json = 1;
	ok(writes(&o, text, "{\"_type\":\"count\",\"path\":\"f\",\"count\":5}\n", NULL), "-c as a record");
	opts_for(&o, "six");
	o.files_only = 1;
	o.json = 1;
	ok(writes(&o, text, "{\"_type\":\"match_file\",\"path\":\"f\"}\n", NULL), "-l as a record");
	opts_for(&o, "seven");
	ok(writes(&o, text, "", &n) && n == 0, "no match: nothing written");
	opts_for(&o, "two");
	ok(writes(&o, "one\r\ntwo\r\n", "f:2:1:two\n", NULL), "CRLF: the text without its carriage return");
}

static void test_only(void)
{
	struct search_opts o;

	opts_for(&o, "t[a-z]");
	o.only = 1;
	ok(writes(&o, text, "f:2:3:ta\nf:2:6:tw\nf:3:7:th\nf:4:4:ta\nf:6:3:ta\n", NULL),
	   "-o: each match, with its own column");
	o.json = 1;
	ok(writes(&o, "beta two\n", "{\"_type\":\"match\",\"path\":\"f\",\"line\":1,\"col\":3,\"text\":\"ta\"}\n"
		  "{\"_type\":\"match\",\"path\":\"f\",\"line\":1,\"col\":6,\"text\":\"tw\"}\n", NULL),
	   "-o as records: one a match");
	opts_for(&o, "tw");
	o.only = 1;
	o.before = o.after = 1;
	ok(writes(&o, text, "f-1-alpha one\nf:2:6:tw\nf-3-gamma three\n", NULL), "-o -C1: the matches with context, as rg");
	opts_for(&o, "x*");
	o.only = 1;
	ok(writes(&o, "axb\n", "f:1:2:x\n", NULL), "-o: empty matches are not written");
}

static void test_replace(void)
{
	struct search_opts o;

	opts_for(&o, "(\\w+) (?<num>\\w+)");
	o.replace = "$2/${num}/$1/$$/$0/$9/$x/${";
	ok(writes(&o, "alpha one\n", "f:1:1:one/one/alpha/$/alpha one///${\n", NULL),
	   "-r: $2, ${name}, $1, $$, $0; a group that does not exist is empty, '${' itself");
	opts_for(&o, "o");
	o.replace = "[$0]";
	ok(writes(&o, "foo bar\n", "f:1:2:f[o][o] bar\n", NULL), "-r: every match of the line replaced");
	opts_for(&o, "b(x)?");
	o.replace = "<$1>";
	ok(writes(&o, "abc\n", "f:1:2:a<>c\n", NULL), "-r: a group that did not take part is empty");
	opts_for(&o, "(?<w>o+)");
	o.replace = "$w!";
	o.only = 1;
	o.json = 1;
	ok(writes(&o, "foo\n", "{\"_type\":\"match\",\"path\":\"f\",\"line\":1,\"col\":2,\"text\":\"oo!\"}\n", NULL),
	   "-o -r as a record: the replacement is the text");
	opts_for(&o, "o");
	o.replace = "0";
	o.invert = 1;
	ok(writes(&o, "foo\nbar\n", "f:2:1:bar\n", NULL), "-v -r: nothing to replace, the lines as they are");
}

#define PATH "\033[0m\033[35m"
#define LINE "\033[0m\033[32m"
#define COL "\033[0m"
#define MATCH "\033[0m\033[1m\033[31m"
#define END "\033[0m"

static void test_color(void)
{
	struct search_opts o;

	opts_for(&o, "o");
	o.color = 1;
	ok(writes(&o, "foo\n", PATH "f" END ":" LINE "1" END ":" COL "2" END ":f" MATCH "o" END MATCH "o" END "\n",
		  NULL), "--color: path, line, column and each match, as rg colours them");
	o.before = 1;
	ok(writes(&o, "bar\nfoo\n", PATH "f" END "-" LINE "1" END "-bar\n" PATH "f" END ":" LINE "2" END ":" COL "2" END
		  ":f" MATCH "o" END MATCH "o" END "\n", NULL), "--color: a context line has no column, no match");
	opts_for(&o, "o");
	o.color = 1;
	o.files_only = 1;
	ok(writes(&o, "foo\n", PATH "f" END "\n", NULL), "--color -l: the path");
}

static void test_case(void)
{
	static const char *const two[] = { "a.b", "(c" };
	struct buf b = BUF_INIT;
	struct search_opts o;

	ok(!search_has_uppercase("foo_bar"), "-S: no uppercase letter, case-insensitive");
	ok(search_has_uppercase("fooBar"), "-S: an uppercase letter, case-sensitive");
	ok(!search_has_uppercase("\\S+\\W\\D"), "-S: \\S, \\W, \\D are classes, not letters");
	ok(!search_has_uppercase("\\p{Lu}\\P{L}\\x{41}"), "-S: nor what is inside \\p{...}, \\P{...}, \\x{...}");
	ok(search_has_uppercase("\\p{Lu}A") && search_has_uppercase("\\bA"), "-S: a letter after those is one");
	ok(!search_has_uppercase("ab\\"), "-S: a trailing backslash");
	opts_for(&o, "ALPHA|BETA");
	o.icase = 1;
	ok(writes(&o, text, "f:1:1:alpha one\nf:2:1:beta two\n", NULL), "-i: either case");
	opts_for(&o, "KELVIN");
	o.icase = 1;
	ok(writes(&o, "\xe2\x84\xaa" "elvin\n", "f:1:1:\xe2\x84\xaa" "elvin\n", NULL), "-i: the Kelvin sign is a k");

	search_join_patterns(&b, two, 2, 0);
	ok(!strcmp(b.buf, "(?:a.b)|(?:(c)"), "several -e: one group each, joined by '|'");
	buf_reset(&b);
	search_join_patterns(&b, two, 2, 1);
	ok(!strcmp(b.buf, "(?:a\\.b)|(?:\\(c)"), "several -e -F: each escaped");
	opts_for(&o, b.buf);
	ok(writes(&o, "a.b\n(c\naxb\n", "f:1:1:a.b\nf:2:1:(c\n", NULL), "several -e -F: a line matching either");
	buf_release(&b);
}

static void test_query(void)
{
	struct search_opts o, o2;
	struct search *q = NULL, *q2 = NULL;
	struct buf out = BUF_INIT, out2 = BUF_INIT;
	int limited;
	long n;

	opts_for(&o, "foo");
	ok(search_open(&q, &o) == 0 && !strcmp(search_kind_name(q), "literal") && !strcmp(search_literal(q), "foo"),
	   "a literal is searched without the regex engine");
	search_close(q);
	opts_for(&o, "foo\\w+");
	ok(search_open(&q, &o) == 0 && !strcmp(search_kind_name(q), "prefilter"), "a regex holding 'foo': it first");
	search_close(q);
	opts_for(&o, "\\w+$");
	ok(search_open(&q, &o) == 0 && !strcmp(search_kind_name(q), "regex") && !search_literal(q),
	   "a regex with no literal: over the whole buffer");
	search_close(q);
	opts_for(&o, "x\\ny");
	ok(search_open(&q, &o) == 0 && !strcmp(search_kind_name(q), "no"), "a newline in every match: no line matches");
	search_close(q);

	fputs("# the errors below are expected\n", stdout);
	fflush(stdout);
	opts_for(&o, "(a");
	ok(search_open(&q, &o) < 0 && !q, "an invalid pattern is refused");
	opts_for(&o, "a\nb");
	ok(search_open(&q, &o) < 0 && !q, "a pattern holding a newline is refused");

	/* PCRE2's limit: the line is left, the search says so */
	opts_for(&o, "(a+)+$");
	o.match_limit = 1;
	ok(search_open(&q, &o) == 0, "a catastrophic pattern, a tiny match limit");
	n = search_buffer(q, "f", "aaaaaaaaaaaaaaaaaaaaaaaab\n", 26, &out, &limited);
	ok(n == 0 && limited == 1 && !out.len, "the limit hit: no match, limited");
	search_close(q);
	buf_reset(&out);

	/* two queries at once, each with its own options and pattern */
	opts_for(&o, "one");
	o.json = 1;
	opts_for(&o2, "t(w)o");
	o2.replace = "$1";
	ok(search_open(&q, &o) == 0 && search_open(&q2, &o2) == 0, "two queries open at once");
	search_buffer(q2, "a", text, strlen(text), &out2, &limited);
	search_buffer(q, "b", text, strlen(text), &out, &limited);
	search_buffer(q2, "c", "two\n", 4, &out2, &limited);
	ok(!strcmp(out.buf, "{\"_type\":\"match\",\"path\":\"b\",\"line\":1,\"col\":7,\"text\":\"alpha one\"}\n") &&
	   !strcmp(out2.buf, "a:2:6:beta w\nc:1:1:w\n"), "... each writes what its own options say");
	search_close(q);
	search_close(q2);
	buf_release(&out);
	buf_release(&out2);
}

int main(int argc, char **argv)
{
	(void)argc;
	util_init(argv[0]);
	test_lines();
	test_only();
	test_replace();
	test_color();
	test_case();
	test_query();
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
