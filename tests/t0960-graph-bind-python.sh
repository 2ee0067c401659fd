#!/bin/sh
# t0960-graph-bind-python: Python calls bound by following names
# (libcommon/graph/resolve.c) end to end: through a package's re-export, a
# module alias, a constructor and the variable it makes, an annotated
# parameter, self through the bases, super(), a local shadowing an import;
# an unknown receiver left out unless --by-name; the same bindings in
# refs' call references, in trace and in dead.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'python bindings' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a package of shapes, two users' '
	git init -q repo &&
	write_lines shapes/__init__.py "from .base import Shape as Shape" "from .util import *" &&
	write_lines shapes/base.py "class Shape:" "    def area(self):" "        return 0" "" \
		"    def describe(self):" "        return self.area()" "" \
		"class Square(Shape):" "    def __init__(self, n):" "        super().__init__()" "        self.n = n" "" \
		"    def area(self):" "        return self.n * self.n" "" \
		"    def show(self):" "        return self.describe()" &&
	write_lines shapes/util.py "def scale(x):" "    return x" "" "def unused():" "    return 2" &&
	write_lines app.py "import shapes" "import shapes.util as su" "from shapes.base import Square" "" \
		"def main(other, s: Square):" "    sq = Square(2)" "    sq.area()" "    s.show()" \
		"    other.area()" "    shapes.scale(1)" "    su.scale(2)" "    scale = other" "    scale(3)" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# calls <args>: callers/callees as "path:line binding def_path:def_line"
calls() {
	(cd repo && ci-refs --json "$@") >out &&
	"$JQ" -r "\"\\(.path):\\(.line) \\(.binding) \\(.definition.path):\\(.definition.line)\"" out
}

test_expect_success 'callers Square.area: the constructed variable (receiver); Shape.area: self in the base (member)' '
	calls callers Square.area >actual &&
	echo "app.py:7 receiver shapes/base.py:13" >expect &&
	test_cmp expect actual &&
	calls callers Shape.area >actual &&
	echo "shapes/base.py:6 member shapes/base.py:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers describe: an inherited method through self; show: an annotated parameter' '
	calls callers describe >actual &&
	echo "shapes/base.py:17 inherited shapes/base.py:5" >expect &&
	test_cmp expect actual &&
	calls callers show >actual &&
	echo "app.py:8 receiver shapes/base.py:16" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers scale: a star re-export and a module alias (import); the shadowing local is left out' '
	calls callers scale >actual &&
	printf "%s\n" "app.py:10 import shapes/util.py:1" "app.py:11 import shapes/util.py:1" >expect &&
	test_cmp expect actual &&
	calls callers Square >actual &&
	echo "app.py:6 import shapes/base.py:8" >expect &&
	test_cmp expect actual
'

test_expect_success 'an unknown receiver (other.area()) binds only with --by-name' '
	calls callers --by-name area >actual &&
	grep "^app.py:9 " actual &&
	calls callers area >actual &&
	! grep "^app.py:9 " actual
'

test_expect_success 'refs: every call reference with its binding and definition, computed when read' '
	(cd repo && ci-refs --json refs area) >out &&
	"$JQ" -r "select(.kind == \"call\") | \"\\(.path):\\(.line) \\(.binding) \\(.definition.path):\\(.definition.line)\"" out >actual &&
	printf "%s\n" "app.py:7 receiver shapes/base.py:13" "app.py:9 null null:null" \
		"shapes/base.py:6 member shapes/base.py:2" >expect &&
	test_cmp expect actual
'

test_expect_success 'trace main describe: through the annotated parameter and self' '
	(cd repo && ci-refs --json trace main describe) >out &&
	"$JQ" -r "[.hops[] | \"\\(.name)@\\(.path):\\(.line)\"] | join(\" > \")" out >actual &&
	echo "main@app.py:5 > show@shapes/base.py:16 > describe@shapes/base.py:5" >expect &&
	test_cmp expect actual
'

test_expect_success 'dead: the function nothing calls, not those bound through the package' '
	(cd repo && ci-refs --json dead) >out &&
	"$JQ" -r ".name" out >actual &&
	grep "^unused$" actual &&
	! grep "^scale$" actual &&
	! grep "^describe$" actual
'

test_done
