/*
 * ci-embed: add a sentence embedding ("vec", "model") to every chunk record of an
 * NDJSON stream (and to every commit record, from its message), or print the
 * embedding of a query.
 *
 * Shaped by whole repositories, tens of thousands of chunks on a few cores: the main
 * thread reads records into batches and writes finished batches in input order,
 * while -j workers tokenize and embed whole batches at once, so each matrix product
 * of the transformer is one large BLIS sgemm (see libcommon/embed/embed.c).  Records
 * other than chunks ride along in their batch and come out untouched, in place.
 *
 * What of a chunk is embedded (--fields) was chosen by measurement on this
 * repository and on the Linux kernel: bench/embed-eval.sh, man/ci-embed.1.
 */
#include "core/common.h"
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "embed/vec.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

/* What of a chunk is embedded, unless --fields says otherwise (bench/embed-eval.sh). */
#define DEFAULT_FIELDS EMBED_DEFAULT_FIELDS

static const char usage_text[] =
	"usage: ci-embed [--model <model>] [--dims <n>] [--static] [--fields <list>] [--max-tokens <n>] [--batch <n>] [-j <n>]\n"
	"   or: ci-embed [--model <model>] [--dims <n>] [--static] --query <text>\n"
	"\n"
	"Read records (NDJSON) on standard input and write them back, each chunk record\n"
	"(and each commit record, from its message) with \"vec\" (base64 of little-endian\n"
	"float32) and \"model\" added; or print the vector of one query text.\n"
	"\n"
	"      --model <model>     the model: use-lite, ci-code (static, trained for code\n"
	"                          search), or a directory: USE-lite (model.json) or a\n"
	"                          HuggingFace BERT model (config.json, vocab.txt,\n"
	"                          model.safetensors); default: $CI_MODEL, else ci-code;\n"
	"                          ci-code/<n> is ci-code with --dims <n>\n"
	"      --dims <n>          a static model's (ci-code's) first <n> values of each\n"
	"                          vector, re-normalised (Matryoshka dimensions; model\n"
	"                          \"ci-code/<n>\"); default: all of them (256)\n"
	"      --static            use the static table distilled from the model: about\n"
	"                          100 times faster; its vectors compare with its own only\n"
	"                          (USE-lite only)\n"
	"      --fields <list>     what of a chunk to embed, in order, comma-separated:\n"
	"                          path, kind, scope, name, signature, comment, code, text,\n"
	"                          words (default: " DEFAULT_FIELDS ")\n"
	"      --max-tokens <n>    embed the first <n> tokens of each chunk's text (default\n"
	"                          and most: the model's limit, 128 for USE-lite)\n"
	"      --query <text>      print a query record with the vector of <text>\n"
	"      --batch <n>         chunks embedded together (default 32)\n"
	"  -j, --threads <n>       embed with <n> threads (default: the number of CPUs)\n"
	"      --progress          report progress on stderr even when it is not a terminal\n"
	"      --no-progress       never report progress\n"
	"  -v, --verbose           report counts, tokens and rates on stderr at the end\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum {
	OPT_MODEL = 256, OPT_STATIC, OPT_FIELDS, OPT_MAX_TOKENS, OPT_QUERY, OPT_BATCH, OPT_PROGRESS,
	OPT_NO_PROGRESS, OPT_DIMS,
};

static const struct option long_options[] = {
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "static", no_argument, NULL, OPT_STATIC },
	{ "dims", required_argument, NULL, OPT_DIMS },
	{ "fields", required_argument, NULL, OPT_FIELDS },
	{ "max-tokens", required_argument, NULL, OPT_MAX_TOKENS },
	{ "query", required_argument, NULL, OPT_QUERY },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "threads", required_argument, NULL, 'j' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct options {
	const char *model;		/* --model, or NULL */
	int static_mode;		/* --static */
	long dims;			/* --dims, 0: the model's */
	struct embed_fields fields;	/* --fields */
	const char *query;		/* --query, or NULL */
	int max_tokens;			/* --max-tokens, 0: the model's limit */
	int batch;			/* --batch */
	int threads;			/* -j */
	int progress;			/* 1 on, 0 off, -1 when stderr is a terminal */
};

/* ---- output ---------------------------------------------------------------------- */

/* Append `"<base64 of v[0..n) as little-endian float32>"`. */
static void add_vec_base64(struct buf *b, const float *v, size_t n)
{
	buf_addch(b, '"');
	vec_to_base64(b, v, n);
	buf_addch(b, '"');
}

/* ---- batches ------------------------------------------------------------------------ */

