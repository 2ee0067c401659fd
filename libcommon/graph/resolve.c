/*
 * resolve.c: Python calls bound by following names (resolve.h).
 *
 * Each file is read once into an environment: its lines and the names its
 * import statements bind (`import a.b as c`, `from m import f as g`), each
 * to a module file or to a name of one.  A call is then resolved from the
 * text before its name (the receiver) with the enclosing function's lines
 * (parameters, assignments) and the class's bases, all from the text.
 */
#include "core/common.h"
#include "graph/resolve.h"

#include <ctype.h>

enum { RS_DEPTH = 6 };	/* re-exports and bases followed at most */
enum { RS_ALIAS_MAX = 512 };	/* names bound in files, met by resolve_alias_names() at most */

/* A name the file's imports bind. */
struct rs_alias {
	char *name;		/* as bound in the file: "c", "g", "a.b.c" */
	char *path;		/* the module's file, or NULL (outside the repository) */
	char *orig;		/* from m import orig as name; NULL: name is the module */
	long line;		/* of the import statement */
};

struct rs_env {
	char *path;
	int known;		/* the world has the file */
	struct rs_text t;
	struct rs_alias *al;
	size_t al_nr, al_alloc;
};

/* A thing a name denotes: a module file or a definition. */
struct rs_thing {
	const char *module;	/* a module's file, or NULL */
	const struct rs_def *def;	/* a definition, or NULL */
};

static unsigned str_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int is_id(int c)
{
	return isalnum(c) || c == '_';
}

static const char *line_at(const struct rs_env *e, long line)
{
	return line >= 1 && line <= e->t.lines_nr ? e->t.lines[line - 1] : NULL;
}

static void add_alias(struct rs_env *e, const char *name, size_t nl, const char *path, const char *orig,
		      size_t ol, long line)
{
	struct rs_alias *a;

	ALLOC_GROW(e->al, e->al_nr + 1, e->al_alloc);
	a = &e->al[e->al_nr++];
	a->name = xstrndup(name, nl);
	a->path = path ? xstrdup(path) : NULL;
	a->orig = orig ? xstrndup(orig, ol) : NULL;
	a->line = line;
}

/* The resolved file of the import row of line whose target is t (or ends in ".t"). */
static const char *row_for(const struct rs_env *e, long line, const char *t, size_t tl, int suffix)
{
	for (size_t i = 0; i < e->t.imps_nr; i++) {
		const struct rs_import *im = &e->t.imps[i];
		size_t n = strlen(im->target);
		if (im->line != line || !im->resolved)
			continue;
		if (!suffix && n == tl && !strncmp(im->target, t, tl))
			return im->resolved;
		if (suffix && n > tl && !strncmp(im->target + n - tl, t, tl) && im->target[n - tl - 1] == '.')
			return im->resolved;
	}
	return NULL;
}

/* The statement starting at line l, joined over a parenthesized or
 * backslashed continuation (at most 200 lines). */
static char *statement(const struct rs_env *e, long l)
{
	struct buf sb = BUF_INIT;
	int depth = 0;

	for (long k = l; k <= e->t.lines_nr && k < l + 200; k++) {
		const char *s = line_at(e, k);
		size_t n;
		if (!s)
			break;
		n = strcspn(s, "#");
		buf_add(&sb, s, n);
		buf_addch(&sb, ' ');
		for (size_t i = 0; i < n; i++)
			depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
		if (depth <= 0 && !(n && s[n - 1] == '\\'))
			break;
	}
	return buf_detach(&sb, NULL);
}

/*
 * One item of an import list at *pp, after what skip holds: its name [*a, *ae)
 * (a dotted one with dotted) and the name it binds [*b, *be) (the alias after
 * "as", else the name); *pp moved past it.  0 when there is none.
 */
static int import_item(const char **pp, const char *skip, int dotted, const char **a, const char **ae,
		       const char **b, const char **be)
{
	const char *p = *pp + strspn(*pp, skip);

	*a = p;
	while (is_id((unsigned char)*p) || (dotted && *p == '.'))
		p++;
	*ae = p;
	if (*ae == *a)
		return 0;
	*b = *a;
	*be = *ae;
	p += strspn(p, " \t\\");
	if (!strncmp(p, "as ", 3)) {
		p += 3;
		p += strspn(p, " \t");
		*b = p;
		while (is_id((unsigned char)*p))
			p++;
		*be = p;
	}
	*pp = p;
	return 1;
}

/* `from m import a as b, c` at line l (s: the statement). */
static void parse_from(struct rs_env *e, const char *s, long l)
{
	const char *m = s + strspn(s, " \t") + 5, *me, *p;
	const char *mod;

	m += strspn(m, " \t");
	me = m;
	while (*me && !isspace((unsigned char)*me))
		me++;
	mod = row_for(e, l, m, (size_t)(me - m), 0);
	p = strstr(me, " import ");
	if (!p)
		return;
	p += 8;
	p += strspn(p, " \t(");
	if (*p == '*') {
		add_alias(e, "*", 1, mod, "*", 1, l);
		return;
	}
	while (*p) {
		const char *a, *ae, *b, *be, *sub;
		if (!import_item(&p, " \t(),\\", 0, &a, &ae, &b, &be))
			break;
		/* a submodule (from . import x) when a row of the line names it */
		sub = row_for(e, l, a, (size_t)(ae - a), 1);
		if (sub && (!mod || strcmp(sub, mod)))
			add_alias(e, b, (size_t)(be - b), sub, NULL, 0, l);
		else
			add_alias(e, b, (size_t)(be - b), mod, a, (size_t)(ae - a), l);
		while (*p && *p != ',')
			p++;
	}
}

/* `import a.b.c as d, e` at line l. */
static void parse_import(struct rs_env *e, const char *s, long l)
{
	const char *p = s + strspn(s, " \t") + 7;

	while (*p) {
		const char *a, *ae, *b, *be;
		if (!import_item(&p, " \t,\\", 1, &a, &ae, &b, &be))
			break;
		add_alias(e, b, (size_t)(be - b), row_for(e, l, a, (size_t)(ae - a), 0), NULL, 0, l);
		while (*p && *p != ',')
			p++;
	}
}

static void build_env(struct rs_env *e)
{
	for (long l = 1; l <= e->t.lines_nr; l++) {
		const char *s = line_at(e, l), *p;
		char *st;
		if (!s)
			continue;
		p = s + strspn(s, " \t");
		if (strncmp(p, "from ", 5) && strncmp(p, "import ", 7))
			continue;
		st = statement(e, l);
		if (*p == 'f')
			parse_from(e, st, l);
		else
			parse_import(e, st, l);
		free(st);
	}
}

void resolver_init(struct resolver *rs, const struct rs_ops *ops, void *ctx)
{
	memset(rs, 0, sizeof(*rs));
	rs->ops = ops;
	rs->ctx = ctx;
	rs->envs_mask = 63;
	rs->envs = xcalloc(rs->envs_mask + 1, sizeof(*rs->envs));
}

static void free_env(struct rs_env *e)
{
	for (long i = 0; i < e->t.lines_nr; i++)
		free(e->t.lines[i]);
	free(e->t.lines);
	for (size_t i = 0; i < e->t.imps_nr; i++) {
		free(e->t.imps[i].target);
		free(e->t.imps[i].resolved);
	}
	free(e->t.imps);
	for (size_t i = 0; i < e->al_nr; i++) {
		free(e->al[i].name);
		free(e->al[i].path);
		free(e->al[i].orig);
	}
	free(e->al);
	free(e->path);
	free(e);
}

void resolver_release(struct resolver *rs)
{
	for (size_t i = 0; rs->envs && i <= rs->envs_mask; i++)
		if (rs->envs[i])
			free_env(rs->envs[i]);
	free(rs->envs);
	memset(rs, 0, sizeof(*rs));
}

