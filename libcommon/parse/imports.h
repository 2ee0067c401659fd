/*
 * imports.h: resolve an import's target to a file of the repository.
 *
 * The chunker finds imports with each language's share/queries/<lang>/imports.scm
 * (captures @import: the statement, @target: the module text) and asks
 * import_resolve() where the target lives.  Resolution is syntactic and local:
 * relative paths from the importing file, the repository's own module layout
 * (Python packages, Go module path from go.mod, Rust crate paths, Java packages,
 * JS/TS relative specifiers with extension and index probing, C/C++ include paths
 * relative to the file, the root and common include directories), never a
 * package manager's or system directories.  The repository's own build
 * configuration counts: go.mod (module paths, local replace directives),
 * package.json (workspace packages by name, "exports"/"main"), tsconfig.json and
 * jsconfig.json ("baseUrl", "paths", "extends"), compile_commands.json (-I
 * paths), Java/Kotlin source roots -- read once by import_ctx_load().
 */
#ifndef CI_IMPORTS_H
#define CI_IMPORTS_H

#include <stddef.h>

/* The repository's files, root-relative, sorted bytewise (strcmp); borrowed. */
struct fileset {
	const char *const *paths;	/* sorted; may be NULL when nr is 0 */
	size_t nr;			/* number of paths */
};

struct import_ctx {
	const char *root;		/* absolute repository root, no trailing '/' */
	const struct fileset *files;	/* all files of the walk, or NULL: then only
					   files that exist on disk under root are found */
	/* reads the root-relative file rel (a go.mod) into a malloc'd *data, 0 or -1
	   when it is missing; NULL reads the disk under root.  Called by
	   import_ctx_load(), and per Go import without it: then from several
	   threads.  (ci-index build --rev reads a commit's blobs.) */
	int (*read)(const struct import_ctx *ctx, const char *rel, char **data, size_t *n);
	void *payload;			/* for read */
	struct import_config *config;	/* from import_ctx_load(), or NULL: then go.mod
					   files are read per import and package.json,
					   tsconfig and compile_commands.json are not used */
};

/*
 * Read the configuration files of the repository that import_resolve()
 * follows (go.mod, package.json, tsconfig.json, jsconfig.json anywhere in
 * ctx->files; compile_commands.json at the root or in build/), through
 * ctx->read when set, into ctx->config.  Call it once ctx->root, files and
 * read are set, before resolving from several threads; ctx->config is then
 * only read.  A file that cannot be read or parsed is skipped quietly.
 * Cannot fail.  import_ctx_release() frees it (and may be called without it).
 */
void import_ctx_load(struct import_ctx *ctx);
void import_ctx_release(struct import_ctx *ctx);

/* 1 if the root-relative path is a file import_ctx_load() reads (a change to it may move imports). */
int import_is_config(const char *path);

/*
 * Resolve target, imported by the root-relative file from (in language lang, a
 * lang.h name such as "python"), to a root-relative path of a file (or, for Go, a
 * package directory) of the repository.  target is the import text without quotes
 * or angle brackets: "stdio.h", "os.path", "./util", "crate::a::b", "java.util.List".
 * Returns a malloc'd path, or NULL when the target is outside the repository (a
 * system header, a package, the standard library), cannot be found, or is the
 * importing file itself.  Never a path outside the root.  Cannot fail;
 * thread-safe.
 *
 * The rules per language are in imports.c.  Without a file set, candidates are
 * stat(2)ed under root and the "unique suffix" fallbacks (C headers, Python
 * modules, Java classes, PHP namespaces) are not tried.
 */
char *import_resolve(const struct import_ctx *ctx, const char *lang, const char *from,
		     const char *target);

/*
 * `from module import name` (Python): when name is itself a module of the
 * package module ("from . import sessions" -> sessions.py, "from pkg import
 * mod" -> pkg/mod.py, or mod/__init__.py), its root-relative path (malloc'd),
 * with *target set to the module's full name as import_resolve() takes it
 * (".sessions", "pkg.mod"; malloc'd).  NULL (and *target NULL) when name is not
 * a module of the repository (a function, a class, a variable of module: the
 * edge is then to module itself), for "*", and for other languages.  When
 * name is the importing file itself, NULL with *target set: a module, but no
 * edge.  Cannot fail; thread-safe.
 */
char *import_resolve_member(const struct import_ctx *ctx, const char *lang, const char *from,
			    const char *module, const char *name, char **target);

/* 1 if path is in ctx->files (or, without a file set, is a regular file under root). */
int import_file_exists(const struct import_ctx *ctx, const char *path);

#endif
