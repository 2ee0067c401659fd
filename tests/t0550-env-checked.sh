#!/bin/sh
# t0550-env-checked: numbers and words from the environment are checked the
# same way in every command (env_long, env_choice in libcommon/core/util.c).
#
# A bad value is an error that names the variable, exit 2, before any work
# (no index is written); an unset or empty variable is the default.  The one
# warning: the idle time of a server that a search starts only for the
# searches after it (the search still answers).

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"

test_expect_success 'setup: a repository' '
	gen_repo 3 &&
	(cd repo && git add . && git commit -q -m one)
'

# test_path_is_missing_ <path>
test_path_is_missing_() {
	if test -e "$1"; then
		echo "'$1' exists" >&7
		return 1
	fi
}

# bad_env <expected message> <VAR=value> <command>...: exit 2, that message, no output
bad_env() {
	bad_env_msg_=$1
	shift
	env "$@" >out 2>err
	bad_env_rc_=$?
	if test "$bad_env_rc_" != 2; then
		echo "bad_env: '$*' exited with $bad_env_rc_, expected 2" >&7
		cat err >&7
		return 1
	fi
	echo "$bad_env_msg_" >expect &&
	test_cmp expect err &&
	test_must_be_empty out
}

test_expect_success 'CI_INDEX_LOCK_WAIT: junk, a sign, out of range: exit 2, no index written' '
	(cd repo &&
	 bad_env "ci-index: \$CI_INDEX_LOCK_WAIT: expected an integer from 0 to 1000000, got '\''5s'\''" \
		CI_INDEX_LOCK_WAIT=5s ci-index build &&
	 bad_env "ci-index: \$CI_INDEX_LOCK_WAIT: expected an integer from 0 to 1000000, got '\''-1'\''" \
		CI_INDEX_LOCK_WAIT=-1 ci-index build &&
	 bad_env "ci-index: \$CI_INDEX_LOCK_WAIT: expected an integer from 0 to 1000000, got '\''99999999999999999999'\''" \
		CI_INDEX_LOCK_WAIT=99999999999999999999 ci-index build &&
	 test_path_is_missing_ .ci-index/index.db)
'

test_expect_success 'an empty value is the default; a good one is taken' '
	(cd repo && CI_INDEX_LOCK_WAIT= ci-index build && CI_INDEX_LOCK_WAIT=3 ci-index update) &&
	test -f repo/.ci-index/index.db
'

test_expect_success 'CI_INDEX_CHECK: a word not among auto, always, never is exit 2' '
	(cd repo &&
	 bad_env "ci-index: \$CI_INDEX_CHECK: expected one of '\''auto'\'', '\''always'\'', '\''never'\'', got '\''sometimes'\''" \
		CI_INDEX_CHECK=sometimes ci-index update &&
	 CI_INDEX_CHECK=always ci-index update && CI_INDEX_CHECK=auto ci-index update)
'

test_expect_success 'CI_INDEX_SERVER, CI_INDEX_SERVER_IDLE: checked by ci-index' '
	(cd repo &&
	 bad_env "ci-index: \$CI_INDEX_SERVER: expected one of '\''0'\'', '\''1'\'', '\''always'\'', got '\''no'\''" \
		CI_INDEX_SERVER=no ci-index update &&
	 bad_env "ci-index: \$CI_INDEX_SERVER_IDLE: expected an integer from 1 to 31536000, got '\''0'\''" \
		CI_INDEX_SERVER_IDLE=0 ci-index serve --stop &&
	 bad_env "ci-index: \$CI_INDEX_SERVER_IDLE: expected an integer from 1 to 31536000, got '\''10m'\''" \
		CI_INDEX_SERVER_IDLE=10m ci-index serve --stop)
'

test_expect_success 'the test hooks: CI_INDEX_CRASH_AFTER, CI_INDEX_CRASH_SIGNAL, CI_TEST_TS_ALLOC_LIMIT' '
	(cd repo &&
	 bad_env "ci-index: \$CI_INDEX_CRASH_AFTER: expected an integer from 0 to 9223372036854775807, got '\''N'\''" \
		CI_INDEX_CRASH_AFTER=N ci-index update &&
	 bad_env "ci-index: \$CI_INDEX_CRASH_SIGNAL: expected one of '\''KILL'\'', '\''TERM'\'', '\''INT'\'', got '\''HUP'\''" \
		CI_INDEX_CRASH_SIGNAL=HUP ci-index update &&
	 bad_env "ci-chunk: \$CI_TEST_TS_ALLOC_LIMIT: expected an integer from 0 to 9223372036854775807, got '\''lots'\''" \
		CI_TEST_TS_ALLOC_LIMIT=lots ci-chunk src/f1.c)
'

test_expect_success 'CI_FORMAT: text or json, else exit 2 (ci-grep, ci-refs)' '
	(cd repo &&
	 bad_env "ci-grep: \$CI_FORMAT: expected one of '\''text'\'', '\''json'\'', got '\''yaml'\''" \
		CI_FORMAT=yaml ci-grep helper &&
	 bad_env "ci-refs: \$CI_FORMAT: expected one of '\''text'\'', '\''json'\'', got '\''JSON'\''" \
		CI_FORMAT=JSON ci-refs defs f1_0 &&
	 CI_FORMAT=text ci-grep -c helper src/f1.c >out && echo src/f1.c:3 >expect && test_cmp expect out)
'

test_expect_success 'CI_GREP_MATCH_LIMIT: the same words as before' '
	(cd repo &&
	 bad_env "ci-grep: \$CI_GREP_MATCH_LIMIT: expected an integer from 1 to 4294967295, got '\''x'\''" \
		CI_GREP_MATCH_LIMIT=x ci-grep helper)
'

test_expect_success 'CI_RANK_SERVER: checked' '
	(cd repo &&
	 bad_env "ci-rank: \$CI_RANK_SERVER: expected one of '\''0'\'', '\''1'\'', '\''always'\'', got '\''off'\''" \
		CI_RANK_SERVER=off ci-rank helper)
'

test_expect_success 'a search that starts a server for later ones warns of a bad idle time, and answers' '
	run=$TRASH_DIRECTORY.run &&
	rm -rf "$run" && mkdir -m 700 "$run" &&
	(cd repo && XDG_RUNTIME_DIR=$run CI_INDEX_SERVER=1 CI_INDEX_SERVER_IDLE=soon \
		ci-grep -c helper >../out 2>../err) &&
	(cd repo && XDG_RUNTIME_DIR=$run CI_INDEX_SERVER=1 ci-index serve --stop) &&
	jq -r "select(.path == \"src/f2.c\") | .count" out >actual &&
	echo 3 >expect && test_cmp expect actual &&
	echo "ci-grep: warning: \$CI_INDEX_SERVER_IDLE: expected an integer from 1 to 31536000, got '\''soon'\'': using 600" >expect &&
	test_cmp expect err
'

test_done
