#!/bin/sh
# t0773-rank-semantic-idf: ci-rank --semantic-idf and --semantic-title, the
# query's words pooled by ci-code (a static model) with weights: each word's
# idf in the index to a power, the title's (first line's) words a number of
# times (and --semantic-path, t0780's, refused when bad and ignored by keyword
# mode as they are). On six functions that share the words data, value, item
# and result, one of which computes a checksum: with every word alike the
# decoys score near the checksum function (the shared words are most of the
# query's vector: the first two within 0.8 of each other, a decoy first since
# the words of a chunk's name, update and value in theirs, count three times
# in its vector); weighted by idf, the words every chunk holds count for
# little and the checksum function stands alone (the next below 0.35 of it);
# with "checksum" alone on the first line, a title weight of 3 does much the
# same (below 0.6). Keyword mode is untouched, the defaults are as documented
# (the title 3 times in semantic mode, once in hybrid mode, whose learned
# fusion was fitted so; hybrid with the hand-set fusion here, since the
# learned one leaves the semantic signal out when its members read none),
# and bad values are refused.

. "$(dirname "$0")/lib.sh"

unset CI_MODEL

test_expect_success 'setup: six functions, an index with ci-code vectors' '
	git init -q repo &&
	mkdir repo/src &&
	for t in cache queue table buffer stream; do
		printf "%s\n" "def update_${t}_value(data, item, result):" \
			"    \"\"\"Update the value of the $t with the data of an item and return the result.\"\"\"" \
			"    value = data.get(item)" "    result = ${t}_store(value)" "    return result" \
			>repo/src/$t.py || return 1
	done &&
	cat >repo/src/crc.py <<-\EOF &&
	def crc32_checksum(data, item, result):
	    """Compute the checksum of the data of an item and return the result value."""
	    value = zlib.crc32(data[item])
	    return value
	EOF
	(cd repo && git add . && git commit -q -m six && ci-index --embed --model ci-code build)
'

q="update data value item result checksum"

# the semantic values of the first three files: path<TAB>value lines (the
# chunks' cosines alone: the file paths' share, --semantic-path, is t0780's)
sem() {
	(cd repo && ci-rank --no-server --mode semantic --semantic-path 0 --limit 3 "$@" "$q") >hits &&
	"$JQ" -r "select(._type == \"hit\") | [.path, .signals.semantic] | @tsv" hits
}

test_expect_success 'words alike: the decoys score near the checksum function' '
	sem --semantic-idf 0 >all &&
	test $(wc -l <all) = 3 &&
	grep "^src/crc.py	" all &&
	awk -F "\t" "NR == 1 { top = \$2 } NR == 2 { exit !(\$2 > 0.8 * top) }" all
'

test_expect_success 'weighted by idf: the checksum function stands alone' '
	for p in 1 2; do
		sem --semantic-idf $p >idf$p &&
		test "$(head -1 idf$p | cut -f1)" = src/crc.py &&
		awk -F "\t" "NR == 1 { top = \$2 } NR == 2 { exit !(\$2 < 0.35 * top) }" idf$p || return 1
	done
'

test_expect_success 'the title (first line) weighted: its words lead the vector' '
	q0=$q &&
	q="checksum
update data value item result" &&
	sem --semantic-title 1 >t1 &&
	awk -F "\t" "NR == 1 { top = \$2 } NR == 2 { exit !(\$2 > 0.8 * top) }" t1 &&
	sem --semantic-title 3 >t3 &&
	test "$(head -1 t3 | cut -f1)" = src/crc.py &&
	awk -F "\t" "NR == 1 { top = \$2 } NR == 2 { exit !(\$2 < 0.6 * top) }" t3 &&
	sem --semantic-title 0 >t0 &&
	! cmp -s t1 t0 &&
	q=$q0
'

test_expect_success 'the defaults: --semantic-idf 0, --semantic-title 3 (semantic) or 1 (hybrid); keyword reads neither' '
	q0=$q &&
	q="checksum
update data value item result" &&
	sem >default &&
	sem --semantic-idf 0 --semantic-title 3 >explicit &&
	test_cmp explicit default &&
	sem --semantic-title 1 >one &&
	! cmp -s one default &&
	hyb() {
		(cd repo && ci-rank --no-server --mode hybrid --fusion rrf --limit 6 "$@" "$q") >h &&
		"$JQ" -r "select(._type == \"hit\") | [.path, .signals.semantic] | @tsv" h
	} &&
	hyb >hdefault &&
	hyb --semantic-title 1 >hone &&
	test_cmp hone hdefault &&
	hyb --semantic-title 3 >hthree &&
	! cmp -s hone hthree &&
	q=$q0 &&
	(cd repo && ci-rank --no-server --mode keyword "$q") >k0 &&
	(cd repo && ci-rank --no-server --mode keyword --semantic-idf 2 --semantic-title 5 --semantic-path 3 "$q") >k2 &&
	"$JQ" -c "select(._type == \"hit\") | [.path, .score]" k0 >k0.hits &&
	"$JQ" -c "select(._type == \"hit\") | [.path, .score]" k2 >k2.hits &&
	test -s k0.hits &&
	test_cmp k0.hits k2.hits
'

test_expect_success 'bad values of --semantic-idf, --semantic-title and --semantic-path are refused' '
	for v in -1 4.5 abc ""; do
		(cd repo && test_must_fail ci-rank --no-server --mode semantic --semantic-idf "$v" "$q") 2>err &&
		test_grep "semantic-idf" err || return 1
	done &&
	for v in -1 21 x; do
		(cd repo && test_must_fail ci-rank --no-server --mode semantic --semantic-title "$v" "$q") 2>err &&
		test_grep "semantic-title" err || return 1
	done &&
	for v in -1 4.5 abc ""; do
		(cd repo && test_must_fail ci-rank --no-server --mode semantic --semantic-path "$v" "$q") 2>err &&
		test_grep "semantic-path" err || return 1
	done
'

test_done
