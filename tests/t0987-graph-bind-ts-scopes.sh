#!/bin/sh
# t0987-graph-bind-ts-scopes: ci-refs callers on TypeScript/JavaScript binds
# by the scopes the text shows, as the TypeScript language service does
# (bench/graph-tsserver.js): x.getState() does not reach a function local to
# another (createStore's getState), nor one assigned as store.reset = ...
# inside a function; a bare run() reaches no object's property run(); a
# destructured variable ({ make } = hooks()) shadows the imported make; a
# function nested in a test block is seen in that block only; new Counter()
# is a call of the class Counter.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang javascript || ! test_have_lang typescript; then
	test_skip 'TS/JS scopes' 'the javascript or typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a store, a class, an object of methods, two test blocks' '
	git init -q repo &&
	write_lines store.ts "export function createStore() {" "	const getState = () => 1" \
		"	const store = { getState }" "	store.reset = () => 0" "	return store" "}" \
		"export function make() {" "	return 2" "}" "export class Counter {" "	inc() {" "		return 1" "	}" "}" &&
	write_lines app.ts "import { createStore, make, Counter } from \"./store\"" "" \
		"export function main(hooks: any) {" "	const s = createStore()" "	s.getState()" "	s.reset()" \
		"	make()" "	const c = new Counter()" "	return c" "}" "export function other(hooks: any) {" \
		"	const { make } = hooks()" "	return make()" "}" &&
	write_lines obj.js "const traps = {" "	run(x) {" "		return x" "	}," "}" "function go() {" \
		"	return run(1)" "}" &&
	write_lines t.test.js "describe(\"a\", () => {" "	const setup = () => 1" "	it(\"x\", () => setup())" "})" \
		"describe(\"b\", () => {" "	const setup = () => 2" "	it(\"y\", () => setup())" "})" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: path:line -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\""
}

test_expect_success 'getState, reset: the calls on s reach neither the local nor the assigned function' '
	callers getState >actual &&
	test_must_be_empty actual &&
	callers reset >actual &&
	test_must_be_empty actual
'

test_expect_success 'make: the imported function in main, not the destructured variable in other' '
	callers make >actual &&
	echo "app.ts:7 import store.ts:7" >expect &&
	test_cmp expect actual
'

test_expect_success 'run: a bare run() reaches no object property' '
	(cd repo && { ci-refs --json callers run 2>/dev/null; echo "exit $?"; }) >actual &&
	echo "exit 1" >expect &&
	test_cmp expect actual
'

test_expect_success 'setup: each block its own function' '
	callers setup >actual &&
	printf "%s\n" "t.test.js:3 local t.test.js:2" "t.test.js:7 local t.test.js:6" >expect &&
	test_cmp expect actual
'

test_expect_success 'new Counter() is a call of the class' '
	callers Counter >actual &&
	echo "app.ts:8 import store.ts:10" >expect &&
	test_cmp expect actual
'

test_done
