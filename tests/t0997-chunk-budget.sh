#!/bin/sh
# t0997-chunk-budget: the chunking workers stop running ahead once the records
# waiting to be handed over reach a byte budget (CI_CHUNK_BUDGET, 32 MiB by
# default: memory bounded by bytes, not only by the 512 files of the window),
# and the output stays the same, whole and in order, whatever the budget.

. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a tree of small and large files' '
	mkdir tree &&
	for i in $(seq 1 40); do
		n=$(( (i % 7) * 300 + 5 )) &&
		awk -v n=$n -v i=$i "BEGIN { for (k = 0; k < n; k++) printf \"int f%d_%d(int x)\\n{\\n\\treturn x + %d;\\n}\\n\\n\", i, k, k }" \
			>tree/f$i.c || return 1
	done &&
	(cd tree && git init -q && git add . && git commit -qm init) &&
	(cd tree && ci-chunk -j 1 >../one.out) &&
	test $(grep -c "\"_type\":\"file\"" one.out) = 40 &&
	test $(wc -c <one.out) -gt 1000000
'

for budget in 1 50000 1000000; do
	test_expect_success "a budget of $budget bytes, 4 workers: the same records as one worker" '
		(cd tree && CI_CHUNK_BUDGET='$budget' ci-chunk -j 4 >../b.out) &&
		test_cmp one.out b.out
	'
done

test_expect_success 'an index built under a tiny budget holds what one built without does' '
	(cd tree && ci-index --no-server --index ../a/index.db build . &&
	 CI_CHUNK_BUDGET=1 ci-index --no-server -j 4 --index ../b/index.db build .) &&
	ci-grep --index a/index.db -c "return x" >a.count &&
	ci-grep --index b/index.db -c "return x" >b.count &&
	test_cmp a.count b.count &&
	test $(cat a.count | wc -l) = 40
'

test_expect_code 2 'a budget that is not a number is refused' '
	(cd tree && CI_CHUNK_BUDGET=lots ci-chunk -j 2 >/dev/null)
'

test_done
