/*
 * cgraph.c: the bound call graph of the whole index (cgraph.h).
 *
 * Shaped by dead and arch, which need every call of the index bound at once:
 * the definitions and resolved imports are read once into memory, then the
 * files one by one, each with its references (in line order, each call with
 * its receiver as the index stores it) and, for dead, the names it mentions
 * outside calls (stored too: index/mentions.h).  Only a Python file's text
 * is read back here (its classes' bases, resolve.h).  Binding is bind.h's, as
 * for callers/callees; in a TS/JS file callers' own (refs_jsbind_call():
 * other names, typed receivers, `new C()`), which reads the file's text and
 * its imports' through jstype.h.
 */
#include "core/common.h"
#include "graph/cgraph.h"
#include "index/trigram.h"
#include "parse/lang.h"

#include <ctype.h>
#include <limits.h>

/* One resolved import, path -> resolved, as file indexes. */
struct imp {
	int a, b;		/* importing file, imported file */
};

/* The per-file state of the load. */
struct file_pass {
	char **lines;		/* the file's lines (from its chunks), NULL where none */
	long lines_nr;		/* lines known */
	size_t lines_alloc;
	char **bufs;		/* the chunks' texts the lines point into, '\n' cut to '\0' */
	size_t bufs_nr, bufs_alloc;
	struct bind_def *bd;	/* candidates of one reference */
	size_t bd_alloc;
	const struct imp *imps;	/* the resolved imports, sorted */
	size_t imps_nr;
	struct resolver rs;	/* Python calls (resolve.h) */
	struct rs_def *rsd;	/* the definitions as resolve.h sees them, in by_name order */
	struct cgraph *g;
	struct refs *r;
	size_t lo, hi;		/* the file's definitions, g->defs[lo..hi) */
	int *inner;		/* per line, the innermost definition holding it, or -1 */
	size_t inner_alloc;
	int *parent;		/* per definition of the file (from lo), the one holding its
				   first line, or -1 */
	size_t parent_alloc;
	unsigned char *imp_of;	/* per file, 1 if the file being read imports it */
	size_t imp_lo, imp_hi;	/* its imports, imps[imp_lo..imp_hi) */
	int *lazy;		/* a file not read: the files imp_of[] has it import */
	size_t lazy_nr, lazy_alloc;
	struct refs_world jw;	/* TS/JS calls: the world of jsb, made at the first TS/JS file */
	struct refs_jsbind *jsb;	/* TS/JS calls bound as callers binds them (refs.h), or NULL */
	long *ecount;		/* CG_EDGES: per file, the calls the file being read makes to it */
	int *etouched;		/* the files of ecount[] not 0 */
	size_t etouched_nr, etouched_alloc;
};

/* cgraph_load_edges(): no calls kept, only the calls between files counted. */
enum { CG_EDGES = 0x100 };

/* The definition holding the first line of definition d of the file being read, or -1. */
#define parent_of(fp, d) ((fp)->parent[(size_t)(d) - (fp)->lo])

/* The names and scopes of the definitions, in blocks (millions of short
 * strings: a malloc() each cost about as much again): s copied, its address
 * (cgraph.h's cg_str(): the block above CG_STR_BITS, the offset below; byte
 * 0 of the first block unused, so 0 is no string). */
enum { CG_STRS_BLOCK = 1 << CG_STR_BITS };
_Static_assert(sizeof(struct cg_def) <= 32, "cg_def: 32 bytes (3.4 M of them on Linux)");

static unsigned strs_add(struct cgraph *g, const char *s)
{
	size_t n = strlen(s) + 1;

	if (g->strs_size - g->strs_used < n) {
		if (g->strs_nr >= (size_t)1 << (32 - CG_STR_BITS))
			die("index: more than 4 GiB of names and scopes for the call graph");
		g->strs_size = n > CG_STRS_BLOCK ? n : CG_STRS_BLOCK;
		ALLOC_GROW(g->strs, g->strs_nr + 1, g->strs_alloc);
		g->strs[g->strs_nr++] = xmalloc(g->strs_size);
		g->strs_used = g->strs_nr == 1;
	}
	memcpy(g->strs[g->strs_nr - 1] + g->strs_used, s, n);
	g->strs_used += n;
	return (unsigned)((g->strs_nr - 1) << CG_STR_BITS | (g->strs_used - n));
}

static unsigned name_hash(const char *s);

/*
 * An open-addressing table (linear probing; an entry whose first unsigned is 0
 * is empty) of entries of size bytes, t of *mask + 1 of them (t NULL: none),
 * made twice as large (first entries when t is NULL), each used entry placed
 * anew at hash(entry, g): the new table, *mask its size less one.
 */
static void *table_grow(void *t, size_t *mask, size_t size, size_t first,
			unsigned (*hash)(const void *entry, const struct cgraph *g), const struct cgraph *g)
{
	size_t n = t ? 2 * (*mask + 1) : first;
	char *nt = xcalloc(n, size), *old = t;

	for (size_t i = 0; t && i <= *mask; i++) {
		const char *e = old + i * size;
		size_t k;

		if (!*(const unsigned *)e)
			continue;
		for (k = hash(e, g) & (n - 1); *(const unsigned *)(nt + k * size); k = (k + 1) & (n - 1))
			;
		memcpy(nt + k * size, e, size);
	}
	free(t);
	*mask = n - 1;
	return nt;
}

/* The hash of a scope table entry (the scope's address), and of a counts table entry (def + 1). */
static unsigned scope_hash(const void *entry, const struct cgraph *g)
{
	return name_hash(cg_str(g, *(const unsigned *)entry));
}

static unsigned counts_hash(const void *entry, const struct cgraph *g)
{
	(void)g;
	return *(const unsigned *)entry * 2654435761u;
}

/* The scope s, each once in g->strs (311 k scopes of 35 k strings on Linux):
 * its address. */
static unsigned scope_add(struct cgraph *g, const char *s)
{
	unsigned h = name_hash(s), a;
	size_t k;

	if ((g->scopes_nr + 1) * 4 > (g->scopes_mask + 1) * 3 || !g->scopes)
		g->scopes = table_grow(g->scopes, &g->scopes_mask, sizeof(*g->scopes), 256, scope_hash, g);
	for (k = h & g->scopes_mask; g->scopes[k]; k = (k + 1) & g->scopes_mask)
		if (!strcmp(cg_str(g, g->scopes[k]), s))
			return g->scopes[k];
	a = strs_add(g, s);
	g->scopes[k] = a;
	g->scopes_nr++;
	return a;
}

/* The counts of definition d, added (0) if it has none. */
static struct cg_counts *def_counts(struct cgraph *g, int d)
{
	unsigned key = (unsigned)d + 1;
	size_t k;

	if ((g->counts_nr + 1) * 2 > g->counts_mask + 1 || !g->counts)
		g->counts = table_grow(g->counts, &g->counts_mask, sizeof(*g->counts), 1024, counts_hash, g);
	for (k = counts_hash(&key, g) & g->counts_mask; g->counts[k].def; k = (k + 1) & g->counts_mask)
		if (g->counts[k].def == key)
			return &g->counts[k].c;
	g->counts[k].def = key;
	g->counts_nr++;
	return &g->counts[k].c;
}

struct cg_counts cgraph_counts(const struct cgraph *g, size_t d)
{
	unsigned key = (unsigned)d + 1;

	if (g->counts)
		for (size_t k = counts_hash(&key, g) & g->counts_mask; g->counts[k].def;
		     k = (k + 1) & g->counts_mask)
			if (g->counts[k].def == key)
				return g->counts[k].c;
	return (struct cg_counts){ 0, 0 };
}

#define self_call(g, d) (def_counts((g), (d))->self_calls++)
#define namesake_call(g, d) (def_counts((g), (d))->namesake_calls++)

