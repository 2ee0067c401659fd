#!/bin/sh
# t0075-readme-mcp: the MCP client configurations of README.md ("MCP clients") are
# what they say.
#
# Every json block of the section parses (jq) and every toml block too (python3's
# tomllib, where there is one); each stdio server of them, started as written
# (its directory placeholder, /path/to/your/repo or ${workspaceFolder}, made a
# test repository; a server without one started in the repository, as Claude Code
# does), answers a tool call about that repository; each HTTP server is
# http://127.0.0.1:3100/mcp, and its Authorization header, with the token of
# CI_MCP_TOKEN put in, is one a `ci-mcp --http` started with that token accepts.

. "$(dirname "$0")/lib.sh"

call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"parse_header"}}}'
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t0075","version":"0"}}}'

# The section's fenced blocks, as block.<n>.<lang>
awk '
	/^### MCP clients/ { on = 1; next }
	on && /^##? / { on = 0 }
	!on { next }
	/^```[a-z]+$/ { n++; lang = substr($0, 4); f = sprintf("block.%d.%s", n, lang); next }
	/^```$/ { f = ""; next }
	f != "" { print > f }' "$CI_SRC_DIR/README.md"

test_expect_success 'README.md has the MCP client configurations' '
	ls block.*.json >json && test_line_count -ge 4 json &&
	ls block.*.toml >toml && test_line_count -ge 1 toml
'

test_expect_success 'every json block parses' '
	for f in block.*.json; do
		jq -e . "$f" >/dev/null || { echo "$f does not parse"; return 1; }
	done
'

if python3 -c "import tomllib" 2>/dev/null; then
	test_expect_success 'every toml block parses' '
		for f in block.*.toml; do
			python3 -c "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], \"rb\"))))" \
				"$f" >"$f.json" || { echo "$f does not parse"; return 1; }
		done
	'
else
	test_skip 'every toml block parses' 'no python3 with tomllib'
fi

test_expect_success 'a repository for the servers, indexed' '
	mkdir -p repo/src elsewhere && (
		cd repo && git init -q &&
		printf "int parse_header(const char *s);\n" >src/http.h &&
		printf "#include \"http.h\"\nint parse_header(const char *s) { return s[0]; }\n" >src/http.c &&
		git add . && git commit -qm init &&
		ci-index build
	)
'

# The servers of every block as lines ["<block> <name>", <server>], the placeholders of the
# repository's directory replaced by the test repository
# (block.<n>.json, and block.<n>.toml.json: a toml block as JSON)
for f in block.*.json; do
	sed -e "s|/path/to/your/repo|$TRASH_DIRECTORY/repo|g" \
	    -e "s|\${workspaceFolder}|$TRASH_DIRECTORY/repo|g" "$f" |
	jq -c --arg f "${f%.json}" '(.mcpServers // .servers // .mcp_servers) | to_entries[] | ["\($f) \(.key)", .value]'
done >servers

test_expect_success 'the configurations name stdio servers and HTTP servers' '
	jq -c "select(.[1].command)" servers >stdio &&
	test_line_count -ge 4 stdio &&
	jq -c "select(.[1].url)" servers >http &&
	test_line_count -ge 3 http
'

# run_stdio <server json>: start it as a client would (its cwd, else the
# repository when it names no directory) with one tool call on its input
run_stdio() {
	jq -r ".command, .args[]" <<-EOF >argv
	$1
	EOF
	dir=$(jq -r '.cwd // empty' <<-EOF
	$1
	EOF
	)
	if test -z "$dir"; then
		if grep -qx -- -C argv; then dir=$TRASH_DIRECTORY/elsewhere; else dir=$TRASH_DIRECTORY/repo; fi
	fi
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <argv
	(cd "$dir" && printf "%s\n" "$call" | "$@")
}

while IFS= read -r line; do
	name=$(echo "$line" | jq -r '.[0]')
	server=$(echo "$line" | jq -c '.[1]')
	test_expect_success "$name (stdio) answers about the repository" '
		run_stdio "$server" >out &&
		jq -e ".result.structuredContent.count == 2" out >/dev/null &&
		jq -r ".result.structuredContent.results[].path" out | sort -u >paths &&
		printf "src/http.c\nsrc/http.h\n" >expect &&
		test_cmp expect paths
	'
done <stdio

if test_have_prog curl; then

test_expect_success 'ci-mcp --http with a token' '
	(cd repo && CI_MCP_TOKEN=s3cret exec ci-mcp --http 127.0.0.1:0 2>../http.err) &
	pid=$! &&
	url=$(http_url http.err)
'

while IFS= read -r line; do
	name=$(echo "$line" | jq -r '.[0]')
	server=$(echo "$line" | jq -c '.[1]')
	test_expect_success "$name (HTTP): the URL, and a header ci-mcp accepts" '
		echo "$server" | jq -r .url >u &&
		echo http://127.0.0.1:3100/mcp >expect &&
		test_cmp expect u &&
		h=$(echo "$server" | jq -r "if .bearer_token_env_var then \"Bearer \${\(.bearer_token_env_var)}\" else .headers.Authorization end") &&
		case $h in
		"Bearer \${CI_MCP_TOKEN}"|"Bearer \${env:CI_MCP_TOKEN}") ;;
		*) echo "unexpected header: $h"; false ;;
		esac &&
		curl -s -o out -w "%{http_code}\n" "$url" -H "Authorization: Bearer s3cret" \
			-H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" \
			-d "$init" >code &&
		echo 200 >expect &&
		test_cmp expect code &&
		curl -s -o out -w "%{http_code}\n" "$url" -H "Authorization: Bearer wrong" \
			-H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" \
			-d "$init" >code &&
		echo 401 >expect &&
		test_cmp expect code
	'
done <http

test_expect_success 'ci-mcp --http stops' '
	kill -TERM $pid && wait $pid
'

else
	test_skip 'HTTP servers' 'curl is not installed'
fi

test_done
