#!/bin/sh
# t0930-rank-server: `ci-rank serve`, the resident fork server of an index.
#
# The server reads the model and the snapshot of the vectors once; each
# command line that reaches it runs in a worker forked from it, in the
# caller's directory and environment, on the caller's standard streams.  Its
# answers must be those of a run of its own, byte for byte, its exit status and
# messages too; it must follow the index as it changes, start by itself for an
# index with vectors, and go away when asked or idle.

. "$(dirname "$0")/lib.sh"

vec_lib_what='rank server tests'
. "$CI_SRC_DIR/tests/vec-lib.sh"

# lib.sh turns the server off for every other test
unset CI_RANK_SERVER
XDG_RUNTIME_DIR=$TRASH_DIRECTORY/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
db=$TRASH_DIRECTORY/repo/.ci-index/index.db

# sockets: the servers' sockets there are
sockets() {
	ls "$XDG_RUNTIME_DIR/ci" 2>/dev/null | grep '^rank-.*\.sock$'
}

# wait_for <command...>: until it succeeds, at most 20 s
wait_for() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		test $i -le 200 || return 1
		sleep 0.1
	done
}

# exits <status> <command...>: it exits with that status
exits() {
	want=$1
	shift
	"$@"
	test $? = "$want"
}

no_socket() {
	test -z "$(sockets)"
}

have_socket() {
	test -n "$(sockets)"
}

stop_server() {
	(cd repo && ci-rank serve --stop) 2>/dev/null
	wait_for no_socket
}

queries="parse the number in the text|close the connection|evict the oldest entry|handler for item 7"

# answers <out> [<ci-rank option>]: every query, hybrid and semantic, with
# their exit statuses and messages, as ci-rank gives them
answers() {
	(
		IFS='|'
		for q in $queries; do
			(cd repo && ci-rank $2 --explain "$q" 2>&1; echo "exit $?")
			(cd repo && ci-rank $2 --mode semantic --limit 20 "$q" 2>&1; echo "exit $?")
		done
		(cd repo && ci-rank $2 similar "net.py:parse_number" 2>&1; echo "exit $?")
		(cd repo && ci-rank $2 similar "close the socket" 2>&1; echo "exit $?")
		(cd repo && ci-rank $2 similar nosuch.py:nothing 2>&1; echo "exit $?")
		(cd repo && ci-rank $2 --mode semantic 2>&1; echo "exit $?")
		(cd repo && ci-rank $2 context --budget 40 "close the connection" 2>&1; echo "exit $?")
	) >"$1"
}

test_expect_success 'setup: a repository with vectors' '
	handlers_repo 10 &&
	(cd repo && ci-index --embed build) &&
	test -f "$db.vec" &&
	answers alone --no-server &&
	test_line_count -gt 100 alone &&
	grep -q "exit 0" alone &&
	grep -q "exit 2" alone &&
	CI_RANK_SERVER=0 answers alone-env &&
	test_cmp alone alone-env &&
	no_socket
'

test_expect_success 'serve: the answers, statuses and messages of a run of its own' '
	(cd repo && ci-rank serve --idle 120 &) &&
	wait_for have_socket &&
	answers served &&
	test_cmp alone served
'

test_expect_success 'the answers come from the server: its model stays when the directory goes' '
	stop_server &&
	cp -RL "$model" model &&
	(cd repo && CI_MODEL=$TRASH_DIRECTORY/model ci-rank serve --idle 120 &) &&
	wait_for have_socket &&
	mv model model.gone &&
	test_must_fail env CI_MODEL=$TRASH_DIRECTORY/model ci-rank --index "$db" --no-server \
		--mode semantic "close the connection" 2>err &&
	grep -q "model" err &&
	CI_MODEL=$TRASH_DIRECTORY/model ci-rank --index "$db" --mode semantic "close the connection" >out &&
	mv model.gone model &&
	CI_MODEL=$TRASH_DIRECTORY/model ci-rank --index "$db" --no-server --mode semantic "close the connection" >expect &&
	test_cmp expect out &&
	stop_server
'

test_expect_success 'output into a pipe and a file is whole when the caller exits' '
	(cd repo && ci-rank serve --idle 120 &) &&
	wait_for have_socket &&
	(cd repo && ci-rank --limit 50 --per-file 50 "handler item queue") >file &&
	(cd repo && ci-rank --limit 50 --per-file 50 "handler item queue" | cat) >pipe &&
	(cd repo && ci-rank --no-server --limit 50 --per-file 50 "handler item queue") >expect &&
	test_line_count -gt 40 expect &&
	test_cmp expect file &&
	test_cmp expect pipe
'

test_expect_success '--query-file through the server: stdin and a relative path read by the worker' '
	have_socket &&
	printf "Closing hangs\n\nclose the connection after the handler\n" >repo/q.txt &&
	(cd repo && ci-rank --no-server --limit 5 --query-file q.txt) >expect &&
	test_line_count -gt 1 expect &&
	(cd repo && ci-rank --limit 5 --query-file q.txt) >out &&
	test_cmp expect out &&
	(cd repo && ci-rank --limit 5 --query-file - <q.txt) >out &&
	test_cmp expect out &&
	(cd repo && cat q.txt | ci-rank --limit 5 --query-file -) >out &&
	test_cmp expect out &&
	(cd repo && exits 3 ci-rank --query-file nosuch.txt) >out 2>err &&
	test_must_be_empty out &&
	grep -q "cannot open .nosuch.txt" err &&
	rm repo/q.txt