static void grow_envs(struct resolver *rs)
{
	size_t n = (rs->envs_mask + 1) * 2;
	struct rs_env **t = xcalloc(n, sizeof(*t));

	for (size_t i = 0; i <= rs->envs_mask; i++) {
		size_t k;
		if (!rs->envs[i])
			continue;
		for (k = str_hash(rs->envs[i]->path) & (n - 1); t[k]; k = (k + 1) & (n - 1))
			;
		t[k] = rs->envs[i];
	}
	free(rs->envs);
	rs->envs = t;
	rs->envs_mask = n - 1;
}

/* The environment of path, read on first use. */
static struct rs_env *env_of(struct resolver *rs, const char *path)
{
	size_t k;
	struct rs_env *e;

	if (!path)
		return NULL;
	for (k = str_hash(path) & rs->envs_mask; rs->envs[k]; k = (k + 1) & rs->envs_mask)
		if (!strcmp(rs->envs[k]->path, path))
			return rs->envs[k];
	e = xcalloc(1, sizeof(*e));
	e->path = xstrdup(path);
	e->known = rs->ops->file(rs->ctx, path, &e->t);
	if (e->known && e->t.python)
		build_env(e);
	if (2 * (rs->envs_nr + 1) > rs->envs_mask) {
		grow_envs(rs);
		for (k = str_hash(path) & rs->envs_mask; rs->envs[k]; k = (k + 1) & rs->envs_mask)
			;
	}
	rs->envs[k] = e;
	rs->envs_nr++;
	return e;
}

int resolver_applies(struct resolver *rs, const char *path)
{
	struct rs_env *e = env_of(rs, path);

	return e && e->t.python;
}

/* The qualified name of d as a scope ("A.B" for class B in A) into buf. */
static const char *qualname(const struct rs_def *d, char *buf, size_t n)
{
	if (d->scope)
		snprintf(buf, n, "%s.%s", d->scope, d->name);
	else
		snprintf(buf, n, "%s", d->name);
	return buf;
}

/* The definition named name in path whose scope is scope (NULL: module level);
 * classes and functions first, the last one of the file when several. */
static const struct rs_def *def_in(struct resolver *rs, const char *path, const char *scope, const char *name,
				   long *ix)
{
	const struct rs_def *d, *best = NULL;
	size_t n = rs->ops->named(rs->ctx, name, &d);

	for (size_t i = 0; i < n; i++) {
		int callable = !strcmp(d[i].kind, "function") || !strcmp(d[i].kind, "method") ||
			       !strcmp(d[i].kind, "class");
		if (strcmp(d[i].path, path) || (scope ? !d[i].scope || strcmp(d[i].scope, scope) : !!d[i].scope))
			continue;
		if (!best || callable) {
			best = &d[i];
			if (ix)
				*ix = (long)i;
		}
	}
	return best;
}

static struct rs_thing resolve_name(struct resolver *rs, struct rs_env *e, const char *name, int depth);
static struct rs_thing resolve_dotted(struct resolver *rs, struct rs_env *e, const char *expr, int depth);

/* The submodule name of the package whose __init__.py is path (pkg/name.py or
 * pkg/name/__init__.py), when the index has it, else NULL. */
static const char *submodule(struct resolver *rs, const char *path, const char *name)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	static const char *const forms[] = { "%.*s%s.py", "%.*s%s/__init__.py" };

	if (strcmp(base, "__init__.py"))
		return NULL;
	for (size_t i = 0; i < 2; i++) {
		char buf[1024];
		struct rs_env *m;
		if ((size_t)snprintf(buf, sizeof(buf), forms[i], (int)(base - path), path, name) >= sizeof(buf))
			return NULL;
		m = env_of(rs, buf);
		if (m && m->known)
			return m->path;
	}
	return NULL;
}

/* The name orig of module path, followed through its own imports. */
static struct rs_thing module_attr(struct resolver *rs, const char *path, const char *orig, int depth)
{
	struct rs_thing t = { NULL, NULL };
	struct rs_env *m;

	if (!path || depth > RS_DEPTH)
		return t;
	t.def = def_in(rs, path, NULL, orig, NULL);
	if (t.def && strcmp(t.def->kind, "constant"))
		return t;
	m = env_of(rs, path);
	if (m && m->t.python)
		t = resolve_name(rs, m, orig, depth + 1);
	if (!t.def && !t.module)
		t.module = submodule(rs, path, orig);
	return t;
}

/*
 * The value of the module-level assignment of name in e's file when it is a
 * plain or dotted name (`ib = attr = attrib`, `s = mod.f`), into buf; NULL
 * when no line at the left margin assigns name, more than one does
 * (reassigned: which value holds is not known), or the value is anything else.
 */
static const char *assigned_name(const struct rs_env *e, const char *name, char *buf, size_t n)
{
	size_t nl = strlen(name);
	int seen = 0;

	buf[0] = '\0';
	for (long l = 1; l <= e->t.lines_nr; l++) {
		const char *s = line_at(e, l), *p = s, *q, *v;
		int hit = 0, last = 0;
		if (!s || !is_id((unsigned char)*s) || !strstr(s, name) || !strchr(s, '='))
			continue;
		for (;;) {	/* targets: each name followed by `=` */
			for (q = p; is_id((unsigned char)*q); q++)
				;
			v = q + strspn(q, " \t");
			if (*v != '=' || v[1] == '=') {
				last = (size_t)(q - p) == nl && !strncmp(p, name, nl) && p == s && *v &&
				       strchr("+-*/|&%^@<>:,", *v);	/* name += ..., name: T = ..., name, x = ... */
				break;
			}
			hit |= (size_t)(q - p) == nl && !strncmp(p, name, nl);
			p = v + 1 + strspn(v + 1, " \t");
			if (!is_id((unsigned char)*p))
				break;
		}
		if (!hit && !last)
			continue;
		if (++seen > 1)
			return NULL;
		if (last)
			continue;	/* not a plain assignment: no value */
		/* the value from p: a dotted name, then nothing but a comment */
		for (q = p; is_id((unsigned char)*q) || (*q == '.' && is_id((unsigned char)q[1])); q++)
			;
		v = q + strspn(q, " \t\r");
		if (q > p && !isdigit((unsigned char)*p) && (!*v || *v == '#') && (size_t)(q - p) < n) {
			memcpy(buf, p, (size_t)(q - p));
			buf[q - p] = '\0';
		}
	}
	return seen == 1 && buf[0] ? buf : NULL;
}

/* What name denotes at the top level of e's file: its own definition, else an import. */
static struct rs_thing resolve_name(struct resolver *rs, struct rs_env *e, const char *name, int depth)
{
	struct rs_thing t = { NULL, NULL };
	char v[256];

