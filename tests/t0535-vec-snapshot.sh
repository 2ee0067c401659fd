#!/bin/sh
# t0535-vec-snapshot: the contiguous copy of the chunk vectors beside the index.
#
# ci-index writes <index>.vec (libcommon/index/vecsnap.h) when vectors arrive, names
# it in meta (vec_snapshot), lists in vec_changed the chunks whose vector
# changed since, and writes it anew only when those grow past an eighth of the
# vectors.  ci-rank's semantic signal reads the snapshot plus the changed rows,
# and the vectors table alone when the snapshot is missing, stale or damaged:
# every answer here is compared with the one the vectors table alone gives.

. "$(dirname "$0")/lib.sh"

vec_lib_what='vector snapshot tests'
. "$CI_SRC_DIR/tests/vec-lib.sh"

db=repo/.ci-index/index.db

# token: the snapshot the index names
token() {
	sqlite3 "$db" "SELECT value FROM meta WHERE key = 'vec_snapshot'"
}

changed() {
	sqlite3 "$db" "SELECT count(*) FROM vec_changed"
}

# file_token: the token written in the snapshot file (after the 8-byte magic)
file_token() {
	dd if="$db.vec" bs=1 skip=8 count=32 2>/dev/null
}

queries="parse the number in the text|close the connection|evict the oldest entry|handler for item 7|retry after a delay"

# ranks <out>: the semantic answers to every query, with scores; where the
# vectors were read (the summary's "vectors") goes to <out>.from
ranks() {
	(
		IFS='|'
		for q in $queries; do
			(cd repo && ci-rank --mode semantic --explain --per-file 40 --limit 40 "$q") || exit 1
		done
	) >"$1.raw" &&
	"$JQ" -c "del(.vectors)" "$1.raw" >"$1" &&
	"$JQ" -c "select(._type == \"summary\") | .vectors" "$1.raw" | sort -u >"$1.from"
}

# from <out> <snapshot> <table>: every query read that many vectors from each
from() {
	echo "{\"snapshot\":$2,\"table\":$3}" >from.expect &&
	test_cmp from.expect "$1.from"
}

# same_as_table: the answers equal those read from the vectors table alone
same_as_table() {
	ranks with-snapshot &&
	mv "$db.vec" snapshot.saved &&
	ranks table-only &&
	mv snapshot.saved "$db.vec" &&
	test_line_count -gt 20 with-snapshot &&
	test_cmp table-only with-snapshot &&
	n=$(sqlite3 "$db" "SELECT count(*) FROM vectors") &&
	c=$(sqlite3 "$db" "SELECT count(*) FROM vec_changed c JOIN vectors v USING (chunk_id)") &&
	from table-only 0 $n &&
	from with-snapshot $((n - c)) $c
}

test_expect_success 'setup: a repository of 20 files of 10 functions' '
	handlers_repo 20
'

test_expect_success 'build --embed writes the snapshot and names it' '
	(cd repo && ci-index --embed build 2>../err) &&
	test_must_be_empty err &&
	test -f "$db.vec" &&
	token >t1 &&
	test_line_count = 1 t1 &&
	file_token >t1.file &&
	echo >>t1.file &&
	test_cmp t1 t1.file &&
	echo 0 >expect &&
	changed >actual &&
	test_cmp expect actual &&
	n=$(sqlite3 "$db" "SELECT count(*) FROM vectors") &&
	test "$n" -ge 200 &&
	(cd repo && ci-index status) | "$JQ" -c .vector_snapshot >actual &&
	echo "{\"current\":true,\"vectors\":$n,\"changed_since\":0}" >expect &&
	test_cmp expect actual &&
	size=$(wc -c <"$db.vec") &&
	# the head, int8 rows, ids, float32 rows, the signs of the int8 rows
	test "$size" -eq $((256 + n * 512 + n * 8 + n * 2048 + n * 64))
'

test_expect_success 'the snapshot answers as the vectors table does' '
	same_as_table
'

test_expect_success 'an edit: the snapshot stays, the changed chunks are read from the table' '
	printf "\n\ndef reconnect(sock):\n    \"\"\"Retry after a delay, then open the connection again.\"\"\"\n    return sock\n" >>repo/net.py &&
	(cd repo && ci-index update) &&
	token >t2 &&
	test_cmp t1 t2 &&
	test "$(changed)" -gt 0 &&
	(cd repo && ci-index status) | "$JQ" -e ".vector_snapshot.current and .vector_snapshot.changed_since == $(changed)" &&
	same_as_table &&
	grep -q reconnect with-snapshot
'

test_expect_success 'a deleted file: its chunks are gone from the answers' '
	grep -q "\"path\":\"h7.py\"" with-snapshot &&
	git -C repo rm -q h7.py &&
	(cd repo && ci-index update) &&
	test_cmp t1 t2 &&
	same_as_table &&
	! grep -q "\"path\":\"h7.py\"" with-snapshot
'

