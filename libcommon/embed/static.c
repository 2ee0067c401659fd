/*
 * embed/static.c: ci-code, the static embedding model (see static.h).
 *
 * Shaped by whole repositories on two cores: a chunk costs its tokenization
 * (a pass over its bytes, a hash lookup a word) and a sum of a few hundred
 * int8 rows, tens of thousands of chunks a second; nothing is computed at load
 * but the vocabulary's hash table, so a query (ci-rank) starts at once.
 */
#include "core/common.h"
#include "embed/static.h"
#include "embed/safetensors.h"

#include <math.h>
#include <sys/stat.h>

#define MAX_WORD 48		/* longer words are not words */
#define DEFAULT_MAX_WORDS 512	/* scripts/train-embed's MAX_WORDS */

struct static_model {
	struct safetensors *st;		/* the weights' file, mapped */
	char *weights_path, *vocab_path;
	char *name;			/* metadata "name" */
	char *id;			/* name, or name/<out> when cut */
	const int8_t *emb;		/* [rows][dim] */
	const float *scale;		/* [rows] */
	size_t rows, dim;
	size_t out;			/* the vectors' dimension: a prefix of dim */
	size_t max_words;
	float name_weight;		/* metadata "name_weight": a chunk's name's words count so much */
	uint64_t fingerprint;		/* of the weights (static_model_fingerprint()), at open */
	char *words;			/* the vocabulary file's text, NUL-terminated lines */
	uint32_t *word_off;		/* [rows]: each word's offset in words */
	uint8_t *word_len;		/* [rows] */
	uint32_t *slot;			/* hash table: row + 1, 0 free */
	size_t mask;			/* its size - 1 */
};

struct static_work {
	const struct static_model *m;
	uint32_t *stamp;		/* [rows]: the text that last took the row */
	uint32_t text;			/* this text's stamp */
	int32_t *ids;			/* the rows of a text */
	size_t ids_alloc;
};

static uint64_t word_hash(const char *w, size_t n)
{
	return fnv1a(FNV1A_BASIS, w, n);
}

/* The row of word w[0..n), or -1. */
static int32_t lookup(const struct static_model *m, const char *w, size_t n)
{
	size_t i;

	for (i = word_hash(w, n) & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
		uint32_t r = m->slot[i] - 1;
		if (m->word_len[r] == n && !memcmp(m->words + m->word_off[r], w, n))
			return (int32_t)r;
	}
	return -1;
}

