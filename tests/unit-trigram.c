/*
 * unit-trigram.c: TAP tests of trigram_analyze() (libcommon/index/trigram.c).
 *
 * Two kinds of checks:
 *   - golden cases: the FTS5 query, literal and required string of patterns
 *     people type, and NULL for the syntax the analysis does not understand;
 *   - a randomized property test with PCRE2 as the oracle: for thousands of random
 *     patterns (fixed seed) and random lines, every line PCRE2 matches satisfies
 *     the query (evaluated on the line's own trigrams, case folded as the index
 *     folds them), contains the required string, and, when the pattern is a
 *     literal, the lines that contain it are exactly the lines that match.
 *     A failure prints the pattern and the line.
 */
#include "core/common.h"
#include "index/trigram.h"
#include "trigram-eval.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	if (!cond)
		failures++;
}

static int streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The query of pattern under flags is want (NULL: none). */
static void is_query(const char *pattern, unsigned flags, const char *want)
{
	char *got = trigram_query(pattern, flags);
	char desc[512];

	snprintf(desc, sizeof(desc), "query of '%s'%s%s", pattern, flags & TRIGRAM_FIXED ? " -F" : "",
		 flags & TRIGRAM_ICASE ? " -i" : "");
	ok(streq(got, want), desc);
	if (!streq(got, want)) {
		printf("#   got:      %s\n", got ? got : "(null)");
		printf("#   expected: %s\n", want ? want : "(null)");
	}
	free(got);
}

/* A made-up document frequency: the Linux tree's for a few trigrams, else a hash. */
static long fake_df(const char *tri, void *data)
{
	static const struct { const char *tri; long df; } table[] = {
		{ "PM_", 18346 }, { "M_S", 45709 }, { "_SU", 50763 }, { "SUS", 16178 },
		{ "USP", 14185 }, { "SPE", 69117 }, { "PEN", 63957 }, { "END", 139985 },
		{ "foo", 900 }, { "bar", 20000 }, { "baz", 30000 }, { "oob", 0 }, { "oba", 0 },
	};
	unsigned long h = 5381;
	const char *c;

	if (data)
		return 0;	/* nothing known: every trigram rare */
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].tri, tri))
			return table[i].df;
	for (c = tri; *c; c++)
		h = h * 33 + (unsigned char)*c;
	return (long)(h % 200000);
}

static void is_lean(const char *pattern, unsigned flags, int unknown, const char *want)
{
	char *got = trigram_query_lean(pattern, flags, fake_df, unknown ? (void *)1 : NULL);
	char desc[512];

	snprintf(desc, sizeof(desc), "lean query of '%s'%s", pattern, unknown ? " (no counts)" : "");
	ok(streq(got, want), desc);
	if (!streq(got, want)) {
		printf("#   got:      %s\n", got ? got : "(null)");
		printf("#   expected: %s\n", want ? want : "(null)");
	}
	free(got);
}

static void is_literal(const char *pattern, const char *lit, const char *req, int looks_ahead)
{
	struct trigram_info info;
	char desc[512];
	int good;

	trigram_analyze(&info, pattern, 0);
	good = streq(info.literal, lit) && streq(info.required, req) && info.looks_ahead == looks_ahead;
	snprintf(desc, sizeof(desc), "literal, required string and lookahead of '%s'", pattern);
	ok(good, desc);
	if (!good)
		printf("#   got literal %s, required %s, looks_ahead %d\n",
		       info.literal ? info.literal : "(null)", info.required ? info.required : "(null)",
		       info.looks_ahead);
	trigram_info_release(&info);
}

