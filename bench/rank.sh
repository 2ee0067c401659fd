#!/bin/bash
# bench/rank.sh: ci-rank latency on an index of about 100k chunks.
#
#   bench/rank.sh [--vectors] [<tree>] [<runs>]
#
# With --vectors, a copy of the index with a USE-lite vector (int8) for every
# chunk, <tree>-vec.db, made once with `ci-index --embed --vectors int8 update`
# (about 7 minutes on 2 cores for 137k chunks), is queried instead: hybrid
# queries then use the semantic signal too.
#
# Indexes <tree> (default: fs/, kernel/, net/ and mm/ of the linux-source-6.1 tree
# under /var/tmp/corpus, copied into /var/tmp/ci-rank-bench) once, then runs a
# fixed set of hybrid queries <runs> times each (default 5) and prints p50/p95
# latency next to the targets (p50 < 20 ms, p95 < 50 ms on 100k chunks).
# CI_RANK_ARGS: more ci-rank options for every query (e.g. --chunk-expand 0,
# to compare a default with another value in two runs).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${CI_BIN:-$here/..}
vectors=0
if [ "${1:-}" = --vectors ]; then
	vectors=1
	shift
fi
linux=/var/tmp/corpus/linux-source-6.1
tree=${1:-/var/tmp/ci-rank-bench}
runs=${2:-5}
if [ ! -d "$tree" ]; then
	mkdir -p "$tree"
	for d in fs kernel net mm; do cp -r "$linux/$d" "$tree/"; done
fi
db=$tree.db
if [ ! -f "$db" ]; then
	t0=$(date +%s.%N)
	(cd "$tree" && "$bin/ci-index" --no-progress --index "$db" build)
	echo "index build: $(echo "$(date +%s.%N) - $t0" | bc) s"
fi
if [ $vectors = 1 ]; then
	if [ ! -f "$tree-vec.db" ]; then
		cp "$db" "$tree-vec.db.tmp"
		t0=${EPOCHREALTIME/./}
		(cd "$tree" && "$bin/ci-index" --no-progress --index "$tree-vec.db.tmp" --embed --vectors int8 update) ||
			{ echo "rank.sh: embedding failed" >&2; rm -f "$tree-vec.db.tmp"; exit 1; }
		echo "embedding every chunk: $(( (${EPOCHREALTIME/./} - t0) / 1000000 )) s"
		mv "$tree-vec.db.tmp" "$tree-vec.db"
		rm -f "$tree-vec.db.tmp.vec" "$tree-vec.db.tmp-shm" "$tree-vec.db.tmp-wal" "$tree-vec.db.tmp.lock"
		# the vector snapshot is named after the database: write it for the new name
		(cd "$tree" && "$bin/ci-index" --no-progress --index "$tree-vec.db" update) ||
			{ echo "rank.sh: the update that writes the vector snapshot failed" >&2; exit 1; }
	fi
	db=$tree-vec.db
fi
chunks=$(cd "$tree" && "$bin/ci-index" --index "$db" status | jq .chunks)
vecs=$(cd "$tree" && "$bin/ci-index" --index "$db" status | jq .vectors)
echo "chunks in the index: $chunks, vectors: $vecs"
times=$(mktemp)
for q in "inode cache eviction" "schedule_timeout" "tcp retransmit timer" "page fault handler" \
	 "where are mount options parsed" "struct sk_buff" "rcu_read_lock" "memory cgroup charge" \
	 "ext4 journal commit" "wake_up_process"; do
	i=0
	while [ $i -lt "$runs" ]; do
		# bash's clock, in the tree: a $(date) and a ( cd ) subshell each
		# fork, and their cost (about 5 ms here) was counted as ci-rank's
		cd "$tree"
		t0=${EPOCHREALTIME/./}
		# shellcheck disable=SC2086
		"$bin/ci-rank" --index "$db" ${CI_RANK_ARGS:-} "$q" >/dev/null || true
		t1=${EPOCHREALTIME/./}
		cd - >/dev/null
		echo $(( (t1 - t0) / 1000 )) >>"$times"
		i=$((i + 1))
	done
done
sort -n "$times" | awk -v chunks="$chunks" '{ a[NR] = $1 } END {
	p50 = a[int(NR * 0.5 + 0.5)]; p95 = a[int(NR * 0.95 + 0.5)];
	printf "queries: %d, p50 %d ms (target < 20: %s), p95 %d ms (target < 50: %s), on %d chunks\n",
		NR, p50, p50 < 20 ? "PASS" : "FAIL", p95, p95 < 50 ? "PASS" : "FAIL", chunks }'
rm -f "$times"
