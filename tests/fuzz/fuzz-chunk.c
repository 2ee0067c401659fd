/*
 * fuzz-chunk.c: the chunker (libcommon/parse/chunk.c) and the complexity counter on
 * any bytes, in every language with a grammar.
 *
 * Input: "<language>\n<file>", where <language> is a name ci knows ("c",
 * "python", ...); an input whose first line names none is a file of the
 * language picked by its first byte.  Properties: no crash, and what comes out
 * is NDJSON (every line a JSON object) whose chunks tile the file's lines.
 */
#include "core/common.h"
#include "parse/chunk.h"
#include "parse/complexity.h"
#include "fuzz.h"

#include <jansson.h>

static const struct lang *pick_lang(const uint8_t *data, size_t size, size_t *skip)
{
	const struct lang *const *all = lang_all();
	const uint8_t *nl = memchr(data, '\n', size < 32 ? size : 32);
	size_t n = 0;

	*skip = 0;
	if (nl) {
		char name[32];
		memcpy(name, data, (size_t)(nl - data));
		name[nl - data] = '\0';
		const struct lang *l = lang_by_name(name);
		if (l && l->grammar) {
			*skip = (size_t)(nl - data) + 1;
			return l;
		}
	}
	while (all[n])
		n++;
	if (!size)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct lang *l = all[(data[0] + i) % n];
		if (l->grammar || l->markdown)
			return l;
	}
	return NULL;
}

/* Lines of data[0..n) as the chunker counts them (a last line without newline counts). */
static long count_lines(const char *data, size_t n)
{
	long lines = 0;

	for (size_t i = 0; i < n; i++)
		if (data[i] == '\n')
			lines++;
	if (n && data[n - 1] != '\n')
		lines++;
	return lines;
}

static void check_records(const struct buf *out, long lines)
{
	const char *p = out->buf, *end = out->buf + out->len;
	long next = 1;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		json_error_t err;
		json_t *rec;

		if (!nl)
			fuzz_fail("a record without its newline");
		rec = json_loadb(p, (size_t)(nl - p), JSON_ALLOW_NUL, &err);
		if (!json_is_object(rec))
			fuzz_fail("not a JSON object: %.*s (%s)", (int)(nl - p), p, err.text);
		if (!strcmp(json_string_value(json_object_get(rec, "_type")), "chunk")) {
			long s = (long)json_integer_value(json_object_get(rec, "start_line"));
			long e = (long)json_integer_value(json_object_get(rec, "end_line"));
			if (s != next || e < s)
				fuzz_fail("chunk %ld-%ld where line %ld was next", s, e, next);
			next = e + 1;
		}
		json_decref(rec);
		p = nl + 1;
	}
	if (next != 1 && next != lines + 1)
		fuzz_fail("chunks end at line %ld of %ld", next - 1, lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chunk_opts opts = { CHUNK_WANT_ALL, 20 };
	struct buf out = BUF_INIT, warn = BUF_INIT;
	const struct lang *l;
	struct chunker *c;
	struct complexity *cx;
	size_t skip;
	long score = 0, funcs = 0;

	l = pick_lang(data, size, &skip);
	data += skip;
	size -= skip;
	c = chunker_new(&opts);
	chunker_file(c, "fuzz.input", l, (const char *)data, size, NULL, &out, &warn);
	check_records(&out, count_lines((const char *)data, size));
	chunker_free(c);
	cx = complexity_new();
	complexity_of(cx, l, (const char *)data, size, &score, &funcs);
	complexity_free(cx);
	buf_release(&out);
	buf_release(&warn);
	return 0;
}
