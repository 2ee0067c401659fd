#!/bin/sh
# t0986-graph-bind-js: ci-refs callers on JavaScript/TypeScript binds as the
# TypeScript language service does (bench/graph-tsserver.js) where the text
# tells: a bare call reaches the function nested in an enclosing function of
# the same file before a namesake elsewhere, and a call on an unknown
# receiver (other.get()) binds to nothing; a TypeScript call reaches the one
# function its imports reach through an index file's re-exports, at its
# implementation, not an overload signature.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang javascript || ! test_have_lang typescript; then
	test_skip 'JS/TS binding' 'the javascript or typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: findById nested in two test files, a get() method in an object' '
	git init -q repo &&
	write_lines a.js "function runTest() {" "	const findById = (s, id) => s[id]" \
		"	const store = { get() { return 1 } }" "	function it() {" "		return findById(store, 1) + other.get(2)" \
		"	}" "	return it()" "}" &&
	write_lines b.js "describe(() => {" "	function findById(s, id) {" "		return s[id]" "	}" "})" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers findById: the call in a.js reaches a.js its own nested function' '
	(cd repo && ci-refs --json callers findById) >out &&
	"$JQ" -c "{path, line, binding, def: .definition}" out >actual &&
	echo "{\"path\":\"a.js\",\"line\":5,\"binding\":\"local\",\"def\":{\"path\":\"a.js\",\"line\":2}}" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers get: other.get(2) on an unknown receiver binds to no definition' '
	(cd repo && { ci-refs --json callers get 2>/dev/null; echo "exit $?"; }) >out &&
	echo "exit 1" >expect &&
	test_cmp expect out
'

test_expect_success 'TS: fmt() through an index file re-exporting util.ts: the implementation, not the other fmt' '
	git init -q tsrepo &&
	mkdir -p tsrepo/src tsrepo/tools &&
	printf "export function fmt(x: number): string\nexport function fmt(x: string): string\nexport function fmt(x: any): string {\n\treturn String(x)\n}\n" >tsrepo/src/util.ts &&
	printf "export * from \"./util\"\n" >tsrepo/src/index.ts &&
	printf "export function fmt(x: number): number {\n\treturn x\n}\n" >tsrepo/tools/fmt.ts &&
	printf "import {fmt} from \"./src/index\"\n\nexport function main() {\n\treturn fmt(1)\n}\n" >tsrepo/main.ts &&
	(cd tsrepo && git add . && git commit -qm init && ci-index build 2>/dev/null) &&
	(cd tsrepo && ci-refs --json callers fmt) >out &&
	"$JQ" -c "{path, line, binding, def: .definition}" out >actual &&
	echo "{\"path\":\"main.ts\",\"line\":4,\"binding\":\"import\",\"def\":{\"path\":\"src/util.ts\",\"line\":3}}" >expect &&
	test_cmp expect actual
'

test_done
