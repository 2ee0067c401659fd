/*
 * libcommon/index/embedrun.c: the vectors of an index run (engine.h): their
 * format, and embedding in-process what has no vector, in batches committed
 * one by one, so that an interrupted run keeps what it embedded.
 */
#include "core/common.h"
#include "index/engine.h"
#include "index/index.h"
#include "embed/embed.h"
#include "embed/embedtext.h"

#include <limits.h>
#include <signal.h>

/* The format new vectors are stored in: --vectors, else the index's, else f32. */
enum vec_format ix_vector_format(const struct ix_run *r, sqlite3 *db)
{
	enum vec_format f = VEC_F32;
	char *v = db ? ix_get_meta(db, "vector_format") : NULL;

	if (r->o.vectors)
		vec_format_parse(&f, r->o.vectors);
	else if (v)
		vec_format_parse(&f, v);
	free(v);
	return f;
}

/* Does the index hold any vector (so that update keeps embedding)? */
int ix_has_vectors(sqlite3 *db)
{
	sqlite3_stmt *st = ix_prep(db, "SELECT EXISTS (SELECT 1 FROM vectors) OR EXISTS (SELECT 1 FROM commit_vectors)");
	int have = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);

	sqlite3_finalize(st);
	return have;
}

/* The ids (rowids, or chunks.id) that sql selects, into a malloc'd array. */
static sqlite3_int64 *select_ids(sqlite3 *db, const char *sql, size_t *nr)
{
	sqlite3_stmt *st = ix_prep(db, sql);
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
	int crash_signal;	/* raised then: the run's crash_signal */
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
		raise(eb->crash_signal);
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
static int embed_rows(struct ix_run *r, struct loader *ld, struct embed_model *m,
		      const sqlite3_int64 *ids, size_t nr, int commits, struct progress *pg,
		      struct embed_batches *eb)
{
	struct embed_fields fields;
	sqlite3_stmt *get = commits ?
		ix_prep(ld->db, "SELECT sha, message FROM commits WHERE rowid = ?1") :
		ix_prep(ld->db, "SELECT c.kind, c.name, c.scope, c.signature, ci_inflate(c.text), b.lang FROM chunks c "
		     "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1");
	const char *name = embed_model_name(m, 0);
	struct buf texts = BUF_INIT;
	size_t round = eb->batch < EMBED_ROUND ? eb->batch : EMBED_ROUND;
	size_t *off = xcalloc(round, sizeof(*off)), *len = xcalloc(round, sizeof(*len));
	size_t *head = xcalloc(round, sizeof(*head));
	const char **tp = xcalloc(round, sizeof(*tp));
	char **keys = xcalloc(round, sizeof(*keys));
	float *vec = xmalloc(round * embed_dim(m) * sizeof(float));
	size_t i, k, n, in_batch = 0;
	int rc = 0;

	embed_fields_parse(&fields, EMBED_DEFAULT_FIELDS);
	for (i = 0; i < nr && !rc; i += n) {
		/* a round ends where a batch does */
		n = nr - i < round ? nr - i : round;
		if (n > eb->batch - in_batch)
			n = eb->batch - in_batch;
		buf_reset(&texts);
		for (k = 0; k < n; k++) {
			keys[k] = NULL;
			off[k] = texts.len;
			head[k] = 0;
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
					head[k] = embed_chunk_text(&texts, rec, &fields,
								   embed_text_limit((int)embed_max_tokens(m)));
					json_decref(rec);
				}
			}
			sqlite3_reset(get);
			len[k] = texts.len - off[k];
		}
		for (k = 0; k < n; k++)
			tp[k] = texts.buf + off[k];
		embed_texts(m, 0, 0, r->o.threads, tp, len, head, n, vec);
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
	free(head);
	free(tp);
	free(keys);
	free(vec);
	return rc;
}

/*
 * Delete the chunk and commit vectors of model name (others 0), or of every
 * other model (others 1).  0, or -1 after a message.
 */
