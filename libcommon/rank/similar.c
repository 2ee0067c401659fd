/*
 * rank/similar.c: similar: the chunks whose vectors are nearest a chunk's
 * or a text's, and clusters of near-duplicate chunks (--scan, BLIS).
 */
#include "core/common.h"
#include "rank/signal.h"

#include <errno.h>
#include <math.h>
#include "index/index.h"
#include "embed/blis-quiet.h"

struct vecset {
	sqlite3_int64 *id;	/* chunk ids, ascending */
	float *m;		/* n x dim, each row L2-normalised */
	size_t n, dim;
	char *model;
};

static void vecset_free(struct vecset *vs)
{
	free(vs->id);
	free(vs->m);
	free(vs->model);
}

/*
 * All chunk vectors of the index's main model (the one most chunks have), or
 * of the given model, as a matrix of normalised rows.  Returns the count.
 */
static int cmp_id(const void *a, const void *b)
{
	sqlite3_int64 x = *(const sqlite3_int64 *)a, y = *(const sqlite3_int64 *)b;

	return x < y ? -1 : x > y;
}

static size_t vecset_load(struct rank_query *rq, struct vecset *vs, const char *model)
{
	sqlite3_stmt *st;
	size_t alloc = 0, bad = 0;

	memset(vs, 0, sizeof(*vs));
	if (model) {
		st = rank_prep(rq->db, "SELECT model, dim FROM vectors WHERE model = ?1 LIMIT 1");
		sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
	} else {
		st = rank_prep(rq->db, "SELECT model, dim FROM vectors GROUP BY model, dim ORDER BY count(*) DESC, model LIMIT 1");
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		vs->model = xstrdup(rank_col(st, 0) ? rank_col(st, 0) : "");
		vs->dim = (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (!vs->model || !vs->dim)
		return 0;
	st = rank_prep(rq->db, "SELECT chunk_id, fmt, scale, vec FROM vectors WHERE model = ?1 AND dim = ?2 ORDER BY chunk_id");
	sqlite3_bind_text(st, 1, vs->model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)vs->dim);
	while (sqlite3_step(st) == SQLITE_ROW) {
		float *row;
		double norm = 0;

		if (vs->n + 1 > alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			vs->id = xrealloc(vs->id, alloc * sizeof(*vs->id));
			vs->m = xrealloc(vs->m, alloc * vs->dim * sizeof(float));
		}
		row = vs->m + vs->n * vs->dim;
		if (index_vec_decode(row, vs->dim, st, 1) < 0) {
			bad++;
			continue;
		}
		for (size_t k = 0; k < vs->dim; k++)
			norm += (double)row[k] * row[k];
		if (norm <= 0)
			continue;
		norm = 1.0 / sqrt(norm);
		for (size_t k = 0; k < vs->dim; k++)
			row[k] = (float)(row[k] * norm);
		vs->id[vs->n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (bad)
		warning("%zu vectors of model '%s' cannot be read (not %zu values in their format): left out; "
			"'ci-index --embed build' writes them anew", bad, vs->model, vs->dim);
	return vs->n;
}

/* C[m x n] = A[m x k] B[n x k]^T, row-major, through BLIS. */
static void sgemm_nt(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
	float one = 1.0f, zero = 0.0f;

	bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_TRANSPOSE, (dim_t)m, (dim_t)n, (dim_t)k, &one,
		  (float *)a, (inc_t)k, 1, (float *)b, (inc_t)k, 1, &zero, c, (inc_t)n, 1);
}

/* The chunk a "path:symbol" or "path:line" target names, or 0. */
static sqlite3_int64 similar_target_chunk(struct rank_query *rq, const char *target)
{
	const char *colon = strrchr(target, ':');
	sqlite3_stmt *st;
	sqlite3_int64 id = 0;
	char *path, *end;
	long line;

	if (!colon || colon == target || !colon[1])
		return 0;
	path = xstrndup(target, (size_t)(colon - target));
	errno = 0;
	line = strtol(colon + 1, &end, 10);
	if (!*end && !errno && line > 0) {
		st = rank_prep(rq->db, "SELECT c.id FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
			  "WHERE f.path = ?1 AND c.start_line <= ?2 AND c.end_line >= ?2 "
			  "ORDER BY c.end_line - c.start_line, c.id LIMIT 1");
		sqlite3_bind_int64(st, 2, line);
	} else {
		/* the innermost chunk named so: "Class.method" names method in Class */
		const char *name = strrchr(colon + 1, '.');
		st = rank_prep(rq->db, "SELECT c.id FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
			  "WHERE f.path = ?1 AND c.name = ?2 AND (?3 IS NULL OR c.scope = ?3 OR c.scope LIKE '%.' || ?3) "
			  "ORDER BY c.start_line, c.id LIMIT 1");
		if (name) {
			sqlite3_bind_text(st, 2, name + 1, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 3, colon + 1, (int)(name - colon - 1), SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_text(st, 2, colon + 1, -1, SQLITE_TRANSIENT);
			sqlite3_bind_null(st, 3);
		}
	}
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	free(path);
	return id;
}

static int file_exists_in_index(struct rank_query *rq, const char *target)
{
	const char *colon = strrchr(target, ':');
	sqlite3_stmt *st;
	int found;

	if (!colon)
		return 0;
	st = rank_prep(rq->db, "SELECT 1 FROM files WHERE path = ?1");
	sqlite3_bind_text(st, 1, target, (int)(colon - target), SQLITE_TRANSIENT);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static int scope_ok(struct rank_query *rq, const struct rank_cand *c)
{
	if (!rq->o->scope || !strcmp(rq->o->scope, "all"))
		return 1;
	return !strcmp(rq->o->scope, "test") ? c->is_test : !c->is_test;
}

static void hit_location(struct buf *out, const struct rank_cand *c)
{
	nd_str(out, "path", c->path);
	nd_int(out, "start_line", c->start);
	nd_int(out, "end_line", c->end);
	nd_str(out, "kind", c->kind);
	nd_str(out, "name", c->name);
	nd_str(out, "scope", c->scope);
	nd_str(out, "lang", c->lang);
}

/* Look a chunk up as a candidate (filters applied): NULL when filtered out. */
static struct rank_cand *chunk_cand(struct rank_query *rq, sqlite3_stmt *st, sqlite3_int64 id)
{
	struct rank_cand *c = NULL;

	sqlite3_bind_int64(st, 1, id);
	while (!c && sqlite3_step(st) == SQLITE_ROW)
		c = rank_add_cand(rq, st, 0);
	sqlite3_reset(st);
	return c && scope_ok(rq, c) ? c : NULL;
}

struct sem_list {
	struct sem *all;
	size_t n, alloc;
};

static void add_to_list(struct sem x, void *arg)
{
	struct sem_list *l = arg;

	if (l->n == l->alloc)
		l->all = xrealloc(l->all, (l->alloc = 2 * l->alloc + 16) * sizeof(*l->all));
	l->all[l->n++] = x;
}

/*
 * The cosine of q (dim values, of model) with every chunk vector, through the
 * snapshot beside the index and the rows changed since (the values the
 * vectors table gives for float32 vectors, within 1e-4 of them for int8):
 * a malloc'd array in *out of *nr, unsorted.  Returns 0, or 1 when there is
 * no current snapshot of those vectors (nothing allocated).
 */
static int snapshot_cosines(struct rank_query *rq, const float *q, size_t dim, const char *model, struct sem **out, size_t *nr)
{
	struct vecsnap vs;
	struct sem_scan *sc;
	struct sem_list cl;
	struct sem *all;
	unsigned char *skip;
	sqlite3_int64 max;
	size_t i, n = 0, alloc;

	*out = NULL;
	*nr = 0;
	{
		char token[64];
		memset(&vs, 0, sizeof(vs));
		if (vecsnap_token(rq->db, token, sizeof(token)) != 0 || rank_snapshot_get(rq->r, &vs, token) != 0)
			return 1;
	}
	if (vs.dim != dim || (model && strcmp(model, vs.model)) || !(skip = rank_changed_bitmap(rq, &max))) {
		vecsnap_close(&vs);
		return 1;
	}

	sc = rank_sem_scan_new(q, dim);
	alloc = vs.n + 256;
	all = xmalloc(alloc * sizeof(*all));
	for (i = 0; i < vs.n; i++) {
		struct sem x;
		x.id = vs.ids[i];
		if (rank_changed_since(skip, max, x.id))
			continue;
		/* float32 vectors: the float32 row, as the table has it */
		x.s = vs.exact ? vec_cosine_stored(q, sc->qnorm, dim, VEC_F32, vs.exact + i * dim * 4, dim * 4)
			       : vec_cosine_q16(&sc->q16, vs.rows + i * dim);
		all[n++] = x;
	}
	cl.all = all;
	cl.n = n;
	cl.alloc = alloc;
	rank_changed_cosines(rq, sc, model, add_to_list, &cl);
	all = cl.all;
	n = cl.n;
	rank_sem_scan_free(sc);
	free(skip);
	vecsnap_close(&vs);
	*out = all;
	*nr = n;
	return 0;
}

/* The vector of chunk self (malloc'd, *dim values), or NULL. */
static float *chunk_vector(struct rank_query *rq, sqlite3_int64 self, size_t *dim)
{
	sqlite3_stmt *st = rank_prep(rq->db, "SELECT dim, fmt, scale, vec FROM vectors WHERE chunk_id = ?1");
	float *qv = NULL;

	sqlite3_bind_int64(st, 1, self);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0 &&
	    sqlite3_column_int64(st, 0) <= 65536) {
		*dim = (size_t)sqlite3_column_int64(st, 0);
		qv = xmalloc(*dim * sizeof(*qv));
		if (vec_decode(qv, *dim, rank_col(st, 1), sqlite3_column_double(st, 2), sqlite3_column_blob(st, 3),
			       (size_t)sqlite3_column_bytes(st, 3)) < 0) {
			free(qv);
			qv = NULL;
			*dim = 0;
		}
	}
	sqlite3_finalize(st);
	return qv;
}

/* The hits of the n chunks of order (best first) but self: how many were written. */
static size_t write_nearest(struct rank_query *rq, struct buf *out, const struct sem *order, size_t n,
			    sqlite3_int64 self)
{
	sqlite3_stmt *st;
	size_t i, shown = 0;

	st = rank_prep(rq->db, "SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
		       "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1 ORDER BY f.path");
	for (i = 0; i < n && shown < (size_t)rq->o->limit; i++) {
		struct rank_cand *c;
		if (order[i].id == self)
			continue;
		if (order[i].s < rq->o->min_score)
			break;
		if (!(c = chunk_cand(rq, st, order[i].id)))
			continue;
		nd_begin(out, "hit");
		hit_location(out, c);
		nd_num(out, "score", rank_round3(order[i].s));
		nd_key(out, "signals");
		if (rank_round3(order[i].s) == 0)
			buf_addstr(out, "{\"semantic\":0}");
		else
			buf_addf(out, "{\"semantic\":%.3g}", rank_round3(order[i].s));
		if (rq->o->full) {
			char *text = rank_chunk_text(rq, order[i].id);
			nd_str(out, "text", text);
			free(text);
		}
		nd_end(out);
		shown++;
	}
	sqlite3_finalize(st);
	return shown;
}

int rank_similar_nearest(struct rank_query *rq, struct buf *out, const char *target)
{
	struct vecset vs;
	float *qv = NULL, *sims;
	char *qmodel = NULL;
	sqlite3_int64 self = 0;
	size_t dim = 0, i, shown = 0;
	struct sem *order;
	sqlite3_stmt *st;
	int ret;

	if (file_exists_in_index(rq, target)) {
		self = similar_target_chunk(rq, target);
		if (!self) {
			error("similar: no chunk of '%.*s' is named or holds line '%s'",
			      (int)(strrchr(target, ':') - target), target, strrchr(target, ':') + 1);
			return EXIT_USAGE;
		}
	}
	if (self) {
		st = rank_prep(rq->db, "SELECT model, dim FROM vectors WHERE chunk_id = ?1");
		sqlite3_bind_int64(st, 1, self);
		if (sqlite3_step(st) == SQLITE_ROW)
			qmodel = xstrdup(rank_col(st, 0) ? rank_col(st, 0) : "");
		sqlite3_finalize(st);
		if (!qmodel) {
			error("similar: '%s' has no vector: run 'ci-index --embed update'", target);
			return EXIT_IO;
		}
	} else {
		dim = rank_query_vector(rq, target, &qv, &qmodel);
		if (!dim) {
			error("similar: cannot embed the text (see the message above)");
			return EXIT_IO;
		}
	}
	memset(&vs, 0, sizeof(vs));
	if (self)
		qv = chunk_vector(rq, self, &dim);	/* the target's vector, for the snapshot */
	if (qv && snapshot_cosines(rq, qv, dim, qmodel, &order, &vs.n) == 0) {
		vs.model = xstrdup(qmodel);
		goto ranked;
	}
	if (self) {
		free(qv);
		qv = NULL;
	}
	if (!vecset_load(rq, &vs, qmodel)) {
		error("similar needs chunk vectors of model '%s' in the index: run 'ci-index --embed update'",
		      qmodel);
		free(qv);
		free(qmodel);
		vecset_free(&vs);
		return EXIT_IO;
	}
	if (self) {
		sqlite3_int64 *p = bsearch(&self, vs.id, vs.n, sizeof(*vs.id), cmp_id);
		if (!p) {
			error("similar: the vector of '%s' is empty or unreadable", target);
			free(qmodel);
			vecset_free(&vs);
			return EXIT_IO;
		}
		qv = xmalloc(vs.dim * sizeof(float));
		memcpy(qv, vs.m + (size_t)(p - vs.id) * vs.dim, vs.dim * sizeof(float));
	} else if (dim != vs.dim) {
		error("similar: the query vector has %zu values, the index's vectors %zu", dim, vs.dim);
		free(qv);
		free(qmodel);
		vecset_free(&vs);
		return EXIT_IO;
	} else {
		double norm = 0;
		for (i = 0; i < dim; i++)
			norm += (double)qv[i] * qv[i];
		for (i = 0; norm > 0 && i < dim; i++)
			qv[i] = (float)(qv[i] / sqrt(norm));
	}
	sims = xmalloc(vs.n * sizeof(float));
	sgemm_nt(vs.n, 1, vs.dim, vs.m, qv, sims);
	order = xmalloc(vs.n * sizeof(*order));
	for (i = 0; i < vs.n; i++) {
		order[i].id = vs.id[i];
		order[i].s = sims[i];
	}
	free(sims);
ranked:
	qsort(order, vs.n, sizeof(*order), rank_cmp_sem);
	shown = write_nearest(rq, out, order, vs.n, self);
	nd_begin(out, "summary");
	nd_str(out, "query", target);
	nd_str(out, "mode", "similar");
	nd_str(out, "target", self ? "chunk" : "text");
	nd_str(out, "model", vs.model);
	nd_int(out, "vectors", (long long)vs.n);
	nd_int(out, "count", (long long)shown);
	nd_end(out);
	ret = shown ? EXIT_OK : EXIT_NOTHING;
	free(order);
	free(qv);
	free(qmodel);
	vecset_free(&vs);
	return ret;
}

static size_t uf_find(size_t *parent, size_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

struct cluster {
	size_t root, size, first;	/* first: the smallest member index, for a stable order */
	float min, max;
	double mean;		/* over the pairs above the threshold */
};

static int cmp_cluster(const void *a, const void *b)
{
	const struct cluster *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->max != y->max)
		return x->max > y->max ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The near-duplicate scan: the chunks taking part and their clusters. */
struct dup_scan {
	size_t n;		/* chunks taking part */
	size_t dim;
	size_t *keep;		/* each one's index in cands, which grows */
	float *sub;		/* their rows, packed */
	size_t *parent;		/* union-find over them */
	float *pmin, *pmax;	/* per cluster root: its pairs' least and greatest cosine */
	double *psum;		/* per cluster root: the sum and number of its pairs */
	size_t *pnr;
	size_t pairs;		/* above the threshold */
	struct cluster *cl;	/* the clusters, largest first */
	size_t ncl;
};

/* The definitions taking part (named chunks of at least 3 lines, passing the filters), packed. */
static void scan_members(struct rank_query *rq, const struct vecset *vs, struct dup_scan *d)
{
	sqlite3_stmt *st;

	d->dim = vs->dim;
	d->keep = xmalloc(vs->n * sizeof(*d->keep));
	d->sub = xmalloc(vs->n * vs->dim * sizeof(float));
	st = rank_prep(rq->db, "SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
		       "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1 ORDER BY f.path");
	for (size_t i = 0; i < vs->n; i++) {
		struct rank_cand *c = chunk_cand(rq, st, vs->id[i]);
		if (!c || !c->name || c->end - c->start + 1 < 3)
			continue;
		d->keep[d->n] = (size_t)(c - rq->cands);
		memcpy(d->sub + d->n * vs->dim, vs->m + i * vs->dim, vs->dim * sizeof(float));
		d->n++;
	}
	sqlite3_finalize(st);
}

/*
 * A sentence encoder's vectors share a large common direction (two unrelated
 * functions score 0.8 with USE-lite), so a fixed threshold on raw cosines
 * chains everything together.  Remove the mean of the vectors taking part and
 * normalise again: what is left is what sets a chunk apart, and 0.85 means close.
 */
static void scan_center(struct dup_scan *d)
{
	size_t i, j, n = d->n, dim = d->dim;
	double *mean;

	if (n <= 1)
		return;
	mean = xcalloc(dim, sizeof(double));
	for (i = 0; i < n; i++)
		for (j = 0; j < dim; j++)
			mean[j] += d->sub[i * dim + j];
	for (j = 0; j < dim; j++)
		mean[j] /= (double)n;
	for (i = 0; i < n; i++) {
		float *row = d->sub + i * dim;
		double norm = 0;
		for (j = 0; j < dim; j++) {
			row[j] = (float)(row[j] - mean[j]);
			norm += (double)row[j] * row[j];
		}
		norm = norm > 0 ? 1.0 / sqrt(norm) : 0;
		for (j = 0; j < dim; j++)
			row[j] = (float)(row[j] * norm);
	}
	free(mean);
}

/* Chunks a and b (rows) are near, at cosine s: one cluster. */
static void scan_join(struct dup_scan *d, size_t row_a, size_t row_b, float s)
{
	size_t a = uf_find(d->parent, row_a), b = uf_find(d->parent, row_b);

	d->pairs++;
	if (a != b) {
		float lo = d->pmin[a] < d->pmin[b] ? d->pmin[a] : d->pmin[b];
		float hi = d->pmax[a] > d->pmax[b] ? d->pmax[a] : d->pmax[b];
		double sum = d->psum[a] + d->psum[b];
		size_t nr = d->pnr[a] + d->pnr[b];
		if (a < b) { d->parent[b] = a; } else { d->parent[a] = b; a = b; }
		d->pmin[a] = lo;
		d->pmax[a] = hi;
		d->psum[a] = sum;
		d->pnr[a] = nr;
	}
	d->psum[a] += s;
	d->pnr[a]++;
	if (s < d->pmin[a])
		d->pmin[a] = s;
	if (s > d->pmax[a])
		d->pmax[a] = s;
}

/*
 * Every pair whose centred cosine reaches threshold joins one cluster (single
 * linkage).  The similarity matrix is computed a block of rows at a time with
 * BLIS: n^2 dim / 2 multiply-adds in all.
 */
static void scan_pairs(struct dup_scan *d, double threshold)
{
	const size_t block = 512;
	size_t i, j, n = d->n;
	float *sims;

	d->parent = xmalloc((n + 1) * sizeof(*d->parent));
	d->pmin = xmalloc((n + 1) * sizeof(float));
	d->pmax = xmalloc((n + 1) * sizeof(float));
	d->psum = xcalloc(n + 1, sizeof(double));
	d->pnr = xcalloc(n + 1, sizeof(size_t));
	for (i = 0; i < n; i++) {
		d->parent[i] = i;
		d->pmin[i] = 2;
		d->pmax[i] = -2;
	}
	sims = xmalloc(block * (n + 1) * sizeof(float));
	for (size_t b0 = 0; b0 < n; b0 += block) {
		size_t rows = n - b0 < block ? n - b0 : block;
		sgemm_nt(rows, n, d->dim, d->sub + b0 * d->dim, d->sub, sims);
		for (i = 0; i < rows; i++)
			for (j = b0 + i + 1; j < n; j++)
				if (!(sims[i * n + j] < threshold))
					scan_join(d, b0 + i, j, sims[i * n + j]);
	}
	free(sims);
}

/* The clusters of two chunks or more, largest first. */
static void scan_clusters(struct dup_scan *d)
{
	size_t i, n = d->n, *slot = xmalloc((n + 1) * sizeof(*slot));

	d->cl = xcalloc(n + 1, sizeof(*d->cl));
	for (i = 0; i < n; i++)
		slot[i] = (size_t)-1;
	for (i = 0; i < n; i++) {
		size_t r = uf_find(d->parent, i);
		if (r == i && d->pmax[r] < -1)
			continue;	/* alone */
		if (slot[r] == (size_t)-1) {
			struct cluster *c = &d->cl[d->ncl];
			slot[r] = d->ncl++;
			c->root = r;
			c->first = i;
			c->min = d->pmin[r];
			c->max = d->pmax[r];
			c->mean = d->pnr[r] ? d->psum[r] / (double)d->pnr[r] : d->pmax[r];
		}
		d->cl[slot[r]].size++;
	}
	free(slot);
	qsort(d->cl, d->ncl, sizeof(*d->cl), cmp_cluster);
}

static void write_cluster(const struct rank_query *rq, struct buf *out, struct dup_scan *d, const struct cluster *c)
{
	int first = 1;

	nd_begin(out, "cluster");
	nd_int(out, "size", (long long)c->size);
	nd_num(out, "min_similarity", rank_round3(c->min));
	nd_num(out, "max_similarity", rank_round3(c->max));
	nd_num(out, "mean_similarity", rank_round3(c->mean));
	nd_key(out, "members");
	buf_addch(out, '[');
	for (size_t i = c->first; i < d->n; i++) {
		const struct rank_cand *m;
		if (uf_find(d->parent, i) != c->root)
			continue;
		if (!first)
			buf_addch(out, ',');
		first = 0;
		m = &rq->cands[d->keep[i]];
		buf_addstr(out, "{\"path\":");
		nd_json_string(out, m->path, strlen(m->path));
		nd_int(out, "start_line", m->start);
		nd_int(out, "end_line", m->end);
		nd_str(out, "kind", m->kind);
		nd_str(out, "name", m->name);
		nd_str(out, "scope", m->scope);
		nd_str(out, "lang", m->lang);
		buf_addch(out, '}');
	}
	buf_addch(out, ']');
	nd_end(out);
}

/* Near-duplicate clusters of definitions, by their centred cosines. */
int rank_similar_scan(struct rank_query *rq, struct buf *out)
{
	struct vecset vs;
	struct dup_scan d;
	size_t shown = 0;

	if (!vecset_load(rq, &vs, NULL)) {
		error("similar --scan needs chunk vectors in the index: run 'ci-index --embed update'");
		vecset_free(&vs);
		return EXIT_IO;
	}
	memset(&d, 0, sizeof(d));
	scan_members(rq, &vs, &d);
	scan_center(&d);
	scan_pairs(&d, rq->o->threshold);
	scan_clusters(&d);
	for (size_t k = 0; k < d.ncl && shown < (size_t)rq->o->limit; k++) {
		write_cluster(rq, out, &d, &d.cl[k]);
		shown++;
	}
	nd_begin(out, "summary");
	nd_str(out, "mode", "similar-scan");
	nd_num(out, "threshold", rq->o->threshold);
	nd_bool(out, "centered", 1);
	nd_str(out, "model", vs.model);
	nd_int(out, "chunks", (long long)d.n);
	nd_int(out, "pairs", (long long)d.pairs);
	nd_int(out, "clusters", (long long)d.ncl);
	nd_int(out, "count", (long long)shown);
	nd_end(out);
	free(d.cl);
	free(d.parent);
	free(d.pmin);
	free(d.psum);
	free(d.pnr);
	free(d.pmax);
	free(d.keep);
	free(d.sub);
	vecset_free(&vs);
	return shown ? EXIT_OK : EXIT_NOTHING;
}
