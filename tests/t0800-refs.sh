#!/bin/sh
# t0800-refs: ci-refs over the index of a fixture repository: C with headers and
# an include cycle, a Python package with relative imports and classes with
# methods, a JavaScript/TypeScript pair, a JavaScript require cycle, Markdown.
#
# Each command and option is checked against golden records, reduced with
# `jq -c` to a fixed selection of keys (so that a key added to a record does not
# break the test, and a value that changes does); then the scores of search and
# impact against the formulas of man/ci-refs.1, the explicit answer for a
# language without a grammar, and the failure paths (no index, unknown file,
# usage errors, a full disk).

. "$(dirname "$0")/lib.sh"

for lang in c python javascript typescript; do
	if ! test_have_lang $lang; then
		test_skip 'ci-refs tests' "the $lang grammar is not compiled in"
		test_done
	fi
done

# ---- the fixture -----------------------------------------------------------------

make_repo() (
	mkdir -p "$1" && cd "$1" && git init -q &&
	mkdir -p src pkg/sub web lib &&
	cat >src/list.h <<-\EOF &&
	#ifndef LIST_H
	#define LIST_H
	#include "node.h"

	#define LIST_MAX 64

	struct list {
		struct node *head;
		int len;
	};

	typedef struct list list_t;

	enum color { RED, GREEN };

	int list_push(struct list *l, int value);
	int list_len(const struct list *l);
	#endif
	EOF
	cat >src/node.h <<-\EOF &&
	#ifndef NODE_H
	#define NODE_H
	#include "list.h"

	struct node {
		struct node *next;
		int value;
	};

	struct node *node_new(int value);
	#endif
	EOF
	cat >src/list.c <<-\EOF &&
	#include <stdlib.h>
	#include "list.h"

	/* A new node, not linked. */
	struct node *node_new(int value)
	{
		struct node *n = malloc(sizeof(*n));
		n->value = value;
		n->next = NULL;
		return n;
	}

	int list_push(struct list *l, int value)
	{
		struct node *n = node_new(value);
		n->next = l->head;
		l->head = n;
		return ++l->len;
	}

	int list_len(const struct list *l)
	{
		return l->len;
	}
	EOF
	cat >src/main.c <<-\EOF &&
	#include <stdio.h>
	#include "list.h"

	int main(void)
	{
		struct list l = { 0 };
		list_push(&l, 1);
		list_push(&l, 2);
		printf("%d\n", list_len(&l));
		return 0;
	}
	EOF
	cat >pkg/__init__.py <<-\EOF &&
	from .shapes import Shape, Circle
	EOF
	cat >pkg/shapes.py <<-\EOF &&
	import math


	class Shape:
	    """A shape."""

	    def __init__(self, name):
	        self.name = name

	    def area(self):
	        return 0.0

	    def describe(self):
	        return "%s of area %.2f" % (self.name, self.area())


	class Circle(Shape):
	    def __init__(self, r):
	        super().__init__("circle")
	        self.r = r

	    def area(self):
	        return math.pi * self.r ** 2


	def area(shape):
	    return shape.area()
	EOF
	cat >pkg/util.py <<-\EOF &&
	from .shapes import Circle, area


	def total_area(items):
	    return sum(area(s) for s in items)


	def make_circles(n):
	    return [Circle(i) for i in range(n)]


	def areas(items):
	    return [area(s) for s in items]
	EOF
	: >pkg/sub/__init__.py &&
	cat >pkg/sub/report.py <<-\EOF &&
	from ..util import total_area, make_circles


	def report(n):
	    return total_area(make_circles(n))
	EOF
	cat >app.py <<-\EOF &&
	from pkg.sub.report import report

	print(report(3))
	EOF
	cat >web/format.js <<-\EOF &&
	export function formatName(first, last) {
	  return `${first} ${last}`;
	}
	EOF
	cat >web/app.ts <<-\EOF &&
	import { formatName } from "./format";

	export interface Person {
	  first: string;
	  last: string;
	}

	export class Greeter {
	  greet(p: Person): string {
	    return "Hello " + formatName(p.first, p.last);
	  }
	}

	export function greetAll(ps: Person[]): string[] {
	  const g = new Greeter();
	  return ps.map((p) => g.greet(p));
	}
	EOF
	cat >lib/a.js <<-\EOF &&
	const b = require("./b");

	function runA() {
	  return b.runB();
	}

	module.exports = { runA };
	EOF
	cat >lib/b.js <<-\EOF &&
	const c = require("./c");
	const a = require("./a");

	function runB() {
	  return c.runC() + a.runA();
	}

	module.exports = { runB };
	EOF
	cat >lib/c.js <<-\EOF &&
	const a = require("./a");

	function runC() {
	  return 1;
	}

	module.exports = { runC };
	EOF
	cat >README.md <<-\EOF &&
	# Shapes

	A list in C, shapes in Python, a greeter in TypeScript.

	## Use

	Call `total_area`.
	EOF
	git add -A && git commit -q -m "a fixture"
)

# q <jq filter> <ci-refs argument>...: run ci-refs in the repository, its records
# through `jq -c <filter>` into "actual", its stderr into "err"; the exit status
# is ci-refs'
q() {
	q_filter_=$1
	shift
	(cd "$TRASH_DIRECTORY/repo" && ci-refs "$@") >raw 2>err
	q_rc_=$?
	"$JQ" -c "$q_filter_" raw >actual || { echo "q: the output is not JSON" >&7; return 99; }
	return $q_rc_
}

