/*
 * refs.c: a query on the index (refs.h): definitions, references, symbols,
 * symbol search, imports of a file.
 *
 * Shaped by an agent's one question on a large index: every answer is one
 * SQL statement in path and line order, written record by record up to the
 * limit, so the first records come before the last rows are read.  Answers
 * are syntactic (tree-sitter tags), so records say "confidence":"syntactic",
 * and a language without a grammar gets an "unsupported" record.
 */
#include "core/common.h"
#include "graph/refs.h"
#include "graph/cgraph.h"
#include "index/index.h"
#include "parse/lang.h"
#include "parse/walk.h"

#include <ctype.h>
#include <errno.h>
#include <strings.h>

void refs_init(struct refs *r, struct ci_index *ix, const struct refs_opts *o, FILE *fp)
{
	memset(r, 0, sizeof(*r));
	r->ix = ix;
	r->db = index_db(ix);
	r->o = *o;
	r->fp = fp;
	buf_init(&r->out, 0);
}

void refs_release(struct refs *r)
{
	refs_flush(r);
	buf_release(&r->out);
	if (r->line_st)
		sqlite3_finalize(r->line_st);
	r->line_st = NULL;
}

/*
 * Write the record built in r->out.  NEEDSWORK: a write error dies here, and a
 * statement that cannot be prepared dies in refs_prep(), as they did when this
 * was ci-refs' own code; a server reusing the library would want them returned.
 */
void refs_flush(struct refs *r)
{
	if (r->out.len && fwrite(r->out.buf, 1, r->out.len, r->fp) != r->out.len)
		die("write error on standard output: %s", strerror(errno));
	buf_reset(&r->out);
}

int refs_read_begin(struct refs *r)
{
	return sqlite3_get_autocommit(r->db) && sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

void refs_read_end(struct refs *r, int txn)
{
	if (txn)
		sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
}

sqlite3_stmt *refs_prep(struct refs *r, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		die("index: %s", sqlite3_errmsg(r->db));
	return st;
}

/* Kind groups of the abstract contract: "class" also means struct, record... */
int refs_kind_matches(const char *want, const char *kind)
{
	static const char *const groups[][6] = {
		{ "class", "class", "struct", "record", "union", NULL },
		{ "function", "function", "method", "constructor", "macro", NULL },
		{ "interface", "interface", "trait", "protocol", NULL, NULL },
		{ "type", "type", "enum", "union", "typedef", NULL },
		{ "variable", "variable", "constant", "field", "property", NULL },
	};
	size_t i, j;

	if (!want)
		return 1;
	if (!kind)
		return 0;
	if (!strcmp(want, kind))
		return 1;
	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		if (strcmp(groups[i][0], want))
			continue;
		for (j = 1; j < 6 && groups[i][j]; j++)
			if (!strcmp(groups[i][j], kind))
				return 1;
	}
	return 0;
}

int refs_path_ok(const struct refs *r, const char *path)
{
	size_t l;

	if (!r->o.path || !*r->o.path)
		return 1;
	l = strlen(r->o.path);
	if (strncmp(path, r->o.path, l))
		return 0;
	/* "src" matches "src/a.c" and "src", not "srcx/a.c", unless it ends in "/" */
	return !path[l] || path[l] == '/' || r->o.path[l - 1] == '/';
}

/* The text of line (1-based) of the blob, as stored in its chunks, or NULL. */
char *refs_line_text(struct refs *r, sqlite3_int64 blob_id, long line)
{
	sqlite3_stmt *st;
	const char *t, *p, *e;
	long l;
	char *s = NULL;

	if (!r->line_st)
		r->line_st = refs_prep(r, "SELECT start_line, ci_inflate(text) FROM chunks WHERE blob_id = ?1 "
				       "AND start_line <= ?2 AND end_line >= ?2 LIMIT 1");
	st = r->line_st;
	sqlite3_bind_int64(st, 1, blob_id);
	sqlite3_bind_int64(st, 2, line);
	if (sqlite3_step(st) == SQLITE_ROW && (t = refs_col(st, 1))) {
		l = sqlite3_column_int64(st, 0);
		for (p = t; l < line && (p = strchr(p, '\n')); l++)
			p++;
		if (p) {
			e = strchrnul(p, '\n');
			s = xstrndup(p, (size_t)(e - p));
		}
	}
	sqlite3_reset(st);
	return s;
}

