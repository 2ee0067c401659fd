/*
 * rank/signal.h: what the files of libcommon/rank share, inside the library
 * only: statements, the candidates' table, the vector scans.  The contract
 * with the commands is rank.h.
 */
#ifndef CI_RANK_SIGNAL_H
#define CI_RANK_SIGNAL_H

#include <pthread.h>

#include "embed/vec.h"
#include "index/vecsnap.h"
#include "rank/rank.h"
#include "rank/segment.h"

/* The columns rank_add_cand() reads, from base. */
#define CHUNK_COLS "c.id, c.blob_id, f.path, c.start_line, c.end_line, c.kind, c.name, c.scope, b.lang"

/* sql prepared on db; dies when it cannot be (a damaged or older index). */
sqlite3_stmt *rank_prep(sqlite3 *db, const char *sql);
/*
 * A statement of r's connection, as rank_prep, kept prepared between queries
 * where r's preload holds a statement cache (a shard server's, rank.h), and
 * given back with rank_stmt_done (reset; finalized where there is no cache).
 */
sqlite3_stmt *rank_stmt(const struct ranker *r, const char *sql);
/* The coverage of chunk id (features.c): 0 when it holds no term or was not read. */
double rank_chunk_coverage(const struct rank_query *rq, sqlite3_int64 id);
/* term appended to q as an FTS5 string: in double quotes, a quote doubled (keyword.c). */
void rank_fts_phrase(struct buf *q, const char *term);
/* Does r's connection keep its statements (rank_stmt's cache: a shard server's)? */
int rank_kept(const struct ranker *r);	/* r may be NULL: no */
void rank_stmt_done(const struct ranker *r, sqlite3_stmt *st);
/*
 * Where r keeps its statements: the slot ci_bm25 reads its query from, set to
 * rq (*first: not registered yet on the connection, register it now); NULL
 * where it does not (register the function with rq itself, each query).
 */
struct rank_query **rank_stmt_bm25_slot(const struct ranker *r, struct rank_query *rq, int *first);
static inline const char *rank_col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}
/* rank_trace() of the ranker's trace, or of the query's. */
void rank_rtr(const struct ranker *r, const char *what);
void rank_tr(const struct rank_query *rq, const char *what);

/* ---- cand.c: the candidates ---- */
int rank_is_test_path(const char *p);
int rank_is_doc_file(const char *p, const char *lang);
struct rank_cand *rank_find_cand(struct rank_query *rq, sqlite3_int64 chunk);
/* A candidate for chunk id, unless the options filter it out (NULL). */
struct rank_cand *rank_add_cand_vals(struct rank_query *rq, sqlite3_int64 id, sqlite3_int64 blob, const char *path,
				     const char *lang, long start, long end, const char *kind, const char *name,
				     const char *scope);
struct rank_cand *rank_add_cand_at(struct rank_query *rq, sqlite3_int64 id, sqlite3_int64 blob, const char *path,
				   const char *lang, sqlite3_stmt *st, int base);
/* st's columns from base: CHUNK_COLS */
struct rank_cand *rank_add_cand(struct rank_query *rq, sqlite3_stmt *st, int base);
/* qsort_r: candidate pointers by signal *(int *)arg, best first, then by chunk id */
int rank_cmp_by_sig(const void *a, const void *b, void *arg);
/* candidate pointers by path, then chunk id */
int rank_cmp_cand_path(const void *a, const void *b);
/* Rank signal s of the n candidates v (reordered): rank[s] 1..n. */
void rank_by_sig(struct rank_cand **v, size_t n, int s);
/* The text of a chunk, its language (NULL if none); malloc'd. */
char *rank_chunk_text(struct rank_query *rq, sqlite3_int64 id);
char *rank_chunk_lang(struct rank_query *rq, sqlite3_int64 id);

/* A chunk a signal scored. */
struct scored {
	sqlite3_int64 id;	/* chunk */
	double s;		/* ci_bm25: lower is better; a cosine: higher */
};
/* by s, then by id */
int rank_cmp_scored(const void *a, const void *b);
/* The candidates of the n chunks of v (reordered), each given its value by set(). */
void rank_lookup_cands(struct rank_query *rq, struct scored *v, size_t n, void (*set)(struct rank_cand *, double));

/* ---- semantic.c, vecscan.c ---- */
struct early_scan;

/*
 * The query's vector, embedded here as `ci-embed --query <q>` would (the same
 * library calls, so the same values; but a static model's words weighted by
 * --semantic-title and --semantic-idf) on a thread started before the other
 * signals are computed and joined after them: loading the model is most of
 * its cost, and it runs meanwhile.
 */
