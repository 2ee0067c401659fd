/*
 * resolve.h: which definition a Python call reaches, read from the text of
 * the files the way a reader without a type checker does (bind.h ranks by
 * file and scope only; this follows names).
 *
 * The rules, best first:
 *   - a parameter or local variable of the enclosing function named like the
 *     call shadows every definition (no binding);
 *   - f(): a function nested in the caller, else the file's own module-level
 *     f (local), else a name imported into the file, `from m import f as g`,
 *     followed through the re-exports of m (import);  Foo() reaches class Foo;
 *   - self.f(), cls.f(): the enclosing class's f (member), else the first f
 *     along its bases defined in the repository (inherited); super().f(): the
 *     bases' f only (inherited);
 *   - mod.f(), pkg.mod.f(): f of the module's file (import); Foo.f(): Foo's
 *     method (member);
 *   - a module-level alias by assignment, `ib = attr = attrib`, `s = mod.f`
 *     (the value a plain or dotted name): ib(), mod.ib(), an imported ib()
 *     reach the function or class the value names, followed a few hops
 *     (local in its own file, else import); a name assigned more than once
 *     at module level, or also imported, is not followed; callers of the
 *     function find such names a few imports away (resolve_alias_names());
 *   - x.f() where x is a local assigned x = Foo(...), a parameter annotated
 *     x: Foo (Optional[Foo], "Foo", Foo | None), or self.x assigned
 *     self.x = Foo(...) in the class: Foo's f along its bases (receiver);
 *     also x = obj() through obj's class's __call__ -> Foo, `with K() as x`
 *     through K.__enter__ -> Foo (else K), `for x in xs` where xs is
 *     self.xs, a local or parameter annotated list[Foo] (Sequence, Iterator,
 *     tuple[Foo, ...], ...) or a call returning one;
 *   - attributes, along the class's bases: self.a.f(), self.a.b.f() and
 *     obj.a.f() (obj of known class) through a's class: an @property's
 *     return annotation, `a: Foo` in the class body, self.a: Foo,
 *     self.a = Foo(...), or self.a = param with param annotated in the method;
 *   - anything else (an unknown receiver) binds to nothing: by name only.
 *
 * The world is reached through two callbacks (the definitions of a name, the
 * text and imports of a file), so callers/callees (SQL, a few files) and the
 * whole call graph (in memory) share the rules; files are read once each.
 */
#ifndef CI_GRAPH_RESOLVE_H
#define CI_GRAPH_RESOLVE_H

#include <stddef.h>

#include "graph/bind.h"

/* A definition, as the world gives it. */
struct rs_def {
	const char *name, *kind, *path, *scope;	/* scope NULL at module level */
	long line, end_line;
};

/* An import row of a file (the index's imports table). */
struct rs_import {
	char *target;		/* as written: "._auth", "os.path" */
	char *resolved;		/* a file of the repository, or NULL */
	long line;
};

/* The text of a file, filled by the world's file callback (owned by the resolver afterwards). */
struct rs_text {
	char **lines;		/* lines_nr lines, an entry may be NULL */
	long lines_nr;
	struct rs_import *imps;
	size_t imps_nr;
	int python;		/* 1: the rules apply */
};

struct rs_ops {
	/* Every definition named name: *out points to n of them, valid as long
	 * as the resolver lives. */
	size_t (*named)(void *ctx, const char *name, const struct rs_def **out);
	/* Fill t with the text of path; return 0 when the file is not known. */
	int (*file)(void *ctx, const char *path, struct rs_text *t);
	/* The files that import path, into *out (n of them, malloc'ed, the
	 * caller frees); may be NULL (resolve_alias_names() then reads path only). */
	size_t (*importers)(void *ctx, const char *path, char ***out);
};

struct rs_env;

struct resolver {
	const struct rs_ops *ops;
	void *ctx;
	struct rs_env **envs;	/* files read, hashed by path */
	size_t envs_mask, envs_nr;
	int depth;		/* value expressions being typed, nested */
	int alias_bounded;	/* resolve_alias_names() stopped at its bound: warned once */
};

void resolver_init(struct resolver *rs, const struct rs_ops *ops, void *ctx);
void resolver_release(struct resolver *rs);

/* 1 if the rules apply to the file at path (a Python file the world knows). */
int resolver_applies(struct resolver *rs, const char *path);

/*
 * The definition the call of name at (line, col) (1-based, col the byte of
 * the name) of file path, inside scope (its enclosing unit's qualified name,
 * or NULL), reaches, with *how set (BIND_MEMBER, BIND_LOCAL, BIND_IMPORT,
 * BIND_RECEIVER, BIND_INHERITED); one of the world's named() answers, of
 * name or, through an alias (from m import f as g; g()), of another name.
 * NULL with *how = BIND_NONE when no rule binds it (an unknown receiver, a
 * shadowing local, a name from outside the repository).  Cannot fail.
 */
const struct rs_def *resolve_call(struct resolver *rs, const char *path, const char *scope, long line, long col,
				  const char *name, enum bind_how *how);

/*
 * The module-level names file path binds to name of file from (from may be
 * path itself): `from <from> import name as x` (x, name itself when not
 * renamed, also through `import *`) where path is not from, and assignments
 * whose value ends in name (`ib = attr = name`, `s = mod.name`), each
 * assigned once; *out (n of them, malloc'ed, the caller frees) may hold a
 * name whose value names another name's definition: resolve_call() decides.
 */
size_t resolve_aliases(struct resolver *rs, const char *path, const char *from, const char *name, char ***out);

/*
 * The other names under which name, defined at module level in path, may be
 * called: resolve_aliases() of path and of each file that imports it
 * (ops->importers; without it, path's own), then of those names in turn
 * through the files that import theirs, a few levels (b.py `from a import f;
 * g = f`, c.py `from b import g as h`: "g", "h"; a name imported under its
 * own name is followed further only out of a package's __init__.py, a
 * re-export, not out of a module that uses it).  *out (n of them, in the
 * order met, malloc'ed) leaves name out; a call of one reaches the
 * definition only where resolve_call() says so.
 */
size_t resolve_alias_names(struct resolver *rs, const char *path, const char *name, char ***out);

#endif