# the keys compared, per record type
OCC='[.type, .kind, .path, .line, .col, .end_line, .scope, .snippet]'
OCC_SHORT='[.type, .kind, .path, .line, .scope]'
SYM='[.name, .kind, .line, .col, .end_line, .scope, .signature]'
HIT='[.name, .kind, .path, .line, .scope, .match, .score]'
DEP='[.direction, .path, .target, .resolved, .line]'
IMP='[.path, .score, .signals.import, .signals.reference, .signals.coupling, .depth, .references, .co_changes]'

test_expect_success 'setup: the fixture repository and its index' '
	make_repo repo &&
	(cd repo && ci-index build) &&
	test -f repo/.ci-index/index.db
'

# ---- defs, refs, occurrences --------------------------------------------------------------

test_expect_success 'defs: every definition of a name, with its snippet' '
	q "$OCC" defs area &&
	cat >expect <<-\EOF &&
	["definition","method","pkg/shapes.py",10,9,11,"Shape","def area(self):"]
	["definition","method","pkg/shapes.py",22,9,23,"Circle","def area(self):"]
	["definition","function","pkg/shapes.py",26,5,27,null,"def area(shape):"]
	EOF
	test_cmp expect actual &&
	test_must_be_empty err
'

test_expect_success 'defs: the records say they are syntactic and name the language' '
	q "[.confidence, .lang, .name]" defs area &&
	cat >expect <<-\EOF &&
	["syntactic","python","area"]
	["syntactic","python","area"]
	["syntactic","python","area"]
	EOF
	test_cmp expect actual
'

test_expect_success 'defs: Class.method narrows by scope' '
	q "$OCC" defs Shape.area &&
	echo "[\"definition\",\"method\",\"pkg/shapes.py\",10,9,11,\"Shape\",\"def area(self):\"]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs Circle.area &&
	echo "[\"definition\",\"method\",\"pkg/shapes.py\",22,\"Circle\"]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs Circle.__init__ &&
	echo "[\"definition\",\"method\",\"pkg/shapes.py\",18,\"Circle\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'defs: module.func and pkg.module.Class.method narrow by the file' '
	q "$OCC_SHORT" defs shapes.area &&
	echo "[\"definition\",\"function\",\"pkg/shapes.py\",26,null]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs pkg.shapes.area &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs pkg.shapes.Circle.area &&
	echo "[\"definition\",\"method\",\"pkg/shapes.py\",22,\"Circle\"]" >expect &&
	test_cmp expect actual &&
	test_status 1 q "$OCC_SHORT" defs util.area &&
	test_must_be_empty actual &&
	q "$OCC_SHORT" defs sub.report.report &&
	echo "[\"definition\",\"function\",\"pkg/sub/report.py\",4,null]" >expect &&
	test_cmp expect actual
'

test_expect_success 'defs: Class::method and a TypeScript method' '
	q "$OCC" defs Greeter.greet &&
	echo "[\"definition\",\"method\",\"web/app.ts\",9,3,11,\"Greeter\",\"greet(p: Person): string {\"]" >expect &&
	test_cmp expect actual &&
	q "$OCC" defs Greeter::greet &&
	test_cmp expect actual
'

test_expect_success 'defs: a qualifier matches whole scope components only' '
	test_status 1 q "$OCC" defs hape.area &&
	test_must_be_empty actual &&
	test_grep "no definitions of .hape.area." err &&
	test_status 1 q "$OCC" defs Outer.Shape.area &&
	test_must_be_empty actual
'

test_expect_success 'defs: C prototypes and definitions, macros, typedefs, enum constants' '
	q "$OCC" defs node_new &&
	cat >expect <<-\EOF &&
	["definition","function","src/list.c",5,14,11,null,"struct node *node_new(int value)"]
	["definition","function","src/node.h",10,14,10,null,"struct node *node_new(int value);"]
	EOF
	test_cmp expect actual &&
	q "$OCC" defs RED &&
	echo "[\"definition\",\"constant\",\"src/list.h\",14,14,14,\"color\",\"enum color { RED, GREEN };\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'refs: every reference, with the enclosing scope' '
	q "$OCC" refs area &&
	cat >expect <<-\EOF &&
	["reference","call","pkg/shapes.py",14,53,null,"Shape.describe","return \"%s of area %.2f\" % (self.name, self.area())"]
	["reference","call","pkg/shapes.py",27,18,null,"area","return shape.area()"]
	["reference","call","pkg/util.py",5,16,null,"total_area","return sum(area(s) for s in items)"]
	["reference","call","pkg/util.py",13,13,null,"areas","return [area(s) for s in items]"]
	EOF
	test_cmp expect actual
'

test_expect_success 'refs: a qualifier leaves out the calls bound to another definition' '
	q "$OCC" refs area >/dev/null && mv actual all &&
	q "$OCC" refs Shape.area &&
	grep -v "pkg/util.py" all >expect &&
	test_cmp expect actual &&
	grep -c "area(s)" all >count &&
	echo 2 >expect &&
	test_cmp expect count
'

