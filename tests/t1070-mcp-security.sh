#!/bin/sh
# ci-mcp's defences: the Streamable HTTP transport's Origin and Host checks
# (DNS rebinding), its Content-Type and Accept checks (cross-site simple
# requests), parameter values that look like options, over-long values, and
# a dropped GET stream.
. "$(dirname "$0")/lib.sh"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
ping='{"jsonrpc":"2.0","id":2,"method":"ping"}'

# start_http [<option>...]: ci-mcp --http on a free port with no token (the
# case the checks guard); sets url, port and pid
start_http() {
	rm -f http.err
	(cd repo && exec ci-mcp --http 127.0.0.1:0 "$@" 2>../http.err) &
	pid=$!
	i=0
	while ! grep -q "serving http" http.err 2>/dev/null && test $i -lt 300; do
		sleep 0.1; i=$((i + 1))
	done
	url=$(sed -n "s/^ci-mcp: serving //p" http.err)
	port=${url##*:}
	port=${port%/mcp}
	test -n "$url"
}

stop_http() {
	kill -TERM $pid && wait $pid
}

# post <header>...: POST $body to $url with the usual JSON-RPC headers and
# these; prints the status code (the body is in resp)
post() {
	set -- -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" "$@"
	curl -s -o resp -w "%{http_code}\n" "$@" --data-binary "$body" "$url"
}

test_expect_success 'setup: a repository' '
	git init -q repo &&
	mkdir repo/src &&
	printf "def parse_header(line):\n    return line.split(\":\", 1)\n" >repo/src/reader.py &&
	(cd repo && git add . && git commit -qm "reader: parse_header") &&
	(cd repo && ci-index build 2>/dev/null)
'

test_expect_success 'Origin and Host: a loopback prefix or user information is no loopback page (403)' '
	start_http &&
	body=$init &&
	for o in http://127.0.0.1.evil.com "http://127.0.0.1:80@evil.com" http://localhost.evil.com:$port \
		 "http://[::1].evil.com" http://127.0.0.1/x http://127.0.0.1:0 null ftp://127.0.0.1 http://127.0.0.1:99999; do
		echo "$o 403"
	done >expect &&
	for o in http://127.0.0.1.evil.com "http://127.0.0.1:80@evil.com" http://localhost.evil.com:$port \
		 "http://[::1].evil.com" http://127.0.0.1/x http://127.0.0.1:0 null ftp://127.0.0.1 http://127.0.0.1:99999; do
		echo "$o $(post -H "Origin: $o")" || return 1
	done >actual &&
	test_cmp expect actual &&
	test_grep "this Origin is not allowed" resp &&
	for h in 127.0.0.1.evil.com "127.0.0.1.evil.com:$port" "evil.com:$port" "127.0.0.1:$port@evil.com" \
		 "localhost:$((port == 65535 ? 1 : port + 1))" "127.0.0.1:$port/x"; do
		echo "$h 403"
	done >expect &&
	for h in 127.0.0.1.evil.com "127.0.0.1.evil.com:$port" "evil.com:$port" "127.0.0.1:$port@evil.com" \
		 "localhost:$((port == 65535 ? 1 : port + 1))" "127.0.0.1:$port/x"; do
		echo "$h $(post -H "Host: $h")" || return 1
	done >actual &&
	test_cmp expect actual &&
	test_grep "this Host is not allowed" resp &&
	stop_http
'

test_expect_success 'Origin and Host: loopback pages and names are still served' '
	start_http &&
	body=$init &&
	for o in http://localhost:3000 http://127.0.0.1 https://127.0.0.1:8443 "http://[::1]:8080" HTTP://LOCALHOST:$port; do
		echo "$o 200"
	done >expect &&
	for o in http://localhost:3000 http://127.0.0.1 https://127.0.0.1:8443 "http://[::1]:8080" HTTP://LOCALHOST:$port; do
		echo "$o $(post -H "Origin: $o")" || return 1
	done >actual &&
	test_cmp expect actual &&
	jq -e ".result.serverInfo.name == \"ci\"" resp &&
	for h in "127.0.0.1:$port" "localhost:$port" "LocalHost:$port" "[::1]:$port"; do
		echo "$h 200"
	done >expect &&
	for h in "127.0.0.1:$port" "localhost:$port" "LocalHost:$port" "[::1]:$port"; do
		echo "$h $(post -H "Host: $h")" || return 1
	done >actual &&
	test_cmp expect actual &&
	stop_http
'

test_expect_success '--allow-origin: the same scheme, host and port, nothing longer' '
	start_http --allow-origin https://app.example.com --allow-origin http://tool.example:8080 &&
	body=$init &&
	for o in https://app.example.com https://APP.example.com:443 http://tool.example:8080; do
		echo "$o 200"
	done >expect &&
	for o in https://app.example.com.evil.com http://app.example.com https://app.example.com:8443 \
		 http://tool.example http://tool.example:8080.evil.com "https://app.example.com@evil.com"; do
		echo "$o 403"
	done >>expect &&
	for o in https://app.example.com https://APP.example.com:443 http://tool.example:8080 \
		 https://app.example.com.evil.com http://app.example.com https://app.example.com:8443 \
		 http://tool.example http://tool.example:8080.evil.com "https://app.example.com@evil.com"; do
		echo "$o $(post -H "Origin: $o")" || return 1
	done >actual &&
	test_cmp expect actual &&
	stop_http
'

test_done
