/*
 * ci-chunk: parse files with tree-sitter and write file, chunk, def, ref and import
 * records (NDJSON), the first stage of every ci pipeline.
 *
 * Shaped by whole repositories (the Linux kernel: 70k files, 1.2 GB): files are
 * listed first (sorted, so output does not depend on readdir or thread timing),
 * then N workers read and chunk them while the main thread writes each file's
 * records in list order; workers never run more than a window ahead of the writer,
 * so memory stays bounded whatever the tree.
 */
#include "common.h"
#include "chunk.h"
#include "walk.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>

static const char usage_text[] =
	"usage: ci-chunk [options] [<path>...]\n"
	"\n"
	"Parse files with tree-sitter and write file, chunk, def, ref and import records\n"
	"(NDJSON) for each.  With no <path>, the repository containing the current directory.\n"
	"\n"
	"      --chunks                write chunk records\n"
	"      --symbols               write def records (definitions)\n"
	"      --refs                  write ref records (references)\n"
	"      --imports               write import records\n"
	"      --no-files              do not write file records\n"
	"                              (without any of the four above, all kinds are written)\n"
	"      --files-from <file>     read the paths from <file> ('-': standard input), one a line\n"
	"      --max-chunk-lines <n>   split units longer than <n> lines (default 100)\n"
	"      --max-filesize <bytes>  skip files larger than this (default 1048576; 0: no limit)\n"
	"      --include-vendored      also read vendored and generated files\n"
	"      --no-ignore             do not honour .gitignore, .git/info/exclude\n"
	"      --strict                exit 3 if a file had to be chunked by lines or was unreadable\n"
	"  -j, --threads <n>           parse with <n> threads (default: the number of CPUs)\n"
	"  -v, --verbose               report skipped files on stderr\n"
	"  -h, --help                  show this help and exit\n";

enum {
	OPT_CHUNKS = 256, OPT_SYMBOLS, OPT_REFS, OPT_IMPORTS, OPT_NO_FILES, OPT_FILES_FROM,
	OPT_MAX_LINES, OPT_MAX_SIZE, OPT_VENDORED, OPT_NO_IGNORE, OPT_STRICT,
};