test_expect_success 'refs: C calls and type uses' '
	q "$OCC" refs list_push &&
	cat >expect <<-\EOF &&
	["reference","call","src/main.c",7,1,null,"main","list_push(&l, 1);"]
	["reference","call","src/main.c",8,1,null,"main","list_push(&l, 2);"]
	EOF
	test_cmp expect actual &&
	q "$OCC_SHORT" refs list &&
	cat >expect <<-\EOF &&
	["reference","type","src/list.c",13,"list_push"]
	["reference","type","src/list.c",21,"list_len"]
	["reference","type","src/list.h",12,null]
	["reference","type","src/list.h",16,null]
	["reference","type","src/list.h",17,null]
	["reference","type","src/main.c",6,"main"]
	EOF
	test_cmp expect actual
'

test_expect_success 'occurrences: definitions and references by path and line, then imports' '
	q "$OCC" occurrences report &&
	cat >expect <<-\EOF &&
	["reference","call","app.py",3,7,null,null,"print(report(3))"]
	["definition","function","pkg/sub/report.py",4,5,5,null,"def report(n):"]
	["import","import","app.py",1,1,null,null,"from pkg.sub.report import report"]
	EOF
	test_cmp expect actual
'

test_expect_success 'occurrences: imports of a module, with target and resolved file' '
	q "[.type, .path, .line, .target, .resolved, .snippet]" occurrences shapes &&
	cat >expect <<-\EOF &&
	["import","pkg/__init__.py",1,".shapes","pkg/shapes.py","from .shapes import Shape, Circle"]
	["import","pkg/util.py",1,".shapes","pkg/shapes.py","from .shapes import Circle, area"]
	EOF
	test_cmp expect actual &&
	q "[.type, .path, .target, .resolved]" occurrences util &&
	echo "[\"import\",\"pkg/sub/report.py\",\"..util\",\"pkg/util.py\"]" >expect &&
	test_cmp expect actual &&
	q "[.type, .path, .target, .resolved, .lang]" occurrences format &&
	echo "[\"import\",\"web/app.ts\",\"./format\",\"web/format.js\",\"typescript\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'occurrences: across JavaScript and TypeScript' '
	q "$OCC_SHORT" occurrences formatName &&
	cat >expect <<-\EOF &&
	["reference","call","web/app.ts",10,"Greeter.greet"]
	["definition","function","web/format.js",1,null]
	EOF
	test_cmp expect actual
'

test_expect_success 'nothing found: exit 1, a message, no records' '
	test_status 1 q "$OCC" defs no_such_name &&
	test_must_be_empty actual &&
	test_grep "^ci-refs: no definitions of .no_such_name." err &&
	test_status 1 q "$OCC" refs main &&
	test_grep "^ci-refs: no references of .main." err &&
	test_status 1 q "$OCC" occurrences no_such_name &&
	test_grep "^ci-refs: no occurrences of .no_such_name." err
'

# ---- --kind, --path, --lang, --limit ------------------------------------------------------

test_expect_success '--kind: a kind, and the kind groups' '
	q "$OCC_SHORT" defs area --kind method &&
	cat >expect <<-\EOF &&
	["definition","method","pkg/shapes.py",10,"Shape"]
	["definition","method","pkg/shapes.py",22,"Circle"]
	EOF
	test_cmp expect actual &&
	q "$OCC_SHORT" defs area --kind function &&
	cat >expect <<-\EOF &&
	["definition","method","pkg/shapes.py",10,"Shape"]
	["definition","method","pkg/shapes.py",22,"Circle"]
	["definition","function","pkg/shapes.py",26,null]
	EOF
	test_cmp expect actual
'

test_expect_success '--kind class takes C structs, type typedefs and enums, variable constants' '
	q "$OCC_SHORT" defs list --kind class &&
	echo "[\"definition\",\"class\",\"src/list.h\",7,null]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs list_t --kind type &&
	echo "[\"definition\",\"type\",\"src/list.h\",12,null]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs color --kind type &&
	echo "[\"definition\",\"type\",\"src/list.h\",14,null]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs GREEN --kind variable &&
	echo "[\"definition\",\"constant\",\"src/list.h\",14,\"color\"]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs LIST_MAX --kind function &&
	echo "[\"definition\",\"macro\",\"src/list.h\",5,null]" >expect &&
	test_cmp expect actual
'

test_expect_success '--kind interface; a kind that does not match is nothing found' '
	q "$OCC_SHORT" defs Person --kind interface &&
	echo "[\"definition\",\"interface\",\"web/app.ts\",3,null]" >expect &&
	test_cmp expect actual &&
	test_status 1 q "$OCC_SHORT" defs Person --kind class &&
	test_must_be_empty actual &&
	test_grep "(with these filters)" err
'

test_expect_success '--kind on references: call, type' '
	q "$OCC_SHORT" refs list_push --kind call &&
	cat >expect <<-\EOF &&
	["reference","call","src/main.c",7,"main"]
	["reference","call","src/main.c",8,"main"]
	EOF
	test_cmp expect actual &&
	test_status 1 q "$OCC_SHORT" refs list_push --kind type &&
	q "$OCC_SHORT" occurrences list --kind class &&
	echo "[\"definition\",\"class\",\"src/list.h\",7,null]" >expect &&
	test_cmp expect actual
'

