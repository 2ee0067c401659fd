/*
 * libcommon/index/fork-server.c: the fork server of ci-rank and ci-index (see fork-server.h).
 *
 * The protocol, over a SOCK_SEQPACKET Unix socket (one message is one
 * record, and descriptors travel with it):
 *   request   "CIRANK1" NUL, argc and envc (uint32 each), then NUL-terminated
 *             strings: the directory, argc arguments, envc environment
 *             entries; with it, the caller's descriptors 0, 1 and 2
 *   or        "CISTOP" NUL: the server exits
 *   replies   the worker's pid (int32) once it runs, then its exit status
 *             (int32) once its output is flushed; the end of the stream before
 *             the first means nothing was run, before the second that the
 *             worker died
 */
#include "config.h"
#include "core/common.h"
#include "index/fork-server.h"
#include "index/index.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define REQ_MAGIC "CIRANK1"
#define STOP_MAGIC "CISTOP"
#define QUERY_MAGIC "CIQUERY"
#define ANSWER_PART 49152
#define REQ_MAX (1u << 20)

/* ---- where ---- */

/* dir exists (made if not), is a directory of this user's that no one else may enter */
static int private_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return -1;
	return 0;
}

char *fork_server_socket(const char *kind, const char *index_path)
{
	return fork_server_socket_of(kind, index_path, "/proc/self/exe");
}

char *fork_server_socket_of(const char *kind, const char *index_path, const char *exe_path)
{
	const char *run = getenv("XDG_RUNTIME_DIR");
	struct sockaddr_un sa;
	char *real, *dir, *sock;
	struct stat exe;
	uint64_t key;

	real = realpath(index_path, NULL);
	if (!real)
		return NULL;
	if (stat(exe_path, &exe) < 0) {
		free(real);
		return NULL;
	}
	/* the index, and this very binary: a rebuilt one starts a server of its own */
	key = fnv1a(FNV1A_BASIS, real, strlen(real) + 1);
	key = fnv1a(key, &exe.st_dev, sizeof(exe.st_dev));
	key = fnv1a(key, &exe.st_ino, sizeof(exe.st_ino));
	key = fnv1a(key, &exe.st_size, sizeof(exe.st_size));
	key = fnv1a(key, &exe.st_mtim, sizeof(exe.st_mtim));
	free(real);
	/*
	 * $XDG_RUNTIME_DIR/ci, else /tmp/ci-<uid>; also when the former makes a
	 * socket path longer than a socket address holds (108 bytes): a deep
	 * $XDG_RUNTIME_DIR must not leave the command without its server.
	 */
	for (int i = run && *run == '/' ? 0 : 1; i < 2; i++) {
		dir = i ? xasprintf("/tmp/ci-%lu", (unsigned long)geteuid()) : xasprintf("%s/ci", run);
		sock = xasprintf("%s/%s-%016llx.sock", dir, kind, (unsigned long long)key);
		if (strlen(sock) < sizeof(sa.sun_path)) {
			int ok = private_dir(dir) == 0;

			free(dir);
			if (ok)
				return sock;
			free(sock);
			return NULL;
		}
		free(dir);
		free(sock);
	}
	return NULL;
}

static int connect_to(const char *sock)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the caller ---- */

static volatile sig_atomic_t worker_pid;

