#!/bin/sh
# ci-mcp --profile codebase-context: the 10 tools and the codebase://context
# resource of seeds/codebase-context-capabilities.md on a small Python repository
# with a year of history (unittest then pytest, conventional commits), package
# manifests, a CONTRIBUTING.md with style rules and an import cycle: tools/list
# with the documented parameters and defaults, every response field of every
# tool, the preflight card, the validation errors, and the resource.
. "$(dirname "$0")/lib.sh"

NODE_MODULES=${CI_NODE_MODULES:-$CI_SRC_DIR/deps/node/node_modules}

if ! test_have_lang python; then
	test_skip 'codebase-context tests' 'the python grammar is not compiled in'
	test_done
fi

# call <tool> <arguments>: one tools/call; the result in ../res
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" |
	ci-mcp --profile codebase-context --wait 60 >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
	jq -c .result "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/res"
}

# res_is <jq condition>: the result meets it (shown when not)
res_is() {
	jq -e "$1" "$TRASH_DIRECTORY/res" >/dev/null ||
	{ echo "result fails: $1" >&7; cat "$TRASH_DIRECTORY/res" >&7; return 1; }
}

# commit <date> <subject>: commit everything at that date
commit() {
	git add . &&
	GIT_AUTHOR_DATE="$1T12:00:00Z" GIT_COMMITTER_DATE="$1T12:00:00Z" \
		git -c user.name=t -c user.email=t@t commit -qm "$2"
}

test_expect_success 'setup: a year of history, manifests, a style guide, an import cycle' '
	git init -q repo && mkdir repo/src repo/tests && (
		cd repo &&
		printf "def parse_header(line):\n    return line.split(\":\", 1)\n" >src/reader.py &&
		printf "import unittest\nfrom src.reader import parse_header\n\nclass T(unittest.TestCase):\n    def test_old(self):\n        parse_header(\"a: b\")\n" >tests/test_legacy.py &&
		commit 2025-05-01 "feat: the header reader" &&
		printf "import pytest\nfrom src.reader import parse_header\n\ndef test_parse_header():\n    assert parse_header(\"a: b\")\n" >tests/test_reader.py &&
		printf "from src.cycle_b import b\n\ndef a():\n    return b()\n" >src/cycle_a.py &&
		printf "from src.cycle_a import a\nimport requests\n\ndef b():\n    return a\n" >src/cycle_b.py &&
		printf "{\"name\":\"fx\",\"dependencies\":{\"left-pad\":\"^1.3.0\"},\"devDependencies\":{\"jest\":\"29.0.0\"}}\n" >package.json &&
		printf "requests>=2.31\n" >requirements.txt &&
		printf "# Contributing\n\n## Code style\n\n- Use 4 spaces for indentation\n- Name test files test_*.py\n\n\`\`\`\n- not a rule\n\`\`\`\n\n## Commits\n\n1. Write conventional commit subjects\n" >CONTRIBUTING.md &&
		commit 2026-05-01 "test: move the tests to pytest" &&
		echo "# the end" >>src/reader.py &&
		commit 2026-05-02 "fix(reader): handle an empty header" &&
		ci reindex >/dev/null
	)
'

test_expect_success 'tools/list: the 10 tools with their parameters, types, defaults and enums' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" | ci-mcp --profile codebase-context >../out &&
	jq -c ".result.tools[] | {name, required: (.inputSchema.required // []), params: [.inputSchema.properties | to_entries[] |
		[.key, .value.type, .value.default, .value.enum, .value.minimum, .value.maximum]]}" ../out >../actual &&
	cat >../expect <<-\EOF &&
	{"name":"search_codebase","required":["query"],"params":[["query","string",null,null,null,null],["intent","string","explore",["explore","edit","refactor","migrate"],null,null],["limit","integer",5,null,1,100],["filters","object",null,null,null,null],["includeSnippets","boolean",true,null,null,null]]}
	{"name":"get_codebase_metadata","required":[],"params":[]}
	{"name":"get_indexing_status","required":[],"params":[]}
	{"name":"refresh_index","required":[],"params":[["reason","string",null,null,null,null],["incrementalOnly","boolean",false,null,null,null]]}
	{"name":"get_style_guide","required":[],"params":[["query","string",null,null,null,null],["category","string",null,null,null,null]]}
	{"name":"get_team_patterns","required":[],"params":[["category","string","all",["all","di","state","testing","libraries"],null,null]]}
	{"name":"get_symbol_references","required":["symbol"],"params":[["symbol","string",null,null,null,null],["limit","integer",10,null,1,100]]}
	{"name":"detect_circular_dependencies","required":[],"params":[["scope","string",null,null,null,null]]}
	{"name":"remember","required":["type","category","memory","reason"],"params":[["type","string",null,["convention","decision","gotcha","failure"],null,null],["category","string",null,["tooling","architecture","testing","dependencies","conventions"],null,null],["memory","string",null,null,null,null],["reason","string",null,null,null,null]]}
	{"name":"get_memory","required":[],"params":[["category","string",null,["tooling","architecture","testing","dependencies","conventions"],null,null],["type","string",null,["convention","decision","gotcha","failure"],null,null],["query","string",null,null,null,null],["limit","integer",20,null,1,100]]}
	EOF
	test_cmp ../expect ../actual &&
	jq -e "[.result.tools[] | .outputSchema.type == \"object\"] | all" ../out
