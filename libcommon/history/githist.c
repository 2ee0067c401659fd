/*
 * githist.c: walking the first-parent history of a repository (see githist.h).
 *
 * Where the time goes: listing commit ids is cheap (one object read each); the
 * diff of a commit against its first parent costs two tree reads per changed
 * directory, and counting lines costs reading and diffing both versions of every
 * changed file, which is most of the work.  So the ids are listed first, and the
 * diffs are spread over threads, each with its own git_repository (libgit2 objects
 * are not shared between threads), their results handed back in order through a
 * ring of slots.
 */
#include "core/common.h"
#include "history/githist.h"

#include <pthread.h>
#include <git2/sys/hashsig.h>

int hist_git_error(const char *what)
{
	const git_error *e = git_error_last();

	return error("%s: %s", what, e && e->message ? e->message : "unknown libgit2 error");
}

void hist_commit_release(struct hist_commit *c)
{
	size_t i;

	for (i = 0; i < c->merged_nr; i++)
		hist_commit_release(&c->merged[i]);
	free(c->merged);
	for (i = 0; i < c->files_nr; i++) {
		free(c->files[i].path);
		free(c->files[i].old_path);
	}
	free(c->files);
	free(c->author);
	free(c->email);
	free(c->message);
	memset(c, 0, sizeof(*c));
}

static int cmp_file(const void *a, const void *b)
{
	const struct hist_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* ---- diffing two trees ---- */

/*
 * libgit2's git_diff_tree_to_tree, and even git_tree_lookup, cost about 20 us per
 * tree read (every entry parsed and allocated), eight times what git takes on a
 * long history.  Here trees are read raw from the object database and their
 * entries walked in place, and a subtree whose id did not change is skipped, as
 * git does: a commit costs what it changed.
 */

/* One side of a change: what a path held. */
struct side {
	git_oid id;		/* blob (or submodule commit) id */
	uint32_t mode;		/* git file mode; 0: absent */
};

struct change {
	char *path;		/* new path (for a deletion, the old one) */
	char *old_path;		/* for a rename */
	struct side a, b;	/* before, after */
	char status;		/* A M D R; 0 once paired into a rename */
	int absent;		/* a blob of it is absent from the object database */
};

struct changes {
	struct change *v;	/* in tree order */
	size_t nr, alloc;	/* used, allocated */
};

/* A tree entry, pointing into the raw tree object. */
struct entry {
	const char *name;	/* NUL-terminated in the object */
	size_t len;		/* strlen(name) */
	uint32_t mode;		/* octal mode */
	const unsigned char *id;	/* 20 raw bytes */
};

/* A tree being walked. */
struct tree_iter {
	git_odb_object *obj;	/* the raw object, or NULL for an empty tree */
	const char *p, *end;	/* next entry, end of data */
};

static int is_tree_mode(uint32_t mode)
{
	return (mode & 0170000) == 0040000;
}

static int tree_open(git_odb *odb, const git_oid *id, struct tree_iter *it)
{
	memset(it, 0, sizeof(*it));
	if (!id)
		return 0;
	if (git_odb_read(&it->obj, odb, id) < 0)
		return -1;
	if (git_odb_object_type(it->obj) != GIT_OBJECT_TREE) {
		git_error_set_str(GIT_ERROR_OBJECT, "not a tree");
		git_odb_object_free(it->obj);
		it->obj = NULL;
		return -1;
	}
	it->p = git_odb_object_data(it->obj);
	it->end = it->p + git_odb_object_size(it->obj);
	return 0;
}

/* The next entry of it in *e; 0 at the end, -1 if the tree is corrupt. */
static int tree_next(struct tree_iter *it, struct entry *e)
{
	const char *s = it->p, *nul;
	uint32_t mode = 0;

	if (!it->obj || s >= it->end)
		return 0;
	while (s < it->end && *s >= '0' && *s <= '7')
		mode = mode * 8 + (uint32_t)(*s++ - '0');
	if (s >= it->end || *s != ' ')
		goto corrupt;
	s++;
	nul = memchr(s, '\0', (size_t)(it->end - s));
	if (!nul || it->end - nul < 21)
		goto corrupt;
	e->name = s;
	e->len = (size_t)(nul - s);
	e->mode = mode;
	e->id = (const unsigned char *)nul + 1;
	it->p = nul + 21;
	return 1;
corrupt:
	git_error_set_str(GIT_ERROR_OBJECT, "corrupt tree");
	return -1;
}

static void tree_close(struct tree_iter *it)
{
	git_odb_object_free(it->obj);
	it->obj = NULL;
}

/* Compare entries in git's tree order: a directory sorts as if its name ended in '/'. */
static int entry_cmp(const struct entry *x, const struct entry *y)
{
	size_t l = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, l);
	unsigned char cx, cy;

	if (c)
		return c;
	cx = x->len > l ? (unsigned char)x->name[l] : is_tree_mode(x->mode) ? '/' : 0;
	cy = y->len > l ? (unsigned char)y->name[l] : is_tree_mode(y->mode) ? '/' : 0;
	return (int)cx - (int)cy;
}

