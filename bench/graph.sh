#!/bin/sh
# bench/graph.sh: ci's import graph against an independent AST check, and its
# call edges against a language tool's (Python: jedi; TypeScript/JavaScript:
# the TypeScript language service; C: clang).
#
#   bench/graph.sh [--calls-only] [--lang python|ts|c] <repo>...
#
# For each Python repository: builds the index (ci-index build), asks ci-refs
# for the imports of every tracked .py file (`ci-refs deps`) and for the import
# cycles (`ci-refs cycles`), and compares them with bench/graph-ast.py, which
# reads the same files with Python's ast module and resolves imports by the
# import system's rules.  Prints the edge precision and recall of ci against
# the AST graph, the type-only (if TYPE_CHECKING:) marks that disagree, both
# sets of cycles, and `ci-refs --depth 3 impact` of every file (the importers
# at levels 1-3) against a breadth-first walk of the AST graph; then what ci-refs dead and arch report, with their wall
# time, and the call edges (call file:line -> definition file:line) of callers
# against the tool's: ci's bound callers, the same with --by-name, every
# definition of the name (what ci-refs refs gives), with the tool's own figures
# beside them (its edges, the call lines it resolves).  A second precision,
# labelled "P @<tool> lines", counts only ci's edges from the call lines where
# the tool resolves some call into the repository (the tool is no judge of a
# line it leaves unresolved).  --calls-only skips the
# imports, dead and arch; --lang ts and --lang c compare call edges only.
# A table of the call edges of every repository ends the output, then the
# same rows pooled over the repositories (sums of edges, of agreeing edges).
#
# The tools (ts and c exit 2 here when theirs is missing):
#   python  bench/graph-jedi.py      apt-get install python3-jedi (skipped if missing)
#   ts      bench/graph-tsserver.js  npm install --prefix /var/tmp/ci-bench-node typescript@5
#           (the package is looked for under $GRAPH_NODE_PATH, default
#           /var/tmp/ci-bench-node/node_modules, then node's own paths); call
#           lines whose callee comes from a repository file that is not there
#           (a relative import of an unbuilt dist/), which the service cannot
#           judge, are left out of ci's edges
#   c       bench/graph-clang.py     apt-get install python3-clang-14 (libclang, what
#           clangd is built on); the repository's compile_commands.json (at its top
#           or under build/) when it has one, else a per-file list (cc -I<each
#           header directory>; $GRAPH_CFLAGS); call sites in #define bodies and
#           #if'd-out code, which clang cannot judge, are left out of ci's edges
# Needs /usr/bin/python3, jq, git, bc.  The binaries are taken from $PATH, or
# from the build directory with CI_BIN=<dir>.  GRAPH_JEDI_CACHE=<dir> keeps the
# tool's edges of a repository's commit there, keyed by the driver's text too
# (the tool is the slow part);
# GRAPH_KEEP=<dir> keeps the edge lists compared (<repo>.ci.calls, .byname,
# .name, .jedi / .tsserver / .clang .calls).
set -eu
calls_only=0
lang=python
usage="usage: bench/graph.sh [--calls-only] [--lang python|ts|c] <repo>..."
while [ $# -gt 0 ]; do
	case $1 in
	--calls-only) calls_only=1; shift ;;
	--lang) test $# -ge 2 || { echo "$usage" >&2; exit 2; }; lang=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) break ;;
	esac
done
test $# -ge 1 || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
GRAPH_NODE_PATH=${GRAPH_NODE_PATH:-/var/tmp/ci-bench-node/node_modules}
case $lang in
python)
	globs="*.py" ext='\.py$' tool=jedi
	/usr/bin/python3 -c 'import jedi' 2>/dev/null || tool= ;;
ts)
	calls_only=1 globs="*.ts *.tsx *.mts *.cts *.js *.jsx *.mjs *.cjs" ext='\.([cm]?[jt]s|[jt]sx)$' tool=tsserver
	NODE_PATH=$GRAPH_NODE_PATH${NODE_PATH:+:$NODE_PATH} node -e 'require("typescript")' 2>/dev/null || {
		echo "bench/graph.sh: the typescript npm package is missing: npm install --prefix /var/tmp/ci-bench-node typescript@5 (or set GRAPH_NODE_PATH=<dir>/node_modules)" >&2
		exit 2
	} ;;
