/*
 * githist.c: walking the first-parent history of a repository (see githist.h).
 *
 * Where the time goes: listing commit ids is cheap (one object read each); the
 * diff of a commit against its first parent costs two tree reads per changed
 * directory, and counting lines costs reading and diffing both versions of every
 * changed file, which is most of the work.  So the ids are listed first, and the
 * diffs are spread over threads, each with its own git_repository (libgit2 objects
 * are not shared between threads), their results handed back in order through a
 * ring of slots.
 */
#include "common.h"
#include "githist.h"

#include <pthread.h>

int hist_git_error(const char *what)
{
	const git_error *e = git_error_last();

	return error("%s: %s", what, e && e->message ? e->message : "unknown libgit2 error");
}

void hist_commit_release(struct hist_commit *c)
{
	size_t i;

	for (i = 0; i < c->files_nr; i++) {
		free(c->files[i].path);
		free(c->files[i].old_path);
	}
	free(c->files);
	free(c->author);
	free(c->email);
	free(c->message);
	memset(c, 0, sizeof(*c));
}

static int cmp_file(const void *a, const void *b)
{
	const struct hist_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static char status_letter(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
	case GIT_DELTA_COPIED:
		return 'A';
	case GIT_DELTA_DELETED:
		return 'D';
	case GIT_DELTA_RENAMED:
		return 'R';
	default:
		return 'M';
	}
}

/*
 * Read one commit and diff it against its first parent into *out.  On failure the
 * libgit2 message is returned in *err (malloc'd) and -1; nothing is printed, so
 * that workers do not interleave their messages with the output.
 */
static int read_commit(git_repository *repo, const git_oid *id, const struct hist_opts *o,
		       struct hist_commit *out, char **err)
{
	git_commit *c = NULL, *p = NULL;
	git_tree *t = NULL, *pt = NULL;
	git_diff *d = NULL;
	git_diff_options dopt;
	git_diff_find_options fopt;
	const git_signature *sig;
	const char *msg, *what = "cannot read commit";
	size_t i, n, ml;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	git_oid_tostr(out->sha, sizeof(out->sha), id);
	if (git_commit_lookup(&c, repo, id) < 0)
		goto done;
	out->time = (int64_t)git_commit_time(c);
	sig = git_commit_author(c);
	out->author = xstrdup(sig && sig->name ? sig->name : "");
	out->email = xstrdup(sig && sig->email ? sig->email : "");
	msg = git_commit_message(c);
	msg = msg ? msg : "";
	ml = strlen(msg);
	while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' ' || msg[ml - 1] == '\t' ||
		      msg[ml - 1] == '\r'))
		ml--;
	out->message = xstrndup(msg, ml);
	out->parents = (int)git_commit_parentcount(c);

	what = "cannot read tree";
	if (git_commit_tree(&t, c) < 0)
		goto done;
	if (out->parents > 0 && (git_commit_parent(&p, c, 0) < 0 || git_commit_tree(&pt, p) < 0))
		goto done;
	what = "cannot diff commit";
	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopt, GIT_DIFF_FIND_OPTIONS_VERSION);
	dopt.context_lines = 0;
	dopt.interhunk_lines = 0;
	if (git_diff_tree_to_tree(&d, repo, pt, t, &dopt) < 0)
		goto done;
	fopt.flags = GIT_DIFF_FIND_RENAMES;
	if (git_diff_num_deltas(d) > 1 && git_diff_find_similar(d, &fopt) < 0)
		goto done;

	n = git_diff_num_deltas(d);
	out->files = xcalloc(n ? n : 1, sizeof(*out->files));
	out->files_alloc = n ? n : 1;
	for (i = 0; i < n; i++) {
		const git_diff_delta *dl = git_diff_get_delta(d, i);
		struct hist_file *f = &out->files[out->files_nr];

		if (dl->status == GIT_DELTA_UNMODIFIED || dl->status == GIT_DELTA_IGNORED ||
		    dl->status == GIT_DELTA_UNTRACKED || dl->status == GIT_DELTA_UNREADABLE)
			continue;
		f->status = status_letter(dl->status);
		if (f->status == 'D')
			f->path = xstrdup(dl->old_file.path);
		else
			f->path = xstrdup(dl->new_file.path);
		if (f->status == 'R')
			f->old_path = xstrdup(dl->old_file.path);
		f->added = f->deleted = -1;
		if (o->lines) {
			git_patch *patch = NULL;
			size_t adds = 0, dels = 0;

			if (git_patch_from_diff(&patch, d, i) < 0) {
				out->files_nr++;
				goto done;
			}
			if (patch)
				git_patch_line_stats(NULL, &adds, &dels, patch);
			if ((patch && (git_patch_get_delta(patch)->flags & GIT_DIFF_FLAG_BINARY)) ||
			    (dl->flags & GIT_DIFF_FLAG_BINARY))
				f->binary = 1;
			f->added = (long)adds;
			f->deleted = (long)dels;
			git_patch_free(patch);
		}
		out->files_nr++;
	}
	qsort(out->files, out->files_nr, sizeof(*out->files), cmp_file);
	out->huge = o->max_files > 0 && (long)out->files_nr > o->max_files;
	ret = 0;
