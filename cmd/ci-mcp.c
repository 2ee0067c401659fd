/*
 * ci-mcp: a Model Context Protocol server that serves ci's commands as tools,
 * over stdio (one JSON-RPC message a line) or Streamable HTTP (libmicrohttpd).
 *
 * The tools are data: a table in share/mcp/<profile>.json (compiled in, so the
 * server works uninstalled; --table reads another) gives each tool its name,
 * description, JSON Schemas and the argv of the command that answers it, as
 * groups of elements where a "{param}" element is replaced by the parameter's
 * value as one whole argv element (never through a shell) and a group whose
 * parameters are absent is left out.  The command's NDJSON records become the
 * result's structuredContent ({"results": [...], "count": n}) and a text block;
 * its exit status 1 is "nothing found", 2 and 3 are tool errors with its message
 * (but 2 after some records, ci-grep's "results may be incomplete", gives them,
 * marked "incomplete", with the message).
 *
 * The workload that shaped it: a coding agent fires several calls at once, some
 * slow (ranked search on a big repository, an index being built), and gives up
 * on a call after about 15 seconds.  So every call is a child process group, one
 * poll() loop multiplexes the client and the children, a call can be cancelled
 * (its group is killed) and reports progress, and a call that needs an index
 * that is still being built waits a few seconds (--wait) and then answers from
 * what is ready: a table entry's "fallback" (a lexical ci-grep scan, which needs
 * no index), saying in "preparing" what is still under way.
 *
 * Threads: the poll loop in the main thread owns the calls and the children.
 * With --http, libmicrohttpd runs a thread per connection; a connection hands
 * each JSON-RPC message to the loop through an inbox (a mutex and a wake-up
 * pipe) and reads what the loop sends back from its stream (a queue of messages
 * under the same mutex), as one JSON body or as server-sent events.
 *
 * A table's "resources" (codebase-context's codebase://context) are read the
 * same way: resources/read runs the resource's argv as a call and answers the
 * text of its first record.
 *
 * NEEDSWORK: the bobbin profile is a table file still to write (ci, kit,
 * shaktiman, abstract and codebase-context exist); server-sent event streams
 * cannot be resumed (no event ids, Last-Event-ID is ignored); tools/list has no
 * pagination.
 */
#include "core/common.h"
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "parse/lang.h"
#include "parse/walk.h"
#include "mcp-map.h"
#include "toml-json.h"
#include "fleet/fleet.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <git2.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

extern const char ci_mcp_profile_ci[], ci_mcp_profile_kit[], ci_mcp_profile_shaktiman[],
	ci_mcp_profile_abstract[], ci_mcp_profile_codebase_context[], ci_mcp_profile_bobbin[];

static const char usage_text[] =
	"usage: ci-mcp [--list-tools] [--profile <name>] [--table <file>] [--http <addr>] [options]\n"
	"\n"
	"Serve ci's commands as MCP tools for the repository containing the current\n"
	"directory: over standard input and output (JSON-RPC 2.0, one message a line),\n"
	"or over Streamable HTTP with --http.\n"
	"\n"
	"      --list-tools        print the tool table as JSON and exit\n"
	"      --profile <name>    the tool set to serve (default: ci)\n"
	"      --table <file>      serve the tool table in <file> instead of a profile's\n"
	"      --http <addr>       serve Streamable HTTP at http://<addr>/mcp (host:port;\n"
	"                          port 0 picks one) instead of standard input and output\n"
	"      --allow-remote      let --http listen on an address that is not loopback\n"
	"      --allow-origin <o>  also accept requests from the web origin <o> (repeatable)\n"
	"      --timeout <s>       time limit of one tool call (1-3600; default 120)\n"
	"      --wait <s>          how long a call waits for the index before it answers\n"
	"                          from what is ready (0-600; default 5)\n"
	"      --jobs <n>          tool calls run at once; more wait their turn (1-64; default 4)\n"
	"      --max-output <n>    cap on one result's bytes (1024-67108864; default 1048576)\n"
	"      --repo <name>=<dir> serve the repository at <dir> as <name>, chosen by a call's\n"
	"                          \"repo\" argument (repeatable; default: the current one)\n"
	"      --shards <set>      serve a shard set (a directory or a manifest of indexes):\n"
	"                          searches run over every shard, or those of a call's \"repo\"\n"
	"  -v, --verbose           log requests on stderr\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n";

enum { OPT_LIST = 256, OPT_PROFILE, OPT_TABLE, OPT_HTTP, OPT_ALLOW_REMOTE, OPT_ALLOW_ORIGIN,
       OPT_TIMEOUT, OPT_WAIT, OPT_JOBS, OPT_MAX_OUTPUT, OPT_REPO, OPT_SHARDS };

static const struct option long_options[] = {
	{ "list-tools", no_argument, NULL, OPT_LIST },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "table", required_argument, NULL, OPT_TABLE },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
	{ "allow-origin", required_argument, NULL, OPT_ALLOW_ORIGIN },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
	{ "repo", required_argument, NULL, OPT_REPO },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const char *const versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

/* The profiles compiled in; issue 8 adds more. */
static const struct { const char *name; const char *json; } profiles[] = {
	{ "ci", ci_mcp_profile_ci },
	{ "kit", ci_mcp_profile_kit },
	{ "shaktiman", ci_mcp_profile_shaktiman },
	{ "abstract", ci_mcp_profile_abstract },
	{ "codebase-context", ci_mcp_profile_codebase_context },
	{ "bobbin", ci_mcp_profile_bobbin },
};

/* MCP logging levels (RFC 5424 severities), least severe first. */
static const char *const log_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
};
enum { LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING, LOG_ERROR };

static json_t *table;		/* the tool table being served */
static char *shards;		/* --shards: the shard set served (absolute), or NULL */
static char *root;		/* repository root (of the call at hand with --repo) */
/* --repo: the repositories served, by name; a call's "repo" argument picks one */
static struct repo { char *name, *root; } *repos;
static size_t repos_nr, repos_alloc;
static char *home;		/* the current directory's repository */
static char *index_path;	/* the index the commands use */
static char *bindir;		/* where this program is: the commands are beside it */
static long timeout_s = 120;
static long wait_s = 5;
static long max_jobs = 4;
static size_t max_output = 1 << 20;
static volatile sig_atomic_t stopping;	/* SIGINT or SIGTERM seen */
static int sig_pipe[2] = { -1, -1 };	/* the signal handler's wake-up */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- sessions and streams: where messages go ---- */

/*
 * A session: one client.  Over stdio there is one; over HTTP, one per
 * initialize, named by its Mcp-Session-Id.  Sessions live until the server
 * exits (a DELETE marks one deleted), so a stream's pointer stays valid.
 */
struct session {
	struct session *next;	/* all sessions (HTTP) */
	char id[33];		/* Mcp-Session-Id: 128 random bits in hex */
	int log_level;		/* least severe level sent (logging/setLevel); -1: none */
	int deleted;		/* DELETE seen: requests get 404 */
	struct stream *get;	/* its open GET stream, or NULL */
};

/*
 * A stream: where the answers to one message go.  The stdio stream writes to
 * stdout.  An HTTP stream is a queue read by the connection's thread; it is
 * closed when the answer to its request is queued.  All fields but cond are
 * guarded by http_lock.
 */
struct stream {
	int http;		/* 0: stdout */
	int refs;		/* the connection and the loop each hold one */
	struct session *sess;	/* the client */
	char **q;		/* queued messages (malloc'd JSON text) */
	size_t q_nr, q_alloc, q_head;
	int closed;		/* the answer was queued: nothing follows */
	int gone;		/* the connection went away: drop what comes */
	int is_get;		/* the session's GET stream */
	int fd;			/* an event stream's socket, to see the client hang up; -1: none */
	pthread_cond_t cond;	/* signalled when a message is queued or it closes */
};

static pthread_mutex_t http_lock = PTHREAD_MUTEX_INITIALIZER;
static struct MHD_Daemon *daemon_;	/* the HTTP server, or NULL (stdio) */
static struct session stdio_session = { .log_level = -1 };
static struct stream stdio_stream = { .refs = 1, .sess = &stdio_session, .cond = PTHREAD_COND_INITIALIZER };
static struct session *sessions;	/* HTTP sessions */
static size_t sessions_nr;

static struct stream *stream_new(struct session *sess, int refs)
{
	struct stream *st = xcalloc(1, sizeof(*st));

	st->http = 1;
	st->refs = refs;
	st->sess = sess;
	st->fd = -1;
	pthread_cond_init(&st->cond, NULL);
	return st;
}

/* Drop one reference; the last frees the stream.  Call with http_lock held. */
static void stream_unref_locked(struct stream *st)
{
	if (!st || !st->http || --st->refs > 0)
		return;
	if (st->sess && st->sess->get == st)
		st->sess->get = NULL;
	for (size_t i = st->q_head; i < st->q_nr; i++)
		free(st->q[i]);
	free(st->q);
	pthread_cond_destroy(&st->cond);
	free(st);
}

static void stream_unref(struct stream *st)
{
	if (!st || !st->http)
		return;
	pthread_mutex_lock(&http_lock);
	stream_unref_locked(st);
	pthread_mutex_unlock(&http_lock);
}

/* Send one message (which this consumes a reference of) to a stream. */
static void send_json(struct stream *st, json_t *msg, int last)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));

	json_decref(msg);
	if (!s)
		die("cannot encode a response");
	if (!st->http) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		free(s);
		if (ferror(stdout))
			exit(EXIT_IO);
		return;
	}
	pthread_mutex_lock(&http_lock);
	if (st->gone || st->closed) {
		free(s);
	} else {
		ALLOC_GROW(st->q, st->q_nr + 1, st->q_alloc);
		st->q[st->q_nr++] = s;
	}
	if (last)
		st->closed = 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&http_lock);
}

/* Close a stream without an answer (a cancelled request). */
static void stream_close(struct stream *st)
{
	if (!st->http)
		return;
	pthread_mutex_lock(&http_lock);
	st->closed = 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&http_lock);
}

static void reply(struct stream *st, json_t *id, json_t *result)
{
	send_json(st, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				"result", result), 1);
}

static void reply_error(struct stream *st, json_t *id, int code, const char *msg)
{
	send_json(st, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				"error", "code", code, "message", msg), 1);
}

static int session_log_level(struct session *s)
{
	int l;

	pthread_mutex_lock(&http_lock);
	l = s->log_level;
	pthread_mutex_unlock(&http_lock);
	return l;
}

/*
 * Log: on stderr with -v, and as notifications/message to a client that asked
 * for this level (logging/setLevel): on st when the event belongs to one of its
 * requests, else to the stdio client or every HTTP session's GET stream.
 */
static json_t *log_message(int level, const char *text)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method", "notifications/message",
			 "params", "level", log_levels[level], "logger", "ci-mcp", "data", text);
}

static void logmsg(struct stream *st, int level, const char *fmt, ...) CI_PRINTF(3, 4);
static void logmsg(struct stream *st, int level, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (verbosity > (level == LOG_DEBUG ? 1 : 0))
		fprintf(stderr, "%s: %s\n", progname, b.buf);
	if (!st && !daemon_)
		st = &stdio_stream;
	if (st) {
		int l = session_log_level(st->sess);
		if (l >= 0 && level >= l)
			send_json(st, log_message(level, b.buf), 0);
	} else {
		struct session *s;
		pthread_mutex_lock(&http_lock);
		for (s = sessions; s; s = s->next) {
			json_t *m;
			if (!s->get || s->log_level < 0 || level < s->log_level || s->get->gone || s->get->closed)
				continue;
			m = log_message(level, b.buf);
			ALLOC_GROW(s->get->q, s->get->q_nr + 1, s->get->q_alloc);
			s->get->q[s->get->q_nr++] = json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII);
			json_decref(m);
			pthread_cond_broadcast(&s->get->cond);
		}
		pthread_mutex_unlock(&http_lock);
	}
	buf_release(&b);
}

/* ---- tool results ---- */

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

/* A successful result: structuredContent sc (consumed) and its JSON as text. */
static json_t *tool_result(json_t *sc)
{
	char *text = json_dumps(sc, JSON_COMPACT | JSON_REAL_PRECISION(9));
	json_t *r = json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", text,
			      "structuredContent", sc);

	free(text);
	return r;
}

/* ---- validation against the tool's schema (the subset the tables use) ---- */

/* The characters (code points) of a UTF-8 string, as JSON Schema counts lengths. */
static size_t utf8_chars(json_t *v)
{
	const unsigned char *s = (const unsigned char *)json_string_value(v);
	size_t n = 0, len = json_string_length(v);

	for (size_t i = 0; i < len; i++)
		n += (s[i] & 0xc0) != 0x80;
	return n;
}

/* NULL if args fit the schema, else a malloc'd message naming the parameter. */
/* A schema's "pattern" compiled, or NULL with why (its message and offset) in why[0..n). */
static pcre2_code *pattern_compile(const char *re, char *why, size_t n)
{
	int err;
	PCRE2_SIZE off;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off, NULL);

	if (!code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof(msg));
		snprintf(why, n, "%s at offset %zu", (const char *)msg, (size_t)off);
	}
	return code;
}