/* ---- random patterns and lines ---- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

static const char *const atoms[] = {
	"a", "b", "c", "A", "B", "_", "x", "y", "ab", "abc", "bca", "foo", "Foo", "bar", "\\(", "\\.",
	".", "\\w", "\\d", "\\s", "\\W", "[ab]", "[a-c]", "[^a]", "[A-Z]", "[aA]", "[_x]", "\\x61",
	"\\Qa.b\\E", "\\bfoo", "^", "$", "\\b", "(?=a)", "(?!b)", "(?<=a)", "(?i)", "é", "ß",
	"[[:alpha:]]", "\\p{L}", "\\n", "\\t", " ",
};

static void gen_pattern(struct buf *b, int depth)
{
	int n = 1 + (int)rnd(4), k;

	for (k = 0; k < n; k++) {
		unsigned r = rnd(10);

		if (r < 2 && depth < 3) {
			static const char *const open[] = { "(", "(?:", "(?>" };
			buf_addstr(b, open[rnd(3)]);
			gen_pattern(b, depth + 1);
			if (rnd(2)) {
				buf_addch(b, '|');
				gen_pattern(b, depth + 1);
			}
			buf_addch(b, ')');
		} else {
			buf_addstr(b, atoms[rnd(ARRAY_SIZE(atoms))]);
		}
		switch (rnd(12)) {
		case 0: buf_addch(b, '*'); break;
		case 1: buf_addch(b, '+'); break;
		case 2: buf_addch(b, '?'); break;
		case 3: buf_addstr(b, "{2}"); break;
		case 4: buf_addstr(b, "{1,3}"); break;
		case 5: buf_addstr(b, "+?"); break;
		case 6: buf_addstr(b, "{4,}"); break;
		}
	}
	if (depth == 0 && rnd(6) == 0) {
		buf_addch(b, '|');
		gen_pattern(b, 1);
	}
}

static void gen_line(struct buf *b)
{
	static const char *const bits[] = {
		"a", "b", "c", "A", "B", "C", "_", "x", "y", " ", "\t", "foo", "Foo", "FOO", "bar",
		"abc", "ABC", "(", ".", "1", "2", "é", "É", "ß", "a.b", "xab", "ss",
	};
	int n = (int)rnd(16), k;

	for (k = 0; k < n; k++)
		buf_addstr(b, bits[rnd(ARRAY_SIZE(bits))]);
}

/* Check one pattern against lines; returns 0 if a property failed (reported). */
static int check_pattern(const char *pattern, unsigned flags, char lines[][128], int nlines)
{
	struct trigram_info info;
	pcre2_code *re;
	pcre2_match_data *md;
	int err, i, rc, good = 1;
	PCRE2_SIZE off;
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE;
	char *lean;

	if (flags & TRIGRAM_ICASE)
		opts |= PCRE2_CASELESS;
	if (flags & TRIGRAM_FIXED)
		opts |= PCRE2_LITERAL;
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &err, &off, NULL);
	if (!re)
		return 1;	/* not a pattern: nothing to check */
	md = pcre2_match_data_create_from_pattern(re, NULL);
	trigram_analyze(&info, pattern, flags);
	lean = trigram_query_lean(pattern, flags, fake_df, NULL);
	for (i = 0; i < nlines && good; i++) {
		const char *line = lines[i];
		size_t len = strlen(line);
		int matched, q;

		rc = pcre2_match(re, (PCRE2_SPTR)line, len, 0, 0, md, NULL);
		matched = rc >= 0;
		if (info.query) {
			q = trigram_eval_query(info.query, line);
			if (q < 0 || (matched && !q)) {
				printf("# pattern '%s' (flags %u): query %s %s line '%s'\n", pattern, flags,
				       info.query, q < 0 ? "does not parse, at" : "excludes the matching", line);
				good = 0;
			}
		}
		if (lean && matched && trigram_eval_query(lean, line) != 1) {
			printf("# pattern '%s' (flags %u): lean query %s excludes the matching line '%s'\n",
			       pattern, flags, lean, line);
			good = 0;
		}
		if (!!lean != !!info.query) {
			printf("# pattern '%s': a lean query %s and a query %s\n", pattern, lean ? "exists" : "does not",
			       info.query ? "exists" : "does not");
			good = 0;
		}
		if (matched && info.required && !memmem(line, len, info.required, info.required_len)) {
			printf("# pattern '%s': line '%s' matches without the required '%s'\n",
			       pattern, line, info.required);
			good = 0;
		}
		if (info.literal && !!memmem(line, len, info.literal, info.literal_len) != matched) {
			printf("# pattern '%s': literal '%s' and the regex disagree on line '%s'\n",
			       pattern, info.literal, line);
			good = 0;
		}
	}
	trigram_info_release(&info);
	free(lean);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return good;
}

