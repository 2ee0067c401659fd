#!/bin/sh
# t0964-graph-store-edges: the store binds the whole graph without keeping
# its calls (cgraph.h's cgraph_load_edges(): the calls between files counted as each
# file is read, each definition's uses in one count, names interned): what it
# stores is what dead, arch and trace find by binding every call anew.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'stored edges' 'the python and c grammars are not compiled in'
	test_done
fi

q() {
	sqlite3 repo/.ci-index/index.db "$1"
}

# answers <file>: dead (of three kinds) and arch, into file
answers() {
	for a in dead "--kind struct dead" "--kind variable dead" arch; do
		(cd repo && ci-refs --json --limit 1000 $a 2>&1; echo "exit $?") || return 1
	done >"$1"
}

test_expect_success 'setup: C files calling across files (one edge several times), Python importers' '
	git init -q repo &&
	write_lines lib/a.c "int helper(int x) { return x; }" \
		"int twice(int x) { return helper(x) + helper(x); }" \
		"static int selfish(int n) { return selfish(n - 1); }" \
		"struct node { struct node *next; };" \
		"struct used { int v; };" &&
	write_lines lib/b.c "int use_b(void) { struct used u; return twice(1) + helper(2) + helper(3); }" &&
	write_lines cli/main.c "int main(void) { return use_b() + twice(2) + helper(4); }" &&
	write_lines app/m.py "def run():" "    return go() + go()" "" "def go():" "    return 1" "" \
		"def lonely():" "    return 0" &&
	write_lines app/n.py "from app.m import go" "" "def f():" "    return go()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'the calls between files, counted: each pair once, in file order' '
	q "SELECT fa.path, fb.path, calls FROM graph_calls JOIN graph_files fa ON fa.id = a
	   JOIN graph_files fb ON fb.id = b ORDER BY a, b" >actual &&
	printf "%s\n" "app/n.py|app/m.py|1" "cli/main.c|lib/a.c|2" "cli/main.c|lib/b.c|1" \
		"lib/b.c|lib/a.c|3" >expect &&
	test_cmp expect actual
'

test_expect_success 'uses summed: what nothing reaches, a struct used only inside itself among them' '
	q "SELECT d.name || \" \" || g.self_calls FROM graph_defs g JOIN graph_files f ON f.id = g.fid
	   JOIN defs d ON d.rowid = g.def WHERE g.uses = 0 AND g.entry = 0 ORDER BY f.path, d.line, d.col" >actual &&
	printf "%s\n" "run 0" "lonely 0" "f 0" "selfish 1" "node 0" >expect &&
	test_cmp expect actual &&
	test "$(q "SELECT g.uses FROM graph_defs g JOIN defs d ON d.rowid = g.def WHERE d.name = \"helper\"")" = 5
'

test_expect_success 'stored and bound anew: the same dead and arch records' '
	answers stored &&
	grep -q "\"name\":\"node\"" stored &&
	grep -q "\"_type\":\"package_edge\"" stored &&
	q "DELETE FROM graph_stamp" &&
	answers bound &&
	test_cmp bound stored
'

test_expect_success 'trace, from the whole graph: use_b to helper, directly and through twice' '
	(cd repo && ci-refs --json trace use_b helper) >out &&
	"$JQ" -r "([.hops[].name] | join(\" \")) + \" \" + ([.hops[1:][] | .call | \"\\(.path):\\(.line)\"] | join(\" \"))" \
		out >actual &&
	printf "%s\n" "use_b helper lib/b.c:1" "use_b twice helper lib/b.c:1 lib/a.c:2" >expect &&
	test_cmp expect actual
'

test_done
