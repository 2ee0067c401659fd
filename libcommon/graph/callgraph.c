/*
 * callgraph.c: callers and callees (refs.h), references bound to definitions.
 *
 * The index knows each call's name, file, line and enclosing scope; bind.h
 * picks which definition of that name it reaches (same class, same file,
 * an imported file, the only one), so that a namesake's callers are not
 * reported as the symbol's.
 */
#include "core/common.h"
#include "graph/bind.h"
#include "graph/jstype.h"
#include "graph/refs.h"

/* The references that are calls: f(), and in TS/JS new C() (a "class" reference
 * there is a new expression: the tags' @reference.class) */
#define CALL_KINDS "(r.kind = 'call' OR (r.kind = 'class' AND b.lang IN ('javascript', 'typescript', 'tsx')))"

/* The definitions of one name, as candidates of bind_ref() for one file. */
struct cands {
	struct bind_def *d;	/* candidates */
	char **paths, **scopes, **kinds;	/* owned strings behind d, their kinds */
	long *lines, *ends;	/* their lines and end lines */
	int *reach;		/* JS/TS: the file the flags are for reaches the candidate's in a few imports */
	int *declared;		/* JS/TS: bind_js_call()'s declared[] */
	struct rs_text text;	/* JS/TS: the lines of the file text_path */
	char *text_path;
	size_t nr, alloc;	/* number of candidates */
	char *for_path;		/* the file the imported flags are for, or NULL */
};

static void cands_release(struct cands *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		free(c->paths[i]);
		free(c->scopes[i]);
		free(c->kinds[i]);
	}
	free(c->kinds);
	free(c->reach);
	free(c->declared);
	for (long l = 0; l < c->text.lines_nr; l++)
		free(c->text.lines[l]);
	free(c->text.lines);
	free(c->text_path);
	free(c->d);
	free(c->paths);
	free(c->scopes);
	free(c->lines);
	free(c->ends);
	free(c->for_path);
	memset(c, 0, sizeof(*c));
}

/* TS: mark -1 in c->declared the candidates inside a type or an interface of
 * their file (their scope's innermost name): signatures, no definitions; -2
 * those within its lines (not a method of a class merged with it). */
static void js_signatures(struct refs *r, struct cands *c)
{
	sqlite3_stmt *st = NULL;

	for (size_t i = 0; i < c->nr; i++) {
		const char *s = c->scopes[i], *dot;

		if (!s || !bind_is_js(c->paths[i]))
			continue;
		if (!st)
			st = refs_prep(r, "SELECT d.line <= ?3 AND d.end_line >= ?3 FROM defs d JOIN files f ON "
				       "f.blob_id = d.blob_id WHERE f.path = ?1 AND d.name = ?2 AND d.kind IN ('type', "
				       "'interface') ORDER BY 1 DESC LIMIT 1");
		dot = strrchr(s, '.');
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, c->paths[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, dot ? dot + 1 : s, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, c->lines[i]);
		if (sqlite3_step(st) == SQLITE_ROW)
			c->declared[i] = sqlite3_column_int(st, 0) ? -2 : -1;
	}
	sqlite3_finalize(st);
}

/* Load every definition named name. */
static void cands_load(struct refs *r, struct cands *c, const char *name)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT f.path, d.scope, d.line, d.end_line, d.kind, d.flags FROM defs d "
				"JOIN files f ON f.blob_id = d.blob_id WHERE d.name = ?1 "
				"ORDER BY f.path, d.line");
	size_t a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0;

	memset(c, 0, sizeof(*c));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(c->d, c->nr + 1, c->alloc);
		ALLOC_GROW(c->paths, c->nr + 1, a1);
		ALLOC_GROW(c->scopes, c->nr + 1, a2);
		ALLOC_GROW(c->lines, c->nr + 1, a3);
		ALLOC_GROW(c->ends, c->nr + 1, a4);
		ALLOC_GROW(c->kinds, c->nr + 1, a5);
		c->reach = xrealloc(c->reach, (c->nr + 1) * sizeof(*c->reach));
		c->reach[c->nr] = 0;
		c->declared = xrealloc(c->declared, (c->nr + 1) * sizeof(*c->declared));
		c->declared[c->nr] = 0;
		c->declared[c->nr] = sqlite3_column_int(st, 5) & TAGTEXT_ASSIGNED ? 2 :
				     !(sqlite3_column_int(st, 5) & TAGTEXT_PROPERTY);
		c->paths[c->nr] = xstrdup(refs_col(st, 0));
		c->scopes[c->nr] = sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : xstrdup(refs_col(st, 1));
		c->lines[c->nr] = sqlite3_column_int64(st, 2);
		c->ends[c->nr] = sqlite3_column_int64(st, 3);
		c->kinds[c->nr] = xstrdup(refs_col(st, 4) ? refs_col(st, 4) : "");
		c->nr++;
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < c->nr; i++) {
		c->d[i].path = c->paths[i];
		c->d[i].scope = c->scopes[i];
	}
	js_signatures(r, c);
}

