#!/bin/sh
# t0992-graph-ts-deep-callers: ci-refs callers --depth N on TypeScript binds
# each level's calls as callers at depth 1 does (the text's rules: a function
# imported and re-exported under other names, a typed receiver, a chained
# call, new C()), so that the first level of `callers X --depth 2` is
# `callers X`, and the second level is the callers of those callers.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS deep callers' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a class, a function re-exported as build, callers through a chain' '
	git init -q repo &&
	write_lines src/shape.ts "export class Point {" "	constructor(public x: number) {}" "	norm(): number {" \
		"		return helper(this.x)" "	}" "	scale(k: number): Point {" "		return new Point(this.x * k)" \
		"	}" "}" "export function helper(n: number) {" "	return n" "}" "export function make(): Point {" \
		"	return new Point(1)" "}" &&
	write_lines src/index.ts "import { make as mk, Point } from \"./shape\"" "export { mk as build, Point }" &&
	write_lines app/main.ts "import { build, Point } from \"../src\"" "export function run() {" \
		"	const p: Point = build()" "	return p.scale(2).norm()" "}" "export function start() {" \
		"	return run()" "}" "class Other {" "	norm() {" "		return 0" "	}" "	go() {" \
		"		return this.norm()" "	}" "}" &&
	write_lines other/make.ts "function make() {" "	return 0" "}" "export function local() {" "	return make()" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# records: name kind path:line:col binding -> definition path:line, depth, scope
records() {
	"$JQ" -r "\"\(.name) \(.kind) \(.path):\(.line):\(.col) \(.binding) \(.definition.path):\(.definition.line) \(.depth) \(.scope)\""
}

test_expect_success 'callers Point.norm --depth 2: the chained call in run, then start; not Other.norm' '
	(cd repo && ci-refs --json callers Point.norm --depth 2) | records >actual &&
	printf "%s\n" "norm call app/main.ts:4:20 receiver src/shape.ts:3 1 run" \
		"run call app/main.ts:7:9 local app/main.ts:2 2 start" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers make --depth 2: build() through the index file, not the namesake of other/' '
	(cd repo && ci-refs --json callers shape.make --depth 2) | records >actual &&
	printf "%s\n" "build call app/main.ts:3:19 import src/shape.ts:13 1 run" \
		"run call app/main.ts:7:9 local app/main.ts:2 2 start" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers Point --depth 2: the two new Point(), then the callers of scale and make' '
	(cd repo && ci-refs --json callers Point --depth 2) | records >actual &&
	printf "%s\n" "Point class src/shape.ts:7:14 local src/shape.ts:1 1 Point.scale" \
		"Point class src/shape.ts:14:13 local src/shape.ts:1 1 make" \
		"build call app/main.ts:3:19 import src/shape.ts:13 2 run" \
		"scale call app/main.ts:4:11 receiver src/shape.ts:6 2 run" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers helper --depth 3: Point.norm, run, start' '
	(cd repo && ci-refs --json callers helper --depth 3) | records >actual &&
	printf "%s\n" "helper call src/shape.ts:4:10 local src/shape.ts:10 1 Point.norm" \
		"norm call app/main.ts:4:20 receiver src/shape.ts:3 2 run" \
		"run call app/main.ts:7:9 local app/main.ts:2 3 start" >expect &&
	test_cmp expect actual
'

# the calls of callers X, and those of the first level of callers X --depth 2
# (name kind path:line:col binding definition), sorted
level1() {
	(cd repo && ci-refs --json callers "$1" --depth "$2") | "$JQ" -r "select((.depth // 1) == 1) |
		\"\(.name) \(.kind) \(.path):\(.line):\(.col) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'the first level of --depth 2 is callers at depth 1, for each symbol' '
	for s in Point.norm Other.norm shape.make make.make helper Point scale run; do
		level1 $s 1 >d1 && level1 $s 2 >d2 && test_cmp d1 d2 || return 1
	done &&
	level1 Other.norm 2 >d2 && echo "norm call app/main.ts:14:15 member app/main.ts:10" >expect && test_cmp expect d2 &&
	level1 make.make 2 >d2 && echo "make call other/make.ts:5:9 local other/make.ts:1" >expect && test_cmp expect d2
'

test_expect_success 'impact src/shape.ts:make: the caller through build() first, at call depth 1' '
	(cd repo && ci-refs --json impact src/shape.ts:make) | "$JQ" -r "\"\(.path) \(.call_depth)\"" >actual &&
	printf "%s\n" "app/main.ts 1" "src/index.ts null" >expect &&
	test_cmp expect actual
'

test_done
