/*
 * fuzz-embed.c: ci-embed's record reader and what it makes of a record, in
 * process: cmd/ci-embed.c is compiled into this target (its main() renamed).
 * Each input is a stream read by read_batch() as ci-embed reads its standard
 * input (getline, JSON, the chunk and commit records' text through
 * embed_chunk_text() and embed_commit_text() under the default --fields),
 * batch after batch, without a model: nothing is embedded.
 *
 * Properties: no crash, no leak; a batch's items lie inside what it read.
 */
#define _GNU_SOURCE
int ci_embed_main(int argc, char **argv);
#define main ci_embed_main
#include "../../cmd/ci-embed.c"
#undef main
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct options o;
	struct reader r;
	struct batch *b = xcalloc(1, sizeof(*b));
	int eof = 0;
	FILE *f;

	if (!init) {
		util_init("ci-embed");
		init = 1;
	}
	memset(&o, 0, sizeof(o));
	o.batch = 4;
	o.max_tokens = 128;
	parse_fields(&o, DEFAULT_FIELDS);
	if (!(f = fmemopen((void *)data, size, "r")))
		return 0;
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.name = "<fuzz>";
	b->in = b->texts = b->out = (struct buf)BUF_INIT;
	while (!eof && read_batch(&r, b, &o, &eof) > 0) {
		for (size_t i = 0; i < b->item_nr; i++) {
			const struct item *it = &b->item[i];
			if (it->off + it->len > b->in.len ||
			    (it->chunk && it->text_off + it->text_len > b->texts.len))
				fuzz_fail("item %zu lies outside its batch", i);
		}
		batch_reset(b);
	}
	batch_free(b);
	free(r.line);
	fclose(f);
	return 0;
}
