/*
 * context.c: the helpers every context/ file uses (see context.h).
 */
#include "core/common.h"
#include "context/context.h"

#include <strings.h>
#include <time.h>

const char *ctx_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

int ctx_contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return !n;
}

int ctx_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ctx_array_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

void ctx_ymd(char *out, json_int_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 11, "%Y-%m-%d", &tm);
}

char *ctx_cut_text(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return xstrdup(s);
	while (max && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return xasprintf("%.*s...", (int)max, s);
}