/* Does s match the schema's "pattern" (a regular expression, unanchored, as JSON Schema says)? */
static int pattern_matches(const char *re, const char *s)
{
	char why[300];
	pcre2_code *code = pattern_compile(re, why, sizeof(why));	/* check_table compiled it once */
	pcre2_match_data *md;
	int rc;

	if (!code)
		return 0;
	md = pcre2_match_data_create_from_pattern(code, NULL);
	rc = pcre2_match(code, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(code);
	return rc >= 0;
}

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
		if (!type)
			continue;
		if (!strcmp(type, "string")) {
			json_t *en = json_object_get(p, "enum"), *e;
			json_t *mnl = json_object_get(p, "minLength"), *mxl = json_object_get(p, "maxLength");
			size_t j;
			int ok = !en;
			if (!json_is_string(v))
				return xasprintf("parameter '%s' must be a string", k);
			if (json_is_integer(mnl) && utf8_chars(v) < (size_t)json_integer_value(mnl))
				return xasprintf("parameter '%s' must not be empty", k);
			if (json_is_integer(mxl) && utf8_chars(v) > (size_t)json_integer_value(mxl))
				return xasprintf("parameter '%s' must be at most %lld characters long", k,
						 (long long)json_integer_value(mxl));
			if (memchr(json_string_value(v), '\0', json_string_length(v)))
				return xasprintf("parameter '%s' must not contain NUL characters", k);
			if (json_is_string(json_object_get(p, "pattern")) &&
			    !pattern_matches(json_string_value(json_object_get(p, "pattern")), json_string_value(v)))
				return xasprintf("parameter '%s' must match %s, got '%s'", k,
						 json_string_value(json_object_get(p, "pattern")), json_string_value(v));
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
			int integer = !strcmp(type, "integer");
			double x;
			if (integer ? !json_is_integer(v) : !json_is_number(v))
				return xasprintf("parameter '%s' must be %s", k, integer ? "an integer" : "a number");
			x = json_number_value(v);
			if ((mn && x < json_number_value(mn)) || (mx && x > json_number_value(mx))) {
				if (mn && mx)
					return xasprintf("parameter '%s' must be from %g to %g, got %g", k,
							 json_number_value(mn), json_number_value(mx), x);
				if (mn)
					return xasprintf("parameter '%s' must be at least %g, got %g", k,
							 json_number_value(mn), x);
				return xasprintf("parameter '%s' must be at most %g, got %g", k,
						 json_number_value(mx), x);
			}
		} else if (!strcmp(type, "boolean")) {
			if (!json_is_boolean(v))
				return xasprintf("parameter '%s' must be true or false", k);
		} else if (!strcmp(type, "array")) {
			const char *it = json_string_value(json_object_get(json_object_get(p, "items"), "type"));
			json_t *e;
			size_t j;
			if (!json_is_array(v))
				return xasprintf("parameter '%s' must be an array", k);
			json_t *items = json_object_get(p, "items");
			json_t *imn = json_object_get(items, "minLength"), *imx = json_object_get(items, "maxLength");
			json_array_foreach(v, j, e) {
				if (it && !strcmp(it, "string") &&
				    (!json_is_string(e) || memchr(json_string_value(e), '\0', json_string_length(e))))
					return xasprintf("parameter '%s' must be an array of strings", k);
				if (json_is_string(e) && json_is_integer(imn) && utf8_chars(e) < (size_t)json_integer_value(imn))
					return xasprintf("parameter '%s[%zu]' must not be empty", k, j);
				if (json_is_string(e) && json_is_integer(imx) && utf8_chars(e) > (size_t)json_integer_value(imx))
					return xasprintf("parameter '%s[%zu]' must be at most %lld characters long", k, j,
							 (long long)json_integer_value(imx));
				if (it && !strcmp(it, "integer") && !json_is_integer(e))
					return xasprintf("parameter '%s[%zu]' must be an integer", k, j);
			}
			if (json_is_integer(json_object_get(p, "minItems")) &&
			    json_array_size(v) < (size_t)json_integer_value(json_object_get(p, "minItems")))
				return json_integer_value(json_object_get(p, "minItems")) == 1 ?
				       xasprintf("parameter '%s' must not be empty", k) :
				       xasprintf("parameter '%s' must have at least %lld elements", k,
						 (long long)json_integer_value(json_object_get(p, "minItems")));
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

/*
 * The same without the file system, for a path inside a commit: "a/./b" is
 * "a/b"; "..", and an absolute path not under the root, are refused.
 */
static char *confine_lexical(const char *p, const char **why)
{
	struct buf b = BUF_INIT;
	size_t rl = strlen(root);
	const char *s = p, *e;

	if (p[0] == '/') {
		if (strncmp(p, root, rl) || (p[rl] != '/' && p[rl]))
			goto outside;
		s = p + rl;
	}
	for (; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, '/');
		if (e == s || (e - s == 1 && s[0] == '.'))
			continue;
		if (e - s == 2 && s[0] == '.' && s[1] == '.')
			goto outside;
		if (b.len)
			buf_addch(&b, '/');
		buf_add(&b, s, (size_t)(e - s));
	}
	if (!b.len) {
		*why = "is not a file";
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
outside:
	*why = "is outside the repository";
	buf_release(&b);
	return NULL;
}

/* ---- argv templates ---- */

/* Words too common to look for in a lexical stand-in of a ranked search. */
static const char *const stopwords[] = {
	"about", "also", "because", "been", "being", "code", "could", "does", "doing", "done", "each",
	"file", "files", "find", "from", "function", "functions", "have", "here", "into", "just",
	"like", "made", "make", "more", "most", "only", "other", "over", "should", "show", "some",
	"such", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those",
	"used", "uses", "using", "what", "when", "where", "which", "while", "will", "with", "would",
};

static int is_stopword(const char *s, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(stopwords); i++)
		if (strlen(stopwords[i]) == n && !strncasecmp(s, stopwords[i], n))
			return 1;
	return 0;
}

/* An identifier rather than a word: has '_', a digit, or a capital after the start. */
static int is_identifier(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '_' || isdigit((unsigned char)s[i]) || (i && isupper((unsigned char)s[i])))
			return 1;
	return 0;
}

/*
 * "{query|words}": the query's words as a PCRE2 alternation, for a lexical
 * stand-in of a ranked search: its identifiers if it has any, else its words of
 * four or more letters that are not too common, else all of three or more; a
 * query without such words is matched literally.
 */
static char *words_regex(const char *q)
{
	struct buf b = BUF_INIT;
	int n = 0;

	for (int pass = 0; pass < 3 && !n; pass++) {
		const char *p = q;
		while (*p && n < 12) {
			const char *s;
			size_t l;
			while (*p && !(isalnum((unsigned char)*p) || *p == '_'))
				p++;
			s = p;
			while (*p && (isalnum((unsigned char)*p) || *p == '_'))
				p++;
			l = (size_t)(p - s);
			if (l < 3 || (pass == 0 && !is_identifier(s, l)) ||
			    (pass == 1 && (l < 4 || is_stopword(s, l))))
				continue;
			buf_addstr(&b, n++ ? "|" : "(?:");
			buf_add(&b, s, l);
		}
	}
	if (n) {
		buf_addch(&b, ')');
		return buf_detach(&b, NULL);
	}
	for (const char *p = q; *p; p++) {
		if (!isalnum((unsigned char)*p) && !((unsigned char)*p & 0x80))
			buf_addch(&b, '\\');
		buf_addch(&b, *p);
	}
	return buf_detach(&b, NULL);
}

/* The value of a parameter as an argv element, or NULL (absent, or false). */
static char *param_text(json_t *args, json_t *schema, const char *name, int *is_bool)
{
	const char *bar = strchr(name, '|');
	char *pname = bar ? xstrndup(name, (size_t)(bar - name)) : xstrdup(name);
	json_t *v = json_object_get(args, pname);
	json_t *p = json_object_get(json_object_get(schema, "properties"), pname);
	char *r = NULL;

	free(pname);
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
		r = xstrdup(json_string_value(v));
	else if (json_is_integer(v))
		r = xasprintf("%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		r = xasprintf("%.17g", json_real_value(v));
	if (r && bar && !strcmp(bar + 1, "words")) {
		char *w = words_regex(r);
		free(r);
		r = w;
	}
	return r;
}

/* The array a group's "{param}" has as its value, or NULL. */
static json_t *group_array(json_t *g, json_t *args, const char **name)
{
	json_t *e;
	size_t j;

	json_array_foreach(g, j, e) {
		const char *s = json_string_value(e);
		size_t l = s ? strlen(s) : 0;
		if (l > 2 && s[0] == '{' && s[l - 1] == '}') {
			char *n = xstrndup(s + 1, l - 2);
			json_t *v = json_object_get(args, n);
			free(n);
			if (json_is_array(v)) {
				*name = s;
				return v;
			}
		}
	}
	return NULL;
}

/*
 * Build argv from groups of elements; returns a NULL-terminated malloc'd
 * vector.  A group whose parameter is an array is repeated for each element.
 */
static char **build_argv(json_t *groups, json_t *args, json_t *schema)
{
	char **argv = NULL;
	size_t nr = 0, alloc = 0, i, j;
	json_t *g, *e;

	json_array_foreach(groups, i, g) {
		char *vals[16];
		size_t nv = 0;
		int skip = 0;
		const char *aname;
		json_t *arr = group_array(g, args, &aname);

		if (arr) {
			json_t *one = json_array(), *a2 = json_copy(args), *x;
			size_t k;
			char *n = xstrndup(aname + 1, strlen(aname) - 2);
			json_array_append(one, g);
			json_array_foreach(arr, k, x) {
				char **sub;
				json_object_set(a2, n, x);
				sub = build_argv(one, a2, schema);
				for (size_t m = 0; sub[m]; m++) {
					ALLOC_GROW(argv, nr + 2, alloc);
					argv[nr++] = sub[m];
				}
				free(sub);
			}
			free(n);
			json_decref(a2);
			json_decref(one);
			continue;
		}

		json_array_foreach(g, j, e) {
			const char *s = json_string_value(e);
			size_t l = s ? strlen(s) : 0;
			if (!s || nv >= ARRAY_SIZE(vals))
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
 * --shards: the "repo" parameter each tool gets (unless its table has one), and
 * the commands that search a shard set.  The set itself reaches them as
 * $CI_SHARDS (libcommon/fleet).
 */
static const char shards_repo_key[] = "x-ci-shards-repo";	/* marks a tool's added "repo" */

static void shards_tools(json_t *tbl)
{
	json_t *tool;
	size_t i;

	json_array_foreach(json_object_get(tbl, "tools"), i, tool) {
		json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");

		if (!json_is_object(props) || json_object_get(props, "repo"))
			continue;
		json_object_set_new(props, "repo", json_pack("{s:s, s:s}", "type", "string", "description",
			"Only this repository of the shard set (names separated by commas); "
			"without it, every repository."));
		json_object_set_new(tool, shards_repo_key, json_true());
	}
}

/* argv with `--shards-repo <repo>` after argv[0] when the call names a repository
 * and its command searches a shard set; the old argv is freed or returned. */
static char **shards_argv(json_t *tool, json_t *args, char **argv)
{
	const char *repo = json_string_value(json_object_get(args, "repo"));
	static const char *const fanned[] = { "ci-grep", "ci-rank", "ci-refs" };
	size_t n = 0, i;
	char **nv;

	if (!repo || !*repo || !json_is_true(json_object_get(tool, shards_repo_key)) || !argv[0])
		return argv;
	for (i = 0; i < ARRAY_SIZE(fanned) && strcmp(argv[0], fanned[i]); i++)
		;
	if (i == ARRAY_SIZE(fanned))
		return argv;
	while (argv[n])
		n++;
	nv = xcalloc(n + 3, sizeof(*nv));
	nv[0] = argv[0];
	nv[1] = xstrdup("--shards-repo");
	nv[2] = xstrdup(repo);
	memcpy(nv + 3, argv + 1, n * sizeof(*nv));
	free(argv);
	return nv;
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
		const char *eq;
		if (!when)
			return json_object_get(v, "argv");
		eq = strchr(when, '=');
		if (eq) {
			char *k = xstrndup(when, (size_t)(eq - when));
			json_t *a = json_object_get(args, k);
			free(k);
			if (json_is_string(a) && !strcmp(json_string_value(a), eq + 1))
				return json_object_get(v, "argv");
		} else if (json_object_get(args, when) && !json_is_false(json_object_get(args, when))) {
			return json_object_get(v, "argv");
		}
	}
	return NULL;
}

/* ---- child processes ---- */

/*
 * A command running in its own process group, its stdout and stderr read by
 * the poll loop.  stdout is kept up to max_output bytes (then the group is
 * killed and the answer marked truncated), stderr up to 64 KiB.
 */
struct proc {
	pid_t pid;		/* also the process group; 0 when not running */
	int fd[2];		/* stdout, stderr; -1 once at end of file */
	struct buf out, err;	/* what they said */
	int truncated;		/* stdout went over max_output or max_lines */
	long max_lines;		/* keep at most this many records; 0: no limit */
	long lines;		/* records read so far */
	int tail_err;		/* keep the end of stderr (progress reports), not its start */
	int status;		/* exit status once reaped; 128+n for signal n */
};

/*
 * Start argv (argv[0] a ci command, found beside this program or on PATH) in
 * the repository root.  0; or -1 with errno when it cannot run (E2BIG: an
 * argument over the kernel's 128 KiB, or all of them over its limit; ENOENT:
 * no such command), -2 with errno when the root cannot be entered.
 */
static int proc_start(struct proc *p, char **argv)
{
	int po[2], pe[2];
	/*
	 * Everything the child needs is made before fork(): with --http other
	 * threads run, and the child may only call async-signal-safe functions.
	 */
	char *exe = xasprintf("%s/%s", bindir, argv[0]);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int ep[2] = { -1, -1 };	/* the child's errno when chdir or exec fails; closed by exec */
	int child_errno;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	p->out = (struct buf)BUF_INIT;
	p->err = (struct buf)BUF_INIT;
	p->fd[0] = p->fd[1] = -1;
	if (devnull < 0 || pipe2(po, O_CLOEXEC) < 0)
		goto fail;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		goto fail;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		goto fail;
	}
	p->pid = fork();
	if (p->pid < 0) {
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]); close(ep[0]); close(ep[1]);
		p->pid = 0;
		goto fail;
	}
	if (p->pid == 0) {
		sigset_t none;

		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(root) == 0) {
			if (access(exe, X_OK) == 0)
				execv(exe, argv);
			execvp(argv[0], argv);
			child_errno = errno;
		} else {
			child_errno = -errno;	/* negative: chdir failed */
		}
		n = write(ep[1], &child_errno, sizeof(child_errno));
		_exit(n < 0 ? 126 : 127);
	}
	setpgid(p->pid, p->pid);
	close(po[1]);
	close(pe[1]);
	close(ep[1]);
	/* exec closes ep (O_CLOEXEC): end of file; a failure sends errno first */
	do
		n = read(ep[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
		p->pid = 0;
		close(po[0]);
		close(pe[0]);
		close(devnull);
		free(exe);
		errno = child_errno < 0 ? -child_errno : child_errno;
		return child_errno < 0 ? -2 : -1;
	}
	close(devnull);
	free(exe);
	p->fd[0] = po[0];
	p->fd[1] = pe[0];
	return 0;
fail:
	if (devnull >= 0)
		close(devnull);
	free(exe);
	return -1;
}

