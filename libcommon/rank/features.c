/*
 * rank/features.c: each candidate file's features for the learned fusion
 * (model.h) and the --features dump of them.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <ctype.h>
#include <math.h>
#include "index/index.h"
#include "rank/model.h"
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "embed/vec.h"

/* HTML or a style sheet: the languages ci indexes as markup (parse/lang.c) */
static int is_markup(const char *lang)
{
	return lang && (!strcmp(lang, "html") || !strcmp(lang, "css"));
}

/* a file of code: a language, neither a document, a configuration nor markup */
static int is_code(const struct rank_cand *b)
{
	return b->lang && !b->is_doc && !is_markup(b->lang);
}

/*
 * Coverage: of the weight of the query's telling terms (weight x idf, query.c),
 * the share a file of code holds in any of its chunks or in its path.  The
 * keyword signal scores one chunk; a change often touches the file that holds
 * the query's words across several of its functions.  A document, a
 * configuration or markup file (is_markup) gets 0: a manual page in HTML holds
 * every word of the project.  A term's chunks are read from its doclist, the
 * rarest terms first, until COVER_ROWS rows: a term past that (common in a
 * large index) counts neither for nor against a file.
 *
 * The same doclists give each chunk of those files its own coverage (the
 * share its text holds, its path aside): rq->cover, for the order of a file's
 * chunks (chunks.c), where a commit's function often holds more of the
 * query's words than the function the keyword signal ranks first.
 */
#define COVER_ROWS 40000
#define COVER_TERMS 32