/* Mark the candidates whose files the file path imports (kept while the
 * calls come from the same file: they come in path order). */
static void cands_for_file(struct refs *r, struct cands *c, const char *path, sqlite3_stmt *imp)
{
	sqlite3_stmt *reach;
	char **near = NULL;	/* JS/TS: the files three imports away, path's own included */
	size_t near_nr = 0, near_alloc = 0;

	if (c->for_path && !strcmp(c->for_path, path))
		return;
	free(c->for_path);
	c->for_path = xstrdup(path);
	if (bind_is_js(path) && (!c->text_path || strcmp(c->text_path, path))) {
		for (long l = 0; l < c->text.lines_nr; l++)
			free(c->text.lines[l]);
		free(c->text.lines);
		free(c->text_path);
		c->text_path = xstrdup(path);
		refs_file_lines(r, path, &c->text);
	}
	/* JS/TS: the files three imports away (an index file's re-exports of a
	 * re-exporting one), read once for the file, not once per candidate */
	if (bind_is_js(path) && c->nr) {
		reach = refs_prep(r, "WITH RECURSIVE rc(p, d) AS (SELECT ?1, 0 UNION "
				  "SELECT i.resolved, rc.d + 1 FROM imports i JOIN rc ON i.path = rc.p "
				  "WHERE rc.d < 3 AND i.resolved IS NOT NULL) SELECT DISTINCT p FROM rc");
		sqlite3_bind_text(reach, 1, path, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(reach) == SQLITE_ROW) {
			ALLOC_GROW(near, near_nr + 1, near_alloc);
			near[near_nr++] = xstrdup(refs_col(reach, 0));
		}
		sqlite3_finalize(reach);
	}
	for (size_t i = 0; i < c->nr; i++) {
		sqlite3_reset(imp);
		sqlite3_bind_text(imp, 1, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(imp, 2, c->paths[i], -1, SQLITE_TRANSIENT);
		c->d[i].imported = sqlite3_step(imp) == SQLITE_ROW;
		c->reach[i] = 0;
		for (size_t k = 0; k < near_nr && !c->reach[i]; k++)
			c->reach[i] = !strcmp(near[k], c->paths[i]);
	}
	for (size_t k = 0; k < near_nr; k++)
		free(near[k]);
	free(near);
}

/* The candidate of c at (path, line), or -1. */
static long cand_at(const struct cands *c, const char *path, long line)
{
	for (size_t i = 0; i < c->nr; i++)
		if (c->lines[i] == line && !strcmp(c->paths[i], path))
			return (long)i;
	return -1;
}

/* The module-level definition of c in path that a call (kind "call") or a
 * `new` (kind "class") of it reaches, among those target[] marks (NULL:
 * all): the class, or the function's implementation (the last of its
 * overloads); -1 if none. */
static long js_module_def(const struct cands *c, const int *target, const char *path, const char *kind)
{
	long def = -1;

	for (size_t i = 0; i < c->nr; i++)
		if ((!target || target[i]) && !c->scopes[i] && !strcmp(c->paths[i], path) &&
		    !strcmp(c->kinds[i], strcmp(kind, "class") ? "function" : "class") &&
		    (def < 0 || c->lines[i] > c->lines[def]))
			def = (long)i;
	return def;
}

/*
 * TS/JS: the method of class cls (of its nearest base declaring one) among
 * c's candidates: the implementation in the class's body (the last of its
 * overloads), as a receiver (inherited for a base's), or -1 where an
 * interface merged with the class declares it (`interface C { m(): ... }`
 * beside `class C`: the call resolves to that signature, which has no body)
 * or no class of the chain has it.
 */
static long js_method(struct js_types *t, const struct cands *c, const struct js_class *cls, enum bind_how *how)
{
	struct js_class k = *cls, b;

	for (int hops = 0; hops < 8; hops++) {
		long best = -1;
		int any = 0, outside = 0;

		for (size_t i = 0; i < c->nr; i++) {
			const char *s = c->scopes[i], *dot;

			if (!s || strcmp(c->paths[i], k.path) || (strcmp(c->kinds[i], "method") &&
				strcmp(c->kinds[i], "function") && strcmp(c->kinds[i], "field")))
				continue;	/* a method, or a field set to an arrow function */
			dot = strrchr(s, '.');
			if (strcmp(dot ? dot + 1 : s, k.name))
				continue;
			if (c->lines[i] > k.line && c->lines[i] <= k.end) {
				any = 1;
				if (best < 0 || c->lines[i] > c->lines[best])
					best = (long)i;
			} else if (js_in_interface(t, k.path, k.name, c->lines[i])) {
				any = outside = 1;
			}	/* else a method of another class of that name */
		}
		if (any && outside)
			best = -1;	/* an interface merged with the class declares it: the call resolves to that signature */
		if (any) {
			*how = best < 0 ? BIND_NONE : hops ? BIND_INHERITED : BIND_RECEIVER;
			return best;
		}
		if (!js_base(t, &k, &b))
			break;
		k = b;
	}
	*how = BIND_NONE;
	return -1;
}

/*
 * TS/JS: whether a bare f() of path may call another file's candidate def,
 * by how path imports f: not in a module that imports no f (a global), nor
 * one importing f from a package (outside the index); where f is imported
 * from a file, only the definition its imports lead to (js_origin()), and,
 * when they lead to none known, only under its own name (`import { f }`),
 * not a default or renamed import (`import f from` of `export default x`,
 * x no function: that x, not a namesake f of the file).
 */
static int js_bare_origin(struct js_types *t, const struct cands *c, long def, const char *path, const char *name)
{
	struct js_class o;

	switch (js_imports_name(t, path, name)) {
	case JS_IMPORT_NO_MODULE:
		return 1;
	case JS_IMPORT_NONE:
	case JS_IMPORT_OUTSIDE:
		return 0;
	case JS_IMPORT_SAME:
		return !js_origin(t, path, NULL, name, &o) || (!strcmp(o.path, c->paths[def]) && !strcmp(o.name, name));
	case JS_IMPORT_RENAMED:
		return js_origin(t, path, NULL, name, &o) && !strcmp(o.path, c->paths[def]) && !strcmp(o.name, name);
	}
	return 1;
}

/*
 * Bind a call of name (a reference of kind "call", or "class": new C() in
 * TS/JS) at (path, line, col_): by resolve.h's rules in a Python file (with
 * --by-name, bind.h's where they find nothing), in a TS/JS file by
 * bind_js_call() over its text, else by bind.h's, a C prototype followed to
 * its function (bind_c_body()).
 */
static long bind_one(struct refs *r, struct refs_world *w, struct cands *c, sqlite3_stmt *imp, const char *name,
		     const char *kind, const char *path, const char *scope, long line, long col_, enum bind_recv recv,
		     enum bind_how *how)
{
	long def;

	if (resolver_applies(&w->rs, path)) {
		const struct rs_def *d = resolve_call(&w->rs, path, scope, line, col_, name, how);

		if (d)
			return cand_at(c, d->path, d->line);
		if (!r->o.by_name)
			return -1;
	}
	cands_for_file(r, c, path, imp);
	if (bind_is_js(path)) {
		const struct bind_js_file f = { (const char *const *)c->text.lines, c->text.lines_nr, name, col_ };
		struct js_class cls;
		char ns[128];
		int bare = recv == RECV_BARE;

		if (recv == RECV_OTHER && js_receiver_name(w->js, path, line, col_, ns, sizeof(ns)) &&
		    js_origin(w->js, path, ns, name, &cls)) {
			/* ns.f() with `import * as ns`: what the module exports as f */
			def = strcmp(cls.name, name) ? -1 : js_module_def(c, NULL, cls.path, kind);
			*how = def >= 0 ? BIND_IMPORT : BIND_NONE;
			return def;
		}
		if (recv == RECV_SELF && js_this_rebound(w->js, path, scope, line)) {
			*how = BIND_NONE;	/* this.f() in a function with a `this` of its own */
			return -1;
		}
		if (bare && !strcmp(kind, "call") && js_bound_method(w->js, path, name, &cls) &&
		    (def = js_method(w->js, c, &cls, how)) >= 0)
			return def;	/* f() with `const f = x.f.bind(x)`: the method of x's class */
		if (!strcmp(kind, "class"))
			recv = RECV_BARE;	/* new C(), new a.C() */
		else if ((recv == RECV_OTHER || recv == RECV_SELF || recv == RECV_SUPER) &&
			 js_receiver_type(w->js, path, scope, line, col_, &cls)) {
			struct js_class fn;

			if (cls.kind == JS_KIND_CLASS) {
				/* the receiver's class is known: this.f() of the class is a member, super.f() inherited */
				def = js_method(w->js, c, &cls, how);
				if (*how == BIND_RECEIVER && (recv == RECV_SUPER || (js_receiver_name(w->js, path, line, col_,
					ns, sizeof(ns)) && !strcmp(ns, "super"))))
					*how = BIND_INHERITED;
				else if (*how == BIND_RECEIVER && recv == RECV_SELF)
					*how = BIND_MEMBER;
				return def;
			}
			if (recv == RECV_OTHER && js_member_typeof(w->js, &cls, name, &fn)) {
				/* x.f() with x's type declaring `f: typeof g`: g, as imported */
				def = strcmp(fn.name, name) ? -1 : js_module_def(c, NULL, fn.path, kind);
				*how = def >= 0 ? BIND_IMPORT : BIND_NONE;
				return def;
			}	/* else an interface's or a type's signature: the rules below */
		}

		def = bind_js_call(how, path, scope, line, recv, c->d, (const char *const *)c->kinds, c->lines,
				   c->reach, c->declared, c->nr, &f);
		if (def >= 0 && bare && strcmp(c->paths[def], path) && !js_bare_origin(w->js, c, def, path, name)) {
			*how = BIND_NONE;
			def = -1;
		}
		return def;
	}
	def = bind_ref(how, path, scope, recv, c->d, c->nr);
	def = bind_js(how, path, scope, line, recv, c->d, (const char *const *)c->kinds, c->lines, c->reach, c->nr,
		      def);
	return bind_c_body(how, path, recv, c->d, c->lines, c->ends, c->nr, def);
}

/* One occurrence record of a bound reference. */
static void emit_bound(struct refs *r, const char *name, const char *kind, const char *path,
		       long line, long col_, const char *scope, const char *lang, sqlite3_int64 blob,
		       enum bind_how how, const struct cands *c, long def)
{
	char *snip = refs_snippet(r, blob, line);

	nd_begin(&r->out, "occurrence");
	nd_str(&r->out, "name", name);
	nd_str(&r->out, "type", "reference");
	nd_str(&r->out, "kind", kind);
	nd_str(&r->out, "path", path);
	nd_int(&r->out, "line", line);
	nd_int(&r->out, "col", col_);
	nd_str(&r->out, "scope", scope);
	nd_str(&r->out, "lang", lang);
	nd_str(&r->out, "snippet", snip);
	nd_str(&r->out, "confidence", "syntactic");
	nd_str(&r->out, "binding", bind_how_name(how));
	if (def >= 0) {
		nd_key(&r->out, "definition");
		buf_addch(&r->out, '{');
		buf_addstr(&r->out, "\"path\":");
		nd_json_string(&r->out, c->paths[def], strlen(c->paths[def]));
		buf_addf(&r->out, ",\"line\":%ld}", c->lines[def]);
	}
	nd_end(&r->out);
	refs_flush(r);
	free(snip);
	r->emitted++;
}

/* The namespace of a TS/JS call made on recv (`ns` of `ns.f()`) into ns, or
 * "" for a bare call or a `new`; 0 for another receiver. */
static int js_call_ns(struct refs_world *w, const char *kind, const char *path, long line, long col_,
		      enum bind_recv recv, char *ns, size_t n)
{
	ns[0] = '\0';
	if (!strcmp(kind, "class") || recv == RECV_BARE)
		return 1;
	return recv == RECV_OTHER && js_receiver_name(w->js, path, line, col_, ns, n);
}

/* callees: the call of st's row (r.name, r.kind, f.path, r.line, r.col,
 * r.scope, b.lang, b.id, r.recv), named callee, in a TS/JS file, where callee
 * is another name of a module-level function or class (js_origin()): its
 * record, bound to that definition as an import.  1 if written. */
static int js_alias_callee(struct refs *r, struct refs_world *w, const char *callee, sqlite3_stmt *st)
{
	const char *kind = refs_col(st, 1), *path = refs_col(st, 2);
	long line = sqlite3_column_int64(st, 3), col_ = sqlite3_column_int64(st, 4), def;
	char ns[128];
	struct js_class o;
	struct cands ca;

	if (!bind_is_js(path) ||
	    !js_call_ns(w, kind, path, line, col_, (enum bind_recv)sqlite3_column_int(st, 8), ns, sizeof(ns)) ||
	    !js_origin(w->js, path, ns[0] ? ns : NULL, callee, &o) || !strcmp(o.name, callee))
		return 0;
	cands_load(r, &ca, o.name);
	if ((def = js_module_def(&ca, NULL, o.path, kind)) >= 0)
		emit_bound(r, callee, kind, path, line, col_, sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL :
			   refs_col(st, 5), refs_col(st, 6), sqlite3_column_int64(st, 7), BIND_IMPORT, &ca, def);
	cands_release(&ca);
	return def >= 0;
}

/* Adds a copy of s to the set names (n of them) unless it holds it. */
static void name_add(char ***names, size_t *n, const char *s)
{
	for (size_t j = 0; j < *n; j++)
		if (!strcmp((*names)[j], s))
			return;
	*names = xrealloc(*names, (*n + 1) * sizeof(**names));
	(*names)[(*n)++] = xstrdup(s);
}

/* A call of alias, another name of the targets of c (named name), at (line,
 * col_) of path: the target it reaches, or -1; *how set.  (kind: "call" or
 * "class"; scope NULL at top level.) */
typedef long (*alias_bind_fn)(struct refs_world *w, const struct cands *c, const int *target, const char *name,
			      const char *alias, const char *kind, const char *path, const char *scope, long line,
			      long col_, enum bind_recv recv, enum bind_how *how);

/*
 * callers: the calls (CALL_KINDS) of each of names[0..names_nr), another name
 * of the targets of c (named name), that bind() binds to a target, in path,
 * line, col order for each name: their records.  Frees names.  Returns the
 * records written.
 */
static int alias_calls(struct refs *r, struct refs_world *w, struct cands *c, const int *target, const char *name,
		       char **names, size_t names_nr, alias_bind_fn bind)
{
	sqlite3_stmt *st;
	int found = 0;

	if (!names_nr)
		return 0;
	st = refs_prep(r, "SELECT r.kind, f.path, r.line, r.col, r.scope, b.lang, b.id, r.recv FROM refs r "
		       "JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
		       "WHERE r.name = ?1 AND " CALL_KINDS " ORDER BY f.path, r.line, r.col");
	for (size_t k = 0; k < names_nr; k++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, names[k], -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
			const char *kind = refs_col(st, 0), *path = refs_col(st, 1);
			const char *sc = sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : refs_col(st, 4);
			long line = sqlite3_column_int64(st, 2), col_ = sqlite3_column_int64(st, 3), def;
			enum bind_how how = BIND_NONE;

			def = bind(w, c, target, name, names[k], kind, path, sc, line, col_,
				   (enum bind_recv)sqlite3_column_int(st, 7), &how);
			if (def < 0)
				continue;
			emit_bound(r, names[k], kind, path, line, col_, sc, refs_col(st, 5), sqlite3_column_int64(st, 6),
				   how, c, def);
			found++;
		}
	}
	sqlite3_finalize(st);
	for (size_t k = 0; k < names_nr; k++)
		free(names[k]);
	free(names);
	return found;
}

