/*
 * chunk.c: one source file in, file/chunk/def/ref/import records out (see chunk.h).
 *
 * Shaped by the Linux kernel (60k C files, some with thousands of top-level
 * declarations and deeply nested expressions): the syntax tree is walked once,
 * iteratively with a TSTreeCursor (never ts_node_parent or ts_node_child(i), which
 * are linear in the number of siblings), collecting every unit with its nesting;
 * chunk boundaries, scopes of definitions and references, and the tiling of the
 * file all come from that one list.
 */
#include "core/common.h"
#include "parse/chunk.h"
#include "parse/blob.h"
#include "parse/cscan.h"

#include <ctype.h>
#include <pthread.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* ---- queries, compiled once per language and shared by all threads ---- */

enum pred_op { P_EQ, P_NOT_EQ, P_MATCH, P_NOT_MATCH, P_ANY_OF, P_NOT_ANY_OF, P_FAIL };

struct pred {
	enum pred_op op;	/* which predicate */
	uint32_t cap;		/* capture tested */
	uint32_t cap2;		/* other capture for #eq? @a @b, or UINT32_MAX */
	char **strs;		/* literal operands */
	size_t strs_nr;		/* number of literals */
	pcre2_code *re;		/* compiled #match? pattern */
};

enum cap_role { CAP_OTHER, CAP_NAME, CAP_DEF, CAP_REF, CAP_IMPORT, CAP_TARGET, CAP_MEMBER };

struct cquery {
	TSQuery *q;		/* NULL when the language has no such query */
	struct pred **preds;	/* per pattern: its text predicates */
	size_t *preds_nr;	/* per pattern: how many */
	enum cap_role *role;	/* per capture id */
	char **kind;		/* per capture id: "function" of definition.function */
};

struct lang_rt {
	const struct lang *lang;	/* the language */
	const TSLanguage *ts;		/* its grammar */
	uint32_t nsym;			/* symbols in the grammar */
	const struct unit_rule **rule;	/* per symbol: unit rule or NULL */
	unsigned char *comment;		/* per symbol: a comment node */
	struct cquery q;		/* tags and imports in one query: one pass */
	TSFieldId f_name, f_body, f_declarator, f_type, f_definition, f_declaration,
		f_value, f_receiver;	/* field ids used to read units */
};

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lang_rt *rts[64];		/* by index in lang_all() */
static int query_failures;

static void cquery_release(struct cquery *cq)
{
	uint32_t i, n;
	size_t j, k;

	if (!cq->q)
		return;
	n = ts_query_pattern_count(cq->q);
	for (i = 0; i < n; i++) {
		for (j = 0; j < cq->preds_nr[i]; j++) {
			struct pred *p = &cq->preds[i][j];
			for (k = 0; k < p->strs_nr; k++)
				free(p->strs[k]);
			free(p->strs);
			if (p->re)
				pcre2_code_free(p->re);
		}
		free(cq->preds[i]);
	}
	n = ts_query_capture_count(cq->q);
	for (i = 0; i < n; i++)
		free(cq->kind[i]);
	free(cq->kind);
	free(cq->role);
	free(cq->preds);
	free(cq->preds_nr);
	ts_query_delete(cq->q);
	memset(cq, 0, sizeof(*cq));
}

static const char *query_error_name(TSQueryError e)
{
	switch (e) {
	case TSQueryErrorSyntax: return "syntax error";
	case TSQueryErrorNodeType: return "unknown node type";
	case TSQueryErrorField: return "unknown field";
	case TSQueryErrorCapture: return "unknown capture";
	case TSQueryErrorStructure: return "impossible pattern";
	default: return "error";
	}
}

/* Compile text for ts into cq; report and count a failure when report is set. */
static void cquery_compile(struct cquery *cq, const TSLanguage *ts, const char *lang,
			   const char *what, const char *text, int report)
{
	uint32_t off = 0, i, n;
	TSQueryError err;

	memset(cq, 0, sizeof(*cq));
	if (!text || !*text)
		return;
	cq->q = ts_query_new(ts, text, (uint32_t)strlen(text), &off, &err);
	if (!cq->q && !report)
		return;
	if (!cq->q) {
		uint32_t line = 1;
		for (i = 0; i < off && text[i]; i++)
			line += text[i] == '\n';
		error("%s query for %s: %s at line %u", what, lang, query_error_name(err), line);
		query_failures++;
		return;
	}
	n = ts_query_capture_count(cq->q);
	cq->role = xcalloc(n ? n : 1, sizeof(*cq->role));
	cq->kind = xcalloc(n ? n : 1, sizeof(*cq->kind));
	for (i = 0; i < n; i++) {
		uint32_t len;
		const char *name = ts_query_capture_name_for_id(cq->q, i, &len);
		char *s = xstrndup(name, len);
		if (!strcmp(s, "name"))
			cq->role[i] = CAP_NAME;
		else if (!strncmp(s, "definition.", 11))
			cq->role[i] = CAP_DEF, cq->kind[i] = xstrdup(s + 11);
		else if (!strncmp(s, "reference.", 10))
			cq->role[i] = CAP_REF, cq->kind[i] = xstrdup(s + 10);
		else if (!strcmp(s, "import"))
			cq->role[i] = CAP_IMPORT;
		else if (!strcmp(s, "target"))
			cq->role[i] = CAP_TARGET;
		else if (!strcmp(s, "member"))
			cq->role[i] = CAP_MEMBER;
		free(s);
	}
	n = ts_query_pattern_count(cq->q);
	cq->preds = xcalloc(n ? n : 1, sizeof(*cq->preds));
	cq->preds_nr = xcalloc(n ? n : 1, sizeof(*cq->preds_nr));
	for (i = 0; i < n; i++) {
		uint32_t steps_nr, s = 0;
		const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(cq->q, i, &steps_nr);
		size_t alloc = 0;

		while (s < steps_nr) {
			uint32_t start = s, len;
			const char *op;
			struct pred p;

			while (s < steps_nr && st[s].type != TSQueryPredicateStepTypeDone)
				s++;
			/* st[start..s) is one predicate; st[s] is Done */
			if (s > start && st[start].type == TSQueryPredicateStepTypeString) {
				const char *o2 = ts_query_string_value_for_id(cq->q, st[start].value_id, &len);
				/* #is? local, #is-not? local: scope analysis ci does not do, so
				 * the pattern's matches are dropped rather than guessed */
				if (!strcmp(o2, "is?") || !strcmp(o2, "is-not?")) {
					memset(&p, 0, sizeof(p));
					p.op = P_FAIL;
					p.cap2 = UINT32_MAX;
					size_t pa = cq->preds_nr[i];
					cq->preds[i] = xrealloc(cq->preds[i], (pa + 1) * sizeof(struct pred));
					cq->preds[i][pa] = p;
					cq->preds_nr[i] = pa + 1;
					goto next;
				}
			}
			if (s > start && st[start].type == TSQueryPredicateStepTypeString &&
			    s - start >= 3 && st[start + 1].type == TSQueryPredicateStepTypeCapture) {
				memset(&p, 0, sizeof(p));
				p.cap2 = UINT32_MAX;
				op = ts_query_string_value_for_id(cq->q, st[start].value_id, &len);
				p.cap = st[start + 1].value_id;
				if (!strcmp(op, "eq?"))
					p.op = P_EQ;
				else if (!strcmp(op, "not-eq?"))
					p.op = P_NOT_EQ;
				else if (!strcmp(op, "match?"))
					p.op = P_MATCH;
				else if (!strcmp(op, "not-match?"))
					p.op = P_NOT_MATCH;
				else if (!strcmp(op, "any-of?"))
					p.op = P_ANY_OF;
				else if (!strcmp(op, "not-any-of?"))
					p.op = P_NOT_ANY_OF;
				else if (!strcmp(op, "is?") || !strcmp(op, "is-not?"))
					p.op = P_FAIL;	/* needs scope analysis ci does not do */
				else
					goto next;	/* #strip!, #set-adjacent!...: documentation only */
				for (uint32_t k = start + 2; k < s; k++) {
					if (st[k].type == TSQueryPredicateStepTypeCapture) {
						p.cap2 = st[k].value_id;
						continue;
					}
					const char *v = ts_query_string_value_for_id(cq->q, st[k].value_id, &len);
					ALLOC_GROW(p.strs, p.strs_nr + 1, alloc);
					p.strs[p.strs_nr++] = xstrndup(v, len);
					alloc = p.strs_nr;	/* exact: ALLOC_GROW reallocs each time */
				}
				alloc = 0;
				if (p.op == P_MATCH || p.op == P_NOT_MATCH) {
					int ec;
					PCRE2_SIZE eo;
					if (!p.strs_nr)
						goto next;
					p.re = pcre2_compile((PCRE2_SPTR)p.strs[0], PCRE2_ZERO_TERMINATED,
							     PCRE2_UTF, &ec, &eo, NULL);
					if (!p.re) {
						error("%s query for %s: bad regex '%s'", what, lang, p.strs[0]);
						goto next;
					}
				}
				{
					size_t pa = cq->preds_nr[i];
					cq->preds[i] = xrealloc(cq->preds[i], (pa + 1) * sizeof(struct pred));
					cq->preds[i][pa] = p;
					cq->preds_nr[i] = pa + 1;
				}
			}
next:
			s++;
		}
	}
}

static struct lang_rt *lang_runtime(const struct lang *l)
{
	const struct lang *const *all = lang_all();
	size_t idx;
	struct lang_rt *rt;

