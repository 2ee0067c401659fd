/*
 * embedtext.h: what of a record is embedded, where the model is, and embedding
 * a list of texts on several threads: what ci-embed and the commands that embed
 * in-process (ci-index build --embed, ci-couple commits) share, so that a vector
 * means the same whoever computed it.
 */
#ifndef CI_EMBEDTEXT_H
#define CI_EMBEDTEXT_H

#include <stddef.h>
#include <jansson.h>
#include "core/buf.h"
#include "embed/embed.h"

/* What of a chunk is embedded by default (bench/embed-eval.sh chose it). */
#define EMBED_DEFAULT_FIELDS "name,signature,comment,words"

/* The parts of a chunk record that can be embedded. */
enum embed_field {
	EF_PATH, EF_KIND, EF_SCOPE, EF_NAME, EF_SIGNATURE, EF_COMMENT, EF_CODE, EF_TEXT, EF_WORDS,
	EF_MAX
};
extern const char *const embed_field_names[EF_MAX];

struct embed_fields {
	enum embed_field f[EF_MAX];	/* in order */
	int nr;				/* used */
};

/* Parse a comma-separated list of field names: 0, or -1 after a message. */
int embed_fields_parse(struct embed_fields *out, const char *list);

/*
 * Append the text embedded for chunk record rec: its fields, in order, words of
 * identifiers split, white space squeezed.  Only about limit bytes can matter
 * (the tokenizer reads no further): long parts are cut there.  Returns how many
 * bytes at the start of what it appended are the chunk's name (0 unless "name"
 * is the first field written), which a static model weighs more
 * (embed_tokenize_head(), embed_texts()).  Cannot fail.
 */
size_t embed_chunk_text(struct buf *out, json_t *rec, const struct embed_fields *fields, size_t limit);

/* Append the text embedded for a commit: its message, white space squeezed, cut
 * at limit bytes.  message may be NULL (nothing appended). */
void embed_commit_text(struct buf *out, const char *message, size_t limit);

/* How many bytes of text can matter for max_tokens tokens (0: the model's 128). */
size_t embed_text_limit(int max_tokens);

/* The model used when none is named (--model, $CI_MODEL): ci-code, which finds
 * the function a description means about twice as often as USE-lite
 * (share/models/ci-code.md, bench/embed-code.sh). */
#define EMBED_DEFAULT_MODEL "ci-code"

/*
 * The path embed_model_open() takes for a model's name: "use-lite" (the build
 * tree's copy, scripts/setup, else the installed one), "ci-code" (the source
 * tree's share/models/ci-code, else the installed one); anything else is a
 * path already ("ci-code/64", a prefix of ci-code's vectors, is left to
 * embed_model_open(), which resolves its "ci-code").  Cannot fail.
 */
const char *embed_model_resolve(const char *name);
/* Is name one of the models embed_model_resolve() knows by name ("ci-code/<dims>" too)? */
int embed_model_known(const char *name);
/* Does spec (a path, as embed_model_dir() gives it) name a static model, "/<dims>" or not? */
int embed_model_is_static(const char *spec);

/* The model: opt (--model), else $CI_MODEL, else EMBED_DEFAULT_MODEL, each a
 * name or a path (embed_model_resolve()).  Cannot fail. */
const char *embed_model_dir(const char *opt);

/*
 * The same for a command that reads an index whose vectors are of model
 * index_model (NULL: none): the index's model when it is one known by name
 * and neither opt nor $CI_MODEL names another, so that queries and updates
 * use the model the index was built with.  Cannot fail.
 */
const char *embed_model_dir_for(const char *opt, const char *index_model);

/*
 * Embed texts[i][0..lens[i]) for i < n into out[i * embed_dim(m) ...], each cut at
 * max_tokens tokens (0: the model's limit), with the transformer or, when
 * static_mode, the static table (built by the caller), on threads threads, in
 * batches of 32 sequences.  heads (or NULL): the bytes at the start of each text
 * that are a chunk's name (embed_chunk_text()'s answer), for a model that weighs
 * a name (ci-code).  Returns the number of tokens embedded.  Cannot fail.
 */
size_t embed_texts(struct embed_model *m, int static_mode, size_t max_tokens, int threads,
		   const char *const *texts, const size_t *lens, const size_t *heads, size_t n, float *out);

#endif
