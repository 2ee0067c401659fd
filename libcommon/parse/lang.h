/*
 * lang.h: languages ci knows, how a file's language is detected, and what each
 * language's syntax tree looks like to the chunker.
 *
 * A language has a name (as in file records: "c", "python", "markdown", ...).  Those
 * with a tree-sitter grammar compiled in have a TSLanguage, the grammar's tags query
 * (definitions and references) and ci's own imports query; the others are chunked
 * by sections (Markdown) or line windows.
 */
#ifndef CI_LANG_H
#define CI_LANG_H

#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

/* How the chunker treats a syntax node type (see chunk.c). */
enum unit_flags {
	UNIT_CONTAINER = 1,	/* class-like: split into a header and its members */
	UNIT_WRAPPER = 2,	/* decorated_definition, export_statement, template_declaration:
				   takes kind and name from the unit inside it */
	UNIT_NEEDS_BODY = 4,	/* only a unit when it has a body (struct with fields, not a use) */
	UNIT_FUNCTION_VALUE = 8,	/* `const f = () => ...`: a unit when its value is a function */
	UNIT_LEAF = 16,		/* no units inside worth finding (C functions): not searched */
	UNIT_CLASS_MEMBER = 32,	/* only a unit directly in a class body (not an object literal) */
	UNIT_ASSIGNED_FUNCTION = 64,	/* `a.b = function ...` (an expression statement):
					   a unit when what it assigns is a function */
};

struct unit_rule {
	const char *node_type;	/* tree-sitter node type, e.g. "function_definition" */
	const char *kind;	/* chunk kind: function, class, struct, ... */
	unsigned flags;		/* enum unit_flags */
};

struct lang {
	const char *name;		/* "c", "python", ...; the record's "lang" */
	const TSLanguage *(*grammar)(void);	/* NULL when no grammar is compiled in */
	const struct unit_rule *units;	/* NULL-terminated; NULL when no grammar */
	int markdown;			/* chunked by sections */
};

/* The language of a file, from its name and its first bytes (a shebang), or NULL. */
const struct lang *lang_detect(const char *path, const char *head, size_t n);
/* A language by name, or NULL. */
const struct lang *lang_by_name(const char *name);
/* All languages, for listing (NULL-terminated). */
const struct lang *const *lang_all(void);

/* Built-in query texts (generated into queries.c from the grammars' tags.scm and
 * share/queries/<lang>/imports.scm); "" when there is none. */
const char *lang_tags_query(const char *lang);
const char *lang_imports_query(const char *lang);

/* The rule for a node type in lang, or NULL. */
const struct unit_rule *lang_unit_rule(const struct lang *l, const char *node_type);

/*
 * A tree libtree-sitter 0.20.7 built wrong (over 65,535 nodes left open at the end
 * of the file): its root stops short of the file's last non-blank byte.  Such a
 * tree must not be walked further or deleted: give it to lang_tree_abandon(),
 * which keeps it (a leak, on hostile input only) instead of ts_tree_delete().
 */
int lang_tree_broken(const TSTree *t, const char *data, size_t n);
void lang_tree_abandon(TSTree *t);
/*
 * Whether data nests more than limit deep by brackets (and bash's or Ruby's block
 * keywords): such a file is not given to tree-sitter 0.20.7, which can crash on it.
 */
int lang_nesting_exceeds(const struct lang *l, const char *data, size_t n, unsigned limit);
/* The limit the chunker and the complexity counter use. */
#define LANG_MAX_NESTING 4096
/*
 * The time a tree-sitter parse of n bytes may take, in microseconds, for
 * ts_parser_set_timeout_micros(): 2 s and 18 us a byte, at most 20 s.  Some
 * grammars loop on some inputs until the limit (tree-sitter-typescript on a
 * 119-byte file, tests/fuzz/regress/chunk): a small file must not cost the
 * limit of a megabyte's.
 */
uint64_t lang_parse_timeout_us(size_t n);

#endif
