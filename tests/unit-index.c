/*
 * unit-index.c: TAP tests of the index engine (libcommon/index/run.h) through
 * the library, without the ci-index command: a build of a small temporary
 * tree, an update after changes, damage detection and the rebuild it leads
 * to, and the record loader on its own.
 *
 * The tree is a plain directory (no git), indexed single-threaded with no
 * progress and no server, into an index file given by path.
 */
#include "core/common.h"
#include "index/run.h"
#include "index/engine.h"
#include "index/index.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	if (!cond)
		failures++;
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(p, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		die("cannot write '%s'", p);
	free(p);
}

/* The one integer sql gives on the index at path, or -1. */
static long long query_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* The paths of the index's files, joined by spaces in order (malloc'd). */
static char *files_of(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct buf b = BUF_INIT;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT path FROM files ORDER BY path", -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW)
			buf_addf(&b, "%s%s", b.len ? " " : "", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return buf_detach(&b, NULL);
}

/*
 * The count sql (with ?1 bound to q) gives on the index at path, opened as
 * the commands open it (ci's full-text tokenizer registered), or -1.
 */
static long long index_count(const char *path, const char *sql, const char *q)
{
	struct ci_index *ix;
	sqlite3_stmt *st = NULL;
	long long n = -1;

	if (index_open(&ix, path, INDEX_READONLY) != 0)
		return -1;
	if (sqlite3_prepare_v2(index_db(ix), sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	index_close(ix);
	return n;
}

/* Chunks named name in the index's files. */
static long long chunks_named(const char *path, const char *name)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM chunks WHERE name = %Q AND blob_id IN "
				    "(SELECT blob_id FROM files)", name);
	long long n = query_int(path, sql);

	sqlite3_free(sql);
	return n;
}

static void run_init(struct ix_run *r, const char *index)
{
	ix_run_init(r);
	r->o.index = index;
	r->o.threads = 1;
	r->o.progress = 0;
	r->o.no_server = 1;
	r->o.damage = INDEX_NOTE_DAMAGE;
}

#define TRI_SQL "SELECT count(*) FROM chunks_tri WHERE chunks_tri MATCH ?1"

static void test_build(const char *dir, const char *index)
{
	struct ix_run r;
	char *files;

	run_init(&r, index);
	ok(ix_build(&r, dir, NULL) == EXIT_OK, "build: a tree of two files");
	ix_run_release(&r);
	files = files_of(index);
	ok(!strcmp(files, "a.c b.py"), "build: the files table holds the tree's files");
	free(files);
	ok(chunks_named(index, "alpha") == 1 && chunks_named(index, "beta") == 1 &&
	   chunks_named(index, "gamma") == 1, "build: a chunk for each function, by name");
	ok(query_int(index, "SELECT count(*) FROM defs d JOIN files f ON f.blob_id = d.blob_id "
		     "WHERE f.path = 'a.c' AND d.name = 'beta'") == 1, "build: the definitions of a file");
	ok(query_int(index, "SELECT count(*) FROM meta WHERE key IN ('created', 'updated', 'walked_ns')") == 3,
	   "build: stamped created and updated, and the walk recorded");
	ok(index_count(index, TRI_SQL, "gam AND amm AND mma") == 1 && index_count(index, TRI_SQL, "zzz") == 0,
	   "build: the trigram table finds a piece of text");
}

static void test_update(const char *dir, const char *index)
{
	struct ix_run r;
	char *files;
	long long blobs_before = query_int(index, "SELECT count(*) FROM blobs");

	/* a.c removed, b.py changed, c.c added */
	put(dir, "b.py", "def gamma2():\n    return 44\n\n\ndef delta():\n    return 5\n");
	put(dir, "c.c", "int epsilon(void)\n{\n\treturn 6;\n}\n");
	{
		char *a = xasprintf("%s/a.c", dir);
		unlink(a);
		free(a);
	}
	run_init(&r, index);
	ok(ix_update(&r) == EXIT_OK, "update: after a removal, a change and an addition");
	ix_run_release(&r);
	files = files_of(index);
	ok(!strcmp(files, "b.py c.c"), "update: the files table follows the tree");
	free(files);
	ok(chunks_named(index, "gamma") == 0 && chunks_named(index, "gamma2") == 1 &&
	   chunks_named(index, "delta") == 1 && chunks_named(index, "epsilon") == 1,
	   "update: the changed and added files' chunks, not the old ones'");
	ok(chunks_named(index, "alpha") == 0, "update: the removed file's chunks are not in a file");
	ok(blobs_before == 2 && query_int(index, "SELECT count(*) FROM blobs") == 4,
	   "update: old blobs kept until they outnumber the live ones");

	/* nothing changed: nothing read again */
	run_init(&r, index);
	ok(ix_update(&r) == EXIT_OK && query_int(index, "SELECT count(*) FROM files") == 2,
	   "update: again, nothing changed");
	ix_run_release(&r);
}

/* Overwrite the root page of table or index name of the database at path with 0xa5 bytes. */
static int damage(const char *path, const char *name)
{
	char *sql = sqlite3_mprintf("SELECT rootpage FROM sqlite_schema WHERE name = %Q", name);
	long long page = query_int(path, sql), size = query_int(path, "PRAGMA page_size");
	char *junk;
	int fd, rc = -1;

	sqlite3_free(sql);
	if (page < 2 || size <= 0)
		return -1;
	junk = xmalloc((size_t)size);
	memset(junk, 0xa5, (size_t)size);
	fd = open(path, O_WRONLY);
	if (fd >= 0 && pwrite(fd, junk, (size_t)size, (off_t)((page - 1) * size)) == (ssize_t)size)
		rc = 0;
	if (fd >= 0)
		close(fd);
	free(junk);
	return rc;
}

/* ix_damage of the index at path (malloc'd, or NULL when whole); "open" when it cannot be opened. */
static char *damage_at(const char *path)
{
	sqlite3 *db = NULL;
	char *why;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return xstrdup("open");
	}
	why = ix_damage(db);
	sqlite3_close(db);
	return why;
}

