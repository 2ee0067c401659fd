/*
 * serve.c: the server's life (libcommon/mcp, mcp.h): its defaults, the one
 * poll() loop that multiplexes the client (stdin, or the HTTP inbox), the
 * children's pipes (calls and the indexer) and the calls' time limits and
 * progress, and the shutdown.
 */
#include "mcp/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long mcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mcp_server_init(struct mcp_server *srv)
{
	memset(srv, 0, sizeof(*srv));
	srv->timeout_s = 120;
	srv->wait_s = 5;
	srv->max_jobs = 4;
	srv->max_output = 1 << 20;
	srv->shard_servers = 1;
	srv->out = stdout;
	srv->stopping = &srv->stop_flag;
	srv->sig_fd = -1;
	pthread_mutex_init(&srv->lock, NULL);
	srv->stdio_session.log_level = -1;
	srv->stdio_stream.srv = srv;
	srv->stdio_stream.refs = 1;
	srv->stdio_stream.sess = &srv->stdio_session;
	srv->stdio_stream.fd = -1;
	pthread_cond_init(&srv->stdio_stream.cond, NULL);
	srv->inbox_tail = &srv->inbox;
	srv->wake_pipe[0] = srv->wake_pipe[1] = -1;
	mcp_proc_init(&srv->indexer.p);
}

void mcp_server_release(struct mcp_server *srv)
{
	mcp_map_release(&srv->map);
	json_decref(srv->table);
	srv->table = NULL;
	for (size_t i = 0; i < srv->repos_nr; i++) {
		free(srv->repos[i].name);
		free(srv->repos[i].root);
	}
	free(srv->repos);
	srv->repos = NULL;
	srv->repos_nr = srv->repos_alloc = 0;
	for (size_t i = 0; i < srv->allow_origins_nr; i++)
		free(srv->allow_origins[i]);
	free(srv->allow_origins);
	srv->allow_origins = NULL;
	srv->allow_origins_nr = srv->allow_origins_alloc = 0;
	free(srv->shards);
	free(srv->home);
	free(srv->index_path);
	free(srv->bindir);
	srv->shards = srv->home = srv->index_path = srv->bindir = srv->root = NULL;
	pthread_cond_destroy(&srv->stdio_stream.cond);
	pthread_mutex_destroy(&srv->lock);
}

/* What the loop waits for: fds[i] is a pipe of call fdcall[i] (NULL: none), fdk[i] its kind. */
struct poll_set {
	struct pollfd *fds;
	struct mcp_call **fdcall;	/* the call a child's pipe belongs to; NULL: the indexer, or ours */
	int *fdk;		/* 0, 1: a child's stdout, stderr; -1 signal, -2 stdin, -3 the inbox */
	size_t nr, fds_alloc, fdcall_alloc, fdk_alloc;
};

/* The stdio transport's reading side. */
struct stdin_reader {
	struct buf in;		/* the line being read */
	int open;		/* stdin has not ended */
	int skipping;		/* the line is over the limit: drop it to its end */
};

static void poll_add(struct poll_set *ps, int fd, struct mcp_call *c, int k)
{
	ALLOC_GROW(ps->fds, ps->nr + 1, ps->fds_alloc);
	ALLOC_GROW(ps->fdcall, ps->nr + 1, ps->fdcall_alloc);
	ALLOC_GROW(ps->fdk, ps->nr + 1, ps->fdk_alloc);
	ps->fds[ps->nr] = (struct pollfd){ fd, POLLIN, 0 };
	ps->fdcall[ps->nr] = c;
	ps->fdk[ps->nr++] = k;
}

