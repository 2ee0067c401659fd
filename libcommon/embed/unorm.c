/*
 * unorm.c: NFKC normalisation (UAX #15) over code point arrays (see unorm.h).
 *
 * The three steps of the standard: full compatibility decomposition (a table,
 * Hangul by arithmetic), canonical reordering of combining marks (a stable sort
 * by combining class), canonical composition.  The tables are generated from
 * Node's ICU by scripts/gen-unorm-data.js; combining classes appear there as ranks,
 * which order marks as the classes do, all that reordering and blocking need.
 */
#include "core/common.h"
#include "embed/unorm.h"

struct unorm_decomp {
	uint32_t cp;		/* the code point */
	uint16_t off;		/* its decomposition: unorm_pool[off..off+len) */
	uint8_t len;
};

struct unorm_class {
	uint32_t cp;		/* a non-starter */
	uint8_t rank;		/* its combining class, as a rank (1..) */
};

struct unorm_comp {
	uint32_t first, second;	/* a canonical pair ... */
	uint32_t comp;		/* ... and the primary composite it composes to */
};

#include "embed/unorm-data.h"

/* Hangul syllables decompose and compose by arithmetic (Unicode 3.12). */
enum {
	S_BASE = 0xAC00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11A7,
	L_COUNT = 19, V_COUNT = 21, T_COUNT = 28,
	N_COUNT = V_COUNT * T_COUNT, S_COUNT = L_COUNT * N_COUNT,
};

void ucs_release(struct ucs *u)
{
	free(u->cp);
	u->cp = NULL;
	u->nr = u->alloc = 0;
}

void ucs_add(struct ucs *u, uint32_t cp)
{
	ALLOC_GROW(u->cp, u->nr + 1, u->alloc);
	u->cp[u->nr++] = cp;
}

void utf8_decode(struct ucs *u, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + n;

	ALLOC_GROW(u->cp, u->nr + n, u->alloc);
	while (s < end) {
		int k = *s < 0x80 ? 1 : utf8_seq(s, (size_t)(end - s));
		uint32_t c;

		switch (k) {
		case 1: c = s[0]; break;
		case 2: c = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f); break;
		case 3: c = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f); break;
		case 4: c = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
			(uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f); break;
		default: c = 0xFFFD; k = 1; break;
		}
		u->cp[u->nr++] = c;
		s += k;
	}
}

static const struct unorm_decomp *find_decomp(uint32_t cp)
{
	size_t lo = 0, hi = ARRAY_SIZE(unorm_decomps);

	if (cp < 0xA0)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (unorm_decomps[mid].cp < cp)
			lo = mid + 1;
		else if (unorm_decomps[mid].cp > cp)
			hi = mid;
		else
			return &unorm_decomps[mid];
	}
	return NULL;
}

/* The combining class of cp as a rank; 0 for a starter. */
static unsigned ccc(uint32_t cp)
{
	size_t lo = 0, hi = ARRAY_SIZE(unorm_classes);

	if (cp < 0x300)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (unorm_classes[mid].cp < cp)
			lo = mid + 1;
		else if (unorm_classes[mid].cp > cp)
			hi = mid;
		else
			return unorm_classes[mid].rank;
	}
	return 0;
}

/* The primary composite of (a, b), or 0. */
static uint32_t compose(uint32_t a, uint32_t b)
{
	size_t lo = 0, hi = ARRAY_SIZE(unorm_comps);

	if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE && b < V_BASE + V_COUNT)
		return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
	if (a >= S_BASE && a < S_BASE + S_COUNT && (a - S_BASE) % T_COUNT == 0 &&
	    b > T_BASE && b < T_BASE + T_COUNT)
		return a + (b - T_BASE);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct unorm_comp *c = &unorm_comps[mid];
		if (c->first < a || (c->first == a && c->second < b))
			lo = mid + 1;
		else if (c->first == a && c->second == b)
			return c->comp;
		else
			hi = mid;
	}
	return 0;
}

void unorm_nfkc(struct ucs *out, const uint32_t *in, size_t n)
{
	size_t i, j, starter, w;
	unsigned last;

	/* 1. full compatibility decomposition */
	out->nr = 0;
	ALLOC_GROW(out->cp, n, out->alloc);
	for (i = 0; i < n; i++) {
		uint32_t c = in[i];
		const struct unorm_decomp *d;

		if (c >= S_BASE && c < S_BASE + S_COUNT) {
			uint32_t s = c - S_BASE;
			ucs_add(out, L_BASE + s / N_COUNT);
			ucs_add(out, V_BASE + (s % N_COUNT) / T_COUNT);
			if (s % T_COUNT)
				ucs_add(out, T_BASE + s % T_COUNT);
		} else if ((d = find_decomp(c))) {
			for (j = 0; j < d->len; j++)
				ucs_add(out, unorm_pool[d->off + j]);
		} else {
			ucs_add(out, c);
		}
	}

	/* 2. canonical ordering: a stable insertion sort of each run of non-starters */
	for (i = 1; i < out->nr; i++) {
		uint32_t c = out->cp[i];
		unsigned k = ccc(c);

		if (!k)
			continue;
		for (j = i; j > 0; j--) {
			unsigned pk = ccc(out->cp[j - 1]);
			if (pk <= k)
				break;
			out->cp[j] = out->cp[j - 1];
		}
		out->cp[j] = c;
	}

	/* 3. canonical composition (the algorithm of UAX #15's sample code) */
	if (!out->nr)
		return;
	starter = 0;
	last = ccc(out->cp[0]) ? 256 : 0;
	for (i = w = 1; i < out->nr; i++) {
		uint32_t c = out->cp[i], comp;
		unsigned k = ccc(c);

		comp = compose(out->cp[starter], c);
		if (comp && (last < k || last == 0)) {
			out->cp[starter] = comp;
			continue;
		}
		if (!k)
			starter = w;
		last = k;
		out->cp[w++] = c;
	}
	out->nr = w;
}
