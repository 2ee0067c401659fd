#!/bin/sh
# t1256-fleet-mcp-servers: ci-mcp --shards starts the shard set's resident
# servers (ci-grep, ci-rank and ci-refs --shards-serve) itself, and its calls
# go through them; one that dies is started again, with a message on stderr,
# and the call is answered whole; they end with ci-mcp, however it ends (its
# input closed, SIGTERM, SIGKILL): no process and no socket left.
# --no-shard-server starts none.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'ci-mcp shard servers' 'the c and python grammars are not compiled in'
	test_done
fi

XDG_RUNTIME_DIR=$TRASH_DIRECTORY/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"

call() {
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" "$3"
}

# wait_for <command...>: until it succeeds, at most 30 s
wait_for() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		test $i -le 300 || return 1
		sleep 0.1
	done
}

# servers: the shard servers of our set (pid and command), sorted by command
servers() {
	ps -ww -eo pid=,args= | awk -v set="$SET" '$2 ~ /^ci-(grep|rank|refs)$/ && $3 == "--shards" &&
		$4 == set && $5 == "--shards-serve" { print $2, $1 }' | sort
}
no_servers() { test -z "$(servers)"; }
have_servers() { test -n "$(servers)"; }
sockets() { ls "$XDG_RUNTIME_DIR/ci" 2>/dev/null | grep '\.sock$'; }
no_sockets() { test -z "$(sockets)"; }
have_sockets() { test -n "$(sockets)"; }
answered() { test "$(jq -r "select(.id == $1) | .id" out 2>/dev/null)" = "$1"; }
# gone <pid>: ended (a zombie until ci-mcp looks)
gone() {
	case $(ps -o stat= -p "$1") in
	'' | Z*) return 0 ;;
	esac
	return 1
}

# start [options]: ci-mcp --shards set on the fifo "in" (written by descriptor 8)
start() {
	rm -f in out err &&
	mkfifo in &&
	{ ci-mcp --shards set "$@" <in >out 2>err & } &&
	mcp=$! &&
	exec 8>in
}

test_expect_success 'setup: three repositories, an index each' '
	make_fleet_repos repos 3 &&
	mkdir set &&
	for r in r01 r02 r03; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build . 2>/dev/null) || return 1
	done &&
	SET=$(cd set && pwd -P)
'

test_expect_success 'the servers start with ci-mcp, and the calls go through them' '
	start &&
	call 1 search "{\"query\":\"parse the text\",\"limit\":10}" >&8 &&
	wait_for answered 1 &&
	servers | cut -d" " -f1 >actual &&
	printf "ci-grep\nci-rank\nci-refs\n" >expect &&
	test_cmp expect actual &&
	test "$(sockets | wc -l)" = 3 &&
	# r04 joins the directory: the servers answer for the shards they started with
	cp set/r03.db set/r04.db &&
	call 2 search "{\"query\":\"parse the text\",\"limit\":10}" >&8 &&
	call 3 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 3 &&
	wait_for answered 2 &&
	rm set/r04.db &&
	for id in 1 2; do
		jq -r "select(.id == $id) | .result.structuredContent.results[] | select(._type == \"hit\") | .repo" out |
			sort -u >repos.$id || return 1
	done &&
	printf "r01\nr02\nr03\n" >expect &&
	test_cmp expect repos.1 &&
	test_cmp expect repos.2 &&
	jq -r "select(.id == 3) | .result.structuredContent.results[] | select(._type == \"match\") | .repo" out |
		uniq >actual &&
	test_cmp expect actual &&
	exec 8>&- &&
	wait $mcp &&
	test_must_be_empty err
'

test_expect_success 'ci-mcp ended by its input: no server, no socket left' '
	wait_for no_servers &&
	wait_for no_sockets
'

test_expect_success 'a server that died is started again, said on stderr; the call is answered whole' '
	start &&
	call 1 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 1 &&
	old=$(servers | sed -n "s/^ci-grep //p") &&
	test -n "$old" &&
	kill -9 $old &&
	wait_for gone $old &&
	call 2 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 2 &&
	test_grep "the shard server of ci-grep (pid $old) ended (signal 9): starting it again" err &&
	new=$(servers | sed -n "s/^ci-grep //p") &&
	test -n "$new" && test "$new" != "$old" &&
	for id in 1 2; do
		jq -c "select(.id == $id) | .result.structuredContent.results" out >res.$id || return 1
	done &&
	test_cmp res.1 res.2 &&
	test "$(jq -r ".[] | select(._type == \"match\") | .repo" res.2 | sort -u | wc -l)" = 3 &&
	exec 8>&- &&
	wait $mcp &&
	wait_for no_servers &&
	wait_for no_sockets
'

test_expect_success 'SIGTERM: ci-mcp stops its servers' '
	start &&
	call 1 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 1 &&
	test "$(servers | wc -l)" = 3 &&
	kill -TERM $mcp &&
	wait $mcp;
	exec 8>&- &&
	wait_for no_servers &&
	wait_for no_sockets
'

test_expect_success 'SIGKILL: the servers go with ci-mcp' '
	start &&
	call 1 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 1 &&
	test "$(servers | wc -l)" = 3 &&
	kill -KILL $mcp &&
	wait $mcp;
	exec 8>&- &&
	wait_for no_servers &&
	wait_for no_sockets
'

test_expect_success 'a server of the set started by hand is used, not started again, and left running' '
	(CI_SHARDS_SERVER_IDLE=60 ci-grep --shards "$SET" --shards-serve >/dev/null 2>hand.err &) &&
	wait_for have_servers &&
	wait_for have_sockets &&
	hand=$(servers | sed -n "s/^ci-grep //p") &&
	start &&
	call 1 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 1 &&
	servers | cut -d" " -f1 >actual &&
	printf "ci-grep\nci-rank\nci-refs\n" >expect &&
	test_cmp expect actual &&
	test "$(servers | sed -n "s/^ci-grep //p")" = "$hand" &&
	call 2 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 2 &&
	test_must_fail grep "starting it again" err &&
	jq -r "select(.id == 2) | .result.structuredContent.results[] | select(._type == \"match\") | .repo" out |
		uniq >actual &&
	printf "r01\nr02\nr03\n" >expect &&
	test_cmp expect actual &&
	exec 8>&- &&
	wait $mcp &&
	test "$(servers)" = "ci-grep $hand" &&
	ci-grep --shards set --shards-stop &&
	wait_for no_servers &&
	wait_for no_sockets
'

test_expect_success '--no-shard-server: none started, the commands answer alone' '
	start --no-shard-server &&
	call 1 grep "{\"pattern\":\"shared_marker\"}" >&8 &&
	wait_for answered 1 &&
	no_servers &&
	no_sockets &&
	cp set/r03.db set/r04.db &&
	call 2 search "{\"query\":\"parse the text\",\"limit\":10}" >&8 &&
	wait_for answered 2 &&
	rm set/r04.db &&
	jq -r "select(.id == 2) | .result.structuredContent.results[] | select(._type == \"hit\") | .repo" out |
		sort -u >actual &&
	printf "r01\nr02\nr03\nr04\n" >expect &&
	test_cmp expect actual &&
	exec 8>&- &&
	wait $mcp
'

test_done
