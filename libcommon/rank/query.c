/*
 * rank/query.c: the query: its terms (identifiers count more, the parts of
 * camelCase and snake_case ones too), traceback frames, its intent, and the
 * run of the signals it asks for.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <ctype.h>
#include <math.h>

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

/*
 * The query's terms, found by text in a table of their indexes (open
 * addressing; the table is a power of two, over twice the terms it may hold).
 */
#define TERMS_MAX 2048			/* distinct terms kept of one query */
#define TERM_TAB (2 * TERMS_MAX * 2)	/* slots, a power of two */
#define TOKENS_SCAN (256u << 10)	/* bytes of the query tokenized at most */
#define NOISE_MAX 0.5			/* what log lines may add to a term's weight */

struct term_tab {
	int slot[TERM_TAB];	/* index + 1 in rq->terms; 0 free */
};

/*
 * Count the word w[0, n) once more: a new term weighs 2 (code) or 1, each
 * further use 1 or 0.25; all of it times the weight of the part of the query
 * it is in (segw), what log lines add capped at NOISE_MAX.
 */
static void add_term(struct rank_query *rq, struct term_tab *tab, const char *w, size_t n, int code,
		     double segw, int noisy)
{
	char low[65];
	size_t i, h;

	if (n < 2 || n > 64)
		return;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)w[i]);
	low[n] = '\0';
	if (!code && is_stopword(low))
		return;
	if (isdigit((unsigned char)low[0]))
		return;
	for (h = (size_t)fnv1a(0xcbf29ce484222325ull, low, n) & (TERM_TAB - 1); tab->slot[h]; h = (h + 1) & (TERM_TAB - 1)) {
		struct rank_term *t = &rq->terms[tab->slot[h] - 1];
		double add;

		if (strcmp(t->text, low))
			continue;
		add = (code ? 1.0 : 0.25) * segw;
		if (noisy) {
			add = add < NOISE_MAX - t->noise ? add : NOISE_MAX - t->noise;
			if (add <= 0)
				return;
			t->noise += add;
		}
		t->weight += add;
		t->code |= code;
		return;
	}
	if (rq->terms_nr >= TERMS_MAX)
		return;
	ALLOC_GROW(rq->terms, rq->terms_nr + 1, rq->terms_alloc);
	rq->terms[rq->terms_nr].text = xstrdup(low);
	rq->terms[rq->terms_nr].orig = xstrndup(w, n);
	rq->terms[rq->terms_nr].weight = (code ? 2.0 : 1.0) * segw;
	rq->terms[rq->terms_nr].noise = noisy ? rq->terms[rq->terms_nr].weight : 0;
	rq->terms[rq->terms_nr].df = 0;
	rq->terms[rq->terms_nr].code = code;
	tab->slot[h] = (int)++rq->terms_nr;
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

#define FRAMES_MAX 256	/* traceback frames kept of one query */

/* "File "/x/y/src/pkg/mod.py", line 12, in func": remember the path. */
static void scan_frames(struct rank_query *rq, const char *q)
{
	const char *p = q;

	while (rq->frames_nr < FRAMES_MAX && (p = strstr(p, "File \""))) {
		const char *s = p + 6, *e = strchr(s, '"');
		if (!e)
			break;
		if (e - s < 512) {
			ALLOC_GROW(rq->frames, rq->frames_nr + 1, rq->frames_alloc);
			rq->frames[rq->frames_nr++] = xstrndup(s, (size_t)(e - s));
		}
		p = e;
	}
}

#define MENTIONS_MAX 256	/* file names kept of one query */

static int mention_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/';
}