test_expect_success 'many changes: the snapshot is written anew' '
	for f in 0 1 2 3 4; do
		sed -i "s/item/entry/" repo/h$f.py || return 1
	done &&
	(cd repo && ci-index update) &&
	token >t3 &&
	! test_cmp t1 t3 >/dev/null &&
	file_token >t3.file &&
	echo >>t3.file &&
	test_cmp t3 t3.file &&
	echo 0 >expect &&
	changed >actual &&
	test_cmp expect actual &&
	same_as_table
'

test_expect_success 'a snapshot the index does not name is not read; the next write replaces it' '
	ranks before &&
	sqlite3 "$db" "UPDATE meta SET value = '"'"'0123456789abcdef0123456789abcdef'"'"' WHERE key = '"'"'vec_snapshot'"'"'" &&
	ranks stale &&
	test_cmp before stale &&
	(cd repo && ci-index status) | "$JQ" -e ".vector_snapshot == {current: false, vectors: 0, changed_since: 0}" &&
	from stale 0 $(sqlite3 "$db" "SELECT count(*) FROM vectors") &&
	(cd repo && ci-index update) &&
	token >t4 &&
	file_token >t4.file &&
	echo >>t4.file &&
	test_cmp t4 t4.file &&
	! test_cmp t3 t4 >/dev/null
'

test_expect_success 'a damaged snapshot is not read: cut short, its head overwritten, empty' '
	ranks good &&
	cp "$db.vec" vec.saved &&
	head -c 10000 vec.saved >"$db.vec" &&
	ranks cut &&
	test_cmp good cut &&
	from cut 0 $(sqlite3 "$db" "SELECT count(*) FROM vectors") &&
	{ head -c 100 vec.saved && head -c 150 /dev/zero && tail -c +251 vec.saved; } >"$db.vec" &&
	test_cmp_size() { test $(wc -c <"$1") = $(wc -c <"$2"); } &&
	test_cmp_size vec.saved "$db.vec" &&
	ranks zeroed &&
	test_cmp good zeroed &&
	: >"$db.vec" &&
	ranks empty &&
	test_cmp good empty &&
	cp vec.saved "$db.vec" &&
	ranks again &&
	test_cmp good again
'

test_expect_success 'a snapshot of version 3 (no signs) is not read; the next update writes it anew' '
	ranks good &&
	cp "$db.vec" vec.saved &&
	{ printf "PNSCVEC3" && tail -c +9 vec.saved; } >"$db.vec" &&
	(cd repo && ci-index status) | "$JQ" -e ".vector_snapshot.current == false" &&
	ranks old &&
	test_cmp good old &&
	from old 0 $(sqlite3 "$db" "SELECT count(*) FROM vectors") &&
	(cd repo && ci-index update) &&
	(cd repo && ci-index status) | "$JQ" -e ".vector_snapshot.current == true" &&
	head -c 8 "$db.vec" >magic &&
	printf "PNSCVEC4" >expect &&
	test_cmp expect magic &&
	ranks new &&
	test_cmp good new
'

test_expect_success 'no vectors left: no snapshot' '
	(cd repo && ci-index --index ../plain.db build) &&
	! test -e plain.db.vec &&
	(cd repo && ci-index --index ../plain.db status) | "$JQ" -e ".vector_snapshot == null" &&
	cp "$db.vec" plain.db.vec &&
	(cd repo && ci-index --index ../plain.db build) &&
	! test -e plain.db.vec
'

test_expect_success 'load of vectors from ci-embed writes the snapshot' '
	(cd repo && ci-chunk | ci-embed | ci-index --index ../piped.db load) &&
	test -f piped.db.vec &&
	sqlite3 piped.db "SELECT value FROM meta WHERE key = '"'"'vec_snapshot'"'"'" >t5 &&
	dd if=piped.db.vec bs=1 skip=8 count=32 2>/dev/null >t5.file &&
	echo >>t5.file &&
	test_cmp t5 t5.file
'

test_expect_success 'vectors of two formats for one model: no snapshot, the table answers' '
	(cd repo && ci-index --index ../two.db --embed build) &&
	test -f two.db.vec &&
	sqlite3 two.db "UPDATE vectors SET fmt = '"'"'int8'"'"', vec = substr(vec, 1, 512), scale = 0.01 WHERE chunk_id IN (SELECT chunk_id FROM vectors ORDER BY chunk_id LIMIT 100)" &&
	(cd repo && ci-index --index ../two.db update) &&
	! test -e two.db.vec &&
	echo - >expect &&
	sqlite3 two.db "SELECT value FROM meta WHERE key = '"'"'vec_snapshot'"'"'" >actual &&
	test_cmp expect actual &&
	(cd repo && ci-rank --index ../two.db --mode semantic "close the connection") >out &&
	"$JQ" -s -e "map(select(._type == \"hit\")) | length > 0" out >/dev/null
'

