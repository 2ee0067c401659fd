/*
 * ci: one command in front of the others, as git is.
 *
 *   ci search --query <q> [--intent <i>] [--limit <n>] [--lang <l>]   ci-rank
 *   ci status                                                         ci-index status
 *   ci reindex [--incremental]                                        ci-index build|update
 *   ci refs --symbol <name> [--limit <n>]                             ci-refs refs
 *   ci cycles [--scope <path>]                                        ci-refs cycles
 *   ci metadata                              ci-index status + package manifests
 *   ci memory list|add|remove                       .codebase-context/memory.json
 *   ci grep|index|rank|refs-raw|mcp <args>...       ci-grep, ci-index, ci-rank, ci-refs, ci-mcp
 *
 * The subcommands and their flags are those of the codebase-context CLI, so that
 * a script written against it works against ci: errors on stderr with exit code 1,
 * human-readable output on a terminal and --json (NDJSON records) for machines.
 * A mapped subcommand execs its program (found beside this binary first, then on
 * PATH, never through a shell); only on a terminal without --json does ci stay
 * and turn the records into lines of text.
 */
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <strings.h>
#include <limits.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <jansson.h>

static const char usage_text[] =
	"usage: ci [-h] <subcommand> [<args>]\n"
	"\n"
	"Subcommands (flags as in the codebase-context CLI; each takes --json):\n"
	"  search --query <q> [--intent explore|edit|refactor|migrate] [--limit <n>] [--lang <l>]\n"
	"                           ranked search (ci-rank)\n"
	"  metadata                 languages, file counts and dependencies (package.json,\n"
	"                           pyproject.toml, requirements.txt, go.mod, Cargo.toml)\n"
	"  status                   what the index holds (ci-index status)\n"
	"  reindex [--incremental]  build the index anew, or update it (ci-index)\n"
	"  refs --symbol <name> [--limit <n>]\n"
	"                           where a symbol is referenced (ci-refs refs)\n"
	"  cycles [--scope <path>]  import cycles (ci-refs cycles)\n"
	"  memory list [--category <c>] [--type <t>] [--query <q>]\n"
	"  memory add --type <t> --category <c> --memory <text> [--reason <r>]\n"
	"  memory remove <id>       the team memory in .codebase-context/memory.json\n"
	"  grep|index|rank|refs-raw|mcp <args>...\n"
	"                           run ci-grep, ci-index, ci-rank, ci-refs or ci-mcp\n"
	"  help                     show this help\n"
	"\n"
	"  -h, --help               show this help and exit\n";

#define MEMORY_FILE ".codebase-context/memory.json"

/* The programs of the pass-through subcommands. */
static const struct {
	const char *name;	/* the subcommand */
	const char *prog;	/* the program it runs */
} passthrough[] = {
	{ "grep", "ci-grep" },
	{ "index", "ci-index" },
	{ "rank", "ci-rank" },
	{ "refs-raw", "ci-refs" },
	{ "mcp", "ci-mcp" },
};

/* An error of a subcommand, as codebase-context reports it: stderr, exit 1. */
static void fail(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * The path of <prog> beside this binary when it is there and executable, else
 * <prog> itself (for execvp to find on PATH).  The caller frees the result.
 */
static char *find_prog(const char *prog)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash, *p;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			p = xasprintf("%s/%s", self, prog);
			if (!access(p, X_OK))
				return p;
			free(p);
		}
	}
	return xstrdup(prog);
}

/* Replace this process by <prog> with the arguments argv (argv[0] is set here). */
static void run_exec(const char *prog, char **argv) __attribute__((noreturn));
static void run_exec(const char *prog, char **argv)
{
	char *path = find_prog(prog);

	argv[0] = (char *)prog;
	fflush(stdout);
	execvp(path, argv);
	fprintf(stderr, "%s: cannot run '%s': %s\n", progname, path, strerror(errno));
	free(path);
	exit(1);
}

