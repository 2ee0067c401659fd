#!/bin/sh
# t1240-fleet-threads: a query over a shard set answered in this process
# (libcommon/fleet's threads, each shard through the command's library: the
# default) and by a process a shard (--shards-mode fork, the first fan-out):
# the same merged records byte for byte, the same exit status, for ci-grep,
# ci-rank and ci-refs, with shards that fail among them (fleet_error records).

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'fleet queries' 'the c and python grammars are not compiled in'
	test_done
fi

test_expect_success 'setup: five repositories, an index each; a manifest with two broken shards' '
	make_fleet_repos repos 5 &&
	mkdir set &&
	for r in r01 r02 r03 r04 r05; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done &&
	(cd set && for r in r01 r02 r03 r04 r05; do printf "%s\t%s.db\n" $r $r; done) >set/m.tsv &&
	sed "s,\t,\tset/," set/m.tsv >bad.tsv &&
	printf "r09\tset/missing.db\nr10\tbad.tsv\n" >>bad.tsv
'

# same <status> <command> <args...>: the command with --shards-mode fork and
# thread (and CI_SHARDS_MODE) writes the same records, exits <status> both ways
same() {
	want=$1
	shift
	cmd=$1
	shift
	test_status "$want" "$cmd" --shards-mode fork "$@" >fork.out 2>fork.err &&
	test_status "$want" "$cmd" --shards-mode thread "$@" >thread.out 2>thread.err &&
	test_cmp fork.out thread.out &&
	CI_SHARDS_MODE=thread CI_SHARDS_JOBS=3 "$cmd" "$@" >env.out 2>/dev/null
	test $? = "$want" &&
	test_cmp fork.out env.out &&
	test_grep "\"_type\":\"fleet\"" thread.out
}

test_expect_success 'ci-grep: the same records either way' '
	same 0 ci-grep --shards set shared_marker &&
	test_line_count = 11 thread.out &&
	same 0 ci-grep --shards set -i -w SHARED_MARKER &&
	same 0 ci-grep --shards set -C 1 "return x" &&
	same 0 ci-grep --shards set -c util &&
	same 0 ci-grep --shards set -l -g "*.py" split &&
	same 0 ci-grep --shards set -o "util_r0[0-9]" &&
	same 0 ci-grep --shards set -v -t c "^$" &&
	same 0 ci-grep --shards set --files &&
	same 0 ci-grep --shards set/m.tsv --shards-repo r02,r05 parse &&
	same 1 ci-grep --shards set zzz_nowhere
'

test_expect_success 'ci-grep: broken shards are fleet_error records either way' '
	same 2 ci-grep --shards bad.tsv shared_marker &&
	jq -r "select(._type == \"fleet_error\") | \"\\(.repo) \\(.exit) \\(.message)\"" thread.out >actual &&
	sed -n "s/^\(r[0-9]*\) 3 cannot open the index .*\(missing.db\|bad.tsv\).$/\1 \2/p" actual >names &&
	printf "r09 missing.db\nr10 bad.tsv\n" >expect &&
	test_cmp expect names &&
	test_grep "shard .r09." thread.err
'

# the threads read the learned model once a query (rank_model_load), not once a
# shard: the same hits; a model that cannot be read is each shard's failure, as
# each forked shard says it
test_expect_success 'ci-rank: the same hits, merged by score, either way' '
	same 0 ci-rank --shards set --limit 4 "parse the text" &&
	test "$(grep -c "\"_type\":\"hit\"" thread.out)" = 4 &&
	same 0 ci-rank --shards set --limit 3 --explain "util function" &&
	same 0 ci-rank --shards set --mode keyword --format full "split text" &&
	same 0 ci-rank --shards set context "parse the text" &&
	same 0 ci-rank --shards set --fusion rrf --limit 5 "parse the text" &&
	same 0 ci-rank --shards set --model "$CI_SRC_DIR/share/rank/model.json" --limit 5 "util main" &&
	same 3 ci-rank --shards set --model no-such-model.json "util main" &&
	test "$(grep -c "no-such-model.json" thread.err)" = 5 &&
	same 3 ci-rank --shards bad.tsv "parse the text" &&
	jq -r "select(._type == \"fleet_error\") | \"\\(.repo) \\(.exit)\"" thread.out >actual &&
	printf "r09 3\nr10 3\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'ci-refs: the same records either way' '
	same 0 ci-refs --shards set defs run &&
	same 0 ci-refs --shards set refs util_r03 &&
	same 0 ci-refs --shards set search parse &&
	same 0 ci-refs --shards set deps src/main.c &&
	same 0 ci-refs --shards set symbols py/mod.py &&
	same 1 ci-refs --shards set defs zzz_nowhere &&
	same 3 ci-refs --shards bad.tsv defs run &&
	jq -r "select(._type == \"fleet_error\") | \"\\(.repo) \\(.exit) \\(.message)\"" thread.out >actual &&
	jq -r "select(._type == \"fleet_error\") | \"\\(.repo) \\(.exit) \\(.message)\"" fork.out >expect &&
	test_cmp expect actual &&
	test_line_count = 2 actual
'

test_expect_success 'what a shard says when it finds nothing is named, in both modes' '
	test_status 1 ci-refs --shards set --shards-mode thread defs zzz_nowhere 2>err &&
	test_grep "r03: ci-refs: no definitions of .zzz_nowhere." err &&
	test "$(grep -c zzz_nowhere err)" = 5
'

test_expect_success 'a usage error: said once, exit 2, in both modes' '
	test_status 2 ci-grep --shards set --shards-mode thread --bogus x >out 2>err &&
	test_must_be_empty out &&
	test "$(grep -c "unknown option" err)" = 1 &&
	test_status 2 ci-refs --shards set --shards-mode thread nosuchcommand x 2>err &&
	test "$(grep -c "unknown command" err)" = 1 &&
	test_status 2 ci-grep --shards set --shards-mode sideways x 2>err &&
	test_grep "expected thread or fork" err
'

test_done
