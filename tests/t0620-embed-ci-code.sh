#!/bin/sh
# t0620-embed-ci-code: ci-code, the static code-search model trained here
# (scripts/train-embed, shipped in share/models), run by ci-embed.
#
# The golden vectors (tests/golden/embed/ci-code.jsonl) were written by
# scripts/train-embed --golden-only from the shipped model with its own
# tokenizer (Python): each text's words and vector; ci-embed's (C) must agree
# within 1e-5 in every component, so the two tokenizers cut the same words.
# Then: the model by name and by path, unit vectors of 256 values, the chunk
# stream (golden vectors of functions too, ci-code-chunks.jsonl: the words of
# a chunk's name count the model's name_weight times each), an index built with it whose semantic search finds the function a
# description means (and whose update keeps the model), and broken files.

. "$(dirname "$0")/lib.sh"

golden=$CI_SRC_DIR/tests/golden/embed/ci-code.jsonl
model=$CI_SRC_DIR/share/models/ci-code
vec_tool=$CI_BUILD_DIR/tests/vec-tool
unset CI_MODEL

test_expect_success 'the golden vectors of scripts/train-embed, by --query, within 1e-5' '
	n=$(wc -l <"$golden") &&
	test $n -ge 5 &&
	i=1 &&
	: >got &&
	while test $i -le $n; do
		t=$(sed -n "${i}p" "$golden" | "$JQ" -j .text; printf x) &&
		t=${t%x} &&
		ci-embed --model ci-code --query "$t" >>got || return 1
		i=$((i + 1))
	done &&
	test_line_count = $n got &&
	"$vec_tool" maxdiff "$golden" got >diff &&
	awk "{ if (\$1 > 1e-5) { bad = 1; print \"line \" NR \": \" \$1 } } END { exit bad }" diff >&7
'

