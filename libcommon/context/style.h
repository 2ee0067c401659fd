/*
 * style.h: the project's style guide, as rules: each list item or paragraph of
 * a style document (STYLE*, CONTRIBUTING*'s sections about style, everything under docs/,
 * the README's), each setting of .editorconfig and of the linters' and
 * formatters' configuration, with the file, line and section it came from.
 *
 * A struct style_guide is what one directory says: read it once, filter its
 * rules for a query.  Paths are relative to the current directory.
 */
#ifndef CI_CONTEXT_STYLE_H
#define CI_CONTEXT_STYLE_H

#include <jansson.h>

struct context_toml;

struct style_guide {
	const struct context_toml *toml;	/* the TOML parser (pyproject.toml; NULL: none) */
	json_t *rules;		/* the "style_rule" records, in the order read (owned) */
	json_t *sources;	/* the files that gave rules, an array of paths (owned) */
};

/*
 * Read the style rules of the current directory into sg, in this order: the
 * style documents at the top, in .github/ and under docs/ or doc/ (STYLE*,
 * CODE_STYLE*, CODING_STANDARDS*, CONVENTIONS*, *style*, whole; CONTRIBUTING*
 * only its sections about style), Markdown or reStructuredText; .editorconfig;
 * the linters' and formatters' configuration (pyproject.toml
 * [tool.ruff|black|isort|flake8|...], setup.cfg, tox.ini and .flake8 linter
 * sections, .clang-format, .rubocop.yml, .eslintrc*, .prettierrc*,
 * rustfmt.toml, .pre-commit-config.yaml hooks); then the README's sections
 * about style.  Cannot fail: a file that cannot be read gives nothing.
 */
void style_guide_read(struct style_guide *sg, const struct context_toml *toml);
void style_guide_release(struct style_guide *sg);
/* Whether rule r passes `style-guide --query q --category c` (each NULL: any). */
int style_rule_matches(json_t *r, const char *query, const char *category);

/*
 * The rules of one document (Markdown, or reStructuredText when rst): under a
 * heading about style (every heading when all), each list item, and each
 * paragraph (its lines joined), with the heading as section.  Code blocks are
 * left out.  Appends {_type, file, line, section, rule} to rules.
 */
void style_doc(json_t *rules, const char *file, int all, int rst);
/*
 * An INI-like file (.editorconfig, setup.cfg, tox.ini, .flake8): each
 * "key = value" under a [section] that want() accepts (NULL: every section).
 */
void style_ini(json_t *rules, const char *file, int (*want)(const char *section));

#endif
