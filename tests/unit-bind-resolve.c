/*
 * unit-bind-resolve.c: TAP tests of resolve_call() (libcommon/graph/resolve.h)
 * over a small package in memory, one test per rule: a member, inherited
 * methods through self and super(), a local shadowing an import, a
 * constructor through an alias, receivers known from an assignment, a call
 * of a class (C().f()) and from
 * an annotation, an unknown receiver, module attributes through a star
 * re-export, an alias and a package's submodule, a class's method; a
 * function's return annotation, an imported module variable, a chained
 * assignment, a keyword argument that is no assignment, a name imported
 * inside the calling function; attributes (self.a = param, a class-level
 * annotation, an @property, obj.a.f()), loop and comprehension variables
 * over list[C], an instance called (__call__) and `with` through __enter__;
 * a parameter of a nested function shadows a sibling nested
 * function of that name; a module-level alias by assignment (h = hh = f)
 * and a reassigned one.
 */
#include "core/common.h"
#include "graph/resolve.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

struct file {
	const char *path;
	const char *const *lines;
	const struct rs_import *imps;	/* rows, target NULL ends */
};

static const char *const init_lines[] = {
	"from .models import Model as Model",
	"from .util import *",
	NULL };
static const struct rs_import init_imps[] = {
	{ ".models", "pkg/models.py", 1 }, { ".util", "pkg/util.py", 2 }, { NULL, NULL, 0 } };
static const char *const models_lines[] = {
	"class Base:",
	"    def save(self):",
	"        return 1",
	"    def load(self):",
	"        return self.save()",
	"",
	"class Model(Base):",
	"    def __init__(self):",
	"        super().save()",
	"    def save(self):",
	"        return self.load()",
	NULL };
static const char *const util_lines[] = { "def helper():", "    return 1", NULL };
static const char *const app_lines[] = {
	"import pkg",
	"import pkg.util as u",
	"from pkg.models import Model as M",
	"from pkg import util",
	"",
	"def run(m: M, other):",
	"    helper = other",
	"    helper()",
	"    x = M()",
	"    x.load()",
	"    m.save()",
	"    other.save()",
	"    pkg.helper()",
	"    u.helper()",
	"    util.helper()",
	"    pkg.Model()",
	"    M.save(x)",
	"    M(u.helper()).load()",
	"    other().save()",
	NULL };
static const struct rs_import app_imps[] = {
	{ "pkg", "pkg/__init__.py", 1 }, { "pkg.util", "pkg/util.py", 2 },
	{ "pkg.models", "pkg/models.py", 3 }, { "pkg", "pkg/__init__.py", 4 }, { NULL, NULL, 0 } };
static const struct rs_import no_imps[] = { { NULL, NULL, 0 } };
static const char *const factory_lines[] = {
	"from .models import Model",
	"",
	"def make() -> \"Model\":",
	"    return Model()",
	"",
	"default = Model()",
	NULL };
static const struct rs_import factory_imps[] = { { ".models", "pkg/models.py", 1 }, { NULL, NULL, 0 } };
static const char *const user_lines[] = {
	"from pkg.factory import make, default",
	"from pkg.models import Model",
	"",
	"def use(other: Model):",
	"    y = make()",
	"    y.load()",
	"    default.load()",
	"    a = z = make()",
	"    z.save()",
	"    print(",
	"        other=other,",
	"    )",
	"    other.save()",
	"",
	"def helper():",
	"    return 1",
	"",
	"def inner():",
	"    from pkg.util import helper",
	"    helper()",
	NULL };
static const struct rs_import user_imps[] = {
	{ "pkg.factory", "pkg/factory.py", 1 }, { "pkg.models", "pkg/models.py", 2 },
	{ "pkg.util", "pkg/util.py", 19 }, { NULL, NULL, 0 } };

