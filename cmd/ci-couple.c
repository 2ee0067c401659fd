/*
 * ci-couple: what git history knows about a repository, as NDJSON records.
 *
 *   ci-couple history        commit records (files changed, lines), for ci-index load
 *   ci-couple coupling [f]   files that change together (temporal coupling)
 *   ci-couple hotspots       churn x complexity
 *   ci-couple file-history f the commits of one file, its authors, its churn rate
 *   ci-couple commits q      commit messages ranked by BM25
 *   ci-couple review         the code a diff touches, widened through coupling
 *
 * Shaped by two workloads: an agent asking one question of a repository with a
 * long history (the analyses read the history from the index when `ci-couple
 * history | ci-index load` stored it, and walk only what is newer in git), and a
 * first walk of a large history (githist.c diffs commits on every core).
 *
 * Everything is deterministic: sorted with total orders, and every notion of
 * "recent" measured from the newest commit read, never from the clock, so a
 * repository gives the same output today and next year.
 *
 * The engine is libcommon/history (history.h: the history in memory and its
 * loading; couple.h: coupling, hotspots, file history, commit search,
 * review); this file parses the options, runs one analysis and writes its
 * records.
 */
#include "core/common.h"
#include "core/human.h"
#include "history/couple.h"
#include "index/index.h"
#include "parse/lang.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>

static const char usage_text[] =
	"usage: ci-couple [options] history [--rev <commit>] [--since <when>] [--max-commits <n>] [--incremental]\n"
	"   or: ci-couple [options] coupling [<file>] [--rev <commit>] [--threshold <x>] [--limit <n>]\n"
	"   or: ci-couple [options] hotspots [--rev <commit>] [--since <when>] [--threshold <x>] [--limit <n>]\n"
	"   or: ci-couple [options] file-history <file> [--limit <n>]\n"
	"   or: ci-couple [options] commits <query> [--author <name>] [--file <path>] [--limit <n>]\n"
	"   or: ci-couple [options] review [--diff <spec>] [--budget <n>] [--depth <n>]\n"
	"\n"
	"What the git history of the repository containing the current directory says:\n"
	"its commits, files that change together, hotspots, a file's history, commit\n"
	"search, and the code a diff touches.  Writes NDJSON records.\n"
	"\n"
	"Options (of every command):\n"
	"      --since <when>        only commits since a date (2024-01-31, @<epoch>) or a\n"
	"                            time before the newest commit (\"6 months ago\", 2w, all)\n"
	"      --max-commits <n>     read at most the newest <n> commits\n"
	"      --max-files <n>       a commit changing more than <n> files is huge: left out\n"
	"                            of coupling, churn and review (default 50)\n"
	"      --half-life <days>    recency half-life of coupling scores (default 365)\n"
	"      --index <db>          read stored history from this index (default: $CI_INDEX,\n"
	"                            or <root>/.ci-index/index.db)\n"
	"      --no-index            read the history from git only\n"
	"  -j, --threads <n>         diff commits with <n> threads (default: the number of CPUs)\n"
	"  -v, --verbose             say more on stderr (where the history came from)\n"
	"      --json                NDJSON records even on a terminal (also: CI_FORMAT=json)\n"
	"  -h, --help                show this help and exit\n"
	"      --version             show the version and exit\n"
	"Options of some commands:\n"
	"      --incremental         history: only commits newer than the index holds\n"
	"      --rev <commit>        all but review: the history of <commit> (it and its\n"
	"                            ancestors), as if HEAD were there\n"
	"      --threshold <x>       coupling, hotspots, review: leave out scores below <x>\n"
	"      --min-co-changes <n>  coupling, review: leave out pairs seen together fewer\n"
	"                            than <n> times (default 1)\n"
	"      --limit <n>           at most <n> results (0: no limit)\n"
	"      --author <name>       commits: by this author (name or email, any case)\n"
	"      --file <path>         commits: touching this file or directory\n"
	"      --diff <spec>         review: unstaged (default), staged, branch:<name>,\n"
	"                            commit:<rev>, commit:<from>..<to>, commit:<a>...<b>\n"
	"      --budget <n>          review: at most <n> lines of code (default 500)\n"
	"      --depth <n>           review: follow coupling <n> steps (0 to 3, default 1)\n";