	for (idx = 0; all[idx] && all[idx] != l; idx++)
		;
	if (!all[idx] || idx >= ARRAY_SIZE(rts) || !l->grammar)
		return NULL;
	pthread_mutex_lock(&rt_lock);
	rt = rts[idx];
	if (!rt) {
		const struct unit_rule *r;
		uint32_t s;

		rt = xcalloc(1, sizeof(*rt));
		rt->lang = l;
		rt->ts = l->grammar();
		rt->nsym = ts_language_symbol_count(rt->ts);
		rt->rule = xcalloc(rt->nsym, sizeof(*rt->rule));
		rt->comment = xcalloc(rt->nsym, 1);
		for (s = 0; s < rt->nsym; s++) {
			const char *name = ts_language_symbol_name(rt->ts, (TSSymbol)s);
			if (ts_language_symbol_type(rt->ts, (TSSymbol)s) != TSSymbolTypeRegular || !name)
				continue;
			/* comments, and Rust's #[attributes], lead the item that follows */
			if (strstr(name, "comment") || !strcmp(name, "attribute_item"))
				rt->comment[s] = 1;
			for (r = l->units; r && r->node_type; r++)
				if (!strcmp(r->node_type, name))
					rt->rule[s] = r;
		}
#define FIELD(f) rt->f_##f = ts_language_field_id_for_name(rt->ts, #f, (uint32_t)strlen(#f))
		FIELD(name); FIELD(body); FIELD(declarator); FIELD(type); FIELD(definition);
		FIELD(declaration); FIELD(value); FIELD(receiver);
#undef FIELD
		{
			/*
			 * The two queries as one (compiling is most of the cost of a
			 * first C file, 10 ms a query); when that fails, apart, so
			 * that the broken one is named and the other kept.
			 */
			struct cquery t, im;
			const char *tt = lang_tags_query(l->name), *it = lang_imports_query(l->name);
			char *both = xasprintf("%s\n%s", tt ? tt : "", it ? it : "");
			int any = (tt && *tt) || (it && *it);

			if (any)
				cquery_compile(&rt->q, rt->ts, l->name, "tags+imports", both, 0);
			if (any && !rt->q.q) {
				cquery_compile(&t, rt->ts, l->name, "tags", tt, 1);
				cquery_compile(&im, rt->ts, l->name, "imports", it, 1);
				if (t.q && im.q) {
					/* each compiles, not the two together */
					cquery_release(&t);
					cquery_release(&im);
					cquery_compile(&rt->q, rt->ts, l->name, "tags+imports", both, 1);
				} else if (t.q) {
					rt->q = t;
				} else {
					rt->q = im;
				}
			}
			free(both);
		}
		rts[idx] = rt;
	}
	pthread_mutex_unlock(&rt_lock);
	return rt;
}

int chunker_check_queries(void)
{
	const struct lang *const *all = lang_all();
	size_t i;

	for (i = 0; all[i]; i++)
		lang_runtime(all[i]);
	return query_failures;
}

/* ---- per-file state ---- */

struct unit {
	TSNode node;		/* the unit (a wrapper such as export_statement, if any) */
	TSNode inner;		/* the node that defines it */
	const struct unit_rule *rule;	/* inner's rule */
	const char *kind;	/* chunk kind */
	uint32_t sb, eb;	/* bytes of node */
	uint32_t s, e;		/* lines of node, 1-based inclusive */
	uint32_t ext_s;		/* first line with its leading comments */
	uint32_t name_b;	/* start byte of the name node, UINT32_MAX if none */
	char *name;		/* its name, or NULL */
	char *scope;		/* qualified name of what encloses it, or NULL */
	char *qual;		/* scope.name: the scope of what it encloses */
	char *sig;		/* signature, or NULL */
	int parent;		/* enclosing unit, or -1 */
	int first_child;	/* first unit directly inside, or -1 */
	int next;		/* next sibling unit, or -1 */
	int container;		/* class-like */
	int depth;		/* units enclosing it: 0 at top level */
};

struct piece {
	uint32_t s, e;		/* lines */
	const char *kind;	/* borrowed: a literal or a unit's kind */
	const char *name;	/* borrowed from a unit, or NULL */
	const char *scope;	/* borrowed from a unit, or NULL */
	const char *sig;	/* borrowed from a unit, or NULL */
};

struct tag {
	char *name;		/* identifier */
	const char *kind;	/* borrowed from the query */
	uint32_t byte;		/* start byte of the name */
	uint32_t line, col;	/* of the name, 1-based */
	uint32_t end_line;	/* of the definition */
	const char *scope;	/* borrowed from a unit, or NULL */
	int is_def;		/* definition (1) or reference (0) */
};

struct imp {
	char *target;		/* without quotes */
	uint32_t line;		/* of the import statement */
	char *resolved;		/* root-relative, or NULL */
	char *member;		/* `from target import member` (Python), or NULL */
	uint32_t stmt;		/* start byte of the statement */
	int type_only;		/* under `if TYPE_CHECKING:` */
	int drop;		/* scratch of finish_imports() */
};

struct chunker {
	struct chunk_opts opts;		/* copy */
	TSParser *parser;		/* one per thread */
	TSQueryCursor *qc;		/* one per thread */
	pcre2_match_data *md;		/* for #match? */

	/* the file being chunked */
	const char *data;		/* its bytes */
	size_t n;			/* its size */
	uint32_t *line_off;		/* start offset of each line, plus n at [nlines] */
	uint32_t nlines, line_alloc;	/* lines in the file */
	struct lang_rt *rt;		/* its language, or NULL */
	int exact;			/* valid UTF-8 without NUL: chunk texts are its bytes */
	char known_blob[BLOB_HEXSZ + 1];	/* the next file's blob id when the caller knows
						 * it (chunker_set_blob), else "" */
	struct unit *units;		/* every unit, in document order */
	size_t units_nr, units_alloc;
	struct piece *pieces;		/* the chunks, in order, tiling the file */
	size_t pieces_nr, pieces_alloc;
	uint32_t pending_from;		/* blank lines waiting for the next chunk, or 0 */
	struct tag *tags;		/* definitions and references */
	size_t tags_nr, tags_alloc;
	struct imp *imps;		/* imports */
	size_t imps_nr, imps_alloc;
	uint32_t *bounds;		/* scratch: candidate cut lines */
	size_t bounds_nr, bounds_alloc;
	struct cscan_range *stmt_macros;	/* C: the statement macros parsed as "while" */
	size_t stmt_macros_nr;
	struct cscan_range *hidden;	/* C: what the parse did not see (cscan_hidden()) */
	size_t hidden_nr;
};

struct chunker *chunker_new(const struct chunk_opts *opts)
{
	struct chunker *c = xcalloc(1, sizeof(*c));

	c->opts = *opts;
	if (c->opts.max_lines < 2)
		c->opts.max_lines = 2;
	c->parser = ts_parser_new();
	/* a pathological file must not stall a whole repository: each parse is timed (lang_parse_timeout_us) */
	c->qc = ts_query_cursor_new();
	/* bound the work of tags queries on huge files */
	ts_query_cursor_set_match_limit(c->qc, 4096);
	c->md = pcre2_match_data_create(4, NULL);
	return c;
}

static void reset_file(struct chunker *c)
{
	size_t i;

	for (i = 0; i < c->units_nr; i++) {
		free(c->units[i].name);
		free(c->units[i].scope);
		free(c->units[i].qual);
		free(c->units[i].sig);
	}
	for (i = 0; i < c->tags_nr; i++)
		free(c->tags[i].name);
	for (i = 0; i < c->imps_nr; i++) {
		free(c->imps[i].target);
		free(c->imps[i].resolved);
		free(c->imps[i].member);
	}
	c->units_nr = c->pieces_nr = c->tags_nr = c->imps_nr = 0;
	c->pending_from = 0;
}

void chunker_free(struct chunker *c)
{
	if (!c)
		return;
	reset_file(c);
	free(c->units);
	free(c->pieces);
	free(c->tags);
	free(c->imps);
	free(c->bounds);
	free(c->stmt_macros);
	free(c->hidden);
	free(c->line_off);
	ts_parser_delete(c->parser);
	ts_query_cursor_delete(c->qc);
	pcre2_match_data_free(c->md);
	free(c);
}

/* ---- lines ---- */

static void index_lines(struct chunker *c)
{
	size_t i;
	uint32_t nl = 0;

	ALLOC_GROW(c->line_off, 2, c->line_alloc);
	c->line_off[0] = 0;
	for (i = 0; i < c->n; i++) {
		if (c->data[i] == '\n') {
			nl++;
			ALLOC_GROW(c->line_off, nl + 2, c->line_alloc);
			c->line_off[nl] = (uint32_t)(i + 1);
		}
	}
	/* a last line without a newline is a line */
	if (c->n && c->data[c->n - 1] != '\n') {
		nl++;
		ALLOC_GROW(c->line_off, nl + 2, c->line_alloc);
	}
	c->nlines = nl;
	c->line_off[nl] = (uint32_t)c->n;
}

/* The 0-based line of byte b.  Cannot fail. */
static uint32_t line_of_byte(const struct chunker *c, uint32_t b)
{
	uint32_t lo = 0, hi = c->nlines;

	/* the last line start <= b */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->line_off[mid] <= b)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static TSPoint point_of_byte(const struct chunker *c, uint32_t b)
{
	uint32_t row = c->nlines ? line_of_byte(c, b) : 0;
	TSPoint p = { row, b - (c->nlines ? c->line_off[row] : 0) };

	return p;
}

/*
 * C and C++: leave attribute macros (`__alloc_size(1)` before a declaration's
 * type, cscan_attr_macros()) out of the parse, which otherwise takes them for
 * a function declarator.  Returns 1 when included ranges were set (the caller
 * resets them after the parse).
 */
