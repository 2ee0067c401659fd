/*
 * search/finder.c: a literal found by a SIMD search for a pair of its rarest
 * bytes (finder.h).  Shaped by the Linux kernel searched on a 2-core machine
 * against ripgrep: the pair of rare bytes leaves few candidate starts to
 * compare, and AVX2 where the CPU has it looks at 32 starts at a time.
 */
#include "core/common.h"
#include "search/finder.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/*
 * How common each byte is in source code (0 rarest, 255 most common), measured on
 * the Linux kernel's drivers; used to pick which bytes of a literal to look for.
 */
static const unsigned char byte_rank[256] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 251, 249, 9, 10, 11, 12, 13,
	14, 15, 16, 17, 124, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
	255, 173, 192, 171, 159, 172, 193, 165, 231, 232, 227, 181, 240, 225, 200, 199,
	248, 217, 213, 206, 197, 188, 190, 180, 198, 182, 179, 233, 174, 223, 221, 164,
	166, 219, 194, 215, 209, 229, 205, 195, 185, 216, 162, 178, 210, 208, 211, 204,
	207, 169, 220, 214, 222, 189, 183, 184, 191, 176, 167, 187, 170, 186, 161, 253,
	160, 245, 226, 242, 243, 254, 236, 224, 228, 247, 168, 212, 239, 234, 244, 241,
	238, 196, 250, 246, 252, 237, 230, 218, 235, 201, 177, 203, 175, 202, 163, 29,
	153, 137, 157, 30, 31, 125, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
	129, 130, 42, 147, 43, 44, 45, 46, 47, 143, 48, 49, 131, 141, 50, 51,
	145, 144, 52, 53, 150, 148, 54, 126, 132, 152, 55, 56, 57, 58, 59, 60,
	151, 127, 61, 62, 138, 142, 133, 63, 146, 64, 65, 66, 139, 67, 68, 69,
	70, 71, 155, 156, 128, 158, 72, 73, 74, 75, 76, 77, 78, 79, 140, 149,
	80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
	96, 97, 154, 98, 99, 134, 135, 136, 100, 101, 102, 103, 104, 105, 106, 107,
	108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123,
};

/* How common c is, either case when icase (the commoner of the two). */
static unsigned rank_of(unsigned char c, int icase)
{
	unsigned r = byte_rank[c];

	if (icase && c >= 'a' && c <= 'z' && byte_rank[c - 0x20] > r)
		r = byte_rank[c - 0x20];
	return r;
}

/*
 * s[0..n) is found as it is, or with icase in any mix of ASCII cases, s
 * lower-cased: (byte | 0x20) is a lower-case letter only for that letter's
 * two cases.
 */
void finder_init(struct finder *f, const char *s, size_t n, int icase)
{
	size_t i;

	f->s = (const unsigned char *)s;
	f->n = n;
	f->icase = icase;
	f->i1 = f->i2 = 0;
	for (i = 1; i < n; i++)
		if (rank_of(f->s[i], icase) < rank_of(f->s[f->i1], icase))
			f->i1 = i;
	f->i2 = f->i1 == 0 && n > 1 ? 1 : 0;
	for (i = 0; i < n; i++)
		if (i != f->i1 && rank_of(f->s[i], icase) < rank_of(f->s[f->i2], icase))
			f->i2 = i;
	f->o1 = icase && f->s[f->i1] >= 'a' && f->s[f->i1] <= 'z' ? 0x20 : 0;
	f->o2 = icase && f->s[f->i2] >= 'a' && f->s[f->i2] <= 'z' ? 0x20 : 0;
#ifdef HAVE_AVX2_PATH
	__builtin_cpu_init();
	f->avx2 = __builtin_cpu_supports("avx2");
#else
	f->avx2 = 0;
#endif
}

/* p[0..f->n) is the literal. */
static inline int finder_same(const struct finder *f, const unsigned char *p)
{
	size_t i;

	if (!f->icase)
		return !memcmp(p, f->s, f->n);
	for (i = 0; i < f->n; i++)
		if (ascii_lower(p[i]) != f->s[i])
			return 0;
	return 1;
}

/* Check candidate starts in the bit mask m (bit k: p + k). */
static inline const char *finder_check(const struct finder *f, const unsigned char *p, unsigned m)
{
	while (m) {
		unsigned k = (unsigned)__builtin_ctz(m);
		if (finder_same(f, p + k))
			return (const char *)(p + k);
		m &= m - 1;
	}
	return NULL;
}

/* The rare bytes of the literal at p. */
static inline int finder_rare(const struct finder *f, const unsigned char *p)
{
	return (p[f->i1] | f->o1) == f->s[f->i1] && (p[f->i2] | f->o2) == f->s[f->i2];
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2")))
static const char *finder_avx2(const struct finder *f, const unsigned char *p, const unsigned char *last)
{
	const __m256i v1 = _mm256_set1_epi8((char)f->s[f->i1]);
	const __m256i v2 = _mm256_set1_epi8((char)f->s[f->i2]);
	const __m256i o1 = _mm256_set1_epi8((char)f->o1);
	const __m256i o2 = _mm256_set1_epi8((char)f->o2);
	const char *r;

	/* every start in p .. p+31 is at most last, so every load is inside the text */
	while (p + 31 <= last) {
		__m256i a = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + f->i1)), o1);
		__m256i b = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + f->i2)), o2);
		unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, v1),
									      _mm256_cmpeq_epi8(b, v2)));
		if (m && (r = finder_check(f, p, m)))
			return r;
		p += 32;
	}
	for (; p <= last; p++)
		if (finder_rare(f, p) && finder_same(f, p))
			return (const char *)p;
	return NULL;
}
#endif

/* The first occurrence of the literal in hay[0..len), or NULL. */
const char *finder_find(const struct finder *f, const char *hay, size_t len)
{
	const unsigned char *p = (const unsigned char *)hay, *last;

	if (f->n == 1 && !f->icase)
		return memchr(hay, f->s[0], len);
	if (len < f->n)
		return NULL;
	last = p + (len - f->n);
#ifdef HAVE_AVX2_PATH
	if (f->avx2)
		return finder_avx2(f, p, last);
#endif
#ifdef __SSE2__
	{
		const __m128i v1 = _mm_set1_epi8((char)f->s[f->i1]);
		const __m128i v2 = _mm_set1_epi8((char)f->s[f->i2]);
		const __m128i o1 = _mm_set1_epi8((char)f->o1);
		const __m128i o2 = _mm_set1_epi8((char)f->o2);
		const char *r;

		while (p + 15 <= last) {
			__m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + f->i1)), o1);
			__m128i b = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + f->i2)), o2);
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, v1),
									       _mm_cmpeq_epi8(b, v2)));
			if (m && (r = finder_check(f, p, m)))
				return r;
			p += 16;
		}
	}
#endif
	for (; p <= last; p++)
		if (finder_rare(f, p) && finder_same(f, p))
			return (const char *)p;
	return NULL;
}

