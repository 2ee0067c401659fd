#!/bin/sh
# ci-mcp's tool tables: every profile's table loads and its jq programs
# compile; a table whose program does not is refused, naming the tool; so is a
# resource entry without its command.
. "$(dirname "$0")/lib.sh"

test_expect_success 'every table in share/mcp loads as a profile, with its tools' '
	for t in "$CI_SRC_DIR"/share/mcp/*.json; do
		n=$(basename "$t" .json) &&
		ci-mcp --profile "$n" --list-tools >list 2>err &&
		test_must_be_empty err &&
		jq -e --arg n "$n" ".profile == \$n and (.tools | length) > 0" list >/dev/null ||
		{ echo "profile $n" >&7; cat err >&7; return 1; }
	done
'

test_expect_success 'every table compiled in is the file in share/mcp' '
	for t in "$CI_SRC_DIR"/share/mcp/*.json; do
		ci-mcp --profile "$(basename "$t" .json)" --list-tools | jq -cS . >a &&
		jq -cS . "$t" >b && test_cmp b a || return 1
	done
'

# broken <key> <program>: the kit table with tool 0's <key> program replaced
broken() {
	jq --arg k "$1" --arg p "$2" ".tools[0][\$k] = \$p" "$CI_SRC_DIR/share/mcp/kit.json" >broken.json
}

test_expect_success 'an output program that does not compile is a table error naming the tool' '
	broken output ".records | map(" &&
	test_status 3 ci-mcp --table broken.json --list-tools >out 2>err &&
	test_must_be_empty out &&
	test_grep "broken.json: tool .search_text_pattern.: \"output\": .*syntax error" err
'

test_expect_success 'so are an input program calling an unknown function, and a program that is not text' '
	broken input "no_such_function(1)" &&
	test_status 3 ci-mcp --table broken.json --list-tools 2>err &&
	test_grep "tool .search_text_pattern.: \"input\": .*no_such_function/1 is not defined" err &&
	jq ".tools[0].text = 42" "$CI_SRC_DIR/share/mcp/kit.json" >broken.json &&
	test_status 3 ci-mcp --table broken.json --list-tools 2>err &&
	test_grep "\"text\" must be a jq program" err
'

test_expect_success 'a parameter whose "pattern" does not compile is a table error naming it' '
	jq ".tools[0].inputSchema.properties.when = {type: \"string\", pattern: \"([\"}" "$CI_SRC_DIR/share/mcp/kit.json" >broken.json &&
	test_status 3 ci-mcp --table broken.json --list-tools 2>err &&
	test_grep "tool .search_text_pattern.: parameter .when.: \"pattern\" missing terminating \] for character class at offset 2" err
'

test_expect_success 'codebase-context: its 10 tools and its resource; a resource without argv is a table error' '
	ci-mcp --profile codebase-context --list-tools >list &&
	jq -e "(.tools | length) == 10 and [.resources[].uri] == [\"codebase://context\"]" list &&
	jq "del(.resources[0].argv)" "$CI_SRC_DIR/share/mcp/codebase-context.json" >broken.json &&
	test_status 3 ci-mcp --table broken.json --list-tools >out 2>err &&
	test_must_be_empty out &&
	test_grep "broken.json: resource 0 wants \"uri\", \"name\" and \"argv\"" err &&
	jq ".resources = {}" "$CI_SRC_DIR/share/mcp/codebase-context.json" >broken.json &&
	test_status 3 ci-mcp --table broken.json --list-tools 2>err &&
	test_grep "\"resources\" must be an array" err
'

test_expect_success 'a program that fails at run time is a tool error, the server goes on' '
	git init -q repo && echo "hello = 1" >repo/a.py &&
	broken output "error(\"mapping failed: \\(.exit)\")" &&
	(cd repo && printf "%s\n" \
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_text_pattern\",\"arguments\":{\"query\":\"hello\"}}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" | ci-mcp --table ../broken.json >../out) &&
	jq -c "select(.id == 1) | .result" out >actual &&
	echo "{\"content\":[{\"type\":\"text\",\"text\":\"mapping failed: 0\"}],\"isError\":true}" >expect &&
	test_cmp_json expect actual &&
	jq -se "map(select(.id == 2))[0].result == {}" out
'

test_done
