/*
 * feedback.h: what agents tell about the context they were given (bobbin's
 * feedback tools), kept in the index's feedback tables (CI_FEEDBACK_TABLES):
 * injections (a context bundle given out, inj-<n>), feedback (a rating of an
 * injection) and lineage (what was done about feedback records).
 *
 * Every function works on an open index (struct ci_index); the records
 * returned are the rows as JSON objects with their _type.  Errors are said as
 * "<sub>: <what>" (sub: the subcommand, for messages) and return -1.
 */
#ifndef CI_CONTEXT_FEEDBACK_H
#define CI_CONTEXT_FEEDBACK_H

#include <jansson.h>

struct ci_index;

/* A feedback record to store (strings borrowed). */
struct feedback {
	const char *injection_id;	/* inj-<n> */
	const char *agent;		/* who rates */
	const char *rating;		/* useful, noise or harmful */
	const char *reason;		/* why ("" when not given) */
	const char *timestamp;		/* when, YYYY-MM-DDTHH:MM:SSZ */
};

/* A lineage record to store (strings borrowed; bead and commit may be NULL). */
struct lineage {
	json_t *feedback_ids;		/* the feedback records acted on, an array of ids */
	const char *action_type;	/* code_fix, config_change, tag_effect, access_rule, exclusion_rule */
	const char *bead, *commit_hash;	/* where it was done */
	const char *description;	/* what was done */
	const char *agent, *timestamp;	/* who, when */
};

/* Open the index at path to read, or (with its feedback tables created) to write. */
int feedback_open(struct ci_index **out, const char *sub, const char *path, int write);
/* Store fb; *out: an array of its record as stored. */
int feedback_submit(json_t **out, struct ci_index *ix, const char *sub, const struct feedback *fb);
/* The newest limit feedback records with rating and agent (each NULL: any). */
int feedback_list(json_t **out, struct ci_index *ix, const char *sub, const char *rating,
		  const char *agent, long limit);
/* The "feedback_stats" record: counts of injections, ratings and lineage. */
int feedback_stats(json_t **out, struct ci_index *ix, const char *sub);
/* Whether each of ids (an array of integers) is a feedback record; -1 (said) when one is not. */
int lineage_check(struct ci_index *ix, const char *sub, json_t *ids);
/*
 * Store ln, once each of its feedback ids is checked to be there; *out: an
 * array of its record as stored.
 */
int lineage_store(json_t **out, struct ci_index *ix, const char *sub, const struct lineage *ln);
/* The newest limit lineage records about feedback fid (0: any), bead and commit (NULL: any). */
int lineage_list(json_t **out, struct ci_index *ix, const char *sub, long fid, const char *bead,
		 const char *commit_hash, long limit);
/*
 * Begin a transaction and record an injection of files (a JSON array as
 * text) for query: its id (inj-<n>, the next number) into *id (malloc'd).
 * The caller ends it with injection_end().
 */
int injection_begin(char **id, struct ci_index *ix, const char *query, const char *agent,
		    const char *files, const char *timestamp);
/* Commit the injection (ok) or roll it back; -1 when the commit fails (said). */
int injection_end(struct ci_index *ix, const char *id, int ok);

#endif
