#!/bin/sh
# t0980-graph-stored: what the call graph needs from the text is stored when
# a file is indexed (schema version 9): a call's receiver (refs.recv), a
# definition's flags (defs.flags: decorated, a C constructor), a file's main
# guard (blobs.main_guard) and its mentions (the mentions table).  ci-refs
# reads them, not the text: with the chunks' text blanked, dead, arch,
# callers and callees answer as before.  ci-index update stores them anew
# for an edited file.
. "$(dirname "$0")/lib.sh"

for l in javascript typescript c python; do
	if ! test_have_lang $l; then
		test_skip 'stored call-graph data' "the $l grammar is not compiled in"
		test_done
	fi
done

# q <sql>: a query of the test index, rows as sqlite3 prints them
q() {
	sqlite3 repo/.ci-index/index.db "$1"
}

# answers <file>: dead, arch, callers and callees, without the snippets (read from the text)
answers() {
	(cd repo &&
	 for c in dead arch "callers Square.area" "callers area" "callees Square.total" "--depth 2 callers area"; do
		echo "== $c" && ci-refs --json --limit 1000 $c | "$JQ" -c "del(.snippet)" || return 1
	 done) >"$1"
}

test_expect_success 'setup: calls on self, on a variable and bare; a decorator, a constructor, a callback, a main guard' '
	git init -q repo &&
	write_lines shapes.js "function area(s) {" "  return 0;" "}" "" "class Square {" "  area() {" \
		"    return 1;" "  }" "  total() {" "    return this.area();" "  }" "  other(x) {" \
		"    return x.area();" "  }" "}" "" "function plain() {" "  return area(1);" "}" &&
	write_lines app.ts "@Component({})" "class Widget {" "  draw() {" "    return 1;" "  }" "}" &&
	write_lines drv.c "struct ops { int (*open)(void); };" "" "static int my_open(void)" "{" \
		"	return 0;" "}" "" "static struct ops o = { .open = my_open };" "" \
		"__attribute__((constructor)) static void init_me(void)" "{" "}" &&
	write_lines tool.py "def main():" "    return 1" "" "if __name__ == \"__main__\":" "    main()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'stored: each call'"'"'s receiver, the flags, the main guard, the mentions' '
	q "SELECT f.path, r.name, r.line, r.recv FROM refs r JOIN files f ON f.blob_id = r.blob_id
	   WHERE r.kind = '"'call'"' ORDER BY 1, 3" >actual &&
	cat >expect <<-\EOF &&
	app.ts|Component|1|1
	shapes.js|area|10|2
	shapes.js|area|13|4
	shapes.js|area|18|1
	tool.py|main|5|1
	EOF
	test_cmp expect actual &&
	q "SELECT f.path, d.name, d.flags FROM defs d JOIN files f ON f.blob_id = d.blob_id WHERE d.flags != 0
	   ORDER BY 1" >actual &&
	printf "app.ts|Widget|1\ndrv.c|init_me|1\n" >expect &&
	test_cmp expect actual &&
	q "SELECT f.path, b.main_guard FROM files f JOIN blobs b ON b.id = f.blob_id WHERE b.main_guard != 0" >actual &&
	echo "tool.py|4" >expect &&
	test_cmp expect actual &&
	q "SELECT f.path FROM files f JOIN mentions m ON m.blob_id = f.blob_id ORDER BY 1" >actual &&
	printf "app.ts\ndrv.c\nshapes.js\ntool.py\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'dead: the decorated class, the constructor and the callback are kept' '
	(cd repo && ci-refs --json dead) >out &&
	"$JQ" -r "[.path, .name, .reason] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	app.ts	draw	unreferenced
	shapes.js	Square	unreferenced
	shapes.js	total	unreferenced
	shapes.js	other	unreferenced
	shapes.js	plain	unreferenced
	EOF
	test_cmp expect actual
'

test_expect_success 'the text blanked: dead, arch, callers and callees answer as before' '
	answers before &&
	grep -v "^==" before | "$JQ" -r "select(.binding) | [.line, .binding] | @tsv" >bindings &&
	test_grep "^10	member" bindings &&
	q "UPDATE chunks SET text = X'"''"' WHERE blob_id IN (SELECT id FROM blobs WHERE lang != '"'python'"')" &&
	q "SELECT count(*) FROM chunks WHERE length(text) > 0 AND blob_id IN
	   (SELECT id FROM blobs WHERE lang != '"'python'"')" >actual &&
	echo 0 >expect && test_cmp expect actual &&
	answers after &&
	test_cmp before after
'

test_expect_success 'ci-index update stores them anew for the edited files' '
	write_lines shapes.js "function area(s) {" "  return 0;" "}" "" "class Square {" "  area() {" \
		"    return 1;" "  }" "  total() {" "    return area(this);" "  }" "  other(x) {" \
		"    return x.area();" "  }" "}" "" "function plain() {" "  return area(1);" "}" &&
	write_lines app.ts "class Widget {" "  draw() {" "    return 1;" "  }" "}" &&
	write_lines drv.c "struct ops { int (*open)(void); };" "" "static int my_open(void)" "{" \
		"	return 0;" "}" "" "static struct ops o;" "" \
		"static void init_me(void)" "{" "}" &&
	(cd repo && ci-index update 2>/dev/null) &&
	q "SELECT r.line, r.recv FROM refs r JOIN files f ON f.blob_id = r.blob_id
	   WHERE f.path = '"'shapes.js'"' AND r.kind = '"'call'"' ORDER BY 1" >actual &&
	printf "10|1\n13|4\n18|1\n" >expect &&
	test_cmp expect actual &&
	q "SELECT count(*) FROM defs d JOIN files f ON f.blob_id = d.blob_id WHERE d.flags != 0" >actual &&
	echo 0 >expect && test_cmp expect actual &&
	(cd repo && ci-refs --json dead) >out &&
	"$JQ" -r "[.path, .name] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	app.ts	Widget
	app.ts	draw
	drv.c	my_open
	drv.c	init_me
	shapes.js	Square
	shapes.js	total
	shapes.js	other
	shapes.js	plain
	EOF
	test_cmp expect actual &&
	(cd repo && ci-refs --json callers area) >out &&
	"$JQ" -r "[.line, .scope, .binding] | @tsv" out >actual &&
	printf "10\tSquare.total\tlocal\n18\tplain\tlocal\n" >expect &&
	test_cmp expect actual &&
	(cd repo && test_status 1 ci-refs callers Square.area 2>../err) &&
	test_grep "no callers of .Square.area." err
'

test_expect_success 'an index of schema version 8 (no stored receivers): ci-refs says to build it' '
	cp repo/.ci-index/index.db v8.db &&
	sqlite3 v8.db "UPDATE meta SET value = '"'8'"' WHERE key = '"'schema_version'"'" &&
	(cd repo && test_status 3 ci-refs --index ../v8.db dead >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "schema version 8, this ci reads version 9: run .ci-index build." err
'

test_done
