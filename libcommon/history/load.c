/*
 * load.c: the repository, and its history read into memory (history.h): from
 * the index when ci-index load stored it, from git (githist.c) for what is
 * newer or when the index cannot stand in.
 *
 * Shaped by an agent's one question on a long history: reading stored commits
 * from SQLite costs a fraction of diffing them in git, so git is walked only
 * beyond the newest stored commit, and only when HEAD still descends from it
 * (a rewritten history is read from git, with a warning).
 */
#include "core/common.h"
#include "history/history.h"
#include "index/index.h"

#include <sqlite3.h>

/* hrepo_user_path(): see history.h. */
char *hrepo_user_path(struct hrepo *r, const char *arg)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	const char *p, *seg;
	size_t rl = strlen(r->w.root);

	if (arg[0] == '/') {
		if (strncmp(arg, r->w.root, rl) || (arg[rl] && arg[rl] != '/')) {
			error("'%s' is outside the repository", arg);
			return NULL;
		}
		buf_addstr(&in, arg + rl);
	} else {
		buf_addstr(&in, r->prefix);
		buf_addstr(&in, arg);
	}
	p = in.buf;
	while (*p) {
		size_t l;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		l = (size_t)(p - seg);
		if (!l || (l == 1 && seg[0] == '.'))
			continue;
		if (l == 2 && seg[0] == '.' && seg[1] == '.') {
			char *slash;
			if (!out.len) {
				error("'%s' is outside the repository", arg);
				buf_release(&in);
				buf_release(&out);
				return NULL;
			}
			slash = strrchr(out.buf, '/');
			buf_setlen(&out, slash ? (size_t)(slash - out.buf) : 0);
			continue;
		}
		if (out.len)
			buf_addch(&out, '/');
		buf_add(&out, seg, l);
	}
	buf_release(&in);
	return buf_detach(&out, NULL);
}

/* Keep a commit read from git, and the commits it merged (the callback of hist_walk). */
static int keep_commit(struct hist_commit *g, void *data)
{
	struct history *h = data;
	struct hcommit *c = history_add(h);
	size_t i;

	memcpy(c->sha, g->sha, sizeof(c->sha));
	c->time = g->time;
	c->author = g->author;
	c->email = g->email;
	c->message = g->message;
	g->author = g->email = g->message = NULL;
	c->parents = g->parents;
	c->huge = g->huge;
	c->merged = g->parents > 1 ? (int)g->merged_nr : -1;
	h->missing += g->missing;
	c->files = xcalloc(g->files_nr ? g->files_nr : 1, sizeof(*c->files));
	c->files_nr = g->files_nr;
	for (i = 0; i < g->files_nr; i++) {
		struct hfile *f = &c->files[i];
		f->path = hpaths_intern(&h->paths, g->files[i].path);
		f->old_path = g->files[i].old_path ? hpaths_intern(&h->paths, g->files[i].old_path) : HPATH_NONE;
		f->status = g->files[i].status;
		f->binary = g->files[i].binary;
		f->added = g->files[i].added;
		f->deleted = g->files[i].deleted;
	}
	for (i = 0; i < g->merged_nr; i++) {
		struct hist_commit *m = &g->merged[i];
		struct hcommit *mc = history_add(h);

		memcpy(mc->sha, m->sha, sizeof(mc->sha));
		memcpy(mc->merged_into, g->sha, sizeof(mc->merged_into));
		mc->time = m->time;
		mc->author = m->author;
		mc->email = m->email;
		mc->message = m->message;
		m->author = m->email = m->message = NULL;
		mc->parents = m->parents;
		mc->merged = -1;
		mc->files = NULL;
	}
	return 0;
}

/* 1 if table has column col. */
static int has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *st;
	char *sql = xasprintf("PRAGMA table_info(%s)", table);
	int found = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			if (!strcmp((const char *)sqlite3_column_text(st, 1), col))
				found = 1;
		sqlite3_finalize(st);
	}
	free(sql);
	return found;
}

/*
 * The commit the stored history was walked to: meta "history_head" (written by
 * ci-index load from a history record), else the newest stored commit.  NULL when
 * the index holds no history.  Malloc'd.
 */
