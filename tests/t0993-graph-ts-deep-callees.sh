#!/bin/sh
# t0993-graph-ts-deep-callees: ci-refs callees --depth N on TypeScript binds
# each level's calls as callees at depth 1 does (a function imported under
# another name, a typed receiver, a chained call, new C(), a method's call
# on this), so that the bound calls of the first level of `callees X --depth
# 2` are those of `callees X`, and the next level is what those callees call.
# A call that binds to nothing is listed at depth 1 only.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS deep callees' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a class, a function re-exported as build, a chain of calls' '
	git init -q repo &&
	write_lines src/shape.ts "export class Point {" "	constructor(public x: number) {}" "	norm(): number {" \
		"		return helper(this.x)" "	}" "	scale(k: number): Point {" "		return new Point(this.twice(k))" \
		"	}" "	twice(k: number) {" "		return k * 2" "	}" "}" "export function helper(n: number) {" \
		"	return n" "}" "export function make(): Point {" "	return new Point(1)" "}" &&
	write_lines src/index.ts "import { make as mk, Point } from \"./shape\"" "export { mk as build, Point }" &&
	write_lines app/main.ts "import { build, Point } from \"../src\"" "export function run() {" \
		"	const p: Point = build()" "	console.log(p)" "	return p.scale(2).norm()" "}" \
		"export function start() {" "	return run()" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# records: name kind path:line:col binding -> definition path:line, depth, scope
records() {
	"$JQ" -r "\"\(.name) \(.kind) \(.path):\(.line):\(.col) \(.binding) \(.definition.path):\(.definition.line) \(.depth) \(.scope)\""
}

test_expect_success 'callees run --depth 2: build, scale, norm; then what make, scale and norm call' '
	(cd repo && ci-refs --json callees run --depth 2) | records >actual &&
	printf "%s\n" "build call app/main.ts:3:19 import src/shape.ts:16 1 run" \
		"scale call app/main.ts:5:11 receiver src/shape.ts:6 1 run" \
		"norm call app/main.ts:5:20 receiver src/shape.ts:3 1 run" \
		"helper call src/shape.ts:4:10 local src/shape.ts:13 2 Point.norm" \
		"Point class src/shape.ts:7:14 local src/shape.ts:1 2 Point.scale" \
		"twice call src/shape.ts:7:25 member src/shape.ts:9 2 Point.scale" \
		"Point class src/shape.ts:17:13 local src/shape.ts:1 2 make" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees start --depth 3: run, its callees, theirs; each definition expanded once' '
	(cd repo && ci-refs --json callees start --depth 3) | "$JQ" -r "\"\(.depth) \(.name) \(.line)\"" >actual &&
	printf "%s\n" "1 run 8" "2 build 3" "2 scale 5" "2 norm 5" "3 helper 4" "3 Point 7" "3 twice 7" "3 Point 17" >expect &&
	test_cmp expect actual
'

# the bound calls of callees X, and those of the first level of callees X
# --depth 2 (name kind path:line:col binding definition), sorted
level1() {
	(cd repo && ci-refs --json callees "$1" --depth "$2") | "$JQ" -r "select((.depth // 1) == 1 and .definition) |
		\"\(.name) \(.kind) \(.path):\(.line):\(.col) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'the first level of --depth 2 is the bound callees at depth 1, for each symbol' '
	for s in run start make Point.scale Point.norm Point; do
		level1 $s 1 >d1 && level1 $s 2 >d2 && test_cmp d1 d2 || return 1
	done &&
	level1 Point 2 >d2 && printf "%s\n" "Point class src/shape.ts:7:14 local src/shape.ts:1" \
		"helper call src/shape.ts:4:10 local src/shape.ts:13" "twice call src/shape.ts:7:25 member src/shape.ts:9" >expect &&
	test_cmp expect d2
'

test_expect_success 'an unbound call (console.log) at depth 1 only' '
	(cd repo && ci-refs --json callees run) | "$JQ" -r "select(.definition == null) | \"\(.name) \(.binding)\"" >actual &&
	echo "log null" >expect && test_cmp expect actual &&
	(cd repo && ci-refs --json callees run --depth 2) | "$JQ" -r "select(.name == \"log\")" >actual &&
	test_must_be_empty actual
'

test_done