static int exclude_attr_macros(struct chunker *c)
{
	struct cscan_range *ex = NULL;
	size_t nex, k = 0, m = 0, kept = 0;
	TSRange *inc;
	uint32_t at = 0;
	int ret;

	if (strcmp(c->rt->lang->name, "c") && strcmp(c->rt->lang->name, "cpp"))
		return 0;
	nex = cscan_attr_macros(&ex, c->data, c->n);
	/* a statement macro (parsed as "while") is no attribute */
	for (size_t i = 0; i < nex; i++) {
		while (m < c->stmt_macros_nr && c->stmt_macros[m].end <= ex[i].start)
			m++;
		if (m < c->stmt_macros_nr && c->stmt_macros[m].start < ex[i].end)
			continue;
		ex[kept++] = ex[i];
	}
	nex = kept;
	if (!nex) {
		free(ex);
		return 0;
	}
	inc = xcalloc(nex + 1, sizeof(*inc));
	for (size_t i = 0; i < nex; i++) {
		if (ex[i].start > at) {
			inc[k].start_byte = at;
			inc[k].end_byte = ex[i].start;
			inc[k].start_point = point_of_byte(c, at);
			inc[k].end_point = point_of_byte(c, ex[i].start);
			k++;
		}
		at = ex[i].end;
	}
	inc[k].start_byte = at;
	inc[k].end_byte = UINT32_MAX;
	inc[k].start_point = point_of_byte(c, at);
	inc[k].end_point = (TSPoint){ UINT32_MAX, UINT32_MAX };
	k++;
	ret = ts_parser_set_included_ranges(c->parser, inc, (uint32_t)k);
	free(inc);
	free(ex);
	return ret;
}

/*
 * Parse the file (its language set in the parser), or NULL.  C: a copy in
 * which each statement macro (cscan_stmt_macros()) reads "while", padded to
 * its length, and what cscan_hidden() finds is blanks, so that offsets and
 * lines are the file's.
 */
static TSTree *parse_file(struct chunker *c)
{
	const char *text = c->data;
	char *copy = NULL;
	int ranged;
	TSTree *tree;

	free(c->stmt_macros);
	c->stmt_macros = NULL;
	c->stmt_macros_nr = 0;
	free(c->hidden);
	c->hidden = NULL;
	c->hidden_nr = 0;
	if (!strcmp(c->rt->lang->name, "c")) {
		c->stmt_macros_nr = cscan_stmt_macros(&c->stmt_macros, c->data, c->n);
		c->hidden_nr = cscan_hidden(&c->hidden, c->data, c->n);
	}
	if (c->stmt_macros_nr || c->hidden_nr) {
		copy = xmalloc(c->n + 1);
		memcpy(copy, c->data, c->n);
		copy[c->n] = '\0';
		for (size_t i = 0; i < c->stmt_macros_nr; i++) {
			struct cscan_range *m = &c->stmt_macros[i];

			memcpy(copy + m->start, "while", 5);
			memset(copy + m->start + 5, ' ', m->end - m->start - 5);
		}
		/* what the parse should not see (cscan_hidden()): blanks */
		for (size_t i = 0; i < c->hidden_nr; i++)
			for (uint32_t b = c->hidden[i].start; b < c->hidden[i].end && b < c->n; b++)
				if (copy[b] != '\n')
					copy[b] = ' ';
		text = copy;
	}
	ranged = exclude_attr_macros(c);
	ts_parser_set_timeout_micros(c->parser, lang_parse_timeout_us(c->n));
	tree = ts_parser_parse_string(c->parser, NULL, text, (uint32_t)c->n);
	if (ranged)
		ts_parser_set_included_ranges(c->parser, NULL, 0);
	free(copy);
	return tree;
}


/* Does line l (1-based) hold nothing but blanks, punctuation or a block closer? */
static int trivial_line(struct chunker *c, uint32_t l)
{
	const char *p = c->data + c->line_off[l - 1], *end = c->data + c->line_off[l];
	const char *w = NULL, *we = NULL;

	for (; p < end; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch >= 0x80 ||
		    (ch >= '0' && ch <= '9') || ch == '_') {
			if (!w)
				w = p;
			else if (we && p > we)
				return 0;	/* a second word */
			we = p + 1;
			continue;
		}
		/* "} // end of namespace": the rest is a comment */
		if (ch == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*'))
			break;
		/* punctuation */
		if (w && !we)
			we = p;
	}
	if (!w)
		return 1;
	/* one word: only the closers of Ruby, Lua and shell blocks */
	size_t l2 = (size_t)(we - w);
	return (l2 == 3 && !memcmp(w, "end", 3)) || (l2 == 2 && !memcmp(w, "fi", 2)) ||
	       (l2 == 4 && !memcmp(w, "done", 4)) || (l2 == 4 && !memcmp(w, "esac", 4));
}

static uint32_t node_start_line(TSNode n)
{
	return ts_node_start_point(n).row + 1;
}

static uint32_t node_end_line(struct chunker *c, TSNode n)
{
	TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
	uint32_t l = (e.column == 0 && e.row > s.row) ? e.row : e.row + 1;

	if (l > c->nlines)
		l = c->nlines;
	return l;
}

static char *node_text(struct chunker *c, TSNode n)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);

	if (b > c->n)
		b = (uint32_t)c->n;
	if (a > b)
		a = b;
	return xstrndup(c->data + a, b - a);
}

/* ---- units ---- */

static TSNode field(TSNode n, TSFieldId f)
{
	TSNode z = { { 0, 0, 0, 0 }, NULL, NULL };

	if (!f)
		return z;
	return ts_node_child_by_field_id(n, f);
}

/*
 * What an assignment assigns, through a chain of them (`a = b.c = function`):
 * the last right-hand side; v itself when it is no assignment.
 */
static TSNode assigned_value(TSNode v)
{
	for (int depth = 0; depth < 16 && !ts_node_is_null(v) &&
	     !strcmp(ts_node_type(v), "assignment_expression"); depth++)
		v = ts_node_child_by_field_name(v, "right", 5);
	return v;
}

/* The innermost assignment of such a chain (the one whose right side is the value). */
static TSNode last_assignment(TSNode v)
{
	for (int depth = 0; depth < 16; depth++) {
		TSNode r = ts_node_child_by_field_name(v, "right", 5);
		if (ts_node_is_null(r) || strcmp(ts_node_type(r), "assignment_expression"))
			break;
		v = r;
	}
	return v;
}

static int is_function_value(TSNode v)
{
	const char *t;

	v = assigned_value(v);
	if (ts_node_is_null(v))
		return 0;
	t = ts_node_type(v);
	return !strcmp(t, "arrow_function") || !strcmp(t, "function_expression") ||
	       !strcmp(t, "function") || !strcmp(t, "generator_function");
}

/* First named child of n with type t, or a null node. */
static TSNode named_child_of_type(TSNode n, const char *t)
{
	uint32_t i, k = ts_node_named_child_count(n);
	TSNode z = { { 0, 0, 0, 0 }, NULL, NULL };

	for (i = 0; i < k && i < 8; i++) {
		TSNode ch = ts_node_named_child(n, i);
		if (!strcmp(ts_node_type(ch), t))
			return ch;
	}
	return z;
}

static int has_rule(struct lang_rt *rt, TSNode n, const struct unit_rule **r)
{
	TSSymbol s = ts_node_symbol(n);

	*r = s < rt->nsym ? rt->rule[s] : NULL;
	return *r != NULL;
}

/*
 * Is n a unit?  If so set *inner (the defining node) and *rule (inner's rule).
 */
static int unit_of(struct chunker *c, TSNode n, TSNode *inner, const struct unit_rule **rule)
{
	struct lang_rt *rt = c->rt;
	const struct unit_rule *r;

	if (!has_rule(rt, n, &r))
		return 0;
	if (r->flags & UNIT_WRAPPER) {
		const char *t = r->node_type;
		TSNode in;

		if (!strcmp(t, "decorated_definition"))
			in = field(n, rt->f_definition);
		else if (!strcmp(t, "export_statement"))
			in = field(n, rt->f_declaration);
		else if (!strcmp(t, "type_definition"))
			in = field(n, rt->f_type);
		else {
			/* template_declaration: the unit among its children */
			uint32_t i, k = ts_node_named_child_count(n);
			in = field(n, 0);
			for (i = 0; i < k; i++) {
				TSNode ch = ts_node_named_child(n, i);
				const struct unit_rule *cr;
				if (has_rule(rt, ch, &cr)) {
					in = ch;
					break;
				}
			}
		}
		if (ts_node_is_null(in))
			return 0;
		if (!unit_of(c, in, inner, rule))
			return 0;
		return 1;
	}
	if ((r->flags & UNIT_NEEDS_BODY) && ts_node_is_null(field(n, rt->f_body)))
		return 0;
	if (r->flags & UNIT_FUNCTION_VALUE) {
		TSNode d = named_child_of_type(n, "variable_declarator");
		if (ts_node_is_null(d) || !is_function_value(field(d, rt->f_value)))
			return 0;
	}
	if (r->flags & UNIT_ASSIGNED_FUNCTION) {
		/* to a name or a property (a.b), not to a computed place (a[k]) */
		TSNode a = ts_node_named_child_count(n) ? ts_node_named_child(n, 0) : n, left;
		if (strcmp(ts_node_type(a), "assignment_expression") || !is_function_value(a))
			return 0;
		left = ts_node_child_by_field_name(last_assignment(a), "left", 4);
		if (ts_node_is_null(left) || (strcmp(ts_node_type(left), "identifier") &&
					      strcmp(ts_node_type(left), "member_expression")))
			return 0;
	}
	*inner = n;
	*rule = r;
	return 1;
}

/* Strip generic arguments and reference/pointer marks: "*Foo[T]" -> "Foo". */
static char *clean_type_name(const char *s)
{
	struct buf b = BUF_INIT;

	while (*s == '*' || *s == '&' || *s == ' ')
		s++;
	for (; *s && *s != '<' && *s != '[' && *s != '(' && *s != ' '; s++)
		buf_addch(&b, *s);
	return buf_detach(&b, NULL);
}

/*
 * The name of unit node n (inner), its name node's start byte in *name_b, and an
 * extra scope given by the name itself (C++ "A::f", Go receivers) in *extra.
 */
