/*
 * libcommon/index/progress.c: progress lines on stderr (progress.h).
 */
#include "core/common.h"
#include "index/progress.h"

#include <pthread.h>
#include <time.h>

#define PROGRESS_FIRST 0.5
#define PROGRESS_EVERY 0.25


static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write p's line (final: with its newline).  Under p->mu, or once the ticker ended. */
static void progress_line(struct progress *p, int final)
{
	double t = now(), el = t - p->start > 1e-3 ? t - p->start : 1e-3, rate, eta;
	size_t done = __atomic_load_n(&p->done, __ATOMIC_RELAXED);

	p->shown = 1;
	if (!p->unit) {
		fprintf(stderr, "\r%s: %s, %.0fs   %s", progname, p->what, el, final ? "\n" : "");
		return;
	}
	rate = done / el;
	eta = rate > 0 && p->total > done ? (p->total - done) / rate : 0;
	fprintf(stderr, "\r%s: %s %zu/%zu %s, %.0f %s/s, ETA %.0fs   %s", progname, p->what,
		done, p->total, p->unit, rate, p->unit, eta, final ? "\n" : "");
}

static void *progress_ticker(void *arg)
{
	struct progress *p = arg;
	double next = p->start + PROGRESS_FIRST;
	struct timespec ts;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		double t = now();
		if (t >= next) {
			progress_line(p, 0);
			next = t + PROGRESS_EVERY;
			continue;
		}
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&p->cond, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Begin a phase: what, counted in unit (NULL: not counted) up to total. */
void progress_start(struct progress *p, int on, const char *what, const char *unit, size_t total,
			   int always)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	p->on = on;
	p->always = always;
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->start = now();
	if (!on)
		return;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* no thread (none can be made): the last line only */
	p->ticking = pthread_create(&p->ticker, NULL, progress_ticker, p) == 0;
}

/* n more units done.  Cannot fail. */
void progress_add(struct progress *p, size_t n)
{
	__atomic_fetch_add(&p->done, n, __ATOMIC_RELAXED);
}

/* End the phase: its last line, when one was shown or it is always reported. */
void progress_stop(struct progress *p)
{
	if (!p->on)
		return;
	if (p->ticking) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->ticker, NULL);
		p->ticking = 0;
	}
	if (p->shown || p->always)
		progress_line(p, 1);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->mu);
	p->on = 0;
}

