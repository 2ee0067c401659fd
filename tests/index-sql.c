/*
 * index-sql: run SQL on an index with what ci registers on its connections (the
 * ci_code tokenizer, ci_inflate), for tests of the tables the sqlite3 shell
 * cannot open (chunks_fts needs the tokenizer).  Two more functions, for checks:
 *
 *   fts_size(chunks_fts)   FTS5's own size of the current row in tokens
 *                          (xColumnSize(-1)), as bm25() uses it
 *   size_at(sizes, i)      the little-endian uint32 at 4 * i of a chunk_sizes
 *                          row's blob, NULL past its end
 *
 *   index-sql <db> <sql>   rows as the sqlite3 shell prints them ("|" between
 *                          columns, NULL as empty)
 *
 * Exit 0, or 3 with SQLite's message.
 */
#include "core/common.h"
#include "index/index.h"

#include <sqlite3.h>

static int row(void *unused, int n, char **v, char **names)
{
	(void)unused;
	(void)names;
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? "|" : "", v[i] ? v[i] : "");
	putchar('\n');
	return 0;
}

static void fts_size(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
		     sqlite3_value **val)
{
	int n = 0;

	(void)nval;
	(void)val;
	if (api->xColumnSize(fts, -1, &n) != SQLITE_OK) {
		sqlite3_result_error(ctx, "fts_size: xColumnSize failed", -1);
		return;
	}
	sqlite3_result_int(ctx, n);
}

static void size_at(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *p = sqlite3_value_blob(argv[0]);
	sqlite3_int64 i = sqlite3_value_int64(argv[1]);
	int n = sqlite3_value_bytes(argv[0]);

	(void)argc;
	if (!p || i < 0 || 4 * i + 4 > n) {
		sqlite3_result_null(ctx);
		return;
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)index_size_get(p, (size_t)i));
}

int main(int argc, char **argv)
{
	sqlite3 *db;
	fts5_api *api;
	char *err = NULL;

	progname = "index-sql";
	if (argc != 3)
		die("usage: index-sql <db> <sql>");
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		die("%s: %s", argv[1], sqlite3_errmsg(db));
	if (index_register_functions(db) < 0 || !(api = index_fts5_api(db)) ||
	    api->xCreateFunction(api, "fts_size", NULL, fts_size, NULL) != SQLITE_OK ||
	    sqlite3_create_function(db, "size_at", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, size_at, NULL,
				    NULL) != SQLITE_OK)
		die("%s: cannot register functions: %s", argv[1], sqlite3_errmsg(db));
	if (sqlite3_exec(db, argv[2], row, NULL, &err) != SQLITE_OK) {
		error("%s", err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		sqlite3_close(db);
		return 3;
	}
	sqlite3_close(db);
	return close_stdout(0);
}
