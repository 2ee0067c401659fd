#!/bin/sh
# t1255-fleet-damaged: a damaged shard (an index file cut short, or with
# garbage over some of its pages) among good ones: whichever way the shards
# are answered (threads, a process a shard, the set's server), that shard is a
# fleet_error record and a line on stderr naming it, the exit status is not 0,
# and the other shards' records still come out.  On threads, a die() in the
# damaged shard's query (libcommon/fleet's trap) ends that shard, not the
# process.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'damaged shards' 'the c and python grammars are not compiled in'
	test_done
fi

XDG_RUNTIME_DIR=$TRASH_DIRECTORY/run
CI_SHARDS_SERVER_IDLE=60	# a server a failed test leaves goes by itself
export XDG_RUNTIME_DIR CI_SHARDS_SERVER_IDLE
mkdir -m 700 "$XDG_RUNTIME_DIR"

test_expect_success 'setup: three repositories; sets with r02 cut short, or with garbage pages' '
	make_fleet_repos repos 3 &&
	mkdir good cut garbage &&
	for r in r01 r02 r03; do
		(cd repos/$r && ci-index --index ../../good/$r.db --no-progress build . 2>/dev/null) || return 1
		cp good/$r.db cut/ && cp good/$r.db garbage/ || return 1
	done &&
	size=$(wc -c <good/r02.db) &&
	head -c $((size / 3)) good/r02.db >cut/r02.db &&
	# pages 8 to 67 (of 4 KiB) overwritten: the header and schema stay readable
	awk "BEGIN { for (i = 0; i < 60 * 4096; i++) printf \"%c\", 65 + i % 26 }" >junk &&
	dd if=junk of=garbage/r02.db bs=4096 seek=8 conv=notrunc 2>/dev/null &&
	! cmp -s good/r02.db garbage/r02.db
'

# damaged <set> <mode> <command...>: r02 fails (a fleet_error, named on stderr),
# r01 and r03 answer as over the good set, the status is not 0 or 1
damaged() {
	set_=$1 mode=$2
	shift 2
	cmd=$1
	shift
	CI_SHARDS_SERVER=0 "$cmd" --shards good --shards-mode "$mode" "$@" >good.out 2>/dev/null
	test $? = 0 || return 1
	CI_SHARDS_SERVER=$server "$cmd" --shards "$set_" --shards-mode "$mode" "$@" >out 2>err
	rc=$?
	echo "status $rc" &&
	test $rc -ge 2 &&
	jq -r "select(._type == \"fleet_error\") | .repo" out >failed &&
	echo r02 >expect &&
	test_cmp expect failed &&
	test_grep "shard .r02. ($TRASH_DIRECTORY/$set_/r02.db): exit $rc\\|shard .r02. .*: exit [23]" err &&
	jq -c "select(._type != \"fleet\" and ._type != \"fleet_error\" and .repo != \"r02\")" good.out >expect &&
	jq -c "select(._type != \"fleet\" and ._type != \"fleet_error\")" out >actual &&
	test_cmp expect actual &&
	test -s actual &&
	jq -r "select(._type == \"fleet\") | \"\\(.answered) \\(.failed)\"" out >actual &&
	echo "2 1" >expect &&
	test_cmp expect actual
}

server=0
for set_ in cut garbage; do
	for mode in thread fork; do
		test_expect_success "$set_, $mode: ci-grep, ci-rank and ci-refs answer the other shards" '
			damaged $set_ $mode ci-grep shared_marker &&
			damaged $set_ $mode ci-rank --limit 5 "parse the text" &&
			damaged $set_ $mode ci-refs search util
		'
	done
done

test_expect_success 'garbage, threads: the damage is the shard'"'"'s, said as the command run alone says it' '
	CI_SHARDS_SERVER=0 test_must_fail ci-rank --shards garbage --shards-mode thread "parse the text" >out 2>err &&
	jq -r "select(._type == \"fleet_error\") | .message" out >msg &&
	test_grep "damaged\|malformed" msg &&
	test_must_fail ci-rank --index garbage/r02.db "parse the text" 2>alone.err &&
	test_grep "damaged\|malformed" alone.err
'

test_expect_success 'garbage, the set'"'"'s server: the other shards answer' '
	(ci-rank --shards garbage --shards-serve >/dev/null 2>serve.err &) &&
	i=0 &&
	while ! ls "$XDG_RUNTIME_DIR/ci" 2>/dev/null | grep -q "^rank-shards-.*\.sock$"; do
		i=$((i + 1)) && test $i -le 200 && sleep 0.1 || return 1
	done &&
	server=1 &&
	damaged garbage thread ci-rank --limit 5 "parse the text" &&
	ci-rank --shards garbage --shards-stop
'

test_done
