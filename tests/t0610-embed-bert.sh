#!/bin/sh
# t0610-embed-bert: ci-embed with a HuggingFace BERT-family model directory.
#
# tests/bert-tiny writes two tiny BERT directories from a fixed pseudo-random
# sequence (mean: uncased, mean pooling, float32, "bert." names with gamma/beta;
# cls: cased, CLS pooling, max_seq_length 24, float16 and bfloat16; max: max
# pooling and the tanh GELU).  The golden
# files (tests/golden/ci-embed-bert/<variant>.jsonl) hold, for each text, the ids
# and the vector of the reference, scripts/bert-golden.py (HF BertTokenizer's
# rules and BertModel's forward pass in PyTorch, run once): the ids must be equal
# and every vector must come out with a cosine of at least 0.999, by --query and
# in batches.  Then the record stream, the model's name, and the broken model
# directories (missing file, truncated or damaged safetensors, wrong shapes).

. "$(dirname "$0")/lib.sh"

golden=$CI_SRC_DIR/tests/golden/ci-embed-bert
vec_tool=$CI_BUILD_DIR/tests/vec-tool
bert_tiny=$CI_BUILD_DIR/tests/bert-tiny
bert_tokens=$CI_BUILD_DIR/tests/bert-tokens
unset CI_MODEL

# cosines_at_least <a> <b> <min>: every cosine of line i of a with line i of b
cosines_at_least() {
	"$vec_tool" cos "$1" "$2" >cos.out 2>&7 &&
	awk -v min="$3" '{ if ($1 < min) { bad = 1; print "line " NR ": cosine " $1 " < " min } }
		END { exit bad }' cos.out >&7
}

# query_all <model> <golden>: ci-embed --query of every text of <golden>, in order
query_all() {
	n=$(wc -l <"$2") &&
	i=1 &&
	while test $i -le $n; do
		t=$(sed -n "${i}p" "$2" | "$JQ" -j .text; printf x) &&
		t=${t%x} &&
		ci-embed --model "$1" --query "$t" || return 1
		i=$((i + 1))
	done
}

test_expect_success 'setup: the tiny models, written the same way twice' '
	"$bert_tiny" mean mean &&
	"$bert_tiny" cls cls &&
	"$bert_tiny" max max &&
	"$bert_tiny" mean again &&
	cmp mean/model.safetensors again/model.safetensors &&
	test_line_count -ge 20 "$golden/mean.jsonl" &&
	test_line_count -ge 20 "$golden/cls.jsonl" &&
	test_line_count -ge 20 "$golden/max.jsonl"
'

for v in mean cls max; do
	test_expect_success "$v: the token ids of the reference" '
		"$JQ" -c .ids "$golden/$v.jsonl" >expect &&
		"$bert_tokens" $v "$golden/$v.jsonl" >actual &&
		test_cmp expect actual
	'

	test_expect_success "$v: the golden vectors of the reference, by --query" '
		query_all $v "$golden/$v.jsonl" >got &&
		test_line_count = $(wc -l <"$golden/$v.jsonl") got &&
		cosines_at_least "$golden/$v.jsonl" got 0.999
	'

	test_expect_success "$v: the golden vectors in batches, as chunk text, on 2 threads" '
		# white space is squeezed in chunk text: only the texts it leaves alone
		"$JQ" -c "select(.text | test(\"\\\\s\\\\s|[\\\\t\\\\n\\\\r]|^\\\\s|\\\\s\$\") | not)" \
			"$golden/$v.jsonl" >plain &&
		test_line_count -ge 15 plain &&
		"$JQ" -c "{_type: \"chunk\", path: \"x\", text}" plain >in &&
		ci-embed --model $v --fields text -j 2 --batch 5 <in >out &&
		cosines_at_least plain out 0.999 &&
		ci-embed --model $v --fields text -j 1 --batch 1 <in >one &&
		cosines_at_least out one 0.99999
	'
done

