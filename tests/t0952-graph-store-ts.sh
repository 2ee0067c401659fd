#!/bin/sh
# t0952-graph-store-ts: the graph answers ci-index stores (gstore.c, the
# incremental gsdelta.c) where TypeScript calls are bound as callers binds
# them: an edge may depend on another file (a re-export, an imported class),
# so an update that changes a TS/JS file, or whose names make a TS/JS file to
# re-bind, binds the whole graph (ci-index -v says why); one that changes only
# a C file nothing TS/JS names stays incremental.  Each time, the stored
# tables and dead/arch answers are a fresh build's.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript || ! test_have_lang c; then
	test_skip 'stored graph, TS' 'the typescript or c grammar is not compiled in'
	test_done
fi

. "$CI_SRC_DIR/tests/gstore-lib.sh"
whole_ts="ci-index: graph store: the whole graph bound (many files or a Python or TS/JS file changed)"

test_expect_success 'setup: an alias, a typed receiver, a namespace, new C(); a C tool beside' '
	git init -q repo &&
	ts_call_chain_files &&
	write_lines tool/cli.c "static int helper(void) { return 1; }" "static int unused_c(void) { return 2; }" \
		"int main(void) { return helper(); }" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null) &&
	same_as_built &&
	(cd repo && ci-refs --json trace main check) >out &&
	test "$("$JQ" -r .length out)" = 3
'

test_expect_success 'spare re-exported as extra and called: the whole graph, spare reached' '
	write_lines src/index.ts "export { default as string } from \"./string\"" \
		"export { spare as extra } from \"./util\"" &&
	write_lines app.ts "import { string, extra } from \"./src/index\"" "export function main() {" \
		"	return string(1) + extra()" "}" &&
	update && grep -qx "$whole_ts" path &&
	same_as_built &&
	(cd repo && ci-refs --json dead) >out &&
	test "$("$JQ" -r .name out)" = unused_c &&
	(cd repo && ci-refs --json trace main spare) >out &&
	test "$("$JQ" -r ".hops[1].call.binding" out)" = import
'

test_expect_success 'the method the typed receiver reaches renamed: s.validate() reaches nothing, verify unreached' '
	write_lines src/schema.ts "import * as u from \"./util\"" "export class Schema {" "	verify(v: number) {" \
		"		return u.check(v)" "	}" "}" &&
	update && grep -qx "$whole_ts" path &&
	same_as_built &&
	(cd repo && ci-refs --json dead) >out &&
	"$JQ" -r .name out | sort >actual &&
	printf "%s\n" unused_c verify >expect &&
	test_cmp expect actual
'

test_expect_success 'a C file changed: incremental, the TS edges kept' '
	write_lines tool/cli.c "static int helper(void) { return 1; }" "static int extra2(void) { return helper(); }" \
		"int main(void) { return extra2(); }" &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built
'

test_expect_success 'a C definition named like a TS one: the TS files to re-bind, the whole graph' '
	write_lines tool/cli.c "static int check(void) { return 1; }" "int main(void) { return check(); }" &&
	update && grep -qx "ci-index: graph store: the whole graph bound (many files or a Python or TS/JS file to re-bind)" path &&
	same_as_built
'

test_done
