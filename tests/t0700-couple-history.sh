#!/bin/sh
# t0700-couple-history: `ci-couple history` on the fixture repository of
# tests/couple-lib.sh: the records (golden), what git log says of the same
# commits, the options, the parallel walk, incremental walks over an index and a
# rewritten history, and the failure paths.
#
# Golden files are tests/golden/ci-couple/*; CI_REGEN_GOLDEN=1 rewrites them.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/couple-lib.sh"

test_expect_success 'setup: the fixture repository' '
	make_couple_repo repo &&
	git -C repo log --first-parent --oneline >log &&
	test_line_count = 9 log
'

test_expect_success 'history: records as expected' '
	(cd repo && ci-couple history) >out &&
	couple_golden history.expected out
'

test_expect_success 'history: the same from a subdirectory and with one thread' '
	(cd repo/src && ci-couple -j 1 history) >out2 &&
	test_cmp out out2
'

test_expect_success 'history: a history record first, then one commit per line' '
	head -n 1 out | "$JQ" -e "._type == \"history\" and .replace == true and .base == null" &&
	sed 1d out | "$JQ" -e "._type == \"commit\"" >types &&
	! grep -v true types
'

test_expect_success 'history: line counts are those of git log --numstat' '
	(cd repo && git log --first-parent --diff-merges=first-parent -M --numstat --format=@%H) |
	awk "/^@/ { sha = substr(\$0, 2); next } NF == 3 && \$3 !~ /=>/ { print sha, \$1, \$2, \$3 }" |
	sort >expect &&
	"$JQ" -r "select(._type == \"commit\" and .merged_into == null) | .sha as \$s |
		.files[] | select(.old_path == null) | \"\(\$s) \(.added) \(.deleted) \(.path)\"" out |
	sort >actual &&
	test_cmp expect actual
'

test_expect_success 'history: statuses and renames are those of git log --name-status -M' '
	(cd repo && git log --first-parent --diff-merges=first-parent -M --name-status --format=@%H) |
	awk -F "	" "/^@/ { sha = substr(\$0, 2); next }
		NF == 2 { print sha, \$1, \$2 } NF == 3 { print sha, substr(\$1, 1, 1), \$3, \$2 }" |
	sort >expect &&
	"$JQ" -r "select(._type == \"commit\" and .merged_into == null) | .sha as \$s |
		.files[] | \"\(\$s) \(.status) \(.path)\" + (if .old_path then \" \(.old_path)\" else \"\" end)" out |
	sort >actual &&
	test_cmp expect actual
'

test_expect_success 'history: a merge stands for its branch, whose commits follow it without files' '
	"$JQ" -c "select(.parents == 2) | {message, merged, files: [.files[].path]}" out >actual &&
	echo "{\"message\":\"Merge branch '\''feature'\''\",\"merged\":2,\"files\":[\"src/lexer.c\",\"src/parser.c\",\"tests/test_parse.c\"]}" >expect &&
	test_cmp expect actual &&
	merge=$("$JQ" -r "select(.parents == 2) | .sha" out) &&
	"$JQ" -r "select(.merged_into == \"$merge\") | \"\(.author) \(.message) \(.files | length)\"" out >actual &&
	printf "%s\n" "Bob lexer: tests 0" "Bob lexer: count blanks 0" >expect &&
	test_cmp expect actual
'

test_expect_success 'history: a commit of more than 50 files is huge' '
	"$JQ" -r "select(.huge) | \"\(.message) \(.files | length)\"" out >actual &&
	echo "generate tables 60" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-couple history --max-files 60) | "$JQ" -r "select(.huge) | .message" >actual &&
	test_must_be_empty actual
'

test_expect_success 'history --max-commits counts first-parent commits' '
	(cd repo && ci-couple history --max-commits 3) >out3 &&
	"$JQ" -r "select(._type == \"commit\" and .merged_into == null) | .message" out3 >actual &&
	printf "%s\n" "parser: fix crash on empty input" "generate tables" "Merge branch '\''feature'\''" >expect &&
	test_cmp expect actual
'

test_expect_success 'history --since: a duration counts back from the newest commit' '
	sed 1d out3 >commits3 &&
	for when in "2 days ago" 2d 2.days.ago "48 hours" 2880min; do
		(cd repo && ci-couple history --since "$when") >since &&
		head -n 1 since | "$JQ" -e ".since == 1700691200" >/dev/null &&
		sed 1d since >since.commits &&
		test_cmp commits3 since.commits || return 1
	done
'

