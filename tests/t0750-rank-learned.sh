#!/bin/sh
# t0750-rank-learned: ci-rank's learned fusion (libcommon/rank) and its feature
# dump, on a small repository: --features writes one record a candidate file in
# scope, ranked as the hand-set fusion ranks them, with every feature named and
# the path priors, query mentions, coverage (the share of the query's terms a
# file of code holds, its path included) and markup (HTML, CSS) right; --model orders the files by a
# model's probability (a model that favours test files puts the test first
# under --scope all; one that disfavours the hand-set top file moves it down),
# the score being that probability; a model's with_history member answers on an
# index with git history, its top level on one without; the compiled-in model
# answers; a bad model or option is an error with a message.

. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'ci-rank learned fusion' 'the python grammar is not compiled in'
	test_done
fi

model() {	# model <bias> <name>:<weight>...: a linear model over unstandardised features
	b=$1; shift
	printf '{"format":"ci-rank-linear/1","bias":%s,"features":[' "$b"
	sep=
	for f in "$@"; do
		printf '%s{"name":"%s","mean":0,"scale":1,"weight":%s}' "$sep" "${f%%:*}" "${f#*:}"
		sep=,
	done
	printf ']}\n'
}

test_expect_success 'setup: a package with a test, docs and a changelog, indexed' '
	git init -q repo && cd repo &&
	mkdir -p shop tests docs &&
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
	EOF
	cat >tests/test_pricing.py <<-\EOF &&
	from shop.pricing import total_price


	def test_total_price_with_tax():
	    assert total_price([], 0.2) == 0
	EOF
	printf "# Pricing\n\nThe total price includes the tax.\n" >docs/pricing.md &&
	printf "1.0: total price with tax\n" >CHANGES.md &&
	git add . && git commit -q -m init &&
	ci-index build
'

test_expect_success '--features: a record a file in scope, ranked, every feature named' '
	(cd repo && ci-rank --features ../f.jsonl total price with tax >../out) &&
	"$JQ" -r .path f.jsonl >paths &&
	test_grep "^shop/pricing.py$" paths &&
	! grep -q "tests/" paths &&
	"$JQ" -s -c "[.[].rank]" f.jsonl >got &&
	"$JQ" -s -c "[range(1; length + 1)]" f.jsonl >want && test_cmp want got &&
	"$JQ" -s -e "map(.x | length) | unique == [42]" f.jsonl &&
	"$JQ" -c "select(._type == \"hit\") | .path" out | head -n 1 >h1 &&
	"$JQ" -c "select(.rank == 1) | .path" f.jsonl >f1 && test_cmp h1 f1
'

test_expect_success 'features: priors and the query'"'"'s mentions' '
	(cd repo && ci-rank --scope all --features ../all.jsonl tests of pricing total price >/dev/null) &&
	"$JQ" -c "select(.path == \"tests/test_pricing.py\") | .x | [.test, .depth, .q_names_dir]" all.jsonl >got &&
	echo "[1,1,1]" >want && test_cmp want got &&
	"$JQ" -c "select(.path == \"shop/pricing.py\") | .x | [.test, .q_names_file, .keyword > 0]" all.jsonl >got &&
	echo "[0,1,true]" >want && test_cmp want got &&
	"$JQ" -c "select(.path == \"CHANGES.md\") | .x | [.changelog, .doc]" all.jsonl >got &&
	echo "[1,1]" >want && test_cmp want got
'

test_expect_success 'features: coverage, the share of the query'"'"'s terms a file holds, its path included' '
	(cd repo && ci-rank --features ../cov.jsonl discount price rate >/dev/null) &&
	"$JQ" -s -e "map(select(.path == \"shop/pricing.py\")) | .[0].x.coverage == 1" cov.jsonl &&
	"$JQ" -s -e "map(select(.path == \"shop/cart.py\")) | .[0].x.coverage | . > 0 and . < 1" cov.jsonl &&
	(cd repo && ci-rank --features ../cov2.jsonl shop discount >/dev/null) &&
	"$JQ" -s -e "map(select(.path == \"shop/pricing.py\")) | .[0].x.coverage == 1" cov2.jsonl &&
	"$JQ" -s -e "map(select(.path == \"shop/cart.py\")) | .[0].x.coverage | . > 0 and . < 1" cov2.jsonl
'

