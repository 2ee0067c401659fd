/*
 * callwalk.c: callers and callees to --depth levels (cgraph.h's
 * refs_calls_deep), read from the index's name and blob indexes: only the
 * references of the names on the frontier, the definitions of those names,
 * and the definitions and resolved imports of the files the calls are in.
 *
 * A question about one symbol never loads the whole call graph (on Linux,
 * cgraph_load() reads every chunk of 70,000 files: minutes).  The binding is
 * cgraph.c's bind_call(), edge for edge: in a Python file resolve.h's rules
 * (the one definition a call resolves to, or none unless --by-name); else
 * bind_ref()'s choice, the ties of as good a binding, a nested function in
 * the function that defines it, a C prototype in a header and the functions
 * of that name and scope elsewhere.  Not so in a TS/JS file: there a call
 * binds as callers/callees at depth 1 bind it (refs.h's refs_jsbind: the
 * text's imports, aliases and receivers), `new C()` is a call of C, a
 * function's callers include its calls under the other names it is imported
 * or re-exported as (jstype.h's js_aliases()), and a definition's callees the
 * calls of the functions nested in it, so that the first level of a walk is
 * the answer of depth 1 (less the callees that bind to nothing).  Likewise a
 * Python module-level function's or class's callers include the calls of the
 * other names it is given by assignment or import, a few imports away
 * (resolve.h's resolve_alias_names()), and a Python call of such a name is a
 * callee of the definition it stands for, at every level.
 */
#include "core/common.h"
#include "graph/cgraph.h"
#include "graph/jstype.h"

/* A definition met on the walk: a candidate, a caller or a callee. */
struct wdef {
	sqlite3_int64 id;	/* defs' rowid */
	char *name, *kind, *path, *scope;	/* scope may be NULL */
	long line, col, end_line;
	unsigned char c, hdr;	/* in C or C++ (c_def()); in a header (is_header()): by path, set once */
};

/* The definitions of one name (in path, line, col order, as cgraph's by_name). */
struct wname {
	char *name;
	struct wdef *d;
	size_t nr;
};

/* One file a call is in: its definitions in line order and what it imports. */
struct wfile {
	char *path, *lang;
	sqlite3_int64 blob;
	struct wdef *d;		/* in line, col, name order */
	size_t nr;
	char **imps;		/* resolved imports, sorted */
	size_t imps_nr;
	int defs_read;		/* d[] read (with_defs()) */
	int imps_read;		/* imps[] read (file_imports()) */
};

/* The files that import path (its importers, sorted): for a name of few
 * definitions, whether a caller imports one of them is asked of these, read
 * once per definition's file, rather than of each caller's imports (kfree:
 * 8,800 caller files, two definition files). */
struct wimp {
	char *path;
	char **by;
	size_t nr;
};

/* At most this many definitions of a name: their files' importers are read. */
enum { WIMP_DEFS_MAX = 16 };

/* A call of the answer: the site, the caller (NULL at top level), the callee. */
struct wcall {
	const struct wfile *f;
	const char *name, *kind;	/* the call's: name (a TS/JS alias's own), "call" or "class" (new C()) */
	long line, col;
	const struct wdef *from, *to;
	enum bind_how how;
};

struct callwalk {
	struct refs *r;
	struct wname *names;
	size_t names_nr, names_alloc;
	size_t *nmap;		/* names[] hashed by name, as fmap (impact at depth 2 asks for thousands) */
	size_t nmap_mask;
	struct wfile **files;
	size_t files_nr, files_alloc, last;	/* last: the file asked for last */
	size_t *fmap;		/* files[] hashed by path: index + 1, 0 for an empty slot
				   (impact on Linux asks for thousands of files) */
	size_t fmap_mask;	/* slots - 1 */
	const char *pre_name;	/* callwalk_preset(): the calls of pre_name */
	const struct callwalk_site *pre;
	size_t pre_nr;
	struct wimp *wimps;	/* sorted by path */
	size_t wimps_nr, wimps_alloc;
	sqlite3_stmt *def_st, *fdef_st, *imp_st, *lang_st, *by_st;
	struct refs_world world;	/* Python calls (resolve.h through rsworld.c) */
	struct refs_jsbind *js;	/* TS/JS calls (callgraph.c's binding), made on first use */
	int js_self;		/* TS/JS: a call inside the definition it reaches counts (as in callers) */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_header(const char *path);
static int c_path(const char *path);

static void read_def(sqlite3_stmt *st, int c, struct wdef *d, const char *path)
{
	d->id = sqlite3_column_int64(st, c);
	d->name = xstrdup(refs_col(st, c + 1));
	d->kind = xstrdup(refs_col(st, c + 2));
	d->line = sqlite3_column_int64(st, c + 3);
	d->col = sqlite3_column_int64(st, c + 4);
	d->end_line = sqlite3_column_int64(st, c + 5);
	d->scope = sqlite3_column_type(st, c + 6) == SQLITE_NULL ? NULL : xstrdup(refs_col(st, c + 6));
	d->path = xstrdup(path ? path : refs_col(st, c + 7));
	d->c = (unsigned char)c_path(d->path);
	d->hdr = (unsigned char)is_header(d->path);
}

static void free_defs(struct wdef *d, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(d[i].name);
		free(d[i].kind);
		free(d[i].path);
		free(d[i].scope);
	}
	free(d);
}

