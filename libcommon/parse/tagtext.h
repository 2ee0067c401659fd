/*
 * tagtext.h: what the source text around a tag says, read once when a file
 * is indexed and stored with the tag (refs.recv, defs.flags in
 * share/schema.sql), so that the call graph's whole-index passes (dead, arch,
 * trace) and impact do not read the text back: the receiver of a call (what
 * it is made on, from the text before its name) and whether a definition is
 * registered without a call (a decorator line above it, or C's
 * __attribute__((constructor)) / destructor); a file's Python main guard.
 *
 * The numbers of enum bind_recv and TAGTEXT_* are stored in the index: never
 * renumber them without a new schema version.
 */
#ifndef CI_PARSE_TAGTEXT_H
#define CI_PARSE_TAGTEXT_H

#include <stddef.h>

/* What a call is made on, read from the text before its name (stored as refs.recv). */
enum bind_recv {
	RECV_UNKNOWN = 0,	/* not known (no text): every candidate may fit */
	RECV_BARE,		/* f(): a function or class, not a method */
	RECV_SELF,		/* self.f(), cls.f(), this.f(): the enclosing class's */
	RECV_SUPER,		/* super().f(): a base class's, not the enclosing one's */
	RECV_OTHER,		/* x.f(), p->f(): a method of some class, a module's function, a field */
};

/*
 * The receiver of the call whose name starts at byte col0 (0-based) of the
 * source line text (NULL: RECV_UNKNOWN).  Cannot fail.
 */
enum bind_recv bind_receiver(const char *text, size_t col0);

/* defs.flags bits. */
enum {
	TAGTEXT_DECORATED = 1,	/* a line starting with '@' right above it (blank lines
				   between), or __attribute__((constructor / destructor
				   on its line or the one above */
	TAGTEXT_PROPERTY = 2,	/* TS/JS: a function that is an object's property
				   (tagtext_js_declared() 0): no bare name reaches it */
	TAGTEXT_ASSIGNED = 4,	/* TS/JS: a function assigned to an object's member,
				   `o.name = function` (tagtext_js_assigned()) */
};

/*
 * The TAGTEXT_* flags of the definition starting on line (1-based), whose
 * file's lines are line_at(ctx, l) (NUL-terminated, without '\n'; NULL for a
 * line not known).
 */
unsigned tagtext_def_flags(const char *(*line_at)(void *ctx, long l), void *ctx, long line);

/* Python's main guard: the first of lines 1..lines_nr that starts with
 * "if __name__" and holds "__main__" (stored as blobs.main_guard), or 0. */
long tagtext_main_guard(const char *(*line_at)(void *ctx, long l), void *ctx, long lines_nr);

/*
 * The identifiers of lines 1..lines_nr, outside line comments ('#' in
 * Python, Ruby and shell, '//' elsewhere, by lang), strings included (names
 * looked up at run time): fn(arg, tok, line, col, prefix) for each one shorter
 * than 256 bytes (tok NUL-terminated, col 1-based), prefix 1 for a string
 * such as "cmd_" or f"on_{x}" (the prefix of names looked up at run time).
 * What the call graph counts as a name's mentions (dead).
 */
void tagtext_idents(const char *(*line_at)(void *ctx, long l), void *ctx, long lines_nr, const char *lang,
		    void (*fn)(void *arg, const char *tok, long line, long col, int prefix), void *arg);

/* Does the line start an import statement ("from ", "import ")? */
int tagtext_import_line(const char *s);

/* The next occurrence of name as a whole word (JS identifiers: letters,
 * digits, '_', '$') in s, or NULL. */
const char *tagtext_word(const char *s, const char *name);

/* The word of text ending just before p (blanks and a '*' skipped): its start,
 * its length in *n; NULL if none. */
const char *tagtext_word_before(const char *text, const char *p, size_t *n);

/*
 * TypeScript/JavaScript: 1 if the definition line text declares name so that
 * a bare name reaches it (function name, const/let/var name, class name,
 * `name = function` at the line's start), 0 for an object's property
 * (`name: () => ...`, a method shorthand `name() {`, `o.name = function`).
 */
int tagtext_js_declared(const char *text, const char *name);

/* TypeScript/JavaScript: 1 if the definition line text assigns a function to
 * a member named name, `o.name = ...` (not `==`, `=>`). */
int tagtext_js_assigned(const char *text, const char *name);

#endif
