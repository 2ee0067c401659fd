#!/bin/sh
# t0950-graph-imports-config: imports resolved through the repository's build
# configuration (libcommon/parse/importcfg.c), end to end: a JS/TS monorepo
# (package.json workspaces with "exports" and "main", tsconfig "paths" and
# "extends", a tsconfig with comments and trailing commas, a malformed one),
# a C tree with compile_commands.json, Java source roots with an on-demand and
# a static import, Go modules joined by a replace directive.  Checked with
# ci-refs deps, cycles and impact after ci-index build, and after an update
# that changes a tsconfig.json.
. "$(dirname "$0")/lib.sh"

for l in typescript c java go; do
	if ! test_have_lang $l; then
		test_skip 'imports through build configuration' "the $l grammar is not compiled in"
		test_done
	fi
done

test_expect_success 'setup: a monorepo, a C tree, Java modules, Go modules' '
	git init -q repo &&
	root=$(cd repo && pwd -P) &&
	write_lines package.json "{\"name\": \"demo\", \"private\": true, \"workspaces\": [\"packages/*\"]}" &&
	write_lines tsconfig.base.json "{" "  // shared by the apps" \
		"  \"compilerOptions\": {\"strict\": true,}," "}" &&
	write_lines packages/core/package.json "{\"name\": \"@demo/core\", \"exports\": {" \
		"  \".\": {\"types\": \"./dist/index.d.ts\", \"import\": \"./src/index.ts\"}," \
		"  \"./math\": \"./src/math.ts\"}}" &&
	write_lines packages/core/src/index.ts "import { button } from \"@demo/ui\";" \
		"export const core = () => button;" &&
	write_lines packages/core/src/math.ts "export const add = (a: number, b: number) => a + b;" &&
	write_lines packages/ui/package.json "{\"name\": \"@demo/ui\", \"main\": \"dist/index.js\"}" &&
	write_lines packages/ui/src/index.ts "import { core } from \"@demo/core\";" \
		"export const button = () => core;" &&
	write_lines apps/web/tsconfig.json "/* the web app */" "{" \
		"  \"extends\": \"../../tsconfig.base\"," "  \"compilerOptions\": {" \
		"    \"paths\": {\"~/*\": [\"./src/*\", \"./gen/*\"],}, // two places" "  }," "}" &&
	write_lines apps/web/src/main.ts "import { util } from \"~/util\";" \
		"import { api } from \"~/api\";" "import { core } from \"@demo/core\";" \
		"import React from \"react\";" "export const main = () => util(core, api, React);" &&
	write_lines apps/web/src/util.ts "import { add } from \"@demo/core/math\";" \
		"export const util = (...a: unknown[]) => add(a.length, 1);" &&
	write_lines apps/web/gen/api.ts "export const api = 1;" &&
	write_lines apps/web/lib/util.ts "export const util = 2;" &&
	write_lines apps/broken/tsconfig.json "{ \"compilerOptions\": { \"paths\": [ /* cut short" &&
	write_lines apps/broken/x.ts "import { y } from \"./y\";" "import { z } from \"~/z\";" &&
	write_lines apps/broken/y.ts "export const y = 1;" &&
	write_lines csrc/main.c "#include \"api.h\"" "int main(void) { return api(); }" &&
	write_lines headers/pub/api.h "int api(void);" &&
	write_lines legacy/api.h "int api(void);" &&
	write_lines compile_commands.json "[{\"directory\": \"$root/build\"," \
		"  \"command\": \"cc -I../headers/pub -c ../csrc/main.c\", \"file\": \"../csrc/main.c\"}]" &&
	write_lines svc/src/main/java/com/demo/App.java "package com.demo;" \
		"import com.demo.util.*;" "import static com.demo.util.Strings.join;" \
		"class App { String s = join(); }" &&
	write_lines lib/src/main/java/com/demo/util/Strings.java "package com.demo.util;" \
		"public class Strings { public static String join() { return \"\"; } }" &&
	write_lines goa/go.mod "module example.com/a" "" "replace example.com/b => ../gob" &&
	write_lines goa/main.go "package main" "import \"example.com/b/x\"" "func main() { x.X() }" &&
	write_lines gob/go.mod "module example.com/b" &&
	write_lines gob/x/x.go "package x" "func X() {}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>../err) &&
	test_must_be_empty err
'

# deps <file>: what ci-refs deps says <file> imports, as {target, resolved}
deps() {
	(cd repo && ci-refs --json deps "$1") >out &&
	"$JQ" -c "{target, resolved}" out
}

test_expect_success 'workspace packages: exports (condition, subpath), main falling back to src/' '
	deps packages/core/src/index.ts >actual &&
	echo "{\"target\":\"@demo/ui\",\"resolved\":\"packages/ui/src/index.ts\"}" >expect &&
	test_cmp_json expect actual &&
	deps apps/web/src/util.ts >actual &&
	echo "{\"target\":\"@demo/core/math\",\"resolved\":\"packages/core/src/math.ts\"}" >expect &&
	test_cmp_json expect actual
'