/* A record read, waiting in its batch. */
struct item {
	size_t off, len;	/* the record's text in batch->in */
	size_t text_off;	/* chunks: the text to embed, in batch->texts */
	size_t text_len;
	size_t text_head;	/* its first bytes that are the chunk's name (embed_chunk_text()) */
	int chunk;		/* 1: a chunk or commit record, to embed */
};

/* Consecutive records, read by the main thread, embedded by one worker. */
struct batch {
	struct buf in;		/* the records read, as read (JSON lines, no newline) */
	struct buf texts;	/* the texts of the chunks */
	struct item *item;
	size_t item_nr, item_alloc;
	size_t chunks;		/* items that are chunks */
	struct buf out;		/* the records to write, newlines included */
	size_t tokens;		/* tokens embedded */
	double flops;		/* floating-point operations of the transformer */
	int done;		/* out is ready */
};

static void batch_reset(struct batch *b)
{
	buf_reset(&b->in);
	buf_reset(&b->texts);
	buf_reset(&b->out);
	b->item_nr = b->chunks = b->tokens = 0;
	b->flops = 0;
	b->done = 0;
}

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	buf_release(&b->in);
	buf_release(&b->texts);
	buf_release(&b->out);
	free(b->item);
	free(b);
}

/* What the workers share with the main thread. */
struct pool {
	struct embed_model *model;
	const char *model_name;		/* for "model" */
	int static_mode;
	size_t max_tokens;		/* tokens of a text read */
	size_t dim;			/* of the vectors */
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a batch was queued, or closing */
	pthread_cond_t done;		/* a batch is done */
	struct batch **ring;		/* window slots */
	size_t window;
	size_t queued, taken;		/* batches queued by the main thread, taken by workers */
	int closing;			/* no more batches */
};

/* Embed the chunks of b and lay out its output.  Runs in a worker. */
static void batch_embed(struct pool *p, struct embed_work *w, struct batch *b)
{
	int32_t **ids = xcalloc(b->chunks + 1, sizeof(*ids));
	size_t *len = xcalloc(b->chunks + 1, sizeof(*len));
	size_t *nhead = xcalloc(b->chunks + 1, sizeof(*nhead));
	float *vec = xmalloc((b->chunks + 1) * p->dim * sizeof(float));
	size_t i, c;

	for (i = c = 0; i < b->item_nr; i++) {
		const struct item *it = &b->item[i];
		const int32_t *t;
		if (!it->chunk)
			continue;
		t = embed_tokenize_head(w, b->texts.buf + it->text_off, it->text_len, it->text_head,
					p->max_tokens, &len[c], &nhead[c]);
		ids[c] = xmalloc((len[c] + 1) * sizeof(**ids));
		if (len[c])
			memcpy(ids[c], t, len[c] * sizeof(**ids));
		b->tokens += len[c];
		c++;
	}
	if (p->static_mode) {
		embed_static(w, (const int32_t *const *)ids, len, c, vec);
	} else if (c) {
		embed_forward_head(w, (const int32_t *const *)ids, len, nhead, c, vec);
		b->flops = embed_flops(p->model, len, c);
	}

	buf_grow(&b->out, b->in.len + b->item_nr + c * (p->dim * 4 * 4 / 3 + 64));
	for (i = c = 0; i < b->item_nr; i++) {
		const struct item *it = &b->item[i];
		const char *rec = b->in.buf + it->off;
		size_t n = it->len;

		if (!it->chunk) {
			buf_add(&b->out, rec, n);
			buf_addch(&b->out, '\n');
			continue;
		}
		/* the record without its closing brace, then the two keys */
		while (n && rec[n - 1] != '}')
			n--;
		buf_add(&b->out, rec, n ? n - 1 : 0);
		buf_addstr(&b->out, ",\"vec\":");
		add_vec_base64(&b->out, vec + c * p->dim, p->dim);
		buf_addstr(&b->out, ",\"model\":");
		nd_json_string(&b->out, p->model_name, strlen(p->model_name));
		buf_addstr(&b->out, "}\n");
		c++;
	}
	for (i = 0; i < c; i++)
		free(ids[i]);
	free(ids);
	free(len);
	free(nhead);
	free(vec);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct embed_work *w = embed_work_new(p->model);

	for (;;) {
		struct batch *b;

		pthread_mutex_lock(&p->lock);
		while (p->taken == p->queued && !p->closing)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->taken == p->queued) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		b = p->ring[p->taken++ % p->window];
		pthread_mutex_unlock(&p->lock);

		batch_embed(p, w, b);

		pthread_mutex_lock(&p->lock);
		b->done = 1;
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
	embed_work_free(w);
	return NULL;
}

