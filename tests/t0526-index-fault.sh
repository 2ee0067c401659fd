#!/bin/sh
# t0526-index-fault: fault injection.  Round after round, random edits to a
# repository (files changed, added, deleted, renamed), a `ci-index update` killed
# at a random moment (SIGKILL from outside after 0-80 ms, about the time an
# update of a few files takes here, or the test hook
# CI_INDEX_CRASH_AFTER at a random file), then a normal update: the index must
# then equal a fresh build of the tree, table by table, and be intact.
#
# CI_FAULT_ROUNDS (default 4) and CI_FAULT_SEED (default 1) set the loop; make
# check runs the short one, bench/fault.sh a long one.  What is asserted does not
# depend on when the kill lands: any moment must leave a recoverable index.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

rounds=${CI_FAULT_ROUNDS:-4}
seed=${CI_FAULT_SEED:-1}

# rnd <round> <salt> <n>: a number in 0..n-1, the same for the same arguments
rnd() {
	awk -v s="$seed" -v r="$1" -v t="$2" -v n="$3" \
		'BEGIN { srand(s * 7919 + r * 104729 + t * 13); print int(rand() * n) }'
}

# edit <round>: random changes to repo/src
edit() {
	k=0
	while test $k -lt 4; do
		i=$(rnd "$1" $k 30)
		case $(rnd "$1" $((k + 100)) 4) in
		0) gen_c repo/src/f$i.c "r$1_$k" $((1 + $(rnd "$1" $((k + 200)) 6))) ;;
		1) rm -f repo/src/f$i.c ;;
		2) test -e repo/src/f$i.c && mv repo/src/f$i.c repo/src/g$1_$k.c ;;
		3) printf "int tail_%s_%s(void) { return %s; }\n" "$1" "$k" "$i" >>repo/src/f$i.c ;;
		esac
		k=$((k + 1))
	done
	return 0
}

test_expect_success 'setup: a repository of 30 files and its index' '
	gen_repo 30 &&
	(cd repo && ci-index build)
'

r=1
while test $r -le $rounds; do
	test_expect_success "round $r: edits, an update killed, an update: the index equals a fresh build" '
		sleep 1 && edit '$r' &&
		if test $(rnd '$r' 999 2) = 0; then
			n=$(rnd '$r' 998 8) &&
			(cd repo && env CI_INDEX_CRASH_AFTER=$n ci-index update >/dev/null 2>&1; echo $? >../rc) &&
			grep -E "^(0|137)\$" rc
		else
			ms=$(rnd '$r' 997 80) &&
			(cd repo && exec ci-index update >/dev/null 2>&1) & pid=$! &&
			sleep $(awk -v m=$ms "BEGIN { printf \"%.3f\", m / 1000 }") &&
			kill -9 $pid 2>/dev/null; wait $pid; true
		fi &&
		(cd repo && ci-index update) &&
		(cd repo && ci-index status) >status.json &&
		"$JQ" -e ".stale == 0" status.json >/dev/null &&
		rm -f clean.db &&
		(cd repo && ci-index --index ../clean.db build) &&
		index_dump clean.db >clean.dump &&
		index_dump repo/.ci-index/index.db >index.dump &&
		test_cmp clean.dump index.dump &&
		sqlite3 repo/.ci-index/index.db "PRAGMA integrity_check" >integrity &&
		echo ok >expect && test_cmp expect integrity
	'
	r=$((r + 1))
done

test_done
