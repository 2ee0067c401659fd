/*
 * rank/vecscan.c: the scans of the chunk vectors for the semantic signal:
 * the snapshot beside the index (by signs first, or in two parts on two
 * threads), the rows changed since from the table, or the whole table in
 * batches on two threads; the best SEM_TOP in a heap.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <math.h>
#include <pthread.h>

int rank_cmp_sem(const void *a, const void *b)
{
	const struct sem *x = a, *y = b;

	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* a ranks after b (rank_cmp_sem's order) */
static int sem_worse(const struct sem *a, const struct sem *b)
{
	return rank_cmp_sem(a, b) > 0;
}

/*
 * Keep the best cap of the values offered in h[0..*n), a heap whose root is
 * the worst kept: a scan over every vector keeps its 200 best without sorting
 * them all (the sort of 137k values was a tenth of a semantic query).
 */
void rank_sem_keep(struct sem *h, size_t *n, size_t cap, struct sem x)
{
	size_t i, c;

	if (*n < cap) {
		for (i = (*n)++; i && sem_worse(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = x;
		return;
	}
	if (!cap || !sem_worse(&h[0], &x))
		return;		/* no better than the worst kept */
	for (i = 0; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && sem_worse(&h[c + 1], &h[c]))
			c++;
		if (!sem_worse(&h[c], &x))
			break;
		h[i] = h[c];
	}
	h[i] = x;
}

/* The cosine of the query and a stored vector, or -2 when it is no vector of dim values. */
static double row_cosine(const struct sem_scan *sc, enum vec_format f, const void *blob, size_t bytes)
{
	if (f == VEC_INT8 && bytes == sc->dim)
		return vec_cosine_q16(&sc->q16, blob);
	return vec_cosine_stored(sc->q, sc->qnorm, sc->dim, f, blob, bytes);
}

/* A scan for the query vector q of dim values (q is borrowed). */
struct sem_scan *rank_sem_scan_new(const float *q, size_t dim)
{
	struct sem_scan *sc = xcalloc(1, sizeof(*sc));

	sc->q = q;
	sc->dim = dim;
	for (size_t i = 0; i < dim; i++)
		sc->qnorm += (double)q[i] * q[i];
	sc->qnorm = sqrt(sc->qnorm);
	vec_q16_init(&sc->q16, q, dim);
	return sc;
}

void rank_sem_scan_free(struct sem_scan *sc)
{
	vec_q16_release(&sc->q16);
	free(sc);
}

void rank_sem_cosines(struct sem_scan *sc, const struct sem_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct sem x;
		if (b->fmt[i] == VEC_BAD)
			continue;
		x.s = row_cosine(sc, (enum vec_format)b->fmt[i], b->data + i * sc->dim * 4, b->bytes[i]);
		if (x.s < -1.5)
			continue;	/* not a vector of dim values */
		x.id = b->id[i];
		sc->seen++;
		rank_sem_keep(sc->top, &sc->top_nr, SEM_TOP, x);
	}
}

void *rank_sem_worker(void *arg)
{
	struct sem_scan *sc = arg;
	int k = 0;

	for (;;) {
		pthread_mutex_lock(&sc->mu);
		while (!sc->full[k] && !sc->done)
			pthread_cond_wait(&sc->cv, &sc->mu);
		if (!sc->full[k]) {
			pthread_mutex_unlock(&sc->mu);
			return NULL;
		}
		pthread_mutex_unlock(&sc->mu);
		rank_sem_cosines(sc, &sc->b[k]);
		pthread_mutex_lock(&sc->mu);
		sc->full[k] = 0;
		pthread_cond_broadcast(&sc->cv);
		pthread_mutex_unlock(&sc->mu);
		k ^= 1;
	}
}

