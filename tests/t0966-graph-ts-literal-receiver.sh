#!/bin/sh
# t0966-graph-ts-literal-receiver: in TypeScript, a call on a literal (a
# regular expression `/a+/i.test(s)`, a string `'a'.split()`, `{}.toString()`)
# calls the language's own method, never a method of the repository that has
# the name, even one of a class the file imports; x.test() on a variable still
# binds as before.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS literal receivers' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a class with test, split and toString, calls on literals and on a variable' '
	git init -q repo &&
	write_lines src/schema.ts "export class Schema {" "	test(v: string) {" "		return v" "	}" \
		"	split(s: string) {" "		return [s]" "	}" "	toString() {" "		return \"Schema\"" "	}" "}" &&
	write_lines src/use.ts "import { Schema } from \"./schema\"" "export function check(s: string, o: Schema) {" \
		"	if (/^(true|1)$/i.test(s)) return o.test(s)" "	const parts = \"a,b\".split(\",\")" \
		"	const tag = {}.toString()" "	return [parts, tag, o.split(s)]" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callees check: the calls on o bound, those on literals not' '
	(cd repo && ci-refs --json callees check) |
		"$JQ" -r "\"\(.name) \(.line):\(.col) \(.binding) \(.definition.line)\"" >actual &&
	printf "%s\n" "test 3:20 null null" "test 3:38 receiver 2" "split 4:22 null null" \
		"toString 5:17 null null" "split 6:24 receiver 5" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers Schema.test: o.test only' '
	(cd repo && ci-refs --json callers test) | "$JQ" -r "\"\(.path):\(.line):\(.col)\"" >actual &&
	echo "src/use.ts:3:38" >expect &&
	test_cmp expect actual
'

test_done
