#!/bin/sh
# t0625-embed-history-pairs: scripts/embed-history-pairs turns mine-history's
# examples into ci-code's training pairs (commit message, changed function):
# on a generated repository whose fix touches one method of three, the pair
# holds that method as it was before the fix, with the message as query and
# the commit as group; a held-out repository's pairs are "heldout" and its
# pool holds every chunk of its source files but the tests'; determinism;
# a missing input is an error.

. "$(dirname "$0")/lib.sh"

mine=$CI_SRC_DIR/scripts/mine-history
pairs=$CI_SRC_DIR/scripts/embed-history-pairs
if ! test_have_prog python3 || ! test_have_lang python; then
	test_skip 'scripts/embed-history-pairs' 'no python3 or no python grammar'
	test_done
fi
CI_CHUNK=$CI_BUILD_DIR/ci-chunk
export CI_CHUNK
GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.org
GIT_COMMITTER_NAME=Dev GIT_COMMITTER_EMAIL=dev@example.org
GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_DATE

test_expect_success 'setup: a repository with one fix, mined' '
	git init -q -b main repo && cd repo &&
	mkdir shop tests &&
	cat >shop/core.py <<-\EOF &&
	class Cart:
	    def add(self, item, price):
	        self.items.append((item, price))

	    def total(self):
	        return sum(p for _, p in self.items)


	def helper(x):
	    return x * 2
	EOF
	echo "def test_total(): pass" >tests/test_core.py &&
	git add . && git commit -q -m "Initial import of the shop package" &&
	sed -i "s/return sum(p for _, p in self.items)/return round(sum(p for _, p in self.items), 2)/" shop/core.py &&
	echo "def test_round(): pass" >>tests/test_core.py &&
	git commit -q -am "Round the cart total to cents" \
		-m "Totals of many items showed float noise such as 0.30000000000000004." &&
	cd .. &&
	python3 "$mine" --repo acme/shop repo >mined.jsonl &&
	test_line_count = 1 mined.jsonl
'

test_expect_success 'the changed method, before the fix, with the message and the commit' '
	python3 "$pairs" --ci-chunk "$CI_CHUNK" --out out mined.jsonl=repo/.git &&
	test_line_count = 1 out/history-pairs.jsonl &&
	"$JQ" -r "[.unit, .split, .path, .name, .lang, (.group == \"$("$JQ" -r .id mined.jsonl)\")] | @tsv" \
		out/history-pairs.jsonl >actual &&
	printf "acme/shop\ttrain\tshop/core.py\ttotal\tpython\ttrue\n" >expect &&
	test_cmp expect actual &&
	"$JQ" -r .query out/history-pairs.jsonl >query &&
	grep "^Round the cart total to cents" query &&
	grep "float noise" query &&
	"$JQ" -r .text out/history-pairs.jsonl >text &&
	grep "return sum(p for _, p in self.items)" text &&
	! grep round text &&
	test_line_count = 0 out/heldout-pool.jsonl &&
	printf "acme/shop\ttrain\t1\t1\n" >expect &&
	sed -n 2p out/history-manifest.tsv | cut -f1-4 >actual &&
	test_cmp expect actual
'

test_expect_success 'held out: split heldout, a pool of every source chunk but the tests, same again' '
	python3 "$pairs" --ci-chunk "$CI_CHUNK" --out held --heldout acme/shop mined.jsonl=repo/.git &&
	"$JQ" -r .split held/history-pairs.jsonl >actual &&
	echo heldout >expect &&
	test_cmp expect actual &&
	"$JQ" -r "[.path, .name] | @tsv" held/heldout-pool.jsonl | sort >actual &&
	printf "shop/core.py\tCart\nshop/core.py\tadd\nshop/core.py\thelper\nshop/core.py\ttotal\n" >expect &&
	test_cmp expect actual &&
	python3 "$pairs" --ci-chunk "$CI_CHUNK" --out again --heldout acme/shop mined.jsonl=repo/.git &&
	cmp held/history-pairs.jsonl again/history-pairs.jsonl &&
	cmp held/heldout-pool.jsonl again/heldout-pool.jsonl
'

test_expect_code 3 'a missing input: a message naming it, exit 3' '
	python3 "$pairs" --out bad nosuch.jsonl=repo/.git 2>err;
	rc=$? &&
	grep "embed-history-pairs: nosuch.jsonl" err >&2 &&
	return $rc
'

test_expect_code 2 'an input without its git directory: a usage error' '
	python3 "$pairs" --out bad mined.jsonl 2>err;
	rc=$? &&
	grep "expected <mined.jsonl>=<git-dir>" err >&2 &&
	return $rc
'

test_done
