/*
 * jstype.c: TS/JS imports, aliases and receiver classes read from the text
 * (jstype.h).  Shaped by yup, where most calls are of functions exported
 * under another name (`string()` is src/string.ts's create) and of methods
 * on chained receivers (`string().min(2).max(5)`): a callers question reads
 * a few dozen files' statements once (cached in struct js_types) and walks
 * expressions a few steps deep.  Then by ow, whose calls go through values
 * typed by type aliases and interfaces (`ow.string.minLength(3)`, `_ow: Ow`,
 * `type Ow = {...} & Predicates`, `readonly string: StringPredicate`) and
 * getters (`get not(): this`): a type's members are read from its text,
 * comments blanked, each time asked.
 */
#include <ctype.h>

#include "core/common.h"
#include "graph/bind.h"
#include "graph/jstype.h"
#include "graph/refs.h"
#include "graph/resolve.h"

#define JT_DEPTH 8	/* files followed */
#define JT_EXPR_DEPTH 24	/* expressions, declarations and returns nested */
#define JT_TYPE_HOP 4	/* the depth a type's part or base adds: types nest 6 deep at most, each
			 * with a few parts (circular types, an error, stay bounded) */

enum jt_kind {
	JT_IMPORT,	/* import { remote as local } from */
	JT_DEFAULT,	/* import local from */
	JT_NS,		/* import * as local from */
	JT_EXPORT,	/* export { remote as local } [from] */
	JT_STAR,	/* export * from */
};

struct jt_bind {
	enum jt_kind kind;
	char *local, *remote;	/* see enum jt_kind; NULL where none */
	char *from;		/* the specifier's resolved file, NULL if none or unresolved */
	int spec;		/* the statement has a specifier */
};

struct jt_file {
	char *path;
	struct rs_text text;
	struct jt_bind *b;
	size_t b_nr, b_alloc;
	struct jt_bind *tb;	/* type-only ones (`import type`, `{ type a }`): for type names */
	size_t tb_nr, tb_alloc;	/* tb's count and room */
};

/* What origin() follows a name to: a function or class (a value), a class,
 * interface or type alias (a type), a function, class or module-level
 * variable (a variable), a function or class named in a type (`typeof f`,
 * through type-only imports too). */
enum jt_mode { JT_VALUE, JT_TYPE, JT_VAR, JT_TYPEOF };

struct js_types {
	struct refs *r;
	struct jt_file **f;	/* the files read (each allocated: pointers stay valid) */
	size_t f_nr, f_alloc;
	sqlite3_stmt *imps, *def, *cls, *importers, *named, *iface, *nested, *tdef, *tdefs;
	int bounded;		/* js_aliases() stopped at a bound: warned once */
};

/* An expression being read: its text, where the names in it are. */
struct jt_ctx {
	const char *path;	/* the file */
	const char *scope;	/* the enclosing scope, for `this` */
	long line;		/* the line, for variables in scope */
	const struct js_class *self;	/* what `this` is, or NULL: the class of scope */
	int depth;
};

static int eval_expr(struct js_types *t, const struct jt_ctx *x, const char *e, struct js_class *out,
		     const char **rest);

struct js_types *js_types_new(struct refs *r)
{
	struct js_types *t = xcalloc(1, sizeof(*t));

	t->r = r;
	return t;
}

void js_types_free(struct js_types *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->f_nr; i++) {
		struct jt_file *f = t->f[i];
		for (size_t k = 0; k < f->b_nr + f->tb_nr; k++) {
			struct jt_bind *b = k < f->b_nr ? &f->b[k] : &f->tb[k - f->b_nr];
			free(b->local);
			free(b->remote);
			free(b->from);
		}
		free(f->b);
		free(f->tb);
		for (long l = 0; l < f->text.lines_nr; l++)
			free(f->text.lines[l]);
		free(f->text.lines);
		free(f->path);
		free(f);
	}
	free(t->f);
	sqlite3_finalize(t->imps);
	sqlite3_finalize(t->def);
	sqlite3_finalize(t->cls);
	sqlite3_finalize(t->importers);
	sqlite3_finalize(t->named);
	sqlite3_finalize(t->iface);
	sqlite3_finalize(t->nested);
	sqlite3_finalize(t->tdef);
	sqlite3_finalize(t->tdefs);
	free(t);
}