/* a signal the caller receives (Ctrl-C) goes to the worker too */
static void forward(int sig)
{
	if (worker_pid > 0)
		kill((pid_t)worker_pid, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int recv_int(int fd, int32_t *v)
{
	ssize_t r;

	do
		r = recv(fd, v, sizeof(*v), 0);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)sizeof(*v) ? 0 : -1;
}

int fork_server_call(const char *sock, int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct buf b = BUF_INIT;
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	uint32_t n[2];
	int32_t pid, status;
	char *cwd;
	int fd, i, fds[3] = { 0, 1, 2 };
	size_t envc = 0;

	for (i = 0; i < 3; i++)
		if (fcntl(i, F_GETFD) < 0)
			return -1;	/* a standard stream closed: nothing to pass */
	/* no server (the usual case before one starts): nothing more to do */
	if ((fd = connect_to(sock)) < 0)
		return -1;
	cwd = getcwd(NULL, 0);
	if (!cwd) {
		close(fd);
		return -1;
	}
	while (environ[envc])
		envc++;
	buf_add(&b, REQ_MAGIC, sizeof(REQ_MAGIC));
	n[0] = (uint32_t)argc;
	n[1] = (uint32_t)envc;
	buf_add(&b, n, sizeof(n));
	buf_add(&b, cwd, strlen(cwd) + 1);
	free(cwd);
	for (i = 0; i < argc; i++)
		buf_add(&b, argv[i], strlen(argv[i]) + 1);
	for (size_t e = 0; e < envc; e++)
		buf_add(&b, environ[e], strlen(environ[e]) + 1);
	if (b.len > REQ_MAX) {
		buf_release(&b);
		close(fd);
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	iov.iov_base = b.buf;
	iov.iov_len = b.len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.space;
	msg.msg_controllen = sizeof(ctl.space);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) != (ssize_t)b.len || recv_int(fd, &pid) < 0) {
		/* no worker was started: the caller runs the command itself */
		buf_release(&b);
		close(fd);
		return -1;
	}
	buf_release(&b);
	worker_pid = pid;
	for (i = 0; i < (int)ARRAY_SIZE(sigs); i++)
		signal(sigs[i], forward);
	if (recv_int(fd, &status) < 0) {
		struct pollfd p = { .fd = 1, .events = 0 };
		close(fd);
		/* a reader of its output that went away: what a run here would die of */
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) {
			signal(SIGPIPE, SIG_DFL);
			raise(SIGPIPE);
		}
		error("the server's worker (pid %ld) ended without an exit status", (long)pid);
		return EXIT_IO;
	}
	close(fd);
	if (status == 128 + SIGPIPE) {
		/* a server that answered itself met a reader gone (fork_server_ops.here): die of it, as it would */
		struct pollfd p = { .fd = 1, .events = 0 };

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) {
			signal(SIGPIPE, SIG_DFL);
			raise(SIGPIPE);
		}
	}
	return status;
}

long fork_server_idle(const char *env_name, int flags)
{
	return env_long(env_name, 1, FORK_SERVER_IDLE_MAX, 600, flags);
}

int server_env(const char *env_name)
{
	static const char *const words[] = { "0", "1", "always", NULL };

	return env_choice(env_name, words, SERVER_ON, ENV_DIE);
}

/*
 * The environment variable by which a spawned server learns of the pipe
 * (always its descriptor 3) on which it says it holds its lock.
 */
#define READY_ENV "CI_FORK_SERVER_READY"

/*
 * Spawn exe's server for index_path; ready_fd >= 0: the write end of a pipe,
 * handed to it as descriptor 3 (READY_ENV says so), on which it writes a byte
 * once it holds its lock.
 */
static void spawn(const char *exe, const char *index_path, long idle_s, int ready_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char idle[32], *real;
	char *args[7], **envp = environ;
	sigset_t none;
	pid_t pid;
	size_t envc = 0;

	if (!(real = realpath(index_path, NULL)))
		return;
	if (ready_fd >= 0) {
		while (environ[envc])
			envc++;
		envp = xcalloc(envc + 2, sizeof(*envp));
		memcpy(envp, environ, envc * sizeof(*envp));
		envp[envc] = READY_ENV "=3";
	}
	snprintf(idle, sizeof(idle), "%ld", idle_s);
	args[0] = (char *)exe;
	args[1] = "--index";
	args[2] = real;
	args[3] = "serve";
	args[4] = "--idle";
	args[5] = idle;
	args[6] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (ready_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, ready_fd, 3);	/* dup2: no FD_CLOEXEC */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
	posix_spawn(&pid, exe, &fa, &at, args, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (envp != environ)
		free(envp);
	free(real);
}

void fork_server_spawn(const char *index_path, long idle_s)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return;
	exe[n] = '\0';
	spawn(exe, index_path, idle_s, -1);
}

