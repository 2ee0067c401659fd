/*
 * history.h: a repository's history in memory, for the analyses of ci-couple
 * (couple.h): commits newest first, the files each changed under interned
 * path ids, renames followed to the names files have at the newest commit.
 *
 * history_load() reads it from the index when `ci-couple history | ci-index
 * load` stored it and HEAD still descends from what was stored (plus what git
 * has that is newer), else from git (githist.h).  A unit test builds one with
 * history_add() and hpaths_intern(), without git.
 *
 * Files: since.c (--since), memory.c (paths, commits, renames), load.c (the
 * repository, the index, the loading).  Everything is deterministic: "recent"
 * is measured from the newest commit read, never from the clock.
 */
#ifndef CI_HISTORY_HISTORY_H
#define CI_HISTORY_HISTORY_H

#include "history/githist.h"
#include "parse/walk.h"

#include <math.h>
#include <stdint.h>
#include <git2.h>

struct ci_index;

/* --since, parsed before anything is read, resolved once the newest commit is known. */
struct since {
	enum { SINCE_NONE, SINCE_ALL, SINCE_ABS, SINCE_REL } kind;	/* what was given */
	int64_t when;		/* SINCE_ABS: seconds since the epoch */
	long n;			/* SINCE_REL: how many units back */
	char unit;		/* SINCE_REL: 's', 'm' (minute), 'h', 'd', 'w', 'M' (month), 'y' */
	const char *text;	/* as given, for messages and records */
};

/* What the analyses are asked (ci-couple's options). */
struct couple_opts {
	struct since since;	/* --since */
	long max_commits;	/* --max-commits, 0: all */
	long max_files;		/* --max-files: a commit changing more is huge */
	double half_life;	/* --half-life, days */
	const char *index;	/* --index, or NULL */
	int no_index;		/* --no-index */
	double threshold;	/* --threshold */
	int threshold_given;	/* --threshold was given (review's default is 0.1, not 0) */
	long min_co;		/* --min-co-changes */
	long limit;		/* --limit, -1 when not given */
	const char *author;	/* commits --author */
	const char *file;	/* commits --file */
	const char *diff;	/* review --diff */
	long budget;		/* review --budget */
	long depth;		/* review --depth */
	int threads;		/* -j */
};

/* The repository and what is known about it. */
struct hrepo {
	struct walker w;	/* root, repository handle */
	char *prefix;		/* the current directory relative to the root ("" or "dir/") */
	git_oid head;		/* HEAD's commit, when has_head */
	int has_head;		/* HEAD points at a commit */
	int64_t head_time;	/* its committer time */
	int bare;		/* no work tree: bare, or run in a git directory without a config file */
};

#define HPATH_NONE UINT32_MAX

/* Interned strings (paths, commit ids): an id each, found by hash. */
struct hpaths {
	char **names;		/* by id */
	size_t nr, alloc;	/* used, allocated */
	uint32_t *slots;	/* open addressing: id + 1, 0 empty */
	size_t cap;		/* slots, a power of two */
};

struct hfile {
	uint32_t path;		/* path in the commit */
	uint32_t old_path;	/* before a rename, or HPATH_NONE */
	uint32_t cur;		/* the file's name at the newest commit (renames followed) */
	char status;		/* A M D R, or '?' when the index does not say */
	char binary;		/* binary content */
	long added, deleted;	/* lines; -1 unknown */
};

struct hcommit {
	char sha[GIT_OID_HEXSZ + 1];	/* id */
	int64_t time;			/* committer time */
	char *author, *email, *message;	/* email may be NULL (index without it) */
	int parents;			/* -1 unknown */
	struct hfile *files;		/* sorted by path name */
	size_t files_nr;		/* how many */
	int huge;			/* over --max-files */
	int merged;			/* for a merge: the commits it brought in, or -1 */
	char merged_into[GIT_OID_HEXSZ + 1];	/* for those: the merge, else "" */
};

struct history {
	struct hcommit *c;	/* newest first */
	size_t nr, alloc;	/* used, allocated */
	struct hpaths paths;	/* every path named */
	uint32_t *renamed_to;	/* by path id: an old name's current name, or HPATH_NONE */
	int64_t newest;		/* time of the newest commit read (0 when none) */
	const char *source;	/* "git", "index" or "index+git" */
	int lines;		/* line counts are known */
	long max_files;		/* the huge limit applied */
	long missing;		/* files read from git with a blob absent (hist_commit.missing) */
};