	t.def = def_in(rs, e->path, NULL, name, NULL);
	if (t.def && !strcmp(t.def->kind, "constant") && depth <= RS_DEPTH &&
	    assigned_name(e, name, v, sizeof(v)) && strcmp(v, name)) {
		/* `ib = attr = attrib` (a module variable, the index's "constant"):
		 * the function or class the value names, unless an import binds the name too */
		size_t i = 0;
		while (i < e->al_nr && strcmp(e->al[i].name, name))
			i++;
		if (i == e->al_nr) {
			struct rs_thing a = resolve_dotted(rs, e, v, depth + 1);
			if (a.def && (!strcmp(a.def->kind, "function") || !strcmp(a.def->kind, "class")))
				return a;
		}
	}
	if (t.def)
		return t;
	/* `ib = attr = attrib` where the index keeps the first name only */
	if (depth <= RS_DEPTH && assigned_name(e, name, v, sizeof(v)) && strcmp(v, name)) {
		size_t i = 0;
		while (i < e->al_nr && strcmp(e->al[i].name, name))
			i++;
		if (i == e->al_nr) {
			t = resolve_dotted(rs, e, v, depth + 1);
			if (t.def && strcmp(t.def->kind, "function") && strcmp(t.def->kind, "class"))
				t.def = NULL;
			return t;
		}
	}
	for (size_t i = e->al_nr; i-- > 0; ) {
		const struct rs_alias *a = &e->al[i];
		if (strcmp(a->name, name))
			continue;
		if (!strcmp(name, "*"))
			return t;
		if (!a->orig) {
			t.module = a->path;
			return t;
		}
		return module_attr(rs, a->path, a->orig, depth);
	}
	/* from m import *: the names m defines or imports (not followed far) */
	for (size_t i = e->al_nr; depth < 3 && i-- > 0; ) {
		if (strcmp(e->al[i].name, "*") || !e->al[i].path)
			continue;
		t = module_attr(rs, e->al[i].path, name, depth + 1);
		if (t.def || t.module)
			return t;
	}
	return t;
}

/* What a dotted expression "a.b.C" denotes in e's file. */
static struct rs_thing resolve_dotted(struct resolver *rs, struct rs_env *e, const char *expr, int depth)
{
	struct rs_thing t = { NULL, NULL };
	char part[256];
	const char *p = expr, *dot;
	size_t best = 0;

	/* `import a.b.c` binds the dotted name itself: the longest one first */
	for (size_t i = 0; i < e->al_nr; i++) {
		size_t n = strlen(e->al[i].name);
		if (!e->al[i].orig && n > best && !strncmp(expr, e->al[i].name, n) && (!expr[n] || expr[n] == '.') &&
		    strchr(e->al[i].name, '.')) {
			best = n;
			t.module = e->al[i].path;
		}
	}
	if (best) {
		p = expr + best;
		if (!t.module)
			return t;
	}
	while (*p) {
		size_t n;
		if (*p == '.')
			p++;
		dot = strchrnul(p, '.');
		n = (size_t)(dot - p);
		if (!n || n >= sizeof(part))
			return (struct rs_thing){ NULL, NULL };
		memcpy(part, p, n);
		part[n] = '\0';
		if (p == expr) {
			t = resolve_name(rs, e, part, depth);
		} else if (t.module) {
			t = module_attr(rs, t.module, part, depth);
		} else if (t.def && !strcmp(t.def->kind, "class")) {
			char q[512];
			t.def = def_in(rs, t.def->path, qualname(t.def, q, sizeof(q)), part, NULL);
		} else {
			return (struct rs_thing){ NULL, NULL };
		}
		if (!t.module && !t.def)
			return t;
		p = dot;
	}
	return t;
}

/* The bases of class c, in order, as classes of the repository (at most max). */
static size_t class_bases(struct resolver *rs, const struct rs_def *c, const struct rs_def **out, size_t max)
{
	struct rs_env *e = env_of(rs, c->path);
	char *st, *p;
	size_t n = 0;

	if (!e || !line_at(e, c->line))
		return 0;
	st = statement(e, c->line);
	p = strchr(st, '(');
	while (p && *p && *p != ')' && n < max) {
		char *b = ++p, *be;
		int d = 0;
		while (*p && !(d == 0 && (*p == ',' || *p == ')'))) {
			d += *p == '[' || *p == '(' ? 1 : *p == ']' || *p == ')' ? -1 : 0;
			p++;
		}
		b += strspn(b, " \t");
		for (be = b; is_id((unsigned char)*be) || *be == '.'; be++)
			;
		if (be > b && *be != '=' && *(be + strspn(be, " ")) != '=') {
			char save = *be;
			struct rs_thing t;
			*be = '\0';
			t = resolve_dotted(rs, e, b, 0);
			*be = save;
			if (t.def && !strcmp(t.def->kind, "class") && t.def != c)
				out[n++] = t.def;
		}
	}
	free(st);
	return n;
}

/* The method name of class c or, depth first along its bases, of a base
 * (*inherited set then); its index into named(name), or -1. */
static long method_of(struct resolver *rs, const struct rs_def *c, const char *name, int skip_own,
		      int *inherited, int depth)
{
	char q[512];
	long ix = -1;
	const struct rs_def *bases[16];
	size_t nb;

	if (depth > RS_DEPTH)
		return -1;
	if (!skip_own && def_in(rs, c->path, qualname(c, q, sizeof(q)), name, &ix))
		return ix;
	nb = class_bases(rs, c, bases, 16);
	for (size_t i = 0; i < nb; i++) {
		ix = method_of(rs, bases[i], name, 0, inherited, depth + 1);
		if (ix >= 0) {
			*inherited = 1;
			return ix;
		}
	}
	return -1;
}

/* The class of the scope ("A.f" -> class A of path), innermost, or NULL. */
static const struct rs_def *enclosing_class(struct resolver *rs, const char *path, const char *scope)
{
	char buf[512];

	if (!scope || strlen(scope) >= sizeof(buf))
		return NULL;
	strcpy(buf, scope);
	for (;;) {
		char *dot = strrchr(buf, '.');
		const char *name = dot ? dot + 1 : buf;
		const struct rs_def *d;
		size_t n = rs->ops->named(rs->ctx, name, &d);
		for (size_t i = 0; i < n; i++) {
			char q[512];
			if (!strcmp(d[i].kind, "class") && !strcmp(d[i].path, path) &&
			    !strcmp(qualname(&d[i], q, sizeof(q)), buf))
				return &d[i];
		}
		if (!dot)
			return NULL;
		*dot = '\0';
	}
}

/* The innermost function of scope in path (its lines), or NULL. */
static const struct rs_def *enclosing_function(struct resolver *rs, const char *path, const char *scope)
{
	const char *name, *d0;
	const struct rs_def *d;
	size_t n, sl;

	if (!scope)
		return NULL;
	d0 = strrchr(scope, '.');
	name = d0 ? d0 + 1 : scope;
	sl = d0 ? (size_t)(d0 - scope) : 0;
	n = rs->ops->named(rs->ctx, name, &d);
	for (size_t i = 0; i < n; i++)
		if ((!strcmp(d[i].kind, "function") || !strcmp(d[i].kind, "method")) && !strcmp(d[i].path, path) &&
		    (d0 ? d[i].scope && strlen(d[i].scope) == sl && !strncmp(d[i].scope, scope, sl) : !d[i].scope))
			return &d[i];
	return NULL;
}

/* The receiver of the call whose name starts at s[col0]: "" (a bare call),
 * "self", "a.b", "super()", or NULL when it is not a plain dotted name. */
