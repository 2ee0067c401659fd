/*
 * chunk.h: turn one source file into file, chunk, def, ref and import records.
 *
 * Chunks follow the syntax tree and tile the file: every line is in exactly one
 * chunk, in order.  A unit (function, method, class, struct, enum, interface, impl,
 * trait, module, namespace) is one chunk with its leading comments; a class-like
 * unit with members is cut into a header chunk (its signature and what precedes the
 * first member) and its members; a unit longer than max_lines is cut at child
 * boundaries into a signature chunk and "block" chunks; code between units is
 * gathered into "block" chunks.  Markdown is cut at headings ("section"); other
 * text, and files that cannot be parsed, into windows of lines ("lines").
 *
 * Definitions and references come from the grammar's tags query; imports from
 * ci's imports query, resolved with import_resolve().
 */
#ifndef CI_CHUNK_H
#define CI_CHUNK_H

#include "core/buf.h"
#include "parse/lang.h"
#include "parse/imports.h"

enum chunk_want {
	CHUNK_WANT_FILES = 1,
	CHUNK_WANT_CHUNKS = 2,
	CHUNK_WANT_DEFS = 4,
	CHUNK_WANT_REFS = 8,
	CHUNK_WANT_IMPORTS = 16,
	CHUNK_WANT_ALL = 31,
};

#define CHUNK_DEFAULT_MAX_LINES 100

struct chunk_opts {
	unsigned want;		/* enum chunk_want bits */
	int max_lines;		/* split units longer than this */
};

struct chunker;

/* A chunker owns a tree-sitter parser and query cursors: one per thread.
 * Queries are compiled once per language and shared.  Cannot fail. */
struct chunker *chunker_new(const struct chunk_opts *opts);
void chunker_free(struct chunker *c);

/*
 * Append the records of one file to out.  path is root-relative; lang may be NULL
 * (chunked by lines, "lang":null); ictx may be NULL (imports unresolved).
 * Problems with the content (invalid UTF-8, a NUL byte, a parse that fails) are
 * appended to warn as whole lines "<prog>: warning: <path>: <what>\n" and the file
 * is chunked by lines.  Returns 0, or 1 when the file was degraded that way.
 */
int chunker_file(struct chunker *c, const char *path, const struct lang *lang,
		 const char *data, size_t n, const struct import_ctx *ictx,
		 struct buf *out, struct buf *warn);

/*
 * The git blob id (40 hex digits) of the content the next chunker_file() call
 * gets, when the caller knows it (a blob read from git's object database), so
 * that it is not hashed again.  Applies to that one call only.
 */
void chunker_set_blob(struct chunker *c, const char *hex);

/* Compile (once) and check every built-in query; report each failure.  Returns
 * the number of queries that failed to compile. */
int chunker_check_queries(void);

#endif
