/*
 * rank/hits.c: the answer of a ranked query as records: a hit per chunk shown
 * (best first, at most --per-file of a file, in scope), each with its signals
 * (and with --explain their ranks and contributions), then the summary: the
 * signals used, how sure the answer is and what to try when it is not.
 */
#include "core/common.h"
#include "rank/signal.h"

/* The signals' values of hit x: {"keyword":0.5,...} */
static void hit_signals(const struct rank_query *rq, struct buf *out, const struct rank_cand *x)
{
	int first = 1;

	nd_key(out, "signals");
	buf_addch(out, '{');
	for (int s = 0; s < SIG_MAX; s++) {
		if (!rq->used[s])
			continue;
		buf_addf(out, "%s\"%s\":", first ? "" : ",", rank_sig_name[s]);
		first = 0;
		/* the semantic value shown is the chunk's cosine, without its path's share */
		double v = s == SIG_SEMANTIC && rq->sem_path_w > 0 ? x->sem_cosine : x->sig[s];
		if (rank_round3(v) == 0)
			buf_addch(out, '0');
		else
			buf_addf(out, "%.3g", rank_round3(v));
	}
	buf_addch(out, '}');
}

/* --explain: each signal's rank, weight and contribution, the file's, the model's. */
static void hit_explain(const struct rank_query *rq, struct buf *out, const struct rank_cand *x)
{
	double max_fused = rq->max_fused;
	int first = 1;

	nd_key(out, "explain");
	buf_addch(out, '{');
	for (int s = 0; s < SIG_MAX; s++) {
		if (!rq->used[s])
			continue;
		buf_addf(out, "%s\"%s\":{\"rank\":", first ? "" : ",", rank_sig_name[s]);
		first = 0;
		if (x->rank[s])
			buf_addf(out, "%d", x->rank[s]);
		else
			buf_addstr(out, "null");
		buf_addf(out, ",\"weight\":%.3g,\"contribution\":%.3g}", rq->w[s],
			 x->rank[s] ? rank_round3(rq->w[s] / (60.0 + x->rank[s]) / max_fused) : 0.0);
	}
	buf_addch(out, '}');
	/* --semantic-path: the file path's cosine, w times which the semantic value holds */
	if (rq->used[SIG_SEMANTIC] && rq->sem_path_w > 0 && x->sem_cosine > 0) {
		nd_key(out, "semantic_path");
		buf_addf(out, "{\"cosine\":%.3g,\"weight\":%.3g}", rank_round3(x->sem_file), rq->sem_path_w);
	}
	/* what the file's other chunks added (the score is at most 1) */
	nd_key(out, "file_evidence");
	buf_addf(out, "{\"chunks\":%d,\"contribution\":%.3g}", x->file_chunks,
		 max_fused > 0 ? rank_round3(x->file_bonus / max_fused) : 0.0);
	/* the learned fusion: the contributions above made the score it replaced */
	if (rq->o->learned) {
		nd_key(out, "learned");
		buf_addf(out, "{\"probability\":%.3g,\"rrf_score\":%.3g}", rank_round3(x->learned_p),
			 rank_round3(x->rrf_score));
	}
}

static void write_hit(struct rank_query *rq, struct buf *out, const struct rank_cand *x, double score)
{
	nd_begin(out, "hit");
	nd_str(out, "path", x->path);
	nd_int(out, "start_line", x->start);
	nd_int(out, "end_line", x->end);
	nd_str(out, "kind", x->kind);
	nd_str(out, "name", x->name);
	nd_str(out, "scope", x->scope);
	nd_str(out, "lang", x->lang);
	nd_num(out, "score", rank_round3(score));
	hit_signals(rq, out, x);
	if (rq->o->explain)
		hit_explain(rq, out, x);
	if (rq->o->full) {
		char *t = rank_chunk_text(rq, x->chunk);
		nd_str(out, "text", t);
		free(t);
	}
	nd_end(out);
}

/*
 * The verdict of the learned fusion's calibrated confidence (the probability
 * that the top file is right): high from RANK_CONF_HIGH, low below
 * RANK_CONF_LOW.  On the validation queries (share/rank/MODEL.md) the top file
 * was right 87-88% of the time when high and 47-60% when medium; on the 47
 * development issues 53-63% and 0-22% (the calibration is fitted on commit
 * messages, which are easier: see the card).
 */
#define RANK_CONF_HIGH 0.7
#define RANK_CONF_LOW 0.4

/*
 * How sure: the learned fusion's calibrated confidence when there is one,
 * else strong when the best hit is ranked high by two signals or more; *hint
 * or NULL.
 */