void fork_server_spawn_of(const char *exe, const char *index_path, long idle_s)
{
	spawn(exe, index_path, idle_s, -1);
}

int fork_server_spawn_wait(const char *index_path, long idle_s, int *done_fd)
{
	char exe[4096], c;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int p[2], w, r;
	struct pollfd pf;

	if (n <= 0 || pipe2(p, O_CLOEXEC) < 0)
		return -1;
	exe[n] = '\0';
	/* the write end above 3, which spawn's dup2 makes its descriptor 3 */
	w = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
	close(p[1]);
	if (w < 0) {
		close(p[0]);
		return -1;
	}
	spawn(exe, index_path, idle_s, w);
	close(w);
	/* a byte: it holds its lock; the end of the pipe first: it ended
	 * (another server holds the lock, or it failed) */
	pf.fd = p[0];
	pf.events = POLLIN;
	do
		r = poll(&pf, 1, 60000);
	while (r < 0 && errno == EINTR);
	r = r == 1 && read(p[0], &c, 1) == 1 ? 0 : -1;
	if (done_fd && r == 0)
		*done_fd = p[0];
	else
		close(p[0]);
	return r;
}

void fork_server_wait_done(int fd, int timeout_ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char c;
	int r;

	if (fd < 0)
		return;
	do
		r = poll(&pf, 1, timeout_ms);
	while ((r < 0 && errno == EINTR) || (r == 1 && read(fd, &c, 1) == 1));
	close(fd);
}

/* Milliseconds on the monotonic clock. */
static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until fd is readable, up to the deadline (ms of mono_ms(); < 0: none):
 * 1, or 0 when the deadline passed.
 */
static int wait_readable(int fd, int64_t deadline)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	int64_t left;
	int rc;

	if (deadline < 0)
		return 1;
	for (;;) {
		left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		rc = poll(&pf, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return 1;	/* recv says what is wrong */
	}
}

int fork_server_query(const char *sock, const char *q, char **out, int timeout_ms)
{
	struct buf b = BUF_INIT, m = BUF_INIT;
	int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
	int fd;
	char part[ANSWER_PART + 1];
	ssize_t r;

	*out = NULL;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (timeout_ms >= 0) {
		/* a server that does not accept (a full backlog) blocks connect and
		 * send: they give up at the bound too */
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	{
		struct sockaddr_un sa;
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			int hung = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS;
			close(fd);
			return hung ? FORK_SERVER_HUNG : -1;
		}
	}
	buf_add(&m, QUERY_MAGIC, sizeof(QUERY_MAGIC));
	buf_add(&m, q, strlen(q) + 1);
	if (send(fd, m.buf, m.len, MSG_NOSIGNAL) != (ssize_t)m.len) {
		int hung = errno == EAGAIN || errno == EWOULDBLOCK;
		buf_release(&m);
		close(fd);
		return hung ? FORK_SERVER_HUNG : -1;
	}
	buf_release(&m);
	/* the answer in parts: a first byte 'M' (more follow) or 'E' (the last) */
	for (;;) {
		if (!wait_readable(fd, deadline)) {
			buf_release(&b);
			close(fd);
			return FORK_SERVER_HUNG;
		}
		do
			r = recv(fd, part, sizeof(part), 0);
		while (r < 0 && errno == EINTR);
		if (r < 1 || (part[0] != 'M' && part[0] != 'E')) {
			buf_release(&b);
			close(fd);
			return -1;
		}
		buf_add(&b, part + 1, (size_t)r - 1);
		if (part[0] == 'E')
			break;
	}
	close(fd);
	*out = buf_detach(&b, NULL);
	return 0;
}

/*
 * Is the lock of the server at sock held (a server runs there, or is starting:
 * it takes its lock before it reads what it serves, and listens after)?  The
 * test takes the lock for a moment when it is free: a server starting at that
 * very moment then finds it taken and ends, which a caller about to stop it
 * does not mind.
 */
