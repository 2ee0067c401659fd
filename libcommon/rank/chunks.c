/*
 * rank/chunks.c: the order of the chunks within each file: which function
 * of a file the answer shows first.
 *
 * The fusion orders files well, but within a file its order is poor for
 * naming the function that answers: the file-level signals (path,
 * structure, change) give every chunk of a file the same value, so their
 * ranks fall to the first chunks by id (the module preamble, the class
 * header), and a class header or a preamble that repeats the words of the
 * query outranks the method that does the work.  Here each chunk of a file
 * is scored by its own evidence only:
 *
 *   e = sum over keyword, symbol, semantic of w_s / (60 + rank_s)
 *       x HEADER_FACTOR for a class header or a module preamble, when the
 *         file has a candidate function or method
 *
 * and the file's chunks take its fused scores in that order: the file's
 * best score goes to its best chunk by e, the next to the next, so the
 * files' order (and every file-level number) is unchanged.  A query that
 * names a function is carried by the symbol signal: a further boost for it
 * did not help (below).
 *
 * With the learned fusion, when its model has a "chunk" member (model.h),
 * the chunks are ordered by that linear score of their features instead
 * (e among them), fitted by scripts/train-rank --chunks on the functions
 * that mined commits changed (share/rank/MODEL.md); --chunk-features
 * writes the features of the chunks of the best files.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <ctype.h>
#include <math.h>
#include "rank/model.h"

/*
 * Chosen on the 191 training queries of bench/eval/manifest.tsv (hybrid,
 * indexes without vectors), function Acc@1 / Acc@5 of bench/eval/stats.py
 * against the fused order: factor 1 +0.024 / +0.006, 0.75 +0.024 / +0.060,
 * 0.5 (and 0.25, 0.1) +0.065 / +0.060; a boost x2 for a chunk whose name
 * the query holds as an identifier lowered 0.5's to +0.054 / +0.048 (x1.3:
 * +0.054 / +0.054), and on the 102 validation queries +0.056 / +0.011
 * against +0.067 / 0 without it: left out.  share/rank/MODEL.md.
 */
#define HEADER_FACTOR 0.5

/* A function or method, or a later block of one (a long function is split). */
static int is_function(const struct rank_cand *x)
{
	if (!x->kind)
		return 0;
	if (!strcmp(x->kind, "function") || !strcmp(x->kind, "method"))
		return 1;
	return !strcmp(x->kind, "block") && x->name && *x->name && x->scope && *x->scope;
}

/* A class's header (its methods are chunks of their own) or code outside any definition. */
static int is_header(const struct rank_cand *x)
{
	if (!x->kind)
		return 0;
	if (!strcmp(x->kind, "class"))
		return 1;
	return !strcmp(x->kind, "block") && (!x->name || !*x->name);
}

static double chunk_evidence(const struct rank_query *rq, const struct rank_cand *x, int file_has_fn)
{
	static const int own[] = { SIG_KEYWORD, SIG_SYMBOL, SIG_SEMANTIC };
	double e = 0;

	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (rq->used[own[i]] && x->rank[own[i]])
			e += rq->w[own[i]] / (60.0 + x->rank[own[i]]);
	if (file_has_fn && is_header(x))
		e *= HEADER_FACTOR;
	return e;
}

/* Files whose chunks --chunk-features writes, at most (in scope, best first). */
#define CHUNK_FEAT_FILES 20

/* What the order of a query's chunks reads: the query's words, whole and in parts. */
struct chunk_ctx {
	struct rank_qwords words;	/* runs of letters, digits and _ */
	struct rank_qwords parts;	/* the same split at _ and at a lower-upper case change */
	struct rank_qwords calls;	/* the words called or read as an attribute: w( or .w */
	struct rank_qwords frames;	/* the functions of traceback frames: ", in w" ending a line */
	const struct rank_chunk_model *model;	/* or NULL: by e */
	FILE *dump;			/* --chunk-features, or NULL */
	int keep;			/* --chunk-order fused: write the features, order nothing */
	int file_rank;			/* the file's rank in scope, as written */
};

struct chunk_slot {
	struct rank_cand *c;
	double e;
};