/* One record as a line of text: its scalar fields as key=value, the rest as JSON. */
static void print_human(json_t *rec)
{
	const char *key;
	json_t *v;
	int first = 1;

	if (!json_is_object(rec)) {
		char *s = json_dumps(rec, JSON_COMPACT | JSON_ENCODE_ANY);
		puts(s ? s : "");
		free(s);
		return;
	}
	json_object_foreach(rec, key, v) {
		char *s = NULL;

		if (!first)
			fputs("  ", stdout);
		first = 0;
		if (json_is_string(v))
			printf("%s: %s", key, json_string_value(v));
		else {
			s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
			printf("%s: %s", key, s ? s : "");
		}
		free(s);
	}
	putchar('\n');
}


/*
 * Start prog with argv, its standard output a pipe: the pid, and the pipe's
 * reading end in *rfd.  Dies on failure.
 */
static pid_t spawn_reading(const char *prog, char **argv, int *rfd)
{
	int fd[2];
	pid_t pid;

	if (pipe(fd) < 0)
		die_code(EXIT_IO, "cannot create a pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die_code(EXIT_IO, "cannot fork: %s", strerror(errno));
	if (!pid) {
		close(fd[0]);
		if (dup2(fd[1], STDOUT_FILENO) < 0)
			_exit(1);
		close(fd[1]);
		run_exec(prog, argv);
	}
	close(fd[1]);
	*rfd = fd[0];
	return pid;
}
/*
 * Run <prog> with argv; with json, exec it (its NDJSON is the output); else read
 * its records and write each as a line of text.  Returns its exit status.
 */
static int run(const char *prog, char **argv, int json)
{
	int rfd, status, ret;
	pid_t pid;
	FILE *in;
	char *line = NULL;
	size_t cap = 0;

	if (json || !isatty(STDOUT_FILENO))
		run_exec(prog, argv);
	pid = spawn_reading(prog, argv, &rfd);
	in = fdopen(rfd, "r");
	if (!in)
		die_code(EXIT_IO, "cannot read from %s: %s", prog, strerror(errno));
	while (getline(&line, &cap, in) > 0) {
		json_error_t err;
		json_t *rec = json_loads(line, JSON_DECODE_ANY, &err);

		if (rec)
			print_human(rec);
		else
			fputs(line, stdout);
		json_decref(rec);
	}
	free(line);
	fclose(in);
	if (waitpid(pid, &status, 0) < 0)
		die_code(EXIT_IO, "cannot wait for %s: %s", prog, strerror(errno));
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	return close_stdout(ret);
}

/* ---- the arguments of a subcommand -------------------------------------------- */

/* The flags one subcommand accepts, and what it was given. */
struct flags {
	const char *sub;		/* the subcommand, for messages */
	const char *const *names;	/* the flags that take a value (without --) */
	const char *values[8];		/* their values, NULL when not given */
	const char *const *bools;	/* the flags without a value */
	int set[8];			/* whether each was given */
	const char *args[4];		/* the positional arguments */
	int args_nr;			/* how many */
};

static int flag_index(const char *const *list, const char *name, size_t len)
{
	int i;

	for (i = 0; list && list[i]; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], name, len))
			return i;
	return -1;
}

/* Parse argv (after the subcommand) into f; an unknown flag fails (exit 1). */
static void parse_flags(struct flags *f, int argc, char **argv)
{
	int i, k;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq;
		size_t len;

		if (a[0] != '-' || a[1] != '-' || !a[2]) {
			if (f->args_nr >= (int)ARRAY_SIZE(f->args))
				fail("%s: too many arguments", f->sub);
			f->args[f->args_nr++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		if ((k = flag_index(f->names, a, len)) >= 0) {
			if (eq)
				f->values[k] = eq + 1;
			else if (i + 1 < argc)
				f->values[k] = argv[++i];
			else
				fail("%s: option '--%s' needs a value", f->sub, a);
		} else if (!eq && (k = flag_index(f->bools, a, len)) >= 0) {
			f->set[k] = 1;
		} else {
			fail("%s: unknown option '--%.*s'", f->sub, (int)len, a);
		}
	}
}

/* A --limit value: a whole number from 1 to max, or fail. */
static const char *check_limit(const char *sub, const char *s, long max)
{
	char *end;
	long n;

	errno = 0;
	n = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || *end || end == s || n < 1 || n > max)
		fail("%s: --limit must be a whole number from 1 to %ld, not '%s'", sub, max,
		     s ? s : "");
	return s;
}