'

test_expect_success 'an edit: the server answers for the index as it is now' '
	printf "\n\ndef reconnect(sock):\n    \"\"\"Retry after a delay, then open the connection again.\"\"\"\n    return sock\n" >>repo/net.py &&
	(cd repo && ci-index update) &&
	answers served2 &&
	answers alone2 --no-server &&
	test_cmp alone2 served2 &&
	grep -q reconnect served2
'

test_expect_success 'a snapshot written anew is read again' '
	t1=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = '"'"'vec_snapshot'"'"'") &&
	for f in 0 1 2 3 4 5; do
		sed -i "s/item/entry/" repo/h$f.py || return 1
	done &&
	(cd repo && ci-index update) &&
	t2=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = '"'"'vec_snapshot'"'"'") &&
	test "$t1" != "$t2" &&
	answers served3 &&
	answers alone3 --no-server &&
	test_cmp alone3 served3
'

# from_meta: a query answered with the server's copy of the candidates' metadata
from_meta() {
	(cd repo && CI_RANK_TRACE=1 ci-rank "close the connection" 2>../trace >/dev/null) &&
	grep -q "^ci-rank: trace: metadata: the server.s " trace
}

test_expect_success 'the candidates metadata: the server copy, read again after an update' '
	wait_for from_meta &&
	answers served4 &&
	test_cmp alone3 served4 &&
	printf "\n\ndef drain_queue(q):\n    \"\"\"Close the connection once the queue is empty.\"\"\"\n    return q\n" >>repo/net.py &&
	(cd repo && ci-index update) &&
	(cd repo && CI_RANK_TRACE=1 ci-rank --limit 20 --per-file 5 "close the connection queue" 2>../trace >now) &&
	(cd repo && ci-rank --no-server --limit 20 --per-file 5 "close the connection queue" >../expect) &&
	test_cmp expect repo/now &&
	grep -q drain_queue expect &&
	grep -q "^ci-rank: trace: metadata: from the index " trace &&
	wait_for from_meta &&
	answers served5 &&
	answers alone5 --no-server &&
	test_cmp alone5 served5
'

test_expect_success 'a second server for the index says so and leaves the first' '
	(cd repo && ci-rank serve) 2>err &&
	grep -q "already running" err &&
	have_socket
'

test_expect_success 'serve --stop stops it; with none running it exits 1' '
	stop_server &&
	exits 1 sh -c "cd repo && ci-rank serve --stop" 2>err &&
	grep -q "no server is running" err
'

test_expect_success 'an index with vectors gets a server started by a query' '
	(cd repo && ci-rank "close the connection") >first &&
	wait_for have_socket &&
	(cd repo && ci-rank "close the connection") >second &&
	test_cmp first second &&
	stop_server
'

test_expect_success 'CI_RANK_SERVER=0 and --no-server start none' '
	(cd repo && CI_RANK_SERVER=0 ci-rank "close the connection" && ci-rank --no-server "close the connection") >out &&
	sleep 1 &&
	no_socket
'

test_expect_success 'an index without vectors gets none' '
	git init -q plain &&
	cp repo/net.py plain/ &&
	(cd plain && git add . && git commit -qm plain && ci-index build && ci-rank "close the connection") >out &&
	grep -q close_connection out &&
	sleep 1 &&
	no_socket
'

test_expect_success 'a server with nothing to do exits (--idle)' '
	(cd repo && ci-rank serve --idle 1 &) &&
	wait_for have_socket &&
	wait_for no_socket
'

test_expect_success 'a server killed (TERM) takes its socket with it' '
	(cd repo && { ci-rank serve --idle 120 & echo $! >../server.pid; }) &&
	wait_for have_socket &&
	kill -TERM "$(cat server.pid)" &&
	wait_for no_socket
'

test_expect_success 'no socket in a directory others may enter: runs here, serve refuses' '
	chmod 755 "$XDG_RUNTIME_DIR/ci" &&
	(cd repo && ci-rank "close the connection") >out &&
	test_cmp first out &&
	sleep 1 &&
	no_socket &&
	exits 3 sh -c "cd repo && ci-rank serve" 2>err &&
	grep -q "no private directory" err &&
	chmod 700 "$XDG_RUNTIME_DIR/ci"
'

test_expect_success 'serve: usage' '
	exits 2 ci-rank --index "$db" serve extra 2>err &&
	grep -q "serve takes no arguments" err &&
	exits 2 ci-rank --index "$db" --idle 5 "a query" 2>err &&
	grep -q "idle goes with serve" err &&
	exits 3 ci-rank --index nosuch.db serve 2>err &&
	grep -q "no index at" err
'

# a server a failed test left behind (each also ends when idle)
(cd repo && ci-rank serve --stop) >/dev/null 2>&1
test_done
