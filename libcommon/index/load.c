/*
 * libcommon/index/load.c: records from a stream into the index (run.h):
 * `ci-chunk | ci-index load`, and --history's `ci-couple history | load`.
 * A load is one transaction: the first bad record loses the whole load.
 */
#include "core/common.h"
#include "index/engine.h"
#include "index/index.h"
#include "core/nd.h"
#include "parse/walk.h"
#include "index/vecsnap.h"

#include <errno.h>
#include <sys/wait.h>
#include <git2.h>

int ix_load(struct ix_run *r, const char *dir, FILE *in, const char *name, long *commits)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	struct walker w;
	struct ci_index *ix = NULL;
	struct nd_reader rd;
	struct loader ld;
	json_t *rec;
	char *path;
	int rc, lock, ret = EXIT_OK;
	sqlite3 *db;

	if (walker_open(&w, dir, &wo) < 0)
		return EXIT_IO;
	path = r->o.index ? xstrdup(r->o.index) : index_default_path(w.root);
	if (ix_ensure_dir(path) < 0 || (lock = ix_lock_dir(r, path)) < 0) {
		walker_close(&w);
		free(path);
		return EXIT_IO;
	}
	rc = index_open(&ix, path, r->o.damage);
	if (rc > 0) {
		/* a new, empty index */
		db = ix_create_db(path, w.root);
		if (!db || index_exec(db, "PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL;"
				    "PRAGMA synchronous=NORMAL") < 0) {
			sqlite3_close(db);
			ret = EXIT_IO;
			goto out;
		}
		ix_stamp(db, w.root, "created", NULL);
		sqlite3_close(db);
		rc = index_open(&ix, path, r->o.damage);
	}
	if (rc) {
		ret = EXIT_IO;
		goto out;
	}
	db = index_db(ix);
	loader_init(&ld, db, w.root, ix_vector_format(r, db));
	nd_reader_init(&rd, in, name);
	ld.src = name;
	if (index_exec(db, "BEGIN IMMEDIATE") < 0)
		ret = EXIT_IO;
	if (ret == EXIT_OK) {
		/* into an index without chunks (ci-chunk | ci-index load): term_df
		 * is filled once at the end, not counted chunk by chunk as well */
		sqlite3_stmt *st = ix_prep(db, "SELECT NOT EXISTS (SELECT 1 FROM chunks)");
		ld.df.full = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	while (ret == EXIT_OK && (rc = nd_read(&rd, &rec)) > 0) {
		ld.lineno = rd.lineno;
		if (load_record(&ld, rec) < 0)
			ret = EXIT_IO;
		json_decref(rec);
	}
	if (rc < 0)
		ret = EXIT_IO;
	if (ret == EXIT_OK && (loader_finish_file(&ld) < 0 || df_finish(db, &ld.df) < 0))
		ret = EXIT_IO;
	/* a load is one transaction: its records and their vectors together */
	if (ret == EXIT_OK && r->o.embed && ix_embed_missing(r, &ld, 1, 0) < 0)
		ret = EXIT_IO;
	if (ret == EXIT_OK) {
		if (ld.vectors || ld.commit_vectors)
			ix_set_meta(db, "vector_format", vec_format_name(ld.vfmt));
		ix_stamp(db, w.root, "updated", NULL);
		ret = index_exec(db, "COMMIT") < 0 || vecsnap_refresh(db, path) < 0 ? EXIT_IO : EXIT_OK;
	} else {
		/* nothing half-stored: the first bad record loses the whole load */
		index_exec(db, "ROLLBACK");
	}
	if (ret == EXIT_OK && verbosity)
		fprintf(stderr, "%s: loaded %ld files, %ld chunks, %ld defs, %ld refs, %ld imports, "
			"%ld vectors, %ld commits, %ld commit vectors, %ld couplings\n", progname, ld.files,
			ld.chunks, ld.defs, ld.refs, ld.imports, ld.vectors, ld.commits, ld.commit_vectors,
			ld.couplings);
	if (commits)
		*commits = ld.commits;
	loader_release(&ld);
	nd_reader_release(&rd);
out:
	index_close(ix);
	walker_close(&w);
	close(lock);
	free(path);
	return ret;
}

/* Store what `ci-couple <args>` run in dir writes; *commits: how many commit records. */
static int load_couple(struct ix_run *r, const char *dir, const char **args, long *commits)
{
	char **argv, *name = xasprintf("ci-couple %s", args[0]);
	int fd, status, ret, n = 0, nargs = 0;
	pid_t pid;
	FILE *in;

	while (args[nargs])
		nargs++;
	argv = xcalloc((size_t)nargs + 4, sizeof(*argv));
	argv[n++] = "ci-couple";
	if (r->o.index) {
		argv[n++] = "--index";
		argv[n++] = (char *)r->o.index;
	}
	while (*args)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	pid = spawn_reader("ci-couple", argv, dir, -1, 0, &fd);
	free(argv);
	if (pid < 0) {
		error_errno("cannot start ci-couple");
		free(name);
		return EXIT_IO;
	}
	in = fdopen(fd, "r");
	if (!in)
		die("fdopen: %s", strerror(errno));
	ret = ix_load(r, dir, in, name, commits);
	fclose(in);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		/* ci-couple said why on stderr; its records may be cut short */
		error("the history was not stored: %s failed", name);
		ret = EXIT_IO;
	}
	free(name);
	return ret;
}

/*
 * --history: store ci-couple's history of the repository at dir (all of it after
 * a build, which kept the old index's; the commits since the stored head after an
 * update; after build --rev, that commit's and its ancestors') and, when that
 * brought commits, its co-change coupling anew.  Not a git repository, or no
 * commit yet (without --rev): nothing to store.
 */
int ix_load_history(struct ix_run *r, const char *dir, int incremental, const char *rev)
{
	static const char *newer[] = { "history", "--incremental", NULL };
	const char *history[] = { "history", rev ? "--rev" : NULL, rev, NULL };
	/* the coupling of that commit's history too, not HEAD's */
	const char *coupling[] = { "coupling", "--limit", "0", rev ? "--rev" : NULL, rev, NULL };
	git_repository *repo = NULL;
	long commits = 0;
	int born, ret;

	walk_git_start();
	if (git_repository_open_ext(&repo, dir, 0, getenv("GIT_CEILING_DIRECTORIES")) < 0) {
		if (verbosity)
			fprintf(stderr, "%s: %s is not in a git repository: no history\n", progname, dir);
		return EXIT_OK;
	}
	/* after build --rev both steps read that commit's history: where HEAD points does not matter */
	born = rev || !git_repository_head_unborn(repo);
	git_repository_free(repo);
	if (!born)
		return EXIT_OK;
	ret = load_couple(r, dir, incremental ? newer : history, &commits);
	if (ret == EXIT_OK && (commits || !incremental))
		ret = load_couple(r, dir, coupling, NULL);
	return ret;
}

