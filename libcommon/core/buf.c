/*
 * buf.c: growable byte buffers (see buf.h).
 */
#include "core/common.h"

char buf_empty[1];

void buf_init(struct buf *b, size_t hint)
{
	b->buf = buf_empty;
	b->len = 0;
	b->alloc = 0;
	if (hint)
		buf_grow(b, hint);
}

void buf_release(struct buf *b)
{
	if (b->alloc)
		free(b->buf);
	buf_init(b, 0);
}

void buf_grow(struct buf *b, size_t extra)
{
	size_t want = b->len + extra + 1;

	if (want < b->len)
		die("buffer size overflow");
	if (want <= b->alloc)
		return;
	if (!b->alloc)
		b->buf = NULL;
	ALLOC_GROW(b->buf, want, b->alloc);
	if (b->len == 0)
		b->buf[0] = '\0';
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p;

	if (len)
		*len = b->len;
	if (!b->alloc)
		buf_grow(b, 0);
	p = b->buf;
	buf_init(b, 0);
	return p;
}

void buf_setlen(struct buf *b, size_t len)
{
	if (len > (b->alloc ? b->alloc - 1 : 0))
		die("buf_setlen beyond allocation");
	b->len = len;
	b->buf[len] = '\0';
}

void buf_add(struct buf *b, const void *data, size_t n)
{
	if (!n)
		return;
	buf_grow(b, n);
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addch(struct buf *b, int c)
{
	buf_grow(b, 1);
	b->buf[b->len++] = (char)c;
	b->buf[b->len] = '\0';
}

void buf_addi(struct buf *b, long long v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	buf_add(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	buf_grow(b, 64);
	va_copy(cp, ap);
	n = vsnprintf(b->buf + b->len, b->alloc - b->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		die("vsnprintf failed");
	if ((size_t)n >= b->alloc - b->len) {
		buf_grow(b, (size_t)n);
		n = vsnprintf(b->buf + b->len, b->alloc - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void buf_rtrim(struct buf *b)
{
	while (b->len && (b->buf[b->len - 1] == ' ' || b->buf[b->len - 1] == '\t' ||
			  b->buf[b->len - 1] == '\n' || b->buf[b->len - 1] == '\r'))
		b->len--;
	if (b->alloc)
		b->buf[b->len] = '\0';
}
