/*
 * index.h: the SQLite index of a repository (see share/schema.sql).
 *
 * One database per repository, by default <root>/.ci-index/index.db (CI_INDEX or
 * --index overrides), in WAL mode.  Content is keyed by git blob id: files map
 * paths to blobs; chunks, definitions and references belong to blobs, so an
 * unchanged file is never parsed twice, across branches and worktrees.  Two FTS5
 * tables index the chunks' text, which tiles each file: chunks_fts with ci's
 * code-aware tokenizer (BM25 ranking) and chunks_tri with the trigram tokenizer
 * (candidate files for substring and regex search).
 *
 * Readers open the database read-only and see a consistent snapshot; a build
 * writes a new file and renames it into place; an update is one transaction.
 */
#ifndef CI_INDEX_H
#define CI_INDEX_H

#include <stdint.h>
#include <sqlite3.h>

#define CI_SCHEMA_VERSION 9

/*
 * The trigram table (chunks_tri) holds a blob's text in segments of whole lines,
 * so that a candidate is a part of a file, not the whole file: segment i of blob
 * id is row (id << INDEX_SEG_BITS) | i.  A segment ends at the end of the first
 * line that reaches INDEX_SEG_MIN bytes past its start (or a larger size for
 * files that would have more than INDEX_SEG_MAX segments); a line is never cut,
 * so a match confined to one line lies in one segment, with all its trigrams.
 */
#define INDEX_SEG_BITS 8
#define INDEX_SEG_MAX (1u << INDEX_SEG_BITS)
#define INDEX_SEG_MIN 4096u

/*
 * Cut text[0..len), a blob's chunk texts joined by newlines, into segments:
 * ends[i] is the offset just past segment i (its last line's '\n', or len).
 * The text is the file's bytes when its length is the blob's size (or one less:
 * the file's last newline is no chunk's); otherwise it is one segment, which a
 * search reads whole.  ends must hold INDEX_SEG_MAX entries.  Returns the
 * number of segments, at least 1 (an empty text is one empty segment).
 */
unsigned index_segments(const char *text, size_t len, int64_t size, uint32_t *ends);

struct buf;

/*
 * The blobs.segs column of text cut at ends[0..n) (index_segments) into out:
 * where each segment after the first starts, a little-endian uint32 byte offset
 * and uint32 line each; empty for one segment.
 */
void index_segs_encode(struct buf *out, const char *text, const uint32_t *ends, unsigned n);

/* A segment's place in its file: where it starts, in bytes, and its first line. */
struct index_seg {
	uint64_t off;		/* byte offset */
	uint64_t end;		/* offset just past it; UINT64_MAX: the end of the file */
	long line;		/* 1-based line number of its first line */
};

/*
 * Segment i of a blob whose blobs.segs column is segs[0..segs_len) (NULL for a
 * blob of one segment) into *out.  Returns 0, or -1 if i is not a segment of it.
 */
int index_seg_at(const void *segs, size_t segs_len, unsigned i, struct index_seg *out);

/*
 * The segments set in hits (a bitmap of INDEX_SEG_MAX bits) of a blob whose
 * blobs.segs is segs[0..segs_len), neighbours merged, in order, into runs (room
 * for INDEX_SEG_MAX): each with its first segment's start and line and its last
 * one's end.  Returns their number, 0 when they are the whole file (or hits is
 * empty), or -1 if hits names a segment the blob does not have (a damaged index).
 */
int index_seg_runs(const void *segs, size_t segs_len, const unsigned char *hits, struct index_seg *runs);

struct ci_index;

/* A file as the index knows it (strings owned by the index, valid during a callback). */
struct index_file {
	const char *path;	/* root-relative */
	const char *blob;	/* git blob id of the content indexed */
	const char *lang;	/* language, or NULL */
	int64_t size;		/* bytes when indexed */
	int64_t mtime;		/* seconds, when indexed */
	int exact;		/* 1 if its text is indexed byte for byte (valid UTF-8, no NUL):
				   0 means the trigram table cannot be trusted for it */
	const void *segs;	/* index_trigram_candidates: its blobs.segs, or NULL */
	size_t segs_len;	/* its bytes */
	const unsigned char *hits; /* index_trigram_candidates: a bitmap of INDEX_SEG_MAX
				   bits, the segments that may hold a match; NULL: any
				   part of the file may (exact == 0) */
};

typedef int (*index_file_fn)(const struct index_file *f, void *data);

/*
 * The index for a command run in start, without libgit2 (whose shared libraries
 * cost a one-query process 12 ms to load): $CI_INDEX, else the nearest
 * .ci-index/index.db in start or a directory above it up to the git work tree's
 * top (a directory holding .git), else the path it would have there (or in
 * start outside a repository).  Malloc'd; NULL if start cannot be resolved.
 */
char *index_find(const char *start);

/* The tree at root's own index, <root>/.ci-index/index.db, whatever CI_INDEX says (malloc'd). */
char *index_own_path(const char *root);
/*
 * The index path for a repository root: $CI_INDEX if set, else
 * <root>/.ci-index/index.db.  Returns a malloc'd string.  Cannot fail.
 */
