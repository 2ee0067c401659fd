/*
 * rank/keyword.c: the keyword signal: BM25 per field (FTS5 over chunk
 * name, scope, signature and text, weights 8, 2, 4, 1) with ci-rank's own
 * idf per term, a MaxScore-like cut for common terms, and each file's best
 * three chunks mixed into a chunk's score.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <math.h>
#include "index/index.h"

/*
 * ci_bm25(chunks_fts, <column weights>..., <phrase weights>...): FTS5's
 * bm25() (k1 1.2, b 0.75, the same length normalisation) where each phrase's
 * idf is given by the caller, multiplied by the phrase's weight.  bm25()
 * itself counts every phrase's documents with xQueryPhrase on each query,
 * a walk of the whole doclist per phrase, and can weigh a term only by
 * repeating it, which walks it again; ci-rank knows the counts already.
 */
struct bm25_avg {
	double avgdl;
};

/*
 * A chunk's size in tokens from chunk_sizes (0: not known): FTS5's xColumnSize
 * runs a statement per row, half of the full-text query's time.  The table's
 * rows (1024 chunks each) are read once.
 */
static uint32_t chunk_size(struct rank_query *rq, sqlite3_int64 id)
{
	size_t b = (size_t)(id / CI_SIZES_BLOCK);

	if (!rq->sizes_st) {
		/*
		 * Room for every block in one mapping of huge pages: 4 KiB blocks
		 * from malloc took a page fault each (5-10 us on a VM).
		 */
		sqlite3_stmt *st;
		sqlite3_int64 max = -1;

		/* kept prepared where the connection keeps its statements (rank_stmt: a shard server's) */
		if (rank_kept(rq->r)) {
			st = rank_stmt(rq->r, "SELECT max(block) FROM chunk_sizes");
		} else if (sqlite3_prepare_v2(rq->db, "SELECT max(block) FROM chunk_sizes", -1, &st, NULL) != SQLITE_OK) {
			return 0;
		}
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
			max = sqlite3_column_int64(st, 0);
		if (rank_kept(rq->r))
			rank_stmt_done(rq->r, st);
		else
			sqlite3_finalize(st);
		if (rank_kept(rq->r))
			rq->sizes_st = rank_stmt(rq->r, "SELECT sizes FROM chunk_sizes WHERE block = ?1");
		else if (sqlite3_prepare_v2(rq->db, "SELECT sizes FROM chunk_sizes WHERE block = ?1", -1,
					    &rq->sizes_st, NULL) != SQLITE_OK)
			return 0;
		if (max >= 0 && max < (1 << 24)) {
			rq->sizes_blocks = (size_t)max + 1;
			rq->sizes = huge_alloc(rq->sizes_blocks * 4 * CI_SIZES_BLOCK);
			rq->sizes_state = xcalloc(rq->sizes_blocks, 1);
		}
	}
	if (id < 0 || b >= rq->sizes_blocks)
		return 0;
	if (!rq->sizes_state[b]) {
		rq->sizes_state[b] = 2;
		sqlite3_bind_int64(rq->sizes_st, 1, (sqlite3_int64)b);
		if (sqlite3_step(rq->sizes_st) == SQLITE_ROW &&
		    sqlite3_column_bytes(rq->sizes_st, 0) == 4 * CI_SIZES_BLOCK) {
			memcpy(rq->sizes + 4 * CI_SIZES_BLOCK * b, sqlite3_column_blob(rq->sizes_st, 0),
			       4 * CI_SIZES_BLOCK);
			rq->sizes_state[b] = 1;
		}
		sqlite3_reset(rq->sizes_st);
	}
	if (rq->sizes_state[b] != 1)
		return 0;
	return index_size_get(rq->sizes + 4 * CI_SIZES_BLOCK * b, (size_t)(id % CI_SIZES_BLOCK));
}

