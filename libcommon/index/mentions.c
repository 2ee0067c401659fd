/*
 * mentions.c: the mention text of one file (mentions.h).
 */
#include "core/common.h"
#include "index/mentions.h"
#include "parse/tagtext.h"

struct mn_scan {
	struct buf *out;
	const char *(*line_at)(void *ctx, long l);
	void *ctx;
	const struct mn_pos *refs;
	size_t refs_nr;
	const struct mn_def *defs;	/* by name, then line */
	size_t defs_nr;
	struct buf toks;		/* the counted names, NUL-separated */
	size_t *offs;			/* where each starts in toks */
	size_t offs_nr, offs_alloc;
};

static int cmp_pos(const void *x, const void *y)
{
	const struct mn_pos *a = x, *b = y;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->col > b->col) - (a->col < b->col);
}

static int cmp_def(const void *x, const void *y)
{
	const struct mn_def *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return (a->line > b->line) - (a->line < b->line);
}

static int ref_at(const struct mn_scan *m, long line, long col_)
{
	struct mn_pos key = { line, col_ };

	return m->refs_nr && bsearch(&key, m->refs, m->refs_nr, sizeof(key), cmp_pos);
}

/* The first definition named tok, or NULL. */
static const struct mn_def *first_named(const struct mn_scan *m, const char *tok)
{
	size_t lo = 0, hi = m->defs_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(m->defs[mid].name, tok) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->defs_nr && !strcmp(m->defs[lo].name, tok) ? &m->defs[lo] : NULL;
}

static void one_ident(void *arg, const char *tok, long line, long col_, int prefix)
{
	struct mn_scan *m = arg;
	const struct mn_def *d = first_named(m, tok), *end = m->defs + m->defs_nr;
	int own = 0;

	if (prefix)
		buf_addf(m->out, "$%s\n", tok);
	if (ref_at(m, line, col_))
		return;
	for (const struct mn_def *e = d; e && e < end && !strcmp(e->name, tok); e++) {
		if (e->line == line)
			return;	/* the definition's own name */
		own |= e->line <= line && e->end_line >= line;
	}
	if (tagtext_import_line(m->line_at(m->ctx, line)))
		buf_addf(m->out, ">%s %ld\n", tok, line);
	else if (own)
		buf_addf(m->out, "=%s %ld\n", tok, line);
	else {
		ALLOC_GROW(m->offs, m->offs_nr + 1, m->offs_alloc);
		m->offs[m->offs_nr++] = m->toks.len;
		buf_add(&m->toks, tok, strlen(tok) + 1);
	}
}

static int cmp_tok(const void *x, const void *y, void *toks)
{
	const char *t = toks;

	return strcmp(t + *(const size_t *)x, t + *(const size_t *)y);
}

void mentions_text(struct buf *out, const char *(*line_at)(void *ctx, long l), void *ctx, long lines_nr,
		   const char *lang, struct mn_pos *refs, size_t refs_nr, struct mn_def *defs, size_t defs_nr)
{
	struct mn_scan m = { out, line_at, ctx, refs, refs_nr, defs, defs_nr, BUF_INIT, NULL, 0, 0 };

	buf_reset(out);
	if (refs_nr)
		qsort(refs, refs_nr, sizeof(*refs), cmp_pos);
	if (defs_nr)
		qsort(defs, defs_nr, sizeof(*defs), cmp_def);
	tagtext_idents(line_at, ctx, lines_nr, lang, one_ident, &m);
	if (m.offs_nr)
		qsort_r(m.offs, m.offs_nr, sizeof(*m.offs), cmp_tok, m.toks.buf);
	for (size_t i = 0, n; i < m.offs_nr; i += n) {
		const char *t = m.toks.buf + m.offs[i];
		for (n = 1; i + n < m.offs_nr && !strcmp(m.toks.buf + m.offs[i + n], t); n++)
			;
		buf_addf(out, "%s %zu\n", t, n);
	}
	free(m.offs);
	buf_release(&m.toks);
}
