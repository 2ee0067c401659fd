/*
 * gsdelta.c: the incremental path of the stored graph answers (gstore.h).
 *
 * A definition's counts (uses, self calls, namesake calls) are sums over
 * the files of what each contributes, and what an unchanged file
 * contributes to the definitions of a name changes only when that name's
 * definitions change (in the changed files: one added or removed, or of
 * another kind or scope; a move within its file is none) or when the file's
 * imports do (then the full path is taken).  So, with C the changed files
 * (re-read or removed) and U the names whose definitions changed:
 *   - before the update writes, C as it was is bound (cgraph_load_part()):
 *     what C gave each definition of an unchanged file, and what the other
 *     files gave each definition of C (stored minus C's share);
 *   - after, C as it is now is bound: an unchanged file's definition of a
 *     name outside U gets stored - before + now; a definition of C of a name
 *     outside U gets what the others gave its counterpart before (same name,
 *     kind, scope, order in the file) + what C gives it now;
 *   - every definition of a name of U is counted anew: every file that
 *     references or defines such a name is re-bound (F), and the mentions
 *     of those names in every other file are counted;
 *   - the calls between files: those from F (and from files gone) replace
 *     the stored ones (F's calls are bound whole).
 */
#include "core/common.h"
#include "graph/gstore.h"
#include "index/index.h"

/* Counts of a definition, or a share of them. */
struct gs_count {
	long uses, self_calls, namesake_calls;
};

/* A definition of a changed file before the update. */
struct gs_old {
	char *key;		/* "path\tname\tkind\tscope", then "\t<n>": its order among those */
	char *name;
	struct gs_count ext;	/* what the other files gave it */
};

/* What the changed files gave a definition of an unchanged file. */
struct gs_share {
	char *path, *name;
	sqlite3_int64 rowid;
	struct gs_count c;
};

struct gstore_pre {
	int ok;				/* the incremental path may still apply */
	int committed;			/* the update reached its commit */
	char **paths;			/* the changed files, strcmp order */
	size_t paths_nr;
	struct gs_old *old;		/* their definitions before, in cgraph order */
	size_t old_nr, old_alloc;
	struct gs_share *share;
	size_t share_nr, share_alloc;
	char **prefixes;		/* the strings of names looked up at run time in them, sorted */
	size_t prefixes_nr;
	char **classes;			/* the names of their classes, one per class, sorted */
	size_t classes_nr, classes_alloc;
	const char *why;		/* why the incremental path does not apply, or NULL */
};

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int has_str(char *const *v, size_t nr, const char *s)
{
	return nr && bsearch(&s, v, nr, sizeof(*v), cmp_str) != NULL;
}

/* A file whose calls follow imports and aliases through other files' text:
 * Python (resolve.h), TS/JS (jstype.h: re-exports, imported classes). */
static int binds_across(const char *lang, const char *path)
{
	return (lang && (!strcmp(lang, "python") || !strcmp(lang, "javascript") || !strcmp(lang, "typescript") ||
			 !strcmp(lang, "tsx"))) || bind_is_js(path);
}

/* The counts of definition d of g. */
static struct gs_count counts_of(const struct cgraph *g, const struct cg_def *d)
{
	struct cg_counts c = cgraph_counts(g, (size_t)(d - g->defs));

	return (struct gs_count){ gstore_uses(d), c.self_calls, c.namesake_calls };
}

static int zero(struct gs_count c)
{
	return !c.uses && !c.self_calls && !c.namesake_calls;
}

/* "path\tname\tkind\tscope" of d (a NULL scope written "\1"). */
static char *sig_of(const struct cgraph *g, const struct cg_def *d)
{
	return xasprintf("%s\t%s\t%s\t%s", cg_path(g, d), cg_name(g, d), cg_kind(g, d),
			 d->scope_at ? cg_scope(g, d) : "\1");
}

static int base_valid(sqlite3 *db)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (sqlite3_prepare_v2(db, "SELECT version FROM graph_base", -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW)
		ok = sqlite3_column_int64(st, 0) == GSTORE_VERSION;
	sqlite3_finalize(st);
	return ok;
}

