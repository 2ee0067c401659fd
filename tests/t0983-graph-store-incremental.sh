#!/bin/sh
# t0983-graph-store-incremental: ci-index update refreshes the stored call
# graph answers (libcommon/graph/gsdelta.c) by re-binding only the files a
# change can affect, and what it stores is what a fresh build stores: the
# tables (by path, name and line, not by ids) and ci-refs dead and arch.
# ci-index -v says which path ran: "graph store: N files re-bound", or
# "graph store: the whole graph bound (why)" where the change cannot be bounded
# cheaply (a Python file) or someone else wrote to the index.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'incremental graph store' 'the python and c grammars are not compiled in'
	test_done
fi

. "$CI_SRC_DIR/tests/gstore-lib.sh"

test_expect_success 'setup: C files calling across files and through a header, a Python file' '
	git init -q repo &&
	write_lines lib/calc.h "int add(int a, int b);" "int unused_c(void);" "int twice(int x);" &&
	write_lines lib/calc.c "#include \"calc.h\"" "int add(int a, int b) { return a + b; }" \
		"int unused_c(void) { return 0; }" "static int lonely(void) { return lonely(); }" \
		"int twice(int x) { return add(x, x); }" &&
	write_lines cli/main.c "#include \"../lib/calc.h\"" "int helper(int x) { return x; }" \
		"int main(void) { return add(1, twice(2)); }" &&
	write_lines cli/other.c "int other(void) { return helper(3); }" "int spare(void) { return 4; }" \
		"int more(void) { return spare() + ghost(); }" &&
	write_lines tool/run.py "def go():" "    return 1" "" "def idle():" "    return 2" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null) &&
	same_as_built
'

test_expect_success 'an edit of a body: only the edited file is re-bound' '
	write_lines cli/other.c "int other(void) { return helper(3) + helper(4); }" \
		"int spare(void) { return 4; }" "" "int more(void) { return spare() + ghost(); }" &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built
'

test_expect_success 'an added file calling into others' '
	write_lines extra/new.c "int fresh_one(void) { return more(); }" "int unused_x(void) { return add(3, 4); }" &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built
'

test_expect_success 'an edit that defines a name used elsewhere: its callers re-bound' '
	write_lines lib/calc.c "#include \"calc.h\"" "int add(int a, int b) { return a + b; }" \
		"int unused_c(void) { return 0; }" "static int lonely(void) { return lonely(); }" \
		"int twice(int x) { return add(x, x); }" "int ghost(void) { return 0; }" &&
	update && grep -qx "ci-index: graph store: 2 files re-bound" path &&
	same_as_built
'

test_expect_success 'an edit that removes the only definition of a called name' '
	write_lines cli/main.c "#include \"../lib/calc.h\"" "int main(void) { return add(1, twice(2)); }" &&
	update && grep -qx "ci-index: graph store: 2 files re-bound" path &&
	(cd repo && ci-refs --json dead) | "$JQ" -r .name >names &&
	grep -qx other names &&
	same_as_built
'

test_expect_success 'a rename, then a removal' '
	mv repo/extra/new.c repo/extra/renamed.c &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built &&
	rm repo/extra/renamed.c &&
	update && grep -qx "ci-index: graph store: 0 files re-bound" path &&
	same_as_built
'

test_expect_success 'a header prototype added and its file edited together' '
	write_lines lib/calc.h "int add(int a, int b);" "int unused_c(void);" "int twice(int x);" "int thrice(int x);" &&
	write_lines lib/calc.c "#include \"calc.h\"" "int add(int a, int b) { return a + b; }" \
		"int unused_c(void) { return 0; }" "static int lonely(void) { return lonely(); }" \
		"int twice(int x) { return add(x, x); }" "int ghost(void) { return 0; }" \
		"int thrice(int x) { return twice(x) + x; }" &&
	update && grep -q "files re-bound" path &&
	same_as_built
'

test_expect_success 'a definition of a name another file only mentions (a callback): found by its mention' '
	write_lines cli/table.c "int (*hook)(void) = late_cb;" &&
	update && grep -q "files re-bound" path &&
	same_as_built &&
	write_lines extra/cb.c "int late_cb(void) { return 0; }" &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	(cd repo && ci-refs --json dead) | "$JQ" -r .name >names &&
	! grep -qx late_cb names &&
	same_as_built
'

test_expect_success 'a C struct: its file edited stays incremental; a new struct name where Python is indexed does not' '
	write_lines lib/shape.c "struct shape { int w; };" "int area(struct shape *s) { return s->w; }" &&
	update && grep -q "graph store: the whole graph bound (" path &&
	same_as_built &&
	write_lines lib/shape.c "struct shape { int w; int h; };" "int area(struct shape *s) { return s->w * s->h; }" &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built
'

test_expect_success 'a Python file changed: the whole graph is bound' '
	write_lines tool/run.py "def go():" "    return idle()" "" "def idle():" "    return 2" &&
	update && grep -q "^ci-index: graph store: the whole graph bound (" path &&
	same_as_built
'

test_expect_success 'a write by another program: the next update binds the whole graph' '
	sqlite3 repo/.ci-index/index.db "UPDATE files SET mtime = mtime + 1 WHERE path = '"'cli/other.c'"'" &&
	test -z "$(sqlite3 repo/.ci-index/index.db "SELECT * FROM graph_base")" &&
	echo "int late(void) { return 5; }" >>repo/cli/other.c &&
	update && grep -q "^ci-index: graph store: the whole graph bound (" path &&
	same_as_built &&
	echo "int later(void) { return late(); }" >>repo/cli/other.c &&
	update && grep -qx "ci-index: graph store: 1 files re-bound" path &&
	same_as_built
'

test_expect_success 'an update that changes nothing: nothing re-bound' '
	update && grep -qx "ci-index: graph store: 0 files re-bound" path &&
	same_as_built
'

test_done
