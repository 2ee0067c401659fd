/*
 * impact.c: what a change to a file (or one of its symbols) may affect
 * (refs.h): the files that import it (to --depth levels), that reference its
 * symbols, that change with it in history (ci-couple's coupling records),
 * and whose chunk vectors are close to its own; each a signal in 0-1,
 * combined as the chance that at least one of them is right.
 */
#include "core/common.h"
#include "graph/refs.h"
#include "graph/cgraph.h"
#include "index/index.h"

#include <ctype.h>
#include <math.h>

/*
 * The semantic signal: how much closer each file's mean chunk vector is to the
 * target file's than files' are on average, (cos - mean) / (3 sd), in 0-1.
 * Returns the number of files with vectors, 0 when the index has none.
 */
static size_t semantic_signal(struct refs *r, const struct digraph *g, int target, struct impact_hit *h)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT 1 FROM vectors LIMIT 1");
	float *sum = NULL, *v = NULL;
	double *cosv, mean = 0, var = 0, tn = 0;
	size_t dim = 0, i, k, nfiles = 0;
	char *have;
	int any = sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	if (!any)
		return 0;	/* no vectors: the join below walks every file's chunks (Linux: 0.1 s) */
	st = refs_prep(r, "SELECT f.path, v.dim, v.fmt, v.scale, v.vec FROM vectors v "
		       "JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.blob_id = c.blob_id "
		       "ORDER BY f.path, c.id");
	have = xcalloc(g->n, 1);

	while (sqlite3_step(st) == SQLITE_ROW) {
		int node = digraph_node(g, refs_col(st, 0));
		double n = 0;
		if (!dim) {
			dim = (size_t)sqlite3_column_int64(st, 1);
			if (!dim || dim > 65536)
				break;
			sum = xcalloc(g->n * dim, sizeof(float));
			v = xmalloc(dim * sizeof(float));
		}
		if (node < 0 || index_vec_decode(v, dim, st, 2) < 0)
			continue;
		for (k = 0; k < dim; k++)
			n += (double)v[k] * v[k];
		if (n <= 0)
			continue;
		n = 1 / sqrt(n);
		for (k = 0; k < dim; k++)
			sum[(size_t)node * dim + k] += (float)(v[k] * n);
		have[node] = 1;
	}
	sqlite3_finalize(st);
	if (!dim || !sum || !have[target]) {
		free(sum);
		free(v);
		free(have);
		return 0;
	}
	cosv = xcalloc(g->n, sizeof(double));
	for (k = 0; k < dim; k++)
		tn += (double)sum[(size_t)target * dim + k] * sum[(size_t)target * dim + k];
	for (i = 0; i < g->n; i++) {
		double dot = 0, n = 0;
		if (!have[i] || (int)i == target)
			continue;
		for (k = 0; k < dim; k++) {
			dot += (double)sum[i * dim + k] * sum[(size_t)target * dim + k];
			n += (double)sum[i * dim + k] * sum[i * dim + k];
		}
		cosv[i] = n > 0 && tn > 0 ? dot / sqrt(n * tn) : 0;
		mean += cosv[i];
		nfiles++;
	}
	if (nfiles) {
		mean /= (double)nfiles;
		for (i = 0; i < g->n; i++)
			if (have[i] && (int)i != target)
				var += (cosv[i] - mean) * (cosv[i] - mean);
		var /= (double)nfiles;
		for (i = 0; i < g->n; i++) {
			double z;
			if (!have[i] || (int)i == target)
				continue;
			/* one file alone, or all alike: the cosine itself decides */
			z = var > 1e-12 ? (cosv[i] - mean) / (3 * sqrt(var)) : cosv[i] - 0.5;
			h[i].sem = z < 0 ? 0 : z > 1 ? 1 : z;
		}
	}
	free(cosv);
	free(sum);
	free(v);
	free(have);
	return nfiles + 1;
}

