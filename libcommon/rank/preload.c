/*
 * rank/preload.c: what a ci-rank server loads before it forks its workers:
 * the model, the snapshot of the vectors and the candidates' metadata,
 * read again (the metadata by a child) when the index changes.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "index/index.h"
#include "rank/meta.h"

static char *rank_real_dir(const char *dir)
{
	char *r = realpath(dir, NULL);
	return r ? r : xstrdup(dir);
}

/*
 * In the server, before it serves and before each fork: the snapshot of the
 * vectors read again when the file is another (a new token, or none), and
 * the model read once there are vectors.  Not SQLite: a cache set up here
 * would be copied into each worker as it writes to it (2 MiB pages copied on
 * write: 3 ms a query more than each worker setting up its own).
 */
void rank_preload_refresh(struct rank_preload *p, const char *path)
{
	char token[64];
	const char *dir;

	if (vecsnap_file_token(path, token, sizeof(token)) == 0 && p->snap.map &&
	    !strcmp(token, p->snap.head->token))
		return;
	vecsnap_close(&p->snap);
	if (vecsnap_load(&p->snap, path) != 0 || p->model)
		return;		/* no vectors: the workers save the start of a process only */
	dir = embed_model_dir_for(NULL, p->snap.model);
	if (embed_model_open_flags(&p->model, dir, EMBED_OPEN_IN_MEMORY) == 0)
		p->model_dir = rank_real_dir(dir);
}

/*
 * The candidates' metadata (meta.h) in the server: read at the start,
 * then again by a child of the server whenever the index's files look
 * written since (the database's and its log's size, time and inode), so
 * that no request waits for it; meanwhile the workers find it stale (its
 * key is not their transaction's) and ask SQLite.  No SQLite connection of
 * the server's outlives the read at the start: the child's is its own.
 */
void rank_preload_init(struct rank_preload *p)
{
	memset(p, 0, sizeof(*p));
	p->meta_pipe = p->meta_fd = -1;
}

static void meta_stat(const char *path, struct stat st[2])
{
	char *wal = xasprintf("%s-wal", path);

	memset(st, 0, 2 * sizeof(*st));
	if (stat(path, &st[0]) < 0)
		memset(&st[0], 0, sizeof(st[0]));
	if (stat(wal, &st[1]) < 0)
		memset(&st[1], 0, sizeof(st[1]));
	free(wal);
}

static int meta_same(const struct stat *a, const struct stat *b)
{
	for (int i = 0; i < 2; i++)
		if (a[i].st_ino != b[i].st_ino || a[i].st_dev != b[i].st_dev || a[i].st_size != b[i].st_size ||
		    a[i].st_mtim.tv_sec != b[i].st_mtim.tv_sec || a[i].st_mtim.tv_nsec != b[i].st_mtim.tv_nsec)
			return 0;
	return 1;
}

/* Read the block of the index at path into out: 0, or -1. */
static int meta_read_index(const char *path, struct buf *out)
{
	struct ci_index *ix;
	int rc;

	if (index_open(&ix, path, INDEX_READONLY) != 0)
		return -1;
	rc = rank_meta_read(index_db(ix), out);
	index_close(ix);
	return rc;
}

/* Take the block of len bytes at p (copied into huge pages) as the server's. */
static void meta_take(struct rank_preload *p, const void *block, size_t len)
{
	void *mem = huge_alloc(len);
	struct rank_meta m;

	memcpy(mem, block, len);
	if (rank_meta_attach(&m, mem, len) < 0) {
		huge_free(mem, len);
		return;
	}
	if (p->meta_mem)
		huge_free(p->meta_mem, p->meta.len);
	p->meta = m;
	p->meta_mem = mem;
}

void rank_preload_meta_now(struct rank_preload *p, const char *path)
{
	struct buf b = BUF_INIT;

	meta_stat(path, p->meta_seen);
	if (meta_read_index(path, &b) == 0)
		meta_take(p, b.buf, b.len);
	buf_release(&b);
}

/* Before a fork: start a child reading the block again if the index was written since. */
void rank_preload_meta_check(struct rank_preload *p, const char *path, void (*child_init)(void))
{
	struct stat now[2];
	int fds[2];
	pid_t pid;

	if (p->meta_child)
		return;
	meta_stat(path, now);
	if (meta_same(now, p->meta_seen))
		return;
	p->meta_fd = memfd_create("ci-rank-meta", MFD_CLOEXEC);
	if (p->meta_fd < 0)
		return;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		close(p->meta_fd);
		p->meta_fd = -1;
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct buf b = BUF_INIT;
		size_t at = 0;
		child_init();
		close(fds[0]);
		if (meta_read_index(path, &b) == 0) {
			while (at < b.len) {
				ssize_t k = write(p->meta_fd, b.buf + at, b.len - at);
				if (k <= 0)
					_exit(1);
				at += (size_t)k;
			}
			if (write(fds[1], "k", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		close(p->meta_fd);
		p->meta_fd = -1;
		return;
	}
	p->meta_child = pid;
	p->meta_pipe = fds[0];
	memcpy(p->meta_seen, now, sizeof(now));	/* what it reads is at least this new */
}

int rank_preload_watch_fd(const struct rank_preload *p)
{
	return p->meta_pipe;
}

/* The child's 'k' (its block is in p->meta_fd), or its end without one. */
void rank_preload_on_watch(struct rank_preload *p)
{
	char c;
	struct stat st;

	if (read(p->meta_pipe, &c, 1) == 1 && c == 'k' && fstat(p->meta_fd, &st) == 0 && st.st_size > 0) {
		void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, p->meta_fd, 0);
		if (map != MAP_FAILED) {
			meta_take(p, map, (size_t)st.st_size);
			munmap(map, (size_t)st.st_size);
		}
	}
	close(p->meta_pipe);
	close(p->meta_fd);
	p->meta_pipe = p->meta_fd = -1;
	p->meta_child = 0;		/* reaped by the kernel (SIGCHLD ignored) */
}

const struct rank_meta *rank_preload_meta_for(const struct rank_preload *p, sqlite3 *db)
{
	char key[sizeof(p->meta.head->key)];

	if (!p->meta.head)
		return NULL;
	/*
	 * A shard server's (rank_preload_of_db): its index is opened immutable
	 * and opened anew, with its metadata, when its file changes
	 * (fleet_pool_refresh), so the metadata is the index's; the key's
	 * statement, prepared each query, was a sixth of a shard's query
	 */
	if (p->stmts)
		return &p->meta;
	if (rank_meta_key(db, key, sizeof(key)) == 0 && !strcmp(key, p->meta.head->key))
		return &p->meta;
	return NULL;
}

struct rank_preload *rank_preload_of_db(sqlite3 *db)
{
	struct rank_preload *p = xmalloc(sizeof(*p));
	struct buf b = BUF_INIT;

	rank_preload_init(p);
	if (rank_meta_read(db, &b) == 0)
		meta_take(p, b.buf, b.len);
	buf_release(&b);
	if (!p->meta.head) {
		free(p);
		return NULL;
	}
	p->stmts = rank_stmts_new(db);
	return p;
}

void rank_preload_free(struct rank_preload *p)
{
	if (!p)
		return;
	rank_stmts_free(p->stmts);
	huge_free(p->meta_mem, p->meta.len);
	free(p);
}
