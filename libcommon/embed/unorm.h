/*
 * unorm.h: Unicode NFKC normalisation of code point strings, and UTF-8 decoding.
 *
 * Written for ci-embed's tokenizer, which must see text exactly as the reference
 * (TF.js: String.prototype.normalize("NFKC")) does.  The tables come from Node's
 * ICU (scripts/gen-unorm-data.js).  Source code is mostly ASCII, which NFKC leaves
 * alone, so callers test for that first and skip the work.
 */
#ifndef CI_UNORM_H
#define CI_UNORM_H

#include <stddef.h>
#include <stdint.h>

/* A growable array of code points. */
struct ucs {
	uint32_t *cp;		/* the code points */
	size_t nr;		/* how many are in use */
	size_t alloc;		/* how many are allocated */
};

#define UCS_INIT { NULL, 0, 0 }

void ucs_release(struct ucs *u);
/* Append one code point. */
void ucs_add(struct ucs *u, uint32_t cp);

/*
 * Decode UTF-8 s[0..n) and append its code points to u.  An invalid byte becomes
 * U+FFFD (as JSON parsers leave no invalid UTF-8, this does not happen on the
 * strings ci-embed reads).  Cannot fail.
 */
void utf8_decode(struct ucs *u, const char *s, size_t n);

/*
 * Replace in[0..n) by its NFKC form in out (reset first).  in and out must differ.
 * Cannot fail.
 */
void unorm_nfkc(struct ucs *out, const uint32_t *in, size_t n);

#endif