static int server_lock_held(const char *sock)
{
	char *lock_path = xasprintf("%s.lock", sock);
	int fd = open(lock_path, O_RDONLY | O_CLOEXEC), held = 0;

	free(lock_path);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		held = errno == EWOULDBLOCK;
	close(fd);
	return held;
}

long fork_server_lock_pid(const char *sock)
{
	char *lock_path = xasprintf("%s.lock", sock), line[256];
	struct stat st;
	long pid = 0;
	FILE *fp;

	if (stat(lock_path, &st) < 0 || !(fp = fopen("/proc/locks", "re"))) {
		free(lock_path);
		return 0;
	}
	free(lock_path);
	/* "1: FLOCK  ADVISORY  WRITE 4242 fd:01:123456 0 EOF" (a waiter's line has "->") */
	while (!pid && fgets(line, sizeof(line), fp)) {
		unsigned maj, min;
		unsigned long ino;
		long p;
		char type[16];

		if (strstr(line, "->") ||
		    sscanf(line, "%*[^:]: %15s %*s %*s %ld %x:%x:%lu", type, &p, &maj, &min, &ino) != 5)
			continue;
		if (!strcmp(type, "FLOCK") && ino == (unsigned long)st.st_ino &&
		    maj == major(st.st_dev) && min == minor(st.st_dev))
			pid = p;
	}
	fclose(fp);
	return pid;
}

int fork_server_stop(const char *sock)
{
	int fd = connect_to(sock), i;
	char c;

	/* a server starting (a build just spawned it): wait, up to a minute,
	 * for it to listen */
	for (i = 0; fd < 0 && i < 3000 && server_lock_held(sock); i++) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
		fd = connect_to(sock);
	}
	if (fd < 0)
		return 1;
	if (send(fd, STOP_MAGIC, sizeof(STOP_MAGIC), MSG_NOSIGNAL) < 0) {
		close(fd);
		return 1;
	}
	/* the server closes the connection as it goes */
	while (recv(fd, &c, 1, 0) < 0 && errno == EINTR)
		;
	close(fd);
	return 0;
}

/* ---- the server ---- */

/*
 * A process is one server, or one worker of it, at most: these are the
 * process's, read by signal handlers (stopping, child_ended), on_exit
 * (report_fd) and the calls of the API that take no server (fork_server_reply,
 * fork_server_ready_take, fork_server_child_init).  NEEDSWORK: a struct of the
 * server passed to those calls would need ci-rank's and ci-index's callers
 * to hold one.
 */
static int report_fd = -1;	/* a worker's connection: its exit status goes there */
static int lock_fd = -1;	/* the server's lock: not a worker's to hold */
static int ready_fd = -1;	/* fork_server_spawn_wait's pipe, told once the lock is held */

/* on_exit: the status, once what the worker wrote is out */
static void report_status(int status, void *arg)
{
	int32_t v = status;

	(void)arg;
	fflush(NULL);
	if (report_fd >= 0) {
		/* test hook: a worker that ends late, after its caller has the status (t0515) */
		long ms = env_long("CI_INDEX_TEST_WORKER_END_MS", 0, 60000, 0, ENV_WARN);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		send(report_fd, &v, sizeof(v), MSG_NOSIGNAL);
		if (ms > 0)
			nanosleep(&ts, NULL);
	}
}

void fork_server_reply(int status)
{
	int32_t v = status;
	int fd;

	fflush(NULL);
	if (report_fd < 0)
		return;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	send(report_fd, &v, sizeof(v), MSG_NOSIGNAL);
	close(report_fd);
	report_fd = -1;
}

/* A request: its strings checked and pointed at. */
struct request {
	const char *cwd;
	char **argv, **envv;
	uint32_t argc, envc;
};

