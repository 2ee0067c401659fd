#!/bin/sh
# t0956-graph-python-alias: a call through a module-level alias made by
# assignment (`ib = attr = attrib` as attrs' __init__.py, `s = m.attrib`)
# binds to the function or class the value names, as an import-followed name
# (binding "import"); a name assigned twice at module level is left unbound
# (libcommon/graph/resolve.c assigned_name).  callers of the function list
# the aliases' calls, callees and the whole graph (trace) reach it.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'python aliases' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a function, a class, their aliases, calls through them' '
	git init -q repo &&
	write_lines m.py "def attrib(x=None):" "    return x" "" "" "class Klass:" "    pass" "" "" \
		"ib = attr = attrib" "K = Klass" "twice = attrib" "twice = Klass" &&
	write_lines api.py "import m" "" "s = m.attrib" &&
	write_lines user.py "import m" "import api" "from m import attr, twice, K" "" "" "def use():" \
		"    m.ib()" "    attr()" "    twice()" "    K()" "    m.twice()" "    api.s()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers attrib: the calls of its aliases, bound as imports' '
	(cd repo && ci-refs --json callers attrib) >out &&
	"$JQ" -c "{name, path, line, scope, binding, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"ib","path":"user.py","line":7,"scope":"use","binding":"import","definition":{"path":"m.py","line":1}}
	{"name":"attr","path":"user.py","line":8,"scope":"use","binding":"import","definition":{"path":"m.py","line":1}}
	{"name":"s","path":"user.py","line":12,"scope":"use","binding":"import","definition":{"path":"m.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers Klass: K() through K = Klass' '
	(cd repo && ci-refs --json callers Klass) >out &&
	"$JQ" -c "{name, line, binding, definition}" out >actual &&
	echo "{\"name\":\"K\",\"line\":10,\"binding\":\"import\",\"definition\":{\"path\":\"m.py\",\"line\":5}}" >expect &&
	test_cmp expect actual
'

test_expect_success 'callees use: the aliases reach attrib and Klass, the reassigned name nothing' '
	(cd repo && ci-refs --json callees use) >out &&
	"$JQ" -c "{name, line, binding, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"ib","line":7,"binding":"import","definition":{"path":"m.py","line":1}}
	{"name":"attr","line":8,"binding":"import","definition":{"path":"m.py","line":1}}
	{"name":"twice","line":9,"binding":null,"definition":null}
	{"name":"K","line":10,"binding":"import","definition":{"path":"m.py","line":5}}
	{"name":"twice","line":11,"binding":null,"definition":null}
	{"name":"s","line":12,"binding":"import","definition":{"path":"m.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'the whole graph: trace use -> attrib through the alias' '
	(cd repo && ci-refs --json trace use attrib) >out &&
	"$JQ" -c ".hops[1] | {name, line, call: .call.line, binding: .call.binding}" out >actual &&
	echo "{\"name\":\"attrib\",\"line\":1,\"call\":7,\"binding\":\"import\"}" >expect &&
	test_cmp expect actual
'

test_done