/*
 * The end of the identifier part that starts at s[i] (not '_'), of s[0..n):
 * the next '_', the next lower-to-upper case change, or n.
 */
static size_t part_end(const char *s, size_t i, size_t n)
{
	size_t j = i + 1;

	while (j < n && s[j] != '_' && !(isupper((unsigned char)s[j]) && islower((unsigned char)s[j - 1])))
		j++;
	return j;
}

/* The query with _ and case changes made spaces: the parts of its identifiers. */
static char *query_parts(const char *q)
{
	size_t n = strlen(q), i = 0, k = 0;
	char *t;

	if (n > RANK_QWORDS_SCAN)
		n = RANK_QWORDS_SCAN;
	t = xmalloc(2 * n + 1);
	while (i < n) {
		size_t j;
		if (q[i] == '_') {
			t[k++] = ' ';
			i++;
			continue;
		}
		j = part_end(q, i, n);
		memcpy(t + k, q + i, j - i);
		k += j - i;
		if (j < n && q[j] != '_')
			t[k++] = ' ';
		i = j;
	}
	t[k] = '\0';
	return t;
}

static int is_word_byte(int c)
{
	return isalnum(c) || c == '_';
}

/*
 * The query's calls and attribute reads (a word before '(' or after '.') and
 * the functions its Python traceback frames are in, as texts of those words
 * separated by spaces (for rank_qwords_init).
 */
static void query_calls(const char *q, struct buf *calls, struct buf *frames)
{
	size_t n = strlen(q), i = 0;

	if (n > RANK_QWORDS_SCAN)
		n = RANK_QWORDS_SCAN;
	while (i < n) {
		size_t j = i;
		if (!is_word_byte((unsigned char)q[i])) {
			i++;
			continue;
		}
		while (j < n && is_word_byte((unsigned char)q[j]))
			j++;
		if ((j < n && q[j] == '(') || (i && q[i - 1] == '.')) {
			buf_add(calls, q + i, j - i);
			buf_addch(calls, ' ');
		}
		if (i >= 5 && !strncmp(q + i - 5, ", in ", 5) &&
		    (j == n || q[j] == '\n' || q[j] == '\r')) {
			buf_add(frames, q + i, j - i);
			buf_addch(frames, ' ');
		}
		i = j;
	}
}

/* Of the parts of name (3 bytes or more), the share the query has; 0 when it has none. */
static double name_parts(const struct chunk_ctx *cx, const char *name)
{
	int all = 0, had = 0;
	size_t i = 0, j, n;

	if (!name)
		return 0;
	n = strlen(name);
	for (; i < n; i = j) {
		if (name[i] == '_') {
			j = i + 1;
			continue;
		}
		j = part_end(name, i, n);
		if (j - i >= 3) {
			all++;
			had += rank_qwords_has(&cx->parts, name + i, j - i);
		}
	}
	return all ? (double)had / all : 0;
}

/* The query names s (a whole word of it), or the last dotted part of s. */
static int names(const struct chunk_ctx *cx, const char *s)
{
	const char *dot;

	if (!s || !*s)
		return 0;
	dot = strrchr(s, '.');
	if (dot)
		s = dot + 1;
	return rank_qwords_has(&cx->words, s, strlen(s));
}

/* 1 / the rank of v[i] by signal s among v[0 .. n), or 0 when it has no value in s. */
static double file_rr(const struct rank_query *rq, struct rank_cand **v, size_t n, size_t i, int s)
{
	int r = 1;

	if (!rq->used[s] || !v[i]->rank[s] || v[i]->sig[s] <= 0)
		return 0;
	for (size_t j = 0; j < n; j++)
		if (j != i && v[j]->rank[s] && (v[j]->sig[s] > v[i]->sig[s] ||
						(v[j]->sig[s] == v[i]->sig[s] && v[j]->rank[s] < v[i]->rank[s])))
			r++;
	return 1.0 / r;
}

/*
 * The features (enum rank_chunk_feat) of v[i], of the file's chunks v[0 .. n),
 * its evidence over the file's best evidence given.
 */