c)
	calls_only=1 globs="*.c *.h" ext='\.[ch]$' tool=clang
	/usr/bin/python3 -c 'import clang.cindex; clang.cindex.Index.create()' 2>/dev/null || {
		echo "bench/graph.sh: libclang's Python binding is missing: apt-get install python3-clang-14" >&2
		exit 2
	} ;;
*) echo "$usage" >&2; exit 2 ;;
esac
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
# impact: for every file, the files that import it through 1-3 levels of
# imports (type-only ones too) and at which level, against a breadth-first
# walk of the AST check's reverse imports
while read -r f; do
	ci-refs --json --limit 10000 --depth 3 impact "$f" 2>/dev/null |
		jq -c --arg of "$f" 'select(.signals.import > 0) | {of: $of, path, depth}' || :
done <"$tmp/files" | sort >"$tmp/ci.impact"
/usr/bin/python3 -c '
import json, sys
rev = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    rev.setdefault(e["resolved"], set()).add(e["path"])
for f in open(sys.argv[2]).read().split():
    seen, level, d = {f}, [f], 0
    while level and d < 3:
        d += 1
        nxt = sorted({p for x in level for p in rev.get(x, ()) if p not in seen})
        for p in nxt:
            seen.add(p)
            print(json.dumps({"of": f, "path": p, "depth": d}, separators=(",", ":")))
        level = nxt
' "$tmp/ast" "$tmp/files" | sort >"$tmp/ast.impact"
both=$(comm -12 "$tmp/ci.impact" "$tmp/ast.impact" | wc -l)
nci=$(wc -l <"$tmp/ci.impact")
nast=$(wc -l <"$tmp/ast.impact")
echo "# impact (file, importer, level 1-3) of every file"
awk -v b="$both" -v c="$nci" -v a="$nast" 'BEGIN {
	printf "%-28s %6d %6d %6s %9.1f%% %7.1f%%\n", "ci-refs --depth 3 impact", c, b, "", c ? 100 * b / c : 0, a ? 100 * b / a : 0
	printf "%-28s %6d\n", "ast (reference)", a }'
echo "# only ci:"
comm -23 "$tmp/ci.impact" "$tmp/ast.impact" | head -10
echo "# only ast:"
comm -13 "$tmp/ci.impact" "$tmp/ast.impact" | head -10

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

# call edges of the repository in the current directory against $tool ($1: its name)
calls_bench() {
if [ -z "$tool" ]; then
	echo "# call edges: skipped (apt-get install python3-jedi)"
	return 0
fi
echo "# call edges (call file:line -> definition file:line) against $tool"
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
		jq -c --arg ext "$ext" 'select(.definition and (.path | test($ext))) | {path, line, def_path: .definition.path, def_line: .definition.line}' |
		sort -u >"$tmp/$t.calls"
done
# the same calls matched by name only (what ci-refs refs gives): every definition of the name
while read -r n; do
	ci-refs --json --limit 10000 refs "$n" 2>/dev/null |
		jq -c --arg ext "$ext" 'select(.kind == "call" and (.path | test($ext))) | {name, path, line}' || :
done <"$tmp/names" | sort -u >"$tmp/refs.calls"
jq -sc 'group_by(.name)[] | {name: .[0].name, defs: map({def_path, def_line})}' "$tmp/defs" >"$tmp/defs.by.name"
jq -c --slurpfile d "$tmp/defs.by.name" \
	'. as $r | ($d | map(select(.name == $r.name)) | .[0].defs // [])[] | {path: $r.path, line: $r.line} + .' \
	"$tmp/refs.calls" | sort -u >"$tmp/name.calls"
cache=
if [ -n "${GRAPH_JEDI_CACHE:-}" ]; then
	# keyed by the repository's commit and the driver's text: a changed driver
	# asks the tool again
	mkdir -p "$GRAPH_JEDI_CACHE"
	drv=$(git hash-object "$here"/graph-$tool.* | cut -c1-12)
	cache=$GRAPH_JEDI_CACHE/$1.$(git rev-parse HEAD).$drv.jsonl
	test "$tool" = jedi || cache=$GRAPH_JEDI_CACHE/$1.$(git rev-parse HEAD).$tool.$drv.jsonl
fi
: >"$tmp/ref.skip"
if [ -n "$cache" ] && [ -s "$cache" ]; then
	cp "$cache" "$tmp/ref.calls"
	test ! -f "$cache.skip" || cp "$cache.skip" "$tmp/ref.skip"
else
	case $tool in
	jedi) /usr/bin/python3 "$here/graph-jedi.py" . ;;
	tsserver) NODE_PATH=$GRAPH_NODE_PATH${NODE_PATH:+:$NODE_PATH} node "$here/graph-tsserver.js" . ;;
	clang) /usr/bin/python3 "$here/graph-clang.py" . ;;
	esac >"$tmp/ref.all"
	jq -c 'select(.def_path)' "$tmp/ref.all" | sort -u >"$tmp/ref.via"
	jq -c 'select(.skip_from)' "$tmp/ref.all" >"$tmp/ref.skip"
	test -z "$cache" || { cp "$tmp/ref.via" "$cache"; cp "$tmp/ref.skip" "$cache.skip"; }
	cp "$tmp/ref.via" "$tmp/ref.calls"