char *index_default_path(const char *root);

/*
 * How index_open opens an index (flags, or'ed).
 *
 * What SQLite's report of a damaged database (SQLITE_CORRUPT, SQLITE_NOTADB,
 * from any statement of any connection of the process) does while the index
 * is open is the handle's: by default the command dies with "index '<path>'
 * is damaged (...): run 'ci-index build'" and exit 3, before the statement
 * returns: a reader never answers from a damaged index, whichever of its
 * statements met the damage, nor goes on with what it read until then.
 * INDEX_NOTE_DAMAGE: only note it (index_damage_seen), for a command that
 * repairs an index (ci-index build, update, serve) and checks its errors
 * itself.  Damage index_open itself meets makes it fail with its own message.
 * (SQLite's error log, where damage is reported, is one for the process: it
 * is given to the index that index_open opened last, while it is open.)
 */
enum {
	INDEX_READONLY = 1,	/* open read-only (else read-write) */
	INDEX_NOTE_DAMAGE = 2,	/* note damage, go on (else report it and exit 3) */
	/*
	 * read-only, and the file taken not to change while open (SQLite's
	 * immutable=1: no lock, no check of the file or its log per
	 * statement, pages cached between transactions).  For a published
	 * shard (libcommon/fleet): whoever opens it so checks the file itself
	 * and opens it again when it changed.
	 */
	INDEX_IMMUTABLE = 4,
};

/*
 * Open an existing index (flags: INDEX_READONLY, INDEX_NOTE_DAMAGE, INDEX_IMMUTABLE).  Returns
 * 0; 1 when there is no index at path (nothing reported); -1 after reporting
 * an error: not a database, corrupt, or built with another schema version (the
 * message says to run `ci-index build`).
 */
int index_open(struct ci_index **out, const char *path, int flags);
void index_close(struct ci_index *ix);

/*
 * Whether SQLite reported damage while ix was the open index (any connection):
 * 0, or the SQLite code of the report (SQLITE_CORRUPT, SQLITE_NOTADB).
 */
int index_damage_seen(struct ci_index *ix);
/*
 * on: SQLite's reports of damage on the calling thread go to ix (NULL: to no
 * index; index_open's own checks still fail an index it finds damaged), not
 * to the index opened last; off: back to that.  For a thread that answers a
 * query over an index of its own among others (libcommon/fleet's shards).
 */
void index_damage_thread(int on, struct ci_index *ix);

sqlite3 *index_db(struct ci_index *ix);
/* Run the statements of sql on db: 0, or -1 after reporting SQLite's message. */
int index_exec(sqlite3 *db, const char *sql);

/*
 * For one pass over much of the index (a writer's vector snapshot, the call
 * graph's store): reads go through the page cache, not the map index_open()
 * sets up for queries, so that the pages read do not stay resident in the
 * process.  index_unmap() returns the map's size, to give index_remap().
 */
sqlite3_int64 index_unmap(sqlite3 *db);
void index_remap(sqlite3 *db, sqlite3_int64 map);
/* The repository root recorded at build time (absolute). */
const char *index_root(struct ci_index *ix);
/* A meta value ("schema_version", "root", "commit", "updated", ...) or NULL;
 * owned by the index until the next call. */
const char *index_meta(struct ci_index *ix, const char *key);

/*
 * Are the vectors that ci-index embedded in db as model (meta "model" names it)
 * of other weights than those of fingerprint fp (embed_model_fingerprint(),
 * recorded as meta "model_fingerprint"; an index of an earlier ci-index has
 * none)?  Then they do not compare with vectors fp's weights compute.  0 when
 * fp is 0 (a model whose weights never change under its name) or the vectors
 * are not ci-index's of model (loaded from ci-embed's stream).  Cannot fail.
 */
int index_vectors_stale(sqlite3 *db, const char *model, uint64_t fp);
/* fp as meta "model_fingerprint" records it: 16 hex digits. */
void index_fingerprint_text(char out[17], uint64_t fp);
/*
 * An index opened INDEX_IMMUTABLE keeps its meta values (index_meta, then
 * owned by the index while it is open) and the statements asked for here:
 * sql prepared once and kept, reset with its bindings cleared each time it
 * is asked for (one user at a time).  NULL for another index (prepare it
 * yourself), or when it cannot be prepared.
 */
sqlite3_stmt *index_kept(struct ci_index *ix, const char *sql);

/* Call fn for every indexed file, sorted by path; stops and returns fn's value
 * when it is non-zero.  Returns 0, or -1 after reporting an SQLite error. */
int index_files(struct ci_index *ix, index_file_fn fn, void *data);
/* The same with path, size and mtime only (blob and lang NULL), faster. */
int index_file_stats(struct ci_index *ix, index_file_fn fn, void *data);

/*
 * Call fn for every file with a segment whose text holds all trigrams that
 * match, an FTS5 query over the trigram table (e.g. "\"abc\" AND (\"bcd\" OR
 * \"xyz\")"), with f->hits saying which segments do; files with exact == 0 are
 * always included, with hits NULL.  Sorted by path.  Trigrams are matched
 * case-insensitively.  Returns 0, fn's non-zero value, or -1 after reporting.
 */
