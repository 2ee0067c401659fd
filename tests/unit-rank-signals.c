/*
 * unit-rank-signals.c: TAP tests of libcommon/rank's ranker without a
 * command: the keyword signal (BM25 per field) on a tiny index made in memory
 * with the project's schema, through the public calls a command makes; the
 * hybrid signals there (a definition, an import, a traceback frame); and the
 * fusion, given signal values: the weighted reciprocal rank's order and
 * scores worked out by hand, and the learned fusion's order under a model
 * that prefers other files.
 */
#include "core/common.h"
#include "index/index.h"
#include "rank/signal.h"

#include <math.h>

extern const char ci_schema_sql[];	/* share/schema.sql, compiled in */

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

static void exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		die("%s: %s", sql, err ? err : "?");
}

/* A file of one chunk: blob id, path, the chunk's name and text. */
static void add_file(sqlite3 *db, int id, const char *path, const char *name, const char *text)
{
	char *sql = sqlite3_mprintf(
		"INSERT INTO blobs(id, blob, lang, size, lines, exact) VALUES (%d, '%040d', 'c', %d, 3, 1);"
		"INSERT INTO files(path, blob_id, size, mtime) VALUES (%Q, %d, %d, 0);"
		"INSERT INTO chunks(id, blob_id, start_line, end_line, kind, name, scope, signature, text) "
		"VALUES (%d, %d, 1, 3, 'function', %Q, NULL, NULL, ci_deflate(%Q));",
		id, id, (int)strlen(text), path, id, (int)strlen(text), id, id, name, text);

	exec(db, sql);
	sqlite3_free(sql);
}

static sqlite3 *tiny_index(void)
{
	sqlite3 *db;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK || index_register_functions(db))
		die("cannot open an index in memory");
	exec(db, ci_schema_sql);
	add_file(db, 1, "src/net.c", "connect", "open a socket and connect to the server");
	add_file(db, 2, "src/retry.c", "retry_backoff",
		 "retry with backoff: the backoff doubles after each retry, the retry count is kept");
	add_file(db, 3, "src/log.c", "log_retry", "log each retry of a request");
	add_file(db, 4, "src/util.c", "xmalloc", "allocate memory or die");
	exec(db, "INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')");
	return db;
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const struct rank_cand *cand_of(const struct rank_query *rq, const char *path)
{
	for (size_t i = 0; i < rq->cands_nr; i++)
		if (!strcmp(rq->cands[i].path, path))
			return &rq->cands[i];
	return NULL;
}

static void test_keyword(void)
{
	sqlite3 *db = tiny_index();
	struct ranker r;
	struct rank_opts o;
	struct rank_query rq;
	struct buf out = BUF_INIT;
	const struct rank_cand *retry, *log;

	ranker_init(&r, db, ":memory:", NULL, NULL);
	ok(r.total_chunks == 4, "the ranker reads the number of chunks from FTS5");
	rank_opts_init(&o);
	o.mode = "keyword";
	o.learned = 0;
	rank_query_init(&rq, &r, &o, "retry backoff");
	ok(rank_query_signals(&rq) == 0 && rq.used[SIG_KEYWORD] && !rq.used[SIG_SEMANTIC],
	   "keyword mode: the keyword signal alone");
	ok(rq.terms_nr == 2, "two terms the index holds");
	ok(rq.cands_nr == 2 && !cand_of(&rq, "src/net.c") && !cand_of(&rq, "src/util.c"),
	   "the candidates: the chunks holding a term, no other");
	retry = cand_of(&rq, "src/retry.c");
	log = cand_of(&rq, "src/log.c");
	ok(retry && log && retry->rank[SIG_KEYWORD] == 1 && log->rank[SIG_KEYWORD] == 2,
	   "BM25: the chunk holding both terms, and the more often, first");
	ok(retry && log && retry->sig[SIG_KEYWORD] == 1.0 && log->sig[SIG_KEYWORD] > 0 &&
	   log->sig[SIG_KEYWORD] < 1.0, "the best chunk and file score 1, the other less");
	rank_query_fuse(&rq);
	ok(!strcmp(rq.cands[0].path, "src/retry.c") && !strcmp(rq.cands[1].path, "src/log.c"),
	   "fused: the same order");
	ok(rq.intent == INTENT_CONCEPT && fabs(rq.cands[0].fused - 1.5 / 61) < 1e-12 &&
	   fabs(rq.cands[1].fused - 1.5 / 62) < 1e-12 && fabs(rq.max_fused - 1.5 / 61) < 1e-12,
	   "fused: weight / (60 + rank), the concept intent's keyword weight 1.5");
	ok(rank_write_hits(&rq, &out) == EXIT_OK && starts_with(out.buf,
	   "{\"_type\":\"hit\",\"path\":\"src/retry.c\",\"start_line\":1,\"end_line\":3,"
	   "\"kind\":\"function\",\"name\":\"retry_backoff\",\"scope\":null,\"lang\":\"c\",\"score\":1,"),
	   "the first hit record: the chunk, score 1");
	ok(strstr(out.buf, "\"_type\":\"summary\"") && strstr(out.buf, "\"count\":2,") &&
	   strstr(out.buf, "\"signals\":[\"keyword\"]"), "the summary: two hits, the signal used");
	rank_query_release(&rq);
	buf_release(&out);

	/* the same ranker serves a second query */
	rank_query_init(&rq, &r, &o, "socket");
	ok(rank_query_signals(&rq) == 0 && rq.cands_nr == 1 && !strcmp(rq.cands[0].path, "src/net.c"),
	   "a second query on the same ranker");
	rank_query_release(&rq);
	sqlite3_close(db);
}

