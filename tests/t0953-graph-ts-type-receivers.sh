#!/bin/sh
# t0953-graph-ts-type-receivers: in TypeScript, a call's receiver typed by a
# type alias or an interface on the way: `api.num.range()` where api is
# imported (`import api from`, `const api: Api` there), Api a type alias
# `{ ... } & Parts & Extra` (each part of the intersection looked up), Parts
# a type alias imported with `import type` whose member `readonly num: Num`
# is a class, Extra an interface extending another; getters `get not():
# this` (the receiver's class, also when the getter is a base class's) and
# `this.integer.range()` in the class; a union is not one type (no edge), and
# a method an interface declares has no body (no edge).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS type receivers' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: classes, a type alias of an intersection, interfaces, an imported value' '
	git init -q repo &&
	write_lines src/base.ts "export class Base {" "	check(n: number): this {" "		return this" "	}" \
		"	get not(): this {" "		return this" "	}" "}" &&
	write_lines src/num.ts "import { Base } from \"./base\"" "export class Num extends Base {" \
		"	range(a: number, b: number): this {" "		return this.check(a)" "	}" \
		"	get integer(): this {" "		return this" "	}" "	get byte(): this {" \
		"		return this.integer.range(0, 255)" "	}" "}" &&
	write_lines src/str.ts "export class Str {" "	min(n: number): this {" "		return this" "	}" "}" &&
	write_lines src/parts.ts "import type { Num } from \"./num\"" "import { Str } from \"./str\"" \
		"export type Parts = {" "	/** the number: range() */" "	readonly num: Num;" "	str?: Str" "}" &&
	write_lines src/api.ts "import { Num } from \"./num\"" "import type { Str } from \"./str\"" \
		"import type { Parts } from \"./parts\"" "interface Other {" "	twice: Num" "}" \
		"export interface Extra extends Other {" "	make(): Num" "	size(): number" "}" \
		"export type Api = {" "	version: string" "} & Parts & Extra" \
		"export type U = Parts | { num: Str }" "const api: Api = {} as Api" "export default api" &&
	write_lines app.ts "import api from \"./src/api\"" "import type { U } from \"./src/api\"" \
		"export function main(u: U) {" "	api.num.range(1, 2)" "	api.str.min(3)" \
		"	api.num.not.integer.range(0, 1)" "	api.make().check(1)" "	api.twice.range(3, 4)" \
		"	u.num.range(5, 6)" "	return api.size()" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: path:line binding -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'range: through the alias, its parts, the interface extended, getters; not on the union' '
	callers range >actual &&
	printf "%s\n" "app.ts:4 receiver src/num.ts:3" "app.ts:6 receiver src/num.ts:3" \
		"app.ts:8 receiver src/num.ts:3" "src/num.ts:10 receiver src/num.ts:3" >expect &&
	test_cmp expect actual
'

test_expect_success 'min, check: an optional member; the method of the base class after a method of the interface' '
	callers min >actual &&
	echo "app.ts:5 receiver src/str.ts:2" >expect &&
	test_cmp expect actual &&
	callers check >actual &&
	printf "%s\n" "app.ts:7 inherited src/base.ts:2" "src/num.ts:4 inherited src/base.ts:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees main: the interface methods make and size bind nothing' '
	(cd repo && ci-refs --json callees main 2>/dev/null) |
		"$JQ" -r "\"\(.name) \(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort >actual &&
	printf "%s\n" "check 7 inherited src/base.ts:2" "make 7 null null:null" "min 5 receiver src/str.ts:2" \
		"range 4 receiver src/num.ts:3" "range 6 receiver src/num.ts:3" "range 8 receiver src/num.ts:3" \
		"range 9 null null:null" "size 10 null null:null" >expect &&
	test_cmp expect actual
'

test_done
