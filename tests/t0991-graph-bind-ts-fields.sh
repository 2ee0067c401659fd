#!/bin/sh
# t0991-graph-bind-ts-fields: ci-refs callers on TypeScript/JavaScript type a
# receiver that is a field from the class's text: `this.engine = new
# Engine()` in the constructor, a field declared `cache: Store` or set
# `log = new Log()`, a constructor's parameter property (`private backup:
# Store`), a private `#log = new Log()`; `new Store().get()`; `super.get()`
# (inherited); a static `Cache.make()` and the class it returns; `new Log()`
# where an interface Log merges with the class (the class); and of two
# classes of one name in a file (each in its function), the one in scope
# where the call is.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS fields' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: classes with fields of other classes' '
	git init -q repo &&
	write_lines store.ts "export class Store {" "	get(k: string) {" "		return k" "	}" "}" \
		"export class Log {" "	write(s: string) {" "		return s" "	}" "	get(k: string) {" "		return k" "	}" "}" \
		"export interface Log {" "	level: number" "}" "export class Cache extends Store {" \
		"	static make(): Cache {" "		return new Cache()" "	}" "	get(k: string) {" "		return super.get(k)" "	}" "}" &&
	write_lines app.ts "import { Store, Log, Cache } from \"./store\"" "export class App {" "	cache: Store" \
		"	private readonly log = new Log()" "	constructor(private backup: Store) {" "		this.cache = new Store()" \
		"	}" "	run() {" "		this.cache.get(\"a\")" "		this.log.write(\"b\")" "		this.backup.get(\"c\")" \
		"		return new Store().get(\"d\")" "	}" "}" "export class Job {" "	#log = new Log()" "	run() {" \
		"		this.#log.write(\"c\")" "		return Cache.make().get(\"e\")" "	}" "}" &&
	write_lines car.js "class Engine {" "	start() {" "		return 1" "	}" "}" "class Pump {" "	start() {" \
		"		return 2" "	}" "}" "export class Car {" "	constructor() {" "		this.engine = new Engine()" "	}" \
		"	go() {" "		return this.engine.start()" "	}" "}" &&
	write_lines twice.js "export function one() {" "	class Clock {" "		tick() {" "			return 1" "		}" "	}" \
		"	return new Clock().tick()" "}" "export function two() {" "	class Clock {" "		tick() {" "			return 2" \
		"		}" "	}" "	const c = new Clock()" "	return c.tick()" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# callers <name>: path:line binding -> definition path:line, one a line
callers() {
	(cd repo && ci-refs --json callers "$1" 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort
}

test_expect_success 'get: a declared field, a parameter property, new Store(), super: Store.get, not Log.get' '
	callers Store.get >actual &&
	printf "%s\n" "app.ts:11 receiver store.ts:2" "app.ts:12 receiver store.ts:2" "app.ts:9 receiver store.ts:2" \
		"store.ts:22 inherited store.ts:2" >expect &&
	test_cmp expect actual &&
	(cd repo && test_must_fail ci-refs callers Log.get >../actual 2>/dev/null) &&
	test_must_be_empty actual
'

test_expect_success 'write: a field set to new Log(), and a #private one' '
	callers write >actual &&
	printf "%s\n" "app.ts:10 receiver store.ts:7" "app.ts:18 receiver store.ts:7" >expect &&
	test_cmp expect actual
'

test_expect_success 'make, Cache.get: a static method, then a method of the class it returns' '
	callers make >actual &&
	echo "app.ts:19 receiver store.ts:18" >expect &&
	test_cmp expect actual &&
	callers Cache.get >actual &&
	echo "app.ts:19 receiver store.ts:21" >expect &&
	test_cmp expect actual
'

test_expect_success 'Log: new Log() reaches the class, not the interface merged with it' '
	callers Log >actual &&
	printf "%s\n" "app.ts:16 import store.ts:6" "app.ts:4 import store.ts:6" >expect &&
	test_cmp expect actual
'

test_expect_success 'start: this.engine set to new Engine() in the constructor (JavaScript)' '
	callers start >actual &&
	echo "car.js:16 receiver car.js:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'tick: of the class Clock in scope, of two in the file' '
	callers tick >actual &&
	printf "%s\n" "twice.js:16 receiver twice.js:11" "twice.js:7 receiver twice.js:3" >expect &&
	test_cmp expect actual
'

test_done
