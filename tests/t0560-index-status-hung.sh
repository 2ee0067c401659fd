#!/bin/sh
# t0560-index-status-hung: ci-index status never hangs on the index's server.
#
# status asks a running server for its pid; a server that takes the question
# and never answers (here: stopped by SIGSTOP) made status wait for ever.
# Now it waits a bounded time (2 s), then shows the server as not answering
# ("answering":false, the pid from the server's lock) with a warning, and
# exits 0; ci-grep gives up on it the same way and searches alone.  After
# SIGCONT the server answers again.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog timeout; then
	test_skip 'status and a stopped server' 'timeout(1) is not installed'
	test_done
fi

# servers, in a runtime directory of this script's own
CI_INDEX_SERVER=1 CI_INDEX_SERVER_IDLE=60 XDG_RUNTIME_DIR=$TRASH_DIRECTORY.run
export CI_INDEX_SERVER CI_INDEX_SERVER_IDLE XDG_RUNTIME_DIR
rm -rf "$XDG_RUNTIME_DIR" && mkdir -m 700 "$XDG_RUNTIME_DIR"

test_expect_success 'setup: an index and its server, answering' '
	gen_repo 3 &&
	(cd repo && git add . && git commit -q -m one &&
	 ci-index build 2>/dev/null && CI_INDEX_SERVER=always ci-index update &&
	 ci-index status >../status.json) &&
	jq -e ".server.answering == true and .server.pid > 1 and .server.idle_exit_s == 60" status.json &&
	jq -r .server.pid status.json >pid &&
	kill -0 $(cat pid)
'

test_expect_success 'a server stopped by SIGSTOP: status answers anyway, the server not answering' '
	kill -STOP $(cat pid) &&
	(cd repo && timeout 30 ci-index status >../status.json 2>../err); rc=$? &&
	kill -CONT $(cat pid) &&
	test $rc = 0 &&
	jq -c .server status.json >actual &&
	echo "{\"pid\":$(cat pid),\"idle_exit_s\":60,\"answering\":false}" >expect &&
	test_cmp expect actual &&
	echo "ci-index: warning: the index'\''s server (pid $(cat pid)) does not answer (2000 ms): stopped or hung" >expect &&
	test_cmp expect err
'

test_expect_success 'ci-grep gives up on a stopped server and finds what a scan finds' '
	kill -STOP $(cat pid) &&
	(cd repo && timeout 30 ci-grep -c helper >../out); rc=$? &&
	kill -CONT $(cat pid) &&
	test $rc = 0 &&
	(cd repo && ci-grep --no-index -c helper >../expect) &&
	test_cmp expect out
'

test_expect_success 'continued, it answers again; stopped, status shows none' '
	(cd repo && ci-index status >../status.json 2>../err) &&
	test_must_be_empty err &&
	jq -e ".server.answering == true and .server.pid == $(cat pid)" status.json &&
	(cd repo && ci-index serve --stop && ci-index status >../status.json) &&
	jq -e ".server == null" status.json
'

test_done