static size_t path_hash(const char *s);

/* The slot of name in w->nmap: its entry's, or the empty one it would take. */
static size_t nmap_slot(const struct callwalk *w, const char *name)
{
	size_t k = path_hash(name) & w->nmap_mask;

	while (w->nmap[k] && strcmp(w->names[w->nmap[k] - 1].name, name))
		k = (k + 1) & w->nmap_mask;
	return k;
}

/* Add names[i] to the map, doubling it past half full. */
static void nmap_add(struct callwalk *w, size_t i)
{
	if (2 * (w->names_nr + 1) > w->nmap_mask) {
		size_t n = w->nmap ? 2 * (w->nmap_mask + 1) : 64;
		free(w->nmap);
		w->nmap = xcalloc(n, sizeof(*w->nmap));
		w->nmap_mask = n - 1;
		for (size_t j = 0; j < w->names_nr; j++)
			if (j != i)
				w->nmap[nmap_slot(w, w->names[j].name)] = j + 1;
	}
	w->nmap[nmap_slot(w, w->names[i].name)] = i + 1;
}

/* The definitions named name (cached). */
static const struct wname *named(struct callwalk *w, const char *name)
{
	struct wname *n;
	size_t alloc = 0, k;

	if (w->nmap && w->nmap[k = nmap_slot(w, name)])
		return &w->names[w->nmap[k] - 1];
	ALLOC_GROW(w->names, w->names_nr + 1, w->names_alloc);
	n = &w->names[w->names_nr++];
	memset(n, 0, sizeof(*n));
	n->name = xstrdup(name);
	nmap_add(w, w->names_nr - 1);
	sqlite3_reset(w->def_st);
	sqlite3_bind_text(w->def_st, 1, name, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(w->def_st) == SQLITE_ROW) {
		ALLOC_GROW(n->d, n->nr + 1, alloc);
		read_def(w->def_st, 0, &n->d[n->nr++], NULL);
	}
	return n;
}

/* The definitions of f, read on first use (binding a call needs only its imports). */
static const struct wfile *with_defs(struct callwalk *w, const struct wfile *cf)
{
	struct wfile *f = (struct wfile *)cf;
	size_t alloc = 0;

	if (f->defs_read)
		return f;
	f->defs_read = 1;
	sqlite3_reset(w->fdef_st);
	sqlite3_bind_int64(w->fdef_st, 1, f->blob);
	while (sqlite3_step(w->fdef_st) == SQLITE_ROW) {
		ALLOC_GROW(f->d, f->nr + 1, alloc);
		read_def(w->fdef_st, 0, &f->d[f->nr++], f->path);
	}
	return f;
}