static void add_change(struct changes *cs, const char *prefix, const struct entry *e, char status,
		       const struct entry *ea, const struct entry *eb)
{
	struct change *c;

	ALLOC_GROW(cs->v, cs->nr + 1, cs->alloc);
	c = &cs->v[cs->nr++];
	memset(c, 0, sizeof(*c));
	c->path = xasprintf("%s%.*s", prefix, (int)e->len, e->name);
	c->status = status;
	if (ea) {
		git_oid_fromraw(&c->a.id, ea->id);
		c->a.mode = ea->mode;
	}
	if (eb) {
		git_oid_fromraw(&c->b.id, eb->id);
		c->b.mode = eb->mode;
	}
}

/* The changes from tree a to tree b (either may be NULL: empty), paths under prefix. */
static int diff_trees(git_odb *odb, const git_oid *a, const git_oid *b, const char *prefix,
		      struct changes *cs)
{
	struct tree_iter ia, ib;
	struct entry ea, eb;
	int ha, hb, ret = -1;

	if (tree_open(odb, a, &ia) < 0)
		return -1;
	if (tree_open(odb, b, &ib) < 0) {
		tree_close(&ia);
		return -1;
	}
	ha = tree_next(&ia, &ea);
	hb = tree_next(&ib, &eb);
	while (ha > 0 || hb > 0) {
		int c = ha <= 0 ? 1 : hb <= 0 ? -1 : entry_cmp(&ea, &eb);
		git_oid ida, idb;
		char *sub = NULL;
		int rc = 0;

		if (ha < 0 || hb < 0)
			goto done;
		if (ha > 0)
			git_oid_fromraw(&ida, ea.id);
		if (hb > 0)
			git_oid_fromraw(&idb, eb.id);
		if (c < 0) {
			if (is_tree_mode(ea.mode)) {
				sub = xasprintf("%s%.*s/", prefix, (int)ea.len, ea.name);
				rc = diff_trees(odb, &ida, NULL, sub, cs);
			} else {
				add_change(cs, prefix, &ea, 'D', &ea, NULL);
			}
			ha = tree_next(&ia, &ea);
		} else if (c > 0) {
			if (is_tree_mode(eb.mode)) {
				sub = xasprintf("%s%.*s/", prefix, (int)eb.len, eb.name);
				rc = diff_trees(odb, NULL, &idb, sub, cs);
			} else {
				add_change(cs, prefix, &eb, 'A', NULL, &eb);
			}
			hb = tree_next(&ib, &eb);
		} else {
			/* the same name on both sides */
			if (!git_oid_equal(&ida, &idb) || ea.mode != eb.mode) {
				int ta = is_tree_mode(ea.mode), tb = is_tree_mode(eb.mode);

				if (ta || tb)
					sub = xasprintf("%s%.*s/", prefix, (int)ea.len, ea.name);
				if (ta && tb) {
					rc = diff_trees(odb, &ida, &idb, sub, cs);
				} else if (ta) {
					rc = diff_trees(odb, &ida, NULL, sub, cs);
					add_change(cs, prefix, &eb, 'A', NULL, &eb);
				} else if (tb) {
					add_change(cs, prefix, &ea, 'D', &ea, NULL);
					rc = diff_trees(odb, NULL, &idb, sub, cs);
				} else {
					add_change(cs, prefix, &ea, 'M', &ea, &eb);
				}
			}
			ha = tree_next(&ia, &ea);
			hb = tree_next(&ib, &eb);
		}
		free(sub);
		if (rc < 0)
			goto done;
	}
	ret = ha < 0 || hb < 0 ? -1 : 0;
done:
	tree_close(&ia);
	tree_close(&ib);
	return ret;
}

