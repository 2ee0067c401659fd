/*
 * rank/cand.c: the candidates: chunks some signal found, looked up by id
 * in an open-addressing table, their metadata from the server's memory or
 * from SQLite; statements, the trace, and a query's release.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <ctype.h>
#include <time.h>

#include "index/index.h"

#include <math.h>

sqlite3_stmt *rank_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("index: %s", sqlite3_errmsg(db));
	return st;
}

int rank_is_test_path(const char *p)
{
	const char *base = strrchr(p, '/');

	base = base ? base + 1 : p;
	return !strncmp(p, "test/", 5) || !strncmp(p, "tests/", 6) || strstr(p, "/test/") ||
	       strstr(p, "/tests/") || strstr(p, "/testing/") || !strncmp(p, "testing/", 8) ||
	       !strncmp(base, "test_", 5) || strstr(base, "_test.") || strstr(base, ".test.") ||
	       strstr(base, ".spec.") || strstr(base, "Test.java") || !strcmp(base, "conftest.py");
}

/* Prose rather than code: documentation is not what "impl" scope looks for. */
int rank_is_doc_file(const char *p, const char *lang)
{
	const char *base = strrchr(p, '/');

	base = base ? base + 1 : p;
	if (!lang || !strcmp(lang, "markdown") || !strcmp(lang, "rst") || !strcmp(lang, "text"))
		return 1;
	/* configuration formats count as documents too, unless the query is about config */
	if (!strcmp(lang, "ini") || !strcmp(lang, "yaml") || !strcmp(lang, "toml") ||
	    !strcmp(lang, "json") || !strcmp(lang, "xml"))
		return 2;
	(void)base;
	return !strncmp(p, "doc/", 4) || !strncmp(p, "docs/", 5) || strstr(p, "/docs/");
}

static int path_ok(struct rank_query *rq, const char *path)
{
	size_t l;

	if (!rq->o->path || !*rq->o->path)
		return 1;
	l = strlen(rq->o->path);
	return !strncmp(path, rq->o->path, l) && (!path[l] || path[l] == '/' || rq->o->path[l - 1] == '/');
}

/*
 * The candidates by chunk id: an open-addressing table of (id, index in
 * cands), rebuilt when it fills or when an entry no longer points at its
 * chunk (cands sorted or cut since).
 */
struct rank_cand_slot {
	sqlite3_int64 id;	/* chunk */
	size_t at;		/* in cands, or -1: a free slot */
};

static size_t cand_slot(struct rank_query *rq, sqlite3_int64 id)
{
	uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 20) & (rq->cand_tab_cap - 1);
}

static void cand_tab_put(struct rank_query *rq, sqlite3_int64 id, size_t at)
{
	size_t k = cand_slot(rq, id);

	while (rq->cand_tab[k].at != (size_t)-1 && rq->cand_tab[k].id != id)
		k = (k + 1) & (rq->cand_tab_cap - 1);
	if (rq->cand_tab[k].at == (size_t)-1)
		rq->cand_tab_nr++;
	rq->cand_tab[k].id = id;
	rq->cand_tab[k].at = at;
}

static void cand_tab_rebuild(struct rank_query *rq, size_t want)
{
	size_t cap = 1024;

	while (cap < 2 * want)
		cap *= 2;
	free(rq->cand_tab);
	rq->cand_tab = xmalloc(cap * sizeof(*rq->cand_tab));
	rq->cand_tab_cap = cap;
	rq->cand_tab_nr = 0;
	for (size_t k = 0; k < cap; k++)
		rq->cand_tab[k].at = (size_t)-1;
	for (size_t i = 0; i < rq->cands_nr; i++)
		cand_tab_put(rq, rq->cands[i].chunk, i);
}

struct rank_cand *rank_find_cand(struct rank_query *rq, sqlite3_int64 chunk)
{
	size_t k;

	if (!rq->cand_tab)
		cand_tab_rebuild(rq, rq->cands_nr);
	for (int pass = 0; pass < 2; pass++) {
		for (k = cand_slot(rq, chunk); rq->cand_tab[k].at != (size_t)-1; k = (k + 1) & (rq->cand_tab_cap - 1))
			if (rq->cand_tab[k].id == chunk)
				break;
		if (rq->cand_tab[k].at == (size_t)-1)
			return NULL;
		if (rq->cand_tab[k].at < rq->cands_nr && rq->cands[rq->cand_tab[k].at].chunk == chunk)
			return &rq->cands[rq->cand_tab[k].at];
		cand_tab_rebuild(rq, rq->cands_nr);	/* moved: index them again */
	}
	return NULL;
}

