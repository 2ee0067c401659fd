/*
 * index.c: opening, creating and querying the SQLite index (see index.h), and
 * ci's code-aware FTS5 tokenizer.
 *
 * The tokenizer is what makes BM25 work on code: "parseHTTPHeader" is indexed as
 * itself and, at the same position, as "parse", "http" and "header", all lower
 * case, so a query for "header" finds it and a query for "parsehttpheader" finds
 * exactly it.  Queries are tokenized whole (no splitting).
 */
#include "core/common.h"
#include "index/index.h"
#include "embed/vec.h"

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

extern const char ci_schema_sql[];

struct ci_index {
	sqlite3 *db;		/* the connection */
	char *path;		/* the database file */
	char *root;		/* repository root recorded at build time */
	char *meta_val;		/* last index_meta() answer */
	int immutable;		/* INDEX_IMMUTABLE: what follows is kept */
	struct index_kept_meta {
		char *key, *val;	/* val NULL: no such key */
	} *kept_meta;		/* index_meta's answers */
	size_t kept_meta_nr, kept_meta_alloc;
	struct index_kept_stmt {
		char *sql;
		sqlite3_stmt *st;
	} *kept;		/* index_kept's statements */
	size_t kept_nr, kept_alloc;
	int writer;		/* opened read-write */
	int note_damage;	/* INDEX_NOTE_DAMAGE: damage is noted, not fatal */
	int damage_seen;	/* damage was reported while it was open (atomic) */
};

/* ---- the ci_code tokenizer ---- */

struct ci_tok {
	int unused;		/* FTS5 wants an object; there is no state */
};

static int tok_create(void *ctx, const char **argv, int argc, Fts5Tokenizer **out)
{
	(void)ctx;
	(void)argv;
	(void)argc;
	*out = (Fts5Tokenizer *)xcalloc(1, sizeof(struct ci_tok));
	return SQLITE_OK;
}

static void tok_delete(Fts5Tokenizer *t)
{
	free(t);
}

static int is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c >= 0x80;
}

static int kind_of(unsigned char c)
{
	if (c >= 'a' && c <= 'z')
		return 1;	/* lower */
	if (c >= 'A' && c <= 'Z')
		return 2;	/* upper */
	if (c >= '0' && c <= '9')
		return 3;	/* digit */
	if (c == '_')
		return 0;	/* separator */
	return 4;		/* other (UTF-8) */
}

#define TOK_MAX 64

typedef int (*tok_cb)(void *, int, const char *, int, int, int);

/* Emit the camelCase / snake_case / digit parts of word w[0..n) at offset off. */
static int emit_parts(void *ctx, tok_cb cb, const char *w, int n, int off)
{
	char low[TOK_MAX];
	int i = 0, rc, parts = 0, s;

	/* count parts first: a word of one part is not emitted twice */
	for (int pass = 0; pass < 2; pass++) {
		i = 0;
		while (i < n) {
			while (i < n && w[i] == '_')
				i++;
			if (i >= n)
				break;
			s = i;
			int k = kind_of((unsigned char)w[i]);
			i++;
			if (k == 2) {
				/* "HTTPServer": upper run, the last upper starts the next part */
				if (i < n && kind_of((unsigned char)w[i]) == 2) {
					while (i < n && kind_of((unsigned char)w[i]) == 2)
						i++;
					if (i < n && kind_of((unsigned char)w[i]) == 1)
						i--;
				} else {
					while (i < n && kind_of((unsigned char)w[i]) == 1)
						i++;
				}
			} else {
				while (i < n && kind_of((unsigned char)w[i]) == k)
					i++;
			}
			if (!pass) {
				parts++;
				continue;
			}
			if (parts < 2)
				return SQLITE_OK;
			int l = i - s < TOK_MAX ? i - s : TOK_MAX;
			for (int j = 0; j < l; j++) {
				unsigned char ch = (unsigned char)w[s + j];
				low[j] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
			}
			rc = cb(ctx, FTS5_TOKEN_COLOCATED, low, l, off + s, off + i);
			if (rc != SQLITE_OK)
				return rc;
		}
	}
	return SQLITE_OK;
}

