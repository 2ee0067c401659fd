/*
 * chunkrun.h: chunk a list of files with N threads, handing each file's records
 * to the caller in list order (so output never depends on thread timing).
 */
#ifndef CI_CHUNKRUN_H
#define CI_CHUNKRUN_H

#include "parse/chunk.h"
#include "parse/walk.h"

struct chunk_result {
	const struct walk_file *file;	/* the file */
	const char *records;		/* its NDJSON records (may be empty), or NULL when prepared */
	size_t records_len;		/* bytes */
	void *prepared;			/* what the hook's prepare() made of them, or NULL */
	const char *warnings;		/* whole lines for stderr (may be empty) */
	size_t warnings_len;		/* bytes */
	int degraded;			/* chunked by lines, or unreadable */
	enum walk_skip skipped;		/* WALK_OK, or why the content was left out */
};

/* Called in list order from the calling thread; a negative return stops the run. */
typedef int (*chunk_result_fn)(size_t i, const struct chunk_result *r, void *data);

/*
 * Work on a file's records done by the worker that chunked it, so that the
 * calling thread has less to do (ci-index parses the records there: the thread
 * that writes the index is a build's bottleneck).  prepare(records, len,
 * &bytes, data) runs in a worker, for a file with records; what it returns is
 * the result's prepared (the text is then dropped), of about bytes of memory
 * (what the run's budget counts), freed by release() after the callback; when
 * it returns NULL the callback gets the text.
 */
struct chunk_hook {
	void *(*prepare)(const char *records, size_t len, size_t *bytes, void *data);
	void (*release)(void *prepared);
	void *data;
};

/*
 * Read, classify (walk_classify) and chunk every file of list (paths relative
 * to w->root) with nthreads workers, at most a bounded window ahead of fn;
 * hook, if not NULL, prepares each file's records in the workers.  Returns 0,
 * or fn's negative value.
 */
int chunk_run(struct walker *w, const struct walk_list *list, const struct chunk_opts *opts,
	      const struct import_ctx *ictx, int nthreads, const struct chunk_hook *hook,
	      chunk_result_fn fn, void *data);

/*
 * chunk_run() for files whose content is a blob of repo (oids[i] is
 * list->files[i]'s, as walker_walk_tree() gives them), read from the object
 * database instead of the work tree: each worker opens repo anew (a
 * git_repository is not shared between threads).  A blob that cannot be read
 * stops the run with -1 after a message.
 */
struct git_repository;
struct git_oid;
int chunk_run_blobs(struct walker *w, const struct walk_list *list, struct git_repository *repo,
		    const struct git_oid *oids, const struct chunk_opts *opts,
		    const struct import_ctx *ictx, int nthreads, const struct chunk_hook *hook,
		    chunk_result_fn fn, void *data);

#endif