test_expect_success '--path: a file, a directory with and without /, not a name prefix' '
	q "$OCC_SHORT" defs list_push --path src/list.c &&
	echo "[\"definition\",\"function\",\"src/list.c\",13,null]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" defs list_push --path src &&
	cat >expect <<-\EOF &&
	["definition","function","src/list.c",13,null]
	["definition","function","src/list.h",16,null]
	EOF
	test_cmp expect actual &&
	q "$OCC_SHORT" defs list_push --path src/ &&
	test_cmp expect actual &&
	test_status 1 q "$OCC_SHORT" defs list_push --path sr &&
	test_must_be_empty actual &&
	q "$OCC_SHORT" refs area --path pkg/util.py &&
	cat >expect <<-\EOF &&
	["reference","call","pkg/util.py",5,"total_area"]
	["reference","call","pkg/util.py",13,"areas"]
	EOF
	test_cmp expect actual
'

test_expect_success '--lang: only files in that language' '
	q "$OCC_SHORT" occurrences formatName --lang typescript &&
	echo "[\"reference\",\"call\",\"web/app.ts\",10,\"Greeter.greet\"]" >expect &&
	test_cmp expect actual &&
	q "$OCC_SHORT" occurrences formatName --lang javascript &&
	echo "[\"definition\",\"function\",\"web/format.js\",1,null]" >expect &&
	test_cmp expect actual &&
	test_status 1 q "$OCC_SHORT" defs area --lang c &&
	test_must_be_empty actual
'

test_expect_success '--limit: the first records' '
	q "$OCC_SHORT" refs area --limit 2 &&
	cat >expect <<-\EOF &&
	["reference","call","pkg/shapes.py",14,"Shape.describe"]
	["reference","call","pkg/shapes.py",27,"area"]
	EOF
	test_cmp expect actual &&
	q "$OCC_SHORT" occurrences report --limit 2 &&
	cat >expect <<-\EOF &&
	["reference","call","app.py",3,null]
	["definition","function","pkg/sub/report.py",4,null]
	EOF
	test_cmp expect actual
'

# ---- symbols ------------------------------------------------------------------------------

test_expect_success 'symbols: a C header (prototypes have no signature)' '
	q "$SYM" symbols src/list.h &&
	cat >expect <<-\EOF &&
	["LIST_H","macro",2,9,2,null,null]
	["LIST_MAX","macro",5,9,5,null,null]
	["list","class",7,8,10,null,"struct list"]
	["list_t","type",12,21,12,null,null]
	["color","type",14,6,14,null,"enum color"]
	["RED","constant",14,14,14,"color",null]
	["GREEN","constant",14,19,14,"color",null]
	["list_push","function",16,5,16,null,null]
	["list_len","function",17,5,17,null,null]
	EOF
	test_cmp expect actual
'

test_expect_success 'symbols: C functions with their signatures' '
	q "$SYM" symbols src/list.c &&
	cat >expect <<-\EOF &&
	["node_new","function",5,14,11,null,"struct node *node_new(int value)"]
	["list_push","function",13,5,19,null,"int list_push(struct list *l, int value)"]
	["list_len","function",21,5,24,null,"int list_len(const struct list *l)"]
	EOF
	test_cmp expect actual
'

test_expect_success 'symbols: Python classes and methods, with scopes' '
	q "$SYM" symbols pkg/shapes.py &&
	cat >expect <<-\EOF &&
	["Shape","class",4,7,14,null,"class Shape:"]
	["__init__","method",7,9,8,"Shape","def __init__(self, name):"]
	["area","method",10,9,11,"Shape","def area(self):"]
	["describe","method",13,9,14,"Shape","def describe(self):"]
	["Circle","class",17,7,23,null,"class Circle(Shape):"]
	["__init__","method",18,9,20,"Circle","def __init__(self, r):"]
	["area","method",22,9,23,"Circle","def area(self):"]
	["area","function",26,5,27,null,"def area(shape):"]
	EOF
	test_cmp expect actual
'

test_expect_success 'symbols: TypeScript and JavaScript' '
	q "$SYM" symbols web/app.ts &&
	cat >expect <<-\EOF &&
	["Person","interface",3,18,6,null,"export interface Person"]
	["Greeter","class",8,14,12,null,"export class Greeter"]
	["greet","method",9,3,11,"Greeter","greet(p: Person): string"]
	["greetAll","function",14,17,17,null,"export function greetAll(ps: Person[]): string[]"]
	EOF
	test_cmp expect actual &&
	q "$SYM" symbols web/format.js &&
	echo "[\"formatName\",\"function\",1,17,3,null,\"export function formatName(first, last)\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'symbols: the path and language of each record' '
	q "[.path, .lang]" symbols web/format.js &&
	echo "[\"web/format.js\",\"javascript\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'symbols: --kind and --limit' '
	q "$SYM" symbols src/list.h --kind variable &&
	cat >expect <<-\EOF &&
	["RED","constant",14,14,14,"color",null]
	["GREEN","constant",14,19,14,"color",null]
	EOF
	test_cmp expect actual &&
	q "[.name]" symbols src/list.h --kind function --limit 3 &&
	cat >expect <<-\EOF &&
	["LIST_H"]
	["LIST_MAX"]
	["list_push"]
	EOF
	test_cmp expect actual
'

