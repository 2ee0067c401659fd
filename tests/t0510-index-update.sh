#!/bin/sh
# t0510-index-update: ci-index update keeps the index equal to a clean build.
#
# A repository goes through edits, additions, deletions, a rename, a file that
# becomes ignored or binary, a touch without change and branch switches; after
# each step `ci-index update` must leave the same files, chunks, definitions,
# references, imports and trigrams as `ci-index build` of the same tree, and
# `status` must say that nothing is stale.  Contents seen before are reused, not
# parsed again (counted by `ci-index -v update`), and unreferenced contents are
# collected only once they outnumber the live ones.
#
# Update notices a change by size and modification time; to be sure that a
# step's edits have a new modification time, the steps wait for the next second
# (`next_second`), except the one that checks edits within the same second.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if test -n "$CI_TEST_INDEX_SERVER"; then
	# t0515-index-server: every update run by the repository's `ci-index serve`,
	# started and waited for by the first update of each repository
	unset CI_INDEX_SERVER
	CI_INDEX_SERVER=always CI_INDEX_SERVER_IDLE=60 XDG_RUNTIME_DIR=$TRASH_DIRECTORY.run
	export CI_INDEX_SERVER CI_INDEX_SERVER_IDLE XDG_RUNTIME_DIR
	rm -rf "$XDG_RUNTIME_DIR" && mkdir -m 700 "$XDG_RUNTIME_DIR"
fi

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# next_second: wait until the clock shows a second later than now, so that what
# is written next has a new modification time
next_second() {
	next_second_=$(date +%s)
	while test "$(date +%s)" = "$next_second_"; do
		sleep 0.1
	done
}

# status_of_repo: `ci-index status` of repo, into status.json
status_of_repo() {
	(cd repo && ci-index status) >status.json
}

# stale_is <n>: status says that n files are stale
stale_is() {
	status_of_repo &&
	"$JQ" -e ".stale == $1" status.json >/dev/null ||
	{ echo "stale is $("$JQ" .stale status.json), expected $1" >&7; return 1; }
}

# blobs_of_repo: the contents the index holds
blobs_of_repo() {
	sqlite3 repo/.ci-index/index.db "SELECT count(*) FROM blobs"
}

# update_v: `ci-index -v update` of repo; its report, without the program name,
# into update.out
update_v() {
	(cd repo && ci-index -v update >../update.stdout 2>../update.err) &&
	test_must_be_empty update.stdout &&
	sed -n 's/^ci-index: \([0-9]* unchanged, .*\)/\1/p' update.err >update.out &&
	test_line_count = 1 update.out
}

# is_fresh: the index of repo is that of a clean build, and nothing is stale
is_fresh() {
	stale_is 0 &&
	rm -f clean.db &&
	(cd repo && ci-index --index ../clean.db build) &&
	index_dump clean.db >clean.dump &&
	index_dump repo/.ci-index/index.db >index.dump &&
	test_cmp clean.dump index.dump &&
	index_check repo/.ci-index/index.db >check &&
	test_must_be_empty check
}

make_repo() (
	mkdir -p "$1" && cd "$1" && git init -q &&
	mkdir -p src lib web docs tools &&
	printf '*.log\n' >.gitignore &&
	cat >src/parse.h <<-\EOF &&
	#ifndef PARSE_H
	#define PARSE_H
	int parse(const char *s);
	int count(const char *s);
	#endif
	EOF
	cat >src/parse.c <<-\EOF &&
	#include "parse.h"

	int parse(const char *s)
	{
		return s[0] == 'x';
	}

	int count(const char *s)
	{
		int n = 0;

		while (*s++)
			n++;
		return n;
	}
	EOF
	cat >src/main.c <<-\EOF &&
	#include <stdio.h>
	#include "parse.h"

	int main(int argc, char **argv)
	{
		return argc > 1 ? parse(argv[1]) : count("");
	}
	EOF
	cat >lib/report.py <<-\EOF &&
	import json


	class Report:
	    def render(self):
	        return json.dumps({})
	EOF
	cat >lib/util.py <<-\EOF &&
	import os


	def here():
	    return os.getcwd()
	EOF
	cat >web/app.js <<-\EOF &&
	const view = require('./view');
	function start() { return view.render(1); }
	module.exports = { start };
	EOF
	cat >web/view.js <<-\EOF &&
	function render(x) { return String(x); }
	module.exports = { render };
	EOF
	printf '# Guide\n\nSee parse.\n' >docs/guide.md &&
	printf '#!/bin/sh\necho hello\n' >tools/hello.sh &&
	printf 'GIF89a\000\001\002\n' >docs/logo.gif &&
	git add -A && git commit -q -m "a fixture"
)

