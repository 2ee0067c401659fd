/*
 * enrich.c: search enrichment and the preflight card (see enrich.h).  A search
 * answer is tens of hits: every list here is a small JSON array searched
 * linearly.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/enrich.h"
#include "context/memory.h"

#include <math.h>

static int is_test_path(const char *p)
{
	return ctx_contains_ci(p, "test") || ctx_contains_ci(p, "spec");
}

/* A hit's callers and tests (3 of each at most) among imp, its importers. */
static void hit_importers(json_t *r, json_t *imp)
{
	json_t *callers3 = json_array(), *tests3 = json_array(), *v;
	size_t j;

	json_object_set_new(r, "importedByCount", json_integer((json_int_t)json_array_size(imp)));
	json_array_foreach(imp, j, v) {
		json_t *to = is_test_path(json_string_value(v)) ? tests3 : callers3;

		if (json_array_size(to) < 3)
			json_array_append(to, v);
	}
	json_object_set_new(r, "hasTests", json_boolean(json_array_size(tests3) > 0));
	json_object_set_new(r, "callers", callers3);
	json_object_set_new(r, "tests", tests3);
}

/* A hit's trend (the first not Stable) and warning (the first Declining) of its file's patterns. */
static void hit_trend(const struct search_enrich *se, json_t *r, const char *path)
{
	const char *trend = NULL;
	char *warn = NULL;
	json_t *p;
	size_t j;

	json_array_foreach(json_object_get(se->pats, "patterns"), j, p) {
		if (!ctx_array_has(json_object_get(p, "files"), path))
			continue;
		if (!strcmp(ctx_str(p, "trend"), "Declining") && !warn)
			warn = xasprintf("uses %s, a declining %s pattern (%s of files)", ctx_str(p, "name"),
					 ctx_str(p, "category"), ctx_str(p, "frequency"));
		if (strcmp(ctx_str(p, "trend"), "Stable") && !trend)
			trend = ctx_str(p, "trend");
	}
	if (trend)
		json_object_set_new(r, "trend", json_string(trend));
	if (warn)
		json_object_set_new(r, "patternWarning", json_string(warn));
	free(warn);
}

/* The hits: count them, and give each first hit of a file its importers and trend. */
static void enrich_hits(struct search_enrich *se, json_t *recs)
{
	json_t *r, *v, *imp;
	size_t i, j;

	json_array_foreach(recs, i, r) {
		const char *path = ctx_str(r, "path");

		if (!strcmp(ctx_str(r, "_type"), "summary"))
			se->summary = r;
		if (strcmp(ctx_str(r, "_type"), "hit"))
			continue;
		if (!se->hits++)
			se->top = json_number_value(json_object_get(r, "score"));
		if (ctx_array_has(se->files, path))
			continue;
		json_array_append_new(se->files, json_string(path));
		imp = se->importers(se->cb_data, path);
		json_array_foreach(imp, j, v)
			if (!ctx_array_has(se->callers, json_string_value(v)))
				json_array_append(se->callers, v);
		hit_importers(r, imp);
		json_decref(imp);
		hit_trend(se, r, path);
	}
	json_array_foreach(se->callers, i, v)
		se->covered += ctx_array_has(se->files, json_string_value(v));
}

/* Related memories: those sharing a word with the query, freshest first as stored. */
static void related_memories(struct search_enrich *se)
{
	json_t *v;
	size_t i;

	json_array_foreach(se->mems, i, v) {
		memory_score(v, se->now);
		if (!memory_related(v, se->query))
			continue;
		se->stale |= json_is_true(json_object_get(v, "stale"));
		if (json_array_size(se->related) < 3) {
			json_t *m = json_pack("{s:s}", "_type", "related_memory");

			json_object_update(m, v);
			json_array_append_new(se->related, m);
		}
		if (!strcmp(ctx_str(v, "type"), "failure") && json_array_size(se->warnings) < 3)
			json_array_append_new(se->warnings, json_string(ctx_str(v, "memory")));
	}
}

