/*
 * rank/ranker.c: a ranker over an open index and the queries on it: their
 * set-up and release, the options' defaults, statements and the trace.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <math.h>
#include <time.h>

#include "index/index.h"

static struct rank_stmts *stmts_of(const struct ranker *r);

void ranker_init(struct ranker *r, sqlite3 *db, const char *index_path, const struct rank_preload *pre,
		 struct rank_trace *trace)
{
	memset(r, 0, sizeof(*r));
	r->db = db;
	r->index_path = index_path;
	r->pre = pre;
	r->trace = trace;
	/*
	 * A query touches a few thousand pages: reading them costs less than
	 * mapping 4 GiB and taking a page fault on each (measured on this VM).
	 * A connection that keeps its statements (a shard server's) is left as
	 * its owner set it (a small shard's file stays mapped: cmd/ci-rank.c).
	 */
	if (!stmts_of(r)) {
		sqlite3_exec(db, "PRAGMA mmap_size = 0", NULL, NULL, NULL);
		sqlite3_exec(db, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
	}
	/*
	 * One read transaction for the whole answer: every signal sees the same
	 * index, and a statement does not take the WAL's read lock anew (a
	 * statement a candidate: a quarter of a query's time went to fcntl).
	 */
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	{
		/*
		 * The number of chunks, for idf: FTS5 keeps it as the first varint
		 * of its "averages" record (rowid 1 of the data table), which is
		 * what bm25() itself reads; count(*) would walk the whole table.
		 */
		sqlite3_stmt *st = rank_stmt(r, "SELECT block FROM chunks_fts_data WHERE id = 1");
		if (sqlite3_step(st) == SQLITE_ROW) {
			uint64_t v;
			index_varint(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &v);
			r->total_chunks = (long)v;
		}
		rank_stmt_done(r, st);
	}
	/* the server's copy serves if it is of the index this transaction reads */
	r->meta = pre ? rank_preload_meta_for(pre, db) : NULL;
	if (trace)
		rank_trace(trace, r->meta ? "metadata: the server's" : "metadata: from the index");
}

void rank_query_init(struct rank_query *rq, const struct ranker *r, const struct rank_opts *o, const char *text)
{
	memset(rq, 0, sizeof(*rq));
	rq->r = r;
	rq->db = r->db;
	rq->meta = r->meta;
	rq->o = o;
	rq->text = rq->given = text;
	rq->intent = INTENT_CONCEPT;
	rq->w = rank_weights[rq->intent];
	rq->confidence = -1;
	rq->index_files = -1;
}

void rank_query_release(struct rank_query *rq)
{
	size_t i;

	for (i = 0; i < rq->cands_nr; i++) {
		free(rq->cands[i].path);
		free(rq->cands[i].kind);
		free(rq->cands[i].name);
		free(rq->cands[i].scope);
		free(rq->cands[i].lang);
	}
	free(rq->cands);
	rq->cands = NULL;
	rq->cands_nr = rq->cands_alloc = 0;
	free(rq->cand_tab);
	rq->cand_tab = NULL;
	rq->cand_tab_cap = rq->cand_tab_nr = 0;
	for (i = 0; i < rq->terms_nr; i++) {
		free(rq->terms[i].text);
		free(rq->terms[i].orig);
	}
	free(rq->terms);
	rq->terms = NULL;
	rq->terms_nr = rq->terms_alloc = 0;
	for (i = 0; i < rq->frames_nr; i++)
		free(rq->frames[i]);
	free(rq->frames);
	rq->frames = NULL;
	rq->frames_nr = rq->frames_alloc = 0;
	for (i = 0; i < rq->mentions_nr; i++)
		free(rq->mentions[i]);
	free(rq->mentions);
	rq->mentions = NULL;
	rq->mentions_nr = rq->mentions_alloc = 0;
	free(rq->clean);
	rq->clean = NULL;
	free(rq->chunk_model);
	rq->chunk_model = NULL;
	free(rq->cover);
	rq->cover = NULL;
	rq->cover_nr = 0;
	huge_free(rq->sizes, rq->sizes_blocks * 4 * CI_SIZES_BLOCK);
	free(rq->sizes_state);
	rq->sizes = rq->sizes_state = NULL;
	rq->sizes_blocks = 0;
	if (rank_kept(rq->r))
		rank_stmt_done(rq->r, rq->sizes_st);
	else
		sqlite3_finalize(rq->sizes_st);
	rq->sizes_st = NULL;
}

