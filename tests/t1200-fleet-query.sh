#!/bin/sh
# t1200-fleet-query: one query over many shards (libcommon/fleet): ci-grep,
# ci-rank and ci-refs with --shards <directory or manifest> run on every shard,
# name each record's repository and merge: grep and refs by repository, then as
# each shard answered; rank by ci-rank's per-shard normalised score.  Each
# shard's answer is the one its own index gives.  Failures of one shard are
# fleet_error records and exit 3 (ci-grep: 2, as its other errors); a usage error is said once.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'fleet queries' 'the c and python grammars are not compiled in'
	test_done
fi

test_expect_success 'setup: three repositories, an index each, in a directory' '
	make_fleet_repos repos 3 &&
	mkdir set &&
	for r in r01 r02 r03; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done &&
	: >set/.r04.db.tmp.123
'

test_expect_success 'ci-grep --shards: each repository in order, each answer its own index'"'"'s' '
	ci-grep --shards set shared_marker >out &&
	for r in r01 r02 r03; do
		(cd repos/$r && ci-grep shared_marker) | jq -c --arg r $r "{_type} + {repo: \$r} + ." || return 1
	done >expect &&
	echo "{\"_type\":\"fleet\",\"command\":\"grep\",\"shards\":3,\"answered\":3,\"failed\":0,\"merge\":\"repository\"}" >>expect &&
	test_cmp expect out &&
	test_line_count = 7 out
'

test_expect_success 'the repository is the second key of every record' '
	ci-grep --shards set shared_marker | grep -v "\"_type\":\"fleet\"" | cut -d, -f2 | sort -u >actual &&
	printf "\"repo\":\"r01\"\n\"repo\":\"r02\"\n\"repo\":\"r03\"\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'a manifest (TSV and NDJSON) is the same shard set' '
	printf "# shards\nr01\tset/r01.db\n\n" >m.tsv &&
	printf "{\"name\":\"r02\",\"index\":\"set/r02.db\"}\n" >>m.tsv &&
	printf "r03\t%s\n" "$PWD/set/r03.db" >>m.tsv &&
	ci-grep --shards set shared_marker >expect &&
	ci-grep --shards m.tsv shared_marker >actual &&
	test_cmp expect actual &&
	CI_SHARDS=m.tsv ci-grep shared_marker >actual &&
	test_cmp expect actual
'

test_expect_success '--shards-repo and CI_SHARDS_REPO keep only the repositories named' '
	ci-grep --shards set --shards-repo r03,r01 shared_marker | jq -r "select(._type == \"match\") | .repo" | uniq >actual &&
	printf "r01\nr03\n" >expect &&
	test_cmp expect actual &&
	CI_SHARDS_REPO=r02 ci-grep --shards set shared_marker | jq -r "select(._type == \"match\") | .repo" | uniq >actual &&
	echo r02 >expect &&
	test_cmp expect actual &&
	test_status 2 ci-grep --shards set --shards-repo r09 shared_marker 2>err &&
	test_grep "no repository .r09. in the shard set" err
'

test_expect_success 'ci-rank --shards: hits of all shards by score, at most --limit, each the shard'"'"'s own' '
	ci-rank --shards set --limit 2 "parse the text" >out &&
	jq -c "select(._type == \"hit\")" out >hits &&
	test_line_count = 2 hits &&
	jq -s -c "map(.score)" hits >actual &&
	jq -s -c "map(.score) | sort | reverse" hits >expect &&
	test_cmp expect actual &&
	for r in r01 r02 r03; do
		ci-rank --index set/$r.db --limit 2 "parse the text" | jq -c --arg r $r "select(._type == \"hit\") | {_type} + {repo: \$r} + ." || return 1
	done >all &&
	jq -s -c "sort_by(-.score, .repo, .path, .start_line) | .[:2][]" all >expect &&
	test_cmp expect hits &&
	tail -1 out | jq -e "._type == \"fleet\" and .merge == \"score\" and .hits == 2" >/dev/null
'

test_expect_success 'ci-refs --shards: definitions across repositories' '
	ci-refs --shards set defs util_r02 >out &&
	jq -r "select(._type != \"fleet\") | \"\\(.repo) \\(.path) \\(.line)\"" out >actual &&
	printf "r02 src/main.c 4\nr02 src/util.h 3\n" >expect &&
	test_cmp expect actual &&
	ci-refs --shards set defs run | jq -r "select(._type != \"fleet\") | .repo" >actual &&
	printf "r01\nr02\nr03\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'nothing found anywhere: exit 1 and the fleet record' '
	test_status 1 ci-grep --shards set zzz_nowhere >out &&
	jq -r ._type out >actual &&
	echo fleet >expect &&
	test_cmp expect actual
'

test_expect_success 'a shard that fails: a fleet_error record, the others answer, exit 3' '
	cp m.tsv bad.tsv &&
	printf "r09\tset/missing.db\n" >>bad.tsv &&
	printf "r10\tm.tsv\n" >>bad.tsv &&
	test_status 3 ci-refs --shards bad.tsv defs run >out 2>err &&
	jq -r "select(._type == \"occurrence\") | .repo" out >actual &&
	printf "r01\nr02\nr03\n" >expect &&
	test_cmp expect actual &&
	jq -r "select(._type == \"fleet_error\") | \"\\(.repo) \\(.exit)\"" out >actual &&
	printf "r09 3\nr10 3\n" >expect &&
	test_cmp expect actual &&
	test_grep "shard .r09." err &&
	tail -1 out | jq -e ".failed == 2 and .answered == 3" >/dev/null
'

test_expect_success 'a usage error is said once, exit 2' '
	test_status 2 ci-grep --shards set --bogus x >out 2>err &&
	test_must_be_empty out &&
	test "$(grep -c "unknown option" err)" = 1 &&
	test_status 2 ci-rank --shards set --index set/r01.db q 2>err &&
	test_grep "cannot be used together" err
'

test_expect_success 'bad shard sets: a message, exit 2 (the error status of ci-grep)' '
	test_status 2 ci-grep --shards nowhere x 2>err &&
	test_grep "cannot read shard set .nowhere." err &&
	mkdir empty &&
	test_status 2 ci-grep --shards empty x 2>err &&
	test_grep "has no shards" err &&
	printf "r01 set/r01.db\n" >m1 &&
	test_status 2 ci-grep --shards m1 x 2>err &&
	test_grep "m1:1: expected <name><TAB><index>" err &&
	printf "a\tx.db\na\ty.db\n" >m2 &&
	test_status 2 ci-grep --shards m2 x 2>err &&
	test_grep "names repository .a. twice" err &&
	printf "{\"name\":\"a\"}\n" >m3 &&
	test_status 2 ci-grep --shards m3 x 2>err &&
	test_grep "m3:1: expected" err
'

test_expect_success 'a shard published while queries run: each sees a whole index' '
	(cd repos/r01 && ci-index --index ../../r01.new --no-progress build . &&
	 sqlite3 ../../r01.new "PRAGMA journal_mode=DELETE" >/dev/null) &&
	i=0 && while test $i -lt 5; do
		cp r01.new set/.r01.db.tmp && mv -f set/.r01.db.tmp set/r01.db &
		ci-grep --shards set --shards-repo r01 shared_marker >q.$i || return 1
		wait
		jq -r ._type q.$i | sort | uniq -c | sed "s/^ *//" >actual &&
		printf "1 fleet\n2 match\n" >expect &&
		test_cmp expect actual || return 1
		i=$((i + 1))
	done
'

test_done
