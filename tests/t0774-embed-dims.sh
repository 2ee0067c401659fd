#!/bin/sh
# t0774-embed-dims: ci-embed --dims <n> (Matryoshka dimensions of ci-code): the
# first <n> values of the model's vector, L2-normalised, under the model id
# "ci-code/<n>" (also accepted as --model ci-code/<n>); bad values refused.

. "$(dirname "$0")/lib.sh"

vec_tool=$CI_BUILD_DIR/tests/vec-tool
unset CI_MODEL

test_expect_success 'each prefix: its id, its length, a unit vector' '
	for d in 32 64 128; do
		ci-embed --dims $d --query "free a buffer" >q.$d || return 1
		"$JQ" -r .model q.$d >actual &&
		echo "ci-code/$d" >expect &&
		test_cmp expect actual &&
		"$vec_tool" prefix $d q.$d | "$JQ" -r .n >actual &&
		echo $d >expect &&
		test_cmp expect actual &&
		"$vec_tool" norm q.$d >norm &&
		awk "{ if (\$1 < 0.9999 || \$1 > 1.0001) exit 1 }" norm || return 1
	done
'

test_expect_success '--dims 256 (the model dimension) is the model itself' '
	ci-embed --query "free a buffer" >full &&
	ci-embed --dims 256 --query "free a buffer" >q.256 &&
	test_cmp full q.256 &&
	"$JQ" -r .model full >actual &&
	echo ci-code >expect &&
	test_cmp expect actual
'

test_expect_success 'a prefix is the full vector cut and re-normalised (query and chunks)' '
	for d in 32 64 128; do
		"$vec_tool" prefix $d full >cut &&
		"$vec_tool" maxdiff cut q.$d >diff &&
		awk "{ if (\$1 > 1e-6) exit 1 }" diff || return 1
	done &&
	cat >stream <<-\EOF &&
	{"_type":"file","path":"a.py","lang":"python"}
	{"_type":"chunk","path":"a.py","lang":"python","name":"parse_config","text":"def parse_config(path):\n    return read_ini(path)\n"}
	{"_type":"chunk","path":"b.c","lang":"c","name":"matrix_multiply","text":"void matrix_multiply(double *a, double *b, double *out, int n) { }\n"}
	{"_type":"commit","sha":"0","message":"Fix the retry loop of send_request"}
	EOF
	ci-embed <stream >all &&
	ci-embed --dims 64 -j 2 <stream >cut64 &&
	test_line_count = 4 cut64 &&
	sed -n 1p stream >expect &&
	sed -n 1p cut64 >actual &&
	test_cmp expect actual &&
	"$JQ" -r "select(.vec) | .model" cut64 | sort -u >actual &&
	echo ci-code/64 >expect &&
	test_cmp expect actual &&
	grep "\"vec\"" all >all.v &&
	grep "\"vec\"" cut64 >cut64.v &&
	test_line_count = 3 cut64.v &&
	"$vec_tool" prefix 64 all.v >expect.v &&
	"$vec_tool" maxdiff expect.v cut64.v >diff &&
	awk "{ if (\$1 > 1e-6) exit 1 }" diff
'

test_expect_success '--model ci-code/64 and CI_MODEL=ci-code/64 are --dims 64' '
	ci-embed --model ci-code/64 --query "free a buffer" >m64 &&
	test_cmp q.64 m64 &&
	CI_MODEL=ci-code/64 ci-embed --query "free a buffer" >e64 &&
	test_cmp q.64 e64 &&
	ci-embed --model "$CI_SRC_DIR/share/models/ci-code/64" --query "free a buffer" >p64 &&
	test_cmp q.64 p64
'

test_expect_success 'bad --dims: 0, above the model dimension, not a number: a message, non-zero' '
	{ ci-embed --dims 0 --query x >out 2>err; test $? = 2; } &&
	test_grep "dims: expected an integer" err &&
	test_must_be_empty out &&
	{ ci-embed --dims 257 --query x >out 2>err; test $? = 2; } &&
	test_grep "dimensions 257: the model.s vectors have 1 to 256" err &&
	test_must_be_empty out &&
	{ ci-embed --dims 64x --query x 2>err; test $? = 2; } &&
	test_grep "dims: expected an integer" err &&
	{ ci-embed --dims -4 --query x 2>err; test $? = 2; } &&
	test_grep "dims: expected an integer" err &&
	{ ci-embed --model ci-code/0 --query x 2>err; test $? -ne 0; } &&
	test_grep "dimensions 0: the model.s vectors have 1 to 256" err &&
	{ ci-embed --model ci-code/512 --query x 2>err; test $? -ne 0; } &&
	test_grep "dimensions 512" err
'

test_expect_success 'a prefix of a model that is not static is refused' '
	mkdir notstatic &&
	{ ci-embed --model notstatic/64 --query x 2>err; test $? -ne 0; } &&
	test_grep "Matryoshka dimensions" err
'

test_done
