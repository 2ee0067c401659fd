/*
 * cmd/git-lazy.c: libgit2, loaded when ci-grep first calls it.
 *
 * libgit2 brings 13 shared libraries with it (Kerberos, libssh2, mbed TLS,
 * OpenSSL's libcrypto) and its init parses every CA certificate of the system:
 * 13 ms of a 60 ms indexed search on the Linux tree, paid by every ci-grep,
 * though most searches never ask git anything (a tree that is not a repository,
 * --trust-index).  ci-grep links this file instead of -lgit2: each function it
 * uses (through libcommon's walker) is defined here and forwards to the real
 * one, found with dlopen/dlsym on its first call.  The other commands link
 * libgit2 as usual.  LIBGIT2_SONAME comes from configure.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <git2.h>

extern const char *progname;

static void *lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_open(void)
{
	lib = dlopen(LIBGIT2_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s: cannot load libgit2: %s\n", progname, dlerror());
		exit(3);
	}
}

static void *sym(const char *name)
{
	void *p;

	pthread_once(&lib_once, lib_open);
	p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "%s: libgit2 (%s) has no %s\n", progname, LIBGIT2_SONAME, name);
		exit(3);
	}
	return p;
}

/* f: the real function behind name, looked up once (fn caches it) */
#define RESOLVE(f, fn, name)							\
	do {									\
		f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);			\
		if (!f) {							\
			f = (__typeof__(f))sym(#name);				\
			__atomic_store_n(&fn, f, __ATOMIC_RELEASE);		\
		}								\
	} while (0)

/* a function that returns a value, and one that does not */
#define LAZY(ret, name, params, args)						\
	ret name params								\
	{									\
		static ret (*fn) params;					\
		ret (*f) params;						\
		RESOLVE(f, fn, name);						\
		return f args;							\
	}
#define LAZY_VOID(name, params, args)						\
	void name params							\
	{									\
		static void (*fn) params;					\
		void (*f) params;						\
		RESOLVE(f, fn, name);						\
		f args;								\
	}

LAZY(int, git_libgit2_init, (void), ())
LAZY_VOID(git_buf_dispose, (git_buf *b), (b))
LAZY_VOID(git_error_clear, (void), ())
LAZY(const git_error *, git_error_last, (void), ())
LAZY(int, git_ignore_path_is_ignored, (int *ignored, git_repository *repo, const char *path),
     (ignored, repo, path))
LAZY(int, git_index_find_prefix, (size_t *at_pos, git_index *index, const char *prefix),
     (at_pos, index, prefix))
LAZY_VOID(git_index_free, (git_index *index), (index))
LAZY(const git_index_entry *, git_index_get_bypath, (git_index *index, const char *path, int stage),
     (index, path, stage))
LAZY_VOID(git_odb_free, (git_odb *db), (db))
LAZY(int, git_odb_read_header, (size_t *len, git_object_t *type, git_odb *db, const git_oid *id),
     (len, type, db, id))
LAZY(int, git_oid_cpy, (git_oid *out, const git_oid *src), (out, src))
LAZY(const char *, git_repository_commondir, (const git_repository *repo), (repo))
LAZY(int, git_repository_discover, (git_buf *out, const char *start, int across_fs, const char *ceiling_dirs),
     (out, start, across_fs, ceiling_dirs))
LAZY_VOID(git_repository_free, (git_repository *repo), (repo))
LAZY(int, git_repository_index, (git_index **out, git_repository *repo), (out, repo))
LAZY(int, git_repository_odb, (git_odb **out, git_repository *repo), (out, repo))
LAZY(int, git_repository_open, (git_repository **out, const char *path), (out, path))
LAZY(const char *, git_repository_path, (const git_repository *repo), (repo))
LAZY(const char *, git_repository_workdir, (const git_repository *repo), (repo))
LAZY(git_filemode_t, git_tree_entry_filemode, (const git_tree_entry *entry), (entry))
LAZY(const git_oid *, git_tree_entry_id, (const git_tree_entry *entry), (entry))
LAZY(const char *, git_tree_entry_name, (const git_tree_entry *entry), (entry))
LAZY(int, git_tree_walk, (const git_tree *tree, git_treewalk_mode mode, git_treewalk_cb callback, void *payload),
     (tree, mode, callback, payload))

/* ci-index's too */
LAZY_VOID(git_blob_free, (git_blob *blob), (blob))
LAZY(int, git_blob_lookup, (git_blob **blob, git_repository *repo, const git_oid *id), (blob, repo, id))
LAZY(const void *, git_blob_rawcontent, (const git_blob *blob), (blob))
LAZY(git_object_size_t, git_blob_rawsize, (const git_blob *blob), (blob))
LAZY_VOID(git_commit_free, (git_commit *commit), (commit))
LAZY(const git_oid *, git_commit_id, (const git_commit *commit), (commit))
LAZY(int, git_commit_tree, (git_tree **tree_out, const git_commit *commit), (tree_out, commit))
LAZY_VOID(git_object_free, (git_object *object), (object))
LAZY(int, git_object_peel, (git_object **peeled, const git_object *object, git_object_t target_type),
     (peeled, object, target_type))
LAZY(int, git_odb_hash, (git_oid *out, const void *data, size_t len, git_object_t type), (out, data, len, type))
LAZY(char *, git_oid_tostr, (char *out, size_t n, const git_oid *id), (out, n, id))
LAZY(int, git_reference_name_to_id, (git_oid *out, git_repository *repo, const char *name), (out, repo, name))
LAZY(int, git_repository_head_unborn, (git_repository *repo), (repo))
LAZY(int, git_repository_open_ext, (git_repository **out, const char *path, unsigned int flags, const char *ceiling),
     (out, path, flags, ceiling))
LAZY(int, git_revparse_single, (git_object **out, git_repository *repo, const char *spec), (out, repo, spec))
LAZY(int, git_tree_entry_bypath, (git_tree_entry **out, const git_tree *root, const char *path),
     (out, root, path))
LAZY_VOID(git_tree_entry_free, (git_tree_entry *entry), (entry))
LAZY(git_object_t, git_tree_entry_type, (const git_tree_entry *entry), (entry))
LAZY_VOID(git_tree_free, (git_tree *tree), (tree))

/* libgit2 never loaded: nothing to shut down (not a reason to load it) */
int git_libgit2_shutdown(void)
{
	static int (*fn)(void);
	int (*f)(void);

	if (!__atomic_load_n(&lib, __ATOMIC_ACQUIRE))
		return 0;
	RESOLVE(f, fn, git_libgit2_shutdown);
	return f();
}