static size_t path_hash(const char *s)
{
	size_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The slot of path in w->fmap: its file's, or the empty one it would take. */
static size_t fmap_slot(const struct callwalk *w, const char *path)
{
	size_t k = path_hash(path) & w->fmap_mask;

	while (w->fmap[k] && strcmp(w->files[w->fmap[k] - 1]->path, path))
		k = (k + 1) & w->fmap_mask;
	return k;
}

/* Add files[i] to the map, doubling it past half full. */
static void fmap_add(struct callwalk *w, size_t i)
{
	if (2 * (w->files_nr + 1) > w->fmap_mask) {
		size_t n = w->fmap ? 2 * (w->fmap_mask + 1) : 64;
		free(w->fmap);
		w->fmap = xcalloc(n, sizeof(*w->fmap));
		w->fmap_mask = n - 1;
		for (size_t j = 0; j < w->files_nr; j++)
			if (j != i)
				w->fmap[fmap_slot(w, w->files[j]->path)] = j + 1;
	}
	w->fmap[fmap_slot(w, w->files[i]->path)] = i + 1;
}

/* The file path (cached): its language and resolved imports. */
static const struct wfile *file_of(struct callwalk *w, const char *path, sqlite3_int64 blob)
{
	struct wfile *f;
	size_t k;

	if (w->files_nr && !strcmp(w->files[w->last]->path, path))
		return w->files[w->last];	/* a name's calls come blob by blob */
	if (w->fmap && w->fmap[k = fmap_slot(w, path)])
		return w->files[w->last = w->fmap[k] - 1];
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	f->blob = blob;
	sqlite3_reset(w->lang_st);
	sqlite3_bind_int64(w->lang_st, 1, blob);
	if (sqlite3_step(w->lang_st) == SQLITE_ROW && refs_col(w->lang_st, 0))
		f->lang = xstrdup(refs_col(w->lang_st, 0));
	ALLOC_GROW(w->files, w->files_nr + 1, w->files_alloc);
	w->last = w->files_nr;
	w->files[w->files_nr++] = f;
	fmap_add(w, w->last);
	return f;
}

/* The resolved imports of f, read on first use. */
static const struct wfile *file_imports(struct callwalk *w, const struct wfile *cf)
{
	struct wfile *f = (struct wfile *)cf;
	size_t alloc = 0;

	if (f->imps_read)
		return f;
	f->imps_read = 1;
	sqlite3_reset(w->imp_st);
	sqlite3_bind_text(w->imp_st, 1, f->path, -1, SQLITE_STATIC);
	while (sqlite3_step(w->imp_st) == SQLITE_ROW) {
		ALLOC_GROW(f->imps, f->imps_nr + 1, alloc);
		f->imps[f->imps_nr++] = xstrdup(refs_col(w->imp_st, 0));
	}
	if (f->imps_nr)
		qsort(f->imps, f->imps_nr, sizeof(*f->imps), cmp_str);
	return f;
}

/* The importers of path (cached). */
static const struct wimp *importers(struct callwalk *w, const char *path)
{
	size_t lo = 0, hi = w->wimps_nr, alloc = 0;
	struct wimp *m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(w->wimps[mid].path, path);
		if (!c)
			return &w->wimps[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	ALLOC_GROW(w->wimps, w->wimps_nr + 1, w->wimps_alloc);
	memmove(w->wimps + lo + 1, w->wimps + lo, (w->wimps_nr++ - lo) * sizeof(*w->wimps));
	m = &w->wimps[lo];
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(path);
	sqlite3_reset(w->by_st);
	sqlite3_bind_text(w->by_st, 1, path, -1, SQLITE_STATIC);
	while (sqlite3_step(w->by_st) == SQLITE_ROW) {
		ALLOC_GROW(m->by, m->nr + 1, alloc);
		m->by[m->nr++] = xstrdup(refs_col(w->by_st, 0));
	}
	return m;
}

/* Does f import path?  From path's importers for a name of few definitions
 * (few), else from f's imports: the same answer either way. */
static int imports(struct callwalk *w, const struct wfile *f, const char *path, int few)
{
	if (few && !f->imps_read) {
		const struct wimp *m = importers(w, path);
		return m->nr && bsearch(&f->path, m->by, m->nr, sizeof(*m->by), cmp_str) != NULL;
	}
	f = file_imports(w, f);
	return f->imps_nr && bsearch(&path, f->imps, f->imps_nr, sizeof(*f->imps), cmp_str) != NULL;
}

/* The innermost definition of f holding line (cgraph.c's enclosing()), or NULL. */
static const struct wdef *enclosing(const struct wfile *f, long line)
{
	size_t i = f->nr;

	while (i > 0 && f->d[i - 1].line > line)
		i--;
	while (i > 0) {
		const struct wdef *d = &f->d[--i];
		if (d->line <= line && d->end_line >= line)
			return d;
	}
	return NULL;
}

static int is_header(const char *path)
{
	const char *e = strrchr(path, '.');

	return e && (!strcmp(e, ".h") || !strcmp(e, ".hh") || !strcmp(e, ".hpp") || !strcmp(e, ".hxx"));
}

static int scope_encloses(const char *cls, const char *s)
{
	size_t n = strlen(cls);

	return s && !strncmp(cls, s, n) && (s[n] == '\0' || s[n] == '.');
}

/* A definition's language, by its file's name (the candidates' files are not loaded). */
static int c_path(const char *path)
{
	const char *e = strrchr(path, '.');
	static const char *const exts[] = { ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".C", NULL };

	for (const char *const *x = exts; e && *x; x++)
		if (!strcmp(e, *x))
			return 1;
	return 0;
}

static int same_symbol(const struct wdef *p, const struct wdef *d)
{
	return p->c && d->c && p->hdr != d->hdr &&
	       ((!p->scope && !d->scope) || (p->scope && d->scope && !strcmp(p->scope, d->scope)));
}

static int inside(const struct wdef *d, const char *path, long line)
{
	return !strcmp(d->path, path) && d->line <= line && d->end_line >= line;
}

/*
 * The definitions the call of n->name at (line, col) of f reaches, as
 * cgraph.c's bind_call() adds its edges: their indexes into n->d in reach[]
 * (room for n->nr), how in *how.  Returns how many.  With protos, a C
 * prototype whose function took the edge is among them too.
 */
static size_t bind_site(struct callwalk *w, const struct wfile *f, const struct wname *n, const char *scope,
			long line, long col_, enum bind_recv stored, size_t *reach, enum bind_how *how, int protos)
{
	struct bind_def *bd;
	enum bind_recv recv;
	long def;
	size_t k = 0;
	int hdr = -1, body = 0, need_text = 0;

	if (!n->nr)
		return 0;
	if (f->lang && !strcmp(f->lang, "python") && resolver_applies(&w->world.rs, f->path)) {
		const struct rs_def *rd = resolve_call(&w->world.rs, f->path, scope, line, col_, n->name, how);

		if (rd || !w->r->o.by_name) {
			for (size_t i = 0; rd && i < n->nr; i++)
				if (n->d[i].line == rd->line && !strcmp(n->d[i].path, rd->path) &&
				    !inside(&n->d[i], f->path, line))
					reach[k++] = i;
			return k;
		}
	}
	/* C: with no candidate in a scope or in this file, the receiver changes
	 * nothing (but for a struct variable named self, this or cls) */
	need_text = !f->lang || (strcmp(f->lang, "c") && strcmp(f->lang, "cpp"));
	for (size_t i = 0; i < n->nr && !need_text; i++)
		need_text = n->d[i].scope || !strcmp(n->d[i].path, f->path);
	recv = need_text ? stored : RECV_UNKNOWN;
	bd = xmalloc(n->nr * sizeof(*bd));
	for (size_t i = 0; i < n->nr; i++) {
		bd[i].path = n->d[i].path;
		bd[i].scope = n->d[i].scope;
		bd[i].imported = strcmp(n->d[i].path, f->path) &&
				 imports(w, f, n->d[i].path, n->nr <= WIMP_DEFS_MAX);
	}
	def = bind_ref(how, f->path, scope, recv, bd, n->nr);
	for (size_t i = 0; (recv == RECV_BARE || recv == RECV_UNKNOWN) && i < n->nr; i++) {
		const struct wdef *d = &n->d[i];
		if (d->scope && !strcmp(d->kind, "function") && !strcmp(d->path, f->path) &&
		    scope_encloses(d->scope, scope)) {
			def = (long)i;
			*how = BIND_LOCAL;
			break;
		}
	}
	for (size_t i = 0; def >= 0 && i < n->nr; i++) {
		const struct wdef *d = &n->d[i];
		if (inside(d, f->path, line))
			continue;	/* its own body: a self call */
		if ((size_t)def == i) {
			if (d->hdr && d->c)
				hdr = (int)i;
			else
				reach[k++] = i;
		} else if ((*how != BIND_NAME && bind_level(f->path, scope, recv, &bd[i]) == *how) ||
			   same_symbol(&n->d[def], d)) {
			reach[k++] = i;
			body |= !d->hdr && same_symbol(&n->d[def], d);
		}
	}
	if (hdr >= 0 && (!body || protos))
		reach[k++] = (size_t)hdr;	/* protos: the prototype too, one symbol with its function */
	free(bd);
	return k;
}

/*
 * The definition the call of name (kind "call" or "class") at (line, col_)
 * of the TS/JS file f reaches, bound by refs_jsbind_call() (follow: its
 * REFS_JS_*), or NULL; how in *how.  A call inside the definition it reaches
 * is left out unless w->js_self.
 */
static const struct wdef *js_site(struct callwalk *w, const struct wfile *f, const char *name, const char *kind,
				  const char *scope, long line, long col_, enum bind_recv recv, int follow,
				  enum bind_how *how)
{
	const char *dname, *dpath;
	const struct wname *n;
	long dline;

	if (!w->js)
		w->js = refs_jsbind_new(w->r, &w->world);
	if (!refs_jsbind_call(w->js, name, kind, f->path, scope, line, col_, recv, follow, how, &dname, &dpath, &dline))
		return NULL;
	n = named(w, dname);
	for (size_t i = 0; i < n->nr; i++)
		if (n->d[i].line == dline && !strcmp(n->d[i].path, dpath))
			return !w->js_self && inside(&n->d[i], f->path, line) ? NULL : &n->d[i];
	return NULL;
}

/*
 * The definition of another name that the call of name at (line, col_) of
 * the Python file f reaches (resolve.h: an alias, ib() with ib = attrib,
 * `from m import f as g`), or NULL; how in *how.  Not a call inside that
 * definition (as bind_site()).
 */
static const struct wdef *py_site(struct callwalk *w, const struct wfile *f, const char *name, const char *scope,
				  long line, long col_, enum bind_how *how)
{
	const struct rs_def *rd;
	const struct wname *n;

	if (!f->lang || strcmp(f->lang, "python") || !resolver_applies(&w->world.rs, f->path) ||
	    !(rd = resolve_call(&w->world.rs, f->path, scope, line, col_, name, how)) || !strcmp(rd->name, name))
		return NULL;
	n = named(w, rd->name);
	for (size_t i = 0; i < n->nr; i++)
		if (n->d[i].line == rd->line && !strcmp(n->d[i].path, rd->path))
			return inside(&n->d[i], f->path, line) ? NULL : &n->d[i];
	return NULL;
}

static int cmp_def(const struct wdef *a, const struct wdef *b)
{
	return a->id != b->id ? (a->id < b->id ? -1 : 1) : strcmp(a->path, b->path);
}

static int cmp_defp(const void *x, const void *y)
{
	return cmp_def(*(const struct wdef *const *)x, *(const struct wdef *const *)y);
}

/* Where d is in the sorted set[0..nr), or where it would go (*at); 1 if there. */
static int in_set(const struct wdef *const *set, size_t nr, const struct wdef *d, size_t *at)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_def(set[mid], d);
		if (!c) {
			lo = mid;
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return lo < nr && !cmp_def(set[lo], d);
}

static int cmp_wcall(const void *x, const void *y)
{
	const struct wcall *a = x, *b = y;
	int c = strcmp(a->f->path, b->f->path);

	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	if ((c = strcmp(a->to->path, b->to->path)))
		return c;
	if (a->to->line != b->to->line)
		return a->to->line < b->to->line ? -1 : 1;
	return (a->to->col > b->to->col) - (a->to->col < b->to->col);
}

static void add_wcall(struct wcall **v, size_t *nr, size_t *alloc, struct wcall c)
{
	ALLOC_GROW(*v, *nr + 1, *alloc);
	(*v)[(*nr)++] = c;
}

/* The references that are calls: f(), and in a TS/JS file new C() (as callgraph.c's CALL_KINDS) */
#define WALK_CALL_KINDS "(r.kind = 'call' OR (r.kind = 'class' AND EXISTS (SELECT 1 FROM blobs b " \
	"WHERE b.id = r.blob_id AND b.lang IN ('javascript', 'typescript', 'tsx'))))"

/* A reference's kind as a call's ("call", or "class" for new C()), a static string. */
static const char *walk_kind(const char *kind)
{
	return kind && !strcmp(kind, "class") ? "class" : "call";
}

/* A name whose calls calls_into() reads: a frontier definition's (front),
 * or another name of a TS/JS frontier function or class (alias), of a
 * Python one (py: resolve_alias_names()). */
struct wcallee {
	const char *name;
	int front, alias, py;
};

static int cmp_wcallee(const void *a, const void *b)
{
	return strcmp(((const struct wcallee *)a)->name, ((const struct wcallee *)b)->name);
}

/* The names calls_into() reads, sorted, one each: the frontier's, and the
 * other names of its TS/JS and Python module-level functions and classes. */
static struct wcallee *into_names(struct callwalk *w, const struct wdef *const *front, size_t front_nr, size_t *nr)
{
	struct wcallee *v = xmalloc((front_nr + 1) * sizeof(*v));
	size_t n = 0, alloc = front_nr + 1, k = 0;

	for (size_t t = 0; t < front_nr; t++)
		v[n++] = (struct wcallee){ front[t]->name, 1, 0, 0 };
	for (size_t t = 0; t < front_nr; t++) {
		const struct wdef *d = front[t];
		char **nn;
		size_t nn_nr;

		int js;

		if (d->scope || d->c || (strcmp(d->kind, "function") && strcmp(d->kind, "class")))
			continue;	/* (a C file: not even asked whether Python, Linux walks meet thousands) */
		if ((js = bind_is_js(d->path)))
			js_aliases(w->world.js, d->path, d->name, &nn, &nn_nr);
		else if (resolver_applies(&w->world.rs, d->path))
			nn_nr = resolve_alias_names(&w->world.rs, d->path, d->name, &nn);
		else
			continue;
		for (size_t i = 0; i < nn_nr; i++) {
			ALLOC_GROW(v, n + 1, alloc);
			v[n++] = (struct wcallee){ named(w, nn[i])->name, 0, js, !js };	/* a string kept by w */
			free(nn[i]);
		}
		free(nn);
	}
	qsort(v, n, sizeof(*v), cmp_wcallee);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1].name, v[i].name)) {
			v[k - 1].front |= v[i].front;
			v[k - 1].alias |= v[i].alias;
			v[k - 1].py |= v[i].py;
		} else {
			v[k++] = v[i];
		}
	}
	*nr = k;
	return v;
}