double impact_score(const struct impact_hit *h, unsigned mode)
{
	if (mode == REFS_M_SEMANTIC)
		return h->sem;
	if (mode == REFS_M_COUPLING)
		return h->cpl;
	return 1.0 - (1.0 - 0.9 * h->imp) * (1.0 - 0.8 * h->ref) * (1.0 - 0.7 * h->cpl) *
		(1.0 - 0.6 * h->sem) * (1.0 - 0.9 * h->call);
}

/* A symbol's tier: 0 its callers, 1 the other files that reference it, 2 the rest. */
static int sym_tier(const struct impact_hit *h)
{
	return h->call_depth ? 0 : h->refs ? 1 : 2;
}

/* The order of impact's files: for a symbol (sym), by tier, then a caller's
 * call depth; then score, name and node (a total order for qsort_r). */
struct order_ctx {
	const struct impact_hit *h;
	char *const *names;
	int sym;
};

static int cmp_rank(const void *x, const void *y, void *arg)
{
	const struct impact_rank *a = x, *b = y;
	const struct order_ctx *o = arg;
	const struct impact_hit *ha = &o->h[a->v], *hb = &o->h[b->v];
	int c;

	if (o->sym && sym_tier(ha) != sym_tier(hb))
		return sym_tier(ha) < sym_tier(hb) ? -1 : 1;
	if (o->sym && ha->call_depth != hb->call_depth)
		return ha->call_depth < hb->call_depth ? -1 : 1;
	if (a->s != b->s)
		return a->s > b->s ? -1 : 1;
	if ((c = strcmp(o->names[a->v], o->names[b->v])))
		return c;
	return (a->v > b->v) - (a->v < b->v);
}

/* A sort, not insertion (on Linux, impact of kmalloc ranks thousands of files). */
void impact_order(struct impact_rank *r, size_t nr, const struct impact_hit *h,
		  char *const *names, int sym)
{
	struct order_ctx o = { h, names, sym };

	if (nr > 1)
		qsort_r(r, nr, sizeof(*r), cmp_rank, &o);
}

/* Does path define sym?  (A symbol it does not define is an error, not the file's list.) */
static int defines(struct refs *r, const char *path, const char *sym)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT 1 FROM defs d JOIN files f ON f.blob_id = d.blob_id "
				     "WHERE f.path = ?1 AND d.name = ?2 LIMIT 1");
	int defined;

	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, sym, -1, SQLITE_STATIC);
	defined = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return defined;
}

/* The import signal: 1 / distance over reverse imports, to o.depth levels. */
static void import_signal(struct refs *r, const struct digraph *g, int start, struct impact_hit *h)
{
	int *dist = xmalloc((g->n + 1) * sizeof(int));

	digraph_reverse_distance(g, start, r->o.depth, dist);
	for (size_t i = 0; i < g->n; i++)
		if (dist[i] > 0) {
			h[i].depth = dist[i];
			h[i].imp = 1.0 / dist[i];
		}
	free(dist);
}

/*
 * The reference signal: references to the symbol, or to every symbol the
 * file defines.  A reference to the symbol counts where it can reach this
 * definition: its file imports the file (or, in C and C++, a file declaring
 * the name, a header), or no other file defines the name.  A namesake's
 * callers are not the symbol's: a call bound (callwalk_binds()) to other
 * definitions only, such as self.run() in a class that has its own run, does
 * not count.
 */
static int in_file(const char *dpath, const char *scope, void *path)
{
	(void)scope;
	return !strcmp(dpath, path);
}

/* The calls of the symbol, read with its references for call_signal()
 * (callwalk_preset()): the strings are the sites'. */
struct site_list {
	struct callwalk_site *v;
	size_t nr, alloc;
};

static void sites_release(struct site_list *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		if (!i || l->v[i].path != l->v[i - 1].path)
			free((char *)l->v[i].path);
		free((char *)l->v[i].scope);
	}
	free(l->v);
}