static int tok_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n,
			tok_cb cb)
{
	char low[TOK_MAX];
	int i = 0, j, rc;

	(void)t;
	while (i < n) {
		if (!is_word((unsigned char)text[i])) {
			i++;
			continue;
		}
		for (j = i; j < n && is_word((unsigned char)text[j]); j++)
			;
		int l = j - i < TOK_MAX ? j - i : TOK_MAX;
		for (int k = 0; k < l; k++) {
			unsigned char ch = (unsigned char)text[i + k];
			low[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
		}
		/* a long run of word characters (hex, base64) is not worth more than its head */
		rc = cb(ctx, 0, low, l, i, j);
		if (rc != SQLITE_OK)
			return rc;
		if (!(flags & FTS5_TOKENIZE_QUERY) && j - i <= TOK_MAX) {
			rc = emit_parts(ctx, cb, text + i, j - i, i);
			if (rc != SQLITE_OK)
				return rc;
		}
		i = j;
	}
	return SQLITE_OK;
}

struct terms_ctx {
	void (*fn)(const char *term, int len, void *ctx);
	void *ctx;
};

static int terms_cb(void *ctx, int flags, const char *tok, int n, int start, int end)
{
	struct terms_ctx *tc = ctx;

	(void)flags;
	(void)start;
	(void)end;
	tc->fn(tok, n, tc->ctx);
	return SQLITE_OK;
}

void index_terms(const char *text, size_t n, void (*fn)(const char *term, int len, void *ctx), void *ctx)
{
	struct terms_ctx tc = { fn, ctx };

	/* FTS5 hands a tokenizer at most INT_MAX bytes; so do we */
	tok_tokenize(NULL, &tc, FTS5_TOKENIZE_DOCUMENT, text, n > INT_MAX ? INT_MAX : (int)n, terms_cb);
}

fts5_api *index_fts5_api(sqlite3 *db)
{
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
	sqlite3_step(st);
	sqlite3_finalize(st);
	return api;
}

/*
 * The trigram tokenizer of chunks_tri, giving each trigram once a row when a
 * row is stored or deleted.  The table is detail='none': FTS5 keeps whether a
 * term is in a row, so a repeated trigram changes nothing it stores but the
 * row's token count (which nothing reads), and FTS5's hash lookup for each
 * repeat cost a build's loading thread about 8% of its time (69% of the
 * trigrams of a 4 KiB segment of Linux's kernel/ repeat an earlier one).  Queries go
 * through SQLite's trigram tokenizer as they are.  Registered under SQLite's
 * name for it, "trigram", in front of SQLite's own (which it wraps), so the
 * schema and any other reader of the index (the sqlite3 shell) are unchanged.
 */
#define TRI_SEEN_BITS 13
#define TRI_SEEN_SLOTS (1u << TRI_SEEN_BITS)

struct tri_impl {
	fts5_tokenizer inner;	/* SQLite's trigram tokenizer */
	void *inner_data;	/* its user data */
};

struct tri_tok {
	const struct tri_impl *impl;
	Fts5Tokenizer *inner;	/* an instance of SQLite's */
	uint32_t gen;		/* the row being tokenized: its trigrams are the keys whose mark is gen */
	unsigned seen;		/* how many */
	uint32_t mark[TRI_SEEN_SLOTS];
	uint64_t key[TRI_SEEN_SLOTS];
};

struct tri_call {
	struct tri_tok *t;
	void *ctx;
	tok_cb cb;
};

static int tri_create(void *data, const char **args, int nargs, Fts5Tokenizer **out)
{
	const struct tri_impl *impl = data;
	struct tri_tok *t = sqlite3_malloc(sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->impl = impl;
	rc = impl->inner.xCreate(impl->inner_data, args, nargs, &t->inner);
	if (rc != SQLITE_OK) {
		sqlite3_free(t);
		return rc;
	}
	*out = (Fts5Tokenizer *)t;
	return SQLITE_OK;
}

static void tri_delete(Fts5Tokenizer *tok)
{
	struct tri_tok *t = (struct tri_tok *)tok;

	if (!t)
		return;
	t->impl->inner.xDelete(t->inner);
	sqlite3_free(t);
}

/* A token of the row, passed on unless the row gave it before. */
static int tri_token(void *ctx, int flags, const char *tok, int n, int start, int end)
{
	struct tri_call *c = ctx;
	struct tri_tok *t = c->t;

	if (n >= 1 && n <= 7 && t->seen < TRI_SEEN_SLOTS / 2) {
		uint64_t k = (uint64_t)n << 56;
		size_t h;

		for (int i = 0; i < n; i++)
			k |= (uint64_t)(unsigned char)tok[i] << (8 * i);
		h = (size_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - TRI_SEEN_BITS));
		for (; t->mark[h] == t->gen; h = (h + 1) & (TRI_SEEN_SLOTS - 1))
			if (t->key[h] == k)
				return SQLITE_OK;
		t->mark[h] = t->gen;
		t->key[h] = k;
		t->seen++;
	}
	return c->cb(c->ctx, flags, tok, n, start, end);
}

static int tri_tokenize(Fts5Tokenizer *tok, void *ctx, int flags, const char *text, int n, tok_cb cb)
{
	struct tri_tok *t = (struct tri_tok *)tok;
	struct tri_call c = { t, ctx, cb };

	if (!(flags & FTS5_TOKENIZE_DOCUMENT))
		return t->impl->inner.xTokenize(t->inner, ctx, flags, text, n, cb);
	if (++t->gen == 0) {
		memset(t->mark, 0, sizeof(t->mark));
		t->gen = 1;
	}
	t->seen = 0;
	return t->impl->inner.xTokenize(t->inner, &c, flags, text, n, tri_token);
}

int index_register_tokenizer(sqlite3 *db)
{
	static fts5_tokenizer tok = { tok_create, tok_delete, tok_tokenize };
	static fts5_tokenizer tri = { tri_create, tri_delete, tri_tokenize };
	fts5_api *api = index_fts5_api(db);
	struct tri_impl *impl;

	if (!api)
		return error("this SQLite has no FTS5 (Debian's libsqlite3 has it)");
	if (api->xCreateTokenizer(api, "ci_code", NULL, &tok, NULL) != SQLITE_OK)
		return error("cannot register the ci_code tokenizer: %s", sqlite3_errmsg(db));
	impl = xcalloc(1, sizeof(*impl));
	if (api->xFindTokenizer(api, "trigram", &impl->inner_data, &impl->inner) != SQLITE_OK) {
		free(impl);
		return error("this SQLite's FTS5 has no trigram tokenizer (SQLite 3.34 or later has it)");
	}
	if (impl->inner.xCreate == tri_create) {	/* registered on db already */
		free(impl);
		return 0;
	}
	if (api->xCreateTokenizer(api, "trigram", impl, &tri, free) != SQLITE_OK) {
		free(impl);
		return error("cannot register the trigram tokenizer: %s", sqlite3_errmsg(db));
	}
	return 0;
}

/* ---- chunk text, compressed ---- */

/*
 * Chunk text is most of what an index holds (the whole source again), so it is
 * stored compressed: ci_deflate(text) gives a BLOB, the text's length as 4
 * bytes little-endian then its zlib stream, or the text itself (TEXT) when it is
 * short or does not shrink; ci_inflate(x) gives back the text of either.  FTS5
 * reads chunks through the view chunks_plain, which inflates.
 */
#define DEFLATE_MIN 64		/* shorter texts are kept as they are */

int index_deflate(struct buf *out, const char *text, size_t n)
{
	uLongf out_len;

	if (n < DEFLATE_MIN || n > UINT32_MAX)
		return 0;
	out_len = compressBound((uLong)n);
	buf_reset(out);
	buf_grow(out, 4 + (size_t)out_len);
	if (compress2((Bytef *)out->buf + 4, &out_len, (const Bytef *)text, (uLong)n, 6) != Z_OK ||
	    4 + out_len >= (uLongf)n)
		return 0;
	out->buf[0] = (char)(n & 0xff);
	out->buf[1] = (char)((n >> 8) & 0xff);
	out->buf[2] = (char)((n >> 16) & 0xff);
	out->buf[3] = (char)((n >> 24) & 0xff);
	buf_setlen(out, 4 + (size_t)out_len);
	return 1;
}

static void sql_deflate(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *in;
	struct buf out = BUF_INIT;
	int n;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	in = sqlite3_value_text(argv[0]);
	n = sqlite3_value_bytes(argv[0]);
	if (!in) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!index_deflate(&out, (const char *)in, (size_t)n)) {
		buf_release(&out);
		sqlite3_result_text(ctx, (const char *)in, n, SQLITE_TRANSIENT);
		return;
	}
	sqlite3_result_blob(ctx, out.buf, (int)out.len, SQLITE_TRANSIENT);
	buf_release(&out);
}