/* ---- progress and statistics ---------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct stats {
	double start, last;	/* when the work started, when progress was last shown */
	size_t chunks;		/* chunks embedded */
	size_t tokens;		/* their tokens */
	size_t records;		/* records written */
	double flops;		/* transformer operations */
	int progress;		/* show progress */
};

static void progress_tick(struct stats *s, int final)
{
	double t = now(), el;

	if (!s->progress || (!final && t - s->last < 0.25))
		return;
	s->last = t;
	el = t - s->start > 1e-3 ? t - s->start : 1e-3;
	fprintf(stderr, "\r%s: %zu chunks, %.0f chunks/s, %.0f tokens/s   %s", progname,
		s->chunks, (double)s->chunks / el, (double)s->tokens / el, final ? "\n" : "");
}

/* ---- main ------------------------------------------------------------------------------ */

/*
 * How much chunk text can matter: no piece is longer than 16 characters of 4
 * bytes, and a text gets at most --max-tokens of them (128).
 */
static size_t text_limit(const struct options *o)
{
	return embed_text_limit(o->max_tokens);
}

/*
 * The input, a record a line: nd_read()'s rules and messages, but lines are read
 * with getline(), not a character at a time (the static mode spends its time on
 * input otherwise).
 */
struct reader {
	FILE *f;
	const char *name;	/* "<stdin>", for messages */
	long lineno;		/* line of the record last read */
	char *line;		/* that record (no newline, no CR) */
	size_t len, cap;
};

/* 1 and a new object in *out; 0 at the end; -1 after a message. */
static int read_record(struct reader *r, json_t **out)
{
	json_error_t jerr;
	json_t *v;
	ssize_t n;

	*out = NULL;
	for (;;) {
		size_t i;

		errno = 0;
		n = getline(&r->line, &r->cap, r->f);
		if (n < 0) {
			if (ferror(r->f))
				return error_errno("%s: read error", r->name);
			return 0;
		}
		r->lineno++;
		r->len = (size_t)n;
		if (r->len && r->line[r->len - 1] == '\n')
			r->len--;
		if (r->len && r->line[r->len - 1] == '\r')
			r->len--;
		for (i = 0; i < r->len && (r->line[i] == ' ' || r->line[i] == '\t'); i++)
			;
		if (i < r->len)
			break;
	}
	v = json_loadb(r->line, r->len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!v)
		return error("%s:%ld:%d: %s", r->name, r->lineno, jerr.column, jerr.text);
	if (!json_is_object(v)) {
		json_decref(v);
		return error("%s:%ld: expected a JSON object", r->name, r->lineno);
	}
	if (!json_is_string(json_object_get(v, "_type"))) {
		json_decref(v);
		return error("%s:%ld: record has no string \"_type\"", r->name, r->lineno);
	}
	*out = v;
	return 1;
}

/*
 * Read records into b until it holds --batch chunks (or many other records, or
 * the input ends).  Returns 1 when b holds records, 0 at the end of the input, -1
 * after a malformed record or a read error (reported; b keeps what came before).
 */
static int read_batch(struct reader *r, struct batch *b, const struct options *o, int *eof)
{
	size_t limit_records = (size_t)o->batch * 16;
	json_t *rec;
	int rc = 0;

	while (b->chunks < (size_t)o->batch && b->item_nr < limit_records && b->in.len < (8u << 20)) {
		struct item *it;
		const char *type;
		int commit;	/* a commit record with a message: embedded too */

		rc = read_record(r, &rec);
		if (rc <= 0) {
			*eof = 1;
			break;
		}
		ALLOC_GROW(b->item, b->item_nr + 1, b->item_alloc);
		it = &b->item[b->item_nr++];
		memset(it, 0, sizeof(*it));
		it->off = b->in.len;
		type = json_string_value(json_object_get(rec, "_type"));
		commit = !strcmp(type, "commit") && json_is_string(json_object_get(rec, "message"));
		if (!strcmp(type, "chunk") || commit) {
			json_t *text = json_object_get(rec, "text");
			if (!commit && !text)	/* say so: its vector is not its code's */
				warning("%s:%ld: a chunk record without \"text\": embedded from "
					"its other fields", r->name, r->lineno);
			if (!commit && text && !json_is_string(text)) {
				error("%s:%ld: a chunk record whose \"text\" is not a string",
				      r->name, r->lineno);
				json_decref(rec);
				b->item_nr--;
				*eof = 1;
				return -1;
			}
			it->chunk = 1;
			b->chunks++;
			if (json_object_get(rec, "vec") || json_object_get(rec, "model")) {
				/* embedded before: replace the old keys */
				char *s;
				json_object_del(rec, "vec");
				json_object_del(rec, "model");
				s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
				buf_addstr(&b->in, s ? s : "{}");
				free(s);
			} else {
				buf_add(&b->in, r->line, r->len);
			}
			it->text_off = b->texts.len;
			it->text_head = 0;
			if (commit)
				embed_commit_text(&b->texts, json_string_value(json_object_get(rec, "message")),
						  text_limit(o));
			else
				it->text_head = embed_chunk_text(&b->texts, rec, &o->fields, text_limit(o));
			it->text_len = b->texts.len - it->text_off;
		} else {
			buf_add(&b->in, r->line, r->len);
		}
		it->len = b->in.len - it->off;
		json_decref(rec);
	}
	if (rc < 0)
		return -1;
	return b->item_nr ? 1 : 0;
}

