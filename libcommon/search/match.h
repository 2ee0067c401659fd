/*
 * search/match.h: inside libcommon/search, how one buffer is searched: the
 * compiled pattern (struct matcher, pattern.c), a thread's scratch space for
 * it (struct searcher), and the search of one file (struct fsearch: scan.c
 * finds the lines, output.c writes them).  Not a contract for other folders:
 * search.h is.
 */
#ifndef CI_SEARCH_MATCH_H
#define CI_SEARCH_MATCH_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>
#include <time.h>

#include "index/trigram.h"
#include "search/finder.h"

struct search_opts;

/* How the lines are found. */
enum match_kind {
	M_LITERAL,	/* a literal: the finder alone */
	M_PREFILTER,	/* the finder for a literal every match holds, then the regex on its line */
	M_BUFFER,	/* the regex over the whole buffer */
	M_LINES,	/* the regex line by line (it looks past the end of its match) */
	M_NONE,		/* nothing: every match would hold a newline */
};

/*
 * The bounds on a regex (see bounded_match).  PCRE2's match limit applies to each
 * start position of a pcre2_match() call, so one call is also given a window of
 * start positions: limit x window <= STEP_BUDGET.
 */
#define FIRST_LIMIT 1024	/* the limit tried first (patterns met in practice need
				   under 100 a start; \s+$ needs 57) */
#define STEP_BUDGET (1u << 25)	/* backtracking steps of one pcre2_match() call */
#define DEPTH_LIMIT 100000	/* PCRE2 nested backtracking (the interpreter, without JIT) */
#define HEAP_LIMIT_KIB 65536	/* the interpreter's backtracking frames, per thread */
#define LEVELS_MAX 8		/* FIRST_LIMIT, x16 ..., up to the match limit */

/* One step of the windows and limits a match is tried with (bounded_match). */
struct level {
	uint32_t limit;		/* PCRE2's match limit: steps for one start */
	size_t window;		/* start positions one call may try */
};

/* The pattern compiled, and how to look for it; read-only once made (threads share it). */
struct matcher {
	enum match_kind kind;		/* how */
	struct finder finder;		/* M_LITERAL, M_PREFILTER */
	char *literal;			/* the finder's literal */
	pcre2_code *re;			/* M_PREFILTER, M_BUFFER, M_LINES */
	struct trigram_info info;	/* what the pattern says */
	unsigned tflags;		/* the trigram_flags it was analysed with */
	const char *pattern;		/* as given */
	int line_local;			/* what it reports of a line depends on that line
					   alone: a file may be searched by parts of whole lines */
	int windowed;			/* a match may be looked for by windows of start
					   positions (no \G, no verb such as (*COMMIT)) */
	struct finder whole;		/* -i: the whole string every match holds
					   (whole_s, lower-cased), or whole.n == 0 */
	char *whole_s;
	struct level levels[LEVELS_MAX];	/* FIRST_LIMIT, x16 ..., up to the match limit */
	int levels_nr;
	int64_t file_budget_ns;		/* the time one file may take */
};

/* Per thread: the regex's scratch space. */
struct searcher {
	pcre2_match_data *md;		/* match data for re */
	pcre2_match_context *mctx;	/* limits and JIT stack */
	pcre2_jit_stack *jit_stack;	/* a bigger JIT stack than the default 32K */
	uint32_t limit;			/* the match limit set in mctx ... */
	PCRE2_SIZE offset_limit;	/* ... and the offset limit (PCRE2_UNSET: none) */
	char *rbuf;			/* the file read */
	size_t rbuf_alloc;		/* its size */
	struct buf disp;		/* the path of the file searched, as written */
};

/* One file being searched. */
struct fsearch {
	const struct search_opts *o;	/* options */
	const struct matcher *m;	/* the pattern */
	struct searcher *sr;		/* scratch space */
	const char *path;		/* for output */
	const char *buf;		/* the content */
	size_t len;			/* its length */
	enum match_kind kind;		/* may drop from M_BUFFER to M_LINES */
	size_t counted_pos;		/* newlines counted up to here ... */
	long counted_line;		/* ... where this line starts */
	long last_printed;		/* human context: last line written (0: none) */
	size_t after_pos;		/* human context: next "after" line to write ... */
	long after_line;		/* ... its number ... */
	long after_left;		/* ... and how many more to write */
	long nmatch;			/* matching lines so far */
	int limit_hit;			/* a PCRE2 limit stopped an attempt */
	int timed_out;			/* the file's time budget ran out */
	int64_t deadline;		/* when it runs out */
	unsigned calls;			/* regex calls, to look at the clock now and then */
	size_t since_check;		/* start positions tried since the clock was read */
	int level;			/* m->levels[] in use (see bounded_match) */
	struct buf *out;		/* records or lines */
};

