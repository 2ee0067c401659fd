/*
 * complexity.c: branches and nesting counted over a tree-sitter syntax tree (see
 * complexity.h).
 *
 * Node types are looked up once per language into a table indexed by grammar
 * symbol, so the walk over a tree costs one array read per node; a walk with a
 * tree cursor and an explicit stack, so deep trees do not recurse.
 */
#include "core/common.h"
#include "parse/complexity.h"

#include <pthread.h>

/* What a node type is for the count. */
enum cx_class {
	CX_NONE = 0,
	CX_BRANCH,	/* costs 1 + depth, and nests what it holds */
	CX_NEST,	/* a switch or match: costs nothing, its arms do */
	CX_ARM,		/* costs 1 + depth and nests what it holds (case arm, ternary) */
	CX_FLAT,	/* costs 1, nests nothing (elif, else if) */
	CX_BOOL,	/* a binary node: costs 1 when its operator is && || and or ?? */
	CX_ELSE,	/* an else clause: an if directly inside is an else-if */
	CX_LOGIC,	/* costs 1 (Python's boolean_operator) */
};

struct cx_rule {
	const char *type;	/* node type */
	enum cx_class cls;	/* its class */
};

#define COMMON_C \
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH }, \
	{ "while_statement", CX_BRANCH }, { "do_statement", CX_BRANCH }, \
	{ "switch_statement", CX_NEST }, { "case_statement", CX_ARM }, \
	{ "conditional_expression", CX_ARM }, { "binary_expression", CX_BOOL }, \
	{ "else_clause", CX_ELSE }

static const struct cx_rule c_rules[] = { COMMON_C, { NULL, 0 } };
static const struct cx_rule cpp_rules[] = {
	COMMON_C, { "for_range_loop", CX_BRANCH }, { "catch_clause", CX_BRANCH }, { NULL, 0 }
};
static const struct cx_rule python_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "while_statement", CX_BRANCH }, { "except_clause", CX_BRANCH },
	{ "except_group_clause", CX_BRANCH }, { "match_statement", CX_NEST },
	{ "case_clause", CX_ARM }, { "elif_clause", CX_FLAT },
	{ "conditional_expression", CX_ARM }, { "for_in_clause", CX_ARM },
	{ "if_clause", CX_ARM }, { "boolean_operator", CX_LOGIC }, { NULL, 0 }
};
static const struct cx_rule js_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "for_in_statement", CX_BRANCH }, { "while_statement", CX_BRANCH },
	{ "do_statement", CX_BRANCH }, { "catch_clause", CX_BRANCH },
	{ "switch_statement", CX_NEST }, { "switch_case", CX_ARM },
	{ "ternary_expression", CX_ARM }, { "binary_expression", CX_BOOL },
	{ "else_clause", CX_ELSE }, { NULL, 0 }
};
static const struct cx_rule go_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "expression_switch_statement", CX_NEST }, { "type_switch_statement", CX_NEST },
	{ "select_statement", CX_NEST }, { "expression_case", CX_ARM },
	{ "type_case", CX_ARM }, { "communication_case", CX_ARM },
	{ "binary_expression", CX_BOOL }, { NULL, 0 }
};
static const struct cx_rule rust_rules[] = {
	{ "if_expression", CX_BRANCH }, { "while_expression", CX_BRANCH },
	{ "loop_expression", CX_BRANCH }, { "for_expression", CX_BRANCH },
	{ "match_expression", CX_NEST }, { "match_arm", CX_ARM },
	{ "binary_expression", CX_BOOL }, { "else_clause", CX_ELSE }, { NULL, 0 }
};
static const struct cx_rule java_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "enhanced_for_statement", CX_BRANCH }, { "while_statement", CX_BRANCH },
	{ "do_statement", CX_BRANCH }, { "catch_clause", CX_BRANCH },
	{ "switch_expression", CX_NEST }, { "switch_statement", CX_NEST },
	{ "switch_block_statement_group", CX_ARM }, { "switch_rule", CX_ARM },
	{ "ternary_expression", CX_ARM }, { "binary_expression", CX_BOOL }, { NULL, 0 }
};
static const struct cx_rule ruby_rules[] = {
	{ "if", CX_BRANCH }, { "unless", CX_BRANCH }, { "while", CX_BRANCH },
	{ "until", CX_BRANCH }, { "for", CX_BRANCH }, { "rescue", CX_BRANCH },
	{ "case", CX_NEST }, { "case_match", CX_NEST }, { "when", CX_ARM },
	{ "in_clause", CX_ARM }, { "conditional", CX_ARM }, { "if_modifier", CX_ARM },
	{ "unless_modifier", CX_ARM }, { "while_modifier", CX_ARM },
	{ "until_modifier", CX_ARM }, { "rescue_modifier", CX_ARM },
	{ "elsif", CX_FLAT }, { "binary", CX_BOOL }, { NULL, 0 }
};
static const struct cx_rule csharp_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "foreach_statement", CX_BRANCH }, { "while_statement", CX_BRANCH },
	{ "do_statement", CX_BRANCH }, { "catch_clause", CX_BRANCH },
	{ "switch_statement", CX_NEST }, { "switch_expression", CX_NEST },
	{ "switch_section", CX_ARM }, { "switch_expression_arm", CX_ARM },
	{ "conditional_expression", CX_ARM }, { "binary_expression", CX_BOOL }, { NULL, 0 }
};
static const struct cx_rule php_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "foreach_statement", CX_BRANCH }, { "while_statement", CX_BRANCH },
	{ "do_statement", CX_BRANCH }, { "catch_clause", CX_BRANCH },
	{ "switch_statement", CX_NEST }, { "match_expression", CX_NEST },
	{ "case_statement", CX_ARM }, { "match_conditional_expression", CX_ARM },
	{ "conditional_expression", CX_ARM }, { "else_if_clause", CX_FLAT },
	{ "binary_expression", CX_BOOL }, { NULL, 0 }
};
static const struct cx_rule bash_rules[] = {
	{ "if_statement", CX_BRANCH }, { "for_statement", CX_BRANCH },
	{ "c_style_for_statement", CX_BRANCH }, { "while_statement", CX_BRANCH },
	{ "case_statement", CX_NEST }, { "case_item", CX_ARM },
	{ "elif_clause", CX_FLAT }, { "ternary_expression", CX_ARM }, { NULL, 0 }
};