static int parse_request(char *p, size_t len, struct request *rq)
{
	uint32_t n[2];
	size_t at, i, total;

	if (len < sizeof(REQ_MAGIC) + sizeof(n) || memcmp(p, REQ_MAGIC, sizeof(REQ_MAGIC)))
		return -1;
	memcpy(n, p + sizeof(REQ_MAGIC), sizeof(n));
	if (n[0] < 1 || n[0] > 100000 || n[1] > 100000)
		return -1;
	rq->argc = n[0];
	rq->envc = n[1];
	total = 1 + (size_t)n[0] + n[1];
	rq->argv = xcalloc((size_t)n[0] + 1, sizeof(char *));
	rq->envv = xcalloc((size_t)n[1] + 1, sizeof(char *));
	at = sizeof(REQ_MAGIC) + sizeof(n);
	for (i = 0; i < total; i++) {
		char *s = p + at, *end = at < len ? memchr(s, '\0', len - at) : NULL;
		if (!end) {
			free(rq->argv);
			free(rq->envv);
			return -1;
		}
		if (i == 0)
			rq->cwd = s;
		else if (i <= n[0])
			rq->argv[i - 1] = s;
		else
			rq->envv[i - 1 - n[0]] = s;
		at = (size_t)(end - p) + 1;
	}
	return at == len ? 0 : (free(rq->argv), free(rq->envv), -1);
}

static void worker(int conn, int lfd, const int fds[3], struct request *rq,
		   const struct fork_server_ops *ops)
{
	int32_t pid = (int32_t)getpid();
	int i;

	close(lfd);
	if (lock_fd >= 0)
		close(lock_fd);
	if (ops->watch_fd && ops->watch_fd(ops->data) >= 0)
		close(ops->watch_fd(ops->data));
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	for (i = 0; i < 3; i++) {
		if (dup2(fds[i], i) < 0)
			_exit(EXIT_IO);
	}
	for (i = 0; i < 3; i++)
		if (fds[i] > 2)
			close(fds[i]);
	report_fd = conn;
	if (send(conn, &pid, sizeof(pid), MSG_NOSIGNAL) != (ssize_t)sizeof(pid))
		_exit(EXIT_IO);
	environ = rq->envv;
	on_exit(report_status, NULL);
	if (chdir(rq->cwd) < 0) {
		error_errno("cannot enter '%s'", rq->cwd);
		exit(EXIT_IO);
	}
	exit(ops->run(ops->data, (int)rq->argc, rq->argv));
}

static volatile sig_atomic_t stopping, child_ended;

static void stop_on(int sig)
{
	(void)sig;
	stopping = 1;
}

int fork_server_ready_take(void)
{
	int fd = ready_fd;

	ready_fd = -1;
	return fd;
}

void fork_server_ready_say(int fd)
{
	if (fd >= 0)
		close(fd);
}

void fork_server_child_init(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}

void fork_server_stop_soon(void)
{
	stopping = 1;
}

static void child_on(int sig)
{
	(void)sig;
	child_ended = 1;
}

static int is_ours(const char *sock, const struct stat *mine)
{
	struct stat st;

	return lstat(sock, &st) == 0 && st.st_ino == mine->st_ino && st.st_dev == mine->st_dev;
}

/* A server serving: what fork_server_serve's steps share. */
struct serve {
	const char *sock;		/* its socket */
	const char *index_path;		/* the index served */
	long idle_s;			/* seconds without a request before it exits (<= 0: never) */
	const struct fork_server_ops *ops;
	int lock;			/* the server's lock */
	int lfd;			/* the listening socket */
	struct stat mine;		/* the socket's identity (is_ours) */
	sigset_t orig_mask;		/* the signal mask before serving (a worker's) */
	sigset_t wait_mask;		/* the mask while waiting (ppoll) */
	struct timespec last;		/* when the last request came */
	char *req;			/* a request's bytes (REQ_MAX) */
};

/* Take the server's lock, then preload: 0, 1 when another server holds it, -1 after a message. */
static int serve_lock(struct serve *sv)
{
	char *lock_path = xasprintf("%s.lock", sv->sock);

	sv->lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lock_path);
	if (sv->lock < 0)
		return error_errno("cannot open the lock of '%s'", sv->sock);
	if (flock(sv->lock, LOCK_EX | LOCK_NB) < 0) {
		close(sv->lock);
		return 1;	/* another serves there */
	}
	lock_fd = sv->lock;
	if (ready_fd >= 0 && write(ready_fd, "L", 1) != 1) {
		/* it stopped waiting: nothing to tell */
	}
	/* the spawner may go on: a stop now waits for this server; the end of
	 * the pipe says the preload is done (or, taken by the preload, what it
	 * started: fork_server_ready_take) */
	sv->ops->preload(sv->ops->data, sv->index_path);
	fork_server_ready_say(fork_server_ready_take());
	return 0;
}

