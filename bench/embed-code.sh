#!/bin/sh
# bench/embed-code.sh: ci-code (the static model trained here, scripts/train-embed)
# next to USE-lite, in one run: code search by description on the validation
# pairs, and throughput.
#
#   bench/embed-code.sh [-n <pairs>] [--models "<m> ..."] [--dims "<d> ..."] [--data <dir>] [--speed <tree>]
#
#   --data <dir>     scripts/embed-pairs' output (default /var/tmp/ci-embed-data):
#                    its "valid" pairs, from units (packages, kernel directories)
#                    that training never saw
#   -n <pairs>       how many of them (default 2000; the first n of a fixed shuffle)
#   --models <list>  the models, by name or path (default "ci-code use-lite")
#   --dims <list>    each model (static ones: ci-code) at each of these Matryoshka
#                    dimensions too, as "<model>/<d>" (ci-embed --dims <d>)
#   --speed <tree>   also embed the chunks of <tree> with each model, 2 threads:
#                    chunks/s, CPU seconds, peak RSS (GNU time)
#
# Search: each description (the query side, embedded as ci-embed embeds a
# commit message) ranks all n functions (chunk records, the description's
# sentences taken out of their documentation, embedded as any chunk);
# vec-tool rank prints the MRR and recall@1/5/10 of the function it came from.
# Needs jq, python3 (the shuffle), GNU time for --speed.  Not part of `make check`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
CI_EMBED=${CI_EMBED:-$top/ci-embed}
CI_CHUNK=${CI_CHUNK:-$top/ci-chunk}
VEC_TOOL=${VEC_TOOL:-$top/tests/vec-tool}
data=/var/tmp/ci-embed-data
n=2000
models="ci-code use-lite"
speed=
dims=
while test $# -gt 0; do
	case $1 in
	-n) n=$2; shift 2 ;;
	--models) models=$2; shift 2 ;;
	--dims) dims=$2; shift 2 ;;
	--data) data=$2; shift 2 ;;
	--speed) speed=$2; shift 2 ;;
	*) echo "usage: bench/embed-code.sh [-n <pairs>] [--models <list>] [--dims <list>] [--data <dir>] [--speed <tree>]" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the same n pairs as scripts/train-embed's validation (seed 26, its shuffle)
/usr/bin/python3 - "$data/pairs.jsonl" "$n" >"$tmp/valid.jsonl" <<'EOF'
import json, random, sys
va = [p for p in map(json.loads, open(sys.argv[1])) if p["split"] == "valid"]
random.Random(26).shuffle(va)
for p in va[:int(sys.argv[2])]:
    print(json.dumps(p))
EOF
jq -c '{_type: "chunk", path: ("v/" + (input_line_number | tostring)), lang, name, signature, text}' \
	"$tmp/valid.jsonl" >"$tmp/docs"
jq -c '{_type: "commit", message: .query, want: ("v/" + (input_line_number | tostring))}' \
	"$tmp/valid.jsonl" >"$tmp/queries"
echo "validation: $(wc -l <"$tmp/docs") pairs from $(jq -r .unit "$tmp/valid.jsonl" | sort -u | wc -l) units"
if test -n "$dims"; then
	all=
	for m in $models; do
		for d in $dims; do all="$all $m/$d"; done
	done
	models=$all
fi
for m in $models; do
	"$CI_EMBED" --model "$m" -j 2 --no-progress <"$tmp/docs" >"$tmp/d.$$"
	"$CI_EMBED" --model "$m" -j 2 --no-progress <"$tmp/queries" >"$tmp/q.$$"
	printf '%s\tsearch\t' "$m"
	"$VEC_TOOL" rank "$tmp/q.$$" "$tmp/d.$$" | tail -1
done

if test -n "$speed"; then
	(cd "$speed" && "$CI_CHUNK" --chunks --no-files) >"$tmp/chunks"
	echo "speed: $(wc -l <"$tmp/chunks") chunks of $speed, 2 threads"
	for m in $models; do
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
			"$CI_EMBED" --model "$m" -j 2 --no-progress <"$tmp/chunks" >/dev/null
		read -r el us sy rss <"$tmp/time"
		awk -v m="$m" -v c="$(wc -l <"$tmp/chunks")" -v el="$el" -v us="$us" -v sy="$sy" -v rss="$rss" \
			'BEGIN { printf "%s\tspeed\t%.0f chunks/s (%.2f s), %.0f chunks per CPU second, peak RSS %.0f MB\n",
				m, c / el, el, c / (us + sy), rss / 1024 }'
	done
fi