/* ---- the mapped subcommands ----------------------------------------------------- */

static int cmd_search(int argc, char **argv)
{
	static const char *const names[] = { "query", "intent", "limit", "lang", "framework", "layer", NULL };
	static const char *const bools[] = { "json", NULL };
	static const char *const intents[] = { "explore", "edit", "refactor", "migrate" };
	struct flags f = { .sub = "search", .names = names, .bools = bools };
	char *av[12];
	int n = 1;
	size_t i;

	parse_flags(&f, argc, argv);
	if (f.args_nr)
		fail("search: unexpected argument '%s' (use --query)", f.args[0]);
	if (!f.values[0] || !*f.values[0])
		fail("search: --query is required");
	if (f.values[1]) {
		for (i = 0; i < ARRAY_SIZE(intents); i++)
			if (!strcmp(f.values[1], intents[i]))
				break;
		if (i == ARRAY_SIZE(intents))
			fail("search: --intent must be explore, edit, refactor or migrate, not '%s'",
			     f.values[1]);
	}
	if (f.values[4] || f.values[5])
		fail("search: --%s is not supported (ci knows no frameworks or layers)",
		     f.values[4] ? "framework" : "layer");
	if (f.values[2]) {
		av[n++] = "--limit";
		av[n++] = (char *)check_limit("search", f.values[2], 200);
	}
	if (f.values[3]) {
		av[n++] = "--lang";
		av[n++] = (char *)f.values[3];
	}
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	return run("ci-rank", av, f.set[0]);
}

static int cmd_status(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "status", .bools = bools };
	char *av[] = { NULL, "status", NULL };

	parse_flags(&f, argc, argv);
	if (f.args_nr)
		fail("status: unexpected argument '%s'", f.args[0]);
	return run("ci-index", av, f.set[0]);
}

static int cmd_reindex(int argc, char **argv)
{
	static const char *const names[] = { "reason", NULL };
	static const char *const bools[] = { "json", "incremental", NULL };
	struct flags f = { .sub = "reindex", .names = names, .bools = bools };
	char *av[] = { NULL, NULL, NULL };

	parse_flags(&f, argc, argv);
	if (f.args_nr)
		fail("reindex: unexpected argument '%s'", f.args[0]);
	av[1] = f.set[1] ? "update" : "build";
	return run("ci-index", av, f.set[0]);
}

static int cmd_refs(int argc, char **argv)
{
	static const char *const names[] = { "symbol", "limit", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "refs", .names = names, .bools = bools };
	char *av[8];
	int n = 1;

	parse_flags(&f, argc, argv);
	if (f.args_nr)
		fail("refs: unexpected argument '%s' (use --symbol)", f.args[0]);
	if (!f.values[0] || !*f.values[0])
		fail("refs: --symbol is required");
	if (f.values[1]) {
		av[n++] = "--limit";
		av[n++] = (char *)check_limit("refs", f.values[1], 10000);
	}
	av[n++] = "refs";
	av[n++] = "--";
	av[n++] = (char *)f.values[0];
	av[n] = NULL;
	return run("ci-refs", av, f.set[0]);
}