/* The hybrid signals on the same index: a definition, an import, a traceback frame. */
static void test_hybrid(void)
{
	sqlite3 *db = tiny_index();
	struct ranker r;
	struct rank_opts o;
	struct rank_query rq;
	const struct rank_cand *retry, *log;

	exec(db, "INSERT INTO defs(blob_id, name, kind, line, col, end_line) VALUES (2, 'retry_backoff', 'function', 1, 0, 3);"
		 "INSERT INTO imports(path, target, resolved, line) VALUES ('src/log.c', 'retry.h', 'src/retry.c', 1)");
	ranker_init(&r, db, ":memory:", NULL, NULL);
	rank_opts_init(&o);
	rank_query_init(&rq, &r, &o, "retry_backoff gives up too soon\n"
			"  File \"/home/me/proj/src/log.c\", line 2, in log_retry");
	ok(rank_query_signals(&rq) == 0 && rq.intent == INTENT_ISSUE, "hybrid: a text with a traceback is an issue");
	ok(rq.used[SIG_KEYWORD] && rq.used[SIG_SYMBOL] && rq.used[SIG_PATH] && rq.used[SIG_STRUCTURE] &&
	   !rq.used[SIG_CHANGE] && !rq.used[SIG_SEMANTIC],
	   "hybrid: no history, no vectors: keyword, symbol, path and structure");
	ok(rq.frames_nr == 1 && rank_frame_names(&rq, "src/log.c") && rank_frame_names(&rq, "log.c") && !rank_frame_names(&rq, "og.c") &&
	   !rank_frame_names(&rq, "src/net.c"), "the traceback frame names src/log.c, at a '/'");
	retry = cand_of(&rq, "src/retry.c");
	log = cand_of(&rq, "src/log.c");
	ok(retry && retry->sig[SIG_SYMBOL] > 0.5 && retry->rank[SIG_SYMBOL] == 0 && log && log->sig[SIG_SYMBOL] == 0,
	   "symbol: the chunk that defines retry_backoff, named so (ranked at the fusion)");
	ok(log && log->sig[SIG_PATH] == 1.0 && retry && retry->sig[SIG_PATH] == 0.8,
	   "path: the file of the traceback frame 1, a file whose name is a term 0.8");
	ok(retry && log && retry->sig[SIG_STRUCTURE] == 1.0 && log->sig[SIG_STRUCTURE] > 0 &&
	   log->sig[SIG_STRUCTURE] < 1.0, "structure: the file the other imports is the centre");
	rank_query_fuse(&rq);
	ok(!strcmp(rq.cands[0].path, "src/retry.c") && !strcmp(rq.cands[1].path, "src/log.c"),
	   "fused: the definition first, the frame's file next");
	rank_query_release(&rq);
	sqlite3_close(db);
}

/* A candidate of file path, the only one of its file. */
static struct rank_cand *cand(struct rank_query *rq, sqlite3_int64 id, const char *path)
{
	return rank_add_cand_vals(rq, id, id, path, "c", 1, 10 * id, "function", NULL, NULL);
}

