/*
 * style.c: the style guide of a project, read from its documents and its
 * linters' configuration (see style.h).  Files are small and read once each
 * (t0555: pyproject.toml is not read twice).
 */
#include "core/common.h"
#include "context/context.h"
#include "context/style.h"

#include <ctype.h>
#include <dirent.h>
#include <strings.h>
#include <sys/stat.h>

/* A heading that is about style: its words. */
static int style_heading(const char *h)
{
	static const char *const words[] = { "style", "convention", "guideline", "coding standard",
					     "formatting", "lint", "naming", "pep 8", "pep8", "commit",
					     "type hint", "docstring", "test", NULL };

	for (int i = 0; words[i]; i++)
		if (ctx_contains_ci(h, words[i]))
			return 1;
	return 0;
}

/* One style rule: where it was written (file, line, section) and what it says. */
static void add_rule(json_t *rules, const char *file, int lineno, const char *section, const char *rule)
{
	json_array_append_new(rules, json_pack("{s:s,s:s,s:i,s:s,s:s}", "_type", "style_rule", "file", file,
					       "line", lineno, "section", section, "rule", rule));
}

/* An RST heading underline: one punctuation character repeated, 3 or more. */
static int rst_underline(const char *s)
{
	size_t n = strlen(s);

	if (n < 3 || !strchr("=-~^\"'`#*+_:.", *s))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (s[i] != *s)
			return 0;
	return 1;
}

/* A list item's text (-, *, +, 1., #.), or NULL. */
static char *list_item(char *s)
{
	char *e;

	if ((*s == '-' || *s == '*' || *s == '+') && s[1] == ' ')
		return s + 2;
	if (*s == '#' && s[1] == '.' && s[2] == ' ')
		return s + 3;
	if (isdigit((unsigned char)*s) && (e = s + strspn(s, "0123456789")) && (*e == '.' || *e == ')') &&
	    e[1] == ' ')
		return e + 2;
	return NULL;
}

/*
 * The rules of one document (Markdown, or reStructuredText when rst): under a
 * heading about style (every heading when all), each list item, and each
 * paragraph (its lines joined), with the heading as section.  Code blocks are
 * left out.  Appends {file, line, section, rule}.
 */
void style_doc(json_t *rules, const char *file, int all, int rst)
{
	FILE *fp = fopen(file, "r");
	char *line = NULL, *section = xstrdup(""), *prev = NULL;
	size_t cap = 0;
	int lineno = 0, fence = 0, in_style = all, para_line = 0;
	struct buf para = BUF_INIT;

	if (!fp)
		return;
#define FLUSH_PARA() do { \
		if (para.len && in_style) \
			add_rule(rules, file, para_line, section, para.buf); \
		buf_reset(&para); \
	} while (0)
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *item;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		if (!rst && (!strncmp(s, "```", 3) || !strncmp(s, "~~~", 3))) {
			FLUSH_PARA();
			fence = !fence;
			continue;
		}
		if (fence)
			continue;
		if (!rst && *s == '#') {
			FLUSH_PARA();
			s += strspn(s, "#");
			s += strspn(s, " \t");
			free(section);
			section = xstrdup(s);
			in_style = all || style_heading(section);
			continue;
		}
		if (rst && rst_underline(s) && prev && *prev && !rst_underline(prev)) {
			/* the paragraph so far was the heading's title */
			buf_reset(&para);
			free(section);
			section = xstrdup(prev);
			in_style = all || style_heading(section);
			free(prev);
			prev = NULL;
			continue;
		}
		if (rst && (rst_underline(s) || !strncmp(s, ".. ", 3))) {
			FLUSH_PARA();
			free(prev);
			prev = NULL;
			continue;
		}
		free(prev);
		prev = xstrdup(s + strspn(s, " \t"));
		if (rst && (*s == ' ' || *s == '\t') && !para.len)
			continue;	/* an indented block: code, or a directive's body */
		s += strspn(s, " \t");
		if (!*s) {
			FLUSH_PARA();
			continue;
		}
		if ((item = list_item(s)) != NULL) {
			FLUSH_PARA();
			item += strspn(item, " \t");
			if (*item && in_style)
				add_rule(rules, file, lineno, section, item);
			continue;
		}
		if (!para.len)
			para_line = lineno;
		else
			buf_addch(&para, ' ');
		buf_addstr(&para, s);
	}
	FLUSH_PARA();
