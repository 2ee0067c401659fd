/*
 * embed/static.h: ci-code, a static code-search embedding model trained here
 * (scripts/train-embed): a vector per word, no transformer.
 *
 * The words of a text: the runs of ASCII letters and digits, each cut before an
 * upper-case letter that follows a lower-case letter or a digit, and before the
 * last capital of a run of capitals that a lower-case letter follows (so
 * parseLongArg, parse_long_arg, PARSE_LONG_ARG give parse, long, arg, and
 * HTTPServer gives http, server), lowercased; words of 2 to 48 characters that
 * start with a letter, and are in the vocabulary, count; each once, the first
 * max of them.  A text's vector is the sum of its words' vectors, L2-normalised
 * (a text without a known word gets a vector of zeros); in a chunk's, the words
 * of its name count the model's name_weight times each (static_forward_head()).
 * scripts/train-embed cuts words the same way, byte for byte
 * (tests/t0620-embed-ci-code.sh checks golden vectors it wrote).
 *
 * The files: <path>.safetensors ("embeddings" I8 [V][dim], "scales" F32 [V]: a
 * row's vector is its int8 values times its scale; "__metadata__" with
 * "format": "ci-static-1", "name", optionally "max_words" and "name_weight")
 * and <path>.vocab (V lines, a word each: the row of line i is i).  The
 * weights stay in the file's mapping.
 *
 * Threads: the model is read-only once loaded (and its dims set); each thread brings its own
 * struct static_work.
 */
#ifndef CI_EMBED_STATIC_H
#define CI_EMBED_STATIC_H

#include <stddef.h>
#include <stdint.h>

struct static_model;
struct static_work;

/*
 * Does path name a static model: <path>.safetensors exists, or path is a
 * .safetensors file with a .vocab beside it?  Cannot fail.
 */
int static_model_probe(const char *path);

/*
 * Load the model at path (as static_model_probe() takes it): check the tensors'
 * dtypes and shapes, the vocabulary (one word a line, as many as rows, each a
 * word the tokenizer can cut, none twice).  0 and the model in *out, or -1
 * after a message naming the file.
 */
int static_model_open(struct static_model **out, const char *path);
void static_model_close(struct static_model *m);

/*
 * The model's id for "model" fields: its metadata's "name" ("ci-code"), and
 * "/<dims>" after it when its vectors are cut to a prefix (static_model_set_dims()):
 * "ci-code/64".
 */
const char *static_model_name(const struct static_model *m);
/* The dimension of its vectors (the prefix's, when cut). */
size_t static_model_dim(const struct static_model *m);
/* The dimension of its rows, whatever the prefix. */
size_t static_model_full_dim(const struct static_model *m);
/*
 * Matryoshka dimensions: from now on a vector is the first dims values of the
 * sum of the rows, L2-normalised (a model trained with scripts/train-embed
 * --matryoshka keeps most of its quality in such a prefix).  dims from 1 to
 * static_model_full_dim(); the full dimension is the model itself (its id
 * without "/<dims>").  0, or -1 after a message.
 */
int static_model_set_dims(struct static_model *m, size_t dims);
/* The most distinct words of a text that count (512). */
size_t static_model_max_words(const struct static_model *m);
/*
 * How much each word of a chunk's name counts in the chunk's vector (the
 * metadata "name_weight", trained with scripts/train-embed --name-weight; 1
 * when the model has none): static_forward_head().
 */
float static_model_name_weight(const struct static_model *m);
/*
 * The weights' fingerprint: a hash of the first rows and their scales (64 KiB
 * and 4,096 scales at most) and of the name weight, which any training
 * changes; so that vectors of one version of a model are not read as
 * another's (the index records it).  Never 0.  Cannot fail.
 */
uint64_t static_model_fingerprint(const struct static_model *m);
/* The files it was read from, for a cache key: <path>.safetensors, <path>.vocab. */
const char *static_model_weights_path(const struct static_model *m);
const char *static_model_vocab_path(const struct static_model *m);

struct static_work *static_work_new(const struct static_model *m);
void static_work_free(struct static_work *w);

/*
 * The rows of the distinct known words of text[0..len), in order of first
 * appearance, at most max (0: static_model_max_words()).  Valid until the next
 * call with w; their count in *nr.  Cannot fail.
 */
const int32_t *static_tokenize(struct static_work *w, const char *text, size_t len, size_t max,
			       size_t *nr);
/*
 * The same, and in *nhead how many of those rows are of words that start in
 * text[0..head) (a chunk's name, which embed_chunk_text() writes first): the
 * first *nhead rows.  Cannot fail.
 */
const int32_t *static_tokenize_head(struct static_work *w, const char *text, size_t len, size_t head,
				    size_t max, size_t *nr, size_t *nhead);

/*
 * out[i * dim ...] = the L2-normalised sum of the rows ids[i][0..len[i]), for
 * i < n.  Cannot fail.
 */
void static_forward(const struct static_model *m, const int32_t *const *ids, const size_t *len,
		    size_t n, float *out);
/*
 * The same, the first nhead[i] rows of text i (its name's: static_tokenize_head())
 * counting static_model_name_weight() times each; nhead NULL: static_forward().
 */
void static_forward_head(const struct static_model *m, const int32_t *const *ids, const size_t *len,
			 const size_t *nhead, size_t n, float *out);

/*
 * The same for one text whose rows ids[0..n) count wt[0..n) times each (a
 * weight <= 0 leaves its row out): out[0..dim) the L2-normalised weighted sum.
 */
void static_forward_weighted(const struct static_model *m, const int32_t *ids, const float *wt, size_t n,
			     float *out);

/* The vocabulary's word of row (not NUL-terminated): its length, 0 for no row. */
size_t static_model_word(const struct static_model *m, int32_t row, const char **word);

/*
 * Each word of text[0..len) that static_tokenize() would look up, lowercased
 * (word[0..n), not NUL-terminated), in text order, repeats included, until fn
 * returns nonzero.  No model needed.
 */
void static_words(const char *text, size_t len, int (*fn)(const char *word, size_t n, void *arg), void *arg);

#endif
