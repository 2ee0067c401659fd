/*
 * chunkrun.c: the parallel, ordered chunking engine of ci-chunk and ci-index.
 *
 * Shaped by whole repositories (the Linux kernel: 70k files): N workers take
 * files in list order, read and chunk them into per-slot buffers; the calling
 * thread hands each slot to the callback in order.  Workers never run more than
 * WINDOW files ahead, nor past BUDGET bytes of records waiting to be handed
 * over (a run of large generated headers, 2-6 MB of records each, held 290
 * MB in 512 slots on drivers/gpu/drm/amd), so memory stays bounded whatever
 * the tree.
 */
#include "core/common.h"
#include "parse/chunkrun.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <git2.h>

#define WINDOW 512
#define BUDGET (32L << 20)	/* CI_CHUNK_BUDGET (bytes) in tests */

struct slot {
	struct buf out;		/* its records */
	void *prepared;		/* or what the hook made of them */
	size_t out_len;		/* bytes of records */
	size_t held;		/* bytes of memory they hold until handed over */
	struct buf warn;	/* its warnings, whole lines */
	int done;		/* the worker has finished it */
	int degraded;		/* chunked by lines, or unreadable */
	int failed;		/* its blob could not be read: the run stops */
	enum walk_skip skipped;	/* left out by content */
};

struct job {
	struct walker *w;		/* the repository */
	const struct walk_list *list;	/* the files */
	const struct chunk_opts *opts;	/* what to write */
	const struct import_ctx *ictx;	/* for resolving imports */
	const char *gitdir;		/* with oids: the repository the blobs are in */
	const git_oid *oids;		/* the files' blobs, or NULL: read the work tree */
	const struct chunk_hook *hook;	/* or NULL */
	struct slot *slots;		/* WINDOW slots, file i in slots[i % WINDOW] */
	size_t next;			/* next file to take */
	size_t written;			/* files handed to the callback */
	size_t held;			/* bytes held by records done and not yet handed over */
	size_t budget;			/* BUDGET */
	int stop;			/* the callback asked to stop */
	pthread_mutex_t lock;		/* guards next, written, held, stop, slots' done */
	pthread_cond_t cond;		/* signalled when a slot is done or handed over */
};

/*
 * The content of blob oid of repo into a malloc'd, NUL-terminated *data; 0,
 * GIT_ENOTFOUND when the object database does not have it, or -1.
 */
static int read_blob(git_repository *repo, const git_oid *oid, char **data, size_t *n)
{
	git_blob *blob;
	int rc;

	*data = NULL;
	*n = 0;
	if (!repo)
		return -1;
	rc = git_blob_lookup(&blob, repo, oid);
	if (rc < 0)
		return rc == GIT_ENOTFOUND ? GIT_ENOTFOUND : -1;
	*n = (size_t)git_blob_rawsize(blob);
	*data = xmalloc(*n + 1);
	memcpy(*data, git_blob_rawcontent(blob), *n);
	(*data)[*n] = '\0';
	git_blob_free(blob);
	return 0;
}

static void chunk_one(struct job *jb, struct chunker *ch, git_repository *repo, size_t i, struct slot *s)
{
	const struct walk_file *f = &jb->list->files[i];
	char *abs = jb->oids ? NULL : xasprintf("%s/%s", jb->w->root, f->path);
	char *data = NULL;
	size_t n = 0;
	enum walk_skip why;
	const struct lang *lang;

	if (jb->oids) {
		int rc = read_blob(repo, &jb->oids[i], &data, &n);

		if (rc < 0) {
			const git_error *e = git_error_last();
			char hex[GIT_OID_HEXSZ + 1];

			git_oid_tostr(hex, sizeof(hex), &jb->oids[i]);
			if (rc == GIT_ENOTFOUND) {
				/* a partial clone's: left out as unreadable, as a work tree's file */
				buf_addf(&s->warn, "%s: warning: %s: blob %s is not in the object database "
					 "(a partial clone?); left out as unreadable\n", progname, f->path, hex);
				s->degraded = 1;
				goto done;
			}
			buf_addf(&s->warn, "%s: %s: cannot read blob %s: %s\n", progname, f->path, hex,
				 e && e->message ? e->message : "no repository");
			s->failed = 1;
			goto done;
		}
	} else if (read_file(abs, &data, &n) < 0) {
		buf_addf(&s->warn, "%s: warning: %s: cannot read: %s\n", progname, f->path,
			 strerror(errno));
		s->degraded = 1;
		goto done;
	}
	why = walk_classify(jb->w, f->path, data, n);
	if (why != WALK_OK && !(why == WALK_GENERATED && f->explicit_)) {
		s->skipped = why;
		if (f->explicit_ || verbosity)
			buf_addf(&s->warn, "%s: %s%s: skipped: %s\n", progname,
				 f->explicit_ ? "warning: " : "", f->path, walk_skip_name(why));
		goto done;
	}
	lang = lang_detect(f->path, data, n < 256 ? n : 256);
	if (jb->oids) {
		/* the tree named the blob: no need to hash its content again */
		char hex[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), &jb->oids[i]);
		chunker_set_blob(ch, hex);
	}
	if (chunker_file(ch, f->path, lang, data, n, jb->ictx, &s->out, &s->warn))
		s->degraded = 1;
done:
	free(data);
	free(abs);
}

/* Free a slot's big record buffer, keep a small one for reuse (512 slots: keep them small). */
static void release_out(struct slot *s)
{
	if (s->out.alloc > (64 << 10))
		buf_release(&s->out);
	else
		buf_reset(&s->out);
}

