/*
 * libcommon/index/progress.h: progress of a long phase of an index run.
 *
 * Progress on stderr (a terminal, or --progress) for one phase of the work:
 * "walking the tree", "indexing 120/812 files, 300 files/s, ETA 2s",
 * "embedding 512/6120 texts, ...".  It shows within a second of the phase's
 * start however long one unit of work takes (a huge file, a batch of 512
 * texts to embed, a VACUUM): a thread of its own writes the line
 * PROGRESS_FIRST seconds after the start and every PROGRESS_EVERY seconds
 * after, from the counter the work advances (progress_add).  A phase that
 * ends before its first line shows nothing, unless it is one whose end is
 * always reported (a build's indexing, an embedding: their last line stays,
 * with "\n").
 */
#ifndef CI_INDEX_PROGRESS_H
#define CI_INDEX_PROGRESS_H

#include <pthread.h>
#include <stddef.h>

struct progress {
	int on;			/* report at all */
	int always;		/* write the last line even if none was shown */
	size_t total;		/* units to do; 0: not known (no counts shown) */
	size_t done;		/* units done (atomic: the ticker reads it) */
	double start;		/* seconds */
	const char *what;	/* "indexing" */
	const char *unit;	/* "files", or NULL */
	int shown;		/* a line was written */
	int ticking;		/* the ticker thread runs */
	int stop;		/* the ticker is to end (under mu) */
	pthread_t ticker;
	pthread_mutex_t mu;	/* stop, and the writing of a line */
	pthread_cond_t cond;	/* signalled by progress_stop */
};

/* Begin a phase: what, counted in unit (NULL: not counted) up to total;
 * always: its last line is written even if none was shown. */
void progress_start(struct progress *p, int on, const char *what, const char *unit, size_t total,
		    int always);
/* n more units done.  Cannot fail. */
void progress_add(struct progress *p, size_t n);
/* End the phase: its last line, when one was shown or it is always reported. */
void progress_stop(struct progress *p);

#endif