/* Listen at the socket: 0, or -1 after a message (the lock let go). */
static int serve_listen(struct serve *sv)
{
	struct sockaddr_un sa;

	sv->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sv->sock);
	unlink(sv->sock);
	if (sv->lfd < 0 || bind(sv->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(sv->lfd, 64) < 0 ||
	    lstat(sv->sock, &sv->mine) < 0) {
		error_errno("cannot listen at '%s'", sv->sock);
		if (sv->lfd >= 0)
			close(sv->lfd);
		close(sv->lock);
		return -1;
	}
	return 0;
}

/* The signals of a server: killed, it removes its socket; its workers reaped and told about. */
static void serve_signals(struct serve *sv)
{
	struct sigaction sa_stop;
	sigset_t stop_sigs;

	signal(SIGPIPE, SIG_IGN);
	/* killed: the socket goes with the server */
	memset(&sa_stop, 0, sizeof(sa_stop));
	sa_stop.sa_handler = stop_on;
	sigaction(SIGTERM, &sa_stop, NULL);
	sigaction(SIGINT, &sa_stop, NULL);
	sigaction(SIGHUP, &sa_stop, NULL);
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	if (sv->ops->ended) {
		/* workers are reaped here, and told about; one that preload
		 * forked may have ended already */
		sa_stop.sa_handler = child_on;
		sa_stop.sa_flags = SA_NOCLDSTOP;
		sigaction(SIGCHLD, &sa_stop, NULL);
		sigaddset(&stop_sigs, SIGCHLD);
		child_ended = 1;
	} else {
		signal(SIGCHLD, SIG_IGN);	/* reaped by the kernel */
	}
	/* held back but while waiting (ppoll): none is lost between the test and the wait */
	sigprocmask(SIG_BLOCK, &stop_sigs, &sv->orig_mask);
	sv->wait_mask = sv->orig_mask;
	sigdelset(&sv->wait_mask, SIGTERM);
	sigdelset(&sv->wait_mask, SIGINT);
	sigdelset(&sv->wait_mask, SIGHUP);
	sigdelset(&sv->wait_mask, SIGCHLD);
}

/*
 * Wait for a connection (the workers that ended and the watched descriptor
 * are seen to meanwhile): 1 when one is there, 0 to wait again, -1 when the
 * server is to end (idle, or another server took the name).
 */
static int serve_wait(struct serve *sv)
{
	const struct fork_server_ops *ops = sv->ops;
	struct pollfd p[2] = { { .fd = sv->lfd, .events = POLLIN }, { .fd = -1, .events = POLLIN } };
	struct timespec now, ts;
	int r, status, err;
	pid_t pid;

	if (ops->watch_fd)
		p[1].fd = ops->watch_fd(ops->data);
	/* idle: since the last request, not the last event watched */
	clock_gettime(CLOCK_MONOTONIC, &now);
	ts.tv_sec = sv->last.tv_sec + (sv->idle_s > 0 ? sv->idle_s : 0) - now.tv_sec;
	ts.tv_nsec = sv->last.tv_nsec - now.tv_nsec;
	if (ts.tv_nsec < 0)
		ts.tv_sec--, ts.tv_nsec += 1000000000;
	if (sv->idle_s > 0 && ts.tv_sec < 0)
		return -1;
	r = ppoll(p, 2, sv->idle_s > 0 ? &ts : NULL, &sv->wait_mask);
	err = errno;	/* before the callbacks */
	if (child_ended) {
		child_ended = 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			ops->ended(ops->data, pid, status);
	}
	if (r < 0 && err == EINTR)
		return 0;
	if (r > 0 && p[1].fd >= 0 && (p[1].revents & (POLLIN | POLLERR | POLLHUP)))
		ops->on_watch(ops->data);
	if (r == 0)
		return 0;	/* the idle time is looked at above */
	if (r < 0 || !is_ours(sv->sock, &sv->mine))
		return -1;	/* another server took the name */
	return (p[0].revents & POLLIN) ? 1 : 0;
}

