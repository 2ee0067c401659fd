/*
 * rank/meta.c: ci-rank's candidates' metadata in memory (see meta.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/common.h"
#include "core/util.h"

#include "rank/meta.h"

#define MAGIC "cimeta1"

int rank_meta_key(sqlite3 *db, char *key, size_t size)
{
	sqlite3_stmt *st;
	int rc = -1;

	if (sqlite3_prepare_v2(db, "SELECT coalesce((SELECT value FROM meta WHERE key = 'created'), '') || ' ' || "
			       "coalesce((SELECT value FROM meta WHERE key = 'generation'), '') || ' ' || "
			       "coalesce((SELECT max(id) FROM chunks), -1)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
	    (size_t)sqlite3_column_bytes(st, 0) < size) {
		memcpy(key, sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0) + 1);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The strings of the block: a few distinct kinds and languages are kept once. */
struct pool {
	struct buf b;
	char *seen[64];
	uint32_t seen_at[64];
	size_t seen_nr;
};

static uint32_t pool_add(struct pool *p, const unsigned char *s, int once)
{
	uint32_t at;

	if (!s)
		return RANK_META_NONE;
	if (once) {
		for (size_t i = 0; i < p->seen_nr; i++)
			if (!strcmp(p->seen[i], (const char *)s))
				return p->seen_at[i];
	}
	at = (uint32_t)p->b.len;
	buf_add(&p->b, s, strlen((const char *)s) + 1);
	if (once && p->seen_nr < 64) {
		p->seen[p->seen_nr] = xstrdup((const char *)s);
		p->seen_at[p->seen_nr++] = at;
	}
	return at;
}

struct blob_row {
	struct rank_meta_blob b;
	size_t seq;		/* the file's place in path order */
};

