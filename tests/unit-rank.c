/*
 * unit-rank.c: TAP tests of libcommon/rank: reading a model (and refusing
 * what is not one), the logit and probability it gives a feature vector
 * (worked out by hand), the calibration of a top file's logit (Platt and
 * isotonic: values in [0, 1], non-decreasing; Platt with the margin over the
 * second file) and the with_vectors member, the
 * path priors, and the query's mentions of a path.
 */
#include "core/common.h"
#include "rank/model.h"

#include <math.h>

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

static int parses(const char *json)
{
	struct rank_model m;

	return rank_model_parse(&m, json, strlen(json), "test") == 0;
}

/* Is m's confidence in [0, 1] and non-decreasing in the logit, at this margin and files? */
static int confidence_rises(const struct rank_model *m, double margin, double files)
{
	double prev = -1;
	int mono = 1;

	for (double z = -40; z <= 40; z += 0.5) {
		double c = rank_model_confidence(m, z, margin, files);
		mono &= c >= prev && c >= 0 && c <= 1;
		prev = c;
	}
	return mono;
}

int main(int argc, char **argv)
{
	static const char model[] =
		"{\"format\":\"ci-rank-linear/1\",\"bias\":-1.5,\"features\":["
		"{\"name\":\"keyword_rr\",\"mean\":0.25,\"scale\":2,\"weight\":3},"
		"{\"name\":\"test\",\"mean\":0,\"scale\":1,\"weight\":-2}]}";
	struct rank_model m;
	struct rank_qwords qw;
	double x[RF_NR] = { 0 };
	char *big;

	(void)argc;
	util_init(argv[0]);

	ok(rank_model_parse(&m, model, strlen(model), "test") == 0 && m.used == 2, "a model of two features");
	x[RF_RR + 0] = 1;	/* keyword rank 1 */
	x[RF_SIG + 1] = 0.9;	/* a feature the model does not name weighs 0 */
	/* -1.5 + 3 * (1 - 0.25) * 2 = 3 */
	ok(fabs(rank_model_logit(&m, x) - 3.0) < 1e-12, "logit: bias + weight * (x - mean) * scale");
	ok(fabs(rank_model_prob(&m, x) - 1 / (1 + exp(-3.0))) < 1e-12, "probability: the logistic of it");
	x[RF_TEST] = 1;
	ok(fabs(rank_model_logit(&m, x) - 1.0) < 1e-12, "a test file: -2 more");
	x[RF_RR + 0] = 1e6;
	ok(rank_model_prob(&m, x) <= 1.0 && rank_model_prob(&m, x) > 0.999, "a huge logit: 1, not NaN");
	x[RF_RR + 0] = -1e6;
	ok(rank_model_prob(&m, x) >= 0.0 && rank_model_prob(&m, x) < 1e-9, "a very negative one: 0");

	{
		static const char platt[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			"\"calibration\":{\"method\":\"platt\",\"a\":0.5,\"b\":-1},"
			"\"with_vectors\":{\"bias\":2,\"features\":[{\"name\":\"semantic_rr\",\"mean\":0,"
			"\"scale\":1,\"weight\":1}],\"calibration\":{\"method\":\"isotonic\","
			"\"x\":[-1,0,2],\"y\":[0.1,0.5,0.9]}}}";
		double prev = -1, z;
		int mono = 1;

		ok(rank_model_parse(&m, platt, strlen(platt), "test") == 0 && m.cal == RANK_CAL_PLATT &&
		   m.bias == 0 && m.used == 0, "no vectors: the top-level model, a Platt calibration");
		/* logistic(0.5 * 2 - 1) = 0.5 */
		ok(fabs(rank_model_confidence(&m, 2, RANK_CAL_MARGIN_CAP, 1) - 0.5) < 1e-12, "Platt: the logistic of a z + b");
		for (z = -50; z <= 50; z += 0.25) {
			double c = rank_model_confidence(&m, z, RANK_CAL_MARGIN_CAP, 1);
			mono &= c >= prev && c >= 0 && c <= 1;
			prev = c;
		}
		ok(mono, "Platt: in [0, 1] and non-decreasing in the logit");
		ok(rank_model_parse_for(&m, platt, strlen(platt), "test", 1) == 0 && m.bias == 2 &&
		   m.used == 1 && m.cal == RANK_CAL_ISOTONIC && m.cal_nr == 3, "vectors: the with_vectors member");
		ok(rank_model_confidence(&m, -5, RANK_CAL_MARGIN_CAP, 1) == 0.1 &&
		   rank_model_confidence(&m, 9, RANK_CAL_MARGIN_CAP, 1) == 0.9 &&
		   fabs(rank_model_confidence(&m, 1, RANK_CAL_MARGIN_CAP, 1) - 0.7) < 1e-12,
		   "isotonic: constant beyond the ends, linear between");
		prev = -1;
		mono = 1;
		for (z = -3; z <= 3; z += 0.125) {
			double c = rank_model_confidence(&m, z, RANK_CAL_MARGIN_CAP, 1);
			mono &= c >= prev && c >= 0 && c <= 1;
			prev = c;
		}
		ok(mono, "isotonic: in [0, 1] and non-decreasing");
		{
			/* at the last knot exactly: 0.3 + 1 * (0.9 - 0.3) must not exceed the 0.9 beyond it */
			static const char iso[] =
				"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
				"\"calibration\":{\"method\":\"isotonic\",\"x\":[-2,0,2],\"y\":[0.1,0.3,0.9]}}";
			ok(rank_model_parse(&m, iso, strlen(iso), "test") == 0 &&
			   rank_model_confidence(&m, 2, RANK_CAL_MARGIN_CAP, 1) <= rank_model_confidence(&m, 30, RANK_CAL_MARGIN_CAP, 1),
			   "isotonic: at a knot, not above the value past it (found by fuzz-models)");
		}
		ok(rank_model_parse(&m, model, strlen(model), "test") == 0 && rank_model_confidence(&m, 1, RANK_CAL_MARGIN_CAP, 1) == -1,
		   "no calibration: -1");
		/* a model made before the history members: history changes nothing */
		ok(rank_model_parse_for(&m, platt, strlen(platt), "test", RANK_MEMBER_HISTORY) == 0 &&
		   m.bias == 0, "history, no with_history member: the top-level model");
		ok(rank_model_parse_for(&m, platt, strlen(platt), "test", RANK_MEMBER_VECTORS | RANK_MEMBER_HISTORY) == 0 &&
		   m.bias == 2, "vectors and history, no with_vectors_history member: with_vectors");
	}
	{
		/* a Platt map of the logit and the margin */
		static const char pm[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			"\"calibration\":{\"method\":\"platt\",\"a\":0.5,\"b\":-1,\"margin\":0.25}}";

		ok(rank_model_parse(&m, pm, strlen(pm), "test") == 0 && m.cal == RANK_CAL_PLATT &&
		   m.cal_margin_w == 0.25, "Platt with a margin");
		/* logistic(0.5 * 2 + 0.25 * 4 - 1) = logistic(1) */
		ok(fabs(rank_model_confidence(&m, 2, 4, 1) - 1 / (1 + exp(-1.0))) < 1e-12, "Platt: a z + c margin + b");
		ok(rank_model_confidence(&m, 2, 1e9, 1) == rank_model_confidence(&m, 2, RANK_CAL_MARGIN_CAP, 1) &&
		   rank_model_confidence(&m, 2, NAN, 1) == rank_model_confidence(&m, 2, RANK_CAL_MARGIN_CAP, 1),
		   "a margin over the cap (or not a number) counts as the cap");
		ok(confidence_rises(&m, 3, 1), "Platt with a margin: in [0, 1] and non-decreasing in the logit");
		ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			   "\"calibration\":{\"method\":\"platt\",\"a\":1,\"b\":0,\"margin\":\"x\"}}"),
		   "refused: a margin that is not a number");
		{
			static const char huge[] =
				"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
				"\"calibration\":{\"method\":\"platt\",\"a\":1e303,\"b\":0,\"margin\":1e308}}";
			double c;
			ok(rank_model_parse(&m, huge, strlen(huge), "test") == 0 &&
			   (c = rank_model_confidence(&m, -1e6, 10, 1)) >= 0 && c <= 1 &&
			   rank_model_confidence(&m, 1e6, 10, 1) == 1,
			   "huge weights: a confidence in [0, 1], not NaN (-inf + inf)");
		}
		ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			   "\"calibration\":{\"method\":\"platt\",\"a\":1,\"b\":0,\"margin\":-0.5}}"),
		   "refused: a negative margin weight (a wider lead would lower the confidence)");
	}
	{
		/* a Platt map of the logit, the margin and ln(files in the index) */
		static const char pf[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			"\"calibration\":{\"method\":\"platt\",\"a\":0.5,\"b\":1,\"margin\":0.25,\"files\":-0.5}}";

		ok(rank_model_parse(&m, pf, strlen(pf), "test") == 0 && m.cal == RANK_CAL_PLATT &&
		   m.cal_files_w == -0.5, "Platt with the files of the index");
		/* logistic(0.5 * 2 + 0.25 * 4 - 0.5 * ln(e^2) + 1) = logistic(2) */
		ok(fabs(rank_model_confidence(&m, 2, 4, exp(2)) - 1 / (1 + exp(-2.0))) < 1e-12,
		   "Platt: a z + c margin + d ln(files) + b");
		ok(rank_model_confidence(&m, 2, 4, 100) > rank_model_confidence(&m, 2, 4, 10000),
		   "a negative files weight: the same lead among more files is less sure");
		ok(rank_model_confidence(&m, 2, 4, 0) == rank_model_confidence(&m, 2, 4, 1) &&
		   rank_model_confidence(&m, 2, 4, NAN) == rank_model_confidence(&m, 2, 4, 1),
		   "no files (or not a number) counts as one");
		ok(confidence_rises(&m, 3, 5000), "Platt with files: in [0, 1] and non-decreasing in the logit");
		ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			   "\"calibration\":{\"method\":\"platt\",\"a\":1,\"b\":0,\"files\":\"x\"}}"),
		   "refused: a files weight that is not a number");
	}
	{
		static const char four[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			"\"with_vectors\":{\"bias\":1,\"features\":[]},"
			"\"with_history\":{\"bias\":2,\"features\":[{\"name\":\"change_rr\",\"mean\":0,"
			"\"scale\":1,\"weight\":3}]},"
			"\"with_vectors_history\":{\"bias\":4,\"features\":[]}}";
		double xf[RF_NR] = { 0 };
		int k, all = 1;

		for (k = 0; k < RANK_MEMBERS; k++) {
			int h = k & ~RANK_MEMBER_SEMANTIC;	/* no "semantic" member: as in hybrid mode */
			all &= rank_model_parse_for(&m, four, strlen(four), "test", k) == 0 &&
			       m.bias == (h == 0 ? 0 : h == RANK_MEMBER_VECTORS ? 1 : h == RANK_MEMBER_HISTORY ? 2 : 4);
		}
		ok(all, "each member by the signals that take part: none, vectors, history, both; "
		   "semantic mode without a semantic member: with_vectors");
		xf[RF_RR + 4] = 0.5;
		ok(rank_model_parse_for(&m, four, strlen(four), "test", RANK_MEMBER_HISTORY) == 0 &&
		   fabs(rank_model_logit(&m, xf) - 3.5) < 1e-12, "with_history weighs the change signal");
		fputs("# the error below is expected\n", stdout);
		fflush(stdout);
		static const char bad[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"with_history\":[]}";
		ok(rank_model_parse_for(&m, bad, strlen(bad), "test", 0) == -1,
		   "a member that is no object is refused");
	}

	{
		/* semantic mode's member: only for VECTORS | SEMANTIC */
		static const char sem[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			"\"with_vectors\":{\"bias\":1,\"features\":[]},"
			"\"semantic\":{\"bias\":5,\"features\":[{\"name\":\"semantic_rr\",\"mean\":0,"
			"\"scale\":1,\"weight\":2}],\"calibration\":{\"method\":\"platt\",\"a\":1,\"b\":-5}}}";
		double xs[RF_NR] = { 0 };

		ok(rank_model_parse_for(&m, sem, strlen(sem), "test", RANK_MEMBER_VECTORS | RANK_MEMBER_SEMANTIC) == 0 &&
		   m.bias == 5 && m.cal == RANK_CAL_PLATT, "semantic mode: the semantic member, its calibration");
		xs[RF_RR + 5] = 0.5;
		ok(fabs(rank_model_logit(&m, xs) - 6.0) < 1e-12, "the semantic member weighs its features");
		ok(rank_model_parse_for(&m, sem, strlen(sem), "test", RANK_MEMBER_VECTORS) == 0 && m.bias == 1 &&
		   m.cal == RANK_CAL_NONE, "hybrid mode with vectors: with_vectors, not the semantic member");
		ok(rank_model_parse_for(&m, sem, strlen(sem), "test", RANK_MEMBER_SEMANTIC) == 0 && m.bias == 0,
		   "semantic mode without vectors: the top level");
		ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"semantic\":1}"),
		   "a semantic member that is no object is refused (whatever the mode)");
	}

	{
		/* the chunk member: read from the document whatever the member chosen */
		static const char chunked[] =
			"{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
			"\"with_history\":{\"bias\":2,\"features\":[]},"
			"\"chunk\":{\"bias\":0.5,\"features\":[{\"name\":\"header\",\"mean\":0.25,"
			"\"scale\":2,\"weight\":-1},{\"name\":\"q_calls\",\"mean\":0,\"scale\":1,\"weight\":3}]}}";
		double xc[RC_NR] = { 0 };

		ok(rank_model_parse(&m, model, strlen(model), "test") == 0 && !m.chunk.on,
		   "a model without a chunk member: none");
		ok(rank_model_parse_for(&m, chunked, strlen(chunked), "test", RANK_MEMBER_HISTORY) == 0 &&
		   m.bias == 2 && m.chunk.on && m.chunk.used == 2, "the chunk member beside the member chosen");
		xc[RC_HEADER] = 1;
		xc[RC_LINES] = 7;	/* not in the model: weighs 0 */
		/* 0.5 - 1 * (1 - 0.25) * 2 = -1 */
		ok(fabs(rank_chunk_model_score(&m.chunk, xc) + 1.0) < 1e-12, "a class header: bias + weight * (x - mean) * scale");
		xc[RC_Q_CALLS] = 1;
		ok(fabs(rank_chunk_model_score(&m.chunk, xc) - 2.0) < 1e-12, "a chunk the query calls: 3 more");
		ok(!strcmp(rank_chunk_feat_name[RC_Q_FRAME], "q_frame") && !strcmp(rank_chunk_feat_name[RC_KEYWORD], "keyword"),
		   "the chunk features' names");
	}

	fputs("# the errors below are expected\n", stdout);
	fflush(stdout);
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"chunk\":{\"bias\":0,"
		   "\"features\":[{\"name\":\"fused_rr\",\"mean\":0,\"scale\":1,\"weight\":1}]}}"),
	   "a chunk member naming a file feature is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"chunk\":[]}"),
	   "a chunk member that is no object is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"chunk\":{\"features\":[]}}"),
	   "a chunk member without a bias is refused");
	ok(!parses("{"), "not JSON is refused");
	ok(!parses("{\"format\":\"other/2\",\"bias\":0,\"features\":[]}"), "another format is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[{\"name\":\"nope\","
		   "\"mean\":0,\"scale\":1,\"weight\":1}]}"), "an unknown feature is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[{\"name\":\"test\","
		   "\"mean\":0,\"scale\":1,\"weight\":\"x\"}]}"), "a weight that is no number is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"features\":[]}"), "no bias is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[\"keyword\"]}"),
	   "a feature that is not an object with a name is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
		   "\"calibration\":{\"method\":\"isotonic\",\"x\":[0,1],\"y\":[0.6,0.2]}}"),
	   "an isotonic calibration that falls is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
		   "\"calibration\":{\"method\":\"platt\",\"a\":-1,\"b\":0}}"),
	   "a Platt calibration that falls is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],"
		   "\"calibration\":{\"method\":\"other\"}}"), "another calibration method is refused");
	ok(!parses("{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[],\"with_vectors\":[]}"),
	   "a with_vectors that is not an object is refused");

	memset(x, 0, sizeof(x));
	rank_path_features("tests/unit/test_cart.py", x);
	ok(x[RF_TEST] == 1 && x[RF_DEPTH] == 2 && x[RF_EXAMPLE] == 0, "a test file, two directories down");
	memset(x, 0, sizeof(x));
	rank_path_features("CHANGES.rst", x);
	ok(x[RF_CHANGELOG] == 1 && x[RF_TEST] == 0 && x[RF_DEPTH] == 0, "a changelog");
	memset(x, 0, sizeof(x));
	rank_path_features("locale/fr/LC_MESSAGES/app.po", x);
	ok(x[RF_PO] == 1, "a translation");
	memset(x, 0, sizeof(x));
	rank_path_features("docs/examples/hello.py", x);
	ok(x[RF_EXAMPLE] == 1 && x[RF_VENDORED] == 0, "an example");
	memset(x, 0, sizeof(x));
	rank_path_features("src/_vendor/six.py", x);
	ok(x[RF_VENDORED] == 1, "a vendored file");
	memset(x, 0, sizeof(x));
	rank_path_features("web/app.min.js", x);
	ok(x[RF_GENERATED] == 1, "a minified file is generated");
	memset(x, 0, sizeof(x));
	rank_path_features("pkg/__init__.py", x);
	ok(x[RF_INIT] == 1 && x[RF_DEPTH] == 1, "a package's __init__.py");
	memset(x, 0, sizeof(x));
	rank_path_features("contest/latest.py", x);
	ok(x[RF_TEST] == 0, "a directory that only ends in 'test' is no test directory");

	rank_qwords_init(&qw, "Fix the Session cookie in SESSIONS.py, see flask/app.py; the session, again");
	memset(x, 0, sizeof(x));
	rank_query_names(&qw, "src/flask/sessions.py", x);
	ok(x[RF_Q_NAMES_FILE] == 1 && x[RF_Q_NAMES_DIR] == 1, "the query names the file and its directory");
	rank_query_names(&qw, "src/other/sessionsx.py", x);
	ok(x[RF_Q_NAMES_FILE] == 0 && x[RF_Q_NAMES_DIR] == 0, "a longer name is not named");
	rank_query_names(&qw, "a/b.py", x);
	ok(x[RF_Q_NAMES_FILE] == 0, "names under 3 characters never count");
	ok(qw.w_nr == 9, "the words are unique (fix the session cookie sessions see flask app again)");
	rank_qwords_release(&qw);

	big = xmalloc(RANK_QWORDS_SCAN + 100);
	memset(big, ' ', RANK_QWORDS_SCAN + 99);
	memcpy(big + 10, "early", 5);
	memcpy(big + RANK_QWORDS_SCAN + 50, "late", 4);
	big[RANK_QWORDS_SCAN + 99] = '\0';
	rank_qwords_init(&qw, big);
	memset(x, 0, sizeof(x));
	rank_query_names(&qw, "early.py", x);
	ok(x[RF_Q_NAMES_FILE] == 1, "a long query: a word near the start counts");
	rank_query_names(&qw, "late.py", x);
	ok(x[RF_Q_NAMES_FILE] == 0 && qw.w_nr == 1, "... one past the scanned part does not");
	rank_qwords_release(&qw);
	free(big);

	for (int k = 0; k < RF_NR; k++)
		if (!rank_feat_name[k])
			ok(0, "every feature has a name");
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