/* Answer the question q on conn (ops->query), in parts of ANSWER_PART bytes. */
static void serve_answer(int conn, const char *q, const struct fork_server_ops *ops)
{
	struct buf a = BUF_INIT;
	size_t at = 0, n;

	ops->query(ops->data, q, &a);
	do {
		char part[ANSWER_PART + 1];
		n = a.len - at > ANSWER_PART ? ANSWER_PART : a.len - at;
		part[0] = at + n < a.len ? 'M' : 'E';
		if (n)
			memcpy(part + 1, a.buf + at, n);
		if (send(conn, part, n + 1, MSG_NOSIGNAL) != (ssize_t)(n + 1))
			break;
		at += n;
	} while (at < a.len);
	buf_release(&a);
}

/*
 * Run the request rq in the server itself (ops->here said it may): the
 * caller's streams on 0, 1 and 2, its directory and environment, for the
 * time of ops->run; then the server's own again.
 */
static void serve_here(int conn, const int fds[3], struct request *rq, const struct fork_server_ops *ops)
{
	int32_t v = 0;
	int saved[3], dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), i;
	char **env = environ;

	for (i = 0; i < 3; i++)
		saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
	if (dir < 0 || saved[0] < 0 || saved[1] < 0 || saved[2] < 0 || chdir(rq->cwd) < 0)
		goto done;
	if (send(conn, &v, sizeof(v), MSG_NOSIGNAL) != (ssize_t)sizeof(v))
		goto done;
	fflush(NULL);
	for (i = 0; i < 3; i++)
		dup2(fds[i], i);
	clearerr(stdout);
	clearerr(stderr);
	environ = rq->envv;
	optind = 0;
	v = ops->run(ops->data, (int)rq->argc, rq->argv);
	fflush(NULL);
	environ = env;
	send(conn, &v, sizeof(v), MSG_NOSIGNAL);
done:
	for (i = 0; i < 3; i++)
		if (saved[i] >= 0) {
			dup2(saved[i], i);
			close(saved[i]);
		}
	if (dir >= 0) {
		if (fchdir(dir) < 0) {
			/* its directory is gone: it does not need one */
		}
		close(dir);
	}
}

/*
 * Take the connection waiting and serve it: a question answered, a request
 * run in a worker it forks (or here: ops->here).  1 when it asked the server to stop, else 0.
 */
static int serve_request(struct serve *sv)
{
	const struct fork_server_ops *ops = sv->ops;
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct msghdr msg;
	struct cmsghdr *cm;
	struct request rq = { 0 };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct iovec iov;
	int conn, fds[3] = { -1, -1, -1 }, nfds = 0, i, stop = 0;
	char *req = sv->req;
	ssize_t len;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &sv->last);
	conn = accept4(sv->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return 0;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != geteuid()) {
		close(conn);
		return 0;
	}
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = req;
	iov.iov_len = REQ_MAX;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.space;
	msg.msg_controllen = sizeof(ctl.space);
	do
		len = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
	while (len < 0 && errno == EINTR);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (nfds > 3)
				nfds = 3;
			memcpy(fds, CMSG_DATA(cm), (size_t)nfds * sizeof(int));
		}
	if (ops->query && len > (ssize_t)sizeof(QUERY_MAGIC) && req[len - 1] == '\0' &&
	    !memcmp(req, QUERY_MAGIC, sizeof(QUERY_MAGIC))) {
		serve_answer(conn, req + sizeof(QUERY_MAGIC), ops);
	} else if (len == (ssize_t)sizeof(STOP_MAGIC) && !memcmp(req, STOP_MAGIC, sizeof(STOP_MAGIC))) {
		stop = 1;
	} else if (len > 0 && nfds == 3 && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
		   parse_request(req, (size_t)len, &rq) == 0) {
		/* the snapshot may have been written again since */
		ops->refresh(ops->data, sv->index_path);
		if (ops->here && ops->here(ops->data, (int)rq.argc, rq.argv, rq.envv)) {
			serve_here(conn, fds, &rq, ops);
			pid = -1;
		} else {
			pid = fork();
		}
		if (pid == 0) {
			sigprocmask(SIG_SETMASK, &sv->orig_mask, NULL);
			worker(conn, sv->lfd, fds, &rq, ops);
		}
		if (pid > 0 && ops->forked)
			ops->forked(ops->data, pid);
		free(rq.argv);
		free(rq.envv);
	}
	/* a request refused, or not forked: the caller sees the stream end and runs it itself */
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	close(conn);
	return stop;
}

