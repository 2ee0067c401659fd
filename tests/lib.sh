# tests/lib.sh: the shell test library, sourced by every tests/tNNNN-*.sh.
#
# A small cousin of git's t/test-lib.sh.  A test script looks like
#
#	#!/bin/sh
#	. "$(dirname "$0")/lib.sh"
#	test_expect_success 'what is checked' '
#		ci-chunk a.c >out &&
#		test_cmp expect out
#	'
#	test_expect_code 2 'an unknown option is a usage error' 'ci-chunk --bogus'
#	test_done
#
# and prints TAP ("ok 3 - what is checked"; a failure's commands and output follow
# as "# " lines) for Automake's TAP driver.  The bodies are eval'd in the script's own
# shell, so chain commands with && (as in git: the test's result is the status of
# the last command), and a variable set by one test is seen by the next.  Each body
# starts in the trash directory, whatever directory the previous one left.
#
# The environment (set by `make check`, defaulted when a script is run by hand as
# `sh tests/t0100-walk.sh [-v] [-d]` from the source tree):
#   CI_SRC_DIR     absolute path of the source tree
#   CI_BUILD_DIR   absolute path of the build tree (the binaries are at its top)
#   CI_HAVE_LANGS  languages whose tree-sitter grammar is compiled in
#   JQ             the jq to use
# Options of a test script: -v (show every test's output), -d (keep the trash
# directory even when all tests pass).
#
# Each script gets a fresh trash directory $CI_BUILD_DIR/tests/trash/<script>,
# which is also $HOME; it is removed when every test passed and kept otherwise.
# Scratch files of this library go to a sibling directory (<script>.tmp) so that a
# test may walk its trash directory without seeing them.

# ---- where things are ----------------------------------------------------------
test_name_=$(basename "$0" .sh)
if test -z "${CI_SRC_DIR:-}"; then
	CI_SRC_DIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
fi
: "${CI_BUILD_DIR:=$CI_SRC_DIR}"
if test -z "${CI_HAVE_LANGS+set}" && test -f "$CI_BUILD_DIR/Makefile"; then
	CI_HAVE_LANGS=$(sed -n 's/^CI_HAVE_LANGS *= *//p' "$CI_BUILD_DIR/Makefile")
fi
: "${CI_HAVE_LANGS:=}"
: "${JQ:=jq}"
export CI_SRC_DIR CI_BUILD_DIR CI_HAVE_LANGS JQ

test_verbose_=
test_debug_=
for test_arg_ in "$@"; do
	case $test_arg_ in
	-v|--verbose) test_verbose_=t ;;
	-d|--debug) test_debug_=t ;;
	*) echo "Bail out! $test_name_: unknown option '$test_arg_' (-v, -d)"; exit 1 ;;
	esac
done

# ---- a deterministic environment ---------------------------------------------
LC_ALL=C LANG=C LANGUAGE=C TZ=UTC
export LC_ALL LANG LANGUAGE TZ
unset LC_CTYPE LC_COLLATE LC_MESSAGES CDPATH
# nothing of the user's git or ci setup may leak in
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_NAMESPACE \
	GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG_COUNT \
	GIT_ALTERNATE_OBJECT_DIRECTORIES XDG_CONFIG_HOME CI_INDEX
GIT_CONFIG_NOSYSTEM=1
GIT_AUTHOR_NAME='A U Thor'
GIT_AUTHOR_EMAIL='author@example.com'
GIT_AUTHOR_DATE='1700000000 +0000'
GIT_COMMITTER_NAME='C O Mitter'
GIT_COMMITTER_EMAIL='committer@example.com'
GIT_COMMITTER_DATE='1700000000 +0000'
GIT_PAGER=cat PAGER=cat GIT_TERMINAL_PROMPT=0
# the build tree lives inside ci's own repository: stop the git command from
# finding it from a trash directory that has no repository of its own
GIT_CEILING_DIRECTORIES=$CI_BUILD_DIR/tests/trash
export GIT_CONFIG_NOSYSTEM GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE GIT_PAGER PAGER \
	GIT_TERMINAL_PROMPT GIT_CEILING_DIRECTORIES

# sanitizer reports (./configure --enable-asan) are fatal and show where
ASAN_OPTIONS="abort_on_error=1:halt_on_error=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="abort_on_error=1:halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS

# ci-rank and ci-index run every command line themselves: no resident server
# is started or used (t0930-rank-server and t0515-index-server test the
# servers, each in a runtime directory of its own)
CI_RANK_SERVER=0 CI_INDEX_SERVER=0
export CI_RANK_SERVER CI_INDEX_SERVER
unset XDG_RUNTIME_DIR CI_RANK_SERVER_IDLE CI_INDEX_SERVER_IDLE

