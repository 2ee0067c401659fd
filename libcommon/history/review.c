/*
 * review.c: the code a diff touches, widened through coupling (couple.h):
 * the chunks overlapping changed lines, then the chunks of the files that
 * change with the changed ones (o->depth steps out, scores multiplied along
 * the way), those whose name the changed code uses first, all in a budget of
 * lines shared fairly among the coupled files.
 *
 * Shaped by an agent reviewing a change: it wants the changed code and the
 * code that usually changes with it, in one answer that fits its context.
 */
#include "core/common.h"
#include "history/couple.h"
#include "parse/chunk.h"
#include "parse/lang.h"

#include <ctype.h>
#include <sys/stat.h>

/* Where the new side of the diff is read from. */
struct side {
	enum { SIDE_WORKDIR, SIDE_INDEX, SIDE_TREE } kind;	/* which */
	git_tree *tree;		/* SIDE_TREE */
	git_index *index;	/* SIDE_INDEX */
};

/* Read path on side into *data (malloc'd, NUL-terminated).  1 if absent. */
static int side_read(struct hrepo *r, const struct side *s, const char *path, char **data, size_t *n)
{
	*data = NULL;
	*n = 0;
	if (s->kind == SIDE_TREE)
		return hist_read_tree_blob(r->w.repo, s->tree, path, data, n);
	if (s->kind == SIDE_INDEX) {
		const git_index_entry *e = git_index_get_bypath(s->index, path, 0);
		git_blob *blob;

		if (!e)
			return 1;
		if (git_blob_lookup(&blob, r->w.repo, &e->id) < 0)
			return hist_git_error("cannot read blob");
		*n = (size_t)git_blob_rawsize(blob);
		*data = xmalloc(*n + 1);
		memcpy(*data, git_blob_rawcontent(blob), *n);
		(*data)[*n] = '\0';
		git_blob_free(blob);
		return 0;
	} else {
		char *full = xasprintf("%s/%s", r->w.root, path);
		struct stat st;
		int rc;

		if (lstat(full, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(full);
			return 1;
		}
		rc = read_file(full, data, n);
		free(full);
		return rc < 0 ? -1 : 0;
	}
}

struct range {
	long start, end;	/* lines of the new side, inclusive */
};

struct review_changed {
	char *path;		/* new side path */
	char status;		/* A M D R */
	struct range *ranges;	/* changed lines */
	size_t ranges_nr, ranges_alloc;	/* used, allocated */
	long lines;		/* lines changed (added on the new side, or 1 per deletion) */
};

static git_tree *commit_tree(git_commit *c)
{
	git_tree *t = NULL;

	if (c && git_commit_tree(&t, c) < 0) {
		git_error_clear();
		return NULL;
	}
	return t;
}

/* Chunks of one file's text, as rchunks for path, appended to *v. */
static void chunk_text(struct chunker *ck, const char *path, const char *data, size_t n,
		       struct rchunk **v, size_t *nr, size_t *alloc)
{
	const struct lang *l = lang_detect(path, data, n < 256 ? n : 256);
	struct buf out = BUF_INIT, warn = BUF_INIT;
	const char *p, *nl;

	chunker_file(ck, path, l, data, n, NULL, &out, &warn);
	for (p = out.buf; p < out.buf + out.len; p = nl + 1) {
		json_t *rec;
		json_error_t je;

		nl = memchr(p, '\n', (size_t)(out.buf + out.len - p));
		if (!nl)
			nl = out.buf + out.len;
		rec = json_loadb(p, (size_t)(nl - p), 0, &je);
		if (rec && !strcmp(json_string_value(json_object_get(rec, "_type")) ?
				   json_string_value(json_object_get(rec, "_type")) : "", "chunk")) {
			struct rchunk *c;
			const char *name = json_string_value(json_object_get(rec, "name"));

			ALLOC_GROW(*v, *nr + 1, *alloc);
			c = &(*v)[(*nr)++];
			memset(c, 0, sizeof(*c));
			c->path = (char *)path;
			c->start = (long)json_integer_value(json_object_get(rec, "start_line"));
			c->end = (long)json_integer_value(json_object_get(rec, "end_line"));
			c->kind = xstrdup(json_string_value(json_object_get(rec, "kind")) ?
					  json_string_value(json_object_get(rec, "kind")) : "");
			c->name = name ? xstrdup(name) : NULL;
			c->text = xstrdup(json_string_value(json_object_get(rec, "text")) ?
					  json_string_value(json_object_get(rec, "text")) : "");
		}
		json_decref(rec);
	}
	buf_release(&out);
	buf_release(&warn);
}

static void rchunk_release(struct rchunk *c)
{
	free(c->kind);
	free(c->name);
	free(c->text);
}

/* 1 if word occurs in text as a whole identifier. */
static int has_word(const char *text, const char *word)
{
	size_t l = strlen(word);
	const char *p = text;

	if (l < 3)
		return 0;
	while ((p = strstr(p, word))) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[l]) || p[l] == '_';
		if (!before && !after)
			return 1;
		p += l;
	}
	return 0;
}

