/*
 * libcommon/fleet/fleet.c: one query over many shards: load a shard set, run
 * the command once per shard, up to a number at a time, merge the records
 * (the contract is fleet.h).  Two ways to run it: on threads of this
 * process (run_threads: the command's struct fleet_cmd over each shard's
 * open index, its output and messages kept per shard), or a process a shard
 * (run_all, below); both fill the same struct shard_run, merged alike.
 *
 * Each shard's command is a child process with its standard output and error
 * on pipes; one poll() loop reads all of them, so a shard that writes much
 * never blocks on a full pipe while another is read.  Its records are kept
 * whole as text: a record gets its repository by inserting `"repo":<name>`
 * after its `"_type"` (every ci command writes `{"_type":"...",` first), and
 * only ci-rank's hits are parsed (Jansson) for their score, path and line.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "index/index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <sqlite3.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/*
 * libgit2's init, if the binary has it (ci-grep's is cmd/git-lazy.c, which
 * loads libgit2 on this first call; a command without libgit2 has none):
 * called once before the forks, so that each shard's ci-grep does not load
 * the library and parse the system's CA certificates again (10 ms of CPU a
 * shard, bench/fleet.sh).
 */
extern int git_libgit2_init(void) __attribute__((weak));

/* ---- the shard set ---------------------------------------------------------------- */

/* Add a shard; its index as an absolute path (a shard's command may run elsewhere). */
static void set_add(struct fleet_set *set, const char *name, const char *index)
{
	char cwd[4096];

	ALLOC_GROW(set->shard, set->shard_nr + 1, set->shard_alloc);
	set->shard[set->shard_nr].name = xstrdup(name);
	if (index[0] != '/' && getcwd(cwd, sizeof(cwd)))
		set->shard[set->shard_nr].index = xasprintf("%s/%s", cwd, index);
	else
		set->shard[set->shard_nr].index = xstrdup(index);
	set->shard_nr++;
}

static int shard_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fleet_shard *)a)->name, ((const struct fleet_shard *)b)->name);
}

/* A repository's name: not empty, no control characters, no "/" or ",". */
static int name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '/' || *s == ',')
			return 0;
	return 1;
}

static int load_dir(struct fleet_set *set, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
		return error_errno("cannot read shard set '%s'", dir);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *p;

		if (e->d_name[0] == '.')
			continue;
		if (n > 3 && !strcmp(e->d_name + n - 3, ".db")) {
			char *name = xstrndup(e->d_name, n - 3);

			p = xasprintf("%s/%s", dir, e->d_name);
			if (!stat(p, &st) && S_ISREG(st.st_mode) && name_ok(name))
				set_add(set, name, p);
			free(name);
			free(p);
			continue;
		}
		p = xasprintf("%s/%s/.ci-index/index.db", dir, e->d_name);
		if (!stat(p, &st) && S_ISREG(st.st_mode) && name_ok(e->d_name))
			set_add(set, e->d_name, p);
		free(p);
	}
	closedir(d);
	return 0;
}

/* One manifest line (NUL-terminated, no newline): a shard added, or -1. */
static int load_line(struct fleet_set *set, const char *spec, long lineno, char *line,
		     const char *base)
{
	char *name = NULL, *index = NULL, *path;
	json_t *j = NULL;
	int ret = -1;

	if (line[0] == '{') {
		json_error_t je;

		j = json_loads(line, 0, &je);
		if (!j || !json_is_string(json_object_get(j, "name")) ||
		    !json_is_string(json_object_get(j, "index"))) {
			error("%s:%ld: expected {\"name\":...,\"index\":...}", spec, lineno);
			goto done;
		}
		name = xstrdup(json_string_value(json_object_get(j, "name")));
		index = xstrdup(json_string_value(json_object_get(j, "index")));
	} else {
		char *tab = strchr(line, '\t');

		if (!tab || !tab[1] || strchr(tab + 1, '\t')) {
			error("%s:%ld: expected <name><TAB><index>", spec, lineno);
			goto done;
		}
		name = xstrndup(line, tab - line);
		index = xstrdup(tab + 1);
	}
	if (!name_ok(name)) {
		error("%s:%ld: bad repository name '%s'", spec, lineno, name);
		goto done;
	}
	path = index[0] == '/' ? xstrdup(index) : xasprintf("%s/%s", base, index);
	set_add(set, name, path);
	free(path);
	ret = 0;
done:
	json_decref(j);
	free(name);
	free(index);
	return ret;
}

