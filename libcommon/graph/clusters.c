/*
 * clusters.c: arch's clusters (cgraph.h): files that call each other and
 * change together.
 *
 * An undirected graph over the files of packages, an edge weighing the bound
 * calls between two files (either way, top-level calls included) plus their co-changes from the
 * coupling table (ci-couple, ci-index --history), when the index has one;
 * label propagation (each file takes the label its neighbours weigh most,
 * ties to the smaller label, files in path order, at most 30 rounds) finds
 * the groups.  Deterministic; clusters of one file are not reported.
 */
#include "core/common.h"
#include "graph/cgraph.h"

/* An undirected weighted edge, stored both ways. */
struct uedge {
	int a, b;		/* files */
	long calls, co;		/* calls between them, co-changes */
};

static int cmp_uedge(const void *x, const void *y)
{
	const struct uedge *a = x, *b = y;

	return a->a != b->a ? (a->a > b->a) - (a->a < b->a) : (a->b > b->b) - (a->b < b->b);
}

/* A cluster: its label and size, for ordering. */
struct clu {
	int label;		/* the smallest file of it after propagation */
	long size;		/* files */
};

static int cmp_clu(const void *x, const void *y)
{
	const struct clu *a = x, *b = y;

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return (a->label > b->label) - (a->label < b->label);
}

static void add_edge(struct uedge **e, size_t *n, size_t *alloc, int a, int b, long calls, long co)
{
	ALLOC_GROW(*e, *n + 2, *alloc);
	(*e)[(*n)++] = (struct uedge){ a, b, calls, co };
	(*e)[(*n)++] = (struct uedge){ b, a, calls, co };
}

/* Edges from calls and from the coupling table, aggregated, by (a, b). */
static size_t file_edges(struct refs *r, const struct cgraph *g, const struct cg_fedge *fe, size_t fe_nr,
			 const int *pkg_of, struct uedge **e)
{
	size_t n = 0, alloc = 0, k = 0;
	sqlite3_stmt *st;

	for (size_t c = 0; c < fe_nr; c++) {
		int x = fe[c].a, y = fe[c].b;
		if (pkg_of[x] >= 0 && pkg_of[y] >= 0)
			add_edge(e, &n, &alloc, x, y, fe[c].calls, 0);
	}
	if (sqlite3_prepare_v2(r->db, "SELECT a, b, co_changes FROM coupling", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			int x = cgraph_file(g, refs_col(st, 0)), y = cgraph_file(g, refs_col(st, 1));
			if (x >= 0 && y >= 0 && x != y && pkg_of[x] >= 0 && pkg_of[y] >= 0)
				add_edge(e, &n, &alloc, x, y, 0, sqlite3_column_int64(st, 2));
		}
		sqlite3_finalize(st);
	}
	if (n)
		qsort(*e, n, sizeof(**e), cmp_uedge);
	for (size_t i = 0; i < n; i++) {
		if (k && (*e)[k - 1].a == (*e)[i].a && (*e)[k - 1].b == (*e)[i].b) {
			(*e)[k - 1].calls += (*e)[i].calls;
			(*e)[k - 1].co += (*e)[i].co;
		} else {
			(*e)[k++] = (*e)[i];
		}
	}
	return k;
}

/* Label propagation over the edges; label[f] for every file.  The weight of
 * each neighbour label is summed in wsum[] (a header's file has thousands of
 * neighbours on Linux: comparing each with each was minutes). */
static void propagate(const struct uedge *e, size_t n, size_t files, int *label)
{
	size_t *start = xcalloc(files + 2, sizeof(size_t));
	long *wsum = xcalloc(files + 1, sizeof(long));
	int *seen = xmalloc((files + 1) * sizeof(int));

	for (size_t i = 0; i < n; i++)
		start[e[i].a + 1]++;
	for (size_t f = 0; f < files; f++) {
		start[f + 1] += start[f];
		label[f] = (int)f;
	}
	for (int round = 0, changed = 1; round < 30 && changed; round++) {
		changed = 0;
		for (size_t f = 0; f < files; f++) {
			int best = label[f];
			long bw = 0;
			size_t ns = 0;
			for (size_t i = start[f]; i < start[f + 1]; i++) {
				int l = label[e[i].b];
				if (!wsum[l])
					seen[ns++] = l;
				wsum[l] += e[i].calls + e[i].co;
			}
			/* the heaviest label, ties to the smaller */
			for (size_t k = 0; k < ns; k++) {
				int l = seen[k];
				if (wsum[l] > bw || (wsum[l] == bw && l < best))
					best = l, bw = wsum[l];
				wsum[l] = 0;
			}
			if (best != label[f]) {
				label[f] = best;
				changed = 1;
			}
		}
	}
	free(start);
	free(wsum);
	free(seen);
}