/*
 * Where the static table is kept between runs: $XDG_CACHE_HOME/ci (or
 * ~/.cache/ci), named by the model's key.  NULL when there is no such place.
 */
static char *static_cache(const struct embed_model *m)
{
	char name[128];

	snprintf(name, sizeof(name), "%s-%016llx.bin", embed_model_name(m, 1),
		 (unsigned long long)embed_model_key(m));
	return cache_file(name);
}

static void parse_fields(struct options *o, const char *list)
{
	if (embed_fields_parse(&o->fields, list) < 0)
		usage_error(usage_text, "bad --fields '%s'", list);
}

static int run_query(struct embed_model *m, const struct options *o)
{
	struct embed_work *w = embed_work_new(m);
	struct buf text = BUF_INIT, b = BUF_INIT;
	float *vec = xmalloc(embed_dim(m) * sizeof(float));
	const int32_t *ids;
	size_t n;
	int ret = EXIT_OK;

	/* verbatim, as the reference embeds it */
	buf_addstr(&text, o->query);
	ids = embed_tokenize(w, text.buf, text.len, embed_max_tokens(m), &n);
	if (o->static_mode)
		embed_static(w, &ids, &n, 1, vec);
	else
		embed_forward(w, &ids, &n, 1, vec);
	nd_begin(&b, "query");
	nd_str(&b, "text", o->query);
	nd_key(&b, "vec");
	add_vec_base64(&b, vec, embed_dim(m));
	nd_str(&b, "model", embed_model_name(m, o->static_mode));
	nd_end(&b);
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
	if (verbosity)
		fprintf(stderr, "%s: %zu tokens\n", progname, n);
	buf_release(&b);
	buf_release(&text);
	free(vec);
	embed_work_free(w);
	return ret;
}

