#!/bin/bash
# bench/grep.sh: ci-grep against ripgrep on one large tree.
#
# For each query of a fixed set (literals, -i, -w, regexes), in the same run:
#   - rg and ci-grep without an index, each timed <runs> times, their runs
#     alternating (median wall, user+sys CPU); the ratio ci-grep/rg of the medians;
#   - when the tree has an index (ci-index build), ci-grep with it: <lat-runs>
#     runs, p50 and p95 latency, and the ratio to rg; the same with --check dirs
#     (directories checked, not every file: files rewritten in place since the
#     last update are missed) and with --trust-index (nothing checked);
#   - the match counts of `rg -c` and `ci-grep -c`, any difference reported.
#
# Fairness: both write path:line[:col]:text lines to a file (not /dev/null, which
# rg detects and stops early for), both use every CPU, the page cache is warm.
# rg runs with --hidden, since ci-grep reads hidden files (it skips ignored,
# binary, vendored and generated files, and files over 1 MiB; rg skips ignored
# and binary files, binary by a NUL anywhere, ci-grep by a NUL in the first
# 8000 bytes as git does): the count comparison shows what that leaves apart.
#
# The workload that shaped it: the Linux 6.1 source (Debian linux-source-6.1,
# ~78,000 files, ~1.3 GB, not a git repository) on a 2-core machine.
#
# Not part of `make check`.  See bench/README.md.

set -u

usage() {
	cat <<'EOF'
usage: bench/grep.sh [-n <runs>] [-l <lat-runs>] [--only scan|index] [--no-count] [<tree>]

  <tree>            the tree to search (default: $CI_BENCH_TREE, else
                    /var/tmp/corpus/linux-source-6.1)
  -n <runs>         time each scan <runs> times, keep the median (default 5)
  -l <lat-runs>     runs of each indexed query for p50/p95 (default 20)
  --only <mode>     only the scans, or only the indexed queries
  --no-count        skip the match count comparison
  -h, --help        show this help and exit

Environment: CI_GREP (default: ../ci-grep next to this script, then ./ci-grep, then
ci-grep on PATH), RG (default: rg), CI_BENCH_TREE.  Build an index first with
`cd <tree> && ci-index build` to time the indexed mode.
EOF
}

die() { echo "grep.sh: $*" >&2; exit 2; }

runs=5
lat_runs=20
only=
count=1
tree=${CI_BENCH_TREE:-/var/tmp/corpus/linux-source-6.1}
while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || die "-n needs a number"; runs=$2; shift 2 ;;
	-l) [ $# -ge 2 ] || die "-l needs a number"; lat_runs=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || die "--only needs scan or index"; only=$2; shift 2 ;;
	--no-count) count=0; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "grep.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) tree=$1; shift ;;
	esac
done
case $runs in ''|*[!0-9]*|0) die "-n: '$runs' is not a positive number" ;; esac
case $lat_runs in ''|*[!0-9]*|0) die "-l: '$lat_runs' is not a positive number" ;; esac
case $only in ''|scan|index) ;; *) die "--only: '$only' is not scan or index" ;; esac
[ -d "$tree" ] || die "'$tree' is not a directory"
tree=$(cd "$tree" && pwd -P)

here=$(cd "$(dirname "$0")" && pwd -P)
if [ -n "${CI_GREP:-}" ]; then
	cigrep=$CI_GREP
elif [ -x "$here/../ci-grep" ]; then
	cigrep=$here/../ci-grep
elif [ -x ./ci-grep ]; then
	cigrep=./ci-grep
else
	cigrep=$(command -v ci-grep || true)
fi
[ -n "$cigrep" ] && [ -x "$cigrep" ] || die "no ci-grep binary (make ci-grep, or set CI_GREP)"
cigrep=$(cd "$(dirname "$cigrep")" && pwd -P)/$(basename "$cigrep")
rg=${RG:-rg}
command -v "$rg" >/dev/null || die "no rg (apt-get install ripgrep)"
[ -x /usr/bin/time ] || die "GNU time is missing (apt-get install time)"

has_index=0
[ -f "$tree/.ci-index/index.db" ] && has_index=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ci-bench-grep.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# The queries: a name, then the arguments both tools take.
queries=(
	"literal|PM_SUSPEND"
	"literal-rare|kmem_cache_alloc_node"
	"literal-common|spin_lock_irqsave"
	"-i|-i|pm_suspend"
	"-i-common|-i|mutex_lock"
	"-w-regex|-w|[A-Z]+_SUSPEND"
	"-w-literal|-w|inode"
	"regex|spin_lock_irqsave\\(&\\w+->lock"
	"regex-ops|\\bstruct\\s+\\w+_ops\\s*\\{"
	"alternation|ERANGE|EOVERFLOW"
	"no-literal|[A-Z]{3}_[0-9]{4}"
)
# the alternation's '|' is part of its pattern: names and flags come first
split_query() {
	local q=$1
	qname=${q%%|*}
	q=${q#*|}
	qflags=()
	case $q in
	-i\|*|-w\|*) qflags=("${q%%|*}"); q=${q#*|} ;;
	esac
	qpat=$q
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pct() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit } i = int((NR - 1) * p / 100 + 0.5) + 1; print v[i] }'; }

