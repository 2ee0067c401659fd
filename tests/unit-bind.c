/*
 * unit-bind.c: TAP tests of bind_receiver() and bind_ref() on candidates in
 * memory: the receiver read from a call's line, and the definition each kind
 * of call reaches (member, local, import, name, none); bind_c_body(): a C
 * prototype followed to its function; bind_js(): TS/JS receivers and nested
 * functions.
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
	printf("1..45\n");
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
		how = BIND_NAME;
		r = bind_js(&how, "a.py", "runTest.it", 5, RECV_OTHER, jd, kinds, jl, reach, 3, 2);
		is_int(r == 2 && how == BIND_NAME, 1, "not JS: kept");
	}
	return failures ? 1 : 0;
}
