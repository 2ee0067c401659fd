/*
 * vec.h: embedding vectors as they travel and as the index stores them.
 *
 * On the wire (NDJSON) a vector is "vec": base64 of little-endian float32.  In
 * the index (tables vectors and commit_vectors, share/schema.sql) each row says
 * its own format, so one index may hold both and every reader decodes either
 * through vec_decode() (index_vec_decode() for a row of the index):
 *
 *   f32    dim little-endian float32 values; scale is NULL
 *   int8   dim signed bytes q[i], with x[i] = q[i] * scale (scale = max |x| / 127):
 *          a quarter of the bytes, cosine within about 0.001 of float32's
 */
#ifndef CI_VEC_H
#define CI_VEC_H

#include <stddef.h>
#include "core/buf.h"

enum vec_format {
	VEC_F32,		/* little-endian float32 */
	VEC_INT8		/* int8 with a float scale per vector */
};

/* "f32" or "int8" into *out: 0, or -1 for anything else (nothing reported). */
int vec_format_parse(enum vec_format *out, const char *name);
const char *vec_format_name(enum vec_format f);

/*
 * Decode the base64 of little-endian float32 values in b64: a malloc'd array of
 * *dim floats in *out.  Returns 0, or -1 (nothing reported, nothing allocated)
 * when b64 is not base64 or not a whole number of floats, or empty.
 */
int vec_from_base64(float **out, size_t *dim, const char *b64, size_t len);

/* Append the base64 of v[0..dim) as little-endian float32 (no quotes).  Cannot fail. */
void vec_to_base64(struct buf *b, const float *v, size_t dim);

/*
 * The bytes to store for v[0..dim) in format f, appended to out, and the scale
 * to store beside them (0 for VEC_F32, stored as NULL).  Cannot fail.
 */
void vec_encode(struct buf *out, double *scale, const float *v, size_t dim, enum vec_format f);

/*
 * Decode a stored vector: format name fmt ("f32", "int8"; NULL means "f32", an
 * index that predates the column), scale, and the bytes blob[0..bytes) into
 * out[0..dim).  Returns 0, or -1 when the bytes do not hold a vector of dim
 * values in that format (nothing reported: the caller skips the row).
 */
int vec_decode(float *out, size_t dim, const char *fmt, double scale, const void *blob, size_t bytes);

/* Cosine similarity of a and b (0 when either is all zeros).  Cannot fail. */
double vec_cosine(const float *a, const float *b, size_t dim);

/*
 * The cosine of q[0..dim) (qnorm: its Euclidean norm) and a stored vector of
 * format f (vec_format_parse() of its fmt; an index older than the column
 * holds f32), read where it lies: an int8 vector's scale cancels out, so its
 * bytes are multiplied as they are, 16 lanes at a time (one pass over the
 * bytes, which the compiler vectorizes; decoding to floats first and summing
 * in double was four fifths of a semantic query on 137k chunks).  Agrees
 * with vec_decode() + vec_cosine() within float rounding (1e-6).  Returns the
 * cosine (0 when either is all zeros), or -2 when the bytes do not hold a
 * vector of dim values in that format.
 */
double vec_cosine_stored(const float *q, double qnorm, size_t dim, enum vec_format f, const void *blob,
			 size_t bytes);


/*
 * A query for scanning int8 vectors: q scaled to int16 (its largest magnitude
 * 32767), whose dot product with a row of int8 bytes is summed in integers,
 * 16 values an instruction with AVX2 (twice the speed of
 * vec_cosine_stored() on 137k rows), and exactly the same on any machine.
 * The cosine is within about 1e-4 of vec_cosine_stored()'s.
 */
#include <stdint.h>
struct vec_q16 {
	int16_t *v;		/* dim values */
	size_t dim;
	double norm;		/* Euclidean norm of v; 0: a query of zeros */
};
void vec_q16_init(struct vec_q16 *qq, const float *q, size_t dim);
void vec_q16_release(struct vec_q16 *qq);
/* The cosine of the query and the int8 vector row[0..qq->dim): 0 when either is all zeros. */
double vec_cosine_q16(const struct vec_q16 *qq, const void *row);
/*
 * The same for a row whose sum of squares n2 is known (vec_q16_row_norm2(),
 * exact for up to 131072 values): the dot product alone is taken, a third
 * fewer instructions a row; the result is vec_cosine_q16()'s, bit for bit.
 */
uint32_t vec_q16_row_norm2(const void *row, size_t dim);

/*
 * The signs of an int8 row of dim values as bits, value i >= 0 setting bit
 * i % 64 of word i / 64 of out ((dim + 63) / 64 words, the last padded with
 * zeros); the same of a query's int16 values (vec_q16).  The number of
 * differing signs between two rows (vec_hamming) orders them roughly as
 * their angles: a cheap first pass before the cosines.
 */
void vec_sign_bits(const signed char *row, size_t dim, uint64_t *out);
void vec_q16_sign_bits(const struct vec_q16 *qq, uint64_t *out);
/* For each of n rows of words uint64 (rows[i * words ...]), its number of
 * bits differing from q: into d[i]. */
void vec_hamming(const uint64_t *q, const uint64_t *rows, size_t n, size_t words, uint16_t *d);
double vec_cosine_q16_n(const struct vec_q16 *qq, const void *row, uint32_t n2);
#endif
