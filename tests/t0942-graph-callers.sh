#!/bin/sh
# t0942-graph-callers: ci-refs callers and callees bind each call to the
# definition it reaches (libcommon/graph/bind.c): self.m() inside the class
# (member), a module's own function (local), a function of an imported module
# (import), a parameter annotated with the class (receiver); a namesake's calls
# are left out, and so is a Python call no rule binds (an unknown receiver, a
# name never imported) unless --by-name, which binds it by bind.c's rules
# (the file imports the class's file: import; the only definition: name).  The fixture mirrors flask's Flask.make_response and the
# make_response function of its helpers module.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'callers and callees' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a method and a function of the same name, callers of each' '
	git init -q repo &&
	write_lines app.py "class Flask:" "    def make_response(self, rv):" "        return rv" "" \
		"    def full_dispatch(self):" "        return self.make_response(1)" &&
	write_lines helpers.py "def make_response(*args):" "    return args" &&
	write_lines views.py "from helpers import make_response" "" "def index():" \
		"    return make_response(\"x\")" &&
	write_lines other.py "from app import Flask" "" "def run(app):" "    return app.make_response(2)" &&
	write_lines typed.py "from app import Flask" "" "def run(app: Flask):" "    return app.make_response(3)" &&
	write_lines lone.py "def solo():" "    return 1" &&
	write_lines user.py "def go():" "    return solo()" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# calls <command> <name> [option]: the answer as {name, path, line, scope, binding, definition}
calls() {
	(cd repo && ci-refs --json ${3:-} "$1" "$2") >out &&
	"$JQ" -c "{name, path, line, scope, binding, definition}" out
}

test_expect_success 'callers Flask.make_response: self.m() and an annotated parameter, not the namesake' '
	calls callers Flask.make_response >actual &&
	cat >expect <<-\EOF &&
	{"name":"make_response","path":"app.py","line":6,"scope":"Flask.full_dispatch","binding":"member","definition":{"path":"app.py","line":2}}
	{"name":"make_response","path":"typed.py","line":4,"scope":"run","binding":"receiver","definition":{"path":"app.py","line":2}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers --by-name: the unknown receiver too, through the import' '
	calls callers Flask.make_response --by-name >actual &&
	cat >expect <<-\EOF &&
	{"name":"make_response","path":"app.py","line":6,"scope":"Flask.full_dispatch","binding":"member","definition":{"path":"app.py","line":2}}
	{"name":"make_response","path":"other.py","line":4,"scope":"run","binding":"import","definition":{"path":"app.py","line":2}}
	{"name":"make_response","path":"typed.py","line":4,"scope":"run","binding":"receiver","definition":{"path":"app.py","line":2}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callers helpers.make_response: the importer, not the method' '
	calls callers helpers.make_response >actual &&
	cat >expect <<-\EOF &&
	{"name":"make_response","path":"views.py","line":4,"scope":"index","binding":"import","definition":{"path":"helpers.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'a name never imported binds to nothing; --by-name: the only definition' '
	(cd repo && test_status 1 ci-refs callers solo 2>../err) &&
	test_grep "no callers of .solo." err &&
	calls callers solo --by-name >actual &&
	cat >expect <<-\EOF &&
	{"name":"solo","path":"user.py","line":2,"scope":"go","binding":"name","definition":{"path":"lone.py","line":1}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callees Flask.full_dispatch: the method it calls' '
	calls callees Flask.full_dispatch >actual &&
	cat >expect <<-\EOF &&
	{"name":"make_response","path":"app.py","line":6,"scope":"Flask.full_dispatch","binding":"member","definition":{"path":"app.py","line":2}}
	EOF
	test_cmp expect actual
'

test_expect_success 'no such definition: exit 1 and a message' '
	(cd repo && test_status 1 ci-refs callers nosuch 2>../err) &&
	test_grep "no definition of .nosuch." err
'

test_done
