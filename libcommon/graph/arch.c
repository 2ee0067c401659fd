/*
 * arch.c: the architecture of a repository from its index (cgraph.h):
 * packages (directories with code), entry points, layering by import
 * direction, and clusters of files by calls and co-change.
 *
 * Layering is a linear order of packages in which imports point down; where
 * import cycles make that impossible, the order is Eades, Lin and Smyth's
 * greedy one (packages that only import go first, those only imported go
 * last, else the one whose imports outweigh its importers most); each
 * package's layer is the longest chain of imports pointing down below it in
 * that order, and packages are written by layer, highest first, then name.
 * The imports that point up in that order are the back edges.  Clusters are label
 * propagation over files, an edge weighing the calls between two files plus
 * their co-changes (ci-couple's coupling table, when the index has it).
 */
#include "core/common.h"
#include "graph/cgraph.h"
#include "graph/gstore.h"
#include "parse/lang.h"

/* A weighted edge between two nodes (packages or files). */
struct wedge {
	int a, b;		/* from, to */
	long imports, calls, co;	/* imports, calls, co-changes */
};

struct arch {
	struct refs *r;		/* the query */
	struct cgraph g;	/* the call graph (its files alone when stored) */
	struct cg_fedge *fe;	/* the calls between files, counted */
	size_t fe_nr;
	char **pkgs;		/* package names, sorted */
	size_t pkgs_nr;
	int *pkg_of;		/* per file: its package, -1 when not code */
	long *pkg_files;	/* per package: files */
	struct wedge *e;	/* package edges, aggregated, by (a, b) */
	size_t e_nr;
	size_t *out_at;		/* per package v: its edges e[out_at[v] .. out_at[v + 1]) */
	size_t *in_at, *by_b;	/* per package v: the edges to it, e[by_b[in_at[v] ..
				   in_at[v + 1])] (on Linux, thousands of packages:
				   a pass over every edge per package was most of arch) */
	int *order;		/* packages, top first */
	int *pos;		/* per package: its place in order */
	int *layer;		/* per package: longest downward import chain */
};

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int cmp_wedge(const void *x, const void *y)
{
	const struct wedge *a = x, *b = y;

	return a->a != b->a ? (a->a > b->a) - (a->a < b->a) : (a->b > b->b) - (a->b < b->b);
}

/* Sort edges and add up the duplicates; returns the new count. */
static size_t aggregate(struct wedge *e, size_t n)
{
	size_t k = 0;

	if (n)
		qsort(e, n, sizeof(*e), cmp_wedge);
	for (size_t i = 0; i < n; i++) {
		if (k && e[k - 1].a == e[i].a && e[k - 1].b == e[i].b) {
			e[k - 1].imports += e[i].imports;
			e[k - 1].calls += e[i].calls;
			e[k - 1].co += e[i].co;
		} else {
			e[k++] = e[i];
		}
	}
	return k;
}

static int pkg_index(const struct arch *a, const char *name)
{
	char **p = a->pkgs_nr ? bsearch(&name, a->pkgs, a->pkgs_nr, sizeof(char *), cmp_str) : NULL;

	return p ? (int)(p - a->pkgs) : -1;
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? xstrndup(path, (size_t)(s - path)) : xstrdup(".");
}

/* Packages: the directories of files in a language with a grammar. */
static void find_packages(struct arch *a)
{
	size_t alloc = 0, k = 0;

	a->pkg_of = xmalloc((a->g.files_nr + 1) * sizeof(int));
	for (size_t f = 0; f < a->g.files_nr; f++) {
		const struct lang *l = a->g.files[f].lang ? lang_by_name(a->g.files[f].lang) : NULL;
		if (!l || !l->grammar || !refs_path_ok(a->r, a->g.files[f].path))
			continue;
		ALLOC_GROW(a->pkgs, a->pkgs_nr + 1, alloc);
		a->pkgs[a->pkgs_nr++] = dir_of(a->g.files[f].path);
	}
	if (a->pkgs_nr)
		qsort(a->pkgs, a->pkgs_nr, sizeof(char *), cmp_str);
	for (size_t i = 0; i < a->pkgs_nr; i++) {
		if (k && !strcmp(a->pkgs[k - 1], a->pkgs[i]))
			free(a->pkgs[i]);
		else
			a->pkgs[k++] = a->pkgs[i];
	}
	a->pkgs_nr = k;
	a->pkg_files = xcalloc(k + 1, sizeof(long));
	for (size_t f = 0; f < a->g.files_nr; f++) {
		const struct lang *l = a->g.files[f].lang ? lang_by_name(a->g.files[f].lang) : NULL;
		char *d;
		a->pkg_of[f] = -1;
		if (!l || !l->grammar || !refs_path_ok(a->r, a->g.files[f].path))
			continue;
		d = dir_of(a->g.files[f].path);
		a->pkg_of[f] = pkg_index(a, d);
		a->pkg_files[a->pkg_of[f]]++;
		free(d);
	}
}

