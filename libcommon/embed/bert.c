/*
 * bert.c: HuggingFace BERT-family sentence encoders (all-MiniLM-L6-v2,
 * bge-small-en-v1.5, ...) loaded from their directory and run with BLIS (see
 * bert.h).
 *
 * The workload is embed.c's: every chunk of a repository, batch after batch, on a
 * few cores, so the same shape: the tokens of a batch packed into groups of up
 * to MAX_ROWS rows, one sgemm per dense product (BLIS single-threaded inside each
 * of the caller's threads), attention per text and head, the rest plain loops.
 */
#include "core/common.h"
#include "embed/bert.h"
#include "embed/safetensors.h"
#include "embed/wordpiece.h"

#include "embed/blis-quiet.h"
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_ROWS 2048		/* tokens per forward group: bounds the scratch memory */
#define MAX_TOKENS 4096		/* the longest input read, whatever the model says */

/*
 * The FFN's GELU and the attention's softmax call erff (or tanhf) and expf for
 * every element: with all-MiniLM-L6-v2's shape, scalar libm there took over a third
 * of the time.  glibc's libmvec has them four floats at a time (its x86-64 vector
 * ABI names, as GCC calls them under -ffast-math); without it, libm one at a time.
 */
#if defined(HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>
__m128 _ZGVbN4v_erff(__m128 x);
__m128 _ZGVbN4v_expf(__m128 x);
__m128 _ZGVbN4v_tanhf(__m128 x);
#define VEC_MATH(f, x, n) do { \
		for (; vi_ + 4 <= (n); vi_ += 4) \
			_mm_storeu_ps((x) + vi_, _ZGVbN4v_##f(_mm_loadu_ps((x) + vi_))); \
	} while (0)
#else
#define VEC_MATH(f, x, n) do { } while (0)
#endif

/* x[0..n) = erff(x[0..n)) */
static void map_erf(float *x, size_t n)
{
	size_t vi_ = 0;

	VEC_MATH(erff, x, n);
	for (; vi_ < n; vi_++)
		x[vi_] = erff(x[vi_]);
}

static void map_tanh(float *x, size_t n)
{
	size_t vi_ = 0;

	VEC_MATH(tanhf, x, n);
	for (; vi_ < n; vi_++)
		x[vi_] = tanhf(x[vi_]);
}

static void map_exp(float *x, size_t n)
{
	size_t vi_ = 0;

	VEC_MATH(expf, x, n);
	for (; vi_ < n; vi_++)
		x[vi_] = expf(x[vi_]);
}

enum act { ACT_GELU, ACT_GELU_TANH, ACT_RELU };
enum pooling { POOL_MEAN, POOL_CLS, POOL_MAX };

/* One encoder layer's weights; Linear weights are [out][in], as PyTorch keeps them. */
struct bert_layer {
	float *qkv_w, *qkv_b;		/* query, key, value stacked: [3d][d], [3d] (owned) */
	const float *o_w, *o_b;		/* attention output [d][d], [d] */
	const float *ln1_g, *ln1_b;	/* its layer norm [d] */
	const float *i_w, *i_b;		/* FFN in [inter][d], [inter] */
	const float *f_w, *f_b;		/* FFN out [d][inter], [d] */
	const float *ln2_g, *ln2_b;	/* its layer norm [d] */
};

struct bert_model {
	char *name;			/* for "model" */
	struct safetensors *st;		/* the weights, mapped */
	struct wordpiece *vocab;	/* the tokenizer */
	int d, heads, depth;		/* hidden size, attention heads, their width */
	int inter;			/* FFN inner width */
	int layers_nr;
	size_t vocab_rows;		/* rows of the word embeddings */
	size_t positions;		/* rows of the position embeddings */
	size_t max_tokens;		/* input cap, [CLS] and [SEP] included */
	float eps;			/* layer norm epsilon */
	enum act act;			/* FFN activation */
	enum pooling pooling;		/* how a text's token vectors become one */
	const float *word, *pos, *type;	/* embeddings [vocab][d], [positions][d], [types][d] */
	const float *emb_g, *emb_b;	/* the embeddings' layer norm [d] */
	struct bert_layer *layer;	/* [layers_nr] */
};