/* Kill the process group and reap it. */
static void proc_kill(struct proc *p)
{
	if (p->pid > 0) {
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
	}
}

/* Read what fd k has; at end of both, reap.  Returns 1 when the process is done. */
static int proc_read(struct proc *p, int k)
{
	char tmp[65536];
	ssize_t n = read(p->fd[k], tmp, sizeof(tmp));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(p->fd[k]);
		p->fd[k] = -1;
	} else if (k == 0 && p->truncated) {
		;		/* killed: drain */
	} else if (k == 0) {
		const char *q = tmp, *e;
		while (p->max_lines && (e = memchr(q, '\n', (size_t)(tmp + n - q)))) {
			q = e + 1;
			if (++p->lines == p->max_lines) {
				n = q - tmp;
				p->truncated = 1;
				proc_kill(p);
				break;
			}
		}
		if (p->out.len + (size_t)n > max_output) {
			p->truncated = 1;
			buf_add(&p->out, tmp, max_output > p->out.len ? max_output - p->out.len : 0);
			proc_kill(p);
		} else {
			buf_add(&p->out, tmp, (size_t)n);
		}
	} else if (p->err.len < 65536) {
		buf_add(&p->err, tmp, (size_t)n);
	} else if (p->tail_err) {
		size_t keep = 16384;
		memmove(p->err.buf, p->err.buf + p->err.len - keep, keep);
		buf_setlen(&p->err, keep);
		buf_add(&p->err, tmp, (size_t)n);
	}
	if (p->fd[0] < 0 && p->fd[1] < 0) {
		int st = 0;
		while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
			;
		p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		p->pid = 0;
		return 1;
	}
	return 0;
}

/* Kill, close and reap; release the buffers. */
static void proc_release(struct proc *p)
{
	for (int k = 0; k < 2; k++)
		if (p->fd[k] >= 0) {
			close(p->fd[k]);
			p->fd[k] = -1;
		}
	if (p->pid > 0) {
		proc_kill(p);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
		p->pid = 0;
	}
	buf_release(&p->out);
	buf_release(&p->err);
}

/* ---- the index: built or updated in the background ---- */

static struct {
	struct proc p;		/* `ci-index update` while it runs */
	int running;		/* p is running */
	long long started;	/* when it started (ms) */
	long long done;		/* when the last one ended (ms); 0: never */
	int built;		/* it builds a new index (there was none) */
	char *last_error;	/* what the last failed update said */
	size_t files_done;	/* its progress report: files done */
	size_t files_total;	/* of this many */
} indexer;

/* Read ci-index's last progress report ("\rci-index: indexing 12/34 files, ..."). */
static void indexer_progress(void)
{
	struct buf *e = &indexer.p.err;
	const char *p = NULL, *q;
	size_t d, t;

	for (q = e->buf; (q = strstr(q, ": indexing ")); q++)
		p = q;
	if (p && sscanf(p, ": indexing %zu/%zu", &d, &t) == 2) {
		indexer.files_done = d;
		indexer.files_total = t;
	}
}

static char *indexer_doing(void);

/* A progress message while a call waits for the index. */
static char *indexer_doing_msg(void)
{
	char *d = indexer_doing();
	char *m = xasprintf("waiting for the index, %s", d);

	free(d);
	return m;
}

/* What the index is doing, for messages: "being built (1234/10000 files, for 12 s)". */
static char *indexer_doing(void)
{
	long long secs = (now_ms() - indexer.started) / 1000;

	if (indexer.files_total)
		return xasprintf("%s (%zu of %zu files, for %lld s)", indexer.built ? "being built" :
				 "being updated", indexer.files_done, indexer.files_total, secs);
	return xasprintf("%s (for %lld s)", indexer.built ? "being built" : "being updated", secs);
}

/* The last line of ci-index's stderr that is not a progress report; malloc'd. */
static char *indexer_error(void)
{
	struct buf *e = &indexer.p.err;
	const char *s = e->buf, *end = e->buf + e->len, *best = NULL, *best_end = NULL;

	while (s < end) {
		const char *x = s + strcspn(s, "\r\n");
		const char *t = s;
		if (x > end)
			x = end;
		while (t < x && (*t == ' ' || *t == '\t'))
			t++;
		if (t < x && !memmem(t, (size_t)(x - t), ": indexing ", 11)) {
			best = t;
			best_end = x;
		}
		s = x + 1;
	}
	if (!best)
		return xstrdup("ci-index failed");
	while (best_end > best && best_end[-1] == ' ')
		best_end--;
	return xstrndup(best, (size_t)(best_end - best));
}

static int index_exists(void)
{
	struct stat st;

	return stat(index_path, &st) == 0 && st.st_size > 0;
}

static void indexer_start(void)
{
	/* build when there is none: `ci-index update` cannot lock a missing directory */
	int exists = index_exists();
	char *argv[] = { "ci-index", "--progress", "--history", exists ? "update" : "build", NULL };

	if (indexer.running)
		return;
	logmsg(NULL, LOG_INFO, "%s the index", exists ? "updating" : "building");
	root = home;
	if (proc_start(&indexer.p, argv) < 0) {
		logmsg(NULL, LOG_ERROR, "cannot start ci-index: %s", strerror(errno));
		indexer.done = now_ms();
		return;
	}
	indexer.p.tail_err = 1;
	indexer.running = 1;
	indexer.built = !exists;
	indexer.files_done = indexer.files_total = 0;
	indexer.started = now_ms();
}

static void indexer_finished(void)
{
	indexer.running = 0;
	indexer.done = now_ms();
	free(indexer.last_error);
	indexer.last_error = NULL;
	if (indexer.p.status) {
		indexer.last_error = indexer_error();
		logmsg(NULL, LOG_ERROR, "%s", indexer.last_error);
	} else {
		logmsg(NULL, LOG_INFO, "the index is up to date (%lld ms)", indexer.done - indexer.started);
	}
	proc_release(&indexer.p);
}

/* ---- tool calls ---- */

enum call_state {
	CALL_QUEUED,		/* waiting for a free job slot */
	CALL_WAIT_INDEX,	/* waiting for ci-index update */
	CALL_RUNNING,		/* its command runs */
};

struct call {
	struct call *next;	/* calls in arrival order */
	json_t *id;		/* the request's id */
	struct stream *st;	/* where the answer goes (a reference) */
	json_t *tool;		/* its table entry (borrowed from table) */
	json_t *args;		/* validated arguments, paths confined (owned) */
	json_t *token;		/* _meta.progressToken, or NULL (owned) */
	enum call_state state;
	int wants_index;	/* the tool reads the index */
	char *root;		/* the repository it runs in (borrowed) */
	int force_index;	/* wait for a fresh index however long it takes */
	long long started;	/* ms */
	long long deadline;	/* ms: --timeout */
	long long next_tick;	/* ms: the next progress notification */
	int ticks;		/* progress notifications sent */
	char *label;		/* what it runs, for progress messages */
	char *preparing;	/* what is still being prepared (answer note), or NULL */
	int spec;		/* its fallback runs while it waits for the index */
	int spec_done;		/* and has finished: p holds its answer */
	int resource;		/* a resources/read: tool is the table's resource entry */
	struct proc p;		/* its command */
};

static struct call *calls;
static int running_jobs;

static void call_free(struct call *c)
{
	proc_release(&c->p);
	if (c->state == CALL_RUNNING)
		running_jobs--;
	stream_unref(c->st);
	json_decref(c->id);
	json_decref(c->args);
	json_decref(c->token);
	free(c->label);
	free(c->preparing);
	free(c);
}

static void call_unlink(struct call *c)
{
	struct call **pp;

	for (pp = &calls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

static void progress(struct call *c, const char *msg)
{
	if (!c->token)
		return;
	send_json(c->st, json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0",
				   "method", "notifications/progress", "params",
				   "progressToken", c->token, "progress", (json_int_t)c->ticks++,
				   "message", msg), 0);
}

/* Answer c with result r and forget it. */
/*
 * The answer of a resources/read from the result its command gave (consumed):
 * the "text" of its first record as the resource's contents, a tool error as a
 * JSON-RPC error.
 */
static void resource_answer(struct call *c, json_t *r)
{
	json_t *sc = json_object_get(r, "structuredContent");
	const char *text = json_string_value(json_object_get(json_array_get(json_object_get(sc, "results"), 0),
							     "text"));
	const char *err = json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0),
							    "text"));
	const char *uri = json_string_value(json_object_get(c->tool, "uri"));

	if (json_is_true(json_object_get(r, "isError")) || !text) {
		const char *prep = json_string_value(json_object_get(sc, "preparing"));
		const char *msg = json_string_value(json_object_get(sc, "message"));
		char *m = xasprintf("cannot read %s: %s", uri,
				    json_is_true(json_object_get(r, "isError")) && err ? err :
				    prep && *prep ? prep : msg && *msg ? msg : "its command gave no text");

		reply_error(c->st, c->id, -32603, m);
		free(m);
	} else {
		reply(c->st, c->id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
					      json_string_value(json_object_get(c->tool, "mimeType")) ?
					      json_string_value(json_object_get(c->tool, "mimeType")) : "text/plain",
					      "text", text));
	}
	json_decref(r);
}

static void call_answer(struct call *c, json_t *r)
{
	call_unlink(c);
	if (c->resource)
		resource_answer(c, r);
	else
		reply(c->st, c->id, r);
	call_free(c);
}

/*
 * The answer of a tool with an "output" program (mcp_map_answer(); in is
 * consumed); an error in its programs is a tool error.
 */
static json_t *mapped_result(json_t *tool, json_t *in)
{
	json_t *sc, *text, *r;
	char *err = mcp_map_answer(tool, in, &sc, &text);

	json_decref(in);
	if (err) {
		r = tool_error("%s", err);
		free(err);
		return r;
	}
	if (!text)
		return tool_result(sc);
	r = json_pack("{s:[{s:s, s:o}], s:o}", "content", "type", "text", "text", text, "structuredContent", sc);
	return r;
}

/*
 * mapped_result() with what the tool remembers of the client's session as
 * .session, and its "session" program's view of the answer remembered.
 */
static json_t *session_result(struct call *c, json_t *in)
{
	json_t *old = mcp_map_session_get(c->st->sess, c->tool), *r, *sc, *st;
	char *err = NULL;

	json_object_set(in, "session", old ? old : json_null());
	r = mapped_result(c->tool, in);
	sc = json_object_get(r, "structuredContent");
	if (!json_is_object(sc) || json_is_true(json_object_get(r, "isError")))
		return r;
	st = json_pack("{s:O, s:O, s:O}", "session", old ? old : json_null(), "structuredContent", sc,
		       "args", c->args);
	old = mcp_map_run(c->tool, "session", st, &err);
	json_decref(st);
	if (old)
		mcp_map_session_set(c->st->sess, c->tool, old);
	else if (err)
		logmsg(c->st, LOG_WARNING, "the session program of %s: %s",
		       json_string_value(json_object_get(c->tool, "name")), err);
	free(err);
	return r;
}

/*
 * What the output program of c's tool reads: args, records, exit (the
 * command's status), message (its stderr), truncated, preparing, session.
 */
static json_t *command_mapped(struct call *c)
{
	struct proc *p = &c->p;
	json_t *records = json_array(), *in;
	const char *s, *e;

	for (s = p->out.buf; s < p->out.buf + p->out.len; s = e + 1) {
		json_t *rec;
		e = memchr(s, '\n', (size_t)(p->out.buf + p->out.len - s));
		if (!e)
			e = p->out.buf + p->out.len;
		rec = json_loadb(s, (size_t)(e - s), 0, NULL);
		if (rec)
			json_array_append_new(records, rec);
	}
	buf_rtrim(&p->err);
	in = json_pack("{s:O, s:o, s:i, s:s%, s:b}", "args", c->args, "records", records,
		       "exit", (json_int_t)p->status, "message", p->err.buf, p->err.len, "truncated", p->truncated);
	if (!in)	/* stderr not UTF-8 */
		in = json_pack("{s:O, s:o, s:i, s:s, s:b}", "args", c->args, "records", records,
			       "exit", (json_int_t)p->status, "message", "", "truncated", p->truncated);
	if (c->preparing)
		json_object_set_new(in, "preparing", json_string(c->preparing));
	return session_result(c, in);
}