/*
 * The search's quality: ci-rank's verdict, and as confidence its calibrated
 * probability that the top file is right (the summary's "confidence", from
 * the learned fusion), else the first hit's score.
 */
static json_t *search_quality(const struct search_enrich *se)
{
	const char *q = se->summary ? ctx_str(se->summary, "quality") : "low";
	const char *hint = se->summary ? json_string_value(json_object_get(se->summary, "hint")) : NULL;
	json_t *cj = se->summary ? json_object_get(se->summary, "confidence") : NULL;
	double conf = json_is_number(cj) ? json_number_value(cj) : se->top;
	json_t *sq = json_pack("{s:s,s:s,s:f,s:s,s:I}", "_type", "search_quality",
			       "status", !strcmp(q, "low") ? "low_confidence" : "ok",
			       "confidence", round(conf * 1000) / 1000, "quality", q,
			       "resultCount", (json_int_t)se->hits);

	if (hint)
		json_object_set_new(sq, "hint", json_string(hint));
	return sq;
}

/* The preflight card as it is built. */
struct preflight {
	json_t *doo, *avoid;	/* pattern descriptions to follow, and declining ones */
	json_t *golden;		/* the best example's golden_file record, or NULL */
	json_t *impact_files;	/* callers not among the results, 3 at most */
	json_t *help;		/* what would help, 4 at most */
	size_t ncallers, nconf;	/* callers, pattern conflicts */
	int low;		/* whether search quality is low */
	int ready;		/* whether the evidence suffices */
};

/* do: adopted patterns by adoption (di, state, testing before libraries); avoid: declining. */
static void preflight_patterns(const struct search_enrich *se, struct preflight *pf)
{
	json_t *p;
	size_t i;

	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(json_object_get(se->pats, "patterns"), i, p) {
			int lib = !strcmp(ctx_str(p, "category"), "libraries");
			char *s;

			if (lib != pass)
				continue;
			s = xasprintf("%s (%s %s)", ctx_str(p, "name"), ctx_str(p, "frequency"),
				      ctx_str(p, "category"));
			if (!strcmp(ctx_str(p, "trend"), "Declining")) {
				if (json_array_size(pf->avoid) < 3)
					json_array_append_new(pf->avoid, json_string(s));
			} else if (json_array_size(pf->doo) < 3) {
				json_array_append_new(pf->doo, json_string(s));
			}
			free(s);
		}
}

/* The best example: the first golden file that uses no declining pattern. */
static json_t *best_example(const struct search_enrich *se)
{
	json_t *v, *p;
	size_t i, j;

	json_array_foreach(json_object_get(se->pats, "goldenFiles"), i, v) {
		int declining = 0;

		json_array_foreach(json_object_get(se->pats, "patterns"), j, p)
			declining |= !strcmp(ctx_str(p, "trend"), "Declining") &&
				     ctx_array_has(json_object_get(p, "files"), ctx_str(v, "file"));
		if (!declining)
			return v;
	}
	return NULL;
}

static void add_help(json_t *help, const char *s)
{
	if (json_array_size(help) < 4)
		json_array_append_new(help, json_string(s));
}

/* What would help: up to 4 suggestions, the most telling first. */
static void preflight_help(const struct search_enrich *se, struct preflight *pf)
{
	json_t *v;
	size_t i;

	if (pf->low)
		json_array_append_new(pf->help, json_string("search again with an identifier, a file name or an "
							    "error message from the code (search quality is low)"));
	json_array_foreach(pf->impact_files, i, v) {
		char *s = xasprintf("read %s: it imports a file in the results", json_string_value(v));

		add_help(pf->help, s);
		free(s);
	}
	if (pf->nconf)
		add_help(pf->help, "call get_team_patterns: two patterns of a category are both above 20% (a conflict)");
	if (se->stale)
		add_help(pf->help, "check the stale memories related to this query "
			 "(get_memory) and remember what holds now");
	if (!json_array_size(se->related))
		add_help(pf->help, "call get_memory for the team's conventions, "
			 "decisions and past failures in this area");
	if (se->hits < 2)
		add_help(pf->help, "search with other words: one result is thin evidence");
}

