/*
 * ci-refs: definitions, references, imports and their graph, from the index.
 *
 *   ci-refs defs|refs|occurrences <name>    where a symbol is defined / used
 *   ci-refs symbols <file>                  what a file defines
 *   ci-refs search <name-or-pattern>        symbol search: exact, prefix, fuzzy
 *   ci-refs deps <file> [--reverse|--both]  imports, resolved to files
 *   ci-refs cycles [--scope <path>]         import cycles
 *   ci-refs impact <file|file:symbol>       what a change may affect
 *
 * Every answer is syntactic: definitions and references come from tree-sitter
 * tags queries, not from a compiler, so records say "confidence":"syntactic";
 * and a question about a language without a grammar gets an explicit
 * "unsupported" record rather than an empty list.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "graph/bind.h"
#include "core/human.h"
#include "index/index.h"
#include "parse/lang.h"
#include "parse/walk.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>

static const char usage_text[] =
	"usage: ci-refs [options] <command> <arg>\n"
	"\n"
	"Commands:\n"
	"  defs <name>             where <name> is defined (Class.method, module.func narrow)\n"
	"  refs <name>             where <name> is referenced\n"
	"  occurrences <name>      definitions, references and imports of <name>\n"
	"  symbols <file>          every symbol a file defines\n"
	"  search <query>          symbols by name: exact, then prefix, then fuzzy\n"
	"  deps <file>             the files <file> imports (--reverse: that import it)\n"
	"  cycles                  import cycles (strongly connected components)\n"
	"  impact <file>[:<symbol>]  files a change may affect, with the signals\n"
	"  callers <name>          the calls that reach <name>, each with how it binds\n"
	"  callees <name>          the calls inside <name>, each with the definition it reaches\n"
	"\n"
	"Options:\n"
	"      --index <db>        the index (default: $CI_INDEX, or <root>/.ci-index/index.db)\n"
	"      --shards <set>      every index of a shard set (a directory or a manifest), merged\n"
	"      --kind <kind>       only this kind (function, method, class, interface, type,\n"
	"                          variable, ... or call, type for references)\n"
	"      --path <prefix>     only files under this path\n"
	"      --lang <lang>       only files in this language\n"
	"      --limit <n>         at most <n> records (1-10000; default 100)\n"
	"      --reverse           deps: the files that import <file>\n"
	"      --both              deps: both directions\n"
	"      --scope <path>      cycles: only files under this path\n"
	"      --type-imports      cycles: count Python imports under `if TYPE_CHECKING:`\n"
	"      --depth <n>         impact: follow reverse imports <n> levels (0-3; default 2)\n"
	"      --mode <mode>       impact: the signals, combined (default: all), deps (imports\n"
	"                          and references), coupling or semantic\n"
	"      --json              NDJSON records even on a terminal (also: CI_FORMAT=json)\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum { OPT_INDEX = 256, OPT_KIND, OPT_PATH, OPT_LANG, OPT_LIMIT, OPT_REVERSE, OPT_BOTH,
	OPT_SCOPE, OPT_DEPTH, OPT_MODE, OPT_JSON, OPT_TYPE_IMPORTS };

static const struct option long_options[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "both", no_argument, NULL, OPT_BOTH },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "type-imports", no_argument, NULL, OPT_TYPE_IMPORTS },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct options {
	const char *index;	/* --index */
	const char *kind;	/* --kind */
	const char *path;	/* --path prefix */
	const char *lang;	/* --lang */
	long limit;		/* --limit */
	int reverse, both;	/* deps direction */
	const char *scope;	/* cycles --scope */
	int type_imports;	/* cycles --type-imports */
	long depth;		/* impact --depth */
	unsigned mode;		/* impact --mode: the signals, M_* */
};

/* The signals of impact. */
enum { M_DEPS = 1, M_COUPLING = 2, M_SEMANTIC = 4, M_ALL = 7 };

static struct ci_index *ix;
static sqlite3 *db;
static struct options o;
static struct buf out = BUF_INIT;
static long emitted;

static void flush_out(void)
{
	if (out.len && fwrite(out.buf, 1, out.len, stdout) != out.len)
		die("write error on standard output: %s", strerror(errno));
	buf_reset(&out);
}

static sqlite3_stmt *prep(const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("index: %s", sqlite3_errmsg(db));
	return st;
}

static const char *col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Kind groups of the abstract contract: "class" also means struct, record... */
static int kind_matches(const char *want, const char *kind)
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

static int path_ok(const char *path)
{
	size_t l;

	if (!o.path || !*o.path)
		return 1;
	l = strlen(o.path);
	if (strncmp(path, o.path, l))
		return 0;
	/* "src" matches "src/a.c" and "src", not "srcx/a.c", unless it ends in "/" */
	return !path[l] || path[l] == '/' || o.path[l - 1] == '/';
}

static char *line_text(sqlite3_int64 blob_id, long line);

/* The text of line `line` of the file whose blob is blob_id, from the chunks:
 * trimmed, at most 240 bytes. */
