/*
 * vec.c: embedding vectors on the wire (base64 float32) and in the index
 * (float32 or int8 with a scale per vector); see vec.h.
 *
 * Shaped by two readers: ci-index load decodes every vector of a repository once,
 * and ci-rank and ci-couple decode every stored vector per query, so decoding is
 * a plain loop the compiler vectorises, with no allocation.
 */
#include "core/common.h"
#include "embed/vec.h"

#include <math.h>

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int vec_format_parse(enum vec_format *out, const char *name)
{
	if (!strcmp(name, "f32"))
		*out = VEC_F32;
	else if (!strcmp(name, "int8"))
		*out = VEC_INT8;
	else
		return -1;
	return 0;
}

const char *vec_format_name(enum vec_format f)
{
	return f == VEC_INT8 ? "int8" : "f32";
}

static float le_float(const unsigned char *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static void put_le_float(unsigned char *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	p[0] = (unsigned char)u;
	p[1] = (unsigned char)(u >> 8);
	p[2] = (unsigned char)(u >> 16);
	p[3] = (unsigned char)(u >> 24);
}

int vec_from_base64(float **out, size_t *dim, const char *b64, size_t len)
{
	signed char val[256];
	unsigned char *bytes;
	size_t i, n = 0, k;
	unsigned acc = 0;
	int bits = 0;

	*out = NULL;
	*dim = 0;
	memset(val, -1, sizeof(val));
	for (i = 0; i < 64; i++)
		val[(unsigned char)b64_alphabet[i]] = (signed char)i;
	while (len && b64[len - 1] == '=')
		len--;
	bytes = xmalloc(len * 3 / 4 + 4);
	for (i = 0; i < len; i++) {
		signed char v = val[(unsigned char)b64[i]];
		if (v < 0) {
			free(bytes);
			return -1;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			bytes[n++] = (unsigned char)(acc >> bits);
		}
	}
	if (!n || n % 4) {
		free(bytes);
		return -1;
	}
	*dim = n / 4;
	*out = xmalloc(*dim * sizeof(float));
	for (k = 0; k < *dim; k++)
		(*out)[k] = le_float(bytes + 4 * k);
	free(bytes);
	return 0;
}

void vec_to_base64(struct buf *b, const float *v, size_t dim)
{
	size_t len = dim * 4, k;
	unsigned char *bytes = xmalloc(len + 3);
	char *o;

	for (k = 0; k < dim; k++)
		put_le_float(bytes + 4 * k, v[k]);
	buf_grow(b, (len + 2) / 3 * 4 + 1);
	o = b->buf + b->len;
	for (k = 0; k + 2 < len; k += 3) {
		unsigned x = (unsigned)bytes[k] << 16 | (unsigned)bytes[k + 1] << 8 | bytes[k + 2];
		*o++ = b64_alphabet[x >> 18];
		*o++ = b64_alphabet[(x >> 12) & 63];
		*o++ = b64_alphabet[(x >> 6) & 63];
		*o++ = b64_alphabet[x & 63];
	}
	if (k < len) {
		unsigned x = (unsigned)bytes[k] << 16 | (k + 1 < len ? (unsigned)bytes[k + 1] << 8 : 0);
		*o++ = b64_alphabet[x >> 18];
		*o++ = b64_alphabet[(x >> 12) & 63];
		*o++ = k + 1 < len ? b64_alphabet[(x >> 6) & 63] : '=';
		*o++ = '=';
	}
	buf_setlen(b, (size_t)(o - b->buf));
	free(bytes);
}

void vec_encode(struct buf *out, double *scale, const float *v, size_t dim, enum vec_format f)
{
	size_t i;

	*scale = 0;
	if (f == VEC_F32) {
		buf_grow(out, dim * 4);
		for (i = 0; i < dim; i++)
			put_le_float((unsigned char *)out->buf + out->len + 4 * i, v[i]);
		buf_setlen(out, out->len + dim * 4);
		return;
	}
	{
		float max = 0;
		for (i = 0; i < dim; i++)
			if (fabsf(v[i]) > max)
				max = fabsf(v[i]);
		/* a vector of zeros (or not finite) keeps scale 0 and decodes to zeros */
		*scale = isfinite(max) && max > 0 ? (double)max / 127.0 : 0;
		buf_grow(out, dim);
		for (i = 0; i < dim; i++) {
			long q = *scale > 0 ? lrint((double)v[i] / *scale) : 0;
			if (q > 127)
				q = 127;
			if (q < -127)
				q = -127;
			out->buf[out->len + i] = (char)(signed char)q;
		}
		buf_setlen(out, out->len + dim);
	}
}

int vec_decode(float *out, size_t dim, const char *fmt, double scale, const void *blob, size_t bytes)
{
	const unsigned char *p = blob;
	size_t i;

	if (!blob || !dim)
		return -1;
	if (!fmt || !strcmp(fmt, "f32")) {
		if (bytes != dim * 4)
			return -1;
		for (i = 0; i < dim; i++)
			out[i] = le_float(p + 4 * i);
		return 0;
	}
	if (!strcmp(fmt, "int8")) {
		float s = (float)scale;
		if (bytes != dim)
			return -1;
		for (i = 0; i < dim; i++)
			out[i] = (float)(signed char)p[i] * s;
		return 0;
	}
	return -1;
}

double vec_cosine(const float *a, const float *b, size_t dim)
{
	double dot = 0, na = 0, nb = 0;
	size_t i;

	for (i = 0; i < dim; i++) {
		dot += (double)a[i] * b[i];
		na += (double)a[i] * a[i];
		nb += (double)b[i] * b[i];
	}
	return na > 0 && nb > 0 ? dot / sqrt(na * nb) : 0;
}

#define LANES 16

double vec_cosine_stored(const float *q, double qnorm, size_t dim, enum vec_format f, const void *blob,
			 size_t bytes)
{
	const unsigned char *p = blob;
	float dot[LANES] = { 0 }, nn[LANES] = { 0 };
	double d = 0, n = 0;
	size_t i = 0;
	int k;

	if (!blob || !dim)
		return -2;
	if (f == VEC_F32) {
		float v[LANES];
		if (bytes != dim * 4)
			return -2;
		/* fixed-length inner loops: vectorized at -O2 */
		for (; i + LANES <= dim; i += LANES) {
			for (k = 0; k < LANES; k++)
				v[k] = le_float(p + 4 * (i + k));
			for (k = 0; k < LANES; k++) {
				dot[k] += q[i + k] * v[k];
				nn[k] += v[k] * v[k];
			}
		}
		for (; i < dim; i++) {
			float x = le_float(p + 4 * i);
			d += (double)q[i] * x;
			n += (double)x * x;
		}
	} else if (f == VEC_INT8) {
		const signed char *c = (const signed char *)p;
		int32_t sq[LANES] = { 0 };
		int64_t sqt = 0;
		if (bytes != dim)
			return -2;
		for (; i + LANES <= dim; i += LANES) {
			for (k = 0; k < LANES; k++) {
				dot[k] += q[i + k] * (float)c[i + k];
				sq[k] += (int32_t)c[i + k] * c[i + k];
			}
		}
		for (; i < dim; i++) {
			d += (double)q[i] * c[i];
			sqt += (int32_t)c[i] * c[i];
		}
		for (k = 0; k < LANES; k++)
			sqt += sq[k];
		n = (double)sqt;
	} else {
		return -2;
	}
	for (k = 0; k < LANES; k++) {
		d += dot[k];
		n += nn[k];
	}
	return qnorm > 0 && n > 0 ? d / (qnorm * sqrt(n)) : 0;
}

/* ---- int8 rows against a query in int16 ---- */

void vec_q16_init(struct vec_q16 *qq, const float *q, size_t dim)
{
	float max = 0;
	size_t i;

	qq->v = xcalloc(dim ? dim : 1, sizeof(*qq->v));
	qq->dim = dim;
	qq->norm = 0;
	for (i = 0; i < dim; i++)
		if (fabsf(q[i]) > max)
			max = fabsf(q[i]);
	if (!(max > 0) || !isfinite(max))
		return;		/* all zeros (or not numbers): every cosine 0 */
	for (i = 0; i < dim; i++) {
		qq->v[i] = (int16_t)lrintf(q[i] / max * 32767.0f);
		qq->norm += (double)qq->v[i] * qq->v[i];
	}
	qq->norm = sqrt(qq->norm);
}

void vec_q16_release(struct vec_q16 *qq)
{
	free(qq->v);
	qq->v = NULL;
}

/*
 * The sums: 16 values a step, in 32-bit lanes emptied into 64-bit sums every
 * 64 steps (a lane gains at most 2 * 32767 * 127 a step: 64 steps stay
 * below 2^31).  Integers: the same sums whatever the instructions.
 */
#define Q16_STEP 16
#define Q16_FLUSH 64

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2")))
static void dot_q16_avx2(const int16_t *q, const signed char *c, size_t dim, int64_t *dp, int64_t *np)
{
	int64_t d = 0, n = 0;
	size_t i = 0;

	while (i + Q16_STEP <= dim) {
		__m256i ds = _mm256_setzero_si256(), ns = _mm256_setzero_si256();
		int32_t t[8];
		int k;
		for (k = 0; k < Q16_FLUSH && i + Q16_STEP <= dim; k++, i += Q16_STEP) {
			__m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(c + i)));
			__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(q + i));
			ds = _mm256_add_epi32(ds, _mm256_madd_epi16(x, y));
			ns = _mm256_add_epi32(ns, _mm256_madd_epi16(x, x));
		}
		_mm256_storeu_si256((__m256i *)(void *)t, ds);
		for (k = 0; k < 8; k++)
			d += t[k];
		_mm256_storeu_si256((__m256i *)(void *)t, ns);
		for (k = 0; k < 8; k++)
			n += t[k];
	}
	for (; i < dim; i++) {
		d += (int32_t)q[i] * c[i];
		n += (int32_t)c[i] * c[i];
	}
	*dp = d;
	*np = n;
}