static int cmp_cover_chunk(const void *a, const void *b)
{
	const struct rank_cover *x = a, *y = b;

	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

double rank_chunk_coverage(const struct rank_query *rq, sqlite3_int64 id)
{
	struct rank_cover key = { .chunk = id };
	const struct rank_cover *c = rq->cover_nr ? bsearch(&key, rq->cover, rq->cover_nr, sizeof(*rq->cover),
							    cmp_cover_chunk) : NULL;

	return c ? c->share : 0;
}

static uint32_t cover_blob(sqlite3_int64 **ids, size_t *nr, size_t *alloc, sqlite3_int64 id)
{
	for (size_t i = 0; i < *nr; i++)
		if ((*ids)[i] == id)
			return (uint32_t)i;
	ALLOC_GROW(*ids, *nr + 1, *alloc);
	(*ids)[*nr] = id;
	return (uint32_t)(*nr)++;
}

/* a statement stepped to its end: anything else is a damaged index */
static void cover_done(struct rank_query *rq, int step)
{
	if (step != SQLITE_DONE)
		die("index: %s", sqlite3_errmsg(rq->db));
}

struct path_terms {
	const struct rank_query *rq;
	const size_t *order;
	size_t n;
	uint32_t mask;
};

static void path_term(const char *term, int len, void *ctx)
{
	struct path_terms *pt = ctx;

	for (size_t k = 0; k < pt->n; k++) {
		const char *t = pt->rq->terms[pt->order[k]].text;
		if ((int)strlen(t) == len && !memcmp(t, term, (size_t)len))
			pt->mask |= 1u << k;
	}
}

static int cmp_df(const void *a, const void *b, void *arg)
{
	const struct rank_term *t = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (t[i].df != t[j].df)
		return t[i].df < t[j].df ? -1 : 1;
	return i < j ? -1 : i > j;
}

static void file_coverage(struct rank_query *rq, struct rank_file_feat *f, size_t f_nr)
{
	struct rank_cover *ch = NULL;
	sqlite3_int64 *blobs = NULL;
	size_t order[COVER_TERMS], n = 0, ch_nr = 0, ch_alloc = 0, blobs_nr = 0, blobs_alloc = 0, g, k;
	uint32_t *fblob, *mask;
	double total = 0;
	long rows = 0;
	sqlite3_stmt *st;
	int step;

	free(rq->cover);
	rq->cover = NULL;
	rq->cover_nr = 0;
	if (!rq->used[SIG_KEYWORD] || !rq->terms_nr)
		return;
	/* the terms read, rarest first, while their doclists stay within COVER_ROWS */
	for (k = 0; k < rq->terms_nr && k < COVER_TERMS; k++)
		order[k] = k;
	qsort_r(order, k, sizeof(*order), cmp_df, rq->terms);
	for (n = 0; n < k && rows + rq->terms[order[n]].df <= COVER_ROWS; n++) {
		rows += rq->terms[order[n]].df;
		total += rq->terms[order[n]].weight;
	}
	if (!n || total <= 0)
		return;
	/* the chunks of the blobs of the files of code, by chunk id */
	fblob = xcalloc(f_nr, sizeof(*fblob));
	for (g = 0; g < f_nr; g++)
		if (f[g].rank && is_code(f[g].best))
			fblob[g] = cover_blob(&blobs, &blobs_nr, &blobs_alloc, f[g].best->blob);
	if (!blobs_nr) {	/* no file of code: nothing to look up */
		free(fblob);
		return;
	}
	mask = xcalloc(blobs_nr, sizeof(*mask));
	st = rank_stmt(rq->r, "SELECT id FROM chunks WHERE blob_id = ?1");
	for (size_t b = 0; b < blobs_nr; b++) {
		sqlite3_bind_int64(st, 1, blobs[b]);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			ALLOC_GROW(ch, ch_nr + 1, ch_alloc);
			ch[ch_nr].chunk = sqlite3_column_int64(st, 0);
			ch[ch_nr].share = 0;
			ch[ch_nr].mask = 0;
			ch[ch_nr++].blob = (uint32_t)b;
		}
		cover_done(rq, step);
		sqlite3_reset(st);
	}
	rank_stmt_done(rq->r, st);
	qsort(ch, ch_nr, sizeof(*ch), cmp_cover_chunk);
	/* each term's chunks */
	st = rank_stmt(rq->r, "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?1");
	for (k = 0; k < n; k++) {
		struct buf phrase = BUF_INIT;
		rank_fts_phrase(&phrase, rq->terms[order[k]].text);
		sqlite3_bind_text(st, 1, phrase.buf, -1, SQLITE_TRANSIENT);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			struct rank_cover key = { .chunk = sqlite3_column_int64(st, 0) };
			struct rank_cover *c = ch_nr ? bsearch(&key, ch, ch_nr, sizeof(*ch), cmp_cover_chunk) : NULL;
			if (c) {
				mask[c->blob] |= 1u << k;
				c->mask |= 1u << k;
			}
		}
		cover_done(rq, step);
		sqlite3_reset(st);
		buf_release(&phrase);
	}
	rank_stmt_done(rq->r, st);
	/* each chunk's own share */
	for (size_t i = 0; i < ch_nr; i++) {
		double got = 0;
		for (k = 0; k < n; k++)
			if (ch[i].mask & (1u << k))
				got += rq->terms[order[k]].weight;
		ch[i].share = got / total;
	}
	/* and each file's path */
	for (g = 0; g < f_nr; g++) {
		struct path_terms pt = { rq, order, n, 0 };
		double got = 0;
		if (!f[g].rank || !is_code(f[g].best))
			continue;
		index_terms(f[g].best->path, strlen(f[g].best->path), path_term, &pt);
		pt.mask |= mask[fblob[g]];
		for (k = 0; k < n; k++)
			if (pt.mask & (1u << k))
				got += rq->terms[order[k]].weight;
		f[g].x[RF_COVERAGE] = got / total;
	}
	free(fblob);
	free(mask);
	free(blobs);
	rq->cover = ch;		/* kept, by chunk id, for rank_chunk_coverage() */
	rq->cover_nr = ch_nr;
	rank_tr(rq, "coverage");
}

static int cmp_file_best(const void *a, const void *b)
{
	const struct rank_file_feat *x = a, *y = b;

	return x->best < y->best ? -1 : x->best > y->best;
}

int rank_in_scope(const struct rank_query *rq, const struct rank_cand *x)
{
	return !((x->is_test && !rq->scope_tests) || (!x->is_test && !rq->scope_impl) ||
		 (x->is_doc == 1 && !rq->scope_docs) ||
		 (x->is_doc == 2 && !rq->scope_docs && rq->intent != INTENT_CONFIG));
}

long long rank_index_files(struct rank_query *rq)
{
	if (rq->index_files < 0) {
		if (rq->meta) {
			rq->index_files = (long long)rq->meta->head->nfiles;
		} else {
			sqlite3_stmt *st = rank_stmt(rq->r, "SELECT count(*) FROM files");

			if (sqlite3_step(st) != SQLITE_ROW)
				die("index: cannot count its files: %s", sqlite3_errmsg(rq->db));
			rq->index_files = sqlite3_column_int64(st, 0);
			rank_stmt_done(rq->r, st);
		}
	}
	return rq->index_files;
}

