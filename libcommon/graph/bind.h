/*
 * bind.h: which definition a reference reaches, by the rules a reader applies
 * without a type checker.
 *
 * ci-refs callers/callees ask, for a reference named N in file F with
 * enclosing scope S, which of the definitions named N it binds to.  The
 * candidates come from the index; this module only ranks them, so that the
 * rules are one function with a unit test, not SQL spread over a command.
 */
#ifndef CI_GRAPH_BIND_H
#define CI_GRAPH_BIND_H

#include <stddef.h>

#include "parse/tagtext.h"

/* How a reference reached its definition, best first. */
enum bind_how {
	BIND_NONE = 0,		/* no candidate fits: a namesake elsewhere, or unknown */
	BIND_MEMBER,		/* same file, inside the definition's class (self.m()) */
	BIND_LOCAL,		/* same file, a module-level definition */
	BIND_IMPORT,		/* the reference's file imports the definition's file */
	BIND_RECEIVER,		/* x.f() with x's class known (resolve.h) */
	BIND_INHERITED,		/* self.f(), super().f(): a base class's f (resolve.h) */
	BIND_NAME,		/* the only definition of that name in the index */
};

/* enum bind_recv and bind_receiver(): parse/tagtext.h (the index stores a call's receiver). */

/* A candidate definition of the reference's name. */
struct bind_def {
	const char *path;	/* its file */
	const char *scope;	/* its enclosing class or scope, or NULL at module level */
	int imported;		/* the reference's file imports path (resolved import) */
};

/* "member", "local", "import", "receiver", "inherited", "name", or NULL for BIND_NONE. */
const char *bind_how_name(enum bind_how how);

/*
 * The definition among defs[0..nr) that a reference in file path, enclosed by
 * scope (the qualified name of its enclosing unit, "Flask.dispatch" or NULL),
 * made on recv, binds to: a definition of the same file whose class encloses
 * the reference (member), else one of the same file at module level (local),
 * else one in a file the reference's file imports (import), else the only
 * candidate (name).  The receiver narrows the candidates first: a bare call
 * reaches no method, self.f() only the enclosing class's, super().f() never
 * the enclosing class's own, x.f() no function of its own file.  Ties keep
 * the first candidate.  Returns its index and sets *how, or returns -1 with
 * *how = BIND_NONE.  Cannot fail.
 */
/* 1 if a call made on recv in file path, enclosed by scope, can reach d at
 * all (the receiver's narrowing of bind_ref()).  Cannot fail. */
int bind_fits(const char *path, const char *scope, enum bind_recv recv, const struct bind_def *d);

/* How well d alone fits a call made on recv in file path, enclosed by scope:
 * member, local, import, or BIND_NONE (it may fit only by name, or not at
 * all).  bind_ref() picks the first best; this lets a caller see the ties. */
enum bind_how bind_level(const char *path, const char *scope, enum bind_recv recv, const struct bind_def *d);

long bind_ref(enum bind_how *how, const char *path, const char *scope, enum bind_recv recv,
	      const struct bind_def *defs, size_t nr);

#endif
