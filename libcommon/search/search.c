/*
 * search/search.c: a query (search.h) opened, and run over the trees of the
 * paths given: for each tree, the walker opened, the scope of its paths, the
 * index opened if there is one for it, the files chosen (plan.c, dirs.c, or
 * the walk in select.c), read and written (read.c), and --stats reported.
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"
#include "search/plan.h"

#include <fcntl.h>
#include <sys/stat.h>

void search_opts_init(struct search_opts *o)
{
	struct walk_opts wo = WALK_OPTS_INIT;

	memset(o, 0, sizeof(*o));
	o->walk = wo;
	o->walk.skip_hidden = 1;	/* rg's defaults */
	o->walk.ignore_files = 1;
	o->threads = online_cpus();
	o->match_limit = SEARCH_MATCH_LIMIT;
	o->file_budget_ms = SEARCH_FILE_BUDGET_MS;
}

int search_open(struct search **out, const struct search_opts *opts)
{
	struct search *q = xcalloc(1, sizeof(*q));
	struct search_opts *o = &q->o;
	size_t i;

	*out = NULL;
	*o = *opts;
	if (o->replace && (o->list_files || o->invert))
		o->replace = NULL;	/* nothing to replace (rg ignores it too) */
	o->all_files = o->invert || o->files_without || o->list_files;
	o->trust_index = o->check == SEARCH_CHECK_NONE;
	/* -a: binary files, which an index leaves out, are walked to */
	o->walk_default = o->walk.max_filesize == WALK_DEFAULT_MAX_FILESIZE && !o->walk.include_vendored &&
			  !o->walk.no_ignore && !o->text && !o->binary;
	if ((o->json && (o->count || o->files_only)) || o->files_without || o->quiet || o->list_files ||
	    (o->only && !o->invert && o->json))
		o->before = o->after = 0;	/* no lines are written, or (-o) only matches */
	o->globs_include = 0;
	for (i = 0; i < o->globs_nr; i++)
		if (!o->globs[i].exclude)
			o->globs_include = 1;
	q->out = stdout;
	q->err = stderr;
	q->m = xmalloc(sizeof(*q->m));
	if (matcher_init(q->m, o, o->match_limit ? o->match_limit : 1, o->file_budget_ms) < 0) {
		search_close(q);
		return -1;
	}
	*out = q;
	return 0;
}

void search_close(struct search *q)
{
	if (!q)
		return;
	if (q->m)
		matcher_release(q->m);
	free(q->m);
	free(q);
}

const char *search_kind_name(const struct search *q)
{
	static const char *const kinds[] = { "literal", "prefilter", "regex", "regex by line", "no" };

	return kinds[q->m->kind];
}

const char *search_literal(const struct search *q)
{
	return q->m->literal;
}

const char *search_trigram_need(const struct search *q)
{
	if (!q->o.trust_index || !q->o.walk_default || q->o.all_files)
		return NULL;
	return q->m->info.query;
}

/* The scope of the paths args[0..nr) in the tree of w: returns the paths that failed. */
static int scope_open(struct scope *sc, struct walker *w, int rootfd, char **args, size_t nr, int whole)
{
	char *here = NULL;
	int errors = 0;
	size_t i;

	sc->given = nr > 0;
	sc->rel = xcalloc(nr + 1, sizeof(*sc->rel));
	sc->is_dir = xcalloc(nr + 1, sizeof(*sc->is_dir));
	sc->disp = xcalloc(nr + 1, sizeof(*sc->disp));
	for (i = 0; i < nr; i++) {
		struct stat st;

		if (walker_relpath(w, args[i], &sc->rel[sc->nr]) < 0) {
			errors++;
			continue;
		}
		sc->is_dir[sc->nr] = !*sc->rel[sc->nr] ||
			(fstatat(rootfd, sc->rel[sc->nr], &st, 0) == 0 && S_ISDIR(st.st_mode));
		sc->disp[sc->nr] = args[i];
		sc->nr++;
	}
	if (!nr && !whole && walker_relpath(w, ".", &here) == 0 && *here) {
		/* below the root: the current directory, paths written relative to it */
		sc->rel[0] = here;
		here = NULL;
		sc->is_dir[0] = 1;
		sc->disp[0] = "";
		sc->nr = 1;
	}
	free(here);
	return errors;
}

