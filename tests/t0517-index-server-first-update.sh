#!/bin/sh
# t0517-index-server-first-update: the server a build starts runs its own
# first update (so that it can vouch for the tree); the build returns only once
# that update is in.  Before, the build returned at once and the first update
# ran whenever the server got to it: under load (CI), files touched right
# after the build were taken in by it silently, so `ci-index status` said
# nothing was stale (t0515 failed once so).  The test hook
# CI_INDEX_TEST_FIRST_UPDATE_MS starts that update late, to make the old
# order certain; what is asserted is only the order, never a time.

. "$(dirname "$0")/lib.sh"

unset CI_INDEX_SERVER
CI_INDEX_SERVER=always CI_INDEX_SERVER_IDLE=60 XDG_RUNTIME_DIR=$TRASH_DIRECTORY.run
export CI_INDEX_SERVER CI_INDEX_SERVER_IDLE XDG_RUNTIME_DIR
rm -rf "$XDG_RUNTIME_DIR" && mkdir -m 700 "$XDG_RUNTIME_DIR"

next_second() {
	next_second_=$(date +%s)
	while test "$(date +%s)" = "$next_second_"; do
		sleep 0.1
	done
}

stop_server() {
	(cd repo && ci-index serve --stop) >/dev/null 2>&1 || :
}

test_expect_success 'setup: a repository of three files' '
	git init -q repo &&
	for f in a b c; do printf "def %s():\n    return 1\n" $f >repo/$f.py; done &&
	(cd repo && git add . && git commit -q -m three) &&
	next_second
'

test_expect_success 'a file touched after the build is stale: the first update came before' '
	(cd repo && CI_INDEX_TEST_FIRST_UPDATE_MS=1500 ci-index build) &&
	next_second &&
	touch repo/a.py repo/b.py &&
	sleep 2 &&
	(cd repo && ci-index status) >status.json &&
	"$JQ" -e ".stale == 2" status.json >/dev/null ||
	{ echo "stale: $("$JQ" .stale status.json)" >&7; false; }
'

test_expect_success 'the server runs after the build; the next update takes the two in' '
	"$JQ" -e ".server.pid > 0" status.json >/dev/null &&
	(cd repo && ci-index update) &&
	(cd repo && ci-index status) >status.json &&
	"$JQ" -e ".stale == 0" status.json >/dev/null
'

stop_server
test_done