static void sql_inflate(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *in;
	char *out;
	uLongf out_len;
	uint32_t len;
	int n;

	if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
		sqlite3_result_value(ctx, argv[0]);	/* stored as it is */
		return;
	}
	in = sqlite3_value_blob(argv[0]);
	n = sqlite3_value_bytes(argv[0]);
	if (n < 4 || !in) {
		sqlite3_result_error(ctx, "ci_inflate: a chunk text is damaged (too short)", -1);
		return;
	}
	len = (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
	if (len > (uint32_t)sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1)) {
		sqlite3_result_error(ctx, "ci_inflate: a chunk text is damaged (length)", -1);
		return;
	}
	out = sqlite3_malloc64((sqlite3_uint64)len + 1);
	if (!out) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	out_len = len;
	if (uncompress((Bytef *)out, &out_len, in + 4, (uLong)(n - 4)) != Z_OK || out_len != len) {
		sqlite3_free(out);
		sqlite3_result_error(ctx, "ci_inflate: a chunk text is damaged (zlib)", -1);
		return;
	}
	out[len] = '\0';
	sqlite3_result_text(ctx, out, (int)len, sqlite3_free);
}

int index_register_functions(sqlite3 *db)
{
	if (sqlite3_create_function(db, "ci_deflate", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    sql_deflate, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(db, "ci_inflate", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    sql_inflate, NULL, NULL) != SQLITE_OK)
		return error("cannot register ci_deflate/ci_inflate: %s", sqlite3_errmsg(db));
	return index_register_tokenizer(db);
}

/* ---- memory for one query ---- */

int index_huge_page_cache(size_t bytes)
{
	int hdr = 0;
	size_t slot, n;
	void *p;

	if (sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr) != SQLITE_OK)
		return -1;
	slot = (size_t)(CI_PAGE_SIZE + hdr + 7) & ~(size_t)7;
	n = bytes / slot;
	if (!n)
		return -1;
	/* on huge pages' boundaries: the ends of an unaligned mapping take 4 KiB
	 * pages, a fault each */
	p = huge_alloc(slot * n);
	if (sqlite3_config(SQLITE_CONFIG_PAGECACHE, p, (int)slot, (int)n) != SQLITE_OK) {
		huge_free(p, slot * n);
		return -1;
	}
	return 0;	/* lives as long as the process */
}

