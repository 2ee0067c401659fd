#!/bin/sh
# t0910-rank-similar: ci-rank similar, nearest chunks by vector, and --scan,
# clusters of near-duplicate definitions.
#
# The fixture: three HTTP verb wrappers written alike, two tokenizer helpers
# alike, and unrelated code, indexed with vectors (`ci-index --embed build`,
# the USE-lite model scripts/setup fetches).  What is checked: a chunk named by
# path:symbol or path:line finds its look-alikes and never itself; a text finds
# chunks; the scan puts the wrappers in one cluster and not the unrelated code;
# filters apply; a threshold nothing reaches answers nothing with exit 1; and
# the errors: no vectors, unknown symbol, misuse of --scan.

. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'ci-rank similar tests' 'the python grammar is not compiled in'
	test_done
fi
need_model 'ci-rank similar tests'

test_expect_success 'setup: a repository indexed with vectors' '
	git init -q repo && cd repo &&
	mkdir -p client lex other &&
	cat >client/verbs.py <<-\EOF &&
	def get(session, url, params=None, **kwargs):
	    """Send a GET request through the session and return the response."""
	    kwargs.setdefault("allow_redirects", True)
	    return session.request("get", url, params=params, **kwargs)


	def post(session, url, data=None, **kwargs):
	    """Send a POST request through the session and return the response."""
	    kwargs.setdefault("allow_redirects", True)
	    return session.request("post", url, data=data, **kwargs)


	def put(session, url, data=None, **kwargs):
	    """Send a PUT request through the session and return the response."""
	    kwargs.setdefault("allow_redirects", True)
	    return session.request("put", url, data=data, **kwargs)
	EOF
	cat >lex/scan.py <<-\EOF &&
	def skip_spaces(text, pos):
	    """Move past blanks and tabs."""
	    while pos < len(text) and text[pos] in " \t":
	        pos += 1
	    return pos


	def skip_digits(text, pos):
	    """Move past decimal digits."""
	    while pos < len(text) and text[pos] in "0123456789":
	        pos += 1
	    return pos
	EOF
	cat >other/geometry.py <<-\EOF &&
	import math


	class Circle:
	    """A circle on the plane, by its centre and radius."""

	    def __init__(self, x, y, r):
	        self.x, self.y, self.r = x, y, r

	    def area(self):
	        """The surface it covers."""
	        return math.pi * self.r ** 2


	def render_invoice(customer, lines, currency="EUR"):
	    """Format an invoice as text with a total at the bottom."""
	    total = sum(qty * price for qty, price in lines)
	    body = "\n".join("%d x %.2f" % (q, p) for q, p in lines)
	    return "Invoice for %s\n%s\nTotal: %.2f %s" % (customer, body, total, currency)
	EOF
	cat >other/misc.py <<-\EOF &&
	import hashlib
	import json
	import os
	import random
	import time


	def load_settings(path):
	    """Read the JSON settings file, or the defaults when it is missing."""
	    if not os.path.exists(path):
	        return {"debug": False, "workers": 4}
	    with open(path) as f:
	        return json.load(f)


	def checksum(data):
	    """The SHA-256 of a byte string, as hex."""
	    return hashlib.sha256(data).hexdigest()


	def shuffle_deck(seed):
	    """A deck of 52 cards in a random order fixed by the seed."""
	    deck = [(rank, suit) for suit in "SHDC" for rank in range(1, 14)]
	    random.Random(seed).shuffle(deck)
	    return deck


	def wait_until(predicate, timeout=5.0):
	    """Poll the predicate until it holds or the timeout passes."""
	    deadline = time.monotonic() + timeout
	    while time.monotonic() < deadline:
	        if predicate():
	            return True
	        time.sleep(0.05)
	    return False


	def celsius_to_fahrenheit(c):
	    """Convert a temperature from Celsius to Fahrenheit."""
	    return c * 9 / 5 + 32


	def merge_sorted(a, b):
	    """Merge two sorted lists into one sorted list."""
	    out, i, j = [], 0, 0
	    while i < len(a) and j < len(b):
	        if a[i] <= b[j]:
	            out.append(a[i]); i += 1
	        else:
	            out.append(b[j]); j += 1
	    return out + a[i:] + b[j:]


	def word_count(text):
	    """How many times each word occurs in a text."""
	    counts = {}
	    for word in text.lower().split():
	        counts[word] = counts.get(word, 0) + 1
	    return counts


	def is_leap_year(year):
	    """Whether a year of the Gregorian calendar has 366 days."""
	    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
	EOF
	git add . && git commit -q -m fixture &&
	ci-index --embed build 2>err &&
	ci-index status >status &&
	test "$("$JQ" .vectors status)" = "$("$JQ" .chunks status)"