static int drop_vectors(sqlite3 *db, const char *name, int others)
{
	sqlite3_stmt *st = ix_prep(db, others ? "DELETE FROM vectors WHERE model <> ?1" :
				   "DELETE FROM vectors WHERE model = ?1");
	sqlite3_stmt *st2 = ix_prep(db, others ? "DELETE FROM commit_vectors WHERE model <> ?1" :
				    "DELETE FROM commit_vectors WHERE model = ?1");
	int rc;

	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st2, 1, name, -1, SQLITE_STATIC);
	rc = ix_step_done(db, st) < 0 || ix_step_done(db, st2) < 0 ? -1 : 0;
	sqlite3_finalize(st);
	sqlite3_finalize(st2);
	return rc;
}

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
int ix_embed_missing(struct ix_run *r, struct loader *ld, int asked, int batches)
{
	sqlite3 *db = ld->db;
	struct embed_model *m = NULL;
	struct progress pg;
	struct embed_batches eb;
	sqlite3_int64 *chunk_ids = NULL, *commit_ids = NULL;
	size_t chunks_nr = 0, commits_nr = 0;
	char *old, fp[17] = "";
	const char *name;
	int rc = -1, stale = 0;

	if (!asked) {
		/* an update that changed nothing does not load the model */
		sqlite3_stmt *st = ix_prep(db, MISSING_CHUNKS_SQL(" LIMIT 1"));
		sqlite3_stmt *st2 = ix_prep(db, MISSING_COMMITS_SQL(" LIMIT 1"));
		int none = sqlite3_step(st) != SQLITE_ROW && sqlite3_step(st2) != SQLITE_ROW;
		sqlite3_finalize(st);
		sqlite3_finalize(st2);
		if (none)
			return 0;
	}
	{
		/* no --model: the model of the vectors the index holds, when known by name */
		sqlite3_stmt *st = ix_prep(db, "SELECT model FROM vectors UNION ALL "
					"SELECT model FROM commit_vectors LIMIT 1");
		char *im = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) ?
			xstrdup((const char *)sqlite3_column_text(st, 0)) : NULL;
		sqlite3_finalize(st);
		progress_start(&pg, r->o.progress, "loading the model", NULL, 0, 0);
		rc = embed_model_open(&m, embed_model_dir_for(r->o.model, im));
		progress_stop(&pg);
		free(im);
		if (rc < 0)
			return -1;
		if (r->o.dims && embed_model_set_dims(m, (size_t)r->o.dims) < 0) {
			embed_model_close(m);
			return -1;
		}
		rc = -1;
	}
	name = embed_model_name(m, 0);
	{
		sqlite3_stmt *st = ix_prep(db, "SELECT model FROM vectors WHERE model <> ?1 UNION ALL "
					"SELECT model FROM commit_vectors WHERE model <> ?1 LIMIT 1");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		old = sqlite3_step(st) == SQLITE_ROW ? xstrdup((const char *)sqlite3_column_text(st, 0)) : NULL;
		sqlite3_finalize(st);
	}
	if (embed_model_fingerprint(m))
		index_fingerprint_text(fp, embed_model_fingerprint(m));
	if (*fp) {
		/*
		 * Vectors this index embedded with the model of this name, but of other
		 * weights (an earlier ci-code): they do not compare with the new ones either.
		 */
		sqlite3_stmt *st = ix_prep(db, "SELECT 1 FROM vectors WHERE model = ?1 UNION ALL "
					"SELECT 1 FROM commit_vectors WHERE model = ?1 LIMIT 1");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		stale = index_vectors_stale(db, name, embed_model_fingerprint(m)) && sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	if (stale && !asked) {
		warning("the index's vectors are of other weights of model '%s' (an earlier version): "
			"not embedding (--embed embeds everything anew)", name);
		rc = 0;
		goto done;
	}
	if (stale && verbosity)
		fprintf(stderr, "%s: the index's vectors are of other weights of '%s': embedding anew\n",
			progname, name);
	if (stale && drop_vectors(db, name, 0) < 0)
		goto done;
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
	if (drop_vectors(db, name, 1) < 0)
		goto done;
	chunk_ids = select_ids(db, MISSING_CHUNKS_SQL(""), &chunks_nr);
	commit_ids = select_ids(db, MISSING_COMMITS_SQL(""), &commits_nr);
	eb.commit = batches;
	eb.batch = (size_t)env_long("CI_INDEX_EMBED_BATCH", 1, 1000000, EMBED_ROUND, ENV_DIE);
	eb.total = chunks_nr + commits_nr;
	eb.done = 0;
	eb.crash_after = env_long("CI_INDEX_EMBED_CRASH_AFTER", 0, LONG_MAX, -1, ENV_DIE);
	eb.crash_signal = r->crash_signal;
	if (batches && eb.total)
		ix_set_meta(db, "embed_pending", "1");	/* committed with the first batch */
	progress_start(&pg, r->o.progress && chunks_nr + commits_nr > 0, "embedding", "texts",
		       chunks_nr + commits_nr, 1);
	if (embed_rows(r, ld, m, chunk_ids, chunks_nr, 0, &pg, &eb) < 0 ||
	    embed_rows(r, ld, m, commit_ids, commits_nr, 1, &pg, &eb) < 0) {
		progress_stop(&pg);
		goto done;
	}
	progress_stop(&pg);
	if (index_exec(db, "DELETE FROM meta WHERE key = 'embed_pending'") < 0)
		goto done;
	ix_set_meta(db, "model", name);
	if (*fp)
		ix_set_meta(db, "model_fingerprint", fp);
	else if (index_exec(db, "DELETE FROM meta WHERE key = 'model_fingerprint'") < 0)
		goto done;
	ix_set_meta(db, "vector_format", vec_format_name(ld->vfmt));
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
