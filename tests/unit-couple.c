/*
 * unit-couple.c: TAP tests of ci-couple's engine on histories built in memory
 * (no git, no index): coupling scores from a small list of commits (frequency,
 * recency, huge commits, renames), the related files of one file, the whole
 * coupling table, one file's history, --since and the tokenizer of commit
 * search.
 */
#include "core/common.h"
#include "history/couple.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

static void is_num(double got, double want, const char *desc)
{
	int same = fabs(got - want) < 1e-9;

	ok(same, desc);
	if (!same)
		printf("#   got %.9g, expected %.9g\n", got, want);
}

static void is_int(long got, long want, const char *desc)
{
	ok(got == want, desc);
	if (got != want)
		printf("#   got %ld, expected %ld\n", got, want);
}

#define DAY 86400

/* Add a commit at day t (newest first, as history_load() leaves them) changing
 * the files named in paths (NULL-terminated; "old=>new" a rename). */
static void commit(struct history *h, long t, const char *author, const char *const *paths)
{
	struct hcommit *c = history_add(h);
	size_t n = 0;

	while (paths[n])
		n++;
	snprintf(c->sha, sizeof(c->sha), "%040ld", t);
	c->time = (int64_t)t * DAY;
	c->author = xstrdup(author);
	c->message = xstrdup("change");
	c->parents = 1;
	c->merged = -1;
	c->files = xcalloc(n + 1, sizeof(*c->files));
	for (size_t k = 0; k < n; k++) {
		const char *arrow = strstr(paths[k], "=>");
		struct hfile *f = &c->files[c->files_nr++];
		if (arrow) {
			char *old = xstrndup(paths[k], (size_t)(arrow - paths[k]));
			f->old_path = hpaths_intern(&h->paths, old);
			f->path = hpaths_intern(&h->paths, arrow + 2);
			f->status = 'R';
			free(old);
		} else {
			f->path = hpaths_intern(&h->paths, paths[k]);
			f->old_path = HPATH_NONE;
			f->status = 'M';
		}
		f->added = 10;
		f->deleted = 2;
	}
	c->huge = h->max_files > 0 && (long)n > h->max_files;
	history_sort_files(h, c);
}

#define FILES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * Newest first: day 100 a.c b.c; day 90 a.c b.c c.c; day 80 a.c c.c;
 * day 70 a huge commit of five files (left out); day 60 old.c => b.c
 * renamed, with a.c (so old.c's history is b.c's).
 */
static void build(struct history *h)
{
	memset(h, 0, sizeof(*h));
	h->max_files = 4;
	h->lines = 1;
	h->source = "test";
	commit(h, 100, "Ann", FILES("a.c", "b.c"));
	commit(h, 90, "Bob", FILES("a.c", "b.c", "c.c"));
	commit(h, 80, "Ann", FILES("a.c", "c.c"));
	commit(h, 70, "Cy", FILES("a.c", "b.c", "c.c", "d.c", "e.c"));
	commit(h, 60, "Ann", FILES("old.c=>b.c", "a.c"));
	commit(h, 50, "Bob", FILES("old.c", "c.c"));
	history_follow_renames(h);
}

static void test_scores(void)
{
	struct history h;
	struct file_stats fs;
	uint32_t a, b, c, old;

	build(&h);
	a = history_lookup(&h, "a.c");
	b = history_lookup(&h, "b.c");
	c = history_lookup(&h, "c.c");
	old = history_lookup(&h, "old.c");
	ok(a != HPATH_NONE && b != HPATH_NONE && c != HPATH_NONE, "paths known");
	is_int(old, b, "an old name is looked up as its current one");
	is_int(h.newest, 100L * DAY, "newest commit");
	couple_count_changes(&h, &fs);
	is_int(fs.changes[a], 4, "a.c: four changes (the huge commit left out)");
	is_int(fs.changes[b], 4, "b.c: four, old.c's included");
	is_int(fs.changes[c], 3, "c.c: three");
	/* a and b: 3 commits together of min(4, 4); last together at the newest: no decay */
	is_num(couple_score(&h, &fs, a, b, 3, 100L * DAY, 365), 0.75, "score: frequency at the newest");
	/* halved after a half-life */
	is_num(couple_score(&h, &fs, a, b, 3, 70L * DAY, 30), 0.375, "score: halved a half-life back");
	/* a file changed once counts twice: one commit alone is not a perfect pair */
	is_num(couple_score(&h, &fs, h.c[3].files[3].cur, h.c[3].files[4].cur, 1, 100L * DAY, 365),
	       0.5, "score: a file changed once counts as twice");
	file_stats_release(&fs);
	history_release(&h);
}

