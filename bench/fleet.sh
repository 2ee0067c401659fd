#!/bin/sh
# bench/fleet.sh: fleet indexing and one query over many shards, measured.
#
#   bench/fleet.sh [--bin <dir>] [--work <dir>] [--counts "10 100 1000"] [--queries <n>] [--jobs <n>]
#                  [--ways "fork thread server"] [--no-parts]
#
# 1. generates max(counts) small git repositories (5 files, ~120 lines each: three C
#    files, two Python modules; names and contents differ per repository) and
#    indexes them all with `ci fleet --engine parallel` (the indexing rate);
# 2. for each count N, a manifest of the first N shards; each query (ci-grep,
#    ci-rank, ci-refs; --queries of each, different words) runs once to warm the
#    page cache, then again timed: p50 and p95 of the wall time per command, for
#    each way of answering: a process a shard (fork), threads in the command's
#    process (thread), and the set's resident server (server, --shards-serve);
#    and the server's CPU a query: the task-clock of the server and the workers
#    it forks (`perf stat -p`, which follows them; its workers are reaped by the
#    kernel, so /proc's children's times do not see them), over the timed and
#    warming queries, divided by the queries and by the shards (no perf: not
#    measured); --ways leaves some ways out (the cells say -);
# 3. what a query costs, taken apart: one shard's command alone (process start,
#    opening the index, the query), a process that does nothing (`ci-grep
#    --version`: exec, dynamic linking, ASan if built with it), and the fan-out
#    with one shard at a time against the default (twice the CPUs); --no-parts
#    leaves this out.
#
# Use a build without --enable-asan (--bin): ASan makes each process start several
# times slower, and a process per shard is what a query over shards pays.
# Not part of make check.  Prints a report on stdout; the work directory is kept
# (--work; default a new directory under /var/tmp).
set -eu

bin= work= counts="10 100 1000" queries=10 jobs= parts=1 ways="fork thread server"
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--counts) counts=$2; shift 2 ;;
	--queries) queries=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--no-parts) parts=0; shift ;;
	--ways) ways=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/fleet.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
: "${bin:=$top}"
bin=$(cd "$bin" && pwd)
PATH=$bin:$PATH
export PATH
: "${work:=$(mktemp -d /var/tmp/ci-fleet-bench.XXXXXX)}"
mkdir -p "$work"
work=$(cd "$work" && pwd)
: "${jobs:=$(nproc)}"
max=0
for n in $counts; do [ "$n" -gt "$max" ] && max=$n; done
export LC_ALL=C GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b \
	GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000' CI_RANK_SERVER=0 CI_INDEX_SERVER=0

now_ms() { date +%s%3N; }

# pct <p> <file of numbers>: the p-th percentile (nearest rank)
pct() {
	sort -n "$2" | awk -v p="$1" '{ v[NR] = $1 } END { i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; print v[i] }'
}

echo "# bench/fleet.sh on $(nproc) CPUs, $(uname -r), binaries in $bin"
if nm "$bin/ci-grep" 2>/dev/null | grep -q __asan_init; then
	echo "# WARNING: $bin/ci-grep is built with ASan: process starts are several times slower"
fi

# ---- 1. repositories and their shards ---------------------------------------------
if [ ! -f "$work/repos/manifest.tsv" ] || [ "$(wc -l <"$work/repos/manifest.tsv")" -lt "$max" ]; then
	rm -rf "$work/repos" && mkdir -p "$work/repos"
	t0=$(now_ms)
	i=1
	while [ "$i" -le "$max" ]; do
		name=$(printf 'r%04d' "$i")
		d=$work/repos/$name
		mkdir -p "$d/src" "$d/lib"
		for f in alpha beta gamma; do
			{
				printf '#include "%s.h"\n\n' "$f"
				for k in 1 2 3 4 5 6 7 8; do
					printf '/* %s %s: step %d of the %s pipeline */\n' "$name" "$f" "$k" "$f"
					printf 'int %s_%s_step%d(int x)\n{\n\tif (x < %d)\n\t\treturn retry_backoff_%d(x);\n\treturn x * %d + %d;\n}\n\n' \
						"$f" "$name" "$k" "$k" "$((i % 7))" "$k" "$i"
				done
			} >"$d/src/$f.c"
		done
		for m in parse store; do
			{
				printf '"""%s module of %s."""\n\n' "$m" "$name"
				for k in 1 2 3 4 5 6; do
					printf 'def %s_record_%d(text, limit=%d):\n    """%s a record of %s"""\n    fields = text.split(",")\n    return fields[:limit]\n\n\n' \
						"$m" "$k" "$((i % 5 + k))" "$m" "$name"
				done
			} >"$d/lib/$m.py"
		done
		(cd "$d" && git init -q && git add . && git commit -q -m "$name")
		printf '%s\t%s\tHEAD\n' "$name" "$name" >>"$work/repos/manifest.tsv"
		i=$((i + 1))
	done
	t1=$(now_ms)
	echo "generated $max repositories in $(( (t1 - t0) / 1000 )) s"
