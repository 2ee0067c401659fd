/*
 * rank/cand.c: the candidates: chunks some signal found, looked up by id
 * in an open-addressing table, their metadata from the server's memory or
 * from SQLite, their orders.
 */
#include "core/common.h"
#include "rank/signal.h"

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