static void chunk_features(const struct rank_query *rq, const struct chunk_ctx *cx, struct rank_cand **v, size_t n,
			   size_t i, double evidence, int has_fn, long last, double *x)
{
	static const int sig[3] = { SIG_KEYWORD, SIG_SYMBOL, SIG_SEMANTIC };
	const struct rank_cand *c = v[i];
	const char *name = c->name && *c->name ? c->name : NULL;

	memset(x, 0, RC_NR * sizeof(*x));
	for (int k = 0; k < 3; k++) {
		int s = sig[k];
		if (!rq->used[s])
			continue;
		x[RC_KEYWORD + 2 * k] = c->sig[s];
		x[RC_KEYWORD_RR + 2 * k] = c->rank[s] ? 1.0 / c->rank[s] : 0;
		x[RC_KEYWORD_FILE_RR + k] = file_rr(rq, v, n, i, s);
	}
	x[RC_EVIDENCE] = evidence;
	x[RC_FUNCTION] = is_function(c);
	x[RC_HEADER] = is_header(c);
	x[RC_CLASS] = c->kind && !strcmp(c->kind, "class");
	x[RC_FILE_HAS_FN] = has_fn;
	x[RC_LINES] = log1p((double)(c->end - c->start + 1));
	x[RC_POSITION] = last > 1 ? (double)(c->start - 1) / (double)(last - 1) : 0;
	x[RC_Q_NAMES_CHUNK] = names(cx, name);
	x[RC_Q_NAMES_SCOPE] = names(cx, c->scope);
	x[RC_NAME_PARTS] = name_parts(cx, name);
	x[RC_FILE_CANDS] = log1p((double)n);
	x[RC_DUNDER] = name && !strncmp(name, "__", 2) && strlen(name) > 4 && !strcmp(name + strlen(name) - 2, "__");
	x[RC_PRIVATE] = name && name[0] == '_' && !x[RC_DUNDER];
	x[RC_INTENT_ISSUE] = rq->intent == INTENT_ISSUE;
	x[RC_Q_CALLS] = name && rank_qwords_has(&cx->calls, name, strlen(name));
	x[RC_Q_FRAME] = name && rank_qwords_has(&cx->frames, name, strlen(name));
	x[RC_COVERAGE] = rank_chunk_coverage(rq, c->chunk);
}

/* One chunk's features as a record of --chunk-features. */
static void write_chunk_features(struct chunk_ctx *cx, const struct rank_cand *c, const double *x)
{
	struct buf line = BUF_INIT;

	nd_begin(&line, "chunk_features");
	nd_str(&line, "path", c->path);
	nd_int(&line, "file_rank", cx->file_rank);
	nd_int(&line, "start_line", c->start);
	nd_int(&line, "end_line", c->end);
	nd_str(&line, "kind", c->kind);
	nd_str(&line, "name", c->name);
	nd_str(&line, "scope", c->scope);
	nd_key(&line, "x");
	buf_addch(&line, '{');
	for (int k = 0; k < RC_NR; k++)
		buf_addf(&line, "%s\"%s\":%.6g", k ? "," : "", rank_chunk_feat_name[k], x[k]);
	buf_addch(&line, '}');
	nd_end(&line);
	fwrite(line.buf, 1, line.len, cx->dump);
	buf_release(&line);
}

static int cmp_slot(const void *a, const void *b)
{
	const struct chunk_slot *x = a, *y = b;

	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	if (x->c->fused != y->c->fused)
		return x->c->fused > y->c->fused ? -1 : 1;
	return x->c->chunk < y->c->chunk ? -1 : x->c->chunk > y->c->chunk;
}

/*
 * The chunks v[0 .. n) of one file, best fused first: their scores given in
 * the order of e, or of the model's score; their features written when
 * dumping (dump: the file is one to write).
 */
