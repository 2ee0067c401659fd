#!/bin/sh
# t0520-index-crash: the index survives a ci-index that dies, and readers never
# see it half-written.
#
# CI_INDEX_CRASH_AFTER=N makes a build or an update kill itself with SIGKILL
# after N files were stored: the index must then be the one before (it still
# answers, unchanged and intact), and the next build or update must give what a
# clean build gives.  A load killed in the middle of its input stores nothing.
# While updates and builds run, a loop of sqlite3 readers must always see the
# old or the new index, and never fail.
#
# The update that is killed is large enough (about 1 MB of new text) that SQLite
# has written part of the transaction to the write-ahead log before the kill.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# index_intact <db>: SQLite finds nothing wrong with the database, nor with
# the trigram table
index_intact() {
	echo ok >"$TEST_TMP/ok" &&
	sqlite3 "$1" "PRAGMA integrity_check" >"$TEST_TMP/integrity" &&
	test_cmp "$TEST_TMP/ok" "$TEST_TMP/integrity" &&
	sqlite3 "$1" "INSERT INTO chunks_tri(chunks_tri) VALUES ('integrity-check')"
}

# next_second: wait until the clock shows a second later than now
next_second() {
	next_second_=$(date +%s)
	while test "$(date +%s)" = "$next_second_"; do
		sleep 0.1
	done
}

# killed <command>...: the command dies of SIGKILL (the test hook)
killed() {
	"$@"
	killed_=$?
	if test "$killed_" != 137; then
		echo "killed: '$*' exited with $killed_, not killed by SIGKILL (137)" >&7
		return 1
	fi
}

# clean_dump: the dump of a clean build of repo, into clean.dump
clean_dump() {
	rm -f clean.db &&
	(cd repo && ci-index --index ../clean.db build) &&
	index_dump clean.db >clean.dump
}

# is_fresh: the index of repo is that of a clean build, and nothing is stale
is_fresh() {
	(cd repo && ci-index status) >status.json &&
	"$JQ" -e ".stale == 0" status.json >/dev/null &&
	clean_dump &&
	index_dump repo/.ci-index/index.db >index.dump &&
	test_cmp clean.dump index.dump &&
	index_intact repo/.ci-index/index.db
}

test_expect_success 'setup: a repository of 40 files and its index' '
	gen_repo 40 &&
	mkdir -p repo/docs &&
	printf "# Notes\n\nNothing yet.\n" >repo/docs/notes.md &&
	(cd repo && git add -A && git commit -q -m files && ci-index build) &&
	index_dump repo/.ci-index/index.db >before.dump &&
	test_line_count -gt 100 before.dump &&
	is_fresh &&
	"$JQ" .files status.json >files &&
	echo 42 >expect &&
	test_cmp expect files
'

test_expect_success 'setup: change the tree (edit, add, delete)' '
	next_second &&
	gen_c repo/src/f1.c f1 5 &&
	gen_c repo/src/f2.c changed 3 &&
	gen_c repo/src/new.c new 4 &&
	rm repo/src/f40.c
'

for n in 0 1 20 39; do
	test_expect_success "a build killed after $n files: the old index still answers, unchanged" '
		(cd repo && killed env CI_INDEX_CRASH_AFTER='$n' ci-index build 2>../err) &&
		(cd repo && ci-index status) >status.json &&
		"$JQ" -e ".files == 42 and .stale > 0" status.json &&
		index_dump repo/.ci-index/index.db >after.dump &&
		test_cmp before.dump after.dump &&
		index_intact repo/.ci-index/index.db
	'
done

test_expect_success 'the build after a killed build: a clean index, nothing left over' '
	test -e repo/.ci-index/index.db.new &&
	(cd repo && ci-index build) &&
	! test -e repo/.ci-index/index.db.new &&
	is_fresh
'

test_expect_success 'a garbage index.db.new left behind does not break a build' '
	echo garbage >repo/.ci-index/index.db.new &&
	(cd repo && ci-index build) &&
	! test -e repo/.ci-index/index.db.new &&
	is_fresh
'

