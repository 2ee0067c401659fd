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
 */
#include "core/common.h"
#include "core/human.h"
#include "history/githist.h"
#include "parse/complexity.h"
#include "parse/chunk.h"
#include "index/index.h"
#include "parse/walk.h"
#include "parse/lang.h"
#include "embed/vec.h"
#include "embed/embed.h"
#include "embed/embedtext.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <git2.h>
#include <sqlite3.h>

static const char usage_text[] =
	"usage: ci-couple [options] history [--since <when>] [--max-commits <n>] [--incremental]\n"
	"   or: ci-couple [options] coupling [<file>] [--threshold <x>] [--limit <n>]\n"
	"   or: ci-couple [options] hotspots [--since <when>] [--threshold <x>] [--limit <n>]\n"
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
	OPT_INCREMENTAL, OPT_THRESHOLD, OPT_MIN_CO, OPT_LIMIT, OPT_AUTHOR, OPT_FILE, OPT_DIFF,
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
	{ OPT_THRESHOLD, "--threshold", C_COUPLING | C_HOTSPOTS | C_REVIEW },
	{ OPT_MIN_CO, "--min-co-changes", C_COUPLING | C_REVIEW },
	{ OPT_LIMIT, "--limit", C_COUPLING | C_HOTSPOTS | C_FILE_HISTORY | C_COMMITS | C_REVIEW },
	{ OPT_AUTHOR, "--author", C_COMMITS },
	{ OPT_FILE, "--file", C_COMMITS },
	{ OPT_DIFF, "--diff", C_REVIEW },
	{ OPT_BUDGET, "--budget", C_REVIEW },
	{ OPT_DEPTH, "--depth", C_REVIEW },
};

/* --since, parsed before anything is read, resolved once the newest commit is known. */
struct since {
	enum { SINCE_NONE, SINCE_ALL, SINCE_ABS, SINCE_REL } kind;	/* what was given */
	int64_t when;		/* SINCE_ABS: seconds since the epoch */
	long n;			/* SINCE_REL: how many units back */
	char unit;		/* SINCE_REL: 's', 'm' (minute), 'h', 'd', 'w', 'M' (month), 'y' */
	const char *text;	/* as given, for messages and records */
};

struct options {
	unsigned cmd;		/* C_* of the command */
	struct since since;	/* --since */
	long max_commits;	/* --max-commits, 0: all */
	long max_files;		/* --max-files */
	double half_life;	/* --half-life, days */
	const char *index;	/* --index, or NULL */
	int no_index;		/* --no-index */
	int incremental;	/* --incremental */
	double threshold;	/* --threshold */
	long min_co;		/* --min-co-changes */
	long limit;		/* --limit, -1 when not given */
	const char *author;	/* --author */
	const char *file;	/* --file */
	const char *diff;	/* --diff */
	long budget;		/* --budget */
	long depth;		/* --depth */
	int threads;		/* -j */
	unsigned given;		/* bit (opt - OPT_SINCE) set for each option given */
};

/* The repository and what is known about it. */
struct repo {
	struct walker w;	/* root, repository handle */
	char *prefix;		/* the current directory relative to the root ("" or "dir/") */
	git_oid head;		/* HEAD's commit, when has_head */
	int has_head;		/* HEAD points at a commit */
	int64_t head_time;	/* its committer time */
};

/* ---- small helpers ---- */

static double round4(double x)
{
	return floor(x * 10000.0 + 0.5) / 10000.0;
}

static int out_flush(struct buf *b)
{
	if (nd_flush(b, stdout) < 0)
		return -1;
	buf_reset(b);
	return 0;
}

/* "2024-01-31T12:00:00Z" for t, in buf (at least 32 bytes). */
static void iso_time(char *buf, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- --since ---- */

static int parse_unit(const char *s, char *unit)
{
	static const struct { const char *name; char unit; } units[] = {
		{ "s", 's' }, { "sec", 's' }, { "secs", 's' }, { "second", 's' }, { "seconds", 's' },
		{ "min", 'm' }, { "mins", 'm' }, { "minute", 'm' }, { "minutes", 'm' },
		{ "h", 'h' }, { "hour", 'h' }, { "hours", 'h' },
		{ "d", 'd' }, { "day", 'd' }, { "days", 'd' },
		{ "w", 'w' }, { "week", 'w' }, { "weeks", 'w' },
		{ "mo", 'M' }, { "month", 'M' }, { "months", 'M' },
		{ "y", 'y' }, { "yr", 'y' }, { "year", 'y' }, { "years", 'y' },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(s, units[i].name)) {
			*unit = units[i].unit;
			return 0;
		}
	return -1;
}

/*
 * Parse --since: "all"; "@<epoch>"; a UTC date "YYYY-MM-DD" with an optional
 * time "[T ]HH:MM[:SS]" and "Z"; or a duration "<n> <unit>[s] [ago]", "<n><unit>",
 * "<n>.<unit>.ago".  Returns 0 or -1.
 */
static int parse_since(const char *s, struct since *out)
{
	char word[32];
	const char *p;
	size_t wl = 0;
	long n;
	int y, mo, d, hh = 0, mi = 0, ss = 0, used = 0;

	memset(out, 0, sizeof(*out));
	out->text = s;
	while (*s == ' ')
		s++;
	if (!strcmp(s, "all")) {
		out->kind = SINCE_ALL;
		return 0;
	}
	if (*s == '@') {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(s + 1, &end, 10);
		if (end == s + 1 || *end || errno)
			return -1;
		out->kind = SINCE_ABS;
		out->when = v;
		return 0;
	}
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && used == 10) {
		struct tm tm;

		p = s + used;
		if (*p == 'T' || *p == ' ') {
			int u2 = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &hh, &mi, &u2) != 2 || u2 != 5)
				return -1;
			p += 1 + u2;
			if (*p == ':') {
				int u3 = 0;
				if (sscanf(p + 1, "%2d%n", &ss, &u3) != 1 || u3 != 2)
					return -1;
				p += 1 + u3;
			}
		}
		if (*p == 'Z')
			p++;
		if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 60)
			return -1;
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = hh;
		tm.tm_min = mi;
		tm.tm_sec = ss;
		out->kind = SINCE_ABS;
		out->when = (int64_t)timegm(&tm);
		return 0;
	}
	/* a duration */
	p = s;
	if (*p < '0' || *p > '9')
		return -1;
	n = 0;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p - '0');
		if (n > 100000000)
			return -1;
		p++;
	}
	while (*p == ' ' || *p == '.')
		p++;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
		if (wl + 1 >= sizeof(word))
			return -1;
		word[wl++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		p++;
	}
	word[wl] = '\0';
	if (!wl || parse_unit(word, &out->unit) < 0)
		return -1;
	while (*p == ' ' || *p == '.')
		p++;
	if (*p && strcmp(p, "ago"))
		return -1;
	out->kind = SINCE_REL;
	out->n = n;
	return 0;
}

/* The cutoff of s, counting a duration back from newest; HIST_NO_SINCE for none. */
static int64_t since_resolve(const struct since *s, int64_t newest)
{
	switch (s->kind) {
	case SINCE_NONE:
	case SINCE_ALL:
		return HIST_NO_SINCE;
	case SINCE_ABS:
		return s->when;
	case SINCE_REL:
		break;
	}
	switch (s->unit) {
	case 's': return newest - s->n;
	case 'm': return newest - s->n * 60;
	case 'h': return newest - s->n * 3600;
	case 'd': return newest - s->n * 86400;
	case 'w': return newest - s->n * 7 * 86400;
	default: {
		/* calendar months and years, as git counts them */
		time_t t = (time_t)newest;
		struct tm tm;

		gmtime_r(&t, &tm);
		if (s->unit == 'y')
			tm.tm_year -= (int)s->n;
		else {
			tm.tm_year -= (int)(s->n / 12);
			tm.tm_mon -= (int)(s->n % 12);
		}
		return (int64_t)timegm(&tm);
	}
	}
}

/* ---- paths ---- */

/*
 * A path given by the user, relative to the current directory (or absolute, inside
 * the root), as a root-relative path with "." and ".." resolved lexically (the file
 * need not exist: history knows deleted files).  NULL after reporting.
 */
static char *user_path(struct repo *r, const char *arg)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	const char *p, *seg;
	size_t rl = strlen(r->w.root);

	if (arg[0] == '/') {
		if (strncmp(arg, r->w.root, rl) || (arg[rl] && arg[rl] != '/')) {
			error("'%s' is outside the repository", arg);
			return NULL;
		}
		buf_addstr(&in, arg + rl);
	} else {
		buf_addstr(&in, r->prefix);
		buf_addstr(&in, arg);
	}
	p = in.buf;
	while (*p) {
		size_t l;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		l = (size_t)(p - seg);
		if (!l || (l == 1 && seg[0] == '.'))
			continue;
		if (l == 2 && seg[0] == '.' && seg[1] == '.') {
			char *slash;
			if (!out.len) {
				error("'%s' is outside the repository", arg);
				buf_release(&in);
				buf_release(&out);
				return NULL;
			}
			slash = strrchr(out.buf, '/');
			buf_setlen(&out, slash ? (size_t)(slash - out.buf) : 0);
			continue;
		}
		if (out.len)
			buf_addch(&out, '/');
		buf_add(&out, seg, l);
	}
	buf_release(&in);
	return buf_detach(&out, NULL);
}

/* ---- interned paths ---- */

#define NO_PATH UINT32_MAX

struct paths {
	char **names;		/* by id */
	size_t nr, alloc;	/* used, allocated */
	uint32_t *slots;	/* open addressing: id + 1, 0 empty */
	size_t cap;		/* slots, a power of two */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static uint32_t paths_find(const struct paths *ps, const char *s)
{
	size_t i;

	if (!ps->cap)
		return NO_PATH;
	for (i = hash_str(s) & (ps->cap - 1); ps->slots[i]; i = (i + 1) & (ps->cap - 1))
		if (!strcmp(ps->names[ps->slots[i] - 1], s))
			return ps->slots[i] - 1;
	return NO_PATH;
}

static uint32_t paths_intern(struct paths *ps, const char *s)
{
	uint32_t id = paths_find(ps, s);
	size_t i;

	if (id != NO_PATH)
		return id;
	if ((ps->nr + 1) * 2 > ps->cap) {
		size_t ncap = ps->cap ? ps->cap * 2 : 1024, k;
		uint32_t *ns = xcalloc(ncap, sizeof(*ns));
		for (k = 0; k < ps->nr; k++) {
			for (i = hash_str(ps->names[k]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1))
				;
			ns[i] = (uint32_t)k + 1;
		}
		free(ps->slots);
		ps->slots = ns;
		ps->cap = ncap;
	}
	ALLOC_GROW(ps->names, ps->nr + 1, ps->alloc);
	ps->names[ps->nr] = xstrdup(s);
	for (i = hash_str(s) & (ps->cap - 1); ps->slots[i]; i = (i + 1) & (ps->cap - 1))
		;
	ps->slots[i] = (uint32_t)ps->nr + 1;
	return (uint32_t)ps->nr++;
}

static void paths_release(struct paths *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		free(ps->names[i]);
	free(ps->names);
	free(ps->slots);
	memset(ps, 0, sizeof(*ps));
}

/* ---- the history in memory ---- */

struct hfile {
	uint32_t path;		/* path in the commit */
	uint32_t old_path;	/* before a rename, or NO_PATH */
	uint32_t cur;		/* the file's name at the newest commit (renames followed) */
	char status;		/* A M D R, or '?' when the index does not say */
	char binary;		/* binary content */
	long added, deleted;	/* lines; -1 unknown */
};

struct hcommit {
	char sha[GIT_OID_HEXSZ + 1];	/* id */
	int64_t time;			/* committer time */
	char *author, *email, *message;	/* email may be NULL (index without it) */
	int parents;			/* -1 unknown */
	struct hfile *files;		/* sorted by path name */
	size_t files_nr;		/* how many */
	int huge;			/* over --max-files */
	int merged;			/* for a merge: the commits it brought in, or -1 */
	char merged_into[GIT_OID_HEXSZ + 1];	/* for those: the merge, else "" */
};

struct history {
	struct hcommit *c;	/* newest first */
	size_t nr, alloc;	/* used, allocated */
	struct paths paths;	/* every path named */
	uint32_t *renamed_to;	/* by path id: an old name's current name, or NO_PATH */
	int64_t newest;		/* time of the newest commit read (0 when none) */
	const char *source;	/* "git", "index" or "index+git" */
	int lines;		/* line counts are known */
	long max_files;		/* the huge limit applied */
};

static void history_release(struct history *h)
{
	size_t i;

	for (i = 0; i < h->nr; i++) {
		free(h->c[i].author);
		free(h->c[i].email);
		free(h->c[i].message);
		free(h->c[i].files);
	}
	free(h->c);
	free(h->renamed_to);
	paths_release(&h->paths);
	memset(h, 0, sizeof(*h));
}

static struct hcommit *history_add(struct history *h)
{
	struct hcommit *c;