fi
# the edges as compared; jedi's also say how it found each one (.via)
mv "$tmp/ref.calls" "$tmp/ref.via"
jq -c '{path, line, def_path, def_line}' "$tmp/ref.via" | sort -u >"$tmp/ref.calls"
# the call sites the tool cannot judge are left out of ci's edges, and
# counted: C, #define bodies and code an #if leaves out; Python, calls jedi
# leaves on a re-export (an import statement) of a package with .pyi stubs;
# TS, callees from a repository file that is not there (an unbuilt dist/)
why="#define bodies, #if'd-out code"
test "$tool" != jedi || why="jedi stops on a re-export"
test "$tool" != tsserver || why="callees from a missing file"
if [ -s "$tmp/ref.skip" ]; then
	for t in ci byname name; do
		jq -c --slurpfile s "$tmp/ref.skip" '. as $e | select(any($s[]; .path == $e.path and
			.skip_from <= $e.line and $e.line <= .skip_to) | not)' "$tmp/$t.calls" >"$tmp/$t.in"
		echo "# $t: $(($(wc -l <"$tmp/$t.calls") - $(wc -l <"$tmp/$t.in"))) edges from call sites $tool cannot judge ($why) left out"
		mv "$tmp/$t.in" "$tmp/$t.calls"
	done
fi
nj=$(wc -l <"$tmp/ref.calls")
# the call lines where the tool resolves some call into the repository: the
# precision over ci's edges from those lines only is the second column
# ("P @tool lines"); the headline precision counts every edge of ci
jq -c '{path, line}' "$tmp/ref.calls" | sort -u >"$tmp/ref.lines"
printf '%-28s %6s %6s %10s %8s %14s\n' tool edges agree precision recall "P @$tool lines"
for t in ci byname name; do
	n=$(wc -l <"$tmp/$t.calls")
	b=$(comm -12 "$tmp/$t.calls" "$tmp/ref.calls" | wc -l)
	nl=$(jq -n --slurpfile l "$tmp/ref.lines" '($l | map("\(.path):\(.line)") | INDEX(.)) as $m |
		[inputs | select($m["\(.path):\(.line)"])] | length' "$tmp/$t.calls")
	case $t in
	ci) label="ci-refs callers (bound)" ;;
	byname) label="ci-refs callers --by-name" ;;
	*) label="by name (ci-refs refs)" ;;
	esac
	awk -v l="$label" -v n="$n" -v b="$b" -v j="$nj" -v nl="$nl" 'BEGIN {
		printf "%-28s %6d %6d %9.1f%% %7.1f%% %13.1f%%\n", l, n, b, n ? 100 * b / n : 0,
			j ? 100 * b / j : 0, nl ? 100 * b / nl : 0 }' |
		tee -a "$tmp/row"
	printf '%s\t%d\t%d\t%d\t%d\n' "$label" "$n" "$b" "$nj" "$nl" >>"$tmp/pool"
