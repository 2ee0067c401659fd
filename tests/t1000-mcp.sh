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

test_expect_code 2 'usage error: an argument' '
	ci-mcp extra 2>err
'

test_done