/*
 * The dot product alone, for rows whose sums of squares are known
 * (vec_cosine_q16_n): 32 values a step in two accumulators, each flushed
 * after Q16_FLUSH products of pairs, as dot_q16_avx2's.
 */
__attribute__((target("avx2")))
static int64_t dot_only_q16_avx2(const int16_t *q, const signed char *c, size_t dim)
{
	int64_t d = 0;
	size_t i = 0;

	while (i + 2 * Q16_STEP <= dim) {
		__m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
		int32_t t[8];
		int k;
		for (k = 0; k < Q16_FLUSH && i + 2 * Q16_STEP <= dim; k++, i += 2 * Q16_STEP) {
			__m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(c + i)));
			__m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(c + i + 16)));
			a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(const void *)(q + i))));
			a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x1, _mm256_loadu_si256((const __m256i *)(const void *)(q + i + 16))));
		}
		_mm256_storeu_si256((__m256i *)(void *)t, a0);
		for (k = 0; k < 8; k++)
			d += t[k];
		_mm256_storeu_si256((__m256i *)(void *)t, a1);
		for (k = 0; k < 8; k++)
			d += t[k];
	}
	for (; i < dim; i++)
		d += (int32_t)q[i] * c[i];
	return d;
}
#endif

static void dot_q16(const int16_t *q, const signed char *c, size_t dim, int64_t *dp, int64_t *np)
{
	int64_t d = 0, n = 0;

	for (size_t i = 0; i < dim; i++) {
		d += (int32_t)q[i] * c[i];
		n += (int32_t)c[i] * c[i];
	}
	*dp = d;
	*np = n;
}