static int run_stream(struct embed_model *m, const struct options *o)
{
	struct pool p;
	struct reader r;
	struct stats st;
	pthread_t *tid;
	size_t written = 0, i;
	int nthreads = 0, eof = 0, ret = EXIT_OK, t;

	memset(&p, 0, sizeof(p));
	p.model = m;
	p.model_name = embed_model_name(m, o->static_mode);
	p.static_mode = o->static_mode;
	p.dim = embed_dim(m);
	p.max_tokens = o->max_tokens && (size_t)o->max_tokens < embed_max_tokens(m) ?
		(size_t)o->max_tokens : embed_max_tokens(m);
	p.window = (size_t)o->threads * 2 + 2;
	p.ring = xcalloc(p.window, sizeof(*p.ring));
	for (i = 0; i < p.window; i++)
		p.ring[i] = xcalloc(1, sizeof(**p.ring));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.work, NULL);
	pthread_cond_init(&p.done, NULL);

	memset(&st, 0, sizeof(st));
	st.progress = o->progress;
	st.start = st.last = now();

	tid = xcalloc((size_t)o->threads, sizeof(*tid));
	for (t = 0; t < o->threads; t++) {
		if (pthread_create(&tid[t], NULL, worker, &p)) {
			if (!nthreads)
				die("cannot start a thread");
			break;
		}
		nthreads++;
	}

	memset(&r, 0, sizeof(r));
	r.f = stdin;
	r.name = "<stdin>";
	for (;;) {
		if (!eof && p.queued - written < p.window) {
			struct batch *b = p.ring[p.queued % p.window];
			int rc;

			batch_reset(b);
			rc = read_batch(&r, b, o, &eof);
			if (rc < 0)
				ret = EXIT_IO;
			if (b->item_nr) {
				pthread_mutex_lock(&p.lock);
				p.queued++;
				pthread_cond_signal(&p.work);
				pthread_mutex_unlock(&p.lock);
			}
			continue;
		}
		if (written == p.queued)
			break;
		{
			struct batch *b = p.ring[written % p.window];

			pthread_mutex_lock(&p.lock);
			while (!b->done)
				pthread_cond_wait(&p.done, &p.lock);
			pthread_mutex_unlock(&p.lock);
			if (ret != EXIT_IO || !ferror(stdout))
				if (b->out.len && fwrite(b->out.buf, 1, b->out.len, stdout) != b->out.len)
					eof = 1;	/* close_stdout() reports it */
			st.chunks += b->chunks;
			st.tokens += b->tokens;
			st.flops += b->flops;
			st.records += b->item_nr;
			written++;
			progress_tick(&st, 0);
		}
	}

	pthread_mutex_lock(&p.lock);
	p.closing = 1;
	pthread_cond_broadcast(&p.work);
	pthread_mutex_unlock(&p.lock);
	for (t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	if (st.chunks || st.progress)
		progress_tick(&st, 1);
	if (verbosity) {
		double el = now() - st.start;
		if (el <= 0)
			el = 1e-9;
		fprintf(stderr, "%s: %zu records, %zu chunks, %zu tokens in %.2f s: %.1f chunks/s, "
			"%.0f tokens/s, %.1f GFLOP/s, %d threads, model %s\n", progname, st.records,
			st.chunks, st.tokens, el, (double)st.chunks / el, (double)st.tokens / el,
			st.flops / el * 1e-9, nthreads, p.model_name);
	}
	free(r.line);
	for (i = 0; i < p.window; i++)
		batch_free(p.ring[i]);
	free(p.ring);
	free(tid);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.work);
	pthread_cond_destroy(&p.done);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o;
	struct embed_model *m;
	const char *dir;
	int c, ret;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	opterr = 0;
	memset(&o, 0, sizeof(o));
	o.batch = 32;
	o.threads = online_cpus();
	o.progress = -1;
	parse_fields(&o, DEFAULT_FIELDS);

	while ((c = getopt_long(argc, argv, ":j:vh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_MODEL: o.model = optarg; break;
		case OPT_STATIC: o.static_mode = 1; break;
		case OPT_DIMS: o.dims = parse_long_arg(usage_text, "--dims", optarg, 1, 4096); break;
		case OPT_FIELDS: parse_fields(&o, optarg); break;
		case OPT_MAX_TOKENS:
			o.max_tokens = (int)parse_long_arg(usage_text, "--max-tokens", optarg, 1, 4096);
			break;
		case OPT_QUERY: o.query = optarg; break;
		case OPT_BATCH:
			o.batch = (int)parse_long_arg(usage_text, "--batch", optarg, 1, 4096);
			break;
		case 'j':
			o.threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
			break;
		case OPT_PROGRESS: o.progress = 1; break;
		case OPT_NO_PROGRESS: o.progress = 0; break;
		case 'v': verbosity++; break;
		case OPT_VERSION:
			return print_version("ci-embed");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind < argc)
		usage_error(usage_text, "unexpected argument '%s'", argv[optind]);
	if (o.progress < 0)
		o.progress = !o.query && isatty(STDERR_FILENO);

	dir = embed_model_dir(o.model);
	/* a short query (a few dozen tokens): kernels for products of a few rows;
	 * for an issue's text (up to 128 tokens) SkylakeX's remain faster */
	if (o.query && strlen(o.query) <= 160)
		embed_for_queries();
	if (embed_model_open(&m, dir) < 0)
		return EXIT_IO;
	if (o.dims && embed_model_set_dims(m, (size_t)o.dims) < 0) {
		embed_model_close(m);
		return EXIT_USAGE;	/* said */
	}
	if (o.static_mode && !embed_has_static(m)) {
		embed_model_close(m);
		usage_error(usage_text, "--static: the model '%s' has no static mode (USE-lite has)",
			    dir);
	}
	if (!o.max_tokens || (size_t)o.max_tokens > embed_max_tokens(m))
		o.max_tokens = (int)embed_max_tokens(m);
	if (o.static_mode) {
		double t = now();
		char *cache = static_cache(m);

		if (cache && embed_static_load(m, cache) == 0) {
			if (verbosity)
				fprintf(stderr, "%s: static table read from %s\n", progname, cache);
		} else {
			embed_static_build(m, o.threads);
			if (cache)
				embed_static_save(m, cache);
			if (verbosity)
				fprintf(stderr, "%s: static table distilled in %.2f s\n", progname,
					now() - t);
		}
		free(cache);
	}
	ret = o.query ? run_query(m, &o) : run_stream(m, &o);
	embed_model_close(m);
	return close_stdout(ret);
}
