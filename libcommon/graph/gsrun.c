/*
 * gsrun.c: the graph store in ci-index's runs (index/run.h): the update's
 * hooks for the incremental path, and the store once a build or an update
 * has written (gstore.h).
 */
#include "core/common.h"
#include "graph/gstore.h"
#include "index/index.h"
#include "index/run.h"
#include "index/engine.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

static void hook(void *data, struct ci_index *ix, int phase, const char *const *paths, size_t n)
{
	struct gstore_hook *h = data;
	struct refs_opts o = { .limit = 100, .depth = -1 };

	if (phase == IX_GRAPH_BEGIN && !h->open) {
		refs_init(&h->q, ix, &o, stdout);
		h->open = 1;
		h->pre = gstore_begin(&h->q);
		return;
	}
	if (!h->open)
		return;
	if (phase == IX_GRAPH_CHANGED) {
		gstore_changed(h->pre, &h->q, paths, n);
		return;
	}
	if (phase == IX_GRAPH_COMMIT) {
		gstore_commit(h->pre, &h->q);
	} else {
		gstore_pre_free(h->pre);
		h->pre = NULL;
	}
	refs_release(&h->q);
	h->open = 0;
}

void gstore_hook_attach(struct ix_run *r, struct gstore_hook *h)
{
	memset(h, 0, sizeof(*h));
	if (r->o.no_graph)
		return;
	r->graph_hook = hook;
	r->graph_data = h;
}

void gstore_hook_detach(struct ix_run *r, struct gstore_hook *h)
{
	r->graph_hook = NULL;
	r->graph_data = NULL;
	if (h->open) {	/* an update that rebuilt the index: no end, nothing learnt */
		refs_release(&h->q);
		gstore_pre_free(h->pre);
		h->pre = NULL;
		h->open = 0;
	}
}

void gstore_hook_free(struct gstore_hook *h)
{
	gstore_pre_free(h->pre);
	h->pre = NULL;
}

/* What gstore_update() did, said on stderr (damage whatever the verbosity). */
static void say(int rc, int update, int incremental, long rebound, const char *why)
{
	if (update && !incremental && !why)
		why = "the answers were not stored whole when the update began";
	if (rc == 1 && verbosity)
		fprintf(stderr, "%s: the index changed meanwhile: the call graph's answers are not stored\n",
			progname);
	else if (rc > 1)	/* the build or update still stands */
		warning("the index is damaged: the call graph's answers are not stored (ci-refs dead and arch "
			"bind the whole graph; 'ci-index build' anew mends it)");
	else if (!rc && verbosity && rebound < 0)
		fprintf(stderr, "%s: graph store: the whole graph bound%s%s%s\n", progname, why ? " (" : "",
			why ? why : "", why ? ")" : "");
	else if (!rc && verbosity)
		fprintf(stderr, "%s: graph store: %ld files re-bound\n", progname, rebound);
}

/* SQLite's page cache of db set to size (PRAGMA cache_size's units); the size it had. */
static sqlite3_int64 cache_size(sqlite3 *db, sqlite3_int64 size)
{
	sqlite3_stmt *st;
	sqlite3_int64 was = size;
	char sql[64];

	if (sqlite3_prepare_v2(db, "PRAGMA cache_size", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		was = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	snprintf(sql, sizeof(sql), "PRAGMA cache_size=%lld", (long long)size);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	return was;
}

void gstore_run(struct ix_run *r, const struct gstore_hook *h)
{
	struct refs_opts o = { .limit = 100, .depth = -1 };
	struct ci_index *ix = r->deferred_ix;
	struct refs q;
	int lock = -1, rc;
	long rebound;
	const char *why;
	sqlite3_int64 map, cache;

	if (!r->wrote || r->o.no_graph)
		return;
	if (!ix && ((lock = ix_lock_dir(r, r->wrote)) < 0 || index_open(&ix, r->wrote, INDEX_NOTE_DAMAGE) != 0)) {
		if (lock >= 0)
			close(lock);
		return;
	}
	if (verbosity)
		fprintf(stderr, "%s: storing the call graph's answers (dead, arch)\n", progname);
	map = index_unmap(index_db(ix));	/* it reads most of the index once */
	cache = cache_size(index_db(ix), -8192);	/* the graph is the peak of memory: 8 MiB, not 64 */
#ifdef __GLIBC__
	/* what the build freed (its threads' arenas keep it, and the pages
	 * the smaller cache let go), given back before the graph is bound: a
	 * peak of its own on top of the build's */
	malloc_trim(0);
#endif
	refs_init(&q, ix, &o, stdout);
	rc = gstore_update(&q, h ? h->pre : NULL, &rebound, &why);
	cache_size(index_db(ix), cache);
	index_remap(index_db(ix), map);
	say(rc, h != NULL, h && h->pre, rebound, why);
	refs_release(&q);
	if (ix != r->deferred_ix)
		index_close(ix);
	if (lock >= 0)
		close(lock);
}