PATH=$CI_BUILD_DIR:$PATH
export PATH

# SIGINT is ignored in a background job of a non-interactive shell (make check
# started with &, nohup) and stays ignored in its children, where a test's
# SIGINT would do nothing: `env $default_int cmd` puts its default action back
# (GNU env; empty where env lacks the option)
if env --default-signal=INT true 2>/dev/null; then
	default_int=--default-signal=INT
else
	default_int=
fi

# ---- the trash directory ---------------------------------------------------------
TRASH_DIRECTORY=$CI_BUILD_DIR/tests/trash/$test_name_
TEST_TMP=$TRASH_DIRECTORY.tmp
for test_d_ in "$TRASH_DIRECTORY" "$TEST_TMP"; do
	if test -e "$test_d_"; then
		chmod -R u+rwx "$test_d_" 2>/dev/null
		rm -rf "$test_d_"
	fi
	mkdir -p "$test_d_" || { echo "Bail out! cannot create $test_d_"; exit 1; }
done
HOME=$TRASH_DIRECTORY
export HOME TRASH_DIRECTORY TEST_TMP
cat >"$HOME/.gitconfig" <<\EOF
[init]
	defaultBranch = main
[user]
	name = A U Thor
	email = author@example.com
[core]
	autocrlf = false
[commit]
	gpgsign = false
[advice]
	detachedHead = false
EOF
cd "$TRASH_DIRECTORY" || exit 1

# fd 7: where the helpers below report why they failed (the test's log inside a
# test, so that `test_cmp a b >x` still shows its diff)
exec 7>&2

# ---- running tests ---------------------------------------------------------------
test_count_=0
test_failed_=0
test_log_=$TEST_TMP/log

trap 'test_status_=$?; echo "Bail out! $test_name_: exited with status $test_status_ before test_done (an exit in a test body?)"; exit 1' EXIT

# test_comment_ <file>: show a file as TAP comment lines
test_comment_() {
	sed 's/^/# /' "$1"
}

# test_eval_ <commands>: a function of its own, so that a `return 1` in a test
# body ends the body with that status instead of returning from test_run_
test_eval_() {
	eval "$1"
}

# test_run_ <commands>: eval them in the trash directory, output to $test_log_;
# sets test_status_
test_run_() {
	cd "$TRASH_DIRECTORY" || exit 1
	: >"$test_log_"
	test_eval_ "$1" </dev/null >>"$test_log_" 2>&1 7>>"$test_log_"
	test_status_=$?
	cd "$TRASH_DIRECTORY" || exit 1
}

# test_report_ <ok> <desc> <commands> [<why>]
test_report_() {
	test_count_=$((test_count_ + 1))
	if test "$1" = t; then
		echo "ok $test_count_ - $2"
		test -z "$test_verbose_" || test_comment_ "$test_log_"
	else
		test_failed_=$((test_failed_ + 1))
		echo "not ok $test_count_ - $2"
		{
			test -z "${4:-}" || printf '%s\n' "$4"
			printf 'commands:\n%s\noutput:\n' "$3"
			cat "$test_log_"
		} | sed 's/^/# /'
	fi
}

# test_expect_success <desc> <commands>: the commands must exit 0
test_expect_success() {
	test "$#" = 2 || { echo "Bail out! test_expect_success takes 2 arguments, not $#"; exit 1; }
	test_run_ "$2"
	if test "$test_status_" = 0; then
		test_report_ t "$1" "$2"
	else
		test_report_ f "$1" "$2" "exit status $test_status_"
	fi
}

# test_expect_code <code> <desc> <commands>: the commands must exit with <code>
test_expect_code() {
	test "$#" = 3 || { echo "Bail out! test_expect_code takes 3 arguments, not $#"; exit 1; }
	test_run_ "$3"
	if test "$test_status_" = "$1"; then
		test_report_ t "$2" "$3"
	else
		test_report_ f "$2" "$3" "exit status $test_status_, expected $1"
	fi
}

# write_lines <path> <line>...: a file of a test's fixture under repo/, one
# argument a line (its directories made)
write_lines() {
	write_lines_path_=repo/$1 &&
	shift &&
	mkdir -p "$(dirname "$write_lines_path_")" &&
	printf "%s\n" "$@" >"$write_lines_path_"
}

