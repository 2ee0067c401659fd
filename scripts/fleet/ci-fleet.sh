#!/bin/sh
# ci-fleet: index many repositories, one index (shard) each, as independent jobs of an
# engine that exists already: GNU parallel (local job slots, --sshlogin for other
# machines) or a Slurm job array (sbatch --array); `ci fleet` runs it (man ci-fleet).
#
# Shaped by an organisation's thousands of small repositories: each repository is a
# job of its own that needs nothing but git, ci-index and the output directory, so the
# engine decides where and how many at a time, and a job that fails is retried and
# reported, never dropped.  What one run leaves in <out>:
#
#   <out>/<name>.db              the published shard (a self-contained SQLite file)
#   <out>/trees/<name>@<commit>/ the checkout it indexes (ci-grep reads the files there)
#   <out>/.fleet/state.tsv       name<TAB>commit of every shard published: the next run
#                                re-indexes only the repositories whose commit changed
#   <out>/.fleet/logs/<name>.log what the last job of a repository said
#
# A shard is built under a temporary name in <out> (".<name>.db.<host>.<pid>") and
# renamed into place: a reader sees the old shard or the new one, never half of one.
# The checkout is made under a temporary name too, and is never changed once there.
set -u

prog=ci-fleet
usage='usage: ci-fleet [options] <manifest>
   or: ci-fleet job <out> <name> <url> <commit>

Index each repository of <manifest> into <out>/<name>.db, one job a repository on
an engine; write a fleet_job record for each repository.  The manifest: one
repository a line, TSV "<name><TAB><url or path>[<TAB><revision>]" or NDJSON
{"name":...,"url":...,"rev":...} (revision default HEAD; "#" lines are comments).
`job` is what each job runs: index one repository at one commit and publish it.

  -o, --out <dir>          where the shards go (default: shards)
  -e, --engine <engine>    parallel (GNU parallel, the default), slurm (a Slurm
                           job array) or local (one after another, here)
  -j, --jobs <n>           jobs at a time (parallel: job slots per machine; slurm:
                           the array'"'"'s %<n>; default: the number of CPUs)
  -S, --sshlogin <login>   parallel: also run jobs on <login> (repeatable; ":" is
                           this machine); <out> must be at the same path there
  -p, --partition <name>   slurm: the partition (default: the default partition)
  -r, --retries <n>        run a failed job again up to <n> times (default 2)
      --force              index every repository, changed or not
  -h, --help               show this help and exit
      --version            show the version and exit
'

say() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { say "$*"; exit 3; }
usage_error() { say "$*"; printf '%s' "$usage" >&2; exit 2; }

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
bindir=$(dirname "$self")
if [ -x "$bindir/ci-index" ]; then
	ci_index=$bindir/ci-index
else
	ci_index=ci-index
fi

# ---- one job: index <name> at <commit> from <url> into <out> ------------------------
job() {
	out=$1 name=$2 url=$3 commit=$4
	mkdir -p "$out/trees" "$out/.fleet/logs" "$out/.fleet/results" || return 3
	log=$out/.fleet/logs/$name.log
	res=$out/.fleet/results/$name
	host=$(hostname 2>/dev/null || echo localhost)
	rm -f "$res"
	{
		tree=$out/trees/$name@$commit
		if [ ! -d "$tree" ]; then
			tmp=$out/trees/.$name@$commit.$host.$$
			rm -rf "$tmp"
			git clone --quiet --no-checkout "$url" "$tmp" &&
				git -C "$tmp" -c advice.detachedHead=false checkout --quiet --detach "$commit" ||
				{ rm -rf "$tmp"; echo "fail cannot check out $commit of $url" >"$res"; return 3; }
			# another job may have made it meanwhile: theirs is the same commit
			mv -T "$tmp" "$tree" 2>/dev/null || rm -rf "$tmp"
		fi
		idx=$out/.$name.db.$host.$$
		rm -f "$idx" "$idx-wal" "$idx-shm" "$idx.lock"
		# a batch job: no resident server left behind on the node, none holding the file
		if ! (cd "$tree" && CI_INDEX_SERVER=0 "$ci_index" --index "$idx" --no-progress --threads 1 build .); then
			rm -f "$idx" "$idx-wal" "$idx-shm" "$idx.lock"
			echo "fail ci-index build failed" >"$res"
			return 3
		fi
		# one self-contained file: no write-ahead log beside it to go stale
		sqlite3 "$idx" 'PRAGMA journal_mode=DELETE' >/dev/null &&
			rm -f "$idx-wal" "$idx-shm" "$idx.lock" &&
			mv -f "$idx" "$out/$name.db" ||
			{ rm -f "$idx" "$idx-wal" "$idx-shm" "$idx.lock"; echo "fail cannot publish $out/$name.db" >"$res"; return 3; }
		echo "ok $commit" >"$res"
	} >"$log" 2>&1
}

if [ "${1:-}" = job ]; then
	[ $# = 5 ] || usage_error "job: expected <out> <name> <url> <commit>"
	shift
	job "$@"
	exit $?
fi

# ---- options -------------------------------------------------------------------------
out=shards engine=parallel jobs= retries=2 force= partition= sshlogins=
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) printf '%s' "$usage" 2>/dev/null || die "write error"; exit 0 ;;
	--version) echo "ci-fleet (ci) %%VERSION%%" 2>/dev/null || die "write error"; exit 0 ;;
	--list-options)
		[ $# = 1 ] || usage_error "unknown option '$1'"
		printf '%s\n' --out= --engine= --jobs= --sshlogin= --partition= --retries= --force --help --version
		exit 0 ;;
	-o|--out|-e|--engine|-j|--jobs|-S|--sshlogin|-p|--partition|-r|--retries)
		[ $# -ge 2 ] || usage_error "option '$1' requires an argument"
		case $1 in
		-o|--out) out=$2 ;;
		-e|--engine) engine=$2 ;;
		-j|--jobs) jobs=$2 ;;
		-S|--sshlogin) sshlogins="$sshlogins