static int cmp_imp(const void *x, const void *y)
{
	const struct imp *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int cmp_call(const void *x, const void *y)
{
	const struct cg_call *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->col > b->col) - (a->col < b->col);
}

/* The number of definitions of slot s. */
#define slot_count(g, s) ((size_t)((s)[1].first - (s)[0].first))

/* The table of names twice as large, its entries placed anew. */
static void grow_names(struct cgraph *g)
{
	size_t n = g->names ? 2 * (g->slots_mask + 1) : 1024;
	unsigned *t = xcalloc(n, sizeof(*t)), hi = ~(unsigned)(n - 1);

	if (n > 1u << 30)
		die("index: too many names for the call graph");
	for (size_t s = 0; s < g->slots_nr; s++) {
		unsigned h = name_hash(cg_str(g, g->slots[s].name_at));
		size_t k = h & (n - 1);
		while (t[k])
			k = (k + 1) & (n - 1);
		t[k] = (h & hi) | (unsigned)(s + 1);
	}
	free(g->names);
	g->names = t;
	g->slots_mask = n - 1;
}

/* The slot of name (its hash h), added (the name copied into g->strs) if it
 * has none. */
static unsigned name_slot(struct cgraph *g, const char *name, unsigned h)
{
	size_t k;
	unsigned hi;

	if (!g->names || (g->slots_nr + 2) * 4 > (g->slots_mask + 1) * 3)
		grow_names(g);	/* at most three quarters full (and slot + 1 fits below the mask) */
	hi = ~(unsigned)g->slots_mask;
	for (k = h & g->slots_mask; g->names[k]; k = (k + 1) & g->slots_mask) {
		const struct cg_slot *s = &g->slots[(g->names[k] & g->slots_mask) - 1];
		const char *sn = cg_str(g, s->name_at);
		if ((g->names[k] & hi) == (h & hi) && (sn == name || !strcmp(sn, name)))
			return (unsigned)(s - g->slots);
	}
	ALLOC_GROW(g->slots, g->slots_nr + 2, g->slots_alloc);	/* (and one past the last) */
	g->slots[g->slots_nr] = (struct cg_slot){ 0, 0, strs_add(g, name) };
	g->names[k] = (h & hi) | (unsigned)(g->slots_nr + 1);
	return (unsigned)g->slots_nr++;
}

static struct cg_slot *find_slot(const struct cgraph *g, const char *name)
{
	unsigned h = name_hash(name), hi = ~(unsigned)g->slots_mask;

	if (!g->names)
		return NULL;
	for (size_t k = h & g->slots_mask; g->names[k]; k = (k + 1) & g->slots_mask) {
		struct cg_slot *s = &g->slots[(g->names[k] & g->slots_mask) - 1];
		if ((g->names[k] & hi) == (h & hi) && !strcmp(cg_str(g, s->name_at), name))
			return s;
	}
	return NULL;
}

size_t cgraph_named(const struct cgraph *g, const char *name, size_t *first)
{
	const struct cg_slot *s = find_slot(g, name);

	*first = s ? s->first : 0;
	return s ? slot_count(g, s) : 0;
}

int cgraph_file(const struct cgraph *g, const char *path)
{
	size_t lo = 0, hi = g->files_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(g->files[mid].path, path);
		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int is_python(const char *lang)
{
	return lang && !strcmp(lang, "python");
}

/* Does the file being read import file b?  (imp_of[] holds its imports.) */
#define imported(fp, b) ((fp)->imp_of[(b)])

/* The kind k, one copy of each (a few kinds, millions of definitions). */
unsigned cgraph_kind(struct cgraph *g, const char *k)
{
	k = k ? k : "";
	for (size_t i = 0; i < g->kinds_nr; i++)
		if (!strcmp(g->kinds[i], k))
			return (unsigned)i;
	if (g->kinds_nr >= 0xffff)
		die("index: more than 65535 kinds of definitions");
	ALLOC_GROW(g->kinds, g->kinds_nr + 1, g->kinds_alloc);
	g->kinds[g->kinds_nr] = xstrdup(k);
	return (unsigned)g->kinds_nr++;
}

void cgraph_load_files(struct cgraph *g, struct refs *r)
{
	sqlite3_stmt *st;

	st = refs_prep(r, "SELECT f.path, b.lang, b.id, b.main_guard FROM files f JOIN blobs b ON b.id = f.blob_id "
		       "ORDER BY f.path");
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(g->files, g->files_nr + 1, g->files_alloc);
		memset(&g->files[g->files_nr], 0, sizeof(*g->files));
		g->files[g->files_nr].path = xstrdup(refs_col(st, 0));
		g->files[g->files_nr].lang = refs_col(st, 1) ? xstrdup(refs_col(st, 1)) : NULL;
		g->files[g->files_nr].blob = sqlite3_column_int64(st, 2);
		g->files[g->files_nr].main_guard = sqlite3_column_int64(st, 3);
		g->files_nr++;
	}
	sqlite3_finalize(st);
}

/* A definition of file f from st's row (name, kind, line, end_line, scope,
 * flags, rowid, col); its column (not kept: only load_named_defs() sorts by
 * it). */
static int add_def(struct cgraph *g, sqlite3_stmt *st, int f)
{
	struct cg_def *d;
	unsigned slot;
	sqlite3_int64 rowid = sqlite3_column_int64(st, 6);

	if (rowid < 0 || rowid > UINT_MAX)
		die("index: a definition's rowid (%lld) over 32 bits for the call graph", (long long)rowid);

	ALLOC_GROW(g->defs, g->defs_nr + 1, g->defs_alloc);
	d = &g->defs[g->defs_nr++];
	memset(d, 0, sizeof(*d));
	d->file = f;
	slot = name_slot(g, refs_col(st, 0), name_hash(refs_col(st, 0)));	/* (slots may move) */
	d->name_at = g->slots[slot].name_at;
	d->uses = (int)slot;	/* (until index_names()) */
	d->kind = cgraph_kind(g, refs_col(st, 1));
	d->line = sqlite3_column_int64(st, 2);
	d->end_line = sqlite3_column_int64(st, 3);
	d->scope_at = refs_col(st, 4) ? scope_add(g, refs_col(st, 4)) : 0;
	d->decorated = (sqlite3_column_int(st, 5) & TAGTEXT_DECORATED) != 0;
	d->rowid = (unsigned)rowid;
	return (int)sqlite3_column_int64(st, 7);
}

/* The names hashed, and by_name: the definitions grouped by name, each
 * name's in definition order (a counting sort by slot: no sort of 3.4 M
 * names, no copy of them, no lookup: add_def() left each definition's
 * slot in its uses, 0 again once it is placed). */
static void index_names(struct cgraph *g)
{
	size_t at = 0;

	for (size_t i = 0; i < g->defs_nr; i++)
		g->slots[g->defs[i].uses].first++;	/* (counted, then made the first) */
	for (size_t k = 0; k < g->slots_nr; k++) {
		size_t n = g->slots[k].first;
		g->slots[k].first = (unsigned)at;
		at += n;
	}
	if (g->slots)
		g->slots[g->slots_nr].first = (unsigned)at;	/* one past the last */
	g->by_name = xmalloc((g->defs_nr + 1) * sizeof(int));
	for (size_t i = 0; i < g->defs_nr; i++) {
		struct cg_slot *s = &g->slots[g->defs[i].uses];
		g->by_name[s->first + s->uses++] = (int)i;	/* (uses: those placed, meanwhile) */
		g->defs[i].uses = 0;
	}
	for (size_t k = 0; k < g->slots_nr; k++)
		g->slots[k].uses = 0;
}

