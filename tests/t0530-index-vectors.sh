#!/bin/sh
# t0530-index-vectors: vectors in the index.
#
# `ci-index --embed build` embeds every chunk in-process with the vectors
# `ci-chunk | ci-embed | ci-index load` would store; an update embeds only what
# has no vector (after one edit: that file's chunks, counted with -v); vectors are
# stored as float32 or int8 with a scale (--vectors), readers (ci-rank) decode
# both and rank alike; status shows the model, the format and what lacks a
# vector; a build keeps the history of the index it replaces.

. "$(dirname "$0")/lib.sh"

vec_lib_what='ci-index vector tests'
. "$CI_SRC_DIR/tests/vec-lib.sh"

# vec_dump <db>: each chunk's vector, keyed by path and lines
vec_dump() {
	sqlite3 -bail "$1" "SELECT f.path, c.start_line, c.end_line, v.model, v.dim, v.fmt, hex(v.vec)
		FROM vectors v JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.blob_id = c.blob_id
		ORDER BY 1, 2, 3"
}

# field <name>: a field of `ci-index status` in repo
field() {
	(cd repo && ci-index status) | "$JQ" -c ".$1"
}

test_expect_success 'setup: a repository' '
	mkdir -p repo/src && (
		cd repo && git init -q &&
		cat >src/parse.c <<-\EOF &&
		/* Skip blanks and comments before the next token. */
		static void skip_blanks(struct parser *p)
		{
			while (isspace(p->text[p->pos]))
				p->pos++;
		}

		/* Read a number into the current token. */
		int parse_number(struct parser *p)
		{
			return strtol(p->text + p->pos, NULL, 10);
		}
		EOF
		cat >src/net.c <<-\EOF &&
		/* Open a TCP connection to the server and send the request. */
		int send_request(const char *host, int port)
		{
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			return connect_to(fd, host, port);
		}
		EOF
		cat >src/cache.c <<-\EOF &&
		/* Remove the least recently used entry when the cache is full. */
		void cache_evict(struct cache *c)
		{
			lru_drop_oldest(c);
		}
		EOF
		git add . && git commit -q -m "parser, network and cache"
	)
'

test_expect_success 'build --embed: every chunk gets the vector ci-embed gives it' '
	(cd repo && ci-index --embed build 2>../err) &&
	test_must_be_empty err &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".vectors == .chunks and .chunks > 3 and .chunks_without_vectors == 0" st &&
	"$JQ" -c "[.model, .vector_format]" st >actual &&
	echo "[\"use-lite\",\"f32\"]" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-chunk | ci-embed | ci-index --index ../piped.db load) &&
	vec_dump repo/.ci-index/index.db >inproc &&
	vec_dump piped.db >piped &&
	test_line_count -gt 3 inproc &&
	test_cmp piped inproc
'

test_expect_success 'an update after one edit embeds that file'"'"'s chunks only' '
	printf "\nint close_conn(int fd)\n{\n\treturn close(fd);\n}\n" >>repo/src/net.c &&
	(cd repo && ci-chunk src/net.c) | "$JQ" -c "select(._type == \"chunk\")" >net.chunks &&
	n=$(wc -l <net.chunks) &&
	test "$n" -ge 2 &&
	(cd repo && ci-index -v update 2>../err) &&
	test_grep "embedded $n chunks and 0 commits" err &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".chunks_without_vectors == 0" st
'

test_expect_success 'an update with nothing changed embeds nothing' '
	(cd repo && ci-index -v update 2>../err) &&
	! grep embedded err &&
	test_grep "0 re-read" err
'

test_expect_success 'a content seen before keeps its vectors: nothing is embedded again' '
	(cd repo && git stash -q && ci-index -v update 2>../err) &&
	! grep embedded err &&
	(cd repo && git stash pop -q && ci-index -v update 2>../err) &&
	! grep embedded err &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".chunks_without_vectors == 0" st
'