enum {
	OPT_SINCE = 256, OPT_MAX_COMMITS, OPT_MAX_FILES, OPT_HALF_LIFE, OPT_INDEX, OPT_NO_INDEX,
	OPT_INCREMENTAL, OPT_REV, OPT_THRESHOLD, OPT_MIN_CO, OPT_LIMIT, OPT_AUTHOR, OPT_FILE, OPT_DIFF,
	OPT_BUDGET, OPT_DEPTH, OPT_JSON,
};

static const struct option long_options[] = {
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "max-commits", required_argument, NULL, OPT_MAX_COMMITS },
	{ "max-files", required_argument, NULL, OPT_MAX_FILES },
	{ "half-life", required_argument, NULL, OPT_HALF_LIFE },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "no-index", no_argument, NULL, OPT_NO_INDEX },
	{ "incremental", no_argument, NULL, OPT_INCREMENTAL },
	{ "rev", required_argument, NULL, OPT_REV },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "min-co-changes", required_argument, NULL, OPT_MIN_CO },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "author", required_argument, NULL, OPT_AUTHOR },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "diff", required_argument, NULL, OPT_DIFF },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "threads", required_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The commands, as bits, to say which options apply where. */
enum {
	C_HISTORY = 1, C_COUPLING = 2, C_HOTSPOTS = 4, C_FILE_HISTORY = 8, C_COMMITS = 16,
	C_REVIEW = 32, C_ALL = 63,
};

static const struct {
	const char *name;	/* as typed */
	unsigned bit;		/* C_* */
	int min_args, max_args;	/* positional arguments after the command */
} commands[] = {
	{ "history", C_HISTORY, 0, 0 },
	{ "coupling", C_COUPLING, 0, 1 },
	{ "hotspots", C_HOTSPOTS, 0, 0 },
	{ "file-history", C_FILE_HISTORY, 1, 1 },
	{ "commits", C_COMMITS, 1, 1 },
	{ "review", C_REVIEW, 0, 0 },
};

/* Which commands each command-specific option applies to. */
static const struct {
	int opt;		/* OPT_* */
	const char *name;	/* for messages */
	unsigned cmds;		/* C_* bits */
} option_scope[] = {
	{ OPT_HALF_LIFE, "--half-life", C_COUPLING | C_REVIEW },
	{ OPT_INCREMENTAL, "--incremental", C_HISTORY },
	{ OPT_REV, "--rev", C_ALL & ~C_REVIEW },
	{ OPT_THRESHOLD, "--threshold", C_COUPLING | C_HOTSPOTS | C_REVIEW },
	{ OPT_MIN_CO, "--min-co-changes", C_COUPLING | C_REVIEW },
	{ OPT_LIMIT, "--limit", C_COUPLING | C_HOTSPOTS | C_FILE_HISTORY | C_COMMITS | C_REVIEW },
	{ OPT_AUTHOR, "--author", C_COMMITS },
	{ OPT_FILE, "--file", C_COMMITS },
	{ OPT_DIFF, "--diff", C_REVIEW },
	{ OPT_BUDGET, "--budget", C_REVIEW },
	{ OPT_DEPTH, "--depth", C_REVIEW },
};

/* The command line: the analysis asked, and its options. */
struct options {
	unsigned cmd;		/* C_* of the command */
	struct couple_opts e;	/* what the engine is asked */
	int incremental;	/* history --incremental */
	const char *rev;	/* history --rev: walk from this commit, not HEAD */
	unsigned given;		/* bit (opt - OPT_SINCE) set for each option given */
};

static int out_flush(struct buf *b)
{
	if (nd_flush(b, stdout) < 0)
		return -1;
	buf_reset(b);
	return 0;
}

/* ---- records ---- */

