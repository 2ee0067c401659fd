#!/bin/bash
# bench/chunk.sh: ci-chunk against universal-ctags on one large tree.
#
# Both tools run on the same tree, in this process tree, one after the other,
# after one warm-up pass that reads every file (so both see a warm page cache).
# Neither reads version-control directories or ci's own .ci-index/ (ci-chunk
# skips them itself; ctags excludes .git, .hg, .svn by default, and is told
# --exclude=.ci-index).
# Each is timed with GNU time (wall, user+sys CPU, peak RSS); the figure kept is
# the median of N runs (peak RSS: the largest).  Files and bytes read come from
# ci-chunk's own file records (one extra, untimed run) and from ctags --totals.
#
# The workload that shaped it: the Linux 6.1 source (Debian linux-source-6.1,
# ~78,000 files, ~1.3 GB) on a 2-core machine; one run of each takes minutes.
#
# Not part of `make check`.  See bench/README.md.

set -u

usage() {
	cat <<'EOF'
usage: bench/chunk.sh [-n <runs>] [-j <threads>] [--only ci-chunk|ctags] [--no-count] [<tree>]

  <tree>            the tree to read (default: $CI_BENCH_TREE, else
                    /var/tmp/corpus/linux-source-6.1)
  -n <runs>         time each tool <runs> times and keep the median (default 1)
  -j <threads>      ci-chunk threads (default 2)
  --only <tool>     run only ci-chunk or only ctags
  --no-count        skip the untimed ci-chunk run that counts files, bytes and records
  -h, --help        show this help and exit

Environment: CI_CHUNK (default: ../ci-chunk next to this script, then ./ci-chunk,
then ci-chunk on PATH), CTAGS (default: ctags), CI_BENCH_TREE.
EOF
}

die() { echo "chunk.sh: $*" >&2; exit 2; }

runs=1
threads=2
only=
count=1
tree=${CI_BENCH_TREE:-/var/tmp/corpus/linux-source-6.1}
while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || die "-n needs a number"; runs=$2; shift 2 ;;
	-j) [ $# -ge 2 ] || die "-j needs a number"; threads=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || die "--only needs ci-chunk or ctags"; only=$2; shift 2 ;;
	--no-count) count=0; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "chunk.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) tree=$1; shift ;;
	esac
done
case $runs in ''|*[!0-9]*|0) die "-n: '$runs' is not a positive number" ;; esac
case $threads in ''|*[!0-9]*|0) die "-j: '$threads' is not a positive number" ;; esac
case $only in ''|ci-chunk|ctags) ;; *) die "--only: '$only' is not ci-chunk or ctags" ;; esac
[ -d "$tree" ] || die "'$tree' is not a directory (apt-get install linux-source-6.1; tar -C /var/tmp/corpus -xJf /usr/src/linux-source-6.1.tar.xz)"
tree=$(cd "$tree" && pwd -P)

here=$(cd "$(dirname "$0")" && pwd -P)
if [ -n "${CI_CHUNK:-}" ]; then
	chunk=$CI_CHUNK
elif [ -x "$here/../ci-chunk" ]; then
	chunk=$here/../ci-chunk
elif [ -x ./ci-chunk ]; then
	chunk=./ci-chunk
else
	chunk=$(command -v ci-chunk || true)
fi
ctags=${CTAGS:-ctags}

[ -x /usr/bin/time ] || die "GNU time is missing (apt-get install time)"
if [ "$only" != ctags ]; then
	[ -n "$chunk" ] && [ -x "$chunk" ] || die "no ci-chunk binary (build it with 'make ci-chunk' or set CI_CHUNK)"
	chunk=$(cd "$(dirname "$chunk")" && pwd -P)/$(basename "$chunk")
fi
if [ "$only" != ci-chunk ]; then
	command -v "$ctags" >/dev/null || die "no ctags (apt-get install universal-ctags)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ci-bench-chunk.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -n | tail -1; }

