#!/bin/sh
# ci-mcp --profile abstract: the abstract code-search contract
# (seeds/abstract-code-search.md) over raw JSON-RPC, two repositories given with
# --repo: every tool with its documented parameters and defaults, every
# documented response field with its type and from the repository asked for,
# and each invalid argument the contract mentions.
. "$(dirname "$0")/lib.sh"
NODE_MODULES=${CI_NODE_MODULES:-$CI_SRC_DIR/deps/node/node_modules}

# call <tool> <arguments>: one tools/call; its result in out, structuredContent in sc
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" |
	ci-mcp --profile abstract --repo one="$TRASH_DIRECTORY/one" --repo two="$TRASH_DIRECTORY/two" \
		>"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
	jq -c .result.structuredContent "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/sc"
}

# sc_is <jq condition>: the structuredContent meets it (shown when not)
sc_is() {
	jq -e "$1" "$TRASH_DIRECTORY/sc" >/dev/null ||
	{ echo "structuredContent fails: $1" >&7; cat "$TRASH_DIRECTORY/out" >&7; return 1; }
}

# tool_error <tool> <arguments> <message>: an MCP tool error with this text
tool_error() {
	call "$1" "$2" &&
	jq -r ".result.isError, .result.content[0].text" "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/actual" &&
	printf "true\n%s\n" "$3" >"$TRASH_DIRECTORY/expect" &&
	test_cmp "$TRASH_DIRECTORY/expect" "$TRASH_DIRECTORY/actual"
}

test_expect_success 'setup: two repositories with an index each' '
	git init -q one && mkdir one/src &&
	printf "package shapes\n\n// Circle is round.\nclass Circle {\n  def area(): Double = 3.14\n}\n" >one/src/Circle.scala &&
	printf "syntax = \"proto3\";\nmessage Circle {\n  double radius = 1;\n}\n" >one/src/circle.proto &&
	printf "def parse_header(line):\n    return line\n\n\nclass Reader:\n    pass\n" >one/src/reader.py &&
	git init -q two &&
	printf "def parse_header(line):\n    # two: header\n    return line.strip()\n" >two/header.py &&
	for r in one two; do
		(cd $r && git add . && git -c user.name=t -c user.email=t@t commit -qm init && ci-index build 2>/dev/null) || return 1
	done
'

test_expect_success 'tools/list: the three tools, their parameters, types and defaults' '
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" |
	ci-mcp --profile abstract --repo one=one >out &&
	jq -c ".result.tools[] | {name, required: .inputSchema.required, params: [.inputSchema.properties | to_entries[] |
		[.key, .value.type, .value.items.type, .value.enum, .value.default]]}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"search_code","required":["keywords"],"params":[["keywords","array","string",null,null],["repo","string",null,null,null],["match","string",null,["file","path"],"file"],["extension","string",null,null,null],["limit","integer",null,null,50]]}
	{"name":"get_file","required":["repo","path"],"params":[["repo","string",null,null,null],["path","string",null,null,null],["branch","string",null,null,null],["match_string","string",null,null,null],["start_line","integer",null,null,null],["end_line","integer",null,null,null]]}
	{"name":"search_symbols","required":["symbol"],"params":[["symbol","string",null,null,null],["repo","string",null,null,null],["kind","string",null,["class","function","interface","type","variable"],null]]}
	EOF
	test_cmp expect actual
'

test_expect_success 'search_code: every field with its type, from the repository asked for' '
	call search_code "{\"keywords\":[\"PARSE_HEADER\"]}" &&
	sc_is ".total == 1 and [.results[] | .file_path, .repo] == [\"src/reader.py\", \"one\"]" &&
	sc_is ".results[0].matches == [{line_number: 1, content: \"def parse_header(line):\"}]" &&
	call search_code "{\"keywords\":[\"parse_header\",\"header\"],\"repo\":\"two\"}" &&
	sc_is ".total == 1 and .results[0].repo == \"two\" and .results[0].file_path == \"header.py\" and
		[.results[0].matches[].line_number] == [1, 2]" &&
	sc_is "[.results[] | (.file_path | type) == \"string\" and (.repo | type) == \"string\" and
		(.matches | type) == \"array\" and all(.matches[]; (.line_number | type) == \"number\" and (.content | type) == \"string\")] | all"
