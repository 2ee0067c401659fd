/*
 * rank/features.c: each candidate file's features for the learned fusion
 * (model.h) and the --features dump of them.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <ctype.h>
#include <math.h>
#include "rank/model.h"

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

int rank_write_features(const struct rank_query *rq, const struct rank_file_feat *f, size_t nr)
{
	FILE *fp = fopen(rq->o->features, "w");
	struct buf line = BUF_INIT;
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
	x[RF_LINES] = log1p((double)last);
	rank_query_names(qw, b->path, x);
	x[RF_INTENT_ISSUE] = rq->intent == INTENT_ISSUE;
	x[RF_INTENT_NAME] = rq->intent == INTENT_NAME;
	x[RF_Q_WORDS] = log1p((double)words);
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
	*vp = v;
	*nr = f_nr;
	return f;
}
