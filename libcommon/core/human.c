/*
 * human.c: records for people (see human.h).
 *
 * The formatter knows the records a person reads most: search hits, matches,
 * occurrences of a symbol, impact, commits, couplings and hotspots; any other
 * record is one line of its keys and values.  A summary (and ci-couple's
 * commit_search) comes last, dimmed.  Nothing here changes what the commands compute: it is the same
 * stream, read back.
 */
#include "core/common.h"
#include "core/human.h"

#include <jansson.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define C_PATH "\033[35m"	/* as rg: paths magenta */
#define C_LINE "\033[32m"	/* line numbers green */
#define C_NAME "\033[1m"	/* names bold */
#define C_SHA "\033[33m"	/* as git log: hashes yellow */
#define C_DIM "\033[2m"
#define C_OFF "\033[0m"

int human_env_format(void)
{
	static const char *const words[] = { "text", "json", NULL };

	return env_choice("CI_FORMAT", words, -1, ENV_DIE);
}

int human_wanted(int json)
{
	if (json || human_env_format() == 1)
		return 0;
	return isatty(STDOUT_FILENO);
}

pid_t human_start(void)
{
	int fd[2];
	pid_t pid;

	fflush(stdout);
	if (pipe(fd) < 0)
		return 0;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return 0;
	}
	if (pid == 0) {
		FILE *in;
		const char *nc = getenv("NO_COLOR");

		close(fd[1]);
		in = fdopen(fd[0], "r");
		if (!in)
			_exit(EXIT_IO);
		human_format(in, stdout, !(nc && *nc));
		fclose(in);
		fflush(stdout);
		_exit(ferror(stdout) ? EXIT_IO : EXIT_OK);
	}
	close(fd[0]);
	if (dup2(fd[1], STDOUT_FILENO) < 0) {
		close(fd[1]);
		return 0;
	}
	close(fd[1]);
	return pid;
}

void human_finish(pid_t pid)
{
	if (pid <= 0)
		return;
	fflush(stdout);
	close(STDOUT_FILENO);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static const char *str(json_t *r, const char *k)
{
	const char *s = json_string_value(json_object_get(r, k));

	return s ? s : "";
}

static long num(json_t *r, const char *k)
{
	return (long)json_integer_value(json_object_get(r, k));
}

/* The heading of a file, when it is not the one of the record before. */
static void heading(FILE *out, int color, char **last, const char *path)
{
	if (*last && !strcmp(*last, path))
		return;
	fprintf(out, "%s%s%s%s\n", *last ? "\n" : "", color ? C_PATH : "", path, color ? C_OFF : "");
	free(*last);
	*last = xstrdup(path);
}

/* Up to max lines of text, indented, each cut to 160 bytes. */
static void excerpt(FILE *out, const char *text, int max)
{
	for (int n = 0; *text && n < max; n++) {
		size_t len = strcspn(text, "\n");
		fprintf(out, "    %.*s%s\n", (int)(len > 160 ? 160 : len), text, len > 160 ? "..." : "");
		text += len + (text[len] == '\n');
	}
}

/* Any record: its keys and values on one line. */
static void plain(FILE *out, json_t *r)
{
	const char *k;
	json_t *v;
	int first = 1;

	json_object_foreach(r, k, v) {
		char *s;

		if (!strcmp(k, "_type"))
			continue;
		s = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(4));
		fprintf(out, "%s%s: %s", first ? "" : "  ", k, s ? s : json_string_value(v));
		free(s);
		first = 0;
	}
	fputc('\n', out);
}

void human_format(FILE *in, FILE *out, int color)
{
	char *line = NULL, *last = NULL;
	size_t cap = 0;
	json_t *summary = NULL;
	const char *ln = color ? C_LINE : "", *nm = color ? C_NAME : "", *off = color ? C_OFF : "";

	while (getline(&line, &cap, in) > 0) {
		json_t *r = json_loads(line, JSON_ALLOW_NUL, NULL);
		const char *t = str(r, "_type");

		if (!json_is_object(r)) {
			fputs(line, out);	/* not a record: as it came */
			json_decref(r);
			continue;
		}
		if (!strcmp(t, "hit")) {
			heading(out, color, &last, str(r, "path"));
			fprintf(out, "%s%ld-%ld%s %s %s%s%s  %.3f\n", ln, num(r, "start_line"), num(r, "end_line"),
				off, str(r, "kind"), nm, str(r, "name"), off,
				json_number_value(json_object_get(r, "score")));
			excerpt(out, json_is_string(json_object_get(r, "signature")) ? str(r, "signature") :
				str(r, "text"), json_is_string(json_object_get(r, "signature")) ? 1 : 3);
		} else if (!strcmp(t, "match") || !strcmp(t, "occurrence")) {
			const char *text = !strcmp(t, "match") ? str(r, "text") : str(r, "snippet");
			heading(out, color, &last, str(r, "path"));
			fprintf(out, "%s%ld%s:", ln, num(r, "line"), off);
			if (!strcmp(t, "occurrence"))
				fprintf(out, " [%s]", str(r, "type"));
			fprintf(out, " %s\n", text);
		} else if (!strcmp(t, "commit")) {
			const char *msg = str(r, "message");
			char date[32] = "";
			time_t when = (time_t)num(r, "time");
			struct tm tm;
			if (when && gmtime_r(&when, &tm))
				strftime(date, sizeof(date), "%Y-%m-%d", &tm);
			fprintf(out, "%s%.10s%s %s %s  %.*s\n", color ? C_SHA : "", str(r, "sha"), off, date,
				str(r, "author"), (int)strcspn(msg, "\n"), msg);
		} else if (!strcmp(t, "summary") || !strcmp(t, "commit_search")) {
			json_decref(summary);
			summary = json_incref(r);
		} else {
			plain(out, r);
		}
		json_decref(r);
	}
	if (summary) {
		fputs(color ? C_DIM : "", out);
		if (last)
			fputc('\n', out);
		plain(out, summary);
		fputs(off, out);
		json_decref(summary);
	}
	free(last);
	free(line);
}
