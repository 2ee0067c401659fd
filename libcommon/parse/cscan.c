/*
 * cscan.c: attribute macros and macro-body calls of C and C++ text (see
 * cscan.h).  A single forward scan per file, run before the parse of every C
 * and C++ file (the Linux tree: 60,000 of them), so it looks at each byte
 * once and allocates only for what it finds.
 */
#include "core/common.h"
#include "parse/cscan.h"

static int is_ident_start(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int is_ident(int ch)
{
	return is_ident_start(ch) || (ch >= '0' && ch <= '9');
}

static int is_blank(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* 1 if s (len bytes) is one of the NULL-terminated words. */
static int one_of(const char *s, size_t len, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == len && !memcmp(s, *words, len))
			return 1;
	return 0;
}

/* Double-underscore words the grammar parses itself. */
static const char *const grammar_words[] = {
	"__attribute__", "__attribute", "__declspec", "__typeof__", "__typeof", "__asm__",
	"__asm", "__volatile__", "__extension__", "__alignof__", "__alignof", "__restrict",
	"__restrict__", "__inline", "__inline__", "__thread", "__cdecl", "__stdcall",
	"__fastcall", "__based", "__unaligned", "__forceinline", "__int64", "__int128",
	"__label__", "__auto_type", "__signed__", "__const", "__const__", NULL,
};

/*
 * Skip a comment, string or character literal starting at i, or return i.
 * Used by both scans.
 */
static size_t skip_lexical(const char *d, size_t n, size_t i)
{
	if (d[i] == '/' && i + 1 < n && d[i + 1] == '/') {
		while (i < n && d[i] != '\n')
			i++;
		return i;
	}
	if (d[i] == '/' && i + 1 < n && d[i + 1] == '*') {
		i += 2;
		while (i + 1 < n && !(d[i] == '*' && d[i + 1] == '/'))
			i++;
		return i + 2 < n ? i + 2 : n;
	}
	if (d[i] == '"' || d[i] == '\'') {
		char q = d[i++];

		while (i < n && d[i] != q && d[i] != '\n') {
			if (d[i] == '\\' && i + 1 < n)
				i++;
			i++;
		}
		return i < n ? i + 1 : n;
	}
	return i;
}

/* Words before a parenthesis that make it no parameter list. */
static const char *const control_words[] = {
	"if", "while", "for", "switch", "sizeof", "return", "typeof", "__typeof__", "defined",
	"_Generic", "alignof", "_Alignof", NULL,
};

/*
 * 1 if the text before i (an attribute macro followed by ';', '{', ',' or
 * '=') ends a declarator: a parameter list "name(...)" or another
 * double-underscore word (`__assume_kmalloc_alignment __alloc_size(1);`).
 * A cast "(void) __f(x);" or a condition "if (x) __f(y);" does not.
 */
static int ends_declarator(const char *d, size_t i)
{
	size_t k = i, lim = i > 4096 ? i - 4096 : 0;
	int depth = 0;

	while (k > lim && is_blank(d[k - 1]))
		k--;
	if (k > lim && is_ident(d[k - 1])) {
		size_t e = k;

		while (k > lim && is_ident(d[k - 1]))
			k--;
		return e - k > 2 && d[k] == '_' && d[k + 1] == '_';
	}
	if (k <= lim || d[k - 1] != ')')
		return 0;
	/* back to the matching '(' */
	while (k > lim) {
		k--;
		if (d[k] == ')')
			depth++;
		else if (d[k] == '(' && !--depth)
			break;
	}
	if (depth)
		return 0;
	while (k > lim && is_blank(d[k - 1]))
		k--;
	{
		size_t e = k;

		while (k > lim && is_ident(d[k - 1]))
			k--;
		return e > k && !(d[k] >= '0' && d[k] <= '9') &&
		       !one_of(d + k, e - k, control_words);
	}
}

/*
 * The end of the balanced parenthesis opening at d[k] (the index after its
 * ')'), or 0 when it is not closed within max_lines lines or holds ';' or a brace.
 */
static size_t balanced_args(const char *d, size_t n, size_t k, size_t max_lines)
{
	size_t lines = 0;
	int depth = 0;

	for (; k < n; k++) {
		size_t s = skip_lexical(d, n, k);

		if (s != k) {
			k = s - 1;
			continue;
		}
		if (d[k] == '(')
			depth++;
		else if (d[k] == ')' && !--depth)
			return k + 1;
		else if (d[k] == ';' || d[k] == '{' || d[k] == '}' || (d[k] == '\n' && ++lines > max_lines))
			return 0;
	}
	return 0;
}

/*
 * 1 if the parenthesised text d[a..b) (without the parentheses) reads as a
 * parameter list, not as an attribute's arguments: empty, "void", "...", or
 * two identifiers in a row ("size_t size") or around a '*' ("char *s").
 * `void *__kmalloc(size_t size) __malloc;` declares __kmalloc.
 */
static int looks_like_params(const char *d, size_t a, size_t b)
{
	size_t i = a, prev_end = 0;
	int prev_ident = 0, star = 0;

	while (a < b && is_blank(d[a]))
		a++;
	while (b > a && is_blank(d[b - 1]))
		b--;
	if (a == b || (b - a == 4 && !memcmp(d + a, "void", 4)))
		return 1;
	for (i = a; i < b; ) {
		if (is_blank(d[i])) {
			i++;
			continue;
		}
		if (d[i] == '.' && i + 2 < b && d[i + 1] == '.' && d[i + 2] == '.')
			return 1;
		if (is_ident_start(d[i])) {
			size_t j = i;

			while (j < b && is_ident(d[j]))
				j++;
			if (prev_ident && (star || prev_end < i))
				return 1;
			prev_ident = 1;
			prev_end = j;
			star = 0;
			i = j;
			continue;
		}
		if (d[i] == '*' && prev_ident) {
			star = 1;
			i++;
			continue;
		}
		prev_ident = star = 0;
		i++;
	}
	return 0;
}

size_t cscan_attr_macros(struct cscan_range **out, const char *d, size_t n)
{
	struct cscan_range *r = NULL;
	size_t nr = 0, alloc = 0, i = 0;
	int line_start = 1, in_directive = 0;

	while (i < n) {
		size_t j = skip_lexical(d, n, i);

		if (j != i) {
			i = j;
			continue;
		}
		if (d[i] == '\n') {
			/* a directive goes on past a backslash-newline */
			in_directive = in_directive && i && (d[i - 1] == '\\' ||
							     (d[i - 1] == '\r' && i > 1 && d[i - 2] == '\\'));
			line_start = 1;
			i++;
			continue;
		}
		if (is_blank(d[i])) {
			i++;
			continue;
		}
		if (line_start && d[i] == '#')
			in_directive = 1;
		line_start = 0;
		if (!is_ident_start(d[i])) {
			i++;
			continue;
		}
		/* an identifier */
		j = i;
		while (j < n && is_ident(d[j]))
			j++;
		if (in_directive || j - i < 3 || d[i] != '_' || d[i + 1] != '_' ||
		    (i && (is_ident(d[i - 1]) || d[i - 1] == '.' || d[i - 1] == '>')) ||
		    one_of(d + i, j - i, grammar_words)) {
			i = j;
			continue;
		}
		{
			size_t k = j, open;

			while (k < n && (d[k] == ' ' || d[k] == '\t'))
				k++;
			if (k >= n || d[k] != '(') {
				i = j;
				continue;
			}
			open = k;
			k = balanced_args(d, n, open, 8);	/* past ')' */
			if (!k || looks_like_params(d, open + 1, k - 1)) {
				i = j;
				continue;
			}
			{
				size_t p = i;

				while (p && is_blank(d[p - 1]))
					p--;
				if (p && d[p - 1] == '*') {
					i = j;	/* `void *__f(x)`: a declarator */
					continue;
				}
			}
			{
				size_t e = k;

				while (e < n && is_blank(d[e]))
					e++;
				if (e < n && (is_ident_start(d[e]) || d[e] == '*' ||
					      ((d[e] == ';' || d[e] == '{' || d[e] == ',' || d[e] == '=') &&
					       ends_declarator(d, i)))) {
					ALLOC_GROW(r, nr + 1, alloc);
					r[nr].start = (uint32_t)i;
					r[nr].end = (uint32_t)k;
					nr++;
				}
			}
			i = k;
		}
	}
	*out = r;
	return nr;
}

static const char *const c_keywords[] = {
	"if", "while", "for", "switch", "return", "sizeof", "typeof", "__typeof__", "defined",
	"__attribute__", "do", "case", "else", "alignof", "_Alignof", "_Generic", "__builtin_expect",
	"_Static_assert", "static_assert", "asm", "__asm__", "__asm", NULL,
};

/* 1 if the identifier s (len bytes) is a parameter in the list params. */
static int is_param(const char *params, size_t pn, const char *s, size_t len)
{
	size_t i = 0;

	while (i < pn) {
		size_t j;

		if (!is_ident_start(params[i])) {
			i++;
			continue;
		}
		for (j = i; j < pn && is_ident(params[j]); j++)
			;
		if (j - i == len && !memcmp(params + i, s, len))
			return 1;
		i = j;
	}
	return 0;
}

void cscan_macro_calls(const char *d, size_t n, const char *params, size_t pn,
		       void (*fn)(size_t off, size_t len, void *payload), void *payload)
{
	size_t i = 0;

	while (i < n) {
		size_t j = skip_lexical(d, n, i), k;

		if (j != i) {
			i = j;
			continue;
		}
		if (!is_ident_start(d[i]) || (i && is_ident(d[i - 1]))) {
			/* a number such as 0x1f is no identifier either */
			if (d[i] >= '0' && d[i] <= '9')
				while (i < n && is_ident(d[i]))
					i++;
			else
				i++;
			continue;
		}
		for (j = i; j < n && is_ident(d[j]); j++)
			;
		for (k = j; k < n && (d[k] == ' ' || d[k] == '\t'); k++)
			;
		{
			size_t p = i;

			while (p && (d[p - 1] == ' ' || d[p - 1] == '\t'))
				p--;
			if (p && d[p - 1] == '#') {
				i = j;	/* #x, a ## b: stringified or pasted, no call */
				continue;
			}
		}
		if (k < n && d[k] == '(' && !one_of(d + i, j - i, c_keywords) &&
		    !(i && d[i - 1] == '.') && !(i > 1 && d[i - 1] == '>' && d[i - 2] == '-') &&
		    !(i && d[i - 1] == '#') &&
		    !(params && is_param(params, pn, d + i, j - i)))
			fn(i, j - i, payload);
		i = j;
	}
}

/* Where a statement macro may start: after this char (or word) a statement begins. */
static int ends_statement(const char *d, size_t prev, size_t prev_word, size_t prev_word_len)
{
	if (prev_word_len)
		return (prev_word_len == 4 && !memcmp(d + prev_word, "else", 4)) ||
		       (prev_word_len == 2 && !memcmp(d + prev_word, "do", 2));
	return d[prev] == ';' || d[prev] == '{' || d[prev] == '}' || d[prev] == ')' ||
	       d[prev] == ':';
}


/* 1 if what follows d[k] (blanks and comments skipped) starts a statement body. */
static int starts_body(const char *d, size_t n, size_t k)
{
	for (;;) {
		size_t s;

		while (k < n && is_blank(d[k]))
			k++;
		s = k < n ? skip_lexical(d, n, k) : k;
		if (s == k || d[k] == '"' || d[k] == '\'')
			break;
		k = s;
	}
	if (k >= n)
		return 0;
	if (d[k] == '{')
		return 1;
	if (!is_ident_start(d[k]))
		return 0;
	return !(n - k >= 4 && !memcmp(d + k, "else", 4) && (n - k == 4 || !is_ident(d[k + 4])));
}

size_t cscan_stmt_macros(struct cscan_range **out, const char *d, size_t n)
{
	struct cscan_range *r = NULL;
	size_t nr = 0, alloc = 0, i = 0, prev = 0, prev_word = 0, prev_word_len = 0;
	int line_start = 1, col0 = 1, in_directive = 0, depth = 0, seen = 0, after_do = 0;
	uint64_t do_blocks = 0;	/* bit d: the block at depth d + 1 is a do's body */

	while (i < n) {
		size_t j = skip_lexical(d, n, i);

		if (j != i) {
			/* a comment keeps a line's start; a string is a token */
			if (d[i] == '"' || d[i] == '\'') {
				line_start = col0 = 0;
				prev = j - 1;
				prev_word_len = 0;
				seen = 1;
			}
			i = j;
			continue;
		}
		if (d[i] == '\n') {
			in_directive = in_directive && i && (d[i - 1] == '\\' ||
							     (d[i - 1] == '\r' && i > 1 && d[i - 2] == '\\'));
			line_start = col0 = 1;
			i++;
			continue;
		}
		if (is_blank(d[i])) {
			col0 = 0;
			i++;
			continue;
		}
		if (line_start && d[i] == '#')
			in_directive = 1;
		if (in_directive) {
			line_start = col0 = 0;
			i++;
			continue;
		}
		if (!is_ident_start(d[i]))
			after_do = 0;
		if (d[i] == '{') {
			int is_do = prev_word_len == 2 && !memcmp(d + prev_word, "do", 2);

			depth = line_start && col0 ? 1 : depth + 1;
			if (depth == 1)
				do_blocks = 0;
			if (depth <= 64)
				do_blocks = is_do ? do_blocks | (1ULL << (depth - 1))
						  : do_blocks & ~(1ULL << (depth - 1));
		} else if (d[i] == '}') {
			after_do = depth > 0 && depth <= 64 && (do_blocks >> (depth - 1) & 1) &&
				   !(line_start && col0);
			depth = line_start && col0 ? 0 : (depth ? depth - 1 : 0);
		}
		if (!is_ident_start(d[i])) {
			line_start = col0 = 0;
			prev = i++;
			prev_word_len = 0;
			seen = 1;
			continue;
		}
		for (j = i; j < n && is_ident(d[j]); j++)
			;
		if (after_do && j - i >= 5 && !one_of(d + i, j - i, c_keywords) &&
		    !one_of(d + i, j - i, grammar_words)) {
			/* do { ... } while_each_thread(g, t); */
			size_t k = j, e;

			while (k < n && (d[k] == ' ' || d[k] == '\t'))
				k++;
			if (k < n && d[k] == '(' && (e = balanced_args(d, n, k, 16))) {
				while (e < n && is_blank(d[e]))
					e++;
				if (e < n && d[e] == ';') {
					ALLOC_GROW(r, nr + 1, alloc);
					r[nr].start = (uint32_t)i;
					r[nr].end = (uint32_t)j;
					nr++;
				}
			}
		}
		after_do = 0;
		if (line_start && !col0 && depth > 0 && seen && j - i >= 5 &&
		    ends_statement(d, prev, prev_word, prev_word_len) &&
		    !one_of(d + i, j - i, c_keywords) && !one_of(d + i, j - i, grammar_words)) {
			size_t k = j, e;

			while (k < n && (d[k] == ' ' || d[k] == '\t'))
				k++;
			if (k < n && d[k] == '(' && (e = balanced_args(d, n, k, 16)) && starts_body(d, n, e)) {
				ALLOC_GROW(r, nr + 1, alloc);
				r[nr].start = (uint32_t)i;
				r[nr].end = (uint32_t)j;
				nr++;
				/* the arguments are an expression: go on after them */
				line_start = col0 = 0;
				prev = e - 1;
				prev_word_len = 0;
				i = e;
				continue;
			}
		}
		line_start = col0 = 0;
		prev_word = i;
		prev_word_len = j - i;
		prev = j - 1;
		seen = 1;
		i = j;
	}
	*out = r;
	return nr;
}

/* ---- cscan_hidden(): what the parse of a C file should not see ---- */

/* One branch of a conditional group: its braces, and whether it starts with else. */
struct cbranch {
	int delta;		/* '{' less '}' (a nested group: its first branch's) */
	int first;		/* 0 no token yet, 1 the first was else, 2 another */
	size_t start;		/* its first byte, after its directive */
};

/* An #if group open at the scan's point. */
struct cgroup {
	int in_body;		/* opened inside a function body */
	struct cscan_range *dirs;	/* its directive lines (#if, #elif, #else, #endif) */
	size_t dirs_nr, dirs_alloc;
	struct cbranch *br;
	size_t br_nr, br_alloc;
};

struct hide {
	struct cscan_range *r;
	size_t nr, alloc;
	struct cgroup *g;	/* the open groups, innermost last */
	size_t g_nr, g_alloc;
};

static void hide_add(struct hide *h, size_t start, size_t end)
{
	if (end <= start)
		return;
	ALLOC_GROW(h->r, h->nr + 1, h->alloc);
	h->r[h->nr].start = (uint32_t)start;
	h->r[h->nr].end = (uint32_t)end;
	h->nr++;
}

static void group_branch(struct cgroup *g, size_t start)
{
	ALLOC_GROW(g->br, g->br_nr + 1, g->br_alloc);
	g->br[g->br_nr++] = (struct cbranch){ 0, 0, start };
}

static void group_dir(struct cgroup *g, size_t start, size_t end)
{
	ALLOC_GROW(g->dirs, g->dirs_nr + 1, g->dirs_alloc);
	g->dirs[g->dirs_nr].start = (uint32_t)start;
	g->dirs[g->dirs_nr].end = (uint32_t)end;
	g->dirs_nr++;
}

/*
 * The group closes at its #endif (line [a, b)): inside a function body, when
 * its branches do not balance their braces, or one starts with else, its
 * directive lines are hidden (the code reads as if each #if were true) and,
 * unbalanced, the branches after the first too (#ifdef A `for (...) {`
 * #else `for (...) {` #endif: one loop header).  The first branch's braces
 * count in the enclosing group's branch.
 */
static void group_close(struct hide *h, size_t a, size_t b)
{
	struct cgroup *g = &h->g[--h->g_nr];
	int unbalanced = 0, after_else = 0;

	group_dir(g, a, b);
	for (size_t i = 0; i < g->br_nr; i++) {
		unbalanced |= g->br[i].delta != 0;
		after_else |= g->br[i].first == 1;
	}
	if (g->in_body && (unbalanced || after_else)) {
		for (size_t i = 0; i < g->dirs_nr; i++)
			hide_add(h, g->dirs[i].start, g->dirs[i].end);
		for (size_t i = 1; unbalanced && i < g->br_nr; i++)
			hide_add(h, g->br[i].start, g->dirs[i + 1].start);
	}
	if (h->g_nr && g->br_nr)
		h->g[h->g_nr - 1].br[h->g[h->g_nr - 1].br_nr - 1].delta += g->br[0].delta;
	free(g->dirs);
	free(g->br);
}

/* The end of the directive line starting at i (its continuation lines
 * included), at its last '\n' or n. */
static size_t directive_end(const char *d, size_t n, size_t i)
{
	while (i < n) {
		size_t s = skip_lexical(d, n, i);

		if (s != i) {
			i = s;
			continue;
		}
		if (d[i] == '\n' && !(i && (d[i - 1] == '\\' || (d[i - 1] == '\r' && i > 1 && d[i - 2] == '\\'))))
			return i;
		i++;
	}
	return n;
}

/*
 * A directive line [a, b): opens, continues or closes a group; a #define
 * continued on further lines has its block comments hidden (tree-sitter's
 * macro body ends at one: net/core/pktgen.c's `#define PKT_FLAGS`).
 */
static void directive(struct hide *h, const char *d, size_t a, size_t b, int in_body)
{
	size_t i = a + 1, w;

	while (i < b && (d[i] == ' ' || d[i] == '\t'))
		i++;
	for (w = i; w < b && is_ident(d[w]); w++)
		;
	if ((w - i == 2 && !memcmp(d + i, "if", 2)) || (w - i == 5 && !memcmp(d + i, "ifdef", 5)) ||
	    (w - i == 6 && !memcmp(d + i, "ifndef", 6))) {
		struct cgroup *g;

		ALLOC_GROW(h->g, h->g_nr + 1, h->g_alloc);
		g = &h->g[h->g_nr++];
		memset(g, 0, sizeof(*g));
		g->in_body = in_body;
		group_dir(g, a, b);
		group_branch(g, b);
	} else if (h->g_nr && w - i >= 4 && (!memcmp(d + i, "elif", 4) || (w - i == 4 && !memcmp(d + i, "else", 4)))) {
		group_dir(&h->g[h->g_nr - 1], a, b);
		group_branch(&h->g[h->g_nr - 1], b);
	} else if (h->g_nr && w - i == 5 && !memcmp(d + i, "endif", 5)) {
		group_close(h, a, b);
	} else if (w - i == 6 && !memcmp(d + i, "define", 6) && memchr(d + a, '\n', b - a)) {
		for (i = w; i < b; ) {
			size_t s = skip_lexical(d, b, i);
			if (s != i && d[i] == '/' && d[i + 1] == '*')
				hide_add(h, i, s);
			i = s != i ? s : i + 1;
		}
	}
}

/*
 * 1 if the line at k is a function's declarator: `name(args)` (over lines),
 * then blanks and a '{' (a function's body) or a ';' (its prototype).
 */
static int declarator_line(const char *d, size_t n, size_t k)
{
	size_t e;

	while (k < n && is_ident(d[k]))
		k++;
	while (k < n && (d[k] == ' ' || d[k] == '\t'))
		k++;
	if (k >= n || d[k] != '(' || !(e = balanced_args(d, n, k, 16)))
		return 0;
	while (e < n && (d[e] == ' ' || d[e] == '\t' || d[e] == '\r' || d[e] == '\n'))
		e++;
	return e < n && (d[e] == '{' || d[e] == ';');
}

/*
 * 1 if the line at i (column 0, outside braces) is a macro invocation alone,
 * `BTF_ID_FLAGS(func, f, KF_RELEASE)` or `HUF_DGEN(name)`, that the grammar
 * would read as a function's declarator: an identifier, its arguments on the
 * line and nothing after them, after a ';', '}' or ')' (or nothing), with a
 * blank, directive or column-0 identifier line (or nothing) next, not '{' or
 * an indented line (a function's header, K&R parameters).  *end: the line's end.
 */
static int macro_line(const char *d, size_t n, size_t i, int prev, size_t *end)
{
	size_t j = i, k, e;

	if (prev && prev != ';' && prev != '}' && prev != ')')
		return 0;
	while (j < n && is_ident(d[j]))
		j++;
	if (one_of(d + i, j - i, c_keywords) || one_of(d + i, j - i, grammar_words))
		return 0;
	for (k = j; k < n && (d[k] == ' ' || d[k] == '\t'); k++)
		;
	if (k >= n || d[k] != '(' || !(e = balanced_args(d, n, k, 0)))
		return 0;
	for (;;) {
		size_t s;
		while (e < n && (d[e] == ' ' || d[e] == '\t' || d[e] == '\r'))
			e++;
		if (e + 1 >= n || d[e] != '/' || (d[e + 1] != '*' && d[e + 1] != '/'))
			break;
		s = skip_lexical(d, n, e);
		if (memchr(d + e, '\n', s - e) && d[e + 1] == '*')
			return 0;	/* a comment over lines */
		e = s;
	}
	if (e < n && d[e] != '\n')
		return 0;
	*end = e;
	k = e < n ? e + 1 : n;
	if (k < n && is_ident_start(d[k]) && declarator_line(d, n, k))
		return 0;	/* `YAML_DECLARE(int)` over `f(args)` and '{' or ';': the function's type */
	return k >= n || d[k] == '\n' || d[k] == '\r' || d[k] == '#' || is_ident_start(d[k]);
}

static int cmp_range(const void *x, const void *y)
{
	const struct cscan_range *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

size_t cscan_hidden(struct cscan_range **out, const char *d, size_t n)
{
	struct hide h = { NULL, 0, 0, NULL, 0, 0 };
	size_t i = 0;
	int line_start = 1, col0 = 1, depth = 0, body = 0, prev = 0;

	while (i < n) {
		size_t j = skip_lexical(d, n, i), e;

		if (j != i) {
			if (d[i] == '"' || d[i] == '\'') {
				line_start = col0 = 0;
				prev = d[i];
			}
			i = j;
			continue;
		}
		if (d[i] == '\n' || is_blank(d[i])) {
			if (d[i] == '\n')
				line_start = col0 = 1;
			else
				col0 = 0;
			i++;
			continue;
		}
		if (line_start && d[i] == '#') {
			size_t a = i;
			while (a && d[a - 1] != '\n')
				a--;
			e = directive_end(d, n, i);
			directive(&h, d, a, e, depth > 0 && body);
			i = e;
			continue;
		}
		if (line_start && col0 && depth == 0 && is_ident_start(d[i]) && macro_line(d, n, i, prev, &e)) {
			hide_add(&h, i, e);
			i = e;
			continue;
		}
		if (h.g_nr) {
			struct cbranch *b = &h.g[h.g_nr - 1].br[h.g[h.g_nr - 1].br_nr - 1];
			if (!b->first)
				b->first = d[i] == 'e' && n - i >= 4 && !memcmp(d + i, "else", 4) &&
					   (n - i == 4 || !is_ident(d[i + 4])) ? 1 : 2;
			b->delta += (d[i] == '{') - (d[i] == '}');
		}
		if (d[i] == '{') {
			body = depth == 0 ? line_start && col0 : body;
			depth = line_start && col0 ? 1 : depth + 1;
		} else if (d[i] == '}') {
			depth = line_start && col0 ? 0 : (depth ? depth - 1 : 0);
		}
		line_start = col0 = 0;
		if (is_ident_start(d[i])) {
			while (i < n && is_ident(d[i]))
				i++;
			prev = 'a';
			continue;
		}
		prev = d[i++];
	}
	while (h.g_nr) {	/* an #if never closed: as if closed at the end */
		struct cgroup *g = &h.g[--h.g_nr];
		free(g->dirs);
		free(g->br);
	}
	free(h.g);
	if (h.nr > 1)
		qsort(h.r, h.nr, sizeof(*h.r), cmp_range);
	*out = h.r;
	return h.nr;
}
