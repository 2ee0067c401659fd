#!/bin/sh
# t0989-graph-bind-ts-aliases: ci-refs callers and callees on TypeScript
# follow a function's other names, as the TypeScript language service does
# (bench/graph-tsserver.js): `import { create as stringCreate }` then
# `export { stringCreate as string }` in an index file, `import { string }`
# from it, `import * as y` and `y.string()`, `export * from`, a default export
# imported under another name; a namesake the imports do not reach is left out.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS aliases' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a function exported under another name through an index file' '
	git init -q repo &&
	write_lines src/string.ts "export function create(): Str;" "export function create(a?: number) {" \
		"	return new Str()" "}" "export default class Str {" "	min(n: number): this {" "		return this" "	}" "}" &&
	write_lines src/util.ts "export default function helper() {" "	return 1" "}" "export function other() {" "	return 2" "}" &&
	write_lines src/index.ts "import Str, { create as stringCreate } from \"./string\"" \
		"import helperFn from \"./util\"" "export { stringCreate as string, Str, helperFn as help }" \
		"export * from \"./util\"" &&
	write_lines test/a.ts "import { string, help, other } from \"../src\"" "import * as y from \"../src\"" \
		"" "export function main() {" "	string()" "	y.string()" "	help()" "	other()" "	return y.other()" "}" &&
	write_lines test/b.ts "function string() {" "	return 0" "}" "export function local() {" "	return string()" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: name path:line binding -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.name) \(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'create: string() and y.string() reach the implementation, not the string() of b.ts' '
	callers create >actual &&
	printf "%s\n" "string test/a.ts:5 import src/string.ts:2" "string test/a.ts:6 import src/string.ts:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'helper: a default export imported as helperFn, exported as help' '
	callers helper >actual &&
	echo "help test/a.ts:7 import src/util.ts:1" >expect &&
	test_cmp expect actual
'

test_expect_success 'other: through export * from, by name and on the namespace' '
	callers other >actual &&
	printf "%s\n" "other test/a.ts:8 import src/util.ts:4" "other test/a.ts:9 import src/util.ts:4" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees main: each alias bound to its definition' '
	(cd repo && ci-refs --json callees main 2>/dev/null) |
		"$JQ" -r "\"\(.name) \(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort >actual &&
	printf "%s\n" "help 7 import src/util.ts:1" "other 8 import src/util.ts:4" "other 9 import src/util.ts:4" \
		"string 5 import src/string.ts:2" "string 6 import src/string.ts:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'a file of more than 512 importers: the bound is said on stderr, the answer still given' '
	git init -q wide &&
	mkdir wide/src wide/use &&
	echo "export function make(n: number) { return n }" >wide/src/lib.ts &&
	i=0 &&
	while test $i -lt 515; do
		printf "import { make } from \"../src/lib\";\nexport function u$i() { return make($i) }\n" \
			>wide/use/u$i.ts || return 1
		i=$((i + 1))
	done &&
	printf "export { make as build } from \"./use/u0\";\n" >wide/index.ts &&
	(cd wide && ci-index --no-progress build 2>/dev/null) &&
	(cd wide && ci-refs --json --limit 1000 callers make 2>../err) >out &&
	test_grep "were followed to 256 re-exports and 512 importers" err &&
	test "$(grep -c "\"_type\":\"occurrence\"" out)" = 515 &&
	test "$(grep -c "followed to" err)" = 1
'

test_done