static char *receiver_text(const char *s, size_t col0)
{
	size_t i = col0, e;

	if (strlen(s) < col0)
		return NULL;
	while (i && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	if (!i || s[i - 1] != '.')
		return xstrdup("");
	i--;
	e = i;
	if (i >= 7 && !strncmp(s + i - 7, "super()", 7) && (i == 7 || !is_id((unsigned char)s[i - 8])))
		return xstrdup("super()");
	while (i && (is_id((unsigned char)s[i - 1]) || s[i - 1] == '.'))
		i--;
	if (i == e || s[i] == '.' || isdigit((unsigned char)s[i]) || (i && strchr(")]}\"'", s[i - 1])))
		return NULL;
	return xstrndup(s + i, e - i);
}

/* The receiver of the call whose name starts at s[col0] when it is itself a
 * call, Foo(...).f() or mod.Foo(...).f(): its value as "Foo()" for
 * value_class(); NULL otherwise. */
static char *call_receiver(const char *s, size_t col0)
{
	size_t i = col0, e;
	int depth = 0;

	if (strlen(s) < col0)
		return NULL;
	while (i && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	if (!i || s[i - 1] != '.')
		return NULL;
	i--;
	if (!i || s[i - 1] != ')')
		return NULL;
	do {	/* back to the matching '(' */
		i--;
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(')
			depth--;
	} while (i && depth);
	if (depth)
		return NULL;
	e = i;
	while (i && (is_id((unsigned char)s[i - 1]) || s[i - 1] == '.'))
		i--;
	if (i == e || s[i] == '.' || isdigit((unsigned char)s[i]))
		return NULL;
	return xasprintf("%.*s()", (int)(e - i), s + i);
}

/* The first class name of an annotation: Foo, "Foo", Optional[Foo], Foo | None, t.Foo;
 * NULL for none (a may be NULL: a property or attribute without an annotation). */
static char *annotation_class(const char *a)
{
	const char *p = a;

	if (!a)
		return NULL;
	for (;;) {
		const char *b;
		p += strspn(p, " \t\"'");
		b = p;
		while (is_id((unsigned char)*p) || *p == '.')
			p++;
		if (p == b)
			return NULL;
		if (*p == '[' && (!strncmp(b, "Optional", 8) || !strncmp(b, "typing.Optional", 15) ||
				  !strncmp(b, "t.Optional", 10) || !strncmp(b, "Union", 5) || !strncmp(b, "typing.Union", 12) ||
				  !strncmp(b, "t.Union", 7))) {
			p++;
			continue;
		}
		if ((size_t)(p - b) == 4 && !strncmp(b, "None", 4)) {
			p += strspn(p, " \t");
			if (*p == '|' || *p == ',') {
				p++;
				continue;
			}
			return NULL;
		}
		return xstrndup(b, (size_t)(p - b));
	}
}

/* The annotation's text at a (after the colon), to the first comma, ')' or
 * '=' outside brackets, trimmed. */
static char *ann_text(const char *a)
{
	const char *p;
	size_t n;
	int d = 0;

	a += strspn(a, " \t");
	for (p = a; *p && !(d == 0 && (*p == ',' || *p == ')' || (*p == '=' && p[1] != '=') || *p == ':')); p++)
		d += *p == '[' || *p == '(' ? 1 : *p == ']' || *p == ')' ? -1 : 0;
	n = (size_t)(p - a);
	while (n && isspace((unsigned char)a[n - 1]))
		n--;
	return n ? xstrndup(a, n) : NULL;
}

/* The parameter var's annotation in the def statement of f (its first class
 * name, or with raw its whole text), or "" when var is a parameter without
 * one, or NULL when it is not a parameter. */
static char *param_type(struct rs_env *e, const struct rs_def *f, const char *var, int raw)
{
	char *st = statement(e, f->line), *p = strchr(st, '('), *r = NULL;
	size_t vl = strlen(var);

	while (p && *p) {
		int d = 0;
		char *b;
		p++;
		p += strspn(p, " \t*");
		b = p;
		if (!strncmp(b, var, vl) && !is_id((unsigned char)b[vl])) {
			char *q = b + vl;
			q += strspn(q, " \t");
			r = *q != ':' ? NULL : raw ? ann_text(q + 1) : annotation_class(q + 1);
			if (!r)
				r = xstrdup("");
			break;
		}
		while (*p && !(d == 0 && (*p == ',' || *p == ')'))) {
			d += *p == '[' || *p == '(' ? 1 : *p == ']' || *p == ')' ? -1 : 0;
			p++;
		}
		if (*p == ')')
			break;
	}
	free(st);
	return r;
}

/* v, unless it is a keyword argument's value on a call's own line
 * (f(\n    x=x,\n)): one ending in a comma or closing more than it opens. */
static const char *value_ok(const char *v)
{
	int d = 0;
	size_t n = strlen(v);

	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n && v[n - 1] == ',')
		return NULL;
	for (size_t i = 0; i < n; i++) {
		d += strchr("([{", v[i]) ? 1 : strchr(")]}", v[i]) ? -1 : 0;
		if (d < 0)
			return NULL;
	}
	return v;
}

/* "a = var = value": the value, or NULL. */
static const char *chained(const char *s, const char *var)
{
	size_t vl = strlen(var);

	for (const char *w = strstr(s, var); w; w = strstr(w + 1, var)) {
		const char *b = w, *a = w + vl;
		while (b > s && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b == w || b == s || b[-1] != '=' || (b - 1 > s && strchr("=!<>", b[-2])) || is_id((unsigned char)*a))
			continue;
		a += strspn(a, " \t");
		if (*a == '=' && a[1] != '=')
			return value_ok(a + 1 + strspn(a + 1, " \t"));
	}
	return NULL;
}

/* The text after "var = " / "var: T = " at line s, or NULL; *ann the annotation. */
static const char *assigned(const char *s, const char *var, const char **ann)
{
	size_t vl = strlen(var);
	const char *p = s + strspn(s, " \t");

	*ann = NULL;
	if (strncmp(p, var, vl) || is_id((unsigned char)p[vl]) || p[vl] == '.')
		return NULL;
	p += vl;
	p += strspn(p, " \t");
	if (*p == ':' && p[1] != '=') {
		*ann = p + 1;
		while (*p && !(*p == '=' && p[1] != '='))
			p++;
		if (!*p)
			return p;	/* x: Foo, no value */
	}
	if (*p != '=' || p[1] == '=')
		return NULL;
	return value_ok(p + 1 + strspn(p + 1, " \t"));
}

static int local_var(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line, const char *var,
		     const struct rs_def **cls);
static int scoped_var(struct resolver *rs, struct rs_env *e, const char *scope, long line, const char *var,
		      const struct rs_def **cls);
static const struct rs_def *expr_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       const char *expr);
static const struct rs_def *iter_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       const char *x);
static const struct rs_def *entered_class(struct resolver *rs, const struct rs_def *c, int async);
static const struct rs_def *call_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       const char *callee);

/* The class of function d's return annotation (def f(...) -> Foo:), or NULL. */
static const struct rs_def *return_class(struct resolver *rs, const struct rs_def *d)
{
	struct rs_env *m = env_of(rs, d->path);
	char *st, *arrow, *c;
	struct rs_thing t = { NULL, NULL };

	if (!m || !line_at(m, d->line))
		return NULL;
	st = statement(m, d->line);
	arrow = strstr(st, "->");
	c = arrow ? annotation_class(arrow + 2) : NULL;
	if (c)
		t = resolve_dotted(rs, m, c, 0);
	free(c);
	free(st);
	return t.def && !strcmp(t.def->kind, "class") ? t.def : NULL;
}

/* What var (a plain name) is at line, inside function f (NULL: at module
 * level): a local's, a module variable's or an imported variable's class. */
static const struct rs_def *var_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				      const char *var)
{
	const struct rs_def *cls = NULL;
	struct rs_thing t;
	char q[512];

	if (f && scoped_var(rs, e, qualname(f, q, sizeof(q)), line, var, &cls))
		return cls;
	if (local_var(rs, e, NULL, line, var, &cls))
		return cls;
	t = resolve_name(rs, e, var, 0);
	if (t.def && !t.def->scope && strcmp(t.def->kind, "class") && strcmp(t.def->kind, "function")) {
		struct rs_env *m = env_of(rs, t.def->path);
		if (m && m != e && local_var(rs, m, NULL, t.def->line + 1, t.def->name, &cls))
			return cls;
	}
	return NULL;
}