/* alias_calls()'s binding in a TS/JS file: a call whose origin (js_origin())
 * is a target, as an import. */
static long js_alias_bind(struct refs_world *w, const struct cands *c, const int *target, const char *name,
			  const char *alias, const char *kind, const char *path, const char *scope, long line,
			  long col_, enum bind_recv recv, enum bind_how *how)
{
	char ns[128];
	struct js_class o;

	(void)scope;
	if (!bind_is_js(path) || !js_call_ns(w, kind, path, line, col_, recv, ns, sizeof(ns)) ||
	    !js_origin(w->js, path, ns[0] ? ns : NULL, alias, &o) || strcmp(o.name, name))
		return -1;
	*how = BIND_IMPORT;
	return js_module_def(c, target, o.path, kind);
}

/* alias_calls()'s binding in a Python file: the definition resolve_call() gives. */
static long py_alias_bind(struct refs_world *w, const struct cands *c, const int *target, const char *name,
			  const char *alias, const char *kind, const char *path, const char *scope, long line,
			  long col_, enum bind_recv recv, enum bind_how *how)
{
	const struct rs_def *d;
	long def;

	(void)name, (void)kind, (void)recv;
	if (!resolver_applies(&w->rs, path) || !(d = resolve_call(&w->rs, path, scope, line, col_, alias, how)) ||
	    (def = cand_at(c, d->path, d->line)) < 0 || !target[def])
		return -1;
	return def;
}

