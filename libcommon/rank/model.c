/*
 * rank/model.c: features of a candidate file and the linear model over them
 * (see model.h).  A model is a few hundred bytes of JSON read once a query;
 * scoring is a dot product a file, on the few hundred files a query ranks.
 */
#include "core/common.h"
#include "rank/model.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>

const char *const rank_feat_name[RF_NR] = {
	[RF_SIG + 0] = "keyword", [RF_SIG + 1] = "symbol", [RF_SIG + 2] = "path",
	[RF_SIG + 3] = "structure", [RF_SIG + 4] = "change", [RF_SIG + 5] = "semantic",
	[RF_RR + 0] = "keyword_rr", [RF_RR + 1] = "symbol_rr", [RF_RR + 2] = "path_rr",
	[RF_RR + 3] = "structure_rr", [RF_RR + 4] = "change_rr", [RF_RR + 5] = "semantic_rr",
	[RF_MAX_SIG + 0] = "keyword_max", [RF_MAX_SIG + 1] = "symbol_max", [RF_MAX_SIG + 2] = "path_max",
	[RF_MAX_SIG + 3] = "structure_max", [RF_MAX_SIG + 4] = "change_max",
	[RF_MAX_SIG + 5] = "semantic_max",
	[RF_FUSED] = "fused", [RF_FUSED_RR] = "fused_rr", [RF_FILE_CHUNKS] = "file_chunks",
	[RF_FRAME] = "frame", [RF_TEST] = "test", [RF_DOC] = "doc", [RF_CONFIG] = "config",
	[RF_CHANGELOG] = "changelog", [RF_PO] = "po", [RF_EXAMPLE] = "example",
	[RF_VENDORED] = "vendored", [RF_GENERATED] = "generated", [RF_INIT] = "init",
	[RF_DEPTH] = "depth", [RF_LINES] = "lines", [RF_Q_NAMES_FILE] = "q_names_file",
	[RF_Q_NAMES_DIR] = "q_names_dir", [RF_INTENT_ISSUE] = "intent_issue",
	[RF_INTENT_NAME] = "intent_name", [RF_Q_WORDS] = "q_words", [RF_COVERAGE] = "coverage",
	[RF_MARKUP] = "markup", [RF_PATH_COSINE] = "path_cosine",
	[RF_NAMES_COSINE] = "names_cosine",
};

const char *const rank_chunk_feat_name[RC_NR] = {
	[RC_KEYWORD] = "keyword", [RC_KEYWORD_RR] = "keyword_rr", [RC_SYMBOL] = "symbol",
	[RC_SYMBOL_RR] = "symbol_rr", [RC_SEMANTIC] = "semantic", [RC_SEMANTIC_RR] = "semantic_rr",
	[RC_KEYWORD_FILE_RR] = "keyword_file_rr", [RC_SYMBOL_FILE_RR] = "symbol_file_rr",
	[RC_SEMANTIC_FILE_RR] = "semantic_file_rr", [RC_EVIDENCE] = "evidence", [RC_FUNCTION] = "function",
	[RC_HEADER] = "header", [RC_CLASS] = "class", [RC_FILE_HAS_FN] = "file_has_fn", [RC_LINES] = "lines",
	[RC_POSITION] = "position", [RC_Q_NAMES_CHUNK] = "q_names_chunk",
	[RC_Q_NAMES_SCOPE] = "q_names_scope", [RC_NAME_PARTS] = "name_parts", [RC_FILE_CANDS] = "file_cands",
	[RC_DUNDER] = "dunder", [RC_PRIVATE] = "private", [RC_INTENT_ISSUE] = "intent_issue",
	[RC_Q_CALLS] = "q_calls", [RC_Q_FRAME] = "q_frame", [RC_COVERAGE] = "coverage",
};

static int finite_number(json_t *v, double *out)
{
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return isfinite(*out) ? 0 : -1;
}

/* A linear model's parts: its features' names (nr of them) and where their values go. */
struct linear_dst {
	const char *const *names;
	int nr;
	double *mean, *scale, *weight, *bias;
	int *used;
};

/* The bias and features of model object root into d: 0, or -1 after a message. */
static int parse_linear(const struct linear_dst *d, json_t *root, const char *origin)
{
	json_t *feats, *f;
	size_t i;

	if (finite_number(json_object_get(root, "bias"), d->bias))
		return error("%s: bias: expected a number", origin);
	feats = json_object_get(root, "features");
	if (!json_is_array(feats))
		return error("%s: features: expected an array", origin);
	json_array_foreach(feats, i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		int k;
		for (k = 0; name && k < d->nr; k++)
			if (!strcmp(d->names[k], name))
				break;
		if (!name)
			return error("%s: feature %zu: expected an object with a \"name\" string", origin, i + 1);
		if (k == d->nr)
			return error("%s: feature %zu: unknown feature '%s'", origin, i + 1, name);
		if (finite_number(json_object_get(f, "mean"), &d->mean[k]) ||
		    finite_number(json_object_get(f, "scale"), &d->scale[k]) ||
		    finite_number(json_object_get(f, "weight"), &d->weight[k]))
			return error("%s: feature '%s': mean, scale and weight must be numbers", origin, name);
		(*d->used)++;
	}
	return 0;
}