int fork_server_serve(const char *sock, const char *index_path, long idle_s,
		      const struct fork_server_ops *ops)
{
	struct serve sv;
	int rc;

	memset(&sv, 0, sizeof(sv));
	sv.sock = sock;
	sv.index_path = index_path;
	sv.idle_s = idle_s;
	sv.ops = ops;
	if ((rc = serve_lock(&sv)) != 0)
		return rc;
	if (serve_listen(&sv) < 0)
		return -1;
	serve_signals(&sv);
	sv.req = xmalloc(REQ_MAX);
	clock_gettime(CLOCK_MONOTONIC, &sv.last);
	while (!stopping) {
		rc = serve_wait(&sv);
		if (rc < 0 || (rc > 0 && serve_request(&sv)))
			break;
	}
	free(sv.req);
	/*
	 * The lock before the socket: whoever waits for the socket to go (a
	 * build restarting the server) then starts a server that finds the lock
	 * free; one that takes it meanwhile makes a socket of its own, which
	 * is_ours tells from this one.
	 */
	close(sv.lock);
	lock_fd = -1;
	if (is_ours(sock, &sv.mine))
		unlink(sock);
	close(sv.lfd);
	return 0;
}

int fork_server_command(const char *kind, const char *index_opt, int stop, long idle_s,
			const struct fork_server_ops *ops)
{
	char *path = index_opt ? xstrdup(index_opt) : index_find(".");
	char *sock;
	int rc;

	if (!path)
		return error_errno("cannot open '.'"), EXIT_IO;
	if (access(path, F_OK) < 0) {
		error("no index at '%s': run 'ci-index build' first", path);
		free(path);
		return EXIT_IO;
	}
	sock = fork_server_socket(kind, path);
	if (!sock) {
		error("no private directory for the server's socket ($XDG_RUNTIME_DIR/ci or /tmp/ci-%lu, "
		      "mode 0700)", (unsigned long)geteuid());
		free(path);
		return EXIT_IO;
	}
	if (stop) {
		rc = fork_server_stop(sock);
		if (rc)
			error("no server is running for '%s'", path);
		free(sock);
		free(path);
		return rc ? EXIT_NOTHING : EXIT_OK;
	}
	/* no descriptor of whoever started it stays open here, but the pipe of
	 * fork_server_spawn_wait (descriptor 3), if it was started so */
	{
		const char *e = getenv(READY_ENV);
		if (e && !strcmp(e, "3") && fcntl(3, F_GETFD) >= 0) {
			ready_fd = 3;
			fcntl(3, F_SETFD, FD_CLOEXEC);	/* nothing it runs keeps the spawner waiting */
			closefrom(4);
		} else {
			closefrom(3);
		}
		unsetenv(READY_ENV);
	}
	rc = fork_server_serve(sock, path, idle_s, ops);
	if (ready_fd >= 0) {
		close(ready_fd);	/* ended without the lock: the spawner sees the pipe end */
		ready_fd = -1;
	}
	if (rc > 0)
		error("a server for '%s' is already running (%s)", path, sock);
	free(sock);
	free(path);
	return rc < 0 ? EXIT_IO : EXIT_OK;
}