/* The text of line `line` of the file whose blob is blob_id, from the chunks:
 * trimmed, at most 240 bytes. */
char *refs_snippet(struct refs *r, sqlite3_int64 blob_id, long line)
{
	char *s = refs_line_text(r, blob_id, line), *p, *e;

	if (!s)
		return NULL;
	for (p = s; *p == ' ' || *p == '\t'; p++)
		;
	e = p + strlen(p);
	while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e - p > 240)
		e = p + 240;
	memmove(s, p, (size_t)(e - p));
	s[e - p] = '\0';
	return s;
}

/* "h" of "list.h": a name with this ending is a file, not a scope and a name. */
static int is_file_ext(const char *e)
{
	static const char *const exts[] = { "h", "c", "cc", "cpp", "hpp", "py", "js", "mjs", "ts",
		"tsx", "jsx", "go", "rs", "java", "rb", "php", "cs", "sh", "json", NULL };
	for (const char *const *x = exts; *x; x++)
		if (!strcmp(e, *x))
			return 1;
	return 0;
}

/* Split "A.B.name" into scope "A.B" and name "name" (NULL scope if none). */
void refs_split_qualified(const char *q, char **scope, char **name)
{
	const char *dot = strrchr(q, '.');
	const char *colon = NULL;

	for (const char *p = q; (p = strstr(p, "::")); p += 2)
		colon = p;
	if (colon && (!dot || colon > dot)) {
		*scope = xstrndup(q, (size_t)(colon - q));
		*name = xstrdup(colon + 2);
		for (char *p = *scope; (p = strstr(p, "::")); ) {
			*p = '.';
			memmove(p + 1, p + 2, strlen(p + 2) + 1);
		}
	} else if (dot && dot != q && dot[1] && !is_file_ext(dot + 1) && !strchr(q, '/')) {
		*scope = xstrndup(q, (size_t)(dot - q));
		*name = xstrdup(dot + 1);
	} else {
		*scope = NULL;
		*name = xstrdup(q);
	}
}

/* Does a record's scope end with the wanted qualifier ("Parser" matches "pkg.Parser")? */
static int scope_matches(const char *want, const char *scope)
{
	size_t lw, ls;

	if (!want)
		return 1;
	if (!scope)
		return 0;
	lw = strlen(want);
	ls = strlen(scope);
	if (ls < lw)
		return 0;
	return !strcmp(scope + ls - lw, want) && (ls == lw || scope[ls - lw - 1] == '.');
}

/* Does the dotted module path of a file ("src/pkg/api.py": src.pkg.api) end with mod? */
static int module_matches(const char *mod, size_t ml, const char *path)
{
	struct buf m = BUF_INIT;
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
	int ok;

	for (size_t i = 0; i < n; i++)
		buf_addch(&m, path[i] == '/' ? '.' : path[i]);
	/* a package is its __init__ (Python), mod.rs (Rust), index (JavaScript) */
	for (const char *const *p = (const char *const[]){ ".__init__", ".mod", ".index", NULL }; *p; p++)
		if (m.len > strlen(*p) && !strcmp(m.buf + m.len - strlen(*p), *p))
			buf_setlen(&m, m.len - strlen(*p));
	ok = m.len >= ml && !strncmp(m.buf + m.len - ml, mod, ml) &&
	     (m.len == ml || m.buf[m.len - ml - 1] == '.');
	buf_release(&m);
	return ok;
}

/*
 * Does a definition match the qualifier of "A.B.name"?  Its scope ends with
 * A.B ("Session.get"), or the qualifier is a module and the rest its scope:
 * "api.get" is get at the top of a module api (src/requests/api.py),
 * "sessions.Session.get" get in class Session of a module sessions.
 */
int refs_qualifier_matches(const char *want, const char *scope, const char *path)
{
	size_t lw;

	if (!want || scope_matches(want, scope))
		return 1;
	lw = strlen(want);
	for (size_t i = lw;; i--) {
		if (i == lw || want[i] == '.') {
			const char *rest = i < lw ? want + i + 1 : NULL;
			if ((rest ? scope && scope_matches(rest, scope) && !strcmp(scope, rest) : !scope) &&
			    module_matches(want, i, path))
				return 1;
		}
		if (!i)
			break;
	}
	return 0;
}

static int lang_has_grammar(const char *name)
{
	const struct lang *l = name ? lang_by_name(name) : NULL;

	return l && l->grammar;
}