/* One reference of the symbol in one file (a blob's references are its files'). */
struct sym_ref {
	int node;		/* the file */
	int call;		/* a call (kind "call") */
	enum bind_recv recv;
	long line, col;
	sqlite3_int64 id, blob;	/* refs' rowid (the last key of the order), blob */
	char *scope;		/* NULL at top level */
};

static void add_site(struct site_list *l, const char *p, const struct sym_ref *x)
{
	struct callwalk_site *c;

	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	c = &l->v[l->nr];
	/* in path order: a file's calls share its path */
	c->path = l->nr && !strcmp(l->v[l->nr - 1].path, p) ? l->v[l->nr - 1].path : xstrdup(p);
	c->scope = x->scope ? xstrdup(x->scope) : NULL;
	c->blob = x->blob;
	c->line = x->line;
	c->col = x->col;
	c->recv = x->recv;
	l->nr++;
}

/* Each file's blob, sorted by blob then node (a blob may be several files'). */
struct blob_node {
	sqlite3_int64 blob;
	int node;
};

struct blob_nodes {
	struct blob_node *v;
	size_t nr, alloc;
};

static int cmp_blob_node(const void *x, const void *y)
{
	const struct blob_node *a = x, *b = y;

	if (a->blob != b->blob)
		return a->blob < b->blob ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

/* The first of blob's files in bn, or bn->nr. */
static size_t blob_first(const struct blob_nodes *bn, sqlite3_int64 blob)
{
	size_t lo = 0, hi = bn->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (bn->v[mid].blob < blob)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* In path (node), line, col order, as `ORDER BY f.path, r.line, r.col` read them. */
static int cmp_sym_ref(const void *x, const void *y)
{
	const struct sym_ref *a = x, *b = y;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Mark (1) in reach[] each file that imports path. */
static void mark_importers(struct refs *r, const struct digraph *g, sqlite3_stmt *st, const char *path,
			   char *reach)
{
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int v = digraph_node(g, refs_col(st, 0));
		if (v >= 0)
			reach[v] = 1;
	}
	(void)r;
}

/*
 * The files from which a reference to sym counts (1 in the array returned,
 * g->n long): not path itself; any other when no other file defines sym;
 * else those that import path, and in C and C++ those that import a file
 * defining sym (a header declaring it).
 */
static char *reaching_files(struct refs *r, const struct digraph *g, int start, const char *path, const char *sym)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT EXISTS (SELECT 1 FROM defs d JOIN files g ON g.blob_id = d.blob_id "
				     "WHERE d.name = ?2 AND g.path != ?1), (SELECT b.lang FROM files h "
				     "JOIN blobs b ON b.id = h.blob_id WHERE h.path = ?1) IN ('c', 'cpp')");
	sqlite3_stmt *imp = refs_prep(r, "SELECT path FROM imports WHERE resolved = ?1");
	char *reach = xcalloc(g->n + 1, 1);
	int elsewhere = 1, c = 0;

	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, sym, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		elsewhere = sqlite3_column_int(st, 0);
		c = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	if (!elsewhere)
		memset(reach, 1, g->n);
	else {
		mark_importers(r, g, imp, path, reach);
		if (c) {
			st = refs_prep(r, "SELECT DISTINCT g.path FROM defs d JOIN files g ON g.blob_id = d.blob_id "
				       "WHERE d.name = ?1");
			sqlite3_bind_text(st, 1, sym, -1, SQLITE_STATIC);
			while (sqlite3_step(st) == SQLITE_ROW)
				mark_importers(r, g, imp, refs_col(st, 0), reach);
			sqlite3_finalize(st);
		}
	}
	sqlite3_finalize(imp);
	if (start >= 0)
		reach[start] = 0;
	return reach;
}

/* Every reference of sym, in path, line, col order (joined to the files in
 * C, not by SQL: kfree's 37,000 references). */
static struct sym_ref *sym_refs(struct refs *r, const struct blob_nodes *bn, const char *sym, size_t *nr)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT rowid, blob_id, kind, line, col, scope, recv FROM refs WHERE name = ?1");
	struct sym_ref *v = NULL;
	size_t alloc = 0, n = 0;

	sqlite3_bind_text(st, 1, sym, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 blob = sqlite3_column_int64(st, 1);
		const char *kind = refs_col(st, 2);
		for (size_t i = blob_first(bn, blob); i < bn->nr && bn->v[i].blob == blob; i++) {
			ALLOC_GROW(v, n + 1, alloc);
			v[n] = (struct sym_ref){ bn->v[i].node, kind && !strcmp(kind, "call"),
						 (enum bind_recv)sqlite3_column_int(st, 6), sqlite3_column_int64(st, 3),
						 sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 0), blob,
						 sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL
											  : xstrdup(refs_col(st, 5)) };
			n++;
		}
	}
	sqlite3_finalize(st);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_sym_ref);
	*nr = n;
	return v;
}

