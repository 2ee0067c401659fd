/*
 * rank/fusion.c: the fusion of the signals: weighted reciprocal rank by
 * the query's intent, each file's next best chunks as evidence, then the
 * learned model's order of the files (model.h, features.c).
 */
#include "core/common.h"
#include "rank/signal.h"

#include <math.h>
#include "rank/model.h"

int rank_cmp_fused(const void *a, const void *b)
{
	const struct rank_cand *x = a, *y = b;
	int r;

	if (x->fused != y->fused)
		return x->fused > y->fused ? -1 : 1;
	if ((r = strcmp(x->path, y->path)))
		return r;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void fuse_rrf(struct rank_query *rq)
{
	struct rank_cand **v = xmalloc((rq->cands_nr + 1) * sizeof(*v));
	size_t i;

	for (int s = 0; s < SIG_MAX; s++) {
		size_t n = 0;
		if (!rq->used[s] || s == SIG_KEYWORD)
			continue;
		for (i = 0; i < rq->cands_nr; i++)
			if (rq->cands[i].sig[s] > 0)
				v[n++] = &rq->cands[i];
		rank_by_sig(v, n, s);
	}
	for (i = 0; i < rq->cands_nr; i++) {
		double f = 0;
		for (int s = 0; s < SIG_MAX; s++)
			if (rq->used[s] && rq->cands[i].rank[s])
				f += rq->w[s] / (60.0 + rq->cands[i].rank[s]);
		rq->cands[i].fused = f;
	}
	free(v);
}

/*
 * A file is as relevant as its best chunks together: its best chunk carries the
 * evidence of the file's next FILE_AGG_NEXT chunks as well (b, the sum of their
 * fused scores), filling part of what it lacks (below), so a file with several
 * relevant chunks passes one with a single lucky chunk.  On the 47 issues of
 * bench/eval: hybrid MRR 0.652 -> 0.677, R@5 0.777 -> 0.819, R@10 0.862 ->
 * 0.894; keyword MRR 0.626 -> 0.651.  Weights 0.5-4 and 1-10 chunks were tried
 * (a plain sum of the 4 best did as well, but then a score is not at most 1).
 */
#define FILE_AGG_WEIGHT 2.0
#define FILE_AGG_NEXT 3

int rank_cmp_path_fused(const void *a, const void *b)
{
	const struct rank_cand *x = *(const struct rank_cand *const *)a, *y = *(const struct rank_cand *const *)b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (x->fused != y->fused)
		return x->fused < y->fused ? 1 : -1;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static void aggregate_files(struct rank_query *rq, double w, int next, double max_fused)
{
	struct rank_cand **v;
	size_t i, g, k;

	if (w <= 0 || rq->cands_nr < 2 || max_fused <= 0)
		return;
	v = xmalloc(rq->cands_nr * sizeof(*v));
	for (i = 0; i < rq->cands_nr; i++)
		v[i] = &rq->cands[i];
	qsort(v, rq->cands_nr, sizeof(*v), rank_cmp_path_fused);
	for (g = 0; g < rq->cands_nr; g = k) {
		double bonus = 0;
		for (k = g + 1; k < rq->cands_nr && !strcmp(v[k]->path, v[g]->path); k++)
			if ((int)(k - g) <= next && v[k]->fused > 0) {
				bonus += v[k]->fused;
				v[g]->file_chunks++;
			}
		/*
		 * In the 0-1 scale of the score: the file's evidence fills part of
		 * what its best chunk lacks, s + (1 - s)(1 - e^(-w b)), so a score
		 * stays at most 1 and orders the hits.
		 */
		{
			double s0 = v[g]->fused / max_fused, b = bonus / max_fused;
			double f = s0 + (1 - s0) * (1 - exp(-w * b));
			v[g]->file_bonus = (f - s0) * max_fused;
			v[g]->fused = f * max_fused;
		}
	}
	free(v);
}

/*
 * The hand-set fusion: each signal's ranks weighed by the query's intent,
 * each file's next chunks as evidence, the candidates best first.
 */
void rank_query_fuse(struct rank_query *rq)
{
	double wsum = 0;
	size_t i, impl_hits = 0;

	fuse_rrf(rq);
	rank_tr(rq, "fuse");
	for (int s = 0; s < SIG_MAX; s++)
		if (rq->used[s])
			wsum += rq->w[s];
	aggregate_files(rq, FILE_AGG_WEIGHT, FILE_AGG_NEXT, wsum / 61.0);
	if (rq->cands_nr)
		qsort(rq->cands, rq->cands_nr, sizeof(*rq->cands), rank_cmp_fused);
	rq->max_fused = wsum / 61.0;
	/* a query not about tests is not answered from tests, unless only tests answer */
	for (i = 0; i < rq->cands_nr; i++)
		impl_hits += !rq->cands[i].is_test && !rq->cands[i].is_doc;
	if (!impl_hits && !rq->o->scope)
		rq->scope_tests = rq->scope_docs = 1;
}

/*
 * The model: read once already, or --model's file, else the compiled-in one,
 * its member for an index with vectors when vectors is non-zero: 0, or -1
 * after a message.
 */
static int load_model(const struct rank_opts *o, struct rank_model *m, int which)
{
	_Static_assert(sizeof(o->model_parsed) / sizeof(o->model_parsed[0]) == RANK_MEMBERS,
		       "rank_opts.model_parsed: one a member");
	char *text;
	size_t len;
	int ret;

	which &= RANK_MEMBERS - 1;
	if (o->model_parsed[which]) {
		*m = *o->model_parsed[which];
		return 0;
	}
	if (!o->model) {
		if (!o->model_json)
			return error("the learned fusion has no model: use --model or --fusion rrf");
		return rank_model_parse_for(m, o->model_json, strlen(o->model_json), "share/rank/model.json",
					    which);
	}
	if (read_file(o->model, &text, &len))
		return -1;
	ret = rank_model_parse_for(m, text, len, o->model, which);
	free(text);
	return ret;
}

/*
 * On the candidates sorted by the hand-set fusion: the features of the
 * RANK_FEAT_FILES best files in scope (written to --features), and with
 * --fusion learned the files ordered by the model's probability instead: a
 * file's chunks keep their order within it, its best chunk scores the
 * probability (a file past the first RANK_FEAT_FILES, or out of scope, scores
 * below 0.001).  With the semantic signal in the query, the model's
 * with_vectors member (in semantic mode its "semantic" member, when it has
 * one); rq->confidence the calibration of the top file's logit.
 */
int rank_model_load(const struct rank_opts *o, struct rank_model *m, int which)
{
	return load_model(o, m, which);
}

int rank_model_reads_semantic(const struct rank_opts *o)
{
	static const int members[] = { RANK_MEMBER_VECTORS, RANK_MEMBER_VECTORS | RANK_MEMBER_HISTORY };

	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		struct rank_model m;

		if (load_model(o, &m, members[i]))
			return -1;
		if (m.weight[RF_SIG + SIG_SEMANTIC] != 0 || m.weight[RF_RR + SIG_SEMANTIC] != 0 ||
		    m.weight[RF_MAX_SIG + SIG_SEMANTIC] != 0)
			return 1;
	}
	return 0;
}

/*
 * The calibrated confidence of the files ranked (f_nr of f; those in scope
 * have a rank and their logit z): the top file is the one of the highest logit (of equals, the
 * first by the hand-set fusion), as scripts/train-rank takes it; the margin
 * its logit less the next file's; the files of the index counted only when
 * the calibration weighs them.  -1 without a calibration or a file.
 */
static double top_confidence(struct rank_query *rq, const struct rank_model *m,
			     const struct rank_file_feat *f, size_t f_nr)
{
	const struct rank_file_feat *top = NULL;
	double z1 = -INFINITY, z2 = -INFINITY;

	for (size_t g = 0; g < f_nr; g++) {
		double z;

		if (!f[g].rank)
			continue;
		z = f[g].z;
		if (!top || z > z1 || (z == z1 && f[g].rank < top->rank)) {
			if (top)
				z2 = z1;
			top = &f[g];
			z1 = z;
		} else if (z > z2) {
			z2 = z;
		}
	}
	if (!top || !isfinite(z1))
		return -1;
	return rank_model_confidence(m, z1, isfinite(z2) ? z1 - z2 : RANK_CAL_MARGIN_CAP,
				     m->cal_files_w != 0 ? (double)rank_index_files(rq) : 1);
}

int rank_learned_fusion(struct rank_query *rq)
{
	double max_fused = rq->max_fused;
	struct rank_cand **v;
	struct rank_file_feat *f;
	struct rank_model m;
	size_t f_nr, g;
	int ret = 0;

	if (!rq->cands_nr || max_fused <= 0)
		return 0;
	f = rank_file_features(rq, &v, &f_nr);
	if (rq->o->features && (rank_code_cosines(rq, f, f_nr, 1) || rank_write_features(rq, f, f_nr))) {
		ret = -1;
		goto done;
	}
	if (!rq->o->learned ||
	    (ret = load_model(rq->o, &m, (rq->used[SIG_SEMANTIC] ? RANK_MEMBER_VECTORS : 0) |
					  (rq->used[SIG_CHANGE] ? RANK_MEMBER_HISTORY : 0) |
					  (!strcmp(rq->o->mode, "semantic") ? RANK_MEMBER_SEMANTIC : 0))))
		goto done;
	/* the features that cost a model: read when the member weighs them */
	if (!rq->o->features && rank_model_cosines(&m) &&
	    rank_code_cosines(rq, f, f_nr, m.weight[RF_NAMES_COSINE] != 0)) {
		ret = -1;
		goto done;
	}
	for (g = 0; g < f_nr; g++) {
		struct rank_file_feat *ff = &f[g];
		double top = ff->best->fused;
		ff->z = ff->rank ? rank_model_logit(&m, ff->x) : -INFINITY;
		ff->p = ff->rank ? rank_logistic(ff->z) : 0;
		for (size_t j = ff->from; j < ff->to; j++) {
			double rel = top > 0 ? v[j]->fused / top : 0;
			v[j]->rrf_score = v[j]->fused / max_fused;
			v[j]->learned_p = ff->p;
			if (ff->rank)
				v[j]->fused = max_fused * (0.001 + 0.999 * ff->p) * rel;
			else
				v[j]->fused = 0.001 * v[j]->fused;
			v[j]->file_bonus = 0;
		}
	}
	qsort(rq->cands, rq->cands_nr, sizeof(*rq->cands), rank_cmp_fused);
	if (m.chunk.on) {
		free(rq->chunk_model);
		rq->chunk_model = xmalloc(sizeof(*rq->chunk_model));
		*rq->chunk_model = m.chunk;
	}
	rq->confidence = top_confidence(rq, &m, f, f_nr);
done:
	free(f);
	free(v);
	return ret;
}
