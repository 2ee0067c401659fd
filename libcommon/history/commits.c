/*
 * commits.c: commit search (couple.h): BM25 over the messages of the history
 * read, fused with the cosine of message vectors when the index holds them.
 *
 * BM25 comes from SQLite's FTS5 over an in-memory table of the messages read
 * (from git or from the index alike; 80,000 messages of git.git take about a
 * second), with ci's code-aware tokenizer.
 *
 * When the index holds commit vectors, each commit also gets the cosine of its
 * message's vector with the query's, made relative: (cos - lo) / (hi - lo), lo
 * the mean cosine over all commits (USE-lite puts unrelated sentences around
 * 0.3-0.5, not 0) and hi the best.  The two signals are fused with equal
 * weights, BM25 divided by its best; a commit with no word of the query is a hit
 * when it is semantically close in both senses (SEM_MIN, SEM_RELATIVE), which is
 * what finds "fix crash when the configuration file is missing" for "crashes
 * without config".
 */
#include "core/common.h"
#include "history/couple.h"
#include "index/index.h"
#include "embed/vec.h"
#include "embed/embed.h"
#include "embed/embedtext.h"

#include <ctype.h>
#include <strings.h>
#include <sqlite3.h>

#define W_BM25 0.5		/* weight of BM25 / best BM25 */
#define W_SEMANTIC 0.5		/* weight of the relative cosine */
#define SEM_MIN 0.6		/* cosine a commit needs to be a hit on vectors alone */
#define SEM_RELATIVE 0.5	/* and relative cosine */

/* couple_tokenize(): see couple.h. */
size_t couple_tokenize(const char *s, char ***out, size_t *alloc)
{
	size_t nr = 0;
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		const unsigned char *st;
		char *w;
		size_t i, l;

		while (*p && !(isalnum(*p) || *p >= 0x80))
			p++;
		if (!*p)
			break;
		st = p;
		while (*p && (isalnum(*p) || *p >= 0x80))
			p++;
		l = (size_t)(p - st);
		w = xstrndup((const char *)st, l);
		for (i = 0; i < l; i++)
			if (w[i] >= 'A' && w[i] <= 'Z')
				w[i] = (char)(w[i] + 32);
		ALLOC_GROW(*out, nr + 1, *alloc);
		(*out)[nr++] = w;
	}
	return nr;
}

void couple_free_words(char **w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(w[i]);
}

/* Case-insensitive substring test (ASCII). */
static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (!hay)
		return 0;
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return !n;
}

static int cmp_hit(const void *x, const void *y, void *history)
{
	const struct commit_hit *p = x, *q = y;
	const struct history *sort_history = history;
	const struct hcommit *a = &sort_history->c[p->i], *b = &sort_history->c[q->i];

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return strcmp(a->sha, b->sha);
}

/*
 * BM25 of each commit's message against the query words q[0..qn) (any of
 * them), by SQLite's FTS5 over an in-memory table of the messages read, with
 * ci's code-aware tokenizer (as chunks_fts): bm25[i] for h->c[i], 0 when no
 * word matches.  0, or -1 after a message.
 */