test_expect_success 'the same vectors in one batch of commit messages, on 2 threads' '
	"$JQ" -c "select(.text | test(\"\\\\s\\\\s|[\\\\t\\\\n]|^\\\\s|\\\\s\$\") | not) |
		{_type: \"commit\", sha: \"0\", message: .text}" "$golden" >in &&
	"$JQ" -c "select(.text | test(\"\\\\s\\\\s|[\\\\t\\\\n]|^\\\\s|\\\\s\$\") | not)" "$golden" >plain &&
	test_line_count -ge 4 plain &&
	ci-embed --model ci-code -j 2 --batch 2 <in >out &&
	"$vec_tool" maxdiff plain out >diff &&
	awk "{ if (\$1 > 1e-5) exit 1 }" diff
'

test_expect_success 'by name, by path, by the weights file: one model, 256 values, unit vectors' '
	ci-embed --model ci-code --query "free a buffer" >a &&
	ci-embed --model "$model" --query "free a buffer" >b &&
	ci-embed --model "$model.safetensors" --query "free a buffer" >c &&
	test_cmp a b &&
	test_cmp a c &&
	"$JQ" -r "[.model, (.vec | length)] | @tsv" a >actual &&
	printf "ci-code\t1368\n" >expect &&
	test_cmp expect actual &&
	"$vec_tool" norm a >norm &&
	awk "{ if (\$1 < 0.9999 || \$1 > 1.0001) exit 1 }" norm
'

test_expect_success 'CI_MODEL=ci-code names it too, and it is the default' '
	CI_MODEL=ci-code ci-embed --query "free a buffer" >d &&
	test_cmp a d &&
	ci-embed --query "free a buffer" >e &&
	test_cmp a e
'

test_expect_success 'chunk records: vectors of ci-code, other records untouched, an empty text is zeros' '
	cat >stream <<-\EOF &&
	{"_type":"file","path":"a.py","lang":"python"}
	{"_type":"chunk","path":"a.py","lang":"python","name":"parse_config","text":"def parse_config(path):\n    return read_ini(path)\n"}
	{"_type":"chunk","path":"e","text":""}
	EOF
	ci-embed --model ci-code <stream >out &&
	test_line_count = 3 out &&
	sed -n 1p stream >expect &&
	sed -n 1p out >actual &&
	test_cmp expect actual &&
	"$JQ" -r "select(._type == \"chunk\") | .model" out >models &&
	printf "ci-code\nci-code\n" >expect &&
	test_cmp expect models &&
	grep "\"_type\":\"chunk\"" out >embedded &&
	"$vec_tool" norm embedded >norms &&
	printf "1.000000\n0.000000\n" >expect &&
	test_cmp expect norms
'

test_expect_success 'chunk records: the golden vectors of scripts/train-embed, the name weighing more' '
	chunks=$CI_SRC_DIR/tests/golden/embed/ci-code-chunks.jsonl &&
	test_line_count = 3 "$chunks" &&
	"$JQ" -r "[.name_weight, .name_ids] | @tsv" "$chunks" >weights &&
	awk -F "\t" "{ if (\$1 <= 1 || \$2 < 1) exit 1 }" weights &&
	"$JQ" -c ".chunk + {_type: \"chunk\", path: \"x\"}" "$chunks" >in &&
	ci-embed --model ci-code <in >out &&
	test_line_count = 3 out &&
	"$vec_tool" maxdiff "$chunks" out >diff &&
	awk "{ if (\$1 > 1e-5) { bad = 1; print \"line \" NR \": \" \$1 } } END { exit bad }" diff >&7 &&
	"$JQ" -c "del(.name)" in >noname &&
	ci-embed --model ci-code <noname >out2 &&
	"$vec_tool" maxdiff "$chunks" out2 >diff2 &&
	awk "{ if (\$1 < 1e-3) exit 1 }" diff2
'

test_expect_success '--static is for USE-lite: a usage error with ci-code' '
	{ ci-embed --model ci-code --static --query x 2>err; test $? = 2; } &&
	test_grep "no static mode" err
'

test_expect_success 'setup: a small repository' '
	three_functions_repo
'

test_expect_success 'ci-index build --embed --model ci-code: the index says ci-code' '
	(cd repo && ci-index --embed --model ci-code build) &&
	(cd repo && ci-index status) >status &&
	"$JQ" -r "[.model, .vectors] | @tsv" status >actual &&
	printf "ci-code\t3\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'semantic ci-rank finds the function a description means' '
	(cd repo && ci-rank --mode semantic "parse an ini configuration file into sections") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo load_settings >expect &&
	test_cmp expect actual &&
	(cd repo && ci-rank --mode semantic "multiply two square matrices") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo matrix_multiply >expect &&
	test_cmp expect actual &&
	(cd repo && ci-rank --mode semantic "retry a network call with exponential backoff") >hits &&
	"$JQ" -r .name hits | head -1 >actual &&
	echo send_request >expect &&
	test_cmp expect actual
'

test_expect_success 'an update after one edit embeds that file only, with the same model' '
	(cd repo && echo "# the end" >>src/net.py && ci-index -v update 2>../err) &&
	n=$(cd repo && ci-chunk --chunks --no-files src/net.py | wc -l) &&
	test_grep "embedded $n chunks and 0 commits with ci-code" err &&
	test_grep "2 unchanged, 1 re-read" err &&
	(cd repo && ci-index status) >status &&
	"$JQ" -r "[.model, .chunks_without_vectors] | @tsv" status >actual &&
	printf "ci-code\t0\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'ci-index --embed stores the vectors ci-embed computes, for a long chunk too' '
	git init -q long && (
		cd long &&
		{
			printf "/*\n * "
			i=0; while test $i -lt 1500; do printf "buffer "; i=$((i + 1)); done
			printf "\n * matrix multiply vector transpose\n */\nint f(int x)\n{\n\treturn x;\n}\n"
		} >long.c &&
		test $(wc -c <long.c) -gt 10000 &&
		git add . && git commit -q -m long &&
		ci-index --embed --model ci-code build &&
		ci-chunk | ci-embed --model ci-code | ci-index --index ../loaded.db load
	) &&
	sql="SELECT c.start_line, v.model, hex(v.vec) FROM vectors v JOIN chunks c ON c.id = v.chunk_id ORDER BY 1" &&
	"$CI_BUILD_DIR/tests/index-sql" long/.ci-index/index.db "$sql" >built &&
	"$CI_BUILD_DIR/tests/index-sql" loaded.db "$sql" >loaded &&
	test_line_count = 1 built &&
	test_cmp loaded built
'

if test -f "$CI_SRC_DIR/deps/model/use-lite/model.json"; then
	test_expect_success 'an index of use-lite stays with use-lite: update and queries (default ci-code)' '
		cp -R repo repo2 && rm -rf repo2/.ci-index &&
		(cd repo2 && ci-index --embed --model use-lite build) &&
		(cd repo2 && echo "# more" >>src/net.py && ci-index -v update 2>../err) &&
		test_grep "with use-lite" err &&
		(cd repo2 && ci-index status) >status &&
		"$JQ" -r .model status >actual &&
		echo use-lite >expect &&
		test_cmp expect actual &&
		(cd repo2 && ci-rank --mode semantic "multiply two square matrices") >hits &&
		"$JQ" -r "select(._type == \"hit\" and .signals.semantic > 0) | .name" hits | head -1 >actual &&
		echo matrix_multiply >expect &&
		test_cmp expect actual
	'
else
	test_skip 'an index of use-lite stays with use-lite' 'no USE-lite in deps/model (scripts/setup fetches it)'
fi

test_expect_success 'broken model files: a message naming the file, exit 3' '
	cp "$model.safetensors" bad.safetensors &&
	head -n 100 "$model.vocab" >bad.vocab &&
	{ ci-embed --model ./bad --query x 2>err; test $? = 3; } &&
	test_grep "bad.vocab: 100 words, but .*bad.safetensors. has" err &&
	{ head -c 1000 "$model.safetensors" >trunc.safetensors; cp "$model.vocab" trunc.vocab; } &&
	{ ci-embed --model ./trunc --query x 2>err; test $? = 3; } &&
	test_grep "trunc.safetensors" err &&
	{ sed "2s/.*/Not-A-Word/" "$model.vocab" >dup.vocab; cp "$model.safetensors" dup.safetensors; } &&
	{ ci-embed --model ./dup --query x 2>err; test $? = 3; } &&
	test_grep "dup.vocab:2: not a word" err &&
	for w in x 0 -; do
		LC_ALL=C sed "s/\"name_weight\":\"3\"/\"name_weight\":\"$w\"/" "$model.safetensors" >nw.safetensors &&
		cp "$model.vocab" nw.vocab &&
		{ ci-embed --model ./nw --query x 2>err; test $? = 3; } &&
		test_grep "nw.safetensors: metadata \"name_weight\" is .$w., not a number" err || return 1
	done
'

test_done
