/*
 * search/pattern.c: the pattern compiled, and how its lines are looked for
 * (struct matcher): a literal without the regex engine, the literal every
 * match holds first and the regex only on the lines that hold it, the regex
 * over the whole buffer, or line by line.  And the bounds of a regex: the
 * windows and match limits bounded_match (scan.c) tries a match with.
 *
 * Shaped by the worst patterns people write by accident ((a+)+$) as much as
 * by the common ones: PCRE2's match limit bounds each start of a match,
 * windows of start positions bound each call of PCRE2, a per-file time budget
 * bounds a file.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"

/* The levels for a match limit of max (at least 1). */
static void levels_init(struct matcher *m, uint32_t max)
{
	uint32_t l = FIRST_LIMIT;

	m->levels_nr = 0;
	for (;;) {
		if (l > max || m->levels_nr == (int)ARRAY_SIZE(m->levels) - 1)
			l = max;
		m->levels[m->levels_nr].limit = l;
		m->levels[m->levels_nr].window = STEP_BUDGET / l ? STEP_BUDGET / l : 1;
		m->levels_nr++;
		if (l == max)
			break;
		l *= 16;
	}
}

/* s[0..n) with its ASCII letters lower-cased, malloc'd. */
static char *ascii_lower_dup(const char *s, size_t n)
{
	char *d = xstrndup(s, n);

	for (size_t i = 0; i < n; i++)
		d[i] = (char)ascii_lower((unsigned char)d[i]);
	return d;
}

/* The PCRE2 error message for code rc. */
static void pcre2_message(int rc, char *out, size_t n)
{
	if (pcre2_get_error_message(rc, (PCRE2_UCHAR *)out, n) < 0)
		snprintf(out, n, "PCRE2 error %d", rc);
}

/*
 * The longest run in s[0..n) of ASCII bytes other than k and s, either case,
 * into *run and *len; 0 when there is none.  Matched without regard to case,
 * the other ASCII bytes can only be themselves or their other ASCII case,
 * while k and s also match U+212A (Kelvin) and U+017F (long s) in PCRE2's and
 * Unicode's case folding, and no non-ASCII character matches an ASCII one
 * otherwise: a match holds the run as it is, up to ASCII case.
 */
static int icase_run(const char *s, size_t n, const char **run, size_t *len)
{
	size_t i, start = 0;

	*run = NULL;
	*len = 0;
	for (i = 0; i <= n; i++) {
		unsigned char c = i < n ? ascii_lower((unsigned char)s[i]) : 0;
		if (i < n && c < 0x80 && c != 'k' && c != 's' && c != 0)
			continue;
		if (i - start > *len) {
			*run = s + start;
			*len = i - start;
		}
		start = i + 1;
	}
	return *len > 0;
}

/* A word character for -w: rg's \w (Alphabetic, Mark, Nd, Pc, Join_Control). */
#define WORD_CLASS "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]"

/*
 * The regex for o's pattern into pat, with -x or -w around it; *prefix_len:
 * the length of what comes before the pattern (error offsets are the
 * pattern's own).
 *
 * -w: not next to a word character as rg has it (Unicode's \w of UTS #18,
 * Rust's regex: a letter or other alphabetic, a mark, a decimal digit, a
 * connector, ZWJ/ZWNJ), so that A followed by U+030A (Å) is no word A, nor A
 * followed by ZWJ, while A² is.  PCRE2's own \b (10.42) leaves marks out of
 * \w: '\bA\b' does match there.
 */