static int ident_char(int c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static int blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* An identifier at *p (after blanks; `#a`, a private name, too) copied to
 * out; *p moved past it. */
static int take_word(const char **p, char *out, size_t n)
{
	const char *s = skip_ws(*p), *e = s;

	if (*e == '#')
		e++;
	while (ident_char(*e))
		e++;
	if (e == s || e == s + (*s == '#') || (size_t)(e - s) >= n || isdigit((unsigned char)*s))
		return 0;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	*p = e;
	return 1;
}

/* 1 (and *p past it) if the word kw is next. */
static int take_kw(const char **p, const char *kw)
{
	const char *s = skip_ws(*p);
	size_t n = strlen(kw);

	if (strncmp(s, kw, n) || ident_char(s[n]))
		return 0;
	*p = s + n;
	return 1;
}

/* A quoted string at *p copied to out. */
static int take_string(const char **p, char *out, size_t n)
{
	const char *s = skip_ws(*p), *e;

	if (*s != '\'' && *s != '"' && *s != '`')
		return 0;
	e = strchr(s + 1, *s);
	if (!e || (size_t)(e - s - 1) >= n)
		return 0;
	memcpy(out, s + 1, (size_t)(e - s - 1));
	out[e - s - 1] = '\0';
	*p = e + 1;
	return 1;
}

/* The resolved file of specifier spec imported by the file path, or NULL (malloc'd). */
static char *spec_file(struct js_types *t, const char *path, const char *spec)
{
	char *res = NULL;

	if (!t->imps)
		t->imps = refs_prep(t->r, "SELECT resolved FROM imports WHERE path = ?1 AND target = ?2 "
				    "AND resolved IS NOT NULL LIMIT 1");
	sqlite3_reset(t->imps);
	sqlite3_bind_text(t->imps, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->imps, 2, spec, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(t->imps) == SQLITE_ROW && refs_col(t->imps, 0))
		res = xstrdup(refs_col(t->imps, 0));
	sqlite3_reset(t->imps);
	return res;
}

static void add_bind(struct jt_file *f, enum jt_kind kind, const char *local, const char *remote, int type)
{
	struct jt_bind *b;

	if (type) {
		ALLOC_GROW(f->tb, f->tb_nr + 1, f->tb_alloc);
		b = &f->tb[f->tb_nr++];
	} else {
		ALLOC_GROW(f->b, f->b_nr + 1, f->b_alloc);
		b = &f->b[f->b_nr++];
	}
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->local = local ? xstrdup(local) : NULL;
	b->remote = remote ? xstrdup(remote) : NULL;
}

/* The `{ a as b, type c, d }` list at *p: each item added as kind (local b,
 * remote a), `type c` and all of them with all_type among the type-only ones. */
static void take_list(const char **p, struct jt_file *f, enum jt_kind kind, int all_type)
{
	const char *s = skip_ws(*p);
	char a[128], b[128];

	if (*s != '{')
		return;
	s++;
	while (*(s = skip_ws(s)) && *s != '}') {
		int type = 0;
		const char *save = s;

		if (take_kw(&s, "type") && take_word(&(const char *){ s }, a, sizeof(a)))
			type = 1;
		else
			s = save;
		if (!take_word(&s, a, sizeof(a)) && !take_string(&s, a, sizeof(a)))
			break;
		strcpy(b, a);
		if (take_kw(&s, "as") && !take_word(&s, b, sizeof(b)) && !take_string(&s, b, sizeof(b)))
			break;
		add_bind(f, kind, b, a, type || all_type);
		s = skip_ws(s);
		if (*s == ',')
			s++;
	}
	*p = *s == '}' ? s + 1 : s;
}

/* The bindings of one import or export statement (text after the keyword) of f. */
static void parse_stmt(struct js_types *t, struct jt_file *f, int import, const char *p)
{
	size_t first = f->b_nr, tfirst = f->tb_nr;
	char w[128], spec[512];
	int all_type = 0;
	const char *s = p;

	if (take_kw(&s, "type") && !take_kw(&(const char *){ s }, "from") && !take_kw(&(const char *){ s }, "=")) {
		all_type = 1;	/* import type ..., export type { ... } */
		p = s;
	}
	if (import) {
		if (take_word(&p, w, sizeof(w)))
			add_bind(f, JT_DEFAULT, w, "default", all_type);
		p = skip_ws(p);
		if (*p == ',')
			p++;
		p = skip_ws(p);
		if (*p == '*') {
			p++;
			if (!take_kw(&p, "as") || !take_word(&p, w, sizeof(w)))
				return;
			add_bind(f, JT_NS, w, NULL, all_type);
		} else {
			take_list(&p, f, JT_IMPORT, all_type);
		}
	} else {
		p = skip_ws(p);
		if (*p == '*') {
			p++;
			if (take_kw(&(const char *){ p }, "as"))
				return;	/* export * as ns from: a namespace */
			add_bind(f, JT_STAR, NULL, NULL, all_type);
		} else if (*p == '{') {
			take_list(&p, f, JT_EXPORT, all_type);
		} else if (all_type) {
			return;	/* export type T = ... */
		} else if (take_kw(&p, "default")) {
			take_kw(&p, "async");
			take_kw(&p, "abstract");
			if (take_kw(&p, "function") || take_kw(&p, "class")) {
				p = skip_ws(p);
				if (*p == '*')
					p++;
			}
			if (take_word(&p, w, sizeof(w)) && strcmp(w, "extends") && strcmp(w, "new"))
				add_bind(f, JT_EXPORT, "default", w, 0);
			return;
		} else {
			return;
		}
	}
	if (!take_kw(&p, "from") || !take_string(&p, spec, sizeof(spec)))
		return;
	for (size_t i = first; i < f->b_nr; i++) {
		f->b[i].spec = 1;
		f->b[i].from = spec_file(t, f->path, spec);
	}
	for (size_t i = tfirst; i < f->tb_nr; i++) {
		f->tb[i].spec = 1;
		f->tb[i].from = spec_file(t, f->path, spec);
	}
}

/* Read the import and export statements of f (lines at the left margin). */
static void parse_file(struct js_types *t, struct jt_file *f)
{
	struct buf st = BUF_INIT;

	for (long l = 1; l <= f->text.lines_nr; l++) {
		const char *s = f->text.lines[l - 1], *p = s, *q;
		int import, depth = 0, multi;

		if (!s || (!(import = take_kw(&p, "import")) && !take_kw(&p, "export")) || s[0] == ' ' || s[0] == '\t')
			continue;
		buf_reset(&st);
		q = skip_ws(p);
		if (take_kw(&q, "type"))
			q = skip_ws(q);
		multi = *q == '{' || (import && strchr(s, '{'));
		for (long k = l; k <= f->text.lines_nr && k < l + 200; k++) {
			const char *u = f->text.lines[k - 1] ? f->text.lines[k - 1] : "";
			buf_addstr(&st, u);
			buf_addch(&st, ' ');
			for (; *u; u++)
				depth += *u == '{' ? 1 : *u == '}' ? -1 : 0;
			if (depth <= 0)
				break;
			if (!multi)
				break;
		}
		p = st.buf;
		take_kw(&p, import ? "import" : "export");
		parse_stmt(t, f, import, p);
	}
	buf_release(&st);
}

/* The file path read and parsed (cached), or NULL if the index has none. */
static struct jt_file *file_of(struct js_types *t, const char *path)
{
	struct jt_file *f;

	for (size_t i = 0; i < t->f_nr; i++)
		if (!strcmp(t->f[i]->path, path))
			return t->f[i]->text.lines || t->f[i]->b_nr ? t->f[i] : NULL;
	ALLOC_GROW(t->f, t->f_nr + 1, t->f_alloc);
	f = t->f[t->f_nr++] = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	if (!refs_file_lines(t->r, path, &f->text))
		return NULL;
	parse_file(t, f);
	return f;
}

int js_imports_name(struct js_types *t, const char *path, const char *name)
{
	struct jt_file *f = file_of(t, path);
	int any = 0;

	for (size_t i = 0; f && i < f->b_nr; i++) {
		const struct jt_bind *b = &f->b[i];

		if (b->kind != JT_IMPORT && b->kind != JT_DEFAULT && b->kind != JT_NS)
			continue;
		any = 1;
		if (!b->local || strcmp(b->local, name))
			continue;
		if (!b->from)
			return JS_IMPORT_OUTSIDE;
		return b->kind == JT_IMPORT && b->remote && !strcmp(b->remote, name) ? JS_IMPORT_SAME : JS_IMPORT_RENAMED;
	}
	return any ? JS_IMPORT_NONE : JS_IMPORT_NO_MODULE;
}

/* 1 if the file path defines name at module level (a function or a class). */
static int module_def(struct js_types *t, const char *path, const char *name)
{
	int ok;

	if (!t->def)
		t->def = refs_prep(t->r, "SELECT 1 FROM defs d JOIN files f ON f.blob_id = d.blob_id WHERE f.path = ?1 "
				   "AND d.name = ?2 AND d.scope IS NULL AND d.kind IN ('function', 'class') LIMIT 1");
	sqlite3_reset(t->def);
	sqlite3_bind_text(t->def, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->def, 2, name, -1, SQLITE_TRANSIENT);
	ok = sqlite3_step(t->def) == SQLITE_ROW;
	sqlite3_reset(t->def);
	return ok;
}

static int set_def(struct js_class *out, const char *path, const char *name)
{
	if (strlen(path) >= sizeof(out->path) || strlen(name) >= sizeof(out->name))
		return 0;
	memset(out, 0, sizeof(*out));
	strcpy(out->path, path);
	strcpy(out->name, name);
	return 1;
}

/* 1 if the file path declares name at module level as a type: a class, an
 * interface, a type alias. */
static int module_type(struct js_types *t, const char *path, const char *name)
{
	int ok;

	if (!t->tdef)
		t->tdef = refs_prep(t->r, "SELECT 1 FROM defs d JOIN files f ON f.blob_id = d.blob_id WHERE f.path = ?1 "
				    "AND d.name = ?2 AND d.scope IS NULL AND d.kind IN ('class', 'interface', 'type') "
				    "LIMIT 1");
	sqlite3_reset(t->tdef);
	sqlite3_bind_text(t->tdef, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->tdef, 2, name, -1, SQLITE_TRANSIENT);
	ok = sqlite3_step(t->tdef) == SQLITE_ROW;
	sqlite3_reset(t->tdef);
	return ok;
}

/* The line of the module-level declaration of the variable name in f
 * (`[export] [declare] const|let|var name` at the left margin), or 0. */
static long module_var(struct jt_file *f, const char *name)
{
	for (long l = 1; f && l <= f->text.lines_nr; l++) {
		const char *p = f->text.lines[l - 1];
		char w[128];

		if (!p || blank(*p))
			continue;
		take_kw(&p, "export");
		take_kw(&p, "declare");
		if ((take_kw(&p, "const") || take_kw(&p, "let") || take_kw(&p, "var")) &&
		    take_word(&p, w, sizeof(w)) && !strcmp(w, name))
			return l;
	}
	return 0;
}

/* 1 if name is what mode looks for at module level in path. */
static int module_has(struct js_types *t, const char *path, const char *name, enum jt_mode mode)
{
	if (mode == JT_TYPE)
		return module_type(t, path, name);
	return module_def(t, path, name) || (mode == JT_VAR && module_var(file_of(t, path), name));
}

/* The bindings of f that mode follows: the value ones, then for a type the type-only ones. */
static size_t binds_nr(const struct jt_file *f, enum jt_mode mode)
{
	return f ? f->b_nr + (mode == JT_TYPE || mode == JT_TYPEOF ? f->tb_nr : 0) : 0;
}

static const struct jt_bind *bind_i(const struct jt_file *f, size_t i)
{
	return i < f->b_nr ? &f->b[i] : &f->tb[i - f->b_nr];
}

static int exported(struct js_types *t, const char *path, const char *name, int depth, enum jt_mode mode,
		    struct js_class *out);

/* What the module-level name means in path (see js_origin()), as mode. */
static int origin(struct js_types *t, const char *path, const char *name, int depth, enum jt_mode mode,
		  struct js_class *out)
{
	struct jt_file *f = depth < JT_DEPTH ? file_of(t, path) : NULL;

	for (size_t i = 0; i < binds_nr(f, mode); i++) {
		const struct jt_bind *b = bind_i(f, i);
		if ((b->kind == JT_IMPORT || b->kind == JT_DEFAULT) && !strcmp(b->local, name))
			return b->from && exported(t, b->from, b->remote, depth + 1, mode, out);
	}
	return module_has(t, path, name, mode) && set_def(out, path, name);
}

/* What the file path exports as name, as mode. */
static int exported(struct js_types *t, const char *path, const char *name, int depth, enum jt_mode mode,
		    struct js_class *out)
{
	struct jt_file *f = depth < JT_DEPTH ? file_of(t, path) : NULL;

	if (!f)
		return 0;
	for (size_t i = 0; i < binds_nr(f, mode); i++) {
		const struct jt_bind *b = bind_i(f, i);
		if (b->kind != JT_EXPORT || strcmp(b->local, name))
			continue;
		if (b->spec)
			return b->from && exported(t, b->from, b->remote, depth + 1, mode, out);
		return origin(t, path, b->remote, depth + 1, mode, out);
	}
	if (strcmp(name, "default") && module_has(t, path, name, mode))
		return set_def(out, path, name);
	for (size_t i = 0; i < binds_nr(f, mode); i++) {
		const struct jt_bind *b = bind_i(f, i);
		if (b->kind == JT_STAR && b->from && exported(t, b->from, name, depth + 1, mode, out))
			return 1;
	}
	return 0;
}

int js_origin(struct js_types *t, const char *path, const char *ns, const char *name, struct js_class *out)
{
	struct jt_file *f;

	if (!ns)
		return origin(t, path, name, 0, JT_VALUE, out);
	f = file_of(t, path);
	for (size_t i = 0; f && i < f->b_nr; i++)
		if (f->b[i].kind == JT_NS && !strcmp(f->b[i].local, ns))
			return f->b[i].from && exported(t, f->b[i].from, name, 1, JT_VALUE, out);
	return 0;
}

/* A (file, name) pair of js_aliases()'s walk. */
struct jt_pair {
	char *path, *name;
};

#define JT_PAIRS_MAX 256		/* (file, name) pairs js_aliases() follows */
#define JT_IMPORTERS_MAX 512	/* importers of one file it reads */

/* Queue (path, name) unless queued; 1 when the queue is full and it was dropped. */
static int push_pair(struct jt_pair **q, size_t *nr, size_t *alloc, const char *path, const char *name)
{
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp((*q)[i].path, path) && !strcmp((*q)[i].name, name))
			return 0;
	if (*nr >= JT_PAIRS_MAX)
		return 1;
	ALLOC_GROW(*q, *nr + 1, *alloc);
	(*q)[*nr].path = xstrdup(path);
	(*q)[(*nr)++].name = xstrdup(name);
	return 0;
}

