/*
 * wordpiece.c: BERT's WordPiece tokenizer (see wordpiece.h), with ICU for the
 * Unicode properties.
 *
 * Chunks are mostly ASCII code: the common path is a lookup in a hash table of
 * the vocabulary per candidate piece, longest first, in a word of a few
 * characters.
 */
#include "core/common.h"
#include "embed/wordpiece.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>
#include <unicode/uvernum.h>

/*
 * ICU is loaded when a vocabulary is, not linked: with it came libstdc++, and
 * the two cost every start of ci-rank and ci-index about 0.8 ms, most of which
 * use no WordPiece vocabulary (a query through ci-rank's server, an update
 * without --embed).  The functions by their versioned names, as the headers
 * rename them (u_charType is u_charType_72 for ICU 72).
 */
#define ICU_STR2(x) #x
#define ICU_STR(x) ICU_STR2(x)
static struct {
	__typeof__(&unorm2_getNFDInstance) getNFDInstance;
	__typeof__(&u_errorName) errorName;
	__typeof__(&u_charType) charType;
	__typeof__(&u_tolower) tolower;
	__typeof__(&unorm2_getDecomposition) getDecomposition;
	__typeof__(&u_isUWhiteSpace) isUWhiteSpace;
} icu;
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;
static char icu_error[256];

static void icu_load(void)
{
	const char *lib = "libicuuc.so." U_ICU_VERSION_SHORT;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(icu_error, sizeof(icu_error), "cannot load %s: %s", lib, dlerror());
		return;
	}
#define ICU_SYM(field, name) \
	if (!(*(void **)&icu.field = dlsym(h, ICU_STR(name)))) { \
		snprintf(icu_error, sizeof(icu_error), "%s has no %s", lib, ICU_STR(name)); \
		memset(&icu, 0, sizeof(icu)); \
		return; \
	}
	ICU_SYM(getNFDInstance, unorm2_getNFDInstance)
	ICU_SYM(errorName, u_errorName)
	ICU_SYM(charType, u_charType)
	ICU_SYM(tolower, u_tolower)
	ICU_SYM(getDecomposition, unorm2_getDecomposition)
	ICU_SYM(isUWhiteSpace, u_isUWhiteSpace)
#undef ICU_SYM
}

#define MAX_WORD_CHARS 100	/* longer words are [UNK] (max_input_chars_per_word) */

struct wordpiece {
	char *pool;			/* the pieces, NUL-terminated, one after another */
	size_t *off;			/* [size]: each id's piece in pool */
	size_t size;			/* pieces (ids) */
	int32_t *slot;			/* hash table of ids, -1: free */
	size_t mask;			/* slots - 1 */
	int32_t cls, sep, unk;		/* the special ids */
	struct wordpiece_opts opts;
	const UNormalizer2 *nfd;	/* ICU's NFD (strip_accents) */
};

int32_t wordpiece_id(const struct wordpiece *wp, const char *s, size_t n)
{
	size_t i;

	for (i = fnv1a(FNV1A_BASIS, s, n) & wp->mask; wp->slot[i] >= 0; i = (i + 1) & wp->mask) {
		const char *p = wp->pool + wp->off[wp->slot[i]];
		if (!strncmp(p, s, n) && p[n] == '\0')
			return wp->slot[i];
	}
	return -1;
}

/* Add id to the table; a piece listed twice keeps its last id (as HF's dict does). */
static void table_add(struct wordpiece *wp, int32_t id)
{
	const char *p = wp->pool + wp->off[id];
	size_t n = strlen(p), i;

	for (i = fnv1a(FNV1A_BASIS, p, n) & wp->mask; wp->slot[i] >= 0; i = (i + 1) & wp->mask)
		if (!strcmp(wp->pool + wp->off[wp->slot[i]], p)) {
			wp->slot[i] = id;
			return;
		}
	wp->slot[i] = id;
}