/* The package of a resolved import: its file's, or the directory itself (Go). */
static int pkg_of_path(const struct arch *a, const char *path)
{
	int f = cgraph_file(&a->g, path);

	return f >= 0 ? a->pkg_of[f] : pkg_index(a, path);
}

/* out_at, in_at and by_b of the edges (sorted by (a, b)). */
static void index_edges(struct arch *a)
{
	size_t n = a->pkgs_nr;

	a->out_at = xcalloc(n + 2, sizeof(size_t));
	a->in_at = xcalloc(n + 2, sizeof(size_t));
	a->by_b = xmalloc((a->e_nr + 1) * sizeof(size_t));
	for (size_t i = 0; i < a->e_nr; i++) {
		a->out_at[a->e[i].a + 1]++;
		a->in_at[a->e[i].b + 1]++;
	}
	for (size_t v = 0; v < n; v++) {
		a->out_at[v + 1] += a->out_at[v];
		a->in_at[v + 1] += a->in_at[v];
	}
	{
		size_t *fill = xmalloc((n + 1) * sizeof(size_t));
		memcpy(fill, a->in_at, (n + 1) * sizeof(size_t));
		for (size_t i = 0; i < a->e_nr; i++)
			a->by_b[fill[a->e[i].b]++] = i;
		free(fill);
	}
}

/* Package edges: imports (not type-only) and bound calls between packages. */
static void package_edges(struct arch *a)
{
	sqlite3_stmt *st = refs_prep(a->r, "SELECT path, resolved FROM imports WHERE resolved IS NOT NULL "
				     "AND NOT type_only");
	size_t alloc = 0;

	while (sqlite3_step(st) == SQLITE_ROW) {
		int x = pkg_of_path(a, refs_col(st, 0)), y = pkg_of_path(a, refs_col(st, 1));
		if (x < 0 || y < 0 || x == y)
			continue;
		ALLOC_GROW(a->e, a->e_nr + 1, alloc);
		a->e[a->e_nr++] = (struct wedge){ x, y, 1, 0, 0 };
	}
	sqlite3_finalize(st);
	for (size_t c = 0; c < a->fe_nr; c++) {
		int x = a->pkg_of[a->fe[c].a], y = a->pkg_of[a->fe[c].b];

		if (x < 0 || y < 0 || x == y)
			continue;
		ALLOC_GROW(a->e, a->e_nr + 1, alloc);
		a->e[a->e_nr++] = (struct wedge){ x, y, 0, a->fe[c].calls, 0 };
	}
	a->e_nr = aggregate(a->e, a->e_nr);
	index_edges(a);
}

static int cmp_layer(const void *x, const void *y, void *arg)
{
	const struct arch *a = arg;
	int v = *(const int *)x, w = *(const int *)y;

	if (a->layer[v] != a->layer[w])
		return a->layer[v] > a->layer[w] ? -1 : 1;
	return strcmp(a->pkgs[v], a->pkgs[w]);	/* package names are distinct */
}

/* Sort the order by layer (highest first), then name; set pos. */
static void layer_sort(struct arch *a)
{
	if (a->pkgs_nr > 1)
		qsort_r(a->order, a->pkgs_nr, sizeof(*a->order), cmp_layer, a);
	for (size_t i = 0; i < a->pkgs_nr; i++)
		a->pos[a->order[i]] = (int)i;
}