int rank_write_features(struct rank_query *rq, const struct rank_file_feat *f, size_t nr)
{
	FILE *fp = fopen(rq->o->features, "w");
	struct buf line = BUF_INIT;
	long long files = rank_index_files(rq);
	int ret = 0;

	if (!fp)
		return error_errno("cannot open '%s'", rq->o->features);
	for (size_t i = 0; i < nr; i++) {
		if (!f[i].rank)
			continue;
		buf_reset(&line);
		nd_begin(&line, "features");
		nd_str(&line, "path", f[i].best->path);
		nd_int(&line, "rank", f[i].rank);
		nd_int(&line, "index_files", files);
		nd_key(&line, "x");
		buf_addch(&line, '{');
		for (int k = 0; k < RF_NR; k++)
			buf_addf(&line, "%s\"%s\":%.6g", k ? "," : "", rank_feat_name[k], f[i].x[k]);
		buf_addch(&line, '}');
		nd_end(&line);
		fwrite(line.buf, 1, line.len, fp);
	}
	if (ferror(fp) | fclose(fp))
		ret = error_errno("cannot write '%s'", rq->o->features);
	buf_release(&line);
	return ret;
}

/* The files of the candidates v (in the by-path order), each with its best chunk. */
static struct rank_file_feat *file_groups(struct rank_cand **v, size_t n, size_t *nr)
{
	struct rank_file_feat *f = NULL;
	size_t f_nr = 0, f_alloc = 0, g, k;

	for (g = 0; g < n; g = k) {
		for (k = g + 1; k < n && !strcmp(v[k]->path, v[g]->path); k++)
			;
		ALLOC_GROW(f, f_nr + 1, f_alloc);
		memset(&f[f_nr], 0, sizeof(*f));
		f[f_nr].from = g;
		f[f_nr].to = k;
		f[f_nr].best = v[g];
		for (size_t j = g + 1; j < k; j++)	/* the first of equals in cands' order */
			if (v[j]->fused == v[g]->fused && v[j] < f[f_nr].best)
				f[f_nr].best = v[j];
		f_nr++;
	}
	qsort(f, f_nr, sizeof(*f), cmp_file_best);
	*nr = f_nr;
	return f;
}

/* The features of file ff, the r-th in scope (v: the candidates by path). */
static void file_features(const struct rank_query *rq, struct rank_file_feat *ff, struct rank_cand **v, int r,
			  const struct rank_qwords *qw, size_t words)
{
	struct rank_cand *b = ff->best;
	long last = 0;
	double *x = ff->x;

	ff->rank = r;
	for (int s = 0; s < SIG_MAX; s++) {
		x[RF_SIG + s] = b->sig[s];
		x[RF_RR + s] = b->rank[s] ? 1.0 / b->rank[s] : 0;
	}
	for (size_t j = ff->from; j < ff->to; j++) {
		for (int s = 0; s < SIG_MAX; s++)
			if (v[j]->sig[s] > x[RF_MAX_SIG + s])
				x[RF_MAX_SIG + s] = v[j]->sig[s];
		if (v[j]->end > last)
			last = v[j]->end;
	}
	x[RF_FUSED] = b->fused / rq->max_fused;
	x[RF_FUSED_RR] = 1.0 / r;
	x[RF_FILE_CHUNKS] = log1p((double)(ff->to - ff->from));
	if (rank_frame_names(rq, b->path))
		x[RF_FRAME] = 1;
	rank_path_features(b->path, x);
	x[RF_TEST] = b->is_test;
	x[RF_DOC] = b->is_doc == 1;
	x[RF_CONFIG] = b->is_doc == 2;
	x[RF_MARKUP] = is_markup(b->lang);
	x[RF_LINES] = log1p((double)last);
	rank_query_names(qw, b->path, x);
	x[RF_INTENT_ISSUE] = rq->intent == INTENT_ISSUE;
	x[RF_INTENT_NAME] = rq->intent == INTENT_NAME;
	x[RF_Q_WORDS] = log1p((double)words);
}

/* The chunks of a file whose names names_cosine reads, at most */
#define NAMES_MAX 400