/* Files, definitions, imports. */
static void load_tables(struct cgraph *g, struct refs *r, struct imp **imps, size_t *imps_nr,
			sqlite3_int64 **blobs)
{
	sqlite3_stmt *st;
	size_t alloc = 0;

	cgraph_load_files(g, r);
	*blobs = xmalloc((g->files_nr + 1) * sizeof(**blobs));
	for (size_t f = 0; f < g->files_nr; f++)
		(*blobs)[f] = g->files[f].blob;
	/* file by file (files are in path order): one sort of every definition
	 * of Linux spilled to disk */
	st = refs_prep(r, "SELECT name, kind, line, end_line, scope, flags, rowid, col FROM defs WHERE blob_id = ?1 "
		       "ORDER BY line, col, name, rowid");
	for (size_t f = 0; f < g->files_nr; f++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (*blobs)[f]);
		while (sqlite3_step(st) == SQLITE_ROW)
			add_def(g, st, (int)f);
	}
	sqlite3_finalize(st);
	index_names(g);
	st = refs_prep(r, "SELECT DISTINCT path, resolved FROM imports WHERE resolved IS NOT NULL");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int a = cgraph_file(g, refs_col(st, 0)), b = cgraph_file(g, refs_col(st, 1));
		if (a < 0 || b < 0)
			continue;	/* a file outside the index imports nothing here */
		ALLOC_GROW(*imps, *imps_nr + 1, alloc);
		(*imps)[*imps_nr].a = a;
		(*imps)[*imps_nr].b = b;
		(*imps_nr)++;
	}
	sqlite3_finalize(st);
	if (*imps_nr)
		qsort(*imps, *imps_nr, sizeof(**imps), cmp_imp);
}

/* The file's lines, from its chunks (the first chunk that holds a line wins):
 * pointers into copies of the chunks' texts, no allocation per line. */
static void load_lines(struct refs *r, sqlite3_stmt *st, sqlite3_int64 blob, struct file_pass *fp)
{
	fp->lines_nr = 0;
	fp->bufs_nr = 0;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, blob);
	while (sqlite3_step(st) == SQLITE_ROW) {
		long l = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		const char *t = refs_col(st, 2);
		char *p;
		int fresh = 0;

		if (!t || l < 1)
			continue;
		if (end > fp->lines_nr) {
			ALLOC_GROW(fp->lines, (size_t)end, fp->lines_alloc);
			memset(fp->lines + fp->lines_nr, 0, (size_t)(end - fp->lines_nr) * sizeof(char *));
			fp->lines_nr = end;
		}
		for (long k = l; k <= end && !fresh; k++)
			fresh = !fp->lines[k - 1];
		if (!fresh)
			continue;	/* inside a chunk read already */
		ALLOC_GROW(fp->bufs, fp->bufs_nr + 1, fp->bufs_alloc);
		p = fp->bufs[fp->bufs_nr++] = xstrdup(t);
		for (; l <= end && p; l++) {
			char *e = strchrnul(p, '\n');
			char *next = *e ? e + 1 : NULL;
			*e = '\0';
			if (!fp->lines[l - 1])
				fp->lines[l - 1] = p;
			p = next;
		}
	}
	(void)r;
}

static void free_lines(struct file_pass *fp)
{
	for (size_t i = 0; i < fp->bufs_nr; i++)
		free(fp->bufs[i]);
	fp->bufs_nr = 0;
	fp->lines_nr = 0;
}

/* The innermost definition of [lo, hi) (one file's, in line order) that holds line, or -1. */
static int enclosing(const struct cgraph *g, size_t lo, size_t hi, long line)
{
	size_t i = hi;

	while (i > lo && g->defs[i - 1].line > line)
		i--;
	while (i > lo) {
		const struct cg_def *d = &g->defs[--i];
		if (d->line <= line && d->end_line >= line)
			return (int)i;
	}
	return -1;
}

/* 1 if definition d holds line of file (its own body). */
static int inside(const struct cg_def *d, int file, long line)
{
	return d->file == file && d->line <= line && d->end_line >= line;
}

/* A C or C++ header: its functions may be prototypes of those of a source file. */
static int is_header(const char *path)
{
	const char *e = strrchr(path, '.');

	return e && (!strcmp(e, ".h") || !strcmp(e, ".hh") || !strcmp(e, ".hpp") || !strcmp(e, ".hxx"));
}

static int c_family(const struct cgraph *g, const struct cg_def *d)
{
	const char *lang = cg_lang(g, d);

	return lang && (!strcmp(lang, "c") || !strcmp(lang, "cpp"));
}

/* Are p and d a C prototype in a header and the function it declares (either
 * way round), of the same scope? */
static int same_symbol(const struct cgraph *g, const struct cg_def *p, const struct cg_def *d)
{
	return c_family(g, p) && c_family(g, d) && is_header(cg_path(g, p)) != is_header(cg_path(g, d)) &&
	       ((!p->scope_at && !d->scope_at) || (p->scope_at && d->scope_at && !strcmp(cg_scope(g, p), cg_scope(g, d))));
}

/* Does the scope cls enclose s ("A.f" encloses "A.f" and "A.f.g", not "A.fg")? */
static int scope_encloses(const char *cls, const char *s)
{
	size_t n = strlen(cls);

	return s && !strncmp(cls, s, n) && (s[n] == '\0' || s[n] == '.');
}

static void add_call(struct cgraph *g, struct file_pass *fp, int from, int to, int file, long line, long col_,
		     enum bind_how how)
{
	g->defs[to].uses++;
	if (fp->ecount) {	/* CG_EDGES: the call counted between files, not kept */
		int b = g->defs[to].file;
		if (b != file && !fp->ecount[b]++) {
			ALLOC_GROW(fp->etouched, fp->etouched_nr + 1, fp->etouched_alloc);
			fp->etouched[fp->etouched_nr++] = b;
		}
		return;
	}
	ALLOC_GROW(g->calls, g->calls_nr + 1, g->calls_alloc);
	g->calls[g->calls_nr++] = (struct cg_call){ from, to, file, (int)line, (int)col_, how };
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return (a > b) - (a < b);
}

/* CG_EDGES: the calls of file a (read last) to other files, to g->edge(),
 * in the order of cgraph_file_edges() (a file after the files before it). */
static void flush_edges(struct cgraph *g, struct file_pass *fp, int a)
{
	if (fp->etouched_nr > 1)
		qsort(fp->etouched, fp->etouched_nr, sizeof(*fp->etouched), cmp_int);
	for (size_t i = 0; i < fp->etouched_nr; i++) {
		int b = fp->etouched[i];
		g->edge(g->edge_arg, a, b, fp->ecount[b]);
		fp->ecount[b] = 0;
	}
	fp->etouched_nr = 0;
}

/*
 * A Python call resolved by resolve.h (def: its index among the n named
 * definitions from first, or -1): the edge, and the others counted as
 * namesakes, or as possible uses when the call binds to nothing (dead must
 * not report what it may reach) or reaches a method an override may replace.
 */
static void bind_resolved(struct cgraph *g, struct file_pass *fp, int file, int from, size_t first, size_t n,
			  int to, enum bind_how how, enum bind_recv recv, long line, long col_)
{
	int method_call = recv == RECV_SELF || recv == RECV_OTHER || recv == RECV_SUPER;

	if (to >= 0) {
		if (to == from || inside(&g->defs[to], file, line))
			self_call(g, to);
		else
			add_call(g, fp, from, to, file, line, col_, how);
	}
	for (size_t i = 0; i < n; i++) {
		int di = g->by_name[first + i];
		struct cg_def *d = &g->defs[di];
		int own = di == from || inside(d, file, line);

		if (di == to) {
			continue;
		} else if (!own && (to < 0 || (d->scope_at && method_call && strcmp(cg_kind(g, d), "function")))) {
			d->uses++;
		} else if (!own) {
			namesake_call(g, di);
		}
	}
}

/* fp->bd[0..n): the n definitions of a name from first, as candidates of a
 * call in file (imported: the file imports theirs). */
