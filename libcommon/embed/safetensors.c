/*
 * safetensors.c: a .safetensors reader on mmap and Jansson (see safetensors.h).
 */
#include "core/common.h"
#include "embed/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MAX_HEADER (100u << 20)	/* the format's own limit on the JSON header */
#define MAX_DIMS 8

enum st_dtype { ST_F32, ST_F16, ST_BF16, ST_OTHER };

/* One tensor of the header. */
struct st_tensor {
	const char *name;	/* owned by the header's JSON */
	const char *dtype;	/* ditto: "F32", "F16", ... */
	enum st_dtype type;	/* what we can convert, or ST_OTHER */
	int ndim;
	long dims[MAX_DIMS];
	size_t begin, end;	/* byte offsets in the data (after the header) */
	float *conv;		/* F16/BF16: the float32 copy, once made */
};

struct safetensors {
	char *path;		/* as given */
	unsigned char *map;	/* the whole file */
	size_t size;		/* its length */
	const unsigned char *data;	/* the tensors' bytes: map + 8 + header length */
	size_t data_len;
	json_t *header;		/* the parsed header (owns the names) */
	struct st_tensor *t;	/* its tensors, in the header's order */
	size_t t_nr;
};

/* Bytes per element of a safetensors dtype, 0 for an unknown one. */
static size_t dtype_size(const char *dt, enum st_dtype *type)
{
	static const struct { const char *name; size_t size; enum st_dtype type; } tab[] = {
		{ "F32", 4, ST_F32 }, { "F16", 2, ST_F16 }, { "BF16", 2, ST_BF16 },
		{ "F64", 8, ST_OTHER }, { "I64", 8, ST_OTHER }, { "U64", 8, ST_OTHER },
		{ "I32", 4, ST_OTHER }, { "U32", 4, ST_OTHER }, { "I16", 2, ST_OTHER },
		{ "U16", 2, ST_OTHER }, { "I8", 1, ST_OTHER }, { "U8", 1, ST_OTHER },
		{ "BOOL", 1, ST_OTHER }, { "F8_E4M3", 1, ST_OTHER }, { "F8_E5M2", 1, ST_OTHER },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tab); i++)
		if (!strcmp(dt, tab[i].name)) {
			*type = tab[i].type;
			return tab[i].size;
		}
	return 0;
}

/* Check one header entry and fill *t; 0, or -1 after a message. */
static int parse_tensor(struct safetensors *st, struct st_tensor *t, const char *name, json_t *v)
{
	json_t *shape = json_object_get(v, "shape"), *off = json_object_get(v, "data_offsets"), *d;
	const char *dt = json_string_value(json_object_get(v, "dtype"));
	size_t i, esize, count = 1;
	json_int_t b, e;

	memset(t, 0, sizeof(*t));
	t->name = name;
	if (!json_is_object(v) || !dt || !json_is_array(shape) || !json_is_array(off) ||
	    json_array_size(off) != 2 || !json_is_integer(json_array_get(off, 0)) ||
	    !json_is_integer(json_array_get(off, 1)))
		return error("%s: tensor '%s': malformed header entry", st->path, name);
	if (!(esize = dtype_size(dt, &t->type)))
		return error("%s: tensor '%s': unknown dtype '%s'", st->path, name, dt);
	t->dtype = dt;
	if (json_array_size(shape) > MAX_DIMS)
		return error("%s: tensor '%s': too many dimensions", st->path, name);
	json_array_foreach(shape, i, d) {
		json_int_t n = json_integer_value(d);
		if (!json_is_integer(d) || n < 0 || n > (1L << 40) ||
		    (n && count > SIZE_MAX / 16 / (size_t)n))
			return error("%s: tensor '%s': bad shape", st->path, name);
		t->dims[i] = (long)n;
		count *= (size_t)n;
	}
	t->ndim = (int)json_array_size(shape);
	b = json_integer_value(json_array_get(off, 0));
	e = json_integer_value(json_array_get(off, 1));
	if (b < 0 || e < b)
		return error("%s: tensor '%s': bad data_offsets", st->path, name);
	t->begin = (size_t)b;
	t->end = (size_t)e;
	if (t->end > st->data_len)
		return error("'%s' is truncated: tensor '%s' ends at byte %zu of the data, "
			     "the file holds %zu", st->path, name, t->end, st->data_len);
	if (t->end - t->begin != count * esize)
		return error("%s: tensor '%s': %zu bytes for %zu elements of %s", st->path, name,
			     t->end - t->begin, count, dt);
	return 0;
}

int safetensors_open(struct safetensors **out, const char *path)
{
	struct safetensors *st = xcalloc(1, sizeof(*st));
	json_error_t jerr;
	struct stat sb;
	uint64_t hlen = 0;
	const char *name;
	json_t *v;
	int fd, ret = -1, i;

	*out = NULL;
	st->path = xstrdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		error_errno("cannot open '%s'", path);
		goto done;
	}
	st->size = (size_t)sb.st_size;
	if (st->size < 8) {
		error("'%s' is truncated: %zu bytes, not even a header", path, st->size);
		goto done;
	}
	st->map = mmap(NULL, st->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		error_errno("cannot map '%s'", path);
		goto done;
	}
	for (i = 7; i >= 0; i--)
		hlen = hlen << 8 | st->map[i];
	if (hlen > MAX_HEADER) {
		error("%s: a header of %llu bytes: not a safetensors file", path,
		      (unsigned long long)hlen);
		goto done;
	}
	if (hlen > st->size - 8) {
		error("'%s' is truncated: its header needs %llu bytes, the file holds %zu", path,
		      (unsigned long long)hlen, st->size - 8);
		goto done;
	}
	st->data = st->map + 8 + hlen;
	st->data_len = st->size - 8 - (size_t)hlen;
	st->header = json_loadb((const char *)st->map + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
	if (!st->header || !json_is_object(st->header)) {
		error("%s: the header is not a JSON object%s%s", path, st->header ? "" : ": ",
		      st->header ? "" : jerr.text);
		goto done;
	}
	st->t = xcalloc(json_object_size(st->header) + 1, sizeof(*st->t));
	json_object_foreach(st->header, name, v) {
		if (!strcmp(name, "__metadata__"))
			continue;
		if (parse_tensor(st, &st->t[st->t_nr], name, v) < 0)
			goto done;
		st->t_nr++;
	}
	*out = st;
	st = NULL;
	ret = 0;
done:
	if (fd >= 0)
		close(fd);
	safetensors_close(st);
	return ret;
}

