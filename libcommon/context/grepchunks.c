/*
 * grepchunks.c: exact matches gathered by chunk (see grepchunks.h): one
 * indexed lookup per match line, a look back over the current file's chunks.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/grepchunks.h"

int grep_chunks_open(struct grep_chunks *gc, sqlite3 *db, const char *kind, long limit)
{
	memset(gc, 0, sizeof(*gc));
	gc->kind = kind;
	gc->limit = limit;
	if (sqlite3_prepare_v2(db, "SELECT c.id, c.start_line, c.end_line, c.kind, c.name, b.lang, "
			       "ci_inflate(c.text) FROM files f JOIN chunks c ON c.blob_id = f.blob_id "
			       "JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?1 AND c.start_line <= ?2 "
			       "AND c.end_line >= ?2 ORDER BY c.end_line - c.start_line, c.start_line LIMIT 1",
			       -1, &gc->st, NULL) != SQLITE_OK)
		return -1;
	gc->out = json_array();
	return 0;
}

/* The record of chunk id of path already made (ci-grep writes a file's matches together), or NULL. */
static json_t *chunk_seen(struct grep_chunks *gc, const char *p, json_int_t id)
{
	for (size_t j = json_array_size(gc->out); j > 0; j--) {
		json_t *prev = json_array_get(gc->out, j - 1);
		if (strcmp(json_string_value(json_object_get(prev, "path")), p))
			break;
		if (json_integer_value(json_object_get(prev, "id")) == id)
			return prev;
	}
	return NULL;
}

/* A new grep_chunk record: the chunk st is on, or (id < 0) the match's line alone. */
static json_t *chunk_record(sqlite3_stmt *st, json_t *m, const char *p, json_int_t line, json_int_t id,
			    const char *kind)
{
	json_t *c = id < 0 ? json_pack("{s:s, s:s, s:I, s:I, s:s, s:n, s:n, s:[], s:O}", "_type", "grep_chunk",
				       "path", p, "start_line", line, "end_line", line, "kind", "lines",
				       "name", "lang", "matches", "text", json_object_get(m, "text")) :
		json_pack("{s:s, s:s, s:I, s:I, s:s, s:s?, s:s?, s:[], s:s?}", "_type", "grep_chunk",
			  "path", p, "start_line", (json_int_t)sqlite3_column_int64(st, 1),
			  "end_line", (json_int_t)sqlite3_column_int64(st, 2), "kind", kind,
			  "name", (const char *)sqlite3_column_text(st, 4),
			  "lang", (const char *)sqlite3_column_text(st, 5), "matches",
			  "text", (const char *)sqlite3_column_text(st, 6));

	json_object_set_new(c, "id", json_integer(id));
	return c;
}

void grep_chunks_add(struct grep_chunks *gc, json_t *m)
{
	const char *p = json_string_value(json_object_get(m, "path"));
	json_int_t line = json_integer_value(json_object_get(m, "line"));
	json_t *c, *hit;
	json_int_t id = -line;	/* a line the index has no chunk for */
	const char *kind = "lines";

	if (!p || !line)
		return;
	hit = json_pack("{s:I, s:O}", "line", line, "text", json_object_get(m, "text"));
	sqlite3_reset(gc->st);
	sqlite3_bind_text(gc->st, 1, p, -1, SQLITE_STATIC);
	sqlite3_bind_int64(gc->st, 2, line);
	if (sqlite3_step(gc->st) == SQLITE_ROW) {
		id = sqlite3_column_int64(gc->st, 0);
		kind = (const char *)sqlite3_column_text(gc->st, 3);
	}
	if (gc->kind && strcmp(kind, gc->kind)) {
		json_decref(hit);
		return;
	}
	c = chunk_seen(gc, p, id);
	if (!c) {
		if ((long)json_array_size(gc->out) >= gc->limit) {
			json_decref(hit);
			return;
		}
		c = chunk_record(gc->st, m, p, line, id, kind);
		json_array_append_new(gc->out, c);
	}
	json_array_append_new(json_object_get(c, "matches"), hit);
	if ((long)json_array_size(json_object_get(c, "matches")) > gc->max)
		gc->max = (long)json_array_size(json_object_get(c, "matches"));
}

json_t *grep_chunks_finish(struct grep_chunks *gc)
{
	json_t *out = gc->out, *m;
	size_t i;

	sqlite3_finalize(gc->st);
	/* score: matching lines, relative to the chunk with most; the id was for grouping */
	json_array_foreach(out, i, m) {
		json_object_del(m, "id");
		json_object_set_new(m, "score", json_real((double)json_array_size(json_object_get(m, "matches")) /
						       (double)(gc->max ? gc->max : 1)));
	}
	memset(gc, 0, sizeof(*gc));
	return out;
}