# timeit <name> <command...>: run it <runs> times in $tree with stdout to /dev/null,
# leaving $tmp/<name>.time (one "wall user sys maxrss_kib" line per run) and
# $tmp/<name>.err.<i>; returns non-zero if any run failed.
timeit() {
	local name=$1 i rc=0
	shift
	: > "$tmp/$name.time"
	: > "$tmp/$name.load"
	for i in $(seq 1 "$runs"); do
		cut -d' ' -f1 /proc/loadavg >> "$tmp/$name.load"
		(cd "$tree" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/$name.t" "$@" > /dev/null 2> "$tmp/$name.err.$i")
		local st=$?
		if [ $st -ne 0 ]; then
			echo "chunk.sh: $name run $i exited with status $st; the end of its stderr:" >&2
			tail -5 "$tmp/$name.err.$i" >&2
			rc=1
		fi
		grep -v '^Command ' "$tmp/$name.t" | tail -1 >> "$tmp/$name.time"
	done
	return $rc
}

# stats <name>: print "wall cpu rss_mib" (medians; RSS the largest).
stats() {
	local f=$tmp/$1.time
	local wall cpu rss
	wall=$(awk '{ print $1 }' "$f" | median)
	cpu=$(awk '{ print $2 + $3 }' "$f" | median)
	rss=$(awk '{ print $4 }' "$f" | maximum)
	echo "$wall $cpu $(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')"
}

echo "tree:     $tree"
echo "machine:  $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
[ "$only" = ctags ] || echo "ci-chunk: $chunk"
[ "$only" = ci-chunk ] || echo "ctags:    $($ctags --version | head -1) (single-threaded: this version has no threads option)"
echo "runs:     $runs (median wall and CPU; largest peak RSS)"
echo

echo "warm-up: reading every file of the tree once ..." >&2
start=$(date +%s)
find "$tree" \( -name .git -o -name .hg -o -name .svn -o -name .ci-index \) -prune -o -type f -print0 |
	xargs -0 cat > /dev/null 2>&1
echo "warm-up: $(( $(date +%s) - start )) s" >&2

chunk_cmd=("$chunk" -j "$threads" .)
ctags_cmd=("$ctags" -R --output-format=json --fields=+neKS --extras=+r --totals=yes --exclude=.ci-index -f - .)
fail=0

ci_files=? ci_bytes= ci_ok=0
if [ "$only" != ctags ]; then
	if [ $count = 1 ]; then
		echo "ci-chunk: untimed run to count files, bytes and records ..." >&2
		(cd "$tree" && "${chunk_cmd[@]}" 2> "$tmp/count.err") |
		awk -v list="$tmp/files" '
			{ t = substr($0, 11, 4); n[t]++ }
			t == "file" && match($0, /"size":[0-9]+/) { bytes += substr($0, RSTART + 7, RLENGTH - 7) }
			t == "file" && match($0, /"path":"[^"\\]*"/) { print substr($0, RSTART + 8, RLENGTH - 9) > list }
			END {
				printf "%d %d %d %d %d %d\n", n["file"], bytes, n["chun"], n["def\""], n["ref\""], n["impo"]
			}' > "$tmp/count"
		read -r ci_files ci_bytes ci_chunks ci_defs ci_refs ci_imports < "$tmp/count"
	fi
	echo "ci-chunk: timing: cd $tree && ${chunk_cmd[*]} > /dev/null" >&2
	if timeit ci-chunk "${chunk_cmd[@]}"; then ci_ok=1; else fail=1; fi
	read -r ci_wall ci_cpu ci_rss < <(stats ci-chunk)
fi

ct_files=? ct_bytes= ct_tags=
if [ "$only" != ci-chunk ]; then
	echo "ctags: timing: cd $tree && ${ctags_cmd[*]} > /dev/null" >&2
	timeit ctags "${ctags_cmd[@]}" || fail=1
	read -r ct_wall ct_cpu ct_rss < <(stats ctags)
	# --totals: "76287 files, 36243351 lines (1280569 kB) scanned in ..." (kB = 1024 bytes)
	read -r ct_files ct_bytes < <(sed -n 's/^\([0-9]*\) files, [0-9]* lines (\([0-9]*\) kB) scanned.*/\1 \2/p' "$tmp/ctags.err.1" | tail -1)
	[ -n "${ct_files:-}" ] || ct_files=?
	[ -n "${ct_bytes:-}" ] && ct_bytes=$((ct_bytes * 1024))
	ct_tags=$(sed -n 's/^\([0-9]*\) tags added to tag file.*/\1/p' "$tmp/ctags.err.1" | tail -1)
fi

# The same work for ctags: only the files ci-chunk read (ci-chunk skips files
# over 1 MiB, vendored and generated ones, that ctags -R reads).
cs_files=
if [ -z "$only" ] && [ -s "$tmp/files" ]; then
	ctags_same=("$ctags" --output-format=json --fields=+neKS --extras=+r --totals=yes -f - -L "$tmp/files")
	echo "ctags: timing on ci-chunk's files: cd $tree && ${ctags_same[*]} > /dev/null" >&2
	timeit ctags-same "${ctags_same[@]}" || fail=1
	read -r cs_wall cs_cpu cs_rss < <(stats ctags-same)
	read -r cs_files cs_bytes < <(sed -n 's/^\([0-9]*\) files, [0-9]* lines (\([0-9]*\) kB) scanned.*/\1 \2/p' "$tmp/ctags-same.err.1" | tail -1)
	[ -n "${cs_files:-}" ] || cs_files=?
	[ -n "${cs_bytes:-}" ] && cs_bytes=$((cs_bytes * 1024))
fi

# row <tool> <files> <bytes> <wall> <cpu> <rss>
row() {
	awk -v tool="$1" -v files="$2" -v bytes="$3" -v wall="$4" -v cpu="$5" -v rss="$6" 'BEGIN {
		mb = bytes == "" ? "?" : sprintf("%.1f", bytes / 1e6)
		fps = (files ~ /^[0-9]+$/ && wall > 0) ? sprintf("%.0f", files / wall) : "?"
		mbps = (bytes != "" && wall > 0) ? sprintf("%.2f", bytes / 1e6 / wall) : "?"
		printf "%-9s %8s %9s %9.2f %9.2f %9s %8s %9s\n", tool, files, mb, wall, cpu, fps, mbps, rss
	}'
}