	ALLOC_GROW(h->c, h->nr + 1, h->alloc);
	c = &h->c[h->nr++];
	memset(c, 0, sizeof(*c));
	return c;
}

static int cmp_hfile_name(const void *a, const void *b, void *ps)
{
	const struct hfile *x = a, *y = b;
	const struct paths *p = ps;

	return strcmp(p->names[x->path], p->names[y->path]);
}

/* Keep a commit read from git, and the commits it merged (the callback of hist_walk). */
static int keep_commit(struct hist_commit *g, void *data)
{
	struct history *h = data;
	struct hcommit *c = history_add(h);
	size_t i;

	memcpy(c->sha, g->sha, sizeof(c->sha));
	c->time = g->time;
	c->author = g->author;
	c->email = g->email;
	c->message = g->message;
	g->author = g->email = g->message = NULL;
	c->parents = g->parents;
	c->huge = g->huge;
	c->merged = g->parents > 1 ? (int)g->merged_nr : -1;
	c->files = xcalloc(g->files_nr ? g->files_nr : 1, sizeof(*c->files));
	c->files_nr = g->files_nr;
	for (i = 0; i < g->files_nr; i++) {
		struct hfile *f = &c->files[i];
		f->path = paths_intern(&h->paths, g->files[i].path);
		f->old_path = g->files[i].old_path ? paths_intern(&h->paths, g->files[i].old_path) : NO_PATH;
		f->status = g->files[i].status;
		f->binary = g->files[i].binary;
		f->added = g->files[i].added;
		f->deleted = g->files[i].deleted;
	}
	for (i = 0; i < g->merged_nr; i++) {
		struct hist_commit *m = &g->merged[i];
		struct hcommit *mc = history_add(h);

		memcpy(mc->sha, m->sha, sizeof(mc->sha));
		memcpy(mc->merged_into, g->sha, sizeof(mc->merged_into));
		mc->time = m->time;
		mc->author = m->author;
		mc->email = m->email;
		mc->message = m->message;
		m->author = m->email = m->message = NULL;
		mc->parents = m->parents;
		mc->merged = -1;
		mc->files = NULL;
	}
	return 0;
}

/* 1 if table has column col. */
static int has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *st;
	char *sql = xasprintf("PRAGMA table_info(%s)", table);
	int found = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			if (!strcmp((const char *)sqlite3_column_text(st, 1), col))
				found = 1;
		sqlite3_finalize(st);
	}
	free(sql);
	return found;
}

/*
 * The commit the stored history was walked to: meta "history_head" (written by
 * ci-index load from a history record), else the newest stored commit.  NULL when
 * the index holds no history.  Malloc'd.
 */
