#!/bin/sh
# couple.sh: how fast ci-couple reads a long git history, against git itself.
#
# usage: bench/couple.sh [-n <runs>] [-j <threads>] [--commits <n>] [<repository>]
#
# <repository> may be any git repository, bare or not, e.g. a mirror of a large
# public one (git/git: 82,000 commits, 24,000 on the first-parent line); the
# script only reads it.
# With no <repository>, a synthetic one is built (once, with git fast-import) in
# $CI_BENCH_COUPLE_DIR (default /var/tmp/couple-bench), named after the number of
# commits (--commits, default 20000): 2000 C files of 60 lines in 50
# directories; each commit changes one to four files, mostly of one directory,
# one to five lines each; every 500th commit renames a file (and changes it),
# every 2000th changes 100 files (a huge commit); eight authors, an hour apart.
# It is deterministic (a fixed seed, Park-Miller's generator, exact in awk's
# doubles), so two machines bench the same history.
#
# Then it times, median of -n runs (default 3), with GNU time, after one warm-up
# read of the objects:
#
#   ci-couple --no-index -j 1 history      commits, files, line counts, renames
#   ci-couple --no-index -j N history      the same on N threads (default: CPUs)
#   git log --first-parent --diff-merges=first-parent -M --numstat
#                                          what git takes for the same facts
#   ci-couple --no-index -j N coupling     the whole coupling table (no line counts)
#   ci-couple -j N coupling <file>         the same question once the history is
#                                          in an index (ci-couple history | ci-index load)
#
# and prints wall and CPU seconds, peak RSS and commits per second (first-parent
# commits of HEAD divided by wall seconds).  Every command is printed so that a
# figure can be reproduced alone with /usr/bin/time -f '%e %U %S %M' <command>.
#
# Variables: CI_COUPLE, CI_INDEX_BIN (default: next to this script's parent, then
# PATH), CI_BENCH_COUPLE_DIR.  Exit status: 0 done, 2 usage error, 3 a command failed.
set -u

runs=3
threads=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
commits=20000
repo=

usage() {
	echo "usage: bench/couple.sh [-n <runs>] [-j <threads>] [--commits <n>] [<repository>]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
	-j) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
	--commits) [ $# -ge 2 ] || usage; commits=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "couple.sh: unknown option '$1'" >&2; usage ;;
	*) [ -z "$repo" ] || usage; repo=$1; shift ;;
	esac
done
case $runs$threads$commits in
*[!0-9]*) echo "couple.sh: -n, -j and --commits take numbers" >&2; usage ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
find_bin() {
	if [ -x "$here/../$1" ]; then echo "$here/../$1"
	elif [ -x "./$1" ]; then echo "$PWD/$1"
	else command -v "$1"
	fi
}
couple=${CI_COUPLE:-$(find_bin ci-couple)}
index_bin=${CI_INDEX_BIN:-$(find_bin ci-index)}
[ -x "$couple" ] || { echo "couple.sh: ci-couple not found (set CI_COUPLE)" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "couple.sh: GNU time is needed (apt-get install time)" >&2; exit 3; }

export LC_ALL=C TZ=UTC
unset GIT_DIR GIT_WORK_TREE CI_INDEX

# ---- the synthetic repository ----------------------------------------------------
gen_history() {
	awk -v N="$1" '
	function rnd(n) { seed = (seed * 16807) % 2147483647; return seed % n }
	function emit(f,   c, i) {
		c = ""
		for (i = 0; i < L; i++)
			c = c "int v" f "_" i " = " val[f, i] ";\n"
		printf "M 100644 inline %s\ndata %d\n%s\n", name[f], length(c), c
	}
	function header(k, msg, who) {
		printf "commit refs/heads/main\nmark :%d\n", k
		printf "author %s <%s@example.com> %d +0000\n", who, tolower(who), T0 + k * 3600
		printf "committer %s <%s@example.com> %d +0000\n", who, tolower(who), T0 + k * 3600
		printf "data %d\n%s\n", length(msg), msg
		if (k > 1)
			printf "from :%d\n", k - 1
	}
	BEGIN {
		seed = 42; T0 = 1600000000; D = 50; PER = 40; F = D * PER; L = 60
		split("Alice Bob Carol Dave Erin Frank Grace Heidi", authors, " ")
		for (f = 0; f < F; f++) {
			name[f] = sprintf("src/d%02d/f%03d.c", int(f / PER), f % PER)
			for (i = 0; i < L; i++)
				val[f, i] = i
		}
		header(1, "initial import", "Alice")
		for (f = 0; f < F; f++)
			emit(f)
		for (k = 2; k <= N; k++) {
			who = authors[rnd(8) + 1]
			if (k % 2000 == 0) {
				header(k, "reformat " k, who)
				for (j = 0; j < 100; j++) { f = rnd(F); val[f, rnd(L)] += 1; emit(f) }
				continue
			}
			if (k % 500 == 0) {
				f = rnd(F); old = name[f]; sub(/\.c$/, "_r" k ".c", name[f])
				header(k, "rename " old, who)
				printf "R %s %s\n", old, name[f]
				val[f, 0] += 1
				emit(f)
				continue
			}
			d = rnd(D); n = 1 + rnd(4)
			header(k, "change " k " in module " d ": fix parser bug", who)
			split("", seen)
			for (j = 0; j < n; j++) {
				f = (rnd(10) == 0) ? rnd(F) : d * PER + rnd(PER)
				if (f in seen)
					continue
				seen[f] = 1
				m = 1 + rnd(5)
				for (x = 0; x < m; x++)
					val[f, rnd(L)] += k
				emit(f)
			}
		}
	}'
}