double vec_cosine_q16(const struct vec_q16 *qq, const void *row)
{
	static int avx2 = -1;
	int64_t d, n;

#if defined(__x86_64__) && defined(__GNUC__)
	if (avx2 < 0)
		avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
	if (avx2)
		dot_q16_avx2(qq->v, row, qq->dim, &d, &n);
	else
#endif
		dot_q16(qq->v, row, qq->dim, &d, &n);
	(void)avx2;
	return qq->norm > 0 && n > 0 ? (double)d / (qq->norm * sqrt((double)n)) : 0;
}

uint32_t vec_q16_row_norm2(const void *row, size_t dim)
{
	const signed char *c = row;
	uint32_t n = 0;

	for (size_t i = 0; i < dim; i++)
		n += (uint32_t)((int32_t)c[i] * c[i]);
	return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The dot product alone with 512-bit registers: 32 values a step, each lane
 * flushed after Q16_FLUSH steps as above.  Integer sums: the same value as
 * dot_only_q16_avx2's, bit for bit, in half the instructions.
 */
__attribute__((target("avx512f,avx512bw")))
static int64_t dot_only_q16_avx512(const int16_t *q, const signed char *c, size_t dim)
{
	int64_t d = 0;
	size_t i = 0;

	while (i + 32 <= dim) {
		__m512i a = _mm512_setzero_si512();
		int k;
		for (k = 0; k < Q16_FLUSH && i + 32 <= dim; k++, i += 32) {
			__m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(c + i)));
			a = _mm512_add_epi32(a, _mm512_madd_epi16(x, _mm512_loadu_si512((const void *)(q + i))));
		}
		{
			/* widened before the sum: 16 lanes of up to 2^29 each */
			__m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(a));
			__m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(a, 1));
			d += _mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi));
		}
	}
	for (; i < dim; i++)
		d += (int32_t)q[i] * c[i];
	return d;
}
#endif

