#!/bin/sh
# t0710-couple-coupling: what ci-couple computes from the history of the fixture
# repository of tests/couple-lib.sh (co-changes, a rename, a merge, a huge commit)
# and of copies of it (a rebased branch, a rewritten history): coupling,
# hotspots, file-history, commits and review, each with a golden output; the same
# answers from the index as from git; the failure paths.
#
# Golden files are tests/golden/ci-couple/*; CI_REGEN_GOLDEN=1 rewrites them.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/couple-lib.sh"

test_expect_success 'setup: the fixture repository' '
	make_couple_repo repo
'

# ---- coupling ----------------------------------------------------------------

test_expect_success 'coupling: every pair, as expected' '
	(cd repo && ci-couple coupling) >out &&
	couple_golden coupling.expected out
'

test_expect_success 'coupling: a before b bytewise, sorted by score then path' '
	"$JQ" -r "select(._type == \"coupling\") | [.a < .b, .score, .a, .b] | @tsv" out >rows &&
	! grep -v "^true	" rows &&
	cut -f 2- rows >keys &&
	sort -t "	" -k1,1gr -k2,2 -k3,3 keys >sorted &&
	test_cmp sorted keys
'

test_expect_success 'coupling: the huge commit pairs nothing' '
	! grep "gen/" out &&
	(cd repo && ci-couple coupling --max-files 100) >big &&
	grep -q "gen/t00.h" big
'

test_expect_success 'coupling: renames are followed (src/parse.c is src/parser.c)' '
	"$JQ" -c "select(.a == \"src/parse.h\" and .b == \"src/parser.c\") | {co_changes, a_changes, b_changes}" out >actual &&
	echo "{\"co_changes\":5,\"a_changes\":5,\"b_changes\":6}" >expect &&
	test_cmp expect actual &&
	! grep "\"src/parse.c\"" out
'

test_expect_success 'coupling: a merge counts once, with all its branch changed' '
	"$JQ" -c "select(.a == \"src/lexer.c\") | {b, co_changes}" out >actual &&
	printf "%s\n" "{\"b\":\"src/parser.c\",\"co_changes\":1}" \
		"{\"b\":\"tests/test_parse.c\",\"co_changes\":1}" >expect &&
	test_cmp expect actual
'

test_expect_success 'coupling <file>: its related files, as expected' '
	(cd repo && ci-couple coupling src/parser.c) >one &&
	couple_golden coupling-file.expected one
'

test_expect_success 'coupling <file>: an old name, a path from a subdirectory, an absolute path' '
	(cd repo && ci-couple coupling src/parse.c) >old &&
	test_cmp one old &&
	(cd repo/src && ci-couple coupling parser.c) >sub &&
	test_cmp one sub &&
	(cd repo/tests && ci-couple coupling ../src/./parser.c) >rel &&
	test_cmp one rel &&
	(cd repo && ci-couple coupling "$PWD/src/parser.c") >abs &&
	test_cmp one abs
'

test_expect_success 'coupling: --threshold, --limit, --min-co-changes' '
	(cd repo && ci-couple coupling src/parser.c --threshold 0.9) |
		"$JQ" -r "select(._type == \"coupling\") | .b" >actual &&
	printf "%s\n" src/parse.h tests/test_parse.c >expect &&
	test_cmp expect actual &&
	(cd repo && ci-couple coupling src/parser.c --limit 1) |
		"$JQ" -r "select(._type == \"coupling\") | .b" >actual &&
	echo src/parse.h >expect &&
	test_cmp expect actual &&
	(cd repo && ci-couple coupling --min-co-changes 2) |
		"$JQ" -r "select(._type == \"coupling\") | \"\(.a) \(.b)\"" >actual &&
	printf "%s\n" "src/parse.h src/parser.c" "src/parser.c tests/test_parse.c" "README.md src/main.c" >expect &&
	test_cmp expect actual
'

test_expect_success 'coupling: recency halves the score every --half-life days' '
	(cd repo && ci-couple coupling src/parser.c --half-life 1) |
		"$JQ" -c "select(._type == \"coupling\") | {b, score}" >actual &&
	cat >expect <<-\EOF &&
	{"b":"src/parse.h","score":1}
	{"b":"tests/test_parse.c","score":0.25}
	{"b":"src/lexer.c","score":0.125}
	{"b":"src/main.c","score":0.0005}
	{"b":"README.md","score":0.0003}
	EOF
	test_cmp expect actual
