/*
 * lang.c: the language table, detection by file name and shebang, and the node
 * types each grammar uses for the units the chunker cuts at.
 *
 * The unit tables name tree-sitter node types of the pinned grammar versions in
 * scripts/grammars.txt; tests/golden/ci-chunk holds a file per language that
 * exercises them.
 */
#include "core/common.h"

#include <pthread.h>
#include "parse/lang.h"

#include <ctype.h>
#include <limits.h>

/*
 * tree-sitter's own allocator, out of memory, writes "tree-sitter failed to
 * allocate N bytes" (no newline, no program name) and exits 1, which is "nothing
 * selected" here, and skips nothing of ours but atexit: its allocations go
 * through ci's instead, which die as every other allocation does (util.c:
 * "<program>: out of memory allocating N bytes", exit 3).  Set before main, so
 * before the first parser.
 */
static size_t ts_alloc_limit;	/* test hook: CI_TEST_TS_ALLOC_LIMIT, 0 none */

/* An allocation the test hook refuses: as xmalloc's out of memory. */
static void ts_alloc_check(size_t n)
{
	if (ts_alloc_limit && n > ts_alloc_limit)
		die_code(EXIT_IO, "out of memory allocating %zu bytes", n);
}

static void *ts_xmalloc(size_t n)
{
	ts_alloc_check(n);
	return xmalloc(n);
}

static void *ts_xcalloc(size_t nmemb, size_t n)
{
	ts_alloc_check(nmemb * n);
	return xcalloc(nmemb, n);
}

static void *ts_xrealloc(void *p, size_t n)
{
	ts_alloc_check(n);
	return xrealloc(p, n);
}

__attribute__((constructor)) static void ts_allocator_setup(void)
{
	/*
	 * For tests: tree-sitter's allocations past this many bytes fail, as
	 * out of memory (ulimit -v cannot do it under AddressSanitizer).
	 */
	ts_alloc_limit = (size_t)env_long("CI_TEST_TS_ALLOC_LIMIT", 0, LONG_MAX, 0, ENV_DIE);
	ts_set_allocator(ts_xmalloc, ts_xcalloc, ts_xrealloc, free);
}

#define G(fn) const TSLanguage *fn(void);
G(tree_sitter_c) G(tree_sitter_cpp) G(tree_sitter_python) G(tree_sitter_javascript)
G(tree_sitter_typescript) G(tree_sitter_tsx) G(tree_sitter_go) G(tree_sitter_rust)
G(tree_sitter_java) G(tree_sitter_ruby) G(tree_sitter_c_sharp) G(tree_sitter_php)
G(tree_sitter_bash)
#undef G

static const struct unit_rule c_units[] = {
	{ "function_definition", "function", UNIT_LEAF },
	{ "struct_specifier", "struct", UNIT_NEEDS_BODY },
	{ "union_specifier", "union", UNIT_NEEDS_BODY },
	{ "enum_specifier", "enum", UNIT_NEEDS_BODY },
	{ "type_definition", "type", UNIT_WRAPPER | UNIT_NEEDS_BODY },
	{ NULL, NULL, 0 }
};

static const struct unit_rule cpp_units[] = {
	{ "function_definition", "function", 0 },
	{ "class_specifier", "class", UNIT_CONTAINER | UNIT_NEEDS_BODY },
	{ "struct_specifier", "struct", UNIT_CONTAINER | UNIT_NEEDS_BODY },
	{ "union_specifier", "union", UNIT_NEEDS_BODY },
	{ "enum_specifier", "enum", UNIT_NEEDS_BODY },
	{ "namespace_definition", "namespace", UNIT_CONTAINER },
	{ "template_declaration", "template", UNIT_WRAPPER },
	{ "type_definition", "type", UNIT_WRAPPER | UNIT_NEEDS_BODY },
	{ NULL, NULL, 0 }
};

static const struct unit_rule python_units[] = {
	{ "function_definition", "function", 0 },
	{ "class_definition", "class", UNIT_CONTAINER },
	{ "decorated_definition", "decorated", UNIT_WRAPPER },
	{ NULL, NULL, 0 }
};

