#!/bin/sh
# ci-mcp: the JSON-RPC protocol, the tool table, argument validation, path
# confinement, and tools answered by the commands.
. "$(dirname "$0")/lib.sh"

# mcp <message>...: send the messages, one a line, and keep the responses
mcp() {
	printf '%s\n' "$@" | ci-mcp >out 2>err
}

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'

test_expect_success 'setup: a repository' '
	git init -q repo &&
	mkdir repo/src &&
	printf "def parse_header(line):\n    return line.split(\":\", 1)\n\n\nclass Reader:\n    def read(self):\n        return parse_header(\"a: b\")\n" >repo/src/reader.py &&
	printf "from src.reader import Reader\n\nREADER = Reader()\n" >repo/src/main.py &&
	echo secret >outside.txt &&
	ln -s ../outside.txt repo/link.txt &&
	cd repo && ci-index build 2>/dev/null
'

# Golden exchanges: tests/golden/ci-mcp/<case>/request, a JSON-RPC message a line,
# and response, what ci-mcp answers in the repository above (compared as JSON,
# line by line).  Only what ci-mcp answers itself (the protocol, validation, the
# built-in read), not the commands' records, whose owners may extend them.
# CI_MCP_REGEN=1 sh tests/t1000-mcp.sh rewrites the responses, for review with
# git diff.
for golden_dir_ in "$CI_SRC_DIR"/tests/golden/ci-mcp/*/; do
	golden_case_=$(basename "$golden_dir_")
	test_expect_success "golden exchange: $golden_case_" '
		cd repo &&
		ci-mcp <"$CI_SRC_DIR/tests/golden/ci-mcp/$golden_case_/request" >out 2>err &&
		test_must_be_empty err &&
		if test "${CI_MCP_REGEN:-}" = 1; then
			cp out "$CI_SRC_DIR/tests/golden/ci-mcp/$golden_case_/response"
		else
			test_cmp_json "$CI_SRC_DIR/tests/golden/ci-mcp/$golden_case_/response" out
		fi
	'
done

test_expect_success 'initialize negotiates the version and names the server' '
	cd repo && mcp "$init" &&
	jq -e ".id == 1 and .result.protocolVersion == \"2025-06-18\" and .result.serverInfo.name == \"ci\"
		and .result.capabilities.tools != null" out &&
	test_must_be_empty err
'

test_expect_success 'an older version the server knows is kept, an unknown one answered with the newest' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\"}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}" &&
	jq -r .result.protocolVersion out >actual &&
	printf "2024-11-05\n2025-06-18\n" >expect && test_cmp expect actual
'

test_expect_success 'notifications get no answer; ping gets an empty result' '
	cd repo &&
	mcp "$init" "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}" &&
	test_line_count = 2 out &&
	jq -c "select(.id == \"p\") | .result" out >actual && echo "{}" >expect && test_cmp expect actual
'

test_expect_success 'tools/list is the table, with input schemas' '
	cd repo && mcp "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" &&
	jq -r ".result.tools[].name" out >actual &&
	ci-mcp --list-tools | jq -r ".tools[].name" >expect &&
	test_cmp expect actual &&
	jq -e "[.result.tools[] | .inputSchema.type == \"object\" and (.description | length > 20)] | all" out
'

test_expect_success 'JSON-RPC errors have the standard codes' '
	cd repo &&
	mcp "not json" "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}" "[1,2]" \
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}" &&
	jq -r .error.code out >actual &&
	printf "%s\n" -32700 -32601 -32600 -32602 >expect && test_cmp expect actual
'

test_expect_success 'search answers with hits and a summary in structuredContent' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"parse_header\"}}}" &&
	jq -e ".result.structuredContent.results[0]._type == \"hit\" and
		.result.structuredContent.results[0].name == \"parse_header\" and
		(.result.structuredContent.results | last | ._type) == \"summary\" and
		(.result.content[0].text | fromjson | .count) == .result.structuredContent.count" out
'

test_expect_success 'a bad argument is a tool error naming the parameter and the range' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"x\",\"limit\":0}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"x\",\"mode\":\"magic\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"x\",\"bogus\":1}}}" &&
	jq -r "select(.result.isError) | .result.content[0].text" out >actual &&
	cat >expect <<-\EOF &&
	parameter '"'"'limit'"'"' must be from 1 to 200, got 0
	missing required parameter '"'"'query'"'"'
	parameter '"'"'mode'"'"' must be one of ["hybrid","keyword","semantic"]
	unknown parameter '"'"'bogus'"'"'
	EOF
	test_cmp expect actual
'

test_expect_success 'read: a range of lines with numbers' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"src/reader.py\",\"start_line\":5,\"end_line\":6}}}" &&
	jq -r ".result.structuredContent.text" out >actual &&
	printf "     5\tclass Reader:\n     6\t    def read(self):\n\n" >expect && test_cmp expect actual
'

test_expect_success 'read: paths outside the repository are refused' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"../outside.txt\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"link.txt\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"/etc/passwd\"}}}" &&
	jq -e "[.result.isError] == [true]" out >/dev/null &&
	jq -r ".result.content[0].text" out >actual &&
	! grep -q secret actual && ! grep -q root: actual &&
	test_grep "outside the repository" actual &&
	test_line_count = 3 actual
'

test_expect_success 'symbols of a file, and references, answered by ci-refs' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/call\",\"params\":{\"name\":\"symbols\",\"arguments\":{\"file\":\"src/reader.py\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/call\",\"params\":{\"name\":\"references\",\"arguments\":{\"symbol\":\"parse_header\",\"type\":\"references\"}}}" &&
	jq -r "select(.id == 14) | .result.structuredContent.results[].name" out >actual &&
	printf "parse_header\nReader\nread\n" >expect && test_cmp expect actual &&
	jq -r "select(.id == 15) | .result.structuredContent.results[] | \"\(.path):\(.line) \(.type)\"" out >actual &&
	echo "src/reader.py:7 reference" >expect && test_cmp expect actual
'

test_expect_success 'nothing found is a result with a message, not an error' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"tools/call\",\"params\":{\"name\":\"references\",\"arguments\":{\"symbol\":\"no_such_symbol\"}}}" &&
	jq -e ".result.isError != true and .result.structuredContent.count == 0 and
		(.result.structuredContent.message | test(\"no occurrences\"))" out
'

test_expect_success 'the index is updated before a tool that reads it' '
	cd repo &&
	printf "def brand_new_function():\n    pass\n" >src/new.py &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"tools/call\",\"params\":{\"name\":\"symbols\",\"arguments\":{\"query\":\"brand_new_function\"}}}" &&
	jq -e ".result.structuredContent.results[0].path == \"src/new.py\"" out
'

test_expect_success 'status' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"tools/call\",\"params\":{\"name\":\"status\",\"arguments\":{}}}" &&
	jq -e ".result.structuredContent.results[0] | ._type == \"status\" and .files >= 3 and .chunks > 0" out
'

test_expect_success 'the output cap truncates with a marker' '
	cd repo &&
	awk "BEGIN { for (i = 0; i < 500; i++) print \"line number\", i }" >big.txt &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"line number\",\"fixed_string\":true}}}" |
	ci-mcp --max-output 1024 >out &&
	jq -e ".result.structuredContent.truncated == true" out
'

test_expect_success 'a search cut short by a limit: its records, marked incomplete, with the message' '
	cd repo &&
	printf "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n" >aaa.txt &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"(a+)+\$|^class Reader\"}}}" &&
	rm aaa.txt &&
	jq -e ".result.isError != true and .result.structuredContent.incomplete == true and
		[.result.structuredContent.results[].path] == [\"src/reader.py\"] and
		(.result.structuredContent.message | test(\"^ci-grep: warning: aaa.txt: .*incomplete\"))" out
'

# json_true <filter> <file>: the filter gives something for some record of the
# file, and only true (jq 1.6 -e looks at the last input only)
json_true() {
	jq -n -e "[inputs | $1] | length > 0 and all" "$2"
}

# ---- several requests in flight, cancellation, progress, logging, time limit ----

# a table with a slow tool that writes its pid beside the repository
cat >"$TEST_TMP/slow.json" <<\EOF2
{"tools": [
 {"name": "sleep", "description": "sleep a while, then say so",
  "inputSchema": {"type": "object", "properties": {"seconds": {"type": "integer", "minimum": 0, "maximum": 100}},
		  "required": ["seconds"]},
  "argv": [["sh", "-c", "echo $$ >../sleep.pid; sleep \"$0\"; echo '{\"_type\":\"slept\"}'", "{seconds}"]]},
 {"name": "grep", "description": "ci-grep", "inputSchema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
  "argv": [["ci-grep", "--json", "-e", "{pattern}"]]}
]}
EOF2
sleep1='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":1},"_meta":{"progressToken":"tok"}}}'
sleep30='{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"sleep","arguments":{"seconds":30}}}'
cancel30='{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"the user gave up"}}'
ping9='{"jsonrpc":"2.0","id":9,"method":"ping"}'

test_expect_success 'a ping is answered while a slow call runs; the call then answers' '
	cd repo &&
	printf "%s\n" "$sleep1" "$ping9" | ci-mcp --table "$TEST_TMP/slow.json" >out 2>err &&
	jq -c "select(.id) | .id" out >actual &&
	printf "9\n1\n" >expect && test_cmp expect actual &&
	json_true "select(.id == 1) | .result.structuredContent.results == [{\"_type\":\"slept\"}]" out &&
	test_must_be_empty err
'

test_expect_success 'progress notifications carry the token and increase' '
	cd repo &&
	jq -c "select(.method == \"notifications/progress\") | .params" out >progress &&
	test_line_count -ge 1 progress &&
	jq -c "select(.progressToken != \"tok\")" progress >bad; test_must_be_empty bad &&
	jq -s -e "[.[].progress] | . == (sort | unique)" progress &&
	head -n 1 progress | jq -e ".message == \"running sh\""
'

test_expect_success 'notifications/cancelled kills the call and nothing answers it' '
	cd repo && rm -f ../sleep.pid &&
	{
		printf "%s\n" "$sleep30" &&
		i=0 && while ! test -s ../sleep.pid && test $i -lt 300; do sleep 0.1; i=$((i + 1)); done &&
		printf "%s\n" "$cancel30" "$ping9"
	} | ci-mcp --table "$TEST_TMP/slow.json" >out 2>err &&
	jq -c . out >actual && echo "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}" >expect &&
	test_cmp expect actual &&
	! kill -0 "$(cat ../sleep.pid)" 2>/dev/null
'

test_expect_success 'a call over the time limit is a tool error, its process killed' '
	cd repo && rm -f ../sleep.pid &&
	printf "%s\n" "$sleep30" | ci-mcp --timeout 1 --table "$TEST_TMP/slow.json" >out &&
	jq -e ".id == \"long\" and .result.isError and (.result.content[0].text | test(\"within 1 seconds\"))" out &&
	! kill -0 "$(cat ../sleep.pid)" 2>/dev/null
'

test_expect_success 'logging/setLevel: notifications/message at that level and above' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"parse_header\"}}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}" |
	ci-mcp --table "$TEST_TMP/slow.json" >out 2>err &&
	json_true "select(.method == \"notifications/message\") | .params |
		.level == \"debug\" and .logger == \"ci-mcp\" and .data == \"run ci-grep '"'"'--json'"'"' '"'"'-e'"'"' '"'"'parse_header'"'"'\"" out &&
	json_true "select(.id == 3) | .error.code == -32602" out &&
	test_must_be_empty err
'

test_expect_success 'without logging/setLevel nothing but answers is sent' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"parse_header\"}}}" |
	ci-mcp --table "$TEST_TMP/slow.json" >out 2>err &&
	test_line_count = 1 out && test_must_be_empty err
'

test_expect_success 'a request id in use by a running call is refused' '
	cd repo &&
	printf "%s\n" "$sleep1" "$sleep1" | ci-mcp --table "$TEST_TMP/slow.json" >out &&
	jq -c "[.id, (.error.code // \"ok\")]" out | grep -v null >actual &&
	printf "%s\n" "[1,-32600]" "[1,\"ok\"]" >expect && test_cmp expect actual
'

# ---- the rest of ci's tool set: history, related, read at a ref ----

test_expect_success 'setup: history' '
	cd repo &&
	git add src && git commit -qm "reader: parse_header and Reader" &&
	printf "\ndef extra():\n    return 1\n" >>src/reader.py &&
	printf "\nEXTRA = 1\n" >>src/main.py &&
	git add src && git commit -qm "reader: extra, used by main"
'

test_expect_success 'history: a file, and commit search' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"file\":\"src/reader.py\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"query\":\"extra\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{}}}" &&
	jq -r "select(.id == 1) | .result.structuredContent.results[] | select(._type == \"commit\") | .message" out >actual &&
	printf "reader: extra, used by main\nreader: parse_header and Reader\n" >expect && test_cmp expect actual &&
	jq -r "select(.id == 2) | .result.structuredContent.results[] | select(._type == \"commit\") | .message" out >actual &&
	echo "reader: extra, used by main" >expect && test_cmp expect actual &&
	jq -r "select(.id == 3) | .result | select(.isError) | .content[0].text" out >actual &&
	echo "give one of these parameters: file, query" >expect && test_cmp expect actual
'

test_expect_success 'related: files that change together' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"related\",\"arguments\":{\"file\":\"src/main.py\"}}}" &&
	jq -r ".result.structuredContent.results[] | select(._type == \"coupling\") | .b" out >actual &&
	test_grep -x src/reader.py actual && ! grep -x src/main.py actual
'

test_expect_success 'read at a ref: the file as it was, through git' '
	cd repo &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"src/reader.py\",\"ref\":\"HEAD~1\",\"start_line\":7}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"src/reader.py\",\"ref\":\"HEAD~1\",\"start_line\":9}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"src/gone.py\",\"ref\":\"HEAD\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"src/reader.py\",\"ref\":\"nope\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"../outside.txt\",\"ref\":\"HEAD\"}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"src\"}}}" &&
	jq -r "select(.id == 1) | .result.structuredContent | \"\(.ref) \(.start_line)-\(.end_line) of \(.total_lines)\"" out >actual &&
	echo "HEAD~1 7-7 of 7" >expect && test_cmp expect actual &&
	jq -r "select(.id > 1) | .result | select(.isError) | .content[0].text" out >actual &&
	cat >expect <<-\EOF2 &&
	parameter '"'"'start_line'"'"' must be from 1 to 7 (the lines of '"'"'src/reader.py'"'"'), got 9
	parameter '"'"'path'"'"': '"'"'src/gone.py'"'"' does not exist at '"'"'HEAD'"'"'
	parameter '"'"'ref'"'"': '"'"'nope'"'"' is not a branch, tag or commit of the repository
	parameter '"'"'path'"'"': '"'"'../outside.txt'"'"' is outside the repository
	parameter '"'"'path'"'"': '"'"'src'"'"' is a directory, not a file
	EOF2
	test_cmp expect actual
'

test_expect_success 'status refresh: the index sees a new file at once' '
	cd repo &&
	printf "def newest():\n    pass\n" >src/newest.py &&
	mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"status\",\"arguments\":{\"refresh\":true}}}" \
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"symbols\",\"arguments\":{\"query\":\"newest\"}}}" &&
	json_true "select(.id == 1) | .result.structuredContent.results[0]._type == \"status\"" out &&
	json_true "select(.id == 2) | .result.structuredContent.results[0].path == \"src/newest.py\"" out
'

# ---- an index that is not there yet ----

test_expect_success 'without an index: search answers lexically at once and says the index is being built' '
	git init -q fresh &&
	printf "def parse_header(line):\n    return line\n" >fresh/a.py &&
	cd fresh &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"how is the header parsed: parse_header\"}}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"impact\",\"arguments\":{\"target\":\"a.py\"}}}" |
	ci-mcp --wait 0 >out 2>err &&
	json_true "select(.id == 1) | .result.structuredContent |
		(.preparing | test(\"index is being built\")) and .results[0]._type == \"match\" and .results[0].path == \"a.py\"" out &&
	json_true "select(.id == 2) | .result | (.isError | not) and .structuredContent.count == 0 and
		(.structuredContent.preparing | test(\"index is being built\"))" out &&
	test_must_be_empty err &&
	ci-index status >status && jq -e ".languages.python == 1" status
'

test_expect_success 'without an index and time to wait: ranked results' '
	git init -q fresh2 &&
	printf "def parse_header(line):\n    return line\n" >fresh2/a.py &&
	cd fresh2 &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"parse_header\"}}}" |
	ci-mcp --wait 600 >out &&
	jq -e ".result.structuredContent | (has(\"preparing\") | not) and .results[0]._type == \"hit\"" out
'

test_expect_success 'an index that cannot be built: lexical results that say why' '
	cd fresh2 &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"parse_header\"}}}" |
	CI_INDEX=$TRASH_DIRECTORY/no/such/dir/index.db ci-mcp --wait 600 >out 2>err &&
	json_true ".result.structuredContent | (.preparing | test(\"could not be built\")) and .results[0]._type == \"match\"" out &&
	test_must_be_empty err
'

# ---- the table ----

test_expect_success '--list-tools --profile ci; an unknown profile is a usage error' '
	ci-mcp --list-tools --profile ci >a.json &&
	ci-mcp --list-tools >b.json && test_cmp a.json b.json &&
	jq -r ".tools[].name" a.json >actual &&
	printf "%s\n" search grep symbols references read context related impact callers callees trace dead arch history status >expect &&
	test_cmp expect actual &&
	test_status 2 ci-mcp --list-tools --profile nope 2>err &&
	test_grep "unknown profile '"'"'nope'"'"' (known: ci, kit, shaktiman, abstract, codebase-context, bobbin)" err
'

test_expect_success 'every tool has an outputSchema its answers fit (required keys present)' '
	jq -e "[.tools[] | .outputSchema.type == \"object\"] | all" a.json
'

test_expect_success '--table: a broken table is refused with its position' '
	echo "{\"tools\": [" >bad.json &&
	test_status 3 ci-mcp --table bad.json --list-tools 2>err &&
	test_grep "bad.json:2:" err &&
	echo "{\"tools\": [{\"name\": \"x\", \"description\": \"d\", \"inputSchema\": {\"type\": \"object\", \"properties\": {}}}]}" >bad.json &&
	test_status 3 ci-mcp --table bad.json --list-tools 2>err &&
	test_grep "neither" err
'

# ---- malformed input never crashes or hangs the server ----

test_expect_success 'malformed messages: each answered with an error, the server goes on' '
	cd repo &&
	{
		printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/ca" \
			"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}" \
			"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":[]}" \
			"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":5}}" \
			"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":\"x\"}}" \
			"{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}" \
			"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":7}" \
			"\"just a string\"" "null" "" "   " &&
		printf "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"x\":\"\377\376\"}\n" &&
		printf "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\r\n" &&
		printf "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"\\\\u0000\"}}}\n"
	} | ci-mcp >out 2>err &&
	jq -c "[.id, .error.code // .result.isError]" out >actual &&
	cat >expect <<-\EOF2 &&
	[null,-32700]
	[null,-32600]
	[3,-32602]
	[4,-32602]
	[5,-32602]
	[6,-32600]
	[7,-32600]
	[null,-32600]
	[null,-32600]
	[null,-32700]
	[10,null]
	[11,true]
	EOF2
	test_cmp expect actual &&
	test_must_be_empty err
'

test_expect_success 'a 10 MB line and random bytes: errors, no crash, no hang' '
	cd repo &&
	awk "BEGIN { srand(7); for (i = 0; i < 2000; i++) { s = \"\"; for (j = 0; j < 50; j++) s = s sprintf(\"%c\", 1 + int(rand() * 254)); print s } }" >noise &&
	{
		printf "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" &&
		head -c 10485760 /dev/zero | tr "\\000" a &&
		printf "\"}}\n" &&
		head -c 10485760 /dev/zero | tr "\\000" "{" && echo &&
		cat noise &&
		printf "%s\n" "$ping9"
	} | ci-mcp >out 2>err &&
	jq -c "select(.id == 1 or .id == 9) | .result" out >actual &&
	printf "{}\n{}\n" >expect && test_cmp expect actual &&
	json_true "select(.id == null) | .error.code == -32700 or .error.code == -32600" out >/dev/null &&
	test_must_be_empty err
'

test_expect_code 2 'usage error: an argument' '
	ci-mcp extra 2>err
'

test_done
