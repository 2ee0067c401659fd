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
# (a copy of each instance's index, made by SQLite's VACUUM INTO, is kept for
# the next run; with CI_EVAL_SNAPSHOTS=0 none is made, and each instance is
# ranked on the working clone's index: the space a copy takes, about 90 MB an
# instance of a large repository, is saved, and the next run updates again).
# Then semantic and hybrid modes have vectors to use.  A
# failed index build stops the run; one run at a time holds a work directory
# (a second is refused: give it its own CI_EVAL_WORK).
#
# With CI_EVAL_HISTORY=1 each snapshot also holds the history of its base
# commit ('ci-index build --rev <commit> --history': that commit and its
# ancestors, nothing after it; with --embed, 'ci-index --history' in the
# clone checked out at it), so that ranking's change signal has it.
#
# CI_EVAL_CHUNK_FEATURES=<file> appends, for each query and mode, the
# chunk_features records of 'ci-rank --chunk-features' (the chunks of the best
# files), each with the instance's gold functions and changed lines of its
# file, for 'scripts/train-rank --chunks'.
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
keep=${CI_EVAL_SNAPSHOTS:-1}
case $keep in
0|1) ;;
*) echo "eval: CI_EVAL_SNAPSHOTS must be 0 or 1, not '$keep'" >&2; exit 2 ;;
esac
mkdir -p "$work"
# one run a work directory: two would check out and update the same clones
# and indexes at once (snapshots came out malformed that way)
exec 9>"$work/.lock"
flock -n 9 || { echo "eval: $work is in use by another run (give this one its own CI_EVAL_WORK)" >&2; exit 1; }
results=${CI_EVAL_RESULTS:-$work/results.jsonl}
: >"$results"

