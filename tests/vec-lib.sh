# tests/vec-lib.sh: what the tests of stored vectors need, sourced after lib.sh:
# the sqlite3 shell and the USE-lite model (else every test is skipped, saying
# why), CI_MODEL set to it, and a fixed git identity and date.

if ! test_have_prog sqlite3; then
	test_skip "$vec_lib_what" 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi
need_model "$vec_lib_what"

GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.com
GIT_COMMITTER_NAME=Alice GIT_COMMITTER_EMAIL=alice@example.com
GIT_AUTHOR_DATE="@1700000000 +0000" GIT_COMMITTER_DATE="@1700000000 +0000"
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE

# handlers_repo <n>: a git repository "repo" of <n> Python files of ten
# handlers each (h0.py ...) and net.py (close_connection, parse_number),
# committed: what the vector tests embed and ask about
handlers_repo() {
	git init -q repo &&
	f=0 &&
	while test $f -lt "$1"; do
		awk -v f=$f "BEGIN { for (i = 0; i < 10; i++) printf \"def handler_%d_%d(request):\\n    return respond(request, %d, \\\"item %d of queue %d\\\")\\n\\n\\n\", f, i, i * 7 % 13, i, f }" >repo/h$f.py || return 1
		f=$((f + 1))
	done &&
	cat >repo/net.py <<-\EOF &&
	def close_connection(sock):
	    """Close the connection to the server."""
	    sock.shutdown()
	    sock.close()


	def parse_number(text):
	    """Parse the number at the start of the text."""
	    return int(text.split()[0])
	EOF
	(cd repo && git add . && git commit -qm handlers)
}
