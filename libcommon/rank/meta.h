/*
 * rank/meta.h: what ci-rank looks up for each candidate chunk, in memory.
 *
 * A query's candidates (a few hundred chunks from the keyword and semantic
 * signals) each need their file, lines, kind, name and scope, and the path
 * signal needs every file's path.  Asked of SQLite in a process whose page
 * cache starts empty, that was a third of a hybrid query's time on 137k
 * chunks.  `ci-rank serve` reads it once into a flat block (struct
 * rank_meta) that its workers inherit: the chunks by id, each blob's first
 * file by path and its language, and every file's path in path order.
 *
 * The block names the index state it was read from: the meta table's
 * "created" and "generation" (which a trigger steps on every change to the
 * files table) and the largest chunk id.  A worker uses it only when its own
 * read transaction sees the same three, else it asks SQLite as before: the
 * answer is the same either way.
 */
#ifndef CI_RANK_META_H
#define CI_RANK_META_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

#define RANK_META_NONE UINT32_MAX	/* a string offset: NULL */

struct rank_meta_chunk {
	int64_t id, blob;
	int32_t start, end;
	uint32_t kind, name, scope;	/* offsets in the strings, or RANK_META_NONE */
	uint32_t pad;
};

struct rank_meta_blob {
	int64_t blob;
	uint32_t path, lang;	/* its first file by path; the blob's language */
};

struct rank_meta_head {
	char magic[8];
	char key[128];		/* created, generation and largest chunk id */
	uint64_t nchunks, nblobs, nfiles, strings_len;
	uint64_t off_chunks, off_blobs, off_files, off_strings;	/* from the head */
};

/* The block: the head, then the arrays it names, in one allocation. */
struct rank_meta {
	const struct rank_meta_head *head;
	const struct rank_meta_chunk *chunks;	/* by id */
	const struct rank_meta_blob *blobs;	/* by blob id */
	const uint32_t *files;			/* path offsets, in path order */
	const char *strings;
	size_t len;				/* of the block */
};

/*
 * The key of the state db's open read transaction sees, into key (size
 * bytes): 0, or -1 when it cannot be read.
 */
int rank_meta_key(sqlite3 *db, char *key, size_t size);

/*
 * Read the block from db (in one read transaction of its own) into out:
 * 0, or -1 with nothing appended to out beyond what is to be discarded.
 */
int rank_meta_read(sqlite3 *db, struct buf *out);

/* Point m at a block of len bytes (as rank_meta_read wrote it): 0, or -1. */
int rank_meta_attach(struct rank_meta *m, const void *block, size_t len);

/* The chunk id, or NULL. */
const struct rank_meta_chunk *rank_meta_chunk(const struct rank_meta *m, int64_t id);
/* The blob, or NULL. */
const struct rank_meta_blob *rank_meta_blob(const struct rank_meta *m, int64_t blob);
/* A string of the block (NULL for RANK_META_NONE). */
static inline const char *rank_meta_str(const struct rank_meta *m, uint32_t off)
{
	return off == RANK_META_NONE ? NULL : m->strings + off;
}

#endif
