/*
 * libcommon/index/server.c: ci-index serve, the index's resident server
 * (server.h), over the fork server (fork-server.h).
 */
#include "core/common.h"
#include "index/server.h"
#include "index/fork-server.h"
#include "index/index.h"
#include "parse/chunk.h"
#include "parse/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/*
 * An update looks at every file of the tree, to find the few that changed:
 * 10,000 stats, 25 ms of a VM's 2 cores, and starting ci-index (libgit2's
 * certificates, the tree-sitter queries) costs as much again.  ci-index serve
 * does the start once and watches every directory of the index with inotify;
 * an update it runs (in a worker it forks) looks only in the directories
 * where something happened since the last update that succeeded, and takes
 * the others' files as recorded.  Anything it cannot vouch for counts as
 * changed: a directory watched only since (until an update covers it), an
 * overflow of the event queue, a directory moved, a watch that could not be
 * added, an update that failed.
 */

/* A set of strings: appended to, sorted and deduplicated when asked. */
struct strset {
	char **v;
	size_t nr, alloc;
	int sorted;
};

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void strset_add(struct strset *s, const char *p)
{
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	s->v[s->nr++] = xstrdup(p);
	s->sorted = 0;
}

static void strset_sort(struct strset *s)
{
	size_t i, j;

	if (s->sorted)
		return;
	qsort_unsorted(s->v, s->nr, sizeof(*s->v), cmp_strp);
	for (i = j = 0; i < s->nr; i++) {
		if (j && !strcmp(s->v[j - 1], s->v[i]))
			free(s->v[i]);
		else
			s->v[j++] = s->v[i];
	}
	s->nr = j;
	s->sorted = 1;
}

static char **strset_find(struct strset *s, const char *p)
{
	strset_sort(s);
	return s->nr ? bsearch(&p, s->v, s->nr, sizeof(*s->v), cmp_strp) : NULL;
}

static void strset_del(struct strset *s, const char *p)
{
	char **at = strset_find(s, p);

	if (!at)
		return;
	free(*at);
	memmove(at, at + 1, (size_t)(s->v + s->nr - at - 1) * sizeof(*at));
	s->nr--;
}

static void strset_clear(struct strset *s)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->v[i]);
	s->nr = 0;
	s->sorted = 1;
}

/* into gets from's strings; from is emptied */
static void strset_move(struct strset *into, struct strset *from)
{
	for (size_t i = 0; i < from->nr; i++) {
		ALLOC_GROW(into->v, into->nr + 1, into->alloc);
		into->v[into->nr++] = from->v[i];
	}
	into->sorted = 0;
	from->nr = 0;
	from->sorted = 1;
}

#define SRV_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | \
		  IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

struct srv_worker {
	pid_t pid;		/* a worker running */
	int rfd;		/* the read end of its report pipe, or -1 once read */
	int said;		/* 1: its update is in (it said 'k'); -1: it ended
				   the pipe without; 0: not known yet */
};

/*
 * The server's map of the index's files by blob, for the candidates of a
 * trigram query (ci-grep): a file list read once per update (80 ms on the Linux
 * tree), not a join of each candidate's rows per search (8 us a candidate).
 */
struct srv_file {
	sqlite3_int64 blob;		/* blobs.id */
	char *path;
	int64_t size, mtime;		/* as indexed */
	int exact;			/* blobs.exact */
	void *segs;			/* blobs.segs, or NULL */
	size_t segs_len;
};

