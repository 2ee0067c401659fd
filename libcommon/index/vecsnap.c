/*
 * vecsnap.c: the contiguous copy of the index's chunk vectors (vecsnap.h).
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "index/index.h"
#include "core/util.h"
#include "index/vecsnap.h"

char *vecsnap_path(const char *db_path)
{
	return xasprintf("%s.vec", db_path);
}

/* where the ids start: after the int8 rows, at a multiple of 8 */
static size_t ids_offset(uint64_t n, uint32_t dim)
{
	size_t off = sizeof(struct vecsnap_head) + (size_t)n * dim;

	return (off + 7) & ~(size_t)7;
}

/* where the signs start: after the ids and the float32 rows, if any */
static size_t bits_offset(uint64_t n, uint32_t dim, uint32_t exact)
{
	return ids_offset(n, dim) + (size_t)n * 8 + (exact ? (size_t)n * dim * 4 : 0);
}

static size_t bits_words(uint32_t dim)
{
	return ((size_t)dim + 63) / 64;
}

/* A head that describes a file of size bytes: 1, else 0. */
static int head_ok(const struct vecsnap_head *h, size_t size)
{
	if (h->magic != VECSNAP_MAGIC || !h->dim || h->dim > 65536 || h->n > (uint64_t)1 << 40 ||
	    h->exact > 1 || memchr(h->token, 0, sizeof(h->token)) == NULL ||
	    memchr(h->model, 0, sizeof(h->model)) == NULL)
		return 0;
	return bits_offset(h->n, h->dim, h->exact) + (size_t)h->n * bits_words(h->dim) * 8 == size;
}

/* The meta value vec_snapshot into buf (empty when there is none). */
static void meta_token(sqlite3 *db, char *buf, size_t size)
{
	sqlite3_stmt *st;

	buf[0] = 0;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'vec_snapshot'", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

/* The head of the file at path, if it is a whole snapshot: 0, else -1. */
static int read_head(const char *path, struct vecsnap_head *h, int *fdp)
{
	struct stat stb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &stb) < 0 || !S_ISREG(stb.st_mode) || (size_t)stb.st_size < sizeof(*h) ||
	    pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) || !head_ok(h, (size_t)stb.st_size)) {
		close(fd);
		return -1;
	}
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

int vecsnap_token(sqlite3 *db, char *token, size_t size)
{
	meta_token(db, token, size);
	return token[0] && strcmp(token, "-") ? 0 : 1;
}

int vecsnap_open(struct vecsnap *s, sqlite3 *db, const char *db_path)
{
	char token[64];

	memset(s, 0, sizeof(*s));
	if (vecsnap_token(db, token, sizeof(token)))
		return 1;
	return vecsnap_map(s, db_path, token);
}

int vecsnap_map(struct vecsnap *s, const char *db_path, const char *token)
{
	struct vecsnap_head h;
	char *path;
	void *map;
	size_t len;
	int fd;

	memset(s, 0, sizeof(*s));
	path = vecsnap_path(db_path);
	if (read_head(path, &h, &fd) < 0) {
		free(path);
		return 1;
	}
	free(path);
	if (strcmp(h.token, token)) {
		close(fd);
		return 1;	/* another index's, or one the index no longer names */
	}
	len = ids_offset(h.n, h.dim) + h.n * 8;
	/* the rows scanned are read at once: have them mapped in one call */
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return 1;
	}
	if (h.exact) {
		/* the float32 rows, of which a few are read: mapped as needed */
		long page = sysconf(_SC_PAGESIZE);
		size_t at = len - len % (size_t)(page > 0 ? page : 4096);
		s->exact_map_len = len + h.n * h.dim * 4 - at;
		s->exact_map = mmap(NULL, s->exact_map_len, PROT_READ, MAP_PRIVATE, fd, (off_t)at);
		if (s->exact_map == MAP_FAILED) {
			munmap(map, len);
			close(fd);
			memset(s, 0, sizeof(*s));
			return 1;
		}
		s->exact = (const unsigned char *)s->exact_map + (len - at);
	}
	{
		/* the signs, all read by a scan */
		long page = sysconf(_SC_PAGESIZE);
		size_t b = bits_offset(h.n, h.dim, h.exact), at = b - b % (size_t)(page > 0 ? page : 4096);
		s->bits_map_len = b + h.n * bits_words(h.dim) * 8 - at;
		s->bits_map = mmap(NULL, s->bits_map_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, (off_t)at);
		if (s->bits_map == MAP_FAILED) {
			munmap(map, len);
			if (s->exact_map)
				munmap(s->exact_map, s->exact_map_len);
			close(fd);
			memset(s, 0, sizeof(*s));
			return 1;
		}
		s->bits = (const uint64_t *)(const void *)((const unsigned char *)s->bits_map + (b - at));
		s->words = bits_words(h.dim);
	}
	close(fd);
	s->map = map;
	s->map_len = len;
	s->head = map;
	s->n = h.n;
	s->dim = h.dim;
	s->rows = (const signed char *)map + sizeof(h);
	s->ids = (const int64_t *)(const void *)((const unsigned char *)map + ids_offset(h.n, h.dim));
	s->model = s->head->model;
	return 0;
}

