#!/bin/sh
# t0984-graph-store-incremental-imports: the incremental graph store
# (libcommon/graph/gsdelta.c) where binding follows imports (TypeScript,
# JavaScript, Go): a definition added to an imported module, or removed from
# it, changes what other files' calls reach; what an update stores is what a
# fresh build stores.  A new file that an unchanged file's import now
# resolves to makes the update bind the whole graph.  A TypeScript or
# JavaScript file changed makes it bind the whole graph too (its calls are
# bound as callers binds them, through other files' re-exports and classes).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript || ! test_have_lang javascript || ! test_have_lang go; then
	test_skip 'incremental graph store, imports' 'the typescript, javascript or go grammar is not compiled in'
	test_done
fi

. "$CI_SRC_DIR/tests/gstore-lib.sh"
whole_ts="ci-index: graph store: the whole graph bound (many files or a Python or TS/JS file changed)"

test_expect_success 'setup: TypeScript modules importing each other, a namesake not imported; Go packages' '
	git init -q repo &&
	write_lines src/util.ts "export function fmt(x: number) { return String(x) }" \
		"export function pad(s: string) { return s }" &&
	write_lines src/main.ts "import { fmt } from \"./util\"" "export function run() { return fmt(1) + load() }" &&
	write_lines src/other.ts "export function fmt(x: number) { return x }" "export function idle() { return 0 }" &&
	write_lines web/app.js "import { helper } from \"./lib.js\"" "export function start() { return helper() }" &&
	write_lines web/lib.js "export function helper() { return 1 }" "export function unused() { return 2 }" &&
	write_lines go.mod "module example.com/m" "" "go 1.21" &&
	write_lines pkg/a/a.go "package a" "" "func Get() int { return 1 }" "" "func spare() int { return 2 }" &&
	write_lines cmd/tool/main.go "package main" "" "import \"example.com/m/pkg/a\"" "" \
		"func main() { _ = a.Get() }" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null) &&
	same_as_built
'

test_expect_success 'a function added to an imported module: the importer re-bound' '
	write_lines src/util.ts "export function fmt(x: number) { return String(x) }" \
		"export function pad(s: string) { return s }" "export function load() { return pad(\"a\") }" &&
	update && grep -qx "$whole_ts" path &&
	same_as_built
'

test_expect_success 'the imported definition removed: the call falls to the namesake' '
	write_lines src/util.ts "export function pad(s: string) { return s }" "export function load() { return pad(\"a\") }" &&
	update && grep -qx "$whole_ts" path &&
	same_as_built
'

test_expect_success 'JavaScript and Go edits' '
	write_lines web/lib.js "export function helper() { return unused() }" "export function unused() { return 2 }" &&
	update && grep -qx "$whole_ts" path &&
	same_as_built &&
	write_lines pkg/a/a.go "package a" "" "func Get() int { return spare() }" "" "func spare() int { return 2 }" &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built &&
	write_lines pkg/a/b.go "package a" "" "func Put() int { return Get() }" &&
	update && grep -q "graph store: .*" path &&
	same_as_built
'

test_expect_success 'a new file an unchanged import now resolves to: the whole graph is bound' '
	write_lines web/extra.js "import { more } from \"./more.js\"" "export function go() { return more() }" &&
	update && same_as_built &&
	write_lines web/more.js "export function more() { return 1 }" &&
	update && grep -q "^ci-index: graph store: the whole graph bound (" path &&
	same_as_built
'

test_done