struct qvec_job {
	const struct ranker *r;	/* the index, and what a server preloaded */
	struct sem_words *words;	/* the query's words and weights (--semantic-idf), or NULL */
	int started;		/* the embedder thread runs */
	pthread_t embedder;	/* that thread */
	char *text;		/* the query */
	float *vec;		/* its result: dim values of model */
	size_t dim;		/* of vec */
	char *model;		/* the model's name */
	char *dir;		/* the model to embed it with (the index's, by name) */
	char *index_model;	/* the model of the index's vectors, or NULL */
	sqlite3 *db;		/* the index (index_vectors_stale()) */
	uint64_t fp;		/* the query model's embed_model_fingerprint() */
	int mismatch;		/* the query's model is not index_model (said) */
	/* the snapshot of the vectors, mapped on a thread meanwhile */
	int mapping;		/* 1: the thread was started */
	pthread_t mapper;	/* that thread */
	char token[64];		/* the snapshot the index names */
	struct vecsnap snap;	/* mapped, or map NULL */
	int snap_rc;		/* vecsnap_map()'s */
	struct early_scan *early;	/* the snapshot scanned by the embedder, or NULL */
	/* --semantic-path: the model kept open for the paths (keep_model set before) */
	int keep_model;
	struct embed_model *model_kept;	/* or NULL */
	int model_owned;	/* opened by the embedder, not a server's preloaded one */
};

/* The distinct words of a query (static_words) with their idf weights: sorted. */
struct sem_word {
	char *w;		/* NUL-terminated */
	float wt;
};
struct sem_words {
	struct sem_word *v;
	size_t nr, alloc;
};

struct sem {
	sqlite3_int64 id;	/* chunk */
	double s;		/* cosine */
};

#define SEM_TOP 200		/* the semantic signal's candidates */

/*
 * The scan of every vector of the table in two stages on two threads: one
 * steps SQLite and copies each batch of vectors out (reading 137k rows is
 * half of the scan), a second one takes the cosines of the batch before (the
 * other half), two batches in turn.  Without the second thread, the cosines
 * are taken by the first.
 */
#define SEM_BATCH 1024
#define VEC_BAD 0xff		/* a row that is no vector of dim values */

struct sem_batch {
	size_t n;			/* rows in it */
	sqlite3_int64 id[SEM_BATCH];
	unsigned char fmt[SEM_BATCH];	/* enum vec_format, or VEC_BAD */
	uint32_t bytes[SEM_BATCH];
	unsigned char *data;		/* SEM_BATCH slots of dim * 4 bytes */
};

/* A scan of vectors for the query vector q: the best SEM_TOP cosines. */
struct sem_scan {
	const float *q;			/* the query's vector (borrowed) */
	double qnorm;			/* its norm */
	struct vec_q16 q16;		/* q for int8 rows */
	size_t dim;			/* of q */
	struct sem top[SEM_TOP];	/* a heap: the worst kept at the root */
	size_t top_nr, seen;		/* in it; vectors seen */
	struct sem_batch b[2];		/* the table's rows, in turn */
	int full[2];			/* handed to the worker */
	int done;			/* no more batches */
	pthread_mutex_t mu;		/* over full[] and done */
	pthread_cond_t cv;
};

/*
 * The scan of the snapshot (libcommon/index/vecsnap.h): rows [from, to) of the
 * matrix, less the chunks changed since it was written, into a heap of
 * their own.
 */
struct sem_part {
	const struct sem_scan *sc;
	const struct vecsnap *vs;
	const unsigned char *skip;	/* bit per chunk id changed since */
	sqlite3_int64 skip_max;		/* ids above are not in skip */
	size_t from, to;
	struct sem *top;		/* cap best: by chunk id, or by row when
					   the float32 rows are to be read again */
	size_t cap, top_nr, seen;
};

/*
 * The scan of the snapshot started as soon as the query's vector is there, by
 * the thread that embedded it, while this one computes the other signals
 * (they took 8-18 ms, the scan 6-8 ms after them): what it needs of SQLite,
 * the chunks changed since the snapshot, is read before.
 */
struct early_scan {
	unsigned char *skip;	/* rank_changed_bitmap() */
	sqlite3_int64 skip_max;
	struct sem_scan *sc;	/* the scan done: its query */
	struct sem_part part[2];
	size_t parts;
};

/* ---- query.c ---- */

/* Of a long query, the bytes the signals read (less logs and listings): 64 KiB. */
#define RANK_QUERY_TEXT_MAX (64u << 10)

/*
 * The terms and traceback frames of q (the query as given) from its parts
 * segs: each part's words weigh as rank_seg_weight says; at most 256 KiB of
 * it and 2,048 distinct terms are read, so a query of any size costs little.
 */
void rank_parse_query(struct rank_query *rq, const char *q, const struct rank_segments *segs);
void rank_weigh_terms(struct rank_query *rq, long total_chunks);
enum rank_intent rank_classify(const char *q);
int rank_has_word(const char *q, const char *const *words);
int rank_wants_tests(const char *q);

