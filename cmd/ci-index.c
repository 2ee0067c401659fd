/*
 * ci-index: create, update, inspect and fill the SQLite index of a repository.
 *
 *   ci-index build [<path>]     chunk the repository into a new index
 *   ci-index update             re-read what changed since
 *   ci-index status             what the index holds, as JSON
 *   ci-index load               store records read from standard input
 *   ci-index drop               delete the index
 *
 * Shaped by two workloads: a first build of a large tree (everything goes through
 * the same record loader as `ci-chunk | ci-index load`, into a new file that
 * replaces the old one only when complete), and an agent's edit loop (an update
 * after one changed file stats the tree, re-reads that file, and commits one
 * transaction, in tens of milliseconds).
 */
#include "core/common.h"
#include "parse/chunkrun.h"
#include "index/index.h"
#include "index/blob.h"
#include "embed/vec.h"
#include "embed/vecsnap.h"
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "fork-server.h"
#include "parse/walk.h"
#include "parse/chunk.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <git2.h>

extern const char ci_schema_sql[];

static const char usage_text[] =
	"usage: ci-index [--index <db>] [options] <command> [<args>]\n"
	"\n"
	"Commands:\n"
	"  build [<path>]          index the repository containing <path> (default: .) anew\n"
	"  build --rev <rev> [<path>]\n"
	"                          index the tree of commit <rev> from git's object\n"
	"                          database, without a checkout (a snapshot: no update)\n"
	"  update                  re-read files changed since the last build or update\n"
	"  status                  print what the index holds as a JSON record\n"
	"  load                    store records (file, chunk, def, ref, import, commit,\n"
	"                          coupling) read from standard input\n"
	"  check                   read the whole index (PRAGMA quick_check): ok, or what\n"
	"                          is damaged (exit 3)\n"
	"  drop                    delete the index\n"
	"  serve [--idle <s>] [--stop]\n"
	"                          watch the tree and run updates from memory (started by\n"
	"                          update itself; exits after <s> idle seconds, default\n"
	"                          $CI_INDEX_SERVER_IDLE, else 600)\n"
	"\n"
	"Options:\n"
	"      --index <db>        the index file (default: $CI_INDEX, or\n"
	"                          <root>/.ci-index/index.db)\n"
	"      --embed             build, update, load: embed (in-process) the chunks and\n"
	"                          commits that have no vector; update and load do so\n"
	"                          anyway when the index holds vectors\n"
	"      --history           build, update: also store the git history (commits and\n"
	"                          co-change coupling): ci-couple history | ci-index load\n"
	"      --model <model>     the embedding model, a name (use-lite, ci-code) or a\n"
	"                          directory (default: the index's, else as ci-embed's)\n"
	"      --vectors <format>  store vectors as f32 or int8 (a byte per value and a\n"
	"                          scale per vector; default: the index's, else f32)\n"
	"  -j, --threads <n>       parse and embed with <n> threads (default: the number of CPUs)\n"
	"      --progress          report progress on stderr even when it is not a terminal\n"
	"      --no-progress       never report progress\n"
	"      --no-server         update: run here, not in the index's server, and start\n"
	"                          none (also: CI_INDEX_SERVER=0)\n"
	"  -v, --verbose           say more on stderr\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

static const struct option long_options[] = {
	{ "index", required_argument, NULL, 'I' },
	{ "threads", required_argument, NULL, 'j' },
	{ "embed", no_argument, NULL, 'E' },
	{ "history", no_argument, NULL, 'H' },
	{ "model", required_argument, NULL, 'M' },
	{ "vectors", required_argument, NULL, 'V' },
	{ "progress", no_argument, NULL, 'P' },
	{ "no-progress", no_argument, NULL, 'N' },
	{ "no-server", no_argument, NULL, 'S' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct options {
	const char *index;	/* --index, or NULL */
	int threads;		/* -j */
	int progress;		/* 1 on, 0 off, -1 when stderr is a terminal */
	int embed;		/* --embed */
	int history;		/* --history */
	const char *model;	/* --model, or NULL */
	const char *vectors;	/* --vectors, or NULL: the index's format */
	int no_server;		/* --no-server */
	int damage;		/* index_open's damage flag: INDEX_NOTE_DAMAGE for the
				   commands that repair an index (build, update, serve) */
};

/* ---- helpers ---- */


static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("index: cannot prepare '%.40s...': %s", sql, sqlite3_errmsg(db));
	return st;
}

static int step_done(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return error("index: %s", sqlite3_errmsg(db));
	return 0;
}

static void bind_str_or_null(sqlite3_stmt *st, int i, json_t *v)
{
	if (json_is_string(v))
		sqlite3_bind_text(st, i, json_string_value(v), (int)json_string_length(v), SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long long jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? json_integer_value(v) : json_is_real(v) ? (long long)json_real_value(v) : 0;
}

/*
 * Test hook: die by SIGKILL after this many files (CI_INDEX_CRASH_AFTER), or
 * by the signal CI_INDEX_CRASH_SIGNAL names (TERM, INT), as if sent by
 * someone else.
 */
static long crash_after = -1;
static int crash_signal = SIGKILL;

static void maybe_crash(long files_done)
{
	if (crash_after >= 0 && files_done >= crash_after) {
		fflush(NULL);
		raise(crash_signal);
		crash_after = -1;	/* a signal handled and ignored: once */
	}
}

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
static void tmp_arm(const char *tmp)
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
static void tmp_done(void)
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

/* ---- progress ---- */

/*
 * Progress on stderr (a terminal, or --progress) for one phase of the work:
 * "walking the tree", "indexing 120/812 files, 300 files/s, ETA 2s",
 * "embedding 512/6120 texts, ...".  It shows within a second of the phase's
 * start however long one unit of work takes (a huge file, a batch of 512
 * texts to embed, a VACUUM): a thread of its own writes the line
 * PROGRESS_FIRST seconds after the start and every PROGRESS_EVERY seconds
 * after, from the counter the work advances (progress_add).  A phase that
 * ends before its first line shows nothing, unless it is one whose end is
 * always reported (a build's indexing, an embedding: their last line stays,
 * with "\n").
 */
#define PROGRESS_FIRST 0.5
#define PROGRESS_EVERY 0.25

struct progress {
	int on;			/* report at all */
	int always;		/* write the last line even if none was shown */
	size_t total;		/* units to do; 0: not known (no counts shown) */
	size_t done;		/* units done (atomic: the ticker reads it) */
	double start;		/* seconds */
	const char *what;	/* "indexing" */
	const char *unit;	/* "files", or NULL */
	int shown;		/* a line was written */
	int ticking;		/* the ticker thread runs */
	int stop;		/* the ticker is to end (under mu) */
	pthread_t ticker;
	pthread_mutex_t mu;	/* stop, and the writing of a line */
	pthread_cond_t cond;	/* signalled by progress_stop */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write p's line (final: with its newline).  Under p->mu, or once the ticker ended. */
static void progress_line(struct progress *p, int final)
{
	double t = now(), el = t - p->start > 1e-3 ? t - p->start : 1e-3, rate, eta;
	size_t done = __atomic_load_n(&p->done, __ATOMIC_RELAXED);

	p->shown = 1;
	if (!p->unit) {
		fprintf(stderr, "\r%s: %s, %.0fs   %s", progname, p->what, el, final ? "\n" : "");
		return;
	}
	rate = done / el;
	eta = rate > 0 && p->total > done ? (p->total - done) / rate : 0;
	fprintf(stderr, "\r%s: %s %zu/%zu %s, %.0f %s/s, ETA %.0fs   %s", progname, p->what,
		done, p->total, p->unit, rate, p->unit, eta, final ? "\n" : "");
}

static void *progress_ticker(void *arg)
{
	struct progress *p = arg;
	double next = p->start + PROGRESS_FIRST;
	struct timespec ts;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		double t = now();
		if (t >= next) {
			progress_line(p, 0);
			next = t + PROGRESS_EVERY;
			continue;
		}
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&p->cond, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Begin a phase: what, counted in unit (NULL: not counted) up to total. */
static void progress_start(struct progress *p, int on, const char *what, const char *unit, size_t total,
			   int always)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	p->on = on;
	p->always = always;
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->start = now();
	if (!on)
		return;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* no thread (none can be made): the last line only */
	p->ticking = pthread_create(&p->ticker, NULL, progress_ticker, p) == 0;
}

/* n more units done.  Cannot fail. */
static void progress_add(struct progress *p, size_t n)
{
	__atomic_fetch_add(&p->done, n, __ATOMIC_RELAXED);
}

/* End the phase: its last line, when one was shown or it is always reported. */
static void progress_stop(struct progress *p)
{
	if (!p->on)
		return;
	if (p->ticking) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->ticker, NULL);
		p->ticking = 0;
	}
	if (p->shown || p->always)
		progress_line(p, 1);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->mu);
	p->on = 0;
}

/*
 * Test hook: CI_INDEX_SLOW_MS milliseconds of sleep before each file a build
 * or an update stores, as if each were huge (t0570: progress shows while the
 * first file is still being read).
 */
static long slow_ms;