static int cmp_mention(const void *a, const void *b)
{
	int c = strcmp(rank_file_name(*(char *const *)a), rank_file_name(*(char *const *)b));
	return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * "run_trace.py", "src/pkg/mod.py", "./setup.cfg": a word of path characters
 * whose last part has an extension (letters and digits after its last dot,
 * a letter among them), without a URL's scheme; each distinct one once.
 * The path signal gives the files whose path ends with one (path.c); they
 * are kept in the order of their file names (after the last '/').
 */
static void scan_mentions(struct rank_query *rq, const char *q)
{
	const char *p = q;

	while (*p && rq->mentions_nr < MENTIONS_MAX) {
		const char *s, *e, *dot = NULL, *slash = NULL;
		int letter = 0, ok = 1;

		if (!mention_char((unsigned char)*p)) {
			p++;
			continue;
		}
		for (s = p; mention_char((unsigned char)*p); p++)
			;
		if (*p == ':' && p[1] == '/' && p[2] == '/') {	/* a URL: skip it whole */
			while (*p && !isspace((unsigned char)*p))
				p++;
			continue;
		}
		e = p;
		while (e > s && (e[-1] == '.' || e[-1] == '-' || e[-1] == '/'))	/* "mod.py." ending a sentence */
			e--;
		while (s < e && (*s == '.' || *s == '/') && !(s + 1 < e && s[0] == '.' && s[1] != '/' && s[1] != '.'))
			s++;				/* "./", "/": relative to anything */
		for (const char *t = s; t < e; t++) {
			if (*t == '.')
				dot = t;
			else if (*t == '/')
				slash = t;
		}
		if (!dot || dot + 1 >= e || e - dot > 9 || (slash && slash > dot) || e - s >= 512)
			continue;
		for (const char *t = dot + 1; t < e && ok; t++) {
			ok = isalnum((unsigned char)*t);
			letter |= isalpha((unsigned char)*t);
		}
		if (!ok || !letter || dot == s || dot[-1] == '/' || dot[-1] == '.')
			continue;
		{
			size_t n = (size_t)(e - s), i;
			for (i = 0; i < rq->mentions_nr; i++)
				if (strlen(rq->mentions[i]) == n && !strncmp(rq->mentions[i], s, n))
					break;
			if (i < rq->mentions_nr)
				continue;
			ALLOC_GROW(rq->mentions, rq->mentions_nr + 1, rq->mentions_alloc);
			rq->mentions[rq->mentions_nr++] = xstrndup(s, n);
		}
	}
	if (rq->mentions_nr)
		qsort(rq->mentions, rq->mentions_nr, sizeof(*rq->mentions), cmp_mention);
}

/*
 * The words of q[from, to) into the terms, each weighing segw; inside `...`
 * (*in_code, kept from one part to the next) or a code part (code) a word is
 * code.
 */
static void tokenize(struct rank_query *rq, struct term_tab *tab, const char *q, size_t from,
		     size_t to, int *in_code, int code_part, double segw, int noisy)
{
	const char *p = q + from, *end = q + to;

	while (p < end) {
		if (*p == '`') {
			*in_code = !*in_code;
			p++;
			continue;
		}
		if (isalpha((unsigned char)*p) || *p == '_') {
			const char *s = p;
			while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
				p++;
			/* dotted names: "Session.resolve_redirects", "os.path.join" */
			int dotted = p + 1 < end && *p == '.' && (isalpha((unsigned char)p[1]) || p[1] == '_');
			int code = code_part || *in_code || dotted || looks_like_code(s, (size_t)(p - s)) ||
				   (s > q + 1 && s[-1] == '.' && isalpha((unsigned char)s[-2]));
			add_term(rq, tab, s, (size_t)(p - s), code, segw, noisy);
			/* also the parts of a snake_case or camelCase identifier */
			if (looks_like_code(s, (size_t)(p - s))) {
				const char *a = s;
				for (const char *b = s; b <= p; b++) {
					int cut = b == p || *b == '_' ||
						  (b > a && isupper((unsigned char)*b) && islower((unsigned char)b[-1]));
					if (!cut)
						continue;
					if (b - a >= 3)
						add_term(rq, tab, a, (size_t)(b - a), 0, segw, noisy);
					a = *b == '_' ? b + 1 : b;
				}
			}
			continue;
		}
		p++;
	}
}

void rank_parse_query(struct rank_query *rq, const char *q, const struct rank_segments *segs)
{
	struct term_tab *tab = xcalloc(1, sizeof(*tab));
	size_t scanned = 0;
	int in_code = 0;

	scan_frames(rq, rq->text);
	scan_mentions(rq, rq->text);
	for (size_t i = 0; i < segs->nr && scanned < TOKENS_SCAN; i++) {
		const struct rank_span *sp = &segs->v[i];
		double w = rq->o->seg_weight[sp->kind];
		size_t n = sp->len < TOKENS_SCAN - scanned ? sp->len : TOKENS_SCAN - scanned;

		if (w <= 0)
			continue;
		tokenize(rq, tab, q, sp->off, sp->off + n, &in_code,
			 sp->kind == SEG_CODE || sp->kind == SEG_TRACE, w, sp->kind == SEG_LOG);
		scanned += n;
	}
	free(tab);
}

/* Keep the most telling terms of a long query: by weight x idf. */
void rank_weigh_terms(struct rank_query *rq, long total_chunks)
{
	sqlite3_stmt *st, *vocab = NULL;
	size_t i, j;

	/*
	 * A term's document count: term_df has the common ones (fts5vocab
	 * walks a term's whole doclist to count it: 8 ms for "struct" on 137k
	 * chunks), fts5vocab the rest.
	 */
	st = rank_stmt(rq->r, "SELECT df FROM term_df WHERE term = ?1");
	for (i = 0; i < rq->terms_nr; i++) {
		sqlite3_bind_text(st, 1, rq->terms[i].text, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			rq->terms[i].df = sqlite3_column_int64(st, 0);
		} else {
			if (!vocab) {
				if (sqlite3_exec(rq->db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ci_vocab "
						 "USING fts5vocab(main, chunks_fts, row)", NULL, NULL, NULL) != SQLITE_OK)
					die("index: %s", sqlite3_errmsg(rq->db));
				vocab = rank_stmt(rq->r, "SELECT doc FROM temp.ci_vocab WHERE term = ?1");
			}
			sqlite3_bind_text(vocab, 1, rq->terms[i].text, -1, SQLITE_STATIC);
			rq->terms[i].df = sqlite3_step(vocab) == SQLITE_ROW ? sqlite3_column_int64(vocab, 0) : 0;
			sqlite3_reset(vocab);
		}
		sqlite3_reset(st);
	}
	rank_stmt_done(rq->r, st);
	rank_stmt_done(rq->r, vocab);
	/* drop terms the index does not hold; order by weight x idf */
	for (i = j = 0; i < rq->terms_nr; i++) {
		if (!rq->terms[i].df) {
			free(rq->terms[i].text);
			free(rq->terms[i].orig);
			continue;
		}
		rq->terms[j++] = rq->terms[i];
	}
	rq->terms_nr = j;
	for (i = 0; i < rq->terms_nr; i++) {
		double idf = log(1.0 + (double)(total_chunks - rq->terms[i].df + 0.5) / (rq->terms[i].df + 0.5));
		rq->terms[i].weight *= idf;
	}
	for (i = 1; i < rq->terms_nr; i++)
		for (j = i; j && rq->terms[j - 1].weight < rq->terms[j].weight; j--) {
			struct rank_term t = rq->terms[j];
			rq->terms[j] = rq->terms[j - 1];
			rq->terms[j - 1] = t;
		}
	if (rq->terms_nr > 32) {
		for (i = 32; i < rq->terms_nr; i++) {
			free(rq->terms[i].text);
			free(rq->terms[i].orig);
		}
		rq->terms_nr = 32;
	}
}

const char *const rank_intent_name[INTENT_MAX] = { "name", "concept", "issue", "config", "wiring", "flow" };
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
const double rank_weights[INTENT_MAX][SIG_MAX] = {
	[INTENT_NAME] = { 1.0, 3.0, 1.0, 0.3, 0.2, 0.5 },
	[INTENT_CONCEPT] = { 1.5, 0.7, 0.7, 0.3, 0.2, 2.0 },
	[INTENT_ISSUE] = { 2.0, 0.7, 1.0, 0.3, 0.1, 0.3 },
	[INTENT_CONFIG] = { 1.0, 0.5, 2.0, 0.3, 0.2, 1.0 },
	[INTENT_WIRING] = { 1.0, 1.0, 0.7, 1.5, 0.2, 1.0 },
	[INTENT_FLOW] = { 1.0, 1.5, 0.5, 1.0, 0.2, 1.0 },
};

int rank_has_word(const char *q, const char *const *words)
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

enum rank_intent rank_classify(const char *q)
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
		return INTENT_ISSUE;
	if (words == 1)
		return INTENT_NAME;
	if (rank_has_word(q, config))
		return INTENT_CONFIG;
	if (rank_has_word(q, wiring))
		return INTENT_WIRING;
	if (rank_has_word(q, flow))
		return INTENT_FLOW;
	return INTENT_CONCEPT;
}

