/*
 * trigram-eval.h: an FTS5 trigram query evaluated on a text (tests only).
 */
#ifndef CI_TRIGRAM_EVAL_H
#define CI_TRIGRAM_EVAL_H

/*
 * Does text satisfy query (the syntax trigram_query() writes: quoted terms, AND,
 * OR, parentheses)?  1 or 0; -1 if the query does not parse.
 */
int trigram_eval_query(const char *query, const char *text);

#endif