/* What emit_cluster() reads: per label, its internal calls and co-changes and
 * its files (files[lstart[l] .. lstart[l] + size[l]), in path order). */
struct clu_index {
	long *calls, *co, *size;
	size_t *lstart;
	int *files;
	unsigned char *pmark;	/* per package, written once in this cluster */
};

static void emit_cluster(struct refs *r, const struct cgraph *g, const int *pkg_of, const char *const *pkgs,
			 const struct clu_index *ci, long id, int l)
{
	struct buf *b = &r->out;
	const int *fs = ci->files + ci->lstart[l];
	long size = ci->size[l];

	nd_begin(b, "arch_cluster");
	nd_int(b, "id", id);
	nd_key(b, "files");
	buf_addch(b, '[');
	for (long k = 0; k < size; k++) {
		if (k)
			buf_addch(b, ',');
		nd_json_string(b, g->files[fs[k]].path, strlen(g->files[fs[k]].path));
	}
	buf_addch(b, ']');
	nd_int(b, "size", size);
	nd_key(b, "packages");
	buf_addch(b, '[');
	for (long k = 0, w = 0; k < size; k++) {
		int p = pkg_of[fs[k]];
		if (ci->pmark[p])
			continue;
		ci->pmark[p] = 1;
		if (w++)
			buf_addch(b, ',');
		nd_json_string(b, pkgs[p], strlen(pkgs[p]));
	}
	for (long k = 0; k < size; k++)
		ci->pmark[pkg_of[fs[k]]] = 0;
	buf_addch(b, ']');
	nd_int(b, "calls", ci->calls[l]);
	nd_int(b, "co_changes", ci->co[l]);
	nd_end(b);
	refs_flush(r);
	r->emitted++;
}

void arch_clusters(struct refs *r, const struct cgraph *g, const struct cg_fedge *fe, size_t fe_nr,
		   const int *pkg_of, const char *const *pkgs)
{
	struct uedge *e = NULL;
	size_t n = file_edges(r, g, fe, fe_nr, pkg_of, &e), nc = 0;
	int *label = xmalloc((g->files_nr + 1) * sizeof(int));
	struct clu *c = xcalloc(g->files_nr + 1, sizeof(*c));
	long *size = xcalloc(g->files_nr + 1, sizeof(long));

	struct clu_index ci;

	propagate(e, n, g->files_nr, label);
	for (size_t f = 0; f < g->files_nr; f++)
		if (pkg_of[f] >= 0)
			size[label[f]]++;
	for (size_t f = 0; f < g->files_nr; f++)
		if (size[f] >= 2)
			c[nc++] = (struct clu){ (int)f, size[f] };
	qsort(c, nc, sizeof(*c), cmp_clu);
	ci.calls = xcalloc(g->files_nr + 1, sizeof(long));
	ci.co = xcalloc(g->files_nr + 1, sizeof(long));
	ci.size = size;
	ci.lstart = xcalloc(g->files_nr + 2, sizeof(size_t));
	ci.files = xmalloc((g->files_nr + 1) * sizeof(int));
	ci.pmark = xcalloc(g->files_nr + 1, 1);
	for (size_t i = 0; i < n; i++)
		if (label[e[i].a] == label[e[i].b] && e[i].a < e[i].b) {
			ci.calls[label[e[i].a]] += e[i].calls;
			ci.co[label[e[i].a]] += e[i].co;
		}
	for (size_t f = 0; f < g->files_nr; f++)
		ci.lstart[f + 1] = ci.lstart[f] + (size_t)size[f];
	{
		size_t *fill = xmalloc((g->files_nr + 1) * sizeof(size_t));
		memcpy(fill, ci.lstart, g->files_nr * sizeof(size_t));
		for (size_t f = 0; f < g->files_nr; f++)
			if (pkg_of[f] >= 0)
				ci.files[fill[label[f]]++] = (int)f;
		free(fill);
	}
	for (size_t i = 0; i < nc && r->emitted < r->o.limit; i++)
		emit_cluster(r, g, pkg_of, pkgs, &ci, (long)i + 1, c[i].label);
	free(ci.calls);
	free(ci.co);
	free(ci.lstart);
	free(ci.files);
	free(ci.pmark);
	free(e);
	free(label);
	free(c);
	free(size);
}
