/*
 * search/plan.c: the files an indexed search reads: the pattern's trigram
 * query asked of the index (libcommon/index/trigram.c turns the pattern into
 * an FTS5 query; common trigrams left out where rarer ones say nearly as
 * much), its candidates read by the parts that can match (their plans), plus
 * every file that changed on disk since it was indexed, plus any file the
 * index does not know when the tree's directories changed since.  The tree is
 * checked by its directories where the index recorded them (dirs.c), else by
 * one stat per indexed file, in threads.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"
#include "search/plan.h"

#include <sys/stat.h>
#include <time.h>

/* The plan for a candidate f, or NULL when all of it is to be read. */
static struct plan *plan_of(const struct index_file *f)
{
	struct index_seg runs[INDEX_SEG_MAX];
	struct plan *pl;
	int nr;

	if (!f->hits || !f->exact)
		return NULL;
	/* none (a damaged index), or the whole file: read it whole */
	nr = index_seg_runs(f->segs, f->segs_len, f->hits, runs);
	if (nr <= 0)
		return NULL;
	pl = xmalloc(sizeof(*pl) + (size_t)nr * sizeof(pl->part[0]));
	pl->nr = (size_t)nr;
	memcpy(pl->part, runs, (size_t)nr * sizeof(runs[0]));
	return pl;
}

/*
 * Does the index's trigram table match phrases (FTS5 detail=full)?  Then whole
 * strings are asked for, which is far more selective than their trigrams ANDed.
 * NEEDSWORK: this asks the table by the name index.h gives; index.c could tell.
 */
