#!/bin/sh
# refs.sh: how long ci-refs impact and cycles take on a large index, against
# what the same questions cost other tools in the same run.
#
# usage: bench/refs.sh [-n <runs>] [--index <db>] [<tree>]
#
# <tree> is the indexed tree (default $CI_BENCH_TREE, else
# /var/tmp/corpus/linux-source-6.1), <db> its index (default $CI_BENCH_INDEX,
# else <tree>/.ci-index/index.db); build it once with `ci-index build` in the
# tree (about 10 minutes of two cores for Linux).  The index must have the
# schema version this ci reads: an index of version 1 is brought up to date in
# place, keeping everything, by `ci-index --index <db> load </dev/null` (or
# `update`).  Nothing here writes to the index.
#
# It times, median of -n runs (default 3), with GNU time:
#
#   ci-refs impact include/linux/list.h      reverse imports (2 levels), references
#                                            of its symbols, coupling; scored
#   rg -l -F '<linux/list.h>'                 the direct includers only, by text
#   ci-refs impact kernel/sched/core.c:schedule
#                                            the files referencing one symbol
#   rg -l -w schedule                         the files naming it, by text
#   ci-refs cycles                            every import cycle of the tree (SCCs)
#   sqlite3 <db> 'SELECT ... FROM imports'    reading the import graph alone: the
#                                            floor under cycles
#
# and prints wall and CPU seconds, peak RSS, the number of records written,
# the load average, and each ci-refs time over its peer's.  Variables: CI_REFS
# (default: next to this script's parent, then PATH).  Exit status: 0 done,
# 2 usage error, 3 a command failed.
set -u

runs=3
index=${CI_BENCH_INDEX:-}
tree=

usage() {
	echo "usage: bench/refs.sh [-n <runs>] [--index <db>] [<tree>]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
	--index) [ $# -ge 2 ] || usage; index=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "refs.sh: unknown option '$1'" >&2; usage ;;
	*) [ -z "$tree" ] || usage; tree=$1; shift ;;
	esac
done
case $runs in
''|*[!0-9]*) echo "refs.sh: -n takes a number" >&2; usage ;;
esac
tree=${tree:-${CI_BENCH_TREE:-/var/tmp/corpus/linux-source-6.1}}
[ -d "$tree" ] || { echo "refs.sh: no tree '$tree'" >&2; exit 2; }
tree=$(cd "$tree" && pwd)
index=${index:-$tree/.ci-index/index.db}
[ -f "$index" ] || { echo "refs.sh: no index '$index' (run ci-index build in $tree)" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
find_bin() {
	if [ -x "$here/../$1" ]; then echo "$here/../$1"
	elif [ -x "./$1" ]; then echo "$PWD/$1"
	else command -v "$1"
	fi
}
refs=${CI_REFS:-$(find_bin ci-refs)}
[ -x "$refs" ] || { echo "refs.sh: ci-refs not found (set CI_REFS)" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "refs.sh: GNU time is needed (apt-get install time)" >&2; exit 3; }
command -v rg >/dev/null || { echo "refs.sh: ripgrep is needed (apt-get install ripgrep)" >&2; exit 3; }
command -v sqlite3 >/dev/null || { echo "refs.sh: the sqlite3 shell is needed (apt-get install sqlite3)" >&2; exit 3; }

export LC_ALL=C
unset CI_INDEX

tmp=$(mktemp -d "${TMPDIR:-/tmp}/refs-bench.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# the index must be readable by this ci-refs (schema version), and warm
"$refs" --index "$index" cycles --scope nowhere/ >/dev/null 2>"$tmp/err"
if [ $? -gt 1 ]; then
	echo "refs.sh: ci-refs cannot read '$index':" >&2
	cat "$tmp/err" >&2
	exit 3
fi
cat "$index" >/dev/null
(cd "$tree" && rg -l -F 'warm the page cache' . >/dev/null 2>&1)

# run <name> <command>: time it -n times; the median wall, its CPU, the max RSS,
# the records written; the median wall also goes to $tmp/<name>.wall
run() {
	name=$1
	shift
	echo "  \$ (cd $tree && $*)"
	: >"$tmp/times"
	i=0
	while [ "$i" -lt "$runs" ]; do
		(cd "$tree" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" sh -c "$*" >"$tmp/out" 2>"$tmp/err")
		rc=$?
		if [ $rc -gt 1 ]; then
			echo "refs.sh: '$*' failed ($rc):" >&2
			tail -n 5 "$tmp/err" >&2
			exit 3
		fi
		cat "$tmp/t" >>"$tmp/times"
		i=$((i + 1))
	done
	lines=$(wc -l <"$tmp/out")
	sort -n "$tmp/times" | awk -v runs="$runs" -v name="$name" -v lines="$lines" -v f="$tmp/$name.wall" '
		{ w[NR] = $1; c[NR] = $2 + $3; if ($4 > rss) rss = $4 }
		END {
			m = int((runs + 1) / 2)
			printf "%-22s %8.2f %8.2f %8.0f %9d\n", name, w[m], c[m], rss / 1024, lines
			print w[m] > f
		}' >>"$tmp/table"
}

ratio() {
	awk -v a="$(cat "$tmp/$1.wall")" -v b="$(cat "$tmp/$2.wall")" -v n1="$1" -v n2="$2" \
		'BEGIN { printf "%-22s %8.2f  (%s / %s, wall)\n", n1, (b > 0 ? a / b : 0), n1, n2 }'
}

echo "tree: $tree"
echo "index: $index ($(du -m "$index" | cut -f1) MB, schema version $(sqlite3 "$index" "SELECT value FROM meta WHERE key = 'schema_version'"), $(sqlite3 "$index" "SELECT count(*) FROM files") files, $(sqlite3 "$index" "SELECT count(*) FROM imports") imports), $runs run(s)"
echo "load before: $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)"
: >"$tmp/table"
run impact-header "$refs --index $index --limit 10000 impact include/linux/list.h"
run rg-includers "rg -l -F '<linux/list.h>' ."
run impact-symbol "$refs --index $index --limit 10000 impact kernel/sched/core.c:schedule"
run rg-symbol "rg -l -w schedule ."
run cycles "$refs --index $index --limit 10000 cycles"
run sqlite-imports "sqlite3 $index 'SELECT path, resolved FROM imports WHERE resolved IS NOT NULL'"
echo "load after: $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)"
echo
printf "%-22s %8s %8s %8s %9s\n" "" "wall s" "cpu s" "RSS MB" "records"
cat "$tmp/table"
echo
ratio impact-header rg-includers
ratio impact-symbol rg-symbol
ratio cycles sqlite-imports
