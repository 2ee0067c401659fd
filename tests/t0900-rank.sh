#!/bin/sh
# t0900-rank: ci-rank, hybrid ranked search, on a fixture repository: a small
# Python package whose modules import each other, its tests/, docs/ in Markdown,
# a settings.toml, and a C pair.  What is checked: an identifier query finds its
# definition first (intent name, symbol signal 1); scope rules (impl leaves out
# tests, docs and config files; a query about tests gets tests; --scope all gets
# docs; an issue text with a traceback gets the implementation, the file of its
# frame first with path signal 1; a file name in the prose gives path signal 1
# too); the filters and limits; --explain adds up to
# the score; --format full is the file's lines; the modes; the quality verdict;
# determinism; the context bundle; usage and I/O errors.
#
# The index holds no vectors, so the semantic signal is not used, except in the
# one test that adds them (skipped when ci-embed cannot embed: no model).  The
# test outputs are written inside the fixture's work tree: the indexes built
# after them are built from a clean clone.

. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'ci-rank tests' 'the python and c grammars are not compiled in'
	test_done
fi

# hits <file>: the hit records of a ci-rank output, one a line
hits() {
	"$JQ" -c 'select(._type == "hit")' "$1"
}

# summary <file>: the summary record
summary() {
	"$JQ" -c 'select(._type == "summary")' "$1"
}

test_expect_success 'setup: a repository and its index' '
	git init -q repo && cd repo &&
	mkdir shop tests docs src &&
	cat >shop/__init__.py <<-\EOF &&
	"""A small shop: carts, prices and retries."""
	from shop.cart import Cart
	from shop.pricing import total_price
	EOF
	cat >shop/pricing.py <<-\EOF &&
	from shop.money import round_cents


	TAX_RATE = 0.2


	def total_price(items, discount=0):
	    """Sum the item prices, apply the discount, add the tax."""
	    subtotal = sum(item.price * item.quantity for item in items)
	    subtotal -= discount
	    return round_cents(subtotal * (1 + TAX_RATE))


	def apply_coupon(code, subtotal):
	    if code == "HALF":
	        return subtotal / 2
	    return subtotal
	EOF
	cat >shop/money.py <<-\EOF &&
	def round_cents(amount):
	    """Round an amount of money to whole cents."""
	    return round(amount * 100) / 100


	def format_amount(amount, currency="EUR"):
	    return "%.2f %s" % (amount, currency)
	EOF
	cat >shop/cart.py <<-\EOF &&
	from shop.pricing import total_price
	from shop.retry import with_backoff


	class Cart:
	    def __init__(self):
	        self.items = []

	    def add_item(self, item):
	        self.items.append(item)

	    def checkout(self, gateway):
	        amount = total_price(self.items)
	        return with_backoff(lambda: gateway.charge(amount))
	EOF
	cat >shop/retry.py <<-\EOF &&
	import time


	def compute_delay(attempt, base=0.5, cap=30.0):
	    """Exponential backoff: how long to sleep before the next retry attempt."""
	    return min(cap, base * (2 ** attempt))


	def with_backoff(action, attempts=5):
	    """Call action, retrying with exponential backoff when it raises."""
	    for attempt in range(attempts):
	        try:
	            return action()
	        except IOError:
	            time.sleep(compute_delay(attempt))
	    return action()
	EOF
	cat >tests/test_pricing.py <<-\EOF &&
	from shop.pricing import total_price


	class Item:
	    def __init__(self, price, quantity):
	        self.price = price
	        self.quantity = quantity


	def test_total_price():
	    assert total_price([Item(10, 2)]) == 24.0


	def test_total_price_discount():
	    assert total_price([Item(10, 1)], discount=5) == 6.0
	EOF
	cat >tests/test_retry.py <<-\EOF &&
	from shop.retry import compute_delay


	def test_compute_delay():
	    assert compute_delay(0) == 0.5
	    assert compute_delay(10) == 30.0
	EOF
	cat >docs/pricing.md <<-\EOF &&
	# Pricing

	The total price of a cart is the sum of its item prices, less the discount,
	plus the tax. Prices are rounded to whole cents.

	## Retry

	A payment is retried with exponential backoff.
	EOF
	cat >settings.toml <<-\EOF &&
	[pricing]
	tax_rate = 0.2
	currency = "EUR"

	[retry]
	attempts = 5
	base_delay = 0.5
	EOF
	cat >src/ring.h <<-\EOF &&
	#ifndef RING_H
	#define RING_H
	struct ring {
		int *slots;
		int head, tail, size;
	};
	int ring_push(struct ring *r, int value);
	int ring_pop(struct ring *r, int *value);
	#endif
	EOF
	cat >src/ring.c <<-\EOF &&
	#include "ring.h"

	/* Append a value; 0 when the ring buffer is full. */
	int ring_push(struct ring *r, int value)
	{
		int next = (r->tail + 1) % r->size;

		if (next == r->head)
			return 0;
		r->slots[r->tail] = value;
		r->tail = next;
		return 1;
	}

	/* Take the oldest value; 0 when the ring buffer is empty. */
	int ring_pop(struct ring *r, int *value)
	{
		if (r->head == r->tail)
			return 0;
		*value = r->slots[r->head];
		r->head = (r->head + 1) % r->size;
		return 1;
	}
	EOF
	git add . && git commit -q -m "a shop" &&
	ci-index build &&
	test -f .ci-index/index.db
