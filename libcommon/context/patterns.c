/*
 * patterns.c: import patterns and their trends (see patterns.h).  A
 * repository's imports are thousands of rows at most; JSON objects keyed by
 * file and package keep it simple.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/memory.h"
#include "context/patterns.h"

#define RISING_DAYS 90		/* first used this recently before the newest commit */
#define DECLINING_DAYS 180	/* not touched for this long before it */

const char *const pattern_categories[] = { "all", "di", "state", "testing", "libraries", NULL };

int pattern_category_ok(const char *cat)
{
	for (int i = 0; pattern_categories[i]; i++)
		if (!strcmp(cat, pattern_categories[i]))
			return 1;
	return 0;
}

/* Packages that say a category: testing frameworks, state stores, DI containers. */
static const struct {
	const char *category;	/* di, state or testing */
	const char *name;	/* the package (a trailing '/' matches a scope) */
} known_packages[] = {
	{ "testing", "pytest" }, { "testing", "unittest" }, { "testing", "nose" },
	{ "testing", "hypothesis" }, { "testing", "jest" }, { "testing", "vitest" },
	{ "testing", "mocha" }, { "testing", "chai" }, { "testing", "jasmine" },
	{ "testing", "sinon" }, { "testing", "@testing-library/" }, { "testing", "cypress" },
	{ "testing", "@playwright/test" }, { "testing", "supertest" }, { "testing", "testing" },
	{ "testing", "github.com/stretchr/testify" }, { "testing", "org.junit" },
	{ "testing", "org.mockito" }, { "testing", "check.h" }, { "testing", "cmocka.h" },
	{ "state", "redux" }, { "state", "@reduxjs/toolkit" }, { "state", "react-redux" },
	{ "state", "zustand" }, { "state", "mobx" }, { "state", "vuex" }, { "state", "pinia" },
	{ "state", "@ngrx/" }, { "state", "recoil" }, { "state", "jotai" }, { "state", "xstate" },
	{ "di", "inversify" }, { "di", "tsyringe" }, { "di", "typedi" }, { "di", "injector" },
	{ "di", "dependency_injector" }, { "di", "@nestjs/common" }, { "di", "@angular/core" },
	{ "di", "github.com/google/wire" }, { "di", "go.uber.org/fx" }, { "di", "go.uber.org/dig" },
	{ "di", "com.google.inject" }, { "di", "dagger" },
};

/*
 * The package an import names: "@scope/pkg" for a scoped npm name, the module
 * path up to a known package for Go and Java, else the first segment ("os.path"
 * is "os", "lodash/fp" is "lodash").  NULL for a relative import.  Malloc'd.
 */
char *import_package(const char *target)
{
	size_t n;

	if (!*target || *target == '.' || *target == '/')
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(known_packages); i++) {
		const char *k = known_packages[i].name;
		size_t l = strlen(k);

		if (k[l - 1] == '/' ? !strncmp(target, k, l) :
		    !strncmp(target, k, l) && strchr("/.:", target[l] ? target[l] : '/'))
			return k[l - 1] == '/' ? xstrndup(target, l + strcspn(target + l, "/")) :
						 xstrdup(k);
	}
	if (*target == '@') {
		n = strcspn(target, "/");
		if (target[n])
			n += 1 + strcspn(target + n + 1, "/");
		return xstrndup(target, n);
	}
	if (strchr(target, '/') && strchr(target, '.') && strchr(target, '.') < strchr(target, '/'))
		return xstrdup(target);	/* a Go module path: github.com/x/y */
	n = strcspn(target, "/.:");
	return n ? xstrndup(target, n) : NULL;
}

const char *package_category(const char *pkg)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_packages); i++) {
		const char *k = known_packages[i].name;
		size_t l = strlen(k);

		if (k[l - 1] == '/' ? !strncmp(pkg, k, l) : !strcmp(pkg, k))
			return known_packages[i].category;
	}
	return "libraries";
}


int patterns_imports(json_t **out, sqlite3 *db, const char *sub)
{
	json_t *by_file = json_object();
	sqlite3_stmt *st = NULL;
	int rc;

	*out = NULL;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT path, target FROM imports "
			       "WHERE resolved IS NULL ORDER BY path, target", -1, &st, NULL) != SQLITE_OK) {
		json_decref(by_file);
		return error("%s: %s", sub, sqlite3_errmsg(db));
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *file = (const char *)sqlite3_column_text(st, 0);
		char *pkg = import_package((const char *)sqlite3_column_text(st, 1));
		json_t *list;

		if (!pkg)
			continue;
		list = json_object_get(by_file, file);
		if (!list)
			json_object_set_new(by_file, file, list = json_array());
		if (!ctx_array_has(list, pkg))
			json_array_append_new(list, json_string(pkg));
		free(pkg);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(by_file);
		return error("%s: %s", sub, sqlite3_errmsg(db));
	}
	*out = by_file;
	return 0;
}

