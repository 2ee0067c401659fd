/*
 * index.c: the subcommands over the index and the graph: `ci status`,
 * `ci reindex` (ci-index, then memories from the git history), `ci refs`,
 * `ci cycles` (ci-refs) and `ci metadata` (ci-index status and the package
 * manifests: context/manifest.h).
 */
#include "ci.h"

#include "context/manifest.h"

int cmd_status(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "status", .bools = bools };
	char *av[] = { NULL, "status", NULL };

	parse_options(&f, argc, argv, NULL);
	return run("ci-index", av, f.set[0]);
}

/*
 * Memories from conventional commits of the last 90 days (before the newest
 * commit), added to memory.json when not there already; returns how many.
 */
static int memory_from_git(void)
{
	json_t *commits = git_commits("90 days ago");
	struct memory_store ms;
	int added;

	memory_open_or_fail(&ms);
	added = memory_store_add_commits(&ms, commits);
	json_decref(commits);
	if (added && memory_store_save(&ms))
		fail_said();
	memory_store_release(&ms);
	return added;
}

int cmd_reindex(int argc, char **argv)
{
	static const char *const names[] = { "reason", NULL };
	static const char *const bools[] = { "json", "incremental", NULL };
	struct flags f = { .sub = "reindex", .names = names, .bools = bools };
	char *av[] = { NULL, NULL, NULL };
	json_t *recs;
	int rc;

	parse_options(&f, argc, argv, NULL);
	av[1] = f.set[1] ? "update" : "build";
	recs = records_of("ci-index", av, NULL, &rc);
	if (rc) {
		json_decref(recs);
		fail("reindex: ci-index %s failed", av[1]);
	}
	json_array_append_new(recs, json_pack("{s:s,s:s,s:i}", "_type", "git_memories", "source",
					      "conventional commits of the last 90 days",
					      "added", memory_from_git()));
	return emit_records(recs, want_json(f.set[0]), 0);
}

int cmd_refs(int argc, char **argv)
{
	static const char *const names[] = { "symbol", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "refs", .names = names, .bools = bools };
	char *av[8];
	int n = 1;

	parse_options(&f, argc, argv, "symbol");
	if (!f.values[0] || !*f.values[0])
		usage_fail("refs: --symbol is required");
	if (f.values[1]) {
		av[n++] = "--limit";
		av[n++] = (char *)check_limit("refs", f.values[1], 10000);
	}
	av[n++] = "refs";
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	return run("ci-refs", av, f.set[0]);
}

int cmd_cycles(int argc, char **argv)
{
	static const char *const names[] = { "scope", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "cycles", .names = names, .bools = bools };
	char *av[6];
	int n = 1;

	parse_options(&f, argc, argv, "scope");
	if (f.values[0]) {
		av[n++] = "--scope";
		av[n++] = (char *)f.values[0];
	}
	av[n++] = "cycles";
	av[n] = NULL;
	return run("ci-refs", av, f.set[0]);
}

/* The metadata record for people: root, files, languages, dependencies. */
static void print_metadata(json_t *meta)
{
	const char *key;
	json_t *v;
	size_t i;

	printf("root: %s\nfiles: %lld\n", json_string_value(json_object_get(meta, "root")),
	       (long long)json_integer_value(json_object_get(meta, "files")));
	json_object_foreach(json_object_get(meta, "languages"), key, v)
		printf("language: %s (%lld files)\n", key, (long long)json_integer_value(v));
	json_array_foreach(json_object_get(meta, "dependencies"), i, v)
		printf("dependency: %s %s (%s)\n", ctx_str(v, "name"), ctx_str(v, "version"),
		       ctx_str(v, "manifest"));
}

int cmd_metadata(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "metadata", .bools = bools };
	char *av[] = { NULL, "status", NULL };
	struct buf out = BUF_INIT;
	json_t *status, *meta;
	int rc;

	parse_options(&f, argc, argv, NULL);
	rc = capture(&out, "ci-index", av, NULL);
	status = rc ? NULL : json_loadb(out.buf, out.len, JSON_DISABLE_EOF_CHECK, NULL);
	buf_release(&out);
	if (!json_is_object(status)) {
		json_decref(status);
		fail("metadata: no index status (run 'ci reindex' first)");
	}
	meta = json_pack("{s:s,s:O,s:O,s:O,s:O,s:O,s:o}", "_type", "metadata",
			 "root", json_object_get(status, "root"),
			 "files", json_object_get(status, "files"),
			 "chunks", json_object_get(status, "chunks"),
			 "languages", json_object_get(status, "languages"),
			 "commit", json_object_get(status, "commit"),
			 "dependencies", manifest_deps(&ci_toml));
	json_decref(status);
	if (!meta)
		fail("metadata: the index status lacks a field");
	if (f.set[0] || !isatty(STDOUT_FILENO)) {
		char *s = json_dumps(meta, JSON_COMPACT | JSON_PRESERVE_ORDER);

		puts(s ? s : "");
		free(s);
	} else {
		print_metadata(meta);
	}
	json_decref(meta);
	return close_stdout(0);
}