static void build_regex(struct buf *pat, const struct search_opts *o, size_t *prefix_len)
{
	const char *p;

	*prefix_len = 0;
	if (o->line_regexp) {
		/* -x: the whole line (-w adds nothing); what the index looks for
		 * (the pattern's trigrams) is in every such line still */
		buf_addstr(pat, "^(?:");
		*prefix_len = pat->len;
	} else if (o->word) {
		buf_addstr(pat, "(?<!" WORD_CLASS ")(?:");
		*prefix_len = pat->len;
	}
	if (o->fixed) {
		for (p = o->pattern; *p; p++) {
			if ((unsigned char)*p < 0x80 && !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
							   (*p >= '0' && *p <= '9')))
				buf_addch(pat, '\\');
			buf_addch(pat, *p);
		}
	} else {
		buf_addstr(pat, o->pattern);
	}
	if (o->line_regexp)
		buf_addstr(pat, ")\\r?$");	/* a CRLF line's text ends before its \r */
	else if (o->word)
		buf_addstr(pat, ")(?!" WORD_CLASS ")");
}

/* Compile the regex for o's pattern into m->re.  Returns 0, or -1 after reporting it invalid. */
static int compile_regex(struct matcher *m, const struct search_opts *o)
{
	struct buf pat = BUF_INIT;
	size_t prefix_len;
	uint32_t copts = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE;
	int err;
	PCRE2_SIZE off;

	build_regex(&pat, o, &prefix_len);
	if (o->icase)
		copts |= PCRE2_CASELESS;
	if (m->windowed)
		copts |= PCRE2_USE_OFFSET_LIMIT;
	m->re = pcre2_compile((PCRE2_SPTR)pat.buf, pat.len, copts, &err, &off, NULL);
	buf_release(&pat);
	if (!m->re) {
		char msg[256];

		pcre2_message(err, msg, sizeof(msg));
		off = off > prefix_len ? off - prefix_len : 0;
		if (off > strlen(o->pattern))
			off = strlen(o->pattern);
		return error("invalid pattern '%s': %s at offset %zu%s", o->pattern, msg, (size_t)off,
			     o->fixed ? "" : " (use -F for a literal string)");
	}
	pcre2_jit_compile(m->re, PCRE2_JIT_COMPLETE);	/* without JIT, the interpreter */
	return 0;
}

/* With a regex: the literal every match holds, to look for first, or how else. */
static void choose_kind(struct matcher *m)
{
	const char *run;
	size_t run_len;

	if ((m->info.required && memchr(m->info.required, '\n', m->info.required_len)) ||
	    (m->info.required_icase && memchr(m->info.required_icase, '\n', m->info.required_icase_len))) {
		/* every match holds a newline ('foo\n\w+'): none lies within a line */
		m->kind = M_NONE;
	} else if (m->info.required && m->info.required_len >= 3) {
		m->kind = M_PREFILTER;
		m->literal = xstrndup(m->info.required, m->info.required_len);
		finder_init(&m->finder, m->literal, m->info.required_len, 0);
	} else if (m->info.required_icase && icase_run(m->info.required_icase, m->info.required_icase_len,
						      &run, &run_len) && run_len >= 3) {
		/* -i: a piece every match holds in some mix of ASCII cases, found
		 * as fast as a literal; each line found is matched by PCRE2 */
		m->kind = M_PREFILTER;
		m->literal = ascii_lower_dup(run, run_len);
		finder_init(&m->finder, m->literal, run_len, 1);
		if (m->info.required_icase_len > run_len &&
		    !has_nonascii(m->info.required_icase, m->info.required_icase_len)) {
			m->whole_s = ascii_lower_dup(m->info.required_icase, m->info.required_icase_len);
			finder_init(&m->whole, m->whole_s, m->info.required_icase_len, 1);
		}
	} else if (m->info.looks_ahead) {
		m->kind = M_LINES;
	} else {
		m->kind = M_BUFFER;
	}
}