test_expect_success 'setup: a repository and its index' '
	make_repo repo &&
	(cd repo && ci-index build) &&
	is_fresh
'

test_expect_success 'update with nothing changed: nothing read, nothing stale' '
	update_v &&
	echo "11 unchanged, 0 re-read, 0 reused from the index, 0 removed" >expect &&
	test_cmp expect update.out &&
	is_fresh
'

test_expect_success 'status: an edited file is one stale file' '
	next_second &&
	printf "/* more */\n" >>repo/src/parse.c &&
	stale_is 1
'

test_expect_success 'update after an edit: that file re-read, the index fresh' '
	update_v &&
	echo "10 unchanged, 1 re-read, 0 reused from the index, 0 removed" >expect &&
	test_cmp expect update.out &&
	is_fresh &&
	grep -q "more" clean.dump
'

# wal_empty: the index's write-ahead log is empty; a server's worker empties it
# after it has answered (closing the index checkpoints it): once it is done
wal_empty() {
	if test -n "$CI_TEST_INDEX_SERVER"; then
		i=0
		while test -s repo/.ci-index/index.db-wal && test $i -lt 100; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	! test -s repo/.ci-index/index.db-wal
}

test_expect_success 'an update leaves the write-ahead log empty (the next open reads none)' '
	echo "/* one more */" >>repo/src/main.c &&
	(cd repo && ci-index update) &&
	wal_empty
'

test_expect_success 'status: an edit that keeps the size (a second later) is stale' '
	next_second &&
	sed -i "s/n++/m++/; s/int n = 0/int m = 0/; s/return n;/return m;/" repo/src/parse.c &&
	stale_is 1
'

test_expect_success 'update after an edit that keeps the size' '
	update_v &&
	echo "10 unchanged, 1 re-read, 0 reused from the index, 0 removed" >expect &&
	test_cmp expect update.out &&
	is_fresh
'

test_expect_success 'status: added and removed files are stale' '
	next_second &&
	cat >repo/lib/extra.py <<-\EOF &&
	def extra():
	    return 42
	EOF
	rm repo/tools/hello.sh &&
	stale_is 2
'

test_expect_success 'update after adding and removing files' '
	update_v &&
	echo "10 unchanged, 1 re-read, 0 reused from the index, 1 removed" >expect &&
	test_cmp expect update.out &&
	is_fresh &&
	grep -q "lib/extra.py" index.dump &&
	! grep -q "tools/hello.sh" index.dump
'

test_expect_success 'update after a rename: the content is the same blob' '
	next_second &&
	blobs=$(blobs_of_repo) &&
	(cd repo && git mv -f lib/report.py lib/reports.py 2>/dev/null || mv lib/report.py lib/reports.py) &&
	stale_is 2 &&
	update_v &&
	test_grep "1 reused from the index, 1 removed" update.out &&
	test "$(blobs_of_repo)" = "$blobs" &&
	is_fresh
'

test_expect_success 'an untracked file that becomes ignored leaves the index, and comes back' '
	(cd repo && git rm -q --cached docs/guide.md) &&
	next_second &&
	printf "*.log\ndocs/guide.md\n" >repo/.gitignore &&
	update_v &&
	is_fresh &&
	! grep -q "^.file.,.docs/guide.md." index.dump &&
	next_second &&
	printf "*.log\n" >repo/.gitignore &&
	update_v &&
	is_fresh &&
	grep -q "^.file.,.docs/guide.md." index.dump &&
	(cd repo && git add docs/guide.md)
'

test_expect_success 'a tracked file is never ignored (git'\''s rule)' '
	next_second &&
	printf "*.log\ndocs/guide.md\n" >repo/.gitignore &&
	update_v &&
	is_fresh &&
	grep -q "^.file.,.docs/guide.md." index.dump &&
	next_second &&
	printf "*.log\n" >repo/.gitignore &&
	update_v &&
	is_fresh
'

# web/app.js requires ./view, which resolves to web/view.js only while it exists
test_expect_success 'a removed file no longer resolves the imports of unchanged files' '
	grep -q "^.import.,.web/app.js.,1,.\./view.,.web/view.js.\$" index.dump &&
	next_second &&
	mv repo/web/view.js view.js.saved &&
	update_v &&
	is_fresh
'

test_expect_success 'an added file resolves the imports of unchanged files' '
	(cd repo && ci-index build) &&
	grep -q "^.import.,.web/app.js.,1,.\./view.,NULL\$" clean.dump &&
	next_second &&
	mv view.js.saved repo/web/view.js &&
	update_v &&
	is_fresh