int vecsnap_load(struct vecsnap *s, const char *db_path)
{
	struct vecsnap_head h;
	char *path = vecsnap_path(db_path);
	size_t len, got = 0, words, extra;
	unsigned char *p;
	int fd;

	memset(s, 0, sizeof(*s));
	if (read_head(path, &h, &fd) < 0) {
		free(path);
		return 1;
	}
	free(path);
	words = bits_words(h.dim);
	len = bits_offset(h.n, h.dim, h.exact) + h.n * words * 8;
	/* and after the file's bytes, each int8 row's sum of squares */
	extra = h.n * 4 + 8;
	p = huge_alloc(len + extra + 8);
	while (got < len) {
		ssize_t k = pread(fd, p + got, len - got, (off_t)got);
		if (k <= 0) {
			huge_free(p, len + extra + 8);
			close(fd);
			return 1;	/* cut short since its head was read */
		}
		got += (size_t)k;
	}
	close(fd);
	{
		uint32_t *norms = (uint32_t *)(void *)(p + ((len + 7) & ~(size_t)7));
		for (size_t i = 0; i < h.n; i++)
			norms[i] = vec_q16_row_norm2(p + sizeof(h) + i * h.dim, h.dim);
		s->norms = norms;
		s->bits = (const uint64_t *)(const void *)(p + bits_offset(h.n, h.dim, h.exact));
		s->words = words;
	}
	s->map = p;
	s->map_len = len + extra + 8;
	s->loaded = 1;
	s->head = (const struct vecsnap_head *)(const void *)p;
	s->n = h.n;
	s->dim = h.dim;
	s->rows = (const signed char *)p + sizeof(h);
	s->ids = (const int64_t *)(const void *)(p + ids_offset(h.n, h.dim));
	if (h.exact)
		s->exact = p + ids_offset(h.n, h.dim) + h.n * 8;
	s->model = s->head->model;
	return 0;
}

int vecsnap_file_token(const char *db_path, char *token, size_t size)
{
	struct vecsnap_head h;
	char *path = vecsnap_path(db_path);
	int rc = read_head(path, &h, NULL);

	free(path);
	if (rc < 0 || !size)
		return 1;
	snprintf(token, size, "%.*s", (int)sizeof(h.token), h.token);
	return 0;
}

int vecsnap_current(sqlite3 *db, const char *db_path, uint64_t *n)
{
	struct vecsnap_head h;
	char token[64], *path;
	int ok;

	*n = 0;
	if (vecsnap_token(db, token, sizeof(token)))
		return 0;
	path = vecsnap_path(db_path);
	ok = read_head(path, &h, NULL) == 0 && !strcmp(h.token, token);
	free(path);
	if (ok)
		*n = h.n;
	return ok;
}

void vecsnap_close(struct vecsnap *s)
{
	if (s->borrowed)
		;	/* another's: only forgotten */
	else if (s->loaded)
		huge_free(s->map, s->map_len);
	else if (s->map)
		munmap(s->map, s->map_len);
	if (s->exact_map)
		munmap(s->exact_map, s->exact_map_len);
	if (s->bits_map)
		munmap(s->bits_map, s->bits_map_len);
	memset(s, 0, sizeof(*s));
}

