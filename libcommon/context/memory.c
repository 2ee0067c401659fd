/*
 * memory.c: the team's memory in .codebase-context/memory.json (see memory.h).
 * A few hundred memories at most: the whole file is loaded and written back.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/memory.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#define STALE_BELOW 0.3		/* memories below this confidence are flagged stale */

const char *const memory_types[] = { "convention", "decision", "gotcha", "failure", NULL };

int memory_store_open(struct memory_store *ms, const char *root)
{
	json_error_t err;

	ms->dir = root ? xasprintf("%s/%s", root, MEMORY_DIR) : xstrdup(MEMORY_DIR);
	ms->path = root ? xasprintf("%s/%s", root, MEMORY_FILE) : xstrdup(MEMORY_FILE);
	ms->all = NULL;
	if (access(ms->path, F_OK) && errno == ENOENT) {
		ms->all = json_array();
		return 0;
	}
	ms->all = json_load_file(ms->path, 0, &err);
	if (!ms->all)
		return error("memory: %s:%d: %s", ms->path, err.line, err.text);
	if (!json_is_array(ms->all)) {
		json_decref(ms->all);
		ms->all = NULL;
		return error("memory: %s: expected a JSON array", ms->path);
	}
	return 0;
}

void memory_store_release(struct memory_store *ms)
{
	free(ms->dir);
	free(ms->path);
	json_decref(ms->all);
	ms->dir = ms->path = NULL;
	ms->all = NULL;
}

