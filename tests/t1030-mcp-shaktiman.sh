#!/bin/sh
# ci-mcp --profile shaktiman: shaktiman's search contract (seeds/shaktiman-search.md)
# over raw JSON-RPC: the parameters and defaults, locate and full output with the
# result count, explain's five signals, scope, the path prefix with over-fetch,
# min_score, and every validation rule as an MCP tool error.
. "$(dirname "$0")/lib.sh"

NODE_MODULES=${CI_NODE_MODULES:-$CI_SRC_DIR/deps/node/node_modules}

# sdk_cases: run ../cases.json through the official TypeScript SDK client
sdk_cases() {
	node "$CI_SRC_DIR/tests/mcp-sdk-profile.mjs" "$NODE_MODULES" "$CI_BUILD_DIR/ci-mcp" "$1" ../cases.json >../sdk.out &&
	test_line_count = "$(jq length ../cases.json)" ../sdk.out
}

# search <arguments>: one call of search; the result in ../res
search() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":%s}}\n' "$1" |
	ci-mcp --profile shaktiman >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
	jq -c .result "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/res"
}

# exits <code> <command>...: the command exits with <code>
exits() {
	want=$1; shift
	"$@"; test $? -eq "$want"
}

# res_is <jq condition>: the result meets it (shown when not)
res_is() {
	jq -e "$1" "$TRASH_DIRECTORY/res" >/dev/null ||
	{ echo "result fails: $1" >&7; cat "$TRASH_DIRECTORY/res" >&7; return 1; }
}

test_expect_success 'setup: a repository with an index' '
	git init -q repo && mkdir repo/src repo/tests &&
	printf "def parse_header(line):\n    return line.split(\":\", 1)\n\n\nclass Reader:\n    def read(self):\n        return parse_header(\"a: b\")\n" >repo/src/reader.py &&
	printf "from src.reader import Reader\n\nREADER = Reader()\n" >repo/src/main.py &&
	printf "from src.reader import parse_header\n\ndef test_parse_header():\n    assert parse_header(\"a: b\")\n" >repo/tests/test_reader.py &&
	(cd repo && git add . && git -c user.name=t -c user.email=t@t commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'tools/list: search with its parameters, types, defaults, enums and ranges' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" | ci-mcp --profile shaktiman >../out &&
	jq -c ".result.tools[] | {name, required: .inputSchema.required, params: [.inputSchema.properties | to_entries[] |
		[.key, .value.type, .value.default, .value.enum, .value.minimum, .value.maximum]]}" ../out >../actual &&
	cat >../expect <<-\EOF &&
	{"name":"search","required":["query"],"params":[["query","string",null,null,null,null],["mode","string","locate",["locate","full"],null,null],["max_results","number",10,null,1,200],["min_score","number",0.15,null,0,1],["explain","boolean",false,null,null,null],["path","string",null,null,null,null],["scope","string","impl",["impl","test","all"],null,null]]}
	EOF
	test_cmp ../expect ../actual &&
	jq -e ".result.tools[0].inputSchema.properties.query.maxLength == 10000" ../out
'

test_expect_success 'locate (the default): one line a result after the result count; tests left out' '
	cd repo && search "{\"query\":\"parse header\"}" &&
	res_is "(.isError | not) and .structuredContent.mode == \"locate\" and
		.structuredContent.count == (.structuredContent.results | length) and .structuredContent.count >= 1" &&
	res_is "[.structuredContent.results[] | (.path | type) == \"string\" and (.start_line | type) == \"number\" and
		(.end_line | type) == \"number\" and (.symbol | type) == \"string\" and (.kind | type) == \"string\" and
		(.score | type) == \"number\" and .content == null and .signals == null] | all" &&
	res_is "[.structuredContent.results[].path | startswith(\"tests/\")] | any | not" &&
	res_is ".structuredContent.results[0] | .path == \"src/reader.py\" and .symbol == \"parse_header\" and .start_line == 1" &&
	jq -j ".content[0].text" ../res >../text &&
	head -n 1 ../text >../actual && echo "$(jq .structuredContent.count ../res) results:" >../expect &&
	test_cmp ../expect ../actual &&
	sed -n 2p ../text | grep "^src/reader.py:1-[0-9]*  parse_header (function)  score:0\.[0-9][0-9]$" &&
	test_line_count = $(($(jq .structuredContent.count ../res) + 1)) ../text