/* ---- damage ---- */

/*
 * SQLite reports damage it finds wherever it finds it: a statement's step, a
 * prepare that reads the schema, a page of a b-tree or of FTS5's segments.
 * Checking every step of the hundred or so of ci's commands for
 * SQLITE_CORRUPT was not done (many loops stopped at the first row that was
 * not SQLITE_ROW and answered with what they had), so the check is here, once:
 * SQLite's error log (SQLITE_CONFIG_LOG), which it calls with the code of
 * every error a statement ends with and of every corruption it detects,
 * before the caller sees the error.  It must be installed before SQLite
 * starts (SQLite 3.40 refuses it after), hence a constructor.  The log is one
 * for the process and says nothing of the connection, so it is given to the
 * index opened last: what it does (die, or note) is that handle's
 * (INDEX_NOTE_DAMAGE); the two variables below are the only state outside a
 * handle, and they exist because SQLite's log is process-wide.
 */
static struct ci_index *damage_ix;	/* the index index_open opened last, while open */
static int damage_dying;		/* a thread is dying of it (atomic) */

/*
 * A thread that answers queries on an index of its own among others
 * (libcommon/fleet's shards) takes the reports of its statements itself
 * (index_damage_thread): SQLite calls the log on the thread whose statement
 * met the damage.
 */
static __thread int damage_local;		/* this thread's reports go to damage_local_ix */
static __thread struct ci_index *damage_local_ix;

void index_damage_thread(int on, struct ci_index *ix)
{
	damage_local = on;
	damage_local_ix = on ? ix : NULL;
}

static void damage_log(void *arg, int code, const char *msg)
{
	struct ci_index *ix = damage_local ? damage_local_ix : damage_ix;

	(void)arg;
	(void)msg;
	if ((code & 0xff) != SQLITE_CORRUPT && (code & 0xff) != SQLITE_NOTADB)
		return;
	if (!ix)
		return;
	__atomic_store_n(&ix->damage_seen, code & 0xff, __ATOMIC_RELEASE);
	if (ix->note_damage)
		return;
	if (__atomic_exchange_n(&damage_dying, 1, __ATOMIC_ACQ_REL)) {
		/* another thread is dying of it: answer nothing more */
		for (;;)
			pause();
	}
	die("index '%s' is damaged (%s): run 'ci-index build'", ix->path, sqlite3_errstr(code));
}

__attribute__((constructor)) static void damage_setup(void)
{
	sqlite3_config(SQLITE_CONFIG_LOG, damage_log, NULL);
}

int index_damage_seen(struct ci_index *ix)
{
	return __atomic_load_n(&ix->damage_seen, __ATOMIC_ACQUIRE);
}

/* ---- opening ---- */

