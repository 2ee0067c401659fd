/*
 * libcommon/fleet/prune.c: a shard's trigram set and a trigram query
 * evaluated against it (fleet/prune.h).
 */
#include "core/common.h"
#include "fleet/prune.h"
#include "index/index.h"

#include <sqlite3.h>
#include <string.h>

/* FNV-1a of the n bytes at s. */
static uint64_t tri_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One value of a query of one row and column: 1 when it is a non-zero integer or a non-empty text. */
static int sql_true(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int v = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_INTEGER ? sqlite3_column_int64(st, 0) != 0
		    : sqlite3_column_bytes(st, 0) > 0;
	sqlite3_finalize(st);
	return v;
}

struct fleet_trigrams *fleet_trigrams_of(struct ci_index *ix)
{
	sqlite3 *db = index_db(ix);
	struct fleet_trigrams *t;
	sqlite3_stmt *st;
	size_t alloc = 0, i, w;

	/* a walk recorded (else a search warns), every blob's trigrams exact (else it is read whatever the query) */
	if (sql_true(db, "SELECT value FROM meta WHERE key = 'walked_ns'") != 1 ||
	    sql_true(db, "SELECT EXISTS (SELECT 1 FROM blobs WHERE exact = 0)") != 0)
		return NULL;
	if (sqlite3_exec(db, "CREATE VIRTUAL TABLE temp.ci_fleet_tri USING fts5vocab(main, chunks_tri, 'row')",
			 NULL, NULL, NULL) != SQLITE_OK)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	if (sqlite3_prepare_v2(db, "SELECT term FROM temp.ci_fleet_tri", -1, &st, NULL) != SQLITE_OK) {
		free(t);
		t = NULL;
		goto done;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(t->h, t->nr + 1, alloc);
		t->h[t->nr++] = tri_hash((const char *)sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	}
	if (sqlite3_finalize(st) != SQLITE_OK) {
		fleet_trigrams_free(t);
		t = NULL;
		goto done;
	}
	qsort(t->h, t->nr, sizeof(*t->h), cmp_u64);
	for (i = w = 0; i < t->nr; i++)
		if (!w || t->h[w - 1] != t->h[i])
			t->h[w++] = t->h[i];
	t->nr = w;
done:
	sqlite3_exec(db, "DROP TABLE temp.ci_fleet_tri", NULL, NULL, NULL);
	return t;
}

void fleet_trigrams_free(struct fleet_trigrams *t)
{
	if (!t)
		return;
	free(t->h);
	free(t);
}

/* ---- the query ---- */

struct parse {
	const struct fleet_trigrams *t;
	const char *p;
	int bad;		/* not understood: every shard may match */
};

static void skip_space(struct parse *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
		ps->p++;
}

static int has(const struct fleet_trigrams *t, const char *s, size_t n)
{
	uint64_t h = tri_hash(s, n);

	return bsearch(&h, t->h, t->nr, sizeof(*t->h), cmp_u64) != NULL;
}

/* The length in bytes of the UTF-8 character at s (1 for a byte that starts none). */
static size_t char_len(const unsigned char *s)
{
	if (*s >= 0xf0 && s[1] && s[2] && s[3])
		return 4;
	if (*s >= 0xe0 && s[1] && s[2])
		return 3;
	if (*s >= 0xc0 && s[1])
		return 2;
	return 1;
}

/* A quoted string ('"' doubled inside): 1 when each of its trigrams is in the set. */
static int string_term(struct parse *ps)
{
	struct buf s = BUF_INIT;
	size_t at[4096], nc = 0, i;
	int ok = 1;

	ps->p++;	/* the opening quote */
	for (;;) {
		if (!*ps->p) {
			ps->bad = 1;
			break;
		}
		if (*ps->p == '"') {
			if (ps->p[1] != '"')
				break;
			ps->p++;
		}
		buf_addch(&s, *ps->p++);
	}
	if (ps->bad) {
		buf_release(&s);
		return 1;
	}
	ps->p++;	/* the closing quote */
	for (i = 0; i < s.len && nc < ARRAY_SIZE(at); i += char_len((const unsigned char *)s.buf + i))
		at[nc++] = i;
	if (nc >= ARRAY_SIZE(at) || nc < 3 || memchr(s.buf, '\0', s.len)) {
		ps->bad = 1;	/* too long to count, or too short to have a trigram */
		buf_release(&s);
		return 1;
	}
	for (i = 0; ok && i + 2 < nc; i++) {
		size_t end = i + 3 < nc ? at[i + 3] : s.len;

		ok = has(ps->t, s.buf + at[i], end - at[i]);
	}
	buf_release(&s);
	return ok;
}

static int or_expr(struct parse *ps, int depth);

static int primary(struct parse *ps, int depth)
{
	int v;

	skip_space(ps);
	if (*ps->p == '"')
		return string_term(ps);
	if (*ps->p == '(' && depth < 200) {
		ps->p++;
		v = or_expr(ps, depth + 1);
		skip_space(ps);
		if (*ps->p != ')')
			ps->bad = 1;
		else
			ps->p++;
		return v;
	}
	ps->bad = 1;
	return 1;
}

static int word(struct parse *ps, const char *w)
{
	size_t n = strlen(w);

	skip_space(ps);
	if (strncmp(ps->p, w, n) || (ps->p[n] != ' ' && ps->p[n] != '(' && ps->p[n] != '"'))
		return 0;
	ps->p += n;
	return 1;
}

/* AND binds tighter than OR (FTS5); adjacent operands are an AND. */
static int and_expr(struct parse *ps, int depth)
{
	int v = primary(ps, depth);

	while (!ps->bad) {
		skip_space(ps);
		if (word(ps, "AND") || *ps->p == '"' || *ps->p == '(') {
			int w = primary(ps, depth);

			v = v && w;
			continue;
		}
		break;
	}
	return v;
}

static int or_expr(struct parse *ps, int depth)
{
	int v = and_expr(ps, depth);

	while (!ps->bad && word(ps, "OR")) {
		int w = and_expr(ps, depth);

		v = v || w;
	}
	return v;
}

int fleet_trigrams_may_match(const struct fleet_trigrams *t, const char *q)
{
	struct parse ps = { .t = t, .p = q };
	int v;

	if (!t || !q)
		return 1;
	v = or_expr(&ps, 0);
	skip_space(&ps);
	if (ps.bad || *ps.p)
		return 1;
	return v;
}
