/*
 * libcommon/index/build.c: a build of the index (run.h).
 *
 * Shaped by the first build of a large tree: everything goes through the same
 * record loader as `ci-chunk | ci-index load` (loader.h), the files chunked
 * in parallel (parse/chunkrun.h), into a new file <db>.new that replaces the
 * old index only when complete (install.c).  What the old index has that the
 * files do not give again is kept: ci-couple's history, ci's feedback, the
 * vectors of unchanged chunks.
 */
#include "core/common.h"
#include "index/engine.h"
#include "index/index.h"
#include "parse/chunkrun.h"
#include "parse/chunk.h"
#include "parse/walk.h"
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "index/vecsnap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <git2.h>

/*
 * Test hook: die by SIGKILL after r->crash_after files (CI_INDEX_CRASH_AFTER),
 * or by the signal CI_INDEX_CRASH_SIGNAL names (TERM, INT), as if sent by
 * someone else.
 */
static void maybe_crash(struct ix_run *r, long files_done)
{
	if (r->crash_after >= 0 && files_done >= r->crash_after) {
		fflush(NULL);
		raise(r->crash_signal);
		r->crash_after = -1;	/* a signal handled and ignored: once */
	}
}

/*
 * Test hook: r->slow_ms (CI_INDEX_SLOW_MS) milliseconds of sleep before each
 * file a build or an update stores, as if each were huge (t0570: progress shows while the
 * first file is still being read).
 */
