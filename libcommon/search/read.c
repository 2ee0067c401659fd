/*
 * search/read.c: the files read and searched by threads, each file's output
 * written in path order as soon as the files before it are done.  A file is
 * read whole into a buffer the thread keeps (mapped when large), or, for an
 * indexed file as indexed, only the parts the index's trigram segments say
 * can match (its plan); a file that changed in place is read whole instead.
 *
 * Shaped by the Linux tree on 2 cores: files are taken and handed back in
 * batches (one lock a batch), a window of slots lets the workers run ahead of
 * the writer, and the walk lists files while they are searched (select.c).
 */
#include "core/common.h"
#include "search/search.h"
#include "search/match.h"
#include "search/plan.h"
#include "parse/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

/*
 * The path of a file as rg writes it: relative to the current directory when
 * no path was given, else joined to the path given that holds it.  Returns
 * path itself or b's text.
 */
static const char *display_path(const struct scope *sc, const char *path, struct buf *b)
{
	long i;
	size_t l;
	const char *rest, *d;

	if (!sc || !sc->nr || (i = scope_find(sc, path)) < 0)
		return path;
	l = strlen(sc->rel[i]);
	rest = !l ? path : path[l] ? path + l + 1 : "";
	d = sc->disp[i];
	if (!*d)
		return rest;
	buf_reset(b);
	buf_addstr(b, d);
	if (*rest) {
		if (d[strlen(d) - 1] != '/')
			buf_addch(b, '/');
		buf_addstr(b, rest);
	}
	return b->buf;
}

#define MMAP_MIN (16u << 20)	/* files this large are mapped, not read */

/*
 * Read the file whole into the searcher's buffer (or map it).  Returns 0, 1 when
 * it vanished, -1 after adding a warning to s.
 */
