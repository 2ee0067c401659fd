#!/bin/sh
# bench/graph.sh: ci's Python import graph against an independent AST check.
#
#   bench/graph.sh <python-repo>
#
# Builds the index of the repository (ci-index build), asks ci-refs for the
# imports of every tracked .py file (`ci-refs deps`) and for the import cycles
# (`ci-refs cycles`), and compares them with bench/graph-ast.py, which reads
# the same files with Python's ast module and resolves imports by the import
# system's rules.  Prints the edge precision and recall of ci against the AST
# graph, the type-only (if TYPE_CHECKING:) marks that disagree, and both sets of
# cycles; then what ci-refs dead and arch report, with their wall time, and
# (with python3-jedi) the call edges of callers against jedi.  Needs
# /usr/bin/python3, jq, git, bc.  The binaries are taken from $PATH,
# or from the build directory with CI_BIN=<dir>.
set -eu
repo=${1:?usage: bench/graph.sh <python-repo>}
here=$(cd "$(dirname "$0")" && pwd)
test -n "${CI_BIN:-}" && PATH=$CI_BIN:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$repo"
echo "# ci-index build ($(pwd))"
ci-index build 2>/dev/null
git ls-files '*.py' >"$tmp/files"
while read -r f; do
	ci-refs --json --limit 10000 deps "$f" 2>/dev/null || :
done <"$tmp/files" |
	jq -c 'select(.resolved != null) | {path, resolved, type_only: (.type_only // false)}' |
	jq -sc 'group_by([.path, .resolved])[] | {path: .[0].path, resolved: .[0].resolved, type_only: (map(.type_only) | all)}' |
	sort >"$tmp/ci"
/usr/bin/python3 "$here/graph-ast.py" . >"$tmp/ast.all"
jq -c 'select(._type == "edge") | {path, resolved, type_only}' "$tmp/ast.all" | sort >"$tmp/ast"

jq -c '{path, resolved}' "$tmp/ci" | sort >"$tmp/ci.e"
jq -c '{path, resolved}' "$tmp/ast" | sort >"$tmp/ast.e"
both=$(comm -12 "$tmp/ci.e" "$tmp/ast.e" | wc -l)
nci=$(wc -l <"$tmp/ci.e")
nast=$(wc -l <"$tmp/ast.e")
echo "# import edges between files of the repository"
printf '%-28s %6s %6s %6s %10s %8s\n' tool edges agree "" precision recall
awk -v b="$both" -v c="$nci" -v a="$nast" 'BEGIN {
	printf "%-28s %6d %6d %6s %9.1f%% %7.1f%%\n", "ci-refs deps", c, b, "", c ? 100 * b / c : 0, a ? 100 * b / a : 0
	printf "%-28s %6d %6s %6s %10s %8s\n", "ast (reference)", a, "", "", "", "" }'
echo "# only ci:"
comm -23 "$tmp/ci.e" "$tmp/ast.e" | head -20
echo "# only ast:"
comm -13 "$tmp/ci.e" "$tmp/ast.e" | head -20
echo "# type-only marks that disagree (on edges both have):"
comm -12 "$tmp/ci.e" "$tmp/ast.e" >"$tmp/common"
jq -c 'select(.type_only)' "$tmp/ci" | jq -c '{path, resolved}' | sort >"$tmp/ci.t"
jq -c 'select(.type_only)' "$tmp/ast" | jq -c '{path, resolved}' | sort >"$tmp/ast.t"
comm -3 "$tmp/ci.t" "$tmp/ast.t" | sort | comm -12 - "$tmp/common" | head -20
echo "# cycles (type-only imports left out)"
echo "ci-refs cycles:"
ci-refs --json cycles 2>/dev/null | jq -c .files | sort || :
echo "ast:"
jq -c 'select(._type == "cycle") | .files' "$tmp/ast.all" | sort

# ---- the whole call graph: dead and arch, what they report and how long they take ----
for c in dead arch; do
	s0=$(date +%s.%N)
	ci-refs --json --limit 10000 "$c" >"$tmp/$c" 2>/dev/null || :
	s1=$(date +%s.%N)
	printf '# ci-refs %s: %.2f s, %s\n' "$c" "$(echo "$s1 - $s0" | bc)" \
		"$(jq -r 'if ._type == "dead" then .reason else ._type end' "$tmp/$c" | sort | uniq -c | awk '{printf "%s %s  ", $1, $2}')"
done
jq -r 'select(._type == "package_edge" and .back) | "back edge: \(.from) -> \(.to) (\(.imports) imports)"' "$tmp/arch"

# ---- call edges: ci-refs callers against jedi (when python3-jedi is installed) ----
if ! /usr/bin/python3 -c 'import jedi' 2>/dev/null; then
	echo "# call edges: skipped (apt-get install python3-jedi)"
	exit 0
fi
echo "# call edges (call file:line -> definition file:line) against jedi"
while read -r f; do
	ci-refs --json --limit 10000 symbols "$f" 2>/dev/null || :
done <"$tmp/files" |
	jq -r 'select(.kind == "function" or .kind == "method" or .kind == "class") | .name' |
	sort -u >"$tmp/names"
while read -r n; do
	ci-refs --json --limit 10000 callers "$n" 2>/dev/null || :
done <"$tmp/names" |
	jq -c 'select(.definition) | {path, line, def_path: .definition.path, def_line: .definition.line}' |
	sort -u >"$tmp/ci.calls"
# the same calls matched by name only (what ci-refs refs gives): every definition of the name
while read -r n; do
	ci-refs --json --limit 10000 refs "$n" 2>/dev/null | jq -c 'select(.kind == "call") | {name, path, line}' || :
done <"$tmp/names" | sort -u >"$tmp/refs.calls"
while read -r f; do
	ci-refs --json --limit 10000 symbols "$f" 2>/dev/null || :
done <"$tmp/files" |
	jq -c 'select(.kind == "function" or .kind == "method" or .kind == "class") | {name, def_path: .path, def_line: .line}' |
	jq -sc 'group_by(.name)[] | {name: .[0].name, defs: map({def_path, def_line})}' >"$tmp/defs.by.name"
jq -c --slurpfile d "$tmp/defs.by.name" \
	'. as $r | ($d | map(select(.name == $r.name)) | .[0].defs // [])[] | {path: $r.path, line: $r.line} + .' \
	"$tmp/refs.calls" | sort -u >"$tmp/name.calls"
/usr/bin/python3 "$here/graph-jedi.py" . | jq -c "{path, line, def_path, def_line}" | sort -u >"$tmp/jedi.calls"
nj=$(wc -l <"$tmp/jedi.calls")
printf '%-28s %6s %6s %10s %8s\n' tool edges agree precision recall
for t in ci name; do
	n=$(wc -l <"$tmp/$t.calls")
	b=$(comm -12 "$tmp/$t.calls" "$tmp/jedi.calls" | wc -l)
	label="ci-refs callers (bound)"
	test "$t" = name && label="by name (ci-refs refs)"
	awk -v l="$label" -v n="$n" -v b="$b" -v j="$nj" 'BEGIN {
		printf "%-28s %6d %6d %9.1f%% %7.1f%%\n", l, n, b, n ? 100 * b / n : 0, j ? 100 * b / j : 0 }'
done
printf '%-28s %6d\n' "jedi goto (reference)" "$nj"
echo "# a sample of ci's edges jedi does not have:"
comm -23 "$tmp/ci.calls" "$tmp/jedi.calls" | head -5
echo "# a sample of jedi's edges ci does not have:"
comm -13 "$tmp/ci.calls" "$tmp/jedi.calls" | head -5