/* A language's other names of a function or class: whether a file is of the
 * language, the names of a module-level one found from its file (the caller
 * frees them), and how a call of one of them binds (alias_calls()). */
struct alias_lang {
	int (*applies)(struct refs_world *w, const char *path);
	size_t (*names)(struct refs_world *w, const char *path, const char *name, char ***out);
	alias_bind_fn bind;
};

static int js_applies(struct refs_world *w, const char *path)
{
	(void)w;
	return bind_is_js(path);
}

/* TS/JS: the names js_aliases() finds (re-exports and imports under another name). */
static size_t js_names(struct refs_world *w, const char *path, const char *name, char ***out)
{
	size_t n;

	js_aliases(w->js, path, name, out, &n);
	return n;
}

static int py_applies(struct refs_world *w, const char *path)
{
	return resolver_applies(&w->rs, path);
}

/* Python: resolve_alias_names() (`ib = attr = attrib` in its file, `from m
 * import f as g` in an importer, `h = g` in a file importing that one, a few
 * imports away). */
static size_t py_names(struct refs_world *w, const char *path, const char *name, char ***out)
{
	return resolve_alias_names(&w->rs, path, name, out);
}

static const struct alias_lang js_alias_lang = { js_applies, js_names, js_alias_bind };
static const struct alias_lang py_alias_lang = { py_applies, py_names, py_alias_bind };

