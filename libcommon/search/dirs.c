/*
 * search/dirs.c: an indexed search's tree checked by its directories, not
 * walked: the directories the index recorded stat'ed (or vouched for by the
 * index's server, which watches the tree), the changed ones re-listed, and the
 * candidates, racy files, new and changed files of those turned into targets.
 *
 * An index written by ci-index records the directories its walk entered, with
 * their modification times (table dirs), the files holding ignore rules (meta
 * 'rules') and the files modified within a second of the walk (meta 'racy').
 * Adding, removing or renaming an entry changes its directory's mtime, and so
 * does an editor's "atomic save" (write a new file, rename it over the old one):
 * a directory whose mtime is what the index recorded holds the files the index
 * lists, under the same rules.  So instead of walking the tree, a search stats
 * each directory (5,000 on the Linux tree, against 78,000 files) and re-lists
 * only those that changed, plus any recorded within a second of the walk (their
 * mtime could hide a later change in the same clock tick: git's "racy" entries).
 *
 * What that cannot see is a file rewritten in place (same inode): only its own
 * mtime changes.  So the files are checked too (--check files, the default: one
 * stat per indexed file) unless the caller accepts that such a file is searched
 * as it was at the last `ci-index update` (--check dirs).  A change to the rules
 * (a .gitignore, .git/info/exclude, or git's index, since tracked files are never
 * ignored) makes the caller walk the whole tree instead.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"
#include "search/plan.h"

#include <fcntl.h>
#include <sys/stat.h>

struct idir {
	char *path;		/* root-relative, "" for the root */
	int64_t mtime;		/* nanoseconds, as recorded */
	int changed;		/* re-list it */
	int clean;		/* the index's server saw nothing happen in it */
};

struct idirs {
	struct idir *v;		/* sorted by path */
	size_t nr, alloc;
	int served;		/* clean says what the index's server saw */
	int all_clean;		/* served, nothing happened anywhere: v not read */
	char **racy;		/* racy files, sorted */
	size_t racy_nr, racy_alloc;
};

static void idirs_release(struct idirs *d)
{
	size_t i;

	for (i = 0; i < d->nr; i++)
		free(d->v[i].path);
	free(d->v);
	for (i = 0; i < d->racy_nr; i++)
		free(d->racy[i]);
	free(d->racy);
	memset(d, 0, sizeof(*d));
}

static int cmp_idir(const void *a, const void *b)
{
	return strcmp(((const struct idir *)a)->path, ((const struct idir *)b)->path);
}


static struct idir *idir_find(const struct idirs *d, const char *path)
{
	struct idir key;

	key.path = (char *)path;
	return d->nr ? bsearch(&key, d->v, d->nr, sizeof(*d->v), cmp_idir) : NULL;
}

/* The directory of path ("" at the top), in a buffer of the caller's. */
static const char *dir_of(const char *path, struct buf *b)
{
	const char *slash = strrchr(path, '/');

	buf_reset(b);
	if (slash)
		buf_add(b, path, (size_t)(slash - path));
	return b->buf;
}

/* Is the directory dir, or something under it, in the scope? */
static int dir_in_scope(const struct scope *sc, const char *dir)
{
	size_t i, l, dl = strlen(dir);

	if (!sc->nr)
		return 1;
	for (i = 0; i < sc->nr; i++) {
		l = strlen(sc->rel[i]);
		if (!l || !dl)
			return 1;
		/* dir is under the scope, or the scope is under dir */
		if (!strncmp(dir, sc->rel[i], l < dl ? l : dl) &&
		    (l == dl || (l < dl ? dir[l] == '/' : sc->rel[i][dl] == '/')))
			return 1;
	}
	return 0;
}

/* Stat the directories of the scope, in batches taken by threads. */
struct dir_check {
	struct idirs *d;		/* the directories */
	const struct scope *sc;		/* the scope */
	int rootfd;			/* the root */
	int64_t walked;			/* when the index's walk started, ns */
	size_t changed;			/* found changed (atomic) */
};

