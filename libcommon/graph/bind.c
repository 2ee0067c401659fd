/*
 * bind.c: rank the definitions a reference may reach (see bind.h).  Called
 * once per reference of a callers/callees question, over the few definitions
 * of one name: a linear pass (bind_js_call() copies the candidates it keeps).
 */
#include <ctype.h>

#include "core/common.h"
#include "graph/bind.h"

const char *bind_how_name(enum bind_how how)
{
	switch (how) {
	case BIND_MEMBER: return "member";
	case BIND_LOCAL: return "local";
	case BIND_IMPORT: return "import";
	case BIND_RECEIVER: return "receiver";
	case BIND_INHERITED: return "inherited";
	case BIND_NAME: return "name";
	default: return NULL;
	}
}

/* 1 if the class cls encloses the scope s ("A" encloses "A" and "A.f", not "AB"). */
static int encloses(const char *cls, const char *s)
{
	size_t n = strlen(cls);

	return s && !strncmp(cls, s, n) && (s[n] == '\0' || s[n] == '.');
}

/* 1 if a call made on recv, in scope, can reach the definition d at all. */
static int recv_fits(enum bind_recv recv, const char *path, const char *scope,
		     const struct bind_def *d)
{
	switch (recv) {
	case RECV_BARE:
		return !d->scope;
	case RECV_SELF:
		return d->scope && !strcmp(d->path, path) && encloses(d->scope, scope);
	case RECV_SUPER:
		return d->scope && !(!strcmp(d->path, path) && encloses(d->scope, scope));
	case RECV_OTHER:
		return d->scope || strcmp(d->path, path);
	default:
		return 1;
	}
}

int bind_fits(const char *path, const char *scope, enum bind_recv recv, const struct bind_def *d)
{
	return recv_fits(recv, path, scope, d);
}

enum bind_how bind_level(const char *path, const char *scope, enum bind_recv recv, const struct bind_def *d)
{
	if (!recv_fits(recv, path, scope, d) || recv == RECV_SUPER)
		return BIND_NONE;
	if (!strcmp(d->path, path))
		return d->scope && encloses(d->scope, scope) ? BIND_MEMBER : !d->scope ? BIND_LOCAL : BIND_NONE;
	return d->imported ? BIND_IMPORT : BIND_NONE;
}

long bind_ref(enum bind_how *how, const char *path, const char *scope, enum bind_recv recv,
	      const struct bind_def *defs, size_t nr)
{
	long best = -1, only = -1;
	size_t fit = 0;
	enum bind_how bh = BIND_NONE;

	for (size_t i = 0; i < nr; i++) {
		const struct bind_def *d = &defs[i];
		enum bind_how h = BIND_NONE;

		if (!recv_fits(recv, path, scope, d))
			continue;
		fit++;
		only = (long)i;
		if (recv == RECV_SUPER) {
			/* the base class is not known: only a single fit binds (by name) */
		} else if (!strcmp(d->path, path)) {
			if (d->scope && encloses(d->scope, scope))
				h = BIND_MEMBER;
			else if (!d->scope)
				h = BIND_LOCAL;
		} else if (d->imported) {
			h = BIND_IMPORT;
		}
		if (h != BIND_NONE && (bh == BIND_NONE || h < bh)) {
			bh = h;
			best = (long)i;
		}
	}
	if (bh == BIND_NONE && fit == 1) {
		bh = BIND_NAME;
		best = only;
	}
	*how = bh;
	return best;
}

/* 1 if path ends in ext. */
static int ends_in(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);

	return n > e && !strcmp(path + n - e, ext);
}