# tokenizer_json <variant> <lowercase>: the model with tokenizer.json, not vocab.txt
tokenizer_json() {
	rm -rf tj-$1 && cp -R $1 tj-$1 && rm -f tj-$1/vocab.txt tj-$1/tokenizer_config.json &&
	"$JQ" -R -n --argjson lc $2 "{model: {type: \"WordPiece\", unk_token: \"[UNK]\",
		continuing_subword_prefix: \"##\", max_input_chars_per_word: 100,
		vocab: ([inputs] | to_entries | map({key: .value, value: .key}) | from_entries)},
		normalizer: {type: \"BertNormalizer\", clean_text: true, handle_chinese_chars: true,
		strip_accents: null, lowercase: \$lc}}" <$1/vocab.txt >tj-$1/tokenizer.json
}

test_expect_success 'tokenizer.json instead of vocab.txt: the same ids and vectors' '
	tokenizer_json mean true &&
	tokenizer_json cls false &&
	for v in mean cls; do
		"$JQ" -c .ids "$golden/$v.jsonl" >expect &&
		"$bert_tokens" tj-$v "$golden/$v.jsonl" >actual &&
		test_cmp expect actual &&
		sed -n 10p "$golden/$v.jsonl" >one &&
		query_all tj-$v one >got &&
		cosines_at_least one got 0.999 || return 1
	done
'

test_expect_success 'the three poolings give different vectors' '
	ci-embed --model mean --query "hello world" >a &&
	ci-embed --model cls --query "hello world" >b &&
	ci-embed --model max --query "hello world" >c &&
	"$vec_tool" cos a b >ab &&
	"$vec_tool" cos a c >ac &&
	awk "{ exit !(\$1 < 0.99) }" ab &&
	awk "{ exit !(\$1 < 0.99) }" ac
'

# ---- records -----------------------------------------------------------------------

test_expect_success 'chunk records gain a unit vector of the hidden size and the model name' '
	cat >stream <<-\EOF &&
	{"_type":"file","path":"a.py","lang":"python"}
	{"_type":"chunk","path":"a.py","lang":"python","name":"parse","text":"def parse(self):\n    return self.read()\n"}
	{"_type":"chunk","path":"empty","text":""}
	EOF
	ci-embed --model mean <stream >out &&
	test_line_count = 3 out &&
	sed -n 1p stream >expect &&
	sed -n 1p out >actual &&
	test_cmp expect actual &&
	grep "\"_type\":\"chunk\"" out >embedded &&
	"$JQ" -r "[.model, (.vec | length)] | @tsv" embedded >models &&
	printf "mean\t172\nmean\t172\n" >expect &&
	test_cmp expect models &&
	"$vec_tool" norm embedded >norms &&
	awk "{ if (\$1 < 0.9999 || \$1 > 1.0001) exit 1 }" norms
'

test_expect_success 'a HuggingFace cache directory is named by its repository' '
	mkdir -p "hub/models--org--tiny-bert/snapshots/0123abcd" &&
	cp -R mean/. "hub/models--org--tiny-bert/snapshots/0123abcd/" &&
	ci-embed --model "hub/models--org--tiny-bert/snapshots/0123abcd/" --query x >q &&
	"$JQ" -r .model q >actual &&
	echo org/tiny-bert >expect &&
	test_cmp expect actual
'

test_expect_success 'input is cut at the model limit: max_position_embeddings, max_seq_length' '
	awk "BEGIN { printf \"{\\\"_type\\\":\\\"chunk\\\",\\\"path\\\":\\\"big\\\",\\\"text\\\":\\\"\"; for (i = 0; i < 5000; i++) printf \"the \"; print \"\\\"}\" }" >big &&
	ci-embed --model mean --fields text -v <big >/dev/null 2>err &&
	test_grep "1 chunks, 64 tokens" err &&
	ci-embed --model cls --fields text -v <big >/dev/null 2>err &&
	test_grep "1 chunks, 24 tokens" err &&
	ci-embed --model mean --fields text --max-tokens 7 -v <big >/dev/null 2>err &&
	test_grep "1 chunks, 7 tokens" err
'

test_expect_success '--static is refused for a BERT model' '
	test_status 2 ci-embed --model mean --static --query x >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-embed: --static: .*no static mode" err
