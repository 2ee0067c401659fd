#!/bin/bash
# bench/refs-ctags.sh: precision and recall of `ci-refs defs` against
# universal-ctags' definitions.
#
# The ground truth is a query file written from ctags' output for one commit of
# a repository (/work/shared/eval/symbols_requests_<sha>.jsonl for psf/requests):
# one JSON object a line, {"query": NAME, "unique": BOOL, "answers": [{"qualified",
# "kind": class|function|member, "file", "line", "end"}]}, every definition ctags
# found of that name (Python only; dunder names such as __init__ are left out).
# The script indexes the checkout into a scratch index (nothing is written into
# the checkout), asks `ci-refs defs <query>` for every query, and compares
#
#   - name+path+line: a definition is right when ctags has that name at that line
#     of that file;
#   - name+path:      when ctags has that name somewhere in that file
#
# as sets, overall and per ctags kind.  ci's kinds are mapped onto ctags' to
# count precision per kind: class -> class; function or method whose scope
# names a class defined in the same file -> member; other functions and methods
# -> function; constant, variable, field, property -> variable; others as they
# are.  Recall per kind uses the truth's kind, precision ci's mapped kind.
#
# With --ctags the script also runs ctags itself on the checkout and compares
# every Python definition both tools find (dunder names included, and variables:
# ctags' "variable" against ci's "constant"/"variable"), not only the answers to
# the queries.
#
# The workload that shaped it: psf/requests (36 Python files, ~720 answers);
# one ci-refs process per query, a few seconds in all.  Not part of `make check`.

set -u

usage() {
	cat <<'EOF'
usage: bench/refs-ctags.sh [--truth <file>] [--ctags] [-v] [<checkout>]

  <checkout>        the repository at the truth's commit (default:
                    $CI_BENCH_REQUESTS, else /var/tmp/requests)
  --truth <file>    the ctags query file (default: $CI_BENCH_TRUTH, else
                    /work/shared/eval/symbols_requests_1f6589ec.jsonl); a name
                    ending in _<hex>.jsonl gives the commit the checkout must be at
  --ctags           also compare every Python definition with ctags run here
  --force           run even if the checkout is not at the truth's commit
  -v, --verbose     list the definitions that differ
  -h, --help        show this help and exit

Environment: CI_INDEX_BIN, CI_REFS (default: the binaries next to this script's
directory, then ./, then PATH), CTAGS (default: ctags).
Exit status: 0 measured, 2 usage error or wrong checkout, 3 a tool failed.
EOF
}

die() { echo "refs-ctags.sh: $*" >&2; exit 2; }
fail() { echo "refs-ctags.sh: $*" >&2; exit 3; }

truth=${CI_BENCH_TRUTH:-/work/shared/eval/symbols_requests_1f6589ec.jsonl}
checkout=${CI_BENCH_REQUESTS:-/var/tmp/requests}
run_ctags=0
force=0
verbose=0
while [ $# -gt 0 ]; do
	case $1 in
	--truth) [ $# -ge 2 ] || die "--truth needs a file"; truth=$2; shift 2 ;;
	--ctags) run_ctags=1; shift ;;
	--force) force=1; shift ;;
	-v|--verbose) verbose=1; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "refs-ctags.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) checkout=$1; shift ;;
	esac
done
[ -r "$truth" ] || die "cannot read the truth file '$truth'"
[ -d "$checkout" ] || die "'$checkout' is not a directory (git clone https://github.com/psf/requests && git -C requests checkout 1f6589ec)"
checkout=$(cd "$checkout" && pwd -P)
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"

# the commit the truth was made at, from its name
want=$(basename "$truth" | sed -n 's/.*_\([0-9a-f]\{7,40\}\)\.jsonl$/\1/p')
if [ -n "$want" ] && git -C "$checkout" rev-parse --git-dir >/dev/null 2>&1; then
	head=$(git -C "$checkout" rev-parse HEAD)
	case $head in
	"$want"*) ;;
	*) [ "$force" = 1 ] || die "'$checkout' is at $head, the truth at $want (git -C '$checkout' checkout $want, or --force)" ;;
	esac
	if [ -n "$(git -C "$checkout" status --porcelain --untracked-files=no)" ] && [ "$force" != 1 ]; then
		die "'$checkout' has local changes (or --force)"
	fi
