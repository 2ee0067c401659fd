/*
 * ci-embed: add a sentence embedding ("vec", "model") to every chunk record of an
 * NDJSON stream, or print the embedding of a query.
 *
 * Shaped by whole repositories, tens of thousands of chunks on a few cores: the main
 * thread reads records into batches and writes finished batches in input order,
 * while -j workers tokenize and embed whole batches at once, so each matrix product
 * of the transformer is one large BLIS sgemm (see libcommon/embed.c).  Records
 * other than chunks ride along in their batch and come out untouched, in place.
 *
 * What of a chunk is embedded (--fields) was chosen by measurement on this
 * repository and on the Linux kernel: bench/embed-eval.sh, man/ci-embed.1.
 */
#include "common.h"
#include "embed.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

/* What of a chunk is embedded, unless --fields says otherwise (bench/embed-eval.sh). */
#define DEFAULT_FIELDS "name,signature,comment,words"

static const char usage_text[] =
	"usage: ci-embed [--model <dir>] [--static] [--fields <list>] [--max-tokens <n>] [--batch <n>] [-j <n>]\n"
	"   or: ci-embed [--model <dir>] [--static] --query <text>\n"
	"\n"
	"Read records (NDJSON) on standard input and write them back, each chunk record\n"
	"with \"vec\" (base64 of little-endian float32) and \"model\" added; or print the\n"
	"vector of one query text.\n"
	"\n"
	"      --model <dir>       the model directory (default: $CI_MODEL, else the one\n"
	"                          scripts/setup fetched, else the installed one): USE-lite\n"
	"                          (model.json) or a HuggingFace BERT model (config.json,\n"
	"                          vocab.txt, model.safetensors)\n"
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
	"  -h, --help              show this help and exit\n";

enum {
	OPT_MODEL = 256, OPT_STATIC, OPT_FIELDS, OPT_MAX_TOKENS, OPT_QUERY, OPT_BATCH, OPT_PROGRESS,
	OPT_NO_PROGRESS,
};

static const struct option long_options[] = {
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "static", no_argument, NULL, OPT_STATIC },
	{ "fields", required_argument, NULL, OPT_FIELDS },
	{ "max-tokens", required_argument, NULL, OPT_MAX_TOKENS },
	{ "query", required_argument, NULL, OPT_QUERY },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "threads", required_argument, NULL, 'j' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The parts of a chunk record that --fields can name. */
enum field {
	F_PATH, F_KIND, F_SCOPE, F_NAME, F_SIGNATURE, F_COMMENT, F_CODE, F_TEXT, F_WORDS, F_MAX
};
static const char *const field_names[F_MAX] = {
	"path", "kind", "scope", "name", "signature", "comment", "code", "text", "words",
};

struct options {
	const char *model;		/* --model, or NULL */
	int static_mode;		/* --static */
	enum field fields[F_MAX];	/* --fields, in order */
	int fields_nr;
	const char *query;		/* --query, or NULL */
	int max_tokens;			/* --max-tokens, 0: the model's limit */
	int batch;			/* --batch */
	int threads;			/* -j */
	int progress;			/* 1 on, 0 off, -1 when stderr is a terminal */
};

/* ---- the text of a chunk ------------------------------------------------------ */

/*
 * Append s[0..n) with each run of white space as one space, none at its end, and
 * one before it when b is not empty and s starts with white space.
 */
static void add_squeezed(struct buf *b, const char *s, size_t n)
{
	size_t i;
	int space = b->len > 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			space = b->len > 0;
			continue;
		}
		if (space) {
			buf_addch(b, ' ');
			space = 0;
		}
		buf_addch(b, (char)c);
	}
}

