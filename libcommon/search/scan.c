/*
 * search/scan.c: one buffer searched, the matching lines found and given to
 * output.c.  The whole file at once: a literal with the finder, a regex with
 * PCRE2's JIT over the whole buffer in multiline mode (not line by line: that
 * is what makes it fast), or, when the regex requires a literal, the literal
 * first and the regex only on the lines that hold it.  A line matches when
 * the pattern matches inside it, so all ways give the same lines.
 *
 * Shaped by the Linux kernel (78,000 files, 1.3 GB) searched on a 2-core
 * machine against ripgrep, and by the worst patterns people write by
 * accident ((a+)+$): PCRE2's match limit bounds each start of a match,
 * windows of start positions bound each call of PCRE2 (bounded_match), a
 * per-file time budget bounds a file, and any of them becomes a warning
 * naming the file, never a hang.
 *
 * This is the hot path: nothing here allocates per line or per match.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"

#include <limits.h>

/*
 * Under -i, can the line [p, p + n) hold a match?  Only if it holds m's whole
 * required string (all ASCII) in some mix of ASCII cases, or a byte past ASCII
 * (where PCRE2's Unicode folding may match s, k or another letter): a line of
 * ASCII without the string is left without asking PCRE2, most of the lines the
 * shorter prefilter finds ("pend" of "pm_suspend", as s and k are not in it).
 */
static int whole_may_match(const struct matcher *m, const char *p, size_t n)
{
	if (!m->whole.n || n < m->whole.n)
		return !m->whole.n;
	return has_nonascii(p, n) || finder_find(&m->whole, p, n) != NULL;
}

/*
 * Has the file's time run out?  The clock is read every 256 calls, after each
 * call that a match limit stopped, and once a level's worth of start positions
 * were tried: at most about 2 x STEP_BUDGET steps go by unchecked.
 */
static int out_of_time(struct fsearch *fs)
{
	if (fs->timed_out)
		return 1;
	if ((++fs->calls & 255) == 0 || fs->level > 0 || fs->since_check >= fs->m->levels[0].window) {
		fs->since_check = 0;
		if (now_ns() >= fs->deadline)
			fs->timed_out = 1;
	}
	return fs->timed_out;
}

/*
 * The leftmost match in buf[0..end) starting at or after start: 1 with its
 * bounds in *ms and *me; 0 when there is none or the file's time ran out; -1
 * when a limit stopped the search (a pattern that is not windowed only).
 *
 * PCRE2's match limit bounds each start position, not a call: a call over n
 * starts may take n times the limit (\C*?x or \X*?x on a line of 300 KB takes
 * minutes), and the clock is only read between calls.  So a call is given a
 * window of start positions (pcre2_set_offset_limit) along with the limit,
 * their product at most STEP_BUDGET: first many starts with a small limit, and
 * where it is hit, the same starts again fewer at a time with a larger limit
 * (levels[]), up to the match limit for a few starts; where even that is hit,
 * the rest of the line is left (limit_hit), as a whole call on the line would
 * leave it, and the search goes on with the next line.  A level that found
 * its window clean steps back down.  The windows start on character starts, as
 * PCRE2's own advance does, and together try every start one call would: the
 * leftmost match is the same.  Normal patterns never leave level 0, where a
 * 1 MB file takes 32 calls instead of one.
 */
