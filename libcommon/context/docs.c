/*
 * docs.c: records ranked for a query: the doc set, FTS5 keyword ranks, the
 * combined score, the sorts, and the beads of .beads/issues.jsonl (see
 * docs.h).  Hundreds to thousands of records: an in-memory FTS5 table is
 * built per query.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/docs.h"

#include <ctype.h>
#include <math.h>
#include <strings.h>
#include <sqlite3.h>

struct doc *doc_set_add(struct doc_set *ds)
{
	struct doc *x;

	ALLOC_GROW(ds->d, ds->n + 1, ds->alloc);
	x = &ds->d[ds->n++];
	memset(x, 0, sizeof(*x));
	return x;
}

void doc_set_release(struct doc_set *ds)
{
	for (size_t i = 0; i < ds->n; i++) {
		free(ds->d[i].text);
		json_decref(ds->d[i].rec);
	}
	free(ds->d);
	ds->d = NULL;
	ds->n = ds->alloc = 0;
}

char *docs_fts_query(const char *q)
{
	struct buf b = BUF_INIT;
	const unsigned char *p = (const unsigned char *)q;

	while (*p) {
		const unsigned char *w;
		while (*p && !isalnum(*p) && *p < 0x80)
			p++;
		w = p;
		while (*p && (isalnum(*p) || *p >= 0x80))
			p++;
		if (p > w)
			buf_addf(&b, "%s\"%.*s\"", b.len ? " OR " : "", (int)(p - w), (const char *)w);
	}
	if (!b.len) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

int docs_has_words(const char *q)
{
	char *m = q ? docs_fts_query(q) : NULL;
	int r = m != NULL;

	free(m);
	return r;
}

/* Fill the FTS5 table d of db with the texts, then read the bm25 of match into score. */
static int fts_scores(sqlite3 *db, const struct doc_set *ds, const char *sub, const char *match, double *score)
{
	sqlite3_stmt *st = NULL;
	size_t i;

	if (sqlite3_prepare_v2(db, "INSERT INTO d(rowid, t) VALUES (?1, ?2)", -1, &st, NULL) != SQLITE_OK)
		return error("%s: %s", sub, sqlite3_errmsg(db));
	for (i = 0; i < ds->n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(st, 2, ds->d[i].text, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return error("%s: %s", sub, sqlite3_errmsg(db));
		}
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT rowid, -bm25(d) FROM d WHERE d MATCH ?1", -1, &st, NULL) != SQLITE_OK)
		return error("%s: %s", sub, sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		i = (size_t)sqlite3_column_int64(st, 0) - 1;
		score[i] = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

int docs_rank_keyword(const struct doc_set *ds, const char *sub, const char *query, double *score)
{
	sqlite3 *db = NULL;
	char *match = docs_fts_query(query);
	double best = 0;
	size_t i;
	int ret = 0;

	for (i = 0; i < ds->n; i++)
		score[i] = -1;
	if (!match)
		return 0;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, "CREATE VIRTUAL TABLE d USING fts5(t, tokenize = 'porter unicode61')", NULL, NULL,
			 NULL) != SQLITE_OK)
		ret = error("%s: cannot create the search table: %s", sub, sqlite3_errmsg(db));
	else
		ret = fts_scores(db, ds, sub, match, score);
	sqlite3_close(db);
	free(match);
	if (ret)
		return ret;
	for (i = 0; i < ds->n; i++)
		if (score[i] > best)
			best = score[i];
	/* a match is a match, even on words every record has (bm25 gives them nothing) */
	for (i = 0; i < ds->n; i++)
		if (score[i] >= 0)
			score[i] = best > 0 && score[i] / best > 0.001 ? score[i] / best : 0.001;
	return 0;
}

void docs_score(struct doc_set *ds, const char *mode, const double *kw, const float *vecs,
		const float *qv, size_t dim)
{
	struct doc *d = ds->d;
	size_t n = ds->n, i, k;

	for (i = 0; i < n; i++) {
		double sem = 0;

		if (dim) {
			double dot = 0, nq = 0, nv = 0;
			for (k = 0; k < dim; k++) {
				dot += (double)qv[k] * vecs[i * dim + k];
				nq += (double)qv[k] * qv[k];
				nv += (double)vecs[i * dim + k] * vecs[i * dim + k];
			}
			sem = nq > 0 && nv > 0 ? dot / sqrt(nq * nv) : 0;
			if (sem < 0)
				sem = 0;
		}
		if (!strcmp(mode, "keyword"))
			d[i].score = kw[i];
		else if (!strcmp(mode, "semantic"))
			d[i].score = sem;
		else if (!strcmp(mode, "hybrid"))
			/* the mean of the two, so that a record only one finds scores at most half */
			d[i].score = 0.5 * (kw[i] > 0 ? kw[i] : 0) + 0.5 * sem;
		d[i].score = d[i].score < 0 ? -1 : floor(d[i].score * 1000 + 0.5) / 1000;
	}
}

static const char *doc_path(const struct doc *x)
{
	const char *p = json_string_value(json_object_get(x->rec, "path"));

	return p ? p : "";
}

static int cmp_doc_score(const void *a, const void *b)
{
	const struct doc *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return strcmp(doc_path(x), doc_path(y));
}

static int cmp_doc_recent(const void *a, const void *b)
{
	const struct doc *x = a, *y = b;
	int c = strcmp(y->date, x->date);

	return c ? c : strcmp(doc_path(x), doc_path(y));
}

void docs_sort_score(struct doc_set *ds)
{
	qsort(ds->d, ds->n, sizeof(*ds->d), cmp_doc_score);
}

void docs_sort_recent(struct doc_set *ds)
{
	qsort(ds->d, ds->n, sizeof(*ds->d), cmp_doc_recent);
}

/* ---- beads ---- */

/* A string field of a bead as text ("" when absent; numbers and arrays as JSON). */
static char *field_text(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v || json_is_null(v))
		return xstrdup("");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Whether bead b passes the filters. */
static int bead_wanted(json_t *b, const struct beads_filter *bf)
{
	json_t *v = json_object_get(b, "priority");
	const char *status = json_string_value(json_object_get(b, "status"));
	const char *assignee = json_string_value(json_object_get(b, "assignee"));

	if (bf->priority && (!json_is_integer(v) || json_integer_value(v) != bf->priority))
		return 0;
	if (bf->status && strcasecmp(status ? status : "", bf->status))
		return 0;
	if (bf->assignee && strcasecmp(assignee ? assignee : "", bf->assignee))
		return 0;
	return 1;
}

/* Bead b, line lineno of path, as a record of ds. */
static void add_bead(struct doc_set *ds, json_t *b, const char *path, size_t lineno)
{
	static const char *const fields[] = { "title", "description", "design", "acceptance_criteria", "notes",
					      "labels", "issue_type" };
	json_t *v = json_object_get(b, "priority");
	struct buf t = BUF_INIT;
	char *desc, *snip, *title, *status, *assignee;
	struct doc *d;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		char *x = field_text(b, fields[i]);
		buf_addf(&t, "%s\n", x);
		free(x);
	}
	d = doc_set_add(ds);
	d->text = buf_detach(&t, NULL);
	desc = field_text(b, "description");
	snip = ctx_cut_text(desc, 200);
	title = field_text(b, "title");
	status = field_text(b, "status");
	assignee = field_text(b, "assignee");
	/* path: for ties; not written */
	d->rec = json_pack("{s:s, s:O, s:s, s:o, s:s, s:s, s:f, s:s, s:o}", "_type", "bead",
			   "bead_id", json_object_get(b, "id"), "title", title,
			   "priority", json_is_integer(v) ? json_sprintf("P%lld", (long long)json_integer_value(v)) :
			   json_string(""), "status", status, "assignee", assignee,
			   "relevance_score", 0.0, "snippet", snip,
			   "path", json_sprintf("%s:%zu", path, lineno));
	free(title);
	free(status);
	free(assignee);
	free(desc);
	free(snip);
}

void beads_read(struct doc_set *ds, FILE *fp, const char *path, const struct beads_filter *bf)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, fp)) >= 0) {
		json_t *b;

		lineno++;
		if (len <= 1)
			continue;
		b = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_object(b) || !json_is_string(json_object_get(b, "id")))
			fprintf(stderr, "%s: %s:%zu: not an issue record, left out\n", progname, path, lineno);
		else if (bead_wanted(b, bf))
			add_bead(ds, b, path, lineno);
		json_decref(b);
	}
	free(line);
}
