#!/bin/sh
# t0958-graph-python-alias-chain: a Python function called under other names
# made a few imports away (b.py `from a import f; g = f`, c.py `from b import
# g; h2 = g`, d.py `from c import h2`, `from a import f as ff`): callers of f
# list those calls (resolve.h's resolve_alias_names()), and so do the walks
# to --depth levels (callers, callees, symbol-level impact: callwalk.c) past
# the first level; the stored graph (dead, graph_calls) has the same edges.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'python alias chains' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: f, aliases of it two and three imports away, callers of the callers' '
	git init -q repo &&
	write_lines a.py "def f():" "    return 1" "" "" "def lone():" "    return 2" &&
	write_lines b.py "from a import f" "" "g = f" &&
	write_lines c.py "from b import g" "" "h2 = g" "" "" "def k():" "    return g()" &&
	write_lines d.py "from c import h2" "from a import f as ff" "" "" "def m():" "    h2()" "    ff()" &&
	write_lines e.py "from c import k" "from d import m" "" "" "def top():" "    k()" "    m()" &&
	write_lines pkg/core.py "def run():" "    return 1" &&
	write_lines pkg/__init__.py "from .core import *" &&
	write_lines u.py "from pkg import run as go" "" "" "def w():" "    go()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers f: the calls through g, ff and h2 (names in the order met), bound to f as imports' '
	(cd repo && ci-refs --json callers f) >out &&
	"$JQ" -c "{name, path, line, scope, binding, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"g","path":"c.py","line":7,"scope":"k","binding":"import","definition":{"path":"a.py","line":1}}
	{"name":"ff","path":"d.py","line":7,"scope":"m","binding":"import","definition":{"path":"a.py","line":1}}
	{"name":"h2","path":"d.py","line":6,"scope":"m","binding":"import","definition":{"path":"a.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers run: renamed on import from the package that star-imports it' '
	(cd repo && ci-refs --json callers run && ci-refs --json --depth 2 callers run) >out &&
	"$JQ" -c "{name, path, line, depth, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"go","path":"u.py","line":5,"depth":null,"definition":{"path":"pkg/core.py","line":1}}
	{"name":"go","path":"u.py","line":5,"depth":1,"definition":{"path":"pkg/core.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers f --depth 3: the alias calls at depth 1, their callers at depth 2' '
	(cd repo && ci-refs --json --depth 3 callers f) >out &&
	"$JQ" -c "{name, path, line, depth, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"g","path":"c.py","line":7,"depth":1,"definition":{"path":"a.py","line":1}}
	{"name":"h2","path":"d.py","line":6,"depth":1,"definition":{"path":"a.py","line":1}}
	{"name":"ff","path":"d.py","line":7,"depth":1,"definition":{"path":"a.py","line":1}}
	{"name":"k","path":"e.py","line":6,"depth":2,"definition":{"path":"c.py","line":6}}
	{"name":"m","path":"e.py","line":7,"depth":2,"definition":{"path":"d.py","line":5}}
	EOF
	test_cmp expect actual
'

test_expect_success 'the first level of the walk is the depth-1 answer (as a set)' '
	(cd repo && ci-refs --json callers f && ci-refs --json callees m) |
		"$JQ" -c "{path, line, definition}" | sort >one &&
	(cd repo && ci-refs --json --depth 2 callers f && ci-refs --json --depth 2 callees m) |
		"$JQ" -c "select(.depth == 1) | {path, line, definition}" | sort >walk &&
	test_cmp one walk
'

test_expect_success 'callees top --depth 2: the alias calls of k and m reach f' '
	(cd repo && ci-refs --json --depth 2 callees top) >out &&
	"$JQ" -c "{name, line, depth, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"k","line":6,"depth":1,"definition":{"path":"c.py","line":6}}
	{"name":"m","line":7,"depth":1,"definition":{"path":"d.py","line":5}}
	{"name":"g","line":7,"depth":2,"definition":{"path":"a.py","line":1}}
	{"name":"h2","line":6,"depth":2,"definition":{"path":"a.py","line":1}}
	{"name":"ff","line":7,"depth":2,"definition":{"path":"a.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'impact a.py:f --depth 2: the alias callers have the call signal' '
	(cd repo && ci-refs --json --depth 2 impact a.py:f) >out &&
	"$JQ" -r "select(.call_depth) | \"\(.path) \(.call_depth)\"" out | sort >actual &&
	printf "c.py 1\nd.py 1\ne.py 2\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'trace top f: through k and through m, an alias call the last hop of each' '
	(cd repo && ci-refs --json trace top f) >out &&
	"$JQ" -c "[.hops[] | \"\(.name):\(.call.line)\"] | join(\" \")" out >actual &&
	printf "\"top:null k:6 f:7\"\n\"top:null m:7 f:6\"\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'the stored graph: the same file edges, f not dead, lone dead' '
	sqlite3 -separator " " repo/.ci-index/index.db "SELECT fa.path, fb.path, c.calls FROM graph_calls c
		JOIN graph_files fa ON fa.id = c.a JOIN graph_files fb ON fb.id = c.b ORDER BY 1, 2" >stored &&
	for n in f k m run; do (cd repo && ci-refs --json callers $n) || return 1; done >recs &&
	"$JQ" -r "select(.path != .definition.path) | \"\(.path) \(.definition.path)\"" recs |
		sort | uniq -c | awk "{ print \$2, \$3, \$1 }" >callers &&
	test_cmp callers stored &&
	(cd repo && ci-refs --json dead) | "$JQ" -r "\"\(.path):\(.name)\"" | sort >actual &&
	printf "a.py:lone\ne.py:top\nu.py:w\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'more other names than the bound (512): a warning says calls may be missing, the rest listed' '
	git init -q wide &&
	printf "def f():\n    return 1\n" >wide/a.py &&
	i=0 &&
	while test $i -lt 520; do
		printf "from a import f as g%d\n\n\ndef c%d():\n    g%d()\n" $i $i $i >wide/m$i.py || return 1
		i=$((i + 1))
	done &&
	(cd wide && git add -A && git commit -q -m wide && ci-index build 2>/dev/null) &&
	(cd wide && ci-refs --json --limit 10000 callers f) >out 2>err &&
	grep "warning: the other names of f (a.py) were followed to 512 bindings" err &&
	test "$("$JQ" -s length out)" -gt 500 &&
	test "$("$JQ" -s length out)" -lt 520
'

test_done
