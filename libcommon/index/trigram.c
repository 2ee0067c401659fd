/*
 * trigram.c: trigram queries and literals from a search pattern (see trigram.h).
 *
 * The pattern is parsed into a small syntax tree (characters, classes, concatenation,
 * alternation, repetition; assertions are empty strings), then two passes run over it:
 *
 *   - the trigram pass (Russ Cox, "Regular Expression Matching with a Trigram
 *     Index"): for each node, whether it can match the empty string, the exact set
 *     of strings it matches when that set is small, sets of prefixes and suffixes
 *     one of which every match starts or ends with, and a query (an AND/OR tree of
 *     trigrams) every match satisfies.  Sets that grow too large are turned into
 *     trigrams and trimmed to two characters, which keeps every set small without
 *     losing the trigrams that span a concatenation;
 *   - the literal pass: the string the whole pattern matches, if it is one, and
 *     the longest string every match contains, for a prefilter.
 *
 * The index's trigram table keeps case (tokenize 'trigram case_sensitive 1'): a
 * case-sensitive pattern's trigrams are as written.  Under case-insensitive
 * matching the trigram pass lower-cases ASCII letters, and each trigram of the
 * final query becomes the OR of its case variants (q_icase); PCRE2 folds
 * non-ASCII characters by Unicode rules, so there a non-ASCII character counts
 * as "any character".  NUL cannot travel in an
 * FTS5 query string and also counts as "any character".
 *
 * Shaped by what people type: identifiers, `foo\(`, `[A-Z]+_SUSPEND`, `(foo|bar)_baz`,
 * `\bstatic\s+int\b`.  Anything unusual (recursion, conditionals, verbs, (?x))
 * makes the analysis give up, which is always correct: every file is a candidate.
 */
#include "core/common.h"
#include "index/trigram.h"

#define MAX_CLASS 16		/* a class of more characters is "any character" */
#define MAX_SET 16		/* strings in an exact, prefix or suffix set */
#define MAX_CROSS 64		/* pairs tried for the trigrams across a concatenation */
#define MAX_TRI_PER_STRING 24	/* trigrams kept from one long string */
#define MAX_DEPTH 250		/* nesting of groups */
#define MAX_COPIES 3		/* x{n} is analysed as at most this many x */
#define MAX_QUERY_TRIGRAMS 64	/* trigrams in the final query */

/* ---- the syntax tree ---- */

enum ntype {
	N_EMPTY,	/* matches the empty string (also assertions) */
	N_CHARS,	/* one character out of a small set */
	N_ANY,		/* one character, any */
	N_CAT,		/* kids one after the other */
	N_ALT,		/* one of the kids */
	N_REP,		/* kids[0] repeated min..max times */
};

struct node {
	enum ntype type;		/* what it is */
	uint32_t *cps;			/* N_CHARS: the code points */
	size_t cps_nr, cps_alloc;
	struct node **kids;		/* N_CAT, N_ALT, N_REP (one kid) */
	size_t kids_nr, kids_alloc;
	int min, max;			/* N_REP: bounds; max < 0 means no limit */
	int quoted;			/* N_CAT from \Q...\E: a quantifier takes its last character */
	int invisible;			/* \E, (?#...): a quantifier after it is not understood */
};

static struct node *node_new(enum ntype type)
{
	struct node *nd = xcalloc(1, sizeof(*nd));

	nd->type = type;
	return nd;
}

static void node_free(struct node *nd)
{
	size_t i;

	if (!nd)
		return;
	for (i = 0; i < nd->kids_nr; i++)
		node_free(nd->kids[i]);
	free(nd->kids);
	free(nd->cps);
	free(nd);
}

static void node_add(struct node *nd, struct node *kid)
{
	ALLOC_GROW(nd->kids, nd->kids_nr + 1, nd->kids_alloc);
	nd->kids[nd->kids_nr++] = kid;
}

static void chars_add(struct node *nd, uint32_t cp)
{
	size_t i;

	for (i = 0; i < nd->cps_nr; i++)
		if (nd->cps[i] == cp)
			return;
	ALLOC_GROW(nd->cps, nd->cps_nr + 1, nd->cps_alloc);
	nd->cps[nd->cps_nr++] = cp;
}

static struct node *node_char(uint32_t cp)
{
	struct node *nd = node_new(N_CHARS);

	chars_add(nd, cp);
	return nd;
}

static struct node *node_rep(struct node *kid, int min, int max)
{
	struct node *nd = node_new(N_REP);

	node_add(nd, kid);
	nd->min = min;
	nd->max = max;
	return nd;
}

/* ---- the parser ---- */

struct parser {
	const unsigned char *s;	/* the pattern */
	size_t n, i;		/* its length, the position read */
	int caseless;		/* -i or (?i) anywhere */
	int asserts;		/* an anchor, an assertion or \K somewhere */
	int looks_ahead;	/* a lookahead, \z, \Z or \G somewhere */
	int failed;		/* syntax not understood */
	int depth;		/* group nesting */
};

static struct node *parse_alt(struct parser *p);

static struct node *give_up(struct parser *p)
{
	p->failed = 1;
	return NULL;
}

static uint32_t utf8_decode(const unsigned char *s, int l)
{
	switch (l) {
	case 1:
		return s[0];
	case 2:
		return ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
	case 3:
		return ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
	default:
		return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
		       ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
	}
}

/* The character at p->i (consumed), or -1 (and failed) if it is not UTF-8. */
static long next_cp(struct parser *p)
{
	int l;

	if (p->i >= p->n)
		return -1;
	l = utf8_seq(p->s + p->i, p->n - p->i);
	if (!l) {
		p->failed = 1;
		return -1;
	}
	p->i += (size_t)l;
	return (long)utf8_decode(p->s + p->i - l, l);
}