/* The calls that reach a definition of the frontier (callers); with
 * callers, each call's caller (else NULL: the files' definitions unread). */
static void calls_into(struct callwalk *w, const struct wdef *const *front, size_t front_nr,
		       struct wcall **v, size_t *nr, size_t *alloc, long cap, int callers)
{
	sqlite3_stmt *st = refs_prep(w->r, "SELECT f.path, r.blob_id, r.line, r.col, r.scope, r.recv, r.kind FROM refs r "
				     "JOIN files f ON f.blob_id = r.blob_id WHERE r.name = ?1 AND " WALK_CALL_KINDS " "
				     "ORDER BY f.path, r.line, r.col");
	size_t names_nr;
	struct wcallee *names = into_names(w, front, front_nr, &names_nr);

	for (size_t t = 0; t < names_nr; t++) {
		struct wname n;
		size_t *reach;
		int pre;	/* the calls preset (callwalk_preset()), not read */

		pre = w->pre_name && !strcmp(w->pre_name, names[t].name);
		n = *named(w, names[t].name);	/* a copy: named() may move w->names */
		reach = xmalloc((n.nr + 1) * sizeof(*reach));
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, names[t].name, -1, SQLITE_TRANSIENT);
		for (size_t mine = *nr, row = 0; *nr - mine < (size_t)cap; row++) {
			struct callwalk_site c;
			const char *kind = "call";
			const struct wfile *f;
			long line, col_;
			enum bind_how how;
			size_t k;

			if (pre && row >= w->pre_nr)
				break;
			if (pre)
				c = w->pre[row];
			else if (sqlite3_step(st) == SQLITE_ROW) {
				c = (struct callwalk_site){ refs_col(st, 0),
							    sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL
												      : refs_col(st, 4),
							    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
							    sqlite3_column_int64(st, 3), (enum bind_recv)sqlite3_column_int(st, 5) };
				kind = walk_kind(refs_col(st, 6));
			} else
				break;
			/* its definitions only for a call that reaches the frontier
			 * (bind_site() needs the file's imports alone) */
			f = file_of(w, c.path, c.blob);
			line = c.line;
			col_ = c.col;
			if (bind_is_js(c.path)) {
				/* as callers at depth 1: the call bound by its name, and an alias followed */
				const struct wdef *d1 = NULL, *d2 = NULL;
				enum bind_how how2 = BIND_NONE;

				if (names[t].front)
					d1 = js_site(w, f, n.name, kind, c.scope, line, col_, c.recv, REFS_JS_BIND, &how);
				if (names[t].alias)
					d2 = js_site(w, f, n.name, kind, c.scope, line, col_, c.recv, REFS_JS_ORIGIN, &how2);
				if (d1 && !in_set(front, front_nr, d1, NULL))
					d1 = NULL;
				if (d2 && (d2 == d1 || !in_set(front, front_nr, d2, NULL)))
					d2 = NULL;
				for (int i = 0; i < 2; i++)
					if (i ? d2 != NULL : d1 != NULL)
						add_wcall(v, nr, alloc, (struct wcall){ f, n.name, kind, line, col_,
											callers ? enclosing(with_defs(w, f), line)
												: NULL,
											i ? d2 : d1, i ? how2 : how });
				continue;
			}
			if (strcmp(kind, "call"))
				continue;	/* new C() elsewhere */
			k = names[t].front ? bind_site(w, f, &n, c.scope, line, col_, c.recv, reach, &how, 0) : 0;
			for (size_t i = 0; i < k; i++)
				if (in_set(front, front_nr, &n.d[reach[i]], NULL))
					add_wcall(v, nr, alloc, (struct wcall){ f, n.name, kind, line, col_,
										callers ? enclosing(with_defs(w, f), line)
											: NULL,
										&n.d[reach[i]], how });
			if (!k && names[t].py) {
				/* a Python alias's call: the definition of the name it stands for */
				const struct wdef *d = py_site(w, f, n.name, c.scope, line, col_, &how);
				if (d && in_set(front, front_nr, d, NULL))
					add_wcall(v, nr, alloc, (struct wcall){ f, n.name, kind, line, col_,
										callers ? enclosing(with_defs(w, f), line)
											: NULL,
										d, how });
			}
		}
		free(reach);
	}
	free(names);
	sqlite3_finalize(st);
}