test_expect_success 'a vector of the wrong length: a warning naming its chunk, no snapshot, the table answers' '
	(cd repo && ci-index --index ../short.db --embed build) &&
	id=$(sqlite3 short.db "SELECT min(chunk_id) FROM vectors") &&
	sqlite3 short.db "UPDATE vectors SET vec = substr(vec, 1, 100) WHERE chunk_id = $id" &&
	rm short.db.vec &&
	(cd repo && ci-index --index ../short.db update 2>../err) &&
	test_grep "the vector of chunk $id is not 512 f32 values: no vector snapshot" err &&
	! test -e short.db.vec &&
	(cd repo && ci-index --index ../short.db status) | "$JQ" -e ".vector_snapshot.current == false" &&
	(cd repo && ci-rank --index ../short.db --mode semantic --explain "close the connection") >out &&
	"$JQ" -s -e "map(select(._type == \"hit\")) | length > 0" out >/dev/null &&
	"$JQ" -e "select(._type == \"summary\") | .vectors.snapshot == 0" out
'

test_expect_success 'an index of schema version 5 (trigrams by blob): readers say build, update rebuilds it' '
	(cd repo && ci-index --index ../v5.db --embed build) &&
	sqlite3 v5.db "UPDATE meta SET value = '"'"'5'"'"' WHERE key = '"'"'schema_version'"'"'" &&
	(cd repo && test_status 3 ci-rank --index ../v5.db --mode semantic "close the connection" 2>../err) &&
	test_grep "schema version 5, this ci reads version 9: run .ci-index build." err &&
	(cd repo && ci-grep --index ../v5.db -c connection 2>../err) >out &&
	test_grep "schema version 5, this ci reads version 9" err &&
	test_grep "searching without the index" err &&
	(cd repo && ci-grep --no-index -c connection) >expect &&
	test_cmp expect out &&
	(cd repo && ci-index --index ../v5.db update 2>../err) &&
	test_grep "rebuilding" err &&
	(cd repo && ci-index --index ../v5.db status) | "$JQ" -e ".schema_version == 9" &&
	(cd repo && ci-rank --index ../v5.db --mode keyword "close the connection" 2>../err) >out &&
	test_must_be_empty err &&
	"$JQ" -s -e "map(select(._type == \"hit\")) | length > 0" out >/dev/null
'

test_expect_success 'more vectors than are scored again (1,000): float32 and int8 answer as the table does' '
	git init -q wide && (
		cd wide &&
		awk "BEGIN { for (i = 0; i < 1300; i++) printf \"def handler_%d(request):\\n    return respond(request, %d, \\\"item %d of the queue\\\")\\n\\n\\n\", i, i * 7 % 13, i }" >big.py &&
		git add . && git commit -qm wide &&
		ci-chunk | ci-embed >../wide.nd
	) &&
	for f in f32 int8; do
		(cd wide && ci-index --index ../wide-$f.db --vectors $f load <../wide.nd) &&
		test -f wide-$f.db.vec &&
		for q in "respond to the request with item 7" "the queue" "handler 1200"; do
			(cd wide && ci-rank --index ../wide-$f.db --mode semantic --explain --per-file 40 --limit 40 "$q") >snap.raw &&
			mv wide-$f.db.vec wide.vec.saved &&
			(cd wide && ci-rank --index ../wide-$f.db --mode semantic --explain --per-file 40 --limit 40 "$q") >table.raw &&
			mv wide.vec.saved wide-$f.db.vec &&
			"$JQ" -c "del(.vectors)" snap.raw >snap &&
			"$JQ" -c "del(.vectors)" table.raw >table &&
			test_line_count = 41 snap &&
			test_cmp table snap &&
			"$JQ" -e "select(._type == \"summary\") | .vectors.snapshot == 1300" snap.raw >/dev/null || return 1
		done
	done
'

test_expect_success 'similar reads the snapshot too: the same neighbours as from the table' '
	for f in f32 int8; do
		for t in "the queue of requests" big.py:handler_77; do
			(cd wide && ci-rank --index ../wide-$f.db similar --limit 30 "$t") >snap &&
			mv wide-$f.db.vec wide.vec.saved &&
			(cd wide && ci-rank --index ../wide-$f.db similar --limit 30 "$t") >table &&
			mv wide.vec.saved wide-$f.db.vec &&
			test_line_count = 31 snap &&
			# the same chunks with the same cosines, give or take the
			# rounding of BLIS (the table) and of int8 sums (the snapshot)
			"$JQ" -n -e --slurpfile s snap --slurpfile t table "
				(\$s | map(select(._type == \"hit\")) | map({(.name): .score}) | add) as \$score |
				\$t | map(select(._type == \"hit\")) | length == 30 and
				all(\$score[.name] != null and ((\$score[.name] - .score) | fabs) <= 0.001)" >/dev/null ||
			return 1
		done
	done
'

test_expect_success 'drop removes the snapshot' '
	(cd repo && ci-index drop) &&
	! test -e "$db" &&
	! test -e "$db.vec"
'

test_done
