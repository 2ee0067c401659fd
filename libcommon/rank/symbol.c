/*
 * rank/symbol.c: the symbol signal: query identifiers that name a
 * definition, the chunk named like it first.
 */
#include "core/common.h"
#include "rank/signal.h"

void rank_signal_symbol(struct rank_query *rq)
{
	sqlite3_stmt *st = rank_stmt(rq->r, "SELECT " CHUNK_COLS ", d.kind FROM defs d "
				"JOIN chunks c ON c.blob_id = d.blob_id AND c.start_line <= d.line AND c.end_line >= d.line "
				"JOIN files f ON f.blob_id = d.blob_id JOIN blobs b ON b.id = d.blob_id "
				"WHERE d.name = ?1 LIMIT 50");
	size_t i;

	for (i = 0; i < rq->terms_nr; i++) {
		if (!rq->terms[i].code && rq->terms_nr > 3)
			continue;
		sqlite3_bind_text(st, 1, rq->terms[i].orig, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct rank_cand *c = rank_add_cand(rq, st, 0);
			/* the chunk named like the symbol is its definition: first */
			double s = 0.6 + 0.4 * (c && c->name && !strcmp(c->name, rq->terms[i].orig));
			if (!c)
				continue;
			s *= rq->terms[i].weight / rq->terms[0].weight;
			if (s > c->sig[SIG_SYMBOL])
				c->sig[SIG_SYMBOL] = s;
		}
		sqlite3_reset(st);
	}
	rank_stmt_done(rq->r, st);
}

