/*
 * wordpiece.h: the WordPiece tokenizer of BERT models, as HuggingFace's
 * BertTokenizer runs it.
 *
 * The vocabulary is vocab.txt: one piece a line, the line number (from 0) being
 * the id; pieces that continue a word start with "##" (or the "vocab" of a
 * tokenizer.json).  Encoding:
 *
 *  - basic tokenizer: drop U+0000, U+FFFD and control characters (Unicode Cc and
 *    Cf, but tab, newline and carriage return are white space); white space
 *    (those three, space, Unicode Zs) becomes a space; CJK ideographs get a space
 *    on either side; with lowercase, each character is lowercased, and with
 *    strip_accents the text is decomposed (NFD) and its non-spacing marks (Mn)
 *    dropped; then the text is split at white space (Unicode White_Space) and
 *    each punctuation character (ASCII symbols and Unicode P*) is a word of its
 *    own;
 *  - WordPiece: each word is cut greedily into the longest pieces of the
 *    vocabulary, from the left, all but the first looked up with "##"; a word
 *    that cannot be cut so, or is longer than 100 characters, is one [UNK];
 *  - [CLS] first, [SEP] last; with a limit of max ids, the pieces are cut so
 *    that [SEP] still fits (HuggingFace's truncation).
 *
 * Unicode properties, case and decompositions come from ICU.
 *
 * This is the fast tokenizer's behaviour (tokenizers' BertNormalizer and
 * BertPreTokenizer), which sentence-transformers uses.  NEEDSWORK: recent slow
 * BertTokenizers NFC-compose the text first, which differs on decomposed text
 * for cased models only; special tokens written in the text ("[SEP]") are split
 * like any other text, where HuggingFace keeps them whole; case mapping is ICU's
 * simple one (Python's full mapping differs on a few letters such as final sigma).
 */
#ifndef CI_WORDPIECE_H
#define CI_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>
#include "embed/unorm.h"

struct wordpiece;

/* How to read text: HuggingFace's do_lower_case, strip_accents, tokenize_chinese_chars. */
struct wordpiece_opts {
	int lowercase;		/* lowercase every character */
	int strip_accents;	/* NFD, then drop Mn */
	int chinese_chars;	/* space around CJK ideographs */
};

/* Scratch memory of wordpiece_encode(); one per thread, starts zeroed (WORDPIECE_WORK_INIT). */
struct wordpiece_work {
	struct ucs in;		/* the text, decoded */
	struct ucs norm;	/* ... cleaned, lowercased, accents stripped */
	char *piece;		/* a candidate piece, "##" and UTF-8 */
	size_t piece_alloc;
	int32_t *ids;		/* the result of the last wordpiece_encode() */
	size_t ids_nr, ids_alloc;
};

#define WORDPIECE_WORK_INIT { UCS_INIT, UCS_INIT, NULL, 0, NULL, 0, 0 }

/*
 * Load vocab.txt from path.  It must hold [CLS], [SEP] and [UNK].  Returns 0
 * and a new tokenizer in *out, or reports what is wrong with the file (naming
 * it) and returns -1.
 */
int wordpiece_load(struct wordpiece **out, const char *path, const struct wordpiece_opts *opts);
/*
 * The same from a HuggingFace tokenizer.json whose model is WordPiece (its
 * "vocab": piece -> id); a BertNormalizer there overrides *opts (lowercase,
 * strip_accents, handle_chinese_chars), which is updated.
 */
int wordpiece_load_json(struct wordpiece **out, const char *path, struct wordpiece_opts *opts);
void wordpiece_free(struct wordpiece *wp);

/* The number of pieces (ids are 0 .. wordpiece_size() - 1). */
size_t wordpiece_size(const struct wordpiece *wp);
/* The id of piece s[0..n), or -1. */
int32_t wordpiece_id(const struct wordpiece *wp, const char *s, size_t n);

/*
 * Encode text[0..len) (UTF-8): [CLS], its pieces, [SEP], at most max ids (max
 * >= 2) in w->ids[0..w->ids_nr), valid until the next call with w.  Returns
 * w->ids_nr.  Cannot fail.
 */
size_t wordpiece_encode(const struct wordpiece *wp, struct wordpiece_work *w,
			const char *text, size_t len, size_t max);

void wordpiece_work_release(struct wordpiece_work *w);

#endif
