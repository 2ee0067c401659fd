/*
 * unit-imports-config.c: TAP tests of import resolution that follows the
 * repository's build configuration (import_ctx_load(), importcfg.c):
 * package.json workspaces and "exports", tsconfig/jsconfig "paths", "baseUrl"
 * and "extends", compile_commands.json include paths, Java/Kotlin source roots
 * and package directories, go.mod nested modules and replace directives.
 *
 * The fixture is written to a temporary directory (the configuration files
 * are read from disk), and its file set built from the same list.
 */
#include "core/common.h"
#include "parse/imports.h"
#include "parse/importcfg.h"
#include "unit-imports-lib.h"

/* The fixture: a path and its text ("@ROOT@" stands for the root's absolute path). */
static const struct {
	const char *path, *text;
} files[] = {
	/* JS/TS workspace packages */
	{ "package.json", "{\"name\": \"monorepo\", \"private\": true, \"workspaces\": [\"packages/*\"]}" },
	{ "packages/util/package.json",
	  "{\"name\": \"@acme/util\", \"exports\": {"
	  "\".\": {\"types\": \"./dist/index.d.ts\", \"import\": \"./src/index.ts\"},"
	  "\"./feature\": \"./src/feature.ts\", \"./lib/*\": \"./src/lib/*.ts\","
	  "\"./internal/*\": null, \"./package.json\": \"./package.json\"}}" },
	{ "packages/util/src/index.ts", "export const x = 1;\n" },
	{ "packages/util/src/feature.ts", "export const f = 1;\n" },
	{ "packages/util/src/lib/a.ts", "export const a = 1;\n" },
	{ "packages/util/src/internal/secret.ts", "export const s = 1;\n" },
	{ "packages/str/package.json", "{\"name\": \"str-pkg\", \"exports\": \"./main.js\"}" },
	{ "packages/str/main.js", "module.exports = 1;\n" },
	{ "packages/cond/package.json",
	  "{\"name\": \"cond\", \"exports\": {\"require\": \"./cjs/index.js\", \"default\": \"./esm/index.js\"}}" },
	{ "packages/cond/esm/index.js", "export default 1;\n" },
	{ "packages/arr/package.json",
	  "{\"name\": \"arr\", \"exports\": {\".\": [{\"import\": \"./gone.js\"}, \"./lib/main.js\"]}}" },
	{ "packages/arr/lib/main.js", "export default 1;\n" },
	{ "packages/mod/package.json",
	  "{\"name\": \"mainmod\", \"main\": \"dist/index.js\", \"module\": \"lib/index.mjs\"}" },
	{ "packages/mod/lib/index.mjs", "export default 1;\n" },
	{ "packages/plain/package.json", "{\"name\": \"plain\"}" },
	{ "packages/plain/index.ts", "export {};\n" },
	{ "packages/plain/sub/x.ts", "export {};\n" },
	{ "packages/built/package.json", "{\"name\": \"built\", \"main\": \"dist/index.js\"}" },
	{ "packages/built/src/index.ts", "export {};\n" },
	{ "packages/bad/package.json", "{\"name\": \"bad\", oops" },
	{ "packages/bad/index.js", "x\n" },
	{ "node_modules/react/package.json", "{\"name\": \"react\", \"main\": \"index.js\"}" },
	{ "node_modules/react/index.js", "x\n" },
	/* tsconfig / jsconfig */
	{ "tsconfig.base.json",
	  "{\n  // shared\n  \"compilerOptions\": {\"paths\": {\"@shared/*\": [\"libs/shared/*\"],},},\n}\n" },
	{ "libs/shared/log.ts", "export {};\n" },
	{ "apps/web/tsconfig.json",
	  "/* the web app */\n{\n  \"extends\": \"../../tsconfig.base.json\",\n"
	  "  \"compilerOptions\": {\n    // where sources live\n    \"baseUrl\": \".\",\n"
	  "    \"paths\": {\n      \"@/*\": [\"src/*\", \"generated/*\"],\n"
	  "      \"config\": [\"src/config/index.ts\"], // an exact one\n"
	  "      \"url//like\": [\"src/*/x\"],\n    },\n  },\n}\n" },
	{ "apps/web/src/app.ts", "import x from '@/components/button';\n" },
	{ "apps/web/src/deep/file.ts", "x\n" },
	{ "apps/web/src/components/button.tsx", "x\n" },
	{ "apps/web/src/config/index.ts", "x\n" },
	{ "apps/web/generated/api.ts", "x\n" },
	{ "apps/api/tsconfig.json", "{\"extends\": \"../../tsconfig.base\"}" },
	{ "apps/api/main.ts", "x\n" },
	{ "apps/loop/tsconfig.json", "{\"extends\": \"./tsconfig.json\", \"compilerOptions\": {\"baseUrl\": \"src\"}}" },
	{ "apps/loop/src/m.ts", "x\n" },
	{ "apps/loop/main.ts", "x\n" },
	{ "packages/tsconfig/package.json", "{\"name\": \"@acme/tsconfig\"}" },
	{ "packages/tsconfig/base.json",
	  "{\"compilerOptions\": {\"paths\": {\"#shared/*\": [\"../../libs/shared/*\"]}}}" },
	{ "apps/pkgext/tsconfig.json",
	  "{\"extends\": [\"@acme/tsconfig/base.json\", \"@tsconfig/node22/tsconfig.json\"]}" },
	{ "apps/pkgext/main.ts", "x\n" },
	{ "apps/broken/tsconfig.json", "{ \"compilerOptions\": { \"baseUrl\": [ /* unterminated" },
	{ "apps/broken/main.ts", "x\n" },
	{ "apps/broken/util.ts", "x\n" },
	{ "apps/js/jsconfig.json", "{\"compilerOptions\": {\"baseUrl\": \"src\"}}" },
	{ "apps/js/src/index.js", "x\n" },
	{ "apps/js/src/lib/m.js", "x\n" },
	/* C and compile_commands.json */
	{ "compile_commands.json",
	  "[{\"directory\": \"@ROOT@/build\", \"file\": \"../csrc/main.c\",\n"
	  "  \"arguments\": [\"cc\", \"-I../cinc\", \"-iquote\", \"../cq\", \"-isystem\", \"/usr/include\","
	  " \"-c\", \"../csrc/main.c\"]},\n"
	  " {\"directory\": \"@ROOT@\", \"file\": \"@ROOT@/csrc/other.c\",\n"
	  "  \"command\": \"cc -DX='a b' -I third/include -I'/nowhere' -c csrc/other.c\"},\n"
	  " {\"directory\": \"/elsewhere\", \"file\": \"x.c\", \"command\": \"cc -I. -c x.c\"},\n"
	  " {\"file\": 42}, 17,\n"
	  " {\"directory\": \"@ROOT@\", \"file\": \"csrc/third.c\", \"arguments\": [\"cc\", \"-Iwinc\"]},\n"
	  " {\"directory\": \"@ROOT@\", \"file\": \"csrc/main.c\", \"arguments\": [\"cc\", \"-I\", \"m2inc\"]}]\n" },
	{ "csrc/third.c", "x\n" },
	{ "winc/w.h", "x\n" },
	{ "m2inc/m2.h", "x\n" },
	{ "decoy/w.h", "x\n" },
	{ "decoy/m2.h", "x\n" },
	{ "csrc/main.c", "#include \"proj/api.h\"\n" },
	{ "csrc/other.c", "x\n" },
	{ "csrc/hdr.h", "x\n" },
	{ "cinc/proj/api.h", "x\n" },
	{ "vendor/proj/api.h", "x\n" },
	{ "cq/q.h", "x\n" },
	{ "third/include/t.h", "x\n" },
	{ "elsewhere/e.c", "x\n" },
	/* Java and Kotlin */
	{ "mod1/src/main/java/com/acme/App.java", "x\n" },
	{ "mod2/src/main/java/com/acme/util/Strings.java", "x\n" },
	{ "mod2/src/main/kotlin/com/acme/kt/Ext.kt", "x\n" },
	{ "mod2/src/test/java/com/acme/AppTest.java", "x\n" },
	{ "mod3/src/main/java/com/acme/util/Strings.java", "x\n" },
	{ "mod3/src/test/java/com/acme/T.java", "x\n" },
	/* source roots only a `package` line tells */
	{ "java/core/org/x/Util.java", "/* (c) */\n// x\npackage org.x;\nclass Util {}\n" },
	{ "java/core/org/x/More.java", "package org.x;\n" },
	{ "old/org/x/Util.java", "package legacy.org.x;\n" },
	{ "kt/src/com/k/K.kt", "@file:JvmName(\"K\")\npackage com.k\n\nfun k() = 1\n" },
	{ "apps/Main.java", "import org.x.Util;\n" },
	/* Go: a replace, nested modules, a module beside another */
	{ "gosvc/a/go.mod", "module example.com/a\n\nreplace example.com/b => ../b\n"
	  "replace (\n\texample.com/c v1.0.0 => ./third/c\n\texample.com/d => example.com/d2 v1.0.0\n)\n" },
	{ "gosvc/a/main.go", "x\n" },
	{ "gosvc/a/third/c/c.go", "x\n" },
	{ "gosvc/b/go.mod", "module example.com/b\n" },
	{ "gosvc/b/x/x.go", "x\n" },
	{ "gosvc/nested/go.mod", "module example.com/nest\n" },
	{ "gosvc/nested/q/q.go", "x\n" },
	{ "gosvc/nested/inner/go.mod", "module example.com/nest/inner/v2\n" },
	{ "gosvc/nested/inner/p/p.go", "x\n" },
};