test_expect_success 'symbols: a path relative to the current directory' '
	(cd repo/pkg && ci-refs symbols shapes.py --limit 1) >raw &&
	"$JQ" -c "[.name, .path]" raw >actual &&
	echo "[\"Shape\",\"pkg/shapes.py\"]" >expect &&
	test_cmp expect actual &&
	(cd repo/pkg/sub && ci-refs symbols ../../src/main.c) >raw &&
	"$JQ" -c "[.name, .path]" raw >actual &&
	echo "[\"main\",\"src/main.c\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'symbols: a file that defines nothing is nothing found' '
	test_status 1 q "$SYM" symbols pkg/__init__.py &&
	test_must_be_empty actual &&
	test_grep "pkg/__init__.py. defines no symbols" err
'

# ---- search -------------------------------------------------------------------------------

test_expect_success 'search: exact, then prefix, then fuzzy' '
	q "$HIT" search area &&
	cat >expect <<-\EOF &&
	["area","method","pkg/shapes.py",10,"Shape","exact",1]
	["area","method","pkg/shapes.py",22,"Circle","exact",1]
	["area","function","pkg/shapes.py",26,null,"exact",1]
	["areas","function","pkg/util.py",12,null,"prefix",0.86]
	["total_area","function","pkg/util.py",4,null,"fuzzy",0.327]
	EOF
	test_cmp expect actual
'

test_expect_success 'search: the scores follow the formulas of the man page' '
	# exact in another case 0.95; prefix 0.7 + 0.2 q/n; fuzzy 0.6 (0.5 run/q
	# + 0.3 q/n + 0.2/(1 + first)), here run 3 ("rea"), first 3, n 10
	q "[.name, .match, .score]" search AREA --path pkg/util.py &&
	cat >expect <<-\EOF &&
	["areas","prefix",0.86]
	["total_area","fuzzy",0.327]
	EOF
	test_cmp expect actual &&
	q "[.match, .score]" search AREA --limit 1 &&
	echo "[\"exact\",0.95]" >expect &&
	test_cmp expect actual &&
	q "[.name, .match, .score]" search are --path pkg &&
	cat >expect <<-\EOF &&
	["area","prefix",0.85]
	["area","prefix",0.85]
	["area","prefix",0.85]
	["areas","prefix",0.82]
	["total_area","fuzzy",0.284]
	EOF
	test_cmp expect actual
'

test_expect_success 'search: the ranking never puts a weaker match first' '
	q "[.match, .score]" search e &&
	"$JQ" -s -e "(map(.[1]) | . == (sort | reverse)) and
		(map({exact: 3, prefix: 2, fuzzy: 1}[.[0]]) | . == (sort | reverse))" actual
'

test_expect_success 'search: ties by name, then path, then line' '
	q "$HIT" search list &&
	cat >expect <<-\EOF &&
	["list","class","src/list.h",7,null,"exact",1]
	["LIST_H","macro","src/list.h",2,null,"prefix",0.833]
	["list_t","type","src/list.h",12,null,"prefix",0.833]
	["LIST_MAX","macro","src/list.h",5,null,"prefix",0.8]
	["list_len","function","src/list.c",21,null,"prefix",0.8]
	["list_len","function","src/list.h",17,null,"prefix",0.8]
	["list_push","function","src/list.c",13,null,"prefix",0.789]
	["list_push","function","src/list.h",16,null,"prefix",0.789]
	EOF
	test_cmp expect actual
'

test_expect_success 'search: --kind groups, --limit after the ranking' '
	q "$HIT" search list --kind class &&
	echo "[\"list\",\"class\",\"src/list.h\",7,null,\"exact\",1]" >expect &&
	test_cmp expect actual &&
	q "$HIT" search list --kind type &&
	echo "[\"list_t\",\"type\",\"src/list.h\",12,null,\"prefix\",0.833]" >expect &&
	test_cmp expect actual &&
	q "[.name, .kind]" search list --kind function --limit 3 &&
	cat >expect <<-\EOF &&
	["LIST_H","macro"]
	["LIST_MAX","macro"]
	["list_len","function"]
	EOF
	test_cmp expect actual &&
	q "$HIT" search e --kind interface &&
	echo "[\"Person\",\"interface\",\"web/app.ts\",3,null,\"fuzzy\",0.39]" >expect &&
	test_cmp expect actual &&
	test_status 1 q "$HIT" search area --kind variable &&
	test_grep "no symbol matches .area." err
'

test_expect_success 'search: --lang, --path, and a qualified query' '
	q "$HIT" search greet &&
	cat >expect <<-\EOF &&
	["greet","method","web/app.ts",9,"Greeter","exact",1]
	["Greeter","class","web/app.ts",8,null,"prefix",0.843]
	["greetAll","function","web/app.ts",14,null,"prefix",0.825]
	EOF
	test_cmp expect actual &&
	q "[.name]" search greet --lang typescript --kind class &&
	echo "[\"Greeter\"]" >expect &&
	test_cmp expect actual &&
	test_status 1 q "[.name]" search greet --lang python &&
	q "[.name, .path]" search list --path src/list.c &&
	cat >expect <<-\EOF &&
	["list_len","src/list.c"]
	["list_push","src/list.c"]
	EOF
	test_cmp expect actual &&
	q "$HIT" search Circle.are &&
	echo "[\"area\",\"method\",\"pkg/shapes.py\",22,\"Circle\",\"prefix\",0.85]" >expect &&
	test_cmp expect actual
'

test_expect_success 'search: nothing matches' '
	test_status 1 q "$HIT" search qqq &&
	test_must_be_empty actual &&
	test_grep "^ci-refs: no symbol matches .qqq." err
'

