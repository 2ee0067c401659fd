/*
 * search/plan.h: inside libcommon/search, the files a search reads (struct
 * target: from the walk, or the index's candidates and the files to check),
 * the scope of the paths given, and the job the reading threads share.  Not a
 * contract for other folders: search.h is.
 */
#ifndef CI_SEARCH_PLAN_H
#define CI_SEARCH_PLAN_H

#include <pthread.h>

#include "index/index.h"
#include "parse/walk.h"

struct search;
struct search_opts;
struct lang;
struct matcher;

/* What is to be done with a file to search. */
enum target_mode {
	T_READ,		/* read and search it */
	T_VERIFY,	/* a candidate: read it if it is still a file to read (stat) */
	T_CHECK,	/* the index says it cannot match: read it only if it changed */
	T_SKIP,		/* checked: unchanged, or gone */
};

/*
 * The parts of an indexed file that may hold a match, when it is as indexed:
 * the trigram table's segments that matched the query (struct index_seg:
 * whole lines), neighbours merged, in order.
 */
struct plan {
	size_t nr;			/* parts */
	struct index_seg part[];	/* in file order */
};

/* A file to search. */
struct target {
	char *path;		/* root-relative */
	const char *disp;	/* as written: relative to the current directory, or as
				   given (display_path; set by the worker that takes it) */
	struct plan *plan;	/* an indexed candidate as indexed: the parts to read, or NULL */
	uint64_t size;		/* as listed (walk) or indexed */
	int64_t mtime;		/* likewise */
	unsigned char mode;	/* enum target_mode */
	unsigned char explicit_;	/* named on the command line */
	unsigned char need_lang;	/* -t: the language depends on the content */
};

/* One file's result, handed from a worker to the writer. */
struct slot {
	struct buf out;		/* records or lines */
	struct buf warn;	/* warnings, whole lines */
	int done;		/* the worker has finished it */
	int matched;		/* it has a matching line */
	int failed;		/* it could not be read */
	int limited;		/* a limit cut its search short: results may be incomplete */
};

/* The files to search. */
struct targets {
	struct target *v;	/* the files */
	size_t nr, alloc;
};

/*
 * The root-relative paths named on the command line in one tree, or the
 * current directory when none is named: none at all (nr 0) when that is the
 * root, where paths are written root-relative as they are.
 */
struct scope {
	char **rel;		/* the paths that exist */
	int *is_dir;		/* each is a directory */
	const char **disp;	/* each as the user wrote it: what the paths of the files
				   under it start with; "" for the current directory */
	size_t nr;
	int given;		/* paths were given (nr may be 0 if none exists) */
};

/* The entry of sc that path is under (the longest, the first of equals), or -1. */
static inline long scope_find(const struct scope *sc, const char *path)
{
	size_t i, l, best_len = 0;
	long best = -1;

	for (i = 0; i < sc->nr; i++) {
		l = strlen(sc->rel[i]);
		if (best >= 0 && l <= best_len)
			continue;
		if (!l || (!strncmp(path, sc->rel[i], l) && (path[l] == '/' || (!path[l] && !sc->is_dir[i])))) {
			best = (long)i;
			best_len = l;
		}
	}
	return best;
}

#define WINDOW 1024	/* files read ahead of the one being written, at most */

/* What the reading threads, the lister and the writer share. */
struct job {
	struct search *q;		/* the query */
	const struct search_opts *o;	/* its options */
	const struct matcher *m;	/* its pattern */
	struct walker *w;		/* the repository */
	int rootfd;			/* its root, for openat */
	struct targets *ts;		/* the files, sorted; grows while listing */
	size_t avail;			/* files listed so far: workers may take them */
	int listed;			/* the list is complete */
	struct slot *slots;		/* WINDOW slots; file i in slots[i % WINDOW] */
	size_t next;			/* next file to take */
	size_t written;			/* files written so far */
	size_t writer_waits;		/* the file the writer waits for, or SIZE_MAX */
	int workers_wait;		/* workers waiting for room in the window */
	pthread_mutex_t lock;		/* guards the above and the slots' done */
	pthread_cond_t work_cond;	/* room in the window */
	pthread_cond_t done_cond;	/* the writer's file is done */
	int parts;			/* the pattern allows reading files by their plans */
	/* counters (atomic) */
	unsigned long n_read;		/* files read */
	unsigned long n_parts;		/* of which read by their plans' parts */
	unsigned long long bytes;	/* bytes read */
};

