/*
 * jstype.h: TypeScript/JavaScript names and receivers followed through the
 * text of the indexed files, for ci-refs callers/callees (callgraph.c).
 *
 * Two questions bind.h cannot answer from the candidates of one name:
 * - which definition a name imported under another name means
 *   (`import { create as stringCreate } from './string'`, `export {
 *   stringCreate as string }`, `export * from`, `import * as ns`), and under
 *   which names a definition is reachable elsewhere (for callers of create);
 * - the class of a call's receiver when the text gives it: `new C()`, `x:
 *   C`, `const x = <expression>`, a function's or method's declared return
 *   type (`function f(): C`, `m(): this`), else what its body returns, a
 *   field `this.a = new C()` or `a: C`, a getter `get a(): C` (`this`: the
 *   receiver's class), members inherited from base classes, chained calls
 *   (`f().m().n()`), a variable imported from another module (`import x
 *   from`, its `const x: T` there); on the way, values typed by an
 *   interface or a type alias (`type T = { a: C } & B`, `interface I
 *   extends B { a: C }`): the member's declared type, looked up in the
 *   object type, in each part of an intersection, in the interfaces
 *   extended (not in a union).
 * Everything is read from the import/export statements and declarations of
 * the text, with the index's resolved imports for the specifiers; nothing
 * is guessed by name alone.  State lives in struct js_types (the files read,
 * their statements), made by js_types_new() and passed explicitly.
 */
#ifndef CI_GRAPH_JSTYPE_H
#define CI_GRAPH_JSTYPE_H

#include <stddef.h>

struct refs;
struct js_types;

/* What a struct js_class names: a class (or a definition), an interface, a
 * type alias. */
enum js_kind {
	JS_KIND_CLASS = 0,
	JS_KIND_INTERFACE,
	JS_KIND_TYPE,
};

/* A definition by file and name (module level), or a class (an interface,
 * a type alias: kind) with its lines. */
struct js_class {
	char path[512];
	char name[128];
	long line, end;		/* the class's lines (0 for a definition) */
	enum js_kind kind;	/* a class (and any definition), an interface, a type alias */
};

/* A context over the index r (kept, not owned).  Cannot fail. */
struct js_types *js_types_new(struct refs *r);
void js_types_free(struct js_types *t);

/*
 * The module-level definition that name means in the file path, following
 * imports, aliases and re-exports (up to 8 files deep); with ns, name is a
 * member of ns (`ns.name()`, ns an `import * as ns`).  A name the file
 * defines itself and imports from nowhere is that file's.  1 and *out set,
 * or 0 when not known (a package outside the index, no such name).
 */
int js_origin(struct js_types *t, const char *path, const char *ns, const char *name, struct js_class *out);

/*
 * The other names under which the module-level definition name of path is
 * imported or re-exported by the files that import path, directly or
 * through re-exporting files (`import { name as a }`, `export { a as b }`,
 * a default export's local names, `export * from`): a superset to check
 * with js_origin().  *names (each and the array malloc'd, the caller frees)
 * holds *nr of them, without name itself.  The walk follows at most 256
 * (file, name) pairs and 512 importers a file; past those it warns on stderr,
 * once for t, that calls under further names may be missing.
 */
void js_aliases(struct js_types *t, const char *path, const char *name, char ***names, size_t *nr);

/*
 * The class of the receiver of the call whose name starts at (line, col),
 * 1-based, in the file path, the call enclosed by scope (`C.m`, or NULL):
 * x.f(), a.b.f(), g().f(), new C().f(), this.a.f(), chains over several
 * lines.  1 and *out set (a class of the index), 0 when not known or not a
 * class (an interface's or a type alias's signature has no body).
 */
int js_receiver(struct js_types *t, const char *path, const char *scope, long line, long col,
		struct js_class *out);

/* js_receiver()'s type of the receiver, whichever its kind: a class, an
 * interface, a type alias. */
int js_receiver_type(struct js_types *t, const char *path, const char *scope, long line, long col,
		     struct js_class *out);

/*
 * The function or class that the member name of the interface or type alias
 * ty is where it is declared `name: typeof f` (in ty's object type, a part
 * of its intersection, an interface it extends): f's module-level
 * definition, followed through imports (`import type` too) as js_origin()
 * does.  1 and *out set, 0 otherwise (ty a class, another member).
 */
int js_member_typeof(struct js_types *t, const struct js_class *ty, const char *name, struct js_class *out);

/*
 * The base class of cls (`class cls extends B`), resolved like a type name
 * of cls's file.  1 and *out set, 0 if none known.
 */
int js_base(struct js_types *t, const struct js_class *cls, struct js_class *out);

/* 1 if an interface named name in the file path spans line (an interface
 * merged with the class name declares what is there). */
int js_in_interface(struct js_types *t, const char *path, const char *name, long line);

/* How the file path imports name (as a value, under that local name). */
enum js_import_how {
	JS_IMPORT_NO_MODULE = -1,	/* the file has no import statement (maybe a script: globals) */
	JS_IMPORT_NONE = 0,		/* a module that does not import name */
	JS_IMPORT_SAME,			/* `import { name } from` a file of the index */
	JS_IMPORT_RENAMED,		/* `import name from`, `{ a as name }`, `* as name`: from a file */
	JS_IMPORT_OUTSIDE,		/* from a specifier no file of the index answers (a package) */
};
int js_imports_name(struct js_types *t, const char *path, const char *name);

/* 1 if a function nested in scope (a def of kind function whose scope is
 * scope, spanning line in path) that has a `this` of its own encloses line:
 * `function`, an object literal's method `m(v) { ... }`, not an arrow
 * function; `this` there is not scope's class. */
int js_this_rebound(struct js_types *t, const char *path, const char *scope, long line);

/* The name of the receiver variable of the call at (line, col) of path, `ns`
 * of `ns.f()` (an identifier alone before the dot), copied to out; 0 if none. */
int js_receiver_name(struct js_types *t, const char *path, long line, long col, char *out, size_t n);

/*
 * The class whose method name a bare call name() in path reaches where name
 * is a module-level variable (of path, or imported from another file under
 * its own name) set to a method of a value of a known class: `export const
 * name = x.name.bind(x)`, `= x.name` (comments aside, x typed as
 * js_receiver() types it), not declared with a type (`const name: T =`, T
 * an interface's call signature).  1 and *out set (the class), 0 otherwise.
 */
int js_bound_method(struct js_types *t, const char *path, const char *name, struct js_class *out);

#endif
