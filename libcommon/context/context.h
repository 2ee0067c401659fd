/*
 * context/: what the project around the code says, gathered for the `ci` front
 * command (codebase-context's and bobbin's tools): the team's memory
 * (memory.h), the style guide (style.h), the package manifests (manifest.h),
 * the import patterns and their trends (patterns.h), the enrichment of a
 * search answer and its preflight card (enrich.h), records ranked for a query
 * (docs.h: beads and archive), the feedback store in the index (feedback.h)
 * and exact matches gathered by chunk (grepchunks.h).
 *
 * Layering: core <- index <- context <- cmd/ci.  The library reads files and
 * the index; it starts no program: what comes from another command (ci-index
 * status, ci-couple history, ci-refs deps, ci-embed vectors) the caller reads
 * and hands in.  No file-scope mutable state: what varies is in a struct the
 * caller owns (struct memory_store, struct style_guide, struct doc_set, struct
 * search_enrich, struct grep_chunks) or passed in (the index's handle).  Errors
 * are reported once with error() ("<prog>: <msg>") and returned as -1; only
 * cmd/ exits.
 *
 * This header: the helpers the context/ files share, and the TOML reader the
 * caller supplies (toml++ is C++: the commands that use it link it, the library
 * does not).
 */
#ifndef CI_CONTEXT_H
#define CI_CONTEXT_H

#include <stddef.h>
#include <jansson.h>

/* A TOML parser: JSON text (malloc'd), or NULL with *err (malloc'd) set. */
struct context_toml {
	char *(*file_json)(const char *path, char **err);	/* a file by path */
	char *(*text_json)(const char *text, size_t len, const char *path, char **err);	/* text read from path */
};

#define CONTEXT_DAY 86400	/* seconds */

/* A string field of o, "" when absent or not a string.  Cannot fail. */
const char *ctx_str(json_t *o, const char *key);
/* Whether needle occurs in hay, ignoring ASCII case; an empty needle does. */
int ctx_contains_ci(const char *hay, const char *needle);
/* qsort() comparison of char * elements. */
int ctx_cmp_str(const void *a, const void *b);
/* Whether the array arr holds the string s. */
int ctx_array_has(json_t *arr, const char *s);
/* A date (UTC) of seconds since the epoch, as YYYY-MM-DD into out[11]. */
void ctx_ymd(char *out, json_int_t t);
/* The first max bytes of s, cut at a character boundary, with "..." when cut (malloc'd). */
char *ctx_cut_text(const char *s, size_t max);

#endif