static void test_fusion(void)
{
	static const char model[] =
		"{\"format\":\"ci-rank-linear/1\",\"bias\":-5,\"features\":["
		"{\"name\":\"path\",\"mean\":0,\"scale\":1,\"weight\":10},"
		"{\"name\":\"keyword\",\"mean\":0,\"scale\":1,\"weight\":2}]}";
	struct ranker r;
	struct rank_opts o;
	struct rank_query rq;
	struct rank_cand *a, *b, *c, *d;
	const char *order_rrf[] = { "c.c", "b.c", "a.c", "d.c" };
	const char *order_learned[] = { "c.c", "a.c", "b.c", "d.c" };
	int same = 1;
	double p;

	memset(&r, 0, sizeof(r));
	rank_opts_init(&o);
	o.learned = 1;
	o.model_json = model;
	rank_query_init(&rq, &r, &o, "x");
	rq.intent = INTENT_NAME;	/* weights: keyword 1, symbol 3, path 1 */
	rq.w = rank_weights[rq.intent];
	rq.used[SIG_KEYWORD] = rq.used[SIG_SYMBOL] = rq.used[SIG_PATH] = 1;
	rq.scope_impl = 1;
	a = cand(&rq, 1, "a.c");
	b = cand(&rq, 2, "b.c");
	c = cand(&rq, 3, "c.c");
	d = cand(&rq, 4, "d.c");
	/* the keyword signal ranks its own candidates */
	a->sig[SIG_KEYWORD] = 0.9, a->rank[SIG_KEYWORD] = 1;
	b->sig[SIG_KEYWORD] = 0.7, b->rank[SIG_KEYWORD] = 2;
	d->sig[SIG_KEYWORD] = 0.5, d->rank[SIG_KEYWORD] = 3;
	b->sig[SIG_SYMBOL] = 0.6;
	c->sig[SIG_SYMBOL] = 1.0;
	c->sig[SIG_PATH] = 0.8;
	rank_query_fuse(&rq);
	for (int i = 0; i < 4; i++)
		same &= !strcmp(rq.cands[i].path, order_rrf[i]);
	ok(same, "rrf: c (symbol 1st, path 1st), b (keyword 2nd, symbol 2nd), a, d");
	ok(fabs(rq.cands[0].fused - (3.0 / 61 + 1.0 / 61)) < 1e-12 &&
	   fabs(rq.cands[1].fused - (1.0 / 62 + 3.0 / 62)) < 1e-12 &&
	   fabs(rq.cands[2].fused - 1.0 / 61) < 1e-12 && fabs(rq.cands[3].fused - 1.0 / 63) < 1e-12,
	   "rrf: sum of weight / (60 + rank)");
	ok(rq.cands[0].rank[SIG_SYMBOL] == 1 && rq.cands[1].rank[SIG_SYMBOL] == 2 && rq.cands[0].rank[SIG_PATH] == 1,
	   "rrf: the other signals ranked by their values");
	ok(fabs(rq.max_fused - 5.0 / 61) < 1e-12, "rrf: the best score there can be, sum of weights / 61");

	ok(rank_learned_fusion(&rq) == 0, "learned: the model given");
	same = 1;
	for (int i = 0; i < 4; i++)
		same &= !strcmp(rq.cands[i].path, order_learned[i]);
	ok(same, "learned: c (path), then by keyword value: a, b, d");
	p = 1 / (1 + exp(-(-5 + 10 * 0.8)));
	ok(fabs(rq.cands[0].learned_p - p) < 1e-12 &&
	   fabs(rq.cands[0].fused - rq.max_fused * (0.001 + 0.999 * p)) < 1e-12,
	   "learned: the probability of the logit, the score from it");
	ok(fabs(rq.cands[1].rrf_score - (1.0 / 61) / (5.0 / 61)) < 1e-12,
	   "learned: the rrf score it replaced, kept for --explain");
	rank_query_release(&rq);

	o.model_json = "{\"format\":\"other\"}";
	rank_query_init(&rq, &r, &o, "x");
	rq.w = rank_weights[INTENT_NAME];
	rq.used[SIG_KEYWORD] = rq.scope_impl = 1;
	cand(&rq, 1, "a.c")->rank[SIG_KEYWORD] = 1;
	rank_query_fuse(&rq);
	ok(rank_learned_fusion(&rq) < 0, "learned: a model of another format is refused");
	rank_query_release(&rq);
}