static void fill_cands(struct cgraph *g, struct file_pass *fp, int file, size_t first, size_t n)
{
	ALLOC_GROW(fp->bd, n, fp->bd_alloc);
	for (size_t i = 0; i < n; i++) {
		const struct cg_def *d = &g->defs[g->by_name[first + i]];
		fp->bd[i].path = cg_path(g, d);
		fp->bd[i].scope = cg_scope(g, d);
		fp->bd[i].imported = d->file != file && imported(fp, d->file);
	}
}

/* The definition of g named name at (path, line), or -1. */
static int def_at(const struct cgraph *g, const char *name, const char *path, long line)
{
	size_t first, n = cgraph_named(g, name, &first);

	for (size_t i = 0; i < n; i++) {
		int di = g->by_name[first + i];
		if (g->defs[di].line == line && !strcmp(cg_path(g, &g->defs[di]), path))
			return di;
	}
	return -1;
}

/*
 * A call (kind "call", or "class": new C()) in a TS/JS file, bound as
 * callers/callees bind it (refs_jsbind_call(): other names, typed receivers,
 * `new C()`), so that the graph's edges are depth 1's; counted on the
 * TS/JS definitions of its name as bind_call() counts them (a definition
 * of another language is not one it may reach).  0 for a `new C()`
 * bound to nothing (the caller counts it as a reference, as before), else 1.
 */
static int bind_js_site(struct cgraph *g, struct file_pass *fp, int file, int from, const char *name,
			const char *kind, const char *scope, long line, long col_, enum bind_recv recv)
{
	const char *path = g->files[file].path, *dname, *dpath;
	enum bind_how how;
	size_t first, n = cgraph_named(g, name, &first);
	long dline;
	int to = -1, method_call = recv == RECV_SELF || recv == RECV_OTHER || recv == RECV_SUPER;

	if (!fp->jsb) {
		refs_world_init(&fp->jw, fp->r);
		fp->jsb = refs_jsbind_new(fp->r, &fp->jw);
	}
	/* a name nothing defines binds only as another name of a definition
	 * (REFS_JS_BOTH's second step): its receiver's class is not looked up */
	if (refs_jsbind_call(fp->jsb, name, kind, path, scope, line, col_, recv, n ? REFS_JS_BOTH : REFS_JS_ORIGIN,
			     &how, &dname, &dpath, &dline))
		to = def_at(g, dname, dpath, dline);	/* -1: a definition g does not hold (a part of it) */
	if (to < 0 && !strcmp(kind, "class"))
		return 0;
	if (to >= 0 && (to == from || inside(&g->defs[to], file, line)))
		self_call(g, to);
	else if (to >= 0)
		add_call(g, fp, from, to, file, line, col_, how);
	fill_cands(g, fp, file, first, n);
	for (size_t i = 0; i < n; i++) {
		int di = g->by_name[first + i];
		struct cg_def *d = &g->defs[di];
		int own = di == from || inside(d, file, line);

		if (di == to || !bind_is_js(cg_path(g, d)))
			continue;	/* (a call of a TS/JS file never reaches another language's) */
		else if (!own && d->scope_at && method_call && strcmp(cg_kind(g, d), "function"))
			d->uses++;	/* an override, or inherited: which one runs is not known */
		else if (to >= 0)
			namesake_call(g, di);
		else if (!own && bind_fits(path, scope, recv, &fp->bd[i]))
			d->uses++;
	}
	return 1;
}

/*
 * Bind one call reference and count it on the definitions it may reach:
 * bind_ref()'s choice, and the ties of as good a binding; a function nested
 * in the one that calls it; for a method call, the other methods of that
 * name (overrides reached by dispatch, or an inherited method self.f()
 * reaches when the class has none) as possible uses.
 */
static void bind_call(struct cgraph *g, struct file_pass *fp, int file, int from, const char *name,
		      const char *scope, long line, long col_, enum bind_recv recv)
{
	const char *path = g->files[file].path;
	enum bind_how how;
	size_t first, n = cgraph_named(g, name, &first);
	long def;
	int method_call, hdr = -1, body = 0;

	if (!n && !is_python(g->files[file].lang))
		return;
	if (is_python(g->files[file].lang) && resolver_applies(&fp->rs, path)) {
		/* (a name nothing defines may be another name of a definition: ib = attrib) */
		const struct rs_def *rd = resolve_call(&fp->rs, path, scope, line, col_, name, &how);
		if (rd || !fp->r->o.by_name || !n) {
			bind_resolved(g, fp, file, from, first, n, rd ? g->by_name[rd - fp->rsd] : -1, how, recv, line, col_);
			return;
		}
	}
	if (!n)
		return;
	fill_cands(g, fp, file, first, n);
	def = bind_ref(&how, path, scope, recv, fp->bd, n);
	for (size_t i = 0; (recv == RECV_BARE || recv == RECV_UNKNOWN) && i < n; i++) {
		const struct cg_def *d = &g->defs[g->by_name[first + i]];
		if (d->scope_at && !strcmp(cg_kind(g, d), "function") && !strcmp(cg_path(g, d), path) &&
		    scope_encloses(cg_scope(g, d), scope)) {
			def = (long)i;	/* a nested function, in the function that defines it */
			how = BIND_LOCAL;
			break;
		}
	}
	method_call = recv == RECV_SELF || recv == RECV_OTHER || recv == RECV_SUPER;
	for (size_t i = 0; i < n; i++) {
		int di = g->by_name[first + i];
		struct cg_def *d = &g->defs[di];
		int own = di == from || inside(d, file, line);

		if (def >= 0 && (size_t)def == i) {
			if (own)
				self_call(g, di);
			else if (is_header(cg_path(g, d)) && c_family(g, d))
				hdr = di;	/* a prototype: the edge goes to the function, if any */
			else
				add_call(g, fp, from, di, file, line, col_, how);
		} else if (def >= 0 && !own &&
			   ((how != BIND_NAME && bind_level(path, scope, recv, &fp->bd[i]) == how) ||
			    same_symbol(g, &g->defs[g->by_name[first + def]], d))) {
			add_call(g, fp, from, di, file, line, col_, how);	/* a tie, or a C prototype and its function */
			body |= !is_header(cg_path(g, d)) && same_symbol(g, &g->defs[g->by_name[first + def]], d);
		} else if (!own && d->scope_at && method_call && strcmp(cg_kind(g, d), "function")) {
			d->uses++;	/* an override, or inherited: which one runs is not known */
		} else if (def >= 0) {
			namesake_call(g, di);
		} else if (!own && bind_fits(path, scope, recv, &fp->bd[i])) {
			d->uses++;
		}
	}
	if (hdr >= 0 && body)
		g->defs[hdr].uses++;
	else if (hdr >= 0)
		add_call(g, fp, from, hdr, file, line, col_, how);
}

/* A mention of tok on line of the file (import: on an import line) outside
 * references and definitions of that name (index/mentions.h): a mention of
 * every definition of that name. */
static void mention(struct cgraph *g, const struct file_pass *fp, int file, const char *tok, long line, int import)
{
	struct cg_slot *s = find_slot(g, tok);
	size_t first, n;
	int narrow = 0;

	if (!s)
		return;
	first = s->first;
	n = slot_count(g, s);
	/* an import statement names the module: the definitions of the files it
	 * imports, when there are some, else (a module outside) every one */
	if (import)
		for (size_t i = 0; i < n; i++)
			if (imported(fp, g->defs[g->by_name[first + i]].file))
				narrow = 1;
	if (narrow) {
		for (size_t i = 0; i < n; i++) {
			struct cg_def *d = &g->defs[g->by_name[first + i]];
			if (!inside(d, file, line) && imported(fp, d->file))
				d->uses++;
		}
		return;
	}
	/* a mention of every definition of the name but those whose body holds
	 * it: counted once for the name, and once for each of those */
	s->uses++;
	for (int d = line >= 1 && line <= fp->lines_nr ? fp->inner[line - 1] : -1; d >= 0; d = parent_of(fp, d))
		if (!strcmp(cg_name(g, &g->defs[d]), tok) && inside(&g->defs[d], file, line))
			g->defs[d].uses--;	/* the name's count added at the end */
}