static const struct unit_rule js_units[] = {
	{ "function_declaration", "function", 0 },
	{ "generator_function_declaration", "function", 0 },
	{ "class_declaration", "class", UNIT_CONTAINER },
	{ "method_definition", "method", UNIT_CLASS_MEMBER },
	{ "lexical_declaration", "function", UNIT_FUNCTION_VALUE },
	{ "variable_declaration", "function", UNIT_FUNCTION_VALUE },
	{ "expression_statement", "function", UNIT_ASSIGNED_FUNCTION },
	{ "export_statement", "export", UNIT_WRAPPER },
	{ NULL, NULL, 0 }
};

static const struct unit_rule ts_units[] = {
	{ "function_declaration", "function", 0 },
	{ "generator_function_declaration", "function", 0 },
	{ "class_declaration", "class", UNIT_CONTAINER },
	{ "abstract_class_declaration", "class", UNIT_CONTAINER },
	{ "method_definition", "method", UNIT_CLASS_MEMBER },
	{ "interface_declaration", "interface", UNIT_CONTAINER },
	{ "type_alias_declaration", "type", 0 },
	{ "enum_declaration", "enum", 0 },
	{ "internal_module", "namespace", UNIT_CONTAINER },
	{ "module", "module", UNIT_CONTAINER },
	{ "lexical_declaration", "function", UNIT_FUNCTION_VALUE },
	{ "variable_declaration", "function", UNIT_FUNCTION_VALUE },
	{ "expression_statement", "function", UNIT_ASSIGNED_FUNCTION },
	{ "export_statement", "export", UNIT_WRAPPER },
	{ NULL, NULL, 0 }
};

static const struct unit_rule go_units[] = {
	{ "function_declaration", "function", UNIT_LEAF },
	{ "method_declaration", "method", UNIT_LEAF },
	{ "type_declaration", "type", 0 },
	{ NULL, NULL, 0 }
};

static const struct unit_rule rust_units[] = {
	{ "function_item", "function", 0 },
	{ "struct_item", "struct", 0 },
	{ "enum_item", "enum", 0 },
	{ "union_item", "union", 0 },
	{ "trait_item", "trait", UNIT_CONTAINER },
	{ "impl_item", "impl", UNIT_CONTAINER },
	{ "mod_item", "module", UNIT_CONTAINER | UNIT_NEEDS_BODY },
	{ "macro_definition", "macro", 0 },
	{ NULL, NULL, 0 }
};

static const struct unit_rule java_units[] = {
	{ "class_declaration", "class", UNIT_CONTAINER },
	{ "interface_declaration", "interface", UNIT_CONTAINER },
	{ "enum_declaration", "enum", UNIT_CONTAINER },
	{ "record_declaration", "record", UNIT_CONTAINER },
	{ "annotation_type_declaration", "interface", UNIT_CONTAINER },
	{ "method_declaration", "method", 0 },
	{ "constructor_declaration", "constructor", 0 },
	{ NULL, NULL, 0 }
};

static const struct unit_rule ruby_units[] = {
	{ "method", "method", 0 },
	{ "singleton_method", "method", 0 },
	{ "class", "class", UNIT_CONTAINER },
	{ "module", "module", UNIT_CONTAINER },
	{ NULL, NULL, 0 }
};

static const struct unit_rule csharp_units[] = {
	{ "class_declaration", "class", UNIT_CONTAINER },
	{ "struct_declaration", "struct", UNIT_CONTAINER },
	{ "interface_declaration", "interface", UNIT_CONTAINER },
	{ "record_declaration", "record", UNIT_CONTAINER },
	{ "enum_declaration", "enum", 0 },
	{ "namespace_declaration", "namespace", UNIT_CONTAINER },
	{ "method_declaration", "method", 0 },
	{ "constructor_declaration", "constructor", 0 },
	{ "local_function_statement", "function", 0 },
	{ NULL, NULL, 0 }
};