static int same_scope(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

long bind_c_body(enum bind_how *how, const char *path, enum bind_recv recv,
		 const struct bind_def *defs, const long *lines, const long *ends, size_t nr, long def)
{
	long body = -1;
	size_t bodies = 0, headers = 0;

	if (!ends_in(path, ".c") && !ends_in(path, ".h"))
		return def;
	if (recv == RECV_OTHER || recv == RECV_SELF || recv == RECV_SUPER) {	/* x.f(), p->f() */
		*how = BIND_NONE;
		return -1;
	}
	if (def >= 0 && !strcmp(defs[def].path, path)) {
		/* a forward declaration and the function, both in this file */
		for (size_t i = 0; i < nr; i++) {
			long span = ends[i] - lines[i], best = ends[def] - lines[def];
			if (!strcmp(defs[i].path, path) && same_scope(defs[i].scope, defs[def].scope) &&
			    (span > best || (span == best && lines[i] > lines[def])))
				def = (long)i;
		}
		return def;
	}
	for (size_t i = 0; i < nr; i++) {
		if (def >= 0 && !same_scope(defs[i].scope, defs[def].scope))
			continue;
		if (ends_in(defs[i].path, ".h"))
			headers++;
		else if (!ends_in(defs[i].path, ".c"))
			return def;
		else if (body < 0 || strcmp(defs[body].path, defs[i].path))
			bodies++, body = (long)i;	/* a file counts once: its forward declaration and the function */
		else if (ends[i] - lines[i] > ends[body] - lines[body] ||
			 (ends[i] - lines[i] == ends[body] - lines[body] && lines[i] > lines[body]))
			body = (long)i;
	}
	if (bodies != 1)
		return def;
	if (def >= 0 && ends_in(defs[def].path, ".h"))
		return body;
	if (def < 0) {
		*how = BIND_NAME;
		return body;
	}
	return def;
}

/* 1 if a, at line la, is nearer to line than b (-1: none yet): above first, then below. */
static int nearer(long la, long lb, long line)
{
	if (lb < 0)
		return 1;
	if ((la <= line) != (lb <= line))
		return la <= line;
	return la <= line ? la > lb : la < lb;
}

int bind_is_js(const char *path)
{
	static const char *const exts[] = { ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", NULL };

	for (const char *const *x = exts; *x; x++)
		if (ends_in(path, *x))
			return 1;
	return 0;
}

/*
 * TypeScript: an overloaded function's (or a class's method's) signatures and
 * its implementation are definitions of one kind, file and scope, one after
 * the other (each within 30 lines of the one before): the implementation, the
 * last of them, stands for all.
 */
static long ts_implementation(const struct bind_def *defs, const char *const *kinds,
			      const long *lines, size_t nr, long def)
{
	const char *kind = def >= 0 ? kinds[def] : NULL;
	int more = kind && (!strcmp(kind, "function") || (!strcmp(kind, "method") && defs[def].scope)) &&
		   (ends_in(defs[def].path, ".ts") || ends_in(defs[def].path, ".tsx") ||
		    ends_in(defs[def].path, ".mts") || ends_in(defs[def].path, ".cts"));

	while (more) {
		long next = -1;
		for (size_t i = 0; i < nr; i++)
			if (!strcmp(defs[i].path, defs[def].path) && same_scope(defs[i].scope, defs[def].scope) &&
			    kinds[i] && !strcmp(kinds[i], kind) && lines[i] > lines[def] &&
			    lines[i] - lines[def] <= 30 && (next < 0 || lines[i] < lines[next]))
				next = (long)i;
		more = next >= 0;
		if (more)
			def = next;
	}
	return def;
}

long bind_js(enum bind_how *how, const char *path, const char *scope, long line, enum bind_recv recv,
	     const struct bind_def *defs, const char *const *kinds, const long *lines, const int *reach,
	     size_t nr, long def)
{
	long nested = -1, here = -1, reached = -1;
	size_t reached_nr = 0;

	if (!bind_is_js(path))
		return def;
	if (recv == RECV_OTHER && (*how == BIND_NAME || *how == BIND_MEMBER ||
				   (def >= 0 && !defs[def].scope && kinds[def] && !strcmp(kinds[def], "function")))) {
		*how = BIND_NONE;
		return -1;
	}
	if (recv != RECV_BARE)
		return ts_implementation(defs, kinds, lines, nr, def);
	for (size_t i = 0; i < nr; i++) {
		const struct bind_def *d = &defs[i];
		if (!kinds[i] || (strcmp(kinds[i], "function") && strcmp(kinds[i], "class")))
			continue;	/* a function, or a class (new C()) */
		if (strcmp(d->path, path)) {
			/* the overloads of one function count once */
			if (!d->scope && reach[i] && (reached < 0 || strcmp(defs[reached].path, d->path)))
				reached_nr++, reached = (long)i;
			continue;
		}
		if (d->scope && encloses(d->scope, scope) &&
		    (nested < 0 || strlen(d->scope) > strlen(defs[nested].scope) ||
		     (strlen(d->scope) == strlen(defs[nested].scope) && nearer(lines[i], lines[nested], line))))
			nested = (long)i;
		if (here < 0 || nearer(lines[i], lines[here], line))
			here = (long)i;
	}
	if (nested >= 0) {
		*how = BIND_LOCAL;
		return ts_implementation(defs, kinds, lines, nr, nested);
	}
	if (*how == BIND_LOCAL || *how == BIND_IMPORT || *how == BIND_MEMBER || here >= 0)
		return ts_implementation(defs, kinds, lines, nr, def);
	if (reached_nr == 1) {
		*how = BIND_IMPORT;
		return ts_implementation(defs, kinds, lines, nr, reached);
	}
	return ts_implementation(defs, kinds, lines, nr, def);
}

static int word_is(const char *w, size_t n, const char *kw)
{
	return w && strlen(kw) == n && !strncmp(w, kw, n);
}

/* The indentation of a line: its leading blanks, or -1 for a blank or unknown line. */
static long indent(const char *s)
{
	size_t n;

	if (!s)
		return -1;
	n = strspn(s, " \t");
	return s[n] && s[n] != '\r' ? (long)n : -1;
}

int bind_js_visible(const char *const *text, long text_nr, long def, long from)
{
	long lo = def < from ? def + 1 : from, hi = def < from ? from : def - 1, in;

	if (def < 1 || def > text_nr || (in = indent(text[def - 1])) <= 0)
		return 1;
	for (long l = lo; l <= hi && l <= text_nr; l++) {
		long i = l >= 1 ? indent(text[l - 1]) : -1;
		if (i >= 0 && i < in)
			return 0;
	}
	return 1;
}

/* 1 if the line s declares name as a variable: const/let/var name, or name
 * among the bindings of a destructuring `const { a, name } =` / `[a, name]`. */
static int declares_var(const char *s, const char *name)
{
	for (const char *p = tagtext_word(s, name); p; p = tagtext_word(p + 1, name)) {
		size_t n;
		const char *w = tagtext_word_before(s, p, &n), *q = p + strlen(name), *k;

		if (word_is(w, n, "const") || word_is(w, n, "let") || word_is(w, n, "var"))
			return 1;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == ':' || *q == '(')
			continue;	/* { key: other }, a call */
		/* inside { } or [ ] opened right after const/let/var on this line */
		for (k = p; k > s && k[-1] != '{' && k[-1] != '[' && k[-1] != '=' && k[-1] != '(' && k[-1] != ';'; k--)
			;
		if (k > s && (k[-1] == '{' || k[-1] == '[')) {
			w = tagtext_word_before(s, k - 1, &n);
			if (word_is(w, n, "const") || word_is(w, n, "let") || word_is(w, n, "var"))
				return 1;
		}
	}
	return 0;
}

long bind_js_variable(const char *const *text, long text_nr, const char *name, long from,
		      const long *skip, size_t skip_nr)
{
	long best = 0;

	for (long l = 1; l <= text_nr; l++) {
		int skipped = 0;

		if (!text[l - 1] || !declares_var(text[l - 1], name))
			continue;
		for (size_t i = 0; i < skip_nr && !skipped; i++)
			skipped = skip[i] == l;
		if (skipped || !bind_js_visible(text, text_nr, l, from))
			continue;
		if (!best || nearer(l, best, from))
			best = l;
	}
	return best;
}

static int ident_char(int c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

int bind_js_receiver_var(const char *s, long col, char *out, size_t n)
{
	const char *p, *e;

	if (!s || col < 2 || (size_t)col - 1 > strlen(s))
		return 0;
	e = s + col - 1;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e > s && e[-1] == '.')
		e--;
	else
		return 0;
	if (e > s && e[-1] == '?')
		e--;	/* x?.f() */
	for (p = e; p > s && ident_char(p[-1]); p--)
		;
	if (p == e || (size_t)(e - p) >= n || (p > s && (p[-1] == '.' || p[-1] == ')' || p[-1] == ']')))
		return 0;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return 1;
}

int bind_js_literal_receiver(const char *s, long col)
{
	const char *e, *p;

	if (!s || col < 2 || (size_t)col - 1 > strlen(s))
		return 0;
	e = s + col - 1;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e == s || e[-1] != '.')
		return 0;
	e--;
	if (e > s && e[-1] == '?')
		e--;
	if (e > s && (e[-1] == '\'' || e[-1] == '"' || e[-1] == '`'))
		return 1;	/* 'a'.f(), `a${b}`.f() */
	if (e - s >= 2 && e[-2] == '{' && e[-1] == '}')
		return 1;	/* {}.f() */
	for (p = e; p > s && strchr("dgimsuyv", p[-1]); p--)
		;	/* /re/flags */
	if (p == s || p[-1] != '/' || p - 1 == s)
		return 0;
	for (p -= 2; p >= s; p--) {
		int bs = 0;

		for (const char *q = p; q > s && q[-1] == '\\'; q--)
			bs++;
		if (*p == '/' && !(bs & 1))
			break;
	}
	if (p < s || p[1] == '/' || p[1] == '*')
		return 0;	/* no opening slash, or a comment */
	while (p > s && (p[-1] == ' ' || p[-1] == '\t'))
		p--;
	/* a regular expression starts where an operand may start, not after one (a / b.f()) */
	return p == s || strchr("(,=:[!&|?{};+-*%<>~^", p[-1]) ||
	       (p - s >= 6 && !strncmp(p - 6, "return", 6) && (p - s == 6 || !ident_char(p[-7])));
}