struct bert_work {
	const struct bert_model *m;
	struct wordpiece_work tw;	/* tokenizer scratch */
	rntm_t rntm;			/* BLIS: one thread per call */
	size_t rows;			/* rows of the buffers below */
	float *x;			/* [rows][d]: the hidden states */
	float *t;			/* [rows][d]: a sublayer's output plus the residual */
	float *qkv;			/* [rows][3d] */
	float *ctx;			/* [rows][d]: attention output */
	float *ff;			/* [rows][inter] */
	float *sc;			/* [max][max]: attention weights of one head */
	size_t *off;			/* [off_alloc]: first row of each sequence */
	size_t off_alloc;
};

/* ---- loading ------------------------------------------------------------------ */

int bert_is_model_dir(const char *dir)
{
	char *p = xasprintf("%s/config.json", dir);
	struct stat st;
	int ret = stat(p, &st) == 0;

	free(p);
	return ret;
}

/*
 * Read dir/name as a JSON object (an array with array): 1 and *out; 0 when
 * there is no such file; -1 after a message.
 */
static int load_json(json_t **out, const char *dir, const char *name, int array)
{
	char *path = xasprintf("%s/%s", dir, name);
	json_error_t jerr;
	int ret = 0;

	*out = NULL;
	if (access(path, F_OK) < 0)
		goto done;
	if (!(*out = json_load_file(path, 0, &jerr))) {
		ret = error("%s:%d: %s", path, jerr.line, jerr.text);
	} else if (array ? !json_is_array(*out) : !json_is_object(*out)) {
		ret = error("%s: not a JSON %s", path, array ? "array" : "object");
		json_decref(*out);
		*out = NULL;
	} else {
		ret = 1;
	}
done:
	free(path);
	return ret;
}

/* A positive integer of config.json: 0, or -1 after a message. */
static int config_int(long *out, json_t *cfg, const char *path, const char *key, long def,
		      long max)
{
	json_t *v = json_object_get(cfg, key);

	if (!v && def > 0) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
		return error("%s: \"%s\" is %s", path, key,
			     v ? "not a positive integer in range" : "missing");
	*out = (long)json_integer_value(v);
	return 0;
}