/* What patterns_compute() builds on its way. */
struct pattern_run {
	json_t *pats;		/* package -> {category, name, count, files, first, last} */
	json_t *cat_files;	/* category -> {file: true} */
	json_t *first, *last;	/* file -> time of its first and last commit */
	json_int_t newest;	/* the newest commit's time */
	json_int_t oldest;	/* the oldest commit's time (when there are two or more) */
	int many_commits;	/* whether there are two commits or more */
};

/* When each file was first and last committed. */
static void file_times(struct pattern_run *pr, json_t *commits)
{
	size_t i, j;
	json_t *c, *f;

	json_array_foreach(commits, i, c) {
		json_int_t t = json_integer_value(json_object_get(c, "time"));

		if (t > pr->newest)
			pr->newest = t;
		json_array_foreach(json_object_get(c, "files"), j, f) {
			const char *p = ctx_str(f, "path");
			json_t *a = json_object_get(pr->first, p), *b = json_object_get(pr->last, p);

			if (!a || json_integer_value(a) > t)
				json_object_set_new(pr->first, p, json_integer(t));
			if (!b || json_integer_value(b) < t)
				json_object_set_new(pr->last, p, json_integer(t));
		}
	}
	pr->many_commits = json_array_size(commits) > 1;
	if (pr->many_commits)
		pr->oldest = json_integer_value(json_object_get(
			json_array_get(commits, json_array_size(commits) - 1), "time"));
}

/* Count each package's files and when they were first and last committed. */
static void count_packages(struct pattern_run *pr, json_t *by_file)
{
	const char *file;
	json_t *list, *v;
	size_t i;

	json_object_foreach(by_file, file, list) {
		json_array_foreach(list, i, v) {
			const char *pkg = json_string_value(v), *cat = package_category(pkg);
			json_t *p = json_object_get(pr->pats, pkg), *cf = json_object_get(pr->cat_files, cat);
			json_t *a = json_object_get(pr->first, file), *b = json_object_get(pr->last, file);

			if (!p) {
				p = json_pack("{s:s,s:s,s:i,s:[],s:i,s:i}", "category", cat, "name", pkg,
					      "count", 0, "files", "first", 0, "last", 0);
				json_object_set_new(pr->pats, pkg, p);
			}
			json_object_set_new(p, "count", json_integer(json_integer_value(json_object_get(p, "count")) + 1));
			json_array_append_new(json_object_get(p, "files"), json_string(file));
			if (a && (!json_integer_value(json_object_get(p, "first")) ||
				  json_integer_value(a) < json_integer_value(json_object_get(p, "first"))))
				json_object_set(p, "first", a);
			if (b && json_integer_value(b) > json_integer_value(json_object_get(p, "last")))
				json_object_set(p, "last", b);
			if (!cf)
				json_object_set_new(pr->cat_files, cat, cf = json_object());
			json_object_set_new(cf, file, json_true());
		}
	}
}

static int cmp_pattern(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(ctx_str(x, "category"), ctx_str(y, "category"));
	json_int_t nx = json_integer_value(json_object_get(x, "count"));
	json_int_t ny = json_integer_value(json_object_get(y, "count"));

	if (c)
		return c;
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return strcmp(ctx_str(x, "name"), ctx_str(y, "name"));
}

/* The "pattern" record of package p (one of pr->pats). */
static json_t *pattern_record(const struct pattern_run *pr, json_t *p)
{
	const char *cat = ctx_str(p, "category");
	json_int_t cnt = json_integer_value(json_object_get(p, "count"));
	json_int_t total = (json_int_t)json_object_size(json_object_get(pr->cat_files, cat));
	json_int_t a = json_integer_value(json_object_get(p, "first"));
	json_int_t b = json_integer_value(json_object_get(p, "last"));
	int pct = total ? (int)((cnt * 100 + total / 2) / total) : 0;
	const char *trend = "Stable";
	char pcts[16], d[11] = "";
	json_t *files = json_array(), *f;
	size_t j;

	if (b && pr->newest - b > (json_int_t)DECLINING_DAYS * CONTEXT_DAY)
		trend = "Declining";
	else if (a && pr->newest - a <= (json_int_t)RISING_DAYS * CONTEXT_DAY && pr->newest - a >= 0 &&
		 pr->many_commits && a > pr->oldest)
		trend = "Rising";	/* newer than the first commit: adopted later */
	if (b)
		ctx_ymd(d, b);
	snprintf(pcts, sizeof(pcts), "%d%%", pct);
	json_array_foreach(json_object_get(p, "files"), j, f)
		if (j < 3)
			json_array_append(files, f);
	return json_pack("{s:s,s:s,s:s,s:I,s:s,s:i,s:s,s:s,s:o}", "_type", "pattern", "category", cat,
			 "name", ctx_str(p, "name"), "count", cnt, "frequency", pcts, "adoption", pct,
			 "trend", trend, "lastUsed", d, "files", files);
}