'

test_expect_success 'setup: a fresh index again' '
	(cd repo && ci-index build) &&
	is_fresh
'

test_expect_success 'a file that becomes binary is skipped, and indexed again as text' '
	next_second &&
	printf "GIF89a\000\001\002\n" >repo/lib/util.py &&
	update_v &&
	is_fresh &&
	echo "lib/util.py|binary" >expect &&
	sqlite3 repo/.ci-index/index.db "SELECT path, reason FROM skipped WHERE path LIKE \"lib/%\"" >actual &&
	test_cmp expect actual &&
	next_second &&
	printf "def here():\n    return 1\n" >repo/lib/util.py &&
	update_v &&
	is_fresh &&
	sqlite3 repo/.ci-index/index.db "SELECT count(*) FROM skipped WHERE path = \"lib/util.py\"" >actual &&
	echo 0 >expect &&
	test_cmp expect actual
'

test_expect_success 'setup: a fresh index again' '
	(cd repo && ci-index build) &&
	is_fresh
'

test_expect_success 'touch without change: nothing re-read, nothing stale after' '
	(cd repo && git add -A && git commit -q -m "edits") &&
	next_second &&
	blobs=$(blobs_of_repo) &&
	(cd repo && git ls-files -z | xargs -0 touch) &&
	n=$(cd repo && git ls-files | wc -l) &&
	{ stale_is $n; stale_ok=$?; } &&
	update_v &&
	test_grep "^[0-9]* unchanged, 0 re-read, 0 reused from the index, 0 removed" update.out &&
	test "$(blobs_of_repo)" = "$blobs" &&
	is_fresh &&
	test $stale_ok = 0
'

test_expect_success 'setup: a branch that changes, adds and removes files' '
	(cd repo &&
	 git checkout -q -b feature &&
	 sed -i "s/return s\[0\] == .x.;/return s[0] == \x27y\x27 || s[0] == \x27z\x27;/" src/parse.c &&
	 sed -i "1i #include <string.h>" src/main.c &&
	 printf "function render(x) { return \`<b>\${x}</b>\`; }\nmodule.exports = { render };\n" >web/view.js &&
	 git rm -q lib/reports.py &&
	 printf "import sys\n\n\ndef argv():\n    return sys.argv\n" >lib/args.py &&
	 git add -A && git commit -q -m feature &&
	 git checkout -q main) &&
	(cd repo && git diff --name-status main feature) >changes &&
	cat >expect <<-\EOF &&
	A	lib/args.py
	D	lib/reports.py
	M	src/main.c
	M	src/parse.c
	M	web/view.js
	EOF
	test_cmp expect changes
'

test_expect_success 'status: a branch switch makes the files it changes stale' '
	next_second &&
	(cd repo && git checkout -q feature) &&
	stale_is 5
'

test_expect_success 'switch to the branch: its files read, the index fresh' '
	update_v &&
	echo "7 unchanged, 4 re-read, 0 reused from the index, 1 removed" >expect &&
	test_cmp expect update.out &&
	is_fresh &&
	blobs_of_repo >blobs.feature
'

test_expect_success 'switch back: every content reused (re-read for its imports), no new blob' '
	next_second &&
	(cd repo && git checkout -q main) &&
	update_v &&
	echo "7 unchanged, 4 re-read, 4 reused from the index, 1 removed" >expect &&
	test_cmp expect update.out &&
	blobs_of_repo >actual &&
	test_cmp blobs.feature actual
'

test_expect_success 'switch back: the index is fresh' '
	is_fresh
'

test_expect_success 'switch to the branch again: reused, fresh' '
	next_second &&
	(cd repo && git checkout -q feature) &&
	update_v &&
	echo "7 unchanged, 4 re-read, 4 reused from the index, 1 removed" >expect &&
	test_cmp expect update.out &&
	blobs_of_repo >actual &&
	test_cmp blobs.feature actual &&
	is_fresh
'

test_expect_success 'an edit in the same second as the update before it is seen' '
	(cd repo && git checkout -q main && ci-index build) &&
	i=0 &&
	while test $i -lt 3; do
		# at the start of a second, so that both edits fall in it
		next_second &&
		sed -i "s/int m = 0/int k = 0/; s/m++/k++/; s/return m;/return k;/" repo/src/parse.c &&
		(cd repo && ci-index update) &&
		sed -i "s/int k = 0/int m = 0/; s/k++/m++/; s/return k;/return m;/" repo/src/parse.c &&
		(cd repo && ci-index update) &&
		is_fresh || return 1
		i=$((i + 1))
	done
