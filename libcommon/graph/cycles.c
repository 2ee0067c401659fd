/*
 * cycles.c: the import graph of the index as a digraph, and its cycles
 * (refs.h).
 *
 * The graph is every file of the index, with an edge for each resolved
 * import (Python's `if TYPE_CHECKING:` imports only when asked: they do not
 * run); the components come from digraph.h, reported in order of their first
 * file, each with a shortest cycle through that file.
 */
#include "core/common.h"
#include "graph/refs.h"

/* Is the import a -> b inside scope ("src" is "src/..." and "src", not "srcx")? */
static int in_scope(const char *scope, size_t sl, const char *a, const char *b)
{
	if (!scope || !*scope)
		return 1;
	return !(strncmp(a, scope, sl) || strncmp(b, scope, sl) ||
		 (scope[sl - 1] != '/' && ((a[sl] && a[sl] != '/') || (b[sl] && b[sl] != '/'))));
}

void refs_load_graph(struct refs *r, struct digraph *g, const char *scope, int type_only)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT path FROM files ORDER BY path");
	size_t sl = scope ? strlen(scope) : 0;

	memset(g, 0, sizeof(*g));
	while (sqlite3_step(st) == SQLITE_ROW)
		digraph_add_node(g, refs_col(st, 0));
	sqlite3_finalize(st);
	digraph_nodes_done(g);
	st = refs_prep(r, type_only ? "SELECT path, resolved FROM imports WHERE resolved IS NOT NULL"
		       : "SELECT path, resolved FROM imports WHERE resolved IS NOT NULL AND NOT type_only");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *a = refs_col(st, 0), *b = refs_col(st, 1);
		int x, y;

		if (!in_scope(scope, sl, a, b))
			continue;
		x = digraph_node(g, a);
		y = digraph_node(g, b);
		if (x < 0 || y < 0)
			continue;
		digraph_add_edge(g, x, y);
	}
	sqlite3_finalize(st);
	digraph_finish(g);
}

/* A JSON array of the names of nodes. */
static void add_names(struct buf *b, const struct digraph *g, const int *nodes, size_t n)
{
	buf_addch(b, '[');
	for (size_t j = 0; j < n; j++) {
		if (j)
			buf_addch(b, ',');
		nd_json_string(b, g->names[nodes[j]], strlen(g->names[nodes[j]]));
	}
	buf_addch(b, ']');
}

/* The record of the cycle whose first file is node i. */
static void emit_cycle(struct refs *r, const struct digraph *g, const int *comp, size_t i,
		       size_t members, int *path, int *list)
{
	size_t j, n = 0, len;

	nd_begin(&r->out, "cycle");
	nd_int(&r->out, "size", (long long)members);
	nd_key(&r->out, "files");
	for (j = i; j < g->n; j++)
		if (comp[j] == comp[i])
			list[n++] = (int)j;
	add_names(&r->out, g, list, n);
	len = digraph_cycle_path(g, comp, (int)i, path);
	nd_key(&r->out, "path");
	add_names(&r->out, g, path, len);
	nd_end(&r->out);
	refs_flush(r);
}

int refs_cycles(struct refs *r)
{
	struct digraph g;
	int *comp, *path, *list;
	size_t i, ncomp, found = 0, *size;
	char *done;

	refs_load_graph(r, &g, r->o.scope, r->o.type_imports);
	comp = xmalloc((g.n + 1) * sizeof(int));
	path = xmalloc((g.n + 2) * sizeof(int));
	list = xmalloc((g.n + 1) * sizeof(int));
	ncomp = digraph_scc(&g, comp);
	size = xcalloc(ncomp + 1, sizeof(*size));
	done = xcalloc(ncomp + 1, 1);
	for (i = 0; i < g.n; i++)
		size[comp[i]]++;
	/* components with a cycle, in order of their first file */
	for (i = 0; i < g.n && r->emitted < r->o.limit; i++) {
		int self = 0;
		if (done[comp[i]])
			continue;
		done[comp[i]] = 1;
		for (size_t j = 0; j < g.adj_nr[i]; j++)
			self |= g.adj[i][j] == (int)i;
		if (size[comp[i]] < 2 && !self)
			continue;
		emit_cycle(r, &g, comp, i, size[comp[i]], path, list);
		r->emitted++;
		found++;
	}
	if (!found)
		fprintf(stderr, "%s: no import cycles among %zu files\n", progname, g.n);
	free(done);
	free(size);
	free(comp);
	free(path);
	free(list);
	digraph_release(&g);
	return found ? EXIT_OK : EXIT_NOTHING;
}