static const char *answer_quality(const struct rank_query *rq, size_t shown, const char **hint)
{
	const struct rank_cand *top = NULL;
	const char *quality = "high";
	double score;
	int agree = 0;

	*hint = NULL;
	if (!shown) {
		*hint = rq->cands_nr ? (rq->o->min_score > 0 ? "no hit reaches --min-score: lower it" :
					"every candidate was filtered out: widen --path, --lang, --type or --scope")
				     : "no chunk matches these words: try identifiers from the code, ci-grep for literal text, or other words";
		return "low";
	}
	for (size_t i = 0; i < rq->cands_nr && !top; i++)
		if (rank_in_scope(rq, &rq->cands[i]))
			top = &rq->cands[i];
	for (int s = 0; s < SIG_MAX; s++)
		if (rq->used[s] && top->rank[s] && top->rank[s] <= 3)
			agree++;
	score = top->fused / rq->max_fused;
	if (rq->confidence >= 0) {
		/* the confidence as the summary writes it: 0.6996 is shown 0.7, and is high */
		double c = rank_round3(rq->confidence);

		quality = c >= RANK_CONF_HIGH ? "high" : c >= RANK_CONF_LOW ? "medium" : "low";
	} else if (score < 0.2 || (agree < 1))
		quality = "low";
	else if (agree < 2 && score < 0.5)
		quality = "medium";
	if (!strcmp(quality, "low"))
		*hint = "the top hits are weak or the signals disagree: name an identifier, a file or an "
			"error message from the code, or use ci-grep for exact text";
	return quality;
}

/* The query, at most 200 bytes of it, not ending inside a UTF-8 sequence. */
static void summary_query(struct buf *out, const char *q)
{
	char qs[201];
	size_t ql;

	snprintf(qs, sizeof(qs), "%s", q);
	ql = strlen(qs);
	if (ql == 200)	/* do not end inside a UTF-8 sequence */
		while (ql && ((unsigned char)qs[ql - 1] & 0xc0) == 0x80)
			qs[--ql] = '\0';
	if (ql == 200 || (ql && ((unsigned char)qs[ql - 1] & 0xc0) == 0xc0))
		if (ql && (unsigned char)qs[ql - 1] >= 0xc0)
			qs[--ql] = '\0';
	nd_str(out, "query", qs);
}

static void write_summary(struct rank_query *rq, struct buf *out, size_t shown)
{
	const char *hint, *quality = answer_quality(rq, shown, &hint);
	int first = 1;

	nd_begin(out, "summary");
	summary_query(out, rq->given);
	nd_str(out, "intent", rank_intent_name[rq->intent]);
	nd_str(out, "mode", rq->o->mode);
	nd_key(out, "signals");
	buf_addch(out, '[');
	for (int s = 0; s < SIG_MAX; s++)
		if (rq->used[s]) {
			buf_addf(out, "%s\"%s\"", first ? "" : ",", rank_sig_name[s]);
			first = 0;
		}
	buf_addch(out, ']');
	nd_str(out, "scope", rq->scope_tests && rq->scope_impl && rq->scope_docs ? "all" :
			     rq->scope_tests && !rq->scope_impl ? "test" : rq->scope_tests ? "impl+test" :
			     rq->scope_docs ? "impl+docs" : "impl");
	nd_int(out, "candidates", (long long)rq->cands_nr);
	if (rq->o->explain && rq->used[SIG_SEMANTIC]) {
		/* where the cosines came from: the snapshot beside the index, the table */
		nd_key(out, "vectors");
		buf_addf(out, "{\"snapshot\":%ld,\"table\":%ld}", rq->sem_snapshot_nr, rq->sem_table_nr);
	}
	nd_int(out, "count", (long long)shown);
	nd_str(out, "quality", quality);
	if (shown && rq->confidence >= 0)	/* the calibrated probability that the top file is right */
		nd_num(out, "confidence", rank_round3(rq->confidence));
	if (hint)
		nd_str(out, "hint", hint);
	nd_end(out);
}

int rank_write_hits(struct rank_query *rq, struct buf *out)
{
	const struct rank_opts *o = rq->o;
	size_t i, shown = 0;

	for (i = 0; i < rq->cands_nr && shown < (size_t)o->limit; i++) {
		struct rank_cand *x = &rq->cands[i];
		double score = rq->max_fused > 0 ? x->fused / rq->max_fused : 0;
		size_t same = 0;

		if (!rank_in_scope(rq, x))
			continue;
		if (score < o->min_score)
			break;
		for (size_t j = 0; j < i; j++)
			if (rq->cands[j].fused >= 0 && !strcmp(rq->cands[j].path, x->path))
				same++;
		if (same >= (size_t)o->per_file)
			continue;
		write_hit(rq, out, x, score);
		shown++;
	}
	write_summary(rq, out, shown);
	return shown ? EXIT_OK : EXIT_NOTHING;
}
