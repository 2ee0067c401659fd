#!/bin/sh
# t0518-index-server-long-runtime-dir: a server's socket lives in
# $XDG_RUNTIME_DIR/ci, unless that path is too long for a socket address (108
# bytes; a deep build directory, as `make distcheck`'s, makes it so): then in
# /tmp/ci-<uid>, and the commands still find their server.  Before, no socket
# name was found and the build ran without its server, silently.

. "$(dirname "$0")/lib.sh"

unset CI_INDEX_SERVER
deep=$TRASH_DIRECTORY/run-directory-with-a-long-name-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
CI_INDEX_SERVER=always CI_INDEX_SERVER_IDLE=60 XDG_RUNTIME_DIR=$deep
export CI_INDEX_SERVER CI_INDEX_SERVER_IDLE XDG_RUNTIME_DIR
mkdir -m 700 "$deep"

stop_server() {
	(cd repo && ci-index serve --stop) >/dev/null 2>&1 || :
}

test_expect_success 'setup: a repository, and a runtime directory too deep for a socket' '
	test $(printf "%s/ci/index-0123456789abcdef.sock" "$deep" | wc -c) -gt 108 &&
	git init -q repo &&
	printf "def a():\n    return 1\n" >repo/a.py &&
	(cd repo && git add . && git commit -q -m one)
'

test_expect_success 'the build starts its server all the same; status finds it' '
	(cd repo && ci-index build) &&
	(cd repo && ci-index status) >status.json &&
	"$JQ" -e ".server.pid > 0 and .server.answering" status.json >/dev/null &&
	ls /tmp/ci-$(id -u)/index-*.sock >/dev/null &&
	test ! -e "$deep/ci/index-"*
'

test_expect_success 'an update runs in it, and stop ends it' '
	printf "def b():\n    return 2\n" >>repo/a.py &&
	(cd repo && ci-index update) &&
	(cd repo && ci-index status) >status.json &&
	"$JQ" -e ".stale == 0 and .defs == 2" status.json >/dev/null &&
	(cd repo && ci-index serve --stop) &&
	(cd repo && ci-index status) >status.json &&
	"$JQ" -e ".server == null" status.json >/dev/null
'

stop_server
test_done