/* inner[] and parent[] of the file's definitions (nested ones inside their
 * holders, as the parser gives them). */
static void nest_defs(const struct cgraph *g, struct file_pass *fp)
{
	ALLOC_GROW(fp->inner, (size_t)fp->lines_nr + 1, fp->inner_alloc);
	for (long l = 0; l < fp->lines_nr; l++)
		fp->inner[l] = -1;
	ALLOC_GROW(fp->parent, fp->hi - fp->lo + 1, fp->parent_alloc);
	for (size_t i = fp->lo; i < fp->hi; i++) {
		const struct cg_def *d = &g->defs[i];
		parent_of(fp, i) = d->line >= 1 && d->line <= fp->lines_nr ? fp->inner[d->line - 1] : -1;
		for (long l = d->line; l >= 1 && l <= d->end_line && l <= fp->lines_nr; l++)
			fp->inner[l - 1] = (int)i;
	}
}

/* A string "cmd_", "tmpl_" (or f"on_{x}"): the prefix of names looked up at
 * run time (getattr(self, "cmd_" + name)).  At most 1000 are kept. */
static void add_prefix(struct cgraph *g, const char *tok)
{
	for (size_t i = 0; i < g->prefixes_nr; i++)
		if (!strcmp(g->prefixes[i], tok))
			return;
	if (g->prefixes_nr >= 1000)
		return;
	ALLOC_GROW(g->prefixes, g->prefixes_nr + 1, g->prefixes_alloc);
	g->prefixes[g->prefixes_nr++] = xstrdup(tok);
}

/*
 * Python: does the class defined on line text ("class A(b.Base, Mixin):")
 * have a base the index defines no class of?  Its methods may then override
 * a library's, called by the library.
 */
static int external_base(const struct cgraph *g, const char *text)
{
	const char *p = text ? strchr(text, '(') : NULL;

	while (p && *p && *p != ')') {
		const char *b = ++p, *e;
		char name[256];
		size_t first, n;
		int known = 0;

		while (*p && *p != ',' && *p != ')')
			p++;
		for (e = p; e > b && !(isalnum((unsigned char)e[-1]) || e[-1] == '_'); e--)
			;
		for (b = e; b > text && (isalnum((unsigned char)b[-1]) || b[-1] == '_'); b--)
			;
		if (e == b || (size_t)(e - b) >= sizeof(name) || memchr(b, '=', (size_t)(p - b)))
			continue;	/* metaclass=..., or nothing */
		memcpy(name, b, (size_t)(e - b));
		name[e - b] = '\0';
		n = cgraph_named(g, name, &first);
		for (size_t i = 0; i < n; i++)
			known |= !strcmp(cg_kind(g, &g->defs[g->by_name[first + i]]), "class");
		if (!known && strcmp(name, "object"))
			return 1;
	}
	return 0;
}

/* The methods of classes with a base outside the index (Python). */
static void mark_overrides(struct cgraph *g, const struct file_pass *fp, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++) {
		const struct cg_def *c = &g->defs[i];
		size_t nl = strlen(cg_name(g, c));

		if (strcmp(cg_kind(g, c), "class") || !cg_lang(g, c) || strcmp(cg_lang(g, c), "python") ||
		    c->line > fp->lines_nr ||
		    !external_base(g, fp->lines[c->line - 1]))
			continue;
		for (size_t k = i + 1; k < hi && g->defs[k].line <= c->end_line; k++) {
			const char *sc = cg_scope(g, &g->defs[k]);
			size_t ls = sc ? strlen(sc) : 0;
			if (ls >= nl && !strcmp(sc + ls - nl, cg_name(g, c)) && (ls == nl || sc[ls - nl - 1] == '.'))
				g->defs[k].override = 1;
		}
	}
}