static void add_name(char ***names, size_t *nr, const char *name, const char *self)
{
	if (!strcmp(name, self) || !strcmp(name, "default"))
		return;
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp((*names)[i], name))
			return;
	*names = xrealloc(*names, (*nr + 1) * sizeof(**names));
	(*names)[(*nr)++] = xstrdup(name);
}

/* js_aliases()'s step for the pair (path, name): the file's own `export { name
 * as b }`, and each importer's bindings of it.  1 when a bound left some out. */
static int alias_step(struct js_types *t, const char *path, const char *name, struct jt_pair **q, size_t *q_nr,
		       size_t *q_alloc, char ***names, size_t *nr, const char *self)
{
	struct jt_file *f = file_of(t, path);
	char **imp = NULL;
	size_t imp_nr = 0;
	int bounded = 0;

	for (size_t i = 0; f && i < f->b_nr; i++)
		if (f->b[i].kind == JT_EXPORT && !f->b[i].spec && !strcmp(f->b[i].remote, name))
			bounded |= push_pair(q, q_nr, q_alloc, path, f->b[i].local);
	if (!t->importers)
		t->importers = refs_prep(t->r, "SELECT DISTINCT path FROM imports WHERE resolved = ?1 ORDER BY path");
	sqlite3_reset(t->importers);
	sqlite3_bind_text(t->importers, 1, path, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(t->importers) == SQLITE_ROW) {
		if (imp_nr >= JT_IMPORTERS_MAX) {
			bounded = 1;
			break;
		}
		imp = xrealloc(imp, (imp_nr + 1) * sizeof(*imp));
		imp[imp_nr++] = xstrdup(refs_col(t->importers, 0));
	}
	sqlite3_reset(t->importers);
	for (size_t k = 0; k < imp_nr; k++) {
		struct jt_file *g = file_of(t, imp[k]);
		for (size_t i = 0; g && i < g->b_nr; i++) {
			const struct jt_bind *b = &g->b[i];
			if (!b->from || strcmp(b->from, path))
				continue;
			if (b->kind == JT_STAR) {
				bounded |= push_pair(q, q_nr, q_alloc, imp[k], name);
			} else if ((b->kind == JT_IMPORT || b->kind == JT_DEFAULT || b->kind == JT_EXPORT) &&
				   !strcmp(b->remote, name)) {
				add_name(names, nr, b->local, self);
				bounded |= push_pair(q, q_nr, q_alloc, imp[k], b->local);
			}
		}
		free(imp[k]);
	}
	free(imp);
	return bounded;
}

void js_aliases(struct js_types *t, const char *path, const char *name, char ***names, size_t *nr)
{
	struct jt_pair *q = NULL;
	size_t q_nr = 0, q_alloc = 0;

	int bounded = 0;

	*names = NULL;
	*nr = 0;
	push_pair(&q, &q_nr, &q_alloc, path, name);
	for (size_t i = 0; i < q_nr; i++) {
		add_name(names, nr, q[i].name, name);
		bounded |= alias_step(t, q[i].path, q[i].name, &q, &q_nr, &q_alloc, names, nr, name);
	}
	if (bounded && !t->bounded) {
		t->bounded = 1;
		warning("the other names of %s (%s) were followed to %d re-exports and %d importers a file: "
			"calls under names beyond those may be missing", name, path, JT_PAIRS_MAX,
			JT_IMPORTERS_MAX);
	}
	for (size_t i = 0; i < q_nr; i++) {
		free(q[i].path);
		free(q[i].name);
	}
	free(q);
}

/* The class name defined in path (its lines), into out: the only one, else
 * the one around line from, else the nearest above it in scope there. */
static int class_at(struct js_types *t, const char *path, const char *name, long from, struct js_class *out)
{
	struct jt_file *f = NULL;
	long best = 0, best_end = 0;
	int n = 0;

	if (!t->cls)
		t->cls = refs_prep(t->r, "SELECT d.line, d.end_line FROM defs d JOIN files f ON f.blob_id = d.blob_id "
				   "WHERE f.path = ?1 AND d.name = ?2 AND d.kind = 'class' ORDER BY d.line");
	sqlite3_reset(t->cls);
	sqlite3_bind_text(t->cls, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->cls, 2, name, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(t->cls) == SQLITE_ROW) {
		long l = sqlite3_column_int64(t->cls, 0), e = sqlite3_column_int64(t->cls, 1);
		if (n++ == 0) {
			best = l, best_end = e;
			continue;
		}
		if (from <= 0 || (!f && !(f = file_of(t, path)))) {
			best = 0;
			break;
		}
		if (best <= from && from <= best_end && !(l <= from && from <= e))
			continue;	/* the one around from stays */
		if ((l <= from && from <= e) ||
		    (l <= from && bind_js_visible((const char *const *)f->text.lines, f->text.lines_nr, l, from)))
			best = l, best_end = e;
	}
	sqlite3_reset(t->cls);
	if (!best || (n > 1 && best > from) || !set_def(out, path, name))
		return 0;
	out->line = best;
	out->end = best_end;
	return 1;
}

/* The interface or type alias name of path (the first one, module-level
 * ones first), into out. */
static int type_at(struct js_types *t, const char *path, const char *name, struct js_class *out)
{
	int ok = 0;

	if (!t->tdefs)
		t->tdefs = refs_prep(t->r, "SELECT d.line, d.end_line, d.kind FROM defs d JOIN files f ON "
				     "f.blob_id = d.blob_id WHERE f.path = ?1 AND d.name = ?2 AND d.kind IN "
				     "('interface', 'type') ORDER BY d.scope IS NOT NULL, d.line LIMIT 1");
	sqlite3_reset(t->tdefs);
	sqlite3_bind_text(t->tdefs, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->tdefs, 2, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(t->tdefs) == SQLITE_ROW && set_def(out, path, name)) {
		out->line = sqlite3_column_int64(t->tdefs, 0);
		out->end = sqlite3_column_int64(t->tdefs, 1);
		out->kind = strcmp(refs_col(t->tdefs, 2), "interface") ? JS_KIND_TYPE : JS_KIND_INTERFACE;
		ok = 1;
	}
	sqlite3_reset(t->tdefs);
	return ok;
}

static char *clean_text(const struct jt_file *f, long from, long to);
static const char *skip_group(const char *p);
static int type_ref(const char **p, char *out, size_t n);

/* The type name that the type alias ty stands for, `type A<T> = B<T>` or `=
 * B | null` (type_ref()), into out; 0 if it is another type. */
static int alias_of(struct js_types *t, const struct js_class *ty, char *out, size_t n)
{
	struct jt_file *f = file_of(t, ty->path);
	char *s;
	const char *p;
	int ok = 0;

	if (!f || ty->end - ty->line > 200)
		return 0;
	s = clean_text(f, ty->line, ty->end);
	p = tagtext_word(s, ty->name);
	if (p) {
		p = skip_ws(p + strlen(ty->name));
		if (*p == '<')
			p = skip_group(p);
		if (p && *(p = skip_ws(p)) == '=') {
			p++;
			ok = type_ref(&p, out, n) && (*(p = skip_ws(p)) == ';' || !*p) && strcmp(out, ty->name);
		}
	}
	free(s);
	return ok;
}

/* The class (else the interface or type alias) a type name means in the
 * file path at line from: one the file imports (`import type` too) or
 * declares at module level, else one declared in a function of the file,
 * in scope at from; a type alias that stands for another type name
 * (alias_of()) is that one. */
