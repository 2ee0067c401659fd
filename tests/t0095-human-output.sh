#!/bin/sh
# Records for people: on a terminal ci-rank, ci-refs and ci-couple write text
# grouped by file (as rg's headings) and commits a line each (as git log), in
# colour unless NO_COLOR is set; --json or CI_FORMAT=json keeps NDJSON there, and
# a pipe always gets NDJSON.  The terminal is script(1)'s.
. "$(dirname "$0")/lib.sh"

if ! test_have_prog script; then
	test_skip 'human output' 'script(1) is not installed (Debian package bsdutils)'
	test_done
fi

# tty <command>...: run it in repo with a terminal as its standard output; its
# text in out
tty() {
	(cd repo && script -qec "$*" /dev/null) | tr -d '\r' >out
}

test_expect_success 'setup: a repository, its history and index' '
	git init -q repo &&
	printf "int parse_header(const char *s)\n{\n\treturn s[0];\n}\n" >repo/a.c &&
	printf "int use(void)\n{\n\treturn parse_header(\"x\");\n}\n" >repo/b.c &&
	(cd repo && git add -A && git commit -q -m "feat: parse headers" &&
	 CI_INDEX_SERVER=0 ci-index build)
'

test_expect_success 'ci-refs on a terminal: a heading per file, line: text' '
	tty env NO_COLOR=1 ci-refs refs parse_header &&
	printf "%s\n" b.c "3: [reference] return parse_header(\"x\");" >expect &&
	test_cmp expect out
'

test_expect_success 'ci-rank on a terminal: file headings, lines, kind, name, score; the summary last' '
	tty env NO_COLOR=1 CI_RANK_SERVER=0 ci-rank --limit 2 parse header &&
	head -2 out >first &&
	test_grep "^a.c$" first &&
	test_grep "^1-4 function parse_header  [0-9.]*$" first &&
	tail -1 out | grep -q "^query: parse header .*quality: " &&
	! grep -q "_type" out
'

test_expect_success 'ci-couple commits on a terminal: one line a commit, as git log' '
	tty env NO_COLOR=1 ci-couple commits headers &&
	sha=$(git -C repo rev-parse HEAD | cut -c1-10) &&
	head -1 out >first &&
	echo "$sha 2023-11-14 A U Thor  feat: parse headers" >expect &&
	test_cmp expect first &&
	tail -1 out | grep -q "^query: headers  count: 1"
'

test_expect_success 'ci search on a terminal: the same text as ci-rank, the file as heading' '
	tty env NO_COLOR=1 CI_RANK_SERVER=0 ci search --limit 2 parse header &&
	head -2 out >first &&
	test_grep "^a.c$" first &&
	test_grep "^1-4 function parse_header  [0-9.]*$" first &&
	! grep -q "_type" out
'

test_expect_success 'colour on a terminal unless NO_COLOR is set' '
	tty ci-refs refs parse_header &&
	grep -q "$(printf "\033")\[35mb.c" out &&
	tty env NO_COLOR=1 ci-refs refs parse_header &&
	! grep -q "$(printf "\033")" out
'

test_expect_success '--json and CI_FORMAT=json keep NDJSON on a terminal; a pipe gets NDJSON' '
	tty ci-refs --json refs parse_header &&
	jq -e -s "length == 1 and .[0]._type == \"occurrence\"" out &&
	tty env CI_FORMAT=json ci-couple commits headers &&
	jq -e -s "map(._type) == [\"commit_search\", \"commit\"]" out &&
	(cd repo && ci-refs refs parse_header) >piped &&
	jq -e -s "length == 1 and .[0]._type == \"occurrence\"" piped
'

test_done