/*
 * callers: the calls of the other names (l->names) of the module-level target
 * functions and classes of c (named name) in l's language that l->bind binds
 * to a target (TS/JS: whose origin, js_origin(), is a target, as an import;
 * Python: what resolve_call() gives).  Returns the records written.
 */
static int alias_callers(struct refs *r, struct refs_world *w, struct cands *c, const int *target,
			 const char *name, const struct alias_lang *l)
{
	char **names = NULL;
	size_t names_nr = 0;
	const char *read = NULL;	/* the file whose names were read last (c is in path order) */

	for (size_t i = 0; i < c->nr; i++) {
		char **nn;
		size_t n;

		if (!target[i] || c->scopes[i] || !l->applies(w, c->paths[i]) ||
		    (strcmp(c->kinds[i], "function") && strcmp(c->kinds[i], "class")) ||
		    (read && !strcmp(read, c->paths[i])))
			continue;
		read = c->paths[i];
		n = l->names(w, c->paths[i], name, &nn);
		for (size_t k = 0; k < n; k++) {
			name_add(&names, &names_nr, nn[k]);
			free(nn[k]);
		}
		free(nn);
	}
	return alias_calls(r, w, c, target, name, names, names_nr, l->bind);
}

/* callees: the call of st's row (as js_alias_callee()'s) in a Python file
 * whose name, callee, resolve_call() binds to a definition of another name
 * (an alias by assignment or import): its record.  1 if written. */