test_expect_success 'history --since: a date, a time, an epoch, all' '
	for when in 2023-11-22 "2023-11-22 22:13" 2023-11-22T22:13:20Z @1700691200; do
		(cd repo && ci-couple history --since "$when") >since &&
		sed 1d since >since.commits &&
		test_cmp commits3 since.commits || return 1
	done &&
	(cd repo && ci-couple history --since all) >since &&
	test_cmp out since
'

test_expect_success 'history --since: months and years are calendar ones' '
	(cd repo && ci-couple history --since "1 month ago") >since &&
	head -n 1 since | "$JQ" -e ".since == 1698185600" >/dev/null &&
	(cd repo && ci-couple history --since 1y) >since &&
	head -n 1 since | "$JQ" -e ".since == 1669328000" >/dev/null
'

test_expect_success 'history --since a time after the newest commit: exit 1' '
	(cd repo && test_status 1 ci-couple history --since 2030-01-01) >out4 2>err &&
	test_grep "no commits in that time" err
'

for bad in yesterday "3 fortnights" 2023-13-01 "2023-11-22 25:00" @x "5 days later"; do
	test_expect_success "history --since '$bad' is a usage error" '
		(cd repo && test_status 2 ci-couple history --since "$bad") >out5 2>err &&
		test_must_be_empty out5 &&
		test_grep "^ci-couple: --since: cannot read" err
	'
done

test_expect_success 'history: binary files and odd names' '
	cp -R repo odd && (
		cd odd &&
		printf "\000\001\002" >blob.bin &&
		printf "x\n" >"$(printf "caf\351.txt")" &&
		printf "y\n" >"a \"quoted\" name.txt" &&
		git add . && couple_commit 11 Dave "odd files" &&
		ci-couple history --max-commits 1
	) >odd.out &&
	"$JQ" -c "select(._type == \"commit\") | .files[]" odd.out >actual &&
	cat >expect <<-\EOF &&
	{"path":"a \"quoted\" name.txt","status":"A","added":1,"deleted":0}
	{"path":"blob.bin","status":"A","added":0,"deleted":0,"binary":true}
	{"path":"caf\ufffd.txt","status":"A","added":1,"deleted":0}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'history: deleted files and a file replaced by a directory' '
	cp -R repo del && (
		cd del &&
		git rm -q README.md &&
		git rm -q src/main.c && mkdir src/main.c && echo "int x;" >src/main.c/x.c &&
		git add . && couple_commit 11 Dave "restructure" &&
		ci-couple history --max-commits 1
	) >del.out &&
	"$JQ" -c "select(._type == \"commit\") | .files[]" del.out >actual &&
	cat >expect <<-\EOF &&
	{"path":"README.md","status":"D","added":0,"deleted":7}
	{"path":"src/main.c","status":"D","added":0,"deleted":11}
	{"path":"src/main.c/x.c","status":"A","added":1,"deleted":0}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'setup: a long linear history' '
	make_long_repo long 300 &&
	git -C long rev-list HEAD >revs &&
	test_line_count = 300 revs
'

test_expect_success 'history: the parallel walk writes what one thread writes' '
	(cd long && ci-couple -j 1 history) >long1 &&
	(cd long && ci-couple -j 4 history) >long4 &&
	(cd long && ci-couple -j 2 history --max-commits 250) >long2 &&
	test_cmp long1 long4 &&
	head -n 251 long1 >long1-250 &&
	test_cmp long1-250 long2 &&
	test_line_count = 301 long1
'

test_expect_success 'history: the parallel walk matches git log --numstat' '
	git -C long log --numstat --format=@%H |
	awk "/^@/ { sha = substr(\$0, 2); next } NF == 3 { print sha, \$1, \$2, \$3 }" | sort >expect &&
	"$JQ" -r "select(._type == \"commit\") | .sha as \$s | .files[] |
		\"\(\$s) \(.added) \(.deleted) \(.path)\"" long4 | sort >actual &&
	test_cmp expect actual
'

# ---- incremental walks ---------------------------------------------------------

test_expect_success 'setup: a copy to rewrite' '
	cp -R repo inc
'

test_expect_success 'history --incremental without an index writes everything' '
	(cd inc && ci-couple history --incremental) >actual &&
	test_cmp out actual
'

test_expect_success 'history --incremental after a load: nothing new' '
	(cd inc && ci-couple history | ci-index load) &&
	(cd inc && ci-couple history --incremental) >actual &&
	test_line_count = 1 actual &&
	head=$(git -C inc rev-parse HEAD) &&
	"$JQ" -e ".head == \"$head\" and .base == \"$head\" and .replace == false" actual