static int at(const struct parser *p, size_t off)
{
	return p->i + off < p->n ? p->s[p->i + off] : -1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Skip to just past the byte `close`; 0 if there is none. */
static int skip_past(struct parser *p, int close)
{
	while (p->i < p->n && p->s[p->i] != close)
		p->i++;
	if (p->i >= p->n)
		return 0;
	p->i++;
	return 1;
}

/*
 * The numeric escapes shared by classes and the rest: \x.., \x{..}, \o{..}, \0..,
 * \cX.  c is the letter after the backslash, already consumed.  Returns the code
 * point, or -1 (failed) on a form not understood.
 */
static long numeric_escape(struct parser *p, int c)
{
	long v = 0;
	int d, k;

	switch (c) {
	case 'x':
		if (at(p, 0) == '{') {
			p->i++;
			for (k = 0; (d = hexval(at(p, 0))) >= 0 && k < 8; k++, p->i++)
				v = v * 16 + d;
			if (at(p, 0) != '}' || !k)
				return p->failed = 1, -1;
			p->i++;
			return v;
		}
		for (k = 0; k < 2 && (d = hexval(at(p, 0))) >= 0; k++, p->i++)
			v = v * 16 + d;
		return v;
	case 'o':
		if (at(p, 0) != '{')
			return p->failed = 1, -1;
		p->i++;
		for (k = 0; at(p, 0) >= '0' && at(p, 0) <= '7' && k < 11; k++, p->i++)
			v = v * 8 + (at(p, 0) - '0');
		if (at(p, 0) != '}' || !k)
			return p->failed = 1, -1;
		p->i++;
		return v;
	case '0':
		for (k = 0; k < 2 && at(p, 0) >= '0' && at(p, 0) <= '7'; k++, p->i++)
			v = v * 8 + (at(p, 0) - '0');
		return v;
	case 'c':
		d = at(p, 0);
		if (d < 32 || d > 126)
			return p->failed = 1, -1;
		p->i++;
		if (d >= 'a' && d <= 'z')
			d -= 32;
		return d ^ 0x40;
	case 'a': return 7;
	case 'e': return 27;
	case 'f': return 12;
	case 'n': return 10;
	case 'r': return 13;
	case 't': return 9;
	}
	return p->failed = 1, -1;
}

/* A backreference or something that matches some string we cannot know. */
static struct node *any_string(void)
{
	return node_rep(node_new(N_ANY), 0, -1);
}

/* After a backslash outside a class. */
static struct node *parse_escape(struct parser *p)
{
	int c;
	long cp;

	p->i++;
	if (p->i >= p->n)
		return give_up(p);
	c = p->s[p->i++];
	switch (c) {
	case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
	case 'h': case 'H': case 'v': case 'V':
		return node_new(N_ANY);
	case 'N':
		if (at(p, 0) == '{')
			return give_up(p);
		return node_new(N_ANY);
	case 'R':
		return node_rep(node_new(N_ANY), 1, 2);
	case 'X':
		return node_rep(node_new(N_ANY), 1, -1);
	case 'p': case 'P':
		if (at(p, 0) == '{') {
			if (!skip_past(p, '}'))
				return give_up(p);
		} else if (p->i < p->n) {
			p->i++;
		} else {
			return give_up(p);
		}
		return node_new(N_ANY);
	case 'b': case 'B': case 'A': case 'K':
		p->asserts = 1;
		return node_new(N_EMPTY);
	case 'Z': case 'z': case 'G':
		p->asserts = 1;
		p->looks_ahead = 1;
		return node_new(N_EMPTY);
	case 'E': {
		struct node *nd = node_new(N_EMPTY);

		nd->invisible = 1;
		return nd;
	}
	case 'Q': {
		struct node *cat = node_new(N_CAT);

		cat->quoted = 1;

		while (p->i < p->n) {
			if (p->s[p->i] == '\\' && at(p, 1) == 'E') {
				p->i += 2;
				break;
			}
			cp = next_cp(p);
			if (cp < 0) {
				node_free(cat);
				return give_up(p);
			}
			node_add(cat, node_char((uint32_t)cp));
		}
		return cat;
	}
	case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
		/* a backreference (or an octal escape): some string */
		while (at(p, 0) >= '0' && at(p, 0) <= '9')
			p->i++;
		return any_string();
	case 'g':
		if (at(p, 0) == '{') {
			if (!skip_past(p, '}'))
				return give_up(p);
			return any_string();
		}
		if (at(p, 0) == '+' || at(p, 0) == '-' || (at(p, 0) >= '0' && at(p, 0) <= '9')) {
			p->i++;
			while (at(p, 0) >= '0' && at(p, 0) <= '9')
				p->i++;
			return any_string();
		}
		return give_up(p);	/* \g<name>: a subroutine call */
	case 'k':
		if (at(p, 0) == '<' || at(p, 0) == '{' || at(p, 0) == '\'') {
			int close = at(p, 0) == '<' ? '>' : at(p, 0) == '{' ? '}' : '\'';
			p->i++;
			if (!skip_past(p, close))
				return give_up(p);
			return any_string();
		}
		return give_up(p);
	case 'x': case 'o': case '0': case 'c': case 'a': case 'e': case 'f': case 'n': case 'r': case 't':
		cp = numeric_escape(p, c);
		if (cp < 0 || cp > 0x10ffff)
			return give_up(p);
		return node_char((uint32_t)cp);
	}
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return give_up(p);	/* \C, \L, \u...: not understood */
	/* an escaped punctuation or non-ASCII character stands for itself */
	p->i--;
	cp = next_cp(p);
	if (cp < 0)
		return give_up(p);
	return node_char((uint32_t)cp);
}

/*
 * One member of a class: sets *cp and returns 1 for a character, returns 0 for a
 * set of many (\d, \p{..}), -1 on failure.
 */
static int class_member(struct parser *p, long *cp)
{
	int c;

	if (p->i >= p->n)
		return p->failed = 1, -1;
	if (p->s[p->i] != '\\') {
		*cp = next_cp(p);
		return *cp < 0 ? -1 : 1;
	}
	p->i++;
	if (p->i >= p->n)
		return p->failed = 1, -1;
	c = p->s[p->i++];
	switch (c) {
	case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
	case 'h': case 'H': case 'v': case 'V':
		return 0;
	case 'p': case 'P':
		if (at(p, 0) == '{') {
			if (!skip_past(p, '}'))
				return p->failed = 1, -1;
		} else if (p->i < p->n) {
			p->i++;
		}
		return 0;
	case 'b':
		*cp = 8;
		return 1;
	case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		/* octal in a class */
		*cp = c - '0';
		while (at(p, 0) >= '0' && at(p, 0) <= '7' && *cp < 64)
			*cp = *cp * 8 + (p->s[p->i++] - '0');
		return 1;
	case 'x': case 'o': case '0': case 'c': case 'a': case 'e': case 'f': case 'n': case 'r': case 't':
		*cp = numeric_escape(p, c);
		return *cp < 0 || *cp > 0x10ffff ? (p->failed = 1, -1) : 1;
	}
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return p->failed = 1, -1;	/* \Q, \E, \N... in a class: not understood */
	p->i--;
	*cp = next_cp(p);
	return *cp < 0 ? -1 : 1;
}

/* At '['. */
static struct node *parse_class(struct parser *p)
{
	struct node *nd = node_new(N_CHARS);
	int neg = 0, big = 0, first = 1, r;
	long lo, hi;

	p->i++;
	if (at(p, 0) == '^') {
		neg = 1;
		p->i++;
	}
	for (;;) {
		if (p->i >= p->n)
			goto fail;
		if (p->s[p->i] == ']' && !first) {
			p->i++;
			break;
		}
		first = 0;
		if (p->s[p->i] == '[' && (at(p, 1) == ':' || at(p, 1) == '.' || at(p, 1) == '=')) {
			/* [:alpha:] */
			const unsigned char *end = memmem(p->s + p->i + 2, p->n - p->i - 2, ":]", 2);
			if (at(p, 1) != ':' || !end)
				goto fail;
			p->i = (size_t)(end - p->s) + 2;
			big = 1;
			continue;
		}
		r = class_member(p, &lo);
		if (r < 0)
			goto fail;
		if (r == 0) {
			big = 1;
			continue;
		}
		if (at(p, 0) == '-' && at(p, 1) != ']' && at(p, 1) >= 0) {
			p->i++;
			if (p->s[p->i] == '[')
				goto fail;
			r = class_member(p, &hi);
			if (r <= 0 || hi < lo)
				goto fail;
			if (hi - lo >= MAX_CLASS)
				big = 1;
			else
				for (; lo <= hi; lo++)
					chars_add(nd, (uint32_t)lo);
		} else {
			chars_add(nd, (uint32_t)lo);
		}
		if (nd->cps_nr > MAX_CLASS)
			big = 1;
	}
	if (neg || big || !nd->cps_nr) {
		node_free(nd);
		return node_new(N_ANY);
	}
	return nd;
fail:
	node_free(nd);
	return give_up(p);
}

/* After "(?": option letters up to ')' or ':'.  Returns 1 for "(?i)", 2 for "(?i:". */
static int parse_options(struct parser *p)
{
	int negated = 0, c;

	while (p->i < p->n) {
		c = p->s[p->i++];
		if (c == ')')
			return 1;
		if (c == ':')
			return 2;
		if (c == '-')
			negated = 1;
		else if (c == '^')
			negated = 0;
		else if (c == 'x')
			return p->failed = 1, 0;	/* extended syntax: not understood */
		else if (c == 'i' && !negated)
			p->caseless = 1;
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return p->failed = 1, 0;
	}
	return p->failed = 1, 0;
}

/* The group's body and its ')'. */
static struct node *group_body(struct parser *p)
{
	struct node *nd = parse_alt(p);

	if (p->failed || at(p, 0) != ')') {
		node_free(nd);
		return give_up(p);
	}
	p->i++;
	return nd;
}

/* A lookaround: parsed, then dropped (an assertion matches the empty string). */
static struct node *lookaround(struct parser *p, int ahead)
{
	struct node *nd = group_body(p);

	if (!nd)
		return NULL;
	node_free(nd);
	p->asserts = 1;
	if (ahead)
		p->looks_ahead = 1;
	return node_new(N_EMPTY);
}

/* At '('. */
static struct node *parse_group(struct parser *p)
{
	int c, r;

	p->i++;
	if (at(p, 0) == '*')
		return give_up(p);	/* (*VERB), (*pla:...) */
	if (at(p, 0) != '?')
		return group_body(p);
	p->i++;
	c = at(p, 0);
	switch (c) {
	case ':': case '|': case '>':
		p->i++;
		return group_body(p);
	case '=': case '!': case '*':
		p->i++;
		return lookaround(p, 1);
	case '<':
		if (at(p, 1) == '=' || at(p, 1) == '!' || at(p, 1) == '*') {
			p->i += 2;
			return lookaround(p, 0);
		}
		p->i++;
		if (!skip_past(p, '>'))
			return give_up(p);
		return group_body(p);
	case '\'':
		p->i++;
		if (!skip_past(p, '\''))
			return give_up(p);
		return group_body(p);
	case 'P':
		if (at(p, 1) == '<') {
			p->i += 2;
			if (!skip_past(p, '>'))
				return give_up(p);
			return group_body(p);
		}
		if (at(p, 1) == '=') {
			if (!skip_past(p, ')'))
				return give_up(p);
			return any_string();
		}
		return give_up(p);	/* (?P>name): recursion */
	case '#': {
		struct node *nd;

		if (!skip_past(p, ')'))
			return give_up(p);
		nd = node_new(N_EMPTY);
		nd->invisible = 1;
		return nd;
	}
	}
	if (c < 0 || c == '(' || c == 'R' || c == '&' || c == 'C' || c == '+' ||
	    (c >= '0' && c <= '9') || (c == '-' && at(p, 1) >= '0' && at(p, 1) <= '9'))
		return give_up(p);	/* recursion, conditionals, callouts */
	r = parse_options(p);
	if (r == 1) {
		struct node *nd = node_new(N_EMPTY);

		nd->invisible = 1;
		return nd;
	}
	if (r == 2)
		return group_body(p);
	return give_up(p);
}

/* A quantifier at p->i, if there is one: sets *min and *max and consumes it. */
static int parse_quantifier(struct parser *p, int *min, int *max)
{
	size_t save = p->i;
	long a = 0, b;
	int digits = 0;

	switch (at(p, 0)) {
	case '*': *min = 0; *max = -1; p->i++; break;
	case '+': *min = 1; *max = -1; p->i++; break;
	case '?': *min = 0; *max = 1; p->i++; break;
	case '{':
		p->i++;
		while (at(p, 0) >= '0' && at(p, 0) <= '9') {
			a = a * 10 + (p->s[p->i++] - '0');
			digits++;
			if (a > 100000)
				a = 100000;
		}
		if (!digits) {
			/* "{,n}" is a quantifier in newer PCRE2 and a literal in older */
			if (at(p, 0) == ',') {
				p->failed = 1;
				return 0;
			}
			p->i = save;
			return 0;
		}
		b = a;
		if (at(p, 0) == ',') {
			p->i++;
			b = -1;
			if (at(p, 0) >= '0' && at(p, 0) <= '9') {
				b = 0;
				while (at(p, 0) >= '0' && at(p, 0) <= '9') {
					b = b * 10 + (p->s[p->i++] - '0');
					if (b > 100000)
						b = 100000;
				}
			}
		}
		if (at(p, 0) != '}') {
			p->i = save;
			return 0;
		}
		p->i++;
		*min = (int)a;
		*max = (int)b;
		break;
	default:
		return 0;
	}
	if (at(p, 0) == '?' || at(p, 0) == '+')
		p->i++;		/* lazy, possessive: the same strings */
	return 1;
}

static struct node *parse_atom(struct parser *p)
{
	long cp;
	int min, max;

	switch (p->s[p->i]) {
	case '(':
		return parse_group(p);
	case '[':
		return parse_class(p);
	case '.':
		p->i++;
		return node_new(N_ANY);
	case '^': case '$':
		p->i++;
		p->asserts = 1;
		return node_new(N_EMPTY);
	case '\\':
		return parse_escape(p);
	case '*': case '+': case '?':
		return give_up(p);
	case '{':
		if (parse_quantifier(p, &min, &max) || p->failed)
			return give_up(p);
		p->i++;
		return node_char('{');
	}
	cp = next_cp(p);
	if (cp < 0)
		return give_up(p);
	return node_char((uint32_t)cp);
}

static struct node *parse_cat(struct parser *p)
{
	struct node *cat = node_new(N_CAT), *atom;
	int min, max;

	while (!p->failed && p->i < p->n && p->s[p->i] != '|' && p->s[p->i] != ')') {
		atom = parse_atom(p);
		if (!atom)
			break;
		if (atom->quoted) {
			/* \Q...\E: its characters, a quantifier applying to the last one */
			size_t k;

			for (k = 0; k + 1 < atom->kids_nr; k++)
				node_add(cat, atom->kids[k]);
			if (atom->kids_nr) {
				struct node *last = atom->kids[atom->kids_nr - 1];

				atom->kids_nr = 0;
				node_free(atom);
				atom = last;
			} else {
				atom->kids_nr = 0;
				atom->invisible = 1;
			}
		}
		if (atom->invisible && (at(p, 0) == '*' || at(p, 0) == '+' || at(p, 0) == '?' || at(p, 0) == '{')) {
			node_free(atom);
			give_up(p);
			break;
		}
		while (!p->failed && parse_quantifier(p, &min, &max))
			atom = node_rep(atom, min, max);
		node_add(cat, atom);
	}
	if (p->failed) {
		node_free(cat);
		return NULL;
	}
	return cat;
}

static struct node *parse_alt(struct parser *p)
{
	struct node *alt = NULL, *cat;

	if (++p->depth > MAX_DEPTH)
		return give_up(p);
	cat = parse_cat(p);
	while (!p->failed && p->i < p->n && p->s[p->i] == '|') {
		if (!alt) {
			alt = node_new(N_ALT);
			node_add(alt, cat);
		}
		p->i++;
		node_add(alt, parse_cat(p));
	}
	p->depth--;
	if (p->failed) {
		node_free(alt ? alt : cat);
		return NULL;
	}
	return alt ? alt : cat;
}

/* ---- string sets (UTF-8 strings, no NUL inside) ---- */

struct sset {
	char **v;		/* the strings, distinct */
	size_t nr, alloc;
};

static void sset_release(struct sset *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Add a copy of the first n bytes of str, unless it is there already. */
static void sset_addn(struct sset *s, const char *str, size_t n)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (strlen(s->v[i]) == n && !memcmp(s->v[i], str, n))
			return;
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	s->v[s->nr++] = xstrndup(str, n);
}

static void sset_add(struct sset *s, const char *str)
{
	sset_addn(s, str, strlen(str));
}

static void sset_union(struct sset *dst, const struct sset *src)
{
	size_t i;

	for (i = 0; i < src->nr; i++)
		sset_add(dst, src->v[i]);
}

static void sset_copy(struct sset *dst, const struct sset *src)
{
	memset(dst, 0, sizeof(*dst));
	sset_union(dst, src);
}

/* Every a + b. */
static void sset_cross(struct sset *dst, const struct sset *a, const struct sset *b)
{
	size_t i, j;
	char *t;

	memset(dst, 0, sizeof(*dst));
	for (i = 0; i < a->nr; i++)
		for (j = 0; j < b->nr; j++) {
			t = xasprintf("%s%s", a->v[i], b->v[j]);
			sset_add(dst, t);
			free(t);
		}
}

/* Characters (not bytes) in s. */
static size_t nchars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Byte offset of character k of s (or its length). */
static size_t char_offset(const char *s, size_t k)
{
	size_t i = 0;

	while (s[i] && k) {
		i++;
		while (s[i] && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		k--;
	}
	return i;
}

/* Keep the first (or last) two characters of every string. */
static void sset_trim(struct sset *s, int keep_end)
{
	struct sset t = { 0 };
	size_t i, n, off;

	for (i = 0; i < s->nr; i++) {
		n = nchars(s->v[i]);
		if (n <= 2) {
			sset_add(&t, s->v[i]);
		} else if (keep_end) {
			off = char_offset(s->v[i], n - 2);
			sset_add(&t, s->v[i] + off);
		} else {
			sset_addn(&t, s->v[i], char_offset(s->v[i], 2));
		}
	}
	sset_release(s);
	*s = t;
}

/* ---- queries: AND/OR trees of trigrams ---- */

enum qop { Q_ALL, Q_TRI, Q_AND, Q_OR };

struct q {
	enum qop op;		/* Q_ALL: every file */
	char *tri;		/* Q_TRI: three characters, or a longer phrase; Q_OR
				   of a trigram's case variants: that trigram */
	struct q **k;		/* Q_AND, Q_OR: the operands */
	size_t nr, alloc;
};

static struct q *q_new(enum qop op)
{
	struct q *q = xcalloc(1, sizeof(*q));

	q->op = op;
	return q;
}

static void q_free(struct q *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->nr; i++)
		q_free(q->k[i]);
	free(q->k);
	free(q->tri);
	free(q);
}

static struct q *q_all(void)
{
	return q_new(Q_ALL);
}

static int q_equal(const struct q *a, const struct q *b)
{
	size_t i, j;

	if (a->op != b->op || a->nr != b->nr)
		return 0;
	if (a->op == Q_TRI)
		return !strcmp(a->tri, b->tri);
	for (i = 0; i < a->nr; i++) {
		for (j = 0; j < b->nr; j++)
			if (q_equal(a->k[i], b->k[j]))
				break;
		if (j == b->nr)
			return 0;
	}
	return 1;
}

/*
 * 1 when every file satisfying a also satisfies b (a sound, incomplete test).
 * Each call spends one unit of *budget; with none left the answer is 0 ("not
 * known"), which is sound: the walk over ANDs of ORs can otherwise grow as the
 * operands' count to the power of the depth ('[Q-Z][Qghi\t]...' under -i took
 * seconds, found by make fuzz).
 */
static int q_implies(const struct q *a, const struct q *b, int depth, long *budget)
{
	size_t i;

	if (depth > 8 || --*budget < 0)
		return 0;
	if (b->op == Q_ALL || q_equal(a, b))
		return 1;
	if (a->op == Q_TRI && b->op == Q_TRI && strstr(a->tri, b->tri))
		return 1;	/* a phrase holds its substrings */
	if (b->op == Q_AND) {
		for (i = 0; i < b->nr; i++)
			if (!q_implies(a, b->k[i], depth + 1, budget))
				return 0;
		return 1;
	}
	if (a->op == Q_OR) {
		for (i = 0; i < a->nr; i++)
			if (!q_implies(a->k[i], b, depth + 1, budget))
				return 0;
		return 1;
	}
	if (a->op == Q_AND)
		for (i = 0; i < a->nr; i++)
			if (q_implies(a->k[i], b, depth + 1, budget))
				return 1;
	if (b->op == Q_OR)
		for (i = 0; i < b->nr; i++)
			if (q_implies(a, b->k[i], depth + 1, budget))
				return 1;
	return 0;
}

static void q_push(struct q *q, struct q *kid)
{
	size_t i;

	if (kid->op == q->op) {
		for (i = 0; i < kid->nr; i++)
			q_push(q, kid->k[i]);
		kid->nr = 0;
		q_free(kid);
		return;
	}
	for (i = 0; i < q->nr; i++)
		if (q_equal(q->k[i], kid)) {
			q_free(kid);
			return;
		}
	ALLOC_GROW(q->k, q->nr + 1, q->alloc);
	q->k[q->nr++] = kid;
}

/*
 * Drop redundant operands: in an AND, one implied by another; in an OR, one that
 * implies another.  Then a single operand stands for the whole.  At most
 * Q_TIDY_BUDGET steps of q_implies() per call: past them, operands are kept.
 */
#define Q_TIDY_BUDGET 2000
/* operands of one AND or OR at most: q_push() and q_tidy() are quadratic in them */
#define Q_MAX_OPERANDS 128
static struct q *q_tidy(struct q *q)
{
	size_t i, j, n;
	struct q *one;
	long budget = Q_TIDY_BUDGET;

	if (q->nr <= 64) {
		for (i = 0; i < q->nr; i++) {
			for (j = 0; j < q->nr; j++) {
				if (i == j)
					continue;
				if (q->op == Q_AND ? q_implies(q->k[j], q->k[i], 0, &budget) :
				    q_implies(q->k[i], q->k[j], 0, &budget))
					break;
			}
			if (j < q->nr) {
				q_free(q->k[i]);
				memmove(q->k + i, q->k + i + 1, (q->nr - i - 1) * sizeof(*q->k));
				q->nr--;
				i--;
			}
		}
	}
	n = q->nr;
	if (n == 0) {
		q_free(q);
		return q_all();
	}
	if (n == 1) {
		one = q->k[0];
		q->nr = 0;
		q_free(q);
		return one;
	}
	return q;
}

/* a AND b (both consumed). */
static struct q *q_and(struct q *a, struct q *b)
{
	struct q *q;

	if (a->op == Q_ALL) {
		q_free(a);
		return b;
	}
	if (b->op == Q_ALL) {
		q_free(b);
		return a;
	}
	q = q_new(Q_AND);
	q_push(q, a);
	q_push(q, b);
	/* fewer operands ask less of a file: still a sound query */
	while (q->nr > Q_MAX_OPERANDS)
		q_free(q->k[--q->nr]);
	return q_tidy(q);
}

/* a OR b (both consumed). */
static struct q *q_or(struct q *a, struct q *b)
{
	struct q *q;

	if (a->op == Q_ALL || b->op == Q_ALL) {
		q_free(a);
		q_free(b);
		return q_all();
	}
	q = q_new(Q_OR);
	q_push(q, a);
	q_push(q, b);
	if (q->nr > Q_MAX_OPERANDS) {
		/* so many alternatives rule out little: every file is a candidate */
		q_free(q);
		return q_all();
	}
	return q_tidy(q);
}

/* Emit phrases (TRIGRAM_PHRASES) for the analysis running in this thread. */
static _Thread_local int use_phrases;

/*
 * The trigrams of s, ANDed, or s as one phrase (Q_ALL when s has fewer than three
 * characters).
 */
static struct q *q_string(const char *s)
{
	size_t n = nchars(s), t, i, step_num, off, end;
	struct q *q = q_all(), *leaf;

	if (n < 3)
		return q;
	if (use_phrases) {
		q_free(q);
		leaf = q_new(Q_TRI);
		leaf->tri = xstrdup(s);
		return leaf;
	}
	t = n - 2;		/* trigrams in s */
	step_num = t > MAX_TRI_PER_STRING ? MAX_TRI_PER_STRING : t;
	for (i = 0; i < step_num; i++) {
		/* spread the trigrams kept over the whole string */
		size_t k = step_num == t ? i : i * (t - 1) / (step_num - 1);
		off = char_offset(s, k);
		end = off + char_offset(s + off, 3);
		leaf = q_new(Q_TRI);
		leaf->tri = xstrndup(s + off, end - off);
		q = q_and(q, leaf);
	}
	return q;
}

/* OR over the strings of s of their trigrams; Q_ALL if one is too short. */
static struct q *q_set(const struct sset *s)
{
	struct q *q = NULL;
	size_t i;

	if (!s->nr)
		return q_all();
	for (i = 0; i < s->nr; i++)
		if (nchars(s->v[i]) < 3)
			return q_all();
	for (i = 0; i < s->nr; i++)
		q = q ? q_or(q, q_string(s->v[i])) : q_string(s->v[i]);
	return q;
}

/*
 * Under case-insensitive matching, for the index's case-sensitive table: each
 * trigram (lower-cased by the analysis) becomes the OR of its case variants,
 * "usp" -> "usp" OR "Usp" ... OR "USP"; a phrase first becomes its trigrams.
 * PCRE2 folds by Unicode's rules, where k also matches U+212A (Kelvin sign)
 * and s U+017F (long s): those are variants too.  (q consumed.)
 */
static struct q *q_icase(struct q *q)
{
	size_t i;

	if (q->op == Q_AND || q->op == Q_OR) {
		for (i = 0; i < q->nr; i++)
			q->k[i] = q_icase(q->k[i]);
		return q;
	}
	if (q->op != Q_TRI)
		return q;
	if (nchars(q->tri) > 3) {
		int phrases = use_phrases;
		struct q *t;
		use_phrases = 0;
		t = q_string(q->tri);
		use_phrases = phrases;
		q_free(q);
		return q_icase(t);
	}
	{
		/* each character's forms, then every combination of them */
		const char *forms[3][3];
		char one[3][2], up[3][2];
		size_t nf[3], n = 0, len = strlen(q->tri), total = 1, m;
		struct q *any;

		for (i = 0; i < len && n < 3; i++, n++) {
			unsigned char c = (unsigned char)q->tri[i];
			if (c >= 0x80)
				return q;	/* not from a caseless analysis: as it is */
			one[n][0] = (char)c;
			one[n][1] = 0;
			forms[n][0] = one[n];
			nf[n] = 1;
			if (c >= 'a' && c <= 'z') {
				up[n][0] = (char)(c - 'a' + 'A');
				up[n][1] = 0;
				forms[n][nf[n]++] = up[n];
				if (c == 'k')
					forms[n][nf[n]++] = "\xe2\x84\xaa";	/* U+212A */
				else if (c == 's')
					forms[n][nf[n]++] = "\xc5\xbf";	/* U+017F */
			}
			total *= nf[n];
		}
		if (total == 1)
			return q;
		any = q_new(Q_OR);
		any->tri = xstrdup(q->tri);	/* what it is the variants of (q_one_tri) */
		for (m = 0; m < total; m++) {
			struct buf b = BUF_INIT;
			struct q *v = q_new(Q_TRI);
			size_t r = m;
			for (i = 0; i < n; i++) {
				buf_addstr(&b, forms[i][r % nf[i]]);
				r /= nf[i];
			}
			v->tri = buf_detach(&b, NULL);
			q_push(any, v);
		}
		q_free(q);
		return any;
	}
}

static size_t q_leaves(const struct q *q)
{
	size_t i, n = q->op == Q_TRI;

	for (i = 0; i < q->nr; i++)
		n += q_leaves(q->k[i]);
	return n;
}

/*
 * Keep a query within budget trigrams (each costs the index a posting list):
 * an AND keeps the operands that fit, an OR that does not fit becomes Q_ALL.
 * Both only widen the query, so it stays conservative.  Consumes q.
 */
static struct q *q_prune(struct q *q, size_t budget)
{
	size_t i, used = 0, n;

	if (q_leaves(q) <= budget)
		return q;
	if (q->op == Q_AND) {
		struct q *keep = q_all();

		for (i = 0; i < q->nr; i++) {
			n = q_leaves(q->k[i]);
			if (used + n <= budget) {
				keep = q_and(keep, q->k[i]);
				used += n;
			} else if (used < budget && q->k[i]->op == Q_AND) {
				keep = q_and(keep, q_prune(q->k[i], budget - used));
				used = q_leaves(keep);
			} else {
				q_free(q->k[i]);
			}
			q->k[i] = NULL;
		}
		q->nr = 0;
		q_free(q);
		return keep;
	}
	q_free(q);
	return q_all();
}

/*
 * Leave out of q's ANDs the operands that cost more to look up than they are
 * likely to save (see trigram_query_lean): the LEAN_KEEP rarest operands of an
 * AND that do not overlap each other in a word (q_linked), and any other rarer
 * than LEAN_CHEAP, are kept.  *cost gets q's cost, the index entries read to
 * evaluate it.  Returns q.
 */
#define LEAN_KEEP 3
#define LEAN_CHEAP 10000

struct lean_kid {
	struct q *q;
	double cost;
};

static int cmp_lean_kid(const void *a, const void *b)
{
	const struct lean_kid *x = a, *y = b;

	return x->cost < y->cost ? -1 : x->cost > y->cost;	/* stable enough: ties keep pattern order below */
}

/* The trigram of a leaf, or of an OR of its case variants (q_icase); else NULL. */
static const char *q_one_tri(const struct q *q)
{
	if (q->op == Q_TRI)
		return strlen(q->tri) == 3 ? q->tri : NULL;
	return q->op == Q_OR && q->tri && strlen(q->tri) == 3 ? q->tri : NULL;
}

static int word_byte(unsigned char c)
{
	return c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/*
 * a and b are trigrams that overlap by two characters inside a word, as
 * neighbours in a word do: "sus" says little more than "usp" of "suspend".
 * Across a separator they are not: "m_s" of "pm_suspend" rules out the many
 * "pm_" that do not go on with an s (pm_runtime_...), which neither "pm_" nor
 * "usp" does (on the Linux tree, -i pm_suspend: 2,347 candidate files against
 * 3,235 with "_su" instead).
 */
static int q_linked(const struct q *a, const struct q *b)
{
	const char *x = q_one_tri(a), *y = q_one_tri(b);

	if (!x || !y)
		return 0;
	if (!memcmp(x + 1, y, 2))
		return word_byte((unsigned char)y[0]) && word_byte((unsigned char)y[1]);
	if (!memcmp(y + 1, x, 2))
		return word_byte((unsigned char)x[0]) && word_byte((unsigned char)x[1]);
	return 0;
}

static struct q *q_lean(struct q *q, trigram_df_fn df, void *data, double *cost)
{
	struct lean_kid *kids;
	size_t i, n;
	double c;

	*cost = 0;
	switch (q->op) {
	case Q_ALL:
		return q;
	case Q_TRI:
		*cost = (double)df(q->tri, data);
		return q;
	case Q_OR:
		for (i = 0; i < q->nr; i++) {
			q->k[i] = q_lean(q->k[i], df, data, &c);
			*cost += c;
		}
		return q;
	case Q_AND:
		break;
	}
	kids = xmalloc(q->nr * sizeof(*kids));
	for (i = 0; i < q->nr; i++) {
		kids[i].q = q_lean(q->k[i], df, data, &kids[i].cost);
		kids[i].cost = kids[i].cost * 1024 + (double)i;	/* ties in the pattern's order */
	}
	qsort(kids, q->nr, sizeof(*kids), cmp_lean_kid);
	for (i = n = 0; i < q->nr; i++) {
		size_t j;
		int linked = 0;
		/* a trigram overlapping a kept one by two characters ("sus" and
		 * "usp" of "suspend") rules out little more than that one does */
		for (j = 0; j < n && !linked; j++)
			linked = q_linked(q->k[j], kids[i].q);
		if (kids[i].cost < LEAN_CHEAP * 1024.0 || (n < LEAN_KEEP && !linked)) {
			q->k[n++] = kids[i].q;
			*cost += kids[i].cost / 1024;
		} else {
			q_free(kids[i].q);
		}
	}
	q->nr = n;
	free(kids);
	return q;
}

static void q_emit(struct buf *b, const struct q *q, int top)
{
	size_t i;
	const char *c;

	if (q->op == Q_TRI) {
		buf_addch(b, '"');
		for (c = q->tri; *c; c++) {
			if (*c == '"')
				buf_addch(b, '"');
			buf_addch(b, *c);
		}
		buf_addch(b, '"');
		return;
	}
	if (!top)
		buf_addch(b, '(');
	for (i = 0; i < q->nr; i++) {
		if (i)
			buf_addstr(b, q->op == Q_AND ? " AND " : " OR ");
		q_emit(b, q->k[i], 0);
	}
	if (!top)
		buf_addch(b, ')');
}

/* ---- the trigram pass ---- */

struct info {
	int emptyable;		/* matches the empty string */
	int exact_known;	/* exact holds every string matched */
	struct sset exact;	/* when exact_known */
	struct sset prefix;	/* when !exact_known: every match starts with one */
	struct sset suffix;	/* when !exact_known: every match ends with one */
	struct q *match;	/* every match satisfies it */
};

static void info_release(struct info *x)
{
	sset_release(&x->exact);
	sset_release(&x->prefix);
	sset_release(&x->suffix);
	q_free(x->match);
	x->match = NULL;
}

static void info_any(struct info *x)
{
	memset(x, 0, sizeof(*x));
	sset_add(&x->prefix, "");
	sset_add(&x->suffix, "");
	x->match = q_all();
}

static void info_empty(struct info *x)
{
	memset(x, 0, sizeof(*x));
	x->emptyable = 1;
	x->exact_known = 1;
	sset_add(&x->exact, "");
	x->match = q_all();
}

/*
 * Bring a node without an exact set to its normal form: the trigrams of its
 * prefixes and suffixes are in match, the sets are trimmed to two characters
 * (all a concatenation needs to find the trigrams across it) and small.
 */
static void info_normalize(struct info *x)
{
	x->match = q_and(x->match, q_and(q_set(&x->prefix), q_set(&x->suffix)));
	sset_trim(&x->prefix, 0);
	sset_trim(&x->suffix, 1);
	if (x->prefix.nr > MAX_SET) {
		sset_release(&x->prefix);
		sset_add(&x->prefix, "");
	}
	if (x->suffix.nr > MAX_SET) {
		sset_release(&x->suffix);
		sset_add(&x->suffix, "");
	}
}

/* Forget the exact set, keeping what it says in match, prefix and suffix. */
static void info_inexact(struct info *x)
{
	if (!x->exact_known)
		return;
	x->exact_known = 0;
	sset_release(&x->prefix);
	sset_release(&x->suffix);
	sset_copy(&x->prefix, &x->exact);
	sset_copy(&x->suffix, &x->exact);
	x->match = q_and(x->match, q_set(&x->exact));
	sset_release(&x->exact);
	info_normalize(x);
}

static void info_check(struct info *x)
{
	if (x->exact_known && x->exact.nr > MAX_SET)
		info_inexact(x);
}

/* z = x y (x and y consumed). */
static void info_concat(struct info *z, struct info *x, struct info *y)
{
	struct sset cross;

	memset(z, 0, sizeof(*z));
	z->emptyable = x->emptyable && y->emptyable;
	if (x->exact_known && y->exact_known && x->exact.nr * y->exact.nr <= MAX_SET) {
		z->exact_known = 1;
		sset_cross(&z->exact, &x->exact, &y->exact);
		z->match = q_and(x->match, y->match);
		x->match = y->match = NULL;
		goto done;
	}
	/* prefixes: with x's exact set, x's strings followed by y's prefixes */
	if (x->exact_known) {
		info_inexact(y);
		if (x->exact.nr * y->prefix.nr <= MAX_CROSS)
			sset_cross(&z->prefix, &x->exact, &y->prefix);
		else
			sset_copy(&z->prefix, &x->exact);
	} else {
		sset_copy(&z->prefix, &x->prefix);
		if (x->emptyable) {
			info_inexact(y);
			sset_union(&z->prefix, &y->prefix);
		}
	}
	if (y->exact_known) {
		info_inexact(x);
		if (x->suffix.nr * y->exact.nr <= MAX_CROSS)
			sset_cross(&z->suffix, &x->suffix, &y->exact);
		else
			sset_copy(&z->suffix, &y->exact);
	} else {
		sset_copy(&z->suffix, &y->suffix);
		if (y->emptyable) {
			info_inexact(x);
			sset_union(&z->suffix, &x->suffix);
		}
	}
	info_inexact(x);
	info_inexact(y);
	z->match = q_and(x->match, y->match);
	x->match = y->match = NULL;
	/* the trigrams across the boundary */
	if (x->suffix.nr * y->prefix.nr <= MAX_CROSS) {
		sset_cross(&cross, &x->suffix, &y->prefix);
		z->match = q_and(z->match, q_set(&cross));
		sset_release(&cross);
	}
	info_normalize(z);
done:
	info_release(x);
	info_release(y);
	info_check(z);
}

/* z = x | y (x and y consumed). */
static void info_alt(struct info *z, struct info *x, struct info *y)
{
	memset(z, 0, sizeof(*z));
	z->emptyable = x->emptyable || y->emptyable;
	if (x->exact_known && y->exact_known) {
		z->exact_known = 1;
		sset_copy(&z->exact, &x->exact);
		sset_union(&z->exact, &y->exact);
	} else {
		info_inexact(x);
		info_inexact(y);
		sset_copy(&z->prefix, &x->prefix);
		sset_union(&z->prefix, &y->prefix);
		sset_copy(&z->suffix, &x->suffix);
		sset_union(&z->suffix, &y->suffix);
	}
	z->match = q_or(x->match, y->match);
	x->match = y->match = NULL;
	if (!z->exact_known)
		info_normalize(z);
	info_release(x);
	info_release(y);
	info_check(z);
}

/*
 * The characters of a class as strings, folded as the index folds them; 0 when
 * one of them must count as "any character".
 */
static int fold_chars(const struct node *nd, int caseless, struct sset *out)
{
	size_t i;
	uint32_t c;
	char u[5];

	memset(out, 0, sizeof(*out));
	for (i = 0; i < nd->cps_nr; i++) {
		c = nd->cps[i];
		if (c == 0 || (caseless && c >= 128) || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) {
			sset_release(out);
			return 0;
		}
		if (caseless && c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (c < 0x80) {
			u[0] = (char)c;
			u[1] = 0;
		} else if (c < 0x800) {
			u[0] = (char)(0xc0 | (c >> 6));
			u[1] = (char)(0x80 | (c & 0x3f));
			u[2] = 0;
		} else if (c < 0x10000) {
			u[0] = (char)(0xe0 | (c >> 12));
			u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			u[2] = (char)(0x80 | (c & 0x3f));
			u[3] = 0;
		} else {
			u[0] = (char)(0xf0 | (c >> 18));
			u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			u[3] = (char)(0x80 | (c & 0x3f));
			u[4] = 0;
		}
		sset_add(out, u);
	}
	return 1;
}

/* x+ from x (consumed into z). */
static void info_plus(struct info *z, struct info *x)
{
	info_inexact(x);
	memset(z, 0, sizeof(*z));
	z->emptyable = x->emptyable;
	sset_copy(&z->prefix, &x->prefix);
	sset_copy(&z->suffix, &x->suffix);
	z->match = x->match;
	x->match = NULL;
	info_release(x);
}

static void info_of(struct info *z, const struct node *nd, int caseless)
{
	struct info x, y, t;
	size_t i;
	int k, copies;

	switch (nd->type) {
	case N_EMPTY:
		info_empty(z);
		return;
	case N_ANY:
		info_any(z);
		return;
	case N_CHARS:
		memset(z, 0, sizeof(*z));
		if (!fold_chars(nd, caseless, &z->exact)) {
			info_any(z);
			return;
		}
		z->exact_known = 1;
		z->match = q_all();
		info_check(z);
		return;
	case N_CAT:
		/*
		 * Runs of exactly known parts are joined first, so that a literal stays
		 * one string (one phrase) whatever comes before it.
		 */
		info_empty(z);
		info_empty(&t);
		for (i = 0; i < nd->kids_nr; i++) {
			info_of(&y, nd->kids[i], caseless);
			if (y.exact_known && t.exact_known && t.exact.nr * y.exact.nr <= MAX_SET) {
				x = t;
				info_concat(&t, &x, &y);
				continue;
			}
			x = *z;
			info_concat(z, &x, &t);
			info_empty(&t);
			if (y.exact_known) {
				x = t;
				info_concat(&t, &x, &y);
			} else {
				x = *z;
				info_concat(z, &x, &y);
			}
		}
		x = *z;
		info_concat(z, &x, &t);
		return;
	case N_ALT:
		info_of(z, nd->kids[0], caseless);
		for (i = 1; i < nd->kids_nr; i++) {
			info_of(&y, nd->kids[i], caseless);
			x = *z;
			info_alt(z, &x, &y);
		}
		return;
	case N_REP:
		if (nd->max == 0) {
			info_empty(z);
			return;
		}
		if (nd->min == 0) {
			if (nd->max == 1) {
				info_of(&x, nd->kids[0], caseless);
				info_empty(&y);
				info_alt(z, &x, &y);
			} else {
				info_any(z);
				z->emptyable = 1;
			}
			return;
		}
		/* x{n} for small n: n copies; otherwise a superset: x{k-1} x+ */
		copies = nd->min > MAX_COPIES ? MAX_COPIES : nd->min;
		if (nd->max == nd->min && nd->min <= MAX_COPIES) {
			info_empty(z);
			for (k = 0; k < copies; k++) {
				info_of(&y, nd->kids[0], caseless);
				x = *z;
				info_concat(z, &x, &y);
			}
			return;
		}
		info_empty(z);
		for (k = 0; k < copies - 1; k++) {
			info_of(&y, nd->kids[0], caseless);
			x = *z;
			info_concat(z, &x, &y);
		}
		info_of(&t, nd->kids[0], caseless);
		info_plus(&y, &t);
		x = *z;
		info_concat(z, &x, &y);
		return;
	}
}

/* ---- the literal pass (bytes, case as written) ---- */

struct lit {
	int known;		/* exact holds the only string matched */
	struct buf exact;	/* that string */
	struct buf prefix;	/* every match starts with it */
	struct buf suffix;	/* every match ends with it */
	struct buf best;	/* the longest string every match contains */
};

static void lit_init(struct lit *l)
{
	memset(l, 0, sizeof(*l));
	buf_init(&l->exact, 0);
	buf_init(&l->prefix, 0);
	buf_init(&l->suffix, 0);
	buf_init(&l->best, 0);
}

static void lit_release(struct lit *l)
{
	buf_release(&l->exact);
	buf_release(&l->prefix);
	buf_release(&l->suffix);
	buf_release(&l->best);
}

static void buf_set(struct buf *dst, const char *s, size_t n)
{
	buf_reset(dst);
	buf_add(dst, s, n);
}

static void lit_better(struct buf *best, const char *s, size_t n)
{
	if (n > best->len)
		buf_set(best, s, n);
}

static void add_utf8(struct buf *b, uint32_t c)
{
	if (c < 0x80) {
		buf_addch(b, (int)c);
	} else if (c < 0x800) {
		buf_addch(b, (int)(0xc0 | (c >> 6)));
		buf_addch(b, (int)(0x80 | (c & 0x3f)));
	} else if (c < 0x10000) {
		buf_addch(b, (int)(0xe0 | (c >> 12)));
		buf_addch(b, (int)(0x80 | ((c >> 6) & 0x3f)));
		buf_addch(b, (int)(0x80 | (c & 0x3f)));
	} else {
		buf_addch(b, (int)(0xf0 | (c >> 18)));
		buf_addch(b, (int)(0x80 | ((c >> 12) & 0x3f)));
		buf_addch(b, (int)(0x80 | ((c >> 6) & 0x3f)));
		buf_addch(b, (int)(0x80 | (c & 0x3f)));
	}
}

/* A string known exactly: it is its own prefix, suffix and best. */
static void lit_known(struct lit *z)
{
	z->known = 1;
	buf_set(&z->prefix, z->exact.buf, z->exact.len);
	buf_set(&z->suffix, z->exact.buf, z->exact.len);
	lit_better(&z->best, z->exact.buf, z->exact.len);
}

/*
 * The literal pass.  In a concatenation, a run of exactly known parts, followed by
 * the prefix of the next part (or preceded by the suffix of the one before), is a
 * string every match contains; the longest such string is kept.
 */
static void lit_of(struct lit *z, const struct node *nd)
{
	struct lit k;
	struct buf run = BUF_INIT;
	size_t i, n;
	int all = 1, started = 0, r;

	lit_init(z);
	switch (nd->type) {
	case N_EMPTY:
		lit_known(z);
		return;
	case N_ANY:
		return;
	case N_CHARS:
		if (nd->cps_nr == 1) {
			add_utf8(&z->exact, nd->cps[0]);
			lit_known(z);
		}
		return;
	case N_CAT:
		for (i = 0; i < nd->kids_nr; i++) {
			lit_of(&k, nd->kids[i]);
			lit_better(&z->best, k.best.buf, k.best.len);
			if (k.known) {
				buf_add(&run, k.exact.buf, k.exact.len);
			} else {
				all = 0;
				buf_add(&run, k.prefix.buf, k.prefix.len);
				lit_better(&z->best, run.buf, run.len);
				if (!started) {
					buf_set(&z->prefix, run.buf, run.len);
					started = 1;
				}
				buf_set(&run, k.suffix.buf, k.suffix.len);
			}
			lit_release(&k);
		}
		lit_better(&z->best, run.buf, run.len);
		if (all) {
			buf_set(&z->exact, run.buf, run.len);
			lit_known(z);
		} else {
			buf_set(&z->suffix, run.buf, run.len);
		}
		buf_release(&run);
		return;
	case N_ALT:
		/* known if every branch is the same string; else the common prefix and suffix */
		lit_of(&k, nd->kids[0]);
		z->known = k.known;
		buf_set(&z->exact, k.exact.buf, k.exact.len);
		buf_set(&z->prefix, k.prefix.buf, k.prefix.len);
		buf_set(&z->suffix, k.suffix.buf, k.suffix.len);
		lit_release(&k);
		for (i = 1; i < nd->kids_nr; i++) {
			lit_of(&k, nd->kids[i]);
			if (!k.known || k.exact.len != z->exact.len || memcmp(k.exact.buf, z->exact.buf, k.exact.len))
				z->known = 0;
			for (n = 0; n < z->prefix.len && n < k.prefix.len && z->prefix.buf[n] == k.prefix.buf[n]; n++)
				;
			buf_setlen(&z->prefix, n);
			for (n = 0; n < z->suffix.len && n < k.suffix.len &&
			     z->suffix.buf[z->suffix.len - 1 - n] == k.suffix.buf[k.suffix.len - 1 - n]; n++)
				;
			memmove(z->suffix.buf, z->suffix.buf + z->suffix.len - n, n);
			buf_setlen(&z->suffix, n);
			lit_release(&k);
		}
		if (z->known) {
			lit_known(z);
		} else {
			buf_reset(&z->exact);
			lit_better(&z->best, z->prefix.buf, z->prefix.len);
			lit_better(&z->best, z->suffix.buf, z->suffix.len);
		}
		return;
	case N_REP:
		if (nd->max == 0) {
			lit_known(z);
			return;
		}
		lit_of(&k, nd->kids[0]);
		if (nd->min >= 1) {
			if (k.known && nd->min == nd->max && k.exact.len * (size_t)nd->min <= 4096) {
				for (r = 0; r < nd->min; r++)
					buf_add(&z->exact, k.exact.buf, k.exact.len);
				lit_known(z);
			} else {
				buf_set(&z->prefix, k.prefix.buf, k.prefix.len);
				buf_set(&z->suffix, k.suffix.buf, k.suffix.len);
				lit_better(&z->best, k.best.buf, k.best.len);
			}
		} else if (k.known && !k.exact.len) {
			lit_known(z);
		}
		lit_release(&k);
		return;
	}
}

/* ---- the entry points ---- */

/* The tree of a -F pattern: its characters one after the other; NULL if not UTF-8. */
static struct node *fixed_tree(const char *pattern)
{
	struct parser p;
	struct node *cat = node_new(N_CAT);
	long cp;

	memset(&p, 0, sizeof(p));
	p.s = (const unsigned char *)pattern;
	p.n = strlen(pattern);
	while (p.i < p.n) {
		cp = next_cp(&p);
		if (cp < 0) {
			node_free(cat);
			return NULL;
		}
		node_add(cat, node_char((uint32_t)cp));
	}
	return cat;
}

static void analyze(struct trigram_info *out, const char *pattern, unsigned flags, trigram_df_fn df, void *data)
{
	struct parser p;
	struct node *root;
	struct info x;
	struct lit l;
	struct q *q;
	struct buf b = BUF_INIT;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	use_phrases = !!(flags & TRIGRAM_PHRASES);
	p.s = (const unsigned char *)pattern;
	p.n = strlen(pattern);
	p.caseless = !!(flags & TRIGRAM_ICASE);
	if (flags & TRIGRAM_FIXED) {
		if (!(flags & TRIGRAM_ICASE) && p.n) {
			out->literal = xstrndup(pattern, p.n);
			out->literal_len = p.n;
			out->required = xstrndup(pattern, p.n);
			out->required_len = p.n;
		} else if (p.n) {
			out->required_icase = xstrndup(pattern, p.n);
			out->required_icase_len = p.n;
		}
		root = fixed_tree(pattern);
		if (!root) {
			out->gave_up = 1;
			return;
		}
	} else {
		root = parse_alt(&p);
		if (root && p.i < p.n)
			p.failed = 1;	/* an unmatched ')' */
		if (p.failed) {
			node_free(root);
			out->gave_up = 1;
			out->looks_ahead = 1;
			return;
		}
		out->looks_ahead = p.looks_ahead;
		if (!p.caseless) {
			lit_of(&l, root);
			if (l.known && l.exact.len && !p.asserts) {
				out->literal_len = l.exact.len;
				out->literal = buf_detach(&l.exact, NULL);
			}
			if (l.best.len) {
				out->required_len = l.best.len;
				out->required = buf_detach(&l.best, NULL);
			}
			lit_release(&l);
		} else {
			/* the tree keeps characters as written: what every match
			 * holds, up to case (alternatives that differ only in case
			 * give less than they could, never too much) */
			lit_of(&l, root);
			if (l.best.len) {
				out->required_icase_len = l.best.len;
				out->required_icase = buf_detach(&l.best, NULL);
			}
			lit_release(&l);
		}
	}

	info_of(&x, root, p.caseless);
	node_free(root);
	if (x.exact_known) {
		q = q_and(x.match, q_set(&x.exact));
	} else {
		q = q_and(x.match, q_and(q_set(&x.prefix), q_set(&x.suffix)));
	}
	x.match = NULL;
	info_release(&x);
	q = q_prune(q, MAX_QUERY_TRIGRAMS);
	if (p.caseless)
		q = q_icase(q);
	if (df) {
		double cost;
		q = q_lean(q, df, data, &cost);
	}
	if (q->op != Q_ALL) {
		q_emit(&b, q, 1);
		out->query = buf_detach(&b, NULL);
	}
	q_free(q);
}

void trigram_analyze(struct trigram_info *out, const char *pattern, unsigned flags)
{
	analyze(out, pattern, flags, NULL, NULL);
}

void trigram_info_release(struct trigram_info *info)
{
	free(info->query);
	free(info->literal);
	free(info->required);
	free(info->required_icase);
	memset(info, 0, sizeof(*info));
}

char *trigram_query_lean(const char *pattern, unsigned flags, trigram_df_fn df, void *data)
{
	struct trigram_info info;
	char *q;

	analyze(&info, pattern, flags, df, data);
	q = info.query;
	info.query = NULL;
	trigram_info_release(&info);
	return q;
}

char *trigram_query(const char *pattern, unsigned flags)
{
	struct trigram_info info;
	char *q;

	trigram_analyze(&info, pattern, flags);
	q = info.query;
	info.query = NULL;
	trigram_info_release(&info);
	return q;
}
