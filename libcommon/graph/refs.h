/*
 * refs.h: symbol and reference queries on the index, and the import graph's
 * questions (deps, cycles, impact, callers and callees): the engine of ci-refs.
 *
 * A query is a struct refs: the index, the filters, and the stream records go
 * to; one process may run several, one after another or side by side.  Each
 * refs_*() query writes its NDJSON records (one fwrite per record, stopping at
 * the limit), says on stderr why nothing was found, and returns EXIT_OK,
 * EXIT_NOTHING, or EXIT_USAGE (impact --mode semantic without vectors).
 *
 * Files: refs.c (the context, defs/refs/symbols/search/deps), callgraph.c
 * (callers, callees: references bound by bind.h), cycles.c (the import graph
 * from the index, its cycles), impact.c (the signals of impact and their
 * ranking), over digraph.h (the graph algorithms, without the index).
 */
#ifndef CI_GRAPH_REFS_H
#define CI_GRAPH_REFS_H

#include "core/buf.h"
#include "graph/digraph.h"
#include "graph/resolve.h"

#include <stdio.h>
#include <sqlite3.h>

struct ci_index;

/* The signals of impact, as bits of refs_opts.mode. */
enum { REFS_M_DEPS = 1, REFS_M_COUPLING = 2, REFS_M_SEMANTIC = 4, REFS_M_ALL = 7 };

/* The filters and knobs of a query. */
struct refs_opts {
	const char *kind;	/* --kind, or NULL */
	const char *path;	/* --path prefix, or NULL */
	const char *lang;	/* --lang, or NULL */
	long limit;		/* at most this many records */
	int reverse, both;	/* deps direction */
	const char *scope;	/* cycles: only files under this path, or NULL */
	int type_imports;	/* cycles: count imports under TYPE_CHECKING too */
	int by_name;		/* callers, callees: Python calls no rule binds bind by name too */
	long depth;		/* impact: reverse import levels; trace: calls at most */
	unsigned mode;		/* impact: REFS_M_* */
};

/* A query on one index. */
struct refs {
	struct ci_index *ix;	/* the index, not owned */
	sqlite3 *db;		/* its database */
	struct refs_opts o;	/* filters */
	FILE *fp;		/* where records go */
	struct buf out;		/* the record being written */
	long emitted;		/* records written so far */
	sqlite3_stmt *line_st;	/* line_text()'s statement, prepared on first use */
};

/* resolve.h's world read from the index (rsworld.c): definitions by name
 * (cached), files' lines and imports. */
struct rw_name;
struct js_types;
struct refs_world {
	struct refs *r;
	struct resolver rs;	/* its resolver */
	struct rw_name *names;	/* cached definitions by name */
	struct js_types *js;	/* TS/JS imports and receivers (jstype.h) */
	size_t names_nr, names_alloc;
	sqlite3_stmt *by_st;	/* a file's importers, prepared on first use */
};
void refs_world_init(struct refs_world *w, struct refs *r);
void refs_world_release(struct refs_world *w);
/* The lines and import rows of the indexed file path (python set for Python
 * files; lines only for them); 0 when the index has no such file. */
int refs_file_text(struct refs *r, const char *path, struct rs_text *t);
/* The lines of the indexed file path, whatever its language (no import rows,
 * python left 0); 0 when the index has no such file. */
int refs_file_lines(struct refs *r, const char *path, struct rs_text *t);

/* The binding of each call reference of one name (callgraph.c): the
 * definition's line (its path in *def_path, valid until the binder is freed)
 * of the call at (line, col_) made on recv (refs.recv), and *how, or 0 with *how = BIND_NONE.  As callers does (--by-name too). */
struct refs_binder;
struct refs_binder *refs_binder_new(struct refs *r, const char *name);
long refs_binder_bind(struct refs_binder *b, const char *path, const char *scope, long line, long col_,
		      enum bind_recv recv, enum bind_how *how, const char **def_path);
void refs_binder_free(struct refs_binder *b);

/* TS/JS calls of any name bound as callers/callees bind them (callgraph.c:
 * the text's rules of jstype.h), for the walks to --depth levels (callwalk.c),
 * over the world w (kept, not owned): the call of name (kind "call", or
 * "class": new C()) at (line, col_) of the TS/JS file path, made on recv,
 * enclosed by scope.  follow: REFS_JS_BIND binds it as callers of name does;
 * REFS_JS_ORIGIN only follows name, imported or re-exported under another
 * name, to the module-level definition it names (as callers of that one
 * does); REFS_JS_BOTH the first, else the second (as callees does).  1 with
 * the definition's name, path (valid until the binder is freed), line and
 * *how; 0 with *how = BIND_NONE. */