static const struct {
	const char *lang;		/* lang->name */
	const struct cx_rule *rules;	/* its node types */
} lang_rules[] = {
	{ "c", c_rules }, { "cpp", cpp_rules }, { "python", python_rules },
	{ "javascript", js_rules }, { "typescript", js_rules }, { "tsx", js_rules },
	{ "go", go_rules }, { "rust", rust_rules }, { "java", java_rules },
	{ "ruby", ruby_rules }, { "csharp", csharp_rules }, { "php", php_rules },
	{ "bash", bash_rules },
};

#define CX_UNIT 0x80	/* flag in the symbol table: a unit (nesting starts again) */
#define CX_FUNC 0x40	/* flag: a function-like unit */

/* A language's symbol table, built once and shared (read-only afterwards). */
struct cx_lang {
	const struct lang *lang;	/* the language */
	unsigned char *cls;		/* enum cx_class | CX_UNIT | CX_FUNC, by symbol */
	uint32_t nsym;			/* symbols of the grammar */
};

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cx_lang tables[32];
static size_t tables_nr;

struct complexity {
	TSParser *parser;		/* this thread's parser */
	int *stack;			/* nesting depth per tree level */
	size_t stack_alloc;		/* allocated */
};

static int is_function_kind(const char *k)
{
	return !strcmp(k, "function") || !strcmp(k, "method") || !strcmp(k, "constructor");
}

static const struct cx_lang *table_of(const struct lang *l)
{
	const struct cx_lang *ret = NULL;
	const struct cx_rule *rules = NULL;
	size_t i;

	pthread_mutex_lock(&tables_lock);
	for (i = 0; i < tables_nr; i++)
		if (tables[i].lang == l) {
			ret = &tables[i];
			goto done;
		}
	for (i = 0; i < ARRAY_SIZE(lang_rules); i++)
		if (!strcmp(lang_rules[i].lang, l->name))
			rules = lang_rules[i].rules;
	if (!rules || tables_nr >= ARRAY_SIZE(tables))
		goto done;
	{
		const TSLanguage *ts = l->grammar();
		struct cx_lang *t = &tables[tables_nr];
		uint32_t s;

		t->lang = l;
		t->nsym = ts_language_symbol_count(ts);
		t->cls = xcalloc(t->nsym ? t->nsym : 1, 1);
		for (s = 0; s < t->nsym; s++) {
			const char *name;
			const struct unit_rule *u;
			const struct cx_rule *r;

			if (ts_language_symbol_type(ts, (TSSymbol)s) != TSSymbolTypeRegular)
				continue;
			name = ts_language_symbol_name(ts, (TSSymbol)s);
			for (r = rules; r->type; r++)
				if (!strcmp(r->type, name))
					t->cls[s] = (unsigned char)r->cls;
			if ((u = lang_unit_rule(l, name))) {
				t->cls[s] |= CX_UNIT;
				if (is_function_kind(u->kind))
					t->cls[s] |= CX_FUNC;
			}
		}
		tables_nr++;
		ret = t;
	}
done:
	pthread_mutex_unlock(&tables_lock);
	return ret;
}