'

test_expect_success 'update from a subdirectory updates the whole repository' '
	(cd repo && ci-index build) &&
	next_second &&
	printf "int added(void) { return 1; }\n" >>repo/src/main.c &&
	printf "def more():\n    pass\n" >>repo/lib/util.py &&
	(cd repo/web && ci-index update) &&
	is_fresh
'

test_expect_success 'an update reads only the directories that changed, and misses nothing' '
	(cd repo && git checkout -q -f main && ci-index update) &&
	(cd repo && find . -path ./.git -prune -o -path ./.ci-index -prune -o -print |
		xargs touch -h -d @1600000000) &&
	(cd repo && ci-index update) &&
	is_fresh &&
	# in place in a directory that does not change; a file removed; a new directory
	printf "/* in place */\n" >>repo/src/parse.c &&
	rm repo/docs/guide.md &&
	mkdir -p repo/newdir/deeper && printf "int late(void);\n" >repo/newdir/deeper/late.h &&
	(cd repo && strace -f -e trace=openat -o ../trace ci-index update 2>/dev/null || ci-index update) &&
	is_fresh &&
	grep -q "^.file.,.newdir/deeper/late.h." index.dump &&
	! grep -q "^.file.,.docs/guide.md." index.dump &&
	if test -s trace; then
		# the root, docs (a file removed) and the new directories: not src
		! grep -q "/src\"" trace
	fi &&
	(cd repo && git checkout -q -f main && git clean -q -f -d && ci-index update) &&
	is_fresh
'

test_expect_success 'unreferenced contents are kept while they are fewer than the live ones' '
	(cd repo && ci-index build) &&
	live=$(blobs_of_repo) &&
	i=1 &&
	while test $i -le $live; do
		echo "/* edit $i */" >>repo/src/parse.c &&
		(cd repo && ci-index update) &&
		test "$(blobs_of_repo)" = $((live + i)) ||
		{ echo "edit $i: $(blobs_of_repo) blobs, expected $((live + i))"; return 1; }
		i=$((i + 1))
	done &&
	echo $live >live
'

test_expect_success 'and collected once they outnumber them' '
	live=$(cat live) &&
	echo "/* one edit too many */" >>repo/src/parse.c &&
	(cd repo && ci-index update) &&
	test "$(blobs_of_repo)" = $live &&
	is_fresh &&
	sqlite3 repo/.ci-index/index.db "SELECT count(DISTINCT id >> 8) FROM chunks_tri_docsize" >actual &&
	echo $live >expect &&
	test_cmp expect actual
'

test_expect_success 'a collected content is read again when it comes back' '
	next_second &&
	(cd repo && git checkout -q -f main && ci-index update) &&
	is_fresh &&
	next_second &&
	(cd repo && git checkout -q feature && ci-index update) &&
	is_fresh
'

test_expect_success 'update where there is no index yet (nor its directory) builds one' '
	rm -rf repo/.ci-index &&
	(cd repo && ci-index update) &&
	is_fresh
'

# make_many <dir> <from> <to>: Python files mod<i>.py with common words, enough
# chunks for terms in CI_TERM_DF_MIN (16) chunks or more
make_many() {
	for i in $(seq "$2" "$3"); do
		cat >"$1/mod$i.py" <<-EOF || return 1
		import os


		def handle_request_$i(request, config):
		    """Handle a request."""
		    value = config.get("timeout")
		    return process(request, value)


		class Worker$i:
		    def run(self, request):
		        return handle_request_$i(request, self.config)
		EOF
	done
}

# ranks_of <db>: ci-rank's answers to a few queries on the index <db> of many
ranks_of() {
	for q in "handle request" "worker run timeout" "process value config"; do
		(cd many && ci-rank --index "$1" --limit 20 "$q") || return 1
	done
}

