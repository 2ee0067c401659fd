/*
 * libcommon/index/run.c: an index run's set-up and end (run.h).
 */
#include "core/common.h"
#include "index/run.h"
#include "index/index.h"

#include <limits.h>
#include <signal.h>

void ix_run_init(struct ix_run *r)
{
	memset(r, 0, sizeof(*r));
	r->o.threads = online_cpus();
	r->o.progress = -1;
	r->crash_after = -1;
	r->crash_signal = SIGKILL;
	r->build_lock = -1;
	r->build_dir = ".";
	r->deferred_lock = -1;
}

void ix_run_hooks(struct ix_run *r)
{
	static const char *const sigs[] = { "KILL", "TERM", "INT", NULL };
	static const int signo[] = { SIGKILL, SIGTERM, SIGINT };

	r->crash_after = env_long("CI_INDEX_CRASH_AFTER", 0, LONG_MAX, -1, ENV_DIE);
	r->slow_ms = env_long("CI_INDEX_SLOW_MS", 0, 60000, 0, ENV_DIE);
	r->crash_signal = signo[env_choice("CI_INDEX_CRASH_SIGNAL", sigs, 0, ENV_DIE)];
}

void ix_run_close_deferred(struct ix_run *r)
{
	if (!r->deferred_ix)
		return;
	index_close(r->deferred_ix);
	close(r->deferred_lock);
	r->deferred_ix = NULL;
	r->deferred_lock = -1;
}

void ix_run_release(struct ix_run *r)
{
	free(r->wrote);
	r->wrote = NULL;
	if (r->build_lock >= 0) {
		/* after the server's restart: see build_lock */
		close(r->build_lock);
		r->build_lock = -1;
	}
}
