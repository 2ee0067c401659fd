/*
 * gstore.c: the whole-index call graph's answers stored in the index
 * (gstore.h): written by ci-index build and update, read by dead and arch.
 */
#include "core/common.h"
#include "graph/gstore.h"
#include "index/index.h"

static const char gs_tables[] =
	"DROP TABLE IF EXISTS graph_dead;"	/* version 1's */
	"CREATE TABLE IF NOT EXISTS graph_stamp(version INTEGER NOT NULL);"
	/* the answers are whole for the index as it was when they were stored,
	 * and every write since was an update's (a session), whose changed
	 * files gsdelta.c knows: the incremental path may start from them */
	"CREATE TABLE IF NOT EXISTS graph_base(version INTEGER NOT NULL);"
	/* a row only inside a ci-index update's transaction (imports: 1 when
	 * an unchanged file's import resolved anew) */
	"CREATE TABLE IF NOT EXISTS graph_session(imports INTEGER NOT NULL DEFAULT 0);"
	/* the files, by an id that outlives the others' coming and going (a
	 * build numbers them in path order from 0) */
	"CREATE TABLE IF NOT EXISTS graph_files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);"
	/* every definition of every file: its uses (cg_def.uses: calls, ambiguous
	 * calls, references and mentions, cgraph.h), self and namesake calls, 1 in entry
	 * when it is an entry point; dead's are those with no use, no entry */
	"CREATE TABLE IF NOT EXISTS graph_defs(fid INTEGER NOT NULL, def INTEGER NOT NULL, uses INTEGER NOT NULL, "
	"self_calls INTEGER NOT NULL, namesake_calls INTEGER NOT NULL, entry INTEGER NOT NULL, "
	"PRIMARY KEY (fid, def)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS graph_defs_dead ON graph_defs(fid) WHERE uses = 0 AND entry = 0;"
	/* calls between files (graph_files ids), counted */
	"CREATE TABLE IF NOT EXISTS graph_calls(a INTEGER NOT NULL, b INTEGER NOT NULL, calls INTEGER NOT NULL, "
	"PRIMARY KEY (a, b)) WITHOUT ROWID;"
	/* the strings of names looked up at run time (cgraph.h's prefixes) */
	"CREATE TABLE IF NOT EXISTS graph_prefixes(tok TEXT NOT NULL);";

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