static void scope_release(struct scope *sc)
{
	size_t i;

	for (i = 0; i < sc->nr; i++)
		free(sc->rel[i]);
	free(sc->rel);
	free(sc->is_dir);
	free(sc->disp);
}

/*
 * The index of the tree at w, unless told not to: 0 with it in *ix (NULL when
 * there is none to use, after a warning saying why), -1 when the one named
 * with --index does not exist.  *ipath: its path (malloc'd).
 */
static int index_for(struct search *q, const struct walker *w, int own_index, char **ipath,
		     struct ci_index **ix)
{
	const struct search_opts *o = &q->o;
	int rc;

	*ix = NULL;
	*ipath = NULL;
	if (o->no_index)
		return 0;
	/* another tree's index is its own: --index and $CI_INDEX are this tree's */
	*ipath = !own_index ? index_own_path(w->root) :
		o->index ? xstrdup(o->index) : index_default_path(w->root);
	q->index_path = *ipath;
	if (o->index_handle && own_index && o->index) {
		*ix = o->index_handle;
		rc = 0;
	} else {
		rc = index_open(ix, *ipath, INDEX_READONLY);
	}
	if (rc == 1 && o->index && own_index)
		return error("no index at '%s' (ci-index build makes one)", *ipath);
	if (rc < 0)
		warning("searching without the index");
	if (rc == 0 && strcmp(index_root(*ix), w->root)) {
		warning("the index '%s' is for '%s', not '%s': searching without it", *ipath,
			index_root(*ix), w->root);
		if (*ix != o->index_handle)
			index_close(*ix);
		*ix = NULL;
	}
	if (*ix && index_meta(*ix, "snapshot") && *index_meta(*ix, "snapshot")) {
		/* a commit's files, not the work tree's: its answers would be another tree's */
		warning("the index '%s' is a snapshot of %s: searching the working tree without it",
			*ipath, index_meta(*ix, "snapshot"));
		if (*ix != o->index_handle)
			index_close(*ix);
		*ix = NULL;
	}
	return 0;
}

/* --stats: what was read and how long it took, on q->err. */
static void print_stats(const struct search *q, const struct job *jb, const struct plan_stats *ps,
			const struct targets *ts, int indexed, int64_t t0, int64_t t1, int64_t t2)
{
	FILE *err = q->err;
	const char *lit = q->m->literal;

	fflush(q->out);
	fprintf(err, "%s: %s: %zu files to read%s", progname, ps->mode, ts->nr, ps->walked ? " (walked)" : "");
	if (indexed)
		fprintf(err, ", %zu indexed, %zu trigram candidates%s, %lu stat'ed (%lu unchanged)",
			ps->indexed, ps->candidates, ps->served ? " (the server's)" : "", ps->checked, ps->unchanged);
	fprintf(err, ", %lu read (%.1f MB, %lu by parts); %s search%s%s%s; list %.3f s, search %.3f s,"
		" total %.3f s\n", jb->n_read, (double)jb->bytes / 1e6, jb->n_parts, search_kind_name(q),
		lit ? " for '" : "", lit ? lit : "", lit ? "'" : "", secs(t0, t1), secs(t1, t2), secs(t0, t2));
	if (indexed)
		fprintf(err, "%s: index: file list %.3f s, trigram query %.3f s, directories %.3f s,"
			" files checked %.3f s\n", progname, ps->t_files, ps->t_query, ps->t_tree, ps->t_check);
	if (indexed && ps->dirs)
		fprintf(err, "%s: directories: %zu recorded, %zu changed, %zu files in them\n",
			progname, ps->dirs, ps->dirs_changed, ps->relisted);
	else if (indexed && ps->all_clean)
		fprintf(err, "%s: directories: none changed (the index's server saw nothing happen)\n", progname);
	if (ps->query)
		fprintf(err, "%s: trigram query: %s\n", progname, ps->query);
}

/* Read and search the targets (stream: while the lister walks the whole tree). */
static int search_targets(struct search *q, struct walker *w, int rootfd, struct targets *ts, int stream,
			  struct job *jb)
{
	const struct search_opts *o = &q->o;
	int threads, ret;