/* The calls a definition of the frontier makes itself (callees). */
static void calls_out_of(struct callwalk *w, const struct wdef *const *front, size_t front_nr,
			 struct wcall **v, size_t *nr, size_t *alloc, long cap)
{
	sqlite3_stmt *st = refs_prep(w->r, "SELECT r.name, r.line, r.col, r.scope, f.blob_id, r.recv, r.kind FROM files f "
				     "JOIN refs r ON r.blob_id = f.blob_id WHERE f.path = ?1 AND r.line BETWEEN ?2 AND ?3 "
				     "AND " WALK_CALL_KINDS " ORDER BY r.line, r.col");

	for (size_t t = 0; t < front_nr; t++) {
		const struct wdef *from = front[t];
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, from->path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, from->line);
		sqlite3_bind_int64(st, 3, from->end_line);
		for (size_t mine = *nr; *nr - mine < (size_t)cap && sqlite3_step(st) == SQLITE_ROW; ) {
			const struct wfile *f = with_defs(w, file_of(w, from->path, sqlite3_column_int64(st, 4)));
			long line = sqlite3_column_int64(st, 1), col_ = sqlite3_column_int64(st, 2);
			const struct wdef *enc = enclosing(f, line);
			const char *sc = sqlite3_column_type(st, 3) == SQLITE_NULL ? NULL : refs_col(st, 3);
			const struct wname *n;
			size_t *reach, k;
			enum bind_how how;

			if (bind_is_js(from->path)) {
				/* as callees at depth 1: the calls of nested functions too */
				const struct wdef *d = js_site(w, f, refs_col(st, 0), refs_col(st, 6), sc, line, col_,
							       (enum bind_recv)sqlite3_column_int(st, 5), REFS_JS_BOTH, &how);
				if (d)
					add_wcall(v, nr, alloc, (struct wcall){ f, named(w, refs_col(st, 0))->name,
										walk_kind(refs_col(st, 6)), line, col_,
										from, d, how });
				continue;
			}
			if (!enc || enc->id != from->id)
				continue;	/* a nested definition's call: its own */
			if (strcmp(refs_col(st, 6), "call"))
				continue;	/* new C() in a TS/JS file only */
			n = named(w, refs_col(st, 0));
			reach = xmalloc((n->nr + 1) * sizeof(*reach));
			k = bind_site(w, f, n, sc, line, col_, (enum bind_recv)sqlite3_column_int(st, 5), reach, &how, 0);
			for (size_t i = 0; i < k; i++)
				add_wcall(v, nr, alloc, (struct wcall){ f, n->name, "call", line, col_, enc, &n->d[reach[i]],
									how });
			free(reach);
			if (!k) {
				/* a Python alias (ib() with ib = attrib): the definition of the other name */
				const char *name = n->name;	/* kept by w: n may move */
				const struct wdef *d = py_site(w, f, name, sc, line, col_, &how);
				if (d)
					add_wcall(v, nr, alloc, (struct wcall){ f, name, "call", line, col_, enc, d, how });
			}
		}
	}
	sqlite3_finalize(st);
}