# timeone <name> <command...>: one run in $tree, stdout to a file; appends a
# "wall cpu" line to $tmp/<name>.time
timeone() {
	local name=$1 st
	shift
	(cd "$tree" && /usr/bin/time -f '%e %U %S' -o "$tmp/$name.t" "$@" > "$tmp/out" 2> "$tmp/$name.err")
	st=$?
	if [ $st -gt 1 ]; then
		echo "grep.sh: '$*' exited with status $st:" >&2
		tail -3 "$tmp/$name.err" >&2
	fi
	grep -v '^Command ' "$tmp/$name.t" | tail -1 | awk '{ print $1, $2 + $3 }' >> "$tmp/$name.time"
}

# latency <name> <ci-grep command...>: <lat_runs> runs; wall time in ms, one a line,
# in $tmp/<name>.lat, and the time ci-grep measures itself (--stats: from main()
# to the last line written, without starting the process) in $tmp/<name>.self
# lat_row <cmd array> <p50> <p95> <self p50> <self p95> <ratio>: time the
# command <lat_runs> times, set the five named variables (wall p50/p95 in ms,
# the in-process --stats p50/p95, p50 over rg's median) and print the row's cells
lat_row() {
	local -n cmd_=$1
	echo "timing: cd $tree && ${cmd_[*]} > out ($lat_runs runs)" >&2
	latency ix "${cmd_[@]}"
	printf -v "$2" '%s' "$(pct 50 < "$tmp/ix.lat")"
	printf -v "$3" '%s' "$(pct 95 < "$tmp/ix.lat")"
	printf -v "$4" '%s' "$(pct 50 < "$tmp/ix.self")"
	printf -v "$5" '%s' "$(pct 95 < "$tmp/ix.self")"
	printf -v "$6" '%s' "$(awk -v a="${!2}" -v b="$rg_wall" 'BEGIN { printf "%.3f", (b > 0 ? a / 1000 / b : 0) }')"
	printf ' %8s %8s %8s' "${!2}ms" "${!3}ms" "${!6}"
}

latency() {
	local name=$1 i a b
	shift
	: > "$tmp/$name.lat"
	: > "$tmp/$name.self"
	cd "$tree" || exit 3
	for i in $(seq 1 "$lat_runs"); do
		# bash's clock, not $(date): a command substitution forks, and the
		# fork and date's start (about 8 ms here) were counted as ci-grep's
		a=${EPOCHREALTIME/./}
		"$@" --stats > "$tmp/out" 2> "$tmp/$name.err"
		b=${EPOCHREALTIME/./}
		echo $(( b - a )) | awk '{ printf "%.1f\n", $1 / 1000 }' >> "$tmp/$name.lat"
		sed -n 's/.* total \([0-9.]*\) s$/\1/p' "$tmp/$name.err" | head -1 |
			awk '{ printf "%.1f\n", $1 * 1000 }' >> "$tmp/$name.self"
	done
	cd - > /dev/null || exit 3
}

echo "tree:     $tree"
echo "machine:  $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ci-grep:  $cigrep"
echo "rg:       $($rg --version | head -1)"
echo "runs:     $runs per scan (median), $lat_runs per indexed query (p50, p95)"
echo "index:    $([ $has_index = 1 ] && echo "$tree/.ci-index/index.db" || echo "none (cd $tree && ci-index build)")"
echo

echo "warm-up: reading every file of the tree once ..." >&2
find "$tree" -type f -print0 | xargs -0 cat > /dev/null 2>&1
(cd "$tree" && "$cigrep" --no-index -c warm_up_pass > /dev/null 2>&1; "$rg" --hidden -c warm_up_pass > /dev/null 2>&1)

printf '%-14s %-30s %8s %8s %8s %8s %7s' query pattern "rg s" "rg cpu" "ci s" "ci cpu" "ci/rg"
[ $has_index = 1 ] && [ "$only" != scan ] && printf ' %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s' "ix p50" "ix p95" "ix/rg" "sv p50" "sv p95" "sv/rg" "dr p50" "dr p95" "dr/rg" "tr p50" "tr p95" "tr/rg"
echo
if [ $has_index = 1 ] && [ "$only" != scan ]; then
	# the index's server (ci-index serve), started by an update and waited for:
	# ci-grep asks it where something happened since the index was written
	echo "starting the index's server: cd $tree && CI_INDEX_SERVER=always ci-index update" >&2
	(cd "$tree" && CI_INDEX_SERVER=always "$(dirname "$cigrep")/ci-index" update) || fail=1