static char *snippet(sqlite3_int64 blob_id, long line)
{
	char *s = line_text(blob_id, line), *p, *e;

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
static void split_qualified(const char *q, char **scope, char **name)
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
static int qualifier_matches(const char *want, const char *scope, const char *path)
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

static void emit_unsupported(const char *lang, const char *what)
{
	nd_begin(&out, "unsupported");
	nd_str(&out, "lang", lang);
	nd_str(&out, "message", what);
	nd_end(&out);
	flush_out();
}

/* defs / refs / occurrences */
static int cmd_occurrences(const char *q, int want_defs, int want_refs, int want_imports)
{
	char *scope, *name;
	sqlite3_stmt *st;
	int found = 0;

	if (o.lang && !lang_has_grammar(o.lang)) {
		char *m = xasprintf("no grammar for '%s': definitions and references are not extracted "
				    "for it; try ci-grep", o.lang);
		emit_unsupported(o.lang, m);
		free(m);
		return EXIT_NOTHING;
	}
	split_qualified(q, &scope, &name);
	/* definitions and references, in path order then line */
	st = prep("SELECT 'definition', d.kind, f.path, d.line, d.col, d.end_line, d.scope, b.lang, b.id "
		  "FROM defs d JOIN files f ON f.blob_id = d.blob_id JOIN blobs b ON b.id = d.blob_id "
		  "WHERE d.name = ?1 AND ?2 "
		  "UNION ALL "
		  "SELECT 'reference', r.kind, f.path, r.line, r.col, NULL, r.scope, b.lang, b.id "
		  "FROM refs r JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
		  "WHERE r.name = ?1 AND ?3 "
		  "ORDER BY 3, 4, 5, 1");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, want_defs);
	sqlite3_bind_int(st, 3, want_refs);
	while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
		const char *type = col(st, 0), *kind = col(st, 1), *path = col(st, 2);
		const char *sc = col(st, 6), *lang = col(st, 7);
		char *snip;

		if (!kind_matches(o.kind, kind) || !path_ok(path) || (o.lang && (!lang || strcmp(o.lang, lang))))
			continue;
		/* "Parser.parse": the definition's scope, or the reference's receiver
		 * scope cannot be known syntactically: keep references whose enclosing
		 * scope matches, or all of them when none does (said in the record) */
		if (scope && !strcmp(type, "definition") && !qualifier_matches(scope, sc, path))
			continue;
		snip = snippet(sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 3));
		nd_begin(&out, "occurrence");
		nd_str(&out, "name", name);
		nd_str(&out, "type", type);
		nd_str(&out, "kind", kind);
		nd_str(&out, "path", path);
		nd_int(&out, "line", sqlite3_column_int64(st, 3));
		nd_int(&out, "col", sqlite3_column_int64(st, 4));
		if (!strcmp(type, "definition"))
			nd_int(&out, "end_line", sqlite3_column_int64(st, 5));
		nd_str(&out, "scope", sc);
		nd_str(&out, "lang", lang);
		nd_str(&out, "snippet", snip);
		nd_str(&out, "confidence", "syntactic");
		nd_end(&out);
		flush_out();
		free(snip);
		emitted++;
		found++;
	}
	sqlite3_finalize(st);
	if (want_imports && emitted < o.limit && (!o.kind || !strcmp(o.kind, "import"))) {
		/* imports whose target names the symbol or module: "os.path", "./name" */
		st = prep("SELECT i.path, i.line, i.target, i.resolved, b.lang, b.id FROM imports i "
			  "JOIN files f ON f.path = i.path JOIN blobs b ON b.id = f.blob_id "
			  "WHERE i.target = ?1 OR i.target LIKE '%.' || ?1 OR i.target LIKE '%/' || ?1 "
			  "OR i.target LIKE ?1 || '.%' "
			  "OR i.target LIKE '%::' || ?1 OR i.target LIKE '%/' || ?1 || '.%' "
			  "ORDER BY i.path, i.line");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
			const char *path = col(st, 0), *lang = col(st, 4);
			char *snip;

			if (!path_ok(path) || (o.lang && (!lang || strcmp(o.lang, lang))))
				continue;
			snip = snippet(sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 1));
			nd_begin(&out, "occurrence");
			nd_str(&out, "name", name);
			nd_str(&out, "type", "import");
			nd_str(&out, "kind", "import");
			nd_str(&out, "path", path);
			nd_int(&out, "line", sqlite3_column_int64(st, 1));
			nd_int(&out, "col", 1);
			nd_str(&out, "scope", NULL);
			nd_str(&out, "lang", lang);
			nd_str(&out, "target", col(st, 2));
			nd_str(&out, "resolved", col(st, 3));
			nd_str(&out, "snippet", snip);
			nd_str(&out, "confidence", "syntactic");
			nd_end(&out);
			flush_out();
			free(snip);
			emitted++;
			found++;
		}
		sqlite3_finalize(st);
	}
	if (!found)
		error("no %s of '%s' in the index%s", want_defs && !want_refs ? "definitions" :
		      want_refs && !want_defs ? "references" : "occurrences", q,
		      o.kind || o.path || o.lang ? " (with these filters)" : "");
	free(scope);
	free(name);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* The index's path for a file named by the user (relative to the current directory). */
