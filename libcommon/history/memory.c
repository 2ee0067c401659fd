/*
 * memory.c: the history in memory (history.h): interned paths, commits,
 * renames followed to current names.
 *
 * Shaped by long histories: a path is a 32-bit id found by an open-addressing
 * hash (FNV-1a), so the analyses count pairs of ids, not of strings.
 */
#include "core/common.h"
#include "history/history.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

uint32_t hpaths_find(const struct hpaths *ps, const char *s)
{
	size_t i;

	if (!ps->cap)
		return HPATH_NONE;
	for (i = hash_str(s) & (ps->cap - 1); ps->slots[i]; i = (i + 1) & (ps->cap - 1))
		if (!strcmp(ps->names[ps->slots[i] - 1], s))
			return ps->slots[i] - 1;
	return HPATH_NONE;
}

uint32_t hpaths_intern(struct hpaths *ps, const char *s)
{
	uint32_t id = hpaths_find(ps, s);
	size_t i;

	if (id != HPATH_NONE)
		return id;
	if ((ps->nr + 1) * 2 > ps->cap) {
		size_t ncap = ps->cap ? ps->cap * 2 : 1024, k;
		uint32_t *ns = xcalloc(ncap, sizeof(*ns));
		for (k = 0; k < ps->nr; k++) {
			for (i = hash_str(ps->names[k]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1))
				;
			ns[i] = (uint32_t)k + 1;
		}
		free(ps->slots);
		ps->slots = ns;
		ps->cap = ncap;
	}
	ALLOC_GROW(ps->names, ps->nr + 1, ps->alloc);
	ps->names[ps->nr] = xstrdup(s);
	for (i = hash_str(s) & (ps->cap - 1); ps->slots[i]; i = (i + 1) & (ps->cap - 1))
		;
	ps->slots[i] = (uint32_t)ps->nr + 1;
	return (uint32_t)ps->nr++;
}

void hpaths_release(struct hpaths *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		free(ps->names[i]);
	free(ps->names);
	free(ps->slots);
	memset(ps, 0, sizeof(*ps));
}

void history_release(struct history *h)
{
	size_t i;

	for (i = 0; i < h->nr; i++) {
		free(h->c[i].author);
		free(h->c[i].email);
		free(h->c[i].message);
		free(h->c[i].files);
	}
	free(h->c);
	free(h->renamed_to);
	hpaths_release(&h->paths);
	memset(h, 0, sizeof(*h));
}

struct hcommit *history_add(struct history *h)
{
	struct hcommit *c;

	ALLOC_GROW(h->c, h->nr + 1, h->alloc);
	c = &h->c[h->nr++];
	memset(c, 0, sizeof(*c));
	return c;
}

static int cmp_hfile_name(const void *a, const void *b, void *ps)
{
	const struct hfile *x = a, *y = b;
	const struct hpaths *p = ps;

	return strcmp(p->names[x->path], p->names[y->path]);
}

void history_sort_files(struct history *h, struct hcommit *c)
{
	if (c->files_nr)
		qsort_r(c->files, c->files_nr, sizeof(*c->files), cmp_hfile_name, &h->paths);
}

/*
 * Follow renames: walking from the newest commit back, a file's name at the newest
 * commit is its current name ("cur"); a rename old -> new makes old, in every older
 * commit, a name of whatever new is now.  Names map in one step (a map entry holds
 * the final name), so a name reused after a rename is told apart by time.
 */
void history_follow_renames(struct history *h)
{
	size_t i, k;

	free(h->renamed_to);
	h->renamed_to = xmalloc((h->paths.nr ? h->paths.nr : 1) * sizeof(*h->renamed_to));
	for (i = 0; i < h->paths.nr; i++)
		h->renamed_to[i] = HPATH_NONE;
	for (i = 0; i < h->nr; i++) {
		struct hcommit *c = &h->c[i];

		for (k = 0; k < c->files_nr; k++) {
			uint32_t p = c->files[k].path;
			c->files[k].cur = h->renamed_to[p] != HPATH_NONE ? h->renamed_to[p] : p;
		}
		for (k = 0; k < c->files_nr; k++) {
			struct hfile *f = &c->files[k];
			if (f->old_path != HPATH_NONE && f->old_path != f->cur)
				h->renamed_to[f->old_path] = f->cur;
		}
	}
	h->newest = 0;
	for (i = 0; i < h->nr; i++)
		if (i == 0 || h->c[i].time > h->newest)
			h->newest = h->c[i].time;
}

/* The current name of a path given by the user, or HPATH_NONE if history never saw it. */
uint32_t history_lookup(const struct history *h, const char *path)
{
	uint32_t id = hpaths_find(&h->paths, path);

	if (id == HPATH_NONE)
		return HPATH_NONE;
	if (h->renamed_to && h->renamed_to[id] != HPATH_NONE) {
		/* an old name, unless a file still has that name */
		size_t i, k;
		for (i = 0; i < h->nr; i++)
			for (k = 0; k < h->c[i].files_nr; k++)
				if (h->c[i].files[k].cur == id)
					return id;
		return h->renamed_to[id];
	}
	return id;
}
