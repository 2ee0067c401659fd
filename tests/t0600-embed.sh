#!/bin/sh
# t0600-embed: ci-embed against the reference, and its record stream.
#
# The golden vectors (tests/golden/ci-embed/vectors.jsonl) were computed by the
# reference implementation, @energetic-ai/embeddings in TF.js
# (scripts/golden-embeddings.sh); each must come out of ci-embed --query with a
# cosine of at least 0.999, and so must the same texts embedded in one batch.
# Then: records pass through in order and untouched but for the two keys, the
# static mode, and the failure paths (model missing or truncated, malformed input,
# usage errors, a full disk).  Vectors are compared with tests/vec-tool.

. "$(dirname "$0")/lib.sh"

golden=$CI_SRC_DIR/tests/golden/ci-embed
vec_tool=$CI_BUILD_DIR/tests/vec-tool

# the model: $CI_MODEL, else the one scripts/setup fetched into the build tree
need_model 'ci-embed tests'

# cosines <a> <b>: every cosine of line i of a with line i of b is at least $3
cosines_at_least() {
	"$vec_tool" cos "$1" "$2" >cos.out 2>&7 &&
	awk -v min="$3" '{ if ($1 < min) { bad = 1; print "line " NR ": cosine " $1 " < " min } }
		END { exit bad }' cos.out >&7
}

# ---- the reference ------------------------------------------------------------------

test_expect_success 'the golden vectors of the reference, by --query' '
	n=$(wc -l <"$golden/vectors.jsonl") &&
	i=1 &&
	: >got &&
	while test $i -le $n; do
		t=$(sed -n "${i}p" "$golden/vectors.jsonl" | "$JQ" -j .text; printf x) &&
		t=${t%x} &&
		ci-embed --query "$t" >>got || return 1
		i=$((i + 1))
	done &&
	test_line_count = $n got &&
	cosines_at_least "$golden/vectors.jsonl" got 0.999
'

test_expect_success 'the golden vectors in one batch, as chunk text' '
	# white space is squeezed in chunk text: only the texts it leaves alone
	"$JQ" -c "select(.text | test(\"\\\\s\\\\s|[\\\\t\\\\n]|^\\\\s|\\\\s\$\") | not)" \
		"$golden/vectors.jsonl" >plain &&
	test $(wc -l <plain) -ge 10 &&
	"$JQ" -c "{_type: \"chunk\", path: \"x\", text}" plain >in &&
	ci-embed --fields text <in >out &&
	cosines_at_least plain out 0.999
'

test_expect_success 'one thread or two, batches of 1 or 5: the same vectors' '
	"$JQ" -c "{_type: \"chunk\", path: \"x\", text}" "$golden/vectors.jsonl" >in &&
	ci-embed -j 1 <in >one &&
	ci-embed -j 2 <in >two &&
	test_cmp one two &&
	ci-embed -j 2 --batch 1 <in >b1 &&
	ci-embed -j 2 --batch 5 <in >b5 &&
	cosines_at_least b1 b5 0.99999
'

# ---- the record stream ----------------------------------------------------------------

test_expect_success 'setup: a stream of records' '
	cat >stream <<-\EOF
	{"_type":"file","path":"src/a.c","lang":"c","size":80,"lines":9}
	{"_type":"chunk","id":"x:1-4","path":"src/a.c","lang":"c","kind":"function","name":"skip_blanks","scope":null,"start_line":1,"end_line":4,"signature":"static void skip_blanks(struct parser *p)","text":"/* Skip blanks. */\nstatic void skip_blanks(struct parser *p)\n{\n\twhile (isspace(p->text[p->pos]))\n\t\tp->pos++;\n}\n"}
	{"_type":"def","name":"skip_blanks","kind":"function","path":"src/a.c","line":2,"col":13}
	{"_type":"something-new", "spacing" : [1, 2 ,3], "unicode": "caf\u00e9 \u6771\u4eac"}
	{"_type":"chunk","path":"README.md","lang":"markdown","kind":"section","name":"Use","text":"## Use\n\nRun main with a file name.\n"}
	{"_type":"chunk","path":"empty","text":""}
	{"_type":"chunk","path":"no-text"}
	EOF
	ci-embed <stream >out &&
	test_line_count = 7 out
