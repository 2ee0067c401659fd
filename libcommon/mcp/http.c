/*
 * http.c: the Streamable HTTP transport of libcommon/mcp (MCP 2025-06-18,
 * mcp.h) on libmicrohttpd, a thread per connection.  Each request passes the
 * checks a local server needs against a browser's page and DNS rebinding (the
 * Origin is a loopback page or one allowed, the Host a loopback name with our
 * port, the bearer token of CI_MCP_TOKEN when set); a POSTed message goes to
 * the loop through the inbox, its answer comes back on a stream, as one JSON
 * body or as server-sent events (tools/call, a session's GET).
 */
#include "mcp/internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static void inbox_put(json_t *msg, struct mcp_stream *st, int close_session)
{
	struct mcp_server *srv = st->srv;
	struct mcp_inmsg *m = xcalloc(1, sizeof(*m));
	char c = 1;

	m->msg = msg;
	m->st = st;
	m->close_session = close_session;
	pthread_mutex_lock(&srv->lock);
	*srv->inbox_tail = m;
	srv->inbox_tail = &m->next;
	pthread_mutex_unlock(&srv->lock);
	if (write(srv->wake_pipe[1], &c, 1) < 0 && errno != EAGAIN)
		warning("cannot wake the loop: %s", strerror(errno));
}

