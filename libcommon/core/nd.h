/*
 * nd.h: newline-delimited JSON records, written and read.
 *
 * Writing builds a whole line in a struct buf with a fixed key order and no spaces,
 * then the caller writes it with one fwrite (nd_flush), so records from several
 * threads never interleave and output is byte-for-byte deterministic.  Strings are
 * escaped per RFC 8259; invalid UTF-8 is replaced by U+FFFD; floats are %.9g.
 *
 * Reading (nd_read) parses one line at a time with Jansson and keeps the source
 * name and line number, so the first malformed record can be reported as
 * "ci-x: <stdin>:17: expected a JSON object".
 */
#ifndef CI_ND_H
#define CI_ND_H

#include <stdio.h>
#include <jansson.h>
#include "core/buf.h"

/* Start a record: `{"_type":"<type>"`. */
void nd_begin(struct buf *b, const char *type);
void nd_str(struct buf *b, const char *key, const char *s);	/* s may be NULL: null */
void nd_strn(struct buf *b, const char *key, const char *s, size_t n);
void nd_int(struct buf *b, const char *key, long long v);
void nd_num(struct buf *b, const char *key, double v);
void nd_bool(struct buf *b, const char *key, int v);
void nd_null(struct buf *b, const char *key);
/* Append `,"key":` and then raw JSON text (already valid). */
void nd_raw(struct buf *b, const char *key, const char *json);
/* Append `,"key":` only; the caller adds the value (e.g. with nd_json_string). */
void nd_key(struct buf *b, const char *key);
/* End a record: `}\n`. */
void nd_end(struct buf *b);
/* Append s (n bytes) as a JSON string literal, quotes included. */
void nd_json_string(struct buf *b, const char *s, size_t n);

/* Write b to f in one call; return 0 or -1 (errno set). */
int nd_flush(struct buf *b, FILE *f);

/* 1 if s[0..n) is valid UTF-8 (no overlongs, no surrogates). */
int utf8_valid(const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
int utf8_seq(const unsigned char *s, size_t n);

struct nd_reader {
	FILE *f;		/* the stream read */
	const char *name;	/* "<stdin>" or a path, for messages */
	long lineno;		/* line number of the record last read */
	struct buf line;	/* that record's raw text (without the newline) */
};

void nd_reader_init(struct nd_reader *r, FILE *f, const char *name);
void nd_reader_release(struct nd_reader *r);
/*
 * Read the next record.  Returns 1 and a new reference in *out (a JSON object with a
 * string "_type"), 0 at end of input, or -1 after reporting a malformed record or a
 * read error as "<name>:<line>: <what>".  Blank lines are skipped.
 */
int nd_read(struct nd_reader *r, json_t **out);

#endif