char *index_find(const char *start)
{
	const char *env = getenv("CI_INDEX");
	char *dir, *p, *top;
	struct stat st;

	if (env && *env)
		return xstrdup(env);
	dir = realpath(start, NULL);
	if (!dir)
		return NULL;
	for (;;) {
		p = xasprintf("%s/.ci-index/index.db", dir);
		if (stat(p, &st) == 0)
			break;
		free(p);
		p = xasprintf("%s/.git", dir);
		if (stat(p, &st) == 0) {	/* the work tree's top: its index, or none */
			free(p);
			p = xasprintf("%s/.ci-index/index.db", dir);
			break;
		}
		free(p);
		p = NULL;
		top = strrchr(dir, '/');
		if (!top || top == dir)
			break;
		*top = '\0';
	}
	free(dir);
	if (!p) {	/* no repository above: the directory itself, as the walker has it */
		dir = realpath(start, NULL);
		p = dir ? xasprintf("%s/.ci-index/index.db", dir) : NULL;
		free(dir);
	}
	return p;
}

char *index_own_path(const char *root)
{
	return xasprintf("%s/.ci-index/index.db", root);
}

char *index_default_path(const char *root)
{
	const char *env = getenv("CI_INDEX");

	if (env && *env)
		return xstrdup(env);
	return index_own_path(root);
}

