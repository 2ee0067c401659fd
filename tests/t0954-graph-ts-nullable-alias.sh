#!/bin/sh
# t0954-graph-ts-nullable-alias: in TypeScript, a declared type that is a
# union of one class with types naming nothing of the repository's code
# (`Alias | null`, `Stack | number[]`) is that class, and a type alias that
# stands for such a type (`type StackLike = Stack | number[]`, `type Alias =
# Stack`) is what it stands for: calls on fields of those types bind to the
# class's method.  Of a method's overloads, the one returning a class is
# followed (`meta(): Info | undefined` beside `meta(v: Info): this`), and a
# union of two classes is not one type; circular aliases stay bounded.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS nullable types and aliases' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: classes, type aliases of them in another file, a class using them' '
	git init -q repo &&
	write_lines src/stack.ts "export class Stack {" "	push(n: number) {" "		return n" "	}" "}" \
		"export class Queue {" "	push(n: number) {" "		return n" "	}" "}" &&
	write_lines src/types.ts "import type { Stack, Queue } from \"./stack\"" \
		"export type StackLike = Stack | number[]" "export type Alias = Stack" "export type Either = Stack | Queue" &&
	write_lines src/schema.ts "export interface Info {" "	label: string" "}" "export class Schema {" \
		"	meta(): Info | undefined" "	meta(v: Info): this" "	meta(v?: Info) {" "		return this" "	}" \
		"	check() {" "		return 1" "	}" "}" &&
	write_lines app.ts "import type { StackLike, Alias, Either } from \"./src/types\"" \
		"import { Schema } from \"./src/schema\"" "export class Pool {" "	#free: StackLike" \
		"	other: Alias | null" "	both?: Either" "	constructor(s: StackLike) {" "		this.#free = s" \
		"		this.other = null" "	}" "	run(s: Schema) {" "		this.#free.push(1)" "		this.other?.push(2)" \
		"		this.both?.push(3)" "		return s.meta({ label: \"a\" }).check()" "	}" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: path:line binding -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'push: on a field of an alias of a union with an array, of a nullable alias; not on a union of classes' '
	callers push >actual &&
	printf "%s\n" "app.ts:12 receiver src/stack.ts:2" "app.ts:13 receiver src/stack.ts:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'check: after the overload of meta that returns this' '
	callers check >actual &&
	echo "app.ts:15 receiver src/schema.ts:10" >expect &&
	test_cmp expect actual
'

test_expect_success 'circular type aliases (a type error): the member found, the missing one given up' '
	write_lines loop.ts "import type { Stack } from \"./src/stack\"" "type A = { s: Stack } & B" \
		"type B = A & { t: number }" "export function spin(a: A) {" "	a.u.push(4)" "	return a.s.push(5)" "}" &&
	(cd repo && git add loop.ts && git commit -qm loop && ci-index update 2>/dev/null) &&
	callers push >actual &&
	printf "%s\n" "app.ts:12 receiver src/stack.ts:2" "app.ts:13 receiver src/stack.ts:2" \
		"loop.ts:6 receiver src/stack.ts:2" >expect &&
	test_cmp expect actual
'

test_done
