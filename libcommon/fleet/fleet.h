/*
 * libcommon/fleet/fleet.h: one query over many shards (issue 28).
 *
 * A shard set is many indexes, one per repository, each a self-contained
 * SQLite file (what `ci fleet build` publishes, or any indexes at hand).
 * ci-grep, ci-rank and ci-refs hand a command line with --shards over to
 * fleet_run() (cmd/fleet-serve.c, which first asks the set's resident server),
 * which answers each shard as the command run with --index <shard> would:
 * on a thread of this process through the command's library (struct
 * fleet_cmd, the default), or as a forked child that runs its main()
 * (fleet_main(), --shards-mode fork), up to a number of shards at a time;
 * it takes each shard's records, names the repository in each (`"repo"`,
 * right after `"_type"`) and merges them:
 *
 *   grep, refs  by repository (the set's order: names sorted bytewise), then
 *               as the shard wrote them (by path and line);
 *   rank        hits by score, best first, then repository, path and line,
 *               at most --limit of them.  ci-rank's score is already
 *               normalised per shard: its weighted reciprocal-rank fusion
 *               divided by the fusion's maximum (rank 1 in every signal), so
 *               it is a number in [0, 1] that does not depend on a
 *               collection's BM25 statistics; raw BM25 scores of different
 *               collections are never compared.
 *
 * A `fleet` record ends the answer (shards asked, answered, failed).  A
 * shard whose command failed (exit status other than 0, or 1 "nothing
 * found") is a `fleet_error` record and a line on stderr, and the exit
 * status is 3; the answers of the other shards are still written.
 *
 * The workload that shaped it: an organisation's thousands of small
 * repositories, where a shard's query is well under a millisecond of work
 * and a process a shard, its SQLite open and schema read, were most of the
 * cost (bench/fleet.sh, SCALE.md): hence the threads, and a pool of open
 * indexes for a resident server.
 *
 * No state outside the struct fleet_run the caller passes.
 */
#ifndef CI_FLEET_H
#define CI_FLEET_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

enum fleet_kind {
	FLEET_GREP,		/* ci-grep: matches by repository, then path */
	FLEET_RANK,		/* ci-rank: hits by normalised score */
	FLEET_REFS,		/* ci-refs: records by repository, then path */
};

struct fleet_shard {
	char *name;		/* the repository's name (owned) */
	char *index;		/* the index file (owned) */
};

struct fleet_set {
	struct fleet_shard *shard;	/* sorted by name, names unique */
	size_t shard_nr, shard_alloc;
};

/*
 * Load the shard set spec into set (initialised to zeros by the caller):
 *   a directory: each <name>.db in it (names starting with "." are a build
 *     in progress and skipped), and each <name>/.ci-index/index.db;
 *   a file: a manifest, one shard a line, either TSV "<name>\t<index>" or
 *     NDJSON {"name":...,"index":...}; blank lines and "#" lines are
 *     skipped; a relative index is relative to the manifest's directory.
 * Returns 0, or -1 after an error message (unreadable, malformed, a name
 * twice, an empty set).
 */
int fleet_set_load(struct fleet_set *set, const char *spec);

/*
 * Keep only the shards named in names (comma-separated).  Returns 0, or -1
 * after an error message naming a repository that is not in the set.
 */
int fleet_set_filter(struct fleet_set *set, const char *names);

void fleet_set_release(struct fleet_set *set);

/*
 * The shard set a command line asks for: the value of --shards <spec> or
 * --shards=<spec>, else $CI_SHARDS; NULL when none, and always NULL in a
 * command that fleet_main() started itself ($CI_FLEET_CHILD).
 */
const char *fleet_wanted(int argc, char **argv);

/*
 * Run the command line argv (of the command kind) over the shard set it
 * names (fleet_wanted()) and write the merged records on stdout.  Options
 * of its own, taken out of the command line the shards get:
 *   --shards <spec>        the shard set (or $CI_SHARDS)
 *   --shards-repo <names>  only these repositories, comma-separated (or
 *                          $CI_SHARDS_REPO; ci-mcp's `repo` parameter)
 * $CI_SHARDS_JOBS shards at a time (default: twice the CPUs).  Returns the
 * exit status: 0 something found, 1 nothing, 2 a usage error every shard
 * reported (written once), 3 a shard failed or the set cannot be read.
 *
 * run_main is the command's own main(): each shard's command is then a fork of
 * this process that calls it (no exec: a process start is most of what a
 * small shard's query costs), which is sound because fleet_main() is called
 * first thing in main, before any thread or state of the command exists.
 * NULL: each shard's command is the binary run anew (posix_spawn).
 */
int fleet_main(enum fleet_kind kind, int (*run_main)(int, char **), int argc, char **argv);

/*
 * ---- in this process: a thread per CPU, a shard at a time each ----
 *
 * A command that can answer one shard through its library (search.h,
 * rank.h, refs.h) without a process of its own says how in a struct
 * fleet_cmd; fleet_run() then answers each shard on a thread of this
 * process, with the shard's index opened there (or kept open by a
 * struct fleet_pool: a shard server's), and merges the records exactly as
 * the forked path does (the same records, byte for byte: t1240).  What a
 * shard's query reports with error() or warning() is its own (captured,
 * util_report_to), as a forked command's stderr is.
 *
 * A die() in a shard's query (an SQLite statement that cannot be prepared,
 * a damaged page) ends that shard's query, not the process: util_trap_die
 * on each shard's thread says it as the shard's message and parks the thread
 * (what it held stays, unused, until the process ends); and SQLite's reports
 * of damage on a shard's thread go to that shard's index
 * (index_damage_thread), which then fails as the command run alone would.
 * Either way the shard is a fleet_error record, the others still answer.
 */
