#!/bin/sh
# ci feedback, bundle, beads, archive and grep-chunks, the subcommands behind
# the bobbin profile's feedback, beads, archive, context and grep tools: their
# records, filters, arithmetic and errors (message on stderr, exit 1), feedback
# kept by a rebuild of the index, bad lines of .beads/issues.jsonl and archive
# files left out with a warning, semantic search refused without a model.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'ci feedback tests' 'the python grammar is not compiled in'
	test_done
fi
SOURCE_DATE_EPOCH=1795000000
export SOURCE_DATE_EPOCH
unset GT_ROLE BD_ACTOR

test_expect_success 'setup: a repository with an index' '
	git init -q repo && mkdir -p repo/src repo/.beads repo/arch/2026/03/04 repo/log && (
		cd repo &&
		printf "def parse_header(line):\n    return line.split(\":\", 1)\n\n\ndef parse_body(text):\n    return text.strip()\n" >src/reader.py &&
		printf "from src.reader import parse_header\n\nparse_header(\"a: b\")\n" >src/main.py &&
		git add . && git commit -qm "reader" &&
		ci-index build 2>/dev/null
	)
'

test_expect_success 'feedback: no index is an error' '
	mkdir empty && (cd empty && git init -q && test_status 1 ci feedback stats --json 2>../err) &&
	test_grep "no index" err
'

test_expect_success 'feedback stats of an index without feedback: zeros, coverage null' '
	cd repo && ci feedback stats --json >../out &&
	jq -e ". == {_type: \"feedback_stats\", total_injections: 0, total_feedback: 0, coverage: null, useful: 0,
		noise: 0, harmful: 0, lineage_records: 0, actioned: 0, unactioned: 0}" ../out &&
	ci feedback list --json >../out && test_must_be_empty ../out
'

test_expect_success 'bundle: the context records, then the injection recorded' '
	cd repo && ci bundle --json --query "parse header" --limit 1 --agent me >../out &&
	jq -se "map(._type) == [\"context_chunk\", \"context_summary\", \"injection\"]" ../out &&
	jq -se ".[0].path as \$p | last | ._type == \"injection\" and .injection_id == \"inj-1\" and
		.query == \"parse header\" and .files == [\$p]" ../out &&
	ci bundle --json --query "parse body" >../out &&
	jq -se "last.injection_id == \"inj-2\"" ../out &&
	test_status 2 ci bundle --json 2>../err && test_grep "query is required" ../err
'

test_expect_success 'feedback submit: the record; agent from the environment; the errors' '
	cd repo && ci feedback submit --json --injection-id inj-1 --rating useful --reason "right file" >../out &&
	jq -e ". == {_type: \"feedback\", id: 1, injection_id: \"inj-1\", rating: \"useful\", agent: \"unknown\",
		reason: \"right file\", timestamp: \"2026-11-18T11:06:40Z\"}" ../out &&
	GT_ROLE=crew ci feedback submit --json --injection-id inj-2 --rating noise >../out &&
	jq -e ".agent == \"crew\" and .reason == \"\"" ../out &&
	BD_ACTOR=actor ci feedback submit --json --injection-id inj-9 --rating harmful --agent given >../out &&
	jq -e ".agent == \"given\" and .id == 3" ../out &&
	test_status 2 ci feedback submit --injection-id " " --rating useful 2>../err &&
	test_grep "injection_id required (from \[injection_id: inj-xxx\] in context injection output)" ../err &&
	test_status 2 ci feedback submit --injection-id inj-1 --rating great 2>../err &&
	test_grep "rating must be one of: useful, noise, harmful" ../err &&
	test_status 2 ci feedback submit --injection-id inj-1 --rating noise --reason "$(printf "%01001d" 0)" 2>../err &&
	test_grep "reason too long (max 1000 chars)" ../err
'