static int cmp_rchunk_coupled(const void *x, const void *y)
{
	const struct rchunk *p = x, *q = y;

	if (p->pick != q->pick)
		return p->pick ? -1 : 1;
	return p->start < q->start ? -1 : p->start > q->start;
}

static int cmp_rchunk_lines(const void *x, const void *y)
{
	const struct rchunk *p = x, *q = y;

	return p->start < q->start ? -1 : p->start > q->start;
}

struct candidate {
	uint32_t id;		/* current name */
	double score;		/* best product of scores along the coupling path */
	uint32_t via;		/* the changed file it was reached from */
};

static int cmp_candidate(const void *x, const void *y, void *paths)
{
	const struct candidate *p = x, *q = y;
	const struct hpaths *sort_paths = paths;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	return strcmp(sort_paths->names[p->id], sort_paths->names[q->id]);
}


/* The diff under review and where its new side is read. */
struct review_diff {
	git_diff *diff;		/* the diff, renames found */
	struct side side;	/* its new side */
	git_commit *ca, *cb, *head;	/* old and new commits, HEAD's (each may be NULL) */
	git_tree *ta, *tb;	/* their trees */
};

/* A usage error of --diff, said by the caller; returns EXIT_USAGE. */
static int bad_spec(struct review *rv, char *msg)
{
	free(rv->usage);
	rv->usage = msg;
	return EXIT_USAGE;
}

/* The diff from d->ca's tree to d->cb's, the new side being d->cb's tree: 0, or -1 (git error). */
static int diff_trees(struct hrepo *r, struct review_diff *d, git_diff_options *dopt)
{
	d->ta = commit_tree(d->ca);
	d->tb = commit_tree(d->cb);
	if (git_diff_tree_to_tree(&d->diff, r->w.repo, d->ta, d->tb, dopt) < 0)
		return -1;
	d->side.kind = SIDE_TREE;
	d->side.tree = d->tb;
	return 0;
}

/* --diff branch:<name>: the branch against its merge base with HEAD. */
static int diff_branch(struct hrepo *r, struct review *rv, struct review_diff *d, git_diff_options *dopt)
{
	git_oid base;

	if (hrepo_resolve_commit(r, rv->spec + 7, &d->cb, NULL) < 0)
		return bad_spec(rv, xasprintf("--diff: unknown branch '%s'", rv->spec + 7));
	if (!d->head)
		return bad_spec(rv, xasprintf("--diff %s: HEAD has no commit to compare with", rv->spec));
	if (git_merge_base(&base, r->w.repo, git_commit_id(d->head), git_commit_id(d->cb)) < 0 ||
	    git_commit_lookup(&d->ca, r->w.repo, &base) < 0)
		return -1;
	return diff_trees(r, d, dopt);
}