/* A file of the index, as its file list or trigram query gives it. */
struct ifile {
	char *path;		/* root-relative */
	struct plan *plan;	/* a candidate's parts to read (plan_of), or NULL */
	int64_t size, mtime;	/* when indexed */
	int exact;		/* its trigrams can be trusted */
	int candidate;		/* the trigram query says it may match */
};

struct ifiles {
	struct ifile *v;	/* sorted by path */
	size_t nr, alloc;
};

/* What choosing the files did (--stats). */
struct plan_stats {
	const char *mode;		/* "scan" or "index" */
	int walked;			/* the tree was walked */
	size_t indexed;			/* files in the index */
	size_t candidates;		/* trigram candidates */
	int served;			/* ... told by the index's server */
	unsigned long checked;		/* indexed files stat'ed */
	unsigned long unchanged;	/* ... and found unchanged */
	char *query;			/* the trigram query */
	double t_files;			/* seconds: reading the index's file list */
	double t_query;			/* ... the trigram query */
	double t_tree;			/* ... checking the directories */
	double t_check;			/* ... checking the files */
	size_t dirs;			/* directories recorded in the index */
	size_t dirs_changed;		/* ... found changed (re-listed) */
	int all_clean;			/* the server saw nothing happen: none read */
	size_t relisted;		/* files listed in them */
};

static inline double secs(int64_t a, int64_t b)
{
	return (double)(b - a) / 1e9;
}

/* select.c */

/* Is l one of -t's languages? */
int lang_wanted(const struct search_opts *o, const struct lang *l);
/*
 * Add a file if the filters let it through; path is malloc'd: taken, or freed.
 * Returns the target added, or NULL.
 */
struct target *add_target_own(struct targets *ts, const struct search *q, char *path, uint64_t size,
			      int64_t mtime, int mode, int explicit_);
/* The same with path copied. */
struct target *add_target(struct targets *ts, const struct search *q, const char *path, uint64_t size,
			  int64_t mtime, int mode, int explicit_);
void targets_release(struct targets *ts);
/* Sort the targets by path, one per path (T_READ wins). */
void targets_sort(struct targets *ts);
/* Is path in the scope (under one of its directories, or the scope is the root)? */
int in_scope(const struct scope *sc, const char *path);
/* The walker's list for the scope, as targets to read.  Returns the paths that failed. */
int walk_targets(struct walker *w, const struct search *q, const struct scope *sc, struct targets *ts,
		 struct walk_list *list);
/* The thread that walks the whole tree while it is searched, handing files to jb's workers. */
void *search_lister(void *jb);

/* read.c */

/*
 * Search the files with nthreads workers, writing each file's output in order.
 * Returns EXIT_OK if something matched, EXIT_NOTHING if not, SEARCH_EXIT_ERROR
 * after a read or write error, else SEARCH_EXIT_INCOMPLETE when a limit cut
 * the search of a file short (whatever matched elsewhere).
 */
int search_run(struct job *jb, int nthreads, int context_sep, int stream);

/* plan.c */

#define CHECK_BATCH 512	/* files or directories stat'ed by one thread at a time */

/* index_files' callback: f appended to the struct ifiles data. */
int collect_file(const struct index_file *f, void *data);
void ifiles_release(struct ifiles *fs);
int cmp_ifile(const void *a, const void *b);
int cmp_str(const void *a, const void *b);
/* Check the T_CHECK files (trust: none), then keep only those to read.  *checked, *unchanged: counts. */
void check_targets(struct targets *ts, int rootfd, const struct search_opts *o, int trust,
		   unsigned long *checked, unsigned long *unchanged);
/*
 * The files to search with the index ix: its candidates, every indexed file to
 * be checked for a change, and when the tree's directories changed, the walker's
 * files that the index does not know.  Returns 0, or -1 when the index cannot be
 * used (the caller scans instead).
 */
int index_targets(struct search *q, struct ci_index *ix, struct walker *w, int rootfd, const struct scope *sc,
		  struct targets *ts, struct plan_stats *ps);

/* dirs.c */

/*
 * The files to search, checking the tree by its directories: 0, or 1 when the
 * index cannot tell (the caller walks), -1 on an error of the index.
 */
int dir_targets(struct search *q, struct ci_index *ix, struct walker *w, int rootfd, const char *query,
		const struct scope *sc, struct targets *ts, struct plan_stats *ps);
/*
 * The candidates of the trigram query from the index's server, sorted by
 * path, if it answers for the index as this search reads it.  Returns 0, or 1
 * (ask the index).
 */
int server_candidates(struct search *q, struct ci_index *ix, const char *query, struct ifiles *out);

#endif