/* The class of var declared on line s (see bind_js_var_class()), into cls. */
static int line_class(const char *s, const char *var, char *cls, size_t n)
{
	for (const char *p = tagtext_word(s, var); p; p = tagtext_word(p + 1, var)) {
		size_t wn;
		const char *w = tagtext_word_before(s, p, &wn), *q = p + strlen(var), *c;
		int decl = word_is(w, wn, "const") || word_is(w, wn, "let") || word_is(w, wn, "var");

		if (!decl && !w) {
			const char *b = p;
			while (b > s && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			if (b == s || (b[-1] != '(' && b[-1] != ','))
				continue;	/* a parameter: (x: C, y: D) */
		} else if (!decl) {
			continue;
		}
		q += strspn(q, " \t");
		if (*q == ':')
			q++;
		else if (decl && *q == '=' && q[1] != '=' && q[1] != '>') {
			q++;
			q += strspn(q, " \t");
			if (strncmp(q, "new", 3) || ident_char(q[3]))
				continue;
			q += 3;
		} else {
			continue;
		}
		q += strspn(q, " \t");
		for (c = q; ident_char(*c); c++)
			;
		if (c == q || !isupper((unsigned char)*q) || (size_t)(c - q) >= n)
			continue;
		memcpy(cls, q, (size_t)(c - q));
		cls[c - q] = '\0';
		return 1;
	}
	return 0;
}

int bind_js_var_class(const char *const *text, long text_nr, const char *var, long from, char *cls, size_t n)
{
	long best = 0;
	char c[256];

	for (long l = 1; l <= text_nr; l++) {
		if (!text[l - 1] || !line_class(text[l - 1], var, c, sizeof(c)) ||
		    !bind_js_visible(text, text_nr, l, from) || (best && !nearer(l, best, from)))
			continue;
		if (strlen(c) >= n)
			continue;
		best = l;
		strcpy(cls, c);
	}
	return best > 0;
}

/* The method name of class cls among defs (the call's file first, else the
 * one a file the imports reach holds), or -1; an overloaded method's
 * implementation (its signatures count once). */
static long js_method_of(const char *path, const struct bind_def *defs, const char *const *kinds,
			 const long *lines, const int *reach, size_t nr, const char *cls)
{
	long other = -1;
	size_t others = 0;

	for (size_t i = 0; i < nr; i++) {
		const char *s = defs[i].scope, *dot;

		if (!s || !kinds[i] || (strcmp(kinds[i], "method") && strcmp(kinds[i], "function")))
			continue;
		dot = strrchr(s, '.');
		if (strcmp(dot ? dot + 1 : s, cls))
			continue;
		if (!strcmp(defs[i].path, path))
			return ts_implementation(defs, kinds, lines, nr, (long)i);
		if ((reach[i] || defs[i].imported) && other != ts_implementation(defs, kinds, lines, nr, (long)i))
			others++, other = ts_implementation(defs, kinds, lines, nr, (long)i);
	}
	return others == 1 ? other : -1;
}

/* 1 if a method of another class than defs[def]'s (its overloads aside) is
 * in a file the imports reach. */
static int js_other_method(const struct bind_def *defs, const char *const *kinds, const long *lines,
			   const int *reach, size_t nr, long def)
{
	long impl = ts_implementation(defs, kinds, lines, nr, def);

	for (size_t i = 0; i < nr; i++)
		if ((reach[i] || defs[i].imported) && kinds[i] && !strcmp(kinds[i], "method") && defs[i].scope &&
		    ts_implementation(defs, kinds, lines, nr, (long)i) != impl)
			return 1;
	return 0;
}

/* The line declaring class cls (`class cls`, `abstract class cls`) in the text; 0 if none. */
static long js_class_line(const char *const *text, long text_nr, const char *cls)
{
	for (long l = 1; l <= text_nr; l++) {
		const char *s = text[l - 1];

		for (const char *p = s ? tagtext_word(s, cls) : NULL; p; p = tagtext_word(p + 1, cls)) {
			size_t wn;
			const char *w = tagtext_word_before(s, p, &wn);

			if (word_is(w, wn, "class"))
				return l;
		}
	}
	return 0;
}

/* The class that the declaration at line l of class cls extends (`class cls<T
 * extends X> extends a.B<T> {`, within 20 lines: B), copied to base (n bytes
 * at most); 0 if none. */
static int js_class_base(const char *const *text, long text_nr, long l, const char *cls, char *base, size_t n)
{
	int depth = 0, after = 0;	/* after: the last word was extends, at depth 0 */
	char prev = ' ';

	for (long k = l; k <= text_nr && k < l + 20; k++) {
		const char *p = k == l ? tagtext_word(text[l - 1], cls) + strlen(cls) : text[k - 1];

		for (; p && *p; prev = *p++) {
			if (*p == '<' || *p == '(' || *p == '[')
				depth++;
			else if ((*p == '>' && prev != '=') || *p == ')' || *p == ']')
				depth--;
			else if (*p == '{' && depth <= 0)
				return 0;
			else if (ident_char(*p)) {
				const char *e = p, *dot = p;
				while (ident_char(*e) || (*e == '.' && ident_char(e[1])))
					if (*e++ == '.')
						dot = e;
				if (after) {
					if ((size_t)(e - dot) >= n)
						return 0;
					memcpy(base, dot, (size_t)(e - dot));
					base[e - dot] = '\0';
					return 1;
				}
				after = depth == 0 && e - p == 7 && !strncmp(p, "extends", 7);
				p = e - 1;
			}
		}
	}
	return 0;
}

/* this.f() or super.f() in a method of a class of the file (the innermost
 * component of scope that the text declares as a class) that has no f of its
 * own: the f of the nearest base class (each declared in the file, the last
 * one possibly in a file the imports reach; js_method_of()), or -1. */
static long js_inherited(const char *path, const char *scope, const struct bind_def *defs,
			 const char *const *kinds, const long *lines, const int *reach, size_t nr,
			 const struct bind_js_file *f)
{
	char cls[256], base[256];
	long l = 0, def = -1;

	for (const char *end = scope ? scope + strlen(scope) : NULL; end && !l; ) {
		const char *start = end;
		while (start > scope && start[-1] != '.')
			start--;
		if ((size_t)(end - start) < sizeof(cls)) {
			memcpy(cls, start, (size_t)(end - start));
			cls[end - start] = '\0';
			l = js_class_line(f->text, f->text_nr, cls);
		}
		end = start > scope ? start - 1 : NULL;
	}
	for (int hops = 0; l > 0 && hops < 8; hops++) {
		if (!js_class_base(f->text, f->text_nr, l, cls, base, sizeof(base)))
			return -1;
		strcpy(cls, base);
		if ((def = js_method_of(path, defs, kinds, lines, reach, nr, cls)) >= 0)
			return def;
		l = js_class_line(f->text, f->text_nr, cls);	/* a base of the file: its base */
	}
	return -1;
}

/* 1 if line s opens an object literal assigned to var: `const var = {`; *open the '{'. */
static int object_decl(const char *s, const char *var, const char **open)
{
	for (const char *p = tagtext_word(s, var); p; p = tagtext_word(p + 1, var)) {
		size_t wn;
		const char *w = tagtext_word_before(s, p, &wn), *q = p + strlen(var);

		if (!word_is(w, wn, "const") && !word_is(w, wn, "let") && !word_is(w, wn, "var"))
			continue;
		q += strspn(q, " \t");
		if (*q != '=' || q[1] == '=' || q[1] == '>')
			continue;
		q++;
		q += strspn(q, " \t");
		if (*q == '{') {
			*open = q;
			return 1;
		}
	}
	return 0;
}

/* 1 if the object literal opened at line l's '{' (open) holds name as a
 * shorthand member (`{ a, name }`, one a line too), within 300 lines. */
static int object_has_shorthand(const char *const *text, long text_nr, long l, const char *open, const char *name)
{
	int depth = 0;
	char prev = '{';	/* the last non-blank character at depth 1 before a word */
	size_t n = strlen(name);

	for (long k = l; k <= text_nr && k < l + 300; k++) {
		const char *p = k == l ? open : text[k - 1];

		for (; p && *p; p++) {
			if (*p == '{' || *p == '[' || *p == '(') {
				depth++;
				prev = *p;
			} else if (*p == '}' || *p == ']' || *p == ')') {
				if (--depth <= 0)
					return 0;
				prev = *p;
			} else if (ident_char(*p) && depth == 1 && (prev == '{' || prev == ',')) {
				const char *e = p, *q;
				while (ident_char(*e))
					e++;
				q = e + strspn(e, " \t");
				if ((size_t)(e - p) == n && !strncmp(p, name, n) && (*q == ',' || *q == '}' || !*q))
					return 1;
				prev = 'a';
				p = e - 1;
			} else if (*p == '/' && p[1] == '/') {
				break;
			} else if (*p != ' ' && *p != '\t') {
				prev = *p;
			}
		}
	}
	return 0;
}

long bind_js_shorthand(const char *const *text, long text_nr, const char *var, const char *name, long from)
{
	long best = 0;

	for (long l = 1; l <= text_nr; l++) {
		const char *open;

		if (text[l - 1] && object_decl(text[l - 1], var, &open) && bind_js_visible(text, text_nr, l, from) &&
		    (!best || nearer(l, best, from)) && object_has_shorthand(text, text_nr, l, open, name))
			best = l;
	}
	return best;
}

/* 1 if a call made on recv at line of the file path (text) may reach defs[i] at all. */
static int js_reaches(const char *path, long line, enum bind_recv recv, const struct bind_def *d,
		      const char *kind, long dline, int declared, const struct bind_js_file *f)
{
	if (declared < 0)
		return 0;	/* a signature of a type or an interface */
	if (kind && (!strcmp(kind, "interface") || !strcmp(kind, "type")))
		return 0;	/* `new C()` where an interface C merges with class C: the class */
	if (kind && !strcmp(kind, "class") && recv == RECV_BARE)	/* new C() */
		return strcmp(d->path, path) || bind_js_visible(f->text, f->text_nr, dline, line);
	if (!kind || strcmp(kind, "function"))
		return 1;
	if (recv == RECV_BARE)
		return declared == 1 && (strcmp(d->path, path) || bind_js_visible(f->text, f->text_nr, dline, line));
	if (recv == RECV_OTHER)
		return !(declared && d->scope);	/* a function's local, or o.f = ... run inside one, is no property */
	return 1;
}

long bind_js_call(enum bind_how *how, const char *path, const char *scope, long line, enum bind_recv recv,
		  const struct bind_def *defs, const char *const *kinds, const long *lines, const int *reach,
		  const int *declared, size_t nr, const struct bind_js_file *f)
{
	struct bind_def *sd = xcalloc(nr + 1, sizeof(*sd));
	const char **sk = xcalloc(nr + 1, sizeof(*sk));
	long *sl = xcalloc(nr + 1, sizeof(*sl)), *same = xcalloc(nr + 1, sizeof(*same)), def, v;
	int *sr = xcalloc(nr + 1, sizeof(*sr));
	size_t *ix = xcalloc(nr + 1, sizeof(*ix)), n = 0, same_nr = 0;
	char var[256], cls[256];
	long obj;

	if (recv == RECV_OTHER && f->col > 0 && line >= 1 && line <= f->text_nr &&
	    bind_js_literal_receiver(f->text[line - 1], f->col)) {
		def = -1;	/* /re/.test(), 'a'.f(), {}.f(): a method of the language's own */
		goto done;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!strcmp(defs[i].path, path))
			same[same_nr++] = lines[i];
		if (!js_reaches(path, line, recv, &defs[i], kinds[i], lines[i], declared[i], f))
			continue;
		sd[n] = defs[i], sk[n] = kinds[i], sl[n] = lines[i], sr[n] = reach[i], ix[n] = i;
		n++;
	}
	if (recv == RECV_OTHER && f->col > 0 && line >= 1 && line <= f->text_nr &&
	    bind_js_receiver_var(f->text[line - 1], f->col, var, sizeof(var)) &&
	    bind_js_var_class(f->text, f->text_nr, var, line, cls, sizeof(cls)) &&
	    (def = js_method_of(path, defs, kinds, lines, reach, nr, cls)) >= 0) {
		*how = BIND_RECEIVER;	/* x.f() with x = new C() or x: C */
		if (declared[def] == -2)
			def = -1;	/* x: I, an interface or a type: its signature, no body to call */
		goto done;
	}
	if (recv == RECV_OTHER && f->col > 0 && line >= 1 && line <= f->text_nr && f->name &&
	    bind_js_receiver_var(f->text[line - 1], f->col, var, sizeof(var)) &&
	    (obj = bind_js_shorthand(f->text, f->text_nr, var, f->name, line)) > 0) {
		/* x.f() with const x = { f, ... }: the f in scope where x is made */
		const struct bind_js_file at = { f->text, f->text_nr, f->name, 0 };

		def = bind_js_call(how, path, indent(f->text[obj - 1]) > 0 ? scope : NULL, obj, RECV_BARE, defs, kinds,
				   lines, reach, declared, nr, &at);
		goto done;
	}
	def = bind_ref(how, path, scope, recv, sd, n);
	def = bind_js(how, path, scope, line, recv, sd, sk, sl, sr, n, def);
	def = def >= 0 ? (long)ix[def] : -1;
	if (def >= 0 && recv == RECV_OTHER && *how == BIND_IMPORT && kinds[def] && !strcmp(kinds[def], "method") &&
	    js_other_method(defs, kinds, lines, reach, nr, def))
		def = -1;	/* x.f(), x untyped, and two classes the imports reach have an f: not known */
	if (def < 0 && (recv == RECV_SELF || recv == RECV_SUPER) && f->text &&
	    (def = js_inherited(path, scope, defs, kinds, lines, reach, nr, f)) >= 0) {
		*how = BIND_INHERITED;	/* this.f() of a base class */
		goto done;
	}
	if (recv == RECV_BARE && def >= 0 && strcmp(defs[def].path, path)) {
		/* another file's function, by name only: the imports do not reach it */
		if (*how == BIND_NAME && !reach[def])
			def = -1;
		/* a variable of the file (const x = make(), const { x } = o) is what x() calls */
		else if (f->name && bind_js_variable(f->text, f->text_nr, f->name, line, same, same_nr))
			def = -1;
	} else if (recv == RECV_BARE && def >= 0 && f->name &&
		   (v = bind_js_variable(f->text, f->text_nr, f->name, line, same, same_nr)) &&
		   nearer(v, lines[def], line)) {
		def = -1;	/* a nearer variable of the same name shadows the function */
	}
done:
	if (def < 0)
		*how = BIND_NONE;
	free(sd);
	free(sk);
	free(sl);
	free(same);
	free(sr);
	free(ix);
	return def;
}