struct ci_index;
struct buf;

struct fleet_cmd {
	enum fleet_kind kind;
	int (*run_main)(int, char **);	/* the command's main: the forked path */
	/*
	 * Parse the shards' command line (argv[0] the command's, no --shards
	 * or --index) once, on the caller's thread: 0 with *state the query,
	 * or 1 when the forked path must answer it (what the threads do not:
	 * ci-grep's paths or -q, --help, ...).  A usage error exits 2 with the
	 * command's message, as every shard's command would have.
	 */
	int (*prepare)(int argc, char **argv, void **state);
	/*
	 * One shard's query over its open index ix (index_path its file):
	 * records appended to out, messages other than error()'s to err;
	 * returns the command's exit status.  Called on several threads at
	 * once, each with a shard of its own: state is read-only.
	 */
	int (*shard)(void *state, struct ci_index *ix, const char *index_path, void *res,
		     struct buf *out, struct buf *err);
	void (*release)(void *state);
	/*
	 * Optional, for a shard server (struct fleet_pool): what a shard's
	 * query would otherwise read again each time (ci-rank: its candidates'
	 * metadata), made when the pool opens the shard's index and again when
	 * it reopens it; shard() gets it as res (NULL: none, or no pool).  Its
	 * answers must be the answers without it.
	 */
	void *(*resident)(struct ci_index *ix, const char *index_path);
	void (*resident_release)(void *res);
	/*
	 * Optional, with resident: 1 when the shard with resident part res
	 * certainly answers the query nothing (exit 1, no record, no message),
	 * so that it is not asked (ci-grep: fleet/prune.h); read-only, on
	 * several threads at once.  $CI_SHARDS_PRUNE=0: every shard is asked.
	 */
	int (*skip)(void *state, void *res);
};

/*
 * A shard set opened: each shard's index kept open between queries
 * (INDEX_IMMUTABLE: no lock and no check of the file per statement, its
 * pages mapped), with what cmd->resident keeps beside it, and the file's
 * state when it was opened.
 */
struct fleet_pool {
	const struct fleet_cmd *cmd;
	struct fleet_set set;		/* every shard of the set */
	struct ci_index **ix;		/* one a shard; NULL: it could not be opened ... */
	char **why;			/* ... and this is why (owned), as the shard's command says it */
	void **res;			/* cmd->resident's, one a shard (NULL: none) */
	struct fleet_seen {
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec mtime;
	} (*seen)[2];			/* a shard's index file and its WAL log when opened */
	unsigned char *died;		/* one a shard: a query died on it in this process (its
					   thread parked, holding its index): opened anew */
	size_t parked;			/* threads parked so, in all */
};

/*
 * Load the set spec and open each shard's index (read-only), on the
 * caller's thread.  A shard that cannot be opened is kept, with why: each
 * query reports it as a fleet_error.  Returns 0, or -1 after a message (the
 * set cannot be read).
 */
int fleet_pool_open(struct fleet_pool *pool, const struct fleet_cmd *cmd, const char *spec);
/*
 * Before a query: each shard whose index file (or its log) is another than
 * when it was opened (inode, size, modification time) opened again, with
 * its resident part; a stat or two a shard.  Returns how many were.
 */
size_t fleet_pool_refresh(struct fleet_pool *pool);
/*
 * A shard server answering a query itself (fleet/serve.h), not in a worker
 * forked for it: each shard's query on a thread of the server, over the
 * pool.  A shard whose query died there (util_trap_die) is opened anew by
 * the next fleet_pool_refresh (the parked thread keeps the old one), and
 * once FLEET_PARKED_MAX threads are parked so, queries go to workers again.
 */
#define FLEET_PARKED_MAX 32

/*
 * In the caller of a set's server, before it hands argv over: may the server
 * answer it itself?  1 when fleet_run would answer it on threads (the
 * command's prepare took it), 0 when it needs processes of its own (fork
 * mode, --help, ci-grep's paths ...).  What the command line gets wrong ends
 * the caller here as fleet_run would have (exit 2 and its message), so that
 * the server never meets it.
 */
int fleet_here_ok(const struct fleet_cmd *cmd, int argc, char **argv);
void fleet_pool_release(struct fleet_pool *pool);

/*
 * Run the command line argv of cmd over the shard set it names and write
 * the merged records on stdout: fleet_main's contract, its options, and
 *   --shards-mode <m>  thread (the default where cmd->prepare is set) or
 *                      fork (fleet_main's process a shard); or $CI_SHARDS_MODE
 * pool: the set already open (a shard server's; --shards then names it), or
 * NULL: the set loaded, each index opened and closed by its thread.
 * $CI_SHARDS_JOBS threads (default: the CPUs).  Returns the exit status.
 */
int fleet_run(const struct fleet_cmd *cmd, struct fleet_pool *pool, int argc, char **argv);

#endif