int matcher_init(struct matcher *m, const struct search_opts *o, uint32_t match_limit, long file_budget_ms)
{
	int literal_only;
	unsigned tflags;

	memset(m, 0, sizeof(*m));
	levels_init(m, match_limit);
	m->file_budget_ns = (int64_t)file_budget_ms * 1000000LL;
	if (strchr(o->pattern, '\n'))
		return error("the pattern holds a newline, but lines are matched one at a time");
	tflags = (o->fixed ? TRIGRAM_FIXED : 0) | (o->icase ? TRIGRAM_ICASE : 0) | (o->word ? TRIGRAM_WORD : 0);
	trigram_analyze(&m->info, o->pattern, tflags);
	m->tflags = tflags;
	m->pattern = o->pattern;

	/* a literal without -i, -w or -x never needs the regex engine */
	literal_only = !o->icase && !o->word && !o->line_regexp && m->info.literal && m->info.literal_len &&
		       !o->replace;	/* -r: the groups of 'f(o)' are wanted */
	/*
	 * Every line a search reports holds its match (the regex is matched
	 * within the line, the subject ending at its end); a lookbehind (or a
	 * verb) may see earlier lines and \A matches at the subject's start
	 * only: those need the whole file.
	 */
	m->line_local = o->fixed || (!strstr(o->pattern, "(?<") && !strstr(o->pattern, "(*") &&
				     !strstr(o->pattern, "\\A"));
	m->windowed = o->fixed || (!strstr(o->pattern, "(*") && !strstr(o->pattern, "\\G"));
	if (literal_only && memchr(m->info.literal, '\n', m->info.literal_len)) {
		/* 'c\nx', '\x0a': a match never spans lines (rg -P and pcre2grep agree) */
		m->kind = M_NONE;
		return 0;
	}
	if (literal_only) {
		m->kind = M_LITERAL;
		m->literal = xstrndup(m->info.literal, m->info.literal_len);
		finder_init(&m->finder, m->literal, m->info.literal_len, 0);
		return 0;
	}
	if (compile_regex(m, o) < 0)
		return -1;
	choose_kind(m);
	return 0;
}

void matcher_release(struct matcher *m)
{
	if (m->re)
		pcre2_code_free(m->re);
	free(m->literal);
	free(m->whole_s);
	trigram_info_release(&m->info);
}

void searcher_init(struct searcher *sr, const struct matcher *m)
{
	memset(sr, 0, sizeof(*sr));
	buf_init(&sr->disp, 0);
	if (!m->re)
		return;
	sr->md = pcre2_match_data_create_from_pattern(m->re, NULL);
	sr->mctx = pcre2_match_context_create(NULL);
	if (!sr->md || !sr->mctx)
		die("out of memory for PCRE2");
	sr->limit = m->levels[0].limit;
	sr->offset_limit = PCRE2_UNSET;
	pcre2_set_match_limit(sr->mctx, sr->limit);
	pcre2_set_depth_limit(sr->mctx, DEPTH_LIMIT);
	pcre2_set_heap_limit(sr->mctx, HEAP_LIMIT_KIB);
	sr->jit_stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, NULL);
	if (sr->jit_stack)
		pcre2_jit_stack_assign(sr->mctx, NULL, sr->jit_stack);
}

void searcher_release(struct searcher *sr)
{
	if (sr->md)
		pcre2_match_data_free(sr->md);
	if (sr->mctx)
		pcre2_match_context_free(sr->mctx);
	if (sr->jit_stack)
		pcre2_jit_stack_free(sr->jit_stack);
	free(sr->rbuf);
	buf_release(&sr->disp);
}

int search_has_uppercase(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\') {
			if (!p[1])
				break;
			p++;
			if ((*p == 'p' || *p == 'P' || *p == 'x') && p[1] == '{') {
				while (p[1] && *p != '}')
					p++;
			}
			continue;
		}
		if (*p >= 'A' && *p <= 'Z')
			return 1;
	}
	return 0;
}

void search_join_patterns(struct buf *out, const char *const *patterns, size_t nr, int fixed)
{
	for (size_t i = 0; i < nr; i++) {
		if (i)
			buf_addch(out, '|');
		buf_addstr(out, "(?:");
		for (const char *p = patterns[i]; *p; p++) {
			if (fixed && strchr("\\^$.[]|()?*+{}", *p))
				buf_addch(out, '\\');
			buf_addch(out, *p);
		}
		buf_addch(out, ')');
	}
}