test_expect_success 'features: an HTML page and a style sheet are markup, and cover nothing' '
	git init -q web && mkdir -p web/site &&
	printf "def render_page(title):\n    return title\n" >web/site/render.py &&
	printf "<html><body><h1>render page title</h1></body></html>\n" >web/index.html &&
	printf ".title { render: page; }\n" >web/site/page.css &&
	(cd web && git add . && git commit -q -m init && ci-index build &&
	 ci-rank --features ../web.jsonl render page title >/dev/null) &&
	"$JQ" -s -c "map({(.path): [.x.markup, (.x.coverage > 0)]}) | add" web.jsonl >got &&
	echo "{\"site/render.py\":[0,true],\"index.html\":[1,false],\"site/page.css\":[1,false]}" >want.json &&
	"$JQ" -S -c . want.json >want && "$JQ" -S -c . got >got.s && test_cmp want got.s
'

test_expect_success 'features: path_cosine, the query and the file'"'"'s path in ci-code; read when weighed' '
	(cd repo && ci-rank --features ../pc.jsonl the pricing of a cart >/dev/null) &&
	"$JQ" -s -e "length > 1 and all(.x.path_cosine | . >= -1 and . <= 1) and (map(.x.path_cosine) | unique | length > 1)" pc.jsonl &&
	model 0 path_cosine:50 >by-path.json &&
	(cd repo && CI_RANK_TRACE=1 ci-rank --limit 20 --model ../by-path.json the pricing of a cart >../pco 2>../trace) &&
	test_grep "trace: ci-code cosines" trace &&
	"$JQ" -r "select(._type == \"hit\") | .path" pco >got &&
	"$JQ" -s -r "sort_by(-.x.path_cosine, .rank) | .[].path" pc.jsonl >want &&
	test_cmp want got &&
	model 0 fused:1 >no-path.json &&
	(cd repo && CI_RANK_TRACE=1 ci-rank --model ../no-path.json the pricing of a cart >/dev/null 2>../trace) &&
	! grep -q "ci-code cosines" trace
'