#undef FLUSH_PARA
	free(prev);
	buf_release(&para);
	free(section);
	free(line);
	fclose(fp);
}

/*
 * An INI-like file (.editorconfig, setup.cfg, tox.ini, .flake8): each
 * "key = value" under a [section] that want() accepts (NULL: every section).
 */
void style_ini(json_t *rules, const char *file, int (*want)(const char *section))
{
	FILE *fp = fopen(file, "r");
	char *line = NULL, *section = xstrdup("");
	size_t cap = 0;
	int lineno = 0, keep = !want, rule_line = 0;
	struct buf rule = BUF_INIT;	/* a key's line and its continuation lines */

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		if ((*s == ' ' || *s == '\t') && rule.len) {
			s += strspn(s, " \t");
			if (*s && *s != '#' && *s != ';') {
				buf_addch(&rule, ' ');
				buf_addstr(&rule, s);
			}
			continue;
		}
		if (rule.len) {
			add_rule(rules, file, rule_line, section, rule.buf);
			buf_reset(&rule);
		}
		if (!*s || *s == '#' || *s == ';' || *s == ' ' || *s == '\t')
			continue;
		if (*s == '[') {
			free(section);
			section = xstrdup(s);
			keep = !want || want(section);
			continue;
		}
		if (!keep || !strchr(s, '=') || !strncmp(s, "root", 4))
			continue;
		buf_addstr(&rule, s);
		rule_line = lineno;
	}
	if (rule.len)
		add_rule(rules, file, rule_line, section, rule.buf);
	buf_release(&rule);
	free(section);
	free(line);
	fclose(fp);
}

/*
 * The line of a file, whose text (NUL-terminated) the caller read once, where
 * key is set ("key =" or "key:" at a line's start), or 0.
 */
static int key_line(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *line = text;
	int lineno = 0;

	while (*line) {
		const char *s = line + strspn(line, " \t\""), *nl = strchr(line, '\n');
		lineno++;
		/* a key at the end of the text, with no newline after it, counts */
		if (!strncmp(s, key, kl) && (s[kl] == '\0' || strchr(" \t=:\"", s[kl])))
			return lineno;
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

/* The sections of setup.cfg and tox.ini that configure a linter or formatter. */
static int linter_section(const char *sec)
{
	static const char *const tools[] = { "[flake8]", "[isort]", "[pycodestyle]", "[pydocstyle]",
		"[pylint", "[tool:isort]", "[yapf]", "[black]", "[mypy]", NULL };

	for (int i = 0; tools[i]; i++)
		if (!strncmp(sec, tools[i], strlen(tools[i])))
			return 1;
	return 0;
}

/* A YAML-ish configuration (.clang-format, .rubocop.yml, .eslintrc.yml, ...): its
 * top-level "key: value" lines; .pre-commit-config.yaml: its hooks' ids. */
static void style_yaml(json_t *rules, const char *file)
{
	FILE *fp = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, precommit = !strcmp(file, ".pre-commit-config.yaml");

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *t;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		if (precommit) {
			t = s + strspn(s, " \t-");
			if (!strncmp(t, "id:", 3)) {
				char *r = xasprintf("pre-commit hook %s", t + 3 + strspn(t + 3, " \t"));
				add_rule(rules, file, lineno, "hooks", r);
				free(r);
			}
			continue;
		}
		if (!*s || *s == ' ' || *s == '\t' || *s == '#' || *s == '-' || !strchr(s, ':') ||
		    !strcmp(s, "---"))
			continue;
		add_rule(rules, file, lineno, "", s);
	}
	free(line);
	fclose(fp);
}

/* Flatten a JSON configuration object into "a.b = value" rules. */
static void style_json_obj(json_t *rules, const char *file, const char *text, const char *section,
			   const char *prefix, json_t *obj, int depth)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		char *key = *prefix ? xasprintf("%s.%s", prefix, k) : xstrdup(k);
		if (json_is_object(v) && depth < 4) {
			style_json_obj(rules, file, text, section, key, v, depth + 1);
		} else {
			char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			char *r = xasprintf("%s = %s", key, val ? val : "");
			add_rule(rules, file, key_line(text, k), section, r);
			free(r);
			free(val);
		}
		free(key);
	}
}