void safetensors_close(struct safetensors *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->t_nr; i++)
		free(st->t[i].conv);
	free(st->t);
	json_decref(st->header);
	if (st->map)
		munmap(st->map, st->size);
	free(st->path);
	free(st);
}

const char *safetensors_path(const struct safetensors *st)
{
	return st->path;
}

static struct st_tensor *find(const struct safetensors *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->t_nr; i++)
		if (!strcmp(st->t[i].name, name))
			return &st->t[i];
	return NULL;
}

int safetensors_has(const struct safetensors *st, const char *name)
{
	return find(st, name) != NULL;
}

/* IEEE 754 half precision to single. */
static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
	float f;

	if (exp == 0x1f) {
		u = sign | 0x7f800000u | man << 13;		/* inf, NaN */
	} else if (exp) {
		u = sign | (exp + 112) << 23 | man << 13;	/* normal: rebias 15 -> 127 */
	} else if (man) {
		/* subnormal: man * 2^-24 exactly */
		f = (float)man * 5.9604644775390625e-8f;
		return sign ? -f : f;
	} else {
		u = sign;
	}
	memcpy(&f, &u, 4);
	return f;
}

static void shape_str(struct buf *b, int ndim, const long *dims)
{
	int i;

	buf_addch(b, '[');
	for (i = 0; i < ndim; i++)
		buf_addf(b, "%s%ld", i ? "," : "", dims[i]);
	buf_addch(b, ']');
}

/* 0 when tensor t (name) has the shape ndim x dims, else -1 with an error
 * naming both shapes ("<t's> <said> <wanted>"). */
static int check_shape(const struct safetensors *st, const struct st_tensor *t, const char *name,
		       int ndim, const long *dims, const char *said)
{
	int k, same = t->ndim == ndim;

	for (k = 0; same && k < ndim; k++)
		same = t->dims[k] == dims[k];
	if (!same) {
		struct buf a = BUF_INIT, b = BUF_INIT;
		shape_str(&a, t->ndim, t->dims);
		shape_str(&b, ndim, dims);
		error("%s: tensor '%s' is %s, %s %s", st->path, name, a.buf, said, b.buf);
		buf_release(&a);
		buf_release(&b);
		return -1;
	}
	return 0;
}

int safetensors_f32(const float **out, struct safetensors *st, const char *name,
		    int ndim, const long *dims)
{
	struct st_tensor *t = find(st, name);
	const unsigned char *p;
	size_t i, n;

	*out = NULL;
	if (!t)
		return error("%s: no tensor '%s'", st->path, name);
	if (check_shape(st, t, name, ndim, dims, "config.json says") < 0)
		return -1;
	p = st->data + t->begin;
	switch (t->type) {
	case ST_F32:
		if (((uintptr_t)p & 3) == 0) {
			*out = (const float *)(const void *)p;
			return 0;
		}
		n = (t->end - t->begin) / 4;
		if (!t->conv) {
			t->conv = xmalloc((n ? n : 1) * sizeof(float));
			memcpy(t->conv, p, n * 4);
		}
		break;
	case ST_F16:
	case ST_BF16:
		n = (t->end - t->begin) / 2;
		if (!t->conv) {
			t->conv = xmalloc((n ? n : 1) * sizeof(float));
			for (i = 0; i < n; i++) {
				uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
				if (t->type == ST_F16) {
					t->conv[i] = half_to_float(h);
				} else {
					uint32_t u = (uint32_t)h << 16;
					memcpy(&t->conv[i], &u, 4);
				}
			}
		}
		break;
	default:
		return error("%s: tensor '%s' has dtype %s: not supported (F32, F16, BF16)",
			     st->path, name, t->dtype);
	}
	*out = t->conv;
	return 0;
}

int safetensors_shape(const struct safetensors *st, const char *name, long *dims, int max)
{
	const struct st_tensor *t = find(st, name);
	int k;

	if (!t)
		return -1;
	for (k = 0; k < t->ndim && k < max; k++)
		dims[k] = t->dims[k];
	return t->ndim;
}

int safetensors_i8(const int8_t **out, struct safetensors *st, const char *name,
		   int ndim, const long *dims)
{
	struct st_tensor *t = find(st, name);

	*out = NULL;
	if (!t)
		return error("%s: no tensor '%s'", st->path, name);
	if (strcmp(t->dtype, "I8"))
		return error("%s: tensor '%s' has dtype %s, expected I8", st->path, name, t->dtype);
	if (check_shape(st, t, name, ndim, dims, "expected") < 0)
		return -1;
	*out = (const int8_t *)(const void *)(st->data + t->begin);
	return 0;
}

const char *safetensors_meta(const struct safetensors *st, const char *key)
{
	return json_string_value(json_object_get(json_object_get(st->header, "__metadata__"), key));
}
