#!/bin/sh
# t1250-fleet-server-kept: what a shard server keeps per shard between
# queries (libcommon/fleet's pool: each index opened INDEX_IMMUTABLE with its
# meta values and statements kept, ci-rank's candidates' metadata and
# prepared statements, ci-grep's walker, each shard warmed by a query in the
# server) changes no answer: a run of different queries, each the answer of
# the same query run here (CI_SHARDS_SERVER=0: threads, nothing kept), byte
# for byte, status and messages; and a shard published again (a new file
# renamed over the old) is answered from its new index at the next query.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'fleet servers' 'the c and python grammars are not compiled in'
	test_done
fi

fleet_server_env


test_expect_success 'setup: five repositories, an index each, a manifest' '
	make_fleet_repos repos 5 &&
	mkdir set &&
	for r in r01 r02 r03 r04 r05; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done &&
	for r in r01 r02 r03 r04 r05; do printf "%s\tset/%s.db\n" $r $r; done >m.tsv
'

test_expect_success 'ci-rank server: a run of queries, each answered as here' '
	start rank m.tsv &&
	alike 0 ci-rank --shards m.tsv --limit 5 "parse the text" &&
	test "$(grep -c "\"_type\":\"hit\"" served.out)" = 5 &&
	alike 0 ci-rank --shards m.tsv --limit 5 "parse the text" &&
	alike 0 ci-rank --shards m.tsv --limit 8 util_r03 &&
	alike 0 ci-rank --shards m.tsv "where is main called with util" &&
	alike 0 ci-rank --shards m.tsv --fusion rrf "split the text run" &&
	alike 0 ci-rank --shards m.tsv --model "$CI_SRC_DIR/share/rank/model.json" "util main" &&
	alike 0 ci-rank --shards m.tsv --shards-repo r02,r04 "run the parse" &&
	alike 1 ci-rank --shards m.tsv "zzz_nowhere qqq_none" &&
	alike 0 ci-rank --shards m.tsv context "parse the text" &&
	alike 0 ci-rank --shards m.tsv --limit 5 "parse the text"
'

test_expect_success 'ci-grep server: a run of searches, each answered as here' '
	start grep m.tsv &&
	alike 0 ci-grep --shards m.tsv shared_marker &&
	test_line_count = 11 served.out &&
	alike 0 ci-grep --shards m.tsv -i -w SHARED_MARKER &&
	alike 0 ci-grep --shards m.tsv -F "x *" &&
	alike 0 ci-grep --shards m.tsv -C 1 "return x" &&
	alike 0 ci-grep --shards m.tsv -c util &&
	alike 0 ci-grep --shards m.tsv -l -g "*.py" split &&
	alike 0 ci-grep --shards m.tsv -v -t c "^$" &&
	alike 0 ci-grep --shards m.tsv --files &&
	alike 1 ci-grep --shards m.tsv zzz_nowhere &&
	alike 0 ci-grep --shards m.tsv shared_marker
'

test_expect_success 'a shard published again: both servers answer from its new index' '
	printf "/* republished_marker */\nint again_r02(void)\n{\n\treturn 2;\n}\n" >repos/r02/src/again.c &&
	publish r02 &&
	alike 0 ci-grep --shards m.tsv republished_marker &&
	jq -r "select(._type == \"match\") | \"\\(.repo) \\(.path)\"" served.out >actual &&
	echo "r02 src/again.c" >expect &&
	test_cmp expect actual &&
	alike 0 ci-grep --shards m.tsv shared_marker &&
	alike 0 ci-rank --shards m.tsv --limit 3 "again_r02 republished" &&
	jq -r "select(._type == \"hit\") | .repo" served.out | head -n 1 >actual &&
	echo r02 >expect &&
	test_cmp expect actual &&
	alike 0 ci-rank --shards m.tsv --limit 5 "parse the text"
'

test_expect_success 'the servers go when asked' '
	stop grep m.tsv &&
	stop rank m.tsv
'

test_done
