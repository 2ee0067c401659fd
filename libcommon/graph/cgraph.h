/*
 * cgraph.h: the bound call graph of a whole index, in memory, and the
 * questions asked of it: trace (call paths from one symbol to another), dead
 * (definitions nothing reaches), arch (packages, layering, clusters).
 *
 * Every definition of the index is a node; every call reference is bound to
 * the definition it reaches by bind.h's rules (the same as callers/callees),
 * from the innermost definition that encloses it.  A call that fits several
 * definitions and binds to none is an "ambiguous" use of each one it fits,
 * so dead never reports what such a call may reach; a call that binds as
 * well to several (#ifdef variants of one function) reaches each.  A C or
 * C++ prototype in a header and the functions of that name and scope in
 * source files are one symbol: a call bound to one reaches the others.  With CG_MENTIONS, each
 * file's mentions (stored by the index: index/mentions.h) of the names of
 * definitions outside calls and definitions (a callback passed by name, a
 * name in __all__, an import of it, a C prototype) are read: a mention is a
 * use of every definition of that name.  The text itself is read back only
 * for Python files (the bases of their classes) and TS/JS files: a TS/JS call
 * (and `new C()`) is bound as callers binds it (refs.h's refs_jsbind_call():
 * a name imported or re-exported under another name, `ns.f()`, a receiver's
 * class read from the text), so trace, dead, arch and the stored answers
 * (gstore.h) have depth 1's edges; a `new C()` that binds to nothing stays a
 * reference of every C.
 */
#ifndef CI_GRAPH_CGRAPH_H
#define CI_GRAPH_CGRAPH_H

#include "graph/bind.h"
#include "graph/refs.h"

/* A name: its run in by_name, to the next name's first (cgraph.slots has
 * one past the last, its first the number of definitions). */
struct cg_slot {
	unsigned first;		/* its first definition, into by_name */
	int uses;		/* while loading: its mentions and non-call references, every
				   definition's */
	unsigned name_at;	/* the name (its definitions' one copy; cg_str()) */
};

/* One definition, a node of the call graph (3.4 M on Linux: kept small, 32
 * bytes; lines and counts fit in an int, rowids in 32 bits, cgraph_load()
 * dies on one that does not; its self and namesake calls, which few have,
 * kept apart: cgraph_counts()). */
struct cg_def {
	unsigned name_at, scope_at;	/* its name and scope (cg_name(), cg_scope()): where
				   in cgraph.strs (a name once, each definition of it
				   pointing there); scope_at 0 for no scope */
	unsigned rowid;		/* its row of the defs table */
	int line, end_line;	/* its lines */
	int file;		/* its file, an index into cgraph.files: its path and lang
				   (cg_path(), cg_lang()) */
	unsigned kind:16;	/* an index into cgraph.kinds (cg_kind()) */
	unsigned decorated:1;	/* a line starting with '@' right above it, or C's
				   __attribute__((constructor)) */
	unsigned dynamic:1;	/* its name starts with a string's prefix ("cmd_") */
	unsigned override:1;	/* a method of a Python class with a base the index lacks */
	int uses;		/* what reaches it, summed: bound calls from outside its own
				   body, unbound calls that fit it among others, references of
				   another kind (type, ...) to its name and its name outside
				   calls and definitions, elsewhere (while loading: less its
				   name's references and mentions inside its own body; before
				   that, cgraph.c's index_names(), its name's slot) */
};

/* Calls of a definition that do not reach it (dead's reasons). */
struct cg_counts {
	int self_calls;		/* bound calls from inside its own body */
	int namesake_calls;	/* calls of its name bound to another definition */
};

/* A definition's counts not 0 (on Linux 65 k of 3.4 M): an entry of
 * cgraph.counts, a table hashed by def + 1 (0: an empty entry). */
struct cg_count_entry {
	unsigned def;
	struct cg_counts c;
};

/* A bound call: caller -> callee, at a call site. */
struct cg_call {
	int from, to;		/* definitions (from: -1 at a file's top level) */
	int file;		/* the call site's file, an index into cgraph.files */
	int line, col;		/* the call site */
	enum bind_how how;	/* how it bound */
};

/* A file of the index. */
struct cg_file {
	char *path;		/* relative to the root */
	char *lang;		/* or NULL */
	long main_guard;	/* Python: the line of if __name__ == "__main__", or 0 */
	sqlite3_int64 blob;	/* its blob's id in the index */
};