/* One integer from sql, or -1 (reported). */
static sqlite3_int64 one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	sqlite3_int64 v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		error("index: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else
		error("index: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return v;
}

/*
 * Write the snapshot of the vectors of model/dim/fmt to tmp with token:
 * 0, 1 when a row is not a vector of dim values (a warning says which; the
 * file is not to be kept), -1 on an error (reported).
 */
static int write_snapshot(sqlite3 *db, const char *tmp, const char *token, const char *model, int dim,
			  enum vec_format fmt)
{
	struct vecsnap_head h;
	sqlite3_stmt *st;
	int64_t *ids = NULL;
	size_t n = 0, alloc = 0;
	FILE *f;
	int rc, fd, ret = 0;
	static const char zero[8];

	struct buf q8 = BUF_INIT;
	uint64_t *bits = NULL;
	size_t words = bits_words((uint32_t)dim);
	float *v = NULL;
	size_t src_bytes = (size_t)dim * (fmt == VEC_F32 ? 4 : 1), i = 0;
	double scale;
	int pass;

	memset(&h, 0, sizeof(h));
	h.magic = VECSNAP_MAGIC;
	snprintf(h.token, sizeof(h.token), "%s", token);
	snprintf(h.model, sizeof(h.model), "%s", model);
	h.dim = (uint32_t)dim;
	/* float32 vectors are scanned as int8, then the best taken again */
	h.exact = fmt == VEC_F32;
	if (sqlite3_prepare_v2(db, "SELECT chunk_id, vec FROM vectors WHERE model = ?1 AND dim = ?2 AND fmt = ?3 "
			       "ORDER BY chunk_id", -1, &st, NULL) != SQLITE_OK)
		return error("index: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, dim);
	sqlite3_bind_text(st, 3, vec_format_name(fmt), -1, SQLITE_STATIC);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		error_errno("cannot write '%s'", tmp);
		if (fd >= 0)
			close(fd);
		sqlite3_finalize(st);
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	fwrite(&h, sizeof(h), 1, f);
	/* pass 0: the rows scanned, then the ids; pass 1: the float32 rows */
	for (pass = 0; pass < 1 + (int)h.exact && ret == 0; pass++) {
		if (pass) {
			size_t end = sizeof(h) + n * h.dim;
			fwrite(zero, ids_offset(n, h.dim) - end, 1, f);
			fwrite(ids, sizeof(*ids), n, f);
			sqlite3_reset(st);
		}
		i = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const void *blob = sqlite3_column_blob(st, 1);
			if ((size_t)sqlite3_column_bytes(st, 1) != src_bytes) {
				warning("the vector of chunk %lld is not %d %s values: no vector snapshot, "
					"semantic queries read the vectors table (ci-index --embed build "
					"embeds every chunk anew)", (long long)sqlite3_column_int64(st, 0), dim,
					vec_format_name(fmt));
				ret = 1;
				break;
			}
			if (pass) {
				/* the same rows in the same order: the write lock is held */
				if (i >= n || ids[i] != sqlite3_column_int64(st, 0)) {
					ret = 1;
					break;
				}
				i++;
				fwrite(blob, src_bytes, 1, f);
				continue;
			}
			if (n == alloc) {
				alloc = alloc ? 2 * alloc : 4096;
				ids = xrealloc(ids, alloc * sizeof(*ids));
				bits = xrealloc(bits, alloc * words * sizeof(*bits));
			}
			ids[n] = sqlite3_column_int64(st, 0);
			if (fmt == VEC_INT8) {
				fwrite(blob, h.dim, 1, f);
				vec_sign_bits(blob, h.dim, bits + n * words);
			} else {
				if (!v)
					v = xmalloc((size_t)dim * sizeof(*v));
				vec_decode(v, (size_t)dim, "f32", 0, blob, src_bytes);
				buf_reset(&q8);
				vec_encode(&q8, &scale, v, (size_t)dim, VEC_INT8);
				fwrite(q8.buf, h.dim, 1, f);
				vec_sign_bits((const signed char *)q8.buf, h.dim, bits + n * words);
			}
			n++;
		}
		if (ret == 0 && rc != SQLITE_DONE)
			ret = error("index: %s", sqlite3_errmsg(db));
		if (ret == 0 && pass && i != n)
			ret = 1;
	}
	sqlite3_finalize(st);
	buf_release(&q8);
	free(v);
	if (ret == 0) {
		if (!h.exact) {
			size_t end = sizeof(h) + n * h.dim;
			fwrite(zero, ids_offset(n, h.dim) - end, 1, f);
			fwrite(ids, sizeof(*ids), n, f);
		}
		if (n)
			fwrite(bits, words * sizeof(*bits), n, f);
		h.n = n;
		if (fflush(f) != 0 || ferror(f) || pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		    fdatasync(fd) < 0)
			ret = error_errno("cannot write '%s'", tmp);
	}
	if (fclose(f) != 0 && ret == 0)
		ret = error_errno("cannot write '%s'", tmp);
	free(ids);
	free(bits);
	return ret;
}

static int refresh(sqlite3 *db, const char *db_path)
{
	struct vecsnap_head h;
	sqlite3_stmt *st;
	char token[64], fresh[33];
	unsigned char rnd[16];
	char *path, *tmp = NULL, *model = NULL;
	sqlite3_int64 changed, have;
	int current, dim = 0, mixed = 0, rc = 0;
	enum vec_format fmt = VEC_F32;

	if (index_exec(db, "BEGIN IMMEDIATE") < 0)
		return -1;
	path = vecsnap_path(db_path);
	meta_token(db, token, sizeof(token));
	current = token[0] && strcmp(token, "-") && read_head(path, &h, NULL) == 0 && !strcmp(h.token, token);
	changed = one_int(db, "SELECT count(*) FROM vec_changed");
	have = one_int(db, "SELECT EXISTS (SELECT 1 FROM vectors)");
	if (changed < 0 || have < 0) {
		rc = -1;
		goto out;
	}
	if (!have) {
		/* no vectors: no snapshot */
		if (unlink(path) < 0 && errno != ENOENT)
			warning("cannot remove '%s': %s", path, strerror(errno));
		if ((changed || token[0]) &&
		    index_exec(db, "DELETE FROM vec_changed; DELETE FROM meta WHERE key = 'vec_snapshot'") < 0)
			rc = -1;
		goto out;
	}
	if (current && changed <= 4096 && (uint64_t)changed <= h.n / 8)
		goto out;	/* readers read the few changed rows */
	if (!current && !strcmp(token, "-") && !changed)
		goto out;	/* none could be written, and nothing changed since */

	/* the model, dimension and format of most vectors */
	if (sqlite3_prepare_v2(db, "SELECT model, dim, fmt FROM vectors GROUP BY model, dim, fmt "
			       "ORDER BY count(*) DESC, model, dim, fmt LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
		rc = error("index: %s", sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) && sqlite3_column_text(st, 2)) {
		model = xstrdup((const char *)sqlite3_column_text(st, 0));
		dim = sqlite3_column_int(st, 1);
		if (vec_format_parse(&fmt, (const char *)sqlite3_column_text(st, 2)) < 0)
			mixed = 1;
	}
	sqlite3_finalize(st);
	if (!model) {
		rc = error("index: %s", sqlite3_errmsg(db));
		goto out;
	}
	/*
	 * A reader asks for the vectors of one dimension, of one model or of any:
	 * the snapshot must hold every vector of its dimension.
	 */
	if (!mixed && (dim <= 0 || dim > 65536 || strlen(model) >= sizeof(h.model)))
		mixed = 1;
	if (!mixed) {
		if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM vectors WHERE dim = ?1 AND "
				       "(model <> ?2 OR fmt <> ?3))", -1, &st, NULL) != SQLITE_OK) {
			rc = error("index: %s", sqlite3_errmsg(db));
			goto out;
		}
		sqlite3_bind_int(st, 1, dim);
		sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, vec_format_name(fmt), -1, SQLITE_STATIC);
		mixed = sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	if (!mixed) {
		sqlite3_randomness(sizeof(rnd), rnd);
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(fresh + 2 * i, 3, "%02x", rnd[i]);
		tmp = xasprintf("%s.tmp", path);
		switch (write_snapshot(db, tmp, fresh, model, dim, fmt)) {
		case 0:
			if (rename(tmp, path) == 0)
				break;
			warning("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
			/* fall through */
		case 1:
			mixed = 1;
			break;
		default:
			warning("no vector snapshot: semantic queries read the index's vectors table");
			mixed = 1;
			break;
		}
		unlink(tmp);
	}
	if (mixed) {
		/* nothing to name: readers read the vectors table */
		snprintf(fresh, sizeof(fresh), "-");
		if (unlink(path) < 0 && errno != ENOENT)
			warning("cannot remove '%s': %s", path, strerror(errno));
	}
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('vec_snapshot', ?1)", -1, &st,
			       NULL) != SQLITE_OK) {
		rc = error("index: %s", sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_bind_text(st, 1, fresh, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = error("index: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (rc == 0 && index_exec(db, "DELETE FROM vec_changed") < 0)
		rc = -1;
out:
	if (rc == 0 ? index_exec(db, "COMMIT") < 0 : (index_exec(db, "ROLLBACK"), 0))
		rc = -1;
	free(model);
	free(tmp);
	free(path);
	return rc;
}

/*
 * One pass over every vector, read through the page cache (index_unmap()): a
 * mapped scan left the pages it touched resident in the writer, 540 MB of
 * the Linux tree's vectors after a build, its peak RSS.
 */
int vecsnap_refresh(sqlite3 *db, const char *db_path)
{
	sqlite3_int64 map = index_unmap(db);
	int rc = refresh(db, db_path);

	index_remap(db, map);
	return rc;
}