/*
 * pyproject.toml's [tool.<linter>] tables, and .eslintrc.json's rules.  The
 * file is read once: the parser and the line of each key (key_line) read the
 * same text.
 */
static void style_config_json(json_t *rules, const char *file, const struct context_toml *toml)
{
	static const char *const tools[] = { "ruff", "black", "isort", "flake8", "pylint", "yapf",
					     "pydocstyle", "autopep8", NULL };
	char *err = NULL, *json = NULL, *text = NULL;
	size_t len;
	json_t *root;

	if (read_file(file, &text, &len) < 0)
		return;
	if (!strstr(file, ".toml")) {
		json_error_t jerr;
		root = json_loadb(text, len, 0, &jerr);
		if (root) {
			style_json_obj(rules, file, text, "", "", root, 0);
			json_decref(root);
		}
		free(text);
		return;
	}
	json = toml && toml->text_json ? toml->text_json(text, len, file, &err) : NULL;
	root = json ? json_loads(json, 0, NULL) : NULL;
	free(json);
	free(err);
	for (int i = 0; root && tools[i]; i++) {
		json_t *t = json_object_get(json_object_get(root, "tool"), tools[i]);
		if (json_is_object(t)) {
			char *sec = xasprintf("[tool.%s]", tools[i]);
			style_json_obj(rules, file, text, sec, "", t, 0);
			free(sec);
		}
	}
	json_decref(root);
	free(text);
}

/* Whether a file name is a style document: STYLE*, *style*, *convention*,
 * CONTRIBUTING*, CODING_STANDARDS*, in Markdown, reStructuredText or text. */
static int style_doc_name(const char *name, int *all)
{
	const char *dot = strrchr(name, '.');

	if (!dot || (strcasecmp(dot, ".md") && strcasecmp(dot, ".rst") && strcasecmp(dot, ".txt")))
		return 0;
	*all = ctx_contains_ci(name, "style") || ctx_contains_ci(name, "convention") ||
	       ctx_contains_ci(name, "coding_standard") || ctx_contains_ci(name, "coding-standard");
	return *all || ctx_contains_ci(name, "contributing");
}

/* docs/ (or doc/) to depth 3: the style documents, into a sorted list. */
static void find_style_docs(const char *dir, int depth, char ***docs, size_t *nr, size_t *alloc)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int all;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char *p;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < 3) {
			find_style_docs(p, depth + 1, docs, nr, alloc);
		} else if (S_ISREG(st.st_mode) && style_doc_name(de->d_name, &all)) {
			ALLOC_GROW(*docs, *nr + 1, *alloc);
			(*docs)[(*nr)++] = p;
			p = NULL;
		}
		free(p);
	}
	closedir(d);
}

