/*
 * buf.h: growable byte buffers (after git's strbuf).
 *
 * .buf is never NULL and always NUL-terminated, but may contain NULs: use .len.
 * A buffer initialised with BUF_INIT owns no memory until something is added.
 */
#ifndef CI_BUF_H
#define CI_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *buf;	/* the bytes; points at buf_empty until something is added */
	size_t len;	/* bytes in use, excluding the terminating NUL */
	size_t alloc;	/* bytes allocated; 0 while buf is buf_empty */
};

extern char buf_empty[];
#define BUF_INIT { buf_empty, 0, 0 }

void buf_init(struct buf *b, size_t hint);
void buf_release(struct buf *b);
/* Make room for at least extra more bytes (plus the NUL). */
void buf_grow(struct buf *b, size_t extra);
/* Empty the buffer, keeping its memory. */
static inline void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->alloc)
		b->buf[0] = '\0';
}
/* Take the bytes out; the caller frees them.  b is left empty.  len may be NULL. */
char *buf_detach(struct buf *b, size_t *len);
void buf_setlen(struct buf *b, size_t len);
void buf_add(struct buf *b, const void *data, size_t n);
void buf_addstr(struct buf *b, const char *s);
void buf_addch(struct buf *b, int c);
/* v in decimal (buf_addf's "%lld", without its cost) */
void buf_addi(struct buf *b, long long v);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap);
/* Remove trailing whitespace. */
void buf_rtrim(struct buf *b);

#endif