fi
fail=0
slow=0
declare -a summary=()
for q in "${queries[@]}"; do
	split_query "$q"
	rg_cmd=("$rg" --hidden -n "${qflags[@]}" -e "$qpat")
	ci_cmd=("$cigrep" --no-json --no-index "${qflags[@]}" -e "$qpat")
	ix_cmd=(env CI_INDEX_SERVER=0 "$cigrep" --no-json "${qflags[@]}" -e "$qpat")
	sv_cmd=("$cigrep" --no-json "${qflags[@]}" -e "$qpat")
	dr_cmd=("$cigrep" --no-json --check dirs "${qflags[@]}" -e "$qpat")
	tr_cmd=("$cigrep" --no-json --trust-index "${qflags[@]}" -e "$qpat")
	rg_wall=nan rg_cpu=nan ci_wall=nan ci_cpu=nan ratio=nan
	: > "$tmp/rg.time"
	: > "$tmp/ci.time"
	if [ "$only" != index ]; then
		# the runs of the two alternate, so that a change of load hits both
		echo "timing, $runs times each, alternating: cd $tree && ${rg_cmd[*]} > out" >&2
		echo "                                        cd $tree && ${ci_cmd[*]} > out" >&2
		for i in $(seq 1 "$runs"); do
			timeone rg "${rg_cmd[@]}"
			timeone ci "${ci_cmd[@]}"
		done
		rg_wall=$(awk '{ print $1 }' "$tmp/rg.time" | median)
		rg_cpu=$(awk '{ print $2 }' "$tmp/rg.time" | median)
		ci_wall=$(awk '{ print $1 }' "$tmp/ci.time" | median)
		ci_cpu=$(awk '{ print $2 }' "$tmp/ci.time" | median)
		ratio=$(awk -v a="$ci_wall" -v b="$rg_wall" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
		awk -v r="$ratio" 'BEGIN { exit !((r + 0) > 1.0) }' && slow=1
	else
		echo "timing: cd $tree && ${rg_cmd[*]} > out" >&2
		timeone rg "${rg_cmd[@]}"
		rg_wall=$(awk '{ print $1 }' "$tmp/rg.time" | median)
	fi
	printf '%-14s %-30s %8.2f %8s %8s %8s %7s' "$qname" "${qflags[*]:-} $qpat" "$rg_wall" "$rg_cpu" "$ci_wall" "$ci_cpu" "$ratio"
	if [ $has_index = 1 ] && [ "$only" != scan ]; then
		lat_row ix_cmd p50 p95 s50 s95 ixr
		lat_row sv_cmd v50 v95 w50 w95 svr
		lat_row dr_cmd d50 d95 e50 e95 drr
		lat_row tr_cmd t50 t95 u50 u95 trr
		summary+=("$qname $p50 $p95 $ixr $t50 $t95 $trr $d50 $d95 $drr $v50 $v95 $svr")
	fi
	echo
	if [ $has_index = 1 ] && [ "$only" != scan ]; then
		echo "    in-process (--stats total): index p50 ${s50}ms p95 ${s95}ms; with the server p50 ${w50}ms p95 ${w95}ms; --check dirs p50 ${e50}ms p95 ${e95}ms; --trust-index p50 ${u50}ms p95 ${u95}ms"
	fi
	if [ $count = 1 ]; then
		(cd "$tree" && "$rg" --hidden -c "${qflags[@]}" -e "$qpat" 2>/dev/null) | sort > "$tmp/rg.c"
		(cd "$tree" && "$cigrep" --no-json --no-index -c "${qflags[@]}" -e "$qpat" 2>/dev/null) | sort > "$tmp/ci.c"
		read -r rf rl < <(awk -F: '{ n++; s += $NF } END { print n + 0, s + 0 }' "$tmp/rg.c")
		read -r cf cl < <(awk -F: '{ n++; s += $NF } END { print n + 0, s + 0 }' "$tmp/ci.c")
		if [ "$rf $rl" != "$cf $cl" ]; then
			echo "    counts differ: rg $rl lines in $rf files, ci-grep $cl lines in $cf files; first differences:"
			diff "$tmp/rg.c" "$tmp/ci.c" | grep '^[<>]' | head -5 | sed 's/^/      /'
		else
			echo "    same counts: $cl lines in $cf files"
		fi
		if [ $has_index = 1 ] && [ "$only" != scan ]; then
			(cd "$tree" && CI_INDEX_SERVER=0 "$cigrep" --no-json -c "${qflags[@]}" -e "$qpat" 2>/dev/null) | sort > "$tmp/ix.c"
			cmp -s "$tmp/ci.c" "$tmp/ix.c" || { echo "    the indexed counts differ from the scan's!"; fail=1; }
			(cd "$tree" && "$cigrep" --no-json -c "${qflags[@]}" -e "$qpat" 2>/dev/null) | sort > "$tmp/ix.c"
			cmp -s "$tmp/ci.c" "$tmp/ix.c" || { echo "    the counts with the index's server differ from the scan's!"; fail=1; }
			(cd "$tree" && "$cigrep" --no-json --check dirs -c "${qflags[@]}" -e "$qpat" 2>/dev/null) | sort > "$tmp/ix.c"
			cmp -s "$tmp/ci.c" "$tmp/ix.c" || { echo "    the --check dirs counts differ from the scan's!"; fail=1; }
		fi
	fi
done

echo
echo "(s: median wall seconds; cpu: median user+sys seconds; ci/rg: ratio of the median wall times;"
echo " ix: ci-grep with the index, wall latency p50/p95 over $lat_runs runs; ix/rg: its p50 over rg's median;"
echo " ix: without the index's server (CI_INDEX_SERVER=0); sv: with it (ci-index serve, running: it says"
echo " where something happened since the index); dr: with --check dirs; tr: with --trust-index;"
echo " wall times include starting the process"
echo " (measured below); \"in-process\" is ci-grep's own --stats total)"
if [ $has_index = 1 ] && [ "$only" != scan ]; then
	q=${queries[0]}
	split_query "$q"
	echo
	echo "where the indexed time goes (--stats of one run of the first query, then with --trust-index):"
	(cd "$tree" && "$cigrep" --stats --no-json "${qflags[@]}" -e "$qpat" 2>&1 >/dev/null) | sed 's/^/  /'
	(cd "$tree" && "$cigrep" --stats --check dirs --no-json "${qflags[@]}" -e "$qpat" 2>&1 >/dev/null) | sed 's/^/  /'
	(cd "$tree" && "$cigrep" --stats --trust-index --no-json "${qflags[@]}" -e "$qpat" 2>&1 >/dev/null) | sed 's/^/  /'
	# the floor: starting the process and printing the help
	: > "$tmp/h.lat"
	for i in $(seq 1 "$lat_runs"); do
		a=${EPOCHREALTIME/./}; "$cigrep" -h > /dev/null; b=${EPOCHREALTIME/./}
		echo $(( b - a )) | awk '{ printf "%.1f\n", $1 / 1000 }' >> "$tmp/h.lat"
	done
	echo "  starting the process (ci-grep -h): p50 $(pct 50 < "$tmp/h.lat")ms p95 $(pct 95 < "$tmp/h.lat")ms"
fi
if [ $has_index = 1 ] && [ "$only" != scan ]; then
	(cd "$tree" && "$(dirname "$cigrep")/ci-index" serve --stop) || fail=1
fi
echo
echo "targets:"
if [ "$only" != index ]; then
	printf '  %-52s %s\n' "unindexed ci-grep at most 1.0x rg's time, every query" "$([ $slow = 0 ] && echo PASS || echo FAIL)"
fi
if [ $has_index = 1 ] && [ "$only" != scan ]; then
	for s in "${summary[@]}"; do
		set -- $s
		case $1 in literal|literal-rare|-w-regex|alternation|-i)
			# the default: the index's server answers (build, update or
			# an earlier search started it)
			ok=$(awk -v r="${13}" -v p="${12}" 'BEGIN { print (((r + 0) <= 0.05 && (p + 0) < 50) ? "PASS" : "FAIL") }')
			printf '  %-60s %s\n' "indexed $1 (the default, served): >= 20x faster than rg, p95 < 50 ms" "$ok"
			ok=$(awk -v r="${10}" -v p="$9" 'BEGIN { print (((r + 0) <= 0.05 && (p + 0) < 50) ? "PASS" : "FAIL") }')
			printf '  %-60s %s\n' "  the same with --check dirs" "$ok"
			ok=$(awk -v r="$7" -v p="$6" 'BEGIN { print (((r + 0) <= 0.05 && (p + 0) < 50) ? "PASS" : "FAIL") }')
			printf '  %-60s %s\n' "  the same with --trust-index" "$ok"
			ok=$(awk -v r="$4" -v p="$3" 'BEGIN { print (((r + 0) <= 0.05 && (p + 0) < 50) ? "PASS" : "FAIL") }')
			printf '  %-60s %s\n' "  no server (CI_INDEX_SERVER=0; every indexed file stat'ed)" "$ok" ;;
		esac
	done
fi
exit $fail