'

# ---- broken model directories ----------------------------------------------------------

# broken <name>: a copy of the mean model to break
broken() {
	rm -rf "$1" && cp -R mean "$1"
}

# fails_with <dir> <pattern>: ci-embed exits 3, prints nothing, and says <pattern>
fails_with() {
	test_status 3 ci-embed --model "$1" --query x >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-embed: $2" err
}

test_expect_success 'a missing vocab.txt is an error naming it' '
	broken b1 && rm b1/vocab.txt &&
	fails_with b1 ".*b1/vocab.txt"
'

test_expect_success 'a missing model.safetensors is an error naming it' '
	broken b2 && rm b2/model.safetensors &&
	fails_with b2 "cannot open .*b2/model.safetensors"
'

test_expect_success 'a truncated model.safetensors is an error naming it and a tensor' '
	broken b3 &&
	head -c 60000 mean/model.safetensors >b3/model.safetensors &&
	fails_with b3 ".*b3/model.safetensors.* is truncated: tensor .bert\\.encoder" &&
	head -c 100 mean/model.safetensors >b3/model.safetensors &&
	fails_with b3 ".*b3/model.safetensors.* is truncated: its header" &&
	head -c 3 mean/model.safetensors >b3/model.safetensors &&
	fails_with b3 ".*b3/model.safetensors.* is truncated" &&
	: >b3/model.safetensors &&
	fails_with b3 ".*b3/model.safetensors.* is truncated"
'

test_expect_success 'a damaged safetensors header is an error' '
	broken b4 &&
	printf "\\016\\000\\000\\000\\000\\000\\000\\000" >b4/model.safetensors &&
	printf "%s" "{\"a\":1,\"b\":[]}" >>b4/model.safetensors &&
	fails_with b4 ".*b4/model.safetensors: tensor .a.: malformed" &&
	printf "\\377\\377\\377\\377\\377\\377\\377\\377" >b4/model.safetensors &&
	fails_with b4 ".*b4/model.safetensors: a header of .* bytes"
'

test_expect_success 'a shape that config.json does not say is an error naming the tensor' '
	broken b5 &&
	"$JQ" ".intermediate_size = 65" mean/config.json >b5/config.json &&
	fails_with b5 ".*b5/model.safetensors: tensor .bert.encoder.layer.0.intermediate.dense.weight. is \\[64,32\\], config.json says \\[65,32\\]"
'

test_expect_success 'fewer pieces in the embeddings than in vocab.txt is an error' '
	broken b6 &&
	"$JQ" ".vocab_size = 10" mean/config.json >b6/config.json &&
	fails_with b6 ".*b6/vocab.txt: .* pieces, but config.json says vocab_size 10"
'

test_expect_success 'a missing tensor is an error naming it' '
	"$bert_tiny" --omit bert.encoder.layer.1.output.dense.weight mean b7 &&
	fails_with b7 ".*b7/model.safetensors: no tensor .encoder.layer.1.output.dense.weight."
'

test_expect_success 'a config.json of another model is an error' '
	broken b8 &&
	"$JQ" ".model_type = \"roberta\"" mean/config.json >b8/config.json &&
	fails_with b8 ".*b8/config.json: model_type .roberta.: not supported" &&
	"$JQ" "del(.hidden_size)" mean/config.json >b8/config.json &&
	fails_with b8 ".*b8/config.json: \"hidden_size\" is missing" &&
	echo "{" >b8/config.json &&
	fails_with b8 ".*b8/config.json:"
'

test_expect_success 'a pooling of several modes is an error' '
	broken b9 &&
	"$JQ" ".pooling_mode_cls_token = true" mean/1_Pooling/config.json >b9/1_Pooling/config.json &&
	fails_with b9 ".*b9/1_Pooling/config.json: pooling .*not supported"
'

test_expect_success 'a vocabulary without [CLS] is an error' '
	broken b10 &&
	grep -v "^\\[CLS\\]\$" mean/vocab.txt >b10/vocab.txt &&
	fails_with b10 ".*b10/vocab.txt: no \\[CLS\\]"
'

test_done
