/*
 * trace.c: call paths from one symbol to another over the bound call graph
 * (cgraph.h), shortest first.
 *
 * The distance of every definition to the targets is found once, breadth
 * first along calls backwards; the paths of length L are then walked from
 * each source, taking only the calls that can still reach a target within L,
 * for L from the shortest up to --depth: each walk step is useful, so the
 * first paths come at once even on a large graph.  Paths are simple (no
 * definition twice); a walk stops at the first target it reaches.
 */
#include "core/common.h"
#include "graph/cgraph.h"

/* The walk's state. */
struct tracer {
	struct refs *r;		/* the query */
	const struct cgraph *g;	/* the graph */
	const int *dist;	/* calls to a target, -1 when none within depth */
	const char *is_to;	/* targets */
	char *on_path;		/* definitions on the current path */
	int *path;		/* the current path's definitions */
	size_t *via;		/* the call that reached path[k], k >= 1 */
	long steps;		/* walk steps left before giving up */
	long rank;		/* paths written */
	const char *from, *to;	/* as asked */
};

/* The definitions of q ("Class.method", "module.func" narrow), marked in mark. */
static size_t mark_defs(const struct cgraph *g, const char *q, char *mark)
{
	char *scope, *name;
	size_t first, n, found = 0;

	refs_split_qualified(q, &scope, &name);
	n = cgraph_named(g, name, &first);
	for (size_t i = 0; i < n; i++) {
		const struct cg_def *d = &g->defs[g->by_name[first + i]];
		if (refs_qualifier_matches(scope, cg_scope(g, d), cg_path(g, d))) {
			mark[g->by_name[first + i]] = 1;
			found++;
		}
	}
	free(scope);
	free(name);
	return found;
}

/* Calls to a target, breadth first backwards, up to depth. */
static void distances(const struct cgraph *g, const char *is_to, long depth, int *dist)
{
	size_t *in_start = xcalloc(g->defs_nr + 2, sizeof(size_t));
	int *in = xmalloc((g->calls_nr + 1) * sizeof(int)), *queue = xmalloc((g->defs_nr + 1) * sizeof(int));
	size_t qh = 0, qt = 0;

	for (size_t c = 0; c < g->calls_nr; c++)
		if (g->calls[c].from >= 0)
			in_start[g->calls[c].to + 1]++;
	for (size_t i = 0; i < g->defs_nr; i++)
		in_start[i + 1] += in_start[i];
	{
		size_t *fill = xmalloc((g->defs_nr + 1) * sizeof(size_t));
		memcpy(fill, in_start, g->defs_nr * sizeof(size_t));
		for (size_t c = 0; c < g->calls_nr; c++)
			if (g->calls[c].from >= 0)
				in[fill[g->calls[c].to]++] = g->calls[c].from;
		free(fill);
	}
	for (size_t i = 0; i < g->defs_nr; i++) {
		dist[i] = is_to[i] ? 0 : -1;
		if (is_to[i])
			queue[qt++] = (int)i;
	}
	while (qh < qt) {
		int v = queue[qh++];
		if (dist[v] >= depth)
			continue;
		for (size_t k = in_start[v]; k < in_start[v + 1]; k++)
			if (dist[in[k]] < 0) {
				dist[in[k]] = dist[v] + 1;
				queue[qt++] = in[k];
			}
	}
	free(in_start);
	free(in);
	free(queue);
}

/* A hop of a trace record: the definition, and the call that reached it. */
static void add_hop(struct buf *b, const struct cgraph *g, int d, const struct cg_call *via)
{
	const struct cg_def *x = &g->defs[d];

	buf_addstr(b, "{\"name\":");
	nd_json_string(b, cg_name(g, x), strlen(cg_name(g, x)));
	nd_str(b, "kind", cg_kind(g, x));
	nd_str(b, "path", cg_path(g, x));
	nd_int(b, "line", x->line);
	nd_str(b, "scope", cg_scope(g, x));
	if (via) {
		const char *how = bind_how_name(via->how);
		nd_key(b, "call");
		buf_addstr(b, "{\"path\":");
		nd_json_string(b, g->files[via->file].path, strlen(g->files[via->file].path));
		buf_addf(b, ",\"line\":%d,\"col\":%d", via->line, via->col);
		nd_str(b, "binding", how);
		buf_addch(b, '}');
	}
	buf_addch(b, '}');
}

