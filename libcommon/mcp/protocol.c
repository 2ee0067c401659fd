/*
 * protocol.c: the protocol side of libcommon/mcp (mcp.h): sessions and the
 * streams their answers go to (stdio or HTTP), JSON-RPC requests parsed and
 * answered (initialize, ping, logging, tools, resources), the logging the
 * client asked for, and the shape of a tool's result.
 */
#include "mcp/internal.h"

const char *const mcp_versions[3] = { "2025-06-18", "2025-03-26", "2024-11-05" };

const char *const mcp_log_levels[8] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
};

/* A new HTTP stream of sess with refs references.  Cannot fail. */
struct mcp_stream *mcp_stream_new(struct mcp_server *srv, struct mcp_session *sess, int refs)
{
	struct mcp_stream *st = xcalloc(1, sizeof(*st));

	st->srv = srv;
	st->http = 1;
	st->refs = refs;
	st->sess = sess;
	st->fd = -1;
	pthread_cond_init(&st->cond, NULL);
	return st;
}

/* Drop one reference; the last frees the stream.  Call with the server's lock held. */
void mcp_stream_unref_locked(struct mcp_stream *st)
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

void mcp_stream_unref(struct mcp_stream *st)
{
	struct mcp_server *srv;

	if (!st || !st->http)
		return;
	srv = st->srv;
	pthread_mutex_lock(&srv->lock);
	mcp_stream_unref_locked(st);
	pthread_mutex_unlock(&srv->lock);
}

void mcp_send_json(struct mcp_stream *st, json_t *msg, int last)
{
	struct mcp_server *srv = st->srv;
	char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));

	json_decref(msg);
	if (!s)
		die("cannot encode a response");
	if (!st->http) {
		fputs(s, srv->out);
		fputc('\n', srv->out);
		fflush(srv->out);
		free(s);
		if (ferror(srv->out))
			exit(EXIT_IO);
		return;
	}
	pthread_mutex_lock(&srv->lock);
	if (st->gone || st->closed) {
		free(s);
	} else {
		ALLOC_GROW(st->q, st->q_nr + 1, st->q_alloc);
		st->q[st->q_nr++] = s;
	}
	if (last)
		st->closed = 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&srv->lock);
}

/* Close a stream without an answer (a cancelled request). */
void mcp_stream_close(struct mcp_stream *st)
{
	struct mcp_server *srv = st->srv;

	if (!st->http)
		return;
	pthread_mutex_lock(&srv->lock);
	st->closed = 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&srv->lock);
}

void mcp_reply(struct mcp_stream *st, json_t *id, json_t *result)
{
	mcp_send_json(st, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				"result", result), 1);
}

void mcp_reply_error(struct mcp_stream *st, json_t *id, int code, const char *msg)
{
	mcp_send_json(st, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				"error", "code", code, "message", msg), 1);
}

static int session_log_level(struct mcp_server *srv, struct mcp_session *s)
{
	int l;

	pthread_mutex_lock(&srv->lock);
	l = s->log_level;
	pthread_mutex_unlock(&srv->lock);
	return l;
}

/* A notifications/message of text at level; new. */
static json_t *log_message(int level, const char *text)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method", "notifications/message",
			 "params", "level", mcp_log_levels[level], "logger", "ci-mcp", "data", text);
}

void mcp_log(struct mcp_server *srv, struct mcp_stream *st, int level, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (verbosity > (level == MCP_LOG_DEBUG ? 1 : 0))
		fprintf(stderr, "%s: %s\n", progname, b.buf);
	if (!st && !srv->daemon)
		st = &srv->stdio_stream;
	if (st) {
		int l = session_log_level(srv, st->sess);
		if (l >= 0 && level >= l)
			mcp_send_json(st, log_message(level, b.buf), 0);
	} else {
		struct mcp_session *s;
		pthread_mutex_lock(&srv->lock);
		for (s = srv->sessions; s; s = s->next) {
			json_t *m;
			if (!s->get || s->log_level < 0 || level < s->log_level || s->get->gone || s->get->closed)
				continue;
			m = log_message(level, b.buf);
			ALLOC_GROW(s->get->q, s->get->q_nr + 1, s->get->q_alloc);
			s->get->q[s->get->q_nr++] = json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII);
			json_decref(m);
			pthread_cond_broadcast(&s->get->cond);
		}
		pthread_mutex_unlock(&srv->lock);
	}
	buf_release(&b);
}

