#!/bin/sh
# t0981-graph-stored-answers: ci-index build and update store what dead and
# arch need from the whole call graph (libcommon/graph/gstore.c: graph_dead,
# graph_calls, graph_stamp), and ci-refs answers from them exactly as it
# does by binding every call anew; an update leaves them right, and any other
# write to the tables they derive from (a trigger empties the stamp) makes
# ci-refs bind anew rather than trust them.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'stored answers' 'the python and c grammars are not compiled in'
	test_done
fi

# q <sql>: a query of the test index
q() {
	sqlite3 repo/.ci-index/index.db "$1"
}

# answers <file>: dead and arch, with filters, their messages and exit
# statuses, into file
answers() {
	for a in dead "--kind class dead" "--path app dead" "--lang c dead" "--path nowhere dead" arch \
		"--path app arch"; do
		(cd repo && ci-refs --json $a 2>&1; echo "exit $?") || return 1
	done >"$1"
}

# live <file>: the same answers with the stored ones made stale
live() {
	q "DELETE FROM graph_stamp" && answers "$1"
}

test_expect_success 'setup: Python and C files calling each other, dead code in both' '
	git init -q repo &&
	write_lines app/core.py "from app.util import helper" "" \
		"def main():" "    return run()" "" \
		"def run():" "    return helper(1)" "" \
		"def unused():" "    return 1" "" \
		"class Old:" "    def stale(self):" "        return 0" &&
	write_lines app/util.py "def helper(x):" "    return x" "" "def spare():" "    return 2" &&
	write_lines lib/calc.h "int add(int a, int b);" "int unused_c(void);" &&
	write_lines lib/calc.c "#include \"calc.h\"" "int add(int a, int b) { return a + b; }" \
		"int unused_c(void) { return 0; }" "static int lonely(void) { return lonely(); }" &&
	write_lines cli/main.c "#include \"../lib/calc.h\"" "int main(void) { return add(1, 2); }" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'build stores them: a stamp, dead definitions, calls between files' '
	test "$(q "SELECT version FROM graph_stamp")" = 5 &&
	q "SELECT d.name FROM graph_defs g JOIN graph_files f ON f.id = g.fid JOIN defs d ON d.rowid = g.def
	   WHERE g.uses = 0 AND g.entry = 0 ORDER BY f.path, d.line, d.col" >actual &&
	printf "%s\n" unused Old stale spare unused_c lonely unused_c >expect &&
	test_cmp expect actual &&
	q "SELECT fa.path, fb.path, calls FROM graph_calls JOIN graph_files fa ON fa.id = a
	   JOIN graph_files fb ON fb.id = b ORDER BY 1, 2" >actual &&
	printf "%s\n" "app/core.py|app/util.py|1" "cli/main.c|lib/calc.c|1" >expect &&
	test_cmp expect actual
'

test_expect_success 'stored and bound anew: the same records' '
	answers stored &&
	test "$(grep -c "\"_type\":\"dead\"" stored)" -ge 10 &&
	grep -q "\"_type\":\"package_edge\"" stored &&
	live bound &&
	test_cmp bound stored &&
	test -z "$(q "SELECT * FROM graph_stamp")"
'

test_expect_success 'update: edits, a new file and a removal; stored anew, as a fresh build answers' '
	write_lines app/core.py "import os" "" \
		"def main():" "    return run()" "" \
		"def run():" "    return unused()" "" \
		"def unused():" "    return 1" &&
	write_lines app/extra.py "from app.util import spare" "" "def use():" "    return spare()" &&
	rm repo/cli/main.c &&
	(cd repo && ci-index update 2>/dev/null) &&
	test "$(q "SELECT version FROM graph_stamp")" = 5 &&
	answers updated &&
	(cd repo && ci-refs --json dead) | "$JQ" -r .name >names &&
	grep -qx helper names && grep -qx use names && grep -qx add names &&
	! grep -qx unused names && ! grep -qx spare names && ! grep -qx stale names &&
	rm -rf fresh && cp -R repo fresh && rm -rf fresh/.ci-index &&
	(cd fresh && ci-index build 2>/dev/null) &&
	mv repo kept && mv fresh repo && answers built && mv repo fresh && mv kept repo &&
	test_cmp built updated &&
	live bound &&
	test_cmp bound updated
'

test_expect_success 'any write to what they derive from makes them stale (a trigger)' '
	(cd repo && ci-index update 2>/dev/null) &&
	test "$(q "SELECT version FROM graph_stamp")" = 5 &&
	q "UPDATE files SET mtime = mtime + 1 WHERE path = '"'app/util.py'"'" &&
	test -z "$(q "SELECT * FROM graph_stamp")" &&
	(cd repo && ci-index update 2>/dev/null) &&
	test "$(q "SELECT version FROM graph_stamp")" = 5 &&
	q "DELETE FROM refs WHERE name = '"'unused'"'" &&
	test -z "$(q "SELECT * FROM graph_stamp")" &&
	(cd repo && ci-refs --json dead) | "$JQ" -r .name >names &&
	grep -qx unused names
'

test_expect_success 'an index without them (an older ci) answers as before; update adds them' '
	(cd repo && ci-index build 2>/dev/null) &&
	answers stored &&
	q "DROP TABLE graph_stamp; DROP TABLE graph_defs; DROP TABLE graph_calls" &&
	for t in $(q "SELECT name FROM sqlite_master WHERE type = '"'trigger'"'"); do
		q "DROP TRIGGER $t" || return 1
	done &&
	answers bound &&
	test_cmp stored bound &&
	(cd repo && ci-index update 2>/dev/null) &&
	test "$(q "SELECT version FROM graph_stamp")" = 5 &&
	answers again &&
	test_cmp stored again
'

test_expect_success 'a stamp of other rules is not trusted' '
	q "UPDATE graph_stamp SET version = 999; DELETE FROM graph_defs" &&
	answers bound &&
	test_cmp stored bound
'

test_expect_success '--no-graph: build and update store none, the answers are the same' '
	rm -rf repo/.ci-index &&
	(cd repo && ci-index --no-graph build 2>/dev/null) &&
	test -z "$(q "SELECT version FROM graph_stamp" 2>/dev/null)" &&
	answers bound &&
	test_cmp stored bound &&
	echo "def later():" >>repo/app/util.py &&
	echo "    return 3" >>repo/app/util.py &&
	(cd repo && ci-index --no-graph --no-server update 2>/dev/null) &&
	test -z "$(q "SELECT version FROM graph_stamp" 2>/dev/null)" &&
	(cd repo && ci-refs --json dead) | "$JQ" -r .name >names &&
	grep -qx later names &&
	(cd repo && ci-index --no-server update 2>/dev/null) &&
	test "$(q "SELECT version FROM graph_stamp")" = 5
'

test_done
