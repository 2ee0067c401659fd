#!/bin/sh
# t0944-graph-dead: ci-refs dead reports the definitions nothing reaches
# (libcommon/graph/cgraph.c, dead.c), with the reason, and leaves out what is
# used in ways a call graph alone misses (a callback passed by name, __all__,
# a package's re-export, an ambiguous call) and the entry points (main,
# tests, dunder methods, decorated definitions).  An import names its module:
# "from app.core import run" is a use of app/core.py's run, not of Job.run.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'dead' 'the python and c grammars are not compiled in'
	test_done
fi

test_expect_success 'setup: used and unused definitions of every sort' '
	git init -q repo &&
	write_lines app/core.py "from app.util import helper" "" \
		"def main():" "    return run()" "" \
		"def run():" "    register(on_event)" "    return helper(1)" "" \
		"def register(cb):" "    return cb" "" \
		"def on_event():" "    pass" "" \
		"def unused():" "    return 1" "" \
		"def countdown(n):" "    return countdown(n - 1)" "" \
		"@app.route(\"/\")" "def index():" "    return 1" &&
	write_lines app/util.py "__all__ = [\"exported\"]" "" \
		"def helper(x):" "    return x" "" \
		"def exported():" "    return 2" "" \
		"def reexported():" "    return 3" "" \
		"class Shape:" "    def __repr__(self):" "        return \"s\"" "" \
		"    def area(self):" "        return 0" "" \
		"    def stale(self):" "        return 0" "" \
		"class Square:" "    def area(self):" "        return 1" "" \
		"def measure(s):" "    return s.area()" "" \
		"def make():" "    return Shape()" &&
	write_lines app/__init__.py "from app.util import reexported" &&
	write_lines other.py "from app.core import run" "" \
		"def helper(x):" "    return x" "" "def go():" "    return measure(make())" "" \
		"class Job:" "    def run(self):" "        return 0" &&
	write_lines tests/test_core.py "def test_run():" "    assert True" "" "def fixture_helper():" "    return 1" &&
	write_lines scripts/tool.py "def test_like():" "    return 1" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'dead: what nothing reaches, by path and line, with the reason' '
	(cd repo && ci-refs --json dead) >out &&
	"$JQ" -r "[.path, .line, .name, .kind, .reason, .namesake_calls, .self_calls] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	app/core.py	16	unused	function	unreferenced	0	0
	app/core.py	19	countdown	function	recursive_only	0	1
	app/util.py	19	stale	method	unreferenced	0	0
	app/util.py	22	Square	class	unreferenced	0	0
	other.py	3	helper	function	namesake_calls_only	1	0
	other.py	6	go	function	unreferenced	0	0
	other.py	9	Job	class	unreferenced	0	0
	other.py	10	run	method	namesake_calls_only	1	0
	EOF
	test_cmp expect actual
'

test_expect_success 'kept: a callback by name, __all__, a re-export, an ambiguous call, entry points' '
	"$JQ" -r .name out >names &&
	for n in on_event exported reexported area Shape make measure main index __repr__ test_run fixture_helper test_like; do
		! grep -qx "$n" names || { echo "$n reported dead" >&7; return 1; }
	done
'

test_expect_success '--kind and --path filter' '
	(cd repo && ci-refs --json --kind method dead) >out &&
	"$JQ" -r .name out >actual &&
	printf "stale\nrun\n" >expect && test_cmp expect actual &&
	(cd repo && ci-refs --json --path other.py --kind class dead) >out &&
	"$JQ" -r .name out >actual &&
	echo Job >expect && test_cmp expect actual
'

test_expect_success 'nothing dead under a path: exit 1 and a message' '
	(cd repo && test_status 1 ci-refs --path tests dead 2>../err) &&
	test_grep "nothing unreached among 2 definitions" err
'

test_expect_success 'dead takes no argument' '
	(cd repo && test_status 2 ci-refs dead x 2>../err) &&
	test_grep "dead takes no argument" err
'

test_expect_success 'kept: an override, an inherited method called through self, a nested function, a base class' '
	write_lines app/nested.py "class Base:" "    def render(self):" "        return self.body()" "" \
		"    def body(self):" "        return 1" "" "    def shared(self):" "        return 2" "" \
		"class Page(Base):" "    def body(self):" "        return self.shared()" "" \
		"def outer():" "    def inner():" "        return 1" "    return inner()" &&
	(cd repo && git add . && git commit -qm nested && ci-index update 2>/dev/null && ci-refs --json --path app/nested.py dead) >out &&
	"$JQ" -r "[.line, .name, .reason] | @tsv" out >actual &&
	printf "2\trender\tunreferenced\n11\tPage\tunreferenced\n15\touter\tunreferenced\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'kept: names looked up by a string prefix, overrides of a library class' '
	write_lines app/dyn.py "import argparse" "" "class Shell:" "    def run(self, cmd):" \
		"        return getattr(self, \"cmd_\" + cmd)()" "" "    def cmd_quit(self):" "        return 0" "" \
		"    def on_play(self):" "        return handler(f\"on_{self}\")" "" \
		"class Fmt(argparse.HelpFormatter):" "    def format_help(self):" "        return \"\"" "" \
		"    def spare(self):" "        return 1" "" "class Local(Shell):" "    def spare(self):" "        return 2" &&
	(cd repo && git add . && git commit -qm dyn && ci-index update 2>/dev/null && ci-refs --json --path app/dyn.py dead) >out &&
	"$JQ" -r "[.line, .scope, .name] | @tsv" out >actual &&
	printf "4\tShell\trun\n13\t\tFmt\n20\t\tLocal\n21\tLocal\tspare\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'C: a function called through its header prototype, a constructor, #ifdef twins' '
	write_lines lib/api.h "int api_get(int x);" "int api_unused(void);" &&
	write_lines lib/api.c "#include \"api.h\"" "int api_get(int x)" "{" "\treturn x;" "}" "" \
		"int api_unused(void)" "{" "\treturn 0;" "}" "" \
		"__attribute__((constructor)) static void setup(void)" "{" "}" "" \
		"#ifdef A" "static int pick(void) { return 1; }" "#else" "static int pick(void) { return 2; }" "#endif" \
		"int use_pick(void) { return pick(); }" &&
	write_lines lib/main.c "#include \"api.h\"" "int main(void)" "{" "\treturn api_get(1);" "}" &&
	(cd repo && git add . && git commit -qm c && ci-index update 2>/dev/null && ci-refs --json --path lib dead) >out &&
	"$JQ" -r "[.path, .line, .name, .reason] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	lib/api.c	7	api_unused	unreferenced
	lib/api.c	21	use_pick	unreferenced
	lib/api.h	2	api_unused	unreferenced
	EOF
	test_cmp expect actual
'

test_done
