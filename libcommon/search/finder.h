/*
 * search/finder.h: a literal found in a buffer by a SIMD search for a pair of
 * its rarest bytes (how rare: measured on the Linux kernel's drivers), ASCII
 * case folded or not; and the newlines of a buffer counted.
 *
 * The literal searches of ci-grep (-F, a literal regex, and the literal every
 * match of a regex holds) all come here: it is most of a search's time.
 */
#ifndef CI_SEARCH_FINDER_H
#define CI_SEARCH_FINDER_H

#include <stddef.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct finder {
	const unsigned char *s;	/* the literal (lower-cased when icase) */
	size_t n;		/* its length */
	size_t i1, i2;		/* offsets of its two rarest bytes (i1 != i2 when n > 1) */
	unsigned char o1, o2;	/* ORed into those bytes of the text first: 0x20 for a
				   letter when icase, else 0 */
	int icase;		/* ASCII letters match either case */
	int avx2;		/* the CPU has AVX2 */
};

static inline unsigned char ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

/*
 * s[0..n) is found as it is, or with icase in any mix of ASCII cases, s
 * lower-cased: (byte | 0x20) is a lower-case letter only for that letter's
 * two cases.  f points into s, which must outlive it.  Cannot fail.
 */
void finder_init(struct finder *f, const char *s, size_t n, int icase);

/* The first occurrence of the literal in hay[0..len), or NULL. */
const char *finder_find(const struct finder *f, const char *hay, size_t len);

/* Newlines in p[0..n). */
static inline size_t count_newlines(const char *p, size_t n)
{
	size_t c = 0, i = 0;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + i));
		c += (size_t)__builtin_popcount((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
	}
#endif
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

#endif