'

test_expect_success 'other records pass through untouched, in order' '
	sed -n "1p;3p;4p" stream >expect &&
	sed -n "1p;3p;4p" out >actual &&
	test_cmp expect actual
'

test_expect_success 'chunk records keep every key and gain "vec" and "model"' '
	grep "\"_type\":\"chunk\"" stream >chunks &&
	grep "\"_type\":\"chunk\"" out >embedded &&
	"$JQ" -c "del(.vec, .model)" embedded >stripped &&
	test_cmp_json chunks stripped &&
	"$JQ" -r "[.model, (.vec | length)] | @tsv" embedded >models &&
	printf "use-lite\t2732\n" >one &&
	cat one one one one >expect &&
	test_cmp expect models
'

test_expect_success 'the vectors are unit vectors of 512 dimensions' '
	grep "\"_type\":\"chunk\"" out >embedded &&
	"$vec_tool" norm embedded >norms &&
	awk "{ if (\$1 < 0.9999 || \$1 > 1.0001) exit 1 }" norms
'

test_expect_success 'a chunk embedded again gets new keys, not a second "vec"' '
	sed -n 2p out >again &&
	ci-embed <again >twice &&
	"$JQ" -r "keys_unsorted | map(select(. == \"vec\" or . == \"model\")) | join(\",\")" twice >keys &&
	echo vec,model >expect &&
	test_cmp expect keys &&
	"$vec_tool" cos again twice >cos &&
	awk "{ exit !(\$1 > 0.9999) }" cos
'

test_expect_success 'commit records gain the vector of their message, as --query gives it' '
	cat >commits <<-\EOF &&
	{"_type":"commit","sha":"1111111111111111111111111111111111111111","time":1700000000,"message":"fix crash when the configuration file is missing","files":["a.c"]}
	{"_type":"commit","sha":"2222222222222222222222222222222222222222","time":1700000001,"files":["b.c"]}
	{"_type":"history","head":"1111111111111111111111111111111111111111"}
	EOF
	ci-embed <commits >out.commits &&
	sed -n "2,3p" commits >expect &&
	sed -n "2,3p" out.commits >actual &&
	test_cmp expect actual &&
	sed -n 1p out.commits >embedded &&
	"$JQ" -c "del(.vec, .model)" embedded >stripped &&
	sed -n 1p commits >expect &&
	test_cmp_json expect stripped &&
	"$JQ" -r .model embedded >actual &&
	echo use-lite >expect &&
	test_cmp expect actual &&
	ci-embed --query "fix crash when the configuration file is missing" >q &&
	cosines_at_least q embedded 0.99999
'

test_expect_success 'CRLF lines are read, and the output is JSON' '
	sed "s/\$/\r/" stream >crlf &&
	ci-embed <crlf >out.crlf &&
	"$JQ" -c . out.crlf >/dev/null &&
	test_line_count = 7 out.crlf
'

test_expect_success 'empty input: no output, exit 0' '
	ci-embed </dev/null >out.empty &&
	test_must_be_empty out.empty
'

test_expect_success 'a long chunk: only its first 128 tokens are read' '
	awk "BEGIN { printf \"{\\\"_type\\\":\\\"chunk\\\",\\\"path\\\":\\\"big\\\",\\\"text\\\":\\\"\"; for (i = 0; i < 50000; i++) printf \"word%d \", i; print \"\\\"}\" }" >big &&
	ci-embed -v <big >out.big 2>err &&
	test_grep "1 chunks, 128 tokens" err &&
	ci-embed -v --fields text --max-tokens 7 <big >out.big 2>err &&
	test_grep "1 chunks, 7 tokens" err