/* --diff commit:<rev>, <from>..<to>, <a>...<b> (from their merge base). */
static int diff_commits(struct hrepo *r, struct review *rv, struct review_diff *d, git_diff_options *dopt)
{
	const char *range = rv->spec + 7, *dots = strstr(range, "..");

	if (dots) {
		char *from = xstrndup(range, (size_t)(dots - range));
		int three = dots[2] == '.';
		const char *to = dots + (three ? 3 : 2);
		int bad = hrepo_resolve_commit(r, *from ? from : "HEAD", &d->ca, NULL) < 0 ||
			  hrepo_resolve_commit(r, *to ? to : "HEAD", &d->cb, NULL) < 0;
		free(from);
		if (bad)
			return bad_spec(rv, xasprintf("--diff: unknown revision in '%s'", range));
		if (three) {
			git_oid base;
			git_commit *mb;
			if (git_merge_base(&base, r->w.repo, git_commit_id(d->ca), git_commit_id(d->cb)) < 0 ||
			    git_commit_lookup(&mb, r->w.repo, &base) < 0)
				return -1;
			git_commit_free(d->ca);
			d->ca = mb;
		}
	} else {
		if (hrepo_resolve_commit(r, range, &d->cb, NULL) < 0)
			return bad_spec(rv, xasprintf("--diff: unknown revision '%s'", range));
		if (git_commit_parentcount(d->cb) > 0 && git_commit_parent(&d->ca, d->cb, 0) < 0)
			return -1;
	}
	return diff_trees(r, d, dopt);
}

/* The diff of rv->spec, renames found: 0; -1 for a git error (not reported); EXIT_USAGE. */
static int open_diff(struct hrepo *r, struct review *rv, struct review_diff *d)
{
	const char *spec = rv->spec;
	git_diff_options dopt;
	git_diff_find_options fopt;
	int rc = 0;

	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopt, GIT_DIFF_FIND_OPTIONS_VERSION);
	dopt.context_lines = 0;
	dopt.interhunk_lines = 0;
	if ((!strcmp(spec, "unstaged") || !strcmp(spec, "staged")) && r->bare) {
		return bad_spec(rv, xasprintf("--diff %s: a bare repository has no work tree or staged "
						"changes (--diff commit:<rev> or branch:<name> work in one)", spec));
	}
	if (!strcmp(spec, "unstaged")) {
		if (git_diff_index_to_workdir(&d->diff, r->w.repo, NULL, &dopt) < 0)
			return -1;
		d->side.kind = SIDE_WORKDIR;
	} else if (!strcmp(spec, "staged")) {
		d->ta = commit_tree(d->head);
		if (git_repository_index(&d->side.index, r->w.repo) < 0 ||
		    git_diff_tree_to_index(&d->diff, r->w.repo, d->ta, d->side.index, &dopt) < 0)
			return -1;
		d->side.kind = SIDE_INDEX;
	} else if (!strncmp(spec, "branch:", 7) && spec[7]) {
		rc = diff_branch(r, rv, d, &dopt);
	} else if (!strncmp(spec, "commit:", 7) && spec[7]) {
		rc = diff_commits(r, rv, d, &dopt);
	} else {
		return bad_spec(rv, xasprintf("--diff: expected unstaged, staged, branch:<name> or "
					      "commit:<range>, not '%s'", spec));
	}
	if (rc)
		return rc;
	fopt.flags = GIT_DIFF_FIND_RENAMES;
	return git_diff_find_similar(d->diff, &fopt) < 0 ? -1 : 0;
}

/* The changed lines of a file's patch, as ranges of the new side. */
static void changed_ranges(struct review_changed *c, git_patch *patch)
{
	size_t hn = patch ? git_patch_num_hunks(patch) : 0;

	for (size_t k = 0; k < hn; k++) {
		const git_diff_hunk *hk;
		struct range rg;
		if (git_patch_get_hunk(&hk, NULL, patch, k) < 0)
			continue;
		rg.start = hk->new_start > 0 ? hk->new_start : 1;
		rg.end = hk->new_lines > 0 ? hk->new_start + hk->new_lines - 1 : rg.start;
		c->lines += hk->new_lines > 0 ? hk->new_lines : 1;
		ALLOC_GROW(c->ranges, c->ranges_nr + 1, c->ranges_alloc);
		c->ranges[c->ranges_nr++] = rg;
	}
}