static int cmp_blob_row(const void *a, const void *b)
{
	const struct blob_row *x = a, *y = b;

	if (x->b.blob != y->b.blob)
		return x->b.blob < y->b.blob ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Zeros up to offset at (an array's start, aligned) */
static void pad_to(struct buf *out, size_t at)
{
	while (out->len < at)
		buf_addch(out, '\0');
}

int rank_meta_read(sqlite3 *db, struct buf *out)
{
	struct rank_meta_head h;
	struct pool p = { BUF_INIT, { NULL }, { 0 }, 0 };
	struct rank_meta_chunk *ch = NULL;
	struct blob_row *bl = NULL;
	uint32_t *files = NULL;
	size_t ch_nr = 0, ch_alloc = 0, bl_nr = 0, bl_alloc = 0, f_nr = 0, f_alloc = 0, i, k;
	sqlite3_stmt *st = NULL;
	int rc = -1, step;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	buf_addch(&p.b, '\0');		/* no string starts at 0 but "" */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	if (rank_meta_key(db, h.key, sizeof(h.key)) < 0)
		goto done;
	if (sqlite3_prepare_v2(db, "SELECT id, blob_id, start_line, end_line, kind, name, scope FROM chunks "
			       "ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		goto done;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct rank_meta_chunk *c;
		ALLOC_GROW(ch, ch_nr + 1, ch_alloc);
		c = &ch[ch_nr++];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		c->blob = sqlite3_column_int64(st, 1);
		c->start = (int32_t)sqlite3_column_int64(st, 2);
		c->end = (int32_t)sqlite3_column_int64(st, 3);
		c->kind = pool_add(&p, sqlite3_column_text(st, 4), 1);
		c->name = pool_add(&p, sqlite3_column_text(st, 5), 0);
		c->scope = pool_add(&p, sqlite3_column_text(st, 6), 0);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (step != SQLITE_DONE)
		goto done;
	/* every file in path order; a blob's first, if the blob is known, names it */
	if (sqlite3_prepare_v2(db, "SELECT f.path, f.blob_id, b.id IS NOT NULL, b.lang FROM files f "
			       "LEFT JOIN blobs b ON b.id = f.blob_id ORDER BY f.path", -1, &st, NULL) != SQLITE_OK)
		goto done;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t path = pool_add(&p, sqlite3_column_text(st, 0), 0);
		if (path == RANK_META_NONE)
			continue;
		ALLOC_GROW(files, f_nr + 1, f_alloc);
		files[f_nr] = path;
		if (sqlite3_column_int(st, 2)) {
			ALLOC_GROW(bl, bl_nr + 1, bl_alloc);
			bl[bl_nr].b.blob = sqlite3_column_int64(st, 1);
			bl[bl_nr].b.path = path;
			bl[bl_nr].b.lang = pool_add(&p, sqlite3_column_text(st, 3), 1);
			bl[bl_nr].seq = f_nr;
			bl_nr++;
		}
		f_nr++;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (step != SQLITE_DONE || p.b.len >= RANK_META_NONE)
		goto done;
	if (bl_nr)
		qsort(bl, bl_nr, sizeof(*bl), cmp_blob_row);
	for (i = k = 0; i < bl_nr; i++)
		if (!k || bl[k - 1].b.blob != bl[i].b.blob)
			bl[k++] = bl[i];
	bl_nr = k;
	/* ORDER BY id: ascending, each once (a primary key) */
	h.nchunks = ch_nr;
	h.nblobs = bl_nr;
	h.nfiles = f_nr;
	h.strings_len = p.b.len;
	h.off_chunks = align8(sizeof(h));
	h.off_blobs = align8(h.off_chunks + ch_nr * sizeof(*ch));
	h.off_files = align8(h.off_blobs + bl_nr * sizeof(struct rank_meta_blob));
	h.off_strings = align8(h.off_files + f_nr * sizeof(*files));
	buf_grow(out, h.off_strings + p.b.len + 8);
	buf_add(out, &h, sizeof(h));
	pad_to(out, h.off_chunks);
	buf_add(out, ch, ch_nr * sizeof(*ch));
	pad_to(out, h.off_blobs);
	for (i = 0; i < bl_nr; i++)
		buf_add(out, &bl[i].b, sizeof(bl[i].b));
	pad_to(out, h.off_files);
	buf_add(out, files, f_nr * sizeof(*files));
	pad_to(out, h.off_strings);
	buf_add(out, p.b.buf, p.b.len);
	rc = 0;
done:
	if (st)
		sqlite3_finalize(st);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	for (i = 0; i < p.seen_nr; i++)
		free(p.seen[i]);
	buf_release(&p.b);
	free(ch);
	free(bl);
	free(files);
	return rc;
}

int rank_meta_attach(struct rank_meta *m, const void *block, size_t len)
{
	const struct rank_meta_head *h = block;
	const char *base = block;

	memset(m, 0, sizeof(*m));
	if (!block || len < sizeof(*h) || memcmp(h->magic, MAGIC, sizeof(MAGIC)) ||
	    memchr(h->key, '\0', sizeof(h->key)) == NULL)
		return -1;
	if (h->off_chunks > len || h->nchunks > (len - h->off_chunks) / sizeof(struct rank_meta_chunk) ||
	    h->off_blobs > len || h->nblobs > (len - h->off_blobs) / sizeof(struct rank_meta_blob) ||
	    h->off_files > len || h->nfiles > (len - h->off_files) / sizeof(uint32_t) ||
	    h->off_strings > len || h->strings_len > len - h->off_strings || !h->strings_len ||
	    base[h->off_strings + h->strings_len - 1] != '\0')
		return -1;
	m->head = h;
	m->chunks = (const struct rank_meta_chunk *)(const void *)(base + h->off_chunks);
	m->blobs = (const struct rank_meta_blob *)(const void *)(base + h->off_blobs);
	m->files = (const uint32_t *)(const void *)(base + h->off_files);
	m->strings = base + h->off_strings;
	m->len = len;
	return 0;
}

/*
 * The first of n records of size bytes from base, sorted by the int64 each
 * starts with, whose key is not below key (n when none).
 */
static size_t lower_bound(const void *base, size_t n, size_t size, int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t k;
		memcpy(&k, (const char *)base + mid * size, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct rank_meta_chunk *rank_meta_chunk(const struct rank_meta *m, int64_t id)
{
	size_t n = m->head ? m->head->nchunks : 0, i = lower_bound(m->chunks, n, sizeof(*m->chunks), id);

	return i < n && m->chunks[i].id == id ? &m->chunks[i] : NULL;
}

const struct rank_meta_blob *rank_meta_blob(const struct rank_meta *m, int64_t blob)
{
	size_t n = m->head ? m->head->nblobs : 0, i = lower_bound(m->blobs, n, sizeof(*m->blobs), blob);

	return i < n && m->blobs[i].blob == blob ? &m->blobs[i] : NULL;
}