/* Turn the finished command's output into the answer. */
static json_t *command_result(struct call *c)
{
	struct proc *p = &c->p;
	json_t *results, *sc;
	const char *s, *e;
	/* exit 2 after records: a limit cut the search short (ci-grep(1)); usage errors write none */
	int partial = p->status == 2 && p->out.len && !p->truncated;

	if (p->status == 127 || p->status == 126) {
		buf_rtrim(&p->err);
		return tool_error("cannot run the command for this tool: %s",
				  p->err.len ? p->err.buf : "is ci installed?");
	}
	if (json_object_get(c->tool, "output") &&
	    (p->status < 2 || p->truncated || partial ||
	     (p->status < 128 && json_is_true(json_object_get(c->tool, "map_errors")))))
		return command_mapped(c);
	if (p->status >= 2 && !p->truncated && !partial) {
		buf_rtrim(&p->err);
		logmsg(c->st, LOG_WARNING, "%s failed: %s", c->label, p->err.len ? p->err.buf : "exit status");
		if (p->status >= 128)
			return tool_error("the command %s died of signal %d", c->label, p->status - 128);
		return tool_error("%s", p->err.len ? p->err.buf : "the command failed");
	}
	results = json_array();
	for (s = p->out.buf; s < p->out.buf + p->out.len; s = e + 1) {
		json_t *rec;
		e = memchr(s, '\n', (size_t)(p->out.buf + p->out.len - s));
		if (!e)
			e = p->out.buf + p->out.len;
		rec = json_loadb(s, (size_t)(e - s), 0, NULL);
		if (rec)
			json_array_append_new(results, rec);
	}
	sc = json_pack("{s:o, s:i}", "results", results, "count", (json_int_t)json_array_size(results));
	if (p->truncated)
		json_object_set_new(sc, "truncated", json_true());
	if (p->status == 1) {
		buf_rtrim(&p->err);
		json_object_set_new(sc, "message", json_string(p->err.len ? p->err.buf : "nothing found"));
	}
	if (partial) {
		buf_rtrim(&p->err);
		json_object_set_new(sc, "incomplete", json_true());
		json_object_set_new(sc, "message", json_stringn(p->err.buf, p->err.len));
	}
	if (c->preparing)
		json_object_set_new(sc, "preparing", json_string(c->preparing));
	return tool_result(sc);
}

/*
 * Start the command of c (the tool's argv, or its fallback when fallback); on
 * failure answer c (which is then freed) and return -1.
 */
static int call_start(struct call *c, int fallback)
{
	json_t *schema = json_object_get(c->tool, "inputSchema");
	json_t *groups = fallback ? json_object_get(c->tool, "fallback") : pick_argv(c->tool, c->args);
	char **argv = build_argv(groups, c->args, schema);
	struct buf b = BUF_INIT;
	int rc;

	for (size_t i = 0; argv[i]; i++)
		buf_addf(&b, i ? " '%s'" : "%s", argv[i]);
	logmsg(c->st, LOG_DEBUG, "run %s", b.buf);
	buf_release(&b);
	free(c->label);
	c->label = xstrdup(argv[0] ? argv[0] : "?");
	root = c->root;
	if (shards)
		argv = shards_argv(c->tool, c->args, argv);
	if (!argv[0]) {
		free_argv(argv);
		call_answer(c, tool_error("this tool's argv is empty"));
		return -1;
	}
	if ((rc = proc_start(&c->p, argv)) < 0) {
		int e = errno;
		char *m = rc == -2 ? xasprintf("cannot enter '%s': %s", root, strerror(e)) :
				     xasprintf("cannot run '%s': %s", argv[0], strerror(e));
		logmsg(c->st, LOG_WARNING, "%s", m);
		call_answer(c, tool_error("%s", m));
		free(m);
		free_argv(argv);
		return -1;
	}
	free_argv(argv);
	if (fallback)
		c->p.max_lines = (long)json_integer_value(json_object_get(c->tool, "fallback_limit"));
	b = (struct buf)BUF_INIT;
	buf_addf(&b, "running %s", c->label);
	progress(c, b.buf);
	buf_release(&b);
	return 0;
}

/* Start the command of c and count it as a running job. */
static void call_run(struct call *c, int fallback)
{
	if (call_start(c, fallback) < 0)
		return;
	c->state = CALL_RUNNING;
	running_jobs++;
}

static char *fallback_note(void)
{
	char *d = indexer_doing();
	char *r = xasprintf("the index is %s; until it is ready these are lexical matches (ci-grep), "
			    "not ranked results: ask again later", d);

	free(d);
	return r;
}

/* What a call waiting for the index does once it may go on. */
static void call_after_index(struct call *c, int index_ready)
{
	if (index_ready) {
		call_run(c, 0);
		return;
	}
	if (index_exists()) {
		char *d = indexer_doing();
		c->preparing = xasprintf("the index is %s; these results may miss the latest changes", d);
		free(d);
		call_run(c, 0);
	} else if (json_object_get(c->tool, "fallback")) {
		c->preparing = fallback_note();
		call_run(c, 1);
	} else if (json_object_get(c->tool, "output")) {
		char *d = indexer_doing();
		char *m = xasprintf("the index is %s; this tool needs it: ask again in a little while", d);
		json_t *in = json_pack("{s:O, s:[], s:i, s:s, s:b, s:s}", "args", c->args, "records", "exit", 0,
				       "message", "", "needs_index", 1, "preparing", m);
		free(d);
		free(m);
		call_answer(c, mapped_result(c->tool, in));
	} else {
		json_t *sc = json_pack("{s:[], s:i, s:s}", "results", "count", 0, "preparing", "");
		char *d = indexer_doing();
		char *m = xasprintf("the index is %s; this tool needs it: ask again in a little while "
				    "(grep works now)", d);
		free(d);
		json_object_set_new(sc, "preparing", json_string(m));
		free(m);
		call_answer(c, tool_result(sc));
	}
}

/* Move the calls on: start what may start, give up waiting, time out. */
static void advance_calls(void)
{
	long long now = now_ms();
	struct call *c, *next;

	for (c = calls; c; c = next) {
		next = c->next;
		if (c->state == CALL_QUEUED) {
			if (running_jobs >= max_jobs)
				continue;
			if (!c->wants_index) {
				call_run(c, 0);
				continue;
			}
			if (!indexer.running && (c->force_index || !indexer.done || now - indexer.done >= 10000) &&
			    !(c->force_index && indexer.done > c->started))
				indexer_start();
			if (!indexer.running) {
				call_run(c, 0);
				continue;
			}
			c->state = CALL_WAIT_INDEX;
			progress(c, index_exists() ? "updating the index" : "building the index");
			/*
			 * No index yet: start the lexical stand-in now, so that its
			 * answer is ready when the wait is over.
			 */
			if (!index_exists() && !c->force_index && json_object_get(c->tool, "fallback")) {
				if (call_start(c, 1) < 0)
					continue;
				c->spec = 1;
			}
		}
		if (c->state == CALL_WAIT_INDEX) {
			if (!indexer.running && !index_exists() && indexer.last_error &&
			    json_object_get(c->tool, "fallback")) {
				/* no index and none coming: the lexical stand-in, saying why */
				c->preparing = xasprintf("the index could not be built (%s); these are lexical "
							 "matches (ci-grep), not ranked results", indexer.last_error);
				if (!c->spec) {
					call_run(c, 1);
				} else if (c->spec_done) {
					call_answer(c, command_result(c));
				} else {
					c->spec = 0;
					c->state = CALL_RUNNING;
					running_jobs++;
				}
				continue;
			}
			if (!indexer.running) {
				if (c->spec) {
					proc_release(&c->p);
					memset(&c->p, 0, sizeof(c->p));
					c->p.fd[0] = c->p.fd[1] = -1;
					c->p.out = (struct buf)BUF_INIT;
					c->p.err = (struct buf)BUF_INIT;
					c->spec = c->spec_done = 0;
				}
				c->state = CALL_QUEUED;
				if (running_jobs < max_jobs)
					call_after_index(c, 1);
			} else if (!c->force_index && now >= c->started + wait_s * 1000) {
				if (!c->spec) {
					call_after_index(c, 0);
					continue;
				}
				c->preparing = fallback_note();
				c->spec = 0;
				if (c->spec_done) {
					call_answer(c, command_result(c));
				} else {
					c->state = CALL_RUNNING;
					running_jobs++;
				}
			}
		}
	}
}

static int call_uses_id(struct session *sess, json_t *id)
{
	for (struct call *c = calls; c; c = c->next)
		if (c->st->sess == sess && json_equal(c->id, id))
			return 1;
	return 0;
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

/* ---- the built-in read tool ---- */

/* Read path at ref through libgit2 into *data; NULL, or a message to free. */
static char *read_at_ref(const char *ref, const char *rel, char **data, size_t *n)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *ent = NULL;
	git_blob *blob = NULL;
	char *why = NULL;

	if (git_repository_open(&repo, root) < 0) {
		why = xasprintf("parameter 'ref': '%s' is not a git repository", root);
		goto done;
	}
	if (git_revparse_single(&obj, repo, ref) < 0 ||
	    git_object_peel((git_object **)&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		why = xasprintf("parameter 'ref': '%s' is not a branch, tag or commit of the repository", ref);
		goto done;
	}
	if (git_commit_tree(&tree, commit) < 0 || git_tree_entry_bypath(&ent, tree, rel) < 0) {
		why = xasprintf("parameter 'path': '%s' does not exist at '%s'", rel, ref);
		goto done;
	}
	if (git_tree_entry_type(ent) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(ent)) < 0) {
		why = xasprintf("parameter 'path': '%s' is not a file at '%s'", rel, ref);
		goto done;
	}
	*n = (size_t)git_blob_rawsize(blob);
	*data = xmalloc(*n + 1);
	memcpy(*data, git_blob_rawcontent(blob), *n);
	(*data)[*n] = '\0';
done:
	git_blob_free(blob);
	git_tree_entry_free(ent);
	git_tree_free(tree);
	git_commit_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return why;
}

/*
 * Whether ref names what the working tree holds: HEAD, or the branch checked out
 * (by its name or refs/heads/ name).  Then the work tree is read, edits included.
 */
static int ref_is_worktree(const char *ref)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	int yes = !strcmp(ref, "HEAD");

	if (!yes && git_repository_open(&repo, root) == 0 && git_repository_head(&head, repo) == 0 &&
	    git_reference_is_branch(head))
		yes = !strcmp(ref, git_reference_shorthand(head)) || !strcmp(ref, git_reference_name(head));
	git_reference_free(head);
	git_repository_free(repo);
	return yes;
}

static json_t *builtin_read(json_t *args)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *ref = json_string_value(json_object_get(args, "ref"));
	const char *why = NULL;
	char *rel;

	/* a table may ask for the work tree when ref names it (abstract's get_file) */
	if (ref && json_is_true(json_object_get(args, "ref_worktree")) && ref_is_worktree(ref))
		ref = NULL;
	rel = ref ? confine_lexical(path, &why) : confine(path, &why);
	char *data = NULL, *err = NULL;
	size_t n = 0, line = 1, nlines = 0;
	long start, end, ctx, first;
	struct buf text = BUF_INIT;
	json_t *r = NULL, *sc;
	const char *p, *e;
	int truncated = 0;

	if (!rel)
		return tool_error("parameter 'path': '%s' %s", path, why);
	if (ref) {
		err = read_at_ref(ref, rel, &data, &n);
		if (err) {
			r = tool_error("%s", err);
			free(err);
			goto done;
		}
	} else {
		char *abs = xasprintf("%s/%s", root, rel);
		struct stat st;
		if (stat(abs, &st) == 0 && S_ISDIR(st.st_mode)) {
			free(abs);
			r = tool_error("parameter 'path': '%s' is a directory, not a file", rel);
			goto done;
		}
		if (read_file(abs, &data, &n) < 0) {
			free(abs);
			r = tool_error("parameter 'path': cannot read '%s': %s", rel, strerror(errno));
			goto done;
		}
		free(abs);
	}
	if (memchr(data, '\0', n < 8000 ? n : 8000)) {
		r = tool_error("parameter 'path': '%s' is a binary file", rel);
		goto done;
	}
	for (p = data; p < data + n; p = e + 1, nlines++)
		if (!(e = memchr(p, '\n', (size_t)(data + n - p))))
			e = data + n;
	ctx = json_integer_value(json_object_get(args, "context"));
	start = json_is_integer(json_object_get(args, "start_line")) ?
		(long)json_integer_value(json_object_get(args, "start_line")) : 1;
	end = json_is_integer(json_object_get(args, "end_line")) ?
	      (long)json_integer_value(json_object_get(args, "end_line")) : 0;
	if (end && end < start) {
		r = tool_error("parameter 'end_line' (%ld) must not be before 'start_line' (%ld)", end, start);
		goto done;
	}
	if (start > 1 && (size_t)start > nlines) {
		r = tool_error("parameter 'start_line' must be from 1 to %zu (the lines of '%s'), got %ld",
			       nlines, rel, start);
		goto done;
	}
	first = start - ctx > 1 ? start - ctx : 1;
	if (end)
		end += ctx;
	for (p = data; p < data + n; p = e + 1, line++) {
		e = memchr(p, '\n', (size_t)(data + n - p));
		if (!e)
			e = data + n;
		if ((long)line < first)
			continue;
		if (end && (long)line > end)
			break;
		if (text.len > max_output) {
			truncated = 1;
			break;
		}
		buf_addf(&text, "%6zu\t", line);
		buf_add(&text, p, (size_t)(e - p));
		buf_addch(&text, '\n');
	}
	sc = json_pack("{s:s, s:i, s:i, s:i, s:s%}", "path", rel, "start_line", (json_int_t)first,
		       "end_line", (json_int_t)(line - 1), "total_lines", (json_int_t)nlines,
		       "text", text.buf, text.len);
	if (!json_object_get(sc, "text"))	/* not UTF-8 */
		json_object_set_new(sc, "text", json_string("(the file is not UTF-8 text)"));
	if (ref)
		json_object_set_new(sc, "ref", json_string(ref));
	{
		const struct lang *l = lang_detect(rel, data, n < 4096 ? n : 4096);
		json_object_set_new(sc, "lang", l ? json_string(l->name) : json_null());
	}
	if (truncated)
		json_object_set_new(sc, "truncated", json_true());
	r = json_pack("{s:[{s:s, s:O}], s:o}", "content", "type", "text",
		      "text", json_object_get(sc, "text"), "structuredContent", sc);
done:
	buf_release(&text);
	free(data);
	free(rel);
	return r;
}

/*
 * Refuse a call's arguments: a tool error saying why, or, for a tool with
 * "map_errors", what its output program makes of {"args", "error"}.
 */
