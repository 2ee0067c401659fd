/*
 * feedback.c: `ci feedback submit|list|stats|lineage store|lineage list` and
 * `ci bundle` (bobbin's feedback tools): ratings of the context bundles given
 * out, kept in the index (context/feedback.h).
 */
#include "ci.h"

#include <errno.h>
#include <limits.h>
#include <time.h>

#include "index/index.h"
#include "context/feedback.h"

/* The index, opened to read or (with its feedback tables) to write; fails without one. */
static struct ci_index *open_index(const char *sub, int write)
{
	json_t *status = index_status(sub);
	char *path = status_index_path(status);
	struct ci_index *ix;

	if (feedback_open(&ix, sub, path, write))
		fail_said();
	free(path);
	json_decref(status);
	return ix;
}

/* Now, UTC, as 2026-05-01T12:00:00Z ($SOURCE_DATE_EPOCH when set, for reproducible output). */
static void now_iso(char out[21])
{
	time_t t = (time_t)env_long("SOURCE_DATE_EPOCH", 0, LONG_MAX, (long)time(NULL), ENV_DIE);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Who is giving feedback: --agent, else $GT_ROLE, $BD_ACTOR, else unknown (as bobbin). */
static const char *agent_of(const char *agent)
{
	const char *e;

	if (agent && *agent)
		return agent;
	if ((e = getenv("GT_ROLE")) && *e)
		return e;
	if ((e = getenv("BD_ACTOR")) && *e)
		return e;
	return "unknown";
}

/* Close ix; write the records (ret 0) or fail (the library said why). */
static int emit_or_fail(struct ci_index *ix, int ret, json_t *recs, int json)
{
	index_close(ix);
	if (ret)
		fail_said();
	return emit_records(recs, want_json(json), 0);
}

static int feedback_submit_cmd(int argc, char **argv)
{
	static const char *const names[] = { "injection-id", "rating", "agent", "reason", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const ratings[] = { "useful", "noise", "harmful" };
	struct flags f = { .sub = "feedback submit", .names = names, .bools = bools };
	struct feedback fb;
	struct ci_index *ix;
	json_t *recs;
	char ts[21];
	size_t i;
	int ret;

	parse_options(&f, argc, argv, NULL);
	fb.injection_id = f.values[0] ? f.values[0] + strspn(f.values[0], " \t\n") : "";
	if (!*fb.injection_id)
		usage_fail("feedback submit: injection_id required (from [injection_id: inj-xxx] in context injection output)");
	fb.rating = f.values[1] ? f.values[1] : "";
	for (i = 0; i < ARRAY_SIZE(ratings); i++)
		if (!strcmp(fb.rating, ratings[i]))
			break;
	if (i == ARRAY_SIZE(ratings))
		usage_fail("feedback submit: rating must be one of: useful, noise, harmful");
	if (f.values[3] && strlen(f.values[3]) > 1000)
		usage_fail("feedback submit: reason too long (max 1000 chars)");
	ix = open_index("feedback submit", 1);
	now_iso(ts);
	fb.agent = agent_of(f.values[2]);
	fb.reason = f.values[3] ? f.values[3] : "";
	fb.timestamp = ts;
	ret = feedback_submit(&recs, ix, "feedback submit", &fb);
	return emit_or_fail(ix, ret, recs, f.set[0]);
}

static int feedback_list_cmd(int argc, char **argv)
{
	static const char *const names[] = { "rating", "agent", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "feedback list", .names = names, .bools = bools };
	struct ci_index *ix;
	json_t *recs;
	int ret;

	parse_options(&f, argc, argv, NULL);
	check_limit("feedback list", f.values[2] ? f.values[2] : "20", 50);
	ix = open_index("feedback list", 0);
	ret = feedback_list(&recs, ix, "feedback list", given(f.values[0]), given(f.values[1]),
			    f.values[2] ? atol(f.values[2]) : 20);
	return emit_or_fail(ix, ret, recs, f.set[0]);
}

static int feedback_stats_cmd(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "feedback stats", .bools = bools };
	struct ci_index *ix;
	json_t *rec;
	int ret;

	parse_options(&f, argc, argv, NULL);
	ix = open_index("feedback stats", 0);
	ret = feedback_stats(&rec, ix, "feedback stats");
	return emit_or_fail(ix, ret, ret ? NULL : json_pack("[o]", rec), f.set[0]);
}

/* --feedback-ids n,m,...: an array of record ids, or fail (exit 2). */
static json_t *parse_ids(const char *v)
{
	json_t *ids = json_array();
	const char *s;

	for (s = v ? v : ""; *s; ) {
		char *end;
		long id;
		errno = 0;
		id = strtol(s, &end, 10);
		if (errno || end == s || id < 1 || (*end && *end != ','))
			usage_fail("feedback lineage store: feedback_ids must be record ids (whole numbers), not '%s'",
			     v);
		json_array_append_new(ids, json_integer(id));
		s = *end ? end + 1 : end;
	}
	if (!json_array_size(ids))
		usage_fail("feedback lineage store: feedback_ids must not be empty");
	return ids;
}

static int lineage_store_cmd(int argc, char **argv)
{
	static const char *const names[] = { "feedback-ids", "action-type", "description", "bead", "commit-hash",
					     "agent", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const actions[] = { "code_fix", "config_change", "tag_effect", "access_rule",
					       "exclusion_rule" };
	const char *sub = "feedback lineage store";
	struct flags f = { .sub = sub, .names = names, .bools = bools };
	struct lineage ln;
	json_t *recs;
	struct ci_index *ix;
	char ts[21];
	size_t i;
	int ret;

	parse_options(&f, argc, argv, NULL);
	ln.feedback_ids = parse_ids(f.values[0]);
	for (i = 0; i < ARRAY_SIZE(actions); i++)
		if (f.values[1] && !strcmp(f.values[1], actions[i]))
			break;
	if (i == ARRAY_SIZE(actions))
		usage_fail("feedback lineage store: action_type must be one of: code_fix, config_change, tag_effect, "
		     "access_rule, exclusion_rule");
	if (!given(f.values[2]))
		usage_fail("feedback lineage store: description required (what was done)");
	ix = open_index(sub, 1);
	if (lineage_check(ix, sub, ln.feedback_ids))
		fail_said();
	now_iso(ts);
	ln.action_type = f.values[1];
	ln.description = f.values[2];
	ln.bead = given(f.values[3]);
	ln.commit_hash = given(f.values[4]);
	ln.agent = agent_of(f.values[5]);
	ln.timestamp = ts;
	ret = lineage_store(&recs, ix, sub, &ln);
	json_decref(ln.feedback_ids);
	return emit_or_fail(ix, ret, recs, f.set[0]);
}

static int lineage_list_cmd(int argc, char **argv)
{
	static const char *const names[] = { "feedback-id", "bead", "commit-hash", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "feedback lineage list", .names = names, .bools = bools };
	struct ci_index *ix;
	json_t *recs;
	long fid = 0;
	int ret;

	parse_options(&f, argc, argv, NULL);
	check_limit("feedback lineage list", f.values[3] ? f.values[3] : "20", 50);
	if (f.values[0]) {
		char *end;
		fid = strtol(f.values[0], &end, 10);
		if (*end || end == f.values[0] || fid < 1)
			usage_fail("feedback lineage list: --feedback-id must be a record id, not '%s'", f.values[0]);
	}
	ix = open_index("feedback lineage list", 0);
	ret = lineage_list(&recs, ix, "feedback lineage list", fid, given(f.values[1]), given(f.values[2]),
			   f.values[3] ? atol(f.values[3]) : 20);
	return emit_or_fail(ix, ret, recs, f.set[0]);
}

int cmd_feedback(int argc, char **argv)
{
	const char *what = argc ? argv[0] : "";

	if (!strcmp(what, "submit"))
		return feedback_submit_cmd(argc - 1, argv + 1);
	if (!strcmp(what, "list"))
		return feedback_list_cmd(argc - 1, argv + 1);
	if (!strcmp(what, "stats"))
		return feedback_stats_cmd(argc - 1, argv + 1);
	if (!strcmp(what, "lineage") && argc > 1 && !strcmp(argv[1], "store"))
		return lineage_store_cmd(argc - 2, argv + 2);
	if (!strcmp(what, "lineage") && argc > 1 && !strcmp(argv[1], "list"))
		return lineage_list_cmd(argc - 2, argv + 2);
	usage_fail("feedback: expected submit, list, stats, lineage store or lineage list%s%s%s",
	     *what ? ", not '" : "", what, *what ? "'" : "");
}

/* The distinct paths of the records, in order, a new array. */
static json_t *paths_of(json_t *recs)
{
	json_t *files = json_array(), *r;
	size_t i;

	json_array_foreach(recs, i, r) {
		const char *p = json_string_value(json_object_get(r, "path"));

		if (p && !ctx_array_has(files, p))
			json_array_append_new(files, json_string(p));
	}
	return files;
}

/*
 * bundle: ci-rank's context bundle, recorded in the index as an injection
 * (inj-<n>) that feedback can name, and its record last.  The injection is
 * committed only once its records are out (injection_begin()).
 */
int cmd_bundle(int argc, char **argv)
{
	static const char *const names[] = { "query", "budget", "depth", "max-coupled", "threshold", "limit", "agent",
					     NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const opts[] = { NULL, "--budget", "--depth", "--max-coupled", "--threshold", "--limit" };
	struct flags f = { .sub = "bundle", .names = names, .bools = bools };
	char *av[16], ts[21], *files_text, *id;
	json_t *recs, *files;
	struct ci_index *ix;
	int n = 1, rc, k;

	parse_options(&f, argc, argv, "query");
	if (!given(f.values[0]))
		usage_fail("bundle: --query is required");
	for (k = 1; k <= 5; k++)
		if (f.values[k]) {
			av[n++] = (char *)opts[k];
			av[n++] = (char *)f.values[k];
		}
	av[n++] = "context";
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	recs = records_of("ci-rank", av, NULL, &rc);
	if (rc)	/* nothing to inject, or ci-rank said why */
		return emit_records(recs, want_json(f.set[0]), rc);
	files = paths_of(recs);
	ix = open_index("bundle", 1);
	now_iso(ts);
	files_text = json_dumps(files, JSON_COMPACT);
	if (injection_begin(&id, ix, f.values[0], agent_of(f.values[6]), files_text, ts))
		fail_said();
	json_array_append_new(recs, json_pack("{s:s, s:s, s:s, s:o}", "_type", "injection", "injection_id", id,
					      "query", f.values[0], "files", files));
	rc = emit_records(recs, want_json(f.set[0]), 0);
	if (injection_end(ix, id, rc == 0))
		rc = 1;
	index_close(ix);
	free(files_text);
	free(id);
	return rc;
}
