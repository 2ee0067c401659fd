/*
 * rank/segment.c: the parts of a query (see segment.h).  Each line is
 * classified by what it looks like and by where it is (inside a ``` block,
 * a traceback, an HTML comment, a "## Versions" section); neighbouring lines
 * of one kind make a span.  Rules, not a model: they say what an issue
 * template, pip, pytest, Python and loggers print.
 */
#include "core/common.h"
#include "rank/segment.h"

#include <ctype.h>

const char *const rank_seg_name[SEG_MAX] = {
	"title", "prose", "code", "trace", "log", "env", "noise"
};

const double rank_seg_weight[SEG_MAX] = { 6.0, 1.0, 1.0, 1.0, 0.25, 0.0, 0.0 };

/* Where the pass is: what the lines before opened. */
struct seg_state {
	int fence;	/* inside a ``` or ~~~ block */
	int fence_out;	/* a block of a terminal session or output: ```console, ```text, ```log */
	int comment;	/* inside <!-- ... --> */
	int trace;	/* inside a Python traceback */
	int env;	/* inside a section whose heading names versions or the environment */
	int titled;	/* the title was seen */
	enum rank_seg last;	/* the kind of the line before */
};

static int starts(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	return n >= l && !strncmp(s, p, l);
}

static int starts_case(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	return n >= l && !strncasecmp(s, p, l);
}

static int has(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	for (size_t i = 0; l <= n && i + l <= n; i++)
		if (!strncmp(s + i, p, l))
			return 1;
	return 0;
}

/* "1.2", "3.7.6", "v2.0", "6.0.0rc1": digits, a dot, a digit. */
static int version_like(const char *s, size_t n)
{
	size_t i = 0;

	if (i < n && (s[i] == 'v' || s[i] == 'V'))
		i++;
	if (i >= n || !isdigit((unsigned char)s[i]))
		return 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	return i + 1 < n && s[i] == '.' && isdigit((unsigned char)s[i + 1]);
}

/* Does s hold a version-like word? */
static int has_version(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((i == 0 || !isalnum((unsigned char)s[i - 1])) && version_like(s + i, n - i))
			return 1;
	return 0;
}

static size_t words(const char *s, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]) && (i == 0 || isspace((unsigned char)s[i - 1])))
			w++;
	return w;
}

/* A heading that opens a versions / environment section. */
static int env_heading(const char *s, size_t n)
{
	static const char *const w[] = { "version", "environment", "system info", "platform",
		"pip list", "pip freeze", "conda list", "installed packages", "dependencies",
		"show_versions", "setup", "software", NULL };

	for (size_t i = 0; w[i]; i++)
		for (size_t k = 0; k + strlen(w[i]) <= n; k++)
			if (!strncasecmp(s + k, w[i], strlen(w[i])))
				return 1;
	return 0;
}

/* "## Versions", "**Environment**", "Environment:" (a short line ending in ':'). */
static int heading(const char *s, size_t n)
{
	if (n && s[0] == '#') {
		size_t i = 0;
		while (i < n && s[i] == '#')
			i++;
		return i <= 6 && i < n && s[i] == ' ';
	}
	if (n > 4 && starts(s, n, "**") && s[n - 1] == '*' && s[n - 2] == '*')
		return 1;
	return n > 1 && n < 40 && s[n - 1] == ':' && words(s, n) <= 4;
}

/* A ruler or a banner: "-----", "==== test session starts ====". */
static int separator(const char *s, size_t n)
{
	size_t marks = 0;

	for (size_t i = 0; i < n; i++)
		if (strchr("=-_*~+#", s[i]))
			marks++;
	if (n >= 8 && strchr("=-_*~", s[0]) && s[1] == s[0] && s[2] == s[0] && s[n - 1] == s[0] &&
	    s[n - 2] == s[0] && s[n - 3] == s[0])
		return 1;	/* a banner: "==== 1 failed in 0.07s ====" */
	return marks >= 5 && marks * 10 >= n * 6;
}