static int type_class(struct js_types *t, const char *path, const char *name, long from, struct js_class *out)
{
	struct js_class o, at, u;
	char tn[128], cur[128];

	if (origin(t, path, name, 0, JT_TYPE, &o)) {
		if (!class_at(t, o.path, o.name, strcmp(o.path, path) ? 0 : from, out) && !type_at(t, o.path, o.name, out))
			return 0;
	} else if (!class_at(t, path, name, from, out) && !type_at(t, path, name, out)) {
		return 0;
	}
	for (int hops = 0; hops < JT_DEPTH && out->kind == JS_KIND_TYPE && alias_of(t, out, tn, sizeof(tn)); hops++) {
		at = *out;
		strcpy(cur, tn);
		if (origin(t, at.path, cur, 0, JT_TYPE, &o)) {
			if (!class_at(t, o.path, o.name, strcmp(o.path, at.path) ? 0 : at.line, &u) &&
			    !type_at(t, o.path, o.name, &u))
				break;
		} else if (!class_at(t, at.path, cur, at.line, &u) && !type_at(t, at.path, cur, &u)) {
			break;
		}
		*out = u;
	}
	return 1;
}

int js_in_interface(struct js_types *t, const char *path, const char *name, long line)
{
	int ok = 0;

	if (!t->iface)
		t->iface = refs_prep(t->r, "SELECT 1 FROM defs d JOIN files f ON f.blob_id = d.blob_id WHERE f.path = ?1 "
				     "AND d.name = ?2 AND d.kind = 'interface' AND d.line <= ?3 AND d.end_line >= ?3 LIMIT 1");
	sqlite3_reset(t->iface);
	sqlite3_bind_text(t->iface, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->iface, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(t->iface, 3, line);
	ok = sqlite3_step(t->iface) == SQLITE_ROW;
	sqlite3_reset(t->iface);
	return ok;
}

/* The text of lines [from, to] of f joined by blanks (malloc'd). */
static char *join_lines(const struct jt_file *f, long from, long to)
{
	struct buf b = BUF_INIT;

	for (long l = from; l <= to && l <= f->text.lines_nr; l++) {
		if (l < 1)
			continue;
		buf_addstr(&b, f->text.lines[l - 1] ? f->text.lines[l - 1] : "");
		buf_addch(&b, ' ');
	}
	return buf_detach(&b, NULL);
}

/* Past the bracketed group opening at p (`(...)`, `[...]`, `{...}`; `<...>`
 * counts angle brackets too, but for `=>`), or NULL. */
static const char *skip_group(const char *p)
{
	int depth = 0, angle = *p == '<';
	char prev = 0;

	for (; *p; prev = *p++) {
		if (*p == '\'' || *p == '"' || *p == '`') {
			const char *e = strchr(p + 1, *p);
			if (!e)
				return NULL;
			p = e;
		} else if (*p == '(' || *p == '[' || *p == '{' || (angle && *p == '<')) {
			depth++;
		} else if (*p == ')' || *p == ']' || *p == '}' || (angle && *p == '>' && prev != '=')) {
			if (--depth == 0)
				return p + 1;
		}
	}
	return NULL;
}

/* Past the group or the string at p (skip_group()), or NULL. */
static const char *skip_group_or_string(const char *p)
{
	const char *e;

	if (*p != '\'' && *p != '"' && *p != '`')
		return skip_group(p);
	e = strchr(p + 1, *p);
	return e ? e + 1 : NULL;
}

/*
 * One part of a type at *p, *p moved past it: 1 for a type name (copied to
 * out, `a.B<X>`: B), 2 for one that names nothing of the repository's code
 * (a primitive type's keyword, a literal, an array `X[]`), 0 for anything
 * else (followed by & . or [, a function type, ...).
 */
static int type_part(const char **p, char *out, size_t n)
{
	static const char *const prims[] = { "null", "undefined", "void", "string", "number", "boolean", "bigint",
					     "symbol", "never", "true", "false", NULL };
	const char *s = skip_ws(*p);
	char w[128];
	int prim = 0;

	if (*s == '\'' || *s == '"' || *s == '`') {
		if (!(s = skip_group_or_string(s)))
			return 0;
		*p = s;
		return 2;
	}
	if (isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))) {
		for (s++; isalnum((unsigned char)*s) || *s == '.' || *s == '_'; s++)
			;
		*p = s;
		return 2;
	}
	if (!take_word(&s, w, sizeof(w)))
		return 0;
	while (*s == '.' && take_word(&(const char *){ s + 1 }, w, sizeof(w))) {
		s++;
		take_word(&s, w, sizeof(w));
	}
	for (const char *const *m = prims; *m && !prim; m++)
		prim = !strcmp(w, *m);
	s = skip_ws(s);
	if (*s == '<' && !(s = skip_group(s)))
		return 0;
	s = skip_ws(s);
	if (s[0] == '[' && s[1] == ']') {
		while (s[0] == '[' && s[1] == ']')
			s = skip_ws(s + 2);
		*p = s;
		return 2;
	}
	if (*s == '&' || *s == '.' || *s == '[')
		return 0;
	*p = s;
	if (prim)
		return 2;
	if (strlen(w) >= n)
		return 0;
	strcpy(out, w);
	return 1;
}

/* The type named at *p (type_part()), alone or in a union with parts that
 * name nothing of the repository's code (`C | null`, `C | C[]`), into out;
 * *p moved past it.  0 if none or several, or a Promise. */
static int type_ref(const char **p, char *out, size_t n)
{
	const char *s = skip_ws(*p);
	char w[128];
	int names = 0;

	if (*s == '|')
		s++;
	for (;;) {
		int k = type_part(&s, w, sizeof(w));
		if (!k || (k == 1 && names++))
			return 0;
		if (k == 1 && (strlen(w) >= n || !strcmp(w, "Promise")))
			return 0;
		if (k == 1)
			strcpy(out, w);
		s = skip_ws(s);
		if (*s != '|')
			break;
		s++;
	}
	*p = s;
	return names == 1;
}

/*
 * The type a declaration gives after p (past a name): `<T>(params): R` or
 * `: R` alone (colon set), R an identifier (a.B: B) not followed by & [,
 * or one in a union with parts that name nothing of the repository's code
 * (type_ref()); "this" for `this`.  0 if none.
 */
static int decl_type(const char *p, int colon, char *out, size_t n)
{
	p = skip_ws(p);
	if (!colon) {
		if (*p == '<' && !(p = skip_group(p)))
			return 0;
		p = skip_ws(p);
		if (*p != '(' || !(p = skip_group(p)))
			return 0;
		p = skip_ws(p);
	}
	if (*p != ':')
		return 0;
	p++;
	return type_ref(&p, out, n);
}

/* The class that the type name tn, written in file path, means: "this" is self. */
static int named_class(struct js_types *t, const char *path, const char *tn, long from,
		       const struct js_class *self, struct js_class *out)
{
	if (!strcmp(tn, "this")) {
		if (!self)
			return 0;
		*out = *self;
		return 1;
	}
	return type_class(t, path, tn, from, out);
}

/* The class that the definition name at line l of path (a function or a
 * method, its lines l..end) returns: its declared type, else that of its
 * first `return x` (evaluated with `this` self). */
static int returns(struct js_types *t, const char *path, const char *name, long l, long end,
		   const struct js_class *self, int depth, struct js_class *out)
{
	struct jt_file *f = file_of(t, path);
	char *s, tn[128];
	const char *p;
	int ok = 0;

	if (!f || l < 1 || l > f->text.lines_nr || depth > JT_EXPR_DEPTH)
		return 0;
	s = join_lines(f, l, l + 30 < end ? l + 30 : end);
	p = tagtext_word(s, name);
	if (p) {
		const char *q = skip_ws(p + strlen(name));
		p += strlen(name);
		if (*q == '=' && q[1] != '=' && q[1] != '>') {
			p = skip_ws(q + 1);	/* const name = [async] (params): T => */
			take_kw(&p, "async");
		}
	}
	if (p && decl_type(p, 0, tn, sizeof(tn))) {
		ok = named_class(t, path, tn, l, self, out);
		free(s);
		return ok;
	}
	free(s);
	for (long k = l + 1; k <= end && k <= f->text.lines_nr && !ok; k++) {
		const char *q = f->text.lines[k - 1];
		const char *r = q ? tagtext_word(q, "return") : NULL;
		struct jt_ctx x = { path, NULL, k, self, depth + 1 };
		char *e;
		if (!r || strlen(q) > 4000)
			continue;
		r = skip_ws(r + 6);
		if (!*r || *r == ';')
			continue;
		e = join_lines(f, k, k + 100 < end ? k + 100 : end);	/* the expression, over lines */
		ok = eval_expr(t, &x, e + (r - q), out, NULL);
		free(e);
		return ok;
	}
	return 0;
}

