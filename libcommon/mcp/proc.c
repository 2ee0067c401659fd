/*
 * proc.c: the composition: each tool call runs a ci command as a child
 * process group in the repository, its stdout (NDJSON records) and stderr read
 * by the server's poll loop; and the index, built or updated in the
 * background by `ci-index`, whose progress reports calls waiting for it show
 * (libcommon/mcp, mcp.h).
 */
#include "mcp/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- child processes ---- */

/* An empty process, not running (what a call starts with).  Cannot fail. */
void mcp_proc_init(struct mcp_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->fd[0] = p->fd[1] = -1;
	p->out = (struct buf)BUF_INIT;
	p->err = (struct buf)BUF_INIT;
}

/*
 * In a child between fork and exec: a process group of its own, no signal
 * blocked, the default actions of SIGPIPE, SIGTERM and SIGINT (ci-mcp ignores
 * or catches them).  Async-signal-safe calls only.
 */
void mcp_child_reset(void)
{
	sigset_t none;

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
}

/*
 * A file in memory holding text, read from its start: the standard input of a
 * command given a parameter's value there (a tool's "stdin").  -1 with errno.
 */
int mcp_text_fd(const char *text, size_t len)
{
	int fd = memfd_create("ci-mcp-stdin", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			errno = e;
			return -1;
		}
		text += n;
		len -= (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Start argv (argv[0] a ci command, found beside this program or on PATH) in
 * the repository root, its standard input in_fd (-1: /dev/null; the caller
 * keeps and closes it).  0; or -1 with errno when it cannot run (E2BIG: an
 * argument over the kernel's 128 KiB, or all of them over its limit; ENOENT:
 * no such command), -2 with errno when the root cannot be entered.
 */
int mcp_proc_start(struct mcp_server *srv, struct mcp_proc *p, char **argv, int in_fd)
{
	int po[2], pe[2];
	/*
	 * Everything the child needs is made before fork(): with --http other
	 * threads run, and the child may only call async-signal-safe functions.
	 */
	char *exe = xasprintf("%s/%s", srv->bindir, argv[0]);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int ep[2] = { -1, -1 };	/* the child's errno when chdir or exec fails; closed by exec */
	int child_errno;
	ssize_t n;

	mcp_proc_init(p);
	p->max_output = srv->max_output;
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
		mcp_child_reset();
		dup2(in_fd >= 0 ? in_fd : devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(srv->root) == 0) {
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
void mcp_proc_kill(struct mcp_proc *p)
{
	if (p->pid > 0) {
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
	}
}

/* Read what fd k has; at end of both, reap.  Returns 1 when the process is done. */
int mcp_proc_read(struct mcp_proc *p, int k)
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
				mcp_proc_kill(p);
				break;
			}
		}
		if (p->out.len + (size_t)n > p->max_output) {
			p->truncated = 1;
			buf_add(&p->out, tmp, p->max_output > p->out.len ? p->max_output - p->out.len : 0);
			mcp_proc_kill(p);
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
void mcp_proc_release(struct mcp_proc *p)
{
	for (int k = 0; k < 2; k++)
		if (p->fd[k] >= 0) {
			close(p->fd[k]);
			p->fd[k] = -1;
		}
	if (p->pid > 0) {
		mcp_proc_kill(p);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
		p->pid = 0;
	}
	buf_release(&p->out);
	buf_release(&p->err);
}

/* ---- the index: built or updated in the background ---- */

/* Read ci-index's last progress report ("\rci-index: indexing 12/34 files, ..."). */
void mcp_indexer_progress(struct mcp_server *srv)
{
	struct buf *e = &srv->indexer.p.err;
	const char *p = NULL, *q;
	size_t d, t;

	for (q = e->buf; (q = strstr(q, ": indexing ")); q++)
		p = q;
	if (p && sscanf(p, ": indexing %zu/%zu", &d, &t) == 2) {
		srv->indexer.files_done = d;
		srv->indexer.files_total = t;
	}
}


/* A progress message while a call waits for the index. */
char *mcp_indexer_doing_msg(struct mcp_server *srv)
{
	char *d = mcp_indexer_doing(srv);
	char *m = xasprintf("waiting for the index, %s", d);

	free(d);
	return m;
}

/* What the index is doing, for messages: "being built (1234/10000 files, for 12 s)". */
char *mcp_indexer_doing(struct mcp_server *srv)
{
	long long secs = (mcp_now_ms() - srv->indexer.started) / 1000;

	if (srv->indexer.files_total)
		return xasprintf("%s (%zu of %zu files, for %lld s)", srv->indexer.built ? "being built" :
				 "being updated", srv->indexer.files_done, srv->indexer.files_total, secs);
	return xasprintf("%s (for %lld s)", srv->indexer.built ? "being built" : "being updated", secs);
}

/* The last line of ci-index's stderr that is not a progress report; malloc'd. */
static char *indexer_error(struct mcp_server *srv)
{
	struct buf *e = &srv->indexer.p.err;
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

int mcp_index_exists(struct mcp_server *srv)
{
	struct stat st;

	return stat(srv->index_path, &st) == 0 && st.st_size > 0;
}

void mcp_indexer_start(struct mcp_server *srv)
{
	/* build when there is none: `ci-index update` cannot lock a missing directory */
	int exists = mcp_index_exists(srv);
	char *argv[] = { "ci-index", "--progress", "--history", exists ? "update" : "build", NULL };

	if (srv->indexer.running)
		return;
	mcp_log(srv, NULL, MCP_LOG_INFO, "%s the index", exists ? "updating" : "building");
	srv->root = srv->home;
	if (mcp_proc_start(srv, &srv->indexer.p, argv, -1) < 0) {
		mcp_log(srv, NULL, MCP_LOG_ERROR, "cannot start ci-index: %s", strerror(errno));
		srv->indexer.done = mcp_now_ms();
		return;
	}
	srv->indexer.p.tail_err = 1;
	srv->indexer.running = 1;
	srv->indexer.built = !exists;
	srv->indexer.files_done = srv->indexer.files_total = 0;
	srv->indexer.started = mcp_now_ms();
}

void mcp_indexer_finished(struct mcp_server *srv)
{
	srv->indexer.running = 0;
	srv->indexer.done = mcp_now_ms();
	free(srv->indexer.last_error);
	srv->indexer.last_error = NULL;
	if (srv->indexer.p.status) {
		srv->indexer.last_error = indexer_error(srv);
		mcp_log(srv, NULL, MCP_LOG_ERROR, "%s", srv->indexer.last_error);
	} else {
		mcp_log(srv, NULL, MCP_LOG_INFO, "the index is up to date (%lld ms)", srv->indexer.done - srv->indexer.started);
	}
	mcp_proc_release(&srv->indexer.p);
}