static void bm25_of(struct rank_query *rq, const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
		    int nval, sqlite3_value **val)
{
	const double k1 = 1.2, b = 0.75;
	int ncol = api->xColumnCount(fts), nphrase = api->xPhraseCount(fts), ip, ic, io, i;
	struct bm25_avg *avg = api->xGetAuxdata(fts, 0);
	double freq[128] = { 0 }, cw[8], score = 0, dl;
	int ntok = 0;

	if (nphrase > 128 || ncol > 8 || nval < ncol + nphrase) {
		sqlite3_result_error(ctx, "ci_bm25: a weight per column and per phrase, at most 8 columns and 128 phrases", -1);
		return;
	}
	if (!avg) {
		sqlite3_int64 nrow = 0, total = 0;
		avg = sqlite3_malloc(sizeof(*avg));
		if (!avg) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		api->xRowCount(fts, &nrow);
		api->xColumnTotalSize(fts, -1, &total);
		avg->avgdl = nrow > 0 ? (double)total / (double)nrow : 1;
		if (api->xSetAuxdata(fts, avg, sqlite3_free) != SQLITE_OK) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
	/*
	 * Each phrase's instances walked in its own position list: xInstCount
	 * would first merge every phrase's into one sorted array, per row.
	 */
	for (ic = 0; ic < ncol; ic++)
		cw[ic] = sqlite3_value_double(val[ic]);
	for (ip = 0; ip < nphrase; ip++) {
		Fts5PhraseIter it;
		if (api->xPhraseFirst(fts, ip, &it, &ic, &io) != SQLITE_OK)
			continue;
		for (; ic >= 0; api->xPhraseNext(fts, &it, &ic, &io))
			if (ic < ncol)
				freq[ip] += cw[ic];
	}
	dl = chunk_size(rq, api->xRowid(fts));
	if (!dl) {
		api->xColumnSize(fts, -1, &ntok);
		dl = (double)ntok;
	}
	for (i = 0; i < nphrase; i++)
		score += sqlite3_value_double(val[ncol + i]) * (freq[i] * (k1 + 1.0)) /
			 (freq[i] + k1 * (1 - b + b * dl / avg->avgdl));
	sqlite3_result_double(ctx, -score);
}

/* ci_bm25 registered for one query: its user data is the query */
static void ci_bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
		    sqlite3_value **val)
{
	bm25_of(api->xUserData(fts), api, fts, ctx, nval, val);
}

/* ci_bm25 registered once on a connection that keeps its statements: the query of the moment */
static void ci_bm25_slot(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
			 sqlite3_value **val)
{
	bm25_of(*(struct rank_query **)api->xUserData(fts), api, fts, ctx, nval, val);
}

/* a keyword candidate: its BM25 (v->s is its negation), the first one given */
static void set_keyword(struct rank_cand *c, double s)
{
	if (c->sig[SIG_KEYWORD] <= 0)
		c->sig[SIG_KEYWORD] = -s > 0 ? -s : 1e-9;
}

#define KEYWORD_TOP 400

/* The best KEYWORD_TOP chunks for an FTS5 expression, with a weight per phrase. */
static size_t keyword_top(struct rank_query *rq, const char *match, const double *w, size_t nw,
			  struct scored *out)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	size_t n = 0;

	/* the weights bound, not written: one statement for every query of nw phrases (rank_stmt) */
	buf_addstr(&sql, "SELECT rowid, ci_bm25(chunks_fts, 8.0, 2.0, 4.0, 1.0");
	for (size_t i = 0; i < nw; i++)
		buf_addf(&sql, ", ?%zu", i + 2);
	buf_addf(&sql, ") AS s FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY s LIMIT %d", KEYWORD_TOP);
	st = rank_stmt(rq->r, sql.buf);
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	for (size_t i = 0; i < nw; i++)
		sqlite3_bind_double(st, (int)i + 2, w[i]);
	while (n < KEYWORD_TOP && sqlite3_step(st) == SQLITE_ROW) {
		out[n].id = sqlite3_column_int64(st, 0);
		out[n].s = sqlite3_column_double(st, 1);
		n++;
	}
	rank_stmt_done(rq->r, st);
	buf_release(&sql);
	qsort(out, n, sizeof(*out), rank_cmp_scored);
	return n;
}

void rank_fts_phrase(struct buf *q, const char *term)
{
	buf_addch(q, '"');
	for (; *term; term++) {
		if (*term == '"')
			buf_addch(q, '"');
		buf_addch(q, *term);
	}
	buf_addch(q, '"');
}

static void add_phrase(struct buf *q, const char *sep, const char *text)
{
	if (q->len && q->buf[q->len - 1] != '(')
		buf_addstr(q, sep);
	rank_fts_phrase(q, text);
}

/* The keyword query's phrases: the telling terms, each weighed. */
struct kw_query {
	struct buf q;		/* "t1" OR "t2" ... */
	size_t nphrase;		/* terms in it */
	size_t nessential;	/* of them, the rare ones */
	double w[64];		/* each phrase's weight */
	char common[64];	/* each phrase is a common term */
	double common_bound;	/* the most the common terms can score together */
};

