#!/bin/sh
# bench/graph-store-ts.sh: the whole-index call graph (what ci-index stores for
# dead and arch, and what trace walks) against depth-1 callers, on TS/JS.
#
#   bench/graph-store-ts.sh <repo>...
#
# For each repository (a git work tree): builds the index (ci-index -v build,
# its wall time and the store's line), asks `ci-refs callers` for every name
# the index defines in a TS/JS file, and compares the call edges between two
# files that those records give, counted per (call file, definition file),
# with the stored graph_calls table (the sum over the whole graph's edges);
# then checks that dead reports no definition that a callers record reaches
# from another file.  Prints the names asked, the records, the file edges of
# each side and how many differ (0 when the two agree), and the definitions
# dead reports though callers reaches them (0 expected).  The binaries come
# from $PATH or from CI_BIN=<build dir>.  GRAPH_LANGS=python asks the names
# of Python files instead (the languages of the index's blobs.lang, comma
# separated).  Needs jq, sqlite3.
set -eu
CI_INDEX_SERVER=0; export CI_INDEX_SERVER	# no resident server left behind
test $# -ge 1 || { echo "usage: bench/graph-store-ts.sh <repo>..." >&2; exit 2; }
if [ -n "${CI_BIN:-}" ]; then PATH=$CI_BIN:$PATH; export PATH; fi
langs=$(echo "${GRAPH_LANGS:-javascript,typescript,tsx}" | sed "s/[^a-z,]//g; s/[a-z]*/'&'/g")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for repo in "$@"; do
	(
	cd "$repo"
	rm -rf .ci-index
	s=$(date +%s.%N)
	ci-index -v --no-progress build >"$tmp/log" 2>&1
	e=$(date +%s.%N)
	db=.ci-index/index.db
	sqlite3 "$db" "SELECT DISTINCT d.name FROM defs d JOIN files f ON f.blob_id = d.blob_id
		JOIN blobs b ON b.id = d.blob_id WHERE b.lang IN ($langs) ORDER BY 1" >"$tmp/names"
	: >"$tmp/recs"
	while read -r n; do
		ci-refs --json --limit 10000 callers "$n" </dev/null 2>/dev/null >>"$tmp/recs" || test $? = 1
	done <"$tmp/names"
	jq -r 'select(.path != .definition.path) | "\(.path)\t\(.definition.path)"' "$tmp/recs" |
		sort | uniq -c | awk '{ printf "%s\t%s\t%s\n", $2, $3, $1 }' >"$tmp/callers.fe"
	sqlite3 -separator "	" "$db" "SELECT fa.path, fb.path, c.calls FROM graph_calls c
		JOIN graph_files fa ON fa.id = c.a JOIN graph_files fb ON fb.id = c.b ORDER BY 1, 2" >"$tmp/stored.fe"
	differ=$(sort "$tmp/callers.fe" "$tmp/stored.fe" | uniq -u | wc -l)
	jq -r 'select(.path != .definition.path) | "\(.definition.path)\t\(.definition.line)"' "$tmp/recs" |
		sort -u >"$tmp/reached"
	ci-refs --json --limit 10000 dead 2>/dev/null | jq -r '"\(.path)\t\(.line)"' | sort -u >"$tmp/dead" || true
	printf "%s: build %.2f s (%s); names %s, callers records %s, file edges callers %s stored %s, differ %s; dead though reached %s\n" \
		"$(basename "$repo")" "$(echo "$e - $s" | bc)" "$(grep -o "graph store:.*" "$tmp/log" | head -1)" \
		"$(wc -l <"$tmp/names")" "$(wc -l <"$tmp/recs")" "$(wc -l <"$tmp/callers.fe")" \
		"$(wc -l <"$tmp/stored.fe")" "$differ" "$(comm -12 "$tmp/reached" "$tmp/dead" | wc -l)"
	if [ "${GRAPH_KEEP:-}" ]; then
		cp "$tmp/callers.fe" "$GRAPH_KEEP/$(basename "$repo").callers.fe"
		cp "$tmp/stored.fe" "$GRAPH_KEEP/$(basename "$repo").stored.fe"
	fi
	)
done
