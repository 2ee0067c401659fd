#!/bin/sh
# t1260-fleet-server-here: a shard set's server answers a query itself, on its
# own threads (fork_server_ops.here), not in a worker forked for it: each
# answer is the answer of a forked worker (CI_SHARDS_HERE=0) and of threads
# without a server, status and messages too; a usage error is the caller's
# and the server stays; a shard published again after the warm-up is seen;
# a damaged shard fails alone, query after query, as in a worker and in
# threads.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'fleet servers' 'the c and python grammars are not compiled in'
	test_done
fi

fleet_server_env


# three <status> <command...>: in the server, in a worker, in threads: the same
three() {
	want=$1
	shift
	test_status "$want" "$@" >served.out 2>served.err &&
	CI_SHARDS_HERE=0 test_status "$want" "$@" >worker.out 2>worker.err &&
	CI_SHARDS_SERVER=0 test_status "$want" "$@" >here.out 2>here.err &&
	test_cmp here.out served.out &&
	test_cmp here.err served.err &&
	test_cmp worker.out served.out &&
	test_cmp worker.err served.err
}

# serves <pid>: is it a shard server's process (its command line says so)?
serves() {
	tr "\0" " " </proc/$1/cmdline 2>/dev/null | grep -q -- "--shards-serve"
}

# server_pid <cmd>: the pid of ci-<cmd>'s shard server, not one of the
# processes it forks for a shard (a fork has its command line too)
server_pid() {
	for p in $(pgrep -x "ci-$1"); do
		if serves "$p" && ! serves "$(ps -o ppid= -p "$p" | tr -d " ")"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

test_expect_success 'setup: five repositories, an index each, a manifest; three servers' '
	make_fleet_repos repos 5 &&
	mkdir set &&
	for r in r01 r02 r03 r04 r05; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done &&
	for r in r01 r02 r03 r04 r05; do printf "%s\tset/%s.db\n" $r $r; done >m.tsv &&
	start grep m.tsv && start rank m.tsv && start refs m.tsv
'

test_expect_success 'grep, rank, refs: the server'"'"'s own answer is a worker'"'"'s and the threads'"'"'' '
	three 0 ci-grep --shards m.tsv shared_marker &&
	test_line_count = 11 served.out &&
	three 0 ci-grep --shards m.tsv -i -C 1 "RETURN X" &&
	three 1 ci-grep --shards m.tsv zzz_nowhere &&
	three 0 ci-rank --shards m.tsv --limit 5 "parse the text" &&
	test "$(grep -c "\"_type\":\"hit\"" served.out)" = 5 &&
	three 0 ci-rank --shards m.tsv --shards-repo r02,r04 "run the parse" &&
	three 1 ci-rank --shards m.tsv "zzz_nowhere qqq_none" &&
	three 0 ci-refs --shards m.tsv search util &&
	three 0 ci-refs --shards m.tsv refs util_r03 &&
	CI_SHARDS_REPO=r05 three 0 ci-grep --shards m.tsv shared_marker &&
	jq -r "select(._type == \"match\") | .repo" served.out | sort -u >actual &&
	echo r05 >expect &&
	test_cmp expect actual
'

test_expect_success 'a usage error is said once by the caller, and the server stays' '
	pid=$(server_pid rank) &&
	three 2 ci-rank --shards m.tsv --limit 0 "parse the text" &&
	test_grep "limit" served.err &&
	three 2 ci-grep --shards m.tsv --index x.db shared_marker &&
	kill -0 "$pid" &&
	test "$(server_pid rank)" = "$pid" &&
	three 0 ci-rank --shards m.tsv --limit 3 "parse the text"
'

test_expect_success 'a shard published again after the warm-up: answered from its new index' '
	printf "/* republished_marker */\nint again_r02(void)\n{\n\treturn 2;\n}\n" >repos/r02/src/again.c &&
	publish r02 &&
	three 0 ci-grep --shards m.tsv republished_marker &&
	jq -r "select(._type == \"match\") | \"\\(.repo) \\(.path)\"" served.out >actual &&
	echo "r02 src/again.c" >expect &&
	test_cmp expect actual &&
	three 0 ci-rank --shards m.tsv --limit 3 "again_r02 republished" &&
	jq -r "select(._type == \"hit\") | .repo" served.out | head -n 1 >actual &&
	echo r02 >expect &&
	test_cmp expect actual &&
	three 0 ci-refs --shards m.tsv search again_r02 &&
	test_grep "\"repo\":\"r02\"" served.out
'

test_expect_success 'a damaged shard fails alone in the server, query after query, as in a worker and in threads' '
	stop grep m.tsv && stop rank m.tsv && stop refs m.tsv &&
	mkdir bad && cp set/*.db bad/ &&
	size=$(wc -c <bad/r03.db) &&
	# every page but the first two (the header, the schema) overwritten: pages a
	# hybrid query reads among them (a few random pages may be the vectors
	# table alone, which hybrid mode does not read when its model does not)
	head -c $((size - 8192)) /dev/zero | tr "\0" "Z" | dd of=bad/r03.db bs=4096 seek=2 conv=notrunc 2>/dev/null &&
	test "$(wc -c <bad/r03.db)" = "$size" &&
	start rank bad &&
	pid=$(server_pid rank) &&
	for k in 1 2 3; do
		test_status 3 ci-rank --shards bad --limit 5 "parse the text" >out.$k 2>err.$k &&
		CI_SHARDS_HERE=0 test_status 3 ci-rank --shards bad --limit 5 "parse the text" >worker.out 2>worker.err &&
		test_cmp worker.out out.$k &&
		test_cmp worker.err err.$k &&
		CI_SHARDS_SERVER=0 test_status 3 ci-rank --shards bad --limit 5 "parse the text" >here.out 2>/dev/null &&
		jq -c "del(.message?)" here.out >expect &&
		jq -c "del(.message?)" out.$k >actual &&
		test_cmp expect actual &&
		jq -r "select(._type == \"fleet_error\") | .repo" out.$k >failed &&
		echo r03 >expect &&
		test_cmp expect failed &&
		jq -r "select(._type == \"fleet\") | \"\\(.answered) \\(.failed)\"" out.$k >actual &&
		echo "4 1" >expect &&
		test_cmp expect actual || return 1
	done &&
	jq -r "select(._type == \"fleet_error\") | .message" out.3 >msg &&
	test_grep "r03.db.*damaged\|malformed" msg &&
	test_cmp out.1 out.3 &&
	kill -0 "$pid" &&
	stop rank bad
'

test_done