static int index_has_phrases(struct ci_index *ix)
{
	static const char sql[] = "SELECT rowid FROM chunks_tri WHERE chunks_tri MATCH '\"abcd\"' LIMIT 1";
	sqlite3_stmt *st = index_kept(ix, sql), *kept = st;	/* a shard server's index: kept */
	int rc;

	if (!st && sqlite3_prepare_v2(index_db(ix), sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	rc = sqlite3_step(st);
	if (kept)
		sqlite3_reset(st);
	else
		sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

/* trigram_df_fn over the index's tri_df (statement data). */
static long tri_df_of(const char *tri, void *data)
{
	sqlite3_stmt *st = data;
	long df = 0;

	sqlite3_bind_text(st, 1, tri, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		df = (long)sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return df;
}

int collect_file(const struct index_file *f, void *data)
{
	struct ifiles *fs = data;

	ALLOC_GROW(fs->v, fs->nr + 1, fs->alloc);
	fs->v[fs->nr].path = xstrdup(f->path);
	fs->v[fs->nr].size = f->size;
	fs->v[fs->nr].mtime = f->mtime;
	fs->v[fs->nr].exact = f->exact;
	fs->v[fs->nr].plan = plan_of(f);
	fs->v[fs->nr].candidate = 0;
	fs->nr++;
	return 0;
}

struct cand_cursor {
	struct ifiles *all;	/* every indexed file, sorted */
	size_t i;		/* where the last candidate was found */
	size_t nr;		/* candidates marked */
};

/* Mark a candidate in the sorted list (candidates come sorted too). */
static int mark_candidate(const struct index_file *f, void *data)
{
	struct cand_cursor *c = data;

	while (c->i < c->all->nr && strcmp(c->all->v[c->i].path, f->path) < 0)
		c->i++;
	if (c->i < c->all->nr && !strcmp(c->all->v[c->i].path, f->path)) {
		c->all->v[c->i].candidate = 1;
		c->nr++;
	}
	return 0;
}

void ifiles_release(struct ifiles *fs)
{
	size_t i;

	for (i = 0; i < fs->nr; i++) {
		free(fs->v[i].path);
		free(fs->v[i].plan);
	}
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

/* "2024-01-02T03:04:05Z" as seconds since the epoch, or -1. */
static int64_t parse_stamp(const char *s)
{
	struct tm tm;
	char *end;

	if (!s)
		return -1;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return -1;
	return (int64_t)timegm(&tm);
}

/*
 * Has the set of files changed since the index was written?  Every directory
 * holding an indexed file (and each of their parents) is stat'ed: an entry added,
 * removed or renamed changes its directory's mtime.  So do the .gitignore files
 * among the indexed ones, since a rule changed there changes what a walk lists.
 */
static int tree_changed(int rootfd, const struct ifiles *fs, int64_t since)
{
	char *last = xstrdup(""), *dir;
	struct stat st;
	size_t i;
	const char *slash, *base;
	int changed = 0;

	if (fstat(rootfd, &st) < 0 || (int64_t)st.st_mtime >= since)
		changed = 1;
	for (i = 0; i < fs->nr && !changed; i++) {
		const char *p = fs->v[i].path;

		base = strrchr(p, '/');
		base = base ? base + 1 : p;
		if (!strcmp(base, ".gitignore") &&
		    (fstatat(rootfd, p, &st, 0) < 0 || st.st_size != fs->v[i].size ||
		     (int64_t)st.st_mtime != fs->v[i].mtime))
			changed = 1;
		/* each directory of the path not stat'ed yet (paths are sorted) */
		for (slash = strchr(p, '/'); slash && !changed; slash = strchr(slash + 1, '/')) {
			size_t l = (size_t)(slash - p);
			if (strlen(last) >= l && !strncmp(last, p, l) && (last[l] == '/' || !last[l]))
				continue;
			dir = xstrndup(p, l);
			if (fstatat(rootfd, dir, &st, 0) < 0 || (int64_t)st.st_mtime >= since)
				changed = 1;
			free(last);
			last = dir;
		}
	}
	free(last);
	return changed;
}

/*
 * Stat the T_CHECK files (those the index rules out) with nthreads threads: a
 * file whose size or modification time differs from the index's becomes T_READ,
 * the others T_SKIP.  This is most of the time of a selective indexed search on a
 * large tree (one stat per indexed file), hence the threads.
 */
struct check_job {
	struct targets *ts;		/* the files */
	int rootfd;			/* the root */
	uint64_t max_filesize;		/* a changed file over it is skipped */
	unsigned long checked;		/* files stat'ed (atomic) */
	unsigned long unchanged;	/* found unchanged (atomic) */
};

static void check_batch(size_t lo, size_t hi, void *arg)
{
	struct check_job *cj = arg;
	struct dir_stat ds = { .rootfd = cj->rootfd, .fd = -1 };
	size_t i;
	unsigned long checked = 0, unchanged = 0;
	struct stat st;

	for (i = lo; i < hi; i++) {
		struct target *t = &cj->ts->v[i];

		if (t->mode != T_CHECK && t->mode != T_VERIFY)
			continue;
		if (t->mode == T_CHECK)
			checked++;
		if (dir_stat(&ds, t->path, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (cj->max_filesize && (uint64_t)st.st_size > cj->max_filesize)) {
			t->mode = T_SKIP;	/* gone, or no longer a file to read */
		} else if (t->mode == T_CHECK && (uint64_t)st.st_size == t->size &&
			   (int64_t)st.st_mtime == t->mtime) {
			t->mode = T_SKIP;
			unchanged++;
		} else {
			if (t->plan && ((uint64_t)st.st_size != t->size || (int64_t)st.st_mtime != t->mtime)) {
				free(t->plan);	/* changed since it was indexed: read it whole */
				t->plan = NULL;
			}
			t->mode = T_READ;
			t->size = (uint64_t)st.st_size;
		}
	}
	dir_stat_release(&ds);
	__atomic_add_fetch(&cj->checked, checked, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cj->unchanged, unchanged, __ATOMIC_RELAXED);
}

/* Check the T_CHECK files, then keep only those to read.  *checked, *unchanged: counts. */
void check_targets(struct targets *ts, int rootfd, const struct search_opts *o, int trust,
		   unsigned long *checked, unsigned long *unchanged)
{
	struct check_job cj;
	size_t r, w;

	memset(&cj, 0, sizeof(cj));
	cj.ts = ts;
	cj.rootfd = rootfd;
	cj.max_filesize = o->walk.max_filesize;
	if (!trust)
		parallel_batches(ts->nr, CHECK_BATCH, o->threads, check_batch, &cj);
	for (r = w = 0; r < ts->nr; r++) {
		if (ts->v[r].mode != T_READ) {
			free(ts->v[r].path);
			free(ts->v[r].plan);
			continue;
		}
		ts->v[w++] = ts->v[r];
	}
	ts->nr = w;
	*checked = cj.checked;
	*unchanged = cj.unchanged;
}

int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmp_ifile(const void *a, const void *b)
{
	return strcmp(((const struct ifile *)a)->path, ((const struct ifile *)b)->path);
}


/*
 * The trigram query for the pattern (malloc'd), or NULL when every file is to
 * be read: whole strings when the index's table matches phrases, else the
 * trigrams, the common ones left out when rarer ones say nearly as much.
 */
static char *query_for(const struct search *q, struct ci_index *ix)
{
	const struct matcher *m = q->m;
	/* -v, -L, --files: a file without the pattern's trigrams is read too */
	char *query = m->info.query && !q->o.all_files ? xstrdup(m->info.query) : NULL;

	if (query && index_has_phrases(ix)) {
		free(query);
		query = trigram_query(m->pattern, m->tflags | TRIGRAM_PHRASES);
	} else if (query) {
		static const char sql[] = "SELECT df FROM tri_df WHERE tri = ?1";
		sqlite3_stmt *df = index_kept(ix, sql), *kept = df;	/* a shard server's index: kept */
		if (df || sqlite3_prepare_v2(index_db(ix), sql, -1, &df, NULL) == SQLITE_OK) {
			free(query);
			query = trigram_query_lean(m->pattern, m->tflags, tri_df_of, df);
			if (!kept)
				sqlite3_finalize(df);
		}
	}
	return query;
}

/* --trust-index: the candidates alone, no file list, no directory or file checked. */
static int trusted_targets(struct search *q, struct ci_index *ix, const char *query, const struct scope *sc,
			   struct targets *ts, struct plan_stats *ps, int64_t t0)
{
	struct ifiles all = { 0 };
	const char *v = index_meta(ix, "walked_ns");
	size_t i;
	int rc;

	if (!v || !*v)
		warning("the index '%s' holds the records loaded into it, not a walk of the tree: "
			"--trust-index searched only its files", q->index_path ? q->index_path : "");
	if (query && server_candidates(q, ix, query, &all) == 0) {
		rc = 0;		/* the server's map of the index: no join per candidate */
		ps->served = 1;
	} else if (query)
		rc = index_trigram_candidates(ix, query, collect_file, &all);
	else
		rc = index_files(ix, collect_file, &all);
	if (rc < 0)
		return -1;
	ps->t_query = secs(t0, now_ns());
	ps->candidates = all.nr;
	for (i = 0; i < all.nr; i++) {
		struct target *t;
		if (!in_scope(sc, all.v[i].path))
			continue;
		t = add_target(ts, q, all.v[i].path, (uint64_t)all.v[i].size, all.v[i].mtime, T_READ, 0);
		if (t) {
			t->plan = all.v[i].plan;	/* trusted as indexed */
			all.v[i].plan = NULL;
		}
	}
	ifiles_release(&all);
	return 0;
}

/* The index's files into *all, the candidates of query marked (every file without one). */
static int mark_candidates(struct ci_index *ix, const char *query, struct ifiles *all, struct plan_stats *ps,
			   int64_t t0)
{
	struct cand_cursor cc;
	int64_t t1;
	size_t i;

	if (index_files(ix, collect_file, all) < 0)
		return -1;
	t1 = now_ns();
	ps->t_files = secs(t0, t1);
	ps->indexed = all->nr;
	memset(&cc, 0, sizeof(cc));
	cc.all = all;
	if (query) {
		if (index_trigram_candidates(ix, query, mark_candidate, &cc) < 0)
			return -1;
	} else {
		for (i = 0; i < all->nr; i++)
			all->v[i].candidate = 1;
		cc.nr = all->nr;
	}
	ps->candidates = cc.nr;
	for (i = 0; i < all->nr; i++)
		if (!all->v[i].exact)
			all->v[i].candidate = 1;
	ps->t_query = secs(t1, now_ns());
	return 0;
}

/* The walker's files, but for those indexed as they are and ruled out. */
static void walked_targets(struct search *q, struct walker *w, const struct scope *sc, const struct ifiles *all,
			   struct targets *ts)
{
	struct walk_list list = { 0 };
	size_t i, j;

	if (!sc->nr)
		walker_walk(w, "", 0, &list);
	for (i = 0; i < sc->nr; i++)
		walker_walk(w, sc->rel[i], !sc->is_dir[i], &list);
	walk_list_finish(&list);
	/* the walk's own stat tells what changed: no need to check again */
	for (i = j = 0; i < list.files_nr; i++) {
		struct walk_file *f = &list.files[i];
		int skip = 0;

		while (j < all->nr && strcmp(all->v[j].path, f->path) < 0)
			j++;
		if (j < all->nr && !strcmp(all->v[j].path, f->path) && !all->v[j].candidate &&
		    (int64_t)f->size == all->v[j].size && f->mtime == all->v[j].mtime && !f->explicit_)
			skip = 1;
		if (!skip)
			add_target(ts, q, f->path, f->size, f->mtime, T_READ, f->explicit_);
	}
	walk_list_release(&list);
}

/* The index's file list, then the tree walked or each file checked (walk: must walk). */
static int listed_targets(struct search *q, struct ci_index *ix, struct walker *w, int rootfd, const char *query,
			  const struct scope *sc, struct targets *ts, struct plan_stats *ps, int walk, int64_t t0)
{
	const struct search_opts *o = &q->o;
	struct ifiles all = { 0 };
	const char *v;
	int64_t since, t1;
	size_t i;

	if (mark_candidates(ix, query, &all, ps, t0) < 0) {
		ifiles_release(&all);
		return -1;
	}
	t0 = now_ns();
	/*
	 * The index lists the walker's files only for the default rules and an
	 * unchanged tree, and only if a walk of the tree wrote it: one filled by
	 * `ci-index load` (no "walked_ns") holds what it was given, perhaps one
	 * directory of many, and the tree's other files must be walked to.
	 */
	v = index_meta(ix, "walked_ns");
	if (!v || !*v)
		walk = 1;
	since = parse_stamp(index_meta(ix, "updated"));
	if (!walk && (!o->walk_default || since < 0 || tree_changed(rootfd, &all, since)))
		walk = 1;
	t1 = now_ns();
	ps->t_tree = secs(t0, t1);

	if (walk) {
		ps->walked = 1;
		walked_targets(q, w, sc, &all, ts);
	} else {
		for (i = 0; i < all.nr; i++) {
			if (!in_scope(sc, all.v[i].path))
				continue;
			add_target(ts, q, all.v[i].path, (uint64_t)all.v[i].size, all.v[i].mtime,
				   all.v[i].candidate ? T_READ : T_CHECK, 0);
		}
		check_targets(ts, rootfd, o, o->trust_index, &ps->checked, &ps->unchanged);
		ps->t_check = secs(t1, now_ns());
	}
	ifiles_release(&all);
	return 0;
}

int index_targets(struct search *q, struct ci_index *ix, struct walker *w, int rootfd, const struct scope *sc,
		  struct targets *ts, struct plan_stats *ps)
{
	const struct search_opts *o = &q->o;
	size_t i;
	int walk = 0, rc;
	int64_t t0 = now_ns();
	char *query = query_for(q, ix);

	ps->query = query;	/* freed by the caller */
	/*
	 * A search is a short-lived reader touching scattered pages once: read()
	 * into SQLite's cache costs less than a page fault per page through a
	 * mapping (3x less for the file list on the Linux tree).
	 */
	sqlite3_exec(index_db(ix), "PRAGMA mmap_size = 0", NULL, NULL, NULL);
	for (i = 0; i < sc->nr; i++)
		if (!sc->is_dir[i])
			walk = 1;	/* a file named: it may be ignored, so not indexed */
	if (o->trust_index && o->walk_default && !walk)
		return trusted_targets(q, ix, query, sc, ts, ps, t0);
	if (!walk && o->walk_default) {
		/* the directories tell what changed, unless the index has no record */
		rc = dir_targets(q, ix, w, rootfd, query, sc, ts, ps);
		if (rc <= 0)
			return rc;
		t0 = now_ns();
	}
	return listed_targets(q, ix, w, rootfd, query, sc, ts, ps, walk, t0);
}
