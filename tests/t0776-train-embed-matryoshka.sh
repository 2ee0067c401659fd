#!/bin/sh
# t0776-train-embed-matryoshka: scripts/train-embed --matryoshka trains the
# InfoNCE loss over prefixes of the vector and reports the validation MRR at
# each; the model it writes runs in ci-embed at each of those --dims; bad
# dimension lists are refused.  A tiny synthetic data set (a few seconds).

. "$(dirname "$0")/lib.sh"

train=$CI_SRC_DIR/scripts/train-embed
vec_tool=$CI_BUILD_DIR/tests/vec-tool
unset CI_MODEL

need_torch 'train-embed --matryoshka'

test_expect_success 'setup: pairs of three units, some held out' '
	mkdir data &&
	/usr/bin/python3 - >data/pairs.jsonl <<-\EOF
	import json
	topics = ["parse config file sections", "send network request retry", "multiply matrix rows",
	          "free memory buffer pool", "sort list items order", "open socket connection port",
	          "read json object string", "hash table lookup key", "compress data stream block",
	          "draw window pixel color", "encrypt message cipher key", "schedule task timer queue"]
	for i in range(96):
	    t = topics[i % len(topics)].split()
	    unit = "u%d" % (i % 3) if i < 84 else "v"
	    print(json.dumps({"query": "%s the %s %s" % (t[0], t[1], t[2]),
	                      "name": "%s_%s_%d" % (t[0], t[1], i), "signature": "(%s)" % t[2],
	                      "text": "%s %s %s code%d" % (t[1], t[2], t[0], i % 5),
	                      "lang": "c", "unit": unit, "split": "valid" if unit == "v" else "train"}))
	EOF
'

test_expect_success 'train-embed --matryoshka 4,8: the MRR at 4, 8 and 16 dims, a model ci-embed runs' '
	/usr/bin/python3 "$train" --data data --out model --dim 16 --matryoshka 8,4 --epochs 2 \
		--batch 16 --block 4 --min-df 1 --valid 12 2>log &&
	for d in 4 8 16; do
		test_grep "int8 model: dims $d valid MRR [01]\\.[0-9]" log || return 1
	done &&
	test_grep "epoch 2: dims 4 valid MRR" log &&
	head -c 600 model/ci-code.safetensors | tr -d "\\000" >head &&
	test_grep "\"matryoshka\":\"4,8,16\"" head &&
	test_grep "\"valid_mrr_dims\":\"4:[01]\\.[0-9]*,8:[01]\\.[0-9]*,16:[01]\\.[0-9]*\"" head &&
	ci-embed --model model/ci-code --query "parse the config" >full &&
	ci-embed --model model/ci-code --dims 8 --query "parse the config" >d8 &&
	"$JQ" -r .model d8 >actual &&
	echo ci-code/8 >expect &&
	test_cmp expect actual &&
	"$vec_tool" prefix 8 full >cut &&
	"$vec_tool" maxdiff cut d8 >diff &&
	awk "{ if (\$1 > 1e-6) exit 1 }" diff
'

test_expect_success 'train-embed --eval-only --dims: the shipped kind of report, truncated' '
	/usr/bin/python3 "$train" --eval-only --data data --out model --valid 12 --dims 4,8 2>log &&
	test_grep "model: dims 4 valid MRR" log &&
	test_grep "model: dims 16 valid MRR" log
'

test_expect_success 'bad dimension lists: a message, non-zero' '
	for bad in 0,8 8,32 a,b; do
		{ /usr/bin/python3 "$train" --data data --out bad --dim 16 --matryoshka $bad 2>err
		  test $? -ne 0; } &&
		test_grep "train-embed: --matryoshka/--dims:" err || return 1
	done &&
	! test -e bad/ci-code.safetensors
'

test_done