now() { date +%s.%N; }
# since <t0>: the seconds from <t0> to now
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.6f\n", a - b }'; }

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
	hist=
	[ "${CI_EVAL_HISTORY:-0}" = 1 ] && hist=--history
	if [ $embed = 1 ]; then
		wc=$work/embed/$(printf '%s' "$repo" | tr / +)
		db=$tree${hist:+-h}.vec.db
		itime=0
		if [ "$keep" = 0 ] || [ ! -f "$db" ]; then
			[ -d "$wc/.git" ] || git clone -q --no-checkout "$src" "$wc"
			git -C "$wc" checkout -q -f "$commit"
			t0=$(now)
			if [ -f "$wc.db" ]; then
				verb=update
			else
				verb=build
			fi
			# shellcheck disable=SC2086
			(cd "$wc" && "$bin/ci-index" --no-progress $hist --index "$wc.db" --embed $verb) ||
				{ echo "eval: ci-index --embed $verb of $repo at $commit failed" >&2; exit 1; }
			itime=$(since "$t0")
		fi
		if [ "$keep" = 0 ]; then
			db=$wc.db
		elif [ ! -f "$db" ]; then
			mkdir -p "$work/trees"
			# a consistent copy in one file, write-ahead log included; the
			# index's server (the update started it) may hold the file a
			# moment (its checkpoint): wait for it, as ci-rank does
			rm -f "$db" "$db-wal" "$db-shm"
			# (a failed copy is removed: the next run would take it for done)
			sqlite3 -cmd '.timeout 30000' "$wc.db" "VACUUM INTO '$db'" ||
				{ rm -f "$db"; echo "eval: cannot copy $wc.db to $db" >&2; exit 1; }
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
			(cd "$tree" && "$bin/ci-index" --no-progress --index "$db" build) ||
				{ echo "eval: ci-index build of $repo at $commit failed" >&2; exit 1; }
			itime=$(since "$t0")
		fi
	else
		# the commit's tree, read from the clone's objects: nothing checked out
		mkdir -p "$work/snapshots"
		db=$work/snapshots/$(printf '%s' "$repo" | tr / +)-$commit${hist:+-h}.db
		itime=0
		if [ ! -f "$db" ]; then
			t0=$(now)
			(cd "$src" && "$bin/ci-index" --no-progress $hist --index "$db" build --rev "$commit") ||
			{ echo "eval: cannot index $repo at $commit" >&2; exit 1; }
			itime=$(since "$t0")
		fi
		tree=$src
	fi
	query=$(printf '%s' "$line" | jq -r .query)
	for mode in $modes; do
		t0=$(now)
		# up to 3 chunks a file: the files in order (as --per-file 1 ranks
		# them) and the first chunks, for function-level accuracy
		# shellcheck disable=SC2086
		# exit 1 is "no hit" (a miss, scored 0); anything else is a broken run
		rc=0
		(cd "$tree" && "$bin/ci-rank" --index "$db" --mode "$mode" --limit 60 --per-file 3 \
			--no-server ${CI_RANK_ARGS:-} -- "$query" 2>"$work/rank.err") >"$work/hits.jsonl" || rc=$?
		if [ "$rc" -gt 1 ]; then
			echo "eval: ci-rank failed on $id ($mode, exit $rc):" >&2
			cat "$work/rank.err" >&2
			exit 1
		fi
		qtime=$(since "$t0")
		if [ -n "${CI_EVAL_CHUNK_FEATURES:-}" ]; then
			# the chunks of the best files with their features, and the gold
			# functions and changed lines to label them (scripts/train-rank --chunks)
			(cd "$tree" && "$bin/ci-rank" --index "$db" --mode "$mode" --no-server \
				--chunk-features "$CI_EVAL_CHUNK_FEATURES.tmp" ${CI_RANK_ARGS:-} -- "$query" >/dev/null 2>&1) &&
			jq -c --arg id "$id" --arg repo "$repo" --arg mode "$mode" \
				--argjson gold "$(printf '%s' "$line" | jq -c '{relevant_files, relevant_spans: (.relevant_spans // {}), relevant_lines: (.relevant_lines // {})}')" \
				'. + {id: $id, repo: $repo, mode: $mode, relevant_file: (.path as $p | $gold.relevant_files | index($p) != null),
				      spans: ($gold.relevant_spans[.path] // []), lines: ($gold.relevant_lines[.path] // [])}' \
				"$CI_EVAL_CHUNK_FEATURES.tmp" >>"$CI_EVAL_CHUNK_FEATURES" ||
			echo "eval: no chunk features for $id ($mode): ci-rank or jq failed" >&2
		fi
		if [ -n "${CI_EVAL_FEATURES:-}" ]; then
			(cd "$tree" && "$bin/ci-rank" --index "$db" --mode "$mode" --no-server \
				--features "$CI_EVAL_FEATURES.tmp" ${CI_RANK_ARGS:-} -- "$query" >/dev/null 2>&1) &&
			jq -c --arg id "$id" --arg repo "$repo" --arg mode "$mode" --argjson rel \
				"$(printf '%s' "$line" | jq -c .relevant_files)" \
				'. + {id: $id, repo: $repo, mode: $mode, label: (if (.path as $p | $rel | index($p)) then 1 else 0 end)}' \
				"$CI_EVAL_FEATURES.tmp" >>"$CI_EVAL_FEATURES"
		fi
		jq -c -s '{got: ([.[] | select(._type == "hit") | .path] | reduce .[] as $p ([]; if index([$p]) then . else . + [$p] end) | .[:10]),
			got_chunks: [.[] | select(._type == "hit") | "\(.path):\(if (.scope // "") != "" then "\(.scope)." else "" end)\(.name // "")"][:5]}' \
			"$work/hits.jsonl" >"$work/got.json"
		printf '%s' "$line" | jq -c --slurpfile got "$work/got.json" --arg mode "$mode" \
			--arg qt "$qtime" --arg it "$itime" '
			.relevant_files as $rel | $got[0].got as $g
			| [$g | to_entries[] | select(.value as $p | $rel | index($p)) | .key] as $hits
			| {id, repo, mode: $mode, got: $g, got_chunks: $got[0].got_chunks, relevant: $rel,
			   relevant_spans: (.relevant_spans // {}),
			   acc1: (if ($hits | length) > 0 and $hits[0] == 0 then 1 else 0 end),
			   r5: (([$g[:5][] | select(. as $p | $rel | index($p))] | length) / ($rel | length)),
			   r10: (([$g[:10][] | select(. as $p | $rel | index($p))] | length) / ($rel | length)),
			   rr: (if ($hits | length) > 0 then 1 / ($hits[0] + 1) else 0 end),
			   query_s: ($qt | tonumber), index_s: ($it | tonumber)}' >>"$results"
	done
	printf '\reval: %d/%d %s' "$i" "$n" "$id" >&2
done <"$data"
echo >&2

echo "eval: results in $results" >&2
"${CI_PYTHON:-python3}" "$here/stats.py" "$results"
