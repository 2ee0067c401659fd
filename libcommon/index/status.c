/*
 * libcommon/index/status.c: what the index holds (status), whether it is
 * whole (check), and its removal (drop) (run.h).
 */
#include "core/common.h"
#include "index/engine.h"
#include "index/index.h"
#include "index/fork-server.h"
#include "core/nd.h"
#include "parse/walk.h"
#include "index/vecsnap.h"

#include <errno.h>
#include <sys/stat.h>

static long long count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = ix_prep(db, sql);
	long long n = 0;
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		die("the index is unreadable (%s): run 'ci-index build'", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return n;
}

/* `"key":{name: count, ...}` from sql's rows of (name, count). */
static void count_map(struct buf *b, sqlite3 *db, const char *key, const char *sql)
{
	sqlite3_stmt *st = ix_prep(db, sql);
	int first = 1;

	nd_key(b, key);
	buf_addch(b, '{');
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (!first)
			buf_addch(b, ',');
		first = 0;
		nd_json_string(b, (const char *)sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
		buf_addf(b, ":%lld", (long long)sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	buf_addch(b, '}');
}

/*
 * The "server" key of a status record: the index's server when one answers
 * (its pid, the idle seconds after which it exits, "answering":true); one
 * that took the question but gave no answer within FORK_SERVER_STATUS_MS (a
 * server stopped by SIGSTOP, or hung) with "answering":false and the pid of
 * the process holding its lock (null if not known), and a warning; else null.
 * status never waits longer than that for a server.
 */
static void server_status(struct buf *b, const char *path)
{
	char *sock = fork_server_socket("index", path), *ans = NULL;
	long pid = 0, idle = fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE);
	int rc = sock ? fork_server_query(sock, "pid", &ans, FORK_SERVER_STATUS_MS) : -1;

	if (rc == 0 && sscanf(ans, "PID %ld", &pid) == 1) {
		nd_key(b, "server");
		buf_addf(b, "{\"pid\":%ld,\"idle_exit_s\":%ld,\"answering\":true}", pid, idle);
	} else if (rc == FORK_SERVER_HUNG) {
		pid = fork_server_lock_pid(sock);
		nd_key(b, "server");
		if (pid > 0) {
			buf_addf(b, "{\"pid\":%ld,\"idle_exit_s\":%ld,\"answering\":false}", pid, idle);
			warning("the index's server (pid %ld) does not answer (%d ms): stopped or hung",
				pid, FORK_SERVER_STATUS_MS);
		} else {
			buf_addf(b, "{\"pid\":null,\"idle_exit_s\":%ld,\"answering\":false}", idle);
			warning("the index's server does not answer (%d ms): stopped or hung",
				FORK_SERVER_STATUS_MS);
		}
	} else {
		nd_null(b, "server");
	}
	free(ans);
	free(sock);
}

/* Files added, changed or removed on disk since the index at path (db) was updated. */
static long long status_stale(sqlite3 *db, struct walker *w, const char *path)
{
	struct walk_list list = { 0 };
	sqlite3_stmt *q;
	long long added = 0, changed = 0, indexed, removed;
	size_t i;

	walker_walk(w, "", 0, &list);
	walk_list_finish(&list);
	q = ix_prep(db, "SELECT size, mtime FROM files WHERE path = ?1 "
		    "UNION ALL SELECT size, mtime FROM skipped WHERE path = ?1");
	for (i = 0; i < list.files_nr; i++) {
		int rc2;
		sqlite3_bind_text(q, 1, list.files[i].path, -1, SQLITE_STATIC);
		rc2 = sqlite3_step(q);
		if (rc2 == SQLITE_ROW) {
			if (sqlite3_column_int64(q, 0) != (sqlite3_int64)list.files[i].size ||
			    sqlite3_column_int64(q, 1) != list.files[i].mtime)
				changed++;
		} else if (rc2 == SQLITE_DONE) {
			added++;
		} else {
			die("index '%s' is unreadable (%s): run 'ci-index build'", path, sqlite3_errmsg(db));
		}
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	indexed = count(db, "SELECT (SELECT count(*) FROM files) + (SELECT count(*) FROM skipped)");
	removed = indexed - ((long long)list.files_nr - added);
	walk_list_release(&list);
	return added + changed + (removed > 0 ? removed : 0);
}

/* The status record of the index ix at path (stale: -1 for a snapshot) into b, up to its end. */
static void status_record(struct buf *b, struct ci_index *ix, const char *path, long long stale)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *st;
	long long source_bytes, index_bytes = 0, vectors;
	struct stat sb;
	int snapshot = stale < 0;
	const char *v;

	if (stat(path, &sb) == 0)
		index_bytes += sb.st_size;
	{
		char *wal = xasprintf("%s-wal", path);
		if (stat(wal, &sb) == 0)
			index_bytes += sb.st_size;
		free(wal);
	}
	source_bytes = count(db, "SELECT coalesce(sum(b.size), 0) FROM files f JOIN blobs b ON b.id = f.blob_id");

	nd_begin(b, "status");
	nd_str(b, "index", path);
	v = index_meta(ix, "schema_version");
	nd_int(b, "schema_version", v ? atoll(v) : 0);
	nd_str(b, "root", index_root(ix));
	v = index_meta(ix, "commit");
	nd_str(b, "commit", v && *v ? v : NULL);
	nd_bool(b, "snapshot", snapshot);
	v = index_meta(ix, "rev");
	nd_str(b, "rev", snapshot && v ? v : NULL);
	v = index_meta(ix, "created");
	nd_str(b, "created", v);
	v = index_meta(ix, "updated");
	nd_str(b, "updated", v);
	nd_int(b, "files", count(db, "SELECT count(*) FROM files"));
	nd_int(b, "chunks", count(db, "SELECT count(*) FROM chunks WHERE blob_id IN (SELECT blob_id FROM files)"));
	nd_int(b, "defs", count(db, "SELECT count(*) FROM defs WHERE blob_id IN (SELECT blob_id FROM files)"));
	nd_int(b, "refs", count(db, "SELECT count(*) FROM refs WHERE blob_id IN (SELECT blob_id FROM files)"));
	nd_int(b, "imports", count(db, "SELECT count(*) FROM imports"));
	vectors = count(db, "SELECT count(*) FROM vectors");
	nd_int(b, "vectors", vectors);
	nd_int(b, "chunks_without_vectors",
	       count(db, "SELECT count(*) FROM chunks c WHERE c.blob_id IN (SELECT blob_id FROM files) "
		     "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)"));
	nd_int(b, "commits", count(db, "SELECT count(*) FROM commits"));
	nd_int(b, "commit_vectors", count(db, "SELECT count(*) FROM commit_vectors"));
	nd_int(b, "commits_without_vectors",
	       count(db, "SELECT count(*) FROM commits c WHERE c.message IS NOT NULL "
		     "AND NOT EXISTS (SELECT 1 FROM commit_vectors v WHERE v.sha = c.sha)"));
	/* an embedding run (build or update --embed) was cut short: the next
	 * update embeds what is missing */
	v = index_meta(ix, "embed_pending");
	nd_bool(b, "embedding_incomplete", v && *v);
	nd_int(b, "couplings", count(db, "SELECT count(*) FROM coupling"));
	nd_int(b, "blobs", count(db, "SELECT count(*) FROM blobs"));
	/* the model and format most vectors have (a load may mix them) */
	st = ix_prep(db, "SELECT model, fmt FROM (SELECT model, fmt FROM vectors UNION ALL "
		  "SELECT model, fmt FROM commit_vectors) GROUP BY model, fmt ORDER BY count(*) DESC, 1, 2 LIMIT 1");
	if (sqlite3_step(st) == SQLITE_ROW) {
		nd_str(b, "model", (const char *)sqlite3_column_text(st, 0));
		nd_str(b, "vector_format", (const char *)sqlite3_column_text(st, 1));
	} else {
		nd_null(b, "model");
		nd_null(b, "vector_format");
	}
	sqlite3_finalize(st);
	/* the snapshot of the chunk vectors beside the index (vecsnap.h) */
	if (vectors > 0) {
		uint64_t n;
		int current = vecsnap_current(db, path, &n);
		nd_key(b, "vector_snapshot");
		buf_addf(b, "{\"current\":%s,\"vectors\":%llu,\"changed_since\":%lld}",
			 current ? "true" : "false", (unsigned long long)n,
			 current ? (long long)count(db, "SELECT count(*) FROM vec_changed") : 0LL);
	} else {
		nd_null(b, "vector_snapshot");
	}
	/* files, and chunks (counted as "chunks" counts them: a blob's once), by language */
	count_map(b, db, "languages", "SELECT coalesce(b.lang, 'text'), count(*) FROM files f "
		  "JOIN blobs b ON b.id = f.blob_id GROUP BY 1 ORDER BY 1");
	count_map(b, db, "language_chunks", "SELECT coalesce(b.lang, 'text'), count(*) FROM chunks c "
		  "JOIN blobs b ON b.id = c.blob_id WHERE c.blob_id IN (SELECT blob_id FROM files) "
		  "GROUP BY 1 ORDER BY 1");
	nd_int(b, "imports_resolved", count(db, "SELECT count(*) FROM imports WHERE resolved IS NOT NULL"));
	if (snapshot)
		nd_null(b, "stale");	/* a commit's tree, not the work tree's state */
	else
		nd_int(b, "stale", stale);
	nd_int(b, "index_bytes", index_bytes);
	nd_int(b, "source_bytes", source_bytes);
	nd_num(b, "size_ratio", source_bytes ? (double)index_bytes / (double)source_bytes : 0);
	server_status(b, path);
}

int ix_status(struct ix_run *r, FILE *out)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct ci_index *ix = NULL;
	struct buf b = BUF_INIT;
	char *path;
	long long stale = -1;
	int rc;
	const char *v;

	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = r->o.index ? xstrdup(r->o.index) : index_default_path(w.root);
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc) {
		if (rc > 0)
			error("no index at '%s': run 'ci-index build'", path);
		walker_close(&w);
		free(path);
		return rc > 0 ? EXIT_NOTHING : EXIT_IO;
	}
	/* stale: files added, changed or removed on disk since (a snapshot's files
	 * are a commit's: nothing to compare) */
	v = index_meta(ix, "snapshot");
	if (!(v && *v)) {
		/* in the tree an update would read (the index's own, where it is) */
		if (ix_index_tree(&w, &wo, ix, path) < 0) {
			index_close(ix);
			free(path);
			return EXIT_IO;
		}
		stale = status_stale(index_db(ix), &w, path);
	}
	status_record(&b, ix, path, stale);
	nd_end(&b);
	fwrite(b.buf, 1, b.len, out);
	buf_release(&b);
	index_close(ix);
	walker_close(&w);
	free(path);
	return EXIT_OK;
}