static const char *const box_lines[] = {
	"from pkg.models import Model",
	"",
	"class Box:",
	"    item: Model",
	"    items: list[Model]",
	"",
	"    def __init__(self, m: Model, ms: \"list[Model]\"):",
	"        self.held = m",
	"        self.many = ms",
	"",
	"    @property",
	"    def prop(self) -> Model:",
	"        return self.item",
	"",
	"    def __call__(self) -> Model:",
	"        return Model()",
	"",
	"    def __enter__(self) -> Model:",
	"        return Model()",
	"",
	"    def go(self, other: \"Box\"):",
	"        self.held.load()",
	"        self.item.save()",
	"        self.prop.load()",
	"        other.item.save()",
	"        for m in self.items:",
	"            m.load()",
	"        for m2 in self.many:",
	"            m2.save()",
	"        made = other()",
	"        made.load()",
	"        with Box(self.item, []) as b:",
	"            b.save()",
	"        for k, v in self.items:",
	"            v.save()",
	"        other.nothing.save()",
	"        return [x.load() for x in self.items]",
	NULL };
static const struct rs_import box_imps[] = { { "pkg.models", "pkg/models.py", 1 }, { NULL, NULL, 0 } };

static const char *const nest_lines[] = {
	"def outer():",
	"    def endpoint(receive):",
	"        return receive()",
	"    def caller():",
	"        return receive()",
	"    def receive():",
	"        return 1",
	NULL };

static const char *const alias_lines[] = {
	"from pkg.util import helper",
	"",
	"h = hh = helper",
	"twice = helper",
	"twice = helper",
	"",
	"def calls():",
	"    hh()",
	"    twice()",
	NULL };
static const struct rs_import alias_imps[] = { { "pkg.util", "pkg/util.py", 1 }, { NULL, NULL, 0 } };

static const char *const alias2_lines[] = {
	"from alias import hh as H2",
	"import alias",
	"",
	"G = alias.h",
	"G2 = H2",
	"",
	"def calls2():",
	"    G2()",
	"    G()",
	NULL };
static const struct rs_import alias2_imps[] = {
	{ "alias", "alias.py", 1 }, { "alias", "alias.py", 2 }, { NULL, NULL, 0 } };

static const struct file files[] = {
	{ "alias.py", alias_lines, alias_imps },
	{ "alias2.py", alias2_lines, alias2_imps },
	{ "nest.py", nest_lines, no_imps },
	{ "box.py", box_lines, box_imps },
	{ "pkg/__init__.py", init_lines, init_imps },
	{ "pkg/models.py", models_lines, no_imps },
	{ "pkg/util.py", util_lines, no_imps },
	{ "app.py", app_lines, app_imps },
	{ "pkg/factory.py", factory_lines, factory_imps },
	{ "user.py", user_lines, user_imps },
};

/* the definitions, grouped by name (named() hands out a run) */
static const struct rs_def defs[] = {
	{ "Base", "class", "pkg/models.py", NULL, 1, 5 },
	{ "Box", "class", "box.py", NULL, 3, 37 },
	{ "Model", "class", "pkg/models.py", NULL, 7, 11 },
	{ "__call__", "method", "box.py", "Box", 15, 16 },
	{ "__enter__", "method", "box.py", "Box", 18, 19 },
	{ "__init__", "method", "box.py", "Box", 7, 9 },
	{ "__init__", "method", "pkg/models.py", "Model", 8, 9 },
	{ "default", "constant", "pkg/factory.py", NULL, 6, 6 },
	{ "go", "method", "box.py", "Box", 21, 37 },
	{ "helper", "function", "pkg/util.py", NULL, 1, 2 },
	{ "helper", "function", "user.py", NULL, 15, 16 },
	{ "inner", "function", "user.py", NULL, 18, 20 },
	{ "load", "method", "pkg/models.py", "Base", 4, 5 },
	{ "make", "function", "pkg/factory.py", NULL, 3, 4 },
	{ "prop", "method", "box.py", "Box", 12, 13 },
	{ "run", "function", "app.py", NULL, 6, 19 },
	{ "save", "method", "pkg/models.py", "Base", 2, 3 },
	{ "save", "method", "pkg/models.py", "Model", 10, 11 },
	{ "use", "function", "user.py", NULL, 4, 13 },
	{ "outer", "function", "nest.py", NULL, 1, 7 },
	{ "endpoint", "function", "nest.py", "outer", 2, 3 },
	{ "caller", "function", "nest.py", "outer", 4, 5 },
	{ "receive", "function", "nest.py", "outer", 6, 7 },
	{ "h", "constant", "alias.py", NULL, 3, 3 },
	{ "twice", "constant", "alias.py", NULL, 4, 4 },
	{ "twice", "constant", "alias.py", NULL, 5, 5 },
	{ "calls", "function", "alias.py", NULL, 7, 9 },
	{ "G", "constant", "alias2.py", NULL, 4, 4 },
	{ "G2", "constant", "alias2.py", NULL, 5, 5 },
	{ "calls2", "function", "alias2.py", NULL, 7, 9 },
};