/* ---- the signals: 1 when the signal has something to say, else 0 ---- */
void rank_signal_keyword(struct rank_query *rq, long total_chunks);
void rank_signal_symbol(struct rank_query *rq);
void rank_signal_path(struct rank_query *rq);
/* Does a traceback frame of the query name path? */
int rank_frame_names(const struct rank_query *rq, const char *path);
/* Does the query's file name mention (path.c: "pkg/mod.py") name path?  1 or 0. */
int rank_path_named(const char *mention, const char *path);
/* Does a file name the query gives name path?  1 or 0. */
int rank_mentions_name(const struct rank_query *rq, const char *path);
int rank_signal_structure(struct rank_query *rq);
int rank_signal_change(struct rank_query *rq);
/* semantic.c: started first, so that the query's vector is made meanwhile (when rank_has_vectors()) */
void rank_semantic_start(struct rank_query *rq, struct qvec_job *j, const char *q);
/* Does the index hold vectors?  1 or 0; dies on a damaged index. */
int rank_has_vectors(struct rank_query *rq);
/* The file name of a path: what follows its last '/'. */
static inline const char *rank_file_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}
/* 1 when it scored chunks, 0 when not, -1 after a message (the index's vectors are of another model) */
int rank_signal_semantic(struct rank_query *rq, struct qvec_job *j);
/* The vector of q (a chunk's text: its words not weighted) now: its dimension (0: none), *vec and *model malloc'd. */
size_t rank_query_vector(struct rank_query *rq, const char *q, float **vec, char **model);
/* The snapshot the index names: 0, or 1 when there is none. */
int rank_snapshot_get(const struct ranker *r, struct vecsnap *s, const char *token);

/* ---- vecscan.c ---- */
int rank_cmp_sem(const void *a, const void *b);
void rank_sem_keep(struct sem *h, size_t *n, size_t cap, struct sem x);
struct sem_scan *rank_sem_scan_new(const float *q, size_t dim);
void rank_sem_scan_free(struct sem_scan *sc);
void rank_sem_cosines(struct sem_scan *sc, const struct sem_batch *b);
void *rank_sem_worker(void *arg);
unsigned char *rank_changed_bitmap(struct rank_query *rq, sqlite3_int64 *max);
void rank_changed_cosines(struct rank_query *rq, const struct sem_scan *sc, const char *model,
			  void (*fn)(struct sem, void *), void *arg);
/* Chunk id's vector changed since the snapshot (skip: rank_changed_bitmap()'s, up to max). */
static inline int rank_changed_since(const unsigned char *skip, sqlite3_int64 max, sqlite3_int64 id)
{
	return id < 0 || (id <= max && (skip[id >> 3] >> (id & 7) & 1));
}
struct early_scan *rank_early_scan_new(struct rank_query *rq);
void rank_early_scan_free(struct early_scan *es);
void rank_early_scan_run(struct qvec_job *j);
int rank_semantic_snapshot(struct rank_query *rq, struct sem_scan *sc, const struct vecsnap *vs, const char *model,
			   struct early_scan *es);

/* ---- fusion.c, features.c ---- */
#include "rank/model.h"

/* the files the learned fusion orders and the feature dump describes */
#define RANK_FEAT_FILES 100

/* A candidate file's features. */
struct rank_file_feat {
	size_t from, to;	/* the file's chunks: v[from .. to) of the by-path order */
	struct rank_cand *best;	/* its best chunk by the hand-set fusion */
	int rank;		/* 1-based among the files in scope, 0 if out of scope */
	double x[RF_NR];	/* its features */
	double z;		/* the model's logit (-inf out of scope) */
	double p;		/* its probability */
};

/*
 * The candidate files (*nr of them, malloc'd) and the features of the first
 * RANK_FEAT_FILES in scope; *v the candidates in the by-path order (malloc'd).
 */
struct rank_file_feat *rank_file_features(struct rank_query *rq, struct rank_cand ***v, size_t *nr);
/*
 * x[RF_PATH_COSINE] of the ranked files f[0 .. nr): the cosine of the query's
 * and each file path's vectors in ci-code (share/models, whatever model the
 * index's vectors are of), when a model weighs it or the features are
 * written; with names, also RF_NAMES_COSINE (the distinct names of the
 * file's chunks in the index, in line order, as one text).  0, or -1 after a
 * message (the model or the index cannot be read).
 */
int rank_code_cosines(const struct rank_query *rq, struct rank_file_feat *f, size_t nr, int names);
struct embed_work;
/*
 * The cosine of the query's vector qv (of model m) and text's, embedded with w
 * in scratch (the model's dimension); 0 when none of text's words is the
 * model's.  Cannot fail.
 */
double rank_text_cosine(struct embed_work *w, const struct embed_model *m, const float *qv, float *scratch,
			const char *text);
/*
 * The features of the files ranked into o->features, each record with the
 * files of the index ("index_files", what a calibration may weigh): 0, or -1
 * after a message.
 */
int rank_write_features(struct rank_query *rq, const struct rank_file_feat *f, size_t nr);
/*
 * The files of rq's index, once a query (rq->index_files): the metadata's
 * count, or the path signal's, which reads them all, else counted in the
 * files table.  Dies, as rank_prep, when the table cannot be read.
 */
long long rank_index_files(struct rank_query *rq);
int rank_cmp_fused(const void *a, const void *b);
int rank_cmp_path_fused(const void *a, const void *b);

#endif
