/*
 * rank/rank.h: the ranker of ci-rank: which chunks, and so which files,
 * answer a question (hybrid ranked search over the index).
 *
 * Shaped by two kinds of query: an agent's short one ("where is the retry
 * backoff computed", "parseHeader") and a whole issue text pasted in (a bug
 * report with a traceback, thousands of characters).  Each signal ranks the
 * candidates on its own, one file each:
 *
 *   keyword.c    BM25 (FTS5, ci's code tokenizer) over chunk name, scope,
 *                signature and text; identifiers of the query count more
 *   symbol.c     query identifiers that name a definition (the definition first)
 *   path.c       query terms and traceback frames that name the file's path
 *   structure.c  personalised PageRank over the import graph (import
 *                centrality), seeded by the files of the best keyword hits
 *   change.c     recency and churn from ci-couple's commit records
 *   semantic.c   cosine between the query's vector and the chunk vectors
 *                (vecscan.c: the scans of the vectors' snapshot and table)
 *
 * and fusion.c fuses them: weighted reciprocal rank (k = 60, weights by the
 * query's intent, query.c), each file's next best chunks as evidence, then in
 * hybrid mode the learned model (model.h) over each file's features
 * (features.c, also dumped by --features); chunks.c orders the chunks
 * within each file, so a hit names the function that answers.  context.c makes context bundles,
 * similar.c the nearest chunks by vector and near-duplicate clusters, hits.c
 * the hit and summary records; meta.h is the candidates' metadata a server
 * keeps in memory, preload.c what a server loads before it forks.  ranker.c
 * sets up a ranker and its queries, cand.c keeps the candidates, and
 * signal.h is what these files share (not part of the contract).
 *
 * A query's flow: ranker_init() over the open index, rank_query_init(),
 * rank_query_signals() (the query's vector started on a thread, the terms,
 * the intent, each signal), rank_query_fuse(), rank_learned_fusion(),
 * rank_order_chunks(), then
 * rank_write_hits() or rank_context_bundle(), rank_query_release().
 *
 * Two structs carry the state: a ranker (the open index and what a server
 * preloaded: shared, read-only) and a rank_query (one query's terms,
 * candidates and signals).  Nothing here is global: one process may run
 * several queries, one after the other or at once on different queries.
 *
 * Errors: an SQLite statement that cannot be prepared dies (NEEDSWORK: return
 * it); the other failures are reported once and returned as -1.
 */
#ifndef CI_RANK_RANK_H
#define CI_RANK_RANK_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "index/vecsnap.h"
#include "rank/meta.h"
#include "rank/segment.h"

struct buf;
struct embed_model;

/* The signals, in the order of the records and of the model's features. */
enum rank_sig { SIG_KEYWORD, SIG_SYMBOL, SIG_PATH, SIG_STRUCTURE, SIG_CHANGE, SIG_SEMANTIC, SIG_MAX };
extern const char *const rank_sig_name[SIG_MAX];

/* What the query asks for, by its words: it chooses the fusion's weights. */
enum rank_intent { INTENT_NAME, INTENT_CONCEPT, INTENT_ISSUE, INTENT_CONFIG, INTENT_WIRING, INTENT_FLOW,
	INTENT_MAX };
extern const char *const rank_intent_name[INTENT_MAX];
/* The fusion's weight of each signal for each intent. */
extern const double rank_weights[INTENT_MAX][SIG_MAX];

/*
 * The order of a file's chunks (--chunk-order): as fused (the file-level
 * signals' ranks fall to the first chunks), by their own evidence (a hand-set
 * rule), or by the learned fusion model's chunk member (the default; the
 * evidence where the model has none or the fusion is not learned).
 */
enum { RANK_CHUNKS_FUSED, RANK_CHUNKS_EVIDENCE, RANK_CHUNKS_MODEL };

