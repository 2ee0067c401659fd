/*
 * rank/change.c: the change signal: recency and churn of each candidate's
 * file, from ci-couple's commit records in the index.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <math.h>

/* Recency and churn of each candidate's file, from commit records. */
int rank_signal_change(struct rank_query *rq)
{
	sqlite3_stmt *st;
	long long newest = 0;
	int have = 0;

	st = rank_stmt(rq->r, "SELECT max(time) FROM commits");
	if (sqlite3_step(st) == SQLITE_ROW)
		newest = sqlite3_column_int64(st, 0);
	rank_stmt_done(rq->r, st);
	if (!newest)
		return 0;
	st = rank_stmt(rq->r, "SELECT count(*), max(c.time) FROM commit_files cf JOIN commits c ON c.sha = cf.sha WHERE cf.path = ?1");
	for (size_t i = 0; i < rq->cands_nr; i++) {
		sqlite3_bind_text(st, 1, rq->cands[i].path, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
			double churn = 1.0 - 1.0 / (1.0 + sqlite3_column_int64(st, 0) / 5.0);
			double age_days = (double)(newest - sqlite3_column_int64(st, 1)) / 86400.0;
			double recency = exp(-age_days / 90.0);
			rq->cands[i].sig[SIG_CHANGE] = 0.5 * churn + 0.5 * recency;
			have = 1;
		}
		sqlite3_reset(st);
	}
	rank_stmt_done(rq->r, st);
	return have;
}