static void test_related(void)
{
	struct history h;
	struct file_stats fs;
	struct couple_scored *v = NULL;
	struct couple_opts o = { .half_life = 365, .min_co = 1 };
	size_t n;
	long huge;
	uint32_t a;

	build(&h);
	couple_count_changes(&h, &fs);
	a = history_lookup(&h, "a.c");
	n = couple_related(&h, &fs, a, 365, 0, 1, NULL, &v);
	is_int((long)n, 2, "a.c is coupled to two files");
	ok(n == 2 && !strcmp(h.paths.names[v[0].b], "b.c") && v[0].co == 3, "first b.c, 3 co-changes");
	ok(n == 2 && !strcmp(h.paths.names[v[1].b], "c.c") && v[1].co == 2, "then c.c, 2 co-changes");
	ok(n == 2 && v[0].score > v[1].score, "sorted by score");
	free(v);
	n = couple_related(&h, &fs, a, 365, 0, 3, NULL, &v);
	is_int((long)n, 1, "--min-co-changes 3 keeps b.c alone");
	free(v);
	n = couple_table(&h, &fs, &o, NULL, &v, &huge);
	is_int(huge, 1, "table: one huge commit left out");
	is_int((long)n, 3, "table: a-b, a-c, b-c");
	ok(n == 3 && !strcmp(h.paths.names[v[0].a], "a.c") && !strcmp(h.paths.names[v[0].b], "b.c"),
	   "table: a.c b.c first");
	ok(n == 3 && v[2].co == 2 && !strcmp(h.paths.names[v[2].a], "b.c"),
	   "table: b-c through the rename (old.c with c.c at day 50)");
	free(v);
	o.threshold = 0.7;
	n = couple_table(&h, &fs, &o, NULL, &v, &huge);
	is_int((long)n, 1, "table: --threshold 0.7 keeps one pair");
	free(v);
	file_stats_release(&fs);
	history_release(&h);
}

static void test_file_history(void)
{
	struct history h;
	struct file_history fh;

	build(&h);
	couple_file_history(&h, history_lookup(&h, "b.c"), &fh);
	is_int(fh.commits, 5, "b.c: five commits, its old name's included");
	is_int(fh.added, 50, "b.c: lines added");
	is_int(fh.first, 50L * DAY, "b.c: first change");
	is_int(fh.last, 100L * DAY, "b.c: last change");
	is_num(fh.months, 50 / 30.436875, "b.c: 50 days in months");
	ok(fh.authors_nr == 3 && !strcmp(fh.authors[0].name, "Ann") && fh.authors[0].commits == 2 &&
	   !strcmp(fh.authors[1].name, "Bob"), "authors: most commits first, then name");
	file_history_release(&fh);
	history_release(&h);
}

static void test_since_words(void)
{
	struct since s;
	char **w = NULL;
	size_t alloc = 0, n;

	ok(since_parse("2 weeks ago", &s) == 0 && s.kind == SINCE_REL, "since: a duration");
	is_int(since_resolve(&s, 100L * DAY), 86L * DAY, "since: two weeks before the newest");
	ok(since_parse("2024-01-31", &s) == 0 && since_resolve(&s, 0) == 1706659200, "since: a date, UTC");
	ok(since_parse("soon", &s) < 0, "since: junk refused");
	n = couple_tokenize("Fix crash: config_file, über!", &w, &alloc);
	ok(n == 5 && !strcmp(w[0], "fix") && !strcmp(w[2], "config") && !strcmp(w[3], "file") &&
	   !strcmp(w[4], "\xc3\xbc" "ber"), "tokenize: words, lower-cased, split at _, non-ASCII kept");
	couple_free_words(w, n);
	free(w);
}

int main(int argc, char **argv)
{
	util_init(argv[0]);
	printf("1..30\n");
	test_scores();
	test_related();
	test_file_history();
	test_since_words();
	return failures ? 1 : 0;
}
