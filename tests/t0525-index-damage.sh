#!/bin/sh
# t0525-index-damage: a damaged index is never read as if it were whole.
#
# A page of the index is overwritten with garbage (the root page of one table
# or index, found in sqlite_schema).  Every command that reads that page must
# stop with exit 3 and a message naming the index and saying to run ci-index
# build, writing no partial answer; `ci-index update` checks the whole index
# (PRAGMA quick_check) and rebuilds it, even when the damage is in a page that
# no update reads.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# damage <db> <name>: overwrite the root page of table or index <name> of db
# with 0xa5 bytes
damage() {
	damage_page_=$(sqlite3 "$1" "SELECT rootpage FROM sqlite_schema WHERE name = '$2'") &&
	damage_size_=$(sqlite3 "$1" "PRAGMA page_size") &&
	test -n "$damage_page_" && test "$damage_page_" -gt 1 &&
	head -c "$damage_size_" /dev/zero | tr '\0' '\245' >"$TEST_TMP/garbage" &&
	dd if="$TEST_TMP/garbage" of="$1" bs="$damage_size_" seek=$((damage_page_ - 1)) \
		conv=notrunc 2>/dev/null
}

# says_damaged <err>: the message of a damaged index, naming it
says_damaged() {
	test_grep "index '$TRASH_DIRECTORY/repo/.ci-index/index.db' is damaged (.*): run 'ci-index build'" "$1"
}

# restore: the index of the setup back, sound
restore() {
	rm -f repo/.ci-index/index.db-wal repo/.ci-index/index.db-shm &&
	cp good.db repo/.ci-index/index.db
}

test_expect_success 'setup: a repository of 20 files, its index, a copy of it' '
	gen_repo 20 &&
	(cd repo && git add -A && git commit -q -m files && ci-index build) &&
	cp repo/.ci-index/index.db good.db &&
	index_dump good.db >good.dump &&
	(cd repo && ci-refs symbols src/f1.c) >symbols.expect &&
	test_line_count = 3 symbols.expect
'

test_expect_success 'setup: damage the index of definitions by blob (defs_blob)' '
	damage repo/.ci-index/index.db defs_blob &&
	test "$(sqlite3 repo/.ci-index/index.db "PRAGMA quick_check" 2>&1)" != ok
'

test_expect_success 'ci-refs symbols reads the damaged page: exit 3, no answer' '
	(cd repo && test_status 3 ci-refs symbols src/f1.c >../out 2>../err) &&
	test_must_be_empty out &&
	says_damaged err
'

test_expect_success 'ci-index status: exit 3, the damage said' '
	(cd repo && test_status 3 ci-index status >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "run .ci-index build" err
'

test_expect_success 'ci-index check: the damage said, exit 3' '
	(cd repo && test_status 3 ci-index check >../out 2>../err) &&
	test_must_be_empty out &&
	says_damaged err
'

test_expect_success 'CI_INDEX_CHECK=never (as above 32 MiB): update checks only what it reads' '
	cp repo/.ci-index/index.db damaged.db &&
	(cd repo && CI_INDEX_CHECK=never ci-index update 2>../err) &&
	test_must_be_empty err &&
	(cd repo && test_status 3 ci-index check 2>../err) &&
	says_damaged err
'

test_expect_success 'ci-index update finds damage no update reads and rebuilds the index' '
	(cd repo && ci-index update 2>../err) &&
	test_grep "is damaged (.*): rebuilding it" err &&
	echo ok >ok &&
	sqlite3 repo/.ci-index/index.db "PRAGMA integrity_check" >integrity &&
	test_cmp ok integrity &&
	index_dump repo/.ci-index/index.db >after.dump &&
	test_cmp good.dump after.dump &&
	(cd repo && ci-refs symbols src/f1.c) >symbols &&
	test_cmp symbols.expect symbols
'

test_expect_success 'an update of a sound index says nothing and changes nothing; check says ok' '
	(cd repo && ci-index update 2>../err) &&
	test_must_be_empty err &&
	(cd repo && ci-index check) >out &&
	echo ok >expect && test_cmp expect out &&
	index_dump repo/.ci-index/index.db >after.dump &&
	test_cmp good.dump after.dump
'

test_expect_success 'ci-grep reading a damaged trigram table: exit 2 (any error, as rg), no answer' '
	restore &&
	damage repo/.ci-index/index.db chunks_tri_data &&
	(cd repo && test_status 2 ci-grep -l f1_0 >../out 2>../err) &&
	test_must_be_empty out &&
	says_damaged err &&
	(cd repo && ci-grep --no-index --no-json -l f1_0) >out &&
	echo src/f1.c >expect &&
	test_cmp expect out
'

test_expect_success 'ci-rank reading a damaged full-text table: exit 3, no answer' '
	restore &&
	damage repo/.ci-index/index.db chunks_fts_data &&
	(cd repo && test_status 3 ci-rank helper >../out 2>../err) &&
	test_must_be_empty out &&
	says_damaged err
'

test_expect_success 'a file that is no database: exit 3, the index named' '
	head -c 65536 /dev/zero | tr "\0" "x" >repo/.ci-index/index.db &&
	rm -f repo/.ci-index/index.db-wal repo/.ci-index/index.db-shm &&
	(cd repo && test_status 3 ci-refs symbols src/f1.c >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "index.db" err &&
	test_grep "run .ci-index build" err &&
	(cd repo && ci-index update 2>../err) &&
	index_dump repo/.ci-index/index.db >after.dump &&
	test_cmp good.dump after.dump
'

test_done