int index_trigram_candidates(struct ci_index *ix, const char *match, index_file_fn fn, void *data);

/*
 * Decode the vector of the current row of st, whose columns col, col+1, col+2
 * are a vectors or commit_vectors row's fmt, scale and vec (SELECT fmt, scale,
 * vec ...), into out[0..dim): vec_decode() (vec.h), float32 or int8 alike.
 * Returns 0, or -1 when the row holds no vector of dim values (nothing reported).
 */
int index_vec_decode(float *out, size_t dim, sqlite3_stmt *st, int col);

/*
 * Call fn for each term chunks_fts indexes in text[0..n): the ci_code
 * tokenizer's tokens as it hands them to FTS5 (lower case, the parts of an
 * identifier too), repeats included.
 */
void index_terms(const char *text, size_t n, void (*fn)(const char *term, int len, void *ctx), void *ctx);

/*
 * term_df keeps the document count of every chunks_fts term in at least this
 * many chunks when the table was last filled (build, or an update that
 * deleted chunks); an update adds the chunks it inserts.  A term not listed is
 * counted in chunks_fts itself (fts5vocab), which is cheap for a rare term.
 */
#define CI_TERM_DF_MIN 16

/*
 * chunk_sizes holds the size in tokens of each chunks_fts row (what FTS5's
 * xColumnSize(-1) gives), CI_SIZES_BLOCK chunk ids to a row: the row
 * for id has block id / CI_SIZES_BLOCK, and its size is the little-endian
 * uint32 at 4 * (id % CI_SIZES_BLOCK) of sizes (0: not known).
 */
#define CI_SIZES_BLOCK 1024

/* Size slot i of a chunk_sizes row, read and written. */
static inline uint32_t index_size_get(const unsigned char *sizes, size_t i)
{
	const unsigned char *p = sizes + 4 * i;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void index_size_put(unsigned char *sizes, size_t i, uint32_t v)
{
	unsigned char *p = sizes + 4 * i;

	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = (v >> 16) & 0xff;
	p[3] = v >> 24;
}

/*
 * The SQLite varint (FTS5's records are made of them) at p[0..n): its value
 * in *v; returns the bytes it takes, 0 when n is 0.
 */
size_t index_varint(const unsigned char *p, size_t n, uint64_t *v);

/* Register ci's code-aware FTS5 tokenizer "ci_code" on db (see index.c). */
int index_register_tokenizer(sqlite3 *db);

/*
 * Register what a connection to an index needs: the tokenizer, and the SQL
 * functions ci_deflate(text) and ci_inflate(x) of stored chunk text (a zlib
 * BLOB, or short text as it is).
 */
int index_register_functions(sqlite3 *db);

/*
 * text[0..n) as ci_deflate() stores it: 1 with the BLOB in *out (replacing
 * what it held), or 0 when the text is stored as it is (short, or it does not
 * shrink).  Touches nothing else: any thread may call it.
 */
struct buf;
int index_deflate(struct buf *out, const char *text, size_t n);

/*
 * Tables of the index that no build writes, for what agents tell about answers
 * (bobbin's feedback tools, `ci feedback`): created when first written, kept by
 * a build from the index it replaces.
 */
#define CI_FEEDBACK_TABLES \
	"CREATE TABLE IF NOT EXISTS injections(id TEXT PRIMARY KEY, query TEXT, agent TEXT, " \
	"files TEXT, timestamp TEXT);" \
	"CREATE TABLE IF NOT EXISTS feedback(id INTEGER PRIMARY KEY, injection_id TEXT NOT NULL, " \
	"agent TEXT, rating TEXT NOT NULL, reason TEXT, timestamp TEXT);" \
	"CREATE TABLE IF NOT EXISTS feedback_lineage(id INTEGER PRIMARY KEY, feedback_ids TEXT NOT NULL, " \
	"action_type TEXT NOT NULL, bead TEXT, commit_hash TEXT, description TEXT NOT NULL, agent TEXT, " \
	"timestamp TEXT);"

/*
 * The page size of indexes ci builds (ci-index sets it).  8 KiB: with chunk
 * text compressed, 4, 8, 16 and 32 KiB pages make indexes of the same size
 * and searches of the same speed, but an update writes every page it touches
 * twice (log, then database) and syncs both: one edited file touches about 125
 * pages (the refs and defs name indexes, term_df, the FTS5 segments), and at
 * 32 KiB that was 4 ms more per update than at 8 KiB.
 */
#define CI_PAGE_SIZE 8192

/*
 * Give SQLite a page cache of about bytes in transparent huge pages, for a
 * process that runs one query and exits: its reads then fault in 2 MiB at a
 * time instead of 4 KiB (3,400 page faults were a third of a ci-rank query's
 * time on a VM).  Call before anything else of SQLite; 0, or -1 when it could
 * not be set up (nothing changes).
 */
int index_huge_page_cache(size_t bytes);
/* FTS5's API of a connection (NULL without FTS5), to register functions */
struct fts5_api *index_fts5_api(sqlite3 *db);

#endif