/* The file model's bias and features from root into m. */
static int parse_file_linear(struct rank_model *m, json_t *root, const char *origin)
{
	struct linear_dst d = { rank_feat_name, RF_NR, m->mean, m->scale, m->weight, &m->bias, &m->used };

	return parse_linear(&d, root, origin);
}

/* The document's "chunk" member, if any, into m->chunk: 0, or -1 after a message. */
static int parse_chunk_linear(struct rank_model *m, json_t *doc, const char *origin)
{
	struct rank_chunk_model *c = &m->chunk;
	struct linear_dst d = { rank_chunk_feat_name, RC_NR, c->mean, c->scale, c->weight, &c->bias, &c->used };
	json_t *root = json_object_get(doc, "chunk");
	char where[256];

	if (!root)
		return 0;
	snprintf(where, sizeof(where), "%s: chunk", origin);
	if (!json_is_object(root))
		return error("%s: expected an object", where);
	if (parse_linear(&d, root, where))
		return -1;
	c->on = 1;
	return 0;
}

/* The isotonic knots of c into m: 0, or -1 after a message. */
static int parse_knots(struct rank_model *m, json_t *c, const char *origin)
{
	json_t *xs = json_object_get(c, "x"), *ys = json_object_get(c, "y");
	size_t n = json_array_size(xs);

	if (!json_is_array(xs) || !json_is_array(ys) || !n || n != json_array_size(ys) || n > RANK_CAL_KNOTS)
		return error("%s: calibration: x and y must be arrays of 1-%d numbers, as many of each",
			     origin, RANK_CAL_KNOTS);
	for (size_t i = 0; i < n; i++) {
		if (finite_number(json_array_get(xs, i), &m->cal_x[i]) ||
		    finite_number(json_array_get(ys, i), &m->cal_y[i]))
			return error("%s: calibration: knot %zu: expected numbers", origin, i + 1);
		if (m->cal_y[i] < 0 || m->cal_y[i] > 1 ||
		    (i && (m->cal_x[i] < m->cal_x[i - 1] || m->cal_y[i] < m->cal_y[i - 1])))
			return error("%s: calibration: knot %zu: x must increase and y rise within [0, 1]",
				     origin, i + 1);
	}
	m->cal_nr = (int)n;
	return 0;
}

/* The calibration member of model object root, if any: 0, or -1 after a message. */
static int parse_calibration(struct rank_model *m, json_t *root, const char *origin)
{
	json_t *c = json_object_get(root, "calibration"), *v;
	const char *method;

	if (!c)
		return 0;
	method = json_string_value(json_object_get(c, "method"));
	if (method && !strcmp(method, "platt")) {
		if (finite_number(json_object_get(c, "a"), &m->cal_a) ||
		    finite_number(json_object_get(c, "b"), &m->cal_b))
			return error("%s: calibration: a and b must be numbers", origin);
		if (m->cal_a < 0)
			return error("%s: calibration: a must not be negative", origin);
		v = json_object_get(c, "margin");
		if (v && finite_number(v, &m->cal_margin_w))
			return error("%s: calibration: margin must be a number", origin);
		if (m->cal_margin_w < 0)	/* a wider lead must not lower the confidence */
			return error("%s: calibration: margin must not be negative", origin);
		v = json_object_get(c, "files");
		if (v && finite_number(v, &m->cal_files_w))
			return error("%s: calibration: files must be a number", origin);
		m->cal = RANK_CAL_PLATT;
		return 0;
	}
	if (method && !strcmp(method, "isotonic")) {
		if (parse_knots(m, c, origin))
			return -1;
		m->cal = RANK_CAL_ISOTONIC;
		return 0;
	}
	return error("%s: calibration: method must be \"platt\" or \"isotonic\"", origin);
}

/* The members a model may have, by the signals that take part (enum rank_member). */
static const char *const member_name[RANK_MEMBERS] = {
	[0] = NULL, [RANK_MEMBER_VECTORS] = "with_vectors", [RANK_MEMBER_HISTORY] = "with_history",
	[RANK_MEMBER_VECTORS | RANK_MEMBER_HISTORY] = "with_vectors_history",
	[RANK_MEMBER_VECTORS | RANK_MEMBER_SEMANTIC] = "semantic",
};

