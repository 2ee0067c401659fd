#!/bin/sh
# t0622-embed-weights-changed: vectors of earlier weights of a model by the same
# name (ci-code, retrained) are never compared with the new ones.  ci-index
# records the weights' fingerprint with the vectors it embeds (meta
# model_fingerprint); an index whose fingerprint differs, or that has none
# (built before the fingerprint, with earlier weights), is stale: semantic
# ranking says so and fails, ci-couple's commit similarity says so, a plain
# update does not embed into it (a warning), and --embed update embeds
# everything anew.  Vectors loaded from ci-embed's stream carry no fingerprint
# and are not checked.

. "$(dirname "$0")/lib.sh"

sql=$CI_BUILD_DIR/tests/index-sql
unset CI_MODEL

test_expect_success 'setup: an index built with ci-code vectors records their weights' '
	three_functions_repo &&
	(cd repo && ci-index --no-server --embed --model ci-code build) &&
	"$sql" repo/.ci-index/index.db "SELECT value FROM meta WHERE key = '\''model_fingerprint'\''" >fp &&
	test_line_count = 1 fp &&
	grep -E "^[0-9a-f]{16}$" fp &&
	(cd repo && ci-rank --mode semantic "multiply two square matrices") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo matrix_multiply >expect &&
	test_cmp expect actual
'

test_expect_success 'the same weights, another build: the same fingerprint' '
	(cd repo && ci-index --no-server --embed --model ci-code --index ../again.db build) &&
	"$sql" again.db "SELECT value FROM meta WHERE key = '\''model_fingerprint'\''" >fp2 &&
	test_cmp fp fp2
'

test_expect_success 'a build without --embed keeps the vectors, and their fingerprint' '
	cp -R repo kept &&
	(cd kept && ci-index --no-server build) &&
	"$sql" kept/.ci-index/index.db "SELECT value FROM meta WHERE key = '\''model_fingerprint'\''" >fp4 &&
	test_cmp fp fp4 &&
	(cd kept && ci-rank --no-server --mode semantic "multiply two square matrices") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo matrix_multiply >expect &&
	test_cmp expect actual
'

for how in other none; do
	test_expect_success "vectors of other weights ($how recorded): semantic and hybrid ranking fail, saying so (hybrid: when its fusion reads the vectors)" '
		rm -rf r-$how && cp -R repo r-$how &&
		if test $how = other; then
			sqlite3 r-$how/.ci-index/index.db "UPDATE meta SET value = '\''0123456789abcdef'\'' WHERE key = '\''model_fingerprint'\''"
		else
			sqlite3 r-$how/.ci-index/index.db "DELETE FROM meta WHERE key = '\''model_fingerprint'\''"
		fi &&
		for mode in semantic "hybrid --fusion rrf"; do
			{ (cd r-$how && ci-rank --no-server --mode $mode "multiply two square matrices") >out 2>err
			  test $? -ne 0; } &&
			test_grep "vectors are of other weights of model .ci-code. (an earlier version)" err &&
			test_grep "ci-index --embed update" err &&
			test_must_be_empty out || return 1
		done &&
		(cd r-$how && ci-rank --no-server --mode keyword "matrix") >out &&
		test -s out &&
		(cd r-$how && ci-rank --no-server "multiply two square matrices") >out &&
		"$JQ" -e "select(._type == \"summary\") | .count > 0 and (.signals | index(\"semantic\") == null)" out
	'

	test_expect_success "vectors of other weights ($how recorded): an update warns and embeds nothing" '
		(cd r-$how && echo "# the end" >>src/net.py && ci-index --no-server -v update 2>../err) &&
		test_grep "vectors are of other weights of model .ci-code. (an earlier version): not embedding" err &&
		(cd r-$how && ci-index status) >status &&
		"$JQ" -e ".chunks_without_vectors > 0" status
	'

	test_expect_success "vectors of other weights ($how recorded): --embed update embeds everything anew" '
		(cd r-$how && ci-index --no-server -v --embed update 2>../err) &&
		test_grep "embedding anew" err &&
		n=$("$sql" r-$how/.ci-index/index.db "SELECT count(*) FROM vectors") &&
		test "$n" -ge 3 &&
		test_grep "embedded $n chunks" err &&
		(cd r-$how && ci-index status) >status &&
		"$JQ" -e ".chunks_without_vectors == 0" status &&
		"$sql" r-$how/.ci-index/index.db "SELECT value FROM meta WHERE key = '\''model_fingerprint'\''" >fp3 &&
		test_cmp fp fp3 &&
		(cd r-$how && ci-rank --no-server --mode semantic "multiply two square matrices") >hits &&
		"$JQ" -r .name hits | head -1 >actual &&
		echo matrix_multiply >expect &&
		test_cmp expect actual
	'
done

test_expect_success 'vectors loaded from ci-embed carry no fingerprint and are used' '
	(cd repo && ci-chunk | ci-embed --model ci-code | ci-index --no-server --index ../loaded.db load) &&
	"$sql" loaded.db "SELECT count(*) FROM meta WHERE key IN ('\''model'\'', '\''model_fingerprint'\'')" >n &&
	echo 0 >expect &&
	test_cmp expect n &&
	(cd repo && ci-rank --no-server --index ../loaded.db --mode semantic "multiply two square matrices") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo matrix_multiply >expect &&
	test_cmp expect actual
'

test_done