static void emit_path(struct tracer *t, size_t len)
{
	struct buf *b = &t->r->out;

	nd_begin(b, "trace");
	nd_str(b, "from", t->from);
	nd_str(b, "to", t->to);
	nd_int(b, "rank", ++t->rank);
	nd_int(b, "length", (long long)len);
	nd_key(b, "hops");
	buf_addch(b, '[');
	for (size_t k = 0; k <= len; k++) {
		if (k)
			buf_addch(b, ',');
		add_hop(b, t->g, t->path[k], k ? &t->g->calls[t->via[k]] : NULL);
	}
	buf_addch(b, ']');
	nd_end(b);
	refs_flush(t->r);
	t->r->emitted++;
}

/* Walk on from path[k] to a target in exactly len calls. */
static void walk(struct tracer *t, size_t k, size_t len)
{
	int u = t->path[k];
	const struct cgraph *g = t->g;

	if (k == len) {
		if (t->is_to[u])
			emit_path(t, len);
		return;
	}
	if (k && t->is_to[u])
		return;		/* a shorter path, already written */
	for (size_t c = g->out[u]; c < g->out[u + 1] && t->r->emitted < t->r->o.limit && t->steps > 0; c++) {
		int v = g->calls[c].to;
		if (c > g->out[u] && g->calls[c - 1].to == v)
			continue;	/* the first call of u to v stands for all */
		if (t->dist[v] < 0 || (size_t)t->dist[v] > len - k - 1 || (t->on_path[v] && !t->is_to[v]))
			continue;
		if (t->on_path[v] && v != t->path[0])
			continue;
		t->steps--;
		t->path[k + 1] = v;
		t->via[k + 1] = c;
		t->on_path[v] = 1;
		walk(t, k + 1, len);
		if (v != t->path[0])
			t->on_path[v] = 0;
	}
}

int refs_trace(struct refs *r, const char *from, const char *to)
{
	struct cgraph g;
	struct tracer t = { .r = r, .g = &g, .from = from, .to = to, .steps = 2000000 };
	char *is_from, *is_to;
	int *dist, shortest = -1;
	long depth = r->o.depth;
	int ret = EXIT_NOTHING;

	cgraph_load(&g, r, 0);
	is_from = xcalloc(g.defs_nr + 1, 1);
	is_to = xcalloc(g.defs_nr + 1, 1);
	if (!mark_defs(&g, from, is_from) || !mark_defs(&g, to, is_to)) {
		error("no definition of '%s' in the index", mark_defs(&g, from, is_from) ? to : from);
		goto done;
	}
	dist = xmalloc((g.defs_nr + 1) * sizeof(int));
	distances(&g, is_to, depth, dist);
	for (size_t i = 0; i < g.defs_nr; i++)
		if (is_from[i])
			for (size_t c = g.out[i]; c < g.out[i + 1]; c++)
				if (dist[g.calls[c].to] >= 0 && (shortest < 0 || dist[g.calls[c].to] + 1 < shortest))
					shortest = dist[g.calls[c].to] + 1;
	t.dist = dist;
	t.is_to = is_to;
	t.on_path = xcalloc(g.defs_nr + 1, 1);
	t.path = xmalloc((size_t)(depth + 2) * sizeof(int));
	t.via = xmalloc((size_t)(depth + 2) * sizeof(size_t));
	for (long len = shortest; shortest > 0 && len <= depth && r->emitted < r->o.limit; len++)
		for (size_t i = 0; i < g.defs_nr && r->emitted < r->o.limit; i++) {
			if (!is_from[i])
				continue;
			t.path[0] = (int)i;
			t.on_path[i] = 1;
			walk(&t, 0, (size_t)len);
			t.on_path[i] = 0;
		}
	if (t.steps <= 0)
		fprintf(stderr, "%s: trace: stopped after 2000000 steps; narrow with Class.method or --depth\n",
			progname);
	if (!t.rank)
		error("no call path from '%s' to '%s' within %ld calls", from, to, depth);
	else
		ret = EXIT_OK;
	free(t.on_path);
	free(t.path);
	free(t.via);
	free(dist);
done:
	free(is_from);
	free(is_to);
	cgraph_release(&g);
	return ret;
}