static void maybe_slow(void)
{
	if (slow_ms > 0) {
		struct timespec ts = { slow_ms / 1000, (slow_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* ---- what ci-rank reads of chunks_fts cheaply: term_df, chunk_sizes ---- */

/*
 * The chunks a load inserts, counted per term: each distinct term of a chunk
 * counts once (a hash table of the terms, keys in one arena).  At the end the
 * counts are added to term_df's rows (a term not in term_df is left to
 * fts5vocab), and the chunks' sizes are copied into chunk_sizes.  A build, an
 * update that deleted chunks, and a load of more than DF_MAX_TERMS distinct
 * terms fill both tables anew instead.
 */
struct df_slot {
	uint32_t off, len;	/* the term in the arena; len 0: empty slot */
	uint32_t hash;
	uint32_t count;		/* chunks holding it */
	uint64_t last;		/* the last chunk counted (1-based) */
};

struct df_count {
	struct df_slot *v;
	size_t cap, nr;		/* slots (a power of 2), terms */
	struct buf keys;	/* the terms */
	uint64_t chunk;		/* the chunk being counted (1-based) */
	sqlite3_int64 *ids;	/* the chunks inserted */
	size_t ids_nr, ids_alloc;
	int full;		/* fill term_df and chunk_sizes anew */
};

#define DF_MAX_TERMS (1u << 20)

static void df_grow(struct df_count *dc)
{
	size_t cap = dc->cap ? dc->cap * 2 : 4096, i, j;
	struct df_slot *v = xcalloc(cap, sizeof(*v));

	for (i = 0; i < dc->cap; i++) {
		if (!dc->v[i].len)
			continue;
		for (j = dc->v[i].hash & (cap - 1); v[j].len; j = (j + 1) & (cap - 1))
			;
		v[j] = dc->v[i];
	}
	free(dc->v);
	dc->v = v;
	dc->cap = cap;
}

static void df_term(const char *t, int n, void *ctx)
{
	struct df_count *dc = ctx;
	uint32_t h = (uint32_t)fnv1a(FNV1A_BASIS, t, (size_t)n);
	size_t j;

	if (dc->full || n <= 0)
		return;
	if (2 * (dc->nr + 1) > dc->cap)
		df_grow(dc);
	for (j = h & (dc->cap - 1); dc->v[j].len; j = (j + 1) & (dc->cap - 1)) {
		struct df_slot *e = &dc->v[j];
		if (e->hash == h && e->len == (uint32_t)n && !memcmp(dc->keys.buf + e->off, t, (size_t)n)) {
			if (e->last != dc->chunk) {
				e->last = dc->chunk;
				e->count++;
			}
			return;
		}
	}
	if (dc->nr >= DF_MAX_TERMS) {
		dc->full = 1;	/* a large load: recount everything at the end */
		return;
	}
	dc->v[j].off = (uint32_t)dc->keys.len;
	dc->v[j].len = (uint32_t)n;
	dc->v[j].hash = h;
	dc->v[j].count = 1;
	dc->v[j].last = dc->chunk;
	buf_add(&dc->keys, t, (size_t)n);
	dc->nr++;
}

/* Count the terms of chunk id, just inserted into chunks_fts (its four columns). */
static void df_chunk(struct df_count *dc, sqlite3_int64 id, const char *const cols[4], const size_t lens[4])
{
	if (dc->full)
		return;
	ALLOC_GROW(dc->ids, dc->ids_nr + 1, dc->ids_alloc);
	dc->ids[dc->ids_nr++] = id;
	dc->chunk++;
	for (int i = 0; i < 4; i++)
		if (cols[i])
			index_terms(cols[i], lens[i], df_term, dc);
}

/* A chunks_fts_docsize record: one varint per column; their sum. */
static uint32_t docsize_total(const unsigned char *p, size_t n)
{
	uint64_t total = 0, v;
	size_t k;

	while (n && (k = index_varint(p, n, &v))) {
		total += v;
		p += k;
		n -= k;
	}
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

static int cmp_int64(const void *a, const void *b)
{
	sqlite3_int64 x = *(const sqlite3_int64 *)a, y = *(const sqlite3_int64 *)b;

	return x < y ? -1 : x > y;
}

/* Write one row of chunk_sizes. */
static int put_sizes(sqlite3 *db, sqlite3_stmt *put, sqlite3_int64 block, const unsigned char *blk, size_t n)
{
	sqlite3_bind_int64(put, 1, block);
	sqlite3_bind_blob(put, 2, blk, (int)n, SQLITE_STATIC);
	return step_done(db, put);
}

/*
 * Copy the sizes (tokens) of chunks_fts rows into chunk_sizes: those of ids[]
 * (sorted here), or of every row when ids is NULL (the table is emptied first).
 */
static int sizes_store(sqlite3 *db, sqlite3_int64 *ids, size_t nr)
{
	sqlite3_stmt *get, *cur, *put, *scan = NULL;
	unsigned char blk[CI_SIZES_BLOCK * 4];
	sqlite3_int64 block = -1, id;
	size_t i = 0;
	int rc = 0, dirty = 0;

	if (!ids) {
		if (index_exec(db, "DELETE FROM chunk_sizes") < 0)
			return -1;
		scan = prep(db, "SELECT id, sz FROM chunks_fts_docsize ORDER BY id");
	} else {
		qsort(ids, nr, sizeof(*ids), cmp_int64);
	}
	get = prep(db, "SELECT sz FROM chunks_fts_docsize WHERE id = ?1");
	cur = prep(db, "SELECT sizes FROM chunk_sizes WHERE block = ?1");
	put = prep(db, "INSERT OR REPLACE INTO chunk_sizes(block, sizes) VALUES (?1, ?2)");
	for (;;) {
		const unsigned char *sz = NULL;
		int szn = 0;

		if (scan) {
			if (sqlite3_step(scan) != SQLITE_ROW)
				break;
			id = sqlite3_column_int64(scan, 0);
			sz = sqlite3_column_blob(scan, 1);
			szn = sqlite3_column_bytes(scan, 1);
		} else {
			if (i >= nr)
				break;
			id = ids[i++];
			sqlite3_bind_int64(get, 1, id);
			if (sqlite3_step(get) == SQLITE_ROW) {
				sz = sqlite3_column_blob(get, 0);
				szn = sqlite3_column_bytes(get, 0);
			}
		}
		if (id < 0)
			continue;
		if (id / CI_SIZES_BLOCK != block) {
			if (dirty && (rc = put_sizes(db, put, block, blk, sizeof(blk))) < 0)
				break;
			block = id / CI_SIZES_BLOCK;
			memset(blk, 0, sizeof(blk));
			if (!scan) {
				sqlite3_bind_int64(cur, 1, block);
				if (sqlite3_step(cur) == SQLITE_ROW && sqlite3_column_bytes(cur, 0) == (int)sizeof(blk))
					memcpy(blk, sqlite3_column_blob(cur, 0), sizeof(blk));
				sqlite3_reset(cur);
			}
		}
		index_size_put(blk, (size_t)(id % CI_SIZES_BLOCK), sz ? docsize_total(sz, (size_t)szn) : 0);
		dirty = 1;
		if (!scan)
			sqlite3_reset(get);
	}
	if (rc == 0 && dirty)
		rc = put_sizes(db, put, block, blk, sizeof(blk));
	sqlite3_finalize(scan);
	sqlite3_finalize(get);
	sqlite3_finalize(cur);
	sqlite3_finalize(put);
	return rc;
}

/*
 * Bring term_df and chunk_sizes up to date with the chunks inserted: add the
 * counts and copy their sizes, or (dc->full) fill term_df anew with every term
 * of chunks_fts in CI_TERM_DF_MIN chunks or more, and chunk_sizes with every row.
 */
static int df_finish(sqlite3 *db, struct df_count *dc)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (dc->full) {
		char sql[320];
		snprintf(sql, sizeof(sql),
			 "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab USING fts5vocab(main, chunks_fts, row);"
			 "DELETE FROM term_df;"
			 "INSERT INTO term_df(term, df) SELECT term, doc FROM temp.ci_vocab WHERE doc >= %d;"
			 "DROP TABLE temp.ci_vocab;", CI_TERM_DF_MIN);
		return index_exec(db, sql) < 0 || sizes_store(db, NULL, 0) < 0 ? -1 : 0;
	}
	if (!dc->nr)
		return 0;
	st = prep(db, "UPDATE term_df SET df = df + ?2 WHERE term = ?1");
	for (size_t i = 0; i < dc->cap && rc == 0; i++) {
		struct df_slot *e = &dc->v[i];
		if (!e->len)
			continue;
		sqlite3_bind_text(st, 1, dc->keys.buf + e->off, (int)e->len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, e->count);
		rc = step_done(db, st);
	}
	sqlite3_finalize(st);
	return rc < 0 ? -1 : sizes_store(db, dc->ids, dc->ids_nr);
}

static void df_release(struct df_count *dc)
{
	free(dc->v);
	free(dc->ids);
	buf_release(&dc->keys);
	memset(dc, 0, sizeof(*dc));
}

/* ---- the record loader ---- */

struct loader {
	sqlite3 *db;			/* the index */
	const char *root;		/* repository root, to stat files */
	const char *src;		/* "<stdin>" or a path, for messages */
	int snapshot;			/* files come from a commit: their mtime is 0, not stat'd */
	long lineno;			/* current record's line */
	sqlite3_stmt *blob_get, *blob_add, *blob_seen, *file_put, *chunk_add, *fts_add, *tri_add, *segs_put,
		*def_add, *ref_add, *imp_del, *imp_add, *vec_add, *chunk_find,
		*commit_add, *cfile_add, *coupling_add;
	enum vec_format vfmt;		/* how vectors are stored */
	struct buf vbuf;		/* a vector's bytes, as stored */
	sqlite3_stmt *cvec_add;		/* stores a commit's vector */
	char *cur_path;			/* file whose records follow */
	sqlite3_int64 cur_blob;		/* its blobs.id */
	int64_t cur_size;		/* its size */
	int cur_new;			/* its content is new: store its chunks, defs, refs */
	struct buf cur_text;		/* its chunk texts, for the trigram table */
	struct buf segs;		/* its blobs.segs */
	struct df_count df;		/* the inserted chunks' terms, for term_df */
	long files, chunks, defs, refs, imports, vectors, commits, couplings, commit_vectors; /* counts */
};

static void loader_init(struct loader *ld, sqlite3 *db, const char *root, enum vec_format vfmt)
{
	memset(ld, 0, sizeof(*ld));
	ld->db = db;
	ld->root = root;
	ld->src = "<stdin>";
	ld->vfmt = vfmt;
	buf_init(&ld->cur_text, 0);
	buf_init(&ld->segs, 0);
	buf_init(&ld->vbuf, 0);
	buf_init(&ld->df.keys, 0);
	ld->blob_get = prep(db, "SELECT id FROM blobs WHERE blob = ?1");
	ld->blob_add = prep(db, "INSERT INTO blobs(blob, lang, size, lines, exact) VALUES (?1, ?2, ?3, ?4, ?5)");
	ld->blob_seen = prep(db, "SELECT count(*) FROM chunks WHERE blob_id = ?1");
	ld->file_put = prep(db, "INSERT OR REPLACE INTO files(path, blob_id, size, mtime) VALUES (?1, ?2, ?3, ?4)");
	ld->chunk_add = prep(db, "INSERT INTO chunks(blob_id, start_line, end_line, kind, name, scope, signature, text) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ci_deflate(?8))");
	ld->fts_add = prep(db, "INSERT INTO chunks_fts(rowid, name, scope, signature, text) VALUES (?1, ?2, ?3, ?4, ?5)");
	ld->tri_add = prep(db, "INSERT INTO chunks_tri(rowid, text) VALUES (?1, ?2)");
	ld->segs_put = prep(db, "UPDATE blobs SET segs = ?2 WHERE id = ?1");
	ld->def_add = prep(db, "INSERT INTO defs(blob_id, name, kind, line, col, end_line, scope) "
			   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	ld->ref_add = prep(db, "INSERT INTO refs(blob_id, name, kind, line, col, scope) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->imp_del = prep(db, "DELETE FROM imports WHERE path = ?1");
	ld->imp_add = prep(db, "INSERT INTO imports(path, target, resolved, line, type_only) "
			     "VALUES (?1, ?2, ?3, ?4, ?5)");
	ld->vec_add = prep(db, "INSERT OR REPLACE INTO vectors(chunk_id, model, dim, fmt, scale, vec) "
			   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->cvec_add = prep(db, "INSERT OR REPLACE INTO commit_vectors(sha, model, dim, fmt, scale, vec) "
			    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->chunk_find = prep(db, "SELECT id FROM chunks WHERE blob_id = ?1 AND start_line = ?2 AND end_line = ?3");
	ld->commit_add = prep(db, "INSERT OR REPLACE INTO commits(sha, time, author, email, message, parents, merged_into) "
			      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	ld->cfile_add = prep(db, "INSERT OR REPLACE INTO commit_files(sha, path, added, deleted, status, old_path) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->coupling_add = prep(db, "INSERT OR REPLACE INTO coupling(a, b, score, co_changes, last) VALUES (?1, ?2, ?3, ?4, ?5)");
}

/*
 * Each segment of a blob's text (index_segments) to fn(its row in chunks_tri,
 * the segment's text, data), in order; what fn returns if not 0.  segs, if not
 * NULL, gets the blob's segs column.
 */
static int each_segment(sqlite3_int64 id, const char *text, size_t len, int64_t size,
			int (*fn)(sqlite3_int64 row, const char *seg, size_t n, void *data), void *data,
			struct buf *segs)
{
	uint32_t ends[INDEX_SEG_MAX];
	unsigned n = index_segments(text, len, size, ends), i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = fn((id << INDEX_SEG_BITS) | i, text + (i ? ends[i - 1] : 0),
			     ends[i] - (i ? ends[i - 1] : 0), data)))
			return rc;
	if (segs)
		index_segs_encode(segs, text, ends, n);
	return 0;
}

static int del_tri_row(sqlite3_int64 row, const char *seg, size_t n, void *data)
{
	sqlite3_stmt *del = data;

	sqlite3_bind_int64(del, 1, row);
	sqlite3_bind_text(del, 2, seg, (int)n, SQLITE_STATIC);
	return step_done(sqlite3_db_handle(del), del);
}

static int put_tri(sqlite3_int64 row, const char *seg, size_t n, void *data)
{
	struct loader *ld = data;

	sqlite3_bind_int64(ld->tri_add, 1, row);
	sqlite3_bind_text(ld->tri_add, 2, seg, (int)n, SQLITE_STATIC);
	return step_done(ld->db, ld->tri_add);
}

/* Store the trigrams of the file just finished, by segments, if its content is new. */
static int loader_finish_file(struct loader *ld)
{
	int rc = 0;

	if (ld->cur_path && ld->cur_new) {
		rc = each_segment(ld->cur_blob, ld->cur_text.buf, ld->cur_text.len, ld->cur_size, put_tri, ld,
				  &ld->segs);
		if (!rc && ld->segs.len) {
			sqlite3_bind_int64(ld->segs_put, 1, ld->cur_blob);
			sqlite3_bind_blob(ld->segs_put, 2, ld->segs.buf, (int)ld->segs.len, SQLITE_STATIC);
			rc = step_done(ld->db, ld->segs_put);
		}
	}
	free(ld->cur_path);
	ld->cur_path = NULL;
	ld->cur_new = 0;
	buf_reset(&ld->cur_text);
	return rc;
}

static void loader_release(struct loader *ld)
{
	sqlite3_stmt **sts[] = { &ld->blob_get, &ld->blob_add, &ld->blob_seen, &ld->file_put,
		&ld->chunk_add, &ld->fts_add, &ld->tri_add, &ld->segs_put, &ld->def_add, &ld->ref_add, &ld->imp_del, &ld->imp_add,
		&ld->vec_add, &ld->chunk_find, &ld->commit_add, &ld->cfile_add, &ld->coupling_add,
		&ld->cvec_add };

	for (size_t i = 0; i < ARRAY_SIZE(sts); i++)
		sqlite3_finalize(*sts[i]);
	free(ld->cur_path);
	buf_release(&ld->cur_text);
	buf_release(&ld->segs);
	buf_release(&ld->vbuf);
	df_release(&ld->df);
}

static int bad(struct loader *ld, const char *what, const char *type);

/*
 * Store vector v[0..dim) of model in st (vec_add or cvec_add, whose key is
 * bound already) in the loader's format.  0, or -1 after a message.
 */
static int store_vec(struct loader *ld, sqlite3_stmt *st, const char *model, const float *v, size_t dim)
{
	double scale;

	buf_reset(&ld->vbuf);
	vec_encode(&ld->vbuf, &scale, v, dim, ld->vfmt);
	sqlite3_bind_text(st, 2, model ? model : "unknown", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)dim);
	sqlite3_bind_text(st, 4, vec_format_name(ld->vfmt), -1, SQLITE_STATIC);
	if (ld->vfmt == VEC_F32)
		sqlite3_bind_null(st, 5);
	else
		sqlite3_bind_double(st, 5, scale);
	sqlite3_bind_blob(st, 6, ld->vbuf.buf, (int)ld->vbuf.len, SQLITE_STATIC);
	return step_done(ld->db, st);
}

/* The "vec" of record rec, decoded: 0 and a malloc'd *v, 1 when it has none, -1 after a message. */
static int record_vec(struct loader *ld, json_t *rec, const char *type, float **v, size_t *dim)
{
	json_t *vec = json_object_get(rec, "vec");

	*v = NULL;
	if (!vec)
		return 1;
	if (!json_is_string(vec) || vec_from_base64(v, dim, json_string_value(vec), json_string_length(vec)) < 0)
		return bad(ld, "has a \"vec\" that is not base64 of float32 values", type);
	return 0;
}

static int bad(struct loader *ld, const char *what, const char *type)
{
	return error("%s:%ld: %s record %s", ld->src, ld->lineno, type, what);
}

/* Records after a file record must be about that file. */
static int check_path(struct loader *ld, json_t *rec, const char *type)
{
	const char *p = jstr(rec, "path");

	if (!p)
		return bad(ld, "has no \"path\"", type);
	if (!ld->cur_path || strcmp(p, ld->cur_path))
		return error("%s:%ld: %s record for '%s' does not follow a file record for it "
			     "(ci-chunk writes them in order unless --no-files is given)",
			     ld->src, ld->lineno, type, p);
	return 0;
}

static int load_file(struct loader *ld, json_t *rec)
{
	const char *path = jstr(rec, "path"), *blob = jstr(rec, "blob");
	json_t *utf8 = json_object_get(rec, "utf8");
	sqlite3_int64 id = 0;
	struct stat st;
	char *abs;
	int64_t mtime = 0;

	if (loader_finish_file(ld) < 0)
		return -1;
	if (!path || !*path)
		return bad(ld, "has no \"path\"", "file");
	if (!blob || strlen(blob) != 40)
		return bad(ld, "has no 40-digit \"blob\"", "file");
	if (path[0] == '/' || !strcmp(path, "..") || !strncmp(path, "../", 3) || strstr(path, "/../") ||
	    (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
		return error("%s:%ld: file record path '%s' leaves the repository", ld->src, ld->lineno, path);
	sqlite3_bind_text(ld->blob_get, 1, blob, -1, SQLITE_STATIC);
	if (sqlite3_step(ld->blob_get) == SQLITE_ROW)
		id = sqlite3_column_int64(ld->blob_get, 0);
	sqlite3_reset(ld->blob_get);
	ld->cur_new = 0;
	if (!id) {
		sqlite3_bind_text(ld->blob_add, 1, blob, -1, SQLITE_STATIC);
		bind_str_or_null(ld->blob_add, 2, json_object_get(rec, "lang"));
		sqlite3_bind_int64(ld->blob_add, 3, jint(rec, "size"));
		sqlite3_bind_int64(ld->blob_add, 4, jint(rec, "lines"));
		sqlite3_bind_int(ld->blob_add, 5, !json_is_false(utf8));
		if (step_done(ld->db, ld->blob_add) < 0)
			return -1;
		id = sqlite3_last_insert_rowid(ld->db);
		ld->cur_new = 1;
	}
	if (!ld->snapshot) {
		abs = xasprintf("%s/%s", ld->root, path);
		if (stat(abs, &st) == 0)
			mtime = (int64_t)st.st_mtime;
		free(abs);
	}
	sqlite3_bind_text(ld->file_put, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ld->file_put, 2, id);
	sqlite3_bind_int64(ld->file_put, 3, jint(rec, "size"));
	sqlite3_bind_int64(ld->file_put, 4, mtime);
	if (step_done(ld->db, ld->file_put) < 0)
		return -1;
	sqlite3_bind_text(ld->imp_del, 1, path, -1, SQLITE_STATIC);
	if (step_done(ld->db, ld->imp_del) < 0)
		return -1;
	ld->cur_path = xstrdup(path);
	ld->cur_blob = id;
	ld->cur_size = jint(rec, "size");
	ld->files++;
	return 0;
}

static void set_meta(sqlite3 *db, const char *key, const char *value);

static int load_chunk(struct loader *ld, json_t *rec)
{
	json_t *text = json_object_get(rec, "text");
	json_t *vec = json_object_get(rec, "vec");
	sqlite3_int64 chunk_id = 0;

	if (check_path(ld, rec, "chunk") < 0)
		return -1;
	if (!json_is_string(text) || !json_is_integer(json_object_get(rec, "start_line")) ||
	    !json_is_integer(json_object_get(rec, "end_line")) || !jstr(rec, "kind"))
		return bad(ld, "needs \"text\", \"start_line\", \"end_line\" and \"kind\"", "chunk");
	if (ld->cur_new) {
		sqlite3_bind_int64(ld->chunk_add, 1, ld->cur_blob);
		sqlite3_bind_int64(ld->chunk_add, 2, jint(rec, "start_line"));
		sqlite3_bind_int64(ld->chunk_add, 3, jint(rec, "end_line"));
		bind_str_or_null(ld->chunk_add, 4, json_object_get(rec, "kind"));
		bind_str_or_null(ld->chunk_add, 5, json_object_get(rec, "name"));
		bind_str_or_null(ld->chunk_add, 6, json_object_get(rec, "scope"));
		bind_str_or_null(ld->chunk_add, 7, json_object_get(rec, "signature"));
		bind_str_or_null(ld->chunk_add, 8, text);
		if (step_done(ld->db, ld->chunk_add) < 0)
			return -1;
		chunk_id = sqlite3_last_insert_rowid(ld->db);
		sqlite3_bind_int64(ld->fts_add, 1, chunk_id);
		bind_str_or_null(ld->fts_add, 2, json_object_get(rec, "name"));
		bind_str_or_null(ld->fts_add, 3, json_object_get(rec, "scope"));
		bind_str_or_null(ld->fts_add, 4, json_object_get(rec, "signature"));
		bind_str_or_null(ld->fts_add, 5, text);
		if (step_done(ld->db, ld->fts_add) < 0)
			return -1;
		{
			static const char *const names[4] = { "name", "scope", "signature", "text" };
			const char *cols[4];
			size_t lens[4];
			for (int i = 0; i < 4; i++) {
				json_t *v = json_object_get(rec, names[i]);
				cols[i] = json_is_string(v) ? json_string_value(v) : NULL;
				lens[i] = cols[i] ? json_string_length(v) : 0;
			}
			df_chunk(&ld->df, chunk_id, cols, lens);
		}
		if (ld->cur_text.len)
			buf_addch(&ld->cur_text, '\n');
		buf_add(&ld->cur_text, json_string_value(text), json_string_length(text));
		ld->chunks++;
	}
	if (vec) {
		float *v;
		size_t dim;
		int rc;

		if (!chunk_id) {
			sqlite3_bind_int64(ld->chunk_find, 1, ld->cur_blob);
			sqlite3_bind_int64(ld->chunk_find, 2, jint(rec, "start_line"));
			sqlite3_bind_int64(ld->chunk_find, 3, jint(rec, "end_line"));
			if (sqlite3_step(ld->chunk_find) == SQLITE_ROW)
				chunk_id = sqlite3_column_int64(ld->chunk_find, 0);
			sqlite3_reset(ld->chunk_find);
		}
		if (!chunk_id)
			return bad(ld, "has a vector for a chunk the index does not hold", "chunk");
		if (record_vec(ld, rec, "chunk", &v, &dim) < 0)
			return -1;
		sqlite3_bind_int64(ld->vec_add, 1, chunk_id);
		rc = store_vec(ld, ld->vec_add, jstr(rec, "model"), v, dim);
		free(v);
		if (rc < 0)
			return -1;
		ld->vectors++;
	}
	return 0;
}

static int load_tag(struct loader *ld, json_t *rec, int is_def)
{
	const char *type = is_def ? "def" : "ref";
	sqlite3_stmt *st = is_def ? ld->def_add : ld->ref_add;

	if (check_path(ld, rec, type) < 0)
		return -1;
	if (!jstr(rec, "name") || !jstr(rec, "kind") || !json_is_integer(json_object_get(rec, "line")))
		return bad(ld, "needs \"name\", \"kind\" and \"line\"", type);
	if (!ld->cur_new)
		return 0;
	sqlite3_bind_int64(st, 1, ld->cur_blob);
	bind_str_or_null(st, 2, json_object_get(rec, "name"));
	bind_str_or_null(st, 3, json_object_get(rec, "kind"));
	sqlite3_bind_int64(st, 4, jint(rec, "line"));
	sqlite3_bind_int64(st, 5, jint(rec, "col"));
	if (is_def) {
		long long e = jint(rec, "end_line");
		sqlite3_bind_int64(st, 6, e ? e : jint(rec, "line"));
		bind_str_or_null(st, 7, json_object_get(rec, "scope"));
		ld->defs++;
	} else {
		bind_str_or_null(st, 6, json_object_get(rec, "scope"));
		ld->refs++;
	}
	return step_done(ld->db, st);
}

static int load_import(struct loader *ld, json_t *rec)
{
	if (check_path(ld, rec, "import") < 0)
		return -1;
	if (!jstr(rec, "target") || !json_is_integer(json_object_get(rec, "line")))
		return bad(ld, "needs \"target\" and \"line\"", "import");
	sqlite3_bind_text(ld->imp_add, 1, ld->cur_path, -1, SQLITE_STATIC);
	bind_str_or_null(ld->imp_add, 2, json_object_get(rec, "target"));
	bind_str_or_null(ld->imp_add, 3, json_object_get(rec, "resolved"));
	sqlite3_bind_int64(ld->imp_add, 4, jint(rec, "line"));
	sqlite3_bind_int(ld->imp_add, 5, json_is_true(json_object_get(rec, "type_only")));
	ld->imports++;
	return step_done(ld->db, ld->imp_add);
}

static int load_commit(struct loader *ld, json_t *rec)
{
	json_t *files = json_object_get(rec, "files"), *f;
	size_t i;

	if (!jstr(rec, "sha") || !json_is_integer(json_object_get(rec, "time")))
		return bad(ld, "needs \"sha\" and \"time\"", "commit");
	sqlite3_bind_text(ld->commit_add, 1, jstr(rec, "sha"), -1, SQLITE_STATIC);
	sqlite3_bind_int64(ld->commit_add, 2, jint(rec, "time"));
	bind_str_or_null(ld->commit_add, 3, json_object_get(rec, "author"));
	bind_str_or_null(ld->commit_add, 4, json_object_get(rec, "email"));
	bind_str_or_null(ld->commit_add, 5, json_object_get(rec, "message"));
	if (json_is_integer(json_object_get(rec, "parents")))
		sqlite3_bind_int64(ld->commit_add, 6, jint(rec, "parents"));
	else
		sqlite3_bind_null(ld->commit_add, 6);
	bind_str_or_null(ld->commit_add, 7, json_object_get(rec, "merged_into"));
	if (step_done(ld->db, ld->commit_add) < 0)
		return -1;
	json_array_foreach(files, i, f) {
		/* "files": ["a.c", ...] or [{"path":"a.c","added":3,"deleted":1}, ...] */
		const char *p = json_is_string(f) ? json_string_value(f) : jstr(f, "path");
		if (!p)
			return bad(ld, "has a file without a path", "commit");
		sqlite3_bind_text(ld->cfile_add, 1, jstr(rec, "sha"), -1, SQLITE_STATIC);
		sqlite3_bind_text(ld->cfile_add, 2, p, -1, SQLITE_STATIC);
		if (json_is_object(f)) {
			sqlite3_bind_int64(ld->cfile_add, 3, jint(f, "added"));
			sqlite3_bind_int64(ld->cfile_add, 4, jint(f, "deleted"));
			bind_str_or_null(ld->cfile_add, 5, json_object_get(f, "status"));
			bind_str_or_null(ld->cfile_add, 6, json_object_get(f, "old_path"));
		} else {
			sqlite3_bind_null(ld->cfile_add, 3);
			sqlite3_bind_null(ld->cfile_add, 4);
			sqlite3_bind_null(ld->cfile_add, 5);
			sqlite3_bind_null(ld->cfile_add, 6);
		}
		if (step_done(ld->db, ld->cfile_add) < 0)
			return -1;
	}
	ld->commits++;
	if (json_object_get(rec, "vec")) {
		float *v;
		size_t dim;
		int rc;

		if (record_vec(ld, rec, "commit", &v, &dim) < 0)
			return -1;
		sqlite3_bind_text(ld->cvec_add, 1, jstr(rec, "sha"), -1, SQLITE_TRANSIENT);
		rc = store_vec(ld, ld->cvec_add, jstr(rec, "model"), v, dim);
		free(v);
		if (rc < 0)
			return -1;
		ld->commit_vectors++;
	}
	return 0;
}

static int load_coupling(struct loader *ld, json_t *rec)
{
	json_t *score = json_object_get(rec, "score");

	if (!jstr(rec, "a") || !jstr(rec, "b") || !json_is_number(score))
		return bad(ld, "needs \"a\", \"b\" and \"score\"", "coupling");
	sqlite3_bind_text(ld->coupling_add, 1, jstr(rec, "a"), -1, SQLITE_STATIC);
	sqlite3_bind_text(ld->coupling_add, 2, jstr(rec, "b"), -1, SQLITE_STATIC);
	sqlite3_bind_double(ld->coupling_add, 3, json_number_value(score));
	sqlite3_bind_int64(ld->coupling_add, 4, jint(rec, "co_changes"));
	if (json_is_integer(json_object_get(rec, "last")))
		sqlite3_bind_int64(ld->coupling_add, 5, jint(rec, "last"));
	else
		sqlite3_bind_null(ld->coupling_add, 5);
	ld->couplings++;
	return step_done(ld->db, ld->coupling_add);
}

/*
 * ci-couple's header records: a "history" record with "replace":true (a first
 * walk, or a rewritten history) replaces the stored history and coupling; a
 * "couplings" record with "replace":true replaces the coupling table.  The
 * history's head is remembered, for the next incremental walk.
 */
static int load_history_header(struct loader *ld, json_t *rec, int history)
{
	if (json_is_true(json_object_get(rec, "replace"))) {
		const char *sql = history ?
			"DELETE FROM commit_files; DELETE FROM commits; DELETE FROM commit_vectors; DELETE FROM coupling;" :
			"DELETE FROM coupling;";
		if (index_exec(ld->db, sql) < 0)
			return -1;
	}
	if (history && jstr(rec, "head"))
		set_meta(ld->db, "history_head", jstr(rec, "head"));
	return 0;
}

/* Store one record.  Unknown types are ignored (a sink has nowhere to pass them). */
static int load_record(struct loader *ld, json_t *rec)
{
	const char *t = jstr(rec, "_type");

	if (!strcmp(t, "file"))
		return load_file(ld, rec);
	if (!strcmp(t, "chunk"))
		return load_chunk(ld, rec);
	if (!strcmp(t, "def"))
		return load_tag(ld, rec, 1);
	if (!strcmp(t, "ref"))
		return load_tag(ld, rec, 0);
	if (!strcmp(t, "import"))
		return load_import(ld, rec);
	if (!strcmp(t, "commit"))
		return load_commit(ld, rec);
	if (!strcmp(t, "coupling"))
		return load_coupling(ld, rec);
	if (!strcmp(t, "history") || !strcmp(t, "couplings"))
		return load_history_header(ld, rec, !strcmp(t, "history"));
	return 0;
}

/* Parse a buffer of NDJSON records and store them. */
static int load_buffer(struct loader *ld, const char *p, size_t n)
{
	const char *end = p + n, *nl;
	json_error_t jerr;

	while (p < end) {
		json_t *rec;
		int rc;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		ld->lineno++;
		rec = json_loadb(p, (size_t)(nl - p), JSON_ALLOW_NUL, &jerr);
		if (!rec || !json_is_object(rec) || !jstr(rec, "_type")) {
			json_decref(rec);
			return error("%s:%ld: not a record: %s", ld->src, ld->lineno,
				     rec ? "no \"_type\"" : jerr.text);
		}
		rc = load_record(ld, rec);
		json_decref(rec);
		if (rc < 0)
			return -1;
		p = nl + 1;
	}
	return 0;
}

/* ---- meta, garbage collection ---- */

static void set_meta(sqlite3 *db, const char *key, const char *value)
{
	sqlite3_stmt *st = prep(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	step_done(db, st);
	sqlite3_finalize(st);
}

static char *head_commit(const char *root)
{
	git_repository *repo = NULL;
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	walk_git_start();
	if (git_repository_open(&repo, root) < 0) {
		git_error_clear();
		return NULL;
	}
	if (git_reference_name_to_id(&oid, repo, "HEAD") < 0) {
		git_error_clear();
		git_repository_free(repo);
		return NULL;
	}
	git_oid_tostr(hex, sizeof(hex), &oid);
	git_repository_free(repo);
	return xstrdup(hex);
}

/* Record the time in meta key, and the commit indexed: snapshot's, else HEAD's. */
static void stamp(sqlite3 *db, const char *root, const char *key, const char *snapshot)
{
	char when[32];
	time_t t = time(NULL);
	char *commit = snapshot ? xstrdup(snapshot) : head_commit(root);

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	set_meta(db, key, when);
	snprintf(when, sizeof(when), "%lld", (long long)t);
	set_meta(db, "updated_epoch", when);
	set_meta(db, "commit", commit ? commit : "");
	free(commit);
}

/*
 * Drop the content of blobs no file points at, once they outnumber the live ones
 * (until then they are kept, so switching back to a branch re-reads nothing).
 * Returns 1 when it dropped some, 0 when not, -1 after an error.
 */
static int collect_garbage(sqlite3 *db)
{
	/* every files.blob_id is a blob: the unreferenced ones are the rest
	 * (counting them by NOT IN probed files_blob once a blob, 1.6 ms a
	 * 10,000-file update; this reads the two indexes in order, 0.2 ms) */
	sqlite3_stmt *cnt = prep(db, "SELECT (SELECT count(*) FROM blobs) - "
				 "(SELECT count(DISTINCT blob_id) FROM files), (SELECT count(*) FROM blobs)");
	sqlite3_stmt *dead, *text, *del_tri;
	long long unref = 0, all = 0;
	struct buf b = BUF_INIT;
	int rc = 0;

	if (sqlite3_step(cnt) == SQLITE_ROW) {
		unref = sqlite3_column_int64(cnt, 0);
		all = sqlite3_column_int64(cnt, 1);
	}
	sqlite3_finalize(cnt);
	if (!unref || unref * 2 <= all)
		return 0;
	dead = prep(db, "SELECT id, size FROM blobs WHERE id NOT IN (SELECT blob_id FROM files)");
	text = prep(db, "SELECT ci_inflate(text) FROM chunks WHERE blob_id = ?1 ORDER BY start_line");
	del_tri = prep(db, "INSERT INTO chunks_tri(chunks_tri, rowid, text) VALUES ('delete', ?1, ?2)");
	while (sqlite3_step(dead) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(dead, 0);
		/* a contentless FTS5 row is deleted by giving its text again: the
		 * blob's text is cut into the same segments as when it was stored */
		buf_reset(&b);
		sqlite3_bind_int64(text, 1, id);
		while (sqlite3_step(text) == SQLITE_ROW) {
			if (b.len)
				buf_addch(&b, '\n');
			buf_add(&b, sqlite3_column_text(text, 0), (size_t)sqlite3_column_bytes(text, 0));
		}
		sqlite3_reset(text);
		if (each_segment(id, b.buf, b.len, sqlite3_column_int64(dead, 1), del_tri_row, del_tri, NULL) < 0) {
			rc = -1;
			break;
		}
	}
	sqlite3_finalize(dead);
	sqlite3_finalize(text);
	sqlite3_finalize(del_tri);
	buf_release(&b);
	if (rc < 0 || index_exec(db,
		"DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE blob_id NOT IN (SELECT blob_id FROM files));"
		"DELETE FROM chunks WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM defs WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM refs WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM blobs WHERE id NOT IN (SELECT blob_id FROM files);") < 0)
		return -1;
	return 1;
}

/* ---- vectors: their format, and embedding what lacks one ---- */

/* A meta value of db, malloc'd, or NULL. */
static char *get_meta(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = prep(db, "SELECT value FROM meta WHERE key = ?1");
	char *v = NULL;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* The format new vectors are stored in: --vectors, else the index's, else f32. */
static enum vec_format vector_format(const struct options *o, sqlite3 *db)
{
	enum vec_format f = VEC_F32;
	char *v = db ? get_meta(db, "vector_format") : NULL;

	if (o->vectors)
		vec_format_parse(&f, o->vectors);
	else if (v)
		vec_format_parse(&f, v);
	free(v);
	return f;
}

/* Does the index hold any vector (so that update keeps embedding)? */
static int has_vectors(sqlite3 *db)
{
	sqlite3_stmt *st = prep(db, "SELECT EXISTS (SELECT 1 FROM vectors) OR EXISTS (SELECT 1 FROM commit_vectors)");
	int have = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);

	sqlite3_finalize(st);
	return have;
}

/* The ids (rowids, or chunks.id) that sql selects, into a malloc'd array. */
static sqlite3_int64 *select_ids(sqlite3 *db, const char *sql, size_t *nr)
{
	sqlite3_stmt *st = prep(db, sql);
	sqlite3_int64 *ids = NULL;
	size_t alloc = 0;

	*nr = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(ids, *nr + 1, alloc);
		ids[(*nr)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return ids;
}

#define EMBED_ROUND 512		/* texts embedded between two progress reports */

/*
 * An embedding run of update or build commits its vectors in batches, so that
 * an interrupted run (SIGINT, a kill, a crash) keeps what it embedded and the
 * next update embeds only the rest.  The batches' commits never make the
 * index claim more than it holds: while vectors are missing, meta
 * embed_pending says so (ci-index status: "embedding_incomplete") and
 * "updated" keeps the value of the last run that finished (older than the
 * files: every reader that compares the tree with it looks again, and the
 * index's server does not vouch for the index, whose "updated" is not the one
 * its last update reported); the last batch is committed with the stamp, by
 * the caller.
 */
struct embed_batches {
	int commit;		/* commit between batches (else one transaction) */
	size_t batch;		/* texts a batch: $CI_INDEX_EMBED_BATCH, else EMBED_ROUND */
	size_t total;		/* texts to embed in this run */
	size_t done;		/* of them embedded */
	long crash_after;	/* test hook: $CI_INDEX_EMBED_CRASH_AFTER, else -1 */
};

/*
 * A batch of eb is embedded (not yet committed): commit it and begin the next
 * transaction, unless it was the run's last.  The test hook
 * CI_INDEX_EMBED_CRASH_AFTER raises crash_signal (CI_INDEX_CRASH_SIGNAL, else
 * SIGKILL) once that many texts are embedded, before their batch's commit.
 * 0, or -1 after a message.
 */
static int embed_batch_done(sqlite3 *db, struct embed_batches *eb)
{
	if (eb->crash_after >= 0 && eb->done >= (size_t)eb->crash_after) {
		fflush(NULL);
		raise(crash_signal);
		eb->crash_after = -1;
	}
	if (!eb->commit || eb->done >= eb->total)
		return 0;
	return index_exec(db, "COMMIT") < 0 || index_exec(db, "BEGIN IMMEDIATE") < 0 ? -1 : 0;
}

/*
 * Embed the texts of the rows ids[0..nr) (chunks, or commits by rowid) and store
 * their vectors through ld, a batch of eb at a time.  0, or -1 after a
 * message.
 */
static int embed_rows(const struct options *o, struct loader *ld, struct embed_model *m,
		      const sqlite3_int64 *ids, size_t nr, int commits, struct progress *pg,
		      struct embed_batches *eb)
{
	const struct embed_fields *fields;
	static struct embed_fields def;
	sqlite3_stmt *get = commits ?
		prep(ld->db, "SELECT sha, message FROM commits WHERE rowid = ?1") :
		prep(ld->db, "SELECT c.kind, c.name, c.scope, c.signature, ci_inflate(c.text), b.lang FROM chunks c "
		     "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1");
	const char *name = embed_model_name(m, 0);
	struct buf texts = BUF_INIT;
	size_t round = eb->batch < EMBED_ROUND ? eb->batch : EMBED_ROUND;
	size_t *off = xcalloc(round, sizeof(*off)), *len = xcalloc(round, sizeof(*len));
	const char **tp = xcalloc(round, sizeof(*tp));
	char **keys = xcalloc(round, sizeof(*keys));
	float *vec = xmalloc(round * embed_dim(m) * sizeof(float));
	size_t i, k, n, in_batch = 0;
	int rc = 0;

	if (!def.nr)
		embed_fields_parse(&def, EMBED_DEFAULT_FIELDS);
	fields = &def;
	for (i = 0; i < nr && !rc; i += n) {
		/* a round ends where a batch does */
		n = nr - i < round ? nr - i : round;
		if (n > eb->batch - in_batch)
			n = eb->batch - in_batch;
		buf_reset(&texts);
		for (k = 0; k < n; k++) {
			keys[k] = NULL;
			off[k] = texts.len;
			sqlite3_bind_int64(get, 1, ids[i + k]);
			if (sqlite3_step(get) == SQLITE_ROW) {
				if (commits) {
					keys[k] = xstrdup((const char *)sqlite3_column_text(get, 0));
					embed_commit_text(&texts, (const char *)sqlite3_column_text(get, 1),
							  embed_text_limit((int)embed_max_tokens(m)));
				} else {
					/* the chunk as ci-chunk writes it, for the same text as ci-embed's */
					json_t *rec = json_object();
					const char *cols[] = { "kind", "name", "scope", "signature", "text", "lang" };
					for (int c = 0; c < 6; c++)
						if (sqlite3_column_type(get, c) == SQLITE_TEXT)
							json_object_set_new(rec, cols[c], json_stringn(
								(const char *)sqlite3_column_text(get, c),
								(size_t)sqlite3_column_bytes(get, c)));
					/* as much text as ci-embed reads for this model */
					embed_chunk_text(&texts, rec, fields,
							 embed_text_limit((int)embed_max_tokens(m)));
					json_decref(rec);
				}
			}
			sqlite3_reset(get);
			len[k] = texts.len - off[k];
		}
		for (k = 0; k < n; k++)
			tp[k] = texts.buf + off[k];
		embed_texts(m, 0, 0, o->threads, tp, len, n, vec);
		for (k = 0; k < n && !rc; k++) {
			sqlite3_stmt *st = commits ? ld->cvec_add : ld->vec_add;
			if (commits) {
				if (!keys[k])
					continue;
				sqlite3_bind_text(st, 1, keys[k], -1, SQLITE_TRANSIENT);
			} else {
				sqlite3_bind_int64(st, 1, ids[i + k]);
			}
			rc = store_vec(ld, st, name, vec + k * embed_dim(m), embed_dim(m));
			if (commits)
				ld->commit_vectors++;
			else
				ld->vectors++;
		}
		for (k = 0; k < n; k++)
			free(keys[k]);
		progress_add(pg, n);
		eb->done += n;
		in_batch += n;
		if (!rc && in_batch == eb->batch) {
			in_batch = 0;
			rc = embed_batch_done(ld->db, eb);
		}
	}
	if (!rc && in_batch && i >= nr && eb->done >= eb->total)
		rc = embed_batch_done(ld->db, eb);	/* the run's end: the hook only */
	sqlite3_finalize(get);
	buf_release(&texts);
	free(off);
	free(len);
	free(tp);
	free(keys);
	free(vec);
	return rc;
}

/* The chunks of indexed files, and the commits, that have no vector. */
#define MISSING_CHUNKS_SQL(limit) \
	"SELECT c.id FROM chunks c WHERE c.blob_id IN (SELECT blob_id FROM files) " \
	"AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id) ORDER BY c.id" limit
#define MISSING_COMMITS_SQL(limit) \
	"SELECT c.rowid FROM commits c WHERE c.message IS NOT NULL " \
	"AND NOT EXISTS (SELECT 1 FROM commit_vectors v WHERE v.sha = c.sha) ORDER BY c.rowid" limit

/*
 * Embed, in-process, the chunks of indexed files that have no vector of the
 * model, and the commits without one: an unchanged blob keeps its chunks, and
 * so its vectors, so it is never embedded twice.  Vectors of another model
 * (ci-embed --static, another --model) do not compare with the new ones: when
 * asked (--embed) they are dropped and embedded anew, else nothing is embedded
 * and a warning says so.  Records the model and the format in meta.  With
 * batches (update, build), the vectors are committed a batch at a time (see
 * struct embed_batches) and meta embed_pending is set until the last batch,
 * which the caller commits; else everything is in the caller's transaction.
 * 0, or -1 after a message.
 */
static int embed_missing(const struct options *o, struct loader *ld, int asked, int batches)
{
	sqlite3 *db = ld->db;
	struct embed_model *m = NULL;
	struct progress pg;
	struct embed_batches eb;
	sqlite3_int64 *chunk_ids = NULL, *commit_ids = NULL;
	size_t chunks_nr = 0, commits_nr = 0;
	char *old;
	const char *name;
	int rc = -1;

	if (!asked) {
		/* an update that changed nothing does not load the model */
		sqlite3_stmt *st = prep(db, MISSING_CHUNKS_SQL(" LIMIT 1"));
		sqlite3_stmt *st2 = prep(db, MISSING_COMMITS_SQL(" LIMIT 1"));
		int none = sqlite3_step(st) != SQLITE_ROW && sqlite3_step(st2) != SQLITE_ROW;
		sqlite3_finalize(st);
		sqlite3_finalize(st2);
		if (none)
			return 0;
	}
	{
		/* no --model: the model of the vectors the index holds, when known by name */
		sqlite3_stmt *st = prep(db, "SELECT model FROM vectors UNION ALL "
					"SELECT model FROM commit_vectors LIMIT 1");
		char *im = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) ?
			xstrdup((const char *)sqlite3_column_text(st, 0)) : NULL;
		sqlite3_finalize(st);
		progress_start(&pg, o->progress, "loading the model", NULL, 0, 0);
		rc = embed_model_open(&m, embed_model_dir_for(o->model, im));
		progress_stop(&pg);
		free(im);
		if (rc < 0)
			return -1;
		rc = -1;
	}
	name = embed_model_name(m, 0);
	{
		sqlite3_stmt *st = prep(db, "SELECT model FROM vectors WHERE model <> ?1 UNION ALL "
					"SELECT model FROM commit_vectors WHERE model <> ?1 LIMIT 1");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		old = sqlite3_step(st) == SQLITE_ROW ? xstrdup((const char *)sqlite3_column_text(st, 0)) : NULL;
		sqlite3_finalize(st);
	}
	if (old && !asked) {
		warning("the index holds vectors of model '%s', not '%s': not embedding "
			"(--embed embeds everything anew)", old, name);
		free(old);
		rc = 0;
		goto done;
	}
	if (old && verbosity)
		fprintf(stderr, "%s: the index's vectors are of model '%s': embedding anew with '%s'\n",
			progname, old, name);
	free(old);
	{
		sqlite3_stmt *st = prep(db, "DELETE FROM vectors WHERE model <> ?1");
		sqlite3_stmt *st2 = prep(db, "DELETE FROM commit_vectors WHERE model <> ?1");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st2, 1, name, -1, SQLITE_STATIC);
		if (step_done(db, st) < 0 || step_done(db, st2) < 0) {
			sqlite3_finalize(st);
			sqlite3_finalize(st2);
			goto done;
		}
		sqlite3_finalize(st);
		sqlite3_finalize(st2);
	}
	chunk_ids = select_ids(db, MISSING_CHUNKS_SQL(""), &chunks_nr);
	commit_ids = select_ids(db, MISSING_COMMITS_SQL(""), &commits_nr);
	eb.commit = batches;
	eb.batch = (size_t)env_long("CI_INDEX_EMBED_BATCH", 1, 1000000, EMBED_ROUND, ENV_DIE);
	eb.total = chunks_nr + commits_nr;
	eb.done = 0;
	eb.crash_after = env_long("CI_INDEX_EMBED_CRASH_AFTER", 0, LONG_MAX, -1, ENV_DIE);
	if (batches && eb.total)
		set_meta(db, "embed_pending", "1");	/* committed with the first batch */
	progress_start(&pg, o->progress && chunks_nr + commits_nr > 0, "embedding", "texts",
		       chunks_nr + commits_nr, 1);
	if (embed_rows(o, ld, m, chunk_ids, chunks_nr, 0, &pg, &eb) < 0 ||
	    embed_rows(o, ld, m, commit_ids, commits_nr, 1, &pg, &eb) < 0) {
		progress_stop(&pg);
		goto done;
	}
	progress_stop(&pg);
	if (index_exec(db, "DELETE FROM meta WHERE key = 'embed_pending'") < 0)
		goto done;
	set_meta(db, "model", name);
	set_meta(db, "vector_format", vec_format_name(ld->vfmt));
	if (verbosity)
		fprintf(stderr, "%s: embedded %zu chunks and %zu commits with %s\n", progname, chunks_nr,
			commits_nr, name);
	rc = 0;
done:
	free(chunk_ids);
	free(commit_ids);
	embed_model_close(m);
	return rc;
}

/*
 * What a build keeps from the index it replaces: the feedback tables (see
 * CI_FEEDBACK_TABLES), and ci-couple's history (commits,
 * their files and vectors, coupling, the head it was walked to), which comes
 * from git, not from the files.  Nothing when there is no usable old index.
 */
/*
 * ci's feedback tables (made if missing) filled with the rows of those of the
 * attached database schema that they do not hold yet: at a build's start from
 * the index it replaces, and again just before it installs the new one.
 */
#define COPY_FEEDBACK(schema) CI_FEEDBACK_TABLES \
	"INSERT OR IGNORE INTO main.injections SELECT id, query, agent, files, timestamp " \
	"FROM " schema ".injections;" \
	"INSERT OR IGNORE INTO main.feedback SELECT id, injection_id, agent, rating, reason, timestamp " \
	"FROM " schema ".feedback;" \
	"INSERT OR IGNORE INTO main.feedback_lineage SELECT id, feedback_ids, action_type, bead, " \
	"commit_hash, description, agent, timestamp FROM " schema ".feedback_lineage;"

/* 1 if the database schema of db has the three feedback tables. */
static int has_feedback(sqlite3 *db, const char *schema)
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
		feedback = has_feedback(probe, "main");
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
static int keep_vectors_attach(const struct options *o, sqlite3 *db, const char *old_path)
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
			sqlite3_bind_text(st, 1, o->vectors, -1, SQLITE_STATIC);
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
		"WHERE key IN ('model', 'vector_format') AND EXISTS (SELECT 1 FROM vectors)");
}

/* ---- what a reader needs to trust the index without a walk ---- */

/* The time now, nanoseconds since the epoch (the clock file times come from). */
static int64_t wall_ns(void)
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
static int record_walk(sqlite3 *db, struct walker *w, const struct walk_list *list, int64_t walked_ns)
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
	ins = prep(db, "INSERT OR REPLACE INTO dirs(path, mtime) VALUES (?1, ?2)");
	for (i = 0; i < list->dirs_nr && rc == 0; i++) {
		if (!list->dirs[i].entered)
			continue;
		sqlite3_bind_text(ins, 1, list->dirs[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 2, list->dirs[i].mtime_ns);
		rc = step_done(db, ins);
	}
	sqlite3_finalize(ins);
	for (i = 0; i < list->files_nr; i++)
		if (list->files[i].mtime >= walked_ns / 1000000000 - 1)
			buf_addf(&racy, "%s\n", list->files[i].path);
	walk_rules(w, list, &rules);
	snprintf(v, sizeof(v), "%lld", (long long)walked_ns);
	set_meta(db, "walked_ns", v);
	set_meta(db, "rules", rules.buf);
	set_meta(db, "racy", racy.buf);
done:
	buf_release(&rules);
	buf_release(&racy);
	return rc;
}

/* ---- build ---- */

struct feed {
	struct loader *ld;	/* where records go */
	struct progress *pg;	/* progress */
	long failed;		/* files that could not be read */
	sqlite3_stmt *skip;	/* records a file left out */
	sqlite3_stmt *unfile;	/* forgets a file that is now left out */
	sqlite3_stmt *unimp;	/* and its imports */
};

static int feed_result(size_t i, const struct chunk_result *r, void *data)
{
	struct feed *fd = data;

	(void)i;
	if (r->warnings_len)
		fwrite(r->warnings, 1, r->warnings_len, stderr);
	if (r->records_len && load_buffer(fd->ld, r->records, r->records_len) < 0)
		return -1;
	if (r->skipped || (r->degraded && !r->records_len)) {
		sqlite3_bind_text(fd->skip, 1, r->file->path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(fd->skip, 2, (sqlite3_int64)r->file->size);
		sqlite3_bind_int64(fd->skip, 3, r->file->mtime);
		sqlite3_bind_text(fd->skip, 4, r->skipped ? walk_skip_name(r->skipped) : "unreadable",
				  -1, SQLITE_STATIC);
		if (step_done(fd->ld->db, fd->skip) < 0)
			return -1;
		/* a file whose content is now binary or generated leaves the index */
		sqlite3_bind_text(fd->unfile, 1, r->file->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(fd->unimp, 1, r->file->path, -1, SQLITE_STATIC);
		if (step_done(fd->ld->db, fd->unfile) < 0 || step_done(fd->ld->db, fd->unimp) < 0)
			return -1;
	}
	maybe_slow();
	progress_add(fd->pg, 1);
	maybe_crash((long)__atomic_load_n(&fd->pg->done, __ATOMIC_RELAXED));
	return 0;
}

/* Point fd at ld and pg, with the statements that record left-out files. */
static void feed_init(struct feed *fd, struct loader *ld, struct progress *pg)
{
	sqlite3 *db = ld->db;

	fd->ld = ld;
	fd->pg = pg;
	fd->failed = 0;
	fd->skip = prep(db, "INSERT OR REPLACE INTO skipped(path, size, mtime, reason) VALUES (?1, ?2, ?3, ?4)");
	fd->unfile = prep(db, "DELETE FROM files WHERE path = ?1");
	fd->unimp = prep(db, "DELETE FROM imports WHERE path = ?1");
}

static void feed_release(struct feed *fd)
{
	sqlite3_finalize(fd->skip);
	sqlite3_finalize(fd->unfile);
	sqlite3_finalize(fd->unimp);
}

/*
 * A build's lock, kept until the build's command is done (its history stored,
 * the index's server restarted: an update waiting for the lock then never
 * meets the server the build stops); a lock_dir of the same index in the
 * meantime shares it.
 */
static int build_lock = -1;

/*
 * The lock of the index at db_path (<db>.lock), which every writer (build,
 * update, load, drop) holds while it writes: its descriptor, or -1 after
 * reporting.  Another writer's lock is waited for up to $CI_INDEX_LOCK_WAIT
 * seconds (default 600: a first build of a large tree takes minutes), then the
 * index is said to be busy.
 */
static int lock_dir(const char *db_path)
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
	if (fd >= 0 && build_lock >= 0) {
		struct stat a, b;
		if (fstat(fd, &a) == 0 && fstat(build_lock, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino) {
			/* this process's build holds it */
			close(fd);
			fd = fcntl(build_lock, F_DUPFD_CLOEXEC, 0);
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

static int ensure_dir(const char *db_path)
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

static sqlite3 *create_db(const char *path, const char *root)
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
	set_meta(db, "schema_version", v);
	set_meta(db, "root", root);
	return db;
}

static long page_size(sqlite3 *db)
{
	sqlite3_stmt *st = prep(db, "PRAGMA page_size");
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
	rc = has_feedback(db, "live") ? index_exec(db, "BEGIN;" COPY_FEEDBACK("live") "COMMIT") : 0;
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
 * After a build: the snapshot of its vectors (libcommon/embed/vecsnap.h), or none
 * when it has none (the old index's is not the new one's).
 */
static int refresh_snapshot(const char *path)
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

static int install_db(const char *tmp, const char *path)
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

/* The directory a build indexed (its argument), for --history. */
static const char *build_dir = ".";
static int build_rev;			/* the build was of a commit (--rev), not a work tree */

/*
 * After a build --embed installed the index at path (of the tree at root, or
 * of commit snapshot), with embed_pending set and no "updated": embed what
 * has no vector, a batch a transaction, and stamp "updated" with the last.
 * The caller holds the index's lock.  An exit status.
 */
static int embed_installed(const struct options *o, const char *path, const char *root,
			   const char *snapshot)
{
	struct ci_index *ix;
	struct loader ld;
	sqlite3 *db;
	int ret = EXIT_OK;

	if (index_open(&ix, path, o->damage) != 0)
		return EXIT_IO;
	db = index_db(ix);
	loader_init(&ld, db, root, vector_format(o, db));
	if (index_exec(db, "BEGIN IMMEDIATE") < 0 || embed_missing(o, &ld, 1, 1) < 0) {
		ret = EXIT_IO;
		index_exec(db, "ROLLBACK");
	} else {
		if (ld.vectors)
			set_meta(db, "vector_format", vec_format_name(ld.vfmt));
		stamp(db, root, "updated", snapshot);
		if (index_exec(db, "COMMIT") < 0 || vecsnap_refresh(db, path) < 0)
			ret = EXIT_IO;
	}
	loader_release(&ld);
	index_close(ix);
	return ret;
}

static int cmd_build(const struct options *o, int argc, char **argv)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct walk_list list = { 0 };
	struct chunk_opts co = { CHUNK_WANT_ALL, CHUNK_DEFAULT_MAX_LINES };
	struct import_ctx ictx = { 0 };
	struct fileset fs;
	struct loader ld;
	struct progress pg;
	struct feed fd;
	struct snapshot sn;
	const char **paths = NULL;
	const char *rev = NULL, *start = NULL;
	char *path, *tmp;
	sqlite3 *db;
	int64_t walked = 0;
	int i, lock, rc, prev = 0, ret = EXIT_OK, embed_later = 0;

	memset(&sn, 0, sizeof(sn));
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--rev")) {
			if (i + 1 >= argc)
				usage_error(usage_text, "build: --rev needs a revision");
			rev = argv[++i];
		} else if (!strncmp(argv[i], "--rev=", 6)) {
			rev = argv[i] + 6;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usage_error(usage_text, "build: unknown option '%s'", argv[i]);
		} else if (start) {
			usage_error(usage_text, "build takes at most one path");
		} else {
			start = argv[i];
		}
	}
	if (rev && !*rev)
		usage_error(usage_text, "build: --rev needs a revision");
	if (rev && o->history)
		usage_error(usage_text, "build: --history stores the history of HEAD, not of a snapshot (--rev)");
	build_dir = start ? start : ".";
	build_rev = rev != NULL;
	if (o->embed) {
		/* a model that cannot be loaded fails the build before the work, not after */
		struct embed_model *m;
		progress_start(&pg, o->progress, "loading the model", NULL, 0, 0);
		rc = embed_model_open(&m, embed_model_dir(o->model));
		progress_stop(&pg);
		if (rc < 0)
			return EXIT_IO;
		embed_model_close(m);
	}
	if (walker_open(&w, start ? start : ".", &wo) < 0)
		return EXIT_IO;
	if (rev && start) {
		/* the commit's whole tree is indexed: a path may name the repository only */
		char *real = realpath(start, NULL);
		int root = real && !strcmp(real, w.root);

		free(real);
		if (!root) {
			error("build --rev indexes the whole tree of a commit: '%s' is not the "
			      "repository's root '%s'", start, w.root);
			walker_close(&w);
			return EXIT_USAGE;
		}
	}
	if (rev && (ret = snapshot_open(&sn, &w, rev)) != EXIT_OK) {
		snapshot_close(&sn);
		walker_close(&w);
		return ret;
	}
	path = o->index ? xstrdup(o->index) : index_default_path(w.root);
	if (ensure_dir(path) < 0 || (lock = lock_dir(path)) < 0) {
		snapshot_close(&sn);
		walker_close(&w);
		free(path);
		return EXIT_IO;
	}
	if (build_lock < 0)
		build_lock = fcntl(lock, F_DUPFD_CLOEXEC, 0);	/* let go of in main */
	tmp = xasprintf("%s.new", path);
	unlink(tmp);
	tmp_arm(tmp);
	db = create_db(tmp, w.root);
	if (!db) {
		ret = EXIT_IO;
		goto out;
	}
	progress_start(&pg, o->progress, "walking the tree", NULL, 0, 0);
	if (rev) {
		if (walker_walk_tree(&w, sn.repo, sn.tree, &list, &sn.oids) < 0) {
			progress_stop(&pg);
			sqlite3_close(db);
			unlink(tmp);
			ret = EXIT_IO;
			goto out;
		}
		ictx.read = snapshot_read;
		ictx.payload = &sn;
	} else {
		walked = wall_ns();
		walker_walk(&w, "", 0, &list);
		walk_list_finish(&list);
	}
	progress_stop(&pg);
	paths = walk_list_paths(&list);
	fs.paths = paths;
	fs.nr = list.files_nr;
	ictx.root = w.root;
	ictx.files = &fs;

	progress_start(&pg, o->progress, "indexing", "files", list.files_nr, 1);
	loader_init(&ld, db, w.root, vector_format(o, NULL));
	ld.snapshot = rev != NULL;
	ld.df.full = 1;		/* term_df is filled once, at the end */
	feed_init(&fd, &ld, &pg);
	if (keep_history(db, path) < 0 || (prev = keep_vectors_attach(o, db, path)) < 0 ||
	    index_exec(db, "BEGIN") < 0 ||
	    (rev ? chunk_run_blobs(&w, &list, sn.repo, sn.oids, &co, &ictx, o->threads, feed_result, &fd)
		 : chunk_run(&w, &list, &co, &ictx, o->threads, feed_result, &fd)) < 0 ||
	    loader_finish_file(&ld) < 0 || df_finish(db, &ld.df) < 0 ||
	    (!rev && record_walk(db, &w, &list, walked) < 0) ||
	    (prev > 0 && keep_vectors(db) < 0))
		ret = EXIT_IO;
	progress_stop(&pg);
	if (ret == EXIT_OK && prev > 0 && !o->vectors) {
		/* new vectors in the format of those kept */
		char *v = get_meta(db, "vector_format");
		if (v)
			vec_format_parse(&ld.vfmt, v);
		free(v);
	}
	/*
	 * --embed: the chunks are embedded once the index is installed, in
	 * batches committed one by one (embed_installed), so that an interrupted
	 * build keeps what it embedded.  Until then the index says that vectors
	 * are missing (embed_pending) and has no "updated": no reader takes it
	 * for complete, and the next update embeds the rest.
	 */
	if (ret == EXIT_OK && o->embed) {
		sqlite3_stmt *q = prep(db, MISSING_CHUNKS_SQL(" LIMIT 1"));
		sqlite3_stmt *q2 = prep(db, MISSING_COMMITS_SQL(" LIMIT 1"));
		embed_later = sqlite3_step(q) == SQLITE_ROW || sqlite3_step(q2) == SQLITE_ROW;
		sqlite3_finalize(q);
		sqlite3_finalize(q2);
		if (!embed_later && embed_missing(o, &ld, 1, 0) < 0)	/* the model, the format */
			ret = EXIT_IO;
	}
	/* optimize, VACUUM, install: seconds on a large tree */
	progress_start(&pg, o->progress, "writing the index", NULL, 0, 0);
	if (ret == EXIT_OK) {
		if (ld.vectors)
			set_meta(db, "vector_format", vec_format_name(ld.vfmt));
		if (rev) {
			/* no walk of the work tree to trust: readers must not use it as one */
			set_meta(db, "snapshot", sn.sha);
			set_meta(db, "rev", rev);
		}
		stamp(db, w.root, "created", rev ? sn.sha : NULL);
		if (embed_later)
			set_meta(db, "embed_pending", "1");
		else
			stamp(db, w.root, "updated", rev ? sn.sha : NULL);
		/*
		 * One segment per full-text index: a term then costs a reader one
		 * b-tree seek, not one per segment the build flushed (the trigram
		 * query of an identifier took 20 ms over 11 segments on the Linux
		 * tree, 10 ms over one).  VACUUM packs the indexes filled in random
		 * order (a third of their pages empty on the Linux tree).  Then
		 * the common trigrams' counts (13 s on the Linux tree).
		 */
		if (index_exec(db, "INSERT INTO chunks_tri(chunks_tri) VALUES('optimize');"
				 "INSERT INTO chunks_fts(chunks_fts) VALUES('optimize');"
				 "CREATE VIRTUAL TABLE temp.tri_vocab USING fts5vocab(main, chunks_tri, 'row');"
				 "INSERT INTO tri_df(tri, df) SELECT term, doc FROM temp.tri_vocab WHERE doc >= 1000;"
				 "DROP TABLE temp.tri_vocab") < 0 ||
		    index_exec(db, "COMMIT") < 0 || (prev > 0 && index_exec(db, "DETACH prev") < 0) ||
		    index_exec(db, "VACUUM") < 0)
			ret = EXIT_IO;
	}
	loader_release(&ld);
	feed_release(&fd);
	free(paths);
	if (sqlite3_close(db) != SQLITE_OK)
		ret = EXIT_IO;
	if (ret == EXIT_OK && install_db(tmp, path) < 0)
		ret = EXIT_IO;
	if (ret != EXIT_OK)
		unlink(tmp);
	else
		ret = refresh_snapshot(path);
	progress_stop(&pg);
	tmp_done();	/* installed: a signal from now on leaves it */
	if (ret == EXIT_OK && embed_later)
		ret = embed_installed(o, path, w.root, rev ? sn.sha : NULL);
	if (ret == EXIT_OK && verbosity)
		fprintf(stderr, "%s: indexed %ld files, %ld chunks, %ld definitions, %ld references%s%s into '%s'\n",
			progname, ld.files, ld.chunks, ld.defs, ld.refs, rev ? " of commit " : "",
			rev ? sn.sha : "", path);
out:
	tmp_done();	/* installed (renamed, or copied and removed), or to go */
	walk_list_release(&list);
	snapshot_close(&sn);
	walker_close(&w);
	close(lock);
	free(tmp);
	free(path);
	return ret;
}

/* ---- update ---- */

struct known {
	char *path;		/* indexed path */
	int64_t size, mtime;	/* as indexed */
	int64_t blob_id;	/* its blobs.id (0: left out) */
	unsigned char seen;	/* still on disk */
	unsigned char skipped;	/* left out (binary...), not in files */
	unsigned char reread;	/* changed: read again */
	char reason[16];	/* why it was left out */
};

/* ---- the server: ci-index serve (cmd/fork-server.h) ---- */

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

static int srv_child;			/* this process is a worker of ci-index serve */
static struct ci_index *srv_deferred_ix;	/* a worker's index, closed once it has answered */
static int srv_deferred_lock = -1;
static char *srv_index;			/* the index served (real path) */
static char *srv_root;			/* its work tree, watched (real path) */
static int srv_ifd = -1;		/* inotify */
static ino_t srv_root_ino;		/* the root's identity when the watch began */
static dev_t srv_root_dev;
static char **srv_wd;			/* watch descriptor -> directory ("" the root) */
static size_t srv_wd_alloc;
static struct strset srv_watched;	/* the directories under a watch */
static struct strset srv_dirty;		/* where something happened since the last fork */
static struct strset srv_inflight;	/* ... handed to workers still running */
static int srv_all_dirty = 1;		/* everything counts as changed */
static int srv_inflight_all, srv_broken, srv_failed;
static int srv_report[2] = { -1, -1 };	/* the next worker's pipe: 'k' and the index's
					   "updated" once its update is in */
static char srv_stamp[80];		/* "updated" of the last update that succeeded here */
struct srv_worker {
	pid_t pid;
	int rfd;
};
static struct srv_worker *srv_workers;
static size_t srv_workers_nr, srv_workers_alloc;

static void srv_watch(const char *rel)
{
	char *abs = *rel ? xasprintf("%s/%s", srv_root, rel) : xstrdup(srv_root);
	int wd = inotify_add_watch(srv_ifd, abs, SRV_MASK), err = errno;

	free(abs);
	strset_add(&srv_dirty, rel);	/* until an update covers it */
	if (wd < 0) {
		if (err != ENOENT && err != ENOTDIR) {
			/* out of watches: nothing can be vouched for */
			if (!srv_broken)
				warning("cannot watch '%s' (%s): every update looks at every file",
					*rel ? rel : ".", strerror(err));
			srv_broken = srv_all_dirty = 1;
		}
		return;
	}
	if ((size_t)wd >= srv_wd_alloc) {
		size_t n = srv_wd_alloc;
		ALLOC_GROW(srv_wd, (size_t)wd + 1, srv_wd_alloc);
		memset(srv_wd + n, 0, (srv_wd_alloc - n) * sizeof(*srv_wd));
	}
	free(srv_wd[wd]);
	srv_wd[wd] = xstrdup(rel);
	if (!strset_find(&srv_watched, rel))
		strset_add(&srv_watched, rel);
}

/* A directory not watched: git's, the index's own (its writes are no change of the tree) */
static int srv_unwatched(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, ".git") || !strcmp(name, ".ci-index");
}

/* a directory that appeared, and every directory under it */
static void srv_watch_tree(const char *rel)
{
	char *abs = *rel ? xasprintf("%s/%s", srv_root, rel) : xstrdup(srv_root);
	DIR *d;
	struct dirent *de;

	srv_watch(rel);
	d = opendir(abs);
	free(abs);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *sub;
		if (de->d_type != DT_DIR || srv_unwatched(de->d_name))
			continue;
		sub = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		srv_watch_tree(sub);
		free(sub);
	}
	closedir(d);
}

static void srv_events(void)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(srv_ifd, buf, sizeof(buf))) > 0) {
		const char *p = buf;
		while (p < buf + n) {
			const struct inotify_event *ev = (const void *)p;
			const char *rel = ev->wd >= 0 && (size_t)ev->wd < srv_wd_alloc ? srv_wd[ev->wd] : NULL;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				srv_all_dirty = 1;	/* events were lost */
				continue;
			}
			if (!rel)
				continue;
			strset_add(&srv_dirty, rel);
			if (ev->mask & IN_IGNORED) {
				/* the watch is gone (the directory too) */
				strset_del(&srv_watched, rel);
				free(srv_wd[ev->wd]);
				srv_wd[ev->wd] = NULL;
				continue;
			}
			if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
				if (!*rel) {
					/* the root itself went: serve no more (a new server watches anew) */
					srv_broken = srv_all_dirty = 1;
					fork_server_stop_soon();
				}
				if (ev->mask & IN_MOVE_SELF)
					srv_all_dirty = 1;
				continue;
			}
			if ((ev->mask & IN_ISDIR) && ev->len && !srv_unwatched(ev->name)) {
				char *sub = *rel ? xasprintf("%s/%s", rel, ev->name) : xstrdup(ev->name);
				strset_add(&srv_dirty, sub);
				/* a directory moved: the paths of the watches under it are not known */
				if (ev->mask & (IN_MOVED_FROM | IN_MOVED_TO))
					srv_all_dirty = 1;
				if (ev->mask & (IN_CREATE | IN_MOVED_TO))
					srv_watch_tree(sub);
				free(sub);
			}
		}
	}
}

static int server_run(int argc, char **argv);
static void srv_refresh(const char *path);
static void srv_forked(pid_t pid);

/*
 * The server's own first update, forked as a request's worker would be, so
 * that it vouches for the tree as soon as that update is in: until an update
 * has run in it, every directory counts as changed (whatever happened between
 * the index's last update and the watches), and ci-grep stats every file.
 * The tree and the index are the server's; no output; the test hooks of the
 * environment that started the server are not its.
 */
static void srv_first_update(void)
{
	char *argv[] = { "ci-index", "--no-progress", "--index", srv_index, "update", NULL };
	pid_t pid;
	int ready;

	if (srv_broken || !srv_root)
		return;
	srv_refresh(srv_index);
	/* the build that started this server waits for this update
	 * (server_after_build): what changes in the tree after the build is
	 * then the next update's, never taken in silently behind its back */
	ready = fork_server_ready_take();
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC), rc;
		fork_server_child_init();
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(srv_root) < 0)
			_exit(EXIT_IO);
		if (srv_ifd >= 0)
			close(srv_ifd);
		unsetenv("CI_INDEX_CRASH_AFTER");
		unsetenv("CI_INDEX_PAUSE_BEFORE_INSTALL");
		{
			/* test hook: a first update that starts late (t0517) */
			long ms = env_long("CI_INDEX_TEST_FIRST_UPDATE_MS", 0, 60000, 0, ENV_WARN);
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
			if (ms > 0)
				nanosleep(&ts, NULL);
		}
		rc = server_run(5, argv);
		fork_server_ready_say(ready);
		exit(rc);
	}
	if (ready >= 0 && pid > 0)
		close(ready);	/* the update's to tell */
	else
		fork_server_ready_say(ready);
	if (pid > 0) {
		srv_forked(pid);
	} else {
		if (srv_report[0] >= 0)
			close(srv_report[0]);
		if (srv_report[1] >= 0)
			close(srv_report[1]);
		srv_report[0] = srv_report[1] = -1;
	}
}

