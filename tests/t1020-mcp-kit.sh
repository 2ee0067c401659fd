#!/bin/sh
# ci-mcp --profile kit: the cased/kit pattern-matching contract
# (seeds/kit-pattern-matching.md) over raw JSON-RPC: every tool with its
# documented parameters and defaults, every documented response field with its
# type, the status values, and each invalid argument the contract mentions.
. "$(dirname "$0")/lib.sh"

NODE_MODULES=${CI_NODE_MODULES:-$CI_SRC_DIR/deps/node/node_modules}

# sdk_cases: run ../cases.json through the official TypeScript SDK client
sdk_cases() {
	node "$CI_SRC_DIR/tests/mcp-sdk-profile.mjs" "$NODE_MODULES" "$CI_BUILD_DIR/ci-mcp" "$1" ../cases.json >../sdk.out &&
	test_line_count = "$(jq length ../cases.json)" ../sdk.out
}

# call <tool> <arguments>: one tools/call; its result in out, stderr in err
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" |
	ci-mcp --profile kit $KIT_OPTS >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
	jq -c .result.structuredContent "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/sc"
}

# sc_is <jq condition>: the structuredContent meets it (shown when not)
sc_is() {
	jq -e "$1" "$TRASH_DIRECTORY/sc" >/dev/null ||
	{ echo "structuredContent fails: $1" >&7; cat "$TRASH_DIRECTORY/out" >&7; return 1; }
}