char *history_stored_head(struct ci_index *ix)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *st;
	const char *v = index_meta(ix, "history_head");
	char *ret = NULL;

	if (v && *v)
		return xstrdup(v);
	if (sqlite3_prepare_v2(db, "SELECT sha FROM commits ORDER BY time DESC, rowid ASC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		ret = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return ret;
}

/*
 * Read the commits of the index newer than since (at most max first-parent ones,
 * 0: all) into h: those of keep (the first-parent line of HEAD), and those merged
 * into one of them; a commit left over from a rewritten history is not read.
 */
static int load_index_commits(struct ci_index *ix, struct history *h, int64_t since, long max,
			      const struct hpaths *keep)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *cs = NULL, *fs = NULL;
	int has_email = has_column(db, "commits", "email");
	int has_parents = has_column(db, "commits", "parents");
	int has_status = has_column(db, "commit_files", "status");
	int has_old = has_column(db, "commit_files", "old_path");
	int has_into = has_column(db, "commits", "merged_into");
	char *csql, *fsql;
	long n = 0;
	int rc, ret = -1;

	csql = xasprintf("SELECT sha, time, author, message, %s, %s, %s FROM commits WHERE time >= ?1 "
			 "ORDER BY time DESC, rowid ASC", has_email ? "email" : "NULL",
			 has_parents ? "parents" : "NULL", has_into ? "merged_into" : "NULL");
	fsql = xasprintf("SELECT path, added, deleted, %s, %s FROM commit_files WHERE sha = ?1 "
			 "ORDER BY path", has_status ? "status" : "NULL", has_old ? "old_path" : "NULL");
	if (sqlite3_prepare_v2(db, csql, -1, &cs, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, fsql, -1, &fs, NULL) != SQLITE_OK) {
		error("index: %s", sqlite3_errmsg(db));
		goto done;
	}
	sqlite3_bind_int64(cs, 1, since == HIST_NO_SINCE ? INT64_MIN : since);
	while ((rc = sqlite3_step(cs)) == SQLITE_ROW) {
		const char *sha = (const char *)sqlite3_column_text(cs, 0);
		struct hcommit *c;
		size_t alloc = 0;

		const char *into = (const char *)sqlite3_column_text(cs, 6);

		if (!sha || strlen(sha) != GIT_OID_HEXSZ)
			continue;
		if (into && !*into)
			into = NULL;
		if (into ? hpaths_find(keep, into) == HPATH_NONE : hpaths_find(keep, sha) == HPATH_NONE)
			continue;
		if (!into && max > 0 && n >= max)
			break;
		c = history_add(h);
		memcpy(c->sha, sha, sizeof(c->sha));
		c->time = sqlite3_column_int64(cs, 1);
		c->author = xstrdup(sqlite3_column_text(cs, 2) ? (const char *)sqlite3_column_text(cs, 2) : "");
		c->message = xstrdup(sqlite3_column_text(cs, 3) ? (const char *)sqlite3_column_text(cs, 3) : "");
		c->email = sqlite3_column_text(cs, 4) ? xstrdup((const char *)sqlite3_column_text(cs, 4)) : NULL;
		c->parents = sqlite3_column_type(cs, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(cs, 5);
		c->merged = -1;
		if (into && strlen(into) == GIT_OID_HEXSZ)
			memcpy(c->merged_into, into, GIT_OID_HEXSZ + 1);
		sqlite3_bind_text(fs, 1, sha, -1, SQLITE_TRANSIENT);
		while ((rc = sqlite3_step(fs)) == SQLITE_ROW) {
			struct hfile *f;
			const char *st = (const char *)sqlite3_column_text(fs, 3);
			const char *old = (const char *)sqlite3_column_text(fs, 4);

			ALLOC_GROW(c->files, c->files_nr + 1, alloc);
			f = &c->files[c->files_nr++];
			f->path = hpaths_intern(&h->paths, (const char *)sqlite3_column_text(fs, 0));
			f->old_path = old && *old ? hpaths_intern(&h->paths, old) : HPATH_NONE;
			f->status = st && *st ? st[0] : '?';
			f->binary = 0;
			f->added = sqlite3_column_type(fs, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(fs, 1);
			f->deleted = sqlite3_column_type(fs, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(fs, 2);
			if (f->added < 0 || f->deleted < 0)
				h->lines = 0;
		}
		sqlite3_reset(fs);
		if (rc != SQLITE_DONE) {
			error("index: %s", sqlite3_errmsg(db));
			goto done;
		}
		history_sort_files(h, c);
		c->huge = h->max_files > 0 && (long)c->files_nr > h->max_files;
		if (!into)
			n++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		error("index: %s", sqlite3_errmsg(db));
		goto done;
	}
	ret = 0;
done:
	sqlite3_finalize(cs);
	sqlite3_finalize(fs);
	free(csql);
	free(fsql);
	return ret;
}

/* ---- opening the repository ---- */

/*
 * The current directory is the repository's git directory itself: a bare
 * repository, though one without a config file (as some mirrors are) does not
 * say core.bare and libgit2 then takes its parent for a work tree.
 */
static int in_git_dir(git_repository *repo)
{
	char *cwd = realpath(".", NULL);
	const char *gd = git_repository_path(repo);	/* ends with '/' */
	size_t n = cwd ? strlen(cwd) : 0;
	int yes = cwd && gd && !strncmp(gd, cwd, n) && gd[n] == '/' && !gd[n + 1];

	free(cwd);
	return yes;
}

int hrepo_open(struct hrepo *r)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	char *cwd;
	git_commit *c;
	int rc;

	memset(r, 0, sizeof(*r));
	if (walker_open(&r->w, ".", &wo) < 0)
		return -1;
	if (!r->w.repo) {
		/* a bare repository has history, but no work tree to walk */
		git_repository *bare = NULL;

		if (git_repository_open_ext(&bare, ".", 0, getenv("GIT_CEILING_DIRECTORIES")) == 0 &&
		    (git_repository_is_bare(bare) || in_git_dir(bare))) {
			r->w.repo = bare;
			r->bare = 1;
		} else {
			git_repository_free(bare);
		}
		git_error_clear();
	}
	if (!r->w.repo) {
		error("not a git repository: '%s'", r->w.root);
		walker_close(&r->w);
		return -1;
	}
	cwd = realpath(".", NULL);
	if (cwd && !strncmp(cwd, r->w.root, strlen(r->w.root)) && cwd[strlen(r->w.root)] == '/')
		r->prefix = xasprintf("%s/", cwd + strlen(r->w.root) + 1);
	else
		r->prefix = xstrdup("");
	free(cwd);
	rc = git_reference_name_to_id(&r->head, r->w.repo, "HEAD");
	if (rc == 0 && git_commit_lookup(&c, r->w.repo, &r->head) == 0) {
		r->has_head = 1;
		r->head_time = (int64_t)git_commit_time(c);
		git_commit_free(c);
	}
	git_error_clear();
	return 0;
}

int hrepo_resolve_commit(const struct hrepo *r, const char *rev, git_commit **out, char **why)
{
	git_object *obj = NULL;

	*out = NULL;
	if (git_revparse_single(&obj, r->w.repo, rev) < 0 ||
	    git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT) < 0) {
		const git_error *e = git_error_last();

		if (why)
			*why = xstrdup(e && e->message ? e->message : "unknown libgit2 error");
		*out = NULL;
		git_error_clear();
		git_object_free(obj);
		return -1;
	}
	git_object_free(obj);
	return 0;
}

int hrepo_set_head(struct hrepo *r, const char *rev)
{
	git_commit *c;
	char *why = NULL;

	if (hrepo_resolve_commit(r, rev, &c, &why) < 0) {
		error("'%s' names no commit of this repository: %s", rev, why);
		free(why);
		return -1;
	}
	git_oid_cpy(&r->head, git_commit_id(c));
	r->head_time = (int64_t)git_commit_time(c);
	r->has_head = 1;
	git_commit_free(c);
	return 0;
}

void hrepo_close(struct hrepo *r)
{
	free(r->prefix);
	walker_close(&r->w);
}

/* Open the index unless --no-index; NULL when there is none (or it cannot be read). */
struct ci_index *hrepo_open_index(const struct couple_opts *o, const struct hrepo *r)
{
	struct ci_index *ix = NULL;
	char *path;
	int rc;

	if (o->no_index)
		return NULL;
	path = o->index ? xstrdup(o->index) : index_default_path(r->w.root);
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc < 0 && verbosity)
		warning("cannot read the index '%s': reading git", path);
	else if (rc == 1 && o->index)
		warning("no index at '%s': reading git", path);
	free(path);
	return rc == 0 ? ix : NULL;
}