/* The hash table, the special pieces, ICU's NFD: 0, or -1 after a message. */
static int finish(struct wordpiece *wp, const char *path)
{
	UErrorCode uerr = U_ZERO_ERROR;
	size_t i, slots;

	if (wp->size > INT32_MAX / 4)
		return error("%s: too many pieces", path);
	for (slots = 64; slots < wp->size * 2; slots *= 2)
		;
	wp->mask = slots - 1;
	wp->slot = xmalloc(slots * sizeof(*wp->slot));
	for (i = 0; i < slots; i++)
		wp->slot[i] = -1;
	for (i = 0; i < wp->size; i++)
		table_add(wp, (int32_t)i);
	wp->cls = wordpiece_id(wp, "[CLS]", 5);
	wp->sep = wordpiece_id(wp, "[SEP]", 5);
	wp->unk = wordpiece_id(wp, "[UNK]", 5);
	if (wp->cls < 0 || wp->sep < 0 || wp->unk < 0)
		return error("%s: no %s piece (not a BERT vocabulary?)", path,
			     wp->cls < 0 ? "[CLS]" : wp->sep < 0 ? "[SEP]" : "[UNK]");
	pthread_once(&icu_once, icu_load);
	if (!icu.getNFDInstance)
		return error("ICU: %s", icu_error);
	wp->nfd = icu.getNFDInstance(&uerr);
	if (U_FAILURE(uerr))
		return error("ICU: cannot load NFD: %s", icu.errorName(uerr));
	return 0;
}

int wordpiece_load(struct wordpiece **out, const char *path, const struct wordpiece_opts *opts)
{
	struct wordpiece *wp = xcalloc(1, sizeof(*wp));
	size_t len, i, start, n;
	char *text = NULL;
	int ret = -1;

	*out = NULL;
	wp->opts = *opts;
	if (read_file(path, &text, &len) < 0)
		goto done;
	if (!len) {
		error("%s: an empty vocabulary", path);
		goto done;
	}
	if (memchr(text, '\0', len)) {
		error("%s: not a text file (a NUL byte)", path);
		goto done;
	}
	/* a piece a line: "\n" or "\r\n" ends it; the last one need not */
	for (i = n = 0; i < len; i++)
		if (text[i] == '\n')
			n++;
	if (text[len - 1] != '\n')
		n++;
	wp->off = xmalloc(n * sizeof(*wp->off));
	wp->pool = text;
	text = NULL;
	for (i = start = 0, wp->size = 0; i <= len && wp->size < n; i++) {
		if (i < len && wp->pool[i] != '\n')
			continue;
		if (i > start && wp->pool[i - 1] == '\r')
			wp->pool[i - 1] = '\0';
		if (i < len)
			wp->pool[i] = '\0';
		wp->off[wp->size++] = start;
		start = i + 1;
	}
	if (finish(wp, path) < 0)
		goto done;
	*out = wp;
	wp = NULL;
	ret = 0;
done:
	free(text);
	wordpiece_free(wp);
	return ret;
}

