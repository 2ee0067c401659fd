/*
 * libcommon/fleet/fleet.h: one query over many shards (issue 28).
 *
 * A shard set is many indexes, one per repository, each a self-contained
 * SQLite file (what `ci fleet build` publishes, or any indexes at hand).
 * ci-grep, ci-rank and ci-refs hand a command line with --shards over to
 * fleet_main(), which runs the same command once per shard (its main() in a
 * forked child, with --index <shard>), up to a number of shards at a time,
 * reads each shard's records, names the repository in each (`"repo"`, right
 * after `"_type"`) and merges them:
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
 * repositories, one process per shard (a shard's command is milliseconds of
 * work; starting it is most of the cost: bench/fleet.sh, SCALE.md).
 *
 * No state outside the struct fleet_run the caller passes.
 */
#ifndef CI_FLEET_H
#define CI_FLEET_H

#include <stddef.h>

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

#endif