static const struct unit_rule php_units[] = {
	{ "function_definition", "function", 0 },
	{ "method_declaration", "method", 0 },
	{ "class_declaration", "class", UNIT_CONTAINER },
	{ "interface_declaration", "interface", UNIT_CONTAINER },
	{ "trait_declaration", "trait", UNIT_CONTAINER },
	{ "enum_declaration", "enum", UNIT_CONTAINER },
	{ "namespace_definition", "namespace", UNIT_CONTAINER | UNIT_NEEDS_BODY },
	{ NULL, NULL, 0 }
};

static const struct unit_rule bash_units[] = {
	{ "function_definition", "function", 0 },
	{ NULL, NULL, 0 }
};

#ifdef HAVE_GRAMMAR_C
#define GR_C tree_sitter_c
#else
#define GR_C NULL
#endif
#ifdef HAVE_GRAMMAR_CPP
#define GR_CPP tree_sitter_cpp
#else
#define GR_CPP NULL
#endif
#ifdef HAVE_GRAMMAR_PYTHON
#define GR_PYTHON tree_sitter_python
#else
#define GR_PYTHON NULL
#endif
#ifdef HAVE_GRAMMAR_JAVASCRIPT
#define GR_JAVASCRIPT tree_sitter_javascript
#else
#define GR_JAVASCRIPT NULL
#endif
#ifdef HAVE_GRAMMAR_TYPESCRIPT
#define GR_TYPESCRIPT tree_sitter_typescript
#else
#define GR_TYPESCRIPT NULL
#endif
#ifdef HAVE_GRAMMAR_TSX
#define GR_TSX tree_sitter_tsx
#else
#define GR_TSX NULL
#endif
#ifdef HAVE_GRAMMAR_GO
#define GR_GO tree_sitter_go
#else
#define GR_GO NULL
#endif
#ifdef HAVE_GRAMMAR_RUST
#define GR_RUST tree_sitter_rust
#else
#define GR_RUST NULL
#endif
#ifdef HAVE_GRAMMAR_JAVA
#define GR_JAVA tree_sitter_java
#else
#define GR_JAVA NULL
#endif
#ifdef HAVE_GRAMMAR_RUBY
#define GR_RUBY tree_sitter_ruby
#else
#define GR_RUBY NULL
#endif
#ifdef HAVE_GRAMMAR_CSHARP
#define GR_CSHARP tree_sitter_c_sharp
#else
#define GR_CSHARP NULL
#endif
#ifdef HAVE_GRAMMAR_PHP
#define GR_PHP tree_sitter_php
#else
#define GR_PHP NULL
#endif
#ifdef HAVE_GRAMMAR_BASH
#define GR_BASH tree_sitter_bash
#else
#define GR_BASH NULL
#endif

#define L(name, gr, units) { name, gr, units, 0 }
static const struct lang langs[] = {
	L("c", GR_C, c_units),
	L("cpp", GR_CPP, cpp_units),
	L("python", GR_PYTHON, python_units),
	L("javascript", GR_JAVASCRIPT, js_units),
	L("typescript", GR_TYPESCRIPT, ts_units),
	L("tsx", GR_TSX, ts_units),
	L("go", GR_GO, go_units),
	L("rust", GR_RUST, rust_units),
	L("java", GR_JAVA, java_units),
	L("ruby", GR_RUBY, ruby_units),
	L("csharp", GR_CSHARP, csharp_units),
	L("php", GR_PHP, php_units),
	L("bash", GR_BASH, bash_units),
	{ "markdown", NULL, NULL, 1 },
	/* known text formats without a grammar: chunked by line windows */
	{ "json", NULL, NULL, 0 }, { "yaml", NULL, NULL, 0 }, { "toml", NULL, NULL, 0 },
	{ "xml", NULL, NULL, 0 }, { "html", NULL, NULL, 0 }, { "css", NULL, NULL, 0 },
	{ "make", NULL, NULL, 0 }, { "cmake", NULL, NULL, 0 }, { "dockerfile", NULL, NULL, 0 },
	{ "sql", NULL, NULL, 0 }, { "perl", NULL, NULL, 0 }, { "lua", NULL, NULL, 0 },
	{ "kotlin", NULL, NULL, 0 }, { "swift", NULL, NULL, 0 }, { "scala", NULL, NULL, 0 },
	{ "asm", NULL, NULL, 0 }, { "rst", NULL, NULL, 0 }, { "ini", NULL, NULL, 0 },
	{ "devicetree", NULL, NULL, 0 }, { "kconfig", NULL, NULL, 0 }, { "awk", NULL, NULL, 0 },
	{ "text", NULL, NULL, 0 },
};
#undef L