/* The path, lang (or NULL) and kind of definition d of g. */
#define cg_path(g, d) ((g)->files[(d)->file].path)
#define cg_lang(g, d) ((g)->files[(d)->file].lang)
#define cg_kind(g, d) ((g)->kinds[(d)->kind])
/* The string at a of g's blocks (a: cg_def.name_at, scope_at, not 0); the
 * name and scope (or NULL) of definition d of g. */
#define CG_STR_BITS 20
#define cg_str(g, a) ((const char *)(g)->strs[(a) >> CG_STR_BITS] + ((a) & ((1u << CG_STR_BITS) - 1)))
#define cg_name(g, d) cg_str(g, (d)->name_at)
#define cg_scope(g, d) cg_scope_at(g, (d)->scope_at)

/* A call edge between two files (indexes into cgraph.files, in path order):
 * how many bound calls the file a makes to definitions of file b (a != b). */
struct cg_fedge {
	int a, b;
	long calls;
};

enum { CG_MENTIONS = 1 };	/* flags of cgraph_load() */

/* cgraph_load_edges()'s: a calls b calls times (files, a != b). */
typedef void cg_edge_fn(void *arg, int a, int b, long calls);

struct cgraph {
	struct cg_def *defs;	/* in path, line order */
	size_t defs_nr, defs_alloc;
	int *by_name;		/* definitions grouped by name (in the order the names first
				   come), each name's in definition order */
	struct cg_slot *slots;	/* one per name: where its run of by_name starts */
	size_t slots_nr, slots_alloc;
	unsigned *names;	/* the names hashed: per entry, 0 when empty, else the bits of
				   the name's hash above slots_mask, and its slot + 1 */
	size_t slots_mask;	/* entries - 1, a power of two less one */
	struct cg_call *calls;	/* in caller order after cgraph_load(), then line */
	size_t calls_nr, calls_alloc;
	size_t *out;		/* calls of definition i: calls[out[i] .. out[i + 1]) */
	cg_edge_fn *edge;	/* cgraph_load_edges()'s, while it reads */
	void *edge_arg;
	struct cg_file *files;	/* every file, in path order */
	size_t files_nr, files_alloc;
	char **prefixes;	/* CG_MENTIONS: strings such as "cmd_" (names looked up at run time) */
	size_t prefixes_nr, prefixes_alloc;
	char **kinds;		/* the kinds of definitions, one copy each */
	size_t kinds_nr, kinds_alloc;
	char **strs;		/* the definitions' names and scopes, in blocks of
				   1 << CG_STR_BITS bytes (a longer string alone in one) */
	size_t strs_nr, strs_alloc, strs_used, strs_size;	/* the last block's bytes used, and size */
	unsigned *scopes;	/* the scopes hashed (each once in strs): per entry, 0 when
				   empty, else its address (cg_str()) */
	size_t scopes_nr, scopes_mask;
	struct cg_count_entry *counts;	/* the definitions' counts not 0, hashed (cgraph_counts()) */
	size_t counts_nr, counts_mask;
};

static inline const char *cg_scope_at(const struct cgraph *g, unsigned a)
{
	return a ? cg_str(g, a) : NULL;
}

/* The self and namesake calls of definition d (an index into g->defs). */
struct cg_counts cgraph_counts(const struct cgraph *g, size_t d);

/* The calls of g between files, counted, sorted by (a, b), into *out
 * (owned by the caller); their number. */
size_t cgraph_file_edges(const struct cgraph *g, struct cg_fedge **out);

/* Only the files of the index into g (no definitions, no calls), as
 * cgraph_load() reads them (gstore.h's answers need no more). */
void cgraph_load_files(struct cgraph *g, struct refs *r);

/* Load the whole index's call graph (flags: CG_MENTIONS).  Dies on an SQL
 * error, as refs_prep() does. */
void cgraph_load(struct cgraph *g, struct refs *r, unsigned flags);
/* The same graph without its calls (calls_nr 0, out NULL), what gstore.h
 * stores: each file's calls to other files counted as it is read and given
 * to edge(arg, ...), in cgraph_file_edges()'s order (on Linux, 1.8 M file
 * edges for 4.9 M calls: neither is kept). */
void cgraph_load_edges(struct cgraph *g, struct refs *r, unsigned flags, cg_edge_fn *edge, void *arg);
void cgraph_release(struct cgraph *g);

