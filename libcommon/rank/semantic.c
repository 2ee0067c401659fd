/*
 * rank/semantic.c: the semantic signal: the query's vector (made on a
 * thread while the other signals run, with the model a server preloaded when
 * it is the index's), its cosines with the chunk vectors (vecscan.c).
 */
#include "core/common.h"
#include "rank/signal.h"

#include <pthread.h>
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "embed/static.h"
#include "index/index.h"
#include <ctype.h>
#include <math.h>

/* the distinct words of a query whose document count is looked up (idf) at most */
#define SEM_WORDS_MAX 1024

static int cmp_sem_word(const void *a, const void *b)
{
	return strcmp(((const struct sem_word *)a)->w, ((const struct sem_word *)b)->w);
}

static int collect_word(const char *word, size_t n, void *arg)
{
	struct sem_words *sw = arg;

	ALLOC_GROW(sw->v, sw->nr + 1, sw->alloc);
	sw->v[sw->nr].w = xstrndup(word, n);
	sw->v[sw->nr++].wt = 1;
	return sw->nr >= 8 * SEM_WORDS_MAX;
}

static void sem_words_free(struct sem_words *sw)
{
	if (!sw)
		return;
	for (size_t i = 0; i < sw->nr; i++)
		free(sw->v[i].w);
	free(sw->v);
	free(sw);
}

/* The distinct words of q[0..len), sorted, into sw. */
static void sem_words_of(struct sem_words *sw, const char *q, size_t len)
{
	size_t i, j;

	static_words(q, len, collect_word, sw);
	qsort(sw->v, sw->nr, sizeof(*sw->v), cmp_sem_word);
	for (i = j = 0; i < sw->nr; i++) {
		if (j && !strcmp(sw->v[j - 1].w, sw->v[i].w)) {
			free(sw->v[i].w);
			continue;
		}
		sw->v[j++] = sw->v[i];
	}
	sw->nr = j;
}

/* A word's document count in the index: term_df has the common ones, fts5vocab the rest. */
static sqlite3_int64 sem_word_df(struct rank_query *rq, sqlite3_stmt *st, sqlite3_stmt **vocab, const char *w)
{
	sqlite3_int64 df = 0;

	sqlite3_bind_text(st, 1, w, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		df = sqlite3_column_int64(st, 0);
	} else {
		if (!*vocab) {
			if (sqlite3_exec(rq->db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab "
					 "USING fts5vocab(main, chunks_fts, row)", NULL, NULL, NULL) != SQLITE_OK)
				die("index: %s", sqlite3_errmsg(rq->db));
			*vocab = rank_stmt(rq->r, "SELECT doc FROM temp.ci_vocab WHERE term = ?1");
		}
		sqlite3_bind_text(*vocab, 1, w, -1, SQLITE_STATIC);
		df = sqlite3_step(*vocab) == SQLITE_ROW ? sqlite3_column_int64(*vocab, 0) : 0;
		sqlite3_reset(*vocab);
	}
	sqlite3_reset(st);
	return df;
}

/*
 * The words of q as a static model cuts them, weighted: those of its title
 * (the first line with a word) title times (--semantic-title), and each by
 * its idf in the index (BM25's, as the keyword signal's terms) to the power
 * p (--semantic-idf): a static model's vector of a long issue text is
 * otherwise the sum of all its words alike.
 */
static struct sem_words *sem_words_weigh(struct rank_query *rq, const char *q, double p, double title)
{
	struct sem_words *sw = xcalloc(1, sizeof(*sw)), tw = { NULL, 0, 0 };
	sqlite3_stmt *st = NULL, *vocab = NULL;
	double n = (double)rq->r->total_chunks;
	const char *t = q, *te;
	size_t i;

	sem_words_of(sw, q, strlen(q));
	while (*t && !isalnum((unsigned char)*t))
		t++;
	te = strchr(t, '\n');
	if (title != 1)
		sem_words_of(&tw, t, te ? (size_t)(te - t) : strlen(t));
	if (p > 0 && sw->nr <= SEM_WORDS_MAX)	/* more: too many to look up, no idf */
		st = rank_stmt(rq->r, "SELECT df FROM term_df WHERE term = ?1");
	for (i = 0; i < sw->nr; i++) {
		struct sem_word *x = &sw->v[i];
		if (st) {
			sqlite3_int64 df = sem_word_df(rq, st, &vocab, x->w);
			if (df > n)
				df = (sqlite3_int64)n;
			x->wt = (float)pow(log(1.0 + (n - (double)df + 0.5) / ((double)df + 0.5)), p);
		}
		if (tw.nr && bsearch(x, tw.v, tw.nr, sizeof(*tw.v), cmp_sem_word))
			x->wt *= (float)title;
	}
	rank_stmt_done(rq->r, st);
	rank_stmt_done(rq->r, vocab);
	for (i = 0; i < tw.nr; i++)
		free(tw.v[i].w);
	free(tw.v);
	return sw;
}