static void emit_call(struct refs *r, const struct wcall *c, long depth)
{
	char *snip = refs_snippet(r, c->f->blob, c->line), *qs = NULL;

	if (c->from)
		qs = c->from->scope ? xasprintf("%s.%s", c->from->scope, c->from->name) : xstrdup(c->from->name);
	nd_begin(&r->out, "occurrence");
	nd_str(&r->out, "name", c->name);
	nd_str(&r->out, "type", "reference");
	nd_str(&r->out, "kind", c->kind);
	nd_str(&r->out, "path", c->f->path);
	nd_int(&r->out, "line", c->line);
	nd_int(&r->out, "col", c->col);
	nd_str(&r->out, "scope", qs);
	nd_str(&r->out, "lang", c->f->lang);
	nd_str(&r->out, "snippet", snip);
	nd_str(&r->out, "confidence", "syntactic");
	nd_str(&r->out, "binding", bind_how_name(c->how));
	nd_key(&r->out, "definition");
	buf_addstr(&r->out, "{\"path\":");
	nd_json_string(&r->out, c->to->path, strlen(c->to->path));
	buf_addf(&r->out, ",\"line\":%ld}", c->to->line);
	nd_int(&r->out, "depth", depth);
	nd_end(&r->out);
	refs_flush(r);
	r->emitted++;
	free(snip);
	free(qs);
}

