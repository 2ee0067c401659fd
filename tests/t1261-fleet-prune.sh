#!/bin/sh
# t1261-fleet-prune: a grep over a shard set's server skips the shards whose
# trigrams cannot satisfy the pattern's trigram query (libcommon/fleet/prune.h),
# and its answer is the answer of asking every shard: the same records, status
# and messages as with CI_SHARDS_PRUNE=0 and as threads without a server, for
# patterns of one, some, all and no shards, regular expressions, -i, -w, -F, -c,
# -l, -v; a shard published again after the server read its trigrams is seen.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'fleet servers' 'the c and python grammars are not compiled in'
	test_done
fi

fleet_server_env


test_expect_success 'setup: eight repositories, an index each, a manifest; the set'"'"'s grep server' '
	make_fleet_repos repos 8 &&
	mkdir set &&
	for r in r01 r02 r03 r04 r05 r06 r07 r08; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done &&
	for r in r01 r02 r03 r04 r05 r06 r07 r08; do printf "%s\tset/%s.db\n" $r $r; done >m.tsv &&
	start grep m.tsv
'

# pruned <status> <skipped> <ci-grep args...>: the server's answer (pruning)
# is the answer with every shard asked (CI_SHARDS_PRUNE=0) and the threads'
# (no server), byte for byte with status and messages; <skipped> shards skipped
pruned() {
	want=$1 skipped=$2
	shift 2
	CI_SHARDS_STATS=1 test_status "$want" ci-grep --shards m.tsv "$@" >pruned.out 2>pruned.all &&
	sed "/shards: .* asked/d" pruned.all >pruned.err &&
	grep "shards: .* asked" pruned.all >stats &&
	echo "ci-grep: shards: $((8 - skipped)) asked, $skipped skipped (cannot match)" >expect &&
	test_cmp expect stats &&
	CI_SHARDS_PRUNE=0 CI_SHARDS_STATS=1 test_status "$want" ci-grep --shards m.tsv "$@" >all.out 2>all.all &&
	sed "/shards: .* asked/d" all.all >all.err &&
	echo "ci-grep: shards: 8 asked, 0 skipped (cannot match)" >expect &&
	grep "shards: .* asked" all.all >stats &&
	test_cmp expect stats &&
	CI_SHARDS_SERVER=0 test_status "$want" ci-grep --shards m.tsv "$@" >here.out 2>here.err &&
	test_cmp all.out pruned.out &&
	test_cmp all.err pruned.err &&
	test_cmp here.out pruned.out &&
	test_cmp here.err pruned.err
}

test_expect_success 'one shard holds it: the other seven are skipped, the answer is the same' '
	pruned 0 7 util_r03 &&
	jq -r "select(._type == \"match\") | .repo" pruned.out | sort -u >actual &&
	echo r03 >expect &&
	test_cmp expect actual &&
	pruned 0 7 "return util_r05\\(5\\)" &&
	pruned 0 7 -w parse_r06
'

test_expect_success 'regular expressions, -i, -F, -c, -l: some shards, all, none' '
	pruned 0 5 "util_r0[2-4]" &&
	pruned 0 6 "(util_r01|parse_r07)" &&
	pruned 0 7 -i "UTIL_R08" &&
	pruned 0 7 -F "util_r02(int" &&
	pruned 0 6 -c "parse_r0[15]" &&
	pruned 0 7 -l util_r04 &&
	pruned 0 0 shared_marker &&
	pruned 1 8 zzz_nowhere_at_all &&
	pruned 1 8 "util_r09"
'

test_expect_success 'what it cannot tell is asked everywhere: -v, a short pattern, no trigram' '
	pruned 0 0 -v -t c "^$" &&
	pruned 0 0 "u.i" &&
	pruned 0 0 "x" &&
	pruned 0 0 --files
'

test_expect_success 'a shard published again: its new trigrams are the ones it is skipped by' '
	pruned 1 8 fresh_marker_r03 &&
	printf "/* fresh_marker_r03 */\nint fresh_r03(void)\n{\n\treturn 3;\n}\n" >repos/r03/src/fresh.c &&
	publish r03 &&
	pruned 0 7 fresh_marker_r03 &&
	jq -r "select(._type == \"match\") | \"\\(.repo) \\(.path)\"" pruned.out >actual &&
	echo "r03 src/fresh.c" >expect &&
	test_cmp expect actual &&
	pruned 0 7 util_r03
'

test_expect_success 'the server goes when asked' '
	stop grep m.tsv
'

test_done