int rank_model_parse_for(struct rank_model *m, const char *json, size_t len, const char *origin, int which)
{
	json_error_t err;
	json_t *doc, *root, *member[RANK_MEMBERS] = { NULL };
	const char *fmt;
	int ret = -1, k;

	memset(m, 0, sizeof(*m));
	doc = root = json_loadb(json, len, 0, &err);
	if (!doc)
		return error("%s:%d: %s", origin, err.line, err.text);
	fmt = json_string_value(json_object_get(root, "format"));
	if (!fmt || strcmp(fmt, "ci-rank-linear/1")) {
		error("%s: not a ci-rank-linear/1 model", origin);
		goto done;
	}
	for (k = 1; k < RANK_MEMBERS; k++) {
		if (!member_name[k])
			continue;
		member[k] = json_object_get(root, member_name[k]);
		if (member[k] && !json_is_object(member[k])) {
			error("%s: %s: expected an object", origin, member_name[k]);
			goto done;
		}
	}
	which &= RANK_MEMBERS - 1;
	/* the member of these signals, else the one of hybrid mode's (a model made
	 * before the semantic member stands for both), else the one without
	 * history: a model made before the history members stands for both */
	if (!member[which] && (which & RANK_MEMBER_SEMANTIC))
		which &= ~RANK_MEMBER_SEMANTIC;
	if (!member[which] && (which & RANK_MEMBER_HISTORY))
		which &= ~RANK_MEMBER_HISTORY;
	if (member[which])
		root = member[which];	/* owned by doc */
	if (parse_file_linear(m, root, origin) || parse_calibration(m, root, origin) ||
	    parse_chunk_linear(m, doc, origin))
		goto done;
	ret = 0;
done:
	json_decref(doc);
	if (ret)
		memset(m, 0, sizeof(*m));
	return ret;
}

int rank_model_parse(struct rank_model *m, const char *json, size_t len, const char *origin)
{
	return rank_model_parse_for(m, json, len, origin, 0);
}

/* bias + sum w * (x - mean) * scale over the nr features a linear model weighs */
static double linear_score(double bias, const double *mean, const double *scale, const double *weight,
			   const double *x, int nr)
{
	double z = bias;

	for (int k = 0; k < nr; k++)
		if (weight[k] != 0)
			z += weight[k] * (x[k] - mean[k]) * scale[k];
	return z;
}

double rank_model_logit(const struct rank_model *m, const double *x)
{
	return linear_score(m->bias, m->mean, m->scale, m->weight, x, RF_NR);
}

int rank_model_cosines(const struct rank_model *m)
{
	return m->weight[RF_PATH_COSINE] != 0 || m->weight[RF_NAMES_COSINE] != 0;
}

double rank_chunk_model_score(const struct rank_chunk_model *m, const double *x)
{
	return linear_score(m->bias, m->mean, m->scale, m->weight, x, RC_NR);
}

double rank_logistic(double z)
{
	return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z));
}

double rank_model_prob(const struct rank_model *m, const double *x)
{
	return rank_logistic(rank_model_logit(m, x));
}

double rank_model_confidence(const struct rank_model *m, double z, double margin, double files)
{
	int i;

	switch (m->cal) {
	case RANK_CAL_PLATT:
		if (!(margin <= RANK_CAL_MARGIN_CAP))	/* NaN too */
			margin = RANK_CAL_MARGIN_CAP;
		/* each term within +-1e6 (NaN to -1e6), so that a model's huge
		 * weights give 0 or 1, never inf - inf */
		if (!(files >= 1))	/* NaN too */
			files = 1;
		return rank_logistic(fmin(fmax(m->cal_a * z, -1e6), 1e6) +
				     fmin(fmax(m->cal_margin_w * margin, -1e6), 1e6) +
				     fmin(fmax(m->cal_files_w * log(files), -1e6), 1e6) + fmin(fmax(m->cal_b, -1e6), 1e6));
	case RANK_CAL_ISOTONIC:
		if (z <= m->cal_x[0])
			return m->cal_y[0];
		for (i = 1; i < m->cal_nr; i++)
			if (z <= m->cal_x[i]) {
				double dx = m->cal_x[i] - m->cal_x[i - 1];
				double t = dx > 0 ? (z - m->cal_x[i - 1]) / dx : 1;
				/* within the knots' values: 0.3 + 1 * (0.9 - 0.3) is
				 * 0.9000000000000001, above the 0.9 beyond the end */
				return fmin(fmax(m->cal_y[i - 1] + t * (m->cal_y[i] - m->cal_y[i - 1]),
						 m->cal_y[i - 1]), m->cal_y[i]);
			}
		return m->cal_y[m->cal_nr - 1];
	case RANK_CAL_NONE:
		break;
	}
	return -1;
}

/* a directory of the path (any level) is one of the words, each ending in '/' */
static int has_dir(const char *path, const char *const *dirs)
{
	for (; *dirs; dirs++) {
		size_t l = strlen(*dirs);
		const char *p = path;
		for (;;) {
			if (!strncasecmp(p, *dirs, l))
				return 1;
			p = strchr(p, '/');
			if (!p)
				break;
			p++;
		}
	}
	return 0;
}