static void random_tests(int npatterns, unsigned flags, const char *desc)
{
	static char lines[64][128];
	struct buf pat = BUF_INIT, line = BUF_INIT;
	int p, i, bad = 0, with_query = 0;

	for (p = 0; p < npatterns && bad < 5; p++) {
		char *q;

		buf_reset(&pat);
		gen_pattern(&pat, 0);
		for (i = 0; i < 64; i++) {
			buf_reset(&line);
			gen_line(&line);
			/* plant what the pattern's literal atoms look like, to get matches */
			if (rnd(3) == 0)
				buf_addstr(&line, atoms[rnd(12)]);
			snprintf(lines[i], sizeof(lines[i]), "%s", line.buf);
		}
		if (!check_pattern(pat.buf, flags, lines, 64))
			bad++;
		q = trigram_query(pat.buf, flags);
		with_query += q != NULL;
		free(q);
	}
	printf("# %d of %d random patterns gave a query\n", with_query, p);
	ok(!bad, desc);
	buf_release(&pat);
	buf_release(&line);
}

int main(void)
{
	/* literals */
	is_query("PM_SUSPEND", 0, "\"PM_\" AND \"M_S\" AND \"_SU\" AND \"SUS\" AND \"USP\" AND \"SPE\" AND \"PEN\" AND \"END\"");
	is_query("foo", 0, "\"foo\"");
	/* lean: the rarest three that do not overlap inside a word, and the cheap
	 * ones ("M_S" overlaps "PM_" across the underscore: it is kept) */
	is_lean("PM_SUSPEND", 0, 0, "\"USP\" AND \"PM_\" AND \"M_S\"");
	is_lean("PM_SUSPEND", 0, 1,
		"\"PM_\" AND \"M_S\" AND \"_SU\" AND \"SUS\" AND \"USP\" AND \"SPE\" AND \"PEN\" AND \"END\"");
	is_lean("foobarbaz", 0, 0, "\"oob\" AND \"oba\" AND \"foo\"");
	is_lean("(PM_SUSPEND|foobarbaz)", 0, 0,
		"(\"USP\" AND \"PM_\" AND \"M_S\") OR (\"oob\" AND \"oba\" AND \"foo\")");
	/* -i: an operand is the OR of a trigram's case variants, which costs their sum */
	is_lean("pm_sus", TRIGRAM_ICASE, 0,
		"(\"pm_\" OR \"Pm_\" OR \"pM_\" OR \"PM_\") AND "
		"(\"_su\" OR \"_Su\" OR \"_\xc5\xbfu\" OR \"_sU\" OR \"_SU\" OR \"_\xc5\xbfU\") AND "
		"(\"m_s\" OR \"M_s\" OR \"m_S\" OR \"M_S\" OR \"m_\xc5\xbf\" OR \"M_\xc5\xbf\")");
	is_lean("fo", 0, 0, NULL);
	is_query("fo", 0, NULL);
	is_query("", 0, NULL);
	is_query("a\"bc", 0, "\"a\"\"b\" AND \"\"\"bc\"");
	/* -i: each trigram's case variants, for the table that keeps case */
	is_query("Foo", TRIGRAM_ICASE,
		 "\"foo\" OR \"Foo\" OR \"fOo\" OR \"FOo\" OR \"foO\" OR \"FoO\" OR \"fOO\" OR \"FOO\"");
	is_query("(?i)a_1", 0, "\"a_1\" OR \"A_1\"");
	/* PCRE2 folds s with U+017F (long s) and k with U+212A (Kelvin sign) */
	is_query("_sk", TRIGRAM_ICASE,
		 "\"_sk\" OR \"_Sk\" OR \"_\xc5\xbfk\" OR \"_sK\" OR \"_SK\" OR \"_\xc5\xbfK\" OR "
		 "\"_s\xe2\x84\xaa\" OR \"_S\xe2\x84\xaa\" OR \"_\xc5\xbf\xe2\x84\xaa\"");
	is_query("_1(", TRIGRAM_ICASE | TRIGRAM_FIXED, "\"_1(\"");
	is_query("foo(", TRIGRAM_FIXED, "\"foo\" AND \"oo(\"");
	is_query("f.o", TRIGRAM_FIXED, "\"f.o\"");
	is_query("f.o", 0, NULL);
	/* regex structure */
	is_query("[A-Z]+_SUSPEND", 0, "\"_SU\" AND \"SUS\" AND \"USP\" AND \"SPE\" AND \"PEN\" AND \"END\"");
	is_query("foo|bar", 0, "\"foo\" OR \"bar\"");
	is_query("(foo|bar)baz", 0,
		 "(\"foo\" AND \"oob\" AND \"oba\" AND \"baz\") OR (\"bar\" AND \"arb\" AND \"rba\" AND \"baz\")");
	is_query("abc(d|e)fgh", 0,
		 "(\"abc\" AND \"bcd\" AND \"cdf\" AND \"dfg\" AND \"fgh\") OR "
		 "(\"abc\" AND \"bce\" AND \"cef\" AND \"efg\" AND \"fgh\")");
	is_query("[Aa]bc", 0, "\"Abc\" OR \"abc\"");
	is_query("abc\\d+def", 0, "\"abc\" AND \"def\"");
	is_query("\\bstatic\\s+int\\b", 0, "\"sta\" AND \"tat\" AND \"ati\" AND \"tic\" AND \"int\"");
	is_query("foo.*bar", 0, "\"foo\" AND \"bar\"");
	is_query("(abc)?def", 0, "\"def\"");
	is_query("(abc)+", 0, "\"abc\"");
	is_query("(ab){3}", 0, "\"aba\" AND \"bab\"");
	is_query("x(?=y)yz", 0, "\"xyz\"");
	is_query("\\x41BC", 0, "\"ABC\"");
	is_query("a\\.bc", 0, "\"a.b\" AND \".bc\"");
	is_query("\\Qa.b*c\\E", 0, "\"a.b\" AND \".b*\" AND \"b*c\"");
	is_query("(?i)\xc3\x89T\xc3\x89", 0, NULL);	/* PCRE2's folding of non-ASCII is not SQLite's */
	is_query("\xc3\x89T\xc3\x89", 0, "\"\xc3\x89T\xc3\x89\"");	/* the index keeps case */
	/* what the analysis does not understand: every file is a candidate */
	is_query("(?x) foo bar", 0, NULL);
	is_query("(a)(?1)bcd", 0, NULL);
	is_query("(*UTF)abc", 0, NULL);
	is_query("(?(1)abc|def)", 0, NULL);
	is_query("abc\\Cdef", 0, NULL);
	is_query("(abc", 0, NULL);
	is_query("abc)", 0, NULL);
	is_query("(a)\\1bcd", 0, "\"bcd\"");
	/* phrases, for a table with positions */
	is_query("PM_SUSPEND", TRIGRAM_PHRASES, "\"PM_SUSPEND\"");
	is_query("[A-Z]+_SUSPEND|pm_resume", TRIGRAM_PHRASES, "\"_SUSPEND\" OR \"pm_resume\"");
	/* -i: a phrase becomes its trigrams' case variants */
	is_query("a_b_", TRIGRAM_PHRASES | TRIGRAM_ICASE,
		 "(\"a_b\" OR \"A_b\" OR \"a_B\" OR \"A_B\") AND (\"_b_\" OR \"_B_\")");
	is_query("foo\\w+bar", TRIGRAM_PHRASES, "\"foo\" AND \"bar\"");
	is_query("ab", TRIGRAM_PHRASES, NULL);

	is_literal("PM_SUSPEND", "PM_SUSPEND", "PM_SUSPEND", 0);
	is_literal("foo\\(", "foo(", "foo(", 0);
	is_literal("^foo", NULL, "foo", 0);
	is_literal("[A-Z]+_SUSPEND", NULL, "_SUSPEND", 0);
	is_literal("\\w+_lock\\(", NULL, "_lock(", 0);
	is_literal("foo|bar", NULL, NULL, 0);
	is_literal("(?i)foo", NULL, NULL, 0);
	is_literal("foo(?=bar)", NULL, "foo", 1);
	is_literal("foo\\z", NULL, "foo", 1);
	is_literal("(foo){2}x", "foofoox", "foofoox", 0);

	random_tests(4000, 0, "random regexes: matching lines satisfy the query and hold the required string");
	random_tests(2000, TRIGRAM_ICASE, "random regexes with -i: matching lines satisfy the query");
	random_tests(1000, TRIGRAM_FIXED, "random -F patterns: matching lines satisfy the query");
	random_tests(2000, TRIGRAM_PHRASES, "random regexes, phrases: matching lines satisfy the query");

	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