static const struct { const char *ext; const char *lang; } exts[] = {
	{ "c", "c" }, { "h", "c" },
	{ "cc", "cpp" }, { "cpp", "cpp" }, { "cxx", "cpp" }, { "c++", "cpp" },
	{ "hh", "cpp" }, { "hpp", "cpp" }, { "hxx", "cpp" }, { "h++", "cpp" }, { "ipp", "cpp" },
	{ "inl", "cpp" }, { "tcc", "cpp" },
	{ "py", "python" }, { "pyi", "python" }, { "pyw", "python" },
	{ "js", "javascript" }, { "mjs", "javascript" }, { "cjs", "javascript" }, { "jsx", "javascript" },
	{ "ts", "typescript" }, { "mts", "typescript" }, { "cts", "typescript" },
	{ "tsx", "tsx" },
	{ "go", "go" }, { "rs", "rust" }, { "java", "java" },
	{ "rb", "ruby" }, { "rake", "ruby" }, { "gemspec", "ruby" }, { "ru", "ruby" },
	{ "cs", "csharp" }, { "csx", "csharp" },
	{ "php", "php" }, { "phtml", "php" }, { "php5", "php" }, { "php7", "php" },
	{ "sh", "bash" }, { "bash", "bash" }, { "zsh", "bash" }, { "ksh", "bash" },
	{ "md", "markdown" }, { "markdown", "markdown" }, { "mdx", "markdown" },
	{ "json", "json" }, { "jsonl", "json" }, { "ndjson", "json" },
	{ "yml", "yaml" }, { "yaml", "yaml" }, { "toml", "toml" },
	{ "xml", "xml" }, { "svg", "xml" }, { "html", "html" }, { "htm", "html" },
	{ "css", "css" }, { "scss", "css" }, { "less", "css" },
	{ "mk", "make" }, { "mak", "make" }, { "am", "make" }, { "cmake", "cmake" },
	{ "sql", "sql" }, { "pl", "perl" }, { "pm", "perl" }, { "lua", "lua" },
	{ "kt", "kotlin" }, { "kts", "kotlin" }, { "swift", "swift" }, { "scala", "scala" },
	{ "s", "asm" }, { "S", "asm" }, { "asm", "asm" },
	{ "rst", "rst" }, { "txt", "text" }, { "ini", "ini" }, { "cfg", "ini" }, { "conf", "ini" },
	{ "dts", "devicetree" }, { "dtsi", "devicetree" }, { "awk", "awk" },
};

static const struct { const char *base; const char *lang; } names[] = {
	{ "Makefile", "make" }, { "makefile", "make" }, { "GNUmakefile", "make" },
	{ "Kbuild", "make" }, { "CMakeLists.txt", "cmake" }, { "Dockerfile", "dockerfile" },
	{ "Containerfile", "dockerfile" }, { "Rakefile", "ruby" }, { "Gemfile", "ruby" },
	{ "Vagrantfile", "ruby" }, { "Podfile", "ruby" }, { "Kconfig", "kconfig" },
	{ ".bashrc", "bash" }, { ".bash_profile", "bash" }, { ".profile", "bash" },
	{ "PKGBUILD", "bash" }, { "configure.ac", "text" }, { "README", "text" },
	{ "LICENSE", "text" }, { "COPYING", "text" },
};