echo
printf '%-9s %8s %9s %9s %9s %9s %8s %9s\n' tool files MB "wall s" "cpu s" "files/s" "MB/s" "RSS MiB"
[ "$only" = ctags ] || row ci-chunk "$ci_files" "$ci_bytes" "$ci_wall" "$ci_cpu" "$ci_rss"
[ "$only" = ci-chunk ] || row ctags "$ct_files" "$ct_bytes" "$ct_wall" "$ct_cpu" "$ct_rss"
[ -z "$cs_files" ] || row ctags-L "$cs_files" "$cs_bytes" "$cs_wall" "$cs_cpu" "$cs_rss"
echo "(MB = 10^6 bytes; cpu = user + sys; ci-chunk -j $threads, ctags single-threaded)"
[ -z "$cs_files" ] || echo "(ctags-L: ctags on the files ci-chunk read, with -L; of those, ctags parses the ones in a language it knows)"
if [ "$only" != ctags ] && [ $count = 1 ]; then
	echo "ci-chunk records: $ci_files file, $ci_chunks chunk, $ci_defs def, $ci_refs ref, $ci_imports import"
fi
[ "$only" = ci-chunk ] || echo "ctags tags: ${ct_tags:-?} (definitions, plus reference tags for #include/#undef and the like)"
# Other processes on the machine skew wall times (CPU times much less): say so.
load=$(cat "$tmp"/*.load 2>/dev/null | sort -n | tail -1)
echo "1-minute load average before the runs: at most $load"
awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l >= 0.5) }' &&
	echo "warning: the machine was busy (load $load on $(nproc) CPUs): wall times are pessimistic; compare CPU times"

if [ -z "$only" ]; then
	ratio=$(awk -v a="$ci_wall" -v b="$ct_wall" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	echo "ci-chunk wall time / ctags wall time: $ratio (CPU time: $(awk -v a="$ci_cpu" -v b="$ct_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'))"
	[ -z "$cs_files" ] || echo "ci-chunk wall time / ctags-L wall time: $(awk -v a="$ci_wall" -v b="$cs_wall" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') (CPU time: $(awk -v a="$ci_cpu" -v b="$cs_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'))"
fi

missed=0
pf() { if [ "$1" = 1 ]; then echo PASS; else echo FAIL; fi; }
if [ "$only" != ctags ]; then
	echo
	echo "targets (full chunks + definitions + references):"
	ok=$(awk -v w="$ci_wall" -v o="$ci_ok" 'BEGIN { print ((o && w < 180) ? 1 : 0) }')
	printf '  %-44s %8.1f s   %s\n' "ci-chunk wall time under 3 minutes" "$ci_wall" "$(pf "$ok")"
	[ "$ok" = 1 ] || missed=1
	ok=$(awk -v r="$ci_rss" -v o="$ci_ok" 'BEGIN { print ((o && r < 1024) ? 1 : 0) }')
	printf '  %-44s %8.1f MiB %s\n' "ci-chunk peak RSS under 1 GiB" "$ci_rss" "$(pf "$ok")"
	[ "$ok" = 1 ] || missed=1
	if [ -z "$only" ]; then
		ok=$(awk -v r="$ratio" -v o="$ci_ok" 'BEGIN { print ((o && r <= 3) ? 1 : 0) }')
		printf '  %-44s %8.2f x   %s\n' "ci-chunk time at most 3x ctags' time" "$ratio" "$(pf "$ok")"
		[ "$ok" = 1 ] || missed=1
	fi
fi
[ $fail = 0 ] || exit 3
exit $missed