static char *unit_name(struct chunker *c, TSNode n, uint32_t *name_b, char **extra)
{
	struct lang_rt *rt = c->rt;
	const char *t = ts_node_type(n);
	TSNode nm = field(n, rt->f_name), d;
	char *s, *sep;

	*name_b = UINT32_MAX;
	*extra = NULL;
	if (!strcmp(t, "type_declaration")) {	/* Go */
		TSNode spec = named_child_of_type(n, "type_spec");
		if (ts_node_is_null(spec))
			spec = named_child_of_type(n, "type_alias");
		if (!ts_node_is_null(spec))
			nm = field(spec, rt->f_name);
	} else if (!strcmp(t, "impl_item")) {	/* Rust: impl [Trait for] Type */
		TSNode ty = field(n, rt->f_type);
		if (!ts_node_is_null(ty)) {
			char *raw = node_text(c, ty);
			*name_b = ts_node_start_byte(ty);
			s = clean_type_name(raw);
			free(raw);
			return s;
		}
	} else if (!strcmp(t, "lexical_declaration") || !strcmp(t, "variable_declaration")) {
		d = named_child_of_type(n, "variable_declarator");
		if (!ts_node_is_null(d))
			nm = field(d, rt->f_name);
	} else if (!strcmp(t, "expression_statement") && ts_node_named_child_count(n)) {
		/* a.b.c = x.y = function: named for the last target, as the tags name it (y) */
		TSNode left = ts_node_child_by_field_name(last_assignment(ts_node_named_child(n, 0)), "left", 4);
		if (!ts_node_is_null(left) && !strcmp(ts_node_type(left), "member_expression"))
			left = ts_node_child_by_field_name(left, "property", 8);
		nm = left;
	} else if (ts_node_is_null(nm) && rt->f_declarator) {
		/* C/C++: the identifier at the bottom of the declarator chain */
		d = field(n, rt->f_declarator);
		for (int depth = 0; !ts_node_is_null(d) && depth < 16; depth++) {
			TSNode next = field(d, rt->f_declarator);
			/* int (*f(void))(int): through the parentheses */
			if (ts_node_is_null(next) && !strcmp(ts_node_type(d), "parenthesized_declarator") &&
			    ts_node_named_child_count(d) > 0)
				next = ts_node_named_child(d, 0);
			if (ts_node_is_null(next))
				break;
			d = next;
		}
		nm = d;
	}
	if (!strcmp(t, "method_declaration") && rt->f_receiver && !strcmp(rt->lang->name, "go")) {
		TSNode recv = field(n, rt->f_receiver);
		if (!ts_node_is_null(recv)) {
			TSNode pd = named_child_of_type(recv, "parameter_declaration");
			TSNode ty = ts_node_is_null(pd) ? pd : field(pd, rt->f_type);
			if (!ts_node_is_null(ty)) {
				char *raw = node_text(c, ty);
				*extra = clean_type_name(raw);
				free(raw);
			}
		}
	}
	if (ts_node_is_null(nm))
		return NULL;
	*name_b = ts_node_start_byte(nm);
	s = node_text(c, nm);
	/* "A::B::f" -> name f, extra scope A.B */
	sep = NULL;
	for (char *p = s; (p = strstr(p, "::")); p += 2)
		sep = p;
	if (sep && !strchr(s, '(') && !strchr(s, '<')) {
		struct buf b = BUF_INIT;
		char *name = xstrdup(sep + 2);
		for (char *p = s; p < sep; p++) {
			if (p[0] == ':' && p[1] == ':') {
				buf_addch(&b, '.');
				p++;
			} else {
				buf_addch(&b, *p);
			}
		}
		free(*extra);
		*extra = buf_detach(&b, NULL);
		*name_b += (uint32_t)(sep + 2 - s);
		free(s);
		s = name;
	}
	/* names never span lines */
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return s;
}

/* Signature: from the start of n to the start of its body (else its first line),
 * whitespace collapsed, at most 240 bytes cut at a character boundary. */
static char *unit_signature(struct chunker *c, TSNode from, TSNode inner)
{
	TSNode body = field(inner, c->rt->f_body);
	uint32_t a = ts_node_start_byte(from), b = ts_node_end_byte(inner);
	struct buf out = BUF_INIT;
	int space = 0;
	uint32_t i;

	if (!ts_node_is_null(body) && ts_node_start_byte(body) > a)
		b = ts_node_start_byte(body);
	else {
		const char *nl = memchr(c->data + a, '\n', b - a);
		if (nl)
			b = (uint32_t)(nl - c->data);
	}
	for (i = a; i < b && out.len < 240; i++) {
		char ch = c->data[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			space = 1;
			continue;
		}
		if (space && out.len)
			buf_addch(&out, ' ');
		space = 0;
		buf_addch(&out, ch);
	}
	/* do not end inside a UTF-8 sequence */
	while (out.len && ((unsigned char)out.buf[out.len - 1] & 0xc0) == 0x80)
		out.len--;
	if (out.len && ((unsigned char)out.buf[out.len - 1] & 0xc0) == 0xc0)
		out.len--;
	buf_setlen(&out, out.len);
	while (out.len && (out.buf[out.len - 1] == '{' || out.buf[out.len - 1] == ' '))
		buf_setlen(&out, out.len - 1);
	if (!out.len) {
		buf_release(&out);
		return NULL;
	}
	return buf_detach(&out, NULL);
}

/* Class-like kinds: a function directly inside one is a method (not so for a
 * namespace or module, whose functions stay functions). */
static int kind_is_class_like(const char *k)
{
	return !strcmp(k, "class") || !strcmp(k, "struct") || !strcmp(k, "interface") ||
	       !strcmp(k, "impl") || !strcmp(k, "trait") || !strcmp(k, "record") ||
	       !strcmp(k, "enum");
}

/*
 * Keep a scope to its innermost SCOPE_MAX_LEVELS names, the outer ones replaced by
 * "...": every def and chunk carries its scope, so with unbounded scopes a file of
 * n nested namespaces writes O(n^2) bytes (a 260 KB file gave 400 MB).
 */
#define SCOPE_MAX_LEVELS 8

static void bound_scope(char **scope)
{
	const char *s = *scope, *start, *p;
	int dots = 0;

	if (!s)
		return;
	start = strncmp(s, "...", 3) ? s : s + 3;
	for (p = s + strlen(s); p > start; p--) {
		if (p[-1] == '.' && ++dots == SCOPE_MAX_LEVELS)
			break;
	}
	if (p == start)
		return;
	char *b = xasprintf("...%s", p);
	free(*scope);
	*scope = b;
}

static void add_unit(struct chunker *c, TSNode n, TSNode inner, const struct unit_rule *r,
		     int parent, uint32_t ext_s)
{
	struct unit *u;
	char *extra = NULL;
	const char *pqual = parent >= 0 ? c->units[parent].qual : NULL;
	const char *rt_type = ts_node_type(n);

	ALLOC_GROW(c->units, c->units_nr + 1, c->units_alloc);
	u = &c->units[c->units_nr];
	memset(u, 0, sizeof(*u));
	u->node = n;
	u->inner = inner;
	u->rule = r;
	u->sb = ts_node_start_byte(n);
	u->eb = ts_node_end_byte(n);
	u->s = node_start_line(n);
	u->e = node_end_line(c, n);
	if (u->e < u->s)
		u->e = u->s;
	u->ext_s = ext_s < u->s ? ext_s : u->s;
	u->parent = parent;
	u->first_child = u->next = -1;
	u->container = (r->flags & UNIT_CONTAINER) != 0;
	u->kind = r->kind;
	u->name = unit_name(c, inner, &u->name_b, &extra);
	if (!strcmp(ts_node_type(inner), "type_declaration")) {	/* Go */
		TSNode spec = named_child_of_type(inner, "type_spec");
		TSNode ty = ts_node_is_null(spec) ? spec : field(spec, c->rt->f_type);
		const char *tt = ts_node_is_null(ty) ? "" : ts_node_type(ty);
		u->kind = !strcmp(tt, "struct_type") ? "struct" :
			  !strcmp(tt, "interface_type") ? "interface" : "type";
	}
	if (!strcmp(u->kind, "function") && parent >= 0 && kind_is_class_like(c->units[parent].kind))
		u->kind = "method";
	if (!strcmp(u->kind, "function") && extra)
		u->kind = "method";	/* Go receivers, C++ A::f */
	if (!strcmp(rt_type, "type_definition") && u->name == NULL) {
		/* typedef struct { ... } name_t; */
		TSNode d = field(n, c->rt->f_declarator);
		if (!ts_node_is_null(d)) {
			u->name = node_text(c, d);
			u->name_b = ts_node_start_byte(d);
		}
	}
	if (extra && pqual)
		u->scope = xasprintf("%s.%s", pqual, extra);
	else if (extra)
		u->scope = xstrdup(extra);
	else if (pqual)
		u->scope = xstrdup(pqual);
	free(extra);
	u->depth = parent >= 0 ? c->units[parent].depth + 1 : 0;
	bound_scope(&u->scope);
	if (u->name)
		u->qual = u->scope ? xasprintf("%s.%s", u->scope, u->name) : xstrdup(u->name);
	else if (u->scope)
		u->qual = xstrdup(u->scope);
	u->sig = unit_signature(c, strcmp(rt_type, "decorated_definition") ? n : inner, inner);
	/* link into the parent's children */
	if (parent >= 0) {
		struct unit *p = &c->units[parent];
		if (p->first_child < 0) {
			p->first_child = (int)c->units_nr;
		} else {
			int k = p->first_child;
			while (c->units[k].next >= 0)
				k = c->units[k].next;
			c->units[k].next = (int)c->units_nr;
		}
	}
	c->units_nr++;
}

/*
 * Units nested deeper than this are left inside the enclosing unit's chunks: tiling
 * recurses once per level, and no real code nests functions or classes 256 deep.
 */