/* Fill ps with what to wait for; the time of the next deadline or tick (ms). */
static long long poll_prepare(struct mcp_server *srv, struct poll_set *ps, int stdin_open, int http, long long now)
{
	long long next = now + 60000;
	struct mcp_call *c;

	ps->nr = 0;
	if (srv->sig_fd >= 0)
		poll_add(ps, srv->sig_fd, NULL, -1);
	if (stdin_open)
		poll_add(ps, 0, NULL, -2);
	if (http)
		poll_add(ps, srv->wake_pipe[0], NULL, -3);
	for (int k = 0; k < 2; k++)
		if (srv->indexer.running && srv->indexer.p.fd[k] >= 0)
			poll_add(ps, srv->indexer.p.fd[k], NULL, k);
	for (c = srv->calls; c; c = c->next) {
		if (c->state == CALL_WAIT_INDEX && !c->force_index && c->started + srv->wait_s * 1000 < next)
			next = c->started + srv->wait_s * 1000;
		if (c->state == CALL_WAIT_INDEX && c->deadline < next)
			next = c->deadline;
		if (c->token && c->next_tick < next)
			next = c->next_tick;
		if (c->state != CALL_RUNNING && !(c->spec && !c->spec_done))
			continue;
		if (c->state == CALL_RUNNING && c->deadline < next)
			next = c->deadline;
		for (int k = 0; k < 2; k++)
			if (c->p.fd[k] >= 0)
				poll_add(ps, c->p.fd[k], c, k);
	}
	return next;
}

/* Read what stdin has: each whole line is a message. */
static void read_stdin(struct mcp_server *srv, struct stdin_reader *rd)
{
	char tmp[65536];
	ssize_t n = read(0, tmp, sizeof(tmp));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		rd->open = 0;
		if (rd->in.len && !rd->skipping)
			mcp_handle_line(srv, rd->in.buf, rd->in.len);
		buf_reset(&rd->in);
		return;
	}
	for (const char *p = tmp, *e; p < tmp + n; p = e + 1) {
		e = memchr(p, '\n', (size_t)(tmp + n - p));
		if (!e) {
			if (!rd->skipping)
				buf_add(&rd->in, p, (size_t)(tmp + n - p));
			break;
		}
		if (!rd->skipping) {
			buf_add(&rd->in, p, (size_t)(e - p));
			mcp_handle_line(srv, rd->in.buf, rd->in.len);
		}
		rd->skipping = 0;
		buf_reset(&rd->in);
	}
	if (rd->in.len > (size_t)MCP_MAX_BODY * 4) {
		mcp_reply_error(&srv->stdio_stream, NULL, -32700, "parse error: a message over 64 MiB");
		buf_release(&rd->in);
		rd->skipping = 1;
	}
}

/* fds[i] of ps is ready: read it. */
static void on_ready(struct mcp_server *srv, struct poll_set *ps, size_t i, struct stdin_reader *rd)
{
	struct mcp_call *c;
	int k = ps->fdk[i];

	if (k == -1) {
		char tmp[16];
		if (read(srv->sig_fd, tmp, sizeof(tmp)) < 0)
			(void)0;
	} else if (k == -3) {
		char tmp[256];
		while (read(srv->wake_pipe[0], tmp, sizeof(tmp)) > 0)
			;
		mcp_drain_inbox(srv);
	} else if (k == -2) {
		read_stdin(srv, rd);
	} else if (!ps->fdcall[i]) {
		if (!srv->indexer.running)
			return;
		if (mcp_proc_read(&srv->indexer.p, k))
			mcp_indexer_finished(srv);
		else if (k == 1)
			mcp_indexer_progress(srv);
	} else {
		/* a call's pipe; the call may be gone (answered earlier in this round) */
		for (c = srv->calls; c && c != ps->fdcall[i]; c = c->next)
			;
		if (!c || (c->state != CALL_RUNNING && !c->spec) || c->p.fd[k] != ps->fds[i].fd)
			return;
		if (!mcp_proc_read(&c->p, k))
			return;
		if (c->state == CALL_RUNNING)
			mcp_call_answer(c, mcp_command_result(c));
		else
			c->spec_done = 1;
	}
}