/* The definition a call's callee text ("f", "mod.f", "x.m", "self.m") reaches. */
static const struct rs_def *callee_def(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       char *callee)
{
	char *dot = strrchr(callee, '.'), q[512];
	const struct rs_def *c = NULL, *a;
	struct rs_thing t;
	int inh = 0;
	long ix;

	if (!dot) {
		if (f && scoped_var(rs, e, qualname(f, q, sizeof(q)), line, callee, &c))
			return NULL;
		return resolve_name(rs, e, callee, 0).def;
	}
	*dot = '\0';
	if (!strcmp(callee, "self") || !strcmp(callee, "cls")) {
		c = f && f->scope ? enclosing_class(rs, e->path, f->scope) : NULL;
	} else {
		t = resolve_dotted(rs, e, callee, 0);
		if (t.module) {
			*dot = '.';
			return module_attr(rs, t.module, dot + 1, 0).def;
		}
		c = t.def && !strcmp(t.def->kind, "class") ? t.def : NULL;
		if (!c)
			c = expr_class(rs, e, f, line, callee);
	}
	*dot = '.';
	if (!c || (ix = method_of(rs, c, dot + 1, 0, &inh, 0)) < 0)
		return NULL;
	rs->ops->named(rs->ctx, dot + 1, &a);
	return &a[ix];
}

/* The class a value expression at line (in function f, or NULL) makes:
 * Foo(...), mod.Foo(...), or a call of a function or method whose return
 * annotation names a class; else NULL. */
static const struct rs_def *value_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
					const char *v)
{
	const char *p = v;
	char buf[256];
	const struct rs_def *d, *r = NULL;

	while (is_id((unsigned char)*p) || *p == '.')
		p++;
	if (p == v || *p != '(' || (size_t)(p - v) >= sizeof(buf) || rs->depth > 4)
		return NULL;
	memcpy(buf, v, (size_t)(p - v));
	buf[p - v] = '\0';
	rs->depth++;
	d = callee_def(rs, e, f, line, buf);
	if (d && !strcmp(d->kind, "class"))
		r = d;
	else if (d && (!strcmp(d->kind, "function") || !strcmp(d->kind, "method")))
		r = return_class(rs, d);
	else if (!d)
		r = call_class(rs, e, f, line, buf);
	rs->depth--;
	return r;
}

/* The class of a type annotation's text, or NULL. */
static const struct rs_def *annotated_class(struct resolver *rs, struct rs_env *e, const char *ann)
{
	char *c = annotation_class(ann);
	struct rs_thing t = { NULL, NULL };

	if (c)
		t = resolve_dotted(rs, e, c, 0);
	free(c);
	return t.def && !strcmp(t.def->kind, "class") ? t.def : NULL;
}

/*
 * What var is in function f before line: *cls its class when known.  Returns
 * 1 when var is a local or parameter of f (known or not), 0 when f does not
 * bind it (a module name then).
 */
static int local_var(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line, const char *var,
		     const struct rs_def **cls)
{
	long from = f ? f->line + 1 : 1;
	char *pt;

	*cls = NULL;
	if (f && line_at(e, line)) {
		/* [x.f() for x in xs] on the call's own line: the elements of xs */
		const char *s = line_at(e, line), *w;
		size_t vl = strlen(var);
		for (w = strstr(s, " for "); w; w = strstr(w + 1, " for ")) {
			const char *t = w + 5 + strspn(w + 5, " ");
			if (!strncmp(t, var, vl) && !strncmp(t + vl, " in ", 4)) {
				*cls = iter_class(rs, e, f, line, t + vl + 4 + strspn(t + vl + 4, " "));
				return 1;
			}
		}
	}
	for (long k = 1, l = line - 1; f ? l >= from : k <= e->t.lines_nr; k++, l--) {
		const char *s, *ann, *v;
		if (!f && l < 1)
			l = e->t.lines_nr;	/* a module variable: assigned later in the file */
		s = line_at(e, l);
		if (!s || (!f && (*s == ' ' || *s == '\t')))
			continue;
		if ((v = assigned(s, var, &ann)) || (v = chained(s, var))) {
			*cls = ann ? annotated_class(rs, e, ann) : NULL;
			if (!*cls)
				*cls = value_class(rs, e, f, l, v);
			return 1;
		}
		{
			const char *p = s + strspn(s, " \t"), *w;
			size_t vl = strlen(var);
			if (!strncmp(p, "import ", 7) || !strncmp(p, "from ", 5))
				continue;	/* an import binds a module name (the environment's) */
			int async = !strncmp(p, "async ", 6);
			if (async)
				p += 6 + strspn(p + 6, " ");
			if (!strncmp(p, "for ", 4) && (w = strstr(p, var)) && !is_id((unsigned char)w[vl]) &&
			    !is_id((unsigned char)w[-1]) && w < strstr(p, " in ")) {
				/* for var in xs: the class of xs's elements when var is the only target */
				const char *in = strstr(p, " in ");
				if (w == p + 4 + strspn(p + 4, " ") && w + vl + strspn(w + vl, " ") == in + 1)
					*cls = iter_class(rs, e, f, l, in + 4 + strspn(in + 4, " "));
				return 1;
			}
			if ((w = strstr(p, " as ")) && !strncmp(w + 4 + strspn(w + 4, " "), var, vl) &&
			    !is_id((unsigned char)w[4 + strspn(w + 4, " ") + vl])) {
				if (!strncmp(p, "with ", 5) && (*cls = value_class(rs, e, f, l, p + 5 + strspn(p + 5, " "))))
					*cls = entered_class(rs, *cls, async);
				return 1;
			}
		}
	}
	if (!f)
		return 0;
	pt = param_type(e, f, var, 0);
	if (!pt)
		return 0;
	if (*pt) {
		struct rs_thing t = resolve_dotted(rs, e, pt, 0);
		*cls = t.def && !strcmp(t.def->kind, "class") ? t.def : NULL;
	}
	free(pt);
	return 1;
}

/* local_var() in the innermost function of scope, then in the functions
 * enclosing it (a closure's free variable). */
static int scoped_var(struct resolver *rs, struct rs_env *e, const char *scope, long line, const char *var,
		      const struct rs_def **cls)
{
	char buf[512];

	*cls = NULL;
	if (!scope || strlen(scope) >= sizeof(buf))
		return 0;
	strcpy(buf, scope);
	for (;;) {
		const struct rs_def *f = enclosing_function(rs, e->path, buf);
		char *dot;
		if (f && local_var(rs, e, f, line, var, cls))
			return 1;
		if (!(dot = strrchr(buf, '.')))
			return 0;
		*dot = '\0';
	}
}

/* The method of class c around line of e (the nearest def less indented above it), or NULL. */
static const struct rs_def *method_at(struct resolver *rs, struct rs_env *e, const struct rs_def *c, long line)
{
	const char *s = line_at(e, line);
	size_t ind = s ? strspn(s, " \t") : 0;
	char q[512], name[256];

	for (long l = line - 1; l > c->line; l--) {
		const char *t = line_at(e, l), *p, *b;
		if (!t || !*(p = t + strspn(t, " \t")) || *p == '#' || (size_t)(p - t) >= ind)
			continue;
		ind = (size_t)(p - t);
		if (!strncmp(p, "async ", 6))
			p += 6 + strspn(p + 6, " ");
		if (strncmp(p, "def ", 4))
			continue;
		p += 4 + strspn(p + 4, " ");
		for (b = p; is_id((unsigned char)*p); p++)
			;
		if (p == b || (size_t)(p - b) >= sizeof(name))
			return NULL;
		memcpy(name, b, (size_t)(p - b));
		name[p - b] = '\0';
		return def_in(rs, c->path, qualname(c, q, sizeof(q)), name, NULL);
	}
	return NULL;
}