#define UNIT_MAX_DEPTH 256

struct level {
	int unit;		/* unit opened by the current node at this depth, or -1 */
	int open;		/* innermost open unit at this depth */
	int crun;		/* a run of comment siblings is pending */
	uint32_t crun_s, crun_e;	/* its first and last rows */
	int64_t last_end;	/* end row of the previous non-comment sibling, -1 */
	const void *skip_id;	/* the wrapper's inner node: not a unit of its own */
	TSNode node;		/* the node visited at this depth */
};

/* Walk the whole tree once, collecting units (see struct unit). */
static void collect_units(struct chunker *c, TSNode root)
{
	TSTreeCursor cur = ts_tree_cursor_new(root);
	struct level *lv = NULL;
	size_t lv_alloc = 0;
	uint32_t depth = 0;
	int descend = 1;
	int top_last = -1;	/* last top-level unit, to link siblings quickly */

	ALLOC_GROW(lv, 2, lv_alloc);
	memset(&lv[0], 0, sizeof(lv[0]));
	lv[0].unit = lv[0].open = -1;
	lv[0].last_end = -1;
	lv[0].node = root;	/* a member at top level (error recovery) asks its parent's type */
	for (;;) {
		TSNode n;
		const struct unit_rule *r;
		TSNode inner;
		TSSymbol sym;

		if (descend && ts_tree_cursor_goto_first_child(&cur)) {
			depth++;
			ALLOC_GROW(lv, depth + 1, lv_alloc);
			memset(&lv[depth], 0, sizeof(lv[depth]));
			lv[depth].unit = -1;
			lv[depth].open = lv[depth - 1].open;
			lv[depth].last_end = -1;
		} else {
			while (!ts_tree_cursor_goto_next_sibling(&cur)) {
				if (!ts_tree_cursor_goto_parent(&cur))
					goto done;
				depth--;
			}
			lv[depth].unit = -1;
			lv[depth].open = depth ? lv[depth - 1].open : -1;
		}
		n = ts_tree_cursor_current_node(&cur);
		descend = 0;
		if (!ts_node_is_named(n))
			continue;
		sym = ts_node_symbol(n);
		if (sym < c->rt->nsym && c->rt->comment[sym]) {
			uint32_t sr = ts_node_start_point(n).row, er = ts_node_end_point(n).row;
			/* a line comment may end with its newline, at column 0 of the next row */
			if (ts_node_end_point(n).column == 0 && er > sr)
				er--;
			struct level *L = &lv[depth];
			if (L->crun && sr <= L->crun_e + 1) {
				L->crun_e = er;
			} else if ((int64_t)sr > L->last_end) {
				L->crun = 1;
				L->crun_s = sr;
				L->crun_e = er;
			} else {
				L->crun = 0;
			}
			continue;
		}
		descend = 1;
		lv[depth].node = n;
		if (depth && lv[depth - 1].skip_id == n.id) {
			/* the inner node of a wrapper: same unit */
			lv[depth].skip_id = NULL;
		} else if ((!depth || lv[depth - 1].open < 0 ||
			    c->units[lv[depth - 1].open].depth < UNIT_MAX_DEPTH) &&
			   unit_of(c, n, &inner, &r) &&
			   (!(r->flags & UNIT_CLASS_MEMBER) ||
			    (depth && strstr(ts_node_type(lv[depth - 1].node), "class")))) {
			struct level *L = &lv[depth];
			uint32_t sr = ts_node_start_point(n).row;
			uint32_t ext = sr + 1;
			int parent = depth ? lv[depth - 1].open : -1;

			if (L->crun && L->crun_e + 1 >= sr && L->crun_e < sr)
				ext = L->crun_s + 1;
			/* top-level siblings: link in O(1) instead of walking the list */
			if (parent < 0) {
				add_unit(c, n, inner, r, -1, ext);
				if (top_last >= 0)
					c->units[top_last].next = (int)c->units_nr - 1;
				top_last = (int)c->units_nr - 1;
			} else {
				add_unit(c, n, inner, r, parent, ext);
			}
			L->unit = (int)c->units_nr - 1;
			L->open = L->unit;
			L->skip_id = inner.id != n.id ? inner.id : NULL;
			if (r->flags & UNIT_LEAF)
				descend = 0;
		}
		lv[depth].crun = 0;
		lv[depth].last_end = ts_node_end_point(n).row;
	}
done:
	ts_tree_cursor_delete(&cur);
	free(lv);
}

/* ---- tiling ---- */

