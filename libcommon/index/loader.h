/*
 * libcommon/index/loader.h: the record loader, and the small SQL helpers the
 * index engine (run.h) shares.
 *
 * A loader stores NDJSON records (ci-ndjson(5): file, chunk, def, ref, import,
 * commit, coupling, and ci-couple's history and couplings headers) in an open
 * index, inside its caller's transaction.  Records after a file record are
 * about that file; a blob already in the index is not stored again.  The
 * chunks inserted are counted per term for term_df and chunk_sizes
 * (df_finish), what ci-rank reads of chunks_fts cheaply.
 */
#ifndef CI_INDEX_LOADER_H
#define CI_INDEX_LOADER_H

#include <stdint.h>
#include <sqlite3.h>
#include <jansson.h>
#include "core/buf.h"
#include "index/mentions.h"
#include "embed/vec.h"

/*
 * The chunks a load inserts, counted per term: each distinct term of a chunk
 * counts once (a hash table of the terms, keys in one arena).  At the end the
 * counts are added to term_df's rows (a term not in term_df is left to
 * fts5vocab), and the chunks' sizes are copied into chunk_sizes.  A build, an
 * update that deleted chunks, and a load of more than DF_MAX_TERMS distinct
 * terms fill both tables anew instead.
 */
struct df_slot {
	uint32_t off, len;	/* the term in the arena; len 0: empty slot */
	uint32_t hash;
	uint32_t count;		/* chunks holding it */
	uint64_t last;		/* the last chunk counted (1-based) */
};

struct df_count {
	struct df_slot *v;
	size_t cap, nr;		/* slots (a power of 2), terms */
	struct buf keys;	/* the terms */
	uint64_t chunk;		/* the chunk being counted (1-based) */
	sqlite3_int64 *ids;	/* the chunks inserted */
	size_t ids_nr, ids_alloc;
	int full;		/* fill term_df and chunk_sizes anew */
};

struct ld_prepared;
struct ld_rec;

/* A chunk of the current file: lines s..e, bytes [off, off + len) of cur_text. */
struct ld_span {
	long s, e;
	size_t off, len;
};

struct loader {
	sqlite3 *db;			/* the index */
	const char *root;		/* repository root, to stat files */
	const char *src;		/* "<stdin>" or a path, for messages */
	int snapshot;			/* files come from a commit: their mtime is 0, not stat'd */
	long lineno;			/* current record's line */
	sqlite3_stmt *blob_get, *blob_add, *blob_seen, *file_put, *chunk_add, *fts_add, *tri_add, *segs_put, *guard_put, *mention_put,
		*def_add, *ref_add, *imp_del, *imp_add, *vec_add, *chunk_find,
		*commit_add, *cfile_add, *coupling_add;
	enum vec_format vfmt;		/* how vectors are stored */
	struct buf vbuf;		/* a vector's bytes, as stored */
	sqlite3_stmt *cvec_add;		/* stores a commit's vector */
	char *cur_path;			/* file whose records follow */
	sqlite3_int64 cur_blob;		/* its blobs.id */
	int64_t cur_size;		/* its size */
	int cur_new;			/* its content is new: store its chunks, defs, refs */
	struct buf cur_text;		/* its chunk texts, for the trigram table */
	struct ld_span *cur_spans;	/* its chunks: their lines and bytes in cur_text */
	size_t cur_spans_nr, cur_spans_alloc;
	char *cur_lbuf;			/* cur_text, '\n' cut to '\0', at its first tag */
	char **cur_lines;		/* line l is cur_lines[l - 1] (in cur_lbuf), or NULL */
	long cur_lines_nr;		/* 0: not built since the last chunk */
	size_t cur_lines_alloc;
	char *cur_lang;			/* its language, or NULL */
	struct mn_pos *cur_refs;	/* its references' positions, for its mentions */
	size_t cur_refs_nr, cur_refs_alloc;
	struct mn_def *cur_defs;	/* its definitions (names owned), for its mentions */
	size_t cur_defs_nr, cur_defs_alloc;
	struct buf mentions;		/* its mention text (index/mentions.h) */
	struct buf segs;		/* its blobs.segs */
	struct df_count df;		/* the inserted chunks' terms, for term_df */
	struct buf zbuf;		/* a chunk's text compressed, as stored */
	const struct ld_prepared *pre_lp; /* load_prepared()'s records, and the one being stored */
	const struct ld_rec *pre;
	long files, chunks, defs, refs, imports, vectors, commits, couplings, commit_vectors; /* counts */
};