int bounded_match(struct fsearch *fs, size_t end, size_t start, size_t *ms, size_t *me)
{
	const struct matcher *m = fs->m;
	struct searcher *sr = fs->sr;
	const char *buf = fs->buf;
	size_t p = start, last;
	PCRE2_SIZE *ov, offset_limit;
	uint32_t limit;
	int rc;

	while (p <= end) {
		if (out_of_time(fs))
			return 0;
		/* the common case, the whole rest at level 0, changes nothing in mctx */
		last = end;
		offset_limit = PCRE2_UNSET;
		limit = m->levels[m->levels_nr - 1].limit;
		if (m->windowed) {
			limit = m->levels[fs->level].limit;
			if (m->levels[fs->level].window <= end - p)
				offset_limit = last = p + m->levels[fs->level].window - 1;
		}
		if (limit != sr->limit)
			pcre2_set_match_limit(sr->mctx, sr->limit = limit);
		if (offset_limit != sr->offset_limit)
			pcre2_set_offset_limit(sr->mctx, sr->offset_limit = offset_limit);
		rc = pcre2_match(m->re, (PCRE2_SPTR)buf, end, p, 0, sr->md, sr->mctx);
		if (rc >= 0) {
			ov = pcre2_get_ovector_pointer(sr->md);
			*ms = ov[0];
			*me = ov[1];
			fs->since_check += (ov[0] > p ? ov[0] : p) - p + 1;	/* the starts tried */
			return 1;
		}
		fs->since_check += last - p + 1;
		if (rc == PCRE2_ERROR_NOMATCH) {
			if (last >= end)
				return 0;
			p = char_start(buf, end, last + 1);
			if (fs->level > 0)
				fs->level--;
			continue;
		}
		/* PCRE2_ERROR_MATCHLIMIT, DEPTHLIMIT, HEAPLIMIT, JIT_STACKLIMIT */
		if (!m->windowed) {
			fs->limit_hit = 1;
			return -1;
		}
		if (fs->level + 1 < m->levels_nr) {
			fs->level++;	/* the same starts, fewer at a time, a larger limit */
			continue;
		}
		/* a start in this line needs more than the match limit: leave the line */
		fs->limit_hit = 1;
		p = line_end(buf, p, end) + 1;
	}
	return 0;
}

/*
 * Does the regex match inside the line [bol, eol)?  The subject ends at eol, so
 * nothing past the line is seen; it starts at the file's start, so a lookbehind
 * sees the lines before, as it does in the whole-buffer search.
 */
static int line_match(struct fsearch *fs, size_t bol, size_t eol, size_t *col)
{
	size_t s, e;

	if (bounded_match(fs, eol, bol, &s, &e) <= 0)
		return 0;
	*col = s > bol ? s - bol + 1 : 1;
	return 1;
}

/*
 * The next matching line at or after pos (a line start): 1 with its bounds and the
 * column of its first match, or 0 when there is none.
 */
static int next_match(struct fsearch *fs, size_t pos, size_t *bol, size_t *eol, size_t *col)
{
	const char *buf = fs->buf, *hit;
	size_t len = fs->len, s, e;
	int rc;

	switch (fs->kind) {
	case M_LITERAL:
		if (pos >= len)
			return 0;
		hit = finder_find(&fs->m->finder, buf + pos, len - pos);
		if (!hit)
			return 0;
		s = (size_t)(hit - buf);
		*bol = line_start(buf, pos, s);
		*eol = line_end(buf, s, len);
		*col = s - *bol + 1;
		return 1;
	case M_PREFILTER:
		while (pos < len) {
			hit = finder_find(&fs->m->finder, buf + pos, len - pos);
			if (!hit)
				return 0;
			s = (size_t)(hit - buf);
			*bol = line_start(buf, pos, s);
			*eol = line_end(buf, s, len);
			if (whole_may_match(fs->m, buf + *bol, *eol - *bol) && line_match(fs, *bol, *eol, col))
				return 1;
			if (fs->timed_out)
				return 0;
			pos = *eol + 1;
		}
		return 0;
	case M_BUFFER:
		while (pos <= len) {
			rc = bounded_match(fs, len, pos, &s, &e);
			if (rc == 0)
				return 0;
			if (rc < 0) {
				/* too costly over the whole rest: give each line its own budget */
				fs->kind = M_LINES;
				return next_match(fs, pos, bol, eol, col);
			}
			if (s >= len && (len == 0 || buf[len - 1] == '\n'))
				return 0;	/* the empty string after the last line */
			*bol = line_start(buf, pos, s);
			*eol = line_end(buf, s, len);
			if (e <= *eol || e < s) {
				*col = s - *bol + 1;
				return 1;
			}
			/* the match runs over the line's end: does the line match alone? */
			if (line_match(fs, *bol, *eol, col))
				return 1;
			if (fs->timed_out)
				return 0;
			pos = *eol + 1;
		}
		return 0;
	case M_NONE:
		return 0;
	case M_LINES:
		while (pos < len) {
			*bol = pos;
			*eol = line_end(buf, pos, len);
			if (line_match(fs, *bol, *eol, col))
				return 1;
			if (fs->timed_out)
				return 0;
			pos = *eol + 1;
		}
		return 0;
	}
	return 0;
}

