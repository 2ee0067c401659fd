#!/bin/sh
# t0575-damage-per-handle: what damage does, and the status a fatal error
# exits with, are no longer process-wide variables that a command flips.
#
# index_open takes INDEX_NOTE_DAMAGE per handle (ci-index build, update and
# serve repair an index; every other command dies of damage with exit 3), and
# the exit status of die(), an allocation failure or a write error is fixed
# once, at util_init_code (ci-grep: 2, as rg; the others: 3).  The behaviour
# is as before: checked here on one damaged index and on /dev/full.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'damage tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# damage <db> <name>: overwrite the root page of table or index <name> of db
damage() {
	damage_page_=$(sqlite3 "$1" "SELECT rootpage FROM sqlite_schema WHERE name = '$2'") &&
	damage_size_=$(sqlite3 "$1" "PRAGMA page_size") &&
	test -n "$damage_page_" && test "$damage_page_" -gt 1 &&
	head -c "$damage_size_" /dev/zero | tr '\0' '\245' >"$TEST_TMP/garbage" &&
	dd if="$TEST_TMP/garbage" of="$1" bs="$damage_size_" seek=$((damage_page_ - 1)) \
		conv=notrunc 2>/dev/null
}

test_expect_success 'setup: an index whose definitions are damaged' '
	gen_repo 5 &&
	(cd repo && git add -A && git commit -q -m files && ci-index build) &&
	damage repo/.ci-index/index.db defs_blob
'

test_expect_success 'a reader (ci-refs, ci-index check) dies of it: exit 3, no answer' '
	(cd repo && test_status 3 ci-refs symbols src/f1.c >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "is damaged (.*): run '\''ci-index build'\''" err &&
	(cd repo && test_status 3 ci-index check >../out 2>../err)
'

test_expect_success 'update, whose handle notes damage, rebuilds the index and answers after' '
	(cd repo && ci-index update 2>../err) &&
	test_grep "is damaged (.*): rebuilding it" err &&
	(cd repo && ci-index check && ci-refs symbols src/f1.c >../out) &&
	test_line_count = 3 out
'

test_expect_success 'a write error: ci-grep exits 2, ci-refs 3' '
	(cd repo && test_status 2 ci-grep helper >/dev/full 2>../err) &&
	test_grep "write error" err &&
	(cd repo && test_status 3 ci-refs symbols src/f1.c >/dev/full 2>../err) &&
	test_grep "write error" err
'

test_done