static size_t named(void *ctx, const char *name, const struct rs_def **out)
{
	size_t i = 0, n = 0;

	(void)ctx;
	while (i < ARRAY_SIZE(defs) && strcmp(defs[i].name, name))
		i++;
	while (i + n < ARRAY_SIZE(defs) && !strcmp(defs[i + n].name, name))
		n++;
	*out = &defs[i];
	return n;
}

static int file_of(void *ctx, const char *path, struct rs_text *t)
{
	(void)ctx;
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (strcmp(files[i].path, path))
			continue;
		while (files[i].lines[t->lines_nr])
			t->lines_nr++;
		t->lines = xcalloc((size_t)t->lines_nr + 1, sizeof(char *));
		for (long l = 0; l < t->lines_nr; l++)
			t->lines[l] = xstrdup(files[i].lines[l]);
		while (files[i].imps[t->imps_nr].target)
			t->imps_nr++;
		t->imps = xcalloc(t->imps_nr + 1, sizeof(*t->imps));
		for (size_t k = 0; k < t->imps_nr; k++) {
			t->imps[k].target = xstrdup(files[i].imps[k].target);
			t->imps[k].resolved = xstrdup(files[i].imps[k].resolved);
			t->imps[k].line = files[i].imps[k].line;
		}
		t->python = 1;
		return 1;
	}
	return 0;
}

/* The files whose import rows resolve to path, in files[] order. */
static size_t importers_of(void *ctx, const char *path, char ***out)
{
	size_t n = 0;

	(void)ctx;
	*out = xcalloc(ARRAY_SIZE(files), sizeof(**out));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		for (size_t k = 0; files[i].imps[k].target; k++)
			if (files[i].imps[k].resolved && !strcmp(files[i].imps[k].resolved, path)) {
				(*out)[n++] = xstrdup(files[i].path);
				break;
			}
	return n;
}

static const struct rs_ops ops = { named, file_of, importers_of };

/* resolve_alias_names(path, name) gives want (names joined by spaces). */
static void check_names(struct resolver *rs, const char *path, const char *name, const char *want, const char *desc)
{
	char **nn;
	size_t n = resolve_alias_names(rs, path, name, &nn);
	struct buf b = BUF_INIT;
	int ok;

	for (size_t i = 0; i < n; i++) {
		buf_addf(&b, "%s%s", i ? " " : "", nn[i]);
		free(nn[i]);
	}
	free(nn);
	ok = !strcmp(b.buf ? b.buf : "", want);
	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		printf("#   got '%s'\n", b.buf ? b.buf : "");
		failures++;
	}
	buf_release(&b);
}

/*
 * The call of name on line (1-based) of path, in scope, resolves to the
 * definition of name at want_path:want_line with how (want_line 0: to none).
 */
