/*
 * ci-mcp: a Model Context Protocol server over stdio that serves ci's commands
 * as tools.
 *
 * The tools are data: a table in share/mcp/<profile>.json (compiled in, so the
 * server works uninstalled) gives each tool its name, description, JSON Schema
 * and the argv of the command that answers it, as groups of elements where a
 * "{param}" element is replaced by the parameter's value as one whole argv
 * element (never through a shell) and a group whose parameters are absent is
 * left out.  The command's NDJSON records become the result's structuredContent
 * ({"results": [...]}) and a text block; its exit status 1 is "nothing found",
 * 2 and 3 are tool errors with its message.
 *
 * Protocol: JSON-RPC 2.0, one message a line on stdin/stdout (stdout carries
 * nothing else); initialize with version negotiation, notifications/initialized,
 * ping, tools/list, tools/call, logging/setLevel.
 *
 * NEEDSWORK: requests are served one at a time; the Streamable HTTP transport,
 * cancellation, progress notifications and the other profiles are not done yet.
 */
#include "common.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

extern const char ci_mcp_profile_ci[];

static const char usage_text[] =
	"usage: ci-mcp [options]\n"
	"\n"
	"Serve ci's commands as MCP tools over standard input and output (JSON-RPC 2.0,\n"
	"one message a line), for the repository containing the current directory.\n"
	"\n"
	"      --list-tools        print the tool table as JSON and exit\n"
	"      --timeout <s>       time limit of one tool call (1-3600; default 120)\n"
	"      --max-output <n>    cap on one result's bytes (1024-67108864; default 1048576)\n"
	"  -v, --verbose           log requests on stderr\n"
	"  -h, --help              show this help and exit\n";

enum { OPT_LIST = 256, OPT_TIMEOUT, OPT_MAX_OUTPUT };

static const struct option long_options[] = {
	{ "list-tools", no_argument, NULL, OPT_LIST },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const char *const versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

static json_t *table;		/* the profile */
static char *root;		/* repository root */
static char *bindir;		/* where this program is: the commands are beside it */
static long timeout_s = 120;
static size_t max_output = 1 << 20;
static time_t last_update;	/* last `ci-index update` */

/* ---- JSON-RPC output ---- */

static void send_json(json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));

	if (!s)
		die("cannot encode a response");
	fputs(s, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	if (ferror(stdout))
		exit(EXIT_IO);
	free(s);
}

static void reply(json_t *id, json_t *result)
{
	json_t *m = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result", result);

	send_json(m);
	json_decref(m);
}

static void reply_error(json_t *id, int code, const char *msg)
{
	json_t *m = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			      "error", "code", code, "message", msg);

	send_json(m);
	json_decref(m);
}

/* A tool result that is an error the model should see (isError). */
static json_t *tool_error(const char *fmt, ...) CI_PRINTF(1, 2);
static json_t *tool_error(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	json_t *r;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", b.buf, "isError", 1);
	buf_release(&b);
	return r;
}

/* ---- validation against the tool's schema (the subset the tables use) ---- */

static char *validate(json_t *schema, json_t *args)
{
	json_t *props = json_object_get(schema, "properties"), *req = json_object_get(schema, "required");
	const char *k;
	json_t *v;
	size_t i;

	if (!json_is_object(args))
		return xstrdup("arguments must be an object");
	json_array_foreach(req, i, v) {
		if (!json_object_get(args, json_string_value(v)))
			return xasprintf("missing required parameter '%s'", json_string_value(v));
	}
	json_object_foreach(args, k, v) {
		json_t *p = json_object_get(props, k);
		const char *type;

		if (!p)
			return xasprintf("unknown parameter '%s'", k);
		type = json_string_value(json_object_get(p, "type"));
		if (!strcmp(type, "string")) {
			json_t *en = json_object_get(p, "enum"), *e;
			size_t j;
			int ok = !en;
			if (!json_is_string(v))
				return xasprintf("parameter '%s' must be a string", k);
			if (json_is_integer(json_object_get(p, "minLength")) &&
			    json_string_length(v) < (size_t)json_integer_value(json_object_get(p, "minLength")))
				return xasprintf("parameter '%s' must not be empty", k);
			json_array_foreach(en, j, e)
				ok |= json_equal(e, v);
			if (!ok) {
				char *allowed = json_dumps(en, JSON_COMPACT);
				char *m = xasprintf("parameter '%s' must be one of %s", k, allowed);
				free(allowed);
				return m;
			}
		} else if (!strcmp(type, "integer") || !strcmp(type, "number")) {
			json_t *mn = json_object_get(p, "minimum"), *mx = json_object_get(p, "maximum");
			double x;
			if (!strcmp(type, "integer") ? !json_is_integer(v) : !json_is_number(v))
				return xasprintf("parameter '%s' must be %s", k,
						 !strcmp(type, "integer") ? "an integer" : "a number");
			x = json_number_value(v);
			if ((mn && x < json_number_value(mn)) || (mx && x > json_number_value(mx)))
				return xasprintf("parameter '%s' must be from %g to %g, got %g", k,
						 mn ? json_number_value(mn) : -1e300, mx ? json_number_value(mx) : 1e300, x);
		} else if (!strcmp(type, "boolean")) {
			if (!json_is_boolean(v))
				return xasprintf("parameter '%s' must be true or false", k);
		}
	}
	return NULL;
}

