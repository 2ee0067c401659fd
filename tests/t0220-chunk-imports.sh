#!/bin/sh
# t0220-chunk-imports: `ci-chunk --imports` finds each language's imports with
# share/queries/<lang>/imports.scm and resolves them to files of the repository
# (libcommon/parse/imports.c; its rules are unit-tested by tests/unit-imports).
#
# One fixture repository holds small files in every language; each test looks at
# the import records of one language as {path, target, resolved, line}.

. "$(dirname "$0")/lib.sh"

# write <path> <format> [<arg>...]: create a file of the fixture with printf
write() {
	write_path_=repo/$1 &&
	shift &&
	mkdir -p "$(dirname "$write_path_")" &&
	printf "$@" >"$write_path_"
}

# imports_of <lang>: the import records of that language, without _type and lang
imports_of() {
	"$JQ" -c --arg lang "$1" \
		'select(._type == "import" and .lang == $lang) | {path, target, resolved, line}' out
}

# check <lang>: imports_of <lang> is the JSON of expect.<lang>
check() {
	imports_of "$1" >actual."$1" &&
	test_cmp_json expect."$1" actual."$1"
}

test_expect_success 'a repository with imports in many languages' '
	git init -q repo &&
	write src/a.h "int a;\n" &&
	write src/b.c "#include \"a.h\"\n#include <stdio.h>\n#include \"lib.h\"\n\nint b;\n" &&
	write include/lib.h "int lib;\n" &&
	write src/c.cpp "#include <vector>\n#include \"../include/lib.h\"\n#include \"../../etc/passwd\"\n" &&

	write app.py "import os\nimport pkg.mod as m\nfrom pkg.util import f\n" &&
	write pkg/__init__.py "" &&
	write pkg/mod.py "from . import util\nfrom .util import f\nfrom .. import outside\n" &&
	write pkg/util.py "def f():\n    pass\n" &&

	write web/app.ts "import { u } from \"./util\";\nimport React from \"react\";\nexport * from \"./lib\";\nconst d = import(\"./util.js\");\n" &&
	write web/util.ts "export const u = 1;\n" &&
	write web/lib/index.ts "export const l = 2;\n" &&
	write web/main.js "const u = require(\"./helper\");\nimport x from \"../../x\";\n" &&
	write web/helper.js "module.exports = 1;\n" &&
	write web/view.tsx "import { u } from \"./util\";\nexport const V = () => <div>{u}</div>;\n" &&

	write go.mod "module example.com/m\n\ngo 1.21\n" &&
	write main.go "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/pkg/util\"\n)\n\nfunc main() { fmt.Println(util.X) }\n" &&
	write pkg/util/util.go "package util\n\nconst X = 1\n" &&

	write src/lib.rs "mod net;\nuse crate::net::tcp::Conn;\nuse std::io;\n" &&
	write src/net/mod.rs "pub mod tcp;\n" &&
	write src/net/tcp.rs "pub struct Conn;\n" &&

	write java/com/ex/App.java "package com.ex;\n\nimport com.ex.util.Helper;\nimport java.util.List;\n\nclass App {}\n" &&
	write java/com/ex/util/Helper.java "package com.ex.util;\n\npublic class Helper {}\n" &&

	write lib/tool.rb "require_relative \"tool/version\"\nrequire \"json\"\n" &&
	write lib/tool/version.rb "VERSION = 1\n" &&

	write public/index.php "<?php\nrequire __DIR__ . %s;\nuse App\\\\Models\\\\User;\n" "\"/../src/boot.php\"" &&
	write src/boot.php "<?php\n" &&
	write src/Models/User.php "<?php\nclass User {}\n" &&

	write Program.cs "using System.Text;\nclass P {}\n" &&

	write scripts/run.sh "#!/bin/sh\n. ./common.sh\nsource \"\$HOME/.profile\"\n" &&
	write scripts/common.sh "x=1\n" &&

	(cd repo && ci-chunk --imports) >out &&
	"$JQ" -e "select(._type == \"import\")" out >/dev/null
'

test_expect_success 'an import record has the documented keys in order' '
	cat >expect <<-\EOF &&
	{"_type":"import","path":"src/b.c","lang":"c","target":"a.h","resolved":"src/a.h","line":1}
	EOF
	grep "\"_type\":\"import\",\"path\":\"src/b.c\"" out | head -n 1 >actual &&
	test_cmp expect actual
'

test_expect_success 'no import outside the repository is resolved' '
	"$JQ" -r "select(._type == \"import\" and .resolved != null) | .resolved" out >resolved &&
	test -s resolved &&
	! grep -e "^/" -e "^\.\./" -e "/\.\./" -e "^\.\.\$" resolved &&
	while read -r p; do
		test -e "repo/$p" || echo "$p"
	done <resolved >missing &&
	test_must_be_empty missing
'

if test_have_lang c && test_have_lang cpp; then
	test_expect_success 'C and C++: #include "x" and <x>' '
		cat >expect.c <<-\EOF &&
		{"path":"src/b.c","target":"a.h","resolved":"src/a.h","line":1}
		{"path":"src/b.c","target":"stdio.h","resolved":null,"line":2}
		{"path":"src/b.c","target":"lib.h","resolved":"include/lib.h","line":3}
		EOF
		cat >expect.cpp <<-\EOF &&
		{"path":"src/c.cpp","target":"vector","resolved":null,"line":1}
		{"path":"src/c.cpp","target":"../include/lib.h","resolved":"include/lib.h","line":2}
		{"path":"src/c.cpp","target":"../../etc/passwd","resolved":null,"line":3}
		EOF
		check c && check cpp
	'
else
	test_skip 'C and C++: #include "x" and <x>' 'no grammar'
fi