/* The options of a query (ci-rank's, parsed). */
struct rank_opts {
	const char *mode;	/* hybrid, keyword, semantic */
	const char *type;	/* --type */
	const char *lang;	/* --lang */
	const char *path;	/* --path */
	const char *scope;	/* impl, test, all, or NULL for automatic */
	long limit;		/* --limit */
	long per_file;		/* --per-file */
	double min_score;	/* --min-score */
	int full;		/* --format full */
	int explain;		/* --explain */
	long budget;		/* context: --budget lines */
	long depth;		/* context: --depth */
	long max_coupled;	/* context: --max-coupled */
	double threshold;	/* context, similar --scan: --threshold */
	int learned;		/* 1: --fusion learned or --model; 0: --fusion rrf; -1: not said */
	const char *model;	/* --model file, or NULL: the compiled-in model */
	const char *features;	/* --features file */
	const char *model_json;	/* the compiled-in model's text (share/rank/model.json), or NULL */
	const struct rank_model *model_parsed[8];	/* the model's members read once for many
						   queries (by RANK_MEMBER_* bits), or NULL */
	int chunk_order;	/* a file's chunks: RANK_CHUNKS_* (chunks.c) */
	const char *chunk_features;	/* --chunk-features file */
	int chunk_expand;	/* --chunk-expand: every chunk of the first this many files a candidate */
	struct embed_model *path_model;	/* ci-code read once for many queries (a shard set's:
					   path_cosine, names_cosine), or NULL: each query that
					   needs it reads it */
	double sem_idf;		/* --semantic-idf: a static model's query words weighted idf^sem_idf */
	double sem_title;	/* --semantic-title: and its title's words this many times (-1: by mode) */
	double sem_path;	/* --semantic-path: a chunk's semantic value adds this times its path's cosine (-1: by mode) */
	double seg_weight[SEG_MAX];	/* --segment-weight: what a query word of each part weighs
					   (rank_seg_weight's by default: segment.h) */
};

/*
 * --chunk-expand's default: every chunk of the first 5 files in scope is a
 * candidate for the chunk order, not only those some signal found (a file's
 * function whose words are not the query's).  Chosen on the validation
 * repositories with the shipped chunk member (share/rank/MODEL.md, session
 * 38): function Acc@5 on the 555 / 386 commits 2: +.004 / +.013, 5: +.007 /
 * +.016, 10 and 20 as 5; the 102 unchanged by any.
 */
#define RANK_CHUNK_EXPAND 5

/*
 * --semantic-idf's default: the query's words, pooled by a static model
 * (ci-code), each weighted by its idf in the index to this power (0: all alike).
 */
#define RANK_SEM_IDF 0.0
/*
 * --semantic-title's default in semantic mode: the words of the query's first
 * line (an issue's title, a commit's subject) count this many times.  Chosen
 * on the validation repositories, both query forms (share/models/ci-code.md):
 * 1, 2, 3, 6.  In hybrid mode the default stays 1: the learned fusion's
 * with_vectors member was fitted on that signal, and neither it nor a refit on
 * the weighted one ranked better with 3.
 */
#define RANK_SEM_TITLE 3.0
/*
 * --semantic-path's default in semantic mode: a static model's chunk has as
 * semantic value its cosine plus this times the cosine of its file's path
 * (its words, as the model cuts them: src/_pytest/pathlib.py reads src,
 * pytest, pathlib, py): a chunk's vector holds its own words, not the file's
 * name, which says what the file is about.  Chosen on the validation
 * repositories and the training commits (share/models/ci-code.md): 0.3, 0.6,
 * 1.  In hybrid mode 0: the learned fusion reads the cosine alone, as fitted.
 */
#define RANK_SEM_PATH 0.6

/* ci-rank's defaults. */
void rank_opts_init(struct rank_opts *o);

/* With CI_RANK_TRACE in the environment: each phase's milliseconds on stderr. */
struct rank_trace {
	int on;			/* -1: not looked up yet */
	double t0;		/* the first phase's time */
};
#define RANK_TRACE_INIT { -1, 0 }
void rank_trace(struct rank_trace *t, const char *what);

/*
 * What a server (ci-rank serve) loaded before forking its workers: the model,
 * the snapshot of the vectors and the candidates' metadata.  preload.c.
 */
struct rank_preload {
	struct embed_model *model;	/* the model, or NULL */
	char *model_dir;		/* the directory it came from (real path) */
	struct vecsnap snap;		/* the vectors' snapshot (map NULL: none) */
	struct rank_meta meta;		/* the metadata (head NULL: none) */
	void *meta_mem;			/* huge_alloc'd block of meta.len bytes */
	struct stat meta_seen[2];	/* the database and its log when last read */
	pid_t meta_child;		/* reading it again, or 0 */
	int meta_pipe;			/* its 'k' when done (read end), or -1 */
	int meta_fd;			/* the memfd it writes the block to, or -1 */
	struct rank_stmts *stmts;	/* statements kept prepared (a shard server's), or NULL */
};
void rank_preload_init(struct rank_preload *p);
/* The snapshot read again when the file is another, the model once there are vectors. */
void rank_preload_refresh(struct rank_preload *p, const char *path);
/* The metadata read now. */
void rank_preload_meta_now(struct rank_preload *p, const char *path);
/*
 * Before a fork: start a child reading the metadata again if the index was
 * written since; child_init is called first in the child.
 */