/* x rounded to 4 decimals, as every score is written. */
static inline double hist_round4(double x)
{
	return floor(x * 10000.0 + 0.5) / 10000.0;
}

/* ---- since.c ---- */

/*
 * Parse --since: "all"; "@<epoch>"; a UTC date "YYYY-MM-DD" with an optional
 * time "[T ]HH:MM[:SS]" and "Z"; or a duration "<n> <unit>[s] [ago]", "<n><unit>",
 * "<n>.<unit>.ago".  Returns 0 or -1.  out->text points at s.
 */
int since_parse(const char *s, struct since *out);
/* The cutoff of s, counting a duration back from newest; HIST_NO_SINCE for none. */
int64_t since_resolve(const struct since *s, int64_t newest);
/* "2024-01-31T12:00:00Z" for t, in buf (at least 32 bytes). */
void hist_iso_time(char *buf, size_t n, int64_t t);

/* ---- memory.c ---- */

uint32_t hpaths_find(const struct hpaths *ps, const char *s);
uint32_t hpaths_intern(struct hpaths *ps, const char *s);
void hpaths_release(struct hpaths *ps);

/* A new zeroed commit at the end of h (the oldest so far); the pointer lasts
 * until the next history_add(). */
struct hcommit *history_add(struct history *h);
void history_release(struct history *h);
/* Sort a commit's files by path name (as history_load() leaves them). */
void history_sort_files(struct history *h, struct hcommit *c);
/*
 * Follow renames: walking from the newest commit back, a file's name at the
 * newest commit is its current name ("cur"); a rename old -> new makes old, in
 * every older commit, a name of whatever new is now.  Also sets h->newest.
 */
void history_follow_renames(struct history *h);
/* The current name of a path given by the user, or HPATH_NONE if history never saw it. */
uint32_t history_lookup(const struct history *h, const char *path);

/* ---- load.c ---- */

/* Open the repository containing the current directory; -1 after reporting. */
int hrepo_open(struct hrepo *r);
void hrepo_close(struct hrepo *r);
/*
 * The commit rev names (a sha, a branch, HEAD~3, a tag) in *out (free with
 * git_commit_free): 0, or -1 with *out NULL and, when why is not NULL,
 * libgit2's reason in *why (malloc'd).  Reports nothing.
 */
int hrepo_resolve_commit(const struct hrepo *r, const char *rev, git_commit **out, char **why);
/*
 * Take the commit rev names as r's head, as if HEAD were there: 0, or -1
 * after reporting that it names no commit.
 */
int hrepo_set_head(struct hrepo *r, const char *rev);
/*
 * A path given by the user, relative to the current directory (or absolute,
 * inside the root), as a root-relative path with "." and ".." resolved
 * lexically (the file need not exist).  Malloc'd; NULL after reporting.
 */
char *hrepo_user_path(struct hrepo *r, const char *arg);
/* Open the index unless --no-index; NULL when there is none (or it cannot be read). */
struct ci_index *hrepo_open_index(const struct couple_opts *o, const struct hrepo *r);
/* Whether stored (a commit id, hex) is HEAD or one of its ancestors (its id in *id). */
int hrepo_is_ancestor_of_head(struct hrepo *r, const char *stored, git_oid *id);
/* The commit the stored history was walked to, or NULL when the index holds none. Malloc'd. */
char *history_stored_head(struct ci_index *ix);
/*
 * Read the history into h (newest first, renames followed): from the index
 * when it holds history that HEAD still descends from (plus whatever git has
 * that is newer), else from git.  lines: line counts are needed.  0, or -1
 * after reporting.
 */
int history_load(const struct couple_opts *o, struct hrepo *r, struct history *h, int lines);

/* The files at HEAD. */
struct head_files {
	git_tree *tree;		/* HEAD's tree, or NULL */
};

int head_files_open(struct hrepo *r, struct head_files *hf);
/* 1 if path is a file (a blob) in HEAD's tree. */
int head_has(struct head_files *hf, const char *path);
void head_files_close(struct head_files *hf);
/* Read path's blob from tree into *data (malloc'd, NUL-terminated); 1 if
 * absent or not a blob, -1 after reporting. */
int hist_read_tree_blob(git_repository *repo, git_tree *tree, const char *path, char **data, size_t *n);

#endif