done
# jedi: ci's recall over each way jedi found its edges (goto, goto past a
# re-export, infer of a variable called)
if [ -n "$(jq -c 'select(.via) | 1' "$tmp/ref.via" | head -1)" ]; then
	jq -r .via "$tmp/ref.via" | sort | uniq -c | while read -r k v; do
		jq -c --arg v "$v" 'select(.via == $v) | {path, line, def_path, def_line}' "$tmp/ref.via" | sort -u >"$tmp/ref.v"
		printf '# %s edges found by %s: %d, ci-refs callers has %d\n' "$tool" "$v" "$k" \
			"$(comm -12 "$tmp/ci.calls" "$tmp/ref.v" | wc -l)"
	done
fi
# the tool's own figures: its edges into the repository, the call lines they start from
sites=$(jq -c '{path, line}' "$tmp/ref.calls" | sort -u | wc -l)
case $tool in
jedi) label="jedi goto" ;;
tsserver) label="tsserver definition" ;;
clang) label="clang (libclang) USR" ;;
esac
printf '%-28s %6d %6s %10s %8s  (%d call lines)\n' "$label (reference)" "$nj" "" "" "" "$sites" | tee -a "$tmp/row"
printf '%s\t%d\t\t\t%d\n' "$label (reference)" "$nj" "$sites" >>"$tmp/pool"
sed "s/^/$(printf '%-16s ' "$1")/" "$tmp/row" >>"$tmp/summary"
rm -f "$tmp/row"
if [ -n "${GRAPH_KEEP:-}" ]; then
	mkdir -p "$GRAPH_KEEP"
	for t in ci byname name; do cp "$tmp/$t.calls" "$GRAPH_KEEP/$1.$t.calls"; done
	cp "$tmp/ref.calls" "$GRAPH_KEEP/$1.$tool.calls"
fi
echo "# a sample of ci's edges $tool does not have:"
comm -23 "$tmp/ci.calls" "$tmp/ref.calls" | head -5
echo "# a sample of $tool's edges ci does not have:"
comm -13 "$tmp/ci.calls" "$tmp/ref.calls" | head -5
}

for repo in "$@"; do
	(
		cd "$repo"
		name=$(basename "$(pwd)")
		if [ "$calls_only" = 1 ]; then
			echo "# ci-index build ($(pwd))"
			ci-index build 2>/dev/null
			# shellcheck disable=SC2086
			(set -f; git ls-files $globs) | grep -v '\.d\.ts$' >"$tmp/files" || :
		else
			imports_bench
		fi
		calls_bench "$name"
	)
done
echo "# call edges, every repository (reference: $tool)"
printf '%-16s %-28s %6s %6s %10s %8s %14s\n' repository tool edges agree precision recall "P @$tool lines"
cat "$tmp/summary"
# pooled over the repositories: the sums of agreeing edges over the sums of
# ci's edges (precision), of the tool's (recall), of ci's on the tool's lines
test ! -s "$tmp/pool" || awk -F '\t' -v k=$# '{ if (!($1 in n)) o[m++] = $1; n[$1] += $2; b[$1] += $3; j[$1] += $4; l[$1] += $5 }
	END { for (i = 0; i < m; i++) { x = o[i]; p = "pooled (" k ")"
		if (x ~ /reference/) { printf "%-16s %-28s %6d %6s %10s %8s  (%d call lines)\n", p, x, n[x], "", "", "", l[x]; continue }
		printf "%-16s %-28s %6d %6d %9.1f%% %7.1f%% %13.1f%%\n", p, x, n[x], b[x], n[x] ? 100 * b[x] / n[x] : 0,
			j[x] ? 100 * b[x] / j[x] : 0, l[x] ? 100 * b[x] / l[x] : 0 } }' "$tmp/pool"
