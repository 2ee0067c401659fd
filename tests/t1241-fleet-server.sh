#!/bin/sh
# t1241-fleet-server: `<cmd> --shards <set> --shards-serve`, the resident
# server of a shard set (cmd/fleet-serve.h): every shard's index opened once
# and kept open, each query a worker forked from it answering the shards on
# threads.  Its answers are those of a query run alone, byte for byte; a
# shard it could not open is a fleet_error record in each answer; a shard
# whose file went (or came back) is followed; it goes away when asked.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'fleet servers' 'the c and python grammars are not compiled in'
	test_done
fi

fleet_server_env

test_expect_success 'setup: four repositories, an index each' '
	make_fleet_repos repos 4 &&
	mkdir set &&
	for r in r01 r02 r03 r04; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done &&
	(cd set && for r in r01 r02 r03 r04; do printf "%s\t%s.db\n" $r $r; done) >m.tsv &&
	sed -i "s,\t,\tset/," m.tsv &&
	cp m.tsv bad.tsv &&
	printf "r09\tset/missing.db\n" >>bad.tsv
'

test_expect_success 'ci-grep --shards-serve: the answers of a query run alone' '
	start grep set &&
	alike 0 ci-grep --shards set shared_marker &&
	test_line_count = 9 served.out &&
	cp served.out grep.expect &&
	alike 0 ci-grep --shards set -C 1 -i "RETURN" &&
	alike 0 ci-grep --shards set --shards-repo r04,r02 parse &&
	alike 1 ci-grep --shards set zzz_nowhere &&
	alike 2 ci-grep --shards set --bogus x &&
	test "$(grep -c "unknown option" served.err)" = 1
'

# the set is the one the server loaded: a shard gone from its directory is a
# shard that fails (a new set is a new server), here one that is not there
test_expect_success 'the server follows a shard that goes and comes back (its file checked each query)' '
	mv set/r03.db r03.away &&
	{
		test_status 2 ci-grep --shards set shared_marker >served.out 2>served.err &&
		jq -r "select(._type == \"match\") | .repo" served.out | uniq >actual &&
		printf "r01\nr02\nr04\n" >expect &&
		test_cmp expect actual &&
		jq -r "select(._type == \"fleet_error\") | .repo" served.out >actual &&
		echo r03 >expect &&
		test_cmp expect actual &&
		test_grep "shard .r03." served.err
		ok=$?
		mv r03.away set/r03.db &&
		test $ok = 0
	} &&
	alike 0 ci-grep --shards set shared_marker &&
	test_cmp grep.expect served.out
'

test_expect_success 'ci-grep --shards-stop: the server goes, queries are answered here' '
	stop grep set &&
	test_status 1 ci-grep --shards set --shards-stop 2>err &&
	test_grep "no server is running" err &&
	ci-grep --shards set shared_marker >actual &&
	test_cmp grep.expect actual
'

test_expect_success 'ci-rank and ci-refs servers: the answers of queries run alone' '
	start rank m.tsv &&
	alike 0 ci-rank --shards m.tsv --limit 3 "parse the text" &&
	test "$(grep -c "\"_type\":\"hit\"" served.out)" = 3 &&
	alike 0 ci-rank --shards m.tsv context "parse the text" &&
	stop rank m.tsv &&
	start refs m.tsv &&
	alike 0 ci-refs --shards m.tsv defs run &&
	alike 0 ci-refs --shards m.tsv --shards-repo r01 refs util_r01 &&
	alike 1 ci-refs --shards m.tsv defs zzz_nowhere &&
	stop refs m.tsv
'

test_expect_success 'a shard the server cannot open: a fleet_error record in every answer' '
	start refs bad.tsv &&
	alike 3 ci-refs --shards bad.tsv defs run &&
	jq -r "select(._type == \"fleet_error\") | \"\\(.repo) \\(.exit)\"" served.out >actual &&
	echo "r09 3" >expect &&
	test_cmp expect actual &&
	test_grep "shard .r09." served.err &&
	stop refs bad.tsv
'

test_expect_success '--shards-serve takes nothing else' '
	test_status 2 ci-grep --shards set --shards-serve x 2>err &&
	test_grep "takes --shards <set> and nothing else" err
'

test_done
