/*
 * patterns.c: `ci patterns` (import patterns, golden files, conflicts and the
 * memories that go with them: context/patterns.h) and `ci context` (the
 * codebase://context overview in Markdown).
 */
#include "ci.h"

#include <time.h>

#include "context/patterns.h"

/* The patterns, golden files, conflicts and memories for people. */
static void print_patterns(json_t *all, json_t *mems, const char *cat)
{
	json_t *v;
	size_t i;

	if (!json_array_size(json_object_get(all, "patterns")))
		printf("no %s patterns in the index's imports\n", cat);
	json_array_foreach(json_object_get(all, "patterns"), i, v)
		printf("%-9s %-24s %4s of files (%lld)  %s\n", ctx_str(v, "category"),
		       ctx_str(v, "name"), ctx_str(v, "frequency"),
		       (long long)json_integer_value(json_object_get(v, "count")), ctx_str(v, "trend"));
	json_array_foreach(json_object_get(all, "goldenFiles"), i, v)
		printf("golden file: %s (%lld patterns)\n", ctx_str(v, "file"),
		       (long long)json_integer_value(json_object_get(v, "patterns")));
	json_array_foreach(json_object_get(all, "conflicts"), i, v)
		printf("conflict in %s: %s and %s both above 20%%\n", ctx_str(v, "category"),
		       json_string_value(json_array_get(json_object_get(v, "patterns"), 0)),
		       json_string_value(json_array_get(json_object_get(v, "patterns"), 1)));
	json_array_foreach(mems, i, v)
		printf("memory: [%s] %s: %s (confidence %.2f%s)\n", ctx_str(v, "type"),
		       ctx_str(v, "category"), ctx_str(v, "memory"),
		       json_real_value(json_object_get(v, "confidence")),
		       json_is_true(json_object_get(v, "stale")) ? ", stale" : "");
}