/* The definitions named name in path with scope cls (NULL: module level), in
 * line order: their lines in ls[], ends in es[] (at most n); the count. */
static size_t defs_named(struct js_types *t, const char *path, const char *name, const char *cls,
			 long *ls, long *es, size_t n)
{
	size_t k = 0;

	if (!t->named)
		t->named = refs_prep(t->r, "SELECT d.line, d.end_line, d.scope FROM defs d JOIN files f ON "
				     "f.blob_id = d.blob_id WHERE f.path = ?1 AND d.name = ?2 AND "
				     "d.kind IN ('function', 'method') ORDER BY d.line");
	sqlite3_reset(t->named);
	sqlite3_bind_text(t->named, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->named, 2, name, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(t->named) == SQLITE_ROW && k < n) {
		const char *s = sqlite3_column_type(t->named, 2) == SQLITE_NULL ? NULL : refs_col(t->named, 2);
		const char *dot = s ? strrchr(s, '.') : NULL;
		if (cls ? !s || strcmp(dot ? dot + 1 : s, cls) : s != NULL)
			continue;
		ls[k] = sqlite3_column_int64(t->named, 0);
		es[k++] = sqlite3_column_int64(t->named, 1);
	}
	sqlite3_reset(t->named);
	return k;
}

/* 1 if name is an `import * as name` of the file path. */
static int is_ns(struct js_types *t, const char *path, const char *name)
{
	struct jt_file *f = file_of(t, path);

	for (size_t i = 0; f && i < f->b_nr; i++)
		if (f->b[i].kind == JT_NS && !strcmp(f->b[i].local, name))
			return 1;
	return 0;
}

/* The end line of the i-th of n definitions at ls[] ending at es[]: the line
 * before the next one (an overload signature's may be its first line), the
 * last one's own. */
static long def_end(const long *ls, const long *es, size_t i, size_t n)
{
	return i + 1 < n ? ls[i + 1] - 1 : es[i] > ls[i] ? es[i] : ls[i];
}

/* The class the first of the n overloads of name in path (at ls[], ending
 * at es[]) that returns one gives, else the interface or type alias the
 * first gives (`m(): Meta | undefined` beside `m(v: Meta): this`: this). */
static int overloads_return(struct js_types *t, const char *path, const char *name, const long *ls,
			    const long *es, size_t n, const struct js_class *self, int depth, struct js_class *out)
{
	struct js_class r;
	int other = 0;

	for (size_t i = 0; i < n; i++) {
		if (!returns(t, path, name, ls[i], def_end(ls, es, i, n), self, depth + 1, &r))
			continue;
		if (r.kind == JS_KIND_CLASS) {
			*out = r;
			return 1;
		}
		if (!other++)
			*out = r;
	}
	return other > 0;
}

/* The class a call of the function name returns, name meaning what it means in path. */
static int function_returns(struct js_types *t, const char *path, const char *ns, const char *name, int depth,
			    struct js_class *out)
{
	struct js_class o;
	long ls[16], es[16];
	size_t n;

	if (!js_origin(t, path, ns, name, &o))
		return 0;
	if (class_at(t, o.path, o.name, 0, out))
		return 0;	/* C() without new */
	n = defs_named(t, o.path, o.name, NULL, ls, es, 16);
	return overloads_return(t, o.path, o.name, ls, es, n, NULL, depth, out);
}

/* The class a call of method name on an object of class self returns, the
 * method of cls (self, or a base of it for super.name()) or of its nearest
 * base declaring it. */
static int method_returns(struct js_types *t, const struct js_class *cls, const struct js_class *self,
			  const char *name, int depth, struct js_class *out)
{
	struct js_class c = *cls, b;
	long ls[16], es[16];

	for (int hops = 0; hops < JT_DEPTH; hops++) {
		size_t n = defs_named(t, c.path, name, c.name, ls, es, 16);
		if (n || !js_base(t, &c, &b))
			return overloads_return(t, c.path, name, ls, es, n, self, depth, out);
		c = b;
	}
	return 0;
}

/* The number of modifiers (private, readonly, ...) that make up p..e, blanks
 * aside; -1 if something else is there. */
static int modifiers(const char *p, const char *e)
{
	static const char *const mods[] = { "private", "public", "protected", "readonly", "static",
					     "declare", "override", NULL };
	int n = 0;

	for (;;) {
		int found = 0;
		p += strspn(p, " \t");
		if (p >= e)
			return n;
		for (const char *const *m = mods; *m && !found; m++)
			if (!strncmp(p, *m, strlen(*m)) && !ident_char(p[strlen(*m)]))
				p += strlen(*m), found = 1;
		if (!found)
			return -1;
		n++;
	}
}

/* 1 if the text of s before e is blanks and modifiers (a class member's
 * start), or a '(' or ',' then at least one modifier (a constructor's
 * parameter property, `constructor(private a: C)`). */
static int member_start(const char *s, const char *e)
{
	const char *p = e;

	if (modifiers(s, e) >= 0)
		return 1;
	while (p > s && p[-1] != '(' && p[-1] != ',')
		p--;
	return p > s && modifiers(p, e) > 0;
}

/* 1 if the text of s before e is `get` after a member's start (a getter's name follows). */
static int getter_start(const char *s, const char *e)
{
	while (e > s && blank(e[-1]))
		e--;
	if (e - s < 3 || strncmp(e - 3, "get", 3) || (e - s > 3 && ident_char(e[-4])))
		return 0;
	return modifiers(s, e - 3) >= 0;
}

/* The class of field name of an object of class cls: `name: C`, `name = new
 * C(` in the class body, `this.name = new C(` in its methods, a getter `get
 * name(): C` (`this`: self). */
static int field_class(struct js_types *t, const struct js_class *cls, const char *name,
		       const struct js_class *self, struct js_class *out)
{
	struct jt_file *f = file_of(t, cls->path);
	int priv = name[0] == '#';
	char tn[128];

	name += priv;	/* #a: the word a after a '#' */
	for (long l = cls->line + 1; f && l < cls->end && l <= f->text.lines_nr; l++) {
		const char *s = f->text.lines[l - 1], *p;
		for (p = s ? tagtext_word(s, name) : NULL; p; p = tagtext_word(p + 1, name)) {
			const char *q = skip_ws(p + strlen(name)), *e = p;
			int on_this, member;
			if (priv != (p > s && p[-1] == '#'))
				continue;
			e -= priv;
			while (e > s && blank(e[-1]))
				e--;
			on_this = e - s >= 5 && !strncmp(e - 5, "this.", 5);
			member = !on_this && member_start(s, e);
			if (!priv && !on_this && *q == '(' && getter_start(s, e))
				return decl_type(q, 0, tn, sizeof(tn)) && named_class(t, cls->path, tn, l, self, out);
			if (*q == '?' || *q == '!')
				q++;
			if (*q == ':' && member && decl_type(q, 1, tn, sizeof(tn)) && strcmp(tn, "this"))
				return type_class(t, cls->path, tn, l, out);
			if (*q == '=' && q[1] != '=' && q[1] != '>' && (on_this || member)) {
				q = skip_ws(q + 1);
				if (take_kw(&q, "new") && take_word(&q, tn, sizeof(tn)))
					return type_class(t, cls->path, tn, l, out);
			}
		}
	}
	return 0;
}

/* The text of lines [from, to] of f joined by newlines, comments blanked
 * (malloc'd). */
static char *clean_text(const struct jt_file *f, long from, long to)
{
	struct buf b = BUF_INIT;
	int comment = 0;	/* inside a block comment */
	char quote = 0;		/* inside a template literal, over lines */

	for (long l = from < 1 ? 1 : from; l <= to && l <= f->text.lines_nr; l++) {
		const char *p = f->text.lines[l - 1] ? f->text.lines[l - 1] : "";
		for (; *p; p++) {
			if (comment) {
				if (*p == '*' && p[1] == '/')
					comment = 0, p++;
				buf_addch(&b, ' ');
			} else if (quote) {
				buf_addch(&b, *p);
				if (*p == quote)
					quote = 0;
			} else if (*p == '/' && p[1] == '/') {
				break;
			} else if (*p == '/' && p[1] == '*') {
				comment = 1, p++;
				buf_addch(&b, ' ');
			} else {
				if (*p == '`' || *p == '\'' || *p == '"')
					quote = *p;
				buf_addch(&b, *p);
			}
		}
		if (quote != '`')
			quote = 0;
		buf_addch(&b, '\n');
	}
	return buf_detach(&b, NULL);
}


/* Past the type at p up to a separator at its level: ';', ',', a newline
 * or e, groups skipped; NULL if a group does not close. */
static const char *skip_member(const char *p, const char *e)
{
	while (p && p < e && *p && *p != ';' && *p != ',' && *p != '\n')
		p = strchr("({[<'\"`", *p) ? skip_group_or_string(p) : p + 1;
	return p && p > e ? NULL : p;
}