done:
	if (ret < 0) {
		const git_error *e = git_error_last();
		*err = xasprintf("%s %s: %s", what, out->sha,
				 e && e->message ? e->message : "unknown libgit2 error");
		git_error_clear();
	}
	git_diff_free(d);
	git_tree_free(pt);
	git_tree_free(t);
	git_commit_free(p);
	git_commit_free(c);
	return ret;
}

/* ---- listing the commits ---- */

/* The ids of the commits to read, newest first, in *ids (malloc'd). */
static int list_commits(git_repository *repo, const struct hist_opts *o, git_oid **ids, size_t *nr)
{
	git_revwalk *walk = NULL;
	git_oid id;
	size_t alloc = 0;
	int rc, ret = -1;

	*ids = NULL;
	*nr = 0;
	if (git_revwalk_new(&walk, repo) < 0)
		return hist_git_error("cannot walk history");
	rc = git_revwalk_push_head(walk);
	if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
		git_error_clear();
		ret = 0;	/* no commit yet */
		goto done;
	}
	if (rc < 0) {
		hist_git_error("cannot read HEAD");
		goto done;
	}
	git_revwalk_simplify_first_parent(walk);
	if (o->stop && git_revwalk_hide(walk, o->stop) < 0) {
		hist_git_error("cannot walk history");
		goto done;
	}
	while ((rc = git_revwalk_next(&id, walk)) == 0) {
		if (o->max_commits > 0 && (long)*nr >= o->max_commits)
			break;
		if (o->since != HIST_NO_SINCE) {
			git_commit *c;
			int64_t t;

			if (git_commit_lookup(&c, repo, &id) < 0) {
				hist_git_error("cannot read commit");
				goto done;
			}
			t = (int64_t)git_commit_time(c);
			git_commit_free(c);
			if (t < o->since)
				break;
		}
		ALLOC_GROW(*ids, *nr + 1, alloc);
		(*ids)[(*nr)++] = id;
	}
	if (rc < 0 && rc != GIT_ITEROVER) {
		hist_git_error("cannot walk history");
		goto done;
	}
	git_error_clear();
	ret = 0;
done:
	git_revwalk_free(walk);
	if (ret < 0) {
		free(*ids);
		*ids = NULL;
		*nr = 0;
	}
	return ret;
}

/* ---- diffing in parallel ---- */

enum { SLOT_EMPTY, SLOT_DONE, SLOT_FAILED };

struct slot {
	struct hist_commit c;	/* the result */
	char *err;		/* the message when it failed */
	int state;		/* SLOT_* */
};

struct pool {
	git_repository *repo;		/* the caller's handle (used by one thread only) */
	const char *gitdir;		/* to open one handle per worker */
	const struct hist_opts *o;	/* options */
	const git_oid *ids;		/* what to read, newest first */
	size_t nr;			/* how many */
	struct slot *slots;		/* ring: commit i in slots[i % window] */
	size_t window;			/* ring size: how far workers may run ahead */
	size_t next;			/* next commit a worker takes */
	size_t consumed;		/* commits handed to the callback */
	int stop;			/* the consumer has stopped */
	pthread_mutex_t lock;		/* guards next, consumed, stop and slot states */
	pthread_cond_t done;		/* a slot was filled */
	pthread_cond_t room;		/* a slot was emptied, or stop */
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	git_repository *repo = NULL;
	char *open_err = NULL;