'

test_expect_success 'history --incremental: only the new commits' '
	(
		cd inc &&
		echo "More." >>README.md &&
		git add . && couple_commit 11 Dave "docs: more" &&
		echo "Even more." >>README.md &&
		git add . && couple_commit 12 Erin "docs: even more"
	) &&
	(cd inc && ci-couple history --incremental) >actual &&
	"$JQ" -r "if ._type == \"history\" then \"history \(.replace)\" else .message end" actual >msgs &&
	printf "%s\n" "history false" "docs: even more" "docs: more" >expect &&
	test_cmp expect msgs
'

test_expect_success 'history --incremental: a rewritten history is detected' '
	(cd inc && ci-couple history --incremental | ci-index load) &&
	(
		cd inc &&
		GIT_COMMITTER_DATE="$((1700000000 + 13 * 86400)) +0000" \
			git commit -q --amend -m "docs: even more, amended"
	) &&
	(cd inc && ci-couple history --incremental) >actual 2>err &&
	test_grep "history was rewritten" err &&
	head -n 1 actual | "$JQ" -e ".replace == true and .base == null" &&
	(cd inc && ci-couple history) >expect &&
	test_cmp expect actual
'

test_expect_success 'history --incremental with --no-index is a usage error' '
	(cd inc && test_status 2 ci-couple --no-index history --incremental) 2>err &&
	test_grep "needs the index" err
'

# ---- failure paths -------------------------------------------------------------

test_expect_success 'outside a git repository: exit 3' '
	mkdir -p plain &&
	(cd plain && test_status 3 ci-couple history) >out6 2>err &&
	test_must_be_empty out6 &&
	test_grep "^ci-couple: not a git repository" err
'

test_expect_success 'a repository without commits: exit 1' '
	git init -q empty &&
	(cd empty && test_status 1 ci-couple history) >out7 2>err &&
	test_must_be_empty out7 &&
	test_grep "no commits" err
'

test_expect_success 'a write error is exit 3' '
	(cd repo && test_status 3 ci-couple history >/dev/full) 2>err &&
	test_grep "^ci-couple: " err
'

test_expect_success 'a closed pipe ends the walk quietly' '
	(cd long && ci-couple -j 2 history 2>../err | head -n 1) >first &&
	test_line_count = 1 first &&
	test_must_be_empty err
'

test_expect_success 'history --rev: the history of that commit, as if HEAD were there' '
	sha=$(git -C repo rev-parse HEAD~3) &&
	(cd repo && ci-couple history --rev HEAD~3) >rev.out &&
	head -n 1 rev.out | "$JQ" -e "._type == \"history\" and .head == \"$sha\" and .replace == true" &&
	# the commit records of the whole history from that commit on
	sed 1d out | awk -v s="\"sha\":\"$sha\"" "index(\$0, s) { on = 1 } on" >expect &&
	sed 1d rev.out >actual &&
	test_cmp expect actual &&
	git -C repo rev-list --first-parent HEAD~3 >want &&
	"$JQ" -r "select(._type == \"commit\" and .merged_into == null) | .sha" rev.out >got &&
	test_cmp want got &&
	(cd repo && ci-couple history --rev "$sha") >rev2.out &&
	test_cmp rev.out rev2.out &&
	(cd repo && ci-couple history --rev HEAD) >head.out &&
	test_cmp out head.out
'

test_expect_success 'history --rev: a revision that names no commit; review takes none' '
	(cd repo && test_status 2 ci-couple history --rev no-such-branch) 2>err &&
	test_grep "no-such-branch. names no commit of this repository" err &&
	(cd repo && test_status 2 ci-couple history --rev "HEAD^{tree}") 2>err2 &&
	test_grep "names no commit" err2 &&
	(cd repo && test_status 2 ci-couple coupling --rev no-such-branch) 2>err3 &&
	test_grep "no-such-branch. names no commit of this repository" err3 &&
	(cd repo && test_status 2 ci-couple review --rev HEAD) 2>err4 &&
	test_grep "option .--rev. does not apply to .review." err4
'

