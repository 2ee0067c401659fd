#!/bin/sh
# bench/eval/run.sh: file-level localisation of SWE-bench issues with ci-rank.
#
#   bench/eval/run.sh [--embed | --checkout] [<dataset.jsonl>] [<mode>...]
#
# For each instance (query = issue text, relevant = files the fix edited),
# indexes the repository at the base commit (from clones of the public
# repositories under $CI_EVAL_REPOS, default /var/tmp/ci-eval/repos/<owner>+<name>,
# e.g. made from the fetched mirrors) with 'ci-index build --rev <commit>', which
# reads the commit's blobs from the clone's object database (no checkout), runs
# ci-rank in each mode (default: keyword hybrid), and reports Acc@1, Recall@5,
# Recall@10 and MRR per repository and overall, the time per query and the index
# time per repository.  Not part of make check: it needs the repositories, which
# are never committed.  $CI_EVAL_LIMIT takes only the first that many instances.
#
# With --checkout the tree is extracted instead (git archive under
# $CI_EVAL_WORK/trees, then 'git init' so that .gitignore applies) and indexed by
# a plain build, as before build --rev existed: to compare the two.
#
# With --embed the indexes hold vectors (ci-index --embed, the default model):
# the instances of each repository are taken in commit order in one working
# clone under $CI_EVAL_WORK/embed, and each is indexed by 'ci-index update
# --embed' from the previous one, so a blob is embedded once for the whole run
# (a copy of each instance's index is kept for the next run).  Then semantic
# and hybrid modes have vectors to use.
set -eu
embed=0
checkout=0
case "${1:-}" in
--embed) embed=1; shift ;;
--checkout) checkout=1; shift ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
data=${1:-$top/../shared/eval/swebench-lite-loc.requests-pytest.jsonl}
[ $# -gt 0 ] && shift
modes=${*:-keyword hybrid}
repos=${CI_EVAL_REPOS:-/var/tmp/ci-eval/repos}
work=${CI_EVAL_WORK:-/var/tmp/ci-eval/work}
bin=${CI_BIN:-$top}
mkdir -p "$work"
results=$work/results.jsonl
: >"$results"

now() { date +%s.%N; }

if [ -n "${CI_EVAL_LIMIT:-}" ]; then
	head -n "$CI_EVAL_LIMIT" "$data" >"$work/dataset.limited.jsonl"
	data=$work/dataset.limited.jsonl
fi

if [ $embed = 1 ]; then
	# by repository, then commit time: each update re-embeds only what changed
	sorted=$work/dataset.sorted.jsonl
	tab=$(printf '\t')
	while IFS= read -r line; do
		repo=$(printf '%s' "$line" | jq -r .repo)
		commit=$(printf '%s' "$line" | jq -r .base_commit)
		src=$repos/$(printf '%s' "$repo" | tr / +)
		printf '%s\t%s\t%s\n' "$repo" "$(git -C "$src" show -s --format=%ct "$commit")" "$line"
	done <"$data" | sort -t "$tab" -k1,1 -k2,2n | cut -f3- >"$sorted"
	data=$sorted
fi

n=$(wc -l <"$data")
i=0
while IFS= read -r line; do
	i=$((i + 1))
	id=$(printf '%s' "$line" | jq -r .id)
	repo=$(printf '%s' "$line" | jq -r .repo)
	commit=$(printf '%s' "$line" | jq -r .base_commit)
	src=$repos/$(printf '%s' "$repo" | tr / +)
	[ -d "$src/.git" ] || [ -f "$src/HEAD" ] || { echo "eval: no clone of $repo at $src" >&2; exit 1; }
	tree=$work/trees/$(printf '%s' "$repo" | tr / +)-$commit
	if [ $embed = 1 ]; then
		wc=$work/embed/$(printf '%s' "$repo" | tr / +)
		db=$tree.vec.db
		itime=0
		if [ ! -f "$db" ]; then
			[ -d "$wc/.git" ] || git clone -q --no-checkout "$src" "$wc"
			git -C "$wc" checkout -q -f "$commit"
			t0=$(now)
			if [ -f "$wc.db" ]; then
				(cd "$wc" && "$bin/ci-index" --no-progress --index "$wc.db" --embed update 2>/dev/null)
			else
				(cd "$wc" && "$bin/ci-index" --no-progress --index "$wc.db" --embed build 2>/dev/null)
			fi
			itime=$(echo "$(now) - $t0" | bc)
			mkdir -p "$work/trees"
			cp "$wc.db" "$db"
		fi
		tree=$wc
	elif [ $checkout = 1 ]; then
		if [ ! -d "$tree" ]; then
			mkdir -p "$tree"
			git -C "$src" archive "$commit" | tar -x -C "$tree"
			git -C "$tree" init -q 2>/dev/null || true
		fi
		db=$tree.db
		itime=0
		if [ ! -f "$db" ]; then
			t0=$(now)
			(cd "$tree" && "$bin/ci-index" --no-progress --index "$db" build 2>/dev/null)
			itime=$(echo "$(now) - $t0" | bc)
		fi
	else
		# the commit's tree, read from the clone's objects: nothing checked out
		mkdir -p "$work/snapshots"
		db=$work/snapshots/$(printf '%s' "$repo" | tr / +)-$commit.db
		itime=0
		if [ ! -f "$db" ]; then
			t0=$(now)
			(cd "$src" && "$bin/ci-index" --no-progress --index "$db" build --rev "$commit") ||
			{ echo "eval: cannot index $repo at $commit" >&2; exit 1; }
			itime=$(echo "$(now) - $t0" | bc)
		fi
		tree=$src
	fi
	query=$(printf '%s' "$line" | jq -r .query)
	for mode in $modes; do
		t0=$(now)
		files=$(cd "$tree" && "$bin/ci-rank" --index "$db" --mode "$mode" --limit 10 --per-file 1 \
			"$query" 2>/dev/null | jq -c -s '[.[] | select(._type == "hit") | .path]')
		qtime=$(echo "$(now) - $t0" | bc)
		printf '%s' "$line" | jq -c --argjson got "$files" --arg mode "$mode" \
			--arg qt "$qtime" --arg it "$itime" '
			.relevant_files as $rel
			| [$got | to_entries[] | select(.value as $p | $rel | index($p)) | .key] as $hits
			| {id, repo, mode: $mode, got: $got, relevant: $rel,
			   acc1: (if ($hits | length) > 0 and $hits[0] == 0 then 1 else 0 end),
			   r5: (([$got[:5][] | select(. as $p | $rel | index($p))] | length) / ($rel | length)),
			   r10: (([$got[:10][] | select(. as $p | $rel | index($p))] | length) / ($rel | length)),
			   rr: (if ($hits | length) > 0 then 1 / ($hits[0] + 1) else 0 end),
			   query_s: ($qt | tonumber), index_s: ($it | tonumber)}' >>"$results"
	done
	printf '\reval: %d/%d %s' "$i" "$n" "$id" >&2
done <"$data"
echo >&2

jq -r -s '
	def stats: {n: length, acc1: (map(.acc1) | add / length), r5: (map(.r5) | add / length),
		r10: (map(.r10) | add / length), mrr: (map(.rr) | add / length),
		q_ms: (map(.query_s) | add / length * 1000)};
	def row($name): "\($name)\t\(.n)\t\(.acc1 * 1000 | round / 1000)\t\(.r5 * 1000 | round / 1000)\t\(.r10 * 1000 | round / 1000)\t\(.mrr * 1000 | round / 1000)\t\(.q_ms | round)";
	"repo/mode\tn\tAcc@1\tR@5\tR@10\tMRR\tms/query",
	(group_by(.mode)[] | .[0].mode as $m
		| (group_by(.repo)[] | .[0].repo as $r | stats | row("\($r) (\($m))")),
		  (stats | row("all (\($m))")))
' "$results" 2>/dev/null || true
jq -r -s 'group_by(.mode)[] | .[0].mode as $m | group_by(.repo)[] |
	"\($m)\t\(.[0].repo)\tn=\(length)\tAcc@1=\(map(.acc1)|add/length*1000|round/1000)\tR@5=\(map(.r5)|add/length*1000|round/1000)\tR@10=\(map(.r10)|add/length*1000|round/1000)\tMRR=\(map(.rr)|add/length*1000|round/1000)"' "$results"
jq -r -s 'group_by(.mode)[] | "\(.[0].mode)\tall\tn=\(length)\tAcc@1=\(map(.acc1)|add/length*1000|round/1000)\tR@5=\(map(.r5)|add/length*1000|round/1000)\tR@10=\(map(.r10)|add/length*1000|round/1000)\tMRR=\(map(.rr)|add/length*1000|round/1000)\tms/query=\(map(.query_s)|add/length*1000|round)"' "$results"
jq -r -s 'def avg: if length > 0 then add / length * 100 | round / 100 else 0 end;
	[.[] | select(.index_s > 0)] | unique_by(.id) | (group_by(.repo)[] |
	"index time per tree (s)\t\(.[0].repo)\ttrees=\(length)\tmean=\(map(.index_s) | avg)"),
	"index time per tree (s)\tall\ttrees=\(length)\tmean=\(map(.index_s) | avg)"' "$results"
