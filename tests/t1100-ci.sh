#!/bin/sh
# t1100-ci: the `ci` command on a small C repository: each mapped subcommand's
# --json records (search, status, reindex, refs, cycles), the pass-through
# subcommands, memory list/add/remove over .codebase-context/memory.json, and the
# errors of the codebase-context CLI (stderr, exit 1).

. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'ci tests' 'the c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a repository with an include cycle' '
	mkdir repo && (
		cd repo && git init -q &&
		printf "int parse(void)\n{\n\treturn 0;\n}\n" >parse.c &&
		printf "int main(void) { return parse(); }\n" >main.c &&
		printf "#include \"b.h\"\n" >a.h &&
		printf "#include \"a.h\"\n" >b.h &&
		mkdir lib && printf "int helper(void) { return 1; }\n" >lib/helper.c &&
		git add . && git commit -q -m one
	)
'

test_expect_success 'ci -h, --help and help print the usage' '
	ci -h >h1 && ci --help >h2 && ci help >h3 &&
	test_cmp h1 h2 && test_cmp h1 h3 &&
	test_grep "^usage: ci " h1
'

test_expect_success 'no subcommand: the usage on stderr, exit 1' '
	test_status 1 ci >out 2>err &&
	test_must_be_empty out &&
	test_grep "^usage: ci " err
'

test_expect_success 'an unknown subcommand: message and usage on stderr, exit 1' '
	test_status 1 ci frobnicate >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci: unknown subcommand .frobnicate." err &&
	test_grep "^usage: ci " err
'

test_expect_success 'reindex builds the index' '
	(cd repo && ci reindex --json) &&
	test -f repo/.ci-index/index.db
'

test_expect_success 'status --json: the status record' '
	(cd repo && ci status --json) >out &&
	test_line_count = 1 out &&
	jq -e "._type == \"status\" and .files == 5 and .languages.c == 5" out
'

test_expect_success 'reindex --incremental updates the index' '
	printf "int extra(void) { return parse(); }\n" >repo/extra.c &&
	(cd repo && git add extra.c && ci reindex --incremental --reason test --json) &&
	(cd repo && ci status --json) | jq -e ".files == 6"
'

test_expect_success 'search --json: hits and a summary' '
	(cd repo && ci search --query parse --intent edit --limit 2 --lang c --json) >out &&
	jq -s -e "length >= 2 and .[0]._type == \"hit\" and .[0].path == \"parse.c\" and
		(.[0].score | type) == \"number\" and .[-1]._type == \"summary\" and
		.[-1].query == \"parse\"" out
'

test_expect_success 'search: a query starting with - is a query' '
	(cd repo && ci search --query=-parse --json) >out &&
	jq -s -e ".[-1]._type == \"summary\"" out
'

test_expect_success 'search: errors on stderr, exit 1' '
	(cd repo && test_status 1 ci search --json) 2>err &&
	test_grep "^ci: search: --query is required" err &&
	(cd repo && test_status 1 ci search --query x --intent nope) 2>err &&
	test_grep "intent must be" err &&
	(cd repo && test_status 1 ci search --query x --limit 0) 2>err &&
	test_grep "limit must be" err &&
	(cd repo && test_status 1 ci search --query x --bogus) 2>err &&
	test_grep "unknown option .--bogus." err &&
	(cd repo && test_status 1 ci search --query) 2>err &&
	test_grep "needs a value" err &&
	(cd repo && test_status 1 ci search --query x --framework react) 2>err &&
	test_grep "not supported" err
'

test_expect_success 'refs --json: occurrence records' '
	(cd repo && ci refs --symbol parse --limit 5 --json) >out &&
	jq -s -e "length == 2 and all(._type == \"occurrence\" and .name == \"parse\" and
		.confidence == \"syntactic\")" out
'

test_expect_success 'refs: --symbol is required' '
	(cd repo && test_status 1 ci refs --json) 2>err &&
	test_grep "^ci: refs: --symbol is required" err
'

test_expect_success 'cycles --json: the include cycle' '
	(cd repo && ci cycles --json) >out &&
	jq -s -e "length == 1 and .[0]._type == \"cycle\" and .[0].files == [\"a.h\",\"b.h\"]" out
'

