/*
 * ring.h: a fixed-size ring buffer of byte records.
 */
#ifndef RING_H
#define RING_H

#include <stddef.h>

/* What ring_push() does when the ring is full. */
enum overflow {
	OVERFLOW_DROP_OLDEST,	/* overwrite the oldest record */
	OVERFLOW_REJECT,	/* refuse the new record */
};

struct ring {
	void *slots;		/* cap slots, owned */
	size_t cap;		/* a power of two */
	size_t head;		/* index of the oldest record */
	size_t used;		/* records held */
};

typedef struct {
	size_t pushed;		/* records accepted */
	size_t dropped;		/* records overwritten or refused */
} ring_stats;

typedef int (*ring_visit_fn)(const char *data, size_t len, void *payload);

struct ring *ring_new(size_t capacity);
void ring_free(struct ring *r);
int ring_push(struct ring *r, const char *data, size_t len, enum overflow policy);
void ring_drop(struct ring *r, size_t n);
int ring_each(const struct ring *r, ring_visit_fn fn, void *payload);

#endif