/* (cw: the walk's caches of definitions and files, created on first use and
 * shared with call_signal(), which reads the same callers' files; calls: where
 * not NULL, every call of sym, in the order callwalk reads them) */
static void symbol_references(struct refs *r, const struct digraph *g, const struct blob_nodes *bn, int start,
			      const char *path, const char *sym, struct impact_hit *h, struct callwalk **cwp,
			      struct site_list *calls)
{
	char *reach = reaching_files(r, g, start, path, sym);
	size_t nr;
	struct sym_ref *v = sym_refs(r, bn, sym, &nr);
	struct callwalk *cw = *cwp;

	for (size_t i = 0; i < nr; i++) {
		const struct sym_ref *x = &v[i];
		int u = x->node;
		if (calls && x->call)
			add_site(calls, g->names[u], x);
		if (!reach[u])
			continue;	/* a reference that cannot reach the definition */
		/* a call bound to a namesake (another class's method, self.f()
		 * of the caller's own class) is not a use of this definition */
		if (x->call && !callwalk_binds(cw ? cw : (cw = callwalk_new(r)), g->names[u], x->blob, sym, x->scope,
					       x->line, x->col, x->recv, in_file, (void *)path))
			continue;
		h[u].refs++;
		h[u].ref = 1.0 - 1.0 / (1.0 + (double)h[u].refs / 2.0);
	}
	for (size_t i = 0; i < nr; i++)
		free(v[i].scope);
	free(v);
	free(reach);
	*cwp = cw;
}

/* The reference signal of a file: the references to every symbol it defines,
 * counted by blob, then given to its files (list.h: 57,000 references). */
static void file_references(struct refs *r, const struct digraph *g, const char *path, struct impact_hit *h)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT f.path, x.n FROM (SELECT r.blob_id, count(*) AS n FROM refs r "
				     "WHERE r.name IN (SELECT d.name FROM defs d JOIN files g ON g.blob_id = d.blob_id "
				     "WHERE g.path = ?1 AND length(d.name) > 2) GROUP BY r.blob_id) x "
				     "JOIN files f ON f.blob_id = x.blob_id WHERE f.path != ?1");

	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int v = digraph_node(g, refs_col(st, 0));
		if (v < 0)
			continue;
		h[v].refs += sqlite3_column_int64(st, 1);
		h[v].ref = 1.0 - 1.0 / (1.0 + (double)h[v].refs / 2.0);
	}
	sqlite3_finalize(st);
}

/*
 * The call signal of a symbol: 1 / d for a file with a call that reaches it
 * through d levels of calls (callwalk.h's binding, to --depth levels, at
 * least 1); call_depth the smallest d.
 */
struct call_arg {
	const struct digraph *g;
	struct impact_hit *h;
};

static void on_caller(const char *path, long depth, void *arg)
{
	struct call_arg *a = arg;
	int v = digraph_node(a->g, path);

	if (v >= 0 && (!a->h[v].call_depth || depth < a->h[v].call_depth)) {
		a->h[v].call_depth = (int)depth;
		a->h[v].call = 1.0 / (double)depth;
	}
}