void rank_preload_meta_check(struct rank_preload *p, const char *path, void (*child_init)(void));
/* The child's descriptor to wait on (-1: none), and what to do when it is readable. */
int rank_preload_watch_fd(const struct rank_preload *p);
void rank_preload_on_watch(struct rank_preload *p);
/* The metadata if it is of the index db's read transaction, else NULL. */
const struct rank_meta *rank_preload_meta_for(const struct rank_preload *p, sqlite3 *db);
/*
 * A shard server's (libcommon/fleet): the metadata alone, read now from the
 * open index db (no model, no vectors; nothing read again: the server opens
 * a changed shard anew), and a statement cache on db (stmts); NULL when it
 * cannot be read.  Freed with rank_preload_free.
 */
struct rank_preload *rank_preload_of_db(sqlite3 *db);
void rank_preload_free(struct rank_preload *p);
/* A cache of the statements of a query on db (ranker.c), kept between queries; freed with its statements. */
struct rank_stmts *rank_stmts_new(sqlite3 *db);
void rank_stmts_free(struct rank_stmts *c);

/* The open index: shared by queries, read-only while they run. */
struct ranker {
	sqlite3 *db;			/* the index, in one read transaction */
	const char *index_path;		/* its file (the vectors' snapshot is beside it) */
	long total_chunks;		/* chunks in the full-text index, for idf */
	const struct rank_meta *meta;	/* the server's metadata for this transaction, or NULL */
	const struct rank_preload *pre;	/* what a server loaded, or NULL */
	struct rank_trace *trace;	/* where phases are timed, or NULL */
};

/*
 * Set up r over db (an open index, index_path its file), and begin the read
 * transaction every signal reads in.  Cannot fail.
 */
void ranker_init(struct ranker *r, sqlite3 *db, const char *index_path, const struct rank_preload *pre,
		 struct rank_trace *trace);

/* A query term. */
struct rank_term {
	char *text;		/* lower case, as the tokenizer indexes it */
	char *orig;		/* as written (for symbol matching) */
	double weight;		/* code-looking terms count more */
	long df;		/* chunks containing it */
	int code;		/* looks like an identifier (camelCase, snake_case, dotted, `quoted`) */
	double noise;		/* of weight, what log lines gave (capped: rank/segment.h) */
};

/* A candidate chunk. */
struct rank_cand {
	sqlite3_int64 chunk;	/* chunks.id */
	sqlite3_int64 blob;	/* blobs.id */
	char *path;		/* file */
	long start, end;	/* lines */
	char *kind, *name, *scope, *lang;	/* chunk metadata */
	double sig[SIG_MAX];	/* raw signal values, 0-1 */
	int rank[SIG_MAX];	/* 1-based rank per signal, 0 if unranked */
	double fused;		/* fused score */
	double file_bonus;	/* of it, from the file's next best chunks */
	int file_chunks;	/* those chunks */
	int is_test;		/* under a test directory or named like a test */
	int is_doc;		/* documentation, changelog, prose (1), configuration (2) */
	double rrf_score;	/* learned fusion: the hand-set fusion's score (0-1) it replaced */
	double learned_p;	/* learned fusion: the file's probability */
	double sem_file;	/* --semantic-path: the cosine of the query and the file's path */
	double sem_cosine;	/* and the chunk's own, shown as its semantic value */
};

struct rank_cand_slot;
struct rank_chunk_model;

/* A chunk of a file of code that coverage read (features.c). */
struct rank_cover {
	sqlite3_int64 chunk;
	double share;		/* of the query's telling terms' weight, what its text holds */
	uint32_t blob;		/* index into the distinct blobs of the files read */
	uint32_t mask;		/* the terms it holds (bits, in the order they were read) */
};

