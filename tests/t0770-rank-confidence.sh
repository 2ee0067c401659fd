#!/bin/sh
# t0770-rank-confidence: the calibrated confidence of ci-rank's learned
# fusion (libcommon/rank/model.h): the summary's "confidence", the probability
# that the top file is right, is in [0, 1], is the shipped model's calibration
# of the top file's logit and its margin over the second file's (over several
# queries), gives the quality verdict (high from 0.7, low below 0.4), is absent without the
# learned fusion; a model's with_vectors member (and its calibration) answers
# once the index holds vectors and the member reads the semantic signal (else
# hybrid mode leaves the signal out and the top level answers), its semantic
# member in semantic mode (else with_vectors); ci search's confidence and ci-mcp's search
# summary are it; a calibration that falls is refused.

. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'ci-rank confidence' 'the python grammar is not compiled in'
	test_done
fi

summary() { "$JQ" -c 'select(._type == "summary")' "$1"; }

test_expect_success 'setup: a small package, indexed without vectors' '
	git init -q repo && cd repo &&
	mkdir -p shop tests &&
	cat >shop/pricing.py <<-\EOF &&
	def total_price(items, tax):
	    """The total price of the items with tax."""
	    return sum(i.price for i in items) * (1 + tax)


	def discount_price(price, rate):
	    return price * (1 - rate)
	EOF
	cat >shop/cart.py <<-\EOF &&
	from shop.pricing import total_price


	class Cart:
	    def checkout(self, tax):
	        """Price of the cart with tax."""
	        return total_price(self.items, tax)

	    def add_item(self, item):
	        self.items.append(item)
	EOF
	cat >shop/users.py <<-\EOF &&
	class Account:
	    def login(self, password):
	        """Check the password and open a session."""
	        return self.hash == hash(password)
	EOF
	cat >tests/test_pricing.py <<-\EOF &&
	from shop.pricing import total_price


	def test_total_price_with_tax():
	    assert total_price([], 0.2) == 0
	EOF
	git add . && git commit -q -m init &&
	ci-index build
'

queries="total price with tax
discount rate of a price
add an item to the cart
checkout the cart
login with a password
open a session
Account
hash of the password"