'

test_expect_success 'coupling <file>: no commit touches it: exit 1' '
	(cd repo && test_status 1 ci-couple coupling nope.c) >actual 2>err &&
	test_must_be_empty actual &&
	test_grep "^ci-couple: no commits touch .nope.c." err
'

test_expect_success 'coupling <file>: nothing above the threshold: exit 1' '
	(cd repo && test_status 1 ci-couple coupling src/parser.c --threshold 1 --min-co-changes 9) >actual &&
	"$JQ" -e "._type == \"related\" and .count == 0" actual
'

test_expect_success 'coupling: usage errors' '
	(cd repo && test_status 2 ci-couple coupling a b) 2>err &&
	(cd repo && test_status 2 ci-couple coupling --threshold 2) 2>err &&
	test_grep "from 0 to 1" err &&
	(cd repo && test_status 2 ci-couple coupling --half-life 0) 2>err &&
	(cd repo && test_status 2 ci-couple coupling --author x) 2>err &&
	test_grep "does not apply" err &&
	(cd repo && test_status 3 ci-couple coupling /etc/passwd) 2>err &&
	test_grep "outside the repository" err
'

# ---- a rebased branch ------------------------------------------------------------

test_expect_success 'setup: a branch rebased onto main, then fast-forwarded' '
	cp -R repo rb && (
		cd rb &&
		git checkout -q -b topic HEAD~2 &&
		mkdir docs && echo "Guide." >docs/guide.md && echo "/* guide */" >>src/main.c &&
		git add . && couple_commit 11 Dave "guide: first draft" &&
		echo "Options." >>docs/guide.md && echo "/* options */" >>src/main.c &&
		git add . && couple_commit 12 Dave "guide: options" &&
		git rev-parse HEAD HEAD~1 >../orig &&
		GIT_COMMITTER_DATE="$((1700000000 + 13 * 86400)) +0000" git rebase -q main &&
		git checkout -q main && git merge -q --ff-only topic
	)
'

test_expect_success 'rebase: the rebased commits count, the originals do not' '
	(cd rb && ci-couple history) >rb.hist &&
	! grep -f orig rb.hist &&
	(cd rb && ci-couple coupling docs/guide.md) |
		"$JQ" -c "select(._type == \"coupling\") | {b, co_changes, last}" >actual &&
	echo "{\"b\":\"src/main.c\",\"co_changes\":2,\"last\":$((1700000000 + 13 * 86400))}" >expect &&
	test_cmp expect actual
'

# ---- hotspots ---------------------------------------------------------------------

test_expect_success 'hotspots: as expected' '
	(cd repo && ci-couple hotspots) >hot &&
	couple_golden hotspots.expected hot
'

test_expect_success 'hotspots: complexity counts branches and their nesting' '
	"$JQ" -r "select(._type == \"hotspot\") | \"\(.path) \(.complexity)\"" hot >actual &&
	printf "%s\n" "src/parser.c 12" "src/lexer.c 4" "src/main.c 3" >expect &&
	test_cmp expect actual
'

test_expect_success 'hotspots: --since, --limit, --threshold' '
	(cd repo && ci-couple hotspots --since all) >all &&
	sed 1d hot >a && sed 1d all >b && test_cmp a b &&
	(cd repo && ci-couple hotspots --since "3 days ago") |
		"$JQ" -r "select(._type == \"hotspot\") | \"\(.path) \(.churn) \(.commits)\"" >actual &&
	printf "%s\n" "src/parser.c 11 2" "src/lexer.c 15 1" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-couple hotspots --limit 1) | "$JQ" -r "select(._type == \"hotspot\") | .path" >actual &&
	echo src/parser.c >expect &&
	test_cmp expect actual &&
	(cd repo && test_status 1 ci-couple hotspots --since 2030-01-01) >actual &&
	"$JQ" -e ".count == 0" actual
'

test_expect_success 'hotspots: a bad --since is a usage error' '
	(cd repo && test_status 2 ci-couple hotspots --since "last tuesday") 2>err &&
	test_grep "cannot read .last tuesday." err
'

# ---- file-history ------------------------------------------------------------------

test_expect_success 'file-history: as expected, renames followed' '
	(cd repo && ci-couple file-history src/parser.c) >fh &&
	couple_golden file-history.expected fh &&
	(cd repo/src && ci-couple file-history parse.c) >fh2 &&
	test_cmp fh fh2