/* Is d decorated @property (or a cached_property)? */
static int is_property(struct rs_env *m, const struct rs_def *d)
{
	for (long l = d->line - 1; l >= 1 && l >= d->line - 4; l--) {
		const char *t = line_at(m, l), *p;
		if (!t || *(p = t + strspn(t, " \t")) != '@')
			return 0;
		if (strstr(p, "property") && !strchr(p, '('))
			return 1;
	}
	return 0;
}

/* The text of function d's return annotation (def f(...) -> T:), or NULL. */
static char *return_ann(struct resolver *rs, const struct rs_def *d)
{
	struct rs_env *m = env_of(rs, d->path);
	char *st, *arrow, *r = NULL;

	if (!m || !line_at(m, d->line))
		return NULL;
	st = statement(m, d->line);
	if ((arrow = strstr(st, "->")))
		r = ann_text(arrow + 2);
	free(st);
	return r;
}

/* The class of the elements of an annotation: list[Foo], Sequence["Foo"],
 * Iterator[Foo], tuple[Foo, ...], Optional[list[Foo]]; or NULL. */
static const struct rs_def *element_class(struct resolver *rs, struct rs_env *e, const char *ann)
{
	static const char *const seqs[] = { "list", "List", "Sequence", "MutableSequence", "Iterable", "Iterator",
		"Generator", "AsyncIterator", "AsyncIterable", "AsyncGenerator", "set", "Set", "frozenset",
		"FrozenSet", "AbstractSet", "MutableSet", "Collection", "tuple", "Tuple", "Deque", "deque", NULL };
	const char *p = ann, *last;

	if (!ann)
		return NULL;
	for (;;) {
		p += strspn(p, " \t\"'");
		last = p;
		while (is_id((unsigned char)*p) || *p == '.')
			if (*p++ == '.')
				last = p;
		if (*p != '[')
			return NULL;
		if ((p - last == 8 && !strncmp(last, "Optional", 8))) {
			p++;
			continue;
		}
		for (const char *const *q = seqs; *q; q++)
			if ((size_t)(p - last) == strlen(*q) && !strncmp(last, *q, (size_t)(p - last)))
				return annotated_class(rs, e, p + 1);
		return NULL;
	}
}

/* The annotation's class (elem: the class of its elements). */
static const struct rs_def *ann_class(struct resolver *rs, struct rs_env *e, const char *ann, int elem)
{
	return elem ? element_class(rs, e, ann) : annotated_class(rs, e, ann);
}

/* var's annotation in function f: `var: T = ...` before line, else the parameter's; NULL if none. */
static char *var_ann(struct rs_env *e, const struct rs_def *f, long line, const char *var)
{
	for (long l = line - 1; l > f->line; l--) {
		const char *s = line_at(e, l), *ann;
		if (s && assigned(s, var, &ann) && ann)
			return ann_text(ann);
	}
	return param_type(e, f, var, 1);
}

/*
 * self.attr of class c, along its bases: a property's return annotation, an
 * annotation (`self.attr: Foo`, or `attr: Foo` in the class body), or the
 * value assigned (`self.attr = Foo(...)`, `self.attr = param` with param
 * annotated in the method).  Its class, or with elem the class of its
 * elements (list[Foo]), or NULL.
 */
static const struct rs_def *attr_of(struct resolver *rs, const struct rs_def *c, const char *attr, int elem,
				    int depth)
{
	struct rs_env *e = env_of(rs, c->path);
	const struct rs_def *bases[16], *d, *k = NULL;
	char var[300], q[512], *a;
	size_t al = strlen(attr), body = 0, nb;

	if (!e || al > 250 || depth > RS_DEPTH)
		return NULL;
	if ((d = def_in(rs, c->path, qualname(c, q, sizeof(q)), attr, NULL)) && !strcmp(d->kind, "method") &&
	    is_property(e, d)) {
		a = return_ann(rs, d);
		k = ann_class(rs, e, a, elem);
		free(a);
		return k;
	}
	snprintf(var, sizeof(var), "self.%s", attr);
	for (long l = c->line + 1; l <= c->end_line && !k; l++) {
		const char *s = line_at(e, l), *p;
		size_t ind;
		if (!s || !*(p = s + strspn(s, " \t")) || *p == '#')
			continue;
		ind = (size_t)(p - s);
		if (!body)
			body = ind;
		if (ind == body && !strncmp(p, attr, al) && p[al] == ':' && p[al + 1] != '=') {
			a = ann_text(p + al + 1);	/* attr: Foo in the class body */
			k = ann_class(rs, e, a, elem);
			free(a);
			continue;
		}
		if (strncmp(p, var, strlen(var)))
			continue;
		p += strlen(var);
		if (is_id((unsigned char)*p) || *p == '.')
			continue;
		/* assigned() refuses the dot of "self.x": match the rest by hand */
		p += strspn(p, " \t");
		if (*p == ':' && p[1] != '=') {
			a = ann_text(p + 1);
			k = ann_class(rs, e, a, elem);
			free(a);
		} else if (*p == '=' && p[1] != '=') {
			const char *v = p + 1 + strspn(p + 1, " \t"), *ve = v;
			const struct rs_def *f = method_at(rs, e, c, l);
			while (is_id((unsigned char)*ve))
				ve++;
			if (ve > v && !*(ve + strspn(ve, " \t")) && f && f->line < l) {
				char name[256];
				if ((size_t)(ve - v) >= sizeof(name))
					continue;
				memcpy(name, v, (size_t)(ve - v));
				name[ve - v] = '\0';
				/* self.attr = param: the parameter's (or local's) annotation */
				a = var_ann(e, f, l, name);
				k = a ? ann_class(rs, e, a, elem) : NULL;
				free(a);
				if (!k && !elem)
					k = var_class(rs, e, f, l, name);
			} else if (!elem) {
				k = value_class(rs, e, f, l, v);
			}
		}
	}
	nb = k ? 0 : class_bases(rs, c, bases, 16);
	for (size_t i = 0; i < nb && !k; i++)
		k = attr_of(rs, bases[i], attr, elem, depth + 1);
	return k;
}

/* The class of the attribute chain "a.b" of an instance of class c, or NULL. */
static const struct rs_def *chain_class(struct resolver *rs, const struct rs_def *c, const char *chain)
{
	char part[256];

	while (c && *chain) {
		size_t n = strcspn(chain, ".");
		if (n >= sizeof(part))
			return NULL;
		memcpy(part, chain, n);
		part[n] = '\0';
		c = attr_of(rs, c, part, 0, 0);
		chain += n + (chain[n] == '.');
	}
	return c;
}

/* The class of a dotted value: var, var.a.b (a local, parameter or module
 * variable of known class), self.a.b; or NULL. */
static const struct rs_def *expr_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       const char *expr)
{
	char first[256];
	size_t fl = strcspn(expr, ".");
	const struct rs_def *c;

	if (fl >= sizeof(first) || rs->depth > 4)
		return NULL;
	memcpy(first, expr, fl);
	first[fl] = '\0';
	if (!strcmp(first, "self"))
		c = f && f->scope ? enclosing_class(rs, e->path, f->scope) : NULL;
	else
		c = var_class(rs, e, f, line, first);
	return c && expr[fl] ? chain_class(rs, c, expr + fl + 1) : !strcmp(first, "self") ? NULL : c;
}

/* callee(...) where callee is an instance: its class's __call__'s return class. */
static const struct rs_def *call_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       const char *callee)
{
	const struct rs_def *c, *a;
	int inh = 0;
	long ix;

	rs->depth++;
	c = expr_class(rs, e, f, line, callee);
	rs->depth--;
	if (!c || (ix = method_of(rs, c, "__call__", 0, &inh, 0)) < 0)
		return NULL;
	rs->ops->named(rs->ctx, "__call__", &a);
	return return_class(rs, &a[ix]);
}

