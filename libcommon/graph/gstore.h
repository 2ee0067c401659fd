/*
 * gstore.h: the whole-index call graph's answers stored in the index, so
 * that dead and arch do not bind every call of the index at each question
 * (on Linux, 4.9 M calls: about 20 s each).
 *
 * ci-index build and update store them once the index is written
 * (gstore_update()): per definition, its uses, self calls and namesake
 * calls and whether it is an entry point (dead's are those with no use and
 * no entry, before its --kind, --path and --lang filters), and the calls
 * between files, counted (arch's edges).  They are derived data, kept in
 * tables of their own (graph_stamp, graph_base, graph_session, graph_files,
 * graph_defs, graph_calls, graph_prefixes) that the schema does not list:
 * an index without them is answered as before, from the whole graph.
 * Triggers on the tables they derive from (files, blobs, defs, refs,
 * mentions, imports) empty graph_stamp on any write, so a change by any
 * writer (a ci-index of an older version, a server's update) leaves the
 * stored answers unused until the next gstore_update(); the stamp holds
 * GSTORE_VERSION, the rules they were computed by.  Computed with the
 * default binding (no --by-name): a query with --by-name binds anew.
 *
 * Incremental path (gsdelta.c): an update that changed a few files
 * refreshes the answers from what those files contributed before and after
 * (bound before it writes, and after), and re-binds only the files that
 * reference a name whose definitions changed (added, removed, or another
 * kind or scope), rather than the whole graph; the result is the one a
 * build stores.  It applies only when the stored answers were whole when the
 * update began (graph_stamp) and nothing but the update wrote since
 * (graph_base: a trigger empties it on a write outside the update's
 * session), and falls back to binding the whole graph where the effect of
 * the change cannot be bounded cheaply: many files changed or to re-bind,
 * a Python or TS/JS file among them (its calls follow imports and aliases
 * through other files' text: resolve.h, jstype.h), an unchanged file's
 * import resolving anew, a class
 * added or removed where the index has Python files, the strings of names
 * looked up at run time changed.
 */
#ifndef CI_GRAPH_GSTORE_H
#define CI_GRAPH_GSTORE_H

#include "graph/cgraph.h"

enum { GSTORE_VERSION = 5 };	/* 3: TS/JS calls bound as callers binds them; 4: Python aliases by assignment; 5: TS receivers through interfaces and aliases, Python other names */

/* What an update's incremental path learnt before it wrote (gsdelta.c). */
struct gstore_pre;

/*
 * The hooks of ci-index update (index/run.h), r on the index it writes,
 * inside its write transaction: gstore_begin() before any write (NULL when
 * the stored answers are not whole: the update then takes the full path),
 * gstore_changed() once the files to re-read or forget are known, before
 * they are written (paths[0..n), strcmp order), gstore_commit() just before
 * its commit.  A rolled-back update's pre is never committed: freed unused.
 */
struct gstore_pre *gstore_begin(struct refs *r);
void gstore_changed(struct gstore_pre *p, struct refs *r, const char *const *paths, size_t n);
void gstore_commit(struct gstore_pre *p, struct refs *r);
void gstore_pre_free(struct gstore_pre *p);

/*
 * Store the graph's answers in the index r reads (opened writable, with
 * INDEX_NOTE_DAMAGE) unless a valid stamp says they are stored already:
 * from pre (an update's, committed) when the incremental path applies, else
 * from the whole graph.  *rebound: the files re-bound (0: none, the answers
 * were stored already), -1 when the whole graph was (*why: why, or NULL
 * for a build).  0 when stored (or
 * already were), 1 when another writer changed the index meanwhile, 2 when
 * reading it met damage (nothing stored either way), -1 after an error is
 * reported.
 */
int gstore_update(struct refs *r, struct gstore_pre *pre, long *rebound, const char **why);

/* gsdelta.c: the incremental path, in gstore_update()'s transaction:
 * SQLITE_OK or SQLite's code once written, -1 (nothing written) when it does
 * not apply. */
int gstore_delta(struct refs *r, struct gstore_pre *pre, long *rebound, const char **why);

/* What gsdelta.c shares with the full store: a definition's uses; its row
 * of graph_defs (st: INSERT OR REPLACE ... VALUES (?1 .. ?6)), SQLITE_OK or
 * SQLite's code; the stamp and base written. */
static inline long gstore_uses(const struct cg_def *d)
{
	return d->uses;
}
int gstore_def_row(sqlite3 *db, sqlite3_stmt *st, const struct cgraph *g, long fid, const struct cg_def *d,
		   long uses, long self_calls,
		   long namesake_calls);
int gstore_stamp(sqlite3 *db);

/*
 * In a read transaction of r's (the caller's BEGIN): 1 if the stored answers
 * are valid for this index and this query (not --by-name), else 0.
 */
int gstore_valid(struct refs *r);

/* The stored file edges (gstore_valid() holding), as cgraph_file_edges(),
 * as indexes into g's files (cgraph_load_files()). */
size_t gstore_file_edges(struct refs *r, const struct cgraph *g, struct cg_fedge **out);

/* dead from the stored answers (gstore_valid() holding): as refs_dead(). */
int gstore_dead(struct refs *r);

/* dead's reasons, as stored (0: none, the definition is reached). */
enum { GS_REACHED, GS_UNREFERENCED, GS_RECURSIVE_ONLY, GS_NAMESAKE_ONLY };
int cgraph_dead_reason(const struct cg_def *d, struct cg_counts c);
const char *gstore_reason_name(int reason);

/* dead.c's: does dead look at a definition of this kind, path and lang
 * (--kind, else what is called; --path; --lang)?  Its record (name and scope:
 * d's, given apart; c its counts), why: its reason. */
int dead_wanted(const struct refs *r, const char *kind, const char *path, const char *lang);
void dead_emit(struct refs *r, const struct cgraph *g, const struct cg_def *d, struct cg_counts c,
	       const char *name, const char *scope, const char *why);

/* ---- gsrun.c: the store in ci-index's runs (index/run.h) ---- */
struct ix_run;

/* An update's incremental path, from its hooks to the store. */
struct gstore_hook {
	struct refs q;		/* on the update's index, from IX_GRAPH_BEGIN to its end */
	int open;
	struct gstore_pre *pre;	/* gstore_begin()'s, NULL when the path does not apply */
};

/*
 * Around ix_update(r): attach sets r's graph hooks to h's (none with
 * --no-graph), detach takes them off (an update that rebuilt the index
 * began and never ended: what it learnt is dropped).  Then gstore_run(r, h)
 * once the update succeeded, and gstore_hook_free(h) either way.
 */
void gstore_hook_attach(struct ix_run *r, struct gstore_hook *h);
void gstore_hook_detach(struct ix_run *r, struct gstore_hook *h);
void gstore_hook_free(struct gstore_hook *h);

/*
 * The call graph's answers stored in the index r's build (h NULL) or update
 * (h its hooks') just wrote, unless --no-graph: derived data, so a failure
 * is reported and the command still succeeds (dead and arch then bind the
 * whole graph, as without them), damage too, whatever the verbosity (the
 * commands that read it report it).  Under the writers' lock (a server's
 * worker holds it still, with its index open).  With -v, says what it did.
 */
void gstore_run(struct ix_run *r, const struct gstore_hook *h);

#endif