static void call_signal(struct refs *r, const struct digraph *g, const char *path, const char *sym,
			struct impact_hit *h, struct callwalk **cwp, const struct site_list *calls)
{
	struct call_arg a = { g, h };

	if (!*cwp)
		*cwp = callwalk_new(r);
	callwalk_preset(*cwp, sym, calls->v, calls->nr);
	callwalk_callers(*cwp, path, sym, r->o.depth > 1 ? r->o.depth : 1, on_caller, &a);
}

/*
 * Python's index keeps only the calls of a name: a direct importer with no
 * reference counted references sym once for each line (outside its imports
 * and comments) that names it without calling or defining it, as the name
 * its `from m import sym` binds (HOOKS = [sym]) or as mod.sym of a module it
 * imports the file as (import pkg.mod: mod.sym).  A call was the binder's
 * to judge: self.sym() of a class with its own sym is a namesake's.
 */
static int is_idc(int c)
{
	return isalnum(c) || c == '_';
}

/* Does s name w as a whole word (bare: not after a dot; else after "mod.")? */
static int names_word(const char *s, const char *w, const char *mod)
{
	size_t wl = strlen(w), ml = mod ? strlen(mod) : 0;

	for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) {
		const char *a = p + wl, *b = p;
		if ((p > s && is_idc((unsigned char)p[-1])) || is_idc((unsigned char)*a))
			continue;
		a += strspn(a, " \t");
		if (*a == '(')
			continue;	/* a call */
		while (b > s && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if ((b - s >= 4 && !strncmp(b - 4, "def", 3)) || (b - s >= 6 && !strncmp(b - 6, "class", 5)))
			continue;	/* its own definition of the name */
		if (!mod && (p == s || p[-1] != '.'))
			return 1;
		if (mod && p - s > (ptrdiff_t)ml && p[-1] == '.' && !strncmp(p - 1 - ml, mod, ml) &&
		    (p - 1 - ml == s || !is_idc((unsigned char)p[-2 - (ptrdiff_t)ml])))
			return 1;
	}
	return 0;
}

static void free_text(struct rs_text *t)
{
	for (long l = 0; l < t->lines_nr; l++)
		free(t->lines[l]);
	free(t->lines);
	for (size_t i = 0; i < t->imps_nr; i++) {
		free(t->imps[i].target);
		free(t->imps[i].resolved);
	}
	free(t->imps);
}

static long python_mentions(struct refs *r, const char *file, const char *path, const char *sym)
{
	struct rs_text t;
	long n = 0;
	int in_import = 0, from_path = 0, bound = 0;	/* in `from m import (`...`)`; a from-import of path names sym */
	const char *mod = NULL;

	if (!refs_file_text(r, file, &t) || !t.python)
		goto done;
	for (size_t i = 0; i < t.imps_nr; i++)
		if (t.imps[i].resolved && !strcmp(t.imps[i].resolved, path)) {
			const char *dot = strrchr(t.imps[i].target, '.');
			mod = dot ? dot + 1 : t.imps[i].target;
		}
	for (long l = 0; l < t.lines_nr; l++) {
		char *s = t.lines[l], *hash;
		const char *p;
		if (!s)
			continue;
		if ((hash = strchr(s, '#')))
			*hash = '\0';	/* a comment (a '#' in a string cuts it short: fewer, not more) */
		p = s + strspn(s, " \t");
		if (in_import || !strncmp(p, "from ", 5) || !strncmp(p, "import ", 7)) {
			if (!in_import) {
				from_path = 0;	/* the statement's import row resolves to path */
				for (size_t i = 0; i < t.imps_nr; i++)
					from_path |= t.imps[i].line == l + 1 && t.imps[i].resolved &&
						     !strcmp(t.imps[i].resolved, path) && !strncmp(p, "from ", 5);
			}
			if (!in_import && strchr(p, '(') && !strchr(p, ')'))
				in_import = 1;
			else if (in_import && strchr(p, ')'))
				in_import = 0;
			bound |= from_path && names_word(s, sym, NULL);
			continue;
		}
		n += (bound && names_word(s, sym, NULL)) || (mod && *mod && names_word(s, sym, mod));
	}
done:
	free_text(&t);
	return n;
}