/* ---- renames ---- */

#define RENAME_MIN_SIMILARITY 50	/* git's default, -M50% */
#define RENAME_LIMIT 400		/* at most this many sources x destinations, squared */

static int is_blob_mode(uint32_t mode)
{
	return (mode & 0170000) == 0100000 || (mode & 0170000) == 0120000;
}

struct candidate {
	size_t del, add;	/* indices into changes */
	int score;		/* similarity, 0-100 */
};

static int cmp_candidate(const void *x, const void *y)
{
	const struct candidate *p = x, *q = y;

	if (p->score != q->score)
		return q->score - p->score;
	if (p->add != q->add)
		return p->add < q->add ? -1 : 1;
	return p->del < q->del ? -1 : p->del > q->del;
}

/*
 * After a failed lookup of blob id: whether the object database lacks it (a
 * partial clone, which left it out), rather than failing to read it.
 */
static int blob_absent(git_repository *repo, const git_oid *id)
{
	git_odb *odb;
	int absent = 0;

	if (git_repository_odb(&odb, repo) == 0) {
		absent = !git_odb_exists(odb, id);
		git_odb_free(odb);
	}
	if (absent)
		git_error_clear();
	return absent;
}

/* Pair deletions with additions: identical content first, then similar (hashsig). */
static int find_renames(git_repository *repo, struct changes *cs, int *missing)
{
	size_t *dels = NULL, *adds = NULL, nd = 0, na = 0, dalloc = 0, aalloc = 0, i, k;
	char *used_d = NULL, *used_a = NULL;
	git_hashsig **sd = NULL, **sa = NULL;
	struct candidate *cand = NULL;
	size_t cn = 0, calloc_ = 0;
	int ret = 0;

	for (i = 0; i < cs->nr; i++) {
		if (cs->v[i].status == 'D' && is_blob_mode(cs->v[i].a.mode)) {
			ALLOC_GROW(dels, nd + 1, dalloc);
			dels[nd++] = i;
		} else if (cs->v[i].status == 'A' && is_blob_mode(cs->v[i].b.mode)) {
			ALLOC_GROW(adds, na + 1, aalloc);
			adds[na++] = i;
		}
	}
	if (!nd || !na)
		goto done;
	used_d = xcalloc(nd, 1);
	used_a = xcalloc(na, 1);
	/* exact renames: the same blob */
	for (k = 0; k < na; k++)
		for (i = 0; i < nd; i++)
			if (!used_d[i] && git_oid_equal(&cs->v[dels[i]].a.id, &cs->v[adds[k]].b.id)) {
				used_d[i] = used_a[k] = 1;
				ALLOC_GROW(cand, cn + 1, calloc_);
				cand[cn].del = dels[i];
				cand[cn].add = adds[k];
				cand[cn++].score = 100;
				break;
			}
	/* similar content, when the pairs are few enough to compare */
	if (nd * na <= (size_t)RENAME_LIMIT * RENAME_LIMIT) {
		sd = xcalloc(nd, sizeof(*sd));
		sa = xcalloc(na, sizeof(*sa));
		for (i = 0; i < nd + na; i++) {
			int is_del = i < nd;
			size_t x = is_del ? i : i - nd;
			struct change *c = &cs->v[is_del ? dels[x] : adds[x]];
			git_blob *blob;
			const char *data;
			size_t n;

			if ((is_del ? used_d[x] : used_a[x]))
				continue;
			if (git_blob_lookup(&blob, repo, is_del ? &c->a.id : &c->b.id) < 0) {
				if (blob_absent(repo, is_del ? &c->a.id : &c->b.id)) {
					/* absent (a partial clone): no signature, no rename */
					*missing += !c->absent;
					c->absent = 1;
					continue;
				}
				ret = -1;
				goto done;
			}
			data = git_blob_rawcontent(blob);
			n = (size_t)git_blob_rawsize(blob);
			if (n && !memchr(data, '\0', n < 8000 ? n : 8000) &&
			    git_hashsig_create(is_del ? &sd[x] : &sa[x], data, n,
					       GIT_HASHSIG_SMART_WHITESPACE | GIT_HASHSIG_ALLOW_SMALL_FILES) < 0) {
				git_error_clear();
				(is_del ? sd : sa)[x] = NULL;
			}
			git_blob_free(blob);
		}
		for (k = 0; k < na; k++)
			for (i = 0; sa[k] && i < nd; i++) {
				int score;
				if (!sd[i])
					continue;
				score = git_hashsig_compare(sd[i], sa[k]);
				if (score >= RENAME_MIN_SIMILARITY) {
					ALLOC_GROW(cand, cn + 1, calloc_);
					cand[cn].del = dels[i];
					cand[cn].add = adds[k];
					cand[cn++].score = score;
				}
			}
	}
	/* best first; each side used once */
	if (cn)
		qsort(cand, cn, sizeof(*cand), cmp_candidate);
	for (i = 0; i < cn; i++) {
		struct change *d = &cs->v[cand[i].del], *a = &cs->v[cand[i].add];

		if (d->status != 'D' || a->status != 'A')
			continue;	/* already paired */
		a->status = 'R';
		a->old_path = d->path;
		a->a = d->a;
		d->path = NULL;
		d->status = 0;		/* dropped */
	}
done:
	for (i = 0; sd && i < nd; i++)
		git_hashsig_free(sd[i]);
	for (i = 0; sa && i < na; i++)
		git_hashsig_free(sa[i]);
	free(sd);
	free(sa);
	free(cand);
	free(used_d);
	free(used_a);
	free(dels);
	free(adds);
	return ret;
}