struct ix_server {
	int (*run)(int argc, char **argv);	/* a worker's command line (ci-index's main) */
	int child;			/* this process is a worker of the server */
	char *index;			/* the index served (real path) */
	char *root;			/* its work tree, watched (real path) */
	int ifd;			/* inotify, or -1 */
	ino_t root_ino;			/* the root's identity when the watch began */
	dev_t root_dev;
	char **wd;			/* watch descriptor -> directory ("" the root) */
	size_t wd_alloc;
	struct strset watched;		/* the directories under a watch */
	struct strset dirty;		/* where something happened since the last fork */
	struct strset inflight;		/* ... handed to workers still running */
	int all_dirty;			/* everything counts as changed */
	int inflight_all;		/* so does what the running workers were handed */
	int broken;			/* something could not be watched: vouch for nothing */
	int failed;			/* a worker still in flight failed */
	int report[2];			/* the next worker's pipe: 'k' and the index's
					   "updated" once its update is in */
	char stamp[80];			/* "updated" of the last update that succeeded here */
	struct srv_worker *workers;	/* the workers running */
	size_t workers_nr, workers_alloc;
	struct srv_file *map;		/* the candidate map, sorted by blob */
	size_t map_nr, map_alloc;
	uint32_t *map_first;		/* by blob id: its first file in the map + 1, or 0 */
	size_t map_first_nr;
	uint32_t *map_inexact;		/* the files of inexact blobs, their indexes in the map */
	size_t map_inexact_nr, map_inexact_alloc;
	char map_gen[96];		/* the index's "created" and "generation" when it
					   was read (a rebuilt index starts counting anew) */
	sqlite3 *db;			/* a read connection for the questions, kept open
					   between them (a warm page cache) and closed
					   before each fork: a worker inherits none */
	dev_t db_dev;			/* the file db reads */
	ino_t db_ino;
};

struct ix_server *ix_server_new(int (*run)(int argc, char **argv))
{
	struct ix_server *s = xcalloc(1, sizeof(*s));

	s->run = run;
	s->ifd = -1;
	s->all_dirty = 1;
	s->report[0] = s->report[1] = -1;
	return s;
}
static void srv_watch(struct ix_server *s, const char *rel)
{
	char *abs = *rel ? xasprintf("%s/%s", s->root, rel) : xstrdup(s->root);
	int wd = inotify_add_watch(s->ifd, abs, SRV_MASK), err = errno;

	free(abs);
	strset_add(&s->dirty, rel);	/* until an update covers it */
	if (wd < 0) {
		if (err != ENOENT && err != ENOTDIR) {
			/* out of watches: nothing can be vouched for */
			if (!s->broken)
				warning("cannot watch '%s' (%s): every update looks at every file",
					*rel ? rel : ".", strerror(err));
			s->broken = s->all_dirty = 1;
		}
		return;
	}
	if ((size_t)wd >= s->wd_alloc) {
		size_t n = s->wd_alloc;
		ALLOC_GROW(s->wd, (size_t)wd + 1, s->wd_alloc);
		memset(s->wd + n, 0, (s->wd_alloc - n) * sizeof(*s->wd));
	}
	free(s->wd[wd]);
	s->wd[wd] = xstrdup(rel);
	if (!strset_find(&s->watched, rel))
		strset_add(&s->watched, rel);
}

/* A directory not watched: git's, the index's own (its writes are no change of the tree) */
static int srv_unwatched(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, ".git") || !strcmp(name, ".ci-index");
}

/* a directory that appeared, and every directory under it */
static void srv_watch_tree(struct ix_server *s, const char *rel)
{
	char *abs = *rel ? xasprintf("%s/%s", s->root, rel) : xstrdup(s->root);
	DIR *d;
	struct dirent *de;

	srv_watch(s, rel);
	d = opendir(abs);
	free(abs);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *sub;
		if (de->d_type != DT_DIR || srv_unwatched(de->d_name))
			continue;
		sub = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		srv_watch_tree(s, sub);
		free(sub);
	}
	closedir(d);
}

void ix_server_events(struct ix_server *s)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(s->ifd, buf, sizeof(buf))) > 0) {
		const char *p = buf;
		while (p < buf + n) {
			const struct inotify_event *ev = (const void *)p;
			const char *rel = ev->wd >= 0 && (size_t)ev->wd < s->wd_alloc ? s->wd[ev->wd] : NULL;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				s->all_dirty = 1;	/* events were lost */
				continue;
			}
			if (!rel)
				continue;
			strset_add(&s->dirty, rel);
			if (ev->mask & IN_IGNORED) {
				/* the watch is gone (the directory too) */
				strset_del(&s->watched, rel);
				free(s->wd[ev->wd]);
				s->wd[ev->wd] = NULL;
				continue;
			}
			if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
				if (!*rel) {
					/* the root itself went: serve no more (a new server watches anew) */
					s->broken = s->all_dirty = 1;
					fork_server_stop_soon();
				}
				if (ev->mask & IN_MOVE_SELF)
					s->all_dirty = 1;
				continue;
			}
			if ((ev->mask & IN_ISDIR) && ev->len && !srv_unwatched(ev->name)) {
				char *sub = *rel ? xasprintf("%s/%s", rel, ev->name) : xstrdup(ev->name);
				strset_add(&s->dirty, sub);
				/* a directory moved: the paths of the watches under it are not known */
				if (ev->mask & (IN_MOVED_FROM | IN_MOVED_TO))
					s->all_dirty = 1;
				if (ev->mask & (IN_CREATE | IN_MOVED_TO))
					srv_watch_tree(s, sub);
				free(sub);
			}
		}
	}
}


