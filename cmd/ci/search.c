/*
 * search.c: `ci search` (ci-rank's hits, enriched as codebase-context's search
 * is: context/enrich.h) and `ci grep-chunks` (ci-grep's matches by indexed
 * chunk: context/grepchunks.h).
 */
#include "ci.h"

#include <errno.h>
#include <time.h>

#include "index/index.h"
#include "context/enrich.h"
#include "context/grepchunks.h"

/* The files that import path (ci-refs deps --reverse), a new array of paths. */
static json_t *importers_of(void *cb_data, const char *path)
{
	char *av[] = { NULL, "--limit", "1000", "deps", "--reverse", "--", (char *)path, NULL };
	/* "imported by no file" is an answer, not an error */
	struct child_opts quiet = { .quiet = 1, .in_fd = -1 };
	json_t *recs, *out = json_array(), *r;
	size_t i;
	int rc;

	(void)cb_data;
	recs = records_of("ci-refs", av, &quiet, &rc);
	json_array_foreach(recs, i, r) {
		const char *p = ctx_str(r, "path");

		if (strcmp(ctx_str(r, "_type"), "dep") || !*p || !strcmp(p, path))
			continue;
		if (!ctx_array_has(out, p))
			json_array_append_new(out, json_string(p));
	}
	json_decref(recs);
	return out;
}

/* Add what codebase-context's search adds to ci-rank's records (context/enrich.h). */
static void search_enrich(json_t *recs, const char *query, const char *intent)
{
	json_t *pats = patterns_of("search", "all");
	struct memory_store ms;
	struct search_enrich se = {
		.query = query, .intent = intent, .pats = pats, .now = time(NULL),
		.importers = importers_of,
	};

	memory_open_or_fail(&ms);
	se.mems = ms.all;
	search_enrich_run(&se, recs);
	memory_store_release(&ms);
	json_decref(pats);
}

/* The query of `ci search`: --query, or the words given ("" when neither). */
static void search_query(struct flags *f, struct buf *q)
{
	if (f->args_nr && f->values[0])
		usage_fail("search: a query and --query: give one");
	if (f->args_nr) {
		/* ci search "where are chunks cut": the words are the query */
		for (int k = 0; k < f->args_nr; k++) {
			if (k)
				buf_addch(q, ' ');
			buf_addstr(q, f->args[k]);
		}
		f->values[0] = q->buf;
	}
	if (!f->values[0] || !*f->values[0])
		usage_fail("search: a query is required (ci search <query>, or --query <q>)");
}

int cmd_search(int argc, char **argv)
{
	static const char *const names[] = { "query", "intent", "limit", "lang", "framework", "layer", NULL };
	static const char *const bools[] = { "json", "snippets", NULL };
	static const char *const intents[] = { "explore", "edit", "refactor", "migrate" };
	struct flags f = { .sub = "search", .names = names, .bools = bools };
	struct buf q = BUF_INIT;
	char *av[12];
	int n = 1, rc;
	size_t i;
	json_t *recs;

	parse_flags(&f, argc, argv);
	search_query(&f, &q);
	if (f.values[1]) {
		for (i = 0; i < ARRAY_SIZE(intents); i++)
			if (!strcmp(f.values[1], intents[i]))
				break;
		if (i == ARRAY_SIZE(intents))
			usage_fail("search: --intent must be explore, edit, refactor or migrate, not '%s'",
			     f.values[1]);
	}
	if (f.values[4] || f.values[5])
		usage_fail("search: --%s is not supported (ci knows no frameworks or layers)",
		     f.values[4] ? "framework" : "layer");
	if (f.values[2]) {
		av[n++] = "--limit";
		av[n++] = (char *)check_limit("search", f.values[2], 200);
	}
	if (f.values[3]) {
		av[n++] = "--lang";
		av[n++] = (char *)f.values[3];
	}
	if (f.set[1]) {
		av[n++] = "--format";
		av[n++] = "full";
	}
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	recs = records_of("ci-rank", av, NULL, &rc);
	if (rc >= 2) {
		json_decref(recs);
		buf_release(&q);
		return rc;	/* ci-rank said why on stderr */
	}
	search_enrich(recs, f.values[0], f.values[1] ? f.values[1] : "explore");
	rc = emit_records(recs, want_json(f.set[0]), rc);
	buf_release(&q);
	return rc;
}

/* The grep_chunk records of ci-grep's matches, by the index of status. */
static json_t *chunks_of_matches(json_t *matches, json_t *status, const char *kind, long limit)
{
	char *path = status_index_path(status);
	struct ci_index *ix = NULL;
	struct grep_chunks gc;
	json_t *m, *out;
	size_t i;

	if (index_open(&ix, path, INDEX_READONLY) || grep_chunks_open(&gc, index_db(ix), kind, limit))
		fail("grep-chunks: cannot read the index '%s'", path);
	json_array_foreach(matches, i, m)
		grep_chunks_add(&gc, m);
	out = grep_chunks_finish(&gc);
	index_close(ix);
	free(path);
	return out;
}

/*
 * grep-chunks: ci-grep's exact matches gathered by the indexed chunk that holds
 * them (the smallest one; a line of a file the index has not chunked stands
 * alone), in ci-grep's order: bobbin's grep, found by the regex engine rather
 * than by full-text search.
 */
int cmd_grep_chunks(int argc, char **argv)
{
	static const char *const names[] = { "pattern", "type", "limit", NULL };
	static const char *const bools[] = { "json", "ignore-case", "regex", NULL };
	struct flags f = { .sub = "grep-chunks", .names = names, .bools = bools };
	char *av[10];
	int n = 1, rc;
	long limit;
	json_t *matches, *out, *status;
	const char *root;

	parse_options(&f, argc, argv, "pattern");
	if (!f.values[0] || !*f.values[0])
		usage_fail("grep-chunks: --pattern is required");
	limit = atol(check_limit("grep-chunks", f.values[2] ? f.values[2] : "10", 10000));
	av[n++] = "--json";
	av[n++] = "--hidden";	/* what the index holds: its chunks' files */
	if (f.set[1])
		av[n++] = "-i";
	if (!f.set[2])
		av[n++] = "-F";
	av[n++] = "-e";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	status = index_status("grep-chunks");
	/* the whole repository, its paths root-relative as the index has them */
	root = json_string_value(json_object_get(status, "root"));
	if (root && chdir(root) < 0)
		fail("grep-chunks: cannot enter '%s': %s", root, strerror(errno));
	matches = records_of("ci-grep", av, NULL, &rc);
	if (rc > 1) {
		json_decref(matches);
		json_decref(status);
		return rc;	/* ci-grep said why */
	}
	out = chunks_of_matches(matches, status, f.values[1], limit);
	json_decref(matches);
	json_decref(status);
	rc = json_array_size(out) ? 0 : 1;
	if (rc)
		fprintf(stderr, "%s: grep-chunks: no match for '%s'\n", progname, f.values[0]);
	return emit_records(out, want_json(f.set[0]), rc);
}
