#!/bin/sh
# t0740-eval-stats: bench/eval/stats.py, the statistics of a localisation run,
# on a tiny synthetic results file whose numbers are worked out by hand: the
# metrics per mode and repository (file-level Acc@1, R@5, R@10, MRR; the
# function-level Acc@1 and Acc@5 over the instances with spans), latency percentiles,
# bootstrap intervals that hold the mean (and collapse when every instance
# agrees), paired differences between modes and between two files, the same
# output for the same seed, and errors on bad input.  Then bench/eval/noisy.py,
# the dataset wrapped in issue-report noise, on a generated repository.

. "$(dirname "$0")/lib.sh"

stats=$CI_SRC_DIR/bench/eval/stats.py
if ! test_have_prog python3; then
	test_skip 'bench/eval/stats.py' 'no python3'
	test_done
fi

test_expect_success 'setup: a results file of two modes over four instances' '
	cat >res.jsonl <<-\EOF &&
	{"id":"a","repo":"r1","mode":"keyword","got":["x","y","z"],"relevant":["x"],"got_chunks":["x:C.f"],"relevant_spans":{"x":["C.f"]},"query_s":0.01,"index_s":2}
	{"id":"b","repo":"r1","mode":"keyword","got":["y","x"],"relevant":["x"],"got_chunks":["y:g","x:C.h","x:g"],"relevant_spans":{"x":["g"]},"query_s":0.02,"index_s":4}
	{"id":"c","repo":"r2","mode":"keyword","got":["p","q"],"relevant":["z"],"query_s":0.03,"index_s":0}
	{"id":"d","repo":"r2","mode":"keyword","got":["z"],"relevant":["z","w"],"query_s":0.04,"index_s":0}
	{"id":"a","repo":"r1","mode":"hybrid","got":["x","y"],"relevant":["x"],"query_s":0.01,"index_s":0}
	{"id":"b","repo":"r1","mode":"hybrid","got":["x","y"],"relevant":["x"],"query_s":0.01,"index_s":0}
	{"id":"c","repo":"r2","mode":"hybrid","got":["p","z"],"relevant":["z"],"query_s":0.01,"index_s":0}
	{"id":"d","repo":"r2","mode":"hybrid","got":["z"],"relevant":["z","w"],"query_s":0.01,"index_s":0}
	EOF
	python3 "$stats" --json --boot 200 --seed 7 res.jsonl >out.json
'

test_expect_success 'the metrics of a mode are the means of the instances' '
	"$JQ" -c ".modes.keyword.all | [.n, .acc1.mean, .r5.mean, .r10.mean, .mrr.mean]" out.json >got &&
	echo "[4,0.5,0.625,0.625,0.625]" >want && test_cmp want got &&
	"$JQ" -c ".modes.hybrid.all | [.acc1.mean, .mrr.mean]" out.json >got &&
	echo "[0.75,0.875]" >want && test_cmp want got
'

test_expect_success 'per repository' '
	"$JQ" -c ".modes.keyword.repos | [.r1.n, .r1.mrr.mean, .r2.n, .r2.r5.mean]" out.json >got &&
	echo "[2,0.75,2,0.25]" >want && test_cmp want got
'

test_expect_success 'function-level Acc@5 and Acc@1: over the instances with spans, path and name must match' '
	"$JQ" -c ".modes.keyword.all.fn_acc5 | [.n, .mean]" out.json >got &&
	echo "[2,1]" >want && test_cmp want got &&
	"$JQ" -c ".modes.keyword.all.fn_acc1 | [.n, .mean]" out.json >got &&
	echo "[2,0.5]" >want && test_cmp want got &&
	"$JQ" -c ".modes.hybrid.all.fn_acc5.n" out.json >got &&
	echo 0 >want && test_cmp want got
'

test_expect_success 'latency percentiles (nearest rank) and the index time per tree' '
	"$JQ" -c ".modes.keyword.all | [.query_ms_p50, .query_ms_p95, .index_s_mean, .index_trees]" out.json >got &&
	echo "[20,40,3,2]" >want && test_cmp want got
'

test_expect_success 'each interval holds its mean; one collapses when every instance agrees' '
	"$JQ" -e "[.modes[] | (.all, .repos[]) | .acc1, .r5, .r10, .mrr | select(.n > 0)
		| .lo <= .mean and .mean <= .hi and .lo >= 0 and .hi <= 1] | all" out.json &&
	"$JQ" -c ".modes.keyword.repos.r1.r5 | [.lo, .mean, .hi]" out.json >got &&
	echo "[1,1,1]" >want && test_cmp want got &&
	"$JQ" -e ".modes.keyword.all.mrr | .lo < .hi" out.json
'

test_expect_success 'paired difference hybrid - keyword: the mean difference, never below 0 here' '
	"$JQ" -c ".paired[0] | [.a, .b, .all.n, .all.mrr.mean]" out.json >got &&
	echo "[\"keyword\",\"hybrid\",4,0.25]" >want && test_cmp want got &&
	"$JQ" -e ".paired[0].all.mrr | .lo >= 0 and .hi <= 0.5 and .lo <= .mean" out.json
'