static char *stored_head(struct ci_index *ix)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *st;
	const char *v = index_meta(ix, "history_head");
	char *ret = NULL;

	if (v && *v)
		return xstrdup(v);
	if (sqlite3_prepare_v2(db, "SELECT sha FROM commits ORDER BY time DESC, rowid ASC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		ret = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return ret;
}

/*
 * Read the commits of the index newer than since (at most max first-parent ones,
 * 0: all) into h: those of keep (the first-parent line of HEAD), and those merged
 * into one of them; a commit left over from a rewritten history is not read.
 */
static int load_index_commits(struct ci_index *ix, struct history *h, int64_t since, long max,
			      const struct paths *keep)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *cs = NULL, *fs = NULL;
	int has_email = has_column(db, "commits", "email");
	int has_parents = has_column(db, "commits", "parents");
	int has_status = has_column(db, "commit_files", "status");
	int has_old = has_column(db, "commit_files", "old_path");
	int has_into = has_column(db, "commits", "merged_into");
	char *csql, *fsql;
	long n = 0;
	int rc, ret = -1;

	csql = xasprintf("SELECT sha, time, author, message, %s, %s, %s FROM commits WHERE time >= ?1 "
			 "ORDER BY time DESC, rowid ASC", has_email ? "email" : "NULL",
			 has_parents ? "parents" : "NULL", has_into ? "merged_into" : "NULL");
	fsql = xasprintf("SELECT path, added, deleted, %s, %s FROM commit_files WHERE sha = ?1 "
			 "ORDER BY path", has_status ? "status" : "NULL", has_old ? "old_path" : "NULL");
	if (sqlite3_prepare_v2(db, csql, -1, &cs, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, fsql, -1, &fs, NULL) != SQLITE_OK) {
		error("index: %s", sqlite3_errmsg(db));
		goto done;
	}
	sqlite3_bind_int64(cs, 1, since == HIST_NO_SINCE ? INT64_MIN : since);
	while ((rc = sqlite3_step(cs)) == SQLITE_ROW) {
		const char *sha = (const char *)sqlite3_column_text(cs, 0);
		struct hcommit *c;
		size_t alloc = 0;

		const char *into = (const char *)sqlite3_column_text(cs, 6);

		if (!sha || strlen(sha) != GIT_OID_HEXSZ)
			continue;
		if (into && !*into)
			into = NULL;
		if (into ? paths_find(keep, into) == NO_PATH : paths_find(keep, sha) == NO_PATH)
			continue;
		if (!into && max > 0 && n >= max)
			break;
		c = history_add(h);
		memcpy(c->sha, sha, sizeof(c->sha));
		c->time = sqlite3_column_int64(cs, 1);
		c->author = xstrdup(sqlite3_column_text(cs, 2) ? (const char *)sqlite3_column_text(cs, 2) : "");
		c->message = xstrdup(sqlite3_column_text(cs, 3) ? (const char *)sqlite3_column_text(cs, 3) : "");
		c->email = sqlite3_column_text(cs, 4) ? xstrdup((const char *)sqlite3_column_text(cs, 4)) : NULL;
		c->parents = sqlite3_column_type(cs, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(cs, 5);
		c->merged = -1;
		if (into && strlen(into) == GIT_OID_HEXSZ)
			memcpy(c->merged_into, into, GIT_OID_HEXSZ + 1);
		sqlite3_bind_text(fs, 1, sha, -1, SQLITE_TRANSIENT);
		while ((rc = sqlite3_step(fs)) == SQLITE_ROW) {
			struct hfile *f;
			const char *st = (const char *)sqlite3_column_text(fs, 3);
			const char *old = (const char *)sqlite3_column_text(fs, 4);

			ALLOC_GROW(c->files, c->files_nr + 1, alloc);
			f = &c->files[c->files_nr++];
			f->path = paths_intern(&h->paths, (const char *)sqlite3_column_text(fs, 0));
			f->old_path = old && *old ? paths_intern(&h->paths, old) : NO_PATH;
			f->status = st && *st ? st[0] : '?';
			f->binary = 0;
			f->added = sqlite3_column_type(fs, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(fs, 1);
			f->deleted = sqlite3_column_type(fs, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(fs, 2);
			if (f->added < 0 || f->deleted < 0)
				h->lines = 0;
		}
		sqlite3_reset(fs);
		if (rc != SQLITE_DONE) {
			error("index: %s", sqlite3_errmsg(db));
			goto done;
		}
		if (c->files_nr)
			qsort_r(c->files, c->files_nr, sizeof(*c->files), cmp_hfile_name, &h->paths);
		c->huge = h->max_files > 0 && (long)c->files_nr > h->max_files;
		if (!into)
			n++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		error("index: %s", sqlite3_errmsg(db));
		goto done;
	}
	ret = 0;
done:
	sqlite3_finalize(cs);
	sqlite3_finalize(fs);
	free(csql);
	free(fsql);
	return ret;
}

/*
 * Follow renames: walking from the newest commit back, a file's name at the newest
 * commit is its current name ("cur"); a rename old -> new makes old, in every older
 * commit, a name of whatever new is now.  Names map in one step (a map entry holds
 * the final name), so a name reused after a rename is told apart by time.
 */
static void history_follow_renames(struct history *h)
{
	size_t i, k;

	free(h->renamed_to);
	h->renamed_to = xmalloc((h->paths.nr ? h->paths.nr : 1) * sizeof(*h->renamed_to));
	for (i = 0; i < h->paths.nr; i++)
		h->renamed_to[i] = NO_PATH;
	for (i = 0; i < h->nr; i++) {
		struct hcommit *c = &h->c[i];

		for (k = 0; k < c->files_nr; k++) {
			uint32_t p = c->files[k].path;
			c->files[k].cur = h->renamed_to[p] != NO_PATH ? h->renamed_to[p] : p;
		}
		for (k = 0; k < c->files_nr; k++) {
			struct hfile *f = &c->files[k];
			if (f->old_path != NO_PATH && f->old_path != f->cur)
				h->renamed_to[f->old_path] = f->cur;
		}
	}
	h->newest = 0;
	for (i = 0; i < h->nr; i++)
		if (i == 0 || h->c[i].time > h->newest)
			h->newest = h->c[i].time;
}

/* The current name of a path given by the user, or NO_PATH if history never saw it. */
static uint32_t history_lookup(const struct history *h, const char *path)
{
	uint32_t id = paths_find(&h->paths, path);

	if (id == NO_PATH)
		return NO_PATH;
	if (h->renamed_to && h->renamed_to[id] != NO_PATH) {
		/* an old name, unless a file still has that name */
		size_t i, k;
		for (i = 0; i < h->nr; i++)
			for (k = 0; k < h->c[i].files_nr; k++)
				if (h->c[i].files[k].cur == id)
					return id;
		return h->renamed_to[id];
	}
	return id;
}

/* ---- opening the repository ---- */

static int open_repo(struct repo *r)
{
	struct walk_opts wo = WALK_OPTS_INIT;
	char *cwd;
	git_commit *c;
	int rc;

	memset(r, 0, sizeof(*r));
	if (walker_open(&r->w, ".", &wo) < 0)
		return -1;
	if (!r->w.repo) {
		error("not a git repository (or a bare one): '%s'", r->w.root);
		walker_close(&r->w);
		return -1;
	}
	cwd = realpath(".", NULL);
	if (cwd && !strncmp(cwd, r->w.root, strlen(r->w.root)) && cwd[strlen(r->w.root)] == '/')
		r->prefix = xasprintf("%s/", cwd + strlen(r->w.root) + 1);
	else
		r->prefix = xstrdup("");
	free(cwd);
	rc = git_reference_name_to_id(&r->head, r->w.repo, "HEAD");
	if (rc == 0 && git_commit_lookup(&c, r->w.repo, &r->head) == 0) {
		r->has_head = 1;
		r->head_time = (int64_t)git_commit_time(c);
		git_commit_free(c);
	}
	git_error_clear();
	return 0;
}

static void close_repo(struct repo *r)
{
	free(r->prefix);
	walker_close(&r->w);
}

/* Open the index unless --no-index; NULL when there is none (or it cannot be read). */
static struct ci_index *open_index(const struct options *o, const struct repo *r)
{
	struct ci_index *ix = NULL;
	char *path;
	int rc;

	if (o->no_index)
		return NULL;
	path = o->index ? xstrdup(o->index) : index_default_path(r->w.root);
	rc = index_open(&ix, path, INDEX_READONLY);
	if (rc < 0 && verbosity)
		warning("cannot read the index '%s': reading git", path);
	else if (rc == 1 && o->index)
		warning("no index at '%s': reading git", path);
	free(path);
	return rc == 0 ? ix : NULL;
}

/*
 * Whether stored (a commit id, hex) is HEAD or one of its ancestors.  1 yes, 0 no
 * (rewritten history, or an object git no longer has).
 */
static int is_ancestor_of_head(struct repo *r, const char *stored, git_oid *id)
{
	if (git_oid_fromstr(id, stored) < 0) {
		git_error_clear();
		return 0;
	}
	if (git_oid_equal(id, &r->head))
		return 1;
	if (git_graph_descendant_of(r->w.repo, &r->head, id) == 1)
		return 1;
	git_error_clear();
	return 0;
}

/* The first-parent line from base back (to since), as a set of hex ids in *set. */
static int first_parent_set(struct repo *r, const git_oid *base, int64_t since, struct paths *set)
{
	git_revwalk *walk = NULL;
	git_oid id;
	char hex[GIT_OID_HEXSZ + 1];
	int rc;

	if (git_revwalk_new(&walk, r->w.repo) < 0 || git_revwalk_push(walk, base) < 0) {
		git_revwalk_free(walk);
		return hist_git_error("cannot walk history");
	}
	git_revwalk_simplify_first_parent(walk);
	while ((rc = git_revwalk_next(&id, walk)) == 0) {
		if (since != HIST_NO_SINCE) {
			git_commit *c;
			int64_t t;
			if (git_commit_lookup(&c, r->w.repo, &id) < 0)
				break;
			t = (int64_t)git_commit_time(c);
			git_commit_free(c);
			if (t < since)
				break;
		}
		git_oid_tostr(hex, sizeof(hex), &id);
		paths_intern(set, hex);
	}
	git_revwalk_free(walk);
	git_error_clear();
	return 0;
}

/* First-parent commits of h (those not merged in by a merge). */
static long first_parent_count(const struct history *h)
{
	size_t i;
	long n = 0;

	for (i = 0; i < h->nr; i++)
		n += !h->c[i].merged_into[0];
	return n;
}

/* Why the index cannot stand in for git here, or NULL if it can. */
static const char *index_unfit(struct ci_index *ix, int lines)
{
	sqlite3 *db = index_db(ix);
	sqlite3_stmt *st;
	int missing = 0;

	if (!has_column(db, "commit_files", "old_path"))
		return "its commit_files table has no old_path column, so renames cannot be followed";
	if (!lines)
		return NULL;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM commit_files WHERE added IS NULL OR deleted IS NULL LIMIT 1",
			       -1, &st, NULL) == SQLITE_OK) {
		missing = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return missing ? "it has no line counts for some commits" : NULL;
}

/*
 * Read the history into h: from the index when it holds history that HEAD still
 * descends from (plus whatever git has that is newer), else from git.  lines: line
 * counts are needed.
 */
static int load_history(const struct options *o, struct repo *r, struct history *h, int lines)
{
	struct hist_opts ho;
	struct ci_index *ix;
	struct history newer;
	git_oid base;
	int64_t since;
	char *stored = NULL;
	int use_index = 0, ret = -1;
	size_t i;

	memset(h, 0, sizeof(*h));
	memset(&newer, 0, sizeof(newer));
	h->max_files = o->max_files;
	h->lines = lines;
	h->source = "git";
	if (!r->has_head) {
		history_follow_renames(h);
		return 0;
	}
	since = since_resolve(&o->since, r->head_time);
	memset(&ho, 0, sizeof(ho));
	ho.since = since;
	ho.max_commits = o->max_commits;
	ho.max_files = o->max_files;
	ho.lines = lines;
	ho.threads = o->threads;
	ho.merged = 1;

	ix = open_index(o, r);
	if (ix && (stored = stored_head(ix))) {
		const char *why = index_unfit(ix, lines);

		if (why) {
			if (verbosity)
				fprintf(stderr, "%s: not reading the history stored in the index: %s\n",
					progname, why);
		} else if (is_ancestor_of_head(r, stored, &base)) {
			use_index = 1;
		} else {
			warning("the index holds a history that HEAD no longer contains "
				"(rewritten?): reading git; 'ci-couple history | ci-index load' "
				"stores the new one");
		}
	}
	if (use_index) {
		/* what git has beyond the stored head, then the stored commits */
		newer.max_files = o->max_files;
		ho.stop = &base;
		if (hist_walk(r->w.repo, &ho, keep_commit, &newer) < 0)
			goto done;
		/* move the newer commits into h, re-interning their paths */
		for (i = 0; i < newer.nr; i++) {
			struct hcommit *c = history_add(h);
			size_t k;
			*c = newer.c[i];
			for (k = 0; k < c->files_nr; k++) {
				struct hfile *f = &c->files[k];
				f->path = paths_intern(&h->paths, newer.paths.names[f->path]);
				if (f->old_path != NO_PATH)
					f->old_path = paths_intern(&h->paths, newer.paths.names[f->old_path]);
			}
			memset(&newer.c[i], 0, sizeof(newer.c[i]));
		}
		if (o->max_commits <= 0 || first_parent_count(h) < o->max_commits) {
			struct paths keep;
			int rc;

			memset(&keep, 0, sizeof(keep));
			rc = first_parent_set(r, &base, since, &keep);
			if (!rc)
				rc = load_index_commits(ix, h, since, o->max_commits > 0 ?
							o->max_commits - first_parent_count(h) : 0, &keep);
			paths_release(&keep);
			if (rc < 0)
				goto done;
		}
		h->source = newer.nr ? "index+git" : "index";
		/* how many commits each stored merge brought in */
		{
			struct paths merges;
			size_t *at = NULL, at_alloc = 0;
			uint32_t id;

			memset(&merges, 0, sizeof(merges));
			for (i = 0; i < h->nr; i++)
				if (h->c[i].merged < 0 && h->c[i].parents > 1) {
					h->c[i].merged = 0;
					id = paths_intern(&merges, h->c[i].sha);
					ALLOC_GROW(at, id + 1, at_alloc);
					at[id] = i;
				}
			for (i = 0; i < h->nr; i++)
				if (h->c[i].merged_into[0] &&
				    (id = paths_find(&merges, h->c[i].merged_into)) != NO_PATH)
					h->c[at[id]].merged++;
			free(at);
			paths_release(&merges);
		}
	} else {
		if (hist_walk(r->w.repo, &ho, keep_commit, h) < 0)
			goto done;
	}
	history_follow_renames(h);
	if (verbosity)
		fprintf(stderr, "%s: %zu commits from %s\n", progname, h->nr, h->source);
	ret = 0;
done:
	history_release(&newer);
	free(stored);
	index_close(ix);
	return ret;
}

/* ---- the files at HEAD ---- */

struct head_files {
	git_tree *tree;		/* HEAD's tree, or NULL */
};

static int head_files_open(struct repo *r, struct head_files *hf)
{
	git_commit *c;

	hf->tree = NULL;
	if (!r->has_head)
		return 0;
	if (git_commit_lookup(&c, r->w.repo, &r->head) < 0 || git_commit_tree(&hf->tree, c) < 0)
		return hist_git_error("cannot read HEAD");
	git_commit_free(c);
	return 0;
}

/* 1 if path is a file (a blob) in HEAD's tree. */
static int head_has(struct head_files *hf, const char *path)
{
	git_tree_entry *e;
	int ok;

	if (!hf->tree || git_tree_entry_bypath(&e, hf->tree, path) < 0) {
		git_error_clear();
		return 0;
	}
	ok = git_tree_entry_type(e) == GIT_OBJECT_BLOB;
	git_tree_entry_free(e);
	return ok;
}

static void head_files_close(struct head_files *hf)
{
	git_tree_free(hf->tree);
	hf->tree = NULL;
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
		if (f->old_path != NO_PATH)
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
	for (k = 0; k < c->merged_nr; k++)
		write_git_commit(&ho->b, &c->merged[k], c->sha);
	ho->commits++;
	if (out_flush(&ho->b) < 0) {
		ho->failed = 1;
		return 1;
	}
	return 0;
}

static int cmd_history(const struct options *o, struct repo *r)
{
	struct history_out ho = { BUF_INIT, 0, 0 };
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
	hopt.since = since_resolve(&o->since, r->head_time);
	hopt.max_commits = o->max_commits;
	hopt.max_files = o->max_files;
	hopt.lines = 1;
	hopt.threads = o->threads;
	hopt.merged = 1;

	if (o->incremental) {
		ix = open_index(o, r);
		if (!ix) {
			if (verbosity)
				fprintf(stderr, "%s: no index: walking the whole history\n", progname);
		} else if (!(stored = stored_head(ix))) {
			if (verbosity)
				fprintf(stderr, "%s: the index holds no history: walking all of it\n", progname);
		} else if (is_ancestor_of_head(r, stored, &base)) {
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
	if (o->since.kind == SINCE_REL || o->since.kind == SINCE_ABS)
		nd_int(&ho.b, "since", hopt.since);
	else
		nd_null(&ho.b, "since");
	nd_int(&ho.b, "max_files", o->max_files);
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
	if (ret == EXIT_OK && !ho.commits && !incremental) {
		error("no commits%s", o->since.kind == SINCE_NONE ? "" : " in that time");
		ret = EXIT_NOTHING;
	}
	buf_release(&ho.b);
	free(stored);
	index_close(ix);
	return ret;
}

/* ---- coupling ---- */

struct pair {
	uint32_t a, b;		/* path ids (current names), a < b as ids */
	uint32_t co;		/* commits changing both */
	int64_t last;		/* newest of those */
};

struct pairs {
	struct pair *v;		/* open addressing, a == NO_PATH empty */
	size_t nr, cap;		/* used, slots (a power of two) */
};

static struct pair *pair_get(struct pairs *ps, uint32_t a, uint32_t b)
{
	uint64_t key = ((uint64_t)a << 32) | b, h;
	size_t i;

	if ((ps->nr + 1) * 2 > ps->cap) {
		size_t ncap = ps->cap ? ps->cap * 2 : 4096, k;
		struct pair *nv = xmalloc(ncap * sizeof(*nv));
		for (k = 0; k < ncap; k++)
			nv[k].a = NO_PATH;
		for (k = 0; k < ps->cap; k++) {
			struct pair *p = &ps->v[k];
			if (p->a == NO_PATH)
				continue;
			h = (((uint64_t)p->a << 32) | p->b) * 0x9E3779B97F4A7C15ULL;
			for (i = (size_t)(h >> 20) & (ncap - 1); nv[i].a != NO_PATH; i = (i + 1) & (ncap - 1))
				;
			nv[i] = *p;
		}
		free(ps->v);
		ps->v = nv;
		ps->cap = ncap;
	}
	h = key * 0x9E3779B97F4A7C15ULL;
	for (i = (size_t)(h >> 20) & (ps->cap - 1); ps->v[i].a != NO_PATH; i = (i + 1) & (ps->cap - 1))
		if (ps->v[i].a == a && ps->v[i].b == b)
			return &ps->v[i];
	ps->v[i].a = a;
	ps->v[i].b = b;
	ps->v[i].co = 0;
	ps->v[i].last = INT64_MIN;
	ps->nr++;
	return &ps->v[i];
}

/* Per file: how many (non-huge) commits changed it. */
struct file_stats {
	uint32_t *changes;	/* by path id */
	int64_t *last;		/* newest change, by path id */
};

/* The distinct current names a commit changed, sorted by id, in *ids. */
static size_t commit_ids(const struct hcommit *c, uint32_t **ids, size_t *alloc)
{
	size_t k, n = 0, i;

	ALLOC_GROW(*ids, c->files_nr + 1, *alloc);
	for (k = 0; k < c->files_nr; k++) {
		uint32_t id = c->files[k].cur;
		for (i = 0; i < n && (*ids)[i] != id; i++)
			;
		if (i == n)
			(*ids)[n++] = id;
	}
	/* insertion sort: commits are small (huge ones are skipped) */
	for (k = 1; k < n; k++) {
		uint32_t v = (*ids)[k];
		for (i = k; i > 0 && (*ids)[i - 1] > v; i--)
			(*ids)[i] = (*ids)[i - 1];
		(*ids)[i] = v;
	}
	return n;
}

static void count_changes(const struct history *h, struct file_stats *fs)
{
	size_t i, k, n, alloc = 0;
	uint32_t *ids = NULL;

	fs->changes = xcalloc(h->paths.nr ? h->paths.nr : 1, sizeof(*fs->changes));
	fs->last = xcalloc(h->paths.nr ? h->paths.nr : 1, sizeof(*fs->last));
	for (i = 0; i < h->nr; i++) {
		if (h->c[i].huge)
			continue;
		n = commit_ids(&h->c[i], &ids, &alloc);
		for (k = 0; k < n; k++) {
			if (!fs->changes[ids[k]]++ || h->c[i].time > fs->last[ids[k]])
				fs->last[ids[k]] = h->c[i].time;
		}
	}
	free(ids);
}

/*
 * The coupling score of a pair (see ci-couple(1)): the share of the changes of the
 * less often changed file that also changed the other (a file changed once counts
 * as changed twice: one commit alone never makes a perfect pair), times the
 * recency of their last co-change, which halves every half_life days before the
 * newest commit.
 */
static double coupling_score(const struct history *h, const struct file_stats *fs,
			     const struct pair *p, double half_life)
{
	uint32_t na = fs->changes[p->a], nb = fs->changes[p->b], m = na < nb ? na : nb;
	double freq = (double)p->co / (double)(m < 2 ? 2 : m);
	double age = (double)(h->newest - p->last) / 86400.0;

	if (age < 0)
		age = 0;
	return round4(freq * pow(0.5, age / half_life));
}

struct scored {
	uint32_t a, b;		/* a: the file asked about, or the bytewise smaller */
	double score;		/* coupling score */
	uint32_t co;		/* co-changes */
	int64_t last;		/* last co-change */
};

static const struct paths *sort_paths;	/* for the comparators below */

static int cmp_scored(const void *x, const void *y)
{
	const struct scored *p = x, *q = y;
	int c;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	if ((c = strcmp(sort_paths->names[p->a], sort_paths->names[q->a])))
		return c;
	return strcmp(sort_paths->names[p->b], sort_paths->names[q->b]);
}

static void write_coupling(struct buf *b, const struct history *h, const struct file_stats *fs,
			   const struct scored *s)
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

/*
 * The files coupled to file (a current-name id), scored, filtered by threshold
 * and min_co, present at HEAD when hf is given; sorted by score, then path.
 * Returns the count; *out is malloc'd.
 */
static size_t related_files(const struct history *h, const struct file_stats *fs, uint32_t file,
			    double half_life, double threshold, long min_co, struct head_files *hf,
			    struct scored **out)
{
	struct pairs ps = { NULL, 0, 0 };
	struct scored *v = NULL;
	size_t i, k, n, nr = 0, alloc = 0, ialloc = 0;
	uint32_t *ids = NULL;

	for (i = 0; i < h->nr; i++) {
		const struct hcommit *c = &h->c[i];
		int touches = 0;

		if (c->huge)
			continue;
		for (k = 0; k < c->files_nr && !touches; k++)
			touches = c->files[k].cur == file;
		if (!touches)
			continue;
		n = commit_ids(c, &ids, &ialloc);
		for (k = 0; k < n; k++) {
			struct pair *p;
			if (ids[k] == file)
				continue;
			p = pair_get(&ps, file, ids[k]);
			p->co++;
			if (c->time > p->last)
				p->last = c->time;
		}
	}
	for (i = 0; i < ps.cap; i++) {
		struct pair *p = &ps.v[i];
		struct scored s;

		if (p->a == NO_PATH || (long)p->co < min_co)
			continue;
		s.a = p->a;
		s.b = p->b;
		s.co = p->co;
		s.last = p->last;
		s.score = coupling_score(h, fs, p, half_life);
		if (s.score < threshold)
			continue;
		if (hf && !head_has(hf, h->paths.names[p->b]))
			continue;
		ALLOC_GROW(v, nr + 1, alloc);
		v[nr++] = s;
	}
	sort_paths = &h->paths;
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_scored);
	free(ps.v);
	free(ids);
	*out = v;
	return nr;
}

/* Resolve a file argument to a current name; NO_PATH after reporting. */
static uint32_t file_arg(struct repo *r, const struct history *h, const char *arg, char **rel)
{
	uint32_t id;

	*rel = user_path(r, arg);
	if (!*rel)
		return NO_PATH;
	id = history_lookup(h, *rel);
	if (id == NO_PATH)
		error("no commits touch '%s'", *rel);
	return id;
}

static int cmd_coupling(const struct options *o, struct repo *r, const char *file_name)
{
	struct history h;
	struct file_stats fs = { NULL, NULL };
	struct head_files hf = { NULL };
	struct scored *v = NULL;
	struct buf b = BUF_INIT;
	size_t nr = 0, i, k, n, written = 0, alloc = 0, ialloc = 0;
	uint32_t *ids = NULL, file = NO_PATH;
	long limit = o->limit;
	char *rel = NULL;
	int ret = EXIT_OK;

	if (load_history(o, r, &h, 0) < 0)
		return EXIT_IO;
	if (head_files_open(r, &hf) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	count_changes(&h, &fs);
	if (file_name) {
		if ((file = file_arg(r, &h, file_name, &rel)) == NO_PATH) {
			ret = rel ? EXIT_NOTHING : EXIT_IO;
			goto done;
		}
		if (limit < 0)
			limit = 10;
		nr = related_files(&h, &fs, file, o->half_life, o->threshold, o->min_co, &hf, &v);
		nd_begin(&b, "related");
		nd_str(&b, "file", h.paths.names[file]);
		nd_int(&b, "changes", fs.changes[file]);
		nd_int(&b, "count", (long long)(limit > 0 && (size_t)limit < nr ? (size_t)limit : nr));
		nd_int(&b, "commits", (long long)h.nr);
		nd_str(&b, "source", h.source);
		nd_end(&b);
	} else {
		struct pairs ps = { NULL, 0, 0 };
		long huge = 0;

		for (i = 0; i < h.nr; i++) {
			const struct hcommit *c = &h.c[i];
			if (c->huge) {
				huge++;
				continue;
			}
			n = commit_ids(c, &ids, &ialloc);
			for (k = 0; k < n; k++)
				for (size_t j = k + 1; j < n; j++) {
					struct pair *p = pair_get(&ps, ids[k], ids[j]);
					p->co++;
					if (c->time > p->last)
						p->last = c->time;
				}
		}
		for (i = 0; i < ps.cap; i++) {
			struct pair *p = &ps.v[i];
			struct scored s;

			if (p->a == NO_PATH || (long)p->co < o->min_co)
				continue;
			s.score = coupling_score(&h, &fs, p, o->half_life);
			if (s.score < o->threshold)
				continue;
			if (!head_has(&hf, h.paths.names[p->a]) || !head_has(&hf, h.paths.names[p->b]))
				continue;
			/* a < b bytewise */
			if (strcmp(h.paths.names[p->a], h.paths.names[p->b]) < 0)
				s.a = p->a, s.b = p->b;
			else
				s.a = p->b, s.b = p->a;
			s.co = p->co;
			s.last = p->last;
			ALLOC_GROW(v, nr + 1, alloc);
			v[nr++] = s;
		}
		free(ps.v);
		sort_paths = &h.paths;
		if (nr)
			qsort(v, nr, sizeof(*v), cmp_scored);
		/* the control record: a whole coupling table (ci-index load replaces its own) */
		nd_begin(&b, "couplings");
		nd_bool(&b, "replace", 1);
		nd_int(&b, "count", (long long)(limit > 0 && (size_t)limit < nr ? (size_t)limit : nr));
		nd_int(&b, "commits", (long long)h.nr);
		nd_int(&b, "huge", huge);
		nd_int(&b, "newest", h.newest);
		nd_num(&b, "half_life", o->half_life);
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
	free(ids);
	free(rel);
	free(fs.changes);
	free(fs.last);
	buf_release(&b);
	head_files_close(&hf);
	history_release(&h);
	return ret;
}

/* ---- hotspots ---- */

struct hotspot {
	uint32_t path;		/* current name */
	const struct lang *lang;	/* its language */
	long churn;		/* lines added + deleted */
	long commits;		/* commits that changed it */
	long complexity;	/* see complexity.h */
	double score;		/* 0..1 */
};

static int cmp_hotspot(const void *x, const void *y)
{
	const struct hotspot *p = x, *q = y;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	return strcmp(sort_paths->names[p->path], sort_paths->names[q->path]);
}

/* Read path's blob from tree into *data (malloc'd); 1 if absent or not a blob. */
static int read_tree_blob(git_repository *repo, git_tree *tree, const char *path, char **data,
			  size_t *n)
{
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	int ret = 1;

	*data = NULL;
	*n = 0;
	if (!tree || git_tree_entry_bypath(&e, tree, path) < 0 ||
	    git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		git_error_clear();
		goto done;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e)) < 0) {
		ret = hist_git_error("cannot read blob");
		goto done;
	}
	*n = (size_t)git_blob_rawsize(blob);
	*data = xmalloc(*n + 1);
	memcpy(*data, git_blob_rawcontent(blob), *n);
	(*data)[*n] = '\0';
	ret = 0;
done:
	git_blob_free(blob);
	git_tree_entry_free(e);
	return ret;
}

static int cmd_hotspots(const struct options *o, struct repo *r)
{
	struct options oo = *o;
	struct history h;
	struct head_files hf = { NULL };
	struct hotspot *v = NULL;
	struct complexity *cx = NULL;
	struct buf b = BUF_INIT;
	long *churn = NULL, *commits = NULL, max_churn = 0, max_cx = 0, limit = o->limit;
	size_t i, k, nr = 0, alloc = 0, written = 0;
	int64_t since;
	int ret = EXIT_OK;

	if (oo.since.kind == SINCE_NONE)
		parse_since("1 year ago", &oo.since);	/* bobbin's default */
	if (limit < 0)
		limit = 20;
	if (load_history(&oo, r, &h, 1) < 0)
		return EXIT_IO;
	since = since_resolve(&oo.since, r->head_time);
	if (head_files_open(r, &hf) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	churn = xcalloc(h.paths.nr + 1, sizeof(*churn));
	commits = xcalloc(h.paths.nr + 1, sizeof(*commits));
	for (i = 0; i < h.nr; i++) {
		const struct hcommit *c = &h.c[i];
		if (c->huge)
			continue;
		for (k = 0; k < c->files_nr; k++) {
			const struct hfile *f = &c->files[k];
			commits[f->cur]++;
			if (f->added > 0)
				churn[f->cur] += f->added;
			if (f->deleted > 0)
				churn[f->cur] += f->deleted;
		}
	}
	cx = complexity_new();
	for (i = 0; i < h.paths.nr; i++) {
		const char *path = h.paths.names[i];
		struct hotspot hs;
		const struct lang *l;
		char *data;
		size_t n;
		int rc;

		if (!commits[i] || (h.renamed_to[i] != NO_PATH && !head_has(&hf, path)))
			continue;
		if (walk_is_vendored_path(path) || walk_is_generated_name(path))
			continue;
		rc = read_tree_blob(r->w.repo, hf.tree, path, &data, &n);
		if (rc < 0) {
			ret = EXIT_IO;
			goto done;
		}
		if (rc > 0)
			continue;
		l = lang_detect(path, data, n < 256 ? n : 256);
		memset(&hs, 0, sizeof(hs));
		if (l && l->grammar && n <= WALK_DEFAULT_MAX_FILESIZE &&
		    walk_classify(NULL, path, data, n) == WALK_OK &&
		    complexity_of(cx, l, data, n, &hs.complexity, NULL) == 0) {
			hs.path = (uint32_t)i;
			hs.lang = l;
			hs.churn = churn[i];
			hs.commits = commits[i];
			ALLOC_GROW(v, nr + 1, alloc);
			v[nr++] = hs;
			if (hs.churn > max_churn)
				max_churn = hs.churn;
			if (hs.complexity > max_cx)
				max_cx = hs.complexity;
		}
		free(data);
	}
	/* both on a log scale, normalised by the largest, then their geometric mean */
	for (i = 0; i < nr; i++) {
		double cn = max_churn ? log1p((double)v[i].churn) / log1p((double)max_churn) : 0;
		double xn = max_cx ? log1p((double)v[i].complexity) / log1p((double)max_cx) : 0;
		v[i].score = round4(sqrt(cn * xn));
	}
	sort_paths = &h.paths;
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_hotspot);
	for (i = 0; i < nr; i++)
		if (v[i].score < o->threshold || v[i].score <= 0)
			break;
	nr = i;
	if (limit > 0 && (size_t)limit < nr)
		nr = (size_t)limit;
	nd_begin(&b, "hotspots");
	nd_int(&b, "count", (long long)nr);
	if (since != HIST_NO_SINCE) {
		char when[32];
		iso_time(when, sizeof(when), since);
		nd_str(&b, "since", when);
	} else {
		nd_null(&b, "since");
	}
	nd_int(&b, "commits", (long long)h.nr);
	nd_str(&b, "source", h.source);
	nd_end(&b);
	for (i = 0; i < nr; i++) {
		nd_begin(&b, "hotspot");
		nd_str(&b, "path", h.paths.names[v[i].path]);
		nd_str(&b, "lang", v[i].lang->name);
		nd_num(&b, "score", v[i].score);
		nd_int(&b, "churn", v[i].churn);
		nd_int(&b, "commits", v[i].commits);
		nd_int(&b, "complexity", v[i].complexity);
		nd_end(&b);
		written++;
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
	else if (!written)
		ret = EXIT_NOTHING;
done:
	complexity_free(cx);
	free(v);
	free(churn);
	free(commits);
	buf_release(&b);
	head_files_close(&hf);
	history_release(&h);
	return ret;
}

/* ---- file-history ---- */

struct author_count {
	const char *name;	/* borrowed from the history */
	const char *email;	/* likewise, may be NULL */
	long commits;		/* commits of the file by this author */
};

static int cmp_author(const void *x, const void *y)
{
	const struct author_count *p = x, *q = y;
	int c;

	if (p->commits != q->commits)
		return p->commits > q->commits ? -1 : 1;
	if ((c = strcmp(p->name, q->name)))
		return c;
	return strcmp(p->email ? p->email : "", q->email ? q->email : "");
}

static int cmd_file_history(const struct options *o, struct repo *r, const char *arg)
{
	struct history h;
	struct buf b = BUF_INIT;
	struct author_count *authors = NULL;
	size_t i, k, j, authors_nr = 0, alloc = 0, written = 0;
	long commits = 0, added = 0, deleted = 0, limit = o->limit < 0 ? 20 : o->limit;
	int64_t first = 0, last = 0;
	uint32_t id;
	char *rel = NULL;
	int ret = EXIT_OK;
	double months;

	if (load_history(o, r, &h, 1) < 0)
		return EXIT_IO;
	if ((id = file_arg(r, &h, arg, &rel)) == NO_PATH) {
		ret = rel ? EXIT_NOTHING : EXIT_IO;
		goto done;
	}
	for (i = 0; i < h.nr; i++) {
		const struct hcommit *c = &h.c[i];
		int touches = 0;

		for (k = 0; k < c->files_nr; k++)
			if (c->files[k].cur == id) {
				touches = 1;
				if (c->files[k].added > 0)
					added += c->files[k].added;
				if (c->files[k].deleted > 0)
					deleted += c->files[k].deleted;
			}
		if (!touches)
			continue;
		if (!commits++)
			last = c->time;
		if (c->time > last)
			last = c->time;
		if (commits == 1 || c->time < first)
			first = c->time;
		for (j = 0; j < authors_nr; j++)
			if (!strcmp(authors[j].name, c->author) &&
			    !strcmp(authors[j].email ? authors[j].email : "", c->email ? c->email : ""))
				break;
		if (j == authors_nr) {
			ALLOC_GROW(authors, authors_nr + 1, alloc);
			authors[authors_nr].name = c->author;
			authors[authors_nr].email = c->email;
			authors[authors_nr++].commits = 0;
		}
		authors[j].commits++;
	}
	if (!commits) {
		error("no commits touch '%s'", rel);
		ret = EXIT_NOTHING;
		goto done;
	}
	if (authors_nr)
		qsort(authors, authors_nr, sizeof(*authors), cmp_author);
	/* the file's life: from its first change to the newest commit read, a month at least */
	months = (double)(h.newest - first) / (30.436875 * 86400.0);
	if (months < 1)
		months = 1;
	nd_begin(&b, "file_history");
	nd_str(&b, "path", h.paths.names[id]);
	nd_int(&b, "commits", commits);
	nd_int(&b, "added", added);
	nd_int(&b, "deleted", deleted);
	nd_int(&b, "first", first);
	nd_int(&b, "last", last);
	nd_num(&b, "commits_per_month", round4((double)commits / months));
	nd_num(&b, "churn_per_month", round4((double)(added + deleted) / months));
	nd_key(&b, "authors");
	buf_addch(&b, '[');
	for (j = 0; j < authors_nr; j++) {
		if (j)
			buf_addch(&b, ',');
		buf_addstr(&b, "{\"name\":");
		nd_json_string(&b, authors[j].name, strlen(authors[j].name));
		nd_str(&b, "email", authors[j].email);
		nd_int(&b, "commits", authors[j].commits);
		buf_addch(&b, '}');
	}
	buf_addch(&b, ']');
	nd_str(&b, "source", h.source);
	nd_end(&b);
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
	free(authors);
	free(rel);
	buf_release(&b);
	history_release(&h);
	return ret;
}

/* ---- commits: BM25 over messages, fused with message vectors ---- */

/*
 * BM25 comes from SQLite's FTS5 over an in-memory table of the messages read
 * (from git or from the index alike; 80,000 messages of git.git take about a
 * second), with ci's code-aware tokenizer.
 *
 * When the index holds commit vectors, each commit also gets the cosine of its
 * message's vector with the query's, made relative: (cos - lo) / (hi - lo), lo
 * the mean cosine over all commits (USE-lite puts unrelated sentences around
 * 0.3-0.5, not 0) and hi the best.  The two signals are fused with equal
 * weights, BM25 divided by its best; a commit with no word of the query is a hit
 * when it is semantically close in both senses (SEM_MIN, SEM_RELATIVE), which is
 * what finds "fix crash when the configuration file is missing" for "crashes
 * without config".
 */
#define W_BM25 0.5		/* weight of BM25 / best BM25 */
#define W_SEMANTIC 0.5		/* weight of the relative cosine */
#define SEM_MIN 0.6		/* cosine a commit needs to be a hit on vectors alone */
#define SEM_RELATIVE 0.5	/* and relative cosine */

/* Words of s: runs of ASCII letters and digits and of non-ASCII bytes, lower-cased. */
static size_t tokenize(const char *s, char ***out, size_t *alloc)
{
	size_t nr = 0;
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		const unsigned char *st;
		char *w;
		size_t i, l;

		while (*p && !(isalnum(*p) || *p >= 0x80))
			p++;
		if (!*p)
			break;
		st = p;
		while (*p && (isalnum(*p) || *p >= 0x80))
			p++;
		l = (size_t)(p - st);
		w = xstrndup((const char *)st, l);
		for (i = 0; i < l; i++)
			if (w[i] >= 'A' && w[i] <= 'Z')
				w[i] = (char)(w[i] + 32);
		ALLOC_GROW(*out, nr + 1, *alloc);
		(*out)[nr++] = w;
	}
	return nr;
}

static void free_words(char **w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(w[i]);
}

/* Case-insensitive substring test (ASCII). */
static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (!hay)
		return 0;
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return !n;
}

struct hit {
	size_t i;		/* commit index */
	double score;		/* BM25 */
};

static const struct history *sort_history;

static int cmp_hit(const void *x, const void *y)
{
	const struct hit *p = x, *q = y;
	const struct hcommit *a = &sort_history->c[p->i], *b = &sort_history->c[q->i];

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return strcmp(a->sha, b->sha);
}

/*
 * BM25 of each commit's message against the query words q[0..qn) (any of
 * them), by SQLite's FTS5 over an in-memory table of the messages read, with
 * ci's code-aware tokenizer (as chunks_fts): bm25[i] for h->c[i], 0 when no
 * word matches.  0, or -1 after a message.
 */
static int messages_bm25(const struct history *h, char **q, size_t qn, double *bm25)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL, *sel = NULL;
	struct buf match = BUF_INIT;
	size_t i;
	int rc = -1;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK || index_register_tokenizer(db) < 0 ||
	    sqlite3_exec(db, "CREATE VIRTUAL TABLE m USING fts5(message, tokenize='ci_code', detail='column');"
			 "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO m(rowid, message) VALUES (?1, ?2)", -1, &ins, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < h->nr; i++) {
		sqlite3_bind_int64(ins, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(ins, 2, h->c[i].message ? h->c[i].message : "", -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(ins);
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	/* the words are letters and digits: quoted, they are FTS5 strings */
	for (i = 0; i < qn; i++)
		buf_addf(&match, "%s\"%s\"", i ? " OR " : "", q[i]);
	if (sqlite3_prepare_v2(db, "SELECT rowid, -bm25(m) FROM m WHERE m MATCH ?1", -1, &sel, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(sel, 1, match.buf, (int)match.len, SQLITE_STATIC);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(sel, 0);
		if (id >= 1 && (size_t)id <= h->nr)
			bm25[id - 1] = sqlite3_column_double(sel, 1);
	}
	if (rc != SQLITE_DONE)
		goto fail;
	rc = 0;
	goto done;
fail:
	rc = error("commit search: %s", db ? sqlite3_errmsg(db) : "out of memory");
done:
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	sqlite3_close(db);
	buf_release(&match);
	return rc;
}

/*
 * The semantic signal: the cosine between the query's vector (computed here,
 * with the model ci-embed and ci-index use) and each commit's stored vector
 * (table commit_vectors, from ci-embed's commit records or ci-index --embed).
 * cos[i] receives h->c[i]'s, or -2 when it has no vector.  Returns 1 when the
 * signal is available; else 0, with *why saying why not (malloc'd).
 */
static int commit_similarity(const struct options *o, const struct repo *r, const struct history *h,
			     const char *query, double *cos, char **why)
{
	struct ci_index *ix = open_index(o, r);
	struct embed_model *m = NULL;
	struct paths map;
	sqlite3_stmt *st = NULL;
	char *model = NULL;
	float *qv = NULL, *v = NULL;
	size_t dim = 0, i, qlen = strlen(query);
	int ok = 0;

	memset(&map, 0, sizeof(map));
	for (i = 0; i < h->nr; i++)
		cos[i] = -2;
	*why = NULL;
	if (!ix) {
		*why = xstrdup("no index");
		return 0;
	}
	if (sqlite3_prepare_v2(index_db(ix), "SELECT model, dim FROM commit_vectors GROUP BY model, dim "
			       "ORDER BY count(*) DESC, 1 LIMIT 1", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		*why = xstrdup("no commit vectors in the index");
		goto done;
	}
	model = xstrdup((const char *)sqlite3_column_text(st, 0));
	dim = (size_t)sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	st = NULL;
	if (embed_model_open(&m, embed_model_dir_for(NULL, model)) < 0) {
		*why = xstrdup("the embedding model cannot be loaded");
		goto done;
	}
	if (strcmp(model, embed_model_name(m, 0)) || dim != embed_dim(m)) {
		*why = xasprintf("the commit vectors are of model '%s', not '%s'", model, embed_model_name(m, 0));
		goto done;
	}
	/* the query verbatim, as ci-embed --query embeds it */
	qv = xmalloc(embed_dim(m) * sizeof(*qv));
	embed_texts(m, 0, 0, 1, &query, &qlen, 1, qv);
	for (i = 0; i < h->nr; i++)
		paths_intern(&map, h->c[i].sha);
	v = xmalloc(embed_dim(m) * sizeof(*v));
	if (sqlite3_prepare_v2(index_db(ix), "SELECT sha, fmt, scale, vec FROM commit_vectors "
			       "WHERE model = ?1 AND dim = ?2", -1, &st, NULL) != SQLITE_OK) {
		*why = xasprintf("cannot read the commit vectors: %s", sqlite3_errmsg(index_db(ix)));
		goto done;
	}
	sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, embed_dim(m));
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t id = paths_find(&map, (const char *)sqlite3_column_text(st, 0));
		if (id == NO_PATH || index_vec_decode(v, embed_dim(m), st, 1) < 0)
			continue;
		cos[id] = vec_cosine(qv, v, embed_dim(m));
		ok = 1;
	}
	if (!ok)
		*why = xstrdup("no commit of this history has a vector");
done:
	sqlite3_finalize(st);
	paths_release(&map);
	free(model);
	free(qv);
	free(v);
	embed_model_close(m);
	index_close(ix);
	return ok;
}

static int cmd_commits(const struct options *o, struct repo *r, const char *query)
{
	struct history h;
	struct buf b = BUF_INIT;
	char **q = NULL, *file_rel = NULL;
	size_t qn, qalloc = 0, i, nhits = 0;
	long limit = o->limit < 0 ? 10 : o->limit;
	struct hit *hits = NULL;
	uint32_t file_id = NO_PATH;
	double *bm25 = NULL, *cos = NULL, max_bm25 = 0, hi = -1, lo = 0;
	char *why = NULL, *kept = NULL;
	int ret = EXIT_OK, semantic = 0;

	qn = tokenize(query, &q, &qalloc);
	if (!qn) {
		free(q);
		usage_error(usage_text, "the query '%s' has no words", query);
	}
	if (load_history(o, r, &h, 0) < 0) {
		free_words(q, qn);
		free(q);
		return EXIT_IO;
	}
	if (o->file) {
		if (!(file_rel = user_path(r, o->file))) {
			ret = EXIT_IO;
			goto done;
		}
		file_id = history_lookup(&h, file_rel);
	}
	bm25 = xcalloc(h.nr + 1, sizeof(*bm25));
	cos = xcalloc(h.nr + 1, sizeof(*cos));
	kept = xcalloc(h.nr + 1, sizeof(*kept));
	hits = xcalloc(h.nr + 1, sizeof(*hits));
	/* BM25 over every commit read (document frequencies included) */
	if (messages_bm25(&h, q, qn, bm25) < 0) {
		ret = EXIT_IO;
		goto done;
	}
	for (i = 0; i < h.nr; i++) {
		const struct hcommit *c = &h.c[i];
		size_t k;

		if (o->author && !contains_ci(c->author, o->author) && !contains_ci(c->email, o->author))
			continue;
		if (o->file) {
			size_t fl = strlen(file_rel);
			int match = 0;
			for (k = 0; k < c->files_nr && !match; k++) {
				const char *p = h.paths.names[c->files[k].path];
				match = (file_id != NO_PATH && c->files[k].cur == file_id) ||
					!fl || (!strncmp(p, file_rel, fl) && (p[fl] == '/' || !p[fl]));
			}
			if (!match)
				continue;
		}
		if (bm25[i] > max_bm25)
			max_bm25 = bm25[i];
		kept[i] = 1;
	}
	/* the semantic signal, when the index holds commit vectors */
	semantic = commit_similarity(o, r, &h, query, cos, &why);
	if (semantic) {
		double sum = 0;
		size_t nv = 0;
		for (i = 0; i < h.nr; i++)
			if (cos[i] > -2) {
				sum += cos[i];
				nv++;
				if (kept[i] && cos[i] > hi)
					hi = cos[i];
			}
		/* the model's baseline: how close an unrelated message is, on average */
		lo = nv ? sum / (double)nv : 0;
	}
	for (i = 0; i < h.nr; i++) {
		double sem = 0, sc;

		if (!kept[i])
			continue;
		if (semantic && cos[i] > -2 && hi > lo)
			sem = (cos[i] - lo) / (hi - lo) > 0 ? (cos[i] - lo) / (hi - lo) : 0;
		if (bm25[i] <= 0 && !(sem >= SEM_RELATIVE && cos[i] >= SEM_MIN))
			continue;
		if (semantic)
			sc = W_BM25 * (max_bm25 > 0 ? bm25[i] / max_bm25 : 0) + W_SEMANTIC * sem;
		else
			sc = bm25[i];
		hits[nhits].i = i;
		hits[nhits++].score = round4(sc);
	}
	sort_history = &h;
	if (nhits)
		qsort(hits, nhits, sizeof(*hits), cmp_hit);
	if (limit > 0 && (size_t)limit < nhits)
		nhits = (size_t)limit;
	nd_begin(&b, "commit_search");
	nd_str(&b, "query", query);
	nd_int(&b, "count", (long long)nhits);
	nd_int(&b, "commits", (long long)h.nr);
	nd_str(&b, "source", h.source);
	nd_raw(&b, "signals", semantic ? "[\"bm25\",\"semantic\"]" : "[\"bm25\"]");
	if (!semantic)
		nd_str(&b, "semantic", why);
	nd_end(&b);
	for (i = 0; i < nhits; i++) {
		struct buf sig = BUF_INIT;
		size_t c = hits[i].i;

		if (semantic) {
			buf_addf(&sig, "{\"bm25\":%.9g,\"semantic\":", round4(bm25[c]));
			if (cos[c] > -2)
				buf_addf(&sig, "%.9g}", round4(cos[c]));
			else
				buf_addstr(&sig, "null}");
		}
		write_commit(&b, &h, &h.c[c], -1, hits[i].score, 1, semantic ? sig.buf : NULL);
		buf_release(&sig);
		if (b.len > 65536 && out_flush(&b) < 0)
			break;
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
	else if (!nhits)
		ret = EXIT_NOTHING;
done:
	free_words(q, qn);
	free(q);
	free(hits);
	free(file_rel);
	free(bm25);
	free(cos);
	free(kept);
	free(why);
	buf_release(&b);
	history_release(&h);
	return ret;
}

/* ---- review ---- */

/* Where the new side of the diff is read from. */
struct side {
	enum { SIDE_WORKDIR, SIDE_INDEX, SIDE_TREE } kind;	/* which */
	git_tree *tree;		/* SIDE_TREE */
	git_index *index;	/* SIDE_INDEX */
};

/* Read path on side into *data (malloc'd, NUL-terminated).  1 if absent. */
static int side_read(struct repo *r, struct side *s, const char *path, char **data, size_t *n)
{
	*data = NULL;
	*n = 0;
	if (s->kind == SIDE_TREE)
		return read_tree_blob(r->w.repo, s->tree, path, data, n);
	if (s->kind == SIDE_INDEX) {
		const git_index_entry *e = git_index_get_bypath(s->index, path, 0);
		git_blob *blob;

		if (!e)
			return 1;
		if (git_blob_lookup(&blob, r->w.repo, &e->id) < 0)
			return hist_git_error("cannot read blob");
		*n = (size_t)git_blob_rawsize(blob);
		*data = xmalloc(*n + 1);
		memcpy(*data, git_blob_rawcontent(blob), *n);
		(*data)[*n] = '\0';
		git_blob_free(blob);
		return 0;
	} else {
		char *full = xasprintf("%s/%s", r->w.root, path);
		struct stat st;
		int rc;

		if (lstat(full, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(full);
			return 1;
		}
		rc = read_file(full, data, n);
		free(full);
		return rc < 0 ? -1 : 0;
	}
}

struct range {
	long start, end;	/* lines of the new side, inclusive */
};

struct changed {
	char *path;		/* new side path */
	char status;		/* A M D R */
	struct range *ranges;	/* changed lines */
	size_t ranges_nr, ranges_alloc;	/* used, allocated */
	long lines;		/* lines changed (added on the new side, or 1 per deletion) */
};

struct rchunk {
	char *path;		/* borrowed from changed[] or the coupled list */
	long start, end;	/* lines */
	char *kind, *name, *text;	/* owned */
	const char *reason;	/* "changed" or "coupled" */
	const char *coupled_to;	/* for "coupled": the changed file it is coupled to */
	double score;		/* for "coupled" */
	int pick;		/* for "coupled": its name is used by the changed code */
};

/* Parse the diff spec into the two trees (or sides) to compare; exit 2 on junk. */
static int resolve_rev(struct repo *r, const char *rev, git_commit **out)
{
	git_object *obj = NULL;

	*out = NULL;
	if (git_revparse_single(&obj, r->w.repo, rev) < 0 ||
	    git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT) < 0) {
		git_object_free(obj);
		git_error_clear();
		return -1;
	}
	git_object_free(obj);
	return 0;
}

static git_tree *commit_tree(git_commit *c)
{
	git_tree *t = NULL;

	if (c && git_commit_tree(&t, c) < 0) {
		git_error_clear();
		return NULL;
	}
	return t;
}

/* Chunks of one file's text, as rchunks for path, appended to *v. */
static void chunk_text(struct chunker *ck, const char *path, const char *data, size_t n,
		       struct rchunk **v, size_t *nr, size_t *alloc)
{
	const struct lang *l = lang_detect(path, data, n < 256 ? n : 256);
	struct buf out = BUF_INIT, warn = BUF_INIT;
	const char *p, *nl;

	chunker_file(ck, path, l, data, n, NULL, &out, &warn);
	for (p = out.buf; p < out.buf + out.len; p = nl + 1) {
		json_t *rec;
		json_error_t je;

		nl = memchr(p, '\n', (size_t)(out.buf + out.len - p));
		if (!nl)
			nl = out.buf + out.len;
		rec = json_loadb(p, (size_t)(nl - p), 0, &je);
		if (rec && !strcmp(json_string_value(json_object_get(rec, "_type")) ?
				   json_string_value(json_object_get(rec, "_type")) : "", "chunk")) {
			struct rchunk *c;
			const char *name = json_string_value(json_object_get(rec, "name"));

			ALLOC_GROW(*v, *nr + 1, *alloc);
			c = &(*v)[(*nr)++];
			memset(c, 0, sizeof(*c));
			c->path = (char *)path;
			c->start = (long)json_integer_value(json_object_get(rec, "start_line"));
			c->end = (long)json_integer_value(json_object_get(rec, "end_line"));
			c->kind = xstrdup(json_string_value(json_object_get(rec, "kind")) ?
					  json_string_value(json_object_get(rec, "kind")) : "");
			c->name = name ? xstrdup(name) : NULL;
			c->text = xstrdup(json_string_value(json_object_get(rec, "text")) ?
					  json_string_value(json_object_get(rec, "text")) : "");
		}
		json_decref(rec);
	}
	buf_release(&out);
	buf_release(&warn);
}

static void rchunk_release(struct rchunk *c)
{
	free(c->kind);
	free(c->name);
	free(c->text);
}

/* 1 if word occurs in text as a whole identifier. */
static int has_word(const char *text, const char *word)
{
	size_t l = strlen(word);
	const char *p = text;

	if (l < 3)
		return 0;
	while ((p = strstr(p, word))) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[l]) || p[l] == '_';
		if (!before && !after)
			return 1;
		p += l;
	}
	return 0;
}

static int cmp_rchunk_coupled(const void *x, const void *y)
{
	const struct rchunk *p = x, *q = y;

	if (p->pick != q->pick)
		return p->pick ? -1 : 1;
	return p->start < q->start ? -1 : p->start > q->start;
}

static int cmp_rchunk_lines(const void *x, const void *y)
{
	const struct rchunk *p = x, *q = y;

	return p->start < q->start ? -1 : p->start > q->start;
}

struct candidate {
	uint32_t id;		/* current name */
	double score;		/* best product of scores along the coupling path */
	uint32_t via;		/* the changed file it was reached from */
};

static int cmp_candidate(const void *x, const void *y)
{
	const struct candidate *p = x, *q = y;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	return strcmp(sort_paths->names[p->id], sort_paths->names[q->id]);
}

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

static int cmd_review(const struct options *o, struct repo *r)
{
	const char *spec = o->diff ? o->diff : "unstaged";
	git_diff *diff = NULL;
	git_diff_options dopt;
	git_diff_find_options fopt;
	git_commit *ca = NULL, *cb = NULL, *head = NULL;
	git_tree *ta = NULL, *tb = NULL;
	struct side side = { SIDE_WORKDIR, NULL, NULL };
	struct changed *ch = NULL;
	struct buf files = BUF_INIT;	/* the review record's files, a JSON array's elements */
	struct rchunk *all = NULL, *cand = NULL;
	struct candidate *cands = NULL;
	struct history h;
	struct file_stats fs = { NULL, NULL };
	struct chunker *ck = NULL;
	struct chunk_opts copt = { CHUNK_WANT_CHUNKS, CHUNK_DEFAULT_MAX_LINES };
	struct buf b = BUF_INIT, changed_text = BUF_INIT;
	size_t ch_nr = 0, ch_alloc = 0, all_nr = 0, all_alloc = 0, i, k, nd;
	size_t cands_nr = 0, cands_alloc = 0, out_nr = 0, deleted_files = 0;
	long used = 0, omitted = 0, changed_lines = 0, limit = o->limit < 0 ? 5 : o->limit;
	long depth = o->depth;
	double threshold = (o->given & (1u << (OPT_THRESHOLD - OPT_SINCE))) ? o->threshold : 0.1;
	int ret = EXIT_OK, have_history = 0;
	struct rchunk *outv = NULL;
	size_t outv_alloc = 0;

	memset(&h, 0, sizeof(h));
	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopt, GIT_DIFF_FIND_OPTIONS_VERSION);
	dopt.context_lines = 0;
	dopt.interhunk_lines = 0;
	if (r->has_head && git_commit_lookup(&head, r->w.repo, &r->head) < 0) {
		hist_git_error("cannot read HEAD");
		ret = EXIT_IO;
		goto done;
	}
	if (!strcmp(spec, "unstaged")) {
		if (git_diff_index_to_workdir(&diff, r->w.repo, NULL, &dopt) < 0)
			goto git_failed;
		side.kind = SIDE_WORKDIR;
	} else if (!strcmp(spec, "staged")) {
		ta = commit_tree(head);
		if (git_repository_index(&side.index, r->w.repo) < 0 ||
		    git_diff_tree_to_index(&diff, r->w.repo, ta, side.index, &dopt) < 0)
			goto git_failed;
		side.kind = SIDE_INDEX;
	} else if (!strncmp(spec, "branch:", 7) && spec[7]) {
		git_oid base;
		if (resolve_rev(r, spec + 7, &cb) < 0)
			usage_error(usage_text, "--diff: unknown branch '%s'", spec + 7);
		if (!head)
			usage_error(usage_text, "--diff %s: HEAD has no commit to compare with", spec);
		if (git_merge_base(&base, r->w.repo, git_commit_id(head), git_commit_id(cb)) < 0 ||
		    git_commit_lookup(&ca, r->w.repo, &base) < 0)
			goto git_failed;
		ta = commit_tree(ca);
		tb = commit_tree(cb);
		if (git_diff_tree_to_tree(&diff, r->w.repo, ta, tb, &dopt) < 0)
			goto git_failed;
		side.kind = SIDE_TREE;
		side.tree = tb;
	} else if (!strncmp(spec, "commit:", 7) && spec[7]) {
		const char *range = spec + 7, *dots = strstr(range, "..");
		if (dots) {
			char *from = xstrndup(range, (size_t)(dots - range));
			int three = dots[2] == '.';
			const char *to = dots + (three ? 3 : 2);
			int bad = resolve_rev(r, *from ? from : "HEAD", &ca) < 0 ||
				  resolve_rev(r, *to ? to : "HEAD", &cb) < 0;
			if (bad)
				usage_error(usage_text, "--diff: unknown revision in '%s'", range);
			free(from);
			if (three) {
				git_oid base;
				git_commit *mb;
				if (git_merge_base(&base, r->w.repo, git_commit_id(ca), git_commit_id(cb)) < 0 ||
				    git_commit_lookup(&mb, r->w.repo, &base) < 0)
					goto git_failed;
				git_commit_free(ca);
				ca = mb;
			}
		} else {
			if (resolve_rev(r, range, &cb) < 0)
				usage_error(usage_text, "--diff: unknown revision '%s'", range);
			if (git_commit_parentcount(cb) > 0 && git_commit_parent(&ca, cb, 0) < 0)
				goto git_failed;
		}
		ta = commit_tree(ca);
		tb = commit_tree(cb);
		if (git_diff_tree_to_tree(&diff, r->w.repo, ta, tb, &dopt) < 0)
			goto git_failed;
		side.kind = SIDE_TREE;
		side.tree = tb;
	} else {
		usage_error(usage_text, "--diff: expected unstaged, staged, branch:<name> or "
			    "commit:<range>, not '%s'", spec);
	}
	fopt.flags = GIT_DIFF_FIND_RENAMES;
	if (git_diff_find_similar(diff, &fopt) < 0)
		goto git_failed;

	/* the changed lines of each file */
	nd = git_diff_num_deltas(diff);
	for (i = 0; i < nd; i++) {
		const git_diff_delta *dl = git_diff_get_delta(diff, i);
		git_patch *patch = NULL;
		struct changed *c;
		size_t hn;

		size_t adds = 0, dels = 0;

		if (dl->status == GIT_DELTA_UNTRACKED || dl->status == GIT_DELTA_IGNORED ||
		    dl->status == GIT_DELTA_UNMODIFIED)
			continue;
		if (git_patch_from_diff(&patch, diff, i) < 0)
			goto git_failed;
		if (patch && git_patch_line_stats(NULL, &adds, &dels, patch) < 0)
			goto git_failed;
		/* every file of the diff, for the review record */
		{
			const char *fp = dl->status == GIT_DELTA_DELETED ? dl->old_file.path : dl->new_file.path;
			buf_addstr(&files, files.len ? ",{\"path\":" : "{\"path\":");
			nd_json_string(&files, fp, strlen(fp));
		}
		buf_addf(&files, ",\"status\":\"%c\",\"added\":%zu,\"deleted\":%zu}",
			 dl->status == GIT_DELTA_ADDED ? 'A' : dl->status == GIT_DELTA_DELETED ? 'D' :
			 dl->status == GIT_DELTA_RENAMED ? 'R' : 'M', adds, dels);
		if (dl->status == GIT_DELTA_DELETED) {
			deleted_files++;
			git_patch_free(patch);
			continue;
		}
		ALLOC_GROW(ch, ch_nr + 1, ch_alloc);
		c = &ch[ch_nr++];
		memset(c, 0, sizeof(*c));
		c->path = xstrdup(dl->new_file.path);
		c->status = dl->status == GIT_DELTA_ADDED ? 'A' : dl->status == GIT_DELTA_RENAMED ? 'R' : 'M';
		hn = patch ? git_patch_num_hunks(patch) : 0;
		for (k = 0; k < hn; k++) {
			const git_diff_hunk *hk;
			struct range rg;
			if (git_patch_get_hunk(&hk, NULL, patch, k) < 0)
				continue;
			rg.start = hk->new_start > 0 ? hk->new_start : 1;
			rg.end = hk->new_lines > 0 ? hk->new_start + hk->new_lines - 1 : rg.start;
			c->lines += hk->new_lines > 0 ? hk->new_lines : 1;
			ALLOC_GROW(c->ranges, c->ranges_nr + 1, c->ranges_alloc);
			c->ranges[c->ranges_nr++] = rg;
		}
		changed_lines += c->lines;
		git_patch_free(patch);
	}
	if (!ch_nr && !deleted_files) {
		error("no changes to review (--diff %s)", spec);
		ret = EXIT_NOTHING;
		goto done;
	}

	/* the chunks overlapping changed lines */
	ck = chunker_new(&copt);
	for (i = 0; i < ch_nr; i++) {
		struct rchunk *v = NULL;
		size_t v_nr = 0, v_alloc = 0;
		char *data;
		size_t n;
		int rc = side_read(r, &side, ch[i].path, &data, &n);

		if (rc < 0) {
			ret = EXIT_IO;
			goto done;
		}
		if (rc > 0 || walk_classify(NULL, ch[i].path, data, n) == WALK_BINARY) {
			free(data);
			continue;
		}
		chunk_text(ck, ch[i].path, data, n, &v, &v_nr, &v_alloc);
		free(data);
		for (k = 0; k < v_nr; k++) {
			int hit = 0;
			for (size_t g = 0; g < ch[i].ranges_nr && !hit; g++)
				hit = v[k].start <= ch[i].ranges[g].end && ch[i].ranges[g].start <= v[k].end;
			if (!hit) {
				rchunk_release(&v[k]);
				continue;
			}
			v[k].reason = "changed";
			ALLOC_GROW(all, all_nr + 1, all_alloc);
			all[all_nr++] = v[k];
		}
		free(v);
	}
	for (i = 0; i < all_nr; i++) {
		long lines = all[i].end - all[i].start + 1;
		if (used + lines > o->budget) {
			omitted++;
			rchunk_release(&all[i]);
			continue;
		}
		used += lines;
		buf_addstr(&changed_text, all[i].text);
		buf_addch(&changed_text, '\n');
		ALLOC_GROW(outv, out_nr + 1, outv_alloc);
		outv[out_nr++] = all[i];
	}
	free(all);
	all = NULL;
	all_nr = 0;

	/* the files coupled to the changed ones, depth steps out */
	if (depth > 0 && r->has_head) {
		if (load_history(o, r, &h, 0) < 0) {
			ret = EXIT_IO;
			goto done;
		}
		have_history = 1;
		count_changes(&h, &fs);
		for (i = 0; i < ch_nr; i++) {
			uint32_t id = history_lookup(&h, ch[i].path);
			if (id == NO_PATH)
				continue;
			ALLOC_GROW(cands, cands_nr + 1, cands_alloc);
			cands[cands_nr].id = id;
			cands[cands_nr].score = -1;	/* a changed file: not a candidate */
			cands[cands_nr++].via = id;
		}
		size_t from = 0, to = cands_nr;
		for (long d = 0; d < depth; d++) {
			for (i = from; i < to; i++) {
				struct scored *rel = NULL;
				size_t rn = related_files(&h, &fs, cands[i].id, o->half_life, threshold,
							  o->min_co, NULL, &rel);
				double base = cands[i].score < 0 ? 1.0 : cands[i].score;
				for (k = 0; k < rn && (limit <= 0 || (long)k < limit); k++) {
					double s = round4(base * rel[k].score);
					size_t j;
					for (j = 0; j < cands_nr && cands[j].id != rel[k].b; j++)
						;
					if (j < cands_nr) {
						if (cands[j].score >= 0 && s > cands[j].score) {
							cands[j].score = s;
							cands[j].via = cands[i].via;
						}
						continue;
					}
					if (s < threshold)
						continue;
					ALLOC_GROW(cands, cands_nr + 1, cands_alloc);
					cands[cands_nr].id = rel[k].b;
					cands[cands_nr].score = s;
					cands[cands_nr++].via = cands[i].via;
				}
				free(rel);
			}
			from = to;
			to = cands_nr;
		}
	}
	/* drop the changed files from the candidates, and sort the rest */
	{
		size_t w = 0;
		for (i = 0; i < cands_nr; i++)
			if (cands[i].score >= 0)
				cands[w++] = cands[i];
		cands_nr = w;
		sort_paths = &h.paths;
		if (cands_nr)
			qsort(cands, cands_nr, sizeof(*cands), cmp_candidate);
	}
	/* their chunks, sharing what is left of the budget */
	{
		long left = o->budget - used, share;
		size_t coupled_files = 0;

		for (i = 0; i < cands_nr; i++) {
			const char *path = h.paths.names[cands[i].id];
			char *data;
			size_t n, c_nr = 0, c_alloc = 0, first = out_nr;
			long fused = 0;
			int rc;

			share = left / (long)(cands_nr - i);
			rc = side_read(r, &side, path, &data, &n);
			if (rc < 0) {
				ret = EXIT_IO;
				goto done;
			}
			if (rc > 0 || walk_classify(NULL, path, data, n) == WALK_BINARY) {
				free(data);
				continue;
			}
			chunk_text(ck, path, data, n, &cand, &c_nr, &c_alloc);
			free(data);
			for (k = 0; k < c_nr; k++)
				cand[k].pick = cand[k].name && has_word(changed_text.buf, cand[k].name);
			if (c_nr)
				qsort(cand, c_nr, sizeof(*cand), cmp_rchunk_coupled);
			for (k = 0; k < c_nr; k++) {
				long lines = cand[k].end - cand[k].start + 1;
				if (fused + lines > share) {
					rchunk_release(&cand[k]);
					continue;
				}
				fused += lines;
				cand[k].reason = "coupled";
				cand[k].coupled_to = h.paths.names[cands[i].via];
				cand[k].score = cands[i].score;
				cand[k].path = h.paths.names[cands[i].id];
				ALLOC_GROW(outv, out_nr + 1, outv_alloc);
				outv[out_nr++] = cand[k];
			}
			free(cand);
			cand = NULL;
			if (out_nr > first) {
				qsort(outv + first, out_nr - first, sizeof(*outv), cmp_rchunk_lines);
				coupled_files++;
			}
			left -= fused;
			used += fused;
		}
		nd_begin(&b, "review");
		nd_str(&b, "diff", spec);
		nd_int(&b, "changed_files", (long long)ch_nr);
		nd_int(&b, "deleted_files", (long long)deleted_files);
		nd_int(&b, "changed_lines", changed_lines);
		nd_key(&b, "files");
		buf_addch(&b, '[');
		buf_add(&b, files.buf ? files.buf : "", files.len);
		buf_addch(&b, ']');
		nd_int(&b, "coupled_files", (long long)coupled_files);
		nd_int(&b, "chunks", (long long)out_nr);
		nd_int(&b, "lines", used);
		nd_int(&b, "budget", o->budget);
		nd_int(&b, "omitted", omitted);
		nd_str(&b, "source", have_history ? h.source : NULL);
		nd_end(&b);
	}
	for (i = 0; i < out_nr; i++) {
		write_rchunk(&b, &outv[i]);
		if (b.len > 65536 && out_flush(&b) < 0)
			break;
	}
	if (nd_flush(&b, stdout) < 0)
		ret = EXIT_IO;
	goto done;

git_failed:
	hist_git_error("cannot diff");
	ret = EXIT_IO;
done:
	for (i = 0; i < out_nr; i++)
		rchunk_release(&outv[i]);
	free(outv);
	for (i = 0; i < ch_nr; i++) {
		free(ch[i].path);
		free(ch[i].ranges);
	}
	free(ch);
	buf_release(&files);
	free(cands);
	free(fs.changes);
	free(fs.last);
	chunker_free(ck);
	buf_release(&b);
	buf_release(&changed_text);
	if (have_history)
		history_release(&h);
	git_diff_free(diff);
	git_index_free(side.index);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
	git_commit_free(head);
	return ret;
}

/* The formatter of records for people, when one runs (human.h). */
static pid_t human_pid;

static void human_at_exit(void)
{
	human_finish(human_pid);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	struct options o;
	struct repo r;
	const char *cmd_name;
	const char *args[2] = { NULL, NULL };
	size_t ci;
	int c, nargs, ret, json = 0;
	char *end;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	opterr = 0;
	memset(&o, 0, sizeof(o));
	o.max_files = 50;
	o.half_life = 365;
	o.min_co = 1;
	o.limit = -1;
	o.budget = 500;
	o.depth = 1;
	o.threads = online_cpus();

	while ((c = getopt_long(argc, argv, ":j:vh", long_options, NULL)) != -1) {
		if (c >= OPT_SINCE && c <= OPT_DEPTH)
			o.given |= 1u << (c - OPT_SINCE);
		switch (c) {
		case OPT_SINCE:
			if (parse_since(optarg, &o.since) < 0)
				usage_error(usage_text, "--since: cannot read '%s' as a date or a duration", optarg);
			break;
		case OPT_MAX_COMMITS:
			o.max_commits = parse_long_arg(usage_text, "--max-commits", optarg, 1, LONG_MAX);
			break;
		case OPT_MAX_FILES:
			o.max_files = parse_long_arg(usage_text, "--max-files", optarg, 1, LONG_MAX);
			break;
		case OPT_HALF_LIFE:
			errno = 0;
			o.half_life = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(o.half_life > 0) || o.half_life > 1e6)
				usage_error(usage_text, "--half-life: expected a number of days, not '%s'", optarg);
			break;
		case OPT_INDEX: o.index = optarg; break;
		case OPT_NO_INDEX: o.no_index = 1; break;
		case OPT_INCREMENTAL: o.incremental = 1; break;
		case OPT_THRESHOLD:
			errno = 0;
			o.threshold = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(o.threshold >= 0 && o.threshold <= 1))
				usage_error(usage_text, "--threshold: expected a number from 0 to 1, not '%s'", optarg);
			break;
		case OPT_MIN_CO:
			o.min_co = parse_long_arg(usage_text, "--min-co-changes", optarg, 1, LONG_MAX);
			break;
		case OPT_LIMIT:
			o.limit = parse_long_arg(usage_text, "--limit", optarg, 0, LONG_MAX);
			break;
		case OPT_AUTHOR: o.author = optarg; break;
		case OPT_FILE: o.file = optarg; break;
		case OPT_DIFF: o.diff = optarg; break;
		case OPT_BUDGET:
			o.budget = parse_long_arg(usage_text, "--budget", optarg, 1, LONG_MAX);
			break;
		case OPT_DEPTH:
			o.depth = parse_long_arg(usage_text, "--depth", optarg, 0, 3);
			break;
		case 'j':
			o.threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
			break;
		case 'v': verbosity++; break;
		case OPT_JSON: json = 1; break;
		case OPT_VERSION:
			return print_version("ci-couple");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind >= argc)
		usage_error(usage_text, "no command given");
	cmd_name = argv[optind++];
	for (ci = 0; ci < ARRAY_SIZE(commands); ci++)
		if (!strcmp(commands[ci].name, cmd_name))
			break;
	if (ci == ARRAY_SIZE(commands))
		usage_error(usage_text, "unknown command '%s'", cmd_name);
	o.cmd = commands[ci].bit;
	nargs = argc - optind;
	if (nargs < commands[ci].min_args)
		usage_error(usage_text, "%s: missing %s", cmd_name,
			    o.cmd == C_COMMITS ? "<query>" : "<file>");
	if (nargs > commands[ci].max_args)
		usage_error(usage_text, "%s: unexpected argument '%s'", cmd_name,
			    argv[optind + commands[ci].max_args]);
	for (int a = 0; a < nargs; a++)
		args[a] = argv[optind + a];
	for (ci = 0; ci < ARRAY_SIZE(option_scope); ci++)
		if ((o.given & (1u << (option_scope[ci].opt - OPT_SINCE))) &&
		    !(option_scope[ci].cmds & o.cmd))
			usage_error(usage_text, "option '%s' does not apply to '%s'",
				    option_scope[ci].name, cmd_name);
	if (o.cmd == C_COMMITS && !*args[0])
		usage_error(usage_text, "commits: the query is empty");
	if (o.incremental && o.no_index)
		usage_error(usage_text, "--incremental needs the index: not with --no-index");
	if (human_wanted(json) && (human_pid = human_start()) > 0)
		atexit(human_at_exit);

	git_libgit2_init();
	/*
	 * libgit2 re-hashes every object it reads to check its id; git does not, and
	 * on a long history the check costs a tenth of the walk.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	if (open_repo(&r) < 0) {
		git_libgit2_shutdown();
		return close_stdout(EXIT_IO);
	}
	switch (o.cmd) {
	case C_HISTORY: ret = cmd_history(&o, &r); break;
	case C_COUPLING: ret = cmd_coupling(&o, &r, args[0]); break;
	case C_HOTSPOTS: ret = cmd_hotspots(&o, &r); break;
	case C_FILE_HISTORY: ret = cmd_file_history(&o, &r, args[0]); break;
	case C_COMMITS: ret = cmd_commits(&o, &r, args[0]); break;
	default: ret = cmd_review(&o, &r); break;
	}
	close_repo(&r);
	git_libgit2_shutdown();
	return close_stdout(ret);
}
