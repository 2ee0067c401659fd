#!/bin/sh
# bench/graph.sh: ci's Python import graph against an independent AST check,
# and its call edges against jedi.
#
#   bench/graph.sh [--calls-only] <python-repo>...
#
# For each repository: builds the index (ci-index build), asks ci-refs for the
# imports of every tracked .py file (`ci-refs deps`) and for the import cycles
# (`ci-refs cycles`), and compares them with bench/graph-ast.py, which reads
# the same files with Python's ast module and resolves imports by the import
# system's rules.  Prints the edge precision and recall of ci against the AST
# graph, the type-only (if TYPE_CHECKING:) marks that disagree, and both sets of
# cycles; then what ci-refs dead and arch report, with their wall time, and
# (with python3-jedi) the call edges of callers against jedi's goto: ci's
# bound callers, the same with --by-name, every definition of the name (what
# ci-refs refs gives), with jedi's own figures beside them (the call sites it
# resolves, the edges).  --calls-only skips the imports, dead and arch.  A
# table of the call edges of every repository ends the output.  Needs
# /usr/bin/python3, jq, git, bc.  The binaries are taken from $PATH, or from
# the build directory with CI_BIN=<dir>.  GRAPH_JEDI_CACHE=<dir> keeps jedi's
# edges of a repository's commit there (jedi is the slow part); GRAPH_KEEP=<dir>
# keeps the edge lists compared (<repo>.ci.calls, .byname, .name, .jedi).
set -eu
calls_only=0
if [ "${1:-}" = --calls-only ]; then
	calls_only=1
	shift
fi
test $# -ge 1 || { echo "usage: bench/graph.sh [--calls-only] <python-repo>..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
test -n "${CI_BIN:-}" && PATH=$CI_BIN:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/summary"

# imports, cycles, dead and arch of the repository in the current directory
imports_bench() {
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

}

# call edges of the repository in the current directory against jedi ($1: its name)
calls_bench() {
if ! /usr/bin/python3 -c 'import jedi' 2>/dev/null; then
	echo "# call edges: skipped (apt-get install python3-jedi)"
	return 0
fi
echo "# call edges (call file:line -> definition file:line) against jedi"
while read -r f; do
	ci-refs --json --limit 10000 symbols "$f" 2>/dev/null || :
done <"$tmp/files" |
	jq -c 'select(.kind == "function" or .kind == "method" or .kind == "class") | {name, def_path: .path, def_line: .line}' \
	>"$tmp/defs"
jq -r .name "$tmp/defs" | sort -u >"$tmp/names"
for t in ci byname; do
	opt=
	test "$t" = byname && opt=--by-name
	while read -r n; do
		ci-refs --json --limit 10000 $opt callers "$n" 2>/dev/null || :
	done <"$tmp/names" |
		jq -c 'select(.definition and (.path | endswith(".py"))) | {path, line, def_path: .definition.path, def_line: .definition.line}' |
		sort -u >"$tmp/$t.calls"
done
# the same calls matched by name only (what ci-refs refs gives): every definition of the name
while read -r n; do
	ci-refs --json --limit 10000 refs "$n" 2>/dev/null | jq -c 'select(.kind == "call" and (.path | endswith(".py"))) | {name, path, line}' || :
done <"$tmp/names" | sort -u >"$tmp/refs.calls"
jq -sc 'group_by(.name)[] | {name: .[0].name, defs: map({def_path, def_line})}' "$tmp/defs" >"$tmp/defs.by.name"
jq -c --slurpfile d "$tmp/defs.by.name" \
	'. as $r | ($d | map(select(.name == $r.name)) | .[0].defs // [])[] | {path: $r.path, line: $r.line} + .' \
	"$tmp/refs.calls" | sort -u >"$tmp/name.calls"
cache=
if [ -n "${GRAPH_JEDI_CACHE:-}" ]; then
	mkdir -p "$GRAPH_JEDI_CACHE"
	cache=$GRAPH_JEDI_CACHE/$1.$(git rev-parse HEAD).jsonl
fi
if [ -n "$cache" ] && [ -s "$cache" ]; then
	cp "$cache" "$tmp/jedi.calls"
else
	/usr/bin/python3 "$here/graph-jedi.py" . | jq -c "{path, line, def_path, def_line}" | sort -u >"$tmp/jedi.calls"
	test -z "$cache" || cp "$tmp/jedi.calls" "$cache"
fi
nj=$(wc -l <"$tmp/jedi.calls")
printf '%-28s %6s %6s %10s %8s\n' tool edges agree precision recall
for t in ci byname name; do
	n=$(wc -l <"$tmp/$t.calls")
	b=$(comm -12 "$tmp/$t.calls" "$tmp/jedi.calls" | wc -l)
	case $t in
	ci) label="ci-refs callers (bound)" ;;
	byname) label="ci-refs callers --by-name" ;;
	*) label="by name (ci-refs refs)" ;;
	esac
	awk -v l="$label" -v n="$n" -v b="$b" -v j="$nj" 'BEGIN {
		printf "%-28s %6d %6d %9.1f%% %7.1f%%\n", l, n, b, n ? 100 * b / n : 0, j ? 100 * b / j : 0 }' |
		tee -a "$tmp/row"
done
# jedi's own figures: the call sites it resolves into the repository, its edges
sites=$(jq -c '{path, line}' "$tmp/jedi.calls" | sort -u | wc -l)
printf '%-28s %6d %6s %10s %8s  (%d call lines)\n' "jedi goto (reference)" "$nj" "" "" "" "$sites" | tee -a "$tmp/row"
sed "s/^/$(printf '%-16s ' "$1")/" "$tmp/row" >>"$tmp/summary"
rm -f "$tmp/row"
if [ -n "${GRAPH_KEEP:-}" ]; then
	mkdir -p "$GRAPH_KEEP"
	for t in ci byname name jedi; do cp "$tmp/$t.calls" "$GRAPH_KEEP/$1.$t.calls"; done
fi
echo "# a sample of ci's edges jedi does not have:"
comm -23 "$tmp/ci.calls" "$tmp/jedi.calls" | head -5
echo "# a sample of jedi's edges ci does not have:"
comm -13 "$tmp/ci.calls" "$tmp/jedi.calls" | head -5
}

for repo in "$@"; do
	(
		cd "$repo"
		name=$(basename "$(pwd)")
		if [ "$calls_only" = 1 ]; then
			echo "# ci-index build ($(pwd))"
			ci-index build 2>/dev/null
			git ls-files '*.py' >"$tmp/files"
		else
			imports_bench
		fi
		calls_bench "$name"
	)
done
echo "# call edges, every repository (reference: jedi goto)"
printf '%-16s %-28s %6s %6s %10s %8s\n' repository tool edges agree precision recall
cat "$tmp/summary"