/*
 * Resolve a client's path against the repository root; refuse what leaves it
 * (.., an absolute path elsewhere, a symlink out).  Returns a malloc'd
 * root-relative path, or NULL with *why set.
 */
static char *confine(const char *p, const char **why)
{
	char *abs = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", root, p);
	char *real = realpath(abs, NULL);
	size_t rl = strlen(root);
	char *rel = NULL;

	free(abs);
	if (!real) {
		*why = "does not exist";
		return NULL;
	}
	if (!strcmp(real, root))
		rel = xstrdup(".");
	else if (!strncmp(real, root, rl) && real[rl] == '/')
		rel = xstrdup(real + rl + 1);
	else
		*why = "is outside the repository";
	free(real);
	return rel;
}

/* The value of a parameter as an argv element, or NULL (absent, or false). */
static char *param_text(json_t *args, json_t *schema, const char *name, int *is_bool)
{
	json_t *v = json_object_get(args, name);
	json_t *p = json_object_get(json_object_get(schema, "properties"), name);

	*is_bool = 0;
	if (!v && p)
		v = json_object_get(p, "default");
	if (!v || json_is_null(v))
		return NULL;
	if (json_is_boolean(v)) {
		*is_bool = 1;
		return json_is_true(v) ? xstrdup("") : NULL;
	}
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v))
		return xasprintf("%.17g", json_real_value(v));
	return NULL;
}

/* Build argv from groups of elements; returns a NULL-terminated malloc'd vector. */
static char **build_argv(json_t *groups, json_t *args, json_t *schema)
{
	char **argv = NULL;
	size_t nr = 0, alloc = 0, i, j;
	json_t *g, *e;

	json_array_foreach(groups, i, g) {
		char *vals[16];
		size_t nv = 0;
		int skip = 0;

		json_array_foreach(g, j, e) {
			const char *s = json_string_value(e);
			size_t l = strlen(s);
			if (nv >= ARRAY_SIZE(vals))
				break;
			if (l > 2 && s[0] == '{' && s[l - 1] == '}') {
				char *name = xstrndup(s + 1, l - 2);
				int is_bool;
				char *val = param_text(args, schema, name, &is_bool);
				free(name);
				if (!val) {
					skip = 1;
					break;
				}
				if (is_bool) {
					free(val);
					continue;	/* a flag: the group's other elements say it */
				}
				vals[nv++] = val;
			} else {
				vals[nv++] = xstrdup(s);
			}
		}
		for (j = 0; j < nv; j++) {
			if (skip) {
				free(vals[j]);
				continue;
			}
			ALLOC_GROW(argv, nr + 2, alloc);
			argv[nr++] = vals[j];
		}
	}
	ALLOC_GROW(argv, nr + 1, alloc);
	argv[nr] = NULL;
	return argv;
}

static void free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/*
 * Run argv (argv[0] a ci command, found beside this program or on PATH) in the
 * repository root; collect stdout (up to max_output bytes) and stderr.
 * Returns the exit status, 124 on timeout, -1 if it could not start.
 */