/* (an importer not in Python is passed over by one prepared query, not read:
 * kmalloc's header has thousands of C importers) */
static void mention_signal(struct refs *r, const struct digraph *g, const char *path, const char *sym,
			   struct impact_hit *h)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT 1 FROM files f JOIN blobs b ON b.id = f.blob_id "
				     "WHERE f.path = ?1 AND b.lang = 'python'");

	for (size_t v = 0; v < g->n; v++) {
		long n;
		int python;
		if (h[v].depth != 1 || h[v].refs || h[v].call_depth)
			continue;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, g->names[v], -1, SQLITE_STATIC);
		python = sqlite3_step(st) == SQLITE_ROW;
		if (!python || !(n = python_mentions(r, g->names[v], path, sym)))
			continue;
		h[v].refs = n;
		h[v].ref = 1.0 - 1.0 / (1.0 + (double)n / 2.0);
	}
	sqlite3_finalize(st);
}

/* The coupling signal, when ci-couple's records are in the index. */
static void coupling_signal(struct refs *r, const struct digraph *g, const char *path, struct impact_hit *h)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT CASE WHEN a = ?1 THEN b ELSE a END, score, co_changes "
				     "FROM coupling WHERE a = ?1 OR b = ?1");

	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int v = digraph_node(g, refs_col(st, 0));
		if (v < 0)
			continue;
		h[v].cpl = sqlite3_column_double(st, 1);
		h[v].co_changes = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
}

static void emit_impact(struct refs *r, const char *path, double s, const struct impact_hit *x)
{
	nd_begin(&r->out, "impact");
	nd_str(&r->out, "path", path);
	nd_num(&r->out, "score", (double)(long)(s * 1000 + 0.5) / 1000);
	nd_key(&r->out, "signals");
	buf_addch(&r->out, '{');
	buf_addf(&r->out, "\"import\":%.3g,\"reference\":%.3g,\"coupling\":%.3g,\"semantic\":%.3g",
		 x->imp, x->ref, x->cpl, round(x->sem * 1000) / 1000);
	if (x->call_depth)
		buf_addf(&r->out, ",\"call\":%.3g", x->call);
	buf_addch(&r->out, '}');
	if (x->depth)
		nd_int(&r->out, "depth", x->depth);
	if (x->call_depth)
		nd_int(&r->out, "call_depth", x->call_depth);
	if (x->refs)
		nd_int(&r->out, "references", x->refs);
	if (x->co_changes)
		nd_int(&r->out, "co_changes", x->co_changes);
	nd_str(&r->out, "confidence", "syntactic");
	nd_end(&r->out);
	refs_flush(r);
}

/* Rank the files with a signal (but start) and write them; returns how many. */
static size_t rank_and_emit(struct refs *r, const struct digraph *g, int start, int sym,
			    struct impact_hit *h)
{
	struct impact_rank *rk = xmalloc((g->n + 1) * sizeof(*rk));
	size_t nr = 0, i, found = 0;

	/* the signals not asked for count for nothing */
	for (i = 0; i < g->n; i++) {
		if (!(r->o.mode & REFS_M_DEPS))
			h[i].imp = h[i].ref = h[i].call = 0, h[i].depth = h[i].call_depth = 0, h[i].refs = 0;
		if (!(r->o.mode & REFS_M_COUPLING))
			h[i].cpl = 0, h[i].co_changes = 0;
	}
	for (i = 0; i < g->n; i++) {
		if ((int)i == start || (!h[i].imp && !h[i].ref && !h[i].cpl && !h[i].sem && !h[i].call))
			continue;
		rk[nr].v = (int)i;
		rk[nr].s = impact_score(&h[i], r->o.mode);
		nr++;
	}
	impact_order(rk, nr, h, g->names, sym);
	for (i = 0; i < nr && r->emitted < r->o.limit; i++) {
		if (!refs_path_ok(r, g->names[rk[i].v]))
			continue;
		emit_impact(r, g->names[rk[i].v], rk[i].s, &h[rk[i].v]);
		r->emitted++;
		found++;
	}
	free(rk);
	return found;
}