static int load_manifest(struct fleet_set *set, const char *spec)
{
	FILE *f = fopen(spec, "r");
	char *line = NULL, *base, *slash;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	int ret = 0;

	if (!f)
		return error_errno("cannot read shard set '%s'", spec);
	base = xstrdup(spec);
	slash = strrchr(base, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(base, ".");
	while (!ret && (n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		ret = load_line(set, spec, lineno, line, base);
	}
	if (!ret && ferror(f))
		ret = error_errno("cannot read shard set '%s'", spec);
	fclose(f);
	free(line);
	free(base);
	return ret;
}

int fleet_set_load(struct fleet_set *set, const char *spec)
{
	struct stat st;
	size_t i;

	if (stat(spec, &st))
		return error_errno("cannot read shard set '%s'", spec);
	if ((S_ISDIR(st.st_mode) ? load_dir(set, spec) : load_manifest(set, spec)) < 0)
		return -1;
	if (!set->shard_nr)
		return error("shard set '%s' has no shards", spec);
	qsort(set->shard, set->shard_nr, sizeof(*set->shard), shard_cmp);
	for (i = 1; i < set->shard_nr; i++)
		if (!strcmp(set->shard[i - 1].name, set->shard[i].name))
			return error("shard set '%s' names repository '%s' twice", spec, set->shard[i].name);
	return 0;
}

int fleet_set_filter(struct fleet_set *set, const char *names)
{
	char *copy = xstrdup(names), *tok, *save = NULL;
	unsigned char *keep = xcalloc(set->shard_nr ? set->shard_nr : 1, 1);
	size_t i, n = 0;
	int ret = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < set->shard_nr; i++)
			if (!strcmp(set->shard[i].name, tok))
				break;
		if (i == set->shard_nr) {
			ret = error("no repository '%s' in the shard set", tok);
			goto done;
		}
		keep[i] = 1;
	}
	for (i = 0; i < set->shard_nr; i++) {
		if (keep[i]) {
			set->shard[n++] = set->shard[i];
			continue;
		}
		free(set->shard[i].name);
		free(set->shard[i].index);
	}
	set->shard_nr = n;
	if (!n)
		ret = error("no repository named in '%s'", names);
done:
	free(copy);
	free(keep);
	return ret;
}

void fleet_set_release(struct fleet_set *set)
{
	size_t i;

	for (i = 0; i < set->shard_nr; i++) {
		free(set->shard[i].name);
		free(set->shard[i].index);
	}
	free(set->shard);
	memset(set, 0, sizeof(*set));
}

/* ---- the command line ------------------------------------------------------------- */

/* The value of option opt ("--shards") at argv[*i], advancing *i past it; NULL if none. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);
	const char *a = argv[*i];

	if (strncmp(a, opt, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

const char *fleet_wanted(int argc, char **argv)
{
	const char *env = getenv("CI_FLEET_CHILD"), *v;
	int i;

	if (env && *env)
		return NULL;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		int at = i;

		if ((v = opt_value(argc, argv, &i, "--shards")))
			return v;
		i = at;
	}
	env = getenv("CI_SHARDS");
	return env && *env ? env : NULL;
}

/* ---- running the shards ----------------------------------------------------------- */

struct shard_run {
	pid_t pid;		/* the child, 0 before it starts and after it is reaped */
	int out, err;		/* its pipes, -1 once closed */
	struct buf o, e;	/* what it wrote on stdout and stderr */
	int status;		/* its exit status; 128 + signal; 127 it could not start */
	char *root;		/* grep: the repository root its index names (owned), where it runs */
};

struct fleet_run {
	enum fleet_kind kind;	/* which command's records */
	struct fleet_set set;	/* the shards */
	char **argv;		/* the shards' command line: [0] the binary, [2] the index */
	int argc;		/* its length */
	int (*run_main)(int, char **);	/* the command's main, run in a forked child; or NULL */
	struct shard_run *run;	/* one a shard, in the set's order */
	int jobs;		/* shards at a time */
	long limit;		/* rank: at most this many hits */
};

static const char *const kind_name[] = { "grep", "rank", "refs" };