test_expect_success 'setup: a repository with an index' '
	git init -q repo && mkdir repo/src repo/tests repo/docs &&
	printf "def parse_header(line):\n    # TODO: fix this\n    return line.split(\":\", 1)\n\n\nclass Reader:\n    def read(self):\n        return parse_header(\"a: b\")\n" >repo/src/reader.py &&
	printf "from src.reader import Reader\n\nREADER = Reader()\n# todo: more readers\n" >repo/src/main.py &&
	printf "from src.reader import parse_header\n\ndef test_parse():\n    assert parse_header(\"a: b\")\n" >repo/tests/test_reader.py &&
	printf "TODO: document parse_header\n" >repo/docs/notes.md &&
	printf "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n" >repo/docs/aaa.txt &&
	(cd repo && git add . && git -c user.name=t -c user.email=t@t commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'tools/list: the three tools, their parameters, types, defaults and limits' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" | ci-mcp --profile kit >"$TRASH_DIRECTORY/out" &&
	jq -c ".result.tools[] | {name, required: .inputSchema.required, params: [.inputSchema.properties | to_entries[] |
		[.key, .value.type, .value.items.type, .value.default, .value.maximum]]}" "$TRASH_DIRECTORY/out" >../actual &&
	cat >../expect <<-\EOF &&
	{"name":"search_text_pattern","required":["query"],"params":[["query","string",null,null,null],["is_regex","boolean",null,false,null],["target_paths","array","string",null,null],["case_sensitive","boolean",null,false,null],["context_lines","integer",null,2,10],["file_extensions","array","string",null,null]]}
	{"name":"find_symbol_occurrences","required":["symbol_name"],"params":[["symbol_name","string",null,null,null],["target_paths","array","string",null,null],["find_definitions","boolean",null,true,null],["find_references","boolean",null,true,null],["language","string",null,null,null]]}
	{"name":"search_semantic_concept","required":["concept_description"],"params":[["concept_description","string",null,null,null],["target_paths","array","string",null,null],["top_n_results","integer",null,5,20],["language","string",null,null,null]]}
	EOF
	test_cmp ../expect ../actual &&
	jq -e "[.result.tools[].outputSchema.required] == [[\"status\",\"matches\",\"match_count\"],
		[\"status\",\"occurrences\",\"occurrence_count\"], [\"status\",\"results\",\"result_count\"]]" ../out
'

test_expect_success 'search_text_pattern: literal, case-insensitive, code files, 2 lines of context by default' '
	cd repo && call search_text_pattern "{\"query\":\"todo\"}" &&
	sc_is ".status == \"success\" and .match_count == 2 and [.matches[].file_path] == [\"src/main.py\", \"src/reader.py\"]" &&
	sc_is "[.matches[] | (.file_path | type) == \"string\" and (.line_number | type) == \"number\" and
		(.matched_line | type) == \"string\" and (.context | type) == \"array\"] | all" &&
	sc_is ".matches[] | select(.file_path == \"src/reader.py\") | .line_number == 2 and .matched_line == \"    # TODO: fix this\"
		and .context == [\"def parse_header(line):\", \"    return line.split(\\\":\\\", 1)\", \"\"]" &&
	jq -e ".result.isError | not" "$TRASH_DIRECTORY/out"
'

test_expect_success 'search_text_pattern: case_sensitive, context_lines, file_extensions, target_paths' '
	cd repo &&
	call search_text_pattern "{\"query\":\"TODO\",\"case_sensitive\":true,\"context_lines\":0}" &&
	sc_is "[.matches[].file_path] == [\"src/reader.py\"] and ([.matches[].context[]] | length) == 0" &&
	call search_text_pattern "{\"query\":\"todo\",\"file_extensions\":[\".md\"]}" &&
	sc_is "[.matches[].file_path] == [\"docs/notes.md\"]" &&
	call search_text_pattern "{\"query\":\"todo\",\"file_extensions\":[\"py\"],\"target_paths\":[\"src/main.py\"]}" &&
	sc_is "[.matches[].file_path] == [\"src/main.py\"] and .match_count == 1" &&
	call search_text_pattern "{\"query\":\"parse_header\",\"target_paths\":[\"tests/\",\"docs\"]}" &&
	sc_is "[.matches[].file_path] == [\"tests/test_reader.py\", \"tests/test_reader.py\"]" &&
	call search_text_pattern "{\"query\":\"parse_header\",\"target_paths\":[\"tests/\",\"docs\"],\"file_extensions\":[\".md\",\".py\"]}" &&
	sc_is "[.matches[].file_path] == [\"docs/notes.md\", \"tests/test_reader.py\", \"tests/test_reader.py\"]"
'

test_expect_success 'search_text_pattern: a regex gives match_details with its groups' '
	cd repo &&
	call search_text_pattern "{\"query\":\"parse_(\\\\w+)\\\\(line\",\"is_regex\":true}" &&
	sc_is ".status == \"success\" and .match_count == 1 and
		.matches[0].match_details == {column: 5, match: \"parse_header(line\", groups: [\"header\"]}"
'

test_expect_success 'search_text_pattern: nothing found is no_matches_found' '
	cd repo && call search_text_pattern "{\"query\":\"no such text anywhere\"}" &&
	sc_is ". == {status: \"no_matches_found\", matches: [], match_count: 0}"
'

# kit_error <tool> <arguments> <message>: status error with this error_message
kit_error() {
	call "$1" "$2" &&
	jq -r ".status, .error_message, (.matches // .occurrences // .results | length)" \
		"$TRASH_DIRECTORY/sc" >"$TRASH_DIRECTORY/actual" &&
	printf "error\n%s\n0\n" "$3" >"$TRASH_DIRECTORY/expect" &&
	test_cmp "$TRASH_DIRECTORY/expect" "$TRASH_DIRECTORY/actual"
}

test_expect_success 'search_text_pattern: each invalid argument is status error with error_message' '
	cd repo &&
	kit_error search_text_pattern "{\"query\":\"(\",\"is_regex\":true}" \
		"invalid pattern '"'"'('"'"': missing closing parenthesis at offset 1 (use -F for a literal string)" &&
	kit_error search_text_pattern "{\"query\":\"x\",\"target_paths\":[\"../\"]}" \
		"parameter '"'"'target_paths'"'"': '"'"'../'"'"' is outside the repository" &&
	kit_error search_text_pattern "{\"query\":\"x\",\"target_paths\":[\"src\",\"/etc\"]}" \
		"parameter '"'"'target_paths'"'"': '"'"'/etc'"'"' is outside the repository" &&
	kit_error search_text_pattern "{\"query\":\"x\",\"target_paths\":[\"nope/\"]}" \
		"parameter '"'"'target_paths'"'"': '"'"'nope/'"'"' does not exist" &&
	kit_error search_text_pattern "{\"query\":\"x\",\"context_lines\":11}" \
		"parameter '"'"'context_lines'"'"' must be from 0 to 10, got 11" &&
	kit_error search_text_pattern "{\"query\":\"x\",\"file_extensions\":[\"../*\"]}" \
		"parameter '"'"'file_extensions'"'"': '"'"'../*'"'"' is not a file extension such as .py" &&
	kit_error search_text_pattern "{\"query\":\"\"}" "parameter '"'"'query'"'"' must not be empty" &&
	kit_error search_text_pattern "{\"query\":\"x\",\"target_paths\":\"src\"}" \
		"parameter '"'"'target_paths'"'"' must be an array"
'

test_expect_success 'search_text_pattern: a catastrophic regex (ReDoS) is stopped and is an error' '
	cd repo &&
	call search_text_pattern "{\"query\":\"(a+)+\$\",\"is_regex\":true,\"target_paths\":[\"docs/aaa.txt\"],\"file_extensions\":[\"txt\"]}" &&
	sc_is ".status == \"error\" and .match_count == 0 and (.error_message | test(\"too complex.*backtracking limit.* in docs/aaa.txt; \"))"
'

test_expect_success 'search_text_pattern: matches elsewhere stand, with a warning that they may be incomplete' '
	cd repo &&
	call search_text_pattern "{\"query\":\"(a+)+\$|todo\",\"is_regex\":true,\"target_paths\":[\"docs\"],\"file_extensions\":[\"txt\",\"md\"]}" &&
	sc_is ".status == \"success\" and .match_count == 1 and .matches[0].file_path == \"docs/notes.md\"" &&
	sc_is ".warning == \"results may be incomplete: the regular expression hit the backtracking limit or the time limit in docs/aaa.txt\"" &&
	call search_text_pattern "{\"query\":\"todo\",\"target_paths\":[\"docs\"],\"file_extensions\":[\"txt\",\"md\"]}" &&
	sc_is ".status == \"success\" and .match_count == 1 and (has(\"warning\") | not)"
'

test_expect_success 'find_symbol_occurrences: definitions and references with every field' '
	cd repo && call find_symbol_occurrences "{\"symbol_name\":\"parse_header\"}" &&
	sc_is ".status == \"success\" and .occurrence_count == 3" &&
	jq -c ".occurrences[] | [.file_path, .line_number, .column_number, .type, .symbol_fqn, .snippet]" ../sc >../actual &&
	cat >../expect <<-\EOF &&
	["src/reader.py",1,5,"definition","parse_header","def parse_header(line):"]
	["src/reader.py",8,16,"reference","parse_header","return parse_header(\"a: b\")"]
	["tests/test_reader.py",4,12,"reference","parse_header","assert parse_header(\"a: b\")"]
	EOF
	test_cmp ../expect ../actual
'

test_expect_success 'find_symbol_occurrences: find_references false, qualified names, target_paths, language' '
	cd repo &&
	call find_symbol_occurrences "{\"symbol_name\":\"read\",\"find_references\":false}" &&
	sc_is ".occurrences == [{file_path: \"src/reader.py\", line_number: 7, column_number: 9, type: \"definition\",
		symbol_fqn: \"Reader.read\", snippet: \"def read(self):\"}]" &&
	call find_symbol_occurrences "{\"symbol_name\":\"parse_header\",\"find_definitions\":false}" &&
	sc_is "[.occurrences[].type] == [\"reference\", \"reference\"]" &&
	call find_symbol_occurrences "{\"symbol_name\":\"parse_header\",\"target_paths\":[\"tests\",\"src/main.py\"]}" &&
	sc_is "[.occurrences[].file_path] == [\"tests/test_reader.py\"] and .occurrence_count == 1" &&
	call find_symbol_occurrences "{\"symbol_name\":\"parse_header\",\"target_paths\":[\"src/\"],\"language\":\"python\"}" &&
	sc_is "[.occurrences[].file_path] == [\"src/reader.py\", \"src/reader.py\"]" &&
	call find_symbol_occurrences "{\"symbol_name\":\"parse_header\",\"language\":\"go\"}" &&
	sc_is ".status == \"no_occurrences_found\" and .occurrence_count == 0"
'

test_expect_success 'find_symbol_occurrences: invalid arguments are status error' '
	cd repo &&
	kit_error find_symbol_occurrences "{\"symbol_name\":\"x\",\"find_definitions\":false,\"find_references\":false}" \
		"parameters '"'"'find_definitions'"'"' and '"'"'find_references'"'"' are both false: there is nothing to find" &&
	kit_error find_symbol_occurrences "{\"symbol_name\":\"x\",\"target_paths\":[\"../..\"]}" \
		"parameter '"'"'target_paths'"'"': '"'"'../..'"'"' is outside the repository" &&
	kit_error find_symbol_occurrences "{}" "missing required parameter '"'"'symbol_name'"'"'"
'

test_expect_success 'find_symbol_occurrences: without an index, indexing_required' '
	rm -rf fresh && cp -r repo fresh && rm -rf fresh/.ci-index && cd fresh &&
	KIT_OPTS="--wait 0" && call find_symbol_occurrences "{\"symbol_name\":\"parse_header\"}" &&
	sc_is ".status == \"indexing_required\" and .occurrences == [] and .occurrence_count == 0 and
		(.error_message | test(\"index is being built\"))"
'

test_expect_success 'search_semantic_concept: an index without vectors is embeddings_not_ready' '
	cd repo && call search_semantic_concept "{\"concept_description\":\"split a header line\"}" &&
	sc_is ".status == \"embeddings_not_ready\" and .results == [] and .result_count == 0 and
		(.error_message | test(\"embeddings are not available\"))"
'

test_expect_success 'search_semantic_concept: invalid arguments are status error' '
	cd repo &&
	kit_error search_semantic_concept "{\"concept_description\":\"x\",\"top_n_results\":21}" \
		"parameter '"'"'top_n_results'"'"' must be from 1 to 20, got 21" &&
	kit_error search_semantic_concept "{\"concept_description\":\"x\",\"top_n_results\":0}" \
		"parameter '"'"'top_n_results'"'"' must be from 1 to 20, got 0" &&
	kit_error search_semantic_concept "{\"concept_description\":\"x\",\"target_paths\":[\"../x\"]}" \
		"parameter '"'"'target_paths'"'"': '"'"'../x'"'"' does not exist"
'

model=${CI_MODEL:-$CI_SRC_DIR/deps/model/use-lite}
if test -f "$model/model.json"; then
	CI_MODEL=$model && export CI_MODEL
	test_expect_success 'search_semantic_concept: with embeddings, ranked snippets with every field' '
		cd repo && ci-chunk | ci-embed | ci-index load 2>/dev/null &&
		call search_semantic_concept "{\"concept_description\":\"split a header line\",\"top_n_results\":2}" &&
		sc_is ".status == \"success\" and .result_count == 2 and (.results | length) == 2" &&
		sc_is "[.results[] | (.file_path | type) == \"string\" and (.start_line | type) == \"number\" and
			(.end_line >= .start_line) and (.text | length > 0) and (.score | type) == \"number\" and
			.snippet_id == \"\(.file_path):\(.start_line)-\(.end_line)\"] | all" &&
		sc_is ".results[0].file_path == \"src/reader.py\" and .results[0].start_line == 1" &&
		call search_semantic_concept "{\"concept_description\":\"split a header line\",\"top_n_results\":20}" &&
		sc_is "[.results[].score] as \$s | .result_count > 2 and \$s == (\$s | sort | reverse)" &&
		call search_semantic_concept "{\"concept_description\":\"split a header line\",\"target_paths\":[\"tests\",\"docs\"]}" &&
		sc_is ".result_count >= 1 and ([.results[].file_path | test(\"^(tests|docs)/\")] | all)"
	'
else
	test_skip 'search_semantic_concept with embeddings' "no model in $model (scripts/setup fetches it)"
fi

if command -v node >/dev/null 2>&1 && test -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json"; then
	test_expect_success 'the TypeScript SDK client: answers fit the outputSchemas, errors as documented' '
		cd repo && cat >../cases.json <<-\EOF &&
	[
	["search_text_pattern", {"query": "todo"}, {"status": "success", "match_count": 2}],
	["search_text_pattern", {"query": "parse_(\\w+)", "is_regex": true, "context_lines": 0}, {"status": "success"}],
	["search_text_pattern", {"query": "nothing like this"}, {"status": "no_matches_found", "matches": []}],
	["search_text_pattern", {"query": "(", "is_regex": true}, {"status": "error"}],
	["search_text_pattern", {"query": "x", "target_paths": ["../"]}, {"status": "error"}],
	["search_text_pattern", {"query": "x", "context_lines": 11}, {"status": "error"}],
	["find_symbol_occurrences", {"symbol_name": "parse_header"}, {"status": "success", "occurrence_count": 3}],
	["find_symbol_occurrences", {"symbol_name": "nothing_like_this"}, {"status": "no_occurrences_found"}],
	["find_symbol_occurrences", {"symbol_name": "x", "find_definitions": false, "find_references": false}, {"status": "error"}],
	["search_semantic_concept", {"concept_description": "split a header line"}, "ok"],
	["search_semantic_concept", {"concept_description": "x", "top_n_results": 21}, {"status": "error"}]
]
	EOF
		sdk_cases kit
	'
else
	test_skip 'the TypeScript SDK client' "no node or no @modelcontextprotocol/sdk in $NODE_MODULES (scripts/setup installs them)"
fi

test_done