static void emit_unsupported(struct refs *r, const char *lang, const char *what)
{
	nd_begin(&r->out, "unsupported");
	nd_str(&r->out, "lang", lang);
	nd_str(&r->out, "message", what);
	nd_end(&r->out);
	refs_flush(r);
}

/* callwalk_binds()'s test: a definition the qualifier q names. */
static int named_by(const char *path, const char *scope, void *q)
{
	return refs_qualifier_matches(q, scope, path);
}

/* defs / refs / occurrences */
/* A call reference's binding and definition (callers' rules), read now. */
static void emit_binding(struct refs *r, struct refs_binder *b, const char *path, const char *scope,
			 enum bind_recv recv, long line, long col_)
{
	enum bind_how how;
	const char *dp = NULL;
	long dl = refs_binder_bind(b, path, scope, line, col_, recv, &how, &dp);

	nd_str(&r->out, "binding", bind_how_name(how));
	if (dl > 0) {
		nd_key(&r->out, "definition");
		buf_addstr(&r->out, "{\"path\":");
		nd_json_string(&r->out, dp, strlen(dp));
		buf_addf(&r->out, ",\"line\":%ld}", dl);
	}
}

int refs_occurrences(struct refs *r, const char *q, int want_defs, int want_refs, int want_imports)
{
	char *scope, *name;
	sqlite3_stmt *st;
	struct callwalk *cw = NULL;
	int found = 0;
	struct refs_binder *binder;

	if (r->o.lang && !lang_has_grammar(r->o.lang)) {
		char *m = xasprintf("no grammar for '%s': definitions and references are not extracted "
				    "for it; try ci-grep", r->o.lang);
		emit_unsupported(r, r->o.lang, m);
		free(m);
		return EXIT_NOTHING;
	}
	refs_split_qualified(q, &scope, &name);
	binder = want_refs ? refs_binder_new(r, name) : NULL;
	/* definitions and references, in path order then line */
	st = refs_prep(r, "SELECT 'definition', d.kind, f.path, d.line, d.col, d.end_line, d.scope, b.lang, b.id, 0 "
		  "FROM defs d JOIN files f ON f.blob_id = d.blob_id JOIN blobs b ON b.id = d.blob_id "
		  "WHERE d.name = ?1 AND ?2 "
		  "UNION ALL "
		  "SELECT 'reference', r.kind, f.path, r.line, r.col, NULL, r.scope, b.lang, b.id, r.recv "
		  "FROM refs r JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
		  "WHERE r.name = ?1 AND ?3 "
		  "ORDER BY 3, 4, 5, 1");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, want_defs);
	sqlite3_bind_int(st, 3, want_refs);
	while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
		const char *type = refs_col(st, 0), *kind = refs_col(st, 1), *path = refs_col(st, 2);
		const char *sc = refs_col(st, 6), *lang = refs_col(st, 7);
		char *snip;

		if (!refs_kind_matches(r->o.kind, kind) || !refs_path_ok(r, path) || (r->o.lang && (!lang || strcmp(r->o.lang, lang))))
			continue;
		/* "Parser.parse": the definition's scope, or the reference's receiver
		 * scope cannot be known syntactically: keep references whose enclosing
		 * scope matches, or all of them when none does (said in the record) */
		if (scope && !strcmp(type, "definition") && !refs_qualifier_matches(scope, sc, path))
			continue;
		/* a call the binding gives to another definition (B.run's self.run()
		 * for A.run) is not a reference of this one */
		if (scope && !strcmp(type, "reference") && !strcmp(kind, "call") &&
		    !callwalk_binds(cw ? cw : (cw = callwalk_new(r)), path, sqlite3_column_int64(st, 8), name,
				    sc, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
				    (enum bind_recv)sqlite3_column_int(st, 9), named_by, scope))
			continue;
		snip = refs_snippet(r, sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 3));
		nd_begin(&r->out, "occurrence");
		nd_str(&r->out, "name", name);
		nd_str(&r->out, "type", type);
		nd_str(&r->out, "kind", kind);
		nd_str(&r->out, "path", path);
		nd_int(&r->out, "line", sqlite3_column_int64(st, 3));
		nd_int(&r->out, "col", sqlite3_column_int64(st, 4));
		if (!strcmp(type, "definition"))
			nd_int(&r->out, "end_line", sqlite3_column_int64(st, 5));
		nd_str(&r->out, "scope", sc);
		nd_str(&r->out, "lang", lang);
		nd_str(&r->out, "snippet", snip);
		nd_str(&r->out, "confidence", "syntactic");
		if (!strcmp(type, "reference") && !strcmp(kind, "call"))
			emit_binding(r, binder, path, sc, (enum bind_recv)sqlite3_column_int(st, 9),
				     sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
		nd_end(&r->out);
		refs_flush(r);
		free(snip);
		r->emitted++;
		found++;
	}
	sqlite3_finalize(st);
	refs_binder_free(binder);
	callwalk_free(cw);
	if (want_imports && r->emitted < r->o.limit && (!r->o.kind || !strcmp(r->o.kind, "import"))) {
		/* imports whose target names the symbol or module: "os.path", "./name" */
		st = refs_prep(r, "SELECT i.path, i.line, i.target, i.resolved, b.lang, b.id FROM imports i "
			  "JOIN files f ON f.path = i.path JOIN blobs b ON b.id = f.blob_id "
			  "WHERE i.target = ?1 OR i.target LIKE '%.' || ?1 OR i.target LIKE '%/' || ?1 "
			  "OR i.target LIKE ?1 || '.%' "
			  "OR i.target LIKE '%::' || ?1 OR i.target LIKE '%/' || ?1 || '.%' "
			  "ORDER BY i.path, i.line");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
			const char *path = refs_col(st, 0), *lang = refs_col(st, 4);
			char *snip;

			if (!refs_path_ok(r, path) || (r->o.lang && (!lang || strcmp(r->o.lang, lang))))
				continue;
			snip = refs_snippet(r, sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 1));
			nd_begin(&r->out, "occurrence");
			nd_str(&r->out, "name", name);
			nd_str(&r->out, "type", "import");
			nd_str(&r->out, "kind", "import");
			nd_str(&r->out, "path", path);
			nd_int(&r->out, "line", sqlite3_column_int64(st, 1));
			nd_int(&r->out, "col", 1);
			nd_str(&r->out, "scope", NULL);
			nd_str(&r->out, "lang", lang);
			nd_str(&r->out, "target", refs_col(st, 2));
			nd_str(&r->out, "resolved", refs_col(st, 3));
			nd_str(&r->out, "snippet", snip);
			nd_str(&r->out, "confidence", "syntactic");
			nd_end(&r->out);
			refs_flush(r);
			free(snip);
			r->emitted++;
			found++;
		}
		sqlite3_finalize(st);
	}
	if (!found)
		error("no %s of '%s' in the index%s", want_defs && !want_refs ? "definitions" :
		      want_refs && !want_defs ? "references" : "occurrences", q,
		      r->o.kind || r->o.path || r->o.lang ? " (with these filters)" : "");
	free(scope);
	free(name);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* The index's path for a file named by the user (relative to the current directory). */
