/*
 * unit-cscan.c: TAP tests of cscan_attr_macros() and cscan_macro_calls() on
 * small C texts in memory: which double-underscore invocations are attribute
 * macros (left out of the parse) and which are calls or declarators, and which
 * identifiers of a #define body are calls; and which iterator macros are used
 * as a loop header (cscan_stmt_macros()); and what the parse should not see
 * (cscan_hidden()).
 */
#include "core/common.h"
#include "parse/cscan.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void is_str(const char *got, const char *want, const char *desc)
{
	int ok = !strcmp(got, want);

	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		printf("#   got:      '%s'\n", got);
		printf("#   expected: '%s'\n", want);
		failures++;
	}
}

/* The ranges scan finds in text, as their texts joined by '|', checked
 * against want (what: the description's words). */
static void ranges(size_t (*scan)(struct cscan_range **, const char *, size_t), const char *what,
		   const char *text, const char *want)
{
	struct cscan_range *r;
	size_t nr = scan(&r, text, strlen(text));
	struct buf b = BUF_INIT;
	char *desc;

	for (size_t i = 0; i < nr; i++) {
		if (i)
			buf_addch(&b, '|');
		buf_add(&b, text + r[i].start, r[i].end - r[i].start);
	}
	desc = xasprintf("%s of: %s", what, text);
	for (char *p = desc; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	is_str(b.buf, want, desc);
	free(desc);
	free(r);
	buf_release(&b);
}

/* The attribute macros of text, as their texts joined by '|'. */
static void attrs(const char *text, const char *want)
{
	ranges(cscan_attr_macros, "attribute macros", text, want);
}

/* The statement macros of text, as their names joined by '|'. */
static void stmts(const char *text, const char *want)
{
	ranges(cscan_stmt_macros, "statement macros", text, want);
}

/* The ranges hidden from the parse, as their texts joined by '|'. */
static void hidden(const char *text, const char *want)
{
	ranges(cscan_hidden, "hidden", text, want);
}

struct calls {
	struct buf out;		/* "name@off|..." */
	const char *text;	/* the body scanned */
};

static void add_named_call(size_t off, size_t len, void *payload)
{
	struct calls *c = payload;

	if (c->out.len)
		buf_addch(&c->out, '|');
	buf_addf(&c->out, "%.*s@%zu", (int)len, c->text + off, off);
}

static void calls(const char *body, const char *params, const char *want)
{
	struct calls c = { BUF_INIT, body };
	char *desc = xasprintf("calls in the macro body: %s", body);

	for (char *p = desc; *p; p++)
		if (*p == '\n')
			*p = ' ';
	cscan_macro_calls(body, strlen(body), params, params ? strlen(params) : 0,
			  add_named_call, &c);
	is_str(c.out.buf, want, desc);
	free(desc);
	buf_release(&c.out);
}

int main(int argc, char **argv)
{
	util_init(argv[0]);
	printf("1..43\n");

	/* attribute macros before a declaration's type or name */
	attrs("static inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)\n{\n"
	      "\treturn __kmalloc(size, flags);\n}\n", "__alloc_size(1)");
	attrs("static __always_inline __alloc_size(1, 2) void *f(size_t n, size_t s);",
	      "__alloc_size(1, 2)");
	attrs("int __printf(2, 3) __cold log_it(int lvl, const char *fmt, ...);", "__printf(2, 3)");
	/* after a declarator, before ';' */
	attrs("void *krealloc(const void *p, size_t n, gfp_t flags) __realloc_size(2);",
	      "__realloc_size(2)");
	attrs("void *__kmalloc(size_t size, gfp_t flags) __assume_kmalloc_alignment __alloc_size(1);",
	      "__alloc_size(1)");
	attrs("void *__kmalloc_node(size_t size, int node) __attribute__((x))\n\t__alloc_size(1);",
	      "__alloc_size(1)");
	/* calls, declarators, keywords: not attribute macros */
	attrs("void *__kmalloc(size_t size, gfp_t flags) __malloc;", "");
	attrs("int __init __foo(void) __cold;", "");
	attrs("x = __foo(a) + b; return __bar(c);", "");
	attrs("(void) __foo(x); if (x) __bar(y);", "");
	attrs("int y = __typeof__(x) z;", "");
	attrs("p->__f(a) b; s.__g(a) c;", "");
	attrs("/* __alloc_size(1) void */ \"__alloc_size(1) void\" int x;", "");
	attrs("#define __alloc_size(x, ...) __attribute__((alloc_size(x)))\n"
	      "#define A \\\n\t__b(1) int\nint z;", "");
	attrs("static int __init_or_module __must_hold(&lock) void f(void);", "__must_hold(&lock)");

	/* calls in macro bodies */
	calls(" kmalloc(sizeof(x), GFP_KERNEL)", NULL, "kmalloc@1");
	calls(" \\\n\t__kmalloc_node_track_caller(size, flags, node, \\\n\t\t_RET_IP_)", "(size, flags, node)",
	      "__kmalloc_node_track_caller@4");
	calls(" do { if (x) f(x); while (0) g (1); } while (0)", "(x)", "f@13|g@29");
	calls(" (p)->op(a) + s.m(b) + x(c)", "(p, x)", "");
	calls(" /* f(x) */ \"g(y)\" h(z)", NULL, "h@19");
	calls(" #x ## y(1) 0x1f(2)", NULL, "");
	calls(" sizeof(int) + typeof(a) + defined(X) + __builtin_expect(a, 1) + likely(b)", NULL,
	      "likely@65");

	/* iterator macros used as a loop header, inside a function body */
	stmts("int f(void)\n{\n\tint i, s = 0;\n\n\tfor_each_possible_cpu(i)\n\t\ts += g(i);\n"
	      "\treturn s;\n}\n", "for_each_possible_cpu");
	stmts("void f(struct h *h)\n{\n\tlist_for_each_entry(p, h, node) {\n\t\tg(p);\n\t}\n"
	      "\tif (x)\n\t\tfor_each_cpu(c, mask_of(n))\n\t\t\tg(c);\n\telse\n"
	      "\t\thash_for_each(t, b, n)\n\t\t\tg(b);\n}\n",
	      "list_for_each_entry|for_each_cpu|hash_for_each");
	stmts("void f(void)\n{\nout:\n\tfor_each_node(n) /* each */\n\t\tg(n);\n}\n", "for_each_node");
	/* calls, keywords, file scope, continuations: none */
	stmts("void f(void)\n{\n\tcall_me(a);\n\tx = other(b)\n\t\t+ c;\n\tfoo(a,\n\t\tbarrr(b) c);\n}\n",
	      "");
	stmts("void f(void)\n{\n\tswitch (x) {\n\t}\n\twhile (x) g();\n\treturn (x) y;\n}\n", "");
	stmts("SYSCALL_DEFINE1(nice, int, inc)\n{\n\treturn 0;\n}\n"
	      "static void g(int a)\n\t__acquires(lock)\n{\n}\n", "");
	stmts("void f(void)\n{\n\tif (x)\n\t\tmacro_call(a)\n\telse\n\t\tg();\n}\n", "");
	stmts("void f(void)\n{\n\tcall_it(a); /* for_each(x) y */\n\ts = \"\\\n\tfor_each(i) g\";\n}\n",
	      "");
	stmts("#define LOOP(x) \\\n\tfor_each_cpu(x) \\\n\t\tg(x)\nvoid f(void)\n{\n}\n", "");
	stmts("void f(void)\n{\n\tfor_each_zone(z, (a;b)) g(z);\n}\n", "");
	/* a macro that ends a do loop; not after another block */
	stmts("void f(void)\n{\n\tdo {\n\t\tg(t);\n\t} while_each_thread(p, t);\n\tdo {\n\t} while (x);\n"
	      "\tif (x) {\n\t} after_block(y);\n}\n", "while_each_thread");
	stmts("struct s {\n\tint a;\n} __aligned(8);\nvoid f(void)\n{\n\tdo\n\t\tg();\n\tnot_after(x);\n}\n", "");

	/* an #if group in a body whose branches each open a loop: the
	 * directives, and the branches after the first */
	hidden("int f(void)\n{\n#ifdef A\n\tfor (i = 0; i < n; i++) {\n#else\n\tfor (i = n; i; i--) {\n"
	       "#endif\n\t\tg(i);\n\t}\n}\n",
	       "#ifdef A|#else|\n\tfor (i = n; i; i--) {\n|#endif");
	/* braces split over two groups: the directives only (the code as if each #if held) */
	hidden("void f(void)\n{\n#ifdef G\n\tif (x) {\n\t} else {\n#endif /* G */\n\t\tg();\n"
	       "#ifdef G\n\t}\n#endif\n}\n", "#ifdef G|#endif /* G */|#ifdef G|#endif");
	/* a branch that continues an if-else chain: its directives */
	hidden("int f(int t)\n{\n\tif (t == 1)\n\t\treturn 1;\n#ifdef B\n\telse if (t == 2)\n"
	       "\t\treturn 2;\n#endif\n\treturn 0;\n}\n", "#ifdef B|#endif");
	/* balanced groups, and any group outside a body ('{' not in column 0): nothing */
	hidden("int f(void)\n{\n#ifdef A\n\tif (x) {\n\t\tg();\n\t}\n#else\n\th();\n#endif\n}\n", "");
	hidden("#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n", "");
	hidden("struct s {\n#ifdef A\n\tint a; };\n#else\n\tint b; };\n#endif\n", "");
	/* lines that are a macro invocation alone, outside braces */
	hidden("__diag_pop()\n\nSET_START(s)\nID_FLAGS(func, f, 1) /* flags */\n#ifdef X\nID_FLAGS(func, g, 2)\n"
	       "#endif\nSET_END(s)\n\nstatic int h(void)\n{\n\treturn 0;\n}\n",
	       "__diag_pop()|SET_START(s)|ID_FLAGS(func, f, 1) /* flags */|ID_FLAGS(func, g, 2)|SET_END(s)");
	/* not: a function's header, K&R parameters, a statement, after a declaration's type,
	 * an indented line, a comment over lines after it */
	hidden("SYSCALL_DEFINE1(nice, int, inc)\n{\n}\nint\nold(a)\n\tint a;\n{\n}\n"
	       "MODULE_LICENSE(\"GPL\");\nstatic int\nfn(void)\nnext_line\n  INDENTED(x)\n"
	       "x;\nTWO(a) /* a\n b */\nint y;\n", "");
	/* block comments of a #define continued over lines; not of one line */
	hidden("#define FLAGS \\\n\tpf(A)\t/* a */ \\\n\tpf(B)\t/* b */\n#define ONE 1 /* one */\n",
	       "/* a */|/* b */");
	return failures ? 1 : 0;
}