# ---- deps ---------------------------------------------------------------------------------

test_expect_success 'deps: what a file imports, resolved or not' '
	q "$DEP" deps src/list.c &&
	cat >expect <<-\EOF &&
	["imports","src/list.c","stdlib.h",null,1]
	["imports","src/list.c","list.h","src/list.h",2]
	EOF
	test_cmp expect actual &&
	q "$DEP" deps pkg/sub/report.py &&
	echo "[\"imports\",\"pkg/sub/report.py\",\"..util\",\"pkg/util.py\",1]" >expect &&
	test_cmp expect actual &&
	q "$DEP" deps app.py &&
	echo "[\"imports\",\"app.py\",\"pkg.sub.report\",\"pkg/sub/report.py\",1]" >expect &&
	test_cmp expect actual &&
	q "$DEP" deps web/app.ts &&
	echo "[\"imports\",\"web/app.ts\",\"./format\",\"web/format.js\",1]" >expect &&
	test_cmp expect actual
'

test_expect_success 'deps --reverse: the files that import it' '
	q "$DEP" deps pkg/shapes.py --reverse &&
	cat >expect <<-\EOF &&
	["imported_by","pkg/__init__.py",".shapes","pkg/shapes.py",1]
	["imported_by","pkg/util.py",".shapes","pkg/shapes.py",1]
	EOF
	test_cmp expect actual &&
	q "$DEP" deps web/format.js --reverse &&
	echo "[\"imported_by\",\"web/app.ts\",\"./format\",\"web/format.js\",1]" >expect &&
	test_cmp expect actual
'

test_expect_success 'deps --both: imports first, then importers' '
	q "$DEP" deps src/list.h --both &&
	cat >expect <<-\EOF &&
	["imports","src/list.h","node.h","src/node.h",3]
	["imported_by","src/list.c","list.h","src/list.h",2]
	["imported_by","src/main.c","list.h","src/list.h",2]
	["imported_by","src/node.h","list.h","src/list.h",3]
	EOF
	test_cmp expect actual &&
	q "$DEP" deps src/list.h --both --limit 2 &&
	head -n 2 expect >expect2 &&
	test_cmp expect2 actual
'

test_expect_success 'deps: a file without imports, a file nobody imports' '
	test_status 1 q "$DEP" deps README.md &&
	test_must_be_empty actual &&
	test_grep "README.md. imports nothing" err &&
	test_status 1 q "$DEP" deps app.py --reverse &&
	test_grep "app.py. is imported by no file" err
'

# ---- cycles -------------------------------------------------------------------------------

test_expect_success 'cycles: every cycle, with its files and a shortest cycle path' '
	q "." cycles &&
	cat >expect <<-\EOF &&
	{"_type":"cycle","size":3,"files":["lib/a.js","lib/b.js","lib/c.js"],"path":["lib/a.js","lib/b.js","lib/a.js"]}
	{"_type":"cycle","size":2,"files":["src/list.h","src/node.h"],"path":["src/list.h","src/node.h","src/list.h"]}
	EOF
	test_cmp expect actual &&
	test_must_be_empty err
'

test_expect_success 'cycles --scope: only the cycles under a path' '
	q "[.files, .path]" cycles --scope src &&
	echo "[[\"src/list.h\",\"src/node.h\"],[\"src/list.h\",\"src/node.h\",\"src/list.h\"]]" >expect &&
	test_cmp expect actual &&
	q "[.files]" cycles --scope lib/ &&
	echo "[[\"lib/a.js\",\"lib/b.js\",\"lib/c.js\"]]" >expect &&
	test_cmp expect actual
'

test_expect_success 'cycles --scope: the include cycle filtered out' '
	test_status 1 q "." cycles --scope pkg &&
	test_must_be_empty actual &&
	test_grep "^ci-refs: no import cycles" err &&
	test_status 1 q "." cycles --scope src/list.h &&
	test_must_be_empty actual
'

test_expect_success 'cycles --limit' '
	q "[.size]" cycles --limit 1 &&
	echo "[3]" >expect &&
	test_cmp expect actual
'

# ---- impact -------------------------------------------------------------------------------

test_expect_success 'impact: reverse imports to depth 2, references, a combined score' '
	q "$IMP" impact pkg/shapes.py &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.948,1,0.6,0,1,3,null]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	["pkg/sub/report.py",0.45,0.5,0,0,2,null,null]
	EOF
	test_cmp expect actual &&
	q "[.confidence]" impact pkg/shapes.py --limit 1 &&
	echo "[\"syntactic\"]" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact --depth 0, 1, 2, 3' '
	q "$IMP" impact pkg/shapes.py --depth 0 &&
	echo "[\"pkg/util.py\",0.48,0,0.6,0,null,3,null]" >expect &&
	test_cmp expect actual &&
	q "$IMP" impact pkg/shapes.py --depth 1 &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.948,1,0.6,0,1,3,null]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	EOF
	test_cmp expect actual &&
	q "$IMP" impact pkg/shapes.py --depth 2 &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.948,1,0.6,0,1,3,null]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	["pkg/sub/report.py",0.45,0.5,0,0,2,null,null]
	EOF
	test_cmp expect actual &&
	q "$IMP" impact pkg/shapes.py --depth 3 &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.948,1,0.6,0,1,3,null]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	["pkg/sub/report.py",0.45,0.5,0,0,2,null,null]
	["app.py",0.3,0.333,0,0,3,null,null]
	EOF
	test_cmp expect actual
