/*
 * grepchunks.h: exact matches (ci-grep's match records) gathered by the
 * indexed chunk that holds them, the smallest one; a line of a file the index
 * has not chunked stands alone.  bobbin's grep, found by the regex engine
 * rather than by full-text search.
 *
 * A struct grep_chunks is one query: open it on the index, add the matches in
 * ci-grep's order (a file's matches together), take the "grep_chunk" records.
 */
#ifndef CI_CONTEXT_GREPCHUNKS_H
#define CI_CONTEXT_GREPCHUNKS_H

#include <sqlite3.h>
#include <jansson.h>

struct grep_chunks {
	sqlite3_stmt *st;	/* the smallest chunk of a file holding a line */
	const char *kind;	/* only chunks of this kind (NULL: any) */
	long limit;		/* the most chunks */
	long max;		/* the most matches a chunk has */
	json_t *out;		/* the grep_chunk records (owned) */
};

/* Prepare gc on the index db for chunks of kind (NULL: any), limit of them; -1 on an SQLite error. */
int grep_chunks_open(struct grep_chunks *gc, sqlite3 *db, const char *kind, long limit);
/* Add a match record ({path, line, text}) to its chunk's record; others are skipped. */
void grep_chunks_add(struct grep_chunks *gc, json_t *m);
/*
 * The grep_chunk records, each scored by its matching lines relative to the
 * chunk with most (the caller owns them); gc is released.
 */
json_t *grep_chunks_finish(struct grep_chunks *gc);

#endif
