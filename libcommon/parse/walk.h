/*
 * walk.h: find the files of a repository that are worth reading.
 *
 * The walker honours git's ignore rules through libgit2 (.gitignore files at every
 * level, .git/info/exclude, core.excludesFile) for untracked files (a file in
 * git's index is never ignored, as in git), never enters .git or ci's own
 * .ci-index, does not follow symbolic links, and skips by default:
 *   - files over a size limit (1 MiB unless changed),
 *   - vendored trees (node_modules/, vendor/, third_party/, ...),
 *   - generated files known by name (*.min.js, *.pb.go, lock files, ...).
 * Files whose content turns out binary (a NUL in the first 8000 bytes, as git
 * decides) or generated (a "Code generated ... DO NOT EDIT" or "@generated" marker
 * near the top) are recognised by walk_classify() once the caller has read them.
 *
 * Paths are relative to the repository root, '/'-separated, sorted bytewise.
 */
#ifndef CI_WALK_H
#define CI_WALK_H

#include <stddef.h>
#include <stdint.h>

struct git_repository;
struct git_index;
struct git_tree;
struct git_oid;

struct walk_opts {
	uint64_t max_filesize;	/* bytes; 0 means no limit */
	int include_vendored;	/* also vendored and generated files */
	int no_ignore;		/* do not honour .gitignore and friends */
	int lazy_stat;		/* trust readdir's d_type: files and directories it types are
				 * not stat'd (their size and mtime are 0: the caller checks
				 * the size limit when it reads) */
	int skip_hidden;	/* leave out entries whose name starts with '.' (rg's
				 * default; ci-index keeps them) */
	int ignore_files;	/* also honour .ignore and .rgignore files, as rg does:
				 * .rgignore rules win over .ignore's, which win over
				 * git's (not with no_ignore) */
};

#define WALK_DEFAULT_MAX_FILESIZE (1024 * 1024)
#define WALK_OPTS_INIT { WALK_DEFAULT_MAX_FILESIZE, 0, 0, 0, 0, 0 }

/* Why a file was left out (indices into walk_stats.skipped). */
enum walk_skip {
	WALK_OK = 0,
	WALK_IGNORED,		/* matched an ignore rule */
	WALK_VENDORED,		/* under a vendored directory */
	WALK_GENERATED,		/* generated, by name or by marker */
	WALK_TOO_LARGE,		/* over max_filesize */
	WALK_BINARY,		/* looks binary */
	WALK_SYMLINK,		/* a symbolic link */
	WALK_SPECIAL,		/* a FIFO, socket or device */
	WALK_UNREADABLE,	/* could not be listed or stat'ed */
	WALK_SKIP_MAX
};

struct walk_file {
	char *path;		/* relative to the root; owned by the list */
	uint64_t size;		/* bytes, from lstat */
	int64_t mtime;		/* seconds */
	int explicit_;		/* named by the user, not found by walking */
};

/* A directory the walk entered (or, for walker_list_dir(), found). */
struct walk_dir {
	char *path;		/* relative to the root, "" for the root; owned by the list */
	int64_t mtime_ns;	/* its modification time when listed, nanoseconds */
	int entered;		/* its entries were listed */
};

struct walk_list {
	struct walk_file *files;	/* sorted by path after walker_finish() */
	size_t files_nr, files_alloc;
	struct walk_dir *dirs;		/* directories, sorted after walker_finish() */
	size_t dirs_nr, dirs_alloc;
	unsigned long skipped[WALK_SKIP_MAX];	/* counts by reason */
};

struct walker {
	char *root;			/* absolute, real path of the root, no trailing '/' */
	struct git_repository *repo;	/* NULL outside a git work tree */
	struct git_index *gindex;	/* its index (the tracked files), or NULL; read
					 * when an ignore rule is first asked about */
	int gindex_read;		/* gindex was looked for */
	struct walk_opts opts;		/* copy of the options */
	struct walk_ignores *ign;	/* .ignore and .rgignore files read so far
					 * (ignore_files), or NULL */
};

/*
 * Start libgit2, once for the process: the walker does it only where a
 * repository may be (its init parses the system's CA certificates); anything
 * else that calls libgit2 without a walker's repository calls this first.
 */
void walk_git_start(void);

/*
 * Find the repository containing start (a directory; "." for the current one) and
 * open it.  Outside a git work tree the root is start itself and no ignore rules
 * apply.  Returns 0 or -1 after reporting.
 */
int walker_open(struct walker *w, const char *start, const struct walk_opts *opts);
void walker_close(struct walker *w);

/*
 * Turn a path given by the user (relative to the current directory, or absolute)
 * into a path relative to the root in out ("" for the root itself).  A path that
 * leaves the root, directly or through a symbolic link, is an error.
 */
int walker_relpath(struct walker *w, const char *user_path, char **out);

/*
 * Add to list the files under rel (a root-relative file or directory, "" for the
 * whole tree).  When explicit is set, rel was named by the user: it is listed even if
 * ignored or vendored (as git add -f and rg do for named files), but a too-large
 * file is still skipped with a warning.  (A symbolic link named by the user was
 * already resolved by walker_relpath: its target is read, under the target's
 * path, if it is inside the root.)  Returns 0, or -1 if rel does not exist
 * (reported).
 */
int walker_walk(struct walker *w, const char *rel, int explicit_, struct walk_list *list);

