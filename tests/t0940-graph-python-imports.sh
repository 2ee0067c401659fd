#!/bin/sh
# t0940-graph-python-imports: Python imports by the language's rules
# (libcommon/parse/imports.c), end to end, and the tools that read them.
#
# A synthetic package mirrors the shape of psf/requests where ci went wrong:
# `from . import sessions` imports sessions.py (not the package's
# __init__.py), a cycle runs through three modules and not through
# __init__.py, an import under `if TYPE_CHECKING:` is marked and left out of
# cycles unless asked (then sessions -> models -> hooks -> sessions joins it), `from pathlib import Path` beside a package's own
# pathlib.py is the standard library, and a src layout and a namespace
# package resolve.  Checked: ci-chunk's import records, ci-refs deps, cycles
# and impact, `ci cycles`, and the MCP tools dependencies (bobbin) and
# detect_circular_dependencies (codebase-context), and importedByCount (ci search).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'Python import graph' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a requests-like package, a src layout, a namespace package' '
	git init -q repo &&
	write_lines req/__init__.py "from . import utils" "from .models import Request" \
		"from .api import get" "from .sessions import Session" &&
	write_lines req/api.py "from . import sessions" "" "def get(url):" \
		"    return sessions.Session().get(url)" &&
	write_lines req/sessions.py "from .models import Request" "from . import hooks, adapters" \
		"" "class Session:" "    def get(self, url):" "        return Request(url)" &&
	write_lines req/adapters.py "class HTTPAdapter:" "    pass" &&
	write_lines req/models.py "from .hooks import default_hooks" "from .utils import helper" \
		"" "class Request:" "    def __init__(self, url):" "        self.url = helper(url)" &&
	write_lines req/utils.py "from typing import TYPE_CHECKING" "from . import compat" "" \
		"if TYPE_CHECKING:" "    from .models import Request" "else:" "    from . import adapters" \
		"" "def helper(u):" "    return u" &&
	write_lines req/compat.py "from .models import Request" "import json" "from req import compat" &&
	write_lines req/hooks.py "import typing" "if typing.TYPE_CHECKING:" "    from .sessions import Session" \
		"" "def default_hooks():" "    return {}" &&
	write_lines req/legacy.py "class Request:" "    pass" &&
	write_lines req/cli.py "from .legacy import Request" "" "def main():" "    return Request()" &&
	write_lines req/_internal/__init__.py "" &&
	write_lines req/_internal/pathlib.py "def bestrelpath(a, b):" "    return a" &&
	write_lines req/_internal/core.py "from pathlib import Path" "import pathlib" \
		"from . import pathlib as p" "from .pathlib import bestrelpath" &&
	write_lines src/tool/__init__.py "" &&
	write_lines src/tool/cli.py "from tool import main" "from tool.main import run" &&
	write_lines src/tool/main.py "def run():" "    pass" &&
	write_lines tests/test_cli.py "import tool.cli" "from tool import cli, nothing" &&
	write_lines ns/plugins/extra.py "from ns.plugins import base" &&
	write_lines ns/plugins/base.py "X = 1" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# imports <file>: the import records of that file as {target, resolved, line[, type_only]}
imports() {
	(cd repo && ci-chunk --imports "$1") >out &&
	"$JQ" -c "select(._type == \"import\") | {target, resolved, line} + (if .type_only then {type_only} else {} end)" out
}

test_expect_success 'from . import X: X.py when X is a module, never __init__.py' '
	imports req/api.py >actual &&
	cat >expect <<-\EOF &&
	{"target":".sessions","resolved":"req/sessions.py","line":1}
	EOF
	test_cmp_json expect actual &&
	imports req/sessions.py >actual &&
	cat >expect <<-\EOF &&
	{"target":".models","resolved":"req/models.py","line":1}
	{"target":".adapters","resolved":"req/adapters.py","line":2}
	{"target":".hooks","resolved":"req/hooks.py","line":2}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'TYPE_CHECKING imports are marked; the else branch is not' '
	imports req/utils.py >actual &&
	cat >expect <<-\EOF &&
	{"target":"typing","resolved":null,"line":1}
	{"target":".compat","resolved":"req/compat.py","line":2}
	{"target":".models","resolved":"req/models.py","line":5,"type_only":true}
	{"target":".adapters","resolved":"req/adapters.py","line":7}
	EOF
	test_cmp_json expect actual &&
	imports req/hooks.py >actual &&
	cat >expect <<-\EOF &&
	{"target":"typing","resolved":null,"line":1}
	{"target":".sessions","resolved":"req/sessions.py","line":3,"type_only":true}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'from pkg import me, in pkg/me.py: no edge, not even to the package' '
	imports req/compat.py >actual &&
	cat >expect <<-\EOF &&
	{"target":".models","resolved":"req/models.py","line":1}
	{"target":"json","resolved":null,"line":2}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'the standard library is not a package module of the same name' '
	imports req/_internal/core.py >actual &&
	cat >expect <<-\EOF &&
	{"target":"pathlib","resolved":null,"line":1}
	{"target":"pathlib","resolved":null,"line":2}
	{"target":".pathlib","resolved":"req/_internal/pathlib.py","line":3}
	{"target":".pathlib","resolved":"req/_internal/pathlib.py","line":4}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'src layout and namespace packages; a name that is not a module keeps the package' '
	imports src/tool/cli.py >actual &&
	cat >expect <<-\EOF &&
	{"target":"tool.main","resolved":"src/tool/main.py","line":1}
	{"target":"tool.main","resolved":"src/tool/main.py","line":2}
	EOF
	test_cmp_json expect actual &&
	imports tests/test_cli.py >actual &&
	cat >expect <<-\EOF &&
	{"target":"tool.cli","resolved":"src/tool/cli.py","line":1}
	{"target":"tool","resolved":"src/tool/__init__.py","line":2}
	{"target":"tool.cli","resolved":"src/tool/cli.py","line":2}
	EOF
	test_cmp_json expect actual &&
	imports ns/plugins/extra.py >actual &&
	cat >expect <<-\EOF &&
	{"target":"ns.plugins.base","resolved":"ns/plugins/base.py","line":1}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'ci-refs deps: api.py imports sessions.py; who imports sessions.py' '
	(cd repo && ci-refs --json deps req/api.py) >out &&
	"$JQ" -c "[.resolved]" out >actual &&
	echo "[\"req/sessions.py\"]" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-refs --json deps --reverse req/sessions.py) >out &&
	"$JQ" -c "{path, type_only}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"req/__init__.py","type_only":null}
	{"path":"req/api.py","type_only":null}
	{"path":"req/hooks.py","type_only":true}
	EOF
	test_cmp_json expect actual