static void test_damage(const char *index)
{
	struct ix_run r;
	char *why = damage_at(index);

	ok(!why, "damage: none in a sound index");
	free(why);
	run_init(&r, index);
	ok(ix_check(&r) == EXIT_OK, "damage: check reads the sound index whole");
	ix_run_release(&r);
	ok(damage(index, "defs_blob") == 0, "damage: a page of an index overwritten");
	why = damage_at(index);
	ok(why && *why, "damage: quick_check finds it");
	free(why);
	/* an update checks a small index whole, and builds it anew */
	run_init(&r, index);
	ok(ix_update(&r) == EXIT_OK, "damage: update rebuilds the index");
	ix_run_release(&r);
	why = damage_at(index);
	ok(!why && query_int(index, "SELECT count(*) FROM files") == 2 && chunks_named(index, "epsilon") == 1,
	   "damage: the rebuilt index is whole and holds the tree");
	free(why);
}

static void test_loader(const char *dir)
{
	char *path = xasprintf("%s/loader.db", dir);
	static const char good[] =
		"{\"_type\":\"file\",\"path\":\"x.c\",\"blob\":\"0123456789012345678901234567890123456789\","
		"\"lang\":\"c\",\"size\":20,\"lines\":2}\n"
		"{\"_type\":\"chunk\",\"path\":\"x.c\",\"start_line\":1,\"end_line\":2,\"kind\":\"function\","
		"\"name\":\"zeta\",\"text\":\"int zeta(void)\\n{ return 7; }\"}\n"
		"{\"_type\":\"def\",\"path\":\"x.c\",\"name\":\"zeta\",\"kind\":\"function\",\"line\":1}\n"
		"{\"_type\":\"unknown\",\"anything\":1}\n";
	static const char orphan[] =
		"{\"_type\":\"chunk\",\"path\":\"y.c\",\"start_line\":1,\"end_line\":1,\"kind\":\"function\","
		"\"text\":\"x\"}\n";
	struct loader ld;
	sqlite3 *db;

	unlink(path);
	db = ix_create_db(path, dir);
	ok(db != NULL, "loader: a new database");
	if (!db) {
		free(path);
		return;
	}
	loader_init(&ld, db, dir, VEC_F32);
	ok(load_buffer(&ld, good, sizeof(good) - 1) == 0 && loader_finish_file(&ld) == 0 &&
	   df_finish(db, &ld.df) == 0, "loader: a file, its chunk and definition; an unknown type ignored");
	ok(ld.files == 1 && ld.chunks == 1 && ld.defs == 1 && ld.refs == 0, "loader: counts what it stored");
	ok(load_buffer(&ld, orphan, sizeof(orphan) - 1) < 0, "loader: a chunk not after its file record fails");
	loader_release(&ld);
	sqlite3_close(db);
	ok(chunks_named(path, "zeta") == 1 &&
	   index_count(path, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1", "zeta") == 1,
	   "loader: the chunk in chunks and in the full-text index");
	ok(query_int(path, "SELECT count(*) FROM blobs WHERE segs IS NULL OR length(segs) = 0") == 1,
	   "loader: the blob stored once, one segment");
	free(path);
}

/* The rows of sql on the database at path, one line each ("|" between columns, blobs in hex), malloc'd. */
static char *rows_of(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct buf b = BUF_INIT;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int i = 0; i < sqlite3_column_count(st); i++) {
				const unsigned char *v = sqlite3_column_blob(st, i);
				int n = sqlite3_column_bytes(st, i);
				buf_addf(&b, "%s%d:", i ? "|" : "", sqlite3_column_type(st, i));
				for (int j = 0; j < n; j++)
					buf_addf(&b, "%02x", v[j]);
			}
			buf_addch(&b, '\n');
		}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return buf_detach(&b, NULL);
}