void callwalk_free(struct callwalk *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->names_nr; i++) {
		free(w->names[i].name);
		free_defs(w->names[i].d, w->names[i].nr);
	}
	free(w->names);
	free(w->nmap);
	for (size_t i = 0; i < w->files_nr; i++) {
		struct wfile *f = w->files[i];
		free(f->path);
		free(f->lang);
		free_defs(f->d, f->nr);
		for (size_t k = 0; k < f->imps_nr; k++)
			free(f->imps[k]);
		free(f->imps);
		free(f);
	}
	free(w->files);
	free(w->fmap);
	for (size_t i = 0; i < w->wimps_nr; i++) {
		for (size_t k = 0; k < w->wimps[i].nr; k++)
			free(w->wimps[i].by[k]);
		free(w->wimps[i].by);
		free(w->wimps[i].path);
	}
	free(w->wimps);
	refs_jsbind_free(w->js);
	refs_world_release(&w->world);
	sqlite3_finalize(w->def_st);
	sqlite3_finalize(w->fdef_st);
	sqlite3_finalize(w->imp_st);
	sqlite3_finalize(w->lang_st);
	sqlite3_finalize(w->by_st);
	free(w);
}

struct callwalk *callwalk_new(struct refs *r)
{
	struct callwalk *w = xcalloc(1, sizeof(*w));

	w->r = r;
	refs_world_init(&w->world, r);
	w->def_st = refs_prep(r, "SELECT d.rowid, d.name, d.kind, d.line, d.col, d.end_line, d.scope, f.path "
			      "FROM defs d JOIN files f ON f.blob_id = d.blob_id WHERE d.name = ?1 "
			      "ORDER BY f.path, d.line, d.col");
	w->fdef_st = refs_prep(r, "SELECT rowid, name, kind, line, col, end_line, scope FROM defs "
			       "WHERE blob_id = ?1 ORDER BY line, col, name");
	w->imp_st = refs_prep(r, "SELECT DISTINCT resolved FROM imports WHERE path = ?1 AND resolved IS NOT NULL");
	w->lang_st = refs_prep(r, "SELECT lang FROM blobs WHERE id = ?1");
	w->by_st = refs_prep(r, "SELECT DISTINCT path FROM imports WHERE resolved = ?1 ORDER BY path");
	return w;
}

void callwalk_preset(struct callwalk *w, const char *name, const struct callwalk_site *sites, size_t nr)
{
	w->pre_name = name;
	w->pre = sites;
	w->pre_nr = nr;
}

int callwalk_binds(struct callwalk *w, const char *path, sqlite3_int64 blob, const char *name, const char *scope,
		   long line, long col_, enum bind_recv recv, int (*want)(const char *path, const char *scope, void *arg),
		   void *arg)
{
	const struct wfile *f = file_of(w, path, blob);
	const struct wname *n;
	size_t *reach, k;
	enum bind_how how;
	int ret = -1;

	if (bind_is_js(path)) {
		const struct wdef *d = js_site(w, f, name, "call", scope, line, col_, recv, REFS_JS_BOTH, &how);
		return d ? want(d->path, d->scope, arg) : -1;
	}
	n = named(w, name);
	reach = xmalloc((n->nr + 1) * sizeof(*reach));
	k = bind_site(w, f, n, scope, line, col_, recv, reach, &how, 1);
	for (size_t i = 0; i < k; i++) {
		if (ret < 0)
			ret = 0;
		if (want(n->d[reach[i]].path, n->d[reach[i]].scope, arg))
			ret = 1;
	}
	free(reach);
	return ret;
}

/* Insert u into the sorted seen[] unless there: 1 if it was new. */
static int see(const struct wdef ***seen, size_t *nr, size_t *alloc, const struct wdef *u)
{
	size_t at;

	if (in_set(*seen, *nr, u, &at))
		return 0;
	ALLOC_GROW(*seen, *nr + 1, *alloc);
	memmove(*seen + at + 1, *seen + at, (*nr - at) * sizeof(**seen));
	(*seen)[at] = u;
	(*nr)++;
	return 1;
}