'

test_expect_success 'file-history: --limit keeps the summary whole' '
	(cd repo && ci-couple file-history src/parser.c --limit 2) >fh3 &&
	test_line_count = 3 fh3 &&
	head -n 1 fh >a && head -n 1 fh3 >b && test_cmp a b
'

test_expect_success 'file-history: unknown file, missing file: exit 1, exit 2' '
	(cd repo && test_status 1 ci-couple file-history nope.c) >actual 2>err &&
	test_grep "no commits touch .nope.c." err &&
	(cd repo && test_status 2 ci-couple file-history) 2>err &&
	test_grep "missing <file>" err
'

# ---- commits -------------------------------------------------------------------------

test_expect_success 'commits: BM25 over messages, as expected' '
	(cd repo && ci-couple commits "parser crash") >cs &&
	couple_golden commits.expected cs
'

test_expect_success 'commits: the commits a merge brought in are found, --author filters' '
	(cd repo && ci-couple commits lexer --author BOB) |
		"$JQ" -r "select(._type == \"commit\") | .message" >actual &&
	printf "%s\n" "lexer: tests" "lexer: count blanks" >expect &&
	test_cmp expect actual
'

test_expect_success 'commits: --file, with renames and directories' '
	(cd repo && ci-couple commits parse --file src/parse.c) |
		"$JQ" -r "select(._type == \"commit\") | .message" >actual &&
	printf "%s\n" "parse: handle numbers" "parse: strings, with tests" "rename parse.c to parser.c" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-couple commits parse --file tests) |
		"$JQ" -r "select(._type == \"commit\") | .message" >actual &&
	echo "parse: strings, with tests" >expect &&
	test_cmp expect actual
'

test_expect_success 'commits: no match: exit 1; no words: exit 2' '
	(cd repo && test_status 1 ci-couple commits zebra) >actual &&
	"$JQ" -e ".count == 0" actual &&
	(cd repo && test_status 2 ci-couple commits "") 2>err &&
	(cd repo && test_status 2 ci-couple commits "...") 2>err &&
	test_grep "has no words" err
'

# ---- review --------------------------------------------------------------------------

test_expect_success 'review: the last commit, as expected' '
	(cd repo && ci-couple review --diff commit:HEAD) >rv &&
	couple_golden review-commit.expected rv
'

test_expect_success 'review: chunks overlap the changed lines, coupled files follow' '
	"$JQ" -r "select(._type == \"review_chunk\") | \"\(.reason) \(.path) \(.name)\"" rv >actual &&
	cat >expect <<-\EOF &&
	changed src/parse.h null
	changed src/parser.c parse
	changed src/parser.c lex_all
	changed src/parser.c parse_empty
	coupled tests/test_parse.c null
	coupled tests/test_parse.c main
	coupled src/lexer.c null
	coupled src/lexer.c lex
	coupled src/lexer.c lex_reset
	coupled src/main.c null
	coupled src/main.c main
	coupled README.md Example
	EOF
	test_cmp expect actual
'

test_expect_success 'review: the budget is kept, chunks left out are counted' '
	(cd repo && ci-couple review --diff commit:HEAD --budget 10) >small &&
	"$JQ" -s "[.[] | select(._type == \"review_chunk\") | .end_line - .start_line + 1] | add" small >lines &&
	test "$(cat lines)" -le 10 &&
	head -n 1 small | "$JQ" -e ".budget == 10 and .omitted == 2 and .lines == $(cat lines)"
'

test_expect_success 'review --depth 0: only the changed chunks' '
	(cd repo && ci-couple review --diff commit:HEAD --depth 0) >d0 &&
	"$JQ" -r "select(._type == \"review_chunk\") | .reason" d0 | sort -u >actual &&
	echo changed >expect &&
	test_cmp expect actual
'

test_expect_success 'review: unstaged and staged changes' '
	cp -R repo rv2 && (
		cd rv2 &&
		sed -i "s/n = n \* 10/n = n * 10 + 0/" src/parser.c &&
		ci-couple review --budget 40 >../unstaged &&
		git add src/parser.c &&
		test_status 1 ci-couple review &&
		ci-couple review --diff staged --budget 40 >../staged
	) &&
	couple_golden review-unstaged.expected unstaged &&
	sed 1d unstaged >a && sed 1d staged >b && test_cmp a b
