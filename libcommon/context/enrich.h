/*
 * enrich.h: what codebase-context's search adds to ci-rank's hits: per hit
 * importedByCount, hasTests, callers, tests, the trend of the patterns its
 * file uses and a patternWarning when one is declining; a search_quality
 * record; up to 3 related_memory records; with an edit, refactor or migrate
 * intent, the preflight card (do, avoid, best example, impact, readiness,
 * what would help).
 *
 * A struct search_enrich holds one query's inputs (the patterns, the
 * memories, how to find a file's importers) and what is gathered on the way.
 */
#ifndef CI_CONTEXT_ENRICH_H
#define CI_CONTEXT_ENRICH_H

#include <stddef.h>
#include <time.h>
#include <jansson.h>

struct search_enrich {
	/* given */
	const char *query;	/* the search's words */
	const char *intent;	/* explore, edit, refactor or migrate */
	json_t *pats;		/* patterns_compute(..., "all") (borrowed) */
	json_t *mems;		/* the memories, scored here (borrowed) */
	time_t now;		/* when the memories are scored */
	/* the files importing path, a new array of paths (ci-refs deps --reverse) */
	json_t *(*importers)(void *cb_data, const char *path);
	void *cb_data;		/* the importers callback's payload */

	/* gathered (owned; search_enrich_run() releases them) */
	json_t *files;		/* the hits' files, in order */
	json_t *callers;	/* the files importing one of them */
	json_t *related;	/* related_memory records, 3 at most */
	json_t *warnings;	/* the failures among the related memories, 3 at most */
	json_t *summary;	/* ci-rank's summary record, or NULL (borrowed) */
	size_t hits;		/* the hit records */
	size_t covered;		/* callers that are among the files */
	double top;		/* the first hit's score */
	int stale;		/* whether a related memory is stale */
};

/*
 * Enrich recs (ci-rank's records, changed in place: the hits get their fields,
 * the records above are appended).  Cannot fail.
 */
void search_enrich_run(struct search_enrich *se, json_t *recs);

#endif
