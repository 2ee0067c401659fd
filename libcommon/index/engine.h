/*
 * libcommon/index/engine.h: what the files of the index engine (run.h) share;
 * not for commands, which call run.h.
 */
#ifndef CI_INDEX_ENGINE_H
#define CI_INDEX_ENGINE_H

#include <stdint.h>
#include <sqlite3.h>
#include "index/run.h"
#include "index/loader.h"
#include "index/progress.h"
#include "parse/chunkrun.h"
#include "embed/vec.h"

struct walker;
struct walk_list;
struct chunk_result;

/* ---- install.c: the writer's lock, a new database, its install ---- */

/*
 * The lock of the index at db_path (<db>.lock), which every writer holds
 * while it writes: its descriptor, or -1 after reporting.  Shares r's
 * build_lock when that is the same file.
 */
int ix_lock_dir(struct ix_run *r, const char *db_path);
/* The index's directory made (with a .gitignore of "*" beside index.db): 0, or -1. */
int ix_ensure_dir(const char *db_path);
/*
 * The tree of the index ix at db_path, for an update or its stale count: w (a
 * walker of the current directory's tree) stays when the index is that tree's
 * or sits at its own place (<root>/.ci-index/index.db, whatever CI_INDEX says:
 * it came with a repository moved or copied); else it is opened again at the
 * index's root, when that is still a directory (--index, CI_INDEX: as the
 * index's server does).  0, or -1 after a message (w then closed).  The caller
 * compares index_root(ix) with w->root: still another, the index's tree is gone.
 */
int ix_index_tree(struct walker *w, const struct walk_opts *wo, struct ci_index *ix, const char *db_path);
/* 1 if db_path is the tree at root's own index (index_own_path), as an existing file. */
int ix_is_own_index(const char *root, const char *db_path);
/* A new index at path (of the tree at root), in exclusive mode; NULL after a message. */
sqlite3 *ix_create_db(const char *path, const char *root);
/* From now on, remove the files of the new database tmp on the way out; and stop. */
void ix_tmp_arm(const char *tmp);
void ix_tmp_done(void);
/* Put the new database at tmp in place of path: 0, or -1 after a message. */
int ix_install_db(const char *tmp, const char *path);
/* After a build: the snapshot of its vectors.  An exit status. */
int ix_refresh_snapshot(const char *path);
/* 1 if the database schema of db has the three feedback tables. */
int ix_has_feedback(sqlite3 *db, const char *schema);

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

/* ---- embedrun.c: vectors ---- */

/* The chunks of indexed files, and the commits, that have no vector. */
#define MISSING_CHUNKS_SQL(limit) \
	"SELECT c.id FROM chunks c WHERE c.blob_id IN (SELECT blob_id FROM files) " \
	"AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id) ORDER BY c.id" limit
#define MISSING_COMMITS_SQL(limit) \
	"SELECT c.rowid FROM commits c WHERE c.message IS NOT NULL " \
	"AND NOT EXISTS (SELECT 1 FROM commit_vectors v WHERE v.sha = c.sha) ORDER BY c.rowid" limit

/* The format new vectors are stored in: --vectors, else the index's (db may be NULL), else f32. */
enum vec_format ix_vector_format(const struct ix_run *r, sqlite3 *db);
/* Does the index hold any vector (so that update keeps embedding)? */
int ix_has_vectors(sqlite3 *db);
/*
 * Embed, in-process, what has no vector of the model through ld (asked:
 * --embed, which also embeds anew the vectors of another model; batches:
 * commit a batch at a time, with meta embed_pending until the last).  0, or
 * -1 after a message.
 */
int ix_embed_missing(struct ix_run *r, struct loader *ld, int asked, int batches);

/* ---- build.c: what an update shares with a build ---- */

/* What chunk_run's results go through: the loader, progress, left-out files. */
struct feed {
	struct ix_run *run;	/* the run (its test hooks) */
	struct loader *ld;	/* where records go */
	struct progress *pg;	/* progress */
	long failed;		/* files that could not be read */
	sqlite3_stmt *skip;	/* records a file left out */
	sqlite3_stmt *unfile;	/* forgets a file that is now left out */
	sqlite3_stmt *unimp;	/* and its imports */
	struct chunk_hook hook;	/* the records parsed by the workers (ld_prepare) */
};
void feed_init(struct feed *fd, struct ix_run *r, struct loader *ld, struct progress *pg);
/* chunk_run's callback (data: a struct feed). */
int feed_result(size_t i, const struct chunk_result *res, void *data);
void feed_release(struct feed *fd);

/* The time now, nanoseconds since the epoch (the clock file times come from). */
int64_t ix_wall_ns(void);
/* Record the walk that list came from, started at walked_ns (table dirs,
 * meta rules, racy, walked_ns).  0, or -1. */
int ix_record_walk(sqlite3 *db, struct walker *w, const struct walk_list *list, int64_t walked_ns);

#endif