static char *file_arg(const char *arg)
{
	struct walker w;
	struct walk_opts wo = WALK_OPTS_INIT;
	char *rel = NULL;
	const char *root = index_root(ix);

	/* a path relative to the root as the index knows it, if it is one */
	{
		sqlite3_stmt *st = prep("SELECT 1 FROM files WHERE path = ?1");
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

static int cmd_symbols(const char *arg)
{
	char *path = file_arg(arg);
	sqlite3_stmt *st;
	const char *lang = NULL;
	sqlite3_int64 blob = 0;
	int found = 0;

	st = prep("SELECT b.id, b.lang FROM files f JOIN blobs b ON b.id = f.blob_id WHERE f.path = ?1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		blob = sqlite3_column_int64(st, 0);
		lang = col(st, 1) ? xstrdup(col(st, 1)) : NULL;
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
		emit_unsupported(lang, m);
		free(m);
		free((char *)lang);
		free(path);
		return EXIT_NOTHING;
	}
	/* a definition's signature is that of the chunk it starts */
	st = prep("SELECT d.name, d.kind, d.line, d.col, d.end_line, d.scope, "
		  "(SELECT c.signature FROM chunks c WHERE c.blob_id = d.blob_id AND c.name = d.name "
		  " AND c.start_line <= d.line AND c.end_line >= d.line ORDER BY c.start_line LIMIT 1) "
		  "FROM defs d WHERE d.blob_id = ?1 ORDER BY d.line, d.col, d.name");
	sqlite3_bind_int64(st, 1, blob);
	while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
		if (!kind_matches(o.kind, col(st, 1)))
			continue;
		nd_begin(&out, "symbol");
		nd_str(&out, "name", col(st, 0));
		nd_str(&out, "kind", col(st, 1));
		nd_str(&out, "path", path);
		nd_int(&out, "line", sqlite3_column_int64(st, 2));
		nd_int(&out, "col", sqlite3_column_int64(st, 3));
		nd_int(&out, "end_line", sqlite3_column_int64(st, 4));
		nd_str(&out, "scope", col(st, 5));
		nd_str(&out, "signature", col(st, 6));
		nd_str(&out, "lang", lang);
		nd_end(&out);
		flush_out();
		emitted++;
		found++;
	}
	sqlite3_finalize(st);
	if (!found)
		error("'%s' defines no symbols%s", path, o.kind ? " of that kind" : "");
	free((char *)lang);
	free(path);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* Fuzzy score of name against query q (both compared case-insensitively):
 * 0 when q is not a subsequence of name; higher for contiguous, early matches. */
static double fuzzy_score(const char *q, const char *name)
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

static int cmd_search(const char *q)
{
	sqlite3_stmt *st;
	struct cand *c = NULL;
	size_t nr = 0, alloc = 0, i;
	char *scope, *name, *lq;
	size_t lqn;

	if (o.lang && !lang_has_grammar(o.lang)) {
		char *m = xasprintf("no grammar for '%s': symbols are not extracted for it", o.lang);
		emit_unsupported(o.lang, m);
		free(m);
		return EXIT_NOTHING;
	}
	split_qualified(q, &scope, &name);
	lq = xstrdup(name);
	for (char *p = lq; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	lqn = strlen(lq);
	st = prep("SELECT d.name, d.kind, f.path, d.line, d.col, d.scope, b.lang FROM defs d "
		  "JOIN files f ON f.blob_id = d.blob_id JOIN blobs b ON b.id = d.blob_id");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = col(st, 0), *path = col(st, 2), *lang = col(st, 6);
		double s;
		const char *m;

		if (!kind_matches(o.kind, col(st, 1)) || !path_ok(path) ||
		    (o.lang && (!lang || strcmp(lang, o.lang))) || !qualifier_matches(scope, col(st, 5), col(st, 2)))
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
		} else if ((s = fuzzy_score(lq, n)) > 0.35) {
			s *= 0.6;
			m = "fuzzy";
		} else {
			continue;
		}
		ALLOC_GROW(c, nr + 1, alloc);
		c[nr].name = xstrdup(n);
		c[nr].kind = xstrdup(col(st, 1));
		c[nr].path = xstrdup(path);
		c[nr].line = sqlite3_column_int64(st, 3);
		c[nr].col = sqlite3_column_int64(st, 4);
		c[nr].scope = col(st, 5) ? xstrdup(col(st, 5)) : NULL;
		c[nr].match = m;
		c[nr].score = s;
		nr++;
	}
	sqlite3_finalize(st);
	if (nr)
		qsort(c, nr, sizeof(*c), cmp_cand);
	for (i = 0; i < nr; i++) {
		if (emitted < o.limit) {
			nd_begin(&out, "symbol");
			nd_str(&out, "name", c[i].name);
			nd_str(&out, "kind", c[i].kind);
			nd_str(&out, "path", c[i].path);
			nd_int(&out, "line", c[i].line);
			nd_int(&out, "col", c[i].col);
			nd_str(&out, "scope", c[i].scope);
			nd_str(&out, "match", c[i].match);
			nd_num(&out, "score", (double)(long)(c[i].score * 1000 + 0.5) / 1000);
			nd_end(&out);
			flush_out();
			emitted++;
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

static int cmd_deps(const char *arg)
{
	char *path = file_arg(arg);
	sqlite3_stmt *st;
	int found = 0, known;

	st = prep("SELECT 1 FROM files WHERE path = ?1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	known = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!known) {
		error("'%s' is not in the index (run 'ci-index update'?)", path);
		free(path);
		return EXIT_NOTHING;
	}
	if (!o.reverse || o.both) {
		st = prep("SELECT target, resolved, line, type_only FROM imports WHERE path = ?1 "
			  "ORDER BY line, target");
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
			nd_begin(&out, "dep");
			nd_str(&out, "direction", "imports");
			nd_str(&out, "path", path);
			nd_str(&out, "target", col(st, 0));
			nd_str(&out, "resolved", col(st, 1));
			nd_int(&out, "line", sqlite3_column_int64(st, 2));
			if (sqlite3_column_int(st, 3))
				nd_bool(&out, "type_only", 1);
			nd_end(&out);
			flush_out();
			emitted++;
			found++;
		}
		sqlite3_finalize(st);
	}
	if (o.reverse || o.both) {
		st = prep("SELECT path, target, line, type_only FROM imports WHERE resolved = ?1 "
			  "ORDER BY path, line");
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
			nd_begin(&out, "dep");
			nd_str(&out, "direction", "imported_by");
			nd_str(&out, "path", col(st, 0));
			nd_str(&out, "target", col(st, 1));
			nd_str(&out, "resolved", path);
			nd_int(&out, "line", sqlite3_column_int64(st, 2));
			if (sqlite3_column_int(st, 3))
				nd_bool(&out, "type_only", 1);
			nd_end(&out);
			flush_out();
			emitted++;
			found++;
		}
		sqlite3_finalize(st);
	}
	if (!found)
		error("'%s' %s", path, o.reverse && !o.both ? "is imported by no file of the index" :
		      "imports nothing the index knows");
	free(path);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* ---- callers and callees: references bound to definitions ---- */

/* The text of line (1-based) of the blob, as stored in its chunks, or NULL. */
static char *line_text(sqlite3_int64 blob_id, long line)
{
	static sqlite3_stmt *st;
	const char *t, *p, *e;
	long l;
	char *s = NULL;

	if (!st)
		st = prep("SELECT start_line, ci_inflate(text) FROM chunks WHERE blob_id = ?1 AND start_line <= ?2 "
			  "AND end_line >= ?2 LIMIT 1");
	sqlite3_bind_int64(st, 1, blob_id);
	sqlite3_bind_int64(st, 2, line);
	if (sqlite3_step(st) == SQLITE_ROW && (t = col(st, 1))) {
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

/* What the call at (blob, line, col) is made on (bind_receiver()). */
static enum bind_recv receiver_of(sqlite3_int64 blob_id, long line, long col_)
{
	char *t = line_text(blob_id, line);
	enum bind_recv r = col_ >= 1 ? bind_receiver(t, (size_t)col_ - 1) : RECV_UNKNOWN;

	free(t);
	return r;
}

/* The definitions of one name, as candidates of bind_ref() for one file. */
struct cands {
	struct bind_def *d;	/* candidates */
	char **paths, **scopes;	/* owned strings behind d */
	long *lines, *ends;	/* their lines and end lines */
	size_t nr, alloc;	/* number of candidates */
};

static void cands_release(struct cands *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		free(c->paths[i]);
		free(c->scopes[i]);
	}
	free(c->d);
	free(c->paths);
	free(c->scopes);
	free(c->lines);
	free(c->ends);
	memset(c, 0, sizeof(*c));
}

/* Load every definition named name. */
static void cands_load(struct cands *c, const char *name)
{
	sqlite3_stmt *st = prep("SELECT f.path, d.scope, d.line, d.end_line FROM defs d "
				"JOIN files f ON f.blob_id = d.blob_id WHERE d.name = ?1 "
				"ORDER BY f.path, d.line");
	size_t a1 = 0, a2 = 0, a3 = 0, a4 = 0;

	memset(c, 0, sizeof(*c));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(c->d, c->nr + 1, c->alloc);
		ALLOC_GROW(c->paths, c->nr + 1, a1);
		ALLOC_GROW(c->scopes, c->nr + 1, a2);
		ALLOC_GROW(c->lines, c->nr + 1, a3);
		ALLOC_GROW(c->ends, c->nr + 1, a4);
		c->paths[c->nr] = xstrdup(col(st, 0));
		c->scopes[c->nr] = sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : xstrdup(col(st, 1));
		c->lines[c->nr] = sqlite3_column_int64(st, 2);
		c->ends[c->nr] = sqlite3_column_int64(st, 3);
		c->nr++;
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < c->nr; i++) {
		c->d[i].path = c->paths[i];
		c->d[i].scope = c->scopes[i];
	}
}

/* Mark the candidates whose files the file path imports. */
static void cands_for_file(struct cands *c, const char *path, sqlite3_stmt *imp)
{
	for (size_t i = 0; i < c->nr; i++) {
		sqlite3_reset(imp);
		sqlite3_bind_text(imp, 1, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(imp, 2, c->paths[i], -1, SQLITE_TRANSIENT);
		c->d[i].imported = sqlite3_step(imp) == SQLITE_ROW;
	}
}

/* One occurrence record of a bound reference. */
static void emit_bound(const char *name, const char *kind, const char *path, long line, long col_,
		       const char *scope, const char *lang, sqlite3_int64 blob, enum bind_how how,
		       const struct cands *c, long def)
{
	char *snip = snippet(blob, line);

	nd_begin(&out, "occurrence");
	nd_str(&out, "name", name);
	nd_str(&out, "type", "reference");
	nd_str(&out, "kind", kind);
	nd_str(&out, "path", path);
	nd_int(&out, "line", line);
	nd_int(&out, "col", col_);
	nd_str(&out, "scope", scope);
	nd_str(&out, "lang", lang);
	nd_str(&out, "snippet", snip);
	nd_str(&out, "confidence", "syntactic");
	nd_str(&out, "binding", bind_how_name(how));
	if (def >= 0) {
		nd_key(&out, "definition");
		buf_addch(&out, '{');
		buf_addstr(&out, "\"path\":");
		nd_json_string(&out, c->paths[def], strlen(c->paths[def]));
		buf_addf(&out, ",\"line\":%ld}", c->lines[def]);
	}
	nd_end(&out);
	flush_out();
	free(snip);
	emitted++;
}

/*
 * callers <name>: the calls that bind (bind_ref()) to a definition of name
 * (Class.method, module.func narrow it as for defs).  callees <name>: the calls
 * inside those definitions, each with the definition it binds to, if any.
 */
static int cmd_calls(const char *q, int callees)
{
	char *scope, *name;
	struct cands c;
	sqlite3_stmt *st, *imp;
	int *target, any = 0, found = 0;

	split_qualified(q, &scope, &name);
	cands_load(&c, name);
	target = xcalloc(c.nr + 1, sizeof(*target));
	for (size_t i = 0; i < c.nr; i++)
		any |= target[i] = qualifier_matches(scope, c.scopes[i], c.paths[i]) && path_ok(c.paths[i]);
	if (!any) {
		error("no definition of '%s' in the index", q);
		goto done;
	}
	imp = prep("SELECT 1 FROM imports WHERE path = ?1 AND resolved = ?2 LIMIT 1");
	if (!callees) {
		st = prep("SELECT r.kind, f.path, r.line, r.col, r.scope, b.lang, b.id FROM refs r "
			  "JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
			  "WHERE r.name = ?1 AND r.kind = 'call' ORDER BY f.path, r.line, r.col");
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
			const char *path = col(st, 1), *sc = col(st, 4);
			enum bind_how how;
			long def;

			cands_for_file(&c, path, imp);
			def = bind_ref(&how, path, sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : sc,
				       receiver_of(sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 2),
						   sqlite3_column_int64(st, 3)), c.d, c.nr);
			if (def < 0 || !target[def])
				continue;	/* a namesake's call, or one that reaches nothing known */
			emit_bound(name, col(st, 0), path, sqlite3_column_int64(st, 2),
				   sqlite3_column_int64(st, 3), sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : sc,
				   col(st, 5), sqlite3_column_int64(st, 6), how, &c, def);
			found++;
		}
		sqlite3_finalize(st);
	} else {
		st = prep("SELECT r.name, r.kind, f.path, r.line, r.col, r.scope, b.lang, b.id FROM refs r "
			  "JOIN files f ON f.blob_id = r.blob_id JOIN blobs b ON b.id = r.blob_id "
			  "WHERE f.path = ?1 AND r.line BETWEEN ?2 AND ?3 AND r.kind = 'call' "
			  "ORDER BY r.line, r.col");
		for (size_t i = 0; i < c.nr && emitted < o.limit; i++) {
			if (!target[i])
				continue;
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, c.paths[i], -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 2, c.lines[i]);
			sqlite3_bind_int64(st, 3, c.ends[i]);
			while (sqlite3_step(st) == SQLITE_ROW && emitted < o.limit) {
				const char *sc = sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : col(st, 5);
				char *callee = xstrdup(col(st, 0));
				struct cands cc;
				enum bind_how how;
				long def;

				cands_load(&cc, callee);
				cands_for_file(&cc, col(st, 2), imp);
				def = bind_ref(&how, col(st, 2), sc,
					       receiver_of(sqlite3_column_int64(st, 7), sqlite3_column_int64(st, 3),
							   sqlite3_column_int64(st, 4)), cc.d, cc.nr);
				emit_bound(callee, col(st, 1), col(st, 2), sqlite3_column_int64(st, 3),
					   sqlite3_column_int64(st, 4), sc, col(st, 6),
					   sqlite3_column_int64(st, 7), how, &cc, def);
				cands_release(&cc);
				free(callee);
				found++;
			}
		}
		sqlite3_finalize(st);
	}
	sqlite3_finalize(imp);
	if (!found)
		error("no %s of '%s' in the index", callees ? "callees" : "callers", q);
done:
	free(target);
	cands_release(&c);
	free(scope);
	free(name);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* ---- the import graph ---- */

struct graph {
	char **names;		/* file paths, sorted */
	size_t n;		/* nodes */
	int **adj;		/* per node: successors, sorted, deduplicated */
	size_t *adj_nr;		/* per node: how many */
	size_t *adj_alloc;	/* per node: allocated */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int node_of(struct graph *g, const char *name)
{
	char **p = bsearch(&name, g->names, g->n, sizeof(*g->names), cmp_str);

	return p ? (int)(p - g->names) : -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * The graph of resolved imports between files of the index (under scope, if
 * given); with type_only, the imports under Python's `if TYPE_CHECKING:` too.
 */
static void load_graph(struct graph *g, const char *scope, int type_only)
{
	sqlite3_stmt *st = prep("SELECT path FROM files ORDER BY path");
	size_t alloc = 0, i, sl = scope ? strlen(scope) : 0;

	memset(g, 0, sizeof(*g));
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(g->names, g->n + 1, alloc);
		g->names[g->n++] = xstrdup(col(st, 0));
	}
	sqlite3_finalize(st);
	g->adj = xcalloc(g->n + 1, sizeof(*g->adj));
	g->adj_nr = xcalloc(g->n + 1, sizeof(*g->adj_nr));
	g->adj_alloc = xcalloc(g->n + 1, sizeof(*g->adj_alloc));
	st = prep(type_only ? "SELECT path, resolved FROM imports WHERE resolved IS NOT NULL"
		  : "SELECT path, resolved FROM imports WHERE resolved IS NOT NULL AND NOT type_only");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *a = col(st, 0), *b = col(st, 1);
		int x, y;

		if (scope && *scope && (strncmp(a, scope, sl) || strncmp(b, scope, sl) ||
					(scope[sl - 1] != '/' && ((a[sl] && a[sl] != '/') || (b[sl] && b[sl] != '/')))))
			continue;
		x = node_of(g, a);
		y = node_of(g, b);
		if (x < 0 || y < 0)
			continue;
		ALLOC_GROW(g->adj[x], g->adj_nr[x] + 1, g->adj_alloc[x]);
		g->adj[x][g->adj_nr[x]++] = y;
	}
	sqlite3_finalize(st);
	for (i = 0; i < g->n; i++) {
		size_t j, k = 0;
		if (!g->adj_nr[i])
			continue;
		qsort(g->adj[i], g->adj_nr[i], sizeof(int), cmp_int);
		for (j = 0; j < g->adj_nr[i]; j++)
			if (!k || g->adj[i][k - 1] != g->adj[i][j])
				g->adj[i][k++] = g->adj[i][j];
		g->adj_nr[i] = k;
	}
}

static void free_graph(struct graph *g)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		free(g->names[i]);
		free(g->adj[i]);
	}
	free(g->names);
	free(g->adj);
	free(g->adj_nr);
	free(g->adj_alloc);
}