'

test_expect_success 'review: a branch, ranges' '
	cp -R repo rv3 && (
		cd rv3 &&
		git checkout -q -b side &&
		echo "int lex_more(void) { return 1; }" >>src/lexer.c &&
		git add . && couple_commit 11 Bob "lexer: more" &&
		git checkout -q main &&
		ci-couple review --diff branch:side >../branch &&
		ci-couple review --diff commit:main...side >../three-dot &&
		ci-couple review --diff commit:main..side >../two-dot &&
		ci-couple review --diff commit:side >../onecommit
	) &&
	couple_golden review-branch.expected branch &&
	for f in three-dot two-dot onecommit; do
		sed 1d branch >a && sed 1d $f >b && test_cmp a b || return 1
	done
'

test_expect_success 'review: nothing to review: exit 1; a bad spec or revision: exit 2' '
	(cd repo && test_status 1 ci-couple review) >actual 2>err &&
	test_must_be_empty actual &&
	test_grep "no changes to review" err &&
	(cd repo && test_status 2 ci-couple review --diff HEAD) 2>err &&
	test_grep "expected unstaged, staged" err &&
	(cd repo && test_status 2 ci-couple review --diff commit:nope) 2>err &&
	test_grep "unknown revision" err &&
	(cd repo && test_status 2 ci-couple review --diff branch:nope) 2>err &&
	test_grep "unknown branch" err &&
	(cd repo && test_status 2 ci-couple review --depth 4) 2>err
'

# ---- the index ---------------------------------------------------------------------

if test_have_prog sqlite3; then

test_expect_success 'index: ci-index load stores the history ci-couple reads back' '
	cp -R repo ix &&
	(cd ix && ci-couple history | ci-index load) &&
	(cd ix && ci-couple -v coupling src/parser.c) >actual 2>err &&
	test_grep "from index$" err &&
	"$JQ" -c "del(.source)" actual >a &&
	"$JQ" -c "del(.source)" one >b &&
	test_cmp b a
'

test_expect_success 'index: with the columns, the same answers as git' '
	(cd ix && couple_index_upgrade) &&
	for c in "coupling" "coupling src/parser.c" "hotspots" "file-history src/parser.c" \
		"commits crash" "review --diff commit:HEAD"; do
		# shellcheck disable=SC2086 # words on purpose
		(cd ix && ci-couple -v $c) >from-index 2>err &&
		test_grep "from index$" err &&
		# shellcheck disable=SC2086
		(cd ix && ci-couple --no-index $c) >from-git &&
		# commits: why there is no semantic signal differs (no vectors, no index)
		"$JQ" -c "del(.source, .semantic)" from-index >a &&
		"$JQ" -c "del(.source, .semantic)" from-git >b &&
		test_cmp b a || return 1
	done
'

test_expect_success 'index: newer commits come from git' '
	(
		cd ix &&
		echo "/* more */" >>src/parser.c && echo "int more;" >>src/parse.h &&
		git add . && couple_commit 11 Dave "parser: more"
	) &&
	(cd ix && ci-couple -v coupling src/parser.c) >from-index 2>err &&
	test_grep "from index+git$" err &&
	(cd ix && ci-couple --no-index coupling src/parser.c) >from-git &&
	"$JQ" -c "del(.source)" from-index >a &&
	"$JQ" -c "del(.source)" from-git >b &&
	test_cmp b a
'

test_expect_success 'index: commits left over from a rewritten history are ignored' '
	(cd ix && ci-couple history --incremental | ci-index load && couple_index_upgrade) &&
	(
		cd ix &&
		GIT_COMMITTER_DATE="$((1700000000 + 12 * 86400)) +0000" \
			git commit -q --amend -m "parser: more, amended"
	) &&
	(cd ix && ci-couple coupling src/parser.c) >stale 2>err &&
	test_grep "rewritten" err &&
	(cd ix && ci-couple history | ci-index load && couple_index_upgrade) &&
	(cd ix && ci-couple -v coupling src/parser.c) >from-index 2>err &&
	test_grep "from index$" err &&
	(cd ix && ci-couple --no-index coupling src/parser.c) >from-git &&
	"$JQ" -c "del(.source)" from-index >a &&
	"$JQ" -c "del(.source)" from-git >b &&
	test_cmp b a
'

else
	test_skip 'index: reading history from the index' 'the sqlite3 shell is not installed'
fi

test_done