/* ---- tool results ---- */

json_t *mcp_tool_error(const char *fmt, ...)
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

json_t *mcp_tool_result(json_t *sc)
{
	char *text = json_dumps(sc, JSON_COMPACT | JSON_REAL_PRECISION(9));
	json_t *r = json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", text,
			      "structuredContent", sc);

	free(text);
	return r;
}

/*
 * Check the envelope of msg; 0 when it is a request or notification to go on
 * with, else -1 once answered (or dropped: responses, a notification's errors).
 */
static int check_request(struct mcp_stream *st, json_t *msg, json_t *id, json_t *params, const char *method)
{
	if (!json_is_object(msg)) {
		mcp_reply_error(st, NULL, -32600, "invalid request: expected a JSON-RPC 2.0 request object");
		return -1;
	}
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		mcp_reply_error(st, NULL, -32600, "invalid request: id must be a string or an integer");
		return -1;
	}
	if (!method) {
		if (json_object_get(msg, "result") || json_object_get(msg, "error"))
			return -1;	/* a response: the server asks nothing, so nothing to match */
		mcp_reply_error(st, id, -32600, "invalid request: expected a JSON-RPC 2.0 request object");
		return -1;
	}
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0")) {
		if (id)
			mcp_reply_error(st, id, -32600, "invalid request: \"jsonrpc\" must be \"2.0\"");
		return -1;
	}
	if (params && !json_is_object(params)) {
		if (id)
			mcp_reply_error(st, id, -32602, "params must be an object");
		return -1;
	}
	return 0;
}

static void handle_initialize(struct mcp_stream *st, json_t *id, json_t *params)
{
	json_t *table = st->srv->table, *res;
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = mcp_versions[0];

	for (size_t i = 0; want && i < ARRAY_SIZE(mcp_versions); i++)
		if (!strcmp(want, mcp_versions[i]))
			v = mcp_versions[i];
	res = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}, s:s}",
			"protocolVersion", v,
			"capabilities", "tools", "listChanged", 0, "logging",
			"serverInfo", "name", "ci", "version", PACKAGE_VERSION,
			"instructions", json_string_value(json_object_get(table, "instructions")) ?
			json_string_value(json_object_get(table, "instructions")) :
			"ci serves code search over the repository it was started in.");
	if (json_is_array(json_object_get(table, "resources")))	/* only profiles that have some */
		json_object_set_new(json_object_get(res, "capabilities"), "resources",
				    json_pack("{s:b, s:b}", "subscribe", 0, "listChanged", 0));
	mcp_reply(st, id, res);
}

static void handle_set_level(struct mcp_stream *st, json_t *id, json_t *params)
{
	struct mcp_server *srv = st->srv;
	const char *l = json_string_value(json_object_get(params, "level"));
	int lv = -1;

	for (size_t i = 0; l && i < ARRAY_SIZE(mcp_log_levels); i++)
		if (!strcmp(l, mcp_log_levels[i]))
			lv = (int)i;
	if (lv < 0) {
		mcp_reply_error(st, id, -32602, "params.level must be one of debug, info, notice, warning, "
				"error, critical, alert, emergency");
		return;
	}
	pthread_mutex_lock(&srv->lock);
	st->sess->log_level = lv;
	pthread_mutex_unlock(&srv->lock);
	mcp_reply(st, id, json_object());
}

static void handle_resources_list(struct mcp_stream *st, json_t *id)
{
	json_t *list = json_array(), *r;
	size_t i;

	json_array_foreach(json_object_get(st->srv->table, "resources"), i, r) {
		json_t *o = json_pack("{s:O, s:O}", "uri", json_object_get(r, "uri"), "name", json_object_get(r, "name"));
		static const char *const opt[] = { "title", "description", "mimeType" };
		for (size_t k = 0; k < ARRAY_SIZE(opt); k++)
			if (json_object_get(r, opt[k]))
				json_object_set(o, opt[k], json_object_get(r, opt[k]));
		json_array_append_new(list, o);
	}
	mcp_reply(st, id, json_pack("{s:o}", "resources", list));
}

