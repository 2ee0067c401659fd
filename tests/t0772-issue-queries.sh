#!/bin/sh
# t0772-issue-queries: scripts/issue-queries, the issue form of mined examples:
# on a small mined file, a manifest and a directory of texts, the records of
# the manifest come out in the input's order with the issue's text as the
# query and everything else of the commit kept, --kind filters, the output is
# deterministic, and bad input (a missing text, a url of another repository, a
# kind the url contradicts, a record of another repository, a bad header) is
# an error with a message.  The committed bench/eval/issue-manifest.tsv is
# read too: every row names its repository and agrees with its url.

. "$(dirname "$0")/lib.sh"

iq=$CI_SRC_DIR/scripts/issue-queries
if ! test_have_prog python3; then
	test_skip 'scripts/issue-queries' 'no python3'
	test_done
fi

test_expect_success 'setup: three mined records, a manifest of two, their texts' '
	cat >mined.jsonl <<-\EOF &&
	{"id": "o__a-1", "repo": "o/a", "base_commit": "b1", "commit": "c1", "query": "Fix the total (#7)", "relevant_files": ["a/core.py"], "relevant_spans": {"a/core.py": ["total"]}, "relevant_lines": {"a/core.py": [[3, 4]]}}
	{"id": "o__a-2", "repo": "o/a", "base_commit": "b2", "commit": "c2", "query": "Tidy up", "relevant_files": ["a/util.py"], "relevant_spans": {}, "relevant_lines": {}}
	{"id": "p__b-3", "repo": "p/b", "base_commit": "b3", "commit": "c3", "query": "Add helper, fixes #12", "relevant_files": ["b/x.js"], "relevant_spans": {}, "relevant_lines": {}}
	EOF
	printf "id\trepository\turl\tkind\tlicense\n" >man.tsv &&
	printf "p__b-3\tp/b\thttps://github.com/p/b/issues/12\tissue\tMIT\n" >>man.tsv &&
	printf "o__a-1\to/a\thttps://github.com/o/a/pull/7\tpr\tBSD-3-Clause\n" >>man.tsv &&
	mkdir texts &&
	printf "Total is off by a cent\n\nThe cart total shows 0.30000000000000004.\n" >texts/o__a-1.txt &&
	printf "Need a helper\n\nA helper for x would help.\n\n" >texts/p__b-3.txt
'

test_expect_success 'the manifest records come out with the issue text as the query' '
	python3 "$iq" --manifest man.tsv --texts texts mined.jsonl >out.jsonl 2>err &&
	test_line_count = 2 out.jsonl &&
	test_must_be_empty err &&
	"$JQ" -r .id out.jsonl >ids &&
	printf "o__a-1\np__b-3\n" >expect &&
	test_cmp expect ids &&
	test "$("$JQ" -r "select(.id==\"o__a-1\") | .query" out.jsonl)" = "Total is off by a cent

The cart total shows 0.30000000000000004." &&
	test "$("$JQ" -r "select(.id==\"p__b-3\") | .query" out.jsonl)" = "Need a helper

A helper for x would help." &&
	test "$("$JQ" -r "select(.id==\"o__a-1\") | [.issue_kind, .issue_url] | join(\" \")" out.jsonl)" = \
		"pr https://github.com/o/a/pull/7" &&
	test "$("$JQ" -r "select(.id==\"p__b-3\") | .issue_kind" out.jsonl)" = issue
'

test_expect_success 'the commit side of a record is kept as it was' '
	"$JQ" -c "del(.query, .issue_url, .issue_kind)" out.jsonl >kept &&
	"$JQ" -c "select(.id != \"o__a-2\") | del(.query)" mined.jsonl >expect &&
	test_cmp expect kept
'

test_expect_success '--kind keeps the rows of one kind; the output is deterministic' '
	python3 "$iq" --manifest man.tsv --texts texts --kind issue mined.jsonl >issue.jsonl &&
	test "$("$JQ" -r .id issue.jsonl)" = p__b-3 &&
	python3 "$iq" --manifest man.tsv --texts texts --kind pr mined.jsonl >pr.jsonl &&
	test "$("$JQ" -r .id pr.jsonl)" = o__a-1 &&
	python3 "$iq" --manifest man.tsv --texts texts mined.jsonl >again.jsonl &&
	test_cmp out.jsonl again.jsonl
'

test_expect_success 'rows whose record is not in the input are counted on stderr' '
	head -n 1 mined.jsonl >one.jsonl &&
	python3 "$iq" --manifest man.tsv --texts texts one.jsonl >one.out 2>err &&
	test_line_count = 1 one.out &&
	grep "1 manifest rows not in the input" err
'

test_expect_code 1 'a missing text is an error' '
	rm texts/p__b-3.txt &&
	python3 "$iq" --manifest man.tsv --texts texts mined.jsonl >/dev/null 2>err
'

test_expect_success 'it says which text is missing' '
	grep "no text for p__b-3" err &&
	printf "Need a helper\n" >texts/p__b-3.txt
'

test_expect_code 1 'a url of another repository is an error' '
	sed "s#https://github.com/p/b/issues/12#https://github.com/q/b/issues/12#" man.tsv >bad.tsv &&
	python3 "$iq" --manifest bad.tsv --texts texts mined.jsonl >/dev/null 2>err
'

test_expect_success 'it names the two repositories' '
	grep "the url names q/b, the row p/b" err
'

test_expect_code 1 'a kind the url contradicts is an error' '
	sed "s#/pull/7\tpr#/pull/7\tissue#" man.tsv >bad.tsv &&
	grep -q "$(printf "pull/7\tissue")" bad.tsv &&
	python3 "$iq" --manifest bad.tsv --texts texts mined.jsonl >/dev/null 2>err
'

test_expect_code 1 'a record of another repository than its row is an error' '
	sed "s#o__a-1\to/a\thttps://github.com/o/a#o__a-1\tp/b\thttps://github.com/p/b#" man.tsv >bad.tsv &&
	python3 "$iq" --manifest bad.tsv --texts texts mined.jsonl >/dev/null 2>err
'

test_expect_success 'it says the record is of o/a' '
	grep "o__a-1 is of o/a, the manifest says p/b" err
'

test_expect_code 1 'a manifest without its header is an error' '
	tail -n +2 man.tsv >bad.tsv &&
	python3 "$iq" --manifest bad.tsv --texts texts mined.jsonl >/dev/null 2>err
'

test_expect_code 1 'a line that is no JSON is an error' '
	printf "not json\n" >bad.jsonl &&
	python3 "$iq" --manifest man.tsv --texts texts bad.jsonl >/dev/null 2>err
'

test_expect_code 2 'no --texts is a usage error' '
	python3 "$iq" --manifest man.tsv mined.jsonl >/dev/null 2>err
'

test_expect_success 'the committed manifest is well formed' '
	: >empty.jsonl && mkdir -p none &&
	python3 "$iq" --texts none empty.jsonl >none.out 2>err &&
	test_must_be_empty none.out &&
	rows=$(($(wc -l <"$CI_SRC_DIR/bench/eval/issue-manifest.tsv") - 1)) &&
	test "$rows" -ge 40 &&
	grep "$rows manifest rows not in the input" err
'

test_done