# test_skip <desc> <why>: a test that cannot run here (prefer tests that always run)
test_skip() {
	test_count_=$((test_count_ + 1))
	echo "ok $test_count_ - $1 # SKIP $2"
}

# need_torch <desc>: skip the rest of the script where Debian's python3-torch
# (and numpy) cannot be imported by /usr/bin/python3 (scripts/train-embed's needs)
need_torch() {
	if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
		test_skip "$1" 'no python3-torch (Debian) here'
		test_done
	fi
}

# test_done: print the plan; exit 0 when every test passed (removing the trash)
test_done() {
	trap - EXIT
	echo "1..$test_count_"
	if test "$test_failed_" != 0; then
		echo "# failed $test_failed_ of $test_count_ test(s); kept $TRASH_DIRECTORY"
		exit 1
	fi
	cd "$CI_BUILD_DIR" || exit 1
	if test -z "$test_debug_"; then
		chmod -R u+rwx "$TRASH_DIRECTORY" "$TEST_TMP" 2>/dev/null
		rm -rf "$TRASH_DIRECTORY" "$TEST_TMP"
	fi
	exit 0
}

# ---- helpers for test bodies (they explain a failure on fd 7) --------------------

# test_cmp <expected> <actual>: the files are identical (the diff shows if not)
test_cmp() {
	diff -u "$1" "$2" >&7 2>&1
}

# test_cmp_json <expected> <actual>: the same JSON values, line by line, whatever
# the key order and spacing
test_cmp_json() {
	"$JQ" -cS . <"$1" >"$TEST_TMP/cmp_json.expect" 2>&7 ||
		{ echo "test_cmp_json: '$1' is not JSON" >&7; return 1; }
	"$JQ" -cS . <"$2" >"$TEST_TMP/cmp_json.actual" 2>&7 ||
		{ echo "test_cmp_json: '$2' is not JSON" >&7; return 1; }
	diff -u "$TEST_TMP/cmp_json.expect" "$TEST_TMP/cmp_json.actual" >&7 2>&1
}

# test_grep [<grep option>...] <pattern> <file>: like grep, but shows the file
# when nothing matched
test_grep() {
	if grep "$@" >/dev/null; then
		return 0
	fi
	eval "test_file_=\${$#}"
	echo "test_grep: no line of '$test_file_' matches: $*" >&7
	sed 's/^/| /' "$test_file_" >&7
	return 1
}

# test_must_be_empty <file>
test_must_be_empty() {
	if test -s "$1"; then
		echo "'$1' is not empty:" >&7
		cat "$1" >&7
		return 1
	fi
	test -f "$1" || { echo "'$1' does not exist" >&7; return 1; }
}

# test_line_count <op> <n> <file>: e.g. test_line_count = 3 out
test_line_count() {
	test_lines_=$(wc -l <"$3")
	if ! test "$test_lines_" "$1" "$2"; then
		echo "'$3' has $test_lines_ lines, expected $1 $2:" >&7
		cat "$3" >&7
		return 1
	fi
}

# test_must_fail <command>...: the command fails, but cleanly (no signal, no
# sanitizer abort)
test_must_fail() {
	"$@"
	test_exit_=$?
	if test "$test_exit_" = 0; then
		echo "test_must_fail: '$*' succeeded" >&7
		return 1
	elif test "$test_exit_" -gt 128; then
		echo "test_must_fail: '$*' died of signal $((test_exit_ - 128))" >&7
		return 1
	fi
	return 0
}

# test_status <code> <command>...: the command exits with <code>
test_status() {
	test_want_=$1
	shift
	"$@"
	test_exit_=$?
	if test "$test_exit_" != "$test_want_"; then
		echo "test_status: '$*' exited with $test_exit_, expected $test_want_" >&7
		return 1
	fi
}

# test_mcp_errors <profile> <cases>: each line of <cases> (tool, arguments as
# JSON, message; tab-separated), called on ci-mcp --profile <profile>, is a tool
# error with that message
test_mcp_errors() {
	awk -F "\t" "{ printf \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":%d,\\\"method\\\":\\\"tools/call\\\",\\\"params\\\":{\\\"name\\\":\\\"%s\\\",\\\"arguments\\\":%s}}\\n\", NR, \$1, \$2 }" "$2" |
	ci-mcp --profile "$1" >"$TRASH_DIRECTORY/out" &&
	jq -s -r "sort_by(.id)[] | .result | \"\\(.isError) \\(.content[0].text)\"" "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/actual" &&
	cut -f 3 "$2" | sed "s/^/true /" >"$TRASH_DIRECTORY/expect" &&
	test_cmp "$TRASH_DIRECTORY/expect" "$TRASH_DIRECTORY/actual"
}

