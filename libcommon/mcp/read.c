/*
 * read.c: the built-in read tool: a file of the repository, whole or a range
 * of lines, numbered, from the work tree or at a commit (libgit2); a table's
 * "builtin": "read" (libcommon/mcp, mcp.h).
 */
#include "mcp/internal.h"
#include "parse/lang.h"

#include <errno.h>
#include <git2.h>
#include <sys/stat.h>

/* ---- the built-in read tool ---- */

/* Read path at ref through libgit2 into *data; NULL, or a message to free. */
static char *read_at_ref(struct mcp_server *srv, const char *ref, const char *rel, char **data, size_t *n)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *ent = NULL;
	git_blob *blob = NULL;
	char *why = NULL;

	if (git_repository_open(&repo, srv->root) < 0) {
		why = xasprintf("parameter 'ref': '%s' is not a git repository", srv->root);
		goto done;
	}
	if (git_revparse_single(&obj, repo, ref) < 0 ||
	    git_object_peel((git_object **)&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		why = xasprintf("parameter 'ref': '%s' is not a branch, tag or commit of the repository", ref);
		goto done;
	}
	if (git_commit_tree(&tree, commit) < 0 || git_tree_entry_bypath(&ent, tree, rel) < 0) {
		why = xasprintf("parameter 'path': '%s' does not exist at '%s'", rel, ref);
		goto done;
	}
	if (git_tree_entry_type(ent) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(ent)) < 0) {
		why = xasprintf("parameter 'path': '%s' is not a file at '%s'", rel, ref);
		goto done;
	}
	*n = (size_t)git_blob_rawsize(blob);
	*data = xmalloc(*n + 1);
	memcpy(*data, git_blob_rawcontent(blob), *n);
	(*data)[*n] = '\0';
done:
	git_blob_free(blob);
	git_tree_entry_free(ent);
	git_tree_free(tree);
	git_commit_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return why;
}

/*
 * Whether ref names what the working tree holds: HEAD, or the branch checked out
 * (by its name or refs/heads/ name).  Then the work tree is read, edits included.
 */
static int ref_is_worktree(struct mcp_server *srv, const char *ref)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	int yes = !strcmp(ref, "HEAD");

	if (!yes && git_repository_open(&repo, srv->root) == 0 && git_repository_head(&head, repo) == 0 &&
	    git_reference_is_branch(head))
		yes = !strcmp(ref, git_reference_shorthand(head)) || !strcmp(ref, git_reference_name(head));
	git_reference_free(head);
	git_repository_free(repo);
	return yes;
}

json_t *mcp_builtin_read(struct mcp_server *srv, json_t *args)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *ref = json_string_value(json_object_get(args, "ref"));
	const char *why = NULL;
	char *rel;

	/* a table may ask for the work tree when ref names it (abstract's get_file) */
	if (ref && json_is_true(json_object_get(args, "ref_worktree")) && ref_is_worktree(srv, ref))
		ref = NULL;
	rel = ref ? mcp_confine_lexical(srv->root, path, &why) : mcp_confine(srv->root, path, &why);
	char *data = NULL, *err = NULL;
	size_t n = 0, line = 1, nlines = 0;
	long start, end, ctx, first;
	struct buf text = BUF_INIT;
	json_t *r = NULL, *sc;
	const char *p, *e;
	int truncated = 0;

	if (!rel)
		return mcp_tool_error("parameter 'path': '%s' %s", path, why);
	if (ref) {
		err = read_at_ref(srv, ref, rel, &data, &n);
		if (err) {
			r = mcp_tool_error("%s", err);
			free(err);
			goto done;
		}
	} else {
		char *abs = xasprintf("%s/%s", srv->root, rel);
		struct stat st;
		if (stat(abs, &st) == 0 && S_ISDIR(st.st_mode)) {
			free(abs);
			r = mcp_tool_error("parameter 'path': '%s' is a directory, not a file", rel);
			goto done;
		}
		if (read_file(abs, &data, &n) < 0) {
			free(abs);
			r = mcp_tool_error("parameter 'path': cannot read '%s': %s", rel, strerror(errno));
			goto done;
		}
		free(abs);
	}
	if (memchr(data, '\0', n < 8000 ? n : 8000)) {
		r = mcp_tool_error("parameter 'path': '%s' is a binary file", rel);
		goto done;
	}
	for (p = data; p < data + n; p = e + 1, nlines++)
		if (!(e = memchr(p, '\n', (size_t)(data + n - p))))
			e = data + n;
	ctx = json_integer_value(json_object_get(args, "context"));
	start = json_is_integer(json_object_get(args, "start_line")) ?
		(long)json_integer_value(json_object_get(args, "start_line")) : 1;
	end = json_is_integer(json_object_get(args, "end_line")) ?
	      (long)json_integer_value(json_object_get(args, "end_line")) : 0;
	if (end && end < start) {
		r = mcp_tool_error("parameter 'end_line' (%ld) must not be before 'start_line' (%ld)", end, start);
		goto done;
	}
	if (start > 1 && (size_t)start > nlines) {
		r = mcp_tool_error("parameter 'start_line' must be from 1 to %zu (the lines of '%s'), got %ld",
			       nlines, rel, start);
		goto done;
	}
	first = start - ctx > 1 ? start - ctx : 1;
	if (end)
		end += ctx;
	for (p = data; p < data + n; p = e + 1, line++) {
		e = memchr(p, '\n', (size_t)(data + n - p));
		if (!e)
			e = data + n;
		if ((long)line < first)
			continue;
		if (end && (long)line > end)
			break;
		if (text.len > srv->max_output) {
			truncated = 1;
			break;
		}
		buf_addf(&text, "%6zu\t", line);
		buf_add(&text, p, (size_t)(e - p));
		buf_addch(&text, '\n');
	}
	sc = json_pack("{s:s, s:i, s:i, s:i, s:s%}", "path", rel, "start_line", (json_int_t)first,
		       "end_line", (json_int_t)(line - 1), "total_lines", (json_int_t)nlines,
		       "text", text.buf, text.len);
	if (!json_object_get(sc, "text"))	/* not UTF-8 */
		json_object_set_new(sc, "text", json_string("(the file is not UTF-8 text)"));
	if (ref)
		json_object_set_new(sc, "ref", json_string(ref));
	{
		const struct lang *l = lang_detect(rel, data, n < 4096 ? n : 4096);
		json_object_set_new(sc, "lang", l ? json_string(l->name) : json_null());
	}
	if (truncated)
		json_object_set_new(sc, "truncated", json_true());
	r = json_pack("{s:[{s:s, s:O}], s:o}", "content", "type", "text",
		      "text", json_object_get(sc, "text"), "structuredContent", sc);
done:
	buf_release(&text);
	free(data);
	free(rel);
	return r;
}
