/*
 * rsworld.c: resolve.h's world read from the index (refs.h): the definitions
 * of a name (cached), the lines and import rows of a file.
 */
#include "core/common.h"
#include "graph/jstype.h"
#include "graph/refs.h"
#include "parse/lang.h"

/* The lines of the blob, from its chunks, into t. */
static void blob_lines(struct refs *r, sqlite3_int64 blob, struct rs_text *t)
{
	sqlite3_stmt *st;
	size_t alloc = 0;

	st = refs_prep(r, "SELECT start_line, end_line, ci_inflate(text) FROM chunks WHERE blob_id = ?1 "
		       "ORDER BY start_line, end_line DESC");
	sqlite3_bind_int64(st, 1, blob);
	while (sqlite3_step(st) == SQLITE_ROW) {
		long l = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		const char *p = refs_col(st, 2);

		if (!p || l < 1)
			continue;
		if (end > t->lines_nr) {
			ALLOC_GROW(t->lines, (size_t)end, alloc);
			memset(t->lines + t->lines_nr, 0, (size_t)(end - t->lines_nr) * sizeof(char *));
			t->lines_nr = end;
		}
		for (; l <= end && p; l++) {
			const char *e = strchrnul(p, '\n');
			if (!t->lines[l - 1])
				t->lines[l - 1] = xstrndup(p, (size_t)(e - p));
			p = *e ? e + 1 : NULL;
		}
	}
	sqlite3_finalize(st);
}

/* The blob of path and whether it is Python; -1 when the index has no such file. */
static sqlite3_int64 path_blob(struct refs *r, const char *path, int *python)
{
	sqlite3_stmt *st;
	sqlite3_int64 blob = -1;

	*python = 0;
	st = refs_prep(r, "SELECT b.id, b.lang FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		blob = sqlite3_column_int64(st, 0);
		*python = refs_col(st, 1) && !strcmp(refs_col(st, 1), "python");
	}
	sqlite3_finalize(st);
	return blob;
}

int refs_file_lines(struct refs *r, const char *path, struct rs_text *t)
{
	int python;
	sqlite3_int64 blob = path_blob(r, path, &python);

	memset(t, 0, sizeof(*t));
	if (blob < 0)
		return 0;
	blob_lines(r, blob, t);
	return 1;
}

int refs_file_text(struct refs *r, const char *path, struct rs_text *t)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int python;
	sqlite3_int64 blob = path_blob(r, path, &python);

	memset(t, 0, sizeof(*t));
	if (blob < 0)
		return 0;
	t->python = python;
	if (!python)
		return 1;
	blob_lines(r, blob, t);
	st = refs_prep(r, "SELECT target, resolved, line FROM imports WHERE path = ?1 ORDER BY line");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(t->imps, t->imps_nr + 1, alloc);
		t->imps[t->imps_nr].target = xstrdup(refs_col(st, 0) ? refs_col(st, 0) : "");
		t->imps[t->imps_nr].resolved = refs_col(st, 1) ? xstrdup(refs_col(st, 1)) : NULL;
		t->imps[t->imps_nr].line = sqlite3_column_int64(st, 2);
		t->imps_nr++;
	}
	sqlite3_finalize(st);
	return 1;
}

/* One name's definitions, cached. */
struct rw_name {
	char *name;
	struct rs_def *d;
	size_t n;
};

static size_t rw_named(void *ctx, const char *name, const struct rs_def **out)
{
	struct refs_world *w = ctx;
	struct rw_name *e;
	sqlite3_stmt *st;
	size_t alloc = 0;

	for (size_t i = 0; i < w->names_nr; i++)
		if (!strcmp(w->names[i].name, name)) {
			*out = w->names[i].d;
			return w->names[i].n;
		}
	ALLOC_GROW(w->names, w->names_nr + 1, w->names_alloc);
	e = &w->names[w->names_nr++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	st = refs_prep(w->r, "SELECT f.path, d.kind, d.scope, d.line, d.end_line FROM defs d "
		       "JOIN files f ON f.blob_id = d.blob_id WHERE d.name = ?1 ORDER BY f.path, d.line");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct rs_def *d;
		ALLOC_GROW(e->d, e->n + 1, alloc);
		d = &e->d[e->n++];
		d->name = e->name;
		d->path = xstrdup(refs_col(st, 0));
		d->kind = xstrdup(refs_col(st, 1));
		d->scope = refs_col(st, 2) ? xstrdup(refs_col(st, 2)) : NULL;
		d->line = sqlite3_column_int64(st, 3);
		d->end_line = sqlite3_column_int64(st, 4);
	}
	sqlite3_finalize(st);
	*out = e->d;
	return e->n;
}

static int rw_file(void *ctx, const char *path, struct rs_text *t)
{
	return refs_file_text(((struct refs_world *)ctx)->r, path, t);
}

static size_t rw_importers(void *ctx, const char *path, char ***out)
{
	struct refs_world *w = ctx;
	size_t n = 0, alloc = 0;

	*out = NULL;
	if (!w->by_st)
		w->by_st = refs_prep(w->r, "SELECT DISTINCT path FROM imports WHERE resolved = ?1 ORDER BY path");
	sqlite3_reset(w->by_st);
	sqlite3_bind_text(w->by_st, 1, path, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(w->by_st) == SQLITE_ROW) {
		ALLOC_GROW(*out, n + 1, alloc);
		(*out)[n++] = xstrdup(refs_col(w->by_st, 0));
	}
	return n;
}

static const struct rs_ops rw_ops = { rw_named, rw_file, rw_importers };

void refs_world_init(struct refs_world *w, struct refs *r)
{
	memset(w, 0, sizeof(*w));
	w->r = r;
	resolver_init(&w->rs, &rw_ops, w);
	w->js = js_types_new(r);
}

void refs_world_release(struct refs_world *w)
{
	resolver_release(&w->rs);
	js_types_free(w->js);
	sqlite3_finalize(w->by_st);
	for (size_t i = 0; i < w->names_nr; i++) {
		for (size_t k = 0; k < w->names[i].n; k++) {
			free((char *)w->names[i].d[k].path);
			free((char *)w->names[i].d[k].kind);
			free((char *)w->names[i].d[k].scope);
		}
		free(w->names[i].d);
		free(w->names[i].name);
	}
	free(w->names);
	memset(w, 0, sizeof(*w));
}
