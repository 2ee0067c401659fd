/*
 * bert-tiny: write a tiny BERT model directory for ci-embed's tests, its weights
 * drawn from a fixed pseudo-random sequence (so every run writes the same bytes).
 *
 *   bert-tiny [--omit <tensor>] mean|cls|max <dir>
 *   bert-tiny minilm <dir> [<pieces>]
 *
 * Hidden size 32, 2 layers of 4 heads, FFN 64, at most 64 positions, a vocabulary
 * of a few hundred pieces (words, "##" pieces, punctuation, accented letters, CJK).
 * The two variants cover what the loader must tell apart:
 *
 *   mean  uncased (no tokenizer_config.json), mean pooling named by modules.json,
 *         truncation at max_position_embeddings (64), float32 tensors named
 *         "bert.*" with the layer norms' "gamma" and "beta", an int64 tensor and a
 *         pooler that the forward pass does not use, 3 unused embedding rows;
 *   cls   cased (tokenizer_config.json: do_lower_case false), CLS pooling from
 *         1_Pooling/config.json without modules.json, max_seq_length 24 in
 *         sentence_bert_config.json, layer norm epsilon 1e-5, float16 tensors and
 *         bfloat16 embeddings, unprefixed names with "weight" and "bias";
 *   max   mean's weights, but max pooling (1_Pooling/config.json without
 *         modules.json) and the tanh GELU ("gelu_new").
 *
 * minilm, for bench/embed.sh, has all-MiniLM-L6-v2's shape (hidden size 384, 6
 * layers of 12 heads, FFN 1536, 512 positions, max_seq_length 256, mean pooling,
 * uncased, float32) and random weights: its speed is the real model's, its
 * vectors mean nothing; <pieces>, a file of one piece a line, extends the vocabulary.
 *
 * --omit leaves one tensor out (its name as written), for the error tests.  The
 * golden vectors of tests/golden/ci-embed-bert come from scripts/bert-golden.py
 * run on these directories.
 */
#include "core/common.h"

#include <errno.h>
#include <sys/stat.h>

#define EXTRA_ROWS 3

/* the shape: the tiny one, or all-MiniLM-L6-v2's */
static int D = 32, LAYERS = 2, HEADS = 4, INTER = 64, POSITIONS = 64;

static const char *const tiny_vocab[] = {
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	"!", "\"", "#", "$", "%", "&", "'", "(", ")", "*", "+", ",", "-", ".", "/",
	":", ";", "<", "=", ">", "?", "@", "[", "\\", "]", "^", "_", "`", "{", "|", "}", "~",
	"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "##0", "##1", "##2",
	"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
	"n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z",
	"##a", "##b", "##c", "##d", "##e", "##f", "##g", "##h", "##i", "##j", "##k", "##l", "##m",
	"##n", "##o", "##p", "##q", "##r", "##s", "##t", "##u", "##v", "##w", "##x", "##y", "##z",
	"A", "B", "C", "D", "E", "F", "H", "P", "R", "S", "T", "W",
	"##A", "##E", "##R", "##S", "##T",
	"the", "of", "to", "in", "is", "and", "for", "on", "with", "at", "by", "it", "this",
	"that", "from", "all", "into", "an", "be", "not", "or", "as",
	"return", "def", "int", "char", "void", "struct", "static", "const", "self", "if",
	"else", "while", "print", "import", "class", "function", "var", "let",
	"file", "read", "write", "buffer", "parse", "string", "memory", "error", "bytes",
	"load", "whole", "skip", "white", "space", "cat", "sat", "mat", "sun", "hello",
	"world", "token", "model", "vector", "search", "code", "line", "name", "list",
	"##s", "##ing", "##ed", "##er", "##ly", "##tion", "##ize", "##able", "##es", "##ment",
	"##ness", "##ful", "##al",
	"The", "Hello", "World", "Parse", "Return", "File", "Error", "Caf", "##é",
	"cafe", "café", "naive", "naïve", "resume", "résumé", "uber", "über", "ñ", "é", "ü",
	"è", "à", "ç", "##ü", "##è", "straße", "strasse",
	"東", "京", "中", "文", "日", "本", "語", "は",
	"α", "β", "γ", "λ", "π", "σ", "–", "—", "…", "«", "»", "¿", "¡",
	"http", "##://", "www", "com", "org", "json", "html", "utf", "##8",
	"foo", "bar", "baz", "main", "argc", "argv", "null", "true", "false", "none",
	"camel", "##case", "snake", "get", "set", "##ter", "value", "key", "map",
};

