/*
 * libcommon/fleet/prune.h: skipping the shards that cannot match a grep.
 *
 * A shard server keeps, for each shard, the set of the trigrams its index
 * holds (read once when it opens the shard, again when it opens it anew:
 * fleet_pool_refresh).  A pattern's trigram query (trigram.h: an AND/OR of
 * quoted strings, in FTS5 syntax) that the shard's set does not satisfy,
 * each string taken as the AND of its trigrams, has no candidate in that
 * shard: ci-grep over it trusting its index (--trust-index, as a shard set's
 * query does) reads no file and answers nothing, so the shard need not be
 * asked.  The answer is the answer without skipping (t1261), because:
 *   - the query is monotone (no NOT): false on the union of the trigrams of
 *     all of a shard's files, it is false on each of them;
 *   - a string's trigrams all occur in any text that holds the string;
 *   - a trigram is kept as a 64-bit hash, so a trigram the shard does not
 *     have can only look present (a shard kept that could have been
 *     skipped), never the other way;
 *   - a shard is never skipped where its index would read files whatever
 *     the query (blobs whose trigrams are not exact), where it says a
 *     warning (no record of a walk), or where the query is not understood
 *     (syntax other than quoted strings, AND, OR and parentheses; a string
 *     of fewer than three characters).
 */
#ifndef CI_FLEET_PRUNE_H
#define CI_FLEET_PRUNE_H

#include <stdint.h>
#include <stddef.h>

struct ci_index;

/* A shard's trigrams: hashes, sorted, unique. */
struct fleet_trigrams {
	uint64_t *h;
	size_t nr;
};

/*
 * The trigrams of the open index ix (read-only; a temporary fts5vocab table
 * made and dropped on its connection: call it outside a transaction, before
 * statements are kept), or NULL where the shard must always be asked
 * (above).  Nothing reported.
 */
struct fleet_trigrams *fleet_trigrams_of(struct ci_index *ix);
void fleet_trigrams_free(struct fleet_trigrams *t);

/*
 * May a file of the shard with trigrams t satisfy the FTS5 trigram query q?
 * 0 only when none can; 1 when one may, or when q is not understood.
 */
int fleet_trigrams_may_match(const struct fleet_trigrams *t, const char *q);

#endif
