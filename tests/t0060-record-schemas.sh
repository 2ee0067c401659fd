#!/bin/sh
# t0060-record-schemas: every record every command writes is valid against the
# JSON Schema of its _type in share/schema/ (tests/validate-records.py).
#
# A fixture repository with a git history (tests/couple-lib.sh), a Python
# package whose tests use two testing libraries (a patterns conflict), an
# include cycle, a manifest, issues, an archive and a style guide
# is indexed with its history (and vectors, when there is a model); then each
# record-writing mode of ci-chunk, ci-embed, ci-index, ci-grep, ci-rank,
# ci-refs, ci-couple and ci's subcommands with --json runs on it, and each line
# of its output is validated.  A record whose _type has no schema fails, so a
# new record type needs one (and a section in ci-ndjson(5), also checked);
# every schema but those named in $unseen must have been met.  The validator
# itself is shown to fail on bad records.  ci-mcp speaks JSON-RPC, not records:
# it is not here.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/couple-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'record schemas' 'the c and python grammars are not compiled in'
	test_done
fi
python=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import jsonschema' 2>/dev/null; then
		python=$p
		break
	fi
done
if test -z "$python"; then
	test_skip 'record schemas' 'no python3 with jsonschema (Debian: python3-jsonschema)'
	test_done
fi

schemas=$CI_SRC_DIR/share/schema

# validate <label> <file>: the records of <file> are valid (failures shown)
validate() {
	"$python" "$CI_SRC_DIR/tests/validate-records.py" --name "$1" "$schemas" <"$2" >&7
}

# the schemas no command of this test writes (import_edge: two repositories
# of a shard set, one importing the other's package; t1257 validates them)
unseen=import_edge
model=${CI_MODEL:-$CI_SRC_DIR/deps/model/use-lite}
if test -f "$model/model.json"; then
	CI_MODEL=$model
	export CI_MODEL
	embed=--embed
else
	embed=
	# without vectors: no query vectors, no similar search, no clusters
	unseen="$unseen query cluster"
fi

test_expect_success 'setup: a repository with history, its index' '
	make_couple_repo repo && cd repo &&
	mkdir -p py .beads .bobbin arch log &&
	printf "from py.b import fb\n\n\ndef fa():\n    return fb()\n" >py/a.py &&
	printf "from py.a import fa\n\n\ndef fb():\n    return fa()\n" >py/b.py &&
	: >py/__init__.py &&
	printf "import pytest\n\n\ndef test_fa():\n    assert True\n" >py/test_a.py &&
	printf "import unittest\n\n\nclass TestB(unittest.TestCase):\n    pass\n" >py/test_b.py &&
	printf "#include \"y.h\"\n" >src/x.h &&
	printf "#include \"x.h\"\n" >src/y.h &&
	printf "requests==2.31.0\nflask>=2\n" >requirements.txt &&
	printf "%s\n" "{\"id\":\"bd-1\",\"title\":\"Parser crashes on empty input\",\"description\":\"parse() with an empty string\",\"status\":\"open\",\"priority\":1,\"assignee\":\"alice\"}" >.beads/issues.jsonl &&
	printf "[archive]\nenabled = true\n[[archive.sources]]\nname = \"mem\"\npath = \"arch\"\nschema = \"agent-memory\"\nname_field = \"agent\"\n[[archive.sources]]\nname = \"chat\"\npath = \"log\"\n" >.bobbin/config.toml &&
	printf -- "---\nschema: agent-memory\nid: m-1\ntimestamp: 2023-11-20T10:00:00Z\nagent: ann\n---\n\nThe parser keeps the first colon only.\n" >arch/m-1.md &&
	printf "%s\n" "{\"id\":7,\"date\":\"2023-11-21\",\"text\":\"the parser fix went out\"}" >log/chat.jsonl &&
	printf "# Style\n\n## Naming\n\n- Use snake_case for functions.\n- Indent with tabs.\n" >STYLE.md &&
	git add . && couple_commit 11 Alice "py: a cycle, x.h and y.h, the docs" &&
	ci-index $embed --history build 2>../build.err &&
	ci memory add --type convention --category testing --memory "tests use assert" --reason "parser tests" >/dev/null
'