static void reply_invalid(struct stream *st, json_t *id, json_t *tool, json_t *args, const char *why)
{
	if (json_object_get(tool, "output") && json_is_true(json_object_get(tool, "map_errors")))
		reply(st, id, mapped_result(tool, json_pack("{s:O, s:[], s:i, s:s, s:s}", "args", args,
							    "records", "exit", 2, "message", why, "error", why)));
	else
		reply(st, id, tool_error("%s", why));
}

/* Confine a path parameter's value (a string or an array of them) in place; NULL or why not. */
static char *confine_param(json_t *args, const char *k, json_t *v)
{
	json_t *e;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			const char *w = NULL;
			char *rel = json_is_string(e) ? confine(json_string_value(e), &w) : NULL;
			if (!rel)
				return xasprintf("parameter '%s': '%s' %s", k, json_string_value(e),
						 w ? w : "is not a path");
			json_array_set_new(v, i, json_string(rel));
			free(rel);
		}
	} else if (json_is_string(v)) {
		const char *w = NULL;
		char *rel = confine(json_string_value(v), &w);
		if (!rel)
			return xasprintf("parameter '%s': '%s' %s", k, json_string_value(v), w);
		json_object_set_new(args, k, json_string(rel));
		free(rel);
	}
	return NULL;
}

/*
 * With --repo, the call's "repo" argument (default: the first repository)
 * becomes the root its paths are confined to and its command runs in, and
 * args.repo names it for the output program.  NULL or why not.
 */
static char *pick_repo(json_t *schema, json_t *args)
{
	const char *want = json_string_value(json_object_get(args, "repo"));
	struct buf b = BUF_INIT;
	size_t i;

	root = home;
	if (!json_object_get(json_object_get(schema, "properties"), "repo"))
		return NULL;
	/* bobbin's "all": one command answers for one repository */
	if (want && !strcmp(want, "all")) {
		if (repos_nr > 1) {
			for (i = 0; i < repos_nr; i++)
				buf_addf(&b, "%s%s", i ? ", " : "", repos[i].name);
			char *why = xasprintf("parameter 'repo': 'all' answers for one repository and "
					      "this server has %zu: name one (%s)", repos_nr, b.buf);
			buf_release(&b);
			return why;
		}
		want = NULL;
	}
	for (i = 0; i < repos_nr; i++)
		if (!want || !strcmp(want, repos[i].name)) {
			root = repos[i].root;
			json_object_set_new(args, "repo", json_string(repos[i].name));
			return NULL;
		}
	for (i = 0; i < repos_nr; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", repos[i].name);
	{
		char *why = xasprintf("parameter 'repo': unknown repository '%s' (known: %s)", want, b.buf);
		buf_release(&b);
		return why;
	}
}

/*
 * A tools/call: validate, confine paths, then answer at once (an error, a
 * built-in) or queue a call for the loop.
 */
static void queue_call(struct stream *st, json_t *id, json_t *tool, json_t *args, json_t *token, int resource);

static void tools_call(struct stream *st, json_t *id, json_t *tool, json_t *args, json_t *token)
{
	json_t *schema = json_object_get(tool, "inputSchema"), *props;
	const char *k;
	json_t *v;
	char *why;

	args = args ? json_deep_copy(args) : json_object();
	if ((why = validate(schema, args))) {
		reply_invalid(st, id, tool, args, why);
		free(why);
		json_decref(args);
		return;
	}
	if (json_is_true(json_object_get(tool, shards_repo_key))) {
		root = home;	/* --shards: "repo" names shards (shards_argv), not a --repo */
	} else if ((why = pick_repo(schema, args))) {
		reply_invalid(st, id, tool, args, why);
		free(why);
		json_decref(args);
		return;
	}
	if (json_is_string(json_object_get(tool, "builtin"))) {
		/* its input program, then the built-in, then its output program on that */
		json_t *prepared = mcp_map_prepare(tool, args, &why), *r;
		if (!prepared) {
			reply_invalid(st, id, tool, args, why);
			free(why);
			json_decref(args);
			return;
		}
		json_decref(args);
		r = builtin_read(prepared);
		if (json_object_get(tool, "output") && !json_is_true(json_object_get(r, "isError"))) {
			json_t *in = json_pack("{s:O, s:[O], s:i}", "args", prepared, "records",
					       json_object_get(r, "structuredContent"), "exit", 0);
			json_decref(r);
			r = mapped_result(tool, in);
		}
		reply(st, id, r);
		json_decref(prepared);
		return;
	}
	/* parameters that are paths stay inside the repository */
	props = json_object_get(schema, "properties");
	json_object_foreach(args, k, v) {
		json_t *pp = json_object_get(props, k);
		const char *fmt = json_string_value(json_object_get(pp, "format"));
		if (!fmt)
			fmt = json_string_value(json_object_get(json_object_get(pp, "items"), "format"));
		if (fmt && !strcmp(fmt, "path") && (why = confine_param(args, k, v))) {
			reply_invalid(st, id, tool, args, why);
			free(why);
			json_decref(args);
			return;
		}
	}
	{
		json_t *prepared = mcp_map_prepare(tool, args, &why);
		if (!prepared) {
			reply_invalid(st, id, tool, args, why);
			free(why);
			json_decref(args);
			return;
		}
		json_decref(args);
		args = prepared;
	}
	if (!pick_argv(tool, args)) {
		struct buf b = BUF_INIT;
		json_t *var;
		size_t i;
		json_array_foreach(json_object_get(tool, "variants"), i, var) {
			const char *w = json_string_value(json_object_get(var, "when"));
			size_t l = w ? strcspn(w, "=") : 0;
			if (l && !strstr(b.buf, w))
				buf_addf(&b, "%s%.*s", b.len ? ", " : "", (int)l, w);
		}
		reply(st, id, tool_error("give one of these parameters: %s", b.buf));
		buf_release(&b);
		json_decref(args);
		return;
	}
	queue_call(st, id, tool, args, token, 0);
}

/* Queue a call of tool (a tool, or a resource when resource) for the loop; steals args. */
static void queue_call(struct stream *st, json_t *id, json_t *tool, json_t *args, json_t *token, int resource)
{
	struct call *c, **tail;
	const char *rp;

	c = xcalloc(1, sizeof(*c));
	c->resource = resource;
	c->id = json_incref(id);
	c->st = st;
	if (st->http) {
		pthread_mutex_lock(&http_lock);
		st->refs++;
		pthread_mutex_unlock(&http_lock);
	}
	c->tool = tool;
	c->args = args;
	c->token = json_incref(token);
	c->state = CALL_QUEUED;
	/* a shard set's indexes are built by ci fleet, not here */
	c->wants_index = !shards && json_is_true(json_object_get(tool, "index"));
	c->root = root;
	rp = json_string_value(json_object_get(tool, "refresh"));
	c->force_index = rp && json_is_true(json_object_get(args, rp));
	c->started = now_ms();
	c->deadline = c->started + timeout_s * 1000;
	c->next_tick = c->started + 1000;
	c->p.pid = 0;
	c->p.fd[0] = c->p.fd[1] = -1;
	c->p.out = (struct buf)BUF_INIT;
	c->p.err = (struct buf)BUF_INIT;
	for (tail = &calls; *tail; tail = &(*tail)->next)
		;
	*tail = c;
}

/* notifications/cancelled: kill the call's group; answer nothing for it. */
static void cancel(struct session *sess, json_t *rid, const char *reason)
{
	for (struct call *c = calls; c; c = c->next) {
		if (c->st->sess != sess || !json_equal(c->id, rid))
			continue;
		logmsg(NULL, LOG_INFO, "cancelled a call of %s%s%s", json_string_value(json_object_get(c->tool, "name")),
		       reason ? ": " : "", reason ? reason : "");
		call_unlink(c);
		stream_close(c->st);
		call_free(c);
		return;
	}
}

static json_t *tools_list(void)
{
	json_t *tools = json_array(), *t;
	size_t i;

	json_array_foreach(json_object_get(table, "tools"), i, t) {
		json_t *o = json_pack("{s:O, s:O, s:O}", "name", json_object_get(t, "name"),
				      "description", json_object_get(t, "description"),
				      "inputSchema", json_object_get(t, "inputSchema"));
		if (json_object_get(t, "title"))
			json_object_set(o, "title", json_object_get(t, "title"));
		if (json_object_get(t, "outputSchema"))
			json_object_set(o, "outputSchema", json_object_get(t, "outputSchema"));
		if (json_object_get(t, "annotations"))
			json_object_set(o, "annotations", json_object_get(t, "annotations"));
		json_array_append_new(tools, o);
	}
	return json_pack("{s:o}", "tools", tools);
}

/* Handle one JSON-RPC message from the client behind st (which this borrows). */
static void handle(struct stream *st, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (!json_is_object(msg)) {
		reply_error(st, NULL, -32600, "invalid request: expected a JSON-RPC 2.0 request object");
		return;
	}
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		reply_error(st, NULL, -32600, "invalid request: id must be a string or an integer");
		return;
	}
	if (!method) {
		if (json_object_get(msg, "result") || json_object_get(msg, "error"))
			return;		/* a response: the server asks nothing, so nothing to match */
		reply_error(st, id, -32600, "invalid request: expected a JSON-RPC 2.0 request object");
		return;
	}
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0")) {
		if (id)
			reply_error(st, id, -32600, "invalid request: \"jsonrpc\" must be \"2.0\"");
		return;
	}
	if (params && !json_is_object(params)) {
		if (id)
			reply_error(st, id, -32602, "params must be an object");
		return;
	}
	if (verbosity)
		fprintf(stderr, "%s: %s\n", progname, method);
	if (!id) {
		if (!strcmp(method, "notifications/cancelled"))
			cancel(st->sess, json_object_get(params, "requestId"),
			       json_string_value(json_object_get(params, "reason")));
		return;		/* initialized, and notifications we do not know */
	}
	if (!strcmp(method, "initialize")) {
		const char *want = json_string_value(json_object_get(params, "protocolVersion"));
		const char *v = versions[0];
		for (size_t i = 0; want && i < ARRAY_SIZE(versions); i++)
			if (!strcmp(want, versions[i]))
				v = versions[i];
		json_t *res = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}, s:s}",
					"protocolVersion", v,
					"capabilities", "tools", "listChanged", 0, "logging",
					"serverInfo", "name", "ci", "version", PACKAGE_VERSION,
					"instructions", json_string_value(json_object_get(table, "instructions")) ?
					json_string_value(json_object_get(table, "instructions")) :
					"ci serves code search over the repository it was started in.");
		if (json_is_array(json_object_get(table, "resources")))	/* only profiles that have some */
			json_object_set_new(json_object_get(res, "capabilities"), "resources",
					    json_pack("{s:b, s:b}", "subscribe", 0, "listChanged", 0));
		reply(st, id, res);
	} else if (!strcmp(method, "ping")) {
		reply(st, id, json_object());
	} else if (!strcmp(method, "logging/setLevel")) {
		const char *l = json_string_value(json_object_get(params, "level"));
		int lv = -1;
		for (size_t i = 0; l && i < ARRAY_SIZE(log_levels); i++)
			if (!strcmp(l, log_levels[i]))
				lv = (int)i;
		if (lv < 0) {
			reply_error(st, id, -32602, "params.level must be one of debug, info, notice, warning, "
				    "error, critical, alert, emergency");
			return;
		}
		pthread_mutex_lock(&http_lock);
		st->sess->log_level = lv;
		pthread_mutex_unlock(&http_lock);
		reply(st, id, json_object());
	} else if (!strcmp(method, "tools/list")) {
		reply(st, id, tools_list());
	} else if (json_is_array(json_object_get(table, "resources")) && !strcmp(method, "resources/list")) {
		json_t *list = json_array(), *r;
		size_t i;
		json_array_foreach(json_object_get(table, "resources"), i, r) {
			json_t *o = json_pack("{s:O, s:O}", "uri", json_object_get(r, "uri"), "name", json_object_get(r, "name"));
			static const char *const opt[] = { "title", "description", "mimeType" };
			for (size_t k = 0; k < ARRAY_SIZE(opt); k++)
				if (json_object_get(r, opt[k]))
					json_object_set(o, opt[k], json_object_get(r, opt[k]));
			json_array_append_new(list, o);
		}
		reply(st, id, json_pack("{s:o}", "resources", list));
	} else if (json_is_array(json_object_get(table, "resources")) && !strcmp(method, "resources/templates/list")) {
		reply(st, id, json_pack("{s:[]}", "resourceTemplates"));
	} else if (json_is_array(json_object_get(table, "resources")) && !strcmp(method, "resources/read")) {
		const char *uri = json_string_value(json_object_get(params, "uri"));
		json_t *r = NULL, *x;
		size_t i;
		json_array_foreach(json_object_get(table, "resources"), i, x)
			if (uri && !strcmp(uri, json_string_value(json_object_get(x, "uri"))))
				r = x;
		if (!uri) {
			reply_error(st, id, -32602, "resources/read needs params.uri, a string");
		} else if (!r) {
			char *m = xasprintf("resource not found: '%s'", uri);
			reply_error(st, id, -32002, m);
			free(m);
		} else if (call_uses_id(st->sess, id)) {
			reply_error(st, id, -32600, "invalid request: a request with this id is in progress");
		} else {
			root = home;
			queue_call(st, id, r, json_object(), NULL, 1);
		}
	} else if (!strcmp(method, "tools/call")) {
		const char *name = json_string_value(json_object_get(params, "name"));
		json_t *tool = name ? find_tool(name) : NULL;
		json_t *args = json_object_get(params, "arguments");
		json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
		if (!name) {
			reply_error(st, id, -32602, "tools/call needs params.name, a string");
		} else if (!tool) {
			char *m = xasprintf("unknown tool '%s'", name);
			reply_error(st, id, -32602, m);
			free(m);
		} else if (args && !json_is_object(args)) {
			reply_error(st, id, -32602, "params.arguments must be an object");
		} else if (call_uses_id(st->sess, id)) {
			reply_error(st, id, -32600, "invalid request: a request with this id is in progress");
		} else {
			if (token && !json_is_string(token) && !json_is_integer(token))
				token = NULL;
			tools_call(st, id, tool, args, token);
		}
	} else {
		char *m = xasprintf("method not found: '%s'", method);
		reply_error(st, id, -32601, m);
		free(m);
	}
}

