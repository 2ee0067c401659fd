#!/bin/sh
# t0995-chunk-c-stmt-macros: a kernel iterator macro used as a loop header
# (`for_each_possible_cpu(i)` then a statement, no ';') read by tree-sitter-c as
# a call missing its ';' made the error recovery swallow the rest of the file
# into the first function (kernel/sched/core.c: nr_context_switches ran to the
# end, and schedule was lost).  The chunker parses such macros as "while"
# (libcommon/parse/cscan.c, cscan_stmt_macros(); rules unit-tested by
# tests/unit-cscan): each function ends at its brace, the macros stay calls,
# and ci-refs defs finds every function; so is a macro ending a do loop
# (`do { ... } while_each_thread(g, t);`).  The fixture is indented with tabs
# as kernel code is (a statement macro starts an indented line): no <<-.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'C statement macros' 'the c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: two loops through for_each_possible_cpu, one list_for_each_entry, a do ... while_each_thread(), indexed' '
	git init -q repo &&
	cat >repo/sum.c <<\EOF &&
#include "sum.h"

unsigned long long total(void)
{
	int i;
	unsigned long long sum = 0;

	for_each_possible_cpu(i)
		sum += cpu_rq(i)->switches;

	return sum;
}

/*
 * A comment between the two.
 */

unsigned int one(int cpu)
{
	return read_one(&cpu_rq(cpu)->waiting);
}

unsigned int waiting(void)
{
	unsigned int i, sum = 0;

	for_each_possible_cpu(i)
		sum += one(i);

	return sum;
}

static void drain(struct head *h)
{
	struct item *p;

	list_for_each_entry(p, h, node) {
		if (p->busy)
			continue;
		release(p);
	}
}

void schedule(void)
{
	do_schedule();
}

void walk(struct task *g)
{
	struct task *t = g;

	do {
		visit(t);
	} while_each_thread(g, t);
}
EOF
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'ci-chunk: each function ends at its closing brace' '
	(cd repo && ci-chunk --symbols --no-files sum.c) >out &&
	"$JQ" -r "select(.kind == \"function\") | \"\(.name) \(.line)-\(.end_line)\"" out >actual &&
	cat >expect <<-\EOF &&
	total 3-12
	one 18-21
	waiting 23-31
	drain 33-42
	schedule 44-47
	walk 49-56
	EOF
	test_cmp expect actual
'

test_expect_success 'ci-chunk: the loop macros are calls, their arguments references' '
	(cd repo && ci-chunk --refs --no-files sum.c) >out &&
	"$JQ" -r "select(.kind == \"call\") | \"\(.name) \(.line):\(.col)\"" out >actual &&
	cat >expect <<-\EOF &&
	for_each_possible_cpu 8:2
	cpu_rq 9:10
	read_one 20:9
	cpu_rq 20:19
	for_each_possible_cpu 27:2
	one 28:10
	list_for_each_entry 37:2
	release 40:3
	do_schedule 46:2
	visit 54:3
	while_each_thread 55:4
	EOF
	test_cmp expect actual
'

test_expect_success 'ci-refs defs schedule and callers one: found in the index' '
	(cd repo && ci-refs --json defs schedule) >out &&
	"$JQ" -c "{path, line, kind}" out >actual &&
	echo "{\"path\":\"sum.c\",\"line\":44,\"kind\":\"function\"}" >expect &&
	test_cmp_json expect actual &&
	(cd repo && ci-refs --json callers one) >out &&
	"$JQ" -c "{path, line, scope}" out >actual &&
	echo "{\"path\":\"sum.c\",\"line\":28,\"scope\":\"waiting\"}" >expect &&
	test_cmp_json expect actual
'

test_done