/*
 * Whether stored (a commit id, hex) is HEAD or one of its ancestors.  1 yes, 0 no
 * (rewritten history, or an object git no longer has).
 */
int hrepo_is_ancestor_of_head(struct hrepo *r, const char *stored, git_oid *id)
{
	if (git_oid_fromstr(id, stored) < 0) {
		git_error_clear();
		return 0;
	}
	if (git_oid_equal(id, &r->head))
		return 1;
	if (git_graph_descendant_of(r->w.repo, &r->head, id) == 1)
		return 1;
	git_error_clear();
	return 0;
}

/* The first-parent line from base back (to since), as a set of hex ids in *set. */
static int first_parent_set(struct hrepo *r, const git_oid *base, int64_t since, struct hpaths *set)
{
	git_revwalk *walk = NULL;
	git_oid id;
	char hex[GIT_OID_HEXSZ + 1];
	int rc;

	if (git_revwalk_new(&walk, r->w.repo) < 0 || git_revwalk_push(walk, base) < 0) {
		git_revwalk_free(walk);
		return hist_git_error("cannot walk history");
	}
	git_revwalk_simplify_first_parent(walk);
	while ((rc = git_revwalk_next(&id, walk)) == 0) {
		if (since != HIST_NO_SINCE) {
			git_commit *c;
			int64_t t;
			if (git_commit_lookup(&c, r->w.repo, &id) < 0)
				break;
			t = (int64_t)git_commit_time(c);
			git_commit_free(c);
			if (t < since)
				break;
		}
		git_oid_tostr(hex, sizeof(hex), &id);
		hpaths_intern(set, hex);
	}
	git_revwalk_free(walk);
	git_error_clear();
	return 0;
}

