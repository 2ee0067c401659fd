/*
 * ci-rank: hybrid ranked search over the index: which chunks, and so which files,
 * answer a question.
 *
 * Shaped by two kinds of query: an agent's short one ("where is the retry
 * backoff computed", "parseHeader") and a whole issue text pasted in (a bug
 * report with a traceback, thousands of characters).  Each signal ranks the
 * candidates on its own and the rankings are fused by weighted reciprocal rank
 * (k = 60), with weights chosen by the query's intent:
 *
 *   keyword    BM25 (FTS5, ci's code tokenizer) over chunk name, scope, signature
 *              and text; identifiers and code spans of the query count more
 *   symbol     query identifiers that name a definition (the definition first)
 *   path       query terms and traceback frames that name the file's path
 *   structure  personalised PageRank over the import graph, seeded by the files
 *              of the best keyword hits (a file many of them import matters)
 *   change     recency and churn from ci-couple's commit records, when loaded
 *   semantic   cosine between the query's vector (ci-embed --query) and chunk
 *              vectors, when the index holds vectors
 *
 * A signal that is missing (no vectors, no history) has its weight given to the
 * others, and the answer says which signals it used and how sure it is.
 */
#include "common.h"
#include "index.h"
#include "walk.h"
#include "vec.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <time.h>
#include <sys/wait.h>

static const char usage_text[] =
	"usage: ci-rank [options] [context] <query>\n"
	"\n"
	"Hybrid ranked search: write hit records, best first, and a summary record.\n"
	"With `context`, a bundle: the best chunks and the files that change with them,\n"
	"within a budget of lines.\n"
	"\n"
	"      --index <db>        the index (default: $CI_INDEX, or <root>/.ci-index/index.db)\n"
	"      --mode <mode>       hybrid (default), keyword or semantic\n"
	"      --type <kind>       only chunks of this kind (function, class, method, ...)\n"
	"      --lang <lang>       only files in this language\n"
	"      --path <prefix>     only files under this path\n"
	"      --scope <scope>     impl, test or all (default: impl, unless the query is\n"
	"                          about tests)\n"
	"      --limit <n>         at most <n> hits (1-200; default 10)\n"
	"      --per-file <n>      at most <n> hits per file (default 1)\n"
	"      --min-score <x>     drop hits scoring below <x> (0-1)\n"
	"      --format <fmt>      locate (default: path, lines, symbol, score) or full (with text)\n"
	"      --explain           each hit's signals, ranks and their contributions\n"
	"      --budget <lines>    context: at most this many lines in all (10-100000; default 300)\n"
	"      --depth <n>         context: follow co-change coupling <n> steps (0-2; default 1)\n"
	"      --max-coupled <n>   context: at most <n> coupled files per hit (0-20; default 3)\n"
	"      --threshold <x>     context: coupling scores below <x> are ignored (0-1; default 0.3)\n"
	"  -h, --help              show this help and exit\n";

enum { OPT_INDEX = 256, OPT_MODE, OPT_TYPE, OPT_LANG, OPT_PATH, OPT_SCOPE, OPT_LIMIT,
	OPT_PER_FILE, OPT_MIN_SCORE, OPT_FORMAT, OPT_EXPLAIN, OPT_BUDGET, OPT_DEPTH, OPT_MAX_COUPLED,
	OPT_THRESHOLD };

static const struct option long_options[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "per-file", required_argument, NULL, OPT_PER_FILE },
	{ "min-score", required_argument, NULL, OPT_MIN_SCORE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "max-coupled", required_argument, NULL, OPT_MAX_COUPLED },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

enum sig { S_KEYWORD, S_SYMBOL, S_PATH, S_STRUCTURE, S_CHANGE, S_SEMANTIC, S_MAX };
static const char *const sig_name[S_MAX] = {
	"keyword", "symbol", "path", "structure", "change", "semantic"
};

struct options {
	const char *index;	/* --index */
	const char *mode;	/* hybrid, keyword, semantic */
	const char *type;	/* --type */
	const char *lang;	/* --lang */
	const char *path;	/* --path */
	const char *scope;	/* impl, test, all, or NULL for automatic */
	long limit;		/* --limit */
	long per_file;		/* --per-file */
	double min_score;	/* --min-score */
	int full;		/* --format full */
	int explain;		/* --explain */
	int context;		/* the context command */
	long budget;		/* --budget lines */
	long depth;		/* --depth */
	long max_coupled;	/* --max-coupled */
	double threshold;	/* --threshold */
};

/* A query term. */
struct term {
	char *text;		/* lower case, as the tokenizer indexes it */
	char *orig;		/* as written (for symbol matching) */
	double weight;		/* code-looking terms count more */
	long df;		/* chunks containing it */
	int code;		/* looks like an identifier (camelCase, snake_case, dotted, `quoted`) */
};

struct cand {
	sqlite3_int64 chunk;	/* chunks.id */
	sqlite3_int64 blob;	/* blobs.id */
	char *path;		/* file */
	long start, end;	/* lines */
	char *kind, *name, *scope, *lang;	/* chunk metadata */
	double sig[S_MAX];	/* raw signal values, 0-1 */
	int rank[S_MAX];	/* 1-based rank per signal, 0 if unranked */
	double fused;		/* fused score */
	int is_test;		/* under a test directory or named like a test */
	int is_doc;		/* documentation, changelog, prose */
};

static struct options o;
static sqlite3 *db;
static struct term *terms;
static size_t terms_nr, terms_alloc;
static struct cand *cands;
static size_t cands_nr, cands_alloc;
static char **frame_paths;	/* files named by traceback frames */
static size_t frame_nr, frame_alloc;

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

static int strcmp_ptr(const char *const *a, const char *const *b)
{
	return strcmp(*a, *b);
}

/* ---- the query ---- */

static const char *const stopwords[] = {
	"a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are",
	"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
	"by", "can", "cannot", "could", "did", "do", "does", "doing", "don", "down", "during",
	"each", "else", "even", "ever", "every", "few", "for", "from", "further", "get", "gets",
	"got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
	"however", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "let",
	"like", "me", "might", "more", "most", "much", "must", "my", "no", "nor", "not", "now",
	"of", "off", "on", "once", "one", "only", "or", "other", "our", "out", "over", "own",
	"please", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
	"them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
	"under", "until", "up", "us", "use", "used", "using", "very", "via", "want", "was", "we",
	"were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
	"would", "you", "your", "yes", "thanks", "hi", "hello", "way", "thing", "things", "seems",
	"work", "works", "working", "expected", "actual", "example", "issue", "problem", "bug",
	"currently", "still", "new", "make", "makes", "see", "think", "know", "need", "try",
	"tried", "case", "cases", "instead", "possible", "something", "anything", "because",
	"www", "http", "https", "com", "org", "github", "py", "line", "file", "self", "return",
	"true", "false", "none", "null", "def", "class", "import", "from", "lib", "python",
	"site", "packages", "usr", "local", "traceback", "recent", "call", "last", "error",
};

