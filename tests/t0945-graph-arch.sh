#!/bin/sh
# t0945-graph-arch: ci-refs arch (libcommon/graph/arch.c, clusters.c):
# packages in an order where imports point down, with layers; the import that
# breaks the layering marked as a back edge; entry points; clusters of files
# by calls and by co-change (a coupling record loaded into the index).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'arch' 'the python and c grammars are not compiled in'
	test_done
fi

test_expect_success 'setup: cli over core over util, util importing core back once' '
	git init -q repo &&
	write_lines cli/main.py "from core.engine import start" "" "def cli():" "    return start()" "" \
		"if __name__ == \"__main__\":" "    cli()" &&
	write_lines cli/__main__.py "from cli.main import cli" "cli()" &&
	write_lines core/engine.py "from util.text import clean" "from util.num import twice" "" \
		"def start():" "    return clean(\"x\") + str(twice(1))" &&
	write_lines core/model.py "from util.text import clean" "" "def model():" "    return clean(\"m\")" &&
	write_lines util/text.py "def clean(s):" "    return s.strip()" &&
	write_lines util/num.py "from core.model import model" "" "def twice(x):" "    return 2 * x" &&
	write_lines tools/prog.c "int main(void)" "{" "\treturn 0;" "}" &&
	write_lines docs/notes.md "# Notes" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'packages: top first, each with its layer and imports; docs/ has no code' '
	(cd repo && ci-refs --json arch) >out &&
	"$JQ" -r "select(._type == \"package\") | [.order, .name, .files, .layer, (.imports | join(\",\")), .imported_by] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	1	cli	2	2	core	0
	2	core	2	1	util	2
	3	tools	1	0		0
	4	util	2	0	core	1
	EOF
	test_cmp expect actual
'

test_expect_success 'edges: imports and calls between packages; the import up is a back edge' '
	"$JQ" -r "select(._type == \"package_edge\") | [.from, .to, .imports, .calls, .back] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	cli	core	1	1	false
	core	util	3	3	false
	util	core	1	0	true
	EOF
	test_cmp expect actual
'

test_expect_success 'entry points: a main function, a main guard, a __main__ module' '
	"$JQ" -r "select(._type == \"entry_point\") | [.path, .name, .kind, .line // 0] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	cli/__main__.py	__main__	main_module	0
	cli/main.py	__main__	main_guard	6
	tools/prog.c	main	main	1
	EOF
	test_cmp expect actual
'

test_expect_success 'clusters by calls: the files that call each other' '
	"$JQ" -c "select(._type == \"arch_cluster\") | [.id, .files, .packages, .calls, .co_changes]" out >actual &&
	cat >expect <<-\EOF &&
	[1,["cli/__main__.py","cli/main.py","core/engine.py","core/model.py","util/num.py","util/text.py"],["cli","core","util"],5,0]
	EOF
	test_cmp expect actual
'

test_expect_success 'clusters by co-change: files that change together often go together (notes.md is no code)' '
	(cd repo && echo "{\"_type\":\"coupling\",\"a\":\"tools/prog.c\",\"b\":\"docs/notes.md\",\"score\":0.9,\"co_changes\":4,\"last\":1700000000}" | ci-index load &&
	 echo "{\"_type\":\"coupling\",\"a\":\"tools/prog.c\",\"b\":\"util/num.py\",\"score\":0.9,\"co_changes\":9,\"last\":1700000000}" | ci-index load &&
	 ci-refs --json arch) >out &&
	"$JQ" -c "select(._type == \"arch_cluster\") | [.id, .files, .calls, .co_changes]" out >actual &&
	cat >expect <<-\EOF &&
	[1,["cli/__main__.py","cli/main.py","core/engine.py","core/model.py","util/text.py"],4,0]
	[2,["tools/prog.c","util/num.py"],0,9]
	EOF
	test_cmp expect actual
'

test_expect_success '--path keeps the packages under it; --limit applies to each kind of record' '
	(cd repo && ci-refs --json --path util arch) >out &&
	"$JQ" -r "select(._type == \"package\") | .name" out >actual &&
	echo util >expect && test_cmp expect actual &&
	(cd repo && ci-refs --json --limit 1 arch) >out &&
	"$JQ" -r "._type" out >actual &&
	printf "package\nentry_point\npackage_edge\narch_cluster\n" >expect && test_cmp expect actual
'

test_expect_success 'no code under a path: exit 1; arch takes no argument' '
	(cd repo && test_status 1 ci-refs --path docs arch 2>../err) &&
	test_grep "no code in the index under that path" err &&
	(cd repo && test_status 2 ci-refs arch x 2>../err) &&
	test_grep "arch takes no argument" err
'

test_done