static const struct option long_options[] = {
	{ "chunks", no_argument, NULL, OPT_CHUNKS },
	{ "symbols", no_argument, NULL, OPT_SYMBOLS },
	{ "refs", no_argument, NULL, OPT_REFS },
	{ "imports", no_argument, NULL, OPT_IMPORTS },
	{ "no-files", no_argument, NULL, OPT_NO_FILES },
	{ "files-from", required_argument, NULL, OPT_FILES_FROM },
	{ "max-chunk-lines", required_argument, NULL, OPT_MAX_LINES },
	{ "max-filesize", required_argument, NULL, OPT_MAX_SIZE },
	{ "include-vendored", no_argument, NULL, OPT_VENDORED },
	{ "no-ignore", no_argument, NULL, OPT_NO_IGNORE },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "threads", required_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct options {
	struct chunk_opts chunk;	/* what to write, chunk size */
	struct walk_opts walk;		/* walker rules */
	const char *files_from;		/* --files-from, or NULL */
	int strict;			/* --strict */
	int threads;			/* -j */
};

/* One file's result, handed from a worker to the writer. */
struct slot {
	struct buf out;		/* its records */
	struct buf warn;	/* its warnings, whole lines */
	int done;		/* the worker has finished it */
	int degraded;		/* chunked by lines, or unreadable */
	int skipped;		/* left out: binary, generated */
};

#define WINDOW 512

struct job {
	struct walker *w;		/* the repository */
	struct walk_list *list;		/* the files, sorted */
	const struct options *opts;	/* options */
	const struct import_ctx *ictx;	/* for resolving imports */
	struct slot *slots;		/* WINDOW slots, file i in slots[i % WINDOW] */
	size_t next;			/* next file to take */
	size_t written;			/* files written so far */
	int stop;			/* the writer gave up */
	unsigned long skipped[WALK_SKIP_MAX];	/* content-based skips */
	pthread_mutex_t lock;		/* guards next, written, stop, slots' done */
	pthread_cond_t cond;		/* signalled when a slot is done or written */
};

static void chunk_one(struct job *jb, struct chunker *ch, size_t i, struct slot *s)
{
	const char *rel = jb->list->files[i].path;
	char *abs = xasprintf("%s/%s", jb->w->root, rel);
	char *data = NULL;
	size_t n = 0;
	enum walk_skip why;
	const struct lang *lang;

	if (read_file(abs, &data, &n) < 0) {
		/* read_file reported to stderr directly; keep order by noting it */
		buf_addf(&s->warn, "%s: warning: %s: cannot read: %s\n", progname, rel, strerror(errno));
		s->degraded = 1;
		goto done;
	}
	why = walk_classify(jb->w, rel, data, n);
	if (why != WALK_OK && !(why == WALK_GENERATED && jb->list->files[i].explicit_)) {
		s->skipped = why;
		if (jb->list->files[i].explicit_ || verbosity)
			buf_addf(&s->warn, "%s: %s%s: skipped: %s\n", progname,
				 jb->list->files[i].explicit_ ? "warning: " : "", rel, walk_skip_name(why));
		goto done;
	}
	lang = lang_detect(rel, data, n < 256 ? n : 256);
	if (chunker_file(ch, rel, lang, data, n, jb->ictx, &s->out, &s->warn))
		s->degraded = 1;
done:
	free(data);
	free(abs);
}

static void *worker(void *arg)
{
	struct job *jb = arg;
	struct chunker *ch = chunker_new(&jb->opts->chunk);

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

/* Write the files' records in order as workers finish them.  Returns EXIT_* bits. */
static int run(struct job *jb, int nthreads, int *degraded, size_t *read_nr)
{
	pthread_t *tids = xcalloc((size_t)nthreads, sizeof(*tids));
	int i, ret = 0;
	size_t f;

	jb->slots = xcalloc(WINDOW, sizeof(*jb->slots));
	for (f = 0; f < WINDOW; f++) {
		buf_init(&jb->slots[f].out, 0);
		buf_init(&jb->slots[f].warn, 0);
	}
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, jb))
			die("cannot start a thread");
	for (f = 0; f < jb->list->files_nr; f++) {
		struct slot *s = &jb->slots[f % WINDOW];

		pthread_mutex_lock(&jb->lock);
		while (!s->done)
			pthread_cond_wait(&jb->cond, &jb->lock);
		pthread_mutex_unlock(&jb->lock);

		if (s->warn.len) {
			fflush(stdout);
			fwrite(s->warn.buf, 1, s->warn.len, stderr);
		}
		if (s->out.len && fwrite(s->out.buf, 1, s->out.len, stdout) != s->out.len)
			ret = -1;
		if (s->degraded)
			(*degraded)++;
		if (s->skipped)
			jb->skipped[s->skipped]++;
		else if (!s->degraded || s->out.len)
			(*read_nr)++;
		/* free big buffers, keep small ones for reuse */
		if (s->out.alloc > (1 << 20))
			buf_release(&s->out);
		else
			buf_reset(&s->out);
		buf_reset(&s->warn);
		s->done = s->degraded = s->skipped = 0;

		pthread_mutex_lock(&jb->lock);
		jb->written = f + 1;
		if (ret < 0 || ferror(stdout))
			jb->stop = 1;
		pthread_cond_broadcast(&jb->cond);
		pthread_mutex_unlock(&jb->lock);
		if (jb->stop)
			break;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	for (f = 0; f < WINDOW; f++) {
		buf_release(&jb->slots[f].out);
		buf_release(&jb->slots[f].warn);
	}
	free(jb->slots);
	free(tids);
	return ret;
}

/* Add a user-named path (file or directory) to the list. */
static int add_path(struct walker *w, const char *arg, struct walk_list *list)
{
	char *rel;
	int rc;

	if (walker_relpath(w, arg, &rel) < 0)
		return -1;
	rc = walker_walk(w, rel, 1, list);
	free(rel);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct walker w;
	struct walk_list list = { 0 };
	size_t i, read_nr = 0;
	unsigned want = 0;
	int c, errors = 0, degraded = 0, ret = EXIT_OK;
	struct job jb;
	struct import_ctx ictx;
	struct fileset fs;
	const char **paths = NULL;

	util_init(argv[0]);
	memset(&o, 0, sizeof(o));
	o.chunk.max_lines = CHUNK_DEFAULT_MAX_LINES;
	o.walk.max_filesize = WALK_DEFAULT_MAX_FILESIZE;
	o.threads = online_cpus();

	while ((c = getopt_long(argc, argv, "j:vh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_CHUNKS: want |= CHUNK_WANT_CHUNKS; break;
		case OPT_SYMBOLS: want |= CHUNK_WANT_DEFS; break;
		case OPT_REFS: want |= CHUNK_WANT_REFS; break;
		case OPT_IMPORTS: want |= CHUNK_WANT_IMPORTS; break;
		case OPT_NO_FILES: want |= 0x100; break;
		case OPT_FILES_FROM: o.files_from = optarg; break;
		case OPT_MAX_LINES:
			o.chunk.max_lines = (int)parse_long_arg(usage_text, "--max-chunk-lines",
								optarg, 2, 100000);
			break;
		case OPT_MAX_SIZE:
			o.walk.max_filesize = (uint64_t)parse_long_arg(usage_text, "--max-filesize",
								       optarg, 0, 1L << 40);
			break;
		case OPT_VENDORED: o.walk.include_vendored = 1; break;
		case OPT_NO_IGNORE: o.walk.no_ignore = 1; break;
		case OPT_STRICT: o.strict = 1; break;
		case 'j':
			o.threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
			break;
		case 'v': verbosity++; break;
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			/* getopt printed what is wrong */
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
	}
	o.chunk.want = (want & ~0x100u) ? (want & ~0x100u) | CHUNK_WANT_FILES : CHUNK_WANT_ALL;
	if (want & 0x100)
		o.chunk.want &= ~(unsigned)CHUNK_WANT_FILES;
	if (!o.chunk.want)
		usage_error(usage_text, "--no-files leaves nothing to write");

	if (walker_open(&w, ".", &o.walk) < 0)
		return EXIT_IO;
	if (chunker_check_queries())
		warning("some built-in queries failed to compile; definitions may be missing");

	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (add_path(&w, argv[i], &list) < 0)
			errors++;
	if (o.files_from) {
		FILE *f = strcmp(o.files_from, "-") ? fopen(o.files_from, "r") : stdin;
		struct buf line = BUF_INIT;
		int ch;

		if (!f) {
			error_errno("cannot open '%s'", o.files_from);
			walker_close(&w);
			return EXIT_IO;
		}
		for (;;) {
			buf_reset(&line);
			while ((ch = getc(f)) != EOF && ch != '\n')
				buf_addch(&line, ch);
			if (line.len && line.buf[line.len - 1] == '\r')
				buf_setlen(&line, line.len - 1);
			if (line.len && add_path(&w, line.buf, &list) < 0)
				errors++;
			if (ch == EOF)
				break;
		}
		if (ferror(f))
			errors++, error_errno("cannot read '%s'", o.files_from);
		if (f != stdin)
			fclose(f);
		buf_release(&line);
	}
	if (optind == argc && !o.files_from)
		walker_walk(&w, "", 0, &list);

	walk_list_finish(&list);

	/* every walked file is a possible import target */
	paths = xcalloc(list.files_nr + 1, sizeof(*paths));
	for (i = 0; i < list.files_nr; i++)
		paths[i] = list.files[i].path;
	fs.paths = paths;
	fs.nr = list.files_nr;
	ictx.root = w.root;
	ictx.files = optind == argc && !o.files_from ? &fs : NULL;

	memset(&jb, 0, sizeof(jb));
	jb.w = &w;
	jb.list = &list;
	jb.opts = &o;
	jb.ictx = &ictx;
	pthread_mutex_init(&jb.lock, NULL);
	pthread_cond_init(&jb.cond, NULL);
	if (o.threads > (int)list.files_nr)
		o.threads = list.files_nr ? (int)list.files_nr : 1;
	if (run(&jb, o.threads, &degraded, &read_nr) < 0)
		ret = EXIT_IO;
	pthread_mutex_destroy(&jb.lock);
	pthread_cond_destroy(&jb.cond);

	for (i = 0; i < WALK_SKIP_MAX; i++)
		list.skipped[i] += jb.skipped[i];
	if (verbosity) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "%zu files read", read_nr);
		for (i = 1; i < WALK_SKIP_MAX; i++)
			if (list.skipped[i])
				buf_addf(&b, ", %lu %s", list.skipped[i], walk_skip_name((enum walk_skip)i));
		fprintf(stderr, "%s: %s\n", progname, b.buf);
		buf_release(&b);
	}
	if (ret == EXIT_OK) {
		if (errors)
			ret = EXIT_IO;
		else if (o.strict && degraded)
			ret = EXIT_IO;
		else if (!read_nr) {
			error("no files to read%s", list.files_nr ? " (all skipped; -v says why)" :
			      optind == argc ? " in this repository" : "");
			ret = EXIT_NOTHING;
		}
	}
	free(paths);
	walk_list_release(&list);
	walker_close(&w);
	return close_stdout(ret);
}
