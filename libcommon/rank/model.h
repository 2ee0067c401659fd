/*
 * rank/model.h: the learned fusion of ci-rank: the features of a candidate
 * file, and a linear model over them that says how likely the file is one the
 * query is about.
 *
 * Shaped by the data it is fitted on (scripts/train-rank, from the examples
 * scripts/mine-history makes of git history and bench/eval/run.sh's feature
 * dumps): a few hundred queries, some tens of candidate files each, so a
 * logistic model over standardised features, which C evaluates with one dot
 * product and has no runtime dependency.  The model is a JSON document
 * (share/rank/model.json):
 *
 *   {"format": "ci-rank-linear/1", "bias": b,
 *    "features": [{"name": "keyword_rr", "mean": m, "scale": s, "weight": w}, ...]}
 *
 * and a file's logit is b + sum w * (x - m) * s over the features it names;
 * the features it does not name weigh 0.  Every name must be one of
 * rank_feat_name[]: a model made for other features is refused.
 *
 * Optional members: "calibration", the map from the logit of a query's top
 * file to the probability that this file is right (fitted by
 * scripts/train-rank), either {"method": "platt", "a": a, "b": b} (the
 * logistic of a z + b, a >= 0; optionally also "margin": c >= 0, the weight
 * of the margin, the top file's logit less the second file's, capped at
 * RANK_CAL_MARGIN_CAP: the logistic of a z + c margin + b; optionally
 * also "files": d, the weight of the logarithm of the number of files in the
 * index, any sign: then the logistic of a z + c margin + d ln(files) + b) or
 * {"method": "isotonic", "x": [...], "y": [...]}
 * (piecewise linear through the knots, x increasing, y non-decreasing in
 * [0, 1], constant beyond the ends); and "with_vectors", "with_history" and
 * "with_vectors_history", objects with their own bias, features and
 * calibration: the models for a query whose semantic signal, change signal
 * (an index with git history) or both take part; and "chunk", a linear
 * model over a candidate chunk's features (enum rank_chunk_feat) that orders
 * the chunks within a file, whichever member ranks the files.
 *
 * No state outside the structs passed in; nothing here allocates after
 * rank_model_parse() returns.
 */
#ifndef CI_RANK_MODEL_H
#define CI_RANK_MODEL_H

#include <stddef.h>

/* Signals, in ci-rank's order (keyword, symbol, path, structure, change, semantic). */
#define RANK_SIGNALS 6

enum rank_feat {
	/* per signal s: the file's best chunk's value (0-1), 1/rank of that chunk in
	 * signal s (0 if unranked), the best value of any chunk of the file */
	RF_SIG = 0,
	RF_RR = RF_SIG + RANK_SIGNALS,
	RF_MAX_SIG = RF_RR + RANK_SIGNALS,
	RF_FUSED = RF_MAX_SIG + RANK_SIGNALS,	/* the hand-set fusion's score, 0-1 */
	RF_FUSED_RR,		/* 1 / the file's rank by it */
	RF_FILE_CHUNKS,		/* log(1 + candidate chunks of the file) */
	RF_FRAME,		/* a traceback frame of the query names the file */
	RF_TEST,		/* a test file */
	RF_DOC,			/* prose (Markdown, reST, text) or under docs/ */
	RF_CONFIG,		/* a configuration format (ini, yaml, toml, json, xml) */
	RF_CHANGELOG,		/* CHANGES, changelog, NEWS, HISTORY, release notes */
	RF_PO,			/* a translation (.po, .pot) */
	RF_EXAMPLE,		/* under example(s)/, demo(s)/, samples/, tutorial(s)/ */
	RF_VENDORED,		/* under vendor/, third_party/, _vendor/, node_modules/ */
	RF_GENERATED,		/* minified, _pb2, .pb.go, generated, lock files */
	RF_INIT,		/* a package's __init__.py, index.js, mod.rs */
	RF_DEPTH,		/* directories above the file */
	RF_LINES,		/* log(1 + the last line of its chunks) */
	RF_Q_NAMES_FILE,	/* the query has the file's name (stem) as a word */
	RF_Q_NAMES_DIR,		/* the query has the name of one of its directories */
	RF_INTENT_ISSUE,	/* the query reads as an issue text */
	RF_INTENT_NAME,		/* the query is one identifier */
	RF_Q_WORDS,		/* log(1 + the query's words) */
	RF_COVERAGE,		/* of the query's telling terms' weight, the share a code file holds (features.c) */
	RF_MARKUP,		/* HTML or a style sheet (CSS, SCSS, Less) */
	RF_PATH_COSINE,		/* the cosine of the query's and the file path's ci-code vectors */
	RF_NAMES_COSINE,	/* of the query's and the names the file defines, all in one text */
	RF_NR
};

