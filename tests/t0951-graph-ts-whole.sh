#!/bin/sh
# t0951-graph-ts-whole: the whole-index call graph (cgraph.c: trace, dead,
# arch, the answers ci-index stores) binds a TypeScript call as callers does
# (refs_jsbind_call()): a default export re-exported under another name
# (`export { default as string }`), `import * as u` and `u.check()`, a typed
# receiver (`const s: Schema = ...; s.validate()`), `new Schema()`.  trace
# follows those edges, dead does not report what only they reach, and the
# stored file edges are the sum of callers' records over every name.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang typescript; then
	test_skip 'TS whole graph' 'the typescript grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a call chain through an alias, a typed receiver and a namespace' '
	git init -q repo &&
	ts_call_chain_files &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# hops <args>: each path as "name@path:line" joined by " > ", the call sites after
hops() {
	(cd repo && ci-refs --json trace "$@") >out &&
	"$JQ" -r "[.rank, .length, ([.hops[] | \"\\(.name)@\\(.path):\\(.line)\"] | join(\" > \")),
		([.hops[1:][] | .call | \"\\(.path):\\(.line)/\\(.binding)\"] | join(\" \"))] | @tsv" out
}

test_expect_success 'trace main check: through string() (create), s.validate() (Schema.validate), u.check()' '
	hops main check >actual &&
	printf "1\t3\tmain@app.ts:2 > create@src/string.ts:2 > validate@src/schema.ts:3 > check@src/util.ts:1\t%s\n" \
		"app.ts:3/import src/string.ts:4/receiver src/schema.ts:4/import" >expect &&
	test_cmp expect actual
'

test_expect_success 'trace main Schema: new Schema() is a call of the class' '
	hops main Schema >actual &&
	printf "1\t2\tmain@app.ts:2 > create@src/string.ts:2 > Schema@src/schema.ts:2\tapp.ts:3/import src/string.ts:3/import\n" \
		>expect &&
	test_cmp expect actual
'

test_expect_success 'each hop is the record callers gives for that call' '
	for n in create validate check Schema; do
		(cd repo && ci-refs --json callers $n </dev/null) |
			"$JQ" -r "\"\(.path):\(.line)/\(.binding) \(.definition.path):\(.definition.line)\"" || return 1
	done | sort >actual &&
	printf "%s\n" "app.ts:3/import src/string.ts:2" "src/schema.ts:4/import src/util.ts:1" \
		"src/string.ts:3/import src/schema.ts:2" "src/string.ts:4/receiver src/schema.ts:3" >expect &&
	test_cmp expect actual
'

test_expect_success 'dead: create, reached only as string(), is not reported; from the store and bound anew' '
	(cd repo && ci-refs --json dead) >stored &&
	(cd repo && sqlite3 .ci-index/index.db "DELETE FROM graph_stamp" && ci-refs --json dead) >bound &&
	test_cmp stored bound &&
	"$JQ" -r .name stored >actual &&
	echo spare >expect &&
	test_cmp expect actual &&
	(cd repo && ci-index build 2>/dev/null)
'

# callers_edges: every callers record of every name the index defines, as
# "call file <tab> definition file" between two files, counted
callers_edges() {
	sqlite3 repo/.ci-index/index.db "SELECT DISTINCT name FROM defs ORDER BY 1" >names &&
	while read -r n; do
		(cd repo && ci-refs --json --limit 10000 callers "$n" </dev/null 2>/dev/null) ||
			test $? = 1 || return 1
	done <names >recs &&
	"$JQ" -r "select(.path != .definition.path) | \"\(.path)\t\(.definition.path)\"" recs |
		sort | uniq -c | awk "{ printf \"%s\t%s\t%s\n\", \$2, \$3, \$1 }"
}

test_expect_success 'the stored file edges are the sum of callers over every name; arch says them' '
	callers_edges >expect &&
	test_line_count = 3 expect &&
	sqlite3 -separator "	" repo/.ci-index/index.db "SELECT fa.path, fb.path, c.calls FROM graph_calls c
		JOIN graph_files fa ON fa.id = c.a JOIN graph_files fb ON fb.id = c.b ORDER BY 1, 2" >actual &&
	test_cmp expect actual &&
	(cd repo && ci-refs --json arch) >arch &&
	grep -q "\"_type\":\"package_edge\"" arch
'

test_done