/*
 * -v: the lines of fs->buf that do not match, each given to on_match (column 1).
 * Returns 1 when the search of the file is over.
 */
static int invert_part(struct fsearch *fs)
{
	const struct search_opts *o = fs->o;
	size_t pos = 0, stop, p, e, bol, eol, col;
	int found;

	while (pos <= fs->len) {
		found = next_match(fs, pos, &bol, &eol, &col);
		if (fs->timed_out)
			return 1;	/* the lines after pos are not known not to match */
		stop = found ? bol : fs->len;
		for (p = pos; p < stop; p = e + 1) {
			e = line_end(fs->buf, p, fs->len);
			on_match(fs, p, e, 1);
			if (o->files_only || o->files_without || o->quiet ||
			    (o->max_count && fs->nmatch >= o->max_count))
				return 1;
		}
		if (!found)
			break;
		pos = eol + 1;
	}
	return 0;
}

/*
 * Search buf[0..len), the file's lines from line number line0 on (all of it, or
 * a part of whole lines: see struct plan), appending the output to the file's.
 * Returns 1 when the search of the file is over (-l, -m, out of time).
 */
int fsearch_part(struct fsearch *fs, const char *buf, size_t len, long line0)
{
	const struct search_opts *o = fs->o;
	size_t pos = 0, bol, eol, col;

	fs->buf = buf;
	fs->len = len;
	fs->counted_pos = 0;
	fs->counted_line = line0;
	if (o->invert)
		return invert_part(fs);
	while (pos <= len && next_match(fs, pos, &bol, &eol, &col)) {
		on_match(fs, bol, eol, col);
		if (o->files_only || o->files_without || o->quiet ||
		    (o->max_count && fs->nmatch >= o->max_count))
			return 1;
		pos = eol + 1;
	}
	return fs->timed_out;
}

/*
 * End the search of a file: what -c, -l and -L write, the context left to write.
 * Returns the number of matching lines; *limited is set when a limit cut the
 * search short.
 */
long fsearch_end(struct fsearch *fs, int *limited)
{
	const struct search_opts *o = fs->o;
	struct buf *out = fs->out;

	if (!o->json && !o->count && !o->files_only && !o->files_without && !o->quiet && fs->buf)
		flush_after(fs, LONG_MAX);
	if (fs->nmatch && o->count) {
		if (o->json) {
			nd_begin(out, "count");
			nd_str(out, "path", fs->path);
			nd_int(out, "count", fs->nmatch);
			nd_end(out);
		} else {
			add_path(out, o, fs->path);
			buf_addf(out, ":%ld\n", fs->nmatch);
		}
	} else if (fs->nmatch && o->files_only) {
		file_line(out, o, fs->path);
	} else if (!fs->nmatch && o->files_without && !fs->timed_out && !fs->limit_hit) {
		file_line(out, o, fs->path);
	}
	*limited = fs->timed_out ? 2 : fs->limit_hit;
	return fs->nmatch;
}

long search_buffer(struct search *q, const char *path, const char *buf, size_t len, struct buf *out,
		   int *limited)
{
	struct searcher sr;
	struct fsearch fs;
	long n;

	searcher_init(&sr, q->m);
	fsearch_begin(&fs, &q->o, q->m, &sr, path, out);
	fsearch_part(&fs, buf, len, 1);
	n = fsearch_end(&fs, limited);
	searcher_release(&sr);
	return n;
}