# test_have_lang <lang>: the grammar of <lang> is compiled in
test_have_lang() {
	case " $CI_HAVE_LANGS " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# test_have_prog <program>: the program is installed
# need_model <what>: CI_MODEL set (and exported) to the USE-lite model, by default
# the one scripts/setup fetched into the build tree, and $model to its directory;
# without one, every test of the file is skipped as <what>, saying why.
need_model() {
	model=${CI_MODEL:-$CI_SRC_DIR/deps/model/use-lite}
	if ! test -f "$model/model.json"; then
		test_skip "$1" "no model in $model (scripts/setup fetches it)"
		test_done
	fi
	CI_MODEL=$model
	export CI_MODEL
}

# ci_commands: the programs of bin_PROGRAMS and bin_SCRIPTS in Makefile.am, a line each
# (continuation lines, += and $(NULL) understood)
ci_commands() {
	awk '
	/^bin_(PROGRAMS|SCRIPTS)[ \t]*\+?=/ { on = 1; sub(/^[^=]*=/, "") }
	on {
		cont = sub(/\\[ \t]*$/, "")
		gsub(/\$\(NULL\)/, "")
		n = split($0, w, /[ \t]+/)
		for (i = 1; i <= n; i++) if (w[i] != "") print w[i]
		if (!cont) on = 0
	}' "$CI_SRC_DIR/Makefile.am"
}

# http_url <err file>: wait (30 s at most) for `ci-mcp --http` started with its
# stderr in that file to say where it serves, and print that URL; fails if it
# never does
http_url() {
	http_url_i_=0
	while ! grep -q "serving http" "$1" 2>/dev/null && test $http_url_i_ -lt 300; do
		sleep 0.1; http_url_i_=$((http_url_i_ + 1))
	done
	http_url_=$(sed -n "s/^ci-mcp: serving //p" "$1")
	test -n "$http_url_" && echo "$http_url_"
}

test_have_prog() {
	command -v "$1" >/dev/null 2>&1
}

# three_functions_repo: a git repository "repo" of three functions on three
# subjects (src/config.py: load_settings, src/net.py: send_request,
# src/matrix.c: matrix_multiply), committed: what the ci-code tests embed
three_functions_repo() {
	git init -q repo &&
	mkdir repo/src &&
	cat >repo/src/config.py <<-\EOF &&
	def load_settings(path):
	    sections = {}
	    current = None
	    with open(path) as f:
	        for line in f:
	            line = line.strip()
	            if line.startswith("["):
	                current = line.strip("[]")
	                sections[current] = {}
	            elif "=" in line and current:
	                key, value = line.split("=", 1)
	                sections[current][key.strip()] = value.strip()
	    return sections
	EOF
	cat >repo/src/net.py <<-\EOF &&
	def send_request(url, payload, retries=3):
	    for attempt in range(retries):
	        response = http_post(url, json=payload, timeout=10)
	        if response.status == 200:
	            return response.json()
	        time.sleep(2 ** attempt)
	    raise ConnectionError(url)
	EOF
	cat >repo/src/matrix.c <<-\EOF &&
	void matrix_multiply(const double *a, const double *b, double *out, int n)
	{
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				double s = 0;
				for (int k = 0; k < n; k++)
					s += a[i * n + k] * b[k * n + j];
				out[i * n + j] = s;
			}
	}
	EOF
	(cd repo && git add . && git commit -q -m "three functions")
}

# ts_call_chain_files: in "repo" (already a git repository), TypeScript files
# whose chain main -> string() -> create -> Schema.validate -> u.check goes
# through a re-export under another name, a typed receiver, new Schema() and
# a namespace import; src/util.ts's spare() is called by nothing.  Not
# committed (t0951, t0952).
ts_call_chain_files() {
	write_lines src/util.ts "export function check(v: number) {" "	return v > 0" "}" \
		"export function spare() {" "	return 0" "}" &&
	write_lines src/schema.ts "import * as u from \"./util\"" "export class Schema {" "	validate(v: number) {" \
		"		return u.check(v)" "	}" "}" &&
	write_lines src/string.ts "import { Schema } from \"./schema\"" "export default function create(v: number) {" \
		"	const s: Schema = new Schema()" "	return s.validate(v)" "}" &&
	write_lines src/index.ts "export { default as string } from \"./string\"" &&
	write_lines app.ts "import { string } from \"./src/index\"" "export function main() {" "	return string(1)" "}"
}