static int run(char **argv, struct buf *out, struct buf *err, int *truncated)
{
	int po[2], pe[2], status = 0;
	pid_t pid;
	time_t deadline = time(NULL) + timeout_s;
	struct pollfd fds[2];
	char tmp[65536];
	int open_fds = 2, timed_out = 0;

	*truncated = 0;
	if (pipe(po) < 0 || pipe(pe) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *exe = xasprintf("%s/%s", bindir, argv[0]);
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		if (chdir(root) < 0)
			_exit(126);
		setpgid(0, 0);
		if (access(exe, X_OK) == 0)
			execv(exe, argv);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	fds[0].fd = po[0];
	fds[1].fd = pe[0];
	fds[0].events = fds[1].events = POLLIN;
	while (open_fds) {
		int left = (int)(deadline - time(NULL)), rc;
		if (left <= 0) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		rc = poll(fds, 2, left * 1000);
		if (rc < 0 && errno == EINTR)
			continue;
		for (int k = 0; k < 2; k++) {
			ssize_t n;
			if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(fds[k].fd, tmp, sizeof(tmp));
			if (n <= 0) {
				close(fds[k].fd);
				fds[k].fd = -1;
				open_fds--;
				continue;
			}
			if (k == 0) {
				if (out->len + (size_t)n > max_output) {
					*truncated = 1;
					buf_add(out, tmp, max_output > out->len ? max_output - out->len : 0);
					kill(-pid, SIGKILL);
					kill(pid, SIGKILL);
				} else {
					buf_add(out, tmp, (size_t)n);
				}
			} else if (err->len < 65536) {
				buf_add(err, tmp, (size_t)n);
			}
		}
	}
	for (int k = 0; k < 2; k++)
		if (fds[k].fd >= 0)
			close(fds[k].fd);
	waitpid(pid, &status, 0);
	if (timed_out)
		return 124;
	if (*truncated)
		return 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Keep the index fresh for tools that read it: update at most every 10 seconds. */
static void ensure_index(void)
{
	char *argv[] = { "ci-index", "--no-progress", "update", NULL };
	struct buf o = BUF_INIT, e = BUF_INIT;
	int t;

	if (last_update && time(NULL) - last_update < 10)
		return;
	if (run(argv, &o, &e, &t) != 0 && verbosity)
		fprintf(stderr, "%s: ci-index update: %s", progname, e.buf);
	last_update = time(NULL);
	buf_release(&o);
	buf_release(&e);
}

static json_t *builtin_read(json_t *args, json_t *schema)
{
	const char *why = NULL;
	char *rel = confine(json_string_value(json_object_get(args, "path")), &why), *abs, *data;
	size_t n, line = 1;
	long start, end, ctx;
	struct buf text = BUF_INIT;
	json_t *lines, *r;
	const char *p, *e;

	(void)schema;
	if (!rel)
		return tool_error("parameter 'path': '%s' %s", json_string_value(json_object_get(args, "path")), why);
	abs = xasprintf("%s/%s", root, rel);
	if (read_file(abs, &data, &n) < 0) {
		free(abs);
		r = tool_error("parameter 'path': cannot read '%s': %s", rel, strerror(errno));
		free(rel);
		return r;
	}
	free(abs);
	if (memchr(data, '\0', n < 8000 ? n : 8000)) {
		free(data);
		r = tool_error("parameter 'path': '%s' is a binary file", rel);
		free(rel);
		return r;
	}
	ctx = json_integer_value(json_object_get(args, "context"));
	start = json_is_integer(json_object_get(args, "start_line")) ?
		(long)json_integer_value(json_object_get(args, "start_line")) : 1;
	end = json_is_integer(json_object_get(args, "end_line")) ?
	      (long)json_integer_value(json_object_get(args, "end_line")) : 0;
	if (end && end < start) {
		free(data);
		free(rel);
		return tool_error("parameter 'end_line' (%ld) is before 'start_line' (%ld)", end, start);
	}
	start = start - ctx > 1 ? start - ctx : 1;
	if (end)
		end += ctx;
	lines = json_array();
	for (p = data; p < data + n; p = e + 1, line++) {
		e = memchr(p, '\n', (size_t)(data + n - p));
		if (!e)
			e = data + n;
		if ((long)line < start)
			continue;
		if (end && (long)line > end)
			break;
		buf_addf(&text, "%6zu\t", line);
		buf_add(&text, p, (size_t)(e - p));
		buf_addch(&text, '\n');
		if (text.len > max_output)
			break;
	}
	json_decref(lines);
	r = json_pack("{s:[{s:s, s:s}], s:{s:s, s:i, s:i, s:s%}}",
		      "content", "type", "text", "text", text.buf,
		      "structuredContent", "path", rel, "start_line", (json_int_t)start,
		      "end_line", (json_int_t)(line - 1), "text", text.buf, text.len);
	buf_release(&text);
	free(data);
	free(rel);
	return r;
}

static json_t *find_tool(const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(table, "tools"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")), name))
			return t;
	return NULL;
}

/* Which argv groups serve these arguments ("when": "param" or "param=value"). */
static json_t *pick_argv(json_t *tool, json_t *args)
{
	json_t *vars = json_object_get(tool, "variants"), *v;
	size_t i;

	if (!vars)
		return json_object_get(tool, "argv");
	json_array_foreach(vars, i, v) {
		const char *when = json_string_value(json_object_get(v, "when"));
		if (!when)
			return json_object_get(v, "argv");
		const char *eq = strchr(when, '=');
		if (eq) {
			char *k = xstrndup(when, (size_t)(eq - when));
			json_t *a = json_object_get(args, k);
			free(k);
			if (json_is_string(a) && !strcmp(json_string_value(a), eq + 1))
				return json_object_get(v, "argv");
		} else if (json_object_get(args, when)) {
			return json_object_get(v, "argv");
		}
	}
	return NULL;
}

static json_t *call_tool(json_t *tool, json_t *args)
{
	json_t *schema = json_object_get(tool, "inputSchema"), *groups, *results, *r, *props;
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *why, **argv;
	const char *k;
	json_t *v;
	int status, truncated;

	if (!args)
		args = json_object();
	else
		json_incref(args);
	if ((why = validate(schema, args))) {
		r = tool_error("%s", why);
		free(why);
		json_decref(args);
		return r;
	}
	/* parameters that are paths stay inside the repository */
	props = json_object_get(schema, "properties");
	json_object_foreach(args, k, v) {
		const char *fmt = json_string_value(json_object_get(json_object_get(props, k), "format"));
		if (fmt && !strcmp(fmt, "path") && json_is_string(v)) {
			const char *w = NULL;
			char *rel = confine(json_string_value(v), &w);
			if (!rel) {
				r = tool_error("parameter '%s': '%s' %s", k, json_string_value(v), w);
				json_decref(args);
				return r;
			}
			json_object_set_new(args, k, json_string(rel));
			free(rel);
		}
	}
	if (json_is_string(json_object_get(tool, "builtin"))) {
		r = builtin_read(args, schema);
		json_decref(args);
		return r;
	}
	groups = pick_argv(tool, args);
	if (!groups) {
		r = tool_error("give one of the parameters this tool needs (see its inputSchema)");
		json_decref(args);
		return r;
	}
	if (json_is_true(json_object_get(tool, "index")))
		ensure_index();
	argv = build_argv(groups, args, schema);
	if (verbosity) {
		fprintf(stderr, "%s: run", progname);
		for (size_t i = 0; argv[i]; i++)
			fprintf(stderr, " '%s'", argv[i]);
		fputc('\n', stderr);
	}
	status = run(argv, &out, &err, &truncated);
	free_argv(argv);
	json_decref(args);
	if (status == 124)
		return tool_error("the tool did not finish within %ld seconds", timeout_s);
	if (status < 0 || status == 127)
		return tool_error("cannot run the command for this tool (is ci installed?)");
	if (status >= 2) {
		buf_rtrim(&err);
		r = tool_error("%s", err.len ? err.buf : "the command failed");
		buf_release(&out);
		buf_release(&err);
		return r;
	}
	/* the records, one a line */
	results = json_array();
	{
		const char *p = out.buf, *e2;
		while (p < out.buf + out.len) {
			json_t *rec;
			e2 = memchr(p, '\n', (size_t)(out.buf + out.len - p));
			if (!e2)
				e2 = out.buf + out.len;
			rec = json_loadb(p, (size_t)(e2 - p), 0, NULL);
			if (rec)
				json_array_append_new(results, rec);
			p = e2 + 1;
		}
	}
	{
		json_t *sc = json_pack("{s:o, s:i}", "results", results, "count", (json_int_t)json_array_size(results));
		char *text;
		if (truncated)
			json_object_set_new(sc, "truncated", json_true());
		if (status == 1) {
			buf_rtrim(&err);
			json_object_set_new(sc, "message", json_string(err.len ? err.buf : "nothing found"));
		}
		text = json_dumps(sc, JSON_COMPACT | JSON_REAL_PRECISION(9));
		r = json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", text, "structuredContent", sc);
		free(text);
	}
	buf_release(&out);
	buf_release(&err);
	return r;
}

static void handle(json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (!json_is_object(msg) || !method) {
		reply_error(id, -32600, "invalid request: expected a JSON-RPC 2.0 request object");
		return;
	}
	if (verbosity)
		fprintf(stderr, "%s: %s\n", progname, method);
	if (!strncmp(method, "notifications/", 14))
		return;		/* initialized, cancelled: nothing to do one request at a time */
	if (!id) {
		return;		/* another notification */
	}
	if (!strcmp(method, "initialize")) {
		const char *want = json_string_value(json_object_get(params, "protocolVersion"));
		const char *v = versions[0];
		for (size_t i = 0; want && i < ARRAY_SIZE(versions); i++)
			if (!strcmp(want, versions[i]))
				v = versions[i];
		reply(id, json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}, s:s}",
				    "protocolVersion", v,
				    "capabilities", "tools", "listChanged", 0, "logging",
				    "serverInfo", "name", "ci", "version", PACKAGE_VERSION,
				    "instructions", "ci serves code search over the repository it was started in: "
				    "search (ranked), grep (exact/regex), symbols, references, read, context, impact, status."));
	} else if (!strcmp(method, "ping")) {
		reply(id, json_object());
	} else if (!strcmp(method, "logging/setLevel")) {
		reply(id, json_object());
	} else if (!strcmp(method, "tools/list")) {
		json_t *tools = json_array(), *t;
		size_t i;
		json_array_foreach(json_object_get(table, "tools"), i, t)
			json_array_append_new(tools, json_pack("{s:O, s:O, s:O}", "name", json_object_get(t, "name"),
							       "description", json_object_get(t, "description"),
							       "inputSchema", json_object_get(t, "inputSchema")));
		reply(id, json_pack("{s:o}", "tools", tools));
	} else if (!strcmp(method, "tools/call")) {
		const char *name = json_string_value(json_object_get(params, "name"));
		json_t *tool = name ? find_tool(name) : NULL;
		json_t *args = json_object_get(params, "arguments");
		if (!name) {
			reply_error(id, -32602, "tools/call needs params.name");
		} else if (!tool) {
			char *m = xasprintf("unknown tool '%s'", name);
			reply_error(id, -32602, m);
			free(m);
		} else if (args && !json_is_object(args)) {
			reply_error(id, -32602, "params.arguments must be an object");
		} else {
			reply(id, call_tool(tool, args));
		}
	} else {
		char *m = xasprintf("method not found: '%s'", method);
		reply_error(id, -32601, m);
		free(m);
	}
}

