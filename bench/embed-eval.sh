#!/bin/sh
# bench/embed-eval.sh: which text of a chunk should ci-embed embed?  Ranks every
# chunk of a tree against queries whose answer is known, once per --fields recipe,
# and prints MRR and recall@1/5/10 for each.
#
#   bench/embed-eval.sh [--model <model>] [--static] [--recipes "<fields>[@<max>] ..."] [<tree> [<queries>]]
#   bench/embed-eval.sh --kernel-doc [--model <model>] [--static] [--recipes ...] [<tree>]
#
# The first form: hand-written questions about a tree, one JSON object a line,
# {"text":"<question>","want":"<path>:<name>"}; the default is this repository
# with bench/embed-queries.jsonl (42 questions about libcommon/ and cmd/).
#
# --kernel-doc: the questions are made from the tree's kernel-doc comments
# ("/** name - what it does"): the description is the question, the function its
# answer.  The recipes then leave comments out (with them, the answer would hold
# the question word for word): this measures what the code itself says.
#
# A recipe is a --fields list, with @<n> for --max-tokens <n> (default 128).
# --model: ci-embed's --model (default: $CI_MODEL, else use-lite), e.g. ci-code.
# Needs jq, and tests/vec-tool (built by `make check`, or `make tests/vec-tool`).
# Not part of `make check`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
CI_EMBED=${CI_EMBED:-$top/ci-embed}
CI_CHUNK=${CI_CHUNK:-$top/ci-chunk}
VEC_TOOL=${VEC_TOOL:-$top/tests/vec-tool}
static=
model=
kdoc=
recipes=
while [ $# -gt 0 ]; do
	case $1 in
	--static) static=--static; shift ;;
	--model) model="--model $2"; shift 2 ;;
	--kernel-doc) kdoc=1; shift ;;
	--recipes) recipes=$2; shift 2 ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "embed-eval.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$model" ] || model="--model ${CI_MODEL:-use-lite}"
tree=${1:-$top}
queries=${2:-$here/embed-queries.jsonl}
[ -x "$VEC_TOOL" ] || (cd "$top" && make tests/vec-tool >/dev/null) ||
	{ echo "embed-eval.sh: no $VEC_TOOL" >&2; exit 2; }

tmp=$(mktemp -d /tmp/ci-embed-eval.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

(cd "$tree" && "$CI_CHUNK" --chunks --no-files . 2>/dev/null) |
	jq -c 'select(._type == "chunk")' >"$tmp/chunks"

if [ -n "$kdoc" ]; then
	# "/**\n * name - description" at the top of a function's chunk
	jq -c 'select(.kind == "function" and .name != null)
		| (.text | capture("^/\\*\\*\\s*\\n\\s*\\*\\s*(?<n>[A-Za-z_][A-Za-z0-9_]*)(\\(\\))?\\s+-\\s+(?<d>[^\\n]{12,})")) as $m
		| select($m.n == .name)
		| {text: ($m.d | sub("\\s*\\*/\\s*$"; "")), want: "\(.path):\(.name)"}' \
		"$tmp/chunks" >"$tmp/queries"
	: "${recipes:=code name,signature,code path,name,signature,code name,signature,words path,name,signature,words name,code}"
else
	cp "$queries" "$tmp/queries"
	: "${recipes:=text comment,code path,name,signature,comment,code name,signature,comment,code comment,name,signature,code path,name,signature,comment,words name,comment,words path,kind,scope,name,signature,comment,code}"
fi

jq -c '{_type: "chunk", text, want}' "$tmp/queries" |
	"$CI_EMBED" $model $static --fields text --no-progress >"$tmp/qvec"
what=$(basename "$queries")
[ -z "$kdoc" ] || what="kernel-doc of $tree"
printf '%s chunks, %s queries (%s)%s\n' "$(wc -l <"$tmp/chunks")" "$(wc -l <"$tmp/queries")" \
	"$what" "${static:+, static}${model:+, $model}"
printf '%-48s %6s %6s %6s %6s %8s\n' fields mrr 'r@1' 'r@5' 'r@10' seconds
for r in $recipes; do
	fields=${r%@*}
	max=128
	case $r in *@*) max=${r#*@} ;; esac
	t0=$(date +%s.%N)
	"$CI_EMBED" $model $static --fields "$fields" --max-tokens "$max" --no-progress <"$tmp/chunks" >"$tmp/cvec"
	t1=$(date +%s.%N)
	"$VEC_TOOL" rank "$tmp/qvec" "$tmp/cvec" >"$tmp/rank"
	tail -n 1 "$tmp/rank" | awk -v r="$r" -v t0="$t0" -v t1="$t1" \
		'{ printf "%-48s %6.3f %6.3f %6.3f %6.3f %8.1f\n", r, $4, $6, $8, $10, t1 - t0 }'
done
