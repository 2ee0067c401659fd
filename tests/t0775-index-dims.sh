#!/bin/sh
# t0775-index-dims: ci-index --embed --dims <n> stores ci-code's vectors cut to
# <n> values under the model id "ci-code/<n>"; ci-rank embeds the query the same
# way (the index's model); a query model of other dimensions is an error that
# says so, never an empty or wrong answer (hybrid mode's learned fusion, which
# reads no semantic feature, does not read the vectors and answers); an update
# keeps the dims.

. "$(dirname "$0")/lib.sh"

vec_tool=$CI_BUILD_DIR/tests/vec-tool
sql=$CI_BUILD_DIR/tests/index-sql
unset CI_MODEL

test_expect_success 'setup: a small repository' '
	three_functions_repo
'

test_expect_success 'ci-index --embed --dims 64 build: model ci-code/64, 64 values a vector' '
	(cd repo && ci-index --no-server --embed --dims 64 build) &&
	(cd repo && ci-index status) >status &&
	"$JQ" -r "[.model, .vectors] | @tsv" status >actual &&
	printf "ci-code/64\t3\n" >expect &&
	test_cmp expect actual &&
	"$sql" repo/.ci-index/index.db "SELECT DISTINCT model, dim FROM vectors" >actual &&
	printf "ci-code/64|64\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'the stored vectors are ci-embed --dims 64 ones' '
	(cd repo && ci-chunk | ci-embed --dims 64 | ci-index --index ../loaded.db load) &&
	q="SELECT c.name, c.start_line, v.model, v.dim, hex(v.vec) FROM vectors v JOIN chunks c ON c.id = v.chunk_id ORDER BY 1, 2" &&
	"$sql" repo/.ci-index/index.db "$q" >built &&
	"$sql" loaded.db "$q" >loaded &&
	test_line_count = 3 built &&
	test_cmp loaded built
'

test_expect_success 'ci-rank embeds the query as the index did, and finds the functions' '
	(cd repo && ci-rank --mode semantic "parse an ini configuration file into sections") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo load_settings >expect &&
	test_cmp expect actual &&
	(cd repo && CI_MODEL=ci-code/64 ci-rank --mode semantic "multiply two square matrices") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo matrix_multiply >expect &&
	test_cmp expect actual
'

test_expect_success 'its scores are the cosines of ci-embed --dims 64 vectors (a negative one counts as 0)' '
	q="retry a network call with exponential backoff" &&
	(cd repo && ci-rank --mode semantic "$q") >hits &&
	"$JQ" -r "select(._type == \"hit\" and .signals.semantic != null) |
		[.name, (.signals.semantic * 1000 | round)] | @tsv" hits |
		sort >actual &&
	(cd repo && ci-chunk --chunks --no-files | ci-embed --dims 64) >chunks &&
	ci-embed --dims 64 --query "$q" >qv &&
	for i in 1 2 3; do cat qv; done >qvs &&
	test_line_count = 3 chunks &&
	"$JQ" -r .name chunks >names &&
	"$vec_tool" cos qvs chunks | paste names - |
		awk -F "\t" "{ c = \$2 < 0 ? 0 : \$2; printf \"%s\t%d\n\", \$1, int(c * 1000 + 0.5) }" |
		sort >expect &&
	test_line_count = 3 actual &&
	test_cmp expect actual
'

test_expect_success 'a query model of other dimensions is an error, in semantic and hybrid mode (hybrid: when its fusion reads the vectors)' '
	(cd repo && CI_MODEL=ci-code ci-rank "multiply two matrices") >out &&
	"$JQ" -e "select(._type == \"summary\") | .count > 0 and (.signals | index(\"semantic\") == null)" out &&
	for mode in semantic "hybrid --fusion rrf"; do
		{ (cd repo && CI_MODEL=ci-code ci-rank --mode $mode "multiply two matrices") >out 2>err
		  test $? -ne 0; } &&
		test_grep "the index.s vectors are of model .ci-code/64., the query.s of .ci-code." err &&
		test_must_be_empty out || return 1
	done &&
	{ (cd repo && CI_MODEL=ci-code/32 ci-rank --mode semantic "multiply two matrices") >out 2>err
	  test $? -ne 0; } &&
	test_grep "of model .ci-code/64., the query.s of .ci-code/32." err
'

test_expect_success 'an update after one edit embeds that file only, with ci-code/64' '
	(cd repo && echo "# the end" >>src/net.py && ci-index --no-server -v update 2>../err) &&
	n=$(cd repo && ci-chunk --chunks --no-files src/net.py | wc -l) &&
	test_grep "embedded $n chunks and 0 commits with ci-code/64" err &&
	"$sql" repo/.ci-index/index.db "SELECT DISTINCT model, dim FROM vectors" >actual &&
	printf "ci-code/64|64\n" >expect &&
	test_cmp expect actual
'

test_expect_success '--embed --dims 32 embeds anew at 32; --embed --model ci-code back at 256' '
	(cd repo && ci-index --no-server --embed --dims 32 update) &&
	"$sql" repo/.ci-index/index.db "SELECT DISTINCT model, dim FROM vectors" >actual &&
	printf "ci-code/32|32\n" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-rank --mode semantic "multiply two square matrices") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo matrix_multiply >expect &&
	test_cmp expect actual &&
	(cd repo && ci-index --no-server --embed --model ci-code update) &&
	"$sql" repo/.ci-index/index.db "SELECT DISTINCT model, dim FROM vectors" >actual &&
	printf "ci-code|256\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'bad --dims: a message, non-zero, the index untouched' '
	cp repo/.ci-index/index.db before.db &&
	{ (cd repo && ci-index --no-server --embed --dims 0 update) 2>err; test $? = 2; } &&
	test_grep "dims: expected an integer" err &&
	{ (cd repo && ci-index --no-server --embed --dims many update) 2>err; test $? = 2; } &&
	test_grep "dims: expected an integer" err &&
	{ (cd repo && ci-index --no-server --embed --dims 300 update) 2>err; test $? -ne 0; } &&
	test_grep "dimensions 300: the model.s vectors have 1 to 256" err &&
	"$sql" repo/.ci-index/index.db "SELECT DISTINCT model, dim FROM vectors" >actual &&
	printf "ci-code|256\n" >expect &&
	test_cmp expect actual &&
	rm -rf fresh && cp -R repo fresh && rm -rf fresh/.ci-index &&
	{ (cd fresh && ci-index --no-server --embed --dims 999 build) 2>err; test $? -ne 0; } &&
	test_grep "dimensions 999" err &&
	! test -f fresh/.ci-index/index.db
'

test_done