/* ---- line counts ---- */

struct line_count {
	long added, deleted;	/* lines */
	int binary;		/* libgit2 found the content binary */
};

static int count_file_cb(const git_diff_delta *d, float progress, void *payload)
{
	struct line_count *lc = payload;

	(void)progress;
	if (d->flags & GIT_DIFF_FLAG_BINARY)
		lc->binary = 1;
	return 0;
}

static int count_binary_cb(const git_diff_delta *d, const git_diff_binary *b, void *payload)
{
	struct line_count *lc = payload;

	(void)d;
	(void)b;
	lc->binary = 1;
	return 0;
}

static int count_line_cb(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
			 void *payload)
{
	struct line_count *lc = payload;

	(void)d;
	(void)h;
	if (l->origin == GIT_DIFF_LINE_ADDITION)
		lc->added++;
	else if (l->origin == GIT_DIFF_LINE_DELETION)
		lc->deleted++;
	return 0;
}

/* Lines of a blob (the last one counted without its newline); -1 if it is binary. */
static long blob_lines(git_blob *b)
{
	const char *p = git_blob_rawcontent(b);
	size_t n = (size_t)git_blob_rawsize(b), i;
	long lines = 0;

	if (memchr(p, '\0', n < 8000 ? n : 8000))
		return -1;
	for (i = 0; i < n; i++)
		lines += p[i] == '\n';
	if (n && p[n - 1] != '\n')
		lines++;
	return lines;
}

/* Added and deleted lines of one change, as git --numstat counts them. */
static int count_lines(git_repository *repo, struct change *c, struct hist_file *f, int *missing)
{
	git_blob *ba = NULL, *bb = NULL;
	int ret = -1;

	f->added = f->deleted = 0;
	/* a submodule: "Subproject commit <id>" lines */
	if ((c->a.mode && !is_blob_mode(c->a.mode)) || (c->b.mode && !is_blob_mode(c->b.mode))) {
		f->added = c->b.mode ? 1 : 0;
		f->deleted = c->a.mode ? 1 : 0;
		return 0;
	}
	if ((c->a.mode && git_blob_lookup(&ba, repo, &c->a.id) < 0) ||
	    (c->b.mode && git_blob_lookup(&bb, repo, &c->b.id) < 0)) {
		if (blob_absent(repo, ba || !c->a.mode ? &c->b.id : &c->a.id)) {
			/* a partial clone left it out: the counts are unknown */
			f->added = f->deleted = -1;
			*missing += !c->absent;
			c->absent = 1;
			ret = 0;
		}
		goto done;
	}
	if (!ba || !bb) {
		long n = blob_lines(ba ? ba : bb);
		if (n < 0)
			f->binary = 1;
		else if (ba)
			f->deleted = n;
		else
			f->added = n;
	} else if (!git_oid_equal(&c->a.id, &c->b.id)) {
		git_diff_options dopt;
		struct line_count lc = { 0, 0, 0 };

		git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
		dopt.context_lines = 0;
		dopt.interhunk_lines = 0;
		if (git_diff_blobs(ba, NULL, bb, NULL, &dopt, count_file_cb, count_binary_cb, NULL,
				   count_line_cb, &lc) < 0)
			goto done;
		if (lc.binary)
			f->binary = 1;
		else {
			f->added = lc.added;
			f->deleted = lc.deleted;
		}
	}
	ret = 0;
done:
	git_blob_free(ba);
	git_blob_free(bb);
	return ret;
}

