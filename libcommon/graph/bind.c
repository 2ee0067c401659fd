/*
 * bind.c: rank the definitions a reference may reach (see bind.h).  Called
 * once per reference of a callers/callees question, over the few definitions
 * of one name: a linear pass, no allocation.
 */
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
 * TypeScript: an overloaded function's signatures and its implementation are
 * definitions of one scope, one after the other (each within 30 lines of the
 * one before): the implementation, the last of them, stands for all.
 */
static long ts_implementation(const struct bind_def *defs, const char *const *kinds,
			      const long *lines, size_t nr, long def)
{
	int more = def >= 0 && kinds[def] && !strcmp(kinds[def], "function") &&
		   (ends_in(defs[def].path, ".ts") || ends_in(defs[def].path, ".tsx") ||
		    ends_in(defs[def].path, ".mts") || ends_in(defs[def].path, ".cts"));

	while (more) {
		long next = -1;
		for (size_t i = 0; i < nr; i++)
			if (!strcmp(defs[i].path, defs[def].path) && same_scope(defs[i].scope, defs[def].scope) &&
			    kinds[i] && !strcmp(kinds[i], "function") && lines[i] > lines[def] &&
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
		if (!kinds[i] || strcmp(kinds[i], "function"))
			continue;
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
		return nested;
	}
	if (*how == BIND_LOCAL || *how == BIND_IMPORT || *how == BIND_MEMBER || here >= 0)
		return ts_implementation(defs, kinds, lines, nr, def);
	if (reached_nr == 1) {
		*how = BIND_IMPORT;
		return ts_implementation(defs, kinds, lines, nr, reached);
	}
	return ts_implementation(defs, kinds, lines, nr, def);
}