test_expect_success 'term_df and chunk_sizes: filled by build, kept exact by update' '
	git init -q many && make_many many 1 30 &&
	(cd many && git add . && git commit -qm many && ci-index build) &&
	db=many/.ci-index/index.db &&
	index_sql "$db" "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, row);
		SELECT term, doc FROM temp.v WHERE doc >= 16 ORDER BY term" >expect &&
	index_sql "$db" "SELECT term, df FROM term_df ORDER BY term" >actual &&
	test_cmp expect actual &&
	test_line_count -gt 5 actual &&
	index_check "$db" >check && test_must_be_empty check &&
	next_second &&
	# edits that add and drop common terms, new files, a deleted one
	sed -i "s/timeout/timeout_seconds/" many/mod3.py many/mod4.py &&
	echo "worker = Worker1()" >>many/mod5.py &&
	make_many many 31 34 &&
	rm many/mod7.py &&
	index_sql "$db" "SELECT df FROM term_df WHERE term = '\''handle'\''" >before &&
	(cd many && ci-index update) &&
	index_sql "$db" "SELECT df FROM term_df WHERE term = '\''handle'\''" >after &&
	test "$(cat after)" -gt "$(cat before)" &&
	index_check "$db" >check && test_must_be_empty check &&
	# deleting most files collects their chunks: both tables are filled anew
	next_second &&
	rm many/mod1[0-9].py many/mod2[0-9].py &&
	(cd many && ci-index update) &&
	index_check "$db" >check && test_must_be_empty check &&
	index_sql "$db" "SELECT df FROM term_df WHERE term = '\''handle'\''" >collected &&
	test "$(cat collected)" -lt "$(cat before)" &&
	index_sql "$db" "SELECT count(*) FROM term_df" >terms &&
	test "$(cat terms)" -gt 5
'

test_expect_success 'ci-rank: the same answers without term_df and chunk_sizes (counted in chunks_fts)' '
	cp many/.ci-index/index.db bare.db &&
	sqlite3 bare.db "DELETE FROM term_df; DELETE FROM chunk_sizes" &&
	ranks_of "$PWD/many/.ci-index/index.db" >with &&
	ranks_of "$PWD/bare.db" >without &&
	test_cmp with without &&
	test_line_count -gt 10 with
'

test_expect_success '--history: build stores the history and coupling, update the new commits' '
	git init -q hist && (
		cd hist &&
		echo "a = 1" >a.py && echo "b = 1" >b.py && git add . && git commit -qm one &&
		echo "a = 2" >a.py && echo "b = 2" >b.py && git commit -qam two &&
		ci-index --history build &&
		ci-index status | jq -e ".commits == 2 and .couplings == 1" &&
		echo "a = 3" >a.py && git commit -qam three &&
		ci-index --history update &&
		ci-index status | jq -e ".commits == 3 and .couplings == 1" &&
		ci-couple --index .ci-index/index.db coupling a.py | jq -se "map(select(._type == \"coupling\"))[0].co_changes == 2" &&
		ci-index --history update &&
		ci-index status | jq -e ".commits == 3"
	)
'

test_expect_success '--history: nothing to store outside git or before a commit' '
	mkdir nogit && echo "x = 1" >nogit/x.py &&
	(cd nogit && GIT_CEILING_DIRECTORIES=$TRASH_DIRECTORY ci-index --history build &&
	 ci-index status | jq -e ".commits == 0") &&
	git init -q unborn && echo "y = 1" >unborn/y.py &&
	(cd unborn && ci-index --history build && ci-index status | jq -e ".commits == 0")
'

test_expect_success 'build --rev --history: the history of that commit, in a work tree and a bare clone' '
	(cd hist && ci-index --history --index ../rev.db build --rev HEAD~1) &&
	git -C hist rev-list HEAD~1 | sort >want &&
	sqlite3 rev.db "SELECT sha FROM commits ORDER BY sha" >got &&
	test_cmp want got &&
	test_line_count = 2 got &&
	sqlite3 rev.db "SELECT count(*) FROM coupling" >couplings &&
	echo 1 >one && test_cmp one couplings &&
	git clone -q --bare hist hist.git &&
	(cd hist.git && ci-index --history --index ../rev-bare.db build --rev HEAD~1) &&
	sqlite3 rev-bare.db "SELECT sha FROM commits ORDER BY sha" >got-bare &&
	test_cmp want got-bare &&
	# HEAD elsewhere (a side branch): the coupling too is of that commit, not of HEAD
	git clone -q hist side &&
	git -C side checkout -q -b side HEAD~2 &&
	(cd side && echo "c = 1" >c.py && echo "a = 9" >a.py && git add . && git commit -qm side &&
	 ci-index --history --index ../rev-side.db build --rev origin/HEAD~1 2>../err) &&
	test_must_be_empty err &&
	sqlite3 rev-side.db "SELECT a, b, co_changes FROM coupling" >got-side &&
	echo "a.py|b.py|2" >want-side &&
	test_cmp want-side got-side &&
	(cd side && ci-couple --no-index coupling --rev origin/HEAD~1 a.py) >related &&
	jq -se "map(select(._type == \"coupling\")) | length == 1 and .[0].co_changes == 2" related &&
	jq -se "map(select(._type == \"related\"))[0] | .changes == 2 and .commits == 2" related &&
	(cd side && ci-couple --no-index coupling a.py) >related-head &&
	jq -se "map(select(._type == \"related\"))[0] | .changes == 2 and .commits == 2" related-head &&
	jq -se "map(select(._type == \"coupling\")) | map(.b) | index(\"c.py\") != null" related-head &&
	(cd side && test_status 2 ci-couple review --rev HEAD 2>../err) &&
	test_grep "rev" err &&
	(cd hist && test_status 2 ci-index --history --index ../rev2.db build --rev no-such-rev 2>../err) &&
	test_grep "no-such-rev" err &&
	# HEAD names no commit: the history of the commit asked for is stored all the same
	git clone -q --bare hist dangling.git &&
	git -C dangling.git symbolic-ref HEAD refs/heads/none &&
	(cd dangling.git && ci-index --history --index ../rev3.db build --rev "$(git -C ../hist rev-parse HEAD~1)") &&
	sqlite3 rev3.db "SELECT sha FROM commits ORDER BY sha" >got-dangling &&
	test_cmp want got-dangling &&
	sqlite3 rev3.db "SELECT a, b, co_changes FROM coupling" >got-dangling &&
	echo "a.py|b.py|2" >want-dangling && test_cmp want-dangling got-dangling &&
	sqlite3 rev3.db "SELECT count(*) FROM files" >files && test "$(cat files)" -gt 0