static void changes_release(struct changes *cs)
{
	size_t i;

	for (i = 0; i < cs->nr; i++) {
		free(cs->v[i].path);
		free(cs->v[i].old_path);
	}
	free(cs->v);
	memset(cs, 0, sizeof(*cs));
}

/* Who, when and why of commit c, into out (which has its sha). */
static void read_meta(git_commit *c, struct hist_commit *out)
{
	const git_signature *sig = git_commit_author(c);
	const char *msg = git_commit_message(c);
	size_t ml;

	out->time = (int64_t)git_commit_time(c);
	out->author = xstrdup(sig && sig->name ? sig->name : "");
	out->email = xstrdup(sig && sig->email ? sig->email : "");
	msg = msg ? msg : "";
	ml = strlen(msg);
	while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' ' || msg[ml - 1] == '\t' ||
		      msg[ml - 1] == '\r'))
		ml--;
	out->message = xstrndup(msg, ml);
	out->parents = (int)git_commit_parentcount(c);
}

/* The commits merge c brought in: reachable from parents 2.., not from parent 1. */
static int read_merged(git_repository *repo, git_commit *c, struct hist_commit *out)
{
	git_revwalk *walk = NULL;
	git_oid id;
	size_t alloc = 0;
	unsigned i, n = git_commit_parentcount(c);
	int rc;

	if (git_revwalk_new(&walk, repo) < 0)
		return -1;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	for (i = 1; i < n; i++)
		if (git_revwalk_push(walk, git_commit_parent_id(c, i)) < 0)
			goto fail;
	if (git_revwalk_hide(walk, git_commit_parent_id(c, 0)) < 0)
		goto fail;
	while ((rc = git_revwalk_next(&id, walk)) == 0) {
		git_commit *m;
		struct hist_commit *hc;

		if (git_commit_lookup(&m, repo, &id) < 0)
			goto fail;
		ALLOC_GROW(out->merged, out->merged_nr + 1, alloc);
		hc = &out->merged[out->merged_nr++];
		memset(hc, 0, sizeof(*hc));
		git_oid_tostr(hc->sha, sizeof(hc->sha), &id);
		read_meta(m, hc);
		git_commit_free(m);
	}
	git_revwalk_free(walk);
	return rc == GIT_ITEROVER ? 0 : -1;
fail:
	git_revwalk_free(walk);
	return -1;
}

/*
 * Read one commit and diff it against its first parent into *out.  On failure the
 * libgit2 message is returned in *err (malloc'd) and -1; nothing is printed, so
 * that workers do not interleave their messages with the output.
 */
static int read_commit(git_repository *repo, const git_oid *id, const struct hist_opts *o,
		       struct hist_commit *out, char **err)
{
	git_commit *c = NULL, *p = NULL;
	struct changes cs = { NULL, 0, 0 };
	git_odb *odb = NULL;
	const char *what = "cannot read commit";
	size_t i, n = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	git_oid_tostr(out->sha, sizeof(out->sha), id);
	if (git_commit_lookup(&c, repo, id) < 0)
		goto done;
	read_meta(c, out);
	what = "cannot list the commits of merge";
	if (o->merged && out->parents > 1 && read_merged(repo, c, out) < 0)
		goto done;

