/*
 * tagtext.c: a call's receiver, a definition's flags and a file's main guard
 * from the source text (tagtext.h).  Moved here from graph/ (bind.c, cgraph.c) so that
 * the index stores them when it loads a file's tags.
 */
#include "core/common.h"
#include "parse/tagtext.h"

#include <ctype.h>

enum bind_recv bind_receiver(const char *text, size_t col0)
{
	size_t i = col0, e;

	if (!text || strlen(text) < col0)
		return RECV_UNKNOWN;
	while (i && (text[i - 1] == ' ' || text[i - 1] == '\t'))
		i--;
	if (i >= 2 && text[i - 1] == '>' && text[i - 2] == '-')
		i--;	/* p->f() (C, C++, PHP): as p.f() */
	else if (!i || text[i - 1] != '.')
		return RECV_BARE;
	i--;
	while (i && (text[i - 1] == ' ' || text[i - 1] == '\t'))
		i--;
	e = i;
	if (i >= 2 && text[i - 1] == ')' && text[i - 2] == '(') {
		i -= 2;
		if (i >= 5 && !strncmp(text + i - 5, "super", 5) &&
		    (i == 5 || !(isalnum((unsigned char)text[i - 6]) || text[i - 6] == '_')))
			return RECV_SUPER;
		return RECV_OTHER;
	}
	while (i && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_'))
		i--;
	if (i && (text[i - 1] == '.' || text[i - 1] == ')' || text[i - 1] == ']'))
		return RECV_OTHER;	/* a.b.f(), g().f(), x[0].f() */
	if ((e - i == 4 && (!strncmp(text + i, "self", 4) || !strncmp(text + i, "this", 4))) ||
	    (e - i == 3 && !strncmp(text + i, "cls", 3)))
		return RECV_SELF;
	return RECV_OTHER;
}

unsigned tagtext_def_flags(const char *(*line_at)(void *ctx, long l), void *ctx, long line)
{
	const char *t;
	long l = line - 1;

	while (l >= 1 && (t = line_at(ctx, l)) && !t[strspn(t, " \t")])
		l--;	/* blank lines between decorator and definition */
	if (l >= 1 && (t = line_at(ctx, l)) && t[strspn(t, " \t")] == '@')
		return TAGTEXT_DECORATED;
	/* C: a constructor or destructor runs without a call */
	for (l = line; l >= line - 1 && l >= 1; l--)
		if ((t = line_at(ctx, l)) &&
		    (strstr(t, "__attribute__((constructor") || strstr(t, "__attribute__((destructor")))
			return TAGTEXT_DECORATED;
	return 0;
}

long tagtext_main_guard(const char *(*line_at)(void *ctx, long l), void *ctx, long lines_nr)
{
	const char *t;

	for (long l = 1; l <= lines_nr; l++)
		if ((t = line_at(ctx, l)) && !strncmp(t, "if __name__", 11) && strstr(t, "__main__"))
			return l;
	return 0;
}

/* ASCII letters, digits and '_' (isalpha() and isalnum() in the C locale, without their calls). */
static inline int ident_start(unsigned c)
{
	return (c | 32) - 'a' < 26 || c == '_';
}

static inline int ident_char(unsigned c)
{
	return ident_start(c) || c - '0' < 10;
}

void tagtext_idents(const char *(*line_at)(void *ctx, long l), void *ctx, long lines_nr, const char *lang,
		    void (*fn)(void *arg, const char *tok, long line, long col, int prefix), void *arg)
{
	int hash = lang && (!strcmp(lang, "python") || !strcmp(lang, "ruby") || !strcmp(lang, "bash"));
	char tok[256];

	for (long l = 1; l <= lines_nr; l++) {
		const char *s = line_at(ctx, l);
		char quote = 0;

		for (size_t i = 0; s && s[i]; ) {
			unsigned char c = (unsigned char)s[i];
			if (quote) {
				if (c == '\\' && s[i + 1])
					i++;
				else if (c == (unsigned char)quote)
					quote = 0;
			} else if (c == '"' || c == '\'') {
				quote = (char)c;
			} else if ((hash && c == '#') || (!hash && c == '/' && s[i + 1] == '/')) {
				break;
			}
			if (ident_start(c)) {
				size_t j = i;
				while (ident_char((unsigned char)s[j]))
					j++;
				if (j - i < sizeof(tok)) {
					memcpy(tok, s + i, j - i);
					tok[j - i] = '\0';
					fn(arg, tok, l, (long)i + 1,
					   quote && i && s[i - 1] == quote && (s[j] == quote || s[j] == '{') && j - i >= 2 &&
					   s[j - 1] == '_');
				}
				i = j;
				continue;
			}
			i++;
		}
	}
}

int tagtext_import_line(const char *s)
{
	s += strspn(s, " \t");
	return !strncmp(s, "from ", 5) || !strncmp(s, "import ", 7);
}

static int js_ident_char(int c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

const char *tagtext_word_before(const char *text, const char *p, size_t *n)
{
	const char *e = p;

	while (e > text && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '*'))
		e--;	/* function* gen() */
	p = e;
	while (p > text && js_ident_char(p[-1]))
		p--;
	*n = (size_t)(e - p);
	return *n ? p : NULL;
}

static int word_is(const char *w, size_t n, const char *kw)
{
	return w && strlen(kw) == n && !strncmp(w, kw, n);
}

const char *tagtext_word(const char *s, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = s; n && (p = strstr(p, name)); p += n)
		if ((p == s || !js_ident_char(p[-1])) && !js_ident_char(p[n]))
			return p;
	return NULL;
}

int tagtext_js_declared(const char *text, const char *name)
{
	for (const char *p = text ? tagtext_word(text, name) : NULL; p; p = tagtext_word(p + 1, name)) {
		size_t n;
		const char *w = tagtext_word_before(text, p, &n), *q = p + strlen(name);

		if (word_is(w, n, "function") || word_is(w, n, "const") || word_is(w, n, "let") ||
		    word_is(w, n, "var") || word_is(w, n, "class"))
			return 1;
		/* name = function () {}, name = () => {}: a plain assignment at the line's start */
		while (*q == ' ' || *q == '\t')
			q++;
		if (!w && p == text + strspn(text, " \t") && q[0] == '=' && q[1] != '=' && q[1] != '>')
			return 1;
	}
	return 0;
}


int tagtext_js_assigned(const char *text, const char *name)
{
	for (const char *p = text ? tagtext_word(text, name) : NULL; p; p = tagtext_word(p + 1, name)) {
		const char *q = p + strlen(name);

		while (*q == ' ' || *q == '\t')
			q++;
		if (p > text && p[-1] == '.' && q[0] == '=' && q[1] != '=' && q[1] != '>')
			return 1;
	}
	return 0;
}