/* First-parent commits of h (those not merged in by a merge). */
static long first_parent_count(const struct history *h)
{
	size_t i;
	long n = 0;

	for (i = 0; i < h->nr; i++)
		n += !h->c[i].merged_into[0];
	return n;
}

/* Why the index cannot stand in for git here, or NULL if it can. */
static const char *index_unfit(struct ci_index *ix, int lines)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *st;
	int missing = 0;

	if (!has_column(db, "commit_files", "old_path"))
		return "its commit_files table has no old_path column, so renames cannot be followed";
	if (!lines)
		return NULL;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM commit_files WHERE added IS NULL OR deleted IS NULL LIMIT 1",
			       -1, &st, NULL) == SQLITE_OK) {
		missing = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return missing ? "it has no line counts for some commits" : NULL;
}

/* How many commits each stored merge brought in (the index stores merged_into, not the count). */
static void count_stored_merges(struct history *h)
{
	struct hpaths merges;
	size_t *at = NULL, at_alloc = 0, i;
	uint32_t id;

	memset(&merges, 0, sizeof(merges));
	for (i = 0; i < h->nr; i++)
		if (h->c[i].merged < 0 && h->c[i].parents > 1) {
			h->c[i].merged = 0;
			id = hpaths_intern(&merges, h->c[i].sha);
			ALLOC_GROW(at, id + 1, at_alloc);
			at[id] = i;
		}
	for (i = 0; i < h->nr; i++)
		if (h->c[i].merged_into[0] &&
		    (id = hpaths_find(&merges, h->c[i].merged_into)) != HPATH_NONE)
			h->c[at[id]].merged++;
	free(at);
	hpaths_release(&merges);
}

/*
 * Read the history into h: from the index when it holds history that HEAD still
 * descends from (plus whatever git has that is newer), else from git.  lines: line
 * counts are needed.
 */
