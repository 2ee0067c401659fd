/*
 * run.c: how ci runs the other ci programs (found beside it first, then on
 * PATH, never through a shell) and reads their NDJSON records, and how it
 * writes records: NDJSON for machines, human.h's lines for people.
 */
#include "ci.h"
#include "core/human.h"

#include <errno.h>
#include <sys/wait.h>

#include "index/index.h"
#include "context/patterns.h"
#include "core/toml-json.h"

const struct context_toml ci_toml = { toml_file_json, toml_text_json };

void run_exec(const char *prog, char **argv)
{
	char *path = find_prog(prog);

	argv[0] = (char *)prog;
	fflush(stdout);
	execvp(path, argv);
	fprintf(stderr, "%s: cannot run '%s': %s\n", progname, path, strerror(errno));
	free(path);
	exit(1);
}

/* Records for people: those of human.h's formatter (grouped by file, in colour). */
static int human_color(void)
{
	const char *nc = getenv("NO_COLOR");

	return !(nc && *nc);
}

/*
 * Start prog with argv, its standard output a pipe: the pid, and the pipe's
 * reading end in *rfd.  Dies on failure.
 */
static pid_t spawn_reading(const char *prog, char **argv, const struct child_opts *co, int *rfd)
{
	pid_t pid = spawn_reader(prog, argv, NULL, co ? co->in_fd : -1, co ? co->quiet : 0, rfd);

	if (pid < 0)
		die_code(EXIT_IO, "cannot start %s: %s", prog, strerror(errno));
	return pid;
}

int run(const char *prog, char **argv, int json)
{
	int rfd, status, ret;
	pid_t pid;
	FILE *in;

	if (json || !isatty(STDOUT_FILENO))
		run_exec(prog, argv);
	pid = spawn_reading(prog, argv, NULL, &rfd);
	in = fdopen(rfd, "r");
	if (!in)
		die_code(EXIT_IO, "cannot read from %s: %s", prog, strerror(errno));
	human_format(in, stdout, human_color());
	fclose(in);
	if (waitpid(pid, &status, 0) < 0)
		die_code(EXIT_IO, "cannot wait for %s: %s", prog, strerror(errno));
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	return close_stdout(ret);
}

int capture(struct buf *out, const char *prog, char **argv, const struct child_opts *co)
{
	int rfd, status;
	pid_t pid;
	char chunk[8192];
	ssize_t n;

	pid = spawn_reading(prog, argv, co, &rfd);
	while ((n = read(rfd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_code(EXIT_IO, "cannot read from %s: %s", prog, strerror(errno));
		buf_add(out, chunk, (size_t)n);
	}
	close(rfd);
	if (waitpid(pid, &status, 0) < 0)
		die_code(EXIT_IO, "cannot wait for %s: %s", prog, strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

json_t *records_of(const char *prog, char **argv, const struct child_opts *co, int *rc)
{
	struct buf out = BUF_INIT;
	json_t *recs = json_array();
	const char *s, *e;

	*rc = capture(&out, prog, argv, co);
	for (s = out.buf; s < out.buf + out.len; s = e + 1) {
		json_t *r;

		e = memchr(s, '\n', (size_t)(out.buf + out.len - s));
		if (!e)
			e = out.buf + out.len;
		r = json_loadb(s, (size_t)(e - s), 0, NULL);
		if (r)
			json_array_append_new(recs, r);
	}
	buf_release(&out);
	return recs;
}

void put_json(json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));

	puts(s ? s : "");
	free(s);
}

int want_json(int json)
{
	return json || !isatty(STDOUT_FILENO);
}

int emit_records(json_t *recs, int json, int rc)
{
	json_t *r;
	size_t i;

	if (!json) {
		/* the records' lines, read back by the formatter */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (!mem)
			die_code(EXIT_IO, "out of memory");
		json_array_foreach(recs, i, r) {
			char *s = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
			fprintf(mem, "%s\n", s ? s : "null");
			free(s);
		}
		fclose(mem);
		mem = fmemopen(text, len, "r");
		if (mem) {
			human_format(mem, stdout, human_color());
			fclose(mem);
		}
		free(text);
		json_decref(recs);
		return close_stdout(rc);
	}
	json_array_foreach(recs, i, r)
		put_json(r);
	json_decref(recs);
	return close_stdout(rc);
}

json_t *index_status(const char *sub)
{
	char *av[] = { NULL, "status", NULL };
	struct buf out = BUF_INIT;
	json_t *status;
	int rc = capture(&out, "ci-index", av, NULL);

	status = rc ? NULL : json_loadb(out.buf, out.len, JSON_DISABLE_EOF_CHECK, NULL);
	buf_release(&out);
	if (!json_is_object(status) || !json_is_string(json_object_get(status, "root"))) {
		json_decref(status);
		fail("%s: no index (run 'ci reindex' first)", sub);
	}
	return status;
}

char *status_index_path(json_t *status)
{
	return index_default_path(json_string_value(json_object_get(status, "root")));
}

/*
 * NEEDSWORK: each search and patterns call reads the history again; on a big
 * repository the index's stored history (ci-couple history | ci-index load)
 * would be cheaper, once something keeps it up to date.
 */
json_t *git_commits(const char *since)
{
	char *av[] = { NULL, "--no-index", "--max-commits", "2000", "history", "--since", (char *)since, NULL };
	json_t *recs, *out = json_array(), *r;
	size_t i;
	int rc;

	if (!since)
		av[5] = NULL;
	recs = records_of("ci-couple", av, NULL, &rc);
	json_array_foreach(recs, i, r)
		if (!strcmp(ctx_str(r, "_type"), "commit"))
			json_array_append(out, r);
	json_decref(recs);
	return out;
}

void memory_open_or_fail(struct memory_store *ms)
{
	if (memory_store_open(ms, NULL))
		fail_said();
}

/* The imports of the index as {file: [package, ...]}; fails without an index. */
static json_t *index_imports(const char *sub)
{
	json_t *status = index_status(sub), *by_file;
	char *path = status_index_path(status);
	struct ci_index *ix = NULL;

	if (index_open(&ix, path, INDEX_READONLY))
		fail("%s: cannot open the index '%s'", sub, path);
	if (patterns_imports(&by_file, index_db(ix), sub))
		fail_said();
	index_close(ix);
	free(path);
	json_decref(status);
	return by_file;
}

json_t *patterns_of(const char *sub, const char *category)
{
	json_t *by_file = index_imports(sub), *commits = git_commits(NULL);
	json_t *out = patterns_compute(by_file, commits, category);

	json_decref(commits);
	json_decref(by_file);
	return out;
}
