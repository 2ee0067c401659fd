/*
 * libcommon/index/install.c: where an index run writes (engine.h): the
 * writer's lock, a new database, and its install in place of the live index,
 * so that readers see the old index or the new one, never a mix.
 */
#include "core/common.h"
#include "index/engine.h"
#include "index/index.h"
#include "index/vecsnap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

extern const char ci_schema_sql[];

/*
 * The new database a build writes, <db>.new (and SQLite's journal, log and
 * shared memory of it): removed on every way out of the build but its
 * install, an exit deep down included (out of memory: atexit), and on
 * SIGINT, SIGTERM or SIGHUP, after which the signal is raised again to end
 * the process as it would have.  A SIGKILL leaves it; the next build starts
 * it afresh.
 */
static char *tmp_paths[4];		/* <db>.new, -journal, -wal, -shm */
static volatile sig_atomic_t tmp_armed;	/* they are to be removed */
static const int tmp_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction tmp_old[ARRAY_SIZE(tmp_sigs)];

/* Remove the files (async-signal-safe). */
static void tmp_remove(void)
{
	size_t i;

	if (!tmp_armed)
		return;
	tmp_armed = 0;
	for (i = 0; i < ARRAY_SIZE(tmp_paths); i++)
		if (tmp_paths[i])
			unlink(tmp_paths[i]);
}

static void tmp_on_signal(int sig)
{
	tmp_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* From now on, remove the files of the new database tmp on the way out. */
void ix_tmp_arm(const char *tmp)
{
	static int registered;
	static const char *const suffix[] = { "", "-journal", "-wal", "-shm" };
	struct sigaction sa;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tmp_paths); i++) {
		free(tmp_paths[i]);
		tmp_paths[i] = xasprintf("%s%s", tmp, suffix[i]);
	}
	if (!registered && !atexit(tmp_remove))
		registered = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tmp_on_signal;
	sigemptyset(&sa.sa_mask);
	tmp_armed = 1;
	for (i = 0; i < ARRAY_SIZE(tmp_sigs); i++) {
		sigaction(tmp_sigs[i], NULL, &tmp_old[i]);
		/* one ignored (a background job of a shell) stays ignored */
		if (tmp_old[i].sa_handler != SIG_IGN)
			sigaction(tmp_sigs[i], &sa, NULL);
	}
}

/* Remove the files now (nothing when the build installed them) and stop watching. */
void ix_tmp_done(void)
{
	size_t i;

	tmp_remove();
	for (i = 0; i < ARRAY_SIZE(tmp_sigs); i++)
		if (tmp_old[i].sa_handler != SIG_IGN)
			sigaction(tmp_sigs[i], &tmp_old[i], NULL);
}

/*
 * Test hook: before a build installs its new database, create the file named
 * by CI_INDEX_PAUSE_BEFORE_INSTALL and wait (up to a minute) until it is gone,
 * so that a test can write to the live index at that moment.
 */
