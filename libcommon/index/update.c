/*
 * libcommon/index/update.c: an update of the index (run.h).
 *
 * Shaped by an agent's edit loop: an update after one changed file stats the
 * tree (or, in a worker of the index's server, only the directories its
 * watch saw change: server.h), re-reads that file through the same loader
 * as a build, and commits one transaction, in tens of milliseconds.  A
 * damaged index, found first on a small one, is built anew.
 */
#include "core/common.h"
#include "index/engine.h"
#include "index/index.h"
#include "parse/blob.h"
#include "index/server.h"
#include "parse/chunkrun.h"
#include "parse/chunk.h"
#include "parse/walk.h"
#include "index/vecsnap.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

struct known {
	char *path;		/* indexed path */
	int64_t size, mtime;	/* as indexed */
	int64_t blob_id;	/* its blobs.id (0: left out) */
	unsigned char seen;	/* still on disk */
	unsigned char skipped;	/* left out (binary...), not in files */
	unsigned char reread;	/* changed: read again */
	char reason[16];	/* why it was left out */
};

static int cmp_known(const void *a, const void *b)
{
	return strcmp(((const struct known *)a)->path, ((const struct known *)b)->path);
}

/*
 * The walk of an update, from the record of the last one (see walker_walk_known):
 * a directory whose mtime did not change is not read again, its known files are
 * only lstat'ed.  Returns 0, or 1 when there is no usable record or the ignore
 * rules changed (list untouched: the caller walks).
 */
static int quick_walk(struct ix_run *r, struct ci_index *ix, struct walker *w, const struct known *known, size_t known_nr,
		      const char *path, struct walk_list *list)
{
	struct walk_known_hint hint = { NULL, NULL, ix_server_clean, NULL };
	uint64_t *sizes = NULL;
	int64_t *mtimes = NULL;
	const char *v = index_meta(ix, "walked_ns");
	struct walk_dir *dirs = NULL;
	size_t nr = 0, alloc = 0, i;
	const char **paths;
	sqlite3_stmt *st;
	int64_t racy_ns;
	int rootfd, ok, rc = 1;

	if (!v || !*v)
		return 1;
	racy_ns = (int64_t)atoll(v) - 1000000000;
	rootfd = open(w->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok = rootfd >= 0 && walk_rules_unchanged(index_meta(ix, "rules"), rootfd);
	if (rootfd >= 0)
		close(rootfd);
	if (!ok || sqlite3_prepare_v2(index_db(ix), "SELECT path, mtime FROM dirs ORDER BY path", -1, &st, NULL) != SQLITE_OK)
		return 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(dirs, nr + 1, alloc);
		dirs[nr].path = xstrdup((const char *)sqlite3_column_text(st, 0));
		dirs[nr].mtime_ns = sqlite3_column_int64(st, 1);
		dirs[nr].entered = 1;
		nr++;
	}
	sqlite3_finalize(st);
	if (nr) {
		paths = xcalloc(known_nr + 1, sizeof(*paths));
		for (i = 0; i < known_nr; i++)
			paths[i] = known[i].path;
		if (ix_server_hint(r->srv, path, w->root)) {
			/* the server's watch says where to look */
			sizes = xcalloc(known_nr + 1, sizeof(*sizes));
			mtimes = xcalloc(known_nr + 1, sizeof(*mtimes));
			for (i = 0; i < known_nr; i++) {
				sizes[i] = (uint64_t)known[i].size;
				mtimes[i] = known[i].mtime;
			}
			hint.size = sizes;
			hint.mtime = mtimes;
			hint.ctx = r->srv;
		}
		if (sizes && verbosity) {
			size_t clean = 0;
			for (i = 0; i < nr; i++)
				clean += ix_server_clean(dirs[i].path, r->srv);
			fprintf(stderr, "%s: the server's watch: %zu of %zu directories unchanged%s\n", progname,
				clean, nr, ix_server_broken(r->srv) ? " (some could not be watched)" : "");
		}
		rc = walker_walk_known(w, dirs, nr, racy_ns, paths, known_nr, sizes ? &hint : NULL, list) < 0;
		free(sizes);
		free(mtimes);
		if (rc)
			walk_list_release(list);
		free(paths);
	}
	for (i = 0; i < nr; i++)
		free(dirs[i].path);
	free(dirs);
	return rc;
}