/* A commit record; with only >= 0, only the files whose current name is that id. */
static void write_commit(struct buf *b, const struct history *h, const struct hcommit *c,
			 int64_t only, double score, int with_score, const char *signals)
{
	size_t k;
	int first = 1;

	nd_begin(b, "commit");
	nd_str(b, "sha", c->sha);
	nd_int(b, "time", c->time);
	nd_str(b, "author", c->author);
	nd_str(b, "email", c->email);
	nd_str(b, "message", c->message);
	if (c->parents >= 0)
		nd_int(b, "parents", c->parents);
	else
		nd_null(b, "parents");
	nd_key(b, "files");
	buf_addch(b, '[');
	for (k = 0; k < c->files_nr; k++) {
		const struct hfile *f = &c->files[k];
		if (only >= 0 && f->cur != (uint32_t)only)
			continue;
		if (!first)
			buf_addch(b, ',');
		first = 0;
		buf_addstr(b, "{\"path\":");
		nd_json_string(b, h->paths.names[f->path], strlen(h->paths.names[f->path]));
		if (f->old_path != HPATH_NONE)
			nd_str(b, "old_path", h->paths.names[f->old_path]);
		if (f->status != '?') {
			char st[2] = { f->status, 0 };
			nd_str(b, "status", st);
		}
		if (h->lines && f->added >= 0) {
			nd_int(b, "added", f->added);
			nd_int(b, "deleted", f->deleted);
		}
		if (f->binary)
			nd_bool(b, "binary", 1);
		buf_addch(b, '}');
	}
	buf_addch(b, ']');
	nd_bool(b, "huge", c->huge);
	if (c->merged >= 0)
		nd_int(b, "merged", c->merged);
	if (c->merged_into[0])
		nd_str(b, "merged_into", c->merged_into);
	if (with_score)
		nd_num(b, "score", score);
	if (signals)
		nd_raw(b, "signals", signals);
	nd_end(b);
}

/* ---- history ---- */

struct history_out {
	struct buf b;		/* the record being written */
	long commits;		/* written */
	long missing;		/* changed files with a blob absent from the object database */
	int failed;		/* a write failed */
};

/* A commit record from git; merged_into: the merge that brought it in, or NULL. */
static void write_git_commit(struct buf *b, const struct hist_commit *c, const char *merged_into)
{
	size_t k;

	nd_begin(b, "commit");
	nd_str(b, "sha", c->sha);
	nd_int(b, "time", c->time);
	nd_str(b, "author", c->author);
	nd_str(b, "email", c->email);
	nd_str(b, "message", c->message);
	nd_int(b, "parents", c->parents);
	nd_key(b, "files");
	buf_addch(b, '[');
	for (k = 0; k < c->files_nr; k++) {
		const struct hist_file *f = &c->files[k];
		char st[2] = { f->status, 0 };
		if (k)
			buf_addch(b, ',');
		buf_addstr(b, "{\"path\":");
		nd_json_string(b, f->path, strlen(f->path));
		if (f->old_path)
			nd_str(b, "old_path", f->old_path);
		nd_str(b, "status", st);
		nd_int(b, "added", f->added);
		nd_int(b, "deleted", f->deleted);
		if (f->binary)
			nd_bool(b, "binary", 1);
		buf_addch(b, '}');
	}
	buf_addch(b, ']');
	nd_bool(b, "huge", c->huge);
	if (c->parents > 1)
		nd_int(b, "merged", (long long)c->merged_nr);
	if (merged_into)
		nd_str(b, "merged_into", merged_into);
	nd_end(b);
}

static int emit_git_commit(struct hist_commit *c, void *data)
{
	struct history_out *ho = data;
	size_t k;

	write_git_commit(&ho->b, c, NULL);
	ho->missing += c->missing;
	for (k = 0; k < c->merged_nr; k++)
		write_git_commit(&ho->b, &c->merged[k], c->sha);
	ho->commits++;
	if (out_flush(&ho->b) < 0) {
		ho->failed = 1;
		return 1;
	}
	return 0;
}

