/*
 * libcommon/fleet/xrefs.h: references across the repositories of a shard set
 * (issue 28): an import in repository B that B's own index left unresolved
 * (no file of B is that module) resolved to a file of repository A when A
 * publishes the package it names, for `ci-refs --shards <set>
 * refs|callers|impact`.
 *
 * What a repository publishes, found from its index at query time (a
 * handful of rows a shard; the map is built from every shard's facts):
 *   Python  each top-level package directory (pkg/__init__.py, or
 *           src/pkg/__init__.py): module "pkg", files under that directory;
 *   JavaScript, TypeScript  package.json's "name" at the root: module
 *           "<name>", "<name>/<sub path>";
 *   Go      go.mod's module path: "<module>/<package directory>".
 * An import a repository resolves itself (a module of its own of the same
 * name) is never resolved elsewhere: the repository's own module wins.
 *
 * Two steps, so that each shard's part runs where its query runs (a thread,
 * a forked process, the set's server):
 *   xrefs_facts    on each shard, after its answer: records of the facts the
 *                  resolution needs (xref_pkg, xref_import, xref_def,
 *                  xref_ref), which the fan-out merges like the others;
 *   xrefs_resolve  on the merged answer: the facts taken out, the
 *                  cross-repository records added before the `fleet` record:
 *     import_edge  {repo, path, line, target, resolved:{repo, path}}: every
 *                  import of another repository's file that the answer is about;
 *     occurrence   (callers) a call in B bound to A's definition:
 *                  "binding":"cross-repo", "definition":{repo, path, line};
 *     impact       (impact) a file of B importing A's file: depth 1, its
 *                  signals and score as impact's, "via":{repo, path}.
 */
#ifndef CI_FLEET_XREFS_H
#define CI_FLEET_XREFS_H

#include <stdio.h>

struct ci_index;
struct buf;

/* Does the refs command cmd look across repositories (refs, callers, impact)? */
int xrefs_wanted(const char *cmd);

/*
 * Append to out the facts of the shard at ix for the query `cmd arg`
 * (records as NDJSON lines, "_type" first).  Cannot fail (a fact that cannot
 * be read is left out).
 */
void xrefs_facts(struct ci_index *ix, const char *cmd, const char *arg, struct buf *out);

/*
 * The merged answer in (len bytes, NDJSON with the facts) written to out
 * without them, with the cross-repository records.  Returns how many of
 * those it wrote, or -1 after a message (a line that is no record).
 */
long xrefs_resolve(const char *cmd, const char *arg, const char *in, size_t len, FILE *out);

#endif
