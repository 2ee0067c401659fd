/*
 * since.c: --since, as git reads it: a date, an epoch, or a duration counted
 * back from the newest commit (never from the clock, so that a repository
 * gives the same answer next year) (history.h).
 */
#include "core/common.h"
#include "history/history.h"

#include <errno.h>
#include <time.h>

/* "2024-01-31T12:00:00Z" for t, in buf (at least 32 bytes). */
void hist_iso_time(char *buf, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int parse_unit(const char *s, char *unit)
{
	static const struct { const char *name; char unit; } units[] = {
		{ "s", 's' }, { "sec", 's' }, { "secs", 's' }, { "second", 's' }, { "seconds", 's' },
		{ "min", 'm' }, { "mins", 'm' }, { "minute", 'm' }, { "minutes", 'm' },
		{ "h", 'h' }, { "hour", 'h' }, { "hours", 'h' },
		{ "d", 'd' }, { "day", 'd' }, { "days", 'd' },
		{ "w", 'w' }, { "week", 'w' }, { "weeks", 'w' },
		{ "mo", 'M' }, { "month", 'M' }, { "months", 'M' },
		{ "y", 'y' }, { "yr", 'y' }, { "year", 'y' }, { "years", 'y' },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(s, units[i].name)) {
			*unit = units[i].unit;
			return 0;
		}
	return -1;
}

/* since_parse(): see history.h. */
int since_parse(const char *s, struct since *out)
{
	char word[32];
	const char *p;
	size_t wl = 0;
	long n;
	int y, mo, d, hh = 0, mi = 0, ss = 0, used = 0;

	memset(out, 0, sizeof(*out));
	out->text = s;
	while (*s == ' ')
		s++;
	if (!strcmp(s, "all")) {
		out->kind = SINCE_ALL;
		return 0;
	}
	if (*s == '@') {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(s + 1, &end, 10);
		if (end == s + 1 || *end || errno)
			return -1;
		out->kind = SINCE_ABS;
		out->when = v;
		return 0;
	}
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && used == 10) {
		struct tm tm;

		p = s + used;
		if (*p == 'T' || *p == ' ') {
			int u2 = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &hh, &mi, &u2) != 2 || u2 != 5)
				return -1;
			p += 1 + u2;
			if (*p == ':') {
				int u3 = 0;
				if (sscanf(p + 1, "%2d%n", &ss, &u3) != 1 || u3 != 2)
					return -1;
				p += 1 + u3;
			}
		}
		if (*p == 'Z')
			p++;
		if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 60)
			return -1;
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = hh;
		tm.tm_min = mi;
		tm.tm_sec = ss;
		out->kind = SINCE_ABS;
		out->when = (int64_t)timegm(&tm);
		return 0;
	}
	/* a duration */
	p = s;
	if (*p < '0' || *p > '9')
		return -1;
	n = 0;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p - '0');
		if (n > 100000000)
			return -1;
		p++;
	}
	while (*p == ' ' || *p == '.')
		p++;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
		if (wl + 1 >= sizeof(word))
			return -1;
		word[wl++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		p++;
	}
	word[wl] = '\0';
	if (!wl || parse_unit(word, &out->unit) < 0)
		return -1;
	while (*p == ' ' || *p == '.')
		p++;
	if (*p && strcmp(p, "ago"))
		return -1;
	out->kind = SINCE_REL;
	out->n = n;
	return 0;
}

int64_t since_resolve(const struct since *s, int64_t newest)
{
	switch (s->kind) {
	case SINCE_NONE:
	case SINCE_ALL:
		return HIST_NO_SINCE;
	case SINCE_ABS:
		return s->when;
	case SINCE_REL:
		break;
	}
	switch (s->unit) {
	case 's': return newest - s->n;
	case 'm': return newest - s->n * 60;
	case 'h': return newest - s->n * 3600;
	case 'd': return newest - s->n * 86400;
	case 'w': return newest - s->n * 7 * 86400;
	default: {
		/* calendar months and years, as git counts them */
		time_t t = (time_t)newest;
		struct tm tm;

		gmtime_r(&t, &tm);
		if (s->unit == 'y')
			tm.tm_year -= (int)s->n;
		else {
			tm.tm_year -= (int)(s->n / 12);
			tm.tm_mon -= (int)(s->n % 12);
		}
		return (int64_t)timegm(&tm);
	}
	}
}
