#!/bin/sh
# t0565-index-embed-resume: an interrupted embedding keeps what it embedded.
#
# `build --embed` and `update --embed` embed in batches committed one by one
# (CI_INDEX_EMBED_BATCH texts a batch; the test hook
# CI_INDEX_EMBED_CRASH_AFTER raises CI_INDEX_CRASH_SIGNAL once that many
# texts are embedded, before their batch's commit).  After SIGINT or SIGKILL
# the batches committed stay; the index says vectors are missing
# ("embedding_incomplete":true, chunks_without_vectors) and never claims to be
# up to date ("updated" is not moved: null after a first build, the previous
# update's after an update); the next plain update embeds only the missing
# texts (counted with -v) and the vectors are those of an uninterrupted run.
# ("vectors" counts those of contents no file has any more too: an update
# keeps them until they outnumber the live ones.)

. "$(dirname "$0")/lib.sh"

vec_lib_what='ci-index embedding resume tests'
. "$CI_SRC_DIR/tests/vec-lib.sh"

# the hook's SIGINT through env $default_int (tests/lib.sh)

# state: the status fields that tell how far embedding got
state() {
	(cd repo && ci-index status) | "$JQ" -c "{chunks, vectors, chunks_without_vectors, embedding_incomplete}"
}

# vec_dump <db>: each chunk's vector, keyed by path and lines
vec_dump() {
	sqlite3 -bail "$1" "SELECT f.path, c.start_line, v.model, v.fmt, hex(v.vec)
		FROM vectors v JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.blob_id = c.blob_id
		ORDER BY 1, 2"
}

test_expect_success 'setup: 3 files of 10 handlers, and their vectors embedded in one go' '
	handlers_repo 3 &&
	cp -R repo whole &&
	(cd whole && ci-index --embed build) &&
	vec_dump whole/.ci-index/index.db >whole.vec &&
	test_line_count = 32 whole.vec
'

test_expect_success 'SIGINT during build --embed: the batches committed are kept, nothing claims completeness' '
	(cd repo && test_status 130 env $default_int CI_INDEX_EMBED_BATCH=4 CI_INDEX_EMBED_CRASH_AFTER=10 \
		CI_INDEX_CRASH_SIGNAL=INT ci-index --embed build) &&
	echo "{\"chunks\":32,\"vectors\":8,\"chunks_without_vectors\":24,\"embedding_incomplete\":true}" >expect &&
	state >actual &&
	test_cmp expect actual &&
	(cd repo && ci-index status) | "$JQ" -e ".updated == null and .created != null" &&
	test ! -e repo/.ci-index/index.db.new
'

test_expect_success 'the next update embeds only the 24 missing, and the vectors are an uninterrupted run'\''s' '
	(cd repo && ci-index -v update 2>../err) &&
	test_grep "embedded 24 chunks and 0 commits" err &&
	echo "{\"chunks\":32,\"vectors\":32,\"chunks_without_vectors\":0,\"embedding_incomplete\":false}" >expect &&
	state >actual &&
	test_cmp expect actual &&
	(cd repo && ci-index status) | "$JQ" -e ".updated != null" &&
	vec_dump repo/.ci-index/index.db >repo.vec &&
	test_cmp whole.vec repo.vec
'

test_expect_success 'SIGKILL during update: the files and the batches before it kept, "updated" not moved' '
	(cd repo && ci-index status) | "$JQ" -r .updated >updated.before &&
	sleep 1 &&
	for f in 0 1 2; do sed -i "s/return respond/return answer/" repo/h$f.py || return 1; done &&
	(cd repo && test_status 137 env CI_INDEX_EMBED_BATCH=5 CI_INDEX_EMBED_CRASH_AFTER=12 \
		ci-index update) &&
	echo "{\"chunks\":32,\"vectors\":42,\"chunks_without_vectors\":20,\"embedding_incomplete\":true}" >expect &&
	state >actual &&
	test_cmp expect actual &&
	(cd repo && ci-index status) | "$JQ" -r .updated >updated.after &&
	test_cmp updated.before updated.after &&
	(cd repo && ci-index status) | "$JQ" -e ".stale == 0"
'

test_expect_success 'and the update after it embeds the 20 left, none twice' '
	(cd repo && ci-index -v update 2>../err) &&
	test_grep "embedded 20 chunks and 0 commits" err &&
	test_grep "4 unchanged, 0 re-read" err &&
	echo "{\"chunks\":32,\"vectors\":62,\"chunks_without_vectors\":0,\"embedding_incomplete\":false}" >expect &&
	state >actual &&
	test_cmp expect actual &&
	(cd whole && for f in 0 1 2; do sed -i "s/return respond/return answer/" h$f.py || return 1; done &&
	 ci-index update) &&
	vec_dump whole/.ci-index/index.db >whole.vec &&
	vec_dump repo/.ci-index/index.db >repo.vec &&
	test_cmp whole.vec repo.vec
'

test_expect_success 'CI_INDEX_EMBED_BATCH is checked' '
	(cd repo && test_status 2 env CI_INDEX_EMBED_BATCH=0 ci-index --embed update 2>../err) &&
	test_grep "CI_INDEX_EMBED_BATCH: expected an integer from 1 to 1000000, got '\''0'\''" err
'

test_done