void mcp_drain_inbox(struct mcp_server *srv)
{
	for (;;) {
		struct mcp_inmsg *m;

		pthread_mutex_lock(&srv->lock);
		m = srv->inbox;
		if (m) {
			srv->inbox = m->next;
			if (!srv->inbox)
				srv->inbox_tail = &srv->inbox;
		}
		pthread_mutex_unlock(&srv->lock);
		if (!m)
			return;
		if (m->close_session) {
			struct mcp_call *c, *next;
			for (c = srv->calls; c; c = next) {
				next = c->next;
				if (c->st->sess == m->st->sess) {
					mcp_call_unlink(c);
					mcp_stream_close(c->st);
					mcp_call_free(c);
				}
			}
		} else {
			mcp_handle(m->st, m->msg);
		}
		json_decref(m->msg);
		mcp_stream_unref(m->st);
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
static int origin_ok(struct mcp_server *srv, const char *o)
{
	struct url_auth u, a;
	int parsed = auth_parse(&u, o, 1) == 0;

	for (size_t i = 0; i < srv->allow_origins_nr; i++) {
		if (!strcmp(o, srv->allow_origins[i]))
			return 1;
		if (parsed && auth_parse(&a, srv->allow_origins[i], 1) == 0 && a.https == u.https &&
		    a.is_ipv6 == u.is_ipv6 && !strcmp(a.host, u.host) && auth_port(&a) == auth_port(&u))
			return 1;
	}
	return parsed && loopback_name(&u);
}

/* A Host header while listening on loopback: a loopback name, and our port. */
static int host_ok(struct mcp_server *srv, const char *h)
{
	struct url_auth u;

	return auth_parse(&u, h, 0) == 0 && loopback_name(&u) && auth_port(&u) == srv->http_port;
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
	struct mcp_stream *st;	/* a reference */
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
 * the server's lock held.
 */
static void stream_hung_up_locked(struct mcp_stream *st)
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
	struct mcp_stream *st = e->st;
	struct mcp_server *srv = st->srv;
	size_t n;

	(void)pos;
	if (e->off >= e->cur.len) {
		long long keep_alive = mcp_now_ms() + 15000;

		buf_reset(&e->cur);
		e->off = 0;
		pthread_mutex_lock(&srv->lock);
		/* wait for a message, a keep-alive's time, or the client to hang up */
		while (st->q_head == st->q_nr && !st->closed && !*srv->stopping) {
			struct timespec ts;
			if (peer_gone(st->fd)) {
				stream_hung_up_locked(st);
				pthread_mutex_unlock(&srv->lock);
				return MHD_CONTENT_READER_END_OF_STREAM;	/* quietly: no error log */
			}
			if (mcp_now_ms() >= keep_alive)
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 250 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&st->cond, &srv->lock, &ts);
		}
		if (st->q_head < st->q_nr) {
			char *s = st->q[st->q_head++];
			buf_addf(&e->cur, "event: message\ndata: %s\n\n", s);
			free(s);
		} else if (!st->closed && !*srv->stopping) {
			buf_addstr(&e->cur, ": keep-alive\n\n");
		}
		pthread_mutex_unlock(&srv->lock);
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
	struct mcp_server *srv = e->st->srv;

	pthread_mutex_lock(&srv->lock);
	e->st->gone = 1;
	e->st->fd = -1;
	mcp_stream_unref_locked(e->st);
	pthread_mutex_unlock(&srv->lock);
	buf_release(&e->cur);
	free(e);
}

static enum MHD_Result http_sse(struct MHD_Connection *conn, struct mcp_stream *st, const char *session_id)
{
	struct mcp_server *srv = st->srv;
	struct sse *e = xcalloc(1, sizeof(*e));
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct MHD_Response *r;
	enum MHD_Result ret;

	e->st = st;
	e->cur = (struct buf)BUF_INIT;
	pthread_mutex_lock(&srv->lock);
	st->fd = ci ? ci->connect_fd : -1;
	pthread_mutex_unlock(&srv->lock);
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
static enum MHD_Result http_json_answer(struct MHD_Connection *conn, struct mcp_stream *st, const char *session_id)
{
	struct mcp_server *srv = st->srv;
	char *last = NULL;
	enum MHD_Result ret;

	pthread_mutex_lock(&srv->lock);
	while (!st->closed && !*srv->stopping)
		pthread_cond_wait(&st->cond, &srv->lock);
	while (st->q_head < st->q_nr) {
		free(last);
		last = st->q[st->q_head++];
	}
	st->gone = 1;
	mcp_stream_unref_locked(st);
	pthread_mutex_unlock(&srv->lock);
	if (!last && *srv->stopping)
		return http_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "the server is stopping");
	if (!last)
		return http_error(conn, MHD_HTTP_OK, -32800, "the request was cancelled");
	ret = http_send(conn, MHD_HTTP_OK, "application/json", last, session_id);
	free(last);
	return ret;
}

static struct mcp_session *session_find(struct mcp_server *srv, const char *id)
{
	struct mcp_session *s;

	for (s = srv->sessions; s; s = s->next)
		if (!strcmp(s->id, id))
			return s;
	return NULL;
}

static struct mcp_session *session_new(struct mcp_server *srv)
{
	struct mcp_session *s = xcalloc(1, sizeof(*s));
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		sprintf(s->id + 2 * i, "%02x", r[i]);
	s->log_level = -1;
	s->next = srv->sessions;
	srv->sessions = s;
	srv->sessions_nr++;
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
static int token_ok(struct mcp_server *srv, const char *auth)
{
	size_t n = strlen(srv->http_token), m;
	unsigned char d = 0;

	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return 0;
	auth += 7;
	m = strlen(auth);
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)srv->http_token[i] ^ (unsigned char)(i < m ? auth[i] : 0);
	return !d && m == n;
}

struct http_req {
	struct buf body;	/* the POST body */
	int too_big;		/* over MCP_MAX_BODY */
};

static enum MHD_Result http_post(struct mcp_server *srv, struct MHD_Connection *conn, struct http_req *rq,
				 struct mcp_session *sess)
{
	json_error_t jerr;
	json_t *msg, *id;
	const char *method;
	struct mcp_stream *st;
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
		pthread_mutex_lock(&srv->lock);
		sess = srv->sessions_nr < MCP_MAX_SESSIONS ? session_new(srv) : NULL;
		pthread_mutex_unlock(&srv->lock);
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
		st = mcp_stream_new(srv, sess, 1);
		st->closed = 1;
		inbox_put(msg, st, 0);
		return http_send(conn, MHD_HTTP_ACCEPTED, NULL, "", NULL);
	}
	want_sse = !strcmp(method, "tools/call");	/* the client accepts both (on_request) */
	st = mcp_stream_new(srv, sess, 2);
	inbox_put(msg, st, 0);
	if (want_sse)
		return http_sse(conn, st, is_init ? sess->id : NULL);
	return http_json_answer(conn, st, is_init ? sess->id : NULL);
}

/* A GET: the session's stream of server-initiated messages (one at a time). */
static enum MHD_Result http_get(struct mcp_server *srv, struct MHD_Connection *conn, struct mcp_session *sess)
{
	struct mcp_stream *st;

	if (!sess)
		return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000, "missing Mcp-Session-Id header");
	if (!accepts(conn, "text/event-stream"))
		return http_error(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000, "not acceptable: accept text/event-stream");
	pthread_mutex_lock(&srv->lock);
	if (sess->get && (sess->get->gone || peer_gone(sess->get->fd)))
		stream_hung_up_locked(sess->get);	/* its client went away: the slot is free */
	if (sess->get) {
		pthread_mutex_unlock(&srv->lock);
		return http_error(conn, MHD_HTTP_CONFLICT, -32000, "this session has a GET stream open already");
	}
	st = mcp_stream_new(srv, sess, 1);
	st->is_get = 1;
	sess->get = st;
	pthread_mutex_unlock(&srv->lock);
	return http_sse(conn, st, NULL);
}