static int db_error(sqlite3 *db, const char *what)
{
	return error("%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

sqlite3_stmt *index_kept(struct ci_index *ix, const char *sql)
{
	sqlite3_stmt *st;

	if (!ix->immutable)
		return NULL;
	for (size_t i = 0; i < ix->kept_nr; i++)
		if (!strcmp(ix->kept[i].sql, sql)) {
			sqlite3_reset(ix->kept[i].st);
			sqlite3_clear_bindings(ix->kept[i].st);
			return ix->kept[i].st;
		}
	if (sqlite3_prepare_v2(ix->db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	ALLOC_GROW(ix->kept, ix->kept_nr + 1, ix->kept_alloc);
	ix->kept[ix->kept_nr].sql = xstrdup(sql);
	ix->kept[ix->kept_nr++].st = st;
	return st;
}

/* Is st one of index_kept's (reset when done, never finalized)? */
static int is_kept(const struct ci_index *ix, sqlite3_stmt *st)
{
	for (size_t i = 0; i < ix->kept_nr; i++)
		if (ix->kept[i].st == st)
			return 1;
	return 0;
}

static const char *meta_lookup(struct ci_index *ix, const char *key);

void index_fingerprint_text(char out[17], uint64_t fp)
{
	snprintf(out, 17, "%016llx", (unsigned long long)fp);
}

int index_vectors_stale(sqlite3 *db, const char *model, uint64_t fp)
{
	sqlite3_stmt *st = NULL;
	char want[17];
	int stale = 0;

	if (!fp || !model)
		return 0;
	index_fingerprint_text(want, fp);
	if (sqlite3_prepare_v2(db, "SELECT (SELECT value FROM meta WHERE key = 'model'), "
			       "(SELECT value FROM meta WHERE key = 'model_fingerprint')", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		const char *im = (const char *)sqlite3_column_text(st, 0);
		const char *ifp = (const char *)sqlite3_column_text(st, 1);
		stale = im && !strcmp(im, model) && (!ifp || strcmp(ifp, want));
	}
	sqlite3_finalize(st);
	return stale;
}

const char *index_meta(struct ci_index *ix, const char *key)
{
	const char *v;

	if (!ix->immutable)
		return meta_lookup(ix, key);
	for (size_t i = 0; i < ix->kept_meta_nr; i++)
		if (!strcmp(ix->kept_meta[i].key, key))
			return ix->kept_meta[i].val;
	v = meta_lookup(ix, key);
	ALLOC_GROW(ix->kept_meta, ix->kept_meta_nr + 1, ix->kept_meta_alloc);
	ix->kept_meta[ix->kept_meta_nr].key = xstrdup(key);
	ix->kept_meta[ix->kept_meta_nr].val = v ? xstrdup(v) : NULL;
	return ix->kept_meta[ix->kept_meta_nr++].val;
}

static const char *meta_lookup(struct ci_index *ix, const char *key)
{
	sqlite3_stmt *st;

	free(ix->meta_val);
	ix->meta_val = NULL;
	if (sqlite3_prepare_v2(ix->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		ix->meta_val = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return ix->meta_val;
}

/* "file:<path>?immutable=1", the path's '%', '?' and '#' escaped (SQLite's URI filenames). */
static char *immutable_uri(const char *path)
{
	struct buf b = BUF_INIT;

	buf_addstr(&b, "file:");
	for (; *path; path++)
		if (*path == '%' || *path == '?' || *path == '#')
			buf_addf(&b, "%%%02X", (unsigned char)*path);
		else
			buf_add(&b, path, 1);
	buf_addstr(&b, "?immutable=1");
	return buf_detach(&b, NULL);
}

int index_open(struct ci_index **out, const char *path, int how)
{
	struct ci_index *ix;
	struct stat stb;
	const char *v;
	int readonly = how & INDEX_READONLY;
	int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;

	*out = NULL;
	if (stat(path, &stb) < 0) {
		if (errno == ENOENT)
			return 1;
		return error_errno("cannot open index '%s'", path);
	}
	ix = xcalloc(1, sizeof(*ix));
	ix->path = xstrdup(path);
	ix->note_damage = (how & INDEX_NOTE_DAMAGE) != 0;
	ix->immutable = (how & INDEX_IMMUTABLE) != 0;
	if (how & INDEX_IMMUTABLE) {
		char *uri = immutable_uri(path);
		int rc = sqlite3_open_v2(uri, &ix->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
					 NULL);

		free(uri);
		readonly = 1;
		if (rc != SQLITE_OK) {
			db_error(ix->db, path);
			goto fail;
		}
	} else if (sqlite3_open_v2(path, &ix->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		db_error(ix->db, path);
		goto fail;
	}
	sqlite3_busy_timeout(ix->db, 10000);
	/* a query is often a process of its own: map the file rather than read
	 * it page by page into an empty cache */
	sqlite3_exec(ix->db, "PRAGMA mmap_size=4294967296", NULL, NULL, NULL);
	if (!readonly) {
		ix->writer = 1;
		/*
		 * SQLite's default cache is 2 MB.  An update
		 * outgrew it and spilled to the log in the middle of its transaction,
		 * with a sync each time: a writer gets 64 MiB, taken only as used.
		 * (ci-grep, a reader, took 45 ms instead of 28 for an indexed search
		 * with it.)
		 */
		sqlite3_exec(ix->db, "PRAGMA cache_size=-65536", NULL, NULL, NULL);
		/* a writer's commit need not wait for the disk: in WAL mode that loses
		 * at worst the last transactions at a power cut, never the index's
		 * consistency, and an index can be rebuilt */
		sqlite3_exec(ix->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
		/* nor checkpoint at every close (4 fsyncs) */
		sqlite3_db_config(ix->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
		/* the next process to open it reads the whole log (recovery): a
		 * writer that stays open checkpoints past 1024 pages (8 MiB), and
		 * index_close empties the log.  An update's commit (one edited file
		 * is about 1 MiB of pages) stays under it: 64 pages made it
		 * checkpoint at its commit and again at its close, twice the syncs */
		sqlite3_exec(ix->db, "PRAGMA wal_autocheckpoint=1024; PRAGMA journal_size_limit=4194304",
			     NULL, NULL, NULL);
	}
	if (index_register_functions(ix->db) < 0)
		goto fail;
	v = index_meta(ix, "schema_version");
	if (!v) {
		/* not ours, or corrupt: say which */
		sqlite3_stmt *st;
		int rc = sqlite3_prepare_v2(ix->db, "PRAGMA quick_check", -1, &st, NULL);
		if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
		    !strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
			error("'%s' is not a ci index (no schema version): run 'ci-index build'", path);
		else
			error("index '%s' is corrupt (%s): run 'ci-index build'", path,
			      sqlite3_errmsg(ix->db));
		if (rc == SQLITE_OK)
			sqlite3_finalize(st);
		goto fail;
	}
	/*
	 * Another version is never read: version 3 changed how chunk text is
	 * stored, version 4 added the term_df and chunk_sizes tables and version
	 * 6 cut the trigram table's rows into segments, version 7 made it keep
	 * case, which only a rebuild can fill, version 8 added imports.type_only, version 9 a call's
	 * receiver (refs.recv) and a definition's flags (defs.flags) (`ci-index update` rebuilds, and a
	 * build keeps ci-couple's history from an index of version 2 or later).
	 */
	if (atoi(v) != CI_SCHEMA_VERSION) {
		error("index '%s' has schema version %s, this ci reads version %d: run 'ci-index build'",
		      path, v, CI_SCHEMA_VERSION);
		goto fail;
	}
	v = index_meta(ix, "root");
	ix->root = xstrdup(v ? v : "");
	damage_ix = ix;
	*out = ix;
	return 0;
fail:
	index_close(ix);
	return -1;
}

void index_close(struct ci_index *ix)
{
	if (!ix)
		return;
	if (damage_ix == ix)
		damage_ix = NULL;
	if (ix->db && ix->writer && sqlite3_get_autocommit(ix->db)) {
		/*
		 * Leave the log empty.  The next process to open the index finds no
		 * other one using it and rebuilds the log's index by reading the whole
		 * log; that recovery also forgets what earlier checkpoints copied, so
		 * the log was never restarted and grew by every update (59 MB on the
		 * 10,000-file repository of bench/index.sh, 50 ms an open).  A reader
		 * still in the log makes this give up at once (no busy wait), and the
		 * next writer tries again.
		 */
		sqlite3_busy_timeout(ix->db, 0);
		sqlite3_wal_checkpoint_v2(ix->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	}
	for (size_t i = 0; i < ix->kept_nr; i++) {
		sqlite3_finalize(ix->kept[i].st);
		free(ix->kept[i].sql);
	}
	if (ix->db)
		sqlite3_close(ix->db);
	free(ix->path);
	free(ix->root);
	free(ix->meta_val);
	for (size_t i = 0; i < ix->kept_meta_nr; i++) {
		free(ix->kept_meta[i].key);
		free(ix->kept_meta[i].val);
	}
	free(ix->kept_meta);
	free(ix->kept);
	free(ix);
}

sqlite3 *index_db(struct ci_index *ix)
{
	return ix->db;
}

int index_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error("index: %s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

const char *index_root(struct ci_index *ix)
{
	return ix->root;
}

/* ---- queries ---- */

static int each_file(struct ci_index *ix, sqlite3_stmt *st, index_file_fn fn, void *data)
{
	int rc, ret = 0, segs = sqlite3_column_count(st) > 7;
	unsigned char hits[INDEX_SEG_MAX / 8];

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct index_file f;

		f.path = (const char *)sqlite3_column_text(st, 0);
		f.blob = (const char *)sqlite3_column_text(st, 1);
		f.lang = (const char *)sqlite3_column_text(st, 2);
		f.size = sqlite3_column_int64(st, 3);
		f.mtime = sqlite3_column_int64(st, 4);
		f.exact = sqlite3_column_int(st, 5);
		f.segs = NULL;
		f.segs_len = 0;
		f.hits = NULL;
		if (segs && sqlite3_column_type(st, 7) != SQLITE_NULL) {
			/* "3,0,7": the segments the trigram query found */
			const char *p = (const char *)sqlite3_column_text(st, 7);
			memset(hits, 0, sizeof(hits));
			while (p && *p) {
				unsigned long i = strtoul(p, (char **)&p, 10);
				if (i < INDEX_SEG_MAX)
					hits[i / 8] |= (unsigned char)(1u << (i % 8));
				if (*p == ',')
					p++;
				else if (*p)
					break;
			}
			f.hits = hits;
			f.segs = sqlite3_column_blob(st, 6);
			f.segs_len = (size_t)sqlite3_column_bytes(st, 6);
		}
		if ((ret = fn(&f, data)))
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_error(ix->db, "index query failed");
	if (is_kept(ix, st))
		sqlite3_reset(st);
	else
		sqlite3_finalize(st);
	return ret;
}

int index_files(struct ci_index *ix, index_file_fn fn, void *data)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(ix->db,
			       "SELECT f.path, b.blob, b.lang, f.size, f.mtime, b.exact "
			       "FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path",
			       -1, &st, NULL) != SQLITE_OK)
		return db_error(ix->db, "index query failed");
	return each_file(ix, st, fn, data);
}

size_t index_varint(const unsigned char *p, size_t n, uint64_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (i == 8) {	/* the ninth byte has 8 bits */
			*v = (*v << 8) | p[i];
			return 9;
		}
		*v = (*v << 7) | (p[i] & 0x7f);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return n;
}

int index_file_stats(struct ci_index *ix, index_file_fn fn, void *data)
{
	sqlite3_stmt *st;

	/* files is without rowid: its own order, no join, no lookup per row */
	if (sqlite3_prepare_v2(ix->db, "SELECT path, NULL, NULL, size, mtime, 1 FROM files ORDER BY path",
			       -1, &st, NULL) != SQLITE_OK)
		return db_error(ix->db, "index query failed");
	return each_file(ix, st, fn, data);
}

_Static_assert(INDEX_SEG_BITS == 8, "the candidate query says 8 and 255");

int index_trigram_candidates(struct ci_index *ix, const char *match, index_file_fn fn, void *data)
{
	/*
	 * From the matching segments to their blobs (a list of segment numbers
	 * each), and from the blobs to their files, not through every file; the
	 * blobs whose trigrams cannot be trusted are candidates whole.
	 */
	static const char sql[] =
		"WITH m AS MATERIALIZED ("
		"  SELECT rowid >> 8 AS id, group_concat(rowid & 255) AS hits "
		"  FROM chunks_tri WHERE chunks_tri MATCH ?1 GROUP BY 1) "
		"SELECT f.path, b.blob, b.lang, f.size, f.mtime, b.exact,"
		"       CASE WHEN b.exact THEN b.segs END, CASE WHEN b.exact THEN c.hits END "
		"FROM (SELECT id, hits FROM m "
		"      UNION ALL SELECT id, NULL FROM blobs WHERE exact = 0 AND id NOT IN (SELECT id FROM m)) c "
		"JOIN files f ON f.blob_id = c.id JOIN blobs b ON b.id = c.id "
		"ORDER BY f.path";
	sqlite3_stmt *st = index_kept(ix, sql);

	if (!st && sqlite3_prepare_v2(ix->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(ix->db, "index query failed");
	sqlite3_bind_text(st, 1, match, -1, SQLITE_TRANSIENT);
	return each_file(ix, st, fn, data);
}

unsigned index_segments(const char *text, size_t len, int64_t size, uint32_t *ends)
{
	size_t min = INDEX_SEG_MIN, pos = 0;
	unsigned n = 0;
	const char *nl;

	if (len / (INDEX_SEG_MAX - 1) + 1 > min)
		min = len / (INDEX_SEG_MAX - 1) + 1;	/* at most INDEX_SEG_MAX segments */
	if (len >= UINT32_MAX || ((int64_t)len != size && (int64_t)len + 1 != size)) {
		/* offsets are 32 bits, or not the file's: one segment, read whole */
		ends[0] = (uint32_t)(len < UINT32_MAX ? len : UINT32_MAX);
		return 1;
	}
	do {
		if (len - pos <= min || !(nl = memchr(text + pos + min - 1, '\n', len - pos - min + 1)))
			pos = len;
		else
			pos = (size_t)(nl - text) + 1;
		ends[n++] = (uint32_t)pos;
	} while (pos < len && n < INDEX_SEG_MAX);
	if (pos < len)
		ends[n - 1] = (uint32_t)len;	/* cannot happen: min keeps n in bounds */
	return n;
}

static uint32_t get_u32le(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32le(unsigned char *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

void index_segs_encode(struct buf *out, const char *text, const uint32_t *ends, unsigned n)
{
	uint32_t line = 1;
	const char *p, *e;

	buf_reset(out);
	for (unsigned i = 0; i + 1 < n; i++) {
		unsigned char le[8];
		/* the lines of segment i */
		for (p = text + (i ? ends[i - 1] : 0), e = text + ends[i]; p < e && (p = memchr(p, '\n', (size_t)(e - p))); p++)
			line++;
		put_u32le(le, ends[i]);
		put_u32le(le + 4, line);
		buf_add(out, le, 8);
	}
}

int index_seg_at(const void *segs, size_t segs_len, unsigned i, struct index_seg *out)
{
	const unsigned char *p = segs;
	size_t n = segs ? segs_len / 8 + 1 : 1;

	if (i >= n)
		return -1;
	out->off = i ? get_u32le(p + 8 * (i - 1)) : 0;
	out->line = i ? (long)get_u32le(p + 8 * (i - 1) + 4) : 1;
	out->end = i + 1 < n ? get_u32le(p + 8 * i) : UINT64_MAX;
	return 0;
}

int index_seg_runs(const void *segs, size_t segs_len, const unsigned char *hits, struct index_seg *runs)
{
	struct index_seg sg;
	int nr = 0;

	for (unsigned i = 0; i < INDEX_SEG_MAX; i++) {
		if (!hits[i / 8]) {
			i |= 7;		/* none of this byte's eight */
			continue;
		}
		if (!(hits[i / 8] & (1u << (i % 8))))
			continue;
		if (index_seg_at(segs, segs_len, i, &sg) < 0)
			return -1;
		if (nr && runs[nr - 1].end == sg.off)
			runs[nr - 1].end = sg.end;
		else
			runs[nr++] = sg;
	}
	if (nr == 1 && runs[0].off == 0 && runs[0].end == UINT64_MAX)
		return 0;	/* the whole file */
	return nr;
}

int index_vec_decode(float *out, size_t dim, sqlite3_stmt *st, int col)
{
	const void *blob = sqlite3_column_blob(st, col + 2);
	size_t bytes = (size_t)sqlite3_column_bytes(st, col + 2);

	return vec_decode(out, dim, (const char *)sqlite3_column_text(st, col),
			  sqlite3_column_double(st, col + 1), blob, bytes);
}

sqlite3_int64 index_unmap(sqlite3 *db)
{
	sqlite3_stmt *st;
	sqlite3_int64 map = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA mmap_size", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		map = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (map > 0)
		sqlite3_exec(db, "PRAGMA mmap_size=0", NULL, NULL, NULL);
	return map;
}

void index_remap(sqlite3 *db, sqlite3_int64 map)
{
	char sql[64];

	if (map <= 0)
		return;
	snprintf(sql, sizeof(sql), "PRAGMA mmap_size=%lld", (long long)map);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
}