/* Time limits and progress notifications. */
static void check_deadlines(struct mcp_server *srv)
{
	long long now = mcp_now_ms();
	struct mcp_call *c, *cnext;

	for (c = srv->calls; c; c = cnext) {
		cnext = c->next;
		if (c->state == CALL_WAIT_INDEX && now >= c->deadline) {
			mcp_call_answer(c, mcp_tool_error("the index was not ready within %ld seconds (--timeout)",
							  srv->timeout_s));
			continue;
		}
		if (c->state == CALL_RUNNING && now >= c->deadline) {
			mcp_log(srv, c->st, MCP_LOG_WARNING, "%s: over the time limit of %ld s", c->label,
				srv->timeout_s);
			mcp_call_answer(c, mcp_tool_error("the tool did not finish within %ld seconds (--timeout)",
							  srv->timeout_s));
			continue;
		}
		if (c->token && now >= c->next_tick) {
			char *m = c->state == CALL_RUNNING ?
				  xasprintf("running %s (%lld s)", c->label, (now - c->started) / 1000) :
				  c->state == CALL_WAIT_INDEX ? mcp_indexer_doing_msg(srv) :
				  xasprintf("waiting for a free slot (%lld s)", (now - c->started) / 1000);
			mcp_call_progress(c, m);
			free(m);
			c->next_tick = now + 1000;
		}
	}
}

int mcp_serve(struct mcp_server *srv, int http)
{
	struct stdin_reader rd = { .in = BUF_INIT, .open = !http };
	struct poll_set ps = { 0 };

	if (!http)
		fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	for (;;) {
		long long now = mcp_now_ms(), next;
		int rc;

		mcp_advance_calls(srv);
		if (*srv->stopping)
			break;
		if (!rd.open && !http && !srv->calls && !srv->indexer.running)
			break;
		next = poll_prepare(srv, &ps, rd.open, http, now);
		rc = poll(ps.fds, ps.nr, next > now ? (int)(next - now) : 0);
		if (rc < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (size_t i = 0; rc > 0 && i < ps.nr; i++)
			if (ps.fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				on_ready(srv, &ps, i, &rd);
		check_deadlines(srv);
	}
	buf_release(&rd.in);
	free(ps.fds);
	free(ps.fdcall);
	free(ps.fdk);
	return EXIT_OK;
}

void mcp_server_shutdown(struct mcp_server *srv)
{
	struct mcp_session *s, *snext;

	if (srv->daemon) {
		pthread_mutex_lock(&srv->lock);
		*srv->stopping = 1;
		for (struct mcp_call *c = srv->calls; c; c = c->next)
			pthread_cond_broadcast(&c->st->cond);
		for (s = srv->sessions; s; s = s->next)
			if (s->get)
				pthread_cond_broadcast(&s->get->cond);
		for (struct mcp_inmsg *m = srv->inbox; m; m = m->next)
			pthread_cond_broadcast(&m->st->cond);
		pthread_mutex_unlock(&srv->lock);
	}
	while (srv->calls) {
		struct mcp_call *c = srv->calls;
		srv->calls = c->next;
		mcp_stream_close(c->st);
		mcp_call_free(c);
	}
	if (srv->daemon) {
		MHD_stop_daemon(srv->daemon);
		srv->daemon = NULL;
		for (;;) {
			struct mcp_inmsg *m = srv->inbox;
			if (!m)
				break;
			srv->inbox = m->next;
			json_decref(m->msg);
			mcp_stream_unref(m->st);
			free(m);
		}
		srv->inbox_tail = &srv->inbox;
	}
	mcp_shard_servers_stop(srv);
	if (srv->indexer.running) {
		kill(-srv->indexer.p.pid, SIGTERM);
		srv->indexer.running = 0;
	}
	if (srv->indexer.p.pid > 0) {
		/* give ci-index a moment to leave its index consistent */
		for (int i = 0; i < 50 && waitpid(srv->indexer.p.pid, NULL, WNOHANG) == 0; i++)
			usleep(100000);
		mcp_proc_release(&srv->indexer.p);
	}
	free(srv->indexer.last_error);
	srv->indexer.last_error = NULL;
	for (s = srv->sessions; s; s = snext) {
		snext = s->next;
		free(s);
	}
	srv->sessions = NULL;
	srv->sessions_nr = 0;
	for (int k = 0; k < 2; k++) {
		if (srv->wake_pipe[k] >= 0)
			close(srv->wake_pipe[k]);
		srv->wake_pipe[k] = -1;
	}
}