test_expect_success 'metadata --json: languages, counts, dependencies of the manifests' '
	(
		cd repo &&
		printf "{\"dependencies\":{\"express\":\"^4\"},\"devDependencies\":{\"jest\":\"29\"}}\n" >package.json &&
		printf "requests>=2.0\n# a comment\nflask==2.3 ; python_version>\"3\"\n-r more.txt\n" >requirements.txt &&
		printf "[project]\nname = \"x\"\ndependencies = [\n  \"numpy>=1.2\",\n]\n[tool.poetry.dependencies]\npython = \"^3.9\"\nclick = \"^8\"\n" >pyproject.toml &&
		printf "module x\n\nrequire example.com/a v1.2.3\nrequire (\n\tgolang.org/x/sys v0.1.0 // indirect\n)\n" >go.mod &&
		printf "[package]\nname = \"x\"\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n[dev-dependencies]\ntempfile = \"3\"\n" >Cargo.toml &&
		ci metadata --json
	) >out &&
	test_line_count = 1 out &&
	jq -e "._type == \"metadata\" and .files == 6 and .languages.c == 6 and
		(.chunks | type) == \"number\" and (.root | type) == \"string\"" out &&
	jq -r ".dependencies[] | [.manifest, .name, .version] | @tsv" out >actual &&
	printf "%s\t%s\t%s\n" \
		package.json express ^4 package.json jest 29 \
		requirements.txt requests ">=2.0" requirements.txt flask ==2.3 \
		pyproject.toml numpy ">=1.2" pyproject.toml click ^8 \
		go.mod example.com/a v1.2.3 go.mod golang.org/x/sys v0.1.0 \
		Cargo.toml serde 1 Cargo.toml tempfile 3 >expect &&
	test_cmp expect actual &&
	(cd repo && rm package.json requirements.txt pyproject.toml go.mod Cargo.toml)
'

test_expect_success 'metadata: no index is an error, exit 1' '
	mkdir noindex && (cd noindex && git init -q) &&
	(cd noindex && test_status 1 ci metadata --json) >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci: metadata: no index" err
'

test_expect_success 'pass-through: grep, index, rank, refs-raw' '
	(cd repo && ci grep -F parse main.c) >out &&
	jq -e ".path == \"main.c\"" out &&
	(cd repo && ci index status) | jq -e "._type == \"status\"" &&
	(cd repo && ci rank --limit 1 helper) | jq -s -e ".[0].path == \"lib/helper.c\"" &&
	(cd repo && ci refs-raw defs parse) | jq -e ".path == \"parse.c\"" &&
	ci mcp --list-tools | jq -e "type == \"array\" or type == \"object\""
'

test_expect_success 'pass-through keeps the exit status of the command' '
	(cd repo && test_status 2 ci refs-raw --no-such-option)
'

test_expect_success 'memory list: none yet' '
	(cd repo && ci memory list --json) >out &&
	test_must_be_empty out
'

test_expect_success 'memory add --json: the new memory' '
	(cd repo && ci memory add --type gotcha --category db --memory "Close the index" \
		--reason "it leaks" --json) >out &&
	jq -e "(.id | test(\"^[0-9a-f]{16}\$\")) and .type == \"gotcha\" and .category == \"db\" and
		.memory == \"Close the index\" and .reason == \"it leaks\" and
		(.date | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T\"))" out &&
	jq -r .id out >id &&
	(cd repo && ci memory add --type convention --category style --memory "Tabs" --json) &&
	jq -e "length == 2" repo/.codebase-context/memory.json
'

test_expect_success 'memory add: the same memory twice, a bad type, missing fields' '
	(cd repo && test_status 1 ci memory add --type gotcha --category db --memory "Close the index") 2>err &&
	test_grep "there already" err &&
	(cd repo && test_status 1 ci memory add --type bad --category db --memory x) 2>err &&
	test_grep "type must be" err &&
	(cd repo && test_status 1 ci memory add --type gotcha) 2>err &&
	test_grep "required" err
'

test_expect_success 'memory list: filters' '
	(cd repo && ci memory list --json) | jq -s -e "length == 2" &&
	(cd repo && ci memory list --type gotcha --json) | jq -s -e "length == 1 and .[0].category == \"db\"" &&
	(cd repo && ci memory list --category style --json) | jq -s -e ".[0].memory == \"Tabs\"" &&
	(cd repo && ci memory list --query LEAKS --json) | jq -s -e "length == 1" &&
	(cd repo && ci memory list --query nothing --json) >out &&
	test_must_be_empty out &&
	(cd repo && test_status 1 ci memory list --type nope) 2>err &&
	test_grep "type must be" err
'

test_expect_success 'memory remove: by id; an unknown id is an error' '
	id=$(cat id) &&
	(cd repo && ci memory remove "$id" --json) >out &&
	jq -e ".removed == \"$id\"" out &&
	(cd repo && ci memory list --json) | jq -s -e "length == 1" &&
	(cd repo && test_status 1 ci memory remove "$id") 2>err &&
	test_grep "no memory" err
'

test_expect_success 'memory: a memory file that is not an array is an error' '
	echo "{}" >repo/.codebase-context/memory.json &&
	(cd repo && test_status 1 ci memory list) 2>err &&
	test_grep "expected a JSON array" err &&
	echo "[" >repo/.codebase-context/memory.json &&
	(cd repo && test_status 1 ci memory list) 2>err &&
	test_grep "memory.json" err
'

test_expect_success 'memory: no verb, an unknown verb' '
	(cd repo && test_status 1 ci memory) 2>err &&
	test_grep "expected list, add or remove" err &&
	(cd repo && test_status 1 ci memory forget) 2>err &&
	test_grep "not forget" err
'

test_expect_success 'status without an index: the exit status of ci-index' '
	mkdir empty && (cd empty && git init -q) &&
	(cd empty && test_must_fail ci status --json) >out 2>err &&
	test_grep "^ci-index: " err
'

test_done