/* One query. */
struct rank_query {
	const struct ranker *r;		/* the index */
	sqlite3 *db;			/* r->db */
	const struct rank_meta *meta;	/* r->meta */
	const struct rank_opts *o;	/* the options */
	const char *text;		/* the query the signals read: given, less its noise (segment.h) */
	const char *given;		/* the query as given (the summary's) */
	char *clean;			/* text, when rank_query_signals made it */
	struct rank_term *terms;	/* the telling terms, by weight x idf */
	size_t terms_nr, terms_alloc;
	char **frames;			/* files named by traceback frames */
	size_t frames_nr, frames_alloc;
	char **mentions;		/* files the query names: "run_trace.py", "src/pkg/mod.py" */
	size_t mentions_nr, mentions_alloc;
	struct rank_cand *cands;	/* the candidates */
	size_t cands_nr, cands_alloc;
	struct rank_cand_slot *cand_tab;	/* cands by chunk id (cand.c) */
	size_t cand_tab_cap, cand_tab_nr;
	sqlite3_stmt *sizes_st;		/* chunk sizes (keyword.c) */
	unsigned char *sizes;		/* the blocks read, block b at 4 * CI_SIZES_BLOCK * b */
	unsigned char *sizes_state;	/* per block: 0 not read, 1 read, 2 none */
	size_t sizes_blocks;		/* blocks there are room for */
	enum rank_intent intent;	/* the query's */
	const double *w;		/* the signals' weights: rank_weights[intent] */
	int used[SIG_MAX];		/* the signals computed */
	int scope_tests, scope_impl, scope_docs;	/* what the answer may hold */
	double max_fused;		/* the best fused score there can be */
	long sem_snapshot_nr, sem_table_nr;	/* vectors read from the snapshot, the table */
	double sem_path_w;		/* --semantic-path as applied (0: the cosine alone) */
	double confidence;		/* learned fusion: the calibrated probability that the top
					 * file in scope is right (model.h); -1 when none */
	long long index_files;		/* the files of the index (rank_index_files), -1: not counted yet */
	struct rank_chunk_model *chunk_model;	/* learned fusion: its model's chunk member, or NULL */
	struct rank_cover *cover;	/* the chunks of the files of code coverage read, by chunk id
					 * (features.c; rank_chunk_coverage() looks one up) */
	size_t cover_nr;
};

/* A query of text over r with options o (both borrowed).  Cannot fail. */
void rank_query_init(struct rank_query *rq, const struct ranker *r, const struct rank_opts *o,
		     const char *text);
void rank_query_release(struct rank_query *rq);

/*
 * Compute the signals o->mode asks for (query.c): 0, or -1 after a message
 * when the semantic mode has no vectors or no model.
 */
int rank_query_signals(struct rank_query *rq);

/* Fuse them by weighted reciprocal rank: rq->cands best first (fusion.c). */
void rank_query_fuse(struct rank_query *rq);

/*
 * The features of the best files in scope (written to o->features) and with
 * o->learned the files ordered by the learned model instead: 0, or -1 after
 * a message (the model or the dump).  features.c, fusion.c.
 */
int rank_learned_fusion(struct rank_query *rq);
/*
 * The model of o (--model's file, else the compiled-in one; its member for
 * which, RANK_MEMBER_* bits of model.h) read into m, as the learned fusion
 * reads it each query: 0, or -1 after a message.  A caller that runs many
 * queries with o (a shard set's) reads each member once, and sets
 * o->model_parsed[which] for each.
 */
struct rank_model;
int rank_model_load(const struct rank_opts *o, struct rank_model *m, int which);
/*
 * Does the learned fusion read the semantic signal in hybrid mode: does its
 * with_vectors or with_vectors_history member weigh a semantic feature?  1 or
 * 0; -1 after a message (the model cannot be read).  Without one, hybrid mode
 * leaves the signal out: it would only move the hand-set fusion's score and
 * candidates, which the members read (share/rank/MODEL.md, session 43).
 */
int rank_model_reads_semantic(const struct rank_opts *o);

/*
 * Order the chunks within each file by their own evidence (keyword, symbol
 * and semantic ranks, a class header or module preamble below the
 * functions), or by the learned model's chunk member, keeping the files'
 * order: the file's best score goes to its best chunk (chunks.c).  With
 * o->chunk_features the features of the chunks of the best files are
 * written there.  0, or -1 after a message (the dump).
 */
int rank_order_chunks(struct rank_query *rq);

/* Is candidate x in the query's scope (tests, docs, configuration)? */
int rank_in_scope(const struct rank_query *rq, const struct rank_cand *x);

/* The hit records and the summary into out: EXIT_OK, or EXIT_NOTHING (hits.c). */
int rank_write_hits(struct rank_query *rq, struct buf *out);

/* The context bundle into out: EXIT_OK, or EXIT_NOTHING (context.c). */
int rank_context_bundle(struct rank_query *rq, struct buf *out);

/*
 * similar.c: the chunks nearest a target ("path:symbol", "path:line" or a
 * text), and near-duplicate clusters (--scan), into out: an exit status
 * (EXIT_OK, EXIT_NOTHING, EXIT_USAGE or EXIT_IO after a message).
 */
int rank_similar_nearest(struct rank_query *rq, struct buf *out, const char *target);
int rank_similar_scan(struct rank_query *rq, struct buf *out);

/* x rounded to 3 decimals, as the records show scores. */
double rank_round3(double x);

#endif