/* Every file of the diff for the review record; the changed lines of those not deleted. */
static int collect_changes(struct review *rv, git_diff *diff)
{
	size_t nd = git_diff_num_deltas(diff);

	for (size_t i = 0; i < nd; i++) {
		const git_diff_delta *dl = git_diff_get_delta(diff, i);
		git_patch *patch = NULL;
		struct review_changed *c;
		size_t adds = 0, dels = 0;
		const char *fp;

		if (dl->status == GIT_DELTA_UNTRACKED || dl->status == GIT_DELTA_IGNORED ||
		    dl->status == GIT_DELTA_UNMODIFIED)
			continue;
		if (git_patch_from_diff(&patch, diff, i) < 0)
			return -1;
		if (patch && git_patch_line_stats(NULL, &adds, &dels, patch) < 0) {
			git_patch_free(patch);
			return -1;
		}
		fp = dl->status == GIT_DELTA_DELETED ? dl->old_file.path : dl->new_file.path;
		buf_addstr(&rv->files, rv->files.len ? ",{\"path\":" : "{\"path\":");
		nd_json_string(&rv->files, fp, strlen(fp));
		buf_addf(&rv->files, ",\"status\":\"%c\",\"added\":%zu,\"deleted\":%zu}",
			 dl->status == GIT_DELTA_ADDED ? 'A' : dl->status == GIT_DELTA_DELETED ? 'D' :
			 dl->status == GIT_DELTA_RENAMED ? 'R' : 'M', adds, dels);
		if (dl->status == GIT_DELTA_DELETED) {
			rv->deleted_files++;
			git_patch_free(patch);
			continue;
		}
		ALLOC_GROW(rv->ch, rv->ch_nr + 1, rv->ch_alloc);
		c = &rv->ch[rv->ch_nr++];
		memset(c, 0, sizeof(*c));
		c->path = xstrdup(dl->new_file.path);
		c->status = dl->status == GIT_DELTA_ADDED ? 'A' : dl->status == GIT_DELTA_RENAMED ? 'R' : 'M';
		changed_ranges(c, patch);
		rv->changed_lines += c->lines;
		git_patch_free(patch);
	}
	return 0;
}

static void add_chunk(struct review *rv, const struct rchunk *c)
{
	ALLOC_GROW(rv->outv, rv->out_nr + 1, rv->out_alloc);
	rv->outv[rv->out_nr++] = *c;
}

/* The chunks overlapping changed lines, in the budget; their text in *text. */
static int changed_chunks(const struct couple_opts *o, struct hrepo *r, struct review *rv,
			  struct chunker *ck, struct buf *text)
{
	struct rchunk *all = NULL;
	size_t all_nr = 0, all_alloc = 0, i, k;

	for (i = 0; i < rv->ch_nr; i++) {
		struct review_changed *c = &rv->ch[i];
		struct rchunk *v = NULL;
		size_t v_nr = 0, v_alloc = 0, n;
		char *data;
		int rc = side_read(r, &rv->d->side, c->path, &data, &n);

		if (rc < 0) {
			for (k = 0; k < all_nr; k++)
				rchunk_release(&all[k]);
			free(all);
			return -1;
		}
		if (rc > 0 || walk_classify(NULL, c->path, data, n) == WALK_BINARY) {
			free(data);
			continue;
		}
		chunk_text(ck, c->path, data, n, &v, &v_nr, &v_alloc);
		free(data);
		for (k = 0; k < v_nr; k++) {
			int hit = 0;
			for (size_t g = 0; g < c->ranges_nr && !hit; g++)
				hit = v[k].start <= c->ranges[g].end && c->ranges[g].start <= v[k].end;
			if (!hit) {
				rchunk_release(&v[k]);
				continue;
			}
			v[k].reason = "changed";
			ALLOC_GROW(all, all_nr + 1, all_alloc);
			all[all_nr++] = v[k];
		}
		free(v);
	}
	for (i = 0; i < all_nr; i++) {
		long lines = all[i].end - all[i].start + 1;
		if (rv->used + lines > o->budget) {
			rv->omitted++;
			rchunk_release(&all[i]);
			continue;
		}
		rv->used += lines;
		buf_addstr(text, all[i].text);
		buf_addch(text, '\n');
		add_chunk(rv, &all[i]);
	}
	free(all);
	return 0;
}