'

# ---- --query ---------------------------------------------------------------------------

test_expect_success '--query prints one query record' '
	ci-embed --query "skip white space" >q &&
	test_line_count = 1 q &&
	"$JQ" -r "[._type, .text, .model, (.vec | length)] | @tsv" q >actual &&
	printf "query\tskip white space\tuse-lite\t2732\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'meaning: a paraphrase is closer than an unrelated text' '
	ci-embed --query "read the whole file into memory" >a &&
	ci-embed --query "load all the bytes of a file into a buffer" >b &&
	ci-embed --query "the cat sat on the mat in the sun" >c &&
	"$vec_tool" cos a b >ab &&
	"$vec_tool" cos a c >ac &&
	test "$(cat ab)" ">" "$(cat ac)"
'

# ---- --static --------------------------------------------------------------------------

test_expect_success '--static: unit vectors, model use-lite-static' '
	ci-embed --static <stream >sout &&
	test_line_count = 7 sout &&
	grep "\"_type\":\"chunk\"" sout >sembedded &&
	"$JQ" -r .model sembedded | sort -u >models &&
	echo use-lite-static >expect &&
	test_cmp expect models &&
	"$vec_tool" norm sembedded >norms &&
	awk "{ if (\$1 < 0.9999 || \$1 > 1.0001) exit 1 }" norms
'

test_expect_success '--static: a paraphrase is closer than an unrelated text' '
	for t in "read the whole file into memory" \
		"load all the bytes of a file into a buffer" \
		"the cat sat on the mat in the sun"; do
		ci-embed --static --query "$t" || return 1
	done >s3 &&
	sed -n 1p s3 >a && sed -n 2p s3 >b && sed -n 3p s3 >c &&
	"$vec_tool" cos a b >ab &&
	"$vec_tool" cos a c >ac &&
	test "$(cat ab)" ">" "$(cat ac)"
'

test_expect_success '--static: the table is kept in the cache for the next run' '
	ls "$HOME"/.cache/ci/use-lite-static-*.bin >cached &&
	test_line_count = 1 cached &&
	ci-embed -v --static --query x >/dev/null 2>err &&
	test_grep "static table read from" err
'

test_expect_success '--static: a cache file of another model is not read' '
	f=$(cat cached) &&
	printf "CISTATIC garbage" >"$f" &&
	ci-embed -v --static --query x >/dev/null 2>err &&
	test_grep "static table distilled" err
'

test_expect_success 'the weight manifest of model.json is kept in the cache; a damaged one is written anew' '
	ci-embed --query "open the file" >v1 &&
	ls "$HOME"/.cache/ci/use-manifest-*.json >manifest &&
	test_line_count = 1 manifest &&
	f=$(cat manifest) &&
	"$JQ" -c "keys" "$f" >actual &&
	echo "[\"weightsManifest\"]" >expect &&
	test_cmp expect actual &&
	"$JQ" -c ".weightsManifest" "$model/model.json" >expect &&
	"$JQ" -c ".weightsManifest" "$f" >actual &&
	test_cmp expect actual &&
	ci-embed --query "open the file" >v2 &&
	test_cmp v1 v2 &&
	for bad in "{" "{\"weightsManifest\":[]}" "[]"; do
		printf "%s" "$bad" >"$f" &&
		ci-embed --query "open the file" >v3 &&
		test_cmp v1 v3 &&
		"$JQ" -c ".weightsManifest" "$f" >actual &&
		test_cmp expect actual || return 1
	done
'

# ---- failures --------------------------------------------------------------------------------

test_expect_success 'a missing model directory is an error naming it' '
	test_status 3 ci-embed --model "$TRASH_DIRECTORY/no-such-model" --query x >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-embed: .*no-such-model/model.json" err
'