int wordpiece_load_json(struct wordpiece **out, const char *path, struct wordpiece_opts *opts)
{
	struct wordpiece *wp = xcalloc(1, sizeof(*wp));
	json_t *root, *model, *vocab, *norm, *v;
	json_error_t jerr;
	struct buf pool = BUF_INIT;
	const char *key, *s;
	size_t max = 0;
	int ret = -1;

	*out = NULL;
	if (!(root = json_load_file(path, 0, &jerr))) {
		error("%s:%d: %s", path, jerr.line, jerr.text);
		goto done;
	}
	model = json_object_get(root, "model");
	vocab = json_object_get(model, "vocab");
	if ((s = json_string_value(json_object_get(model, "type"))) && strcmp(s, "WordPiece")) {
		error("%s: a %s model: not supported (WordPiece is)", path, s);
		goto done;
	}
	if (!json_is_object(vocab) || !json_object_size(vocab)) {
		error("%s: no WordPiece vocabulary (model.vocab)", path);
		goto done;
	}
	if ((s = json_string_value(json_object_get(model, "continuing_subword_prefix"))) &&
	    strcmp(s, "##")) {
		error("%s: continuing_subword_prefix '%s': not supported (## is)", path, s);
		goto done;
	}
	json_object_foreach(vocab, key, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= (json_int_t)(INT32_MAX / 4)) {
			error("%s: piece '%s': a bad id", path, key);
			goto done;
		}
		if ((size_t)json_integer_value(v) + 1 > max)
			max = (size_t)json_integer_value(v) + 1;
	}
	/* ids are dense (0 to n-1, a few added tokens past them): a few pieces
	 * with huge ids would have the tables take gigabytes (make fuzz found a
	 * 70-byte tokenizer.json asking for 2 GiB) */
	if (max > json_object_size(vocab) * 2 + 1024) {
		error("%s: ids up to %zu for %zu pieces: not a WordPiece vocabulary", path, max - 1,
		      json_object_size(vocab));
		goto done;
	}
	/* by id; an id no piece has is an empty piece */
	wp->size = max;
	wp->off = xcalloc(max, sizeof(*wp->off));
	buf_addch(&pool, '\0');
	json_object_foreach(vocab, key, v) {
		wp->off[json_integer_value(v)] = pool.len;
		buf_add(&pool, key, strlen(key) + 1);
	}
	wp->pool = buf_detach(&pool, NULL);
	/* BertNormalizer's settings, when it is one */
	norm = json_object_get(root, "normalizer");
	if ((s = json_string_value(json_object_get(norm, "type"))) && !strcmp(s, "BertNormalizer")) {
		if (json_is_boolean(json_object_get(norm, "lowercase")))
			opts->lowercase = json_is_true(json_object_get(norm, "lowercase"));
		v = json_object_get(norm, "strip_accents");
		opts->strip_accents = json_is_boolean(v) ? json_is_true(v) : opts->lowercase;
		if (json_is_boolean(json_object_get(norm, "handle_chinese_chars")))
			opts->chinese_chars = json_is_true(json_object_get(norm, "handle_chinese_chars"));
	}
	wp->opts = *opts;
	if (finish(wp, path) < 0)
		goto done;
	*out = wp;
	wp = NULL;
	ret = 0;
done:
	buf_release(&pool);
	json_decref(root);
	wordpiece_free(wp);
	return ret;
}

void wordpiece_free(struct wordpiece *wp)
{
	if (!wp)
		return;
	free(wp->pool);
	free(wp->off);
	free(wp->slot);
	free(wp);
}

size_t wordpiece_size(const struct wordpiece *wp)
{
	return wp->size;
}

void wordpiece_work_release(struct wordpiece_work *w)
{
	ucs_release(&w->in);
	ucs_release(&w->norm);
	free(w->piece);
	free(w->ids);
	memset(w, 0, sizeof(*w));
}

/* BERT's _is_control: Cc and Cf, but not the white space among them. */
static int is_control(uint32_t c)
{
	int8_t t;

	if (c == '\t' || c == '\n' || c == '\r')
		return 0;
	if (c < 0x80)
		return c < 0x20 || c == 0x7f;	/* ASCII's Cc; it has no Cf */
	t = icu.charType((UChar32)c);
	return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR;
}

/* BERT's _is_whitespace */
static int is_space(uint32_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       (c > 0x7f && icu.charType((UChar32)c) == U_SPACE_SEPARATOR);
}

/* BERT's _is_punctuation: every ASCII symbol, and Unicode P* */
static int is_punct(uint32_t c)
{
	if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
	    (c >= 123 && c <= 126))
		return 1;
	return c > 0x7f && (U_MASK(icu.charType((UChar32)c)) & U_GC_P_MASK) != 0;
}