# what each analysis says with --rev <commit>: what it says in a clone whose HEAD is there
test_expect_success 'coupling, hotspots, file-history, commits --rev: as in a clone at that commit' '
	git clone -q repo at3 &&
	git -C at3 reset -q --hard HEAD~3 &&
	f=$(git -C at3 ls-files | head -n 1) &&
	for a in "coupling --limit 0" "coupling $f" "hotspots --since all" "file-history $f" "commits fix"; do
		{ (cd repo && ci-couple --no-index $a --rev HEAD~3) >rev.a; test $? -le 1; } &&
		{ (cd at3 && ci-couple --no-index $a) >at3.a; test $? -le 1; } &&
		test_cmp at3.a rev.a &&
		{ (cd repo && ci-couple --no-index $a) >head.a; test $? -le 1; } || return 1
	done &&
	(cd repo && ci-couple --no-index coupling --limit 0 --rev HEAD~3) >rev.c &&
	(cd repo && ci-couple --no-index coupling --limit 0) >head.c &&
	! test_cmp rev.c head.c >/dev/null
'

test_expect_success 'history in a bare repository: the same records' '
	git clone -q --bare repo bare.git &&
	(cd bare.git && ci-couple --no-index history) >bare.out &&
	test_cmp out bare.out &&
	(cd bare.git && ci-couple --no-index history --rev HEAD~3) >bare-rev.out &&
	test_cmp rev.out bare-rev.out &&
	(cd bare.git && test_status 2 ci-couple --no-index review) 2>err &&
	test_grep "diff unstaged: a bare repository has no work tree" err &&
	(cd bare.git && ci-couple --no-index review --diff commit:HEAD) >review.out &&
	head -n 1 review.out | "$JQ" -e "._type == \"review\" and .changed_files > 0"
'

test_expect_success 'history in a bare repository without a config file (as some mirrors are): the same records' '
	git clone -q --bare repo noconf.git &&
	rm noconf.git/config &&
	(cd noconf.git && ci-couple --no-index history) >noconf.out &&
	test_cmp out noconf.out &&
	(cd noconf.git && ci-couple --no-index history --rev HEAD~3) >noconf-rev.out &&
	test_cmp rev.out noconf-rev.out &&
	(cd noconf.git && test_status 2 ci-couple --no-index review) 2>err &&
	test_grep "diff unstaged: a bare repository has no work tree" err
'

test_expect_success 'history with a blob absent (a partial clone): counts -1, a warning, the rest whole' '
	git clone -q --no-local repo partial &&
	# the first version of README.md (changed once after): its objects
	# unpacked, loose, and that blob taken out
	blob=$(git -C repo rev-parse HEAD~8:README.md) &&
	(cd partial && mkdir ../pk && mv .git/objects/pack/* ../pk/ &&
	 for p in ../pk/*.pack; do git unpack-objects -q <"$p" || exit 1; done &&
	 rm .git/objects/$(echo $blob | cut -c1-2)/$(echo $blob | cut -c3-)) &&
	test_must_fail git -C partial cat-file -e $blob &&
	(cd partial && ci-couple --no-index history) >partial.out 2>err &&
	test_grep "2 changed files of these commits have a blob the repository does not have" err &&
	"$JQ" -r "select(._type == \"commit\") | .message as \$m | .files[] |
		select(.added == -1) | \"\(\$m) \(.path) \(.status) \(.deleted)\"" partial.out >actual &&
	printf "%s\n" "docs: usage README.md M -1" "initial parser README.md A -1" >expect &&
	test_cmp expect actual &&
	# all else as in the whole repository
	"$JQ" -c "del(.files[]? | select(.path == \"README.md\"))" partial.out >a &&
	"$JQ" -c "del(.files[]? | select(.path == \"README.md\"))" out >b &&
	test_cmp b a &&
	# the analyses that read git say so too
	(cd partial && ci-couple --no-index hotspots >/dev/null) 2>err2 &&
	test_grep "2 changed files read from git have a blob the repository does not have" err2
'

test_expect_success 'usage errors: exit 2, nothing read' '
	(cd repo && test_status 2 ci-couple) 2>err1 &&
	test_grep "no command" err1 &&
	(cd repo && test_status 2 ci-couple histroy) 2>err2 &&
	test_grep "unknown command .histroy." err2 &&
	(cd repo && test_status 2 ci-couple history extra) 2>err3 &&
	test_grep "unexpected argument .extra." err3 &&
	(cd repo && test_status 2 ci-couple history --budget 10) 2>err4 &&
	test_grep "option .--budget. does not apply to .history." err4 &&
	(cd repo && test_status 2 ci-couple history --max-commits 0) 2>err5 &&
	(cd repo && test_status 2 ci-couple history -j x) 2>err6 &&
	(cd repo && test_status 2 ci-couple history --since) 2>err7 &&
	test_grep "needs a value" err7
'

test_done
