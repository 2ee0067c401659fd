#!/bin/sh
# t0965-graph-ts-this-rebound: in TypeScript, `this` inside a function that
# has a `this` of its own (an object literal's method `test(v) { ... }`, a
# `function` expression, `const g = function`) nested in a class's method is
# not the class: this.f() there binds to nothing (tsserver: the object's
# contextual type), while this.f() in the method itself, or in an arrow
# function nested in it, stays the class's (inherited from its base).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS this in nested functions' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a base with resolve, a subclass calling it from nested functions' '
	git init -q repo &&
	write_lines src/base.ts "export class Base {" "	resolve(v: number) {" "		return v" "	}" "}" &&
	write_lines src/sub.ts "import { Base } from \"./base\"" "export class Sub extends Base {" \
		"	min(n: number) {" "		this.resolve(n)" "		const a = () => this.resolve(n)" \
		"		return check({" "			name: \"min\"," "			test(value: number) {" \
		"				return value >= this.resolve(n)" "			}," "		})" "	}" \
		"	max(n: number) {" "		const g = function (this: any) {" "			return this.resolve(n)" "		}" \
		"		return [a0, g]" "	}" "}" "function check(o: object) {" "	return o" "}" "const a0 = 1" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers Base.resolve: the method and its arrow function, not the nested functions' '
	(cd repo && ci-refs --json callers resolve) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" >actual &&
	printf "%s\n" "src/sub.ts:4 inherited src/base.ts:2" "src/sub.ts:5 inherited src/base.ts:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees: this.resolve() bound in the method and the arrow, not in the nested functions' '
	(cd repo && ci-refs --json callees Sub.min && ci-refs --json callees Sub.max) |
		"$JQ" -r "select(.name == \"resolve\") | \"\(.line) \(.binding)\"" >actual &&
	printf "%s\n" "4 inherited" "5 inherited" "9 null" "15 null" >expect &&
	test_cmp expect actual
'

test_done
