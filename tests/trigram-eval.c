/*
 * trigram-eval.c: evaluate an FTS5 trigram query on one text, as the index's
 * table (trigram case_sensitive 1) would: a term matches where it is a substring,
 * case kept.  The oracle of unit-trigram and of the trigram fuzz target.
 */
#include "core/common.h"
#include "trigram-eval.h"

struct qeval {
	const char *q;		/* the query */
	size_t i;		/* position */
	const char *text;	/* the text */
	int bad;		/* the query does not parse */
};

static void skip_ws(struct qeval *e)
{
	while (e->q[e->i] == ' ')
		e->i++;
}

static int eval_or(struct qeval *e);

static int eval_term(struct qeval *e)
{
	struct buf t = BUF_INIT;
	int r;

	skip_ws(e);
	if (e->q[e->i] == '(') {
		e->i++;
		r = eval_or(e);
		skip_ws(e);
		if (e->q[e->i] != ')')
			e->bad = 1;
		else
			e->i++;
		return r;
	}
	if (e->q[e->i] != '"') {
		e->bad = 1;
		return 0;
	}
	e->i++;
	for (;;) {
		if (!e->q[e->i]) {
			e->bad = 1;
			break;
		}
		if (e->q[e->i] == '"') {
			if (e->q[e->i + 1] == '"') {
				buf_addch(&t, '"');
				e->i += 2;
				continue;
			}
			e->i++;
			break;
		}
		buf_addch(&t, e->q[e->i++]);
	}
	r = strstr(e->text, t.buf) != NULL;
	buf_release(&t);
	return r;
}

static int eval_and(struct qeval *e)
{
	int r = eval_term(e);

	for (;;) {
		skip_ws(e);
		if (strncmp(e->q + e->i, "AND ", 4))
			return r;
		e->i += 4;
		r = eval_term(e) && r;
	}
}

static int eval_or(struct qeval *e)
{
	int r = eval_and(e);

	for (;;) {
		skip_ws(e);
		if (strncmp(e->q + e->i, "OR ", 3))
			return r;
		e->i += 3;
		r = eval_and(e) || r;
	}
}

int trigram_eval_query(const char *query, const char *text)
{
	struct qeval e;
	int r;

	memset(&e, 0, sizeof(e));
	e.q = query;
	e.text = text;
	r = eval_or(&e);
	skip_ws(&e);
	if (e.q[e.i])
		e.bad = 1;
	return e.bad ? -1 : r;
}
