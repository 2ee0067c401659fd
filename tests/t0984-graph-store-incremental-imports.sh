#!/bin/sh
# t0984-graph-store-incremental-imports: the incremental graph store
# (libcommon/graph/gsdelta.c) where binding follows imports (TypeScript,
# JavaScript, Go): a definition added to an imported module, or removed from
# it, changes what other files' calls reach; what an update stores is what a
# fresh build stores.  A new file that an unchanged file's import now
# resolves to makes the update bind the whole graph.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript || ! test_have_lang javascript || ! test_have_lang go; then
	test_skip 'incremental graph store, imports' 'the typescript, javascript or go grammar is not compiled in'
	test_done
fi

# tables <dir>: the stored answers of dir's index, ids resolved
tables() {
	sqlite3 "$1/.ci-index/index.db" "
	SELECT f.path, d.name, d.kind, d.line, d.col, g.uses, g.self_calls, g.namesake_calls, g.entry
	FROM graph_defs g JOIN graph_files f ON f.id = g.fid JOIN defs d ON d.rowid = g.def ORDER BY 1, 2, 3, 4, 5;
	SELECT fa.path, fb.path, c.calls FROM graph_calls c JOIN graph_files fa ON fa.id = c.a
	JOIN graph_files fb ON fb.id = c.b ORDER BY 1, 2;
	SELECT path FROM graph_files ORDER BY 1;
	SELECT tok FROM graph_prefixes ORDER BY 1;
	SELECT version FROM graph_stamp; SELECT version FROM graph_base"
}

# answers <dir>: dead (every kind too) and arch, messages and statuses
answers() {
	for a in dead "--kind variable dead" "--lang c dead" arch; do
		(cd "$1" && ci-refs --json $a 2>&1; echo "exit $?") || return 1
	done
}

# same_as_built: repo's stored tables and answers are a fresh build's
same_as_built() {
	rm -rf fresh && cp -R repo fresh && rm -rf fresh/.ci-index &&
	(cd fresh && ci-index build 2>/dev/null) &&
	tables repo >t.updated && tables fresh >t.built &&
	test "$(wc -l <t.built)" -gt 10 &&
	test_cmp t.built t.updated &&
	answers repo >a.updated && answers fresh >a.built &&
	grep -q "\"_type\":\"dead\"" a.built &&
	test_cmp a.built a.updated
}

# update: ci-index -v update, its graph store line into path
update() {
	(cd repo && ci-index -v update 2>&1) >log &&
	grep "graph store:" log >path
}

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
	update && grep -qx "ci-index: graph store: 2 files re-bound" path &&
	same_as_built
'

test_expect_success 'the imported definition removed: the call falls to the namesake' '
	write_lines src/util.ts "export function pad(s: string) { return s }" "export function load() { return pad(\"a\") }" &&
	update && grep -qx "ci-index: graph store: 3 files re-bound" path &&
	same_as_built
'

test_expect_success 'JavaScript and Go edits' '
	write_lines web/lib.js "export function helper() { return unused() }" "export function unused() { return 2 }" &&
	write_lines pkg/a/a.go "package a" "" "func Get() int { return spare() }" "" "func spare() int { return 2 }" &&
	update && grep -qx "ci-index: graph store: 2 files re-bound" path &&
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