fi

here=$(cd "$(dirname "$0")" && pwd -P)
find_bin() {	# find_bin <VAR value> <name>
	if [ -n "$1" ]; then echo "$1"
	elif [ -x "$here/../$2" ]; then echo "$here/../$2"
	elif [ -x "./$2" ]; then echo "./$2"
	else command -v "$2" || true
	fi
}
ci_index=$(find_bin "${CI_INDEX_BIN:-}" ci-index)
ci_refs=$(find_bin "${CI_REFS:-}" ci-refs)
[ -n "$ci_index" ] && [ -x "$ci_index" ] || die "no ci-index binary (make, or set CI_INDEX_BIN)"
[ -n "$ci_refs" ] && [ -x "$ci_refs" ] || die "no ci-refs binary (make, or set CI_REFS)"
ctags=${CTAGS:-ctags}
if [ "$run_ctags" = 1 ]; then
	command -v "$ctags" >/dev/null || die "no ctags (apt-get install universal-ctags)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ci-bench-refs.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
db=$tmp/index.db

echo "# $ci_index --index $db build $checkout"
"$ci_index" --index "$db" build "$checkout" 2>"$tmp/build.err" ||
	{ tail -5 "$tmp/build.err" >&2; fail "ci-index build failed"; }

# ---- ci's answers ------------------------------------------------------------------

jq -r '.query' "$truth" >"$tmp/queries" || fail "'$truth' is not a query file"
echo "# for each of $(wc -l <"$tmp/queries") queries: $ci_refs --index $db --limit 10000 defs <query>"
: >"$tmp/ci.nd"
while IFS= read -r q; do
	"$ci_refs" --index "$db" --limit 10000 defs "$q" >>"$tmp/ci.nd" 2>"$tmp/refs.err"
	rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
		cat "$tmp/refs.err" >&2
		fail "ci-refs defs '$q' exited with $rc"
	fi
done <"$tmp/queries"

# class_names <file of records with .path>: "path<TAB>class" for every class
# ci-refs finds in those files (to tell methods from functions)
class_names() {
	jq -r '.path' "$1" | sort -u | while IFS= read -r p; do
		"$ci_refs" --index "$db" --limit 10000 --kind class symbols "$p" 2>/dev/null
	done | jq -r '"\(.path)\t\(.name)"' | sort -u
}

