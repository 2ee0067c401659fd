/*
 * unit-context.c: TAP tests of libcommon/context: the memory store (add,
 * find, remove, save and load again on a temporary folder; a broken file;
 * ids, confidence decay, memories from conventional commits), the style
 * guide's parsers (a Markdown document, an .editorconfig), the manifests'
 * requirements.txt, import patterns (package names, categories, adoption,
 * conflicts, golden files), the keyword ranking of records, and the feedback
 * store on a temporary index (submit, list, stats, lineage, injections).
 */
#include "core/common.h"
#include "context/context.h"
#include "context/memory.h"
#include "context/style.h"
#include "context/manifest.h"
#include "context/patterns.h"
#include "context/docs.h"
#include "context/feedback.h"
#include "index/index.h"

#include <math.h>
#include <time.h>
#include <sys/stat.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		die("cannot write '%s'", path);
}

/* The rule field of rules[i] ("" when there is none). */
static const char *rule_at(json_t *rules, size_t i, const char *field)
{
	return ctx_str(json_array_get(rules, i), field);
}

static void test_memory_store(const char *dir)
{
	struct memory_store ms;
	json_t *m, *m2;
	char *id;
	char *path = xasprintf("%s/" MEMORY_FILE, dir);

	ok(memory_store_open(&ms, dir) == 0 && json_array_size(ms.all) == 0, "memory: no file is no memory");
	m = memory_new("decision", "architecture", "use SQLite for the index", "one file", "2026-01-01");
	m2 = memory_new("decision", "architecture", "use SQLite for the index", "another reason", "2026-02-01");
	ok(!strcmp(ctx_str(m, "id"), ctx_str(m2, "id")) && strlen(ctx_str(m, "id")) == 16,
	   "memory: the id is of type, category and text only (16 hex digits)");
	id = xstrdup(ctx_str(m, "id"));
	json_array_append_new(ms.all, m);
	json_decref(m2);
	json_array_append_new(ms.all, memory_new("gotcha", "testing", "tests need LC_ALL=C", "", "2026-01-02"));
	ok(memory_store_save(&ms) == 0, "memory: saved (the folder made)");
	memory_store_release(&ms);

	ok(memory_store_open(&ms, dir) == 0 && json_array_size(ms.all) == 2, "memory: both loaded again");
	ok(memory_store_find(&ms, id) == 0 && memory_store_find(&ms, "0000000000000000") == -1,
	   "memory: found by id, a wrong id is not");
	ok(memory_matches(json_array_get(ms.all, 1), "testing", NULL, "lc_all") &&
	   !memory_matches(json_array_get(ms.all, 1), "architecture", NULL, NULL) &&
	   !memory_matches(json_array_get(ms.all, 0), NULL, "gotcha", NULL),
	   "memory: list filters (category, type, query ignoring case)");
	ok(memory_related(json_array_get(ms.all, 0), "where is sqlite opened") &&
	   !memory_related(json_array_get(ms.all, 0), "an is of"), "memory: related by a word of 3 letters or more");
	json_array_remove(ms.all, (size_t)memory_store_find(&ms, id));
	ok(memory_store_save(&ms) == 0, "memory: saved after a removal");
	memory_store_release(&ms);
	ok(memory_store_open(&ms, dir) == 0 && json_array_size(ms.all) == 1 && memory_store_find(&ms, id) < 0,
	   "memory: the removed one is gone");
	memory_store_release(&ms);

	write_text(path, "{\"not\": \"an array\"}");
	fputs("# the error below is expected\n", stdout);
	fflush(stdout);
	ok(memory_store_open(&ms, dir) < 0, "memory: a file that is not an array is an error");
	memory_store_release(&ms);
	unlink(path);
	free(path);
	free(id);
}