test_expect_success 'feedback list: newest first, filters, limit 1-50' '
	cd repo && ci feedback list --json >../out &&
	jq -se "map(.id) == [3, 2, 1]" ../out &&
	ci feedback list --json --rating noise >../out && jq -se "map(.id) == [2]" ../out &&
	ci feedback list --json --agent unknown --limit 1 >../out && jq -se "map(.id) == [1]" ../out &&
	test_status 2 ci feedback list --limit 51 2>../err && test_grep "limit must be a whole number from 1 to 50" ../err
'

test_expect_success 'feedback lineage: store, list, the errors; stats count it' '
	cd repo && ci feedback lineage store --json --feedback-ids 2,3 --action-type exclusion_rule \
		--description "left out" --commit-hash abc123 >../out &&
	jq -e ". == {_type: \"lineage\", id: 1, feedback_ids: [2, 3], action_type: \"exclusion_rule\", bead: null,
		commit_hash: \"abc123\", description: \"left out\", agent: \"unknown\", timestamp: \"2026-11-18T11:06:40Z\"}" ../out &&
	ci feedback lineage list --json --feedback-id 3 >../out && jq -se "map(.id) == [1]" ../out &&
	ci feedback lineage list --json --feedback-id 1 >../out && test_must_be_empty ../out &&
	ci feedback lineage list --json --commit-hash abc123 >../out && jq -se "length == 1" ../out &&
	test_status 2 ci feedback lineage store --feedback-ids "" --action-type code_fix --description d 2>../err &&
	test_grep "feedback_ids must not be empty" ../err &&
	test_status 2 ci feedback lineage store --feedback-ids 1,x --action-type code_fix --description d 2>../err &&
	test_grep "feedback_ids must be record ids" ../err &&
	test_status 1 ci feedback lineage store --feedback-ids 7 --action-type code_fix --description d 2>../err &&
	test_grep "no feedback record 7" ../err &&
	test_status 2 ci feedback lineage store --feedback-ids 1 --action-type rewrite --description d 2>../err &&
	test_grep "action_type must be one of: code_fix, config_change, tag_effect, access_rule, exclusion_rule" ../err &&
	test_status 2 ci feedback lineage store --feedback-ids 1 --action-type code_fix 2>../err &&
	test_grep "description required" ../err &&
	ci feedback stats --json >../out &&
	jq -e ".total_injections == 2 and .total_feedback == 3 and .coverage == 1 and .useful == 1 and .noise == 1 and
		.harmful == 1 and .lineage_records == 1 and .actioned == 2 and .unactioned == 1" ../out &&
	test_status 2 ci feedback 2>../err && test_grep "expected submit, list, stats" ../err
'

test_expect_success 'feedback survives a rebuild of the index' '
	cd repo && ci-index build 2>/dev/null && ci feedback stats --json >../out &&
	jq -e ".total_injections == 2 and .total_feedback == 3 and .lineage_records == 1" ../out
'

test_expect_success 'feedback written while a build runs is kept by it' '
	cd repo && rm -f ../pause ../build.rc || return 1
	(CI_INDEX_PAUSE_BEFORE_INSTALL="$PWD/../pause" ci-index build 2>../build.err; echo $? >../build.rc) &
	i=0 && while ! test -f ../pause && test $i -lt 600; do sleep 0.1; i=$((i + 1)); done &&
	test -f ../pause &&
	ci feedback submit --json --injection-id inj-2 --rating useful --reason "during the build" >/dev/null &&
	ci feedback lineage store --json --feedback-ids 1 --action-type code_fix --description "late fix" >/dev/null &&
	rm ../pause &&
	i=0 && while ! test -s ../build.rc && test $i -lt 600; do sleep 0.1; i=$((i + 1)); done &&
	echo 0 >expect && test_cmp expect ../build.rc && rm expect &&
	ci feedback stats --json >../out &&
	jq -e ".total_injections == 2 and .total_feedback == 4 and .lineage_records == 2" ../out &&
	ci feedback list --json >../out &&
	jq -se "map(select(.reason == \"during the build\")) | length == 1" ../out
'

