/*
 * unit-bind.c: TAP tests of bind_receiver() and bind_ref() on candidates in
 * memory: the receiver read from a call's line, and the definition each kind
 * of call reaches (member, local, import, name, none); bind_c_body(): a C
 * prototype followed to its function; bind_js(): TS/JS receivers and nested
 * functions; bind_js_call() and the text rules under it (tagtext_js_declared(),
 * tagtext_js_assigned(), bind_js_visible(), bind_js_variable()).
 */
#include "core/common.h"
#include "graph/bind.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void is_int(long got, long want, const char *desc)
{
	printf("%sok %d - %s\n", got == want ? "" : "not ", ++test_nr, desc);
	if (got != want) {
		printf("#   got %ld, expected %ld\n", got, want);
		failures++;
	}
}

/* The receiver of the call of name in text. */
static enum bind_recv recv_of(const char *text, const char *name)
{
	return bind_receiver(text, (size_t)(strstr(text, name) - text));
}

int main(int argc, char **argv)
{
	/* make_response: a method of Flask in app.py, a function of helpers.py */
	struct bind_def defs[] = {
		{ "app.py", "Flask", 0 },
		{ "helpers.py", NULL, 0 },
		{ "base.py", "Base", 0 },
	};
	enum bind_how how;
	long r;

	util_init(argv[0]);
	printf("1..109\n");
	is_int(recv_of("    return make_response(rv)", "make_response"), RECV_BARE, "receiver: f()");
	is_int(recv_of("x = self.make_response(rv)", "make_response"), RECV_SELF, "receiver: self.f()");
	is_int(recv_of("cls . make(rv)", "make"), RECV_SELF, "receiver: cls . f()");
	is_int(recv_of("super().__init__()", "__init__"), RECV_SUPER, "receiver: super().f()");
	is_int(recv_of("app.make_response(2)", "make_response"), RECV_OTHER, "receiver: x.f()");
	is_int(recv_of("a.b.f()", "f"), RECV_OTHER, "receiver: a.b.f()");
	is_int(recv_of("g().f()", "f"), RECV_OTHER, "receiver: g().f()");
	is_int(recv_of("myself.go()", "go"), RECV_OTHER, "receiver: myself is not self");
	is_int(recv_of("\treturn ops->open(inode);", "open"), RECV_OTHER, "receiver: p->f() (C)");
	is_int(recv_of("if (a > b) f(a);", "f"), RECV_BARE, "receiver: a > b is no arrow");
	is_int(bind_receiver(NULL, 0), RECV_UNKNOWN, "receiver: no text");

	/* self.make_response() in Flask.dispatch of app.py: the method (member) */
	r = bind_ref(&how, "app.py", "Flask.dispatch", RECV_SELF, defs, 3);
	is_int(r, 0, "self.f() in the class: its method");
	is_int(how, BIND_MEMBER, "self.f() in the class: member");
	/* make_response() in views.py, which imports helpers.py */
	defs[1].imported = 1;
	r = bind_ref(&how, "views.py", "index", RECV_BARE, defs, 3);
	is_int(r, 1, "f() in an importer: the function");
	is_int(how, BIND_IMPORT, "f() in an importer: import");
	/* app.make_response() in other.py, which imports app.py (and not helpers.py) */
	defs[1].imported = 0;
	defs[0].imported = 1;
	r = bind_ref(&how, "other.py", "run", RECV_OTHER, defs, 3);
	is_int(r, 0, "x.f() in an importer of the class's file: the method");
	is_int(how, BIND_IMPORT, "x.f(): import");
	/* make_response() in a file importing neither: two functions or methods fit? one function */
	defs[0].imported = 0;
	r = bind_ref(&how, "lone.py", NULL, RECV_BARE, defs, 3);
	is_int(r, 1, "f() with one function of that name: that one");
	is_int(how, BIND_NAME, "f() with one function of that name: name");
	/* x.f() where two methods fit and nothing is imported: none */
	r = bind_ref(&how, "lone.py", NULL, RECV_OTHER, defs, 3);
	is_int(r, -1, "x.f() with two methods and no import: nothing");
	is_int(how, BIND_NONE, "x.f() with two methods and no import: none");
	/* super().make_response() in Flask: not Flask's own; Base's is the other method */
	r = bind_ref(&how, "app.py", "Flask.make_response", RECV_SUPER, defs, 3);
	is_int(r, 2, "super().f(): the one other method");
	is_int(how, BIND_NAME, "super().f(): by name");
	/* a bare call in helpers.py: its own module-level function (local) */
	r = bind_ref(&how, "helpers.py", "caller", RECV_BARE, defs, 3);
	is_int(how == BIND_LOCAL && r == 1, 1, "f() beside the function: local");

	/* C: area() declared in lib.h, defined in lib.c, forward-declared and defined in util.c */
	{
		struct bind_def cd[] = {
			{ "lib.c", NULL, 0 }, { "lib.h", NULL, 1 }, { "util.c", NULL, 0 }, { "util.c", NULL, 0 },
		};
		long lines[] = { 3, 1, 2, 9 }, ends[] = { 6, 1, 2, 12 };
		/* main.c includes lib.h: bind_ref takes the prototype; the function has the body */
		r = bind_ref(&how, "main.c", "main", RECV_BARE, cd, 2);
		r = bind_c_body(&how, "main.c", bind_receiver("\treturn area(2);", 8), cd, lines, ends, 2, r);
		is_int(r, 0, "C: a prototype in an included header: its function in the .c file");
		is_int(how, BIND_IMPORT, "C: through the prototype: import");
		/* the forward declaration and the function in util.c: the one with the body */
		r = bind_ref(&how, "util.c", "use", RECV_BARE, cd + 2, 2);
		r = bind_c_body(&how, "util.c", bind_receiver("area(1);", 0), cd + 2, lines + 2, ends + 2, 2, r);
		is_int(r, 1, "C: a forward declaration in the same file: the definition below it");
		is_int(how, BIND_LOCAL, "C: the definition below its forward declaration: local");
		/* other.c includes nothing: the prototype and the function fit, the function binds */
		cd[1].imported = 0;
		r = bind_ref(&how, "other.c", "f", RECV_BARE, cd, 2);
		is_int(r, -1, "C: prototype and function, no include: bind_ref finds none");
		r = bind_c_body(&how, "other.c", bind_receiver("area(1);", 0), cd, lines, ends, 2, r);
		is_int(r == 0 && how == BIND_NAME, 1, "C: the only function with a body, its prototype aside: name");
		/* a forward declaration in lib.c too: lib.c still has the one function */
		{
			struct bind_def fd[] = { { "lib.c", NULL, 0 }, { "lib.c", NULL, 0 }, { "lib.h", NULL, 1 } };
			long fl[] = { 2, 20, 1 }, fe[] = { 2, 25, 1 };
			how = BIND_IMPORT;
			r = bind_c_body(&how, "main.c", bind_receiver("area(1);", 0), fd, fl, fe, 3, 2);
			is_int(r == 1 && how == BIND_IMPORT, 1,
			       "C: the prototype, a forward declaration and the function: the function");
		}
		/* two functions with a body (lib.c, util.c): none is chosen */
		r = bind_c_body(&how, "other.c", bind_receiver("area(1);", 0), cd, lines, ends, 4, -1);
		is_int(r, -1, "C: two functions with a body: none");
		/* p->area(1), s.area(1): a function pointer in a struct */
		r = bind_c_body(&how, "main.c", bind_receiver("p->area(1);", 3), cd, lines, ends, 2, 0);
		is_int(r == -1 && how == BIND_NONE, 1, "C: p->f(): a field, no function");
		r = bind_c_body(&how, "main.c", bind_receiver("s . area(1);", 4), cd, lines, ends, 2, 0);
		is_int(r == -1 && how == BIND_NONE, 1, "C: s.f(): a field, no function");
		/* not C: unchanged */
		how = BIND_IMPORT;
		r = bind_c_body(&how, "main.py", bind_receiver("p->area(1)", 3), cd, lines, ends, 2, 1);
		is_int(r == 1 && how == BIND_IMPORT, 1, "not a C file: the binding kept");
	}
	/* JS: get() a method in a.js's object, makeData() nested in runTest, util.js's makeData */
	{
		struct bind_def jd[] = { { "a.js", "runTest", 0 }, { "a.js", "runTest", 0 }, { "util.js", NULL, 0 } };
		const char *kinds[] = { "method", "function", "function" };
		long jl[] = { 3, 2, 1 };
		int reach[] = { 0, 0, 1 };
		how = BIND_MEMBER;
		r = bind_js(&how, "a.js", "runTest.it", 5, RECV_OTHER, jd, kinds, jl, reach, 3, 0);
		is_int(r == -1 && how == BIND_NONE, 1, "JS: x.get() bound as a member of a function scope: nothing");
		how = BIND_NAME;
		r = bind_js(&how, "b.ts", "f", 5, RECV_OTHER, jd, kinds, jl, reach, 3, 2);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: x.f() bound by name only: nothing");
		how = BIND_NAME;
		r = bind_js(&how, "a.js", "runTest.it", 5, RECV_BARE, jd, kinds, jl, reach, 3, 2);
		is_int(r == 1 && how == BIND_LOCAL, 1, "JS: f() beside a nested f in an enclosing function: that one");
		how = BIND_IMPORT;
		r = bind_js(&how, "b.ts", "f", 5, RECV_OTHER, jd, kinds, jl, reach, 3, 2);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: x.f() reaching an imported module-level function: nothing");
		how = BIND_IMPORT;
		r = bind_js(&how, "b.ts", "f", 5, RECV_OTHER, jd, kinds, jl, reach, 3, 0);
		is_int(r == 0 && how == BIND_IMPORT, 1, "TS: x.f() of an imported file, a method: kept");
		how = BIND_NAME;
		r = bind_js(&how, "a.js", "other", 5, RECV_BARE, jd, kinds, jl, reach, 3, 2);
		is_int(r == 2 && how == BIND_NAME, 1, "JS: f() where the file defines an f elsewhere: bind_ref's kept");
		how = BIND_NONE;
		r = bind_js(&how, "c.ts", NULL, 5, RECV_BARE, jd, kinds, jl, reach, 3, -1);
		is_int(r == 2 && how == BIND_IMPORT, 1, "TS: f() whose only function the imports reach: import");
		reach[2] = 0;
		how = BIND_NONE;
		r = bind_js(&how, "c.ts", NULL, 5, RECV_BARE, jd, kinds, jl, reach, 3, -1);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: f() the imports do not reach: none");
		{
			struct bind_def od[] = { { "o.ts", NULL, 0 }, { "o.ts", NULL, 0 } };
			const char *ok[] = { "function", "function" };
			long ol[] = { 15, 16 };
			int orch[] = { 1, 1 };
			how = BIND_NONE;
			r = bind_js(&how, "c.ts", NULL, 5, RECV_BARE, od, ok, ol, orch, 2, -1);
			is_int(r == 1 && how == BIND_IMPORT, 1, "TS: an overloaded function: one, its implementation");
		}
		{
			/* class Q { add(a): T; add(a, b): T; add(a, b?) { ... } }, Other's add at 60 */
			struct bind_def md[] = { { "q.ts", "Q", 0 }, { "q.ts", "Q", 0 }, { "q.ts", "Q", 0 },
						 { "q.ts", "Other", 0 }, { "q.js", "Q", 0 }, { "q.js", "Q", 0 } };
			const char *mk[] = { "method", "method", "method", "method", "method", "method" };
			long ml[] = { 40, 41, 42, 60, 40, 41 };
			int mr[] = { 0, 0, 0, 0, 0, 0 };
			how = BIND_MEMBER;
			r = bind_js(&how, "q.ts", "Q.run", 70, RECV_SELF, md, mk, ml, mr, 4, 0);
			is_int(r == 2 && how == BIND_MEMBER, 1, "TS: this.add() of an overloaded method: its implementation");
			how = BIND_IMPORT;
			r = bind_js(&how, "a.ts", "f", 5, RECV_OTHER, md, mk, ml, mr, 4, 1);
			is_int(r == 2 && how == BIND_IMPORT, 1, "TS: x.add() bound to a method's signature: the implementation");
			how = BIND_IMPORT;
			r = bind_js(&how, "a.ts", "f", 5, RECV_OTHER, md, mk, ml, mr, 4, 3);
			is_int(r == 3, 1, "TS: another class's method of that name: kept");
			how = BIND_IMPORT;
			r = bind_js(&how, "a.js", "f", 5, RECV_OTHER, md, mk, ml, mr, 6, 4);
			is_int(r == 4, 1, "JS (no overloads): a method is kept");
		}
		how = BIND_NAME;
		r = bind_js(&how, "a.py", "runTest.it", 5, RECV_OTHER, jd, kinds, jl, reach, 3, 2);
		is_int(r == 2 && how == BIND_NAME, 1, "not JS: kept");
	}
	/* TS/JS, the text rules */
	is_int(tagtext_js_declared("export function area(s) {", "area"), 1, "TS: function area: declared");
	is_int(tagtext_js_declared("  const area = (s) => 0", "area"), 1, "TS: const area = () =>: declared");
	is_int(tagtext_js_declared("export async function* area() {", "area"), 1, "TS: async function* area: declared");
	is_int(tagtext_js_declared("area = function () {", "area"), 1, "JS: area = function at the line's start: declared");
	is_int(tagtext_js_declared("  area: () => 0,", "area"), 0, "TS: area: () => (a pair): a property");
	is_int(tagtext_js_declared("  area(s) {", "area"), 0, "TS: area() { (a method shorthand): a property");
	is_int(tagtext_js_declared("  o.area = function () {", "area"), 0, "JS: o.area = function: a property");
	is_int(tagtext_js_declared("const areas = 1, area2 = 2", "area"), 0, "TS: areas, area2 are not area");
	is_int(tagtext_js_assigned("  store.area = (x) => x", "area"), 1, "JS: store.area = ...: assigned");
	is_int(tagtext_js_assigned("  if (o.area == f) {", "area"), 0, "JS: o.area == f: no assignment");
	is_int(tagtext_js_assigned("  area: () => 0,", "area"), 0, "TS: a pair: not assigned");
	{
		const char *const text[] = {
			"describe('a', () => {",		/* 1 */
			"  const make = () => 1",		/* 2 */
			"  make()",				/* 3 */
			"})",					/* 4 */
			"describe('b', () => {",		/* 5 */
			"  make()",				/* 6 */
			"  const { make: m, area } = lib",	/* 7 */
			"  area()",				/* 8 */
			"})",					/* 9 */
			"function top() { return 1 }",		/* 10 */
			"let [x, load] = pair",			/* 11 */
		};
		const long skip[] = { 2 };

		is_int(bind_js_visible(text, 11, 2, 3), 1, "JS: a function in a block: seen in the block");
		is_int(bind_js_visible(text, 11, 2, 6), 0, "JS: a function in a block: not from the next block");
		is_int(bind_js_visible(text, 11, 10, 3), 1, "JS: a function at the margin: seen everywhere");
		is_int(bind_js_variable(text, 11, "area", 8, NULL, 0), 7, "JS: const { a, area } = o declares area");
		is_int(bind_js_variable(text, 11, "make", 6, NULL, 0), 0, "JS: { make: m } declares m, not make");
		is_int(bind_js_variable(text, 11, "make", 3, skip, 1), 0, "JS: the function's own line is no variable");
		is_int(bind_js_variable(text, 11, "load", 3, NULL, 0), 11, "JS: let [x, load] declares load");
		is_int(bind_js_variable(text, 11, "area", 3, NULL, 0), 0, "JS: a variable of another block: not seen");
	}
	{
		/* make(): in m.ts, nested in two blocks of a.js; a property and a local of lib.js */
		const char *const text[] = { "describe('a', () => {", "  const make = () => 1", "  make()", "})",
					     "describe('b', () => {", "  make()", "  const area = lib.area", "  area()",
					     "  x.local()", "  x.prop()", "  x.patched()", "})" };
		const struct bind_js_file f = { text, 12, "make", 0 };
		struct bind_def d[] = { { "a.js", NULL, 0 }, { "m.ts", NULL, 1 }, { "lib.js", NULL, 0 },
					{ "lib.js", "make", 0 }, { "lib.js", "make", 1 }, { "lib.js", "make", 0 },
					{ "t.ts", "Api", 0 } };
		const char *kinds[] = { "function", "function", "function", "function", "function", "function",
					"function" };
		long dl[] = { 2, 1, 3, 5, 6, 7, 2 };
		int reach[] = { 0, 1, 0, 1, 1, 1, 1 }, decl[] = { 1, 1, 0, 1, 0, 2, -1 };
		const struct bind_js_file fa = { text, 12, "area", 0 };

		r = bind_js_call(&how, "a.js", NULL, 3, RECV_BARE, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 0 && how == BIND_LOCAL, 1, "JS: make() in the block of its function: that one");
		r = bind_js_call(&how, "a.js", NULL, 6, RECV_BARE, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 1 && how == BIND_IMPORT, 1, "JS: make() out of the block of the file's make: the import");
		reach[1] = d[1].imported = 0;
		r = bind_js_call(&how, "a.js", NULL, 6, RECV_BARE, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "JS: the only other make, not reached by the imports: none");
		reach[1] = d[1].imported = 1;
		r = bind_js_call(&how, "a.js", NULL, 8, RECV_BARE, d + 1, kinds, dl + 1, reach + 1, decl + 1, 2, &fa);
		is_int(r == -1 && how == BIND_NONE, 1, "JS: area() where const area = ... shadows the imports: none");
		r = bind_js_call(&how, "b.js", NULL, 1, RECV_BARE, d + 2, kinds, dl + 2, reach + 2, decl + 2, 1, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "JS: make() and an object's property make: none");
		r = bind_js_call(&how, "b.js", NULL, 1, RECV_OTHER, d + 3, kinds, dl + 3, reach + 3, decl + 3, 1, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "JS: x.make() and a function's local make: none");
		r = bind_js_call(&how, "b.js", NULL, 1, RECV_OTHER, d + 4, kinds, dl + 4, reach + 4, decl + 4, 1, &f);
		is_int(r == 0 && how == BIND_IMPORT, 1, "JS: x.make() and an imported object's property make: that one");
		r = bind_js_call(&how, "b.js", NULL, 1, RECV_OTHER, d + 5, kinds, dl + 5, reach + 5, decl + 5, 1, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "JS: x.make() and o.make = ... inside a function: none");
		r = bind_js_call(&how, "b.ts", NULL, 1, RECV_OTHER, d + 6, kinds, dl + 6, reach + 6, decl + 6, 1, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: x.make() and a signature of a type: none");
	}
	{
		/* new Foo(): the class in scope (Foo nested in two test functions of one file) */
		const char *const text[] = { "function t1() {", "  class Foo {}", "}", "function t2() {",
					     "  class Foo {}", "  return new Foo()", "}" };
		const struct bind_js_file f = { text, 7, "Foo", 0 };
		struct bind_def d[] = { { "a.js", "t1", 0 }, { "a.js", "t2", 0 } };
		const char *kinds[] = { "class", "class" };
		long dl[] = { 2, 5 };
		int reach[] = { 0, 0 }, decl[] = { 1, 1 };

		r = bind_js_call(&how, "a.js", "t2", 6, RECV_BARE, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 1 && how == BIND_LOCAL, 1, "JS: new Foo(): the class of the enclosing function");
	}
	{
		/* new Schema(): an interface Schema merged with class Schema (declared first) is no callee */
		const char *const text[] = { "interface Schema {}", "class Schema {}", "const s = new Schema()" };
		const struct bind_js_file f = { text, 3, "Schema", 0 };
		struct bind_def d[] = { { "a.ts", NULL, 0 }, { "a.ts", NULL, 0 }, { "b.ts", NULL, 1 } };
		const char *kinds[] = { "interface", "class", "type" };
		long dl[] = { 1, 2, 1 };
		int reach[] = { 0, 0, 1 }, decl[] = { 1, 1, 1 };

		r = bind_js_call(&how, "a.ts", NULL, 3, RECV_BARE, d, kinds, dl, reach, decl, 3, &f);
		is_int(r == 1 && how == BIND_LOCAL, 1, "TS: new Schema(): the class, not the interface merged with it");
		r = bind_js_call(&how, "a.ts", NULL, 3, RECV_BARE, d + 2, kinds + 2, dl + 2, reach + 2, decl + 2, 1, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: new Schema() and only a type Schema imported: none");
	}
	{
		/* x.inc() with const x = new Counter() or x: Counter: Counter's inc */
		const char *const text[] = { "function f(a: number, c: Counter) {", "  const x = new Counter()",
					     "  x.inc()", "  c.inc()", "  y.inc()", "  const z = Counter.make()", "  z.inc()",
					     "}" };
		struct bind_def d[] = { { "c.ts", "Counter", 1 }, { "d.ts", "Other", 1 } };
		const char *kinds[] = { "method", "method" };
		long dl[] = { 3, 3 };
		int reach[] = { 1, 1 }, decl[] = { 1, 1 };
		char cls[64];
		struct bind_js_file f = { text, 8, "inc", 5 };

		is_int(bind_js_var_class(text, 8, "x", 3, cls, sizeof(cls)) && !strcmp(cls, "Counter"), 1,
		       "TS: const x = new Counter(): x is a Counter");
		is_int(bind_js_var_class(text, 8, "c", 4, cls, sizeof(cls)) && !strcmp(cls, "Counter"), 1,
		       "TS: a parameter c: Counter: c is a Counter");
		is_int(bind_js_var_class(text, 8, "a", 4, cls, sizeof(cls)), 0, "TS: a: number is no class");
		is_int(bind_js_var_class(text, 8, "z", 7, cls, sizeof(cls)), 0, "TS: z = Counter.make(): not known");
		r = bind_js_call(&how, "a.ts", "f", 3, RECV_OTHER, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 0 && how == BIND_RECEIVER, 1, "TS: x.inc() with x = new Counter(): Counter.inc, receiver");
		r = bind_js_call(&how, "a.ts", "f", 4, RECV_OTHER, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 0 && how == BIND_RECEIVER, 1, "TS: c.inc() with c: Counter: Counter.inc, receiver");
		decl[0] = -2;	/* Counter an interface: inc a signature in its body */
		r = bind_js_call(&how, "a.ts", "f", 4, RECV_OTHER, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: c.inc() with c: an interface Counter: none (its signature)");
		decl[0] = 1;
		r = bind_js_call(&how, "a.ts", "f", 5, RECV_OTHER, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: y.inc(), y unknown, two imported classes have an inc: none");
		r = bind_js_call(&how, "a.ts", "f", 5, RECV_OTHER, d, kinds, dl, reach, decl, 1, &f);
		is_int(r == 0 && how == BIND_IMPORT, 1, "TS: y.inc(), y unknown, one imported class has an inc: that one");
		{
			/* Counter's inc overloaded in c.ts (lines 3, 4, 5): x.inc() binds at the implementation */
			struct bind_def od[] = { { "c.ts", "Counter", 1 }, { "c.ts", "Counter", 1 }, { "c.ts", "Counter", 1 } };
			const char *ok[] = { "method", "method", "method" };
			long ol[] = { 3, 4, 5 };
			int orch[] = { 1, 1, 1 }, odecl[] = { 1, 1, 1 };

			r = bind_js_call(&how, "a.ts", "f", 3, RECV_OTHER, od, ok, ol, orch, odecl, 3, &f);
			is_int(r == 2 && how == BIND_RECEIVER, 1,
			       "TS: x.inc() of an overloaded Counter.inc: its implementation, receiver");
		}
	}
	{
		/* this.test() in classes that extend the imported Schema, directly or through Str */
		const char *const text[] = { "import Schema from './schema'", "export default class Str<",
					     "  T extends Maybe<string> = string,", "> extends Schema<T> {", "  min() {",
					     "    return this.test(1)", "  }", "}", "class Deep extends Str {",
					     "  max() { return this.test(2) }", "}", "class Plain {", "  m() { this.test(3) }",
					     "}" };
		struct bind_def d[] = { { "schema.ts", "Schema", 1 }, { "other.ts", "Other", 0 } };
		const char *kinds[] = { "method", "method" };
		long dl[] = { 20, 5 };
		int reach[] = { 1, 0 }, decl[] = { 1, 1 };
		struct bind_js_file f = { text, 14, "test", 17 };

		r = bind_js_call(&how, "str.ts", "Str.min", 6, RECV_SELF, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 0 && how == BIND_INHERITED, 1, "TS: this.test() in a class extending Schema<T>: Schema's, inherited");
		r = bind_js_call(&how, "str.ts", "Deep.max", 10, RECV_SELF, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 0 && how == BIND_INHERITED, 1, "TS: this.test() through a base of the file: Schema's, inherited");
		r = bind_js_call(&how, "str.ts", "Plain.m", 13, RECV_SELF, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: this.test() in a class that extends nothing: none");
	}
	{
		/* actions.add() with const actions = { add, remove }: the file's add */
		const char *const text[] = { "const add = (i) => i", "const remove = (i) => i", "const actions = {",
					     "  add,", "  drop: remove,", "}", "actions.add(1)", "actions.remove(1)",
					     "const more = { x: add, add: 1 }", "more.add(1)" };
		struct bind_def d[] = { { "a.js", NULL, 0 }, { "lib.js", "Lib", 1 } };
		const char *kinds[] = { "function", "method" };
		long dl[] = { 1, 3 };
		int reach[] = { 0, 1 }, decl[] = { 1, 1 };
		struct bind_js_file f = { text, 10, "add", 9 };

		is_int(bind_js_shorthand(text, 10, "actions", "add", 7), 3, "JS: { add, ... } holds add as a shorthand");
		is_int(bind_js_shorthand(text, 10, "actions", "remove", 8), 0, "JS: { drop: remove }: no member remove");
		is_int(bind_js_shorthand(text, 10, "more", "add", 10), 0, "JS: { x: add, add: 1 }: no shorthand add");
		r = bind_js_call(&how, "a.js", NULL, 7, RECV_OTHER, d, kinds, dl, reach, decl, 2, &f);
		is_int(r == 0 && how == BIND_LOCAL, 1, "JS: actions.add() with actions = { add }: the file's add, local");
	}
	{
		/* literal receivers: the language's methods (the column of the name, 1-based) */
		static const struct { const char *s, *name; int want; } lit[] = {
			{ "if (/^(true|1)$/i.test(String(v))) return", "test", 1 },
			{ "is: (v) => /hello/.test(v),", "test", 1 },
			{ "return /a\\/b/.test(s)", "test", 1 },
			{ "let tag = {}.toString();", "toString", 1 },
			{ "const u = 'a,b'.split(',')", "split", 1 },
			{ "const u = `${a}b`.trim()", "trim", 1 },
			{ "const r = a / b.test(c)", "test", 0 },
			{ "const r = (a / 2) / i.test(c)", "test", 0 },
			{ "schema.test(value)", "test", 0 },
			{ "fn().test(value)", "test", 0 },
		};
		for (size_t i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
			char desc[160];

			snprintf(desc, sizeof(desc), "JS: literal receiver of %s in `%s`: %d", lit[i].name, lit[i].s,
				 lit[i].want);
			is_int(bind_js_literal_receiver(lit[i].s, (long)(strstr(lit[i].s, lit[i].name) - lit[i].s) + 1),
			       lit[i].want, desc);
		}
	}
	{
		/* /re/.test() binds to no function test, even one the imports reach */
		const char *text[] = { "import { make } from './lib'", "if (/a/.test(s)) make()", "o.test(s)" };
		struct bind_def d[] = { { "lib.ts", "Lib", 1 } };
		const char *kinds[] = { "method" };
		long dl[] = { 3 };
		int reach[] = { 1 }, decl[] = { 1 };
		struct bind_js_file f = { text, 3, "test", 9 }, g = { text, 3, "test", 3 };

		r = bind_js_call(&how, "a.ts", NULL, 2, RECV_OTHER, d, kinds, dl, reach, decl, 1, &f);
		is_int(r == -1 && how == BIND_NONE, 1, "TS: /a/.test(s): none");
		r = bind_js_call(&how, "a.ts", NULL, 3, RECV_OTHER, d, kinds, dl, reach, decl, 1, &g);
		is_int(r == 0, 1, "TS: o.test(s): the method the imports reach");
	}
	return failures ? 1 : 0;
}
