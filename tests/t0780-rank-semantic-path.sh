#!/bin/sh
# t0780-rank-semantic-path: ci-rank --semantic-path, a chunk ranked by its
# cosine plus a weight times the cosine of its file's path (the path's words
# as ci-code cuts them); the hit's semantic value stays its cosine. Five files
# hold the same function but for its docstring (each its own blob); the one
# whose name says what the query asks (src/checksum.py) holds the docstring
# least like the query: by the chunks' cosines alone (--semantic-path 0) a
# decoy leads; with the path's cosine (the default in semantic mode, 0.6) the
# checksum file does. Hybrid mode, whose learned fusion reads the cosine
# alone, leaves it off unless asked; USE-lite vectors never read it (keyword
# mode and bad values: t0773).

. "$(dirname "$0")/lib.sh"

unset CI_MODEL

test_expect_success 'setup: five files of one function, an index with ci-code vectors' '
	git init -q repo &&
	mkdir repo/src &&
	for t in cache queue table stream; do
		printf "%s\n" "def compute(data, item):" \
			"    \"\"\"Compute the sum of the data of an item of the $t.\"\"\"" \
			"    return sum(data[item])" >repo/src/$t.py || return 1
	done &&
	printf "%s\n" "def compute(data, item):" \
		"    \"\"\"Compute it.\"\"\"" \
		"    return sum(data[item])" >repo/src/checksum.py &&
	(cd repo && git add . && git commit -q -m five && ci-index --embed --model ci-code build)
'

q="the checksum of the data of an item"

# path<TAB>cosine<TAB>the path's cosine (or null) of each hit, best first
sem() {
	(cd repo && ci-rank --no-server --explain --limit 5 "$@" "$q") >hits &&
	"$JQ" -r "select(._type == \"hit\") | [.path, .signals.semantic, (.semantic_path.cosine // \"null\")] | @tsv" hits
}

# (--fusion rrf: the hand-set fusion orders by the signal alone; the learned
# fusion, semantic mode's default, by its model of the signal's features)
test_expect_success '--semantic-path 0: the chunks by their cosine alone, a decoy first' '
	sem --mode semantic --fusion rrf --semantic-path 0 >zero &&
	test $(wc -l <zero) = 5 &&
	test "$(head -1 zero | cut -f1)" != src/checksum.py &&
	awk -F "\t" "NR > 1 && \$2 > prev { exit 1 } { prev = \$2 }" zero &&
	cut -f3 zero | sort -u >paths &&
	echo null >expect &&
	test_cmp expect paths
'

test_expect_success 'semantic mode by default: the file the path names first, the weight said' '
	sem --mode semantic >default &&
	test $(wc -l <default) = 5 &&
	test "$(head -1 default | cut -f1)" = src/checksum.py &&
	"$JQ" -e -s "[.[] | select(._type == \"hit\") | .semantic_path.weight == 0.6] | length == 5 and all" hits >/dev/null &&
	top=$(head -1 default | cut -f3) &&
	tail -n +2 default | awk -F "\t" -v top="$top" "\$3 >= top { exit 1 }" &&
	cut -f1,2 zero | sort >c0 &&
	cut -f1,2 default | sort >c1 &&
	test_cmp c0 c1 &&
	sem --mode semantic --semantic-path 0.6 >explicit &&
	test_cmp default explicit
'

test_expect_success 'hybrid mode (the hand-set fusion: the learned one leaves the signal out): off by default, on when asked' '
	sem --mode hybrid --fusion rrf >h0 &&
	cut -f3 h0 | sort -u >paths &&
	echo null >expect &&
	test_cmp expect paths &&
	sem --mode hybrid --fusion rrf --semantic-path 0 >hzero &&
	test_cmp h0 hzero &&
	sem --mode hybrid --fusion rrf --semantic-path 0.6 >hon &&
	"$JQ" -e -s "[.[] | select(._type == \"hit\") | .semantic_path.weight == 0.6] | length > 0 and all" hits >/dev/null
'

use_lite=$CI_SRC_DIR/deps/model/use-lite
if test -f "$use_lite/model.json"; then
	test_expect_success 'USE-lite vectors (not a static model): the path is not read' '
		git clone -q repo ulite &&
		(cd ulite && CI_MODEL=$use_lite ci-index --no-progress --embed build) &&
		(cd ulite && CI_MODEL=$use_lite ci-rank --no-server --explain --mode semantic "$q") >uhits &&
		"$JQ" -e -s "[.[] | select(._type == \"hit\")] | length > 0 and all(.semantic_path == null)" uhits >/dev/null &&
		(cd ulite && CI_MODEL=$use_lite ci-rank --no-server --explain --mode semantic --semantic-path 2 "$q") >uhits2 &&
		"$JQ" -c "select(._type == \"hit\") | [.path, .score]" uhits >u1 &&
		"$JQ" -c "select(._type == \"hit\") | [.path, .score]" uhits2 >u2 &&
		test_cmp u1 u2
	'
else
	test_skip 'USE-lite vectors: the path is not read' "no USE-lite model in $use_lite (scripts/setup fetches it)"
fi

test_done
