/*
 * search/select.c: which files a search reads: -g's globs, -t's languages,
 * the scope of the paths given (and how their files' paths are written), the
 * hidden and .ignore rules the index's files are checked against, and the
 * walk of the whole tree in a thread of its own while it is searched.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/plan.h"
#include "parse/lang.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

static int filtered_out(const struct search *q, const char *path);

int lang_wanted(const struct search_opts *o, const struct lang *l)
{
	size_t i;

	for (i = 0; i < o->langs_nr; i++)
		if (o->langs[i] == l)
			return 1;
	return 0;
}


/* ---- choosing the files: globs, languages, paths ---- */

#define glob_match walk_glob_match	/* gitignore's globs (walk.h) */

/*
 * Does glob g select path?  A glob without '/' is matched against the file's
 * name and each directory's name; one with '/' against the whole path and each
 * leading directory path.
 */
static int glob_selects(const struct search_glob *g, const char *path)
{
	const char *p = path, *slash;
	char *part;
	int hit = 0;

	if (!g->has_slash) {
		for (;;) {
			slash = strchr(p, '/');
			part = slash ? xstrndup(p, (size_t)(slash - p)) : (char *)p;
			hit = glob_match(g->pat, part);
			if (slash)
				free(part);
			if (hit || !slash)
				return hit;
			p = slash + 1;
		}
	}
	if (glob_match(g->pat, path))
		return 1;
	for (slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
		part = xstrndup(path, (size_t)(slash - path));
		hit = glob_match(g->pat, part);
		free(part);
		if (hit)
			return 1;
	}
	return 0;
}

/* Do the -g globs let path through? */
static int globs_pass(const struct search_opts *o, const char *path)
{
	size_t i;
	int included = !o->globs_include;

	for (i = 0; i < o->globs_nr; i++) {
		if (o->globs[i].exclude) {
			if (glob_selects(&o->globs[i], path))
				return 0;
		} else if (!included && glob_selects(&o->globs[i], path)) {
			included = 1;
		}
	}
	return included;
}

/*
 * Do the -t languages let path through?  0 no, 1 yes, 2 only the content can
 * tell (no language from the name: a shebang line may give one).
 */
static int langs_pass(const struct search_opts *o, const char *path)
{
	const struct lang *l;

	if (!o->langs_nr)
		return 1;
	l = lang_detect(path, NULL, 0);
	if (!l)
		return 2;
	return lang_wanted(o, l);
}

/*
 * Add a file if the filters let it through; path is malloc'd: taken, or freed.
 * Returns the target added, or NULL.
 */
struct target *add_target_own(struct targets *ts, const struct search *q, char *path, uint64_t size,
			      int64_t mtime, int mode, int explicit_)
{
	const struct search_opts *o = &q->o;
	int lp;
	struct target *t;

	if (!explicit_ && (!globs_pass(o, path) || (q->filter && filtered_out(q, path)))) {
		free(path);
		return NULL;
	}
	lp = langs_pass(o, path);
	if (!lp) {
		free(path);
		return NULL;
	}
	ALLOC_GROW(ts->v, ts->nr + 1, ts->alloc);
	t = &ts->v[ts->nr++];
	t->path = path;
	t->plan = NULL;
	t->size = size;
	t->mtime = mtime;
	t->mode = (unsigned char)mode;
	t->explicit_ = (unsigned char)explicit_;
	t->need_lang = lp == 2;
	return t;
}

/* The same with path copied. */
struct target *add_target(struct targets *ts, const struct search *q, const char *path, uint64_t size,
			  int64_t mtime, int mode, int explicit_)
{
	return add_target_own(ts, q, xstrdup(path), size, mtime, mode, explicit_);
}

void targets_release(struct targets *ts)
{
	size_t i;

	for (i = 0; i < ts->nr; i++) {
		free(ts->v[i].path);
		free(ts->v[i].plan);
	}
	free(ts->v);
	memset(ts, 0, sizeof(*ts));
}

/*
 * Is path one a walk from the path given that holds it would not reach?  The
 * index holds hidden files and follows git's rules only: its files are checked
 * against the walker's hidden and .ignore rules, below the path given.
 * NEEDSWORK: a '!' rule of a .ignore or .rgignore brings back a file that git's
 * rules leave out; the index does not hold it, so an indexed search misses it
 * (a scan, --no-index, finds it).
 */
static int filtered_out(const struct search *q, const char *path)
{
	const struct scope *sc = q->scope;
	long i = sc && sc->nr ? scope_find(sc, path) : -1;
	size_t from = 0;

	if (i >= 0 && *sc->rel[i])
		from = strlen(sc->rel[i]) + 1;
	if (from > strlen(path))
		return 0;	/* the file named */
	return walker_path_excluded(q->filter, path, from);
}

int in_scope(const struct scope *sc, const char *path)
{
	size_t i, l;

	if (!sc->nr)
		return 1;
	for (i = 0; i < sc->nr; i++) {
		l = strlen(sc->rel[i]);
		if (!l)
			return 1;
		if (sc->is_dir[i] && !strncmp(path, sc->rel[i], l) && path[l] == '/')
			return 1;
	}
	return 0;
}

/* The walker's list for the scope, as targets to read. */
int walk_targets(struct walker *w, const struct search *q, const struct scope *sc, struct targets *ts,
		 struct walk_list *list)
{
	size_t i;
	int errors = 0;