$2" ;;
		-p|--partition) partition=$2 ;;
		-r|--retries) retries=$2 ;;
		esac
		shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--engine=*) engine=${1#*=}; shift ;;
	--jobs=*) jobs=${1#*=}; shift ;;
	--sshlogin=*) sshlogins="$sshlogins
${1#*=}"; shift ;;
	--partition=*) partition=${1#*=}; shift ;;
	--retries=*) retries=${1#*=}; shift ;;
	--force) force=1; shift ;;
	--) shift; break ;;
	-*) usage_error "unknown option '$1'" ;;
	*) break ;;
	esac
done
[ $# = 1 ] || usage_error "expected one manifest"
manifest=$1
case $engine in parallel|slurm|local) ;; *) usage_error "--engine: expected parallel, slurm or local, got '$engine'" ;; esac
: "${jobs:=$(nproc 2>/dev/null || echo 1)}"
case $jobs in ''|*[!0-9]*|0) usage_error "--jobs: expected a positive integer, got '$jobs'" ;; esac
case $retries in ''|*[!0-9]*) usage_error "--retries: expected an integer, got '$retries'" ;; esac
[ -r "$manifest" ] && [ -f "$manifest" ] || die "cannot read manifest '$manifest'"
case $engine in
parallel) command -v parallel >/dev/null 2>&1 || die "--engine parallel: GNU parallel is not installed (Debian: parallel)" ;;
slurm) command -v sbatch >/dev/null 2>&1 || die "--engine slurm: sbatch is not installed (Debian: slurm-client)" ;;
esac
command -v jq >/dev/null 2>&1 || die "jq is not installed (Debian: jq)"

