/*
 * unit-spm.c: TAP tests of ci-embed's tokenizer (libcommon/embed/spm.c, unorm.c).
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
#include "core/common.h"
#include "embed/spm.h"

#include <fcntl.h>
#include <sys/stat.h>

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

/* The golden file's texts encoded by sp, each checked against the reference's ids. */
static void golden_ids(const struct spm *sp, struct spm_work *w, FILE *f, const char *golden, const char *label)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	json_t *rec;

	char *what = xasprintf("%sids of", label), *first = xasprintf("%sfirst ids of", label);

	rewind(f);
	while ((len = getline(&line, &cap, f)) > 0) {
		json_t *text, *jids;
		size_t n, i, max;
		int32_t *want;
		char *desc;

		if (!(rec = json_loadb(line, (size_t)len, 0, NULL)) ||
		    !json_is_string(json_object_get(rec, "text"))) {
			printf("Bail out! %s: a line that is not {\"text\":...,\"ids\":[...]}\n", golden);
			exit(1);
		}
		text = json_object_get(rec, "text");
		jids = json_object_get(rec, "ids");
		n = json_array_size(jids);
		want = xcalloc(n + 1, sizeof(*want));
		for (i = 0; i < n; i++)
			want[i] = (int32_t)json_integer_value(json_array_get(jids, i));

		spm_encode(sp, w, json_string_value(text), json_string_length(text), 0);
		desc = describe(what, json_string_value(text));
		is_ids(w->ids, w->ids_nr, want, n, desc);
		free(desc);

		/* a limit gives the same ids, cut */
		max = n > 6 ? n / 3 : 2;
		spm_encode(sp, w, json_string_value(text), json_string_length(text), max);
		desc = describe(first, json_string_value(text));
		is_ids(w->ids, w->ids_nr, want, n < max ? n : max, desc);
		free(desc);

		free(want);
		json_decref(rec);
	}

	free(line);
	free(what);
	free(first);
}

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

/* Copy file from to to; exits on failure. */
static void copy_file(const char *from, const char *to)
{
	char *data;
	size_t n;
	FILE *o;

	if (read_file(from, &data, &n) < 0 || !(o = fopen(to, "w")) || fwrite(data, 1, n, o) != n || fclose(o)) {
		printf("Bail out! cannot copy %s to %s\n", from, to);
		exit(1);
	}
	free(data);
}

/*
 * spm_load_cached(): the copy is written, then read instead of the JSON (shown
 * by a source turned to junk with its size and mtime kept, which only the copy
 * can stand for), a damaged copy is not trusted, and a changed source is read
 * again.
 */
static void cached(const struct spm *sp, struct spm_work *w, FILE *f, const char *vocab, const char *golden)
{
	char dir[] = "/tmp/unit-spm.XXXXXX", *src, *cache, *data;
	struct spm *c = NULL;
	struct timespec times[2];
	struct stat st;
	size_t n, i;
	FILE *o;
	int same = 1;

	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary directory\n");
		exit(1);
	}
	src = xasprintf("%s/vocab.json", dir);
	cache = xasprintf("%s/vocab.bin", dir);
	copy_file(vocab, src);
	ok(spm_load_cached(&c, src, cache) == 0 && access(cache, F_OK) == 0, "cache: a first load writes the copy");
	spm_free(c);
	c = NULL;

	/* junk of the same size and mtime: only the copy can be read */
	stat(src, &st);
	if (read_file(src, &data, &n) < 0 || !(o = fopen(src, "w"))) {
		printf("Bail out! cannot rewrite %s\n", src);
		exit(1);
	}
	memset(data, 'x', n);
	fwrite(data, 1, n, o);
	fclose(o);
	free(data);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	utimensat(AT_FDCWD, src, times, 0);
	ok(spm_load_cached(&c, src, cache) == 0, "cache: read for a source of the same size and mtime");
	if (c) {
		for (i = 0; i < spm_size(sp); i++)
			same &= spm_size(c) == spm_size(sp) && !strcmp(spm_piece(c, (int32_t)i), spm_piece(sp, (int32_t)i)) &&
				spm_score(c, (int32_t)i) == spm_score(sp, (int32_t)i);
		ok(same, "cache: the same pieces and scores");
		golden_ids(c, w, f, golden, "from the copy: ");
		spm_free(c);
		c = NULL;
	}

	/* a damaged copy: not read (and the junk source then fails) */
	if (read_file(cache, &data, &n) < 0 || !(o = fopen(cache, "w"))) {
		printf("Bail out! cannot rewrite %s\n", cache);
		exit(1);
	}
	data[n / 2] ^= 0x40;
	fwrite(data, 1, n, o);
	fclose(o);
	free(data);
	fprintf(stderr, "(an error about %s is expected)\n", src);
	ok(spm_load_cached(&c, src, cache) < 0 && !c, "cache: a damaged copy is not trusted");

	/* the source again, changed: read, and the copy made anew */
	copy_file(vocab, src);
	ok(spm_load_cached(&c, src, cache) == 0, "cache: a changed source is read again");
	spm_free(c);
	c = NULL;
	ok(spm_load_cached(&c, src, cache) == 0, "cache: and its new copy read");
	if (c)
		golden_ids(c, w, f, golden, "from the new copy: ");
	spm_free(c);
	unlink(src);
	unlink(cache);
	rmdir(dir);
	free(src);
	free(cache);
}

int main(void)
{
	const char *model = getenv("CI_MODEL");
	const char *src = getenv("CI_SRC_DIR");
	char *vocab, *golden;
	struct spm *sp;
	struct spm_work w = SPM_WORK_INIT;
	FILE *f;

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

	golden_ids(sp, &w, f, golden, "");

	/* what pieces look like */
	printf("%sok %d - piece 0 is the unknown piece\n",
	       !strcmp(spm_piece(sp, 0), "\xef\xbf\xbd") ? "" : "not ", ++test_nr);
	failures += !!strcmp(spm_piece(sp, 0), "\xef\xbf\xbd");
	printf("%sok %d - a null score counts as 0\n", spm_score(sp, 57) == 0 ? "" : "not ",
	       ++test_nr);
	failures += spm_score(sp, 57) != 0;

	cached(sp, &w, f, vocab, golden);
	fclose(f);
	spm_work_release(&w);
	spm_free(sp);
	free(vocab);
	free(golden);
	printf("1..%d\n", test_nr);
	return failures ? 1 : 0;
}