static int cmp_fedge(const void *x, const void *y)
{
	const struct cg_fedge *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

size_t gstore_file_edges(struct refs *r, const struct cgraph *g, struct cg_fedge **out)
{
	sqlite3_stmt *st = refs_prep(r, "SELECT id, path FROM graph_files");
	size_t n = 0, alloc = 0, ids_nr = 0;
	int *ids = NULL, sorted = 1;	/* graph_files id -> g's file, or -1 */

	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id < 0 || id > (sqlite3_int64)g->files_nr * 4 + 1024)
			die("index: graph_files is not one of ci's: run 'ci-index build'");
		if ((size_t)id >= ids_nr) {
			size_t was = ids_nr;
			ALLOC_GROW(ids, (size_t)id + 1, ids_nr);
			for (size_t i = was; i < ids_nr; i++)
				ids[i] = -1;
		}
		ids[id] = cgraph_file(g, refs_col(st, 1));
	}
	sqlite3_finalize(st);
	*out = NULL;
	st = refs_prep(r, "SELECT a, b, calls FROM graph_calls");
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
		if (a < 0 || b < 0 || (size_t)a >= ids_nr || (size_t)b >= ids_nr || ids[a] < 0 || ids[b] < 0)
			die("index: graph_calls names a file the index lacks: run 'ci-index build'");
		ALLOC_GROW(*out, n + 1, alloc);
		(*out)[n] = (struct cg_fedge){ ids[a], ids[b], (long)sqlite3_column_int64(st, 2) };
		sorted &= !n || cmp_fedge(&(*out)[n - 1], &(*out)[n]) < 0;
		n++;
	}
	sqlite3_finalize(st);
	free(ids);
	if (n && !sorted)
		qsort(*out, n, sizeof(**out), cmp_fedge);
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
	/* in cgraph.c's order of definitions: by path, line, col, name, rowid */
	/* file by file in path order (graph_files' index), each one's sorted:
	 * not a sort of every dead definition of the index (1.3 M on Linux) */
	st = refs_prep(r, "SELECT gf.path, g.self_calls, g.namesake_calls, d.name, d.kind, d.line, d.end_line, d.scope "
		       "FROM graph_files gf CROSS JOIN graph_defs g INDEXED BY graph_defs_dead "
		       "ON g.fid = gf.id AND g.uses = 0 AND g.entry = 0 CROSS JOIN defs d ON d.rowid = g.def "
		       "ORDER BY gf.path, d.line, d.col, d.name, d.rowid");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int file = cgraph_file(&g, refs_col(st, 0));
		struct cg_def d = { 0 };
		struct cg_counts c;
		const char *why;

		if (file < 0)
			die("index: graph_defs names a file the index lacks: run 'ci-index build'");
		d.file = file;
		d.kind = cgraph_kind(&g, refs_col(st, 4));
		if (!dead_wanted(r, cg_kind(&g, &d), cg_path(&g, &d), cg_lang(&g, &d)))
			continue;
		found++;
		if (r->emitted >= r->o.limit)
			break;	/* no count is reported past the limit: the rest need not be read */
		c.self_calls = sqlite3_column_int64(st, 1);
		c.namesake_calls = sqlite3_column_int64(st, 2);
		why = gstore_reason_name(cgraph_dead_reason(&d, c));
		d.line = sqlite3_column_int64(st, 5);
		d.end_line = sqlite3_column_int64(st, 6);
		dead_emit(r, &g, &d, c, refs_col(st, 3), sqlite3_column_type(st, 7) == SQLITE_NULL ? NULL : refs_col(st, 7),
			  why);
	}
	sqlite3_finalize(st);
	if (!found)
		fprintf(stderr, "%s: nothing unreached among %zu definitions\n", progname, count_seen(r, &g));
	cgraph_release(&g);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* The tables, the triggers that empty the stamp on any write and the base
 * on any write outside an update's session; SQLITE_OK or SQLite's code. */
static int make_tables(sqlite3 *db)
{
	struct buf sql = BUF_INIT;
	int rc;

	buf_addstr(&sql, gs_tables);
	for (size_t i = 0; i < sizeof(gs_sources) / sizeof(*gs_sources); i++) {
		static const char *const ev[] = { "INSERT", "UPDATE", "DELETE" };
		for (size_t k = 0; k < 3; k++) {
			buf_addf(&sql, "CREATE TRIGGER IF NOT EXISTS graph_stale_%s_%c AFTER %s ON %s "
				 "BEGIN DELETE FROM graph_stamp; END;", gs_sources[i], ev[k][0], ev[k], gs_sources[i]);
			buf_addf(&sql, "CREATE TRIGGER IF NOT EXISTS graph_base_%s_%c AFTER %s ON %s "
				 "WHEN NOT EXISTS (SELECT 1 FROM graph_session) BEGIN DELETE FROM graph_base; END;",
				 gs_sources[i], ev[k][0], ev[k], gs_sources[i]);
		}
	}
	buf_addstr(&sql, "CREATE TRIGGER IF NOT EXISTS graph_session_imports AFTER UPDATE ON imports "
		   "WHEN EXISTS (SELECT 1 FROM graph_session) BEGIN UPDATE graph_session SET imports = 1; END;");
	rc = sqlite3_exec(db, sql.buf, NULL, NULL, NULL);
	buf_release(&sql);
	return rc;
}

int gstore_def_row(sqlite3 *db, sqlite3_stmt *st, const struct cgraph *g, long fid, const struct cg_def *d,
		   long uses, long self_calls,
		   long namesake_calls)
{
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, fid);
	sqlite3_bind_int64(st, 2, d->rowid);
	sqlite3_bind_int64(st, 3, uses);
	sqlite3_bind_int64(st, 4, self_calls);
	sqlite3_bind_int64(st, 5, namesake_calls);
	sqlite3_bind_int(st, 6, cgraph_entry_reason(g, d) != NULL);
	return sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
}