static void emit(struct chunker *c, uint32_t s, uint32_t e, const char *kind,
		 const char *name, const char *scope, const char *sig)
{
	struct piece *p;
	uint32_t l;

	if (s > e)
		return;
	/* nothing but blanks and closers: give them to the previous chunk */
	for (l = s; l <= e && trivial_line(c, l); l++)
		;
	if (l > e) {
		if (c->pieces_nr && c->pieces[c->pieces_nr - 1].e + 1 == s) {
			c->pieces[c->pieces_nr - 1].e = e;
			return;
		}
		if (!c->pending_from)
			c->pending_from = s;
		return;
	}
	if (c->pending_from && c->pending_from < s)
		s = c->pending_from;
	c->pending_from = 0;
	ALLOC_GROW(c->pieces, c->pieces_nr + 1, c->pieces_alloc);
	p = &c->pieces[c->pieces_nr++];
	p->s = s;
	p->e = e;
	p->kind = kind;
	p->name = name;
	p->scope = scope;
	p->sig = sig;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Candidate cut lines inside n: where its children and grandchildren start. */
static void compute_bounds(struct chunker *c, TSNode n)
{
	TSTreeCursor cur = ts_tree_cursor_new(n);
	size_t i, j;

	c->bounds_nr = 0;
	if (ts_tree_cursor_goto_first_child(&cur)) {
		do {
			TSNode ch = ts_tree_cursor_current_node(&cur);
			ALLOC_GROW(c->bounds, c->bounds_nr + 1, c->bounds_alloc);
			c->bounds[c->bounds_nr++] = node_start_line(ch);
			if (ts_tree_cursor_goto_first_child(&cur)) {
				do {
					TSNode g = ts_tree_cursor_current_node(&cur);
					ALLOC_GROW(c->bounds, c->bounds_nr + 1, c->bounds_alloc);
					c->bounds[c->bounds_nr++] = node_start_line(g);
				} while (ts_tree_cursor_goto_next_sibling(&cur));
				ts_tree_cursor_goto_parent(&cur);
			}
		} while (ts_tree_cursor_goto_next_sibling(&cur));
	}
	ts_tree_cursor_delete(&cur);
	if (c->bounds_nr)
		qsort(c->bounds, c->bounds_nr, sizeof(*c->bounds), cmp_u32);
	for (i = j = 0; i < c->bounds_nr; i++)
		if (!j || c->bounds[j - 1] != c->bounds[i])
			c->bounds[j++] = c->bounds[i];
	c->bounds_nr = j;
}

/* Lines a..b between units: chunks of at most max_lines, cut where a node starts. */
static void gap(struct chunker *c, uint32_t a, uint32_t b, TSNode bound_node,
		const char *kind, const char *name, const char *scope)
{
	uint32_t max = (uint32_t)c->opts.max_lines, p = a, q;
	int have_bounds = 0;

	if (a > b)
		return;
	while (p <= b) {
		q = b;
		if (b - p + 1 > max) {
			uint32_t best = 0;
			size_t i;
			if (!have_bounds) {
				if (!ts_node_is_null(bound_node))
					compute_bounds(c, bound_node);
				else
					c->bounds_nr = 0;
				have_bounds = 1;
			}
			for (i = 0; i < c->bounds_nr; i++) {
				uint32_t cut = c->bounds[i];
				if (cut > p + max)
					break;
				if (cut > p + max / 4)
					best = cut;
			}
			q = best ? best - 1 : p + max - 1;
		}
		emit(c, p, q, kind, name, scope, NULL);
		p = q + 1;
	}
}

static void tile(struct chunker *c, uint32_t a, uint32_t b, int first, TSNode bound_node,
		 const char *kind, const char *name, const char *scope);

static void emit_unit(struct chunker *c, int k, uint32_t s, uint32_t e)
{
	struct unit *u = &c->units[k];
	uint32_t max = (uint32_t)c->opts.max_lines, h;
	TSNode body;

	if (!((u->container && u->first_child >= 0) || e - s + 1 > max)) {
		emit(c, s, e, u->kind, u->name, u->scope, u->sig);
		return;
	}
	/* the header: up to the first member, or to the first line of the body */
	body = field(u->inner, c->rt->f_body);
	if (u->first_child >= 0) {
		h = c->units[u->first_child].ext_s - 1;
	} else if (!ts_node_is_null(body) && ts_node_named_child_count(body) > 0) {
		h = node_start_line(ts_node_named_child(body, 0)) - 1;
	} else {
		h = s;
	}
	if (h < s)
		h = s;
	if (h > e)
		h = e;
	if (h - s + 1 > max)
		h = s + max - 1;
	emit(c, s, h, u->kind, u->name, u->scope, u->sig);
	tile(c, h + 1, e, u->first_child, ts_node_is_null(body) ? u->inner : body,
	     "block", u->name, u->scope);
}

/* Tile lines a..b holding the sibling units first, first->next, ... */
static void tile(struct chunker *c, uint32_t a, uint32_t b, int first, TSNode bound_node,
		 const char *kind, const char *name, const char *scope)
{
	uint32_t cursor = a;
	int k;

	for (k = first; k >= 0; k = c->units[k].next) {
		uint32_t s = c->units[k].ext_s, e = c->units[k].e;
		if (e < cursor)
			continue;
		if (e > b)
			e = b;
		if (s < cursor)
			s = cursor;
		gap(c, cursor, s - 1, bound_node, kind, name, scope);
		emit_unit(c, k, s, e);
		cursor = e + 1;
	}
	gap(c, cursor, b, bound_node, kind, name, scope);
}

/* Chunk lines a..b by windows (text, or a file that could not be parsed). */
static void chunk_windows(struct chunker *c, uint32_t a, uint32_t b, const char *kind,
			  const char *name, const char *scope)
{
	uint32_t w = (uint32_t)c->opts.max_lines / 2, p;

	if (w < 1)
		w = 1;
	for (p = a; p <= b; p += w)
		emit(c, p, p + w - 1 > b ? b : p + w - 1, kind, name, scope, NULL);
}

/* Markdown: a chunk per section, from a heading to the next; fenced code skipped. */
static void chunk_markdown(struct chunker *c)
{
	char *titles[7] = { NULL };
	char *scopes[7] = { NULL };
	uint32_t sec_s = 1, l;
	int fence = 0, cur_level = 0;
	char *cur_name = NULL, *cur_scope = NULL;
	struct buf sc = BUF_INIT;
	/* names and scopes must outlive the pieces: keep them as fake units */
	for (l = 1; l <= c->nlines + 1; l++) {
		const char *p = l <= c->nlines ? c->data + c->line_off[l - 1] : NULL;
		const char *end = l <= c->nlines ? c->data + c->line_off[l] : NULL;
		int level = 0;

		if (p) {
			const char *q = p;
			while (q < end && *q == ' ' && q - p < 3)
				q++;
			if (end - q >= 3 && (!memcmp(q, "```", 3) || !memcmp(q, "~~~", 3))) {
				fence = !fence;
				continue;
			}
			if (fence)
				continue;
			while (q < end && *q == '#' && level < 7)
				q++, level++;
			if (level < 1 || level > 6 || (q < end && *q != ' ' && *q != '\t' &&
							  *q != '\n' && *q != '\r'))
				continue;
		}
		/* close the current section at l - 1 */
		if (l > sec_s) {
			ALLOC_GROW(c->units, c->units_nr + 1, c->units_alloc);
			struct unit *u = &c->units[c->units_nr++];
			memset(u, 0, sizeof(*u));
			u->name = cur_name;
			u->scope = cur_scope;
			u->parent = u->first_child = u->next = -1;
			cur_name = cur_scope = NULL;
			uint32_t w = (uint32_t)c->opts.max_lines;
			for (uint32_t a = sec_s; a < l; a += w)
				emit(c, a, a + w - 1 >= l ? l - 1 : a + w - 1, "section",
				     u->name, u->scope, NULL);
		} else {
			free(cur_name);
			free(cur_scope);
			cur_name = cur_scope = NULL;
		}
		if (!p)
			break;
		/* the new section's title and the titles above it */
		{
			const char *q = p;
			while (q < end && *q == ' ')
				q++;
			while (q < end && *q == '#')
				q++;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			const char *te = end;
			while (te > q && (te[-1] == '\n' || te[-1] == '\r' || te[-1] == ' ' ||
					  te[-1] == '#' || te[-1] == '\t'))
				te--;
			for (int k = level; k <= 6; k++) {
				free(titles[k]);
				titles[k] = NULL;
			}
			titles[level] = xstrndup(q, (size_t)(te - q));
			buf_reset(&sc);
			for (int k = 1; k < level; k++) {
				if (!titles[k])
					continue;
				if (sc.len)
					buf_addstr(&sc, " > ");
				buf_addstr(&sc, titles[k]);
			}
			cur_name = xstrdup(titles[level]);
			cur_scope = sc.len ? xstrdup(sc.buf) : NULL;
			cur_level = level;
		}
		sec_s = l;
	}
	(void)cur_level;
	for (int k = 0; k < 7; k++) {
		free(titles[k]);
		free(scopes[k]);
	}
	free(cur_name);
	free(cur_scope);
	buf_release(&sc);
}

/* ---- tags and imports ---- */

static int preds_hold(struct chunker *c, const struct cquery *cq, const TSQueryMatch *m)
{
	size_t i, k;

	for (i = 0; i < cq->preds_nr[m->pattern_index]; i++) {
		const struct pred *p = &cq->preds[m->pattern_index][i];
		const char *t = NULL, *t2 = NULL;
		size_t tl = 0, tl2 = 0;
		int found = 0, ok;

		for (k = 0; k < m->capture_count; k++) {
			TSNode n = m->captures[k].node;
			if (m->captures[k].index == p->cap && !t) {
				t = c->data + ts_node_start_byte(n);
				tl = ts_node_end_byte(n) - ts_node_start_byte(n);
			}
			if (m->captures[k].index == p->cap2 && !t2) {
				t2 = c->data + ts_node_start_byte(n);
				tl2 = ts_node_end_byte(n) - ts_node_start_byte(n);
			}
		}
		if (p->op == P_FAIL)
			return 0;
		if (!t)
			continue;	/* an optional capture that did not match */
		switch (p->op) {
		case P_EQ:
		case P_NOT_EQ:
			if (p->cap2 != UINT32_MAX)
				ok = t2 && tl == tl2 && !memcmp(t, t2, tl);
			else
				ok = p->strs_nr && strlen(p->strs[0]) == tl && !memcmp(t, p->strs[0], tl);
			if (p->op == P_NOT_EQ)
				ok = !ok;
			break;
		case P_MATCH:
		case P_NOT_MATCH:
			ok = pcre2_match(p->re, (PCRE2_SPTR)t, tl, 0, 0, c->md, NULL) >= 0;
			if (p->op == P_NOT_MATCH)
				ok = !ok;
			break;
		case P_ANY_OF:
		case P_NOT_ANY_OF:
			for (k = 0; k < p->strs_nr; k++)
				if (strlen(p->strs[k]) == tl && !memcmp(t, p->strs[k], tl))
					found = 1;
			ok = p->op == P_ANY_OF ? found : !found;
			break;
		default:
			ok = 1;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

static void strip_target(char *s);

/* 1 if the text of n is s. */
static int node_is(const struct chunker *c, TSNode n, const char *s)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);

	return b - a == strlen(s) && !memcmp(c->data + a, s, b - a);
}

/*
 * 1 if the Python import statement n is under `if TYPE_CHECKING:` (or `if
 * typing.TYPE_CHECKING:`), in the branch taken by a type checker only: an
 * import a program never runs, so no cycle at run time.
 */
static int type_checking_only(const struct chunker *c, TSNode n)
{
	if (strcmp(c->rt->lang->name, "python"))
		return 0;
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); n = p, p = ts_node_parent(p)) {
		TSNode cond, body;

		if (strcmp(ts_node_type(p), "if_statement"))
			continue;
		cond = ts_node_child_by_field_name(p, "condition", 9);
		body = ts_node_child_by_field_name(p, "consequence", 11);
		if (!ts_node_is_null(cond) && !ts_node_is_null(body) && ts_node_eq(body, n) &&
		    (node_is(c, cond, "TYPE_CHECKING") || node_is(c, cond, "typing.TYPE_CHECKING")))
			return 1;
	}
	return 0;
}

/* One pass of the tags+imports query: definitions, references, imports. */
/*
 * A C or C++ type specifier (enum_specifier, struct_specifier, ...) without a
 * body names a type it does not define: tree-sitter-c's tags.scm takes every
 * enum_specifier as a definition, so a parameter `enum vec_format f` made one.
 */
static int specifier_without_body(const struct chunker *c, TSNode what)
{
	const char *type = ts_node_type(what);
	size_t n = strlen(type);

	return n > 10 && !strcmp(type + n - 10, "_specifier") && ts_node_is_null(field(what, c->rt->f_body));
}

static void run_queries(struct chunker *c, TSNode root)
{
	const struct cquery *cq = &c->rt->q;
	unsigned want = c->opts.want;
	TSQueryMatch m;

	if (!cq->q)
		return;
	ts_query_cursor_exec(c->qc, cq->q, root);
	while (ts_query_cursor_next_match(c->qc, &m)) {
		TSNode name = { { 0, 0, 0, 0 }, NULL, NULL }, what = name, stmt = name, target = name;
		TSNode member = name;
		const char *kind = NULL;
		int is_def = 0, have_name = 0, have_what = 0, hs = 0, ht = 0, hm = 0;
		uint16_t k;

		for (k = 0; k < m.capture_count; k++) {
			uint32_t id = m.captures[k].index;
			switch (cq->role[id]) {
			case CAP_NAME:
				if (!have_name)
					name = m.captures[k].node, have_name = 1;
				break;
			case CAP_DEF:
			case CAP_REF:
				if (!have_what) {
					what = m.captures[k].node;
					kind = cq->kind[id];
					is_def = cq->role[id] == CAP_DEF;
					have_what = 1;
				}
				break;
			case CAP_IMPORT:
				if (!hs)
					stmt = m.captures[k].node, hs = 1;
				break;
			case CAP_TARGET:
				if (!ht)
					target = m.captures[k].node, ht = 1;
				break;
			case CAP_MEMBER:
				if (!hm)
					member = m.captures[k].node, hm = 1;
				break;
			default:
				break;
			}
		}
		if (ht && (want & CHUNK_WANT_IMPORTS) && preds_hold(c, cq, &m)) {
			char *t = node_text(c, target);
			strip_target(t);
			if (!*t || strlen(t) > 1024 || strchr(t, '\n')) {
				free(t);
				continue;
			}
			ALLOC_GROW(c->imps, c->imps_nr + 1, c->imps_alloc);
			c->imps[c->imps_nr].target = t;
			c->imps[c->imps_nr].line = ts_node_start_point(hs ? stmt : target).row + 1;
			c->imps[c->imps_nr].resolved = NULL;
			c->imps[c->imps_nr].member = hm ? node_text(c, member) : NULL;
			c->imps[c->imps_nr].stmt = ts_node_start_byte(hs ? stmt : target);
			c->imps[c->imps_nr].type_only = type_checking_only(c, hs ? stmt : target);
			c->imps[c->imps_nr].drop = 0;
			c->imps_nr++;
			continue;
		}
		if (!have_name || !have_what || !(want & (is_def ? CHUNK_WANT_DEFS : CHUNK_WANT_REFS)))
			continue;
		if (!preds_hold(c, cq, &m))
			continue;
		if (is_def && specifier_without_body(c, what))
			continue;	/* `enum e x`, `struct s;`: a use of the type (tagged as such) */
		if (ts_node_end_byte(name) <= ts_node_start_byte(name) ||
		    ts_node_end_byte(name) - ts_node_start_byte(name) > 512)
			continue;
		ALLOC_GROW(c->tags, c->tags_nr + 1, c->tags_alloc);
		struct tag *t = &c->tags[c->tags_nr++];
		t->name = node_text(c, name);
		for (char *p = t->name; *p; p++)
			if (*p == '\n' || *p == '\r' || *p == '\t')
				*p = ' ';
		t->kind = kind;
		t->byte = ts_node_start_byte(name);
		t->line = ts_node_start_point(name).row + 1;
		t->col = ts_node_start_point(name).column + 1;
		t->end_line = node_end_line(c, what);
		if (t->end_line < t->line)
			t->end_line = t->line;
		t->is_def = is_def;
		t->scope = NULL;
	}
}