static int cmd_cycles(int argc, char **argv)
{
	static const char *const names[] = { "scope", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "cycles", .names = names, .bools = bools };
	char *av[6];
	int n = 1;

	parse_flags(&f, argc, argv);
	if (f.args_nr)
		fail("cycles: unexpected argument '%s' (use --scope)", f.args[0]);
	if (f.values[0]) {
		av[n++] = "--scope";
		av[n++] = (char *)f.values[0];
	}
	av[n++] = "cycles";
	av[n] = NULL;
	return run("ci-refs", av, f.set[0]);
}

/* ---- memory ----------------------------------------------------------------------- */

static const char *const memory_types[] = { "convention", "decision", "gotcha", "failure", NULL };

/* The memories of .codebase-context/memory.json (an empty array when there is none). */
static json_t *memory_load(void)
{
	json_error_t err;
	json_t *all;

	if (access(MEMORY_FILE, F_OK) && errno == ENOENT)
		return json_array();
	all = json_load_file(MEMORY_FILE, 0, &err);
	if (!all)
		fail("memory: %s:%d: %s", MEMORY_FILE, err.line, err.text);
	if (!json_is_array(all)) {
		json_decref(all);
		fail("memory: %s: expected a JSON array", MEMORY_FILE);
	}
	return all;
}

