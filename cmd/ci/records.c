/*
 * records.c: `ci beads search` and `ci archive search|recent` (bobbin's
 * search_beads, archive_search, archive_recent): records read and ranked by
 * context/docs.h, with vectors from ci-embed for semantic and hybrid modes.
 */
#include "ci.h"

#include "embed/vec.h"
#include "context/docs.h"

/* The texts of ds as chunk records, ci-embed's input, into f (rewound). */
static void write_embed_input(FILE *f, const struct doc_set *ds)
{
	for (size_t i = 0; i < ds->n; i++) {
		json_t *c = json_pack("{s:s, s:s, s:i, s:i, s:s}", "_type", "chunk", "path", "record",
				      "start_line", 1, "end_line", 1, "text", ds->d[i].text);
		char *line = json_dumps(c, JSON_COMPACT);
		fprintf(f, "%s\n", line ? line : "{}");
		free(line);
		json_decref(c);
	}
	fflush(f);
	rewind(f);
}

/* The query's vector (ci-embed --query) into *qv, its dimension; 0 when it cannot. */
static size_t embed_query(const char *query, float **qv)
{
	char *qav[] = { NULL, "--query", (char *)query, NULL };
	struct child_opts quiet = { .quiet = 1, .in_fd = -1 };
	size_t dim = 0;
	int rc;
	json_t *q = records_of("ci-embed", qav, &quiet, &rc), *r = json_array_get(q, 0);

	if (rc || !r || vec_from_base64(qv, &dim, json_string_value(json_object_get(r, "vec")),
					json_string_length(json_object_get(r, "vec"))) != 0)
		dim = 0;
	json_decref(q);
	return dim;
}

/* The vectors of the texts (n of them) and of the query, by ci-embed; 0 when it cannot. */
static size_t embed_texts(const char *query, const struct doc_set *ds, float **vecs, float **qv)
{
	char tmpl[] = "/tmp/ci-embed-XXXXXX";
	char *av[] = { NULL, "--fields", "text", "--no-progress", NULL };
	int fd = mkstemp(tmpl), rc;
	struct child_opts co = { .quiet = 1, .in_fd = -1 };
	json_t *recs, *r;
	size_t dim = 0, i;
	FILE *f;

	*vecs = *qv = NULL;
	if (fd < 0)
		return 0;
	unlink(tmpl);
	f = fdopen(fd, "w+");
	if (!f) {
		close(fd);
		return 0;
	}
	write_embed_input(f, ds);
	co.in_fd = fileno(f);
	recs = records_of("ci-embed", av, &co, &rc);
	fclose(f);
	if (!rc && json_array_size(recs) == ds->n && (dim = embed_query(query, qv)) != 0) {
		*vecs = xcalloc(ds->n * dim, sizeof(float));
		json_array_foreach(recs, i, r) {
			float *v = NULL;
			size_t vd = 0;
			json_t *b = json_object_get(r, "vec");
			if (vec_from_base64(&v, &vd, json_string_value(b), json_string_length(b)) == 0 && vd == dim)
				memcpy(*vecs + i * dim, v, dim * sizeof(float));
			free(v);
		}
	}
	json_decref(recs);
	if (!dim) {
		free(*qv);
		*qv = NULL;
	}
	return dim;
}

/*
 * Score the records for the query: keyword (FTS5 bm25), semantic (cosine of
 * ci-embed vectors) or hybrid (their mean).  Semantic search that cannot be
 * done fails; hybrid then says so on stderr and ranks by keyword.
 */
static void rank_docs(const char *sub, const char *query, const char *mode, struct doc_set *ds)
{
	double *kw = xcalloc(ds->n + 1, sizeof(double));
	float *vecs = NULL, *qv = NULL;
	size_t dim = 0;

	if (strcmp(mode, "semantic") && docs_rank_keyword(ds, sub, query, kw))
		fail_said();
	if (strcmp(mode, "keyword") && ds->n) {
		dim = embed_texts(query, ds, &vecs, &qv);
		if (!dim && !strcmp(mode, "semantic"))
			fail("%s: semantic search is not available: ci-embed found no model (scripts/setup fetches it; "
			     "or use mode keyword)", sub);
		if (!dim) {
			fprintf(stderr, "%s: %s: no embedding model: ranked by keywords only\n", progname, sub);
			mode = "keyword";
		}
	}
	docs_score(ds, mode, kw, vecs, qv, dim);
	free(kw);
	free(vecs);
	free(qv);
}

static const char *mode_arg(const char *sub, const char *m)
{
	if (!m)
		return "hybrid";
	if (strcmp(m, "hybrid") && strcmp(m, "keyword") && strcmp(m, "semantic"))
		usage_fail("%s: --mode must be hybrid, keyword or semantic, not '%s'", sub, m);
	return m;
}