'

test_expect_success 'ci-refs cycles: the real cycle, no __init__.py; --type-imports adds the typed ones' '
	(cd repo && ci-refs --json cycles) >out &&
	"$JQ" -c ".files" out >actual &&
	echo "[\"req/compat.py\",\"req/models.py\",\"req/utils.py\"]" >expect &&
	test_cmp expect actual &&
	(cd repo && ci-refs --json cycles --type-imports) >out &&
	"$JQ" -c ".files" out >actual &&
	echo "[\"req/compat.py\",\"req/hooks.py\",\"req/models.py\",\"req/sessions.py\",\"req/utils.py\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'ci-refs impact: api.py is a direct importer of sessions.py' '
	(cd repo && ci-refs --json impact req/sessions.py --mode deps) >out &&
	"$JQ" -c "{path, depth}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"req/api.py","depth":1}
	{"path":"req/__init__.py","depth":1}
	{"path":"req/hooks.py","depth":1}
	{"path":"req/models.py","depth":2}
	EOF
	test_cmp expect actual
'

test_expect_success 'impact path:symbol: the files that can reach the definition, callers first (api.py calls Session.get, which calls Request)' '
	(cd repo && ci-refs --json impact req/models.py:Request --mode deps) >out &&
	"$JQ" -c "{path, depth, references}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"req/sessions.py","depth":1,"references":1}
	{"path":"req/api.py","depth":2,"references":null}
	{"path":"req/__init__.py","depth":1,"references":null}
	{"path":"req/compat.py","depth":1,"references":null}
	{"path":"req/utils.py","depth":1,"references":null}
	{"path":"req/hooks.py","depth":2,"references":null}
	EOF
	test_cmp expect actual &&
	(cd repo && ci-refs --json impact req/legacy.py:Request --mode deps) >out &&
	"$JQ" -c "{path, depth, references}" out >actual &&
	echo "{\"path\":\"req/cli.py\",\"depth\":1,\"references\":1}" >expect &&
	test_cmp expect actual &&
	(cd repo && test_status 1 ci-refs impact req/models.py:nosuchsym 2>../err) &&
	test_grep "no definition of .nosuchsym. in .req/models.py." err
'

test_expect_success 'ci cycles and the MCP tools agree' '
	(cd repo && ci cycles --json) >out &&
	"$JQ" -e "[.. | objects | select(has(\"files\")) | .files] == [[\"req/compat.py\",\"req/models.py\",\"req/utils.py\"]]" out >/dev/null &&
	(cd repo && printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"detect_circular_dependencies\",\"arguments\":{}}}" |
		ci-mcp --profile codebase-context) >out &&
	"$JQ" -e ".result.structuredContent | .count == 1 and .cycles[0].files == [\"req/compat.py\",\"req/models.py\",\"req/utils.py\"]" out >/dev/null &&
	(cd repo && printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"dependencies\",\"arguments\":{\"file\":\"req/api.py\"}}}" |
		ci-mcp --profile bobbin) >out &&
	"$JQ" -e ".result.structuredContent.imports == [{path: \"req/sessions.py\", dep_type: \"import\", resolved: true}]" out >/dev/null &&
	(cd repo && ci search --query "class Session get" --json) >out &&
	"$JQ" -s -e "map(select(._type == \"hit\" and .path == \"req/sessions.py\"))[0] |
		.importedByCount == 3 and .callers == [\"req/__init__.py\", \"req/api.py\", \"req/hooks.py\"]" out >/dev/null
'

test_done