/*
 * List the files of tree (a commit's tree in repo) as walker_walk(w, "", 0, list)
 * lists a clean checkout of it: every entry is tracked, so no ignore rule applies;
 * symbolic links and submodules are skipped, private and vendored directories not
 * entered, generated names and blobs over the size limit (their size read from
 * the object header) left out.  The files' size is the blob's, their mtime 0.
 * *oids gets a malloc'd array of their blob ids, in the list's (sorted) order.
 * Returns 0, or -1 after reporting libgit2's error.
 */
int walker_walk_tree(struct walker *w, struct git_repository *repo, struct git_tree *tree,
		     struct walk_list *list, struct git_oid **oids);

/*
 * 1 if rel (root-relative, a directory when is_dir) is left out by git's ignore
 * rules: never for a tracked file or a directory holding one (git's rule), else
 * as libgit2 says.  0 outside a repository or with no_ignore.
 */
int walker_is_ignored(struct walker *w, const char *rel, int is_dir);

/*
 * 1 if a walk started at the directory rel[0..from) (from 0: the root; else
 * rel[from - 1] is its '/') would not reach the file rel because of the rules
 * the index does not follow: a hidden name (skip_hidden) or a .ignore or
 * .rgignore rule (ignore_files) on rel or a directory on the way.  How a
 * reader of the index (which holds hidden files and follows git's rules only)
 * leaves out what a walk would.  Thread-safe.
 */
int walker_path_excluded(struct walker *w, const char *rel, size_t from);

/*
 * The decision of the .rgignore and .ignore files between the root and rel
 * (root-relative, a directory when is_dir): 1 ignored, -1 whitelisted ('!'),
 * 0 none of their rules says.  0 unless ignore_files (and not no_ignore).
 */
int walker_ignore_files_say(struct walker *w, const char *rel, int is_dir);

/*
 * Gitignore-style glob: '*' and '?' do not cross '/', '**' does ("**\/"
 * also matches nothing), [...] is a class ('!' or '^' negates), '\' quotes.
 */
int walk_glob_match(const char *glob, const char *s);

/*
 * List the one directory rel (root-relative, "" for the root) as walker_walk()
 * would, without entering its subdirectories: its files go to list->files, the
 * subdirectories a walk would enter to list->dirs (entered = 0, mtime from lstat),
 * and rel itself to list->dirs (entered = 1).  This is how a reader of the index
 * re-lists a directory that changed since the index was written.  Returns 0, or
 * -1 if rel cannot be listed (nothing reported: it may have gone).
 */
int walker_list_dir(struct walker *w, const char *rel, struct walk_list *list);

/*
 * Walk the whole tree as walker_walk(w, "", 0, list) would, from the record of
 * an earlier walk: dirs (sorted by path, entered ones, with their mtimes then)
 * and known (the files it listed, sorted).  A directory whose mtime is unchanged
 * (and older than racy_ns, a change within the same clock tick being invisible)
 * holds the same entries, so it is not read: its known files are lstat'ed.  The
 * others are listed again, and new directories walked.  The caller makes sure
 * the ignore rules did not change (walk_rules_unchanged).  Returns 0 or -1.
 */
struct walk_known_hint;
int walker_walk_known(struct walker *w, const struct walk_dir *dirs, size_t dirs_nr, int64_t racy_ns,
		      const char *const *known, size_t known_nr, const struct walk_known_hint *hint,
		      struct walk_list *list);
/*
 * What a watcher of the tree knows (ci-index serve: inotify): clean(dir) says
 * that nothing in the directory changed since the record was made, so neither
 * it nor its known files are looked at: they are listed as recorded, known[i]
 * with size[i] bytes and mtime[i] seconds.
 */
struct walk_known_hint {
	const uint64_t *size;
	const int64_t *mtime;
	int (*clean)(const char *dir, void *ctx);
	void *ctx;
};

/*
 * The files holding the ignore rules a walk of list followed, as "<size>
 * <mtime_ns> <path>" lines appended to out: each .gitignore listed, and in a
 * repository .git/info/exclude and git's index (what is tracked).  Nothing
 * outside a repository or with no_ignore.
 */
struct buf;
void walk_rules(struct walker *w, const struct walk_list *list, struct buf *out);
/* 1 if every file of a walk_rules() text is as it was (relative paths from rootfd). */
int walk_rules_unchanged(const char *rules, int rootfd);

/*
 * lstat() of many paths relative to rootfd, each by its name in its directory:
 * the directory is opened once (O_PATH) for a run of paths in it, and a path
 * under a directory that became a symbolic link is not found (a walk would not
 * go there).  A lookup of the whole path per file walked each component again,
 * a quarter of the time of 78,000 stats.  Start with { .rootfd = fd, .fd = -1 }.
 */
struct stat;
struct dir_stat {
	int rootfd;
	int fd;			/* the directory open, or -1 */
	char *dir;		/* its path */
	size_t len, alloc;
};
int dir_stat(struct dir_stat *ds, const char *path, struct stat *st);
void dir_stat_release(struct dir_stat *ds);

/* Sort the list and drop duplicates. */
void walk_list_finish(struct walk_list *list);
void walk_list_release(struct walk_list *list);
/* The list's paths as a NULL-terminated array (borrowed strings; free the array). */
const char **walk_list_paths(const struct walk_list *list);

/*
 * Classify content already read: WALK_BINARY, WALK_GENERATED (only when the walker
 * skips generated files), or WALK_OK.
 */
enum walk_skip walk_classify(const struct walker *w, const char *path, const char *data, size_t n);

/* 1 if path is under a vendored directory or is a generated file by its name. */
int walk_is_vendored_path(const char *path);
int walk_is_generated_name(const char *path);

/* Human name of a skip reason ("binary", "too large", ...). */
const char *walk_skip_name(enum walk_skip why);

#endif