	memset(jb, 0, sizeof(*jb));
	jb->q = q;
	jb->o = o;
	jb->m = q->m;
	jb->w = w;
	jb->rootfd = rootfd;
	jb->ts = ts;
	/* context lines may lie outside the parts: files are read whole for them */
	jb->parts = q->m->line_local && !o->before && !o->after && !o->all_files;
	jb->avail = ts->nr;
	jb->listed = !stream;
	pthread_mutex_init(&jb->lock, NULL);
	pthread_cond_init(&jb->work_cond, NULL);
	pthread_cond_init(&jb->done_cond, NULL);
	threads = o->threads;
	if (!stream && threads > (int)ts->nr)
		threads = ts->nr ? (int)ts->nr : 1;
	ret = search_run(jb, threads, !o->json && !o->count && !o->files_only && (o->before || o->after), stream);
	pthread_mutex_destroy(&jb->lock);
	pthread_cond_destroy(&jb->work_cond);
	pthread_cond_destroy(&jb->done_cond);
	return ret;
}

/* The tree's files: the index's, else the walk's; *stream: listed while searched. */
static int choose_targets(struct search *q, struct ci_index *ix, struct walker *w, int rootfd,
			  const struct scope *sc, struct targets *ts, struct walk_list *list,
			  struct plan_stats *ps, int *stream)
{
	const struct search_opts *o = &q->o;
	int errors = 0;

	ps->mode = "scan";
	*stream = 0;
	/* the index holds hidden files, and follows no .ignore file */
	q->filter = ix && (o->walk.skip_hidden || o->walk.ignore_files) ? w : NULL;
	if (ix && index_targets(q, ix, w, rootfd, sc, ts, ps) == 0) {
		ps->mode = "index";
		return 0;
	}
	q->filter = NULL;
	if (ix)
		warning("searching without the index");
	targets_release(ts);
	ps->walked = 1;
	/* the whole tree is listed while it is searched; paths named, first */
	if (sc->nr)
		errors += walk_targets(w, q, sc, ts, list);
	else
		*stream = 1;	/* only files from directories matter: no stat for what readdir types */
	w->opts.lazy_stat = *stream;
	return errors;
}

int search_tree(struct search *q, const char *start, char **args, size_t nr, int own_index)
{
	struct walker w;
	struct targets ts = { 0 };
	struct walk_list list = { 0 };
	struct scope sc = { 0 };
	struct plan_stats ps;
	struct ci_index *ix = NULL;
	struct job jb;
	int ret = EXIT_OK, errors, rootfd, stream;
	int64_t t0 = now_ns(), t1, t2;
	char *ipath = NULL;

	memset(&ps, 0, sizeof(ps));
	if (q->o.walker_handle) {
		w = *q->o.walker_handle;
		w.opts = q->o.walk;
	} else if (walker_open(&w, start, &q->o.walk) < 0) {
		return SEARCH_EXIT_ERROR;
	}
	rootfd = open(w.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		error_errno("cannot open '%s'", w.root);
		if (!q->o.walker_handle)
			walker_close(&w);
		return SEARCH_EXIT_ERROR;
	}
	errors = scope_open(&sc, &w, rootfd, args, nr, q->o.whole_tree);
	q->scope = &sc;
	if (sc.given && !sc.nr) {
		ret = SEARCH_EXIT_ERROR;	/* no path given exists: nothing to search */
		goto out;
	}
	if (index_for(q, &w, own_index, &ipath, &ix) < 0) {
		ret = SEARCH_EXIT_ERROR;
		goto out;
	}
	errors += choose_targets(q, ix, &w, rootfd, &sc, &ts, &list, &ps, &stream);
	t1 = now_ns();
	ret = search_targets(q, &w, rootfd, &ts, stream, &jb);
	t2 = now_ns();
	if (errors && ret != SEARCH_EXIT_ERROR)
		ret = SEARCH_EXIT_ERROR;
	if (q->o.stats)
		print_stats(q, &jb, &ps, &ts, ix != NULL, t0, t1, t2);
out:
	free(ps.query);
	if (ix && ix != q->o.index_handle)
		index_close(ix);
	q->index_path = NULL;
	free(ipath);
	scope_release(&sc);
	q->scope = NULL;
	q->filter = NULL;
	targets_release(&ts);
	walk_list_release(&list);
	close(rootfd);
	if (q->o.walker_handle) {
		w.opts = q->o.walker_handle->opts;
		*q->o.walker_handle = w;	/* with what it read */
	} else {
		walker_close(&w);
	}
	return ret;
}