struct gstore_pre *gstore_begin(struct refs *r)
{
	struct gstore_pre *p;

	if (!gstore_valid(r) || !base_valid(r->db) ||
	    sqlite3_exec(r->db, "INSERT INTO graph_session VALUES (0)", NULL, NULL, NULL) != SQLITE_OK)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->ok = 1;
	return p;
}

/* The incremental path cannot apply: the update's further writes empty the base. */
static void give_up(struct gstore_pre *p, struct refs *r, const char *why)
{
	p->ok = 0;
	p->why = why;
	sqlite3_exec(r->db, "DELETE FROM graph_session", NULL, NULL, NULL);
}

static long count_files(struct refs *r)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT count(*) FROM files");
	long n = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : 0;

	sqlite3_finalize(st);
	return n;
}

/* The stored counts of the definition (rowid) of path into *c; 0 if none. */
static int stored(sqlite3_stmt *st, const char *path, sqlite3_int64 rowid, struct gs_count *c)
{
	int ok;

	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, rowid);
	ok = sqlite3_step(st) == SQLITE_ROW;
	if (ok)
		*c = (struct gs_count){ (long)sqlite3_column_int64(st, 0), (long)sqlite3_column_int64(st, 1),
					(long)sqlite3_column_int64(st, 2) };
	return ok;
}

/* The prefixes of g, sorted, into *out. */
static size_t copy_prefixes(const struct cgraph *g, char ***out)
{
	*out = xcalloc(g->prefixes_nr + 1, sizeof(**out));
	for (size_t i = 0; i < g->prefixes_nr; i++)
		(*out)[i] = xstrdup(g->prefixes[i]);
	if (g->prefixes_nr)
		qsort(*out, g->prefixes_nr, sizeof(**out), cmp_str);
	return g->prefixes_nr;
}

/* Many changed files, or a Python or TS/JS file among them (their calls
 * follow imports through other files' text). */
static int too_much(const struct cgraph *g, char *const *paths, size_t nr)
{
	if (nr > 64 + g->files_nr / 50)
		return 1;
	for (size_t i = 0; i < nr; i++) {
		int f = cgraph_file(g, paths[i]);
		if (f >= 0 && binds_across(g->files[f].lang, g->files[f].path))
			return 1;
	}
	return 0;
}

struct key_ix {
	char *key;
	size_t i;
};

static int cmp_key_ix(const void *x, const void *y)
{
	const struct key_ix *a = x, *b = y;
	int c = strcmp(a->key, b->key);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* Each *keys[i] (i < nr, in cgraph order) given "\t<n>": n of its equals before it. */
static void number_keys(char ***keys, size_t nr)
{
	struct key_ix *k = xmalloc((nr + 1) * sizeof(*k));

	for (size_t i = 0; i < nr; i++)
		k[i] = (struct key_ix){ *keys[i], i };
	if (nr)
		qsort(k, nr, sizeof(*k), cmp_key_ix);
	for (size_t i = 0, n = 0; i < nr; i++) {
		n = i && !strcmp(k[i - 1].key, k[i].key) ? n + 1 : 0;
		*keys[k[i].i] = xasprintf("%s\t%zu", k[i].key, n);
	}
	for (size_t i = 0; i < nr; i++)
		free(k[i].key);
	free(k);
}

/* The old definitions of the changed files, numbered among their equals. */
static void number_old(struct gstore_pre *p)
{
	char ***keys = xmalloc((p->old_nr + 1) * sizeof(*keys));

	for (size_t i = 0; i < p->old_nr; i++)
		keys[i] = &p->old[i].key;
	number_keys(keys, p->old_nr);
	free(keys);
}

/* Is one of paths[0..n) a Python or TS/JS file of the index (binds_across())? */
static int python_among(struct refs *r, const char *const *paths, size_t n)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT 1 FROM files f JOIN blobs b ON b.id = f.blob_id "
				     "WHERE f.path = ?1 AND b.lang IN ('python', 'javascript', 'typescript', 'tsx')");
	int yes = 0;

	for (size_t i = 0; !yes && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, paths[i], -1, SQLITE_STATIC);
		yes = sqlite3_step(st) == SQLITE_ROW || bind_is_js(paths[i]);
	}
	sqlite3_finalize(st);
	return yes;
}