/* The return type of the function type at p (`<T>(params) => R`), R an
 * identifier as decl_type() reads it; 0 if none. */
static int fn_return(const char *p, char *out, size_t n)
{
	p = skip_ws(p);
	if (*p == '<' && !(p = skip_group(p)))
		return 0;
	p = skip_ws(p);
	if (*p != '(' || !(p = skip_group(p)))
		return 0;
	p = skip_ws(p);
	if (p[0] != '=' || p[1] != '>')
		return 0;
	/* decl_type() reads `: R`: the arrow stands for the colon */
	{
		char *s = xstrdup(p + 1);
		int ok;
		s[0] = ':';
		ok = decl_type(s, 1, out, n);
		free(s);
		return ok;
	}
}

static int member_of(struct js_types *t, const struct js_class *ty, const char *name, int call,
		     const struct js_class *self, int depth, struct js_class *out);

/*
 * The member name of the object type whose members are [p, e) (the inside
 * of `{ ... }` in the file path, at line): a property `name: T` (for a call
 * name: `(...) => T`), a getter `get name(): T`, a method `name(...): T`
 * (for a call); *found set where the object type declares name.  The class
 * (interface, type alias) of T, `this` being self; with call 2, the callee
 * itself: the function or class f of a property `name: typeof f`.
 */
static int body_member(struct js_types *t, const char *path, long line, const char *p, const char *e,
		       const char *name, int call, const struct js_class *self, int *found, struct js_class *out)
{
	char w[128], tn[128];

	*found = 0;
	while (p && p < e) {
		const char *q;
		int get = 0;

		p = skip_ws(p);
		if (p >= e)
			break;
		while (take_kw(&p, "readonly") || take_kw(&p, "public") || take_kw(&p, "protected") ||
		       take_kw(&p, "private") || take_kw(&p, "static") || take_kw(&p, "declare") ||
		       take_kw(&p, "abstract") || take_kw(&p, "override"))
			;
		q = p;
		if (take_kw(&q, "get") && take_word(&(const char *){ q }, w, sizeof(w)))
			p = q, get = 1;
		if (take_word(&p, w, sizeof(w)) && !strcmp(w, name)) {
			q = skip_ws(p);
			if (*q == '?')
				q = skip_ws(q + 1);
			*found = 1;
			if (call == 2) {	/* name: typeof f */
				if (get || *q != ':')
					return 0;
				q++;
				if (!take_kw(&q, "typeof") || !take_word(&q, tn, sizeof(tn)))
					return 0;
				while (blank(*q))
					q++;
				return (q >= e || *q == ';' || *q == ',' || *q == '\n') &&
				       origin(t, path, tn, 0, JT_TYPEOF, out);
			}
			if ((*q == '(' || *q == '<') && get == !call)
				return decl_type(q, 0, tn, sizeof(tn)) && named_class(t, path, tn, line, self, out);
			if (*q == ':' && !get && !call)
				return decl_type(q, 1, tn, sizeof(tn)) && named_class(t, path, tn, line, self, out);
			if (*q == ':' && !get && call)
				return fn_return(q + 1, tn, sizeof(tn)) && named_class(t, path, tn, line, self, out);
			return 0;
		}
		if ((p = skip_member(p, e)) && p < e)
			p++;
	}
	return 0;
}

/* 1 if the type at p (up to a ';' at its level or end) is a union or a
 * conditional type: a '|' or '?' outside its groups. */
static int not_one_type(const char *p, const char *end)
{
	while (p && p < end && *p && *p != ';') {
		if (*p == '|' || *p == '?')
			return 1;
		p = strchr("({[<'\"`", *p) ? skip_group_or_string(p) : p + 1;
	}
	return !p;
}

/* The member name of the type at p (in ty's file): an intersection `A & {
 * ... } & B<X>` of object types and type names, each looked up in turn
 * (the first declaring name answers); not a union. */
static int parts_member(struct js_types *t, const struct js_class *ty, const char *p, const char *end,
			const char *name, int call, const struct js_class *self, int depth, struct js_class *out)
{
	if (not_one_type(p, end))
		return 0;
	for (;;) {
		struct js_class u;
		const char *q;
		char w[128];
		int found = 0, named = 0;

		p = skip_ws(p);
		if (*p == '{') {
			if (!(q = skip_group(p)) || q > end)
				return 0;
		} else if (take_word(&p, w, sizeof(w))) {
			while (*p == '.' && take_word(&(const char *){ p + 1 }, w, sizeof(w))) {
				p++;
				take_word(&p, w, sizeof(w));
			}
			q = skip_ws(p);
			if (*q == '<' && !(q = skip_group(q)))
				return 0;
			named = 1;
		} else {
			return 0;
		}
		q = skip_ws(q);
		if (q < end && *q && *q != '&' && *q != ';')
			return 0;	/* X[], keyof X, ...: not an object type */
		if (named) {
			if (type_class(t, ty->path, w, ty->line, &u) &&
			    member_of(t, &u, name, call, u.kind == JS_KIND_CLASS ? &u : self, depth + JT_TYPE_HOP, out))
				return 1;
		} else {
			if (body_member(t, ty->path, ty->line, p + 1, q - 1, name, call, self, &found, out))
				return 1;
			if (found)
				return 0;
		}
		if (*q != '&')
			return 0;
		p = q + 1;
	}
}

/* The member name of the interface or type alias ty: its object type, the
 * parts of an alias's intersection, the interfaces an interface extends. */
static int type_member(struct js_types *t, const struct js_class *ty, const char *name, int call,
		       const struct js_class *self, int depth, struct js_class *out)
{
	struct jt_file *f = file_of(t, ty->path);
	char *s, w[128];
	const char *p, *e;
	int ok = 0, found = 0;

	if (!f || depth > JT_EXPR_DEPTH || ty->end - ty->line > 2000)
		return 0;
	s = clean_text(f, ty->line, ty->end);
	p = tagtext_word(s, ty->name);
	if (!p) {
		free(s);
		return 0;
	}
	p = skip_ws(p + strlen(ty->name));
	if (*p == '<')
		p = skip_group(p);
	if (p && ty->kind == JS_KIND_TYPE) {
		p = skip_ws(p);
		if (*p == '=')
			ok = parts_member(t, ty, p + 1, s + strlen(s), name, call, self, depth, out);
	} else if (p && (e = strchr(p, '{')) && (e = skip_group(e))) {
		const char *body = strchr(p, '{');
		ok = body_member(t, ty->path, ty->line, body + 1, e - 1, name, call, self, &found, out);
		if (!ok && !found && take_kw(&p, "extends")) {
			while (!ok && take_word(&p, w, sizeof(w))) {
				struct js_class u;
				p = skip_ws(p);
				if (*p == '<' && !(p = skip_group(p)))
					break;
				ok = type_class(t, ty->path, w, ty->line, &u) &&
				     member_of(t, &u, name, call, u.kind == JS_KIND_CLASS ? &u : self, depth + JT_TYPE_HOP, out);
				p = skip_ws(p);
				if (*p != ',')
					break;
				p++;
			}
		}
	}
	free(s);
	return ok;
}

/* The member name of a value of type ty (a call of it with call): a class's
 * field, getter or method (its own or its nearest base's), an interface's or
 * type alias's member (type_member()); `this` in its type is self. */
static int member_of(struct js_types *t, const struct js_class *ty, const char *name, int call,
		     const struct js_class *self, int depth, struct js_class *out)
{
	struct js_class c = *ty, b;

	if (depth > JT_EXPR_DEPTH)
		return 0;
	if (ty->kind != JS_KIND_CLASS)
		return type_member(t, ty, name, call, self, depth, out);
	if (call == 2)
		return 0;	/* the class's own method: callgraph.c's js_method() */
	if (call)
		return method_returns(t, ty, self, name, depth, out);
	for (int hops = 0; hops < JT_DEPTH; hops++) {
		if (field_class(t, &c, name, self, out))
			return 1;
		if (!js_base(t, &c, &b))
			return 0;
		c = b;
	}
	return 0;
}

/* 1 if the text of a function's first line s (named name) starts a function
 * that has a `this` of its own: `function`, `name(` (a method of an object
 * literal), `name: function`, `const name = function`; not an arrow function. */
static int own_this(const char *s, const char *name)
{
	size_t n = strlen(name);

	s = skip_ws(s);
	if (take_kw(&s, "const") || take_kw(&s, "let") || take_kw(&s, "var")) {
		s = skip_ws(s);
		if (strncmp(s, name, n) || ident_char((unsigned char)s[n]))
			return 0;
		s = skip_ws(s + n);
		return *s == '=' && (s = skip_ws(s + 1), take_kw(&s, "async"), take_kw(&s, "function"));
	}
	if (take_kw(&s, "async"))
		s = skip_ws(s);
	if (*s == '*')
		s = skip_ws(s + 1);
	if (take_kw(&s, "function"))
		return 1;
	if (strncmp(s, name, n) || ident_char((unsigned char)s[n]))
		return 0;
	s = skip_ws(s + n);
	if (*s == '(' || *s == '<')
		return 1;
	return *s == ':' && (s = skip_ws(s + 1), take_kw(&s, "function"));
}