/* Parse one line from stdin and handle it. */
static void handle_line(const char *s, size_t n)
{
	json_error_t jerr;
	json_t *msg;

	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return;
	msg = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!msg) {
		char *m = xasprintf("parse error: %s", jerr.text);
		reply_error(&stdio_stream, NULL, -32700, m);
		free(m);
		return;
	}
	if (json_is_array(msg))
		reply_error(&stdio_stream, NULL, -32600, "invalid request: batches are not supported");
	else
		handle(&stdio_stream, msg);
	json_decref(msg);
}

/* ---- HTTP: Streamable HTTP transport (MCP 2025-06-18) ---- */

/* A message from a connection thread for the loop. */
struct inmsg {
	struct inmsg *next;
	json_t *msg;		/* owned */
	struct stream *st;	/* a reference */
	int close_session;	/* DELETE: cancel the session's calls */
};

static struct inmsg *inbox, **inbox_tail = &inbox;
static int wake_pipe[2] = { -1, -1 };
static int http_loopback;	/* bound to a loopback address: check Host too */
static long http_port;		/* the port listened on */
static const char *http_token;	/* CI_MCP_TOKEN */
static char **allow_origins;
static size_t allow_origins_nr, allow_origins_alloc;
#define MAX_BODY (16 << 20)
#define MAX_SESSIONS 1000

static void inbox_put(json_t *msg, struct stream *st, int close_session)
{
	struct inmsg *m = xcalloc(1, sizeof(*m));
	char c = 1;

	m->msg = msg;
	m->st = st;
	m->close_session = close_session;
	pthread_mutex_lock(&http_lock);
	*inbox_tail = m;
	inbox_tail = &m->next;
	pthread_mutex_unlock(&http_lock);
	if (write(wake_pipe[1], &c, 1) < 0 && errno != EAGAIN)
		warning("cannot wake the loop: %s", strerror(errno));
}

static void drain_inbox(void)
{
	for (;;) {
		struct inmsg *m;

		pthread_mutex_lock(&http_lock);
		m = inbox;
		if (m) {
			inbox = m->next;
			if (!inbox)
				inbox_tail = &inbox;
		}
		pthread_mutex_unlock(&http_lock);
		if (!m)
			return;
		if (m->close_session) {
			struct call *c, *next;
			for (c = calls; c; c = next) {
				next = c->next;
				if (c->st->sess == m->st->sess) {
					call_unlink(c);
					stream_close(c->st);
					call_free(c);
				}
			}
		} else {
			handle(m->st, m->msg);
		}
		json_decref(m->msg);
		stream_unref(m->st);
		free(m);
	}
}

/*
 * An origin or a Host header taken apart: "scheme://host[:port]" (an Origin)
 * or "host[:port]" (a Host).  Exact parts, so that a prefix such as
 * "127.0.0.1.evil.com" or "127.0.0.1:80@evil.com" is no loopback name.
 */
struct url_auth {
	int https;		/* the scheme is https (an Origin) */
	char host[256];		/* lowercase; an IPv6 address without its brackets */
	int is_ipv6;		/* host was in brackets */
	long port;		/* -1: none given */
};

/*
 * Parse s as a web origin (with_scheme: "http[s]://host[:port]", nothing
 * after) or a Host header (host[:port]).  0, or -1 when s is not one: a path,
 * user information, a query, a character a host name cannot have, a bad port.
 */
static int auth_parse(struct url_auth *u, const char *s, int with_scheme)
{
	const char *h, *end;
	size_t n;

	memset(u, 0, sizeof(*u));
	u->port = -1;
	if (with_scheme) {
		if (!strncasecmp(s, "http://", 7)) {
			s += 7;
		} else if (!strncasecmp(s, "https://", 8)) {
			u->https = 1;
			s += 8;
		} else {
			return -1;
		}
	}
	if (*s == '[') {
		h = ++s;
		end = strchr(h, ']');
		if (!end)
			return -1;
		u->is_ipv6 = 1;
		for (const char *p = h; p < end; p++)
			if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
				return -1;
		s = end + 1;
	} else {
		h = s;
		while (isalnum((unsigned char)*s) || *s == '.' || *s == '-')
			s++;
		end = s;
	}
	n = (size_t)(end - h);
	if (!n || n >= sizeof(u->host))
		return -1;
	for (size_t i = 0; i < n; i++)
		u->host[i] = (char)tolower((unsigned char)h[i]);
	u->host[n] = '\0';
	if (*s == ':') {
		char *e;
		if (!isdigit((unsigned char)s[1]))
			return -1;
		errno = 0;
		u->port = strtol(s + 1, &e, 10);
		if (errno || u->port < 1 || u->port > 65535 || e - s > 6)
			return -1;
		s = e;
	}
	return *s ? -1 : 0;
}

/* The port u means: the one given, else its scheme's. */
static long auth_port(const struct url_auth *u)
{
	return u->port >= 0 ? u->port : u->https ? 443 : 80;
}

/* A loopback name or address: localhost, 127.0.0.0/8 (dotted quad), ::1. */
static int loopback_name(const struct url_auth *u)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (u->is_ipv6)
		return inet_pton(AF_INET6, u->host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	if (!strcmp(u->host, "localhost"))
		return 1;
	return inet_pton(AF_INET, u->host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/*
 * A browser's Origin: a loopback page (http or https, any port), or one given
 * with --allow-origin (the same scheme, host and port; an --allow-origin that
 * is no http(s) origin matches only itself, byte for byte).
 */
static int origin_ok(const char *o)
{
	struct url_auth u, a;
	int parsed = auth_parse(&u, o, 1) == 0;

	for (size_t i = 0; i < allow_origins_nr; i++) {
		if (!strcmp(o, allow_origins[i]))
			return 1;
		if (parsed && auth_parse(&a, allow_origins[i], 1) == 0 && a.https == u.https &&
		    a.is_ipv6 == u.is_ipv6 && !strcmp(a.host, u.host) && auth_port(&a) == auth_port(&u))
			return 1;
	}
	return parsed && loopback_name(&u);
}

/* A Host header while listening on loopback: a loopback name, and our port. */
static int host_ok(const char *h)
{
	struct url_auth u;

	return auth_parse(&u, h, 0) == 0 && loopback_name(&u) && auth_port(&u) == http_port;
}

static enum MHD_Result http_send(struct MHD_Connection *conn, unsigned status, const char *type,
				 const char *body, const char *session_id)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, POST, DELETE");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* An HTTP error with a JSON-RPC error body. */
static enum MHD_Result http_error(struct MHD_Connection *conn, unsigned status, int code, const char *msg)
{
	json_t *m = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code", code,
			      "message", msg);
	char *s = json_dumps(m, JSON_COMPACT);
	enum MHD_Result ret = http_send(conn, status, "application/json", s, NULL);

	free(s);
	json_decref(m);
	return ret;
}

/* A server-sent event stream reading st. */
struct sse {
	struct stream *st;	/* a reference */
	struct buf cur;		/* the event being written */
	size_t off;		/* how much of cur is written */
};

/*
 * The client closed the connection of socket fd (or it failed): it will read
 * no more.  Cannot fail.
 */
static int peer_gone(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLRDHUP };

	return fd >= 0 && poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/*
 * The client of st hung up: nothing more goes to st, and a session's GET
 * stream frees its slot at once, so that the client can open another (it
 * would wait for the next keep-alive's failed write otherwise).  Call with
 * http_lock held.
 */
static void stream_hung_up_locked(struct stream *st)
{
	st->gone = 1;
	st->closed = 1;
	st->fd = -1;
	if (st->sess && st->sess->get == st)
		st->sess->get = NULL;
	pthread_cond_broadcast(&st->cond);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct sse *e = cls;
	struct stream *st = e->st;
	size_t n;

	(void)pos;
	if (e->off >= e->cur.len) {
		long long keep_alive = now_ms() + 15000;

		buf_reset(&e->cur);
		e->off = 0;
		pthread_mutex_lock(&http_lock);
		/* wait for a message, a keep-alive's time, or the client to hang up */
		while (st->q_head == st->q_nr && !st->closed && !stopping) {
			struct timespec ts;
			if (peer_gone(st->fd)) {
				stream_hung_up_locked(st);
				pthread_mutex_unlock(&http_lock);
				return MHD_CONTENT_READER_END_OF_STREAM;	/* quietly: no error log */
			}
			if (now_ms() >= keep_alive)
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 250 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&st->cond, &http_lock, &ts);
		}
		if (st->q_head < st->q_nr) {
			char *s = st->q[st->q_head++];
			buf_addf(&e->cur, "event: message\ndata: %s\n\n", s);
			free(s);
		} else if (!st->closed && !stopping) {
			buf_addstr(&e->cur, ": keep-alive\n\n");
		}
		pthread_mutex_unlock(&http_lock);
		if (!e->cur.len)
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = e->cur.len - e->off < max ? e->cur.len - e->off : max;
	memcpy(out, e->cur.buf + e->off, n);
	e->off += n;
	return (ssize_t)n;
}

static void sse_free(void *cls)
{
	struct sse *e = cls;

	pthread_mutex_lock(&http_lock);
	e->st->gone = 1;
	e->st->fd = -1;
	stream_unref_locked(e->st);
	pthread_mutex_unlock(&http_lock);
	buf_release(&e->cur);
	free(e);
}

static enum MHD_Result http_sse(struct MHD_Connection *conn, struct stream *st, const char *session_id)
{
	struct sse *e = xcalloc(1, sizeof(*e));
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct MHD_Response *r;
	enum MHD_Result ret;

	e->st = st;
	e->cur = (struct buf)BUF_INIT;
	pthread_mutex_lock(&http_lock);
	st->fd = ci ? ci->connect_fd : -1;
	pthread_mutex_unlock(&http_lock);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, e, sse_free);
	if (!r) {
		sse_free(e);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Wait for st's answer and send it as one JSON body (progress and logs dropped). */
static enum MHD_Result http_json_answer(struct MHD_Connection *conn, struct stream *st, const char *session_id)
{
	char *last = NULL;
	enum MHD_Result ret;

	pthread_mutex_lock(&http_lock);
	while (!st->closed && !stopping)
		pthread_cond_wait(&st->cond, &http_lock);
	while (st->q_head < st->q_nr) {
		free(last);
		last = st->q[st->q_head++];
	}
	st->gone = 1;
	stream_unref_locked(st);
	pthread_mutex_unlock(&http_lock);
	if (!last && stopping)
		return http_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "the server is stopping");
	if (!last)
		return http_error(conn, MHD_HTTP_OK, -32800, "the request was cancelled");
	ret = http_send(conn, MHD_HTTP_OK, "application/json", last, session_id);
	free(last);
	return ret;
}

static struct session *session_find(const char *id)
{
	struct session *s;

	for (s = sessions; s; s = s->next)
		if (!strcmp(s->id, id))
			return s;
	return NULL;
}

static struct session *session_new(void)
{
	struct session *s = xcalloc(1, sizeof(*s));
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		sprintf(s->id + 2 * i, "%02x", r[i]);
	s->log_level = -1;
	s->next = sessions;
	sessions = s;
	sessions_nr++;
	return s;
}

/* s[0..n) is type, ignoring case and the spaces around it. */
static int media_type_is(const char *s, size_t n, const char *type)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == strlen(type) && !strncasecmp(s, type, n);
}

/*
 * A header whose value is the media type type, parameters (such as
 * "; charset=utf-8") allowed.
 */
static int header_type_is(struct MHD_Connection *conn, const char *header, const char *type)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, header);

	return v && media_type_is(v, strcspn(v, ";"), type);
}

/*
 * The Accept header lists type by name, with no q=0: as the MCP SDKs do,
 * a wildcard (a browser's "*" "/" "*") does not count, and neither does a
 * missing header, since the transport says clients must list the types.
 */
static int accepts(struct MHD_Connection *conn, const char *type)
{
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	while (a && *a) {
		size_t n = strcspn(a, ","), t = strcspn(a, ";,");
		if (media_type_is(a, t, type)) {
			/* a parameter q=0, q=0.0 ... refuses it */
			const char *p = a + t;
			while (p < a + n) {
				const char *q;
				p++;
				while (*p == ' ' || *p == '\t')
					p++;
				q = p;
				p += strcspn(p, ";,");
				if (!strncasecmp(q, "q=0", 3) && strspn(q + 3, "0.") == (size_t)(p - q - 3))
					return 0;
			}
			return 1;
		}
		a += n;
		if (*a)
			a++;
	}
	return 0;
}

/* Constant-time comparison of the bearer token. */
static int token_ok(const char *auth)
{
	size_t n = strlen(http_token), m;
	unsigned char d = 0;

	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return 0;
	auth += 7;
	m = strlen(auth);
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)http_token[i] ^ (unsigned char)(i < m ? auth[i] : 0);
	return !d && m == n;
}

struct http_req {
	struct buf body;	/* the POST body */
	int too_big;		/* over MAX_BODY */
};

static enum MHD_Result http_post(struct MHD_Connection *conn, struct http_req *rq, struct session *sess)
{
	json_error_t jerr;
	json_t *msg, *id;
	const char *method;
	struct stream *st;
	int is_init, want_sse;