/* The kind of the span holding the first byte of what in q. */
static int kind_at(const char *q, const struct rank_segments *sg, const char *what)
{
	const char *at = strstr(q, what);
	size_t off;

	if (!at)
		return -1;
	off = (size_t)(at - q);
	for (size_t i = 0; i < sg->nr; i++)
		if (off >= sg->v[i].off && off < sg->v[i].off + sg->v[i].len)
			return (int)sg->v[i].kind;
	return -1;
}

static double term_weight(const struct rank_query *rq, const char *t)
{
	for (size_t i = 0; i < rq->terms_nr; i++)
		if (!strcmp(rq->terms[i].text, t))
			return rq->terms[i].weight;
	return 0;
}

/* The parts of an issue text (segment.c) and what the terms take of each. */
static void test_segment(void)
{
	static const char issue[] =
		"\n"
		"Session cookie not refreshed after login\n"
		"<!--\n"
		"Thanks for submitting an issue! templatechecklist\n"
		"-->\n"
		"When `refresh_session` runs, the cookie keeps its old expiry.\n"
		"\n"
		"```python\n"
		"s = Session()\n"
		"s.refresh_session()\n"
		"```\n"
		"\n"
		"Traceback (most recent call last):\n"
		"  File \"/src/app/sessions.py\", line 12, in refresh_session\n"
		"    expiry = compute_expiry(now)\n"
		"ValueError: bad expiry\n"
		"\n"
		"```\n"
		"$ pytest -rsx test_cookie.py\n"
		"============ test session starts ============\n"
		"platform linux -- Python 3.11.2, pytest-7.4.0\n"
		"test_cookie.py F                       [100%]\n"
		"2024-05-01 10:00:01 INFO queueworker started\n"
		"```\n"
		"\n"
		"```console\n"
		"py311: install_deps> python -I -m pip install cookiejarring [tox/execute/api.py:286]\n"
		"Traceback (most recent call last):\n"
		"  File \"/src/app/cookies.py\", line 3, in load_jar\n"
		"KeyError: jar\n"
		"```\n"
		"~~~ text {.wrap}\n"
		"plain printed cookiemonsterline\n"
		"~~~\n"
		"```Python\n"
		"session.expire_now()\n"
		"```\n"
		"\n"
		"## Versions\n"
		"\n"
		"requests 2.31.0\n"
		"numpy==1.26.0\n"
		"somepackagename 0.1\n"
		"\n"
		"Signed-off-by: A Person <a@example.org>\n";
	struct rank_segments sg;
	struct rank_query rq;
	struct rank_opts o;
	char *text;

	rank_segment(issue, strlen(issue), &sg);
	ok(kind_at(issue, &sg, "Session cookie") == SEG_TITLE, "segment: the first line with words is the title");
	ok(kind_at(issue, &sg, "Thanks for") == SEG_NOISE, "segment: an HTML comment is noise");
	ok(kind_at(issue, &sg, "When `refresh") == SEG_PROSE, "segment: prose");
	ok(kind_at(issue, &sg, "s = Session") == SEG_CODE, "segment: a fenced block is code");
	ok(kind_at(issue, &sg, "```python") == SEG_NOISE, "segment: a fence line is noise");
	ok(kind_at(issue, &sg, "Traceback") == SEG_TRACE && kind_at(issue, &sg, "    expiry") == SEG_TRACE &&
	   kind_at(issue, &sg, "ValueError") == SEG_TRACE, "segment: a traceback to its exception line");
	ok(kind_at(issue, &sg, "$ pytest") == SEG_LOG && kind_at(issue, &sg, "=====") == SEG_LOG &&
	   kind_at(issue, &sg, "platform linux") == SEG_LOG && kind_at(issue, &sg, "test_cookie.py F") == SEG_LOG &&
	   kind_at(issue, &sg, "2024-05-01") == SEG_LOG, "segment: a prompt, a banner, test output and log lines are log");
	ok(kind_at(issue, &sg, "py311: install_deps") == SEG_LOG && kind_at(issue, &sg, "plain printed") == SEG_LOG &&
	   kind_at(issue, &sg, "session.expire_now") == SEG_CODE,
	   "segment: a ```console or ~~~ text block is log, a ```Python one code");
	ok(kind_at(issue, &sg, "  File \"/src/app/cookies.py") == SEG_TRACE && kind_at(issue, &sg, "KeyError: jar") == SEG_TRACE,
	   "segment: a traceback in a console block is a traceback");
	ok(kind_at(issue, &sg, "## Versions") == SEG_ENV && kind_at(issue, &sg, "requests 2.31") == SEG_ENV &&
	   kind_at(issue, &sg, "numpy==") == SEG_ENV, "segment: a versions section is env");
	ok(kind_at(issue, &sg, "Signed-off-by") == SEG_NOISE, "segment: a commit trailer is noise");
	{
		size_t covered = 0;
		for (size_t i = 0; i < sg.nr; i++)
			covered += sg.v[i].len;
		ok(covered == strlen(issue) && sg.v[0].off == 0, "segment: the spans cover the text");
	}
	text = rank_segments_text(issue, &sg, 1 << 16);
	ok(strstr(text, "Session cookie") && strstr(text, "compute_expiry") && !strstr(text, "queueworker") &&
	   !strstr(text, "numpy") && !strstr(text, "templatechecklist"),
	   "segment: the signals' text keeps title, prose, code and trace, not log, env or comments");
	free(text);
	text = rank_segments_text(issue, &sg, 20);
	ok(strlen(text) <= 20, "segment: the signals' text stays within its limit");
	free(text);

	rank_opts_init(&o);
	memset(&rq, 0, sizeof(rq));
	rq.o = &o;
	rq.text = rq.given = issue;
	rank_parse_query(&rq, issue, &sg);
	ok(term_weight(&rq, "refresh_session") > 0 && term_weight(&rq, "compute_expiry") > 0,
	   "terms: identifiers of prose, code and trace");
	ok(term_weight(&rq, "numpy") == 0 && term_weight(&rq, "somepackagename") == 0 &&
	   term_weight(&rq, "templatechecklist") == 0, "terms: nothing of env listings or template comments");
	ok(term_weight(&rq, "queueworker") > 0 && term_weight(&rq, "queueworker") < 1,
	   "terms: a log line's word weighs a quarter");
	ok(rq.frames_nr == 2 && !strcmp(rq.frames[0], "/src/app/sessions.py") && !strcmp(rq.frames[1], "/src/app/cookies.py"),
	   "terms: the tracebacks' frames, one in a console block too");
	ok(term_weight(&rq, "cookiejarring") > 0 && term_weight(&rq, "cookiejarring") < 1 &&
	   term_weight(&rq, "cookiemonsterline") > 0 && term_weight(&rq, "cookiemonsterline") < 1 &&
	   term_weight(&rq, "expire_now") >= 1, "terms: a console or text block's words weigh as a log's");
	ok(term_weight(&rq, "login") == rank_seg_weight[SEG_TITLE] && rank_seg_weight[SEG_TITLE] == 6,
	   "terms: a word of the title weighs 6 (the default)");
	rank_query_release(&rq);
	memset(&rq, 0, sizeof(rq));
	o.seg_weight[SEG_TITLE] = 1;
	o.seg_weight[SEG_LOG] = 0;
	rq.o = &o;
	rq.text = rq.given = issue;
	rank_parse_query(&rq, issue, &sg);
	ok(term_weight(&rq, "login") == 1 && term_weight(&rq, "queueworker") == 0 && term_weight(&rq, "compute_expiry") > 0,
	   "terms: the options' weights (--segment-weight title=1 log=0)");
	rank_opts_init(&o);
	rank_segments_release(&sg);
	rank_query_release(&rq);

	/* a pasted log of one word many times, and a megabyte of distinct words */
	{
		struct buf b = BUF_INIT;

		buf_addstr(&b, "Worker stalls under load\n```\n");
		for (int i = 0; i < 5000; i++)
			buf_addstr(&b, "2024-05-01 10:00:01 INFO heartbeat heartbeat\n");
		buf_addstr(&b, "```\n");
		for (int i = 0; buf_addf(&b, "word%c%c%c%c ", 'a' + i % 26, 'a' + i / 26 % 26,
					 'a' + i / 676 % 26, 'a' + i / 17576 % 26), b.len < (1u << 20); i++)
			;
		rank_segment(b.buf, b.len, &sg);
		memset(&rq, 0, sizeof(rq));
		rq.o = &o;
		rq.text = rq.given = b.buf;
		rank_parse_query(&rq, b.buf, &sg);
		ok(term_weight(&rq, "heartbeat") > 0 && term_weight(&rq, "heartbeat") <= 0.5 + 1e-9,
		   "terms: what a log adds to a word is capped");
		ok(rq.terms_nr <= 2048 && term_weight(&rq, "stalls") > 0,
		   "terms: a megabyte query keeps at most 2,048 terms, its title's among them");
		rank_segments_release(&sg);
		rank_query_release(&rq);
		buf_release(&b);
	}
}

