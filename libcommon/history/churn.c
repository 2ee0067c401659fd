/*
 * churn.c: hotspots, the files that change much and are complex (churn x
 * complexity at HEAD), and the history of one file: its commits, lines,
 * authors and rates (couple.h).
 *
 * Complexity is measured on HEAD's blobs with the tree-sitter grammars
 * (complexity.h); churn over --since, a year by default, as bobbin does.
 */
#include "core/common.h"
#include "history/couple.h"
#include "parse/complexity.h"
#include "parse/lang.h"

#include <math.h>

static int cmp_hotspot(const void *x, const void *y, void *paths)
{
	const struct hotspot *p = x, *q = y;
	const struct hpaths *sort_paths = paths;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	return strcmp(sort_paths->names[p->path], sort_paths->names[q->path]);
}

/* Per current name: lines changed and commits, over the commits that are not huge. */
static void sum_churn(const struct history *h, long *churn, long *commits)
{
	for (size_t i = 0; i < h->nr; i++) {
		const struct hcommit *c = &h->c[i];
		if (c->huge)
			continue;
		for (size_t k = 0; k < c->files_nr; k++) {
			const struct hfile *f = &c->files[k];
			commits[f->cur]++;
			if (f->added > 0)
				churn[f->cur] += f->added;
			if (f->deleted > 0)
				churn[f->cur] += f->deleted;
		}
	}
}

/*
 * The files changed and present at HEAD whose complexity can be measured, as
 * hotspots without their score; 0, or -1 after reporting.
 */
static int measure(struct hrepo *r, struct hotspots *hs, struct head_files *hf, const long *churn,
		   const long *commits, size_t *alloc)
{
	const struct history *h = &hs->h;
	struct complexity *cx = complexity_new();
	int ret = 0;

	for (size_t i = 0; i < h->paths.nr; i++) {
		const char *path = h->paths.names[i];
		struct hotspot x;
		const struct lang *l;
		char *data;
		size_t n;
		int rc;

		if (!commits[i] || (h->renamed_to[i] != HPATH_NONE && !head_has(hf, path)))
			continue;
		if (walk_is_vendored_path(path) || walk_is_generated_name(path))
			continue;
		rc = hist_read_tree_blob(r->w.repo, hf->tree, path, &data, &n);
		if (rc < 0) {
			ret = -1;
			break;
		}
		if (rc > 0)
			continue;
		l = lang_detect(path, data, n < 256 ? n : 256);
		memset(&x, 0, sizeof(x));
		if (l && l->grammar && n <= WALK_DEFAULT_MAX_FILESIZE &&
		    walk_classify(NULL, path, data, n) == WALK_OK &&
		    complexity_of(cx, l, data, n, &x.complexity, NULL) == 0) {
			x.path = (uint32_t)i;
			x.lang = l;
			x.churn = churn[i];
			x.commits = commits[i];
			ALLOC_GROW(hs->v, hs->nr + 1, *alloc);
			hs->v[hs->nr++] = x;
		}
		free(data);
	}
	complexity_free(cx);
	return ret;
}

/* Score (both on a log scale, normalised by the largest, then their geometric
 * mean), sort, cut at the threshold and the limit. */
static void rank(struct hotspots *hs, double threshold, long limit)
{
	long max_churn = 0, max_cx = 0;
	size_t i;

	for (i = 0; i < hs->nr; i++) {
		if (hs->v[i].churn > max_churn)
			max_churn = hs->v[i].churn;
		if (hs->v[i].complexity > max_cx)
			max_cx = hs->v[i].complexity;
	}
	for (i = 0; i < hs->nr; i++) {
		double cn = max_churn ? log1p((double)hs->v[i].churn) / log1p((double)max_churn) : 0;
		double xn = max_cx ? log1p((double)hs->v[i].complexity) / log1p((double)max_cx) : 0;
		hs->v[i].score = hist_round4(sqrt(cn * xn));
	}
	if (hs->nr)
		qsort_r(hs->v, hs->nr, sizeof(*hs->v), cmp_hotspot, &hs->h.paths);
	for (i = 0; i < hs->nr; i++)
		if (hs->v[i].score < threshold || hs->v[i].score <= 0)
			break;
	hs->nr = i;
	if (limit > 0 && (size_t)limit < hs->nr)
		hs->nr = (size_t)limit;
}