	if (rq->too_big)
		return http_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32600, "the request body is too large");
	msg = json_loadb(rq->body.buf, rq->body.len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!msg) {
		char *m = xasprintf("parse error: %s", jerr.text);
		enum MHD_Result ret = http_error(conn, MHD_HTTP_BAD_REQUEST, -32700, m);
		free(m);
		return ret;
	}
	if (!json_is_object(msg)) {
		json_decref(msg);
		return http_error(conn, MHD_HTTP_BAD_REQUEST, -32600,
				  "invalid request: one JSON-RPC message per POST (batches are not supported)");
	}
	method = json_string_value(json_object_get(msg, "method"));
	id = json_object_get(msg, "id");
	is_init = method && id && !strcmp(method, "initialize");
	if (is_init) {
		pthread_mutex_lock(&http_lock);
		sess = sessions_nr < MAX_SESSIONS ? session_new() : NULL;
		pthread_mutex_unlock(&http_lock);
		if (!sess) {
			json_decref(msg);
			return http_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "too many sessions");
		}
	} else if (!sess) {
		json_decref(msg);
		return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000,
				  "missing Mcp-Session-Id header: initialize first");
	}
	if (!method || !id) {
		/* a notification or a response: accepted, answered by nothing */
		st = stream_new(sess, 1);
		st->closed = 1;
		inbox_put(msg, st, 0);
		return http_send(conn, MHD_HTTP_ACCEPTED, NULL, "", NULL);
	}
	want_sse = !strcmp(method, "tools/call");	/* the client accepts both (on_request) */
	st = stream_new(sess, 2);
	inbox_put(msg, st, 0);
	if (want_sse)
		return http_sse(conn, st, is_init ? sess->id : NULL);
	return http_json_answer(conn, st, is_init ? sess->id : NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http_req *rq = *con_cls;
	const char *origin, *sid, *pv;
	struct session *sess = NULL;

	(void)cls;
	(void)version;
	if (!rq) {
		rq = xcalloc(1, sizeof(*rq));
		rq->body = (struct buf)BUF_INIT;
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > MAX_BODY)
			rq->too_big = 1;
		else
			buf_add(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (verbosity)
		fprintf(stderr, "%s: HTTP %s %s\n", progname, method, url);
	if (strcmp(url, "/mcp"))
		return http_error(conn, MHD_HTTP_NOT_FOUND, -32000, "not found: the MCP endpoint is /mcp");
	origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (origin && !origin_ok(origin))
		return http_error(conn, MHD_HTTP_FORBIDDEN, -32000, "forbidden: this Origin is not allowed");
	if (http_loopback) {
		const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
		if (host && !host_ok(host))
			return http_error(conn, MHD_HTTP_FORBIDDEN, -32000, "forbidden: this Host is not allowed");
	}
	if (http_token &&
	    !token_ok(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION)))
		return http_error(conn, MHD_HTTP_UNAUTHORIZED, -32000,
				  "unauthorized: send Authorization: Bearer <the token in CI_MCP_TOKEN>");
	pv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
	if (pv) {
		size_t i;
		for (i = 0; i < ARRAY_SIZE(versions) && strcmp(pv, versions[i]); i++)
			;
		if (i == ARRAY_SIZE(versions))
			return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000,
					  "unsupported MCP-Protocol-Version (2025-06-18, 2025-03-26, 2024-11-05)");
	}
	sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	if (sid) {
		pthread_mutex_lock(&http_lock);
		sess = session_find(sid);
		if (sess && sess->deleted)
			sess = NULL;
		pthread_mutex_unlock(&http_lock);
		if (!sess)
			return http_error(conn, MHD_HTTP_NOT_FOUND, -32001, "session not found: initialize again");
	}
	if (!strcmp(method, "POST")) {
		/*
		 * A browser sends a cross-site form or text/plain POST without
		 * asking first (a "simple request"); a JSON one it does not.
		 */
		if (!header_type_is(conn, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json"))
			return http_error(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
					  "unsupported media type: send Content-Type: application/json");
		if (!accepts(conn, "application/json") || !accepts(conn, "text/event-stream"))
			return http_error(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000,
					  "not acceptable: accept application/json and text/event-stream");
		return http_post(conn, rq, sess);
	}
	if (!strcmp(method, "GET")) {
		struct stream *st;
		if (!sess)
			return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000, "missing Mcp-Session-Id header");
		if (!accepts(conn, "text/event-stream"))
			return http_error(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000, "not acceptable: accept text/event-stream");
		pthread_mutex_lock(&http_lock);
		if (sess->get && (sess->get->gone || peer_gone(sess->get->fd)))
			stream_hung_up_locked(sess->get);	/* its client went away: the slot is free */
		if (sess->get) {
			pthread_mutex_unlock(&http_lock);
			return http_error(conn, MHD_HTTP_CONFLICT, -32000, "this session has a GET stream open already");
		}
		st = stream_new(sess, 1);
		st->is_get = 1;
		sess->get = st;
		pthread_mutex_unlock(&http_lock);
		return http_sse(conn, st, NULL);
	}
	if (!strcmp(method, "DELETE")) {
		struct stream *st;
		if (!sess)
			return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000, "missing Mcp-Session-Id header");
		pthread_mutex_lock(&http_lock);
		sess->deleted = 1;
		if (sess->get) {
			sess->get->closed = 1;
			pthread_cond_broadcast(&sess->get->cond);
		}
		pthread_mutex_unlock(&http_lock);
		st = stream_new(sess, 1);
		st->closed = 1;
		inbox_put(NULL, st, 1);
		return http_send(conn, MHD_HTTP_OK, NULL, "", NULL);
	}
	return http_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "method not allowed: GET, POST or DELETE");
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_req *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rq) {
		buf_release(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/* Start the HTTP server at addr ("host:port"); dies on a bad address. */
static void http_start(const char *addr, int allow_remote)
{
	const char *colon = strrchr(addr, ':');
	char *host;
	long port;
	char *end;
	struct sockaddr_in sa4;
	struct sockaddr_in6 sa6;
	struct sockaddr *sa;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;

	if (!colon)
		usage_error(usage_text, "--http needs host:port, not '%s'", addr);
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		usage_error(usage_text, "--http: bad port in '%s'", addr);
	host = xstrndup(addr, (size_t)(colon - addr));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (!strcmp(host, "localhost")) {
		free(host);
		host = xstrdup("127.0.0.1");
	}
	memset(&sa4, 0, sizeof(sa4));
	memset(&sa6, 0, sizeof(sa6));
	if (inet_pton(AF_INET, host, &sa4.sin_addr) == 1) {
		sa4.sin_family = AF_INET;
		sa4.sin_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&sa4;
		http_loopback = (ntohl(sa4.sin_addr.s_addr) >> 24) == 127;
	} else if (inet_pton(AF_INET6, host, &sa6.sin6_addr) == 1) {
		sa6.sin6_family = AF_INET6;
		sa6.sin6_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&sa6;
		flags |= MHD_USE_IPv6;
		http_loopback = IN6_IS_ADDR_LOOPBACK(&sa6.sin6_addr);
	} else {
		free(host);
		usage_error(usage_text, "--http: '%s' is not an IP address (or localhost)", addr);
	}
	if (!http_loopback && !allow_remote) {
		free(host);
		usage_error(usage_text, "--http: '%s' is not a loopback address: add --allow-remote "
			    "(and set CI_MCP_TOKEN)", addr);
	}
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("cannot make a pipe: %s", strerror(errno));
	daemon_ = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, NULL,
				   MHD_OPTION_SOCK_ADDR, sa,
				   MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
				   MHD_OPTION_END);
	if (!daemon_) {
		int e = errno;
		free(host);
		die("cannot listen on %s: %s", addr, strerror(e));
	}
	info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
	http_port = info ? (long)info->port : port;
	fprintf(stderr, "%s: serving http://%s%s%s:%u/mcp\n", progname,
		strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
		info ? (unsigned)info->port : (unsigned)port);
	fflush(stderr);
	free(host);
}

/* ---- the loop ---- */

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	stopping = 1;
	if (write(sig_pipe[1], &c, 1) < 0)
		(void)0;
	errno = saved;
}

