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