/* The weight of the model's token id among the query's words (sorted), or -1 if not there. */
static float sem_word_weight(const struct sem_words *sw, const struct embed_model *m, int32_t id)
{
	const char *word;
	size_t n = embed_token_word(m, id, &word), lo = 0, hi = sw->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(sw->v[mid].w, word, n);
		if (!c && sw->v[mid].w[n])
			c = 1;
		if (!c)
			return sw->v[mid].wt;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The query's vector: its words pooled as weighed (j->words), else as the model pools them. */
static void embed_query(struct qvec_job *j, struct embed_model *m, struct embed_work *w, const int32_t *ids, size_t n)
{
	const struct sem_words *sw = j->words;
	float *wt;
	size_t i, found = 0;
	double sum = 0;

	if (!sw || !sw->nr || !n) {
		embed_forward(w, &ids, &n, 1, j->vec);
		return;
	}
	wt = xmalloc(n * sizeof(*wt));
	for (i = 0; i < n; i++)
		if ((wt[i] = sem_word_weight(sw, m, ids[i])) >= 0)
			sum += wt[i], found++;
	/* a word not collected (past 8 * SEM_WORDS_MAX words of a long text): the mean weight */
	for (i = 0; i < n; i++)
		if (wt[i] < 0)
			wt[i] = found ? (float)(sum / (double)found) : 1;
	embed_forward_weighted(w, ids, wt, n, j->vec);
	free(wt);
}

static void *embedder(void *arg)
{
	struct qvec_job *j = arg;
	const struct rank_preload *pre = j->r->pre;
	const char *dir = j->dir;
	struct embed_model *m = NULL;
	struct embed_work *w;
	const int32_t *ids;
	size_t n;

	if (pre && pre->model) {
		char *r = realpath(dir, NULL);
		if (!strcmp(r ? r : dir, pre->model_dir))
			m = pre->model;
		free(r);
	}
	/* as ci-embed --query: kernels for products of a few rows for a short text */
	if (strlen(j->text) <= 160)
		embed_for_queries();
	if (!m && embed_model_open(&m, dir) < 0) {
		rank_early_scan_run(j);	/* only waits for the mapper */
		return NULL;
	}
	w = embed_work_new(m);
	ids = embed_tokenize(w, j->text, strlen(j->text), embed_max_tokens(m), &n);
	j->dim = embed_dim(m);
	j->vec = xmalloc(j->dim * sizeof(float));
	embed_query(j, m, w, ids, n);
	rank_rtr(j->r, "embedder: the query's vector");
	j->model = xstrdup(embed_model_name(m, 0));
	j->fp = embed_model_fingerprint(m);
	embed_work_free(w);
	if (j->keep_model) {
		j->model_kept = m;
		j->model_owned = !pre || m != pre->model;
	} else if (!pre || m != pre->model) {
		embed_model_close(m);
	}
	rank_early_scan_run(j);
	rank_rtr(j->r, "embedder: the scan");
	return NULL;
}

/*
 * The model of the index's vectors (one row's: an index holds one model's), or
 * NULL; owned by the caller.
 */
static char *index_model(struct rank_query *rq)
{
	sqlite3_stmt *st = rank_prep(rq->db, "SELECT model FROM vectors LIMIT 1");
	char *m = sqlite3_step(st) == SQLITE_ROW && rank_col(st, 0) ? xstrdup(rank_col(st, 0)) : NULL;

	sqlite3_finalize(st);
	return m;
}

/* weigh: a query's words weighted as the options say (an issue), else as the model pools them (code) */
static void rank_query_vector_start(struct rank_query *rq, struct qvec_job *j, const char *q, int weigh)
{
	char *im = index_model(rq);
	double title;

	/* the query in the space of the index's vectors: its model, when known by name */
	j->dir = xstrdup(embed_model_dir_for(NULL, im));
	j->index_model = im;
	j->db = rq->db;
	j->fp = 0;
	j->mismatch = 0;
	/*
	 * A static model's words weighted here (the index is this thread's); the
	 * title's weight not said: RANK_SEM_TITLE in semantic mode, 1 where the
	 * learned fusion reads the signal.
	 */
	title = rq->o->sem_title >= 0 ? rq->o->sem_title : !strcmp(rq->o->mode, "semantic") ? RANK_SEM_TITLE : 1;
	j->words = weigh && (rq->o->sem_idf > 0 || title != 1) && embed_model_is_static(j->dir)
			   ? sem_words_weigh(rq, q, rq->o->sem_idf, title) : NULL;
	/* the paths' weight, likewise: RANK_SEM_PATH in semantic mode, else 0 */
	if (weigh)
		rq->sem_path_w = !embed_model_is_static(j->dir) ? 0
				 : rq->o->sem_path >= 0 ? rq->o->sem_path
				 : !strcmp(rq->o->mode, "semantic") ? RANK_SEM_PATH : 0;
	j->keep_model = weigh && rq->sem_path_w > 0;
	j->model_kept = NULL;
	j->model_owned = 0;
	j->r = rq->r;
	j->text = xstrdup(q);
	j->vec = NULL;
	j->dim = 0;
	j->model = NULL;
	j->started = pthread_create(&j->embedder, NULL, embedder, j) == 0;
	if (!j->started)
		embedder(j);
}

/* The vector of a job started: returns its dimension, or 0 when unavailable. */
static size_t rank_query_vector_finish(struct qvec_job *j, float **vec, char **model)
{
	if (j->started)
		pthread_join(j->embedder, NULL);
	j->started = 0;
	free(j->text);
	j->text = NULL;
	free(j->dir);
	j->dir = NULL;
	sem_words_free(j->words);
	j->words = NULL;
	if (j->vec && j->model && j->index_model && strcmp(j->model, j->index_model)) {
		/* another model's (or another prefix's) vectors: no answer is better than a wrong one */
		error("the index's vectors are of model '%s', the query's of '%s' ($CI_MODEL): unset "
		      "CI_MODEL or set it to '%s', or embed the index anew ('ci-index --embed --model %s "
		      "update')", j->index_model, j->model, j->index_model, j->model);
		free(j->vec);
		j->vec = NULL;
		j->mismatch = 1;
	}
	if (j->vec && j->model && index_vectors_stale(j->db, j->model, j->fp)) {
		/* an earlier version of the model, by the same name */
		error("the index's vectors are of other weights of model '%s' (an earlier version): "
		      "embed the index anew ('ci-index --embed update')", j->model);
		free(j->vec);
		j->vec = NULL;
		j->mismatch = 1;
	}
	free(j->index_model);
	j->index_model = NULL;
	*vec = j->vec;
	*model = j->model;
	j->vec = NULL;
	j->model = NULL;
	return *vec ? j->dim : 0;
}

/* The model the embedder kept open for the paths, closed (if it opened it). */
static void release_model(struct qvec_job *j)
{
	if (j->model_kept && j->model_owned)
		embed_model_close(j->model_kept);
	j->model_kept = NULL;
	j->keep_model = 0;
}

double rank_text_cosine(struct embed_work *w, const struct embed_model *m, const float *qv, float *scratch,
			const char *text)
{
	const int32_t *ids;
	size_t n;

	ids = embed_tokenize(w, text, strlen(text), embed_max_tokens(m), &n);
	if (!n)
		return 0;
	embed_forward(w, &ids, &n, 1, scratch);
	return vec_cosine(qv, scratch, embed_dim(m));
}

/*
 * --semantic-path: each candidate's file path embedded by the query's model
 * (a distinct path once, of a file with a chunk the signal found), its
 * cosine with the query in c->sem_file, and w
 * times it added to the semantic value of each chunk the signal found (so
 * its rank and the learned fusion's semantic features read the sum; the
 * hit shows the chunk's cosine, kept in c->sem_cosine).
 * Without the model (not kept: its vector failed), the cosine alone:
 * rq->sem_path_w set to 0.
 */
static void semantic_paths(struct rank_query *rq, struct qvec_job *j, const float *qv, size_t dim)
{
	struct embed_model *m = j->model_kept;
	struct embed_work *w;
	struct rank_cand **v;
	float *pv;
	size_t i, g, k;

	if (!m || embed_dim(m) != dim || !rq->cands_nr) {
		rq->sem_path_w = 0;
		return;
	}
	w = embed_work_new(m);
	pv = xmalloc(dim * sizeof(*pv));
	v = xmalloc(rq->cands_nr * sizeof(*v));
	for (i = 0; i < rq->cands_nr; i++)
		v[i] = &rq->cands[i];
	qsort(v, rq->cands_nr, sizeof(*v), rank_cmp_cand_path);
	for (g = 0; g < rq->cands_nr; g = k) {
		const char *path = v[g]->path;
		double cos;	/* negative too: a path unlike the query counts against */
		int found = 0;

		for (k = g; k < rq->cands_nr && !strcmp(v[k]->path, path); k++)
			found |= v[k]->sig[SIG_SEMANTIC] > 0;
		if (!found)	/* no chunk of it the semantic signal found (hybrid): nothing to add to */
			continue;
		cos = rank_text_cosine(w, m, qv, pv, path);
		for (k = g; k < rq->cands_nr && !strcmp(v[k]->path, path); k++) {
			v[k]->sem_file = cos;
			v[k]->sem_cosine = v[k]->sig[SIG_SEMANTIC];
			if (v[k]->sig[SIG_SEMANTIC] > 0)	/* one the semantic signal found */
				v[k]->sig[SIG_SEMANTIC] = fmax(0, v[k]->sig[SIG_SEMANTIC] + rq->sem_path_w * cos);
		}
	}
	free(v);
	free(pv);
	embed_work_free(w);
}

/* The query's vector, now. */
size_t rank_query_vector(struct rank_query *rq, const char *q, float **vec, char **model)
{
	struct qvec_job j;

	memset(&j, 0, sizeof(j));
	rank_query_vector_start(rq, &j, q, 0);
	return rank_query_vector_finish(&j, vec, model);
}

/*
 * The snapshot the index names (token), from the server's memory when it
 * read that one, else mapped: 0, or 1 when there is none.
 */
int rank_snapshot_get(const struct ranker *r, struct vecsnap *s, const char *token)
{
	if (r->pre && r->pre->snap.map && !strcmp(r->pre->snap.head->token, token)) {
		*s = r->pre->snap;
		s->borrowed = 1;
		return 0;
	}
	return vecsnap_map(s, r->index_path, token);
}

static void set_semantic(struct rank_cand *c, double s)
{
	if (s > c->sig[SIG_SEMANTIC])
		c->sig[SIG_SEMANTIC] = s > 0 ? s : 0;
}

static void *snap_mapper(void *arg)
{
	struct qvec_job *j = arg;

	j->snap_rc = rank_snapshot_get(j->r, &j->snap, j->token);
	return NULL;
}

int rank_has_vectors(struct rank_query *rq)
{
	sqlite3_stmt *st = rank_stmt(rq->r, "SELECT EXISTS (SELECT 1 FROM vectors)");
	int rc = sqlite3_step(st), have = rc == SQLITE_ROW && sqlite3_column_int(st, 0);

	if (rc != SQLITE_ROW)	/* a damaged index: not one without vectors */
		die("index: %s", sqlite3_errmsg(rq->db));
	rank_stmt_done(rq->r, st);
	return have;
}

/*
 * Start the query's vector (the caller has seen that the index has vectors:
 * without, there is no model to start), and the mapping of the snapshot of
 * the vectors: its pages take about 10 ms to map on a VM, which the other
 * signals and ci-embed hide.
 */
void rank_semantic_start(struct rank_query *rq, struct qvec_job *j, const char *q)
{
	j->r = rq->r;
	j->snap_rc = 1;
	if (vecsnap_token(rq->db, j->token, sizeof(j->token)) == 0) {
		/* the chunks to skip in the snapshot, read here: the scan is the embedder's */
		j->early = rank_early_scan_new(rq);
		const struct rank_preload *pre = rq->r->pre;
		if (pre && pre->snap.map && !strcmp(pre->snap.head->token, j->token))
			j->snap_rc = rank_snapshot_get(rq->r, &j->snap, j->token);	/* in place: nothing to wait for */
		else
			j->mapping = pthread_create(&j->mapper, NULL, snap_mapper, j) == 0;
	}
	rank_query_vector_start(rq, j, q, 1);
}

/* The snapshot started by rank_semantic_start(), if it could be mapped: 0, else 1. */
static int semantic_snapshot_ready(struct qvec_job *j)
{
	if (!j->mapping)
		return j->snap_rc;
	pthread_join(j->mapper, NULL);
	j->mapping = 0;
	return j->snap_rc;
}

/*
 * Every vector of dim values (and of model, unless NULL) read from the
 * vectors table, where SQLite holds it (the cosine without decoding), into
 * sc->top: in two stages on two threads (struct sem_batch), else here.
 */
static void semantic_table(struct rank_query *rq, struct sem_scan *sc, size_t dim, const char *model)
{
	sqlite3_stmt *st;
	pthread_t worker;
	int threaded, k;

	for (k = 0; k < 2; k++)
		sc->b[k].data = xmalloc(SEM_BATCH * dim * 4);
	pthread_mutex_init(&sc->mu, NULL);
	pthread_cond_init(&sc->cv, NULL);
	threaded = online_cpus() > 1 && pthread_create(&worker, NULL, rank_sem_worker, sc) == 0;

	st = rank_prep(rq->db, "SELECT v.chunk_id, v.fmt, v.vec FROM vectors v "
		       "WHERE v.dim = ?1 AND (?2 IS NULL OR v.model = ?2)");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)dim);
	if (model)
		sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	k = 0;
	for (;;) {
		struct sem_batch *b = &sc->b[k];
		int more = 1;

		if (threaded) {
			pthread_mutex_lock(&sc->mu);
			while (sc->full[k])
				pthread_cond_wait(&sc->cv, &sc->mu);
			pthread_mutex_unlock(&sc->mu);
		}
		b->n = 0;
		while (b->n < SEM_BATCH && (more = sqlite3_step(st) == SQLITE_ROW)) {
			const char *f = (const char *)sqlite3_column_text(st, 1);
			size_t n = (size_t)sqlite3_column_bytes(st, 2);
			enum vec_format vf = VEC_F32;	/* no fmt: an index older than the column */
			b->id[b->n] = sqlite3_column_int64(st, 0);
			b->fmt[b->n] = f && vec_format_parse(&vf, f) < 0 ? VEC_BAD : (unsigned char)vf;
			if (n > dim * 4)
				b->fmt[b->n] = VEC_BAD, n = 0;	/* too long for any format */
			b->bytes[b->n] = (uint32_t)n;
			if (n)
				memcpy(b->data + b->n * dim * 4, sqlite3_column_blob(st, 2), n);
			b->n++;
		}
		if (b->n) {
			if (threaded) {
				pthread_mutex_lock(&sc->mu);
				sc->full[k] = 1;
				pthread_cond_broadcast(&sc->cv);
				pthread_mutex_unlock(&sc->mu);
				k ^= 1;
			} else {
				rank_sem_cosines(sc, b);
			}
		}
		if (!more)
			break;
	}
	sqlite3_finalize(st);
	if (threaded) {
		pthread_mutex_lock(&sc->mu);
		sc->done = 1;
		pthread_cond_broadcast(&sc->cv);
		pthread_mutex_unlock(&sc->mu);
		pthread_join(worker, NULL);
	}
	rq->sem_table_nr = (long)sc->seen;
	free(sc->b[0].data);
	free(sc->b[1].data);
	pthread_mutex_destroy(&sc->mu);
	pthread_cond_destroy(&sc->cv);
}