/* Serve until stdin ends (stdio) or a signal (HTTP); returns the exit status. */
static int serve(int http)
{
	struct buf in = BUF_INIT;
	int stdin_open = !http, skipping = 0;
	struct pollfd *fds = NULL;
	struct call **fdcall = NULL;
	int *fdk = NULL;
	size_t fds_alloc = 0, fdcall_alloc = 0, fdk_alloc = 0;

	if (!http)
		fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	for (;;) {
		long long now = now_ms(), next = now + 60000;
		size_t nfds = 0, i;
		int rc;
		struct call *c, *cnext;

		advance_calls();
		if (stopping)
			break;
		if (!stdin_open && !http && !calls && !indexer.running)
			break;
		/* what to wait for */
		ALLOC_GROW(fds, 5, fds_alloc);
		ALLOC_GROW(fdcall, 5, fdcall_alloc);
		ALLOC_GROW(fdk, 5, fdk_alloc);
		fds[nfds] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
		fdcall[nfds] = NULL; fdk[nfds++] = -1;
		if (stdin_open) {
			fds[nfds] = (struct pollfd){ 0, POLLIN, 0 };
			fdcall[nfds] = NULL; fdk[nfds++] = -2;
		}
		if (http) {
			fds[nfds] = (struct pollfd){ wake_pipe[0], POLLIN, 0 };
			fdcall[nfds] = NULL; fdk[nfds++] = -3;
		}
		for (int k = 0; k < 2; k++)
			if (indexer.running && indexer.p.fd[k] >= 0) {
				fds[nfds] = (struct pollfd){ indexer.p.fd[k], POLLIN, 0 };
				fdcall[nfds] = NULL; fdk[nfds++] = k;
			}
		for (c = calls; c; c = c->next) {
			if (c->state == CALL_WAIT_INDEX && !c->force_index && c->started + wait_s * 1000 < next)
				next = c->started + wait_s * 1000;
			if (c->state == CALL_WAIT_INDEX && c->deadline < next)
				next = c->deadline;
			if (c->token && c->next_tick < next)
				next = c->next_tick;
			if (c->state != CALL_RUNNING && !(c->spec && !c->spec_done))
				continue;
			if (c->state == CALL_RUNNING && c->deadline < next)
				next = c->deadline;
			for (int k = 0; k < 2; k++)
				if (c->p.fd[k] >= 0) {
					ALLOC_GROW(fds, nfds + 1, fds_alloc);
					ALLOC_GROW(fdcall, nfds + 1, fdcall_alloc);
					ALLOC_GROW(fdk, nfds + 1, fdk_alloc);
					fds[nfds] = (struct pollfd){ c->p.fd[k], POLLIN, 0 };
					fdcall[nfds] = c; fdk[nfds++] = k;
				}
		}
		rc = poll(fds, nfds, next > now ? (int)(next - now) : 0);
		if (rc < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (i = 0; rc > 0 && i < nfds; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (fdk[i] == -1) {
				char tmp[16];
				if (read(sig_pipe[0], tmp, sizeof(tmp)) < 0)
					(void)0;
			} else if (fdk[i] == -3) {
				char tmp[256];
				while (read(wake_pipe[0], tmp, sizeof(tmp)) > 0)
					;
				drain_inbox();
			} else if (fdk[i] == -2) {
				char tmp[65536];
				ssize_t n = read(0, tmp, sizeof(tmp));
				if (n < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				if (n <= 0) {
					stdin_open = 0;
					if (in.len && !skipping)
						handle_line(in.buf, in.len);
					buf_reset(&in);
					continue;
				}
				for (const char *p = tmp, *e; p < tmp + n; p = e + 1) {
					e = memchr(p, '\n', (size_t)(tmp + n - p));
					if (!e) {
						if (!skipping)
							buf_add(&in, p, (size_t)(tmp + n - p));
						break;
					}
					if (!skipping) {
						buf_add(&in, p, (size_t)(e - p));
						handle_line(in.buf, in.len);
					}
					skipping = 0;
					buf_reset(&in);
				}
				if (in.len > (size_t)MAX_BODY * 4) {
					reply_error(&stdio_stream, NULL, -32700, "parse error: a message over 64 MiB");
					buf_release(&in);
					skipping = 1;
				}
			} else if (!fdcall[i]) {
				if (!indexer.running)
					continue;
				if (proc_read(&indexer.p, fdk[i]))
					indexer_finished();
				else if (fdk[i] == 1)
					indexer_progress();
			} else {
				/* a call's pipe; the call may be gone (answered earlier in this round) */
				for (c = calls; c && c != fdcall[i]; c = c->next)
					;
				if (!c || (c->state != CALL_RUNNING && !c->spec) || c->p.fd[fdk[i]] != fds[i].fd)
					continue;
				if (!proc_read(&c->p, fdk[i]))
					continue;
				if (c->state == CALL_RUNNING)
					call_answer(c, command_result(c));
				else
					c->spec_done = 1;
			}
		}
		/* time limits and progress */
		now = now_ms();
		for (c = calls; c; c = cnext) {
			cnext = c->next;
			if (c->state == CALL_WAIT_INDEX && now >= c->deadline) {
				call_answer(c, tool_error("the index was not ready within %ld seconds (--timeout)",
							  timeout_s));
				continue;
			}
			if (c->state == CALL_RUNNING && now >= c->deadline) {
				logmsg(c->st, LOG_WARNING, "%s: over the time limit of %ld s", c->label, timeout_s);
				call_answer(c, tool_error("the tool did not finish within %ld seconds (--timeout)",
							  timeout_s));
				continue;
			}
			if (c->token && now >= c->next_tick) {
				char *m = c->state == CALL_RUNNING ?
					  xasprintf("running %s (%lld s)", c->label, (now - c->started) / 1000) :
					  c->state == CALL_WAIT_INDEX ? indexer_doing_msg() :
					  xasprintf("waiting for a free slot (%lld s)", (now - c->started) / 1000);
				progress(c, m);
				free(m);
				c->next_tick = now + 1000;
			}
		}
	}
	buf_release(&in);
	free(fds);
	free(fdcall);
	free(fdk);
	return EXIT_OK;
}

/* Stop everything: calls, the indexer, the HTTP server; free what is left. */
static void shutdown_all(void)
{
	struct session *s, *snext;

	if (daemon_) {
		pthread_mutex_lock(&http_lock);
		stopping = 1;
		for (struct call *c = calls; c; c = c->next)
			pthread_cond_broadcast(&c->st->cond);
		for (s = sessions; s; s = s->next)
			if (s->get)
				pthread_cond_broadcast(&s->get->cond);
		for (struct inmsg *m = inbox; m; m = m->next)
			pthread_cond_broadcast(&m->st->cond);
		pthread_mutex_unlock(&http_lock);
	}
	while (calls) {
		struct call *c = calls;
		calls = c->next;
		stream_close(c->st);
		call_free(c);
	}
	if (daemon_) {
		MHD_stop_daemon(daemon_);
		daemon_ = NULL;
		for (;;) {
			struct inmsg *m = inbox;
			if (!m)
				break;
			inbox = m->next;
			json_decref(m->msg);
			stream_unref(m->st);
			free(m);
		}
		inbox_tail = &inbox;
	}
	if (indexer.running) {
		kill(-indexer.p.pid, SIGTERM);
		indexer.running = 0;
	}
	if (indexer.p.pid > 0) {
		/* give ci-index a moment to leave its index consistent */
		for (int i = 0; i < 50 && waitpid(indexer.p.pid, NULL, WNOHANG) == 0; i++)
			usleep(100000);
		proc_release(&indexer.p);
	}
	free(indexer.last_error);
	for (s = sessions; s; s = snext) {
		snext = s->next;
		free(s);
	}
	sessions = NULL;
	for (size_t i = 0; i < allow_origins_nr; i++)
		free(allow_origins[i]);
	free(allow_origins);
	for (int k = 0; k < 2; k++) {
		if (wake_pipe[k] >= 0)
			close(wake_pipe[k]);
		if (sig_pipe[k] >= 0)
			close(sig_pipe[k]);
	}
}

/* ---- the table ---- */

/* Check that a tool table has what the server relies on; dies naming what is wrong. */
static void check_table(json_t *t, const char *name)
{
	json_t *tools = json_object_get(t, "tools"), *tool;
	size_t i;

	if (!json_is_array(tools))
		die("%s: the table has no \"tools\" array", name);
	if (json_object_get(t, "config")) {
		json_t *cfg = json_object_get(t, "config");
		const char *file = json_string_value(json_object_get(cfg, "file"));
		char *err;
		if (!file || !*file || *file == '/' || strstr(file, "..") || !json_object_get(cfg, "defaults"))
			die("%s: \"config\" wants \"file\" (a path in the repository) and \"defaults\"", name);
		if (mcp_map_compile(cfg, &err) < 0)
			die("%s: config: %s", name, err);
	}
	json_array_foreach(json_object_get(t, "resources"), i, tool)
		if (!json_is_string(json_object_get(tool, "uri")) || !json_is_string(json_object_get(tool, "name")) ||
		    !json_is_array(json_object_get(tool, "argv")))
			die("%s: resource %zu wants \"uri\", \"name\" and \"argv\"", name, i);
	if (json_object_get(t, "resources") && !json_is_array(json_object_get(t, "resources")))
		die("%s: \"resources\" must be an array", name);
	json_array_foreach(tools, i, tool) {
		const char *tn = json_string_value(json_object_get(tool, "name"));
		json_t *schema = json_object_get(tool, "inputSchema");
		if (!tn)
			die("%s: tool %zu has no \"name\"", name, i);
		if (!json_is_string(json_object_get(tool, "description")))
			die("%s: tool '%s' has no \"description\"", name, tn);
		if (!json_is_object(schema) || !json_is_object(json_object_get(schema, "properties")))
			die("%s: tool '%s' has no \"inputSchema\" with \"properties\"", name, tn);
		if (!json_is_string(json_object_get(tool, "builtin")) && !json_is_array(json_object_get(tool, "argv")) &&
		    !json_is_array(json_object_get(tool, "variants")))
			die("%s: tool '%s' has neither \"argv\", \"variants\" nor \"builtin\"", name, tn);
		if (json_is_string(json_object_get(tool, "builtin")) &&
		    strcmp(json_string_value(json_object_get(tool, "builtin")), "read"))
			die("%s: tool '%s': unknown builtin '%s'", name, tn,
			    json_string_value(json_object_get(tool, "builtin")));
		{
			char *err, why[300];
			const char *pn;
			json_t *prop;
			if (mcp_map_compile(tool, &err) < 0)
				die("%s: tool '%s': %s", name, tn, err);
			json_object_foreach(json_object_get(schema, "properties"), pn, prop) {
				const char *re = json_string_value(json_object_get(prop, "pattern"));
				pcre2_code *code = re ? pattern_compile(re, why, sizeof(why)) : NULL;
				if (re && !code)
					die("%s: tool '%s': parameter '%s': \"pattern\" %s", name, tn, pn, why);
				pcre2_code_free(code);
			}
		}
	}
}

/* The directory of this program (the commands are beside it); malloc'd. */
static char *self_dir(void)
{
	char *self = realpath("/proc/self/exe", NULL);

	if (self && strrchr(self, '/')) {
		*strrchr(self, '/') = '\0';
		return self;
	}
	free(self);
	return xstrdup(".");
}

/*
 * The table of a profile: compiled in, else share/mcp/<name>.json beside the
 * program (the build tree) or in the package data directory, so that a new
 * profile is a new table file.  eager: compile the jq programs of a table compiled
 * in now, as those of a file are (else when first run).
 */
static json_t *load_profile(const char *name, int eager)
{
	json_error_t jerr;
	json_t *t = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(profiles); i++)
		if (!strcmp(profiles[i].name, name)) {
			t = json_loads(profiles[i].json, 0, &jerr);
			if (!t)
				die("tool table %s: %d:%d: %s", name, jerr.line, jerr.column, jerr.text);
			/* the tests compile every program of these; --list-tools still does */
			mcp_map_lazy(!eager);
			check_table(t, name);
			mcp_map_lazy(0);
			return t;
		}
	if (name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_")] == '\0' && *name) {
		char *paths[2] = { xasprintf("%s/share/mcp/%s.json", bindir, name),
				   xasprintf("%s/mcp/%s.json", CI_PKGDATADIR, name) };
		for (i = 0; i < 2 && !t; i++) {
			if (access(paths[i], R_OK) < 0)
				continue;
			t = json_load_file(paths[i], JSON_REJECT_DUPLICATES, &jerr);
			if (!t)
				die("%s:%d:%d: %s", paths[i], jerr.line, jerr.column, jerr.text);
			check_table(t, paths[i]);
		}
		free(paths[0]);
		free(paths[1]);
		if (t)
			return t;
	}
	{
		char known[256] = "";
		size_t len = 0;

		/* the names compiled in, so that the message names every profile */
		for (i = 0; i < ARRAY_SIZE(profiles) && len < sizeof(known); i++)
			len += snprintf(known + len, sizeof(known) - len, "%s%s",
					i ? ", " : "", profiles[i].name);
		usage_error(usage_text, "unknown profile '%s' (known: %s)", name, known);
	}
}

/*
 * A profile's configuration file, read as the system it serves reads its own
 * (shaktiman's .shaktiman/shaktiman.toml): the table's "config" names a TOML
 * file in the repository and a jq program, "defaults", that turns its contents
 * into {tool: {parameter: default}} and refuses a bad value with error(...).
 * The defaults go into the tools' input schemas, so tools/list shows them and
 * calls get them.  No file: the table's defaults.  A file that does not parse
 * or holds a bad value: the server does not start, saying why.
 */
/* A configuration file the server cannot start with: say why, release libjq's
 * states (their stacks are not reachable from them while a program runs), exit. */
static void config_fail(const char *fmt, ...) CI_PRINTF(1, 2) __attribute__((noreturn));
static void config_fail(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	error("%s", msg ? msg : fmt);
	free(msg);
	mcp_map_release();
	json_decref(table);
	exit(EXIT_IO);
}

static void apply_config(void)
{
	json_t *cfg = json_object_get(table, "config"), *doc, *defs, *params, *v;
	const char *tn, *pn;
	char *path, *text, *err;
	json_error_t jerr;

	if (!cfg)
		return;
	path = xasprintf("%s/%s", root, json_string_value(json_object_get(cfg, "file")));
	if (access(path, F_OK) < 0) {
		free(path);
		return;
	}
	text = toml_file_json(path, &err);
	if (!text)
		config_fail("%s: %s", path, err);
	doc = json_loads(text, 0, &jerr);
	free(text);
	if (!doc)
		config_fail("%s: %s", path, jerr.text);
	defs = mcp_map_run(cfg, "defaults", doc, &err);
	json_decref(doc);
	if (!defs)
		config_fail("%s: %s", path, err ? err : "the defaults program gave nothing");
	if (!json_is_object(defs))
		config_fail("%s: the defaults program gave no object", path);
	json_object_foreach(defs, tn, params) {
		json_t *tool = find_tool(tn), *props;
		if (!tool || !json_is_object(params))
			config_fail("%s: no tool '%s' to set defaults of", path, tn);
		props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
		json_object_foreach(params, pn, v) {
			json_t *prop = json_object_get(props, pn);
			if (!prop)
				config_fail("%s: tool '%s' has no parameter '%s'", path, tn, pn);
			json_object_set(prop, "default", v);
		}
	}
	json_decref(defs);
	free(path);
}

int main(int argc, char **argv)
{
	struct walker w;
	struct walk_opts wo = WALK_OPTS_INIT;
	json_error_t jerr;
	const char *profile = "ci", *table_file = NULL, *http_addr = NULL;
	int c, list = 0, allow_remote = 0, ret;

	util_init(argv[0]);
	/* the commands it runs write records for it: NDJSON, whatever the user's taste */
	unsetenv("CI_FORMAT");
	list_options(argc, argv, long_options);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_LIST: list = 1; break;
		case OPT_PROFILE: profile = optarg; break;
		case OPT_TABLE: table_file = optarg; break;
		case OPT_HTTP: http_addr = optarg; break;
		case OPT_ALLOW_REMOTE: allow_remote = 1; break;
		case OPT_ALLOW_ORIGIN:
			ALLOC_GROW(allow_origins, allow_origins_nr + 1, allow_origins_alloc);
			allow_origins[allow_origins_nr++] = xstrdup(optarg);
			break;
		case OPT_TIMEOUT: timeout_s = parse_long_arg(usage_text, "--timeout", optarg, 1, 3600); break;
		case OPT_WAIT: wait_s = parse_long_arg(usage_text, "--wait", optarg, 0, 600); break;
		case OPT_JOBS: max_jobs = parse_long_arg(usage_text, "--jobs", optarg, 1, 64); break;
		case OPT_MAX_OUTPUT:
			max_output = (size_t)parse_long_arg(usage_text, "--max-output", optarg, 1024, 64L << 20);
			break;
		case OPT_SHARDS: shards = optarg; break;
		case OPT_REPO: {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1])
				usage_error(usage_text, "--repo wants <name>=<dir>, got '%s'", optarg);
			ALLOC_GROW(repos, repos_nr + 1, repos_alloc);
			repos[repos_nr].name = xstrndup(optarg, (size_t)(eq - optarg));
			repos[repos_nr++].root = xstrdup(eq + 1);
			break;
		}
		case 'v': verbosity++; break;
		case OPT_VERSION:
			return print_version("ci-mcp");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (optind < argc)
		usage_error(usage_text, "unexpected argument '%s'", argv[optind]);
	bindir = self_dir();
	if (table_file) {
		table = json_load_file(table_file, JSON_REJECT_DUPLICATES, &jerr);
		if (!table)
			die("%s:%d:%d: %s", table_file, jerr.line, jerr.column, jerr.text);
		check_table(table, table_file);
	} else {
		table = load_profile(profile, list);
	}
	if (shards) {
		struct fleet_set set = { 0 };
		char *abs = realpath(shards, NULL);

		if (!abs || fleet_set_load(&set, abs) < 0)
			die_code(EXIT_IO, "--shards: cannot serve '%s'%s%s", shards, abs ? "" : ": ",
				 abs ? "" : strerror(errno));
		fleet_set_release(&set);
		shards = abs;
		setenv("CI_SHARDS", shards, 1);
		shards_tools(table);
	}
	if (list) {
		char *s = json_dumps(table, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		mcp_map_release();
		json_decref(table);
		free(bindir);
		return close_stdout(EXIT_OK);
	}
	http_token = getenv("CI_MCP_TOKEN");
	if (http_token && !*http_token)
		http_token = NULL;
	if (walker_open(&w, ".", &wo) < 0) {
		json_decref(table);
		free(bindir);
		return EXIT_IO;
	}
	root = home = xstrdup(w.root);
	walker_close(&w);
	for (size_t i = 0; i < repos_nr; i++) {
		char *dir = repos[i].root;
		if (walker_open(&w, dir, &wo) < 0)
			die("--repo %s: cannot open '%s'", repos[i].name, dir);
		repos[i].root = xstrdup(w.root);
		walker_close(&w);
		free(dir);
	}
	if (!repos_nr) {	/* the current repository under its directory's name */
		ALLOC_GROW(repos, 1, repos_alloc);
		repos[0].name = xstrdup(strrchr(root, '/') && strrchr(root, '/')[1] ? strrchr(root, '/') + 1 : root);
		repos[0].root = xstrdup(root);
		repos_nr = 1;
	}
	apply_config();
	index_path = getenv("CI_INDEX") && *getenv("CI_INDEX") ? xstrdup(getenv("CI_INDEX")) :
		     xasprintf("%s/.ci-index/index.db", root);
	git_libgit2_init();
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("cannot make a pipe: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	{
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	if (http_addr)
		http_start(http_addr, allow_remote);
	ret = serve(!!http_addr);
	shutdown_all();
	git_libgit2_shutdown();
	mcp_map_release();
	json_decref(table);
	for (size_t i = 0; i < repos_nr; i++) {
		free(repos[i].name);
		free(repos[i].root);
	}
	free(repos);
	free(home);
	free(index_path);
	free(bindir);
	return close_stdout(ret);
}
