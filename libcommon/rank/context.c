/*
 * rank/context.c: context bundles: the best chunks, each followed by the
 * files that change with it (co-change coupling), within a budget of lines.
 */
#include "core/common.h"
#include "rank/signal.h"

static int coupled_chunk(struct rank_query *rq, const char *path, sqlite3_int64 *id, long *s, long *e, char **kind, char **name)
{
	sqlite3_stmt *st;
	size_t i;

	for (i = 0; i < rq->cands_nr; i++)
		if (!strcmp(rq->cands[i].path, path)) {
			*id = rq->cands[i].chunk;
			*s = rq->cands[i].start;
			*e = rq->cands[i].end;
			*kind = xstrdup(rq->cands[i].kind);
			*name = rq->cands[i].name ? xstrdup(rq->cands[i].name) : NULL;
			return 1;
		}
	st = rank_prep(rq->db, "SELECT c.id, c.start_line, c.end_line, c.kind, c.name FROM chunks c "
		  "JOIN files f ON f.blob_id = c.blob_id WHERE f.path = ?1 ORDER BY c.start_line LIMIT 1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return 0;
	}
	*id = sqlite3_column_int64(st, 0);
	*s = sqlite3_column_int64(st, 1);
	*e = sqlite3_column_int64(st, 2);
	*kind = xstrdup(rank_col(st, 3) ? rank_col(st, 3) : "");
	*name = rank_col(st, 4) ? xstrdup(rank_col(st, 4)) : NULL;
	sqlite3_finalize(st);
	return 1;
}

static void context_record(struct rank_query *rq, struct buf *out, const char *path, sqlite3_int64 id, long s, long e,
			   const char *kind, const char *name, const char *reason, const char *via,
			   double score)
{
	char *t = rank_chunk_text(rq, id), *lang = rank_chunk_lang(rq, id);

	nd_begin(out, "context_chunk");
	nd_str(out, "path", path);
	nd_int(out, "start_line", s);
	nd_int(out, "end_line", e);
	nd_str(out, "kind", kind);
	nd_str(out, "name", name);
	nd_str(out, "lang", lang);
	nd_str(out, "reason", reason);
	nd_str(out, "via", via);
	nd_num(out, "score", rank_round3(score));
	nd_str(out, "text", t);
	nd_end(out);
	free(t);
	free(lang);
}

/* A bundle being made: what it holds so far. */
struct bundle {
	struct rank_query *rq;
	struct buf *out;
	sqlite3_stmt *cpl;	/* a file's coupled files */
	char **seen;		/* the files in it */
	size_t seen_nr, seen_alloc;
	long lines_used, direct, coupled, skipped;
};

static int bundle_has(const struct bundle *b, const char *path)
{
	int have = 0;

	for (size_t j = 0; j < b->seen_nr; j++)
		have |= !strcmp(b->seen[j], path);
	return have;
}

static void bundle_add(struct bundle *b, const char *path)
{
	ALLOC_GROW(b->seen, b->seen_nr + 1, b->seen_alloc);
	b->seen[b->seen_nr++] = xstrdup(path);
}

/* The files that change with from, while the budget lasts. */
static void bundle_coupled(struct bundle *b, const char *from)
{
	const struct rank_opts *o = b->rq->o;
	sqlite3_stmt *cpl = b->cpl;

	sqlite3_bind_text(cpl, 1, from, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(cpl, 2, o->threshold);
	sqlite3_bind_int64(cpl, 3, o->max_coupled);
	while (sqlite3_step(cpl) == SQLITE_ROW && b->lines_used < o->budget) {
		const char *p = rank_col(cpl, 0);
		sqlite3_int64 id;
		long s2, e2;
		char *kind, *name;
		if (bundle_has(b, p) || !coupled_chunk(b->rq, p, &id, &s2, &e2, &kind, &name))
			continue;
		if (b->lines_used + (e2 - s2 + 1) > o->budget) {
			b->skipped++;
		} else {
			context_record(b->rq, b->out, p, id, s2, e2, kind, name, "coupled", from,
				       sqlite3_column_double(cpl, 1));
			b->lines_used += e2 - s2 + 1;
			b->coupled++;
			bundle_add(b, p);
		}
		free(kind);
		free(name);
	}
	sqlite3_reset(cpl);
}

/* The files that change with the last one added, breadth first, --depth steps. */
static void bundle_follow(struct bundle *b)
{
	const struct rank_opts *o = b->rq->o;
	size_t level_start = b->seen_nr - 1, level_end = b->seen_nr;

	for (long d = 0; d < o->depth && b->lines_used < o->budget; d++) {
		for (size_t k = level_start; k < level_end && b->lines_used < o->budget; k++) {
			char *from = xstrdup(b->seen[k]);
			bundle_coupled(b, from);
			free(from);
		}
		level_start = level_end;
		level_end = b->seen_nr;
	}
}

static void bundle_summary(const struct bundle *b)
{
	struct buf *out = b->out;

	nd_begin(out, "context_summary");
	nd_int(out, "budget", b->rq->o->budget);
	nd_int(out, "used_lines", b->lines_used);
	nd_int(out, "direct", b->direct);
	nd_int(out, "coupled", b->coupled);
	nd_int(out, "skipped_for_budget", b->skipped);
	nd_int(out, "files", (long long)b->seen_nr);
	nd_str(out, "intent", rank_intent_name[b->rq->intent]);
	nd_str(out, "quality", b->direct ? (b->coupled || b->direct > 1 ? "high" : "medium") : "low");
	if (!b->direct)
		nd_str(out, "hint", "nothing matched within the budget: raise --budget or try other words");
	nd_end(out);
}

/*
 * The context bundle (bobbin's context): the best chunks in rank order, each
 * followed by the files that change with it (co-change coupling from the index,
 * --depth steps, --max-coupled per file, scores >= --threshold), until --budget
 * lines are used.  A chunk that does not fit is skipped and counted.
 */
int rank_context_bundle(struct rank_query *rq, struct buf *out)
{
	const struct rank_opts *o = rq->o;
	double max_fused = rq->max_fused;
	struct bundle b;
	size_t i;

	memset(&b, 0, sizeof(b));
	b.rq = rq;
	b.out = out;
	b.cpl = rank_prep(rq->db, "SELECT CASE WHEN a = ?1 THEN b ELSE a END, score FROM coupling "
			  "WHERE (a = ?1 OR b = ?1) AND score >= ?2 ORDER BY score DESC, 1 LIMIT ?3");
	for (i = 0; i < rq->cands_nr && b.lines_used < o->budget; i++) {
		struct rank_cand *x = &rq->cands[i];
		long lines = x->end - x->start + 1;

		if (!rank_in_scope(rq, x))
			continue;
		if (bundle_has(&b, x->path) || b.direct >= o->limit)
			continue;
		if (b.lines_used + lines > o->budget) {
			b.skipped++;
			continue;
		}
		context_record(rq, out, x->path, x->chunk, x->start, x->end, x->kind, x->name, "hit", NULL,
			       max_fused > 0 ? x->fused / max_fused : 0);
		b.lines_used += lines;
		b.direct++;
		bundle_add(&b, x->path);
		bundle_follow(&b);
	}
	sqlite3_finalize(b.cpl);
	bundle_summary(&b);
	for (i = 0; i < b.seen_nr; i++)
		free(b.seen[i]);
	free(b.seen);
	return b.direct ? EXIT_OK : EXIT_NOTHING;
}