static int py_alias_callee(struct refs *r, struct refs_world *w, const char *callee, sqlite3_stmt *st)
{
	const char *path = refs_col(st, 2), *sc = sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : refs_col(st, 5);
	long line = sqlite3_column_int64(st, 3), col_ = sqlite3_column_int64(st, 4), def;
	const struct rs_def *d;
	enum bind_how how;
	struct cands ca;

	if (!resolver_applies(&w->rs, path) || !(d = resolve_call(&w->rs, path, sc, line, col_, callee, &how)) ||
	    !strcmp(d->name, callee))
		return 0;
	cands_load(r, &ca, d->name);
	if ((def = cand_at(&ca, d->path, d->line)) >= 0)
		emit_bound(r, callee, refs_col(st, 1), path, line, col_, sc, refs_col(st, 6),
			   sqlite3_column_int64(st, 7), how, &ca, def);
	cands_release(&ca);
	return def >= 0;
}

/*
 * callers <name>: the calls that bind (bind_ref()) to a definition of name
 * (Class.method, module.func narrow it as for defs).  callees <name>: the calls
 * inside those definitions, each with the definition it binds to, if any.
 */
int refs_calls(struct refs *r, const char *q, int callees)
{
	char *scope, *name;
	struct cands c;
	sqlite3_stmt *st, *imp;
	int *target, any = 0, found = 0;
	struct refs_world w;
	struct rs_text text = { NULL, 0, NULL, 0, 0 };
	char *text_path = NULL;

	refs_world_init(&w, r);
	refs_split_qualified(q, &scope, &name);
	cands_load(r, &c, name);
	target = xcalloc(c.nr + 1, sizeof(*target));
	for (size_t i = 0; i < c.nr; i++)
		any |= target[i] = refs_qualifier_matches(scope, c.scopes[i], c.paths[i]) && refs_path_ok(r, c.paths[i]);
	if (!any) {
		error("no definition of '%s' in the index", q);
		goto done;
	}
	imp = refs_prep(r, "SELECT 1 FROM imports WHERE path = ?1 AND resolved = ?2 LIMIT 1");
	if (!callees) {
		st = refs_prep(r, "SELECT r.kind, f.path, r.line, r.col, r.scope, b.lang, b.id, r.recv FROM refs r "
			  "JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
			  "WHERE r.name = ?1 AND " CALL_KINDS " ORDER BY f.path, r.line, r.col");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
			const char *path = refs_col(st, 1), *sc = refs_col(st, 4);
			enum bind_how how;
			long def;

			def = bind_one(r, &w, &c, imp, name, refs_col(st, 0), path, sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : sc,
				       sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
				       (enum bind_recv)sqlite3_column_int(st, 7), &how);
			if (def < 0 || !target[def])
				continue;	/* a namesake's call, or one that reaches nothing known */
			emit_bound(r, name, refs_col(st, 0), path, sqlite3_column_int64(st, 2),
				   sqlite3_column_int64(st, 3), sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : sc,
				   refs_col(st, 5), sqlite3_column_int64(st, 6), how, &c, def);
			found++;
		}
		sqlite3_finalize(st);
		found += alias_callers(r, &w, &c, target, name, &js_alias_lang);
		found += alias_callers(r, &w, &c, target, name, &py_alias_lang);
	} else {
		st = refs_prep(r, "SELECT r.name, r.kind, f.path, r.line, r.col, r.scope, b.lang, b.id, r.recv FROM refs r "
			  "JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
			  "WHERE f.path = ?1 AND r.line BETWEEN ?2 AND ?3 AND " CALL_KINDS " "
			  "ORDER BY r.line, r.col");
		for (size_t i = 0; i < c.nr && r->emitted < r->o.limit; i++) {
			if (!target[i])
				continue;
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, c.paths[i], -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 2, c.lines[i]);
			sqlite3_bind_int64(st, 3, c.ends[i]);
			while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
				const char *sc = sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : refs_col(st, 5);
				char *callee = xstrdup(refs_col(st, 0));
				struct cands cc;
				enum bind_how how;
				long def;

				cands_load(r, &cc, callee);
				cc.text = text, cc.text_path = text_path;	/* the file's lines, read once */
				def = bind_one(r, &w, &cc, imp, callee, refs_col(st, 1), refs_col(st, 2), sc, sqlite3_column_int64(st, 3),
					       sqlite3_column_int64(st, 4), (enum bind_recv)sqlite3_column_int(st, 8), &how);
				if (def < 0 && (js_alias_callee(r, &w, callee, st) || py_alias_callee(r, &w, callee, st)))
					;	/* a function imported, or assigned, under another name */
				else
					emit_bound(r, callee, refs_col(st, 1), refs_col(st, 2), sqlite3_column_int64(st, 3),
						   sqlite3_column_int64(st, 4), sc, refs_col(st, 6),
						   sqlite3_column_int64(st, 7), how, &cc, def);
				text = cc.text, text_path = cc.text_path;
				memset(&cc.text, 0, sizeof(cc.text));
				cc.text_path = NULL;
				cands_release(&cc);
				free(callee);
				found++;
			}
		}
		sqlite3_finalize(st);
	}
	sqlite3_finalize(imp);
	if (!found)
		error("no %s of '%s' in the index", callees ? "callees" : "callers", q);