static void kw_phrases(struct rank_query *rq, long total_chunks, struct kw_query *kq)
{
	const double k1 = 1.2;
	size_t i;

	for (i = 0; i < rq->terms_nr && kq->nphrase < 64; i++) {
		/*
		 * A term weighs its weight relative to the lightest term (1 to 3)
		 * times its idf, computed from its document count as bm25() does.
		 */
		int reps = (int)(rq->terms[i].weight / (rq->terms_nr ? rq->terms[rq->terms_nr - 1].weight : 1) + 0.5);
		double idf = log((total_chunks - rq->terms[i].df + 0.5) / (rq->terms[i].df + 0.5));
		size_t n = kq->nphrase;
		if (reps < 1)
			reps = 1;
		if (reps > 3)
			reps = 3;
		if (idf <= 0)
			idf = 1e-6;
		kq->w[n] = reps * idf;
		/* a term in more than one chunk in 50 is common */
		kq->common[n] = rq->terms[i].df > total_chunks / 50;
		if (kq->common[n])
			kq->common_bound += kq->w[n] * (k1 + 1.0);
		else
			kq->nessential++;
		add_phrase(&kq->q, " OR ", rq->terms[i].text);
		kq->nphrase++;
	}
}

/*
 * MaxScore: a chunk holding none of the rarer terms scores at most the sum
 * of the common terms' bounds, w (k1 + 1).  Ask first for the chunks holding
 * a rare term, scored on every term:
 *   (rare OR ...) AND (rare OR ... OR common OR ...)
 * the first group's phrases weighing nothing.  When the last of the best
 * KEYWORD_TOP already beats that bound, nothing outside could enter them,
 * and the answer is the one the full OR query gives without walking the
 * common terms' long doclists: then 1, else 0.
 */
static int kw_rare_first(struct rank_query *rq, const struct kw_query *kq, struct scored *top, size_t *ntop)
{
	struct buf q2 = BUF_INIT;
	double w2[128];
	size_t n2 = 0, i;
	int done = 0;

	buf_addch(&q2, '(');
	for (i = 0; i < kq->nphrase; i++)
		if (!kq->common[i]) {
			add_phrase(&q2, " OR ", rq->terms[i].text);
			w2[n2++] = 0;
		}
	buf_addstr(&q2, ") AND (");
	for (i = 0; i < kq->nphrase; i++) {
		add_phrase(&q2, " OR ", rq->terms[i].text);
		w2[n2++] = kq->w[i];
	}
	buf_addch(&q2, ')');
	*ntop = keyword_top(rq, q2.buf, w2, n2, top);
	rank_tr(rq, "kw-rare");
	if (*ntop == KEYWORD_TOP && -top[*ntop - 1].s > kq->common_bound)
		done = 1;
	buf_release(&q2);
	return done;
}

/*
 * Too few chunks hold a rare term (or there is none): add the chunks that
 * hold every common term, scored on those alone, which is their whole score
 * when they hold no rare term.  What is left out holds some of the common
 * terms and none of the rare ones: it would rank below both.  The full OR
 * query would score every chunk holding any common term ("struct sk_buff":
 * 90 ms on 137k chunks).  Only for a short query: in a long text the chunks
 * with a few of its many common words matter (on the 47-issue evaluation
 * this cut hybrid R@5 from 0.851 to 0.766).  1 when that answers, else 0.
 */
static int kw_all_common(struct rank_query *rq, const struct kw_query *kq, struct scored *top, size_t *ntop)
{
	struct buf q3 = BUF_INIT;
	struct scored *all = xmalloc(KEYWORD_TOP * sizeof(*all));
	double w3[64];
	size_t n3 = 0, na, i, j, k;
	int done = 0;

	for (i = 0; i < kq->nphrase; i++)
		if (kq->common[i]) {
			add_phrase(&q3, " AND ", rq->terms[i].text);
			w3[n3++] = kq->w[i];
		}
	na = keyword_top(rq, q3.buf, w3, n3, all);
	/* the rare-term chunks keep their score on every term */
	for (j = 0; j < na && *ntop < KEYWORD_TOP; j++) {
		for (k = 0; k < *ntop && top[k].id != all[j].id; k++)
			;
		if (k == *ntop)
			top[(*ntop)++] = all[j];
	}
	qsort(top, *ntop, sizeof(*top), rank_cmp_scored);
	if (*ntop >= KEYWORD_TOP / 4)
		done = 1;
	free(all);
	buf_release(&q3);
	return done;
}