static const struct tcase cases[] = {
	/* package.json: "exports" */
	{ "typescript", "apps/web/src/app.ts", "@acme/util", "packages/util/src/index.ts" },
	{ "typescript", "apps/web/src/app.ts", "@acme/util/feature", "packages/util/src/feature.ts" },
	{ "typescript", "apps/web/src/app.ts", "@acme/util/lib/a", "packages/util/src/lib/a.ts" },
	{ "typescript", "apps/web/src/app.ts", "@acme/util/lib/nope", NULL },
	{ "typescript", "apps/web/src/app.ts", "@acme/util/internal/secret", NULL },	/* null: excluded */
	{ "typescript", "apps/web/src/app.ts", "@acme/utility", NULL },	/* not a prefix by segments */
	{ "javascript", "apps/js/src/index.js", "str-pkg", "packages/str/main.js" },
	{ "javascript", "apps/js/src/index.js", "cond", "packages/cond/esm/index.js" },
	{ "javascript", "apps/js/src/index.js", "arr", "packages/arr/lib/main.js" },
	/* "module", "main", index files, src/ */
	{ "javascript", "apps/js/src/index.js", "mainmod", "packages/mod/lib/index.mjs" },
	{ "typescript", "apps/api/main.ts", "plain", "packages/plain/index.ts" },
	{ "typescript", "apps/api/main.ts", "plain/sub/x", "packages/plain/sub/x.ts" },
	{ "typescript", "apps/api/main.ts", "built", "packages/built/src/index.ts" },
	/* third-party packages, a malformed package.json, node_modules */
	{ "typescript", "apps/api/main.ts", "react", NULL },
	{ "typescript", "apps/api/main.ts", "lodash/fp", NULL },
	{ "typescript", "apps/api/main.ts", "bad", NULL },
	/* tsconfig "paths" (several targets in order), exact keys, "baseUrl" */
	{ "typescript", "apps/web/src/app.ts", "@/components/button", "apps/web/src/components/button.tsx" },
	{ "typescript", "apps/web/src/deep/file.ts", "@/api", "apps/web/generated/api.ts" },
	{ "typescript", "apps/web/src/app.ts", "config", "apps/web/src/config/index.ts" },
	{ "typescript", "apps/web/src/app.ts", "src/config", "apps/web/src/config/index.ts" },
	{ "typescript", "apps/web/src/app.ts", "@/nope", NULL },
	/* the nearest tsconfig only: apps/web's paths replace the base's */
	{ "typescript", "apps/web/src/app.ts", "@shared/log", NULL },
	/* "extends" without ".json", paths relative to the config that has them */
	{ "typescript", "apps/api/main.ts", "@shared/log", "libs/shared/log.ts" },
	/* "extends" to a workspace package's config (of an array, the last in the repository) */
	{ "typescript", "apps/pkgext/main.ts", "#shared/log", "libs/shared/log.ts" },
	/* an "extends" loop stops; a malformed tsconfig is ignored */
	{ "typescript", "apps/loop/main.ts", "m", "apps/loop/src/m.ts" },
	{ "typescript", "apps/broken/main.ts", "@/x", NULL },
	{ "typescript", "apps/broken/main.ts", "./util", "apps/broken/util.ts" },
	/* jsconfig.json */
	{ "javascript", "apps/js/src/index.js", "lib/m", "apps/js/src/lib/m.js" },
	/* compile_commands.json: -I, -iquote of the file's entry (directory-relative) */
	{ "c", "csrc/main.c", "proj/api.h", "cinc/proj/api.h" },
	{ "c", "csrc/main.c", "q.h", "cq/q.h" },
	{ "c", "csrc/other.c", "t.h", "third/include/t.h" },
	{ "c", "csrc/other.c", "q.h", "cq/q.h" },	/* the directory's entries */
	{ "c", "csrc/hdr.h", "proj/api.h", "cinc/proj/api.h" },	/* a header: its directory's */
	{ "c", "elsewhere/e.c", "proj/api.h", NULL },
	/* a file, a directory with entries apart in the database: joined */
	{ "c", "csrc/main.c", "m2.h", "m2inc/m2.h" },
	{ "c", "csrc/hdr.h", "w.h", "winc/w.h" },
	{ "c", "csrc/hdr.h", "m2.h", "m2inc/m2.h" },	/* no entry: ambiguous suffix */
	{ "c", "csrc/main.c", "stdio.h", NULL },
	/* Java and Kotlin source roots, static and on-demand imports */
	{ "java", "mod3/src/test/java/com/acme/T.java", "com.acme.util.Strings",
	  "mod3/src/main/java/com/acme/util/Strings.java" },
	{ "java", "mod2/src/test/java/com/acme/AppTest.java", "com.acme.util.Strings",
	  "mod2/src/main/java/com/acme/util/Strings.java" },
	{ "java", "mod2/src/test/java/com/acme/AppTest.java", "com.acme.kt.Ext",
	  "mod2/src/main/kotlin/com/acme/kt/Ext.kt" },
	{ "java", "mod1/src/main/java/com/acme/App.java", "com.acme.kt.Ext",
	  "mod2/src/main/kotlin/com/acme/kt/Ext.kt" },
	{ "java", "mod3/src/test/java/com/acme/T.java", "com.acme.util.Strings.join",
	  "mod3/src/main/java/com/acme/util/Strings.java" },
	{ "java", "mod3/src/test/java/com/acme/T.java", "com.acme.util.Strings.*",
	  "mod3/src/main/java/com/acme/util/Strings.java" },
	{ "java", "mod3/src/test/java/com/acme/T.java", "com.acme.util", "mod3/src/main/java/com/acme/util" },
	{ "java", "mod1/src/main/java/com/acme/App.java", "com.acme.kt", "mod2/src/main/kotlin/com/acme/kt" },
	{ "java", "mod1/src/main/java/com/acme/App.java", "java.util", NULL },
	{ "java", "mod1/src/main/java/com/acme/App.java", "java.util.List", NULL },
	{ "java", "apps/Main.java", "org.x.Util", "java/core/org/x/Util.java" },
	{ "java", "apps/Main.java", "org.x", "java/core/org/x" },
	{ "java", "apps/Main.java", "com.k.K", "kt/src/com/k/K.kt" },
	/* go.mod: replace to a local directory, nested modules, sibling modules */
	{ "go", "gosvc/a/main.go", "example.com/b/x", "gosvc/b/x" },
	{ "go", "gosvc/a/main.go", "example.com/c", "gosvc/a/third/c" },
	{ "go", "gosvc/a/main.go", "example.com/d", NULL },	/* replaced by a module, not a directory */
	{ "go", "gosvc/nested/q/q.go", "example.com/nest/inner/v2/p", "gosvc/nested/inner/p" },
	{ "go", "gosvc/nested/inner/p/p.go", "example.com/nest/q", "gosvc/nested/q" },
	{ "go", "gosvc/b/x/x.go", "example.com/a", "gosvc/a" },
	{ "go", "gosvc/b/x/x.go", "example.com/zzz", NULL },
};

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	const char *paths[ARRAY_SIZE(files)];
	struct fileset set;
	struct import_ctx ctx = { 0 };
	struct thread_arg args[4];
	pthread_t threads[4];
	int bad = 0;

	util_init(argv[0]);
	tmpdir = xasprintf("%s/ci-unit-imports-config.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		die_code(99, "cannot create a temporary directory");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		write_file(files[i].path, files[i].text);
		paths[i] = files[i].path;
	}
	qsort(paths, ARRAY_SIZE(paths), sizeof(*paths), cmp_str);
	set.paths = paths;
	set.nr = ARRAY_SIZE(paths);

	printf("1..%zu\n", ARRAY_SIZE(cases) + 10);
	ctx.root = tmpdir;
	ctx.files = &set;
	import_ctx_load(&ctx);
	run_cases(&ctx, cases, ARRAY_SIZE(cases), "");

	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){ &ctx, cases, ARRAY_SIZE(cases), 400, 0 };
		if (pthread_create(&threads[i], NULL, resolve_many, &args[i]))
			die_code(99, "cannot start a thread");
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		bad += args[i].bad;
	}
	printf("%sok %d - 4 threads share one loaded configuration\n", bad ? "not " : "", ++test_nr);
	failures += bad != 0;
	import_ctx_release(&ctx);
	import_ctx_release(&ctx);	/* twice: a no-op */

	/* without the configuration: what it added is not found, the rest is */
	is_path(import_resolve(&ctx, "typescript", "apps/web/src/app.ts", "@acme/util"), NULL,
		"unloaded: no workspace packages");
	is_path(import_resolve(&ctx, "c", "csrc/main.c", "proj/api.h"), NULL,
		"unloaded: no compile_commands.json (two proj/api.h)");
	is_path(import_resolve(&ctx, "go", "gosvc/nested/q/q.go", "example.com/nest/q"), "gosvc/nested/q",
		"unloaded: go.mod read per import");
	is_path(import_resolve(&ctx, "go", "gosvc/a/main.go", "example.com/c"), "gosvc/a/third/c",
		"unloaded: replace read per import");

	printf("%sok %d - import_is_config\n",
	       import_is_config("a/tsconfig.json") && import_is_config("tsconfig.base.json") &&
	       import_is_config("go.mod") && import_is_config("x/package.json") &&
	       import_is_config("build/compile_commands.json") && !import_is_config("a/main.go") &&
	       !import_is_config("tsconfig.ts") ? "" : "not ", ++test_nr);

	/* without a file set: the root's own configuration files */
	ctx.files = NULL;
	import_ctx_load(&ctx);
	is_path(import_resolve(&ctx, "c", "csrc/main.c", "proj/api.h"), "cinc/proj/api.h",
		"no file set: compile_commands.json");
	is_path(import_resolve(&ctx, "typescript", "apps/web/src/app.ts", "@acme/util"), NULL,
		"no file set: no workspace packages below the root");
	import_ctx_release(&ctx);

	/* a root whose configuration files are all missing or broken */
	ctx.root = "/nonexistent-root";
	ctx.files = &set;
	import_ctx_load(&ctx);
	is_path(import_resolve(&ctx, "typescript", "apps/web/src/app.ts", "@acme/util"), NULL,
		"missing configuration: nothing found, no crash");
	import_ctx_release(&ctx);
	{
		char s[] = "{\"a\": \"x // y /* z */ ,}\", // c\n \"b\": [1, 2,], /* d */ \"c\": {\"e\": 1,},}";
		json_t *j;

		importcfg_strip_jsonc(s, strlen(s));
		j = json_loads(s, 0, NULL);
		printf("%sok %d - comments and trailing commas blanked, strings kept\n",
		       j && !strcmp(json_string_value(json_object_get(j, "a")), "x // y /* z */ ,}") &&
		       json_array_size(json_object_get(j, "b")) == 2 &&
		       json_integer_value(json_object_get(json_object_get(j, "c"), "e")) == 1 ? "" : "not ",
		       ++test_nr);
		json_decref(j);
	}

	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(tmpdir);
	return failures ? 1 : 0;
}