/* A frontier this large is expanded by one pass over the imports, not a
 * lookup per file (list.h's 1,800 importers import it from 55,000 rows),
 * unless the index has imports_resolved_path: its lookups read no table row
 * (on Linux, kmalloc's 8,900 importers: 18 ms against 72 for the pass) */
enum { IMPORT_SCAN_MIN = 512 };

/* Does the index have the (resolved, path) index on imports (schema.sql)?  An
 * index built before it answers the same, with imports(resolved) alone. */
static int imports_covered(struct refs *r)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT 1 FROM sqlite_master WHERE type = 'index' "
				     "AND name = 'imports_resolved_path'");
	int yes = sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	return yes;
}

static size_t name_hash(const char *s)
{
	size_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/*
 * One level of load_importers() in one pass over the imports: the edge
 * x -> y of each import of a frontier file y (in front[0..fn), a set hashed
 * by name), each new x added to next[]; returns how many.  The same edges
 * as a lookup per frontier file (digraph_finish() keeps each once).
 */
static size_t expand_by_scan(struct refs *r, struct digraph *g, const int *front, size_t fn, char *seen,
			     int *next)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT path, resolved FROM imports WHERE resolved IS NOT NULL");
	size_t mask = 1, nn = 0;
	int *slot, x = -1;
	char *last = NULL;

	while (mask < 4 * fn)
		mask <<= 1;
	slot = xmalloc(mask * sizeof(*slot));
	mask--;
	for (size_t k = 0; k <= mask; k++)
		slot[k] = -1;
	for (size_t i = 0; i < fn; i++) {
		size_t k = name_hash(g->names[front[i]]) & mask;
		while (slot[k] >= 0)
			k = (k + 1) & mask;
		slot[k] = front[i];
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *p = refs_col(st, 0), *res = refs_col(st, 1);
		size_t k = name_hash(res) & mask;
		int y;
		while ((y = slot[k]) >= 0 && strcmp(g->names[y], res))
			k = (k + 1) & mask;
		if (y < 0)
			continue;
		if (!last || strcmp(last, p)) {	/* a file's imports come together */
			free(last);
			last = xstrdup(p);
			x = digraph_node(g, p);
		}
		if (x < 0)
			continue;
		digraph_add_edge(g, x, y);
		if (!seen[x]) {
			seen[x] = 1;
			next[nn++] = x;
		}
	}
	sqlite3_finalize(st);
	free(last);
	free(slot);
	return nn;
}

/*
 * The import graph impact needs: every file as a node, and only the imports
 * that reach path within depth levels, read backwards through the index on
 * imports(resolved) (the reverse distances are those of the whole graph; on
 * Linux the whole graph is 350,000 imports, most of them never reached).
 */