static void test_memory_score(void)
{
	time_t now = 1000 * (time_t)CONTEXT_DAY;
	char d[11];
	json_t *dec, *got, *conv;

	ctx_ymd(d, (json_int_t)(now - 180 * CONTEXT_DAY));
	dec = memory_new("decision", "a", "x", "", d);
	got = memory_new("gotcha", "a", "x", "", d);
	conv = memory_new("convention", "a", "x", "", d);
	memory_score(dec, now);
	memory_score(got, now);
	memory_score(conv, now);
	ok(fabs(json_real_value(json_object_get(dec, "confidence")) - 0.5) < 1e-9 &&
	   !json_is_true(json_object_get(dec, "stale")), "memory: a decision halves in 180 days");
	ok(fabs(json_real_value(json_object_get(got, "confidence")) - 0.25) < 1e-9 &&
	   json_is_true(json_object_get(got, "stale")), "memory: a gotcha in 90 days, stale below 0.3");
	ok(json_real_value(json_object_get(conv, "confidence")) == 1, "memory: a convention keeps 1");
	json_decref(dec);
	json_decref(got);
	json_decref(conv);
}

static void test_memory_commits(void)
{
	struct memory_store ms = { .all = json_array() };
	json_t *commits = json_pack("[{s:s,s:s,s:i},{s:s,s:s,s:i},{s:s,s:s,s:i},{s:s,s:s,s:i},{s:s,s:s,s:i}]",
				    "sha", "abcdef0123", "message", "fix(parser): keep CRLF lines\n\nbody", "time", 86400,
				    "sha", "1111111111", "message", "feat!: a new index format", "time", 86400,
				    "sha", "2222222222", "message", "Merge branch 'x'", "time", 86400,
				    "sha", "3333333333", "message", "fix(): empty scope", "time", 86400,
				    "sha", "4444444444", "message", "feat!: a new index format", "time", 172800);
	json_t *m;

	ok(memory_store_add_commits(&ms, commits) == 2 && json_array_size(ms.all) == 2,
	   "memory: two conventional commits remembered, the same one once, others left out");
	m = json_array_get(ms.all, 0);
	ok(!strcmp(ctx_str(m, "type"), "gotcha") && !strcmp(ctx_str(m, "memory"), "parser: keep CRLF lines") &&
	   !strcmp(ctx_str(m, "reason"), "git commit abcdef0: fix(parser): keep CRLF lines") &&
	   !strcmp(ctx_str(m, "date"), "1970-01-02T00:00:00Z") && !strcmp(ctx_str(m, "source"), "git"),
	   "memory: fix(scope) is a gotcha, the scope prefixes the text");
	m = json_array_get(ms.all, 1);
	ok(!strcmp(ctx_str(m, "type"), "decision") && !strcmp(ctx_str(m, "category"), "architecture"),
	   "memory: feat! is a decision about architecture");
	ok(memory_store_add_commits(&ms, commits) == 0, "memory: nothing new the second time");
	json_decref(commits);
	json_decref(ms.all);
}

static void test_style(void)
{
	json_t *rules = json_array();

	write_text("STYLE.md",
		   "# Project\n"
		   "\n"
		   "Some introduction.\n"
		   "\n"
		   "## Code style\n"
		   "\n"
		   "- Indent with tabs.\n"
		   "- Lines under 100 columns.\n"
		   "\n"
		   "Names are short\n"
		   "and lowercase.\n"
		   "```\n"
		   "- not a rule: code\n"
		   "```\n"
		   "## Install\n"
		   "- make install\n");
	style_doc(rules, "STYLE.md", 0, 0);
	ok(json_array_size(rules) == 3, "style: a document's rules under its style heading only");
	ok(!strcmp(rule_at(rules, 0, "rule"), "Indent with tabs.") &&
	   !strcmp(rule_at(rules, 0, "section"), "Code style") &&
	   json_integer_value(json_object_get(json_array_get(rules, 0), "line")) == 7,
	   "style: a list item, its section and line");
	ok(!strcmp(rule_at(rules, 1, "rule"), "Lines under 100 columns.") &&
	   !strcmp(rule_at(rules, 2, "rule"), "Names are short and lowercase.") &&
	   json_integer_value(json_object_get(json_array_get(rules, 2), "line")) == 10,
	   "style: a paragraph's lines joined, at its first line; code left out");
	json_array_clear(rules);
	style_doc(rules, "STYLE.md", 1, 0);
	ok(json_array_size(rules) == 5 && !strcmp(rule_at(rules, 0, "rule"), "Some introduction.") &&
	   !strcmp(rule_at(rules, 4, "rule"), "make install") && !strcmp(rule_at(rules, 4, "section"), "Install"), "style: a whole style document: every section");

	json_array_clear(rules);
	write_text(".editorconfig", "root = true\n\n[*]\nindent_style = tab\n# a comment\n[*.py]\nindent_size = 4\n");
	style_ini(rules, ".editorconfig", NULL);
	ok(json_array_size(rules) == 2 && !strcmp(rule_at(rules, 0, "rule"), "indent_style = tab") &&
	   !strcmp(rule_at(rules, 0, "section"), "[*]") && !strcmp(rule_at(rules, 1, "section"), "[*.py]"),
	   "style: .editorconfig settings by section, root left out");
	ok(style_rule_matches(json_array_get(rules, 1), "INDENT", "py") &&
	   !style_rule_matches(json_array_get(rules, 1), "tab", NULL), "style: --query and --category filters");
	json_decref(rules);
	unlink("STYLE.md");
	unlink(".editorconfig");
}