/* A shortest cycle through start inside the component comp (BFS), as a path. */
static size_t cycle_path(struct graph *g, const int *comp, int start, int *path)
{
	int *prev = xmalloc(g->n * sizeof(int)), *queue = xmalloc(g->n * sizeof(int));
	size_t qh = 0, qt = 0, len = 0, i;
	int found = -1;

	for (i = 0; i < g->n; i++)
		prev[i] = -2;
	queue[qt++] = start;
	prev[start] = -1;
	while (qh < qt && found < 0) {
		int v = queue[qh++];
		for (i = 0; i < g->adj_nr[v]; i++) {
			int w = g->adj[v][i];
			if (comp[w] != comp[start])
				continue;
			if (w == start) {
				found = v;
				break;
			}
			if (prev[w] == -2) {
				prev[w] = v;
				queue[qt++] = w;
			}
		}
	}
	if (found >= 0) {
		int *tmp = xmalloc((g->n + 1) * sizeof(int)), n = 0;
		for (int v = found; v >= 0 && (size_t)n < g->n; v = prev[v])
			tmp[n++] = v;
		while (n)
			path[len++] = tmp[--n];
		path[len++] = start;
		free(tmp);
	}
	free(prev);
	free(queue);
	return len;
}

static int cmd_cycles(void)
{
	struct graph g;
	int *index_of, *low, *stack, *comp, *it;
	char *on;
	size_t sp = 0, i, ncomp = 0, found = 0;
	int counter = 0;
	int *cs, *path;

	load_graph(&g, o.scope, o.type_imports);
	index_of = xmalloc((g.n + 1) * sizeof(int));
	low = xmalloc((g.n + 1) * sizeof(int));
	stack = xmalloc((g.n + 1) * sizeof(int));
	comp = xmalloc((g.n + 1) * sizeof(int));
	it = xmalloc((g.n + 1) * sizeof(int));
	on = xcalloc(g.n + 1, 1);
	cs = xmalloc((g.n + 1) * sizeof(int));
	path = xmalloc((g.n + 2) * sizeof(int));
	for (i = 0; i < g.n; i++)
		index_of[i] = -1, comp[i] = -1;
	/* Tarjan's algorithm, iterative (import chains can be long) */
	for (size_t r = 0; r < g.n; r++) {
		size_t csp = 0;
		if (index_of[r] >= 0)
			continue;
		cs[csp++] = (int)r;
		index_of[r] = low[r] = counter++;
		it[r] = 0;
		stack[sp++] = (int)r;
		on[r] = 1;
		while (csp) {
			int v = cs[csp - 1];
			if ((size_t)it[v] < g.adj_nr[v]) {
				int w = g.adj[v][it[v]++];
				if (index_of[w] < 0) {
					index_of[w] = low[w] = counter++;
					it[w] = 0;
					stack[sp++] = w;
					on[w] = 1;
					cs[csp++] = w;
				} else if (on[w] && index_of[w] < low[v]) {
					low[v] = index_of[w];
				}
				continue;
			}
			csp--;
			if (csp && low[v] < low[cs[csp - 1]])
				low[cs[csp - 1]] = low[v];
			if (low[v] == index_of[v]) {
				int w;
				do {
					w = stack[--sp];
					on[w] = 0;
					comp[w] = (int)ncomp;
				} while (w != v);
				ncomp++;
			}
		}
	}
	/* report components with a cycle, in order of their first file */
	{
		char *done = xcalloc(ncomp + 1, 1);
		for (i = 0; i < g.n && emitted < o.limit; i++) {
			size_t members = 0, j, len;
			int self = 0;
			if (done[comp[i]])
				continue;
			done[comp[i]] = 1;
			for (j = i; j < g.n; j++)
				members += comp[j] == comp[i];
			for (j = 0; j < g.adj_nr[i]; j++)
				self |= g.adj[i][j] == (int)i;
			if (members < 2 && !self)
				continue;
			nd_begin(&out, "cycle");
			nd_int(&out, "size", (long long)members);
			nd_key(&out, "files");
			buf_addch(&out, '[');
			for (j = i, members = 0; j < g.n; j++) {
				if (comp[j] != comp[i])
					continue;
				if (members++)
					buf_addch(&out, ',');
				nd_json_string(&out, g.names[j], strlen(g.names[j]));
			}
			buf_addch(&out, ']');
			len = cycle_path(&g, comp, (int)i, path);
			nd_key(&out, "path");
			buf_addch(&out, '[');
			for (j = 0; j < len; j++) {
				if (j)
					buf_addch(&out, ',');
				nd_json_string(&out, g.names[path[j]], strlen(g.names[path[j]]));
			}
			buf_addch(&out, ']');
			nd_end(&out);
			flush_out();
			emitted++;
			found++;
		}
		free(done);
	}
	if (!found)
		fprintf(stderr, "%s: no import cycles among %zu files\n", progname, g.n);
	free(index_of);
	free(low);
	free(stack);
	free(comp);
	free(it);
	free(on);
	free(cs);
	free(path);
	free_graph(&g);
	return found ? EXIT_OK : EXIT_NOTHING;
}