int gstore_stamp(sqlite3 *db)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "DELETE FROM graph_base; INSERT INTO graph_stamp VALUES (%d); "
		 "INSERT INTO graph_base VALUES (%d)", GSTORE_VERSION, GSTORE_VERSION);
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* The tables emptied, and st the statement that writes a row of graph_calls;
 * SQLITE_OK or SQLite's code. */
static int store_begin(sqlite3 *db, sqlite3_stmt **st)
{
	int rc = make_tables(db);

	*st = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "DELETE FROM graph_stamp; DELETE FROM graph_base; DELETE FROM graph_session; "
				  "DELETE FROM graph_files; DELETE FROM graph_defs; DELETE FROM graph_calls; "
				  "DELETE FROM graph_prefixes", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO graph_calls VALUES (?1, ?2, ?3)", -1, st, NULL);
	return rc;
}

/* The calls between files, written as the graph is read (cg_edge_fn). */
struct edge_sink {
	sqlite3 *db;
	sqlite3_stmt *st;
	int rc;			/* SQLITE_OK, or the first error */
};

static void put_edge(void *arg, int a, int b, long calls)
{
	struct edge_sink *s = arg;

	if (s->rc != SQLITE_OK)
		return;
	sqlite3_reset(s->st);
	sqlite3_bind_int(s->st, 1, a);
	sqlite3_bind_int(s->st, 2, b);
	sqlite3_bind_int64(s->st, 3, calls);
	s->rc = sqlite3_step(s->st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
}

/* The rest of the answers of g (its file edges written as it loaded); SQLITE_OK or SQLite's code. */
static int store(sqlite3 *db, const struct cgraph *g)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO graph_files VALUES (?1, ?2)", -1, &st, NULL);

	for (size_t f = 0; rc == SQLITE_OK && f < g->files_nr; f++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)f);
		sqlite3_bind_text(st, 2, g->files[f].path, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO graph_defs VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < g->defs_nr; i++) {
		const struct cg_def *d = &g->defs[i];
		struct cg_counts c = cgraph_counts(g, i);
		rc = gstore_def_row(db, st, g, d->file, d, gstore_uses(d), c.self_calls, c.namesake_calls);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO graph_prefixes VALUES (?1)", -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < g->prefixes_nr; i++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, g->prefixes[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = gstore_stamp(db);
	return rc;
}

/* The whole graph bound, its answers written; SQLITE_OK or SQLite's code. */
static int store_whole(struct refs *r)
{
	struct edge_sink s = { r->db, NULL, SQLITE_OK };
	struct cgraph g;

	s.rc = store_begin(r->db, &s.st);
	if (s.rc == SQLITE_OK) {
		cgraph_load_edges(&g, r, CG_MENTIONS, put_edge, &s);
		if (s.rc == SQLITE_OK)
			s.rc = store(r->db, &g);
		cgraph_release(&g);
	}
	sqlite3_finalize(s.st);
	return s.rc;
}

int gstore_update(struct refs *r, struct gstore_pre *pre, long *rebound, const char **why)
{
	sqlite3 *db = r->db;
	int rc, by_name = r->o.by_name;

	*rebound = -1;
	*why = NULL;
	/* read the graph and write its answers in one transaction: a writer
	 * that comes between makes the write fail (SQLITE_BUSY_SNAPSHOT) */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return error("index: %s", sqlite3_errmsg(db));
	r->o.by_name = 0;
	if (gstore_valid(r)) {
		r->o.by_name = by_name;
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		*rebound = 0;
		return 0;
	}
	rc = gstore_delta(r, pre, rebound, why);	/* gsdelta.c: -1 when it does not apply */
	if (rc < 0)
		rc = store_whole(r);
	r->o.by_name = by_name;
	if (index_damage_seen(r->ix) || (rc & 0xff) == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		*rebound = -1;
		return 2;	/* opened with INDEX_NOTE_DAMAGE: what was read is not whole */
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return 0;
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	*rebound = -1;
	if ((rc & 0xff) == SQLITE_BUSY)
		return 1;	/* another writer: the answers stay unstored (and unused) */
	return error("index: cannot store the call graph's answers: %s", sqlite3_errstr(rc));
}