test_expect_success 'update embeds what a plain load left without vectors' '
	(cd repo && ci-index --index ../mixed.db --embed build) &&
	printf "int added(void)\n{\n\treturn 1;\n}\n" >repo/src/added.c &&
	(cd repo && ci-chunk src/added.c | ci-index --index ../mixed.db load) &&
	(cd repo && ci-index --index ../mixed.db status) >st &&
	"$JQ" -e ".chunks_without_vectors == 1" st &&
	(cd repo && ci-index --index ../mixed.db -v update 2>../err) &&
	test_grep "embedded 1 chunks" err &&
	(cd repo && ci-index --index ../mixed.db status) >st &&
	"$JQ" -e ".chunks_without_vectors == 0" st &&
	rm repo/src/added.c
'

test_expect_success '--vectors int8: a byte a value and a scale; kept for the next update' '
	(cd repo && ci-index --embed --vectors int8 build) &&
	sqlite3 repo/.ci-index/index.db "SELECT DISTINCT fmt, length(vec), scale > 0 FROM vectors" >actual &&
	echo "int8|512|1" >expect &&
	test_cmp expect actual &&
	field vector_format >actual &&
	echo "\"int8\"" >expect &&
	test_cmp expect actual &&
	echo "/* Retry once. */" >>repo/src/net.c &&
	(cd repo && ci-index update) &&
	sqlite3 repo/.ci-index/index.db "SELECT DISTINCT fmt FROM vectors" >actual &&
	echo int8 >expect &&
	test_cmp expect actual
'

test_expect_success 'int8 and f32 vectors rank alike (ci-rank decodes both)' '
	(cd repo && ci-index --index ../f32.db --embed build) &&
	(cd repo && ci-index --index ../int8.db --embed --vectors int8 build) &&
	for q in "open a network connection" "evict old cache entries" "read digits"; do
		(cd repo && ci-rank --index ../f32.db --mode semantic --limit 5 "$q") |
			"$JQ" -r "select(._type == \"hit\") | .path" >f32.hits &&
		(cd repo && ci-rank --index ../int8.db --mode semantic --limit 5 "$q") |
			"$JQ" -r "select(._type == \"hit\") | .path" >int8.hits &&
		test_line_count -gt 0 f32.hits &&
		test_cmp f32.hits int8.hits || return 1
	done &&
	(cd repo && ci-rank --index ../int8.db --mode semantic --limit 1 "evict old cache entries") |
		"$JQ" -r "select(._type == \"hit\") | .path" >actual &&
	echo src/cache.c >expect &&
	test_cmp expect actual
'

test_expect_success 'load --vectors int8 stores ci-embed'"'"'s float32 vectors as int8' '
	(cd repo && ci-chunk | ci-embed | ci-index --index ../loaded8.db --vectors int8 load) &&
	sqlite3 loaded8.db "SELECT DISTINCT fmt FROM vectors" >actual &&
	echo int8 >expect &&
	test_cmp expect actual &&
	(cd repo && ci-index --index ../loaded8.db status) | "$JQ" -c .vector_format >actual &&
	echo "\"int8\"" >expect &&
	test_cmp expect actual
'

test_expect_success 'vectors of another model: update warns and leaves them, --embed replaces them' '
	(cd repo && ci-index --embed build) &&
	sqlite3 repo/.ci-index/index.db "UPDATE vectors SET model = '"'"'other'"'"'" &&
	echo "/* again */" >>repo/src/cache.c &&
	(cd repo && ci-index update 2>../err) &&
	test_grep "vectors of model .other., not .use-lite.: not embedding" err &&
	field chunks_without_vectors >actual &&
	test "$(cat actual)" -gt 0 &&
	(cd repo && ci-index --embed update) &&
	sqlite3 repo/.ci-index/index.db "SELECT DISTINCT model FROM vectors" >actual &&
	echo use-lite >expect &&
	test_cmp expect actual &&
	field chunks_without_vectors >actual &&
	echo 0 >expect &&
	test_cmp expect actual
