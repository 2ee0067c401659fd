#!/bin/sh
# t1257-fleet-xrefs: references across the repositories of a shard set
# (libcommon/fleet/xrefs.h).  Repository liba publishes the Python package
# liba (pyproject.toml) and jslib the JavaScript package jslib (package.json);
# app imports both; app2 has a module liba/util.py of its own (a vendored copy,
# undeclared) and imports it.  ci-refs --shards refs|callers|impact resolve
# app's imports to liba's and jslib's files (import_edge records, calls bound
# "cross-repo", impact "via"), the same in threads, forked and through the
# set's server; app2's own module wins over liba's; CI_XREFS=0 leaves it out.
# Go: goapp imports a package of golib's module (go.mod).

. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang javascript; then
	test_skip 'references across repositories' 'the python and javascript grammars are not compiled in'
	test_done
fi

XDG_RUNTIME_DIR=$TRASH_DIRECTORY/run
CI_SHARDS_SERVER_IDLE=60	# a server a failed test leaves goes by itself
export XDG_RUNTIME_DIR CI_SHARDS_SERVER_IDLE
mkdir -m 700 "$XDG_RUNTIME_DIR"

# lines <line>...: one argument a line
lines() {
	printf "%s\n" "$@"
}

# repo <name>: commit what is in <name> and index it as set/<name>.db
repo() {
	(cd "$1" && git init -q && git add . && git commit -q -m "$1" &&
		ci-index --index ../set/$1.db --no-progress build . 2>/dev/null)
}

test_expect_success 'setup: four repositories, one importing two others'"'"' packages' '
	mkdir -p set liba/liba app/app app2/app2 app2/liba jslib &&
	lines "[project]" "name = \"liba\"" >liba/pyproject.toml &&
	: >liba/liba/__init__.py &&
	lines "def helper(x):" "    return x + 1" "" "" "def other():" "    return helper(2)" >liba/liba/util.py &&
	repo liba &&
	lines "{\"name\": \"jslib\", \"version\": \"1.0.0\"}" >jslib/package.json &&
	lines "export function jsHelper(x) {" "  return x + 1;" "}" >jslib/util.js &&
	repo jslib &&
	: >app/app/__init__.py &&
	lines "from liba.util import helper" "" "" "def main():" "    return helper(3)" >app/app/main.py &&
	lines "import { jsHelper } from \"jslib/util\";" "" "export function web() {" "  return jsHelper(1);" "}" >app/web.js &&
	repo app &&
	: >app2/app2/__init__.py &&
	: >app2/liba/__init__.py &&
	lines "def helper(x):" "    return x - 1" >app2/liba/util.py &&
	lines "from liba.util import helper" "" "" "def run():" "    return helper(4)" >app2/app2/run.py &&
	repo app2 &&
	# what each index resolved itself: app2 its own liba, app nothing
	sqlite3 set/app.db "SELECT path, target, resolved IS NULL FROM imports ORDER BY path" >actual &&
	printf "app/main.py|liba.util|1\nweb.js|jslib/util|1\n" >expect &&
	test_cmp expect actual &&
	test "$(sqlite3 set/app2.db "SELECT resolved FROM imports")" = liba/util.py
'

test_expect_success 'callers: app'"'"'s call bound to liba'"'"'s definition, across the repositories' '
	CI_SHARDS_SERVER=0 ci-refs --shards set callers helper >out 2>err &&
	jq -c "select(._type == \"import_edge\") | [.repo, .path, .line, .target, .resolved.repo, .resolved.path]" out >actual &&
	echo "[\"app\",\"app/main.py\",1,\"liba.util\",\"liba\",\"liba/util.py\"]" >expect &&
	test_cmp expect actual &&
	jq -c "select(._type == \"occurrence\") | [.repo, .path, .line, .binding, .definition.repo, .definition.path, .definition.line]" out >actual &&
	cat >expect <<-\EOF &&
	["app2","app2/run.py",5,"import",null,"liba/util.py",1]
	["liba","liba/util.py",6,"local",null,"liba/util.py",1]
	["app","app/main.py",5,"cross-repo","liba","liba/util.py",1]
	EOF
	test_cmp expect actual &&
	tail -n 1 out | jq -e "._type == \"fleet\"" >/dev/null
'

test_expect_success 'app2'"'"'s own liba module wins: no import of app2 goes to liba, nor app'"'"'s to app2' '
	jq -r "select(._type == \"import_edge\" and (.repo == \"app2\" or .resolved.repo == \"app2\"))" out >bad &&
	test_must_be_empty bad
'