'

test_expect_success 'search_code: files whose search a limit cut short: results kept, with a warning' '
	awk "BEGIN { while (n++ < 5000) printf \"xxxxxxxxxxxxxxxxxxxx\"; print \" circle\" }" >one/long.txt &&
	(CI_GREP_FILE_TIME_MS=0 && export CI_GREP_FILE_TIME_MS &&
	 call search_code "{\"keywords\":[\"circle\"],\"repo\":\"one\"}") &&
	jq -e ".result.isError != true" out &&
	sc_is ".warning == \"results may be incomplete: the regular expression hit the backtracking limit or the time limit in long.txt\"" &&
	sc_is "[.results[].file_path] == [\"src/Circle.scala\", \"src/circle.proto\"]" &&
	rm one/long.txt &&
	call search_code "{\"keywords\":[\"circle\"],\"repo\":\"one\"}" &&
	sc_is "has(\"warning\") | not"
'

test_expect_success 'search_code: extension, match path, limit, nothing found' '
	call search_code "{\"keywords\":[\"circle\"],\"extension\":\"proto\"}" &&
	sc_is "[.results[].file_path] == [\"src/circle.proto\"]" &&
	call search_code "{\"keywords\":[\"circle\"],\"extension\":\".scala\"}" &&
	sc_is "[.results[].file_path] == [\"src/Circle.scala\"]" &&
	call search_code "{\"keywords\":[\"circle\"],\"match\":\"path\"}" &&
	sc_is "[.results[].file_path] == [\"src/Circle.scala\", \"src/circle.proto\"] and .total == 2" &&
	call search_code "{\"keywords\":[\"circle\"],\"limit\":1}" &&
	sc_is "(.results | length) == 1 and .total == 2" &&
	call search_code "{\"keywords\":[\"a.c\"]}" &&
	sc_is ". == {results: [], total: 0}"
'

test_expect_success 'get_file: path, content, language, size_bytes; lines; match_string' '
	call get_file "{\"repo\":\"two\",\"path\":\"header.py\"}" &&
	printf "def parse_header(line):\n    # two: header\n    return line.strip()\n" >expect &&
	jq -j .content sc >actual && test_cmp expect actual &&
	sc_is ".path == \"header.py\" and .language == \"python\" and .size_bytes == $(wc -c <expect)" &&
	call get_file "{\"repo\":\"one\",\"path\":\"src/Circle.scala\",\"start_line\":4,\"end_line\":5}" &&
	sc_is ".content == \"class Circle {\n  def area(): Double = 3.14\n\" and .language == \"scala\" and (.size_bytes | type) == \"number\"" &&
	call get_file "{\"repo\":\"one\",\"path\":\"src/Circle.scala\",\"start_line\":5}" &&
	sc_is ".content == \"  def area(): Double = 3.14\n}\n\"" &&
	call get_file "{\"repo\":\"one\",\"path\":\"src/circle.proto\",\"match_string\":\"radius\",\"branch\":\"HEAD\"}" &&
	sc_is "(.content | contains(\"double radius = 1;\")) and .language == \"protobuf\""
'

test_expect_success 'get_file: a tag or commit reads the file there; HEAD and the checked-out branch the work tree' '
	branch=$(git -C one symbolic-ref --short HEAD) &&
	git -C one tag v1 &&
	printf "def parse_header(line):\n    return line.upper()\n" >one/src/reader.py &&
	call get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"branch\":\"v1\",\"start_line\":2,\"end_line\":2}" &&
	sc_is ".content == \"    return line\\n\"" &&
	call get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"branch\":\"$(git -C one rev-parse v1)\",\"match_string\":\"class\"}" &&
	sc_is ".content | contains(\"class Reader:\")" &&
	for b in HEAD "$branch" "refs/heads/$branch"; do
		call get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"branch\":\"$b\"}" &&
		sc_is ".content == \"def parse_header(line):\\n    return line.upper()\\n\"" || return 1
	done &&
	git -C one checkout -q src/reader.py