/*
 * What PRAGMA quick_check finds wrong with the index db: NULL when nothing,
 * else its first complaint or the error it ended with (malloc'd).  It reads
 * every page, so damage anywhere is found, not only in the pages an update
 * happens to read (those of definitions are read by ci-refs alone): about
 * 12 ms for ci's own 5 MB index with its pages cached, 2 to 3 ms a MB.
 */
char *ix_damage(sqlite3 *db)
{
	sqlite3_stmt *st;
	char *why = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
		return xstrdup(sqlite3_errmsg(db));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (!t || strcmp(t, "ok")) {
			why = xstrdup(t ? t : "quick_check: no answer");
			for (char *p = why; (p = strchr(p, '\n')); )
				*p = ' ';	/* one line of a message */
		}
	} else {
		why = xstrdup(sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return why;
}

/*
 * Whether an update checks the whole index first (ix_damage): when the index is
 * at most CHECK_WHOLE_MAX bytes (a check of some 80 ms at most), or
 * CI_INDEX_CHECK=always; never with CI_INDEX_CHECK=never.  A larger index
 * (Linux's: gigabytes, seconds a check) relies on SQLite reporting the damage
 * an update reads, as every command does; `ci-index check` reads it all.
 */
#define CHECK_WHOLE_MAX (32L << 20)

static int check_whole(const char *path)
{
	static const char *const words[] = { "auto", "always", "never", NULL };
	int how = env_choice("CI_INDEX_CHECK", words, 0, ENV_DIE);
	struct stat st;

	if (how)
		return how == 1;
	return stat(path, &st) == 0 && st.st_size <= CHECK_WHOLE_MAX;
}

/* An update under way: what its steps share. */
struct update {
	struct ix_run *r;		/* the run */
	struct walk_opts wo;		/* the walk's options */
	struct walker w;		/* the tree at "." */
	struct walk_list list;		/* its files now */
	struct walk_list todo;		/* those to read again */
	char *path;			/* the index */
	int lock;			/* its lock */
	struct ci_index *ix;		/* open on it */
	sqlite3 *db;			/* its database */
	struct known *known;		/* what it holds, in strcmp order of path */
	size_t known_nr, known_alloc;
	const char **paths;		/* list's paths, for imports */
	struct fileset fs;		/* the same, for ictx */
	struct import_ctx ictx;		/* how imports resolve */
	struct loader ld;		/* the changed files into the index */
	struct feed fd;			/* chunk_run's results into ld */
	struct progress pg;		/* the phase's progress */
	char *damage;			/* what ix_damage found, or NULL */
	int64_t racy;			/* a file of a later mtime (s) than the last update is hashed */
	int64_t walked;			/* when the walk began (ns) */
	long unchanged, reread, reused, removed, added;	/* counts, for -v */
};

#define UPDATE_BUILD (-1)	/* no usable index: build one */
#define UPDATE_REBUILD (-2)	/* the index is damaged: build it anew */

/* Open the tree, the index and its lock.  EXIT_OK, UPDATE_BUILD, or an exit status (all let go). */
static int update_open(struct update *u)
{
	struct ix_run *r = u->r;
	int rc;

	if (walker_open(&u->w, ".", &u->wo) < 0)
		return EXIT_IO;
	u->path = r->o.index ? xstrdup(r->o.index) : index_default_path(u->w.root);
	free(r->wrote);
	r->wrote = xstrdup(u->path);
	if (access(u->path, F_OK) < 0 && errno == ENOENT) {
		/* no index yet (perhaps not even its directory): build one */
		walker_close(&u->w);
		if (verbosity)
			fprintf(stderr, "%s: no index at '%s': building it\n", progname, u->path);
		return UPDATE_BUILD;
	}
	if ((u->lock = ix_lock_dir(r, u->path)) < 0) {
		walker_close(&u->w);
		return EXIT_IO;
	}
	rc = index_open(&u->ix, u->path, r->o.damage);
	if (rc != 0) {
		/* none, another version, or corrupt: build anew */
		close(u->lock);
		walker_close(&u->w);
		if (rc > 0 && verbosity)
			fprintf(stderr, "%s: no index at '%s': building it\n", progname, u->path);
		else if (rc < 0)
			fprintf(stderr, "%s: rebuilding the index\n", progname);
		return UPDATE_BUILD;
	}
	u->db = index_db(u->ix);
	return EXIT_OK;
}

/* What the index holds (files, and files left out).  0, or -1 when it is damaged. */
static int update_read_known(struct update *u)
{
	sqlite3 *db = u->db;
	sqlite3_stmt *st;
	int corrupt;

	/* blob ids, not the blobs: a join and 10,000 copies of 40 digits were a
	 * tenth of an update; a changed file's blob is looked up by its digits */
	st = ix_prep(db, "SELECT path, size, mtime, blob_id, NULL FROM files "
		  "UNION ALL SELECT path, size, mtime, 0, reason FROM skipped");
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct known *k;
		ALLOC_GROW(u->known, u->known_nr + 1, u->known_alloc);
		k = &u->known[u->known_nr++];
		memset(k, 0, sizeof(*k));
		k->path = xstrdup((const char *)sqlite3_column_text(st, 0));
		k->size = sqlite3_column_int64(st, 1);
		k->mtime = sqlite3_column_int64(st, 2);
		k->blob_id = sqlite3_column_int64(st, 3);
		k->skipped = k->blob_id <= 0;
		if (k->skipped)
			snprintf(k->reason, sizeof(k->reason), "%s", (const char *)sqlite3_column_text(st, 4));
	}
	corrupt = sqlite3_errcode(db) == SQLITE_CORRUPT || sqlite3_errcode(db) == SQLITE_NOTADB;
	sqlite3_finalize(st);
	return corrupt ? -1 : 0;
}