static int cmd_history(const struct options *o, struct hrepo *r)
{
	struct history_out ho = { BUF_INIT, 0, 0, 0 };
	struct hist_opts hopt;
	struct ci_index *ix = NULL;
	char *stored = NULL;
	git_oid base;
	char head_hex[GIT_OID_HEXSZ + 1];
	int incremental = 0, rc, ret = EXIT_OK;

	if (!r->has_head) {
		error("no commits in this repository");
		return EXIT_NOTHING;
	}
	git_oid_tostr(head_hex, sizeof(head_hex), &r->head);
	memset(&hopt, 0, sizeof(hopt));
	hopt.since = since_resolve(&o->e.since, r->head_time);
	hopt.max_commits = o->e.max_commits;
	hopt.max_files = o->e.max_files;
	hopt.lines = 1;
	hopt.threads = o->e.threads;
	hopt.merged = 1;
	hopt.start = &r->head;

	if (o->incremental) {
		ix = hrepo_open_index(&o->e, r);
		if (!ix) {
			if (verbosity)
				fprintf(stderr, "%s: no index: walking the whole history\n", progname);
		} else if (!(stored = history_stored_head(ix))) {
			if (verbosity)
				fprintf(stderr, "%s: the index holds no history: walking all of it\n", progname);
		} else if (hrepo_is_ancestor_of_head(r, stored, &base)) {
			incremental = 1;
			hopt.stop = &base;
		} else {
			warning("history was rewritten (%.12s, the newest commit the index holds, "
				"is not an ancestor of HEAD): writing all of it, with \"replace\":true "
				"so that ci-index load drops the stored history", stored);
		}
	}

	/* the control record: what this stream replaces or extends */
	nd_begin(&ho.b, "history");
	nd_str(&ho.b, "head", head_hex);
	nd_str(&ho.b, "base", incremental ? stored : NULL);
	nd_bool(&ho.b, "replace", !incremental);
	if (o->e.since.kind == SINCE_REL || o->e.since.kind == SINCE_ABS)
		nd_int(&ho.b, "since", hopt.since);
	else
		nd_null(&ho.b, "since");
	nd_int(&ho.b, "max_files", o->e.max_files);
	nd_str(&ho.b, "source", "git");
	nd_end(&ho.b);
	if (out_flush(&ho.b) < 0)
		ho.failed = 1;

	rc = ho.failed ? 0 : hist_walk(r->w.repo, &hopt, emit_git_commit, &ho);
	if (rc < 0)
		ret = EXIT_IO;
	else if (ho.failed)
		ret = EXIT_IO;	/* close_stdout reports the write error */
	else if (verbosity)
		fprintf(stderr, "%s: %ld commits%s\n", progname, ho.commits,
			incremental ? " newer than the index's" : "");
	if (ho.missing)
		warning("%ld changed file%s of these commits %s a blob the repository does not have "
			"(a partial clone?): line counts -1 (unknown), and no rename looked for among them",
			ho.missing, ho.missing == 1 ? "" : "s", ho.missing == 1 ? "has" : "have");
	if (ret == EXIT_OK && !ho.commits && !incremental) {
		error("no commits%s", o->e.since.kind == SINCE_NONE ? "" : " in that time");
		ret = EXIT_NOTHING;
	}
	buf_release(&ho.b);
	free(stored);
	index_close(ix);
	return ret;
}

/* ---- coupling ---- */

/* Resolve a file argument to a current name; HPATH_NONE after reporting. */
static uint32_t file_arg(struct hrepo *r, const struct history *h, const char *arg, char **rel)
{
	uint32_t id;

	*rel = hrepo_user_path(r, arg);
	if (!*rel)
		return HPATH_NONE;
	id = history_lookup(h, *rel);
	if (id == HPATH_NONE)
		error("no commits touch '%s'", *rel);
	return id;
}

static void write_coupling(struct buf *b, const struct history *h, const struct file_stats *fs,
			   const struct couple_scored *s)
{
	nd_begin(b, "coupling");
	nd_str(b, "a", h->paths.names[s->a]);
	nd_str(b, "b", h->paths.names[s->b]);
	nd_num(b, "score", s->score);
	nd_int(b, "co_changes", s->co);
	nd_int(b, "last", s->last);
	nd_int(b, "a_changes", fs->changes[s->a]);
	nd_int(b, "b_changes", fs->changes[s->b]);
	nd_end(b);
}