/* pattern.c */

/*
 * Compile o's pattern and choose how to search, with PCRE2's match limit
 * match_limit (at least 1) and file_budget_ms for a file.  Returns 0, or -1
 * after reporting an invalid pattern.
 */
int matcher_init(struct matcher *m, const struct search_opts *o, uint32_t match_limit, long file_budget_ms);
void matcher_release(struct matcher *m);
/* A thread's scratch space for m; dies when PCRE2 has no memory. */
void searcher_init(struct searcher *sr, const struct matcher *m);
void searcher_release(struct searcher *sr);

/* scan.c */

/*
 * Search buf[0..len), the file's lines from line number line0 on (all of it, or
 * a part of whole lines: see struct plan), appending the output to the file's.
 * Returns 1 when the search of the file is over (-l, -m, out of time).
 */
int fsearch_part(struct fsearch *fs, const char *buf, size_t len, long line0);
/*
 * End the search of a file: what -c, -l and -L write, the context left to write.
 * Returns the number of matching lines; *limited is set when a limit cut the
 * search short (2: the time budget).
 */
long fsearch_end(struct fsearch *fs, int *limited);
/*
 * The leftmost match in fs->buf[0..end) starting at or after start: 1 with
 * its bounds in *ms and *me; 0 when there is none or the file's time ran out;
 * -1 when a limit stopped the search (a pattern that is not windowed only).
 */
int bounded_match(struct fsearch *fs, size_t end, size_t start, size_t *ms, size_t *me);

/* output.c */

/* A matching line (-v: one that does not match): write what the output mode wants. */
void on_match(struct fsearch *fs, size_t bol, size_t eol, size_t col);
/* Human context: write the pending "after" lines up to line limit. */
void flush_after(struct fsearch *fs, long limit);
/* A path for people, coloured with --color. */
void add_path(struct buf *b, const struct search_opts *o, const char *path);
/* What -l, -L and --files write of a file: a match_file record, or its path. */
void file_line(struct buf *out, const struct search_opts *o, const char *path);

/* ---- lines ---- */

static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline size_t line_start(const char *buf, size_t lo, size_t p)
{
	const char *nl = p > lo ? memrchr(buf + lo, '\n', p - lo) : NULL;

	return nl ? (size_t)(nl - buf) + 1 : lo;
}

static inline size_t line_end(const char *buf, size_t p, size_t len)
{
	const char *nl = p < len ? memchr(buf + p, '\n', len - p) : NULL;

	return nl ? (size_t)(nl - buf) : len;
}

/* The first character start at or after p in buf[0..end) (UTF-8; end if none). */
static inline size_t char_start(const char *buf, size_t end, size_t p)
{
	while (p < end && ((unsigned char)buf[p] & 0xc0) == 0x80)
		p++;
	return p;
}

/* Start the search of a file; its text is given by fsearch_part. */
static inline void fsearch_begin(struct fsearch *fs, const struct search_opts *o,
				 const struct matcher *m, struct searcher *sr, const char *path, struct buf *out)
{
	memset(fs, 0, sizeof(*fs));
	fs->o = o;
	fs->m = m;
	fs->sr = sr;
	fs->path = path;
	fs->kind = m->kind;
	fs->out = out;
	fs->deadline = now_ns() + m->file_budget_ns;
}

/* Any byte past ASCII in s[0..n)? (Such a character may fold to an ASCII one.) */
static inline int has_nonascii(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return 1;
	return 0;
}

/* A line's text without its "\r\n" or "\n". */
static inline size_t text_len(const char *buf, size_t bol, size_t eol)
{
	return eol > bol && buf[eol - 1] == '\r' ? eol - bol - 1 : eol - bol;
}

#endif
