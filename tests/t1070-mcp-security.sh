#!/bin/sh
# ci-mcp's defences: the Streamable HTTP transport's Origin and Host checks
# (DNS rebinding), its Content-Type and Accept checks (cross-site simple
# requests), parameter values that look like options, over-long values, and
# a dropped GET stream.
. "$(dirname "$0")/lib.sh"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
ping='{"jsonrpc":"2.0","id":2,"method":"ping"}'

# start_http [<option>...]: ci-mcp --http on a free port with no token (the
# case the checks guard); sets url, port and pid.  A server a failed test left
# running is stopped first.
start_http() {
	if test -n "${pid:-}"; then
		kill -TERM $pid 2>/dev/null
		wait $pid 2>/dev/null
	fi
	rm -f http.err
	(cd repo && exec ci-mcp --http 127.0.0.1:0 "$@" 2>../http.err) &
	pid=$!
	url=$(http_url http.err) || return 1
	port=${url##*:}
	port=${port%/mcp}
}

stop_http() {
	kill -TERM $pid && wait $pid && pid=
}

# post <header>...: POST $body to $url with the usual JSON-RPC headers and
# these; prints the status code (the body is in resp)
post() {
	set -- -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" "$@"
	curl -s -o resp -w "%{http_code}\n" "$@" --data-binary "$body" "$url"
}

# new_session: initialize at $url; sets sid
new_session() {
	sid=$(curl -s -D - -o /dev/null -H "Content-Type: application/json" \
		-H "Accept: application/json, text/event-stream" --data-binary "$init" "$url" |
		tr -d "\r" | sed -n "s/^[Mm]cp-[Ss]ession-[Ii]d: //p")
	test -n "$sid"
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

test_expect_success 'POST: a body that is not application/json is a 415, before any tool' '
	start_http &&
	new_session &&
	body="{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\",\"arguments\":{\"pattern\":\"parse_header\"}}}" &&
	for t in text/plain application/x-www-form-urlencoded multipart/form-data application/jsonx \
		 "application/json-seq" "text/json"; do
		echo "$t 415"
	done >expect &&
	for t in text/plain application/x-www-form-urlencoded multipart/form-data application/jsonx \
		 "application/json-seq" "text/json"; do
		echo "$t $(curl -s -o resp -w "%{http_code}" -H "Content-Type: $t" \
			-H "Accept: application/json, text/event-stream" -H "Mcp-Session-Id: $sid" \
			--data-binary "$body" "$url")" || return 1
	done >actual &&
	test_cmp expect actual &&
	test_grep "send Content-Type: application/json" resp &&
	echo "none $(curl -s -o resp -w "%{http_code}" -H "Accept: application/json, text/event-stream" \
		-H "Mcp-Session-Id: $sid" -H "Content-Type:" --data-binary "$body" "$url")" >actual &&
	echo "none 415" >expect &&
	test_cmp expect actual &&
	test "$(post -H "Mcp-Session-Id: $sid" -H "Content-Type: Application/JSON; charset=utf-8")" = 200 &&
	grep "^data: " resp | sed "s/^data: //" | jq -se "last | .id == 3 and .result.structuredContent.count > 0" &&
	stop_http
'

test_expect_success 'POST: Accept must list application/json and text/event-stream (406)' '
	start_http &&
	body=$init &&
	for a in "" "*/*" "application/json" "text/event-stream" "application/*, text/*" \
		 "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" \
		 "application/json, text/event-stream;q=0" "application/jsonx, text/event-stream"; do
		echo "[$a] 406"
	done >expect &&
	for a in "" "*/*" "application/json" "text/event-stream" "application/*, text/*" \
		 "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" \
		 "application/json, text/event-stream;q=0" "application/jsonx, text/event-stream"; do
		echo "[$a] $(curl -s -o resp -w "%{http_code}" -H "Content-Type: application/json" \
			-H "Accept: $a" --data-binary "$body" "$url")" || return 1
	done >actual &&
	test_cmp expect actual &&
	test_grep "accept application/json and text/event-stream" resp &&
	for a in "application/json, text/event-stream" "TEXT/EVENT-STREAM;q=0.5 , application/json;q=1" \
		 "text/event-stream, application/json; q=0.1"; do
		echo "[$a] 200"
	done >expect &&
	for a in "application/json, text/event-stream" "TEXT/EVENT-STREAM;q=0.5 , application/json;q=1" \
		 "text/event-stream, application/json; q=0.1"; do
		echo "[$a] $(curl -s -o resp -w "%{http_code}" -H "Content-Type: application/json" \
			-H "Accept: $a" --data-binary "$body" "$url")" || return 1
	done >actual &&
	test_cmp expect actual &&
	new_session &&
	echo "GET 406" >expect &&
	echo "GET $(curl -s -o resp -w "%{http_code}" -H "Accept: */*" -H "Mcp-Session-Id: $sid" "$url")" >actual &&
	test_cmp expect actual &&
	test_grep "accept text/event-stream" resp &&
	stop_http
'

# probe.jq: tools/list's answer to a tools/call a line for each string
# parameter (or array of strings) of each tool that is no enum and has no
# pattern, set to "--zz-probe-<id>", a value that looks like an option ($mode
# "probe"), or to one character more than its maxLength ($mode "long"); the
# required parameters are filled in, and those $more ({tool: [parameter]}) names
cat >"$TEST_TMP/probe.jq" <<\EOF
def filler($s):
	if $s.enum then $s.enum[0]
	elif $s.type == "string" then
		(if $s.format == "path" then "src/reader.py" elif $s.pattern then "2024-01-01" else "parse_header" end)
	elif $s.type == "integer" then ([$s.minimum // 1, 1] | max)
	elif $s.type == "number" then ($s.minimum // 0.5)
	elif $s.type == "boolean" then true
	elif $s.type == "array" then [filler($s.items)]
	else "parse_header" end;
def free_string($s): $s.type == "string" and ($s.enum | not) and ($s.pattern | not);
def probed($s): free_string($s) or ($s.type == "array" and free_string($s.items));
[.result.tools[] | . as $t | ($t.inputSchema.properties // {}) as $p
 | $p | to_entries[] | select(probed(.value))
 | {tool: $t.name, key: .key, schema: .value, p: $p,
    fill: (($t.inputSchema.required // []) + ($more[$t.name] // []))}]
| to_entries[] | (.key + 10) as $id | .value as $c
| (if $mode == "long" then "a" * (($c.schema.maxLength // $c.schema.items.maxLength) + 1)
   else "--zz-probe-\($id)" end) as $probe
| {jsonrpc: "2.0", id: $id, method: "tools/call",
   params: {name: $c.tool,
	    arguments: (reduce ($c.fill[] | select(. != $c.key)) as $k ({}; .[$k] = filler($c.p[$k]))
			| .[$c.key] = (if $c.schema.type == "array" then [$probe] else $probe end))}}
| tojson
EOF

profiles="ci kit shaktiman abstract codebase-context bobbin"

# probe <profile>: send calls.<profile>; a call answered "give one of these
# parameters: a, b" (a tool whose command depends on which is given) is sent
# again with a filled in.  Leaves the answers in answers, the ids whose probe
# value was in the argv of a command run in ran.
probe() {
	(cd repo && ci-mcp --profile $1 -vv <../calls.$1 >../out1 2>../err1) &&
	jq -c --slurpfile c calls.$1 '
		select(.result.content[0].text // "" | startswith("give one of these parameters: "))
		| .id as $id
		| {($c[] | select(.id == $id) | .params.name):
		   [.result.content[0].text | ltrimstr("give one of these parameters: ") | split(", ")[0]]}' out1 |
	jq -s "add // {}" >more &&
	jq -r --arg mode probe --argjson more "$(cat more)" -f "$TEST_TMP/probe.jq" list.$1 |
	jq -c --argjson more "$(cat more)" 'select(.params.name | in($more))' >calls2 &&
	(cd repo && ci-mcp --profile $1 -vv <../calls2 >../out2 2>../err2) &&
	jq -n -c --slurpfile a out1 --slurpfile b out2 \
		'($b | map(.id)) as $ids | ($a[] | select(.id as $i | $ids | index($i) | not)), $b[]' >answers &&
	cat err1 err2 | sed -n "s/^ci-mcp: run //p" | grep -o "zz-probe-[0-9]*'" | tr -dc "0-9\n" | sort -un >ran
}

test_expect_success 'setup: the probes of every profile, and a file for each (path parameters must exist)' '
	for p in $profiles; do
		printf "%s\n" "$init" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" |
		(cd repo && ci-mcp --profile $p) | jq -c "select(.id == 2)" >list.$p &&
		jq -r --arg mode probe --argjson more "{}" -f "$TEST_TMP/probe.jq" list.$p >calls.$p &&
		test -s calls.$p || return 1
	done &&
	cat calls.* | grep -o -- "--zz-probe-[0-9]*" | sort -u >probes &&
	test_line_count -gt 20 probes &&
	while read f; do echo x >"repo/$f" || return 1; done <probes &&
	(cd repo && git add -- . && git commit -qm probes && ci-index build 2>/dev/null)
'

for p in $profiles; do
	test_expect_success "$p: every string parameter starting with - reaches its command as a value" '
		probe $p &&
		# each call answered
		jq -r .id calls.$p | sort -n >expect &&
		jq -r .id answers | sort -n >actual &&
		test_cmp expect actual &&
		# no command took a value for an option: getopt_long says "unknown
		# option", or the positional argument it ate is missing, then the usage
		jq -r --slurpfile c calls.$p "
			select(.result.content[0].text // .error.message // \"\"
			       | split(\"\\n\")[0] | test(\"unknown option|needs a value|takes one argument|takes no argument|unexpected argument|missing <|no query given|no command given\"))
			| .id as \$id | (\$c[] | select(.id == \$id) | .params | \"\\(.name) \\(.arguments)\")
			  + \": \" + (.result.content[0].text // .error.message | split(\"\\n\")[0])" answers >bad &&
		test_must_be_empty bad &&
		# and the values did reach commands
		test -s ran
	'
done

# An argument over the kernel's limit for one (MAX_ARG_STRLEN, 128 KiB) cannot
# be passed to a command, so every free string parameter has a maxLength whose
# UTF-8 (4 bytes a character at most) fits, and the server refuses more; a
# parameter the table sends on the command's standard input ("stdin") is not an
# argument, and may be longer (ci's search and context query: 1 MiB).
for p in $profiles; do
	test_expect_success "$p: every string parameter has a maxLength, and one character more is refused" '
		jq -c "[.tools[] | select(.stdin) | [.name, .stdin]]" "$CI_SRC_DIR/share/mcp/$p.json" >stdin.$p &&
		jq -r --slurpfile stdin stdin.$p ".result.tools[] | .name as \$t | .inputSchema.properties // {} | to_entries[]
		       | select(.value.type == \"string\" and (.value.enum | not) or .value.items.type == \"string\")
		       | (.value.maxLength // .value.items.maxLength) as \$n
		       | select(\$n == null or (\$n * 4 >= 131072 and ([\$t, .key] | IN(\$stdin[0][]) | not)))
		       | \"\\(\$t) \\(.key): maxLength \\(\$n)\"" list.$p >bad &&
		test_must_be_empty bad &&
		jq -r --arg mode long --argjson more "{}" -f "$TEST_TMP/probe.jq" list.$p >long &&
		(cd repo && ci-mcp --profile $p <../long >../out 2>../err) &&
		jq -r .id long | sort -n >expect &&
		jq -r "select(.result.content[0].text // .error.message
			      | test(\"must be at most [0-9]+ characters long\")) | .id" out | sort -n >actual &&
		test_cmp expect actual
	'
done


test_expect_success 'a value at its maxLength is served' '
	jq -nc "{jsonrpc: \"2.0\", id: 3, method: \"tools/call\",
		 params: {name: \"grep\", arguments: {pattern: (\"a\" * 8192), fixed_string: true}}}" >calls &&
	(cd repo && ci-mcp <../calls >../out 2>../err) &&
	jq -e ".result.isError != true and .result.structuredContent.count == 0" out
'

test_expect_success 'ci: a search or context query over 128 KiB reaches ci-rank on its standard input' '
	jq -nc "(\"How is the header line parsed by parse_header\\n\\n\" +
		  (\"2024-05-01 10:00:01 INFO worker started, nothing to see here\\n\" * 3000)) as \$q |
		{jsonrpc: \"2.0\", id: 3, method: \"tools/call\", params: {name: \"search\", arguments: {query: \$q}}},
		{jsonrpc: \"2.0\", id: 4, method: \"tools/call\", params: {name: \"context\", arguments: {query: \$q}}}" >calls &&
	test $(wc -c <calls) -gt 300000 &&
	(cd repo && ci-mcp <../calls >../out 2>../err) &&
	jq -e -s "map(select(.id == 3))[0] | .result.isError != true and
	       (.result.structuredContent.results | map(select(._type == \"hit\")) | .[0].path == \"src/reader.py\")" out &&
	jq -e -s "map(select(.id == 4))[0] | .result.isError != true and
	       (.result.structuredContent.results | any(.[]; ._type == \"context_chunk\" and .path == \"src/reader.py\"))" out
'

test_expect_success 'a command that cannot run says why: an argument over 128 KiB (E2BIG), a missing command' '
	cat >table.json <<-\EOF2 &&
	{"tools": [
	 {"name": "big", "description": "a pattern with no maxLength",
	  "inputSchema": {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
	  "argv": [["ci-grep", "--json", "-e", "{pattern}"]]},
	 {"name": "gone", "description": "a command that is nowhere",
	  "inputSchema": {"type": "object", "properties": {}},
	  "argv": [["ci-no-such-command"]]}]}
	EOF2
	jq -nc "{jsonrpc: \"2.0\", id: 3, method: \"tools/call\", params: {name: \"big\", arguments: {pattern: (\"a\" * 140000)}}},
		 {jsonrpc: \"2.0\", id: 4, method: \"tools/call\", params: {name: \"gone\", arguments: {}}}" >calls &&
	(cd repo && ci-mcp --table ../table.json <../calls >../out 2>../err) &&
	jq -r "[.id, .result.isError, .result.content[0].text] | @tsv" out | sort -n >actual &&
	printf "3\ttrue\tcannot run \047ci-grep\047: Argument list too long\n" >expect &&
	printf "4\ttrue\tcannot run \047ci-no-such-command\047: No such file or directory\n" >>expect &&
	test_cmp expect actual
'

test_expect_success 'a query that is one of ci-rank'\''s command words is searched for' '
	for q in serve similar context; do
		jq -nc --arg q $q "{jsonrpc: \"2.0\", id: \$q, method: \"tools/call\",
				    params: {name: \"search\", arguments: {query: \$q}}}" || return 1
	done >calls &&
	(cd repo && test_status 0 timeout 60 ci-mcp <../calls >../out 2>../err) &&
	jq -r "[.id, .result.isError, .result.structuredContent.results[0].query] | @tsv" out | sort >actual &&
	printf "%s\t\t%s\n" context context serve serve similar similar >expect &&
	test_cmp expect actual &&
	# exit status 1: nothing found
	(cd repo && test_status 1 ci-rank -- serve >../out) &&
	jq -e "select(._type == \"summary\") | .query == \"serve\"" out &&
	(cd repo && test_status 1 ci-rank --limit 3 context -- serve >../out) &&
	jq -e "select(._type == \"context_summary\") | .direct == 0" out
'

test_expect_success 'GET: a dropped event stream frees its session'\''s slot at once' '
	start_http &&
	new_session || return 1
	curl -s -N -D get.h -H "Accept: text/event-stream" -H "Mcp-Session-Id: $sid" "$url" >get.out &
	curl_pid=$!
	i=0 && while ! grep -q "^HTTP/1.1 200" get.h 2>/dev/null && test $i -lt 100; do
		sleep 0.1; i=$((i + 1))
	done &&
	grep -q "^HTTP/1.1 200" get.h &&
	# while it is open, a second one is refused
	echo 409 >expect &&
	curl -s -o resp -w "%{http_code}\n" -H "Accept: text/event-stream" -H "Mcp-Session-Id: $sid" "$url" >actual &&
	test_cmp expect actual &&
	test_grep "GET stream open already" resp &&
	kill $curl_pid && { wait $curl_pid; true; } &&
	echo 200 >expect &&
	{ curl -s -o /dev/null -w "%{http_code}\n" -m 1 -H "Accept: text/event-stream" \
		-H "Mcp-Session-Id: $sid" "$url" >actual; true; } &&
	test_cmp expect actual &&
	stop_http &&
	! grep "Closing connection" http.err
'

if test -n "${pid:-}"; then
	kill -TERM $pid 2>/dev/null
	wait $pid 2>/dev/null
fi
test_done