static void test_manifest(void)
{
	json_t *deps = json_array();

	write_text("requirements.txt", "# pinned\nrequests>=2.31 ; python_version > '3.8'\n-r other.txt\nnumpy\n");
	manifest_deps_text(deps, "requirements.txt");
	ok(json_array_size(deps) == 2 && !strcmp(rule_at(deps, 0, "name"), "requests") &&
	   !strcmp(rule_at(deps, 0, "version"), ">=2.31") && !strcmp(rule_at(deps, 1, "name"), "numpy") &&
	   !strcmp(rule_at(deps, 1, "version"), ""), "manifest: requirements.txt names and versions, no options");
	json_decref(deps);
	unlink("requirements.txt");
}

static void test_patterns(void)
{
	struct { const char *target, *pkg; } cases[] = {
		{ "@scope/pkg/sub", "@scope/pkg" }, { "os.path", "os" }, { "lodash/fp", "lodash" },
		{ "github.com/stretchr/testify/assert", "github.com/stretchr/testify" },
		{ "github.com/x/y", "github.com/x/y" }, { "@testing-library/react/x", "@testing-library/react" },
		{ "./local", NULL }, { "", NULL },
	};
	json_t *by_file, *commits = json_array(), *out, *p;
	int good = 1;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *pkg = import_package(cases[i].target);

		if (cases[i].pkg ? !pkg || strcmp(pkg, cases[i].pkg) : pkg != NULL) {
			printf("# %s: %s\n", cases[i].target, pkg ? pkg : "(null)");
			good = 0;
		}
		free(pkg);
	}
	ok(good, "patterns: the package an import names");
	ok(!strcmp(package_category("jest"), "testing") && !strcmp(package_category("@ngrx/store"), "state") &&
	   !strcmp(package_category("requests"), "libraries"), "patterns: categories of known packages");

	by_file = json_pack("{s:[s,s],s:[s],s:[s]}", "a.test.js", "jest", "react", "b.test.js", "jest",
			    "c.test.js", "mocha");
	out = patterns_compute(by_file, commits, "all");
	p = json_array_get(json_object_get(out, "patterns"), 0);
	ok(json_array_size(json_object_get(out, "patterns")) == 3 && !strcmp(ctx_str(p, "name"), "react") &&
	   !strcmp(ctx_str(p, "category"), "libraries"), "patterns: sorted by category");
	p = json_array_get(json_object_get(out, "patterns"), 1);
	ok(!strcmp(ctx_str(p, "name"), "jest") && !strcmp(ctx_str(p, "frequency"), "67%") &&
	   json_integer_value(json_object_get(p, "count")) == 2 && !strcmp(ctx_str(p, "trend"), "Stable"),
	   "patterns: adoption within the category, rounded; no history is Stable");
	ok(json_array_size(json_object_get(out, "conflicts")) == 1 &&
	   !strcmp(ctx_str(json_array_get(json_object_get(out, "conflicts"), 0), "category"), "testing"),
	   "patterns: jest and mocha both above 20% conflict");
	ok(json_array_size(json_object_get(out, "goldenFiles")) == 3 &&
	   !strcmp(ctx_str(json_array_get(json_object_get(out, "goldenFiles"), 0), "file"), "a.test.js"),
	   "patterns: golden files by patterns used, then path");
	json_decref(out);
	out = patterns_compute(by_file, commits, "libraries");
	ok(json_array_size(json_object_get(out, "patterns")) == 1, "patterns: one category");
	json_decref(out);
	json_decref(by_file);
	json_decref(commits);
}

