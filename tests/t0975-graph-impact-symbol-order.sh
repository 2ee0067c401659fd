#!/bin/sh
# t0975-graph-impact-symbol-order: impact path:symbol lists the symbol's
# callers first (a direct caller, then a caller's caller), then the files that
# reference it without calling it, then the importers that never reference
# it (Python: a line naming it outside the imports, HOOKS = [target] or
# lib.target); the names of the files (which would decide a tie of scores) are chosen
# so that no other order comes out the same.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'impact order' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: target in lib.py, a caller, a caller of the caller, a reference, a plain importer' '
	git init -q repo &&
	write_lines lib.py "def target():" "    return 1" "" "" "def other():" "    return 2" &&
	write_lines m_use.py "from lib import target" "" "" "def use():" "    return target()" &&
	write_lines a_top.py "from m_use import use" "" "" "def top():" "    return use()" &&
	write_lines b_hooks.py "from lib import target" "" "HOOKS = [target]" &&
	write_lines a_plain.py "import lib" "" "" "def f():" "    return lib.other()  # not target" &&
	write_lines e_mod.py "import lib" "" "CALLBACK = lib.target" &&
	write_lines n_name.py "def target():" "    return 3" "" "" "def g():" "    return target()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'impact lib.py:target: depth-1 callers, deeper callers, referencing importers, other importers' '
	(cd repo && ci-refs --json --mode deps impact lib.py:target) >out &&
	"$JQ" -c "{path, call_depth, references, depth}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"m_use.py","call_depth":1,"references":1,"depth":1}
	{"path":"a_top.py","call_depth":2,"references":null,"depth":2}
	{"path":"b_hooks.py","call_depth":null,"references":1,"depth":1}
	{"path":"e_mod.py","call_depth":null,"references":1,"depth":1}
	{"path":"a_plain.py","call_depth":null,"references":null,"depth":1}
	EOF
	test_cmp expect actual &&
	"$JQ" -c ".signals.call" out >actual &&
	printf "1\n0.5\nnull\nnull\nnull\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact --depth 1: callers to one level; the namesake caller never counts' '
	(cd repo && ci-refs --json --mode deps --depth 1 impact lib.py:target) >out &&
	"$JQ" -r "[.path, .call_depth // 0] | @tsv" out >actual &&
	printf "m_use.py\t1\nb_hooks.py\t0\ne_mod.py\t0\na_plain.py\t0\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact lib.py (no symbol): ordered by score, no call signal' '
	(cd repo && ci-refs --json --mode deps impact lib.py) >out &&
	"$JQ" -e -s "length > 0 and all(.call_depth == null and .signals.call == null)" out >/dev/null
'

test_done