test_expect_success 'refs: the import edge; impact: app'"'"'s file, via liba'"'"'s' '
	CI_SHARDS_SERVER=0 ci-refs --shards set refs helper >out 2>err &&
	jq -c "select(._type == \"import_edge\") | [.repo, .path, .resolved.repo, .resolved.path]" out >actual &&
	echo "[\"app\",\"app/main.py\",\"liba\",\"liba/util.py\"]" >expect &&
	test_cmp expect actual &&
	CI_SHARDS_SERVER=0 ci-refs --shards set impact liba/util.py:helper >out 2>err &&
	jq -c "select(._type == \"impact\") | [.repo, .path, .depth, .references, .via]" out >actual &&
	cat >expect <<-\EOF &&
	["app2","app2/run.py",1,1,null]
	["app","app/main.py",1,1,{"repo":"liba","path":"liba/util.py"}]
	EOF
	test_cmp expect actual
'

test_expect_success 'JavaScript: package.json'"'"'s name' '
	CI_SHARDS_SERVER=0 ci-refs --shards set callers jsHelper >out 2>err &&
	jq -c "select(._type == \"occurrence\") | [.repo, .path, .binding, .definition.repo, .definition.path]" out >actual &&
	echo "[\"app\",\"web.js\",\"cross-repo\",\"jslib\",\"util.js\"]" >expect &&
	test_cmp expect actual &&
	CI_SHARDS_SERVER=0 ci-refs --shards set impact util.js >out 2>err &&
	jq -c "select(._type == \"impact\") | [.repo, .path, .via.repo]" out >actual &&
	echo "[\"app\",\"web.js\",\"jslib\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'the same records in threads, forked, and through the set'"'"'s server' '
	for q in "callers helper" "refs helper" "impact liba/util.py:helper" "callers jsHelper"; do
		CI_SHARDS_SERVER=0 ci-refs --shards set --shards-mode thread $q >thread.out 2>/dev/null &&
		CI_SHARDS_SERVER=0 ci-refs --shards set --shards-mode fork $q >fork.out 2>/dev/null &&
		test_cmp thread.out fork.out &&
		grep -q import_edge thread.out || return 1
	done &&
	(ci-refs --shards set --shards-serve >/dev/null 2>serve.err &) &&
	i=0 &&
	while ! ls "$XDG_RUNTIME_DIR/ci" 2>/dev/null | grep -q "^refs-shards-.*\.sock$"; do
		i=$((i + 1)) && test $i -le 200 && sleep 0.1 || return 1
	done &&
	ci-refs --shards set callers helper >served.out 2>/dev/null &&
	CI_SHARDS_SERVER=0 ci-refs --shards set callers helper >here.out 2>/dev/null &&
	ci-refs --shards set --shards-stop &&
	test_cmp here.out served.out
'

test_expect_success 'CI_XREFS=0: each shard'"'"'s answer alone; nothing found across: exit 1 without it' '
	CI_SHARDS_SERVER=0 CI_XREFS=0 ci-refs --shards set callers jsHelper >out 2>err
	test $? = 1 &&
	test_must_fail grep -q "import_edge\|xref_" out &&
	CI_SHARDS_SERVER=0 ci-refs --shards set callers jsHelper >out 2>err &&
	test_must_fail grep -q "xref_" out
'

if test_have_lang go; then
	test_expect_success 'Go: go.mod'"'"'s module path, a package a directory' '
		mkdir -p golib/util goapp &&
		lines "module example.com/golib" "" "go 1.21" >golib/go.mod &&
		lines "package util" "" "func Helper(x int) int {" "	return x + 1" "}" >golib/util/util.go &&
		repo golib &&
		lines "module example.com/goapp" "" "go 1.21" >goapp/go.mod &&
		lines "package main" "" "import \"example.com/golib/util\"" "" "func main() {" "	util.Helper(1)" "}" >goapp/main.go &&
		repo goapp &&
		CI_SHARDS_SERVER=0 ci-refs --shards set callers Helper >out 2>err &&
		jq -c "select(._type == \"occurrence\") | [.repo, .path, .line, .binding, .definition.repo, .definition.path]" out >actual &&
		echo "[\"goapp\",\"main.go\",6,\"cross-repo\",\"golib\",\"util/util.go\"]" >expect &&
		test_cmp expect actual &&
		CI_SHARDS_SERVER=0 ci-refs --shards set impact util/util.go >out 2>err &&
		jq -c "select(._type == \"impact\") | [.repo, .path, .via.repo]" out >actual &&
		echo "[\"goapp\",\"main.go\",\"golib\"]" >expect &&
		test_cmp expect actual
	'
fi

test_expect_success 'the records are valid against their schemas' '
	python=$(command -v python3) &&
	if "$python" -c "import jsonschema" 2>/dev/null; then
		CI_SHARDS_SERVER=0 ci-refs --shards set callers helper >v.out &&
		CI_SHARDS_SERVER=0 ci-refs --shards set impact liba/util.py:helper >>v.out &&
		"$python" "$CI_SRC_DIR/tests/validate-records.py" --name xrefs "$CI_SRC_DIR/share/schema" <v.out >&7
	fi
'

test_done
