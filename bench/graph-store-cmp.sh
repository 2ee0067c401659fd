#!/bin/sh
# graph-store-cmp.sh: do two builds of ci store the same call-graph answers?
# Each builds an index of each tree; then the stored tables (joined to paths
# and names, so that row ids do not matter) and `ci-refs --json dead` and
# `arch` (from the store, then bound anew with the stamp emptied) of the two
# are compared.  Used to check that a change to libcommon/graph (cgraph.c,
# gstore.c) leaves its answers as they were.
#
# usage: bench/graph-store-cmp.sh <build-a> <build-b> <tree>...
#
# <build-a>, <build-b>: build directories holding ci-index and ci-refs.
# Prints one line per tree: its definitions, file edges, dead and arch
# records, and SAME or what differs; then each build's wall, user seconds
# and peak KB.  Work files go to $TMPDIR (default /tmp)/graph-store-cmp.$$,
# removed unless GRAPH_STORE_KEEP is set.  Exit status: 0 all the same,
# 1 a difference, 2 usage.
set -u

if [ $# -lt 3 ] || [ ! -x "$1/ci-index" ] || [ ! -x "$2/ci-index" ]; then
	echo "usage: bench/graph-store-cmp.sh <build-a> <build-b> <tree>..." >&2
	exit 2
fi
a=$(cd "$1" && pwd)
b=$(cd "$2" && pwd)
shift 2
work=${TMPDIR:-/tmp}/graph-store-cmp.$$
mkdir -p "$work" || exit 2
status=0

# dump <build> <tree> <db> <tag>: the tables and answers into $work/<tag>.*
dump() {
	sqlite3 "$3" "SELECT f.path, d.name, d.kind, d.line, d.col, g.uses, g.self_calls, g.namesake_calls, g.entry
		FROM graph_defs g JOIN graph_files f ON f.id = g.fid JOIN defs d ON d.rowid = g.def
		ORDER BY 1, 2, 3, 4, 5, 6" >"$work/$4.defs"
	sqlite3 "$3" "SELECT fa.path, fb.path, c.calls FROM graph_calls c JOIN graph_files fa ON fa.id = c.a
		JOIN graph_files fb ON fb.id = c.b ORDER BY 1, 2" >"$work/$4.calls"
	sqlite3 "$3" "SELECT * FROM graph_files ORDER BY 1; SELECT * FROM graph_prefixes ORDER BY 1;
		SELECT * FROM graph_stamp" >"$work/$4.files"
	for q in dead arch; do
		(cd "$2" && "$1/ci-refs" --index "$3" --json --limit 10000 $q) >"$work/$4.$q" 2>&1
	done
	sqlite3 "$3" "DELETE FROM graph_stamp"
	for q in dead arch; do
		(cd "$2" && "$1/ci-refs" --index "$3" --json --limit 10000 $q) >"$work/$4.$q.bound" 2>&1
	done
}

for tree in "$@"; do
	name=$(basename "$tree")
	for side in a b; do
		eval bin=\$$side
		rm -f "$work/$side.db" "$work/$side.db-wal" "$work/$side.db-shm"
		(cd "$tree" && /usr/bin/time -f "%e s wall, %U s user, %M KB" "$bin/ci-index" --no-server \
			--index "$work/$side.db" build) 2>"$work/$side.build" >/dev/null
		dump "$bin" "$tree" "$work/$side.db" "$side"
	done
	diff=""
	for x in defs calls files dead arch dead.bound arch.bound; do
		cmp -s "$work/a.$x" "$work/b.$x" || diff="$diff $x"
	done
	[ -n "$diff" ] && status=1
	echo "$name: $(wc -l <"$work/b.defs") definitions, $(wc -l <"$work/b.calls") file edges," \
		"$(grep -c '"_type":"dead"' "$work/b.dead") dead, $(wc -l <"$work/b.arch") arch records:" \
		"${diff:+DIFFERENT:}${diff:-SAME}"
	echo "  a: $(tail -1 "$work/a.build")"
	echo "  b: $(tail -1 "$work/b.build")"
done
[ -n "${GRAPH_STORE_KEEP:-}" ] || rm -rf "$work"
exit $status