/* The paths given that lie in one tree. */
struct tree {
	char *root;		/* its root, absolute */
	char **args;		/* the paths as given */
	size_t nr, alloc;
};

/*
 * The root of the tree that holds the path p as given (a repository's work
 * tree, or the directory itself outside any), malloc'd; here is the current
 * directory's tree, taken for the paths inside it without asking libgit2.
 * NULL after reporting when p does not exist (*errors counts it).
 */
static char *tree_root_of(const char *p, const char *here, int *errors)
{
	char *real = realpath(p, NULL), *dir, *slash, *root = NULL;
	struct stat st;
	struct walker tw;
	struct walk_opts wo = WALK_OPTS_INIT;
	size_t hl = here ? strlen(here) : 0;

	if (!real || stat(real, &st) < 0) {
		error_errno("cannot open '%s'", p);
		free(real);
		(*errors)++;
		return NULL;
	}
	if (here && (!strcmp(real, here) || (!strncmp(real, here, hl) && (real[hl] == '/' || !strcmp(here, "/"))))) {
		free(real);
		return xstrdup(here);
	}
	dir = real;
	if (!S_ISDIR(st.st_mode)) {
		slash = strrchr(real, '/');
		if (slash == real)
			slash[1] = '\0';	/* "/passwd": the root directory */
		else
			*slash = '\0';
	}
	if (walker_open(&tw, dir, &wo) == 0) {
		root = xstrdup(tw.root);
		walker_close(&tw);
	} else {
		(*errors)++;
	}
	free(real);
	return root;
}

/* The trees of the paths given, each with the paths given in it; *errors counts those that do not exist. */
static size_t group_trees(char **paths, size_t nr, const char *here, struct tree **out,
			  int *errors)
{
	struct tree *trees = NULL;
	size_t trees_nr = 0, trees_alloc = 0, i, k;

	for (i = 0; i < nr; i++) {
		/* outside a repository, a path below may be in one: ask for each */
		char *root = tree_root_of(paths[i], here, errors);
		if (!root)
			continue;
		for (k = 0; k < trees_nr && strcmp(trees[k].root, root); k++)
			;
		if (k == trees_nr) {
			ALLOC_GROW(trees, trees_nr + 1, trees_alloc);
			memset(&trees[k], 0, sizeof(trees[k]));
			trees[k].root = root;
			trees_nr++;
		} else {
			free(root);
		}
		ALLOC_GROW(trees[k].args, trees[k].nr + 1, trees[k].alloc);
		trees[k].args[trees[k].nr++] = paths[i];
	}
	*out = trees;
	return trees_nr;
}

int search_paths(struct search *q, char **paths, size_t nr)
{
	struct tree *trees;
	struct walker hw;
	size_t trees_nr, k;
	char *here = NULL;
	int any_ok = 0, any_error = 0, here_repo = 0, errors = 0, rc;

	q->wrote = 0;
	if (!nr)
		return search_tree(q, ".", NULL, 0, 1);
	if (walker_open(&hw, ".", &q->o.walk) == 0) {
		here = xstrdup(hw.root);
		here_repo = hw.repo != NULL;
		walker_close(&hw);
	}
	trees_nr = group_trees(paths, nr, here_repo ? here : NULL, &trees, &errors);
	for (k = 0; k < trees_nr; k++) {
		int own = here && !strcmp(trees[k].root, here);
		rc = search_tree(q, own ? "." : trees[k].root, trees[k].args, trees[k].nr, own);
		any_ok |= rc == EXIT_OK;
		any_error |= rc == SEARCH_EXIT_ERROR;
		free(trees[k].root);
		free(trees[k].args);
	}
	free(trees);
	free(here);
	return any_error || errors ? SEARCH_EXIT_ERROR : any_ok ? EXIT_OK : EXIT_NOTHING;
}
