/*
 * unit-imports-lib.h: what the import resolution tests share (unit-imports.c,
 * unit-imports-config.c): TAP lines, a fixture written to a temporary
 * directory, a table of imports and the paths they resolve to, and a thread
 * that resolves a table many times over one shared context.  Each test
 * includes it once.
 */
#ifndef UNIT_IMPORTS_LIB_H
#define UNIT_IMPORTS_LIB_H

#include "core/common.h"
#include "parse/imports.h"

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */
static char *tmpdir;	/* the fixture's directory */

/* One TAP line: ok when got equals want (both may be NULL).  Frees got. */
static void is_path(char *got, const char *want, const char *desc)
{
	int ok = (!got && !want) || (got && want && !strcmp(got, want));

	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		printf("#   got:      %s\n", got ? got : "(null)");
		printf("#   expected: %s\n", want ? want : "(null)");
		failures++;
	}
	free(got);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* rel under tmpdir, its directories made, with text ("@ROOT@": tmpdir). */
static void write_file(const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", tmpdir, rel);
	struct buf b = BUF_INIT;
	const char *at;
	char *p;
	FILE *f;

	for (p = strchr(path + strlen(tmpdir) + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0777) && errno != EEXIST)
			die_code(99, "cannot create '%s'", path);
		*p = '/';
	}
	while ((at = strstr(text, "@ROOT@"))) {
		buf_add(&b, text, (size_t)(at - text));
		buf_addstr(&b, tmpdir);
		text = at + 6;
	}
	buf_addstr(&b, text);
	f = fopen(path, "w");
	if (!f || fputs(b.buf, f) < 0 || fclose(f))
		die_code(99, "cannot write '%s'", path);
	buf_release(&b);
	free(path);
}

/* nftw's callback that removes the fixture. */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

struct tcase {
	const char *lang, *from, *target;	/* the import */
	const char *want;			/* the expected path, or NULL */
};

/* A TAP line per case, each named after mode and the import. */
static void run_cases(const struct import_ctx *ctx, const struct tcase *cases, size_t nr, const char *mode)
{
	for (size_t i = 0; i < nr; i++) {
		const struct tcase *t = &cases[i];
		char *desc = xasprintf("%s%s: %s imports '%s'", mode, t->lang, t->from, t->target);

		is_path(import_resolve(ctx, t->lang, t->from, t->target), t->want, desc);
		free(desc);
	}
}

/* A thread's work: rounds resolutions of the cases over ctx (shared). */
struct thread_arg {
	const struct import_ctx *ctx;
	const struct tcase *cases;
	size_t nr;
	int rounds;
	int bad;			/* resolutions that went wrong */
};

static void *resolve_many(void *p)
{
	struct thread_arg *a = p;

	for (int i = 0; i < a->rounds; i++) {
		const struct tcase *t = &a->cases[(size_t)i % a->nr];
		char *got = import_resolve(a->ctx, t->lang, t->from, t->target);

		if ((got == NULL) != (t->want == NULL) || (got && strcmp(got, t->want)))
			a->bad++;
		free(got);
	}
	return NULL;
}

#endif