/*
 * A chunk's keyword score mixes its own BM25 with its file's: the sum of the
 * file's best three chunks, so a file that answers many of the query's words
 * across its chunks is not lost behind one lucky chunk.  Then the ranks.
 */
static void kw_file_mix(struct rank_query *rq)
{
	size_t i, k, k2, n = rq->cands_nr;
	struct rank_cand **v;
	double best_chunk = 0, best_file = 0;
	double *file_sum = xcalloc(n + 1, sizeof(double));

	/* each file's best three, over the candidates in the order of paths */
	v = xmalloc((n + 1) * sizeof(*v));
	for (i = 0; i < n; i++)
		v[i] = &rq->cands[i];
	qsort(v, n, sizeof(*v), rank_cmp_cand_path);
	for (i = 0; i < n; i = k) {
		double top3[3] = { 0, 0, 0 };
		for (k = i; k < n && !strcmp(v[k]->path, v[i]->path); k++) {
			double x = v[k]->sig[SIG_KEYWORD];
			if (x > best_chunk)
				best_chunk = x;
			if (x > top3[0]) { top3[2] = top3[1]; top3[1] = top3[0]; top3[0] = x; }
			else if (x > top3[1]) { top3[2] = top3[1]; top3[1] = x; }
			else if (x > top3[2]) top3[2] = x;
		}
		for (k2 = i; k2 < k; k2++)
			file_sum[v[k2] - rq->cands] = top3[0] + top3[1] + top3[2];
		if (top3[0] + top3[1] + top3[2] > best_file)
			best_file = top3[0] + top3[1] + top3[2];
	}
	free(v);
	for (i = 0; i < n; i++)
		if (rq->cands[i].sig[SIG_KEYWORD] > 0)
			rq->cands[i].sig[SIG_KEYWORD] =
				0.5 * rq->cands[i].sig[SIG_KEYWORD] / (best_chunk > 0 ? best_chunk : 1) +
				0.5 * file_sum[i] / (best_file > 0 ? best_file : 1);
	free(file_sum);
	v = xmalloc((n + 1) * sizeof(*v));
	for (i = k2 = 0; i < n; i++)
		if (rq->cands[i].sig[SIG_KEYWORD] > 0)
			v[k2++] = &rq->cands[i];
	rank_by_sig(v, k2, SIG_KEYWORD);
	free(v);
}

void rank_signal_keyword(struct rank_query *rq, long total_chunks)
{
	struct kw_query kq;
	struct scored *top;
	size_t ntop = 0;
	int done = 0;
	fts5_api *api;
	struct buf empty = BUF_INIT;
	struct rank_query **slot;
	int first;

	memset(&kq, 0, sizeof(kq));
	kq.q = empty;
	kw_phrases(rq, total_chunks, &kq);
	if (!kq.q.len) {
		buf_release(&kq.q);
		return;
	}
	/*
	 * The query is the function's user data: each query registers it anew,
	 * but where the connection keeps its statements (rank_stmt), which hold
	 * the function registered when they were prepared: once, with a slot
	 * that names the query of the moment.
	 */
	slot = rank_stmt_bm25_slot(rq->r, rq, &first);
	api = slot && !first ? NULL : index_fts5_api(rq->db);	/* registered already: not needed */
	if ((!slot || first) && (!api ||
		     (slot ? api->xCreateFunction(api, "ci_bm25", slot, ci_bm25_slot, NULL)
			   : api->xCreateFunction(api, "ci_bm25", rq, ci_bm25, NULL)) != SQLITE_OK))
		die("index: cannot register ci_bm25: %s", sqlite3_errmsg(rq->db));
	top = xmalloc(KEYWORD_TOP * sizeof(*top));
	if (kq.nessential && kq.nessential < kq.nphrase)
		done = kw_rare_first(rq, &kq, top, &ntop);
	if (!done && kq.nphrase - kq.nessential >= 2 && kq.nphrase <= 4)
		done = kw_all_common(rq, &kq, top, &ntop);
	rank_tr(rq, "kw-common");
	if (!done)
		ntop = keyword_top(rq, kq.q.buf, kq.w, kq.nphrase, top);
	rank_tr(rq, "kw-full");
	rank_lookup_cands(rq, top, ntop, set_keyword);
	rank_tr(rq, "kw-cands");
	kw_file_mix(rq);
	buf_release(&kq.q);
	free(top);
}
