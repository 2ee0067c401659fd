#!/bin/sh
# t0968-graph-ts-global-call: in a TypeScript module (a file with import
# statements), a bare f() that the file neither defines nor imports calls a
# global (isNaN, the test runner's describe), never another file's f that its
# imports happen to reach; an imported f still binds.  Nor is f() another
# file's f where the module imports f from a package (`import test from
# 'ava'`), or as a default import of an `export default x` whose x is no
# function (`const ow = ...; const _ow = wrap(ow); export default _ow`: not
# the namesake ow of that file); a default import of a function binds to it.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS global calls' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a local isNaN in number.ts, re-exported number(), a test calling both' '
	git init -q repo &&
	write_lines src/number.ts "const isNaN = (v: number) => v != +v" "export function number(v: number) {" \
		"	return isNaN(v)" "}" &&
	write_lines src/index.ts "export * from \"./number\"" &&
	write_lines test/date.ts "import { number } from \"../src\"" "export function invalid(d: Date) {" \
		"	return isNaN(d.getTime()) || number(1)" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers isNaN: the call in number.ts, not the global one in the test' '
	(cd repo && ci-refs --json callers isNaN) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" >actual &&
	echo "src/number.ts:3 local src/number.ts:1" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees invalid: number imported, isNaN a global' '
	(cd repo && ci-refs --json callees invalid) |
		"$JQ" -r "select(.name != \"getTime\") | \"\(.name) \(.binding) \(.definition.path)\"" >actual &&
	printf "%s\n" "isNaN null null" "number import src/number.ts" >expect &&
	test_cmp expect actual
'

test_expect_success 'setup: a test importing test from a package, ow as a default export of a wrapped value' '
	write_lines src/test.ts "export default function test(v: unknown) {" "	return v" "}" &&
	write_lines src/ow.ts "import test from \"./test\"" "const ow = (v: unknown) => test(v)" \
		"const _ow = Object.assign(ow, {})" "export default _ow" &&
	write_lines src/make.ts "export default function make() {" "	return 1" "}" &&
	write_lines test/ow.ts "import test from \"ava\"" "import ow from \"../src/ow\"" "import mk from \"../src/make\"" \
		"test(\"ow\", () => ow(1))" "export const one = () => mk()" &&
	(cd repo && git add . && git commit -qm more && ci-index update 2>/dev/null)
'

test_expect_success 'callers test, ow, make: not from the package import nor the wrapped default' '
	(cd repo && ci-refs --json callers test && { ci-refs --json callers ow 2>/dev/null || :; } &&
		ci-refs --json callers make) | "$JQ" -r "\"\(.name) \(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" >actual &&
	printf "%s\n" "test src/ow.ts:2 import src/test.ts:1" "mk test/ow.ts:5 import src/make.ts:1" >expect &&
	test_cmp expect actual
'

test_done