/* One step out from the candidates [from, to): the files coupled to them. */
static void widen(const struct couple_opts *o, const struct history *h, const struct file_stats *fs,
		  double threshold, struct candidate **cands, size_t *nr, size_t *alloc, size_t from, size_t to)
{
	long limit = o->limit < 0 ? 5 : o->limit;

	for (size_t i = from; i < to; i++) {
		struct couple_scored *rel = NULL;
		size_t rn = couple_related(h, fs, (*cands)[i].id, o->half_life, threshold, o->min_co, NULL, &rel);
		double base = (*cands)[i].score < 0 ? 1.0 : (*cands)[i].score;

		for (size_t k = 0; k < rn && (limit <= 0 || (long)k < limit); k++) {
			double s = hist_round4(base * rel[k].score);
			size_t j;
			for (j = 0; j < *nr && (*cands)[j].id != rel[k].b; j++)
				;
			if (j < *nr) {
				if ((*cands)[j].score >= 0 && s > (*cands)[j].score) {
					(*cands)[j].score = s;
					(*cands)[j].via = (*cands)[i].via;
				}
				continue;
			}
			if (s < threshold)
				continue;
			ALLOC_GROW(*cands, *nr + 1, *alloc);
			(*cands)[*nr].id = rel[k].b;
			(*cands)[*nr].score = s;
			(*cands)[(*nr)++].via = (*cands)[i].via;
		}
		free(rel);
	}
}

/*
 * The files coupled to the changed ones, o->depth steps out, best first (the
 * changed files themselves left out).  0, or -1 after reporting.
 */
static int coupled_files(const struct couple_opts *o, struct hrepo *r, struct review *rv,
			 struct candidate **out, size_t *out_nr)
{
	double threshold = o->threshold_given ? o->threshold : 0.1;
	struct file_stats fs = { NULL, NULL };
	struct candidate *cands = NULL;
	size_t nr = 0, alloc = 0, i, w = 0, from, to;

	*out = NULL;
	*out_nr = 0;
	if (o->depth <= 0 || !r->has_head)
		return 0;
	if (history_load(o, r, &rv->h, 0) < 0)
		return -1;
	rv->have_history = 1;
	couple_count_changes(&rv->h, &fs);
	for (i = 0; i < rv->ch_nr; i++) {
		uint32_t id = history_lookup(&rv->h, rv->ch[i].path);
		if (id == HPATH_NONE)
			continue;
		ALLOC_GROW(cands, nr + 1, alloc);
		cands[nr].id = id;
		cands[nr].score = -1;	/* a changed file: not a candidate */
		cands[nr++].via = id;
	}
	from = 0;
	to = nr;
	for (long d = 0; d < o->depth; d++) {
		widen(o, &rv->h, &fs, threshold, &cands, &nr, &alloc, from, to);
		from = to;
		to = nr;
	}
	file_stats_release(&fs);
	for (i = 0; i < nr; i++)
		if (cands[i].score >= 0)
			cands[w++] = cands[i];
	if (w)
		qsort_r(cands, w, sizeof(*cands), cmp_candidate, &rv->h.paths);
	*out = cands;
	*out_nr = w;
	return 0;
}

/*
 * The chunks of one coupled file that fit its share of the budget, those whose
 * name the changed code uses first, then in line order; returns the lines used,
 * or -1 after reporting.
 */