static int starts_with_ci(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

void rank_path_features(const char *path, double *x)
{
	static const char *const tests[] = { "test/", "tests/", "testing/", "__tests__/", "spec/", NULL };
	static const char *const examples[] = { "example/", "examples/", "demo/", "demos/", "samples/",
		"sample/", "tutorial/", "tutorials/", "bench/", "benchmarks/", NULL };
	static const char *const vendored[] = { "vendor/", "vendored/", "_vendor/", "third_party/",
		"thirdparty/", "node_modules/", "extern/", NULL };
	const char *base = strrchr(path, '/');
	int depth = 0;

	base = base ? base + 1 : path;
	for (const char *p = path; *p; p++)
		depth += *p == '/';
	x[RF_TEST] = has_dir(path, tests) || !strncmp(base, "test_", 5) || strstr(base, "_test.") ||
		     strstr(base, ".test.") || strstr(base, ".spec.") || strstr(base, "Test.java") ||
		     !strcmp(base, "conftest.py");
	x[RF_CHANGELOG] = starts_with_ci(base, "change") || starts_with_ci(base, "news") ||
			  starts_with_ci(base, "history") || starts_with_ci(base, "release") ||
			  has_dir(path, (const char *const[]){ "changelog.d/", "changes/", "newsfragments/", NULL });
	x[RF_PO] = ends_with(base, ".po") || ends_with(base, ".pot");
	x[RF_EXAMPLE] = has_dir(path, examples);
	x[RF_VENDORED] = has_dir(path, vendored);
	x[RF_GENERATED] = ends_with(base, ".min.js") || ends_with(base, "_pb2.py") || ends_with(base, ".pb.go") ||
			  strstr(base, "generated") != NULL || ends_with(base, ".lock") ||
			  !strcmp(base, "package-lock.json");
	x[RF_INIT] = !strcmp(base, "__init__.py") || !strncmp(base, "index.", 6) || !strcmp(base, "mod.rs");
	x[RF_DEPTH] = depth;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void rank_qwords_init(struct rank_qwords *qw, const char *query)
{
	size_t n = strlen(query), i = 0, k = 0;

	memset(qw, 0, sizeof(*qw));
	if (n > RANK_QWORDS_SCAN)
		n = RANK_QWORDS_SCAN;
	while (i < n) {
		size_t j = i;
		while (j < n && (isalnum((unsigned char)query[j]) || query[j] == '_'))
			j++;
		if (j - i >= 3 && j - i <= 64) {
			char *w = xmalloc(j - i + 1);
			for (size_t t = 0; t < j - i; t++)
				w[t] = (char)tolower((unsigned char)query[i + t]);
			w[j - i] = '\0';
			ALLOC_GROW(qw->w, qw->w_nr + 1, qw->w_alloc);
			qw->w[qw->w_nr++] = w;
		}
		i = j + 1;
	}
	if (qw->w_nr)
		qsort(qw->w, qw->w_nr, sizeof(*qw->w), cmp_str);
	for (i = 0; i < qw->w_nr; i++) {
		if (k && !strcmp(qw->w[k - 1], qw->w[i])) {
			free(qw->w[i]);
			continue;
		}
		qw->w[k++] = qw->w[i];
	}
	qw->w_nr = k;
}

void rank_qwords_release(struct rank_qwords *qw)
{
	for (size_t i = 0; i < qw->w_nr; i++)
		free(qw->w[i]);
	free(qw->w);
	memset(qw, 0, sizeof(*qw));
}

int rank_qwords_has(const struct rank_qwords *qw, const char *s, size_t n)
{
	char buf[65];
	char *key = buf;

	if (n < 3 || n > 64 || !qw->w_nr)
		return 0;
	for (size_t t = 0; t < n; t++)
		buf[t] = (char)tolower((unsigned char)s[t]);
	buf[n] = '\0';
	return bsearch(&key, qw->w, qw->w_nr, sizeof(*qw->w), cmp_str) != NULL;
}

void rank_query_names(const struct rank_qwords *qw, const char *path, double *x)
{
	const char *base = strrchr(path, '/'), *dot, *p, *slash;

	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	x[RF_Q_NAMES_FILE] = rank_qwords_has(qw, base, dot ? (size_t)(dot - base) : strlen(base));
	x[RF_Q_NAMES_DIR] = 0;
	for (p = path; p < base; p = slash + 1) {
		slash = strchr(p, '/');
		if (!slash || slash >= base)
			break;
		if (rank_qwords_has(qw, p, (size_t)(slash - p))) {
			x[RF_Q_NAMES_DIR] = 1;
			break;
		}
	}
}