int rank_wants_tests(const char *q)
{
	static const char *const w[] = { "test", "tests", "unittest", "conftest", "testcase",
		"fixture", "fixtures", "spec", "specs", NULL };
	return rank_has_word(q, w) && (strstr(q, "test_") || strstr(q, "tests/") || strstr(q, "conftest") ||
				  (strlen(q) < 120 && rank_has_word(q, w)));
}

const char *const rank_sig_name[SIG_MAX] = {
	"keyword", "symbol", "path", "structure", "change", "semantic"
};

/* What the answer may hold: --scope, else what the query's words ask for. */
static void query_scope(struct rank_query *rq)
{
	const char *scope = rq->o->scope;

	if (scope) {
		rq->scope_tests = strcmp(scope, "impl") != 0;
		rq->scope_impl = strcmp(scope, "test") != 0;
		rq->scope_docs = !strcmp(scope, "all");
	} else {
		static const char *const doc_words[] = { "doc", "docs", "documentation", "readme",
			"changelog", "guide", "tutorial", NULL };
		/*
		 * An issue report describes behaviour; its examples are often tests
		 * and it may mention the docs, but the code to change is the
		 * implementation: tests and docs only when a short query asks for them.
		 */
		rq->scope_tests = rq->intent != INTENT_ISSUE && rank_wants_tests(rq->text);
		rq->scope_impl = 1;
		rq->scope_docs = rq->intent != INTENT_ISSUE && rank_has_word(rq->text, doc_words);
	}
}