void gstore_changed(struct gstore_pre *p, struct refs *r, const char *const *paths, size_t n)
{
	struct cgraph g;
	sqlite3_stmt *st;

	if (!p || !p->ok)
		return;
	p->paths = xcalloc(n + 1, sizeof(*p->paths));
	for (size_t i = 0; i < n; i++)
		p->paths[p->paths_nr++] = xstrdup(paths[i]);
	if (n > 64 + (size_t)count_files(r) / 50 || python_among(r, paths, n)) {
		give_up(p, r, "many files or a Python or TS/JS file changed");
		return;
	}
	cgraph_load_part(&g, r, paths, n, NULL, 0, 0, NULL, 0);
	if (too_much(&g, p->paths, p->paths_nr)) {
		cgraph_release(&g);
		give_up(p, r, "many files or a Python or TS/JS file changed");
		return;
	}
	p->prefixes_nr = copy_prefixes(&g, &p->prefixes);
	st = refs_prep(r, "SELECT g.uses, g.self_calls, g.namesake_calls FROM graph_defs g JOIN graph_files f "
		       "ON f.id = g.fid WHERE f.path = ?1 AND g.def = ?2");
	for (size_t i = 0; p->ok && i < g.defs_nr; i++) {
		const struct cg_def *d = &g.defs[i];
		struct gs_count c = counts_of(&g, d), s;

		if (has_str(p->paths, p->paths_nr, cg_path(&g, d))) {
			if (!stored(st, cg_path(&g, d), d->rowid, &s)) {
				give_up(p, r, "the stored answers lack a definition");
				break;
			}
			ALLOC_GROW(p->old, p->old_nr + 1, p->old_alloc);
			p->old[p->old_nr++] = (struct gs_old){ sig_of(&g, d), xstrdup(cg_name(&g, d)),
				{ s.uses - c.uses, s.self_calls - c.self_calls, s.namesake_calls - c.namesake_calls } };
			if (!strcmp(cg_kind(&g, d), "class")) {
				ALLOC_GROW(p->classes, p->classes_nr + 1, p->classes_alloc);
				p->classes[p->classes_nr++] = xstrdup(cg_name(&g, d));
			}
		} else if (!zero(c)) {
			ALLOC_GROW(p->share, p->share_nr + 1, p->share_alloc);
			p->share[p->share_nr++] = (struct gs_share){ xstrdup(cg_path(&g, d)), xstrdup(cg_name(&g, d)), d->rowid, c };
		}
	}
	sqlite3_finalize(st);
	cgraph_release(&g);
	number_old(p);
	if (p->classes_nr)
		qsort(p->classes, p->classes_nr, sizeof(*p->classes), cmp_str);
}

void gstore_commit(struct gstore_pre *p, struct refs *r)
{
	sqlite3_stmt *st;

	if (!p)
		return;
	if (p->ok && sqlite3_prepare_v2(r->db, "SELECT imports FROM graph_session", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			if (sqlite3_column_int(st, 0)) {
				p->ok = 0;
				p->why = "an unchanged file's import resolved anew";
			}
		sqlite3_finalize(st);
	}
	sqlite3_exec(r->db, "DELETE FROM graph_session", NULL, NULL, NULL);
	p->committed = 1;
}

void gstore_pre_free(struct gstore_pre *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->paths_nr; i++)
		free(p->paths[i]);
	free(p->paths);
	for (size_t i = 0; i < p->old_nr; i++) {
		free(p->old[i].key);
		free(p->old[i].name);
	}
	free(p->old);
	for (size_t i = 0; i < p->share_nr; i++) {
		free(p->share[i].path);
		free(p->share[i].name);
	}
	free(p->share);
	for (size_t i = 0; i < p->prefixes_nr; i++)
		free(p->prefixes[i]);
	free(p->prefixes);
	for (size_t i = 0; i < p->classes_nr; i++)
		free(p->classes[i]);
	free(p->classes);
	free(p);
}