static int is_ident(int c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

/*
 * Append identifier s[0..n) as lowercase words: parseLongArg, parse_long_arg and
 * PARSE_LONG_ARG all give "parse long arg"; HTTPServer gives "http server".
 */
static void add_ident_words(struct buf *b, const char *s, size_t n)
{
	size_t i;
	int prev = 0;	/* 0 none, 1 lower or digit, 2 upper */

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		int up = c >= 'A' && c <= 'Z';
		int lo = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!up && !lo) {
			prev = 0;
			continue;
		}
		if (b->len && ((prev == 0) || (up && prev == 1) ||
			       (up && prev == 2 && i + 1 < n && s[i + 1] >= 'a' && s[i + 1] <= 'z')))
			if (b->buf[b->len - 1] != ' ')
				buf_addch(b, ' ');
		buf_addch(b, (char)(up ? c - 'A' + 'a' : c));
		prev = up ? 2 : 1;
	}
}

enum comment_style { CS_NONE, CS_C, CS_HASH, CS_PROSE };

static enum comment_style comment_style(const char *lang)
{
	static const char *const c_like[] = {
		"c", "cpp", "java", "javascript", "typescript", "tsx", "go", "rust", "csharp",
		"php", "kotlin", "swift", "scala",
	};
	static const char *const hash[] = { "python", "ruby", "bash", "sh", "perl", "r", "yaml" };
	size_t i;

	if (!lang)
		return CS_NONE;
	for (i = 0; i < ARRAY_SIZE(c_like); i++)
		if (!strcmp(lang, c_like[i]))
			return CS_C;
	for (i = 0; i < ARRAY_SIZE(hash); i++)
		if (!strcmp(lang, hash[i]))
			return CS_HASH;
	if (!strcmp(lang, "markdown") || !strcmp(lang, "text"))
		return CS_PROSE;
	return CS_NONE;
}

/* A buffer that squeezes white space: runs become one space, none at the start. */
struct squeeze {
	struct buf *b;
	int space;		/* white space seen since the last character */
};

static inline void sq_put(struct squeeze *q, int c)
{
	if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
		q->space = 1;
		return;
	}
	if (q->space && q->b->len)
		buf_addch(q->b, ' ');
	q->space = 0;
	buf_addch(q->b, (char)c);
}

/*
 * Split a chunk's text into its comments and its code, white space squeezed:
 * comment markers and the "*" that start the lines of block comments are dropped;
 * strings stay code (so "http://" is not a comment); Python's triple-quoted
 * strings (docstrings) count as comments.  Prose (Markdown) is all comment; text
 * of an unknown language all code.
 */
static void split_comment(const char *s, size_t n, enum comment_style cs,
			  struct buf *comment, struct buf *code)
{
	struct squeeze cm = { comment, 0 }, cd = { code, 0 };
	enum { CODE, LINE, BLOCK, STR, DOC } st = CODE;
	int quote = 0, line_start = 0;
	size_t i;