static int is_stopword(const char *w)
{
	size_t lo = 0, hi = ARRAY_SIZE(stopwords);

	/* small list: linear is fine and needs no sorting discipline */
	(void)lo;
	(void)hi;
	for (size_t i = 0; i < ARRAY_SIZE(stopwords); i++)
		if (!strcmp(stopwords[i], w))
			return 1;
	return 0;
}

static void add_term(const char *w, size_t n, int code)
{
	char low[65];
	size_t i;

	if (n < 2 || n > 64)
		return;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)w[i]);
	low[n] = '\0';
	if (!code && is_stopword(low))
		return;
	if (isdigit((unsigned char)low[0]))
		return;
	for (i = 0; i < terms_nr; i++) {
		if (!strcmp(terms[i].text, low)) {
			terms[i].weight += code ? 1.0 : 0.25;
			terms[i].code |= code;
			return;
		}
	}
	ALLOC_GROW(terms, terms_nr + 1, terms_alloc);
	terms[terms_nr].text = xstrdup(low);
	terms[terms_nr].orig = xstrndup(w, n);
	terms[terms_nr].weight = code ? 2.0 : 1.0;
	terms[terms_nr].df = 0;
	terms[terms_nr].code = code;
	terms_nr++;
}

/* Does w look like code: camelCase, snake_case, has digits after letters? */
static int looks_like_code(const char *w, size_t n)
{
	size_t i;
	int lower = 0, upper_after_lower = 0, underscore = 0;

	for (i = 0; i < n; i++) {
		if (w[i] == '_' && i && i + 1 < n)
			underscore = 1;
		if (islower((unsigned char)w[i]))
			lower = 1;
		else if (isupper((unsigned char)w[i]) && lower)
			upper_after_lower = 1;
	}
	return underscore || upper_after_lower;
}

/* "File "/x/y/src/pkg/mod.py", line 12, in func": remember the path. */
static void scan_frames(const char *q)
{
	const char *p = q;

	while ((p = strstr(p, "File \""))) {
		const char *s = p + 6, *e = strchr(s, '"');
		if (!e)
			break;
		if (e - s < 512) {
			ALLOC_GROW(frame_paths, frame_nr + 1, frame_alloc);
			frame_paths[frame_nr++] = xstrndup(s, (size_t)(e - s));
		}
		p = e;
	}
}

static void parse_query(const char *q)
{
	const char *p = q;
	int in_code = 0;

	scan_frames(q);
	while (*p) {
		if (*p == '`') {
			in_code = !in_code;
			p++;
			continue;
		}
		if (isalpha((unsigned char)*p) || *p == '_') {
			const char *s = p;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			/* dotted names: "Session.resolve_redirects", "os.path.join" */
			int dotted = *p == '.' && (isalpha((unsigned char)p[1]) || p[1] == '_');
			int code = in_code || dotted || looks_like_code(s, (size_t)(p - s)) ||
				   (s > q && s[-1] == '.' && isalpha((unsigned char)s[-2]));
			add_term(s, (size_t)(p - s), code);
			/* also the parts of a snake_case or camelCase identifier */
			if (looks_like_code(s, (size_t)(p - s))) {
				const char *a = s;
				for (const char *b = s; b <= p; b++) {
					int cut = b == p || *b == '_' ||
						  (b > a && isupper((unsigned char)*b) && islower((unsigned char)b[-1]));
					if (!cut)
						continue;
					if (b - a >= 3)
						add_term(a, (size_t)(b - a), 0);
					a = *b == '_' ? b + 1 : b;
				}
			}
			continue;
		}
		p++;
	}
}

