#!/bin/sh
# t0720-couple-commits-semantic: ci-couple commits with commit vectors.
#
# The fixture history (tests/couple-lib.sh) plus two commits: "add file headers"
# and "fix crash when the configuration file is missing".  Without commit vectors
# the search is BM25 only and says so; once `ci-couple history | ci-embed |
# ci-index load` (or ci-index --embed load) has stored vectors, the query's
# vector (computed in-process) is fused in: a query that shares no word with the
# right commit finds it, and one whose only shared word ("file") favours a short
# unrelated message ranks the right commit first.  int8 vectors answer alike;
# ci-code commit vectors of other weights (an earlier version: meta
# model_fingerprint) are left out, and the header says why.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/couple-lib.sh"

need_model 'ci-couple semantic tests'

# messages <file>: the messages of the commit records of a search, in order
messages() {
	"$JQ" -r "select(._type == \"commit\") | .message" "$1"
}

config_msg="fix crash when the configuration file is missing"

test_expect_success 'setup: the fixture history and two more commits' '
	make_couple_repo repo &&
	(
		cd repo &&
		echo "/* main */" >>src/main.c && git add . &&
		couple_commit 11 Alice "add file headers" &&
		echo "int load_config(void);" >src/config.c && git add . &&
		couple_commit 12 Bob "$config_msg"
	)
'

test_expect_success 'no index: BM25 only, and the header says why' '
	(cd repo && ci-couple commits "crashes without config file") >out &&
	sed -n 1p out | "$JQ" -c "[.signals, .semantic]" >actual &&
	echo "[[\"bm25\"],\"no index\"]" >expect &&
	test_cmp expect actual &&
	messages out >actual &&
	printf "%s\n" "add file headers" "$config_msg" >expect &&
	test_cmp expect actual &&
	"$JQ" -e "select(._type == \"commit\") | has(\"signals\") | not" out &&
	(cd repo && test_status 1 ci-couple commits "crashes without config") >out &&
	"$JQ" -e ".count == 0" out
'

test_expect_success 'an index without commit vectors: BM25 only, and why' '
	(cd repo && ci-index build && ci-couple history | ci-index load) &&
	(cd repo && ci-couple commits "crashes without config file") >out &&
	sed -n 1p out | "$JQ" -c "[.signals, .semantic]" >actual &&
	echo "[[\"bm25\"],\"no commit vectors in the index\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'with commit vectors: both signals, and the right commit first' '
	(cd repo && ci-couple history | ci-embed | ci-index load) &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".commit_vectors == 13 and .commits_without_vectors == 0" st &&
	(cd repo && ci-couple commits "crashes without config file") >out &&
	sed -n 1p out | "$JQ" -c "[.signals, .semantic]" >actual &&
	echo "[[\"bm25\",\"semantic\"],null]" >expect &&
	test_cmp expect actual &&
	messages out | head -n 2 >actual &&
	printf "%s\n" "$config_msg" "add file headers" >expect &&
	test_cmp expect actual &&
	"$JQ" -e "select(._type == \"commit\") | .signals | has(\"bm25\") and has(\"semantic\")" out >/dev/null &&
	"$JQ" -s -e "map(select(._type == \"commit\")) | .[0].signals.semantic > .[1].signals.semantic and
		.[0].signals.bm25 < .[1].signals.bm25" out
'

test_expect_success 'no word in common: found by its vector alone' '
	(cd repo && ci-couple commits "crashes without config") >out &&
	messages out | head -n 1 >actual &&
	echo "$config_msg" >expect &&
	test_cmp expect actual &&
	"$JQ" -s -e "map(select(._type == \"commit\")) | .[0].signals.bm25 == 0" out
'

test_expect_success 'an unrelated query still finds nothing' '
	(cd repo && test_status 1 ci-couple commits zebra) >out &&
	"$JQ" -e ".count == 0 and .signals == [\"bm25\", \"semantic\"]" out
'

test_expect_success '--author and --file filter the semantic hits too' '
	(cd repo && ci-couple commits "crashes without config" --author Alice) >out &&
	"$JQ" -e "select(._type == \"commit\") | .author == \"Alice\"" out >/dev/null &&
	! grep "$config_msg" out &&
	(cd repo && ci-couple commits "crashes without config" --file src/config.c) >out &&
	messages out >actual &&
	echo "$config_msg" >expect &&
	test_cmp expect actual
'

test_expect_success 'int8 commit vectors (ci-index --embed --vectors int8 load): the same order' '
	(cd repo && ci-couple commits "crashes without config file") | messages /dev/stdin >f32.order &&
	(cd repo && ci-index --index ../i8.db build &&
		ci-couple history | ci-index --index ../i8.db --vectors int8 --embed load) &&
	sqlite3 i8.db "SELECT DISTINCT fmt FROM commit_vectors" >actual &&
	echo int8 >expect &&
	test_cmp expect actual &&
	(cd repo && ci-couple --index ../i8.db commits "crashes without config file") >out &&
	messages out >i8.order &&
	test_cmp f32.order i8.order
'

test_expect_success 'commit vectors of other weights of the model (an earlier ci-code): BM25 only, and why' '
	(cd repo && ci-index --index ../cc.db build &&
		ci-couple history | ci-index --index ../cc.db --embed --model ci-code load) &&
	(cd repo && CI_MODEL=ci-code ci-couple --index ../cc.db commits "crashes without config file") >out &&
	sed -n 1p out | "$JQ" -r ".signals | join(\",\")" >actual &&
	echo bm25,semantic >expect &&
	test_cmp expect actual &&
	cp cc.db stale.db &&
	sqlite3 stale.db "UPDATE meta SET value = '\''0123456789abcdef'\'' WHERE key = '\''model_fingerprint'\''" &&
	(cd repo && CI_MODEL=ci-code ci-couple --index ../stale.db commits "crashes without config file") >out &&
	sed -n 1p out | "$JQ" -r ".signals | join(\",\")" >actual &&
	echo bm25 >expect &&
	test_cmp expect actual &&
	sed -n 1p out | "$JQ" -r .semantic >why &&
	test_grep "other weights of model .ci-code. (an earlier version)" why
'

test_expect_success 'the index is read-only for ci-couple commits' '
	(cd repo && ci-index status) >before &&
	(cd repo && ci-couple commits "crashes without config file" >/dev/null) &&
	(cd repo && ci-index status) >after &&
	"$JQ" -c "del(.updated)" before >a &&
	"$JQ" -c "del(.updated)" after >b &&
	test_cmp a b
'

test_done