static void test_docs(void)
{
	static const char *const texts[] = { "the parser keeps CRLF lines", "the index stores chunks",
					     "parser errors name the line; the parser is strict" };
	struct doc_set ds = { 0 };
	double kw[3];
	char *q = docs_fts_query("parser-errors, x");

	ok(q && !strcmp(q, "\"parser\" OR \"errors\" OR \"x\"") && !docs_has_words(" -- "),
	   "docs: a query as an FTS5 OR of its words");
	free(q);
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct doc *d = doc_set_add(&ds);

		d->text = xstrdup(texts[i]);
		d->rec = json_pack("{s:s}", "path", texts[i]);
	}
	ok(docs_rank_keyword(&ds, "test", "parser errors", kw) == 0 && kw[2] == 1 && kw[0] > 0 && kw[0] < 1 &&
	   kw[1] == -1, "docs: bm25 relative to the best; no match is -1");
	docs_score(&ds, "keyword", kw, NULL, NULL, 0);
	docs_sort_score(&ds);
	ok(!strcmp(ds.d[0].text, texts[2]) && ds.d[2].score == -1, "docs: sorted best first");
	ok(docs_date_ok("2026-02-28") && !docs_date_ok("2026-13-01") && !docs_date_ok("2026/02/28"),
	   "docs: dates are YYYY-MM-DD");
	doc_set_release(&ds);
}

extern const char ci_schema_sql[];

/* An empty index at path, as ci-index creates one (the schema and its version). */
static void make_index(const char *path)
{
	sqlite3 *db;
	char *sql = xasprintf("INSERT INTO meta(key, value) VALUES ('schema_version', '%d'), ('root', '/')",
			      CI_SCHEMA_VERSION);

	if (sqlite3_open(path, &db) != SQLITE_OK || index_register_functions(db) < 0 ||
	    index_exec(db, ci_schema_sql) < 0 || index_exec(db, sql) < 0 || sqlite3_close(db) != SQLITE_OK)
		die("cannot make an index at '%s'", path);
	free(sql);
}