/* Start shard i's command; 0, or -1 (errno set) with nothing left open. */
static int start(struct fleet_run *fr, size_t i)
{
	struct shard_run *r = &fr->run[i];
	posix_spawn_file_actions_t fa;
	int po[2], pe[2], rc;

	if (pipe2(po, O_CLOEXEC))
		return -1;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	fr->argv[2] = fr->set.shard[i].index;
	if (fr->run_main) {
		/*
		 * fork without exec: the child is this process before its command
		 * started (fleet_main runs first thing in main, with no thread yet),
		 * so it runs main on the shard's command line as a process of its
		 * own would, without paying for exec and dynamic linking again.
		 */
		fflush(NULL);
		r->pid = fork();
		if (r->pid == 0) {
			int nul = open("/dev/null", O_RDONLY);

			if (nul < 0 || dup2(nul, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0 ||
			    (r->root && chdir(r->root) < 0)) {
				dprintf(pe[1], "cannot start: %s\n", strerror(errno));
				_exit(127);
			}
			close(nul);
			optind = 0;	/* getopt anew, from argv[1] */
			exit(fr->run_main(fr->argc, fr->argv));
		}
		close(po[1]);
		close(pe[1]);
		if (r->pid < 0) {
			r->pid = 0;
			close(po[0]);
			close(pe[0]);
			return -1;
		}
		r->out = po[0];
		r->err = pe[0];
		return 0;
	}
	posix_spawn_file_actions_init(&fa);
	if (r->root)
		posix_spawn_file_actions_addchdir_np(&fa, r->root);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	rc = posix_spawn(&r->pid, fr->argv[0], &fa, NULL, fr->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (rc) {
		close(po[0]);
		close(pe[0]);
		r->pid = 0;
		errno = rc;
		return -1;
	}
	r->out = po[0];
	r->err = pe[0];
	return 0;
}

/* Read what is there on fd into b; at the end of it, close fd and set it to -1. */
static void drain(int *fd, struct buf *b)
{
	char tmp[65536];
	ssize_t n = read(*fd, tmp, sizeof(tmp));

	if (n > 0) {
		buf_add(b, tmp, n);
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	close(*fd);
	*fd = -1;
}

/*
 * ci-grep reads the files of the repository its index names (the index holds
 * their trigrams, not their text), and runs in that repository: each shard's
 * root, from its index; NULL for a shard whose index cannot be opened.
 */
static void grep_roots(struct fleet_run *fr)
{
	size_t i;

	for (i = 0; i < fr->set.shard_nr; i++) {
		struct ci_index *ix = NULL;

		if (index_open(&ix, fr->set.shard[i].index, 1) == 0) {
			fr->run[i].root = xstrdup(index_root(ix));
			index_close(ix);
		}
	}
}

/* Run every shard's command, at most fr->jobs at a time; each one's output in fr->run. */
static void run_all(struct fleet_run *fr)
{
	size_t n = fr->set.shard_nr, next = 0, done = 0, i, k;
	size_t *active = xcalloc(n, sizeof(*active));
	struct pollfd *pfd = xcalloc(2 * n, sizeof(*pfd));
	size_t active_nr = 0;

	while (done < n) {
		while (next < n && active_nr < (size_t)fr->jobs) {
			struct shard_run *r = &fr->run[next];

			if (fr->kind == FLEET_GREP && !r->root) {
				buf_addf(&r->e, "cannot open the index '%s'\n", fr->set.shard[next].index);
				r->status = EXIT_IO;
				done++;
			} else if (start(fr, next)) {
				buf_addf(&r->e, "cannot run %s: %s\n", fr->argv[0], strerror(errno));
				r->status = 127;
				done++;
			} else {
				active[active_nr++] = next;
			}
			next++;
		}
		if (!active_nr)
			continue;
		for (k = 0, i = 0; i < active_nr; i++) {
			struct shard_run *r = &fr->run[active[i]];

			pfd[k].fd = r->out;
			pfd[k++].events = POLLIN;
			pfd[k].fd = r->err;
			pfd[k++].events = POLLIN;
		}
		if (poll(pfd, k, -1) < 0) {
			if (errno == EINTR)
				continue;
			die_code(EXIT_IO, "poll: %s", strerror(errno));
		}
		for (k = 0, i = 0; i < active_nr; i++, k += 2) {
			struct shard_run *r = &fr->run[active[i]];

			if (r->out >= 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				drain(&r->out, &r->o);
			if (r->err >= 0 && (pfd[k + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				drain(&r->err, &r->e);
		}
		/* reap the children whose pipes are both closed */
		for (i = 0; i < active_nr;) {
			struct shard_run *r = &fr->run[active[i]];
			int st;

			if (r->out >= 0 || r->err >= 0) {
				i++;
				continue;
			}
			while (waitpid(r->pid, &st, 0) < 0)
				if (errno != EINTR)
					die_code(EXIT_IO, "waitpid: %s", strerror(errno));
			r->pid = 0;
			r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			active[i] = active[--active_nr];
			done++;
		}
	}
	free(active);
	free(pfd);
}

/* ---- merging ---------------------------------------------------------------------- */

struct rec {
	size_t shard;		/* whose */
	const char *repo;	/* its name (the set's) */
	size_t seq;		/* its place in the shard's output */
	const char *line;	/* the record, in the shard's buffer (NUL-terminated) */
	size_t type_end;	/* offset just after the _type's closing quote */
	int hit;		/* a ci-rank hit */
	double score;		/* a hit's score */
	char *path;		/* a hit's path (owned) */
	long line_no;		/* a hit's start_line */
};

static int hit_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	int c;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if ((c = strcmp(a->repo, b->repo)))
		return c;
	if ((c = strcmp(a->path ? a->path : "", b->path ? b->path : "")))
		return c;
	if (a->line_no != b->line_no)
		return a->line_no < b->line_no ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Append rec's record with its repository to out. */
static void emit(struct buf *out, const struct fleet_set *set, const struct rec *r)
{
	const char *name = set->shard[r->shard].name;

	buf_add(out, r->line, r->type_end);
	buf_addstr(out, ",\"repo\":");
	nd_json_string(out, name, strlen(name));
	if (r->line[r->type_end] == '}')
		buf_addch(out, '}');
	else
		buf_addstr(out, r->line + r->type_end);
	buf_addch(out, '\n');
}

/* Past the JSON string at p (at its opening quote): the character after its closing quote, or NULL. */
static const char *skip_string(const char *p, int *escaped)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\') {
			*escaped = 1;
			if (!*++p)
				return NULL;
		}
	return *p ? p + 1 : NULL;
}

/* Past the JSON value at p (no space before it): the character after it, or NULL. */
static const char *skip_value(const char *p)
{
	int depth = 0, esc = 0;

	do {
		if (*p == '"') {
			if (!(p = skip_string(p, &esc)))
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		else if (!*p)
			return NULL;
		else if (!depth && (*p == ',' || *p == ' '))
			return p;
		p++;
	} while (depth > 0 || (*p && *p != ',' && *p != '}' && *p != ']'));
	return p;
}

/*
 * A ci-rank hit's score, path and start_line, read from its text as ci-rank
 * writes it (one line, no spaces between tokens): 0, or -1 where it is not
 * so plain (a path with an escape, a value of another type): json_loads then.
 * Jansson on every hit of 1,000 shards was a twentieth of a query, on the
 * thread that merges.
 */
static int hit_fields(struct rec *r, const char *p)
{
	int esc = 0, have = 0;

	if (*p++ != '{')
		return -1;
	while (*p == '"') {
		const char *key = p + 1, *v, *end;
		size_t kn;

		if (!(v = skip_string(p, &esc)) || esc || *v != ':')
			return -1;
		kn = (size_t)(v - 1 - key);
		v++;
		if (!(end = skip_value(v)))
			return -1;
		if (kn == 5 && !memcmp(key, "score", 5)) {
			char *e;

			r->score = strtod(v, &e);
			if (e != end || e == v)
				return -1;
			have |= 1;
		} else if (kn == 4 && !memcmp(key, "path", 4)) {
			if (*v != '"' || skip_string(v, &esc) != end || esc)
				return -1;
			free(r->path);
			r->path = xstrndup(v + 1, (size_t)(end - v - 2));
			have |= 2;
		} else if (kn == 10 && !memcmp(key, "start_line", 10)) {
			char *e;

			r->line_no = strtol(v, &e, 10);
			if (e != end || e == v)
				return -1;
			have |= 4;
		}
		p = end;
		if (*p == ',')
			p++;
	}
	return *p == '}' && !p[1] && (have & 1) ? 0 : -1;
}

/* Split shard i's output into records (appended to *recs); -1 on a line that is no record. */
static int split(struct fleet_run *fr, size_t i, struct rec **recs, size_t *nr, size_t *alloc)
{
	struct buf *o = &fr->run[i].o;
	char *p = o->buf, *end = o->buf + o->len;
	size_t seq = 0;
	static const char pre[] = "{\"_type\":\"";

	while (p < end) {
		char *nl = memchr(p, '\n', end - p), *q;
		struct rec *r;

		if (!nl)
			nl = end;
		*nl = '\0';
		if (p == nl) {
			p = nl + 1;
			continue;
		}
		if (strncmp(p, pre, sizeof(pre) - 1) || !(q = strchr(p + sizeof(pre) - 1, '"')) ||
		    (q[1] != ',' && q[1] != '}'))
			return -1;
		ALLOC_GROW(*recs, *nr + 1, *alloc);
		r = &(*recs)[(*nr)++];
		memset(r, 0, sizeof(*r));
		r->shard = i;
		r->repo = fr->set.shard[i].name;
		r->seq = seq++;
		r->line = p;
		r->type_end = q + 1 - p;
		if (fr->kind == FLEET_RANK && !strncmp(p + sizeof(pre) - 1, "hit\"", 4)) {
			json_t *j;

			r->hit = 1;
			if (!hit_fields(r, p)) {
				p = nl + 1;
				continue;
			}
			free(r->path);
			r->path = NULL;
			r->score = 0;
			r->line_no = 0;
			if (!(j = json_loads(p, 0, NULL)))
				return -1;
			r->score = json_number_value(json_object_get(j, "score"));
			if (json_is_string(json_object_get(j, "path")))
				r->path = xstrdup(json_string_value(json_object_get(j, "path")));
			r->line_no = json_integer_value(json_object_get(j, "start_line"));
			json_decref(j);
		}
		p = nl + 1;
	}
	return 0;
}

/* The first line of s (at most 300 bytes), malloc'd. */
static char *first_line(const char *s)
{
	size_t n = strcspn(s, "\n");

	return xstrndup(s, n > 300 ? 300 : n);
}

static int merge(struct fleet_run *fr, struct buf *out)
{
	struct fleet_set *set = &fr->set;
	struct rec *recs = NULL;
	struct buf errs = BUF_INIT;	/* the fleet_error records, written last but one */
	size_t nr = 0, alloc = 0, i, shown = 0;
	size_t answered = 0, failed = 0, usage = 0, found = 0;
	int ret;

	for (i = 0; i < set->shard_nr; i++) {
		struct shard_run *r = &fr->run[i];
		size_t before = nr;
		char *msg;

		if (r->status == 2)
			usage++;
		if ((r->status == 0 || r->status == 1) && !split(fr, i, &recs, &nr, &alloc)) {
			answered++;
			found += r->status == 0;
			if (r->e.len) {
				/* warnings of a shard that answered: passed on, named */
				char *p = r->e.buf, *end = r->e.buf + r->e.len;

				while (p < end) {
					char *nl = memchr(p, '\n', end - p);
					size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

					fprintf(stderr, "%s: %s: %.*s\n", progname, set->shard[i].name, (int)n, p);
					p += n + 1;
				}
			}
			continue;
		}
		for (size_t k = before; k < nr; k++)
			free(recs[k].path);
		nr = before;
		failed++;
		msg = first_line(r->status == 0 || r->status == 1 ? "its output is not records"
				 : r->e.len ? r->e.buf : "failed");
		nd_begin(&errs, "fleet_error");
		nd_str(&errs, "repo", set->shard[i].name);
		nd_str(&errs, "index", set->shard[i].index);
		nd_int(&errs, "exit", r->status);
		nd_str(&errs, "message", msg);
		nd_end(&errs);
		free(msg);
	}
	if (usage == set->shard_nr) {
		/* the command line itself is wrong: say so once, as the command would */
		fwrite(fr->run[0].e.buf, 1, fr->run[0].e.len, stderr);
		ret = EXIT_USAGE;
		buf_reset(out);
		goto done;
	}
	for (i = 0; i < set->shard_nr; i++) {
		struct shard_run *r = &fr->run[i];

		if (r->status != 0 && r->status != 1)
			fprintf(stderr, "%s: shard '%s' (%s): exit %d: %.*s\n", progname, set->shard[i].name,
				set->shard[i].index, r->status, (int)strcspn(r->e.buf, "\n"), r->e.buf);
	}
	if (fr->kind == FLEET_RANK) {
		/* hits by score across the shards, then the other records by shard */
		struct rec *hits = xcalloc(nr ? nr : 1, sizeof(*hits));
		size_t hn = 0;

		for (i = 0; i < nr; i++)
			if (recs[i].hit)
				hits[hn++] = recs[i];
		qsort(hits, hn, sizeof(*hits), hit_cmp);
		for (i = 0; i < hn && (long)i < fr->limit; i++)
			emit(out, set, &hits[i]);
		shown = i;
		free(hits);
		for (i = 0; i < nr; i++)
			if (!recs[i].hit)
				emit(out, set, &recs[i]);
	} else {
		for (i = 0; i < nr; i++)
			emit(out, set, &recs[i]);
		shown = nr;
	}
	buf_add(out, errs.buf, errs.len);
	nd_begin(out, "fleet");
	nd_str(out, "command", kind_name[fr->kind]);
	nd_int(out, "shards", set->shard_nr);
	nd_int(out, "answered", answered);
	nd_int(out, "failed", failed);
	nd_str(out, "merge", fr->kind == FLEET_RANK ? "score" : "repository");
	if (fr->kind == FLEET_RANK)
		nd_int(out, "hits", shown);
	nd_end(out);
	ret = failed ? util_error_code() : found ? EXIT_OK : EXIT_NOTHING;
done:
	for (i = 0; i < nr; i++)
		free(recs[i].path);
	free(recs);
	buf_release(&errs);
	return ret;
}

/* ---- in this process: threads ------------------------------------------------------ */

/*
 * Open the index at path as the shard's command would: 0, or -1 with what
 * that command would have said in why (ci-grep's fan-out reads each index's
 * root first and says so; ci-rank and ci-refs name a missing index).
 * how: INDEX_IMMUTABLE for a pool's, else 0.
 */
static int shard_open(enum fleet_kind kind, const char *path, int how, struct ci_index **ix, struct buf *why)
{
	int rc;

	util_report_to(why);
	/*
	 * SQLite's log of damage is one for the process, given to the index
	 * opened last (index.c): on threads that is another shard's, and a
	 * shard that is not a database would end them all.  Noted instead: such
	 * a shard fails index_open's own checks, reported as its failure.
	 */
	rc = index_open(ix, path, INDEX_READONLY | INDEX_NOTE_DAMAGE | how);
	util_report_to(NULL);
	if (!rc)
		return 0;
	*ix = NULL;
	if (kind == FLEET_GREP) {
		buf_reset(why);
		buf_addf(why, "cannot open the index '%s'\n", path);
	} else if (rc > 0) {
		buf_addf(why, "%s: no index at '%s': run 'ci-index build' first\n", progname, path);
	}
	return -1;
}

/* The state of the index file at path and of its log, into seen (zeros: none). */
static void pool_stat(const char *path, struct fleet_seen seen[2])
{
	char wal[4096];
	struct stat st;

	memset(seen, 0, 2 * sizeof(*seen));
	snprintf(wal, sizeof(wal), "%s-wal", path);
	for (int k = 0; k < 2; k++)
		if (!stat(k ? wal : path, &st)) {
			seen[k].dev = st.st_dev;
			seen[k].ino = st.st_ino;
			seen[k].size = st.st_size;
			seen[k].mtime = st.st_mtim;
		}
}

/* Pool shard i opened (again): its index, its resident part, the file's state. */
static void pool_shard_open(struct fleet_pool *pool, size_t i)
{
	const struct fleet_cmd *cmd = pool->cmd;
	const char *path = pool->set.shard[i].index;
	struct buf why = BUF_INIT;

	pool_stat(path, pool->seen[i]);
	/*
	 * SQLite's reports of damage meanwhile are this shard's: what its open
	 * meets is its own failure, what its warm-up meets its index's (else
	 * they went to the index opened last, another shard's)
	 */
	index_damage_thread(1, NULL);
	if (shard_open(cmd->kind, path, INDEX_IMMUTABLE, &pool->ix[i], &why) < 0) {
		pool->why[i] = buf_detach(&why, NULL);
	} else if (cmd->resident) {
		index_damage_thread(1, pool->ix[i]);
		pool->res[i] = cmd->resident(pool->ix[i], path);
	}
	index_damage_thread(0, NULL);
	buf_release(&why);
}

static void pool_shard_close(struct fleet_pool *pool, size_t i)
{
	if (pool->res[i])
		pool->cmd->resident_release(pool->res[i]);
	if (pool->ix[i])
		index_close(pool->ix[i]);
	free(pool->why[i]);
	pool->res[i] = NULL;
	pool->ix[i] = NULL;
	pool->why[i] = NULL;
}

int fleet_pool_open(struct fleet_pool *pool, const struct fleet_cmd *cmd, const char *spec)
{
	struct rlimit lim;
	size_t i, n;

	memset(pool, 0, sizeof(*pool));
	pool->cmd = cmd;
	if (fleet_set_load(&pool->set, spec) < 0)
		return -1;
	/* an open index holds a descriptor or three (the database, its WAL and shm) */
	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
	n = pool->set.shard_nr;
	pool->ix = xcalloc(n, sizeof(*pool->ix));
	pool->why = xcalloc(n, sizeof(*pool->why));
	pool->res = xcalloc(n, sizeof(*pool->res));
	pool->seen = xcalloc(n, sizeof(*pool->seen));
	pool->died = xcalloc(n ? n : 1, 1);
	for (i = 0; i < n; i++)
		pool_shard_open(pool, i);
	return 0;
}

size_t fleet_pool_refresh(struct fleet_pool *pool)
{
	struct fleet_seen now[2];
	size_t i, nr = 0;

	for (i = 0; i < pool->set.shard_nr; i++) {
		pool_stat(pool->set.shard[i].index, now);
		if (pool->died[i]) {
			/* a parked thread holds them (its statements, its locks): left as they are */
			pool->ix[i] = NULL;
			pool->res[i] = NULL;
			pool->died[i] = 0;
		} else if (!memcmp(now, pool->seen[i], sizeof(now))) {
			continue;
		}
		pool_shard_close(pool, i);
		pool_shard_open(pool, i);
		nr++;
	}
	return nr;
}

void fleet_pool_release(struct fleet_pool *pool)
{
	size_t i;

	for (i = 0; i < pool->set.shard_nr; i++)
		pool_shard_close(pool, i);
	free(pool->ix);
	free(pool->why);
	free(pool->res);
	free(pool->seen);
	free(pool->died);
	fleet_set_release(&pool->set);
	memset(pool, 0, sizeof(*pool));
}

/* What the threads share: the shards to answer, the next one to take. */
struct threads {
	struct fleet_run *fr;
	const struct fleet_cmd *cmd;
	void *state;			/* the command's query (prepare) */
	struct fleet_pool *pool;	/* or NULL */
	size_t *in_pool;		/* fr's shard i is the pool's in_pool[i] */
	size_t next;			/* taken atomically */
	int prune;			/* cmd->skip asked ($CI_SHARDS_PRUNE) */
	size_t skipped;			/* shards it skipped (atomic) */
	pthread_mutex_t lock;		/* guards running */
	pthread_cond_t ended;		/* running went down */
	int running;			/* threads still answering */
};

/* One thread: the shard it answers, and whether a die() parked it there. */
struct shard_thread {
	struct threads *t;
	pthread_t tid;
	size_t at;			/* the shard being answered */
	int parked;			/* a die() in its query: it stays, blocked */
	int here;			/* the caller's thread: no trap */
};

static void thread_ended(struct threads *t)
{
	pthread_mutex_lock(&t->lock);
	t->running--;
	pthread_cond_signal(&t->ended);
	pthread_mutex_unlock(&t->lock);
}

/*
 * A die() in a shard's query (util_trap_die): that shard failed with the
 * message die() said (in its r->e) and code, the others go on.  The thread
 * is parked, not unwound: what the query held (its statements, its memory)
 * stays as it was, never used again, until the process ends.
 */
static void shard_died(void *arg, int code)
{
	struct shard_thread *st = arg;
	sigset_t all;

	st->t->fr->run[st->at].status = code;
	if (st->t->pool) {
		/* its index is held by this thread from now on: opened anew for the next query */
		st->t->pool->died[st->t->in_pool[st->at]] = 1;
		__atomic_fetch_add(&st->t->pool->parked, 1, __ATOMIC_RELAXED);
	}
	util_report_to(NULL);
	index_damage_thread(0, NULL);
	st->parked = 1;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	thread_ended(st->t);
	for (;;)
		pause();
}

/* Shard i's query over ix on this thread; its status in r->status. */
static void shard_query(struct threads *t, size_t i, struct ci_index *ix, void *res)
{
	struct shard_run *r = &t->fr->run[i];
	int damage;

	util_report_to(&r->e);
	index_damage_thread(1, ix);
	r->status = t->cmd->shard(t->state, ix, t->fr->set.shard[i].index, res, &r->o, &r->e);
	util_report_to(NULL);
	if ((damage = index_damage_seen(ix))) {
		/* what the command run alone dies of (index.c), before it answers */
		buf_reset(&r->o);
		buf_reset(&r->e);
		buf_addf(&r->e, "%s: index '%s' is damaged (%s): run 'ci-index build'\n", progname,
			 t->fr->set.shard[i].index, sqlite3_errstr(damage));
		r->status = util_error_code();
	}
}

static void *shard_thread(void *arg)
{
	struct shard_thread *st = arg;
	struct threads *t = st->t;
	struct fleet_run *fr = t->fr;
	const struct util_trap trap = { shard_died, st };
	size_t i;

	util_trap_die(st->here ? NULL : &trap);
	while ((i = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED)) < fr->set.shard_nr) {
		struct shard_run *r = &fr->run[i];
		const char *path = fr->set.shard[i].index;
		struct ci_index *ix;
		void *res = NULL;

		st->at = i;
		index_damage_thread(1, NULL);	/* what an open meets is its own failure */
		if (t->pool) {
			ix = t->pool->ix[t->in_pool[i]];
			res = t->pool->res[t->in_pool[i]];
			if (!ix)
				buf_addstr(&r->e, t->pool->why[t->in_pool[i]]);
		} else {
			shard_open(fr->kind, path, 0, &ix, &r->e);
		}
		if (!ix) {
			r->status = EXIT_IO;
			continue;
		}
		if (res && t->prune && t->cmd->skip(t->state, res)) {
			r->status = EXIT_NOTHING;	/* it cannot match (fleet/prune.h) */
			__atomic_fetch_add(&t->skipped, 1, __ATOMIC_RELAXED);
			continue;
		}
		shard_query(t, i, ix, res);
		index_damage_thread(0, NULL);
		if (!t->pool)
			index_close(ix);
	}
	index_damage_thread(0, NULL);
	util_trap_die(NULL);
	thread_ended(t);
	return NULL;
}

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct fleet_shard *)elem)->name);
}

/*
 * Answer every shard of fr on fr->jobs threads, the caller waiting for them:
 * a thread that dies in a shard's query stays parked (shard_died), so the
 * caller waits for the count of threads answering, not for each to end.
 */
static void run_threads(struct fleet_run *fr, const struct fleet_cmd *cmd, void *state,
			struct fleet_pool *pool)
{
	const char *prune = getenv("CI_SHARDS_PRUNE");
	struct threads t = { .fr = fr, .cmd = cmd, .state = state, .pool = pool,
			     .prune = pool && cmd->skip && !(prune && !strcmp(prune, "0")) };
	size_t n = fr->set.shard_nr, i;
	int nt = fr->jobs < (int)n ? fr->jobs : (int)n, k, started = 0;
	struct shard_thread *th = xcalloc(nt > 0 ? nt : 1, sizeof(*th));

	if (pool) {
		t.in_pool = xcalloc(n ? n : 1, sizeof(*t.in_pool));
		for (i = 0; i < n; i++) {
			const struct fleet_shard *at = bsearch(fr->set.shard[i].name, pool->set.shard,
							       pool->set.shard_nr, sizeof(*at), name_cmp);
			t.in_pool[i] = (size_t)(at - pool->set.shard);
		}
	}
	pthread_mutex_init(&t.lock, NULL);
	pthread_cond_init(&t.ended, NULL);
	t.running = nt;
	for (k = 0; k < nt; k++) {
		th[started].t = &t;
		if (!pthread_create(&th[started].tid, NULL, shard_thread, &th[started]))
			started++;
	}
	pthread_mutex_lock(&t.lock);
	t.running -= nt - started;
	pthread_mutex_unlock(&t.lock);
	if (!started) {
		/* no thread at all: the shards here, where a die() ends the process */
		th[0].t = &t;
		th[0].here = 1;
		t.running = 1;
		shard_thread(&th[0]);
	}
	pthread_mutex_lock(&t.lock);
	while (t.running > 0)
		pthread_cond_wait(&t.ended, &t.lock);
	pthread_mutex_unlock(&t.lock);
	for (k = 0; k < started; k++)
		if (th[k].parked)
			pthread_detach(th[k].tid);
		else
			pthread_join(th[k].tid, NULL);
	{
		const char *stats = getenv("CI_SHARDS_STATS");

		if (stats && !strcmp(stats, "1"))
			fprintf(stderr, "%s: shards: %zu asked, %zu skipped (cannot match)\n", progname, n - t.skipped,
				t.skipped);
	}
	/* a parked thread refers to t and th no more: they may go */
	pthread_cond_destroy(&t.ended);
	pthread_mutex_destroy(&t.lock);
	free(th);
	free(t.in_pool);
}

/* ---- the entry point -------------------------------------------------------------- */

/*
 * The command line taken apart: the shards' command line in fr->argv
 * ([0] the binary, [1] --index, [2] the shard's index), the set, the
 * repositories named, the mode.
 */
static void take_line(struct fleet_run *fr, int argc, char **argv, const char **spec, const char **repos,
		      const char **mode)
{
	const char *v;
	int i, an = 3, rest = 0;

	fr->argv = xcalloc(argc + 4, sizeof(*fr->argv));
	for (i = 1; i < argc; i++) {
		int at = i;

		if (!rest && !strcmp(argv[i], "--"))
			rest = 1;
		if (!rest && (v = opt_value(argc, argv, &i, "--shards"))) {
			*spec = v;
			continue;
		}
		i = at;
		if (!rest && (v = opt_value(argc, argv, &i, "--shards-repo"))) {
			*repos = v;
			continue;
		}
		i = at;
		if (!rest && (v = opt_value(argc, argv, &i, "--shards-mode"))) {
			*mode = v;
			continue;
		}
		i = at;
		if (!rest && (!strcmp(argv[i], "--index") || !strncmp(argv[i], "--index=", 8)))
			die_code(EXIT_USAGE, "--shards and --index cannot be used together");
		if (!rest && fr->kind == FLEET_RANK && (v = opt_value(argc, argv, &i, "--limit"))) {
			char *e;
			long l = strtol(v, &e, 10);

			if (!*e && l > 0)
				fr->limit = l;
			fr->argv[an++] = argv[at];
			if (i != at)
				fr->argv[an++] = argv[i];
			continue;
		}
		i = at;
		fr->argv[an++] = argv[i];
	}
	fr->argc = an;
	fr->argv[1] = "--index";
	if (fr->kind == FLEET_GREP) {
		/* published shards do not change under a query; a --check given later wins */
		memmove(fr->argv + 4, fr->argv + 3, (an - 3) * sizeof(*fr->argv));
		fr->argv[3] = "--trust-index";
		fr->argc = ++an;
	}
}

int fleet_main(enum fleet_kind kind, int (*run_main)(int, char **), int argc, char **argv)
{
	struct fleet_cmd cmd = { .kind = kind, .run_main = run_main };

	return fleet_run(&cmd, NULL, argc, argv);
}

/* The threads' query: 0 with *state, or 1 when the forked path answers (the mode, or the command). */
static int thread_prepare(struct fleet_run *fr, const struct fleet_cmd *cmd, const char *mode, char *argv0,
			  void **state)
{
	char **targv;
	int rc;

	*state = NULL;
	if (mode && *mode && strcmp(mode, "thread") && strcmp(mode, "fork"))
		die_code(EXIT_USAGE, "--shards-mode: expected thread or fork, got '%s'", mode);
	if (!cmd->prepare || (mode && !strcmp(mode, "fork")))
		return 1;
	/* the shards' command line without --index <shard> */
	targv = xcalloc(fr->argc, sizeof(*targv));
	targv[0] = argv0;
	memcpy(targv + 1, fr->argv + 3, (fr->argc - 3) * sizeof(*targv));
	optind = 0;	/* getopt anew, from argv[1] */
	rc = cmd->prepare(fr->argc - 2, targv, state);
	free(targv);
	return rc;
}

int fleet_run(const struct fleet_cmd *cmd, struct fleet_pool *pool, int argc, char **argv)
{
	struct fleet_run fr;
	struct buf out = BUF_INIT;
	const char *spec = NULL, *repos = getenv("CI_SHARDS_REPO"), *jobs = getenv("CI_SHARDS_JOBS");
	const char *mode = getenv("CI_SHARDS_MODE");
	char exe[4096];
	void *state = NULL;
	ssize_t n;
	int ret, threads;
	size_t k;

	memset(&fr, 0, sizeof(fr));
	fr.kind = cmd->kind;
	fr.run_main = cmd->run_main;
	fr.limit = 10;
	take_line(&fr, argc, argv, &spec, &repos, &mode);
	if (!spec)
		spec = getenv("CI_SHARDS");
	if (!spec || !*spec)
		die_code(EXIT_USAGE, "--shards: no shard set named");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		die_code(EXIT_IO, "cannot find my own binary: %s", strerror(errno));
	exe[n] = '\0';
	fr.argv[0] = exe;
	/* the shards write NDJSON and do not hand the query to a shard set again */
	if (!getenv("CI_FLEET_CHILD") || strcmp(getenv("CI_FLEET_CHILD"), "1"))
		setenv("CI_FLEET_CHILD", "1", 1);
	if (getenv("CI_FORMAT"))
		unsetenv("CI_FORMAT");
	threads = !thread_prepare(&fr, cmd, mode, argv[0], &state);
	if (pool) {
		/* the pool's set: a copy, filtered */
		for (k = 0; k < pool->set.shard_nr; k++) {
			ALLOC_GROW(fr.set.shard, fr.set.shard_nr + 1, fr.set.shard_alloc);
			fr.set.shard[fr.set.shard_nr].name = xstrdup(pool->set.shard[k].name);
			fr.set.shard[fr.set.shard_nr++].index = xstrdup(pool->set.shard[k].index);
		}
		if (repos && *repos && fleet_set_filter(&fr.set, repos) < 0) {
			ret = util_error_code();
			goto done;
		}
	} else if (fleet_set_load(&fr.set, spec) < 0 ||
		   (repos && *repos && fleet_set_filter(&fr.set, repos) < 0)) {
		ret = util_error_code();
		goto done;
	}
	fr.jobs = threads ? online_cpus() : 2 * online_cpus();
	if (jobs && *jobs)
		fr.jobs = (int)parse_long_arg("", "CI_SHARDS_JOBS", jobs, 1, 1024);
	fr.run = xcalloc(fr.set.shard_nr, sizeof(*fr.run));
	for (k = 0; k < fr.set.shard_nr; k++) {
		fr.run[k].out = fr.run[k].err = -1;
		buf_init(&fr.run[k].o, 0);
		buf_init(&fr.run[k].e, 0);
	}
	if (threads) {
		if (fr.kind == FLEET_GREP && git_libgit2_init)
			git_libgit2_init();	/* once, before the threads */
		run_threads(&fr, cmd, state, pool);
	} else {
		if (fr.kind == FLEET_GREP) {
			grep_roots(&fr);
			if (fr.run_main && git_libgit2_init)
				git_libgit2_init();
		}
		run_all(&fr);
	}
	ret = merge(&fr, &out);
	if (out.len && nd_flush(&out, stdout) < 0) {
		/*
		 * not die(): a shard server answers here (fleet_here_ok), with
		 * SIGPIPE ignored: a reader gone is the status of a process
		 * killed by it, which its caller passes on (fork_server_call)
		 */
		if (errno == EPIPE) {
			ret = 128 + SIGPIPE;
		} else {
			error("write error: %s", strerror(errno));
			ret = EXIT_IO;
		}
	}
	for (k = 0; k < fr.set.shard_nr; k++) {
		buf_release(&fr.run[k].o);
		buf_release(&fr.run[k].e);
		free(fr.run[k].root);
	}
	free(fr.run);
done:
	if (state)
		cmd->release(state);
	buf_release(&out);
	fleet_set_release(&fr.set);
	free(fr.argv);
	return ret;
}

int fleet_here_ok(const struct fleet_cmd *cmd, int argc, char **argv)
{
	struct fleet_run fr;
	const char *spec = NULL, *repos = NULL, *mode = getenv("CI_SHARDS_MODE"), *jobs = getenv("CI_SHARDS_JOBS");
	const char *fmt = getenv("CI_FORMAT");
	void *state = NULL;
	int threads;

	memset(&fr, 0, sizeof(fr));
	fr.kind = cmd->kind;
	take_line(&fr, argc, argv, &spec, &repos, &mode);
	/* as fleet_run sets it for the shards' commands (and the server's run will) */
	if (fmt)
		unsetenv("CI_FORMAT");
	threads = !thread_prepare(&fr, cmd, mode, argv[0], &state);
	if (state)
		cmd->release(state);
	if (jobs && *jobs)
		parse_long_arg("", "CI_SHARDS_JOBS", jobs, 1, 1024);
	free(fr.argv);
	return threads;
}