enum { REFS_JS_BIND, REFS_JS_ORIGIN, REFS_JS_BOTH };
struct refs_jsbind;
struct refs_jsbind *refs_jsbind_new(struct refs *r, struct refs_world *w);
int refs_jsbind_call(struct refs_jsbind *b, const char *name, const char *kind, const char *path, const char *scope,
		     long line, long col_, enum bind_recv recv, int follow, enum bind_how *how, const char **def_name,
		     const char **def_path, long *def_line);
void refs_jsbind_free(struct refs_jsbind *b);

/* Start a query on ix (not owned) writing to fp.  Cannot fail. */
void refs_init(struct refs *r, struct ci_index *ix, const struct refs_opts *o, FILE *fp);
void refs_release(struct refs *r);

/* defs / refs / occurrences of a name ("Class.method", "module.func" narrow it). */
int refs_occurrences(struct refs *r, const char *q, int want_defs, int want_refs, int want_imports);
/* What a file (named as the user did) defines. */
int refs_symbols(struct refs *r, const char *arg);
/* Symbols by name: exact, then prefix, then fuzzy. */
int refs_search(struct refs *r, const char *q);
/* The files a file imports, or that import it (o.reverse, o.both). */
int refs_deps(struct refs *r, const char *arg);
/* callers (callees == 0) or callees of a name, each with how it binds. */
int refs_calls(struct refs *r, const char *q, int callees);
/* Import cycles (strongly connected components), in order of their first file. */
int refs_cycles(struct refs *r);
/* What a change to file[:symbol] may affect, by the signals of o.mode. */
int refs_impact(struct refs *r, const char *arg);

/* Fuzzy score of name against q (case-insensitive): 0 when q is not a
 * subsequence of name; higher for contiguous, early matches.  Cannot fail. */
double refs_fuzzy_score(const char *q, const char *name);

/* Split "A.B.name" or "A::B::name" into scope "A.B" (NULL if none) and name,
 * both malloc'ed; "list.h" is a file, not a scope and a name. */
void refs_split_qualified(const char *q, char **scope, char **name);

/* The impact signals of one file, and its combined score (impact.c). */
struct impact_hit {
	double imp, ref, cpl, sem, call;	/* signals, 0-1 (call: a symbol's) */
	int depth;		/* import distance, 0 if none */
	int call_depth;		/* a symbol's: calls from this file to it, 0 if none */
	long refs;		/* references counted */
	long co_changes;	/* from coupling */
};

/* One ranked file of impact. */
struct impact_rank {
	int v;			/* node */
	double s;		/* score */
};

/* The combined score of a hit under mode (REFS_M_*): one signal asked for,
 * its value; else the chance that at least one of them is right. */
double impact_score(const struct impact_hit *h, unsigned mode);

/*
 * Order r[0..nr) by score, then name; for a symbol (sym_first), its callers
 * first (a direct caller before a caller's caller), then the other files
 * that reference it, then the rest: an importer that never uses it never
 * outranks one that does.  Stable and deterministic.
 */
void impact_order(struct impact_rank *r, size_t nr, const struct impact_hit *h,
		  char *const *names, int sym_first);

/* Does kind fall under the wanted kind or its group ("function": method,
 * constructor, macro...)?  want NULL matches everything.  Cannot fail. */
int refs_kind_matches(const char *want, const char *kind);

/* Internal to refs.c, callgraph.c, cycles.c, impact.c. */
sqlite3_stmt *refs_prep(struct refs *r, const char *sql);

/* One read transaction over several queries (what a stored answer's stamp
 * vouches for is read with it): 1 when begun here, 0 when one was open
 * already or none could be begun; refs_read_end() ends what this began. */
int refs_read_begin(struct refs *r);
void refs_read_end(struct refs *r, int txn);
void refs_flush(struct refs *r);
int refs_path_ok(const struct refs *r, const char *path);
char *refs_file_arg(struct refs *r, const char *arg);
char *refs_line_text(struct refs *r, sqlite3_int64 blob_id, long line);
char *refs_snippet(struct refs *r, sqlite3_int64 blob_id, long line);
int refs_qualifier_matches(const char *want, const char *scope, const char *path);
void refs_load_graph(struct refs *r, struct digraph *g, const char *scope, int type_only);
#define refs_col(st, i) ((const char *)sqlite3_column_text((st), (i)))

#endif