int couple_hotspots(const struct couple_opts *o, struct hrepo *r, struct hotspots *hs)
{
	struct couple_opts oo = *o;
	struct head_files hf = { NULL };
	long *churn = NULL, *commits = NULL, limit = o->limit;
	size_t alloc = 0;
	int ret = EXIT_OK;

	memset(hs, 0, sizeof(*hs));
	if (oo.since.kind == SINCE_NONE)
		since_parse("1 year ago", &oo.since);	/* bobbin's default */
	if (limit < 0)
		limit = 20;
	if (history_load(&oo, r, &hs->h, 1) < 0)
		return EXIT_IO;
	hs->since = since_resolve(&oo.since, r->head_time);
	if (head_files_open(r, &hf) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	churn = xcalloc(hs->h.paths.nr + 1, sizeof(*churn));
	commits = xcalloc(hs->h.paths.nr + 1, sizeof(*commits));
	sum_churn(&hs->h, churn, commits);
	if (measure(r, hs, &hf, churn, commits, &alloc) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	rank(hs, o->threshold, limit);
done:
	free(churn);
	free(commits);
	head_files_close(&hf);
	return ret;
}

void hotspots_release(struct hotspots *hs)
{
	free(hs->v);
	history_release(&hs->h);
	memset(hs, 0, sizeof(*hs));
}

static int cmp_author(const void *x, const void *y)
{
	const struct author_count *p = x, *q = y;
	int c;

	if (p->commits != q->commits)
		return p->commits > q->commits ? -1 : 1;
	if ((c = strcmp(p->name, q->name)))
		return c;
	return strcmp(p->email ? p->email : "", q->email ? q->email : "");
}

/* Count commit c for its author. */
static void count_author(struct file_history *fh, size_t *alloc, const struct hcommit *c)
{
	size_t j;

	for (j = 0; j < fh->authors_nr; j++)
		if (!strcmp(fh->authors[j].name, c->author) &&
		    !strcmp(fh->authors[j].email ? fh->authors[j].email : "", c->email ? c->email : ""))
			break;
	if (j == fh->authors_nr) {
		ALLOC_GROW(fh->authors, fh->authors_nr + 1, *alloc);
		fh->authors[fh->authors_nr].name = c->author;
		fh->authors[fh->authors_nr].email = c->email;
		fh->authors[fh->authors_nr++].commits = 0;
	}
	fh->authors[j].commits++;
}

void couple_file_history(const struct history *h, uint32_t id, struct file_history *fh)
{
	size_t i, k, alloc = 0;

	memset(fh, 0, sizeof(*fh));
	for (i = 0; i < h->nr; i++) {
		const struct hcommit *c = &h->c[i];
		int touches = 0;

		for (k = 0; k < c->files_nr; k++)
			if (c->files[k].cur == id) {
				touches = 1;
				if (c->files[k].added > 0)
					fh->added += c->files[k].added;
				if (c->files[k].deleted > 0)
					fh->deleted += c->files[k].deleted;
			}
		if (!touches)
			continue;
		if (!fh->commits++)
			fh->last = c->time;
		if (c->time > fh->last)
			fh->last = c->time;
		if (fh->commits == 1 || c->time < fh->first)
			fh->first = c->time;
		count_author(fh, &alloc, c);
	}
	if (fh->authors_nr)
		qsort(fh->authors, fh->authors_nr, sizeof(*fh->authors), cmp_author);
	/* the file's life: from its first change to the newest commit read, a month at least */
	fh->months = (double)(h->newest - fh->first) / (30.436875 * 86400.0);
	if (fh->months < 1)
		fh->months = 1;
}

void file_history_release(struct file_history *fh)
{
	free(fh->authors);
	memset(fh, 0, sizeof(*fh));
}