	if (cs == CS_PROSE || cs == CS_NONE) {
		add_squeezed(cs == CS_PROSE ? comment : code, s, n);
		return;
	}
	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i], c1 = i + 1 < n ? (unsigned char)s[i + 1] : 0;

		switch (st) {
		case CODE:
			if (cs == CS_C && c == '/' && c1 == '/') {
				st = LINE;
				i++;
				while (i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '!'))
					i++;
				sq_put(&cd, ' ');
			} else if (cs == CS_C && c == '/' && c1 == '*') {
				st = BLOCK;
				line_start = 0;
				i++;
				while (i + 1 < n && (s[i + 1] == '*' || s[i + 1] == '!'))
					i++;
				sq_put(&cd, ' ');
			} else if (cs == CS_HASH && c == '#' && !(i == 0 && c1 == '!')) {
				st = LINE;
				while (i + 1 < n && s[i + 1] == '#')
					i++;
				sq_put(&cd, ' ');
			} else if (cs == CS_HASH && (c == '"' || c == '\'') && c1 == c &&
				   i + 2 < n && s[i + 2] == c) {
				st = DOC;
				quote = c;
				i += 2;
				sq_put(&cd, ' ');
			} else if (c == '"' || c == '\'' || c == '`') {
				st = STR;
				quote = c;
				sq_put(&cd, c);
			} else {
				sq_put(&cd, c);
			}
			break;
		case LINE:
			if (c == '\n') {
				st = CODE;
				sq_put(&cm, ' ');
				sq_put(&cd, ' ');
			} else {
				sq_put(&cm, c);
			}
			break;
		case BLOCK:
			if (c == '*' && c1 == '/') {
				st = CODE;
				i++;
				sq_put(&cm, ' ');
			} else if (c == '\n') {
				line_start = 1;
				sq_put(&cm, ' ');
			} else if (line_start && (c == ' ' || c == '\t' || c == '*')) {
				;	/* the decoration of a block comment's lines */
			} else {
				line_start = 0;
				sq_put(&cm, c);
			}
			break;
		case DOC:
			if (c == quote && c1 == quote && i + 2 < n && s[i + 2] == quote) {
				st = CODE;
				i += 2;
				sq_put(&cm, ' ');
			} else {
				sq_put(&cm, c);
			}
			break;
		case STR:
			sq_put(&cd, c);
			if (c == '\\' && i + 1 < n) {
				sq_put(&cd, c1);
				i++;
			} else if (c == quote || (c == '\n' && quote != '`')) {
				st = CODE;
			}
			break;
		}
	}
}

