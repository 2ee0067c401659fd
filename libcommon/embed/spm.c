/*
 * spm.c: the SentencePiece unigram tokenizer of USE Lite (see spm.h).
 *
 * Shaped by ci-embed's static mode, which tokenizes tens of thousands of chunks a
 * second: the trie's edges live in one open-addressing hash table keyed by
 * (node, code point), the Viterbi pass runs forward over the lattice without
 * building it, and ASCII text (most source code) skips normalisation.
 */
#include "core/common.h"
#include "embed/spm.h"

#include <errno.h>
#include <sys/stat.h>

#define SPM_SEP 0x2581u		/* "▁", the word-boundary mark */
#define SPM_RESERVED 6		/* ids 0..5 (unknown, <s>, </s>, extras) are not in the trie */

struct spm_node {
	int32_t id;		/* the piece ending here, or -1 */
	int32_t children;	/* how many nodes hang from this one */
	double score;		/* its score */
};

struct spm {
	size_t nr;		/* pieces */
	char **piece;		/* piece[id]: UTF-8 text */
	double *score;		/* score[id] */
	uint8_t *len16;		/* len16[id]: length in UTF-16 units (the reference's step back) */

	char *pieces;		/* when read from a cache: the block piece[] points into */
	struct spm_node *node;	/* trie nodes; node[0] is the root */
	size_t node_nr, node_alloc;
	uint64_t *edge_key;	/* hash table of edges: (parent << 21 | code point) ... */
	int32_t *edge_child;	/* ... -> child node; EDGE_EMPTY marks a free slot */
	unsigned edge_bits;	/* the table has 1 << edge_bits slots */
	size_t edge_nr;
	int sep_inside;		/* some piece has "▁" after its start: no prefix shortcut */
	int32_t ascii[128];	/* the root's children for ASCII, or -1: no hashing for most text */
};

#define EDGE_EMPTY UINT64_MAX

static inline size_t edge_slot(const struct spm *sp, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - sp->edge_bits));
}

static inline int32_t trie_child(const struct spm *sp, int32_t parent, uint32_t cp)
{
	uint64_t key = (uint64_t)parent << 21 | cp;
	size_t mask = ((size_t)1 << sp->edge_bits) - 1, i = edge_slot(sp, key);

	for (;; i = (i + 1) & mask) {
		if (sp->edge_key[i] == key)
			return sp->edge_child[i];
		if (sp->edge_key[i] == EDGE_EMPTY)
			return -1;
	}
}

static void edge_put(struct spm *sp, uint64_t key, int32_t child)
{
	size_t mask = ((size_t)1 << sp->edge_bits) - 1, i = edge_slot(sp, key);

	while (sp->edge_key[i] != EDGE_EMPTY)
		i = (i + 1) & mask;
	sp->edge_key[i] = key;
	sp->edge_child[i] = child;
	sp->edge_nr++;
}

static void edges_grow(struct spm *sp)
{
	uint64_t *okey = sp->edge_key;
	int32_t *ochild = sp->edge_child;
	size_t i, on = sp->edge_bits ? (size_t)1 << sp->edge_bits : 0;

	sp->edge_bits = sp->edge_bits ? sp->edge_bits + 1 : 12;
	sp->edge_key = xmalloc(sizeof(*sp->edge_key) << sp->edge_bits);
	sp->edge_child = xmalloc(sizeof(*sp->edge_child) << sp->edge_bits);
	memset(sp->edge_key, 0xff, sizeof(*sp->edge_key) << sp->edge_bits);
	sp->edge_nr = 0;
	for (i = 0; i < on; i++)
		if (okey[i] != EDGE_EMPTY)
			edge_put(sp, okey[i], ochild[i]);
	free(okey);
	free(ochild);
}

static int32_t node_new(struct spm *sp)
{
	ALLOC_GROW(sp->node, sp->node_nr + 1, sp->node_alloc);
	sp->node[sp->node_nr].id = -1;
	sp->node[sp->node_nr].children = 0;
	sp->node[sp->node_nr].score = 0;
	return (int32_t)sp->node_nr++;
}

/* Insert piece id; a piece inserted again takes the new id and score. */
static void trie_insert(struct spm *sp, int32_t id, const uint32_t *cp, size_t n)
{
	int32_t cur = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int32_t next = trie_child(sp, cur, cp[i]);
		if (next < 0) {
			next = node_new(sp);
			if ((sp->edge_nr + 1) * 2 > ((size_t)1 << sp->edge_bits))
				edges_grow(sp);
			edge_put(sp, (uint64_t)cur << 21 | cp[i], next);
			sp->node[cur].children++;
			if (cur == 0 && cp[i] < 128)
				sp->ascii[cp[i]] = next;
		}
		cur = next;
	}
	sp->node[cur].id = id;
	sp->node[cur].score = sp->score[id];
}