/* ---- impact ---- */

struct hit {
	double imp, ref, cpl, sem;	/* signals, 0-1 */
	int depth;		/* import distance, 0 if none */
	long refs;		/* references counted */
	long co_changes;	/* from coupling */
};

/*
 * The semantic signal: how much closer each file's mean chunk vector is to the
 * target file's than files' are on average, (cos - mean) / (3 sd), in 0-1.
 * Returns the number of files with vectors, 0 when the index has none.
 */
static size_t semantic_signal(struct graph *g, int target, struct hit *h)
{
	sqlite3_stmt *st = prep("SELECT f.path, v.dim, v.fmt, v.scale, v.vec FROM vectors v "
				"JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.blob_id = c.blob_id "
				"ORDER BY f.path, c.id");
	float *sum = NULL, *v = NULL;
	double *cosv, mean = 0, var = 0, tn = 0;
	size_t dim = 0, i, k, nfiles = 0;
	char *have = xcalloc(g->n, 1);

	while (sqlite3_step(st) == SQLITE_ROW) {
		int node = node_of(g, col(st, 0));
		double n = 0;
		if (!dim) {
			dim = (size_t)sqlite3_column_int64(st, 1);
			if (!dim || dim > 65536)
				break;
			sum = xcalloc(g->n * dim, sizeof(float));
			v = xmalloc(dim * sizeof(float));
		}
		if (node < 0 || index_vec_decode(v, dim, st, 2) < 0)
			continue;
		for (k = 0; k < dim; k++)
			n += (double)v[k] * v[k];
		if (n <= 0)
			continue;
		n = 1 / sqrt(n);
		for (k = 0; k < dim; k++)
			sum[(size_t)node * dim + k] += (float)(v[k] * n);
		have[node] = 1;
	}
	sqlite3_finalize(st);
	if (!dim || !sum || !have[target]) {
		free(sum);
		free(v);
		free(have);
		return 0;
	}
	cosv = xcalloc(g->n, sizeof(double));
	for (k = 0; k < dim; k++)
		tn += (double)sum[(size_t)target * dim + k] * sum[(size_t)target * dim + k];
	for (i = 0; i < g->n; i++) {
		double dot = 0, n = 0;
		if (!have[i] || (int)i == target)
			continue;
		for (k = 0; k < dim; k++) {
			dot += (double)sum[i * dim + k] * sum[(size_t)target * dim + k];
			n += (double)sum[i * dim + k] * sum[i * dim + k];
		}
		cosv[i] = n > 0 && tn > 0 ? dot / sqrt(n * tn) : 0;
		mean += cosv[i];
		nfiles++;
	}
	if (nfiles) {
		mean /= (double)nfiles;
		for (i = 0; i < g->n; i++)
			if (have[i] && (int)i != target)
				var += (cosv[i] - mean) * (cosv[i] - mean);
		var /= (double)nfiles;
		for (i = 0; i < g->n; i++) {
			double z;
			if (!have[i] || (int)i == target)
				continue;
			/* one file alone, or all alike: the cosine itself decides */
			z = var > 1e-12 ? (cosv[i] - mean) / (3 * sqrt(var)) : cosv[i] - 0.5;
			h[i].sem = z < 0 ? 0 : z > 1 ? 1 : z;
		}
	}
	free(cosv);
	free(sum);
	free(v);
	free(have);
	return nfiles + 1;
}