'

test_expect_success 'initialize: the resources capability; resources/list and resources/read' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}" \
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"codebase://context\"}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":\"codebase://other\"}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{}}" |
	ci-mcp --profile codebase-context --wait 60 >../out &&
	jq -se "map(select(.id == 1))[0].result.capabilities.resources | type == \"object\"" ../out &&
	jq -se "map(select(.id == 2))[0].result.resources == [{uri: \"codebase://context\", name: \"codebase-context\",
		title: \"Codebase context\", description: .[1].result.resources[0].description, mimeType: \"text/markdown\"}]" ../out &&
	jq -se "map(select(.id == 3))[0].result.contents[0] | .uri == \"codebase://context\" and .mimeType == \"text/markdown\"" ../out &&
	jq -rs "map(select(.id == 3))[0].result.contents[0].text" ../out >../text &&
	test_grep "^# Codebase context: repo$" ../text &&
	test_grep "^- python: [0-9]* files$" ../text &&
	test_grep "^- requests >=2.31 (requirements.txt)$" ../text &&
	test_grep "^- testing: unittest, 50% of files (1), Declining$" ../text &&
	test_grep "^- \[gotcha\] architecture: reader: handle an empty header" ../text &&
	jq -se "map(select(.id == 4))[0].error == {code: -32002, message: \"resource not found: '"'"'codebase://other'"'"'\"}" ../out &&
	jq -se "map(select(.id == 5))[0].error.code == -32602" ../out
'

test_expect_success 'another profile has no resources: no capability, resources/list not found' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}" | ci-mcp --profile shaktiman >../out &&
	jq -se "(map(select(.id == 1))[0].result.capabilities | has(\"resources\") | not) and
		map(select(.id == 2))[0].error.code == -32601" ../out
'

