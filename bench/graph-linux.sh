#!/bin/sh
# graph-linux.sh: how long ci-refs' call-graph questions take on the Linux
# index (the latency targets of issue 25: callers, callees and impact of one
# symbol at most 200 ms; dead and arch at most 5 s), and two checks of the C
# extraction: `defs kmalloc` lists only definitions, `refs kmalloc` finds the
# uses inside macro bodies.
#
# usage: bench/graph-linux.sh [-n <runs>] [--index <db>] [--skip-whole] [<tree>]
#
# <tree> defaults to $CI_BENCH_TREE, else /var/tmp/corpus/linux-source-6.1;
# <db> to $CI_BENCH_INDEX, else <tree>/.ci-index/index.db (build it once:
# `ci-index --index <db> build <tree>`, no git repository needed).
# --skip-whole leaves out dead and arch (each loads the whole call graph).
# Prints, per command, the median wall and CPU seconds of -n runs (default 3),
# the peak RSS and the records written, then the two checks.  Nothing here
# writes to the index.  CI_REFS: the ci-refs to time (default: next to this
# script's parent, then PATH).  Exit status: 0 done, 2 usage, 3 a command failed.
set -u

runs=3
index=${CI_BENCH_INDEX:-}
tree=
whole=1

usage() {
	echo "usage: bench/graph-linux.sh [-n <runs>] [--index <db>] [--skip-whole] [<tree>]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
	--index) [ $# -ge 2 ] || usage; index=$2; shift 2 ;;
	--skip-whole) whole=0; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "graph-linux.sh: unknown option '$1'" >&2; usage ;;
	*) [ -z "$tree" ] || usage; tree=$1; shift ;;
	esac
done
case $runs in
''|*[!0-9]*|0) echo "graph-linux.sh: -n takes a number above 0" >&2; usage ;;
esac
tree=${tree:-${CI_BENCH_TREE:-/var/tmp/corpus/linux-source-6.1}}
[ -d "$tree" ] || { echo "graph-linux.sh: no tree '$tree'" >&2; exit 2; }
index=${index:-$tree/.ci-index/index.db}
[ -f "$index" ] || { echo "graph-linux.sh: no index '$index' (run ci-index build)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
refs=${CI_REFS:-}
if [ -z "$refs" ]; then
	if [ -x "$here/../ci-refs" ]; then refs=$here/../ci-refs; else refs=$(command -v ci-refs); fi
fi
[ -x "$refs" ] || { echo "graph-linux.sh: ci-refs not found (set CI_REFS)" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "graph-linux.sh: GNU time is needed (apt-get install time)" >&2; exit 3; }
export LC_ALL=C
unset CI_INDEX

tmp=$(mktemp -d "${TMPDIR:-/tmp}/graph-linux.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
cat "$index" >/dev/null	# warm

# run <name> <ci-refs arguments>: the median of -n runs
run() {
	name=$1
	shift
	: >"$tmp/times"
	i=0
	while [ "$i" -lt "$runs" ]; do
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$refs" --index "$index" --json "$@" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ $rc -gt 1 ]; then
			echo "graph-linux.sh: 'ci-refs $*' failed ($rc):" >&2
			tail -n 5 "$tmp/err" >&2
			exit 3
		fi
		tail -n 1 "$tmp/t" >>"$tmp/times"	# after "Command exited with non-zero status"
		i=$((i + 1))
	done
	lines=$(wc -l <"$tmp/out")
	sort -n "$tmp/times" | awk -v runs="$runs" -v name="$name" -v lines="$lines" -v cmd="$*" '
		{ w[NR] = $1; c[NR] = $2 + $3; if ($4 > rss) rss = $4 }
		END { m = int((runs + 1) / 2)
		      printf "%-16s %7.3f %7.3f %7.0f %8d  ci-refs %s\n", name, w[m], c[m], rss / 1024, lines, cmd }'
}

echo "index: $index ($(du -m "$index" | cut -f1) MB), $runs run(s), load $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)"
printf "%-16s %7s %7s %7s %8s\n" "" "wall s" "cpu s" "RSS MB" "records"
run callers callers kmalloc
run callers-d2 --depth 2 callers kmalloc
run callees callees vfs_read
run callees-d3 --depth 3 callees vfs_read
run impact-sym impact include/linux/slab.h:kmalloc
run impact-sym2 impact mm/slab_common.c:kfree
run impact-hdr impact include/linux/list.h
if [ "$whole" = 1 ]; then
	run dead --limit 10000 dead
	run arch --limit 10000 arch
fi
echo
# the checks: definitions only; uses inside #define bodies
"$refs" --index "$index" --json --limit 10000 defs kmalloc >"$tmp/defs" 2>/dev/null
"$refs" --index "$index" --json --limit 10000 refs kmalloc >"$tmp/refs" 2>/dev/null
echo "defs kmalloc: $(wc -l <"$tmp/defs") records, $(grep -c '"snippet":"[^"]*return kmalloc' "$tmp/defs") of them a 'return kmalloc(' line"
grep -o '"path":"[^"]*","line":[0-9]*' "$tmp/defs" | sed 's/^/  /'
echo "refs kmalloc: $(wc -l <"$tmp/refs") records, $(grep -c '"snippet":"#[ \t]*define' "$tmp/refs") on a #define line," \
	"$(grep -c '\\\\","confidence' "$tmp/refs") on a line continued with a backslash"
