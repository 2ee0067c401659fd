#!/bin/sh
# t0986-graph-bind-js: ci-refs callers on JavaScript/TypeScript binds as the
# TypeScript language service does (bench/graph-tsserver.js) where the text
# tells: a bare call reaches the function nested in an enclosing function of
# the same file before a namesake elsewhere, and a call on an unknown
# receiver (other.get()) binds to nothing.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang javascript; then
	test_skip 'JS binding' 'the javascript grammar is not compiled in'
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

test_done
