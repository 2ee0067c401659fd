/*
 * gstore.h: the whole-index call graph's answers stored in the index, so
 * that dead and arch do not bind every call of the index at each question
 * (on Linux, 4.9 M calls: about 20 s each).
 *
 * ci-index build and update store them once the index is written
 * (gstore_update()): the definitions dead reports (before its --kind,
 * --path and --lang filters: entry points left out) and the calls between
 * files, counted (arch's edges).  They are derived data, kept in tables of
 * their own (graph_stamp, graph_dead, graph_calls) that the schema does not
 * list: an index without them is answered as before, from the whole graph.
 * Triggers on the tables they derive from (files, blobs, defs, refs,
 * mentions, imports) empty graph_stamp on any write, so a change by any
 * writer (a ci-index of an older version, a server's update) leaves the
 * stored answers unused until the next gstore_update(); the stamp holds
 * GSTORE_VERSION, the rules they were computed by.  Computed with the
 * default binding (no --by-name): a query with --by-name binds anew.
 */
#ifndef CI_GRAPH_GSTORE_H
#define CI_GRAPH_GSTORE_H

#include "graph/cgraph.h"

enum { GSTORE_VERSION = 1 };

/*
 * Store the graph's answers in the index r reads (opened writable, with
 * INDEX_NOTE_DAMAGE) unless a valid stamp says they are stored already.  0
 * when stored (or already were), 1 when another writer changed the index
 * meanwhile, 2 when reading it met damage (nothing stored either way), -1
 * after an error is reported.
 */
int gstore_update(struct refs *r);

/*
 * In a read transaction of r's (the caller's BEGIN): 1 if the stored answers
 * are valid for this index and this query (not --by-name), else 0.
 */
int gstore_valid(struct refs *r);

/* The stored file edges (gstore_valid() holding), as cgraph_file_edges(). */
size_t gstore_file_edges(struct refs *r, struct cg_fedge **out);

/* dead from the stored answers (gstore_valid() holding): as refs_dead(). */
int gstore_dead(struct refs *r);

/* dead's reasons, as stored (0: none, the definition is reached). */
enum { GS_REACHED, GS_UNREFERENCED, GS_RECURSIVE_ONLY, GS_NAMESAKE_ONLY };
int cgraph_dead_reason(const struct cg_def *d);
const char *gstore_reason_name(int reason);

/* dead.c's: does dead look at a definition of this kind, path and lang
 * (--kind, else what is called; --path; --lang)?  Its record, why: its reason. */
int dead_wanted(const struct refs *r, const char *kind, const char *path, const char *lang);
void dead_emit(struct refs *r, const struct cg_def *d, const char *why);

#endif