/* BERT's _is_chinese_char: the CJK Unified Ideographs blocks */
static int is_cjk(uint32_t c)
{
	return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
	       (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
	       (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
	       (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* Append c, lowercased and without accents as the options say. */
static void add_char(const struct wordpiece *wp, struct ucs *out, uint32_t c)
{
	UChar d[32];
	int32_t n, i;
	UErrorCode uerr = U_ZERO_ERROR;

	if (c < 0x80) {
		if (wp->opts.lowercase && c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		ucs_add(out, c);
		return;
	}
	if (wp->opts.lowercase)
		c = (uint32_t)icu.tolower((UChar32)c);
	if (!wp->opts.strip_accents ||
	    (n = icu.getDecomposition(wp->nfd, (UChar32)c, d, (int32_t)ARRAY_SIZE(d), &uerr)) < 0 ||
	    U_FAILURE(uerr)) {
		if (!wp->opts.strip_accents || icu.charType((UChar32)c) != U_NON_SPACING_MARK)
			ucs_add(out, c);
		return;
	}
	for (i = 0; i < n; ) {
		UChar32 k;
		U16_NEXT(d, i, n, k);
		if (icu.charType(k) != U_NON_SPACING_MARK)
			ucs_add(out, (uint32_t)k);
	}
}

static size_t utf8_put(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static void add_id(struct wordpiece_work *w, int32_t id)
{
	ALLOC_GROW(w->ids, w->ids_nr + 1, w->ids_alloc);
	w->ids[w->ids_nr++] = id;
}

/*
 * WordPiece of the word c[0..n), appended to w->ids, then cut to room ids: the
 * whole word is cut into pieces first, as a piece that does not fit near its end
 * makes all of it one [UNK].
 */
static void add_word(const struct wordpiece *wp, struct wordpiece_work *w, const uint32_t *c,
		     size_t n, size_t room)
{
	size_t boff[MAX_WORD_CHARS + 1], i, start, mark = w->ids_nr;
	char *u;

	if (n > MAX_WORD_CHARS) {
		add_id(w, wp->unk);
		return;
	}
	assert(w->ids_nr < room);
	/* "##" and the word in UTF-8; boff[i]: where character i starts after the "##" */
	ALLOC_GROW(w->piece, 2 + 4 * n + 1, w->piece_alloc);
	u = w->piece + 2;
	boff[0] = 0;
	for (i = 0; i < n; i++)
		boff[i + 1] = boff[i] + utf8_put(u + boff[i], c[i]);
	for (start = 0; start < n; ) {
		size_t end;
		int32_t id = -1;

		for (end = n; end > start; end--) {
			if (start) {
				/* the "##" goes just before the candidate */
				char *p = u + boff[start] - 2;
				char save0 = p[0], save1 = p[1];
				p[0] = '#';
				p[1] = '#';
				id = wordpiece_id(wp, p, boff[end] - boff[start] + 2);
				p[0] = save0;
				p[1] = save1;
			} else {
				id = wordpiece_id(wp, u, boff[end]);
			}
			if (id >= 0)
				break;
		}
		if (id < 0) {
			/* no piece fits: the whole word is one [UNK] */
			w->ids_nr = mark;
			add_id(w, wp->unk);
			return;
		}
		add_id(w, id);
		start = end;
	}
	if (w->ids_nr > room)
		w->ids_nr = room;
}

size_t wordpiece_encode(const struct wordpiece *wp, struct wordpiece_work *w,
			const char *text, size_t len, size_t max)
{
	size_t i, room, ws;
	const uint32_t *c;

	assert(max >= 2);
	w->ids_nr = 0;
	w->in.nr = 0;
	w->norm.nr = 0;
	utf8_decode(&w->in, text, len);
	for (i = 0; i < w->in.nr; i++) {
		uint32_t k = w->in.cp[i];
		if (k == 0 || k == 0xFFFD || is_control(k))
			continue;
		if (is_space(k)) {
			ucs_add(&w->norm, ' ');
		} else if (wp->opts.chinese_chars && is_cjk(k)) {
			ucs_add(&w->norm, ' ');
			ucs_add(&w->norm, k);
			ucs_add(&w->norm, ' ');
		} else {
			add_char(wp, &w->norm, k);
		}
	}

	add_id(w, wp->cls);
	room = max - 1;		/* [SEP] must fit */
	c = w->norm.cp;
	for (i = 0, ws = 0; i <= w->norm.nr && w->ids_nr < room; i++) {
		uint32_t k = i < w->norm.nr ? c[i] : ' ';
		int space = k == ' ' || (k > 0x7f && icu.isUWhiteSpace((UChar32)k));

		if (!space && !is_punct(k))
			continue;
		if (i > ws)
			add_word(wp, w, c + ws, i - ws, room);
		if (!space && w->ids_nr < room)
			add_word(wp, w, c + i, 1, room);
		ws = i + 1;
	}
	add_id(w, wp->sep);
	return w->ids_nr;
}