/* Is name one of scan[0..scan_nr) (sorted)? */
static int scanned(const char *const *scan, size_t scan_nr, const char *name)
{
	size_t lo = 0, hi = scan_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(scan[mid], name);
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* imp_of[] of file (not read: its imports looked up here), for its import
 * mentions; undone by unload_imports(). */
static void load_imports_of(struct cgraph *g, struct file_pass *fp, sqlite3_stmt *ist, int file)
{
	sqlite3_reset(ist);
	sqlite3_bind_text(ist, 1, g->files[file].path, -1, SQLITE_STATIC);
	while (sqlite3_step(ist) == SQLITE_ROW) {
		int b = cgraph_file(g, refs_col(ist, 0));
		if (b < 0 || fp->imp_of[b])
			continue;
		fp->imp_of[b] = 1;
		ALLOC_GROW(fp->lazy, fp->lazy_nr + 1, fp->lazy_alloc);
		fp->lazy[fp->lazy_nr++] = b;
	}
}

static void unload_imports(struct file_pass *fp)
{
	for (size_t i = 0; i < fp->lazy_nr; i++)
		fp->imp_of[fp->lazy[i]] = 0;
	fp->lazy_nr = 0;
}

/* The stored mentions of one file (index/mentions.h's text), from mst; with
 * scan (a file not read: its mentions of those names only), its imports
 * looked up from ist when an import line mentions one. */
static void load_mentions(struct cgraph *g, struct file_pass *fp, sqlite3_stmt *mst, int file,
			  sqlite3_int64 blob, const char *const *scan, size_t scan_nr, sqlite3_stmt *ist)
{
	char *text, *p, *next;
	int imports = 0;

	sqlite3_reset(mst);
	sqlite3_bind_int64(mst, 1, blob);
	if (sqlite3_step(mst) != SQLITE_ROW || !refs_col(mst, 0))
		return;
	text = xstrdup(refs_col(mst, 0));
	for (p = text; *p; p = next) {
		char *sp, *e = strchrnul(p, '\n'), kind = *p;
		struct cg_slot *s;

		next = *e ? e + 1 : e;
		*e = '\0';
		if (kind == '$') {
			if (!scan)
				add_prefix(g, p + 1);
			continue;
		}
		if (!(sp = strchr(p, ' ')))
			continue;
		*sp = '\0';
		if (scan && !scanned(scan, scan_nr, kind == '=' || kind == '>' ? p + 1 : p))
			continue;
		if (scan && kind == '>' && !imports) {
			load_imports_of(g, fp, ist, file);
			imports = 1;
		}
		if (kind == '=' || kind == '>')
			mention(g, fp, file, p + 1, atol(sp + 1), kind == '>');
		else if ((s = find_slot(g, p)))
			s->uses += atol(sp + 1);
	}
	if (imports)
		unload_imports(fp);
	free(text);
}

/* The references of one file: calls bound, other kinds counted by name. */
static void load_file(struct cgraph *g, struct refs *r, struct file_pass *fp, sqlite3_stmt *rst, sqlite3_stmt *mst,
		      int file, sqlite3_int64 blob,
		      size_t lo, size_t hi, unsigned flags)
{
	/* TS/JS calls bound by the text's rules, as callers binds them: a
	 * call in a file bind_is_js() names, a new C() (a class reference) in
	 * one of those languages (callgraph.c's CALL_KINDS) */
	const char *lang = g->files[file].lang;
	int js = bind_is_js(g->files[file].path);
	int js_new = js && lang && (!strcmp(lang, "javascript") || !strcmp(lang, "typescript") || !strcmp(lang, "tsx"));

	(void)r;
	fp->lo = lo;
	fp->hi = hi;
	nest_defs(g, fp);
	sqlite3_reset(rst);
	sqlite3_bind_int64(rst, 1, blob);
	while (sqlite3_step(rst) == SQLITE_ROW) {
		const char *name = refs_col(rst, 0), *kind = refs_col(rst, 1);
		const char *scope = sqlite3_column_type(rst, 4) == SQLITE_NULL ? NULL : refs_col(rst, 4);
		struct cg_slot *s;
		long line = sqlite3_column_int64(rst, 2), col_ = sqlite3_column_int64(rst, 3);

		if (((js && !strcmp(kind, "call")) || (js_new && !strcmp(kind, "class"))) &&
		    bind_js_site(g, fp, file, enclosing(g, lo, hi, line), name, kind, scope, line, col_,
				 (enum bind_recv)sqlite3_column_int(rst, 5))) {
			;	/* a TS/JS call, or a new C() that binds */
		} else if (!js && !strcmp(kind, "call")) {
			bind_call(g, fp, file, enclosing(g, lo, hi, line), name, scope, line, col_,
				  (enum bind_recv)sqlite3_column_int(rst, 5));
		} else if ((s = find_slot(g, name))) {
			/* a use of every definition of the name but those whose
			 * body holds it: once for the name, once for each of those */
			s->uses++;
			for (int d = line >= 1 && line <= fp->lines_nr ? fp->inner[line - 1] : -1; d >= 0;
			     d = parent_of(fp, d))
				if (!strcmp(cg_name(g, &g->defs[d]), name) && inside(&g->defs[d], file, line))
					g->defs[d].uses--;	/* the name's count added at the end */
		}
	}
	if (flags & CG_MENTIONS)
		load_mentions(g, fp, mst, file, blob, NULL, 0, NULL);
	mark_overrides(g, fp, lo, hi);
}

static size_t cg_named(void *ctx, const char *name, const struct rs_def **out)
{
	struct file_pass *fp = ctx;
	size_t first, n = cgraph_named(fp->g, name, &first);

	/* rsd is filled a name at a time, as the resolver asks: in a tree of
	 * few Python files (Linux) most of its pages are never touched */
	for (size_t i = first; n && !fp->rsd[first + n - 1].name && i < first + n; i++) {
		const struct cg_def *x = &fp->g->defs[fp->g->by_name[i]];
		fp->rsd[i] = (struct rs_def){ cg_name(fp->g, x), cg_kind(fp->g, x), cg_path(fp->g, x), cg_scope(fp->g, x), x->line,
					      x->end_line };
	}
	*out = fp->rsd + first;
	return n;
}

static int cg_file(void *ctx, const char *path, struct rs_text *t)
{
	struct file_pass *fp = ctx;

	return refs_file_text(fp->r, path, t);
}

static const struct rs_ops cg_ops = { cg_named, cg_file, NULL };	/* every call bound: no alias names asked */

/* The definitions whose names start with a prefix (and go on): the prefixes
 * hashed, each distinct name's own prefixes looked up as its hash grows, one
 * byte at a time (a name is not compared with every prefix). */
static void mark_dynamic(struct cgraph *g)
{
	unsigned char has_len[256] = { 0 };	/* a prefix is shorter than 256 (tagtext_idents()) */
	size_t n = 16, mask;
	const char **set;

	if (!g->prefixes_nr)
		return;
	while (n < 4 * g->prefixes_nr)
		n *= 2;
	mask = n - 1;
	set = xcalloc(n, sizeof(*set));
	for (size_t k = 0; k < g->prefixes_nr; k++) {
		size_t j = name_hash(g->prefixes[k]) & mask, pl = strlen(g->prefixes[k]);
		while (set[j])
			j = (j + 1) & mask;
		set[j] = g->prefixes[k];
		if (pl < sizeof(has_len))
			has_len[pl] = 1;
	}
	for (size_t k = 0; k < g->slots_nr; k++) {
		const char *name = cg_str(g, g->slots[k].name_at);
		unsigned h = 2166136261u;	/* name_hash() of its first l bytes */
		int dyn = 0;

		for (size_t l = 0; name[l] && !dyn; h = (h ^ (unsigned char)name[l]) * 16777619u, l++) {
			if (l >= sizeof(has_len) || !has_len[l])
				continue;
			for (size_t j = h & mask; set[j] && !dyn; j = (j + 1) & mask)
				dyn = strlen(set[j]) == l && !strncmp(set[j], name, l);
		}
		for (size_t i = g->slots[k].first; dyn && i < g->slots[k + 1].first; i++)
			g->defs[g->by_name[i]].dynamic = 1;
	}
	free(set);
}

/* calls[] by cmp_call(): counted into runs by caller (the calls come nearly
 * in that order already), each run sorted (on Linux, 4.8 M calls). */
static void sort_calls(struct cgraph *g)
{
	size_t *at = xcalloc(g->defs_nr + 2, sizeof(*at));
	struct cg_call *c = xmalloc((g->calls_nr + 1) * sizeof(*c));

	for (size_t i = 0; i < g->calls_nr; i++)
		at[g->calls[i].from + 2]++;	/* from -1 first */
	for (size_t i = 1; i < g->defs_nr + 2; i++)
		at[i] += at[i - 1];
	for (size_t i = 0; i < g->calls_nr; i++)
		c[at[g->calls[i].from + 1]++] = g->calls[i];
	for (size_t i = 0, lo = 0; i < g->defs_nr + 1; lo = at[i++])
		if (at[i] - lo > 1)
			qsort(c + lo, at[i] - lo, sizeof(*c), cmp_call);
	free(g->calls);
	free(at);
	g->calls = c;
	g->calls_alloc = g->calls_nr + 1;
}

static int cmp_i64(const void *x, const void *y)
{
	sqlite3_int64 a = *(const sqlite3_int64 *)x, b = *(const sqlite3_int64 *)y;

	return (a > b) - (a < b);
}

/*
 * The blobs whose text may hold one of names[0..nr) (the trigram index,
 * chunks_tri, as ci-grep reads it: its rows are a blob's id << 8 | a
 * segment; a blob whose trigrams are not exact is a candidate whole), sorted,
 * into *out; NULL (every blob) for a name shorter than a trigram, or an
 * index without one.
 */
static size_t scan_candidates(struct refs *r, const char *const *names, size_t nr, sqlite3_int64 **out)
{
	sqlite3_stmt *st;
	size_t n = 0, alloc = 0, m = 0;
	int rc;

	*out = NULL;
	for (size_t i = 0; i < nr; i++)
		if (strlen(names[i]) < 3)
			return 0;
	if (sqlite3_prepare_v2(r->db, "SELECT rowid >> 8 FROM chunks_tri WHERE chunks_tri MATCH ?1 "
			       "UNION SELECT id FROM blobs WHERE exact = 0", -1, &st, NULL) != SQLITE_OK)
		return 0;
	*out = xmalloc(sizeof(**out));
	for (size_t i = 0; i < nr; i++) {
		struct trigram_info ti;
		trigram_analyze(&ti, names[i], TRIGRAM_FIXED);	/* "abc" AND "bcd" ... */
		if (!ti.query) {
			trigram_info_release(&ti);
			sqlite3_finalize(st);
			free(*out);
			*out = NULL;
			return 0;
		}
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, ti.query, -1, SQLITE_TRANSIENT);
		trigram_info_release(&ti);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			ALLOC_GROW(*out, n + 1, alloc);
			(*out)[n++] = sqlite3_column_int64(st, 0);
		}
		if (rc != SQLITE_DONE) {
			free(*out);	/* a query the table refuses: every blob */
			*out = NULL;
			sqlite3_finalize(st);
			return 0;
		}
	}
	sqlite3_finalize(st);
	if (n)
		qsort(*out, n, sizeof(**out), cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (!m || (*out)[m - 1] != (*out)[i])
			(*out)[m++] = (*out)[i];
	return m;
}

/*
 * Read the files files[0..nr) of g (indexes, ascending; NULL: every file),
 * whose definitions and imports (imps, sorted) g holds: their calls bound,
 * their references and (CG_MENTIONS) mentions counted; with scan, the
 * mentions of those names (sorted) in every other file too.
 */
