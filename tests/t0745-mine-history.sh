#!/bin/sh
# t0745-mine-history: scripts/mine-history on a generated repository whose
# history holds one commit of each kind: two real fixes (a method, a function;
# with a test and a new file beside), and what must be left out: a version
# bump (said three ways), a short message, a bot's commit, a merge, a
# whitespace-only change, a rename, a docs-only change and a commit over
# --max-files files.  Checks the records (query, base, relevant files, the old
# side's functions and lines), the count of what was left out, --limit,
# determinism and the errors.

. "$(dirname "$0")/lib.sh"

mine=$CI_SRC_DIR/scripts/mine-history
if ! test_have_prog python3 || ! test_have_lang python; then
	test_skip 'scripts/mine-history' 'no python3 or no python grammar'
	test_done
fi
CI_CHUNK=$CI_BUILD_DIR/ci-chunk
export CI_CHUNK
GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.org
GIT_COMMITTER_NAME=Dev GIT_COMMITTER_EMAIL=dev@example.org
GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_DATE

test_expect_success 'setup: a history of fixes and of what is no task' '
	git init -q -b main repo && cd repo &&
	mkdir shop tests docs &&
	cat >shop/core.py <<-\EOF &&
	"""Carts."""


	class Cart:
	    def __init__(self):
	        self.items = []

	    def add(self, item, price):
	        self.items.append((item, price))

	    def total(self):
	        return sum(p for _, p in self.items)


	def helper(x):
	    return x * 2
	EOF
	echo "__version__ = \"1.0\"" >shop/__init__.py &&
	echo "def test_total(): pass" >tests/test_core.py &&
	echo "# Shop" >docs/guide.md &&
	git add . && git commit -q -m "Initial import of the shop package" &&
	git rev-parse HEAD >../c1 &&
	sed -i "s/return sum(p for _, p in self.items)/return round(sum(p for _, p in self.items), 2)/" shop/core.py &&
	echo "def test_round(): pass" >>tests/test_core.py &&
	git commit -q -am "Round the cart total to cents" \
		-m "Totals of many items showed float noise such as 0.30000000000000004." \
		-m "Signed-off-by: Dev <dev@example.org>" &&
	git rev-parse HEAD >../c2 &&
	echo "__version__ = \"1.1\"" >shop/__init__.py &&
	git commit -q -am "Bump version to 1.1" &&
	echo "__version__ = \"1.2\"" >shop/__init__.py &&
	git commit -q -am "Update version to 1.2" &&
	echo "1.2.1: totals rounded" >CHANGES.md && echo "__version__ = \"1.2.1\"" >shop/__init__.py &&
	git add . && git commit -q -m "Add 1.2.1 changelog for the rounding of totals" &&
	sed -i "s/x \* 2/x * 3/" shop/core.py && git commit -q -am "fix" &&
	sed -i "s/x \* 3/x * 4/" shop/core.py &&
	git -c user.name="dependabot[bot]" commit -q -am "Update the helper factor for the new pricing rules" \
		--author="dependabot[bot] <bot@example.org>" &&
	git checkout -q -b side && sed -i "s/x \* 4/x * 5/" shop/core.py &&
	git commit -q -am "Change the helper factor on a side branch of work" &&
	git checkout -q main && git merge -q --no-ff -m "Merge the side branch into main for release" side &&
	sed -i "s/^    return x \* 5/    return  x * 5/" shop/core.py &&
	git commit -q -am "Adjust spacing in the helper so that it reads well" &&
	git mv shop/__init__.py shop/__about__.py &&
	git commit -q -m "Move the version into its own module of the package" &&
	echo "More words." >>docs/guide.md &&
	git commit -q -am "Explain how carts compute their totals in the guide" &&
	for i in 1 2 3 4 5 6; do echo "V = $i" >shop/m$i.py; done &&
	sed -i "s/x \* 5/x * 6/" shop/core.py &&
	git add . && git commit -q -m "Spread the constants over many modules for the plugins" &&
	git rev-parse HEAD >../c10 &&
	sed -i "s/x \* 6/max(x, 0) * 6/" shop/core.py && echo "def new(): pass" >shop/new.py &&
	git add . && git commit -q -m "Keep negative amounts out of helper results" &&
	git rev-parse HEAD >../c11
'

test_expect_success 'the fixes, newest first, and nothing else' '
	"$mine" --max-files 5 repo/.git >out.jsonl 2>err &&
	"$JQ" -c "[.repo, .query, .relevant_files, .relevant_spans]" out.jsonl >got &&
	cat >want <<-\EOF &&
	["repo","Keep negative amounts out of helper results",["shop/core.py"],{"shop/core.py":["helper"]}]
	["repo","Round the cart total to cents\n\nTotals of many items showed float noise such as 0.30000000000000004.",["shop/core.py"],{"shop/core.py":["Cart.total"]}]
	EOF
	test_cmp want got
'

test_expect_success 'the base is the parent; the old lines are the hunks'"'"' old side' '
	"$JQ" -r "select(.query | startswith(\"Round\")) | .base_commit" out.jsonl >got &&
	test_cmp c1 got &&
	"$JQ" -r "select(.query | startswith(\"Keep\")) | .base_commit" out.jsonl >got &&
	test_cmp c10 got &&
	"$JQ" -c "select(.query | startswith(\"Round\")) | .relevant_lines" out.jsonl >got &&
	echo "{\"shop/core.py\":[[12,12]]}" >want && test_cmp want got &&
	"$JQ" -r "select(.query | startswith(\"Keep\")) | .id" out.jsonl >got &&
	echo "repo-$(cut -c1-10 c11)" >want && test_cmp want got
'

test_expect_success 'what was left out, by reason' '
	test_grep "repo: 2 examples" err &&
	test_grep "bot 1" err &&
	test_grep "short message 1" err &&
	test_grep "release, formatting, docs or chore 3" err &&
	test_grep "whitespace only 1" err &&
	test_grep "rename only 1" err &&
	test_grep "no source file modified 1" err &&
	test_grep "too many files 1" err
'

test_expect_success '--limit, --repo, and the same output twice' '
	"$mine" --limit 1 --repo acme/shop repo/.git >one.jsonl 2>/dev/null &&
	test_line_count = 1 one.jsonl &&
	"$JQ" -r ".id" one.jsonl >got && echo "acme__shop-$(cut -c1-10 c11)" >want && test_cmp want got &&
	"$mine" --max-files 5 repo/.git >again.jsonl 2>/dev/null && test_cmp out.jsonl again.jsonl
'

test_expect_code 2 'no such repository' '"$mine" nowhere 2>err'
test_expect_success '... says so' 'test_grep "no such repository" err'
test_expect_code 1 'no example at all is exit 1' '
	git init -q empty && (cd empty && echo x >a.txt && git add a.txt && git commit -q -m "Add a text file with one line") &&
	"$mine" empty 2>err
'

test_done