/* One refresh, after the update. */
struct delta {
	struct refs *r;
	struct gstore_pre *p;
	struct cgraph now;	/* the changed files as they are, read */
	struct cgraph part;	/* F read, the names of U counted anew */
	char **u;		/* U: the names whose definitions changed, sorted */
	size_t u_nr, u_alloc;
	char **f;		/* F: the files re-bound, sorted */
	size_t f_nr, f_alloc;
	char **prefixes;	/* the index's (graph_prefixes) */
	size_t prefixes_nr, prefixes_alloc;
	char **keys;		/* per definition of now, its numbered key (changed files' only) */
	struct gs_count *counts;	/* per definition of part in a changed file: its counts */
};

static void add_str(char ***v, size_t *nr, size_t *alloc, const char *s)
{
	ALLOC_GROW(*v, *nr + 1, *alloc);
	(*v)[(*nr)++] = xstrdup(s);
}

static void uniq_strs(char **v, size_t *nr)
{
	size_t m = 0;

	if (*nr)
		qsort(v, *nr, sizeof(*v), cmp_str);
	for (size_t i = 0; i < *nr; i++) {
		if (m && !strcmp(v[m - 1], v[i]))
			free(v[i]);
		else
			v[m++] = v[i];
	}
	*nr = m;
}

static int in_c(const struct delta *d, const char *path)
{
	return has_str(d->p->paths, d->p->paths_nr, path);
}

static int cmp_old_key(const void *x, const void *y)
{
	return strcmp(((const struct gs_old *)x)->key, ((const struct gs_old *)y)->key);
}

static const struct gs_old *find_old(const struct delta *d, const char *key)
{
	struct gs_old k = { (char *)key, NULL, { 0, 0, 0 } };

	return d->p->old_nr ? bsearch(&k, d->p->old, d->p->old_nr, sizeof(k), cmp_old_key) : NULL;
}

/* U: the names of the changed files' definitions, before or now, that have
 * no equal (path, name, kind, scope, order among equals) on the other side. */
static void changed_names(struct delta *d)
{
	struct gstore_pre *p = d->p;
	char ***at = xmalloc((d->now.defs_nr + 1) * sizeof(*at));
	char **now = xcalloc(d->now.defs_nr + 1, sizeof(*now));
	size_t n = 0;

	d->keys = xcalloc(d->now.defs_nr + 1, sizeof(*d->keys));
	for (size_t i = 0; i < d->now.defs_nr; i++)
		if (in_c(d, cg_path(&d->now, &d->now.defs[i]))) {
			d->keys[i] = sig_of(&d->now, &d->now.defs[i]);
			at[n++] = &d->keys[i];
		}
	number_keys(at, n);
	free(at);
	if (p->old_nr)
		qsort(p->old, p->old_nr, sizeof(*p->old), cmp_old_key);
	/* the new ones that have no equal before, and the other way round */
	n = 0;
	for (size_t i = 0; i < d->now.defs_nr; i++) {
		if (!d->keys[i])
			continue;
		now[n++] = d->keys[i];
		if (!find_old(d, d->keys[i]))
			add_str(&d->u, &d->u_nr, &d->u_alloc, cg_name(&d->now, &d->now.defs[i]));
	}
	if (n)
		qsort(now, n, sizeof(*now), cmp_str);
	for (size_t i = 0; i < p->old_nr; i++)
		if (!has_str(now, n, p->old[i].key))
			add_str(&d->u, &d->u_nr, &d->u_alloc, p->old[i].name);
	free(now);
	uniq_strs(d->u, &d->u_nr);
}

/* F: the changed files there now, and every file that references or
 * defines a name of U. */