static void order_file(const struct rank_query *rq, struct chunk_ctx *cx, struct rank_cand **v, size_t n,
		       struct chunk_slot *s, double *fused, double *bonus, int dump)
{
	double x[RC_NR], max_e = 0;
	int has_fn = 0;
	long last = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		has_fn |= is_function(v[i]);
		if (v[i]->end > last)
			last = v[i]->end;
	}
	for (i = 0; i < n; i++) {
		s[i].c = v[i];
		s[i].e = chunk_evidence(rq, v[i], has_fn);
		if (s[i].e > max_e)
			max_e = s[i].e;
	}
	if (cx->model || dump)
		for (i = 0; i < n; i++) {
			chunk_features(rq, cx, v, n, i, max_e > 0 ? s[i].e / max_e : 0, has_fn, last, x);
			if (dump)
				write_chunk_features(cx, v[i], x);
			if (cx->model)
				s[i].e = rank_chunk_model_score(cx->model, x);
		}
	if (cx->keep)
		return;
	for (i = 0; i < n; i++) {
		fused[i] = v[i]->fused;
		bonus[i] = v[i]->file_bonus;
	}
	qsort(s, n, sizeof(*s), cmp_slot);
	for (i = 0; i < n; i++) {
		s[i].c->fused = fused[i];
		s[i].c->file_bonus = bonus[i];
	}
}

/* Chunks of one file that --chunk-expand makes candidates, at most (a generated file can have thousands). */
#define CHUNK_EXPAND_MAX 400

static void set_fused(struct rank_cand *c, double s)
{
	c->fused = s;
}

/*
 * Every chunk of the first nf files in scope made a candidate: a function
 * that no signal found (its words are not the query's) can still be the one
 * a file's chunk member shows.  The new chunks take just under the file's
 * lowest fused score, and its best chunk's file-level values, so the files'
 * order and their numbers are unchanged; chunk ordering then spreads each
 * file's scores over all its chunks.  rq->cands is best first; the new
 * chunks, appended, are each below their file's best (the chunk order sorts
 * them all again).
 */
static void expand_files(struct rank_query *rq, int nf)
{
	struct { char *path; sqlite3_int64 blob; double low; size_t best; } *f;
	struct scored *v = NULL;
	size_t f_nr = 0, v_nr = 0, v_alloc = 0, old = rq->cands_nr, i, k;
	sqlite3_stmt *st;

	f = xcalloc((size_t)nf, sizeof(*f));
	for (i = 0; i < rq->cands_nr && f_nr < (size_t)nf; i++) {
		const struct rank_cand *c = &rq->cands[i];
		for (k = 0; k < f_nr && strcmp(f[k].path, c->path); k++)
			;
		if (k < f_nr || !rank_in_scope(rq, c))
			continue;
		f[f_nr].path = xstrdup(c->path);
		f[f_nr].blob = c->blob;
		f[f_nr].best = i;
		f[f_nr].low = c->fused;
		f_nr++;
	}
	for (i = 0; i < rq->cands_nr; i++)
		for (k = 0; k < f_nr; k++)
			if (!strcmp(f[k].path, rq->cands[i].path) && rq->cands[i].fused < f[k].low)
				f[k].low = rq->cands[i].fused;
	st = rank_stmt(rq->r, "SELECT id FROM chunks WHERE blob_id = ?1 ORDER BY start_line LIMIT ?2");
	for (k = 0; k < f_nr; k++) {
		int step;
		sqlite3_bind_int64(st, 1, f[k].blob);
		sqlite3_bind_int(st, 2, CHUNK_EXPAND_MAX);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			sqlite3_int64 id = sqlite3_column_int64(st, 0);
			if (rank_find_cand(rq, id))
				continue;
			ALLOC_GROW(v, v_nr + 1, v_alloc);
			v[v_nr].id = id;
			v[v_nr].s = f[k].low * 0.999;	/* below the file's chunks: ties order by line */
			v_nr++;
		}
		if (step != SQLITE_DONE)	/* a damaged index: not an answer with fewer chunks */
			die("index: %s", sqlite3_errmsg(rq->db));
		sqlite3_reset(st);
	}
	rank_stmt_done(rq->r, st);
	if (v_nr)
		rank_lookup_cands(rq, v, v_nr, set_fused);
	/*
	 * the file-level values of the file's best chunk (rq->cands may have
	 * moved): the path, structure and change signals give every chunk of a
	 * file the same value; the chunk order reads none of them
	 */
	for (i = old; i < rq->cands_nr; i++) {
		struct rank_cand *c = &rq->cands[i];
		for (k = 0; k < f_nr && strcmp(f[k].path, c->path); k++)
			;
		if (k == f_nr)
			continue;
		const struct rank_cand *b = &rq->cands[f[k].best];
		static const int file_level[] = { SIG_PATH, SIG_STRUCTURE, SIG_CHANGE };
		for (size_t j = 0; j < ARRAY_SIZE(file_level); j++) {
			c->sig[file_level[j]] = b->sig[file_level[j]];
			c->rank[file_level[j]] = b->rank[file_level[j]];
		}
		c->learned_p = b->learned_p;
		c->sem_file = b->sem_file;
		c->rrf_score = 0;
	}
	for (k = 0; k < f_nr; k++)
		free(f[k].path);
	free(f);
	free(v);
}