/*
 * File f of the walk, known to the index as k (NULL: new) with another size
 * or mtime: 1 when its content is the one indexed (a touch: its size and
 * mtime are stored with touch), else 0 (*reused: a content the index holds).
 */
static int update_touched(struct update *u, const struct walk_file *f, const struct known *k,
			  sqlite3_stmt *touch, int *reused)
{
	sqlite3 *db = u->db;
	char *abs, *data = NULL, blob[41];
	size_t n;
	int same = 0;

	*reused = 0;
	abs = xasprintf("%s/%s", u->w.root, f->path);
	if (read_file(abs, &data, &n) == 0 && blob_id(blob, data, n) == 0) {
		sqlite3_stmt *q = ix_prep(db, "SELECT id FROM blobs WHERE blob = ?1");
		sqlite3_int64 have = 0;
		sqlite3_bind_text(q, 1, blob, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW)
			have = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
		if (have && k && !k->skipped && have == k->blob_id) {
			/* touched, the same content: only its size and mtime */
			sqlite3_bind_text(touch, 1, f->path, -1, SQLITE_STATIC);
			sqlite3_bind_int64(touch, 2, (sqlite3_int64)n);
			sqlite3_bind_int64(touch, 3, f->mtime);
			sqlite3_bind_text(touch, 4, blob, -1, SQLITE_STATIC);
			ix_step_done(db, touch);
			same = 1;
		} else if (have) {
			*reused = 1;
		}
	}
	free(data);
	free(abs);
	return same;
}

/*
 * What changed: new paths, or a size or mtime that differs (both lists are
 * in strcmp order: one pass over the two), into u->todo.
 */
static void update_changes(struct update *u)
{
	sqlite3_stmt *touch = ix_prep(u->db, "UPDATE files SET size = ?2, mtime = ?3, "
				      "blob_id = (SELECT id FROM blobs WHERE blob = ?4) WHERE path = ?1");
	size_t i, j;

	for (i = 0, j = 0; i < u->list.files_nr; i++) {
		struct walk_file *f = &u->list.files[i];
		struct known *k = NULL;
		int c = 1, reused;

		while (j < u->known_nr && (c = strcmp(u->known[j].path, f->path)) < 0)
			j++;
		if (j < u->known_nr && c == 0)
			k = &u->known[j];
		if (k) {
			k->seen = 1;
			if (k->size == (int64_t)f->size && k->mtime == f->mtime && (f->mtime < u->racy || k->skipped)) {
				u->unchanged++;
				continue;
			}
		}
		if (k)
			k->reread = 1;
		/* the content may be one the index already holds (a branch switch, a touch) */
		if (update_touched(u, f, k, touch, &reused)) {
			u->unchanged++;
			continue;
		}
		u->reused += reused;
		if (!k)
			u->added++;
		ALLOC_GROW(u->todo.files, u->todo.files_nr + 1, u->todo.files_alloc);
		u->todo.files[u->todo.files_nr] = *f;
		u->todo.files[u->todo.files_nr].path = xstrdup(f->path);
		u->todo.files_nr++;
	}
	sqlite3_finalize(touch);
}

