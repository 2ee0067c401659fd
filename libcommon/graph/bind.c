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