static int cmp_group_best(const void *a, const void *b)
{
	const size_t *x = a, *y = b;

	return x[1] < y[1] ? -1 : x[1] > y[1];
}

int rank_order_chunks(struct rank_query *rq)
{
	struct chunk_ctx cx;
	struct rank_cand **v;
	struct chunk_slot *s;
	double *fused, *bonus;
	size_t g, k, n = rq->cands_nr, *groups, groups_nr = 0;
	struct buf calls = BUF_INIT, frames = BUF_INIT;
	char *parts;
	int ret = 0, written = 0;

	memset(&cx, 0, sizeof(cx));
	if (rq->o->chunk_features && !(cx.dump = fopen(rq->o->chunk_features, "w")))
		return error_errno("cannot open '%s'", rq->o->chunk_features);
	if (!n)
		goto done;
	if (rq->o->chunk_order == RANK_CHUNKS_MODEL && rq->chunk_model)
		cx.model = rq->chunk_model;
	cx.keep = rq->o->chunk_order == RANK_CHUNKS_FUSED;
	if (cx.model || cx.dump) {	/* the query's words, for the features */
		rank_qwords_init(&cx.words, rq->text);
		parts = query_parts(rq->text);
		rank_qwords_init(&cx.parts, parts);
		free(parts);
		query_calls(rq->given, &calls, &frames);
		rank_qwords_init(&cx.calls, calls.buf);
		rank_qwords_init(&cx.frames, frames.buf);
		buf_release(&calls);
		buf_release(&frames);
	}
	if (rq->o->chunk_expand > 0 && (cx.model || cx.dump) && !cx.keep) {
		expand_files(rq, rq->o->chunk_expand);
		n = rq->cands_nr;
	}
	v = xmalloc(n * sizeof(*v));
	s = xmalloc(n * sizeof(*s));
	fused = xmalloc(n * sizeof(*fused));
	bonus = xmalloc(n * sizeof(*bonus));
	groups = xmalloc(2 * n * sizeof(*groups));
	for (g = 0; g < n; g++)
		v[g] = &rq->cands[g];
	qsort(v, n, sizeof(*v), rank_cmp_path_fused);
	/* the files (their first chunk in v, their best's place in cands), best first */
	for (g = 0; g < n; g = k) {
		for (k = g + 1; k < n && !strcmp(v[k]->path, v[g]->path); k++)
			;
		groups[2 * groups_nr] = g;
		groups[2 * groups_nr + 1] = (size_t)(v[g] - rq->cands);
		groups_nr++;
	}
	qsort(groups, groups_nr, 2 * sizeof(*groups), cmp_group_best);
	for (size_t i = 0; i < groups_nr; i++) {
		int dump = 0;
		g = groups[2 * i];
		for (k = g + 1; k < n && !strcmp(v[k]->path, v[g]->path); k++)
			;
		if (cx.dump && written < CHUNK_FEAT_FILES && rank_in_scope(rq, v[g])) {
			cx.file_rank = ++written;
			dump = 1;
		}
		if (k - g > 1 || dump)
			order_file(rq, &cx, v + g, k - g, s, fused, bonus, dump);
	}
	qsort(rq->cands, n, sizeof(*rq->cands), rank_cmp_fused);
	free(v);
	free(s);
	free(fused);
	free(bonus);
	free(groups);
	rank_qwords_release(&cx.words);
	rank_qwords_release(&cx.parts);
	rank_qwords_release(&cx.calls);
	rank_qwords_release(&cx.frames);
done:
	if (cx.dump && (ferror(cx.dump) | fclose(cx.dump)))
		ret = error_errno("cannot write '%s'", rq->o->chunk_features);
	rank_tr(rq, "chunks");
	return ret;
}
