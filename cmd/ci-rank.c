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
 *
 * In hybrid mode the first 100 files in scope are then ordered by a learned
 * model (libcommon/rank, share/rank/model.json compiled in) over each file's
 * features: the signals and their ranks, the fused score, path priors and the
 * query's mentions of the file; trained on examples mined from git history
 * (scripts/mine-history, scripts/train-rank), chosen on held-out repositories.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "core/human.h"
#include "index/index.h"
#include "parse/walk.h"
#include "embed/vec.h"
#include "embed/vecsnap.h"
#include "embed/embed.h"
#include "embed/embedtext.h"
#include "index/fork-server.h"
#include "rank-meta.h"
#include "rank/model.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <search.h>
#include <time.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "embed/blis-quiet.h"

static const char usage_text[] =
	"usage: ci-rank [options] [context] <query>\n"
	"   or: ci-rank [options] similar <path>:<symbol>|<path>:<line>|<text>\n"
	"   or: ci-rank [options] similar --scan [--threshold <x>]\n"
	"   or: ci-rank [--index <db>] serve [--idle <seconds>] [--stop]\n"
	"\n"
	"Hybrid ranked search: write hit records, best first, and a summary record.\n"
	"With `context`, a bundle: the best chunks and the files that change with them,\n"
	"within a budget of lines.  With `similar`, the chunks whose vectors are nearest\n"
	"a chunk's or a text's; with --scan, clusters of near-duplicate chunks.\n"
	"With `serve`, a resident server for the index that runs each ci-rank command\n"
	"line with the model and the vectors already in memory; ci-rank starts one\n"
	"itself for an index with vectors and uses it while it runs.\n"
	"\n"
	"      --index <db>        the index (default: $CI_INDEX, or <root>/.ci-index/index.db)\n"
	"      --shards <set>      every index of a shard set (a directory or a manifest);\n"
	"                          hits merged by score\n"
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
	"      --fusion <how>      learned (default in hybrid mode: the model of\n"
	"                          share/rank/model.json, compiled in) or rrf (weighted\n"
	"                          reciprocal rank, the default of the other modes; also:\n"
	"                          CI_RANK_FUSION)\n"
	"      --model <file>      the learned fusion with this model instead\n"
	"      --features <file>   write each candidate file's features (NDJSON) to <file>\n"
	"      --budget <lines>    context: at most this many lines in all (10-100000; default 300)\n"
	"      --depth <n>         context: follow co-change coupling <n> steps (0-2; default 1)\n"
	"      --max-coupled <n>   context: at most <n> coupled files per hit (0-20; default 3)\n"
	"      --threshold <x>     context: coupling scores below <x> are ignored (0-1; default 0.3);\n"
	"                          similar --scan: the cosine that makes two chunks near\n"
	"                          duplicates (default 0.85)\n"
	"      --scan              similar: cluster near-duplicate chunks across the index\n"
	"      --no-server         run here, not in the index's server (also: CI_RANK_SERVER=0)\n"
	"      --json              NDJSON records even on a terminal (also: CI_FORMAT=json)\n"
	"      --idle <seconds>    serve: exit after this long without a request (default\n"
	"                          $CI_RANK_SERVER_IDLE, else 600)\n"
	"      --stop              serve: stop the index's server\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum { OPT_INDEX = 256, OPT_MODE, OPT_TYPE, OPT_LANG, OPT_PATH, OPT_SCOPE, OPT_LIMIT,
	OPT_PER_FILE, OPT_MIN_SCORE, OPT_FORMAT, OPT_EXPLAIN, OPT_BUDGET, OPT_DEPTH, OPT_MAX_COUPLED,
	OPT_THRESHOLD, OPT_SCAN, OPT_NO_SERVER, OPT_IDLE, OPT_STOP, OPT_JSON, OPT_FUSION, OPT_MODEL,
	OPT_FEATURES };

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
	{ "scan", no_argument, NULL, OPT_SCAN },
	{ "no-server", no_argument, NULL, OPT_NO_SERVER },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "stop", no_argument, NULL, OPT_STOP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "fusion", required_argument, NULL, OPT_FUSION },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "features", required_argument, NULL, OPT_FEATURES },
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
	int threshold_set;
	int similar;		/* the similar command */
	int scan;		/* similar --scan */
	int no_server;		/* --no-server */
	long idle;		/* serve --idle seconds (0: not given) */
	int stop;		/* serve --stop */
	int learned;		/* 1: --fusion learned or --model; 0: --fusion rrf; -1: not said */
	const char *model;	/* --model file, or NULL: the compiled-in model */
	const char *features;	/* --features file */
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
	double file_bonus;	/* of it, from the file's next best chunks */
	int file_chunks;	/* those chunks */
	int is_test;		/* under a test directory or named like a test */
	int is_doc;		/* documentation, changelog, prose */
	double rrf_score;	/* learned fusion: the hand-set fusion's score (0-1) it replaced */
	double learned_p;	/* learned fusion: the file's probability */
};