static void maybe_slow(const struct ix_run *r)
{
	if (r->slow_ms > 0) {
		struct timespec ts = { r->slow_ms / 1000, (r->slow_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/*
 * The index a build replaces, opened read-only to see what it has: its schema
 * version (0 when there is none, or it cannot be read: quietly, an old index of
 * another version or a damaged one gives nothing), *probe open on it (NULL when
 * none; the caller closes it).
 */
static int old_index_open(sqlite3 **probe, const char *old_path)
{
	sqlite3_stmt *st;
	int version = 0;

	*probe = NULL;
	if (access(old_path, F_OK) < 0)
		return 0;
	if (sqlite3_open_v2(old_path, probe, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(*probe);
		*probe = NULL;
		return 0;
	}
	sqlite3_busy_timeout(*probe, 10000);
	if (sqlite3_prepare_v2(*probe, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
			       &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			version = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	return version;
}

/*
 * What a build keeps from the index it replaces: the feedback tables (see
 * CI_FEEDBACK_TABLES), and ci-couple's history (commits,
 * their files and vectors, coupling, the head it was walked to), which comes
 * from git, not from the files.  Nothing when there is no usable old index.
 */
static int keep_history(sqlite3 *db, const char *old_path)
{
	sqlite3 *probe;
	sqlite3_stmt *st;
	int version, history = 0, feedback = 0, rc;
	char *sql;

	version = old_index_open(&probe, old_path);
	if (probe) {
		if (sqlite3_prepare_v2(probe, "SELECT EXISTS (SELECT 1 FROM commits) OR "
				       "EXISTS (SELECT 1 FROM coupling)", -1, &st, NULL) == SQLITE_OK) {
			history = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
		}
		feedback = ix_has_feedback(probe, "main");
	}
	sqlite3_close(probe);
	/* versions 2 and later have the same history tables; 1 lacked commit columns */
	if (version < 2 || version > CI_SCHEMA_VERSION || (!history && !feedback))
		return 0;
	/* the live index is read in the normal locking mode, sharing it with its
	 * readers (the new one is written in exclusive mode) */
	sqlite3_busy_timeout(db, 10000);
	if (feedback) {
		sql = sqlite3_mprintf("PRAGMA locking_mode=NORMAL; ATTACH %Q AS old;" COPY_FEEDBACK("old")
				      "DETACH old; PRAGMA locking_mode=EXCLUSIVE;", old_path);
		rc = index_exec(db, sql);
		sqlite3_free(sql);
		if (rc < 0 || !history)
			return rc;
	}
	sql = sqlite3_mprintf("PRAGMA locking_mode=NORMAL; ATTACH %Q AS old;"
			      /* by name: a migrated index has its late columns last */
			      "INSERT INTO commits(sha, time, author, email, message, parents, merged_into) "
			      "SELECT sha, time, author, email, message, parents, merged_into FROM old.commits;"
			      "INSERT INTO commit_files(sha, path, added, deleted, status, old_path) "
			      "SELECT sha, path, added, deleted, status, old_path FROM old.commit_files;"
			      "INSERT INTO commit_vectors(sha, model, dim, fmt, scale, vec) "
			      "SELECT sha, model, dim, fmt, scale, vec FROM old.commit_vectors;"
			      "INSERT INTO coupling(a, b, score, co_changes, last) "
			      "SELECT a, b, score, co_changes, last FROM old.coupling;"
			      "INSERT INTO meta(key, value) SELECT key, value FROM old.meta WHERE key = 'history_head';"
			      "DETACH old; PRAGMA locking_mode=EXCLUSIVE;", old_path);
	rc = index_exec(db, sql);
	sqlite3_free(sql);
	return rc;
}

/*
 * A build keeps the vectors of the chunks it makes again: those of the same blob
 * and lines in the index it replaces (the embedded text, name, signature,
 * comment and words, is then the same), so that the next update, or --embed,
 * embeds only what changed; a build used to drop them all and the next update
 * re-embedded everything silently.  keep_vectors_attach() attaches the old index
 * as "prev" when it is of this version and holds vectors (1; 0 when not, -1 on
 * error), before the build's transaction; keep_vectors() copies them inside it.
 */
static int keep_vectors_attach(struct ix_run *r, sqlite3 *db, const char *old_path)
{
	sqlite3 *probe;
	sqlite3_stmt *st;
	int version, vectors = 0, rc;
	char *sql;

	version = old_index_open(&probe, old_path);
	if (probe) {
		/* --vectors asking for another format: embedded anew */
		if (version == CI_SCHEMA_VERSION &&
		    sqlite3_prepare_v2(probe, "SELECT EXISTS (SELECT 1 FROM vectors WHERE ?1 IS NULL OR fmt = ?1)",
				       -1, &st, NULL) == SQLITE_OK) {
			sqlite3_bind_text(st, 1, r->o.vectors, -1, SQLITE_STATIC);
			vectors = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(probe);
	if (!vectors)
		return 0;
	/* the live index shared with its readers, the new one exclusive */
	sql = sqlite3_mprintf("PRAGMA locking_mode=NORMAL; ATTACH %Q AS prev; PRAGMA main.locking_mode=EXCLUSIVE;",
			      old_path);
	rc = index_exec(db, sql);
	sqlite3_free(sql);
	return rc < 0 ? -1 : 1;
}

static int keep_vectors(sqlite3 *db)
{
	return index_exec(db,
		"INSERT OR IGNORE INTO vectors(chunk_id, model, dim, fmt, scale, vec) "
		"SELECT c.id, v.model, v.dim, v.fmt, v.scale, v.vec FROM chunks c "
		"JOIN blobs b ON b.id = c.blob_id JOIN prev.blobs pb ON pb.blob = b.blob "
		"JOIN prev.chunks pc ON pc.blob_id = pb.id AND pc.start_line = c.start_line "
		"AND pc.end_line = c.end_line JOIN prev.vectors v ON v.chunk_id = pc.id;"
		"INSERT OR REPLACE INTO meta(key, value) SELECT key, value FROM prev.meta "
		"WHERE key IN ('model', 'model_fingerprint', 'vector_format') AND EXISTS (SELECT 1 FROM vectors)");
}

/* ---- what a reader needs to trust the index without a walk ---- */

/* The time now, nanoseconds since the epoch (the clock file times come from). */
int64_t ix_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Record the walk that list came from, started at walked_ns, for readers that
 * check the tree by its directories (ci-grep): the directories entered with their
 * mtimes (table dirs), the files holding ignore rules (meta 'rules': every
 * .gitignore listed, .git/info/exclude and git's index, which says what is
 * tracked), and the files modified within a second of the walk (meta 'racy':
 * their size and mtime cannot tell a later change).  Returns 0 or -1.
 */
int ix_record_walk(sqlite3 *db, struct walker *w, const struct walk_list *list, int64_t walked_ns)
{
	struct buf rules = BUF_INIT, racy = BUF_INIT;
	sqlite3_stmt *ins;
	char v[32];
	size_t i;
	int rc = 0;

	/* as in schema.sql, for an index built before it had the table */
	if (index_exec(db, "CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime INTEGER NOT NULL) "
			 "WITHOUT ROWID; DELETE FROM dirs") < 0) {
		rc = -1;
		goto done;
	}
	ins = ix_prep(db, "INSERT OR REPLACE INTO dirs(path, mtime) VALUES (?1, ?2)");
	for (i = 0; i < list->dirs_nr && rc == 0; i++) {
		if (!list->dirs[i].entered)
			continue;
		sqlite3_bind_text(ins, 1, list->dirs[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 2, list->dirs[i].mtime_ns);
		rc = ix_step_done(db, ins);
	}
	sqlite3_finalize(ins);
	for (i = 0; i < list->files_nr; i++)
		if (list->files[i].mtime >= walked_ns / 1000000000 - 1)
			buf_addf(&racy, "%s\n", list->files[i].path);
	walk_rules(w, list, &rules);
	snprintf(v, sizeof(v), "%lld", (long long)walked_ns);
	ix_set_meta(db, "walked_ns", v);
	ix_set_meta(db, "rules", rules.buf);
	ix_set_meta(db, "racy", racy.buf);
done:
	buf_release(&rules);
	buf_release(&racy);
	return rc;
}

/* ---- build ---- */

int feed_result(size_t i, const struct chunk_result *res, void *data)
{
	struct feed *fd = data;
	const struct chunk_result *r = res;

	(void)i;
	if (r->warnings_len)
		fwrite(r->warnings, 1, r->warnings_len, stderr);
	if (r->prepared ? load_prepared(fd->ld, r->prepared) < 0
			: r->records_len && load_buffer(fd->ld, r->records, r->records_len) < 0)
		return -1;
	if (r->skipped || (r->degraded && !r->records_len)) {
		sqlite3_bind_text(fd->skip, 1, r->file->path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(fd->skip, 2, (sqlite3_int64)r->file->size);
		sqlite3_bind_int64(fd->skip, 3, r->file->mtime);
		sqlite3_bind_text(fd->skip, 4, r->skipped ? walk_skip_name(r->skipped) : "unreadable",
				  -1, SQLITE_STATIC);
		if (ix_step_done(fd->ld->db, fd->skip) < 0)
			return -1;
		/* a file whose content is now binary or generated leaves the index */
		sqlite3_bind_text(fd->unfile, 1, r->file->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(fd->unimp, 1, r->file->path, -1, SQLITE_STATIC);
		if (ix_step_done(fd->ld->db, fd->unfile) < 0 || ix_step_done(fd->ld->db, fd->unimp) < 0)
			return -1;
	}
	maybe_slow(fd->run);
	progress_add(fd->pg, 1);
	maybe_crash(fd->run, (long)__atomic_load_n(&fd->pg->done, __ATOMIC_RELAXED));
	return 0;
}

/* The records of a file parsed (and texts compressed) by the thread that chunked it. */
static void *feed_prepare(const char *records, size_t len, size_t *bytes, void *data)
{
	(void)data;
	return ld_prepare(records, len, bytes);
}

static void feed_prepared_free(void *prepared)
{
	ld_prepared_free(prepared);
}

/* Point fd at r, ld and pg, with the statements that record left-out files. */
void feed_init(struct feed *fd, struct ix_run *r, struct loader *ld, struct progress *pg)
{
	sqlite3 *db = ld->db;

	fd->run = r;
	fd->ld = ld;
	fd->pg = pg;
	fd->failed = 0;
	fd->hook = (struct chunk_hook){ feed_prepare, feed_prepared_free, NULL };
	fd->skip = ix_prep(db, "INSERT OR REPLACE INTO skipped(path, size, mtime, reason) VALUES (?1, ?2, ?3, ?4)");
	fd->unfile = ix_prep(db, "DELETE FROM files WHERE path = ?1");
	fd->unimp = ix_prep(db, "DELETE FROM imports WHERE path = ?1");
}

void feed_release(struct feed *fd)
{
	sqlite3_finalize(fd->skip);
	sqlite3_finalize(fd->unfile);
	sqlite3_finalize(fd->unimp);
}

/* ---- build --rev: a commit's tree, from the object database ---- */

struct snapshot {
	git_repository *repo;		/* the repository: the walker's, or one opened here */
	int own_repo;			/* repo was opened here (a bare repository) */
	git_commit *commit;		/* the commit indexed */
	git_tree *tree;			/* its tree */
	git_oid *oids;			/* the listed files' blobs, in list order */
	char sha[GIT_OID_HEXSZ + 1];	/* the commit's id */
};

static int git_error_msg(const char *fmt, const char *arg)
{
	const git_error *e = git_error_last();
	int rc = error(fmt, arg, e && e->message ? e->message : "unknown libgit2 error");

	git_error_clear();
	return rc;
}

/*
 * Resolve rev (anything git_revparse_single understands) in the repository of
 * w to a commit and its tree.  Returns EXIT_OK, or an exit code after a message:
 * EXIT_USAGE outside a repository or for a revision that names no commit.
 */
static int snapshot_open(struct snapshot *sn, struct walker *w, const char *rev)
{
	git_object *obj = NULL, *peeled = NULL;
	int rc;

	memset(sn, 0, sizeof(*sn));
	sn->repo = w->repo;
	if (!sn->repo) {
		/* the walker walks a bare repository as plain files: open it as one */
		walk_git_start();
		if (git_repository_open_ext(&sn->repo, w->root, 0, getenv("GIT_CEILING_DIRECTORIES")) < 0) {
			git_error_clear();
			sn->repo = NULL;
			error("'%s' is not in a git repository: build --rev reads a commit from one", w->root);
			return EXIT_USAGE;
		}
		sn->own_repo = 1;
	}
	if (git_revparse_single(&obj, sn->repo, rev) < 0) {
		git_error_msg("bad revision '%s': %s", rev);
		return EXIT_USAGE;
	}
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0) {
		git_error_msg("revision '%s' is not a commit: %s", rev);
		return EXIT_USAGE;
	}
	sn->commit = (git_commit *)peeled;
	git_oid_tostr(sn->sha, sizeof(sn->sha), git_commit_id(sn->commit));
	if (git_commit_tree(&sn->tree, sn->commit) < 0) {
		git_error_msg("cannot read the tree of commit %s: %s", sn->sha);
		return EXIT_IO;
	}
	return EXIT_OK;
}

static void snapshot_close(struct snapshot *sn)
{
	git_tree_free(sn->tree);
	git_commit_free(sn->commit);
	if (sn->own_repo)
		git_repository_free(sn->repo);
	free(sn->oids);
	memset(sn, 0, sizeof(*sn));
}

/* import_ctx.read: the blob at rel in the snapshot's tree (a go.mod). */
static int snapshot_read(const struct import_ctx *ctx, const char *rel, char **data, size_t *n)
{
	struct snapshot *sn = ctx->payload;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	int rc = -1;

	*data = NULL;
	*n = 0;
	if (git_tree_entry_bypath(&te, sn->tree, rel) == 0 &&
	    git_tree_entry_type(te) == GIT_OBJECT_BLOB &&
	    git_blob_lookup(&blob, sn->repo, git_tree_entry_id(te)) == 0) {
		*n = (size_t)git_blob_rawsize(blob);
		*data = xmalloc(*n + 1);
		memcpy(*data, git_blob_rawcontent(blob), *n);
		(*data)[*n] = '\0';
		rc = 0;
	}
	git_error_clear();
	git_blob_free(blob);
	git_tree_entry_free(te);
	return rc;
}

/*
 * After a build --embed installed the index at path (of the tree at root, or
 * of commit snapshot), with embed_pending set and no "updated": embed what
 * has no vector, a batch a transaction, and stamp "updated" with the last.
 * The caller holds the index's lock.  An exit status.
 */
static int embed_installed(struct ix_run *r, const char *path, const char *root,
			   const char *snapshot)
{
	struct ci_index *ix;
	struct loader ld;
	sqlite3 *db;
	int ret = EXIT_OK;

	if (index_open(&ix, path, r->o.damage) != 0)
		return EXIT_IO;
	db = index_db(ix);
	/* every chunk's text read once: through the page cache, not the query
	 * map, whose pages stayed resident (500 MB of the Linux tree's) */
	index_unmap(db);
	loader_init(&ld, db, root, ix_vector_format(r, db));
	if (index_exec(db, "BEGIN IMMEDIATE") < 0 || ix_embed_missing(r, &ld, 1, 1) < 0) {
		ret = EXIT_IO;
		index_exec(db, "ROLLBACK");
	} else {
		if (ld.vectors)
			ix_set_meta(db, "vector_format", vec_format_name(ld.vfmt));
		ix_stamp(db, root, "updated", snapshot);
		if (index_exec(db, "COMMIT") < 0 || vecsnap_refresh(db, path) < 0)
			ret = EXIT_IO;
	}
	loader_release(&ld);
	index_close(ix);
	return ret;
}

/* A build under way: what its steps share. */
struct build {
	struct ix_run *r;		/* the run */
	const char *rev;		/* the commit indexed (--rev), or NULL: the work tree */
	struct walk_opts wo;		/* the walk's options */
	struct walker w;		/* the repository */
	struct walk_list list;		/* its files */
	struct snapshot sn;		/* --rev: the commit */
	struct import_ctx ictx;		/* how imports resolve */
	struct fileset fs;		/* the files, for ictx */
	const char **paths;		/* their paths */
	struct loader ld;		/* into the new database */
	struct feed fd;			/* chunk_run's results into ld */
	struct progress pg;		/* the phase's progress */
	char *path;			/* the index */
	char *tmp;			/* the new database, <path>.new */
	int lock;			/* the index's lock */
	sqlite3 *db;			/* open on tmp */
	int64_t walked;			/* when the walk began (ns) */
	int prev;			/* the old index is attached as "prev" (its vectors) */
	int embed_later;		/* --embed: embed once installed (embed_installed) */
};

/* --embed: a model that cannot be loaded fails the build before the work, not after. */
static int build_check_model(struct ix_run *r)
{
	struct embed_model *m;
	struct progress pg;
	int rc;

	progress_start(&pg, r->o.progress, "loading the model", NULL, 0, 0);
	rc = embed_model_open(&m, embed_model_dir(r->o.model));
	progress_stop(&pg);
	if (rc < 0)
		return EXIT_IO;
	rc = r->o.dims ? embed_model_set_dims(m, (size_t)r->o.dims) : 0;
	embed_model_close(m);
	if (rc < 0)
		return EXIT_USAGE;
	return EXIT_OK;
}

/*
 * Open the repository of start, the commit of --rev, and the index's lock;
 * create the new database.  An exit status; b->lock and b->path are set
 * only on EXIT_OK (else all is let go here but the walker and snapshot).
 */
static int build_open(struct build *b, const char *start)
{
	struct ix_run *r = b->r;
	int ret;

	if (walker_open(&b->w, start ? start : ".", &b->wo) < 0)
		return EXIT_IO;
	if (b->rev && start) {
		/* the commit's whole tree is indexed: a path may name the repository only */
		char *real = realpath(start, NULL);
		int root = real && !strcmp(real, b->w.root);

		free(real);
		if (!root) {
			error("build --rev indexes the whole tree of a commit: '%s' is not the "
			      "repository's root '%s'", start, b->w.root);
			walker_close(&b->w);
			return EXIT_USAGE;
		}
	}
	if (b->rev && (ret = snapshot_open(&b->sn, &b->w, b->rev)) != EXIT_OK) {
		snapshot_close(&b->sn);
		walker_close(&b->w);
		return ret;
	}
	b->path = r->o.index ? xstrdup(r->o.index) : index_default_path(b->w.root);
	free(r->wrote);
	r->wrote = xstrdup(b->path);
	if (ix_ensure_dir(b->path) < 0 || (b->lock = ix_lock_dir(r, b->path)) < 0) {
		snapshot_close(&b->sn);
		walker_close(&b->w);
		free(b->path);
		return EXIT_IO;
	}
	if (r->build_lock < 0)
		r->build_lock = fcntl(b->lock, F_DUPFD_CLOEXEC, 0);	/* let go of in ix_run_release */
	b->tmp = xasprintf("%s.new", b->path);
	unlink(b->tmp);
	ix_tmp_arm(b->tmp);
	b->db = ix_create_db(b->tmp, b->w.root);
	return EXIT_OK;
}

/* Walk the work tree, or list the commit's tree.  0, or -1 after a message (db closed). */
static int build_walk(struct build *b)
{
	progress_start(&b->pg, b->r->o.progress, "walking the tree", NULL, 0, 0);
	if (b->rev) {
		if (walker_walk_tree(&b->w, b->sn.repo, b->sn.tree, &b->list, &b->sn.oids) < 0) {
			progress_stop(&b->pg);
			sqlite3_close(b->db);
			unlink(b->tmp);
			return -1;
		}
		b->ictx.read = snapshot_read;
		b->ictx.payload = &b->sn;
	} else {
		b->walked = ix_wall_ns();
		walker_walk(&b->w, "", 0, &b->list);
		walk_list_finish(&b->list);
	}
	progress_stop(&b->pg);
	b->paths = walk_list_paths(&b->list);
	b->fs.paths = b->paths;
	b->fs.nr = b->list.files_nr;
	b->ictx.root = b->w.root;
	b->ictx.files = &b->fs;
	import_ctx_load(&b->ictx);	/* go.mod, package.json, tsconfig, compile_commands.json */
	return 0;
}

/*
 * The generation triggers of the files table are dropped for the load, made
 * again after it (the schema's statements, run again, make what is missing)
 * and the generation set as they would have left it: every file inserted once
 * into an empty table.  A statement that fires a trigger opens a statement
 * journal, and at its savepoint FTS5 writes out the terms it holds: two
 * segments a file, merged again and again (with those merges, a quarter of
 * the loading thread's time on fs/, kernel/ and mm/ of Linux).
 */
extern const char ci_schema_sql[];
#define LOAD_DROP_TRIGGERS "DROP TRIGGER files_gen_ai; DROP TRIGGER files_gen_au; DROP TRIGGER files_gen_ad;"
#define LOAD_GENERATION "UPDATE meta SET value = (SELECT count(*) FROM files) WHERE key = 'generation'"

/* Chunk every file into the new database, with what is kept of the old.  An exit status. */
static int build_load(struct build *b)
{
	struct ix_run *r = b->r;
	struct chunk_opts co = { CHUNK_WANT_ALL, CHUNK_DEFAULT_MAX_LINES };
	sqlite3 *db = b->db;
	int ret = EXIT_OK;

	progress_start(&b->pg, r->o.progress, "indexing", "files", b->list.files_nr, 1);
	loader_init(&b->ld, db, b->w.root, ix_vector_format(r, NULL));
	b->ld.snapshot = b->rev != NULL;
	b->ld.df.full = 1;		/* term_df is filled once, at the end */
	feed_init(&b->fd, r, &b->ld, &b->pg);
	if (keep_history(db, b->path) < 0 || (b->prev = keep_vectors_attach(r, db, b->path)) < 0 ||
	    index_exec(db, "BEGIN;" LOAD_DROP_TRIGGERS) < 0 ||
	    (b->rev ? chunk_run_blobs(&b->w, &b->list, b->sn.repo, b->sn.oids, &co, &b->ictx, r->o.threads,
				      &b->fd.hook, feed_result, &b->fd)
		    : chunk_run(&b->w, &b->list, &co, &b->ictx, r->o.threads, &b->fd.hook, feed_result, &b->fd)) < 0 ||
	    loader_finish_file(&b->ld) < 0 || index_exec(db, ci_schema_sql) < 0 ||
	    index_exec(db, LOAD_GENERATION) < 0 || df_finish(db, &b->ld.df) < 0 ||
	    (!b->rev && ix_record_walk(db, &b->w, &b->list, b->walked) < 0) ||
	    (b->prev > 0 && keep_vectors(db) < 0))
		ret = EXIT_IO;
	progress_stop(&b->pg);
	if (ret == EXIT_OK && b->prev > 0 && !r->o.vectors) {
		/* new vectors in the format of those kept */
		char *v = ix_get_meta(db, "vector_format");
		if (v)
			vec_format_parse(&b->ld.vfmt, v);
		free(v);
	}
	/*
	 * --embed: the chunks are embedded once the index is installed, in
	 * batches committed one by one (embed_installed), so that an interrupted
	 * build keeps what it embedded.  Until then the index says that vectors
	 * are missing (embed_pending) and has no "updated": no reader takes it
	 * for complete, and the next update embeds the rest.
	 */
	if (ret == EXIT_OK && r->o.embed) {
		sqlite3_stmt *q = ix_prep(db, MISSING_CHUNKS_SQL(" LIMIT 1"));
		sqlite3_stmt *q2 = ix_prep(db, MISSING_COMMITS_SQL(" LIMIT 1"));
		b->embed_later = sqlite3_step(q) == SQLITE_ROW || sqlite3_step(q2) == SQLITE_ROW;
		sqlite3_finalize(q);
		sqlite3_finalize(q2);
		if (!b->embed_later && ix_embed_missing(r, &b->ld, 1, 0) < 0)	/* the model, the format */
			ret = EXIT_IO;
	}
	return ret;
}

/* The new database's meta, its full-text indexes optimized, committed, packed.  0, or -1. */
static int build_finish_db(struct build *b)
{
	sqlite3 *db = b->db;
	const char *snap = b->rev ? b->sn.sha : NULL;

	if (b->ld.vectors)
		ix_set_meta(db, "vector_format", vec_format_name(b->ld.vfmt));
	if (b->rev) {
		/* no walk of the work tree to trust: readers must not use it as one */
		ix_set_meta(db, "snapshot", b->sn.sha);
		ix_set_meta(db, "rev", b->rev);
	}
	ix_stamp(db, b->w.root, "created", snap);
	if (b->embed_later)
		ix_set_meta(db, "embed_pending", "1");
	else
		ix_stamp(db, b->w.root, "updated", snap);
	/*
	 * One segment per full-text index: a term then costs a reader one
	 * b-tree seek, not one per segment the build flushed (the trigram
	 * query of an identifier took 20 ms over 11 segments on the Linux
	 * tree, 10 ms over one).  VACUUM packs the indexes filled in random
	 * order (a third of their pages empty on the Linux tree), with a
	 * page cache of 8 MiB, not the load's 64: its copy takes the main
	 * database's and held 120 MB of pages on drivers/gpu/drm/amd alone,
	 * the build's peak, for no gain in time.  Then the common trigrams'
	 * counts (13 s on the Linux tree).
	 */
	if (index_exec(db, "INSERT INTO chunks_tri(chunks_tri) VALUES('optimize');"
			 "INSERT INTO chunks_fts(chunks_fts) VALUES('optimize');"
			 "CREATE VIRTUAL TABLE temp.tri_vocab USING fts5vocab(main, chunks_tri, 'row');"
			 "INSERT INTO tri_df(tri, df) SELECT term, doc FROM temp.tri_vocab WHERE doc >= 1000;"
			 "DROP TABLE temp.tri_vocab") < 0 ||
	    index_exec(db, "COMMIT") < 0 || (b->prev > 0 && index_exec(db, "DETACH prev") < 0) ||
	    index_exec(db, "PRAGMA cache_size=-8192; VACUUM") < 0)
		return -1;
	return 0;
}

/* Write the new database and put it in place (ret: the build's status so far).  An exit status. */
static int build_install(struct build *b, int ret)
{
	struct ix_run *r = b->r;

	/* optimize, VACUUM, install: seconds on a large tree */
	progress_start(&b->pg, r->o.progress, "writing the index", NULL, 0, 0);
	if (ret == EXIT_OK && build_finish_db(b) < 0)
		ret = EXIT_IO;
	loader_release(&b->ld);
	feed_release(&b->fd);
	if (sqlite3_close(b->db) != SQLITE_OK)
		ret = EXIT_IO;
	if (ret == EXIT_OK && ix_install_db(b->tmp, b->path) < 0)
		ret = EXIT_IO;
	if (ret != EXIT_OK)
		unlink(b->tmp);
	else
		ret = ix_refresh_snapshot(b->path);
	progress_stop(&b->pg);
	ix_tmp_done();	/* installed: a signal from now on leaves it */
	if (ret == EXIT_OK && b->embed_later)
		ret = embed_installed(r, b->path, b->w.root, b->rev ? b->sn.sha : NULL);
	if (ret == EXIT_OK && verbosity)
		fprintf(stderr, "%s: indexed %ld files, %ld chunks, %ld definitions, %ld references%s%s into '%s'\n",
			progname, b->ld.files, b->ld.chunks, b->ld.defs, b->ld.refs, b->rev ? " of commit " : "",
			b->rev ? b->sn.sha : "", b->path);
	return ret;
}

int ix_build(struct ix_run *r, const char *start, const char *rev)
{
	struct build *b = xcalloc(1, sizeof(*b));
	int ret;

	b->r = r;
	b->rev = rev;
	b->wo = (struct walk_opts)WALK_OPTS_INIT;
	r->build_dir = start ? start : ".";
	r->build_rev = rev != NULL;
	if (r->o.embed && (ret = build_check_model(r)) != EXIT_OK)
		goto done;
	if ((ret = build_open(b, start)) != EXIT_OK)
		goto done;
	if (!b->db || build_walk(b) < 0) {
		ret = EXIT_IO;
	} else {
		ret = build_load(b);
		ret = build_install(b, ret);
	}
	ix_tmp_done();	/* installed (renamed, or copied and removed), or to go */
	import_ctx_release(&b->ictx);
	free(b->paths);
	walk_list_release(&b->list);
	snapshot_close(&b->sn);
	walker_close(&b->w);
	close(b->lock);
	free(b->tmp);
	free(b->path);
done:
	free(b);
	return ret;
}