/* 1 if a function of path whose scope is scope (named name, unless NULL)
 * spans line and has a `this` of its own; *found: whether one spans it. */
static int nested_this(struct js_types *t, struct jt_file *f, const char *scope, const char *name, long line,
		       int *found)
{
	int hit = 0;

	if (!t->nested)
		t->nested = refs_prep(t->r, "SELECT d.line, d.name FROM defs d JOIN files f ON f.blob_id = d.blob_id "
				      "WHERE f.path = ?1 AND d.scope = ?2 AND d.kind = 'function' AND d.line <= ?3 "
				      "AND d.end_line >= ?3 AND (?4 IS NULL OR d.name = ?4)");
	sqlite3_reset(t->nested);
	sqlite3_bind_text(t->nested, 1, f->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(t->nested, 2, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(t->nested, 3, line);
	if (name)
		sqlite3_bind_text(t->nested, 4, name, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(t->nested, 4);
	*found = 0;
	while (!hit && sqlite3_step(t->nested) == SQLITE_ROW) {
		long l = sqlite3_column_int64(t->nested, 0);
		const char *n = (const char *)sqlite3_column_text(t->nested, 1);

		*found = 1;
		hit = l >= 1 && l <= f->text.lines_nr && f->text.lines[l - 1] && n && own_this(f->text.lines[l - 1], n);
	}
	sqlite3_reset(t->nested);
	return hit;
}

int js_this_rebound(struct js_types *t, const char *path, const char *scope, long line)
{
	struct jt_file *f;
	char s[512];
	char *dot;
	int found;

	if (!scope || strlen(scope) >= sizeof(s) || !(f = file_of(t, path)))
		return 0;
	/* a function that is no scope of its own (an object literal's method) */
	if (nested_this(t, f, scope, NULL, line, &found))
		return 1;
	/* the scope's functions, innermost first, up to its method or class */
	strcpy(s, scope);
	while ((dot = strrchr(s, '.'))) {
		*dot = '\0';
		if (nested_this(t, f, s, dot + 1, line, &found))
			return 1;
		if (!found)
			break;
	}
	return 0;
}

/* The class `this` means at x: x->self, else the class of x->scope in
 * x->path when the scope is the class (a field's initializer) or one of its
 * methods (`C.m`; in a function nested in the method, `this` is another,
 * js_this_rebound()). */
static int this_class(struct js_types *t, const struct jt_ctx *x, struct js_class *out)
{
	char part[128];
	const char *end, *start;

	if (x->self) {
		*out = *x->self;
		return 1;
	}
	if (!x->scope || js_this_rebound(t, x->path, x->scope, x->line))
		return 0;
	end = x->scope + strlen(x->scope);
	for (int tries = 0; tries < 2; tries++) {
		start = end;
		while (start > x->scope && start[-1] != '.')
			start--;
		if ((size_t)(end - start) < sizeof(part)) {
			memcpy(part, start, (size_t)(end - start));
			part[end - start] = '\0';
			if (class_at(t, x->path, part, x->line, out))
				return 1;
		}
		if (start == x->scope)
			return 0;
		end = start - 1;
	}
	return 0;
}

static int var_class(struct js_types *t, const struct jt_ctx *x, const char *var, struct js_class *out);

/* The class of the variable var that x's file imports (`import var from`,
 * `{ a as var }`): its module-level declaration in the file it comes from. */
static int imported_var(struct js_types *t, const struct jt_ctx *x, const char *var, struct js_class *out)
{
	struct js_class o;
	struct jt_file *g;
	int how = js_imports_name(t, x->path, var);

	if ((how != JS_IMPORT_SAME && how != JS_IMPORT_RENAMED) || x->depth + 1 > JT_EXPR_DEPTH ||
	    !origin(t, x->path, var, 0, JT_VAR, &o) || module_def(t, o.path, o.name) || !(g = file_of(t, o.path)))
		return 0;
	{
		struct jt_ctx y = { g->path, NULL, g->text.lines_nr, NULL, x->depth + 1 };
		return var_class(t, &y, o.name, out);
	}
}

/* The class of variable var in scope at x: the nearest declaration
 * (`const var: C`, `var = <expression>`, a parameter `var: C`), else
 * imported_var()'s. */
static int var_class(struct js_types *t, const struct jt_ctx *x, const char *var, struct js_class *out)
{
	struct jt_file *f = file_of(t, x->path);
	long best = 0;
	const char *at = NULL;
	int colon = 0;

	for (long l = 1; f && l <= f->text.lines_nr; l++) {
		const char *s = f->text.lines[l - 1], *p;
		if (l > x->line || !s || !bind_js_visible((const char *const *)f->text.lines, f->text.lines_nr, l, x->line))
			continue;
		for (p = tagtext_word(s, var); p; p = tagtext_word(p + 1, var)) {
			size_t wn;
			const char *w = tagtext_word_before(s, p, &wn), *q = skip_ws(p + strlen(var)), *b = p;
			int decl = w && ((wn == 5 && !strncmp(w, "const", 5)) || (wn == 3 && !strncmp(w, "let", 3)) ||
					 (wn == 3 && !strncmp(w, "var", 3)));
			while (b > s && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			if (*q == '?')
				q++;
			if ((decl && (*q == ':' || (*q == '=' && q[1] != '=' && q[1] != '>'))) ||
			    (!w && *q == ':' && b > s && (b[-1] == '(' || b[-1] == ','))) {
				best = l, at = q, colon = *q == ':';
				break;
			}
		}
	}
	if (!best)
		return imported_var(t, x, var, out);
	if (colon) {
		char tn[128];
		return decl_type(at, 1, tn, sizeof(tn)) && strcmp(tn, "this") && type_class(t, x->path, tn, best, out);
	} else {
		struct jt_ctx y = { x->path, x->scope, best, x->self, x->depth + 1 };
		char *e = join_lines(f, best, best + 200);
		const char *s = f->text.lines[best - 1];
		int ok = eval_expr(t, &y, skip_ws(e + (at - s) + 1), out, NULL);
		free(e);
		return ok;
	}
}

/*
 * The class of the expression at the start of e (`new C(...)`, `this`, a
 * variable, `f(...)`, then `.m(...)`, `.a`, `!`, `?.` steps), read until the
 * end of the chain.
 */
static int eval_expr(struct js_types *t, const struct jt_ctx *x, const char *e, struct js_class *out,
		     const char **rest)
{
	char w[128], ns[128];
	const char *p = e, *q;
	struct js_class c, look;	/* what the value is, where its methods are looked up first */
	int sup = 0;

	memset(&look, 0, sizeof(look));
	if (x->depth > JT_EXPR_DEPTH)
		return 0;
	if (take_kw(&p, "await"))
		return 0;
	if (take_kw(&p, "new")) {
		if (!take_word(&p, w, sizeof(w)) || !type_class(t, x->path, w, x->line, &c))
			return 0;
		p = skip_ws(p);
		if (*p == '<' && !(p = skip_group(p)))
			return 0;
		if (*(p = skip_ws(p)) == '(' && !(p = skip_group(p)))
			return 0;
	} else if (take_kw(&p, "this")) {
		if (!this_class(t, x, &c))
			return 0;
	} else if (take_kw(&p, "super")) {
		if (!this_class(t, x, &c) || !js_base(t, &c, &look))
			return 0;
		sup = 1;	/* super.m(): the base's m, on this */
	} else if (take_word(&p, w, sizeof(w))) {
		const char *r;
		int member = 0;

		q = skip_ws(p);
		r = q + 1;
		if (*q == '.' && is_ns(t, x->path, w) && take_word(&r, ns, sizeof(ns))) {
			member = 1;	/* ns.f( with ns an `import * as ns` */
			p = r;
			q = skip_ws(p);
		}
		if (*q == '<' && (q = skip_group(q)))
			q = skip_ws(q);
		if (q && *q == '(') {
			if (!function_returns(t, x->path, member ? w : NULL, member ? ns : w, x->depth, &c) ||
			    !(p = skip_group(q)))
				return 0;
		} else if (member || (!var_class(t, x, w, &c) &&
				      (!isupper((unsigned char)w[0]) || !type_class(t, x->path, w, x->line, &c) ||
				       c.kind != JS_KIND_CLASS))) {
			return 0;	/* C.m(): a static method of class C */
		}
	} else {
		return 0;
	}
	for (;;) {
		p = skip_ws(p);
		if (*p == '!')
			p++;
		if (*p == '?' && p[1] == '.')
			p++;
		if (*p != '.' || !take_word(&(const char *){ p + 1 }, w, sizeof(w)))
			break;
		p++;
		take_word(&p, w, sizeof(w));
		q = skip_ws(p);
		if (*q == '<' && (q = skip_group(q)))
			q = skip_ws(q);
		if (q && *q == '(') {
			struct js_class r;
			if (!member_of(t, sup ? &look : &c, w, 1, &c, x->depth + 1, &r) || !(p = skip_group(q)))
				return 0;
			c = r;
		} else {
			struct js_class r;
			if (!member_of(t, sup ? &look : &c, w, 0, &c, x->depth + 1, &r))
				return 0;
			c = r;
		}
		sup = 0;
	}
	*out = sup ? look : c;	/* super alone: the base, where super.f() looks */
	if (rest)
		*rest = p;
	return 1;
}

int js_base(struct js_types *t, const struct js_class *cls, struct js_class *out)
{
	struct jt_file *f = file_of(t, cls->path);
	char *s, *q, w[128];
	const char *p;

	if (!f || cls->line < 1)
		return 0;
	s = join_lines(f, cls->line, cls->line + 20 < cls->end ? cls->line + 20 : cls->end);
	p = tagtext_word(s, cls->name);
	if ((q = strchr(s, '{')))
		*q = '\0';	/* the body opens: no extends after */
	if (!p || (q && p > q)) {
		free(s);
		return 0;
	}
	p += strlen(cls->name);
	p = skip_ws(p);
	if (*p == '<' && !(p = skip_group(p))) {
		free(s);
		return 0;
	}
	if (!take_kw(&p, "extends") || !take_word(&p, w, sizeof(w))) {
		free(s);
		return 0;
	}
	while (*p == '.' && take_word(&(const char *){ p + 1 }, w, sizeof(w))) {
		p++;
		take_word(&p, w, sizeof(w));
	}
	free(s);
	return type_class(t, cls->path, w, cls->line, out) && out->kind == JS_KIND_CLASS;
}

/* Back over blanks from index *i of line *l, up to the lines above (20 at
 * most): *l, *i then just after a character (0 if none). */
static int back_blanks(const struct jt_file *f, long *l, long *i, int *lines)
{
	const char *s = f->text.lines[*l - 1];

	while (*i == 0 || blank(s[*i - 1])) {
		if (*i > 0) {
			(*i)--;
			continue;
		}
		if (*l <= 1 || ++*lines > 20 || !f->text.lines[*l - 2])
			return 0;
		s = f->text.lines[--*l - 1];
		*i = (long)strlen(s);
	}
	return 1;
}

/* The start of the receiver expression before the '.' that precedes index i
 * (0-based) of line l, `a.b(x).c<T>()` and the like, over several lines when
 * a line starts with the '.': *sl, *si; 0 if none. */
static int receiver_start(const struct jt_file *f, long l, long i, long *sl, long *si)
{
	const char *s = f->text.lines[l - 1];
	int lines = 0;

	while (i > 0 && blank(s[i - 1]))
		i--;
	if (i == 0 || s[i - 1] != '.')
		return 0;
	i--;
	if (i > 0 && (s[i - 1] == '?' || s[i - 1] == '!'))
		i--;
	for (;;) {
		long k;

		if (!back_blanks(f, &l, &i, &lines))
			return 0;
		s = f->text.lines[l - 1];
		if (s[i - 1] == ')' || s[i - 1] == '>') {
			char close = s[i - 1], open = close == ')' ? '(' : '<';
			int depth = 0;
			do {
				if (i == 0) {
					if (l <= 1 || ++lines > 20 || !f->text.lines[l - 2])
						return 0;
					s = f->text.lines[--l - 1];
					i = (long)strlen(s);
					continue;
				}
				i--;
				depth += s[i] == close ? 1 : s[i] == open ? -1 : 0;
			} while (depth > 0);
			continue;	/* the callee's name next, or its generics */
		}
		if (!ident_char(s[i - 1]))
			return 0;
		while (i > 0 && ident_char(s[i - 1]))
			i--;
		if (i > 0 && s[i - 1] == '#')
			i--;	/* this.#a */
		for (k = i; k > 0 && blank(s[k - 1]); k--)
			;
		if (k >= 3 && !strncmp(s + k - 3, "new", 3) && (k == 3 || !ident_char(s[k - 4]))) {
			i = k - 3;
			break;
		}
		if (k > 0 && s[k - 1] == '.' && !(k > 1 && s[k - 2] == '.')) {
			i = k - 1;
			if (i > 0 && (s[i - 1] == '?' || s[i - 1] == '!'))
				i--;
			continue;
		}
		break;
	}
	*sl = l, *si = i;
	return 1;
}

int js_receiver(struct js_types *t, const char *path, const char *scope, long line, long col,
		struct js_class *out)
{
	return js_receiver_type(t, path, scope, line, col, out) && out->kind == JS_KIND_CLASS;
}

int js_member_typeof(struct js_types *t, const struct js_class *ty, const char *name, struct js_class *out)
{
	return ty->kind != JS_KIND_CLASS && member_of(t, ty, name, 2, ty, 0, out);
}

int js_receiver_type(struct js_types *t, const char *path, const char *scope, long line, long col,
		     struct js_class *out)
{
	struct jt_file *f = file_of(t, path);
	long sl, si;
	char *e;
	int ok;

	if (!f || line < 1 || line > f->text.lines_nr || !f->text.lines[line - 1] || col < 2 ||
	    (size_t)col - 1 > strlen(f->text.lines[line - 1]) ||
	    !receiver_start(f, line, col - 1, &sl, &si))
		return 0;
	e = join_lines(f, sl, line);
	{
		/* cut the text at the call's name: the receiver and its dot */
		size_t off = 0;
		for (long l = sl; l < line; l++)
			off += strlen(f->text.lines[l - 1] ? f->text.lines[l - 1] : "") + 1;
		e[off + (size_t)col - 1] = '\0';
	}
	{
		struct jt_ctx x = { path, scope, line, NULL, 0 };
		size_t n = strlen(e);
		while (n > 0 && (e[n - 1] == ' ' || e[n - 1] == '\t' || e[n - 1] == '.' || e[n - 1] == '?'))
			e[--n] = '\0';
		const char *rest;
		ok = eval_expr(t, &x, e + si, out, &rest) && !*skip_ws(rest);
	}
	free(e);
	return ok;
}

int js_receiver_name(struct js_types *t, const char *path, long line, long col, char *out, size_t n)
{
	struct jt_file *f = file_of(t, path);

	if (!f || line < 1 || line > f->text.lines_nr)
		return 0;
	return bind_js_receiver_var(f->text.lines[line - 1], col, out, n);
}

/* The end of the statement that e starts: the first ';', or a newline not
 * followed by a line starting with '.', outside groups and strings. */
static const char *stmt_end(const char *e)
{
	while (e && *e && *e != ';') {
		if (*e == '\n' && *skip_ws(e) != '.')
			break;
		e = strchr("({[\'\"`", *e) ? skip_group_or_string(e) : e + 1;
	}
	return e;
}

int js_bound_method(struct js_types *t, const char *path, const char *name, struct js_class *out)
{
	struct js_class o;
	struct jt_file *g;
	const char *p, *q, *end;
	char *s;
	long l;
	int how = js_imports_name(t, path, name), ok = 0;

	if (how == JS_IMPORT_OUTSIDE || how == JS_IMPORT_NO_MODULE ||
	    (how == JS_IMPORT_NONE && (module_def(t, path, name) || !module_var(file_of(t, path), name))) ||
	    !origin(t, path, name, 0, JT_VAR, &o) || strcmp(o.name, name) || module_def(t, o.path, o.name) ||
	    !(g = file_of(t, o.path)) || !(l = module_var(g, o.name)))
		return 0;	/* a function of the file (checked first: most bare calls), no variable */
	s = clean_text(g, l, l + 10);
	/* past `const name =` (a declared type is the value's: `const produce: IProduce = x.produce`) */
	p = tagtext_word(s, name);
	p = p ? skip_ws(p + strlen(name)) : NULL;
	if (!p || *p != '=' || p[1] == '=' || p[1] == '>' || !(end = stmt_end(p + 1))) {
		free(s);
		return 0;
	}
	p = skip_ws(p + 1);
	/* `<receiver>.name` then `.bind(...)` or the statement's end */
	for (q = tagtext_word(p, name); q && q < end && !ok; q = tagtext_word(q + 1, name)) {
		const char *r = skip_ws(q + strlen(name)), *rest;
		struct jt_ctx x = { g->path, NULL, l, NULL, 0 };
		char *e;

		int bind = *r == '.' && take_kw(&(const char *){ r + 1 }, "bind");

		if (q == p || q[-1] != '.' || (r < end && !bind))
			continue;
		e = xstrndup(p, (size_t)(q - 1 - p));
		ok = eval_expr(t, &x, e, out, &rest) && !*skip_ws(rest) && out->kind == JS_KIND_CLASS;
		free(e);
	}
	free(s);
	return ok;
}