test_expect_success 'a first build killed: no index; the next build makes one' '
	(cd repo && ci-index drop) &&
	(cd repo && killed env CI_INDEX_CRASH_AFTER=5 ci-index build 2>../err) &&
	(cd repo && test_status 1 ci-index status >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "no index" err &&
	(cd repo && ci-index update) &&
	is_fresh
'

test_expect_success 'setup: a large change (about 1 MB of new text)' '
	(cd repo && git add -A && git commit -q -m changed) &&
	index_dump repo/.ci-index/index.db >before.dump &&
	next_second &&
	i=1 &&
	while test $i -le 30; do
		gen_c repo/src/f$i.c big$i 800 && i=$((i + 1))
	done &&
	gen_c repo/src/added.c added 800 &&
	rm repo/src/f39.c &&
	test $(cat repo/src/*.c | wc -c) -gt 1000000
'

for n in 1 25; do
	test_expect_success "an update killed after $n files: the old index still served" '
		(cd repo && killed env CI_INDEX_CRASH_AFTER='$n' ci-index update 2>../err) &&
		{ ls -l repo/.ci-index/ | sed "s/^/# /"; } &&
		index_dump repo/.ci-index/index.db >after.dump &&
		test_cmp before.dump after.dump &&
		index_intact repo/.ci-index/index.db &&
		(cd repo && ci-index status) >status.json &&
		"$JQ" -e ".files == 42 and .stale > 0" status.json
	'
done

test_expect_success 'the update after a killed update makes the index fresh' '
	(cd repo && ci-index update) &&
	is_fresh
'

test_expect_success 'a load killed in the middle of its input stores nothing' '
	(cd repo && ci-chunk) >records.nd &&
	test_line_count -gt 1000 records.nd &&
	(cd repo && ci-chunk docs | ci-index --index ../loaded.db load) &&
	index_dump loaded.db >before.dump &&
	test_line_count -gt 0 before.dump &&
	mkfifo fifo || return 1
	(cd repo && exec ci-index --index ../loaded.db load <../fifo 2>../err) &
	pid=$!
	exec 3>fifo &&
	head -n 1000 records.nd >&3 &&
	sleep 1 &&
	kill -9 $pid &&
	exec 3>&- &&
	{ wait $pid; test $? = 137; } &&
	index_dump loaded.db >after.dump &&
	test_cmp before.dump after.dump &&
	index_intact loaded.db
'

# readers <db> <out>: until the file "stop" exists, read the number of files and
# of their chunks from db with the sqlite3 shell (as any client would: with a
# busy timeout), one line per read into <out>; a failed read is a line "error"
readers() {
	while ! test -e stop; do
		sqlite3 -cmd ".timeout 10000" "$1" \
			"SELECT (SELECT count(*) FROM files) || ' ' || (SELECT count(*) FROM files f JOIN chunks c USING (blob_id))" \
			>>"$2" 2>>"$2.err" || echo error >>"$2"
	done
}

# counts_of_repo: "<files> <chunks>" of the index of repo
counts_of_repo() {
	sqlite3 -cmd ".timeout 10000" repo/.ci-index/index.db \
		"SELECT (SELECT count(*) FROM files) || ' ' || (SELECT count(*) FROM files f JOIN chunks c USING (blob_id))"
}

test_expect_success 'readers during updates see the old or the new index, never an error' '
	rm -f stop reads reads.err &&
	counts_of_repo >states || return 1
	readers repo/.ci-index/index.db reads &
	pid=$!
	failed=
	i=1
	while test $i -le 4; do
		j=1 &&
		while test $j -le 5; do
			gen_c repo/src/extra$j.c extra$j 100 && j=$((j + 1))
		done &&
		(cd repo && ci-index update) &&
		counts_of_repo >>states &&
		rm repo/src/extra*.c &&
		(cd repo && ci-index update) &&
		counts_of_repo >>states ||
		{ failed=t; break; }
		i=$((i + 1))
	done
	touch stop &&
	wait $pid &&
	test -z "$failed" &&
	sort -u states >expect &&
	test_line_count = 2 expect &&
	test_must_be_empty reads.err &&
	sort -u reads >actual &&
	echo "# $(wc -l <reads) reads: $(tr "\n" , <actual)" &&
	test_line_count -gt 0 actual &&
	! grep -v -x -F -f expect actual
'

test_expect_success 'readers during builds see the old or the new index, never an error' '
	rm -f stop reads reads.err &&
	counts_of_repo >states || return 1
	readers repo/.ci-index/index.db reads &
	pid=$!
	failed=
	i=1
	while test $i -le 3; do
		j=1 &&
		while test $j -le 5; do
			gen_c repo/src/extra$j.c extra$j 100 && j=$((j + 1))
		done &&
		(cd repo && ci-index build) &&
		counts_of_repo >>states &&
		rm repo/src/extra*.c &&
		(cd repo && ci-index build) &&
		counts_of_repo >>states ||
		{ failed=t; break; }
		i=$((i + 1))
	done
	touch stop &&
	wait $pid &&
	test -z "$failed" &&
	sort -u states >expect &&
	test_line_count = 2 expect &&
	test_must_be_empty reads.err &&
	sort -u reads >actual &&
	echo "# $(wc -l <reads) reads: $(tr "\n" , <actual)" &&
	test_line_count -gt 0 actual &&
	! grep -v -x -F -f expect actual
'

test_expect_success 'after all that, the index is fresh and intact' '
	is_fresh
'

test_done
