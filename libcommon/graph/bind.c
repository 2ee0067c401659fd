/*
 * bind.c: rank the definitions a reference may reach (see bind.h).  Called
 * once per reference of a callers/callees question, over the few definitions
 * of one name: a linear pass, no allocation.
 */
#include "common.h"
#include "graph/bind.h"

const char *bind_how_name(enum bind_how how)
{
	switch (how) {
	case BIND_MEMBER: return "member";
	case BIND_LOCAL: return "local";
	case BIND_IMPORT: return "import";
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

long bind_ref(enum bind_how *how, const char *path, const char *scope,
	      const struct bind_def *defs, size_t nr)
{
	long best = -1;
	enum bind_how bh = BIND_NONE;

	for (size_t i = 0; i < nr; i++) {
		const struct bind_def *d = &defs[i];
		enum bind_how h = BIND_NONE;

		if (!strcmp(d->path, path)) {
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
	if (bh == BIND_NONE && nr == 1) {
		bh = BIND_NAME;
		best = 0;
	}
	*how = bh;
	return best;
}
