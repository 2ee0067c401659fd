/*
 * embed.c: Universal Sentence Encoder Lite, loaded from its TF.js export and run
 * with BLIS (see embed.h).
 *
 * The workload that shaped it: ci-embed over every chunk of a repository, tens of
 * thousands of texts of up to 128 tokens, on a few cores.  Nearly all the time is
 * in matrix products, so each is one large sgemm over the packed tokens of a
 * batch of texts (up to MAX_ROWS rows), with BLIS single-threaded inside each of
 * the caller's threads; the rest (layer norms, softmax, pooling) is plain loops.
 */
#include "core/common.h"
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "embed/bert.h"
#include "embed/static.h"

#include "embed/blis-quiet.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#define D0 256			/* token embedding and layer 0 width */
#define D1 512			/* layer 1 width, output width */
#define DFF 1536		/* FFN inner width */
#define MAX_ROWS 2048		/* tokens per forward group: bounds the scratch memory */
#define STATIC_SIF_A 1e-3	/* static mode: the a of the SIF weights a / (a + p) */

/* One transformer layer's weights (row-major, as in the shards). */
struct layer {
	int d;				/* input width: 256 or 512 */
	int heads, depth;		/* attention heads and their width (heads * depth = d) */
	float scale;			/* applied to queries: 1/sqrt(depth) */
	const float *ln1_s, *ln1_b;	/* layer norm before attention [d] */
	const float *qkv_w, *qkv_b;	/* [d][3d], [3d]: queries, keys, values */
	const float *out_w, *out_b;	/* [d][512], [512] */
	const float *res_w, *res_b;	/* layer 0 only: residual projection [256][512], [512] */
	const float *ln2_s, *ln2_b;	/* layer norm before the FFN [512] */
	const float *ff1_w, *ff1_b;	/* [512][1536], [1536] */
	const float *ff2_w, *ff2_b;	/* [1536][512], [512] */
};

/* A mapped (or read) weight group: its shards, contiguous. */
struct region {
	void *base;		/* the bytes */
	size_t len;		/* their length */
	int mapped;		/* 1: mmap'd (munmap), 0: malloc'd (free), 2: huge_alloc'd */
};

struct embed_model {
	unsigned open_flags;		/* EMBED_OPEN_* */
	struct spm *vocab;		/* the tokenizer */
	struct region *region;		/* the weight groups */
	size_t region_nr;
	const float *emb;		/* token embeddings [emb_rows][256] */
	size_t emb_rows;
	float *timing;			/* timing signal [max_tokens][256] */
	size_t max_tokens;		/* input cap (128) */
	struct layer layer[2];
	const float *tanh_w, *tanh_b;	/* output layer [512][512], [512] */
	float ln_eps;			/* layer norm epsilon */
	float l2_eps;			/* floor of the squared norm */
	float bias0[D1];		/* layer 0's residual and output biases, summed */
	float *table;			/* static mode: [emb_rows][512], or NULL */
	float *weight;			/* static mode: [emb_rows], each piece's weight */
	uint64_t key;			/* identifies the model's files (embed_model_key) */
	struct bert_model *bert;	/* a BERT-family model instead (bert.c), or NULL */
	struct static_model *stat;	/* a static model instead (embed/static.c): ci-code */
};

struct embed_work {
	const struct embed_model *m;
	struct bert_work *bw;		/* the BERT model's scratch, or NULL */
	struct static_work *stw;	/* the static model's, or NULL */
	struct spm_work sw;		/* tokenizer scratch */
	rntm_t rntm;			/* BLIS: one thread per call */
	float *x;			/* [MAX_ROWS][256]: layer 0 input */
	float *qkv;			/* [MAX_ROWS][1536] */
	float *att;			/* [MAX_ROWS][512]: attention output */
	float *y;			/* [MAX_ROWS][512]: the residual stream */
	float *g;			/* [MAX_ROWS][512]: normalised input of a sublayer */
	float *ff;			/* [MAX_ROWS][1536]: FFN hidden layer */
	float *sc;			/* [128][128]: attention weights of one head */
	float *pool;			/* [pool_alloc][512]: pooled vectors */
	size_t pool_alloc;
	size_t *off;			/* [off_alloc]: first row of each sequence */
	size_t off_alloc;
};

/* ---- BLIS ------------------------------------------------------------------ */

/*
 * Process-wide by nature: BLIS picks its kernels once, from the environment, at
 * its first call (blis_pick_arch), whatever model or thread asks.
 */
static int small_products;	/* embed_for_queries() */

void embed_for_queries(void)
{
	small_products = 1;
}

/*
 * BLIS 0.9 picks its kernels from the CPU model and falls back to slow generic C
 * on CPUs newer than itself (AMD Zen 5: 4x slower).  On a CPU with AVX-512 the
 * SkylakeX kernels run well, so name them unless the user did (BLIS_ARCH_TYPE).
 * This must happen before the first BLIS call.
 */
static void blis_pick_arch(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && defined(BLIS_CONFIG_SKX)
	char v[16];

	if (getenv("BLIS_ARCH_TYPE"))
		return;
	__builtin_cpu_init();
#if defined(BLIS_CONFIG_HASWELL)
	/*
	 * A query is a product of a few rows by each weight matrix: SkylakeX's
	 * kernels pack the whole matrix first (4-5 ms of a 10-token query), the
	 * Haswell configuration multiplies small products in place (its "sup"
	 * path).  The vectors agree to float rounding (cosine above 0.99999).
	 */
	if (small_products && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		snprintf(v, sizeof(v), "%d", (int)BLIS_ARCH_HASWELL);
		setenv("BLIS_ARCH_TYPE", v, 0);
		return;
	}
#endif
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
		snprintf(v, sizeof(v), "%d", (int)BLIS_ARCH_SKX);
		setenv("BLIS_ARCH_TYPE", v, 0);
	}
#endif
}

static void blis_setup(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	blis_pick_arch();
	pthread_once(&once, bli_init);
}

/* C = alpha * A * op(B) + beta * C, row-major, op(B) = B^T when transb. */
static void gemm(struct embed_work *w, int transb, size_t m, size_t n, size_t k,
		 float alpha, const float *a, size_t lda, const float *b, size_t ldb,
		 float beta, float *c, size_t ldc)
{
	bli_sgemm_ex(BLIS_NO_TRANSPOSE, transb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
		     (dim_t)m, (dim_t)n, (dim_t)k, &alpha,
		     (float *)a, (inc_t)lda, 1, (float *)b, (inc_t)ldb, 1,
		     &beta, c, (inc_t)ldc, 1, NULL, &w->rntm);
}

/* ---- loading ---------------------------------------------------------------- */

enum { DT_FLOAT32, DT_INT32 };

/* A weight of the manifest, located in its group's region. */
struct tensor {
	const char *name;	/* owned by the manifest's JSON */
	int dtype;		/* DT_* (other dtypes are refused) */
	int ndim;
	long dims[4];
	const void *data;
};