test_expect_success 'bundle whose output cannot be written: exit 3, no injection recorded' '
	cd repo && ci feedback stats --json >../before &&
	test_status 3 ci bundle --json --query "parse header" >/dev/full 2>../err &&
	test_grep "write error" ../err &&
	(test_status 3 ci bundle --json --query "parse header" 2>../err >&-) &&
	ci feedback stats --json >../after &&
	test_cmp ../before ../after &&
	ci bundle --json --query "parse body" >../out &&
	jq -se "last.injection_id == \"inj-3\"" ../out
'

test_expect_success 'grep-chunks: matches by chunk; regex; a line outside any chunk; errors' '
	cd repo && ci grep-chunks --json --pattern parse_header >../out &&
	jq -se "map([.path, .kind, .name, [.matches[].line]]) ==
		[[\"src/main.py\", \"block\", null, [1]], [\"src/main.py\", \"block\", null, [3]], [\"src/reader.py\", \"function\", \"parse_header\", [1]]]
		or map([.path, .name, [.matches[].line]]) == [[\"src/main.py\", null, [1, 3]], [\"src/reader.py\", \"parse_header\", [1]]]" ../out &&
	ci grep-chunks --json --pattern "def parse_(header|body)" --regex --type function >../out &&
	jq -se "map(.name) == [\"parse_header\", \"parse_body\"] and (map(.score) | max) == 1" ../out &&
	ci grep-chunks --json --pattern PARSE_BODY --ignore-case >../out && jq -se "length == 1" ../out &&
	test_status 1 ci grep-chunks --json --pattern PARSE_BODY 2>../err && test_grep "no match" ../err &&
	test_status 2 ci grep-chunks --json --pattern "(x" --regex 2>../err && test_grep "invalid pattern" ../err
'

test_expect_success 'beads search: ranked, filtered; a bad line left out with a warning; no beads' '
	cd repo &&
	printf "%s\n" "{\"id\":\"b-1\",\"title\":\"Header parser drops values\",\"description\":\"parse_header loses text after a second colon\",\"status\":\"open\",\"priority\":1,\"assignee\":\"Ann\"}" \
		"not json" \
		"{\"id\":\"b-2\",\"title\":\"Faster body reading\",\"description\":\"strip is slow\",\"status\":\"closed\",\"priority\":3}" >.beads/issues.jsonl &&
	ci beads search --json --mode keyword --query "header colon" >../out 2>../err &&
	test_grep "issues.jsonl:2: not an issue record, left out" ../err &&
	jq -se "map(.bead_id) == [\"b-1\"] and .[0] == {_type: \"bead\", bead_id: \"b-1\", title: \"Header parser drops values\",
		priority: \"P1\", status: \"open\", assignee: \"Ann\", relevance_score: 1, snippet: \"parse_header loses text after a second colon\"}" ../out &&
	ci beads search --json --mode keyword --query "body header" --status CLOSED >../out 2>/dev/null &&
	jq -se "map(.bead_id) == [\"b-2\"]" ../out &&
	ci beads search --json --mode keyword --query "header" --assignee ann --priority 1 >../out 2>/dev/null &&
	jq -se "map(.bead_id) == [\"b-1\"]" ../out &&
	test_status 2 ci beads search --json --mode keyword --query "header" --priority 5 2>../err &&
	test_grep "priority must be 1 to 4" ../err &&
	test_status 1 ci beads search --json --mode keyword --query "zebra" 2>../err && test_grep "no bead matches" ../err &&
	(CI_MODEL=/nonexistent && export CI_MODEL && test_status 1 ci beads search --json --mode semantic --query "header" 2>../err) &&
	test_grep "semantic search is not available" ../err &&
	rm .beads/issues.jsonl && test_status 1 ci beads search --json --query x 2>../err &&
	test_grep "no beads in this repository (.beads/issues.jsonl not found)" ../err
'

test_expect_success 'archive: sources from .bobbin/config.toml, Markdown and JSONL, dates, filters, errors' '
	cd repo && test_status 1 ci archive recent --after 2026-01-01 2>../err &&
	test_grep "no archive sources configured" ../err &&
	mkdir -p .bobbin &&
	printf "[archive]\nenabled = true\n[[archive.sources]]\nname = \"mem\"\npath = \"arch\"\nschema = \"agent-memory\"\nname_field = \"agent\"\n[[archive.sources]]\nname = \"chat\"\npath = \"log\"\n" >.bobbin/config.toml &&
	printf -- "---\nschema: agent-memory\nid: m-1\ntimestamp: 2026-03-04T10:00:00Z\nagent: ann\n---\n\nThe header parser keeps the first colon only.\n" >arch/2026/03/04/m-1.md &&
	printf -- "---\nschema: other\nid: m-2\n---\n\nheader notes of another kind\n" >arch/2026/03/04/m-2.md &&
	printf "%s\n" "{\"id\":7,\"date\":\"2026-05-06\",\"text\":\"deploy of the header fix went out\"}" "oops" \
		"{\"id\":8,\"text\":\"undated header chatter\"}" >log/chat.jsonl &&
	ci archive search --json --mode keyword --query "header colon" >../out 2>../err &&
	test_grep "chat.jsonl:2: not a JSON object, left out" ../err &&
	jq -se ".[0] | ._type == \"archive_record\" and .id == \"m-1\" and .source == \"mem\" and .name == \"ann/m-1\" and
		.date == \"2026-03-04\" and .path == \"2026/03/04/m-1.md\" and (.content | startswith(\"The header parser\")) and .score == 1" ../out &&
	jq -se "map(.id) | index(\"m-2\") == null and index(\"8\") != null" ../out &&
	ci archive search --json --mode keyword --query header --source chat --after 2026-05-01 >../out 2>/dev/null &&
	jq -se "map([.id, .path, .date]) == [[\"7\", \"chat.jsonl:1\", \"2026-05-06\"]]" ../out &&
	ci archive search --json --mode keyword --query header --filter ann --before 2026-03-31 >../out 2>/dev/null &&
	jq -se "map(.id) == [\"m-1\"]" ../out &&
	ci archive recent --json --after 2026-01-01 >../out 2>/dev/null &&
	jq -se "map(.id) == [\"7\", \"m-1\"]" ../out &&
	ci archive recent --json --after 2026-01-01 --source mem --limit 1 >../out 2>/dev/null &&
	jq -se "map(.id) == [\"m-1\"]" ../out &&
	printf -- "---\r\nschema: agent-memory\r\nid: m-3\r\ntimestamp: 2026-04-01T09:00:00Z\r\nagent: bob\r\n---\r\n\r\nWindows line ends.\r\n" >arch/m-3.md &&
	printf "%s\n" "{\"id\":9,\"timestamp\":1780000000,\"text\":\"seconds\"}" "{\"id\":10,\"timestamp\":1780000000000,\"text\":\"milliseconds\"}" >log/epoch.jsonl &&
	ci archive recent --json --after 2026-01-01 >../out 2>/dev/null &&
	jq -se "map([.id, .name, .date]) == [[\"9\", \"9\", \"2026-05-28\"], [\"10\", \"10\", \"2026-05-28\"], [\"7\", \"7\", \"2026-05-06\"], [\"m-3\", \"bob/m-3\", \"2026-04-01\"], [\"m-1\", \"ann/m-1\", \"2026-03-04\"]]" ../out &&
	rm arch/m-3.md log/epoch.jsonl &&
	test_status 2 ci archive recent 2>../err && test_grep "after is required" ../err &&
	test_status 2 ci archive recent --after 2026-13-01 2>../err && test_grep "must be a date, YYYY-MM-DD" ../err &&
	test_status 1 ci archive search --query x --source nope 2>../err && test_grep "no archive source .nope." ../err &&
	test_status 1 ci archive search --json --mode keyword --query zebra 2>../err && test_grep "no archive record matches" ../err
'

test_done