int memory_store_save(struct memory_store *ms)
{
	char *tmp;
	int ret = 0;

	if (mkdir(ms->dir, 0777) && errno != EEXIST)
		return error("memory: cannot create '%s': %s", ms->dir, strerror(errno));
	tmp = xasprintf("%s.tmp", ms->path);
	if (json_dump_file(ms->all, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	    rename(tmp, ms->path)) {
		unlink(tmp);
		ret = error("memory: cannot write '%s'", ms->path);
	}
	free(tmp);
	return ret;
}

long memory_store_find(const struct memory_store *ms, const char *id)
{
	size_t k;
	json_t *old;

	json_array_foreach(ms->all, k, old)
		if (!strcmp(ctx_str(old, "id"), id))
			return (long)k;
	return -1;
}

int memory_type_ok(const char *type)
{
	for (int i = 0; memory_types[i]; i++)
		if (!strcmp(type, memory_types[i]))
			return 1;
	return 0;
}

/* The half-life in days of a memory's confidence; 0: it never decays. */
static double memory_half_life(const char *type)
{
	if (!strcmp(type, "decision"))
		return 180;
	if (!strcmp(type, "gotcha") || !strcmp(type, "failure"))
		return 90;
	return 0;	/* conventions */
}

/* A date that does not parse counts as today. */
void memory_score(json_t *m, time_t now)
{
	struct tm tm;
	double hl = memory_half_life(ctx_str(m, "type")), conf = 1, age;
	const char *d = ctx_str(m, "date");
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(d, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		end = strptime(d, "%Y-%m-%d", &tm);
	if (end && hl > 0) {
		age = difftime(now, timegm(&tm)) / CONTEXT_DAY;
		if (age > 0)
			conf = pow(0.5, age / hl);
	}
	json_object_set_new(m, "confidence", json_real(round(conf * 1000) / 1000));
	json_object_set_new(m, "stale", json_boolean(conf < STALE_BELOW));
}

json_t *memory_new(const char *type, const char *category, const char *text,
		   const char *reason, const char *date)
{
	/* not FNV1A_BASIS (a digit short of it), but stored ids depend on it */
	uint64_t h = 1469598103934665603ULL;
	const char *parts[] = { type, category, text };
	char id[17];

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		h = fnv1a(h, parts[i], strlen(parts[i]));
	snprintf(id, sizeof(id), "%016llx", (unsigned long long)h);
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "type", type, "category", category,
			 "memory", text, "reason", reason, "date", date);
}

int memory_matches(json_t *m, const char *category, const char *type, const char *query)
{
	if (category && strcmp(ctx_str(m, "category"), category))
		return 0;
	if (type && strcmp(ctx_str(m, "type"), type))
		return 0;
	if (query && !ctx_contains_ci(ctx_str(m, "memory"), query) &&
	    !ctx_contains_ci(ctx_str(m, "reason"), query))
		return 0;
	return 1;
}

int memory_related(json_t *m, const char *query)
{
	const char *s = query;

	while (*s) {
		size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (n >= 3) {
			char *w = xstrndup(s, n);
			int hit = ctx_contains_ci(ctx_str(m, "memory"), w) ||
				  ctx_contains_ci(ctx_str(m, "category"), w) ||
				  ctx_contains_ci(ctx_str(m, "reason"), w);

			free(w);
			if (hit)
				return 1;
		}
		s += n ? n : 1;
	}
	return 0;
}

/* The kinds of conventional commits that are remembered. */
static const struct commit_kind {
	const char *prefix, *type, *category;
} commit_kinds[] = {
	{ "feat", "decision", "architecture" }, { "perf", "decision", "architecture" },
	{ "refactor", "decision", "architecture" }, { "fix", "gotcha", "architecture" },
	{ "revert", "failure", "architecture" }, { "docs", "convention", "conventions" },
	{ "style", "convention", "conventions" }, { "test", "convention", "testing" },
	{ "build", "convention", "tooling" }, { "ci", "convention", "tooling" },
	{ "chore", "convention", "tooling" },
};

/*
 * The memory a commit record says, or NULL: feat, perf and refactor are
 * decisions, fix a gotcha, revert a failure, docs, style, test, build, ci and
 * chore conventions; the category is testing for test, tooling for build, ci
 * and chore, conventions for docs and style, architecture for the rest; a
 * scope prefixes the text.
 */
static json_t *memory_of_commit(json_t *c)
{
	const char *msg = ctx_str(c, "message"), *s;
	size_t subj_len = strcspn(msg, "\n"), n = 0, k;
	char *scope = NULL, *text, *reason, date[32];
	time_t t = (time_t)json_integer_value(json_object_get(c, "time"));
	struct tm tm;
	json_t *m;

	for (k = 0; k < ARRAY_SIZE(commit_kinds); k++) {
		n = strlen(commit_kinds[k].prefix);
		if (!strncmp(msg, commit_kinds[k].prefix, n) && strchr("(!:", msg[n]))
			break;
	}
	if (k == ARRAY_SIZE(commit_kinds))
		return NULL;
	s = msg + n;
	if (*s == '(') {
		size_t l = strcspn(s + 1, ")\n");

		if (s[1 + l] != ')' || !l)
			return NULL;
		scope = xstrndup(s + 1, l);
		s += l + 2;
	}
	if (*s == '!')
		s++;
	if (*s != ':' || s[1] != ' ' || (size_t)(s + 2 - msg) >= subj_len) {
		free(scope);
		return NULL;
	}
	text = xstrndup(s + 2, subj_len - (size_t)(s + 2 - msg));
	reason = xasprintf("git commit %.7s: %.*s", ctx_str(c, "sha"), (int)subj_len, msg);
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (scope) {	/* "fix(parser): x" remembers "parser: x" */
		char *st = xasprintf("%s: %s", scope, text);

		free(text);
		text = st;
	}
	m = memory_new(commit_kinds[k].type, commit_kinds[k].category, text, reason, date);
	json_object_set_new(m, "source", json_string("git"));
	free(text);
	free(reason);
	free(scope);
	return m;
}

int memory_store_add_commits(struct memory_store *ms, json_t *commits)
{
	size_t i;
	json_t *c;
	int added = 0;

	json_array_foreach(commits, i, c) {
		json_t *m = memory_of_commit(c);

		if (!m)
			continue;
		if (memory_store_find(ms, ctx_str(m, "id")) < 0) {
			json_array_append(ms->all, m);
			added++;
		}
		json_decref(m);
	}
	return added;
}