'

test_expect_success 'progress on stderr with --progress, none when stderr is not a terminal' '
	(cd repo && ci-index --embed build 2>../err) &&
	test_must_be_empty err &&
	(cd repo && ci-index drop && ci-index --progress --embed build 2>../err) &&
	test_grep "embedding .* texts" err
'

test_expect_success 'bad input: --vectors, a "vec" that is not base64 float32, a missing model' '
	(cd repo && test_status 2 ci-index --vectors f16 status) 2>err &&
	test_grep "expected f32 or int8" err &&
	printf "%s\n" "{\"_type\":\"commit\",\"sha\":\"abc\",\"time\":1,\"message\":\"m\",\"vec\":\"%%%%\"}" >bad &&
	(cd repo && test_status 3 ci-index --index ../bad.db load <../bad) 2>err &&
	test_grep "<stdin>:1: commit record has a .vec. that is not base64 of float32 values" err &&
	printf "%s\n" "{\"_type\":\"commit\",\"sha\":\"abc\",\"time\":1,\"message\":\"m\",\"vec\":\"AAAA\"}" >bad &&
	(cd repo && test_status 3 ci-index --index ../bad.db load <../bad) 2>err &&
	test_grep "not base64 of float32" err &&
	(cd repo && test_status 3 ci-index --index ../nomodel.db --model ../nowhere --embed build) 2>err &&
	test_grep "nowhere" err &&
	! test -e nomodel.db
'

test_expect_success 'commit vectors: ci-embed'"'"'s are loaded, load --embed adds the missing ones' '
	(cd repo && ci-index build) &&
	(cd repo && ci-couple history | ci-embed | ci-index load) &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".commits == 1 and .commit_vectors == 1 and .commits_without_vectors == 0" st &&
	(cd repo && ci-index --index ../hist.db build && ci-couple history | ci-index --index ../hist.db load) &&
	(cd repo && ci-index --index ../hist.db status) >st &&
	"$JQ" -e ".commit_vectors == 0 and .commits_without_vectors == 1" st &&
	(cd repo && ci-index --index ../hist.db --embed load </dev/null) &&
	(cd repo && ci-index --index ../hist.db status) >st &&
	"$JQ" -e ".commit_vectors == 1 and .commits_without_vectors == 0 and .chunks_without_vectors == 0" st
'

test_expect_success 'a build keeps the history and its vectors, and the vectors of chunks it makes again' '
	(cd repo && ci-index status) >before.st &&
	vec_dump repo/.ci-index/index.db >before.vec &&
	(cd repo && ci-index build) &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".commits == 1 and .commit_vectors == 1 and .vectors == .chunks and .chunks_without_vectors == 0" st &&
	"$JQ" -c "[.model, .vector_format]" before.st >expect &&
	"$JQ" -c "[.model, .vector_format]" st >actual &&
	test_cmp expect actual &&
	vec_dump repo/.ci-index/index.db >after.vec &&
	test_cmp before.vec after.vec
'

test_expect_success 'a build after an edit: only the edited file'"'"'s new chunks lack vectors, update embeds them' '
	printf "\nint open_conn(const char *host)\n{\n\treturn connect_to(host);\n}\n" >>repo/src/net.c &&
	(cd repo && ci-index build) &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".chunks_without_vectors > 0 and .vectors > 0" st &&
	sqlite3 repo/.ci-index/index.db "SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.blob_id = c.blob_id
		WHERE c.id NOT IN (SELECT chunk_id FROM vectors)" >missing &&
	echo src/net.c >expect && test_cmp expect missing &&
	n=$("$JQ" .chunks_without_vectors st) &&
	(cd repo && ci-index -v update 2>../err) &&
	test_grep "embedded $n chunks and 0 commits" err &&
	(cd repo && ci-index status) | "$JQ" -e ".chunks_without_vectors == 0"
'

test_done
