/*
 * unit-spm.c: TAP tests of ci-embed's tokenizer (libcommon/spm.c, unorm.c).
 *
 * The expected ids are the reference tokenizer's (@energetic-ai/embeddings, run
 * by scripts/golden-embeddings.sh) for the texts of tests/golden/ci-embed/
 * tokens.jsonl: prose, code, text over 128 tokens, NFKC corners (ligatures, full
 * width, compositions, Hangul, reordered marks), unknown characters, the pieces
 * with null scores, white space.  Each text is also encoded with a token limit,
 * which must give a prefix of the same ids (the shortcut that reads only the
 * start of a long text).
 *
 * The vocabulary is the model's vocab.json: $CI_MODEL, else the build tree's
 * deps/model/use-lite; without one every test is skipped.
 */
#include "common.h"
#include "spm.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void show_ids(const char *what, const int32_t *ids, size_t n)
{
	size_t i;

	printf("#   %s [", what);
	for (i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", ids[i]);
	printf("]\n");
}

/* ok when got[0..got_n) equals want[0..want_n) */
static void is_ids(const int32_t *got, size_t got_n, const int32_t *want, size_t want_n,
		   const char *desc)
{
	int ok = got_n == want_n && (!got_n || !memcmp(got, want, got_n * sizeof(*got)));

	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok) {
		show_ids("got:     ", got, got_n);
		show_ids("expected:", want, want_n);
		failures++;
	}
}

/* A short, printable description of text. */
static char *describe(const char *what, const char *text)
{
	struct buf b = BUF_INIT;
	size_t n = strlen(text);

	buf_addf(&b, "%s ", what);
	nd_json_string(&b, text, n > 40 ? 40 : n);
	if (n > 40)
		buf_addstr(&b, "...");
	return buf_detach(&b, NULL);
}

int main(void)
{
	const char *model = getenv("CI_MODEL");
	const char *src = getenv("CI_SRC_DIR");
	char *vocab, *golden;
	struct spm *sp;
	struct spm_work w = SPM_WORK_INIT;
	FILE *f;
	json_t *rec;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	util_init("unit-spm");
	if (!model || !*model) {
#ifdef CI_MODEL_BUILD_DIR
		model = CI_MODEL_BUILD_DIR;
#else
		model = "deps/model/use-lite";
#endif
	}
	vocab = xasprintf("%s/vocab.json", model);
	golden = xasprintf("%s/tests/golden/ci-embed/tokens.jsonl", src && *src ? src : ".");
	if (access(vocab, R_OK) < 0) {
		printf("1..0 # SKIP no model in %s (scripts/setup fetches it)\n", model);
		free(vocab);
		free(golden);
		return 0;
	}
	if (spm_load(&sp, vocab) < 0) {
		printf("Bail out! cannot load %s\n", vocab);
		return 1;
	}
	if (!(f = fopen(golden, "r"))) {
		printf("Bail out! cannot open %s\n", golden);
		return 1;
	}

	printf("%sok %d - the vocabulary has 8000 pieces\n", spm_size(sp) == 8000 ? "" : "not ",
	       ++test_nr);
	failures += spm_size(sp) != 8000;

	while ((len = getline(&line, &cap, f)) > 0) {
		json_t *text, *jids;
		size_t n, i, max;
		int32_t *want;
		char *desc;

		if (!(rec = json_loadb(line, (size_t)len, 0, NULL)) ||
		    !json_is_string(json_object_get(rec, "text"))) {
			printf("Bail out! %s: a line that is not {\"text\":...,\"ids\":[...]}\n", golden);
			return 1;
		}
		text = json_object_get(rec, "text");
		jids = json_object_get(rec, "ids");
		n = json_array_size(jids);
		want = xcalloc(n + 1, sizeof(*want));
		for (i = 0; i < n; i++)
			want[i] = (int32_t)json_integer_value(json_array_get(jids, i));

		spm_encode(sp, &w, json_string_value(text), json_string_length(text), 0);
		desc = describe("ids of", json_string_value(text));
		is_ids(w.ids, w.ids_nr, want, n, desc);
		free(desc);

		/* a limit gives the same ids, cut */
		max = n > 6 ? n / 3 : 2;
		spm_encode(sp, &w, json_string_value(text), json_string_length(text), max);
		desc = describe("first ids of", json_string_value(text));
		is_ids(w.ids, w.ids_nr, want, n < max ? n : max, desc);
		free(desc);

		free(want);
		json_decref(rec);
	}

	/* what pieces look like */
	printf("%sok %d - piece 0 is the unknown piece\n",
	       !strcmp(spm_piece(sp, 0), "\xef\xbf\xbd") ? "" : "not ", ++test_nr);
	failures += !!strcmp(spm_piece(sp, 0), "\xef\xbf\xbd");
	printf("%sok %d - a null score counts as 0\n", spm_score(sp, 57) == 0 ? "" : "not ",
	       ++test_nr);
	failures += spm_score(sp, 57) != 0;

	free(line);
	fclose(f);
	spm_work_release(&w);
	spm_free(sp);
	free(vocab);
	free(golden);
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
