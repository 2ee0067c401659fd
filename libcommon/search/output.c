/*
 * search/output.c: what a search writes of a matching line: a match record
 * (NDJSON, with its context lines as arrays) or path:line:col:text lines for
 * people, as rg writes them: context lines and "--" between groups, -o's
 * matches, -r's replacements ($1, ${name}, $$), --color's escape sequences,
 * and what -c, -l, -L and --files write of a file.
 *
 * Called once per matching line (scan.c), never per line read.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"

/* The number of the line starting at bol (bol at or after the last one asked). */
static long line_number(struct fsearch *fs, size_t bol)
{
	if (bol > fs->counted_pos) {
		fs->counted_line += (long)count_newlines(fs->buf + fs->counted_pos, bol - fs->counted_pos);
		fs->counted_pos = bol;
	}
	return fs->counted_line;
}


/* rg's colours (--color): what it writes before a path, a line number, a match. */
#define COLOR_PATH "\033[0m\033[35m"
#define COLOR_LINE "\033[0m\033[32m"
#define COLOR_COL "\033[0m"
#define COLOR_MATCH "\033[0m\033[1m\033[31m"
#define COLOR_END "\033[0m"

/* A path for people, coloured with --color. */
void add_path(struct buf *b, const struct search_opts *o, const char *path)
{
	if (o->color)
		buf_addf(b, COLOR_PATH "%s" COLOR_END, path);
	else
		buf_addstr(b, path);
}

/*
 * The next match in the line [p, eol): 1 with its bounds (and, with a regex,
 * its groups in the searcher's match data), 0 when there is none.
 */
static int next_span(struct fsearch *fs, size_t p, size_t eol, size_t *s, size_t *e)
{
	const char *hit;

	if (fs->m->re)
		return bounded_match(fs, eol, p, s, e) > 0;
	hit = finder_find(&fs->m->finder, fs->buf + p, eol - p);
	if (!hit)
		return 0;
	*s = (size_t)(hit - fs->buf);
	*e = *s + fs->m->finder.n;
	return 1;
}

/*
 * -r: the replacement for the match [s, e) just found, as rg expands it: $$ is
 * a '$', $name or ${name} a group by number or name (the longest run of
 * letters, digits and '_' after a '$'), empty when it did not take part or
 * does not exist; a '$' followed by nothing of that is itself.
 */
static void add_replacement(struct fsearch *fs, size_t s, size_t e)
{
	const char *r = fs->o->replace, *name, *end;
	struct buf *b = fs->out;
	PCRE2_SIZE *ov = fs->m->re ? pcre2_get_ovector_pointer(fs->sr->md) : NULL;
	uint32_t ovn = fs->m->re ? pcre2_get_ovector_count(fs->sr->md) : 0;

	for (; *r; r++) {
		long g = -1;
		char *nm;

		if (*r != '$') {
			buf_addch(b, *r);
			continue;
		}
		if (r[1] == '$') {
			buf_addch(b, '$');
			r++;
			continue;
		}
		if (r[1] == '{') {
			name = r + 2;
			end = strchr(name, '}');
		} else {
			name = end = r + 1;
			while ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') ||
			       (*end >= '0' && *end <= '9') || *end == '_')
				end++;
		}
		if (!end || end == name) {
			buf_addch(b, '$');	/* not a reference */
			continue;
		}
		nm = xstrndup(name, (size_t)(end - name));
		if (strspn(nm, "0123456789") == strlen(nm))
			g = strlen(nm) < 6 ? atol(nm) : -1;
		else if (fs->m->re)
			g = pcre2_substring_number_from_name(fs->m->re, (PCRE2_SPTR)nm);
		free(nm);
		if (g == 0 && !ov)
			buf_add(b, fs->buf + s, e - s);
		else if (g >= 0 && ov && (uint32_t)g < ovn && ov[2 * g] != PCRE2_UNSET && ov[2 * g + 1] >= ov[2 * g])
			buf_add(b, fs->buf + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
		r = *end == '}' ? end : end - 1;
	}
}

/* The match [s, e) for people: replaced (-r), coloured (--color), or as it is. */
static void add_span(struct fsearch *fs, size_t s, size_t e)
{
	if (fs->o->color && (e > s || fs->o->replace))
		buf_addstr(fs->out, COLOR_MATCH);
	if (fs->o->replace)
		add_replacement(fs, s, e);
	else
		buf_add(fs->out, fs->buf + s, e - s);
	if (fs->o->color && (e > s || fs->o->replace))
		buf_addstr(fs->out, COLOR_END);
}