/* A set of words, each the (offset, length) of its first copy in a buffer. */
struct word_set {
	struct { uint32_t off, len; } *slot;	/* len 0: free */
	size_t mask;				/* slots - 1 */
	size_t nr;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Is word (at b->buf + off, len bytes) new?  Then remember it. */
static int word_set_add(struct word_set *ws, const struct buf *b, size_t off, size_t len)
{
	size_t i;

	if ((ws->nr + 1) * 2 > ws->mask + 1) {
		struct word_set old = *ws;
		ws->mask = old.mask ? old.mask * 2 + 1 : 255;
		ws->slot = xcalloc(ws->mask + 1, sizeof(*ws->slot));
		ws->nr = 0;
		for (i = 0; old.slot && i <= old.mask; i++)
			if (old.slot[i].len)
				word_set_add(ws, b, old.slot[i].off, old.slot[i].len);
		free(old.slot);
	}
	for (i = hash_bytes(b->buf + off, len) & ws->mask; ws->slot[i].len; i = (i + 1) & ws->mask)
		if (ws->slot[i].len == len && !memcmp(b->buf + ws->slot[i].off, b->buf + off, len))
			return 0;
	ws->slot[i].off = (uint32_t)off;
	ws->slot[i].len = (uint32_t)len;
	ws->nr++;
	return 1;
}

/*
 * Append the identifiers of s[0..n) as words (add_ident_words), each word of two
 * letters or more once, in order, until b holds limit bytes.
 */
static void add_words(struct buf *b, const char *s, size_t n, size_t limit)
{
	struct buf w = BUF_INIT;
	struct word_set ws = { NULL, 0, 0 };
	size_t i = 0;

	while (i < n && b->len < limit) {
		size_t j, k;

		if (!is_ident((unsigned char)s[i], 1)) {
			i++;
			continue;
		}
		for (j = i; j < n && is_ident((unsigned char)s[j], 0); j++)
			;
		buf_reset(&w);
		add_ident_words(&w, s + i, j - i);
		i = j;
		for (k = 0; k < w.len; ) {
			size_t e = k, mark = b->len;

			while (e < w.len && w.buf[e] != ' ')
				e++;
			if (e - k >= 2) {
				if (b->len)
					buf_addch(b, ' ');
				buf_add(b, w.buf + k, e - k);
				if (!word_set_add(&ws, b, b->len - (e - k), e - k))
					buf_setlen(b, mark);	/* seen: take it back */
			}
			k = e + 1;
		}
	}
	free(ws.slot);
	buf_release(&w);
}

static const char *jstr(json_t *rec, const char *key)
{
	return json_string_value(json_object_get(rec, key));
}

/*
 * The text embedded for chunk record rec: its --fields, in order.  Only its
 * first limit bytes or so can matter (the tokenizer reads no further): long parts
 * are cut there.
 */
static void chunk_text(struct buf *out, json_t *rec, const struct options *o, size_t limit)
{
	json_t *tj = json_object_get(rec, "text");
	const char *text = json_string_value(tj);
	size_t text_len = json_string_length(tj);
	struct buf comment = BUF_INIT, code = BUF_INIT, part = BUF_INIT;
	size_t start = out->len;
	int split = 0, i;

	for (i = 0; i < o->fields_nr; i++) {
		const char *s;

		buf_reset(&part);
		switch (o->fields[i]) {
		case F_PATH:
			if ((s = jstr(rec, "path")))
				add_ident_words(&part, s, strlen(s));
			break;
		case F_KIND:
			if ((s = jstr(rec, "kind")))
				add_squeezed(&part, s, strlen(s));
			break;
		case F_SCOPE:
			if ((s = jstr(rec, "scope")))
				add_ident_words(&part, s, strlen(s));
			break;
		case F_NAME:
			if ((s = jstr(rec, "name")))
				add_ident_words(&part, s, strlen(s));
			break;
		case F_SIGNATURE:
			if ((s = jstr(rec, "signature")))
				add_squeezed(&part, s, strlen(s));
			break;
		case F_COMMENT:
		case F_CODE:
		case F_WORDS:
			if (!split && text) {
				split_comment(text, text_len, comment_style(jstr(rec, "lang")),
					      &comment, &code);
				split = 1;
			}
			if (o->fields[i] == F_COMMENT)
				buf_add(&part, comment.buf, comment.len);
			else if (o->fields[i] == F_CODE)
				buf_add(&part, code.buf, code.len);
			else
				add_words(&part, code.buf, code.len, limit);
			break;
		case F_TEXT:
			if (text)
				add_squeezed(&part, text, text_len);
			break;
		case F_MAX:
			break;
		}
		if (part.len) {
			size_t n = part.len;
			if (n > limit) {
				n = limit;	/* at a character boundary */
				while (n && ((unsigned char)part.buf[n] & 0xc0) == 0x80)
					n--;
			}
			if (out->len > start)
				buf_addch(out, ' ');
			buf_add(out, part.buf, n);
		}
		if (out->len - start >= limit)
			break;
	}
	buf_release(&comment);
	buf_release(&code);
	buf_release(&part);
}

/* ---- output ---------------------------------------------------------------------- */

/* Append `"<base64 of v[0..n) as little-endian float32>"`. */
static void add_vec_base64(struct buf *b, const float *v, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, len = n * 4, k;
	unsigned char *bytes = xmalloc(len + 2);
	char *o;

	for (i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		bytes[4 * i] = (unsigned char)u;
		bytes[4 * i + 1] = (unsigned char)(u >> 8);
		bytes[4 * i + 2] = (unsigned char)(u >> 16);
		bytes[4 * i + 3] = (unsigned char)(u >> 24);
	}
	buf_grow(b, (len + 2) / 3 * 4 + 2);
	o = b->buf + b->len;
	*o++ = '"';
	for (k = 0; k + 2 < len; k += 3) {
		unsigned x = (unsigned)bytes[k] << 16 | (unsigned)bytes[k + 1] << 8 | bytes[k + 2];
		*o++ = tab[x >> 18];
		*o++ = tab[(x >> 12) & 63];
		*o++ = tab[(x >> 6) & 63];
		*o++ = tab[x & 63];
	}
	if (k < len) {
		unsigned x = (unsigned)bytes[k] << 16 | (k + 1 < len ? (unsigned)bytes[k + 1] << 8 : 0);
		*o++ = tab[x >> 18];
		*o++ = tab[(x >> 12) & 63];
		*o++ = k + 1 < len ? tab[(x >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o++ = '"';
	buf_setlen(b, (size_t)(o - b->buf));
	free(bytes);
}

/* ---- batches ------------------------------------------------------------------------ */

/* A record read, waiting in its batch. */
struct item {
	size_t off, len;	/* the record's text in batch->in */
	size_t text_off;	/* chunks: the text to embed, in batch->texts */
	size_t text_len;
	int chunk;		/* 1: a chunk record, to embed */
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
	float *vec = xmalloc((b->chunks + 1) * p->dim * sizeof(float));
	size_t i, c;

	for (i = c = 0; i < b->item_nr; i++) {
		const struct item *it = &b->item[i];
		const int32_t *t;
		if (!it->chunk)
			continue;
		t = embed_tokenize(w, b->texts.buf + it->text_off, it->text_len, p->max_tokens,
				   &len[c]);
		ids[c] = xmalloc((len[c] + 1) * sizeof(**ids));
		if (len[c])
			memcpy(ids[c], t, len[c] * sizeof(**ids));
		b->tokens += len[c];
		c++;
	}
	if (p->static_mode) {
		embed_static(w, (const int32_t *const *)ids, len, c, vec);
	} else if (c) {
		embed_forward(w, (const int32_t *const *)ids, len, c, vec);
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
	return (size_t)(o->max_tokens ? o->max_tokens : 128) * 64;
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
		if (!strcmp(type, "chunk")) {
			json_t *text = json_object_get(rec, "text");
			if (text && !json_is_string(text)) {
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
			chunk_text(&b->texts, rec, o, text_limit(o));
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

/* The model directory: --model, $CI_MODEL, the build tree's, the installed one. */
static const char *model_dir(const struct options *o)
{
	const char *env = getenv("CI_MODEL");
	struct stat st;

	if (o->model)
		return o->model;
	if (env && *env)
		return env;
#ifdef CI_MODEL_BUILD_DIR
	if (stat(CI_MODEL_BUILD_DIR "/model.json", &st) == 0)
		return CI_MODEL_BUILD_DIR;
#endif
#ifdef CI_MODEL_INSTALL_DIR
	return CI_MODEL_INSTALL_DIR;
#else
	(void)st;
	return "model";
#endif
}

/*
 * Where the static table is kept between runs: $XDG_CACHE_HOME/ci (or
 * ~/.cache/ci), named by the model's key.  NULL when there is no such place.
 */
static char *static_cache(const struct embed_model *m)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir, *path;

	if (xdg && *xdg == '/') {
		dir = xasprintf("%s/ci", xdg);
	} else if (home && *home == '/') {
		char *cache = xasprintf("%s/.cache", home);
		mkdir(cache, 0755);
		free(cache);
		dir = xasprintf("%s/.cache/ci", home);
	} else {
		return NULL;
	}
	mkdir(dir, 0755);
	path = xasprintf("%s/%s-%016llx.bin", dir, embed_model_name(m, 1),
			 (unsigned long long)embed_model_key(m));
	free(dir);
	return path;
}

static void parse_fields(struct options *o, const char *list)
{
	const char *p = list;

	o->fields_nr = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		int f;

		for (f = 0; f < F_MAX; f++)
			if (strlen(field_names[f]) == n && !strncmp(p, field_names[f], n))
				break;
		if (f == F_MAX)
			usage_error(usage_text, "--fields: unknown field '%.*s'", (int)n, p);
		if (o->fields_nr == F_MAX)
			usage_error(usage_text, "--fields: too many fields");
		o->fields[o->fields_nr++] = (enum field)f;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!o->fields_nr)
		usage_error(usage_text, "--fields: no field");
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

	dir = model_dir(&o);
	if (embed_model_open(&m, dir) < 0)
		return EXIT_IO;
	if (o.static_mode && !embed_has_static(m)) {
		embed_model_close(m);
		usage_error(usage_text, "--static: the model in '%s' has no static mode (USE-lite has)",
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