static void load_importers(struct refs *r, struct digraph *g, struct blob_nodes *bn, const char *path, long depth)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT path, blob_id FROM files ORDER BY path");
	int *front, *next, start;
	size_t fn = 1, nn, scan_min;
	char *seen;

	memset(g, 0, sizeof(*g));
	memset(bn, 0, sizeof(*bn));
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(bn->v, bn->nr + 1, bn->alloc);
		bn->v[bn->nr++] = (struct blob_node){ sqlite3_column_int64(st, 1), (int)g->n };
		digraph_add_node(g, refs_col(st, 0));
	}
	sqlite3_finalize(st);
	if (bn->nr > 1)
		qsort(bn->v, bn->nr, sizeof(*bn->v), cmp_blob_node);
	digraph_nodes_done(g);
	start = digraph_node(g, path);
	if (start < 0) {
		digraph_finish(g);
		return;
	}
	scan_min = imports_covered(r) ? SIZE_MAX : IMPORT_SCAN_MIN;
	st = refs_prep(r, "SELECT DISTINCT path FROM imports WHERE resolved = ?1");
	seen = xcalloc(g->n + 1, 1);
	front = xmalloc((g->n + 1) * sizeof(int));
	next = xmalloc((g->n + 1) * sizeof(int));
	front[0] = start;
	seen[start] = 1;
	for (long d = 0; d < depth && fn; d++) {
		int *t;
		nn = 0;
		if (fn >= scan_min)
			nn = expand_by_scan(r, g, front, fn, seen, next);
		for (size_t i = 0; i < fn && fn < scan_min; i++) {
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, g->names[front[i]], -1, SQLITE_STATIC);
			while (sqlite3_step(st) == SQLITE_ROW) {
				int x = digraph_node(g, refs_col(st, 0));
				if (x < 0)
					continue;
				digraph_add_edge(g, x, front[i]);
				if (!seen[x]) {
					seen[x] = 1;
					next[nn++] = x;
				}
			}
		}
		t = front;
		front = next;
		next = t;
		fn = nn;
	}
	sqlite3_finalize(st);
	free(seen);
	free(front);
	free(next);
	digraph_finish(g);
}

int refs_impact(struct refs *r, const char *arg)
{
	char *copy = xstrdup(arg), *colon = strrchr(copy, ':'), *sym = NULL, *path;
	struct digraph g;
	struct blob_nodes bn;
	struct impact_hit *h = NULL;
	struct callwalk *cw = NULL;	/* shared by the reference and call signals */
	struct site_list calls = { NULL, 0, 0 };	/* sym's calls, read once for both */
	int start, no_vectors = 0, ret = EXIT_NOTHING;
	size_t found = 0;

	if (colon && colon != copy && colon[1] && !strchr(colon + 1, '/')) {
		*colon = '\0';
		sym = colon + 1;
	}
	path = refs_file_arg(r, copy);
	load_importers(r, &g, &bn, path, r->o.depth);
	start = digraph_node(&g, path);
	if (start < 0) {
		error("'%s' is not in the index (run 'ci-index update'?)", path);
		goto done;
	}
	if (sym && !defines(r, path, sym)) {
		error("no definition of '%s' in '%s'", sym, path);
		goto done;
	}
	h = xcalloc(g.n + 1, sizeof(*h));
	import_signal(r, &g, start, h);
	if (sym)
		symbol_references(r, &g, &bn, start, path, sym, h, &cw, r->o.mode & REFS_M_DEPS ? &calls : NULL);
	else
		file_references(r, &g, path, h);
	if (sym && (r->o.mode & REFS_M_DEPS)) {
		call_signal(r, &g, path, sym, h, &cw, &calls);
		mention_signal(r, &g, path, sym, h);
	}
	coupling_signal(r, &g, path, h);
	if ((r->o.mode & REFS_M_SEMANTIC) && !semantic_signal(r, &g, start, h) && r->o.mode == REFS_M_SEMANTIC) {
		error("impact --mode semantic needs chunk vectors of '%s' in the index: "
		      "run 'ci-index --embed update'", path);
		no_vectors = 1;
	}
	if (!no_vectors)
		found = rank_and_emit(r, &g, start, sym != NULL, h);
	if (!found && !no_vectors)
		error("nothing in the index depends on '%s%s%s'", path, sym ? ":" : "", sym ? sym : "");
	ret = no_vectors ? EXIT_USAGE : found ? EXIT_OK : EXIT_NOTHING;
done:
	callwalk_free(cw);
	sites_release(&calls);
	free(bn.v);
	free(h);
	digraph_release(&g);
	free(path);
	free(copy);
	return ret;
}