fi
t0=$(now_ms)
ci fleet --engine parallel --jobs "$jobs" --out "$work/shards" "$work/repos/manifest.tsv" >"$work/jobs.ndjson" ||
	{ echo "ci fleet failed: $(jq -c 'select(.status == "failed")' "$work/jobs.ndjson" | head -3)"; exit 1; }
t1=$(now_ms)
built=$(jq -r 'select(.status == "built") | .repo' "$work/jobs.ndjson" | wc -l)
echo "ci fleet --engine parallel --jobs $jobs: $built of $max repositories built in $(( t1 - t0 )) ms" \
	"($(awk -v n="$built" -v ms="$((t1 - t0))" 'BEGIN { if (n) printf "%.1f ms", ms / n; else printf "-" }') a repository, wall)"
t0=$(now_ms)
ci fleet --engine parallel --jobs "$jobs" --out "$work/shards" "$work/repos/manifest.tsv" >/dev/null
t1=$(now_ms)
echo "ci fleet again, nothing changed: $(( t1 - t0 )) ms (resolving $max revisions, comparing the state)"
du -sk "$work/shards" | awk -v n="$max" '{ printf "shards: %d KiB in all with their checkouts, %.0f KiB a repository\n", $1, $1 / n }'
ls -l "$work/shards"/*.db | awk -v n="$max" '{ s += $5 } END { printf "indexes: %.0f KiB a repository\n", s / n / 1024 }'

# ---- 2. latency of one query over N shards -------------------------------------------
# Three ways, side by side: fork (a process a shard: --shards-mode fork), thread
# (this process, a thread per CPU, each shard's index opened and closed by its
# query: the default) and server (`--shards-serve`: the set's indexes kept open
# in a resident server, each query a worker forked from it, answering on threads).
words="retry_backoff parse_record store_record pipeline alpha_ gamma_ step3 fields limit split"
XDG_RUNTIME_DIR=$work/run
export XDG_RUNTIME_DIR
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

# way <name>: is that way measured (--ways)?
way() {
	case " $ways " in *" $1 "*) return 0 ;; esac
	return 1
}

# lat <how> <n> <cmd>: p50 and p95 in ms of --queries queries of ci-<cmd> over set-<n>
lat() {
	: >"$work/lat"
	q=0
	for w in $words; do
		[ "$q" -lt "$queries" ] || break
		q=$((q + 1))
		case $3 in
		grep) set -- ci-grep --shards "$work/set-$2.tsv" "$w" ;;
		rank) set -- ci-rank --shards "$work/set-$2.tsv" --limit 10 "where is the $w" ;;
		refs) set -- ci-refs --shards "$work/set-$2.tsv" --limit 20 search "$w" ;;
		esac
		"$@" >/dev/null 2>&1 || true	# warm
		t0=$(now_ms)
		"$@" >/dev/null 2>&1 || true
		t1=$(now_ms)
		echo $((t1 - t0)) >>"$work/lat"
	done
	echo "$(pct 50 "$work/lat") $(pct 95 "$work/lat")"
}

echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| shards | command | fork p50 | fork p95 | thread p50 | thread p95 | server p50 | server p95 |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for n in $counts; do
	head -n "$n" "$work/repos/manifest.tsv" | awk -F '\t' -v d="$work/shards" '{ print $1 "\t" d "/" $1 ".db" }' >"$work/set-$n.tsv"
	for cmd in grep rank refs; do
		f="- -" t="- -" s="- -"
		if way fork; then f=$(CI_SHARDS_SERVER=0 CI_SHARDS_MODE=fork lat fork "$n" "$cmd"); fi
		if way thread; then t=$(CI_SHARDS_SERVER=0 CI_SHARDS_MODE=thread lat thread "$n" "$cmd"); fi
		if ! way server; then
			echo "| $n | ci-$cmd | ${f% *} | ${f#* } | ${t% *} | ${t#* } | ${s% *} | ${s#* } |"
			continue
		fi
		t0=$(now_ms)
		"ci-$cmd" --shards "$work/set-$n.tsv" --shards-serve >/dev/null 2>&1 &
		spid=$!	# the server itself (it does not go to the background)
		k=0
		until ls "$XDG_RUNTIME_DIR/ci/$cmd-shards-"*.sock >/dev/null 2>&1 || [ $k -gt 600 ]; do sleep 0.1; k=$((k + 1)); done
		t1=$(now_ms)
		cpu=
		if command -v perf >/dev/null 2>&1; then
			perf stat -x, -e task-clock -p "$spid" -o "$work/cpu" 2>/dev/null &
			cpu=$!
			sleep 0.5
		fi
		s=$(CI_SHARDS_MODE=thread lat server "$n" "$cmd")
		if [ -n "$cpu" ]; then kill -INT "$cpu" && wait "$cpu" || true; fi
		"ci-$cmd" --shards "$work/set-$n.tsv" --shards-stop >/dev/null 2>&1 || true
		wait
		echo "| $n | ci-$cmd | ${f% *} | ${f#* } | ${t% *} | ${t#* } | ${s% *} | ${s#* } |"
		echo "ci-$cmd --shards-serve over $n shards: listening after $((t1 - t0)) ms (every index opened);" \
			"CPU a query (server and workers): $([ -n "$cpu" ] && awk -F, -v q="$((2 * queries))" -v n="$n" \
			'$3 == "task-clock" { ms = $1 / q; printf "%.0f ms, %.2f ms a shard", ms, ms / n }' "$work/cpu" || echo -)" \
			>>"$work/serve-start"
	done
done
cat "$work/serve-start"
rm -f "$work/serve-start"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$parts" = 1 ] || { echo "work directory: $work"; exit 0; }

# ---- 3. where the time goes -----------------------------------------------------------
echo
one=$(head -n 1 "$work/repos/manifest.tsv" | cut -f1)
: >"$work/lat"; : >"$work/lat2"; : >"$work/lat3"
for k in 1 2 3 4 5 6 7 8 9 10; do
	t0=$(now_ms); ci-grep --version >/dev/null; t1=$(now_ms); echo $((t1 - t0)) >>"$work/lat"
	t0=$(now_ms); (cd "$work/shards/trees/$one@"* && ci-grep --index "$work/shards/$one.db" --trust-index retry_backoff >/dev/null); t1=$(now_ms)
	echo $((t1 - t0)) >>"$work/lat2"
	t0=$(now_ms); ci-rank --index "$work/shards/$one.db" "where is the retry_backoff" >/dev/null; t1=$(now_ms)
	echo $((t1 - t0)) >>"$work/lat3"
done
echo "one process that does nothing (ci-grep --version): p50 $(pct 50 "$work/lat") ms"
echo "one shard's ci-grep alone (process, index, query): p50 $(pct 50 "$work/lat2") ms"
echo "one shard's ci-rank alone: p50 $(pct 50 "$work/lat3") ms"
for n in $counts; do
	[ "$n" = "$max" ] || continue
	for j in 1 "$(( $(nproc) * 2 ))" "$(( $(nproc) * 4 ))"; do
		: >"$work/lat"
		for k in 1 2 3; do
			t0=$(now_ms)
			CI_SHARDS_SERVER=0 CI_SHARDS_MODE=fork CI_SHARDS_JOBS=$j ci-grep --shards "$work/set-$n.tsv" retry_backoff >/dev/null 2>&1 || true
			t1=$(now_ms)
			echo $((t1 - t0)) >>"$work/lat"
		done
		echo "ci-grep over $n shards, CI_SHARDS_JOBS=$j: p50 $(pct 50 "$work/lat") ms"
	done
done
echo "work directory: $work"
