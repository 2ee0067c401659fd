-- share/schema.sql: the ci index (see libcommon/index/index.h), schema version 9.
--
-- Content is keyed by git blob id: files map paths to blobs; chunks, definitions
-- and references belong to blobs, so an unchanged file is parsed once, whatever
-- branch or worktree it appears in.  Imports belong to paths, since resolving a
-- relative import depends on where the importing file is.
--
-- An index of another version is rebuilt (ci-index update), never read.

CREATE TABLE IF NOT EXISTS meta(
	key TEXT PRIMARY KEY,		-- schema_version, root, commit, created, updated
	value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS blobs(
	id INTEGER PRIMARY KEY,		-- chunks_tri's rows are (id << 8) | segment
	blob TEXT NOT NULL UNIQUE,	-- git blob id, 40 hex digits
	lang TEXT,			-- language, NULL for unknown text
	size INTEGER NOT NULL,		-- bytes
	lines INTEGER NOT NULL,		-- lines
	exact INTEGER NOT NULL,		-- 1: chunk texts are the file's bytes (UTF-8, no NUL)
	main_guard INTEGER NOT NULL DEFAULT 0,	-- the line of `if __name__ == "__main__"`, or 0
	segs BLOB			-- where segments 1, 2, ... of chunks_tri start: a
					-- little-endian uint32 byte offset and uint32 line
					-- each; NULL for a blob of one segment
);

-- The few blobs whose trigrams cannot be trusted (not UTF-8, a NUL): always candidates.
CREATE INDEX IF NOT EXISTS blobs_inexact ON blobs(id) WHERE exact = 0;

-- Without rowid: stored in path order, so the readers that go through every
-- file (ci-grep checking each against the disk, ci-index update) read it in
-- that order with no lookup per row.
CREATE TABLE IF NOT EXISTS files(
	path TEXT PRIMARY KEY,		-- relative to the root
	blob_id INTEGER NOT NULL,	-- blobs.id
	size INTEGER NOT NULL,		-- bytes on disk when indexed
	mtime INTEGER NOT NULL		-- seconds, when indexed (0 if unknown)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_blob ON files(blob_id);

-- Every change to the file list counts: meta 'generation' tells a reader that
-- keeps a copy of it (the index's server, answering ci-grep) whether it still
-- holds, where 'updated' (a second) cannot.
INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', 0);
CREATE TRIGGER IF NOT EXISTS files_gen_ai AFTER INSERT ON files BEGIN
	UPDATE meta SET value = value + 1 WHERE key = 'generation';
END;
CREATE TRIGGER IF NOT EXISTS files_gen_au AFTER UPDATE ON files BEGIN
	UPDATE meta SET value = value + 1 WHERE key = 'generation';
END;
CREATE TRIGGER IF NOT EXISTS files_gen_ad AFTER DELETE ON files BEGIN
	UPDATE meta SET value = value + 1 WHERE key = 'generation';
END;

-- Files the walker listed but whose content was left out (binary, generated),
-- so that an update does not read them again until they change.
CREATE TABLE IF NOT EXISTS skipped(
	path TEXT PRIMARY KEY,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	reason TEXT NOT NULL		-- binary, generated, unreadable
);

-- The directories the last walk entered, each with its modification time when
-- it was listed: a reader that finds a directory's mtime unchanged knows that no
-- entry was added, removed or renamed in it since, and re-lists only the others
-- (ci-grep).  meta 'walked_ns' is when that walk started; 'rules' lists the
-- files holding ignore rules, as "<size> <mtime_ns> <path>" lines.
CREATE TABLE IF NOT EXISTS dirs(
	path TEXT PRIMARY KEY,		-- relative to the root, '' for the root
	mtime INTEGER NOT NULL		-- nanoseconds
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS chunks(
	id INTEGER PRIMARY KEY,
	blob_id INTEGER NOT NULL,	-- blobs.id
	start_line INTEGER NOT NULL,	-- 1-based, inclusive
	end_line INTEGER NOT NULL,
	kind TEXT NOT NULL,		-- function, class, block, section, lines...
	name TEXT,
	scope TEXT,
	signature TEXT,
	text NOT NULL			-- ci_deflate(text): read it as ci_inflate(text)
);
CREATE INDEX IF NOT EXISTS chunks_blob ON chunks(blob_id, start_line);

-- The chunks with their text, for FTS5 (which reads its external content by
-- column name) and for anyone reading the index with ci's functions registered.
CREATE VIEW IF NOT EXISTS chunks_plain AS
	SELECT id, name, scope, signature, ci_inflate(text) AS text FROM chunks;

-- BM25 over chunks with ci's code-aware tokenizer (identifiers whole and split).
-- ci-index adds each chunk's row as it inserts the chunk (it has the text at
-- hand, uncompressed); the trigger removes it.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
	name, scope, signature, text,
	content='chunks_plain', content_rowid='id', tokenize='ci_code');
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
	INSERT INTO chunks_fts(chunks_fts, rowid, name, scope, signature, text)
		VALUES ('delete', old.id, old.name, old.scope, old.signature, ci_inflate(old.text));
END;

-- The number of chunks holding each common term of chunks_fts (in at least
-- CI_TERM_DF_MIN = 16 chunks when the table was filled): ci-rank's idf.
-- fts5vocab counts a term by walking its whole doclist, 8 ms for "struct" on
-- 137k chunks.  Exact: a build fills it from fts5vocab, an update adds the
-- chunks it inserts and fills it anew when it deletes chunks.  A term not
-- listed is counted in chunks_fts.
CREATE TABLE IF NOT EXISTS term_df(
	term TEXT PRIMARY KEY,
	df INTEGER NOT NULL
) WITHOUT ROWID;

-- The size in tokens of each chunks_fts row, for ci-rank's BM25: FTS5 finds
-- it with a statement per row (half of a query's full-text time).  1024 chunk
-- ids to a row: chunk id's size is the little-endian uint32 at 4 * (id % 1024)
-- of block id / 1024's sizes (0: not known).  Filled as term_df is.
CREATE TABLE IF NOT EXISTS chunk_sizes(
	block INTEGER PRIMARY KEY,
	sizes BLOB NOT NULL
);

-- Trigrams of each blob's text by segments of whole lines of about 4 KiB (rowid =
-- blobs.id << 8 | segment number; see index_segments() in libcommon/index/index.h),
-- for the candidate parts of files in substring and regex search: a match within
-- a line has all its trigrams in one segment, which is all a search reads of an
-- unchanged file.  Contentless: the text is in chunks.  Case kept: a search is
-- case-sensitive unless asked otherwise, and "_SUSPEND" rules out the many
-- segments that hold only "_suspend" (on Linux, 1,807 files hold the one and
-- 5,292 the other); a case-insensitive search asks for each trigram's case
-- variants (trigram.c, q_icase).
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_tri USING fts5(text, content='', tokenize='trigram case_sensitive 1',
	detail='none');

-- How many segments of chunks_tri held each common trigram (in 1,000 or more)
-- when the index was built: a search leaves the most common trigrams of its
-- query out when the rarer ones say nearly as much (trigram_query_lean).  Not
-- kept up to date by updates: an estimate.
CREATE TABLE IF NOT EXISTS tri_df(
	tri TEXT PRIMARY KEY,
	df INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS defs(
	blob_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	kind TEXT NOT NULL,		-- function, method, class, ...
	line INTEGER NOT NULL,
	col INTEGER NOT NULL,
	end_line INTEGER NOT NULL,
	scope TEXT,
	flags INTEGER NOT NULL DEFAULT 0	-- 1: decorated (a line starting with '@' above it) or C's
					-- __attribute__((constructor/destructor)): registered, not called
					-- 2: TS/JS, a function that is an object's property
					-- (name: () => ..., name() {}): no bare name reaches it;
					-- 4: TS/JS, a function assigned to a member (o.name = ...)
);
CREATE INDEX IF NOT EXISTS defs_name ON defs(name);
CREATE INDEX IF NOT EXISTS defs_blob ON defs(blob_id);

CREATE TABLE IF NOT EXISTS refs(
	blob_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	kind TEXT NOT NULL,		-- call, type, ...
	line INTEGER NOT NULL,
	col INTEGER NOT NULL,
	scope TEXT,
	recv INTEGER NOT NULL DEFAULT 0	-- a call's receiver, from the text before its name:
					-- 0 unknown (no text, or not a call), 1 bare f(), 2 self.f()
					-- (cls, this), 3 super().f(), 4 other x.f()
);
-- (name, blob_id): the files that reference a name without reading the table
-- (impact of a header counts them by file; callers sorts them by file; Linux:
-- 193.5 MB against 163.4 for name alone, the table itself 407 MB).  An index
-- built before has refs_name(name).
CREATE INDEX IF NOT EXISTS refs_name_blob ON refs(name, blob_id);
CREATE INDEX IF NOT EXISTS refs_blob ON refs(blob_id);

-- What ci-refs dead needs from a blob's text, stored when it is indexed: its
-- identifiers outside its references and definitions (libcommon/index/mentions.h).
CREATE TABLE IF NOT EXISTS mentions(
	blob_id INTEGER PRIMARY KEY,	-- blobs.id
	names BLOB NOT NULL		-- ci_deflate(text): read it as ci_inflate(names)
);

CREATE TABLE IF NOT EXISTS imports(
	path TEXT NOT NULL,		-- the importing file
	target TEXT NOT NULL,		-- as written
	resolved TEXT,			-- a file of the repository, or NULL
	line INTEGER NOT NULL,
	type_only INTEGER NOT NULL DEFAULT 0	-- 1: under Python's `if TYPE_CHECKING:`
);
CREATE INDEX IF NOT EXISTS imports_path ON imports(path);
-- (resolved, path): the importers of a file without reading the table (impact
-- and callers ask for thousands of files' importers; Linux: 23 MB, against 12
-- for resolved alone).  An index built before has imports_resolved(resolved).
CREATE INDEX IF NOT EXISTS imports_resolved_path ON imports(resolved, path);

-- Embeddings (ci-embed, ci-index build --embed).  Each row says its format, so
-- readers decode either through vec_decode() (libcommon/embed/vec.h):
--   f32   little-endian float32 x dim, scale NULL
--   int8  int8 x dim, value = byte * scale (scale = max |x| / 127)
CREATE TABLE IF NOT EXISTS vectors(
	chunk_id INTEGER PRIMARY KEY,	-- chunks.id
	model TEXT NOT NULL,
	dim INTEGER NOT NULL,
	fmt TEXT NOT NULL,		-- f32, int8
	scale REAL,			-- int8: the value of 1
	vec BLOB NOT NULL
);

-- The chunks whose vector was added, replaced or removed since the snapshot
-- of the vectors that meta's vec_snapshot names was written (<index>.vec,
-- libcommon/index/vecsnap.h): a reader of the snapshot reads these from vectors.
CREATE TABLE IF NOT EXISTS vec_changed(
	chunk_id INTEGER PRIMARY KEY
);
CREATE TRIGGER IF NOT EXISTS vectors_ai AFTER INSERT ON vectors BEGIN
	INSERT OR IGNORE INTO vec_changed(chunk_id) VALUES (new.chunk_id);
END;
CREATE TRIGGER IF NOT EXISTS vectors_ad AFTER DELETE ON vectors BEGIN
	INSERT OR IGNORE INTO vec_changed(chunk_id) VALUES (old.chunk_id);
END;
CREATE TRIGGER IF NOT EXISTS vectors_au AFTER UPDATE ON vectors BEGIN
	INSERT OR IGNORE INTO vec_changed(chunk_id) VALUES (old.chunk_id), (new.chunk_id);
END;

CREATE TABLE IF NOT EXISTS commits(
	sha TEXT PRIMARY KEY,
	time INTEGER NOT NULL,		-- committer time, seconds
	author TEXT,
	email TEXT,
	message TEXT,
	parents INTEGER,		-- number of parents
	merged_into TEXT		-- for a commit a merge brought in: that merge
);
CREATE INDEX IF NOT EXISTS commits_time ON commits(time);
-- Embeddings of commit messages, as vectors above.
CREATE TABLE IF NOT EXISTS commit_vectors(
	sha TEXT PRIMARY KEY,		-- commits.sha
	model TEXT NOT NULL,
	dim INTEGER NOT NULL,
	fmt TEXT NOT NULL,
	scale REAL,
	vec BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS commit_files(
	sha TEXT NOT NULL,
	path TEXT NOT NULL,
	added INTEGER,
	deleted INTEGER,
	status TEXT,			-- A, M, D, R
	old_path TEXT,			-- the path before a rename
	PRIMARY KEY (sha, path)
);
CREATE INDEX IF NOT EXISTS commit_files_path ON commit_files(path);

CREATE TABLE IF NOT EXISTS coupling(
	a TEXT NOT NULL,
	b TEXT NOT NULL,
	score REAL NOT NULL,
	co_changes INTEGER NOT NULL,
	last INTEGER,
	PRIMARY KEY (a, b)
);