/*
 * The text of the matching line [bol, eol) without its line end, each match in
 * it replaced (-r: empty ones too, as rg) or coloured (--color).
 */
static void match_text(struct fsearch *fs, size_t bol, size_t eol)
{
	struct buf *b = fs->out;
	size_t end = bol + text_len(fs->buf, bol, eol), p = bol, copied = bol, s, e, n;

	if (!fs->o->replace && !fs->o->color) {
		buf_add(b, fs->buf + bol, end - bol);
		return;
	}
	while (p <= end && next_span(fs, p, end, &s, &e)) {
		buf_add(b, fs->buf + copied, s - copied);
		add_span(fs, s, e);
		if (e > s) {
			p = copied = e;
			continue;
		}
		if (s >= end) {
			copied = end;
			break;
		}
		n = char_start(fs->buf, end, s + 1);	/* an empty match: the next character */
		buf_add(b, fs->buf + s, n - s);
		p = copied = n;
	}
	if (copied < end)
		buf_add(b, fs->buf + copied, end - copied);
}

/*
 * path<sep>line<sep>[col:]text\n; a matching line (col set, and not -v) has
 * its matches replaced or coloured.
 */
static void human_line(struct fsearch *fs, char sep, long line, size_t col, size_t bol, size_t eol)
{
	struct buf *b = fs->out;
	const struct search_opts *o = fs->o;

	add_path(b, o, fs->path);
	if (o->color)
		buf_addf(b, "%c" COLOR_LINE "%ld" COLOR_END "%c", sep, line, sep);
	else
		buf_addf(b, "%c%ld%c", sep, line, sep);
	if (col && o->color)
		buf_addf(b, COLOR_COL "%zu" COLOR_END ":", col);
	else if (col)
		buf_addf(b, "%zu:", col);
	if (col && !o->invert)
		match_text(fs, bol, eol);
	else
		buf_add(b, fs->buf + bol, text_len(fs->buf, bol, eol));
	buf_addch(b, '\n');
}

/* Human context: write the pending "after" lines up to line limit. */
void flush_after(struct fsearch *fs, long limit)
{
	size_t e;

	while (fs->after_left > 0 && fs->after_pos < fs->len && fs->after_line <= limit) {
		e = line_end(fs->buf, fs->after_pos, fs->len);
		human_line(fs, '-', fs->after_line, 0, fs->after_pos, e);
		fs->last_printed = fs->after_line;
		fs->after_line++;
		fs->after_pos = e + 1;
		fs->after_left--;
	}
}

/* Up to n lines before bol (excluding line `floor` and earlier): their starts, nearest last. */
static size_t lines_before(const char *buf, size_t bol, long n, size_t *starts)
{
	size_t k = 0, b = bol;

	while (k < (size_t)n && b > 0) {
		b = line_start(buf, 0, b - 1);
		starts[k++] = b;
	}
	return k;
}

static void json_lines(struct buf *b, const char *key, const char *buf, const size_t *starts,
		       size_t nr, int reverse, size_t len)
{
	size_t i, s, e;

	nd_key(b, key);
	buf_addch(b, '[');
	for (i = 0; i < nr; i++) {
		s = starts[reverse ? nr - 1 - i : i];
		e = line_end(buf, s, len);
		if (i)
			buf_addch(b, ',');
		nd_json_string(b, buf + s, text_len(buf, s, e));
	}
	buf_addch(b, ']');
}

/*
 * -o: each non-empty match in the line [bol, eol), as a match record or a
 * path:line:col:match line.  Context is not written.
 */