static int messages_bm25(const struct history *h, char **q, size_t qn, double *bm25)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL, *sel = NULL;
	struct buf match = BUF_INIT;
	size_t i;
	int rc = -1;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK || index_register_tokenizer(db) < 0 ||
	    sqlite3_exec(db, "CREATE VIRTUAL TABLE m USING fts5(message, tokenize='ci_code', detail='column');"
			 "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO m(rowid, message) VALUES (?1, ?2)", -1, &ins, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < h->nr; i++) {
		sqlite3_bind_int64(ins, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(ins, 2, h->c[i].message ? h->c[i].message : "", -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(ins);
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	/* the words are letters and digits: quoted, they are FTS5 strings */
	for (i = 0; i < qn; i++)
		buf_addf(&match, "%s\"%s\"", i ? " OR " : "", q[i]);
	if (sqlite3_prepare_v2(db, "SELECT rowid, -bm25(m) FROM m WHERE m MATCH ?1", -1, &sel, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(sel, 1, match.buf, (int)match.len, SQLITE_STATIC);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(sel, 0);
		if (id >= 1 && (size_t)id <= h->nr)
			bm25[id - 1] = sqlite3_column_double(sel, 1);
	}
	if (rc != SQLITE_DONE)
		goto fail;
	rc = 0;
	goto done;
fail:
	rc = error("commit search: %s", db ? sqlite3_errmsg(db) : "out of memory");
done:
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	sqlite3_close(db);
	buf_release(&match);
	return rc;
}

/*
 * The semantic signal: the cosine between the query's vector (computed here,
 * with the model ci-embed and ci-index use) and each commit's stored vector
 * (table commit_vectors, from ci-embed's commit records or ci-index --embed).
 * cos[i] receives h->c[i]'s, or -2 when it has no vector.  Returns 1 when the
 * signal is available; else 0, with *why saying why not (malloc'd).
 */
static int commit_similarity(const struct couple_opts *o, const struct hrepo *r, const struct history *h,
			     const char *query, double *cos, char **why)
{
	struct ci_index *ix = hrepo_open_index(o, r);
	struct embed_model *m = NULL;
	struct hpaths map;
	sqlite3_stmt *st = NULL;
	char *model = NULL;
	float *qv = NULL, *v = NULL;
	size_t dim = 0, i, qlen = strlen(query);
	int ok = 0;

	memset(&map, 0, sizeof(map));
	for (i = 0; i < h->nr; i++)
		cos[i] = -2;
	*why = NULL;
	if (!ix) {
		*why = xstrdup("no index");
		return 0;
	}
	if (sqlite3_prepare_v2(index_db(ix), "SELECT model, dim FROM commit_vectors GROUP BY model, dim "
			       "ORDER BY count(*) DESC, 1 LIMIT 1", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		*why = xstrdup("no commit vectors in the index");
		goto done;
	}
	model = xstrdup((const char *)sqlite3_column_text(st, 0));
	dim = (size_t)sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	st = NULL;
	if (embed_model_open(&m, embed_model_dir_for(NULL, model)) < 0) {
		*why = xstrdup("the embedding model cannot be loaded");
		goto done;
	}
	if (strcmp(model, embed_model_name(m, 0)) || dim != embed_dim(m)) {
		*why = xasprintf("the commit vectors are of model '%s', not '%s'", model, embed_model_name(m, 0));
		goto done;
	}
	if (index_vectors_stale(index_db(ix), model, embed_model_fingerprint(m))) {
		*why = xasprintf("the commit vectors are of other weights of model '%s' (an earlier "
				 "version): 'ci-index --embed update' embeds them anew", model);
		goto done;
	}
	/* the query verbatim, as ci-embed --query embeds it */
	qv = xmalloc(embed_dim(m) * sizeof(*qv));
	embed_texts(m, 0, 0, 1, &query, &qlen, NULL, 1, qv);
	for (i = 0; i < h->nr; i++)
		hpaths_intern(&map, h->c[i].sha);
	v = xmalloc(embed_dim(m) * sizeof(*v));
	if (sqlite3_prepare_v2(index_db(ix), "SELECT sha, fmt, scale, vec FROM commit_vectors "
			       "WHERE model = ?1 AND dim = ?2", -1, &st, NULL) != SQLITE_OK) {
		*why = xasprintf("cannot read the commit vectors: %s", sqlite3_errmsg(index_db(ix)));
		goto done;
	}
	sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, embed_dim(m));
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t id = hpaths_find(&map, (const char *)sqlite3_column_text(st, 0));
		if (id == HPATH_NONE || index_vec_decode(v, embed_dim(m), st, 1) < 0)
			continue;
		cos[id] = vec_cosine(qv, v, embed_dim(m));
		ok = 1;
	}
	if (!ok)
		*why = xstrdup("no commit of this history has a vector");
done:
	sqlite3_finalize(st);
	hpaths_release(&map);
	free(model);
	free(qv);
	free(v);
	embed_model_close(m);
	index_close(ix);
	return ok;
}

/* Does commit c pass --author and --file (file_rel, current name file_id)? */
static int commit_wanted(const struct couple_opts *o, const struct history *h, const struct hcommit *c,
			 const char *file_rel, uint32_t file_id)
{
	if (o->author && !contains_ci(c->author, o->author) && !contains_ci(c->email, o->author))
		return 0;
	if (o->file) {
		size_t fl = strlen(file_rel);
		int match = 0;
		for (size_t k = 0; k < c->files_nr && !match; k++) {
			const char *p = h->paths.names[c->files[k].path];
			match = (file_id != HPATH_NONE && c->files[k].cur == file_id) ||
				!fl || (!strncmp(p, file_rel, fl) && (p[fl] == '/' || !p[fl]));
		}
		if (!match)
			return 0;
	}
	return 1;
}

/* The model's baseline lo (how close an unrelated message is, on average) and
 * the best cosine hi among the commits kept. */
static void cosine_range(const struct history *h, const double *cos, const char *kept, double *lo,
			 double *hi)
{
	double sum = 0;
	size_t nv = 0;

	for (size_t i = 0; i < h->nr; i++)
		if (cos[i] > -2) {
			sum += cos[i];
			nv++;
			if (kept[i] && cos[i] > *hi)
				*hi = cos[i];
		}
	*lo = nv ? sum / (double)nv : 0;
}

/* The hits: BM25 alone, or fused with the relative cosine. */
static void fuse(const struct history *h, const char *kept, double max_bm25, double lo, double hi,
		 struct commit_search *cs)
{
	for (size_t i = 0; i < h->nr; i++) {
		double sem = 0, sc;

		if (!kept[i])
			continue;
		if (cs->semantic && cs->cos[i] > -2 && hi > lo)
			sem = (cs->cos[i] - lo) / (hi - lo) > 0 ? (cs->cos[i] - lo) / (hi - lo) : 0;
		if (cs->bm25[i] <= 0 && !(sem >= SEM_RELATIVE && cs->cos[i] >= SEM_MIN))
			continue;
		if (cs->semantic)
			sc = W_BM25 * (max_bm25 > 0 ? cs->bm25[i] / max_bm25 : 0) + W_SEMANTIC * sem;
		else
			sc = cs->bm25[i];
		cs->hits[cs->nhits].i = i;
		cs->hits[cs->nhits++].score = hist_round4(sc);
	}
}

int couple_commit_search(const struct couple_opts *o, struct hrepo *r, const struct history *h,
			 const char *query, char **q, size_t qn, struct commit_search *cs)
{
	char *file_rel = NULL, *kept = NULL;
	uint32_t file_id = HPATH_NONE;
	double max_bm25 = 0, hi = -1, lo = 0;
	long limit = o->limit < 0 ? 10 : o->limit;
	int ret = EXIT_OK;

	memset(cs, 0, sizeof(*cs));
	if (o->file) {
		if (!(file_rel = hrepo_user_path(r, o->file)))
			return EXIT_IO;
		file_id = history_lookup(h, file_rel);
	}
	cs->bm25 = xcalloc(h->nr + 1, sizeof(*cs->bm25));
	cs->cos = xcalloc(h->nr + 1, sizeof(*cs->cos));
	kept = xcalloc(h->nr + 1, sizeof(*kept));
	cs->hits = xcalloc(h->nr + 1, sizeof(*cs->hits));
	/* BM25 over every commit read (document frequencies included) */
	if (messages_bm25(h, q, qn, cs->bm25) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	for (size_t i = 0; i < h->nr; i++) {
		if (!commit_wanted(o, h, &h->c[i], file_rel, file_id))
			continue;
		if (cs->bm25[i] > max_bm25)
			max_bm25 = cs->bm25[i];
		kept[i] = 1;
	}
	/* the semantic signal, when the index holds commit vectors */
	cs->semantic = commit_similarity(o, r, h, query, cs->cos, &cs->why);
	if (cs->semantic)
		cosine_range(h, cs->cos, kept, &lo, &hi);
	fuse(h, kept, max_bm25, lo, hi, cs);
	if (cs->nhits)
		qsort_r(cs->hits, cs->nhits, sizeof(*cs->hits), cmp_hit, (void *)h);
	if (limit > 0 && (size_t)limit < cs->nhits)
		cs->nhits = (size_t)limit;
done:
	free(file_rel);
	free(kept);
	return ret;
}

void commit_search_release(struct commit_search *cs)
{
	free(cs->hits);
	free(cs->bm25);
	free(cs->cos);
	free(cs->why);
	memset(cs, 0, sizeof(*cs));
}
