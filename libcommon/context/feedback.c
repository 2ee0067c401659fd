/*
 * feedback.c: the feedback tables of the index (see feedback.h).  A handful
 * of rows per call: each statement is prepared, run and finalized in place.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/feedback.h"
#include "index/index.h"

#include <math.h>

int feedback_open(struct ci_index **out, const char *sub, const char *path, int write)
{
	char *err = NULL;

	*out = NULL;
	if (index_open(out, path, write ? 0 : INDEX_READONLY))
		return error("%s: cannot open the index '%s'", sub, path);
	if (write && sqlite3_exec(index_db(*out), CI_FEEDBACK_TABLES, NULL, NULL, &err) != SQLITE_OK) {
		error("%s: cannot write the index '%s': %s", sub, path, err ? err : "");
		sqlite3_free(err);
		index_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* Does the index have table name (an index no feedback was written to has none)? */
static int has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int r = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		r = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return r;
}

static int prepare(sqlite3_stmt **st, sqlite3 *db, const char *sub, const char *sql)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return error("%s: %s", sub, sqlite3_errmsg(db));
	return 0;
}

/* Step st to its end and finalize it. */
static int step_done(sqlite3_stmt *st, const char *sub)
{
	int ret = 0;

	if (sqlite3_step(st) != SQLITE_DONE)
		ret = error("%s: %s", sub, sqlite3_errmsg(sqlite3_db_handle(st)));
	sqlite3_finalize(st);
	return ret;
}

/* A column of a row as JSON: "feedback_ids" and "files" hold JSON text. */
static json_t *column_json(sqlite3_stmt *st, int i)
{
	const char *name = sqlite3_column_name(st, i);
	json_t *v;

	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, i));
	case SQLITE_NULL: return json_null();
	default:
		if (!strcmp(name, "feedback_ids") || !strcmp(name, "files"))
			v = json_loads((const char *)sqlite3_column_text(st, i), 0, NULL);
		else
			v = json_string((const char *)sqlite3_column_text(st, i));
		return v ? v : json_null();
	}
}

/* The rows of st (finalized here) as records of type type into *out, columns by name. */
static int rows_of(json_t **out, sqlite3_stmt *st, const char *sub, const char *type)
{
	json_t *recs = json_array();
	int rc, i;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *r = json_pack("{s:s}", "_type", type);
		for (i = 0; i < sqlite3_column_count(st); i++)
			json_object_set_new(r, sqlite3_column_name(st, i), column_json(st, i));
		json_array_append_new(recs, r);
	}
	*out = NULL;
	if (rc != SQLITE_DONE) {
		error("%s: %s", sub, sqlite3_errmsg(sqlite3_db_handle(st)));
		sqlite3_finalize(st);
		json_decref(recs);
		return -1;
	}
	sqlite3_finalize(st);
	*out = recs;
	return 0;
}

/* The row just inserted (sql selects it by ?1, its id) as a record of type. */
static int inserted(json_t **out, struct ci_index *ix, const char *sub, const char *sql, const char *type)
{
	sqlite3_stmt *st;

	*out = NULL;
	if (prepare(&st, index_db(ix), sub, sql))
		return -1;
	sqlite3_bind_int64(st, 1, sqlite3_last_insert_rowid(index_db(ix)));
	return rows_of(out, st, sub, type);
}

int feedback_submit(json_t **out, struct ci_index *ix, const char *sub, const struct feedback *fb)
{
	sqlite3_stmt *st;

	*out = NULL;
	if (prepare(&st, index_db(ix), sub, "INSERT INTO feedback(injection_id, agent, rating, reason, timestamp) "
		    "VALUES (?1, ?2, ?3, ?4, ?5)"))
		return -1;
	sqlite3_bind_text(st, 1, fb->injection_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, fb->agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, fb->rating, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, fb->reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, fb->timestamp, -1, SQLITE_STATIC);
	if (step_done(st, sub))
		return -1;
	return inserted(out, ix, sub, "SELECT id, injection_id, rating, agent, reason, timestamp "
			"FROM feedback WHERE id = ?1", "feedback");
}

int feedback_list(json_t **out, struct ci_index *ix, const char *sub, const char *rating,
		  const char *agent, long limit)
{
	sqlite3_stmt *st;

	*out = NULL;
	if (!has_table(index_db(ix), "feedback")) {
		*out = json_array();
		return 0;
	}
	if (prepare(&st, index_db(ix), sub, "SELECT id, injection_id, rating, agent, reason, timestamp "
		    "FROM feedback WHERE (?1 IS NULL OR rating = ?1) AND (?2 IS NULL OR agent = ?2) "
		    "ORDER BY id DESC LIMIT ?3"))
		return -1;
	sqlite3_bind_text(st, 1, rating, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, limit);
	return rows_of(out, st, sub, "feedback");
}

