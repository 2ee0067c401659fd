/*
 * importcfg.h: the repository's build configuration that decides where imports
 * go, read once per walk (import_ctx_load()) and shared read-only by every
 * thread that resolves imports.  Internal to imports.c and importcfg.c; the
 * contract for callers is import_ctx_load()/import_ctx_release() in imports.h.
 *
 * Every path here is root-relative and normalised ("" is the root).
 */
#ifndef CI_IMPORTCFG_H
#define CI_IMPORTCFG_H

#include <jansson.h>
#include <stddef.h>

struct import_ctx;

/* A `replace old => ./dir` directive of a go.mod. */
struct go_replace {
	char *old;			/* the module path replaced */
	char *dir;			/* the local directory it is replaced by */
};

/* A go.mod file. */
struct go_mod {
	char *dir;			/* its directory */
	char *module;			/* its module path, or NULL */
	struct go_replace *replaces;	/* its replace directives to local directories */
	size_t replaces_nr, replaces_alloc;
};

/* A package.json with a "name". */
struct js_pkg {
	char *dir;			/* its directory */
	char *name;			/* its "name" */
	json_t *json;			/* the whole object (a reference) */
};

/* A tsconfig.json or jsconfig.json, with what its "extends" chain adds. */
struct ts_config {
	char *dir;			/* its directory */
	char *base_url;			/* compilerOptions.baseUrl as a directory, or NULL */
	char *paths_base;		/* the directory "paths" targets are relative to */
	json_t *paths;			/* compilerOptions.paths (an object, a reference), or NULL */
	int js;				/* 1 for a jsconfig.json */
};

/* The include directories of a compilation database's file, or of a directory's files. */
struct cc_incs {
	char *key;			/* the file, or the directory */
	char **dirs;			/* its -I, -iquote, -isystem directories inside the root, in order */
	size_t dirs_nr, dirs_alloc;
	size_t seq;			/* while loading: the order it was added in */
};

struct import_config {
	struct go_mod *gomods;		/* every go.mod, sorted by dir */
	size_t gomods_nr, gomods_alloc;
	struct js_pkg *pkgs;		/* every named package.json, sorted by name, then dir */
	size_t pkgs_nr, pkgs_alloc;
	struct ts_config *tsconfigs;	/* every tsconfig/jsconfig, sorted by dir (one per dir) */
	size_t tsconfigs_nr, tsconfigs_alloc;
	struct cc_incs *cc_files;	/* compile_commands.json per file, sorted by key */
	size_t cc_files_nr, cc_files_alloc;
	struct cc_incs *cc_dirs;	/* the same, per directory of those files */
	size_t cc_dirs_nr, cc_dirs_alloc;
	char **java_roots;		/* source roots: .../src/{main,test}/{java,kotlin}, and
					   directories a file's `package` line ends, sorted */
	size_t java_roots_nr, java_roots_alloc;
	char *java_dir_seen;		/* while loading: the directory of the last Java file read */
};

/*
 * Read the root-relative file rel through ctx->read or from the disk; 0 with a
 * malloc'd NUL-terminated *data, or -1 (quietly) when it cannot be read.
 */
int importcfg_read(const struct import_ctx *ctx, const char *rel, char **data, size_t *n);

/* Parse a go.mod's text (dir: its directory) into g.  Cannot fail. */
void importcfg_parse_gomod(struct go_mod *g, const char *dir, const char *text);
void importcfg_gomod_release(struct go_mod *g);

/*
 * Blank out the comments and trailing commas of JSON-with-comments text (as
 * tsconfig.json allows) in place, so that Jansson can parse it.
 */
void importcfg_strip_jsonc(char *s, size_t n);

/* The entry of cfg for the directory dir: a binary search; NULL when none. */
const struct go_mod *importcfg_gomod(const struct import_config *cfg, const char *dir);
const struct ts_config *importcfg_tsconfig(const struct import_config *cfg, const char *dir);
/*
 * The package of the repository that the bare specifier spec names: the
 * longest "name" that spec is or starts with ("name/sub"); *len its length.
 * The first by directory among namesakes.  NULL when none.
 */
const struct js_pkg *importcfg_pkg(const struct import_config *cfg, const char *spec, size_t *len);
const struct cc_incs *importcfg_cc(const struct cc_incs *v, size_t nr, const char *key);

#endif
