/*
 * libcommon/index/loader.c: the record loader of ci-index (loader.h).
 *
 * Every record that enters the index goes through here: a build's and an
 * update's (ci-index chunks in-process, chunkrun.h, and hands over each file's
 * NDJSON) and `ci-chunk | ci-index load`'s.  Shaped by the first build of a
 * large tree: prepared statements made once per run, a blob's chunks stored
 * once whatever number of files hold it, term counts kept in memory and
 * written once at the end.
 */
#include "core/common.h"
#include "index/loader.h"
#include "index/index.h"
#include "parse/walk.h"
#include "parse/tagtext.h"

#include <sys/stat.h>
#include <time.h>
#include <git2.h>

/* ---- helpers ---- */


sqlite3_stmt *ix_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("index: cannot prepare '%.40s...': %s", sql, sqlite3_errmsg(db));
	return st;
}

int ix_step_done(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return error("index: %s", sqlite3_errmsg(db));
	return 0;
}

static void bind_str_or_null(sqlite3_stmt *st, int i, json_t *v)
{
	if (json_is_string(v))
		sqlite3_bind_text(st, i, json_string_value(v), (int)json_string_length(v), SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long long jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? json_integer_value(v) : json_is_real(v) ? (long long)json_real_value(v) : 0;
}

/* ---- what ci-rank reads of chunks_fts cheaply: term_df, chunk_sizes ---- */

#define DF_MAX_TERMS (1u << 20)

static void df_grow(struct df_count *dc)
{
	size_t cap = dc->cap ? dc->cap * 2 : 4096, i, j;
	struct df_slot *v = xcalloc(cap, sizeof(*v));

	for (i = 0; i < dc->cap; i++) {
		if (!dc->v[i].len)
			continue;
		for (j = dc->v[i].hash & (cap - 1); v[j].len; j = (j + 1) & (cap - 1))
			;
		v[j] = dc->v[i];
	}
	free(dc->v);
	dc->v = v;
	dc->cap = cap;
}

static void df_term(const char *t, int n, void *ctx)
{
	struct df_count *dc = ctx;
	uint32_t h = (uint32_t)fnv1a(FNV1A_BASIS, t, (size_t)n);
	size_t j;

	if (dc->full || n <= 0)
		return;
	if (2 * (dc->nr + 1) > dc->cap)
		df_grow(dc);
	for (j = h & (dc->cap - 1); dc->v[j].len; j = (j + 1) & (dc->cap - 1)) {
		struct df_slot *e = &dc->v[j];
		if (e->hash == h && e->len == (uint32_t)n && !memcmp(dc->keys.buf + e->off, t, (size_t)n)) {
			if (e->last != dc->chunk) {
				e->last = dc->chunk;
				e->count++;
			}
			return;
		}
	}
	if (dc->nr >= DF_MAX_TERMS) {
		dc->full = 1;	/* a large load: recount everything at the end */
		return;
	}
	dc->v[j].off = (uint32_t)dc->keys.len;
	dc->v[j].len = (uint32_t)n;
	dc->v[j].hash = h;
	dc->v[j].count = 1;
	dc->v[j].last = dc->chunk;
	buf_add(&dc->keys, t, (size_t)n);
	dc->nr++;
}

/* Count the terms of chunk id, just inserted into chunks_fts (its four columns). */
static void df_chunk(struct df_count *dc, sqlite3_int64 id, const char *const cols[4], const size_t lens[4])
{
	if (dc->full)
		return;
	ALLOC_GROW(dc->ids, dc->ids_nr + 1, dc->ids_alloc);
	dc->ids[dc->ids_nr++] = id;
	dc->chunk++;
	for (int i = 0; i < 4; i++)
		if (cols[i])
			index_terms(cols[i], lens[i], df_term, dc);
}

/* A chunks_fts_docsize record: one varint per column; their sum. */
static uint32_t docsize_total(const unsigned char *p, size_t n)
{
	uint64_t total = 0, v;
	size_t k;

	while (n && (k = index_varint(p, n, &v))) {
		total += v;
		p += k;
		n -= k;
	}
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

static int cmp_int64(const void *a, const void *b)
{
	sqlite3_int64 x = *(const sqlite3_int64 *)a, y = *(const sqlite3_int64 *)b;

	return x < y ? -1 : x > y;
}

/* Write one row of chunk_sizes. */
static int put_sizes(sqlite3 *db, sqlite3_stmt *put, sqlite3_int64 block, const unsigned char *blk, size_t n)
{
	sqlite3_bind_int64(put, 1, block);
	sqlite3_bind_blob(put, 2, blk, (int)n, SQLITE_STATIC);
	return ix_step_done(db, put);
}

/*
 * Copy the sizes (tokens) of chunks_fts rows into chunk_sizes: those of ids[]
 * (sorted here), or of every row when ids is NULL (the table is emptied first).
 */
static int sizes_store(sqlite3 *db, sqlite3_int64 *ids, size_t nr)
{
	sqlite3_stmt *get, *cur, *put, *scan = NULL;
	unsigned char blk[CI_SIZES_BLOCK * 4];
	sqlite3_int64 block = -1, id;
	size_t i = 0;
	int rc = 0, dirty = 0;

	if (!ids) {
		if (index_exec(db, "DELETE FROM chunk_sizes") < 0)
			return -1;
		scan = ix_prep(db, "SELECT id, sz FROM chunks_fts_docsize ORDER BY id");
	} else {
		qsort(ids, nr, sizeof(*ids), cmp_int64);
	}
	get = ix_prep(db, "SELECT sz FROM chunks_fts_docsize WHERE id = ?1");
	cur = ix_prep(db, "SELECT sizes FROM chunk_sizes WHERE block = ?1");
	put = ix_prep(db, "INSERT OR REPLACE INTO chunk_sizes(block, sizes) VALUES (?1, ?2)");
	for (;;) {
		const unsigned char *sz = NULL;
		int szn = 0;

		if (scan) {
			if (sqlite3_step(scan) != SQLITE_ROW)
				break;
			id = sqlite3_column_int64(scan, 0);
			sz = sqlite3_column_blob(scan, 1);
			szn = sqlite3_column_bytes(scan, 1);
		} else {
			if (i >= nr)
				break;
			id = ids[i++];
			sqlite3_bind_int64(get, 1, id);
			if (sqlite3_step(get) == SQLITE_ROW) {
				sz = sqlite3_column_blob(get, 0);
				szn = sqlite3_column_bytes(get, 0);
			}
		}
		if (id < 0)
			continue;
		if (id / CI_SIZES_BLOCK != block) {
			if (dirty && (rc = put_sizes(db, put, block, blk, sizeof(blk))) < 0)
				break;
			block = id / CI_SIZES_BLOCK;
			memset(blk, 0, sizeof(blk));
			if (!scan) {
				sqlite3_bind_int64(cur, 1, block);
				if (sqlite3_step(cur) == SQLITE_ROW && sqlite3_column_bytes(cur, 0) == (int)sizeof(blk))
					memcpy(blk, sqlite3_column_blob(cur, 0), sizeof(blk));
				sqlite3_reset(cur);
			}
		}
		index_size_put(blk, (size_t)(id % CI_SIZES_BLOCK), sz ? docsize_total(sz, (size_t)szn) : 0);
		dirty = 1;
		if (!scan)
			sqlite3_reset(get);
	}
	if (rc == 0 && dirty)
		rc = put_sizes(db, put, block, blk, sizeof(blk));
	sqlite3_finalize(scan);
	sqlite3_finalize(get);
	sqlite3_finalize(cur);
	sqlite3_finalize(put);
	return rc;
}

/*
 * Bring term_df and chunk_sizes up to date with the chunks inserted: add the
 * counts and copy their sizes, or (dc->full) fill term_df anew with every term
 * of chunks_fts in CI_TERM_DF_MIN chunks or more, and chunk_sizes with every row.
 */
int df_finish(sqlite3 *db, struct df_count *dc)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (dc->full) {
		char sql[320];
		snprintf(sql, sizeof(sql),
			 "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab USING fts5vocab(main, chunks_fts, row);"
			 "DELETE FROM term_df;"
			 "INSERT INTO term_df(term, df) SELECT term, doc FROM temp.ci_vocab WHERE doc >= %d;"
			 "DROP TABLE temp.ci_vocab;", CI_TERM_DF_MIN);
		return index_exec(db, sql) < 0 || sizes_store(db, NULL, 0) < 0 ? -1 : 0;
	}
	if (!dc->nr)
		return 0;
	st = ix_prep(db, "UPDATE term_df SET df = df + ?2 WHERE term = ?1");
	for (size_t i = 0; i < dc->cap && rc == 0; i++) {
		struct df_slot *e = &dc->v[i];
		if (!e->len)
			continue;
		sqlite3_bind_text(st, 1, dc->keys.buf + e->off, (int)e->len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, e->count);
		rc = ix_step_done(db, st);
	}
	sqlite3_finalize(st);
	return rc < 0 ? -1 : sizes_store(db, dc->ids, dc->ids_nr);
}

static void df_release(struct df_count *dc)
{
	free(dc->v);
	free(dc->ids);
	buf_release(&dc->keys);
	memset(dc, 0, sizeof(*dc));
}

/* ---- the record loader ---- */

void loader_init(struct loader *ld, sqlite3 *db, const char *root, enum vec_format vfmt)
{
	memset(ld, 0, sizeof(*ld));
	ld->db = db;
	ld->root = root;
	ld->src = "<stdin>";
	ld->vfmt = vfmt;
	buf_init(&ld->cur_text, 0);
	buf_init(&ld->mentions, 0);
	buf_init(&ld->segs, 0);
	buf_init(&ld->vbuf, 0);
	buf_init(&ld->df.keys, 0);
	buf_init(&ld->zbuf, 0);
	ld->blob_get = ix_prep(db, "SELECT id FROM blobs WHERE blob = ?1");
	ld->blob_add = ix_prep(db, "INSERT INTO blobs(blob, lang, size, lines, exact) VALUES (?1, ?2, ?3, ?4, ?5)");
	ld->blob_seen = ix_prep(db, "SELECT count(*) FROM chunks WHERE blob_id = ?1");
	ld->file_put = ix_prep(db, "INSERT OR REPLACE INTO files(path, blob_id, size, mtime) VALUES (?1, ?2, ?3, ?4)");
	ld->chunk_add = ix_prep(db, "INSERT INTO chunks(blob_id, start_line, end_line, kind, name, scope, signature, text) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	ld->fts_add = ix_prep(db, "INSERT INTO chunks_fts(rowid, name, scope, signature, text) VALUES (?1, ?2, ?3, ?4, ?5)");
	ld->tri_add = ix_prep(db, "INSERT INTO chunks_tri(rowid, text) VALUES (?1, ?2)");
	ld->segs_put = ix_prep(db, "UPDATE blobs SET segs = ?2 WHERE id = ?1");
	ld->guard_put = ix_prep(db, "UPDATE blobs SET main_guard = ?2 WHERE id = ?1");
	ld->mention_put = ix_prep(db, "INSERT OR REPLACE INTO mentions(blob_id, names) VALUES (?1, ci_deflate(?2))");
	ld->def_add = ix_prep(db, "INSERT INTO defs(blob_id, name, kind, line, col, end_line, scope, flags) "
			   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	ld->ref_add = ix_prep(db, "INSERT INTO refs(blob_id, name, kind, line, col, scope, recv) "
			   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	ld->imp_del = ix_prep(db, "DELETE FROM imports WHERE path = ?1");
	ld->imp_add = ix_prep(db, "INSERT INTO imports(path, target, resolved, line, type_only) "
			     "VALUES (?1, ?2, ?3, ?4, ?5)");
	ld->vec_add = ix_prep(db, "INSERT OR REPLACE INTO vectors(chunk_id, model, dim, fmt, scale, vec) "
			   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->cvec_add = ix_prep(db, "INSERT OR REPLACE INTO commit_vectors(sha, model, dim, fmt, scale, vec) "
			    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->chunk_find = ix_prep(db, "SELECT id FROM chunks WHERE blob_id = ?1 AND start_line = ?2 AND end_line = ?3");
	ld->commit_add = ix_prep(db, "INSERT OR REPLACE INTO commits(sha, time, author, email, message, parents, merged_into) "
			      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	ld->cfile_add = ix_prep(db, "INSERT OR REPLACE INTO commit_files(sha, path, added, deleted, status, old_path) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	ld->coupling_add = ix_prep(db, "INSERT OR REPLACE INTO coupling(a, b, score, co_changes, last) VALUES (?1, ?2, ?3, ?4, ?5)");
}

/*
 * Each segment of a blob's text (index_segments) to fn(its row in chunks_tri,
 * the segment's text, data), in order; what fn returns if not 0.  segs, if not
 * NULL, gets the blob's segs column.
 */
static int each_segment(sqlite3_int64 id, const char *text, size_t len, int64_t size,
			int (*fn)(sqlite3_int64 row, const char *seg, size_t n, void *data), void *data,
			struct buf *segs)
{
	uint32_t ends[INDEX_SEG_MAX];
	unsigned n = index_segments(text, len, size, ends), i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = fn((id << INDEX_SEG_BITS) | i, text + (i ? ends[i - 1] : 0),
			     ends[i] - (i ? ends[i - 1] : 0), data)))
			return rc;
	if (segs)
		index_segs_encode(segs, text, ends, n);
	return 0;
}

static int del_tri_row(sqlite3_int64 row, const char *seg, size_t n, void *data)
{
	sqlite3_stmt *del = data;

	sqlite3_bind_int64(del, 1, row);
	sqlite3_bind_text(del, 2, seg, (int)n, SQLITE_STATIC);
	return ix_step_done(sqlite3_db_handle(del), del);
}

static int put_tri(sqlite3_int64 row, const char *seg, size_t n, void *data)
{
	struct loader *ld = data;

	sqlite3_bind_int64(ld->tri_add, 1, row);
	sqlite3_bind_text(ld->tri_add, 2, seg, (int)n, SQLITE_STATIC);
	return ix_step_done(ld->db, ld->tri_add);
}

/*
 * The current file's lines from its chunks, as the call graph reads them back
 * from the index (the first chunk that holds a line wins): built at the first
 * tag after a chunk.
 */
static void build_lines(struct loader *ld)
{
	long n = 0;

	for (size_t i = 0; i < ld->cur_spans_nr; i++)
		if (ld->cur_spans[i].e > n)
			n = ld->cur_spans[i].e;
	ALLOC_GROW(ld->cur_lines, (size_t)n + 1, ld->cur_lines_alloc);
	memset(ld->cur_lines, 0, ((size_t)n + 1) * sizeof(*ld->cur_lines));
	free(ld->cur_lbuf);
	ld->cur_lbuf = xmalloc(ld->cur_text.len + 1);
	memcpy(ld->cur_lbuf, ld->cur_text.buf, ld->cur_text.len);
	ld->cur_lbuf[ld->cur_text.len] = '\0';
	for (size_t i = 0; i < ld->cur_spans_nr; i++) {
		const struct ld_span *c = &ld->cur_spans[i];
		char *p = ld->cur_lbuf + c->off, *end = p + c->len;

		*end = '\0';	/* the '\n' between chunks, or the end */
		for (long l = c->s; l >= 1 && l <= c->e && p; l++) {
			char *e = strchrnul(p, '\n');
			char *next = *e ? e + 1 : NULL;
			*e = '\0';
			if (!ld->cur_lines[l - 1])
				ld->cur_lines[l - 1] = p;
			p = next;
		}
	}
	ld->cur_lines_nr = n ? n : -1;	/* -1: built, no line */
}

static const char *line_at(void *ctx, long l)
{
	const struct loader *ld = ctx;

	return l >= 1 && l <= ld->cur_lines_nr ? ld->cur_lines[l - 1] : NULL;
}

/*
 * What the call graph needs from the text of the file just finished, stored
 * now so that it never reads the text back: its main guard (blobs) and its
 * mentions (index/mentions.h).  0, or -1 after a message.
 */
static int store_file_text(struct loader *ld)
{
	long guard;
	int rc = 0;

	if (!ld->cur_lines_nr)
		build_lines(ld);
	if (ld->cur_text.len && memmem(ld->cur_text.buf, ld->cur_text.len, "if __name__", 11) &&
	    (guard = tagtext_main_guard(line_at, ld, ld->cur_lines_nr))) {
		sqlite3_bind_int64(ld->guard_put, 1, ld->cur_blob);
		sqlite3_bind_int64(ld->guard_put, 2, guard);
		rc = ix_step_done(ld->db, ld->guard_put);
	}
	mentions_text(&ld->mentions, line_at, ld, ld->cur_lines_nr, ld->cur_lang, ld->cur_refs, ld->cur_refs_nr,
		      ld->cur_defs, ld->cur_defs_nr);
	if (!rc && ld->mentions.len) {
		sqlite3_bind_int64(ld->mention_put, 1, ld->cur_blob);
		sqlite3_bind_text(ld->mention_put, 2, ld->mentions.buf, (int)ld->mentions.len, SQLITE_STATIC);
		rc = ix_step_done(ld->db, ld->mention_put);
	}
	return rc;
}

/* Store the trigrams of the file just finished, by segments, and its main guard, if its content is new. */
int loader_finish_file(struct loader *ld)
{
	int rc = 0;

	if (ld->cur_path && ld->cur_new)
		rc = store_file_text(ld);
	if (!rc && ld->cur_path && ld->cur_new) {
		rc = each_segment(ld->cur_blob, ld->cur_text.buf, ld->cur_text.len, ld->cur_size, put_tri, ld,
				  &ld->segs);
		if (!rc && ld->segs.len) {
			sqlite3_bind_int64(ld->segs_put, 1, ld->cur_blob);
			sqlite3_bind_blob(ld->segs_put, 2, ld->segs.buf, (int)ld->segs.len, SQLITE_STATIC);
			rc = ix_step_done(ld->db, ld->segs_put);
		}
	}
	free(ld->cur_path);
	ld->cur_path = NULL;
	free(ld->cur_lang);
	ld->cur_lang = NULL;
	ld->cur_new = 0;
	buf_reset(&ld->cur_text);
	ld->cur_spans_nr = 0;
	ld->cur_lines_nr = 0;
	ld->cur_refs_nr = 0;
	for (size_t i = 0; i < ld->cur_defs_nr; i++)
		free((char *)ld->cur_defs[i].name);
	ld->cur_defs_nr = 0;
	return rc;
}

void loader_release(struct loader *ld)
{
	sqlite3_stmt **sts[] = { &ld->blob_get, &ld->blob_add, &ld->blob_seen, &ld->file_put,
		&ld->chunk_add, &ld->fts_add, &ld->tri_add, &ld->segs_put, &ld->guard_put, &ld->mention_put, &ld->def_add, &ld->ref_add, &ld->imp_del, &ld->imp_add,
		&ld->vec_add, &ld->chunk_find, &ld->commit_add, &ld->cfile_add, &ld->coupling_add,
		&ld->cvec_add };

	for (size_t i = 0; i < ARRAY_SIZE(sts); i++)
		sqlite3_finalize(*sts[i]);
	free(ld->cur_path);
	buf_release(&ld->cur_text);
	free(ld->cur_spans);
	free(ld->cur_lbuf);
	free(ld->cur_lines);
	free(ld->cur_lang);
	free(ld->cur_refs);
	for (size_t i = 0; i < ld->cur_defs_nr; i++)
		free((char *)ld->cur_defs[i].name);
	free(ld->cur_defs);
	buf_release(&ld->mentions);
	buf_release(&ld->segs);
	buf_release(&ld->vbuf);
	buf_release(&ld->zbuf);
	df_release(&ld->df);
}

static int bad(struct loader *ld, const char *what, const char *type);

/*
 * Store vector v[0..dim) of model in st (vec_add or cvec_add, whose key is
 * bound already) in the loader's format.  0, or -1 after a message.
 */
int store_vec(struct loader *ld, sqlite3_stmt *st, const char *model, const float *v, size_t dim)
{
	double scale;

	buf_reset(&ld->vbuf);
	vec_encode(&ld->vbuf, &scale, v, dim, ld->vfmt);
	sqlite3_bind_text(st, 2, model ? model : "unknown", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)dim);
	sqlite3_bind_text(st, 4, vec_format_name(ld->vfmt), -1, SQLITE_STATIC);
	if (ld->vfmt == VEC_F32)
		sqlite3_bind_null(st, 5);
	else
		sqlite3_bind_double(st, 5, scale);
	sqlite3_bind_blob(st, 6, ld->vbuf.buf, (int)ld->vbuf.len, SQLITE_STATIC);
	return ix_step_done(ld->db, st);
}

/* The "vec" of record rec, decoded: 0 and a malloc'd *v, 1 when it has none, -1 after a message. */
static int record_vec(struct loader *ld, json_t *rec, const char *type, float **v, size_t *dim)
{
	json_t *vec = json_object_get(rec, "vec");

	*v = NULL;
	if (!vec)
		return 1;
	if (!json_is_string(vec) || vec_from_base64(v, dim, json_string_value(vec), json_string_length(vec)) < 0)
		return bad(ld, "has a \"vec\" that is not base64 of float32 values", type);
	return 0;
}

static int bad(struct loader *ld, const char *what, const char *type)
{
	return error("%s:%ld: %s record %s", ld->src, ld->lineno, type, what);
}

/* Records after a file record must be about that file. */
static int check_path(struct loader *ld, json_t *rec, const char *type)
{
	const char *p = jstr(rec, "path");

	if (!p)
		return bad(ld, "has no \"path\"", type);
	if (!ld->cur_path || strcmp(p, ld->cur_path))
		return error("%s:%ld: %s record for '%s' does not follow a file record for it "
			     "(ci-chunk writes them in order unless --no-files is given)",
			     ld->src, ld->lineno, type, p);
	return 0;
}

static int load_file(struct loader *ld, json_t *rec)
{
	const char *path = jstr(rec, "path"), *blob = jstr(rec, "blob");
	json_t *utf8 = json_object_get(rec, "utf8");
	sqlite3_int64 id = 0;
	struct stat st;
	char *abs;
	int64_t mtime = 0;

	if (loader_finish_file(ld) < 0)
		return -1;
	if (!path || !*path)
		return bad(ld, "has no \"path\"", "file");
	if (!blob || strlen(blob) != 40)
		return bad(ld, "has no 40-digit \"blob\"", "file");
	if (path[0] == '/' || !strcmp(path, "..") || !strncmp(path, "../", 3) || strstr(path, "/../") ||
	    (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
		return error("%s:%ld: file record path '%s' leaves the repository", ld->src, ld->lineno, path);
	sqlite3_bind_text(ld->blob_get, 1, blob, -1, SQLITE_STATIC);
	if (sqlite3_step(ld->blob_get) == SQLITE_ROW)
		id = sqlite3_column_int64(ld->blob_get, 0);
	sqlite3_reset(ld->blob_get);
	ld->cur_new = 0;
	if (!id) {
		sqlite3_bind_text(ld->blob_add, 1, blob, -1, SQLITE_STATIC);
		bind_str_or_null(ld->blob_add, 2, json_object_get(rec, "lang"));
		sqlite3_bind_int64(ld->blob_add, 3, jint(rec, "size"));
		sqlite3_bind_int64(ld->blob_add, 4, jint(rec, "lines"));
		sqlite3_bind_int(ld->blob_add, 5, !json_is_false(utf8));
		if (ix_step_done(ld->db, ld->blob_add) < 0)
			return -1;
		id = sqlite3_last_insert_rowid(ld->db);
		ld->cur_new = 1;
	}
	if (!ld->snapshot) {
		abs = xasprintf("%s/%s", ld->root, path);
		if (stat(abs, &st) == 0)
			mtime = (int64_t)st.st_mtime;
		free(abs);
	}
	sqlite3_bind_text(ld->file_put, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(ld->file_put, 2, id);
	sqlite3_bind_int64(ld->file_put, 3, jint(rec, "size"));
	sqlite3_bind_int64(ld->file_put, 4, mtime);
	if (ix_step_done(ld->db, ld->file_put) < 0)
		return -1;
	sqlite3_bind_text(ld->imp_del, 1, path, -1, SQLITE_STATIC);
	if (ix_step_done(ld->db, ld->imp_del) < 0)
		return -1;
	ld->cur_path = xstrdup(path);
	ld->cur_lang = jstr(rec, "lang") ? xstrdup(jstr(rec, "lang")) : NULL;
	ld->cur_blob = id;
	ld->cur_size = jint(rec, "size");
	ld->files++;
	return 0;
}

static int load_chunk(struct loader *ld, json_t *rec)
{
	json_t *text = json_object_get(rec, "text");
	json_t *vec = json_object_get(rec, "vec");
	sqlite3_int64 chunk_id = 0;

	if (check_path(ld, rec, "chunk") < 0)
		return -1;
	if (!json_is_string(text) || !json_is_integer(json_object_get(rec, "start_line")) ||
	    !json_is_integer(json_object_get(rec, "end_line")) || !jstr(rec, "kind"))
		return bad(ld, "needs \"text\", \"start_line\", \"end_line\" and \"kind\"", "chunk");
	if (ld->cur_new) {
		sqlite3_bind_int64(ld->chunk_add, 1, ld->cur_blob);
		sqlite3_bind_int64(ld->chunk_add, 2, jint(rec, "start_line"));
		sqlite3_bind_int64(ld->chunk_add, 3, jint(rec, "end_line"));
		bind_str_or_null(ld->chunk_add, 4, json_object_get(rec, "kind"));
		bind_str_or_null(ld->chunk_add, 5, json_object_get(rec, "name"));
		bind_str_or_null(ld->chunk_add, 6, json_object_get(rec, "scope"));
		bind_str_or_null(ld->chunk_add, 7, json_object_get(rec, "signature"));
		if (ld->pre && ld->pre->rec == rec) {
			/* compressed by ld_prepare() */
			if (ld->pre->z_len)
				sqlite3_bind_blob(ld->chunk_add, 8, ld->pre_lp->z.buf + ld->pre->z_off,
						  (int)ld->pre->z_len, SQLITE_STATIC);
			else
				bind_str_or_null(ld->chunk_add, 8, text);
		} else if (index_deflate(&ld->zbuf, json_string_value(text), json_string_length(text))) {
			sqlite3_bind_blob(ld->chunk_add, 8, ld->zbuf.buf, (int)ld->zbuf.len, SQLITE_STATIC);
		} else {
			bind_str_or_null(ld->chunk_add, 8, text);
		}
		if (ix_step_done(ld->db, ld->chunk_add) < 0)
			return -1;
		chunk_id = sqlite3_last_insert_rowid(ld->db);
		sqlite3_bind_int64(ld->fts_add, 1, chunk_id);
		bind_str_or_null(ld->fts_add, 2, json_object_get(rec, "name"));
		bind_str_or_null(ld->fts_add, 3, json_object_get(rec, "scope"));
		bind_str_or_null(ld->fts_add, 4, json_object_get(rec, "signature"));
		bind_str_or_null(ld->fts_add, 5, text);
		if (ix_step_done(ld->db, ld->fts_add) < 0)
			return -1;
		{
			static const char *const names[4] = { "name", "scope", "signature", "text" };
			const char *cols[4];
			size_t lens[4];
			for (int i = 0; i < 4; i++) {
				json_t *v = json_object_get(rec, names[i]);
				cols[i] = json_is_string(v) ? json_string_value(v) : NULL;
				lens[i] = cols[i] ? json_string_length(v) : 0;
			}
			df_chunk(&ld->df, chunk_id, cols, lens);
		}
		if (ld->cur_text.len)
			buf_addch(&ld->cur_text, '\n');
		ALLOC_GROW(ld->cur_spans, ld->cur_spans_nr + 1, ld->cur_spans_alloc);
		ld->cur_spans[ld->cur_spans_nr++] = (struct ld_span){ jint(rec, "start_line"), jint(rec, "end_line"),
								      ld->cur_text.len, json_string_length(text) };
		ld->cur_lines_nr = 0;
		buf_add(&ld->cur_text, json_string_value(text), json_string_length(text));
		ld->chunks++;
	}
	if (vec) {
		float *v;
		size_t dim;
		int rc;

		if (!chunk_id) {
			sqlite3_bind_int64(ld->chunk_find, 1, ld->cur_blob);
			sqlite3_bind_int64(ld->chunk_find, 2, jint(rec, "start_line"));
			sqlite3_bind_int64(ld->chunk_find, 3, jint(rec, "end_line"));
			if (sqlite3_step(ld->chunk_find) == SQLITE_ROW)
				chunk_id = sqlite3_column_int64(ld->chunk_find, 0);
			sqlite3_reset(ld->chunk_find);
		}
		if (!chunk_id)
			return bad(ld, "has a vector for a chunk the index does not hold", "chunk");
		if (record_vec(ld, rec, "chunk", &v, &dim) < 0)
			return -1;
		sqlite3_bind_int64(ld->vec_add, 1, chunk_id);
		rc = store_vec(ld, ld->vec_add, jstr(rec, "model"), v, dim);
		free(v);
		if (rc < 0)
			return -1;
		ld->vectors++;
	}
	return 0;
}

/* TAGTEXT_PROPERTY, TAGTEXT_ASSIGNED for a TS/JS function that is an object's property. */
static unsigned js_flags(struct loader *ld, json_t *rec)
{
	const char *l = ld->cur_lang, *t;

	if (!l || (strcmp(l, "javascript") && strcmp(l, "typescript") && strcmp(l, "tsx")) ||
	    strcmp(jstr(rec, "kind"), "function"))
		return 0;
	t = line_at(ld, (long)jint(rec, "line"));
	return (tagtext_js_declared(t, jstr(rec, "name")) ? 0 : TAGTEXT_PROPERTY) |
	       (tagtext_js_assigned(t, jstr(rec, "name")) ? TAGTEXT_ASSIGNED : 0);
}

static int load_tag(struct loader *ld, json_t *rec, int is_def)
{
	const char *type = is_def ? "def" : "ref";
	sqlite3_stmt *st = is_def ? ld->def_add : ld->ref_add;

	if (check_path(ld, rec, type) < 0)
		return -1;
	if (!jstr(rec, "name") || !jstr(rec, "kind") || !json_is_integer(json_object_get(rec, "line")))
		return bad(ld, "needs \"name\", \"kind\" and \"line\"", type);
	if (!ld->cur_new)
		return 0;
	if (!ld->cur_lines_nr)
		build_lines(ld);
	sqlite3_bind_int64(st, 1, ld->cur_blob);
	bind_str_or_null(st, 2, json_object_get(rec, "name"));
	bind_str_or_null(st, 3, json_object_get(rec, "kind"));
	sqlite3_bind_int64(st, 4, jint(rec, "line"));
	sqlite3_bind_int64(st, 5, jint(rec, "col"));
	if (is_def) {
		long long e = jint(rec, "end_line");
		sqlite3_bind_int64(st, 6, e ? e : jint(rec, "line"));
		bind_str_or_null(st, 7, json_object_get(rec, "scope"));
		sqlite3_bind_int(st, 8, (int)(tagtext_def_flags(line_at, ld, jint(rec, "line")) | js_flags(ld, rec)));
		ALLOC_GROW(ld->cur_defs, ld->cur_defs_nr + 1, ld->cur_defs_alloc);
		ld->cur_defs[ld->cur_defs_nr++] = (struct mn_def){ xstrdup(jstr(rec, "name")), (long)jint(rec, "line"),
								   e ? (long)e : (long)jint(rec, "line") };
		ld->defs++;
	} else {
		long col_ = (long)jint(rec, "col");
		enum bind_recv recv = RECV_UNKNOWN;

		bind_str_or_null(st, 6, json_object_get(rec, "scope"));
		if (!strcmp(jstr(rec, "kind"), "call") && col_ >= 1)
			recv = bind_receiver(line_at(ld, (long)jint(rec, "line")), (size_t)col_ - 1);
		sqlite3_bind_int(st, 7, (int)recv);
		ALLOC_GROW(ld->cur_refs, ld->cur_refs_nr + 1, ld->cur_refs_alloc);
		ld->cur_refs[ld->cur_refs_nr++] = (struct mn_pos){ (long)jint(rec, "line"), col_ };
		ld->refs++;
	}
	return ix_step_done(ld->db, st);
}

static int load_import(struct loader *ld, json_t *rec)
{
	if (check_path(ld, rec, "import") < 0)
		return -1;
	if (!jstr(rec, "target") || !json_is_integer(json_object_get(rec, "line")))
		return bad(ld, "needs \"target\" and \"line\"", "import");
	sqlite3_bind_text(ld->imp_add, 1, ld->cur_path, -1, SQLITE_STATIC);
	bind_str_or_null(ld->imp_add, 2, json_object_get(rec, "target"));
	bind_str_or_null(ld->imp_add, 3, json_object_get(rec, "resolved"));
	sqlite3_bind_int64(ld->imp_add, 4, jint(rec, "line"));
	sqlite3_bind_int(ld->imp_add, 5, json_is_true(json_object_get(rec, "type_only")));
	ld->imports++;
	return ix_step_done(ld->db, ld->imp_add);
}

static int load_commit(struct loader *ld, json_t *rec)
{
	json_t *files = json_object_get(rec, "files"), *f;
	size_t i;

	if (!jstr(rec, "sha") || !json_is_integer(json_object_get(rec, "time")))
		return bad(ld, "needs \"sha\" and \"time\"", "commit");
	sqlite3_bind_text(ld->commit_add, 1, jstr(rec, "sha"), -1, SQLITE_STATIC);
	sqlite3_bind_int64(ld->commit_add, 2, jint(rec, "time"));
	bind_str_or_null(ld->commit_add, 3, json_object_get(rec, "author"));
	bind_str_or_null(ld->commit_add, 4, json_object_get(rec, "email"));
	bind_str_or_null(ld->commit_add, 5, json_object_get(rec, "message"));
	if (json_is_integer(json_object_get(rec, "parents")))
		sqlite3_bind_int64(ld->commit_add, 6, jint(rec, "parents"));
	else
		sqlite3_bind_null(ld->commit_add, 6);
	bind_str_or_null(ld->commit_add, 7, json_object_get(rec, "merged_into"));
	if (ix_step_done(ld->db, ld->commit_add) < 0)
		return -1;
	json_array_foreach(files, i, f) {
		/* "files": ["a.c", ...] or [{"path":"a.c","added":3,"deleted":1}, ...] */
		const char *p = json_is_string(f) ? json_string_value(f) : jstr(f, "path");
		if (!p)
			return bad(ld, "has a file without a path", "commit");
		sqlite3_bind_text(ld->cfile_add, 1, jstr(rec, "sha"), -1, SQLITE_STATIC);
		sqlite3_bind_text(ld->cfile_add, 2, p, -1, SQLITE_STATIC);
		if (json_is_object(f)) {
			sqlite3_bind_int64(ld->cfile_add, 3, jint(f, "added"));
			sqlite3_bind_int64(ld->cfile_add, 4, jint(f, "deleted"));
			bind_str_or_null(ld->cfile_add, 5, json_object_get(f, "status"));
			bind_str_or_null(ld->cfile_add, 6, json_object_get(f, "old_path"));
		} else {
			sqlite3_bind_null(ld->cfile_add, 3);
			sqlite3_bind_null(ld->cfile_add, 4);
			sqlite3_bind_null(ld->cfile_add, 5);
			sqlite3_bind_null(ld->cfile_add, 6);
		}
		if (ix_step_done(ld->db, ld->cfile_add) < 0)
			return -1;
	}
	ld->commits++;
	if (json_object_get(rec, "vec")) {
		float *v;
		size_t dim;
		int rc;

		if (record_vec(ld, rec, "commit", &v, &dim) < 0)
			return -1;
		sqlite3_bind_text(ld->cvec_add, 1, jstr(rec, "sha"), -1, SQLITE_TRANSIENT);
		rc = store_vec(ld, ld->cvec_add, jstr(rec, "model"), v, dim);
		free(v);
		if (rc < 0)
			return -1;
		ld->commit_vectors++;
	}
	return 0;
}

static int load_coupling(struct loader *ld, json_t *rec)
{
	json_t *score = json_object_get(rec, "score");

	if (!jstr(rec, "a") || !jstr(rec, "b") || !json_is_number(score))
		return bad(ld, "needs \"a\", \"b\" and \"score\"", "coupling");
	sqlite3_bind_text(ld->coupling_add, 1, jstr(rec, "a"), -1, SQLITE_STATIC);
	sqlite3_bind_text(ld->coupling_add, 2, jstr(rec, "b"), -1, SQLITE_STATIC);
	sqlite3_bind_double(ld->coupling_add, 3, json_number_value(score));
	sqlite3_bind_int64(ld->coupling_add, 4, jint(rec, "co_changes"));
	if (json_is_integer(json_object_get(rec, "last")))
		sqlite3_bind_int64(ld->coupling_add, 5, jint(rec, "last"));
	else
		sqlite3_bind_null(ld->coupling_add, 5);
	ld->couplings++;
	return ix_step_done(ld->db, ld->coupling_add);
}

/*
 * ci-couple's header records: a "history" record with "replace":true (a first
 * walk, or a rewritten history) replaces the stored history and coupling; a
 * "couplings" record with "replace":true replaces the coupling table.  The
 * history's head is remembered, for the next incremental walk.
 */
static int load_history_header(struct loader *ld, json_t *rec, int history)
{
	if (json_is_true(json_object_get(rec, "replace"))) {
		const char *sql = history ?
			"DELETE FROM commit_files; DELETE FROM commits; DELETE FROM commit_vectors; DELETE FROM coupling;" :
			"DELETE FROM coupling;";
		if (index_exec(ld->db, sql) < 0)
			return -1;
	}
	if (history && jstr(rec, "head"))
		ix_set_meta(ld->db, "history_head", jstr(rec, "head"));
	return 0;
}

/* Store one record.  Unknown types are ignored (a sink has nowhere to pass them). */
int load_record(struct loader *ld, json_t *rec)
{
	const char *t = jstr(rec, "_type");

	if (!strcmp(t, "file"))
		return load_file(ld, rec);
	if (!strcmp(t, "chunk"))
		return load_chunk(ld, rec);
	if (!strcmp(t, "def"))
		return load_tag(ld, rec, 1);
	if (!strcmp(t, "ref"))
		return load_tag(ld, rec, 0);
	if (!strcmp(t, "import"))
		return load_import(ld, rec);
	if (!strcmp(t, "commit"))
		return load_commit(ld, rec);
	if (!strcmp(t, "coupling"))
		return load_coupling(ld, rec);
	if (!strcmp(t, "history") || !strcmp(t, "couplings"))
		return load_history_header(ld, rec, !strcmp(t, "history"));
	return 0;
}

/* The text of chunk record rec compressed into lp->z: its z_off, z_len. */
static void prepare_text(struct ld_prepared *lp, struct ld_rec *r, struct buf *tmp)
{
	json_t *text = json_object_get(r->rec, "text");
	const char *t = jstr(r->rec, "_type");

	if (!t || strcmp(t, "chunk") || !json_is_string(text) ||
	    !index_deflate(tmp, json_string_value(text), json_string_length(text)))
		return;
	r->z_off = lp->z.len;
	r->z_len = (uint32_t)tmp->len;
	buf_add(&lp->z, tmp->buf, tmp->len);
}

/*
 * About the memory a parsed record holds besides its strings' bytes: jansson's
 * object, its hash table, and per member a pair, a value and their malloc
 * headers (a def record of 120 bytes of NDJSON held about 1.2 KB).
 */
#define PREP_RECORD_BYTES 256
#define PREP_MEMBER_BYTES 128

struct ld_prepared *ld_prepare(const char *p, size_t n, size_t *bytes)
{
	struct ld_prepared *lp = xcalloc(1, sizeof(*lp));
	const char *end = p + n, *nl;
	struct buf tmp = BUF_INIT;
	json_error_t jerr;
	size_t held = 0;

	buf_init(&lp->z, 0);
	while (p < end) {
		json_t *rec;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		rec = json_loadb(p, (size_t)(nl - p), JSON_ALLOW_NUL, &jerr);
		if (!rec || !json_is_object(rec) || !jstr(rec, "_type")) {
			lp->bad = xstrdup(rec ? "no \"_type\"" : jerr.text);
			json_decref(rec);
			break;
		}
		ALLOC_GROW(lp->v, lp->nr + 1, lp->alloc);
		lp->v[lp->nr] = (struct ld_rec){ rec, 0, 0 };
		prepare_text(lp, &lp->v[lp->nr], &tmp);
		lp->nr++;
		held += PREP_RECORD_BYTES + json_object_size(rec) * PREP_MEMBER_BYTES;
		p = nl + 1;
	}
	buf_release(&tmp);
	if (bytes)
		*bytes = held + n + lp->z.alloc + lp->alloc * sizeof(*lp->v);
	return lp;
}

int load_prepared(struct loader *ld, const struct ld_prepared *lp)
{
	int rc = 0;

	ld->pre_lp = lp;
	for (size_t i = 0; i < lp->nr && rc == 0; i++) {
		ld->lineno++;
		ld->pre = &lp->v[i];
		rc = load_record(ld, lp->v[i].rec);
	}
	ld->pre = NULL;
	ld->pre_lp = NULL;
	if (rc == 0 && lp->bad) {
		ld->lineno++;
		rc = error("%s:%ld: not a record: %s", ld->src, ld->lineno, lp->bad);
	}
	return rc < 0 ? -1 : 0;
}

void ld_prepared_free(struct ld_prepared *lp)
{
	if (!lp)
		return;
	for (size_t i = 0; i < lp->nr; i++)
		json_decref(lp->v[i].rec);
	free(lp->v);
	buf_release(&lp->z);
	free(lp->bad);
	free(lp);
}

/* Parse a buffer of NDJSON records and store them. */
int load_buffer(struct loader *ld, const char *p, size_t n)
{
	struct ld_prepared *lp = ld_prepare(p, n, NULL);
	int rc = load_prepared(ld, lp);

	ld_prepared_free(lp);
	return rc;
}

/* ---- meta, garbage collection ---- */

void ix_set_meta(sqlite3 *db, const char *key, const char *value)
{
	sqlite3_stmt *st = ix_prep(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	ix_step_done(db, st);
	sqlite3_finalize(st);
}

static char *head_commit(const char *root)
{
	git_repository *repo = NULL;
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	walk_git_start();
	if (git_repository_open(&repo, root) < 0) {
		git_error_clear();
		return NULL;
	}
	if (git_reference_name_to_id(&oid, repo, "HEAD") < 0) {
		git_error_clear();
		git_repository_free(repo);
		return NULL;
	}
	git_oid_tostr(hex, sizeof(hex), &oid);
	git_repository_free(repo);
	return xstrdup(hex);
}

/* A meta value of db, malloc'd, or NULL. */
char *ix_get_meta(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = ix_prep(db, "SELECT value FROM meta WHERE key = ?1");
	char *v = NULL;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* Record the time in meta key, and the commit indexed: snapshot's, else HEAD's. */
void ix_stamp(sqlite3 *db, const char *root, const char *key, const char *snapshot)
{
	char when[32];
	time_t t = time(NULL);
	char *commit = snapshot ? xstrdup(snapshot) : head_commit(root);

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	ix_set_meta(db, key, when);
	snprintf(when, sizeof(when), "%lld", (long long)t);
	ix_set_meta(db, "updated_epoch", when);
	ix_set_meta(db, "commit", commit ? commit : "");
	free(commit);
}

/*
 * Drop the content of blobs no file points at, once they outnumber the live ones
 * (until then they are kept, so switching back to a branch re-reads nothing).
 * Returns 1 when it dropped some, 0 when not, -1 after an error.
 */
int ix_collect_garbage(sqlite3 *db)
{
	/* every files.blob_id is a blob: the unreferenced ones are the rest
	 * (counting them by NOT IN probed files_blob once a blob, 1.6 ms a
	 * 10,000-file update; this reads the two indexes in order, 0.2 ms) */
	sqlite3_stmt *cnt = ix_prep(db, "SELECT (SELECT count(*) FROM blobs) - "
				 "(SELECT count(DISTINCT blob_id) FROM files), (SELECT count(*) FROM blobs)");
	sqlite3_stmt *dead, *text, *del_tri;
	long long unref = 0, all = 0;
	struct buf b = BUF_INIT;
	int rc = 0;

	if (sqlite3_step(cnt) == SQLITE_ROW) {
		unref = sqlite3_column_int64(cnt, 0);
		all = sqlite3_column_int64(cnt, 1);
	}
	sqlite3_finalize(cnt);
	if (!unref || unref * 2 <= all)
		return 0;
	dead = ix_prep(db, "SELECT id, size FROM blobs WHERE id NOT IN (SELECT blob_id FROM files)");
	text = ix_prep(db, "SELECT ci_inflate(text) FROM chunks WHERE blob_id = ?1 ORDER BY start_line");
	del_tri = ix_prep(db, "INSERT INTO chunks_tri(chunks_tri, rowid, text) VALUES ('delete', ?1, ?2)");
	while (sqlite3_step(dead) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(dead, 0);
		/* a contentless FTS5 row is deleted by giving its text again: the
		 * blob's text is cut into the same segments as when it was stored */
		buf_reset(&b);
		sqlite3_bind_int64(text, 1, id);
		while (sqlite3_step(text) == SQLITE_ROW) {
			if (b.len)
				buf_addch(&b, '\n');
			buf_add(&b, sqlite3_column_text(text, 0), (size_t)sqlite3_column_bytes(text, 0));
		}
		sqlite3_reset(text);
		if (each_segment(id, b.buf, b.len, sqlite3_column_int64(dead, 1), del_tri_row, del_tri, NULL) < 0) {
			rc = -1;
			break;
		}
	}
	sqlite3_finalize(dead);
	sqlite3_finalize(text);
	sqlite3_finalize(del_tri);
	buf_release(&b);
	if (rc < 0 || index_exec(db,
		"DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE blob_id NOT IN (SELECT blob_id FROM files));"
		"DELETE FROM chunks WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM defs WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM refs WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM mentions WHERE blob_id NOT IN (SELECT blob_id FROM files);"
		"DELETE FROM blobs WHERE id NOT IN (SELECT blob_id FROM files);") < 0)
		return -1;
	return 1;
}

