/*
 * blob.h: git object ids for content, so an index can key chunks by blob and skip
 * unchanged files across branches and worktrees.
 */
#ifndef CI_BLOB_H
#define CI_BLOB_H

#include <stddef.h>

#define BLOB_HEXSZ 40

/* The git blob id of data (what `git hash-object --no-filters` prints) as 40 hex
 * digits and a NUL in out.  Returns 0, or -1 after reporting. */
int blob_id(char out[BLOB_HEXSZ + 1], const void *data, size_t n);

#endif