int cmd_patterns(int argc, char **argv)
{
	static const char *const names[] = { "category", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const lists[] = { "patterns", "goldenFiles", "conflicts" };
	struct flags f = { .sub = "patterns", .names = names, .bools = bools };
	struct memory_store ms;
	const char *cat;
	json_t *all, *mems, *v;
	size_t i, k;

	parse_options(&f, argc, argv, "category");
	cat = f.values[0] ? f.values[0] : "all";
	if (!pattern_category_ok(cat))
		usage_fail("patterns: --category must be all, di, state, testing or libraries, not '%s'", cat);
	all = patterns_of("patterns", cat);
	memory_open_or_fail(&ms);
	mems = patterns_memories(ms.all, cat, time(NULL));
	memory_store_release(&ms);
	if (want_json(f.set[0])) {
		for (k = 0; k < ARRAY_SIZE(lists); k++)
			json_array_foreach(json_object_get(all, lists[k]), i, v)
				put_json(v);
		json_array_foreach(mems, i, v)
			put_json(v);
	} else {
		print_patterns(all, mems, cat);
	}
	json_decref(mems);
	json_decref(all);
	return close_stdout(0);
}

/* The languages and dependencies of ci metadata's record, in Markdown. */
static void context_metadata(struct buf *b, json_t *meta)
{
	const char *key;
	json_t *v;
	size_t i;

	buf_addf(b, "# Codebase context: %s\n\n", strrchr(ctx_str(meta, "root"), '/') ?
		 strrchr(ctx_str(meta, "root"), '/') + 1 : ctx_str(meta, "root"));
	buf_addf(b, "%lld files, %lld chunks indexed at commit %s.\n\n## Languages\n\n",
		 (long long)json_integer_value(json_object_get(meta, "files")),
		 (long long)json_integer_value(json_object_get(meta, "chunks")),
		 json_is_string(json_object_get(meta, "commit")) ? ctx_str(meta, "commit") : "(none)");
	json_object_foreach(json_object_get(meta, "languages"), key, v)
		buf_addf(b, "- %s: %lld files\n", key, (long long)json_integer_value(v));
	buf_addstr(b, "\n## Dependencies\n\n");
	if (!json_array_size(json_object_get(meta, "dependencies")))
		buf_addstr(b, "(no package manifest)\n");
	json_array_foreach(json_object_get(meta, "dependencies"), i, v)
		buf_addf(b, "- %s %s (%s)\n", ctx_str(v, "name"), ctx_str(v, "version"),
			 ctx_str(v, "manifest"));
}

/* The patterns, golden files and conflicts, in Markdown. */
static void context_patterns(struct buf *b, json_t *pats)
{
	json_t *v;
	size_t i;

	buf_addstr(b, "\n## Team patterns\n\n");
	if (!json_array_size(json_object_get(pats, "patterns")))
		buf_addstr(b, "(no imports of packages)\n");
	json_array_foreach(json_object_get(pats, "patterns"), i, v)
		buf_addf(b, "- %s: %s, %s of files (%lld), %s\n", ctx_str(v, "category"), ctx_str(v, "name"),
			 ctx_str(v, "frequency"), (long long)json_integer_value(json_object_get(v, "count")),
			 ctx_str(v, "trend"));
	json_array_foreach(json_object_get(pats, "goldenFiles"), i, v)
		buf_addf(b, "%s%s", i ? ", " : "\nGolden files: ", ctx_str(v, "file"));
	if (json_array_size(json_object_get(pats, "goldenFiles")))
		buf_addch(b, '\n');
	json_array_foreach(json_object_get(pats, "conflicts"), i, v)
		buf_addf(b, "\nConflict in %s: %s and %s are both above 20%%.\n", ctx_str(v, "category"),
			 json_string_value(json_array_get(json_object_get(v, "patterns"), 0)),
			 json_string_value(json_array_get(json_object_get(v, "patterns"), 1)));
}

/* The memories with their confidence, in Markdown. */
static void context_memories(struct buf *b, json_t *mems)
{
	time_t now = time(NULL);
	json_t *m;
	size_t i;

	buf_addstr(b, "\n## Team memory\n\n");
	if (!json_array_size(mems))
		buf_addstr(b, "(none: remember conventions, decisions, gotchas and failures with 'ci memory add')\n");
	json_array_foreach(mems, i, m) {
		memory_score(m, now);
		buf_addf(b, "- [%s] %s: %s (confidence %.2f%s)\n", ctx_str(m, "type"), ctx_str(m, "category"),
			 ctx_str(m, "memory"), json_real_value(json_object_get(m, "confidence")),
			 json_is_true(json_object_get(m, "stale")) ? ", stale" : "");
	}
}

/*
 * A Markdown overview for an agent starting work: the languages, dependencies,
 * the team's patterns and golden files, conflicts, and the memories with their
 * confidence.  With --json one record {"_type":"context","text":...}.
 */
int cmd_context(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "context", .bools = bools };
	char *av[] = { NULL, "metadata", "--json", NULL };
	struct memory_store ms;
	json_t *recs, *meta, *pats;
	struct buf b = BUF_INIT;
	int rc;

	parse_options(&f, argc, argv, NULL);
	recs = records_of("ci", av, NULL, &rc);
	meta = json_array_get(recs, 0);
	if (rc || !json_is_object(meta))
		fail("context: no index (run 'ci reindex' first)");
	pats = patterns_of("context", "all");
	memory_open_or_fail(&ms);
	context_metadata(&b, meta);
	context_patterns(&b, pats);
	context_memories(&b, ms.all);
	if (f.set[0]) {
		json_t *r = json_pack("{s:s,s:s}", "_type", "context", "text", b.buf);

		put_json(r);
		json_decref(r);
	} else {
		fputs(b.buf, stdout);
	}
	buf_release(&b);
	memory_store_release(&ms);
	json_decref(pats);
	json_decref(recs);
	return close_stdout(0);
}
