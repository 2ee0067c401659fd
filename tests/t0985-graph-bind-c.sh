#!/bin/sh
# t0985-graph-bind-c: ci-refs callers on C binds a call to the function with
# a body, as clang does (bench/graph-clang.py): through the prototype of an
# included header, past a forward declaration in the same file, and not at
# all for a call through a struct field (p->area(), s.area()).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'C binding' 'the c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: area() declared in lib.h, defined in lib.c; twice() forward-declared in util.c' '
	git init -q repo &&
	write_lines lib.h "int area(int x);" "struct shape { int (*area)(int); };" &&
	write_lines lib.c "#include \"lib.h\"" "" "int area(int x)" "{" "	return x * x;" "}" &&
	write_lines main.c "#include \"lib.h\"" "" "int main(void)" "{" "	struct shape s, *p = &s;" \
		"	return area(2) + p->area(3) + s.area(4);" "}" &&
	write_lines util.c "static int twice(int x);" "" "int use(void)" "{" "	return twice(area(1));" "}" "" \
		"static int twice(int x)" "{" "	return 2 * x;" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers area: the calls reach lib.c (not the prototype), p->area() and s.area() are not among them' '
	(cd repo && ci-refs --json callers area) >out &&
	"$JQ" -c "{path, line, binding, def: .definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"main.c","line":6,"binding":"import","def":{"path":"lib.c","line":3}}
	{"path":"util.c","line":5,"binding":"name","def":{"path":"lib.c","line":3}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers twice: the call reaches the definition below its forward declaration' '
	(cd repo && ci-refs --json callers twice) >out &&
	"$JQ" -c "{path, line, binding, def: .definition}" out >actual &&
	echo "{\"path\":\"util.c\",\"line\":5,\"binding\":\"local\",\"def\":{\"path\":\"util.c\",\"line\":8}}" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees use: twice and area, each at its function' '
	(cd repo && ci-refs --json callees use) >out &&
	"$JQ" -c "{name, def: .definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"twice","def":{"path":"util.c","line":8}}
	{"name":"area","def":{"path":"lib.c","line":3}}
	EOF
	test_cmp expect actual
'

test_done