struct macro_scan {
	struct chunker *c;	/* the chunker */
	uint32_t base;		/* byte offset of the scanned text in the file */
};

/* cscan_macro_calls() callback: one "call" reference tag. */
static void add_macro_call(size_t off, size_t len, void *payload)
{
	struct macro_scan *ms = payload;
	struct chunker *c = ms->c;
	uint32_t b = ms->base + (uint32_t)off, row = line_of_byte(c, b);
	struct tag *t;

	if (len > 512)
		return;
	ALLOC_GROW(c->tags, c->tags_nr + 1, c->tags_alloc);
	t = &c->tags[c->tags_nr++];
	t->name = xstrndup(c->data + b, len);
	t->kind = "call";
	t->byte = b;
	t->line = t->end_line = row + 1;
	t->col = b - c->line_off[row] + 1;
	t->is_def = 0;
	t->scope = NULL;
}

/*
 * C and C++: the calls in #define bodies (one opaque preproc_arg to the
 * grammar, continuation lines and all) as references, scanned by
 * cscan_macro_calls().  Looks at the top level and inside #if/#ifdef
 * blocks, extern "C" and namespaces: a #define elsewhere is rare.
 */
static void macro_refs(struct chunker *c, TSNode n, int depth)
{
	TSTreeCursor cur;

	if (depth > 64 || !ts_node_child_count(n))
		return;
	cur = ts_tree_cursor_new(n);
	if (ts_tree_cursor_goto_first_child(&cur)) {
		do {
			TSNode ch = ts_tree_cursor_current_node(&cur);
			const char *type = ts_node_type(ch);

			if (!strcmp(type, "preproc_def") || !strcmp(type, "preproc_function_def")) {
				TSNode v = ts_node_child_by_field_name(ch, "value", 5);
				TSNode p = ts_node_child_by_field_name(ch, "parameters", 10);
				struct macro_scan ms = { c, 0 };
				uint32_t pb = 0, pe = 0;

				if (ts_node_is_null(v))
					continue;
				if (!ts_node_is_null(p)) {
					pb = ts_node_start_byte(p);
					pe = ts_node_end_byte(p);
				}
				ms.base = ts_node_start_byte(v);
				cscan_macro_calls(c->data + ms.base, ts_node_end_byte(v) - ms.base,
						  pe > pb ? c->data + pb : NULL, pe - pb, add_macro_call, &ms);
			} else if (!strncmp(type, "preproc_if", 10) || !strncmp(type, "preproc_el", 10) ||
				   !strcmp(type, "linkage_specification") ||
				   !strcmp(type, "declaration_list") ||
				   !strcmp(type, "namespace_definition")) {
				macro_refs(c, ch, depth + 1);
			}
		} while (ts_tree_cursor_goto_next_sibling(&cur));
	}
	ts_tree_cursor_delete(&cur);
}

/* The statement macros parsed as "while" are calls all the same; so are
 * a blanked macro line's name and the calls of a blanked directive
 * (`#if IS_ENABLED(CONFIG_X)`). */
static void stmt_macro_refs(struct chunker *c)
{
	struct macro_scan ms = { c, 0 };

	for (size_t i = 0; i < c->stmt_macros_nr; i++)
		add_macro_call(c->stmt_macros[i].start,
			       c->stmt_macros[i].end - c->stmt_macros[i].start, &ms);
	for (size_t i = 0; i < c->hidden_nr; i++) {
		uint32_t a = c->hidden[i].start, e = a;

		while (e < c->hidden[i].end && (c->data[e] == ' ' || c->data[e] == '\t'))
			e++;
		if (e < c->hidden[i].end && c->data[e] == '#') {
			ms.base = a;
			cscan_macro_calls(c->data + a, c->hidden[i].end - a, NULL, 0, add_macro_call, &ms);
			continue;
		}
		while (e < c->hidden[i].end && (isalnum((unsigned char)c->data[e]) || c->data[e] == '_'))
			e++;
		if (e > a && !isdigit((unsigned char)c->data[a])) {
			ms.base = 0;
			add_macro_call(a, e - a, &ms);
		}
	}
}

static int cmp_tag(const void *a, const void *b)
{
	const struct tag *x = a, *y = b;
	int r;

	if (x->is_def != y->is_def)
		return y->is_def - x->is_def;
	if (x->byte != y->byte)
		return x->byte < y->byte ? -1 : 1;
	if ((r = strcmp(x->kind, y->kind)))
		return r;
	if (x->end_line != y->end_line)
		return x->end_line > y->end_line ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The kind of a C "definition" that finish_tags() found to be a call. */
static const char demoted_call[] = "call";

/* Sort, drop duplicates, and give each tag the qualified name of its enclosing unit. */
static void finish_tags(struct chunker *c)
{
	size_t i, j = 0, ndefs = 0;
	int *stack = NULL;
	size_t sp = 0, st_alloc = 0, ui = 0;
	int c_like = !strcmp(c->rt->lang->name, "c") || !strcmp(c->rt->lang->name, "cpp");
	int demoted = 0;

	if (!c->tags_nr)
		return;
	qsort(c->tags, c->tags_nr, sizeof(*c->tags), cmp_tag);
	/*
	 * One tag per name position: of several definitions keep the most specific
	 * kind (Rust's tags call a method both "function" and "method"); drop a
	 * reference where there is a definition (Go's tags call every type_identifier
	 * a reference, its own definition included).
	 */
	for (i = 0; i < c->tags_nr; i++) {
		struct tag *t = &c->tags[i];
		if (j && c->tags[j - 1].is_def == t->is_def && c->tags[j - 1].byte == t->byte) {
			if (t->is_def && !strcmp(c->tags[j - 1].kind, "function") &&
			    strcmp(t->kind, "function")) {
				free(c->tags[j - 1].name);
				c->tags[j - 1] = *t;
			} else {
				free(t->name);
			}
			continue;
		}
		if (!t->is_def) {
			size_t lo = 0, hi = ndefs;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (c->tags[mid].byte < t->byte)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < ndefs && c->tags[lo].byte == t->byte) {
				free(t->name);
				continue;
			}
		}
		c->tags[j++] = *t;
		if (t->is_def)
			ndefs = j;
	}
	c->tags_nr = j;
	/* defs then refs, each in byte order: sweep the units (document order) twice */
	for (int pass = 0; pass < 2; pass++) {
		ui = 0;
		sp = 0;
		for (i = 0; i < c->tags_nr; i++) {
			struct tag *t = &c->tags[i];
			if (t->is_def != !pass)
				continue;
			while (ui < c->units_nr && c->units[ui].sb <= t->byte) {
				while (sp && c->units[stack[sp - 1]].eb <= c->units[ui].sb)
					sp--;
				ALLOC_GROW(stack, sp + 1, st_alloc);
				stack[sp++] = (int)ui++;
			}
			while (sp && c->units[stack[sp - 1]].eb <= t->byte)
				sp--;
			size_t top = sp;
			/* a definition is not inside itself */
			if (top && t->is_def && c->units[stack[top - 1]].name_b == t->byte) {
				const struct unit *self = &c->units[stack[top - 1]];
				/* C's tags define a function by its declarator: span the body */
				if (self->e > t->end_line)
					t->end_line = self->e;
				/* the unit knows its scope best: Go receivers, C++ A::f */
				t->scope = self->scope;
				if (!strcmp(t->kind, "function") && !strcmp(self->kind, "method"))
					t->kind = "method";
				else if (!strcmp(t->kind, "method") && !strcmp(self->kind, "function"))
					t->kind = "function";	/* in a module or an object literal */
				continue;
			}
			t->scope = top ? c->units[stack[top - 1]].qual : NULL;
			if (c_like && top && t->is_def && !strcmp(t->kind, "function") &&
			    !strcmp(c->units[stack[top - 1]].kind, "function")) {
				/*
				 * A "function declaration" in a C function's body is a call
				 * the grammar misread after a macro: `for_each_node(n)
				 * free_info(m, n);`, `return kmalloc(...)` after an
				 * attribute macro.  A reference, not a definition.
				 */
				t->kind = demoted_call;	/* a reference after the sweeps */
				demoted = 1;
				continue;
			}
			if (top && t->is_def && !strcmp(t->kind, "function") &&
			    kind_is_class_like(c->units[stack[top - 1]].kind))
				t->kind = "method";
			else if (t->is_def && !strcmp(t->kind, "method") &&
				 (!top || !kind_is_class_like(c->units[stack[top - 1]].kind)))
				t->kind = "function";
		}
	}
	free(stack);
	if (demoted) {
		for (i = 0; i < c->tags_nr; i++)
			if (c->tags[i].kind == demoted_call)
				c->tags[i].is_def = 0;
		qsort(c->tags, c->tags_nr, sizeof(*c->tags), cmp_tag);
	}
}

