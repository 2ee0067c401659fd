/*
 * docs.h: records ranked for a query, as bobbin's search_beads,
 * archive_search and archive_recent rank them: the issues of
 * .beads/issues.jsonl and the dated Markdown and JSONL records of the archive
 * sources of .bobbin/config.toml.
 *
 * A struct doc_set holds the records read (their text and the record written
 * for each); docs_rank_keyword() scores them with SQLite FTS5 bm25 in memory,
 * docs_score() combines that with the cosine of vectors the caller computed
 * (ci-embed) as the mode asks, and the sorts order them.
 */
#ifndef CI_CONTEXT_DOCS_H
#define CI_CONTEXT_DOCS_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

struct context_toml;

/* A record to rank: its text, and the record written for it. */
struct doc {
	char *text;		/* what is searched (owned) */
	json_t *rec;		/* the output record (owned) */
	char date[11];		/* YYYY-MM-DD, or "" */
	double score;		/* 0-1 after ranking; < 0: not found */
};

struct doc_set {
	struct doc *d;		/* the records */
	size_t n, alloc;	/* used, allocated */
};

/* A new record at the end of ds, zeroed.  Cannot fail. */
struct doc *doc_set_add(struct doc_set *ds);
void doc_set_release(struct doc_set *ds);

/* The words of a query as an FTS5 OR of quoted terms; NULL when it has none (malloc'd). */
char *docs_fts_query(const char *q);
/* Does the query have a word to search for? */
int docs_has_words(const char *q);
/*
 * Keyword ranks: FTS5 bm25 over the texts in memory; score[i] = relevance 0-1,
 * -1 if no match.  -1 on an SQLite error (said as "<sub>: <what>").
 */
int docs_rank_keyword(const struct doc_set *ds, const char *sub, const char *query, double *score);
/*
 * Score the records for mode: keyword (kw, from docs_rank_keyword()),
 * semantic (the cosine of vecs[i * dim...] with qv; dim 0: none) or hybrid
 * (their mean), rounded to 3 decimals; < 0 where not found.
 */
void docs_score(struct doc_set *ds, const char *mode, const double *kw, const float *vecs,
		const float *qv, size_t dim);
/* By score, best first, then by path. */
void docs_sort_score(struct doc_set *ds);
/* Newest first, then by path. */
void docs_sort_recent(struct doc_set *ds);

/* Whether v is a date YYYY-MM-DD. */
int docs_date_ok(const char *v);

/* The filters of `ci beads search` (each 0 or NULL: any). */
struct beads_filter {
	long priority;		/* 1-4 */
	const char *status;	/* case-insensitive */
	const char *assignee;	/* case-insensitive */
};
/*
 * The issues of fp (.beads/issues.jsonl, named path in messages) that pass bf,
 * appended to ds as "bead" records; a line that is not an issue is said on
 * stderr and left out.  Cannot fail.
 */
void beads_read(struct doc_set *ds, FILE *fp, const char *path, const struct beads_filter *bf);

/* An archive source of .bobbin/config.toml. */
struct archive_source {
	const char *name, *path, *schema, *name_field;	/* borrowed from the config */
};

struct archive {
	json_t *cfg;			/* .bobbin/config.toml as JSON (owned) */
	struct archive_source *src;	/* its [[archive.sources]] */
	size_t nr;			/* how many */
};

/*
 * The archive sources of .bobbin/config.toml into a; -1 (said as "<sub>:
 * <what>") when there are none or the file does not parse.
 */
int archive_open(struct archive *a, const char *sub, const struct context_toml *toml);
void archive_release(struct archive *a);
/* The source named name, or NULL. */
const struct archive_source *archive_find(const struct archive *a, const char *name);
/*
 * Every .md and .jsonl file under src's path, in path order, as
 * "archive_record" records appended to ds (a Markdown file's frontmatter must
 * carry src's schema when it has one).  -1 when a folder or file cannot be read.
 */
int archive_read_source(struct doc_set *ds, const struct archive_source *src);
/*
 * Keep of ds's records from first on those dated from after to before (each
 * NULL: any) whose name starts with "<filter>/" (NULL: any).
 */
void archive_filter(struct doc_set *ds, size_t first, const char *after, const char *before,
		    const char *filter);

#endif
