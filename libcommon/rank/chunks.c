/*
 * rank/chunks.c: the order of the chunks within each file: which function
 * of a file the answer shows first.
 *
 * The fusion orders files well, but within a file its order is poor for
 * naming the function that answers: the file-level signals (path,
 * structure, change) give every chunk of a file the same value, so their
 * ranks fall to the first chunks by id (the module preamble, the class
 * header), and a class header or a preamble that repeats the words of the
 * query outranks the method that does the work.  Here each chunk of a file
 * is scored by its own evidence only:
 *
 *   e = sum over keyword, symbol, semantic of w_s / (60 + rank_s)
 *       x HEADER_FACTOR for a class header or a module preamble, when the
 *         file has a candidate function or method
 *
 * and the file's chunks take its fused scores in that order: the file's
 * best score goes to its best chunk by e, the next to the next, so the
 * files' order (and every file-level number) is unchanged.  A query that
 * names a function is carried by the symbol signal: a further boost for it
 * did not help (below).
 */
#include "core/common.h"
#include "rank/signal.h"

/*
 * Chosen on the 191 training queries of bench/eval/manifest.tsv (hybrid,
 * indexes without vectors), function Acc@1 / Acc@5 of bench/eval/stats.py
 * against the fused order: factor 1 +0.024 / +0.006, 0.75 +0.024 / +0.060,
 * 0.5 (and 0.25, 0.1) +0.065 / +0.060; a boost x2 for a chunk whose name
 * the query holds as an identifier lowered 0.5's to +0.054 / +0.048 (x1.3:
 * +0.054 / +0.054), and on the 102 validation queries +0.056 / +0.011
 * against +0.067 / 0 without it: left out.  share/rank/MODEL.md.
 */
#define HEADER_FACTOR 0.5

/* A function or method, or a later block of one (a long function is split). */
static int is_function(const struct rank_cand *x)
{
	if (!x->kind)
		return 0;
	if (!strcmp(x->kind, "function") || !strcmp(x->kind, "method"))
		return 1;
	return !strcmp(x->kind, "block") && x->name && *x->name && x->scope && *x->scope;
}

/* A class's header (its methods are chunks of their own) or code outside any definition. */
static int is_header(const struct rank_cand *x)
{
	if (!x->kind)
		return 0;
	if (!strcmp(x->kind, "class"))
		return 1;
	return !strcmp(x->kind, "block") && (!x->name || !*x->name);
}

static double chunk_evidence(const struct rank_query *rq, const struct rank_cand *x, int file_has_fn)
{
	static const int own[] = { SIG_KEYWORD, SIG_SYMBOL, SIG_SEMANTIC };
	double e = 0;

	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (rq->used[own[i]] && x->rank[own[i]])
			e += rq->w[own[i]] / (60.0 + x->rank[own[i]]);
	if (file_has_fn && is_header(x))
		e *= HEADER_FACTOR;
	return e;
}

struct chunk_slot {
	struct rank_cand *c;
	double e;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct chunk_slot *x = a, *y = b;

	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	if (x->c->fused != y->c->fused)
		return x->c->fused > y->c->fused ? -1 : 1;
	return x->c->chunk < y->c->chunk ? -1 : x->c->chunk > y->c->chunk;
}

/* The chunks v[0 .. n) of one file, best fused first: their scores given in the order of e. */
static void order_file(const struct rank_query *rq, struct rank_cand **v, size_t n, struct chunk_slot *s,
		       double *fused, double *bonus)
{
	int has_fn = 0;
	size_t i;

	for (i = 0; i < n; i++)
		has_fn |= is_function(v[i]);
	for (i = 0; i < n; i++) {
		s[i].c = v[i];
		s[i].e = chunk_evidence(rq, v[i], has_fn);
		fused[i] = v[i]->fused;
		bonus[i] = v[i]->file_bonus;
	}
	qsort(s, n, sizeof(*s), cmp_slot);
	for (i = 0; i < n; i++) {
		s[i].c->fused = fused[i];
		s[i].c->file_bonus = bonus[i];
	}
}

void rank_order_chunks(struct rank_query *rq)
{
	struct rank_cand **v;
	struct chunk_slot *s;
	double *fused, *bonus;
	size_t g, k, n = rq->cands_nr;

	if (n < 2)
		return;
	v = xmalloc(n * sizeof(*v));
	s = xmalloc(n * sizeof(*s));
	fused = xmalloc(n * sizeof(*fused));
	bonus = xmalloc(n * sizeof(*bonus));
	for (g = 0; g < n; g++)
		v[g] = &rq->cands[g];
	qsort(v, n, sizeof(*v), rank_cmp_path_fused);
	for (g = 0; g < n; g = k) {
		for (k = g + 1; k < n && !strcmp(v[k]->path, v[g]->path); k++)
			;
		if (k - g > 1)
			order_file(rq, v + g, k - g, s, fused, bonus);
	}
	qsort(rq->cands, n, sizeof(*rq->cands), rank_cmp_fused);
	free(v);
	free(s);
	free(fused);
	free(bonus);
	rank_tr(rq, "chunks");
}