done:
	for (long l = 0; l < text.lines_nr; l++)
		free(text.lines[l]);
	free(text.lines);
	free(text_path);
	free(target);
	cands_release(&c);
	refs_world_release(&w);
	free(scope);
	free(name);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* A reference's binding for occurrence records (refs.h). */
struct refs_binder {
	struct refs *r;
	struct refs_world w;
	struct cands c;		/* the definitions of the name */
	sqlite3_stmt *imp;
	char *name;
};

struct refs_binder *refs_binder_new(struct refs *r, const char *name)
{
	struct refs_binder *b = xcalloc(1, sizeof(*b));

	b->r = r;
	b->name = xstrdup(name);
	refs_world_init(&b->w, r);
	cands_load(r, &b->c, name);
	b->imp = refs_prep(r, "SELECT 1 FROM imports WHERE path = ?1 AND resolved = ?2 LIMIT 1");
	return b;
}

long refs_binder_bind(struct refs_binder *b, const char *path, const char *scope, long line, long col_,
		      enum bind_recv recv, enum bind_how *how, const char **def_path)
{
	long def = bind_one(b->r, &b->w, &b->c, b->imp, b->name, "call", path, scope, line, col_, recv, how);

	if (def < 0) {
		*how = BIND_NONE;
		return 0;
	}
	*def_path = b->c.paths[def];
	return b->c.lines[def];
}

void refs_binder_free(struct refs_binder *b)
{
	if (!b)
		return;
	sqlite3_finalize(b->imp);
	cands_release(&b->c);
	refs_world_release(&b->w);
	free(b->name);
	free(b);
}

/* TS/JS calls of any name, bound as callers/callees bind them (refs.h). */
struct jsb_name {
	char *name;
	struct cands c;
};