static const struct { const char *interp; const char *lang; } shebangs[] = {
	{ "sh", "bash" }, { "bash", "bash" }, { "dash", "bash" }, { "zsh", "bash" }, { "ksh", "bash" },
	{ "python", "python" }, { "python2", "python" }, { "python3", "python" },
	{ "node", "javascript" }, { "nodejs", "javascript" }, { "deno", "typescript" },
	{ "ts-node", "typescript" }, { "ruby", "ruby" }, { "php", "php" }, { "perl", "perl" },
	{ "lua", "lua" }, { "awk", "awk" }, { "gawk", "awk" },
};

const struct lang *lang_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(langs); i++)
		if (!strcmp(langs[i].name, name))
			return &langs[i];
	return NULL;
}

static const struct lang *all_langs[ARRAY_SIZE(langs) + 1];

static void fill_all_langs(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(langs); i++)
		all_langs[i] = &langs[i];
}

uint64_t lang_parse_timeout_us(size_t n)
{
	uint64_t us = 2000000 + 18 * (uint64_t)n;

	return us < 20000000 ? us : 20000000;
}

/* Filled once, whichever thread asks first: a thread must never see it half done. */
const struct lang *const *lang_all(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fill_all_langs);
	return all_langs;
}

/* Language named by a "#!" line: "#!/usr/bin/env python3 -u" -> python. */
static const struct lang *from_shebang(const char *head, size_t n)
{
	char word[64];
	size_t i = 2, j, k;
	const char *interp;

	if (n < 3 || head[0] != '#' || head[1] != '!')
		return NULL;
	for (;;) {
		while (i < n && (head[i] == ' ' || head[i] == '\t'))
			i++;
		j = 0;
		while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' &&
		       head[i] != '\r' && j < sizeof(word) - 1)
			word[j++] = head[i++];
		word[j] = '\0';
		if (!j)
			return NULL;
		interp = strrchr(word, '/');
		interp = interp ? interp + 1 : word;
		if (strcmp(interp, "env"))
			break;
		/* "env -S python": skip options */
		while (i < n && (head[i] == ' ' || head[i] == '\t'))
			i++;
		while (i < n && head[i] == '-') {
			while (i < n && head[i] != ' ' && head[i] != '\n')
				i++;
			while (i < n && head[i] == ' ')
				i++;
		}
	}
	for (k = 0; k < ARRAY_SIZE(shebangs); k++) {
		size_t l = strlen(shebangs[k].interp);
		/* python3.11 -> python3 */
		if (!strncmp(interp, shebangs[k].interp, l) &&
		    (!interp[l] || interp[l] == '.' || isdigit((unsigned char)interp[l])))
			return lang_by_name(shebangs[k].lang);
	}
	return NULL;
}

const struct lang *lang_detect(const char *path, const char *head, size_t n)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(base, names[i].base))
			return lang_by_name(names[i].lang);
	dot = strrchr(base, '.');
	if (dot && dot != base && dot[1]) {
		for (i = 0; i < ARRAY_SIZE(exts); i++)
			if (!strcmp(dot + 1, exts[i].ext))
				return lang_by_name(exts[i].lang);
		/* .H, .C, .PY: try lower case (but .S stays asm above) */
		char low[16];
		size_t l = strlen(dot + 1);
		if (l < sizeof(low)) {
			for (i = 0; i <= l; i++)
				low[i] = (char)tolower((unsigned char)dot[1 + i]);
			for (i = 0; i < ARRAY_SIZE(exts); i++)
				if (!strcmp(low, exts[i].ext))
					return lang_by_name(exts[i].lang);
		}
	}
	if (head)
		return from_shebang(head, n);
	return NULL;
}

const struct unit_rule *lang_unit_rule(const struct lang *l, const char *node_type)
{
	const struct unit_rule *r;

	if (!l->units)
		return NULL;
	for (r = l->units; r->node_type; r++)
		if (!strcmp(r->node_type, node_type))
			return r;
	return NULL;
}

/*
 * tree-sitter 0.20.7 (Debian 12's libtree-sitter) loses count of a root with more
 * than 65,535 children: error recovery at the end of a file whose constructs are
 * left open (22,000 unclosed `if(x){` in C, `if true; then` in bash, C++
 * namespaces) makes every open node a child of the root, and then the root's
 * child count and length wrap, and ts_tree_delete() frees a pointer inside an
 * array (glibc "invalid pointer" or a double free under ASan).  Parsing itself
 * writes nothing wrong, and a healthy tree's root always reaches the file's last
 * byte that is not blank, so a root that stops short of it is such a tree.
 */
