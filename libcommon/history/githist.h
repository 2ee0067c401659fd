/*
 * githist.h: the first-parent history of a git repository, read with libgit2,
 * one commit at a time: who, when, why, and which files it changed (renames
 * detected) with the lines added and deleted in each.
 *
 * Shaped by long histories (tens of thousands of commits): commit ids are listed
 * first (cheap), then N workers diff commits against their first parent, each
 * with its own repository handle, while the calling thread receives the commits
 * in history order; workers never run more than a window ahead of it, so memory
 * stays bounded whatever the length of the history.
 */
#ifndef CI_GITHIST_H
#define CI_GITHIST_H

#include <stdint.h>
#include <git2.h>

/* One file changed by a commit, compared with the commit's first parent. */
struct hist_file {
	char *path;		/* path in the commit (for 'D', the path deleted) */
	char *old_path;		/* path in the first parent for 'R', else NULL */
	char status;		/* 'A' added, 'M' modified, 'D' deleted, 'R' renamed */
	char binary;		/* 1: binary content, added and deleted are 0 */
	long added;		/* lines added; -1 when line counts were not asked for,
				   or a blob of the change is absent (see hist_commit.missing) */
	long deleted;		/* lines deleted; -1 likewise */
};

struct hist_commit {
	char sha[GIT_OID_HEXSZ + 1];	/* commit id, hex */
	int64_t time;		/* committer time, seconds since the epoch */
	char *author;		/* author name */
	char *email;		/* author email */
	char *message;		/* whole message, trailing whitespace removed */
	int parents;		/* number of parents (2 or more: a merge) */
	struct hist_file *files;	/* sorted by path, bytewise */
	size_t files_nr, files_alloc;	/* used, allocated */
	int huge;		/* more than hist_opts.max_files files */
	struct hist_commit *merged;	/* for a merge, with hist_opts.merged: the commits it
					   brought in (newest first; no files), else NULL */
	size_t merged_nr;		/* how many */
	int missing;		/* changed files with a blob absent from the object database
				   (a partial clone): their line counts are -1, and no rename
				   was looked for among them */
};

#define HIST_NO_SINCE INT64_MIN

struct hist_opts {
	int64_t since;		/* stop at the first commit older than this, or HIST_NO_SINCE */
	long max_commits;	/* at most this many commits; 0: no limit */
	long max_files;		/* a commit that changes more files is huge */
	int lines;		/* count added and deleted lines (costs most of the time) */
	int threads;		/* diffing threads, 1 or more */
	const git_oid *start;	/* when set, walk from this commit instead of HEAD */
	const git_oid *stop;	/* when set, this commit and its ancestors are not walked */
	int merged;		/* list the commits each merge brought in (see merged) */
};

/*
 * Called in history order (newest first) from the calling thread.  The callback
 * may take over any pointer of c by setting it to NULL (and files_nr to 0 for
 * files); what is left is freed when it returns.  A non-zero return stops the walk
 * and is returned by hist_walk.
 */
typedef int (*hist_commit_fn)(struct hist_commit *c, void *data);

/*
 * Walk the first-parent history of HEAD in repo, newest first, diffing each commit
 * against its first parent (the root commit against the empty tree) with rename
 * detection (git's default similarity, 50%).  A merge is diffed against its first
 * parent too, so it shows everything the merged branch brought in; with
 * opts->merged, the commits of that branch (reachable from its other parents, not
 * from the first) are listed in its merged array, without their files, so that
 * their authors and messages are not lost.
 * Returns 0 (an unborn HEAD walks nothing), fn's non-zero value, or -1 after
 * reporting a libgit2 error.
 */
int hist_walk(git_repository *repo, const struct hist_opts *opts, hist_commit_fn fn, void *data);

/* Free what c owns and zero it.  Cannot fail. */
void hist_commit_release(struct hist_commit *c);

/* Report libgit2's last error as "<what>: <message>"; returns -1. */
int hist_git_error(const char *what);

#endif
