#!/bin/sh
# t0746-issue-form: scripts/issue-form on a generated repository's examples:
# a fix with a new test becomes an issue-like query (the message, then the
# test's added lines, each hunk dedented, import lines left out unless
# --keep-imports), a fix without test lines is left out, --lines caps the
# code, the same output twice, and the errors (no repository, a bad record).

. "$(dirname "$0")/lib.sh"

form=$CI_SRC_DIR/scripts/issue-form
if ! test_have_prog python3; then
	test_skip 'scripts/issue-form' 'no python3'
	test_done
fi
GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.org
GIT_COMMITTER_NAME=Dev GIT_COMMITTER_EMAIL=dev@example.org
GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_DATE

test_expect_success 'setup: two fixes, one with a new test' '
	mkdir repos && git init -q -b main repos/acme+shop && cd repos/acme+shop &&
	mkdir shop tests &&
	printf "def total(xs):\n    return sum(xs)\n\n\ndef helper(x):\n    return x * 2\n" >shop/core.py &&
	printf "class TestCore:\n    def test_one(self):\n        pass\n" >tests/test_core.py &&
	git add . && git commit -q -m "Initial import" && git rev-parse HEAD >../../c1 &&
	sed -i "s/return sum(xs)/return round(sum(xs), 2)/" shop/core.py &&
	printf "from shop.core import total\n" >tests/test_round.py &&
	printf "\n    def test_round(self):\n        assert total([0.1, 0.2]) == 0.3\n" >>tests/test_core.py &&
	git add . && git commit -q -m "Round totals to cents" && git rev-parse HEAD >../../c2 &&
	sed -i "s/x \* 2/x * 3/" shop/core.py &&
	git commit -q -am "Triple the helper factor" && git rev-parse HEAD >../../c3 &&
	cd ../.. &&
	for c in 2 3; do
		p=$((c - 1)) &&
		"$JQ" -cn --arg b "$(cat c$p)" --arg c "$(cat c$c)" --arg n $c \
			"{id: (\"acme__shop-\" + \$n), repo: \"acme/shop\", base_commit: \$b, commit: \$c,
			  query: \"q\(\$n)\", relevant_files: [\"shop/core.py\"], relevant_spans: {}}" || return 1
	done >examples.jsonl
'

test_expect_success 'a fix with a new test: its message and the test code, imports left out' '
	"$form" repos examples.jsonl >out.jsonl 2>err &&
	test_line_count = 1 out.jsonl &&
	"$JQ" -r ".id" out.jsonl >got && echo "acme__shop-2#t" >want && test_cmp want got &&
	"$JQ" -r ".query" out.jsonl >got &&
	cat >want <<-\EOF &&
	q2

	For example:

	```
	def test_round(self):
	    assert total([0.1, 0.2]) == 0.3
	```

	EOF
	test_cmp want got &&
	"$JQ" -c "[.relevant_files, .base_commit == \"$(cat c1)\"]" out.jsonl >got &&
	echo "[[\"shop/core.py\"],true]" >want && test_cmp want got &&
	test_grep "1 of 2 examples had test lines" err
'

test_expect_success '--keep-imports, --lines, and the same output twice' '
	"$form" --keep-imports repos examples.jsonl >imp.jsonl 2>/dev/null &&
	"$JQ" -r ".query" imp.jsonl >got && test_grep "^from shop.core import total" got &&
	"$form" --lines 1 repos examples.jsonl >one.jsonl 2>/dev/null &&
	"$JQ" -r ".query" one.jsonl >got && test_grep "^def test_round" got &&
	! grep -q "assert total" got &&
	"$form" repos examples.jsonl >again.jsonl 2>/dev/null && test_cmp out.jsonl again.jsonl
'

test_expect_code 1 'no example with test lines' '
	grep "acme__shop-3" examples.jsonl >three.jsonl && "$form" repos three.jsonl >none 2>err'
test_expect_success '... writes nothing and says so' '
	test_must_be_empty none && test_grep "0 of 1 examples had test lines" err'
test_expect_code 3 'no repository for an example' '"$form" nowhere examples.jsonl 2>err'
test_expect_success '... says so' 'test_grep "no repository for acme/shop" err'
test_expect_code 2 'a record that is not an example' '
	echo "{\"id\": 1}" >bad.jsonl && "$form" repos bad.jsonl 2>err'
test_expect_success '... says which line' 'test_grep "bad.jsonl:1: not an example" err'
test_expect_code 2 'a bad --lines' '"$form" --lines 0 repos examples.jsonl 2>err'

test_done