if [ -z "$repo" ]; then
	dir=${CI_BENCH_COUPLE_DIR:-/var/tmp/couple-bench}
	repo=$dir/synthetic-$commits
	if [ ! -f "$repo/.git/refs/heads/main" ] && [ ! -f "$repo/.git/packed-refs" ]; then
		echo "building $repo ($commits commits, git fast-import)..."
		rm -rf "$repo" && mkdir -p "$repo" && git -C "$repo" init -q &&
		gen_history "$commits" | git -C "$repo" fast-import --quiet &&
		git -C "$repo" symbolic-ref HEAD refs/heads/main &&
		git -C "$repo" checkout -q -f main || { echo "couple.sh: cannot build $repo" >&2; exit 3; }
	fi
fi
[ -d "$repo" ] || { echo "couple.sh: no repository '$repo'" >&2; exit 2; }
repo=$(cd "$repo" && pwd)
n=$(git -C "$repo" rev-list --first-parent --count HEAD) || exit 3
# the file changed most often in the last 200 commits, for the one-file question
file=$(git -C "$repo" log -200 --format= --name-only | sort | uniq -c | sort -k1,1nr -k2 | awk 'NR == 1 { print $2 }')

tmp=$(mktemp -d "${TMPDIR:-/tmp}/couple-bench.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# a bare repository (a mirror): time a clone of it that shares its objects and
# checks nothing out, so that every command sees a repository with a work tree
if [ "$(git -C "$repo" rev-parse --is-bare-repository)" = true ]; then
	git clone -q --shared --no-checkout "$repo" "$tmp/repo" || exit 3
	echo "bare repository $repo: timing a --shared --no-checkout clone of it"
	repo=$tmp/repo
fi

# warm the page cache: read every object once
git -C "$repo" cat-file --batch-all-objects --batch-check >/dev/null 2>&1
cat "$repo"/.git/objects/pack/* "$repo"/objects/pack/* >/dev/null 2>&1

# run <name> <command>: time it -n times, print the median wall, its CPU, the max RSS
run() {
	name=$1
	shift
	echo "  \$ (cd $repo && $*)"
	: >"$tmp/times"
	i=0
	while [ "$i" -lt "$runs" ]; do
		(cd "$repo" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" sh -c "$*" >/dev/null 2>"$tmp/err") || {
			echo "couple.sh: '$*' failed:" >&2
			tail -n 5 "$tmp/err" >&2
			exit 3
		}
		cat "$tmp/t" >>"$tmp/times"
		i=$((i + 1))
	done
	sort -n "$tmp/times" | awk -v runs="$runs" -v name="$name" -v n="$n" '
		{ w[NR] = $1; c[NR] = $2 + $3; if ($4 > rss) rss = $4 }
		END {
			m = int((runs + 1) / 2)
			printf "%-26s %8.2f %8.2f %8.0f %10.0f %10.0f\n", name, w[m], c[m], rss / 1024,
				(w[m] > 0 ? n / w[m] : 0), (c[m] > 0 ? n / c[m] : 0)
		}' >>"$tmp/table"
}

echo "repository: $repo ($n first-parent commits), $runs run(s), -j $threads"
echo "load: $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)"
: >"$tmp/table"
run "history -j 1" "$couple --no-index -j 1 history"
run "history -j $threads" "$couple --no-index -j $threads history"
run "git log --numstat" "git log --first-parent --diff-merges=first-parent -M --numstat --format='%H %at %an'"
run "coupling -j $threads" "$couple --no-index -j $threads coupling"
if [ -x "$index_bin" ]; then
	(cd "$repo" && "$couple" --no-index -j "$threads" history | "$index_bin" --index "$tmp/index.db" load) ||
		{ echo "couple.sh: cannot load the history into an index" >&2; exit 3; }
	src=$(cd "$repo" && "$couple" -v --index "$tmp/index.db" coupling "$file" 2>&1 >/dev/null | sed -n 's/.* from //p')
	run "coupling <file> ($src)" "$couple --index $tmp/index.db -j $threads coupling '$file'"
fi
echo
printf "%-26s %8s %8s %8s %10s %10s\n" "" "wall s" "cpu s" "RSS MB" "commits/s" "per cpu s"
cat "$tmp/table"
