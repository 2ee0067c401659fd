#!/bin/sh
# t0990-graph-bind-ts-receivers: ci-refs callers/callees on TypeScript type a
# call's receiver from the text, as the TypeScript language service would
# bind it (bench/graph-tsserver.js): a function's declared return type
# (`function create(): StringSchema`, called under another name), chained
# calls over several lines, methods declared to return `this` or returning
# `this.clone()` without a declared type, a variable set to such a chain;
# a method of a base class is inherited; a method that an interface merged
# with the class declares resolves to that signature (no body): no edge.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS receivers' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a base class, a class extending it, a function returning it' '
	git init -q repo &&
	write_lines schema.ts "export default class Schema {" "	clone(): this {" "		return this" "	}" \
		"	test(a: number): this;" "	test(a: any) {" "		const next = this.clone()" "		return next" "	}" \
		"	label(s: string) {" "		return this.clone()" "	}" "}" &&
	write_lines string.ts "import Schema from \"./schema\"" "export function create(): StringSchema {" \
		"	return new StringSchema()" "}" "export default class StringSchema extends Schema {" \
		"	min(n: number) {" "		return this.test(n)" "	}" "	trim() {" "		return this" "	}" "}" \
		"interface StringSchema {" "	trim(): StringSchema;" "}" &&
	write_lines app.ts "import { create as string } from \"./string\"" "export function main() {" \
		"	const s = string().min(2)" "	s.label(\"x\")" "	string()" "		.min(1)" "		.test(3)" \
		"	s.trim()" "	return s.clone().label(\"y\")" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: path:line binding -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'min: on string() and on a chain over lines, as a receiver' '
	callers min >actual &&
	printf "%s\n" "app.ts:3 receiver string.ts:6" "app.ts:6 receiver string.ts:6" >expect &&
	test_cmp expect actual
'

test_expect_success 'label: on a variable set to a chain, and after clone(): this, inherited' '
	callers label >actual &&
	printf "%s\n" "app.ts:4 inherited schema.ts:10" "app.ts:9 inherited schema.ts:10" >expect &&
	test_cmp expect actual
'

test_expect_success 'test: the implementation after min() returning this.test(), and this.test() in the subclass' '
	callers test >actual &&
	printf "%s\n" "app.ts:7 inherited schema.ts:6" "string.ts:7 inherited schema.ts:6" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees main: trim, declared by the merged interface, binds nothing' '
	(cd repo && ci-refs --json callees main 2>/dev/null) |
		"$JQ" -r "\"\(.name) \(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort >actual &&
	printf "%s\n" "clone 9 inherited schema.ts:2" "label 4 inherited schema.ts:10" "label 9 inherited schema.ts:10" \
		"min 3 receiver string.ts:6" "min 6 receiver string.ts:6" "string 3 import string.ts:2" \
		"string 5 import string.ts:2" "test 7 inherited schema.ts:6" "trim 8 null null:null" >expect &&
	test_cmp expect actual
'

test_done
