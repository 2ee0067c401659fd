/*
 * gstore.c: the whole-index call graph's answers stored in the index
 * (gstore.h): written by ci-index build and update, read by dead and arch.
 */
#include "core/common.h"
#include "graph/gstore.h"
#include "index/index.h"

static const char gs_tables[] =
	"CREATE TABLE IF NOT EXISTS graph_stamp(version INTEGER NOT NULL);"
	/* dead's definitions in cgraph.defs order (seq), before its filters */
	"CREATE TABLE IF NOT EXISTS graph_dead(seq INTEGER PRIMARY KEY, file INTEGER NOT NULL, "
	"def INTEGER NOT NULL, reason INTEGER NOT NULL, namesake_calls INTEGER NOT NULL, "
	"self_calls INTEGER NOT NULL);"
	/* files as indexes into the files in path order (any change of the
	 * files empties the stamp) */
	"CREATE TABLE IF NOT EXISTS graph_calls(a INTEGER NOT NULL, b INTEGER NOT NULL, calls INTEGER NOT NULL, "
	"PRIMARY KEY (a, b)) WITHOUT ROWID;";

/* The tables the answers derive from: a write to any makes them stale. */
static const char *const gs_sources[] = { "files", "blobs", "defs", "refs", "mentions", "imports" };

static int has_stamp_table(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'graph_stamp'", -1,
			       &st, NULL) != SQLITE_OK)
		return 0;
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int gstore_valid(struct refs *r)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (r->o.by_name || !has_stamp_table(r->db))
		return 0;
	if (sqlite3_prepare_v2(r->db, "SELECT version FROM graph_stamp", -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW)
		ok = sqlite3_column_int64(st, 0) == GSTORE_VERSION;
	sqlite3_finalize(st);
	return ok;
}

size_t gstore_file_edges(struct refs *r, struct cg_fedge **out)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT a, b, calls FROM graph_calls ORDER BY a, b");
	size_t n = 0, alloc = 0;

	*out = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(*out, n + 1, alloc);
		(*out)[n++] = (struct cg_fedge){ sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
						 (long)sqlite3_column_int64(st, 2) };
	}
	sqlite3_finalize(st);
	return n;
}

/* The definitions dead looks at (--kind, --path, --lang), for its message
 * when it finds none. */
static size_t count_seen(struct refs *r, const struct cgraph *g)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT kind FROM defs WHERE blob_id = ?1");
	size_t seen = 0;

	for (size_t f = 0; f < g->files_nr; f++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, g->files[f].blob);
		while (sqlite3_step(st) == SQLITE_ROW)
			seen += dead_wanted(r, refs_col(st, 0), g->files[f].path, g->files[f].lang) != 0;
	}
	sqlite3_finalize(st);
	return seen;
}

int gstore_dead(struct refs *r)
{
	struct cgraph g = { 0 };
	sqlite3_stmt *st;
	size_t found = 0;

	cgraph_load_files(&g, r);
	st = refs_prep(r, "SELECT g.file, g.reason, g.namesake_calls, g.self_calls, d.name, d.kind, d.line, "
		       "d.end_line, d.scope FROM graph_dead g JOIN defs d ON d.rowid = g.def ORDER BY g.seq");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int file = sqlite3_column_int(st, 0);
		const char *why = gstore_reason_name(sqlite3_column_int(st, 1));
		struct cg_def d = { 0 };

		if (file < 0 || (size_t)file >= g.files_nr || !why)
			die("index: graph_dead names no file of the index: run 'ci-index build'");
		d.path = g.files[file].path;
		d.lang = g.files[file].lang;
		d.kind = (char *)refs_col(st, 5);
		if (!dead_wanted(r, d.kind, d.path, d.lang))
			continue;
		found++;
		if (r->emitted >= r->o.limit)
			continue;
		d.namesake_calls = sqlite3_column_int64(st, 2);
		d.self_calls = sqlite3_column_int64(st, 3);
		d.name = (char *)refs_col(st, 4);
		d.line = sqlite3_column_int64(st, 6);
		d.end_line = sqlite3_column_int64(st, 7);
		d.scope = sqlite3_column_type(st, 8) == SQLITE_NULL ? NULL : (char *)refs_col(st, 8);
		dead_emit(r, &d, why);
	}
	sqlite3_finalize(st);
	if (!found)
		fprintf(stderr, "%s: nothing unreached among %zu definitions\n", progname, count_seen(r, &g));
	cgraph_release(&g);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* The statements that write the answers of g; SQLITE_OK or SQLite's code. */