/* "2024-01-02 12:00", "12:00:01", "[INFO]", "WARNING:", "DEBUG ". */
static int log_line(const char *s, size_t n)
{
	static const char *const levels[] = { "DEBUG", "INFO", "WARN", "WARNING", "ERROR",
		"CRITICAL", "FATAL", "TRACE", "NOTICE", NULL };
	size_t i = s[0] == '[' ? 1 : 0;

	if (n >= 16 && isdigit((unsigned char)s[i]) && n - i >= 16 && s[i + 4] == '-' && s[i + 7] == '-' &&
	    (s[i + 10] == ' ' || s[i + 10] == 'T') && s[i + 13] == ':')
		return 1;
	if (n - i >= 8 && isdigit((unsigned char)s[i]) && isdigit((unsigned char)s[i + 1]) &&
	    s[i + 2] == ':' && isdigit((unsigned char)s[i + 3]) && s[i + 5] == ':')
		return 1;
	for (size_t k = 0; levels[k]; k++) {
		size_t l = strlen(levels[k]);
		if (n - i > l && !strncmp(s + i, levels[k], l) &&
		    (s[i + l] == ']' || s[i + l] == ':' || (s[i + l] == ' ' && i == 0 && n - i > l + 1 &&
							     !islower((unsigned char)s[i + l + 1]))))
			return 1;
	}
	return 0;
}

/* What a test runner prints: progress, results, its header. */
static int test_output(const char *s, size_t n)
{
	static const char *const head[] = { "platform ", "rootdir:", "plugins:", "cachedir:",
		"configfile:", "inifile:", "testpaths:", "collected ", "collecting ", "hypothesis profile",
		"PASSED ", "FAILED ", "ERROR ", "XFAIL ", "XPASS ", "SKIPPED ", "Ran ", "OK (", NULL };
	static const char *const tail[] = { " PASSED", " FAILED", " SKIPPED", " XFAIL", " XPASS",
		" ERROR", " ok", NULL };

	for (size_t k = 0; head[k]; k++)
		if (starts(s, n, head[k]))
			return 1;
	for (size_t k = 0; tail[k]; k++) {
		size_t l = strlen(tail[k]);
		if (n > l && !strncmp(s + n - l, tail[k], l))
			return 1;
	}
	/* "[ 42%]" anywhere */
	for (size_t i = 0; i + 5 < n; i++)
		if (s[i] == '[' && (isdigit((unsigned char)s[i + 1]) || s[i + 1] == ' ')) {
			size_t j = i + 1;
			while (j < n && j < i + 5 && (s[j] == ' ' || isdigit((unsigned char)s[j])))
				j++;
			if (j + 1 < n && s[j] == '%' && s[j + 1] == ']')
				return 1;
		}
	return 0;
}

/* "requests 2.31.0", "numpy==1.24", "Python: 3.8.1", "pytest-6.0.0": a version listing. */
static int env_line(const char *s, size_t n)
{
	size_t w = words(s, n), i = 0;
	const char *colon;

	if (w == 0 || w > 8)
		return 0;
	if (has(s, n, "==") && w <= 2)
		return 1;
	while (i < n && !isspace((unsigned char)s[i]))
		i++;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (w <= 3 && i < n && version_like(s + i, n - i))	/* pip list: name version [location] */
		return 1;
	colon = memchr(s, ':', n);
	if (colon && colon - s < 30 && colon + 1 < s + n && colon[1] == ' ' &&
	    has_version(colon + 1, n - (size_t)(colon + 1 - s)))
		return 1;
	return starts_case(s, n, "python ") && has_version(s, n) && w <= 4;
}

/*
 * The info string of a fence that opens a terminal session or plain output
 * (GitHub's "console", "shell-session", "text", "log", "output"): what it
 * holds was printed, as a pasted log is, though a command may lead it.
 */
static int output_fence(const char *s, size_t n)
{
	static const char *const w[] = { "console", "shell-session", "shellsession", "sh-session",
		"terminal", "text", "txt", "plaintext", "plain", "log", "output", "stdout", "stderr", NULL };
	size_t l = 0;

	while (n && (*s == ' ' || *s == '\t' || *s == '`' || *s == '~'))
		s++, n--;
	while (l < n && !isspace((unsigned char)s[l]) && s[l] != '{')
		l++;
	for (size_t k = 0; w[k]; k++)
		if (l == strlen(w[k]) && !strncasecmp(s, w[k], l))
			return 1;
	return 0;
}

static int trailer(const char *s, size_t n)
{
	static const char *const t[] = { "signed-off-by:", "co-authored-by:", "reviewed-by:",
		"acked-by:", "tested-by:", "reported-by:", "suggested-by:", "helped-by:", "cc:",
		"change-id:", "reviewed-on:", NULL };

	for (size_t k = 0; t[k]; k++)
		if (starts_case(s, n, t[k]))
			return 1;
	return 0;
}

/* The kind of the line s[0, n) (no newline), given and updating the state. */
static enum rank_seg line_kind(struct seg_state *st, const char *line, size_t n)
{
	const char *s = line;
	size_t indent = 0;