static int cmd_impact(const char *arg)
{
	char *copy = xstrdup(arg), *colon = strrchr(copy, ':'), *sym = NULL, *path;
	struct graph g;
	struct hit *h;
	int *dist, *queue, start, no_vectors = 0;
	size_t qh = 0, qt = 0, i, found = 0;
	sqlite3_stmt *st;
	int **radj;
	size_t *radj_nr, *radj_alloc;

	if (colon && colon != copy && colon[1] && !strchr(colon + 1, '/')) {
		*colon = '\0';
		sym = colon + 1;
	}
	path = file_arg(copy);
	load_graph(&g, NULL, 1);
	start = node_of(&g, path);
	if (start < 0) {
		error("'%s' is not in the index (run 'ci-index update'?)", path);
		free_graph(&g);
		free(path);
		free(copy);
		return EXIT_NOTHING;
	}
	if (sym) {
		/* a symbol the file does not define: say so, not the file's own list */
		int defined;
		st = prep("SELECT 1 FROM defs d JOIN files f ON f.blob_id = d.blob_id "
			  "WHERE f.path = ?1 AND d.name = ?2 LIMIT 1");
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, sym, -1, SQLITE_STATIC);
		defined = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (!defined) {
			error("no definition of '%s' in '%s'", sym, path);
			free_graph(&g);
			free(path);
			free(copy);
			return EXIT_NOTHING;
		}
	}
	h = xcalloc(g.n, sizeof(*h));
	/* reverse imports, breadth first to --depth */
	radj = xcalloc(g.n, sizeof(*radj));
	radj_nr = xcalloc(g.n, sizeof(*radj_nr));
	radj_alloc = xcalloc(g.n, sizeof(*radj_alloc));
	for (i = 0; i < g.n; i++)
		for (size_t j = 0; j < g.adj_nr[i]; j++) {
			int w = g.adj[i][j];
			ALLOC_GROW(radj[w], radj_nr[w] + 1, radj_alloc[w]);
			radj[w][radj_nr[w]++] = (int)i;
		}
	dist = xmalloc(g.n * sizeof(int));
	queue = xmalloc(g.n * sizeof(int));
	for (i = 0; i < g.n; i++)
		dist[i] = -1;
	dist[start] = 0;
	queue[qt++] = start;
	while (qh < qt) {
		int v = queue[qh++];
		if (dist[v] >= o.depth)
			continue;
		for (i = 0; i < radj_nr[v]; i++) {
			int w = radj[v][i];
			if (dist[w] >= 0)
				continue;
			dist[w] = dist[v] + 1;
			h[w].depth = dist[w];
			h[w].imp = 1.0 / dist[w];
			queue[qt++] = w;
		}
	}
	/*
	 * references to the symbol, or to every symbol the file defines.  A
	 * reference to the symbol counts where it can reach this definition: its
	 * file imports the file (or, in C and C++, a file declaring the name, a
	 * header), or no other file defines the name.  A namesake's callers are
	 * not the symbol's.
	 */
	if (sym)
		st = prep("SELECT f.path, count(*) FROM refs r JOIN files f ON f.blob_id = r.blob_id "
			  "WHERE r.name = ?2 AND f.path != ?1 AND ("
			  " NOT EXISTS (SELECT 1 FROM defs d JOIN files g ON g.blob_id = d.blob_id "
			  "  WHERE d.name = ?2 AND g.path != ?1)"
			  " OR EXISTS (SELECT 1 FROM imports i WHERE i.path = f.path AND i.resolved = ?1)"
			  " OR ((SELECT b.lang FROM files h JOIN blobs b ON b.id = h.blob_id WHERE h.path = ?1)"
			  "  IN ('c', 'cpp') AND EXISTS (SELECT 1 FROM imports i JOIN files g ON g.path = i.resolved "
			  "  JOIN defs d ON d.blob_id = g.blob_id WHERE i.path = f.path AND d.name = ?2))"
			  ") GROUP BY f.path");
	else
		st = prep("SELECT f.path, count(*) FROM refs r JOIN files f ON f.blob_id = r.blob_id "
			  "WHERE f.path != ?1 AND r.name IN (SELECT d.name FROM defs d JOIN files g "
			  "ON g.blob_id = d.blob_id WHERE g.path = ?1 AND length(d.name) > 2) GROUP BY f.path");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sym)
		sqlite3_bind_text(st, 2, sym, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int v = node_of(&g, col(st, 0));
		if (v < 0)
			continue;
		h[v].refs = sqlite3_column_int64(st, 1);
		h[v].ref = 1.0 - 1.0 / (1.0 + (double)h[v].refs / 2.0);
	}
	sqlite3_finalize(st);
	/* co-change coupling, when ci-couple's records are in the index */
	st = prep("SELECT CASE WHEN a = ?1 THEN b ELSE a END, score, co_changes FROM coupling "
		  "WHERE a = ?1 OR b = ?1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int v = node_of(&g, col(st, 0));
		if (v < 0)
			continue;
		h[v].cpl = sqlite3_column_double(st, 1);
		h[v].co_changes = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if ((o.mode & M_SEMANTIC) && !semantic_signal(&g, start, h) && o.mode == M_SEMANTIC) {
		error("impact --mode semantic needs chunk vectors of '%s' in the index: "
		      "run 'ci-index --embed update'", path);
		no_vectors = 1;
	}
	/* the signals not asked for count for nothing */
	for (i = 0; i < g.n; i++) {
		if (!(o.mode & M_DEPS))
			h[i].imp = h[i].ref = 0, h[i].depth = 0, h[i].refs = 0;
		if (!(o.mode & M_COUPLING))
			h[i].cpl = 0, h[i].co_changes = 0;
	}
	/* combined: the chance that at least one signal is right, signals taken apart */
	if (!no_vectors) {
		struct { int v; double s; } *r = xmalloc(g.n * sizeof(*r));
		size_t nr = 0;
		for (i = 0; i < g.n; i++) {
			double s;
			if ((int)i == start || (!h[i].imp && !h[i].ref && !h[i].cpl && !h[i].sem))
				continue;
			/* one signal asked for: its value; else the chance one of them is right */
			if (o.mode == M_SEMANTIC)
				s = h[i].sem;
			else if (o.mode == M_COUPLING)
				s = h[i].cpl;
			else
				s = 1.0 - (1.0 - 0.9 * h[i].imp) * (1.0 - 0.8 * h[i].ref) * (1.0 - 0.7 * h[i].cpl) *
					(1.0 - 0.6 * h[i].sem);
			r[nr].v = (int)i;
			r[nr].s = s;
			nr++;
		}
		/*
		 * by score, then path (insertion sort keeps it simple for a few
		 * hundred); for a symbol, the files that reference it first: an
		 * importer that never uses it never outranks one that does
		 */
		for (i = 1; i < nr; i++) {
			size_t j = i;
			while (j && ((sym && !h[r[j - 1].v].refs && h[r[j].v].refs) ||
				     (!(sym && !h[r[j].v].refs != !h[r[j - 1].v].refs) &&
				      (r[j - 1].s < r[j].s ||
				       (r[j - 1].s == r[j].s &&
					strcmp(g.names[r[j - 1].v], g.names[r[j].v]) > 0))))) {
				__typeof__(*r) t = r[j];
				r[j] = r[j - 1];
				r[j - 1] = t;
				j--;
			}
		}
		for (i = 0; i < nr && emitted < o.limit; i++) {
			struct hit *x = &h[r[i].v];
			if (!path_ok(g.names[r[i].v]))
				continue;
			nd_begin(&out, "impact");
			nd_str(&out, "path", g.names[r[i].v]);
			nd_num(&out, "score", (double)(long)(r[i].s * 1000 + 0.5) / 1000);
			nd_key(&out, "signals");
			buf_addch(&out, '{');
			buf_addf(&out, "\"import\":%.3g,\"reference\":%.3g,\"coupling\":%.3g,\"semantic\":%.3g",
				 x->imp, x->ref, x->cpl, round(x->sem * 1000) / 1000);
			buf_addch(&out, '}');
			if (x->depth)
				nd_int(&out, "depth", x->depth);
			if (x->refs)
				nd_int(&out, "references", x->refs);
			if (x->co_changes)
				nd_int(&out, "co_changes", x->co_changes);
			nd_str(&out, "confidence", "syntactic");
			nd_end(&out);
			flush_out();
			emitted++;
			found++;
		}
		free(r);
	}
	if (!found && !no_vectors)
		error("nothing in the index depends on '%s%s%s'", path, sym ? ":" : "", sym ? sym : "");
	for (i = 0; i < g.n; i++)
		free(radj[i]);
	free(radj);
	free(radj_nr);
	free(radj_alloc);
	free(dist);
	free(queue);
	free(h);
	free_graph(&g);
	free(path);
	free(copy);
	return no_vectors ? EXIT_USAGE : found ? EXIT_OK : EXIT_NOTHING;
}

