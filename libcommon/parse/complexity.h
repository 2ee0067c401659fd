/*
 * complexity.h: how hard a source file is to follow, from its syntax tree.
 *
 * A cognitive-complexity flavoured count (after G. Ann Campbell's "Cognitive
 * Complexity", simplified): every branch in a function (if, loop, catch, case
 * arm, ternary) costs 1 plus the number of branches it sits in; an else-if, elif
 * or elsif costs 1 whatever its depth; each && / || / and / or costs 1.  Nesting
 * starts again at 0 in every unit the chunker knows (function, method, class...).
 * The file's complexity is the sum over the file.  Languages without a grammar
 * have none.
 */
#ifndef CI_COMPLEXITY_H
#define CI_COMPLEXITY_H

#include <stddef.h>
#include "parse/lang.h"

struct complexity;

/* One per thread (it owns a tree-sitter parser).  Cannot fail. */
struct complexity *complexity_new(void);
void complexity_free(struct complexity *cx);

/*
 * The complexity of data[0..n) in language l, in *out.  Returns 0; 1 when l has no
 * grammar or the text could not be parsed (then *out is 0).  *functions, if not
 * NULL, receives the number of function-like units.
 */
int complexity_of(struct complexity *cx, const struct lang *l, const char *data, size_t n,
		  long *out, long *functions);

#endif