static void check(struct resolver *rs, const char *path, const char *scope, long line, const char *name,
		  const char *want_path, long want_line, enum bind_how want_how, const char *desc)
{
	const struct file *f = NULL;
	const struct rs_def *d;
	enum bind_how how;
	char pat[64];
	long col;
	int ok;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (!strcmp(files[i].path, path))
			f = &files[i];
	snprintf(pat, sizeof(pat), "%s(", name);
	col = strstr(f->lines[line - 1], pat) ? (long)(strstr(f->lines[line - 1], pat) - f->lines[line - 1]) + 1 : 1;
	d = resolve_call(rs, path, scope, line, col, name, &how);
	ok = want_line ? d && !strcmp(d->path, want_path) && d->line == want_line && how == want_how
		       : !d && how == BIND_NONE;
	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		printf("#   got %s:%ld (%s)\n", d ? d->path : "-", d ? d->line : 0,
		       bind_how_name(how) ? bind_how_name(how) : "none");
		failures++;
	}
}

int main(int argc, char **argv)
{
	struct resolver rs;

	(void)argc;
	util_init(argv[0]);
	printf("1..41\n");
	resolver_init(&rs, &ops, NULL);
	printf("%sok %d - a Python file applies, an unknown one does not\n",
	       resolver_applies(&rs, "app.py") && !resolver_applies(&rs, "nosuch.py") ? "" : "not ", ++test_nr);
	failures += !(resolver_applies(&rs, "app.py") && !resolver_applies(&rs, "nosuch.py"));
	check(&rs, "pkg/models.py", "Base.load", 5, "save", "pkg/models.py", 2, BIND_MEMBER,
	      "self.f() in the class: its own method (member)");
	check(&rs, "pkg/models.py", "Model.__init__", 9, "save", "pkg/models.py", 2, BIND_INHERITED,
	      "super().f(): the base's method, not the class's own (inherited)");
	check(&rs, "pkg/models.py", "Model.save", 11, "load", "pkg/models.py", 4, BIND_INHERITED,
	      "self.f() the class lacks: the base's (inherited)");
	check(&rs, "app.py", "run", 8, "helper", NULL, 0, BIND_NONE,
	      "a local named like a function shadows it (none)");
	check(&rs, "nest.py", "outer.endpoint", 3, "receive", NULL, 0, BIND_NONE,
	      "a parameter of a nested function shadows the enclosing function's nested function (none)");
	check(&rs, "nest.py", "outer.caller", 5, "receive", "nest.py", 6, BIND_LOCAL,
	      "a nested function not shadowed: the enclosing function's (local)");
	check(&rs, "app.py", "run", 9, "M", "pkg/models.py", 7, BIND_IMPORT,
	      "a constructor through from m import C as M: the class (import)");
	check(&rs, "app.py", "run", 10, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "x = M(); x.f(): the class's f along its bases (receiver)");
	check(&rs, "app.py", "run", 11, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "a parameter annotated m: M: the class's own f (receiver)");
	check(&rs, "app.py", "run", 12, "save", NULL, 0, BIND_NONE,
	      "an unknown receiver binds to nothing (none)");
	check(&rs, "app.py", "run", 13, "helper", "pkg/util.py", 1, BIND_IMPORT,
	      "pkg.f() through the package's star re-export (import)");
	check(&rs, "app.py", "run", 14, "helper", "pkg/util.py", 1, BIND_IMPORT,
	      "import pkg.util as u; u.f() (import)");
	check(&rs, "app.py", "run", 15, "helper", "pkg/util.py", 1, BIND_IMPORT,
	      "from pkg import util; util.f(): the package's submodule (import)");
	check(&rs, "app.py", "run", 16, "Model", "pkg/models.py", 7, BIND_IMPORT,
	      "pkg.C() through the package's re-export as C (import)");
	check(&rs, "app.py", "run", 17, "save", "pkg/models.py", 10, BIND_MEMBER,
	      "C.f(): the class's method (member)");
	check(&rs, "app.py", "run", 18, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "C(...).f(): the method of the class the call makes, along its bases (receiver)");
	check(&rs, "app.py", "run", 19, "save", NULL, 0, BIND_NONE,
	      "a call of an unknown callable as the receiver binds to nothing (none)");
	check(&rs, "app.py", NULL, 1, "nosuch", NULL, 0, BIND_NONE,
	      "no call at that column: none");
	check(&rs, "user.py", "use", 6, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "y = f() with def f() -> \"C\": C's method (receiver)");
	check(&rs, "user.py", "use", 7, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "an imported module variable default = C(): C's method (receiver)");
	check(&rs, "user.py", "use", 9, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "a chained assignment a = z = f(): z's class (receiver)");
	check(&rs, "user.py", "use", 13, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "a keyword argument other=other is no assignment: the annotation holds (receiver)");
	check(&rs, "user.py", "inner", 20, "helper", "pkg/util.py", 1, BIND_IMPORT,
	      "a name imported inside the function wins over the module's own (import)");
	check(&rs, "box.py", "Box.go", 22, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "self.a = param with param: C in the method: C's method (receiver)");
	check(&rs, "box.py", "Box.go", 23, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "a class-level annotation a: C: self.a.f() is C's (receiver)");
	check(&rs, "box.py", "Box.go", 24, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "an @property's return annotation: self.p.f() (receiver)");
	check(&rs, "box.py", "Box.go", 25, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "obj.a.f() with obj's class known: its attribute's class (receiver)");
	check(&rs, "box.py", "Box.go", 27, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "for x in self.xs with xs: list[C]: C's method (receiver)");
	check(&rs, "box.py", "Box.go", 29, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "for x in self.xs with self.xs = param: \"list[C]\" (receiver)");
	check(&rs, "box.py", "Box.go", 31, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "x = obj() with obj's class's __call__ -> C (receiver)");
	check(&rs, "box.py", "Box.go", 33, "save", "pkg/models.py", 10, BIND_RECEIVER,
	      "with K(...) as x: __enter__ -> C (receiver)");
	check(&rs, "box.py", "Box.go", 35, "save", NULL, 0, BIND_NONE,
	      "for k, v in xs: a tuple target stays unknown (none)");
	check(&rs, "box.py", "Box.go", 36, "save", NULL, 0, BIND_NONE,
	      "obj.a.f() with no attribute a known: none");
	check(&rs, "box.py", "Box.go", 37, "load", "pkg/models.py", 4, BIND_RECEIVER,
	      "[x.f() for x in self.xs] with xs: list[C]: C's method (receiver)");
	check(&rs, "app.py", "run", 12, "save", NULL, 0, BIND_NONE,
	      "still: a parameter without annotation binds to nothing (none)");
	check(&rs, "alias.py", "calls", 8, "hh", "pkg/util.py", 1, BIND_IMPORT,
	      "h = hh = f with f imported: hh() reaches f (import)");
	check(&rs, "alias.py", "calls", 9, "twice", NULL, 0, BIND_NONE,
	      "a module variable assigned twice binds to nothing (none)");
	check(&rs, "alias2.py", "calls2", 8, "G2", "pkg/util.py", 1, BIND_IMPORT,
	      "G2 = H2 with `from alias import hh as H2`, hh = f there: G2() reaches f (import)");
	check(&rs, "alias2.py", "calls2", 9, "G", "pkg/util.py", 1, BIND_IMPORT,
	      "G = alias.h with h = f in alias: G() reaches f (import)");
	check_names(&rs, "pkg/util.py", "helper", "h hh G H2 G2",
		    "the names of f an import or two away, in the order met; not one assigned twice");
	resolver_release(&rs);
	return failures ? 1 : 0;
}