/*
 * Records parsed and compressed elsewhere (ld_prepare(), as ci-index's
 * parsing threads do) are stored as load_buffer() stores their text: the
 * same rows, the same compressed texts, the same message for a bad line.
 */
static void test_prepared(const char *dir)
{
	char *a = xasprintf("%s/buffer.db", dir), *b = xasprintf("%s/prepared.db", dir);
	struct buf recs = BUF_INIT, bad = BUF_INIT, body = BUF_INIT;
	const char *paths[2] = { a, b };
	struct ld_prepared *lp;
	size_t bytes = 0;
	char *ra, *rb;
	int rc[2] = { -1, -1 };

	for (int i = 0; i < 40; i++)
		buf_addf(&body, "\\tvalue = compute(value, %d);\\n", i % 7);
	buf_addf(&recs, "{\"_type\":\"file\",\"path\":\"p.c\",\"blob\":\"%s\",\"lang\":\"c\","
		 "\"size\":900,\"lines\":42}\n", "1123456789012345678901234567890123456789");
	buf_addf(&recs, "{\"_type\":\"chunk\",\"path\":\"p.c\",\"start_line\":1,\"end_line\":42,"
		 "\"kind\":\"function\",\"name\":\"long_one\",\"text\":\"int long_one(void)\\n{\\n%s}\"}\n", body.buf);
	buf_addstr(&recs, "{\"_type\":\"chunk\",\"path\":\"p.c\",\"start_line\":43,\"end_line\":43,"
		   "\"kind\":\"function\",\"name\":\"short_one\",\"text\":\"int short_one;\"}\n");
	buf_addstr(&recs, "{\"_type\":\"def\",\"path\":\"p.c\",\"name\":\"long_one\",\"kind\":\"function\",\"line\":1}\n");
	for (int k = 0; k < 2; k++) {
		struct loader ld;
		sqlite3 *db;

		unlink(paths[k]);
		if (!(db = ix_create_db(paths[k], dir)))
			continue;
		loader_init(&ld, db, dir, VEC_F32);
		if (k == 0) {
			rc[k] = load_buffer(&ld, recs.buf, recs.len);
		} else {
			lp = ld_prepare(recs.buf, recs.len, &bytes);
			rc[k] = load_prepared(&ld, lp);
			ld_prepared_free(lp);
		}
		if (rc[k] == 0)
			rc[k] = loader_finish_file(&ld) < 0 || df_finish(db, &ld.df) < 0 ? -1 : 0;
		loader_release(&ld);
		sqlite3_close(db);
	}
	ok(rc[0] == 0 && rc[1] == 0, "prepared records: stored without a message");
	ok(bytes > recs.len, "prepared records: their memory counted above their text's");
	ra = rows_of(a, "SELECT * FROM chunks ORDER BY id");
	rb = rows_of(b, "SELECT * FROM chunks ORDER BY id");
	ok(*ra && !strcmp(ra, rb), "prepared records: the same chunk rows as from the text");
	free(ra);
	free(rb);
	ok(query_int(b, "SELECT count(*) FROM chunks WHERE typeof(text) = 'blob'") == 1 &&
	   query_int(b, "SELECT count(*) FROM chunks WHERE typeof(text) = 'text'") == 1,
	   "prepared records: the long text compressed, the short one as it is");
	ra = rows_of(a, "SELECT * FROM defs ORDER BY rowid");
	rb = rows_of(b, "SELECT * FROM defs ORDER BY rowid");
	ok(*ra && !strcmp(ra, rb), "prepared records: the same definitions");
	free(ra);
	free(rb);
	ok(index_count(b, TRI_SQL, "com AND omp AND mpu AND put AND ute") == 1 && index_count(b, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1", "long_one") == 1,
	   "prepared records: in the trigram and full-text tables");

	/* a bad line: the records before it stored, the same message */
	buf_addstr(&bad, "{\"_type\":\"file\",\"path\":\"q.c\",\"blob\":\"2123456789012345678901234567890123456789\"}\n");
	buf_addstr(&bad, "{\"_type\":\"chunk\", oops}\n{\"_type\":\"def\"}\n");
	{
		struct loader ld;
		sqlite3 *db = ix_create_db(b, dir);
		long files;

		lp = ld_prepare(bad.buf, bad.len, NULL);
		ok(lp->nr == 1 && lp->bad != NULL, "prepared records: parsing stops at the bad line, and says why");
		if (db) {
			loader_init(&ld, db, dir, VEC_F32);
			ld.lineno = 10;
			rc[1] = load_prepared(&ld, lp);
			files = ld.files;
			ok(rc[1] < 0 && files == 1 && ld.lineno == 12, "prepared records: the bad line fails at its line number");
			loader_release(&ld);
			sqlite3_close(db);
		}
		ld_prepared_free(lp);
	}
	buf_release(&recs);
	buf_release(&bad);
	buf_release(&body);
	free(a);
	free(b);
}

/*
 * chunks_tri's tokenizer gives each trigram once a row when the row is
 * stored: the (trigram, row) pairs are those of SQLite's own tokenizer, the
 * row's token count is its distinct trigrams, and queries are unchanged.
 */
static void test_trigram_once(const char *dir)
{
	char *ours = xasprintf("%s/tri-ours.db", dir), *theirs = xasprintf("%s/tri-sqlite.db", dir);
	static const char text[] = "aaaaaa abcabcabc \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 xyz xyz";
	const char *paths[2] = { ours, theirs };
	sqlite3 *db = NULL;
	char *v1, *v2;

	for (int k = 0; k < 2; k++) {
		sqlite3 *d = NULL;
		sqlite3_stmt *st = NULL;

		unlink(paths[k]);
		if (sqlite3_open(paths[k], &d) != SQLITE_OK || (k == 0 && index_register_functions(d) < 0) ||
		    sqlite3_exec(d, "CREATE VIRTUAL TABLE t USING fts5(text, content='', "
				 "tokenize='trigram case_sensitive 1', detail='none')", NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(d, "INSERT INTO t(rowid, text) VALUES (7, ?1)", -1, &st, NULL) != SQLITE_OK) {
			sqlite3_finalize(st);
			sqlite3_close(d);
			continue;
		}
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_finalize(st);
		sqlite3_close(d);
	}
	/* SQLite's tokenizer's pairs and ours, read through fts5vocab on one connection */
	v1 = v2 = NULL;
	if (sqlite3_open(theirs, &db) == SQLITE_OK) {
		char *sql = sqlite3_mprintf("ATTACH %Q AS o", ours);
		sqlite3_stmt *st = NULL;
		struct buf b1 = BUF_INIT, b2 = BUF_INIT;

		sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
		if (sqlite3_exec(db, "CREATE VIRTUAL TABLE temp.vt USING fts5vocab(main, t, 'instance');"
				 "CREATE VIRTUAL TABLE temp.vo USING fts5vocab(o, t, 'instance');", NULL, NULL, NULL) == SQLITE_OK) {
			struct buf *out[2] = { &b1, &b2 };
			const char *q[2] = { "SELECT term, doc FROM temp.vt ORDER BY term", "SELECT term, doc FROM temp.vo ORDER BY term" };
			for (int k = 0; k < 2; k++) {
				if (sqlite3_prepare_v2(db, q[k], -1, &st, NULL) != SQLITE_OK)
					continue;
				while (sqlite3_step(st) == SQLITE_ROW)
					buf_addf(out[k], "%s %lld\n", (const char *)sqlite3_column_text(st, 0),
						 (long long)sqlite3_column_int64(st, 1));
				sqlite3_finalize(st);
			}
		}
		v1 = buf_detach(&b1, NULL);
		v2 = buf_detach(&b2, NULL);
	}
	sqlite3_close(db);
	ok(v1 && v2 && *v1 && !strcmp(v1, v2), "trigram once a row: the same (trigram, row) pairs as SQLite's tokenizer");
	free(v1);
	free(v2);
	/* the text's 27 trigrams, 17 of them distinct: the row's size (one varint) */
	ok(query_int(theirs, "SELECT unicode(CAST(sz AS TEXT)) FROM t_docsize WHERE id = 7") == 27 &&
	   query_int(ours, "SELECT unicode(CAST(sz AS TEXT)) FROM t_docsize WHERE id = 7") == 17,
	   "trigram once a row: the row's token count is its distinct trigrams");
	{
		sqlite3 *d = NULL;
		sqlite3_stmt *st = NULL;
		long long n = -1;

		if (sqlite3_open_v2(ours, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK && index_register_functions(d) == 0 &&
		    sqlite3_prepare_v2(d, "SELECT count(*) FROM t WHERE t MATCH 'abc AND bca AND cab AND abc AND xyz AND \xc3\xa9\xc3\xa9\xc3\xa9'",
				       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(d);
		ok(n == 1, "trigram once a row: queries with repeated trigrams find the row");
	}
	free(ours);
	free(theirs);
}

int main(void)
{
	char tmpl[] = "/tmp/unit-index.XXXXXX";
	char *dir, *index, *cwd;

	util_init("unit-index");
	dir = mkdtemp(tmpl);
	if (!dir)
		die("mkdtemp: %s", strerror(errno));
	index = xasprintf("%s/.ci-index/index.db", dir);
	put(dir, "a.c", "int alpha(void)\n{\n\treturn 1;\n}\n\nint beta(int x)\n{\n\treturn x + 2;\n}\n");
	put(dir, "b.py", "def gamma():\n    return 4\n");
	cwd = getcwd(NULL, 0);
	if (chdir(dir) < 0)
		die("cannot enter '%s'", dir);
	test_build(dir, index);
	test_update(dir, index);
	test_damage(index);
	test_loader(dir);
	test_prepared(dir);
	test_trigram_once(dir);
	if (chdir(cwd) < 0)
		die("cannot enter '%s'", cwd);
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);
		if (system(cmd) != 0)
			failures++;
		free(cmd);
	}
	free(cwd);
	free(index);
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