static int is_word_byte(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Read the vocabulary file: rows lines, each a word; build the hash table. */
static int load_vocab(struct static_model *m)
{
	char *t;
	size_t len, r = 0, p = 0, size;

	if (read_file(m->vocab_path, &m->words, &len) < 0)
		return -1;
	t = m->words;
	m->word_off = xcalloc(m->rows, sizeof(*m->word_off));
	m->word_len = xcalloc(m->rows, sizeof(*m->word_len));
	for (size = 2; size < m->rows * 2; size *= 2)
		;
	m->mask = size - 1;
	m->slot = xcalloc(size, sizeof(*m->slot));
	while (p < len) {
		size_t e = p, i;

		while (e < len && t[e] != '\n')
			e++;
		if (r == m->rows)
			return error("%s:%zu: more words than the %zu rows of '%s'", m->vocab_path,
				     r + 1, m->rows, m->weights_path);
		if (e - p < 2 || e - p > MAX_WORD || !(t[p] >= 'a' && t[p] <= 'z'))
			return error("%s:%zu: not a word", m->vocab_path, r + 1);
		for (i = p; i < e; i++)
			if (!is_word_byte((unsigned char)t[i]))
				return error("%s:%zu: not a word", m->vocab_path, r + 1);
		if (lookup(m, t + p, e - p) >= 0)
			return error("%s:%zu: '%.*s' twice", m->vocab_path, r + 1, (int)(e - p), t + p);
		m->word_off[r] = (uint32_t)p;
		m->word_len[r] = (uint8_t)(e - p);
		for (i = word_hash(t + p, e - p) & m->mask; m->slot[i]; i = (i + 1) & m->mask)
			;
		m->slot[i] = (uint32_t)r + 1;
		r++;
		p = e + 1;
	}
	if (r != m->rows)
		return error("%s: %zu words, but '%s' has %zu rows", m->vocab_path, r,
			     m->weights_path, m->rows);
	return 0;
}

/* <path>.safetensors and <path>.vocab, or path itself when it ends so. */
static void model_paths(const char *path, char **weights, char **vocab)
{
	size_t n = strlen(path);
	static const char ext[] = ".safetensors";

	if (n > sizeof(ext) - 1 && !strcmp(path + n - (sizeof(ext) - 1), ext))
		n -= sizeof(ext) - 1;
	*weights = xasprintf("%.*s%s", (int)n, path, ext);
	*vocab = xasprintf("%.*s.vocab", (int)n, path);
}

int static_model_probe(const char *path)
{
	char *w, *v;
	struct stat st;
	int ok;

	model_paths(path, &w, &v);
	ok = stat(w, &st) == 0 && S_ISREG(st.st_mode) && stat(v, &st) == 0;
	free(w);
	free(v);
	return ok;
}

/* Enough of the weights that any training changes them, little enough for a query's open. */
static uint64_t fingerprint_of(const struct static_model *m)
{
	size_t n = m->rows * m->dim < 65536 ? m->rows * m->dim : 65536;
	size_t rows = m->rows < 4096 ? m->rows : 4096;
	uint64_t h = fnv1a(FNV1A_BASIS, m->scale, rows * sizeof(*m->scale));

	h = fnv1a(h, m->emb, n);
	h = fnv1a(h, &m->name_weight, sizeof(m->name_weight));
	return h ? h : 1;
}

int static_model_open(struct static_model **out, const char *path)
{
	struct static_model *m = xcalloc(1, sizeof(*m));
	long dims[2];
	const char *fmt, *name, *mw, *nw;
	int ret = -1;

	*out = NULL;
	model_paths(path, &m->weights_path, &m->vocab_path);
	if (safetensors_open(&m->st, m->weights_path) < 0)
		goto done;
	fmt = safetensors_meta(m->st, "format");
	if (!fmt || strcmp(fmt, "ci-static-1")) {
		error("%s: not a ci static model (metadata \"format\" is not \"ci-static-1\")",
		      m->weights_path);
		goto done;
	}
	if (safetensors_shape(m->st, "embeddings", dims, 2) != 2 || dims[0] < 1 || dims[1] < 1 ||
	    dims[0] > (1L << 24) || dims[1] > 4096) {
		error("%s: no tensor 'embeddings' of two dimensions", m->weights_path);
		goto done;
	}
	m->rows = (size_t)dims[0];
	m->dim = m->out = (size_t)dims[1];
	if (safetensors_i8(&m->emb, m->st, "embeddings", 2, dims) < 0 ||
	    safetensors_f32(&m->scale, m->st, "scales", 1, dims) < 0)
		goto done;
	name = safetensors_meta(m->st, "name");
	m->name = xstrdup(name && *name ? name : "ci-static");
	m->id = xstrdup(m->name);
	mw = safetensors_meta(m->st, "max_words");
	m->max_words = mw && atol(mw) > 0 && atol(mw) <= 65536 ? (size_t)atol(mw) : DEFAULT_MAX_WORDS;
	m->name_weight = 1;
	if ((nw = safetensors_meta(m->st, "name_weight"))) {
		char *end;
		double v = strtod(nw, &end);
		if (end == nw || *end || !(v > 0 && v <= 1000)) {
			error("%s: metadata \"name_weight\" is '%s', not a number above 0 and at most 1000",
			      m->weights_path, nw);
			goto done;
		}
		m->name_weight = (float)v;
	}
	m->fingerprint = fingerprint_of(m);
	if (load_vocab(m) < 0)
		goto done;
	*out = m;
	m = NULL;
	ret = 0;
done:
	static_model_close(m);
	return ret;
}

void static_model_close(struct static_model *m)
{
	if (!m)
		return;
	safetensors_close(m->st);
	free(m->weights_path);
	free(m->vocab_path);
	free(m->name);
	free(m->id);
	free(m->words);
	free(m->word_off);
	free(m->word_len);
	free(m->slot);
	free(m);
}

const char *static_model_name(const struct static_model *m)
{
	return m->id;
}

size_t static_model_dim(const struct static_model *m)
{
	return m->out;
}

size_t static_model_full_dim(const struct static_model *m)
{
	return m->dim;
}

int static_model_set_dims(struct static_model *m, size_t dims)
{
	if (dims < 1 || dims > m->dim)
		return error("%s: dimensions %zu: the model's vectors have 1 to %zu", m->weights_path, dims,
			     m->dim);
	m->out = dims;
	free(m->id);
	m->id = dims == m->dim ? xstrdup(m->name) : xasprintf("%s/%zu", m->name, dims);
	return 0;
}

size_t static_model_max_words(const struct static_model *m)
{
	return m->max_words;
}

float static_model_name_weight(const struct static_model *m)
{
	return m->name_weight;
}

uint64_t static_model_fingerprint(const struct static_model *m)
{
	return m->fingerprint;
}

const char *static_model_weights_path(const struct static_model *m)
{
	return m->weights_path;
}

const char *static_model_vocab_path(const struct static_model *m)
{
	return m->vocab_path;
}

struct static_work *static_work_new(const struct static_model *m)
{
	struct static_work *w = xcalloc(1, sizeof(*w));

	w->m = m;
	w->stamp = xcalloc(m->rows, sizeof(*w->stamp));
	return w;
}

void static_work_free(struct static_work *w)
{
	if (!w)
		return;
	free(w->stamp);
	free(w->ids);
	free(w);
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * Cut text[0..len) into words (runs of ASCII letters and digits, cut at
 * camelCase boundaries), each given to fn as cut (not yet lowercased) until
 * fn returns nonzero.
 */
static void cut_words(const char *text, size_t len, int (*fn)(const char *s, size_t n, void *arg), void *arg)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		size_t j, k, start;
		int prev = 0;	/* 1 lower or digit, 2 upper */

		if (!is_alnum(s[i])) {
			i++;
			continue;
		}
		for (j = i; j < len && is_alnum(s[j]); j++)
			;
		for (k = start = i; k < j; k++) {
			int up = s[k] >= 'A' && s[k] <= 'Z';
			if (k > start && up &&
			    (prev == 1 || (prev == 2 && k + 1 < j && s[k + 1] >= 'a' && s[k + 1] <= 'z'))) {
				if (fn(text + start, k - start, arg))
					return;
				start = k;
			}
			prev = up ? 2 : 1;
		}
		if (fn(text + start, j - start, arg))
			return;
		i = j;
	}
}

