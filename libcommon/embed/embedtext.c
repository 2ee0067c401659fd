/*
 * embedtext.c: what of a record is embedded, and where the model is; shared by
 * ci-embed and by the commands that embed in-process (ci-index build --embed,
 * ci-couple commits), so that a vector means the same whoever computed it.
 *
 * What of a chunk is embedded (the fields) was chosen by measurement on this
 * repository and on the Linux kernel: bench/embed-eval.sh, man/ci-embed.1.
 */
#include "core/common.h"
#include "embed/embedtext.h"
#include "embed/static.h"

#include <pthread.h>
#include <sys/stat.h>

const char *const embed_field_names[EF_MAX] = {
	"path", "kind", "scope", "name", "signature", "comment", "code", "text", "words",
};

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
	for (i = fnv1a(FNV1A_BASIS, b->buf + off, len) & ws->mask; ws->slot[i].len; i = (i + 1) & ws->mask)
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
size_t embed_chunk_text(struct buf *out, json_t *rec, const struct embed_fields *o, size_t limit)
{
	json_t *tj = json_object_get(rec, "text");
	const char *text = json_string_value(tj);
	size_t text_len = json_string_length(tj);
	struct buf comment = BUF_INIT, code = BUF_INIT, part = BUF_INIT;
	size_t start = out->len, head = 0;
	int split = 0, i;

	for (i = 0; i < o->nr; i++) {
		const char *s;

		buf_reset(&part);
		switch (o->f[i]) {
		case EF_PATH:
			if ((s = jstr(rec, "path")))
				add_ident_words(&part, s, strlen(s));
			break;
		case EF_KIND:
			if ((s = jstr(rec, "kind")))
				add_squeezed(&part, s, strlen(s));
			break;
		case EF_SCOPE:
			if ((s = jstr(rec, "scope")))
				add_ident_words(&part, s, strlen(s));
			break;
		case EF_NAME:
			if ((s = jstr(rec, "name")))
				add_ident_words(&part, s, strlen(s));
			break;
		case EF_SIGNATURE:
			if ((s = jstr(rec, "signature")))
				add_squeezed(&part, s, strlen(s));
			break;
		case EF_COMMENT:
		case EF_CODE:
		case EF_WORDS:
			if (!split && text) {
				split_comment(text, text_len, comment_style(jstr(rec, "lang")),
					      &comment, &code);
				split = 1;
			}
			if (o->f[i] == EF_COMMENT)
				buf_add(&part, comment.buf, comment.len);
			else if (o->f[i] == EF_CODE)
				buf_add(&part, code.buf, code.len);
			else
				add_words(&part, code.buf, code.len, limit);
			break;
		case EF_TEXT:
			if (text)
				add_squeezed(&part, text, text_len);
			break;
		case EF_MAX:
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
			else if (o->f[i] == EF_NAME)
				head = n;	/* the name comes first */
			buf_add(out, part.buf, n);
		}
		if (out->len - start >= limit)
			break;
	}
	buf_release(&comment);
	buf_release(&code);
	buf_release(&part);
	return head;
}


int embed_fields_parse(struct embed_fields *out, const char *list)
{
	const char *p = list;

	out->nr = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		int f;

		for (f = 0; f < EF_MAX; f++)
			if (strlen(embed_field_names[f]) == n && !strncmp(p, embed_field_names[f], n))
				break;
		if (f == EF_MAX)
			return error("unknown field '%.*s'", (int)n, p);
		if (out->nr == EF_MAX)
			return error("too many fields");
		out->f[out->nr++] = (enum embed_field)f;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!out->nr)
		return error("no field");
	return 0;
}

void embed_commit_text(struct buf *out, const char *message, size_t limit)
{
	size_t start = out->len, n;

	if (!message)
		return;
	add_squeezed(out, message, strlen(message));
	n = out->len - start;
	if (n > limit) {
		n = limit;	/* at a character boundary */
		while (n && ((unsigned char)out->buf[start + n] & 0xc0) == 0x80)
			n--;
		buf_setlen(out, start + n);
	}
}

size_t embed_text_limit(int max_tokens)
{
	return (size_t)(max_tokens > 0 ? max_tokens : 128) * 64;
}

/* USE-lite's directory: the build tree's (scripts/setup), else the installed one. */
static const char *use_lite_dir(void)
{
	struct stat st;

#ifdef CI_MODEL_BUILD_DIR
	if (stat(CI_MODEL_BUILD_DIR "/model.json", &st) == 0)
		return CI_MODEL_BUILD_DIR;
#endif
#ifdef CI_MODEL_INSTALL_DIR
	(void)st;
	return CI_MODEL_INSTALL_DIR;
#else
	(void)st;
	return "model";
#endif
}

/* ci-code's files: the source tree's share/models, else the installed ones. */
static const char *ci_code_path(void)
{
#ifdef CI_MODELS_SRC_DIR
	if (static_model_probe(CI_MODELS_SRC_DIR "/ci-code"))
		return CI_MODELS_SRC_DIR "/ci-code";
#endif
#ifdef CI_MODELS_INSTALL_DIR
	return CI_MODELS_INSTALL_DIR "/ci-code";
#else
	return "ci-code";
#endif
}

