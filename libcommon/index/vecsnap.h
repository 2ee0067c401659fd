/*
 * vecsnap.h: the index's chunk vectors as one contiguous matrix beside it.
 *
 * A semantic query takes the cosine of the query's vector with every chunk
 * vector.  Stepping SQLite through 137k rows of the vectors table cost more
 * than the cosines themselves (about 40 ms of a 60 ms query), so ci-index
 * keeps a copy of them, the snapshot, in a file next to the database
 * (<index>.vec): a header, the chunk ids in order and the stored vectors end
 * to end, which a reader maps and scans on two threads.
 *
 * SQLite stays the truth.  The snapshot carries a random token that the
 * index's meta table names (key vec_snapshot) while it is current, and
 * triggers on the vectors table list in vec_changed every chunk whose vector
 * was added, replaced or removed since (share/schema.sql).  A reader uses the
 * snapshot only when its token is the index's, skips the chunks listed in
 * vec_changed and reads those from the vectors table; anything else (no file,
 * another token, a short or damaged file, vectors of another model) means the
 * vectors table is read as before.  So a snapshot is never served stale; it
 * is only rewritten when the changes grow large (vecsnap_refresh), not at
 * every update.
 *
 * File layout (native byte order, which the magic checks): struct
 * vecsnap_head; n rows of dim int8 values (the vectors as stored, or for
 * float32 vectors as vec_encode() makes them int8); int64 ids[n]
 * (ascending), at a multiple of 8; and when the index holds float32 vectors
 * (exact = 1), n rows of dim float32, the vectors as stored: a reader
 * scans the int8 rows, a quarter of the bytes, keeps the best
 * VECSNAP_RESCORE of them, and takes the cosines of those from the float32
 * rows, the values the vectors table gives.  Last, n rows of (dim + 63) / 64
 * uint64 words: the signs of each int8 row (vec_sign_bits), an eighth of its
 * bytes, for a first pass that picks the rows whose cosines are taken.
 * (Version 3 had no signs: such a file is not current, and the next update
 * writes it anew.)
 */
#ifndef CI_VECSNAP_H
#define CI_VECSNAP_H
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "embed/vec.h"

#define VECSNAP_MAGIC 0x3443455643534e50ULL	/* "PNSCVEC4" read natively */
#define VECSNAP_RESCORE 1000	/* int8 candidates whose float32 cosine is taken */

struct vecsnap_head {
	uint64_t magic;
	char token[40];		/* the meta value vec_snapshot, NUL-padded */
	char model[128];	/* the vectors' model, NUL-padded */
	uint64_t n;		/* vectors */
	uint32_t dim;		/* values per vector */
	uint32_t exact;		/* 1: float32 rows follow the ids */
	char reserved[64];	/* zeros: the rows start at byte 256 */
};

_Static_assert(sizeof(struct vecsnap_head) == 256, "the rows start at byte 256");

struct vecsnap {
	void *map;
	size_t map_len;
	const struct vecsnap_head *head;
	const int64_t *ids;
	const signed char *rows;	/* n rows of dim int8 values */
	const unsigned char *exact;	/* the float32 rows, or NULL */
	size_t n, dim;
	void *exact_map;		/* their own mapping, not read ahead */
	size_t exact_map_len;
	const char *model;
	const uint32_t *norms;		/* each int8 row's sum of squares, or NULL */
	const uint64_t *bits;		/* each row's signs (vec_sign_bits), words
					   uint64 a row */
	size_t words;
	void *bits_map;			/* their own mapping (vecsnap_map) */
	size_t bits_map_len;
	int loaded;			/* read into memory (vecsnap_load), with norms */
	int borrowed;			/* a copy of another's: vecsnap_close forgets it */
};

/* The snapshot's file for the index at db_path: malloc'd "<db_path>.vec". */
char *vecsnap_path(const char *db_path);

/*
 * Map the snapshot of the index db (at db_path) if it is current, that is,
 * its token is the index's vec_snapshot; db should be inside a read
 * transaction, so that vec_changed read in it agrees.  Returns 0 with s
 * filled, 1 when there is no current snapshot (s empty; read the vectors
 * table), never an error: a damaged or foreign file is not current.
 */
int vecsnap_open(struct vecsnap *s, sqlite3 *db, const char *db_path);
/*
 * vecsnap_open() in two steps, the second of which may run on another thread
 * (it does not touch db): the token the index names into token[0..size)
 * (0, or 1 when it names none), then the snapshot mapped if it carries that
 * token (0, or 1 as vecsnap_open()).
 */
int vecsnap_token(sqlite3 *db, char *token, size_t size);
int vecsnap_map(struct vecsnap *s, const char *db_path, const char *token);
void vecsnap_close(struct vecsnap *s);
/*
 * The whole snapshot of the index at db_path read into memory on huge pages,
 * whatever its token (the caller compares s->head->token with the index's):
 * for a process that forks workers (ci-rank serve), whose children share the
 * pages in place.  0, or 1 when there is no readable snapshot (s empty).
 */
int vecsnap_load(struct vecsnap *s, const char *db_path);
/* The token of the snapshot file of the index at db_path: 0, or 1 when none is readable. */
int vecsnap_file_token(const char *db_path, char *token, size_t size);

/*
 * Whether the snapshot of the index db is current (its head read, not its
 * rows): 1 with the number of vectors it holds in *n, else 0.
 */
int vecsnap_current(sqlite3 *db, const char *db_path, uint64_t *n);

/*
 * After a write to the index db (at db_path, the caller its only writer, no
 * transaction open): write the snapshot anew when there is none current or
 * vec_changed lists more than an eighth of the vectors or more than 4096
 * chunks (readers would read too many rows from the table); remove it when
 * the index holds no vectors.  A snapshot that cannot be written is reported
 * as a warning and left out (readers read the vectors table).  Returns 0, or
 * -1 when the index could not be read or written (reported).
 */
int vecsnap_refresh(sqlite3 *db, const char *db_path);
#endif
