/*
 * fuzz-ndjson.c: the NDJSON record reader (libcommon/core/nd.c) that ci-index load,
 * ci-embed and ci-refs read their input with, and the writer's string escaping.
 *
 * Input: the bytes of a stream.  Properties: no crash; a record read is a JSON
 * object with a string "_type"; every string the writer escapes reads back as
 * valid JSON.
 */
#define _GNU_SOURCE
#include "core/common.h"
#include "fuzz.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct nd_reader rd;
	struct buf b = BUF_INIT;
	json_t *rec;
	int rc;

	if (f) {
		nd_reader_init(&rd, f, "<fuzz>");
		while ((rc = nd_read(&rd, &rec)) > 0) {
			if (!json_is_string(json_object_get(rec, "_type")))
				fuzz_fail("nd_read returned a record without a string _type");
			json_decref(rec);
		}
		nd_reader_release(&rd);
		fclose(f);
	}
	/* the writer: any bytes in a string field give a valid JSON line */
	nd_begin(&b, "fuzz");
	nd_strn(&b, "text", (const char *)data, size);
	nd_end(&b);
	json_error_t err;
	json_t *back = json_loadb(b.buf, b.len, JSON_ALLOW_NUL, &err);
	if (!back)
		fuzz_fail("the writer wrote invalid JSON: %s", err.text);
	json_decref(back);
	buf_release(&b);
	return 0;
}
