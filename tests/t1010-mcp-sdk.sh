#!/bin/sh
# ci-mcp driven by the official MCP TypeScript SDK client, over stdio and over
# Streamable HTTP: initialize, tools/list, every tool with valid and invalid
# arguments, progress, logging, calls in flight together, cancellation, and the
# HTTP transport's checks (tests/mcp-sdk-client.mjs does the talking).
. "$(dirname "$0")/lib.sh"

# where scripts/setup installs the SDK (configure --with-node-modules overrides)
NODE_MODULES=${CI_NODE_MODULES:-$CI_SRC_DIR/deps/node/node_modules}

# the steps the client reports, in order
cat >"$TEST_TMP/steps" <<\EOF2
ok initialize
ok tools/list
ok every tool with valid arguments
ok every tool with invalid arguments
ok progress
ok logging
ok several calls in flight
ok cancellation
EOF2

# a slow tool for progress and cancellation: it writes its pid beside the repository
cat >"$TEST_TMP/sleep.json" <<\EOF2
{"name": "sleep", "description": "sleep a while, then say so",
 "inputSchema": {"type": "object", "properties": {"seconds": {"type": "integer", "minimum": 0, "maximum": 100}},
		 "required": ["seconds"]},
 "argv": [["sh", "-c", "echo $$ >../sleep.pid; sleep \"$0\"; echo '{\"_type\":\"slept\"}'", "{seconds}"]]}
EOF2

test_expect_success 'node and the MCP SDK are installed (scripts/setup installs them)' '
	if ! command -v node >/dev/null 2>&1; then
		echo "node is missing: install the Debian package nodejs (scripts/setup does)" >&7
		false
	elif ! test -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json"; then
		echo "@modelcontextprotocol/sdk is missing in $NODE_MODULES: run scripts/setup" >&7
		false
	fi
'

test_expect_success 'setup: a repository with history, and a table with a slow tool' '
	git init -q repo &&
	mkdir repo/src &&
	printf "def parse_header(line):\n    return line.split(\":\", 1)\n" >repo/src/reader.py &&
	printf "import src.reader\n" >repo/src/main.py &&
	(cd repo && git add . && git commit -qm "reader: parse_header") &&
	printf "\n\nclass Reader:\n    def read(self):\n        return parse_header(\"a: b\")\n" >>repo/src/reader.py &&
	printf "from src.reader import Reader, parse_header\n\nREADER = Reader()\nparse_header(\"x\")\n" >repo/src/main.py &&
	(cd repo && git add . && git commit -qm "reader: the Reader class") &&
	echo secret >outside.txt &&
	ci-mcp --list-tools >ci.json &&
	"$JQ" --slurpfile s "$TEST_TMP/sleep.json" ".tools += \$s" ci.json >table.json &&
	(cd repo && ci-index build 2>/dev/null)
'

test_expect_success 'over stdio' '
	cd repo &&
	node "$CI_SRC_DIR/tests/mcp-sdk-client.mjs" stdio "$NODE_MODULES" "$CI_BUILD_DIR/ci-mcp" \
		"$TRASH_DIRECTORY/table.json" "$TRASH_DIRECTORY/sleep.pid" >../out 2>../err &&
	cd .. && cat out &&
	{ cat "$TEST_TMP/steps" && echo "ok close"; } >expect &&
	test_cmp expect out
'

# start_http: ci-mcp --http on a free port; sets url and pid
start_http() {
	(cd repo && CI_MCP_TOKEN=s3cret exec ci-mcp --http 127.0.0.1:0 --table ../table.json 2>../http.err) &
	pid=$!
	url=$(http_url http.err)
}

test_expect_success 'over Streamable HTTP' '
	start_http &&
	node "$CI_SRC_DIR/tests/mcp-sdk-client.mjs" http "$NODE_MODULES" "$url" s3cret \
		"$TRASH_DIRECTORY/sleep.pid" >out 2>err &&
	cat out &&
	{ cat "$TEST_TMP/steps" && printf "ok HTTP checks\nok DELETE ends the session\nok close\n"; } >expect &&
	test_cmp expect out &&
	kill -TERM $pid && wait $pid
'

test_expect_success '--http refuses an address that is not loopback' '
	test_status 2 ci-mcp --http 0.0.0.0:0 2>err &&
	test_grep "not a loopback address" err
'

test_done