	while (indent < n && (s[indent] == ' ' || s[indent] == '\t'))
		indent++;
	s += indent;
	n -= indent;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (st->comment) {
		if (has(s, n, "-->"))
			st->comment = 0;
		return SEG_NOISE;
	}
	if (!n)
		return st->last;	/* a blank line goes with the lines before it */
	if (starts(s, n, "```") || starts(s, n, "~~~")) {
		st->fence = !st->fence;
		st->fence_out = st->fence && output_fence(s + 3, n - 3);
		st->trace = 0;
		return SEG_NOISE;
	}
	if (!st->fence && starts(s, n, "<!--")) {
		st->comment = !has(s + 4, n - 4, "-->");
		return SEG_NOISE;
	}
	if (starts(s, n, "Traceback (most recent call last)")) {
		st->trace = 1;
		return SEG_TRACE;
	}
	if (st->trace) {
		if (!indent && !starts(s, n, "During handling") && !starts(s, n, "The above exception"))
			st->trace = 0;	/* the exception line ends it */
		return SEG_TRACE;
	}
	if (starts(s, n, "at ") && has(s, n, "(") && s[n - 1] == ')' && indent)
		return SEG_TRACE;	/* a Java or JavaScript frame */
	if (!st->fence) {
		if (starts(s, n, "<details") || starts(s, n, "</details") || starts(s, n, "<summary") ||
		    starts(s, n, "<br") || starts(s, n, "</summary"))
			return SEG_NOISE;
		if (trailer(s, n))
			return SEG_NOISE;
		if (st->titled && heading(s, n)) {
			st->env = env_heading(s, n);
			return st->env ? SEG_ENV : SEG_PROSE;
		}
	}
	if (!st->titled && !st->fence) {
		st->titled = 1;
		return SEG_TITLE;
	}
	if (st->env)
		return SEG_ENV;
	if (st->fence_out)
		return SEG_LOG;
	if (separator(s, n) || log_line(s, n) || test_output(s, n) || starts(s, n, "$ "))
		return SEG_LOG;
	if (env_line(s, n))
		return SEG_ENV;
	return st->fence ? SEG_CODE : SEG_PROSE;
}

static void add_span(struct rank_segments *out, size_t off, size_t len, enum rank_seg kind)
{
	if (out->nr && out->v[out->nr - 1].kind == kind &&
	    out->v[out->nr - 1].off + out->v[out->nr - 1].len == off) {
		out->v[out->nr - 1].len += len;
		return;
	}
	ALLOC_GROW(out->v, out->nr + 1, out->alloc);
	out->v[out->nr].off = off;
	out->v[out->nr].len = len;
	out->v[out->nr].kind = kind;
	out->nr++;
}

void rank_segment(const char *q, size_t len, struct rank_segments *out)
{
	struct seg_state st;
	size_t at = 0;

	memset(&st, 0, sizeof(st));
	st.last = SEG_PROSE;
	out->v = NULL;
	out->nr = out->alloc = 0;
	while (at < len) {
		const char *nl = memchr(q + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - q) + 1 : len;
		size_t n = end - at - (nl ? 1 : 0);
		enum rank_seg kind = line_kind(&st, q + at, n);

		if (!st.titled && kind == SEG_PROSE)
			kind = SEG_NOISE;	/* blank lines before the title */
		add_span(out, at, end - at, kind);
		st.last = kind == SEG_TITLE ? SEG_PROSE : kind;
		at = end;
	}
}

void rank_segments_release(struct rank_segments *s)
{
	free(s->v);
	s->v = NULL;
	s->nr = s->alloc = 0;
}

static int kept(enum rank_seg k)
{
	return k == SEG_TITLE || k == SEG_PROSE || k == SEG_CODE || k == SEG_TRACE;
}

char *rank_segments_text(const char *q, const struct rank_segments *s, size_t max)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < s->nr && b.len < max; i++) {
		const struct rank_span *sp = &s->v[i];
		size_t n = sp->len;

		if (!kept(sp->kind))
			continue;
		if (b.len + n > max) {
			/* the last whole line that fits; else a cut at a character's start */
			size_t cut = max - b.len;
			while (cut && q[sp->off + cut - 1] != '\n')
				cut--;
			if (!cut && !b.len) {
				cut = max;
				while (cut && ((unsigned char)q[sp->off + cut] & 0xc0) == 0x80)
					cut--;
			}
			n = cut;
		}
		buf_add(&b, q + sp->off, n);
		if (n < sp->len)
			break;
	}
	return buf_detach(&b, NULL);
}
