#!/bin/sh
# t0570-index-progress: ci-index build and update show progress on a terminal
# within a second, however long one unit of work takes.
#
# Progress was written after a unit (a file stored, 512 texts embedded)
# ended, so a slow first unit showed nothing for its whole length.  Now a
# thread writes the line half a second into each phase and every quarter
# second after.  The test hook CI_INDEX_SLOW_MS makes each file slow to
# store (1.5 s): the line "indexing 0/1 files" is then on the terminal while
# the work goes on, before the last line.  No timing is asserted beyond
# that.  Not on a terminal nothing is written, unless --progress; never with
# --no-progress.  The terminal is script(1)'s.

. "$(dirname "$0")/lib.sh"

if ! test_have_prog script; then
	test_skip 'progress on a terminal' 'script(1) is not installed (Debian package bsdutils)'
	test_done
fi

# tty <command>...: run it in repo on a terminal; what it wrote there in out,
# a progress update a line
tty() {
	(cd repo && script -qec "$*" /dev/null) | tr '\r' '\n' | sed '/^ *$/d' >out
}

test_expect_success 'setup: a repository of one file' '
	git init -q repo &&
	printf "int one(void)\n{\n\treturn 1;\n}\n" >repo/a.c &&
	(cd repo && git add a.c && git commit -q -m one)
'

test_expect_success 'build on a terminal: progress while the first file is still being stored' '
	tty env CI_INDEX_SLOW_MS=1500 ci-index build &&
	grep "^ci-index: indexing" out >lines &&
	test_grep "^ci-index: indexing 0/1 files" lines &&
	tail -n 1 lines >last &&
	test_grep "^ci-index: indexing 1/1 files" last &&
	test -f repo/.ci-index/index.db
'

test_expect_success 'update on a terminal: the same for the files it re-reads' '
	printf "int two(void)\n{\n\treturn 2;\n}\n" >>repo/a.c &&
	tty env CI_INDEX_SLOW_MS=1500 ci-index update &&
	test_grep "^ci-index: updating 0/1 files" out &&
	test_grep "^ci-index: updating 1/1 files" out
'

test_expect_success 'stderr not a terminal: nothing, however slow; --progress: the same lines' '
	(cd repo && CI_INDEX_SLOW_MS=1500 ci-index build 2>../err) &&
	test_must_be_empty err &&
	(cd repo && CI_INDEX_SLOW_MS=1500 ci-index --progress build 2>../err) &&
	tr "\r" "\n" <err >lines &&
	test_grep "^ci-index: indexing 0/1 files" lines &&
	test_grep "^ci-index: indexing 1/1 files" lines
'

test_expect_success '--no-progress on a terminal: nothing' '
	tty env CI_INDEX_SLOW_MS=1500 ci-index --no-progress build &&
	test_must_be_empty out
'

test_expect_success 'CI_INDEX_SLOW_MS is checked' '
	(cd repo && test_status 2 env CI_INDEX_SLOW_MS=slow ci-index build 2>../err) &&
	test_grep "CI_INDEX_SLOW_MS: expected an integer from 0 to 60000, got '\''slow'\''" err
'

test_done