/* The names of the features, as models and feature dumps spell them. */
extern const char *const rank_feat_name[RF_NR];

/*
 * The features of a candidate chunk within its file, for the order of a
 * file's chunks (chunks.c): which function of the file the answer shows.
 * file_has_fn, file_cands and intent_issue are the same for every chunk of a
 * file, so they cannot change its order; they are there for the fit (a
 * file's base rate, so that the other weights are not bent by it).
 */
enum rank_chunk_feat {
	RC_KEYWORD,		/* the keyword signal's value (0-1) */
	RC_KEYWORD_RR,		/* 1 / its rank among all candidates (0: unranked) */
	RC_SYMBOL, RC_SYMBOL_RR,	/* the same for the symbol signal */
	RC_SEMANTIC, RC_SEMANTIC_RR,	/* and the semantic signal */
	RC_KEYWORD_FILE_RR,	/* 1 / its rank by keyword among the file's chunks */
	RC_SYMBOL_FILE_RR,	/* by symbol */
	RC_SEMANTIC_FILE_RR,	/* by semantic */
	RC_EVIDENCE,		/* the hand-set order's evidence over the file's best */
	RC_FUNCTION,		/* a function or method (or a later block of one) */
	RC_HEADER,		/* a class header or code outside any definition */
	RC_CLASS,		/* a class header */
	RC_FILE_HAS_FN,		/* the file has a candidate function */
	RC_LINES,		/* log(1 + its lines) */
	RC_POSITION,		/* where it starts in the file (0 first line, 1 last) */
	RC_Q_NAMES_CHUNK,	/* the query has its name as a word (case ignored) */
	RC_Q_NAMES_SCOPE,	/* the query has its class's (scope's last) name */
	RC_NAME_PARTS,		/* of its name's parts (split at _ and case), those the query has */
	RC_FILE_CANDS,		/* log(1 + the file's candidate chunks) */
	RC_DUNDER,		/* a __name__ */
	RC_PRIVATE,		/* a _name */
	RC_INTENT_ISSUE,	/* the query reads as an issue text */
	RC_Q_CALLS,		/* the query has its name as a call or attribute: name( or .name */
	RC_Q_FRAME,		/* a traceback frame of the query is in it: ", in name" ending a line */
	RC_COVERAGE,		/* of the query's telling terms' weight, the share it holds (features.c) */
	RC_NR
};

/* The names of the chunk features, as models and dumps spell them. */
extern const char *const rank_chunk_feat_name[RC_NR];

/*
 * The chunk model: a linear score of a chunk's features, its "chunk" member
 * {"bias": b, "features": [...]} (the same shape as the file model's); the
 * order of a file's chunks is by it, best first.  on == 0: no such member.
 */
struct rank_chunk_model {
	double mean[RC_NR], scale[RC_NR], weight[RC_NR];
	double bias;
	int used;		/* features it names */
	int on;			/* the model has the member */
};

/* The score of chunk features x (RC_NR values).  Cannot fail. */
double rank_chunk_model_score(const struct rank_chunk_model *m, const double *x);

/* Knots of an isotonic calibration, at most. */
#define RANK_CAL_KNOTS 64

enum rank_cal { RANK_CAL_NONE, RANK_CAL_PLATT, RANK_CAL_ISOTONIC };

/* A calibration's margin: the top file's logit less the second's, at most this (this without a second). */
#define RANK_CAL_MARGIN_CAP 10.0

struct rank_model {
	double mean[RF_NR];	/* subtracted from a feature */
	double scale[RF_NR];	/* then multiplied by this (1 / standard deviation) */
	double weight[RF_NR];	/* then by this; 0 for a feature the model does not use */
	double bias;		/* the logit of a file whose features are all at their mean */
	int used;		/* features the model names */
	enum rank_cal cal;	/* the calibration of the top file's logit */
	double cal_a, cal_b;	/* Platt: logistic(a z + cal_margin_w margin + b) */
	double cal_margin_w;	/* Platt: the margin's weight (0: not used) */
	double cal_files_w;	/* Platt: the weight of ln(files in the index) (0: not used) */
	double cal_x[RANK_CAL_KNOTS], cal_y[RANK_CAL_KNOTS];	/* isotonic knots */
	int cal_nr;
	struct rank_chunk_model chunk;	/* the document's "chunk" member (on 0: none) */
};