'

if test -n "$CI_TEST_INDEX_SERVER"; then
	# watched: what the server's worker says of the directories (ci-index -v update)
	watched() {
		(cd repo && ci-index -v update) 2>watch.err &&
		sed -n "s/^ci-index: the server.s watch: \([0-9]*\) of \([0-9]*\) directories unchanged$/\1 \2/p" \
			watch.err >watch.out &&
		test_line_count = 1 watch.out
	}
	# watched_is <clean> <all>: so, once the update before has ended (until
	# its worker is gone, what it was handed counts as changed)
	watched_is() {
		echo "$1 $2" >expect &&
		i=0 &&
		while watched && ! test_cmp expect watch.out >/dev/null 2>&1; do
			i=$((i + 1)) && test $i -lt 50 || break
			sleep 0.2
		done &&
		test_cmp expect watch.out
	}
	dirs_of_repo() {
		sqlite3 repo/.ci-index/index.db "SELECT count(*) FROM dirs"
	}

	test_expect_success 'server: a no-op update looks in no directory' '
		(cd repo && ci-index update) &&
		n=$(dirs_of_repo) &&
		watched_is $n $n &&
		is_fresh
	'

	test_expect_success 'server: after an edit, an update looks in its directory only' '
		n=$(dirs_of_repo) &&
		watched_is $n $n &&
		echo "int served(void) { return 1; }" >>repo/src/parse.c &&
		watched &&
		echo "$((n - 1)) $n" >expect &&
		test_cmp expect watch.out &&
		is_fresh &&
		grep -q served index.dump
	'

	test_expect_success 'server: a new directory, a file moved into it, a directory removed' '
		mkdir -p repo/src/deep/er &&
		echo "int deeper(void) { return 2; }" >repo/src/deep/er/d.c &&
		(cd repo && ci-index update) &&
		is_fresh &&
		grep -q deeper index.dump &&
		mv repo/src/deep/er/d.c repo/src/deep/moved.c &&
		(cd repo && ci-index update) &&
		is_fresh &&
		grep -q "src/deep/moved.c" index.dump &&
		rm -r repo/src/deep &&
		(cd repo && ci-index update) &&
		is_fresh &&
		! grep -q deeper index.dump
	'

	test_expect_success 'server: a worker killed in an update: the next one still finds the edit' '
		echo "int after_crash(void) { return 3; }" >>repo/src/parse.c &&
		(cd repo && test_status 3 env CI_INDEX_CRASH_AFTER=0 ci-index update 2>../err) &&
		test_grep "ended without an exit status" err &&
		(cd repo && ci-index update) &&
		is_fresh &&
		grep -q after_crash index.dump
	'

	# grep_same <pattern>: ci-grep finds the same lines with the server's
	# word, without it and scanning the tree (into grep.sv, grep.ix, grep.scan)
	# (exit 1: nothing matched)
	grep_same() {
		{ (cd repo && ci-grep --no-json -n "$1") >grep.sv; test $? -le 1; } &&
		{ (cd repo && CI_INDEX_SERVER=0 ci-grep --no-json -n "$1") >grep.ix; test $? -le 1; } &&
		{ (cd repo && ci-grep --no-index --no-json -n "$1") >grep.scan; test $? -le 1; } &&
		test_cmp grep.scan grep.sv &&
		test_cmp grep.scan grep.ix
	}

	test_expect_success 'server: ci-grep asks it where to look, and finds what a scan finds' '
		(cd repo && ci-index update) &&
		n=$(dirs_of_repo) &&
		watched_is $n $n &&
		grep_same served &&
		(cd repo && ci-grep --stats --no-json served 2>../stats >/dev/null) &&
		test_grep " 0 stat.ed" stats &&
		# nothing happened: not even the list of directories is read
		test_grep "directories: none changed (the index.s server saw nothing happen)" stats &&
		# --trust-index takes the server.s candidates too
		(cd repo && ci-grep --trust-index --stats --no-json -n served 2>../stats >../grep.tr) &&
		test_grep "trigram candidates (the server.s)" stats &&
		test_cmp grep.scan grep.tr &&
		(cd repo && CI_INDEX_SERVER=0 ci-grep --trust-index --stats --no-json -n served 2>../stats >../grep.tr) &&
		! grep -q "(the server.s)" stats &&
		test_cmp grep.scan grep.tr &&
		echo "int served_again(void) { return 4; }" >>repo/src/main.c &&
		mkdir -p repo/fresh &&
		echo "int served_fresh(void) { return 5; }" >repo/fresh/f.c &&
		grep_same served &&
		(cd repo && ci-grep --stats --no-json served 2>../stats >/dev/null) &&
		test_grep "directories: [0-9]* recorded, [1-9][0-9]* changed" stats &&
		grep -q served_again grep.sv &&
		grep -q served_fresh grep.sv &&
		rm repo/fresh/f.c &&
		grep_same served_fresh &&
		test_must_be_empty grep.sv
	'

	# served_by_parts <n>: ci-grep finds the n lines of rare_tok as a scan
	# does, with the server's candidates, reading src/big.c by its segments
	served_by_parts() {
		grep_same rare_tok &&
		test_line_count = $1 grep.sv &&
		(cd repo && ci-grep --stats -c rare_tok 2>../stats >/dev/null) &&
		test_grep "trigram candidates (the server.s)" stats &&
		test_grep " MB, 1 by parts)" stats
	}

	# (an update without the server, or a build, in the same second as the
	# last update through it leaves "updated" as the server knows it: its
	# answer then still holds, since it reads the file list again when meta
	# "created" or "generation" moved, from the new file after a build)
	test_expect_success 'server: ci-grep takes the trigram candidates from it, before and after an update' '
		awk "BEGIN { for (i = 1; i <= 3000; i++) printf \"int big_%d(void) { return %d; }%s\\n\", i, i, i % 1000 == 500 ? \" /* rare_tok */\" : \"\" }" >repo/src/big.c &&
		touch -d @1600000000 repo/src/big.c &&
		(cd repo && ci-index update) &&
		served_by_parts 3 &&
		echo "int big_more(void) { return 0; } /* rare_tok */" >>repo/src/big.c &&
		grep_same rare_tok &&
		test_line_count = 4 grep.sv &&
		touch -d @1600000000 repo/src/big.c &&
		(cd repo && ci-index update) &&
		served_by_parts 4 &&
		echo "int big_last(void) { return 1; } /* rare_tok */" >>repo/src/big.c &&
		touch -d @1600000000 repo/src/big.c &&
		(cd repo && ci-index --no-server update) &&
		grep_same rare_tok &&
		test_line_count = 5 grep.sv &&
		(cd repo && ci-index build) &&
		grep_same rare_tok &&
		test_line_count = 5 grep.sv &&
		(cd repo && ci-index update) &&
		grep_same rare_tok &&
		test_line_count = 5 grep.sv
	'

	# (the worker hands its caller the exit status, then the server sees it
	# end; a search in between must take its update as in)
	test_expect_success 'server: a search just after an update whose worker has not ended yet' '
		echo "int big_late(void) { return 2; } /* rare_tok */" >>repo/src/big.c &&
		touch -d @1600000000 repo/src/big.c &&
		(cd repo && CI_INDEX_TEST_WORKER_END_MS=3000 ci-index update) &&
		(cd repo && ci-grep --stats --no-json -c rare_tok 2>../stats >../count) &&
		test_grep "trigram candidates (the server.s)" stats &&
		echo "src/big.c:6" >expect &&
		test_cmp expect count &&
		(cd repo && ci-grep --stats --no-json rare_tok 2>../stats >/dev/null) &&
		test_grep "directories: none changed" stats
	'

	test_expect_success 'server: --no-server and CI_INDEX_SERVER=0 run here' '
		(cd repo && ci-index -v --no-server update && CI_INDEX_SERVER=0 ci-index -v update) 2>err &&
		! grep -q "server.s watch" err &&
		test_grep "unchanged" err
	'

	# from_server: ci-grep took its candidates from the server (it vouches for the tree)
	from_server() {
		(cd repo && ci-grep --stats -c rare_tok >/dev/null 2>../stats) &&
		grep -q "trigram candidates (the server.s)" stats
	}
	# served_soon: from_server within 20 s
	served_soon() {
		i=0 &&
		while ! from_server; do
			i=$((i + 1)) && test $i -lt 100 || break
			sleep 0.2
		done &&
		from_server
	}
	# same_as_scan <pattern>: the index and a scan give the same one line
	same_as_scan() {
		(cd repo && ci-grep --no-json "$1" && ci-grep --no-json --no-index "$1") >both &&
		test_line_count = 2 both &&
		test $(sort -u both | wc -l) = 1
	}

	test_expect_success 'server: a server just started runs its own first update, then vouches' '
		(cd repo && ci-index serve --stop) &&
		echo "int started_tok(void) { return 3; }" >>repo/src/parse.c &&
		(cd repo && CI_INDEX_CRASH_AFTER=0 ci-index serve --idle 60 >/dev/null 2>&1 &) &&
		served_soon &&
		same_as_scan started_tok &&
		(cd repo && CI_INDEX_SERVER=0 ci-index status) | "$JQ" -e ".stale == 0"
	'

	test_expect_success 'server: a build starts the server anew, which vouches for the new index' '
		echo "int rebuilt_tok(void) { return 4; }" >>repo/src/parse.c &&
		(cd repo && ci-index build) &&
		served_soon &&
		same_as_scan rebuilt_tok &&
		# back to back: the first server (or its first update) is still there
		(cd repo && ci-index build && ci-index build) &&
		served_soon &&
		ls "$XDG_RUNTIME_DIR/ci" | grep "^index-.*\.sock\$" >socks0 &&
		(cd repo && CI_INDEX_SERVER=0 ci-index --index ../nosrv.db build) &&
		(cd repo && ci-index --index ../snap.db build --rev HEAD) &&
		sleep 1 &&
		ls "$XDG_RUNTIME_DIR/ci" | grep "^index-.*\.sock\$" >socks1 &&
		# no server started for them (one of an earlier test may have idled out meanwhile)
		comm -13 socks0 socks1 >socks.new &&
		test_must_be_empty socks.new
	'

	test_expect_success 'server: a search that no server answers starts one for the next' '
		(cd repo && ci-index serve --stop) &&
		echo "int searched_tok(void) { return 5; }" >>repo/src/parse.c &&
		(cd repo && ci-grep --stats -c searched_tok >/dev/null 2>../stats) &&
		! grep -q "(the server.s)" stats &&
		served_soon &&
		same_as_scan searched_tok &&
		# not with CI_INDEX_SERVER=0
		(cd repo && ci-index serve --stop) &&
		(cd repo && CI_INDEX_SERVER=0 ci-grep -c searched_tok >/dev/null) &&
		sleep 1 &&
		(cd repo && test_status 1 ci-index serve --stop 2>/dev/null) &&
		(cd repo && ci-grep -c searched_tok >/dev/null) &&
		served_soon
	'

	test_expect_success 'server: status shows the server running (its pid), then null' '
		(cd repo && ci-index status) >status.json &&
		"$JQ" -e ".server.pid > 1 and .server.idle_exit_s == 60" status.json &&
		kill -0 $("$JQ" .server.pid status.json)
	'

	test_expect_success 'server: serve --stop stops it; with none running it exits 1' '
		(cd repo && ci-index serve --stop) &&
		(cd repo && test_status 1 ci-index serve --stop 2>../err) &&
		test_grep "no server is running" err &&
		(cd repo && ci-index status) >status.json &&
		"$JQ" -e ".server == null" status.json
	'

	if test_have_prog script; then
		test_expect_success 'server: a build says once that it started the server, on a terminal only' '
			(cd repo && script -qec "ci-index build" /dev/null) >tty.out &&
			grep -c "the index.s server runs in the background" tty.out >n &&
			echo 1 >expect && test_cmp expect n &&
			(cd repo && ci-index serve --stop) &&
			(cd repo && ci-index build 2>../err) &&
			test_must_be_empty err &&
			(cd repo && ci-index serve --stop)
		'
	fi
fi

test_done
