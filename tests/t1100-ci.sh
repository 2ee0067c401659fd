#!/bin/sh
# t1100-ci: the `ci` command on a small C repository: each mapped subcommand's
# --json records (search, status, reindex, refs, cycles), the pass-through
# subcommands, memory list/add/remove over .codebase-context/memory.json, and the
# errors of the codebase-context CLI (stderr, exit 1); then, on a repository with
# two years of history, patterns, style-guide (--json and on a terminal), the
# memories of conventional commits and the preflight card of search.

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

test_expect_success 'no subcommand: the usage on stderr, exit 2' '
	test_status 2 ci >out 2>err &&
	test_must_be_empty out &&
	test_grep "^usage: ci " err
'

test_expect_success 'an unknown subcommand: message and usage on stderr, exit 2' '
	test_status 2 ci frobnicate >out 2>err &&
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

test_expect_success 'search --json: hits, a summary, the search quality and the preflight card' '
	(cd repo && ci search --query parse --intent edit --limit 2 --lang c --json) >out &&
	jq -s -e "length >= 2 and .[0]._type == \"hit\" and .[0].path == \"parse.c\" and
		(.[0].score | type) == \"number\" and (.[0].importedByCount | type) == \"number\" and
		map(select(._type == \"summary\"))[0].query == \"parse\" and
		(map(select(._type == \"search_quality\")) | length == 1)" out &&
	jq -s -e ".[-1]._type == \"preflight\" and (.[-1].ready | type) == \"boolean\"" out
'

test_expect_success 'search: a query starting with - is a query' '
	(cd repo && ci search --query=-parse --json) >out &&
	jq -s -e "map(select(._type == \"summary\"))[0].query == \"-parse\"" out
'

test_expect_success 'search: usage errors on stderr, exit 2' '
	(cd repo && test_status 2 ci search --json) 2>err &&
	test_grep "^ci: search: a query is required (ci search <query>, or --query <q>)" err &&
	(cd repo && test_status 2 ci search words --query x) 2>err &&
	test_grep "^ci: search: a query and --query: give one" err &&
	(cd repo && test_status 2 ci search --query x --intent nope) 2>err &&
	test_grep "intent must be" err &&
	(cd repo && test_status 2 ci search --query x --limit 0) 2>err &&
	test_grep "limit must be" err &&
	(cd repo && test_status 2 ci search --query x --bogus) 2>err &&
	test_grep "unknown option .--bogus." err &&
	(cd repo && test_status 2 ci search --query) 2>err &&
	test_grep "needs a value" err &&
	(cd repo && test_status 2 ci search --query x --framework react) 2>err &&
	test_grep "not supported" err
'

test_expect_success 'search: the query as words, as with --query' '
	(cd repo && ci search --json --limit 3 --query "parse the header") >expect &&
	(cd repo && ci search --json --limit 3 parse the header) >actual &&
	test_cmp expect actual &&
	(cd repo && ci search --json --limit 3 "parse the header") >actual &&
	test_cmp expect actual &&
	jq -s -e "map(select(._type == \"summary\"))[0].query == \"parse the header\"" actual
'

test_expect_success 'a subcommand --help or -h: its part of the usage on stdout, exit 0' '
	ci search --help >out 2>err &&
	test_must_be_empty err &&
	head -1 out >first && echo "usage: ci search ..." >expect && test_cmp expect first &&
	test_grep "^  search <q> | --query <q>" out &&
	test_grep "preflight card" out &&
	! grep -q "^  status" out &&
	ci memory -h >out &&
	test_grep "^  memory add --type" out &&
	test_grep "^  memory remove <id>" out &&
	! grep -q "^  search" out
'

test_expect_success 'refs --json: occurrence records' '
	(cd repo && ci refs --symbol parse --limit 5 --json) >out &&
	jq -s -e "length == 2 and all(._type == \"occurrence\" and .name == \"parse\" and
		.confidence == \"syntactic\")" out
'

test_expect_success 'refs: --symbol is required' '
	(cd repo && test_status 2 ci refs --json) 2>err &&
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

test_expect_success 'metadata: pyproject.toml and Cargo.toml read as TOML (optional dependencies, groups, targets)' '
	(
		cd repo &&
		cat >pyproject.toml <<-\EOF &&
		[project]
		name = "requests"
		dependencies = ["charset_normalizer>=2,<4", "idna>=2.5,<4"]  # inline

		[project.optional-dependencies]
		security = []
		socks = ["PySocks>=1.5.6, !=1.5.7"]
		use_chardet_on_py3 = ["chardet>=3.0.2,<6"]
		async = [
		  "asgiref>=3.2",
		]

		[dependency-groups]
		dev = ["pytest>=8"]

		[tool.poetry.group.docs.dependencies]
		sphinx = { version = "^7", optional = true }
		EOF
		cat >Cargo.toml <<-\EOF &&
		[package]
		name = "x"
		[target.'"'"'cfg(unix)'"'"'.dependencies]
		libc = "0.2"
		[build-dependencies.cc]
		version = "1.0"
		EOF
		ci metadata --json
	) >out 2>err &&
	test_must_be_empty err &&
	jq -r ".dependencies[] | [.manifest, .name, .version] | @tsv" out >actual &&
	printf "%s\t%s\t%s\n" \
		pyproject.toml charset_normalizer ">=2,<4" pyproject.toml idna ">=2.5,<4" \
		pyproject.toml asgiref ">=3.2" pyproject.toml PySocks ">=1.5.6, !=1.5.7" \
		pyproject.toml chardet ">=3.0.2,<6" pyproject.toml pytest ">=8" \
		pyproject.toml sphinx ^7 \
		Cargo.toml cc 1.0 Cargo.toml libc 0.2 >expect &&
	test_cmp expect actual &&
	printf "[project\n" >repo/pyproject.toml &&
	(cd repo && ci metadata --json) >out 2>err &&
	test_grep "^ci: warning: metadata: pyproject.toml: " err &&
	(cd repo && rm pyproject.toml Cargo.toml)
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
	(cd repo && test_status 2 ci memory add --type bad --category db --memory x) 2>err &&
	test_grep "type must be" err &&
	(cd repo && test_status 2 ci memory add --type gotcha) 2>err &&
	test_grep "required" err
'

test_expect_success 'memory list: filters' '
	(cd repo && ci memory list --json) | jq -s -e "length == 2" &&
	(cd repo && ci memory list --type gotcha --json) | jq -s -e "length == 1 and .[0].category == \"db\"" &&
	(cd repo && ci memory list --category style --json) | jq -s -e ".[0].memory == \"Tabs\"" &&
	(cd repo && ci memory list --query LEAKS --json) | jq -s -e "length == 1" &&
	(cd repo && ci memory list --query nothing --json) >out &&
	test_must_be_empty out &&
	(cd repo && test_status 2 ci memory list --type nope) 2>err &&
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
	(cd repo && test_status 2 ci memory) 2>err &&
	test_grep "expected list, add or remove" err &&
	(cd repo && test_status 2 ci memory forget) 2>err &&
	test_grep "not forget" err
'

test_expect_success 'status without an index: the exit status of ci-index' '
	mkdir empty && (cd empty && git init -q) &&
	(cd empty && test_must_fail ci status --json) >out 2>err &&
	test_grep "^ci-index: " err
'

# on_tty <command>...: run it with a terminal as its standard output (script(1))
on_tty() {
	script -qec "$*" /dev/null | tr -d "\r"
}

test_expect_success 'setup: a repository with C includes over two years, a style guide' '
	mkdir pats && (
		cd pats && git init -q &&
		printf "#include <check.h>\n#include <stdio.h>\nint old_test(void) { return 0; }\n" >old_test.c &&
		git add . &&
		GIT_AUTHOR_DATE=2024-01-01T00:00:00Z GIT_COMMITTER_DATE=2024-01-01T00:00:00Z \
			git -c user.name=t -c user.email=t@t commit -qm "test: check tests" &&
		printf "#include <cmocka.h>\n#include <stdio.h>\nint new_test(void) { return 0; }\n" >new_test.c &&
		printf "#include <stdio.h>\nint main(void) { return 0; }\n" >main.c &&
		printf "# STYLE\n\n## Naming\n\n- snake_case for functions\n* UPPER_CASE for macros\n\n## Layout\n\n2. Tabs, 8 wide\n" >STYLE.md &&
		printf "root = true\n\n[*.c]\nindent_style = tab\n" >.editorconfig &&
		printf "# pats\n\nA project.\n\n## Coding conventions\n\n- One file per command\n\n## Install\n\n- make install\n" >README.md &&
		git add . &&
		GIT_AUTHOR_DATE=2025-06-01T00:00:00Z GIT_COMMITTER_DATE=2025-06-01T00:00:00Z \
			git -c user.name=t -c user.email=t@t commit -qm "test(unit): cmocka tests" &&
		ci reindex --json >../reindex.out
	) &&
	jq -s -e ".[-1] == {_type: \"git_memories\", source: \"conventional commits of the last 90 days\", added: 1}" reindex.out &&
	(cd pats && ci memory list --json) | jq -s -e "length == 1 and .[0].type == \"convention\" and
		.[0].category == \"testing\" and .[0].memory == \"unit: cmocka tests\" and .[0].source == \"git\" and
		.[0].confidence == 1 and .[0].stale == false"
'

test_expect_success 'patterns --json: frequencies per category, trends from history, golden files, conflicts, memories' '
	(cd pats && ci patterns --json) >all &&
	jq -c "select(._type != \"memory\")" all >out &&
	jq -s -e "map(select(._type == \"memory\")) | length == 1 and .[0].memory == \"unit: cmocka tests\" and
		.[0].confidence == 1" all &&
	cat >expect <<-\EOF &&
	{"_type":"pattern","category":"libraries","name":"stdio","count":3,"frequency":"100%","adoption":100,"trend":"Stable","lastUsed":"2025-06-01","files":["main.c","new_test.c","old_test.c"]}
	{"_type":"pattern","category":"testing","name":"check.h","count":1,"frequency":"50%","adoption":50,"trend":"Declining","lastUsed":"2024-01-01","files":["old_test.c"]}
	{"_type":"pattern","category":"testing","name":"cmocka.h","count":1,"frequency":"50%","adoption":50,"trend":"Rising","lastUsed":"2025-06-01","files":["new_test.c"]}
	{"_type":"golden_file","file":"new_test.c","patterns":1}
	{"_type":"golden_file","file":"old_test.c","patterns":1}
	{"_type":"conflict","category":"testing","patterns":["check.h","cmocka.h"]}
	EOF
	test_cmp expect out &&
	(cd pats && ci patterns --category libraries --json) >out &&
	jq -s -e "map(select(._type == \"pattern\")) | length == 1 and .[0].name == \"stdio\"" out &&
	(cd pats && ci patterns --category di --json) >out &&
	jq -s -e "map(select(._type == \"pattern\")) == []" out
'

test_expect_success 'patterns on a terminal: one line a pattern' '
	(cd pats && on_tty ci patterns --category testing) >out &&
	cat >expect <<-\EOF &&
	testing   check.h                   50% of files (1)  Declining
	testing   cmocka.h                  50% of files (1)  Rising
	golden file: new_test.c (1 patterns)
	golden file: old_test.c (1 patterns)
	conflict in testing: check.h and cmocka.h both above 20%
	memory: [convention] testing: unit: cmocka tests (confidence 1.00)
	EOF
	test_cmp expect out &&
	(cd pats && on_tty ci patterns --category state) >out &&
	test_grep "^no state patterns in the index" out
'

test_expect_success 'patterns: errors on stderr, exit 1' '
	(cd pats && test_status 2 ci patterns --category ui) >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci: patterns: --category must be all, di, state, testing or libraries, not .ui." err &&
	(cd pats && test_status 2 ci patterns extra) 2>err &&
	test_grep "unexpected argument" err &&
	(cd empty && test_status 1 ci patterns) 2>err &&
	test_grep "^ci: patterns: no index" err
'

test_expect_success 'style-guide: a contributing guide in RST gives its code style section, linters their settings' '
	mkdir -p sg/docs/dev &&
	(cd sg && git init -q) &&
	printf "%s\n" ".. _contributing:" "" "Contributor Guide" "=================" "" \
		"If you are reading this, you want to contribute." "" \
		"Bug Reports" "~~~~~~~~~~~" "" "Search the issues, both open and closed, first." "" \
		"Code Style" "~~~~~~~~~~" "" "The code base keeps a consistent" "style with pre-commit." "" \
		"    indented = code" "" "- Run pre-commit before a PR." "" \
		"Docs" "----" "" "Docs are welcome." >sg/docs/dev/contributing.rst &&
	printf "[flake8]\nignore = E203,\n    W503\n[metadata]\nname = x\n" >sg/setup.cfg &&
	printf "[tool.isort]\nprofile = \"black\"\n[project]\nname = \"x\"\n" >sg/pyproject.toml &&
	printf "repos:\n-   repo: r\n    hooks:\n    -   id: ruff\n" >sg/.pre-commit-config.yaml &&
	(cd sg && ci style-guide --json) >out &&
	jq -r "[.file, .line, .section, .rule] | @tsv" out >actual &&
	printf "%s\t%s\t%s\t%s\n" \
		docs/dev/contributing.rst 16 "Code Style" "The code base keeps a consistent style with pre-commit." \
		docs/dev/contributing.rst 21 "Code Style" "Run pre-commit before a PR." \
		setup.cfg 2 "[flake8]" "ignore = E203, W503" \
		pyproject.toml 2 "[tool.isort]" "profile = \"black\"" \
		.pre-commit-config.yaml 4 hooks "pre-commit hook ruff" >expect &&
	test_cmp expect actual &&
	! grep -q "open and closed" out
'

test_expect_success 'style-guide --json: the rules of STYLE.md, .editorconfig and the README on style' '
	(cd pats && ci style-guide --json) >out &&
	cat >expect <<-\EOF &&
	{"_type":"style_rule","file":"STYLE.md","line":5,"section":"Naming","rule":"snake_case for functions"}
	{"_type":"style_rule","file":"STYLE.md","line":6,"section":"Naming","rule":"UPPER_CASE for macros"}
	{"_type":"style_rule","file":"STYLE.md","line":10,"section":"Layout","rule":"Tabs, 8 wide"}
	{"_type":"style_rule","file":".editorconfig","line":4,"section":"[*.c]","rule":"indent_style = tab"}
	{"_type":"style_rule","file":"README.md","line":7,"section":"Coding conventions","rule":"One file per command"}
	EOF
	test_cmp expect out &&
	(cd pats && ci style-guide --query TABS --json) | jq -s -e "map(.line) == [10]" &&
	(cd pats && ci style-guide --category naming --json) | jq -s -e "map(.line) == [5, 6]"
'

test_expect_success 'style-guide on a terminal: file:line: [section] rule' '
	(cd pats && on_tty ci style-guide --category layout) >out &&
	echo "STYLE.md:10: [Layout] Tabs, 8 wide" >expect &&
	test_cmp expect out &&
	(cd pats && on_tty ci style-guide --query nothing-like-this) >out &&
	echo "no style rules match" >expect &&
	test_cmp expect out
'

test_expect_success 'style-guide: errors on stderr, exit 1' '
	(cd empty && test_status 1 ci style-guide) >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci: style-guide: no style guide found" err &&
	(cd pats && test_status 2 ci style-guide --query "") 2>err &&
	test_grep "query must not be empty" err &&
	(cd pats && test_status 2 ci style-guide --bogus) 2>err &&
	test_grep "unknown option .--bogus." err
'

test_expect_success 'search --intent edit: search quality, related memories, the preflight card' '
	(cd pats && ci memory add --type failure --category testing --memory "cmocka needs linking" --reason r) &&
	(cd pats && ci search --query "new test" --intent edit --json) >out &&
	jq -s -e "map(select(._type == \"search_quality\")) | length == 1 and (.[0].status | test(\"^(ok|low_confidence)$\"))" out &&
	jq -s -e "map(select(._type == \"preflight\"))[0] | .intent == \"edit\" and (.ready | type) == \"boolean\" and
		.patterns.avoid == [\"check.h (50% testing)\"] and .bestExample == \"new_test.c\" and
		.warnings == [\"cmocka needs linking\"] and (.impact.coverage | test(\"callers in results$\"))" out &&
	(cd pats && ci search --query "new test" --json) >out &&
	jq -s -e "map(select(._type == \"preflight\")) == [] and (map(select(._type == \"related_memory\")) | length >= 1)" out
'

test_expect_success 'context: the Markdown overview; --json one record with it' '
	(cd pats && ci context) >out &&
	test_grep "^# Codebase context: pats$" out &&
	test_grep "^- c: 3 files$" out &&
	test_grep "^- testing: check.h, 50% of files (1), Declining$" out &&
	test_grep "^Conflict in testing: check.h and cmocka.h are both above 20%.$" out &&
	test_grep "^- \[convention\] testing: unit: cmocka tests (confidence 1.00)$" out &&
	(cd pats && ci context --json) >json &&
	jq -j .text json >text && test_cmp out text &&
	jq -e "._type == \"context\"" json &&
	(cd empty && test_status 1 ci context) 2>err &&
	test_grep "^ci: context: no index" err
'

test_expect_success 'memory list on a terminal: confidence, and stale below 30%' '
	(cd pats && jq ". + [{id: \"0000000000000009\", type: \"gotcha\", category: \"db\", memory: \"old\", reason: \"r\",
		date: \"2001-01-01T00:00:00Z\"}]" .codebase-context/memory.json >m && mv m .codebase-context/memory.json) &&
	(cd pats && on_tty ci memory list --type gotcha) >out &&
	echo "0000000000000009  [gotcha] db: old  (confidence 0.00, stale)" >expect &&
	test_cmp expect out
'

test_done