/* with C(...) as x: __enter__'s (__aenter__'s) return class when it names one, else C. */
static const struct rs_def *entered_class(struct resolver *rs, const struct rs_def *c, int async)
{
	const char *m = async ? "__aenter__" : "__enter__";
	const struct rs_def *a, *k;
	int inh = 0;
	long ix = method_of(rs, c, m, 0, &inh, 0);

	if (ix < 0)
		return c;
	rs->ops->named(rs->ctx, m, &a);
	k = return_class(rs, &a[ix]);
	return k ? k : c;
}

/* for x in <x>: the class of the elements of self.attr, a local or parameter
 * annotated list[Foo], or of what a call returns (-> Iterator[Foo]); or NULL. */
static const struct rs_def *iter_class(struct resolver *rs, struct rs_env *e, const struct rs_def *f, long line,
				       const char *x)
{
	char buf[256];
	const char *p = x, *q;
	const struct rs_def *d, *r = NULL;
	size_t n;

	while (is_id((unsigned char)*p) || *p == '.')
		p++;
	n = (size_t)(p - x);
	if (!n || n >= sizeof(buf) || rs->depth > 4)
		return NULL;
	memcpy(buf, x, n);
	buf[n] = '\0';
	q = p + strspn(p, " \t");
	if (*q == '(') {
		char *a;
		rs->depth++;
		d = callee_def(rs, e, f, line, buf);
		rs->depth--;
		if (!d || (strcmp(d->kind, "function") && strcmp(d->kind, "method")))
			return NULL;
		a = return_ann(rs, d);
		r = element_class(rs, env_of(rs, d->path), a);
		free(a);
		return r;
	}
	if (*q && *q != ':' && *q != ']' && *q != ')' && strncmp(q, "if ", 3))
		return NULL;	/* for x in xs: / [... for x in xs] / (... for x in xs if ...) */
	if (!strncmp(buf, "self.", 5) && !strchr(buf + 5, '.')) {
		const struct rs_def *c = f && f->scope ? enclosing_class(rs, e->path, f->scope) : NULL;
		return c ? attr_of(rs, c, buf + 5, 1, 0) : NULL;
	}
	if (f && !strchr(buf, '.')) {
		char *a = var_ann(e, f, line, buf);
		r = element_class(rs, e, a);
		free(a);
	}
	return r;
}

/* self.f() / cls.f() / super().f() */
static long resolve_self(struct resolver *rs, const char *path, const char *scope, const char *name, int sup,
			 enum bind_how *how)
{
	const struct rs_def *c = enclosing_class(rs, path, scope);
	int inh = 0;
	long ix;

	if (!c)
		return -1;
	ix = method_of(rs, c, name, sup, &inh, 0);
	if (ix >= 0)
		*how = inh || sup ? BIND_INHERITED : BIND_MEMBER;
	return ix;
}

/* The index of d among named(d->name). */
static long index_of(struct resolver *rs, const struct rs_def *d)
{
	const struct rs_def *a;
	size_t n = rs->ops->named(rs->ctx, d->name, &a);

	return d >= a && d < a + n ? (long)(d - a) : -1;
}

/* A bare call f(). */
static const struct rs_def *resolve_bare(struct resolver *rs, struct rs_env *e, const struct rs_def *f, const char *scope,
			 long line, const char *name, enum bind_how *how)
{
	const struct rs_def *cls;
	struct rs_thing t;
	long ix;

	/* a function nested in an enclosing one, unless a function nearer the
	 * call binds the name first (a parameter of a nested function shadows its
	 * enclosing function's nested function of that name) */
	for (const char *s = scope; s; ) {
		char q[512];
		size_t n = (size_t)(strchrnul(s, '\0') - scope);
		const struct rs_def *d, *fq;
		if (n >= sizeof(q))
			break;
		memcpy(q, scope, n);
		q[n] = '\0';
		for (;;) {
			ix = -1;
			if ((d = def_in(rs, e->path, q, name, &ix)) && strcmp(d->kind, "method")) {
				*how = BIND_LOCAL;
				return d;
			}
			if ((fq = enclosing_function(rs, e->path, q)) && local_var(rs, e, fq, line, name, &cls))
				return NULL;	/* a parameter or local of q shadows the name */
			if (!strrchr(q, '.'))
				break;
			*strrchr(q, '.') = '\0';
		}
		break;
	}
	if (scoped_var(rs, e, scope, line, name, &cls))
		return NULL;	/* a parameter or local shadows the name */
	t.def = NULL;
	t.module = NULL;
	for (size_t i = e->al_nr; f && i-- > 0; )
		if (e->al[i].line > f->line && e->al[i].line < line && e->al[i].orig && !strcmp(e->al[i].name, name)) {
			t = module_attr(rs, e->al[i].path, e->al[i].orig, 0);	/* imported inside the function */
			break;
		}
	if (!t.def)
		t = resolve_name(rs, e, name, 0);
	if (!t.def || (strcmp(t.def->kind, "function") && strcmp(t.def->kind, "class")))
		return NULL;
	*how = !strcmp(t.def->path, e->path) ? BIND_LOCAL : BIND_IMPORT;
	return t.def;
}

/* x.f(), mod.f(), Foo.f(), self.x.f() */
static long resolve_dotted_call(struct resolver *rs, struct rs_env *e, const struct rs_def *f, const char *path,
				const char *scope, long line, const char *recv, const char *name,
				enum bind_how *how, const struct rs_def **other)
{
	const struct rs_def *cls = NULL;
	struct rs_thing t = { NULL, NULL };
	char first[256];
	size_t fl = strcspn(recv, ".");
	int inh = 0, local = 0;
	long ix;

	if (fl >= sizeof(first))
		return -1;
	memcpy(first, recv, fl);
	first[fl] = '\0';
	if (!strcmp(first, "self") && recv[fl] == '.') {
		const struct rs_def *c = enclosing_class(rs, path, scope);
		cls = c ? chain_class(rs, c, recv + fl + 1) : NULL;	/* self.a.f(), self.a.b.f() */
	} else if ((f && (local = scoped_var(rs, e, scope, line, first, &cls))) ||
		   (!recv[fl] && (local = local_var(rs, e, NULL, line, first, &cls)))) {
		/* a local or parameter (x.a.f(): the attribute of its class), or a module variable */
		if (recv[fl])
			cls = cls ? chain_class(rs, cls, recv + fl + 1) : NULL;
	} else if (strcmp(first, "self") && strcmp(first, "cls")) {
		t = resolve_dotted(rs, e, recv, 0);
		if (t.module) {
			const struct rs_thing m = module_attr(rs, t.module, name, 0);
			char v[256];
			struct rs_env *me = env_of(rs, t.module);
			if (m.def && (!strcmp(m.def->kind, "function") || !strcmp(m.def->kind, "class")) &&
			    (!strcmp(m.def->name, name) || (me && assigned_name(me, name, v, sizeof(v))))) {
				*how = BIND_IMPORT;
				if (strcmp(m.def->name, name))
					*other = m.def;	/* mod.ib() with ib = attrib in mod: a definition of another name */
				return index_of(rs, m.def);
			}
			return -1;
		}
		if (t.def && !strcmp(t.def->kind, "class")) {
			ix = method_of(rs, t.def, name, 0, &inh, 0);
			if (ix >= 0)
				*how = inh ? BIND_INHERITED : BIND_MEMBER;
			return ix;
		}
		if (!recv[fl])
			cls = var_class(rs, e, NULL, line, first);	/* an imported module variable */
	}
	if (!cls)
		return -1;
	ix = method_of(rs, cls, name, 0, &inh, 0);
	if (ix >= 0)
		*how = BIND_RECEIVER;
	return ix;
}