static void only_matching(struct fsearch *fs, long line, size_t bol, size_t eol)
{
	size_t p = bol, s, e;

	while (p <= eol) {
		if (!next_span(fs, p, eol, &s, &e))
			break;
		if (e > s) {
			if (fs->o->json) {
				struct buf r = BUF_INIT, *out = fs->out;

				if (fs->o->replace) {
					fs->out = &r;
					add_replacement(fs, s, e);
					fs->out = out;
				}
				nd_begin(out, "match");
				nd_str(out, "path", fs->path);
				nd_int(out, "line", line);
				nd_int(out, "col", (long long)(s - bol + 1));
				if (fs->o->replace)
					nd_strn(out, "text", r.buf, r.len);
				else
					nd_strn(out, "text", fs->buf + s, e - s);
				nd_end(out);
				buf_release(&r);
			} else {
				add_path(fs->out, fs->o, fs->path);
				if (fs->o->color)
					buf_addf(fs->out, ":" COLOR_LINE "%ld" COLOR_END ":" COLOR_COL "%zu" COLOR_END ":",
						 line, s - bol + 1);
				else
					buf_addf(fs->out, ":%ld:%zu:", line, s - bol + 1);
				add_span(fs, s, e);
				buf_addch(fs->out, '\n');
			}
			p = e;
		} else {
			p = char_start(fs->buf, eol, s + 1);	/* an empty match: the next character */
			if (s >= eol)
				break;
		}
	}
}

/* A matching line (-v: one that does not match): write what the output mode wants. */
void on_match(struct fsearch *fs, size_t bol, size_t eol, size_t col)
{
	const struct search_opts *o = fs->o;
	long line;

	fs->nmatch++;
	if (o->count || o->files_only || o->files_without || o->quiet)
		return;
	line = line_number(fs, bol);
	if (o->only && !o->invert && (o->json || (!o->before && !o->after))) {
		only_matching(fs, line, bol, eol);
		return;
	}
	if (o->json) {
		struct buf *b = fs->out;
		size_t before[64], after[64], nb = 0, na = 0, *bs = before, *as = after, p;

		if (o->before > 64)
			bs = xmalloc((size_t)o->before * sizeof(*bs));
		if (o->after > 64)
			as = xmalloc((size_t)o->after * sizeof(*as));
		nd_begin(b, "match");
		nd_str(b, "path", fs->path);
		nd_int(b, "line", line);
		nd_int(b, "col", (long long)col);
		if (o->replace && !o->invert) {
			/* -r: the line with its matches replaced, as rg writes it */
			struct buf r = BUF_INIT;

			fs->out = &r;
			match_text(fs, bol, eol);
			fs->out = b;
			nd_strn(b, "text", r.buf, r.len);
			buf_release(&r);
		} else {
			nd_strn(b, "text", fs->buf + bol, text_len(fs->buf, bol, eol));
		}
		if (o->before) {
			nb = lines_before(fs->buf, bol, o->before, bs);
			json_lines(b, "before", fs->buf, bs, nb, 1, fs->len);
		}
		if (o->after) {
			for (p = eol + 1; na < (size_t)o->after && p < fs->len; p = line_end(fs->buf, p, fs->len) + 1)
				as[na++] = p;
			json_lines(b, "after", fs->buf, as, na, 0, fs->len);
		}
		nd_end(b);
		if (bs != before)
			free(bs);
		if (as != after)
			free(as);
		return;
	}
	if (o->before || o->after) {
		long first = line - o->before, k;
		size_t *starts;
		size_t n;

		flush_after(fs, line - 1);
		if (first <= fs->last_printed)
			first = fs->last_printed + 1;
		if (first < 1)
			first = 1;
		if (fs->last_printed && first > fs->last_printed + 1)
			buf_addstr(fs->out, "--\n");
		if (first < line) {
			starts = xmalloc((size_t)(line - first) * sizeof(*starts));
			n = lines_before(fs->buf, bol, line - first, starts);
			for (k = (long)n - 1; k >= 0; k--)
				human_line(fs, '-', line - 1 - k, 0, starts[k],
					   line_end(fs->buf, starts[k], fs->len));
			free(starts);
		}
		if (o->only && !o->invert)
			only_matching(fs, line, bol, eol);	/* rg -o -C: the matches, with context */
		else
			human_line(fs, ':', line, col, bol, eol);
		fs->last_printed = line;
		fs->after_pos = eol + 1;
		fs->after_line = line + 1;
		fs->after_left = o->after;
		return;
	}
	human_line(fs, ':', line, col, bol, eol);
}

/* What -l, -L and --files write of a file: a match_file record, or its path. */
void file_line(struct buf *out, const struct search_opts *o, const char *path)
{
	if (o->json) {
		nd_begin(out, "match_file");
		nd_str(out, "path", path);
		nd_end(out);
	} else {
		add_path(out, o, path);
		buf_addch(out, '\n');
	}
}