static void srv_preload(const char *path)
{
	struct ci_index *ix;
	sqlite3_stmt *st;

	srv_index = realpath(path, NULL);
	/* what a worker would start: libgit2 (its certificates), every tree-sitter query */
	walk_git_start();
	chunker_check_queries();
	srv_ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (srv_ifd < 0)
		warning("cannot watch the tree (inotify: %s): every update looks at every file", strerror(errno));
	if (!srv_index || srv_ifd < 0 || index_open(&ix, path, INDEX_READONLY | INDEX_NOTE_DAMAGE) != 0) {
		srv_broken = 1;
		return;
	}
	srv_root = xstrdup(index_root(ix));
	{
		struct stat rs;
		if (stat(srv_root, &rs) == 0) {
			srv_root_ino = rs.st_ino;
			srv_root_dev = rs.st_dev;
		}
	}
	if (sqlite3_prepare_v2(index_db(ix), "SELECT path FROM dirs", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			srv_watch((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	} else {
		srv_broken = 1;
	}
	index_close(ix);
	srv_watch("");
	srv_all_dirty = 1;	/* the first update looks at everything */
	srv_first_update();
}

static void srv_close_db(void);

static void srv_refresh(const char *path)
{
	struct stat st;

	(void)path;
	srv_close_db();	/* SQLite's state must not cross a fork */
	srv_events();	/* what happened up to now counts for this worker */
	if (srv_root && (stat(srv_root, &st) < 0 || st.st_ino != srv_root_ino || st.st_dev != srv_root_dev)) {
		/* the tree was replaced (removed, cloned again): nothing watched is it */
		srv_broken = srv_all_dirty = 1;
		fork_server_stop_soon();	/* the next update starts a server for the new one */
	}
	if (pipe2(srv_report, O_CLOEXEC) < 0)
		srv_report[0] = srv_report[1] = -1;
}

static int srv_watch_fd(void)
{
	return srv_ifd;
}

static void srv_forked(pid_t pid)
{
	/* what it was handed stays in flight until it ends */
	strset_move(&srv_inflight, &srv_dirty);
	srv_inflight_all |= srv_all_dirty;
	srv_all_dirty = srv_broken;
	ALLOC_GROW(srv_workers, srv_workers_nr + 1, srv_workers_alloc);
	srv_workers[srv_workers_nr].pid = pid;
	srv_workers[srv_workers_nr].rfd = srv_report[0];
	srv_workers_nr++;
	if (srv_report[1] >= 0)
		close(srv_report[1]);
	srv_report[0] = srv_report[1] = -1;
}

static void srv_map_refresh(void);

static void srv_ended(pid_t pid, int status)
{
	size_t i;
	char c = 0, got[80];
	ssize_t n = 0;

	for (i = 0; i < srv_workers_nr && srv_workers[i].pid != pid; i++)
		;
	if (i == srv_workers_nr)
		return;
	if (srv_workers[i].rfd >= 0) {
		n = read(srv_workers[i].rfd, got, sizeof(got) - 1);
		c = n > 0 ? got[0] : 0;
		close(srv_workers[i].rfd);
	}
	srv_workers[i] = srv_workers[--srv_workers_nr];
	if (c == 'k' && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		got[n] = '\0';
		snprintf(srv_stamp, sizeof(srv_stamp), "%s", got + 1);
		srv_map_refresh();	/* now, not in the next search */
	} else {
		srv_failed = 1;
	}
	if (srv_workers_nr > 0)	/* others still run: what they were handed stays in flight */
		return;
	if (srv_failed) {
		/* not vouched for: changed, as far as the next update knows */
		strset_move(&srv_dirty, &srv_inflight);
		srv_all_dirty |= srv_inflight_all;
	} else {
		strset_clear(&srv_inflight);
	}
	srv_inflight_all = srv_failed = 0;
}

/* In a worker: the index its update left open, closed (and its lock let go). */
static void srv_close_deferred(void)
{
	if (!srv_deferred_ix)
		return;
	index_close(srv_deferred_ix);
	close(srv_deferred_lock);
	srv_deferred_ix = NULL;
	srv_deferred_lock = -1;
}

/* In a worker: nothing happened in dir since the update that recorded it. */
static int srv_clean(const char *dir, void *ctx)
{
	(void)ctx;
	return !srv_all_dirty && !srv_inflight_all && strset_find(&srv_watched, dir) &&
	       !strset_find(&srv_dirty, dir) && !strset_find(&srv_inflight, dir);
}

/* In a worker: the hint for an update of the index at path of the tree at root, if it is the server's. */
static int srv_hint_applies(const char *path, const char *root)
{
	char *real;
	int ok;

	if (!srv_child || !srv_index || !srv_root || strcmp(root, srv_root))
		return 0;
	real = realpath(path, NULL);
	ok = real && !strcmp(real, srv_index);
	free(real);
	return ok;
}

/* In a worker, its update of the server's index in (stamped so): tell the server. */
static void srv_report_done(const char *stamp)
{
	char msg[80];
	int n;

	if (!srv_child || srv_report[1] < 0)
		return;
	n = snprintf(msg, sizeof(msg), "k%s", stamp ? stamp : "");
	/*
	 * The server may be gone (a build stops it, and this update waited for
	 * the build's lock): the pipe then has no reader, and its SIGPIPE must
	 * not kill the worker before its caller has the exit status.
	 */
	{
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);
		if (n < 0 || n >= (int)sizeof(msg) || write(srv_report[1], msg, (size_t)n) != n) {
			/* the server counts it as failed: more work next time, never less */
		}
		signal(SIGPIPE, old);
	}
}

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
static struct srv_file *srv_map;	/* sorted by blob */
static size_t srv_map_nr, srv_map_alloc;
static uint32_t *srv_map_first;		/* by blob id: its first file in the map + 1, or 0 */
static size_t srv_map_first_nr;
static uint32_t *srv_map_inexact;	/* the files of inexact blobs, their indexes in the map */
static size_t srv_map_inexact_nr, srv_map_inexact_alloc;
static char srv_map_gen[96];		/* the index's "created" and "generation" when it
					   was read (a rebuilt index starts counting anew) */
static sqlite3 *srv_db;			/* a read connection for the questions, kept open
					   between them (a warm page cache) and closed
					   before each fork: a worker inherits none */

static dev_t srv_db_dev;		/* the file srv_db reads */
static ino_t srv_db_ino;

static void srv_close_db(void);

/*
 * The read connection, opened if need be (again when the index file was
 * replaced, as a build does by a rename); NULL if the index cannot be opened.
 */
static sqlite3 *srv_read_db(void)
{
	struct stat st;

	if (stat(srv_index, &st) < 0)
		st.st_dev = 0, st.st_ino = 0;
	if (srv_db && (st.st_dev != srv_db_dev || st.st_ino != srv_db_ino))
		srv_close_db();
	srv_db_dev = st.st_dev;
	srv_db_ino = st.st_ino;
	if (!srv_db && sqlite3_open_v2(srv_index, &srv_db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(srv_db);
		srv_db = NULL;
	}
	if (srv_db)
		sqlite3_busy_timeout(srv_db, 10000);
	return srv_db;
}

static void srv_close_db(void)
{
	sqlite3_close(srv_db);
	srv_db = NULL;
}

static void srv_map_clear(void)
{
	for (size_t i = 0; i < srv_map_nr; i++) {
		free(srv_map[i].path);
		free(srv_map[i].segs);
	}
	srv_map_nr = 0;
	srv_map_gen[0] = '\0';
	free(srv_map_first);
	srv_map_first = NULL;
	srv_map_first_nr = 0;
	srv_map_inexact_nr = 0;
}

/* Read the map in db's read transaction, whose "generation" is gen.  0, or -1. */
static int srv_map_load(sqlite3 *db, const char *gen)
{
	sqlite3_stmt *st;
	int rc;

	srv_map_clear();
	if (sqlite3_prepare_v2(db, "SELECT f.blob_id, f.path, f.size, f.mtime, b.exact, b.segs "
			       "FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.blob_id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct srv_file *f;
		size_t n = (size_t)sqlite3_column_bytes(st, 5);

		ALLOC_GROW(srv_map, srv_map_nr + 1, srv_map_alloc);
		f = &srv_map[srv_map_nr++];
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
	if (rc != SQLITE_DONE || (srv_map_nr && (srv_map[0].blob < 0 || srv_map_nr >= UINT32_MAX ||
						 srv_map[srv_map_nr - 1].blob >= (1LL << 32)))) {
		srv_map_clear();
		return -1;
	}
	/* each blob's first file at hand (a search's candidates are thousands of blobs) */
	srv_map_first_nr = srv_map_nr ? (size_t)srv_map[srv_map_nr - 1].blob + 1 : 0;
	srv_map_first = xcalloc(srv_map_first_nr + 1, sizeof(*srv_map_first));
	for (size_t i = 0; i < srv_map_nr; i++) {
		if (!srv_map_first[srv_map[i].blob])
			srv_map_first[srv_map[i].blob] = (uint32_t)i + 1;
		if (!srv_map[i].exact) {
			ALLOC_GROW(srv_map_inexact, srv_map_inexact_nr + 1, srv_map_inexact_alloc);
			srv_map_inexact[srv_map_inexact_nr++] = (uint32_t)i;
		}
	}
	snprintf(srv_map_gen, sizeof(srv_map_gen), "%s", gen);
	return 0;
}

/* The first file of blob in the map, or srv_map_nr. */
static size_t srv_map_find(sqlite3_int64 blob)
{
	if (blob < 0 || (uint64_t)blob >= srv_map_first_nr || !srv_map_first[blob])
		return srv_map_nr;
	return srv_map_first[blob] - 1;
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
static void srv_cand(const char *match, struct buf *out)
{
	sqlite3 *db = srv_read_db();
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
	    !(gen = (const char *)sqlite3_column_text(st, 1)) || strcmp(updated, srv_stamp) ||
	    strlen(gen) >= sizeof(srv_map_gen))
		goto all;	/* not as the last update here left it */
	if (strcmp(srv_map_gen, gen) && srv_map_load(db, gen) < 0)
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
			for (i = srv_map_find(cur); i < srv_map_nr && srv_map[i].blob == cur; i++)
				if (srv_map[i].exact && srv_cand_line(out, &srv_map[i], hits) < 0)
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
	for (i = 0; i < srv_map_inexact_nr; i++)
		srv_cand_line(out, &srv_map[srv_map_inexact[i]], NULL);
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
static void srv_map_refresh(void)
{
	sqlite3 *db = srv_read_db();
	sqlite3_stmt *st = NULL;
	const char *gen;

	if (db && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT (SELECT value FROM meta WHERE key = 'created') || ' ' || "
			       "(SELECT value FROM meta WHERE key = 'generation')", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && (gen = (const char *)sqlite3_column_text(st, 0)) &&
	    strlen(gen) < sizeof(srv_map_gen) && strcmp(gen, srv_map_gen))
		srv_map_load(db, gen);	/* on failure the next search tries again */
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
static void srv_query(const char *q, struct buf *out)
{
	size_t i;

	if (!strcmp(q, "pid")) {	/* ci-index status: is a server there, which */
		buf_addf(out, "PID %ld\n", (long)getpid());
		return;
	}
	srv_events();
	if (!strncmp(q, "cand ", 5) && !srv_broken && srv_stamp[0]) {
		srv_cand(q + 5, out);
		return;
	}
	if (strcmp(q, "dirty") || srv_all_dirty || srv_inflight_all || srv_broken || !srv_stamp[0]) {
		buf_addstr(out, "ALL\n");
		return;
	}
	buf_addf(out, "STAMP %s\n", srv_stamp);
	for (i = 0; i < srv_dirty.nr + srv_inflight.nr; i++) {
		const char *d = i < srv_dirty.nr ? srv_dirty.v[i] : srv_inflight.v[i - srv_dirty.nr];
		if (strchr(d, '\n')) {
			buf_reset(out);
			buf_addstr(out, "ALL\n");
			return;
		}
		buf_addf(out, "%s\n", d);
	}
}

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
static int quick_walk(struct ci_index *ix, struct walker *w, const struct known *known, size_t known_nr,
		      const char *path, struct walk_list *list)
{
	struct walk_known_hint hint = { NULL, NULL, srv_clean, NULL };
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
		if (!srv_all_dirty && !srv_inflight_all && srv_hint_applies(path, w->root)) {
			/* the server's watch says where to look */
			sizes = xcalloc(known_nr + 1, sizeof(*sizes));
			mtimes = xcalloc(known_nr + 1, sizeof(*mtimes));
			for (i = 0; i < known_nr; i++) {
				sizes[i] = (uint64_t)known[i].size;
				mtimes[i] = known[i].mtime;
			}
			hint.size = sizes;
			hint.mtime = mtimes;
		}
		if (sizes && verbosity) {
			size_t clean = 0;
			for (i = 0; i < nr; i++)
				clean += srv_clean(dirs[i].path, NULL);
			fprintf(stderr, "%s: the server's watch: %zu of %zu directories unchanged%s\n", progname,
				clean, nr, srv_broken ? " (some could not be watched)" : "");
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
static char *damage_of(sqlite3 *db)
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
 * Whether an update checks the whole index first (damage_of): when the index is
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

static int cmd_update(const struct options *o, int argc, char **argv)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct walk_list list = { 0 }, todo = { 0 };
	struct chunk_opts co = { CHUNK_WANT_ALL, CHUNK_DEFAULT_MAX_LINES };
	struct ci_index *ix = NULL;
	struct import_ctx ictx = { 0 };
	struct fileset fs;
	struct loader ld;
	struct progress pg;
	struct feed fd;
	struct known *known = NULL;
	size_t known_nr = 0, known_alloc = 0, i, j;
	const char **paths = NULL;
	char *path, *damage = NULL;
	sqlite3 *db;
	sqlite3_stmt *st, *touch, *del_file, *del_imp;
	long unchanged = 0, reread = 0, reused = 0, removed = 0, added = 0;
	int64_t racy, walked;
	int corrupt = 0, gc = 0;
	int lock, rc, ret = EXIT_OK;

	(void)argv;
	if (argc)
		usage_error(usage_text, "update takes no arguments");
	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = o->index ? xstrdup(o->index) : index_default_path(w.root);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		/* no index yet (perhaps not even its directory): build one */
		walker_close(&w);
		if (verbosity)
			fprintf(stderr, "%s: no index at '%s': building it\n", progname, path);
		free(path);
		return cmd_build(o, 0, NULL);
	}
	if ((lock = lock_dir(path)) < 0) {
		walker_close(&w);
		free(path);
		return EXIT_IO;
	}
	rc = index_open(&ix, path, o->damage);
	if (rc != 0) {
		/* none, another version, or corrupt: build anew */
		close(lock);
		walker_close(&w);
		if (rc > 0 && verbosity)
			fprintf(stderr, "%s: no index at '%s': building it\n", progname, path);
		else if (rc < 0)
			fprintf(stderr, "%s: rebuilding the index\n", progname);
		free(path);
		return cmd_build(o, 0, NULL);
	}
	db = index_db(ix);
	{
		/* a snapshot's files are a commit's, not the work tree's: nothing to compare */
		const char *snap = index_meta(ix, "snapshot");
		if (snap && *snap) {
			error("the index '%s' is a snapshot of %s: run ci-index build (or build --rev again)",
			      path, snap);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (strcmp(index_root(ix), w.root))
		warning("the index was built for '%s', updating it for '%s'", index_root(ix), w.root);
	progress_start(&pg, o->progress, "looking for changes", NULL, 0, 0);
	/* damage where no update reads (a definition's page) fails readers later */
	if (check_whole(path) && (damage = damage_of(db))) {
		progress_stop(&pg);
		goto rebuild;
	}

	/* blob ids, not the blobs: a join and 10,000 copies of 40 digits were a
	 * tenth of an update; a changed file's blob is looked up by its digits */
	st = prep(db, "SELECT path, size, mtime, blob_id, NULL FROM files "
		  "UNION ALL SELECT path, size, mtime, 0, reason FROM skipped");
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct known *k;
		ALLOC_GROW(known, known_nr + 1, known_alloc);
		k = &known[known_nr++];
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
	if (corrupt) {
		progress_stop(&pg);
		goto rebuild;
	}
	qsort_unsorted(known, known_nr, sizeof(*known), cmp_known);
	walked = wall_ns();
	if (quick_walk(ix, &w, known, known_nr, path, &list))
		walker_walk(&w, "", 0, &list);
	walk_list_finish(&list);
	/* a file changed within the second of the last update may keep its mtime and
	 * size: such files are hashed, not trusted (git's "racy" entries) */
	{
		const char *e = index_meta(ix, "updated_epoch");
		racy = e ? (int64_t)atoll(e) : INT64_MAX;
	}

	if (index_exec(db, "BEGIN IMMEDIATE") < 0) {
		progress_stop(&pg);
		ret = EXIT_IO;
		goto out;
	}
	touch = prep(db, "UPDATE files SET size = ?2, mtime = ?3, blob_id = (SELECT id FROM blobs WHERE blob = ?4) "
		     "WHERE path = ?1");
	/* what changed: new paths, or a size or mtime that differs (both lists
	 * are in strcmp order: one pass over the two) */
	for (i = 0, j = 0; i < list.files_nr; i++) {
		struct walk_file *f = &list.files[i];
		struct known *k = NULL;
		char *abs, *data = NULL, blob[41];
		size_t n;
		int c = 1;

		while (j < known_nr && (c = strcmp(known[j].path, f->path)) < 0)
			j++;
		if (j < known_nr && c == 0)
			k = &known[j];
		if (k) {
			k->seen = 1;
			if (k->size == (int64_t)f->size && k->mtime == f->mtime && (f->mtime < racy || k->skipped)) {
				unchanged++;
				continue;
			}
		}
		if (k)
			k->reread = 1;
		/* the content may be one the index already holds (a branch switch, a touch) */
		abs = xasprintf("%s/%s", w.root, f->path);
		if (read_file(abs, &data, &n) == 0 && blob_id(blob, data, n) == 0) {
			sqlite3_stmt *q = prep(db, "SELECT id FROM blobs WHERE blob = ?1");
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
				step_done(db, touch);
				unchanged++;
				free(data);
				free(abs);
				continue;
			}
			if (have)
				reused++;
		}
		free(data);
		free(abs);
		if (!k)
			added++;
		ALLOC_GROW(todo.files, todo.files_nr + 1, todo.files_alloc);
		todo.files[todo.files_nr] = *f;
		todo.files[todo.files_nr].path = xstrdup(f->path);
		todo.files_nr++;
	}
	sqlite3_finalize(touch);

	/* files gone from disk, and changed files that were left out before */
	if (index_exec(db, "DELETE FROM skipped") < 0)
		ret = EXIT_IO;
	del_file = prep(db, "DELETE FROM files WHERE path = ?1");
	del_imp = prep(db, "DELETE FROM imports WHERE path = ?1");
	for (i = 0; i < known_nr; i++) {
		if (known[i].skipped) {
			/* still there and unchanged: still left out */
			if (known[i].seen && !known[i].reread) {
				sqlite3_stmt *ks = prep(db, "INSERT OR REPLACE INTO skipped(path, size, mtime, reason) "
							"VALUES (?1, ?2, ?3, ?4)");
				sqlite3_bind_text(ks, 4, known[i].reason, -1, SQLITE_STATIC);
				sqlite3_bind_text(ks, 1, known[i].path, -1, SQLITE_STATIC);
				sqlite3_bind_int64(ks, 2, known[i].size);
				sqlite3_bind_int64(ks, 3, known[i].mtime);
				step_done(db, ks);
				sqlite3_finalize(ks);
			}
			continue;
		}
		if (known[i].seen)
			continue;
		sqlite3_bind_text(del_file, 1, known[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_text(del_imp, 1, known[i].path, -1, SQLITE_STATIC);
		if (step_done(db, del_file) < 0 || step_done(db, del_imp) < 0)
			ret = EXIT_IO;
		removed++;
	}
	sqlite3_finalize(del_file);
	sqlite3_finalize(del_imp);

	/* re-read what changed, through the same loader as a build */
	paths = walk_list_paths(&list);
	fs.paths = paths;
	fs.nr = list.files_nr;
	ictx.root = w.root;
	ictx.files = &fs;
	progress_stop(&pg);
	progress_start(&pg, o->progress, "updating", "files", todo.files_nr, 0);
	loader_init(&ld, db, w.root, vector_format(o, db));
	feed_init(&fd, &ld, &pg);
	if (ret == EXIT_OK &&
	    (chunk_run(&w, &todo, &co, &ictx, o->threads, feed_result, &fd) < 0 ||
	     loader_finish_file(&ld) < 0 || (gc = collect_garbage(db)) < 0))
		ret = EXIT_IO;
	if (gc > 0)
		ld.df.full = 1;	/* chunks went: count every term anew */
	if (ret == EXIT_OK && (df_finish(db, &ld.df) < 0 || record_walk(db, &w, &list, walked) < 0))
		ret = EXIT_IO;
	if (ret == EXIT_OK && (added || removed)) {
		/* files came or went: an unchanged file's import may now resolve elsewhere */
		sqlite3_stmt *q = prep(db, "SELECT i.rowid, i.path, i.target, i.resolved, b.lang FROM imports i "
				       "JOIN files f ON f.path = i.path JOIN blobs b ON b.id = f.blob_id");
		sqlite3_stmt *u = prep(db, "UPDATE imports SET resolved = ?2 WHERE rowid = ?1");
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *lang = (const char *)sqlite3_column_text(q, 4);
			const char *old = (const char *)sqlite3_column_text(q, 3);
			char *now;
			if (!lang)
				continue;
			now = import_resolve(&ictx, lang, (const char *)sqlite3_column_text(q, 1),
					     (const char *)sqlite3_column_text(q, 2));
			if ((now == NULL) != (old == NULL) || (now && strcmp(now, old))) {
				sqlite3_bind_int64(u, 1, sqlite3_column_int64(q, 0));
				if (now)
					sqlite3_bind_text(u, 2, now, -1, SQLITE_TRANSIENT);
				else
					sqlite3_bind_null(u, 2);
				if (step_done(db, u) < 0)
					ret = EXIT_IO;
			}
			free(now);
		}
		sqlite3_finalize(q);
		sqlite3_finalize(u);
	}
	progress_stop(&pg);
	{
		/* an embedding run that was cut short goes on where it stopped */
		const char *pending = index_meta(ix, "embed_pending");
		int resume = pending && *pending;
		if (ret == EXIT_OK && (o->embed || resume || has_vectors(db)) &&
		    embed_missing(o, &ld, o->embed || resume, 1) < 0)
			ret = EXIT_IO;
	}
	reread = ld.files;
	loader_release(&ld);
	feed_release(&fd);
	if (ret == EXIT_OK) {
		stamp(db, w.root, "updated", NULL);
		if (index_exec(db, "COMMIT") < 0 || vecsnap_refresh(db, path) < 0)
			ret = EXIT_IO;
		else if (srv_hint_applies(path, w.root)) {
			/* the server's index is up to date with what it was told */
			char *updated = get_meta(db, "updated");
			srv_report_done(updated);
			free(updated);
		}
	} else {
		corrupt = (sqlite3_errcode(db) & 0xff) == SQLITE_CORRUPT;
		index_exec(db, "ROLLBACK");
	}
	if (corrupt) {
rebuild:
		/* never serve a damaged index: build it anew */
		fprintf(stderr, "%s: the index '%s' is damaged (%s): rebuilding it\n", progname, path,
			damage ? damage : sqlite3_errmsg(db));
		free(damage);
		for (i = 0; i < known_nr; i++)
			free(known[i].path);
		free(known);
		free(paths);
		walk_list_release(&todo);
		walk_list_release(&list);
		index_close(ix);
		walker_close(&w);
		close(lock);
		{
			char *p2 = path;
			ret = cmd_build(o, 0, NULL);
			free(p2);
		}
		return ret;
	}
	if (verbosity)
		fprintf(stderr, "%s: %ld unchanged, %ld re-read, %ld reused from the index, %ld removed\n",
			progname, unchanged, reread - (reused > reread ? reread : 0), reused, removed);
out:
	for (i = 0; i < known_nr; i++)
		free(known[i].path);
	free(known);
	free(paths);
	walk_list_release(&todo);
	walk_list_release(&list);
	if (srv_child && ret == EXIT_OK && !srv_deferred_ix) {
		/* closing checkpoints the WAL (20 ms): after the caller has its answer */
		srv_deferred_ix = ix;
		srv_deferred_lock = lock;
	} else {
		index_close(ix);
		close(lock);
	}
	walker_close(&w);
	free(path);
	return ret;
}

/* ---- status ---- */

static long long count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = prep(db, sql);
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
	sqlite3_stmt *st = prep(db, sql);
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

static int cmd_status(const struct options *o, int argc, char **argv)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct walk_list list = { 0 };
	struct ci_index *ix = NULL;
	struct buf b = BUF_INIT;
	sqlite3 *db;
	sqlite3_stmt *st;
	char *path;
	long long stale = 0, source_bytes, index_bytes = 0, vectors;
	struct stat sb;
	int rc, snapshot;
	size_t i;
	const char *v;

	(void)argv;
	if (argc)
		usage_error(usage_text, "status takes no arguments");
	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = o->index ? xstrdup(o->index) : index_default_path(w.root);
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc) {
		if (rc > 0)
			error("no index at '%s': run 'ci-index build'", path);
		walker_close(&w);
		free(path);
		return rc > 0 ? EXIT_NOTHING : EXIT_IO;
	}
	db = index_db(ix);
	v = index_meta(ix, "snapshot");
	snapshot = v && *v;
	/* stale: files added, changed or removed on disk since (a snapshot's files
	 * are a commit's: nothing to compare) */
	if (!snapshot) {
		walker_walk(&w, "", 0, &list);
		walk_list_finish(&list);
	}
	if (!snapshot) {
		sqlite3_stmt *q = prep(db, "SELECT size, mtime FROM files WHERE path = ?1 "
				       "UNION ALL SELECT size, mtime FROM skipped WHERE path = ?1");
		long long added = 0, changed = 0, indexed, removed;
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
		stale = added + changed + (removed > 0 ? removed : 0);
	}
	if (stat(path, &sb) == 0)
		index_bytes += sb.st_size;
	{
		char *wal = xasprintf("%s-wal", path);
		if (stat(wal, &sb) == 0)
			index_bytes += sb.st_size;
		free(wal);
	}
	source_bytes = count(db, "SELECT coalesce(sum(b.size), 0) FROM files f JOIN blobs b ON b.id = f.blob_id");

	nd_begin(&b, "status");
	nd_str(&b, "index", path);
	v = index_meta(ix, "schema_version");
	nd_int(&b, "schema_version", v ? atoll(v) : 0);
	nd_str(&b, "root", index_root(ix));
	v = index_meta(ix, "commit");
	nd_str(&b, "commit", v && *v ? v : NULL);
	nd_bool(&b, "snapshot", snapshot);
	v = index_meta(ix, "rev");
	nd_str(&b, "rev", snapshot && v ? v : NULL);
	v = index_meta(ix, "created");
	nd_str(&b, "created", v);
	v = index_meta(ix, "updated");
	nd_str(&b, "updated", v);
	nd_int(&b, "files", count(db, "SELECT count(*) FROM files"));
	nd_int(&b, "chunks", count(db, "SELECT count(*) FROM chunks WHERE blob_id IN (SELECT blob_id FROM files)"));
	nd_int(&b, "defs", count(db, "SELECT count(*) FROM defs WHERE blob_id IN (SELECT blob_id FROM files)"));
	nd_int(&b, "refs", count(db, "SELECT count(*) FROM refs WHERE blob_id IN (SELECT blob_id FROM files)"));
	nd_int(&b, "imports", count(db, "SELECT count(*) FROM imports"));
	vectors = count(db, "SELECT count(*) FROM vectors");
	nd_int(&b, "vectors", vectors);
	nd_int(&b, "chunks_without_vectors",
	       count(db, "SELECT count(*) FROM chunks c WHERE c.blob_id IN (SELECT blob_id FROM files) "
		     "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)"));
	nd_int(&b, "commits", count(db, "SELECT count(*) FROM commits"));
	nd_int(&b, "commit_vectors", count(db, "SELECT count(*) FROM commit_vectors"));
	nd_int(&b, "commits_without_vectors",
	       count(db, "SELECT count(*) FROM commits c WHERE c.message IS NOT NULL "
		     "AND NOT EXISTS (SELECT 1 FROM commit_vectors v WHERE v.sha = c.sha)"));
	/* an embedding run (build or update --embed) was cut short: the next
	 * update embeds what is missing */
	v = index_meta(ix, "embed_pending");
	nd_bool(&b, "embedding_incomplete", v && *v);
	nd_int(&b, "couplings", count(db, "SELECT count(*) FROM coupling"));
	nd_int(&b, "blobs", count(db, "SELECT count(*) FROM blobs"));
	/* the model and format most vectors have (a load may mix them) */
	st = prep(db, "SELECT model, fmt FROM (SELECT model, fmt FROM vectors UNION ALL "
		  "SELECT model, fmt FROM commit_vectors) GROUP BY model, fmt ORDER BY count(*) DESC, 1, 2 LIMIT 1");
	if (sqlite3_step(st) == SQLITE_ROW) {
		nd_str(&b, "model", (const char *)sqlite3_column_text(st, 0));
		nd_str(&b, "vector_format", (const char *)sqlite3_column_text(st, 1));
	} else {
		nd_null(&b, "model");
		nd_null(&b, "vector_format");
	}
	sqlite3_finalize(st);
	/* the snapshot of the chunk vectors beside the index (vecsnap.h) */
	if (vectors > 0) {
		uint64_t n;
		int current = vecsnap_current(db, path, &n);
		nd_key(&b, "vector_snapshot");
		buf_addf(&b, "{\"current\":%s,\"vectors\":%llu,\"changed_since\":%lld}",
			 current ? "true" : "false", (unsigned long long)n,
			 current ? (long long)count(db, "SELECT count(*) FROM vec_changed") : 0LL);
	} else {
		nd_null(&b, "vector_snapshot");
	}
	/* files, and chunks (counted as "chunks" counts them: a blob's once), by language */
	count_map(&b, db, "languages", "SELECT coalesce(b.lang, 'text'), count(*) FROM files f "
		  "JOIN blobs b ON b.id = f.blob_id GROUP BY 1 ORDER BY 1");
	count_map(&b, db, "language_chunks", "SELECT coalesce(b.lang, 'text'), count(*) FROM chunks c "
		  "JOIN blobs b ON b.id = c.blob_id WHERE c.blob_id IN (SELECT blob_id FROM files) "
		  "GROUP BY 1 ORDER BY 1");
	nd_int(&b, "imports_resolved", count(db, "SELECT count(*) FROM imports WHERE resolved IS NOT NULL"));
	if (snapshot)
		nd_null(&b, "stale");	/* a commit's tree, not the work tree's state */
	else
		nd_int(&b, "stale", stale);
	nd_int(&b, "index_bytes", index_bytes);
	nd_int(&b, "source_bytes", source_bytes);
	nd_num(&b, "size_ratio", source_bytes ? (double)index_bytes / (double)source_bytes : 0);
	server_status(&b, path);
	nd_end(&b);
	fwrite(b.buf, 1, b.len, stdout);
	buf_release(&b);
	walk_list_release(&list);
	index_close(ix);
	walker_close(&w);
	free(path);
	return EXIT_OK;
}

/* ---- load ---- */

/* Store the records read from in (named name) in the index of the repository at dir. */
static int load_stream(const struct options *o, const char *dir, FILE *in, const char *name,
		       long *commits)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct ci_index *ix = NULL;
	struct nd_reader rd;
	struct loader ld;
	json_t *rec;
	char *path;
	int rc, lock, ret = EXIT_OK;
	sqlite3 *db;

	if (walker_open(&w, dir, &wo) < 0)
		return EXIT_IO;
	path = o->index ? xstrdup(o->index) : index_default_path(w.root);
	if (ensure_dir(path) < 0 || (lock = lock_dir(path)) < 0) {
		walker_close(&w);
		free(path);
		return EXIT_IO;
	}
	rc = index_open(&ix, path, o->damage);
	if (rc > 0) {
		/* a new, empty index */
		db = create_db(path, w.root);
		if (!db || index_exec(db, "PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL;"
				    "PRAGMA synchronous=NORMAL") < 0) {
			sqlite3_close(db);
			ret = EXIT_IO;
			goto out;
		}
		stamp(db, w.root, "created", NULL);
		sqlite3_close(db);
		rc = index_open(&ix, path, o->damage);
	}
	if (rc) {
		ret = EXIT_IO;
		goto out;
	}
	db = index_db(ix);
	loader_init(&ld, db, w.root, vector_format(o, db));
	nd_reader_init(&rd, in, name);
	ld.src = name;
	if (index_exec(db, "BEGIN IMMEDIATE") < 0)
		ret = EXIT_IO;
	if (ret == EXIT_OK) {
		/* into an index without chunks (ci-chunk | ci-index load): term_df
		 * is filled once at the end, not counted chunk by chunk as well */
		sqlite3_stmt *st = prep(db, "SELECT NOT EXISTS (SELECT 1 FROM chunks)");
		ld.df.full = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	while (ret == EXIT_OK && (rc = nd_read(&rd, &rec)) > 0) {
		ld.lineno = rd.lineno;
		if (load_record(&ld, rec) < 0)
			ret = EXIT_IO;
		json_decref(rec);
	}
	if (rc < 0)
		ret = EXIT_IO;
	if (ret == EXIT_OK && (loader_finish_file(&ld) < 0 || df_finish(db, &ld.df) < 0))
		ret = EXIT_IO;
	/* a load is one transaction: its records and their vectors together */
	if (ret == EXIT_OK && o->embed && embed_missing(o, &ld, 1, 0) < 0)
		ret = EXIT_IO;
	if (ret == EXIT_OK) {
		if (ld.vectors || ld.commit_vectors)
			set_meta(db, "vector_format", vec_format_name(ld.vfmt));
		stamp(db, w.root, "updated", NULL);
		ret = index_exec(db, "COMMIT") < 0 || vecsnap_refresh(db, path) < 0 ? EXIT_IO : EXIT_OK;
	} else {
		/* nothing half-stored: the first bad record loses the whole load */
		index_exec(db, "ROLLBACK");
	}
	if (ret == EXIT_OK && verbosity)
		fprintf(stderr, "%s: loaded %ld files, %ld chunks, %ld defs, %ld refs, %ld imports, "
			"%ld vectors, %ld commits, %ld commit vectors, %ld couplings\n", progname, ld.files,
			ld.chunks, ld.defs, ld.refs, ld.imports, ld.vectors, ld.commits, ld.commit_vectors,
			ld.couplings);
	if (commits)
		*commits = ld.commits;
	loader_release(&ld);
	nd_reader_release(&rd);
out:
	index_close(ix);
	walker_close(&w);
	close(lock);
	free(path);
	return ret;
}

static int cmd_load(const struct options *o, int argc, char **argv)
{
	(void)argv;
	if (argc)
		usage_error(usage_text, "load reads standard input and takes no arguments");
	return load_stream(o, ".", stdin, "<stdin>", NULL);
}

/* Store what `ci-couple <args>` run in dir writes; *commits: how many commit records. */
static int load_couple(const struct options *o, const char *dir, const char **args, long *commits)
{
	char *argv[8], *name = xasprintf("ci-couple %s", args[0]);
	int fd, status, ret, n = 0;
	pid_t pid;
	FILE *in;

	argv[n++] = "ci-couple";
	if (o->index) {
		argv[n++] = "--index";
		argv[n++] = (char *)o->index;
	}
	while (*args && n < 7)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	if ((pid = spawn_reader("ci-couple", argv, dir, -1, 0, &fd)) < 0) {
		error_errno("cannot start ci-couple");
		free(name);
		return EXIT_IO;
	}
	in = fdopen(fd, "r");
	if (!in)
		die("fdopen: %s", strerror(errno));
	ret = load_stream(o, dir, in, name, commits);
	fclose(in);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		/* ci-couple said why on stderr; its records may be cut short */
		error("the history was not stored: %s failed", name);
		ret = EXIT_IO;
	}
	free(name);
	return ret;
}

/*
 * --history: store ci-couple's history of the repository at dir (all of it after
 * a build, which kept the old index's; the commits since the stored head after an
 * update) and, when that brought commits, its co-change coupling anew.  Not a git
 * repository, or no commit yet: nothing to store.
 */
static int load_history(const struct options *o, const char *dir, int incremental)
{
	static const char *history[] = { "history", NULL }, *newer[] = { "history", "--incremental", NULL };
	static const char *coupling[] = { "coupling", "--limit", "0", NULL };
	git_repository *repo = NULL;
	long commits = 0;
	int born, ret;

	walk_git_start();
	if (git_repository_open_ext(&repo, dir, 0, getenv("GIT_CEILING_DIRECTORIES")) < 0) {
		if (verbosity)
			fprintf(stderr, "%s: %s is not in a git repository: no history\n", progname, dir);
		return EXIT_OK;
	}
	born = !git_repository_head_unborn(repo);
	git_repository_free(repo);
	if (!born)
		return EXIT_OK;
	ret = load_couple(o, dir, incremental ? newer : history, &commits);
	if (ret == EXIT_OK && (commits || !incremental))
		ret = load_couple(o, dir, coupling, NULL);
	return ret;
}

/* ---- drop ---- */

/*
 * check: the whole index read by PRAGMA quick_check (what update does first on
 * an index of at most CHECK_WHOLE_MAX bytes).  "ok" on stdout and exit 0, or
 * the damage on stderr and exit 3.
 */
static int cmd_check(const struct options *o, int argc, char **argv)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct ci_index *ix = NULL;
	char *path, *damage;
	int rc;

	(void)argv;
	if (argc)
		usage_error(usage_text, "check takes no arguments");
	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = o->index ? xstrdup(o->index) : index_default_path(w.root);
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
	damage = damage_of(index_db(ix));
	index_close(ix);
	if (damage) {
		error("index '%s' is damaged (%s): run 'ci-index build'", path, damage);
		free(damage);
		free(path);
		return EXIT_IO;
	}
	free(path);
	puts("ok");
	return EXIT_OK;
}

static int cmd_drop(const struct options *o, int argc, char **argv)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	char *path, *f;
	const char *suffix[] = { "", "-wal", "-shm", ".new", ".vec", ".vec.tmp", ".lock" };
	int ret = EXIT_NOTHING;
	size_t i;

	(void)argv;
	if (argc)
		usage_error(usage_text, "drop takes no arguments");
	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	path = o->index ? xstrdup(o->index) : index_default_path(w.root);
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

static int argc0;		/* the command line as given, for the server */
static char **argv0;


int main(int argc, char **argv);

/* In a worker: the command line, as a process of its own would run it. */
static int server_run(int argc, char **argv)
{
	srv_child = 1;
	if (srv_report[0] >= 0)
		close(srv_report[0]);
	optind = 0;	/* getopt anew */
	return main(argc, argv);
}

static int cmd_serve(const struct options *o, int argc, char **argv)
{
	static const struct fork_server_ops ops = {
		.preload = srv_preload, .refresh = srv_refresh, .run = server_run,
		.watch_fd = srv_watch_fd, .on_watch = srv_events,
		.forked = srv_forked, .ended = srv_ended, .query = srv_query,
	};
	long idle = 0;
	int stop = 0, i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--stop"))
			stop = 1;
		else if (!strcmp(argv[i], "--idle")) {
			if (i + 1 == argc)
				usage_error(usage_text, "serve: --idle needs a number of seconds");
			idle = parse_long_arg(usage_text, "--idle", argv[++i], 1, 86400L * 365);
		} else
			usage_error(usage_text, "serve: unexpected argument '%s'", argv[i]);
	}
	return fork_server_command("index", o->index, stop, idle ? idle : fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE),
				   &ops);
}

/*
 * An update run by the index's server if one answers: its exit status, else
 * -1 (run it here); then a server is started for the next one.
 */
/*
 * The index that a server may serve for this command line (malloc'd), and its
 * socket into *sock (NULL when there is no private place for one); NULL when
 * no server is to be used (a worker, --no-server, CI_INDEX_SERVER=0, no index).
 */
static char *server_index(const struct options *o, char **sock)
{
	char *path;

	*sock = NULL;
	if (srv_child || o->no_server || server_env("CI_INDEX_SERVER") == SERVER_OFF)
		return NULL;
	path = o->index ? xstrdup(o->index) : index_find(".");
	if (!path || access(path, F_OK) < 0) {
		free(path);
		return NULL;
	}
	*sock = fork_server_socket("index", path);
	return path;
}

/*
 * Say once, on a terminal, that a build or update left the index's server
 * running: a process that lives on after the command is no surprise then.
 */
static void server_notice(void)
{
	if (srv_child || !isatty(2))
		return;
	fprintf(stderr, "%s: the index's server runs in the background (it keeps searches "
		"fast and exits after %ld s idle; 'ci-index serve --stop' stops it, "
		"CI_INDEX_SERVER=0 starts none)\n", progname, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE));
}

static int update_in_server(const struct options *o)
{
	int always = server_env("CI_INDEX_SERVER") == SERVER_ALWAYS;
	char *sock, *path = server_index(o, &sock);
	int rc = -1;

	if (sock) {
		rc = fork_server_call(sock, argc0, argv0);
		if (rc < 0) {
			fork_server_spawn(path, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE));
			server_notice();
			/* always: wait for it (its start takes a second or two), up to a minute */
			for (int i = 0; rc < 0 && always && i < 3000; i++) {
				struct timespec ts = { 0, 20000000 };
				nanosleep(&ts, NULL);
				rc = fork_server_call(sock, argc0, argv0);
			}
		}
	}
	free(sock);
	free(path);
	return rc;
}

/*
 * After a build of a work tree (not --rev): the index's server for the next
 * commands, started anew.  One that watched the index the build replaced
 * vouches for nothing in it (its last update is not this index's); a new one
 * runs its own first update and then does (srv_first_update).
 */
static void server_after_build(const struct options *o)
{
	char *sock, *path;
	int i;

	if (build_rev)
		return;	/* a commit's tree: nothing to watch */
	path = server_index(o, &sock);
	if (sock) {
		if (fork_server_stop(sock) == 0) {
			/* gone once its socket is (it lets its lock go just before) */
			for (i = 0; i < 200 && access(sock, F_OK) == 0; i++) {
				struct timespec ts = { 0, 10000000 };
				nanosleep(&ts, NULL);
			}
		}
		/* until it holds its lock: a `serve --stop` right after the build
		 * then waits for it and stops it, instead of finding none */
		int done = -1;
		if (fork_server_spawn_wait(path, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_DIE), &done) == 0)
			server_notice();
		/* the server holds its lock: the build's may go, and its first
		 * update (which takes the index's lock) is waited for, so that what
		 * changes in the tree after the build is the next update's */
		if (build_lock >= 0) {
			close(build_lock);
			build_lock = -1;
		}
		fork_server_wait_done(done, 60000);
	}
	free(sock);
	free(path);
}