mkdir -p "$out/.fleet" || die "cannot make '$out'"
out=$(cd "$out" && pwd)
mdir=$(cd "$(dirname "$manifest")" && pwd)
work=$(mktemp -d "$out/.fleet/run.XXXXXX") || die "cannot make a directory in '$out/.fleet'"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# ---- the manifest: name, url, rev (TSV out), checked --------------------------------
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	line=${line%"$(printf '\r')"}
	case $line in ''|'#'*) continue ;; esac
	case $line in
	'{'*)
		t=$(printf '%s\n' "$line" | jq -er 'select(type == "object" and (.name | type) == "string" and ((.url // .path) | type) == "string") | [.name, (.url // .path), (.rev // "HEAD")] | @tsv' 2>/dev/null) ||
			die "$manifest:$lineno: expected {\"name\":...,\"url\":...,\"rev\":...}" ;;
	*) t=$line ;;
	esac
	name=$(printf '%s' "$t" | cut -f1) url=$(printf '%s' "$t" | cut -f2) rev=$(printf '%s' "$t" | cut -f3)
	case $t in *'	'*) ;; *) die "$manifest:$lineno: expected <name><TAB><url or path>[<TAB><revision>]" ;; esac
	[ -n "$rev" ] || rev=HEAD
	case $name in ''|.*|*[!A-Za-z0-9._-]*) die "$manifest:$lineno: bad repository name '$name' (letters, digits, '.', '_', '-')" ;; esac
	[ -n "$url" ] || die "$manifest:$lineno: no url or path"
	case $url in
	/*|*://*|*@*:*) ;;
	*) url=$mdir/$url ;;
	esac
	printf '%s\t%s\t%s\n' "$name" "$url" "$rev"
done <"$manifest" | sort -t '	' -k1,1 >"$work/repos" || exit 3
[ -s "$work/repos" ] || die "$manifest: no repositories"
dup=$(cut -f1 "$work/repos" | uniq -d | head -1)
[ -z "$dup" ] || die "$manifest: repository '$dup' is named twice"

# ---- what changed: each revision's commit, against the state ------------------------
# A record is a TSV line of records.tsv (repo, url, rev, commit, status, attempts,
# index, message), made JSON by one jq at the end: a process a repository, not five.
state=$out/.fleet/state.tsv
touch "$state"
: >"$work/resolved"
: >"$work/records.tsv"
# one line of text: no tabs or newlines in a message
oneline() { printf '%s' "$1" | tr '\t\n' '  '; }
while IFS='	' read -r name url rev; do
	commit=
	if [ -d "$url" ]; then
		# a local repository: rev-parse, one process
		commit=$(git -C "$url" rev-parse --verify -q "$rev^{commit}" 2>"$work/err") || commit=
	else
		case $rev in
		[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) commit=$rev ;;
		esac
		[ -n "$commit" ] ||
		commit=$(git ls-remote "$url" "$rev" 2>"$work/err" | awk -v r="$rev" '
			$2 == r || $2 == "refs/heads/" r || $2 == "refs/tags/" r "^{}" { best = $1 }
			NR == 1 { first = $1 }
			END { print best != "" ? best : first }')
	fi
	if [ -z "$commit" ]; then
		msg=
		[ -s "$work/err" ] && read -r msg <"$work/err"
		say "$name: cannot resolve '$rev' in $url${msg:+: $msg}"
		printf '%s\t%s\t%s\t\tfailed\t0\t\t%s\n' "$name" "$url" "$rev" \
			"$(oneline "cannot resolve revision '$rev'${msg:+: $msg}")" >>"$work/records.tsv"
		continue
	fi
	printf '%s\t%s\t%s\t%s\n' "$name" "$url" "$rev" "$commit" >>"$work/resolved"
done <"$work/repos"
# unchanged: the state has this commit and the shard is there (one awk for all)
awk -F '\t' -v out="$out" -v force="$force" -v todo="$work/todo" '
	FILENAME == ARGV[1] { old[$1] = $2; next }
	{
		db = out "/" $1 ".db"
		if (force == "" && old[$1] == $4 && (getline x < db) >= 0) {
			close(db)
			print $1 "\t" $2 "\t" $3 "\t" $4 "\tunchanged\t0\t" db "\t"
		} else
			print $1 "\t" $2 "\t" $4 "\t" $3 > todo
	}' "$state" "$work/resolved" >>"$work/records.tsv"
touch "$work/todo"

# ---- the rounds: the engine runs the jobs; the failed ones go again -----------------
# run_round <list>: every job of <list> (name, url, commit), on the engine
run_round() {
	list=$1
	n=$(wc -l <"$list")
	[ "$n" -gt 0 ] || return 0
	for name in $(cut -f1 "$list"); do rm -f "$out/.fleet/results/$name"; done
	case $engine in
	local)
		while IFS='	' read -r name url commit; do
			"$self" job "$out" "$name" "$url" "$commit" </dev/null
		done <"$list" ;;
	parallel)
		set -- --will-cite --halt never --jobs "$jobs" --colsep '\t'
		if [ -n "$sshlogins" ]; then
			for l in $(printf '%s\n' "$sshlogins" | sed '/^$/d'); do set -- "$@" --sshlogin "$l"; done
		fi
		cut -f1-3 "$list" | parallel -q "$@" "$self" job "$out" '{1}' '{2}' '{3}' >"$work/parallel.out" 2>&1 ||
			true ;;
	slurm)
		# arrays of at most $CI_FLEET_ARRAY_MAX tasks (default 1000: Slurm's
		# MaxArraySize is 1001 unless the cluster raised it), submitted together
		mkdir -p "$out/.fleet/logs"
		rm -f "$work"/array-*.tsv
		cut -f1-3 "$list" | split -l "${CI_FLEET_ARRAY_MAX:-1000}" -a 4 -d - "$work/array-" || return 0
		ids=
		for part in "$work"/array-[0-9]*; do
			mv "$part" "$part.tsv"
			part=$part.tsv
			pn=$(wc -l <"$part")
			cat >"${part%.tsv}.sh" <<-EOF
			#!/bin/sh
			line=\$(sed -n "\${SLURM_ARRAY_TASK_ID}p" '$part')
			name=\$(printf '%s' "\$line" | cut -f1)
			url=\$(printf '%s' "\$line" | cut -f2)
			commit=\$(printf '%s' "\$line" | cut -f3)
			exec '$self' job '$out' "\$name" "\$url" "\$commit"
			EOF
			chmod +x "${part%.tsv}.sh"
			set -- --parsable --job-name=ci-fleet --array="1-$pn%$jobs" --chdir="$out" \
				--output="$out/.fleet/logs/slurm-%A_%a.out"
			[ -z "$partition" ] || set -- "$@" --partition="$partition"
			sbatch "$@" "${part%.tsv}.sh" >"$work/sbatch.out" 2>&1 </dev/null
			rc=$?
			id=$(sed -n 's/^\([0-9][0-9]*\).*/\1/p' "$work/sbatch.out" | head -1)
			if [ -z "$id" ]; then
				say "sbatch failed (exit $rc): $(head -3 "$work/sbatch.out" | tr '\n' ' ')"
				continue
			fi
			ids=${ids:+$ids,}$id
		done
		[ -n "$ids" ] || return 0
		# until no task of the arrays is pending or running (sbatch --wait polls
		# every few seconds; a job of small repositories takes less than one)
		while :; do
			left=$(squeue -h -j "$ids" -o %i 2>"$work/squeue.err") ||
				{ say "squeue failed: $(head -1 "$work/squeue.err")"; break; }
			[ -n "$left" ] || break
			sleep 0.2
		done ;;
	esac
}