int cmd_beads(int argc, char **argv)
{
	static const char *const names[] = { "query", "priority", "status", "assignee", "limit", "mode", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "beads search", .names = names, .bools = bools };
	struct doc_set ds = { 0 };
	struct beads_filter bf = { 0 };
	size_t i, shown = 0;
	long limit;
	const char *mode;
	json_t *out = json_array();
	FILE *fp;

	if (!argc || strcmp(argv[0], "search"))
		usage_fail("beads: expected search");
	parse_options(&f, argc - 1, argv + 1, "query");
	if (!given(f.values[0]) || !docs_has_words(f.values[0]))
		usage_fail("beads search: --query needs words to search for");
	if (f.values[1]) {
		char *end;
		bf.priority = strtol(f.values[1], &end, 10);
		if (*end || end == f.values[1] || bf.priority < 1 || bf.priority > 4)
			usage_fail("beads search: --priority must be 1 to 4, not '%s'", f.values[1]);
	}
	limit = atol(check_limit("beads search", f.values[4] ? f.values[4] : "10", 100));
	mode = mode_arg("beads search", f.values[5]);
	fp = fopen(".beads/issues.jsonl", "r");
	if (!fp)
		fail("no beads in this repository (.beads/issues.jsonl not found)");
	bf.status = given(f.values[2]);
	bf.assignee = given(f.values[3]);
	beads_read(&ds, fp, ".beads/issues.jsonl", &bf);
	fclose(fp);
	rank_docs("beads search", f.values[0], mode, &ds);
	docs_sort_score(&ds);
	for (i = 0; i < ds.n && (long)shown < limit; i++) {
		if (ds.d[i].score <= 0)
			continue;
		json_object_set_new(ds.d[i].rec, "relevance_score", json_real(ds.d[i].score));
		json_object_del(ds.d[i].rec, "path");
		json_array_append(out, ds.d[i].rec);
		shown++;
	}
	doc_set_release(&ds);
	if (!shown)
		fprintf(stderr, "%s: beads search: no bead matches '%s'\n", progname, f.values[0]);
	return emit_records(out, want_json(f.set[0]), shown ? 0 : 1);
}

static void check_date(const char *sub, const char *opt, const char *v)
{
	if (v && !docs_date_ok(v))
		usage_fail("%s: %s must be a date, YYYY-MM-DD, not '%s'", sub, opt, v);
}

/* The records of the sources of a (the one named source, when given), filtered. */
static void archive_read(struct doc_set *ds, const struct archive *a, const char *sub, const struct flags *f)
{
	const char *source = given(f->values[1]);

	if (source && !archive_find(a, source))
		fail("%s: no archive source '%s' in .bobbin/config.toml", sub, source);
	for (size_t i = 0; i < a->nr; i++) {
		size_t first = ds->n;

		if (source && strcmp(a->src[i].name, source))
			continue;
		if (archive_read_source(ds, &a->src[i]))
			fail_said();
		/* the filters, before ranking */
		archive_filter(ds, first, f->values[3], f->values[4], given(f->values[2]));
	}
}

int cmd_archive(int argc, char **argv)
{
	static const char *const names[] = { "query", "source", "filter", "after", "before", "limit", "mode", NULL };
	static const char *const bools[] = { "json", NULL };
	int recent = argc && !strcmp(argv[0], "recent");
	const char *sub = recent ? "archive recent" : "archive search", *mode;
	struct flags f = { .sub = sub, .names = names, .bools = bools };
	struct archive a;
	struct doc_set ds = { 0 };
	size_t i, shown = 0;
	long limit;
	json_t *out = json_array();

	if (!argc || (strcmp(argv[0], "search") && strcmp(argv[0], "recent")))
		usage_fail("archive: expected search or recent");
	parse_options(&f, argc - 1, argv + 1, NULL);
	if (!recent && (!given(f.values[0]) || !docs_has_words(f.values[0])))
		usage_fail("archive search: --query needs words to search for");
	if (recent && !f.values[3])
		usage_fail("archive recent: --after is required (YYYY-MM-DD)");
	check_date(sub, "--after", f.values[3]);
	check_date(sub, "--before", f.values[4]);
	limit = atol(check_limit(sub, f.values[5] ? f.values[5] : recent ? "20" : "10", 100));
	mode = mode_arg(sub, f.values[6]);
	if (archive_open(&a, sub, &ci_toml))
		fail_said();
	archive_read(&ds, &a, sub, &f);
	if (recent) {
		docs_sort_recent(&ds);
	} else {
		rank_docs(sub, f.values[0], mode, &ds);
		docs_sort_score(&ds);
	}
	for (i = 0; i < ds.n && (long)shown < limit; i++) {
		if (!recent && ds.d[i].score <= 0)
			continue;
		if (!recent)
			json_object_set_new(ds.d[i].rec, "score", json_real(ds.d[i].score));
		json_array_append(out, ds.d[i].rec);
		shown++;
	}
	doc_set_release(&ds);
	archive_release(&a);
	if (!shown)
		fprintf(stderr, "%s: %s: no archive record%s\n", progname, sub,
			recent ? " after that date" : " matches");
	return emit_records(out, want_json(f.set[0]), shown ? 0 : 1);
}