static void dir_check_batch(size_t lo, size_t hi, void *arg)
{
	struct dir_check *dc = arg;
	size_t i, changed = 0;
	struct stat sb;

	for (i = lo; i < hi; i++) {
		struct idir *e = &dc->d->v[i];

		if (!dir_in_scope(dc->sc, e->path) || e->clean)
			continue;
		if (fstatat(dc->rootfd, *e->path ? e->path : ".", &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(sb.st_mode) ||
		    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != e->mtime ||
		    e->mtime >= dc->walked - 1000000000) {
			e->changed = 1;
			changed++;
		}
	}
	__atomic_add_fetch(&dc->changed, changed, __ATOMIC_RELAXED);
}

/* The index's server asked question (search_ask_fn): 0 with its answer, else 1. */
static int server_ask(struct search *q, struct ci_index *ix, const char *question, char **ans, char **body)
{
	*ans = NULL;
	if (!q->o.ask)
		return 1;
	return q->o.ask(ix, q->index_path, question, ans, body, q->o.ask_data);
}

/*
 * The directories where something happened since the index was written, as
 * the index's server (which watches the tree with inotify) knows them, sorted:
 * 0 with them in *dirs, or 1 when no server answers for this index
 * (server_ask) or it cannot vouch for the tree.
 */
static int server_dirty(struct search *q, struct ci_index *ix, char ***dirs, size_t *nr)
{
	char *ans, *p, *nl;
	size_t alloc = 0;

	*dirs = NULL;
	*nr = 0;
	if (server_ask(q, ix, "dirty", &ans, &p))
		return 1;
	for (; *p && (nl = strchr(p, '\n')); p = nl + 1) {
		ALLOC_GROW(*dirs, *nr + 1, alloc);
		(*dirs)[(*nr)++] = xstrndup(p, (size_t)(nl - p));
	}
	free(ans);
	if (*nr)
		qsort(*dirs, *nr, sizeof(**dirs), cmp_str);
	return 0;
}

/* One part "<off>,<end>,<line>" of a server's candidate line into *sg; the rest after it. */
static const char *parse_part(const char *p, struct index_seg *sg)
{
	char *e;
	long long end;

	sg->off = strtoull(p, &e, 10);
	if (*e != ',')
		return NULL;
	end = strtoll(e + 1, &e, 10);
	if (*e != ',' || end < -1)
		return NULL;
	sg->end = end < 0 ? UINT64_MAX : (uint64_t)end;
	sg->line = strtol(e + 1, &e, 10);
	return sg->line < 1 ? NULL : e;
}

/*
 * The candidates of the trigram query from the index's server (its "cand"
 * question: see srv_cand in ci-index.c), sorted by path, if it answers for
 * the index as this search reads it.  Returns 0, or 1 (ask the index).
 */
int server_candidates(struct search *q, struct ci_index *ix, const char *query, struct ifiles *out)
{
	char *ans, *question = xasprintf("cand %s", query), *p, *nl;
	int ok = 1, rc = server_ask(q, ix, question, &ans, &p);

	free(question);
	if (rc)
		return 1;
	for (; *p && ok && (nl = strchr(p, '\n')); p = nl + 1) {
		struct ifile f = { 0 };
		struct index_seg parts[INDEX_SEG_MAX];
		size_t n = 0;
		char *e;

		*nl = '\0';
		if (*p == '-') {
			p++;
		} else {
			while (ok && n < INDEX_SEG_MAX) {
				const char *r = parse_part(p, &parts[n]);
				if (!r) {
					ok = 0;
					break;
				}
				n++;
				p = (char *)r;
				if (*p != ';')
					break;
				p++;
			}
		}
		if (!ok || *p != '\t')
			break;
		f.size = strtoll(p + 1, &e, 10);
		if (*e != '\t')
			break;
		f.mtime = strtoll(e + 1, &e, 10);
		if (*e != '\t' || (e[1] != '0' && e[1] != '1') || e[2] != '\t')
			break;
		f.exact = e[1] == '1';
		f.path = xstrdup(e + 3);
		if (n) {
			f.plan = xmalloc(sizeof(*f.plan) + n * sizeof(f.plan->part[0]));
			f.plan->nr = n;
			memcpy(f.plan->part, parts, n * sizeof(parts[0]));
		}
		ALLOC_GROW(out->v, out->nr + 1, out->alloc);
		out->v[out->nr++] = f;
	}
	if (!ok || *p) {
		/* not an answer this program understands: the index's own */
		free(ans);
		ifiles_release(out);
		return 1;
	}
	free(ans);
	if (out->nr)
		qsort(out->v, out->nr, sizeof(*out->v), cmp_ifile);
	return 0;
}

static void strings_free(char **v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(v[i]);
	free(v);
}

/*
 * Read the index's directories and racy files, and stat the directories in the
 * scope.  Returns 0, or 1 when the index has no such record (an older one) or
 * its rules changed: the caller walks instead.
 */
static int idirs_load(struct search *q, struct ci_index *ix, int rootfd, const struct scope *sc, int threads,
		      struct idirs *d, size_t *changed)
{
	sqlite3_stmt *st;
	const char *v = index_meta(ix, "walked_ns"), *r, *nl;
	int64_t walked;
	char **dirty = NULL;
	size_t dirty_nr = 0, i;
	int served;

	*changed = 0;
	if (!v || !*v)
		return 1;
	walked = (int64_t)atoll(v);
	if (!walk_rules_unchanged(index_meta(ix, "rules"), rootfd))
		return 1;
	r = index_meta(ix, "racy");
	for (; r && *r; r = nl + 1) {
		nl = strchr(r, '\n');
		if (!nl)
			break;
		ALLOC_GROW(d->racy, d->racy_nr + 1, d->racy_alloc);
		d->racy[d->racy_nr++] = xstrndup(r, (size_t)(nl - r));
	}
	if (d->racy_nr)
		qsort(d->racy, d->racy_nr, sizeof(*d->racy), cmp_str);
	served = server_dirty(q, ix, &dirty, &dirty_nr) == 0;
	if (served && !dirty_nr && !sc->nr) {
		/* the server saw nothing happen anywhere: no directory to look at */
		d->served = d->all_clean = 1;
		return 0;
	}
	if (sqlite3_prepare_v2(index_db(ix), "SELECT path, mtime FROM dirs", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(d->v, d->nr + 1, d->alloc);
		d->v[d->nr].path = xstrdup((const char *)sqlite3_column_text(st, 0));
		d->v[d->nr].mtime = sqlite3_column_int64(st, 1);
		d->v[d->nr].changed = 0;
		d->v[d->nr].clean = 0;
		d->nr++;
	}
	sqlite3_finalize(st);
	if (!d->nr)
		goto fail;	/* not even the root: not recorded */
	qsort(d->v, d->nr, sizeof(*d->v), cmp_idir);
	if (served) {
		/* what the server vouches for is neither stat'ed nor checked */
		for (i = 0; i < d->nr; i++) {
			const char *key = d->v[i].path;
			d->v[i].clean = !(dirty_nr && bsearch(&key, dirty, dirty_nr, sizeof(*dirty), cmp_str));
		}
		d->served = 1;
	}
	strings_free(dirty, dirty_nr);
	{
		struct dir_check dc = { d, sc, rootfd, walked, 0 };

		parallel_batches(d->nr, CHECK_BATCH, threads, dir_check_batch, &dc);
		*changed = dc.changed;
	}
	return 0;
fail:
	strings_free(dirty, dirty_nr);
	return 1;
}

/*
 * List what the changed directories hold now (and all of any directory that is
 * not in the index, found in them or named as the scope) into list.
 */
static void relist(struct walker *w, const struct idirs *d, const struct scope *sc, struct walk_list *list)
{
	size_t i, n;

	for (i = 0; i < d->nr; i++)
		if (d->v[i].changed)
			walker_list_dir(w, d->v[i].path, list);
	n = list->dirs_nr;
	for (i = 0; i < n; i++) {
		char *p;

		if (list->dirs[i].entered || idir_find(d, list->dirs[i].path))
			continue;
		p = xstrdup(list->dirs[i].path);	/* the walk may move the array */
		walker_walk(w, p, 0, list);
		free(p);
	}
	for (i = 0; i < sc->nr; i++)
		if (sc->is_dir[i] && !idir_find(d, sc->rel[i]))
			walker_walk(w, sc->rel[i], 0, list);
	walk_list_finish(list);
}

/*
 * Does a directory of list hold a .gitignore the index's rules do not list (a
 * new one)?  Looked for by name: a walk that leaves hidden files out does not
 * list it.
 */
static int new_rules(struct ci_index *ix, int rootfd, const struct walk_list *list)
{
	const char *rules = index_meta(ix, "rules");
	size_t i;
	int found = 0;

	for (i = 0; i < list->dirs_nr && !found; i++) {
		const char *d = list->dirs[i].path;
		char *p = *d ? xasprintf("%s/.gitignore", d) : xstrdup(".gitignore"), *line;

		if (list->dirs[i].entered && !faccessat(rootfd, p, F_OK, 0)) {
			line = xasprintf(" %s\n", p);
			found = !rules || !strstr(rules, line);
			free(line);
		}
		free(p);
	}
	return found;
}


static int is_racy(const struct idirs *d, const char *path)
{
	return d->racy_nr && bsearch(&path, d->racy, d->racy_nr, sizeof(*d->racy), cmp_str);
}

/* What the steps of dir_targets share. */
struct dplan {
	struct search *q;		/* the query */
	struct ci_index *ix;		/* its index */
	const struct scope *sc;		/* the paths searched */
	struct targets *ts;		/* the files to search, so far */
	struct plan_stats *ps;		/* what was done */
	struct idirs d;			/* the index's directories, checked */
	struct ifiles cand;		/* the trigram candidates, sorted */
	struct walk_list list;		/* what the changed directories hold */
	struct buf dir;			/* scratch: a path's directory */
};

/* Is path's directory one that changed?  *e: its entry, or NULL when the index has none. */
static int in_changed_dir(struct dplan *dp, const char *path, struct idir **e)
{
	*e = idir_find(&dp->d, dir_of(path, &dp->dir));
	return *e && (*e)->changed;
}

/* The trigram candidates (all files without a query), the server's if it answers.  Returns 0 or -1. */
static int dir_candidates(struct dplan *dp, const char *query)
{
	int rc;

	if (query && dp->d.served && server_candidates(dp->q, dp->ix, query, &dp->cand) == 0) {
		rc = 0;		/* the server's map of the index: no join per candidate */
		dp->ps->served = 1;
	} else if (query)
		rc = index_trigram_candidates(dp->ix, query, collect_file, &dp->cand);
	else
		rc = index_files(dp->ix, collect_file, &dp->cand);
	dp->ps->candidates = dp->cand.nr;
	return rc < 0 ? -1 : 0;
}

/*
 * Candidates (and racy files) where the index still holds: stat'ed, then
 * read by their plans if their size and time are still the indexed ones
 * (the server's clean directories: read by their plans, not stat'ed)
 */
static void add_candidates(struct dplan *dp)
{
	struct idir *e;
	size_t i;

	for (i = 0; i < dp->cand.nr; i++) {
		const char *p = dp->cand.v[i].path;
		struct target *t;
		int racy;
		if (!in_scope(dp->sc, p) || in_changed_dir(dp, p, &e))
			continue;
		/* in a directory the server vouches for, a file is as indexed: no stat */
		racy = is_racy(&dp->d, p);
		t = add_target(dp->ts, dp->q, p, (uint64_t)dp->cand.v[i].size, dp->cand.v[i].mtime,
			       (dp->d.all_clean || (e && e->clean)) && !racy ? T_READ : T_VERIFY, 0);
		if (t && !racy) {
			t->plan = dp->cand.v[i].plan;
			dp->cand.v[i].plan = NULL;
		}
	}
	for (i = 0; i < dp->d.racy_nr; i++) {
		const char *p = dp->d.racy[i];
		if (!in_scope(dp->sc, p) || in_changed_dir(dp, p, &e))
			continue;
		add_target(dp->ts, dp->q, p, 0, 0, T_VERIFY, 0);
	}
}

static int is_candidate(const struct dplan *dp, const char *path)
{
	struct ifile key;

	key.path = (char *)path;
	return dp->cand.nr && bsearch(&key, dp->cand.v, dp->cand.nr, sizeof(*dp->cand.v), cmp_ifile);
}

/*
 * --check files, with the index's server vouching for its clean directories:
 * only the files of the others are checked, read by a range of paths each
 * (not the whole file list: 40 ms on the Linux tree).  Returns 0 or -1.
 */
static int add_served_checks(struct dplan *dp)
{
	sqlite3_stmt *sub = NULL, *top = NULL, *rs;
	size_t i;

	if (sqlite3_prepare_v2(index_db(dp->ix), "SELECT path, size, mtime FROM files WHERE path > ?1 AND path < ?2",
			       -1, &sub, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(index_db(dp->ix), "SELECT path, size, mtime FROM files WHERE instr(path, '/') = 0",
			       -1, &top, NULL) != SQLITE_OK) {
		sqlite3_finalize(sub);
		return -1;
	}
	for (i = 0; i < dp->d.nr; i++) {
		struct idir *x = &dp->d.v[i];
		char *lo = NULL, *hi = NULL;
		if (x->clean || x->changed || !dir_in_scope(dp->sc, x->path))
			continue;
		rs = top;
		if (*x->path) {
			/* "dir/" < path < "dir0": '0' follows '/' */
			lo = xasprintf("%s/", x->path);
			hi = xasprintf("%s0", x->path);
			rs = sub;
			sqlite3_bind_text(rs, 1, lo, -1, SQLITE_STATIC);
			sqlite3_bind_text(rs, 2, hi, -1, SQLITE_STATIC);
		}
		while (sqlite3_step(rs) == SQLITE_ROW) {
			const char *p = (const char *)sqlite3_column_text(rs, 0);
			if (strcmp(dir_of(p, &dp->dir), x->path) || !in_scope(dp->sc, p))
				continue;	/* in a subdirectory: its own */
			if (is_candidate(dp, p))
				continue;	/* a candidate: read */
			add_target(dp->ts, dp->q, p, (uint64_t)sqlite3_column_int64(rs, 1), sqlite3_column_int64(rs, 2),
				   T_CHECK, 0);
			dp->ps->indexed++;
		}
		sqlite3_reset(rs);
		free(lo);
		free(hi);
	}
	sqlite3_finalize(sub);
	sqlite3_finalize(top);
	return 0;
}

/* --check files without a server: every indexed file of an unchanged directory.  Returns 0 or -1. */
static int add_checks(struct dplan *dp)
{
	struct ifiles all = { 0 };
	struct idir *e;
	size_t i, j;

	if (index_file_stats(dp->ix, collect_file, &all) < 0) {
		ifiles_release(&all);
		return -1;
	}
	dp->ps->indexed = all.nr;
	for (i = j = 0; i < all.nr; i++) {
		const char *p = all.v[i].path;
		while (j < dp->cand.nr && strcmp(dp->cand.v[j].path, p) < 0)
			j++;
		if (j < dp->cand.nr && !strcmp(dp->cand.v[j].path, p))
			continue;	/* a candidate: read */
		if (!in_scope(dp->sc, p) || ((e = idir_find(&dp->d, dir_of(p, &dp->dir))) && (e->changed || e->clean)))
			continue;
		add_target_own(dp->ts, dp->q, all.v[i].path, (uint64_t)all.v[i].size, all.v[i].mtime, T_CHECK, 0);
		all.v[i].path = NULL;	/* the target's now */
	}
	ifiles_release(&all);
	return 0;
}

/* What the changed directories hold: new or changed files, and candidates.  Returns 0 or -1. */
static int add_relisted(struct dplan *dp)
{
	sqlite3_stmt *look = NULL;
	size_t i;

	if (dp->list.files_nr &&
	    sqlite3_prepare_v2(index_db(dp->ix), "SELECT size, mtime FROM files WHERE path = ?1", -1, &look,
			       NULL) != SQLITE_OK)
		return -1;
	for (i = 0; i < dp->list.files_nr; i++) {
		struct walk_file *f = &dp->list.files[i];
		int read = 1;

		if (!in_scope(dp->sc, f->path))
			continue;
		if (!is_racy(&dp->d, f->path) && !is_candidate(dp, f->path)) {
			sqlite3_bind_text(look, 1, f->path, -1, SQLITE_STATIC);
			if (sqlite3_step(look) == SQLITE_ROW &&
			    sqlite3_column_int64(look, 0) == (int64_t)f->size &&
			    sqlite3_column_int64(look, 1) == f->mtime)
				read = 0;	/* indexed as it is, and ruled out */
			sqlite3_reset(look);
		}
		if (read)
			add_target(dp->ts, dp->q, f->path, f->size, f->mtime, T_READ, 0);
	}
	sqlite3_finalize(look);
	return 0;
}

/* The targets, once the directories are checked and the candidates known.  Returns 0, 1 or -1. */
static int dir_plan(struct dplan *dp, struct walker *w, int rootfd)
{
	const struct search_opts *o = &dp->q->o;
	struct plan_stats *ps = dp->ps;
	int64_t t0 = now_ns(), t1;

	relist(w, &dp->d, dp->sc, &dp->list);
	ps->relisted = dp->list.files_nr;
	if (w->repo && !o->walk.no_ignore && new_rules(dp->ix, rootfd, &dp->list))
		return 1;	/* a new .gitignore: its rules reach below */
	t1 = now_ns();
	ps->t_tree += secs(t0, t1);

	add_candidates(dp);
	if (o->check == SEARCH_CHECK_FILES && (dp->d.served ? add_served_checks(dp) : add_checks(dp)) < 0)
		return -1;
	if (add_relisted(dp) < 0)
		return -1;
	t0 = now_ns();
	ps->t_tree += secs(t1, t0);
	/*
	 * Checked, then sorted: the list holds every indexed file (in path
	 * order, which keeps each directory's files together for dir_stat), of
	 * which few are left to read.  A path listed twice (a racy file that is
	 * also checked) is read if either says so.
	 */
	check_targets(dp->ts, rootfd, o, 0, &ps->checked, &ps->unchanged);
	targets_sort(dp->ts);
	ps->t_check = secs(t0, now_ns());
	return 0;
}

/*
 * The files to search, checking the tree by its directories (see above): the
 * candidates and racy files in unchanged directories; what the changed ones
 * hold that is new, changed or a candidate; with --check files, every other
 * indexed file in an unchanged directory, to be stat'ed.
 */
int dir_targets(struct search *q, struct ci_index *ix, struct walker *w, int rootfd, const char *query,
		const struct scope *sc, struct targets *ts, struct plan_stats *ps)
{
	struct dplan dp = { .q = q, .ix = ix, .sc = sc, .ts = ts, .ps = ps, .dir = BUF_INIT };
	int64_t t0 = now_ns(), t1;
	int rc = 1;

	if (idirs_load(q, ix, rootfd, sc, q->o.threads, &dp.d, &ps->dirs_changed))
		goto done;
	ps->dirs = dp.d.nr;
	ps->all_clean = dp.d.all_clean;
	t1 = now_ns();
	ps->t_tree = secs(t0, t1);
	rc = dir_candidates(&dp, query);
	if (rc < 0)
		goto done;
	ps->t_query = secs(t1, now_ns());
	rc = dir_plan(&dp, w, rootfd);
done:
	ifiles_release(&dp.cand);
	walk_list_release(&dp.list);
	idirs_release(&dp.d);
	buf_release(&dp.dir);
	return rc;
}