cp "$work/todo" "$work/left"
attempt=0
while [ -s "$work/left" ] && [ "$attempt" -le "$retries" ]; do
	attempt=$((attempt + 1))
	cut -f1-3 "$work/left" >"$work/round"
	run_round "$work/round"
	: >"$work/next"
	while IFS='	' read -r name url commit rev; do
		res=$out/.fleet/results/$name
		r=
		[ -f "$res" ] && read -r r <"$res"
		if [ "$r" = "ok $commit" ]; then
			printf '%s\t%s\t%s\t%s\tbuilt\t%d\t%s\t\n' "$name" "$url" "$rev" "$commit" "$attempt" \
				"$out/$name.db" >>"$work/records.tsv"
			printf '%s\t%s\n' "$name" "$commit" >>"$work/built"
		else
			printf '%s\t%s\t%s\t%s\n' "$name" "$url" "$commit" "$rev" >>"$work/next"
		fi
	done <"$work/left"
	mv "$work/next" "$work/left"
	[ -s "$work/left" ] && [ "$attempt" -le "$retries" ] &&
		say "$(wc -l <"$work/left") job(s) failed; attempt $((attempt + 1)) of $((retries + 1))"
done
failed=0
while IFS='	' read -r name url commit rev; do
	failed=$((failed + 1))
	res=$out/.fleet/results/$name
	if [ -f "$res" ]; then
		msg=$(sed 's/^fail //' "$res")
	else
		msg="the job left no result (it did not run, or died)"
	fi
	msg="$msg; log: $out/.fleet/logs/$name.log"
	say "$name: $msg"
	printf '%s\t%s\t%s\t%s\tfailed\t%d\t\t%s\n' "$name" "$url" "$rev" "$commit" "$attempt" \
		"$(oneline "$msg")" >>"$work/records.tsv"
done <"$work/left"

# ---- the state, rewritten whole and renamed; old checkouts removed ------------------
if [ -s "$work/built" ]; then
	cp "$state" "$work/prev"
	awk -F '\t' 'NR == FNR { new[$1] = $2; next } !($1 in new) { print } END { for (n in new) print n "\t" new[n] }' \
		"$work/built" "$state" | sort >"$state.tmp" && mv -f "$state.tmp" "$state" || die "cannot write '$state'"
	# keep the checkout each shard reads and the one before (a query may still read it)
	while IFS='	' read -r name commit; do
		for t in "$out/trees/$name@"*; do
			[ -d "$t" ] || continue
			case $t in "$out/trees/$name@$commit") continue ;; esac
			prev=$(awk -F '\t' -v n="$name" '$1 == n { print $2 }' "$work/prev" 2>/dev/null)
			case $t in "$out/trees/$name@$prev") continue ;; esac
			rm -rf "$t"
		done
	done <"$work/built"
fi

sort -t '	' -k1,1 "$work/records.tsv" |
	jq -R -c --arg engine "$engine" 'split("\t") as $f |
		{_type: "fleet_job", repo: $f[0], url: $f[1], rev: $f[2],
		 commit: (if $f[3] == "" then null else $f[3] end), status: $f[4],
		 attempts: ($f[5] | tonumber), engine: $engine}
		+ (if $f[6] != "" then {index: $f[6]} else {} end)
		+ (if ($f[7] // "") != "" then {message: $f[7]} else {} end)' ||
	die "cannot write the records"
if cut -f5 "$work/records.tsv" | grep -qx failed; then
	exit 3
fi
exit 0
