#!/bin/sh
# bench/embed.sh: ci-embed's throughput on the chunks of a real tree, next to the
# rate BLIS reaches alone on the same matrix shapes in the same run.
#
#   bench/embed.sh [-j "<threads> ..."] [-n <chunks>] [--no-static] [--bert <dir>] [<tree>]
#
#   <tree>        whose chunks to embed (default: $CI_BENCH_TREE, else
#                 /var/tmp/corpus/linux-source-6.1/kernel, else this repository)
#   -j <list>     thread counts to run (default "1 2")
#   -n <chunks>   embed only the first <chunks> chunks with the transformer
#                 (default: all; the static mode always gets all of them)
#   --no-static   skip the static mode
#   --bert <dir>  also run a HuggingFace BERT-family model directory (default:
#                 $CI_BENCH_BERT; skipped when there is none), on the same
#                 chunks, with the same BLIS yardstick; "synthetic" makes one of
#                 all-MiniLM-L6-v2's shape with random weights and a vocabulary
#                 made of USE-lite's pieces (tests/bert-tiny minilm): its speed
#                 is the real model's, its token counts only roughly
#
# For each thread count: `ci-embed -j <t> -v` over the chunk records (chunks/s,
# tokens/s, GFLOP/s of the transformer, peak RSS from GNU time), then
# `bench/embed-gemm` for 5 s on the same shapes (groups of up to 2048 tokens in
# texts of the mean length just measured, the model's weights, t threads each
# running BLIS single-threaded, as ci-embed does): ratio = ci-embed's GFLOP/s over
# BLIS's, by the clock and by CPU time (which neighbours on the machine do not
# skew as much).  Then `ci-embed --static -j <t>` (its table already cached).  CPU
# seconds are shown too: on a shared machine wall-clock rates say more about the
# neighbours than about ci-embed.
#
# Targets (the issue): >= 150 chunks/s with 2 threads, >= 60% of BLIS's rate,
# >= 20,000 chunks/s static, peak RSS < 500 MB (for USE-lite; a BERT model has
# no target of its own).
# Needs GNU time (apt-get install time), jq.  Not part of `make check`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
CI_EMBED=${CI_EMBED:-$top/ci-embed}
# the transformer's figures: USE-lite unless CI_MODEL names another (ci-code:
# bench/embed-code.sh)
CI_MODEL=${CI_MODEL:-use-lite}
export CI_MODEL
CI_CHUNK=${CI_CHUNK:-$top/ci-chunk}
GEMM=${EMBED_GEMM:-$top/bench/embed-gemm}
threads="1 2"
limit=
static=1
bert=${CI_BENCH_BERT:-}
while [ $# -gt 0 ]; do
	case $1 in
	-j) threads=$2; shift 2 ;;
	-n) limit=$2; shift 2 ;;
	--no-static) static=; shift ;;
	--bert) bert=$2; shift 2 ;;
	-h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "embed.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
