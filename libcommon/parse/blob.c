/*
 * blob.c: git blob ids through libgit2 (see blob.h).
 */
#include "core/common.h"
#include "parse/blob.h"

#include "parse/walk.h"

#include <git2.h>

int blob_id(char out[BLOB_HEXSZ + 1], const void *data, size_t n)
{
	git_oid oid;

	walk_git_start();
	if (git_odb_hash(&oid, data, n, GIT_OBJECT_BLOB) < 0) {
		const git_error *e = git_error_last();
		return error("cannot hash content: %s", e && e->message ? e->message : "libgit2 error");
	}
	git_oid_tostr(out, BLOB_HEXSZ + 1, &oid);
	return 0;
}
