/*
 * safetensors.h: read tensors from a .safetensors file (HuggingFace's format).
 *
 * The file is an 8-byte little-endian header length, a JSON header (tensor name
 * -> {"dtype", "shape", "data_offsets": [begin, end]}, and "__metadata__"), then
 * the tensors' bytes.  The header is parsed with Jansson and checked whole on
 * opening (every tensor inside the file, of the size its dtype and shape say),
 * so a truncated or damaged file is refused before anything reads it.  The file
 * is mapped; float32 tensors are read in place, float16 and bfloat16 ones are
 * converted to float32 copies owned by the file handle.
 *
 * Written for ci-embed's BERT models (libcommon/embed/bert.c): a few hundred tensors
 * of up to a few hundred megabytes.
 */
#ifndef CI_SAFETENSORS_H
#define CI_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

struct safetensors;

/*
 * Open and map path and check its header.  Returns 0 and the handle in *out, or
 * reports what is wrong (naming the file, and the tensor where there is one) and
 * returns -1.
 */
int safetensors_open(struct safetensors **out, const char *path);
void safetensors_close(struct safetensors *st);

/* The path given to safetensors_open() (owned by st). */
const char *safetensors_path(const struct safetensors *st);

/* Is there a tensor of this name? */
int safetensors_has(const struct safetensors *st, const char *name);

/*
 * The tensor name as float32 (F32 in place; F16 and BF16 converted once, into
 * memory owned by st), after checking that its shape is dims[0..ndim).  Returns
 * 0 and the data in *out (valid until safetensors_close()), or reports what is
 * wrong (no such tensor, another dtype, another shape) and returns -1.
 */
int safetensors_f32(const float **out, struct safetensors *st, const char *name,
		    int ndim, const long *dims);

/*
 * The shape of tensor name: its number of dimensions, the first max of them in
 * dims.  -1 (no message) when there is no such tensor.
 */
int safetensors_shape(const struct safetensors *st, const char *name, long *dims, int max);

/*
 * The tensor name as int8 values, in place (ci-code's quantized embeddings),
 * after checking its dtype (I8) and shape.  0, or -1 after a message.
 */
int safetensors_i8(const int8_t **out, struct safetensors *st, const char *name,
		   int ndim, const long *dims);

/* A string of the header's "__metadata__", or NULL (owned by st). */
const char *safetensors_meta(const struct safetensors *st, const char *key);

#endif