/* Files gone from disk, and changed files that were left out before.  An exit status. */
static int update_forget(struct update *u)
{
	sqlite3 *db = u->db;
	sqlite3_stmt *del_file, *del_imp;
	int ret = EXIT_OK;
	size_t i;

	if (index_exec(db, "DELETE FROM skipped") < 0)
		ret = EXIT_IO;
	del_file = ix_prep(db, "DELETE FROM files WHERE path = ?1");
	del_imp = ix_prep(db, "DELETE FROM imports WHERE path = ?1");
	for (i = 0; i < u->known_nr; i++) {
		struct known *k = &u->known[i];
		if (k->skipped) {
			/* still there and unchanged: still left out */
			if (k->seen && !k->reread) {
				sqlite3_stmt *ks = ix_prep(db, "INSERT OR REPLACE INTO skipped(path, size, mtime, reason) "
							"VALUES (?1, ?2, ?3, ?4)");
				sqlite3_bind_text(ks, 4, k->reason, -1, SQLITE_STATIC);
				sqlite3_bind_text(ks, 1, k->path, -1, SQLITE_STATIC);
				sqlite3_bind_int64(ks, 2, k->size);
				sqlite3_bind_int64(ks, 3, k->mtime);
				ix_step_done(db, ks);
				sqlite3_finalize(ks);
			}
			continue;
		}
		if (k->seen)
			continue;
		sqlite3_bind_text(del_file, 1, k->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(del_imp, 1, k->path, -1, SQLITE_STATIC);
		if (ix_step_done(db, del_file) < 0 || ix_step_done(db, del_imp) < 0)
			ret = EXIT_IO;
		u->removed++;
	}
	sqlite3_finalize(del_file);
	sqlite3_finalize(del_imp);
	return ret;
}

/* Files came or went: an unchanged file's import may now resolve elsewhere.  An exit status. */
static int update_resolve_imports(struct update *u)
{
	sqlite3 *db = u->db;
	sqlite3_stmt *q = ix_prep(db, "SELECT i.rowid, i.path, i.target, i.resolved, b.lang FROM imports i "
			       "JOIN files f ON f.path = i.path JOIN blobs b ON b.id = f.blob_id");
	sqlite3_stmt *up = ix_prep(db, "UPDATE imports SET resolved = ?2 WHERE rowid = ?1");
	int ret = EXIT_OK;

	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *lang = (const char *)sqlite3_column_text(q, 4);
		const char *old = (const char *)sqlite3_column_text(q, 3);
		char *now;
		if (!lang)
			continue;
		now = import_resolve(&u->ictx, lang, (const char *)sqlite3_column_text(q, 1),
				     (const char *)sqlite3_column_text(q, 2));
		if ((now == NULL) != (old == NULL) || (now && strcmp(now, old))) {
			sqlite3_bind_int64(up, 1, sqlite3_column_int64(q, 0));
			if (now)
				sqlite3_bind_text(up, 2, now, -1, SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(up, 2);
			if (ix_step_done(db, up) < 0)
				ret = EXIT_IO;
		}
		free(now);
	}
	sqlite3_finalize(q);
	sqlite3_finalize(up);
	return ret;
}

/* Re-read what changed, through the same loader as a build (ret: the status so far).  An exit status. */
static int update_reread(struct update *u, int ret)
{
	struct ix_run *r = u->r;
	struct chunk_opts co = { CHUNK_WANT_ALL, CHUNK_DEFAULT_MAX_LINES };
	sqlite3 *db = u->db;
	int gc = 0, config = 0;

	u->paths = walk_list_paths(&u->list);
	u->fs.paths = u->paths;
	u->fs.nr = u->list.files_nr;
	u->ictx.root = u->w.root;
	u->ictx.files = &u->fs;
	if (u->todo.files_nr || u->added || u->removed)
		import_ctx_load(&u->ictx);	/* not for an update that finds nothing */
	progress_stop(&u->pg);
	progress_start(&u->pg, r->o.progress, "updating", "files", u->todo.files_nr, 0);
	loader_init(&u->ld, db, u->w.root, ix_vector_format(r, db));
	feed_init(&u->fd, r, &u->ld, &u->pg);
	if (ret == EXIT_OK &&
	    (chunk_run(&u->w, &u->todo, &co, &u->ictx, r->o.threads, &u->fd.hook, feed_result, &u->fd) < 0 ||
	     loader_finish_file(&u->ld) < 0 || (gc = ix_collect_garbage(db)) < 0))
		ret = EXIT_IO;
	if (gc > 0)
		u->ld.df.full = 1;	/* chunks went: count every term anew */
	if (ret == EXIT_OK && (df_finish(db, &u->ld.df) < 0 || ix_record_walk(db, &u->w, &u->list, u->walked) < 0))
		ret = EXIT_IO;
	for (size_t i = 0; !config && i < u->todo.files_nr; i++)
		config = import_is_config(u->todo.files[i].path);	/* a changed go.mod, tsconfig... */
	if (ret == EXIT_OK && (u->added || u->removed || config) && update_resolve_imports(u) != EXIT_OK)
		ret = EXIT_IO;
	progress_stop(&u->pg);
	{
		/* an embedding run that was cut short goes on where it stopped */
		const char *pending = index_meta(u->ix, "embed_pending");
		int resume = pending && *pending;
		if (ret == EXIT_OK && (r->o.embed || resume || ix_has_vectors(db)) &&
		    ix_embed_missing(r, &u->ld, r->o.embed || resume, 1) < 0)
			ret = EXIT_IO;
	}
	u->reread = u->ld.files;
	loader_release(&u->ld);
	feed_release(&u->fd);
	return ret;
}

/* The files the update re-reads or forgets, for the graph store's hook. */
static void update_hook_changed(struct update *u)
{
	struct ix_run *r = u->r;
	const char **paths = xcalloc(u->todo.files_nr + u->known_nr + 1, sizeof(*paths));
	size_t n = 0, i = 0, j = 0;

	/* both in strcmp order: merged */
	while (i < u->todo.files_nr || j < u->known_nr) {
		const struct known *k = j < u->known_nr ? &u->known[j] : NULL;
		if (k && (k->seen || k->skipped)) {
			j++;
			continue;
		}
		if (i < u->todo.files_nr && (!k || strcmp(u->todo.files[i].path, k->path) < 0))
			paths[n++] = u->todo.files[i++].path;
		else
			paths[n++] = u->known[j++].path;	/* gone from the tree */
	}
	r->graph_hook(r->graph_data, u->ix, IX_GRAPH_CHANGED, paths, n);
	free(paths);
}

/* Commit (ret: the status so far), or roll back.  An exit status, or UPDATE_REBUILD. */
static int update_commit(struct update *u, int ret)
{
	sqlite3 *db = u->db;
	int corrupt = 0;

	if (u->r->graph_hook)
		u->r->graph_hook(u->r->graph_data, u->ix, ret == EXIT_OK ? IX_GRAPH_COMMIT : IX_GRAPH_ABORT, NULL, 0);

	if (ret == EXIT_OK) {
		ix_stamp(db, u->w.root, "updated", NULL);
		if (strcmp(index_root(u->ix), u->w.root))
			ix_set_meta(db, "root", u->w.root);	/* a moved repository's: where it is now */
		if (index_exec(db, "COMMIT") < 0 || vecsnap_refresh(db, u->path) < 0)
			ret = EXIT_IO;
		else if (ix_server_hint_applies(u->r->srv, u->path, u->w.root)) {
			/* the server's index is up to date with what it was told */
			char *updated = ix_get_meta(db, "updated");
			ix_server_report_done(u->r->srv, updated);
			free(updated);
		}
	} else {
		corrupt = (sqlite3_errcode(db) & 0xff) == SQLITE_CORRUPT;
		index_exec(db, "ROLLBACK");
	}
	if (corrupt)
		return UPDATE_REBUILD;
	if (verbosity)
		fprintf(stderr, "%s: %ld unchanged, %ld re-read, %ld reused from the index, %ld removed\n",
			progname, u->unchanged, u->reread - (u->reused > u->reread ? u->reread : 0), u->reused,
			u->removed);
	return ret;
}

/* The update of an open index.  An exit status, or UPDATE_REBUILD. */
static int update_run(struct update *u)
{
	struct ix_run *r = u->r;
	sqlite3 *db = u->db;
	int ret;

	{
		/* a snapshot's files are a commit's, not the work tree's: nothing to compare */
		const char *snap = index_meta(u->ix, "snapshot");
		if (snap && *snap) {
			error("the index '%s' is a snapshot of %s: run ci-index build (or build --rev again)",
			      u->path, snap);
			return EXIT_USAGE;
		}
	}
	if (strcmp(index_root(u->ix), u->w.root)) {
		/*
		 * The index of another tree.  At this tree's own place
		 * (.ci-index/index.db, not CI_INDEX's) it came with the tree (a
		 * repository moved or copied): updated for this tree.  Else
		 * (--index, CI_INDEX) its own tree is updated, where it is, as its
		 * server does, whatever the caller's directory; that tree gone, an
		 * update would drop every file it holds for this tree's: refused.
		 */
		const char *root = index_root(u->ix);

		if (ix_index_tree(&u->w, &u->wo, u->ix, u->path) < 0)
			return EXIT_IO;
		if (strcmp(root, u->w.root)) {
			if (!ix_is_own_index(u->w.root, u->path)) {
				error("the index '%s' is of '%s', not of '%s': run 'ci-index --index %s build' "
				      "to index this tree into it", u->path, root, u->w.root, u->path);
				return EXIT_USAGE;
			}
			warning("the index was built for '%s', updating it for '%s'", root, u->w.root);
		}
	}
	progress_start(&u->pg, r->o.progress, "looking for changes", NULL, 0, 0);
	/* damage where no update reads (a definition's page) fails readers later */
	if ((check_whole(u->path) && (u->damage = ix_damage(db))) || update_read_known(u) < 0) {
		progress_stop(&u->pg);
		return UPDATE_REBUILD;
	}
	qsort_unsorted(u->known, u->known_nr, sizeof(*u->known), cmp_known);
	u->walked = ix_wall_ns();
	if (quick_walk(r, u->ix, &u->w, u->known, u->known_nr, u->path, &u->list))
		walker_walk(&u->w, "", 0, &u->list);
	walk_list_finish(&u->list);
	/* a file changed within the second of the last update may keep its mtime and
	 * size: such files are hashed, not trusted (git's "racy" entries) */
	{
		const char *e = index_meta(u->ix, "updated_epoch");
		u->racy = e ? (int64_t)atoll(e) : INT64_MAX;
	}
	if (index_exec(db, "BEGIN IMMEDIATE") < 0) {
		progress_stop(&u->pg);
		return EXIT_IO;
	}
	if (r->graph_hook)
		r->graph_hook(r->graph_data, u->ix, IX_GRAPH_BEGIN, NULL, 0);
	update_changes(u);
	if (r->graph_hook)
		update_hook_changed(u);
	ret = update_forget(u);
	ret = update_reread(u, ret);
	return update_commit(u, ret);
}

/* Let go of what u holds; a worker keeps its index open until it has answered (deferred). */
static void update_release(struct update *u, int deferred)
{
	struct ix_run *r = u->r;

	for (size_t i = 0; i < u->known_nr; i++)
		free(u->known[i].path);
	free(u->known);
	import_ctx_release(&u->ictx);
	free(u->paths);
	walk_list_release(&u->todo);
	walk_list_release(&u->list);
	if (deferred && r->srv && !r->deferred_ix) {
		/* closing checkpoints the WAL (20 ms): after the caller has its answer */
		r->deferred_ix = u->ix;
		r->deferred_lock = u->lock;
	} else {
		index_close(u->ix);
		close(u->lock);
	}
	walker_close(&u->w);
	free(u->damage);
	free(u->path);
	free(u);
}

int ix_update(struct ix_run *r)
{
	struct update *u = xcalloc(1, sizeof(*u));
	int ret;

	u->r = r;
	u->wo = (struct walk_opts)WALK_OPTS_INIT;
	u->lock = -1;
	ret = update_open(u);
	if (ret != EXIT_OK) {
		free(u->path);
		free(u);
		return ret == UPDATE_BUILD ? ix_build(r, NULL, NULL) : ret;
	}
	ret = update_run(u);
	if (ret == UPDATE_REBUILD) {
		/* never serve a damaged index: build it anew */
		fprintf(stderr, "%s: the index '%s' is damaged (%s): rebuilding it\n", progname, u->path,
			u->damage ? u->damage : sqlite3_errmsg(u->db));
		update_release(u, 0);
		return ix_build(r, NULL, NULL);
	}
	update_release(u, ret == EXIT_OK);
	return ret;
}