/*
 * The server's own first update, forked as a request's worker would be, so
 * that it vouches for the tree as soon as that update is in: until an update
 * has run in it, every directory counts as changed (whatever happened between
 * the index's last update and the watches), and ci-grep stats every file.
 * The tree and the index are the server's; no output; the test hooks of the
 * environment that started the server are not its.
 */
static void srv_first_update(struct ix_server *s)
{
	char *argv[] = { "ci-index", "--no-progress", "--index", s->index, "update", NULL };
	pid_t pid;
	int ready;

	if (s->broken || !s->root)
		return;
	ix_server_refresh(s, s->index);
	/* the build that started this server waits for this update
	 * (cmd/ci-index.c, server_after_build): what changes in the tree after the build is
	 * then the next update's, never taken in silently behind its back */
	ready = fork_server_ready_take();
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC), rc;
		fork_server_child_init();
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(s->root) < 0)
			_exit(EXIT_IO);
		if (s->ifd >= 0)
			close(s->ifd);
		unsetenv("CI_INDEX_CRASH_AFTER");
		unsetenv("CI_INDEX_PAUSE_BEFORE_INSTALL");
		{
			/* test hook: a first update that starts late (t0517) */
			long ms = env_long("CI_INDEX_TEST_FIRST_UPDATE_MS", 0, 60000, 0, ENV_WARN);
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
			if (ms > 0)
				nanosleep(&ts, NULL);
		}
		rc = s->run(5, argv);
		fork_server_ready_say(ready);
		exit(rc);
	}
	if (ready >= 0 && pid > 0)
		close(ready);	/* the update's to tell */
	else
		fork_server_ready_say(ready);
	if (pid > 0) {
		ix_server_forked(s, pid);
	} else {
		if (s->report[0] >= 0)
			close(s->report[0]);
		if (s->report[1] >= 0)
			close(s->report[1]);
		s->report[0] = s->report[1] = -1;
	}
}