const char *embed_model_resolve(const char *name)
{
	if (!strcmp(name, "use-lite"))
		return use_lite_dir();
	if (!strcmp(name, "ci-code"))
		return ci_code_path();
	return name;
}

/* Is s "/<digits>"? */
static int dims_suffix(const char *s)
{
	return s[0] == '/' && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1);
}

int embed_model_known(const char *name)
{
	return name && (!strcmp(name, "use-lite") || !strcmp(name, "ci-code") ||
			(!strncmp(name, "ci-code", 7) && dims_suffix(name + 7)));
}

int embed_model_is_static(const char *spec)
{
	const char *sl = strrchr(spec, '/');
	int r;

	if (static_model_probe(spec))
		return 1;
	if (!sl || sl == spec || !dims_suffix(sl))
		return 0;
	{
		char *b = xstrndup(spec, (size_t)(sl - spec));
		r = static_model_probe(embed_model_resolve(b));
		free(b);
	}
	return r;
}

const char *embed_model_dir(const char *opt)
{
	const char *env = getenv("CI_MODEL");

	if (opt)
		return embed_model_resolve(opt);
	if (env && *env)
		return embed_model_resolve(env);
	return embed_model_resolve(EMBED_DEFAULT_MODEL);
}

const char *embed_model_dir_for(const char *opt, const char *index_model)
{
	const char *env = getenv("CI_MODEL");

	if (!opt && !(env && *env) && embed_model_known(index_model))
		return embed_model_resolve(index_model);
	return embed_model_dir(opt);
}

/* ---- embedding a list of texts on threads ---- */

struct embed_job {
	struct embed_model *m;		/* the model */
	int static_mode;		/* use the static table */
	size_t max_tokens;		/* per text */
	const char *const *texts;	/* this thread's texts */
	const size_t *lens;
	const size_t *heads;		/* the bytes of each that are a chunk's name, or NULL */
	size_t n;			/* how many */
	float *out;			/* their vectors */
	size_t tokens;			/* tokens embedded */
	int thread;			/* runs on a thread of its own */
};

#define EMBED_TEXTS_BATCH 32

static void *embed_job_run(void *arg)
{
	struct embed_job *j = arg;
	struct embed_work *w = embed_work_new(j->m);
	int32_t *ids[EMBED_TEXTS_BATCH];
	size_t len[EMBED_TEXTS_BATCH], nhead[EMBED_TEXTS_BATCH], i, k;

	for (i = 0; i < j->n; i += EMBED_TEXTS_BATCH) {
		size_t nb = j->n - i < EMBED_TEXTS_BATCH ? j->n - i : EMBED_TEXTS_BATCH;

		for (k = 0; k < nb; k++) {
			const int32_t *t = embed_tokenize_head(w, j->texts[i + k], j->lens[i + k],
							       j->heads ? j->heads[i + k] : 0, j->max_tokens,
							       &len[k], &nhead[k]);
			ids[k] = xmalloc((len[k] + 1) * sizeof(**ids));
			if (len[k])
				memcpy(ids[k], t, len[k] * sizeof(**ids));
			j->tokens += len[k];
		}
		if (j->static_mode)
			embed_static(w, (const int32_t *const *)ids, len, nb, j->out + i * embed_dim(j->m));
		else
			embed_forward_head(w, (const int32_t *const *)ids, len, nhead, nb,
					   j->out + i * embed_dim(j->m));
		for (k = 0; k < nb; k++)
			free(ids[k]);
	}
	embed_work_free(w);
	return NULL;
}

size_t embed_texts(struct embed_model *m, int static_mode, size_t max_tokens, int threads,
		   const char *const *texts, const size_t *lens, const size_t *heads, size_t n, float *out)
{
	struct embed_job *jobs;
	pthread_t *tid;
	size_t per, tokens = 0, off = 0;
	int t;

	if (!n)
		return 0;
	if (!max_tokens || max_tokens > embed_max_tokens(m))
		max_tokens = embed_max_tokens(m);
	if (threads < 1)
		threads = 1;
	/* whole batches per thread, so that each sgemm stays large */
	per = (n + (size_t)threads - 1) / (size_t)threads;
	per = (per + EMBED_TEXTS_BATCH - 1) / EMBED_TEXTS_BATCH * EMBED_TEXTS_BATCH;
	jobs = xcalloc((size_t)threads, sizeof(*jobs));
	tid = xcalloc((size_t)threads, sizeof(*tid));
	for (t = 0; t < threads && off < n; t++) {
		struct embed_job *j = &jobs[t];

		j->m = m;
		j->static_mode = static_mode;
		j->max_tokens = max_tokens;
		j->texts = texts + off;
		j->lens = lens + off;
		j->heads = heads ? heads + off : NULL;
		j->n = n - off < per ? n - off : per;
		j->out = out + off * embed_dim(m);
		off += j->n;
		/* the last part runs on this thread, and any part no thread would take */
		if (off < n && pthread_create(&tid[t], NULL, embed_job_run, j) == 0)
			j->thread = 1;
		else
			embed_job_run(j);
	}
	for (t = 0; t < threads; t++)
		if (jobs[t].thread)
			pthread_join(tid[t], NULL);
	for (t = 0; t < threads; t++)
		tokens += jobs[t].tokens;
	free(jobs);
	free(tid);
	return tokens;
}
