/*
 * shards.c: the resident servers of a shard set that ci-mcp serves (mcp.h,
 * --shards): `ci-grep|ci-rank|ci-refs --shards <set> --shards-serve`
 * (libcommon/fleet/serve.h), started by the server at startup, checked
 * before each call of their command and started again when one ended, and
 * stopped at the end.  The commands a call runs find them by their socket
 * (fork_server_socket_of: the set's path and the binary), as they would a
 * server started by hand, and answer every shard through the indexes it
 * keeps open; a query that finds no server listening is answered in the
 * command's own process, whole, never in part.
 *
 * A server is a child of ci-mcp in a process group of its own, with
 * PR_SET_PDEATHSIG: killed (SIGKILL included), ci-mcp takes its servers with
 * it; they remove their sockets as they go.
 */
#include "mcp/internal.h"
#include "index/fork-server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const served_cmd[MCP_SHARD_SERVERS] = { "ci-grep", "ci-rank", "ci-refs" };
static const char *const served_kind[MCP_SHARD_SERVERS] = { "grep-shards", "rank-shards", "refs-shards" };

#define START_MS 120000		/* the longest wait for a server's preload (every index opened) */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Does a server accept connections at sock?  (An empty connection: it closes it.) */
static int listening(const char *sock)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), ok;

	if (fd < 0)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* "exit 3", "signal 9": how a server ended, in buf. */
static void how_ended(int st, char *buf, size_t n)
{
	if (WIFSIGNALED(st))
		snprintf(buf, n, "signal %d", WTERMSIG(st));
	else
		snprintf(buf, n, "exit %d", WEXITSTATUS(st));
}

/* The environment of a server: ours, with its idle time and the ready pipe (descriptor 3). */
static char **child_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + 3, sizeof(*env));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CI_SHARDS_SERVER_IDLE=", 22) &&
		    strncmp(environ[i], "CI_FORK_SERVER_READY=", 21))
			env[k++] = environ[i];
	/* its life is ci-mcp's: no idle end (a year); the pipe says it serves */
	env[k++] = "CI_SHARDS_SERVER_IDLE=31536000";
	env[k++] = "CI_FORK_SERVER_READY=3";
	return env;
}

/*
 * Wait for the server started with its ready pipe rd: its lock taken (a
 * byte), then its preload done (the end of the pipe), then listening.  0,
 * or -1 when it ended first or did not listen in time.
 */
static int wait_ready(const struct mcp_shard_server *s, int rd)
{
	struct pollfd pf = { .fd = rd, .events = POLLIN };
	long long until = mcp_now_ms() + START_MS;
	int got = 0, r;
	char c;

	for (;;) {
		long long left = until - mcp_now_ms();

		if (left <= 0)
			return -1;
		r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		r = (int)read(rd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 1) {
			got = 1;
			continue;
		}
		break;	/* the end of the pipe: the preload is done, or it ended */
	}
	if (!got)
		return -1;
	while (!listening(s->sock)) {
		siginfo_t si = { 0 };

		/* ended (left for start_one to reap and say how), or too slow */
		if (waitid(P_PID, s->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid ||
		    mcp_now_ms() > until)
			return -1;
		sleep_ms(2);
	}
	return 0;
}

/* Start server s (its pid in s->pid) and wait until it listens: 0, or -1 after a message. */
static int start_one(struct mcp_server *srv, struct mcp_shard_server *s)
{
	char *exe = xasprintf("%s/%s", srv->bindir, s->cmd);
	char *argv[] = { (char *)s->cmd, "--shards", srv->shards, "--shards-serve", NULL };
	char **env = child_env();
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC), p[2] = { -1, -1 }, w = -1, ret = -1, st = 0;
	pid_t parent = getpid(), r = 0;

	if (devnull < 0 || pipe2(p, O_CLOEXEC) < 0 || (w = fcntl(p[1], F_DUPFD_CLOEXEC, 10)) < 0) {
		error_errno("cannot start the shard server of %s", s->cmd);
		goto done;
	}
	close(p[1]);
	p[1] = -1;
	/* with --http other threads run: the child makes system calls only */
	s->pid = fork();
	if (s->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		mcp_child_reset();
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(w, 3);	/* dup2: no FD_CLOEXEC */
		execve(exe, argv, env);
		_exit(127);
	}
	close(w);
	w = -1;
	if (s->pid < 0) {
		s->pid = 0;
		error_errno("cannot start the shard server of %s", s->cmd);
		goto done;
	}
	if (wait_ready(s, p[0]) == 0) {
		ret = 0;
		goto done;
	}
	/* ended, or about to (its pipe closed as it went) */
	for (int k = 0; k < 100 && (r = waitpid(s->pid, &st, WNOHANG)) == 0; k++)
		sleep_ms(10);
	if (r == s->pid) {
		long other = fork_server_lock_pid(s->sock);
		char how[32];

		how_ended(st, how, sizeof(how));
		s->pid = 0;
		if (other > 0 && listening(s->sock)) {
			/* another ci-mcp's, or one started by hand: the calls use it */
			ret = 0;
			goto done;
		}
		error("the shard server of %s for '%s' did not start (%s)", s->cmd, srv->shards, how);
		goto done;
	}
	error("the shard server of %s for '%s' did not listen in time: stopped", s->cmd, srv->shards);
	kill(s->pid, SIGKILL);
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	s->pid = 0;
done:
	if (devnull >= 0)
		close(devnull);
	if (p[0] >= 0)
		close(p[0]);
	if (w >= 0)
		close(w);
	free(env);
	free(exe);
	return ret;
}