#define P "module_apply_default/Encoder_en/KonaTransformer/"
#define PE P "Encode/"
#define PS P "Encode/TransformerStack/"
#define PM "module/Encoder_en/KonaTransformer/Encode/"

/* What the forward pass reads, by name, dtype and shape. */
struct wspec {
	const char *name;
	int dtype;
	int ndim;
	long dims[4];
};

enum {
	W_EMB, W_TIMING, W_MAXLEN, W_HEADS, W_DEPTH0, W_DEPTH1, W_EPS, W_L2EPS, W_SCALE0, W_SCALE1,
	W_TANH_W, W_TANH_B, W_RES_W, W_RES_B,
	W_L0 /* 12 per layer from here: */,
};
enum { L_LN1S, L_LN1B, L_QKVW, L_QKVB, L_OUTW, L_OUTB, L_LN2S, L_LN2B, L_FF1W, L_FF1B, L_FF2W, L_FF2B, L_NR };

#define LAYER_SPECS(n, d) \
	{ PE "Layer_" #n "/TransformerLayer/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", DT_FLOAT32, 1, { d } }, \
	{ PE "Layer_" #n "/TransformerLayer/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", DT_FLOAT32, 1, { d } }, \
	{ PM "Layer_" #n "/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0", DT_FLOAT32, 4, { 1, 1, d, 3 * d } }, \
	{ PE "Layer_" #n "/TransformerLayer/MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", DT_FLOAT32, 1, { 3 * d } }, \
	{ PM "Layer_" #n "/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0", DT_FLOAT32, 4, { 1, 1, d, D1 } }, \
	{ PE "Layer_" #n "/TransformerLayer/MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", DT_FLOAT32, 1, { D1 } }, \
	{ PE "Layer_" #n "/TransformerLayer/FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", DT_FLOAT32, 1, { D1 } }, \
	{ PE "Layer_" #n "/TransformerLayer/FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", DT_FLOAT32, 1, { D1 } }, \
	{ PS "Layer_" #n "/TransformerLayer/FFN/conv1/Tensordot/Reshape_1", DT_FLOAT32, 2, { D1, DFF } }, \
	{ PE "Layer_" #n "/TransformerLayer/FFN/conv1/bias/ConcatPartitions/concat", DT_FLOAT32, 1, { DFF } }, \
	{ PS "Layer_" #n "/TransformerLayer/FFN/conv2/Tensordot/Reshape_1", DT_FLOAT32, 2, { DFF, D1 } }, \
	{ PE "Layer_" #n "/TransformerLayer/FFN/conv2/bias/ConcatPartitions/concat", DT_FLOAT32, 1, { D1 } }

static const struct wspec wspecs[] = {
	[W_EMB] = { "module/Embeddings_en", DT_FLOAT32, 2, { -1, D0 } },
	[W_TIMING] = { PS "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", DT_FLOAT32, 2, { 1, D0 / 2 } },
	[W_MAXLEN] = { P "ClipToMaxLength/Less/y", DT_INT32, 0, { 0 } },
	[W_HEADS] = { PS "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2", DT_INT32, 0, { 0 } },
	[W_DEPTH0] = { PS "Layer_0/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3", DT_INT32, 0, { 0 } },
	[W_DEPTH1] = { PS "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3", DT_INT32, 0, { 0 } },
	[W_EPS] = { PS "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x", DT_FLOAT32, 0, { 0 } },
	[W_L2EPS] = { "module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y", DT_FLOAT32, 0, { 0 } },
	[W_SCALE0] = { PS "Layer_0/TransformerLayer/MultiheadAttention/mul/y", DT_FLOAT32, 0, { 0 } },
	[W_SCALE1] = { PS "Layer_1/TransformerLayer/MultiheadAttention/mul/y", DT_FLOAT32, 0, { 0 } },
	[W_TANH_W] = { "module/Encoder_en/hidden_layers/tanh_layer_0/weights", DT_FLOAT32, 2, { D1, D1 } },
	[W_TANH_B] = { "module/Encoder_en/hidden_layers/tanh_layer_0/bias", DT_FLOAT32, 1, { D1 } },
	[W_RES_W] = { PE "Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat", DT_FLOAT32, 2, { D0, D1 } },
	[W_RES_B] = { PE "Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat", DT_FLOAT32, 1, { D1 } },
	LAYER_SPECS(0, D0),
	LAYER_SPECS(1, D1),
};

static void region_release(struct region *r)
{
	if (r->mapped == 2)
		huge_free(r->base, r->len);
	else if (r->mapped)
		munmap(r->base, r->len);
	else
		free(r->base);
}

/* "[8002,256]" */
static void shape_str(struct buf *b, int ndim, const long *dims)
{
	int i;

	buf_addch(b, '[');
	for (i = 0; i < ndim; i++)
		buf_addf(b, "%s%ld", i ? "," : "", dims[i]);
	buf_addch(b, ']');
}

/*
 * Map the shards of one weight group at consecutive addresses (each shard but the
 * last is a whole number of pages, as TF.js writes them; otherwise they are read
 * into memory), after checking that they hold exactly need bytes.
 */
static int map_group(struct region *r, const char *dir, const char *model_json,
		     json_t *paths, size_t need, int weights_in_memory)
{
	size_t i, n = json_array_size(paths), total = 0, first = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t *size = xcalloc(n ? n : 1, sizeof(*size));
	char **path = xcalloc(n ? n : 1, sizeof(*path));
	int *fd = xcalloc(n ? n : 1, sizeof(*fd)), ret = -1, can_map = 1;
	unsigned char *base = NULL;

	for (i = 0; i < n; i++)
		fd[i] = -1;
	for (i = 0; i < n; i++) {
		json_t *p = json_array_get(paths, i);
		struct stat st;

		if (!json_is_string(p) || strchr(json_string_value(p), '/')) {
			error("%s: weight shard %zu: not a file name", model_json, i);
			goto done;
		}
		path[i] = xasprintf("%s/%s", dir, json_string_value(p));
		fd[i] = open(path[i], O_RDONLY | O_CLOEXEC);
		if (fd[i] < 0 || fstat(fd[i], &st) < 0) {
			error_errno("cannot open '%s'", path[i]);
			goto done;
		}
		size[i] = (size_t)st.st_size;
		total += size[i];
		if (i + 1 < n && size[i] % page)
			can_map = 0;
	}
	if (total != need) {
		/* the culprit: the first shard of another size than the first, else the last */
		size_t bad = n ? n - 1 : 0;
		for (i = 1; i + 1 < n; i++)
			if (size[i] != size[0]) {
				bad = i;
				break;
			}
		if (total < need)
			error("'%s' is truncated: the weights of %s need %zu bytes, the shards hold %zu",
			      n ? path[bad] : model_json, model_json, need, total);
		else
			error("'%s' does not match %s: the weights need %zu bytes, the shards hold %zu",
			      n ? path[bad] : model_json, model_json, need, total);
		goto done;
	}
	if (!total) {
		error("%s: an empty weight group", model_json);
		goto done;
	}
	if (weights_in_memory)
		can_map = 0;
	if (can_map) {
		base = mmap(NULL, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED) {
			base = NULL;
			can_map = 0;
		}
	}
	if (can_map) {
		for (i = 0, first = 0; i < n; first += size[i], i++) {
			if (!size[i])
				continue;
			if (mmap(base + first, size[i], PROT_READ, MAP_PRIVATE | MAP_FIXED,
				 fd[i], 0) == MAP_FAILED) {
				error_errno("cannot map '%s'", path[i]);
				munmap(base, total);
				base = NULL;
				goto done;
			}
		}
		r->mapped = 1;
	} else {
		base = weights_in_memory ? huge_alloc(total) : xmalloc(total);
		for (i = 0, first = 0; i < n; first += size[i], i++) {
			size_t got = 0;
			while (got < size[i]) {
				ssize_t k = pread(fd[i], base + first + got, size[i] - got, (off_t)got);
				if (k <= 0) {
					if (k == 0)
						errno = EIO;
					error_errno("cannot read '%s'", path[i]);
					if (weights_in_memory)
						huge_free(base, total);
					else
						free(base);
					base = NULL;
					goto done;
				}
				got += (size_t)k;
			}
		}
		r->mapped = weights_in_memory ? 2 : 0;
	}
	r->base = base;
	r->len = total;
	ret = 0;
done:
	for (i = 0; i < n; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		free(path[i]);
	}
	free(fd);
	free(path);
	free(size);
	return ret;
}

/* Read the manifest of model.json: map every group, list every weight. */
static int load_manifest(struct embed_model *m, const char *dir, const char *model_json,
			 json_t *root, struct tensor **out, size_t *out_nr)
{
	json_t *man = json_object_get(root, "weightsManifest"), *g;
	struct tensor *t = NULL;
	size_t t_nr = 0, t_alloc = 0, gi;

	if (!json_is_array(man) || !json_array_size(man))
		return error("%s: no weight manifest (weightsManifest)", model_json);
	m->region = xcalloc(json_array_size(man), sizeof(*m->region));
	json_array_foreach(man, gi, g) {
		json_t *ws = json_object_get(g, "weights"), *wj;
		size_t wi, off = 0, first = t_nr;

		if (!json_is_array(ws) || !json_is_array(json_object_get(g, "paths")))
			goto bad;
		json_array_foreach(ws, wi, wj) {
			json_t *name = json_object_get(wj, "name"), *shape = json_object_get(wj, "shape");
			const char *dt = json_string_value(json_object_get(wj, "dtype"));
			json_t *d;
			size_t di, count = 1;

			if (!json_is_string(name) || !json_is_array(shape) || !dt)
				goto bad;
			if (json_object_get(wj, "quantization")) {
				error("%s: weight '%s' is quantized: not supported", model_json,
				      json_string_value(name));
				goto fail;
			}
			if (strcmp(dt, "float32") && strcmp(dt, "int32")) {
				error("%s: weight '%s' has dtype %s: not supported", model_json,
				      json_string_value(name), dt);
				goto fail;
			}
			ALLOC_GROW(t, t_nr + 1, t_alloc);
			memset(&t[t_nr], 0, sizeof(t[t_nr]));
			t[t_nr].name = json_string_value(name);
			t[t_nr].dtype = strcmp(dt, "float32") ? DT_INT32 : DT_FLOAT32;
			if (json_array_size(shape) > 4)
				goto bad;
			json_array_foreach(shape, di, d) {
				if (!json_is_integer(d) || json_integer_value(d) < 0 ||
				    json_integer_value(d) > (1 << 28))
					goto bad;
				t[t_nr].dims[di] = (long)json_integer_value(d);
				count *= (size_t)json_integer_value(d);
			}
			t[t_nr].ndim = (int)json_array_size(shape);
			t[t_nr].data = (const void *)off;	/* an offset until mapped */
			off += count * 4;
			t_nr++;
		}
		if (map_group(&m->region[gi], dir, model_json, json_object_get(g, "paths"), off,
			      !!(m->open_flags & EMBED_OPEN_IN_MEMORY)) < 0)
			goto fail;
		m->region_nr = gi + 1;
		for (wi = first; wi < t_nr; wi++)
			t[wi].data = (const unsigned char *)m->region[gi].base + (size_t)t[wi].data;
	}
	*out = t;
	*out_nr = t_nr;
	return 0;
bad:
	error("%s: malformed weight manifest", model_json);
fail:
	free(t);
	return -1;
}

/* Find the weights of wspecs[] among t[]; check dtype and shape. */
static int bind_weights(const void **ptr, const char *model_json, const struct tensor *t,
			size_t t_nr, long emb_rows_min)
{
	size_t i, j;
	int k;

	for (i = 0; i < ARRAY_SIZE(wspecs); i++) {
		const struct wspec *s = &wspecs[i];
		const struct tensor *w = NULL;
		int ok;

		for (j = 0; j < t_nr && !w; j++)
			if (!strcmp(t[j].name, s->name))
				w = &t[j];
		if (!w)
			return error("%s: no weight '%s' (not a Universal Sentence Encoder Lite model?)",
				     model_json, s->name);
		ok = w->dtype == s->dtype && w->ndim == s->ndim;
		for (k = 0; ok && k < s->ndim; k++)
			if (s->dims[k] >= 0 ? w->dims[k] != s->dims[k] : w->dims[k] < emb_rows_min)
				ok = 0;
		if (!ok) {
			struct buf a = BUF_INIT, b = BUF_INIT;
			shape_str(&a, w->ndim, w->dims);
			shape_str(&b, s->ndim, s->dims);
			error("%s: weight '%s' is %s %s, expected %s %s", model_json, s->name,
			      w->dtype == DT_FLOAT32 ? "float32" : "int32", a.buf,
			      s->dtype == DT_FLOAT32 ? "float32" : "int32", b.buf);
			buf_release(&a);
			buf_release(&b);
			return -1;
		}
		ptr[i] = w->data;
	}
	return 0;
}

/* Mix the identity of a file (its path, size, modification time) into h. */
static uint64_t key_file(uint64_t h, const char *path)
{
	struct stat st;
	int64_t v[3] = { 0, 0, 0 };
	char *real = realpath(path, NULL);

	h = fnv1a(h, real ? real : path, strlen(real ? real : path));
	free(real);
	if (stat(path, &st) == 0) {
		v[0] = (int64_t)st.st_size;
		v[1] = (int64_t)st.st_mtim.tv_sec;
		v[2] = (int64_t)st.st_mtim.tv_nsec;
	}
	return fnv1a(h, v, sizeof(v));
}

/*
 * model.json, of which only the weight manifest is read: the manifest alone is
 * kept in ci's cache, named by the file's identity (path, size, time), since
 * parsing the whole file (the graph is 94% of it) took 6 ms of a 25 ms query.
 * NULL with jerr filled when model.json cannot be parsed.
 */
static json_t *load_model_json(const char *model_json, json_error_t *jerr)
{
	char name[64], *cache, *tmp;
	json_t *root, *small;

	snprintf(name, sizeof(name), "use-manifest-%016llx.json",
		 (unsigned long long)key_file(FNV1A_BASIS, model_json));
	cache = cache_file(name);
	if (cache && (root = json_load_file(cache, 0, NULL))) {
		if (json_array_size(json_object_get(root, "weightsManifest"))) {
			free(cache);
			return root;
		}
		json_decref(root);	/* not ours: written anew below */
	}
	root = json_load_file(model_json, 0, jerr);
	if (root && cache && json_array_size(json_object_get(root, "weightsManifest"))) {
		small = json_pack("{sO}", "weightsManifest", json_object_get(root, "weightsManifest"));
		tmp = xasprintf("%s.%ld.tmp", cache, (long)getpid());
		/* a cache that cannot be written is no error: the next run parses again */
		if (!small || json_dump_file(small, tmp, JSON_COMPACT) < 0 || rename(tmp, cache) < 0)
			unlink(tmp);
		json_decref(small);
		free(tmp);
	}
	free(cache);
	return root;
}

static int embed_model_open_base(struct embed_model **out, const char *dir, unsigned flags);

int embed_model_open(struct embed_model **out, const char *dir)
{
	return embed_model_open_flags(out, dir, 0);
}

/*
 * spec "<model>/<dims>" that is no model itself: 1, with <model> resolved
 * (embed_model_resolve()) in *base (malloc'd) and <dims> in *dims; else 0.
 */
static int split_dims(const char *spec, char **base, size_t *dims)
{
	const char *sl = strrchr(spec, '/');
	struct stat st;
	char *end;
	unsigned long d;

	if (!sl || sl == spec || !(sl[1] >= '0' && sl[1] <= '9') || stat(spec, &st) == 0 ||
	    static_model_probe(spec))
		return 0;
	errno = 0;
	d = strtoul(sl + 1, &end, 10);
	if (*end || errno)
		return 0;
	{
		char *b = xstrndup(spec, (size_t)(sl - spec));
		*base = xstrdup(embed_model_resolve(b));
		free(b);
	}
	*dims = (size_t)d;
	return 1;
}

int embed_model_set_dims(struct embed_model *m, size_t dims)
{
	if (!m->stat)
		return error("model '%s': only a static model (ci-code) has Matryoshka dimensions",
			     embed_model_name(m, 0));
	return static_model_set_dims(m->stat, dims);
}

int embed_model_open_flags(struct embed_model **out, const char *spec, unsigned flags)
{
	struct embed_model *m;
	char *base = NULL;
	size_t dims = 0;
	int ret;

	if (!split_dims(spec, &base, &dims))
		return embed_model_open_base(out, spec, flags);
	if (!static_model_probe(base)) {
		error("model '%s': '/%zu' (Matryoshka dimensions) is for a static model (ci-code), and "
		      "'%s' is none", spec, dims, base);
		free(base);
		*out = NULL;
		return -1;
	}
	ret = embed_model_open_base(&m, base, flags);
	free(base);
	if (ret == 0 && embed_model_set_dims(m, dims) < 0) {
		embed_model_close(m);
		m = NULL;
		ret = -1;
	}
	*out = ret == 0 ? m : NULL;
	return ret;
}

/* embed_model_open_flags() for a model's own path (no "/<dims>"). */
static int embed_model_open_base(struct embed_model **out, const char *dir, unsigned flags)
{
	struct embed_model *m = xcalloc(1, sizeof(*m));

	m->open_flags = flags;
	char *model_json = xasprintf("%s/model.json", dir);
	char *vocab_json = xasprintf("%s/vocab.json", dir);
	const void *ptr[ARRAY_SIZE(wspecs)];
	struct tensor *t = NULL;
	size_t t_nr = 0, p, i;
	json_error_t jerr;
	json_t *root = NULL;
	int ret = -1, l, heads, depth[2], rc;

	*out = NULL;
	if (access(model_json, F_OK) < 0 && static_model_probe(dir)) {
		/* ci-code: <dir>.safetensors and <dir>.vocab */
		if (static_model_open(&m->stat, dir) < 0)
			goto done;
		m->key = key_file(key_file(FNV1A_BASIS, static_model_weights_path(m->stat)),
				  static_model_vocab_path(m->stat));
		*out = m;
		m = NULL;
		ret = 0;
		goto done;
	}
	if (access(model_json, F_OK) < 0 && bert_is_model_dir(dir)) {
		/* the other family: a HuggingFace BERT directory */
		static const char *const files[] = { "config.json", "vocab.txt", "model.safetensors" };
		if (bert_model_open(&m->bert, dir) < 0)
			goto done;
		m->key = FNV1A_BASIS;
		for (i = 0; i < ARRAY_SIZE(files); i++) {
			char *f = xasprintf("%s/%s", dir, files[i]);
			m->key = key_file(m->key, f);
			free(f);
		}
		*out = m;
		m = NULL;
		ret = 0;
		goto done;
	}
	if (access(model_json, R_OK) < 0) {
		error_errno("cannot read '%s'", model_json);
		goto done;
	}
	if (!(root = load_model_json(model_json, &jerr))) {
		error("%s:%d: %s", model_json, jerr.line, jerr.text);
		goto done;
	}
	{
		/* the loaded vocabulary, kept in ci's cache by the file's path */
		char *real = realpath(vocab_json, NULL), name[64], *cache;
		snprintf(name, sizeof(name), "use-vocab-%016llx.bin",
			 (unsigned long long)fnv1a(FNV1A_BASIS, real ? real : vocab_json,
						   strlen(real ? real : vocab_json)));
		cache = cache_file(name);
		free(real);
		rc = spm_load_cached(&m->vocab, vocab_json, cache);
		free(cache);
		if (rc < 0)
			goto done;
	}
	if (load_manifest(m, dir, model_json, root, &t, &t_nr) < 0)
		goto done;
	if (bind_weights(ptr, model_json, t, t_nr, (long)spm_size(m->vocab)) < 0)
		goto done;

	m->emb = ptr[W_EMB];
	m->key = key_file(key_file(FNV1A_BASIS, model_json), vocab_json);
	{
		json_t *g, *path;
		size_t gi, pi;
		json_array_foreach(json_object_get(root, "weightsManifest"), gi, g)
			json_array_foreach(json_object_get(g, "paths"), pi, path) {
				char *f = xasprintf("%s/%s", dir, json_string_value(path));
				m->key = key_file(m->key, f);
				free(f);
			}
	}
	for (i = 0; i < t_nr; i++)
		if (!strcmp(t[i].name, wspecs[W_EMB].name))
			m->emb_rows = (size_t)t[i].dims[0];
	m->max_tokens = (size_t)*(const int32_t *)ptr[W_MAXLEN];
	heads = *(const int32_t *)ptr[W_HEADS];
	depth[0] = *(const int32_t *)ptr[W_DEPTH0];
	depth[1] = *(const int32_t *)ptr[W_DEPTH1];
	if (m->max_tokens < 1 || m->max_tokens > 4096 || heads < 1 ||
	    heads * depth[0] != D0 || heads * depth[1] != D1) {
		error("%s: unexpected attention heads or input length", model_json);
		goto done;
	}
	m->ln_eps = *(const float *)ptr[W_EPS];
	m->l2_eps = *(const float *)ptr[W_L2EPS];
	m->tanh_w = ptr[W_TANH_W];
	m->tanh_b = ptr[W_TANH_B];
	for (l = 0; l < 2; l++) {
		struct layer *L = &m->layer[l];
		const void **q = ptr + W_L0 + l * L_NR;

		L->d = l ? D1 : D0;
		L->heads = heads;
		L->depth = depth[l];
		L->scale = *(const float *)ptr[l ? W_SCALE1 : W_SCALE0];
		L->ln1_s = q[L_LN1S]; L->ln1_b = q[L_LN1B];
		L->qkv_w = q[L_QKVW]; L->qkv_b = q[L_QKVB];
		L->out_w = q[L_OUTW]; L->out_b = q[L_OUTB];
		L->ln2_s = q[L_LN2S]; L->ln2_b = q[L_LN2B];
		L->ff1_w = q[L_FF1W]; L->ff1_b = q[L_FF1B];
		L->ff2_w = q[L_FF2W]; L->ff2_b = q[L_FF2B];
		L->res_w = l ? NULL : ptr[W_RES_W];
		L->res_b = l ? NULL : ptr[W_RES_B];
	}
	for (i = 0; i < D1; i++)
		m->bias0[i] = m->layer[0].res_b[i] + m->layer[0].out_b[i];

	/* the timing signal: sin then cos of position x inverse timescale, in float */
	m->timing = xmalloc(m->max_tokens * D0 * sizeof(float));
	for (p = 0; p < m->max_tokens; p++)
		for (i = 0; i < D0 / 2; i++) {
			float a = (float)p * ((const float *)ptr[W_TIMING])[i];
			m->timing[p * D0 + i] = sinf(a);
			m->timing[p * D0 + D0 / 2 + i] = cosf(a);
		}
	*out = m;
	m = NULL;
	ret = 0;
done:
	free(t);
	json_decref(root);
	free(model_json);
	free(vocab_json);
	embed_model_close(m);
	return ret;
}

void embed_model_close(struct embed_model *m)
{
	size_t i;

	if (!m)
		return;
	bert_model_close(m->bert);
	static_model_close(m->stat);
	spm_free(m->vocab);
	for (i = 0; i < m->region_nr; i++)
		region_release(&m->region[i]);
	free(m->region);
	free(m->timing);
	free(m->table);
	free(m->weight);
	free(m);
}

const char *embed_model_name(const struct embed_model *m, int static_mode)
{
	if (m->bert)
		return bert_model_name(m->bert);
	if (m->stat)
		return static_model_name(m->stat);
	return static_mode ? "use-lite-static" : "use-lite";
}

size_t embed_max_tokens(const struct embed_model *m)
{
	if (m->stat)
		return static_model_max_words(m->stat);
	return m->bert ? bert_max_tokens(m->bert) : m->max_tokens;
}

size_t embed_dim(const struct embed_model *m)
{
	if (m->stat)
		return static_model_dim(m->stat);
	return m->bert ? bert_dim(m->bert) : D1;
}

int embed_has_static(const struct embed_model *m)
{
	return !m->bert && !m->stat;
}

const struct spm *embed_model_vocab(const struct embed_model *m)
{
	return m->vocab;
}

/* ---- the forward pass ----------------------------------------------------------- */

struct embed_work *embed_work_new(const struct embed_model *m)
{
	struct embed_work *w = xcalloc(1, sizeof(*w));

	w->m = m;
	if (m->stat) {
		/* no matrix work: no BLIS */
		w->stw = static_work_new(m->stat);
		return w;
	}
	/* BLIS starts with the first work area, not with the model: a process
	 * that forks workers (ci-rank serve) opens the model, and each worker
	 * picks its kernels for its own query (embed_for_queries) */
	blis_setup();
	if (m->bert) {
		w->bw = bert_work_new(m->bert, small_products);
		return w;
	}
	bli_rntm_init(&w->rntm);
	bli_rntm_set_num_threads(1, &w->rntm);
	/*
	 * Documents through BLIS's packed kernels only: on a CPU whose
	 * configuration has small-matrix ("sup") kernels (AMD Zen, Haswell)
	 * BLIS takes them for products of few rows, and their rounding differs
	 * from the packed kernels': a text's vector depended on the batch it
	 * came in (a resumed embedding differed from an uninterrupted one in
	 * the last bits).  Queries (embed_for_queries) keep them for speed.
	 */
	if (!small_products)
		bli_rntm_disable_l3_sup(&w->rntm);
	w->x = xmalloc((size_t)MAX_ROWS * D0 * sizeof(float));
	w->qkv = xmalloc((size_t)MAX_ROWS * 3 * D1 * sizeof(float));
	w->att = xmalloc((size_t)MAX_ROWS * D1 * sizeof(float));
	w->y = xmalloc((size_t)MAX_ROWS * D1 * sizeof(float));
	w->g = xmalloc((size_t)MAX_ROWS * D1 * sizeof(float));
	w->ff = xmalloc((size_t)MAX_ROWS * DFF * sizeof(float));
	w->sc = xmalloc(m->max_tokens * m->max_tokens * sizeof(float));
	return w;
}

void embed_work_free(struct embed_work *w)
{
	if (!w)
		return;
	bert_work_free(w->bw);
	static_work_free(w->stw);
	spm_work_release(&w->sw);
	free(w->x);
	free(w->qkv);
	free(w->att);
	free(w->y);
	free(w->g);
	free(w->ff);
	free(w->sc);
	free(w->pool);
	free(w->off);
	free(w);
}

const int32_t *embed_tokenize_head(struct embed_work *w, const char *text, size_t len, size_t head,
				   size_t max, size_t *nr, size_t *nhead)
{
	*nhead = 0;
	if (w->stw)
		return static_tokenize_head(w->stw, text, len, head, max, nr, nhead);
	return embed_tokenize(w, text, len, max, nr);
}

const int32_t *embed_tokenize(struct embed_work *w, const char *text, size_t len,
			      size_t max, size_t *nr)
{
	if (w->bw)
		return bert_tokenize(w->bw, text, len, max, nr);
	if (w->stw)
		return static_tokenize(w->stw, text, len, max, nr);
	*nr = spm_encode(w->m->vocab, &w->sw, text, len, max ? max : w->m->max_tokens);
	return w->sw.ids;
}

/*
 * out = (s / sqrt(var + eps)) * (in - mean) + b, row by row, as the graph does.
 * With pend, in += pend first (a bias left over from the product that made in:
 * adding it here saves a pass over the rows).
 */
static void layer_norm(float *out, float *in, size_t rows, int d, const float *pend,
		       const float *s, const float *b, float eps)
{
	size_t r;
	int i;

	for (r = 0; r < rows; r++) {
		float *x = in + r * (size_t)d;
		float *o = out + r * (size_t)d;
		float mean = 0, var = 0, rs;

		if (pend)
			for (i = 0; i < d; i++)
				x[i] += pend[i];
		for (i = 0; i < d; i++)
			mean += x[i];
		mean /= (float)d;
		for (i = 0; i < d; i++)
			var += (x[i] - mean) * (x[i] - mean);
		var /= (float)d;
		rs = 1.0f / sqrtf(var + eps);
		for (i = 0; i < d; i++)
			o[i] = s[i] * rs * (x[i] - mean) + b[i];
	}
}

/* Set every row of x to b, for a product to add to (beta = 1). */
static void fill_rows(float *x, size_t rows, int d, const float *b)
{
	size_t r;

	for (r = 0; r < rows; r++, x += d)
		memcpy(x, b, (size_t)d * sizeof(float));
}

static void add_bias_relu(float *x, size_t rows, int d, const float *b)
{
	size_t r;
	int i;

	for (r = 0; r < rows; r++, x += d)
		for (i = 0; i < d; i++) {
			float v = x[i] + b[i];
			x[i] = v > 0 ? v : 0;
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
		for (i = 0; i < n; i++) {
			s[i] = expf(s[i] - mx);
			sum += s[i];
		}
		inv = 1.0f / sum;
		for (i = 0; i < n; i++)
			s[i] *= inv;
	}
}

/* att[rows of each sequence] = multi-head attention over w->qkv, sequence by sequence. */
static void attention(struct embed_work *w, const struct layer *L, const size_t *len, size_t n)
{
	size_t s, ld = 3 * (size_t)L->d;
	int h;

	for (s = 0; s < n; s++) {
		size_t nn = len[s], base = w->off[s];
		if (!nn)
			continue;
		for (h = 0; h < L->heads; h++) {
			const float *q = w->qkv + base * ld + (size_t)h * L->depth;
			const float *k = q + L->d, *v = q + 2 * L->d;

			if (nn == 1) {
				/* one position attends to itself with weight 1 */
				memcpy(w->att + base * D1 + (size_t)h * L->depth, v,
				       (size_t)L->depth * sizeof(float));
				continue;
			}
			gemm(w, 1, nn, nn, (size_t)L->depth, L->scale, q, ld, k, ld, 0, w->sc, nn);
			softmax_rows(w->sc, nn, nn);
			gemm(w, 0, nn, (size_t)L->depth, nn, 1, w->sc, nn, v, ld, 0,
			     w->att + base * D1 + (size_t)h * L->depth, D1);
		}
	}
}

/*
 * One layer over the T packed rows: w->y is its output (layer 0 reads w->x), but
 * for a bias, *pend, left for the next reader to add.
 */
static void layer_run(struct embed_work *w, const struct layer *L, const size_t *len,
		      size_t n, size_t T, const float **pend)
{
	const struct embed_model *m = w->m;
	size_t d = (size_t)L->d;

	/* attention, on the normalised input; its output is left at width d in att */
	if (L->res_w)
		layer_norm(w->g, w->x, T, L->d, NULL, L->ln1_s, L->ln1_b, m->ln_eps);
	else
		layer_norm(w->g, w->y, T, L->d, *pend, L->ln1_s, L->ln1_b, m->ln_eps);
	fill_rows(w->qkv, T, 3 * L->d, L->qkv_b);
	gemm(w, 0, T, 3 * d, d, 1, w->g, d, L->qkv_w, 3 * d, 1, w->qkv, 3 * d);
	/* att is laid out with row stride D1 whatever d: attention() writes it so */
	attention(w, L, len, n);
	if (L->res_w) {
		/* layer 0: the residual is the input projected to 512 */
		gemm(w, 0, T, D1, d, 1, w->x, d, L->res_w, D1, 0, w->y, D1);
		*pend = m->bias0;
	} else {
		*pend = L->out_b;
	}
	gemm(w, 0, T, D1, d, 1, w->att, D1, L->out_w, D1, 1, w->y, D1);

	/* FFN */
	layer_norm(w->g, w->y, T, D1, *pend, L->ln2_s, L->ln2_b, m->ln_eps);
	gemm(w, 0, T, DFF, D1, 1, w->g, D1, L->ff1_w, DFF, 0, w->ff, DFF);
	add_bias_relu(w->ff, T, DFF, L->ff1_b);
	gemm(w, 0, T, D1, DFF, 1, w->ff, DFF, L->ff2_w, D1, 1, w->y, D1);
	*pend = L->ff2_b;
}

static void pool_reserve(struct embed_work *w, size_t n)
{
	if (n > w->pool_alloc) {
		w->pool_alloc = n;
		free(w->pool);
		w->pool = xmalloc(n * D1 * sizeof(float));
	}
	if (n + 1 > w->off_alloc) {
		w->off_alloc = n + 1;
		free(w->off);
		w->off = xmalloc((n + 1) * sizeof(*w->off));
	}
}

/*
 * Run sequences [0, n) (at most MAX_ROWS tokens in all) through both layers and
 * leave the mean of each one's outputs in pool[0..n).
 */
static void forward_group(struct embed_work *w, const int32_t *const *ids, const size_t *len,
			  size_t n, float *pool)
{
	const struct embed_model *m = w->m;
	const float *pend = NULL;
	size_t s, p, T = 0;
	int i;

	for (s = 0; s < n; s++) {
		w->off[s] = T;
		T += len[s];
	}
	assert(T <= MAX_ROWS);
	for (s = 0; s < n; s++)
		for (p = 0; p < len[s]; p++) {
			int32_t id = ids[s][p];
			const float *e = m->emb + (size_t)(id >= 0 && (size_t)id < m->emb_rows ? id : 0) * D0;
			const float *t = m->timing + p * D0;
			float *x = w->x + (w->off[s] + p) * D0;

			/* the graph adds the embedding to itself plus the timing signal */
			for (i = 0; i < D0; i++)
				x[i] = e[i] + (e[i] + t[i]);
		}
	if (T) {
		layer_run(w, &m->layer[0], len, n, T, &pend);
		layer_run(w, &m->layer[1], len, n, T, &pend);
	}
	for (s = 0; s < n; s++) {
		float *o = pool + s * D1, inv = 1.0f / (float)(len[s] ? len[s] : 1);
		memset(o, 0, D1 * sizeof(float));
		for (p = 0; p < len[s]; p++) {
			const float *y = w->y + (w->off[s] + p) * D1;
			for (i = 0; i < D1; i++)
				o[i] += y[i];
		}
		/* the mean of y + pend */
		for (i = 0; i < D1; i++)
			o[i] = len[s] ? o[i] * inv + pend[i] : 0;
	}
}

/* out[0..n) = l2norm(tanh(pool W + b)) */
static void head(struct embed_work *w, const float *pool, size_t n, float *out)
{
	const struct embed_model *m = w->m;
	size_t s;
	int i;

	gemm(w, 0, n, D1, D1, 1, pool, D1, m->tanh_w, D1, 0, out, D1);
	for (s = 0; s < n; s++) {
		float *o = out + s * D1, ss = 0, r;
		for (i = 0; i < D1; i++) {
			o[i] = tanhf(o[i] + m->tanh_b[i]);
			ss += o[i] * o[i];
		}
		r = 1.0f / sqrtf(ss > m->l2_eps ? ss : m->l2_eps);
		for (i = 0; i < D1; i++)
			o[i] *= r;
	}
}

/* Pool sequences [0, n) in groups of at most MAX_ROWS tokens into w->pool. */
static void forward_pool(struct embed_work *w, const int32_t *const *ids, const size_t *len,
			 size_t n)
{
	size_t s = 0;

	pool_reserve(w, n);
	while (s < n) {
		size_t e = s, T = 0;
		while (e < n && (e == s || T + len[e] <= MAX_ROWS))
			T += len[e++];
		forward_group(w, ids + s, len + s, e - s, w->pool + s * D1);
		s = e;
	}
}

void embed_forward_head(struct embed_work *w, const int32_t *const *ids, const size_t *len,
			const size_t *nhead, size_t n, float *out)
{
	if (w->stw) {
		static_forward_head(w->m->stat, ids, len, nhead, n, out);
		return;
	}
	embed_forward(w, ids, len, n, out);
}

void embed_forward_weighted(struct embed_work *w, const int32_t *ids, const float *wt, size_t n, float *out)
{
	if (w->stw) {
		static_forward_weighted(w->m->stat, ids, wt, n, out);
		return;
	}
	embed_forward(w, &ids, &n, 1, out);
}

size_t embed_token_word(const struct embed_model *m, int32_t id, const char **word)
{
	*word = "";
	return m->stat ? static_model_word(m->stat, id, word) : 0;
}

void embed_forward(struct embed_work *w, const int32_t *const *ids, const size_t *len,
		   size_t n, float *out)
{
	size_t i;

	if (w->bw) {
		bert_forward(w->bw, ids, len, n, out);
		return;
	}
	if (w->stw) {
		static_forward(w->m->stat, ids, len, n, out);
		return;
	}
	for (i = 0; i < n; i++)
		assert(len[i] <= w->m->max_tokens);
	forward_pool(w, ids, len, n);
	head(w, w->pool, n, out);
}

double embed_flops(const struct embed_model *m, const size_t *len, size_t n)
{
	double per_token = 2.0 * ((double)D0 * 3 * D0 + (double)D0 * D1 + (double)D0 * D1 +
				  2.0 * D1 * DFF + (double)D1 * 3 * D1 + (double)D1 * D1 +
				  2.0 * D1 * DFF);
	double f = 0;
	size_t i;

	if (m->bert)
		return bert_flops(m->bert, len, n);
	if (m->stat)
		return 0;	/* no products: sums of rows */
	for (i = 0; i < n; i++) {
		double t = (double)len[i];
		f += t * per_token + 4.0 * t * t * (D0 + D1) + 2.0 * D1 * D1;
	}
	return f;
}

/* ---- static mode ------------------------------------------------------------------- */

struct distil {
	struct embed_model *m;
	size_t from, to;	/* the ids this thread runs */
};

static void *distil_thread(void *arg)
{
	struct distil *d = arg;
	struct embed_work *w = embed_work_new(d->m);
	enum { CHUNK = 512 };
	int32_t id[CHUNK];
	const int32_t *ids[CHUNK];
	size_t len[CHUNK], i, s;

	for (s = d->from; s < d->to; s += CHUNK) {
		size_t n = d->to - s < CHUNK ? d->to - s : CHUNK;
		for (i = 0; i < n; i++) {
			id[i] = (int32_t)(s + i);
			ids[i] = &id[i];
			len[i] = 1;
		}
		forward_pool(w, ids, len, n);
		head(w, w->pool, n, d->m->table + s * D1);
	}
	embed_work_free(w);
	return NULL;
}

int embed_static_build(struct embed_model *m, int threads)
{
	struct distil *d;
	pthread_t *tid;
	int *started;
	size_t rows = m->emb_rows, per, V, r;
	double mean[D1] = { 0 };
	int i, k;

	if (m->table)
		return 0;
	assert(!m->bert && !m->stat);
	if (threads < 1)
		threads = 1;
	m->table = xmalloc(rows * D1 * sizeof(float));
	d = xcalloc((size_t)threads, sizeof(*d));
	tid = xcalloc((size_t)threads, sizeof(*tid));
	started = xcalloc((size_t)threads, sizeof(*started));
	per = (rows + (size_t)threads - 1) / (size_t)threads;
	for (i = 0; i < threads; i++) {
		d[i].m = m;
		d[i].from = (size_t)i * per < rows ? (size_t)i * per : rows;
		d[i].to = d[i].from + per < rows ? d[i].from + per : rows;
	}
	for (i = 1; i < threads; i++)
		started[i] = !pthread_create(&tid[i], NULL, distil_thread, &d[i]);
	distil_thread(&d[0]);
	for (i = 1; i < threads; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			distil_thread(&d[i]);	/* no thread: do its share here */
	}
	free(started);
	free(d);
	free(tid);

	/* centre: what all pieces share says nothing about any of them */
	V = spm_size(m->vocab);
	for (r = 0; r < V; r++)
		for (k = 0; k < D1; k++)
			mean[k] += m->table[r * D1 + k];
	for (r = 0; r < rows; r++)
		for (k = 0; k < D1; k++)
			m->table[r * D1 + k] -= (float)(mean[k] / (double)V);

	/* SIF weights: a / (a + p(piece)), the scores being log probabilities */
	m->weight = xmalloc(rows * sizeof(*m->weight));
	for (r = 0; r < rows; r++)
		m->weight[r] = (float)(STATIC_SIF_A / (STATIC_SIF_A + exp(r < V ? spm_score(m->vocab, (int32_t)r) : 0)));
	return 0;
}

/* o += a * v over the 512 dimensions (restrict: so that it vectorises) */
static void axpy(float *restrict o, const float *restrict v, float a)
{
	int i;

	for (i = 0; i < D1; i++)
		o[i] += a * v[i];
}

void embed_static(struct embed_work *w, const int32_t *const *ids, const size_t *len,
		  size_t n, float *out)
{
	const struct embed_model *m = w->m;
	static const int32_t unknown = 0;
	size_t s, p;
	int i;

	assert(m->table);
	for (s = 0; s < n; s++) {
		const int32_t *id = len[s] ? ids[s] : &unknown;
		size_t nn = len[s] ? len[s] : 1;
		float *o = out + s * D1, ss = 0, r;

		memset(o, 0, D1 * sizeof(float));
		for (p = 0; p < nn; p++) {
			size_t row = id[p] >= 0 && (size_t)id[p] < m->emb_rows ? (size_t)id[p] : 0;
			axpy(o, m->table + row * D1, m->weight[row]);
		}
		for (i = 0; i < D1; i++)
			ss += o[i] * o[i];
		r = ss > 0 ? 1.0f / sqrtf(ss) : 0;
		for (i = 0; i < D1; i++)
			o[i] *= r;
	}
}

/* The static table's file: a header, the table, the weights (native byte order). */
struct static_header {
	char magic[8];		/* "CISTATIC" */
	uint32_t version;	/* 1 */
	uint32_t rows, dim;	/* the table's shape */
	uint32_t pad;
	uint64_t key;		/* the model's files it was distilled from */
};

uint64_t embed_model_key(const struct embed_model *m)
{
	return m->key;
}

uint64_t embed_model_fingerprint(const struct embed_model *m)
{
	return m->stat ? static_model_fingerprint(m->stat) : 0;
}

int embed_static_load(struct embed_model *m, const char *path)
{
	struct static_header h;
	size_t rows = m->emb_rows;
	float *table = NULL, *weight = NULL;
	FILE *f;
	int ret = -1;

	if (m->bert || m->stat || !(f = fopen(path, "rb")))
		return -1;
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, "CISTATIC", 8) || h.version != 1 ||
	    h.rows != rows || h.dim != D1 || h.key != m->key)
		goto done;
	table = xmalloc(rows * D1 * sizeof(float));
	weight = xmalloc(rows * sizeof(float));
	if (fread(table, sizeof(float), rows * D1, f) != rows * D1 ||
	    fread(weight, sizeof(float), rows, f) != rows || fgetc(f) != EOF)
		goto done;
	free(m->table);
	free(m->weight);
	m->table = table;
	m->weight = weight;
	table = weight = NULL;
	ret = 0;
done:
	free(table);
	free(weight);
	fclose(f);
	return ret;
}

int embed_static_save(const struct embed_model *m, const char *path)
{
	struct static_header h;
	char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
	FILE *f;
	int ok;

	if (!m->table || m->bert || m->stat) {
		free(tmp);
		return -1;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, "CISTATIC", 8);
	h.version = 1;
	h.rows = (uint32_t)m->emb_rows;
	h.dim = D1;
	h.key = m->key;
	if (!(f = fopen(tmp, "wb"))) {
		free(tmp);
		return -1;
	}
	ok = fwrite(&h, sizeof(h), 1, f) == 1 &&
	     fwrite(m->table, sizeof(float), m->emb_rows * D1, f) == m->emb_rows * D1 &&
	     fwrite(m->weight, sizeof(float), m->emb_rows, f) == m->emb_rows;
	ok = (fclose(f) == 0) && ok;
	if (ok && rename(tmp, path) == 0) {
		free(tmp);
		return 0;
	}
	unlink(tmp);
	free(tmp);
	return -1;
}

/* ---- measuring BLIS ----------------------------------------------------------------------- */

double embed_gemm_rate(const struct embed_model *m, size_t rows, size_t seq, double seconds)
{
	struct embed_work *w;
	size_t nseq, i, s, *len, iters = 0;
	double t0, el, flops;
	struct timespec ts;
	int l, h;

	if (m->bert)
		return bert_gemm_rate(m->bert, rows, seq, seconds);
	if (m->stat)
		return 0;
	w = embed_work_new(m);
	if (rows > MAX_ROWS)
		rows = MAX_ROWS;
	if (seq < 1 || seq > m->max_tokens)
		seq = m->max_tokens;
	nseq = rows / seq ? rows / seq : 1;
	rows = nseq * seq;
	len = xmalloc(nseq * sizeof(*len));
	for (s = 0; s < nseq; s++)
		len[s] = seq;
	pool_reserve(w, nseq);
	/* inputs: anything finite */
	for (i = 0; i < rows * D0; i++)
		w->x[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
	for (i = 0; i < rows * D1; i++)
		w->g[i] = w->att[i] = w->y[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
	for (i = 0; i < rows * DFF; i++)
		w->ff[i] = (float)((i * 1299709) % 1000) * 1e-3f;
	for (i = 0; i < rows * 3 * D1; i++)
		w->qkv[i] = (float)((i * 15485863) % 1000) * 1e-3f - 0.5f;
	for (i = 0; i < nseq * D1; i++)
		w->pool[i] = 0.01f;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	do {
		/* the products of forward_group() and head(), in its order and shapes */
		for (l = 0; l < 2; l++) {
			const struct layer *L = &m->layer[l];
			size_t d = (size_t)L->d, ld = 3 * d;

			gemm(w, 0, rows, 3 * d, d, 1, w->g, d, L->qkv_w, 3 * d, 1, w->qkv, 3 * d);
			for (s = 0; s < nseq; s++)
				for (h = 0; h < L->heads; h++) {
					const float *q = w->qkv + s * seq * ld + (size_t)h * L->depth;
					gemm(w, 1, seq, seq, (size_t)L->depth, L->scale, q, ld, q + d, ld,
					     0, w->sc, seq);
					gemm(w, 0, seq, (size_t)L->depth, seq, 1, w->sc, seq, q + 2 * d, ld,
					     0, w->att + s * seq * D1 + (size_t)h * L->depth, D1);
				}
			if (L->res_w)
				gemm(w, 0, rows, D1, d, 1, w->x, d, L->res_w, D1, 0, w->y, D1);
			gemm(w, 0, rows, D1, d, 1, w->att, D1, L->out_w, D1, 1, w->y, D1);
			gemm(w, 0, rows, DFF, D1, 1, w->g, D1, L->ff1_w, DFF, 0, w->ff, DFF);
			gemm(w, 0, rows, D1, DFF, 1, w->ff, DFF, L->ff2_w, D1, 1, w->y, D1);
		}
		gemm(w, 0, nseq, D1, D1, 1, w->pool, D1, m->tanh_w, D1, 0, w->att, D1);
		iters++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		el = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 - t0;
	} while (el < seconds);
	flops = embed_flops(m, len, nseq) * (double)iters;
	free(len);
	embed_work_free(w);
	return flops / el * 1e-9;
}