/*
 * check: the whole index read by PRAGMA quick_check (what update does first on
 * an index of at most CHECK_WHOLE_MAX bytes).  EXIT_OK, or the damage said
 * and EXIT_IO.
 */
int ix_check(struct ix_run *r)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct ci_index *ix = NULL;
	char *path, *damage;
	int rc;

	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = r->o.index ? xstrdup(r->o.index) : index_default_path(w.root);
	walker_close(&w);
	if (access(path, F_OK) < 0) {
		error("no index at '%s'", path);
		free(path);
		return EXIT_NOTHING;
	}
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc != 0) {
		/* index_open said what is wrong (another version, damage) */
		free(path);
		return EXIT_IO;
	}
	damage = ix_damage(index_db(ix));
	index_close(ix);
	if (damage) {
		error("index '%s' is damaged (%s): run 'ci-index build'", path, damage);
		free(damage);
		free(path);
		return EXIT_IO;
	}
	free(path);
	return EXIT_OK;
}

int ix_drop(struct ix_run *r)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	char *path, *f;
	const char *suffix[] = { "", "-wal", "-shm", ".new", ".vec", ".vec.tmp", ".lock" };
	int ret = EXIT_NOTHING;
	size_t i;

	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = r->o.index ? xstrdup(r->o.index) : index_default_path(w.root);
	for (i = 0; i < ARRAY_SIZE(suffix); i++) {
		f = xasprintf("%s%s", path, suffix[i]);
		if (unlink(f) == 0) {
			if (!i)
				ret = EXIT_OK;
		} else if (errno != ENOENT) {
			error_errno("cannot remove '%s'", f);
			ret = EXIT_IO;
		}
		free(f);
	}
	if (ret == EXIT_NOTHING)
		error("no index at '%s'", path);
	walker_close(&w);
	free(path);
	return ret;
}

