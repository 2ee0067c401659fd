#!/bin/sh
# t0982-graph-impact-wide: impact on a header that many files include.  A
# level of 512 importers or more is read in one pass over the imports
# (impact.c) where the index lacks imports(resolved, path) (t0962), a smaller
# one, or any with that index, file by file: both give each file its distance;
# the symbol's calls, read once with its references, still give each caller
# its call depth, the callers' imports asked of the definitions' importers
# (callwalk.c, a name of few definitions).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'impact on a wide header' 'the c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: core.h, 520 headers that include it, a .c file including both, a caller of a caller' '
	git init -q repo &&
	write_lines inc/core.h "int core_get(int x);" "int core_put(int x);" &&
	write_lines src/core.c "#include \"../inc/core.h\"" "int core_get(int x)" "{" "	return x;" "}" \
		"int core_put(int x)" "{" "	return x + 1;" "}" &&
	i=0 &&
	while [ $i -lt 520 ]; do
		write_lines inc/h$i.h "#include \"core.h\"" "int w$i(int x);" &&
		write_lines src/c$i.c "#include \"../inc/core.h\"" "#include \"../inc/h$i.h\"" "int w$i(int x)" "{" \
			"	return core_get(x);" "}"
		i=$((i + 1))
	done &&
	write_lines src/top.c "#include \"../inc/h7.h\"" "int top(void)" "{" "	return w7(1);" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'impact inc/core.h --depth 2: 1,041 files at depth 1, top.c (through h7.h) at depth 2' '
	(cd repo && ci-refs --json --mode deps --limit 10000 --depth 2 impact inc/core.h) >out &&
	"$JQ" -r "select(.depth == 1) | .path" out | sort >actual &&
	{ i=0; while [ $i -lt 520 ]; do echo inc/h$i.h; echo src/c$i.c; i=$((i + 1)); done; echo src/core.c; } |
		sort >expect &&
	test_cmp expect actual &&
	"$JQ" -r "select(.depth == 2) | .path" out >actual &&
	echo src/top.c >expect &&
	test_cmp expect actual &&
	(cd repo && ci-refs --json --mode deps --limit 10000 --depth 2 impact inc/h7.h) >out7 &&
	"$JQ" -r "[.path, .depth] | @tsv" out7 | sort >actual &&
	printf "src/c7.c\t1\nsrc/top.c\t1\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact --depth 3 reaches no further; --depth 1 stops at the first level' '
	(cd repo && ci-refs --json --mode deps --limit 10000 --depth 3 impact inc/core.h) >out3 &&
	"$JQ" -s "[.[] | select(.depth == 3)] | length" out3 >actual &&
	echo 0 >expect &&
	test_cmp expect actual &&
	(cd repo && ci-refs --json --mode deps --limit 10000 --depth 1 impact inc/core.h) >out1 &&
	"$JQ" -s "([.[] | select(.depth == 2)] | length), length" out1 >actual &&
	printf "0\n1041\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact src/core.c:core_get: its 520 callers at call depth 1, their caller top.c at 2' '
	(cd repo && ci-refs --json --mode deps --limit 10000 impact src/core.c:core_get) >out &&
	"$JQ" -r "select(.call_depth == 1) | .path" out | sort >actual &&
	{ i=0; while [ $i -lt 520 ]; do echo src/c$i.c; i=$((i + 1)); done; } | sort >expect &&
	test_cmp expect actual &&
	"$JQ" -r "select(.call_depth == 2) | .path" out >actual &&
	echo src/top.c >expect &&
	test_cmp expect actual &&
	"$JQ" -s "[.[] | select(.call_depth == 1 and .references != 1)] | length" out >actual &&
	echo 0 >expect &&
	test_cmp expect actual
'

test_expect_success 'impact src/core.c:core_put: defined, never called nor named: exit 1, nothing depends on it' '
	(cd repo && test_status 1 ci-refs --json --mode deps --limit 10000 impact src/core.c:core_put) >out 2>err &&
	test_must_be_empty out &&
	test_grep "nothing in the index depends on .src/core.c:core_put." err
'

test_done
