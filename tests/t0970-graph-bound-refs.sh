#!/bin/sh
# t0970-graph-bound-refs: a qualified name's references and a symbol's impact
# leave out the calls the binding gives to a namesake: B.run's self.run() is
# not a reference of A.run, though b.py imports a.py and names run.  The
# profiles' structure tools answer the same (codebase-context
# get_symbol_references, kit find_symbol_occurrences, bobbin impact); callers
# at depth 2 are read from the index, not the whole graph.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'bound references' 'the python or c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: two classes with a method run, a caller of each' '
	git init -q repo &&
	write_lines a.py "class A:" "    def run(self):" "        return 1" &&
	write_lines b.py "from a import A" "" "" "class B:" "    def run(self):" "        return 2" "" \
		"    def go(self):" "        return self.run()" &&
	write_lines c.py "from a import A" "" "" "def main():" "    return A().run()" "" "" \
		"def top():" "    return main()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'refs A.run: the call bound to A.run, not self.run() of B' '
	(cd repo && ci-refs --json refs A.run) >out &&
	"$JQ" -c "{path, line, kind}" out >actual &&
	echo "{\"path\":\"c.py\",\"line\":5,\"kind\":\"call\"}" >expect &&
	test_cmp expect actual
'

test_expect_success 'refs B.run: self.run() only; refs run (not qualified): both' '
	(cd repo && ci-refs --json refs B.run) >out &&
	"$JQ" -c "{path, line}" out >actual &&
	echo "{\"path\":\"b.py\",\"line\":9}" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-refs --json refs run) >out &&
	"$JQ" -r ".path" out >actual &&
	printf "b.py\nc.py\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact a.py:run: c.py references it, b.py only imports a.py' '
	(cd repo && ci-refs --json --mode deps impact a.py:run) >out &&
	"$JQ" -c "{path, references}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"c.py","references":1}
	{"path":"b.py","references":null}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers A.run --depth 2: main, then top; callees top: main, then what main calls' '
	(cd repo && ci-refs --json --depth 2 callers A.run) >out &&
	"$JQ" -c "{path, line, scope, depth, binding}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"c.py","line":5,"scope":"main","depth":1,"binding":"receiver"}
	{"path":"c.py","line":9,"scope":"top","depth":2,"binding":"local"}
	EOF
	test_cmp expect actual &&
	(cd repo && ci-refs --json --depth 2 callees top) >out &&
	"$JQ" -c "{name, line, depth}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"main","line":9,"depth":1}
	{"name":"A","line":5,"depth":2}
	{"name":"run","line":5,"depth":2}
	EOF
	test_cmp expect actual
'

# mcp <profile> <tool> <arguments>: structuredContent of one tools/call, in sc
mcp() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$2" "$3" |
	(cd "$TRASH_DIRECTORY/repo" && ci-mcp --profile "$1") >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
	"$JQ" -c .result.structuredContent "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/sc"
}

test_expect_success 'codebase-context get_symbol_references A.run: one usage, in c.py' '
	mcp codebase-context get_symbol_references "{\"symbol\":\"A.run\"}" &&
	"$JQ" -c "[.usageCount, [.usages[].file]]" sc >actual &&
	echo "[1,[\"c.py\"]]" >expect &&
	test_cmp expect actual
'

test_expect_success 'kit find_symbol_occurrences B.run: its definition and self.run()' '
	mcp kit find_symbol_occurrences "{\"symbol_name\":\"B.run\"}" &&
	"$JQ" -c "[.occurrences[] | [.file_path, .line_number, .type]]" sc >actual &&
	echo "[[\"b.py\",5,\"definition\"],[\"b.py\",9,\"reference\"]]" >expect &&
	test_cmp expect actual
'

test_expect_success 'bobbin impact a.py:run: no reference counted in b.py' '
	mcp bobbin impact "{\"target\":\"a.py:run\",\"mode\":\"deps\",\"threshold\":0}" &&
	"$JQ" -r ".results[] | \"\(.file): \(.reason)\"" sc >actual &&
	cat >expect <<-\EOF &&
	c.py: imports the target; 1 reference to its symbols
	b.py: imports the target
	EOF
	test_cmp expect actual
'

test_expect_success 'C: impact lib.h:area counts the call that binds to its function (one symbol with the prototype)' '
	git init -q crepo &&
	mkdir -p crepo/src &&
	printf "int area(int x);\n" >crepo/src/lib.h &&
	printf "#include \"lib.h\"\n\nint area(int x)\n{\n\treturn x;\n}\n" >crepo/src/lib.c &&
	printf "#include \"lib.h\"\n\nint main(void)\n{\n\treturn area(2);\n}\n" >crepo/src/main.c &&
	(cd crepo && git add . && git commit -qm init && ci-index build 2>/dev/null) &&
	(cd crepo && ci-refs --json --mode deps impact src/lib.h:area) >out &&
	"$JQ" -c "select(.references) | {path, references}" out >actual &&
	echo "{\"path\":\"src/main.c\",\"references\":1}" >expect &&
	test_cmp expect actual
'

test_done