int main(int argc, char **argv)
{
	struct walker w;
	struct walk_opts wo = WALK_OPTS_INIT;
	json_error_t jerr;
	struct buf line = BUF_INIT;
	int c, list = 0;

	util_init(argv[0]);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_LIST: list = 1; break;
		case OPT_TIMEOUT: timeout_s = parse_long_arg(usage_text, "--timeout", optarg, 1, 3600); break;
		case OPT_MAX_OUTPUT:
			max_output = (size_t)parse_long_arg(usage_text, "--max-output", optarg, 1024, 64L << 20);
			break;
		case 'v': verbosity++; break;
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind < argc)
		usage_error(usage_text, "unexpected argument '%s'", argv[optind]);
	table = json_loads(ci_mcp_profile_ci, 0, &jerr);
	if (!table)
		die("tool table: %d:%d: %s", jerr.line, jerr.column, jerr.text);
	if (list) {
		char *s = json_dumps(table, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(table);
		return close_stdout(EXIT_OK);
	}
	if (walker_open(&w, ".", &wo) < 0)
		return EXIT_IO;
	root = xstrdup(w.root);
	walker_close(&w);
	{
		char *self = realpath("/proc/self/exe", NULL);
		if (self && strrchr(self, '/')) {
			*strrchr(self, '/') = '\0';
			bindir = self;
		} else {
			free(self);
			bindir = xstrdup(".");
		}
	}
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int ch;
		json_t *msg;

		buf_reset(&line);
		while ((ch = getchar()) != EOF && ch != '\n')
			buf_addch(&line, ch);
		if (line.len) {
			msg = json_loadb(line.buf, line.len, 0, &jerr);
			if (!msg) {
				char *m = xasprintf("parse error: %s", jerr.text);
				reply_error(NULL, -32700, m);
				free(m);
			} else {
				if (json_is_array(msg))
					reply_error(NULL, -32600, "batches are not supported");
				else
					handle(msg);
				json_decref(msg);
			}
		}
		if (ch == EOF)
			break;
	}
	buf_release(&line);
	json_decref(table);
	free(root);
	free(bindir);
	return close_stdout(EXIT_OK);
}
