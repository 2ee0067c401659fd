/*
 * spm.h: the SentencePiece unigram tokenizer of Universal Sentence Encoder Lite,
 * as its TF.js reference runs it.
 *
 * The vocabulary is vocab.json: a JSON array of [piece, score] pairs, the index
 * being the id; scores are log probabilities.  Encoding follows the reference
 * (@energetic-ai/embeddings, from tfjs-models' universal-sentence-encoder)
 * exactly, quirks included, so that ids match id for id:
 *
 *  - the text is NFKC-normalised; a non-empty text gets a "▁" (U+2581) in front
 *    and every U+0020 becomes "▁" (other white space stays as it is);
 *  - the pieces from id 6 on go into a trie (a piece listed twice keeps its last
 *    id and score); at each position the lattice gets every piece that starts
 *    there or, when none does, the single character as id 0 (unknown) with score 0;
 *  - Viterbi: the best segmentation by total score, later candidates winning ties,
 *    and a running total of exactly 0 counted as "no path yet";
 *  - consecutive unknowns are merged into one id 0.
 */
#ifndef CI_SPM_H
#define CI_SPM_H

#include <stddef.h>
#include <stdint.h>
#include "embed/unorm.h"

struct spm;

/* Scratch memory of spm_encode(); one per thread, starts zeroed (SPM_WORK_INIT). */
struct spm_work {
	struct ucs in;		/* the text, decoded */
	struct ucs norm;	/* ... normalised, with the ▁ convention */
	double *best;		/* Viterbi: best total score ending at each position */
	int32_t *word;		/* ... and the id of the piece that ends the best path */
	size_t lattice_alloc;	/* entries allocated in best and word */
	int32_t *ids;		/* the result of the last spm_encode() */
	size_t ids_nr, ids_alloc;
};

#define SPM_WORK_INIT { UCS_INIT, UCS_INIT, NULL, NULL, 0, NULL, 0, 0 }

/*
 * Load vocab.json from path.  Returns 0 and a new tokenizer in *out, or reports
 * what is wrong with the file (naming it) and returns -1.
 */
int spm_load(struct spm **out, const char *path);
/*
 * The same through a binary copy at cache (NULL: none): read instead of the
 * JSON when it is a sound copy of path as path is now (its size and mtime, a
 * checksum, every index checked), else written after loading the JSON (write
 * errors are ignored: the copy only saves time).
 */
int spm_load_cached(struct spm **out, const char *path, const char *cache);
void spm_free(struct spm *sp);

/* The number of pieces (ids are 0 .. spm_size() - 1). */
size_t spm_size(const struct spm *sp);
/* The text of piece id (UTF-8, owned by sp) and its score. */
const char *spm_piece(const struct spm *sp, int32_t id);
double spm_score(const struct spm *sp, int32_t id);

/*
 * Encode text[0..len) (UTF-8): the ids are left in w->ids[0..w->ids_nr), valid
 * until the next call with w.  With max > 0, only the first max ids are wanted:
 * they are the same as those of the whole text, but only a prefix of a long text
 * is read (cut before a space, where every segmentation has a boundary).
 * Returns w->ids_nr.  Cannot fail.
 */
size_t spm_encode(const struct spm *sp, struct spm_work *w, const char *text, size_t len,
		  size_t max);

void spm_work_release(struct spm_work *w);

#endif