static void affected_files(struct delta *d)
{
	sqlite3_stmt *st = refs_prep(d->r, "SELECT f.path FROM refs r JOIN files f ON f.blob_id = r.blob_id "
				     "WHERE r.name = ?1 UNION SELECT f.path FROM defs x JOIN files f "
				     "ON f.blob_id = x.blob_id WHERE x.name = ?1");

	for (size_t i = 0; i < d->p->paths_nr; i++)
		if (cgraph_file(&d->now, d->p->paths[i]) >= 0)
			add_str(&d->f, &d->f_nr, &d->f_alloc, d->p->paths[i]);
	for (size_t i = 0; i < d->u_nr; i++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, d->u[i], -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW)
			add_str(&d->f, &d->f_nr, &d->f_alloc, refs_col(st, 0));
	}
	sqlite3_finalize(st);
	uniq_strs(d->f, &d->f_nr);
}

/* Is a Python file among g's files (all), or among paths[0..nr)?  With js,
 * a TS/JS file counts too (binds_across()). */
static int has_python(const struct cgraph *g, int all, char *const *paths, size_t nr, int js)
{
	for (size_t f = 0; f < g->files_nr; f++)
		if ((js ? binds_across(g->files[f].lang, g->files[f].path) :
			  g->files[f].lang && !strcmp(g->files[f].lang, "python")) &&
		    (all || has_str(paths, nr, g->files[f].path)))
			return 1;
	return 0;
}

/* The index's strings of names looked up at run time; 0 when it holds as
 * many as cgraph.c keeps (which ones then depends on the files' order). */
static int load_prefixes(struct delta *d)
{
	sqlite3_stmt *st = refs_prep(d->r, "SELECT tok FROM graph_prefixes ORDER BY rowid");

	while (sqlite3_step(st) == SQLITE_ROW)
		add_str(&d->prefixes, &d->prefixes_nr, &d->prefixes_alloc, refs_col(st, 0));
	sqlite3_finalize(st);
	return d->prefixes_nr < 1000;
}

/* How many of v[0..nr) (sorted) are name. */
static size_t count_of(char *const *v, size_t nr, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < nr; i++)
		n += !strcmp(v[i], name);
	return n;
}

/*
 * Does a name have a class somewhere in the index now and none before, or
 * the other way round, where the index has Python files?  (Which Python
 * classes have a base outside the index, and so methods that are entry
 * points, would change: cgraph.c's mark_overrides().)
 */
static int class_comes_or_goes(struct delta *d)
{
	struct gstore_pre *p = d->p;
	char **now = NULL;
	size_t nr = 0, alloc = 0;
	int yes = 0;
	sqlite3_stmt *st;

	for (size_t i = 0; i < d->now.defs_nr; i++)
		if (in_c(d, cg_path(&d->now, &d->now.defs[i])) && !strcmp(cg_kind(&d->now, &d->now.defs[i]), "class"))
			add_str(&now, &nr, &alloc, cg_name(&d->now, &d->now.defs[i]));
	if (nr)
		qsort(now, nr, sizeof(*now), cmp_str);
	st = refs_prep(d->r, "SELECT count(*) FROM defs x JOIN files f ON f.blob_id = x.blob_id "
		       "WHERE x.name = ?1 AND x.kind = 'class'");
	for (int side = 0; !yes && side < 2; side++) {
		char *const *v = side ? p->classes : now;
		size_t vn = side ? p->classes_nr : nr;
		for (size_t i = 0; !yes && i < vn; i++) {
			size_t was = count_of(p->classes, p->classes_nr, v[i]), is = count_of(now, nr, v[i]);
			long total;
			if (was == is || (i && !strcmp(v[i - 1], v[i])))
				continue;
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, v[i], -1, SQLITE_STATIC);
			total = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : 0;
			yes = (total > 0) != (total - (long)is + (long)was > 0);
		}
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < nr; i++)
		free(now[i]);
	free(now);
	return yes && has_python(&d->now, 1, NULL, 0, 0);
}

/* The changed files as they are: may the incremental path go on? */
static int now_applies(struct delta *d)
{
	struct gstore_pre *p = d->p;
	char **pre;
	size_t n;
	int same;

	cgraph_load_part(&d->now, d->r, (const char *const *)p->paths, p->paths_nr, NULL, 0, 0, NULL, 0);
	if (too_much(&d->now, p->paths, p->paths_nr))
		return 0;
	n = copy_prefixes(&d->now, &pre);
	same = n == p->prefixes_nr;
	for (size_t i = 0; i < n; i++) {
		same &= same && !strcmp(pre[i], p->prefixes[i]);
		free(pre[i]);
	}
	free(pre);
	return same && !class_comes_or_goes(d) && load_prefixes(d);
}