void ix_server_preload(struct ix_server *s, const char *path)
{
	struct ci_index *ix;
	sqlite3_stmt *st;

	s->index = realpath(path, NULL);
	/* what a worker would start: libgit2 (its certificates), every tree-sitter query */
	walk_git_start();
	chunker_check_queries();
	s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ifd < 0)
		warning("cannot watch the tree (inotify: %s): every update looks at every file", strerror(errno));
	if (!s->index || s->ifd < 0 || index_open(&ix, path, INDEX_READONLY | INDEX_NOTE_DAMAGE) != 0) {
		s->broken = 1;
		return;
	}
	s->root = xstrdup(index_root(ix));
	{
		struct stat rs;
		if (stat(s->root, &rs) == 0) {
			s->root_ino = rs.st_ino;
			s->root_dev = rs.st_dev;
		}
	}
	if (sqlite3_prepare_v2(index_db(ix), "SELECT path FROM dirs", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			srv_watch(s, (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	} else {
		s->broken = 1;
	}
	index_close(ix);
	srv_watch(s, "");
	s->all_dirty = 1;	/* the first update looks at everything */
	srv_first_update(s);
}

static void srv_close_db(struct ix_server *s);
static void srv_settle(struct ix_server *s);

void ix_server_refresh(struct ix_server *s, const char *path)
{
	struct stat st;

	(void)path;
	srv_settle(s);
	srv_close_db(s);	/* SQLite's state must not cross a fork */
	ix_server_events(s);	/* what happened up to now counts for this worker */
	if (s->root && (stat(s->root, &st) < 0 || st.st_ino != s->root_ino || st.st_dev != s->root_dev)) {
		/* the tree was replaced (removed, cloned again): nothing watched is it */
		s->broken = s->all_dirty = 1;
		fork_server_stop_soon();	/* the next update starts a server for the new one */
	}
	if (pipe2(s->report, O_CLOEXEC) < 0)
		s->report[0] = s->report[1] = -1;
}

int ix_server_watch_fd(struct ix_server *s)
{
	return s->ifd;
}

void ix_server_forked(struct ix_server *s, pid_t pid)
{
	/* what it was handed stays in flight until it ends */
	strset_move(&s->inflight, &s->dirty);
	s->inflight_all |= s->all_dirty;
	s->all_dirty = s->broken;
	ALLOC_GROW(s->workers, s->workers_nr + 1, s->workers_alloc);
	s->workers[s->workers_nr].pid = pid;
	s->workers[s->workers_nr].rfd = s->report[0];
	s->workers[s->workers_nr].said = 0;
	s->workers_nr++;
	if (s->report[1] >= 0)
		close(s->report[1]);
	s->report[0] = s->report[1] = -1;
}

static void srv_map_refresh(struct ix_server *s);

/*
 * Read what worker w said on its pipe, if it said it (wait: it has ended, so
 * the pipe has its report or its end): 'k' and the index's "updated" once
 * its update is in, written before the worker hands its caller the exit
 * status.
 */
static void srv_worker_said(struct ix_server *s, struct srv_worker *w, int wait)
{
	struct pollfd p = { .fd = w->rfd, .events = POLLIN };
	char got[80];
	ssize_t n;

	if (w->rfd < 0 || (!wait && poll(&p, 1, 0) != 1))
		return;
	do
		n = read(w->rfd, got, sizeof(got) - 1);
	while (n < 0 && errno == EINTR);
	close(w->rfd);
	w->rfd = -1;
	if (n > 0 && got[0] == 'k') {
		got[n] = '\0';
		snprintf(s->stamp, sizeof(s->stamp), "%s", got + 1);
		srv_map_refresh(s);	/* now, not in the next search */
		w->said = 1;
	} else {
		w->said = -1;
	}
}

/*
 * What the running workers were handed is vouched for once each of them said
 * its update is in, before the server has seen them end: their callers have
 * the exit status then, and ask at once (ci-index update, then ci-grep).
 */
static void srv_settle(struct ix_server *s)
{
	size_t i;

	for (i = 0; i < s->workers_nr; i++)
		srv_worker_said(s, &s->workers[i], 0);
	for (i = 0; i < s->workers_nr; i++)
		if (s->workers[i].said != 1)
			return;
	if (s->failed)
		return;	/* one that failed ended before: all must end (ix_server_ended) */
	strset_clear(&s->inflight);
	s->inflight_all = 0;
}

void ix_server_ended(struct ix_server *s, pid_t pid, int status)
{
	size_t i;

	(void)status;	/* an update that is in is in, whatever came after it */
	for (i = 0; i < s->workers_nr && s->workers[i].pid != pid; i++)
		;
	if (i == s->workers_nr)
		return;
	srv_worker_said(s, &s->workers[i], 1);
	if (s->workers[i].said != 1)
		s->failed = 1;
	s->workers[i] = s->workers[--s->workers_nr];
	if (s->workers_nr > 0)	/* others still run: what they were handed stays in flight */
		return;
	if (s->failed) {
		/* not vouched for: changed, as far as the next update knows */
		strset_move(&s->dirty, &s->inflight);
		s->all_dirty |= s->inflight_all;
	} else {
		strset_clear(&s->inflight);
	}
	s->inflight_all = s->failed = 0;
}

/* In a worker: nothing happened in dir since the update that recorded it. */
int ix_server_clean(const char *dir, void *ctx)
{
	struct ix_server *s = ctx;

	return !s->all_dirty && !s->inflight_all && strset_find(&s->watched, dir) &&
	       !strset_find(&s->dirty, dir) && !strset_find(&s->inflight, dir);
}

/* In a worker: the hint for an update of the index at path of the tree at root, if it is the server's. */
int ix_server_hint_applies(struct ix_server *s, const char *path, const char *root)
{
	char *real;
	int ok;

	if (!s || !s->child || !s->index || !s->root || strcmp(root, s->root))
		return 0;
	real = realpath(path, NULL);
	ok = real && !strcmp(real, s->index);
	free(real);
	return ok;
}

/* In a worker, its update of the server's index in (stamped so): tell the server. */
void ix_server_report_done(struct ix_server *s, const char *stamp)
{
	char msg[80];
	int n;

	if (!s || !s->child || s->report[1] < 0)
		return;
	n = snprintf(msg, sizeof(msg), "k%s", stamp ? stamp : "");
	/*
	 * The server may be gone (a build stops it, and this update waited for
	 * the build's lock): the pipe then has no reader, and its SIGPIPE must
	 * not kill the worker before its caller has the exit status.
	 */
	{
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);
		if (n < 0 || n >= (int)sizeof(msg) || write(s->report[1], msg, (size_t)n) != n) {
			/* the server counts it as failed: more work next time, never less */
		}
		signal(SIGPIPE, old);
	}
}

static void srv_close_db(struct ix_server *s);

/*
 * The read connection, opened if need be (again when the index file was
 * replaced, as a build does by a rename); NULL if the index cannot be opened.
 */
static sqlite3 *srv_read_db(struct ix_server *s)
{
	struct stat st;

	if (stat(s->index, &st) < 0)
		st.st_dev = 0, st.st_ino = 0;
	if (s->db && (st.st_dev != s->db_dev || st.st_ino != s->db_ino))
		srv_close_db(s);
	s->db_dev = st.st_dev;
	s->db_ino = st.st_ino;
	if (!s->db && sqlite3_open_v2(s->index, &s->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(s->db);
		s->db = NULL;
	}
	if (s->db)
		sqlite3_busy_timeout(s->db, 10000);
	return s->db;
}

static void srv_close_db(struct ix_server *s)
{
	sqlite3_close(s->db);
	s->db = NULL;
}

static void srv_map_clear(struct ix_server *s)
{
	for (size_t i = 0; i < s->map_nr; i++) {
		free(s->map[i].path);
		free(s->map[i].segs);
	}
	s->map_nr = 0;
	s->map_gen[0] = '\0';
	free(s->map_first);
	s->map_first = NULL;
	s->map_first_nr = 0;
	s->map_inexact_nr = 0;
}

/* Read the map in db's read transaction, whose "generation" is gen.  0, or -1. */
static int srv_map_load(struct ix_server *s, sqlite3 *db, const char *gen)
{
	sqlite3_stmt *st;
	int rc;

	srv_map_clear(s);
	if (sqlite3_prepare_v2(db, "SELECT f.blob_id, f.path, f.size, f.mtime, b.exact, b.segs "
			       "FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.blob_id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct srv_file *f;
		size_t n = (size_t)sqlite3_column_bytes(st, 5);

		ALLOC_GROW(s->map, s->map_nr + 1, s->map_alloc);
		f = &s->map[s->map_nr++];
		f->blob = sqlite3_column_int64(st, 0);
		f->path = xstrdup((const char *)sqlite3_column_text(st, 1));
		f->size = sqlite3_column_int64(st, 2);
		f->mtime = sqlite3_column_int64(st, 3);
		f->exact = sqlite3_column_int(st, 4);
		f->segs = NULL;
		if (n) {
			f->segs = xmalloc(n);
			memcpy(f->segs, sqlite3_column_blob(st, 5), n);
		}
		f->segs_len = n;
		if (strchr(f->path, '\n'))
			break;	/* a line each cannot say it */
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || (s->map_nr && (s->map[0].blob < 0 || s->map_nr >= UINT32_MAX ||
						 s->map[s->map_nr - 1].blob >= (1LL << 32)))) {
		srv_map_clear(s);
		return -1;
	}
	/* each blob's first file at hand (a search's candidates are thousands of blobs) */
	s->map_first_nr = s->map_nr ? (size_t)s->map[s->map_nr - 1].blob + 1 : 0;
	s->map_first = xcalloc(s->map_first_nr + 1, sizeof(*s->map_first));
	for (size_t i = 0; i < s->map_nr; i++) {
		if (!s->map_first[s->map[i].blob])
			s->map_first[s->map[i].blob] = (uint32_t)i + 1;
		if (!s->map[i].exact) {
			ALLOC_GROW(s->map_inexact, s->map_inexact_nr + 1, s->map_inexact_alloc);
			s->map_inexact[s->map_inexact_nr++] = (uint32_t)i;
		}
	}
	snprintf(s->map_gen, sizeof(s->map_gen), "%s", gen);
	return 0;
}

/* The first file of blob in the map, or s->map_nr. */
static size_t srv_map_find(struct ix_server *s, sqlite3_int64 blob)
{
	if (blob < 0 || (uint64_t)blob >= s->map_first_nr || !s->map_first[blob])
		return s->map_nr;
	return s->map_first[blob] - 1;
}

/*
 * A candidate line: "<parts>\t<size>\t<mtime>\t<exact>\t<path>", parts "-" for
 * the whole file, else "<off>,<end>,<line>" for each run of segments of hits
 * (a bitmap; NULL: the whole file), joined by ';', end -1 for the file's end.
 * Returns -1 if hits names a segment the blob does not have.
 */
static int srv_cand_line(struct buf *out, const struct srv_file *f, const unsigned char *hits)
{
	struct index_seg runs[INDEX_SEG_MAX];
	int i, nr = hits && f->exact ? index_seg_runs(f->segs, f->segs_len, hits, runs) : 0;

	if (nr < 0)
		return -1;
	/* by hand, not buf_addf: thousands of lines an answer */
	for (i = 0; i < nr; i++) {
		if (i)
			buf_addch(out, ';');
		buf_addi(out, (long long)runs[i].off);
		buf_addch(out, ',');
		buf_addi(out, runs[i].end == UINT64_MAX ? -1LL : (long long)runs[i].end);
		buf_addch(out, ',');
		buf_addi(out, runs[i].line);
	}
	if (!nr)
		buf_addch(out, '-');
	buf_addch(out, '\t');
	buf_addi(out, (long long)f->size);
	buf_addch(out, '\t');
	buf_addi(out, (long long)f->mtime);
	buf_addstr(out, f->exact ? "\t1\t" : "\t0\t");
	buf_addstr(out, f->path);
	buf_addch(out, '\n');
	return 0;
}

/*
 * "cand <FTS5 query>": the files with a segment of the trigram table that
 * matches, a line each (srv_cand_line), after "STAMP <updated>"; files whose
 * trigrams cannot be trusted (exact 0) are always there, whole.  "ALL" when
 * the server cannot answer for the index as the last update here left it.
 */
static void srv_cand(struct ix_server *s, const char *match, struct buf *out)
{
	sqlite3 *db = srv_read_db(s);
	sqlite3_stmt *st = NULL;
	const char *updated = NULL, *gen = NULL;
	unsigned char hits[INDEX_SEG_MAX / 8];
	sqlite3_int64 cur = -1;
	size_t i;
	int rc = SQLITE_ERROR, bad = 0;

	if (!db || sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT (SELECT value FROM meta WHERE key = 'updated'), "
			       "(SELECT value FROM meta WHERE key = 'created') || ' ' || "
			       "(SELECT value FROM meta WHERE key = 'generation')", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || !(updated = (const char *)sqlite3_column_text(st, 0)) ||
	    !(gen = (const char *)sqlite3_column_text(st, 1)) || strcmp(updated, s->stamp) ||
	    strlen(gen) >= sizeof(s->map_gen))
		goto all;	/* not as the last update here left it */
	if (strcmp(s->map_gen, gen) && srv_map_load(s, db, gen) < 0)
		goto all;	/* the file list changed since the map was read */
	buf_addf(out, "STAMP %s\n", updated);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT rowid FROM chunks_tri WHERE chunks_tri MATCH ?1", -1, &st, NULL) != SQLITE_OK)
		goto all;
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	for (;;) {
		sqlite3_int64 row = 0, blob;
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			row = sqlite3_column_int64(st, 0);
		blob = rc == SQLITE_ROW ? row >> INDEX_SEG_BITS : -2;
		if (blob != cur && cur >= 0) {
			/* the segments of blob cur are in: its files */
			for (i = srv_map_find(s, cur); i < s->map_nr && s->map[i].blob == cur; i++)
				if (s->map[i].exact && srv_cand_line(out, &s->map[i], hits) < 0)
					bad = 1;
		}
		if (rc != SQLITE_ROW)
			break;
		if (blob != cur) {
			memset(hits, 0, sizeof(hits));
			cur = blob;
		}
		hits[(row & (INDEX_SEG_MAX - 1)) / 8] |= (unsigned char)(1u << (row & 7));
	}
	if (rc != SQLITE_DONE || bad)
		goto all;
	for (i = 0; i < s->map_inexact_nr; i++)
		srv_cand_line(out, &s->map[s->map_inexact[i]], NULL);
	sqlite3_finalize(st);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	return;
all:
	sqlite3_finalize(st);
	if (db)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	buf_reset(out);
	buf_addstr(out, "ALL\n");
}

/* Read the map again if the file list changed (after an update here). */
static void srv_map_refresh(struct ix_server *s)
{
	sqlite3 *db = srv_read_db(s);
	sqlite3_stmt *st = NULL;
	const char *gen;

	if (db && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT (SELECT value FROM meta WHERE key = 'created') || ' ' || "
			       "(SELECT value FROM meta WHERE key = 'generation')", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && (gen = (const char *)sqlite3_column_text(st, 0)) &&
	    strlen(gen) < sizeof(s->map_gen) && strcmp(gen, s->map_gen))
		srv_map_load(s, db, gen);	/* on failure the next search tries again */
	sqlite3_finalize(st);
	if (db)
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

/*
 * A question (fork_server_query), "dirty": "ALL" when nothing can be vouched
 * for; else "STAMP <updated>" (of the last update that succeeded here) and the
 * directories where something happened since it, or that a running update was
 * handed, a line each: what a reader of the index (ci-grep) must look at.
 * Or "cand <query>": see srv_cand.
 */
void ix_server_query(struct ix_server *s, const char *q, struct buf *out)
{
	size_t i;

	if (!strcmp(q, "pid")) {	/* ci-index status: is a server there, which */
		buf_addf(out, "PID %ld\n", (long)getpid());
		return;
	}
	ix_server_events(s);
	srv_settle(s);
	if (!strncmp(q, "cand ", 5) && !s->broken && s->stamp[0]) {
		srv_cand(s, q + 5, out);
		return;
	}
	if (strcmp(q, "dirty") || s->all_dirty || s->inflight_all || s->broken || !s->stamp[0]) {
		buf_addstr(out, "ALL\n");
		return;
	}
	buf_addf(out, "STAMP %s\n", s->stamp);
	for (i = 0; i < s->dirty.nr + s->inflight.nr; i++) {
		const char *d = i < s->dirty.nr ? s->dirty.v[i] : s->inflight.v[i - s->dirty.nr];
		if (strchr(d, '\n')) {
			buf_reset(out);
			buf_addstr(out, "ALL\n");
			return;
		}
		buf_addf(out, "%s\n", d);
	}
}


int ix_server_hint(struct ix_server *s, const char *path, const char *root)
{
	return s && !s->all_dirty && !s->inflight_all && ix_server_hint_applies(s, path, root);
}

int ix_server_broken(const struct ix_server *s)
{
	return s && s->broken;
}

void ix_server_worker_init(struct ix_server *s)
{
	s->child = 1;
	if (s->report[0] >= 0)
		close(s->report[0]);
}

void ix_server_free(struct ix_server *s)
{
	size_t i;

	if (!s)
		return;
	srv_close_db(s);
	srv_map_clear(s);
	free(s->map);
	free(s->map_inexact);
	for (i = 0; i < s->wd_alloc; i++)
		free(s->wd[i]);
	free(s->wd);
	strset_clear(&s->watched);
	strset_clear(&s->dirty);
	strset_clear(&s->inflight);
	free(s->watched.v);
	free(s->dirty.v);
	free(s->inflight.v);
	for (i = 0; i < s->workers_nr; i++)
		if (s->workers[i].rfd >= 0)
			close(s->workers[i].rfd);
	free(s->workers);
	if (s->ifd >= 0)
		close(s->ifd);
	if (s->report[0] >= 0)
		close(s->report[0]);
	if (s->report[1] >= 0)
		close(s->report[1]);
	free(s->index);
	free(s->root);
	free(s);
}
