#!/bin/sh
# t0957-graph-ts-typeof-bound: in TypeScript, `api.retry()` where api's type
# (a type alias returned by an arrow function declared `(): Api =>`, an
# interface it intersects) declares `retry: typeof retry` is a call of that
# function (binding import, through `import type` too); a bare `apply()` of
# `export const apply = engine.apply.bind(engine)` is a call of the method of
# engine's class (binding receiver), but not where the variable is declared
# with a type (`const other: () => number = engine.other`: the type's), and a
# signature of the type (`get(url): number`) binds to nothing.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS typeof members and bound methods' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: functions, a type naming them with typeof, a class whose methods are exported bound' '
	git init -q repo &&
	write_lines src/constants.ts "export const retry = (n?: number) => {" "	return n" "}" \
		"export function stop() {" "	return 1" "}" &&
	write_lines src/types.ts "import type { retry } from \"./constants\"" "import { stop } from \"./constants\"" \
		"export interface Base {" "	stop: typeof stop" "}" "export type Api = {" \
		"	readonly retry: typeof retry" "	get(url: string): number" "} & Base" &&
	write_lines src/engine.ts "export class Engine {" "	apply(x: number) {" "		return x" "	}" \
		"	other() {" "		return 2" "	}" "}" &&
	write_lines src/index.ts "import { Engine } from \"./engine\"" "import type { Api } from \"./types\"" \
		"const engine = new Engine()" "export const apply = /* bound */ engine.apply.bind(engine)" \
		"export const other: () => number = engine.other" "const make = (): Api => {" \
		"	return {} as Api" "}" "const api = make()" "export default api" &&
	write_lines app.ts "import api from \"./src/index\"" "import { apply, other } from \"./src/index\"" \
		"export function main() {" "	api.retry(1)" "	api.stop()" "	api.get(\"x\")" "	apply(3)" \
		"	return other()" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callees main: retry and stop through typeof, apply the bound method; get and other nothing' '
	(cd repo && ci-refs --json callees main 2>/dev/null) |
		"$JQ" -r "\"\(.name) \(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort >actual &&
	printf "%s\n" "apply 7 receiver src/engine.ts:2" "get 6 null null:null" "other 8 null null:null" \
		"retry 4 import src/constants.ts:1" "stop 5 import src/constants.ts:4" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers retry, apply: the same edges from the definitions' '
	(cd repo && ci-refs --json callers retry 2>/dev/null && ci-refs --json callers Engine.apply 2>/dev/null) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" | sort >actual &&
	printf "%s\n" "app.ts:4 import src/constants.ts:1" "app.ts:7 receiver src/engine.ts:2" >expect &&
	test_cmp expect actual
'

test_done