/* The count sql selects, in *n (0 when it selects no row). */
static int count_of(long *n, sqlite3 *db, const char *sub, const char *sql)
{
	sqlite3_stmt *st;

	if (prepare(&st, db, sub, sql))
		return -1;
	*n = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

int feedback_stats(json_t **out, struct ci_index *ix, const char *sub)
{
	sqlite3 *db = index_db(ix);
	long inj = 0, fb = 0, rated = 0, useful = 0, noise = 0, harmful = 0, lin = 0, acted = 0;

	*out = NULL;
	if (has_table(db, "feedback") &&
	    (count_of(&inj, db, sub, "SELECT count(*) FROM injections") ||
	     count_of(&fb, db, sub, "SELECT count(*) FROM feedback") ||
	     count_of(&rated, db, sub, "SELECT count(DISTINCT injection_id) FROM feedback "
		      "WHERE injection_id IN (SELECT id FROM injections)") ||
	     count_of(&useful, db, sub, "SELECT count(*) FROM feedback WHERE rating = 'useful'") ||
	     count_of(&noise, db, sub, "SELECT count(*) FROM feedback WHERE rating = 'noise'") ||
	     count_of(&harmful, db, sub, "SELECT count(*) FROM feedback WHERE rating = 'harmful'") ||
	     count_of(&lin, db, sub, "SELECT count(*) FROM feedback_lineage") ||
	     count_of(&acted, db, sub, "SELECT count(DISTINCT j.value) FROM feedback_lineage l, "
		      "json_each(l.feedback_ids) j WHERE j.value IN (SELECT id FROM feedback)")))
		return -1;
	/* coverage: the share of injections rated at least once */
	*out = json_pack("{s:s, s:i, s:i, s:o, s:i, s:i, s:i, s:i, s:i, s:i}", "_type", "feedback_stats",
			 "total_injections", (json_int_t)inj, "total_feedback", (json_int_t)fb,
			 "coverage", inj ? json_real(floor((double)rated / (double)inj * 1000 + 0.5) / 1000) :
			 json_null(),
			 "useful", (json_int_t)useful, "noise", (json_int_t)noise, "harmful", (json_int_t)harmful,
			 "lineage_records", (json_int_t)lin, "actioned", (json_int_t)acted,
			 "unactioned", (json_int_t)(fb - acted));
	return 0;
}

int lineage_check(struct ci_index *ix, const char *sub, json_t *ids)
{
	sqlite3_stmt *st;
	json_t *v;
	size_t i;

	if (prepare(&st, index_db(ix), sub, "SELECT 1 FROM feedback WHERE id = ?1"))
		return -1;
	json_array_foreach(ids, i, v) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, json_integer_value(v));
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_finalize(st);
			return error("%s: no feedback record %lld (see feedback list)", sub,
				     (long long)json_integer_value(v));
		}
	}
	sqlite3_finalize(st);
	return 0;
}

int lineage_store(json_t **out, struct ci_index *ix, const char *sub, const struct lineage *ln)
{
	sqlite3_stmt *st;
	char *idtext;
	int ret;

	*out = NULL;
	if (lineage_check(ix, sub, ln->feedback_ids))
		return -1;
	if (prepare(&st, index_db(ix), sub, "INSERT INTO feedback_lineage(feedback_ids, action_type, bead, "
		    "commit_hash, description, agent, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))
		return -1;
	idtext = json_dumps(ln->feedback_ids, JSON_COMPACT);
	sqlite3_bind_text(st, 1, idtext, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ln->action_type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, ln->bead, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, ln->commit_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ln->description, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, ln->agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, ln->timestamp, -1, SQLITE_STATIC);
	ret = step_done(st, sub);
	free(idtext);
	if (ret)
		return -1;
	return inserted(out, ix, sub, "SELECT id, feedback_ids, action_type, bead, commit_hash, "
			"description, agent, timestamp FROM feedback_lineage WHERE id = ?1", "lineage");
}

int lineage_list(json_t **out, struct ci_index *ix, const char *sub, long fid, const char *bead,
		 const char *commit_hash, long limit)
{
	sqlite3_stmt *st;

	*out = NULL;
	if (!has_table(index_db(ix), "feedback_lineage")) {
		*out = json_array();
		return 0;
	}
	if (prepare(&st, index_db(ix), sub, "SELECT id, feedback_ids, action_type, bead, "
		    "commit_hash, description, agent, timestamp FROM feedback_lineage l "
		    "WHERE (?1 = 0 OR EXISTS (SELECT 1 FROM json_each(l.feedback_ids) j WHERE j.value = ?1)) "
		    "AND (?2 IS NULL OR bead = ?2) AND (?3 IS NULL OR commit_hash = ?3) ORDER BY id DESC LIMIT ?4"))
		return -1;
	sqlite3_bind_int64(st, 1, fid);
	sqlite3_bind_text(st, 2, bead, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, commit_hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, limit);
	return rows_of(out, st, sub, "lineage");
}

/*
 * The injection is recorded only once its records are out: its id is taken
 * and its row written in a transaction the caller commits after standard
 * output is flushed and closed without error, and rolls back otherwise (a
 * reader that went away: SIGPIPE ends the process before the commit).
 */
int injection_begin(char **id, struct ci_index *ix, const char *query, const char *agent,
		    const char *files, const char *timestamp)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *st;

	*id = NULL;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return error("bundle: cannot write the index: %s", sqlite3_errmsg(db));
	if (prepare(&st, db, "bundle", "SELECT coalesce(max(CAST(substr(id, 5) AS INTEGER)), 0) + 1 "
		    "FROM injections WHERE id LIKE 'inj-%'"))
		return -1;
	*id = xasprintf("inj-%lld", sqlite3_step(st) == SQLITE_ROW ? (long long)sqlite3_column_int64(st, 0) : 1LL);
	sqlite3_finalize(st);
	if (prepare(&st, db, "bundle", "INSERT INTO injections(id, query, agent, files, timestamp) "
		    "VALUES (?1, ?2, ?3, ?4, ?5)"))
		return -1;
	sqlite3_bind_text(st, 1, *id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, query, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, files, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, timestamp, -1, SQLITE_STATIC);
	return step_done(st, "bundle");
}

int injection_end(struct ci_index *ix, const char *id, int ok)
{
	int ret = 0;

	if (ok && sqlite3_exec(index_db(ix), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ret = error("bundle: %s was given out but cannot be recorded: %s", id, sqlite3_errmsg(index_db(ix)));
	if (!ok || ret)
		sqlite3_exec(index_db(ix), "ROLLBACK", NULL, NULL, NULL);
	return ret;
}