int rank_signal_semantic(struct rank_query *rq, struct qvec_job *j)
{
	struct vecsnap vs;
	float *qv;
	char *model;
	size_t dim, i, top_nr;
	struct sem_scan *sc;
	struct sem *top;
	struct scored *v;
	int seen, from_snapshot;

	dim = rank_query_vector_finish(j, &qv, &model);
	if (j->mismatch) {
		free(model);
		model = NULL;
		dim = 0;
	}
	if (semantic_snapshot_ready(j) == 0)
		vs = j->snap;
	else
		memset(&vs, 0, sizeof(vs));
	if (!dim) {
		release_model(j);
		rq->sem_path_w = 0;
		rank_early_scan_free(j->early);
		j->early = NULL;
		vecsnap_close(&vs);
		return j->mismatch ? -1 : 0;
	}
	rank_tr(rq, "semantic: the query's vector");
	sc = rank_sem_scan_new(qv, dim);
	from_snapshot = vs.map && vs.dim == dim && (!model || !strcmp(model, vs.model)) &&
			rank_semantic_snapshot(rq, sc, &vs, model, j->early) == 0;
	if (from_snapshot)
		rank_tr(rq, "semantic: the snapshot's best");
	rank_early_scan_free(j->early);
	j->early = NULL;
	vecsnap_close(&vs);
	if (!from_snapshot)
		semantic_table(rq, sc, dim, model);
	top = sc->top;
	top_nr = sc->top_nr;
	seen = sc->seen > 0;
	qsort(top, top_nr, sizeof(*top), rank_cmp_sem);
	v = xmalloc((top_nr + 1) * sizeof(*v));
	for (i = 0; i < top_nr; i++) {
		v[i].id = top[i].id;
		v[i].s = top[i].s;
	}
	rank_lookup_cands(rq, v, top_nr, set_semantic);
	free(v);
	if (rq->sem_path_w > 0)
		semantic_paths(rq, j, qv, dim);
	release_model(j);
	rank_sem_scan_free(sc);
	free(qv);
	free(model);
	return seen;
}