int spm_load(struct spm **out, const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *e;
	struct spm *sp = NULL;
	struct ucs u = UCS_INIT;
	size_t i, k;
	int ret = -1;

	*out = NULL;
	if (!root) {
		if (jerr.line <= 0 && access(path, R_OK) < 0)
			error_errno("cannot read '%s'", path);
		else
			error("%s:%d: %s", path, jerr.line, jerr.text);
		return -1;
	}
	if (!json_is_array(root) || json_array_size(root) <= SPM_RESERVED) {
		error("%s: not a vocabulary (an array of [piece, score])", path);
		goto done;
	}
	sp = xcalloc(1, sizeof(*sp));
	sp->nr = json_array_size(root);
	sp->piece = xcalloc(sp->nr, sizeof(*sp->piece));
	sp->score = xcalloc(sp->nr, sizeof(*sp->score));
	sp->len16 = xcalloc(sp->nr, sizeof(*sp->len16));
	json_array_foreach(root, i, e) {
		json_t *p = json_array_get(e, 0), *s = json_array_get(e, 1);

		if (!json_is_array(e) || !json_is_string(p) || !(json_is_number(s) || json_is_null(s)) ||
		    !json_string_length(p)) {
			error("%s: entry %zu is not [piece, score]", path, i);
			goto done;
		}
		sp->piece[i] = xstrdup(json_string_value(p));
		/* null (the pieces with ":") counts as 0, as in the reference's arithmetic */
		sp->score[i] = json_is_null(s) ? 0 : json_number_value(s);
		u.nr = 0;
		utf8_decode(&u, json_string_value(p), json_string_length(p));
		for (k = 0; k < u.nr; k++)
			sp->len16[i] += u.cp[k] > 0xFFFF ? 2 : 1;
		if (u.nr > 64) {
			error("%s: entry %zu: a piece of %zu characters", path, i, u.nr);
			goto done;
		}
	}
	node_new(sp);
	edges_grow(sp);
	for (k = 0; k < 128; k++)
		sp->ascii[k] = -1;
	for (i = SPM_RESERVED; i < sp->nr; i++) {
		u.nr = 0;
		utf8_decode(&u, sp->piece[i], strlen(sp->piece[i]));
		trie_insert(sp, (int32_t)i, u.cp, u.nr);
		for (k = 1; k < u.nr; k++)
			if (u.cp[k] == SPM_SEP)
				sp->sep_inside = 1;
	}
	*out = sp;
	sp = NULL;
	ret = 0;
done:
	spm_free(sp);
	ucs_release(&u);
	json_decref(root);
	return ret;
}

void spm_free(struct spm *sp)
{
	size_t i;

	if (!sp)
		return;
	if (!sp->pieces)
		for (i = 0; i < sp->nr; i++)
			free(sp->piece[i]);
	free(sp->pieces);
	free(sp->piece);
	free(sp->score);
	free(sp->len16);
	free(sp->node);
	free(sp->edge_key);
	free(sp->edge_child);
	free(sp);
}

size_t spm_size(const struct spm *sp)
{
	return sp->nr;
}

const char *spm_piece(const struct spm *sp, int32_t id)
{
	return id >= 0 && (size_t)id < sp->nr ? sp->piece[id] : NULL;
}

double spm_score(const struct spm *sp, int32_t id)
{
	return id >= 0 && (size_t)id < sp->nr ? sp->score[id] : 0;
}

void spm_work_release(struct spm_work *w)
{
	ucs_release(&w->in);
	ucs_release(&w->norm);
	free(w->best);
	free(w->word);
	free(w->ids);
	memset(w, 0, sizeof(*w));
}