'

test_expect_success 'search_symbols: every field with its type, kind, repo' '
	call search_symbols "{\"symbol\":\"parse_header\",\"repo\":\"two\"}" &&
	sc_is ".symbols[0] == {name: \"parse_header\", kind: \"function\", file_path: \"header.py\", line_number: 1, repo: \"two\"}" &&
	call search_symbols "{\"symbol\":\"Reader\",\"kind\":\"class\"}" &&
	sc_is "[.symbols[] | .name, .kind, .file_path, .repo] == [\"Reader\", \"class\", \"src/reader.py\", \"one\"]" &&
	call search_symbols "{\"symbol\":\"Reader\",\"kind\":\"function\"}" &&
	sc_is "[.symbols[] | select(.name == \"Reader\")] == []"
'

test_expect_success 'each invalid argument is a tool error saying why' '
	tool_error search_code "{\"keywords\":[\"x\"],\"repo\":\"three\"}" \
		"parameter '"'"'repo'"'"': unknown repository '"'"'three'"'"' (known: one, two)" &&
	tool_error get_file "{\"repo\":\"three\",\"path\":\"a\"}" \
		"parameter '"'"'repo'"'"': unknown repository '"'"'three'"'"' (known: one, two)" &&
	tool_error search_symbols "{\"symbol\":\"x\",\"repo\":\"three\"}" \
		"parameter '"'"'repo'"'"': unknown repository '"'"'three'"'"' (known: one, two)" &&
	tool_error search_code "{\"keywords\":[]}" "parameter '"'"'keywords'"'"' must not be empty" &&
	tool_error search_code "{\"keywords\":\"x\"}" "parameter '"'"'keywords'"'"' must be an array" &&
	tool_error search_code "{\"repo\":\"one\"}" "missing required parameter '"'"'keywords'"'"'" &&
	tool_error search_code "{\"keywords\":[\"x\"],\"match\":\"name\"}" \
		"parameter '"'"'match'"'"' must be one of [\"file\",\"path\"]" &&
	tool_error search_code "{\"keywords\":[\"x\"],\"extension\":\"../*\"}" \
		"parameter '"'"'extension'"'"': '"'"'../*'"'"' is not a file extension such as scala" &&
	tool_error search_code "{\"keywords\":[\"x\"],\"limit\":0}" "parameter '"'"'limit'"'"' must be from 1 to 1000, got 0" &&
	tool_error get_file "{\"path\":\"header.py\"}" "missing required parameter '"'"'repo'"'"'" &&
	tool_error get_file "{\"repo\":\"two\",\"path\":\"../one/src/reader.py\"}" \
		"parameter '"'"'path'"'"': '"'"'../one/src/reader.py'"'"' is outside the repository" &&
	tool_error get_file "{\"repo\":\"two\",\"path\":\"src/reader.py\"}" \
		"parameter '"'"'path'"'"': '"'"'src/reader.py'"'"' does not exist" &&
	tool_error get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"branch\":\"nosuch\"}" \
		"parameter '"'"'ref'"'"': '"'"'nosuch'"'"' is not a branch, tag or commit of the repository" &&
	tool_error get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"start_line\":3,\"end_line\":2}" \
		"parameter '"'"'end_line'"'"' (2) must not be before '"'"'start_line'"'"' (3)" &&
	tool_error get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"start_line\":0}" \
		"parameter '"'"'start_line'"'"' must be at least 1, got 0" &&
	tool_error get_file "{\"repo\":\"one\",\"path\":\"src/reader.py\",\"match_string\":\"nowhere\"}" \
		"parameter '"'"'match_string'"'"': '"'"'nowhere'"'"' is not in '"'"'src/reader.py'"'"'" &&
	tool_error search_symbols "{\"symbol\":\"x\",\"kind\":\"method\"}" \
		"parameter '"'"'kind'"'"' must be one of [\"class\",\"function\",\"interface\",\"type\",\"variable\"]"
'

test_expect_success 'without --repo: the current repository under its directory name' '
	cd two &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_code\",\"arguments\":{\"keywords\":[\"strip\"]}}}" |
	ci-mcp --profile abstract >../out &&
	jq -e ".result.structuredContent.results[0] | .repo == \"two\" and .file_path == \"header.py\"" ../out
'

test_expect_code 2 '--repo without name=dir is a usage error' '
	ci-mcp --profile abstract --repo one </dev/null
'

if command -v node >/dev/null 2>&1 && test -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json"; then
	test_expect_success 'the TypeScript SDK client: answers fit the outputSchemas, errors as documented' '
		cat >cases.json <<-\EOF &&
	[
	["search_code", {"keywords": ["parse_header"]}, {"total": 1}],
	["search_code", {"keywords": ["parse_header", "header"], "repo": "two", "match": "file", "extension": "py", "limit": 5}, {"total": 1}],
	["search_code", {"keywords": ["circle"], "match": "path"}, {"total": 2}],
	["search_code", {"keywords": ["a.c"]}, {"results": [], "total": 0}],
	["get_file", {"repo": "two", "path": "header.py"}, {"path": "header.py", "language": "python"}],
	["get_file", {"repo": "one", "path": "src/Circle.scala", "start_line": 4, "end_line": 5, "branch": "HEAD"}, {"content": "class Circle {\n  def area(): Double = 3.14\n"}],
	["get_file", {"repo": "one", "path": "src/circle.proto", "match_string": "radius"}, "ok"],
	["search_symbols", {"symbol": "Reader", "kind": "class"}, "ok"],
	["search_symbols", {"symbol": "parse_header", "repo": "two"}, {"symbols": [{"name": "parse_header", "kind": "function", "file_path": "header.py", "line_number": 1, "repo": "two"}]}],
	["search_code", {"keywords": ["x"], "repo": "three"}, "isError"],
	["search_code", {"keywords": []}, "isError"],
	["search_code", {"keywords": "x"}, "isError"],
	["search_code", {"keywords": ["x"], "match": "name"}, "isError"],
	["search_code", {"keywords": ["x"], "extension": "../*"}, "isError"],
	["search_code", {"keywords": ["x"], "limit": 0}, "isError"],
	["get_file", {"path": "header.py"}, "isError"],
	["get_file", {"repo": "two", "path": "../one/src/reader.py"}, "isError"],
	["get_file", {"repo": "two", "path": "src/reader.py"}, "isError"],
	["get_file", {"repo": "one", "path": "src/reader.py", "branch": "nosuch"}, "isError"],
	["get_file", {"repo": "one", "path": "src/reader.py", "start_line": 3, "end_line": 2}, "isError"],
	["get_file", {"repo": "one", "path": "src/reader.py", "match_string": "nowhere"}, "isError"],
	["search_symbols", {"symbol": "x", "repo": "three"}, "isError"],
	["search_symbols", {"symbol": "x", "kind": "method"}, "isError"]
]
	EOF
		node "$CI_SRC_DIR/tests/mcp-sdk-profile.mjs" "$NODE_MODULES" "$CI_BUILD_DIR/ci-mcp" abstract cases.json \
			--repo one="$TRASH_DIRECTORY/one" --repo two="$TRASH_DIRECTORY/two" >sdk.out &&
		test_line_count = "$(jq length cases.json)" sdk.out
	'
else
	test_skip 'the TypeScript SDK client' "no node or no @modelcontextprotocol/sdk in $NODE_MODULES (scripts/setup installs them)"
fi

test_done