	what = "cannot read parent";
	if (out->parents > 0 && git_commit_parent(&p, c, 0) < 0)
		goto done;
	what = "cannot diff commit";
	if (git_repository_odb(&odb, repo) < 0 ||
	    diff_trees(odb, p ? git_commit_tree_id(p) : NULL, git_commit_tree_id(c), "", &cs) < 0 ||
	    find_renames(repo, &cs, &out->missing) < 0)
		goto done;
	for (i = 0; i < cs.nr; i++)
		n += cs.v[i].status != 0;
	out->files = xcalloc(n ? n : 1, sizeof(*out->files));
	out->files_alloc = n ? n : 1;
	for (i = 0; i < cs.nr; i++) {
		struct change *ch = &cs.v[i];
		struct hist_file *f;

		if (!ch->status)
			continue;
		f = &out->files[out->files_nr++];
		f->status = ch->status;
		f->path = ch->path;
		f->old_path = ch->old_path;
		ch->path = ch->old_path = NULL;
		f->added = f->deleted = -1;
		if (o->lines && count_lines(repo, ch, f, &out->missing) < 0)
			goto done;
	}
	qsort(out->files, out->files_nr, sizeof(*out->files), cmp_file);
	out->huge = o->max_files > 0 && (long)out->files_nr > o->max_files;
	ret = 0;
done:
	if (ret < 0) {
		const git_error *e = git_error_last();
		*err = xasprintf("%s %s: %s", what, out->sha,
				 e && e->message ? e->message : "unknown libgit2 error");
		git_error_clear();
	}
	changes_release(&cs);
	git_odb_free(odb);
	git_commit_free(p);
	git_commit_free(c);
	return ret;
}

/* ---- listing the commits ---- */

/* The ids of the commits to read, newest first, in *ids (malloc'd). */
static int list_commits(git_repository *repo, const struct hist_opts *o, git_oid **ids, size_t *nr)
{
	git_revwalk *walk = NULL;
	git_oid id;
	size_t alloc = 0;
	int rc, ret = -1;

	*ids = NULL;
	*nr = 0;
	if (git_revwalk_new(&walk, repo) < 0)
		return hist_git_error("cannot walk history");
	rc = o->start ? git_revwalk_push(walk, o->start) : git_revwalk_push_head(walk);
	if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
		git_error_clear();
		ret = 0;	/* no commit yet */
		goto done;
	}
	if (rc < 0) {
		hist_git_error(o->start ? "cannot walk history from that commit" : "cannot read HEAD");
		goto done;
	}
	git_revwalk_simplify_first_parent(walk);
	if (o->stop && git_revwalk_hide(walk, o->stop) < 0) {
		hist_git_error("cannot walk history");
		goto done;
	}
	while ((rc = git_revwalk_next(&id, walk)) == 0) {
		if (o->max_commits > 0 && (long)*nr >= o->max_commits)
			break;
		if (o->since != HIST_NO_SINCE) {
			git_commit *c;
			int64_t t;

			if (git_commit_lookup(&c, repo, &id) < 0) {
				hist_git_error("cannot read commit");
				goto done;
			}
			t = (int64_t)git_commit_time(c);
			git_commit_free(c);
			if (t < o->since)
				break;
		}
		ALLOC_GROW(*ids, *nr + 1, alloc);
		(*ids)[(*nr)++] = id;
	}
	if (rc < 0 && rc != GIT_ITEROVER) {
		hist_git_error("cannot walk history");
		goto done;
	}
	git_error_clear();
	ret = 0;
done:
	git_revwalk_free(walk);
	if (ret < 0) {
		free(*ids);
		*ids = NULL;
		*nr = 0;
	}
	return ret;
}

/* ---- diffing in parallel ---- */

enum { SLOT_EMPTY, SLOT_DONE, SLOT_FAILED };

struct slot {
	struct hist_commit c;	/* the result */
	char *err;		/* the message when it failed */
	int state;		/* SLOT_* */
};

struct pool {
	git_repository *repo;		/* the caller's handle (used by one thread only) */
	const char *gitdir;		/* to open one handle per worker */
	const struct hist_opts *o;	/* options */
	const git_oid *ids;		/* what to read, newest first */
	size_t nr;			/* how many */
	struct slot *slots;		/* ring: commit i in slots[i % window] */
	size_t window;			/* ring size: how far workers may run ahead */
	size_t next;			/* next commit a worker takes */
	size_t consumed;		/* commits handed to the callback */
	int stop;			/* the consumer has stopped */
	pthread_mutex_t lock;		/* guards next, consumed, stop and slot states */
	pthread_cond_t done;		/* a slot was filled */
	pthread_cond_t room;		/* a slot was emptied, or stop */
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	git_repository *repo = NULL;
	char *open_err = NULL;

