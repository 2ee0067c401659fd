/*
 * run.h: an index run, what ci-index's commands do (build, update, load,
 * status, check, drop), as a library.
 *
 * A run is a struct ix_run: the command's options, the test hooks read from
 * the environment, the lock a build keeps until its command is done, and, in
 * a worker of the index's server (server.h), the server's state that tells an
 * update where to look.  Every function takes the run explicitly, so a
 * process (a unit test, a server) can hold two.  The functions return an exit
 * status (EXIT_OK, EXIT_NOTHING, EXIT_USAGE, EXIT_IO) after saying what went
 * wrong; they do not parse arguments.
 *
 * The engine's files:
 *   build.c     a build: walk, chunk (parse/chunkrun), load into <db>.new,
 *               keep the old index's history, feedback and vectors, install
 *   install.c   the writer's lock, a new database, its install in place of
 *               the live one (and the removal of <db>.new on every way out)
 *   update.c    an update: what changed since (a quick walk, the server's
 *               hint), re-read through the same loader; damage found first
 *   loader.c    the record loader (loader.h): file, chunk, def, ref, import,
 *               commit, coupling records into the tables; term_df, chunk_sizes
 *   embedrun.c  embedding what has no vector, in batches committed one by one
 *   load.c      load: records from a stream; --history (ci-couple | load)
 *   status.c    status, check, drop
 *   progress.c  progress lines on stderr (progress.h)
 *   server.c    ci-index serve: the inotify watch, the workers' hints, the
 *               candidate map for ci-grep (server.h, over fork-server.h)
 */
#ifndef CI_INDEX_RUN_H
#define CI_INDEX_RUN_H

#include <stdio.h>

struct ci_index;
struct sqlite3;
struct ix_server;

/* What the command line asked for. */
struct ix_opts {
	const char *index;	/* --index, or NULL */
	int threads;		/* -j */
	int progress;		/* 1 on, 0 off (-1 before ix_run_init's caller decides) */
	int embed;		/* --embed */
	int history;		/* --history */
	const char *model;	/* --model, or NULL */
	long dims;		/* --dims: a static model's prefix (embed_model_set_dims), 0: not cut */
	const char *vectors;	/* --vectors, or NULL: the index's format */
	int no_server;		/* --no-server */
	int no_graph;		/* --no-graph: build and update store no graph answers */
	int damage;		/* index_open's damage flag: INDEX_NOTE_DAMAGE for the
				   commands that repair an index (build, update, serve) */
};

struct ix_run {
	struct ix_opts o;		/* the options */
	long crash_after;		/* test hook CI_INDEX_CRASH_AFTER: raise crash_signal
					   after this many files (-1: never) */
	int crash_signal;		/* CI_INDEX_CRASH_SIGNAL: SIGKILL, SIGTERM, SIGINT */
	long slow_ms;			/* test hook CI_INDEX_SLOW_MS: sleep before each file */
	int build_lock;			/* a build's lock, kept until its command is done
					   (its history stored, the server restarted); a
					   lock of the same index meanwhile shares it; -1 */
	const char *build_dir;		/* the directory a build indexed ("."), for --history */
	int build_rev;			/* the build was of a commit (--rev), not a work tree */
	struct ix_server *srv;		/* in a worker of ci-index serve: the server's
					   state (its watch's hint), else NULL */
	struct ci_index *deferred_ix;	/* a worker's index, closed once it has answered */
	int deferred_lock;		/* and its lock */
	char *wrote;			/* the index the last build or update wrote
					   (owned; for the graph store, graph/gstore.h), or NULL */
	/* the graph store's incremental path (graph/gstore.h gstore_hook),
	 * called by an update in its write transaction (NULL: none):
	 * IX_GRAPH_BEGIN before it writes, IX_GRAPH_CHANGED with the files it
	 * is to re-read or forget (paths[0..n), strcmp order) before it writes
	 * them, IX_GRAPH_COMMIT before its commit, IX_GRAPH_ABORT before a
	 * rollback (an update that began ends with one of the two) */
	void (*graph_hook)(void *data, struct ci_index *ix, int phase, const char *const *paths, size_t n);
	void *graph_data;
};
enum { IX_GRAPH_BEGIN, IX_GRAPH_CHANGED, IX_GRAPH_COMMIT, IX_GRAPH_ABORT };

/* Defaults: every CPU, no progress, no hooks, no lock.  Cannot fail. */
void ix_run_init(struct ix_run *r);
/*
 * The test hooks from the environment (CI_INDEX_CRASH_AFTER,
 * CI_INDEX_CRASH_SIGNAL, CI_INDEX_SLOW_MS): a bad value exits 2 (ENV_DIE).
 */
void ix_run_hooks(struct ix_run *r);
/* What a run still holds at its end: the build's lock, a worker's index. */
void ix_run_release(struct ix_run *r);
/* In a worker: the index its update left open, closed (and its lock let go). */
void ix_run_close_deferred(struct ix_run *r);

/*
 * Build the index of the repository containing start (NULL: ".") anew, of
 * its work tree, or of the tree of commit rev (NULL: the work tree).
 */
int ix_build(struct ix_run *r, const char *start, const char *rev);
/* Re-read what changed in the tree at "." since the last build or update. */
int ix_update(struct ix_run *r);
/* The status record of the index, written to out. */
int ix_status(struct ix_run *r, FILE *out);
/* Store the records read from in (named name) in the index of the repository
 * at dir; *commits (may be NULL): how many commit records. */
int ix_load(struct ix_run *r, const char *dir, FILE *in, const char *name, long *commits);
/* --history: ci-couple's history of dir (incremental: since the stored head),
 * of commit rev and its ancestors when rev is not NULL (build --rev). */
int ix_load_history(struct ix_run *r, const char *dir, int incremental, const char *rev);
/* Read the whole index (PRAGMA quick_check): EXIT_OK, or the damage said and EXIT_IO. */
int ix_check(struct ix_run *r);
/* Delete the index and the files beside it. */
int ix_drop(struct ix_run *r);

/*
 * What PRAGMA quick_check finds wrong with the index db: NULL when nothing,
 * else its first complaint or the error it ended with (malloc'd).
 */
char *ix_damage(struct sqlite3 *db);

#endif