/* The definitions of file (an index of both graphs) in g: [*lo, return). */
static size_t file_defs(const struct cgraph *g, int file, size_t *lo)
{
	size_t a = 0, b = g->defs_nr, e;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (g->defs[mid].file < file)
			a = mid + 1;
		else
			b = mid;
	}
	for (e = a; e < g->defs_nr && g->defs[e].file == file; e++)
		;
	*lo = a;
	return e;
}

/* The counts of the changed files' definitions now (d->counts, by part's
 * index); 0 when a definition has no counterpart before where it needs one. */
static int count_changed(struct delta *d)
{
	d->counts = xcalloc(d->part.defs_nr + 1, sizeof(*d->counts));
	for (size_t i = 0; i < d->p->paths_nr; i++) {
		int f = cgraph_file(&d->now, d->p->paths[i]);
		size_t lo1, lo2, hi1, hi2;

		if (f < 0)
			continue;
		hi1 = file_defs(&d->now, f, &lo1);
		hi2 = file_defs(&d->part, f, &lo2);
		if (hi1 - lo1 != hi2 - lo2)
			return 0;
		for (size_t k = 0; k < hi1 - lo1; k++) {
			const struct cg_def *a = &d->now.defs[lo1 + k], *b = &d->part.defs[lo2 + k];
			const struct gs_old *o;
			struct gs_count c = counts_of(&d->now, a);

			if (a->rowid != b->rowid)
				return 0;
			if (has_str(d->u, d->u_nr, cg_name(&d->part, b))) {
				d->counts[lo2 + k] = counts_of(&d->part, b);
				continue;
			}
			if (!(o = find_old(d, d->keys[lo1 + k])))
				return 0;
			d->counts[lo2 + k] = (struct gs_count){ o->ext.uses + c.uses, o->ext.self_calls + c.self_calls,
								o->ext.namesake_calls + c.namesake_calls };
		}
	}
	return 1;
}

static int cmp_share(const void *x, const void *y)
{
	const struct gs_share *a = x, *b = y;
	int c = strcmp(a->path, b->path);

	return c ? c : (a->rowid > b->rowid) - (a->rowid < b->rowid);
}