/* The reference's processInput(): NFKC, "▁" in front, U+0020 -> "▁". */
static void prepare(struct spm_work *w, const char *text, size_t len)
{
	size_t i;
	int ascii = 1;

	for (i = 0; i < len; i++)
		if ((unsigned char)text[i] >= 0x80) {
			ascii = 0;
			break;
		}
	w->in.nr = 0;
	w->norm.nr = 0;
	if (ascii) {
		ALLOC_GROW(w->norm.cp, len + 1, w->norm.alloc);
		w->norm.cp[0] = SPM_SEP;
		for (i = 0; i < len; i++)
			w->norm.cp[i + 1] = text[i] == ' ' ? SPM_SEP : (unsigned char)text[i];
		w->norm.nr = len ? len + 1 : 0;
		return;
	}
	utf8_decode(&w->in, text, len);
	unorm_nfkc(&w->norm, w->in.cp, w->in.nr);
	if (!w->norm.nr)
		return;
	ALLOC_GROW(w->norm.cp, w->norm.nr + 1, w->norm.alloc);
	memmove(w->norm.cp + 1, w->norm.cp, w->norm.nr * sizeof(*w->norm.cp));
	w->norm.cp[0] = SPM_SEP;
	w->norm.nr++;
	for (i = 1; i < w->norm.nr; i++)
		if (w->norm.cp[i] == ' ')
			w->norm.cp[i] = SPM_SEP;
}

/* Relax best[end] with a piece (id, score) that starts where the best total is from. */
static inline void relax(struct spm_work *w, size_t end, double from, double score, int32_t id)
{
	double s = score + from;

	if (w->best[end] == 0 || s >= w->best[end]) {
		w->best[end] = s;
		w->word[end] = id;
	}
}

/* Encode the whole of text[0..len) into w->ids. */
static void encode_all(const struct spm *sp, struct spm_work *w, const char *text, size_t len)
{
	const uint32_t *sym;
	size_t n, i, j, out;
	int prev_unk;

	prepare(w, text, len);
	n = w->norm.nr;
	sym = w->norm.cp;
	w->ids_nr = 0;
	if (!n)
		return;
	if (n + 1 > w->lattice_alloc) {
		w->lattice_alloc = n + 1 + (n + 1) / 2;
		free(w->best);
		free(w->word);
		w->best = xmalloc(w->lattice_alloc * sizeof(*w->best));
		w->word = xmalloc(w->lattice_alloc * sizeof(*w->word));
	}
	memset(w->best, 0, (n + 1) * sizeof(*w->best));
	memset(w->word, 0, (n + 1) * sizeof(*w->word));

	/*
	 * Forward: the candidates ending at a position arrive in the order of their
	 * start, as in the reference's loop over end positions, and best[i] is final
	 * when the pieces starting at i are tried.
	 */
	for (i = 0; i < n; i++) {
		double from = w->best[i];
		int32_t node = sym[i] < 128 ? sp->ascii[sym[i]] : trie_child(sp, 0, sym[i]);
		int matched = 0;

		for (j = i; node >= 0; ) {
			const struct spm_node *nd = &sp->node[node];
			if (nd->id >= 0) {
				relax(w, j + 1, from, nd->score, nd->id);
				matched = 1;
			}
			if (++j >= n || !nd->children)
				break;
			node = trie_child(sp, node, sym[j]);
		}
		if (!matched)
			relax(w, i + 1, from, 0, 0);
	}

	/* Backward, stepping by each piece's UTF-16 length as the reference does. */
	ALLOC_GROW(w->ids, n, w->ids_alloc);
	for (i = n; i > 0; ) {
		int32_t id = w->word[i];
		size_t step = sp->len16[id];
		w->ids[w->ids_nr++] = id;
		i = step > i ? 0 : i - step;
	}
	/* merge runs of unknowns, and put the ids in text order */
	for (i = 0, out = 0, prev_unk = 0; i < w->ids_nr; i++) {
		int32_t id = w->ids[i];
		if (!(prev_unk && id == 0))
			w->ids[out++] = id;
		prev_unk = id == 0;
	}
	w->ids_nr = out;
	for (i = 0; i < out / 2; i++) {
		int32_t t = w->ids[i];
		w->ids[i] = w->ids[out - 1 - i];
		w->ids[out - 1 - i] = t;
	}
}

size_t spm_encode(const struct spm *sp, struct spm_work *w, const char *text, size_t len,
		  size_t max)
{
	size_t guess = max * 8, cut;

	if (!max || len <= guess || sp->sep_inside) {
		encode_all(sp, w, text, len);
	} else {
		/*
		 * No piece has "▁" but at its start, so each "▁" starts a piece in every
		 * path: the ids of the text up to a space are those of the whole text up to
		 * there.  (NFKC neither composes across a space nor moves marks over it.)
		 */
		for (;;) {
			const char *sp_at;
			cut = guess < len ? guess : len;
			sp_at = memchr(text + cut, ' ', len - cut);
			cut = sp_at ? (size_t)(sp_at - text) : len;
			encode_all(sp, w, text, cut);
			if (w->ids_nr >= max || cut == len)
				break;
			guess *= 2;
		}
	}
	if (max && w->ids_nr > max)
		w->ids_nr = max;
	return w->ids_nr;
}