/* The pattern records of category, sorted by category, count, then name. */
static json_t *pattern_records(const struct pattern_run *pr, const char *category)
{
	size_t n = json_object_size(pr->pats), i = 0;
	json_t **sorted = xcalloc(n + 1, sizeof(*sorted)), *arr = json_array(), *v;
	const char *key;

	json_object_foreach(pr->pats, key, v)
		sorted[i++] = v;
	qsort(sorted, n, sizeof(*sorted), cmp_pattern);
	for (i = 0; i < n; i++) {
		const char *cat = ctx_str(sorted[i], "category");

		if (strcmp(category, "all") && strcmp(category, cat))
			continue;
		json_array_append_new(arr, pattern_record(pr, sorted[i]));
	}
	free(sorted);
	return arr;
}

/* Golden files: the files using the most di/state/testing patterns (else any), 3 at most. */
static json_t *golden_files(json_t *by_file)
{
	json_t *golden = json_array(), *list, *v;
	const char *file;
	size_t i;

	for (int pass = 0; pass < 2 && !json_array_size(golden); pass++) {
		json_t *scores = json_array();
		int most = 0;

		json_object_foreach(by_file, file, list) {
			int k = 0;

			json_array_foreach(list, i, v)
				if (pass || strcmp(package_category(json_string_value(v)), "libraries"))
					k++;
			if (k)
				json_array_append_new(scores, json_pack("{s:s,s:s,s:i}", "_type", "golden_file",
									"file", file, "patterns", k));
			if (k > most)
				most = k;
		}
		/* the most patterns first, then by path (by_file was filled in path order) */
		for (int best = most; best > 0 && json_array_size(golden) < 3; best--)
			json_array_foreach(scores, i, v)
				if (json_integer_value(json_object_get(v, "patterns")) == best &&
				    json_array_size(golden) < 3)
					json_array_append(golden, v);
		json_decref(scores);
	}
	return golden;
}

/* Conflicts: two patterns of a category (not libraries) both above 20%. */
static json_t *pattern_conflicts(json_t *arr)
{
	json_t *conflicts = json_array();
	size_t i, j;

	for (i = 0; i < json_array_size(arr); i++)
		for (j = i + 1; j < json_array_size(arr); j++) {
			json_t *x = json_array_get(arr, i), *y = json_array_get(arr, j);

			if (strcmp(ctx_str(x, "category"), ctx_str(y, "category")) ||
			    !strcmp(ctx_str(x, "category"), "libraries") ||
			    json_integer_value(json_object_get(x, "adoption")) <= 20 ||
			    json_integer_value(json_object_get(y, "adoption")) <= 20)
				continue;
			json_array_append_new(conflicts, json_pack("{s:s,s:s,s:[s,s]}", "_type", "conflict",
				"category", ctx_str(x, "category"), "patterns", ctx_str(x, "name"),
				ctx_str(y, "name")));
		}
	return conflicts;
}

json_t *patterns_compute(json_t *by_file, json_t *commits, const char *category)
{
	struct pattern_run pr = {
		.pats = json_object(), .cat_files = json_object(),
		.first = json_object(), .last = json_object(),
	};
	json_t *arr, *out;

	file_times(&pr, commits);
	count_packages(&pr, by_file);
	arr = pattern_records(&pr, category);
	out = json_pack("{s:o,s:o,s:o}", "patterns", arr, "goldenFiles", golden_files(by_file),
			"conflicts", pattern_conflicts(arr));
	json_decref(pr.pats);
	json_decref(pr.cat_files);
	json_decref(pr.first);
	json_decref(pr.last);
	return out;
}

json_t *patterns_memories(json_t *memories, const char *cat, time_t now)
{
	const char *want = !strcmp(cat, "testing") ? "testing" : !strcmp(cat, "libraries") ? "dependencies" :
			   !strcmp(cat, "all") ? NULL : "architecture";
	json_t *out = json_array(), *m;
	size_t i;

	json_array_foreach(memories, i, m) {
		json_t *r;

		if (want && strcmp(ctx_str(m, "category"), want))
			continue;
		r = json_pack("{s:s}", "_type", "memory");
		memory_score(m, now);
		json_object_update(r, m);
		json_array_append_new(out, r);
	}
	return out;
}