	if (git_repository_open_bare(&repo, p->gitdir) < 0) {
		const git_error *e = git_error_last();
		open_err = xasprintf("cannot open repository '%s': %s", p->gitdir,
				     e && e->message ? e->message : "unknown libgit2 error");
		repo = NULL;
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		size_t i;
		struct hist_commit c;
		char *err = NULL;
		int rc;

		while (!p->stop && p->next < p->nr && p->next >= p->consumed + p->window)
			pthread_cond_wait(&p->room, &p->lock);
		if (p->stop || p->next >= p->nr)
			break;
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (repo) {
			rc = read_commit(repo, &p->ids[i], p->o, &c, &err);
		} else {
			memset(&c, 0, sizeof(c));
			err = xstrdup(open_err);
			rc = -1;
		}
		pthread_mutex_lock(&p->lock);
		p->slots[i % p->window].c = c;
		p->slots[i % p->window].err = err;
		p->slots[i % p->window].state = rc < 0 ? SLOT_FAILED : SLOT_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	free(open_err);
	if (repo)
		git_repository_free(repo);
	return NULL;
}

static int walk_parallel(struct pool *p, int threads, hist_commit_fn fn, void *data)
{
	pthread_t *tids = xcalloc((size_t)threads, sizeof(*tids));
	int started = 0, ret = 0, t;
	size_t i;

	p->window = (size_t)threads * 32;
	p->slots = xcalloc(p->window, sizeof(*p->slots));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->done, NULL);
	pthread_cond_init(&p->room, NULL);
	for (t = 0; t < threads; t++) {
		if (pthread_create(&tids[t], NULL, worker, p)) {
			error("cannot start a thread");
			ret = -1;
			break;
		}
		started++;
	}
	for (i = 0; !ret && i < p->nr; i++) {
		struct slot *s = &p->slots[i % p->window];
		struct hist_commit c;
		char *err;
		int state;

		pthread_mutex_lock(&p->lock);
		while (s->state == SLOT_EMPTY)
			pthread_cond_wait(&p->done, &p->lock);
		c = s->c;
		err = s->err;
		state = s->state;
		memset(s, 0, sizeof(*s));
		p->consumed = i + 1;
		pthread_cond_broadcast(&p->room);
		pthread_mutex_unlock(&p->lock);
		if (state == SLOT_FAILED) {
			error("%s", err);
			ret = -1;
		} else {
			ret = fn(&c, data);
		}
		free(err);
		hist_commit_release(&c);
	}
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->room);
	pthread_mutex_unlock(&p->lock);
	for (t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	/* results that were never consumed */
	for (i = 0; i < p->window; i++) {
		hist_commit_release(&p->slots[i].c);
		free(p->slots[i].err);
	}
	free(p->slots);
	free(tids);
	pthread_cond_destroy(&p->room);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	return ret;
}

int hist_walk(git_repository *repo, const struct hist_opts *o, hist_commit_fn fn, void *data)
{
	git_repository *bare = NULL;
	git_oid *ids;
	size_t nr, i;
	int ret = 0;

	if (list_commits(repo, o, &ids, &nr) < 0)
		return -1;
	/*
	 * Diff through a bare handle on the same objects: a work tree would make
	 * libgit2 look for .gitattributes in it (a stat per directory per file
	 * diffed), which cost more than the diffs themselves.
	 */
	if (git_repository_open_bare(&bare, git_repository_path(repo)) < 0) {
		git_error_clear();
		bare = NULL;
	} else {
		repo = bare;
	}
	if (o->threads > 1 && nr > 64) {
		struct pool p;

		memset(&p, 0, sizeof(p));
		p.repo = repo;
		p.gitdir = git_repository_path(repo);
		p.o = o;
		p.ids = ids;
		p.nr = nr;
		ret = walk_parallel(&p, o->threads, fn, data);
	} else {
		for (i = 0; !ret && i < nr; i++) {
			struct hist_commit c;
			char *err = NULL;

			if (read_commit(repo, &ids[i], o, &c, &err) < 0) {
				error("%s", err);
				free(err);
				ret = -1;
			} else {
				ret = fn(&c, data);
			}
			hist_commit_release(&c);
		}
	}
	free(ids);
	git_repository_free(bare);
	return ret;
}
