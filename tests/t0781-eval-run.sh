#!/bin/sh
# t0781-eval-run: bench/eval/run.sh on a small repository: it indexes each
# instance's base commit from the clone's objects, ranks, and scores the
# relevant file (Acc@1, R@5, MRR, the time taken), a query that begins with
# "-" too (a query, not an option); a miss ("no hit", ci-rank's
# exit 1) scores 0; a ci-rank that fails otherwise (a bad option here) stops the
# run with its message and a non-zero exit, instead of a silent miss; a
# missing clone is an error.  With --embed (a working clone updated commit by
# commit, each snapshot copied by sqlite3's VACUUM INTO): a copy that fails
# stops the run and leaves no file the next run would take for a snapshot,
# and the next run makes it; with CI_EVAL_SNAPSHOTS=0 no copy is made and the
# answers are the same.

. "$(dirname "$0")/lib.sh"

run=$CI_SRC_DIR/bench/eval/run.sh

test_expect_success 'setup' '
	three_functions_repo &&
	mkdir repos &&
	git clone -q --bare repo repos/acme+demo &&
	base=$(git -C repo rev-parse HEAD) &&
	printf "%s\n" \
		"{\"id\":\"acme__demo-1\",\"repo\":\"acme/demo\",\"base_commit\":\"$base\",\"query\":\"send_request retries the http post\",\"relevant_files\":[\"src/net.py\"]}" \
		"{\"id\":\"acme__demo-2\",\"repo\":\"acme/demo\",\"base_commit\":\"$base\",\"query\":\"zzqxv wqkkj\",\"relevant_files\":[\"src/config.py\"]}" \
		"{\"id\":\"acme__demo-3\",\"repo\":\"acme/demo\",\"base_commit\":\"$base\",\"query\":\"- load_settings reads the sections\",\"relevant_files\":[\"src/config.py\"]}" \
		>set.jsonl
'

test_expect_success 'a run scores a hit and a miss' '
	CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos CI_EVAL_WORK=$PWD/w CI_EVAL_RESULTS=$PWD/res.jsonl \
		"$run" set.jsonl keyword >out 2>err &&
	test_line_count = 3 res.jsonl &&
	jq -e -s "map(select(.id == \"acme__demo-1\"))[0] | .acc1 == 1 and .rr == 1 and .got[0] == \"src/net.py\" and .query_s > 0 and .index_s > 0" res.jsonl &&
	jq -e -s "map(select(.id == \"acme__demo-2\"))[0] | .acc1 == 0 and .rr == 0 and .got == []" res.jsonl &&
	jq -e -s "map(select(.id == \"acme__demo-3\"))[0] | .acc1 == 1" res.jsonl &&
	grep "^keyword	all	3	0.667" out
'

test_expect_success 'a ci-rank that fails stops the run with its message' '
	test_must_fail env CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos CI_EVAL_WORK=$PWD/w \
		CI_EVAL_RESULTS=$PWD/res2.jsonl CI_RANK_ARGS=--no-such-option \
		"$run" set.jsonl keyword >out 2>err &&
	grep "eval: ci-rank failed on acme__demo-1 (keyword, exit 2)" err &&
	grep "no-such-option" err &&
	test_must_be_empty res2.jsonl
'

test_expect_success 'an instance whose clone is missing is an error' '
	sed "s,acme/demo,acme/gone," set.jsonl >gone.jsonl &&
	test_must_fail env CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos CI_EVAL_WORK=$PWD/w \
		CI_EVAL_RESULTS=$PWD/res3.jsonl "$run" gone.jsonl keyword 2>err &&
	grep "eval: no clone of acme/gone" err
'

test_expect_success '--embed: a snapshot that could not be copied stops the run and is not left behind' '
	mkdir shim &&
	cat >shim/sqlite3 <<-\EOF &&
	#!/bin/sh
	# as sqlite3 does when VACUUM INTO meets a lock: an empty file, an error
	for a; do last=$a; done
	f=${last#*\'"'"'}
	: >"${f%\'"'"'}"
	echo "Error: stepping, database is locked (5)" >&2
	exit 1
	EOF
	chmod +x shim/sqlite3 &&
	test_must_fail env PATH="$PWD/shim:$PATH" CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos \
		CI_EVAL_WORK=$PWD/we CI_EVAL_RESULTS=$PWD/res4.jsonl "$run" --embed set.jsonl keyword 2>err &&
	grep "eval: cannot copy" err &&
	! ls we/trees/*.vec.db 2>/dev/null
'

test_expect_success '--embed: the next run makes the snapshot and scores it' '
	CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos CI_EVAL_WORK=$PWD/we CI_EVAL_RESULTS=$PWD/res5.jsonl \
		"$run" --embed set.jsonl keyword semantic >out 2>err &&
	ls we/trees/*.vec.db >dbs &&
	test_line_count = 1 dbs &&
	test "$(sqlite3 "$(cat dbs)" "SELECT count(*) FROM vectors")" -gt 0 &&
	jq -e -s "map(select(.id == \"acme__demo-1\" and .mode == \"keyword\"))[0] | .acc1 == 1" res5.jsonl &&
	test_line_count = 6 res5.jsonl
'

test_expect_success '--embed with CI_EVAL_SNAPSHOTS=0: no copy, ranked on the working clone'"'"'s index' '
	CI_EVAL_SNAPSHOTS=0 CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos CI_EVAL_WORK=$PWD/wn \
		CI_EVAL_RESULTS=$PWD/res6.jsonl "$run" --embed set.jsonl keyword semantic >out 2>err &&
	! ls wn/trees/*.vec.db 2>/dev/null &&
	test "$(sqlite3 wn/embed/acme+demo.db "SELECT count(*) FROM vectors")" -gt 0 &&
	test_line_count = 6 res6.jsonl &&
	jq -s -c "map([.id, .mode, .got])" res5.jsonl >expect &&
	jq -s -c "map([.id, .mode, .got])" res6.jsonl >actual &&
	test_cmp expect actual
'

test_expect_success 'CI_EVAL_SNAPSHOTS other than 0 or 1 is an error' '
	test_must_fail env CI_EVAL_SNAPSHOTS=no CI_BIN=$CI_BUILD_DIR CI_EVAL_REPOS=$PWD/repos CI_EVAL_WORK=$PWD/wx \
		CI_EVAL_RESULTS=$PWD/res7.jsonl "$run" --embed set.jsonl keyword 2>err &&
	grep "eval: CI_EVAL_SNAPSHOTS must be 0 or 1, not .no." err &&
	! test -s res7.jsonl
'

test_done
