#!/bin/bash
# bench/mcp.sh: time to the first useful answer of ci-mcp on a fresh repository.
#
# A coding agent starts ci-mcp in a repository that has no index yet and asks a
# question at once; its client gives up on a tool call after about 15 seconds.
# For each run this starts ci-mcp in the repository with no index, sends
# initialize, notifications/initialized and one `search` call, and measures:
#   - first answer: the wall time from starting ci-mcp to the search's answer
#     (lexical, from ci-grep's scan, once --wait seconds pass while the index is
#     being built; ranked if the index was ready sooner), with whether it was
#     the lexical stand-in ("preparing") and how many records it held;
#   - index ready: stdin is then closed, and ci-mcp exits once its `ci-index
#     build` is done: the wall time from the start to that;
#   - cpu: user+sys of ci-mcp and everything it ran, for the whole session.
# Then, with the index in place, one more session: the wall time of a ranked
# answer (`search` on a warm index).
#
# The repository: <repo>, or one made once (kept in /var/tmp/ci-mcp-bench) of
# the first 10,000 C files (sorted by path) of the Linux 6.1 source
# ($CI_BENCH_SRC, default /var/tmp/corpus/linux-source-6.1), committed to git.
#
# Not part of `make check`.  See bench/README.md.

set -u

usage() {
	cat <<'EOF'
usage: bench/mcp.sh [-n <runs>] [-w <wait>] [-q <query>] [<repo>]

  <repo>        a git repository to serve (its .ci-index is deleted before each
                run!); default: a 10,000-file repository made once from $CI_BENCH_SRC
  -n <runs>     sessions to time (default 3)
  -w <wait>     ci-mcp --wait: seconds a call waits for the index (default 5)
  -q <query>    the search query (default: a question with identifiers)
  -h, --help    show this help and exit

Environment: CI_MCP (default: ../ci-mcp next to this script), CI_BENCH_SRC.
EOF
}

runs=3
wait_s=5
query='where does the kernel set up the page tables at boot: paging_init'
repo=
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=$2; shift 2 ;;
	-w) wait_s=$2; shift 2 ;;
	-q) query=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "bench/mcp.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) repo=$1; shift ;;
	esac
done

here=$(cd "$(dirname "$0")" && pwd)
CI_MCP=${CI_MCP:-$here/../ci-mcp}
[ -x "$CI_MCP" ] || { echo "bench/mcp.sh: no ci-mcp at $CI_MCP (make first)" >&2; exit 2; }
CI_MCP=$(cd "$(dirname "$CI_MCP")" && pwd)/$(basename "$CI_MCP")

if [ -z "$repo" ]; then
	src=${CI_BENCH_SRC:-/var/tmp/corpus/linux-source-6.1}
	repo=/var/tmp/ci-mcp-bench/linux10k
	if [ ! -d "$repo/.git" ]; then
		[ -d "$src" ] || { echo "bench/mcp.sh: no source tree at $src (set CI_BENCH_SRC)" >&2; exit 2; }
		echo "making $repo: the first 10,000 C files of $src" >&2
		rm -rf "$repo.tmp" && mkdir -p "$repo.tmp"
		(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort | head -n 10000 |
			cpio -pdm --quiet "$repo.tmp") || exit 1
		(cd "$repo.tmp" && git init -q && git add . &&
			git -c user.name=bench -c user.email=bench@example.com commit -qm "10,000 files") || exit 1
		mv "$repo.tmp" "$repo"
	fi
fi
nfiles=$(cd "$repo" && git ls-files | wc -l)

json_escape() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
search="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"$(json_escape "$query")\"}}}"

now() { date +%s.%N; }
# cpu_now: CPU=user+sys seconds of this shell's waited-for children so far
# (`times` must run in the shell itself, not in a command substitution)
tmpf=$(mktemp) || exit 1
trap 'rm -f "$tmpf"' EXIT
cpu_now() {
	times >"$tmpf"
	CPU=$(awk 'END { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%.2f", n }' "$tmpf")
}

# session <wait>: one ci-mcp session; prints "first done cpu kind count"
session() {
	local t0 t1 t2 c0 c1 line kind count
	cpu_now; c0=$CPU
	t0=$(now)
	coproc MCP { cd "$repo" && exec "$CI_MCP" --wait "$1"; }
	printf '%s\n' "$init" "$inited" "$search" >&"${MCP[1]}"
	line=
	while IFS= read -r line <&"${MCP[0]}"; do
		case $line in *'"id":2,'*) break ;; esac
	done
	t1=$(now)
	# hit records are ranked, match records ci-grep's lexical stand-in; "+" marks an
	# answer that came while the index was still being built or updated
	kind=$(printf '%s\n' "$line" | jq -r '.result.structuredContent |
		(if any(.results[]; ._type == "hit") then "ranked" elif any(.results[]; ._type == "match") then "lexical" else "none" end) +
		(if .preparing then "+" else "" end)')
	count=$(printf '%s\n' "$line" | jq -r '.result.structuredContent.count')
	exec {MCP[1]}>&-
	wait "$MCP_PID"
	t2=$(now)
	cpu_now; c1=$CPU
	echo "$t0 $t1 $t2 $c0 $c1 $kind $count" |
		awk '{ printf "%.2f %.2f %.2f %s %s\n", $2 - $1, $3 - $1, $5 - $4, $6, $7 }'
}

echo "# bench/mcp.sh: $repo ($nfiles files), --wait $wait_s, $(nproc) CPUs, load: $(uptime | sed 's/.*load average: //')"
echo "# query: $query"
printf '%-4s %12s %12s %10s %8s %7s\n' run first_s index_s cpu_s answer records
for i in $(seq 1 "$runs"); do
	rm -rf "$repo/.ci-index"
	set -- $(session "$wait_s")
	printf '%-4s %12s %12s %10s %8s %7s\n' "$i" "$1" "$2" "$3" "$4" "$5"
done
set -- $(session "$wait_s")
printf '%-4s %12s %12s %10s %8s %7s\n' warm "$1" "$2" "$3" "$4" "$5"
echo "# first_s: start to the search's answer (answer +: while the index was being built or updated);"
echo "# index_s: start to ci-mcp's exit (index built);"
echo "# cpu_s: user+sys of the whole session; load after: $(uptime | sed 's/.*load average: //')"