/* A boolean of a JSON object, or def when absent or null. */
static int json_flag(json_t *obj, const char *key, int def)
{
	json_t *v = json_object_get(obj, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

/*
 * The model's name: "org/name" from a HuggingFace cache path
 * (.../models--org--name/snapshots/<hash>), else the directory's own name.
 */
static char *model_name(const char *dir)
{
	char *real = realpath(dir, NULL), *p, *name, *s;
	size_t n;

	if (!real)
		real = xstrdup(dir);
	n = strlen(real);
	while (n > 1 && real[n - 1] == '/')
		real[--n] = '\0';
	if ((p = strstr(real, "/models--")) && strstr(p, "/snapshots/")) {
		p += strlen("/models--");
		name = xstrndup(p, strcspn(p, "/"));
		if ((s = strstr(name, "--"))) {
			*s = '/';
			memmove(s + 1, s + 2, strlen(s + 2) + 1);
		}
	} else {
		p = strrchr(real, '/');
		name = xstrdup(p && p[1] ? p + 1 : real);
	}
	free(real);
	return name;
}

/* The tensor base ("encoder.layer.0.output.dense.weight"), in the names checkpoints use. */
static int get_tensor(const float **out, struct bert_model *m, const char *base, int ndim,
		      long d0, long d1)
{
	static const char *const prefix[] = { "", "bert.", "model." };
	long dims[2] = { d0, d1 };
	struct buf name = BUF_INIT, alt = BUF_INIT;
	const char *ln = strstr(base, "LayerNorm.");
	size_t i;
	int ret = -1;

	/* old checkpoints call the layer norms' weight and bias gamma and beta */
	if (ln) {
		const char *what = ln + strlen("LayerNorm.");
		buf_add(&alt, base, (size_t)(what - base));
		buf_addstr(&alt, !strcmp(what, "weight") ? "gamma" : "beta");
	}
	for (i = 0; i < ARRAY_SIZE(prefix); i++) {
		buf_reset(&name);
		buf_addf(&name, "%s%s", prefix[i], base);
		if (safetensors_has(m->st, name.buf))
			break;
		if (ln) {
			buf_reset(&name);
			buf_addf(&name, "%s%s", prefix[i], alt.buf);
			if (safetensors_has(m->st, name.buf))
				break;
		}
	}
	if (i == ARRAY_SIZE(prefix))
		error("%s: no tensor '%s' (nor 'bert.%s'): not a BERT model?",
		      safetensors_path(m->st), base, base);
	else
		ret = safetensors_f32(out, m->st, name.buf, ndim, dims);
	buf_release(&name);
	buf_release(&alt);
	return ret;
}

static int load_weights(struct bert_model *m, size_t types)
{
	long d = m->d, I = m->inter;
	struct buf b = BUF_INIT;
	int l, ret = -1;

	if (get_tensor(&m->word, m, "embeddings.word_embeddings.weight", 2, (long)m->vocab_rows, d) < 0 ||
	    get_tensor(&m->pos, m, "embeddings.position_embeddings.weight", 2, (long)m->positions, d) < 0 ||
	    get_tensor(&m->type, m, "embeddings.token_type_embeddings.weight", 2, (long)types, d) < 0 ||
	    get_tensor(&m->emb_g, m, "embeddings.LayerNorm.weight", 1, d, 0) < 0 ||
	    get_tensor(&m->emb_b, m, "embeddings.LayerNorm.bias", 1, d, 0) < 0)
		goto done;
	m->layer = xcalloc((size_t)m->layers_nr, sizeof(*m->layer));
	for (l = 0; l < m->layers_nr; l++) {
		struct bert_layer *L = &m->layer[l];
		static const char *const qkv[] = { "query", "key", "value" };
		const float *w, *bias;
		int k;

#define T(field, what, nd, a, c) \
		(buf_reset(&b), buf_addf(&b, "encoder.layer.%d.%s", l, what), \
		 get_tensor(&L->field, m, b.buf, nd, a, c) < 0)
		if (T(o_w, "attention.output.dense.weight", 2, d, d) ||
		    T(o_b, "attention.output.dense.bias", 1, d, 0) ||
		    T(ln1_g, "attention.output.LayerNorm.weight", 1, d, 0) ||
		    T(ln1_b, "attention.output.LayerNorm.bias", 1, d, 0) ||
		    T(i_w, "intermediate.dense.weight", 2, I, d) ||
		    T(i_b, "intermediate.dense.bias", 1, I, 0) ||
		    T(f_w, "output.dense.weight", 2, d, I) ||
		    T(f_b, "output.dense.bias", 1, d, 0) ||
		    T(ln2_g, "output.LayerNorm.weight", 1, d, 0) ||
		    T(ln2_b, "output.LayerNorm.bias", 1, d, 0))
			goto done;
#undef T
		/* one product for the three projections */
		L->qkv_w = xmalloc((size_t)(3 * d * d) * sizeof(float));
		L->qkv_b = xmalloc((size_t)(3 * d) * sizeof(float));
		for (k = 0; k < 3; k++) {
			buf_reset(&b);
			buf_addf(&b, "encoder.layer.%d.attention.self.%s.weight", l, qkv[k]);
			if (get_tensor(&w, m, b.buf, 2, d, d) < 0)
				goto done;
			buf_reset(&b);
			buf_addf(&b, "encoder.layer.%d.attention.self.%s.bias", l, qkv[k]);
			if (get_tensor(&bias, m, b.buf, 1, d, 0) < 0)
				goto done;
			memcpy(L->qkv_w + (size_t)(k * d * d), w, (size_t)(d * d) * sizeof(float));
			memcpy(L->qkv_b + (size_t)(k * d), bias, (size_t)d * sizeof(float));
		}
	}
	ret = 0;
done:
	buf_release(&b);
	return ret;
}

/*
 * The pooling of sentence-transformers: modules.json names the Pooling module's
 * directory (1_Pooling as a rule), whose config.json says which mode.  Without
 * one, mean pooling (what sentence-transformers does with a plain BERT).
 */
static int load_pooling(struct bert_model *m, const char *dir)
{
	static const struct { const char *key; int mode; } modes[] = {
		{ "pooling_mode_mean_tokens", POOL_MEAN },
		{ "pooling_mode_cls_token", POOL_CLS },
		{ "pooling_mode_max_tokens", POOL_MAX },
		{ "pooling_mode_mean_sqrt_len_tokens", -1 },
		{ "pooling_mode_weightedmean_tokens", -1 },
		{ "pooling_mode_lasttoken", -1 },
	};
	json_t *mods = NULL, *cfg = NULL, *mod;
	char *sub = NULL, *cfg_name;
	size_t i;
	int ret = -1, rc, on = 0;

	if (load_json(&mods, dir, "modules.json", 1) < 0)
		return -1;
	if (json_is_array(mods))
		json_array_foreach(mods, i, mod) {
			const char *type = json_string_value(json_object_get(mod, "type"));
			const char *path = json_string_value(json_object_get(mod, "path"));
			if (type && path && strstr(type, "Pooling") && !strstr(path, "..")) {
				sub = xstrdup(path);
				break;
			}
		}
	cfg_name = xasprintf("%s/config.json", sub ? sub : "1_Pooling");
	if ((rc = load_json(&cfg, dir, cfg_name, 0)) < 0)
		goto done;
	m->pooling = POOL_MEAN;
	if (rc == 0) {
		ret = 0;
		goto done;
	}
	for (i = 0; i < ARRAY_SIZE(modes); i++)
		if (json_is_true(json_object_get(cfg, modes[i].key))) {
			if (modes[i].mode < 0 || on++) {
				error("%s/%s: pooling %s: not supported (one of CLS, mean, max)", dir,
				      cfg_name, on > 1 ? "by several modes" : modes[i].key);
				goto done;
			}
			m->pooling = (enum pooling)modes[i].mode;
		}
	ret = 0;
done:
	free(cfg_name);
	free(sub);
	json_decref(cfg);
	json_decref(mods);
	return ret;
}

int bert_model_open(struct bert_model **out, const char *dir)
{
	struct bert_model *m = xcalloc(1, sizeof(*m));
	char *config = xasprintf("%s/config.json", dir);
	char *vocab = xasprintf("%s/vocab.txt", dir);
	char *weights = xasprintf("%s/model.safetensors", dir);
	char *tok_json = NULL;
	json_t *cfg = NULL, *tok = NULL, *sbert = NULL, *v;
	struct wordpiece_opts wo;
	long d, layers, heads, inter, vocab_size, positions, types, max;
	const char *s;
	int ret = -1, rc;

	*out = NULL;
	if ((rc = load_json(&cfg, dir, "config.json", 0)) <= 0) {
		if (!rc)
			error_errno("cannot read '%s'", config);
		goto done;
	}
	if ((s = json_string_value(json_object_get(cfg, "model_type"))) && strcmp(s, "bert")) {
		error("%s: model_type '%s': not supported (a BERT model is)", config, s);
		goto done;
	}
	if ((s = json_string_value(json_object_get(cfg, "position_embedding_type"))) &&
	    strcmp(s, "absolute")) {
		error("%s: position_embedding_type '%s': not supported (absolute is)", config, s);
		goto done;
	}
	if (config_int(&d, cfg, config, "hidden_size", 0, 1 << 16) < 0 ||
	    config_int(&layers, cfg, config, "num_hidden_layers", 0, 256) < 0 ||
	    config_int(&heads, cfg, config, "num_attention_heads", 0, 1024) < 0 ||
	    config_int(&inter, cfg, config, "intermediate_size", 0, 1 << 18) < 0 ||
	    config_int(&vocab_size, cfg, config, "vocab_size", 0, 1 << 24) < 0 ||
	    config_int(&positions, cfg, config, "max_position_embeddings", 512, 1 << 16) < 0 ||
	    config_int(&types, cfg, config, "type_vocab_size", 2, 1 << 16) < 0)
		goto done;
	if (d % heads) {
		error("%s: hidden_size %ld is not a multiple of num_attention_heads %ld", config, d, heads);
		goto done;
	}
	m->d = (int)d;
	m->heads = (int)heads;
	m->depth = (int)(d / heads);
	m->inter = (int)inter;
	m->layers_nr = (int)layers;
	m->vocab_rows = (size_t)vocab_size;
	m->positions = (size_t)positions;
	m->eps = 1e-12f;
	if ((v = json_object_get(cfg, "layer_norm_eps"))) {
		if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1) {
			error("%s: \"layer_norm_eps\" is not a small positive number", config);
			goto done;
		}
		m->eps = (float)json_number_value(v);
	}
	s = json_string_value(json_object_get(cfg, "hidden_act"));
	if (!s || !strcmp(s, "gelu")) {
		m->act = ACT_GELU;
	} else if (!strcmp(s, "gelu_new") || !strcmp(s, "gelu_pytorch_tanh")) {
		m->act = ACT_GELU_TANH;
	} else if (!strcmp(s, "relu")) {
		m->act = ACT_RELU;
	} else {
		error("%s: hidden_act '%s': not supported (gelu, gelu_new, relu)", config, s);
		goto done;
	}

	/* the tokenizer: BertTokenizer's defaults, then tokenizer_config.json's and sentence-transformers' */
	if (load_json(&tok, dir, "tokenizer_config.json", 0) < 0 ||
	    load_json(&sbert, dir, "sentence_bert_config.json", 0) < 0)
		goto done;
	wo.lowercase = json_flag(tok, "do_lower_case", 1) || json_flag(sbert, "do_lower_case", 0);
	wo.strip_accents = json_flag(tok, "strip_accents", wo.lowercase);
	wo.chinese_chars = json_flag(tok, "tokenize_chinese_chars", 1);
	if (access(vocab, F_OK) < 0 && (tok_json = xasprintf("%s/tokenizer.json", dir)) &&
	    access(tok_json, F_OK) == 0) {
		/* no vocab.txt: the fast tokenizer's file has the same vocabulary */
		free(vocab);
		vocab = tok_json;
		tok_json = NULL;
		if (wordpiece_load_json(&m->vocab, vocab, &wo) < 0)
			goto done;
	} else if (wordpiece_load(&m->vocab, vocab, &wo) < 0) {
		goto done;
	}
	if (wordpiece_size(m->vocab) > m->vocab_rows) {
		error("%s: %zu pieces, but config.json says vocab_size %zu", vocab,
		      wordpiece_size(m->vocab), m->vocab_rows);
		goto done;
	}
	/* the longest input: sentence-transformers' max_seq_length, else the tokenizer's */
	max = positions;
	v = json_object_get(sbert, "max_seq_length");
	if (!json_is_integer(v))
		v = json_object_get(tok, "model_max_length");
	if (json_is_integer(v) && json_integer_value(v) >= 2 && json_integer_value(v) < max)
		max = (long)json_integer_value(v);
	if (max < 2) {
		error("%s: max_position_embeddings %ld: too small", config, positions);
		goto done;
	}
	if (max > MAX_TOKENS)
		max = MAX_TOKENS;	/* the attention scratch is max x max */
	m->max_tokens = (size_t)max;

	if (load_pooling(m, dir) < 0)
		goto done;
	if (safetensors_open(&m->st, weights) < 0)
		goto done;
	if (load_weights(m, (size_t)types) < 0)
		goto done;
	m->name = model_name(dir);
	*out = m;
	m = NULL;
	ret = 0;
done:
	json_decref(cfg);
	json_decref(tok);
	json_decref(sbert);
	free(config);
	free(vocab);
	free(weights);
	free(tok_json);
	bert_model_close(m);
	return ret;
}

void bert_model_close(struct bert_model *m)
{
	int l;

	if (!m)
		return;
	for (l = 0; m->layer && l < m->layers_nr; l++) {
		free(m->layer[l].qkv_w);
		free(m->layer[l].qkv_b);
	}
	free(m->layer);
	safetensors_close(m->st);
	wordpiece_free(m->vocab);
	free(m->name);
	free(m);
}

const char *bert_model_name(const struct bert_model *m)
{
	return m->name;
}

size_t bert_dim(const struct bert_model *m)
{
	return (size_t)m->d;
}

size_t bert_max_tokens(const struct bert_model *m)
{
	return m->max_tokens;
}

/* ---- the forward pass ------------------------------------------------------------ */

struct bert_work *bert_work_new(const struct bert_model *m, int small)
{
	struct bert_work *w = xcalloc(1, sizeof(*w));
	size_t d = (size_t)m->d;

	w->m = m;
	bli_rntm_init(&w->rntm);
	bli_rntm_set_num_threads(1, &w->rntm);
	if (!small)
		bli_rntm_disable_l3_sup(&w->rntm);
	w->rows = m->max_tokens > MAX_ROWS ? m->max_tokens : MAX_ROWS;
	w->x = xmalloc(w->rows * d * sizeof(float));
	w->t = xmalloc(w->rows * d * sizeof(float));
	w->qkv = xmalloc(w->rows * 3 * d * sizeof(float));
	w->ctx = xmalloc(w->rows * d * sizeof(float));
	w->ff = xmalloc(w->rows * (size_t)m->inter * sizeof(float));
	w->sc = xmalloc(m->max_tokens * m->max_tokens * sizeof(float));
	return w;
}

void bert_work_free(struct bert_work *w)
{
	if (!w)
		return;
	wordpiece_work_release(&w->tw);
	free(w->x);
	free(w->t);
	free(w->qkv);
	free(w->ctx);
	free(w->ff);
	free(w->sc);
	free(w->off);
	free(w);
}

const int32_t *bert_tokenize(struct bert_work *w, const char *text, size_t len, size_t max,
			     size_t *nr)
{
	if (!max || max > w->m->max_tokens)
		max = w->m->max_tokens;
	if (max < 2)
		max = 2;
	*nr = wordpiece_encode(w->m->vocab, &w->tw, text, len, max);
	return w->tw.ids;
}

/* C = alpha * A * op(B) + beta * C, row-major, op(B) = B^T when transb. */
static void gemm(struct bert_work *w, int transb, size_t m, size_t n, size_t k,
		 float alpha, const float *a, size_t lda, const float *b, size_t ldb,
		 float beta, float *c, size_t ldc)
{
	bli_sgemm_ex(BLIS_NO_TRANSPOSE, transb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
		     (dim_t)m, (dim_t)n, (dim_t)k, &alpha,
		     (float *)a, (inc_t)lda, 1, (float *)b, (inc_t)ldb, 1,
		     &beta, c, (inc_t)ldc, 1, NULL, &w->rntm);
}

/* out = g * (in + bias - mean) / sqrt(var + eps) + b, row by row (bias may be NULL). */
static void layer_norm(float *out, const float *in, size_t rows, int d, const float *bias,
		       const float *g, const float *b, float eps)
{
	size_t r;
	int i;

	for (r = 0; r < rows; r++) {
		const float *x = in + r * (size_t)d;
		float *o = out + r * (size_t)d;
		float mean = 0, var = 0, rs;

		if (bias) {
			for (i = 0; i < d; i++)
				o[i] = x[i] + bias[i];
			x = o;
		}
		for (i = 0; i < d; i++)
			mean += x[i];
		mean /= (float)d;
		for (i = 0; i < d; i++)
			var += (x[i] - mean) * (x[i] - mean);
		var /= (float)d;
		rs = 1.0f / sqrtf(var + eps);
		for (i = 0; i < d; i++)
			o[i] = g[i] * (x[i] - mean) * rs + b[i];
	}
}

static void fill_rows(float *x, size_t rows, size_t d, const float *b)
{
	size_t r;

	for (r = 0; r < rows; r++, x += d)
		memcpy(x, b, d * sizeof(float));
}

/* x = act(x + b), row by row; GELU as erf (BERT's "gelu") or tanh ("gelu_new") */
static void add_bias_act(float *x, size_t rows, size_t d, const float *b, enum act act)
{
	enum { STEP = 512 };
	float u[STEP];
	size_t r, i, j, k;

	for (r = 0; r < rows; r++, x += d) {
		for (i = 0; i < d; i++)
			x[i] += b[i];
		if (act == ACT_RELU) {
			for (i = 0; i < d; i++)
				x[i] = x[i] > 0 ? x[i] : 0;
			continue;
		}
		for (i = 0; i < d; i += STEP) {
			k = d - i < STEP ? d - i : STEP;
			if (act == ACT_GELU) {
				for (j = 0; j < k; j++)
					u[j] = x[i + j] * 0.70710678118654752f;
				map_erf(u, k);
			} else {
				for (j = 0; j < k; j++) {
					float v = x[i + j];
					u[j] = 0.79788456080286536f * (v + 0.044715f * v * v * v);
				}
				map_tanh(u, k);
			}
			for (j = 0; j < k; j++)
				x[i + j] = 0.5f * x[i + j] * (1.0f + u[j]);
		}
	}
}

static void softmax_rows(float *s, size_t rows, size_t n)
{
	size_t r, i;

	for (r = 0; r < rows; r++, s += n) {
		float mx = s[0], sum = 0, inv;
		for (i = 1; i < n; i++)
			if (s[i] > mx)
				mx = s[i];
		for (i = 0; i < n; i++)
			s[i] -= mx;
		map_exp(s, n);
		for (i = 0; i < n; i++)
			sum += s[i];
		inv = 1.0f / sum;
		for (i = 0; i < n; i++)
			s[i] *= inv;
	}
}

/* One encoder layer over the T packed rows of w->x, in place. */
static void layer_run(struct bert_work *w, const struct bert_layer *L, const size_t *len,
		      size_t n, size_t T)
{
	const struct bert_model *m = w->m;
	size_t d = (size_t)m->d, ld = 3 * d, s, dh = (size_t)m->depth;
	float scale = 1.0f / sqrtf((float)m->depth);
	int h;

	fill_rows(w->qkv, T, 3 * d, L->qkv_b);
	gemm(w, 1, T, 3 * d, d, 1, w->x, d, L->qkv_w, d, 1, w->qkv, 3 * d);
	for (s = 0; s < n; s++) {
		size_t nn = len[s], base = w->off[s];
		for (h = 0; h < m->heads; h++) {
			const float *q = w->qkv + base * ld + (size_t)h * dh;
			const float *k = q + d, *v = q + 2 * d;

			gemm(w, 1, nn, nn, dh, scale, q, ld, k, ld, 0, w->sc, nn);
			softmax_rows(w->sc, nn, nn);
			gemm(w, 0, nn, dh, nn, 1, w->sc, nn, v, ld, 0,
			     w->ctx + base * d + (size_t)h * dh, d);
		}
	}
	/* x = LN(x + ctx Wo^T + bo) */
	memcpy(w->t, w->x, T * d * sizeof(float));
	gemm(w, 1, T, d, d, 1, w->ctx, d, L->o_w, d, 1, w->t, d);
	layer_norm(w->x, w->t, T, m->d, L->o_b, L->ln1_g, L->ln1_b, m->eps);
	/* x = LN(x + act(x Wi^T + bi) Wf^T + bf) */
	gemm(w, 1, T, (size_t)m->inter, d, 1, w->x, d, L->i_w, d, 0, w->ff, (size_t)m->inter);
	add_bias_act(w->ff, T, (size_t)m->inter, L->i_b, m->act);
	memcpy(w->t, w->x, T * d * sizeof(float));
	gemm(w, 1, T, d, (size_t)m->inter, 1, w->ff, (size_t)m->inter, L->f_w, (size_t)m->inter,
	     1, w->t, d);
	layer_norm(w->x, w->t, T, m->d, L->f_b, L->ln2_g, L->ln2_b, m->eps);
}

/* Sequences [0, n), at most w->rows tokens in all, through the model into out[0..n). */
static void forward_group(struct bert_work *w, const int32_t *const *ids, const size_t *len,
			  size_t n, float *out)
{
	const struct bert_model *m = w->m;
	size_t d = (size_t)m->d, s, p, i, T = 0;
	int l;

	if (n + 1 > w->off_alloc) {
		w->off_alloc = n + 1;
		free(w->off);
		w->off = xmalloc(w->off_alloc * sizeof(*w->off));
	}
	for (s = 0; s < n; s++) {
		w->off[s] = T;
		T += len[s];
	}
	assert(T <= w->rows);
	for (s = 0; s < n; s++)
		for (p = 0; p < len[s]; p++) {
			int32_t id = ids[s][p];
			const float *e = m->word + (id >= 0 && (size_t)id < m->vocab_rows ? (size_t)id : 0) * d;
			const float *ps = m->pos + p * d;
			float *x = w->t + (w->off[s] + p) * d;

			for (i = 0; i < d; i++)
				x[i] = e[i] + ps[i] + m->type[i];
		}
	layer_norm(w->x, w->t, T, m->d, NULL, m->emb_g, m->emb_b, m->eps);
	for (l = 0; l < m->layers_nr; l++)
		layer_run(w, &m->layer[l], len, n, T);

	for (s = 0; s < n; s++) {
		const float *y = w->x + w->off[s] * d;
		float *o = out + s * d;
		double ss = 0;
		float r;

		switch (m->pooling) {
		case POOL_CLS:
			memcpy(o, y, d * sizeof(float));
			break;
		case POOL_MEAN:
			memset(o, 0, d * sizeof(float));
			for (p = 0; p < len[s]; p++)
				for (i = 0; i < d; i++)
					o[i] += y[p * d + i];
			for (i = 0; i < d; i++)
				o[i] /= (float)len[s];
			break;
		case POOL_MAX:
			memcpy(o, y, d * sizeof(float));
			for (p = 1; p < len[s]; p++)
				for (i = 0; i < d; i++)
					if (y[p * d + i] > o[i])
						o[i] = y[p * d + i];
			break;
		}
		for (i = 0; i < d; i++)
			ss += (double)o[i] * o[i];
		r = (float)(1.0 / (sqrt(ss) > 1e-12 ? sqrt(ss) : 1e-12));
		for (i = 0; i < d; i++)
			o[i] *= r;
	}
}

void bert_forward(struct bert_work *w, const int32_t *const *ids, const size_t *len,
		  size_t n, float *out)
{
	const struct bert_model *m = w->m;
	int32_t empty[2];
	const int32_t **id = xmalloc((n + 1) * sizeof(*id));
	size_t *ln = xmalloc((n + 1) * sizeof(*ln));
	size_t i, s = 0;

	/* an empty sequence is the empty text's: [CLS] [SEP] */
	empty[0] = wordpiece_id(m->vocab, "[CLS]", 5);
	empty[1] = wordpiece_id(m->vocab, "[SEP]", 5);
	for (i = 0; i < n; i++) {
		assert(len[i] <= m->max_tokens);
		id[i] = len[i] ? ids[i] : empty;
		ln[i] = len[i] ? len[i] : 2;
	}
	while (s < n) {
		size_t e = s, T = 0;
		while (e < n && T + ln[e] <= w->rows)
			T += ln[e++];
		forward_group(w, id + s, ln + s, e - s, out + s * (size_t)m->d);
		s = e;
	}
	free(id);
	free(ln);
}

double bert_flops(const struct bert_model *m, const size_t *len, size_t n)
{
	double d = m->d, per_token = 2.0 * (4.0 * d * d + 2.0 * d * m->inter) * m->layers_nr;
	double f = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double t = (double)(len[i] ? len[i] : 2);
		f += t * per_token + 4.0 * t * t * d * m->layers_nr;
	}
	return f;
}