/*
 * The distinct names of blob's chunks (its functions, classes, sections) in
 * line order, one space between two, in sb (empty without any).  0, or -1
 * after a message (the index cannot be read).
 */
static int file_names(const struct rank_query *rq, sqlite3_stmt *st, sqlite3_int64 blob, struct buf *sb)
{
	size_t at;
	int step;

	buf_reset(sb);
	sqlite3_bind_int64(st, 1, blob);
	sqlite3_bind_int(st, 2, NAMES_MAX);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (!name || !*name)
			continue;
		for (at = 0; at < sb->len; at += strlen(sb->buf + at) + 1)	/* NUL-separated while read */
			if (!strcmp(sb->buf + at, name))
				break;
		if (at >= sb->len)
			buf_add(sb, name, strlen(name) + 1);
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return error("index: %s", sqlite3_errmsg(rq->db));
	for (at = 0; at + 1 < sb->len; at++)
		if (!sb->buf[at])
			sb->buf[at] = ' ';
	return 0;
}

/*
 * A file's path says what it is about, and the query's words can mean it
 * without being its words ("token" and jwt/api_jws.py).  Both embedded as
 * ci-embed embeds a query: the path's words cut at '/', '_', '.' and case
 * (src/_pytest/pathlib.py: src, pytest, pathlib, py).  So do the names it
 * defines (names_cosine: all of them as one text).
 */
int rank_code_cosines(const struct rank_query *rq, struct rank_file_feat *f, size_t nr, int names)
{
	struct embed_model *m;
	struct embed_work *w;
	const int32_t *ids;
	float *qv, *pv;
	size_t n, dim;
	sqlite3_stmt *st = NULL;
	struct buf sb = BUF_INIT;
	int ret = 0;

	if (rq->o->path_model)
		m = rq->o->path_model;
	else if (embed_model_open(&m, embed_model_resolve("ci-code")) < 0)
		return error("path_cosine, names_cosine: cannot read the ci-code model");
	w = embed_work_new(m);
	dim = embed_dim(m);
	qv = xmalloc(dim * sizeof(*qv));
	pv = xmalloc(dim * sizeof(*pv));
	ids = embed_tokenize(w, rq->text, strlen(rq->text), embed_max_tokens(m), &n);
	embed_forward(w, &ids, &n, 1, qv);
	if (names)
		st = rank_stmt(rq->r, "SELECT name FROM chunks WHERE blob_id = ?1 ORDER BY start_line LIMIT ?2");
	for (size_t g = 0; g < nr && !ret; g++) {
		if (!f[g].rank)
			continue;
		f[g].x[RF_PATH_COSINE] = rank_text_cosine(w, m, qv, pv, f[g].best->path);
		if (names && !(ret = file_names(rq, st, f[g].best->blob, &sb)) && sb.len)
			f[g].x[RF_NAMES_COSINE] = rank_text_cosine(w, m, qv, pv, sb.buf);
	}
	if (st)
		rank_stmt_done(rq->r, st);
	buf_release(&sb);
	free(qv);
	free(pv);
	embed_work_free(w);
	if (m != rq->o->path_model)
		embed_model_close(m);
	rank_tr(rq, "ci-code cosines");
	return ret;
}

struct rank_file_feat *rank_file_features(struct rank_query *rq, struct rank_cand ***vp, size_t *nr)
{
	const char *q = rq->text;
	struct rank_cand **v;
	struct rank_file_feat *f;
	size_t f_nr, g, words = 0;
	struct rank_qwords qw;
	int r = 0;

	v = xmalloc(rq->cands_nr * sizeof(*v));
	for (g = 0; g < rq->cands_nr; g++)
		v[g] = &rq->cands[g];
	qsort(v, rq->cands_nr, sizeof(*v), rank_cmp_path_fused);
	f = file_groups(v, rq->cands_nr, &f_nr);
	for (const char *p = q; *p; p++)
		if (!isspace((unsigned char)*p) && (p == q || isspace((unsigned char)p[-1])))
			words++;
	rank_qwords_init(&qw, q);
	for (g = 0; g < f_nr && r < RANK_FEAT_FILES; g++)
		if (rank_in_scope(rq, f[g].best))
			file_features(rq, &f[g], v, ++r, &qw, words);
	rank_qwords_release(&qw);
	file_coverage(rq, f, f_nr);
	*vp = v;
	*nr = f_nr;
	return f;
}