/* ---- a binary copy of a loaded vocabulary ------------------------------------- */

/*
 * Loading vocab.json is most of the cost of starting USE-lite (jansson parses
 * 218 KB in 4 ms, the trie takes 1.6): ci-embed --query spent 5.5 of its 20 ms
 * there.  The loaded tables are written once to a cache file and read back
 * whole (about 1.2 MB) by later runs.  The file is local to the machine (host
 * byte order, checked), names the vocabulary's size and mtime, and carries a
 * checksum; every index in it is checked before use, so a damaged or stale
 * copy is ignored (and written again), never trusted.
 */
#define SPM_CACHE_MAGIC "ci-spm\0\3"

struct spm_cache_head {
	char magic[8];
	uint32_t order;			/* 0x01020304 in the writer's byte order */
	int32_t sep_inside;
	uint64_t src_size;		/* the vocab.json it was made from */
	int64_t src_mtime_ns;
	uint64_t nr, node_nr, piece_bytes, edge_bits;
	uint64_t sum;			/* FNV-1a of everything after the header */
	int32_t ascii[128];
};

/* FNV-1a's steps over 8-byte words (then the tail's bytes): a checksum 8x
 * faster than fnv1a() over the bytes, for the copy's 1.2 MB */
static uint64_t checksum_words(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t w;

	for (; n >= 8; c += 8, n -= 8) {
		memcpy(&w, c, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/* What the source file is now: size and mtime, or -1. */
static int src_stamp(const char *path, uint64_t *size, int64_t *mtime_ns)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	*size = (uint64_t)st.st_size;
	*mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

static int write_whole(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static void spm_cache_write(const struct spm *sp, const char *cache, uint64_t size, int64_t mtime_ns)
{
	struct spm_cache_head h;
	struct buf b = BUF_INIT;
	size_t i, slots = (size_t)1 << sp->edge_bits;
	uint32_t off = 0;
	char *tmp;
	int fd;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SPM_CACHE_MAGIC, sizeof(h.magic));
	h.order = 0x01020304;
	h.sep_inside = sp->sep_inside;
	h.src_size = size;
	h.src_mtime_ns = mtime_ns;
	h.nr = sp->nr;
	h.node_nr = sp->node_nr;
	h.edge_bits = sp->edge_bits;
	memcpy(h.ascii, sp->ascii, sizeof(h.ascii));
	buf_add(&b, sp->score, sp->nr * sizeof(*sp->score));
	buf_add(&b, sp->len16, sp->nr);
	for (i = 0; i < sp->nr; i++) {
		buf_add(&b, &off, sizeof(off));
		off += (uint32_t)strlen(sp->piece[i]) + 1;
	}
	buf_add(&b, &off, sizeof(off));
	for (i = 0; i < sp->nr; i++)
		buf_add(&b, sp->piece[i], strlen(sp->piece[i]) + 1);
	h.piece_bytes = off;
	buf_add(&b, sp->node, sp->node_nr * sizeof(*sp->node));
	buf_add(&b, sp->edge_key, slots * sizeof(*sp->edge_key));
	buf_add(&b, sp->edge_child, slots * sizeof(*sp->edge_child));
	h.sum = checksum_words(FNV1A_BASIS, b.buf, b.len);

	tmp = xasprintf("%s.XXXXXX", cache);
	if ((fd = mkstemp(tmp)) >= 0) {
		int ok = write_whole(fd, &h, sizeof(h)) == 0 && write_whole(fd, b.buf, b.len) == 0;
		if (close(fd) < 0)
			ok = 0;
		if (!ok || rename(tmp, cache) < 0)
			unlink(tmp);
	}
	free(tmp);
	buf_release(&b);
}

/* The vocabulary in cache if it is a sound copy of the source as it is now, or NULL. */
static struct spm *spm_cache_read(const char *cache, uint64_t size, int64_t mtime_ns)
{
	struct spm_cache_head h;
	struct spm *sp = NULL;
	char *data = NULL;
	const char *p, *pieces, *off;
	size_t n = 0, need, slots, i;

	if (access(cache, R_OK) < 0 || read_file(cache, &data, &n) < 0 || n < sizeof(h))
		goto bad;	/* none yet: quietly */
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, SPM_CACHE_MAGIC, sizeof(h.magic)) || h.order != 0x01020304 ||
	    h.src_size != size || h.src_mtime_ns != mtime_ns || h.nr <= SPM_RESERVED || h.nr > (1u << 24) ||
	    h.node_nr < 1 || h.node_nr > (1u << 26) || h.edge_bits < 12 || h.edge_bits > 28 ||
	    h.piece_bytes > (1u << 30))
		goto bad;
	slots = (size_t)1 << h.edge_bits;
	need = sizeof(h) + h.nr * sizeof(double) + h.nr + (h.nr + 1) * sizeof(uint32_t) + h.piece_bytes +
	       h.node_nr * sizeof(struct spm_node) + slots * (sizeof(uint64_t) + sizeof(int32_t));
	if (n != need || checksum_words(FNV1A_BASIS, data + sizeof(h), n - sizeof(h)) != h.sum)
		goto bad;

	sp = xcalloc(1, sizeof(*sp));
	sp->nr = h.nr;
	sp->sep_inside = h.sep_inside != 0;
	p = data + sizeof(h);
	sp->score = xmalloc(h.nr * sizeof(*sp->score));
	memcpy(sp->score, p, h.nr * sizeof(*sp->score));
	p += h.nr * sizeof(*sp->score);
	sp->len16 = xmalloc(h.nr);
	memcpy(sp->len16, p, h.nr);
	p += h.nr;
	off = p;		/* nr + 1 offsets into pieces, read by memcpy (unaligned) */
	p += (h.nr + 1) * sizeof(uint32_t);
	pieces = p;
	p += h.piece_bytes;
	/* the pieces stay in one block, which sp owns */
	sp->piece = xcalloc(h.nr, sizeof(*sp->piece));
	sp->pieces = xmalloc(h.piece_bytes);
	memcpy(sp->pieces, pieces, h.piece_bytes);
	for (i = 0; i < h.nr; i++) {
		uint32_t a, z;
		memcpy(&a, off + 4 * i, sizeof(a));
		memcpy(&z, off + 4 * (i + 1), sizeof(z));
		if (a >= z || z > h.piece_bytes || pieces[z - 1] != '\0' || strlen(pieces + a) != z - a - 1)
			goto bad;
		sp->piece[i] = sp->pieces + a;
	}
	sp->node_nr = sp->node_alloc = h.node_nr;
	sp->node = xmalloc(h.node_nr * sizeof(*sp->node));
	memcpy(sp->node, p, h.node_nr * sizeof(*sp->node));
	p += h.node_nr * sizeof(*sp->node);
	for (i = 0; i < h.node_nr; i++)
		if (sp->node[i].id < -1 || sp->node[i].id >= (int32_t)h.nr)
			goto bad;
	sp->edge_bits = (unsigned)h.edge_bits;
	sp->edge_key = xmalloc(slots * sizeof(*sp->edge_key));
	memcpy(sp->edge_key, p, slots * sizeof(*sp->edge_key));
	p += slots * sizeof(*sp->edge_key);
	sp->edge_child = xmalloc(slots * sizeof(*sp->edge_child));
	memcpy(sp->edge_child, p, slots * sizeof(*sp->edge_child));
	for (i = 0; i < slots; i++) {
		if (sp->edge_key[i] == EDGE_EMPTY)
			continue;
		sp->edge_nr++;
		if (sp->edge_child[i] < 1 || (size_t)sp->edge_child[i] >= h.node_nr ||
		    (sp->edge_key[i] >> 21) >= h.node_nr)
			goto bad;
	}
	if (2 * sp->edge_nr > slots)
		goto bad;	/* the lookup needs free slots to stop at */
	for (i = 0; i < 128; i++) {
		if (h.ascii[i] < -1 || h.ascii[i] >= (int32_t)h.node_nr)
			goto bad;
		sp->ascii[i] = h.ascii[i];
	}
	free(data);
	return sp;
bad:
	spm_free(sp);
	free(data);
	return NULL;
}

int spm_load_cached(struct spm **out, const char *path, const char *cache)
{
	uint64_t size;
	int64_t mtime_ns;

	if (!cache || src_stamp(path, &size, &mtime_ns) < 0)
		return spm_load(out, path);
	if ((*out = spm_cache_read(cache, size, mtime_ns)))
		return 0;
	if (spm_load(out, path) < 0)
		return -1;
	spm_cache_write(*out, cache, size, mtime_ns);
	return 0;
}