static int load_file(struct job *jb, struct searcher *sr, struct target *t, struct slot *s,
		     const char **data, size_t *len, int *mapped)
{
	int fd = openat(jb->rootfd, t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	size_t want, have = 0;
	ssize_t n;
	struct stat st;

	*mapped = 0;
	if (fd < 0) {
		if (errno == ENOENT || errno == ELOOP)
			return 1;	/* gone, or now a symbolic link, since it was listed */
		buf_addf(&s->warn, "%s: %s: cannot open: %s\n", progname, t->disp, strerror(errno));
		return -1;
	}
	want = t->size;
	if (want >= MMAP_MIN && fstat(fd, &st) == 0 && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			*data = p;
			*len = (size_t)st.st_size;
			*mapped = 1;
			return 0;
		}
	}
	/* room for size + 1 bytes: a short read of a regular file is its end */
	if (sr->rbuf_alloc < want + 2) {
		free(sr->rbuf);
		sr->rbuf_alloc = want + 2 < 65536 ? 65536 : want + 2 + want / 8;
		sr->rbuf = xmalloc(sr->rbuf_alloc);
	}
	for (;;) {
		size_t room = sr->rbuf_alloc - 1 - have;

		if (!room) {
			/* it grew while we read */
			sr->rbuf_alloc *= 2;
			sr->rbuf = xrealloc(sr->rbuf, sr->rbuf_alloc);
			continue;
		}
		n = read(fd, sr->rbuf + have, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		have += (size_t)n;
		if ((size_t)n < room)
			break;
		/*
		 * Listed without its size (lazy_stat): the size limit is checked
		 * here, once the file fills the first buffer, before reading on.
		 */
		if (!want && !t->explicit_ && jb->o->walk.max_filesize && have == sr->rbuf_alloc - 1 &&
		    fstat(fd, &st) == 0 && (uint64_t)st.st_size > jb->o->walk.max_filesize) {
			close(fd);
			return 1;
		}
	}
	close(fd);
	sr->rbuf[have] = '\0';
	*data = sr->rbuf;
	*len = have;
	return 0;
fail:
	buf_addf(&s->warn, "%s: %s: cannot read: %s\n", progname, t->disp, strerror(errno));
	close(fd);
	return -1;
}

/* What a limit did to the search of path (fsearch_end's *limited), in its warnings. */
static void warn_limited(const struct job *jb, struct slot *s, const char *path, int limited)
{
	if (limited == 2)
		buf_addf(&s->warn, "%s: warning: %s: gave up after %.3g s: the pattern is too costly here;"
			 " results for this file are incomplete\n", progname, path, (double)jb->m->file_budget_ns / 1e9);
	else if (limited)
		buf_addf(&s->warn, "%s: warning: %s: the pattern hit PCRE2's match limit on some lines;"
			 " results for this file may be incomplete\n", progname, path);
	if (limited)
		s->limited = 1;
}

/*
 * Search the parts of t its plan names (an unchanged indexed file).  Returns 0
 * when done, -1 after a warning, 1 when the file is not as indexed (its parts do
 * not start and end with its lines, or its size changed): read it whole.
 */
static int search_parts(struct job *jb, struct searcher *sr, struct target *t, struct slot *s)
{
	const struct plan *pl = t->plan;
	size_t i, total = 0, at = 0, lo, want, got;
	size_t *start = xmalloc(pl->nr * sizeof(*start)), *len = xmalloc(pl->nr * sizeof(*len));
	struct fsearch fs;
	ssize_t n;
	int fd, limited, ret = 0;

	for (i = 0; i < pl->nr; i++) {
		uint64_t end = pl->part[i].end == UINT64_MAX ? t->size : pl->part[i].end;
		if (end < pl->part[i].off || end > t->size) {
			ret = 1;	/* not this file's parts */
			goto out;
		}
		total += (size_t)(end - pl->part[i].off) + 3;
	}
	fd = openat(jb->rootfd, t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		if (errno != ENOENT && errno != ELOOP) {
			buf_addf(&s->warn, "%s: %s: cannot open: %s\n", progname, t->disp, strerror(errno));
			ret = -1;
		}
		goto out;	/* gone, or now a symbolic link */
	}
	if (sr->rbuf_alloc < total) {
		free(sr->rbuf);
		sr->rbuf_alloc = total < 65536 ? 65536 : total + total / 8;
		sr->rbuf = xmalloc(sr->rbuf_alloc);
	}
	for (i = 0; i < pl->nr && !ret; i++) {
		const struct index_seg *p = &pl->part[i];
		int last = p->end == UINT64_MAX;
		char *b = sr->rbuf + at;

		/* from the newline before the part to its end, and a byte past the file's */
		lo = p->off ? (size_t)p->off - 1 : 0;
		want = (size_t)((last ? t->size : p->end) - lo);
		got = 0;
		while (got < want + last) {
			n = pread(fd, b + got, want + last - got, (off_t)(lo + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				buf_addf(&s->warn, "%s: %s: cannot read: %s\n", progname, t->disp, strerror(errno));
				ret = -1;
				break;
			}
			if (!n)
				break;
			got += (size_t)n;
		}
		if (ret)
			break;
		if (got != want || (p->off && b[0] != '\n') || (!last && want && b[want - 1] != '\n')) {
			ret = 1;	/* changed in place since it was indexed */
			break;
		}
		__atomic_add_fetch(&jb->bytes, (unsigned long long)got, __ATOMIC_RELAXED);
		start[i] = at + (p->off ? 1 : 0);
		len[i] = want - (p->off ? 1 : 0);
		sr->rbuf[start[i] + len[i]] = '\0';
		at = start[i] + len[i] + 1;
	}
	close(fd);
	if (ret)
		goto out;
	__atomic_add_fetch(&jb->n_read, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&jb->n_parts, 1, __ATOMIC_RELAXED);
	fsearch_begin(&fs, jb->o, jb->m, sr, t->disp, &s->out);
	for (i = 0; i < pl->nr; i++)
		if (fsearch_part(&fs, sr->rbuf + start[i], len[i], pl->part[i].line))
			break;
	s->matched = fsearch_end(&fs, &limited) > 0;
	warn_limited(jb, s, t->disp, limited);
out:
	free(start);
	free(len);
	return ret;
}

static void search_one(struct job *jb, struct searcher *sr, struct target *t, struct slot *s)
{
	const struct search_opts *o = jb->o;
	struct fsearch fs;
	const char *data;
	size_t len;
	int mapped, limited = 0, rc, binary;
	long n;
	enum walk_skip why;

	t->disp = display_path(jb->q->scope, t->path, &sr->disp);
	if (t->plan && jb->parts && !t->need_lang && !t->explicit_) {
		/* indexed, so not skipped by the walker's rules, unless too large */
		if (o->walk.max_filesize && t->size > o->walk.max_filesize)
			return;
		rc = search_parts(jb, sr, t, s);
		if (rc <= 0) {
			s->failed = rc < 0;
			return;
		}
		buf_reset(&s->out);	/* nothing was written: read it whole */
	}
	rc = load_file(jb, sr, t, s, &data, &len, &mapped);
	if (rc) {
		s->failed = rc < 0;
		return;
	}
	__atomic_add_fetch(&jb->n_read, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&jb->bytes, (unsigned long long)len, __ATOMIC_RELAXED);
	if (o->walk.max_filesize && len > o->walk.max_filesize && !t->explicit_)
		goto done;	/* grew past the limit since it was listed or indexed */
	why = walk_classify(jb->w, t->path, data, len);
	/* a binary file is searched with -a, and when named (as rg: its lines are not written) */
	binary = why == WALK_BINARY && (o->text || o->binary || t->explicit_);
	if (binary)
		why = WALK_OK;
	if (why != WALK_OK && !(why == WALK_GENERATED && t->explicit_)) {
		if (t->explicit_ || verbosity)
			buf_addf(&s->warn, "%s: %s%s: skipped: %s\n", progname,
				 t->explicit_ ? "warning: " : "", t->disp, walk_skip_name(why));
		goto done;
	}
	if (t->need_lang && !lang_wanted(o, lang_detect(t->path, data, len < 256 ? len : 256)))
		goto done;
	if (o->list_files) {
		file_line(&s->out, o, t->disp);	/* --files: a file that would be searched */
		s->matched = 1;
		goto done;
	}
	fsearch_begin(&fs, o, jb->m, sr, t->disp, &s->out);
	fsearch_part(&fs, data, len, 1);
	n = fsearch_end(&fs, &limited);
	if (binary && !o->text && n > 0 && !o->json && !o->count && !o->files_only && !o->files_without) {
		/* its lines, for people: what rg writes instead */
		buf_reset(&s->out);
		buf_addf(&s->out, "%s: binary file matches (found \"\\0\" byte around offset %zu)\n",
			 t->disp, (size_t)((const char *)memchr(data, '\0', len) - data));
	}
	/* -L: a file is selected when it has no match (and was searched to its end) */
	s->matched = o->files_without ? s->out.len > 0 : n > 0;
	warn_limited(jb, s, t->disp, limited);
done:
	if (mapped)
		munmap((void *)data, len);
}

/*
 * Files are taken and handed back in batches: one lock a batch, not two a file
 * (with a lock per file, the workers, the writer and the lister spent more time
 * waking each other than reading on the Linux tree: 240,000 futex calls).
 */
#define BATCH 64

static void *worker(void *arg)
{
	struct job *jb = arg;
	struct searcher sr;
	struct target t[BATCH];
	size_t i0, n, k;

	searcher_init(&sr, jb->m);
	pthread_mutex_lock(&jb->lock);
	for (;;) {
		while (!(jb->next < jb->avail && jb->next < jb->written + WINDOW) &&
		       !(jb->listed && jb->next >= jb->avail)) {
			jb->workers_wait++;
			pthread_cond_wait(&jb->work_cond, &jb->lock);
			jb->workers_wait--;
		}
		if (jb->next >= jb->avail)
			break;
		i0 = jb->next;
		n = jb->avail - i0;
		if (n > jb->written + WINDOW - i0)
			n = jb->written + WINDOW - i0;
		if (n > BATCH)
			n = BATCH;
		jb->next += n;
		for (k = 0; k < n; k++)
			t[k] = jb->ts->v[i0 + k];	/* copies: the list may move as it grows */
		pthread_mutex_unlock(&jb->lock);

		for (k = 0; k < n; k++) {
			struct slot *s = &jb->slots[(i0 + k) % WINDOW];
			search_one(jb, &sr, &t[k], s);
			if (jb->o->quiet && s->matched && jb->o->on_quiet_match)
				jb->o->on_quiet_match();	/* -q: the answer is known, nothing was written */
			__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
		}

		pthread_mutex_lock(&jb->lock);
		if (jb->writer_waits >= i0 && jb->writer_waits < i0 + n)
			pthread_cond_signal(&jb->done_cond);
	}
	pthread_mutex_unlock(&jb->lock);
	searcher_release(&sr);
	return NULL;
}

/* Write slot s (a file searched, in order) and take its results into *res (matched, failed, limited). */
static void write_slot(struct job *jb, struct slot *s, int context_sep, int res[3])
{
	if (s->warn.len) {
		fflush(jb->q->out);
		fwrite(s->warn.buf, 1, s->warn.len, jb->q->err);
	}
	if (s->out.len && !jb->o->quiet) {
		if (context_sep && jb->q->wrote)
			fputs("--\n", jb->q->out);
		fwrite(s->out.buf, 1, s->out.len, jb->q->out);
		jb->q->wrote = 1;
	}
	res[0] |= s->matched;
	res[1] |= s->failed;
	res[2] |= s->limited;
	if (s->out.alloc > (1 << 20))
		buf_release(&s->out);
	else
		buf_reset(&s->out);
	buf_reset(&s->warn);
	s->matched = s->failed = s->limited = 0;
	s->done = 0;	/* no worker takes the slot before written passes it */
}

/*
 * One worker and the list complete: each file searched and written on this
 * thread, in order, through one slot.  What a worker thread and the writer
 * handing files to each other cost was most of a small repository's search
 * (a thread started and a window of slots made a search: a shard set's
 * 1,000 shards, libcommon/fleet).
 */
static void search_here(struct job *jb, int context_sep, int res[3])
{
	struct searcher sr;
	struct slot s;
	size_t f;

	memset(&s, 0, sizeof(s));
	buf_init(&s.out, 0);
	buf_init(&s.warn, 0);
	searcher_init(&sr, jb->m);
	for (f = 0; f < jb->avail; f++) {
		struct target t = jb->ts->v[f];

		search_one(jb, &sr, &t, &s);
		if (jb->o->quiet && s.matched && jb->o->on_quiet_match)
			jb->o->on_quiet_match();
		write_slot(jb, &s, context_sep, res);
	}
	jb->written = f;
	searcher_release(&sr);
	buf_release(&s.out);
	buf_release(&s.warn);
}

int search_run(struct job *jb, int nthreads, int context_sep, int stream)
{
	pthread_t *tids, ltid;
	int i, res[3] = { 0, 0, 0 };
	size_t f;

	jb->writer_waits = SIZE_MAX;
	if (nthreads == 1 && !stream) {
		search_here(jb, context_sep, res);
		goto done;
	}
	tids = xcalloc((size_t)nthreads, sizeof(*tids));
	jb->slots = xcalloc(WINDOW, sizeof(*jb->slots));
	for (f = 0; f < WINDOW; f++) {
		buf_init(&jb->slots[f].out, 0);
		buf_init(&jb->slots[f].warn, 0);
	}
	if (stream && pthread_create(&ltid, NULL, search_lister, jb))
		die("cannot start a thread");
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, jb))
			die("cannot start a thread");
	for (f = 0;;) {
		size_t end;

		/* wait for file f, then write it and the done files after it */
		pthread_mutex_lock(&jb->lock);
		while (!(f < jb->avail && __atomic_load_n(&jb->slots[f % WINDOW].done, __ATOMIC_ACQUIRE)) &&
		       !(jb->listed && f >= jb->avail)) {
			jb->writer_waits = f;
			pthread_cond_wait(&jb->done_cond, &jb->lock);
		}
		jb->writer_waits = SIZE_MAX;
		if (f >= jb->avail) {
			pthread_mutex_unlock(&jb->lock);
			break;
		}
		end = f + 1;
		while (end < jb->avail && end < f + WINDOW &&
		       __atomic_load_n(&jb->slots[end % WINDOW].done, __ATOMIC_ACQUIRE))
			end++;
		pthread_mutex_unlock(&jb->lock);

		for (; f < end; f++)
			write_slot(jb, &jb->slots[f % WINDOW], context_sep, res);

		pthread_mutex_lock(&jb->lock);
		jb->written = f;
		if (jb->workers_wait)
			pthread_cond_broadcast(&jb->work_cond);
		pthread_mutex_unlock(&jb->lock);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	if (stream)
		pthread_join(ltid, NULL);
	for (f = 0; f < WINDOW; f++) {
		buf_release(&jb->slots[f].out);
		buf_release(&jb->slots[f].warn);
	}
	free(jb->slots);
	free(tids);
done:
	if (res[1])
		return SEARCH_EXIT_ERROR;
	if (res[2])
		return SEARCH_EXIT_INCOMPLETE;
	return res[0] ? EXIT_OK : EXIT_NOTHING;
}