test_expect_success 'search_codebase: ranked results with every field, searchQuality, related memories' '
	cd repo && call search_codebase "{\"query\":\"parse header\",\"limit\":3}" &&
	res_is "(.isError | not) and .structuredContent.status == \"success\" and .structuredContent.intent == \"explore\"" &&
	res_is ".structuredContent | .totalResults == (.results | length) and .totalResults >= 1 and .totalResults <= 3" &&
	res_is "[.structuredContent.results[] | (.file | test(\"^[^:]+:[0-9]+-[0-9]+$\")) and (.summary | type) == \"string\" and
		(.score | type) == \"number\" and (.type | type) == \"string\" and (.snippet | type) == \"string\" and
		(.relationships.importedByCount | type) == \"number\" and (.relationships.hasTests | type) == \"boolean\" and
		(.hints.callers | type) == \"array\" and (.hints.tests | type) == \"array\"] | all" &&
	res_is ".structuredContent.results[0] | (.file | startswith(\"src/reader.py:1-\")) and .relationships.importedByCount == 2 and
		.relationships.hasTests and .hints.tests == [\"tests/test_legacy.py\", \"tests/test_reader.py\"]" &&
	res_is ".structuredContent.searchQuality | (.status == \"ok\" or .status == \"low_confidence\") and (.confidence | type) == \"number\"" &&
	res_is ".structuredContent.relatedMemories | length == 1 and .[0].type == \"gotcha\" and .[0].memory == \"reader: handle an empty header\" and
		(.[0].confidence | type) == \"number\" and (.[0].stale | type) == \"boolean\"" &&
	res_is ".structuredContent | has(\"preflight\") | not" &&
	call search_codebase "{\"query\":\"parse header\",\"includeSnippets\":false,\"filters\":{\"language\":\"python\"}}" &&
	res_is "([.structuredContent.results[] | has(\"snippet\") | not] | all) and .structuredContent.totalResults >= 1" &&
	call search_codebase "{\"query\":\"parse header\",\"filters\":{\"language\":\"rust\"}}" &&
	res_is ".structuredContent.totalResults == 0 and .structuredContent.searchQuality.status == \"low_confidence\""
'

test_expect_success 'search_codebase intent edit: the preflight card from results, callers, patterns and memory' '
	cd repo && call search_codebase "{\"query\":\"parse header\",\"intent\":\"edit\",\"limit\":1}" &&
	res_is ".structuredContent.intent == \"edit\" and (.structuredContent.preflight | type) == \"object\"" &&
	res_is ".structuredContent.preflight | .ready == false and (.nextAction | type) == \"string\" and
		.patterns.do[0] == \"pytest (50% testing)\" and .patterns.avoid == [\"unittest (50% testing)\"] and
		.bestExample == \"tests/test_reader.py\" and .impact.coverage == \"0/2 callers in results\" and
		.impact.files == [\"tests/test_legacy.py\", \"tests/test_reader.py\"] and
		(.whatWouldHelp | length >= 1 and length <= 4)" &&
	res_is ".structuredContent.preflight.nextAction == \"2 of 2 callers missing: search for tests/test_legacy.py\"" &&
	for i in refactor migrate; do
		call search_codebase "{\"query\":\"parse header\",\"intent\":\"$i\"}" &&
		res_is ".structuredContent.preflight.impact.coverage | test(\"^[0-9]+/[0-9]+ callers in results$\")" || return 1
	done
'

test_expect_success 'get_codebase_metadata: languages, dependencies of the manifests, stats' '
	cd repo && call get_codebase_metadata "{}" &&
	res_is ".structuredContent.status == \"success\" and .structuredContent.metadata.name == \"repo\"" &&
	res_is ".structuredContent.metadata | (.rootPath | endswith(\"/repo\")) and (.languages | map(.name) | index(\"python\") != null) and
		.stats.totalFiles >= 6 and (.stats.totalChunks | type) == \"number\"" &&
	res_is ".structuredContent.metadata.dependencies == [
		{name: \"left-pad\", version: \"^1.3.0\", manifest: \"package.json\"},
		{name: \"jest\", version: \"29.0.0\", manifest: \"package.json\"},
		{name: \"requests\", version: \">=2.31\", manifest: \"requirements.txt\"}]"
'

test_expect_success 'get_indexing_status: ready, when, stats' '
	cd repo && call get_indexing_status "{}" &&
	res_is ".structuredContent | .status == \"ready\" and (.lastIndexed | type) == \"string\" and
		(.stats.totalFiles | type) == \"number\" and (.stats.totalChunks | type) == \"number\"" &&
	mkdir ../empty && (cd ../empty && git init -q && call get_indexing_status "{}") &&
	res_is ".structuredContent.status == \"idle\" and (.structuredContent.message | test(\"no index\"))"
'

test_expect_success 'get_style_guide: the rules of CONTRIBUTING.md, by query and category' '
	cd repo && call get_style_guide "{}" &&
	res_is ".structuredContent == {status: \"success\", totalRules: 3, sources: [\"CONTRIBUTING.md\"], rules: [
		{file: \"CONTRIBUTING.md\", line: 5, section: \"Code style\", rule: \"Use 4 spaces for indentation\"},
		{file: \"CONTRIBUTING.md\", line: 6, section: \"Code style\", rule: \"Name test files test_*.py\"},
		{file: \"CONTRIBUTING.md\", line: 14, section: \"Commits\", rule: \"Write conventional commit subjects\"}]}" &&
	call get_style_guide "{\"query\":\"indent\"}" &&
	res_is ".structuredContent.totalRules == 1 and .structuredContent.query == \"indent\"" &&
	call get_style_guide "{\"category\":\"commits\"}" &&
	res_is ".structuredContent.rules == [{file: \"CONTRIBUTING.md\", line: 14, section: \"Commits\", rule: \"Write conventional commit subjects\"}]" &&
	call get_style_guide "{\"query\":\"tabs\"}" &&
	res_is ".structuredContent.status == \"no_results\" and .structuredContent.totalRules == 0" &&
	(cd ../empty && call get_style_guide "{}") &&
	res_is ".structuredContent.status == \"no_results\" and (.structuredContent.message | test(\"no style guide found\"))"
'

test_expect_success 'get_team_patterns: frequencies, trends from git history, golden files, conflicts' '
	cd repo && call get_team_patterns "{}" &&
	res_is ".structuredContent.status == \"success\" and .structuredContent.category == \"all\"" &&
	res_is ".structuredContent.patterns.testing == [
		{name: \"pytest\", frequency: \"50%\", count: 1, trend: \"Rising\", lastUsed: \"2026-05-01\", files: [\"tests/test_reader.py\"]},
		{name: \"unittest\", frequency: \"50%\", count: 1, trend: \"Declining\", lastUsed: \"2025-05-01\", files: [\"tests/test_legacy.py\"]}]" &&
	res_is ".structuredContent.patterns.libraries | map(.name) == [\"requests\"]" &&
	res_is ".structuredContent.goldenFiles | map(.file) == [\"tests/test_legacy.py\", \"tests/test_reader.py\"] and all(.patternCount == 1)" &&
	res_is ".structuredContent.conflicts == [{category: \"testing\", patterns: [\"pytest\", \"unittest\"]}]" &&
	res_is ".structuredContent.memories | map(.memory) | sort == [\"move the tests to pytest\", \"reader: handle an empty header\"]" &&
	call get_team_patterns "{\"category\":\"testing\"}" &&
	res_is ".structuredContent.memories | map(.memory) == [\"move the tests to pytest\"] and .[0].confidence == 1 and .[0].stale == false" &&
	call get_team_patterns "{\"category\":\"libraries\"}" &&
	res_is ".structuredContent.patterns | keys == [\"libraries\"]" &&
	call get_team_patterns "{\"category\":\"di\"}" &&
	res_is ".structuredContent.patterns == {} and .structuredContent.conflicts == []"
'

test_expect_success 'get_symbol_references: usageCount, snippets, confidence syntactic, isComplete' '
	cd repo && call get_symbol_references "{\"symbol\":\"parse_header\"}" &&
	res_is ".structuredContent | .status == \"success\" and .symbol == \"parse_header\" and .confidence == \"syntactic\" and
		.isComplete == true and .usageCount == (.usages | length) and .usageCount >= 2" &&
	res_is "[.structuredContent.usages[] | (.file | startswith(\"tests/\")) and (.line | type) == \"number\" and (.snippet | test(\"parse_header\"))] | all" &&
	call get_symbol_references "{\"symbol\":\"parse_header\",\"limit\":1}" &&
	res_is ".structuredContent.usageCount >= 2 and (.structuredContent.usages | length) == 1" &&
	call get_symbol_references "{\"symbol\":\"no_such_symbol\"}" &&
	res_is ".structuredContent.usageCount == 0 and .structuredContent.usages == [] and .structuredContent.isComplete"
'

test_expect_success 'detect_circular_dependencies: the cycle, and scope' '
	cd repo && call detect_circular_dependencies "{}" &&
	res_is ".structuredContent | .status == \"success\" and .count == 1 and
		.cycles == [{files: [\"src/cycle_a.py\", \"src/cycle_b.py\"], path: [\"src/cycle_a.py\", \"src/cycle_b.py\", \"src/cycle_a.py\"], length: 2}]" &&
	call detect_circular_dependencies "{\"scope\":\"tests\"}" &&
	res_is ".structuredContent | .count == 0 and .cycles == [] and .scope == \"tests\" and .message == \"No circular dependencies found\""
'

test_expect_success 'remember and get_memory: .codebase-context/memory.json, confidence decay, stale' '
	cd repo &&
	call remember "{\"type\":\"failure\",\"category\":\"testing\",\"memory\":\"mocking the header parser hid a bug\",\"reason\":\"incident 7\"}" &&
	res_is ".structuredContent | .status == \"success\" and .memory.type == \"failure\" and .memory.category == \"testing\" and
		(.memory.id | test(\"^[0-9a-f]{16}$\")) and (.memory.date | type) == \"string\"" &&
	jq -e "map(select(.memory == \"mocking the header parser hid a bug\")) | length == 1" .codebase-context/memory.json &&
	call remember "{\"type\":\"failure\",\"category\":\"testing\",\"memory\":\"mocking the header parser hid a bug\",\"reason\":\"again\"}" &&
	res_is ".structuredContent.status == \"info\"" &&
	jq ". + [{id: \"0000000000000001\", type: \"decision\", category: \"architecture\", memory: \"old decision\", reason: \"r\", date: \"2020-01-01T00:00:00Z\"},
		{id: \"0000000000000002\", type: \"convention\", category: \"conventions\", memory: \"old convention\", reason: \"r\", date: \"2020-01-01T00:00:00Z\"}]" \
		.codebase-context/memory.json >m.json && mv m.json .codebase-context/memory.json &&
	call get_memory "{}" &&
	res_is ".structuredContent | .status == \"success\" and .count == 5 and (.memories | length) == 5 and
		([.memories[].confidence] | . == (sort | reverse))" &&
	res_is "[.structuredContent.memories[] | select(.memory == \"old convention\")][0] | .confidence == 1 and .stale == false" &&
	res_is "[.structuredContent.memories[] | select(.memory == \"old decision\")][0] | .confidence < 0.3 and .stale == true" &&
	res_is ".structuredContent.staleCount >= 1" &&
	call get_memory "{\"type\":\"failure\",\"query\":\"HEADER\",\"limit\":1}" &&
	res_is ".structuredContent.count == 1 and .structuredContent.memories[0].memory == \"mocking the header parser hid a bug\"" &&
	call get_memory "{\"category\":\"tooling\"}" &&
	res_is ".structuredContent.count == 0 and .structuredContent.memories == []" &&
	call search_codebase "{\"query\":\"header parser\",\"intent\":\"edit\"}" &&
	res_is ".structuredContent.preflight.warnings == [\"mocking the header parser hid a bug\"]"
'

test_expect_success 'a memory file that is not JSON: tool errors and a resource error saying so' '
	cd repo && cp .codebase-context/memory.json ../memory.json &&
	echo "{" >.codebase-context/memory.json &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_memory\",\"arguments\":{}}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search_codebase\",\"arguments\":{\"query\":\"parse\"}}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"codebase://context\"}}" |
	ci-mcp --profile codebase-context --wait 60 >../out &&
	cp ../memory.json .codebase-context/memory.json &&
	jq -se "map(select(.id == 1))[0].result | .isError and (.content[0].text | test(\"^memory: .codebase-context/memory.json:[0-9]+: \"))" ../out &&
	jq -se "map(select(.id == 2))[0].result | .isError and (.content[0].text | test(\"memory.json\"))" ../out &&
	jq -se "map(select(.id == 3))[0].error | .code == -32603 and (.message | test(\"^cannot read codebase://context: .*memory.json\"))" ../out
'

test_expect_success 'refresh_index: incremental and full; conventional commits become memories once' '
	cd repo && rm -r .codebase-context &&
	call refresh_index "{\"incrementalOnly\":true,\"reason\":\"test\"}" &&
	res_is ".structuredContent | .status == \"success\" and .mode == \"incremental\" and .gitMemoriesAdded == 2 and (.message | test(\"reason: test\"))" &&
	jq -e "map({type, category, memory}) == [
		{type: \"gotcha\", category: \"architecture\", memory: \"reader: handle an empty header\"},
		{type: \"convention\", category: \"testing\", memory: \"move the tests to pytest\"}]" .codebase-context/memory.json &&
	call refresh_index "{}" &&
	res_is ".structuredContent.mode == \"full\" and .structuredContent.gitMemoriesAdded == 0"
'


# the cases of the errors test: tool, arguments, the message (quotes are hard inside a test)
cat >"$TRASH_DIRECTORY/cases" <<\EOF
search_codebase	{}	missing required parameter 'query'
search_codebase	{"query":" "}	parameter 'query' must not be empty
search_codebase	{"query":"x","intent":"delete"}	parameter 'intent' must be one of ["explore","edit","refactor","migrate"]
search_codebase	{"query":"x","limit":0}	parameter 'limit' must be from 1 to 100, got 0
search_codebase	{"query":"x","limit":2.5}	parameter 'limit' must be an integer
search_codebase	{"query":"x","filters":{"framework":"angular"}}	parameter 'filters': framework, componentType and layer are not supported (ci knows no frameworks or layers); filter by language
search_codebase	{"query":"x","filters":{"colour":"red"}}	parameter 'filters': unknown filter 'colour' (framework, language, componentType, layer)
search_codebase	{"query":"x","filters":{"language":7}}	parameter 'filters.language' must be a string
get_team_patterns	{"category":"ui"}	parameter 'category' must be one of ["all","di","state","testing","libraries"]
get_symbol_references	{}	missing required parameter 'symbol'
get_symbol_references	{"symbol":"x","limit":101}	parameter 'limit' must be from 1 to 100, got 101
remember	{"type":"idea","category":"testing","memory":"m","reason":"r"}	parameter 'type' must be one of ["convention","decision","gotcha","failure"]
remember	{"type":"gotcha","category":"ui","memory":"m","reason":"r"}	parameter 'category' must be one of ["tooling","architecture","testing","dependencies","conventions"]
remember	{"type":"gotcha","category":"testing","memory":"m"}	missing required parameter 'reason'
remember	{"type":"gotcha","category":"testing","memory":"","reason":"r"}	parameter 'memory' must not be empty
get_memory	{"limit":0}	parameter 'limit' must be from 1 to 100, got 0
get_memory	{"type":"note"}	parameter 'type' must be one of ["convention","decision","gotcha","failure"]
get_style_guide	{"query":""}	parameter 'query' must not be empty
detect_circular_dependencies	{"scope":"../nowhere"}	parameter 'scope': '../nowhere' does not exist
detect_circular_dependencies	{"scope":"../elsewhere"}	parameter 'scope': '../elsewhere' is outside the repository
refresh_index	{"incrementalOnly":"yes"}	parameter 'incrementalOnly' must be true or false
get_codebase_metadata	{"verbose":true}	unknown parameter 'verbose'
EOF

test_expect_success 'every invalid argument is an MCP tool error naming the parameter' '
	cd repo && mkdir ../elsewhere &&
	test_mcp_errors codebase-context "$TRASH_DIRECTORY/cases"
'

if command -v node >/dev/null 2>&1 && test -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json"; then
	test_expect_success 'the TypeScript SDK client: answers fit the outputSchemas, the resource reads' '
		cd repo && cat >../cases.json <<-\EOF &&
	[
	["search_codebase", {"query": "parse header"}, {"status": "success"}],
	["search_codebase", {"query": "parse header", "intent": "edit", "limit": 2}, {"intent": "edit"}],
	["get_codebase_metadata", {}, {"status": "success"}],
	["get_indexing_status", {}, {"status": "ready"}],
	["get_style_guide", {"query": "spaces"}, {"totalRules": 1}],
	["get_team_patterns", {"category": "testing"}, {"category": "testing"}],
	["get_symbol_references", {"symbol": "parse_header", "limit": 5}, {"confidence": "syntactic"}],
	["detect_circular_dependencies", {}, {"count": 1}],
	["remember", {"type": "convention", "category": "conventions", "memory": "sdk memory", "reason": "sdk"}, {"status": "success"}],
	["get_memory", {"query": "sdk"}, {"count": 1}],
	["refresh_index", {"incrementalOnly": true}, {"mode": "incremental"}],
	["resource:codebase://context", {}, "ok"],
	["resource:codebase://nothing", {}, "isError"],
	["search_codebase", {"query": "x", "intent": "delete"}, "isError"],
	["get_team_patterns", {"category": "ui"}, "isError"]
]
	EOF
		node "$CI_SRC_DIR/tests/mcp-sdk-profile.mjs" "$NODE_MODULES" "$CI_BUILD_DIR/ci-mcp" codebase-context ../cases.json >../sdk.out &&
		test_line_count = "$(jq length ../cases.json)" ../sdk.out
	'
else
	test_skip 'the TypeScript SDK client' "no node or no @modelcontextprotocol/sdk in $NODE_MODULES (scripts/setup installs them)"
fi

test_done