/* The greedy order (Eades, Lin, Smyth) over import edges, and the layers. */
static void layering(struct arch *a)
{
	size_t n = a->pkgs_nr, head = 0, tail = n;
	long *in = xcalloc(n + 1, sizeof(long)), *out = xcalloc(n + 1, sizeof(long));
	char *gone = xcalloc(n + 1, 1);

	a->order = xmalloc((n + 1) * sizeof(int));
	a->pos = xmalloc((n + 1) * sizeof(int));
	a->layer = xcalloc(n + 1, sizeof(int));
	for (size_t i = 0; i < a->e_nr; i++)
		if (a->e[i].imports) {
			out[a->e[i].a] += a->e[i].imports;
			in[a->e[i].b] += a->e[i].imports;
		}
	while (head < tail) {
		int pick = -1, sink = 0;
		long best = 0;
		/* a sink goes last, a source first; else the greatest out - in */
		for (size_t v = 0; v < n && pick < 0; v++)
			if (!gone[v] && !out[v])
				pick = (int)v, sink = 1;
		for (size_t v = 0; v < n && pick < 0; v++)
			if (!gone[v] && !in[v])
				pick = (int)v;
		if (pick < 0)
			for (size_t v = 0; v < n; v++)
				if (!gone[v] && (pick < 0 || out[v] - in[v] > best))
					pick = (int)v, best = out[v] - in[v];
		gone[pick] = 1;
		if (sink)
			a->order[--tail] = pick;
		else
			a->order[head++] = pick;
		for (size_t i = a->out_at[pick]; i < a->out_at[pick + 1]; i++)
			if (a->e[i].imports && !gone[a->e[i].b])
				in[a->e[i].b] -= a->e[i].imports;
		for (size_t j = a->in_at[pick]; j < a->in_at[pick + 1]; j++) {
			size_t i = a->by_b[j];
			if (a->e[i].imports && !gone[a->e[i].a])
				out[a->e[i].a] -= a->e[i].imports;
		}
	}
	for (size_t i = 0; i < n; i++)
		a->pos[a->order[i]] = (int)i;
	/* layer: the longest chain of downward imports below a package */
	for (size_t i = n; i-- > 0; ) {
		int v = a->order[i];
		for (size_t k = a->out_at[v]; k < a->out_at[v + 1]; k++)
			if (a->e[k].imports && a->pos[a->e[k].b] > a->pos[v] &&
			    a->layer[a->e[k].b] + 1 > a->layer[v])
				a->layer[v] = a->layer[a->e[k].b] + 1;
	}
	/* for people: by layer, then name; imports still point down, and the
	 * back edges are those that point up in this order */
	layer_sort(a);
	free(in);
	free(out);
	free(gone);
}

/* A JSON array of strings. */
static void add_list(struct buf *b, const char *key, char *const *s, const int *ix, size_t n)
{
	nd_key(b, key);
	buf_addch(b, '[');
	for (size_t i = 0; i < n; i++) {
		const char *x = ix ? s[ix[i]] : s[i];
		if (i)
			buf_addch(b, ',');
		nd_json_string(b, x, strlen(x));
	}
	buf_addch(b, ']');
}

static void emit_packages(struct arch *a)
{
	int *list = xmalloc((a->pkgs_nr + 1) * sizeof(int));

	for (size_t i = 0; i < a->pkgs_nr && a->r->emitted < a->r->o.limit; i++) {
		int v = a->order[i];
		size_t n = 0, m = 0;
		struct buf *b = &a->r->out;

		nd_begin(b, "package");
		nd_str(b, "name", a->pkgs[v]);
		nd_int(b, "files", a->pkg_files[v]);
		nd_int(b, "order", (long long)i + 1);
		nd_int(b, "layer", a->layer[v]);
		for (size_t k = a->out_at[v]; k < a->out_at[v + 1]; k++)
			if (a->e[k].imports)
				list[n++] = a->e[k].b;
		add_list(b, "imports", a->pkgs, list, n);
		for (size_t k = a->in_at[v]; k < a->in_at[v + 1]; k++)
			m += a->e[a->by_b[k]].imports != 0;
		nd_int(b, "imported_by", (long long)m);
		nd_end(b);
		refs_flush(a->r);
		a->r->emitted++;
	}
	free(list);
}

