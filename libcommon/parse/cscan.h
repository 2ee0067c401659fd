/*
 * cscan.h: what tree-sitter's C grammar cannot see, found by scanning the text.
 *
 * tree-sitter parses C without its preprocessor, so two things go wrong on
 * kernel-style code: an attribute macro in a declaration
 * (`static inline __alloc_size(1) void *kmalloc(...)`) reads as a function
 * declarator, which makes the macro the function's name or scope and the calls
 * in its body definitions; and the body of a #define is one opaque token, so the
 * calls in it are no references.  The chunker leaves the first out of the parse
 * (ts_parser_set_included_ranges) and scans the second with these functions.
 */
#ifndef CI_GRAPH_CSCAN_H
#define CI_GRAPH_CSCAN_H

#include <stddef.h>
#include <stdint.h>

/* A byte range [start, end) of a text. */
struct cscan_range {
	uint32_t start, end;	/* bytes, end exclusive */
};

/*
 * The attribute-macro invocations of the C or C++ text data (n bytes): an
 * identifier that starts with "__" (not a keyword such as __attribute__,
 * __typeof__, __asm__ or __declspec, which the grammar knows), its
 * parenthesised arguments (balanced, on at most 8 lines), and then, after
 * blanks, another identifier or a '*' (a call is never followed by those, an
 * attribute before a declaration's type or name always is), or ';', '{', ','
 * or '=' right after a declarator: a parameter list "f(...)" (not a cast nor
 * a condition) or another double-underscore word, as in
 * `void *__kmalloc(size_t size) __alloc_size(1);`.  Comments, strings,
 * character literals and preprocessor lines are skipped.  Sets *out to a
 * malloc'd array of the ranges in text order (NULL when there are none) and
 * returns their number.  Cannot fail.
 */
size_t cscan_attr_macros(struct cscan_range **out, const char *data, size_t n);

/*
 * The calls in a macro body (the text of a #define after its name and
 * parameters, n bytes, continuation lines included): each identifier followed
 * by blanks and '(' that is not a C keyword, a parameter of the macro (params:
 * the text of its parameter list "(a, b)", or NULL) or preceded by '.' or
 * "->".  Calls fn(offset, length, payload) for each, offsets into text, in
 * order; comments and strings are skipped.  Cannot fail.
 */
void cscan_macro_calls(const char *text, size_t n, const char *params, size_t params_n,
		       void (*fn)(size_t off, size_t len, void *payload), void *payload);

/*
 * The statement macros of the C text data (n bytes): kernel-style iterators
 * such as `for_each_possible_cpu(i)` or `list_for_each_entry(p, h, m)` that
 * expand to a loop header, used as one.  The grammar reads them as a call
 * missing its ';', and its error recovery can then swallow the rest of the
 * file into one function (kernel/sched/core.c: every function after
 * nr_context_switches).  Found as: an identifier of five or more characters
 * (not a keyword, not a known attribute) that starts an indented line inside
 * braces (a '}' or '{' in column 0 ends or opens a function body), after a
 * statement's end (';', '{', '}', ')', ':' or the word else or do), followed
 * by balanced parentheses (at most 16 lines, no ';' or brace in them) and then
 * by '{' or an identifier other than else.  Also a macro that ends a do loop
 * (`do { ... } while_each_thread(g, t);`: an identifier of five or more
 * characters right after the '}' of a do's body, then balanced parentheses
 * and ';').  Sets *out to a malloc'd array of
 * the identifiers' ranges in text order (NULL when there are none) and returns
 * their number; the chunker parses a copy in which each reads "while" padded
 * with blanks (same offsets, same lines).  Cannot fail.
 */
size_t cscan_stmt_macros(struct cscan_range **out, const char *data, size_t n);

/*
 * What the parse of the C text data (n bytes) should not see, so that a
 * function's span is its own (over the .c files of Linux's kernel/ mm/ fs/
 * net/ block/ lib/, these made definitions swallow the functions after them):
 * - inside a function body (opened by a '{' in column 0), an #if group whose
 *   branches do not balance their braces or one of which starts with else:
 *   its directive lines, and when unbalanced its branches after the first
 *   (`#ifdef __BIG_ENDIAN for (...) { #else for (...) { #endif`: the first
 *   loop header alone; `#ifdef GROT } else { #endif`: the code as if each #if
 *   held; `#ifdef X else if (...) #endif` in an if-else chain);
 * - outside braces, a line that is a macro invocation alone
 *   (`BTF_ID_FLAGS(func, f, KF_RELEASE)`, `HUF_DGEN(name)`: no ';', so the
 *   grammar reads a declarator) after a ';', '}' or ')' and before a blank,
 *   directive or column-0 identifier line (never before '{' or an indented
 *   line: a function's header, K&R parameter declarations);
 * - the block comments of a #define continued over lines (the grammar ends
 *   the macro's body at the first).
 * Sets *out to a malloc'd array of the ranges in text order (they may
 * overlap; NULL when there are none) and returns their number; the chunker
 * parses a copy in which they are blanks (newlines kept: same offsets, same
 * lines).  Cannot fail.
 */
size_t cscan_hidden(struct cscan_range **out, const char *data, size_t n);

#endif