void mcp_shard_servers_start(struct mcp_server *srv)
{
	if (!srv->shards || !srv->shard_servers)
		return;
	for (int i = 0; i < MCP_SHARD_SERVERS; i++) {
		struct mcp_shard_server *s = &srv->shard_srv[i];
		char *exe = xasprintf("%s/%s", srv->bindir, served_cmd[i]);

		s->cmd = served_cmd[i];
		s->sock = fork_server_socket_of(served_kind[i], srv->shards, exe);
		free(exe);
		if (!s->sock) {
			error("no private directory for the socket of the shard server of %s: "
			      "its queries run in the command", s->cmd);
			continue;
		}
		if (start_one(srv, s) == 0)
			mcp_log(srv, NULL, MCP_LOG_INFO, "shard server of %s: pid %ld", s->cmd, (long)s->pid);
	}
}

void mcp_shard_servers_check(struct mcp_server *srv, const char *cmd)
{
	struct mcp_shard_server *s = NULL;
	int st;

	if (!srv->shards || !srv->shard_servers || !cmd)
		return;
	for (int i = 0; i < MCP_SHARD_SERVERS; i++)
		if (srv->shard_srv[i].sock && !strcmp(srv->shard_srv[i].cmd, cmd))
			s = &srv->shard_srv[i];
	if (!s)
		return;
	if (s->pid > 0) {
		pid_t r = waitpid(s->pid, &st, WNOHANG);
		char how[32];

		if (r == 0)
			return;	/* it serves */
		how_ended(st, how, sizeof(how));
		error("the shard server of %s (pid %ld) ended (%s): starting it again", s->cmd, (long)s->pid,
		      r > 0 ? how : "lost");
		s->pid = 0;
	} else if (listening(s->sock)) {
		return;	/* another's serves the set */
	}
	if (start_one(srv, s) == 0 && s->pid > 0)
		mcp_log(srv, NULL, MCP_LOG_INFO, "shard server of %s: pid %ld", s->cmd, (long)s->pid);
}

void mcp_shard_servers_stop(struct mcp_server *srv)
{
	for (int i = 0; i < MCP_SHARD_SERVERS; i++) {
		struct mcp_shard_server *s = &srv->shard_srv[i];

		if (s->pid > 0) {
			/* SIGTERM: it stops serving and removes its socket; a worker's query ends with it */
			int gone = 0;

			kill(s->pid, SIGTERM);
			for (int k = 0; k < 500 && !gone; k++) {
				gone = waitpid(s->pid, NULL, WNOHANG) != 0;
				if (!gone)
					sleep_ms(10);
			}
			if (!gone) {
				kill(s->pid, SIGKILL);
				while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
					;
			}
			s->pid = 0;
		}
		free(s->sock);
		s->sock = NULL;
	}
}