int lang_tree_broken(const TSTree *t, const char *data, size_t n)
{
	TSNode root = ts_tree_root_node(t);
	uint32_t end = ts_node_end_byte(root);

	if (!ts_node_has_error(root))
		return 0;
	while (n && (data[n - 1] == ' ' || data[n - 1] == '\t' || data[n - 1] == '\n' ||
		     data[n - 1] == '\r' || data[n - 1] == '\f' || data[n - 1] == '\v'))
		n--;
	if (end < n)
		return 1;
	return n && ts_node_child_count(root) == 0;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

void lang_tree_abandon(TSTree *t)
{
	/* deliberately not freed: ts_tree_delete() would crash (see above) */
#ifdef __SANITIZE_ADDRESS__
	__lsan_ignore_object(t);
#else
	(void)t;
#endif
}

static int word_in(const char *w, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && !memcmp(*list, w, len))
			return 1;
	return 0;
}

/*
 * The parse stack tree-sitter 0.20.7 can hold at the end of a file is what breaks it
 * (see lang_tree_broken), and some such files crash inside ts_parser_parse(), before
 * a tree can be looked at: 33,000 unclosed `f(` in C, 22,000 `if true; then` in bash.
 * So before parsing, estimate how deep the file nests: brackets in every language,
 * and the keywords that open and close blocks in bash (where a command starts) and
 * Ruby (`if` only at the start of a line, where it is not a modifier).  Strings and comments are not
 * told apart: the estimate may exceed the truth, never by much in real code.
 */
int lang_nesting_exceeds(const struct lang *l, const char *data, size_t n, unsigned limit)
{
	static const char *const bash_open[] = { "if", "case", "for", "while", "until", "select", NULL };
	static const char *const bash_close[] = { "fi", "esac", "done", NULL };
	static const char *const bash_lead[] = { "then", "do", "else", "elif", "if", "while", "until", NULL };
	static const char *const ruby_open[] = { "def", "class", "module", "do", "begin", "case", NULL };
	static const char *const ruby_open_bol[] = { "if", "unless", "while", "until", "for", NULL };
	static const char *const ruby_close[] = { "end", NULL };
	const char *const *open = NULL, *const *open_bol = NULL, *const *close = NULL;
	const char *const *lead = NULL;
	size_t i = 0;
	long depth = 0;
	int bol = 1;	/* at the start of a line, or (bash) of a command */

	if (!strcmp(l->name, "bash")) {
		open_bol = bash_open;	/* a keyword only where a command starts */
		close = bash_close;
		lead = bash_lead;
	} else if (!strcmp(l->name, "ruby")) {
		open = ruby_open;
		open_bol = ruby_open_bol;
		close = ruby_close;
	}
	while (i < n) {
		unsigned char ch = (unsigned char)data[i];

		if (ch == '{' || ch == '(' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ')' || ch == ']') {
			if (depth)
				depth--;
		} else if (close && (isalpha(ch) || ch == '_')) {
			size_t s = i;
			while (i < n && (isalnum((unsigned char)data[i]) || data[i] == '_'))
				i++;
			if ((open && word_in(data + s, i - s, open)) ||
			    (bol && word_in(data + s, i - s, open_bol)))
				depth++;
			else if (word_in(data + s, i - s, close) && depth)
				depth--;
			/* `then`, `do`, ... where a command starts start another */
			bol = bol && lead && word_in(data + s, i - s, lead);
			if ((unsigned long)depth > limit)
				return 1;
			continue;
		}
		if (ch == '\n' || (lead && (ch == ';' || ch == '&' || ch == '|' || ch == '(' || ch == '{')))
			bol = 1;
		else if (ch != ' ' && ch != '\t')
			bol = 0;
		if ((unsigned long)depth > limit)
			return 1;
		i++;
	}
	return 0;
}