static void maybe_pause_before_install(void)
{
	const char *p = getenv("CI_INDEX_PAUSE_BEFORE_INSTALL");
	int fd, i;

	if (!p || !*p || (fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return;
	close(fd);
	for (i = 0; i < 6000 && access(p, F_OK) == 0; i++)
		usleep(10000);
}

/* 1 if the database schema of db has the three feedback tables. */
int ix_has_feedback(sqlite3 *db, const char *schema)
{
	sqlite3_stmt *st;
	char *sql = sqlite3_mprintf("SELECT count(*) FROM %w.sqlite_master WHERE type = 'table' AND "
				    "name IN ('injections', 'feedback', 'feedback_lineage')", schema);
	int n = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
		sqlite3_finalize(st);
	}
	sqlite3_free(sql);
	return n == 3;
}

int ix_is_own_index(const char *root, const char *db_path)
{
	char *own = index_own_path(root);
	struct stat so, sd;
	int same = !stat(own, &so) && !stat(db_path, &sd) && so.st_dev == sd.st_dev && so.st_ino == sd.st_ino;

	free(own);
	return same;
}

int ix_index_tree(struct walker *w, const struct walk_opts *wo, struct ci_index *ix, const char *db_path)
{
	const char *root = index_root(ix);
	struct stat st;

	if (!root || !*root || !strcmp(root, w->root) || ix_is_own_index(w->root, db_path) ||
	    stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	walker_close(w);
	return walker_open(w, root, wo);
}

/*
 * The lock of the index at db_path (<db>.lock), which every writer (build,
 * update, load, drop) holds while it writes: its descriptor, or -1 after
 * reporting.  Another writer's lock is waited for up to $CI_INDEX_LOCK_WAIT
 * seconds (default 600: a first build of a large tree takes minutes), then the
 * index is said to be busy.
 */
int ix_lock_dir(struct ix_run *r, const char *db_path)
{
	char *dir = xstrdup(db_path), *slash = strrchr(dir, '/');
	long wait_ms = env_long("CI_INDEX_LOCK_WAIT", 0, 1000000, 600, ENV_DIE) * 1000;
	char *lock;
	int fd, got;

	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	lock = xasprintf("%s/%s.lock", dir, slash ? slash + 1 : db_path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && r->build_lock >= 0) {
		struct stat a, b;
		if (fstat(fd, &a) == 0 && fstat(r->build_lock, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino) {
			/* this process's build holds it */
			close(fd);
			fd = fcntl(r->build_lock, F_DUPFD_CLOEXEC, 0);
			if (fd < 0)
				error_errno("cannot lock '%s'", lock);
			free(lock);
			free(dir);
			return fd;
		}
	}
	if (fd < 0) {
		error_errno("cannot create '%s'", lock);
	} else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (verbosity)
			fprintf(stderr, "%s: waiting for another ci-index on '%s'\n", progname, db_path);
		/* polled: flock has no timeout of its own */
		for (got = 0; !got && wait_ms >= 0; wait_ms -= 20) {
			struct timespec ts = { 0, 20000000 };
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				got = 1;
			else if (errno != EWOULDBLOCK && errno != EINTR)
				break;
			else
				nanosleep(&ts, NULL);
		}
		if (!got) {
			if (wait_ms < 0)
				error("the index '%s' is busy: another ci-index (a build, an update) "
				      "still holds '%s'; try again when it is done", db_path, lock);
			else
				error_errno("cannot lock '%s'", lock);
			close(fd);
			fd = -1;
		}
	}
	free(lock);
	free(dir);
	return fd;
}

int ix_ensure_dir(const char *db_path)
{
	char *dir = xstrdup(db_path), *slash = strrchr(dir, '/');
	int rc = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			rc = error_errno("cannot create '%s'", dir);
		else if (!strcmp(slash + 1, "index.db")) {
			/* keep the index out of git */
			char *gi = xasprintf("%s/.gitignore", dir);
			int fd = open(gi, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd >= 0) {
				if (write(fd, "*\n", 2) != 2)
					rc = error_errno("cannot write '%s'", gi);
				close(fd);
			}
			free(gi);
		}
	}
	free(dir);
	return rc;
}

sqlite3 *ix_create_db(const char *path, const char *root)
{
	sqlite3 *db = NULL;
	char v[16], pragma[160];

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		db_error_report:
		error("cannot create index '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	snprintf(pragma, sizeof(pragma), "PRAGMA page_size=%d; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		 "PRAGMA cache_size=-65536; PRAGMA locking_mode=EXCLUSIVE;", CI_PAGE_SIZE);
	if (index_register_functions(db) < 0 || index_exec(db, pragma) < 0 ||
	    index_exec(db, ci_schema_sql) < 0)
		goto db_error_report;
	snprintf(v, sizeof(v), "%d", CI_SCHEMA_VERSION);
	ix_set_meta(db, "schema_version", v);
	ix_set_meta(db, "root", root);
	return db;
}

static long page_size(sqlite3 *db)
{
	sqlite3_stmt *st = ix_prep(db, "PRAGMA page_size");
	long n = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : -1;

	sqlite3_finalize(st);
	return n;
}

static long page_size_of(const char *path)
{
	sqlite3 *db = NULL;
	long n = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		n = page_size(db);
	sqlite3_close(db);
	return n;
}

/*
 * The feedback an agent wrote to the live index while the build ran (ci's
 * feedback tables, which a build copies from the index it replaces when it
 * starts): copied into the new database at tmp, by key, just before it is
 * installed.  Whatever is written between this copy and the install (a few
 * milliseconds) is still lost; before, everything written during the build was.
 */
static int keep_late_feedback(const char *tmp, const char *live_path)
{
	sqlite3 *db = NULL;
	char *sql;
	int rc = -1;

	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		goto done;
	sqlite3_busy_timeout(db, 10000);
	sql = sqlite3_mprintf("ATTACH %Q AS live", live_path);
	rc = index_exec(db, sql);
	sqlite3_free(sql);
	if (rc < 0)
		goto done;
	rc = ix_has_feedback(db, "live") ? index_exec(db, "BEGIN;" COPY_FEEDBACK("live") "COMMIT") : 0;
done:
	if (rc < 0)
		error("cannot keep the feedback written during the build: %s",
		      db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_close(db);
	return rc;
}

/*
 * Put the new database at tmp in place of path, so that readers see the old index
 * or the new one, never a mix: copied into the live database in one transaction
 * (SQLite's backup API), or renamed into place when there is no usable live one.
 */
/*
 * After a build: the snapshot of its vectors (libcommon/index/vecsnap.h), or none
 * when it has none (the old index's is not the new one's).
 */
int ix_refresh_snapshot(const char *path)
{
	struct ci_index *ix;
	int ret = EXIT_OK;

	if (index_open(&ix, path, INDEX_NOTE_DAMAGE) != 0)
		return EXIT_IO;
	if (vecsnap_refresh(index_db(ix), path) < 0)
		ret = EXIT_IO;
	index_close(ix);
	return ret;
}

int ix_install_db(const char *tmp, const char *path)
{
	struct ci_index *live = NULL;
	int rc;

	maybe_pause_before_install();
	rc = index_open(&live, path, INDEX_NOTE_DAMAGE);
	if (rc == 0 && keep_late_feedback(tmp, path) < 0) {
		index_close(live);
		return -1;
	}

	if (rc == 0 && page_size(index_db(live)) != page_size_of(tmp)) {
		/* the backup API cannot change a WAL database's page size */
		index_close(live);
		live = NULL;
		rc = 1;
	}
	if (rc == 0) {
		sqlite3 *src = NULL;
		sqlite3_backup *bk;
		int ok = 0;

		if (sqlite3_open_v2(tmp, &src, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
		    index_exec(index_db(live), "PRAGMA journal_mode=WAL") == 0 &&
		    (bk = sqlite3_backup_init(index_db(live), "main", src, "main"))) {
			int s = sqlite3_backup_step(bk, -1);
			ok = sqlite3_backup_finish(bk) == SQLITE_OK && s == SQLITE_DONE;
		}
		if (!ok)
			error("cannot replace index '%s': %s", path, sqlite3_errmsg(index_db(live)));
		else
			sqlite3_wal_checkpoint_v2(index_db(live), NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		sqlite3_close(src);
		index_close(live);
		if (!ok)
			return -1;
		unlink(tmp);
		return 0;
	}
	if (rc < 0)
		fprintf(stderr, "%s: rebuilding the index from scratch\n", progname);
	/* no usable index: nothing to keep, and its WAL must not meet the new file */
	{
		char *wal = xasprintf("%s-wal", path), *shm = xasprintf("%s-shm", path);
		unlink(wal);
		unlink(shm);
		free(wal);
		free(shm);
	}
	if (rename(tmp, path) < 0)
		return error_errno("cannot rename '%s' to '%s'", tmp, path);
	{
		sqlite3 *db = NULL;
		int ok = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
			 index_exec(db, "PRAGMA journal_mode=WAL") == 0;
		sqlite3_close(db);
		if (!ok)
			return error("cannot open the new index '%s'", path);
	}
	return 0;
}

