/*
 * couple.c: files that change together (couple.h): for each pair of files,
 * the commits changing both, scored against how often each changes and how
 * long ago they last changed together.
 *
 * Shaped by long histories: pairs are counted in an open-addressing table
 * keyed by the two path ids, over the commits that are not huge (a commit
 * changing hundreds of files says nothing about any two of them), so the
 * table grows with the pairs seen, never with the square of the files.
 */
#include "core/common.h"
#include "history/couple.h"

#include <math.h>

struct pair {
	uint32_t a, b;		/* path ids (current names), a < b as ids */
	uint32_t co;		/* commits changing both */
	int64_t last;		/* newest of those */
};

struct pairs {
	struct pair *v;		/* open addressing, a == HPATH_NONE empty */
	size_t nr, cap;		/* used, slots (a power of two) */
};

static struct pair *pair_get(struct pairs *ps, uint32_t a, uint32_t b)
{
	uint64_t key = ((uint64_t)a << 32) | b, h;
	size_t i;

	if ((ps->nr + 1) * 2 > ps->cap) {
		size_t ncap = ps->cap ? ps->cap * 2 : 4096, k;
		struct pair *nv = xmalloc(ncap * sizeof(*nv));
		for (k = 0; k < ncap; k++)
			nv[k].a = HPATH_NONE;
		for (k = 0; k < ps->cap; k++) {
			struct pair *p = &ps->v[k];
			if (p->a == HPATH_NONE)
				continue;
			h = (((uint64_t)p->a << 32) | p->b) * 0x9E3779B97F4A7C15ULL;
			for (i = (size_t)(h >> 20) & (ncap - 1); nv[i].a != HPATH_NONE; i = (i + 1) & (ncap - 1))
				;
			nv[i] = *p;
		}
		free(ps->v);
		ps->v = nv;
		ps->cap = ncap;
	}
	h = key * 0x9E3779B97F4A7C15ULL;
	for (i = (size_t)(h >> 20) & (ps->cap - 1); ps->v[i].a != HPATH_NONE; i = (i + 1) & (ps->cap - 1))
		if (ps->v[i].a == a && ps->v[i].b == b)
			return &ps->v[i];
	ps->v[i].a = a;
	ps->v[i].b = b;
	ps->v[i].co = 0;
	ps->v[i].last = INT64_MIN;
	ps->nr++;
	return &ps->v[i];
}

/* The distinct current names a commit changed, sorted by id, in *ids. */
static size_t commit_ids(const struct hcommit *c, uint32_t **ids, size_t *alloc)
{
	size_t k, n = 0, i;

	ALLOC_GROW(*ids, c->files_nr + 1, *alloc);
	for (k = 0; k < c->files_nr; k++) {
		uint32_t id = c->files[k].cur;
		for (i = 0; i < n && (*ids)[i] != id; i++)
			;
		if (i == n)
			(*ids)[n++] = id;
	}
	/* insertion sort: commits are small (huge ones are skipped) */
	for (k = 1; k < n; k++) {
		uint32_t v = (*ids)[k];
		for (i = k; i > 0 && (*ids)[i - 1] > v; i--)
			(*ids)[i] = (*ids)[i - 1];
		(*ids)[i] = v;
	}
	return n;
}

void couple_count_changes(const struct history *h, struct file_stats *fs)
{
	size_t i, k, n, alloc = 0;
	uint32_t *ids = NULL;

	fs->changes = xcalloc(h->paths.nr ? h->paths.nr : 1, sizeof(*fs->changes));
	fs->last = xcalloc(h->paths.nr ? h->paths.nr : 1, sizeof(*fs->last));
	for (i = 0; i < h->nr; i++) {
		if (h->c[i].huge)
			continue;
		n = commit_ids(&h->c[i], &ids, &alloc);
		for (k = 0; k < n; k++) {
			if (!fs->changes[ids[k]]++ || h->c[i].time > fs->last[ids[k]])
				fs->last[ids[k]] = h->c[i].time;
		}
	}
	free(ids);
}

/* couple_score(): see couple.h. */
double couple_score(const struct history *h, const struct file_stats *fs, uint32_t a, uint32_t b,
		    uint32_t co, int64_t last, double half_life)
{
	uint32_t na = fs->changes[a], nb = fs->changes[b], m = na < nb ? na : nb;
	double freq = (double)co / (double)(m < 2 ? 2 : m);
	double age = (double)(h->newest - last) / 86400.0;

	if (age < 0)
		age = 0;
	return hist_round4(freq * pow(0.5, age / half_life));
}