/* ---- measuring BLIS ---------------------------------------------------------------- */

double bert_gemm_rate(const struct bert_model *m, size_t rows, size_t seq, double seconds)
{
	struct bert_work *w = bert_work_new(m, 0);
	size_t d = (size_t)m->d, I = (size_t)m->inter, nseq, s, i, iters = 0, *len;
	double t0, el, flops;
	struct timespec ts;
	int l, h;

	if (rows > w->rows)
		rows = w->rows;
	if (seq < 2 || seq > m->max_tokens)
		seq = m->max_tokens;
	nseq = rows / seq ? rows / seq : 1;
	rows = nseq * seq;
	len = xmalloc(nseq * sizeof(*len));
	for (s = 0; s < nseq; s++)
		len[s] = seq;
	/* inputs: anything finite */
	for (i = 0; i < rows * d; i++)
		w->x[i] = w->ctx[i] = w->t[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
	for (i = 0; i < rows * I; i++)
		w->ff[i] = (float)((i * 1299709) % 1000) * 1e-3f;
	for (i = 0; i < rows * 3 * d; i++)
		w->qkv[i] = (float)((i * 15485863) % 1000) * 1e-3f - 0.5f;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	do {
		/* the products of layer_run(), in its order and shapes */
		for (l = 0; l < m->layers_nr; l++) {
			const struct bert_layer *L = &m->layer[l];
			size_t dh = (size_t)m->depth, ld = 3 * d;

			gemm(w, 1, rows, 3 * d, d, 1, w->x, d, L->qkv_w, d, 1, w->qkv, 3 * d);
			for (s = 0; s < nseq; s++)
				for (h = 0; h < m->heads; h++) {
					const float *q = w->qkv + s * seq * ld + (size_t)h * dh;
					gemm(w, 1, seq, seq, dh, 1, q, ld, q + d, ld, 0, w->sc, seq);
					gemm(w, 0, seq, dh, seq, 1, w->sc, seq, q + 2 * d, ld, 0,
					     w->ctx + s * seq * d + (size_t)h * dh, d);
				}
			gemm(w, 1, rows, d, d, 1, w->ctx, d, L->o_w, d, 1, w->t, d);
			gemm(w, 1, rows, I, d, 1, w->x, d, L->i_w, d, 0, w->ff, I);
			gemm(w, 1, rows, d, I, 1, w->ff, I, L->f_w, I, 1, w->t, d);
		}
		iters++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		el = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 - t0;
	} while (el < seconds);
	flops = bert_flops(m, len, nseq) * (double)iters;
	free(len);
	bert_work_free(w);
	return flops / el * 1e-9;
}