const struct rs_def *resolve_call(struct resolver *rs, const char *path, const char *scope, long line, long col,
				  const char *name, enum bind_how *how)
{
	struct rs_env *e = env_of(rs, path);
	const char *s = e ? line_at(e, line) : NULL;
	const struct rs_def *f, *d = NULL;
	char *recv;
	long ix = -1;

	*how = BIND_NONE;
	if (!s || col < 1)
		return NULL;
	f = enclosing_function(rs, path, scope);
	if (!(recv = receiver_text(s, (size_t)col - 1))) {
		/* Foo().f(): a method of the class the receiver's call makes */
		char *v = call_receiver(s, (size_t)col - 1);
		const struct rs_def *cls = v ? value_class(rs, e, f, line, v) : NULL;
		int inh = 0;

		free(v);
		if (!cls || (ix = method_of(rs, cls, name, 0, &inh, 0)) < 0)
			return NULL;
		*how = BIND_RECEIVER;
		recv = xstrdup("()");
	} else if (!*recv)
		d = resolve_bare(rs, e, f, scope, line, name, how);
	else if (!strcmp(recv, "self") || !strcmp(recv, "cls") || !strcmp(recv, "super()"))
		ix = resolve_self(rs, path, scope, name, recv[0] == 's' && recv[1] == 'u', how);
	else
		ix = resolve_dotted_call(rs, e, f, path, scope, line, recv, name, how, &d);
	if (*recv && !d) {
		const struct rs_def *a;
		size_t n = rs->ops->named(rs->ctx, name, &a);
		d = ix >= 0 && (size_t)ix < n ? &a[ix] : NULL;
	}
	if (!d)
		*how = BIND_NONE;
	free(recv);
	return d;
}

/* Adds a copy of s to the set v (*nr of them) unless it holds it. */
static void str_add(char ***v, size_t *nr, const char *s)
{
	for (size_t j = 0; j < *nr; j++)
		if (!strcmp((*v)[j], s))
			return;
	*v = xrealloc(*v, (*nr + 1) * sizeof(**v));
	(*v)[(*nr)++] = xstrdup(s);
}

/* Whether the line s is `t = [t2 = ...] v` with v a dotted name ending in
 * name (nl long) and nothing after it but a comment: a line worth reading
 * its targets' values (assigned_name()) for. */
static int value_ends_in(const char *s, const char *name, size_t nl)
{
	const char *p = s, *q, *v;

	for (;;) {
		for (q = p; is_id((unsigned char)*q); q++)
			;
		v = q + strspn(q, " \t");
		if (q == p || *v != '=' || v[1] == '=')
			break;
		p = v + 1 + strspn(v + 1, " \t");
	}
	if (p == s)
		return 0;	/* no target */
	for (q = p; is_id((unsigned char)*q) || (*q == '.' && is_id((unsigned char)q[1])); q++)
		;
	v = q + strspn(q, " \t\r");
	return (size_t)(q - p) >= nl && !strncmp(q - nl, name, nl) && (q - nl == p || q[-(long)nl - 1] == '.') &&
	       (!*v || *v == '#');
}

size_t resolve_aliases(struct resolver *rs, const char *path, const char *from, const char *name, char ***out)
{
	struct rs_env *e = env_of(rs, path);
	size_t nl = strlen(name), nr = 0;

	*out = NULL;
	if (!e || !e->t.python)
		return 0;
	for (size_t i = 0; strcmp(path, from) && i < e->al_nr; i++) {
		const struct rs_alias *a = &e->al[i];	/* from <from> import name [as x], from <from> import * */
		if (a->path && a->orig && !strcmp(a->path, from) && !strcmp(a->orig, name))
			str_add(out, &nr, a->name);
		else if (a->path && a->orig && !strcmp(a->path, from) && !strcmp(a->orig, "*"))
			str_add(out, &nr, name);
	}
	for (long l = 1; l <= e->t.lines_nr; l++) {
		const char *s = line_at(e, l), *p = s, *q;
		if (!s || !is_id((unsigned char)*s) || !strstr(s, name) || !value_ends_in(s, name, nl))
			continue;
		for (;;) {	/* each target of the line whose value ends in name */
			char t[256], v[256];
			const char *val;
			size_t vl;
			for (q = p; is_id((unsigned char)*q); q++)
				;
			if (q == p || (size_t)(q - p) >= sizeof(t))
				break;
			memcpy(t, p, (size_t)(q - p));
			t[q - p] = '\0';
			p = q + strspn(q, " \t");
			if (*p != '=' || p[1] == '=')
				break;
			p += 1 + strspn(p + 1, " \t");
			if (strcmp(t, name) && (val = assigned_name(e, t, v, sizeof(v))) && (vl = strlen(val)) >= nl &&
			    !strcmp(val + vl - nl, name) && (vl == nl || val[vl - nl - 1] == '.'))
				str_add(out, &nr, t);
		}
	}
	return nr;
}

/* Whether path is a package's __init__.py (or .pyi). */
static int is_init(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strcmp(b, "__init__.py") || !strcmp(b, "__init__.pyi");
}

/* A name bound in a file, met by resolve_alias_names(). */
struct rs_bound {
	char *path, *name;
};

size_t resolve_alias_names(struct resolver *rs, const char *path, const char *name, char ***out)
{
	struct rs_bound *v = NULL;
	size_t v_nr = 0, v_alloc = 0, level_start = 0, nr = 0;

	*out = NULL;
	ALLOC_GROW(v, 1, v_alloc);
	v[v_nr++] = (struct rs_bound){ xstrdup(path), xstrdup(name) };
	/* breadth first: each level the names the files of the last one, and
	 * the files that import them, bind to what the last level's names denote */
	for (int depth = 0; depth < RS_DEPTH && level_start < v_nr && v_nr < RS_ALIAS_MAX; depth++) {
		size_t level_end = v_nr;
		for (size_t i = level_start; i < level_end && v_nr < RS_ALIAS_MAX; i++) {
			char **files = NULL;
			size_t files_nr = rs->ops->importers ? rs->ops->importers(rs->ctx, v[i].path, &files) : 0;
			for (size_t f = 0; f <= files_nr; f++) {
				const char *fp = f ? files[f - 1] : v[i].path;
				char **nn;
				size_t n = resolve_aliases(rs, fp, v[i].path, v[i].name, &nn);
				for (size_t k = 0; k < n; k++) {
					size_t j = 0;
					if (!strcmp(nn[k], v[i].name) && f && !is_init(fp)) {
						/* imported under its own name into a module, not a
						 * package's __init__.py: a use, not a re-export (rich's
						 * cell_len: its importers' importers are not read) */
						free(nn[k]);
						continue;
					}
					while (j < v_nr && (strcmp(v[j].name, nn[k]) || strcmp(v[j].path, fp)))
						j++;
					if (j == v_nr && v_nr < RS_ALIAS_MAX) {
						ALLOC_GROW(v, v_nr + 1, v_alloc);
						v[v_nr++] = (struct rs_bound){ xstrdup(fp), xstrdup(nn[k]) };
						if (strcmp(nn[k], name))
							str_add(out, &nr, nn[k]);
					}
					free(nn[k]);
				}
				free(nn);
			}
			for (size_t f = 0; f < files_nr; f++)
				free(files[f]);
			free(files);
		}
		level_start = level_end;
	}
	if (v_nr >= RS_ALIAS_MAX && !rs->alias_bounded) {
		rs->alias_bounded = 1;
		warning("the other names of %s (%s) were followed to %d bindings: calls under names beyond "
			"those may be missing", name, path, RS_ALIAS_MAX);
	}
	for (size_t i = 0; i < v_nr; i++) {
		free(v[i].path);
		free(v[i].name);
	}
	free(v);
	return nr;
}