'

test_expect_success 'full: the same header and the inline source of each chunk' '
	cd repo && search "{\"query\":\"parse header\",\"mode\":\"full\"}" &&
	res_is ".structuredContent.mode == \"full\" and ([.structuredContent.results[] | .content | length > 0] | all)" &&
	res_is ".structuredContent.results[0].content | startswith(\"def parse_header(line):\")" &&
	jq -r ".content[0].text" ../res >../text &&
	test_grep "^[0-9]* results:$" ../text &&
	test_grep "^--- src/reader.py:1-[0-9]* (parse_header, function, score:0\.[0-9][0-9]) ---$" ../text &&
	test_grep "^def parse_header(line):$" ../text
'

test_expect_success 'explain: the semantic, structural, keyword, change and session contributions' '
	cd repo && search "{\"query\":\"parse header\",\"explain\":true}" &&
	res_is "[.structuredContent.results[].signals | keys == [\"change\",\"keyword\",\"semantic\",\"session\",\"structural\"]
		and ([.[] | type == \"number\"] | all)] | all" &&
	res_is ".structuredContent.results[0].signals.keyword > 0" &&
	jq -r ".content[0].text" ../res >../text &&
	test_grep "^  signals: semantic=[0-9.]* structural=[0-9.]* keyword=[0-9.]* change=[0-9.]* session=[0-9.]*$" ../text
'

test_expect_success 'scope: test is tests only, all is both' '
	cd repo && search "{\"query\":\"parse header\",\"scope\":\"test\",\"min_score\":0}" &&
	res_is ".structuredContent.count >= 1 and ([.structuredContent.results[].path | startswith(\"tests/\")] | all)" &&
	search "{\"query\":\"parse header\",\"scope\":\"all\",\"min_score\":0}" &&
	res_is "[.structuredContent.results[].path] | (map(startswith(\"tests/\")) | any) and (map(startswith(\"src/\")) | any)"
'

test_expect_success 'path: a prefix filter after a 3x over-fetch, then max_results' '
	CI_RANK_FUSION=rrf && export CI_RANK_FUSION &&	# the ranking these expectations were made with
	cd repo &&
	search "{\"query\":\"parse header\",\"scope\":\"all\",\"min_score\":0,\"max_results\":1}" &&
	res_is "[.structuredContent.results[].path] == [\"tests/test_reader.py\"]" &&
	search "{\"query\":\"parse header\",\"scope\":\"all\",\"min_score\":0,\"max_results\":1,\"path\":\"src/\"}" &&
	res_is ".structuredContent.count == 1 and (.structuredContent.results[0].path | startswith(\"src/\"))" &&
	search "{\"query\":\"parse header\",\"scope\":\"all\",\"min_score\":0,\"path\":\"src/reader\"}" &&
	res_is ".structuredContent.count >= 1 and ([.structuredContent.results[].path == \"src/reader.py\"] | all)" &&
	search "{\"query\":\"parse header\",\"path\":\"nowhere/\"}" &&
	res_is ".structuredContent == {results: [], count: 0, mode: \"locate\"} and .content[0].text == \"0 results.\n\"" &&
	unset CI_RANK_FUSION
'

test_expect_success 'min_score: hits below it are left out; max_results takes a number' '
	cd repo && search "{\"query\":\"parse header\",\"min_score\":1}" &&
	res_is ".structuredContent.count == 0" &&
	search "{\"query\":\"parse header\",\"scope\":\"all\",\"min_score\":0,\"max_results\":2.5}" &&
	res_is ".structuredContent.count == 2"
'

test_expect_success 'a query of 10,000 characters is taken, multibyte or not' '
	cd repo &&
	q=$(awk "BEGIN { for (i = 0; i < 10000; i++) printf \"\\303\\251\" }") &&
	search "{\"query\":\"$q\"}" && res_is ".isError | not"
'

# session <arguments>...: searches in one session, one at a time; their results in ../session
session() {
	i=0 &&
	for a in "$@"; do
		i=$((i + 1)) &&
		printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":%s}}\n' $i "$a"
	done | ci-mcp --profile shaktiman --jobs 1 | jq -c .result.structuredContent >"$TRASH_DIRECTORY/session"
}

q='{"query":"parse header","scope":"all","min_score":0,"explain":true}'
open='{"query":"read","scope":"all","min_score":0,"path":"src/reader.py","max_results":1}'
other='{"query":"zzzz"}'

test_expect_success 'session: what a session already saw ranks higher, less with each query since' '
	CI_RANK_FUSION=rrf && export CI_RANK_FUSION &&	# the session boost against the hand-set scores
	cd repo && session "$q" "$open" "$q" &&
	jq -se ".[0].results | map(.signals.session == 0) | all" ../session &&
	jq -se ".[1].results | map([.path, .start_line]) == [[\"src/reader.py\", 6]]" ../session &&
	jq -se "(.[0].results | map(.start_line == 6 and .path == \"src/reader.py\") | index(true)) as \$before |
		(.[2].results | map(.start_line == 6 and .path == \"src/reader.py\") | index(true)) as \$after |
		\$after < \$before and
		(.[2].results | map(select(.start_line == 6 and .path == \"src/reader.py\"))[0].signals.session) as \$opened |
		(.[2].results | map(select(.start_line != 6 or .path != \"src/reader.py\").signals.session) |
			all(. > 0 and . < \$opened))" ../session &&
	jq -se "[.[2].results[] | select(.path == \"src/reader.py\" and .start_line == 6) | .signals.session][0]" ../session >../recent &&
	session "$q" "$open" "$other" "$other" "$other" "$other" "$q" &&
	jq -se "[.[6].results[] | select(.path == \"src/reader.py\" and .start_line == 6) | .signals.session][0]" ../session >../later &&
	jq -ne "\$recent > \$later and \$later > 0" --argjson recent "$(cat ../recent)" --argjson later "$(cat ../later)" &&
	unset CI_RANK_FUSION
'

# search_error <arguments> <message>: an MCP tool error with this message
search_error() {
	search "$1" &&
	jq -r ".isError, .content[0].text" "$TRASH_DIRECTORY/res" >"$TRASH_DIRECTORY/actual" &&
	printf "true\n%s\n" "$2" >"$TRASH_DIRECTORY/expect" &&
	test_cmp "$TRASH_DIRECTORY/expect" "$TRASH_DIRECTORY/actual"
}

test_expect_success 'every validation rule is an MCP tool error naming the parameter' '
	cd repo &&
	q=$(awk "BEGIN { for (i = 0; i < 10001; i++) printf \"q\" }") &&
	search_error "{}" "missing required parameter '"'"'query'"'"'" &&
	search_error "{\"query\":\"\"}" "parameter '"'"'query'"'"' must not be empty" &&
	search_error "{\"query\":\"  \"}" "parameter '"'"'query'"'"' must not be empty" &&
	search_error "{\"query\":\"$q\"}" "parameter '"'"'query'"'"' must be at most 10000 characters long" &&
	search_error "{\"query\":\"x\",\"mode\":\"brief\"}" "parameter '"'"'mode'"'"' must be one of [\"locate\",\"full\"]" &&
	search_error "{\"query\":\"x\",\"max_results\":0}" "parameter '"'"'max_results'"'"' must be from 1 to 200, got 0" &&
	search_error "{\"query\":\"x\",\"max_results\":201}" "parameter '"'"'max_results'"'"' must be from 1 to 200, got 201" &&
	search_error "{\"query\":\"x\",\"max_results\":\"5\"}" "parameter '"'"'max_results'"'"' must be a number" &&
	search_error "{\"query\":\"x\",\"min_score\":-0.1}" "parameter '"'"'min_score'"'"' must be from 0 to 1, got -0.1" &&
	search_error "{\"query\":\"x\",\"min_score\":1.5}" "parameter '"'"'min_score'"'"' must be from 0 to 1, got 1.5" &&
	search_error "{\"query\":\"x\",\"scope\":\"docs\"}" "parameter '"'"'scope'"'"' must be one of [\"impl\",\"test\",\"all\"]"
'

test_expect_success '.shaktiman/shaktiman.toml [search]: the defaults of mode, max_results, min_score' '
	mkdir repo/.shaktiman &&
	printf "[search]\nmax_results = 1\ndefault_mode = \"full\"\nmin_score = 0.05\n\n[context]\nenabled = true\n" \
		>repo/.shaktiman/shaktiman.toml &&
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" | ci-mcp --profile shaktiman >../out &&
	jq -c ".result.tools[0].inputSchema.properties | [.mode.default, .max_results.default, .min_score.default, .scope.default]" ../out >../actual &&
	echo "[\"full\",1,0.05,\"impl\"]" >../expect &&
	test_cmp ../expect ../actual &&
	search "{\"query\":\"reader parse header\"}" &&
	res_is ".structuredContent.mode == \"full\" and .structuredContent.count == 1 and
		(.structuredContent.results[0].content | type) == \"string\"" &&
	search "{\"query\":\"reader parse header\",\"mode\":\"locate\",\"max_results\":3}" &&
	res_is ".structuredContent.mode == \"locate\" and .structuredContent.count > 1" &&
	rm -r .shaktiman
'

test_expect_success 'a bad shaktiman.toml: the server does not start, and says which value' '
	mkdir repo/.shaktiman &&
	cd repo &&
	for bad in "max_results = 0" "max_results = 201" "max_results = \"5\"" "default_mode = \"brief\"" "min_score = 1.5" \
		"min_score = -0.1"; do
		printf "[search]\n%s\n" "$bad" >.shaktiman/shaktiman.toml &&
		exits 3 ci-mcp --profile shaktiman </dev/null 2>../err &&
		key=${bad%% *} &&
		grep "shaktiman.toml: config: search.$key must be" ../err || return 1
	done &&
	printf "[search\n" >.shaktiman/shaktiman.toml &&
	exits 3 ci-mcp --profile shaktiman </dev/null 2>../err &&
	grep "shaktiman.toml: 1:8: " ../err &&
	printf "search = 3\n" >.shaktiman/shaktiman.toml &&
	exits 3 ci-mcp --profile shaktiman </dev/null 2>../err &&
	grep "config: \[search\] must be a table" ../err &&
	rm -r .shaktiman
'

if command -v node >/dev/null 2>&1 && test -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json"; then
	test_expect_success 'the TypeScript SDK client: answers fit the outputSchemas, errors as documented' '
		cd repo && cat >../cases.json <<-\EOF &&
	[
	["search", {"query": "parse header"}, {"mode": "locate"}],
	["search", {"query": "parse header", "mode": "full", "explain": true, "path": "src/", "max_results": 5}, {"mode": "full"}],
	["search", {"query": "parse header", "scope": "test", "min_score": 0}, "ok"],
	["search", {"query": ""}, "isError"],
	["search", {"query": "x", "mode": "brief"}, "isError"],
	["search", {"query": "x", "max_results": 201}, "isError"],
	["search", {"query": "x", "min_score": 1.5}, "isError"],
	["search", {"query": "x", "scope": "docs"}, "isError"]
]
	EOF
		sdk_cases shaktiman
	'
else
	test_skip 'the TypeScript SDK client' "no node or no @modelcontextprotocol/sdk in $NODE_MODULES (scripts/setup installs them)"
fi

test_done