# The record-writing modes: a label, then the command line (run by sh in repo/).
cat >cases <<\EOF
chunk	ci-chunk
chunk-parts	ci-chunk --chunks --symbols --refs --imports --no-files src py
index-status	ci-index status
grep	ci-grep parse
grep-context	ci-grep -C 1 parse_number
grep-scan	ci-grep --no-index -B 2 -A 1 lex
grep-count	ci-grep -c parse
grep-files	ci-grep -l parse
rank	ci-rank "parse a number"
rank-explain	ci-rank --explain --format full "parse a number"
rank-keyword	ci-rank --mode keyword parse_string
rank-none	ci-rank --mode keyword zzyzx_nothing; test $? = 1
rank-context	ci-rank context "parse a number"
refs-defs	ci-refs defs parse
refs-refs	ci-refs refs parse
refs-occurrences	ci-refs occurrences parse
refs-symbols	ci-refs symbols src/parser.c
refs-search	ci-refs search pars
refs-deps	ci-refs deps --both src/parse.h
refs-cycles	ci-refs cycles
refs-impact	ci-refs impact src/parse.h
refs-impact-symbol	ci-refs impact src/parser.c:parse
refs-trace	ci-refs trace fa fb
refs-callers-deep	ci-refs --depth 2 callers fb
refs-dead	ci-refs dead
refs-arch	ci-refs arch
refs-unsupported	ci-refs --lang markdown defs x; test $? = 1
couple-history	ci-couple history
couple-coupling	ci-couple coupling
couple-related	ci-couple coupling src/parser.c
couple-hotspots	ci-couple hotspots
couple-file-history	ci-couple file-history src/parser.c
couple-commits	ci-couple commits lexer
couple-review	ci-couple review --diff commit:HEAD~3..HEAD
ci-search	ci search --json --query "parse a number"
ci-search-edit	ci search --json --query "parse a number" --intent edit
ci-search-memory	ci search --json --snippets "parser tests"
ci-metadata	ci metadata --json
ci-status	ci status --json
ci-refs	ci refs --json --symbol parse
ci-cycles	ci cycles --json
ci-bundle	ci bundle --json --query "parse a number"
ci-feedback-submit	ci feedback submit --json --injection-id 1 --rating useful --reason ok
ci-feedback-list	ci feedback list --json
ci-feedback-stats	ci feedback stats --json
ci-lineage-store	ci feedback lineage store --json --feedback-ids 1 --action-type code_fix --description done
ci-lineage-list	ci feedback lineage list --json
ci-beads	ci beads search --json --query "empty input crash"
ci-archive-search	ci archive search --json --query parser
ci-archive-recent	ci archive recent --json --after 2020-01-01
ci-grep-chunks	ci grep-chunks --json --pattern parse_number
ci-style-guide	ci style-guide --json --query tabs
ci-context	ci context --json
ci-patterns	ci patterns --json
ci-reindex	ci reindex --json --incremental
fleet-grep	ci-grep --shards .ci-index parse
fleet-rank	ci-rank --shards .ci-index "parse a number"
fleet-refs	printf "a\t%s\nb\tnone.db\n" "$PWD/.ci-index/index.db" >../shards.tsv && ci-refs --shards ../shards.tsv defs parse; test $? = 3
fleet-job	printf "me\t%s\nbad\t%s\tno-such-rev\n" "$PWD" "$PWD" >../fleet.tsv && ci fleet --engine local --out ../fleet-out ../fleet.tsv; test $? = 3
EOF
if test -n "$embed"; then
	cat >>cases <<\EOF
embed-chunks	ci-chunk --chunks --no-files src/parser.c | ci-embed
embed-commits	ci-couple history | ci-embed
embed-query	ci-embed --query "parse numbers"
rank-similar	ci-rank similar src/parser.c:parse_number
rank-similar-text	ci-rank similar "count the blanks"
rank-scan	ci-rank similar --scan --threshold 0.5
EOF
fi

test_expect_success 'every record-writing mode runs and writes records' '
	mkdir out && cd repo &&
	failed= &&
	while IFS="	" read -r label cmd; do
		sh -c "$cmd" >../out/$label 2>../out/$label.err </dev/null ||
			{ failed="$failed $label"; echo "$label: exit $?: $cmd" >&7; sed "s/^/| /" ../out/$label.err >&7; }
		test -s ../out/$label || { failed="$failed $label"; echo "$label: no records: $cmd" >&7; }
	done <../cases &&
	test -z "$failed"
'

test_expect_success 'every record is valid against the schema of its _type' '
	failed= &&
	while IFS="	" read -r label cmd; do
		validate "$label" out/$label || failed="$failed $label"
	done <cases &&
	test -z "$failed"
'

test_expect_success 'every schema is met, but those no mode here writes' '
	while IFS="	" read -r label cmd; do cat out/$label; done <cases >all &&
	"$JQ" -r "._type" all | sort -u >seen &&
	for s in $unseen; do echo $s; done >>seen &&
	sort -u seen >seen.sorted &&
	(cd "$schemas" && ls *.json) | sed "s/\.json\$//" | sort >expect &&
	test_cmp expect seen.sorted
'