	if (git_repository_open_ext(&repo, p->gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		const git_error *e = git_error_last();
		open_err = xasprintf("cannot open repository '%s': %s", p->gitdir,
				     e && e->message ? e->message : "unknown libgit2 error");
		repo = NULL;
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		size_t i;
		struct hist_commit c;
		char *err = NULL;
		int rc;

		while (!p->stop && p->next < p->nr && p->next >= p->consumed + p->window)
			pthread_cond_wait(&p->room, &p->lock);
		if (p->stop || p->next >= p->nr)
			break;
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (repo) {
			rc = read_commit(repo, &p->ids[i], p->o, &c, &err);
		} else {
			memset(&c, 0, sizeof(c));
			err = xstrdup(open_err);
			rc = -1;
		}
		pthread_mutex_lock(&p->lock);
		p->slots[i % p->window].c = c;
		p->slots[i % p->window].err = err;
		p->slots[i % p->window].state = rc < 0 ? SLOT_FAILED : SLOT_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	free(open_err);
	if (repo)
		git_repository_free(repo);
	return NULL;
}

static int walk_parallel(struct pool *p, int threads, hist_commit_fn fn, void *data)
{
	pthread_t *tids = xcalloc((size_t)threads, sizeof(*tids));
	int started = 0, ret = 0, t;
	size_t i;

	p->window = (size_t)threads * 32;
	p->slots = xcalloc(p->window, sizeof(*p->slots));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->done, NULL);
	pthread_cond_init(&p->room, NULL);
	for (t = 0; t < threads; t++) {
		if (pthread_create(&tids[t], NULL, worker, p)) {
			error("cannot start a thread");
			ret = -1;
			break;
		}
		started++;
	}
	for (i = 0; !ret && i < p->nr; i++) {
		struct slot *s = &p->slots[i % p->window];
		struct hist_commit c;
		char *err;
		int state;

		pthread_mutex_lock(&p->lock);
		while (s->state == SLOT_EMPTY)
			pthread_cond_wait(&p->done, &p->lock);
		c = s->c;
		err = s->err;
		state = s->state;
		memset(s, 0, sizeof(*s));
		p->consumed = i + 1;
		pthread_cond_broadcast(&p->room);
		pthread_mutex_unlock(&p->lock);
		if (state == SLOT_FAILED) {
			error("%s", err);
			ret = -1;
		} else {
			ret = fn(&c, data);
		}
		free(err);
		hist_commit_release(&c);
	}
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->room);
	pthread_mutex_unlock(&p->lock);
	for (t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	/* results that were never consumed */
	for (i = 0; i < p->window; i++) {
		hist_commit_release(&p->slots[i].c);
		free(p->slots[i].err);
	}
	free(p->slots);
	free(tids);
	pthread_cond_destroy(&p->room);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	return ret;
}

int hist_walk(git_repository *repo, const struct hist_opts *o, hist_commit_fn fn, void *data)
{
	git_oid *ids;
	size_t nr, i;
	int ret = 0;

	if (list_commits(repo, o, &ids, &nr) < 0)
		return -1;
	if (o->threads > 1 && nr > 64) {
		struct pool p;

		memset(&p, 0, sizeof(p));
		p.repo = repo;
		p.gitdir = git_repository_path(repo);
		p.o = o;
		p.ids = ids;
		p.nr = nr;
		ret = walk_parallel(&p, o->threads, fn, data);
	} else {
		for (i = 0; !ret && i < nr; i++) {
			struct hist_commit c;
			char *err = NULL;

			if (read_commit(repo, &ids[i], o, &c, &err) < 0) {
				error("%s", err);
				free(err);
				ret = -1;
			} else {
				ret = fn(&c, data);
			}
			hist_commit_release(&c);
		}
	}
	free(ids);
	return ret;
}