static void *sem_part_scan(void *arg)
{
	struct sem_part *p = arg;
	const struct vecsnap *vs = p->vs;

	for (size_t i = p->from; i < p->to; i++) {
		struct sem x;
		x.id = vs->ids[i];
		if (rank_changed_since(p->skip, p->skip_max, x.id))
			continue;	/* read from the vectors table */
		x.s = vs->norms ? vec_cosine_q16_n(&p->sc->q16, vs->rows + i * vs->dim, vs->norms[i])
				: vec_cosine_q16(&p->sc->q16, vs->rows + i * vs->dim);
		if (vs->exact)
			x.id = (sqlite3_int64)i;	/* ids ascend with rows: the same order */
		p->seen++;
		rank_sem_keep(p->top, &p->top_nr, p->cap, x);
	}
	return NULL;
}

/*
 * The chunks whose vector changed since the snapshot was written: a malloc'd
 * bitmap by chunk id, ids up to *max (-1: none).  NULL when vec_changed
 * cannot be read.
 */
unsigned char *rank_changed_bitmap(struct rank_query *rq, sqlite3_int64 *max)
{
	sqlite3_stmt *st;
	unsigned char *skip;
	sqlite3_int64 id;

	*max = -1;
	if (sqlite3_prepare_v2(rq->db, "SELECT max(chunk_id) FROM vec_changed", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
		*max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	skip = xcalloc((size_t)(*max + 1) / 8 + 1, 1);
	st = rank_prep(rq->db, "SELECT chunk_id FROM vec_changed");
	while (sqlite3_step(st) == SQLITE_ROW)
		if ((id = sqlite3_column_int64(st, 0)) >= 0 && id <= *max)
			skip[id >> 3] |= (unsigned char)(1u << (id & 7));
	sqlite3_finalize(st);
	return skip;
}

/*
 * The cosines of the changed chunks' vectors of sc->dim values (and of model,
 * unless NULL), read from the vectors table (CROSS JOIN: from the few changed
 * ones to their vectors, never a scan of the table), each given to fn.
 */
void rank_changed_cosines(struct rank_query *rq, const struct sem_scan *sc, const char *model,
			  void (*fn)(struct sem, void *),
			    void *arg)
{
	sqlite3_stmt *st = rank_prep(rq->db, "SELECT v.chunk_id, v.fmt, v.vec FROM vec_changed c CROSS JOIN vectors v "
				"ON v.chunk_id = c.chunk_id WHERE v.dim = ?1 AND (?2 IS NULL OR v.model = ?2)");

	sqlite3_bind_int64(st, 1, (sqlite3_int64)sc->dim);
	if (model)
		sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *f = (const char *)sqlite3_column_text(st, 1);
		enum vec_format vf = VEC_F32;
		struct sem x;
		if (f && vec_format_parse(&vf, f) < 0)
			continue;
		x.s = row_cosine(sc, vf, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
		if (x.s < -1.5)
			continue;
		x.id = sqlite3_column_int64(st, 0);
		fn(x, arg);
	}
	sqlite3_finalize(st);
}

static void keep_in_top(struct sem x, void *arg)
{
	struct sem_scan *sc = arg;

	sc->seen++;
	rank_sem_keep(sc->top, &sc->top_nr, SEM_TOP, x);
}

/*
 * The rows whose signs differ least from the query's, SEM_PREFILTER times as
 * many as the part keeps or a sixteenth of all (whichever is more), by their
 * cosines: the signs are an eighth of the int8 rows' bytes and a popcount a
 * word, so the pass over them and the cosines of the rows it keeps cost less
 * than half the cosines of all, on one thread instead of two (137k chunks:
 * 0.5-0.9 ms and 1.1-1.3 ms, instead of 3-4 ms on two threads).  The best
 * cosines are among the rows of fewest differing signs, nearly always: on
 * 137k chunks and 54 queries, of the best 200 of a full scan 99.7% were
 * found and the first 10 were the same for every query (4,000 rows instead
 * of 8,000: 98.4%, and 16 queries' first 10 differed; 17,000: 99.98%).  The
 * same rows are taken whether the snapshot is mapped or in a server's
 * memory.  signs_want() says how many rows to keep, or 0 when there are too
 * few for it to pay (fewer than 4 times as many as it would keep): then the
 * caller scans them all.
 */
#define SEM_PREFILTER 40

static size_t signs_want(const struct vecsnap *vs, size_t cap)
{
	size_t want = SEM_PREFILTER * cap;

	if (want < vs->n / 16)
		want = vs->n / 16;
	if (!vs->bits || vs->words != (vs->dim + 63) / 64 || vs->dim >= UINT16_MAX || vs->n < 4 * want ||
	    vs->n > UINT32_MAX)
		return 0;
	return want;
}

/* The first pass of p's rows by signs, keeping want of them for their cosines (signs_want). */
static void scan_by_signs(struct sem_part *p, size_t want)
{
	const struct vecsnap *vs = p->vs;
	size_t n = vs->n, i, k, cum = 0, t;
	uint32_t *idx;
	uint64_t *q;
	uint16_t *d;
	size_t *hist;

	q = xmalloc(vs->words * sizeof(*q));
	d = xmalloc(n * sizeof(*d));
	idx = xmalloc(n * sizeof(*idx));
	hist = xcalloc(vs->dim + 1, sizeof(*hist));
	vec_q16_sign_bits(&p->sc->q16, q);
	vec_hamming(q, vs->bits, n, vs->words, d);
	for (i = 0; i < n; i++) {
		if (rank_changed_since(p->skip, p->skip_max, vs->ids[i]))
			d[i] = UINT16_MAX;	/* read from the vectors table */
		else
			hist[d[i]]++;
	}
	for (t = 0; t <= vs->dim; t++)
		if ((cum += hist[t]) >= want)
			break;
	/* the rows kept, then their cosines, each row asked for a few ahead */
	for (i = k = 0; i < n; i++) {
		if (d[i] == UINT16_MAX)
			continue;
		p->seen++;
		if (d[i] <= t)
			idx[k++] = (uint32_t)i;
	}
	for (i = 0; i < k; i++) {
		struct sem x;
		size_t r = idx[i];
		if (i + 16 < k) {
			const signed char *ahead = vs->rows + (size_t)idx[i + 16] * vs->dim;
			for (size_t b = 0; b < vs->dim; b += 64)
				__builtin_prefetch(ahead + b);
		}
		x.id = vs->exact ? (sqlite3_int64)r : vs->ids[r];	/* by row when rescored */
		x.s = vs->norms ? vec_cosine_q16_n(&p->sc->q16, vs->rows + r * vs->dim, vs->norms[r])
				: vec_cosine_q16(&p->sc->q16, vs->rows + r * vs->dim);
		rank_sem_keep(p->top, &p->top_nr, p->cap, x);
	}
	free(idx);
	free(hist);
	free(d);
	free(q);
}

/*
 * The snapshot's rows less the skipped chunks, in parts on two threads (this
 * one and another) when there are many, or by signs first: part[0..*parts)
 * filled.
 */
static void scan_parts(const struct sem_scan *sc, const struct vecsnap *vs, const unsigned char *skip,
		       sqlite3_int64 max, struct sem_part part[2], size_t *parts)
{
	pthread_t worker;
	int threaded;
	size_t k, cap, want;

	cap = vs->exact ? VECSNAP_RESCORE : SEM_TOP;
	want = signs_want(vs, cap);
	*parts = !want && online_cpus() > 1 && vs->n >= 4096 ? 2 : 1;
	for (k = 0; k < *parts; k++) {
		part[k].sc = sc;
		part[k].vs = vs;
		part[k].skip = skip;
		part[k].skip_max = max;
		part[k].from = vs->n * k / *parts;
		part[k].to = vs->n * (k + 1) / *parts;
		part[k].cap = cap;
		part[k].top = xmalloc(cap * sizeof(*part[k].top));
		part[k].top_nr = part[k].seen = 0;
	}
	if (want) {
		scan_by_signs(&part[0], want);
		return;
	}
	threaded = *parts == 2 && pthread_create(&worker, NULL, sem_part_scan, &part[1]) == 0;
	sem_part_scan(&part[0]);
	if (*parts == 2 && !threaded)
		sem_part_scan(&part[1]);
	if (threaded)
		pthread_join(worker, NULL);
}

struct early_scan *rank_early_scan_new(struct rank_query *rq)
{
	struct early_scan *es = xcalloc(1, sizeof(*es));

	es->skip = rank_changed_bitmap(rq, &es->skip_max);
	if (!es->skip) {
		free(es);
		return NULL;
	}
	return es;
}

void rank_early_scan_free(struct early_scan *es)
{
	size_t k;

	if (!es)
		return;
	for (k = 0; k < es->parts; k++)
		free(es->part[k].top);
	if (es->sc)
		rank_sem_scan_free(es->sc);
	free(es->skip);
	free(es);
}

/* In the embedder, its vector made (or not): wait for the snapshot, and scan it if it fits. */
void rank_early_scan_run(struct qvec_job *j)
{
	struct early_scan *es = j->early;

	if (j->mapping) {
		pthread_join(j->mapper, NULL);
		j->mapping = 0;
	}
	if (!es || !j->vec || j->snap_rc != 0 || !j->snap.map || j->snap.dim != j->dim ||
	    (j->model && strcmp(j->model, j->snap.model)))
		return;
	es->sc = rank_sem_scan_new(j->vec, j->dim);
	scan_parts(es->sc, &j->snap, es->skip, es->skip_max, es->part, &es->parts);
}

/*
 * Every vector through the snapshot vs: its rows on two threads (or as the
 * embedder scanned them: es), and the chunks changed since it was written
 * from the vectors table, into sc->top.  Returns 0, or -1 when vec_changed
 * cannot be read (nothing taken).
 */
int rank_semantic_snapshot(struct rank_query *rq, struct sem_scan *sc, const struct vecsnap *vs, const char *model,
			     struct early_scan *es)
{
	struct sem_part own[2], *part = own;
	sqlite3_int64 max;
	size_t i, k, parts;
	unsigned char *skip = NULL;

	if (es && es->sc) {
		part = es->part;
		parts = es->parts;
	} else if (es) {
		/* the early scan did not run: its reading of vec_changed serves */
		scan_parts(sc, vs, es->skip, es->skip_max, own, &parts);
	} else {
		if (!(skip = rank_changed_bitmap(rq, &max)))
			return -1;
		scan_parts(sc, vs, skip, max, own, &parts);
	}
	/* the changed chunks, from the table */
	rank_changed_cosines(rq, sc, model, keep_in_top, sc);
	rq->sem_table_nr = (long)sc->seen;
	if (vs->exact) {
		/* the best by their int8 rows, by their float32 rows now */
		struct sem *all = xmalloc(2 * VECSNAP_RESCORE * sizeof(*all));
		size_t all_nr = 0;
		for (k = 0; k < parts; k++)
			for (i = 0; i < part[k].top_nr; i++)
				rank_sem_keep(all, &all_nr, VECSNAP_RESCORE, part[k].top[i]);
		for (i = 0; i < all_nr; i++) {
			size_t row = (size_t)all[i].id;
			struct sem x;
			x.s = vec_cosine_stored(sc->q, sc->qnorm, sc->dim, VEC_F32, vs->exact + row * vs->dim * 4,
						vs->dim * 4);
			if (x.s < -1.5)
				continue;
			x.id = vs->ids[row];
			rank_sem_keep(sc->top, &sc->top_nr, SEM_TOP, x);
		}
		free(all);
	}
	for (k = 0; k < parts; k++) {
		rq->sem_snapshot_nr += (long)part[k].seen;
		sc->seen += part[k].seen;
		for (i = 0; !vs->exact && i < part[k].top_nr; i++)
			rank_sem_keep(sc->top, &sc->top_nr, SEM_TOP, part[k].top[i]);
		if (part == own)
			free(part[k].top);
	}
	free(skip);
	return 0;
}