/*
 * A candidate for chunk id (of its blob's first file by path), unless the
 * options filter it out (NULL).
 */
struct rank_cand *rank_add_cand_vals(struct rank_query *rq, sqlite3_int64 id, sqlite3_int64 blob, const char *path,
				     const char *lang, long start, long end, const char *kind, const char *name,
				     const char *scope)
{
	struct rank_cand *c = rank_find_cand(rq, id);

	if (c)
		return c;
	if (!path_ok(rq, path) || (rq->o->lang && (!lang || strcmp(lang, rq->o->lang))) ||
	    (rq->o->type && (!kind || strcmp(kind, rq->o->type))))
		return NULL;
	ALLOC_GROW(rq->cands, rq->cands_nr + 1, rq->cands_alloc);
	c = &rq->cands[rq->cands_nr++];
	memset(c, 0, sizeof(*c));
	c->chunk = id;
	if (2 * (rq->cand_tab_nr + 1) > rq->cand_tab_cap)
		cand_tab_rebuild(rq, rq->cands_nr);
	else
		cand_tab_put(rq, id, rq->cands_nr - 1);
	c->blob = blob;
	c->path = xstrdup(path);
	c->start = start;
	c->end = end;
	c->kind = xstrdup(kind ? kind : "");
	c->name = name ? xstrdup(name) : NULL;
	c->scope = scope ? xstrdup(scope) : NULL;
	c->lang = lang ? xstrdup(lang) : NULL;
	c->is_test = rank_is_test_path(path);
	c->is_doc = rank_is_doc_file(path, lang);
	return c;
}

/* st's columns from base: the chunk's start, end, kind, name, scope */
struct rank_cand *rank_add_cand_at(struct rank_query *rq, sqlite3_int64 id, sqlite3_int64 blob, const char *path,
				   const char *lang, sqlite3_stmt *st, int base)
{
	return rank_add_cand_vals(rq, id, blob, path, lang, (long)sqlite3_column_int64(st, base),
				  (long)sqlite3_column_int64(st, base + 1), rank_col(st, base + 2),
				  rank_col(st, base + 3), rank_col(st, base + 4));
}

struct rank_cand *rank_add_cand(struct rank_query *rq, sqlite3_stmt *st, int base)
{
	/* columns from base: chunk id, blob id, path, start, end, kind, name, scope, lang */
	return rank_add_cand_at(rq, sqlite3_column_int64(st, base), sqlite3_column_int64(st, base + 1),
				rank_col(st, base + 2), rank_col(st, base + 8), st, base + 3);
}