/* The next action when not ready (malloc'd). */
static char *preflight_next(const struct search_enrich *se, const struct preflight *pf)
{
	if (pf->low)
		return xstrdup("search quality is low: search again with more specific words");
	if (pf->ncallers && se->covered * 2 < pf->ncallers)
		return xasprintf("%zu of %zu callers missing: search for %s", pf->ncallers - se->covered,
				 pf->ncallers, json_string_value(json_array_get(pf->impact_files, 0)));
	if (pf->nconf)
		return xstrdup("patterns conflict: call get_team_patterns to see which one to follow");
	if (se->stale)
		return xstrdup("related memories are stale: verify them with get_memory");
	if (se->hits < 2)
		return xstrdup("only one result: search with other words");
	return xstrdup("evidence is thin: call get_memory and get_team_patterns for this area");
}

/* The preflight record of an edit, refactor or migrate intent. */
static json_t *preflight_card(const struct search_enrich *se)
{
	struct preflight pf = {
		.doo = json_array(), .avoid = json_array(), .impact_files = json_array(), .help = json_array(),
		.ncallers = json_array_size(se->callers),
		.nconf = json_array_size(json_object_get(se->pats, "conflicts")),
		.low = !se->summary || !strcmp(ctx_str(se->summary, "quality"), "low"),
	};
	json_t *card = json_pack("{s:s,s:s}", "_type", "preflight", "intent", se->intent), *v;
	double code = se->top > 1 ? 100 : se->top * 100, align, support, score;
	char *cov, *next = NULL;
	size_t i;

	preflight_patterns(se, &pf);
	pf.golden = best_example(se);
	json_array_foreach(se->callers, i, v)
		if (!ctx_array_has(se->files, json_string_value(v)) && json_array_size(pf.impact_files) < 3)
			json_array_append(pf.impact_files, v);
	cov = xasprintf("%zu/%zu callers in results", se->covered, pf.ncallers);
	align = !json_array_size(pf.doo) ? 0 : pf.nconf ? 50 : 100;
	support = json_array_size(se->related) ? (se->stale ? 50 : 100) : 0;
	score = 0.45 * code + 0.30 * align + 0.25 * support;
	pf.ready = score >= 40 && !pf.low && !se->stale && !pf.nconf && se->hits >= 2 &&
		   (!pf.ncallers || se->covered * 2 >= pf.ncallers);
	preflight_help(se, &pf);
	if (!pf.ready)
		next = preflight_next(se, &pf);
	json_object_set_new(card, "ready", json_boolean(pf.ready));
	if (next)
		json_object_set_new(card, "nextAction", json_string(next));
	if (json_array_size(se->warnings))
		json_object_set(card, "warnings", se->warnings);
	json_object_set_new(card, "patterns", json_pack("{s:O,s:O}", "do", pf.doo, "avoid", pf.avoid));
	if (pf.golden)
		json_object_set(card, "bestExample", json_object_get(pf.golden, "file"));
	json_object_set_new(card, "impact", json_pack("{s:s,s:o}", "coverage", cov, "files", pf.impact_files));
	if (!pf.ready && json_array_size(pf.help))
		json_object_set(card, "whatWouldHelp", pf.help);
	free(cov);
	free(next);
	json_decref(pf.doo);
	json_decref(pf.avoid);
	json_decref(pf.help);
	return card;
}

void search_enrich_run(struct search_enrich *se, json_t *recs)
{
	json_t *v;
	size_t i;

	se->files = json_array();
	se->callers = json_array();
	se->related = json_array();
	se->warnings = json_array();
	enrich_hits(se, recs);
	related_memories(se);
	json_array_append_new(recs, search_quality(se));
	json_array_foreach(se->related, i, v)
		json_array_append(recs, v);
	if (se->intent && strcmp(se->intent, "explore"))
		json_array_append_new(recs, preflight_card(se));
	json_decref(se->warnings);
	json_decref(se->related);
	json_decref(se->callers);
	json_decref(se->files);
	se->files = se->callers = se->related = se->warnings = NULL;
}