void callwalk_callers(struct callwalk *w, const char *path, const char *name, long depth,
		      void (*fn)(const char *path, long depth, void *arg), void *arg)
{
	const struct wname *n = named(w, name);
	const struct wdef **front = NULL, **seen = NULL;
	size_t front_nr = 0, front_alloc = 0, seen_nr = 0, seen_alloc = 0;

	for (size_t i = 0; i < n->nr; i++)
		if (!strcmp(n->d[i].path, path) && see(&seen, &seen_nr, &seen_alloc, &n->d[i])) {
			ALLOC_GROW(front, front_nr + 1, front_alloc);
			front[front_nr++] = &n->d[i];
		}
	if (front_nr)
		qsort(front, front_nr, sizeof(*front), cmp_defp);
	for (long d = 1, budget = CALLWALK_CALLERS_MAX; d <= depth && front_nr && budget > 0; d++) {
		struct wcall *v = NULL;
		size_t nr = 0, alloc = 0, next_nr = 0;

		calls_into(w, front, front_nr, &v, &nr, &alloc, budget, 0);
		budget -= (long)nr;
		if (nr)
			qsort(v, nr, sizeof(*v), cmp_wcall);
		for (size_t k = 0; k < nr; k++) {
			fn(v[k].f->path, d, arg);
			/* the callers only where there is a next level (kfree's
			 * 20,000 calls spend the budget: its files' definitions unread) */
			if (d < depth && budget > 0)
				v[k].from = enclosing(with_defs(w, v[k].f), v[k].line);
			if (v[k].from && see(&seen, &seen_nr, &seen_alloc, v[k].from)) {
				ALLOC_GROW(front, next_nr + 1, front_alloc);
				front[next_nr++] = v[k].from;
			}
		}
		free(v);
		front_nr = next_nr;
		if (front_nr)
			qsort(front, front_nr, sizeof(*front), cmp_defp);
	}
	free(front);
	free(seen);
}

/*
 * Breadth first from the definitions of q: callers follow calls backwards
 * (the calls that reach a definition of the frontier, whose callers are the
 * next frontier), callees forwards.  Each definition is expanded once; calls
 * at one depth come in path and line order.
 */
int refs_calls_deep(struct refs *r, const char *q, int callees)
{
	struct callwalk *w = callwalk_new(r);
	const struct wdef **front = NULL, **seen = NULL;
	size_t front_nr = 0, front_alloc = 0, seen_nr = 0, seen_alloc = 0;
	char *scope, *name;
	int found = 0;

	w->js_self = 1;	/* as callers and callees at depth 1 */
	refs_split_qualified(q, &scope, &name);
	{
		const struct wname *n = named(w, name);
		for (size_t i = 0; i < n->nr; i++)
			if (refs_qualifier_matches(scope, n->d[i].scope, n->d[i].path)) {
				ALLOC_GROW(front, front_nr + 1, front_alloc);
				front[front_nr++] = &n->d[i];
				ALLOC_GROW(seen, seen_nr + 1, seen_alloc);
				seen[seen_nr++] = &n->d[i];
			}
		if (front_nr) {
			qsort(front, front_nr, sizeof(*front), cmp_defp);
			qsort(seen, seen_nr, sizeof(*seen), cmp_defp);
		}
	}
	if (!front_nr) {
		error("no definition of '%s' in the index", q);
		goto done;
	}
	for (long depth = 1; depth <= r->o.depth && front_nr && r->emitted < r->o.limit; depth++) {
		struct wcall *v = NULL;
		size_t nr = 0, alloc = 0, next_nr = 0;

		/* the first (limit - emitted) calls by site are among the first
		 * that many of each name's (or each caller's), read in site order */
		if (callees)
			calls_out_of(w, front, front_nr, &v, &nr, &alloc, r->o.limit - r->emitted);
		else
			calls_into(w, front, front_nr, &v, &nr, &alloc, r->o.limit - r->emitted, 1);
		if (nr)
			qsort(v, nr, sizeof(*v), cmp_wcall);
		for (size_t k = 0; k < nr && r->emitted < r->o.limit; k++) {
			const struct wdef *u = callees ? v[k].to : v[k].from;
			size_t at;
			emit_call(r, &v[k], depth);
			found++;
			if (u && !in_set(seen, seen_nr, u, &at)) {
				ALLOC_GROW(seen, seen_nr + 1, seen_alloc);
				memmove(seen + at + 1, seen + at, (seen_nr++ - at) * sizeof(*seen));
				seen[at] = u;
				ALLOC_GROW(front, next_nr + 1, front_alloc);
				front[next_nr++] = u;
			}
		}
		free(v);
		front_nr = next_nr;
		if (front_nr)
			qsort(front, front_nr, sizeof(*front), cmp_defp);
	}
	if (!found)
		error("no %s of '%s' in the index", callees ? "callees" : "callers", q);
done:
	free(front);
	free(seen);
	free(scope);
	free(name);
	callwalk_free(w);
	return found ? EXIT_OK : EXIT_NOTHING;
}