/* Word s[0..n) lowercased into low (MAX_WORD bytes), if it is one that counts: 1, else 0. */
static int word_lower(const char *s, size_t n, char *low)
{
	if (n < 2 || n > MAX_WORD || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	return 1;
}

struct take {
	struct static_work *w;
	size_t max, *nr;
	const char *text;		/* the text cut */
	size_t head, *nhead;		/* words that start in text[0..head) are counted in *nhead */
};

/* Take word s[0..n) (as cut, not yet lowercased) if it counts and is new; 1 when full. */
static int take_word(const char *s, size_t n, void *arg)
{
	struct take *t = arg;
	struct static_work *w = t->w;
	char low[MAX_WORD];
	int32_t r;

	if (*t->nr >= t->max)
		return 1;
	if (!word_lower(s, n, low))
		return 0;
	r = lookup(w->m, low, n);
	if (r < 0 || w->stamp[r] == w->text)
		return 0;
	w->stamp[r] = w->text;
	ALLOC_GROW(w->ids, *t->nr + 1, w->ids_alloc);
	w->ids[(*t->nr)++] = r;
	if ((size_t)(s - t->text) < t->head)
		(*t->nhead)++;
	return *t->nr >= t->max;
}

const int32_t *static_tokenize(struct static_work *w, const char *text, size_t len, size_t max,
			       size_t *nr)
{
	size_t nhead;

	return static_tokenize_head(w, text, len, 0, max, nr, &nhead);
}

const int32_t *static_tokenize_head(struct static_work *w, const char *text, size_t len, size_t head,
				    size_t max, size_t *nr, size_t *nhead)
{
	struct take t = { w, max ? max : w->m->max_words, nr, text, head, nhead };

	*nr = *nhead = 0;
	if (++w->text == 0) {
		/* the stamps wrapped: start them anew */
		memset(w->stamp, 0, w->m->rows * sizeof(*w->stamp));
		w->text = 1;
	}
	cut_words(text, len, take_word, &t);
	return w->ids;
}

struct each_word {
	int (*fn)(const char *word, size_t n, void *arg);
	void *arg;
};

static int each_word(const char *s, size_t n, void *arg)
{
	struct each_word *e = arg;
	char low[MAX_WORD];

	return word_lower(s, n, low) ? e->fn(low, n, e->arg) : 0;
}

void static_words(const char *text, size_t len, int (*fn)(const char *word, size_t n, void *arg), void *arg)
{
	struct each_word e = { fn, arg };

	cut_words(text, len, each_word, &e);
}

size_t static_model_word(const struct static_model *m, int32_t row, const char **word)
{
	if (row < 0 || (size_t)row >= m->rows) {
		*word = "";
		return 0;
	}
	*word = m->words + m->word_off[row];
	return m->word_len[row];
}

void static_forward_weighted(const struct static_model *m, const int32_t *ids, const float *wt, size_t n,
			     float *out)
{
	size_t p, k, dim = m->out;
	double ss = 0;
	float r;

	memset(out, 0, dim * sizeof(float));
	for (p = 0; p < n; p++) {
		size_t row = (size_t)ids[p];
		const int8_t *restrict q;
		float sc;

		if (row >= m->rows || !(wt[p] > 0))
			continue;
		q = m->emb + row * m->dim;
		sc = m->scale[row] * wt[p];
		for (k = 0; k < dim; k++)
			out[k] += sc * (float)q[k];
	}
	for (k = 0; k < dim; k++)
		ss += (double)out[k] * out[k];
	r = ss > 0 ? (float)(1.0 / sqrt(ss)) : 0;
	for (k = 0; k < dim; k++)
		out[k] *= r;
}

void static_forward(const struct static_model *m, const int32_t *const *ids, const size_t *len,
		    size_t n, float *out)
{
	static_forward_head(m, ids, len, NULL, n, out);
}

void static_forward_head(const struct static_model *m, const int32_t *const *ids, const size_t *len,
			 const size_t *nhead, size_t n, float *out)
{
	size_t s, p, k, dim = m->out;	/* a prefix of each row of m->dim */

	for (s = 0; s < n; s++) {
		float *restrict o = out + s * dim;
		double ss = 0;
		float r;

		memset(o, 0, dim * sizeof(float));
		for (p = 0; p < len[s]; p++) {
			size_t row = (size_t)ids[s][p];
			const int8_t *restrict q;
			float sc;

			if (row >= m->rows)
				continue;
			q = m->emb + row * m->dim;
			sc = m->scale[row];
			if (nhead && p < nhead[s])
				sc *= m->name_weight;
			for (k = 0; k < dim; k++)
				o[k] += sc * (float)q[k];
		}
		for (k = 0; k < dim; k++)
			ss += (double)o[k] * o[k];
		r = ss > 0 ? (float)(1.0 / sqrt(ss)) : 0;
		for (k = 0; k < dim; k++)
			o[k] *= r;
	}
}
