/*
 * dead.c: definitions nothing reaches (cgraph.h).
 *
 * A definition is used when a call binds to it from outside its own body,
 * when an unbound call may reach it (several definitions fit and none is
 * preferred), when a reference of another kind names it, or when its name is
 * mentioned outside calls and definitions (a callback passed by name, a
 * string in __all__, an import, a prototype).  Entry points are never dead:
 * main, tests, dunder methods, decorated definitions (routes, commands,
 * fixtures register themselves), names exported by a package's __init__.py
 * (a mention there), names with the prefix of a string such as "cmd_"
 * (looked up at run time: getattr(self, "cmd_" + name)), methods of a
 * Python class with a base the index does not define (overrides of a
 * library's methods, which the library calls).  What is left is conservative: an agent deleting a
 * reported definition should find it truly unused more often than not.
 */
#include "core/common.h"
#include "graph/cgraph.h"
#include "graph/gstore.h"

#include <ctype.h>

int cgraph_is_test_path(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t n;

	base = base ? base + 1 : path;
	if (!strncmp(path, "t/", 2) || strstr(path, "/t/") ||
	    !strncmp(path, "test/", 5) || !strncmp(path, "tests/", 6) || strstr(path, "/test/") ||
	    strstr(path, "/tests/") || !strncmp(path, "testing/", 8) || strstr(path, "/testing/"))
		return 1;
	if (!strncmp(base, "test_", 5) || !strcmp(base, "conftest.py"))
		return 1;
	dot = strchr(base, '.');
	n = dot ? (size_t)(dot - base) : strlen(base);
	if ((n > 5 && !strncmp(base + n - 5, "_test", 5)) || (n > 5 && !strncmp(base + n - 5, "_spec", 5)))
		return 1;
	return dot && (strstr(dot, ".test.") || strstr(dot, ".spec."));
}

const char *cgraph_entry_reason(const struct cgraph *g, const struct cg_def *d)
{
	const char *name = cg_name(g, d);
	size_t n = strlen(name);

	if (!strcmp(name, "main") || !strcmp(name, "__main__") || !strcmp(name, "wmain") ||
	    !strncmp(name, "LLVMFuzzer", 10))
		return "main";	/* LLVMFuzzerTestOneInput: a fuzzer's entry */
	if (cgraph_is_test_path(cg_path(g, d)))
		return "test";
	if (!strncmp(name, "test", 4) || !strncmp(name, "Test", 4) || !strncmp(name, "Benchmark", 9) ||
	    !strncmp(name, "Example", 7) || !strncmp(name, "Fuzz", 4))
		return "test";
	if (n > 4 && !strncmp(name, "__", 2) && !strcmp(name + n - 2, "__"))
		return "dunder";
	if (d->decorated)
		return "decorated";
	if (d->dynamic)
		return "dynamic";
	if (d->override)
		return "override";
	if (!strcmp(name, "setUp") || !strcmp(name, "tearDown") || !strcmp(name, "setUpClass") ||
	    !strcmp(name, "tearDownClass"))
		return "test";
	return NULL;
}

/* The kinds dead looks at without --kind: what is called. */
static int dead_default_kind(const char *kind)
{
	return !strcmp(kind, "function") || !strcmp(kind, "method") || !strcmp(kind, "constructor") ||
	       !strcmp(kind, "class");
}

/* Why d is dead (GS_*), or GS_REACHED when something reaches it. */
int cgraph_dead_reason(const struct cg_def *d, struct cg_counts c)
{
	if (d->uses)
		return GS_REACHED;
	if (c.self_calls)
		return GS_RECURSIVE_ONLY;
	if (c.namesake_calls)
		return GS_NAMESAKE_ONLY;
	return GS_UNREFERENCED;
}

const char *gstore_reason_name(int reason)
{
	static const char *const names[] = { NULL, "unreferenced", "recursive_only", "namesake_calls_only" };

	return reason > 0 && reason <= GS_NAMESAKE_ONLY ? names[reason] : NULL;
}

void dead_emit(struct refs *r, const struct cgraph *g, const struct cg_def *d, struct cg_counts c,
	       const char *name, const char *scope, const char *why)
{
	struct buf *b = &r->out;

	nd_begin(b, "dead");
	nd_str(b, "name", name);
	nd_str(b, "kind", cg_kind(g, d));
	nd_str(b, "path", cg_path(g, d));
	nd_int(b, "line", d->line);
	nd_int(b, "end_line", d->end_line);
	nd_str(b, "scope", scope);
	nd_str(b, "lang", cg_lang(g, d));
	nd_str(b, "reason", why);
	nd_int(b, "namesake_calls", c.namesake_calls);
	nd_int(b, "self_calls", c.self_calls);
	nd_str(b, "confidence", "syntactic");
	nd_end(b);
	refs_flush(r);
	r->emitted++;
}

int dead_wanted(const struct refs *r, const char *kind, const char *path, const char *lang)
{
	if (r->o.kind ? !refs_kind_matches(r->o.kind, kind) : !dead_default_kind(kind))
		return 0;
	return refs_path_ok(r, path) && !(r->o.lang && (!lang || strcmp(r->o.lang, lang)));
}

int refs_dead(struct refs *r)
{
	struct cgraph g;
	size_t seen = 0, found = 0;
	/* one read transaction: the stamp and what it vouches for */
	int txn = refs_read_begin(r);

	if (gstore_valid(r)) {
		int ret = gstore_dead(r);
		refs_read_end(r, txn);
		return ret;
	}
	cgraph_load(&g, r, CG_MENTIONS);
	refs_read_end(r, txn);
	for (size_t i = 0; i < g.defs_nr; i++) {
		const struct cg_def *d = &g.defs[i];
		struct cg_counts c;
		const char *why;

		if (!dead_wanted(r, cg_kind(&g, d), cg_path(&g, d), cg_lang(&g, d)))
			continue;
		seen++;
		c = cgraph_counts(&g, i);
		if (cgraph_entry_reason(&g, d) || !(why = gstore_reason_name(cgraph_dead_reason(d, c))))
			continue;
		found++;
		if (r->emitted < r->o.limit)
			dead_emit(r, &g, d, c, cg_name(&g, d), cg_scope(&g, d), why);
	}
	if (!found)
		fprintf(stderr, "%s: nothing unreached among %zu definitions\n", progname, seen);
	cgraph_release(&g);
	return found ? EXIT_OK : EXIT_NOTHING;
}