test_expect_success 'features: names_cosine, the query and the names a file defines in ci-code' '
	(cd repo && ci-rank --features ../nc.jsonl a discount on the price >/dev/null) &&
	"$JQ" -s -e "length > 1 and all(.x.names_cosine | . >= -1 and . <= 1)" nc.jsonl &&
	"$JQ" -s -e "(map(select(.path == \"shop/pricing.py\")) | .[0].x.names_cosine) >
		     (map(select(.path == \"shop/cart.py\")) | .[0].x.names_cosine)" nc.jsonl &&
	model 0 names_cosine:50 >by-names.json &&
	(cd repo && CI_RANK_TRACE=1 ci-rank --limit 20 --model ../by-names.json a discount on the price >../nco 2>../trace) &&
	test_grep "trace: ci-code cosines" trace &&
	"$JQ" -r "select(._type == \"hit\") | .path" nco >got &&
	"$JQ" -s -r "sort_by(-.x.names_cosine, .rank) | .[].path" nc.jsonl >want &&
	test_cmp want got
'

test_expect_success '--model: a model that favours tests puts the test first; the score is its probability' '
	model -3 test:6 fused:0 >favour-tests.json &&
	(cd repo && ci-rank --scope all --model ../favour-tests.json total price with tax >../out) &&
	"$JQ" -r "select(._type == \"hit\") | .path" out | head -n 1 >got &&
	echo tests/test_pricing.py >want && test_cmp want got &&
	"$JQ" -r "select(._type == \"hit\") | .score" out | head -n 1 >got &&
	awk "BEGIN { printf \"%.3f\n\", 1 / (1 + exp(-3)) }" >want.raw &&
	awk "{ printf \"%.3f\n\", \$1 }" got >got.3 && test_cmp want.raw got.3
'

test_expect_success '--model: disfavouring the first file of the hand-set fusion moves it down' '
	(cd repo && ci-rank --limit 5 total price with tax >../rrf) &&
	"$JQ" -r "select(._type == \"hit\") | .path" rrf >rrf.paths &&
	test "$(wc -l <rrf.paths)" -ge 2 &&
	model 0 fused_rr:-5 >last.json &&
	(cd repo && ci-rank --limit 5 --model ../last.json total price with tax >../lrn) &&
	"$JQ" -r "select(._type == \"hit\") | .path" lrn >lrn.paths &&
	test "$(head -n 1 lrn.paths)" != "$(head -n 1 rrf.paths)" &&
	sort rrf.paths >a && sort lrn.paths >b && test_cmp a b
'

test_expect_success '--model: with_history answers on an index with git history, the top level without' '
	{ model 0 fused_rr:5 | sed "s/}\$//" &&
	  printf ",\"with_history\":" && model 0 fused_rr:-5 && printf "}\n"; } >hist-model.json &&
	"$JQ" -e ".with_history.features[0].weight == -5 and .features[0].weight == 5" hist-model.json &&
	(cd repo && ci-index --history --index ../hist.db build) &&
	(cd repo && ci-rank --limit 5 --fusion rrf total price with tax >../rrf-n) &&
	"$JQ" -r "select(._type == \"hit\") | .path" rrf-n | awk "!seen[\$0]++" >rrf.files &&
	test "$(wc -l <rrf.files)" -ge 2 &&
	(cd repo && ci-rank --limit 5 --model ../hist-model.json total price with tax >../out-n) &&
	"$JQ" -r "select(._type == \"hit\") | .path" out-n | head -n 1 >got &&
	head -n 1 rrf.files >want && test_cmp want got &&
	# with history: the hand-set order of that index reversed
	(cd repo && ci-rank --index ../hist.db --limit 5 --fusion rrf total price with tax >../rrf-h) &&
	"$JQ" -r "select(._type == \"hit\") | .path" rrf-h | awk "!seen[\$0]++" >rrf-h.files &&
	(cd repo && ci-rank --index ../hist.db --limit 5 --model ../hist-model.json total price with tax >../out-h) &&
	"$JQ" -r "select(._type == \"hit\") | .path" out-h | awk "!seen[\$0]++" >got &&
	tac rrf-h.files >want && test_cmp want got
'

test_expect_success '--fusion learned: the compiled-in model answers, the same way twice' '
	(cd repo && ci-rank --fusion learned total price with tax >../l1 &&
	 ci-rank --fusion learned total price with tax >../l2) &&
	test_cmp l1 l2 &&
	"$JQ" -s -e "[.[] | select(._type == \"hit\") | .score > 0 and .score <= 1] | length > 0 and all" l1 &&
	test_grep "\"_type\":\"summary\"" l1
'

test_expect_success 'hybrid uses the learned fusion by default, keyword the hand-set one' '
	(cd repo && ci-rank total price with tax >../d &&
	 ci-rank --fusion learned total price with tax >../l &&
	 ci-rank --mode keyword total price with tax >../k &&
	 ci-rank --mode keyword --fusion rrf total price with tax >../kr) &&
	test_cmp l d && test_cmp kr k
'

test_expect_success '--explain: the learned probability is the score of the file'"'"'s best chunk' '
	(cd repo && ci-rank --explain total price with tax >../e) &&
	"$JQ" -s -e "[.[] | select(._type == \"hit\")] | length > 0 and
		(map((.learned.probability - .score) | fabs < 0.002) | all) and
		(map(.learned.rrf_score > 0) | all)" e &&
	(cd repo && ci-rank --fusion rrf --explain total price with tax >../r) &&
	! grep -q "\"learned\"" r
'

test_expect_success 'CI_RANK_FUSION=rrf is --fusion rrf; an option wins' '
	(cd repo && CI_RANK_FUSION=rrf ci-rank total price with tax >../e1 &&
	 ci-rank --fusion rrf total price with tax >../e2 &&
	 CI_RANK_FUSION=rrf ci-rank --fusion learned total price with tax >../e3) &&
	test_cmp e2 e1 && test_cmp l e3
'
test_expect_code 2 'CI_RANK_FUSION takes rrf or learned' '(cd repo && CI_RANK_FUSION=best ci-rank total price) 2>err'
test_expect_success '... says so' 'test_grep "CI_RANK_FUSION: expected rrf or learned" err'

test_expect_code 3 'a model that is not one' '
	echo "{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[{\"name\":\"nope\",\"mean\":0,\"scale\":1,\"weight\":1}]}" >bad.json &&
	(cd repo && ci-rank --model ../bad.json total price) 2>err
'
test_expect_success '... names what is wrong' 'test_grep "unknown feature .nope." err'
test_expect_code 3 'a model file that is missing' '(cd repo && ci-rank --model ../none.json total price) 2>err'
test_expect_success '... says so' 'test_grep "cannot open .\.\./none.json." err'
test_expect_code 3 'a features file that cannot be written' '(cd repo && ci-rank --features /nonexistent/f total price) 2>err'
test_expect_code 2 '--fusion takes rrf or learned' '(cd repo && ci-rank --fusion best total price) 2>err'
test_expect_success '... says so' 'test_grep "expected rrf or learned" err'

test_done