struct complexity *complexity_new(void)
{
	struct complexity *cx = xcalloc(1, sizeof(*cx));

	cx->parser = ts_parser_new();	/* each parse timed: lang_parse_timeout_us */
	return cx;
}

void complexity_free(struct complexity *cx)
{
	if (!cx)
		return;
	ts_parser_delete(cx->parser);
	free(cx->stack);
	free(cx);
}

/* 1 if the binary node n joins its operands with a logical operator. */
static int is_logical(TSNode n)
{
	TSNode op = ts_node_child_by_field_name(n, "operator", 8);
	const char *t;

	if (ts_node_is_null(op))
		return 0;
	t = ts_node_type(op);
	return !strcmp(t, "&&") || !strcmp(t, "||") || !strcmp(t, "and") || !strcmp(t, "or") ||
	       !strcmp(t, "??");
}

static unsigned class_of(const struct cx_lang *t, TSNode n)
{
	TSSymbol s = ts_node_symbol(n);

	return s < t->nsym ? t->cls[s] : 0;
}

/*
 * An if directly in an else clause, or the alternative of an if (Go, Java): an
 * else-if, which costs 1 and does not nest deeper.
 */
static int is_else_if(const struct cx_lang *t, TSNode n, TSNode parent)
{
	unsigned pc;

	if (ts_node_is_null(parent))
		return 0;
	pc = class_of(t, parent) & 0x3f;
	if (pc == CX_ELSE)
		return 1;
	if (pc == CX_BRANCH && ts_node_symbol(parent) == ts_node_symbol(n)) {
		TSNode alt = ts_node_child_by_field_name(parent, "alternative", 11);
		return !ts_node_is_null(alt) && ts_node_eq(alt, n);
	}
	return 0;
}

int complexity_of(struct complexity *cx, const struct lang *l, const char *data, size_t n,
		  long *out, long *functions)
{
	const struct cx_lang *t;
	TSTree *tree;
	TSTreeCursor cur;
	size_t level = 0;
	long sum = 0, funcs = 0;

	*out = 0;
	if (functions)
		*functions = 0;
	if (!l || !l->grammar || !(t = table_of(l)))
		return 1;
	if (memchr(data, '\0', n) || n > UINT32_MAX)
		return 1;
	if (lang_nesting_exceeds(l, data, n, LANG_MAX_NESTING))
		return 1;
	ts_parser_reset(cx->parser);
	if (!ts_parser_set_language(cx->parser, l->grammar()))
		return 1;
	ts_parser_set_timeout_micros(cx->parser, lang_parse_timeout_us(n));
	tree = ts_parser_parse_string(cx->parser, NULL, data, (uint32_t)n);
	if (!tree)
		return 1;
	if (lang_tree_broken(tree, data, n)) {
		lang_tree_abandon(tree);
		return 1;
	}

	/* stack[level]: the nesting depth that the children of the node at level see */
	cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	ALLOC_GROW(cx->stack, 1, cx->stack_alloc);
	cx->stack[0] = 0;
	for (;;) {
		TSNode node = ts_tree_cursor_current_node(&cur);
		unsigned c = ts_node_is_named(node) ? class_of(t, node) : 0;
		int depth = level ? cx->stack[level - 1] : 0, inner = depth;

		switch (c & 0x3f) {
		case CX_BRANCH:
			if (is_else_if(t, node, ts_node_parent(node))) {
				sum += 1;
			} else {
				sum += 1 + depth;
				inner = depth + 1;
			}
			break;
		case CX_ARM:
			sum += 1 + depth;
			inner = depth + 1;
			break;
		case CX_FLAT:
		case CX_LOGIC:
			sum += 1;
			break;
		case CX_BOOL:
			if (is_logical(node))
				sum += 1;
			break;
		default:
			break;
		}
		if (c & CX_UNIT)
			inner = 0;
		if (c & CX_FUNC)
			funcs++;
		ALLOC_GROW(cx->stack, level + 1, cx->stack_alloc);
		cx->stack[level] = inner;
		if (ts_tree_cursor_goto_first_child(&cur)) {
			level++;
			continue;
		}
		while (!ts_tree_cursor_goto_next_sibling(&cur)) {
			if (!ts_tree_cursor_goto_parent(&cur))
				goto walked;
			level--;
		}
	}
walked:
	ts_tree_cursor_delete(&cur);
	ts_tree_delete(tree);
	*out = sum;
	if (functions)
		*functions = funcs;
	return 0;
}