static void *worker(void *arg)
{
	struct job *jb = arg;
	struct chunker *ch = chunker_new(jb->opts);
	git_repository *repo = NULL;

	if (jb->oids && git_repository_open(&repo, jb->gitdir) < 0)
		repo = NULL;	/* every file fails, with libgit2's message */
	for (;;) {
		size_t i;
		struct slot *s;

		pthread_mutex_lock(&jb->lock);
		/* the file the caller waits for is always taken: no deadlock */
		while (!jb->stop && jb->next < jb->list->files_nr &&
		       (jb->next >= jb->written + WINDOW || (jb->held >= jb->budget && jb->next > jb->written)))
			pthread_cond_wait(&jb->cond, &jb->lock);
		if (jb->stop || jb->next >= jb->list->files_nr) {
			pthread_mutex_unlock(&jb->lock);
			break;
		}
		i = jb->next++;
		pthread_mutex_unlock(&jb->lock);

		s = &jb->slots[i % WINDOW];
		chunk_one(jb, ch, repo, i, s);
		s->out_len = s->held = s->out.len;
		if (jb->hook && s->out.len && !s->failed) {
			s->prepared = jb->hook->prepare(s->out.buf, s->out.len, &s->held, jb->hook->data);
			if (s->prepared)
				release_out(s);
			else
				s->held = s->out.len;	/* the text is handed over */
		}

		pthread_mutex_lock(&jb->lock);
		s->done = 1;
		jb->held += s->held;
		pthread_cond_broadcast(&jb->cond);
		pthread_mutex_unlock(&jb->lock);
	}
	chunker_free(ch);
	git_repository_free(repo);
	return NULL;
}

static int run(struct walker *w, const struct walk_list *list, const char *gitdir, const git_oid *oids,
	       const struct chunk_opts *opts, const struct import_ctx *ictx, int nthreads,
	       const struct chunk_hook *hook, chunk_result_fn fn, void *data)
{
	struct job jb;
	pthread_t *tids;
	int i, ret = 0;
	size_t f;

	if (nthreads < 1)
		nthreads = 1;
	if ((size_t)nthreads > list->files_nr)
		nthreads = list->files_nr ? (int)list->files_nr : 1;
	memset(&jb, 0, sizeof(jb));
	jb.w = w;
	jb.list = list;
	jb.opts = opts;
	jb.ictx = ictx;
	jb.gitdir = gitdir;
	jb.oids = oids;
	jb.hook = hook && hook->prepare ? hook : NULL;
	jb.budget = (size_t)env_long("CI_CHUNK_BUDGET", 1, LONG_MAX, BUDGET, ENV_DIE);
	pthread_mutex_init(&jb.lock, NULL);
	pthread_cond_init(&jb.cond, NULL);
	jb.slots = xcalloc(WINDOW, sizeof(*jb.slots));
	for (f = 0; f < WINDOW; f++) {
		buf_init(&jb.slots[f].out, 0);
		buf_init(&jb.slots[f].warn, 0);
	}
	tids = xcalloc((size_t)nthreads, sizeof(*tids));
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, &jb))
			die("cannot start a thread");
	for (f = 0; f < list->files_nr; f++) {
		struct slot *s = &jb.slots[f % WINDOW];
		struct chunk_result r;

		pthread_mutex_lock(&jb.lock);
		while (!s->done)
			pthread_cond_wait(&jb.cond, &jb.lock);
		pthread_mutex_unlock(&jb.lock);

		r.file = &list->files[f];
		r.records = s->prepared ? NULL : s->out.buf;
		r.records_len = s->out_len;
		r.prepared = s->prepared;
		r.warnings = s->warn.buf;
		r.warnings_len = s->warn.len;
		r.degraded = s->degraded;
		r.skipped = s->skipped;
		if (s->failed) {
			fwrite(s->warn.buf, 1, s->warn.len, stderr);
			ret = -1;
		} else {
			ret = fn(f, &r, data);
		}

		if (s->prepared)
			jb.hook->release(s->prepared);
		s->prepared = NULL;
		release_out(s);
		buf_reset(&s->warn);
		s->degraded = 0;
		s->failed = 0;
		s->skipped = WALK_OK;

		pthread_mutex_lock(&jb.lock);
		s->done = 0;
		jb.held -= s->held;
		jb.written = f + 1;
		if (ret < 0)
			jb.stop = 1;
		pthread_cond_broadcast(&jb.cond);
		pthread_mutex_unlock(&jb.lock);
		if (ret < 0)
			break;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	for (f = 0; f < WINDOW; f++) {
		if (jb.slots[f].prepared)	/* done, never handed over: the run stopped */
			jb.hook->release(jb.slots[f].prepared);
		buf_release(&jb.slots[f].out);
		buf_release(&jb.slots[f].warn);
	}
	free(jb.slots);
	free(tids);
	pthread_mutex_destroy(&jb.lock);
	pthread_cond_destroy(&jb.cond);
	return ret < 0 ? ret : 0;
}

int chunk_run(struct walker *w, const struct walk_list *list, const struct chunk_opts *opts,
	      const struct import_ctx *ictx, int nthreads, const struct chunk_hook *hook,
	      chunk_result_fn fn, void *data)
{
	return run(w, list, NULL, NULL, opts, ictx, nthreads, hook, fn, data);
}

int chunk_run_blobs(struct walker *w, const struct walk_list *list, struct git_repository *repo,
		    const struct git_oid *oids, const struct chunk_opts *opts,
		    const struct import_ctx *ictx, int nthreads, const struct chunk_hook *hook,
		    chunk_result_fn fn, void *data)
{
	return run(w, list, git_repository_path(repo), oids, opts, ictx, nthreads, hook, fn, data);
}