static int store(sqlite3 *db, struct refs *r, const struct cgraph *g)
{
	struct cg_fedge *fe;
	size_t fe_nr = cgraph_file_edges(g, &fe);
	sqlite3_stmt *st = NULL;
	struct buf sql = BUF_INIT;
	int rc;

	buf_addstr(&sql, gs_tables);
	for (size_t i = 0; i < sizeof(gs_sources) / sizeof(*gs_sources); i++) {
		static const char *const ev[] = { "INSERT", "UPDATE", "DELETE" };
		for (size_t k = 0; k < 3; k++)
			buf_addf(&sql, "CREATE TRIGGER IF NOT EXISTS graph_stale_%s_%c AFTER %s ON %s "
				 "BEGIN DELETE FROM graph_stamp; END;", gs_sources[i], ev[k][0], ev[k], gs_sources[i]);
	}
	buf_addstr(&sql, "DELETE FROM graph_stamp; DELETE FROM graph_dead; DELETE FROM graph_calls;");
	rc = sqlite3_exec(db, sql.buf, NULL, NULL, NULL);
	buf_release(&sql);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO graph_dead VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < g->defs_nr; i++) {
		const struct cg_def *d = &g->defs[i];
		int why = cgraph_dead_reason(d);
		if (!why || cgraph_entry_reason(d))
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		sqlite3_bind_int(st, 2, d->file);
		sqlite3_bind_int64(st, 3, d->rowid);
		sqlite3_bind_int(st, 4, why);
		sqlite3_bind_int64(st, 5, d->namesake_calls);
		sqlite3_bind_int64(st, 6, d->self_calls);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO graph_calls VALUES (?1, ?2, ?3)", -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < fe_nr; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int(st, 1, fe[i].a);
		sqlite3_bind_int(st, 2, fe[i].b);
		sqlite3_bind_int64(st, 3, fe[i].calls);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(st);
	free(fe);
	if (rc == SQLITE_OK) {
		char stamp[64];
		snprintf(stamp, sizeof(stamp), "INSERT INTO graph_stamp VALUES (%d)", GSTORE_VERSION);
		rc = sqlite3_exec(db, stamp, NULL, NULL, NULL);
	}
	(void)r;
	return rc;
}

int gstore_update(struct refs *r)
{
	sqlite3 *db = r->db;
	struct cgraph g;
	int rc, by_name = r->o.by_name;

	/* read the graph and write its answers in one transaction: a writer
	 * that comes between makes the write fail (SQLITE_BUSY_SNAPSHOT) */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return error("index: %s", sqlite3_errmsg(db));
	r->o.by_name = 0;
	if (gstore_valid(r)) {
		r->o.by_name = by_name;
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		return 0;
	}
	cgraph_load(&g, r, CG_MENTIONS);
	r->o.by_name = by_name;
	rc = store(db, r, &g);
	cgraph_release(&g);
	if (index_damage_seen(r->ix) || (rc & 0xff) == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return 2;	/* opened with INDEX_NOTE_DAMAGE: what was read is not whole */
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return 0;
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	if ((rc & 0xff) == SQLITE_BUSY)
		return 1;	/* another writer: the answers stay unstored (and unused) */
	return error("index: cannot store the call graph's answers: %s", sqlite3_errstr(rc));
}