int rank_cmp_by_sig(const void *a, const void *b, void *arg)
{
	const struct rank_cand *x = *(struct rank_cand *const *)a, *y = *(struct rank_cand *const *)b;
	int cmp_sig = *(const int *)arg;

	if (x->sig[cmp_sig] != y->sig[cmp_sig])
		return x->sig[cmp_sig] > y->sig[cmp_sig] ? -1 : 1;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

void rank_by_sig(struct rank_cand **v, size_t n, int s)
{
	qsort_r(v, n, sizeof(*v), rank_cmp_by_sig, &s);
	for (size_t i = 0; i < n; i++)
		v[i]->rank[s] = (int)i + 1;
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

int rank_cmp_scored(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int rank_cmp_cand_path(const void *a, const void *b)
{
	const struct rank_cand *x = *(struct rank_cand *const *)a, *y = *(struct rank_cand *const *)b;
	int r = strcmp(x->path, y->path);

	return r ? r : x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static int rank_cmp_scored_id(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The candidates of n chunks (ids and values in v, reordered), each given
 * its value by set(): in the order of chunk ids (neighbours share pages),
 * each blob's path asked once (its first file by path).
 */
void rank_lookup_cands(struct rank_query *rq, struct scored *v, size_t n, void (*set)(struct rank_cand *, double))
{
	sqlite3_stmt *st, *fst;
	struct { sqlite3_int64 blob; char *path, *lang; } *bc = NULL;
	size_t bc_nr = 0, bc_alloc = 0, b, k;

	qsort(v, n, sizeof(*v), rank_cmp_scored_id);
	if (rq->meta) {
		/* from the server's memory: the same rows */
		for (k = 0; k < n; k++) {
			const struct rank_meta_chunk *mc = rank_meta_chunk(rq->meta, v[k].id);
			const struct rank_meta_blob *mb = mc ? rank_meta_blob(rq->meta, mc->blob) : NULL;
			struct rank_cand *c;
			if (mb && (c = rank_add_cand_vals(rq, mc->id, mc->blob, rank_meta_str(rq->meta, mb->path),
						     rank_meta_str(rq->meta, mb->lang), mc->start, mc->end,
						     rank_meta_str(rq->meta, mc->kind), rank_meta_str(rq->meta, mc->name),
						     rank_meta_str(rq->meta, mc->scope))))
				set(c, v[k].s);
		}
		return;
	}
	st = rank_prep(rq->db, "SELECT blob_id, start_line, end_line, kind, name, scope FROM chunks WHERE id = ?1");
	fst = rank_prep(rq->db, "SELECT f.path, b.lang FROM files f JOIN blobs b ON b.id = f.blob_id "
		   "WHERE f.blob_id = ?1 ORDER BY f.path LIMIT 1");
	for (k = 0; k < n; k++) {
		sqlite3_int64 blob;
		struct rank_cand *c;

		sqlite3_bind_int64(st, 1, v[k].id);
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_reset(st);
			continue;
		}
		blob = sqlite3_column_int64(st, 0);
		for (b = 0; b < bc_nr && bc[b].blob != blob; b++)
			;
		if (b == bc_nr) {
			ALLOC_GROW(bc, bc_nr + 1, bc_alloc);
			bc[b].blob = blob;
			bc[b].path = bc[b].lang = NULL;
			bc_nr++;
			sqlite3_bind_int64(fst, 1, blob);
			if (sqlite3_step(fst) == SQLITE_ROW) {
				bc[b].path = xstrdup(rank_col(fst, 0));
				bc[b].lang = rank_col(fst, 1) ? xstrdup(rank_col(fst, 1)) : NULL;
			}
			sqlite3_reset(fst);
		}
		if (bc[b].path && (c = rank_add_cand_at(rq, v[k].id, blob, bc[b].path, bc[b].lang, st, 1)))
			set(c, v[k].s);
		sqlite3_reset(st);
	}
	for (b = 0; b < bc_nr; b++) {
		free(bc[b].path);
		free(bc[b].lang);
	}
	free(bc);
	sqlite3_finalize(fst);
	sqlite3_finalize(st);
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
	huge_free(rq->sizes, rq->sizes_blocks * 4 * CI_SIZES_BLOCK);
	free(rq->sizes_state);
	rq->sizes = rq->sizes_state = NULL;
	rq->sizes_blocks = 0;
	sqlite3_finalize(rq->sizes_st);
	rq->sizes_st = NULL;
}

double rank_round3(double x)
{
	return floor(x * 1000 + 0.5) / 1000;
}

/* One text column of a chunk (sql selects it by ?1, the chunk id); NULL if none. */
static char *rank_chunk_column(struct rank_query *rq, sqlite3_int64 id, const char *sql)
{
	sqlite3_stmt *st = rank_prep(rq->db, sql);
	char *t = NULL;

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && rank_col(st, 0))
		t = xstrdup(rank_col(st, 0));
	sqlite3_finalize(st);
	return t;
}

char *rank_chunk_text(struct rank_query *rq, sqlite3_int64 id)
{
	return rank_chunk_column(rq, id, "SELECT ci_inflate(text) FROM chunks WHERE id = ?1");
}

/* The language of a chunk's file, NULL for text of no known language. */
char *rank_chunk_lang(struct rank_query *rq, sqlite3_int64 id)
{
	return rank_chunk_column(rq, id,
				 "SELECT b.lang FROM chunks c JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1");
}

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
	 */
	sqlite3_exec(db, "PRAGMA mmap_size = 0", NULL, NULL, NULL);
	sqlite3_exec(db, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
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
		sqlite3_stmt *st = rank_prep(db, "SELECT block FROM chunks_fts_data WHERE id = 1");
		if (sqlite3_step(st) == SQLITE_ROW) {
			uint64_t v;
			index_varint(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &v);
			r->total_chunks = (long)v;
		}
		sqlite3_finalize(st);
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
	rq->text = text;
	rq->intent = INTENT_CONCEPT;
	rq->w = rank_weights[rq->intent];
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
}