static struct options o;
static sqlite3 *db;
/* the server's copy of the candidates' metadata, when it is of this transaction's index */
static const struct rank_meta *meta;
static char *index_path;	/* the index's file */
/* vectors the semantic signal took from the snapshot and from the table (--explain) */
static long sem_snapshot_nr, sem_table_nr;
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
	sqlite3_stmt *st, *vocab = NULL;
	size_t i, j;

	/*
	 * A term's document count: term_df has the common ones (fts5vocab
	 * walks a term's whole doclist to count it: 8 ms for "struct" on 137k
	 * chunks), fts5vocab the rest.
	 */
	st = prep("SELECT df FROM term_df WHERE term = ?1");
	for (i = 0; i < terms_nr; i++) {
		sqlite3_bind_text(st, 1, terms[i].text, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			terms[i].df = sqlite3_column_int64(st, 0);
		} else {
			if (!vocab) {
				if (sqlite3_exec(db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab "
						 "USING fts5vocab(main, chunks_fts, row)", NULL, NULL, NULL) != SQLITE_OK)
					die("index: %s", sqlite3_errmsg(db));
				vocab = prep("SELECT doc FROM temp.ci_vocab WHERE term = ?1");
			}
			sqlite3_bind_text(vocab, 1, terms[i].text, -1, SQLITE_STATIC);
			terms[i].df = sqlite3_step(vocab) == SQLITE_ROW ? sqlite3_column_int64(vocab, 0) : 0;
			sqlite3_reset(vocab);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_finalize(vocab);
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

/*
 * The candidates by chunk id: an open-addressing table of (id, index in
 * cands), rebuilt when it fills or when an entry no longer points at its
 * chunk (cands sorted or cut since).
 */
static struct { sqlite3_int64 id; size_t at; } *cand_tab;
static size_t cand_tab_cap, cand_tab_nr;

static size_t cand_slot(sqlite3_int64 id)
{
	uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 20) & (cand_tab_cap - 1);
}

static void cand_tab_put(sqlite3_int64 id, size_t at)
{
	size_t k = cand_slot(id);

	while (cand_tab[k].at != (size_t)-1 && cand_tab[k].id != id)
		k = (k + 1) & (cand_tab_cap - 1);
	if (cand_tab[k].at == (size_t)-1)
		cand_tab_nr++;
	cand_tab[k].id = id;
	cand_tab[k].at = at;
}

static void cand_tab_rebuild(size_t want)
{
	size_t cap = 1024;

	while (cap < 2 * want)
		cap *= 2;
	free(cand_tab);
	cand_tab = xmalloc(cap * sizeof(*cand_tab));
	cand_tab_cap = cap;
	cand_tab_nr = 0;
	for (size_t k = 0; k < cap; k++)
		cand_tab[k].at = (size_t)-1;
	for (size_t i = 0; i < cands_nr; i++)
		cand_tab_put(cands[i].chunk, i);
}

static struct cand *find_cand(sqlite3_int64 chunk)
{
	size_t k;

	if (!cand_tab)
		cand_tab_rebuild(cands_nr);
	for (int pass = 0; pass < 2; pass++) {
		for (k = cand_slot(chunk); cand_tab[k].at != (size_t)-1; k = (k + 1) & (cand_tab_cap - 1))
			if (cand_tab[k].id == chunk)
				break;
		if (cand_tab[k].at == (size_t)-1)
			return NULL;
		if (cand_tab[k].at < cands_nr && cands[cand_tab[k].at].chunk == chunk)
			return &cands[cand_tab[k].at];
		cand_tab_rebuild(cands_nr);	/* moved: index them again */
	}
	return NULL;
}

/*
 * A candidate for chunk id (of its blob's first file by path), unless the
 * options filter it out (NULL).
 */
static struct cand *add_cand_vals(sqlite3_int64 id, sqlite3_int64 blob, const char *path, const char *lang,
				  long start, long end, const char *kind, const char *name, const char *scope)
{
	struct cand *c = find_cand(id);

	if (c)
		return c;
	if (!path_ok(path) || (o.lang && (!lang || strcmp(lang, o.lang))) ||
	    (o.type && (!kind || strcmp(kind, o.type))))
		return NULL;
	ALLOC_GROW(cands, cands_nr + 1, cands_alloc);
	c = &cands[cands_nr++];
	memset(c, 0, sizeof(*c));
	c->chunk = id;
	if (2 * (cand_tab_nr + 1) > cand_tab_cap)
		cand_tab_rebuild(cands_nr);
	else
		cand_tab_put(id, cands_nr - 1);
	c->blob = blob;
	c->path = xstrdup(path);
	c->start = start;
	c->end = end;
	c->kind = xstrdup(kind ? kind : "");
	c->name = name ? xstrdup(name) : NULL;
	c->scope = scope ? xstrdup(scope) : NULL;
	c->lang = lang ? xstrdup(lang) : NULL;
	c->is_test = is_test_path(path);
	c->is_doc = is_doc_file(path, lang);
	return c;
}

/* st's columns from base: the chunk's start, end, kind, name, scope */
static struct cand *add_cand_at(sqlite3_int64 id, sqlite3_int64 blob, const char *path, const char *lang,
				sqlite3_stmt *st, int base)
{
	return add_cand_vals(id, blob, path, lang, (long)sqlite3_column_int64(st, base),
			     (long)sqlite3_column_int64(st, base + 1), col(st, base + 2), col(st, base + 3),
			     col(st, base + 4));
}

static struct cand *add_cand(sqlite3_stmt *st, int base)
{
	/* columns from base: chunk id, blob id, path, start, end, kind, name, scope, lang */
	return add_cand_at(sqlite3_column_int64(st, base), sqlite3_column_int64(st, base + 1), col(st, base + 2),
			   col(st, base + 8), st, base + 3);
}

static int cmp_sig;
static int cmp_by_sig(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;

	if (x->sig[cmp_sig] != y->sig[cmp_sig])
		return x->sig[cmp_sig] > y->sig[cmp_sig] ? -1 : 1;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

/*
 * With CI_RANK_TRACE in the environment, the milliseconds since the index was
 * opened at each phase of a query, on stderr: where a query's time goes.
 */
static void trace(const char *what)
{
	static int on = -1;
	static double t0;
	struct timespec ts;
	double t;

	if (on < 0)
		on = getenv("CI_RANK_TRACE") != NULL;
	if (!on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	if (!t0)
		t0 = t;
	fprintf(stderr, "ci-rank: trace: %s %.2f ms\n", what, t - t0);
}

#define CHUNK_COLS "c.id, c.blob_id, f.path, c.start_line, c.end_line, c.kind, c.name, c.scope, b.lang"

/*
 * ci_bm25(chunks_fts, <column weights>..., <phrase weights>...): FTS5's
 * bm25() (k1 1.2, b 0.75, the same length normalisation) where each phrase's
 * idf is given by the caller, multiplied by the phrase's weight.  bm25()
 * itself counts every phrase's documents with xQueryPhrase on each query,
 * a walk of the whole doclist per phrase, and can weigh a term only by
 * repeating it, which walks it again; ci-rank knows the counts already.
 */
struct bm25_avg {
	double avgdl;
};

/*
 * A chunk's size in tokens from chunk_sizes (0: not known): FTS5's xColumnSize
 * runs a statement per row, half of the full-text query's time.  The table's
 * rows (1024 chunks each) are read once.
 */
static sqlite3_stmt *sizes_st;
static unsigned char *sizes;		/* the blocks read, block b at 4 * CI_SIZES_BLOCK * b */
static unsigned char *sizes_state;	/* per block: 0 not read, 1 read, 2 none */
static size_t sizes_blocks;		/* blocks there are room for */

static uint32_t chunk_size(sqlite3_int64 id)
{
	size_t b = (size_t)(id / CI_SIZES_BLOCK);

	if (!sizes_st) {
		/*
		 * Room for every block in one mapping of huge pages: 4 KiB blocks
		 * from malloc took a page fault each (5-10 us on a VM).
		 */
		sqlite3_stmt *st;
		sqlite3_int64 max = -1;
		if (sqlite3_prepare_v2(db, "SELECT max(block) FROM chunk_sizes", -1, &st, NULL) != SQLITE_OK)
			return 0;
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
			max = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (sqlite3_prepare_v2(db, "SELECT sizes FROM chunk_sizes WHERE block = ?1", -1, &sizes_st,
				       NULL) != SQLITE_OK)
			return 0;
		if (max >= 0 && max < (1 << 24)) {
			sizes_blocks = (size_t)max + 1;
			sizes = huge_alloc(sizes_blocks * 4 * CI_SIZES_BLOCK);
			sizes_state = xcalloc(sizes_blocks, 1);
		}
	}
	if (id < 0 || b >= sizes_blocks)
		return 0;
	if (!sizes_state[b]) {
		sizes_state[b] = 2;
		sqlite3_bind_int64(sizes_st, 1, (sqlite3_int64)b);
		if (sqlite3_step(sizes_st) == SQLITE_ROW && sqlite3_column_bytes(sizes_st, 0) == 4 * CI_SIZES_BLOCK) {
			memcpy(sizes + 4 * CI_SIZES_BLOCK * b, sqlite3_column_blob(sizes_st, 0), 4 * CI_SIZES_BLOCK);
			sizes_state[b] = 1;
		}
		sqlite3_reset(sizes_st);
	}
	if (sizes_state[b] != 1)
		return 0;
	return index_size_get(sizes + 4 * CI_SIZES_BLOCK * b, (size_t)(id % CI_SIZES_BLOCK));
}

static void ci_bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
		    sqlite3_value **val)
{
	const double k1 = 1.2, b = 0.75;
	int ncol = api->xColumnCount(fts), nphrase = api->xPhraseCount(fts), ip, ic, io, i;
	struct bm25_avg *avg = api->xGetAuxdata(fts, 0);
	double freq[128] = { 0 }, cw[8], score = 0, dl;
	int ntok = 0;

	if (nphrase > 128 || ncol > 8 || nval < ncol + nphrase) {
		sqlite3_result_error(ctx, "ci_bm25: a weight per column and per phrase, at most 8 columns and 128 phrases", -1);
		return;
	}
	if (!avg) {
		sqlite3_int64 nrow = 0, total = 0;
		avg = sqlite3_malloc(sizeof(*avg));
		if (!avg) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		api->xRowCount(fts, &nrow);
		api->xColumnTotalSize(fts, -1, &total);
		avg->avgdl = nrow > 0 ? (double)total / (double)nrow : 1;
		if (api->xSetAuxdata(fts, avg, sqlite3_free) != SQLITE_OK) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
	/*
	 * Each phrase's instances walked in its own position list: xInstCount
	 * would first merge every phrase's into one sorted array, per row.
	 */
	for (ic = 0; ic < ncol; ic++)
		cw[ic] = sqlite3_value_double(val[ic]);
	for (ip = 0; ip < nphrase; ip++) {
		Fts5PhraseIter it;
		if (api->xPhraseFirst(fts, ip, &it, &ic, &io) != SQLITE_OK)
			continue;
		for (; ic >= 0; api->xPhraseNext(fts, &it, &ic, &io))
			if (ic < ncol)
				freq[ip] += cw[ic];
	}
	dl = chunk_size(api->xRowid(fts));
	if (!dl) {
		api->xColumnSize(fts, -1, &ntok);
		dl = (double)ntok;
	}
	for (i = 0; i < nphrase; i++)
		score += sqlite3_value_double(val[ncol + i]) * (freq[i] * (k1 + 1.0)) /
			 (freq[i] + k1 * (1 - b + b * dl / avg->avgdl));
	sqlite3_result_double(ctx, -score);
}

struct scored {
	sqlite3_int64 id;
	double s;		/* ci_bm25: lower is better */
};

static int cmp_scored(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_cand_path(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;
	int r = strcmp(x->path, y->path);

	return r ? r : x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static int cmp_scored_id(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The candidates of n chunks (ids and values in v, reordered), each given
 * its value by set(): in the order of chunk ids (neighbours share pages),
 * each blob's path asked once (its first file by path).
 */
static void lookup_cands(struct scored *v, size_t n, void (*set)(struct cand *, double))
{
	sqlite3_stmt *st, *fst;
	struct { sqlite3_int64 blob; char *path, *lang; } *bc = NULL;
	size_t bc_nr = 0, bc_alloc = 0, b, k;

	qsort(v, n, sizeof(*v), cmp_scored_id);
	if (meta) {
		/* from the server's memory: the same rows */
		for (k = 0; k < n; k++) {
			const struct rank_meta_chunk *mc = rank_meta_chunk(meta, v[k].id);
			const struct rank_meta_blob *mb = mc ? rank_meta_blob(meta, mc->blob) : NULL;
			struct cand *c;
			if (mb && (c = add_cand_vals(mc->id, mc->blob, rank_meta_str(meta, mb->path),
						     rank_meta_str(meta, mb->lang), mc->start, mc->end,
						     rank_meta_str(meta, mc->kind), rank_meta_str(meta, mc->name),
						     rank_meta_str(meta, mc->scope))))
				set(c, v[k].s);
		}
		return;
	}
	st = prep("SELECT blob_id, start_line, end_line, kind, name, scope FROM chunks WHERE id = ?1");
	fst = prep("SELECT f.path, b.lang FROM files f JOIN blobs b ON b.id = f.blob_id "
		   "WHERE f.blob_id = ?1 ORDER BY f.path LIMIT 1");
	for (k = 0; k < n; k++) {
		sqlite3_int64 blob;
		struct cand *c;

		sqlite3_bind_int64(st, 1, v[k].id);
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_reset(st);
			continue;
		}
		blob = sqlite3_column_int64(st, 0);
		for (b = 0; b < bc_nr && bc[b].blob != blob; b++)
			;
		if (b == bc_nr) {
			ALLOC_GROW(bc, bc_nr + 1, bc_alloc);
			bc[b].blob = blob;
			bc[b].path = bc[b].lang = NULL;
			bc_nr++;
			sqlite3_bind_int64(fst, 1, blob);
			if (sqlite3_step(fst) == SQLITE_ROW) {
				bc[b].path = xstrdup(col(fst, 0));
				bc[b].lang = col(fst, 1) ? xstrdup(col(fst, 1)) : NULL;
			}
			sqlite3_reset(fst);
		}
		if (bc[b].path && (c = add_cand_at(v[k].id, blob, bc[b].path, bc[b].lang, st, 1)))
			set(c, v[k].s);
		sqlite3_reset(st);
	}
	for (b = 0; b < bc_nr; b++) {
		free(bc[b].path);
		free(bc[b].lang);
	}
	free(bc);
	sqlite3_finalize(fst);
	sqlite3_finalize(st);
}

/* a keyword candidate: its BM25 (v->s is its negation), the first one given */
static void set_keyword(struct cand *c, double s)
{
	if (c->sig[S_KEYWORD] <= 0)
		c->sig[S_KEYWORD] = -s > 0 ? -s : 1e-9;
}

/* a semantic candidate: its best cosine, at least 0 */
static void set_semantic(struct cand *c, double s)
{
	if (s > c->sig[S_SEMANTIC])
		c->sig[S_SEMANTIC] = s > 0 ? s : 0;
}

#define KEYWORD_TOP 400

/* The best KEYWORD_TOP chunks for an FTS5 expression, with a weight per phrase. */
static size_t keyword_top(const char *match, const double *w, size_t nw, struct scored *out)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	size_t n = 0;

	buf_addstr(&sql, "SELECT rowid, ci_bm25(chunks_fts, 8.0, 2.0, 4.0, 1.0");
	for (size_t i = 0; i < nw; i++)
		buf_addf(&sql, ", %.17g", w[i]);
	buf_addf(&sql, ") AS s FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY s LIMIT %d", KEYWORD_TOP);
	st = prep(sql.buf);
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	while (n < KEYWORD_TOP && sqlite3_step(st) == SQLITE_ROW) {
		out[n].id = sqlite3_column_int64(st, 0);
		out[n].s = sqlite3_column_double(st, 1);
		n++;
	}
	sqlite3_finalize(st);
	buf_release(&sql);
	qsort(out, n, sizeof(*out), cmp_scored);
	return n;
}

static void add_phrase(struct buf *q, const char *sep, const char *text)
{
	if (q->len && q->buf[q->len - 1] != '(')
		buf_addstr(q, sep);
	buf_addch(q, '"');
	buf_addstr(q, text);
	buf_addch(q, '"');
}

static void signal_keyword(long total_chunks)
{
	struct buf q = BUF_INIT;
	size_t i, k, nphrase = 0, nessential = 0, ntop;
	double w[64], w2[128], common_bound = 0;
	int done = 0;
	const double k1 = 1.2;
	struct scored *top = xmalloc(KEYWORD_TOP * sizeof(*top));
	char common[64];

	for (i = 0; i < terms_nr && nphrase < 64; i++) {
		/*
		 * A term weighs its weight relative to the lightest term (1 to 3)
		 * times its idf, computed from its document count as bm25() does.
		 */
		int reps = (int)(terms[i].weight / (terms_nr ? terms[terms_nr - 1].weight : 1) + 0.5);
		double idf = log((total_chunks - terms[i].df + 0.5) / (terms[i].df + 0.5));
		if (reps < 1)
			reps = 1;
		if (reps > 3)
			reps = 3;
		if (idf <= 0)
			idf = 1e-6;
		w[nphrase] = reps * idf;
		/* a term in more than one chunk in 50 is common */
		common[nphrase] = terms[i].df > total_chunks / 50;
		if (common[nphrase])
			common_bound += w[nphrase] * (k1 + 1.0);
		else
			nessential++;
		add_phrase(&q, " OR ", terms[i].text);
		nphrase++;
	}
	if (!q.len) {
		free(top);
		return;
	}
	{
		fts5_api *api = index_fts5_api(db);
		if (!api || api->xCreateFunction(api, "ci_bm25", NULL, ci_bm25, NULL) != SQLITE_OK)
			die("index: cannot register ci_bm25: %s", sqlite3_errmsg(db));
	}
	ntop = 0;
	if (nessential && nessential < nphrase) {
		/*
		 * MaxScore: a chunk holding none of the rarer terms scores at most
		 * the sum of the common terms' bounds, w (k1 + 1).  Ask first for
		 * the chunks holding a rare term, scored on every term:
		 *   (rare OR ...) AND (rare OR ... OR common OR ...)
		 * the first group's phrases weighing nothing.  When the last of the
		 * best KEYWORD_TOP already beats that bound, nothing outside could
		 * enter them, and the answer is the one the full OR query gives
		 * without walking the common terms' long doclists.
		 */
		struct buf q2 = BUF_INIT;
		size_t n2 = 0;
		buf_addch(&q2, '(');
		for (i = 0; i < nphrase; i++)
			if (!common[i]) {
				add_phrase(&q2, " OR ", terms[i].text);
				w2[n2++] = 0;
			}
		buf_addstr(&q2, ") AND (");
		for (i = 0; i < nphrase; i++) {
			add_phrase(&q2, " OR ", terms[i].text);
			w2[n2++] = w[i];
		}
		buf_addch(&q2, ')');
		ntop = keyword_top(q2.buf, w2, n2, top);
		trace("kw-rare");
		if (ntop == KEYWORD_TOP && -top[ntop - 1].s > common_bound)
			done = 1;
		buf_release(&q2);
	}
	if (!done && nphrase - nessential >= 2 && nphrase <= 4) {
		/*
		 * Too few chunks hold a rare term (or there is none): add the chunks
		 * that hold every common term, scored on those alone, which is their
		 * whole score when they hold no rare term.  What is left out holds
		 * some of the common terms and none of the rare ones: it would rank
		 * below both.  The full OR query would score every chunk holding any
		 * common term ("struct sk_buff": 90 ms on 137k chunks).  Only for a
		 * short query: in a long text the chunks with a few of its many
		 * common words matter (on the 47-issue evaluation this cut hybrid
		 * R@5 from 0.851 to 0.766).
		 */
		struct buf q3 = BUF_INIT;
		struct scored *all = xmalloc(KEYWORD_TOP * sizeof(*all));
		double w3[64];
		size_t n3 = 0, na, j;

		for (i = 0; i < nphrase; i++)
			if (common[i]) {
				add_phrase(&q3, " AND ", terms[i].text);
				w3[n3++] = w[i];
			}
		na = keyword_top(q3.buf, w3, n3, all);
		/* the rare-term chunks keep their score on every term */
		for (j = 0; j < na && ntop < KEYWORD_TOP; j++) {
			for (k = 0; k < ntop && top[k].id != all[j].id; k++)
				;
			if (k == ntop)
				top[ntop++] = all[j];
		}
		qsort(top, ntop, sizeof(*top), cmp_scored);
		if (ntop >= KEYWORD_TOP / 4)
			done = 1;
		free(all);
		buf_release(&q3);
	}
	trace("kw-common");
	if (!done)
		ntop = keyword_top(q.buf, w, nphrase, top);
	trace("kw-full");
	{
		/*
		 * A chunk's keyword score mixes its own BM25 with its file's: the sum of
		 * the file's best three chunks, so a file that answers many of the
		 * query's words across its chunks is not lost behind one lucky chunk.
		 */
		size_t k2;
		struct cand **v;
		lookup_cands(top, ntop, set_keyword);
		trace("kw-cands");
		double best_chunk = 0, best_file = 0;
		double *file_sum = xcalloc(cands_nr + 1, sizeof(double));
		/* each file's best three, over the candidates in the order of paths */
		v = xmalloc((cands_nr + 1) * sizeof(*v));
		for (i = 0; i < cands_nr; i++)
			v[i] = &cands[i];
		qsort(v, cands_nr, sizeof(*v), cmp_cand_path);
		for (i = 0; i < cands_nr; i = k) {
			double top3[3] = { 0, 0, 0 };
			for (k = i; k < cands_nr && !strcmp(v[k]->path, v[i]->path); k++) {
				double x = v[k]->sig[S_KEYWORD];
				if (x > best_chunk)
					best_chunk = x;
				if (x > top3[0]) { top3[2] = top3[1]; top3[1] = top3[0]; top3[0] = x; }
				else if (x > top3[1]) { top3[2] = top3[1]; top3[1] = x; }
				else if (x > top3[2]) top3[2] = x;
			}
			for (k2 = i; k2 < k; k2++)
				file_sum[v[k2] - cands] = top3[0] + top3[1] + top3[2];
			if (top3[0] + top3[1] + top3[2] > best_file)
				best_file = top3[0] + top3[1] + top3[2];
		}
		free(v);
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
	buf_release(&q);
	free(top);
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
	/* every file, from the server's memory or the table, in path order */
	sqlite3_stmt *files = meta ? NULL : prep("SELECT f.path FROM files f");
	sqlite3_stmt *first = prep("SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
				   "JOIN blobs b ON b.id = c.blob_id WHERE f.path = ?1 ORDER BY c.start_line");
	size_t i, fi = 0;

	while (meta ? fi < meta->head->nfiles : sqlite3_step(files) == SQLITE_ROW) {
		const char *path = meta ? rank_meta_str(meta, meta->files[fi++]) : col(files, 0);
		const char *base = strrchr(path, '/');
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
	if (files)
		sqlite3_finalize(files);
	sqlite3_finalize(first);
}

/*
 * Personalised PageRank over imports, seeded by the files of the best keyword
 * hits.  Computed on the part of the graph within STRUCT_HOPS import edges of
 * the seeds, read through the imports_path index, so a query costs what its
 * neighbourhood holds, not what the repository holds: with restart 0.15 a
 * node further out would get at most 0.85^4 of a seed's mass.  Mass leaving
 * the neighbourhood is dropped, which changes the scale, not the order, near
 * the seeds.
 */
#define STRUCT_HOPS 3
#define STRUCT_MAX_NODES 20000

struct graph {
	char **names;
	size_t n, alloc;
	struct hsearch_data h;
	int (*edges)[2];
	size_t e_nr, e_alloc;
};

static long graph_node(struct graph *g, const char *path, int add)
{
	ENTRY e = { .key = (char *)path }, *found;

	if (hsearch_r(e, FIND, &found, &g->h))
		return (long)(intptr_t)found->data;
	if (!add || g->n >= STRUCT_MAX_NODES)
		return -1;
	ALLOC_GROW(g->names, g->n + 1, g->alloc);
	g->names[g->n] = xstrdup(path);
	e.key = g->names[g->n];
	e.data = (void *)(intptr_t)g->n;
	if (!hsearch_r(e, ENTER, &found, &g->h))
		die("out of memory");
	return (long)g->n++;
}

static int signal_structure(void)
{
	struct graph g;
	sqlite3_stmt *st;
	size_t i, lo, hi, nseeds;
	double *pr, *next, *seed, seed_sum = 0;
	int *outdeg;
	unsigned char *expanded;

	memset(&g, 0, sizeof(g));
	if (!hcreate_r(2 * STRUCT_MAX_NODES, &g.h))
		die("out of memory");
	for (i = 0; i < cands_nr; i++)
		if (cands[i].rank[S_KEYWORD] && cands[i].rank[S_KEYWORD] <= 20)
			graph_node(&g, cands[i].path, 1);
	nseeds = g.n;
	seed = xcalloc(g.n + 1, sizeof(double));
	for (i = 0; i < cands_nr; i++) {
		long k;
		if (!cands[i].rank[S_KEYWORD] || cands[i].rank[S_KEYWORD] > 20)
			continue;
		k = graph_node(&g, cands[i].path, 0);
		seed[k] += 1.0 / cands[i].rank[S_KEYWORD];
		seed_sum += 1.0 / cands[i].rank[S_KEYWORD];
	}
	st = prep("SELECT resolved FROM imports WHERE path = ?1 AND resolved IS NOT NULL");
	lo = 0;
	hi = g.n;
	for (int hop = 0; hop < STRUCT_HOPS; hop++) {
		for (i = lo; i < hi; i++) {
			sqlite3_bind_text(st, 1, g.names[i], -1, SQLITE_TRANSIENT);
			while (sqlite3_step(st) == SQLITE_ROW) {
				long to = graph_node(&g, col(st, 0), 1);
				if (to < 0 || (size_t)to == i)
					continue;
				ALLOC_GROW(g.edges, g.e_nr + 1, g.e_alloc);
				g.edges[g.e_nr][0] = (int)i;
				g.edges[g.e_nr][1] = (int)to;
				g.e_nr++;
			}
			sqlite3_reset(st);
		}
		lo = hi;
		hi = g.n;
	}
	sqlite3_finalize(st);
	if (!g.e_nr || seed_sum <= 0) {
		free(seed);
		goto out;
	}
	/* nodes of the last ring were not expanded: their edges are unknown, not absent */
	expanded = xcalloc(g.n, 1);
	memset(expanded, 1, lo);
	seed = xrealloc(seed, g.n * sizeof(double));
	for (i = nseeds; i < g.n; i++)
		seed[i] = 0;
	pr = xcalloc(g.n, sizeof(double));
	next = xcalloc(g.n, sizeof(double));
	outdeg = xcalloc(g.n, sizeof(int));
	for (i = 0; i < g.e_nr; i++)
		outdeg[g.edges[i][0]]++;
	for (i = 0; i < g.n; i++) {
		seed[i] /= seed_sum;
		pr[i] = seed[i];
	}
	for (int it = 0; it < 20; it++) {
		double dangling = 0;
		for (i = 0; i < g.n; i++) {
			next[i] = 0.15 * seed[i];
			if (!outdeg[i] && expanded[i])
				dangling += pr[i];
		}
		for (i = 0; i < g.e_nr; i++)
			next[g.edges[i][1]] += 0.85 * pr[g.edges[i][0]] / outdeg[g.edges[i][0]];
		for (i = 0; i < g.n; i++)
			next[i] += 0.85 * dangling * seed[i];
		memcpy(pr, next, g.n * sizeof(double));
	}
	{
		double mx = 0;
		for (i = 0; i < g.n; i++)
			if (pr[i] > mx)
				mx = pr[i];
		for (i = 0; i < cands_nr && mx > 0; i++) {
			long k = graph_node(&g, cands[i].path, 0);
			if (k >= 0)
				cands[i].sig[S_STRUCTURE] = pr[k] / mx;
		}
	}
	free(pr);
	free(next);
	free(seed);
	free(outdeg);
	free(expanded);
out:
	hdestroy_r(&g.h);
	for (i = 0; i < g.n; i++)
		free(g.names[i]);
	free(g.names);
	free(g.edges);
	return seed_sum > 0 && g.e_nr > 0;
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


/* ---- semantic: the query's vector, cosine against the index ---- */

/*
 * The model a server (ci-rank serve) loaded before forking this worker, and
 * the directory it came from; the snapshot of the vectors it read.  NULL, or
 * map NULL, in a process of its own.
 */
static struct embed_model *pre_model;
static char *pre_model_dir;
static struct vecsnap pre_snap;
static int server_child;	/* this process is a server's worker */

/*
 * The query's vector, embedded here as `ci-embed --query <q>` would (the same
 * library calls, so the same values) on a thread started before the other
 * signals are computed and joined after them: loading the model is most of
 * its cost, and it runs meanwhile.
 */
struct qvec_job {
	int started;		/* the embedder thread runs */
	pthread_t embedder;
	char *text;
	float *vec;		/* its result: dim values of model */
	size_t dim;
	char *model;
	char *dir;		/* the model to embed it with (the index's, by name) */
	/* the snapshot of the vectors, mapped on a thread meanwhile */
	int mapping;		/* 1: the thread was started */
	pthread_t mapper;
	char token[64];		/* the snapshot the index names */
	struct vecsnap snap;
	int snap_rc;		/* vecsnap_map()'s */
	struct early_scan *early;	/* the snapshot scanned by the embedder, or NULL */
};

static void early_scan_run(struct qvec_job *j);

static char *real_dir(const char *dir)
{
	char *r = realpath(dir, NULL);
	return r ? r : xstrdup(dir);
}

static void *embedder(void *arg)
{
	struct qvec_job *j = arg;
	const char *dir = j->dir;
	struct embed_model *m = NULL;
	struct embed_work *w;
	const int32_t *ids;
	size_t n;

	if (pre_model) {
		char *r = real_dir(dir);
		if (!strcmp(r, pre_model_dir))
			m = pre_model;
		free(r);
	}
	/* as ci-embed --query: kernels for products of a few rows for a short text */
	if (strlen(j->text) <= 160)
		embed_for_queries();
	if (!m && embed_model_open(&m, dir) < 0) {
		early_scan_run(j);	/* only waits for the mapper */
		return NULL;
	}
	w = embed_work_new(m);
	ids = embed_tokenize(w, j->text, strlen(j->text), embed_max_tokens(m), &n);
	j->dim = embed_dim(m);
	j->vec = xmalloc(j->dim * sizeof(float));
	embed_forward(w, &ids, &n, 1, j->vec);
	trace("embedder: the query's vector");
	j->model = xstrdup(embed_model_name(m, 0));
	embed_work_free(w);
	if (m != pre_model)
		embed_model_close(m);
	early_scan_run(j);
	trace("embedder: the scan");
	return NULL;
}

/*
 * The model of the index's vectors (one row's: an index holds one model's), or
 * NULL; owned by the caller.
 */
static char *index_model(void)
{
	sqlite3_stmt *st = prep("SELECT model FROM vectors LIMIT 1");
	char *m = sqlite3_step(st) == SQLITE_ROW && col(st, 0) ? xstrdup(col(st, 0)) : NULL;

	sqlite3_finalize(st);
	return m;
}

static void query_vector_start(struct qvec_job *j, const char *q)
{
	char *im = index_model();

	/* the query in the space of the index's vectors: its model, when known by name */
	j->dir = xstrdup(embed_model_dir_for(NULL, im));
	free(im);
	j->text = xstrdup(q);
	j->vec = NULL;
	j->dim = 0;
	j->model = NULL;
	j->started = pthread_create(&j->embedder, NULL, embedder, j) == 0;
	if (!j->started)
		embedder(j);
}

/* The vector of a job started: returns its dimension, or 0 when unavailable. */
static size_t query_vector_finish(struct qvec_job *j, float **vec, char **model)
{
	if (j->started)
		pthread_join(j->embedder, NULL);
	j->started = 0;
	free(j->text);
	j->text = NULL;
	free(j->dir);
	j->dir = NULL;
	*vec = j->vec;
	*model = j->model;
	j->vec = NULL;
	j->model = NULL;
	return *vec ? j->dim : 0;
}

/* The query's vector, now. */
static size_t query_vector(const char *q, float **vec, char **model)
{
	struct qvec_job j;

	memset(&j, 0, sizeof(j));
	query_vector_start(&j, q);
	return query_vector_finish(&j, vec, model);
}

/*
 * The snapshot the index names (token), from the server's memory when it
 * read that one, else mapped: 0, or 1 when there is none.
 */
static int snapshot_get(struct vecsnap *s, const char *token)
{
	if (pre_snap.map && !strcmp(pre_snap.head->token, token)) {
		*s = pre_snap;
		s->borrowed = 1;
		return 0;
	}
	return vecsnap_map(s, index_path, token);
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

/* a ranks after b (cmp_sem's order) */
static int sem_worse(const struct sem *a, const struct sem *b)
{
	return cmp_sem(a, b) > 0;
}

/*
 * Keep the best cap of the values offered in h[0..*n), a heap whose root is
 * the worst kept: a scan over every vector keeps its 200 best without sorting
 * them all (the sort of 137k values was a tenth of a semantic query).
 */
static void sem_keep(struct sem *h, size_t *n, size_t cap, struct sem x)
{
	size_t i, c;

	if (*n < cap) {
		for (i = (*n)++; i && sem_worse(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = x;
		return;
	}
	if (!cap || !sem_worse(&h[0], &x))
		return;		/* no better than the worst kept */
	for (i = 0; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && sem_worse(&h[c + 1], &h[c]))
			c++;
		if (!sem_worse(&h[c], &x))
			break;
		h[i] = h[c];
	}
	h[i] = x;
}

#define SEM_TOP 200

static void *snap_mapper(void *arg)
{
	struct qvec_job *j = arg;

	j->snap_rc = snapshot_get(&j->snap, j->token);
	return NULL;
}

/*
 * Start the query's vector if the index has vectors (no vectors, no model to
 * start), and the mapping of the snapshot of the vectors: its pages take
 * about 10 ms to map on a VM, which the other signals and ci-embed hide.
 */
static struct early_scan *early_scan_new(void);
static void semantic_start(struct qvec_job *j, const char *q)
{
	sqlite3_stmt *st = prep("SELECT EXISTS (SELECT 1 FROM vectors)");
	int have = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);

	sqlite3_finalize(st);
	if (!have)
		return;
	j->snap_rc = 1;
	if (vecsnap_token(db, j->token, sizeof(j->token)) == 0) {
		/* the chunks to skip in the snapshot, read here: the scan is the embedder's */
		j->early = early_scan_new();
		if (pre_snap.map && !strcmp(pre_snap.head->token, j->token))
			j->snap_rc = snapshot_get(&j->snap, j->token);	/* in place: nothing to wait for */
		else
			j->mapping = pthread_create(&j->mapper, NULL, snap_mapper, j) == 0;
	}
	query_vector_start(j, q);
}

/* The snapshot started by semantic_start(), if it could be mapped: 0, else 1. */
static int semantic_snapshot_ready(struct qvec_job *j)
{
	if (!j->mapping)
		return j->snap_rc;
	pthread_join(j->mapper, NULL);
	j->mapping = 0;
	return j->snap_rc;
}

/*
 * The scan of every vector in two stages on two threads: this one steps
 * SQLite and copies each batch of vectors out (reading 137k rows is half of
 * the scan), a second one takes the cosines of the batch before (the other
 * half), two batches in turn.  Without the second thread, the cosines are
 * taken here.
 */
#define SEM_BATCH 1024
#define VEC_BAD 0xff		/* a row that is no vector of dim values */

struct sem_batch {
	size_t n;
	sqlite3_int64 id[SEM_BATCH];
	unsigned char fmt[SEM_BATCH];	/* enum vec_format, or VEC_BAD */
	uint32_t bytes[SEM_BATCH];
	unsigned char *data;		/* SEM_BATCH slots of dim * 4 bytes */
};

struct sem_scan {
	const float *q;
	double qnorm;
	struct vec_q16 q16;		/* q for int8 rows */
	size_t dim;
	struct sem top[SEM_TOP];
	size_t top_nr, seen;
	struct sem_batch b[2];
	int full[2];			/* handed to the worker */
	int done;			/* no more batches */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* The cosine of the query and a stored vector, or -2 when it is no vector of dim values. */
static double row_cosine(const struct sem_scan *sc, enum vec_format f, const void *blob, size_t bytes)
{
	if (f == VEC_INT8 && bytes == sc->dim)
		return vec_cosine_q16(&sc->q16, blob);
	return vec_cosine_stored(sc->q, sc->qnorm, sc->dim, f, blob, bytes);
}

/* A scan for the query vector q of dim values (q is borrowed). */
static struct sem_scan *sem_scan_new(const float *q, size_t dim)
{
	struct sem_scan *sc = xcalloc(1, sizeof(*sc));

	sc->q = q;
	sc->dim = dim;
	for (size_t i = 0; i < dim; i++)
		sc->qnorm += (double)q[i] * q[i];
	sc->qnorm = sqrt(sc->qnorm);
	vec_q16_init(&sc->q16, q, dim);
	return sc;
}

static void sem_scan_free(struct sem_scan *sc)
{
	vec_q16_release(&sc->q16);
	free(sc);
}

/* Chunk id's vector changed since the snapshot (skip: changed_bitmap()'s, up to max). */
static inline int changed_since(const unsigned char *skip, sqlite3_int64 max, sqlite3_int64 id)
{
	return id < 0 || (id <= max && (skip[id >> 3] >> (id & 7) & 1));
}

static void sem_cosines(struct sem_scan *sc, const struct sem_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct sem x;
		if (b->fmt[i] == VEC_BAD)
			continue;
		x.s = row_cosine(sc, (enum vec_format)b->fmt[i], b->data + i * sc->dim * 4, b->bytes[i]);
		if (x.s < -1.5)
			continue;	/* not a vector of dim values */
		x.id = b->id[i];
		sc->seen++;
		sem_keep(sc->top, &sc->top_nr, SEM_TOP, x);
	}
}

static void *sem_worker(void *arg)
{
	struct sem_scan *sc = arg;
	int k = 0;

	for (;;) {
		pthread_mutex_lock(&sc->mu);
		while (!sc->full[k] && !sc->done)
			pthread_cond_wait(&sc->cv, &sc->mu);
		if (!sc->full[k]) {
			pthread_mutex_unlock(&sc->mu);
			return NULL;
		}
		pthread_mutex_unlock(&sc->mu);
		sem_cosines(sc, &sc->b[k]);
		pthread_mutex_lock(&sc->mu);
		sc->full[k] = 0;
		pthread_cond_broadcast(&sc->cv);
		pthread_mutex_unlock(&sc->mu);
		k ^= 1;
	}
}

/*
 * The scan of the snapshot (libcommon/embed/vecsnap.h): rows [from, to) of the
 * matrix, less the chunks changed since it was written, into a heap of
 * their own.
 */
struct sem_part {
	const struct sem_scan *sc;
	const struct vecsnap *vs;
	const unsigned char *skip;	/* bit per chunk id changed since */
	sqlite3_int64 skip_max;		/* ids above are not in skip */
	size_t from, to;
	struct sem *top;		/* cap best: by chunk id, or by row when
					   the float32 rows are to be read again */
	size_t cap, top_nr, seen;
};

static void *sem_part_scan(void *arg)
{
	struct sem_part *p = arg;
	const struct vecsnap *vs = p->vs;

	for (size_t i = p->from; i < p->to; i++) {
		struct sem x;
		x.id = vs->ids[i];
		if (changed_since(p->skip, p->skip_max, x.id))
			continue;	/* read from the vectors table */
		x.s = vs->norms ? vec_cosine_q16_n(&p->sc->q16, vs->rows + i * vs->dim, vs->norms[i])
				: vec_cosine_q16(&p->sc->q16, vs->rows + i * vs->dim);
		if (vs->exact)
			x.id = (sqlite3_int64)i;	/* ids ascend with rows: the same order */
		p->seen++;
		sem_keep(p->top, &p->top_nr, p->cap, x);
	}
	return NULL;
}

/*
 * The chunks whose vector changed since the snapshot was written: a malloc'd
 * bitmap by chunk id, ids up to *max (-1: none).  NULL when vec_changed
 * cannot be read.
 */
static unsigned char *changed_bitmap(sqlite3_int64 *max)
{
	sqlite3_stmt *st;
	unsigned char *skip;
	sqlite3_int64 id;

	*max = -1;
	if (sqlite3_prepare_v2(db, "SELECT max(chunk_id) FROM vec_changed", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
		*max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	skip = xcalloc((size_t)(*max + 1) / 8 + 1, 1);
	st = prep("SELECT chunk_id FROM vec_changed");
	while (sqlite3_step(st) == SQLITE_ROW)
		if ((id = sqlite3_column_int64(st, 0)) >= 0 && id <= *max)
			skip[id >> 3] |= (unsigned char)(1u << (id & 7));
	sqlite3_finalize(st);
	return skip;
}

/*
 * The cosines of the changed chunks' vectors of sc->dim values (and of model,
 * unless NULL), read from the vectors table (CROSS JOIN: from the few changed
 * ones to their vectors, never a scan of the table), each given to fn.
 */
static void changed_cosines(const struct sem_scan *sc, const char *model, void (*fn)(struct sem, void *),
			    void *arg)
{
	sqlite3_stmt *st = prep("SELECT v.chunk_id, v.fmt, v.vec FROM vec_changed c CROSS JOIN vectors v "
				"ON v.chunk_id = c.chunk_id WHERE v.dim = ?1 AND (?2 IS NULL OR v.model = ?2)");

	sqlite3_bind_int64(st, 1, (sqlite3_int64)sc->dim);
	if (model)
		sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *f = (const char *)sqlite3_column_text(st, 1);
		enum vec_format vf = VEC_F32;
		struct sem x;
		if (f && vec_format_parse(&vf, f) < 0)
			continue;
		x.s = row_cosine(sc, vf, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
		if (x.s < -1.5)
			continue;
		x.id = sqlite3_column_int64(st, 0);
		fn(x, arg);
	}
	sqlite3_finalize(st);
}

static void keep_in_top(struct sem x, void *arg)
{
	struct sem_scan *sc = arg;

	sc->seen++;
	sem_keep(sc->top, &sc->top_nr, SEM_TOP, x);
}

/*
 * Every vector through the snapshot vs: its rows on two threads, and the
 * chunks changed since it was written from the vectors table, into sc->top.
 * Returns 0, or -1 when vec_changed cannot be read (nothing taken).
 */
/*
 * The snapshot's rows less the skipped chunks, in parts on two threads (this
 * one and another) when there are many: part[0..*parts) filled.
 */
/*
 * The rows whose signs differ least from the query's, SEM_PREFILTER times as
 * many as the part keeps or a sixteenth of all (whichever is more), by their
 * cosines: the signs are an eighth of the int8 rows' bytes and a popcount a
 * word, so the pass over them and the cosines of the rows it keeps cost less
 * than half the cosines of all, on one thread instead of two (137k chunks:
 * 0.5-0.9 ms and 1.1-1.3 ms, instead of 3-4 ms on two threads).  The best
 * cosines are among the rows of fewest differing signs, nearly always: on
 * 137k chunks and 54 queries, of the best 200 of a full scan 99.7% were
 * found and the first 10 were the same for every query (4,000 rows instead
 * of 8,000: 98.4%, and 16 queries' first 10 differed; 17,000: 99.98%).  The
 * same rows are taken whether the snapshot is mapped or in a server's
 * memory.  signs_want() says how many rows to keep, or 0 when there are too
 * few for it to pay (fewer than 4 times as many as it would keep): then the
 * caller scans them all.
 */
#define SEM_PREFILTER 40

static size_t signs_want(const struct vecsnap *vs, size_t cap)
{
	size_t want = SEM_PREFILTER * cap;

	if (want < vs->n / 16)
		want = vs->n / 16;
	if (!vs->bits || vs->words != (vs->dim + 63) / 64 || vs->dim >= UINT16_MAX || vs->n < 4 * want ||
	    vs->n > UINT32_MAX)
		return 0;
	return want;
}

/* The first pass of p's rows by signs, keeping want of them for their cosines (signs_want). */
static void scan_by_signs(struct sem_part *p, size_t want)
{
	const struct vecsnap *vs = p->vs;
	size_t n = vs->n, i, k, cum = 0, t;
	uint32_t *idx;
	uint64_t *q;
	uint16_t *d;
	size_t *hist;

	q = xmalloc(vs->words * sizeof(*q));
	d = xmalloc(n * sizeof(*d));
	idx = xmalloc(n * sizeof(*idx));
	hist = xcalloc(vs->dim + 1, sizeof(*hist));
	vec_q16_sign_bits(&p->sc->q16, q);
	vec_hamming(q, vs->bits, n, vs->words, d);
	for (i = 0; i < n; i++) {
		if (changed_since(p->skip, p->skip_max, vs->ids[i]))
			d[i] = UINT16_MAX;	/* read from the vectors table */
		else
			hist[d[i]]++;
	}
	for (t = 0; t <= vs->dim; t++)
		if ((cum += hist[t]) >= want)
			break;
	/* the rows kept, then their cosines, each row asked for a few ahead */
	for (i = k = 0; i < n; i++) {
		if (d[i] == UINT16_MAX)
			continue;
		p->seen++;
		if (d[i] <= t)
			idx[k++] = (uint32_t)i;
	}
	for (i = 0; i < k; i++) {
		struct sem x;
		size_t r = idx[i];
		if (i + 16 < k) {
			const signed char *ahead = vs->rows + (size_t)idx[i + 16] * vs->dim;
			for (size_t b = 0; b < vs->dim; b += 64)
				__builtin_prefetch(ahead + b);
		}
		x.id = vs->exact ? (sqlite3_int64)r : vs->ids[r];	/* by row when rescored */
		x.s = vs->norms ? vec_cosine_q16_n(&p->sc->q16, vs->rows + r * vs->dim, vs->norms[r])
				: vec_cosine_q16(&p->sc->q16, vs->rows + r * vs->dim);
		sem_keep(p->top, &p->top_nr, p->cap, x);
	}
	free(idx);
	free(hist);
	free(d);
	free(q);
}

static void scan_parts(const struct sem_scan *sc, const struct vecsnap *vs, const unsigned char *skip,
		       sqlite3_int64 max, struct sem_part part[2], size_t *parts)
{
	pthread_t worker;
	int threaded;
	size_t k, cap, want;

	cap = vs->exact ? VECSNAP_RESCORE : SEM_TOP;
	want = signs_want(vs, cap);
	*parts = !want && online_cpus() > 1 && vs->n >= 4096 ? 2 : 1;
	for (k = 0; k < *parts; k++) {
		part[k].sc = sc;
		part[k].vs = vs;
		part[k].skip = skip;
		part[k].skip_max = max;
		part[k].from = vs->n * k / *parts;
		part[k].to = vs->n * (k + 1) / *parts;
		part[k].cap = cap;
		part[k].top = xmalloc(cap * sizeof(*part[k].top));
		part[k].top_nr = part[k].seen = 0;
	}
	if (want) {
		scan_by_signs(&part[0], want);
		return;
	}
	threaded = *parts == 2 && pthread_create(&worker, NULL, sem_part_scan, &part[1]) == 0;
	sem_part_scan(&part[0]);
	if (*parts == 2 && !threaded)
		sem_part_scan(&part[1]);
	if (threaded)
		pthread_join(worker, NULL);
}

/*
 * The scan of the snapshot started as soon as the query's vector is there, by
 * the thread that embedded it, while this one computes the other signals
 * (they took 8-18 ms, the scan 6-8 ms after them): what it needs of SQLite,
 * the chunks changed since the snapshot, is read before.
 */
struct early_scan {
	unsigned char *skip;	/* changed_bitmap() */
	sqlite3_int64 skip_max;
	struct sem_scan *sc;	/* the scan done: its query */
	struct sem_part part[2];
	size_t parts;
};

static struct early_scan *early_scan_new(void)
{
	struct early_scan *es = xcalloc(1, sizeof(*es));

	es->skip = changed_bitmap(&es->skip_max);
	if (!es->skip) {
		free(es);
		return NULL;
	}
	return es;
}

static void early_scan_free(struct early_scan *es)
{
	size_t k;

	if (!es)
		return;
	for (k = 0; k < es->parts; k++)
		free(es->part[k].top);
	if (es->sc)
		sem_scan_free(es->sc);
	free(es->skip);
	free(es);
}

/* In the embedder, its vector made (or not): wait for the snapshot, and scan it if it fits. */
static void early_scan_run(struct qvec_job *j)
{
	struct early_scan *es = j->early;

	if (j->mapping) {
		pthread_join(j->mapper, NULL);
		j->mapping = 0;
	}
	if (!es || !j->vec || j->snap_rc != 0 || !j->snap.map || j->snap.dim != j->dim ||
	    (j->model && strcmp(j->model, j->snap.model)))
		return;
	es->sc = sem_scan_new(j->vec, j->dim);
	scan_parts(es->sc, &j->snap, es->skip, es->skip_max, es->part, &es->parts);
}

/*
 * Every vector through the snapshot vs: its rows on two threads (or as the
 * embedder scanned them: es), and the chunks changed since it was written
 * from the vectors table, into sc->top.  Returns 0, or -1 when vec_changed
 * cannot be read (nothing taken).
 */
static int semantic_snapshot(struct sem_scan *sc, const struct vecsnap *vs, const char *model,
			     struct early_scan *es)
{
	struct sem_part own[2], *part = own;
	sqlite3_int64 max;
	size_t i, k, parts;
	unsigned char *skip = NULL;

	if (es && es->sc) {
		part = es->part;
		parts = es->parts;
	} else if (es) {
		/* the early scan did not run: its reading of vec_changed serves */
		scan_parts(sc, vs, es->skip, es->skip_max, own, &parts);
	} else {
		if (!(skip = changed_bitmap(&max)))
			return -1;
		scan_parts(sc, vs, skip, max, own, &parts);
	}
	/* the changed chunks, from the table */
	changed_cosines(sc, model, keep_in_top, sc);
	sem_table_nr = (long)sc->seen;
	if (vs->exact) {
		/* the best by their int8 rows, by their float32 rows now */
		struct sem *all = xmalloc(2 * VECSNAP_RESCORE * sizeof(*all));
		size_t all_nr = 0;
		for (k = 0; k < parts; k++)
			for (i = 0; i < part[k].top_nr; i++)
				sem_keep(all, &all_nr, VECSNAP_RESCORE, part[k].top[i]);
		for (i = 0; i < all_nr; i++) {
			size_t row = (size_t)all[i].id;
			struct sem x;
			x.s = vec_cosine_stored(sc->q, sc->qnorm, sc->dim, VEC_F32, vs->exact + row * vs->dim * 4,
						vs->dim * 4);
			if (x.s < -1.5)
				continue;
			x.id = vs->ids[row];
			sem_keep(sc->top, &sc->top_nr, SEM_TOP, x);
		}
		free(all);
	}
	for (k = 0; k < parts; k++) {
		sem_snapshot_nr += (long)part[k].seen;
		sc->seen += part[k].seen;
		for (i = 0; !vs->exact && i < part[k].top_nr; i++)
			sem_keep(sc->top, &sc->top_nr, SEM_TOP, part[k].top[i]);
		if (part == own)
			free(part[k].top);
	}
	free(skip);
	return 0;
}

static int signal_semantic(struct qvec_job *j)
{
	struct vecsnap vs;
	sqlite3_stmt *st;
	float *qv;
	char *model;
	size_t dim, i;
	struct sem_scan *sc;
	struct sem *top;
	pthread_t worker;
	int threaded, k = 0, seen;
	size_t top_nr;

	dim = query_vector_finish(j, &qv, &model);
	if (semantic_snapshot_ready(j) == 0)
		vs = j->snap;
	else
		memset(&vs, 0, sizeof(vs));
	if (!dim) {
		early_scan_free(j->early);
		j->early = NULL;
		vecsnap_close(&vs);
		return 0;
	}
	trace("semantic: the query's vector");
	sc = sem_scan_new(qv, dim);
	if (vs.map && vs.dim == dim && (!model || !strcmp(model, vs.model)) &&
	    semantic_snapshot(sc, &vs, model, j->early) == 0) {
		trace("semantic: the snapshot's best");
		early_scan_free(j->early);
		j->early = NULL;
		vecsnap_close(&vs);
		goto ranked;
	}
	early_scan_free(j->early);
	j->early = NULL;
	vecsnap_close(&vs);
	for (k = 0; k < 2; k++)
		sc->b[k].data = xmalloc(SEM_BATCH * dim * 4);
	pthread_mutex_init(&sc->mu, NULL);
	pthread_cond_init(&sc->cv, NULL);
	threaded = online_cpus() > 1 && pthread_create(&worker, NULL, sem_worker, sc) == 0;

	/* every vector, read where SQLite holds it: the cosine without decoding */
	st = prep("SELECT v.chunk_id, v.fmt, v.vec FROM vectors v WHERE v.dim = ?1 AND (?2 IS NULL OR v.model = ?2)");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)dim);
	if (model)
		sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	k = 0;
	for (;;) {
		struct sem_batch *b = &sc->b[k];
		int more = 1;

		if (threaded) {
			pthread_mutex_lock(&sc->mu);
			while (sc->full[k])
				pthread_cond_wait(&sc->cv, &sc->mu);
			pthread_mutex_unlock(&sc->mu);
		}
		b->n = 0;
		while (b->n < SEM_BATCH && (more = sqlite3_step(st) == SQLITE_ROW)) {
			const char *f = (const char *)sqlite3_column_text(st, 1);
			size_t n = (size_t)sqlite3_column_bytes(st, 2);
			enum vec_format vf = VEC_F32;	/* no fmt: an index older than the column */
			b->id[b->n] = sqlite3_column_int64(st, 0);
			b->fmt[b->n] = f && vec_format_parse(&vf, f) < 0 ? VEC_BAD : (unsigned char)vf;
			if (n > dim * 4)
				b->fmt[b->n] = VEC_BAD, n = 0;	/* too long for any format */
			b->bytes[b->n] = (uint32_t)n;
			if (n)
				memcpy(b->data + b->n * dim * 4, sqlite3_column_blob(st, 2), n);
			b->n++;
		}
		if (b->n) {
			if (threaded) {
				pthread_mutex_lock(&sc->mu);
				sc->full[k] = 1;
				pthread_cond_broadcast(&sc->cv);
				pthread_mutex_unlock(&sc->mu);
				k ^= 1;
			} else {
				sem_cosines(sc, b);
			}
		}
		if (!more)
			break;
	}
	sqlite3_finalize(st);
	if (threaded) {
		pthread_mutex_lock(&sc->mu);
		sc->done = 1;
		pthread_cond_broadcast(&sc->cv);
		pthread_mutex_unlock(&sc->mu);
		pthread_join(worker, NULL);
	}
	sem_table_nr = (long)sc->seen;
	free(sc->b[0].data);
	free(sc->b[1].data);
	pthread_mutex_destroy(&sc->mu);
	pthread_cond_destroy(&sc->cv);
ranked:
	top = sc->top;
	top_nr = sc->top_nr;
	seen = sc->seen > 0;
	qsort(top, top_nr, sizeof(*top), cmp_sem);
	{
		struct scored *v = xmalloc((top_nr + 1) * sizeof(*v));
		for (i = 0; i < top_nr; i++) {
			v[i].id = top[i].id;
			v[i].s = top[i].s;
		}
		lookup_cands(v, top_nr, set_semantic);
		free(v);
	}
	sem_scan_free(sc);
	free(qv);
	free(model);
	return seen;
}

/* ---- fusion ---- */

enum intent { I_NAME, I_CONCEPT, I_ISSUE, I_CONFIG, I_WIRING, I_FLOW, I_MAX };
static const char *const intent_name[I_MAX] = { "name", "concept", "issue", "config", "wiring", "flow" };
/*
 * keyword, symbol, path, structure, change, semantic.  An issue text weighs
 * the semantic signal little: the model reads only the first 128 tokens of
 * it, and on the 47-issue evaluation with USE-lite vectors semantic alone
 * scores MRR 0.24 and hybrid does no better with it at weight 1 (0.612) than
 * at 0.3 (0.617).  Issue weights on that evaluation (fifth session, no
 * vectors): keyword 1.5, symbol 1.0, path 1.2 gave R@5 0.819, MRR 0.677; with
 * symbol 0.7, every keyword weight in {1.5, 2} and path weight in {0.7 .. 1}
 * gives R@5 0.851 (MRR 0.649-0.669); 2, 0.7, 1 the best MRR of them.  The
 * symbol and path signals fire on many files for a long text that names many
 * things, and outweighed the keyword ranking.
 */
static const double weights[I_MAX][S_MAX] = {
	[I_NAME] = { 1.0, 3.0, 1.0, 0.3, 0.2, 0.5 },
	[I_CONCEPT] = { 1.5, 0.7, 0.7, 0.3, 0.2, 2.0 },
	[I_ISSUE] = { 2.0, 0.7, 1.0, 0.3, 0.1, 0.3 },
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

/*
 * A file is as relevant as its best chunks together: its best chunk carries the
 * evidence of the file's next FILE_AGG_NEXT chunks as well (b, the sum of their
 * fused scores), filling part of what it lacks (below), so a file with several
 * relevant chunks passes one with a single lucky chunk.  On the 47 issues of
 * bench/eval: hybrid MRR 0.652 -> 0.677, R@5 0.777 -> 0.819, R@10 0.862 ->
 * 0.894; keyword MRR 0.626 -> 0.651.  Weights 0.5-4 and 1-10 chunks were tried
 * (a plain sum of the 4 best did as well, but then a score is not at most 1).
 */
#define FILE_AGG_WEIGHT 2.0
#define FILE_AGG_NEXT 3

static int cmp_path_fused(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a, *y = *(const struct cand *const *)b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (x->fused != y->fused)
		return x->fused < y->fused ? 1 : -1;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static void aggregate_files(double w, int next, double max_fused)
{
	struct cand **v;
	size_t i, g, k;

	if (w <= 0 || cands_nr < 2 || max_fused <= 0)
		return;
	v = xmalloc(cands_nr * sizeof(*v));
	for (i = 0; i < cands_nr; i++)
		v[i] = &cands[i];
	qsort(v, cands_nr, sizeof(*v), cmp_path_fused);
	for (g = 0; g < cands_nr; g = k) {
		double bonus = 0;
		for (k = g + 1; k < cands_nr && !strcmp(v[k]->path, v[g]->path); k++)
			if ((int)(k - g) <= next && v[k]->fused > 0) {
				bonus += v[k]->fused;
				v[g]->file_chunks++;
			}
		/*
		 * In the 0-1 scale of the score: the file's evidence fills part of
		 * what its best chunk lacks, s + (1 - s)(1 - e^(-w b)), so a score
		 * stays at most 1 and orders the hits.
		 */
		{
			double s0 = v[g]->fused / max_fused, b = bonus / max_fused;
			double f = s0 + (1 - s0) * (1 - exp(-w * b));
			v[g]->file_bonus = (f - s0) * max_fused;
			v[g]->fused = f * max_fused;
		}
	}
	free(v);
}

/* ---- learned fusion (libcommon/rank) ---- */

/* share/rank/model.json, compiled in (rank-model.c, by scripts/embed-text) */
extern const char ci_rank_model_json[];

/* the files the learned fusion orders and the feature dump describes */
#define FEAT_FILES 100

struct file_feat {
	size_t from, to;	/* the file's chunks: v[from .. to) of the by-path order */
	struct cand *best;	/* its best chunk by the hand-set fusion */
	int rank;		/* 1-based among the files in scope, 0 if out of scope */
	double x[RF_NR];	/* its features */
	double p;		/* the model's probability */
};

static int cmp_file_best(const void *a, const void *b)
{
	const struct file_feat *x = a, *y = b;

	return x->best < y->best ? -1 : x->best > y->best;
}

static int in_scope(const struct cand *x, int scope_tests, int scope_impl, int scope_docs, enum intent intent)
{
	return !((x->is_test && !scope_tests) || (!x->is_test && !scope_impl) || (x->is_doc == 1 && !scope_docs) ||
		 (x->is_doc == 2 && !scope_docs && intent != I_CONFIG));
}

static int write_features(const struct file_feat *f, size_t nr)
{
	FILE *fp = fopen(o.features, "w");
	struct buf line = BUF_INIT;
	int ret = 0;

	if (!fp)
		return error_errno("cannot open '%s'", o.features);
	for (size_t i = 0; i < nr; i++) {
		if (!f[i].rank)
			continue;
		buf_reset(&line);
		nd_begin(&line, "features");
		nd_str(&line, "path", f[i].best->path);
		nd_int(&line, "rank", f[i].rank);
		nd_key(&line, "x");
		buf_addch(&line, '{');
		for (int k = 0; k < RF_NR; k++)
			buf_addf(&line, "%s\"%s\":%.6g", k ? "," : "", rank_feat_name[k], f[i].x[k]);
		buf_addch(&line, '}');
		nd_end(&line);
		fwrite(line.buf, 1, line.len, fp);
	}
	if (ferror(fp) | fclose(fp))
		ret = error_errno("cannot write '%s'", o.features);
	buf_release(&line);
	return ret;
}

/*
 * On the candidates sorted by the hand-set fusion: the features of the
 * FEAT_FILES best files in scope (written to --features), and with --fusion
 * learned the files ordered by the model's probability instead: a file's
 * chunks keep their order within it, its best chunk scores the probability
 * (a file past the first FEAT_FILES, or out of scope, scores below 0.001).
 * Returns 0, or -1 after a message (the model or the dump).
 */
static int learned_fusion(const char *q, enum intent intent, double max_fused, int scope_tests,
			  int scope_impl, int scope_docs)
{
	struct cand **v;
	struct file_feat *f = NULL;
	size_t f_nr = 0, f_alloc = 0, g, k, words = 0;
	struct rank_qwords qw;
	struct rank_model m;
	int ret = 0, r = 0;

	if (!cands_nr || max_fused <= 0)
		return 0;
	v = xmalloc(cands_nr * sizeof(*v));
	for (g = 0; g < cands_nr; g++)
		v[g] = &cands[g];
	qsort(v, cands_nr, sizeof(*v), cmp_path_fused);
	for (g = 0; g < cands_nr; g = k) {
		for (k = g + 1; k < cands_nr && !strcmp(v[k]->path, v[g]->path); k++)
			;
		ALLOC_GROW(f, f_nr + 1, f_alloc);
		memset(&f[f_nr], 0, sizeof(*f));
		f[f_nr].from = g;
		f[f_nr].to = k;
		f[f_nr].best = v[g];
		for (size_t j = g + 1; j < k; j++)	/* the first of equals in cands' order */
			if (v[j]->fused == v[g]->fused && v[j] < f[f_nr].best)
				f[f_nr].best = v[j];
		f_nr++;
	}
	qsort(f, f_nr, sizeof(*f), cmp_file_best);
	for (const char *p = q; *p; p++)
		if (!isspace((unsigned char)*p) && (p == q || isspace((unsigned char)p[-1])))
			words++;
	rank_qwords_init(&qw, q);
	for (g = 0; g < f_nr && r < FEAT_FILES; g++) {
		struct file_feat *ff = &f[g];
		struct cand *b = ff->best;
		long last = 0;
		double *x = ff->x;

		if (!in_scope(b, scope_tests, scope_impl, scope_docs, intent))
			continue;
		ff->rank = ++r;
		for (int s = 0; s < S_MAX; s++) {
			x[RF_SIG + s] = b->sig[s];
			x[RF_RR + s] = b->rank[s] ? 1.0 / b->rank[s] : 0;
		}
		for (size_t j = ff->from; j < ff->to; j++) {
			for (int s = 0; s < S_MAX; s++)
				if (v[j]->sig[s] > x[RF_MAX_SIG + s])
					x[RF_MAX_SIG + s] = v[j]->sig[s];
			if (v[j]->end > last)
				last = v[j]->end;
		}
		x[RF_FUSED] = b->fused / max_fused;
		x[RF_FUSED_RR] = 1.0 / r;
		x[RF_FILE_CHUNKS] = log1p((double)(ff->to - ff->from));
		for (size_t i = 0; i < frame_nr; i++) {
			size_t fl = strlen(frame_paths[i]), pl = strlen(b->path);
			if (fl >= pl && !strcmp(frame_paths[i] + fl - pl, b->path) &&
			    (fl == pl || frame_paths[i][fl - pl - 1] == '/'))
				x[RF_FRAME] = 1;
		}
		rank_path_features(b->path, x);
		x[RF_TEST] = b->is_test;
		x[RF_DOC] = b->is_doc == 1;
		x[RF_CONFIG] = b->is_doc == 2;
		x[RF_LINES] = log1p((double)last);
		rank_query_names(&qw, b->path, x);
		x[RF_INTENT_ISSUE] = intent == I_ISSUE;
		x[RF_INTENT_NAME] = intent == I_NAME;
		x[RF_Q_WORDS] = log1p((double)words);
	}
	rank_qwords_release(&qw);
	if (o.features && write_features(f, f_nr)) {
		ret = -1;
		goto done;
	}
	if (!o.learned)
		goto done;
	if (o.model) {
		char *text;
		size_t len;
		if (read_file(o.model, &text, &len)) {
			ret = -1;
			goto done;
		}
		ret = rank_model_parse(&m, text, len, o.model);
		free(text);
	} else {
		ret = rank_model_parse(&m, ci_rank_model_json, strlen(ci_rank_model_json), "share/rank/model.json");
	}
	if (ret)
		goto done;
	for (g = 0; g < f_nr; g++) {
		struct file_feat *ff = &f[g];
		double top = ff->best->fused;
		ff->p = ff->rank ? rank_model_prob(&m, ff->x) : 0;
		for (size_t j = ff->from; j < ff->to; j++) {
			double rel = top > 0 ? v[j]->fused / top : 0;
			v[j]->rrf_score = v[j]->fused / max_fused;
			v[j]->learned_p = ff->p;
			if (ff->rank)
				v[j]->fused = max_fused * (0.001 + 0.999 * ff->p) * rel;
			else
				v[j]->fused = 0.001 * v[j]->fused;
			v[j]->file_bonus = 0;
		}
	}
	qsort(cands, cands_nr, sizeof(*cands), cmp_fused);
done:
	free(f);
	free(v);
	return ret;
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
	free(cand_tab);
	cand_tab = NULL;
	cand_tab_cap = cand_tab_nr = 0;
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
	huge_free(sizes, sizes_blocks * 4 * CI_SIZES_BLOCK);
	free(sizes_state);
	sizes = sizes_state = NULL;
	sizes_blocks = 0;
	sqlite3_finalize(sizes_st);
	sizes_st = NULL;
}

static double round3(double x)
{
	return floor(x * 1000 + 0.5) / 1000;
}

/* One text column of a chunk (sql selects it by ?1, the chunk id); NULL if none. */
static char *chunk_column(sqlite3_int64 id, const char *sql)
{
	sqlite3_stmt *st = prep(sql);
	char *t = NULL;

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && col(st, 0))
		t = xstrdup(col(st, 0));
	sqlite3_finalize(st);
	return t;
}

static char *chunk_text(sqlite3_int64 id)
{
	return chunk_column(id, "SELECT ci_inflate(text) FROM chunks WHERE id = ?1");
}

/* The language of a chunk's file, NULL for text of no known language. */
static char *chunk_lang(sqlite3_int64 id)
{
	return chunk_column(id, "SELECT b.lang FROM chunks c JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1");
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
	char *t = chunk_text(id), *lang = chunk_lang(id);

	nd_begin(out, "context_chunk");
	nd_str(out, "path", path);
	nd_int(out, "start_line", s);
	nd_int(out, "end_line", e);
	nd_str(out, "kind", kind);
	nd_str(out, "name", name);
	nd_str(out, "lang", lang);
	nd_str(out, "reason", reason);
	nd_str(out, "via", via);
	nd_num(out, "score", round3(score));
	nd_str(out, "text", t);
	nd_end(out);
	free(t);
	free(lang);
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

/* ---- similar: nearest chunks by vector, and near-duplicate clusters ---- */

struct vecset {
	sqlite3_int64 *id;	/* chunk ids, ascending */
	float *m;		/* n x dim, each row L2-normalised */
	size_t n, dim;
	char *model;
};

static void vecset_free(struct vecset *vs)
{
	free(vs->id);
	free(vs->m);
	free(vs->model);
}

/*
 * All chunk vectors of the index's main model (the one most chunks have), or
 * of the given model, as a matrix of normalised rows.  Returns the count.
 */
static int cmp_id(const void *a, const void *b)
{
	sqlite3_int64 x = *(const sqlite3_int64 *)a, y = *(const sqlite3_int64 *)b;

	return x < y ? -1 : x > y;
}

static size_t vecset_load(struct vecset *vs, const char *model)
{
	sqlite3_stmt *st;
	size_t alloc = 0, bad = 0;

	memset(vs, 0, sizeof(*vs));
	if (model) {
		st = prep("SELECT model, dim FROM vectors WHERE model = ?1 LIMIT 1");
		sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
	} else {
		st = prep("SELECT model, dim FROM vectors GROUP BY model, dim ORDER BY count(*) DESC, model LIMIT 1");
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		vs->model = xstrdup(col(st, 0) ? col(st, 0) : "");
		vs->dim = (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (!vs->model || !vs->dim)
		return 0;
	st = prep("SELECT chunk_id, fmt, scale, vec FROM vectors WHERE model = ?1 AND dim = ?2 ORDER BY chunk_id");
	sqlite3_bind_text(st, 1, vs->model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)vs->dim);
	while (sqlite3_step(st) == SQLITE_ROW) {
		float *row;
		double norm = 0;

		if (vs->n + 1 > alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			vs->id = xrealloc(vs->id, alloc * sizeof(*vs->id));
			vs->m = xrealloc(vs->m, alloc * vs->dim * sizeof(float));
		}
		row = vs->m + vs->n * vs->dim;
		if (index_vec_decode(row, vs->dim, st, 1) < 0) {
			bad++;
			continue;
		}
		for (size_t k = 0; k < vs->dim; k++)
			norm += (double)row[k] * row[k];
		if (norm <= 0)
			continue;
		norm = 1.0 / sqrt(norm);
		for (size_t k = 0; k < vs->dim; k++)
			row[k] = (float)(row[k] * norm);
		vs->id[vs->n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (bad)
		warning("%zu vectors of model '%s' cannot be read (not %zu values in their format): left out; "
			"'ci-index --embed build' writes them anew", bad, vs->model, vs->dim);
	return vs->n;
}

/* C[m x n] = A[m x k] B[n x k]^T, row-major, through BLIS. */
static void sgemm_nt(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
	float one = 1.0f, zero = 0.0f;

	bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_TRANSPOSE, (dim_t)m, (dim_t)n, (dim_t)k, &one,
		  (float *)a, (inc_t)k, 1, (float *)b, (inc_t)k, 1, &zero, c, (inc_t)n, 1);
}

/* The chunk a "path:symbol" or "path:line" target names, or 0. */
static sqlite3_int64 similar_target_chunk(const char *target)
{
	const char *colon = strrchr(target, ':');
	sqlite3_stmt *st;
	sqlite3_int64 id = 0;
	char *path, *end;
	long line;

	if (!colon || colon == target || !colon[1])
		return 0;
	path = xstrndup(target, (size_t)(colon - target));
	errno = 0;
	line = strtol(colon + 1, &end, 10);
	if (!*end && !errno && line > 0) {
		st = prep("SELECT c.id FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
			  "WHERE f.path = ?1 AND c.start_line <= ?2 AND c.end_line >= ?2 "
			  "ORDER BY c.end_line - c.start_line, c.id LIMIT 1");
		sqlite3_bind_int64(st, 2, line);
	} else {
		/* the innermost chunk named so: "Class.method" names method in Class */
		const char *name = strrchr(colon + 1, '.');
		st = prep("SELECT c.id FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
			  "WHERE f.path = ?1 AND c.name = ?2 AND (?3 IS NULL OR c.scope = ?3 OR c.scope LIKE '%.' || ?3) "
			  "ORDER BY c.start_line, c.id LIMIT 1");
		if (name) {
			sqlite3_bind_text(st, 2, name + 1, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 3, colon + 1, (int)(name - colon - 1), SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_text(st, 2, colon + 1, -1, SQLITE_TRANSIENT);
			sqlite3_bind_null(st, 3);
		}
	}
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	free(path);
	return id;
}

static int file_exists_in_index(const char *target)
{
	const char *colon = strrchr(target, ':');
	sqlite3_stmt *st;
	int found;

	if (!colon)
		return 0;
	st = prep("SELECT 1 FROM files WHERE path = ?1");
	sqlite3_bind_text(st, 1, target, (int)(colon - target), SQLITE_TRANSIENT);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static int scope_ok(const struct cand *c)
{
	if (!o.scope || !strcmp(o.scope, "all"))
		return 1;
	return !strcmp(o.scope, "test") ? c->is_test : !c->is_test;
}

static void hit_location(struct buf *out, const struct cand *c)
{
	nd_str(out, "path", c->path);
	nd_int(out, "start_line", c->start);
	nd_int(out, "end_line", c->end);
	nd_str(out, "kind", c->kind);
	nd_str(out, "name", c->name);
	nd_str(out, "scope", c->scope);
	nd_str(out, "lang", c->lang);
}

/* Look a chunk up as a candidate (filters applied): NULL when filtered out. */
static struct cand *chunk_cand(sqlite3_stmt *st, sqlite3_int64 id)
{
	struct cand *c = NULL;

	sqlite3_bind_int64(st, 1, id);
	while (!c && sqlite3_step(st) == SQLITE_ROW)
		c = add_cand(st, 0);
	sqlite3_reset(st);
	return c && scope_ok(c) ? c : NULL;
}

struct sem_list {
	struct sem *all;
	size_t n, alloc;
};

static void add_to_list(struct sem x, void *arg)
{
	struct sem_list *l = arg;

	if (l->n == l->alloc)
		l->all = xrealloc(l->all, (l->alloc = 2 * l->alloc + 16) * sizeof(*l->all));
	l->all[l->n++] = x;
}

/*
 * The cosine of q (dim values, of model) with every chunk vector, through the
 * snapshot beside the index and the rows changed since (the values the
 * vectors table gives for float32 vectors, within 1e-4 of them for int8):
 * a malloc'd array in *out of *nr, unsorted.  Returns 0, or 1 when there is
 * no current snapshot of those vectors (nothing allocated).
 */
static int snapshot_cosines(const float *q, size_t dim, const char *model, struct sem **out, size_t *nr)
{
	struct vecsnap vs;
	struct sem_scan *sc;
	struct sem_list cl;
	struct sem *all;
	unsigned char *skip;
	sqlite3_int64 max;
	size_t i, n = 0, alloc;

	*out = NULL;
	*nr = 0;
	{
		char token[64];
		memset(&vs, 0, sizeof(vs));
		if (vecsnap_token(db, token, sizeof(token)) != 0 || snapshot_get(&vs, token) != 0)
			return 1;
	}
	if (vs.dim != dim || (model && strcmp(model, vs.model)) || !(skip = changed_bitmap(&max))) {
		vecsnap_close(&vs);
		return 1;
	}

	sc = sem_scan_new(q, dim);
	alloc = vs.n + 256;
	all = xmalloc(alloc * sizeof(*all));
	for (i = 0; i < vs.n; i++) {
		struct sem x;
		x.id = vs.ids[i];
		if (changed_since(skip, max, x.id))
			continue;
		/* float32 vectors: the float32 row, as the table has it */
		x.s = vs.exact ? vec_cosine_stored(q, sc->qnorm, dim, VEC_F32, vs.exact + i * dim * 4, dim * 4)
			       : vec_cosine_q16(&sc->q16, vs.rows + i * dim);
		all[n++] = x;
	}
	cl.all = all;
	cl.n = n;
	cl.alloc = alloc;
	changed_cosines(sc, model, add_to_list, &cl);
	all = cl.all;
	n = cl.n;
	sem_scan_free(sc);
	free(skip);
	vecsnap_close(&vs);
	*out = all;
	*nr = n;
	return 0;
}

static int similar_nearest(struct buf *out, const char *target)
{
	struct vecset vs;
	float *qv = NULL, *sims;
	char *qmodel = NULL;
	sqlite3_int64 self = 0;
	size_t dim = 0, i, shown = 0;
	struct sem *order;
	sqlite3_stmt *st;
	int ret;

	if (file_exists_in_index(target)) {
		self = similar_target_chunk(target);
		if (!self) {
			error("similar: no chunk of '%.*s' is named or holds line '%s'",
			      (int)(strrchr(target, ':') - target), target, strrchr(target, ':') + 1);
			return EXIT_USAGE;
		}
	}
	if (self) {
		st = prep("SELECT model, dim FROM vectors WHERE chunk_id = ?1");
		sqlite3_bind_int64(st, 1, self);
		if (sqlite3_step(st) == SQLITE_ROW)
			qmodel = xstrdup(col(st, 0) ? col(st, 0) : "");
		sqlite3_finalize(st);
		if (!qmodel) {
			error("similar: '%s' has no vector: run 'ci-index --embed update'", target);
			return EXIT_IO;
		}
	} else {
		dim = query_vector(target, &qv, &qmodel);
		if (!dim) {
			error("similar: cannot embed the text (see the message above)");
			return EXIT_IO;
		}
	}
	memset(&vs, 0, sizeof(vs));
	if (self) {
		/* the target's vector, for the snapshot */
		st = prep("SELECT dim, fmt, scale, vec FROM vectors WHERE chunk_id = ?1");
		sqlite3_bind_int64(st, 1, self);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0 &&
		    sqlite3_column_int64(st, 0) <= 65536) {
			dim = (size_t)sqlite3_column_int64(st, 0);
			qv = xmalloc(dim * sizeof(*qv));
			if (vec_decode(qv, dim, col(st, 1), sqlite3_column_double(st, 2), sqlite3_column_blob(st, 3),
				       (size_t)sqlite3_column_bytes(st, 3)) < 0) {
				free(qv);
				qv = NULL;
				dim = 0;
			}
		}
		sqlite3_finalize(st);
	}
	if (qv && snapshot_cosines(qv, dim, qmodel, &order, &vs.n) == 0) {
		vs.model = xstrdup(qmodel);
		goto ranked;
	}
	if (self) {
		free(qv);
		qv = NULL;
	}
	if (!vecset_load(&vs, qmodel)) {
		error("similar needs chunk vectors of model '%s' in the index: run 'ci-index --embed update'",
		      qmodel);
		free(qv);
		free(qmodel);
		vecset_free(&vs);
		return EXIT_IO;
	}
	if (self) {
		sqlite3_int64 *p = bsearch(&self, vs.id, vs.n, sizeof(*vs.id), cmp_id);
		if (!p) {
			error("similar: the vector of '%s' is empty or unreadable", target);
			free(qmodel);
			vecset_free(&vs);
			return EXIT_IO;
		}
		qv = xmalloc(vs.dim * sizeof(float));
		memcpy(qv, vs.m + (size_t)(p - vs.id) * vs.dim, vs.dim * sizeof(float));
	} else if (dim != vs.dim) {
		error("similar: the query vector has %zu values, the index's vectors %zu", dim, vs.dim);
		free(qv);
		free(qmodel);
		vecset_free(&vs);
		return EXIT_IO;
	} else {
		double norm = 0;
		for (i = 0; i < dim; i++)
			norm += (double)qv[i] * qv[i];
		for (i = 0; norm > 0 && i < dim; i++)
			qv[i] = (float)(qv[i] / sqrt(norm));
	}
	sims = xmalloc(vs.n * sizeof(float));
	sgemm_nt(vs.n, 1, vs.dim, vs.m, qv, sims);
	order = xmalloc(vs.n * sizeof(*order));
	for (i = 0; i < vs.n; i++) {
		order[i].id = vs.id[i];
		order[i].s = sims[i];
	}
	free(sims);
ranked:
	qsort(order, vs.n, sizeof(*order), cmp_sem);
	st = prep("SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
		  "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1 ORDER BY f.path");
	for (i = 0; i < vs.n && shown < (size_t)o.limit; i++) {
		struct cand *c;
		if (order[i].id == self)
			continue;
		if (order[i].s < o.min_score)
			break;
		if (!(c = chunk_cand(st, order[i].id)))
			continue;
		nd_begin(out, "hit");
		hit_location(out, c);
		nd_num(out, "score", round3(order[i].s));
		nd_key(out, "signals");
		if (round3(order[i].s) == 0)
			buf_addstr(out, "{\"semantic\":0}");
		else
			buf_addf(out, "{\"semantic\":%.3g}", round3(order[i].s));
		if (o.full) {
			char *text = chunk_text(order[i].id);
			nd_str(out, "text", text);
			free(text);
		}
		nd_end(out);
		shown++;
	}
	sqlite3_finalize(st);
	nd_begin(out, "summary");
	nd_str(out, "query", target);
	nd_str(out, "mode", "similar");
	nd_str(out, "target", self ? "chunk" : "text");
	nd_str(out, "model", vs.model);
	nd_int(out, "vectors", (long long)vs.n);
	nd_int(out, "count", (long long)shown);
	nd_end(out);
	ret = shown ? EXIT_OK : EXIT_NOTHING;
	free(order);
	free(qv);
	free(qmodel);
	vecset_free(&vs);
	return ret;
}

static size_t uf_find(size_t *parent, size_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

struct cluster {
	size_t root, size, first;	/* first: the smallest member index, for a stable order */
	float min, max;
	double mean;		/* over the pairs above the threshold */
};

static int cmp_cluster(const void *a, const void *b)
{
	const struct cluster *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->max != y->max)
		return x->max > y->max ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Near-duplicate clusters: every pair of definitions (named chunks of at least
 * 3 lines, passing the filters) whose centred cosine reaches the threshold
 * joins one cluster (single linkage).  The similarity matrix is computed a block of rows at a
 * time with BLIS: n^2 dim / 2 multiply-adds in all.
 */
static int similar_scan(struct buf *out)
{
	struct vecset vs;
	sqlite3_stmt *st;
	size_t i, j, n = 0, *parent, ncl = 0, shown = 0, pairs = 0;
	size_t *keep;		/* indexes into cands, which grows */
	float *sub, *sims, *pmin, *pmax;
	double *psum;		/* per cluster root: the sum and number of its pairs */
	size_t *pnr;
	struct cluster *cl;
	const size_t block = 512;

	if (!vecset_load(&vs, NULL)) {
		error("similar --scan needs chunk vectors in the index: run 'ci-index --embed update'");
		vecset_free(&vs);
		return EXIT_IO;
	}
	/* the chunks that take part, their rows packed */
	keep = xmalloc(vs.n * sizeof(*keep));
	sub = xmalloc(vs.n * vs.dim * sizeof(float));
	st = prep("SELECT " CHUNK_COLS " FROM chunks c JOIN files f ON f.blob_id = c.blob_id "
		  "JOIN blobs b ON b.id = c.blob_id WHERE c.id = ?1 ORDER BY f.path");
	for (i = 0; i < vs.n; i++) {
		struct cand *c = chunk_cand(st, vs.id[i]);
		if (!c || !c->name || c->end - c->start + 1 < 3)
			continue;
		keep[n] = (size_t)(c - cands);
		memcpy(sub + n * vs.dim, vs.m + i * vs.dim, vs.dim * sizeof(float));
		n++;
	}
	sqlite3_finalize(st);
	/*
	 * A sentence encoder's vectors share a large common direction (two
	 * unrelated functions score 0.8 with USE-lite), so a fixed threshold on
	 * raw cosines chains everything together.  Remove the mean of the
	 * vectors taking part and normalise again: what is left is what sets a
	 * chunk apart, and 0.85 means close.
	 */
	if (n > 1) {
		double *mean = xcalloc(vs.dim, sizeof(double));
		for (i = 0; i < n; i++)
			for (j = 0; j < vs.dim; j++)
				mean[j] += sub[i * vs.dim + j];
		for (j = 0; j < vs.dim; j++)
			mean[j] /= (double)n;
		for (i = 0; i < n; i++) {
			float *row = sub + i * vs.dim;
			double norm = 0;
			for (j = 0; j < vs.dim; j++) {
				row[j] = (float)(row[j] - mean[j]);
				norm += (double)row[j] * row[j];
			}
			norm = norm > 0 ? 1.0 / sqrt(norm) : 0;
			for (j = 0; j < vs.dim; j++)
				row[j] = (float)(row[j] * norm);
		}
		free(mean);
	}
	parent = xmalloc((n + 1) * sizeof(*parent));
	pmin = xmalloc((n + 1) * sizeof(float));
	pmax = xmalloc((n + 1) * sizeof(float));
	psum = xcalloc(n + 1, sizeof(double));
	pnr = xcalloc(n + 1, sizeof(size_t));
	for (i = 0; i < n; i++) {
		parent[i] = i;
		pmin[i] = 2;
		pmax[i] = -2;
	}
	sims = xmalloc(block * (n + 1) * sizeof(float));
	for (size_t b0 = 0; b0 < n; b0 += block) {
		size_t rows = n - b0 < block ? n - b0 : block;
		sgemm_nt(rows, n, vs.dim, sub + b0 * vs.dim, sub, sims);
		for (i = 0; i < rows; i++)
			for (j = b0 + i + 1; j < n; j++) {
				float s = sims[i * n + j];
				size_t a, b;
				if (s < o.threshold)
					continue;
				pairs++;
				a = uf_find(parent, b0 + i);
				b = uf_find(parent, j);
				if (a != b) {
					float lo = pmin[a] < pmin[b] ? pmin[a] : pmin[b];
					float hi = pmax[a] > pmax[b] ? pmax[a] : pmax[b];
					double sum = psum[a] + psum[b];
					size_t nr = pnr[a] + pnr[b];
					if (a < b) { parent[b] = a; } else { parent[a] = b; a = b; }
					pmin[a] = lo;
					pmax[a] = hi;
					psum[a] = sum;
					pnr[a] = nr;
				}
				psum[a] += s;
				pnr[a]++;
				if (s < pmin[a])
					pmin[a] = s;
				if (s > pmax[a])
					pmax[a] = s;
			}
	}
	free(sims);
	cl = xcalloc(n + 1, sizeof(*cl));
	{
		size_t *slot = xmalloc((n + 1) * sizeof(*slot));
		for (i = 0; i < n; i++)
			slot[i] = (size_t)-1;
		for (i = 0; i < n; i++) {
			size_t r = uf_find(parent, i);
			if (r == i && pmax[r] < -1)
				continue;	/* alone */
			if (slot[r] == (size_t)-1) {
				slot[r] = ncl;
				cl[ncl].root = r;
				cl[ncl].first = i;
				cl[ncl].min = pmin[r];
				cl[ncl].max = pmax[r];
				cl[ncl].mean = pnr[r] ? psum[r] / (double)pnr[r] : pmax[r];
				ncl++;
			}
			cl[slot[r]].size++;
		}
		free(slot);
	}
	qsort(cl, ncl, sizeof(*cl), cmp_cluster);
	for (size_t k = 0; k < ncl && shown < (size_t)o.limit; k++) {
		int first = 1;
		nd_begin(out, "cluster");
		nd_int(out, "size", (long long)cl[k].size);
		nd_num(out, "min_similarity", round3(cl[k].min));
		nd_num(out, "max_similarity", round3(cl[k].max));
		nd_num(out, "mean_similarity", round3(cl[k].mean));
		nd_key(out, "members");
		buf_addch(out, '[');
		for (i = cl[k].first; i < n; i++) {
			if (uf_find(parent, i) != cl[k].root)
				continue;
			if (!first)
				buf_addch(out, ',');
			first = 0;
			struct cand *m = &cands[keep[i]];
			buf_addstr(out, "{\"path\":");
			nd_json_string(out, m->path, strlen(m->path));
			nd_int(out, "start_line", m->start);
			nd_int(out, "end_line", m->end);
			nd_str(out, "kind", m->kind);
			nd_str(out, "name", m->name);
			nd_str(out, "scope", m->scope);
			nd_str(out, "lang", m->lang);
			buf_addch(out, '}');
		}
		buf_addch(out, ']');
		nd_end(out);
		shown++;
	}
	nd_begin(out, "summary");
	nd_str(out, "mode", "similar-scan");
	nd_num(out, "threshold", o.threshold);
	nd_bool(out, "centered", 1);
	nd_str(out, "model", vs.model);
	nd_int(out, "chunks", (long long)n);
	nd_int(out, "pairs", (long long)pairs);
	nd_int(out, "clusters", (long long)ncl);
	nd_int(out, "count", (long long)shown);
	nd_end(out);
	free(cl);
	free(parent);
	free(pmin);
	free(psum);
	free(pnr);
	free(pmax);
	free(keep);
	free(sub);
	vecset_free(&vs);
	return shown ? EXIT_OK : EXIT_NOTHING;
}

/* Write what out holds, release everything, and end with ret. */
static int finish(struct buf *out, struct buf *q, struct ci_index *ix, int ret)
{
	trace("answered");
	fwrite(out->buf, 1, out->len, stdout);
	buf_release(out);
	buf_release(q);
	free_all();
	index_close(ix);
	free(index_path);
	ret = close_stdout(ret);
	trace("closed");
	return ret;
}

/* ---- the server (cmd/fork-server.h) ---- */

static int argc0;		/* the command line as given */
static char **argv0;
static char **argv_given;	/* the same in this process, servers' workers too */

/* Where the element p (the very string, not its text) was in v: -1 when nowhere. */
static int arg_pos(char **v, int n, const char *p)
{
	for (int i = 0; i < n; i++)
		if (v[i] == p)
			return i;
	return -1;
}


/*
 * In the server, before it serves and before each fork: the snapshot of the
 * vectors read again when the file is another (a new token, or none), and
 * the model read once there are vectors.  Not SQLite: a cache set up here
 * would be copied into each worker as it writes to it (2 MiB pages copied on
 * write: 3 ms a query more than each worker setting up its own).
 */
static void server_refresh(const char *path)
{
	char token[64];
	const char *dir;

	if (vecsnap_file_token(path, token, sizeof(token)) == 0 && pre_snap.map &&
	    !strcmp(token, pre_snap.head->token))
		return;
	vecsnap_close(&pre_snap);
	if (vecsnap_load(&pre_snap, path) != 0 || pre_model)
		return;		/* no vectors: the workers save the start of a process only */
	dir = embed_model_dir_for(NULL, pre_snap.model);
	embed_weights_in_memory();
	if (embed_model_open(&pre_model, dir) == 0)
		pre_model_dir = real_dir(dir);
}

/*
 * The candidates' metadata (rank-meta.h) in the server: read at the start,
 * then again by a child of the server whenever the index's files look
 * written since (the database's and its log's size, time and inode), so
 * that no request waits for it; meanwhile the workers find it stale (its
 * key is not their transaction's) and ask SQLite.  No SQLite connection of
 * the server's outlives the read at the start: the child's is its own.
 */
static struct rank_meta pre_meta;
static void *pre_meta_mem;		/* huge_alloc'd block of pre_meta.len bytes */
static struct stat meta_seen[2];	/* the database and its log when last read */
static pid_t meta_child;		/* reading it again, or 0 */
static int meta_pipe = -1;		/* its 'k' when done (read end) */
static int meta_fd = -1;		/* the memfd it writes the block to */

static void meta_stat(const char *path, struct stat st[2])
{
	char *wal = xasprintf("%s-wal", path);

	memset(st, 0, 2 * sizeof(*st));
	if (stat(path, &st[0]) < 0)
		memset(&st[0], 0, sizeof(st[0]));
	if (stat(wal, &st[1]) < 0)
		memset(&st[1], 0, sizeof(st[1]));
	free(wal);
}

static int meta_same(const struct stat *a, const struct stat *b)
{
	for (int i = 0; i < 2; i++)
		if (a[i].st_ino != b[i].st_ino || a[i].st_dev != b[i].st_dev || a[i].st_size != b[i].st_size ||
		    a[i].st_mtim.tv_sec != b[i].st_mtim.tv_sec || a[i].st_mtim.tv_nsec != b[i].st_mtim.tv_nsec)
			return 0;
	return 1;
}

/* Read the block of the index at path into out: 0, or -1. */
static int meta_read_index(const char *path, struct buf *out)
{
	struct ci_index *ix;
	int rc;

	if (index_open(&ix, path, INDEX_READONLY) != 0)
		return -1;
	rc = rank_meta_read(index_db(ix), out);
	index_close(ix);
	return rc;
}

/* Take the block of len bytes at p (copied into huge pages) as the server's. */
static void meta_take(const void *p, size_t len)
{
	void *mem = huge_alloc(len);
	struct rank_meta m;

	memcpy(mem, p, len);
	if (rank_meta_attach(&m, mem, len) < 0) {
		huge_free(mem, len);
		return;
	}
	if (pre_meta_mem)
		huge_free(pre_meta_mem, pre_meta.len);
	pre_meta = m;
	pre_meta_mem = mem;
}

static void meta_load_now(const char *path)
{
	struct buf b = BUF_INIT;

	meta_stat(path, meta_seen);
	if (meta_read_index(path, &b) == 0)
		meta_take(b.buf, b.len);
	buf_release(&b);
}

/* Before a fork: start a child reading the block again if the index was written since. */
static void meta_check(const char *path)
{
	struct stat now[2];
	int p[2];
	pid_t pid;

	if (meta_child)
		return;
	meta_stat(path, now);
	if (meta_same(now, meta_seen))
		return;
	meta_fd = memfd_create("ci-rank-meta", MFD_CLOEXEC);
	if (meta_fd < 0)
		return;
	if (pipe2(p, O_CLOEXEC) < 0) {
		close(meta_fd);
		meta_fd = -1;
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct buf b = BUF_INIT;
		size_t at = 0;
		fork_server_child_init();
		close(p[0]);
		if (meta_read_index(path, &b) == 0) {
			while (at < b.len) {
				ssize_t k = write(meta_fd, b.buf + at, b.len - at);
				if (k <= 0)
					_exit(1);
				at += (size_t)k;
			}
			if (write(p[1], "k", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		close(meta_fd);
		meta_fd = -1;
		return;
	}
	meta_child = pid;
	meta_pipe = p[0];
	memcpy(meta_seen, now, sizeof(now));	/* what it reads is at least this new */
}

static int meta_watch_fd(void)
{
	return meta_pipe;
}

/* The child's 'k' (its block is in meta_fd), or its end without one. */
static void meta_on_watch(void)
{
	char c;
	struct stat st;

	if (read(meta_pipe, &c, 1) == 1 && c == 'k' && fstat(meta_fd, &st) == 0 && st.st_size > 0) {
		void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, meta_fd, 0);
		if (map != MAP_FAILED) {
			meta_take(map, (size_t)st.st_size);
			munmap(map, (size_t)st.st_size);
		}
	}
	close(meta_pipe);
	close(meta_fd);
	meta_pipe = meta_fd = -1;
	meta_child = 0;		/* reaped by the kernel (SIGCHLD ignored) */
}

static void server_preload(const char *path)
{
	server_refresh(path);
	meta_load_now(path);
}

static void server_refresh_all(const char *path)
{
	server_refresh(path);
	meta_check(path);
}

int main(int argc, char **argv);

/* In a worker: the command line, as a process of its own would run it. */
static int server_run(int argc, char **argv)
{
	server_child = 1;
	trace("worker");
	memset(&o, 0, sizeof(o));
	optind = 0;	/* getopt anew */
	return main(argc, argv);
}

static int serve(void)
{
	static const struct fork_server_ops ops = {
		.preload = server_preload, .refresh = server_refresh_all, .run = server_run,
		.watch_fd = meta_watch_fd, .on_watch = meta_on_watch,
	};

	return fork_server_command("rank", o.index, o.stop, o.idle ? o.idle : fork_server_idle("CI_RANK_SERVER_IDLE", ENV_DIE), &ops);
}

/*
 * Run this command line in the index's server if one answers: its exit
 * status, else -1 (run it here).  An index with a snapshot of its vectors
 * gets a server started for the next command.
 */
static int call_server(const char *path)
{
	char *sock, *vec;
	int rc;

	if (o.no_server || server_env("CI_RANK_SERVER") == SERVER_OFF)
		return -1;
	sock = fork_server_socket("rank", path);
	if (!sock)
		return -1;
	rc = fork_server_call(sock, argc0, argv0);
	if (rc < 0) {
		vec = vecsnap_path(path);
		if (access(vec, R_OK) == 0)
			fork_server_spawn(path, fork_server_idle("CI_RANK_SERVER_IDLE", ENV_WARN));
		free(vec);
	}
	free(sock);
	return rc;
}

/* The formatter of records for people, when one runs (human.h). */
static pid_t human_pid;

static void human_at_exit(void)
{
	human_finish(human_pid);
}

int main(int argc, char **argv)
{
	struct ci_index *ix;
	struct qvec_job qjob;
	struct buf out = BUF_INIT, q = BUF_INIT;
	char *path;
	int c, rc, ret = EXIT_OK, word_is_query = 0, json = 0;
	long total_chunks = 0;
	enum intent intent;
	int scope_tests, scope_impl, scope_docs;
	double max_fused = 0, wsum = 0;
	size_t i, shown = 0, dropped_tests = 0;
	const char *quality = "high", *hint = NULL;

	util_init(argv[0]);
	list_options(argc, argv, long_options);

	if (fleet_wanted(argc, argv))	/* a shard set: libcommon/fleet */
		return close_stdout(fleet_main(FLEET_RANK, main, argc, argv));

	/* the command line as given, for the server (getopt permutes argv) */
	free(argv_given);
	argv_given = xcalloc((size_t)argc + 1, sizeof(*argv_given));
	memcpy(argv_given, argv, (size_t)argc * sizeof(*argv_given));
	if (!server_child) {
		argc0 = argc;
		argv0 = xcalloc((size_t)argc + 1, sizeof(*argv0));
		memcpy(argv0, argv, (size_t)argc * sizeof(*argv0));
	}
	opterr = 0;
	o.mode = "hybrid";
	o.limit = 10;
	o.per_file = 1;
	o.budget = 300;
	o.depth = 1;
	o.max_coupled = 3;
	o.threshold = 0.3;
	o.learned = -1;
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
		case OPT_SCAN: o.scan = 1; break;
		case OPT_NO_SERVER: o.no_server = 1; break;
		case OPT_JSON: json = 1; break;
		case OPT_IDLE: o.idle = parse_long_arg(usage_text, "--idle", optarg, 1, 86400 * 365); break;
		case OPT_STOP: o.stop = 1; break;
		case OPT_FUSION:
			if (strcmp(optarg, "rrf") && strcmp(optarg, "learned"))
				usage_error(usage_text, "--fusion: expected rrf or learned, got '%s'", optarg);
			o.learned = !strcmp(optarg, "learned");
			break;
		case OPT_MODEL: o.model = optarg; o.learned = 1; break;
		case OPT_FEATURES: o.features = optarg; break;
		case OPT_THRESHOLD: {
			o.threshold_set = 1;
			char *end;
			errno = 0;
			o.threshold = strtod(optarg, &end);
			if (errno || end == optarg || *end || o.threshold < 0 || o.threshold > 1)
				usage_error(usage_text, "--threshold: expected a number from 0 to 1, got '%s'", optarg);
			break;
		}
		case OPT_VERSION:
			return print_version("ci-rank");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	/*
	 * A word after "--" is the query's, never a command: `ci-rank -- serve`
	 * looks for serve (getopt moves "--" before the words that were ahead of
	 * it, so where each was is read from the command line as given).
	 */
	if (optind > 1 && optind < argc && !strcmp(argv[optind - 1], "--") &&
	    arg_pos(argv_given, argc, argv[optind]) > arg_pos(argv_given, argc, argv[optind - 1]))
		word_is_query = 1;
	if (!word_is_query && optind < argc && !strcmp(argv[optind], "serve")) {
		if (optind + 1 != argc)
			usage_error(usage_text, "serve takes no arguments");
		return serve();
	}
	if (o.idle || o.stop)
		usage_error(usage_text, "--%s goes with serve", o.idle ? "idle" : "stop");
	if (!word_is_query && optind + 1 < argc && !strcmp(argv[optind], "context")) {
		o.context = 1;
		optind++;
	} else if (!word_is_query && optind < argc && !strcmp(argv[optind], "similar")) {
		o.similar = 1;
		optind++;
		if (!o.threshold_set)
			o.threshold = 0.85;
		if (o.scan && optind < argc)
			usage_error(usage_text, "similar --scan takes no target");
		if (!o.scan && optind + 1 != argc)
			usage_error(usage_text, "similar: expected one target: <path>:<symbol>, <path>:<line> or a text");
	} else if (o.scan) {
		usage_error(usage_text, "--scan goes with similar");
	}
	for (i = (size_t)optind; i < (size_t)argc; i++) {
		if (q.len)
			buf_addch(&q, ' ');
		buf_addstr(&q, argv[i]);
	}
	if (!q.len && !o.scan)
		usage_error(usage_text, "no query given");
	if (!server_child && human_wanted(json) && (human_pid = human_start()) > 0)
		atexit(human_at_exit);
	/*
	 * One query, then exit: SQLite's cache in 2 MiB pages, faulted in a few
	 * at a time (a page fault costs 5-10 us on this VM).  16 MiB: the setup
	 * touches every slot, and 64 MiB of zeroed huge pages cost 20 ms; pages
	 * beyond it come from malloc.
	 */
	if (o.index) {
		path = xstrdup(o.index);
	} else if (!(path = index_find("."))) {
		error_errno("cannot open '.'");
		buf_release(&q);
		return EXIT_IO;
	}

	if (!server_child && (rc = call_server(path)) >= 0) {
		free(path);
		buf_release(&q);
		return rc;
	}
	/*
	 * SQLite's page cache on huge pages: setting it up touches every slot,
	 * so its size is zeroed by the kernel in every process (a worker too).
	 * A query used 600-810 pages of 8 KiB on 137k chunks; 4 MiB (the rest
	 * from malloc) answered 2-3 ms sooner at p50 than 16 (A/B, 60 queries each).
	 */
	index_huge_page_cache(4 << 20);
	trace("open");
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc) {
		if (rc > 0)
			error("no index at '%s': run 'ci-index build' first", path);
		free(path);
		buf_release(&q);
		return EXIT_IO;
	}
	index_path = path;

	db = index_db(ix);
	/*
	 * A query touches a few thousand pages: reading them costs less than
	 * mapping 4 GiB and taking a page fault on each (measured on this VM).
	 */
	sqlite3_exec(db, "PRAGMA mmap_size = 0", NULL, NULL, NULL);
	sqlite3_exec(db, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
	/*
	 * One read transaction for the whole answer: every signal sees the same
	 * index, and a statement does not take the WAL's read lock anew (a
	 * statement a candidate: a quarter of a query's time went to fcntl).
	 */
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	{
		/*
		 * The number of chunks, for idf: FTS5 keeps it as the first varint
		 * of its "averages" record (rowid 1 of the data table), which is
		 * what bm25() itself reads; count(*) would walk the whole table.
		 */
		sqlite3_stmt *st = prep("SELECT block FROM chunks_fts_data WHERE id = 1");
		if (sqlite3_step(st) == SQLITE_ROW) {
			uint64_t v;
			index_varint(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &v);
			total_chunks = (long)v;
		}
		sqlite3_finalize(st);
	}
	meta = NULL;
	if (server_child && pre_meta.head) {
		/* the server's copy serves if it is of the index this transaction reads */
		char key[sizeof(pre_meta.head->key)];
		if (rank_meta_key(db, key, sizeof(key)) == 0 && !strcmp(key, pre_meta.head->key))
			meta = &pre_meta;
	}
	trace(meta ? "metadata: the server's" : "metadata: from the index");

	if (o.similar) {
		ret = o.scan ? similar_scan(&out) : similar_nearest(&out, q.buf);
		return finish(&out, &q, ix, ret);
	}

	/* first: the query's vector and the scan of the vectors run meanwhile */
	trace("opened");
	memset(&qjob, 0, sizeof(qjob));
	qjob.snap_rc = 1;
	if (strcmp(o.mode, "keyword"))
		semantic_start(&qjob, q.buf);
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

	trace("weigh");
	if (strcmp(o.mode, "semantic")) {
		signal_keyword(total_chunks);
		trace("keyword");
		used[S_KEYWORD] = 1;
		if (!strcmp(o.mode, "hybrid")) {
			signal_symbol();
			trace("symbol");
			used[S_SYMBOL] = 1;
			signal_path();
			trace("path");
			used[S_PATH] = 1;
			used[S_STRUCTURE] = signal_structure();
			trace("structure");
			used[S_CHANGE] = signal_change();
			trace("change");
		}
	}

	if (strcmp(o.mode, "keyword"))
		used[S_SEMANTIC] = signal_semantic(&qjob);
	trace("semantic");

	if (!strcmp(o.mode, "semantic") && !used[S_SEMANTIC]) {
		error("semantic search needs vectors in the index and the model: run "
		      "'ci-chunk | ci-embed | ci-index load', or use --mode keyword");
		free_all();
		buf_release(&q);
		index_close(ix);
		return EXIT_IO;
	}
	fuse();
	trace("fuse");
	{
		double wall = 0;
		for (int s = 0; s < S_MAX; s++)
			if (used[s])
				wall += cur_w[s];
		aggregate_files(FILE_AGG_WEIGHT, FILE_AGG_NEXT, wall / 61.0);
	}
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
	if (o.learned < 0) {
		const char *f = getenv("CI_RANK_FUSION");
		if (f && *f && strcmp(f, "rrf") && strcmp(f, "learned")) {
			error("CI_RANK_FUSION: expected rrf or learned, got '%s'", f);
			free_all();
			buf_release(&q);
			index_close(ix);
			return EXIT_USAGE;
		}
		if (f && *f)
			o.learned = !strcmp(f, "learned");
		else	/* the model was fitted on hybrid's signals */
			o.learned = !strcmp(o.mode, "hybrid");
	}
	if ((o.learned || o.features) &&
	    learned_fusion(q.buf, intent, max_fused, scope_tests, scope_impl, scope_docs)) {
		free_all();
		buf_release(&q);
		index_close(ix);
		return EXIT_IO;
	}
	if (o.context) {
		ret = context_bundle(&out, scope_tests, scope_impl, scope_docs, intent, max_fused);
		return finish(&out, &q, ix, ret);
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
		nd_str(&out, "lang", x->lang);
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
			/* what the file's other chunks added (the score is at most 1) */
			nd_key(&out, "file_evidence");
			buf_addf(&out, "{\"chunks\":%d,\"contribution\":%.3g}", x->file_chunks,
				 max_fused > 0 ? round3(x->file_bonus / max_fused) : 0.0);
			/* the learned fusion: the contributions above made the score it replaced */
			if (o.learned) {
				nd_key(&out, "learned");
				buf_addf(&out, "{\"probability\":%.3g,\"rrf_score\":%.3g}", round3(x->learned_p),
					 round3(x->rrf_score));
			}
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
	if (o.explain && used[S_SEMANTIC]) {
		/* where the cosines came from: the snapshot beside the index, the table */
		nd_key(&out, "vectors");
		buf_addf(&out, "{\"snapshot\":%ld,\"table\":%ld}", sem_snapshot_nr, sem_table_nr);
	}
	nd_int(&out, "count", (long long)shown);
	nd_str(&out, "quality", quality);
	if (hint)
		nd_str(&out, "hint", hint);
	nd_end(&out);
	return finish(&out, &q, ix, shown ? ret : EXIT_NOTHING);
}