test_expect_success 'setup: a model with a truncated shard' '
	mkdir bad &&
	for f in "$model"/model.json "$model"/vocab.json "$model"/group*-shard*; do
		ln -s "$f" bad/ || return 1
	done &&
	last=$(ls bad | grep shard | tail -n 1) &&
	rm "bad/$last" &&
	head -c 1000 "$model/$last" >"bad/$last"
'

test_expect_success 'a truncated shard is an error naming it' '
	test_status 3 ci-embed --model bad --query x >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-embed: .*$last.* is truncated" err
'

test_expect_success 'a missing shard is an error naming it' '
	rm "bad/$last" &&
	test_status 3 ci-embed --model bad <stream >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-embed: cannot open .*$last" err
'

test_expect_success 'a model.json of another model is an error' '
	mkdir other &&
	ln -s "$model/vocab.json" other/ &&
	echo "{\"modelTopology\":{},\"weightsManifest\":[{\"paths\":[],\"weights\":[]}]}" >other/model.json &&
	test_status 3 ci-embed --model other --query x 2>err &&
	test_grep "^ci-embed: other/model.json" err
'

test_expect_success 'a malformed record: the records before it, then exit 3 with its line' '
	sed -n 1,3p stream >bad-stream &&
	echo "{\"_type\":\"chunk\",\"text\":" >>bad-stream &&
	sed -n 5p stream >>bad-stream &&
	test_status 3 ci-embed <bad-stream >out 2>err &&
	test_grep "^ci-embed: <stdin>:4:" err &&
	test_line_count = 3 out
'

test_expect_success 'a chunk whose text is not a string is malformed' '
	echo "{\"_type\":\"chunk\",\"text\":42}" >bad-text &&
	test_status 3 ci-embed <bad-text >out 2>err &&
	test_grep "^ci-embed: <stdin>:1: .*\"text\"" err
'

test_expect_success 'a chunk without text: a warning naming it, embedded from its other fields' '
	printf "{\"_type\":\"chunk\",\"id\":\"a\",\"path\":\"x.c\"}\n{\"_type\":\"chunk\",\"id\":\"b\",\"text\":\"int x;\"}\n" >no-text &&
	ci-embed <no-text >out 2>err &&
	test_grep "^ci-embed: warning: <stdin>:1: a chunk record without \"text\": embedded from its other fields$" err &&
	test_line_count = 1 err &&
	"$JQ" -c "[.id, has(\"vec\")]" out >actual &&
	printf "[\"a\",true]\n[\"b\",true]\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'invalid UTF-8 in a record is malformed' '
	printf "{\"_type\":\"chunk\",\"text\":\"\\377\"}\n" >bad-utf8 &&
	test_status 3 ci-embed <bad-utf8 >out 2>err &&
	test_grep "^ci-embed: <stdin>:1:" err
'

test_expect_success 'a record that is not an object is malformed' '
	echo "[1,2]" >bad-array &&
	test_status 3 ci-embed <bad-array 2>err &&
	test_grep "^ci-embed: <stdin>:1:" err
'

test_expect_success 'usage errors: exit 2, nothing read' '
	test_status 2 ci-embed --fields path,bogus </dev/null 2>err &&
	test_grep "unknown field .bogus." err &&
	test_status 2 ci-embed --batch 0 </dev/null 2>err &&
	test_grep "batch" err &&
	test_status 2 ci-embed -j 0 </dev/null 2>err &&
	test_status 2 ci-embed extra </dev/null 2>err &&
	test_grep "unexpected argument" err
'

test_expect_success 'a full disk is exit 3' '
	test_status 3 ci-embed <stream >/dev/full 2>err &&
	test_grep "^ci-embed: " err
'

test_expect_success 'a closed pipe ends it quietly' '
	cat stream stream stream stream >many &&
	ci-embed <many 2>err | head -n 1 >first &&
	test_line_count = 1 first
'

test_done