static void handle_resources_read(struct mcp_stream *st, json_t *id, json_t *params)
{
	struct mcp_server *srv = st->srv;
	const char *uri = json_string_value(json_object_get(params, "uri"));
	json_t *r = NULL, *x;
	size_t i;

	json_array_foreach(json_object_get(srv->table, "resources"), i, x)
		if (uri && !strcmp(uri, json_string_value(json_object_get(x, "uri"))))
			r = x;
	if (!uri) {
		mcp_reply_error(st, id, -32602, "resources/read needs params.uri, a string");
	} else if (!r) {
		char *m = xasprintf("resource not found: '%s'", uri);
		mcp_reply_error(st, id, -32002, m);
		free(m);
	} else if (mcp_call_uses_id(srv, st->sess, id)) {
		mcp_reply_error(st, id, -32600, "invalid request: a request with this id is in progress");
	} else {
		srv->root = srv->home;
		mcp_queue_call(st, id, r, json_object(), NULL, 1);
	}
}

static void handle_tools_call(struct mcp_stream *st, json_t *id, json_t *params)
{
	struct mcp_server *srv = st->srv;
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *tool = name ? mcp_find_tool(srv, name) : NULL;
	json_t *args = json_object_get(params, "arguments");
	json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");

	if (!name) {
		mcp_reply_error(st, id, -32602, "tools/call needs params.name, a string");
	} else if (!tool) {
		char *m = xasprintf("unknown tool '%s'", name);
		mcp_reply_error(st, id, -32602, m);
		free(m);
	} else if (args && !json_is_object(args)) {
		mcp_reply_error(st, id, -32602, "params.arguments must be an object");
	} else if (mcp_call_uses_id(srv, st->sess, id)) {
		mcp_reply_error(st, id, -32600, "invalid request: a request with this id is in progress");
	} else {
		if (token && !json_is_string(token) && !json_is_integer(token))
			token = NULL;
		mcp_tools_call(st, id, tool, args, token);
	}
}

void mcp_handle(struct mcp_stream *st, json_t *msg)
{
	struct mcp_server *srv = st->srv;
	json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));
	int has_resources = json_is_array(json_object_get(srv->table, "resources"));

	if (check_request(st, msg, id, params, method) < 0)
		return;
	if (verbosity)
		fprintf(stderr, "%s: %s\n", progname, method);
	if (!id) {
		if (!strcmp(method, "notifications/cancelled"))
			mcp_cancel(srv, st->sess, json_object_get(params, "requestId"),
				   json_string_value(json_object_get(params, "reason")));
		return;		/* initialized, and notifications we do not know */
	}
	if (!strcmp(method, "initialize")) {
		handle_initialize(st, id, params);
	} else if (!strcmp(method, "ping")) {
		mcp_reply(st, id, json_object());
	} else if (!strcmp(method, "logging/setLevel")) {
		handle_set_level(st, id, params);
	} else if (!strcmp(method, "tools/list")) {
		mcp_reply(st, id, mcp_tools_list(srv));
	} else if (has_resources && !strcmp(method, "resources/list")) {
		handle_resources_list(st, id);
	} else if (has_resources && !strcmp(method, "resources/templates/list")) {
		mcp_reply(st, id, json_pack("{s:[]}", "resourceTemplates"));
	} else if (has_resources && !strcmp(method, "resources/read")) {
		handle_resources_read(st, id, params);
	} else if (!strcmp(method, "tools/call")) {
		handle_tools_call(st, id, params);
	} else {
		char *m = xasprintf("method not found: '%s'", method);
		mcp_reply_error(st, id, -32601, m);
		free(m);
	}
}

/* Parse one line from stdin and handle it. */
void mcp_handle_line(struct mcp_server *srv, const char *s, size_t n)
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
		mcp_reply_error(&srv->stdio_stream, NULL, -32700, m);
		free(m);
		return;
	}
	if (json_is_array(msg))
		mcp_reply_error(&srv->stdio_stream, NULL, -32600, "invalid request: batches are not supported");
	else
		mcp_handle(&srv->stdio_stream, msg);
	json_decref(msg);
}

