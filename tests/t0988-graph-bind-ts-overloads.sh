#!/bin/sh
# t0988-graph-bind-ts-overloads: ci-refs callers on TypeScript binds a call of
# an overloaded method, as the TypeScript language service does
# (bench/graph-tsserver.js), at its implementation (the declaration with a
# body after the signatures), whether the call is this.add() in the class or
# q.add() on a q = new Queue() of another file; this.check() in a class that
# extends an imported class binds to that class's check, as inherited.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS overloads' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a class with an overloaded method and a base class, a caller in another file' '
	git init -q repo &&
	write_lines base.ts "export default abstract class Base<T> {" "	check(x: T) {" "		return x" "	}" "}" &&
	write_lines queue.ts "import Base from \"./base\"" "export class Queue<" "	T extends object," "> extends Base<T> {" \
		"	add(a: number): number;" "	add(a: string): string;" \
		"	add(a: any): any {" "		return a" "	}" "	run() {" "		return this.add(1) + this.check(2)" "	}" "}" \
		"export class Other {" "	add(a: number): number {" "		return a" "	}" "}" &&
	write_lines app.ts "import { Queue } from \"./queue\"" "" "export function main() {" \
		"	const q = new Queue()" "	return q.add(\"x\")" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: path:line binding -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'add: this.add() and q.add() reach the implementation, not a signature' '
	callers add >actual &&
	printf "%s\n" "app.ts:5 receiver queue.ts:7" "queue.ts:11 member queue.ts:7" >expect &&
	test_cmp expect actual
'

test_expect_success 'check: this.check() in Queue reaches Base.check, inherited' '
	callers check >actual &&
	echo "queue.ts:11 inherited base.ts:2" >expect &&
	test_cmp expect actual
'

test_done