int history_load(const struct couple_opts *o, struct hrepo *r, struct history *h, int lines)
{
	struct hist_opts ho;
	struct ci_index *ix;
	struct history newer;
	git_oid base;
	int64_t since;
	char *stored = NULL;
	int use_index = 0, ret = -1;
	size_t i;

	memset(h, 0, sizeof(*h));
	memset(&newer, 0, sizeof(newer));
	h->max_files = o->max_files;
	h->lines = lines;
	h->source = "git";
	if (!r->has_head) {
		history_follow_renames(h);
		return 0;
	}
	since = since_resolve(&o->since, r->head_time);
	memset(&ho, 0, sizeof(ho));
	ho.since = since;
	ho.max_commits = o->max_commits;
	ho.max_files = o->max_files;
	ho.lines = lines;
	ho.threads = o->threads;
	ho.merged = 1;
	ho.start = &r->head;	/* HEAD, or the commit of --rev (hrepo_set_head) */

	ix = hrepo_open_index(o, r);
	if (ix && (stored = history_stored_head(ix))) {
		const char *why = index_unfit(ix, lines);

		if (why) {
			if (verbosity)
				fprintf(stderr, "%s: not reading the history stored in the index: %s\n",
					progname, why);
		} else if (hrepo_is_ancestor_of_head(r, stored, &base)) {
			use_index = 1;
		} else {
			warning("the index holds a history that HEAD no longer contains "
				"(rewritten?): reading git; 'ci-couple history | ci-index load' "
				"stores the new one");
		}
	}
	if (use_index) {
		/* what git has beyond the stored head, then the stored commits */
		newer.max_files = o->max_files;
		ho.stop = &base;
		if (hist_walk(r->w.repo, &ho, keep_commit, &newer) < 0)
			goto done;
		/* move the newer commits into h, re-interning their paths */
		for (i = 0; i < newer.nr; i++) {
			struct hcommit *c = history_add(h);
			size_t k;
			*c = newer.c[i];
			for (k = 0; k < c->files_nr; k++) {
				struct hfile *f = &c->files[k];
				f->path = hpaths_intern(&h->paths, newer.paths.names[f->path]);
				if (f->old_path != HPATH_NONE)
					f->old_path = hpaths_intern(&h->paths, newer.paths.names[f->old_path]);
			}
			memset(&newer.c[i], 0, sizeof(newer.c[i]));
		}
		if (o->max_commits <= 0 || first_parent_count(h) < o->max_commits) {
			struct hpaths keep;
			int rc;

			memset(&keep, 0, sizeof(keep));
			rc = first_parent_set(r, &base, since, &keep);
			if (!rc)
				rc = load_index_commits(ix, h, since, o->max_commits > 0 ?
							o->max_commits - first_parent_count(h) : 0, &keep);
			hpaths_release(&keep);
			if (rc < 0)
				goto done;
		}
		h->source = newer.nr ? "index+git" : "index";
		count_stored_merges(h);
	} else {
		if (hist_walk(r->w.repo, &ho, keep_commit, h) < 0)
			goto done;
	}
	history_follow_renames(h);
	if (newer.missing + h->missing)
		warning("%ld changed files read from git have a blob the repository does not have "
			"(a partial clone?): their line counts are unknown and count for none",
			newer.missing + h->missing);
	if (verbosity)
		fprintf(stderr, "%s: %zu commits from %s\n", progname, h->nr, h->source);
	ret = 0;
done:
	history_release(&newer);
	free(stored);
	index_close(ix);
	return ret;
}

int head_files_open(struct hrepo *r, struct head_files *hf)
{
	git_commit *c;

	hf->tree = NULL;
	if (!r->has_head)
		return 0;
	if (git_commit_lookup(&c, r->w.repo, &r->head) < 0 || git_commit_tree(&hf->tree, c) < 0)
		return hist_git_error("cannot read HEAD");
	git_commit_free(c);
	return 0;
}

/* 1 if path is a file (a blob) in HEAD's tree. */
int head_has(struct head_files *hf, const char *path)
{
	git_tree_entry *e;
	int ok;

	if (!hf->tree || git_tree_entry_bypath(&e, hf->tree, path) < 0) {
		git_error_clear();
		return 0;
	}
	ok = git_tree_entry_type(e) == GIT_OBJECT_BLOB;
	git_tree_entry_free(e);
	return ok;
}

void head_files_close(struct head_files *hf)
{
	git_tree_free(hf->tree);
	hf->tree = NULL;
}

/* Read path's blob from tree into *data (malloc'd); 1 if absent or not a blob. */
int hist_read_tree_blob(git_repository *repo, git_tree *tree, const char *path, char **data,
			  size_t *n)
{
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	int ret = 1;

	*data = NULL;
	*n = 0;
	if (!tree || git_tree_entry_bypath(&e, tree, path) < 0 ||
	    git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		git_error_clear();
		goto done;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e)) < 0) {
		ret = hist_git_error("cannot read blob");
		goto done;
	}
	*n = (size_t)git_blob_rawsize(blob);
	*data = xmalloc(*n + 1);
	memcpy(*data, git_blob_rawcontent(blob), *n);
	(*data)[*n] = '\0';
	ret = 0;
done:
	git_blob_free(blob);
	git_tree_entry_free(e);
	return ret;
}
