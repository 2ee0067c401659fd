#!/bin/sh
# t0511-index-other-tree: an index given by --index or CI_INDEX while the
# current directory is another tree.  update brings the index's own tree up to
# date (as its server does) and status counts what is stale there; when that
# tree is gone, an update for this tree is refused (it would drop every file
# the index holds) and the index is left as it was; a repository moved or
# copied with its own .ci-index is updated where it is now, with a warning.

. "$(dirname "$0")/lib.sh"

# hits <index> <query>: the files of ci-rank's keyword hits
hits() {
	"$CI_BUILD_DIR/ci-rank" --index "$1" --mode keyword "$2" | "$JQ" -r 'select(._type == "hit") | .path' | sort -u
}

test_expect_success 'setup: two trees, the first indexed outside itself' '
	git init -q a && echo "int alpha(void) { return 1; }" >a/a.c &&
	git init -q b && echo "int beta(void) { return 2; }" >b/b.c &&
	(cd a && ci-index --no-progress --index ../a.db build) &&
	hits a.db alpha >got && echo a.c >want && test_cmp want got &&
	sleep 1 && echo "int gamma(void) { return 3; }" >>a/a.c
'

test_expect_success 'status from the other tree counts what is stale in the index'"'"'s own' '
	(cd b && ci-index --index ../a.db status) >st &&
	"$JQ" -c "{root: (.root | sub(\".*/\"; \"\")), files, stale}" st >got &&
	echo "{\"root\":\"a\",\"files\":1,\"stale\":1}" >want && test_cmp want got
'

test_expect_success 'update from the other tree updates the index'"'"'s own tree' '
	(cd b && ci-index --no-progress --index ../a.db update) 2>err &&
	test_must_be_empty err &&
	hits a.db gamma >got && echo a.c >want && test_cmp want got &&
	hits a.db beta >got && test_must_be_empty got &&
	(cd b && ci-index --index ../a.db status) >st && "$JQ" -r .stale st >got &&
	echo 0 >want && test_cmp want got
'

test_expect_success 'so does CI_INDEX' '
	sleep 1 && echo "int delta(void) { return 4; }" >>a/a.c &&
	(cd b && CI_INDEX=$TRASH_DIRECTORY/a.db ci-index --no-progress update) &&
	hits a.db delta >got && echo a.c >want && test_cmp want got
'

test_expect_code 2 'its tree gone: an update for this tree is refused' '
	mv a a-away && (cd b && ci-index --no-progress --index ../a.db update) 2>err'
test_expect_success '... says why, and the index keeps what it held' '
	test_grep "the index .*a.db. is of .*/a., not of .*/b.: run .ci-index --index .*a.db build." err &&
	hits a.db alpha >got && echo a.c >want && test_cmp want got &&
	hits a.db beta >got && test_must_be_empty got &&
	mv a-away a
'

test_expect_success 'a repository moved with its own index is updated where it is' '
	git init -q m && echo "int mu(void) { return 5; }" >m/m.c &&
	(cd m && ci-index --no-progress build) && mv m moved &&
	sleep 1 && echo "int nu(void) { return 6; }" >>moved/m.c &&
	(cd moved && ci-index --no-progress update) 2>err &&
	test_grep "warning: the index was built for .*/m., updating it for .*/moved." err &&
	hits moved/.ci-index/index.db nu >got && echo m.c >want && test_cmp want got &&
	(cd moved && ci-index status) >st && "$JQ" -r ".root | sub(\".*/\"; \"\")" st >got &&
	echo moved >want && test_cmp want got &&
	(cd moved && ci-index --no-progress update) 2>err && test_must_be_empty err
'

test_expect_success 'a repository copied with its own index: the copy'"'"'s is updated for the copy' '
	git init -q orig && echo "int xi(void) { return 7; }" >orig/o.c &&
	(cd orig && ci-index --no-progress build) && cp -a orig copy &&
	sleep 1 && echo "int omicron(void) { return 8; }" >>copy/o.c &&
	(cd copy && ci-index --no-progress update) 2>err &&
	test_grep "warning: the index was built for .*/orig., updating it for .*/copy." err &&
	hits copy/.ci-index/index.db omicron >got && echo o.c >want && test_cmp want got &&
	hits orig/.ci-index/index.db omicron >got && test_must_be_empty got &&
	(cd copy && ci-index status) >st && "$JQ" -c "{root: (.root | sub(\".*/\"; \"\")), stale}" st >got &&
	echo "{\"root\":\"copy\",\"stale\":0}" >want && test_cmp want got
'

test_done
