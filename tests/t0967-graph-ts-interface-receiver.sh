#!/bin/sh
# t0967-graph-ts-interface-receiver: in TypeScript, x.f() where x is typed by
# an interface (`s: ISchema`) calls whichever class implements it: the
# interface's signature has no body, so the call binds to nothing (tsserver
# goes to that signature); x typed by a class still binds to its method, also
# where an interface of the class's name merges with the class.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS interface receivers' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: an interface ISchema, a class Schema, a function taking each' '
	git init -q repo &&
	write_lines src/types.ts "export interface ISchema {" "	cast(v: unknown): string" "}" &&
	write_lines src/schema.ts "import { ISchema } from \"./types\"" "export class Schema implements ISchema {" \
		"	cast(v: unknown) {" "		return String(v)" "	}" "}" "export interface Schema {" "	spec: string" "}" &&
	write_lines test/helpers.ts "import { ISchema } from \"../src/types\"" "import { Schema } from \"../src/schema\"" \
		"export function castAny(schema: ISchema, v: unknown) {" "	return schema.cast(v)" "}" \
		"export function castOne(schema: Schema, v: unknown) {" "	return schema.cast(v)" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers cast: the call on the class-typed receiver only' '
	(cd repo && ci-refs --json callers cast) |
		"$JQ" -r "\"\(.path):\(.line) \(.binding) \(.definition.path):\(.definition.line)\"" >actual &&
	echo "test/helpers.ts:7 receiver src/schema.ts:3" >expect &&
	test_cmp expect actual
'

test_done