# ci_rows <ci records> <classes>: ci's definitions as {name, path, line, kind} with
# the kind mapped onto ctags'
ci_rows() {
	jq -R -s 'split("\n") | map(select(length > 0) | split("\t") | {key: join("\t"), value: 1}) | from_entries' "$2" >"$tmp/classes.json"
	jq -c --slurpfile cls "$tmp/classes.json" '
		select(._type == "occurrence" or ._type == "symbol") |
		(.scope // "" | split(".") | last // "") as $outer |
		{name, path, line,
		 kind: (if .kind == "class" then "class"
			elif .kind == "function" or .kind == "method" then
				(if $outer != "" and $cls[0]["\(.path)\t\($outer)"] then "member" else "function" end)
			elif .kind == "constant" or .kind == "variable" or .kind == "field" or .kind == "property" then "variable"
			else .kind end)}' "$1"
}

# compare <truth rows> <ci rows> <title>: the table; both files hold
# {name, path, line, kind} objects, one a line
compare() {
	jq -n -r --slurpfile t "$1" --slurpfile c "$2" --arg title "$3" --argjson verbose "$verbose" '
	def pct(a; b): if b == 0 then "-" else ((a * 1000 / b + 0.5 | floor) / 10 | tostring) end;
	def keyed(f): map({key: f, value: .kind}) | from_entries;
	def table($T; $C; $title):
		($T | keys) as $tk | ($C | keys) as $ck |
		([$tk[] | select($C[.] != null)]) as $m |
		([$T[], $C[]] | unique) as $kinds |
		"\($title)",
		"  kind        truth     ci  matched  precision  recall",
		(($kinds + ["all"])[] as $k |
			([$tk[] | select($k == "all" or $T[.] == $k)] | length) as $nt |
			([$ck[] | select($k == "all" or $C[.] == $k)] | length) as $nc |
			([$m[] | select($k == "all" or $T[.] == $k)] | length) as $mt |
			([$m[] | select($k == "all" or $C[.] == $k)] | length) as $mc |
			"  \($k | . + "          " | .[0:10]) \($nt | tostring | ("      " + .)[-6:]) \($nc | tostring | ("      " + .)[-6:]) \($mt | tostring | ("       " + .)[-8:])   \(pct($mc; $nc) | ("      " + .)[-6:])%  \(pct($mt; $nt) | ("     " + .)[-5:])%"),
		"  kinds agreeing on matched definitions: \([$m[] | select($T[.] == $C[.])] | length) of \($m | length)",
		(if $verbose == 1 then
			([$tk[] | select($C[.] == null)] | map("  missed (\($T[.])): \(gsub("\t"; " "))")[]),
			([$ck[] | select($T[.] == null)] | map("  extra (\($C[.])): \(gsub("\t"; " "))")[]),
			([$m[] | select($T[.] != $C[.])] | map("  kind differs (ctags \($T[.]), ci \($C[.])): \(gsub("\t"; " "))")[])
		 else empty end);
	"== \($title)",
	table($t | keyed("\(.name)\t\(.path)\t\(.line)"); $c | keyed("\(.name)\t\(.path)\t\(.line)"); "name+path+line"),
	table($t | keyed("\(.name)\t\(.path)"); $c | keyed("\(.name)\t\(.path)"); "name+path")'
}

jq -c '.query as $q | .answers[] | {name: $q, path: .file, line, kind}' "$truth" >"$tmp/truth.rows"
class_names "$tmp/ci.nd" >"$tmp/classes"
ci_rows "$tmp/ci.nd" "$tmp/classes" >"$tmp/ci.rows"
echo
compare "$tmp/truth.rows" "$tmp/ci.rows" "ci-refs defs <query> against $(basename "$truth") ($(wc -l <"$tmp/queries") queries)" ||
	fail "jq failed"

# ---- every Python definition, against ctags run here ----------------------------------

if [ "$run_ctags" = 1 ]; then
	echo
	echo "# (cd $checkout && $ctags -R --languages=Python --output-format=json --fields=+nK -f - .)"
	(cd "$checkout" && "$ctags" -R --languages=Python --output-format=json --fields=+nK -f - .) \
		>"$tmp/ctags.json" 2>"$tmp/ctags.err" || { tail -5 "$tmp/ctags.err" >&2; fail "ctags failed"; }
	# ctags' class, function, member and variable tags (its "namespace" and
	# "unknown" are imports)
	jq -c 'select(._type == "tag" and (.kind == "class" or .kind == "function" or
		.kind == "member" or .kind == "variable")) |
		{name, path: (.path | ltrimstr("./")), line, kind}' "$tmp/ctags.json" >"$tmp/ctags.rows" ||
		fail "ctags' output is not JSON"
	# ci's symbols of every Python file ctags read
	jq -r '.path' "$tmp/ctags.rows" | sort -u | while IFS= read -r p; do
		"$ci_refs" --index "$db" --limit 10000 symbols "$p" 2>/dev/null
	done >"$tmp/ci-all.nd"
	class_names "$tmp/ci-all.nd" >"$tmp/classes-all"
	ci_rows "$tmp/ci-all.nd" "$tmp/classes-all" >"$tmp/ci-all.rows"
	echo
	compare "$tmp/ctags.rows" "$tmp/ci-all.rows" "every Python definition: ci-refs symbols <file> against ctags" ||
		fail "jq failed"
fi
exit 0
