/*
 * memory.h: the team's memory, .codebase-context/memory.json: conventions,
 * decisions, gotchas and failures, each with an id (FNV-1a of what it says),
 * a date and a confidence that decays with a half-life of its type.
 *
 * A struct memory_store is one file loaded: open it, read or change ->all,
 * save it.  Memories also come from conventional commits (the caller reads the
 * history and hands in the commit records).
 */
#ifndef CI_CONTEXT_MEMORY_H
#define CI_CONTEXT_MEMORY_H

#include <time.h>
#include <jansson.h>

#define MEMORY_DIR ".codebase-context"
#define MEMORY_FILE MEMORY_DIR "/memory.json"

struct memory_store {
	char *dir;	/* the folder of the file (MEMORY_DIR under the root) */
	char *path;	/* the file (MEMORY_FILE under the root) */
	json_t *all;	/* the memories, a JSON array (owned) */
};

/* The types a memory may have, NULL-ended. */
extern const char *const memory_types[];

/*
 * Load the memories of root's MEMORY_FILE (root NULL: the current directory,
 * the paths then as MEMORY_DIR names them) into ms; no file is no memory.
 * -1 (said as "memory: <file>:<line>: <what>") when the file is not a JSON array.
 */
int memory_store_open(struct memory_store *ms, const char *root);
void memory_store_release(struct memory_store *ms);
/* Write ms->all back, through a temporary file and a rename; -1 when it cannot. */
int memory_store_save(struct memory_store *ms);
/* The position of the memory with this id in ms->all, or -1. */
long memory_store_find(const struct memory_store *ms, const char *id);
/*
 * Add memories from conventional commits (ci-couple's commit records):
 * "type(scope)!: subject"; those there already are left out.  Returns how
 * many were added (ms is not saved).
 */
int memory_store_add_commits(struct memory_store *ms, json_t *commits);

/* Whether type is one of memory_types. */
int memory_type_ok(const char *type);
/* A new memory record; its id is FNV-1a of type, category and text. */
json_t *memory_new(const char *type, const char *category, const char *text,
		   const char *reason, const char *date);
/*
 * Add to m its "confidence" at now (1 halved every half-life of its type since
 * its date; conventions keep 1) and "stale" (below 0.3).
 */
void memory_score(json_t *m, time_t now);
/* Whether m passes the filters of `memory list` (each NULL: any). */
int memory_matches(json_t *m, const char *category, const char *type, const char *query);
/* Whether m shares a word (3 letters or more) with the query. */
int memory_related(json_t *m, const char *query);

#endif