/*
 * Part of the graph, for graph/gstore.h's incremental path: every file of
 * the index; the definitions of the names that the files paths[0..nr)
 * (strcmp order; those the index lacks are left out) define, reference or
 * mention, and of names[0..names_nr) (sorted), each name with all its
 * definitions; those files read as cgraph_load() reads them (CG_MENTIONS),
 * no other.  What the counts of a definition then hold is what those files
 * contribute (with scan: names' mentions in every other file too).  With
 * prefixes, those are the strings of names looked up at run time (the whole
 * index's), not the files' own.  Dies on an SQL error.
 */
void cgraph_load_part(struct cgraph *g, struct refs *r, const char *const *paths, size_t nr,
		      const char *const *names, size_t names_nr, int scan, const char *const *prefixes,
		      size_t prefixes_nr);

/* The definitions named name: *first into g->by_name, and how many. */
size_t cgraph_named(const struct cgraph *g, const char *name, size_t *first);

/* The index of kind k in g->kinds, added if new (cg_def.kind). */
unsigned cgraph_kind(struct cgraph *g, const char *k);

/* The file index of path, or -1. */
int cgraph_file(const struct cgraph *g, const char *path);

/* callers (callees == 0) or callees of q to r->o.depth levels of calls,
 * each call with its depth (callwalk.c: from the index, not the whole graph;
 * a TS/JS call bound as at depth 1, so the first level is refs_calls()'s
 * answer, less the callees bound to nothing). */
int refs_calls_deep(struct refs *r, const char *q, int callees);

/*
 * Single calls bound from the index, without the whole graph (callwalk.c):
 * the definitions of a name and the files of the calls are read as needed
 * and kept.  callwalk_binds(): the call of name at (line, col) of path
 * made on recv (refs.recv)
 * (whose blob is blob), enclosed by scope, bound as the call graph binds it
 * (in a TS/JS file as callers binds it: refs.h's refs_jsbind, the text's rules):
 * 1 if it reaches a definition for which want(its path, its scope, arg)
 * holds (a C prototype and its function both count), 0 if it reaches only
 * others, -1 if it binds to none.
 */
struct callwalk;
struct callwalk *callwalk_new(struct refs *r);
void callwalk_free(struct callwalk *w);
int callwalk_binds(struct callwalk *w, const char *path, sqlite3_int64 blob, const char *name, const char *scope,
		   long line, long col_, enum bind_recv recv, int (*want)(const char *path, const char *scope, void *arg),
		   void *arg);
/* The transitive callers of the definitions of name in path, to depth levels
 * of calls: fn(the call's file, its depth, arg) for each call, breadth first
 * (depth 1: a call of the definition itself; each caller expanded once); the
 * walk stops after a level that brings the calls to CALLWALK_CALLERS_MAX (a
 * name of the kernel's size keeps impact's latency). */
enum { CALLWALK_CALLERS_MAX = 20000 };
void callwalk_callers(struct callwalk *w, const char *path, const char *name, long depth,
		      void (*fn)(const char *path, long depth, void *arg), void *arg);
/* The calls of name the index holds (refs of kind call, in path, line, col
 * order, as callwalk reads them), read by the caller already: the walk takes
 * them for name rather than read them again (impact reads a symbol's
 * references once).  sites stay the caller's, alive until callwalk_free(). */
struct callwalk_site {
	const char *path, *scope;	/* scope may be NULL */
	sqlite3_int64 blob;
	long line, col;
	enum bind_recv recv;
};
void callwalk_preset(struct callwalk *w, const char *name, const struct callwalk_site *sites, size_t nr);

/* trace <from> <to>: call paths, shortest first, up to r->o.depth calls. */
int refs_trace(struct refs *r, const char *from, const char *to);
/* dead: definitions nothing reaches, entry points left out. */
int refs_dead(struct refs *r);
/* arch: packages, entry points, layering by imports, clusters. */
int refs_arch(struct refs *r);

/* arch's clusters (clusters.c): files grouped by the calls between them
 * (fe[0..fe_nr), cgraph_file_edges()) and their co-changes, one arch_cluster
 * record each (pkg_of: per file, its package in pkgs, -1 for a file left out). */
void arch_clusters(struct refs *r, const struct cgraph *g, const struct cg_fedge *fe, size_t fe_nr,
		   const int *pkg_of, const char *const *pkgs);

/* The reason a definition is an entry point (dead leaves it out), or NULL. */
const char *cgraph_entry_reason(const struct cgraph *g, const struct cg_def *d);

/* 1 if path looks like a test file (tests/, test_x.py, x_test.go, x.spec.ts). */
int cgraph_is_test_path(const char *path);

#endif