static int cmd_coupling(const struct options *o, struct hrepo *r, const char *file_name)
{
	struct history h;
	struct file_stats fs = { NULL, NULL };
	struct head_files hf = { NULL };
	struct couple_scored *v = NULL;
	struct buf b = BUF_INIT;
	size_t nr = 0, i, written = 0;
	uint32_t file = HPATH_NONE;
	long limit = o->e.limit, huge = 0;
	char *rel = NULL;
	int ret = EXIT_OK;

	if (history_load(&o->e, r, &h, 0) < 0)
		return EXIT_IO;
	if (head_files_open(r, &hf) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	couple_count_changes(&h, &fs);
	if (file_name) {
		if ((file = file_arg(r, &h, file_name, &rel)) == HPATH_NONE) {
			ret = rel ? EXIT_NOTHING : EXIT_IO;
			goto done;
		}
		if (limit < 0)
			limit = 10;
		nr = couple_related(&h, &fs, file, o->e.half_life, o->e.threshold, o->e.min_co, &hf, &v);
		nd_begin(&b, "related");
		nd_str(&b, "file", h.paths.names[file]);
		nd_int(&b, "changes", fs.changes[file]);
		nd_int(&b, "count", (long long)(limit > 0 && (size_t)limit < nr ? (size_t)limit : nr));
		nd_int(&b, "commits", (long long)h.nr);
		nd_str(&b, "source", h.source);
		nd_end(&b);
	} else {
		nr = couple_table(&h, &fs, &o->e, &hf, &v, &huge);
		/* the control record: a whole coupling table (ci-index load replaces its own) */
		nd_begin(&b, "couplings");
		nd_bool(&b, "replace", 1);
		nd_int(&b, "count", (long long)(limit > 0 && (size_t)limit < nr ? (size_t)limit : nr));
		nd_int(&b, "commits", (long long)h.nr);
		nd_int(&b, "huge", huge);
		nd_int(&b, "newest", h.newest);
		nd_num(&b, "half_life", o->e.half_life);
		nd_str(&b, "source", h.source);
		nd_end(&b);
	}
	for (i = 0; i < nr && (limit <= 0 || (long)i < limit); i++) {
		write_coupling(&b, &h, &fs, &v[i]);
		written++;
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
	else if (!written)
		ret = EXIT_NOTHING;
done:
	free(v);
	free(rel);
	file_stats_release(&fs);
	buf_release(&b);
	head_files_close(&hf);
	history_release(&h);
	return ret;
}

/* ---- hotspots ---- */

static int cmd_hotspots(const struct options *o, struct hrepo *r)
{
	struct hotspots hs;
	struct buf b = BUF_INIT;
	size_t i;
	int ret = couple_hotspots(&o->e, r, &hs);

	if (ret != EXIT_OK)
		goto done;
	nd_begin(&b, "hotspots");
	nd_int(&b, "count", (long long)hs.nr);
	if (hs.since != HIST_NO_SINCE) {
		char when[32];
		hist_iso_time(when, sizeof(when), hs.since);
		nd_str(&b, "since", when);
	} else {
		nd_null(&b, "since");
	}
	nd_int(&b, "commits", (long long)hs.h.nr);
	nd_str(&b, "source", hs.h.source);
	nd_end(&b);
	for (i = 0; i < hs.nr; i++) {
		nd_begin(&b, "hotspot");
		nd_str(&b, "path", hs.h.paths.names[hs.v[i].path]);
		nd_str(&b, "lang", hs.v[i].lang->name);
		nd_num(&b, "score", hs.v[i].score);
		nd_int(&b, "churn", hs.v[i].churn);
		nd_int(&b, "commits", hs.v[i].commits);
		nd_int(&b, "complexity", hs.v[i].complexity);
		nd_end(&b);
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
	else if (!hs.nr)
		ret = EXIT_NOTHING;
done:
	buf_release(&b);
	hotspots_release(&hs);
	return ret;
}

/* ---- file-history ---- */

static void write_file_history(struct buf *b, const struct history *h, uint32_t id,
			       const struct file_history *fh)
{
	nd_begin(b, "file_history");
	nd_str(b, "path", h->paths.names[id]);
	nd_int(b, "commits", fh->commits);
	nd_int(b, "added", fh->added);
	nd_int(b, "deleted", fh->deleted);
	nd_int(b, "first", fh->first);
	nd_int(b, "last", fh->last);
	nd_num(b, "commits_per_month", hist_round4((double)fh->commits / fh->months));
	nd_num(b, "churn_per_month", hist_round4((double)(fh->added + fh->deleted) / fh->months));
	nd_key(b, "authors");
	buf_addch(b, '[');
	for (size_t j = 0; j < fh->authors_nr; j++) {
		if (j)
			buf_addch(b, ',');
		buf_addstr(b, "{\"name\":");
		nd_json_string(b, fh->authors[j].name, strlen(fh->authors[j].name));
		nd_str(b, "email", fh->authors[j].email);
		nd_int(b, "commits", fh->authors[j].commits);
		buf_addch(b, '}');
	}
	buf_addch(b, ']');
	nd_str(b, "source", h->source);
	nd_end(b);
}

static int cmd_file_history(const struct options *o, struct hrepo *r, const char *arg)
{
	struct history h;
	struct file_history fh = { 0 };
	struct buf b = BUF_INIT;
	size_t i, k, written = 0;
	long limit = o->e.limit < 0 ? 20 : o->e.limit;
	uint32_t id;
	char *rel = NULL;
	int ret = EXIT_OK;

	if (history_load(&o->e, r, &h, 1) < 0)
		return EXIT_IO;
	if ((id = file_arg(r, &h, arg, &rel)) == HPATH_NONE) {
		ret = rel ? EXIT_NOTHING : EXIT_IO;
		goto done;
	}
	couple_file_history(&h, id, &fh);
	if (!fh.commits) {
		error("no commits touch '%s'", rel);
		ret = EXIT_NOTHING;
		goto done;
	}
	write_file_history(&b, &h, id, &fh);
	for (i = 0; i < h.nr && (limit <= 0 || (long)written < limit); i++) {
		const struct hcommit *c = &h.c[i];
		for (k = 0; k < c->files_nr; k++)
			if (c->files[k].cur == id)
				break;
		if (k == c->files_nr)
			continue;
		write_commit(&b, &h, c, id, 0, 0, NULL);
		written++;
		if (b.len > 65536 && out_flush(&b) < 0)
			break;
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
done:
	file_history_release(&fh);
	free(rel);
	buf_release(&b);
	history_release(&h);
	return ret;
}

/* ---- commits ---- */

static void write_commit_hits(struct buf *b, const struct history *h, const char *query,
			      const struct commit_search *cs)
{
	nd_begin(b, "commit_search");
	nd_str(b, "query", query);
	nd_int(b, "count", (long long)cs->nhits);
	nd_int(b, "commits", (long long)h->nr);
	nd_str(b, "source", h->source);
	nd_raw(b, "signals", cs->semantic ? "[\"bm25\",\"semantic\"]" : "[\"bm25\"]");
	if (!cs->semantic)
		nd_str(b, "semantic", cs->why);
	nd_end(b);
	for (size_t i = 0; i < cs->nhits; i++) {
		struct buf sig = BUF_INIT;
		size_t c = cs->hits[i].i;

		if (cs->semantic) {
			buf_addf(&sig, "{\"bm25\":%.9g,\"semantic\":", hist_round4(cs->bm25[c]));
			if (cs->cos[c] > -2)
				buf_addf(&sig, "%.9g}", hist_round4(cs->cos[c]));
			else
				buf_addstr(&sig, "null}");
		}
		write_commit(b, h, &h->c[c], -1, cs->hits[i].score, 1, cs->semantic ? sig.buf : NULL);
		buf_release(&sig);
		if (b->len > 65536 && out_flush(b) < 0)
			break;
	}
}

static int cmd_commits(const struct options *o, struct hrepo *r, const char *query)
{
	struct history h;
	struct commit_search cs = { 0 };
	struct buf b = BUF_INIT;
	char **q = NULL;
	size_t qn, qalloc = 0;
	int ret;

	qn = couple_tokenize(query, &q, &qalloc);
	if (!qn) {
		free(q);
		usage_error(usage_text, "the query '%s' has no words", query);
	}
	if (history_load(&o->e, r, &h, 0) < 0) {
		couple_free_words(q, qn);
		free(q);
		return EXIT_IO;
	}
	ret = couple_commit_search(&o->e, r, &h, query, q, qn, &cs);
	if (ret == EXIT_OK) {
		write_commit_hits(&b, &h, query, &cs);
		if (nd_flush(&b, stdout) < 0)
			ret = EXIT_IO;
		else if (!cs.nhits)
			ret = EXIT_NOTHING;
	}
	commit_search_release(&cs);
	couple_free_words(q, qn);
	free(q);
	buf_release(&b);
	history_release(&h);
	return ret;
}

/* ---- review ---- */

static void write_rchunk(struct buf *b, const struct rchunk *c)
{
	nd_begin(b, "review_chunk");
	nd_str(b, "path", c->path);
	nd_int(b, "start_line", c->start);
	nd_int(b, "end_line", c->end);
	nd_str(b, "kind", c->kind);
	nd_str(b, "name", c->name);
	nd_str(b, "reason", c->reason);
	if (c->coupled_to) {
		nd_str(b, "coupled_to", c->coupled_to);
		nd_num(b, "score", c->score);
	}
	nd_str(b, "text", c->text);
	nd_end(b);
}

static int cmd_review(const struct options *o, struct hrepo *r)
{
	struct review rv;
	struct buf b = BUF_INIT;
	int ret = couple_review(&o->e, r, &rv);

	if (ret == EXIT_USAGE)
		usage_error(usage_text, "%s", rv.usage);
	if (ret != EXIT_OK)
		goto done;
	nd_begin(&b, "review");
	nd_str(&b, "diff", rv.spec);
	nd_int(&b, "changed_files", (long long)rv.ch_nr);
	nd_int(&b, "deleted_files", (long long)rv.deleted_files);
	nd_int(&b, "changed_lines", rv.changed_lines);
	nd_key(&b, "files");
	buf_addch(&b, '[');
	buf_add(&b, rv.files.buf ? rv.files.buf : "", rv.files.len);
	buf_addch(&b, ']');
	nd_int(&b, "coupled_files", (long long)rv.coupled_files);
	nd_int(&b, "chunks", (long long)rv.out_nr);
	nd_int(&b, "lines", rv.used);
	nd_int(&b, "budget", o->e.budget);
	nd_int(&b, "omitted", rv.omitted);
	nd_str(&b, "source", rv.have_history ? rv.h.source : NULL);
	nd_end(&b);
	for (size_t i = 0; i < rv.out_nr; i++) {
		write_rchunk(&b, &rv.outv[i]);
		if (b.len > 65536 && out_flush(&b) < 0)
			break;
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
done:
	buf_release(&b);
	review_release(&rv);
	return ret;
}

/* The formatter of records for people, when one runs (human.h). */
static pid_t human_pid;

static void human_at_exit(void)
{
	human_finish(human_pid);
}

/* ---- options ---- */

static double parse_double_arg(const char *opt, const char *arg, double lo, double hi, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= lo && v <= hi))
		usage_error(usage_text, "%s: expected %s, not '%s'", opt, what, arg);
	return v;
}

/* One option of the table; returns -1 to go on, else the exit status. */
static int parse_option(struct options *o, int c, int *json, int argc, char **argv)
{
	struct couple_opts *e = &o->e;

	if (c >= OPT_SINCE && c <= OPT_DEPTH)
		o->given |= 1u << (c - OPT_SINCE);
	switch (c) {
	case OPT_SINCE:
		if (since_parse(optarg, &e->since) < 0)
			usage_error(usage_text, "--since: cannot read '%s' as a date or a duration", optarg);
		break;
	case OPT_MAX_COMMITS:
		e->max_commits = parse_long_arg(usage_text, "--max-commits", optarg, 1, LONG_MAX);
		break;
	case OPT_MAX_FILES:
		e->max_files = parse_long_arg(usage_text, "--max-files", optarg, 1, LONG_MAX);
		break;
	case OPT_HALF_LIFE:
		e->half_life = parse_double_arg("--half-life", optarg, 0, 1e6, "a number of days");
		if (!(e->half_life > 0))
			usage_error(usage_text, "--half-life: expected a number of days, not '%s'", optarg);
		break;
	case OPT_INDEX: e->index = optarg; break;
	case OPT_NO_INDEX: e->no_index = 1; break;
	case OPT_INCREMENTAL: o->incremental = 1; break;
	case OPT_REV: o->rev = optarg; break;
	case OPT_THRESHOLD:
		e->threshold = parse_double_arg("--threshold", optarg, 0, 1, "a number from 0 to 1");
		e->threshold_given = 1;
		break;
	case OPT_MIN_CO:
		e->min_co = parse_long_arg(usage_text, "--min-co-changes", optarg, 1, LONG_MAX);
		break;
	case OPT_LIMIT:
		e->limit = parse_long_arg(usage_text, "--limit", optarg, 0, LONG_MAX);
		break;
	case OPT_AUTHOR: e->author = optarg; break;
	case OPT_FILE: e->file = optarg; break;
	case OPT_DIFF: e->diff = optarg; break;
	case OPT_BUDGET:
		e->budget = parse_long_arg(usage_text, "--budget", optarg, 1, LONG_MAX);
		break;
	case OPT_DEPTH:
		e->depth = parse_long_arg(usage_text, "--depth", optarg, 0, 3);
		break;
	case 'j':
		e->threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
		break;
	case 'v': verbosity++; break;
	case OPT_JSON: *json = 1; break;
	case OPT_VERSION:
		return print_version("ci-couple");
	case 'h':
		fputs(usage_text, stdout);
		return close_stdout(EXIT_OK);
	default:
		usage_error(usage_text, "%s", bad_option(c, argc, argv));
	}
	return -1;
}

/* The command and its arguments, checked against the options given. */
static void parse_command(struct options *o, int argc, char **argv, const char **args)
{
	const char *cmd_name;
	size_t ci;
	int nargs;

	if (optind >= argc)
		usage_error(usage_text, "no command given");
	cmd_name = argv[optind++];
	for (ci = 0; ci < ARRAY_SIZE(commands); ci++)
		if (!strcmp(commands[ci].name, cmd_name))
			break;
	if (ci == ARRAY_SIZE(commands))
		usage_error(usage_text, "unknown command '%s'", cmd_name);
	o->cmd = commands[ci].bit;
	nargs = argc - optind;
	if (nargs < commands[ci].min_args)
		usage_error(usage_text, "%s: missing %s", cmd_name,
			    o->cmd == C_COMMITS ? "<query>" : "<file>");
	if (nargs > commands[ci].max_args)
		usage_error(usage_text, "%s: unexpected argument '%s'", cmd_name,
			    argv[optind + commands[ci].max_args]);
	for (int a = 0; a < nargs; a++)
		args[a] = argv[optind + a];
	for (ci = 0; ci < ARRAY_SIZE(option_scope); ci++)
		if ((o->given & (1u << (option_scope[ci].opt - OPT_SINCE))) &&
		    !(option_scope[ci].cmds & o->cmd))
			usage_error(usage_text, "option '%s' does not apply to '%s'",
				    option_scope[ci].name, cmd_name);
	if (o->cmd == C_COMMITS && !*args[0])
		usage_error(usage_text, "commits: the query is empty");
	if (o->incremental && o->e.no_index)
		usage_error(usage_text, "--incremental needs the index: not with --no-index");
}

/* Parse the command line; returns -1 to go on, else the exit status. */
static int parse_options(struct options *o, int argc, char **argv, const char **args, int *json)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->e.max_files = 50;
	o->e.half_life = 365;
	o->e.min_co = 1;
	o->e.limit = -1;
	o->e.budget = 500;
	o->e.depth = 1;
	o->e.threads = online_cpus();
	while ((c = getopt_long(argc, argv, ":j:vh", long_options, NULL)) != -1)
		if ((rc = parse_option(o, c, json, argc, argv)) >= 0)
			return rc;
	parse_command(o, argc, argv, args);
	return -1;
}

static int run(const struct options *o, struct hrepo *r, const char **args)
{
	/* --rev: the analyses read the history as if HEAD were at that commit */
	if (o->rev && hrepo_set_head(r, o->rev) < 0)
		return EXIT_USAGE;
	switch (o->cmd) {
	case C_HISTORY: return cmd_history(o, r);
	case C_COUPLING: return cmd_coupling(o, r, args[0]);
	case C_HOTSPOTS: return cmd_hotspots(o, r);
	case C_FILE_HISTORY: return cmd_file_history(o, r, args[0]);
	case C_COMMITS: return cmd_commits(o, r, args[0]);
	default: return cmd_review(o, r);
	}
}

int main(int argc, char **argv)
{
	struct options o;
	struct hrepo r;
	const char *args[2] = { NULL, NULL };
	int ret, json = 0;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	opterr = 0;
	if ((ret = parse_options(&o, argc, argv, args, &json)) >= 0)
		return ret;
	if (human_wanted(json) && (human_pid = human_start()) > 0)
		atexit(human_at_exit);

	git_libgit2_init();
	/*
	 * libgit2 re-hashes every object it reads to check its id; git does not, and
	 * on a long history the check costs a tenth of the walk.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	if (hrepo_open(&r) < 0) {
		git_libgit2_shutdown();
		return close_stdout(EXIT_IO);
	}
	ret = run(&o, &r, args);
	hrepo_close(&r);
	git_libgit2_shutdown();
	return close_stdout(ret);
}