/* Keep the most telling terms of a long query: by weight x idf. */
static void weigh_terms(long total_chunks)
{
	sqlite3_stmt *st;
	size_t i, j;

	if (sqlite3_exec(db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab USING fts5vocab(main, chunks_fts, row)",
			 NULL, NULL, NULL) != SQLITE_OK)
		die("index: %s", sqlite3_errmsg(db));
	st = prep("SELECT doc FROM temp.ci_vocab WHERE term = ?1");
	for (i = 0; i < terms_nr; i++) {
		sqlite3_bind_text(st, 1, terms[i].text, -1, SQLITE_STATIC);
		terms[i].df = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	/* drop terms the index does not hold; order by weight x idf */
	for (i = j = 0; i < terms_nr; i++) {
		if (!terms[i].df) {
			free(terms[i].text);
			free(terms[i].orig);
			continue;
		}
		terms[j++] = terms[i];
	}
	terms_nr = j;
	for (i = 0; i < terms_nr; i++) {
		double idf = log(1.0 + (double)(total_chunks - terms[i].df + 0.5) / (terms[i].df + 0.5));
		terms[i].weight *= idf;
	}
	for (i = 1; i < terms_nr; i++)
		for (j = i; j && terms[j - 1].weight < terms[j].weight; j--) {
			struct term t = terms[j];
			terms[j] = terms[j - 1];
			terms[j - 1] = t;
		}
	if (terms_nr > 32) {
		for (i = 32; i < terms_nr; i++) {
			free(terms[i].text);
			free(terms[i].orig);
		}
		terms_nr = 32;
	}
}

/* ---- candidates ---- */

static int is_test_path(const char *p)
{
	const char *base = strrchr(p, '/');

	base = base ? base + 1 : p;
	return !strncmp(p, "test/", 5) || !strncmp(p, "tests/", 6) || strstr(p, "/test/") ||
	       strstr(p, "/tests/") || strstr(p, "/testing/") || !strncmp(p, "testing/", 8) ||
	       !strncmp(base, "test_", 5) || strstr(base, "_test.") || strstr(base, ".test.") ||
	       strstr(base, ".spec.") || strstr(base, "Test.java") || !strcmp(base, "conftest.py");
}

/* Prose rather than code: documentation is not what "impl" scope looks for. */
static int is_doc_file(const char *p, const char *lang)
{
	const char *base = strrchr(p, '/');

	base = base ? base + 1 : p;
	if (!lang || !strcmp(lang, "markdown") || !strcmp(lang, "rst") || !strcmp(lang, "text"))
		return 1;
	/* configuration formats count as documents too, unless the query is about config */
	if (!strcmp(lang, "ini") || !strcmp(lang, "yaml") || !strcmp(lang, "toml") ||
	    !strcmp(lang, "json") || !strcmp(lang, "xml"))
		return 2;
	(void)base;
	return !strncmp(p, "doc/", 4) || !strncmp(p, "docs/", 5) || strstr(p, "/docs/");
}

static int path_ok(const char *path)
{
	size_t l;

	if (!o.path || !*o.path)
		return 1;
	l = strlen(o.path);
	return !strncmp(path, o.path, l) && (!path[l] || path[l] == '/' || o.path[l - 1] == '/');
}

static struct cand *find_cand(sqlite3_int64 chunk)
{
	for (size_t i = 0; i < cands_nr; i++)
		if (cands[i].chunk == chunk)
			return &cands[i];
	return NULL;
}

static struct cand *add_cand(sqlite3_stmt *st, int base)
{
	/* columns from base: chunk id, blob id, path, start, end, kind, name, scope, lang */
	sqlite3_int64 id = sqlite3_column_int64(st, base);
	struct cand *c = find_cand(id);
	const char *path = col(st, base + 2), *lang = col(st, base + 8), *kind = col(st, base + 5);

	if (c)
		return c;
	if (!path_ok(path) || (o.lang && (!lang || strcmp(lang, o.lang))) ||
	    (o.type && (!kind || strcmp(kind, o.type))))
		return NULL;
	ALLOC_GROW(cands, cands_nr + 1, cands_alloc);
	c = &cands[cands_nr++];
	memset(c, 0, sizeof(*c));
	c->chunk = id;
	c->blob = sqlite3_column_int64(st, base + 1);
	c->path = xstrdup(path);
	c->start = sqlite3_column_int64(st, base + 3);
	c->end = sqlite3_column_int64(st, base + 4);
	c->kind = xstrdup(kind ? kind : "");
	c->name = col(st, base + 6) ? xstrdup(col(st, base + 6)) : NULL;
	c->scope = col(st, base + 7) ? xstrdup(col(st, base + 7)) : NULL;
	c->lang = lang ? xstrdup(lang) : NULL;
	c->is_test = is_test_path(path);
	c->is_doc = is_doc_file(path, lang);
	return c;
}

static int cmp_sig;
static int cmp_by_sig(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;

	if (x->sig[cmp_sig] != y->sig[cmp_sig])
		return x->sig[cmp_sig] > y->sig[cmp_sig] ? -1 : 1;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

#define CHUNK_COLS "c.id, c.blob_id, f.path, c.start_line, c.end_line, c.kind, c.name, c.scope, b.lang"

static void signal_keyword(void)
{
	struct buf q = BUF_INIT;
	sqlite3_stmt *st;
	size_t i;
	int k;

	for (i = 0; i < terms_nr; i++) {
		/* a term's weight becomes repetitions in the OR query: bm25 sums phrases */
		int reps = (int)(terms[i].weight / (terms_nr ? terms[terms_nr - 1].weight : 1) + 0.5);
		if (reps < 1)
			reps = 1;
		if (reps > 3)
			reps = 3;
		for (k = 0; k < reps; k++) {
			if (q.len)
				buf_addstr(&q, " OR ");
			buf_addch(&q, '"');
			buf_addstr(&q, terms[i].text);
			buf_addch(&q, '"');
		}
	}
	if (!q.len)
		return;
	st = prep("SELECT " CHUNK_COLS ", bm25(chunks_fts, 8.0, 2.0, 4.0, 1.0) AS s "
		  "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
		  "JOIN files f ON f.blob_id = c.blob_id JOIN blobs b ON b.id = c.blob_id "
		  "WHERE chunks_fts MATCH ?1 ORDER BY s LIMIT 400");
	sqlite3_bind_text(st, 1, q.buf, -1, SQLITE_STATIC);
	{
		/*
		 * A chunk's keyword score mixes its own BM25 with its file's: the sum of
		 * the file's best three chunks, so a file that answers many of the
		 * query's words across its chunks is not lost behind one lucky chunk.
		 */
		double *raw = NULL;
		size_t raw_alloc = 0, n0 = cands_nr, k2;
		struct cand **v;
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct cand *c = add_cand(st, 0);
			double sc = -sqlite3_column_double(st, 9);
			if (!c || c->sig[S_KEYWORD] > 0)
				continue;
			c->sig[S_KEYWORD] = sc > 0 ? sc : 1e-9;
		}
		(void)raw;
		(void)raw_alloc;
		(void)n0;
		double best_chunk = 0, best_file = 0;
		double *file_sum = xcalloc(cands_nr + 1, sizeof(double));
		for (i = 0; i < cands_nr; i++) {
			double top3[3] = { 0, 0, 0 };
			if (cands[i].sig[S_KEYWORD] > best_chunk)
				best_chunk = cands[i].sig[S_KEYWORD];
			for (k2 = 0; k2 < cands_nr; k2++) {
				double x = cands[k2].sig[S_KEYWORD];
				if (strcmp(cands[k2].path, cands[i].path))
					continue;
				if (x > top3[0]) { top3[2] = top3[1]; top3[1] = top3[0]; top3[0] = x; }
				else if (x > top3[1]) { top3[2] = top3[1]; top3[1] = x; }
				else if (x > top3[2]) top3[2] = x;
			}
			file_sum[i] = top3[0] + top3[1] + top3[2];
			if (file_sum[i] > best_file)
				best_file = file_sum[i];
		}
		for (i = 0; i < cands_nr; i++)
			if (cands[i].sig[S_KEYWORD] > 0)
				cands[i].sig[S_KEYWORD] = 0.5 * cands[i].sig[S_KEYWORD] / (best_chunk > 0 ? best_chunk : 1) +
							  0.5 * file_sum[i] / (best_file > 0 ? best_file : 1);
		free(file_sum);
		v = xmalloc((cands_nr + 1) * sizeof(*v));
		for (i = k2 = 0; i < cands_nr; i++)
			if (cands[i].sig[S_KEYWORD] > 0)
				v[k2++] = &cands[i];
		cmp_sig = S_KEYWORD;
		qsort(v, k2, sizeof(*v), cmp_by_sig);
		for (i = 0; i < k2; i++)
			v[i]->rank[S_KEYWORD] = (int)i + 1;
		free(v);
	}
	sqlite3_finalize(st);
	buf_release(&q);
}

static void signal_symbol(void)
{
	sqlite3_stmt *st = prep("SELECT " CHUNK_COLS ", d.kind FROM defs d "
				"JOIN chunks c ON c.blob_id = d.blob_id AND c.start_line <= d.line AND c.end_line >= d.line "
				"JOIN files f ON f.blob_id = d.blob_id JOIN blobs b ON b.id = d.blob_id "
				"WHERE d.name = ?1 LIMIT 50");
	size_t i;

	for (i = 0; i < terms_nr; i++) {
		if (!terms[i].code && terms_nr > 3)
			continue;
		sqlite3_bind_text(st, 1, terms[i].orig, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct cand *c = add_cand(st, 0);
			/* the chunk named like the symbol is its definition: first */
			double s = 0.6 + 0.4 * (c && c->name && !strcmp(c->name, terms[i].orig));
			if (!c)
				continue;
			s *= terms[i].weight / terms[0].weight;
			if (s > c->sig[S_SYMBOL])
				c->sig[S_SYMBOL] = s;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
}

/* Files named by the query: traceback frames, and terms that are a file's stem. */
static void signal_path(void)
{
	sqlite3_stmt *files = prep("SELECT f.path FROM files f");
	sqlite3_stmt *first = prep("SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
				   "JOIN blobs b ON b.id = c.blob_id WHERE f.path = ?1 ORDER BY c.start_line");
	size_t i;

	while (sqlite3_step(files) == SQLITE_ROW) {
		const char *path = col(files, 0), *base = strrchr(path, '/');
		double s = 0;
		char stem[256];
		size_t sl;

		base = base ? base + 1 : path;
		sl = strcspn(base, ".");
		if (sl >= sizeof(stem))
			continue;
		for (i = 0; i < sl; i++)
			stem[i] = (char)tolower((unsigned char)base[i]);
		stem[sl] = '\0';
		for (i = 0; i < frame_nr; i++) {
			size_t fl = strlen(frame_paths[i]), pl = strlen(path);
			if (fl >= pl && !strcmp(frame_paths[i] + fl - pl, path) &&
			    (fl == pl || frame_paths[i][fl - pl - 1] == '/'))
				s = 1.0;
		}
		for (i = 0; i < terms_nr && s < 1.0; i++) {
			if (sl >= 3 && !strcmp(terms[i].text, stem))
				s = s < 0.8 ? 0.8 : s;
			else if (strlen(terms[i].text) >= 4 && strstr(path, terms[i].text))
				s = s < 0.3 ? 0.3 : s;
		}
		if (s <= 0)
			continue;
		/* give the signal to the file's chunks already found, or its first chunk */
		{
			int any = 0;
			for (i = 0; i < cands_nr; i++)
				if (!strcmp(cands[i].path, path)) {
					cands[i].sig[S_PATH] = s;
					any = 1;
				}
			if (!any && s >= 0.8) {
				sqlite3_bind_text(first, 1, path, -1, SQLITE_STATIC);
				if (sqlite3_step(first) == SQLITE_ROW) {
					struct cand *c = add_cand(first, 0);
					if (c)
						c->sig[S_PATH] = s;
				}
				sqlite3_reset(first);
			}
		}
	}
	sqlite3_finalize(files);
	sqlite3_finalize(first);
}

/* Personalised PageRank over imports, seeded by the files of the best keyword hits. */
static int signal_structure(void)
{
	sqlite3_stmt *st;
	char **names = NULL;
	size_t n = 0, alloc = 0, i, e_nr = 0, e_alloc = 0;
	int (*edges)[2] = NULL;
	double *pr, *next, *seed, seed_sum = 0;
	int *outdeg;

	st = prep("SELECT path FROM files ORDER BY path");
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(names, n + 1, alloc);
		names[n++] = xstrdup(col(st, 0));
	}
	sqlite3_finalize(st);
	st = prep("SELECT path, resolved FROM imports WHERE resolved IS NOT NULL");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *a = col(st, 0), *b = col(st, 1);
		char **pa = bsearch(&a, names, n, sizeof(*names), (int (*)(const void *, const void *))strcmp_ptr);
		char **pb = bsearch(&b, names, n, sizeof(*names), (int (*)(const void *, const void *))strcmp_ptr);
		if (!pa || !pb || pa == pb)
			continue;
		ALLOC_GROW(edges, e_nr + 1, e_alloc);
		edges[e_nr][0] = (int)(pa - names);
		edges[e_nr][1] = (int)(pb - names);
		e_nr++;
	}
	sqlite3_finalize(st);
	if (!e_nr) {
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return 0;
	}
	pr = xcalloc(n, sizeof(double));
	next = xcalloc(n, sizeof(double));
	seed = xcalloc(n, sizeof(double));
	outdeg = xcalloc(n, sizeof(int));
	for (i = 0; i < e_nr; i++)
		outdeg[edges[i][0]]++;
	for (i = 0; i < cands_nr; i++) {
		if (!cands[i].rank[S_KEYWORD] || cands[i].rank[S_KEYWORD] > 20)
			continue;
		const char *p = cands[i].path;
		char **pp = bsearch(&p, names, n, sizeof(*names), (int (*)(const void *, const void *))strcmp_ptr);
		if (pp) {
			seed[pp - names] += 1.0 / cands[i].rank[S_KEYWORD];
			seed_sum += 1.0 / cands[i].rank[S_KEYWORD];
		}
	}
	if (seed_sum > 0) {
		for (i = 0; i < n; i++) {
			seed[i] /= seed_sum;
			pr[i] = seed[i];
		}
		for (int it = 0; it < 20; it++) {
			double dangling = 0;
			for (i = 0; i < n; i++) {
				next[i] = 0.15 * seed[i];
				if (!outdeg[i])
					dangling += pr[i];
			}
			for (i = 0; i < e_nr; i++)
				next[edges[i][1]] += 0.85 * pr[edges[i][0]] / outdeg[edges[i][0]];
			for (i = 0; i < n; i++)
				next[i] += 0.85 * dangling * seed[i];
			memcpy(pr, next, n * sizeof(double));
		}
		double mx = 0;
		for (i = 0; i < n; i++)
			if (pr[i] > mx)
				mx = pr[i];
		for (i = 0; i < cands_nr && mx > 0; i++) {
			const char *p = cands[i].path;
			char **pp = bsearch(&p, names, n, sizeof(*names), (int (*)(const void *, const void *))strcmp_ptr);
			if (pp)
				cands[i].sig[S_STRUCTURE] = pr[pp - names] / mx;
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(edges);
	free(pr);
	free(next);
	free(seed);
	free(outdeg);
	return seed_sum > 0;
}

/* Recency and churn of each candidate's file, from commit records. */
static int signal_change(void)
{
	sqlite3_stmt *st;
	long long newest = 0;
	int have = 0;

	st = prep("SELECT max(time) FROM commits");
	if (sqlite3_step(st) == SQLITE_ROW)
		newest = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (!newest)
		return 0;
	st = prep("SELECT count(*), max(c.time) FROM commit_files cf JOIN commits c ON c.sha = cf.sha WHERE cf.path = ?1");
	for (size_t i = 0; i < cands_nr; i++) {
		sqlite3_bind_text(st, 1, cands[i].path, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
			double churn = 1.0 - 1.0 / (1.0 + sqlite3_column_int64(st, 0) / 5.0);
			double age_days = (double)(newest - sqlite3_column_int64(st, 1)) / 86400.0;
			double recency = exp(-age_days / 90.0);
			cands[i].sig[S_CHANGE] = 0.5 * churn + 0.5 * recency;
			have = 1;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return have;
}


/* ---- semantic: the query's vector from ci-embed, cosine against the index ---- */

/*
 * Run `ci-embed --query <q>` (next to this program, or on PATH) and read the
 * vector from its record.  Returns the dimension, or 0 when it is unavailable.
 */
static size_t query_vector(const char *q, const char *argv0, float **vec, char **model)
{
	int pfd[2];
	pid_t pid;
	struct buf b = BUF_INIT;
	char tmp[4096], *self_dir = NULL, *exe;
	ssize_t r;
	size_t dim = 0;
	json_t *rec;
	int status;

	*vec = NULL;
	*model = NULL;
	if (pipe(pfd) < 0)
		return 0;
	if (strchr(argv0, '/')) {
		self_dir = xstrdup(argv0);
		*strrchr(self_dir, '/') = '\0';
	}
	exe = self_dir ? xasprintf("%s/ci-embed", self_dir) : xstrdup("ci-embed");
	pid = fork();
	if (pid == 0) {
		char *args[] = { exe, "--query", (char *)q, NULL };
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		if (access(exe, X_OK) == 0)
			execv(exe, args);
		args[0] = "ci-embed";
		execvp("ci-embed", args);
		_exit(127);
	}
	close(pfd[1]);
	free(self_dir);
	free(exe);
	if (pid < 0) {
		close(pfd[0]);
		return 0;
	}
	while ((r = read(pfd[0], tmp, sizeof(tmp))) > 0)
		buf_add(&b, tmp, (size_t)r);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		buf_release(&b);
		return 0;
	}
	rec = json_loadb(b.buf, b.len, JSON_DISABLE_EOF_CHECK, NULL);
	if (rec && json_is_string(json_object_get(rec, "vec"))) {
		json_t *v = json_object_get(rec, "vec");
		if (vec_from_base64(vec, &dim, json_string_value(v), json_string_length(v)) == 0) {
			if (json_is_string(json_object_get(rec, "model")))
				*model = xstrdup(json_string_value(json_object_get(rec, "model")));
		}
	}
	json_decref(rec);
	buf_release(&b);
	return dim;
}

struct sem {
	sqlite3_int64 id;	/* chunk */
	double s;		/* cosine */
};

static int cmp_sem(const void *a, const void *b)
{
	const struct sem *x = a, *y = b;

	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int signal_semantic(const char *q, const char *argv0)
{
	sqlite3_stmt *st;
	float *qv, *v;
	char *model;
	size_t dim;
	int have;

	/* no vectors, no model to start */
	st = prep("SELECT EXISTS (SELECT 1 FROM vectors)");
	have = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (!have)
		return 0;
	dim = query_vector(q, argv0, &qv, &model);
	struct sem *top = NULL;
	size_t top_nr = 0, top_alloc = 0, i;

	if (!dim)
		return 0;
	/* NEEDSWORK: a brute-force scan read from SQLite per query; a memory-mapped
	 * matrix multiplied with BLIS is what meets the latency target */
	st = prep("SELECT v.chunk_id, v.fmt, v.scale, v.vec FROM vectors v WHERE v.dim = ?1 AND (?2 IS NULL OR v.model = ?2)");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)dim);
	if (model)
		sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	v = xmalloc(dim * sizeof(*v));
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (index_vec_decode(v, dim, st, 1) < 0)
			continue;
		ALLOC_GROW(top, top_nr + 1, top_alloc);
		top[top_nr].id = sqlite3_column_int64(st, 0);
		top[top_nr].s = vec_cosine(v, qv, dim);
		top_nr++;
	}
	sqlite3_finalize(st);
	free(v);
	/* keep the best 200 */
	if (top_nr)
		qsort(top, top_nr, sizeof(*top), cmp_sem);
	st = prep("SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
		  "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1");
	for (i = 0; i < top_nr && i < 200; i++) {
		sqlite3_bind_int64(st, 1, top[i].id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct cand *c = add_cand(st, 0);
			if (c && top[i].s > c->sig[S_SEMANTIC])
				c->sig[S_SEMANTIC] = top[i].s > 0 ? top[i].s : 0;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	free(top);
	free(qv);
	free(model);
	return top_nr > 0;
}

/* ---- fusion ---- */

enum intent { I_NAME, I_CONCEPT, I_ISSUE, I_CONFIG, I_WIRING, I_FLOW, I_MAX };
static const char *const intent_name[I_MAX] = { "name", "concept", "issue", "config", "wiring", "flow" };
/* keyword, symbol, path, structure, change, semantic */
static const double weights[I_MAX][S_MAX] = {
	[I_NAME] = { 1.0, 3.0, 1.0, 0.3, 0.2, 0.5 },
	[I_CONCEPT] = { 1.5, 0.7, 0.7, 0.3, 0.2, 2.0 },
	[I_ISSUE] = { 1.5, 1.0, 1.2, 0.3, 0.1, 1.0 },
	[I_CONFIG] = { 1.0, 0.5, 2.0, 0.3, 0.2, 1.0 },
	[I_WIRING] = { 1.0, 1.0, 0.7, 1.5, 0.2, 1.0 },
	[I_FLOW] = { 1.0, 1.5, 0.5, 1.0, 0.2, 1.0 },
};

static int has_word(const char *q, const char *const *words)
{
	for (; *words; words++) {
		const char *p = q;
		size_t l = strlen(*words);
		while ((p = strcasestr(p, *words))) {
			if ((p == q || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[l]))
				return 1;
			p += l;
		}
	}
	return 0;
}

static enum intent classify(const char *q)
{
	static const char *const config[] = { "config", "configuration", "setting", "settings",
		"option", "options", "env", "environment", "yaml", "toml", "ini", "flag", "flags", NULL };
	static const char *const wiring[] = { "register", "registered", "wire", "wired", "wiring",
		"route", "routes", "routing", "inject", "plugin", "plugins", "hook", "hooks", "entry point",
		"initialized", "initialised", "bootstrap", NULL };
	static const char *const flow[] = { "flow", "calls", "called", "call chain", "how does",
		"goes through", "pipeline", "sequence", NULL };
	size_t len = strlen(q), words = 0;
	const char *p;

	for (p = q; *p; p++)
		if (!isspace((unsigned char)*p) && (p == q || isspace((unsigned char)p[-1])))
			words++;
	if (len > 300 || strstr(q, "Traceback") || strchr(q, '\n'))
		return I_ISSUE;
	if (words == 1)
		return I_NAME;
	if (has_word(q, config))
		return I_CONFIG;
	if (has_word(q, wiring))
		return I_WIRING;
	if (has_word(q, flow))
		return I_FLOW;
	return I_CONCEPT;
}

static int wants_tests(const char *q)
{
	static const char *const w[] = { "test", "tests", "unittest", "conftest", "testcase",
		"fixture", "fixtures", "spec", "specs", NULL };
	return has_word(q, w) && (strstr(q, "test_") || strstr(q, "tests/") || strstr(q, "conftest") ||
				  (strlen(q) < 120 && has_word(q, w)));
}

static const double *cur_w;
static int used[S_MAX];

static int cmp_fused(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int r;

	if (x->fused != y->fused)
		return x->fused > y->fused ? -1 : 1;
	if ((r = strcmp(x->path, y->path)))
		return r;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void fuse(void)
{
	struct cand **v = xmalloc((cands_nr + 1) * sizeof(*v));
	size_t i;

	for (int s = 0; s < S_MAX; s++) {
		size_t n = 0;
		if (!used[s] || s == S_KEYWORD)
			continue;
		for (i = 0; i < cands_nr; i++)
			if (cands[i].sig[s] > 0)
				v[n++] = &cands[i];
		cmp_sig = s;
		qsort(v, n, sizeof(*v), cmp_by_sig);
		for (i = 0; i < n; i++)
			v[i]->rank[s] = (int)i + 1;
	}
	for (i = 0; i < cands_nr; i++) {
		double f = 0;
		for (int s = 0; s < S_MAX; s++)
			if (used[s] && cands[i].rank[s])
				f += cur_w[s] / (60.0 + cands[i].rank[s]);
		cands[i].fused = f;
	}
	free(v);
}

/* ---- output ---- */

static void free_all(void)
{
	size_t i;

	for (i = 0; i < cands_nr; i++) {
		free(cands[i].path);
		free(cands[i].kind);
		free(cands[i].name);
		free(cands[i].scope);
		free(cands[i].lang);
	}
	free(cands);
	cands = NULL;
	cands_nr = cands_alloc = 0;
	for (i = 0; i < terms_nr; i++) {
		free(terms[i].text);
		free(terms[i].orig);
	}
	free(terms);
	terms = NULL;
	terms_nr = terms_alloc = 0;
	for (i = 0; i < frame_nr; i++)
		free(frame_paths[i]);
	free(frame_paths);
	frame_paths = NULL;
	frame_nr = frame_alloc = 0;
}

static double round3(double x)
{
	return floor(x * 1000 + 0.5) / 1000;
}

static char *chunk_text(sqlite3_int64 id)
{
	sqlite3_stmt *st = prep("SELECT text FROM chunks WHERE id = ?1");
	char *t = NULL;

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && col(st, 0))
		t = xstrdup(col(st, 0));
	sqlite3_finalize(st);
	return t;
}

/* A chunk of a coupled file to show: the candidate ranked best there, else its first. */
static int coupled_chunk(const char *path, sqlite3_int64 *id, long *s, long *e, char **kind, char **name)
{
	sqlite3_stmt *st;
	size_t i;

	for (i = 0; i < cands_nr; i++)
		if (!strcmp(cands[i].path, path)) {
			*id = cands[i].chunk;
			*s = cands[i].start;
			*e = cands[i].end;
			*kind = xstrdup(cands[i].kind);
			*name = cands[i].name ? xstrdup(cands[i].name) : NULL;
			return 1;
		}
	st = prep("SELECT c.id, c.start_line, c.end_line, c.kind, c.name FROM chunks c "
		  "JOIN files f ON f.blob_id = c.blob_id WHERE f.path = ?1 ORDER BY c.start_line LIMIT 1");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return 0;
	}
	*id = sqlite3_column_int64(st, 0);
	*s = sqlite3_column_int64(st, 1);
	*e = sqlite3_column_int64(st, 2);
	*kind = xstrdup(col(st, 3) ? col(st, 3) : "");
	*name = col(st, 4) ? xstrdup(col(st, 4)) : NULL;
	sqlite3_finalize(st);
	return 1;
}

static void context_record(struct buf *out, const char *path, sqlite3_int64 id, long s, long e,
			   const char *kind, const char *name, const char *reason, const char *via,
			   double score)
{
	char *t = chunk_text(id);

	nd_begin(out, "context_chunk");
	nd_str(out, "path", path);
	nd_int(out, "start_line", s);
	nd_int(out, "end_line", e);
	nd_str(out, "kind", kind);
	nd_str(out, "name", name);
	nd_str(out, "reason", reason);
	nd_str(out, "via", via);
	nd_num(out, "score", round3(score));
	nd_str(out, "text", t);
	nd_end(out);
	free(t);
}

/*
 * The context bundle (bobbin's context): the best chunks in rank order, each
 * followed by the files that change with it (co-change coupling from the index,
 * --depth steps, --max-coupled per file, scores >= --threshold), until --budget
 * lines are used.  A chunk that does not fit is skipped and counted.
 */
static int context_bundle(struct buf *out, int scope_tests, int scope_impl, int scope_docs,
			  enum intent intent, double max_fused)
{
	char **seen = NULL;
	size_t seen_nr = 0, seen_alloc = 0, i, j;
	long lines_used = 0, direct = 0, coupled = 0, skipped = 0;
	sqlite3_stmt *cpl = prep("SELECT CASE WHEN a = ?1 THEN b ELSE a END, score FROM coupling "
				 "WHERE (a = ?1 OR b = ?1) AND score >= ?2 ORDER BY score DESC, 1 LIMIT ?3");

	for (i = 0; i < cands_nr && lines_used < o.budget; i++) {
		struct cand *x = &cands[i];
		long lines = x->end - x->start + 1;
		int dup = 0;

		if ((x->is_test && !scope_tests) || (!x->is_test && !scope_impl) ||
		    (x->is_doc == 1 && !scope_docs) || (x->is_doc == 2 && !scope_docs && intent != I_CONFIG))
			continue;
		for (j = 0; j < seen_nr; j++)
			dup |= !strcmp(seen[j], x->path);
		if (dup || direct >= o.limit)
			continue;
		if (lines_used + lines > o.budget) {
			skipped++;
			continue;
		}
		context_record(out, x->path, x->chunk, x->start, x->end, x->kind, x->name, "hit", NULL,
			       max_fused > 0 ? x->fused / max_fused : 0);
		lines_used += lines;
		direct++;
		ALLOC_GROW(seen, seen_nr + 1, seen_alloc);
		seen[seen_nr++] = xstrdup(x->path);
		/* the files that change with it, breadth first */
		{
			size_t level_start = seen_nr - 1, level_end = seen_nr;
			for (long d = 0; d < o.depth && lines_used < o.budget; d++) {
				for (size_t k = level_start; k < level_end && lines_used < o.budget; k++) {
					char *from = xstrdup(seen[k]);
					sqlite3_bind_text(cpl, 1, from, -1, SQLITE_TRANSIENT);
					sqlite3_bind_double(cpl, 2, o.threshold);
					sqlite3_bind_int64(cpl, 3, o.max_coupled);
					while (sqlite3_step(cpl) == SQLITE_ROW && lines_used < o.budget) {
						const char *p = col(cpl, 0);
						sqlite3_int64 id;
						long s2, e2;
						char *kind, *name;
						int have = 0;
						for (j = 0; j < seen_nr; j++)
							have |= !strcmp(seen[j], p);
						if (have || !coupled_chunk(p, &id, &s2, &e2, &kind, &name))
							continue;
						if (lines_used + (e2 - s2 + 1) > o.budget) {
							skipped++;
						} else {
							context_record(out, p, id, s2, e2, kind, name, "coupled", from,
								       sqlite3_column_double(cpl, 1));
							lines_used += e2 - s2 + 1;
							coupled++;
							ALLOC_GROW(seen, seen_nr + 1, seen_alloc);
							seen[seen_nr++] = xstrdup(p);
						}
						free(kind);
						free(name);
					}
					sqlite3_reset(cpl);
					free(from);
				}
				level_start = level_end;
				level_end = seen_nr;
			}
		}
	}
	sqlite3_finalize(cpl);
	nd_begin(out, "context_summary");
	nd_int(out, "budget", o.budget);
	nd_int(out, "used_lines", lines_used);
	nd_int(out, "direct", direct);
	nd_int(out, "coupled", coupled);
	nd_int(out, "skipped_for_budget", skipped);
	nd_int(out, "files", (long long)seen_nr);
	nd_str(out, "intent", intent_name[intent]);
	nd_str(out, "quality", direct ? (coupled || direct > 1 ? "high" : "medium") : "low");
	if (!direct)
		nd_str(out, "hint", "nothing matched within the budget: raise --budget or try other words");
	nd_end(out);
	for (j = 0; j < seen_nr; j++)
		free(seen[j]);
	free(seen);
	return direct ? EXIT_OK : EXIT_NOTHING;
}

int main(int argc, char **argv)
{
	struct ci_index *ix;
	struct buf out = BUF_INIT, q = BUF_INIT;
	char *path;
	int c, rc, ret = EXIT_OK;
	long total_chunks = 0;
	enum intent intent;
	int scope_tests, scope_impl, scope_docs;
	double max_fused = 0, wsum = 0;
	size_t i, shown = 0, dropped_tests = 0;
	const char *quality = "high", *hint = NULL;

	util_init(argv[0]);
	opterr = 0;
	o.mode = "hybrid";
	o.limit = 10;
	o.per_file = 1;
	o.budget = 300;
	o.depth = 1;
	o.max_coupled = 3;
	o.threshold = 0.3;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_INDEX: o.index = optarg; break;
		case OPT_MODE:
			if (strcmp(optarg, "hybrid") && strcmp(optarg, "keyword") && strcmp(optarg, "semantic"))
				usage_error(usage_text, "--mode: expected hybrid, keyword or semantic, got '%s'", optarg);
			o.mode = optarg;
			break;
		case OPT_TYPE: o.type = optarg; break;
		case OPT_LANG: o.lang = optarg; break;
		case OPT_PATH: o.path = optarg; break;
		case OPT_SCOPE:
			if (strcmp(optarg, "impl") && strcmp(optarg, "test") && strcmp(optarg, "all"))
				usage_error(usage_text, "--scope: expected impl, test or all, got '%s'", optarg);
			o.scope = optarg;
			break;
		case OPT_LIMIT: o.limit = parse_long_arg(usage_text, "--limit", optarg, 1, 200); break;
		case OPT_PER_FILE: o.per_file = parse_long_arg(usage_text, "--per-file", optarg, 1, 1000); break;
		case OPT_MIN_SCORE: {
			char *end;
			errno = 0;
			o.min_score = strtod(optarg, &end);
			if (errno || end == optarg || *end || o.min_score < 0 || o.min_score > 1)
				usage_error(usage_text, "--min-score: expected a number from 0 to 1, got '%s'", optarg);
			break;
		}
		case OPT_FORMAT:
			if (!strcmp(optarg, "full"))
				o.full = 1;
			else if (strcmp(optarg, "locate"))
				usage_error(usage_text, "--format: expected locate or full, got '%s'", optarg);
			break;
		case OPT_EXPLAIN: o.explain = 1; break;
		case OPT_BUDGET: o.budget = parse_long_arg(usage_text, "--budget", optarg, 10, 100000); break;
		case OPT_DEPTH: o.depth = parse_long_arg(usage_text, "--depth", optarg, 0, 2); break;
		case OPT_MAX_COUPLED:
			o.max_coupled = parse_long_arg(usage_text, "--max-coupled", optarg, 0, 20);
			break;
		case OPT_THRESHOLD: {
			char *end;
			errno = 0;
			o.threshold = strtod(optarg, &end);
			if (errno || end == optarg || *end || o.threshold < 0 || o.threshold > 1)
				usage_error(usage_text, "--threshold: expected a number from 0 to 1, got '%s'", optarg);
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind + 1 < argc && !strcmp(argv[optind], "context")) {
		o.context = 1;
		optind++;
	}
	for (i = (size_t)optind; i < (size_t)argc; i++) {
		if (q.len)
			buf_addch(&q, ' ');
		buf_addstr(&q, argv[i]);
	}
	if (!q.len)
		usage_error(usage_text, "no query given");

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
	rc = index_open(&ix, path, 1);
	if (rc) {
		if (rc > 0)
			error("no index at '%s': run 'ci-index build' first", path);
		free(path);
		buf_release(&q);
		return EXIT_IO;
	}
	free(path);
	db = index_db(ix);
	{
		sqlite3_stmt *st = prep("SELECT count(*) FROM chunks");
		if (sqlite3_step(st) == SQLITE_ROW)
			total_chunks = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}

	parse_query(q.buf);
	weigh_terms(total_chunks);
	intent = classify(q.buf);
	cur_w = weights[intent];
	if (o.scope) {
		scope_tests = strcmp(o.scope, "impl") != 0;
		scope_impl = strcmp(o.scope, "test") != 0;
		scope_docs = !strcmp(o.scope, "all");
	} else {
		static const char *const doc_words[] = { "doc", "docs", "documentation", "readme",
			"changelog", "guide", "tutorial", NULL };
		/*
		 * An issue report describes behaviour; its examples are often tests
		 * and it may mention the docs, but the code to change is the
		 * implementation: tests and docs only when a short query asks for them.
		 */
		scope_tests = intent != I_ISSUE && wants_tests(q.buf);
		scope_impl = 1;
		scope_docs = intent != I_ISSUE && has_word(q.buf, doc_words);
	}

	if (strcmp(o.mode, "semantic")) {
		signal_keyword();
		used[S_KEYWORD] = 1;
		if (!strcmp(o.mode, "hybrid")) {
			signal_symbol();
			used[S_SYMBOL] = 1;
			signal_path();
			used[S_PATH] = 1;
			used[S_STRUCTURE] = signal_structure();
			used[S_CHANGE] = signal_change();
		}
	}
	if (strcmp(o.mode, "keyword"))
		used[S_SEMANTIC] = signal_semantic(q.buf, argv[0]);
	if (!strcmp(o.mode, "semantic") && !used[S_SEMANTIC]) {
		error("semantic search needs vectors in the index and ci-embed: run "
		      "'ci-chunk | ci-embed | ci-index load', or use --mode keyword");
		free_all();
		buf_release(&q);
		index_close(ix);
		return EXIT_IO;
	}
	fuse();
	if (cands_nr)
		qsort(cands, cands_nr, sizeof(*cands), cmp_fused);
	for (int s = 0; s < S_MAX; s++)
		if (used[s])
			wsum += cur_w[s];
	max_fused = wsum / 61.0;

	/* a query not about tests is not answered from tests, unless only tests answer */
	{
		size_t impl_hits = 0;
		for (i = 0; i < cands_nr; i++)
			impl_hits += !cands[i].is_test && !cands[i].is_doc;
		if (!impl_hits && !o.scope)
			scope_tests = scope_docs = 1;
	}
	if (o.context) {
		ret = context_bundle(&out, scope_tests, scope_impl, scope_docs, intent, max_fused);
		fwrite(out.buf, 1, out.len, stdout);
		buf_release(&out);
		buf_release(&q);
		free_all();
		index_close(ix);
		return close_stdout(ret);
	}
	for (i = 0; i < cands_nr && shown < (size_t)o.limit; i++) {
		struct cand *x = &cands[i];
		double score = max_fused > 0 ? x->fused / max_fused : 0;
		size_t same = 0;

		if ((x->is_test && !scope_tests) || (!x->is_test && !scope_impl) ||
		    (x->is_doc == 1 && !scope_docs) || (x->is_doc == 2 && !scope_docs && intent != I_CONFIG)) {
			dropped_tests += x->is_test;
			continue;
		}
		if (score < o.min_score)
			break;
		for (size_t j = 0; j < i; j++)
			if (cands[j].fused >= 0 && !strcmp(cands[j].path, x->path))
				same++;
		if (same >= (size_t)o.per_file) {
			continue;
		}
		nd_begin(&out, "hit");
		nd_str(&out, "path", x->path);
		nd_int(&out, "start_line", x->start);
		nd_int(&out, "end_line", x->end);
		nd_str(&out, "kind", x->kind);
		nd_str(&out, "name", x->name);
		nd_str(&out, "scope", x->scope);
		nd_num(&out, "score", round3(score));
		nd_key(&out, "signals");
		buf_addch(&out, '{');
		{
			int first = 1;
			for (int s = 0; s < S_MAX; s++) {
				if (!used[s])
					continue;
				buf_addf(&out, "%s\"%s\":", first ? "" : ",", sig_name[s]);
				first = 0;
				if (round3(x->sig[s]) == 0)
					buf_addch(&out, '0');
				else
					buf_addf(&out, "%.3g", round3(x->sig[s]));
			}
		}
		buf_addch(&out, '}');
		if (o.explain) {
			int first = 1;
			nd_key(&out, "explain");
			buf_addch(&out, '{');
			for (int s = 0; s < S_MAX; s++) {
				if (!used[s])
					continue;
				buf_addf(&out, "%s\"%s\":{\"rank\":", first ? "" : ",", sig_name[s]);
				first = 0;
				if (x->rank[s])
					buf_addf(&out, "%d", x->rank[s]);
				else
					buf_addstr(&out, "null");
				buf_addf(&out, ",\"weight\":%.3g,\"contribution\":%.3g}", cur_w[s],
					 x->rank[s] ? round3(cur_w[s] / (60.0 + x->rank[s]) / max_fused) : 0.0);
			}
			buf_addch(&out, '}');
		}
		if (o.full) {
			char *t = chunk_text(x->chunk);
			nd_str(&out, "text", t);
			free(t);
		}
		nd_end(&out);
		shown++;
		/* mark as shown for the per-file count */
		(void)same;
	}
	/* how sure: strong when the best hit is ranked high by two signals or more */
	if (!shown) {
		quality = "low";
		hint = cands_nr ? (o.min_score > 0 ? "no hit reaches --min-score: lower it" :
				   "every candidate was filtered out: widen --path, --lang, --type or --scope")
				: "no chunk matches these words: try identifiers from the code, ci-grep for literal text, or other words";
	} else {
		struct cand *top = NULL;
		for (i = 0; i < cands_nr && !top; i++)
			if (!((cands[i].is_test && !scope_tests) || (!cands[i].is_test && !scope_impl) ||
			      (cands[i].is_doc == 1 && !scope_docs) ||
			      (cands[i].is_doc == 2 && !scope_docs && intent != I_CONFIG)))
				top = &cands[i];
		int agree = 0;
		for (int s = 0; s < S_MAX; s++)
			if (used[s] && top->rank[s] && top->rank[s] <= 3)
				agree++;
		double score = top->fused / max_fused;
		if (score < 0.2 || (agree < 1))
			quality = "low";
		else if (agree < 2 && score < 0.5)
			quality = "medium";
		if (!strcmp(quality, "low"))
			hint = "the top hits are weak or the signals disagree: name an identifier, a file or an "
			       "error message from the code, or use ci-grep for exact text";
	}
	nd_begin(&out, "summary");
	{
		char qs[201];
		size_t ql;
		snprintf(qs, sizeof(qs), "%s", q.buf);
		ql = strlen(qs);
		if (ql == 200)	/* do not end inside a UTF-8 sequence */
			while (ql && ((unsigned char)qs[ql - 1] & 0xc0) == 0x80)
				qs[--ql] = '\0';
		if (ql == 200 || (ql && ((unsigned char)qs[ql - 1] & 0xc0) == 0xc0))
			if (ql && (unsigned char)qs[ql - 1] >= 0xc0)
				qs[--ql] = '\0';
		nd_str(&out, "query", qs);
	}
	nd_str(&out, "intent", intent_name[intent]);
	nd_str(&out, "mode", o.mode);
	nd_key(&out, "signals");
	buf_addch(&out, '[');
	{
		int first = 1;
		for (int s = 0; s < S_MAX; s++)
			if (used[s]) {
				buf_addf(&out, "%s\"%s\"", first ? "" : ",", sig_name[s]);
				first = 0;
			}
	}
	buf_addch(&out, ']');
	nd_str(&out, "scope", scope_tests && scope_impl && scope_docs ? "all" :
			      scope_tests && !scope_impl ? "test" : scope_tests ? "impl+test" :
			      scope_docs ? "impl+docs" : "impl");
	nd_int(&out, "candidates", (long long)cands_nr);
	nd_int(&out, "count", (long long)shown);
	nd_str(&out, "quality", quality);
	if (hint)
		nd_str(&out, "hint", hint);
	nd_end(&out);
	fwrite(out.buf, 1, out.len, stdout);
	buf_release(&out);
	buf_release(&q);
	free_all();
	index_close(ix);
	if (!shown)
		ret = EXIT_NOTHING;
	return close_stdout(ret);
}
