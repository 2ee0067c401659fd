/*
 * chunkrun.c: the parallel, ordered chunking engine of ci-chunk and ci-index.
 *
 * Shaped by whole repositories (the Linux kernel: 70k files): N workers take
 * files in list order, read and chunk them into per-slot buffers; the calling
 * thread hands each slot to the callback in order.  Workers never run more than
 * WINDOW files ahead, so memory stays bounded whatever the tree.
 */
#include "common.h"
#include "chunkrun.h"

#include <errno.h>
#include <pthread.h>

#define WINDOW 512

struct slot {
	struct buf out;		/* its records */
	struct buf warn;	/* its warnings, whole lines */
	int done;		/* the worker has finished it */
	int degraded;		/* chunked by lines, or unreadable */
	enum walk_skip skipped;	/* left out by content */
};

struct job {
	struct walker *w;		/* the repository */
	const struct walk_list *list;	/* the files */
	const struct chunk_opts *opts;	/* what to write */
	const struct import_ctx *ictx;	/* for resolving imports */
	struct slot *slots;		/* WINDOW slots, file i in slots[i % WINDOW] */
	size_t next;			/* next file to take */
	size_t written;			/* files handed to the callback */
	int stop;			/* the callback asked to stop */
	pthread_mutex_t lock;		/* guards next, written, stop, slots' done */
	pthread_cond_t cond;		/* signalled when a slot is done or handed over */
};

static void chunk_one(struct job *jb, struct chunker *ch, size_t i, struct slot *s)
{
	const struct walk_file *f = &jb->list->files[i];
	char *abs = xasprintf("%s/%s", jb->w->root, f->path);
	char *data = NULL;
	size_t n = 0;
	enum walk_skip why;
	const struct lang *lang;
	if (read_file(abs, &data, &n) < 0) {
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
	if (chunker_file(ch, f->path, lang, data, n, jb->ictx, &s->out, &s->warn))
		s->degraded = 1;
done:
	free(data);
	free(abs);
}

static void *worker(void *arg)
{
	struct job *jb = arg;
	struct chunker *ch = chunker_new(jb->opts);

	for (;;) {
		size_t i;
		struct slot *s;

		pthread_mutex_lock(&jb->lock);
		while (!jb->stop && jb->next < jb->list->files_nr && jb->next >= jb->written + WINDOW)
			pthread_cond_wait(&jb->cond, &jb->lock);
		if (jb->stop || jb->next >= jb->list->files_nr) {
			pthread_mutex_unlock(&jb->lock);
			break;
		}
		i = jb->next++;
		pthread_mutex_unlock(&jb->lock);

		s = &jb->slots[i % WINDOW];
		chunk_one(jb, ch, i, s);

		pthread_mutex_lock(&jb->lock);
		s->done = 1;
		pthread_cond_broadcast(&jb->cond);
		pthread_mutex_unlock(&jb->lock);
	}
	chunker_free(ch);
	return NULL;
}

int chunk_run(struct walker *w, const struct walk_list *list, const struct chunk_opts *opts,
	      const struct import_ctx *ictx, int nthreads, chunk_result_fn fn, void *data)
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
		r.records = s->out.buf;
		r.records_len = s->out.len;
		r.warnings = s->warn.buf;
		r.warnings_len = s->warn.len;
		r.degraded = s->degraded;
		r.skipped = s->skipped;
		ret = fn(f, &r, data);

		/* free big buffers, keep small ones for reuse (512 slots: keep them small) */
		if (s->out.alloc > (64 << 10))
			buf_release(&s->out);
		else
			buf_reset(&s->out);
		buf_reset(&s->warn);
		s->degraded = 0;
		s->skipped = WALK_OK;

		pthread_mutex_lock(&jb.lock);
		s->done = 0;
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
		buf_release(&jb.slots[f].out);
		buf_release(&jb.slots[f].warn);
	}
	free(jb.slots);
	free(tids);
	pthread_mutex_destroy(&jb.lock);
	pthread_cond_destroy(&jb.cond);
	return ret < 0 ? ret : 0;
}