/*
 * Read a model from the JSON text json (len bytes; origin names it in
 * messages).  Returns 0, or -1 after reporting what is wrong (not JSON, the
 * wrong format, a feature it does not know, a value that is not a finite
 * number).  m is overwritten either way.
 */
int rank_model_parse(struct rank_model *m, const char *json, size_t len, const char *origin);

/*
 * The members of a model, by the signals that take part in a query: the
 * semantic signal (an index with vectors), the change signal (an index with
 * git history), and semantic mode (the semantic signal alone: VECTORS |
 * SEMANTIC).  The top-level model is the one of neither.
 */
enum rank_member {
	RANK_MEMBER_VECTORS = 1, RANK_MEMBER_HISTORY = 2, RANK_MEMBER_SEMANTIC = 4, RANK_MEMBERS = 8
};

/*
 * The same, choosing the member for which (RANK_MEMBER_* bits): "with_vectors",
 * "with_history", "with_vectors_history" or "semantic" (VECTORS | SEMANTIC)
 * when the model has it; a model without a "semantic" member gives the one
 * without the SEMANTIC bit ("with_vectors"), one without the history members
 * the member without history; else the top-level model.
 */
int rank_model_parse_for(struct rank_model *m, const char *json, size_t len, const char *origin, int which);

/*
 * The calibrated probability that the top file of a query is right, from its
 * logit z, the margin (z less the second file's logit, at most
 * RANK_CAL_MARGIN_CAP: the cap when there is no second file, or for a margin
 * that is not a number) and the number of files in the index (a Platt map's
 * "files" weight reads its logarithm, a count under 1 as 1: the same lead
 * among more files is less sure): in [0, 1] and non-decreasing in z and in
 * the margin; -1 when the model has no calibration.  Cannot fail.
 */
double rank_model_confidence(const struct rank_model *m, double z, double margin, double files);

/* The logit of the feature vector x (RF_NR values).  Cannot fail. */
double rank_model_logit(const struct rank_model *m, const double *x);

/* The logistic of that: a probability.  Cannot fail. */
double rank_model_prob(const struct rank_model *m, const double *x);

/* Whether m weighs a feature read from ci-code's vectors (path_cosine, names_cosine).  Cannot fail. */
int rank_model_cosines(const struct rank_model *m);

/* The logistic function 1 / (1 + e^-z), without overflow.  Cannot fail. */
double rank_logistic(double z);

/*
 * The priors of a file from its path alone: sets x[RF_TEST .. RF_INIT] (except
 * RF_DOC and RF_CONFIG, which depend on the language the index recorded),
 * RF_DEPTH.  Cannot fail.
 */
void rank_path_features(const char *path, double *x);

/* The words of a query, for rank_query_names(): sorted, unique, lower case. */
struct rank_qwords {
	char **w;		/* the words */
	size_t w_nr, w_alloc;
};

/*
 * Split query into words (runs of letters, digits and '_'), of the first
 * RANK_QWORDS_SCAN bytes only, so a huge query costs a bounded time.  qw owns
 * copies; free them with rank_qwords_release().  Cannot fail.
 */
#define RANK_QWORDS_SCAN (256 * 1024)
void rank_qwords_init(struct rank_qwords *qw, const char *query);
void rank_qwords_release(struct rank_qwords *qw);

/*
 * The query's mentions of the path: sets x[RF_Q_NAMES_FILE] (the file's name
 * without its extension) and x[RF_Q_NAMES_DIR] (one of its directories), each
 * 1 when a name of 3 characters or more is one of the query's words (case
 * ignored), else 0.  Cannot fail.
 */
void rank_query_names(const struct rank_qwords *qw, const char *path, double *x);

/* Whether the n bytes at s, case ignored, are one of the words (3-64 bytes).  Cannot fail. */
int rank_qwords_has(const struct rank_qwords *qw, const char *s, size_t n);

#endif
