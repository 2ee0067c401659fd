/*
 * rank/segment.h: the parts of a query.  An issue text holds a title, prose,
 * code, tracebacks, pasted logs and test output, environment and version
 * listings, template comments and commit trailers; ranking weighs each kind
 * (rank_seg_weight) instead of taking every word alike.  A line-by-line pass,
 * linear in the text, no allocation but the list of spans.
 */
#ifndef RANK_SEGMENT_H
#define RANK_SEGMENT_H

#include <stddef.h>

enum rank_seg {
	SEG_TITLE,	/* the first line with words */
	SEG_PROSE,	/* the rest of the text outside code blocks */
	SEG_CODE,	/* a code block (``` fenced or indented), an inline snippet's lines */
	SEG_TRACE,	/* a traceback, from its header to the exception line */
	SEG_LOG,	/* pasted output: test runs, log lines, separators, shell prompts, ```console blocks */
	SEG_ENV,	/* versions and environment: pip list, platform lines, key: 1.2.3 */
	SEG_NOISE,	/* template comments, <details> tags, Signed-off-by trailers */
	SEG_MAX
};

/* The name of each kind (title, prose, code, trace, log, env, noise). */
extern const char *const rank_seg_name[SEG_MAX];

/*
 * How much a word of each kind counts (ci-rank --segment-weight changes it):
 * title 6, prose, code and trace 1, log 0.25, env and noise 0.  The title's
 * weight was chosen on the issue texts and commit messages of the training
 * repositories (share/rank/MODEL.md, session 40: hybrid MRR over 444 queries
 * 1 .844, 2 .844, 3 .850, 4 .850, 6 .853, 10 .850); the others are a priori
 * (halving the prose's or the code's, or the log's at 0, did not help there).
 */
extern const double rank_seg_weight[SEG_MAX];

/* A run of whole lines of one kind: q[off, off + len), its newline included. */
struct rank_span {
	size_t off, len;
	enum rank_seg kind;
};

struct rank_segments {
	struct rank_span *v;	/* in text order; neighbours of one kind merged */
	size_t nr, alloc;
};

/*
 * The spans of q[0, len): every byte in exactly one span.  Cannot fail.
 * Release with rank_segments_release.
 */
void rank_segment(const char *q, size_t len, struct rank_segments *out);
void rank_segments_release(struct rank_segments *s);

/*
 * The text the signals read: the title, prose, code and trace lines of q, in
 * order, at most max bytes (cut at a line end, or inside a longer first line
 * at a UTF-8 boundary).  q itself, copied, when nothing is left out and it
 * fits.  A new string.
 */
char *rank_segments_text(const char *q, const struct rank_segments *s, size_t max);

#endif