char *refs_file_arg(struct refs *r, const char *arg)
{
	struct walker w;
	struct walk_opts wo = WALK_OPTS_INIT;
	char *rel = NULL;
	const char *root = index_root(r->ix);

	/* a path relative to the root as the index knows it, if it is one */
	{
		sqlite3_stmt *st = refs_prep(r, "SELECT 1 FROM files WHERE path = ?1");
		int known;
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
		known = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (known)
			return xstrdup(arg);
	}
	if (walker_open(&w, root && *root ? root : ".", &wo) == 0) {
		if (access(arg, F_OK) == 0 && walker_relpath(&w, arg, &rel) < 0)
			rel = NULL;
		walker_close(&w);
	}
	return rel ? rel : xstrdup(arg);
}

int refs_symbols(struct refs *r, const char *arg)
{
	char *path = refs_file_arg(r, arg);
	sqlite3_stmt *st;
	const char *lang = NULL;
	sqlite3_int64 blob = 0;
	int found = 0;

	st = refs_prep(r, "SELECT b.id, b.lang FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		blob = sqlite3_column_int64(st, 0);
		lang = refs_col(st, 1) ? xstrdup(refs_col(st, 1)) : NULL;
	}
	sqlite3_finalize(st);
	if (!blob) {
		error("'%s' is not in the index (run 'ci-index update'?)", path);
		free(path);
		return EXIT_NOTHING;
	}
	if (!lang_has_grammar(lang)) {
		char *m = xasprintf("no grammar for %s: symbols of '%s' are not extracted",
				    lang ? lang : "this file's language", path);
		emit_unsupported(r, lang, m);
		free(m);
		free((char *)lang);
		free(path);
		return EXIT_NOTHING;
	}
	/* a definition's signature is that of the chunk it starts */
	st = refs_prep(r, "SELECT d.name, d.kind, d.line, d.col, d.end_line, d.scope, "
		  "(SELECT c.signature FROM chunks c WHERE c.blob_id = d.blob_id AND c.name = d.name "
		  " AND c.start_line <= d.line AND c.end_line >= d.line ORDER BY c.start_line LIMIT 1) "
		  "FROM defs d WHERE d.blob_id = ?1 ORDER BY d.line, d.col, d.name");
	sqlite3_bind_int64(st, 1, blob);
	while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
		if (!refs_kind_matches(r->o.kind, refs_col(st, 1)))
			continue;
		nd_begin(&r->out, "symbol");
		nd_str(&r->out, "name", refs_col(st, 0));
		nd_str(&r->out, "kind", refs_col(st, 1));
		nd_str(&r->out, "path", path);
		nd_int(&r->out, "line", sqlite3_column_int64(st, 2));
		nd_int(&r->out, "col", sqlite3_column_int64(st, 3));
		nd_int(&r->out, "end_line", sqlite3_column_int64(st, 4));
		nd_str(&r->out, "scope", refs_col(st, 5));
		nd_str(&r->out, "signature", refs_col(st, 6));
		nd_str(&r->out, "lang", lang);
		nd_end(&r->out);
		refs_flush(r);
		r->emitted++;
		found++;
	}
	sqlite3_finalize(st);
	if (!found)
		error("'%s' defines no symbols%s", path, r->o.kind ? " of that kind" : "");
	free((char *)lang);
	free(path);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* Fuzzy score of name against query q (both compared case-insensitively):
 * 0 when q is not a subsequence of name; higher for contiguous, early matches. */