test_expect_success 'tsconfig paths (second target, extends, comments); third-party stays unresolved' '
	deps apps/web/src/main.ts >actual &&
	cat >expect <<-\EOF &&
	{"target":"~/util","resolved":"apps/web/src/util.ts"}
	{"target":"~/api","resolved":"apps/web/gen/api.ts"}
	{"target":"@demo/core","resolved":"packages/core/src/index.ts"}
	{"target":"react","resolved":null}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'a malformed tsconfig is ignored, relative imports still resolve' '
	deps apps/broken/x.ts >actual &&
	cat >expect <<-\EOF &&
	{"target":"./y","resolved":"apps/broken/y.ts"}
	{"target":"~/z","resolved":null}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'compile_commands.json: the -I directory of the entry, not a namesake' '
	deps csrc/main.c >actual &&
	echo "{\"target\":\"api.h\",\"resolved\":\"headers/pub/api.h\"}" >expect &&
	test_cmp_json expect actual
'

test_expect_success 'Java: source roots of other modules, on-demand and static imports' '
	deps svc/src/main/java/com/demo/App.java >actual &&
	cat >expect <<-\EOF &&
	{"target":"com.demo.util","resolved":"lib/src/main/java/com/demo/util"}
	{"target":"com.demo.util.Strings.join","resolved":"lib/src/main/java/com/demo/util/Strings.java"}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'Go: a replace directive to a sibling module, the package directory' '
	deps goa/main.go >actual &&
	echo "{\"target\":\"example.com/b/x\",\"resolved\":\"gob/x\"}" >expect &&
	test_cmp_json expect actual
'

test_expect_success 'ci-refs cycles: the two packages importing each other by name' '
	(cd repo && ci-refs --json cycles) >out &&
	"$JQ" -c ".files" out >actual &&
	echo "[\"packages/core/src/index.ts\",\"packages/ui/src/index.ts\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'ci-refs impact: the importers of a package subpath, through tsconfig paths' '
	(cd repo && ci-refs --json impact packages/core/src/math.ts --mode deps) >out &&
	"$JQ" -c "{path, depth}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"apps/web/src/util.ts","depth":1}
	{"path":"apps/web/src/main.ts","depth":2}
	EOF
	test_cmp expect actual
'

test_expect_success 'ci-index update: a changed tsconfig.json moves the imports of unchanged files' '
	write_lines apps/web/tsconfig.json "{\"compilerOptions\": {\"paths\": {\"~/*\": [\"./lib/*\", \"./gen/*\"]}}}" &&
	(cd repo && ci-index update 2>../err) &&
	test_must_be_empty err &&
	deps apps/web/src/main.ts >actual &&
	cat >expect <<-\EOF &&
	{"target":"~/util","resolved":"apps/web/lib/util.ts"}
	{"target":"~/api","resolved":"apps/web/gen/api.ts"}
	{"target":"@demo/core","resolved":"packages/core/src/index.ts"}
	{"target":"react","resolved":null}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'build --rev: the configuration read from the commit (the tsconfig change is not in it)' '
	(cd repo && ci-index --index ../snap.db build --rev HEAD 2>../err) &&
	test_must_be_empty err &&
	(cd repo && ci-refs --index ../snap.db --json deps apps/web/src/main.ts) >out &&
	"$JQ" -c "{target, resolved}" out >actual &&
	cat >expect <<-\EOF &&
	{"target":"~/util","resolved":"apps/web/src/util.ts"}
	{"target":"~/api","resolved":"apps/web/gen/api.ts"}
	{"target":"@demo/core","resolved":"packages/core/src/index.ts"}
	{"target":"react","resolved":null}
	EOF
	test_cmp_json expect actual &&
	(cd repo && ci-refs --index ../snap.db --json deps csrc/main.c) >out &&
	"$JQ" -c "{target, resolved}" out >actual &&
	echo "{\"target\":\"api.h\",\"resolved\":\"headers/pub/api.h\"}" >expect &&
	test_cmp_json expect actual &&
	(cd repo && ci-refs --index ../snap.db --json deps goa/main.go) >out &&
	"$JQ" -c "{target, resolved}" out >actual &&
	echo "{\"target\":\"example.com/b/x\",\"resolved\":\"gob/x\"}" >expect &&
	test_cmp_json expect actual
'

test_expect_success 'a malformed compile_commands.json and package.json: the build goes on without them' '
	printf "[{\"directory\": " >repo/compile_commands.json &&
	printf "{\"name\": \"@demo/ui\", " >repo/packages/ui/package.json &&
	(cd repo && ci-index build 2>../err) &&
	test_must_be_empty err &&
	deps csrc/main.c >actual &&
	echo "{\"target\":\"api.h\",\"resolved\":null}" >expect &&
	test_cmp_json expect actual &&
	deps packages/core/src/index.ts >actual &&
	echo "{\"target\":\"@demo/ui\",\"resolved\":null}" >expect &&
	test_cmp_json expect actual &&
	deps apps/web/src/util.ts >actual &&
	echo "{\"target\":\"@demo/core/math\",\"resolved\":\"packages/core/src/math.ts\"}" >expect &&
	test_cmp_json expect actual
'

test_done
