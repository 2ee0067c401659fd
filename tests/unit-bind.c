/*
 * unit-bind.c: TAP tests of bind_receiver() and bind_ref() on candidates in
 * memory: the receiver read from a call's line, and the definition each kind
 * of call reaches (member, local, import, name, none).
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
	printf("1..22\n");
	is_int(recv_of("    return make_response(rv)", "make_response"), RECV_BARE, "receiver: f()");
	is_int(recv_of("x = self.make_response(rv)", "make_response"), RECV_SELF, "receiver: self.f()");
	is_int(recv_of("cls . make(rv)", "make"), RECV_SELF, "receiver: cls . f()");
	is_int(recv_of("super().__init__()", "__init__"), RECV_SUPER, "receiver: super().f()");
	is_int(recv_of("app.make_response(2)", "make_response"), RECV_OTHER, "receiver: x.f()");
	is_int(recv_of("a.b.f()", "f"), RECV_OTHER, "receiver: a.b.f()");
	is_int(recv_of("g().f()", "f"), RECV_OTHER, "receiver: g().f()");
	is_int(recv_of("myself.go()", "go"), RECV_OTHER, "receiver: myself is not self");
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
	return failures ? 1 : 0;
}