/* The formatter of records for people, when one runs (human.h). */
static pid_t human_pid;

static void human_at_exit(void)
{
	human_finish(human_pid);
}

int main(int argc, char **argv)
{
	int json = 0;
	const char *cmd, *arg = NULL;
	char *path;
	int c, rc, ret;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	opterr = 0;
	o.limit = 100;
	if (fleet_wanted(argc, argv))	/* a shard set: libcommon/fleet */
		return close_stdout(fleet_main(FLEET_REFS, main, argc, argv));
	o.depth = 2;
	o.mode = M_ALL;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_INDEX: o.index = optarg; break;
		case OPT_KIND: o.kind = optarg; break;
		case OPT_PATH: o.path = optarg; break;
		case OPT_LANG: o.lang = optarg; break;
		case OPT_LIMIT: o.limit = parse_long_arg(usage_text, "--limit", optarg, 1, 10000); break;
		case OPT_REVERSE: o.reverse = 1; break;
		case OPT_BOTH: o.both = 1; break;
		case OPT_SCOPE: o.scope = optarg; break;
		case OPT_TYPE_IMPORTS: o.type_imports = 1; break;
		case OPT_DEPTH: o.depth = parse_long_arg(usage_text, "--depth", optarg, 0, 3); break;
		case OPT_JSON: json = 1; break;
		case OPT_MODE:
			if (!strcmp(optarg, "combined"))
				o.mode = M_ALL;
			else if (!strcmp(optarg, "deps"))
				o.mode = M_DEPS;
			else if (!strcmp(optarg, "coupling"))
				o.mode = M_COUPLING;
			else if (!strcmp(optarg, "semantic"))
				o.mode = M_SEMANTIC;
			else
				usage_error(usage_text, "--mode must be combined, deps, coupling or semantic, not '%s'",
					    optarg);
			break;
		case OPT_VERSION:
			return print_version("ci-refs");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind >= argc)
		usage_error(usage_text, "no command given");
	cmd = argv[optind++];
	if (!strcmp(cmd, "cycles")) {
		if (optind < argc)
			usage_error(usage_text, "cycles takes no argument (use --scope)");
	} else if (!strcmp(cmd, "defs") || !strcmp(cmd, "refs") || !strcmp(cmd, "occurrences") ||
		   !strcmp(cmd, "symbols") || !strcmp(cmd, "search") || !strcmp(cmd, "deps") ||
		   !strcmp(cmd, "impact") || !strcmp(cmd, "callers") || !strcmp(cmd, "callees")) {
		if (optind + 1 != argc)
			usage_error(usage_text, "%s takes one argument", cmd);
		arg = argv[optind];
		if (!*arg)
			usage_error(usage_text, "%s: the argument is empty", cmd);
	} else {
		usage_error(usage_text, "unknown command '%s'", cmd);
	}
	if (o.kind && !*o.kind)
		usage_error(usage_text, "--kind: empty");
	if (human_wanted(json) && (human_pid = human_start()) > 0)
		atexit(human_at_exit);

	if (o.index) {
		path = xstrdup(o.index);
	} else {
		struct walker w;
		struct walk_opts wo = WALK_OPTS_INIT;
		if (walker_open(&w, ".", &wo) < 0)
			return EXIT_IO;
		path = index_default_path(w.root);
		walker_close(&w);
	}
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc) {
		if (rc > 0)
			error("no index at '%s': run 'ci-index build' first", path);
		free(path);
		return EXIT_IO;
	}
	free(path);
	db = index_db(ix);

	if (!strcmp(cmd, "defs"))
		ret = cmd_occurrences(arg, 1, 0, 0);
	else if (!strcmp(cmd, "refs"))
		ret = cmd_occurrences(arg, 0, 1, 0);
	else if (!strcmp(cmd, "occurrences"))
		ret = cmd_occurrences(arg, 1, 1, 1);
	else if (!strcmp(cmd, "symbols"))
		ret = cmd_symbols(arg);
	else if (!strcmp(cmd, "search"))
		ret = cmd_search(arg);
	else if (!strcmp(cmd, "deps"))
		ret = cmd_deps(arg);
	else if (!strcmp(cmd, "impact"))
		ret = cmd_impact(arg);
	else if (!strcmp(cmd, "callers") || !strcmp(cmd, "callees"))
		ret = cmd_calls(arg, !strcmp(cmd, "callees"));
	else
		ret = cmd_cycles();
	flush_out();
	buf_release(&out);
	index_close(ix);
	return close_stdout(ret);
}