'

test_expect_success 'similar path:symbol: its look-alikes first, never itself' '
	(cd repo && ci-rank similar client/verbs.py:post --limit 3) >out &&
	"$JQ" -r "select(._type == \"hit\") | .name" out >names &&
	test_line_count = 3 names &&
	! grep -x post names &&
	head -n 2 names | sort >top2 &&
	printf "get\nput\n" >expect &&
	test_cmp expect top2 &&
	"$JQ" -s -e "map(select(._type == \"hit\")) | all(.score > 0 and .score <= 1 and .signals.semantic == .score)" out &&
	"$JQ" -e "select(._type == \"summary\") | .mode == \"similar\" and .target == \"chunk\" and .model == \"use-lite\" and .count == 3" out
'

test_expect_success 'similar path:line names the chunk holding the line' '
	(cd repo && ci-rank similar client/verbs.py:8 --limit 3) | "$JQ" -c "select(._type == \"hit\")" >by-line &&
	(cd repo && ci-rank similar client/verbs.py:post --limit 3) | "$JQ" -c "select(._type == \"hit\")" >by-name &&
	test_line_count = 3 by-name &&
	test_cmp by-name by-line &&
	(cd repo && ci-rank similar other/geometry.py:Circle.area --limit 1) >method &&
	"$JQ" -e "select(._type == \"summary\") | .target == \"chunk\" and .count == 1" method
'

test_expect_success 'similar <text>: the chunks nearest a sentence' '
	(cd repo && ci-rank similar "print the bill for a customer with its total" --limit 2) >text &&
	"$JQ" -e "select(._type == \"summary\") | .target == \"text\" and .count == 2" text &&
	"$JQ" -r "select(._type == \"hit\") | .name" text | head -n 1 >first &&
	echo render_invoice >expect &&
	test_cmp expect first
'

test_expect_success 'similar: filters apply (--path)' '
	(cd repo && ci-rank similar client/verbs.py:post --path lex --limit 5) >filtered &&
	"$JQ" -r "select(._type == \"hit\") | .path" filtered | sort -u >paths &&
	echo lex/scan.py >expect &&
	test_cmp expect paths
'

test_expect_success 'similar --scan: the verb wrappers in one cluster, the unrelated code in none' '
	(cd repo && ci-rank similar --scan) >scan &&
	"$JQ" -c "select(._type == \"cluster\") | [.members[].name] | sort" scan >clusters &&
	grep -x "\[\"get\",\"post\",\"put\"\]" clusters &&
	! grep render_invoice clusters &&
	! grep "\"area\"" clusters &&
	"$JQ" -s -e "map(select(._type == \"cluster\")) | all(.size == (.members | length) and .min_similarity >= 0.85 and .max_similarity <= 1)" scan &&
	"$JQ" -e "select(._type == \"summary\") | .mode == \"similar-scan\" and .threshold == 0.85 and .centered" scan
'

test_expect_success 'similar --scan is deterministic' '
	(cd repo && ci-rank similar --scan) >scan2 &&
	test_cmp scan scan2
'

test_expect_success 'similar --scan: a threshold nothing reaches answers nothing, exit 1' '
	test_status 1 sh -c "cd repo && ci-rank similar --scan --threshold 1 >none" &&
	"$JQ" -e "select(._type == \"summary\") | .count == 0 and .clusters == 0" repo/none
'

test_expect_success 'errors: an unknown symbol of an indexed file is a usage error' '
	test_status 2 sh -c "cd repo && ci-rank similar client/verbs.py:patch 2>../err" &&
	test_grep "no chunk of .client/verbs.py. is named or holds line .patch." err
'

test_expect_success 'errors: --scan without similar, a target with --scan, no target' '
	test_status 2 sh -c "cd repo && ci-rank --scan foo 2>../err1" &&
	test_grep "scan goes with similar" err1 &&
	test_status 2 sh -c "cd repo && ci-rank similar --scan client/verbs.py:get 2>../err2" &&
	test_grep "takes no target" err2 &&
	test_status 2 sh -c "cd repo && ci-rank similar 2>../err3" &&
	test_grep "expected one target" err3
'

test_expect_success 'errors: an index without vectors says how to add them' '
	git clone -q repo plain && (cd plain && ci-index build 2>/dev/null) &&
	test_status 3 sh -c "cd plain && ci-rank similar --scan 2>../err" &&
	test_grep "ci-index --embed update" err &&
	test_status 3 sh -c "cd plain && ci-rank similar client/verbs.py:get 2>../err" &&
	test_grep "has no vector" err
'

test_done