/* splitmix64: the fixed sequence */
static uint64_t state = 0x2545F4914F6CDD1Dull;

static uint64_t next(void)
{
	uint64_t z = (state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* uniform in [c - a, c + a), a multiple of 2^-24 */
static float uniform(float c, float a)
{
	return c + a * ((float)(next() >> 40) * (1.0f / 8388608.0f) - 1.0f);
}

enum dtype { F32, F16, BF16, I64 };

struct tensor {
	char *name;
	enum dtype dtype;
	int ndim;
	long dims[2];
	struct buf data;	/* the bytes, little-endian */
};

static struct tensor *tensors;
static size_t tensors_nr, tensors_alloc;

static uint16_t to_half(float f)
{
	uint32_t u, sign, man;
	int exp;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	exp = (int)((u >> 23) & 0xff) - 127 + 15;
	man = u & 0x7fffff;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		/* subnormal: round to nearest */
		if (exp < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		return (uint16_t)(sign | ((man >> (14 - exp)) + ((man >> (13 - exp)) & 1)));
	}
	/* round to nearest, ties away: good enough for test weights */
	return (uint16_t)(sign | (uint32_t)exp << 10 | man >> 13) + ((man >> 12) & 1);
}

static void add(const char *name, enum dtype dt, int ndim, long d0, long d1, float c, float a)
{
	struct tensor *t;
	long n = ndim == 1 ? d0 : d0 * d1, i;

	ALLOC_GROW(tensors, tensors_nr + 1, tensors_alloc);
	t = &tensors[tensors_nr++];
	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	t->dtype = dt;
	t->ndim = ndim;
	t->dims[0] = d0;
	t->dims[1] = d1;
	buf_init(&t->data, 0);
	for (i = 0; i < n; i++) {
		float f = uniform(c, a);
		uint32_t u;
		unsigned char b[8];
		int k, size = 4;

		memcpy(&u, &f, 4);
		switch (dt) {
		case F32:
			break;
		case F16:
			u = to_half(f);
			size = 2;
			break;
		case BF16:
			u >>= 16;
			size = 2;
			break;
		case I64:
			u = (uint32_t)i;	/* position_ids: 0, 1, ... */
			size = 8;
			break;
		}
		for (k = 0; k < size; k++)
			b[k] = k < 4 ? (unsigned char)(u >> (8 * k)) : 0;
		buf_add(&t->data, b, (size_t)size);
	}
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		die("cannot write '%s'", path);
	free(path);
}

int main(int argc, char **argv)
{
	const char *omit = NULL, *variant, *dir;
	static const char *const dtname[] = { "F32", "F16", "BF16", "I64" };
	const char **vocab;
	size_t vocab_nr, vocab_alloc;
	char *extra = NULL;
	int cls, minilm, maxp, l, k;
	struct buf b = BUF_INIT, name = BUF_INIT;
	json_t *hdr;
	size_t i, off = 0;
	char *h, *path;
	FILE *f;

	util_init(argv[0]);
	if (argc == 5 && !strcmp(argv[1], "--omit")) {
		omit = argv[2];
		argv += 2;
		argc -= 2;
	}
	minilm = argc >= 3 && !strcmp(argv[1], "minilm");
	if ((argc != 3 && !(minilm && argc == 4)) ||
	    (strcmp(argv[1], "mean") && strcmp(argv[1], "cls") && strcmp(argv[1], "max") && !minilm))
		die("usage: bert-tiny [--omit <tensor>] mean|cls|max <dir>\n"
		    "   or: bert-tiny minilm <dir> [<pieces>]");
	variant = argv[1];
	dir = argv[2];
	cls = !strcmp(variant, "cls");
	maxp = !strcmp(variant, "max");
	vocab_nr = vocab_alloc = ARRAY_SIZE(tiny_vocab);
	vocab = xmalloc(vocab_alloc * sizeof(*vocab));
	memcpy(vocab, tiny_vocab, sizeof(tiny_vocab));
	if (minilm) {
		D = 384;
		LAYERS = 6;
		HEADS = 12;
		INTER = 1536;
		POSITIONS = 512;
		if (argc == 4) {
			size_t len, i0 = 0, j;
			if (read_file(argv[3], &extra, &len) < 0)
				return 1;
			for (j = 0; j <= len; j++)
				if (j == len || extra[j] == '\n') {
					if (j < len)
						extra[j] = '\0';
					if (j > i0) {
						ALLOC_GROW(vocab, vocab_nr + 1, vocab_alloc);
						vocab[vocab_nr++] = extra + i0;
					}
					i0 = j + 1;
				}
		}
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("cannot create '%s'", dir);

	/* config.json and the rest */
	buf_addf(&b, "{\n  \"_name_or_path\": \"tiny-bert-%s\",\n  \"architectures\": [\"BertModel\"],\n"
		 "  \"model_type\": \"bert\",\n  \"hidden_size\": %d,\n  \"num_hidden_layers\": %d,\n"
		 "  \"num_attention_heads\": %d,\n  \"intermediate_size\": %d,\n"
		 "  \"max_position_embeddings\": %d,\n  \"type_vocab_size\": 2,\n"
		 "  \"vocab_size\": %zu,\n  \"hidden_act\": \"%s\",\n  \"layer_norm_eps\": %s,\n"
		 "  \"position_embedding_type\": \"absolute\",\n  \"pad_token_id\": 0\n}\n",
		 variant, D, LAYERS, HEADS, INTER, POSITIONS, vocab_nr + EXTRA_ROWS,
		 maxp ? "gelu_new" : "gelu", cls ? "1e-05" : "1e-12");
	write_file(dir, "config.json", b.buf);
	buf_reset(&b);
	for (i = 0; i < vocab_nr; i++)
		buf_addf(&b, "%s\n", vocab[i]);
	write_file(dir, "vocab.txt", b.buf);
	path = xasprintf("%s/1_Pooling", dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("cannot create '%s'", path);
	free(path);
	buf_reset(&b);
	buf_addf(&b, "{\n  \"word_embedding_dimension\": %d,\n  \"pooling_mode_cls_token\": %s,\n"
		 "  \"pooling_mode_mean_tokens\": %s,\n  \"pooling_mode_max_tokens\": %s,\n"
		 "  \"pooling_mode_mean_sqrt_len_tokens\": false\n}\n", D,
		 cls ? "true" : "false", cls || maxp ? "false" : "true", maxp ? "true" : "false");
	write_file(dir, "1_Pooling/config.json", b.buf);
	if (cls) {
		write_file(dir, "tokenizer_config.json",
			   "{\"do_lower_case\": false, \"model_max_length\": 512}\n");
		write_file(dir, "sentence_bert_config.json",
			   "{\"max_seq_length\": 24, \"do_lower_case\": false}\n");
	} else if (minilm || maxp) {
		write_file(dir, "sentence_bert_config.json",
			   "{\"max_seq_length\": 256, \"do_lower_case\": false}\n");
	} else {
		write_file(dir, "modules.json",
			   "[{\"idx\": 0, \"name\": \"0\", \"path\": \"\", \"type\": \"sentence_transformers.models.Transformer\"},\n"
			   " {\"idx\": 1, \"name\": \"1\", \"path\": \"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"},\n"
			   " {\"idx\": 2, \"name\": \"2\", \"path\": \"2_Normalize\", \"type\": \"sentence_transformers.models.Normalize\"}]\n");
	}

	/* the weights */
#define NAME(...) (buf_reset(&name), buf_addstr(&name, cls ? "" : "bert."), \
		   buf_addf(&name, __VA_ARGS__), name.buf)
#define LNW (cls ? "weight" : "gamma")
#define LNB (cls ? "bias" : "beta")
	{
		enum dtype dt = cls ? F16 : F32, edt = cls ? BF16 : F32;

		add(NAME("embeddings.word_embeddings.weight"), edt, 2,
		    (long)(vocab_nr + EXTRA_ROWS), D, 0, 1);
		add(NAME("embeddings.position_embeddings.weight"), edt, 2, POSITIONS, D, 0, 0.5f);
		add(NAME("embeddings.token_type_embeddings.weight"), edt, 2, 2, D, 0, 0.5f);
		add(NAME("embeddings.LayerNorm.%s", LNW), dt, 1, D, 0, 1, 0.2f);
		add(NAME("embeddings.LayerNorm.%s", LNB), dt, 1, D, 0, 0, 0.1f);
		if (!cls)
			add("bert.embeddings.position_ids", I64, 2, 1, POSITIONS, 0, 0);
		for (l = 0; l < LAYERS; l++) {
			static const char *const qkv[] = { "query", "key", "value" };
			for (k = 0; k < 3; k++) {
				add(NAME("encoder.layer.%d.attention.self.%s.weight", l, qkv[k]), dt, 2, D, D, 0, 0.35f);
				add(NAME("encoder.layer.%d.attention.self.%s.bias", l, qkv[k]), dt, 1, D, 0, 0, 0.1f);
			}
			add(NAME("encoder.layer.%d.attention.output.dense.weight", l), dt, 2, D, D, 0, 0.3f);
			add(NAME("encoder.layer.%d.attention.output.dense.bias", l), dt, 1, D, 0, 0, 0.1f);
			add(NAME("encoder.layer.%d.attention.output.LayerNorm.%s", l, LNW), dt, 1, D, 0, 1, 0.2f);
			add(NAME("encoder.layer.%d.attention.output.LayerNorm.%s", l, LNB), dt, 1, D, 0, 0, 0.1f);
			add(NAME("encoder.layer.%d.intermediate.dense.weight", l), dt, 2, INTER, D, 0, 0.3f);
			add(NAME("encoder.layer.%d.intermediate.dense.bias", l), dt, 1, INTER, 0, 0, 0.1f);
			add(NAME("encoder.layer.%d.output.dense.weight", l), dt, 2, D, INTER, 0, 0.25f);
			add(NAME("encoder.layer.%d.output.dense.bias", l), dt, 1, D, 0, 0, 0.1f);
			add(NAME("encoder.layer.%d.output.LayerNorm.%s", l, LNW), dt, 1, D, 0, 1, 0.2f);
			add(NAME("encoder.layer.%d.output.LayerNorm.%s", l, LNB), dt, 1, D, 0, 0, 0.1f);
		}
		if (!cls) {
			add("bert.pooler.dense.weight", dt, 2, D, D, 0, 0.3f);
			add("bert.pooler.dense.bias", dt, 1, D, 0, 0, 0.1f);
		}
	}

	/* model.safetensors: header length, JSON header (padded to 8), data */
	hdr = json_object();
	json_object_set_new(hdr, "__metadata__", json_pack("{s:s}", "format", "pt"));
	for (i = 0; i < tensors_nr; i++) {
		struct tensor *t = &tensors[i];
		json_t *shape;

		if (omit && !strcmp(omit, t->name))
			continue;
		shape = t->ndim == 1 ? json_pack("[I]", (json_int_t)t->dims[0]) :
			json_pack("[I,I]", (json_int_t)t->dims[0], (json_int_t)t->dims[1]);
		json_object_set_new(hdr, t->name, json_pack("{s:s,s:o,s:[I,I]}", "dtype", dtname[t->dtype],
			"shape", shape, "data_offsets", (json_int_t)off, (json_int_t)(off + t->data.len)));
		off += t->data.len;
	}
	h = json_dumps(hdr, JSON_COMPACT | JSON_PRESERVE_ORDER);
	buf_reset(&b);
	buf_addstr(&b, h);
	while (b.len % 8)
		buf_addch(&b, ' ');
	path = xasprintf("%s/model.safetensors", dir);
	f = fopen(path, "wb");
	if (!f)
		die("cannot write '%s'", path);
	{
		unsigned char len8[8];
		for (k = 0; k < 8; k++)
			len8[k] = (unsigned char)((uint64_t)b.len >> (8 * k));
		fwrite(len8, 1, 8, f);
	}
	fwrite(b.buf, 1, b.len, f);
	for (i = 0; i < tensors_nr; i++)
		if (!omit || strcmp(omit, tensors[i].name))
			fwrite(tensors[i].data.buf, 1, tensors[i].data.len, f);
	if (ferror(f) || fclose(f) != 0)
		die("cannot write '%s'", path);
	free(path);
	free(h);
	json_decref(hdr);
	for (i = 0; i < tensors_nr; i++) {
		free(tensors[i].name);
		buf_release(&tensors[i].data);
	}
	free(tensors);
	free(vocab);
	free(extra);
	buf_release(&b);
	buf_release(&name);
	return 0;
}
