/*
 * bert.h: sentence embeddings with a HuggingFace BERT-family model, in C with BLIS.
 *
 * The model is a directory as HuggingFace and sentence-transformers save it:
 * config.json (sizes, layer norm epsilon, activation), vocab.txt (WordPiece),
 * model.safetensors (the weights), and optionally tokenizer_config.json
 * (do_lower_case, strip_accents, tokenize_chinese_chars, model_max_length),
 * sentence_bert_config.json (max_seq_length), modules.json and its Pooling
 * module's config.json (CLS, mean or max pooling).  all-MiniLM-L6-v2 (mean),
 * bge-small-en-v1.5 (CLS) and e5-small-v2 are such directories.
 *
 * The forward pass is BertModel's: word + position + token type 0 embeddings,
 * layer norm; per layer, multi-head self-attention, then the FFN (GELU), each
 * followed by a residual sum and a layer norm (post-LN); the pooling; L2 norm.
 * As in embed.c, the sequences of a batch are packed without padding, so every
 * dense product is one BLIS sgemm over all their tokens and no token attends to
 * another text's (the reference's padding mask gives such weights exactly 0).
 *
 * Threads: the model is read-only once loaded; each thread brings its own
 * struct bert_work.
 */
#ifndef CI_BERT_H
#define CI_BERT_H

#include <stddef.h>
#include <stdint.h>

struct bert_model;
struct bert_work;

/* Does dir look like a BERT-family directory (it has a config.json)? */
int bert_is_model_dir(const char *dir);

/*
 * Load the model in dir: read its configuration, map model.safetensors and check
 * every weight the forward pass needs against config.json, load vocab.txt.
 * Returns 0 and the model in *out, or reports what is wrong, naming the file
 * (and the tensor), and returns -1.  BLIS must be initialised (embed.c does).
 */
int bert_model_open(struct bert_model **out, const char *dir);
void bert_model_close(struct bert_model *m);

/* The model's id for "model" fields: the directory's name (owned by m). */
const char *bert_model_name(const struct bert_model *m);
/* The output dimension (hidden_size). */
size_t bert_dim(const struct bert_model *m);
/* The longest input in tokens, [CLS] and [SEP] included. */
size_t bert_max_tokens(const struct bert_model *m);

/* A work area; small: products of a few rows (a query's) may take BLIS's
 * small-matrix ("sup") kernels, whose rounding depends on the number of rows:
 * documents never do, so that a text's vector does not depend on the batch
 * it came in. */
struct bert_work *bert_work_new(const struct bert_model *m, int small);
void bert_work_free(struct bert_work *w);

/*
 * Tokenize text[0..len): [CLS] ... [SEP], at most max ids (0 or more than the
 * model's limit: the model's limit; at least 2).  The ids stay valid until the
 * next call with w; their count is returned in *nr.
 */
const int32_t *bert_tokenize(struct bert_work *w, const char *text, size_t len, size_t max,
			     size_t *nr);

/*
 * Embed n sequences of token ids (ids[i][0..len[i]), len[i] <= the model's
 * limit; an empty one is taken for [CLS] [SEP]): out[i * bert_dim() ...]
 * receives each L2-normalised vector.  Cannot fail.
 */
void bert_forward(struct bert_work *w, const int32_t *const *ids, const size_t *len,
		  size_t n, float *out);

/* Floating-point operations of bert_forward on sequences of these lengths. */
double bert_flops(const struct bert_model *m, const size_t *len, size_t n);

/* BLIS's rate on bert_forward's products alone: see embed_gemm_rate(). */
double bert_gemm_rate(const struct bert_model *m, size_t rows, size_t seq, double seconds);

#endif
