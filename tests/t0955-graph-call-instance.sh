#!/bin/sh
# t0955-graph-call-instance: x = obj(...) where obj is an instance (a
# parameter annotated with a class, here a Protocol imported under
# `if TYPE_CHECKING:`, as starlette's test_client_factory fixture) types x by
# the return annotation of the class's __call__, so x.f() binds to that
# class's f (receiver); without a __call__, or one without a return
# annotation, x stays unknown and x.f() binds to nothing (libcommon/graph/resolve.c
# call_class).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'instance called' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a client, a factory protocol, tests calling through it' '
	git init -q repo &&
	write_lines client.py "class TestClient:" "    def get(self, url):" "        return url" "" \
		"class Plain:" "    def run(self):" "        return 1" &&
	write_lines protos.py "from typing import Protocol" "" "from client import TestClient" "" \
		"class Factory(Protocol):" "    def __call__(self, app) -> TestClient: ..." "" \
		"class Loose(Protocol):" "    def __call__(self, app): ..." &&
	write_lines test_app.py "from typing import TYPE_CHECKING" "" "from client import Plain" "" \
		"if TYPE_CHECKING:" "    from protos import Factory, Loose" "" \
		"def test_get(test_client_factory: Factory):" "    client = test_client_factory(None)" \
		"    return client.get(\"/\")" "" \
		"def test_loose(loose: Loose):" "    client = loose(None)" "    return client.get(\"/\")" "" \
		"def test_plain(p: Plain):" "    client = p()" "    return client.get(\"/\")" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'callers TestClient.get: the call on the factory'"'"'s result only' '
	(cd repo && ci-refs --json callers TestClient.get) >out &&
	"$JQ" -c "{path, line, scope, binding, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"test_app.py","line":10,"scope":"test_get","binding":"receiver","definition":{"path":"client.py","line":2}}
	EOF
	test_cmp expect actual
'

test_expect_success 'callees of the tests: with an unannotated __call__ or none, get() is left unbound' '
	(cd repo && ci-refs --json callees test_loose && ci-refs --json callees test_plain) >out &&
	"$JQ" -c "select(.name == \"get\") | {path, line, binding, definition}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"test_app.py","line":14,"binding":null,"definition":null}
	{"path":"test_app.py","line":18,"binding":null,"definition":null}
	EOF
	test_cmp expect actual
'

test_done