static long coupled_chunks(struct hrepo *r, struct review *rv, struct chunker *ck, const struct buf *text,
			   const struct candidate *cand, long share)
{
	const char *path = rv->h.paths.names[cand->id];
	struct rchunk *v = NULL;
	size_t n, v_nr = 0, v_alloc = 0, first = rv->out_nr;
	long fused = 0;
	char *data;
	int rc = side_read(r, &rv->d->side, path, &data, &n);

	if (rc < 0)
		return -1;
	if (rc > 0 || walk_classify(NULL, path, data, n) == WALK_BINARY) {
		free(data);
		return 0;
	}
	chunk_text(ck, path, data, n, &v, &v_nr, &v_alloc);
	free(data);
	for (size_t k = 0; k < v_nr; k++)
		v[k].pick = v[k].name && has_word(text->buf, v[k].name);
	if (v_nr)
		qsort(v, v_nr, sizeof(*v), cmp_rchunk_coupled);
	for (size_t k = 0; k < v_nr; k++) {
		long lines = v[k].end - v[k].start + 1;
		if (fused + lines > share) {
			rchunk_release(&v[k]);
			continue;
		}
		fused += lines;
		v[k].reason = "coupled";
		v[k].coupled_to = rv->h.paths.names[cand->via];
		v[k].score = cand->score;
		v[k].path = rv->h.paths.names[cand->id];
		add_chunk(rv, &v[k]);
	}
	free(v);
	if (rv->out_nr > first) {
		qsort(rv->outv + first, rv->out_nr - first, sizeof(*rv->outv), cmp_rchunk_lines);
		rv->coupled_files++;
	}
	return fused;
}

int couple_review(const struct couple_opts *o, struct hrepo *r, struct review *rv)
{
	struct chunk_opts copt = { CHUNK_WANT_CHUNKS, CHUNK_DEFAULT_MAX_LINES };
	struct chunker *ck = NULL;
	struct candidate *cands = NULL;
	struct buf text = BUF_INIT;
	size_t cands_nr = 0, i;
	long left;
	int ret = EXIT_OK, rc;

	memset(rv, 0, sizeof(*rv));
	rv->spec = o->diff ? o->diff : "unstaged";
	rv->d = xcalloc(1, sizeof(*rv->d));
	rv->d->side.kind = SIDE_WORKDIR;
	buf_init(&rv->files, 0);
	if (r->has_head && git_commit_lookup(&rv->d->head, r->w.repo, &r->head) < 0) {
		hist_git_error("cannot read HEAD");
		return EXIT_IO;
	}
	if ((rc = open_diff(r, rv, rv->d)) == EXIT_USAGE)
		return EXIT_USAGE;
	if (rc < 0 || collect_changes(rv, rv->d->diff) < 0)
		goto git_failed;
	if (!rv->ch_nr && !rv->deleted_files) {
		error("no changes to review (--diff %s)", rv->spec);
		return EXIT_NOTHING;
	}
	ck = chunker_new(&copt);
	if (changed_chunks(o, r, rv, ck, &text) < 0 || coupled_files(o, r, rv, &cands, &cands_nr) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	/* their chunks, sharing what is left of the budget */
	left = o->budget - rv->used;
	for (i = 0; i < cands_nr; i++) {
		long fused = coupled_chunks(r, rv, ck, &text, &cands[i], left / (long)(cands_nr - i));
		if (fused < 0) {
			ret = EXIT_IO;
			goto done;
		}
		left -= fused;
		rv->used += fused;
	}
	goto done;
git_failed:
	hist_git_error("cannot diff");
	ret = EXIT_IO;
done:
	free(cands);
	chunker_free(ck);
	buf_release(&text);
	return ret;
}

void review_release(struct review *rv)
{
	size_t i;

	for (i = 0; i < rv->out_nr; i++)
		rchunk_release(&rv->outv[i]);
	free(rv->outv);
	for (i = 0; i < rv->ch_nr; i++) {
		free(rv->ch[i].path);
		free(rv->ch[i].ranges);
	}
	free(rv->ch);
	buf_release(&rv->files);
	if (rv->have_history)
		history_release(&rv->h);
	if (rv->d) {
		git_diff_free(rv->d->diff);
		git_index_free(rv->d->side.index);
		git_tree_free(rv->d->ta);
		git_tree_free(rv->d->tb);
		git_commit_free(rv->d->ca);
		git_commit_free(rv->d->cb);
		git_commit_free(rv->d->head);
		free(rv->d);
	}
	free(rv->usage);
	memset(rv, 0, sizeof(*rv));
}