double vec_cosine_q16_n(const struct vec_q16 *qq, const void *row, uint32_t n2)
{
	static int avx2 = -1;
	int64_t d, n = (int64_t)n2;

#if defined(__x86_64__) && defined(__GNUC__)
	if (avx2 < 0)
		avx2 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f") ? 2 :
		       __builtin_cpu_supports("avx2") ? 1 : 0;
	if (avx2 == 2)
		d = dot_only_q16_avx512(qq->v, row, qq->dim);
	else if (avx2)
		d = dot_only_q16_avx2(qq->v, row, qq->dim);
	else
#endif
	{
		int64_t unused;
		dot_q16(qq->v, row, qq->dim, &d, &unused);
	}
	(void)avx2;
	return qq->norm > 0 && n > 0 ? (double)d / (qq->norm * sqrt((double)n)) : 0;
}

void vec_sign_bits(const signed char *row, size_t dim, uint64_t *out)
{
	size_t words = (dim + 63) / 64;

	for (size_t w = 0; w < words; w++)
		out[w] = 0;
	for (size_t i = 0; i < dim; i++)
		if (row[i] >= 0)
			out[i / 64] |= 1ull << (i % 64);
}

void vec_q16_sign_bits(const struct vec_q16 *qq, uint64_t *out)
{
	size_t words = (qq->dim + 63) / 64;

	for (size_t w = 0; w < words; w++)
		out[w] = 0;
	for (size_t i = 0; i < qq->dim; i++)
		if (qq->v[i] >= 0)
			out[i / 64] |= 1ull << (i % 64);
}

static void hamming_generic(const uint64_t *q, const uint64_t *rows, size_t n, size_t words, uint16_t *d)
{
	for (size_t i = 0; i < n; i++) {
		unsigned c = 0;
		for (size_t w = 0; w < words; w++)
			c += (unsigned)__builtin_popcountll(q[w] ^ rows[i * words + w]);
		d[i] = (uint16_t)c;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt")))
static void hamming_popcnt(const uint64_t *q, const uint64_t *rows, size_t n, size_t words, uint16_t *d)
{
	if (words == 8) {
		/* 512 values (USE-lite), unrolled */
		for (size_t i = 0; i < n; i++) {
			const uint64_t *r = rows + i * 8;
			d[i] = (uint16_t)(__builtin_popcountll(q[0] ^ r[0]) + __builtin_popcountll(q[1] ^ r[1]) +
					  __builtin_popcountll(q[2] ^ r[2]) + __builtin_popcountll(q[3] ^ r[3]) +
					  __builtin_popcountll(q[4] ^ r[4]) + __builtin_popcountll(q[5] ^ r[5]) +
					  __builtin_popcountll(q[6] ^ r[6]) + __builtin_popcountll(q[7] ^ r[7]));
		}
		return;
	}
	hamming_generic(q, rows, n, words, d);
}
#endif

void vec_hamming(const uint64_t *q, const uint64_t *rows, size_t n, size_t words, uint16_t *d)
{
#if defined(__x86_64__) && defined(__GNUC__)
	static int popcnt = -1;

	if (popcnt < 0)
		popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
	if (popcnt) {
		hamming_popcnt(q, rows, n, words, d);
		return;
	}
#endif
	hamming_generic(q, rows, n, words, d);
}
