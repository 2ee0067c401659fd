/*
 * mentions.h: the names a file mentions outside its references and
 * definitions, stored once per blob when the file is indexed (the mentions
 * table of share/schema.sql), so that ci-refs dead does not read back and
 * scan the text of every file (graph/cgraph.c reads them).
 *
 * Every identifier of the file's lines (parse/tagtext.h's tagtext_idents())
 * is a mention unless a reference of the file starts there or a definition
 * of that name starts on its line.  The text, one item a line, in the order
 * met but for the counts (sorted by name):
 *   "name count"   count mentions of name, none on an import line nor inside
 *                  a definition of that name in this file
 *   "=name line"   a mention inside a definition of that name in this file
 *   ">name line"   a mention on an import line ("from ", "import ")
 *   "$tok"         a string "tok" (or f"tok{"): a prefix of names looked up
 *                  at run time ("cmd_")
 */
#ifndef CI_INDEX_MENTIONS_H
#define CI_INDEX_MENTIONS_H

#include "core/buf.h"

/* A definition of the file. */
struct mn_def {
	const char *name;
	long line, end_line;
};

/* Where a reference of the file starts. */
struct mn_pos {
	long line, col;
};

/*
 * The mention text of a file (lines 1..lines_nr from line_at(), NULL where
 * not known; lang for its comments) with references refs[0..refs_nr) and
 * definitions defs[0..defs_nr), both sorted here, into out (reset first).
 */
void mentions_text(struct buf *out, const char *(*line_at)(void *ctx, long l), void *ctx, long lines_nr,
		   const char *lang, struct mn_pos *refs, size_t refs_nr, struct mn_def *defs, size_t defs_nr);

#endif
