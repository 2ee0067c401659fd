/*
 * bert-tokens: the token ids ci-embed reads for each text, for the tokenizer's
 * tests against the reference's ids (tests/golden/ci-embed-bert).
 *
 *   bert-tokens <model-dir> <records>
 *
 * For each line of <records> (a JSON object with "text"), prints the ids of its
 * text as the model in <model-dir> tokenizes it, as a JSON array, one a line,
 * through the same embed_tokenize() as ci-embed --query.  Exit 0, or 3 with a
 * message.
 */
#include "core/common.h"
#include "embed/embed.h"

int main(int argc, char **argv)
{
	struct embed_model *m;
	struct embed_work *w;
	struct buf out = BUF_INIT;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;
	FILE *f;

	util_init(argv[0]);
	if (argc != 3)
		die("usage: bert-tokens <model-dir> <records>");
	if (embed_model_open(&m, argv[1]) < 0)
		return EXIT_IO;
	if (!(f = fopen(argv[2], "r")))
		die("cannot open '%s'", argv[2]);
	w = embed_work_new(m);
	while ((len = getline(&line, &cap, f)) > 0) {
		json_error_t jerr;
		json_t *rec = json_loadb(line, (size_t)len, 0, &jerr), *t;
		const int32_t *ids;
		size_t n, i;

		lineno++;
		t = json_object_get(rec, "text");
		if (!json_is_string(t))
			die("%s:%ld: no \"text\"", argv[2], lineno);
		ids = embed_tokenize(w, json_string_value(t), json_string_length(t),
				     embed_max_tokens(m), &n);
		buf_reset(&out);
		buf_addch(&out, '[');
		for (i = 0; i < n; i++)
			buf_addf(&out, "%s%d", i ? "," : "", (int)ids[i]);
		buf_addstr(&out, "]\n");
		fputs(out.buf, stdout);
		json_decref(rec);
	}
	free(line);
	fclose(f);
	buf_release(&out);
	embed_work_free(w);
	embed_model_close(m);
	return close_stdout(EXIT_OK);
}
