/*
 * couple.h: what a repository's history says (the engine of ci-couple), over
 * the history in memory of history.h:
 *
 *   couple.c    files that change together: pairs counted over the commits
 *               that are not huge, scored by frequency and recency
 *   churn.c     hotspots (churn x complexity at HEAD) and one file's history
 *   commits.c   commit search: BM25 over messages, fused with message vectors
 *   review.c    the code a diff touches, widened through coupling, in a budget
 *
 * Each computes a result the caller writes as records (cmd/ci-couple.c); no
 * state outside the structs passed, so two analyses can run in one process
 * and a unit test can score a history built in memory (tests/unit-couple.c).
 */
#ifndef CI_HISTORY_COUPLE_H
#define CI_HISTORY_COUPLE_H

#include "core/buf.h"
#include "history/history.h"

/* ---- couple.c ---- */

/* Per file: how many (non-huge) commits changed it. */
struct file_stats {
	uint32_t *changes;	/* by path id */
	int64_t *last;		/* newest change, by path id */
};

/* A scored pair of files. */
struct couple_scored {
	uint32_t a, b;		/* a: the file asked about, or the bytewise smaller */
	double score;		/* coupling score */
	uint32_t co;		/* co-changes */
	int64_t last;		/* last co-change */
};

void couple_count_changes(const struct history *h, struct file_stats *fs);
void file_stats_release(struct file_stats *fs);

/*
 * The coupling score of a pair changed together co times, last at time last
 * (see ci-couple(1)): the share of the changes of the less often changed file
 * that also changed the other (a file changed once counts as changed twice:
 * one commit alone never makes a perfect pair), times the recency of their
 * last co-change, which halves every half_life days before the newest commit.
 */
double couple_score(const struct history *h, const struct file_stats *fs, uint32_t a, uint32_t b,
		    uint32_t co, int64_t last, double half_life);

/*
 * The files coupled to file (a current-name id), scored, filtered by threshold
 * and min_co, present at HEAD when hf is given; sorted by score, then path.
 * Returns the count; *out is malloc'd.
 */
size_t couple_related(const struct history *h, const struct file_stats *fs, uint32_t file,
		      double half_life, double threshold, long min_co, struct head_files *hf,
		      struct couple_scored **out);

/*
 * Every coupled pair of files (both present at HEAD when hf is given), scored,
 * filtered by o->threshold and o->min_co, a < b bytewise, sorted by score then
 * paths.  *huge gets the number of huge commits left out.  Returns the count;
 * *out is malloc'd.
 */
size_t couple_table(const struct history *h, const struct file_stats *fs, const struct couple_opts *o,
		    struct head_files *hf, struct couple_scored **out, long *huge);

/* ---- churn.c ---- */

struct hotspot {
	uint32_t path;		/* current name */
	const struct lang *lang;	/* its language */
	long churn;		/* lines added + deleted */
	long commits;		/* commits that changed it */
	long complexity;	/* see complexity.h */
	double score;		/* 0..1 */
};

/* Hotspots: the history read, the files found, the cutoff applied. */
struct hotspots {
	struct history h;	/* the history read (its paths name the hotspots) */
	struct hotspot *v;	/* by score, then path; above the threshold, at most the limit */
	size_t nr;		/* how many */
	int64_t since;		/* the cutoff, or HIST_NO_SINCE */
};

/* Churn x complexity of the files at HEAD, over --since (default: a year).
 * EXIT_OK, or EXIT_IO after reporting; release hs in both cases. */
int couple_hotspots(const struct couple_opts *o, struct hrepo *r, struct hotspots *hs);
void hotspots_release(struct hotspots *hs);

struct author_count {
	const char *name;	/* borrowed from the history */
	const char *email;	/* likewise, may be NULL */
	long commits;		/* commits of the file by this author */
};

/* One file's history, summed. */
struct file_history {
	long commits, added, deleted;	/* commits touching it, their lines */
	int64_t first, last;		/* its oldest and newest change */
	double months;			/* from first to the newest commit read, at least 1 */
	struct author_count *authors;	/* most commits first, then name, email */
	size_t authors_nr;		/* how many */
};

/* The history of file id in h; commits == 0 when none touches it.  Release fh. */
void couple_file_history(const struct history *h, uint32_t id, struct file_history *fh);
void file_history_release(struct file_history *fh);

/* ---- commits.c ---- */

/* Words of s: runs of ASCII letters and digits and of non-ASCII bytes,
 * lower-cased, appended to *out (malloc'd each); returns their number. */
size_t couple_tokenize(const char *s, char ***out, size_t *alloc);
void couple_free_words(char **w, size_t n);

struct commit_hit {
	size_t i;		/* commit index */
	double score;		/* fused (or BM25) score */
};

/* A commit search's answer. */
struct commit_search {
	struct commit_hit *hits;	/* best first, at most the limit */
	size_t nhits;		/* how many */
	double *bm25, *cos;	/* by commit: BM25, cosine (-2: no vector) */
	int semantic;		/* the vectors were used */
	char *why;		/* when not, why not */
};

/*
 * Search the messages of h for the words q[0..qn) of query (BM25), fused with
 * the cosine of message vectors when the index holds them; --author, --file
 * filter.  EXIT_OK or EXIT_IO after reporting; release cs in both cases.
 */
int couple_commit_search(const struct couple_opts *o, struct hrepo *r, const struct history *h,
			 const char *query, char **q, size_t qn, struct commit_search *cs);
void commit_search_release(struct commit_search *cs);

/* ---- review.c ---- */

/* A chunk of the review. */
struct rchunk {
	char *path;		/* borrowed from the review's changed files or its history */
	long start, end;	/* lines */
	char *kind, *name, *text;	/* owned */
	const char *reason;	/* "changed" or "coupled" */
	const char *coupled_to;	/* for "coupled": the changed file it is coupled to */
	double score;		/* for "coupled" */
	int pick;		/* for "coupled": its name is used by the changed code */
};

struct review_changed;
struct review_diff;

/* A review: the diff, the chunks it touches, those coupled to them. */
struct review {
	const char *spec;	/* --diff, "unstaged" by default */
	struct review_diff *d;	/* the diff and where its new side is read */
	struct review_changed *ch;	/* the changed files (not the deleted) */
	size_t ch_nr, ch_alloc;	/* how many */
	size_t deleted_files;	/* deleted files */
	long changed_lines;	/* lines changed */
	struct buf files;	/* the review record's files, a JSON array's elements */
	struct rchunk *outv;	/* the chunks, changed first, then coupled */
	size_t out_nr, out_alloc;	/* how many */
	size_t coupled_files;	/* files with coupled chunks */
	long used, omitted;	/* lines used of the budget; changed chunks left out */
	struct history h;	/* the history, when read */
	int have_history;	/* it was read */
	char *usage;		/* a usage error (bad --diff), malloc'd */
};

/*
 * Review the diff o->diff: the chunks overlapping changed lines, then the
 * chunks of the files coupled to the changed ones (o->depth steps out) that
 * share what is left of o->budget.  EXIT_OK; EXIT_NOTHING when there are no
 * changes; EXIT_USAGE with rv->usage set; EXIT_IO after reporting.  Release rv
 * in every case.
 */
int couple_review(const struct couple_opts *o, struct hrepo *r, struct review *rv);
void review_release(struct review *rv);

#endif
