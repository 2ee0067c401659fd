/*
 * rank/structure.c: the structure signal: import centrality, a
 * personalised PageRank over the import graph near the best keyword hits.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <search.h>

/*
 * Personalised PageRank over imports, seeded by the files of the best keyword
 * hits.  Computed on the part of the graph within STRUCT_HOPS import edges of
 * the seeds, read through the imports_path index, so a query costs what its
 * neighbourhood holds, not what the repository holds: with restart 0.15 a
 * node further out would get at most 0.85^4 of a seed's mass.  Mass leaving
 * the neighbourhood is dropped, which changes the scale, not the order, near
 * the seeds.
 */
#define STRUCT_HOPS 3
#define STRUCT_MAX_NODES 20000

struct graph {
	char **names;
	size_t n, alloc;
	struct hsearch_data h;
	size_t h_size;		/* its size: at least twice the nodes */
	int (*edges)[2];
	size_t e_nr, e_alloc;
};

/*
 * The table of nodes made again twice as large, every node in it: a table
 * as large as the graph may grow (STRUCT_MAX_NODES) was cleared each query,
 * most of a small repository's structure signal.
 */
static void graph_grow(struct graph *g)
{
	ENTRY e, *found;

	hdestroy_r(&g->h);
	memset(&g->h, 0, sizeof(g->h));
	g->h_size *= 2;
	if (!hcreate_r(g->h_size, &g->h))
		die("out of memory");
	for (size_t i = 0; i < g->n; i++) {
		e.key = g->names[i];
		e.data = (void *)(intptr_t)i;
		if (!hsearch_r(e, ENTER, &found, &g->h))
			die("out of memory");
	}
}

static long graph_node(struct graph *g, const char *path, int add)
{
	ENTRY e = { .key = (char *)path }, *found;

	if (hsearch_r(e, FIND, &found, &g->h))
		return (long)(intptr_t)found->data;
	if (!add || g->n >= STRUCT_MAX_NODES)
		return -1;
	if (2 * (g->n + 1) > g->h_size)
		graph_grow(g);
	ALLOC_GROW(g->names, g->n + 1, g->alloc);
	g->names[g->n] = xstrdup(path);
	e.key = g->names[g->n];
	e.data = (void *)(intptr_t)g->n;
	if (!hsearch_r(e, ENTER, &found, &g->h))
		die("out of memory");
	return (long)g->n++;
}

int rank_signal_structure(struct rank_query *rq)
{
	struct graph g;
	sqlite3_stmt *st;
	size_t i, lo, hi, nseeds;
	double *pr, *next, *seed, seed_sum = 0;
	int *outdeg;
	unsigned char *expanded;

	memset(&g, 0, sizeof(g));
	g.h_size = 64;
	if (!hcreate_r(g.h_size, &g.h))
		die("out of memory");
	for (i = 0; i < rq->cands_nr; i++)
		if (rq->cands[i].rank[SIG_KEYWORD] && rq->cands[i].rank[SIG_KEYWORD] <= 20)
			graph_node(&g, rq->cands[i].path, 1);
	nseeds = g.n;
	seed = xcalloc(g.n + 1, sizeof(double));
	for (i = 0; i < rq->cands_nr; i++) {
		long k;
		if (!rq->cands[i].rank[SIG_KEYWORD] || rq->cands[i].rank[SIG_KEYWORD] > 20)
			continue;
		k = graph_node(&g, rq->cands[i].path, 0);
		seed[k] += 1.0 / rq->cands[i].rank[SIG_KEYWORD];
		seed_sum += 1.0 / rq->cands[i].rank[SIG_KEYWORD];
	}
	st = rank_stmt(rq->r, "SELECT resolved FROM imports WHERE path = ?1 AND resolved IS NOT NULL");
	lo = 0;
	hi = g.n;
	for (int hop = 0; hop < STRUCT_HOPS; hop++) {
		for (i = lo; i < hi; i++) {
			sqlite3_bind_text(st, 1, g.names[i], -1, SQLITE_TRANSIENT);
			while (sqlite3_step(st) == SQLITE_ROW) {
				long to = graph_node(&g, rank_col(st, 0), 1);
				if (to < 0 || (size_t)to == i)
					continue;
				ALLOC_GROW(g.edges, g.e_nr + 1, g.e_alloc);
				g.edges[g.e_nr][0] = (int)i;
				g.edges[g.e_nr][1] = (int)to;
				g.e_nr++;
			}
			sqlite3_reset(st);
		}
		lo = hi;
		hi = g.n;
	}
	rank_stmt_done(rq->r, st);
	if (!g.e_nr || seed_sum <= 0) {
		free(seed);
		goto out;
	}
	/* nodes of the last ring were not expanded: their edges are unknown, not absent */
	expanded = xcalloc(g.n, 1);
	memset(expanded, 1, lo);
	seed = xrealloc(seed, g.n * sizeof(double));
	for (i = nseeds; i < g.n; i++)
		seed[i] = 0;
	pr = xcalloc(g.n, sizeof(double));
	next = xcalloc(g.n, sizeof(double));
	outdeg = xcalloc(g.n, sizeof(int));
	for (i = 0; i < g.e_nr; i++)
		outdeg[g.edges[i][0]]++;
	for (i = 0; i < g.n; i++) {
		seed[i] /= seed_sum;
		pr[i] = seed[i];
	}
	for (int it = 0; it < 20; it++) {
		double dangling = 0;
		for (i = 0; i < g.n; i++) {
			next[i] = 0.15 * seed[i];
			if (!outdeg[i] && expanded[i])
				dangling += pr[i];
		}
		for (i = 0; i < g.e_nr; i++)
			next[g.edges[i][1]] += 0.85 * pr[g.edges[i][0]] / outdeg[g.edges[i][0]];
		for (i = 0; i < g.n; i++)
			next[i] += 0.85 * dangling * seed[i];
		memcpy(pr, next, g.n * sizeof(double));
	}
	{
		double mx = 0;
		for (i = 0; i < g.n; i++)
			if (pr[i] > mx)
				mx = pr[i];
		for (i = 0; i < rq->cands_nr && mx > 0; i++) {
			long k = graph_node(&g, rq->cands[i].path, 0);
			if (k >= 0)
				rq->cands[i].sig[SIG_STRUCTURE] = pr[k] / mx;
		}
	}
	free(pr);
	free(next);
	free(seed);
	free(outdeg);
	free(expanded);
out:
	hdestroy_r(&g.h);
	for (i = 0; i < g.n; i++)
		free(g.names[i]);
	free(g.names);
	free(g.edges);
	return seed_sum > 0 && g.e_nr > 0;
}