static int cmp_scored(const void *x, const void *y, void *paths)
{
	const struct couple_scored *p = x, *q = y;
	const struct hpaths *sort_paths = paths;
	int c;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	if ((c = strcmp(sort_paths->names[p->a], sort_paths->names[q->a])))
		return c;
	return strcmp(sort_paths->names[p->b], sort_paths->names[q->b]);
}

/* couple_related(): see couple.h. */
size_t couple_related(const struct history *h, const struct file_stats *fs, uint32_t file,
			    double half_life, double threshold, long min_co, struct head_files *hf,
			    struct couple_scored **out)
{
	struct pairs ps = { NULL, 0, 0 };
	struct couple_scored *v = NULL;
	size_t i, k, n, nr = 0, alloc = 0, ialloc = 0;
	uint32_t *ids = NULL;

	for (i = 0; i < h->nr; i++) {
		const struct hcommit *c = &h->c[i];
		int touches = 0;

		if (c->huge)
			continue;
		for (k = 0; k < c->files_nr && !touches; k++)
			touches = c->files[k].cur == file;
		if (!touches)
			continue;
		n = commit_ids(c, &ids, &ialloc);
		for (k = 0; k < n; k++) {
			struct pair *p;
			if (ids[k] == file)
				continue;
			p = pair_get(&ps, file, ids[k]);
			p->co++;
			if (c->time > p->last)
				p->last = c->time;
		}
	}
	for (i = 0; i < ps.cap; i++) {
		struct pair *p = &ps.v[i];
		struct couple_scored s;

		if (p->a == HPATH_NONE || (long)p->co < min_co)
			continue;
		s.a = p->a;
		s.b = p->b;
		s.co = p->co;
		s.last = p->last;
		s.score = couple_score(h, fs, p->a, p->b, p->co, p->last, half_life);
		if (s.score < threshold)
			continue;
		if (hf && !head_has(hf, h->paths.names[p->b]))
			continue;
		ALLOC_GROW(v, nr + 1, alloc);
		v[nr++] = s;
	}
	if (nr)
		qsort_r(v, nr, sizeof(*v), cmp_scored, (void *)&h->paths);
	free(ps.v);
	free(ids);
	*out = v;
	return nr;
}

void file_stats_release(struct file_stats *fs)
{
	free(fs->changes);
	free(fs->last);
	fs->changes = NULL;
	fs->last = NULL;
}

/* couple_table(): see couple.h. */
size_t couple_table(const struct history *h, const struct file_stats *fs, const struct couple_opts *o,
		    struct head_files *hf, struct couple_scored **out, long *huge)
{
	struct pairs ps = { NULL, 0, 0 };
	struct couple_scored *v = NULL;
	size_t i, k, n, nr = 0, alloc = 0, ialloc = 0;
	uint32_t *ids = NULL;

	*huge = 0;
	for (i = 0; i < h->nr; i++) {
		const struct hcommit *c = &h->c[i];
		if (c->huge) {
			(*huge)++;
			continue;
		}
		n = commit_ids(c, &ids, &ialloc);
		for (k = 0; k < n; k++)
			for (size_t j = k + 1; j < n; j++) {
				struct pair *p = pair_get(&ps, ids[k], ids[j]);
				p->co++;
				if (c->time > p->last)
					p->last = c->time;
			}
	}
	for (i = 0; i < ps.cap; i++) {
		struct pair *p = &ps.v[i];
		struct couple_scored s;

		if (p->a == HPATH_NONE || (long)p->co < o->min_co)
			continue;
		s.score = couple_score(h, fs, p->a, p->b, p->co, p->last, o->half_life);
		if (s.score < o->threshold)
			continue;
		if (hf && (!head_has(hf, h->paths.names[p->a]) || !head_has(hf, h->paths.names[p->b])))
			continue;
		/* a < b bytewise */
		if (strcmp(h->paths.names[p->a], h->paths.names[p->b]) < 0)
			s.a = p->a, s.b = p->b;
		else
			s.a = p->b, s.b = p->a;
		s.co = p->co;
		s.last = p->last;
		ALLOC_GROW(v, nr + 1, alloc);
		v[nr++] = s;
	}
	free(ps.v);
	free(ids);
	if (nr)
		qsort_r(v, nr, sizeof(*v), cmp_scored, (void *)&h->paths);
	*out = v;
	return nr;
}