static void read_files(struct cgraph *g, struct refs *r, const struct imp *imps, size_t imps_nr, const int *files,
		       size_t nr, const char *const *scan, size_t scan_nr, unsigned flags)
{
	struct file_pass fp = { 0 };
	sqlite3_stmt *lst, *rst, *mst, *ist;
	size_t d = 0, cand_nr = 0;
	sqlite3_int64 *cand = NULL;	/* the blobs whose text may mention a name scanned, or NULL: all */

	fp.imps = imps;
	fp.imps_nr = imps_nr;
	fp.g = g;
	fp.r = r;
	/* zeroed, filled as cg_named() asks (a large calloc() is fresh pages) */
	fp.rsd = xcalloc(g->defs_nr + 1, sizeof(*fp.rsd));
	resolver_init(&fp.rs, &cg_ops, &fp);
	fp.imp_of = xcalloc(g->files_nr + 1, 1);
	if (flags & CG_EDGES)
		fp.ecount = xcalloc(g->files_nr + 1, sizeof(*fp.ecount));
	lst = refs_prep(r, "SELECT start_line, end_line, ci_inflate(text) FROM chunks WHERE blob_id = ?1 "
			"ORDER BY start_line, end_line DESC");
	rst = refs_prep(r, "SELECT name, kind, line, col, scope, recv FROM refs WHERE blob_id = ?1 ORDER BY line, col");
	mst = refs_prep(r, "SELECT ci_inflate(names) FROM mentions WHERE blob_id = ?1");
	ist = refs_prep(r, "SELECT DISTINCT resolved FROM imports WHERE path = ?1 AND resolved IS NOT NULL");
	for (size_t k = 0; k < nr; k++) {
		size_t f = files ? (size_t)files[k] : k, lo;
		while (d < g->defs_nr && g->defs[d].file < (int)f)
			d++;
		lo = d;
		while (d < g->defs_nr && g->defs[d].file == (int)f)
			d++;
		while (fp.imp_lo < imps_nr && imps[fp.imp_lo].a < (int)f)
			fp.imp_lo++;
		for (fp.imp_hi = fp.imp_lo; fp.imp_hi < imps_nr && imps[fp.imp_hi].a == (int)f; fp.imp_hi++)
			fp.imp_of[imps[fp.imp_hi].b] = 1;
		/* the text: for Python's classes (mark_overrides()); receivers,
		 * decorators, main guards and mentions are stored in the index */
		if (is_python(g->files[f].lang)) {
			load_lines(r, lst, g->files[f].blob, &fp);
		} else {
			fp.lines_nr = 0;
			for (size_t k2 = lo; k2 < d; k2++)
				if (g->defs[k2].end_line > fp.lines_nr)
					fp.lines_nr = g->defs[k2].end_line;
			ALLOC_GROW(fp.lines, (size_t)fp.lines_nr + 1, fp.lines_alloc);
			memset(fp.lines, 0, ((size_t)fp.lines_nr + 1) * sizeof(*fp.lines));
		}
		load_file(g, r, &fp, rst, mst, (int)f, g->files[f].blob, lo, d, flags);
		if (fp.ecount)
			flush_edges(g, &fp, (int)f);
		free_lines(&fp);
		for (size_t k2 = fp.imp_lo; k2 < fp.imp_hi; k2++)
			fp.imp_of[imps[k2].b] = 0;
	}
	/* the files not read: their mentions of the names scanned, in the
	 * files whose text may hold one (the trigram index says which) */
	cand_nr = scan_nr ? scan_candidates(r, scan, scan_nr, &cand) : 0;
	for (size_t f = 0, k = 0; scan_nr && f < g->files_nr; f++) {
		while (k < nr && (size_t)files[k] < f)
			k++;
		if (k < nr && (size_t)files[k] == f)
			continue;
		if (cand && !(cand_nr && bsearch(&g->files[f].blob, cand, cand_nr, sizeof(*cand), cmp_i64)))
			continue;
		fp.lines_nr = 0;	/* none of its definitions holds a mention */
		load_mentions(g, &fp, mst, (int)f, g->files[f].blob, scan, scan_nr, ist);
	}
	free(cand);
	sqlite3_finalize(lst);
	sqlite3_finalize(rst);
	sqlite3_finalize(mst);
	sqlite3_finalize(ist);
	free(fp.lines);
	free(fp.bufs);
	free(fp.inner);
	free(fp.parent);
	free(fp.imp_of);
	free(fp.lazy);
	free(fp.ecount);
	free(fp.etouched);
	for (size_t k = 0; k < g->slots_nr; k++) {
		const struct cg_slot *s = &g->slots[k];
		for (size_t i = s->first; i < s[1].first; i++) {
			struct cg_def *x = &g->defs[g->by_name[i]];
			x->uses += s->uses;	/* less its own, counted while reading */
		}
	}
	free(fp.bd);
	resolver_release(&fp.rs);
	free(fp.rsd);
	if (fp.jsb) {
		refs_jsbind_free(fp.jsb);
		refs_world_release(&fp.jw);
	}
}

/* The calls sorted, out[] (calls from definition i; top-level calls, from -1, come first). */
static void finish_calls(struct cgraph *g, unsigned flags)
{
	size_t c = 0;

	mark_dynamic(g);
	if (flags & CG_EDGES)
		return;	/* no calls kept */
	if (g->calls_nr)
		sort_calls(g);
	g->out = xcalloc(g->defs_nr + 2, sizeof(*g->out));
	while (c < g->calls_nr && g->calls[c].from < 0)
		c++;
	for (size_t i = 0; i <= g->defs_nr; i++) {
		g->out[i] = c;
		while (c < g->calls_nr && g->calls[c].from == (int)i)
			c++;
	}
}

void cgraph_load(struct cgraph *g, struct refs *r, unsigned flags)
{
	cgraph_load_edges(g, r, flags & ~CG_EDGES, NULL, NULL);
}

void cgraph_load_edges(struct cgraph *g, struct refs *r, unsigned flags, cg_edge_fn *edge, void *arg)
{
	struct imp *imps = NULL;
	size_t imps_nr = 0;
	sqlite3_int64 *blobs = NULL;
	/* one read transaction: not a lock taken and dropped per statement */
	int txn = refs_read_begin(r);

	memset(g, 0, sizeof(*g));
	g->edge = edge;
	g->edge_arg = arg;
	if (edge)
		flags |= CG_EDGES;
	load_tables(g, r, &imps, &imps_nr, &blobs);
	read_files(g, r, imps, imps_nr, NULL, g->files_nr, NULL, 0, flags);
	refs_read_end(r, txn);
	free(imps);
	free(blobs);
	finish_calls(g, flags);
	g->edge = NULL;
}

/* A list of names, sorted and made unique by names_uniq(). */
struct names {
	char **v;
	size_t nr, alloc;
};