test_expect_success 'each schema names its own _type and is documented and installed' '
	for f in "$schemas"/*.json; do
		t=$(basename "$f" .json) &&
		"$JQ" -e --arg t "$t" ".properties._type.const == \$t and (.required | index(\"_type\")) != null and .additionalProperties != null" "$f" >/dev/null ||
			{ echo "$f: _type is not const \"$t\" or required, or additionalProperties is unsaid" >&7; return 1; }
		grep -q "^\.SS $t\$" "$CI_SRC_DIR/man/ci-ndjson.5" ||
			{ echo "ci-ndjson(5) has no section $t" >&7; return 1; }
		grep -q "share/schema/$t\.json" "$CI_SRC_DIR/Makefile.am" ||
			{ echo "Makefile.am does not install share/schema/$t.json" >&7; return 1; }
	done
'

test_expect_success 'the examples of ci-ndjson(5) are valid records, one of each type' '
	"$python" "$CI_SRC_DIR/tests/validate-records.py" --man --name man/ci-ndjson.5 "$schemas" \
		<"$CI_SRC_DIR/man/ci-ndjson.5" >&7 &&
	sed -n "s/^{\"_type\":\"\([a-z_]*\)\".*/\1/p" "$CI_SRC_DIR/man/ci-ndjson.5" | sort >types &&
	(cd "$schemas" && ls *.json) | sed "s/\.json\$//" | sort >expect &&
	test_cmp expect types
'

test_expect_success 'the records in the examples of every man page are valid' '
	for page in "$CI_SRC_DIR"/man/*.[1-9]; do
		"$python" "$CI_SRC_DIR/tests/validate-records.py" --man --name "man/${page##*/}" "$schemas" \
			<"$page" >&7 || return 1
	done
'

test_expect_success 'the validator fails on bad records, naming the line' '
	cat >bad <<-\EOF &&
	{"_type":"match","path":"a.c","line":1,"col":1,"text":"x"}
	{"_type":"match","path":"a.c","line":0,"col":1,"text":"x"}
	{"_type":"match","path":"a.c","col":1,"text":"x"}
	{"_type":"match","path":"a.c","line":1,"col":1,"text":"x","colour":"red"}
	{"_type":"dep","direction":"sideways","path":"a","target":"b","resolved":null,"line":1}
	{"_type":"hit","path":"a.c","start_line":1,"end_line":2,"kind":"function","name":null,"scope":null,"lang":"c","score":"high","signals":{}}
	{"_type":"no_such_type"}
	["not","an","object"]
	{"_type":
	EOF
	test_status 1 "$python" "$CI_SRC_DIR/tests/validate-records.py" --name bad "$schemas" <bad >actual &&
	cat >expect <<-\EOF &&
	bad:2: match: .line: 0 is less than the minimum of 1
	bad:3: match: .: '"'"'line'"'"' is a required property
	bad:4: match: .: Additional properties are not allowed ('"'"'colour'"'"' was unexpected)
	bad:5: dep: .direction: '"'"'sideways'"'"' is not one of ['"'"'imports'"'"', '"'"'imported_by'"'"']
	bad:6: hit: .score: '"'"'high'"'"' is not of type '"'"'number'"'"'
	EOF
	grep -v "^bad:[789]:" actual >actual.schema &&
	test_cmp expect actual.schema &&
	test_grep "^bad:7: no_such_type: no schema .*/no_such_type.json\$" actual &&
	test_grep "^bad:8: not an object with a string \"_type\"\$" actual &&
	test_grep "^bad:9: not JSON: " actual &&
	head -1 bad | "$python" "$CI_SRC_DIR/tests/validate-records.py" "$schemas" >actual &&
	test_must_be_empty actual
'

test_expect_success 'the validator reads the examples of a man page, with its line numbers' '
	cat >page.1 <<-\EOF &&
	.TH X 1
	.SH EXAMPLES
	{"_type":"count","path":"not in an example","count":0}
	.EX
	$ ci\-grep \-c x
	{"_type":"count","path":"a\-b.c",
	 "count":2}
	{"_type":"count","path":"a.c",
	 "count":0}
	.EE
	.nf
	{"_type":"match_file","path":"\(aqa\(aq","extra":1}
	.fi
	EOF
	test_status 1 "$python" "$CI_SRC_DIR/tests/validate-records.py" --man --name page.1 "$schemas" <page.1 >actual &&
	cat >expect <<-\EOF &&
	page.1:8: count: .count: 0 is less than the minimum of 1
	page.1:12: match_file: .: Additional properties are not allowed (QextraQ was unexpected)
	EOF
	tr "\047" Q <actual >actual.q &&
	test_cmp expect actual.q
'

test_expect_code 2 'the validator: a usage error' '
	"$python" "$CI_SRC_DIR/tests/validate-records.py" </dev/null
'

test_done