test_expect_success 'two files: paired over the ids both hold' '
	grep "\"mode\":\"keyword\"" res.jsonl | head -n 3 >one.jsonl &&
	grep "\"mode\":\"hybrid\"" res.jsonl | sed "s/hybrid/keyword/" >two.jsonl &&
	python3 "$stats" --json --boot 50 one.jsonl two.jsonl >pair.json &&
	"$JQ" -c ".paired[0].all | [.n, .acc1.mean]" pair.json >got &&
	echo "[3,0.3333333333333333]" >want && test_cmp want got
'

test_expect_success 'the same seed gives the same output; the table has a row per repository' '
	python3 "$stats" --boot 200 --seed 7 res.jsonl >t1 &&
	python3 "$stats" --boot 200 --seed 7 res.jsonl >t2 &&
	test_cmp t1 t2 &&
	test_grep "^keyword	r2	2	" t1 &&
	test_grep "^paired	hybrid - keyword	n=4	" t1
'

test_expect_code 3 'a file that cannot be read' '
	python3 "$stats" nonexistent.jsonl 2>err
'
test_expect_success '... says so' 'test_grep "cannot open .nonexistent.jsonl." err'

test_expect_code 3 'a malformed record stops it with its position' '
	printf "%s\n" "{\"id\":\"a\",\"got\":[],\"relevant\":[\"x\"]}" "{bad" >bad.jsonl &&
	python3 "$stats" bad.jsonl 2>err
'
test_expect_success '... file and line' 'test_grep "bad.jsonl:2: expected a JSON object" err'

test_expect_code 2 'too few resamples is a usage error' 'python3 "$stats" --boot 1 res.jsonl'

test_expect_success 'noisy.py: the query kept, wrapped in noise that names test files, never a relevant one' '
	git init -q repos/o+r &&
	(
		cd repos/o+r &&
		mkdir -p src tests &&
		echo "def f(): pass" >src/x.py &&
		echo "def test_a(): pass" >tests/test_a.py &&
		echo "def test_x(): pass" >tests/test_x.py &&
		git add . && git -c user.name=t -c user.email=t@t commit -q -m init
	) &&
	base=$(git -C repos/o+r rev-parse HEAD) &&
	"$JQ" -nc --arg b "$base" "{id: \"i\", repo: \"o/r\", base_commit: \$b, query: \"Fix f in x\\n\\nIt breaks.\", relevant_files: [\"src/x.py\", \"tests/test_x.py\"]}" >data.jsonl &&
	python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos data.jsonl >noisy.jsonl &&
	python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos data.jsonl >noisy2.jsonl &&
	test_cmp noisy.jsonl noisy2.jsonl &&
	"$JQ" -r .query noisy.jsonl >q &&
	test_grep "^Fix f in x\$" q &&
	test_grep "^tests/test_a.py " q &&
	! grep -e "test_x.py" -e "src/x.py" q &&
	test_grep "^## Environment" q &&
	"$JQ" -e ".relevant_files == [\"src/x.py\", \"tests/test_x.py\"] and .id == \"i\"" noisy.jsonl
'

test_expect_success 'noisy.py --repro: the lines the commit added to a test file, fenced, after the message' '
	(
		cd repos/o+r &&
		printf "def f(): return 1\n" >src/x.py &&
		printf "def test_x():\n    assert f() == 1\n" >>tests/test_x.py &&
		printf "ci:\n  - test\n" >tests.yml &&
		git add . && git -c user.name=t -c user.email=t@t commit -q -m fix
	) &&
	fix=$(git -C repos/o+r rev-parse HEAD) &&
	"$JQ" -c --arg c "$fix" ".commit = \$c" data.jsonl >withcommit.jsonl &&
	python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos --repro --no-noise withcommit.jsonl >repro.jsonl &&
	"$JQ" -r .query repro.jsonl >q &&
	cat >expect <<-\EOF &&
	Fix f in x

	It breaks.

	Steps to reproduce:

	```python
	def test_x():
	    assert f() == 1
	```

	EOF
	test_cmp expect q &&
	python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos --repro withcommit.jsonl >both.jsonl &&
	"$JQ" -r .query both.jsonl >q2 &&
	test_grep "^## Environment" q2 &&
	test_grep "^    assert f() == 1\$" q2 &&
	"$JQ" -c "del(.commit)" withcommit.jsonl >nocommit2.jsonl &&
	test_status 2 python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos --repro nocommit2.jsonl >out 2>err &&
	test_grep "^noisy.py: nocommit2.jsonl:1: no \"commit\" field" err
'

test_expect_success 'noisy.py: a malformed line or an unknown commit is named, exit 2' '
	echo "{not json" >bad.jsonl &&
	test_status 2 python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos bad.jsonl >out 2>err &&
	test_grep "^noisy.py: bad.jsonl:1: " err &&
	"$JQ" -c ".base_commit = \"0000000000000000000000000000000000000000\"" data.jsonl >nocommit.jsonl &&
	test_status 2 python3 "$CI_SRC_DIR/bench/eval/noisy.py" --repos repos nocommit.jsonl >out 2>err &&
	test_grep "^noisy.py: nocommit.jsonl:1: cannot list o/r at 0000" err
'

test_done
