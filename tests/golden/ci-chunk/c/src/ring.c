/*
 * ring.c: a fixed-size ring buffer of byte records, used by the log shipper
 * to hold lines until the network catches up.
 */
#include <stdlib.h>
#include <string.h>
#include "ring.h"

#define RING_MIN 16
#define SLOT(r, i) (&((struct slot *)(r)->slots)[(i) & ((r)->cap - 1)])

struct slot {
	size_t len;		/* bytes used in data */
	char *data;		/* owned, NULL when free */
};

union word {
	size_t n;
	void *p;
};

static const char *const overflow_names[] = {
	"drop-oldest",
	"reject",
};

static ring_stats stats;

/* Round n up to a power of two, at least RING_MIN. */
static size_t round_up(size_t n)
{
	size_t p = RING_MIN;

	while (p < n)
		p <<= 1;
	return p;
}

struct ring *ring_new(size_t capacity)
{
	struct ring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cap = round_up(capacity);
	r->slots = calloc(r->cap, sizeof(struct slot));
	return r;
}

void ring_free(struct ring *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->cap; i++)
		free(SLOT(r, i)->data);
	free(r->slots);
	free(r);
}

/*
 * Append a copy of data.  Returns 0, or -1 when the ring is full and the
 * policy is OVERFLOW_REJECT.
 */
int ring_push(struct ring *r, const char *data, size_t len, enum overflow policy)
{
	struct slot *s;

	if (r->used == r->cap) {
		stats.dropped++;
		if (policy == OVERFLOW_REJECT)
			return -1;
		ring_drop(r, 1);
	}
	s = SLOT(r, r->head + r->used);
	s->data = malloc(len);
	memcpy(s->data, data, len);
	s->len = len;
	r->used++;
	stats.pushed++;
	return 0;
}

void ring_drop(struct ring *r, size_t n)
{
	while (n-- && r->used) {
		struct slot *s = SLOT(r, r->head);

		free(s->data);
		s->data = NULL;
		r->head = (r->head + 1) & (r->cap - 1);
		r->used--;
	}
}

/* Call fn on each record, oldest first, until it returns non-zero. */
int ring_each(const struct ring *r, ring_visit_fn fn, void *payload)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < r->used && !ret; i++)
		ret = fn(SLOT(r, r->head + i)->data, SLOT(r, r->head + i)->len, payload);
	return ret;
}

static int count_visit(const char *data, size_t len, void *payload)
{
	(void)data;
	*(size_t *)payload += len;
	return 0;
}

/* A visitor by name: a function returning a function pointer. */
static int (*visitor_for(const char *name))(const char *, size_t, void *)
{
	return strcmp(name, "count") ? NULL : count_visit;
}

const char *overflow_name(enum overflow o)
{
	return overflow_names[o];
}