'

test_expect_success 'impact: through the include cycle, the file itself never listed' '
	q "$IMP" impact src/node.h &&
	cat >expect <<-\EOF &&
	["src/list.h",0.927,1,0.333,0,1,1,null]
	["src/list.c",0.743,0.5,0.667,0,2,4,null]
	["src/main.c",0.45,0.5,0,0,2,null,null]
	EOF
	test_cmp expect actual
'

test_expect_success 'impact file:symbol: references to that symbol only, its callers first (report.py calls total_area, which calls area)' '
	q "$IMP" impact pkg/shapes.py:area &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.994,1,0.5,0,1,2,null]
	["pkg/sub/report.py",0.698,0.5,0,0,2,null,null]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	EOF
	test_cmp expect actual &&
	q "$IMP" impact pkg/shapes.py:Circle --depth 0 &&
	echo "[\"pkg/util.py\",0.927,0,0.333,0,null,1,null]" >expect &&
	test_cmp expect actual &&
	q "$IMP" impact web/format.js:formatName &&
	echo "[\"web/app.ts\",0.993,1,0.333,0,1,1,null]" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact: --path filters the files listed' '
	q "$IMP" impact src/node.h --path src/main.c &&
	echo "[\"src/main.c\",0.45,0.5,0,0,2,null,null]" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact: nothing depends on it' '
	test_status 1 q "$IMP" impact app.py &&
	test_must_be_empty actual &&
	test_grep "^ci-refs: nothing in the index depends on .app.py." err &&
	test_status 1 q "$IMP" impact pkg/shapes.py:no_such_symbol --depth 0 &&
	test_must_be_empty actual
'

test_expect_success 'impact path:symbol the file does not define: an error, not the file list' '
	test_status 1 q "$IMP" impact pkg/shapes.py:no_such_symbol &&
	test_must_be_empty actual &&
	test_grep "^ci-refs: no definition of .no_such_symbol. in .pkg/shapes.py.$" err
'

test_expect_success 'setup: coupling records loaded into the index' '
	cat >coupling.nd <<-\EOF &&
	{"_type":"coupling","a":"pkg/shapes.py","b":"web/app.ts","score":0.8,"co_changes":5,"last":1700000000}
	{"_type":"coupling","a":"pkg/util.py","b":"pkg/shapes.py","score":0.5,"co_changes":3,"last":1700000000}
	{"_type":"coupling","a":"pkg/shapes.py","b":"gone.py","score":0.9,"co_changes":9,"last":1700000000}
	EOF
	(cd repo && ci-index load) <coupling.nd
'

test_expect_success 'impact with coupling: a third signal, either side of the pair' '
	q "$IMP" impact pkg/shapes.py &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.966,1,0.6,0.5,1,3,3]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	["web/app.ts",0.56,0,0,0.8,null,null,5]
	["pkg/sub/report.py",0.45,0.5,0,0,2,null,null]
	EOF
	test_cmp expect actual &&
	q "$IMP" impact pkg/shapes.py --depth 0 &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.662,0,0.6,0.5,null,3,3]
	["web/app.ts",0.56,0,0,0.8,null,null,5]
	EOF
	test_cmp expect actual &&
	q "$IMP" impact web/app.ts --depth 0 &&
	echo "[\"pkg/shapes.py\",0.56,0,0,0.8,null,null,5]" >expect &&
	test_cmp expect actual
'

test_expect_success 'impact with coupling: file:symbol keeps the coupling of the file' '
	q "$IMP" impact pkg/shapes.py:area --depth 1 &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.996,1,0.5,0.5,1,2,3]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	["web/app.ts",0.56,0,0,0.8,null,null,5]
	EOF
	test_cmp expect actual
'

test_expect_success 'impact: the score is 1 - (1 - 0.9 import)(1 - 0.8 reference)(1 - 0.7 coupling)' '
	q "." impact pkg/shapes.py --depth 3 &&
	"$JQ" -e "(1 - (1 - 0.9 * .signals.import) * (1 - 0.8 * .signals.reference) *
		(1 - 0.7 * .signals.coupling)) - .score | fabs < 0.002" actual >ok &&
	! grep -v true ok &&
	"$JQ" -s -e "map(.score) | . == (sort | reverse)" actual
'

test_expect_success 'impact --mode: deps, coupling alone (the score is the signal), semantic needs vectors' '
	q "$IMP" impact pkg/shapes.py --mode deps --depth 1 &&
	cat >expect <<-\EOF &&
	["pkg/util.py",0.948,1,0.6,0,1,3,null]
	["pkg/__init__.py",0.9,1,0,0,1,null,null]
	EOF
	test_cmp expect actual &&
	q "$IMP" impact pkg/shapes.py --mode coupling &&
	cat >expect <<-\EOF &&
	["web/app.ts",0.8,0,0,0.8,null,null,5]
	["pkg/util.py",0.5,0,0,0.5,null,null,3]
	EOF
	test_cmp expect actual &&
	q "[.signals.semantic]" impact pkg/shapes.py --mode combined --limit 1 &&
	echo "[0]" >expect &&
	test_cmp expect actual &&
	test_status 2 q "." impact pkg/shapes.py --mode semantic &&
	test_grep "impact --mode semantic needs chunk vectors" err &&
	test_status 2 q "." impact pkg/shapes.py --mode fuzzy &&
	test_grep "mode must be combined, deps, coupling or semantic" err