double refs_fuzzy_score(const char *q, const char *name)
{
	size_t i = 0, j, run = 0, best_run = 0, first = SIZE_MAX, nq = strlen(q), nn = strlen(name);

	if (!nq)
		return 0;
	for (j = 0; j < nn && i < nq; j++) {
		if (tolower((unsigned char)q[i]) == tolower((unsigned char)name[j])) {
			if (first == SIZE_MAX)
				first = j;
			i++;
			run++;
			if (run > best_run)
				best_run = run;
		} else {
			run = 0;
		}
	}
	if (i < nq)
		return 0;
	return 0.5 * (double)best_run / (double)nq + 0.3 * (double)nq / (double)nn +
	       0.2 / (double)(1 + first);
}

struct cand {
	char *name;		/* symbol name */
	char *kind;		/* its kind */
	char *path;		/* where */
	long line, col;		/* position */
	char *scope;		/* enclosing scope */
	const char *match;	/* exact, prefix, fuzzy */
	double score;		/* 0-1 */
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int r;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if ((r = strcmp(x->name, y->name)))
		return r;
	if ((r = strcmp(x->path, y->path)))
		return r;
	return x->line < y->line ? -1 : x->line > y->line;
}

int refs_search(struct refs *r, const char *q)
{
	sqlite3_stmt *st;
	struct cand *c = NULL;
	size_t nr = 0, alloc = 0, i;
	char *scope, *name, *lq;
	size_t lqn;

	if (r->o.lang && !lang_has_grammar(r->o.lang)) {
		char *m = xasprintf("no grammar for '%s': symbols are not extracted for it", r->o.lang);
		emit_unsupported(r, r->o.lang, m);
		free(m);
		return EXIT_NOTHING;
	}
	refs_split_qualified(q, &scope, &name);
	lq = xstrdup(name);
	for (char *p = lq; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	lqn = strlen(lq);
	st = refs_prep(r, "SELECT d.name, d.kind, f.path, d.line, d.col, d.scope, b.lang FROM defs d "
		  "JOIN files f ON f.blob_id = d.blob_id JOIN blobs b ON b.id = d.blob_id");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = refs_col(st, 0), *path = refs_col(st, 2), *lang = refs_col(st, 6);
		double s;
		const char *m;

		if (!refs_kind_matches(r->o.kind, refs_col(st, 1)) || !refs_path_ok(r, path) ||
		    (r->o.lang && (!lang || strcmp(lang, r->o.lang))) || !refs_qualifier_matches(scope, refs_col(st, 5), refs_col(st, 2)))
			continue;
		if (!strcmp(n, name)) {
			s = 1.0;
			m = "exact";
		} else if (!strcasecmp(n, name)) {
			s = 0.95;
			m = "exact";
		} else if (!strncasecmp(n, lq, lqn)) {
			s = 0.7 + 0.2 * (double)lqn / (double)strlen(n);
			m = "prefix";
		} else if ((s = refs_fuzzy_score(lq, n)) > 0.35) {
			s *= 0.6;
			m = "fuzzy";
		} else {
			continue;
		}
		ALLOC_GROW(c, nr + 1, alloc);
		c[nr].name = xstrdup(n);
		c[nr].kind = xstrdup(refs_col(st, 1));
		c[nr].path = xstrdup(path);
		c[nr].line = sqlite3_column_int64(st, 3);
		c[nr].col = sqlite3_column_int64(st, 4);
		c[nr].scope = refs_col(st, 5) ? xstrdup(refs_col(st, 5)) : NULL;
		c[nr].match = m;
		c[nr].score = s;
		nr++;
	}
	sqlite3_finalize(st);
	if (nr)
		qsort(c, nr, sizeof(*c), cmp_cand);
	for (i = 0; i < nr; i++) {
		if (r->emitted < r->o.limit) {
			nd_begin(&r->out, "symbol");
			nd_str(&r->out, "name", c[i].name);
			nd_str(&r->out, "kind", c[i].kind);
			nd_str(&r->out, "path", c[i].path);
			nd_int(&r->out, "line", c[i].line);
			nd_int(&r->out, "col", c[i].col);
			nd_str(&r->out, "scope", c[i].scope);
			nd_str(&r->out, "match", c[i].match);
			nd_num(&r->out, "score", (double)(long)(c[i].score * 1000 + 0.5) / 1000);
			nd_end(&r->out);
			refs_flush(r);
			r->emitted++;
		}
		free(c[i].name);
		free(c[i].kind);
		free(c[i].path);
		free(c[i].scope);
	}
	free(c);
	free(lq);
	free(scope);
	free(name);
	if (!nr) {
		error("no symbol matches '%s'", q);
		return EXIT_NOTHING;
	}
	return EXIT_OK;
}