static void strip_target(char *s)
{
	size_t l = strlen(s);

	if (l >= 2 && ((s[0] == '"' && s[l - 1] == '"') || (s[0] == '\'' && s[l - 1] == '\'') ||
		       (s[0] == '`' && s[l - 1] == '`') || (s[0] == '<' && s[l - 1] == '>'))) {
		memmove(s, s + 1, l - 2);
		s[l - 2] = '\0';
	}
}

static int cmp_imp(const void *a, const void *b)
{
	const struct imp *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->target, y->target);
}

/*
 * `from m import a, b` (Python) came as one import of m and one per name: a
 * name that is a module of m (import_resolve_member()) becomes an import of
 * that module ("from . import sessions" imports sessions.py); the others are
 * dropped, and so is the import of m itself when every name was a module.
 */
static void bind_members(struct chunker *c, const char *path, const struct import_ctx *ictx)
{
	size_t i, j;

	for (i = 0; i < c->imps_nr; i++) {
		struct imp *m = &c->imps[i];
		char *t = NULL;

		if (!m->member)
			continue;
		m->resolved = ictx ? import_resolve_member(ictx, c->rt->lang->name, path, m->target,
							    m->member, &t) : NULL;
		if (m->resolved) {
			free(m->target);
			m->target = t;
		} else {
			m->drop = t ? 2 : 1;	/* 2: a module, the file itself */
			free(t);
		}
	}
	for (i = 0; i < c->imps_nr; i++) {
		struct imp *s = &c->imps[i];
		int members = 0, all = 1;

		if (s->member)
			continue;
		for (j = 0; j < c->imps_nr; j++)
			if (c->imps[j].member && c->imps[j].stmt == s->stmt) {
				members++;
				all &= c->imps[j].drop != 1;
			}
		if (members && all)
			s->drop = 1;
	}
	for (i = j = 0; i < c->imps_nr; i++) {
		if (c->imps[i].drop) {
			free(c->imps[i].target);
			free(c->imps[i].resolved);
			free(c->imps[i].member);
			continue;
		}
		c->imps[j++] = c->imps[i];
	}
	c->imps_nr = j;
}

/* Sort and deduplicate the imports, and resolve them. */
static void finish_imports(struct chunker *c, const char *path, const struct import_ctx *ictx)
{
	size_t i, j;

	if (!c->imps_nr)
		return;
	bind_members(c, path, ictx);
	qsort(c->imps, c->imps_nr, sizeof(*c->imps), cmp_imp);
	for (i = j = 0; i < c->imps_nr; i++) {
		if (j && c->imps[j - 1].line == c->imps[i].line &&
		    !strcmp(c->imps[j - 1].target, c->imps[i].target)) {
			c->imps[j - 1].type_only &= c->imps[i].type_only;
			free(c->imps[i].target);
			free(c->imps[i].resolved);
			free(c->imps[i].member);
			continue;
		}
		c->imps[j++] = c->imps[i];
	}
	c->imps_nr = j;
	if (ictx)
		for (i = 0; i < c->imps_nr; i++)
			if (!c->imps[i].member)
				c->imps[i].resolved = import_resolve(ictx, c->rt->lang->name, path,
								     c->imps[i].target);
}

/* ---- output ---- */

static void write_records(struct chunker *c, const char *path, const char *lang,
			  const char *blob, struct buf *out)
{
	unsigned want = c->opts.want;
	size_t i;

	if (want & CHUNK_WANT_FILES) {
		nd_begin(out, "file");
		nd_str(out, "path", path);
		nd_str(out, "lang", lang);
		nd_int(out, "size", (long long)c->n);
		nd_int(out, "lines", c->nlines);
		nd_str(out, "blob", blob);
		/* the text in chunk records differs from the file's bytes */
		if (!c->exact)
			nd_bool(out, "utf8", 0);
		nd_end(out);
	}
	if (want & CHUNK_WANT_CHUNKS) {
		for (i = 0; i < c->pieces_nr; i++) {
			const struct piece *p = &c->pieces[i];
			uint32_t a = c->line_off[p->s - 1], b = c->line_off[p->e];
			if (b > a && c->data[b - 1] == '\n')
				b--;
			nd_begin(out, "chunk");
			nd_key(out, "id");
			buf_addf(out, "\"%s:%u-%u\"", blob, p->s, p->e);
			nd_str(out, "path", path);
			nd_str(out, "lang", lang);
			nd_str(out, "kind", p->kind);
			nd_str(out, "name", p->name);
			nd_str(out, "scope", p->scope);
			nd_int(out, "start_line", p->s);
			nd_int(out, "end_line", p->e);
			nd_str(out, "signature", p->sig);
			nd_strn(out, "text", c->data + a, b - a);
			nd_end(out);
		}
	}
	for (i = 0; i < c->tags_nr; i++) {
		const struct tag *t = &c->tags[i];
		if (!(want & (t->is_def ? CHUNK_WANT_DEFS : CHUNK_WANT_REFS)))
			continue;
		nd_begin(out, t->is_def ? "def" : "ref");
		nd_str(out, "name", t->name);
		nd_str(out, "kind", t->kind);
		nd_str(out, "path", path);
		nd_str(out, "lang", lang);
		nd_int(out, "line", t->line);
		nd_int(out, "col", t->col);
		if (t->is_def)
			nd_int(out, "end_line", t->end_line);
		nd_str(out, "scope", t->scope);
		nd_end(out);
	}
	if (want & CHUNK_WANT_IMPORTS) {
		for (i = 0; i < c->imps_nr; i++) {
			nd_begin(out, "import");
			nd_str(out, "path", path);
			nd_str(out, "lang", lang);
			nd_str(out, "target", c->imps[i].target);
			nd_str(out, "resolved", c->imps[i].resolved);
			nd_int(out, "line", c->imps[i].line);
			if (c->imps[i].type_only)
				nd_bool(out, "type_only", 1);
			nd_end(out);
		}
	}
}

int chunker_file(struct chunker *c, const char *path, const struct lang *lang,
		 const char *data, size_t n, const struct import_ctx *ictx,
		 struct buf *out, struct buf *warn)
{
	char blob[BLOB_HEXSZ + 1];
	const char *why = NULL;
	TSTree *tree = NULL;
	int degraded = 0;

	reset_file(c);
	c->data = data;
	c->n = n;
	if (n > UINT32_MAX - 1) {
		buf_addf(warn, "%s: warning: %s: too large to chunk\n", progname, path);
		return 1;
	}
	if (c->known_blob[0])
		memcpy(blob, c->known_blob, sizeof(blob));
	else if (blob_id(blob, data, n) < 0)
		strcpy(blob, "0000000000000000000000000000000000000000");
	c->known_blob[0] = '\0';
	index_lines(c);
	c->rt = lang ? lang_runtime(lang) : NULL;
	c->exact = !memchr(data, '\0', n) && utf8_valid(data, n);

	if (c->rt) {
		if (memchr(data, '\0', n))
			why = "contains a NUL byte";
		else if (!c->exact)
			why = "invalid UTF-8";
		if (!why) {
			ts_parser_reset(c->parser);
			if (lang_nesting_exceeds(lang, data, n, LANG_MAX_NESTING))
				why = "nested too deeply for tree-sitter (over 4,096 levels)";
			else if (!ts_parser_set_language(c->parser, c->rt->ts))
				why = "grammar version not supported by libtree-sitter";
			else if (!(tree = parse_file(c)))
				why = "parse failed or timed out";
			else if (lang_tree_broken(tree, data, n)) {
				lang_tree_abandon(tree);
				tree = NULL;
				why = "nested too deeply for tree-sitter (over 65,535 constructs left open)";
			}
		}
		if (why) {
			buf_addf(warn, "%s: warning: %s: %s; chunked by lines\n", progname, path, why);
			degraded = 1;
		}
	}
	if (tree) {
		TSNode root = ts_tree_root_node(tree);
		collect_units(c, root);
		if (c->opts.want & CHUNK_WANT_CHUNKS)
			tile(c, 1, c->nlines, c->units_nr ? 0 : -1, root, "block", NULL, NULL);
		if (c->opts.want & (CHUNK_WANT_DEFS | CHUNK_WANT_REFS | CHUNK_WANT_IMPORTS)) {
			run_queries(c, root);
			if ((c->opts.want & CHUNK_WANT_REFS) &&
			    (!strcmp(lang->name, "c") || !strcmp(lang->name, "cpp")))
			{
				macro_refs(c, root, 0);
				stmt_macro_refs(c);
			}
			finish_tags(c);
			finish_imports(c, path, ictx);
		}
		ts_tree_delete(tree);
	} else if (c->opts.want & CHUNK_WANT_CHUNKS) {
		if (lang && lang->markdown && !memchr(data, '\0', n))
			chunk_markdown(c);
		else
			chunk_windows(c, 1, c->nlines, "lines", NULL, NULL);
	}
	/* a file of nothing but blank lines and closers */
	if (c->pending_from && c->nlines) {
		if (c->pieces_nr) {
			c->pieces[c->pieces_nr - 1].e = c->nlines;
		} else {
			ALLOC_GROW(c->pieces, c->pieces_nr + 1, c->pieces_alloc);
			struct piece *p = &c->pieces[c->pieces_nr++];
			memset(p, 0, sizeof(*p));
			p->s = c->pending_from;
			p->e = c->nlines;
			p->kind = "lines";
		}
		c->pending_from = 0;
	}
	write_records(c, path, lang ? lang->name : NULL, blob, out);
	return degraded;
}

void chunker_set_blob(struct chunker *c, const char *hex)
{
	assert(strlen(hex) == BLOB_HEXSZ);
	memcpy(c->known_blob, hex, BLOB_HEXSZ + 1);
}
