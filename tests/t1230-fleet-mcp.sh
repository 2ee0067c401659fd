#!/bin/sh
# t1230-fleet-mcp: ci-mcp --shards serves a shard set: every tool takes an
# optional "repo" (names of the set, comma-separated); a search without one
# answers over every shard, each result naming its repository; with one, only
# those shards answer; a name not in the set is a tool error saying so.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

if ! test_have_lang c || ! test_have_lang python; then
	test_skip 'ci-mcp over shards' 'the c and python grammars are not compiled in'
	test_done
fi

# call <id> <tool> <arguments as JSON>: a tools/call line
call() {
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" "$3"
}

test_expect_success 'setup: three repositories, an index each' '
	make_fleet_repos repos 3 &&
	mkdir set &&
	for r in r01 r02 r03; do
		(cd repos/$r && ci-index --index ../../set/$r.db --no-progress build .) || return 1
	done
'

test_expect_success 'every tool has an optional repo parameter' '
	ci-mcp --shards set --list-tools >tools &&
	jq -r ".tools[] | select(.inputSchema.properties.repo.type != \"string\" or ((.inputSchema.required // []) | index(\"repo\"))) | .name" tools >bad &&
	test_must_be_empty bad &&
	test "$(jq ".tools | length" tools)" -gt 5
'

test_expect_success 'grep and search without repo: every shard answers, each hit names its repository' '
	{ call 1 grep "{\"pattern\":\"shared_marker\"}"; call 2 search "{\"query\":\"parse the text\",\"limit\":10}"; } |
		ci-mcp --shards set >out &&
	jq -r "select(.id == 1) | .result.structuredContent.results[] | select(._type == \"match\") | .repo" out | uniq >actual &&
	printf "r01\nr02\nr03\n" >expect &&
	test_cmp expect actual &&
	jq -r "select(.id == 2) | .result.structuredContent.results[] | select(._type == \"hit\") | .repo" out | sort -u >actual &&
	test_cmp expect actual
'

test_expect_success 'with repo: only the shards named' '
	{ call 1 grep "{\"pattern\":\"shared_marker\",\"repo\":\"r02\"}"; call 2 references "{\"symbol\":\"run\",\"repo\":\"r03,r01\"}"; } |
		ci-mcp --shards set >out &&
	jq -r "select(.id == 1) | .result.structuredContent.results[] | select(._type == \"match\") | .repo" out | uniq >actual &&
	echo r02 >expect &&
	test_cmp expect actual &&
	jq -r "select(.id == 2) | .result.structuredContent.results[] | select(._type == \"occurrence\") | .repo" out | uniq >actual &&
	printf "r01\nr03\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'a repository not in the set is a tool error naming it' '
	call 1 grep "{\"pattern\":\"x\",\"repo\":\"r09\"}" | ci-mcp --shards set >out &&
	jq -r ".result | \"\\(.isError) \\(.content[0].text)\"" out >actual &&
	echo "true ci-grep: no repository '"'"'r09'"'"' in the shard set" >expect &&
	test_cmp expect actual
'

test_expect_success 'a shard set that cannot be read: exit 3 before serving' '
	test_status 3 ci-mcp --shards nowhere </dev/null 2>err &&
	test_grep "cannot serve .nowhere." err
'

test_done