	if (!sc->nr)
		walker_walk(w, "", 0, list);
	for (i = 0; i < sc->nr; i++)
		if (walker_walk(w, sc->rel[i], !sc->is_dir[i], list) < 0)
			errors++;
	walk_list_finish(list);
	for (i = 0; i < list->files_nr; i++)
		add_target(ts, q, list->files[i].path, list->files[i].size, list->files[i].mtime,
			   T_READ, list->files[i].explicit_);
	return errors;
}

/* ---- listing the whole tree while it is searched ---- */

/*
 * The walk of a large tree takes a good part of a search (a third of it on the
 * Linux tree), so the tree is walked in a thread of its own, one top-level entry
 * at a time, and each entry's files are handed to the workers as soon as they
 * are listed.  Entries are taken in the order of their paths ("arch-x" before
 * "arch/"), so the concatenated lists are sorted as one walk's would be.
 *
 * NEEDSWORK: the top level is filtered here by walk_dir()'s rules (private,
 * vendored and ignored directories, ignored files); walk.c could offer "walk
 * this entry as its parent would" so that the rules live in one place.
 */
struct unit {
	char *rel;		/* the entry, root-relative */
	char *key;		/* rel, plus '/' for a directory: the sort key */
};

static int cmp_unit(const void *a, const void *b)
{
	return strcmp(((const struct unit *)a)->key, ((const struct unit *)b)->key);
}

/* The top-level entries of the tree worth walking, sorted. */
static size_t top_units(struct walker *w, int rootfd, struct unit **out)
{
	static const char *const private_dirs[] = { ".git", ".hg", ".svn", ".ci-index" };
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct unit *u = NULL;
	size_t nr = 0, alloc = 0, k;
	struct stat st;
	char *probe;

	if (!d) {
		if (fd >= 0)
			close(fd);
		*out = NULL;
		return 0;
	}
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		int is_dir, skip = 0;

		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]) || w->opts.skip_hidden))
			continue;
		if (fstatat(rootfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		is_dir = S_ISDIR(st.st_mode);
		if (is_dir) {
			for (k = 0; k < ARRAY_SIZE(private_dirs); k++)
				if (!strcmp(name, private_dirs[k]))
					skip = 1;
			probe = xasprintf("%s/x", name);
			if (!w->opts.include_vendored && walk_is_vendored_path(probe))
				skip = 1;
			free(probe);
		} else if (!S_ISREG(st.st_mode)) {
			skip = 1;	/* symbolic links, special files */
		}
		if (skip || walker_is_ignored(w, name, is_dir))
			continue;
		ALLOC_GROW(u, nr + 1, alloc);
		u[nr].rel = xstrdup(name);
		u[nr].key = is_dir ? xasprintf("%s/", name) : xstrdup(name);
		nr++;
	}
	closedir(d);
	if (nr)
		qsort(u, nr, sizeof(*u), cmp_unit);
	*out = u;
	return nr;
}

/* Hand the files of a sorted list to the workers. */
static void publish(struct job *jb, const struct walk_list *list)
{
	struct targets loc = { 0 };
	size_t i;

	for (i = 0; i < list->files_nr; i++)
		add_target(&loc, jb->q, list->files[i].path, list->files[i].size, list->files[i].mtime,
			   T_READ, list->files[i].explicit_);
	pthread_mutex_lock(&jb->lock);
	ALLOC_GROW(jb->ts->v, jb->ts->nr + loc.nr, jb->ts->alloc);
	if (loc.nr)
		memcpy(jb->ts->v + jb->ts->nr, loc.v, loc.nr * sizeof(*loc.v));
	jb->ts->nr += loc.nr;
	jb->avail = jb->ts->nr;
	if (jb->workers_wait)
		pthread_cond_broadcast(&jb->work_cond);
	pthread_cond_signal(&jb->done_cond);
	pthread_mutex_unlock(&jb->lock);
	free(loc.v);	/* the paths now belong to jb->ts */
}

void *search_lister(void *arg)
{
	struct job *jb = arg;
	struct unit *u;
	size_t nr = top_units(jb->w, jb->rootfd, &u), i;

	for (i = 0; i < nr; i++) {
		struct walk_list sub = { 0 };

		walker_walk(jb->w, u[i].rel, 0, &sub);
		walk_list_finish(&sub);
		publish(jb, &sub);
		walk_list_release(&sub);
		free(u[i].rel);
		free(u[i].key);
	}
	free(u);
	pthread_mutex_lock(&jb->lock);
	jb->listed = 1;
	pthread_cond_broadcast(&jb->work_cond);
	pthread_cond_broadcast(&jb->done_cond);
	pthread_mutex_unlock(&jb->lock);
	return NULL;
}

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->mode - (int)y->mode;	/* T_READ first */
}

/* Sort the targets by path, one per path (T_READ wins). */
void targets_sort(struct targets *ts)
{
	size_t i, j = 0;

	if (ts->nr)
		qsort(ts->v, ts->nr, sizeof(*ts->v), cmp_target);
	for (i = 0; i < ts->nr; i++) {
		if (j && !strcmp(ts->v[j - 1].path, ts->v[i].path)) {
			/* read whole if either says so (a racy file is never read by parts) */
			if (!ts->v[i].plan || !ts->v[j - 1].plan) {
				free(ts->v[j - 1].plan);
				ts->v[j - 1].plan = NULL;
			}
			free(ts->v[i].path);
			free(ts->v[i].plan);
			continue;
		}
		ts->v[j++] = ts->v[i];
	}
	ts->nr = j;
}
