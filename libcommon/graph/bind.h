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

/*
 * C (a call in a .c or .h file): the definition with a body that the call
 * bound by bind_ref() to defs[def] reaches (the tags take a prototype for a
 * definition).  A call through a struct field, x.f() or p->f() (recv, as
 * bind_receiver() reads it, not RECV_BARE or RECV_UNKNOWN), calls a
 * function pointer: -1 with *how = BIND_NONE.  In a file, a forward
 * declaration `static int f(void);` and the function are candidates of one
 * scope: the function is the one whose span (lines[i]..ends[i]) is the
 * longest, the later on a tie.  defs[def] in the call's own file: that file's
 * function.  defs[def] in a header, and the candidates of its scope in C
 * source files all in one file: that file's function (the one the prototype
 * declares).  def < 0 and the candidates in headers or in one C source file:
 * that file's function, with *how = BIND_NAME.  Anything else: def, *how
 * kept.  Cannot fail.
 */
long bind_c_body(enum bind_how *how, const char *path, enum bind_recv recv,
		 const struct bind_def *defs, const long *lines, const long *ends, size_t nr, long def);

/*
 * TypeScript/JavaScript (a call in a .ts .tsx .mts .cts .js .jsx .mjs .cjs
 * file), the call at line of the file path in scope, defs[i] of kind kinds[i]
 * at lines[i], reach[i] set when path's imports reach defs[i]'s file in a few
 * steps (through re-exporting index files).  x.f() on an unknown receiver
 * (recv RECV_OTHER) that bind_ref() bound only by name or as a member (a
 * function nested in one enclosing the call: the scopes of JS are functions
 * as well as classes) binds to nothing, as in Python: a type checker would
 * need x's type.  A bare f(): the function of the same file nested in a
 * function enclosing the call (the innermost, the nearest above on a tie),
 * as a local; else, where bind_ref() found no local or import and the file
 * has no function of that name, the only module-level function of a file the
 * imports reach, as an import.  A TypeScript function's or class method's
 * overload signatures (definitions of one kind, file and scope, each within
 * 30 lines of the one before) stand for their implementation, the last.  Returns
 * the definition, or -1 with *how = BIND_NONE; def when no rule applies.
 * Cannot fail.
 */
/* 1 if path is a TypeScript/JavaScript file (bind_js() applies). */
int bind_is_js(const char *path);

long bind_js(enum bind_how *how, const char *path, const char *scope, long line, enum bind_recv recv,
	     const struct bind_def *defs, const char *const *kinds, const long *lines, const int *reach,
	     size_t nr, long def);

/*
 * 1 if a declaration at line def of a file (text[0..text_nr), a NULL entry
 * unknown) is in scope at line from, by indentation: a declaration at the
 * left margin is seen everywhere; an indented one only where no line between
 * the two (from included) is indented less, i.e. in its block.
 */
int bind_js_visible(const char *const *text, long text_nr, long def, long from);

/* The identifier just before the '.' (or '?.') before col (1-based) of line s:
 * x of `x.f(` and `x?.f(`, not of `a.x.f(` or `g().f(`; copied to out (n bytes
 * at most).  1 when there is one, else 0. */
int bind_js_receiver_var(const char *s, long col, char *out, size_t n);

/* 1 if the receiver of the call whose name starts at col (1-based) of the
 * line s is a literal: a regular expression (`/a+/i.test()`, where an
 * operand may start), a string or template (`'a'.f()`), `{}`; its method is
 * the language's own, never the repository's. */
int bind_js_literal_receiver(const char *s, long col);

/*
 * The line of the nearest (above first) declaration of name as a variable
 * (const/let/var name, or a binding of a destructuring `const { a, name } =`)
 * in scope at line from (bind_js_visible()), leaving out the lines
 * skip[0..skip_nr) (the file's functions of that name); 0 if none.
 */
long bind_js_variable(const char *const *text, long text_nr, const char *name, long from,
		      const long *skip, size_t skip_nr);

/*
 * The line of the nearest object literal `const var = {` in scope at line
 * from whose members include name as a shorthand (`{ a, name }`, a member a
 * line too); 0 if none.
 */
long bind_js_shorthand(const char *const *text, long text_nr, const char *var, const char *name, long from);

/* The call's file and name, for bind_js_call(). */
struct bind_js_file {
	const char *const *text;	/* its lines, text_nr of them (an entry may be NULL) */
	long text_nr;
	const char *name;		/* the name called */
	long col;			/* the column (1-based) of the name on the call's line, 0 unknown */
};

/*
 * The class the text gives the variable var in scope at line from (the
 * nearest declaration, bind_js_visible()): `const var = new C(`, `var: C`
 * after const/let/var or in a parameter list; C copied to cls (n bytes at
 * most).  0 if none.
 */
int bind_js_var_class(const char *const *text, long text_nr, const char *var, long from, char *cls, size_t n);

/*
 * A TS/JS call as bind_ref() then bind_js() bind it, over the candidates the
 * call can reach at all (declared[i]: 1; 0 for an object's property,
 * TAGTEXT_PROPERTY; 2 for a function assigned to a member, `o.f = ...`,
 * TAGTEXT_ASSIGNED; -1 for a signature in a type or an interface, never (-2
 * where it lies within the type's or interface's lines: x.f() with x: I
 * binds to nothing, not to that signature);
 * an interface or a type itself, never: `new C()` with an interface C merged
 * with class C reaches the class): a bare f() reaches no object property (declared 0) and, in its own file,
 * only a function in scope (bind_js_visible()); x.f() reaches no function
 * declared inside another (a local of it, not a property), nor a
 * function assigned to a member inside another (o.f = ... at run time);
 * x.f() where the text types x (bind_js_var_class(): x = new C(), x: C)
 * reaches C's method f of the call's file or of a file its imports reach
 * (an overloaded f: its implementation), as a receiver; x.f() on another
 * receiver, bound to an imported file's method, binds to nothing where a
 * method f of another class is in a file the imports reach (x's type would
 * tell which); this.f() or super.f() that finds no f in its class reaches the
 * f of the class's base (`class A extends B<T>`, B of the file, whose own
 * base is followed, or of a file the imports reach), as inherited; x.f() with `const x = { f, ... }` (bind_js_shorthand()) is
 * bound as a bare f() at that line.  Then a bare f():
 * another file's function bound by name only, where the imports do not
 * reach it, is none (the name alone binds only where the imports reach one
 * definition); another file's function where the file declares f as a
 * variable in scope (bind_js_variable()), or the file's function where such
 * a variable is nearer, is none (f() calls the variable's value).  Returns
 * the index in defs, or -1 with *how = BIND_NONE.  Cannot fail.
 */
long bind_js_call(enum bind_how *how, const char *path, const char *scope, long line, enum bind_recv recv,
		  const struct bind_def *defs, const char *const *kinds, const long *lines, const int *reach,
		  const int *declared, size_t nr, const struct bind_js_file *f);

#endif