# The shipped top level's calibration is a Platt map of the top file's logit
# z1, its margin over the second file's, z1 - z2 (at most 10, 10 without a
# second file), and the logarithm of the index's files (its "files" weight).  From the probabilities --explain shows (rounded to 3
# decimals: each stands for an interval, so the logits too) the confidence
# must lie between the map's values at the ends of those intervals, and, with
# the margin's weight not 0, two queries of one top probability may differ.
test_expect_success 'hybrid: the confidence is the calibration of the top file'"'"'s logit and margin' '
	"$JQ" -e ".calibration.method == \"platt\" and .calibration.a >= 0 and
		((.calibration.margin // 0) >= 0)" "$CI_SRC_DIR/share/rank/model.json" &&
	"$JQ" -r ".calibration | \"\(.a) \(.b) \(.margin // 0) \(.files // 0)\"" "$CI_SRC_DIR/share/rank/model.json" >cal &&
	(cd repo && ci-index status) | "$JQ" -r .files >nfiles &&
	test "$(cat nfiles)" -gt 1 &&
	: >rows &&
	echo "$queries" | while read -r q; do
		(cd repo && ci-rank --explain "$q" >../out) || return 1
		# the top file'"'"'s probability, the next file'"'"'s (-1: none), the confidence
		"$JQ" -s -r "map(select(._type == \"hit\")) as \$h | (\$h[0].path) as \$p |
			[\$h[0].learned.probability, ([\$h[] | select(.path != \$p) | .learned.probability] + [-1])[0],
			 (map(select(._type == \"summary\"))[0].confidence)] | @tsv" out >>rows || return 1
	done &&
	test "$(wc -l <rows)" -eq 8 &&
	awk -v cal="$(cat cal)" -v nf="$(cat nfiles)" "
	function lg(p) { return log(p / (1 - p)) }
	function sg(z) { return 1 / (1 + exp(-z)) }
	function cl(p) { return p < 1e-9 ? 1e-9 : p > 1 - 1e-9 ? 1 - 1e-9 : p }
	BEGIN { split(cal, c, \" \"); bad = 0 }
	{
		z1lo = lg(cl(\$1 - 0.0005)); z1hi = lg(cl(\$1 + 0.0005))
		if (\$2 < 0) { mlo = 10; mhi = 10 } else {
			z2lo = lg(cl(\$2 - 0.0005)); z2hi = lg(cl(\$2 + 0.0005))
			mlo = z1lo - z2hi; mhi = z1hi - z2lo
			if (mlo < 0) mlo = 0
			if (mlo > 10) mlo = 10
			if (mhi > 10) mhi = 10
		}
		lo = sg(c[1] * z1lo + c[3] * mlo + c[4] * log(nf) + c[2]) - 0.0005
		hi = sg(c[1] * z1hi + c[3] * mhi + c[4] * log(nf) + c[2]) + 0.0005
		if (\$3 < 0 || \$3 > 1 || \$3 < lo || \$3 > hi) { print \"off: \" \$0 \" not in [\" lo \", \" hi \"]\"; bad = 1 }
	}
	END { exit bad }" rows &&
	cut -f3 rows | sort -u >confs &&
	test "$(wc -l <confs)" -gt 1
'

test_expect_success 'the quality verdict is the confidence'"'"'s (high from 0.7, low below 0.4)' '
	echo "$queries" | while read -r q; do
		(cd repo && ci-rank "$q" >../out) || return 1
		summary out | "$JQ" -e ".confidence as \$c |
			.quality == (if \$c >= 0.7 then \"high\" elif \$c >= 0.4 then \"medium\" else \"low\" end)" || return 1
	done
'

test_expect_success 'no learned fusion (keyword, --fusion rrf), no hit: no confidence' '
	(cd repo && ci-rank --mode keyword total price with tax >../k &&
	 ci-rank --fusion rrf total price with tax >../r &&
	 ci-rank --path nowhere/ total price >../n; test $? = 1) &&
	summary k | "$JQ" -e "has(\"confidence\") | not" &&
	summary r | "$JQ" -e "has(\"confidence\") | not" &&
	summary n | "$JQ" -e ".count == 0 and (has(\"confidence\") | not)"
'

# a model whose two members differ in their (constant) calibration: 0.5
# without vectors, 0.75 with them (its with_vectors member reads the semantic
# signal a little: a member that reads none leaves it out of hybrid mode)
cat >two.json <<\EOF
{"format":"ci-rank-linear/1","bias":0,"features":[{"name":"fused","mean":0,"scale":1,"weight":1}],
 "calibration":{"method":"platt","a":0,"b":0},
 "with_vectors":{"bias":0,"features":[{"name":"fused","mean":0,"scale":1,"weight":1},
                                      {"name":"semantic","mean":0,"scale":1,"weight":0.001}],
  "calibration":{"method":"isotonic","x":[-100,100],"y":[0.75,0.75]}}}
EOF

test_expect_success 'without vectors: the model'"'"'s top-level member answers' '
	(cd repo && ci-rank --model ../two.json total price with tax >../o) &&
	summary o | "$JQ" -e ".confidence == 0.5 and .quality == \"medium\""
'

# a confidence of 0.6996 is written 0.7: its verdict is the written one's
cat >edge.json <<\EOF
{"format":"ci-rank-linear/1","bias":0,"features":[{"name":"fused","mean":0,"scale":1,"weight":1}],
 "calibration":{"method":"isotonic","x":[-100,100],"y":[0.6996,0.6996]}}
EOF

test_expect_success 'a confidence written as 0.7 is high, as the threshold says' '
	(cd repo && ci-rank --model ../edge.json total price with tax >../o) &&
	summary o | "$JQ" -e ".confidence == 0.7 and .quality == \"high\""
'

test_expect_success 'with vectors: its with_vectors member' '
	(cd repo && ci-index --embed update >/dev/null 2>&1 &&
	 ci-rank --model ../two.json total price with tax >../o) &&
	summary o | "$JQ" -e ".confidence == 0.75 and .quality == \"high\" and (.signals | index(\"semantic\"))"
'

# the same with a semantic member (semantic mode's): 0.9
cat >three.json <<\EOF
{"format":"ci-rank-linear/1","bias":0,"features":[{"name":"fused","mean":0,"scale":1,"weight":1}],
 "calibration":{"method":"platt","a":0,"b":0},
 "with_vectors":{"bias":0,"features":[{"name":"fused","mean":0,"scale":1,"weight":1},
                                      {"name":"semantic_max","mean":0,"scale":1,"weight":0.001}],
  "calibration":{"method":"isotonic","x":[-100,100],"y":[0.75,0.75]}},
 "semantic":{"bias":0,"features":[{"name":"fused","mean":0,"scale":1,"weight":1}],
  "calibration":{"method":"isotonic","x":[-100,100],"y":[0.9,0.9]}}}
EOF

test_expect_success 'semantic mode: the semantic member; hybrid mode: with_vectors' '
	(cd repo && ci-rank --model ../three.json --mode semantic total price with tax >../o &&
	 ci-rank --model ../three.json --mode hybrid total price with tax >../h) &&
	summary o | "$JQ" -e ".confidence == 0.9 and .signals == [\"semantic\"]" &&
	summary h | "$JQ" -e ".confidence == 0.75"
'

# with_vectors members that read no semantic feature (as the shipped model's
# since session 42): hybrid mode leaves the signal out, so the top level
# answers (0.5), as without vectors; the hand-set fusion keeps it
# (two.json with path_cosine for its with_vectors member's semantic feature,
# and a with_vectors_history member of fused alone)
"$JQ" -c '.with_vectors.features[1].name = "path_cosine" |
	  .with_vectors_history = (.with_vectors | .features |= .[:1] | .calibration.y = [0.8, 0.8])' \
	two.json >blind.json

test_expect_success 'with vectors, a with_vectors member that reads no semantic feature: hybrid leaves the signal out' '
	(cd repo && ci-rank --model ../blind.json --explain total price with tax >../o &&
	 ci-rank --model ../blind.json --fusion rrf total price with tax >../r &&
	 ci-rank --model ../blind.json --mode semantic total price with tax >../s) &&
	summary o | "$JQ" -e ".confidence == 0.5 and (.signals | index(\"semantic\") == null)" &&
	"$JQ" -s -e "map(select(._type == \"hit\") | .signals | has(\"semantic\")) | length > 0 and all(. == false)" o &&
	summary r | "$JQ" -e ".signals | index(\"semantic\") != null" &&
	summary s | "$JQ" -e ".signals == [\"semantic\"] and .confidence == 0.75"
'

test_expect_success 'semantic mode, a model without a semantic member: with_vectors' '
	(cd repo && ci-rank --model ../two.json --mode semantic total price with tax >../o) &&
	summary o | "$JQ" -e ".confidence == 0.75"
'

test_expect_success 'ci search: the search quality'"'"'s confidence is ci-rank'"'"'s' '
	(cd repo && ci-rank total price with tax >../o && ci search --json total price with tax >../s) &&
	summary o | "$JQ" -r .confidence >want &&
	"$JQ" -r "select(._type == \"search_quality\") | .confidence" s >got &&
	test_cmp want got
'

test_expect_success 'ci-mcp search: the summary carries the same confidence' '
	(cd repo && printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"total price with tax\"}}}" |
	 ci-mcp >../m 2>../merr) &&
	"$JQ" -r ".result.structuredContent.results | last | .confidence" m >got &&
	# ci-mcp keeps the index up to date with the git history (ci-index
	# --history): ci-rank on that index answers with the same member
	(cd repo && ci-index status | "$JQ" -e ".commits > 0" &&
	 ci-rank total price with tax >../o2) &&
	summary o2 | "$JQ" -r .confidence >want && test_cmp want got
'

test_expect_code 3 'a calibration that falls is refused' '
	echo "{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"calibration\":{\"method\":\"platt\",\"a\":-1,\"b\":0}}" >bad.json &&
	(cd repo && ci-rank --model ../bad.json total price) 2>err
'
test_expect_success '... says so' 'test_grep "a must not be negative" err'

test_done
