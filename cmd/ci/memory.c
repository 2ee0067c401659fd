/*
 * memory.c: `ci memory list|add|remove`, the team memory of
 * .codebase-context/memory.json (context/memory.h).
 */
#include "ci.h"

#include <time.h>

/* A memory as a line of compact JSON. */
static void put_memory(json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);

	puts(s ? s : "");
	free(s);
}

static int memory_list(struct flags *f)
{
	struct memory_store ms;
	json_t *m, *out = json_array();
	size_t i;
	time_t now = time(NULL);

	memory_open_or_fail(&ms);
	json_array_foreach(ms.all, i, m) {
		memory_score(m, now);
		if (memory_matches(m, f->values[0], f->values[1], f->values[2]))
			json_array_append(out, m);
	}
	json_array_foreach(out, i, m) {
		if (f->set[0])
			put_memory(m);
		else
			printf("%s  [%s] %s: %s  (confidence %.2f%s)\n", ctx_str(m, "id"),
			       ctx_str(m, "type"), ctx_str(m, "category"), ctx_str(m, "memory"),
			       json_real_value(json_object_get(m, "confidence")),
			       json_is_true(json_object_get(m, "stale")) ? ", stale" : "");
	}
	if (!f->set[0] && !json_array_size(out))
		puts("no memories");
	json_decref(out);
	memory_store_release(&ms);
	return close_stdout(0);
}

static int memory_add(struct flags *f)
{
	const char *type = f->values[1], *category = f->values[0], *text = f->values[3];
	const char *reason = f->values[4] ? f->values[4] : "";
	struct memory_store ms;
	json_t *m;
	char date[32];
	time_t now = time(NULL);
	struct tm tm;

	if (!type || !category || !text || !*text)
		usage_fail("memory add: --type, --category and --memory are required");
	if (!memory_type_ok(type))
		usage_fail("memory add: --type must be convention, decision, gotcha or failure, not '%s'",
		     type);
	if (!*category)
		usage_fail("memory add: --category must not be empty");
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* the id: FNV-1a of what the memory says, so that the same memory is the same id */
	m = memory_new(type, category, text, reason, date);
	memory_open_or_fail(&ms);
	if (memory_store_find(&ms, ctx_str(m, "id")) >= 0)
		fail("memory add: the same memory is there already (%s)", ctx_str(m, "id"));
	json_array_append(ms.all, m);
	if (memory_store_save(&ms))
		fail_said();
	memory_store_release(&ms);
	if (f->set[0])
		put_memory(m);
	else
		printf("remembered %s\n", ctx_str(m, "id"));
	json_decref(m);
	return close_stdout(0);
}

static int memory_remove(struct flags *f)
{
	struct memory_store ms;
	long at;

	if (f->args_nr != 2)
		usage_fail("memory remove: give one <id>");
	memory_open_or_fail(&ms);
	at = memory_store_find(&ms, f->args[1]);
	if (at < 0)
		fail("memory remove: no memory '%s'", f->args[1]);
	json_array_remove(ms.all, (size_t)at);
	if (memory_store_save(&ms))
		fail_said();
	memory_store_release(&ms);
	if (f->set[0]) {
		json_t *r = json_pack("{s:s}", "removed", f->args[1]);
		char *s = json_dumps(r, JSON_COMPACT);

		puts(s ? s : "");
		free(s);
		json_decref(r);
	} else
		printf("removed %s\n", f->args[1]);
	return close_stdout(0);
}

int cmd_memory(int argc, char **argv)
{
	static const char *const names[] = { "category", "type", "query", "memory", "reason", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "memory", .names = names, .bools = bools };
	const char *verb;

	parse_flags(&f, argc, argv);
	verb = f.args_nr ? f.args[0] : "";
	if (!strcmp(verb, "list")) {
		if (f.args_nr != 1 || f.values[3] || f.values[4])
			usage_fail("memory list: takes --category, --type, --query and --json only");
		if (f.values[1] && !memory_type_ok(f.values[1]))
			usage_fail("memory list: --type must be convention, decision, gotcha or failure, not '%s'",
			     f.values[1]);
		return memory_list(&f);
	}
	if (!strcmp(verb, "add")) {
		if (f.args_nr != 1 || f.values[2])
			usage_fail("memory add: takes --type, --category, --memory, --reason and --json only");
		return memory_add(&f);
	}
	if (!strcmp(verb, "remove"))
		return memory_remove(&f);
	usage_fail("memory: expected list, add or remove%s%s", *verb ? ", not " : "", verb);
}