/* File names the query gives: "run_trace.py", "src/log.c", "./setup.cfg"; not URLs, versions, dotted words. */
static void test_mentions(void)
{
	static const char *q = "debug: more convenient lab/run_trace.py, see ./setup.cfg and\n"
			       "https://example.com/x/page.html (v3.14; os.path.join; ../../src/log.c. and ellipsis...)\n"
			       "also run_trace.py again, and /home/me/proj/pkg/mod.py; .coveragerc";
	struct rank_segments sg;
	struct rank_opts o;
	struct rank_query rq;
	int bigger = 0;

	rank_opts_init(&o);
	rank_segment(q, strlen(q), &sg);
	memset(&rq, 0, sizeof(rq));
	rq.o = &o;
	rq.text = rq.given = q;
	rank_parse_query(&rq, q, &sg);
	ok(rq.mentions_nr == 6, "mentions: six distinct file names (a dotted word among them)");
	ok(rank_mentions_name(&rq, "lab/run_trace.py") && rank_mentions_name(&rq, "setup.cfg") &&
	   rank_mentions_name(&rq, "src/log.c") && rank_mentions_name(&rq, "x/src/log.c") &&
	   rank_mentions_name(&rq, "pkg/mod.py") && rank_mentions_name(&rq, "run_trace.py") &&
	   rank_mentions_name(&rq, "other/run_trace.py"),
	   "mentions: a file whose path ends with a name given, or whose path a given one ends with, at a '/'");
	ok(!rank_mentions_name(&rq, "lab/xrun_trace.py") && !rank_mentions_name(&rq, "x/page.html") &&
	   !rank_mentions_name(&rq, "os.path") && !rank_mentions_name(&rq, "g.c") &&
	   !rank_mentions_name(&rq, "proj/mod.py") && !rank_mentions_name(&rq, ".coveragerc"),
	   "mentions: not a longer name, a URL's, a dotted word, a part of a name, another directory, a dot file");
	ok(rank_path_named("pkg/mod.py", "src/pkg/mod.py") && rank_path_named("/a/src/pkg/mod.py", "src/pkg/mod.py") &&
	   !rank_path_named("kg/mod.py", "src/pkg/mod.py") && !rank_path_named("/a/xsrc/pkg/mod.py", "src/pkg/mod.py"),
	   "mentions: the match is at a '/' either way");
	rank_segments_release(&sg);
	rank_query_release(&rq);

	/* more names than are kept: the first 256, each distinct */
	{
		struct buf b = BUF_INIT;

		for (int i = 0; i < 1000; i++)
			buf_addf(&b, "f%d.py ", i);
		rank_segment(b.buf, b.len, &sg);
		memset(&rq, 0, sizeof(rq));
		rq.o = &o;
		rq.text = rq.given = b.buf;
		rank_parse_query(&rq, b.buf, &sg);
		for (size_t i = 1; i < rq.mentions_nr; i++)
			bigger += strcmp(rq.mentions[i - 1], rq.mentions[i]) >= 0;
		ok(rq.mentions_nr == 256 && !bigger && rank_mentions_name(&rq, "a/f0.py") && rank_mentions_name(&rq, "f255.py") &&
		   !rank_mentions_name(&rq, "f256.py"), "mentions: at most 256 a query, in file name order");
		rank_segments_release(&sg);
		rank_query_release(&rq);
		buf_release(&b);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	util_init(argv[0]);
	test_keyword();
	test_hybrid();
	test_fusion();
	test_segment();
	test_mentions();
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