struct refs_jsbind {
	struct refs *r;
	struct refs_world *w;	/* not owned */
	struct jsb_name *names;	/* the candidates of each name met (cands_load()) */
	size_t names_nr, names_alloc;
	size_t *slots;		/* names hashed: 1 + its index into names, 0 when empty */
	size_t slots_mask;	/* slots - 1, a power of two less one (0: none yet) */
	struct rs_text text;	/* the lines of text_path, lent to the candidates in turn */
	char *text_path;
	sqlite3_stmt *imp;
};

struct refs_jsbind *refs_jsbind_new(struct refs *r, struct refs_world *w)
{
	struct refs_jsbind *b = xcalloc(1, sizeof(*b));

	b->r = r;
	b->w = w;
	b->imp = refs_prep(r, "SELECT 1 FROM imports WHERE path = ?1 AND resolved = ?2 LIMIT 1");
	return b;
}

static size_t jsb_hash(const char *s)
{
	size_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The slot of name in b->slots: its own, or the empty one where it goes. */
static size_t *jsb_slot(struct refs_jsbind *b, const char *name)
{
	size_t j = jsb_hash(name) & b->slots_mask;

	while (b->slots[j] && strcmp(b->names[b->slots[j] - 1].name, name))
		j = (j + 1) & b->slots_mask;
	return &b->slots[j];
}

/* The slots grown to four times the names (a whole graph's names: callers
 * met a few, cgraph.c's whole-index load meets every one). */
static void jsb_rehash(struct refs_jsbind *b)
{
	size_t n = 64;

	while (n < 4 * (b->names_nr + 1))
		n *= 2;
	if (b->slots_mask + 1 >= n && b->slots)
		return;
	free(b->slots);
	b->slots = xcalloc(n, sizeof(*b->slots));
	b->slots_mask = n - 1;
	for (size_t i = 0; i < b->names_nr; i++)
		*jsb_slot(b, b->names[i].name) = i + 1;
}

/* The candidates of name (cached), lent the binder's text (valid until the next call). */
static struct jsb_name *jsb_cands(struct refs_jsbind *b, const char *name)
{
	struct jsb_name *n;
	size_t *slot;

	jsb_rehash(b);
	slot = jsb_slot(b, name);
	if (*slot) {
		n = &b->names[*slot - 1];
	} else {
		ALLOC_GROW(b->names, b->names_nr + 1, b->names_alloc);
		n = &b->names[b->names_nr++];
		n->name = xstrdup(name);
		cands_load(b->r, &n->c, name);
		*slot = b->names_nr;
	}
	n->c.text = b->text;
	n->c.text_path = b->text_path;
	return n;
}

/* Take the text back from c (cands_for_file() may have read another file's). */
static void jsb_return(struct refs_jsbind *b, struct cands *c)
{
	b->text = c->text;
	b->text_path = c->text_path;
	memset(&c->text, 0, sizeof(c->text));
	c->text_path = NULL;
}

int refs_jsbind_call(struct refs_jsbind *b, const char *name, const char *kind, const char *path, const char *scope,
		     long line, long col_, enum bind_recv recv, int follow, enum bind_how *how, const char **def_name,
		     const char **def_path, long *def_line)
{
	struct jsb_name *n = NULL;
	long def = -1;
	char ns[128];
	struct js_class o;

	*how = BIND_NONE;
	if (follow != REFS_JS_ORIGIN) {
		n = jsb_cands(b, name);
		def = bind_one(b->r, b->w, &n->c, b->imp, name, kind, path, scope, line, col_, recv, how);
		jsb_return(b, &n->c);
	}
	if (def < 0 && follow != REFS_JS_BIND &&
	    js_call_ns(b->w, kind, path, line, col_, recv, ns, sizeof(ns)) &&
	    js_origin(b->w->js, path, ns[0] ? ns : NULL, name, &o) && strcmp(o.name, name)) {
		/* a name imported under another name: what it names (alias_callers(), js_alias_callee()) */
		n = jsb_cands(b, o.name);
		jsb_return(b, &n->c);
		def = js_module_def(&n->c, NULL, o.path, kind);
		*how = def >= 0 ? BIND_IMPORT : BIND_NONE;
	}
	if (def < 0) {
		*how = BIND_NONE;
		return 0;
	}
	*def_name = n->name;
	*def_path = n->c.paths[def];
	*def_line = n->c.lines[def];
	return 1;
}

void refs_jsbind_free(struct refs_jsbind *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->names_nr; i++) {
		cands_release(&b->names[i].c);
		free(b->names[i].name);
	}
	free(b->names);
	free(b->slots);
	for (long l = 0; l < b->text.lines_nr; l++)
		free(b->text.lines[l]);
	free(b->text.lines);
	free(b->text_path);
	sqlite3_finalize(b->imp);
	free(b);
}