void rank_opts_init(struct rank_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = "hybrid";
	o->limit = 10;
	o->per_file = 1;
	o->budget = 300;
	o->depth = 1;
	o->max_coupled = 3;
	o->threshold = 0.3;
	o->learned = -1;
	o->chunk_order = RANK_CHUNKS_MODEL;
	o->chunk_expand = RANK_CHUNK_EXPAND;
	o->sem_idf = RANK_SEM_IDF;
	o->sem_title = -1;	/* by mode: RANK_SEM_TITLE in semantic mode, else 1 */
	o->sem_path = -1;	/* by mode: RANK_SEM_PATH in semantic mode, else 0 */
	memcpy(o->seg_weight, rank_seg_weight, sizeof(o->seg_weight));
}

sqlite3_stmt *rank_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("index: %s", sqlite3_errmsg(db));
	return st;
}

/* Statements kept prepared on one connection (a shard server's): rank_stmt. */
struct rank_stmts {
	sqlite3 *db;
	struct rank_stmt_slot {
		char *sql;
		sqlite3_stmt *st;
		int busy;	/* handed out, not yet done */
	} *v;
	size_t nr, alloc;
	struct rank_query *bm25_rq;	/* ci_bm25's query of the moment (keyword.c) */
	int bm25_registered;		/* ci_bm25 registered with &bm25_rq */
};

struct rank_stmts *rank_stmts_new(sqlite3 *db)
{
	struct rank_stmts *c = xcalloc(1, sizeof(*c));

	c->db = db;
	return c;
}

void rank_stmts_free(struct rank_stmts *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++) {
		sqlite3_finalize(c->v[i].st);
		free(c->v[i].sql);
	}
	free(c->v);
	free(c);
}

/* The cache of r's connection, or NULL. */
static struct rank_stmts *stmts_of(const struct ranker *r)
{
	struct rank_stmts *c = r->pre ? r->pre->stmts : NULL;

	return c && c->db == r->db ? c : NULL;
}

int rank_kept(const struct ranker *r)
{
	return r && stmts_of(r) != NULL;
}

sqlite3_stmt *rank_stmt(const struct ranker *r, const char *sql)
{
	struct rank_stmts *c = stmts_of(r);
	sqlite3_stmt *st;

	if (!c)
		return rank_prep(r->db, sql);
	for (size_t i = 0; i < c->nr; i++)
		if (!c->v[i].busy && !strcmp(c->v[i].sql, sql)) {
			c->v[i].busy = 1;
			return c->v[i].st;
		}
	st = rank_prep(r->db, sql);
	ALLOC_GROW(c->v, c->nr + 1, c->alloc);
	c->v[c->nr].sql = xstrdup(sql);
	c->v[c->nr].st = st;
	c->v[c->nr++].busy = 1;
	return st;
}

struct rank_query **rank_stmt_bm25_slot(const struct ranker *r, struct rank_query *rq, int *first)
{
	struct rank_stmts *c = stmts_of(r);

	*first = 0;
	if (!c)
		return NULL;
	c->bm25_rq = rq;
	*first = !c->bm25_registered;
	c->bm25_registered = 1;
	return &c->bm25_rq;
}

void rank_stmt_done(const struct ranker *r, sqlite3_stmt *st)
{
	struct rank_stmts *c = stmts_of(r);

	for (size_t i = 0; c && st && i < c->nr; i++)
		if (c->v[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			c->v[i].busy = 0;
			return;
		}
	sqlite3_finalize(st);
}

/*
 * With CI_RANK_TRACE in the environment, the milliseconds since the first
 * phase (the index opened) at each phase of a query, on stderr: where a
 * query's time goes.
 */
void rank_trace(struct rank_trace *t, const char *what)
{
	struct timespec ts;
	double ms;

	if (t->on < 0)
		t->on = getenv("CI_RANK_TRACE") != NULL;
	if (!t->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	if (!t->t0)
		t->t0 = ms;
	fprintf(stderr, "ci-rank: trace: %s %.2f ms\n", what, ms - t->t0);
}

void rank_rtr(const struct ranker *r, const char *what)
{
	if (r->trace)
		rank_trace(r->trace, what);
}

void rank_tr(const struct rank_query *rq, const char *what)
{
	rank_rtr(rq->r, what);
}

double rank_round3(double x)
{
	return floor(x * 1000 + 0.5) / 1000;
}
