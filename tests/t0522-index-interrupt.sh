#!/bin/sh
# t0522-index-interrupt: a build interrupted by SIGTERM or SIGINT, or out of
# memory, leaves nothing behind: no index.db.new (nor its journal, log or
# shared memory), and the index as it was.
#
# CI_INDEX_CRASH_AFTER=N with CI_INDEX_CRASH_SIGNAL=TERM or INT makes the
# build send itself that signal after storing N files (its new database
# open); CI_INDEX_PAUSE_BEFORE_INSTALL holds it still before it installs the
# new database, for a SIGTERM from the test; CI_TEST_TS_ALLOC_LIMIT makes
# tree-sitter's larger allocations fail as out of memory (ulimit -v does not
# work under AddressSanitizer).

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# nothing_left: the index's directory holds the index and its lock, no new database
nothing_left() {
	ls repo/.ci-index | grep "^index\.db\.new" >left
	test_must_be_empty left
}

# as_before: the index is the one of the setup
as_before() {
	index_dump repo/.ci-index/index.db >after.dump &&
	test_cmp before.dump after.dump
}

test_expect_success 'setup: a repository of 30 files and its index; then edits' '
	gen_repo 30 &&
	(cd repo && git add -A && git commit -q -m files && ci-index build) &&
	index_dump repo/.ci-index/index.db >before.dump &&
	gen_c repo/src/f1.c edited 4 &&
	gen_c repo/src/new.c new 2
'

test_expect_success 'SIGTERM in the middle of a build: no index.db.new left, the index unchanged' '
	(cd repo && test_status 143 env CI_INDEX_CRASH_AFTER=5 CI_INDEX_CRASH_SIGNAL=TERM ci-index build) &&
	nothing_left &&
	as_before
'

test_expect_success 'SIGINT in the middle of a build: the same' '
	(cd repo && test_status 130 env $default_int CI_INDEX_CRASH_AFTER=5 CI_INDEX_CRASH_SIGNAL=INT ci-index build) &&
	nothing_left &&
	as_before
'

# paused_build: a build in the background, held before it installs its new
# database while the file pause exists; its process id in build.pid, the
# shell's job in $build_job
paused_build() {
	rm -f pause build.pid || return 1
	(cd repo && CI_INDEX_PAUSE_BEFORE_INSTALL=$TRASH_DIRECTORY/pause \
		sh -c 'echo $$ >../build.pid; exec ci-index build') &
	build_job=$!
	i=0
	while ! test -e pause && test $i -lt 600; do
		sleep 0.1 && i=$((i + 1))
	done
	test -e pause
}

test_expect_success 'SIGTERM from another process, the new database complete: the same' '
	paused_build &&
	test -e repo/.ci-index/index.db.new &&
	kill -TERM $(cat build.pid) &&
	{ wait $build_job; echo $? >rc; } &&
	echo 143 >expect &&
	test_cmp expect rc &&
	rm -f pause &&
	nothing_left &&
	as_before
'

test_expect_success 'out of memory in tree-sitter: exit 3, ci-index: out of memory, nothing left' '
	gen_c repo/src/big.c big 3000 &&
	(cd repo && test_status 3 env CI_TEST_TS_ALLOC_LIMIT=65536 ci-index build >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "^ci-index: out of memory allocating [0-9]* bytes$" err &&
	! grep "tree-sitter failed" err &&
	nothing_left &&
	as_before &&
	rm repo/src/big.c
'

test_expect_success 'a build after all that: the index of the edits' '
	(cd repo && ci-index build) &&
	nothing_left &&
	index_dump repo/.ci-index/index.db >after.dump &&
	grep -q edited_3 after.dump &&
	grep -q new_1 after.dump &&
	! grep -q big_0 after.dump
'

test_done