int main(int argc, char **argv)
{
	struct options o;
	int c, ret;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	if (!srv_child) {
		argc0 = argc;
		argv0 = xcalloc((size_t)argc + 1, sizeof(*argv0));
		memcpy(argv0, argv, (size_t)argc * sizeof(*argv0));
	}
	opterr = 0;
	memset(&o, 0, sizeof(o));
	o.threads = online_cpus();
	o.progress = -1;
	while ((c = getopt_long(argc, argv, "+:j:vh", long_options, NULL)) != -1) {
		switch (c) {
		case 'I': o.index = optarg; break;
		case 'j':
			o.threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
			break;
		case 'P': o.progress = 1; break;
		case 'E': o.embed = 1; break;
		case 'H': o.history = 1; break;
		case 'M': o.model = optarg; break;
		case 'V': {
			enum vec_format f;
			if (vec_format_parse(&f, optarg) < 0)
				usage_error(usage_text, "--vectors: expected f32 or int8, not '%s'", optarg);
			o.vectors = optarg;
			break;
		}
		case 'N': o.progress = 0; break;
		case 'S': o.no_server = 1; break;
		case 'v': verbosity++; break;
		case OPT_VERSION:
			return print_version("ci-index");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (o.progress < 0)
		o.progress = isatty(2);
	/* anew in a server's worker: the server's own environment is not the caller's */
	crash_after = env_long("CI_INDEX_CRASH_AFTER", 0, LONG_MAX, -1, ENV_DIE);
	slow_ms = env_long("CI_INDEX_SLOW_MS", 0, 60000, 0, ENV_DIE);
	{
		static const char *const sigs[] = { "KILL", "TERM", "INT", NULL };
		static const int signo[] = { SIGKILL, SIGTERM, SIGINT };
		crash_signal = signo[env_choice("CI_INDEX_CRASH_SIGNAL", sigs, 0, ENV_DIE)];
	}
	if (optind >= argc)
		usage_error(usage_text, "no command given");
	/* these repair a damaged index, and check what they read themselves */
	if (!strcmp(argv[optind], "build") || !strcmp(argv[optind], "update") || !strcmp(argv[optind], "serve"))
		o.damage = INDEX_NOTE_DAMAGE;
	/* libgit2 is loaded and started when first needed (cmd/git-lazy.c, walk_git_start) */
	if (!strcmp(argv[optind], "build")) {
		ret = cmd_build(&o, argc - optind - 1, argv + optind + 1);
		if (ret == EXIT_OK && o.history)
			ret = load_history(&o, build_dir, 0);
		if (ret == EXIT_OK)
			server_after_build(&o);
	} else if (!strcmp(argv[optind], "update")) {
		if ((ret = update_in_server(&o)) >= 0)
			return ret;
		ret = cmd_update(&o, argc - optind - 1, argv + optind + 1);
		if (ret == EXIT_OK && o.history) {
			srv_close_deferred();	/* the history is stored under the same lock */
			ret = load_history(&o, ".", 1);
		}
	}
	else if (!strcmp(argv[optind], "status"))
		ret = cmd_status(&o, argc - optind - 1, argv + optind + 1);
	else if (!strcmp(argv[optind], "load"))
		ret = cmd_load(&o, argc - optind - 1, argv + optind + 1);
	else if (!strcmp(argv[optind], "drop"))
		ret = cmd_drop(&o, argc - optind - 1, argv + optind + 1);
	else if (!strcmp(argv[optind], "check"))
		ret = cmd_check(&o, argc - optind - 1, argv + optind + 1);
	else if (!strcmp(argv[optind], "serve"))
		ret = cmd_serve(&o, argc - optind - 1, argv + optind + 1);
	else
		usage_error(usage_text, "unknown command '%s'", argv[optind]);
	if (build_lock >= 0) {
		/* after the server's restart: see build_lock */
		close(build_lock);
		build_lock = -1;
	}
	ret = close_stdout(ret);
	if (srv_child && srv_deferred_ix) {
		/* the caller has its answer; the WAL is checkpointed after */
		fork_server_reply(ret);
		srv_close_deferred();
	}
	git_libgit2_shutdown();
	return ret;
}