static void names_add(struct names *n, const char *x)
{
	ALLOC_GROW(n->v, n->nr + 1, n->alloc);
	n->v[n->nr++] = xstrdup(x);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void names_uniq(struct names *n)
{
	size_t m = 0;

	if (n->nr)
		qsort(n->v, n->nr, sizeof(*n->v), cmp_str);
	for (size_t i = 0; i < n->nr; i++) {
		if (m && !strcmp(n->v[m - 1], n->v[i]))
			free(n->v[i]);
		else
			n->v[m++] = n->v[i];
	}
	n->nr = m;
}

/* The names file f's stored mentions hold (index/mentions.h), into n. */
static void mention_names(const struct cgraph *g, sqlite3_stmt *mst, int f, struct names *n)
{
	char *text, *p, *next;

	sqlite3_reset(mst);
	sqlite3_bind_int64(mst, 1, g->files[f].blob);
	if (sqlite3_step(mst) != SQLITE_ROW || !refs_col(mst, 0))
		return;
	text = xstrdup(refs_col(mst, 0));
	for (p = text; *p; p = next) {
		char *e = strchrnul(p, '\n'), *sp;

		next = *e ? e + 1 : e;
		*e = '\0';
		if (*p == '$' || !(sp = strchr(p, ' ')))
			continue;
		*sp = '\0';
		names_add(n, *p == '=' || *p == '>' ? p + 1 : p);
	}
	free(text);
}

/* load_named_defs()'s order: definitions (indexes into g->defs, with their
 * columns col) by file, line, col, name, rowid. */
struct def_order {
	const struct cgraph *g;
	const int *col;
};

static int cmp_def_order(const void *x, const void *y, void *arg)
{
	const struct def_order *o = arg;
	int i = *(const int *)x, j = *(const int *)y, c;
	const struct cg_def *a = &o->g->defs[i], *b = &o->g->defs[j];

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (o->col[i] != o->col[j])
		return o->col[i] < o->col[j] ? -1 : 1;
	c = strcmp(cg_name(o->g, a), cg_name(o->g, b));
	return c ? c : (a->rowid > b->rowid) - (a->rowid < b->rowid);
}

struct blob_file {
	sqlite3_int64 blob;
	int file;
};

static int cmp_blob_file(const void *x, const void *y)
{
	const struct blob_file *a = x, *b = y;

	if (a->blob != b->blob)
		return a->blob < b->blob ? -1 : 1;
	return (a->file > b->file) - (a->file < b->file);
}

/* Every definition of the names n (sorted), of whichever files hold their blobs. */
static void load_named_defs(struct cgraph *g, struct refs *r, const struct names *n)
{
	struct blob_file *bf = xmalloc((g->files_nr + 1) * sizeof(*bf));
	int *col = NULL, *order;
	size_t col_alloc = 0;
	struct cg_def *sorted;
	sqlite3_stmt *st = refs_prep(r, "SELECT name, kind, line, end_line, scope, flags, rowid, col, blob_id "
				     "FROM defs WHERE name = ?1");

	for (size_t f = 0; f < g->files_nr; f++)
		bf[f] = (struct blob_file){ g->files[f].blob, (int)f };
	qsort(bf, g->files_nr, sizeof(*bf), cmp_blob_file);
	for (size_t i = 0; i < n->nr; i++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, n->v[i], -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			sqlite3_int64 blob = sqlite3_column_int64(st, 8);
			size_t lo = 0, hi = g->files_nr;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (bf[mid].blob < blob)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < g->files_nr && bf[lo].blob == blob; lo++) {
				ALLOC_GROW(col, g->defs_nr + 1, col_alloc);
				col[g->defs_nr] = add_def(g, st, bf[lo].file);
			}
		}
	}
	sqlite3_finalize(st);
	free(bf);
	order = xmalloc((g->defs_nr + 1) * sizeof(*order));
	for (size_t i = 0; i < g->defs_nr; i++)
		order[i] = (int)i;
	if (g->defs_nr)
		qsort_r(order, g->defs_nr, sizeof(*order), cmp_def_order, &(struct def_order){ g, col });
	sorted = xmalloc((g->defs_nr + 1) * sizeof(*sorted));
	for (size_t i = 0; i < g->defs_nr; i++)
		sorted[i] = g->defs[order[i]];
	free(g->defs);
	g->defs = sorted;
	g->defs_alloc = g->defs_nr + 1;
	free(order);
	free(col);
}

void cgraph_load_part(struct cgraph *g, struct refs *r, const char *const *paths, size_t nr,
		      const char *const *names, size_t names_nr, int scan, const char *const *prefixes,
		      size_t prefixes_nr)
{
	struct names n = { 0 };
	int *files = xmalloc((nr + 1) * sizeof(*files));
	size_t files_nr = 0, imps_nr = 0, alloc = 0;
	struct imp *imps = NULL;
	sqlite3_stmt *st, *mst;
	int txn = refs_read_begin(r);

	memset(g, 0, sizeof(*g));
	cgraph_load_files(g, r);
	for (size_t i = 0; i < nr; i++) {
		int f = cgraph_file(g, paths[i]);
		if (f >= 0 && (!files_nr || files[files_nr - 1] < f))
			files[files_nr++] = f;	/* paths in strcmp order: files ascending */
	}
	for (size_t i = 0; i < names_nr; i++)
		names_add(&n, names[i]);
	st = refs_prep(r, "SELECT name FROM refs WHERE blob_id = ?1 UNION SELECT name FROM defs WHERE blob_id = ?1");
	mst = refs_prep(r, "SELECT ci_inflate(names) FROM mentions WHERE blob_id = ?1");
	for (size_t k = 0; k < files_nr; k++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, g->files[files[k]].blob);
		while (sqlite3_step(st) == SQLITE_ROW)
			names_add(&n, refs_col(st, 0));
		mention_names(g, mst, files[k], &n);
	}
	sqlite3_finalize(st);
	sqlite3_finalize(mst);
	names_uniq(&n);
	load_named_defs(g, r, &n);
	index_names(g);
	st = refs_prep(r, "SELECT DISTINCT resolved FROM imports WHERE path = ?1 AND resolved IS NOT NULL");
	for (size_t k = 0; k < files_nr; k++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, g->files[files[k]].path, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int b = cgraph_file(g, refs_col(st, 0));
			if (b < 0)
				continue;
			ALLOC_GROW(imps, imps_nr + 1, alloc);
			imps[imps_nr++] = (struct imp){ files[k], b };
		}
	}
	sqlite3_finalize(st);
	if (imps_nr)
		qsort(imps, imps_nr, sizeof(*imps), cmp_imp);
	read_files(g, r, imps, imps_nr, files, files_nr, scan ? names : NULL, scan ? names_nr : 0, CG_MENTIONS);
	refs_read_end(r, txn);
	if (prefixes) {
		for (size_t i = 0; i < g->prefixes_nr; i++)
			free(g->prefixes[i]);
		g->prefixes_nr = 0;
		for (size_t i = 0; i < prefixes_nr; i++)
			add_prefix(g, prefixes[i]);
	}
	finish_calls(g, CG_MENTIONS);
	for (size_t i = 0; i < n.nr; i++)
		free(n.v[i]);
	free(n.v);
	free(imps);
	free(files);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

size_t cgraph_file_edges(const struct cgraph *g, struct cg_fedge **out)
{
	uint64_t *k;
	size_t n = 0, m = 0;

	k = xmalloc((g->calls_nr + 1) * sizeof(*k));
	for (size_t c = 0; c < g->calls_nr; c++) {
		int a = g->calls[c].file, b = g->defs[g->calls[c].to].file;
		if (a != b)
			k[n++] = (uint64_t)(unsigned)a << 32 | (unsigned)b;
	}
	if (n)
		qsort(k, n, sizeof(*k), cmp_u64);
	*out = xmalloc((n + 1) * sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		if (m && (*out)[m - 1].a == (int)(k[i] >> 32) && (*out)[m - 1].b == (int)(k[i] & 0xffffffffu))
			(*out)[m - 1].calls++;
		else
			(*out)[m++] = (struct cg_fedge){ (int)(k[i] >> 32), (int)(k[i] & 0xffffffffu), 1 };
	}
	free(k);
	return m;
}

void cgraph_release(struct cgraph *g)
{
	for (size_t i = 0; i < g->strs_nr; i++)
		free(g->strs[i]);
	free(g->strs);
	for (size_t i = 0; i < g->kinds_nr; i++)
		free(g->kinds[i]);
	free(g->kinds);
	for (size_t i = 0; i < g->files_nr; i++) {
		free(g->files[i].path);
		free(g->files[i].lang);
	}
	free(g->defs);
	free(g->by_name);
	free(g->slots);
	free(g->names);
	free(g->scopes);
	free(g->counts);
	free(g->calls);
	free(g->out);
	free(g->files);
	for (size_t i = 0; i < g->prefixes_nr; i++)
		free(g->prefixes[i]);
	free(g->prefixes);
	memset(g, 0, sizeof(*g));
}