/* A DELETE: the session ends; the loop cancels its calls. */
static enum MHD_Result http_delete(struct mcp_server *srv, struct MHD_Connection *conn, struct mcp_session *sess)
{
	struct mcp_stream *st;

	if (!sess)
		return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000, "missing Mcp-Session-Id header");
	pthread_mutex_lock(&srv->lock);
	sess->deleted = 1;
	if (sess->get) {
		sess->get->closed = 1;
		pthread_cond_broadcast(&sess->get->cond);
	}
	pthread_mutex_unlock(&srv->lock);
	st = mcp_stream_new(srv, sess, 1);
	st->closed = 1;
	inbox_put(NULL, st, 1);
	return http_send(conn, MHD_HTTP_OK, NULL, "", NULL);
}

/*
 * The checks every request passes: the endpoint, the Origin (a browser's
 * page), the Host (DNS rebinding, on loopback), the token, the protocol
 * version.  MHD_YES with *answered 0 when it passes, else the refusal sent.
 */
static enum MHD_Result http_check(struct mcp_server *srv, struct MHD_Connection *conn, const char *url,
				  int *answered)
{
	const char *origin, *pv;

	*answered = 1;
	if (strcmp(url, "/mcp"))
		return http_error(conn, MHD_HTTP_NOT_FOUND, -32000, "not found: the MCP endpoint is /mcp");
	origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (origin && !origin_ok(srv, origin))
		return http_error(conn, MHD_HTTP_FORBIDDEN, -32000, "forbidden: this Origin is not allowed");
	if (srv->http_loopback) {
		const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
		if (host && !host_ok(srv, host))
			return http_error(conn, MHD_HTTP_FORBIDDEN, -32000, "forbidden: this Host is not allowed");
	}
	if (srv->http_token &&
	    !token_ok(srv, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION)))
		return http_error(conn, MHD_HTTP_UNAUTHORIZED, -32000,
				  "unauthorized: send Authorization: Bearer <the token in CI_MCP_TOKEN>");
	pv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
	if (pv) {
		size_t i;
		for (i = 0; i < ARRAY_SIZE(mcp_versions) && strcmp(pv, mcp_versions[i]); i++)
			;
		if (i == ARRAY_SIZE(mcp_versions))
			return http_error(conn, MHD_HTTP_BAD_REQUEST, -32000,
					  "unsupported MCP-Protocol-Version (2025-06-18, 2025-03-26, 2024-11-05)");
	}
	*answered = 0;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct mcp_server *srv = cls;
	struct http_req *rq = *con_cls;
	const char *sid;
	struct mcp_session *sess = NULL;
	enum MHD_Result ret;
	int answered;

	(void)version;
	if (!rq) {
		rq = xcalloc(1, sizeof(*rq));
		rq->body = (struct buf)BUF_INIT;
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > MCP_MAX_BODY)
			rq->too_big = 1;
		else
			buf_add(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (verbosity)
		fprintf(stderr, "%s: HTTP %s %s\n", progname, method, url);
	ret = http_check(srv, conn, url, &answered);
	if (answered)
		return ret;
	sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	if (sid) {
		pthread_mutex_lock(&srv->lock);
		sess = session_find(srv, sid);
		if (sess && sess->deleted)
			sess = NULL;
		pthread_mutex_unlock(&srv->lock);
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
		return http_post(srv, conn, rq, sess);
	}
	if (!strcmp(method, "GET"))
		return http_get(srv, conn, sess);
	if (!strcmp(method, "DELETE"))
		return http_delete(srv, conn, sess);
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

/* Where to listen: addr ("host:port") as a socket address. */
struct http_addr {
	char *host;		/* the host as listened on (localhost is 127.0.0.1); malloc'd */
	long port;		/* 0: pick one */
	struct sockaddr_in sa4;
	struct sockaddr_in6 sa6;
	struct sockaddr *sa;	/* sa4 or sa6 */
	int ipv6;		/* sa is sa6 */
};

/* Parse addr into a; NULL, or the usage error (malloc'd; a->host freed). */
static char *http_addr_parse(struct mcp_server *srv, struct http_addr *a, const char *addr, int allow_remote)
{
	const char *colon = strrchr(addr, ':');
	char *end;

	memset(a, 0, sizeof(*a));
	if (!colon)
		return xasprintf("--http needs host:port, not '%s'", addr);
	a->port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || a->port < 0 || a->port > 65535)
		return xasprintf("--http: bad port in '%s'", addr);
	a->host = xstrndup(addr, (size_t)(colon - addr));
	if (a->host[0] == '[' && a->host[strlen(a->host) - 1] == ']') {
		memmove(a->host, a->host + 1, strlen(a->host));
		a->host[strlen(a->host) - 1] = '\0';
	}
	if (!strcmp(a->host, "localhost")) {
		free(a->host);
		a->host = xstrdup("127.0.0.1");
	}
	if (inet_pton(AF_INET, a->host, &a->sa4.sin_addr) == 1) {
		a->sa4.sin_family = AF_INET;
		a->sa4.sin_port = htons((uint16_t)a->port);
		a->sa = (struct sockaddr *)&a->sa4;
		srv->http_loopback = (ntohl(a->sa4.sin_addr.s_addr) >> 24) == 127;
	} else if (inet_pton(AF_INET6, a->host, &a->sa6.sin6_addr) == 1) {
		a->sa6.sin6_family = AF_INET6;
		a->sa6.sin6_port = htons((uint16_t)a->port);
		a->sa = (struct sockaddr *)&a->sa6;
		a->ipv6 = 1;
		srv->http_loopback = IN6_IS_ADDR_LOOPBACK(&a->sa6.sin6_addr);
	} else {
		free(a->host);
		return xasprintf("--http: '%s' is not an IP address (or localhost)", addr);
	}
	if (!srv->http_loopback && !allow_remote) {
		free(a->host);
		return xasprintf("--http: '%s' is not a loopback address: add --allow-remote "
				 "(and set CI_MCP_TOKEN)", addr);
	}
	return NULL;
}

int mcp_http_start(struct mcp_server *srv, const char *addr, int allow_remote, char **why)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	struct http_addr a;

	if ((*why = http_addr_parse(srv, &a, addr, allow_remote)))
		return -2;
	if (a.ipv6)
		flags |= MHD_USE_IPv6;
	if (pipe2(srv->wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("cannot make a pipe: %s", strerror(errno));
	srv->daemon = MHD_start_daemon(flags, (uint16_t)a.port, NULL, NULL, on_request, srv,
				       MHD_OPTION_SOCK_ADDR, a.sa,
				       MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				       MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
				       MHD_OPTION_END);
	if (!srv->daemon) {
		int e = errno;
		free(a.host);
		die("cannot listen on %s: %s", addr, strerror(e));
	}
	info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv->http_port = info ? (long)info->port : a.port;
	fprintf(stderr, "%s: serving http://%s%s%s:%u/mcp\n", progname,
		strchr(a.host, ':') ? "[" : "", a.host, strchr(a.host, ':') ? "]" : "",
		info ? (unsigned)info->port : (unsigned)a.port);
	fflush(stderr);
	free(a.host);
	return 0;
}