/*
 * A loader of records into db (of the repository at root: files are stat'ed
 * there for their mtime), storing vectors as vfmt.  Prepares its statements
 * (dies when one cannot be: the schema is not this version's).
 */
void loader_init(struct loader *ld, sqlite3 *db, const char *root, enum vec_format vfmt);
/* Store one record (an object with "_type"); unknown types are ignored.  0, or -1 after a message. */
int load_record(struct loader *ld, json_t *rec);
/* Parse a buffer of NDJSON records and store them.  0, or -1 after a message. */
int load_buffer(struct loader *ld, const char *p, size_t n);

/*
 * A buffer of NDJSON records made ready to store by ld_prepare(), which
 * touches no loader, so that any thread may call it (ci-index's parsing
 * threads do: the one thread that writes the index was the bottleneck of a
 * build): the records parsed, each chunk's text compressed as the index
 * stores it.  load_prepared() stores them as load_buffer() would the text,
 * with the same messages.
 */
struct ld_rec {
	json_t *rec;		/* the record */
	size_t z_off;		/* its text compressed: z.buf + z_off ... */
	uint32_t z_len;		/* ... z_len bytes; 0: stored as it is, or no chunk */
};

struct ld_prepared {
	struct ld_rec *v;	/* the records up to the first line that is not one */
	size_t nr, alloc;
	struct buf z;		/* the compressed texts */
	char *bad;		/* why the line after them is not a record, or NULL */
};

/*
 * Parse and compress p[0..n); *bytes, if bytes is not NULL, gets about the
 * memory the result holds.  Never fails: a bad line is told by load_prepared().
 */
struct ld_prepared *ld_prepare(const char *p, size_t n, size_t *bytes);
/* Store lp's records.  0, or -1 after a message. */
int load_prepared(struct loader *ld, const struct ld_prepared *lp);
void ld_prepared_free(struct ld_prepared *lp);
/*
 * Store vector v[0..dim) of model in st (vec_add or cvec_add, whose key is
 * bound already) in the loader's format.  0, or -1 after a message.
 */
int store_vec(struct loader *ld, sqlite3_stmt *st, const char *model, const float *v, size_t dim);
/* The file whose records came last is complete: store its trigrams.  0, or -1. */
int loader_finish_file(struct loader *ld);
void loader_release(struct loader *ld);
/*
 * Bring term_df and chunk_sizes up to date with the chunks inserted: add the
 * counts and copy their sizes, or (dc->full) fill both anew.  0, or -1.
 */
int df_finish(sqlite3 *db, struct df_count *dc);

/* A statement of db (dies when sql cannot be prepared: a programming error). */
sqlite3_stmt *ix_prep(sqlite3 *db, const char *sql);
/* Step st once and reset it: 0, or -1 after a message. */
int ix_step_done(sqlite3 *db, sqlite3_stmt *st);
/* meta's value of key: set (nothing reported), or read (malloc'd, or NULL). */
void ix_set_meta(sqlite3 *db, const char *key, const char *value);
char *ix_get_meta(sqlite3 *db, const char *key);
/* Record the time in meta key, and the commit indexed: snapshot's, else HEAD's of root. */
void ix_stamp(sqlite3 *db, const char *root, const char *key, const char *snapshot);
/*
 * Drop the content of blobs no file points at, once they outnumber the live
 * ones.  1 when it dropped some, 0 when not, -1 after an error.
 */
int ix_collect_garbage(sqlite3 *db);

#endif