'

# ---- what a query finds -----------------------------------------------------------

test_expect_success 'an identifier: its definition first, intent name, symbol 1' '
	cd repo &&
	ci-rank compute_delay >out &&
	hits out | head -n 1 |
		"$JQ" -c "{path, start_line, end_line, kind, name, symbol: .signals.symbol}" >actual &&
	echo "{\"path\":\"shop/retry.py\",\"start_line\":4,\"end_line\":8,\"kind\":\"function\",\"name\":\"compute_delay\",\"symbol\":1}" >expect &&
	test_cmp_json expect actual &&
	summary out | "$JQ" -c "{query, intent, mode, scope}" >actual &&
	echo "{\"query\":\"compute_delay\",\"intent\":\"name\",\"mode\":\"hybrid\",\"scope\":\"impl\"}" >expect &&
	test_cmp_json expect actual
'

test_expect_success 'the records: hits, best first, then one summary' '
	cd repo &&
	ci-rank --scope all --limit 20 --per-file 5 total price >out &&
	tail -n 1 out | "$JQ" -e "._type == \"summary\"" &&
	test "$("$JQ" -s "map(select(._type == \"summary\")) | length" out)" = 1 &&
	hits out >h &&
	test_line_count -ge 3 h &&
	"$JQ" -s -e "length == (map(select(._type == \"hit\")) | length) + 1" out &&
	"$JQ" -s -e "map(.score) | . == (sort | reverse)" h &&
	"$JQ" -e "(keys_unsorted | .[0:9]) == [\"_type\", \"path\", \"start_line\", \"end_line\", \"kind\", \"name\", \"scope\", \"lang\", \"score\"] and .score >= 0 and .score <= 1 and (.signals | map(. >= 0 and . <= 1) | all)" h >/dev/null &&
	summary out | "$JQ" -e "(keys_unsorted | .[0:9]) == [\"_type\", \"query\", \"intent\", \"mode\", \"signals\", \"scope\", \"candidates\", \"count\", \"quality\"]" &&
	summary out | "$JQ" -e ".count == $(wc -l <h) and .candidates >= .count" &&
	summary out | "$JQ" -e ".signals == [\"keyword\", \"symbol\", \"path\", \"structure\"]"
'

test_expect_success 'a concept query: implementation only, scope impl' '
	cd repo &&
	ci-rank how long to sleep before the next retry attempt >out &&
	hits out >h &&
	test -s h &&
	"$JQ" -r .path h >paths &&
	! grep -e "^tests/" -e "^docs/" -e "\.md\$" -e "\.toml\$" paths &&
	head -n 1 paths >first &&
	echo shop/retry.py >expect &&
	test_cmp expect first &&
	summary out | "$JQ" -e ".intent == \"concept\" and .scope == \"impl\""
'

test_expect_success 'the same query with --scope all: tests, docs and config too' '
	cd repo &&
	ci-rank --scope all --limit 20 exponential backoff retry delay >out &&
	hits out | "$JQ" -r .path >paths &&
	test_grep "^docs/pricing.md\$" paths &&
	test_grep "^tests/test_retry.py\$" paths &&
	test_grep "^settings.toml\$" paths &&
	summary out | "$JQ" -e ".scope == \"all\"" &&
	ci-rank --limit 20 exponential backoff retry delay >out &&
	hits out | "$JQ" -r .path >paths &&
	test -s paths &&
	! grep -e "^tests/" -e "^docs/" -e "^settings.toml" paths
'

test_expect_success 'a short query about a test_ function gets tests' '
	cd repo &&
	ci-rank test_compute_delay >out &&
	hits out | "$JQ" -r .path >paths &&
	test_grep "^tests/test_retry.py\$" paths &&
	summary out | "$JQ" -e ".scope == \"impl+test\""
'

test_expect_success '--scope test: tests only' '
	cd repo &&
	ci-rank --scope test total_price >out &&
	hits out | "$JQ" -r .path >paths &&
	test -s paths &&
	! grep -v "^tests/" paths &&
	summary out | "$JQ" -e ".scope == \"test\""
'

test_expect_success 'a query about the docs gets docs without --scope' '
	cd repo &&
	ci-rank pricing documentation >out &&
	hits out | "$JQ" -r .path >paths &&
	test_grep "^docs/pricing.md\$" paths
'

test_expect_success 'a config query: intent config, config files kept' '
	cd repo &&
	ci-rank tax rate setting >out &&
	hits out | "$JQ" -r .path >paths &&
	test_grep "^settings.toml\$" paths &&
	! grep -e "^tests/" -e "^docs/" paths &&
	summary out | "$JQ" -e ".intent == \"config\""
'

cat >"$TEST_TMP/issue" <<\EOF
Checkout crashes when an item has no price

Calling checkout on a cart fails. The test in tests/test_pricing.py passes
though, and the docs say prices are rounded to whole cents.

Traceback (most recent call last):
  File "/home/user/app/main.py", line 10, in <module>
    charge(cart)
  File "/home/user/venv/lib/python3.11/site-packages/shop/money.py", line 3, in round_cents
    return round(amount * 100) / 100
TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'
EOF

test_expect_success 'an issue with a traceback: the frame file first, path 1, impl' '
	cd repo &&
	ci-rank --limit 20 "$(cat "$TEST_TMP/issue")" >out &&
	hits out >h &&
	head -n 1 h | "$JQ" -c "{path, path_signal: .signals.path}" >actual &&
	echo "{\"path\":\"shop/money.py\",\"path_signal\":1}" >expect &&
	test_cmp_json expect actual &&
	"$JQ" -r .path h >paths &&
	! grep -e "^tests/" -e "^docs/" -e "^settings.toml" paths &&
	summary out | "$JQ" -e ".intent == \"issue\" and .scope == \"impl\"" &&
	summary out | "$JQ" -e ".query | length <= 200"
'

test_expect_success 'an issue with --scope all gets tests and docs' '
	cd repo &&
	ci-rank --scope all --limit 20 "$(cat "$TEST_TMP/issue")" >out &&
	hits out | "$JQ" -r .path >paths &&
	test_grep "^tests/" paths &&
	summary out | "$JQ" -e ".intent == \"issue\" and .scope == \"all\""
'

test_expect_success 'a relative traceback frame names the file too' '
	cd repo &&
	ci-rank "$(printf "Traceback (most recent call last):\n  File \"shop/cart.py\", line 14, in checkout\nValueError: bad amount")" >out &&
	hits out | head -n 1 | "$JQ" -e ".path == \"shop/cart.py\" and .signals.path == 1"