static void test_feedback(const char *dir)
{
	char *path = xasprintf("%s/index.db", dir), *id = NULL, *id2 = NULL;
	struct ci_index *ix;
	struct feedback fb = { "inj-1", "tester", "useful", "it helped", "2026-01-01T00:00:00Z" };
	struct lineage ln = { .action_type = "code_fix", .description = "fixed the ranker", .agent = "tester",
			      .timestamp = "2026-01-02T00:00:00Z", .bead = "b-1" };
	json_t *recs = NULL, *r;

	make_index(path);
	ok(feedback_open(&ix, "test", path, 0) == 0 && feedback_list(&recs, ix, "test", NULL, NULL, 20) == 0 &&
	   json_array_size(recs) == 0, "feedback: an index nothing was written to has no feedback");
	json_decref(recs);
	index_close(ix);

	ok(feedback_open(&ix, "test", path, 1) == 0, "feedback: opened to write (the tables made)");
	ok(injection_begin(&id, ix, "parse header", "tester", "[\"src/a.c\"]", "2026-01-01T00:00:00Z") == 0 &&
	   !strcmp(id, "inj-1") && injection_end(ix, id, 1) == 0, "feedback: the first injection is inj-1");
	ok(injection_begin(&id2, ix, "rolled back", "tester", "[]", "2026-01-01T00:00:00Z") == 0 &&
	   !strcmp(id2, "inj-2") && injection_end(ix, id2, 0) == 0, "feedback: an injection rolled back...");
	free(id2);
	ok(injection_begin(&id2, ix, "again", "tester", "[]", "2026-01-01T00:00:00Z") == 0 &&
	   !strcmp(id2, "inj-2") && injection_end(ix, id2, 1) == 0, "... leaves its number free");
	free(id2);
	ok(feedback_submit(&recs, ix, "test", &fb) == 0 && json_array_size(recs) == 1, "feedback: submitted");
	r = json_array_get(recs, 0);
	ok(!strcmp(ctx_str(r, "_type"), "feedback") && json_integer_value(json_object_get(r, "id")) == 1 &&
	   !strcmp(ctx_str(r, "injection_id"), "inj-1") && !strcmp(ctx_str(r, "rating"), "useful") &&
	   !strcmp(ctx_str(r, "reason"), "it helped"), "feedback: the record as stored");
	json_decref(recs);
	fb.rating = "noise";
	fb.agent = "other";
	feedback_submit(&recs, ix, "test", &fb);
	json_decref(recs);
	ok(feedback_list(&recs, ix, "test", "noise", NULL, 20) == 0 && json_array_size(recs) == 1 &&
	   json_integer_value(json_object_get(json_array_get(recs, 0), "id")) == 2, "feedback: listed by rating");
	json_decref(recs);
	ok(feedback_list(&recs, ix, "test", NULL, NULL, 1) == 0 && json_array_size(recs) == 1 &&
	   json_integer_value(json_object_get(json_array_get(recs, 0), "id")) == 2, "feedback: newest first, limited");
	json_decref(recs);

	ln.feedback_ids = json_pack("[i]", 7);
	fputs("# the error below is expected\n", stdout);
	fflush(stdout);
	ok(lineage_store(&recs, ix, "test", &ln) < 0 && !recs, "feedback: lineage of a record that is not there fails");
	json_decref(ln.feedback_ids);
	ln.feedback_ids = json_pack("[i,i]", 1, 2);
	ok(lineage_store(&recs, ix, "test", &ln) == 0 && json_array_size(recs) == 1 &&
	   json_array_size(json_object_get(json_array_get(recs, 0), "feedback_ids")) == 2 &&
	   !strcmp(ctx_str(json_array_get(recs, 0), "bead"), "b-1"), "feedback: lineage stored, its ids as JSON");
	json_decref(recs);
	json_decref(ln.feedback_ids);
	ok(lineage_list(&recs, ix, "test", 2, NULL, NULL, 20) == 0 && json_array_size(recs) == 1 &&
	   lineage_list(&r, ix, "test", 3, NULL, NULL, 20) == 0 && json_array_size(r) == 0,
	   "feedback: lineage listed by feedback id");
	json_decref(recs);
	json_decref(r);
	ok(feedback_stats(&r, ix, "test") == 0 &&
	   json_integer_value(json_object_get(r, "total_injections")) == 2 &&
	   json_integer_value(json_object_get(r, "total_feedback")) == 2 &&
	   json_real_value(json_object_get(r, "coverage")) == 0.5 &&
	   json_integer_value(json_object_get(r, "useful")) == 1 &&
	   json_integer_value(json_object_get(r, "actioned")) == 2 &&
	   json_integer_value(json_object_get(r, "unactioned")) == 0, "feedback: stats count and cover");
	json_decref(r);
	index_close(ix);
	free(id);
	unlink(path);
	free(path);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/unit-context-XXXXXX";
	char *dir, *sub;

	(void)argc;
	util_init(argv[0]);
	dir = mkdtemp(tmpl);
	if (!dir || chdir(dir))
		die("cannot make a temporary folder");
	test_memory_store(dir);
	test_memory_score();
	test_memory_commits();
	test_style();
	test_manifest();
	test_patterns();
	test_docs();
	test_feedback(dir);
	sub = xasprintf("%s/" MEMORY_DIR, dir);
	rmdir(sub);
	free(sub);
	if (chdir("/") || rmdir(dir))
		printf("# cannot remove %s\n", dir);
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
