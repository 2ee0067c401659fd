# tests/fleet-lib.sh: generated repositories and shard checks for the fleet tests
# (t1200-t1249).  Sourced after lib.sh and index-lib.sh.

# make_fleet_repos <dir> <n>: n small git repositories r01 ... under <dir>, each
# with a C file, a header and a Python module whose names and contents depend on
# the repository's number (so every shard differs), and <dir>/manifest.tsv
# naming them (relative paths, revision HEAD)
make_fleet_repos() {
	mfr_d=$1 mfr_n=$2 mfr_i=1
	mkdir -p "$mfr_d" && : >"$mfr_d/manifest.tsv" || return 1
	while test "$mfr_i" -le "$mfr_n"; do
		mfr_name=$(printf 'r%02d' "$mfr_i")
		mkdir -p "$mfr_d/$mfr_name/src" "$mfr_d/$mfr_name/py" &&
		(
			cd "$mfr_d/$mfr_name" && git init -q &&
			printf '#ifndef UTIL_H\n#define UTIL_H\nint util_%s(int x);\n#endif\n' "$mfr_name" >src/util.h &&
			printf '#include "util.h"\n\n/* shared_marker %s */\nint util_%s(int x)\n{\n\treturn x * %d;\n}\n\nint main(void)\n{\n\treturn util_%s(%d);\n}\n' \
				"$mfr_name" "$mfr_name" "$mfr_i" "$mfr_name" "$mfr_i" >src/main.c &&
			printf 'def parse_%s(text):\n    """shared_marker"""\n    return text.split(",")[%d]\n\n\ndef run():\n    return parse_%s("a,b")\n' \
				"$mfr_name" "$((mfr_i % 2))" "$mfr_name" >py/mod.py &&
			git add . && git commit -q -m "$mfr_name: first"
		) || return 1
		printf '%s\t%s\tHEAD\n' "$mfr_name" "$mfr_name" >>"$mfr_d/manifest.tsv"
		mfr_i=$((mfr_i + 1))
	done
}

# fleet_check_shards <out> <repos dir> <name>...: each shard <out>/<name>.db holds
# what a single-machine build of the same commit holds (index_dump, without
# mtimes), and answers ci-grep, ci-rank and ci-refs over the shard set as the
# single index answers them (the records, less "repo")
fleet_check_shards() {
	fcs_out=$1 fcs_src=$2
	shift 2
	for fcs_name; do
		fcs_commit=$(awk -F '\t' -v n="$fcs_name" '$1 == n { print $2 }' "$fcs_out/.fleet/state.tsv") &&
		test -n "$fcs_commit" &&
		rm -rf "$TEST_TMP/single" "$TEST_TMP/single.db" &&
		git clone -q "$fcs_src/$fcs_name" "$TEST_TMP/single" &&
		git -C "$TEST_TMP/single" checkout -q --detach "$fcs_commit" &&
		(cd "$TEST_TMP/single" && ci-index --index "$TEST_TMP/single.db" --no-progress build . 2>/dev/null) &&
		index_dump --no-mtime "$TEST_TMP/single.db" >"$TEST_TMP/dump.expect" &&
		index_dump --no-mtime "$fcs_out/$fcs_name.db" >"$TEST_TMP/dump.actual" &&
		test_cmp "$TEST_TMP/dump.expect" "$TEST_TMP/dump.actual" &&
		(cd "$TEST_TMP/single" && ci-grep --index "$TEST_TMP/single.db" shared_marker) >"$TEST_TMP/q.expect" &&
		ci-grep --shards "$fcs_out" --shards-repo "$fcs_name" shared_marker |
			jq -c 'select(._type == "match") | del(.repo)' >"$TEST_TMP/q.actual" &&
		test_cmp "$TEST_TMP/q.expect" "$TEST_TMP/q.actual" &&
		ci-rank --index "$TEST_TMP/single.db" --limit 5 "parse the text" | jq -c 'select(._type == "hit")' >"$TEST_TMP/q.expect" &&
		ci-rank --shards "$fcs_out" --shards-repo "$fcs_name" --limit 5 "parse the text" |
			jq -c 'select(._type == "hit") | del(.repo)' >"$TEST_TMP/q.actual" &&
		test_cmp "$TEST_TMP/q.expect" "$TEST_TMP/q.actual" &&
		test -s "$TEST_TMP/q.actual" &&
		ci-refs --index "$TEST_TMP/single.db" refs "util_$fcs_name" >"$TEST_TMP/q.expect" &&
		ci-refs --shards "$fcs_out" --shards-repo "$fcs_name" refs "util_$fcs_name" |
			jq -c 'select(._type != "fleet") | del(.repo)' >"$TEST_TMP/q.actual" &&
		test_cmp "$TEST_TMP/q.expect" "$TEST_TMP/q.actual" &&
		test -s "$TEST_TMP/q.actual" || return 1
	done
}

# fleet_no_temporaries <out>: nothing half-built is left in <out> (no temporary
# index, no temporary checkout, no write-ahead log beside a shard)
fleet_no_temporaries() {
	fnt_left=$(cd "$1" && ls -a | grep -E '^\.[^.].*\.db\.|\.db-(wal|shm)$|\.db\.lock$'; cd "$1/trees" && ls -a | grep -E '^\.[^.]')
	if test -n "$fnt_left"; then
		echo "left in $1: $fnt_left" >&7
		return 1
	fi
}

# ---- shard servers (--shards-serve) ----

# fleet_server_env: the servers' sockets under the test's own runtime directory;
# a server a failed test leaves ends by itself
fleet_server_env() {
	XDG_RUNTIME_DIR=$TRASH_DIRECTORY/run
	CI_SHARDS_SERVER_IDLE=120
	export XDG_RUNTIME_DIR CI_SHARDS_SERVER_IDLE
	mkdir -m 700 "$XDG_RUNTIME_DIR"
}

# sockets <kind>: the sockets of that kind's shard servers
sockets() {
	ls "$XDG_RUNTIME_DIR/ci" 2>/dev/null | grep "^$1-shards-.*\.sock$"
}

# wait_for <command...>: until it succeeds, at most 20 s
wait_for() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		test $i -le 200 || return 1
		sleep 0.1
	done
}
have_socket() { test -n "$(sockets "$1")"; }
no_socket() { test -z "$(sockets "$1")"; }

# start <cmd> <set>: the set's server of ci-<cmd>, listening
start() {
	("ci-$1" --shards "$2" --shards-serve >/dev/null 2>"serve-$1.err" &) &&
	wait_for have_socket "$1"
}

# stop <cmd> <set>
stop() {
	"ci-$1" --shards "$2" --shards-stop &&
	wait_for no_socket "$1"
}

# alike <status> <command...>: the server's answer (the socket there) is the
# answer of the command run here (CI_SHARDS_SERVER=0), status and records
alike() {
	want=$1
	shift
	test_status "$want" "$@" >served.out 2>served.err &&
	CI_SHARDS_SERVER=0 test_status "$want" "$@" >here.out 2>here.err &&
	test_cmp here.out served.out &&
	test_cmp here.err served.err &&
	{ test "$want" = 2 || test_grep "\"_type\":\"fleet\"" served.out; }
}

# publish <repo>: its index built again, to a new file renamed over the old
publish() {
	(cd repos/$1 && ci-index --index ../../set/.$1.new.db --no-progress build .) &&
	mv set/.$1.new.db set/$1.db
}