tree=${1:-${CI_BENCH_TREE:-/var/tmp/corpus/linux-source-6.1/kernel}}
[ -d "$tree" ] || tree=$top
[ -x /usr/bin/time ] || { echo "embed.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
[ -x "$GEMM" ] || (cd "$top" && make bench/embed-gemm >/dev/null) ||
	{ echo "embed.sh: cannot build $GEMM" >&2; exit 2; }
model=${CI_MODEL:-$top/deps/model/use-lite}

tmp=$(mktemp -d /tmp/ci-embed-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "tree: $tree"
(cd "$tree" && "$CI_CHUNK" --chunks --no-files . 2>/dev/null) >"$tmp/all"
if [ -n "$limit" ]; then head -n "$limit" "$tmp/all" >"$tmp/chunks"; else cp "$tmp/all" "$tmp/chunks"; fi
echo "chunks: $(wc -l <"$tmp/chunks") transformer, $(wc -l <"$tmp/all") static; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# run <label> <ci-embed args>: time one run; sets chunks tokens secs gflops cpu rss
run() {
	label=$1
	shift
	echo "\$ ci-embed $* <chunks >/dev/null" >&2
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$CI_EMBED" "$@" -v --no-progress \
		<"$tmp/in" >/dev/null 2>"$tmp/err"
	line=$(grep ' chunks, ' "$tmp/err" | tail -n 1)
	chunks=$(echo "$line" | sed 's/.* records, \([0-9]*\) chunks.*/\1/')
	tokens=$(echo "$line" | sed 's/.* chunks, \([0-9]*\) tokens.*/\1/')
	gflops=$(echo "$line" | sed 's/.* \([0-9.]*\) GFLOP\/s.*/\1/')
	read -r secs user sys rss <"$tmp/time"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	printf '%-22s %8d %8.2f %8.2f %10.1f %11.0f %9.1f %8.0f\n' "$label" "$chunks" "$secs" "$cpu" \
		"$(awk -v c="$chunks" -v s="$secs" 'BEGIN { print c / s }')" \
		"$(awk -v c="$tokens" -v s="$secs" 'BEGIN { print c / s }')" \
		"$(awk -v c="$chunks" -v s="$cpu" 'BEGIN { print c / s }')" "$((rss / 1024))"
}

printf '%-22s %8s %8s %8s %10s %11s %9s %8s\n' run chunks 'wall s' 'cpu s' chunks/s tokens/s 'chunks/cpu-s' 'RSS MB'
cp "$tmp/chunks" "$tmp/in"
for t in $threads; do
	run "transformer -j $t" -j "$t"
	mean=$(awk -v c="$chunks" -v t="$tokens" 'BEGIN { m = int(t / c + 0.5); print (m < 1 ? 1 : m) }')
	rate=$("$GEMM" "$model" 2048 "$mean" "$t" 5)
	# ci-embed's GFLOP per CPU second too: total operations over user + sys time
	cpurate=$(awk -v g="$gflops" -v s="$secs" -v c="$cpu" 'BEGIN { printf "%.1f", (c > 0 ? g * s / c : 0) }')
	echo "$t $gflops $cpurate $mean $rate" >>"$tmp/gemm"
done
if [ -n "$static" ]; then
	cp "$tmp/all" "$tmp/in"
	"$CI_EMBED" --static --query warm-up >/dev/null	# distil and cache the table
	for t in $threads; do
		run "static -j $t" --static -j "$t"
	done
fi

# ratios <gemm file> <model>: ci-embed's rate over BLIS's, per thread count
ratios() {
	echo "texts of $(head -n 1 "$1" | cut -d' ' -f4) tokens on average; GF: GFLOP"
	printf '%-8s %12s %12s %6s   %14s %14s %6s\n' threads 'ci-embed' 'BLIS sgemm' ratio \
		'ci-embed' 'BLIS sgemm' ratio
	printf '%-8s %12s %12s %6s   %14s %14s %6s\n' '' 'GF/s' 'GF/s' '' 'GF/cpu-s' 'GF/cpu-s' ''
	while read -r t g cg mean r rc; do
		printf '%-8s %12.1f %12.1f %5.0f%%   %14.1f %14.1f %5.0f%%\n' "$t" "$g" "$r" \
			"$(awk -v g="$g" -v r="$r" 'BEGIN { print (r > 0 ? 100 * g / r : 0) }')" "$cg" "$rc" \
			"$(awk -v g="$cg" -v r="$rc" 'BEGIN { print (r > 0 ? 100 * g / r : 0) }')"
	done <"$1"
	echo "\$ bench/embed-gemm $2 2048 <mean tokens> <threads> 5"
}
ratios "$tmp/gemm" "$model"

# ---- a BERT-family model, when there is one ----------------------------------------
echo
if [ -z "$bert" ]; then
	echo "BERT: skipped (no model directory: bench/embed.sh --bert <dir>, or CI_BENCH_BERT;"
	echo "      --bert synthetic for one of all-MiniLM-L6-v2's shape with random weights)"
	exit 0
fi
if [ "$bert" = synthetic ]; then
	[ -x "$top/tests/bert-tiny" ] || (cd "$top" && make tests/bert-tiny >/dev/null) ||
		{ echo "embed.sh: cannot build tests/bert-tiny" >&2; exit 2; }
	# USE-lite's pieces as WordPiece: a word start loses its U+2581, the rest get ##
	jq -r '.[6:][] | .[0]' "$model/vocab.json" |
		sed -e 's/^\xe2\x96\x81//; t' -e 's/^/##/' | grep -v '^\(##\)\{0,1\}$' >"$tmp/pieces"
	"$top/tests/bert-tiny" minilm "$tmp/all-MiniLM-L6-v2-shaped" "$tmp/pieces"
	bert=$tmp/all-MiniLM-L6-v2-shaped
	echo "BERT: a model of all-MiniLM-L6-v2's shape with random weights, $(wc -l <"$bert/vocab.txt") pieces"
fi
[ -f "$bert/config.json" ] || { echo "embed.sh: no config.json in $bert" >&2; exit 2; }
echo "BERT: $bert; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %8s %8s %8s %10s %11s %9s %8s\n' run chunks 'wall s' 'cpu s' chunks/s tokens/s 'chunks/cpu-s' 'RSS MB'
cp "$tmp/chunks" "$tmp/in"
: >"$tmp/bgemm"
for t in $threads; do
	run "bert -j $t" --model "$bert" -j "$t"
	mean=$(awk -v c="$chunks" -v t="$tokens" 'BEGIN { m = int(t / c + 0.5); print (m < 2 ? 2 : m) }')
	rate=$("$GEMM" "$bert" 2048 "$mean" "$t" 5)
	cpurate=$(awk -v g="$gflops" -v s="$secs" -v c="$cpu" 'BEGIN { printf "%.1f", (c > 0 ? g * s / c : 0) }')
	echo "$t $gflops $cpurate $mean $rate" >>"$tmp/bgemm"
done
ratios "$tmp/bgemm" "$bert"
