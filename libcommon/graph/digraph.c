/*
 * digraph.c: a directed graph of named nodes; components, cycles, reverse
 * distances (digraph.h).
 *
 * Shaped by the import graph of a large repository: tens of thousands of
 * files, import chains thousands long, so nothing here recurses.
 */
#include "core/common.h"
#include "graph/digraph.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void digraph_add_node(struct digraph *g, const char *name)
{
	ALLOC_GROW(g->names, g->n + 1, g->names_alloc);
	g->names[g->n++] = xstrdup(name);
}

void digraph_nodes_done(struct digraph *g)
{
	g->adj = xcalloc(g->n + 1, sizeof(*g->adj));
	g->adj_nr = xcalloc(g->n + 1, sizeof(*g->adj_nr));
	g->adj_alloc = xcalloc(g->n + 1, sizeof(*g->adj_alloc));
}

void digraph_add_edge(struct digraph *g, int x, int y)
{
	ALLOC_GROW(g->adj[x], g->adj_nr[x] + 1, g->adj_alloc[x]);
	g->adj[x][g->adj_nr[x]++] = y;
}

void digraph_finish(struct digraph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		size_t j, k = 0;
		if (!g->adj_nr[i])
			continue;
		qsort(g->adj[i], g->adj_nr[i], sizeof(int), cmp_int);
		for (j = 0; j < g->adj_nr[i]; j++)
			if (!k || g->adj[i][k - 1] != g->adj[i][j])
				g->adj[i][k++] = g->adj[i][j];
		g->adj_nr[i] = k;
	}
}

int digraph_node(const struct digraph *g, const char *name)
{
	char **p = g->n ? bsearch(&name, g->names, g->n, sizeof(*g->names), cmp_str) : NULL;

	return p ? (int)(p - g->names) : -1;
}

void digraph_release(struct digraph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->names[i]);
		if (g->adj)
			free(g->adj[i]);
	}
	free(g->names);
	free(g->adj);
	free(g->adj_nr);
	free(g->adj_alloc);
	memset(g, 0, sizeof(*g));
}

/* Tarjan's state, one array per field, for digraph_scc(). */
struct tarjan {
	int *index_of, *low;	/* discovery order, lowest reachable */
	int *stack, *it, *cs;	/* the component stack, per-node edge cursor, call stack */
	char *on;		/* on the component stack */
	size_t sp;		/* its depth */
	int counter;		/* next discovery number */
	size_t ncomp;		/* components found */
};

static void tarjan_push(struct tarjan *t, int v)
{
	t->index_of[v] = t->low[v] = t->counter++;
	t->it[v] = 0;
	t->stack[t->sp++] = v;
	t->on[v] = 1;
}

/* One depth-first search from root r. */
static void tarjan_from(const struct digraph *g, struct tarjan *t, int r, int *comp)
{
	size_t csp = 0;

	t->cs[csp++] = r;
	tarjan_push(t, r);
	while (csp) {
		int v = t->cs[csp - 1];
		if ((size_t)t->it[v] < g->adj_nr[v]) {
			int w = g->adj[v][t->it[v]++];
			if (t->index_of[w] < 0) {
				tarjan_push(t, w);
				t->cs[csp++] = w;
			} else if (t->on[w] && t->index_of[w] < t->low[v]) {
				t->low[v] = t->index_of[w];
			}
			continue;
		}
		csp--;
		if (csp && t->low[v] < t->low[t->cs[csp - 1]])
			t->low[t->cs[csp - 1]] = t->low[v];
		if (t->low[v] == t->index_of[v]) {
			int w;
			do {
				w = t->stack[--t->sp];
				t->on[w] = 0;
				comp[w] = (int)t->ncomp;
			} while (w != v);
			t->ncomp++;
		}
	}
}

size_t digraph_scc(const struct digraph *g, int *comp)
{
	struct tarjan t = { 0 };

	t.index_of = xmalloc((g->n + 1) * sizeof(int));
	t.low = xmalloc((g->n + 1) * sizeof(int));
	t.stack = xmalloc((g->n + 1) * sizeof(int));
	t.it = xmalloc((g->n + 1) * sizeof(int));
	t.cs = xmalloc((g->n + 1) * sizeof(int));
	t.on = xcalloc(g->n + 1, 1);
	for (size_t i = 0; i < g->n; i++)
		t.index_of[i] = -1, comp[i] = -1;
	for (size_t r = 0; r < g->n; r++)
		if (t.index_of[r] < 0)
			tarjan_from(g, &t, (int)r, comp);
	free(t.index_of);
	free(t.low);
	free(t.stack);
	free(t.it);
	free(t.cs);
	free(t.on);
	return t.ncomp;
}

size_t digraph_cycle_path(const struct digraph *g, const int *comp, int start, int *path)
{
	int *prev = xmalloc((g->n + 1) * sizeof(int)), *queue = xmalloc((g->n + 1) * sizeof(int));
	size_t qh = 0, qt = 0, len = 0, i;
	int found = -1;

	for (i = 0; i < g->n; i++)
		prev[i] = -2;
	queue[qt++] = start;
	prev[start] = -1;
	while (qh < qt && found < 0) {
		int v = queue[qh++];
		for (i = 0; i < g->adj_nr[v]; i++) {
			int w = g->adj[v][i];
			if (comp[w] != comp[start])
				continue;
			if (w == start) {
				found = v;
				break;
			}
			if (prev[w] == -2) {
				prev[w] = v;
				queue[qt++] = w;
			}
		}
	}
	if (found >= 0) {
		int *tmp = xmalloc((g->n + 1) * sizeof(int)), n = 0;
		for (int v = found; v >= 0 && (size_t)n < g->n; v = prev[v])
			tmp[n++] = v;
		while (n)
			path[len++] = tmp[--n];
		path[len++] = start;
		free(tmp);
	}
	free(prev);
	free(queue);
	return len;
}

void digraph_reverse_distance(const struct digraph *g, int start, long max_depth, int *dist)
{
	int **radj = xcalloc(g->n + 1, sizeof(*radj)), *queue = xmalloc((g->n + 1) * sizeof(int));
	size_t *radj_nr = xcalloc(g->n + 1, sizeof(*radj_nr));
	size_t *radj_alloc = xcalloc(g->n + 1, sizeof(*radj_alloc));
	size_t qh = 0, qt = 0, i;

	for (i = 0; i < g->n; i++)
		for (size_t j = 0; j < g->adj_nr[i]; j++) {
			int w = g->adj[i][j];
			ALLOC_GROW(radj[w], radj_nr[w] + 1, radj_alloc[w]);
			radj[w][radj_nr[w]++] = (int)i;
		}
	for (i = 0; i < g->n; i++)
		dist[i] = -1;
	dist[start] = 0;
	queue[qt++] = start;
	while (qh < qt) {
		int v = queue[qh++];
		if (dist[v] >= max_depth)
			continue;
		for (i = 0; i < radj_nr[v]; i++) {
			int w = radj[v][i];
			if (dist[w] >= 0)
				continue;
			dist[w] = dist[v] + 1;
			queue[qt++] = w;
		}
	}
	for (i = 0; i < g->n; i++)
		free(radj[i]);
	free(radj);
	free(radj_nr);
	free(radj_alloc);
	free(queue);
}
