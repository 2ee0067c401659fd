#!/bin/sh
# t0516-index-busy: writers of one index one after the other, and the server
# a build starts.
#
# A build holds the index's lock (<db>.lock) from its start to its end; an
# update meanwhile waits for it, whether it runs here or in the index's
# server (which the build stops when it is done), then does its work; past
# CI_INDEX_LOCK_WAIT seconds it says the index is busy (exit 3).  The build is
# held still at its end by the test hook CI_INDEX_PAUSE_BEFORE_INSTALL (it
# waits while the file named exists), so nothing here depends on timing.
# `ci-index serve --stop` right after a build stops the server the build
# started, though that server may not listen yet.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# servers, in a runtime directory of this script's own
CI_INDEX_SERVER=1 CI_INDEX_SERVER_IDLE=60 XDG_RUNTIME_DIR=$TRASH_DIRECTORY.run
export CI_INDEX_SERVER CI_INDEX_SERVER_IDLE XDG_RUNTIME_DIR
rm -rf "$XDG_RUNTIME_DIR" && mkdir -m 700 "$XDG_RUNTIME_DIR"

# wait_for <what> <command>...: until the command succeeds (a minute at most)
wait_for() {
	wait_for_what_=$1
	shift
	wait_for_i_=0
	while ! "$@" >/dev/null 2>&1; do
		wait_for_i_=$((wait_for_i_ + 1))
		if test $wait_for_i_ -ge 600; then
			echo "wait_for: no $wait_for_what_ after a minute" >&7
			return 1
		fi
		sleep 0.1
	done
}

# paused_build: a build in the background, held before it installs its index
# (until the file pause is removed); its exit status goes to build.rc
paused_build() {
	rm -f pause build.rc || return 1
	(cd repo && CI_INDEX_PAUSE_BEFORE_INSTALL=$TRASH_DIRECTORY/pause ci-index build \
		>../build.out 2>../build.err; echo $? >../build.rc) &
	wait_for "pause of the build" test -e pause
}

# update_bg <command>...: the command (an update, with -v) in the background in
# repo, its stdout, stderr and exit status to update.out, update.err and
# update.rc; then wait until it says that it waits for the build
update_bg() {
	rm -f update.out update.err update.rc || return 1
	(cd repo && "$@" >../update.out 2>../update.err; echo $? >../update.rc) &
	wait_for "wait of the update" grep -q "waiting for another ci-index" update.err
}

# update_ends: wait for the update of update_bg: it succeeded
update_ends() {
	wait_for "end of the update" test -s update.rc &&
	echo 0 >expect.rc &&
	test_cmp expect.rc update.rc
}

# build_ends: let the paused build go on and wait for it: it succeeded
build_ends() {
	rm -f pause &&
	wait_for "end of the build" test -s build.rc &&
	echo 0 >expect.rc &&
	test_cmp expect.rc build.rc
}

test_expect_success 'setup: a repository of 20 files and its index' '
	gen_repo 20 &&
	(cd repo && git add -A && git commit -q -m files && ci-index build)
'

test_expect_success 'serve --stop right after a build stops the server the build started' '
	(cd repo && ci-index build && ci-index serve --stop) &&
	(cd repo && test_status 1 ci-index serve --stop 2>../err) &&
	test_grep "no server is running" err
'

test_expect_success 'an update while a build runs waits for it (in the server), then updates' '
	# the server this build starts, which the next one stops, exits at once
	# (no leak check): the update that waited for the build then finishes
	# after it is gone, and tells it nothing
	(cd repo && ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 ci-index build &&
	 CI_INDEX_SERVER=always ci-index update) &&
	paused_build &&
	gen_c repo/src/f1.c during_build 2 &&
	update_bg env CI_INDEX_SERVER=always ci-index -v update &&
	build_ends &&
	update_ends &&
	! grep "ended without an exit status" update.err &&
	(cd repo && CI_INDEX_SERVER=0 ci-index status) >status.json &&
	"$JQ" -e ".stale == 0" status.json &&
	sqlite3 repo/.ci-index/index.db "SELECT name FROM defs WHERE name LIKE '\''during_build%'\'' ORDER BY 1" >defs &&
	printf "during_build_0\nduring_build_1\n" >expect &&
	test_cmp expect defs
'

test_expect_success 'an update here while a build runs waits for it too' '
	paused_build &&
	gen_c repo/src/f2.c during_build_here 1 &&
	update_bg ci-index --no-server -v update &&
	build_ends &&
	update_ends &&
	sqlite3 repo/.ci-index/index.db "SELECT name FROM defs WHERE name = '\''during_build_here_0'\''" >defs &&
	echo during_build_here_0 >expect &&
	test_cmp expect defs
'

test_expect_success 'past CI_INDEX_LOCK_WAIT seconds an update says the index is busy (exit 3)' '
	paused_build &&
	(cd repo && test_status 3 env CI_INDEX_LOCK_WAIT=1 ci-index --no-server update >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "ci-index: the index .*index.db. is busy: another ci-index" err &&
	build_ends
'

test_expect_success 'cleanup: no server left' '
	(cd repo && ci-index serve --stop) &&
	(cd repo && test_status 1 ci-index serve --stop 2>/dev/null)
'

test_done