'

# ---- languages without a grammar ----------------------------------------------------------

test_expect_success 'symbols of a Markdown file: an unsupported record, exit 1' '
	test_status 1 q "." symbols README.md &&
	echo "{\"_type\":\"unsupported\",\"lang\":\"markdown\",\"message\":\"no grammar for markdown: symbols of '"'"'README.md'"'"' are not extracted\"}" >expect &&
	test_cmp expect actual
'

test_expect_success '--lang kotlin: an unsupported record, exit 1' '
	test_status 1 q "[._type, .lang]" defs area --lang kotlin &&
	echo "[\"unsupported\",\"kotlin\"]" >expect &&
	test_cmp expect actual &&
	test_status 1 q "[._type, .lang]" refs area --lang kotlin &&
	test_cmp expect actual &&
	test_status 1 q "[._type, .lang]" occurrences area --lang kotlin &&
	test_cmp expect actual &&
	test_status 1 q "[._type, .lang]" search area --lang kotlin &&
	test_cmp expect actual &&
	test_status 1 q "[._type, .lang]" refs area --lang markdown &&
	echo "[\"unsupported\",\"markdown\"]" >expect &&
	test_cmp expect actual
'

# ---- the index -----------------------------------------------------------------------------

test_expect_success '--index and CI_INDEX name the index, from anywhere' '
	mkdir -p elsewhere &&
	cp repo/.ci-index/index.db elsewhere/copy.db &&
	(cd repo && ci-refs defs Shape) >expect &&
	test -s expect &&
	(cd elsewhere && ci-refs --index copy.db defs Shape) >actual &&
	test_cmp expect actual &&
	(cd elsewhere && CI_INDEX=$TRASH_DIRECTORY/elsewhere/copy.db ci-refs defs Shape) >actual &&
	test_cmp expect actual
'

test_expect_success 'the same question gives the same bytes' '
	(cd repo && ci-refs occurrences area && ci-refs search a && ci-refs impact src/list.h) >one &&
	(cd repo && ci-refs occurrences area && ci-refs search a && ci-refs impact src/list.h) >two &&
	test_cmp one two
'

test_expect_success 'the index answers what it holds until it is updated' '
	cat >repo/pkg/extra.py <<-\EOF &&
	def extra_area():
	    return 1
	EOF
	test_status 1 q "$OCC_SHORT" defs extra_area &&
	(cd repo && ci-index update) &&
	q "$OCC_SHORT" defs extra_area &&
	echo "[\"definition\",\"function\",\"pkg/extra.py\",1,null]" >expect &&
	test_cmp expect actual &&
	rm repo/pkg/extra.py &&
	(cd repo && ci-index update)
'

# ---- failure paths -------------------------------------------------------------------------

test_expect_success 'no index: exit 3, the message says to run ci-index build' '
	mkdir -p noindex &&
	(cd noindex && git init -q) &&
	(cd noindex && test_status 3 ci-refs defs area) >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-refs: no index at .*: run .ci-index build." err &&
	test_status 3 ci-refs --index "$TRASH_DIRECTORY/nowhere.db" cycles >out 2>err &&
	test_grep "ci-index build" err
'

test_expect_success 'a file the index does not know: exit 1' '
	for cmd in symbols deps impact; do
		test_status 1 q "." $cmd src/nosuch.c &&
		test_must_be_empty actual &&
		test_grep "^ci-refs: .src/nosuch.c. is not in the index" err ||
		return 1
	done
'

test_expect_success 'usage errors: exit 2, nothing on stdout, the usage on stderr' '
	for args in "impact src/list.h --depth 4" "impact src/list.h --depth -1" \
		"impact src/list.h --depth x" "defs area --limit 0" "defs area --limit 10001" \
		"frobnicate x" "" "defs" "defs a b" "cycles x" "defs area --bogus" \
		"defs area --kind="; do
		(cd repo && test_status 2 ci-refs $args) >out 2>err &&
		test_must_be_empty out &&
		test_grep "^usage: ci-refs " err ||
		{ echo "for: ci-refs $args"; return 1; }
	done &&
	(cd repo && test_status 2 ci-refs --depth 4 impact src/list.h) 2>err &&
	test_grep "^ci-refs: --depth" err &&
	(cd repo && test_status 2 ci-refs frobnicate x) 2>err &&
	test_grep "^ci-refs: unknown command .frobnicate." err
'

test_expect_success 'an empty argument is a usage error' '
	(cd repo && test_status 2 ci-refs defs "") >out 2>err &&
	test_must_be_empty out &&
	test_grep "^ci-refs: defs: the argument is empty" err
'

test_expect_success 'a full disk: exit 3 and a message' '
	for args in "defs area" "symbols src/list.h" "search a" "deps src/list.h --both" \
		"cycles" "impact src/node.h"; do
		(cd repo && test_status 3 ci-refs $args) >/dev/full 2>err &&
		test_grep "^ci-refs: .*write" err ||
		{ echo "for: ci-refs $args"; return 1; }
	done
'

test_expect_success 'a closed pipe: quiet' '
	(cd repo && ci-refs --limit 10000 search a 2>../err | head -n 1) >out &&
	test_line_count = 1 out &&
	test_must_be_empty err
'

test_done