if test_have_lang python; then
	test_expect_success 'Python: import, from-import, relative imports' '
		cat >expect.python <<-\EOF &&
		{"path":"app.py","target":"os","resolved":null,"line":1}
		{"path":"app.py","target":"pkg.mod","resolved":"pkg/mod.py","line":2}
		{"path":"app.py","target":"pkg.util","resolved":"pkg/util.py","line":3}
		{"path":"pkg/mod.py","target":".util","resolved":"pkg/util.py","line":1}
		{"path":"pkg/mod.py","target":".util","resolved":"pkg/util.py","line":2}
		{"path":"pkg/mod.py","target":"..","resolved":null,"line":3}
		EOF
		check python
	'
else
	test_skip 'Python: import, from-import, relative imports' 'no grammar'
fi

if test_have_lang javascript && test_have_lang typescript && test_have_lang tsx; then
	test_expect_success 'JavaScript, TypeScript, TSX: import, export from, require, import()' '
		cat >expect.typescript <<-\EOF &&
		{"path":"web/app.ts","target":"./util","resolved":"web/util.ts","line":1}
		{"path":"web/app.ts","target":"react","resolved":null,"line":2}
		{"path":"web/app.ts","target":"./lib","resolved":"web/lib/index.ts","line":3}
		{"path":"web/app.ts","target":"./util.js","resolved":"web/util.ts","line":4}
		EOF
		cat >expect.javascript <<-\EOF &&
		{"path":"web/main.js","target":"./helper","resolved":"web/helper.js","line":1}
		{"path":"web/main.js","target":"../../x","resolved":null,"line":2}
		EOF
		cat >expect.tsx <<-\EOF &&
		{"path":"web/view.tsx","target":"./util","resolved":"web/util.ts","line":1}
		EOF
		check typescript && check javascript && check tsx
	'
else
	test_skip 'JavaScript, TypeScript, TSX: import, export from, require, import()' 'no grammar'
fi

if test_have_lang go; then
	test_expect_success 'Go: grouped imports, module path from go.mod' '
		cat >expect.go <<-\EOF &&
		{"path":"main.go","target":"fmt","resolved":null,"line":4}
		{"path":"main.go","target":"example.com/m/pkg/util","resolved":"pkg/util","line":5}
		EOF
		check go
	'
else
	test_skip 'Go: grouped imports, module path from go.mod' 'no grammar'
fi

if test_have_lang rust; then
	test_expect_success 'Rust: mod declarations, use paths' '
		cat >expect.rust <<-\EOF &&
		{"path":"src/lib.rs","target":"net","resolved":"src/net/mod.rs","line":1}
		{"path":"src/lib.rs","target":"crate::net::tcp::Conn","resolved":"src/net/tcp.rs","line":2}
		{"path":"src/lib.rs","target":"std::io","resolved":null,"line":3}
		{"path":"src/net/mod.rs","target":"tcp","resolved":"src/net/tcp.rs","line":1}
		EOF
		check rust
	'
else
	test_skip 'Rust: mod declarations, use paths' 'no grammar'
fi

if test_have_lang java; then
	test_expect_success 'Java: imports by package path' '
		cat >expect.java <<-\EOF &&
		{"path":"java/com/ex/App.java","target":"com.ex.util.Helper","resolved":"java/com/ex/util/Helper.java","line":3}
		{"path":"java/com/ex/App.java","target":"java.util.List","resolved":null,"line":4}
		EOF
		check java
	'
else
	test_skip 'Java: imports by package path' 'no grammar'
fi

if test_have_lang ruby; then
	test_expect_success 'Ruby: require, require_relative' '
		cat >expect.ruby <<-\EOF &&
		{"path":"lib/tool.rb","target":"tool/version","resolved":"lib/tool/version.rb","line":1}
		{"path":"lib/tool.rb","target":"json","resolved":null,"line":2}
		EOF
		check ruby
	'
else
	test_skip 'Ruby: require, require_relative' 'no grammar'
fi

if test_have_lang php; then
	test_expect_success 'PHP: require __DIR__ . path, use of a namespace' '
		cat >expect.php <<-\EOF &&
		{"path":"public/index.php","target":"/../src/boot.php","resolved":"src/boot.php","line":2}
		{"path":"public/index.php","target":"App\\Models\\User","resolved":"src/Models/User.php","line":3}
		EOF
		check php
	'
else
	test_skip 'PHP: require __DIR__ . path, use of a namespace' 'no grammar'
fi

if test_have_lang csharp; then
	test_expect_success 'C#: using directives are not resolved to files' '
		cat >expect.csharp <<-\EOF &&
		{"path":"Program.cs","target":"System.Text","resolved":null,"line":1}
		EOF
		check csharp
	'
else
	test_skip 'C#: using directives are not resolved to files' 'no grammar'
fi

if test_have_lang bash; then
	test_expect_success 'Bash: . and source of a literal path' '
		cat >expect.bash <<-\EOF &&
		{"path":"scripts/run.sh","target":"./common.sh","resolved":"scripts/common.sh","line":2}
		EOF
		check bash
	'
else
	test_skip 'Bash: . and source of a literal path' 'no grammar'
fi

test_expect_success '--imports alone writes no chunk, def or ref records' '
	"$JQ" -r "._type" out | sort -u >types &&
	printf "file\nimport\n" >expect &&
	test_cmp expect types
'

test_expect_success '--imports --no-files writes only import records' '
	(cd repo && ci-chunk --imports --no-files) >out2 &&
	"$JQ" -r "._type" out2 | sort -u >types2 &&
	echo import >expect &&
	test_cmp expect types2 &&
	grep -c . out2 >n2 &&
	grep -c "\"_type\":\"import\"" out >n1 &&
	test_cmp n1 n2
'

test_done
