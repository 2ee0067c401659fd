#!/bin/sh
# t0946-graph-mcp: ci-mcp's default profile (ci) serves the resolved code
# graph as tools: callers, callees, trace, dead, arch, each a pipeline of
# ci-refs (share/mcp/ci.json); their parameters, their records, "nothing
# found" as a message, and bad arguments as tool errors naming the parameter.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'graph tools' 'the python grammar is not compiled in'
	test_done
fi

# call <tool> <arguments>: one tools/call; its result in out, structuredContent in sc
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" |
	(cd "$TRASH_DIRECTORY/repo" && ci-mcp) >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
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

test_expect_success 'setup: a handler, a service, a store, an unused function' '
	git init -q repo && mkdir repo/web repo/svc &&
	printf "from svc.core import save\n\n\n@route(\"/\")\ndef handle(req):\n    return save(req)\n" >repo/web/app.py &&
	printf "def save(x):\n    return put(x)\n\n\ndef put(x):\n    return x\n\n\ndef unused():\n    return 0\n" >repo/svc/core.py &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'tools/list: the graph tools with their parameters and defaults' '
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" | (cd repo && ci-mcp) >out &&
	jq -c ".result.tools[] | select(.name | IN(\"callers\", \"callees\", \"trace\", \"dead\", \"arch\")) |
		{name, required: .inputSchema.required, params: [.inputSchema.properties | to_entries[] | [.key, .value.type, .value.default]]}" out >actual &&
	cat >expect <<-\EOF &&
	{"name":"callers","required":["symbol"],"params":[["symbol","string",null],["depth","integer",1],["limit","integer",50]]}
	{"name":"callees","required":["symbol"],"params":[["symbol","string",null],["depth","integer",1],["limit","integer",50]]}
	{"name":"trace","required":["from","to"],"params":[["from","string",null],["to","string",null],["depth","integer",8],["limit","integer",10]]}
	{"name":"dead","required":null,"params":[["kind","string",null],["path","string",null],["limit","integer",50]]}
	{"name":"arch","required":null,"params":[["path","string",null],["limit","integer",100]]}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers and callees: calls bound to their definitions' '
	call callers "{\"symbol\":\"save\"}" &&
	sc_is ".count == 1 and .results[0].path == \"web/app.py\" and .results[0].binding == \"import\" and
		.results[0].definition == {path: \"svc/core.py\", line: 1}" &&
	call callees "{\"symbol\":\"save\"}" &&
	sc_is ".count == 1 and .results[0].name == \"put\" and .results[0].binding == \"local\"" &&
	call callers "{\"symbol\":\"put\",\"depth\":2}" &&
	sc_is "[.results[] | [.depth, .scope, .name]] == [[1, \"save\", \"put\"], [2, \"handle\", \"save\"]]"
'

test_expect_success 'trace: the path from handle to put, hop by hop' '
	call trace "{\"from\":\"handle\",\"to\":\"put\"}" &&
	sc_is ".count == 1 and .results[0]._type == \"trace\" and
		[.results[0].hops[] | \"\\(.name)@\\(.path):\\(.line)\"] == [\"handle@web/app.py:5\", \"save@svc/core.py:1\", \"put@svc/core.py:5\"]" &&
	call trace "{\"from\":\"put\",\"to\":\"handle\"}" &&
	sc_is ".count == 0 and (.message | test(\"no call path from .put. to .handle.\"))"
'

test_expect_success 'dead: the unused function, with its reason, not the decorated route; path narrows' '
	call dead "{}" &&
	sc_is "[.results[] | [.name, .reason]] == [[\"unused\", \"unreferenced\"]]" &&
	call dead "{\"path\":\"web\"}" &&
	sc_is ".count == 0 and (.message | test(\"nothing unreached\"))"
'

test_expect_success 'arch: packages, edges, a cluster' '
	call arch "{}" &&
	sc_is "[.results[] | select(._type == \"package\") | .name] == [\"web\", \"svc\"]" &&
	sc_is "[.results[] | select(._type == \"package_edge\") | [.from, .to, .imports, .calls, .back]] == [[\"web\", \"svc\", 1, 1, false]]" &&
	sc_is "[.results[] | select(._type == \"arch_cluster\") | .files] == [[\"svc/core.py\", \"web/app.py\"]]"
'

test_expect_success 'bad arguments are tool errors naming the parameter' '
	tool_error trace "{\"from\":\"handle\"}" "missing required parameter '"'"'to'"'"'" &&
	tool_error trace "{\"from\":\"handle\",\"to\":\"put\",\"depth\":31}" "parameter '"'"'depth'"'"' must be from 1 to 30, got 31" &&
	tool_error dead "{\"kind\":\"function\",\"bogus\":1}" "unknown parameter '"'"'bogus'"'"'"
'

test_done