int rank_query_signals(struct rank_query *rq)
{
	struct qvec_job qjob;
	struct rank_segments segs;
	const char *mode = rq->o->mode;
	/*
	 * The semantic signal: in semantic mode, and in hybrid mode with the
	 * hand-set fusion or a learned one that reads it (fusion.c)
	 */
	int sem = strcmp(mode, "keyword") != 0, vectors;

	/* first: the query's vector and the scan of the vectors run meanwhile */
	rank_tr(rq, "opened");
	memset(&qjob, 0, sizeof(qjob));
	qjob.snap_rc = 1;
	/* the parts of the query: the signals read its text less logs and listings */
	rank_segment(rq->given, strlen(rq->given), &segs);
	free(rq->clean);
	rq->text = rq->clean = rank_segments_text(rq->given, &segs, RANK_QUERY_TEXT_MAX);
	/* without vectors the signal still runs (semantic mode says so), with nothing started */
	vectors = sem && rank_has_vectors(rq);
	if (vectors && !strcmp(mode, "hybrid") && rq->o->learned && (rq->o->model || rq->o->model_json) &&
	    (sem = rank_model_reads_semantic(rq->o)) < 0) {
		rank_segments_release(&segs);
		return -1;
	}
	if (vectors && sem)
		rank_semantic_start(rq, &qjob, rq->text);
	rank_parse_query(rq, rq->given, &segs);
	rank_segments_release(&segs);
	rank_weigh_terms(rq, rq->r->total_chunks);
	rq->intent = rank_classify(rq->text);
	rq->w = rank_weights[rq->intent];
	query_scope(rq);

	rank_tr(rq, "weigh");
	if (strcmp(mode, "semantic")) {
		rank_signal_keyword(rq, rq->r->total_chunks);
		rank_tr(rq, "keyword");
		rq->used[SIG_KEYWORD] = 1;
		if (!strcmp(mode, "hybrid")) {
			rank_signal_symbol(rq);
			rank_tr(rq, "symbol");
			rq->used[SIG_SYMBOL] = 1;
			rank_signal_path(rq);
			rank_tr(rq, "path");
			rq->used[SIG_PATH] = 1;
			rq->used[SIG_STRUCTURE] = rank_signal_structure(rq);
			rank_tr(rq, "structure");
			rq->used[SIG_CHANGE] = rank_signal_change(rq);
			rank_tr(rq, "change");
		}
	}
	if (sem && (rq->used[SIG_SEMANTIC] = rank_signal_semantic(rq, &qjob)) < 0)
		return -1;	/* the index's vectors are of another model: said */
	rank_tr(rq, "semantic");
	if (!strcmp(mode, "semantic") && !rq->used[SIG_SEMANTIC])
		return error("semantic search needs vectors in the index and the model: run "
			     "'ci-chunk | ci-embed | ci-index load', or use --mode keyword");
	return 0;
}