int refs_deps(struct refs *r, const char *arg)
{
	char *path = refs_file_arg(r, arg);
	sqlite3_stmt *st;
	int found = 0, known;

	st = refs_prep(r, "SELECT 1 FROM files WHERE path = ?1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	known = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!known) {
		error("'%s' is not in the index (run 'ci-index update'?)", path);
		free(path);
		return EXIT_NOTHING;
	}
	if (!r->o.reverse || r->o.both) {
		st = refs_prep(r, "SELECT target, resolved, line, type_only FROM imports WHERE path = ?1 "
			  "ORDER BY line, target");
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
			nd_begin(&r->out, "dep");
			nd_str(&r->out, "direction", "imports");
			nd_str(&r->out, "path", path);
			nd_str(&r->out, "target", refs_col(st, 0));
			nd_str(&r->out, "resolved", refs_col(st, 1));
			nd_int(&r->out, "line", sqlite3_column_int64(st, 2));
			if (sqlite3_column_int(st, 3))
				nd_bool(&r->out, "type_only", 1);
			nd_end(&r->out);
			refs_flush(r);
			r->emitted++;
			found++;
		}
		sqlite3_finalize(st);
	}
	if (r->o.reverse || r->o.both) {
		st = refs_prep(r, "SELECT path, target, line, type_only FROM imports WHERE resolved = ?1 "
			  "ORDER BY path, line");
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && r->emitted < r->o.limit) {
			nd_begin(&r->out, "dep");
			nd_str(&r->out, "direction", "imported_by");
			nd_str(&r->out, "path", refs_col(st, 0));
			nd_str(&r->out, "target", refs_col(st, 1));
			nd_str(&r->out, "resolved", path);
			nd_int(&r->out, "line", sqlite3_column_int64(st, 2));
			if (sqlite3_column_int(st, 3))
				nd_bool(&r->out, "type_only", 1);
			nd_end(&r->out);
			refs_flush(r);
			r->emitted++;
			found++;
		}
		sqlite3_finalize(st);
	}
	if (!found)
		error("'%s' %s", path, r->o.reverse && !r->o.both ? "is imported by no file of the index" :
		      "imports nothing the index knows");
	free(path);
	return found ? EXIT_OK : EXIT_NOTHING;
}
