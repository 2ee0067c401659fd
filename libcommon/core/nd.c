/*
 * nd.c: NDJSON writing and reading (see nd.h).
 *
 * The writer is on the hot path of ci-chunk (every byte of source passes through
 * nd_json_string), so it scans for the common case of plain ASCII and copies runs.
 */
#include "core/common.h"

#include <errno.h>
#include <math.h>

void nd_json_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run;

	buf_grow(b, n + 2);
	buf_addch(b, '"');
	while (p < end) {
		run = p;
		while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			buf_add(b, run, (size_t)(p - run));
		if (p >= end)
			break;
		if (*p >= 0x80) {
			int k = utf8_seq(p, (size_t)(end - p));
			if (k) {
				buf_add(b, p, (size_t)k);
				p += k;
			} else {
				buf_add(b, "\xef\xbf\xbd", 3);	/* U+FFFD */
				p++;
			}
			continue;
		}
		switch (*p) {
		case '"': buf_add(b, "\\\"", 2); break;
		case '\\': buf_add(b, "\\\\", 2); break;
		case '\n': buf_add(b, "\\n", 2); break;
		case '\t': buf_add(b, "\\t", 2); break;
		case '\r': buf_add(b, "\\r", 2); break;
		case '\b': buf_add(b, "\\b", 2); break;
		case '\f': buf_add(b, "\\f", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };
			buf_add(b, u, 6);
		}
		}
		p++;
	}
	buf_addch(b, '"');
}

void nd_begin(struct buf *b, const char *type)
{
	buf_addstr(b, "{\"_type\":");
	nd_json_string(b, type, strlen(type));
}

void nd_key(struct buf *b, const char *key)
{
	buf_addch(b, ',');
	nd_json_string(b, key, strlen(key));
	buf_addch(b, ':');
}

void nd_str(struct buf *b, const char *key, const char *s)
{
	nd_key(b, key);
	if (s)
		nd_json_string(b, s, strlen(s));
	else
		buf_addstr(b, "null");
}

void nd_strn(struct buf *b, const char *key, const char *s, size_t n)
{
	nd_key(b, key);
	nd_json_string(b, s, n);
}

void nd_int(struct buf *b, const char *key, long long v)
{
	nd_key(b, key);
	buf_addf(b, "%lld", v);
}

void nd_num(struct buf *b, const char *key, double v)
{
	nd_key(b, key);
	if (!isfinite(v))
		buf_addstr(b, "null");
	else if (v == 0)
		buf_addch(b, '0');	/* no "-0" */
	else
		buf_addf(b, "%.9g", v);
}

void nd_bool(struct buf *b, const char *key, int v)
{
	nd_key(b, key);
	buf_addstr(b, v ? "true" : "false");
}

void nd_null(struct buf *b, const char *key)
{
	nd_key(b, key);
	buf_addstr(b, "null");
}

void nd_raw(struct buf *b, const char *key, const char *json)
{
	nd_key(b, key);
	buf_addstr(b, json);
}

void nd_end(struct buf *b)
{
	buf_add(b, "}\n", 2);
}

int nd_flush(struct buf *b, FILE *f)
{
	if (b->len && fwrite(b->buf, 1, b->len, f) != b->len)
		return -1;
	buf_reset(b);
	return 0;
}

int utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		if (n >= 2 && (s[1] & 0xc0) == 0x80)
			return 2;
		return 0;
	}
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0;	/* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0;	/* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

int utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		int k;

		if (*p < 0x80) {
			p++;
			continue;
		}
		k = utf8_seq(p, (size_t)(end - p));
		if (!k)
			return 0;
		p += k;
	}
	return 1;
}

void nd_reader_init(struct nd_reader *r, FILE *f, const char *name)
{
	r->f = f;
	r->name = name;
	r->lineno = 0;
	buf_init(&r->line, 0);
}

void nd_reader_release(struct nd_reader *r)
{
	buf_release(&r->line);
}

int nd_read(struct nd_reader *r, json_t **out)
{
	json_error_t jerr;
	json_t *v, *t;
	int c;

	*out = NULL;
	for (;;) {
		buf_reset(&r->line);
		errno = 0;
		while ((c = getc(r->f)) != EOF && c != '\n')
			buf_addch(&r->line, c);
		if (c == EOF && ferror(r->f))
			return error_errno("%s: read error", r->name);
		if (c == EOF && r->line.len == 0)
			return 0;
		r->lineno++;
		if (r->line.len && r->line.buf[r->line.len - 1] == '\r')
			buf_setlen(&r->line, r->line.len - 1);
		size_t i = 0;
		while (i < r->line.len && (r->line.buf[i] == ' ' || r->line.buf[i] == '\t'))
			i++;
		if (i < r->line.len)
			break;
		if (c == EOF)
			return 0;
	}
	v = json_loadb(r->line.buf, r->line.len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!v)
		return error("%s:%ld:%d: %s", r->name, r->lineno, jerr.column, jerr.text);
	if (!json_is_object(v)) {
		json_decref(v);
		return error("%s:%ld: expected a JSON object", r->name, r->lineno);
	}
	t = json_object_get(v, "_type");
	if (!json_is_string(t)) {
		json_decref(v);
		return error("%s:%ld: record has no string \"_type\"", r->name, r->lineno);
	}
	*out = v;
	return 1;
}