void style_guide_read(struct style_guide *sg, const struct context_toml *toml)
{
	static const char *const yaml[] = { ".clang-format", ".rubocop.yml", ".eslintrc.yml",
		".eslintrc.yaml", ".prettierrc", ".prettierrc.yml", ".prettierrc.yaml", ".golangci.yml",
		".pre-commit-config.yaml", NULL };
	static const char *const jsons[] = { ".eslintrc.json", ".eslintrc", ".prettierrc.json", NULL };
	json_t *rules = json_array(), **sources = &sg->sources;
	char **docs = NULL;
	size_t docs_nr = 0, docs_alloc = 0, i;
	DIR *d;
	struct dirent *de;
	int all;

	sg->toml = toml;
	sg->rules = rules;
	*sources = json_array();
	if ((d = opendir(".")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (style_doc_name(de->d_name, &all)) {
				ALLOC_GROW(docs, docs_nr + 1, docs_alloc);
				docs[docs_nr++] = xstrdup(de->d_name);
			}
		}
		closedir(d);
	}
	find_style_docs(".github", 1, &docs, &docs_nr, &docs_alloc);
	find_style_docs("docs", 1, &docs, &docs_nr, &docs_alloc);
	find_style_docs("doc", 1, &docs, &docs_nr, &docs_alloc);
	/* documents named for style before CONTRIBUTING ones; by path within each */
	if (docs_nr)
		qsort(docs, docs_nr, sizeof(*docs), ctx_cmp_str);
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < docs_nr; i++) {
			const char *base = strrchr(docs[i], '/') ? strrchr(docs[i], '/') + 1 : docs[i];
			const char *dot = strrchr(base, '.');
			size_t before = json_array_size(rules);

			style_doc_name(base, &all);
			if (all != !pass)
				continue;
			style_doc(rules, docs[i], all, dot && !strcasecmp(dot, ".rst"));
			if (all || json_array_size(rules) > before)
				json_array_append_new(*sources, json_string(docs[i]));
		}
	for (i = 0; i < docs_nr; i++)
		free(docs[i]);
	free(docs);
	if (!access(".editorconfig", R_OK)) {
		json_array_append_new(*sources, json_string(".editorconfig"));
		style_ini(rules, ".editorconfig", NULL);
	}
	{
		static const char *const lint_ini[] = { "setup.cfg", "tox.ini", ".flake8", NULL };
		for (i = 0; lint_ini[i]; i++) {
			size_t before = json_array_size(rules);
			if (access(lint_ini[i], R_OK))
				continue;
			style_ini(rules, lint_ini[i], strcmp(lint_ini[i], ".flake8") ? linter_section : NULL);
			if (json_array_size(rules) > before)
				json_array_append_new(*sources, json_string(lint_ini[i]));
		}
	}
	if (!access("pyproject.toml", R_OK)) {
		size_t before = json_array_size(rules);
		style_config_json(rules, "pyproject.toml", toml);
		if (json_array_size(rules) > before)
			json_array_append_new(*sources, json_string("pyproject.toml"));
	}
	if (!access("rustfmt.toml", R_OK) || !access(".rustfmt.toml", R_OK)) {
		const char *f = !access("rustfmt.toml", R_OK) ? "rustfmt.toml" : ".rustfmt.toml";
		json_array_append_new(*sources, json_string(f));
		style_ini(rules, f, NULL);
	}
	for (i = 0; yaml[i]; i++)
		if (!access(yaml[i], R_OK)) {
			json_array_append_new(*sources, json_string(yaml[i]));
			style_yaml(rules, yaml[i]);
		}
	for (i = 0; jsons[i]; i++)
		if (!access(jsons[i], R_OK)) {
			json_array_append_new(*sources, json_string(jsons[i]));
			style_config_json(rules, jsons[i], toml);
		}
	if (!access("README.md", R_OK) || !access("README.rst", R_OK)) {
		const char *f = !access("README.md", R_OK) ? "README.md" : "README.rst";
		size_t before = json_array_size(rules);

		style_doc(rules, f, 0, !strcmp(f, "README.rst"));
		if (json_array_size(rules) > before)
			json_array_append_new(*sources, json_string(f));
	}
}

void style_guide_release(struct style_guide *sg)
{
	json_decref(sg->rules);
	json_decref(sg->sources);
	sg->rules = sg->sources = NULL;
}

int style_rule_matches(json_t *r, const char *query, const char *category)
{
	if (category && !ctx_contains_ci(ctx_str(r, "section"), category) &&
	    !ctx_contains_ci(ctx_str(r, "file"), category))
		return 0;
	if (query && !ctx_contains_ci(ctx_str(r, "rule"), query) &&
	    !ctx_contains_ci(ctx_str(r, "section"), query))
		return 0;
	return 1;
}