'

test_expect_success 'a file name in the prose names the file: path signal 1, not its namesakes by stem' '
	cd repo &&
	ci-rank --explain --limit 20 "checkout totals look off, see shop/cart.py and money.py (docs at https://x.org/cart.html)" >out &&
	hits out >h &&
	"$JQ" -se "(map(select(.path == \"shop/cart.py\"))[0].signals.path == 1) and
		   (map(select(.path == \"shop/money.py\"))[0].signals.path == 1) and
		   (map(select(.path == \"shop/pricing.py\"))[0].signals.path < 1)" h &&
	ci-rank --explain --limit 20 "checkout totals look off" >out &&
	hits out | "$JQ" -se "map(select(.path == \"shop/cart.py\"))[0].signals.path < 1"
'

test_expect_success '--query-file: the same answer as the text on the command line; - is stdin' '
	cd repo &&
	ci-rank --limit 20 "$(cat "$TEST_TMP/issue")" >expect &&
	ci-rank --limit 20 --query-file "$TEST_TMP/issue" >out &&
	test_cmp expect out &&
	ci-rank --limit 20 --query-file - <"$TEST_TMP/issue" >out &&
	test_cmp expect out
'

test_expect_success 'an issue with a megabyte of pasted log and versions: bounded, the same top file' '
	cd repo &&
	{
		cat "$TEST_TMP/issue" &&
		echo "## Versions" && echo &&
		echo "docs 1.0" && echo "tests 2.3.4" && echo "settings==0.1" && echo &&
		echo "## Log" && echo "\`\`\`" &&
		i=0 &&
		while test $i -lt 400
		do
			echo "2024-05-01 10:00:01 INFO tests/test_pricing.py docs settings retry backoff whole cents" &&
			i=$((i + 1)) || return 1
		done &&
		echo "\`\`\`"
	} >big.1 &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
	do
		cat big.1 || return 1
	done >big &&
	test $(wc -c <big) -gt 1000000 &&
	ci-rank --limit 20 --query-file big >out &&
	hits out >h &&
	head -n 1 h | "$JQ" -e ".path == \"shop/money.py\"" &&
	! "$JQ" -r .path h | grep -e "^tests/" -e "^docs/" -e "^settings.toml" &&
	summary out | "$JQ" -e ".intent == \"issue\" and (.query | length <= 200)"
'

test_expect_success '--query-file: errors' '
	cd repo &&
	test_status 2 ci-rank --query-file "$TEST_TMP/issue" price >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-rank: --query-file: " err &&
	test_status 3 ci-rank --query-file no-such-file >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-rank: cannot open .no-such-file" err &&
	printf "price\\0tax" >nul &&
	test_status 2 ci-rank --query-file nul >out 2>err &&
	test_must_be_empty out &&
	test_grep "NUL byte" err
'

test_expect_success 'paths are relative to the root, wherever ci-rank runs' '
	cd repo &&
	ci-rank compute_delay >expect &&
	(cd shop && ci-rank compute_delay) >actual &&
	test_cmp expect actual
'

# ---- filters and limits -----------------------------------------------------------

test_expect_success '--path: only files under the prefix' '
	cd repo &&
	ci-rank --limit 20 value amount >out &&
	hits out | "$JQ" -r .path >all &&
	test_grep "^shop/" all &&
	test_grep "^src/" all &&
	ci-rank --limit 20 --path src value amount >out &&
	hits out | "$JQ" -r .path >paths &&
	test -s paths &&
	! grep -v "^src/" paths &&
	ci-rank --limit 20 --path src/ value amount >out2 &&
	test_cmp out out2
'

test_expect_success '--path is a directory prefix, not a string prefix' '
	cd repo &&
	test_status 1 ci-rank --path sh compute_delay >out &&
	summary out | "$JQ" -e ".count == 0 and .quality == \"low\" and (.hint | length > 0)"
'

test_expect_success '--lang: only files in that language' '
	cd repo &&
	ci-rank --limit 20 ring_push total_price >out &&
	hits out | "$JQ" -r .path >all &&
	test_grep "\.py\$" all &&
	ci-rank --limit 20 --lang c ring_push total_price >out &&
	hits out | "$JQ" -r .path >paths &&
	test_grep "^src/ring.c\$" paths &&
	! grep -v -e "\.c\$" -e "\.h\$" paths
'

test_expect_success '--type: only chunks of that kind' '
	cd repo &&
	ci-rank --limit 20 --per-file 10 --type method cart items >out &&
	hits out | "$JQ" -r .kind | sort -u >kinds &&
	echo method >expect &&
	test_cmp expect kinds
'

test_expect_success '--limit caps the hits' '
	cd repo &&
	ci-rank --limit 20 --scope all total price >out &&
	test "$(hits out | wc -l)" -gt 2 &&
	ci-rank --limit 2 --scope all total price >out &&
	hits out >h &&
	test_line_count = 2 h &&
	summary out | "$JQ" -e ".count == 2"
'

test_expect_success '--per-file: one hit a file by default, more on demand' '
	cd repo &&
	ci-rank --limit 50 ring value >out &&
	hits out | "$JQ" -r .path | sort | uniq -d >dups &&
	test_must_be_empty dups &&
	ci-rank --limit 50 --per-file 2 ring value >out &&
	hits out | "$JQ" -r .path | sort | uniq -c | sed "s/^ *//" >counts &&
	test_grep "^2 src/ring.c\$" counts &&
	! grep -v "^[12] " counts
'

test_expect_success '--min-score: no hit below it' '
	cd repo &&
	ci-rank --scope all --limit 50 --per-file 10 compute_delay >out &&
	hits out | "$JQ" -e "select(.score < 0.5)" >/dev/null &&
	ci-rank --scope all --limit 50 --per-file 10 --min-score 0.5 compute_delay >out &&
	hits out >h &&
	test -s h &&
	! "$JQ" -e "select(.score < 0.5)" h
'

test_expect_success '--min-score above every hit: exit 1, a low answer' '
	cd repo &&
	test_status 1 ci-rank --min-score 1 price >out &&
	summary out | "$JQ" -e ".count == 0 and .quality == \"low\" and (.hint | length > 0)"
'

# ---- explanation and text -----------------------------------------------------------

test_expect_success '--explain: rank, weight, contribution of each signal used' '
	cd repo &&
	ci-rank --fusion rrf --explain --scope all --limit 20 --per-file 5 compute_delay >out &&
	summary out | "$JQ" -c .signals >used &&
	hits out >h &&
	test -s h &&
	"$JQ" -c ".explain | keys_unsorted" h | sort -u >keys &&
	test_cmp used keys &&
	"$JQ" -e "[.explain[] | (keys_unsorted == [\"rank\", \"weight\", \"contribution\"]) and
		  ((.rank == null and .contribution == 0) or (.rank >= 1 and .contribution > 0))] | all" h >/dev/null &&
	"$JQ" -e "(([.explain[].contribution] | add) - .score) | if . < 0 then -. else . end | . < 0.01" h >/dev/null &&
	head -n 1 h | "$JQ" -e ".explain.symbol == {\"rank\": 1, \"weight\": 3, \"contribution\": (3 / 61 / (.explain | map(.weight) | add) * 61 | . * 1000 | round / 1000)}" >/dev/null
'

test_expect_success '--explain: the hits are the same as without it' '
	cd repo &&
	ci-rank --scope all compute_delay >plain &&
	ci-rank --explain --scope all compute_delay | "$JQ" -c "del(.explain, .file_evidence, .learned)" >explained &&
	"$JQ" -c . plain >expect &&
	test_cmp expect explained
'

test_expect_success '--format full: the text is the lines of the file' '
	cd repo &&
	ci-rank --format full --scope all --limit 20 --per-file 5 ring value >out &&
	hits out >h &&
	test "$(wc -l <h)" -gt 2 &&
	while read -r hit; do
		p=$(printf "%s\n" "$hit" | "$JQ" -r .path) &&
		s=$(printf "%s\n" "$hit" | "$JQ" -r .start_line) &&
		e=$(printf "%s\n" "$hit" | "$JQ" -r .end_line) &&
		sed -n "${s},${e}p" "$p" >expect &&
		printf "%s\n" "$hit" | "$JQ" -r .text >actual &&
		test_cmp expect actual || return 1
	done <h
'

test_expect_success '--format locate (the default) has no text' '
	cd repo &&
	ci-rank --format locate compute_delay >out &&
	ci-rank compute_delay >expect &&
	test_cmp expect out &&
	! hits out | "$JQ" -e "has(\"text\")"
'

# ---- modes --------------------------------------------------------------------------

test_expect_success '--mode keyword: the keyword signal only' '
	cd repo &&
	ci-rank --mode keyword --explain --limit 20 retry backoff >out &&
	hits out >h &&
	test_line_count -ge 2 h &&
	"$JQ" -c "[(.signals | keys), (.explain | keys)]" h | sort -u >keys &&
	echo "[[\"keyword\"],[\"keyword\"]]" >expect &&
	test_cmp expect keys &&
	summary out | "$JQ" -e ".mode == \"keyword\" and .signals == [\"keyword\"]" &&
	"$JQ" -e "(.score - ([1, 61 / (60 + .explain.keyword.rank) + .file_evidence.contribution] | min) | fabs) <= 0.002" h >/dev/null &&
	ci-rank --mode keyword --scope all retry backoff >out &&
	hits out | head -n 1 | "$JQ" -e ".score == 1"
'

test_expect_success '--mode semantic without vectors: exit 3, naming ci-embed' '
	cd repo &&
	test_status 3 ci-rank --mode semantic retry backoff >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-rank: .*ci-embed" err
'

# ---- quality ------------------------------------------------------------------------

test_expect_success 'a strong answer is of high quality, without a hint' '
	cd repo &&
	ci-rank compute_delay >out &&
	summary out | "$JQ" -e ".quality == \"high\" and (has(\"hint\") | not)"
'

test_expect_success 'nonsense: no hit or a low answer, with a hint' '
	cd repo &&
	ci-rank frobnicate the quux widgets >out
	rc=$? &&
	test "$rc" = 1 || test "$rc" = 0 &&
	summary out | "$JQ" -e ".quality == \"low\" and (.hint | length > 0)" &&
	if test "$rc" = 1; then
		summary out | "$JQ" -e ".count == 0" &&
		test "$(hits out | wc -l)" = 0
	fi
'

# ---- determinism ----------------------------------------------------------------------

test_expect_success 'the same query twice: the same bytes' '
	cd repo &&
	ci-rank --explain --format full --scope all --limit 50 --per-file 5 "$(cat "$TEST_TMP/issue")" >out1 &&
	ci-rank --explain --format full --scope all --limit 50 --per-file 5 "$(cat "$TEST_TMP/issue")" >out2 &&
	test_cmp out1 out2 &&
	ci-rank --scope all --limit 50 total price >out1 &&
	ci-rank --scope all --limit 50 total price >out2 &&
	test_cmp out1 out2
'

test_expect_success 'the query may come as one argument or several' '
	cd repo &&
	ci-rank "total price" >one &&
	ci-rank total price >several &&
	test_cmp one several
'

# ---- history: the change signal and the context bundle ------------------------------

test_expect_success 'setup: an index with commits and coupling' '
	git clone -q repo clean &&
	(cd clean && ci-chunk) | ci-index --index hist.db load &&
	cd repo &&
	cat >../history <<-\EOF &&
	{"_type":"commit","sha":"c1","time":1690000000,"author":"A","message":"prices","files":["shop/pricing.py","shop/money.py"]}
	{"_type":"commit","sha":"c2","time":1700000000,"author":"A","message":"retries","files":["shop/retry.py","shop/cart.py"]}
	{"_type":"coupling","a":"shop/retry.py","b":"shop/cart.py","score":0.8,"co_changes":4,"last":1700000000}
	{"_type":"coupling","a":"shop/pricing.py","b":"shop/money.py","score":0.2,"co_changes":1,"last":1690000000}
	EOF
	ci-index --index ../hist.db load <../history
'

test_expect_success 'with commits the change signal is used' '
	cd repo &&
	ci-rank --index ../hist.db compute_delay >out &&
	summary out | "$JQ" -e ".signals | index(\"change\") != null" &&
	hits out | head -n 1 | "$JQ" -e ".path == \"shop/retry.py\" and .signals.change > 0"
'

test_expect_success 'context: the best chunk and the file that changes with it' '
	cd repo &&
	ci-rank --index ../hist.db context compute_delay >out &&
	"$JQ" -c "select(._type == \"context_chunk\") | {path, reason, via}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"shop/retry.py","reason":"hit","via":null}
	{"path":"shop/cart.py","reason":"coupled","via":"shop/retry.py"}
	EOF
	test_cmp_json expect actual &&
	tail -n 1 out | "$JQ" -e "._type == \"context_summary\" and .direct == 1 and .coupled == 1 and .files == 2 and .quality == \"high\"" &&
	"$JQ" -s -e "(map(select(._type == \"context_chunk\") | .end_line - .start_line + 1) | add) as \$n | .[-1].used_lines == \$n and \$n <= 300" out &&
	"$JQ" -s -e ".[1].score == 0.8" out
'

test_expect_success 'context: --threshold, --depth 0 and --budget' '
	cd repo &&
	ci-rank --index ../hist.db context --threshold 0.9 compute_delay >out &&
	tail -n 1 out | "$JQ" -e ".coupled == 0" &&
	ci-rank --index ../hist.db context --depth 0 compute_delay >out &&
	tail -n 1 out | "$JQ" -e ".coupled == 0" &&
	ci-rank --index ../hist.db context --budget 12 --limit 5 total price >out &&
	tail -n 1 out | "$JQ" -e ".used_lines <= 12 and .budget == 12"
'

test_expect_success 'context: nothing found is exit 1 and a low bundle' '
	cd repo &&
	test_status 1 ci-rank --index ../hist.db context frobnicate quux >out &&
	"$JQ" -e "._type == \"context_summary\" and .direct == 0 and .quality == \"low\"" out
'

test_expect_success 'one word "context" is a query, not the command' '
	cd repo &&
	ci-rank context >out;
	test $? -le 1 &&
	summary out | "$JQ" -e ".query == \"context\""
'

# ---- semantic, when ci-embed can embed -----------------------------------------------

if ci-embed --query probe >/dev/null 2>&1; then
	test_expect_success '--mode semantic with vectors: the semantic signal only; hybrid leaves it out unless the fusion is the hand-set one' '
		(cd clean && ci-chunk | ci-embed) | ci-index --index vec.db load &&
		cd repo &&
		ci-rank --index ../vec.db --mode semantic how long to wait before trying again >out &&
		ci-rank --index ../vec.db compute_delay >out2 &&
		ci-rank --index ../vec.db --fusion rrf compute_delay >out3 &&
		hits out >h &&
		test -s h &&
		"$JQ" -c ".signals | keys" h | sort -u >keys &&
		echo "[\"semantic\"]" >expect &&
		test_cmp expect keys &&
		summary out | "$JQ" -e ".signals == [\"semantic\"] and .mode == \"semantic\"" &&
		summary out2 | "$JQ" -e ".signals | index(\"semantic\") == null" &&
		summary out3 | "$JQ" -e ".signals | index(\"semantic\") != null"
	'
	test_expect_success '--mode semantic over several batches of vectors: the cosines ci-rank similar finds' '
		git init -q many && (
			cd many &&
			awk "BEGIN { for (i = 0; i < 2600; i++) printf \"def handler_%d(request):\\n    return respond(request, %d, \\\"item %d of the queue\\\")\\n\\n\\n\", i, i * 7 % 13, i }" >big.py &&
			git add . && git commit -qm many &&
			ci-chunk | ci-embed | ci-index --no-progress load &&
			ci-index status | "$JQ" -e ".vectors == 2600" &&
			ci-rank similar "respond to the request with item 7" --limit 25 |
				"$JQ" -r "select(._type == \"hit\") | \"\\(.name) \\(.score)\"" | sort >../expect &&
			ci-rank --mode semantic --explain --per-file 25 --limit 25 "respond to the request with item 7" |
				"$JQ" -r "select(._type == \"hit\") | \"\\(.name) \\(.signals.semantic * 1000 | round / 1000)\"" |
				sort >../actual
		) &&
		test_line_count = 25 expect &&
		test_cmp expect actual
	'
else
	test_skip '--mode semantic with vectors: the semantic signal only' 'ci-embed cannot embed here (no model?)'
	test_skip '--mode semantic over several batches of vectors' 'ci-embed cannot embed here (no model?)'
fi

# ---- errors -----------------------------------------------------------------------

for args in '' '--limit 0 x' '--limit 201 x' '--limit ten x' '--per-file 0 x' \
	'--min-score 2 x' '--min-score -0.1 x' '--min-score x x' '--mode x x' \
	'--scope x x' '--format x x' '--budget 5 x' '--depth 3 x' '--max-coupled 21 x' \
	'--threshold 1.5 x'
do
	opt=${args%% *}
	test -n "$opt" || opt='no query'
	test_expect_success "usage error: ci-rank $args" '
		cd repo &&
		test_status 2 ci-rank $args >out 2>err &&
		test_must_be_empty out &&
		sed -n 1p err >msg &&
		test_grep "^ci-rank: .*$opt" msg &&
		sed -n 2p err >usage &&
		test_grep "^usage: ci-rank " usage
	'
done

test_expect_success 'no index: exit 3, saying to run ci-index build' '
	git init -q noindex &&
	cd noindex &&
	test_status 3 ci-rank compute_delay >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-rank: .*ci-index build" err &&
	cd ../repo &&
	test_status 3 ci-rank --index ../nowhere.db compute_delay >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-rank: .*nowhere.db.*ci-index build" err &&
	! test -e ../nowhere.db
'

test_expect_success 'CI_INDEX names the index' '
	cd repo &&
	CI_INDEX=$TRASH_DIRECTORY/hist.db ci-rank compute_delay >out &&
	summary out | "$JQ" -e ".signals | index(\"change\") != null" &&
	test_status 3 env CI_INDEX=$TRASH_DIRECTORY/nowhere.db ci-rank compute_delay 2>err &&
	test_grep "nowhere.db" err
'

test_expect_success 'not an index: exit 3' '
	cd repo &&
	echo "not a database" >../bad.db &&
	test_status 3 ci-rank --index ../bad.db compute_delay >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-rank: " err
'

test_expect_success 'a full disk: exit 3' '
	cd repo &&
	test_status 3 ci-rank compute_delay >/dev/full 2>err &&
	test_grep "^ci-rank: " err
'

test_expect_success 'CI_RANK_TRACE: the phases of a query on stderr, the answer unchanged' '
	cd repo &&
	ci-rank --scope all total price >expect 2>err &&
	test_must_be_empty err &&
	CI_RANK_TRACE=1 ci-rank --scope all total price >out 2>err &&
	test_cmp expect out &&
	for phase in opened weigh keyword kw-cands symbol path structure change semantic fuse
	do
		test_grep "^ci-rank: trace: $phase [0-9][0-9.]* ms\$" err || return 1
	done
'

test_expect_success 'a closed pipe: no complaint' '
	cd repo &&
	ci-rank --scope all --limit 50 --per-file 10 total price 2>err | head -n 1 >out &&
	test_line_count = 1 out &&
	test_must_be_empty err
'

test_expect_success '--segment-weight: the words of the title and of the prose weighed apart' '
	cd repo &&
	printf "%s\n\n%s\n" "whole cents are rounded wrong" "the retry backoff delay grows too fast" >two &&
	ci-rank --mode keyword --limit 5 --query-file two >both &&
	ci-rank --mode keyword --limit 5 --segment-weight prose=0 --query-file two >title &&
	ci-rank --mode keyword --limit 5 --segment-weight title=0 --query-file two >prose &&
	hits title | "$JQ" -e "select(.path == \"shop/money.py\")" &&
	hits prose | head -n 1 | "$JQ" -e ".path == \"shop/retry.py\"" &&
	! hits title | "$JQ" -e "select(.path == \"shop/retry.py\")" &&
	! hits prose | "$JQ" -e "select(.path == \"shop/money.py\")" &&
	ci-rank --mode keyword --limit 5 --segment-weight title=6 --segment-weight prose=1 --query-file two >same &&
	test_cmp both same
'

test_expect_success '--segment-weight: a part that is not one, a weight out of range: usage, exit 2' '
	cd repo &&
	test_status 2 ci-rank --segment-weight heading=2 x 2>err &&
	test_grep "segment-weight: expected <part>=<w>" err &&
	test_status 2 ci-rank --segment-weight title=21 x 2>err &&
	test_grep "segment-weight: expected a number from 0 to 20" err &&
	test_status 2 ci-rank --segment-weight title 2 2>err &&
	test_grep "segment-weight: expected <part>=<w>" err
'

test_done
