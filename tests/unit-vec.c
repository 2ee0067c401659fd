/*
 * unit-vec.c: TAP tests of vec_cosine_stored() against vec_decode() and
 * vec_cosine(), on vectors of several lengths (around the 16 lanes it works
 * in) stored as f32 and as int8, and on what it must refuse.
 */
#include "core/common.h"
#include "embed/vec.h"

#include <math.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc, double got, double want)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	if (!cond) {
		printf("#   got %.9f, expected %.9f\n", got, want);
		failures++;
	}
}

/* A deterministic pseudo-random value in [-1, 1) (xorshift). */
static float rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (float)((double)*s / 2147483648.0 - 1.0);
}

static double norm(const float *v, size_t dim)
{
	double n = 0;

	for (size_t i = 0; i < dim; i++)
		n += (double)v[i] * v[i];
	return sqrt(n);
}

int main(void)
{
	static const size_t dims[] = { 1, 15, 16, 17, 100, 384, 512, 515 };
	static const enum vec_format fmts[] = { VEC_F32, VEC_INT8 };
	uint32_t seed = 12345;
	char desc[128];

	for (size_t d = 0; d < ARRAY_SIZE(dims); d++) {
		size_t dim = dims[d];
		float *q = xmalloc(dim * sizeof(*q)), *v = xmalloc(dim * sizeof(*v)), *back = xmalloc(dim * sizeof(*back));

		for (size_t f = 0; f < ARRAY_SIZE(fmts); f++) {
			for (int trial = 0; trial < 3; trial++) {
				struct buf b = BUF_INIT;
				double scale, want, got;

				for (size_t i = 0; i < dim; i++) {
					q[i] = rnd(&seed);
					/* the third trial: v close to q, a cosine near 1 */
					v[i] = trial == 2 ? q[i] + 0.01f * rnd(&seed) : rnd(&seed);
				}
				vec_encode(&b, &scale, v, dim, fmts[f]);
				if (vec_decode(back, dim, vec_format_name(fmts[f]), scale, b.buf, b.len) < 0) {
					ok(0, "vec_decode reads what vec_encode wrote", 0, 0);
					buf_release(&b);
					continue;
				}
				want = vec_cosine(q, back, dim);
				got = vec_cosine_stored(q, norm(q, dim), dim, fmts[f], b.buf, b.len);
				snprintf(desc, sizeof(desc), "%s, %zu values, trial %d: the cosine of the decoded vector",
					 vec_format_name(fmts[f]), dim, trial);
				ok(fabs(got - want) < 1e-5, desc, got, want);
				buf_release(&b);
			}
		}
		free(q);
		free(v);
		free(back);
	}

	{
		float q[20] = { 1, 2, 3 }, zero[20] = { 0 };
		struct buf b = BUF_INIT;
		double scale, got;

		vec_encode(&b, &scale, zero, 20, VEC_INT8);
		got = vec_cosine_stored(q, norm(q, 20), 20, VEC_INT8, b.buf, b.len);
		ok(got == 0, "an all-zero int8 vector: cosine 0", got, 0);
		got = vec_cosine_stored(zero, 0, 20, VEC_INT8, b.buf, b.len);
		ok(got == 0, "an all-zero query: cosine 0", got, 0);
		got = vec_cosine_stored(q, norm(q, 20), 20, VEC_INT8, b.buf, b.len - 1);
		ok(got == -2, "int8 bytes of another length: -2", got, -2);
		got = vec_cosine_stored(q, norm(q, 20), 20, VEC_F32, b.buf, b.len);
		ok(got == -2, "f32 bytes of another length: -2", got, -2);
		got = vec_cosine_stored(q, norm(q, 20), 20, (enum vec_format)7, b.buf, b.len);
		ok(got == -2, "a format that is neither: -2", got, -2);
		{
			enum vec_format vf;
			ok(vec_format_parse(&vf, "f16") < 0, "an unknown format name is refused before it", 0, 0);
		}
		got = vec_cosine_stored(q, norm(q, 20), 20, VEC_INT8, NULL, 0);
		ok(got == -2, "no bytes: -2", got, -2);
		buf_reset(&b);
		vec_encode(&b, &scale, q, 20, VEC_F32);
		got = vec_cosine_stored(q, norm(q, 20), 20, VEC_F32, b.buf, b.len);
		ok(fabs(got - 1) < 1e-6, "a vector with itself: 1", got, 1);
		buf_release(&b);
	}
	/*
	 * vec_cosine_q16: the integer sums it takes (with AVX2 where there is
	 * some) are the exact ones, across the flush of its 32-bit lanes (every
	 * 1024 values) and at lengths off the 16 a step; the cosine is within
	 * 1e-3 of vec_cosine_stored()'s, and 0 for zeros.
	 */
	{
		static const size_t qdims[] = { 1, 15, 16, 17, 512, 1023, 1024, 1025, 3000, 4100 };
		for (size_t d = 0; d < ARRAY_SIZE(qdims); d++) {
			size_t dim = qdims[d];
			float *q = xmalloc(dim * sizeof(*q)), *v = xmalloc(dim * sizeof(*v));
			signed char *c = xmalloc(dim);
			struct vec_q16 qq;
			struct buf b = BUF_INIT;
			double scale, got, want, exact;
			int64_t dot = 0, nn = 0;

			for (size_t i = 0; i < dim; i++) {
				q[i] = rnd(&seed);
				/* the largest magnitudes everywhere: the sums' worst case */
				v[i] = i % 2 ? 1.0f : -1.0f;
				if (d % 2)
					v[i] *= q[i] > 0 ? 1 : -1;
			}
			vec_encode(&b, &scale, v, dim, VEC_INT8);
			memcpy(c, b.buf, dim);
			vec_q16_init(&qq, q, dim);
			for (size_t i = 0; i < dim; i++) {
				dot += (int64_t)qq.v[i] * c[i];
				nn += (int64_t)c[i] * c[i];
			}
			exact = (double)dot / (qq.norm * sqrt((double)nn));
			got = vec_cosine_q16(&qq, c);
			snprintf(desc, sizeof(desc), "q16 cosine, dim %zu: the exact integer sums", dim);
			ok(got == exact, desc, got, exact);
			snprintf(desc, sizeof(desc), "q16 cosine, dim %zu: the row's sum of squares", dim);
			ok(vec_q16_row_norm2(c, dim) == (uint32_t)nn, desc, vec_q16_row_norm2(c, dim), (double)nn);
			snprintf(desc, sizeof(desc), "q16 cosine, dim %zu: given the row's norm, the same bits", dim);
			ok(vec_cosine_q16_n(&qq, c, (uint32_t)nn) == got, desc, vec_cosine_q16_n(&qq, c, (uint32_t)nn), got);
			want = vec_cosine_stored(q, norm(q, dim), dim, VEC_INT8, b.buf, b.len);
			snprintf(desc, sizeof(desc), "q16 cosine, dim %zu: within 1e-3 of vec_cosine_stored", dim);
			ok(fabs(got - want) < 1e-3, desc, got, want);
			vec_q16_release(&qq);
			memset(q, 0, dim * sizeof(*q));
			vec_q16_init(&qq, q, dim);
			got = vec_cosine_q16(&qq, c);
			snprintf(desc, sizeof(desc), "q16 cosine, dim %zu: a query of zeros gives 0", dim);
			ok(got == 0, desc, got, 0);
			got = vec_cosine_q16_n(&qq, c, (uint32_t)nn);
			snprintf(desc, sizeof(desc), "q16 cosine, dim %zu: a query of zeros gives 0, norm given", dim);
			ok(got == 0, desc, got, 0);
			vec_q16_release(&qq);
			buf_release(&b);
			free(q);
			free(v);
			free(c);
		}
	}
	/*
	 * vec_sign_bits, vec_q16_sign_bits and vec_hamming: bit i of a row is
	 * value i >= 0, the padding bits are 0, and the distance is the count of
	 * values of differing sign, at widths on and off the 64 a word (and the
	 * unrolled 512).
	 */
	{
		static const size_t sdims[] = { 1, 63, 64, 65, 512, 700 };
		for (size_t d = 0; d < ARRAY_SIZE(sdims); d++) {
			size_t dim = sdims[d], words = (dim + 63) / 64, rows = 7, bad = 0;
			float *q = xmalloc(dim * sizeof(*q));
			signed char *c = xmalloc(rows * dim);
			uint64_t *bits = xcalloc(rows * words, sizeof(*bits)), *qb = xcalloc(words, sizeof(*qb));
			uint16_t *dist = xmalloc(rows * sizeof(*dist));
			struct vec_q16 qq;

			for (size_t i = 0; i < dim; i++)
				q[i] = i % 5 == 0 ? 0.0f : rnd(&seed);
			for (size_t i = 0; i < rows * dim; i++)
				c[i] = (signed char)((int)(rnd(&seed) * 255.0) % 128);
			memset(c, 0, dim);	/* a row of zeros: every bit set */
			vec_q16_init(&qq, q, dim);
			vec_q16_sign_bits(&qq, qb);
			for (size_t r = 0; r < rows; r++)
				vec_sign_bits(c + r * dim, dim, bits + r * words);
			vec_hamming(qb, bits, rows, words, dist);
			for (size_t r = 0; r < rows; r++) {
				unsigned want_d = 0;
				for (size_t i = 0; i < dim; i++) {
					int bq = qq.v[i] >= 0, bc = c[r * dim + i] >= 0;
					want_d += bq != bc;
					bad += ((bits[r * words + i / 64] >> (i % 64)) & 1) != (uint64_t)bc;
					bad += r == 0 && ((qb[i / 64] >> (i % 64)) & 1) != (uint64_t)bq;
				}
				for (size_t i = dim; i < words * 64; i++)
					bad += (bits[r * words + i / 64] >> (i % 64)) & 1;
				bad += dist[r] != want_d;
			}
			snprintf(desc, sizeof(desc), "signs and their distances, dim %zu", dim);
			ok(bad == 0, desc, (double)bad, 0);
			vec_q16_release(&qq);
			free(q);
			free(c);
			free(bits);
			free(qb);
			free(dist);
		}
	}
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