/* Write the memories back (through a temporary file and a rename); steals all. */
static void memory_save(json_t *all)
{
	const char *tmp = MEMORY_FILE ".tmp";

	if (mkdir(".codebase-context", 0777) && errno != EEXIST) {
		json_decref(all);
		fail("memory: cannot create '.codebase-context': %s", strerror(errno));
	}
	if (json_dump_file(all, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	    rename(tmp, MEMORY_FILE)) {
		json_decref(all);
		unlink(tmp);
		fail("memory: cannot write '%s'", MEMORY_FILE);
	}
	json_decref(all);
}

/* A case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return !n;
}

static const char *str_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int memory_list(struct flags *f)
{
	json_t *all = memory_load(), *m, *out = json_array();
	size_t i;

	json_array_foreach(all, i, m) {
		if (f->values[0] && strcmp(str_field(m, "category"), f->values[0]))
			continue;
		if (f->values[1] && strcmp(str_field(m, "type"), f->values[1]))
			continue;
		if (f->values[2] && !contains_ci(str_field(m, "memory"), f->values[2]) &&
		    !contains_ci(str_field(m, "reason"), f->values[2]))
			continue;
		json_array_append(out, m);
	}
	json_array_foreach(out, i, m) {
		if (f->set[0]) {
			char *s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);

			puts(s ? s : "");
			free(s);
		} else {
			printf("%s  [%s] %s: %s\n", str_field(m, "id"), str_field(m, "type"),
			       str_field(m, "category"), str_field(m, "memory"));
		}
	}
	if (!f->set[0] && !json_array_size(out))
		puts("no memories");
	json_decref(out);
	json_decref(all);
	return close_stdout(0);
}

static int memory_add(struct flags *f)
{
	const char *type = f->values[1], *category = f->values[0], *text = f->values[3];
	const char *reason = f->values[4] ? f->values[4] : "";
	json_t *all, *m;
	uint64_t h = 1469598103934665603ULL;
	char id[17], date[32];
	time_t now = time(NULL);
	struct tm tm;
	const char *p;
	int i;

	if (!type || !category || !text || !*text)
		fail("memory add: --type, --category and --memory are required");
	for (i = 0; memory_types[i]; i++)
		if (!strcmp(type, memory_types[i]))
			break;
	if (!memory_types[i])
		fail("memory add: --type must be convention, decision, gotcha or failure, not '%s'",
		     type);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* the id: FNV-1a of what the memory says, so that the same memory is the same id */
	for (p = type; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (p = category; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (p = text; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	snprintf(id, sizeof(id), "%016llx", (unsigned long long)h);
	all = memory_load();
	{
		size_t k;
		json_t *old;

		json_array_foreach(all, k, old)
			if (!strcmp(str_field(old, "id"), id)) {
				json_decref(all);
				fail("memory add: the same memory is there already (%s)", id);
			}
	}
	m = json_object();
	json_object_set_new(m, "id", json_string(id));
	json_object_set_new(m, "type", json_string(type));
	json_object_set_new(m, "category", json_string(category));
	json_object_set_new(m, "memory", json_string(text));
	json_object_set_new(m, "reason", json_string(reason));
	json_object_set_new(m, "date", json_string(date));
	json_array_append(all, m);
	memory_save(all);
	if (f->set[0]) {
		char *s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);

		puts(s ? s : "");
		free(s);
	} else {
		printf("remembered %s\n", id);
	}
	json_decref(m);
	return close_stdout(0);
}

static int memory_remove(struct flags *f)
{
	json_t *all, *m;
	size_t i;

	if (f->args_nr != 2)
		fail("memory remove: give one <id>");
	all = memory_load();
	json_array_foreach(all, i, m)
		if (!strcmp(str_field(m, "id"), f->args[1]))
			break;
	if (i == json_array_size(all)) {
		json_decref(all);
		fail("memory remove: no memory '%s'", f->args[1]);
	}
	json_array_remove(all, i);
	memory_save(all);
	if (f->set[0]) {
		json_t *r = json_pack("{s:s}", "removed", f->args[1]);
		char *s = json_dumps(r, JSON_COMPACT);

		puts(s ? s : "");
		free(s);
		json_decref(r);
	} else
		printf("removed %s\n", f->args[1]);
	return close_stdout(0);
}

static int cmd_memory(int argc, char **argv)
{
	static const char *const names[] = { "category", "type", "query", "memory", "reason", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "memory", .names = names, .bools = bools };
	const char *verb;

	parse_flags(&f, argc, argv);
	verb = f.args_nr ? f.args[0] : "";
	if (!strcmp(verb, "list")) {
		if (f.args_nr != 1 || f.values[3] || f.values[4])
			fail("memory list: takes --category, --type, --query and --json only");
		if (f.values[1] && flag_index(memory_types, f.values[1], strlen(f.values[1])) < 0)
			fail("memory list: --type must be convention, decision, gotcha or failure, not '%s'",
			     f.values[1]);
		return memory_list(&f);
	}
	if (!strcmp(verb, "add")) {
		if (f.args_nr != 1 || f.values[2])
			fail("memory add: takes --type, --category, --memory, --reason and --json only");
		return memory_add(&f);
	}
	if (!strcmp(verb, "remove"))
		return memory_remove(&f);
	fail("memory: expected list, add or remove%s%s", *verb ? ", not " : "", verb);
}

/* ---- metadata ----------------------------------------------------------------------- */

/*
 * Run <prog> with argv and read all it writes on stdout into out (a buf the caller
 * releases).  Returns its exit status.
 */
static int capture(struct buf *out, const char *prog, char **argv)
{
	int rfd, status;
	pid_t pid;
	char chunk[8192];
	ssize_t n;

	pid = spawn_reading(prog, argv, &rfd);
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

/* Append {manifest, name, version} to deps; a blank name is skipped. */
static void add_dep(json_t *deps, const char *manifest, const char *name, size_t name_len,
		    const char *version)
{
	char *n, *v;
	size_t v_len;

	while (name_len && (name[name_len - 1] == ' ' || name[name_len - 1] == '\t'))
		name_len--;
	if (!name_len)
		return;
	if (!version)
		version = "";
	version += strspn(version, " \t");
	v_len = strcspn(version, "\"'");	/* a quoted requirement ends at its quote */
	while (v_len && (version[v_len - 1] == ' ' || version[v_len - 1] == '\t'))
		v_len--;
	n = xstrndup(name, name_len);
	v = xstrndup(version, v_len);
	json_array_append_new(deps, json_pack("{s:s,s:s,s:s}", "manifest", manifest, "name", n,
					      "version", v));
	free(n);
	free(v);
}

/* package.json: the keys of dependencies and devDependencies. */
static void deps_package_json(json_t *deps)
{
	static const char *const sections[] = { "dependencies", "devDependencies" };
	json_t *pkg = json_load_file("package.json", 0, NULL), *v;
	const char *key;
	size_t i;

	if (!pkg)
		return;
	for (i = 0; i < ARRAY_SIZE(sections); i++)
		json_object_foreach(json_object_get(pkg, sections[i]), key, v)
			add_dep(deps, "package.json", key, strlen(key), json_string_value(v));
	json_decref(pkg);
}

/* The end of a requirement's name: "requests>=2 ; python_version..." */
static size_t req_name_len(const char *s)
{
	return strcspn(s, "=<>!~[; \t\"'@,");
}

/*
 * The text manifests, read a line at a time (no TOML parser in the tree):
 * requirements.txt lines, go.mod require lines, Cargo.toml [*dependencies] keys,
 * pyproject.toml's dependencies = [...] strings and [tool.poetry.*dependencies] keys.
 */
static void deps_text(json_t *deps, const char *manifest)
{
	FILE *fp = fopen(manifest, "r");
	char *line = NULL;
	size_t cap = 0;
	int in_section = 0, in_array = 0, in_require = 0;

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *e;

		s[strcspn(s, "\r\n")] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (!strcmp(manifest, "requirements.txt")) {
			s[strcspn(s, ";#")] = '\0';	/* no environment markers, no comment */
			if (*s != '-')
				add_dep(deps, manifest, s, req_name_len(s), s + req_name_len(s));
		} else if (!strcmp(manifest, "go.mod")) {
			if (in_require && *s == ')') {
				in_require = 0;
			} else if (!strncmp(s, "require (", 9) || !strcmp(s, "require(")) {
				in_require = 1;
			} else if (in_require || !strncmp(s, "require ", 8)) {
				if (!in_require)
					s += 8;
				e = s + strcspn(s, " \t");
				e += strspn(e, " \t");
				e[strcspn(e, " \t")] = '\0';	/* no "// indirect" */
				add_dep(deps, manifest, s, strcspn(s, " \t"), e);
			}
		} else if (*s == '[' && !in_array) {
			e = strchr(s, ']');
			in_section = e && (size_t)(e - s) >= 13 &&
				     !strncmp(e - 12, "dependencies", 12);
		} else if (in_array) {
			if (*s == ']')
				in_array = 0;
			else if (*s == '"' || *s == '\'')
				add_dep(deps, manifest, s + 1, req_name_len(s + 1),
					s + 1 + req_name_len(s + 1));
		} else if (!strcmp(manifest, "pyproject.toml") && !strncmp(s, "dependencies", 12) &&
			   strchr(s, '[') && !in_section) {
			char *q = strchr(s, '[') + 1;

			in_array = !strchr(q, ']');
			while ((q = strpbrk(q, "\"'")) != NULL) {
				add_dep(deps, manifest, q + 1, req_name_len(q + 1),
					q + 1 + req_name_len(q + 1));
				q = strpbrk(q + 1, "\"'");
				if (!q)
					break;
				q++;
			}
		} else if (in_section && (e = strchr(s, '=')) != NULL) {
			char *v = e + 1, *ve;

			while (*v == ' ')
				v++;
			if (*v == '{') {	/* serde = { version = "1", ... } */
				ve = strstr(v, "version");
				v = ve ? ve + 7 + strspn(ve + 7, " =") : (char *)"";
			}
			while (*v == '"' || *v == '\'')
				v++;
			ve = v + strcspn(v, "\"'");
			if (*ve)
				*ve = '\0';
			if (strncmp(s, "python", 6) || (e - s != 6 && s[6] != ' '))
				add_dep(deps, manifest, s, e - s, v);
		}
	}
	free(line);
	fclose(fp);
}

static int cmd_metadata(int argc, char **argv)
{
	static const char *const bools[] = { "json", NULL };
	static const char *const manifests[] = { "requirements.txt", "pyproject.toml", "go.mod",
						 "Cargo.toml" };
	struct flags f = { .sub = "metadata", .bools = bools };
	char *av[] = { NULL, "status", NULL };
	struct buf out = BUF_INIT;
	json_t *status, *meta, *deps, *v;
	const char *key;
	size_t i;
	int rc;

	parse_flags(&f, argc, argv);
	if (f.args_nr)
		fail("metadata: unexpected argument '%s'", f.args[0]);
	rc = capture(&out, "ci-index", av);
	status = rc ? NULL : json_loadb(out.buf, out.len, JSON_DISABLE_EOF_CHECK, NULL);
	buf_release(&out);
	if (!json_is_object(status)) {
		json_decref(status);
		fail("metadata: no index status (run 'ci reindex' first)");
	}
	deps = json_array();
	deps_package_json(deps);
	for (i = 0; i < ARRAY_SIZE(manifests); i++)
		deps_text(deps, manifests[i]);
	meta = json_pack("{s:s,s:O,s:O,s:O,s:O,s:O,s:o}", "_type", "metadata",
			 "root", json_object_get(status, "root"),
			 "files", json_object_get(status, "files"),
			 "chunks", json_object_get(status, "chunks"),
			 "languages", json_object_get(status, "languages"),
			 "commit", json_object_get(status, "commit"),
			 "dependencies", deps);
	json_decref(status);
	if (!meta)
		fail("metadata: the index status lacks a field");
	if (f.set[0] || !isatty(STDOUT_FILENO)) {
		char *s = json_dumps(meta, JSON_COMPACT | JSON_PRESERVE_ORDER);

		puts(s ? s : "");
		free(s);
	} else {
		printf("root: %s\nfiles: %lld\n", json_string_value(json_object_get(meta, "root")),
		       (long long)json_integer_value(json_object_get(meta, "files")));
		json_object_foreach(json_object_get(meta, "languages"), key, v)
			printf("language: %s (%lld files)\n", key, (long long)json_integer_value(v));
		json_array_foreach(json_object_get(meta, "dependencies"), i, v)
			printf("dependency: %s %s (%s)\n", str_field(v, "name"), str_field(v, "version"),
			       str_field(v, "manifest"));
	}
	json_decref(meta);
	return close_stdout(0);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *sub;
	size_t i;

	util_init(argv[0]);
	if (argc < 2) {
		fputs(usage_text, stderr);
		return 1;
	}
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		fputs(usage_text, stdout);
		return close_stdout(EXIT_OK);
	}
	if (sub[0] == '-')
		usage_error(usage_text, "unknown option '%s'", sub);
	for (i = 0; i < ARRAY_SIZE(passthrough); i++)
		if (!strcmp(sub, passthrough[i].name))
			run_exec(passthrough[i].prog, argv + 1);
	if (!strcmp(sub, "search"))
		return cmd_search(argc - 2, argv + 2);
	if (!strcmp(sub, "status"))
		return cmd_status(argc - 2, argv + 2);
	if (!strcmp(sub, "reindex"))
		return cmd_reindex(argc - 2, argv + 2);
	if (!strcmp(sub, "refs"))
		return cmd_refs(argc - 2, argv + 2);
	if (!strcmp(sub, "cycles"))
		return cmd_cycles(argc - 2, argv + 2);
	if (!strcmp(sub, "metadata"))
		return cmd_metadata(argc - 2, argv + 2);
	if (!strcmp(sub, "memory"))
		return cmd_memory(argc - 2, argv + 2);
	fprintf(stderr, "%s: unknown subcommand '%s'\n", progname, sub);
	fputs(usage_text, stderr);
	return 1;
}