/* graph_files' id of path (make: a new one if it has none), or -1. */
static sqlite3_int64 file_id(sqlite3 *db, const char *path, int make)
{
	sqlite3_stmt *st;
	sqlite3_int64 id = -1;

	if (sqlite3_prepare_v2(db, "SELECT id FROM graph_files WHERE path = ?1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (id >= 0 || !make)
		return id;
	if (sqlite3_prepare_v2(db, "INSERT INTO graph_files(id, path) SELECT coalesce(max(id), -1) + 1, ?1 "
			       "FROM graph_files", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(db);
	sqlite3_finalize(st);
	return id;
}

/* Run sql with the integer a (and b) bound: SQLITE_OK or SQLite's code. */
static int run2(sqlite3 *db, const char *sql, sqlite3_int64 a, sqlite3_int64 b)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_bind_parameter_count(st) > 1)
		sqlite3_bind_int64(st, 2, b);
	rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	sqlite3_finalize(st);
	return rc;
}

/* The changed files' rows and their calls gone (those gone from the index
 * leave graph_files), the calls of F's files gone. */
static int write_forget(struct delta *d)
{
	sqlite3 *db = d->r->db;
	int rc = SQLITE_OK;

	for (size_t i = 0; rc == SQLITE_OK && i < d->p->paths_nr; i++) {
		const char *path = d->p->paths[i];
		sqlite3_int64 id = file_id(db, path, 0);
		if (id >= 0)
			rc = run2(db, "DELETE FROM graph_defs WHERE fid = ?1", id, 0);
		if (rc == SQLITE_OK && id >= 0)
			rc = run2(db, "DELETE FROM graph_calls WHERE a = ?1", id, 0);
		if (rc == SQLITE_OK && id >= 0 && cgraph_file(&d->now, path) < 0)
			rc = run2(db, "DELETE FROM graph_files WHERE id = ?1", id, 0);
		if (rc == SQLITE_OK && id < 0 && cgraph_file(&d->now, path) >= 0 && file_id(db, path, 1) < 0)
			rc = sqlite3_errcode(db);
	}
	for (size_t i = 0; rc == SQLITE_OK && i < d->f_nr; i++) {
		sqlite3_int64 id = file_id(db, d->f[i], 0);
		if (id < 0)
			return SQLITE_CORRUPT;	/* an unchanged file graph_files lacks */
		rc = run2(db, "DELETE FROM graph_calls WHERE a = ?1", id, 0);
	}
	return rc;
}

/* The unchanged files' definitions of names outside U: stored - what the
 * changed files gave them before + what they give now. */
static int write_shares(struct delta *d)
{
	struct gs_share *s = NULL;
	size_t nr = 0, alloc = 0;
	sqlite3_stmt *st;
	int rc;

	for (size_t i = 0; i < d->p->share_nr; i++) {
		struct gs_share x = d->p->share[i];
		if (has_str(d->u, d->u_nr, x.name))
			continue;
		x.c = (struct gs_count){ -x.c.uses, -x.c.self_calls, -x.c.namesake_calls };
		ALLOC_GROW(s, nr + 1, alloc);
		s[nr++] = x;
	}
	for (size_t i = 0; i < d->now.defs_nr; i++) {
		const struct cg_def *x = &d->now.defs[i];
		if (in_c(d, cg_path(&d->now, x)) || has_str(d->u, d->u_nr, cg_name(&d->now, x)) || zero(counts_of(&d->now, x)))
			continue;
		ALLOC_GROW(s, nr + 1, alloc);
		s[nr++] = (struct gs_share){ cg_path(&d->now, x), (char *)cg_name(&d->now, x), x->rowid, counts_of(&d->now, x) };
	}
	if (nr)
		qsort(s, nr, sizeof(*s), cmp_share);
	rc = sqlite3_prepare_v2(d->r->db, "UPDATE graph_defs SET uses = uses + ?3, self_calls = self_calls + ?4, "
				"namesake_calls = namesake_calls + ?5 WHERE def = ?2 AND fid = "
				"(SELECT id FROM graph_files WHERE path = ?1)", -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < nr; i++) {
		struct gs_count c = s[i].c;
		while (i + 1 < nr && !cmp_share(&s[i], &s[i + 1])) {
			i++;
			c.uses += s[i].c.uses;
			c.self_calls += s[i].c.self_calls;
			c.namesake_calls += s[i].c.namesake_calls;
		}
		if (zero(c))
			continue;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, s[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, s[i].rowid);
		sqlite3_bind_int64(st, 3, c.uses);
		sqlite3_bind_int64(st, 4, c.self_calls);
		sqlite3_bind_int64(st, 5, c.namesake_calls);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(d->r->db);
		if (rc == SQLITE_OK && sqlite3_changes(d->r->db) != 1)
			rc = SQLITE_CORRUPT;	/* a definition the stored answers lack */
	}
	sqlite3_finalize(st);
	free(s);
	return rc;
}

/* The rows of the changed files' definitions and of every definition of a
 * name of U; the calls of F's files. */
static int write_rows(struct delta *d)
{
	sqlite3 *db = d->r->db;
	const struct cgraph *g = &d->part;
	struct cg_fedge *fe;
	size_t fe_nr;
	sqlite3_int64 *ids = xmalloc((g->files_nr + 1) * sizeof(*ids));
	sqlite3_stmt *st;
	int rc = SQLITE_OK;

	for (size_t f = 0; f < g->files_nr; f++)
		ids[f] = -2;	/* not looked up yet */
	rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO graph_defs VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < g->defs_nr; i++) {
		const struct cg_def *x = &g->defs[i];
		int c = in_c(d, cg_path(g, x));
		struct gs_count n = c ? d->counts[i] : counts_of(g, x);
		if (!c && !has_str(d->u, d->u_nr, cg_name(g, x)))
			continue;
		if (ids[x->file] == -2)
			ids[x->file] = file_id(db, cg_path(g, x), 0);
		if (ids[x->file] < 0)
			rc = SQLITE_CORRUPT;
		else
			rc = gstore_def_row(db, st, g, (long)ids[x->file], x, n.uses, n.self_calls, n.namesake_calls);
	}
	sqlite3_finalize(st);
	fe_nr = cgraph_file_edges(g, &fe);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO graph_calls VALUES (?1, ?2, ?3)", -1, &st, NULL);
	else
		st = NULL;
	for (size_t i = 0; rc == SQLITE_OK && i < fe_nr; i++) {
		int ab[2] = { fe[i].a, fe[i].b };
		for (int k = 0; k < 2; k++)
			if (ids[ab[k]] == -2)
				ids[ab[k]] = file_id(db, g->files[ab[k]].path, 0);
		if (ids[ab[0]] < 0 || ids[ab[1]] < 0) {
			rc = SQLITE_CORRUPT;
			break;
		}
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, ids[ab[0]]);
		sqlite3_bind_int64(st, 2, ids[ab[1]]);
		sqlite3_bind_int64(st, 3, fe[i].calls);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(st);
	free(fe);
	free(ids);
	return rc;
}

static void delta_release(struct delta *d)
{
	for (size_t i = 0; d->keys && i < d->now.defs_nr; i++)
		free(d->keys[i]);
	free(d->keys);
	cgraph_release(&d->now);
	cgraph_release(&d->part);
	for (size_t i = 0; i < d->u_nr; i++)
		free(d->u[i]);
	free(d->u);
	for (size_t i = 0; i < d->f_nr; i++)
		free(d->f[i]);
	free(d->f);
	for (size_t i = 0; i < d->prefixes_nr; i++)
		free(d->prefixes[i]);
	free(d->prefixes);
	free(d->counts);
}

int gstore_delta(struct refs *r, struct gstore_pre *pre, long *rebound, const char **why)
{
	struct delta d = { .r = r, .p = pre };
	int rc = -1;

	*why = pre ? pre->why : NULL;
	if (!pre || !pre->ok || !pre->committed)
		return -1;
	*why = "another program wrote to the index";
	if (!base_valid(r->db))
		return -1;
	*why = "the changed files are many, Python, TS/JS, classes, or change run-time name prefixes";
	if (!now_applies(&d))
		goto out;
	changed_names(&d);
	affected_files(&d);
	/* re-binding a large part of the graph: binding it whole is as quick */
	*why = "many files or a Python or TS/JS file to re-bind";
	if (d.f_nr > 64 + d.now.files_nr / 8 || has_python(&d.now, 0, d.f, d.f_nr, 1))
		goto out;
	cgraph_load_part(&d.part, r, (const char *const *)d.f, d.f_nr, (const char *const *)d.u, d.u_nr,
			 d.u_nr > 0, (const char *const *)d.prefixes, d.prefixes_nr);
	*why = "a changed definition has no counterpart";
	if (!count_changed(&d))
		goto out;
	/* what does not add up (a definition the stored answers lack) undoes
	 * what was written: the full path then binds the whole graph */
	*why = "the stored answers do not add up";
	if (sqlite3_exec(r->db, "SAVEPOINT gs_delta", NULL, NULL, NULL) != SQLITE_OK)
		goto out;
	rc = write_forget(&d);
	if (rc == SQLITE_OK)
		rc = write_shares(&d);
	if (rc == SQLITE_OK)
		rc = write_rows(&d);
	if (rc == SQLITE_OK)
		rc = gstore_stamp(r->db);
	if (rc != SQLITE_OK) {
		sqlite3_exec(r->db, "ROLLBACK TO gs_delta", NULL, NULL, NULL);
		rc = -1;
	}
	sqlite3_exec(r->db, "RELEASE gs_delta", NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
		*rebound = (long)d.f_nr;
		*why = NULL;
	}
out:
	delta_release(&d);
	return rc;
}