static void emit_entry(struct arch *a, const char *path, const char *name, long line, const char *kind)
{
	struct buf *b = &a->r->out;

	if (a->r->emitted >= a->r->o.limit)
		return;
	nd_begin(b, "entry_point");
	nd_str(b, "path", path);
	nd_str(b, "name", name);
	if (line > 0)
		nd_int(b, "line", line);
	nd_str(b, "kind", kind);
	nd_end(b);
	refs_flush(a->r);
	a->r->emitted++;
}

/* Entry points: main functions, Python main guards and __main__.py files. */
static void emit_entries(struct arch *a)
{
	/* the functions main, by path (as files are) then line */
	sqlite3_stmt *st = refs_prep(a->r, "SELECT f.path, d.line, d.kind FROM defs d "
				     "JOIN files f ON f.blob_id = d.blob_id "
				     "WHERE d.name = 'main' AND d.scope IS NULL ORDER BY f.path, d.line, d.col");
	int row = sqlite3_step(st) == SQLITE_ROW;

	for (size_t f = 0; f < a->g.files_nr; f++) {
		const char *path = a->g.files[f].path, *base = strrchr(path, '/');
		while (row && strcmp(refs_col(st, 0), path) < 0)
			row = sqlite3_step(st) == SQLITE_ROW;
		if (a->pkg_of[f] < 0)
			continue;
		for (; row && !strcmp(refs_col(st, 0), path); row = sqlite3_step(st) == SQLITE_ROW)
			if (refs_kind_matches("function", refs_col(st, 2)))
				emit_entry(a, path, "main", sqlite3_column_int64(st, 1), "main");
		if (a->g.files[f].main_guard)
			emit_entry(a, path, "__main__", a->g.files[f].main_guard, "main_guard");
		else if (!strcmp(base ? base + 1 : path, "__main__.py"))
			emit_entry(a, path, "__main__", 0, "main_module");
	}
	sqlite3_finalize(st);
}

static void emit_edges(struct arch *a)
{
	for (size_t k = 0; k < a->e_nr && a->r->emitted < a->r->o.limit; k++) {
		const struct wedge *e = &a->e[k];
		struct buf *b = &a->r->out;

		nd_begin(b, "package_edge");
		nd_str(b, "from", a->pkgs[e->a]);
		nd_str(b, "to", a->pkgs[e->b]);
		nd_int(b, "imports", e->imports);
		nd_int(b, "calls", e->calls);
		nd_bool(b, "back", e->imports && a->pos[e->a] > a->pos[e->b]);
		nd_end(b);
		refs_flush(a->r);
		a->r->emitted++;
	}
}

static void release(struct arch *a)
{
	for (size_t i = 0; i < a->pkgs_nr; i++)
		free(a->pkgs[i]);
	free(a->pkgs);
	free(a->pkg_of);
	free(a->pkg_files);
	free(a->e);
	free(a->out_at);
	free(a->in_at);
	free(a->by_b);
	free(a->order);
	free(a->pos);
	free(a->layer);
	free(a->fe);
	cgraph_release(&a->g);
}

int refs_arch(struct refs *r)
{
	struct arch a = { .r = r };
	long limit = r->o.limit;
	/* one read transaction: the stamp and what it vouches for */
	int txn = refs_read_begin(r);

	if (gstore_valid(r)) {
		cgraph_load_files(&a.g, r);
		a.fe_nr = gstore_file_edges(r, &a.g, &a.fe);
	} else {
		cgraph_load(&a.g, r, 0);
		a.fe_nr = cgraph_file_edges(&a.g, &a.fe);
	}
	find_packages(&a);
	if (!a.pkgs_nr) {
		refs_read_end(r, txn);
		error("no code in the index%s", r->o.path ? " under that path" : "");
		release(&a);
		return EXIT_NOTHING;
	}
	package_edges(&a);
	layering(&a);
	/* each section has its own --limit */
	emit_packages(&a);
	r->o.limit = r->emitted + limit;
	emit_entries(&a);
	r->o.limit = r->emitted + limit;
	emit_edges(&a);
	r->o.limit = r->emitted + limit;
	arch_clusters(r, &a.g, a.fe, a.fe_nr, a.pkg_of, (const char *const *)a.pkgs);
	r->o.limit = limit;
	refs_read_end(r, txn);
	release(&a);
	return EXIT_OK;
}
