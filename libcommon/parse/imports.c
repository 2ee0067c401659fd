/*
 * imports.c: resolve an import's target to a file (or Go package directory) of
 * the repository, by each language's own rules for where modules live.
 *
 * The workload: ci-chunk calls import_resolve() once per import of every file,
 * from several threads, with the sorted list of the walk's files.  Most imports
 * name something outside the repository (the standard library, a package), so
 * a miss must be cheap: candidates are probed by binary search in the file set,
 * and the linear "unique suffix" scan (a last resort for C headers, Python,
 * Java and PHP) is done once per import for all its candidate suffixes at once.
 * Without a file set the probes are stat(2) calls under the root and there is no
 * suffix matching.
 *
 * Every candidate is normalised ("a/./b/../c" -> "a/c") and dropped when it
 * would leave the root, so nothing outside the root is ever returned.  The only
 * shared state is the cache of go.mod files, behind a mutex.
 */
#include "core/common.h"
#include "parse/imports.h"

#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>

/* ---- paths -------------------------------------------------------------------- */

/*
 * Append to out the normalised form of the '/'-separated path s: empty and "."
 * segments dropped, ".." segments cancelling the one before.  out may already hold
 * a normalised prefix (no trailing '/'), which ".." may consume.  Returns -1 when
 * a ".." would climb above the root; out is then garbage.
 */
static int norm_append(struct buf *out, const char *s)
{
	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (n == 0 || (n == 1 && s[0] == '.')) {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			char *slash;

			if (!out->len)
				return -1;
			slash = memrchr(out->buf, '/', out->len);
			buf_setlen(out, slash ? (size_t)(slash - out->buf) : 0);
		} else {
			if (out->len)
				buf_addch(out, '/');
			buf_add(out, s, n);
		}
		s += n;
		if (*s == '/')
			s++;
	}
	return 0;
}

/*
 * Set out to the normalised root-relative path dir/rel followed by suffix (which
 * must not contain '/').  dir is a normalised root-relative directory ("" for the
 * root).  Returns -1 when the path leaves the root or is empty.
 */
static int make_path(struct buf *out, const char *dir, const char *rel, const char *suffix)
{
	buf_reset(out);
	if (norm_append(out, dir) < 0 || norm_append(out, rel) < 0)
		return -1;
	if (suffix && *suffix) {
		const char *last = strrchr(rel, '/');

		/* "x/.." + ".rb" is not "<parent of x>.rb" */
		last = last ? last + 1 : rel;
		if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
			return -1;
		buf_addstr(out, suffix);
	}
	return out->len ? 0 : -1;
}

/* Set out to the directory part of the root-relative path p ("" at the root). */
static void dir_of(struct buf *out, const char *p)
{
	const char *slash = strrchr(p, '/');

	buf_reset(out);
	if (slash)
		buf_add(out, p, (size_t)(slash - p));
}

/* Cut the last segment off the directory in d (to "" at the top). */
static void dir_up(struct buf *d)
{
	char *slash;

	if (!d->len)
		return;	/* and never write to the shared buf_empty */
	slash = memrchr(d->buf, '/', d->len);
	buf_setlen(d, slash ? (size_t)(slash - d->buf) : 0);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/* 1 if p is a clean relative path: no leading '/', no "", "." or ".." segment. */
static int clean_relative(const char *p)
{
	if (!*p || *p == '/')
		return 0;
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p = *e ? e + 1 : e;
		if (*e && !*p)
			return 0;	/* trailing '/' */
	}
	return 1;
}

/* ---- the file set ------------------------------------------------------------- */

static int cmp_path(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* Index of the first path >= key in the sorted file set. */
static size_t lower_bound(const struct fileset *fs, const char *key)
{
	size_t lo = 0, hi = fs->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(fs->paths[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 1 if the normalised root-relative path exists (see import_file_exists()). */
static int exists(const struct import_ctx *ctx, const char *path)
{
	struct stat st;
	char *abs;
	int ret;

	if (ctx->files) {
		if (!ctx->files->nr)
			return 0;
		return bsearch(path, ctx->files->paths, ctx->files->nr,
			       sizeof(*ctx->files->paths), cmp_path) != NULL;
	}
	abs = xasprintf("%s/%s", ctx->root, path);
	ret = !stat(abs, &st) && S_ISREG(st.st_mode);
	free(abs);
	return ret;
}

int import_file_exists(const struct import_ctx *ctx, const char *path)
{
	struct buf b = BUF_INIT;
	int ret;

	ret = path && *path != '/' && !make_path(&b, "", path, NULL) && exists(ctx, b.buf);
	buf_release(&b);
	return ret;
}

/*
 * Probe dir/rel+suffix; returns the normalised path (malloc'd) when that file
 * exists, else NULL.  tmp is scratch space.
 */
static char *probe(const struct import_ctx *ctx, struct buf *tmp, const char *dir,
		   const char *rel, const char *suffix)
{
	if (make_path(tmp, dir, rel, suffix) < 0 || !exists(ctx, tmp->buf))
		return NULL;
	return xstrdup(tmp->buf);
}

/*
 * Suffix matching, the last resort: the one file of the set whose path is
 * sufs[j] or ends with "/" + sufs[j].  The suffixes come in groups of equal
 * rank (group[j], from 0, non-decreasing): the result is the file of the first
 * group that matches exactly one file, or NULL when none does (or there is no
 * file set).  Suffixes that are not clean relative paths are ignored.  One pass
 * over the set, whatever the number of suffixes (at most SUFFIX_MAX).
 *
 * NEEDSWORK: a pass over the whole set per import that is not found otherwise
 * (about 1 ms per 100k files); an index of the paths by basename, built once
 * per walk, would make it a lookup in very large trees.
 */
#define SUFFIX_MAX 8
static char *suffix_match(const struct import_ctx *ctx, const char *const *sufs,
			  const int *group, size_t nsufs)
{
	const struct fileset *fs = ctx->files;
	size_t lens[SUFFIX_MAX], count[SUFFIX_MAX] = { 0 }, found[SUFFIX_MAX];
	int any = 0;

	assert(nsufs <= SUFFIX_MAX);
	if (!fs || !nsufs)
		return NULL;
	for (size_t j = 0; j < nsufs; j++) {
		assert(group[j] >= 0 && (size_t)group[j] < SUFFIX_MAX);
		assert(!j || group[j] >= group[j - 1]);
		lens[j] = clean_relative(sufs[j]) ? strlen(sufs[j]) : 0;
		any |= lens[j] != 0;
	}
	if (!any)
		return NULL;
	for (size_t i = 0; i < fs->nr; i++) {
		const char *p = fs->paths[i];
		size_t n = strlen(p);
		int last_group = -1;

		for (size_t j = 0; j < nsufs; j++) {
			size_t m = lens[j];

			if (!m || n < m || group[j] == last_group ||
			    memcmp(p + n - m, sufs[j], m) || (n > m && p[n - m - 1] != '/'))
				continue;
			last_group = group[j];	/* a path counts once per group */
			count[group[j]]++;
			found[group[j]] = i;
		}
	}
	for (size_t j = 0; j < nsufs; j++)
		if (count[group[j]] == 1)
			return xstrdup(fs->paths[found[group[j]]]);
	return NULL;
}

/* The one file of the set that is suf or ends with "/" + suf, or NULL. */
static char *suffix_unique(const struct import_ctx *ctx, const char *suf)
{
	static const int group0[] = { 0 };

	return suffix_match(ctx, &suf, group0, 1);
}

/* Replace every sep in s (from offset from on) by '/'. */
static void seps_to_slashes(struct buf *b, size_t from, char sep)
{
	for (size_t i = from; i < b->len; i++)
		if (b->buf[i] == sep)
			b->buf[i] = '/';
}

/* ---- C and C++ ---------------------------------------------------------------- */

/* The headers of the C and C++ standard libraries and of POSIX, sorted. */
static const char *const c_std_headers[] = {
	"algorithm", "any", "array", "assert.h", "atomic", "bitset", "cassert", "cctype",
	"cerrno", "cfloat", "chrono", "cinttypes", "climits", "clocale", "cmath",
	"complex", "complex.h", "condition_variable", "csetjmp", "csignal", "cstdarg",
	"cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "ctype.h",
	"cwchar", "deque", "dirent.h", "dlfcn.h", "errno.h", "exception", "fcntl.h",
	"fenv.h", "filesystem", "float.h", "fnmatch.h", "forward_list", "fstream",
	"functional", "future", "glob.h", "grp.h", "iconv.h", "initializer_list",
	"inttypes.h", "iomanip", "ios", "iosfwd", "iostream", "iso646.h", "istream",
	"iterator", "langinfo.h", "libgen.h", "limits", "limits.h", "list", "locale",
	"locale.h", "map", "math.h", "memory", "mutex", "netdb.h", "new", "numeric",
	"optional", "ostream", "poll.h", "pthread.h", "pwd.h", "queue", "random",
	"ratio", "regex", "regex.h", "sched.h", "search.h", "semaphore.h", "set",
	"setjmp.h", "shared_mutex", "signal.h", "span", "spawn.h", "sstream", "stack",
	"stdalign.h", "stdarg.h", "stdatomic.h", "stdbool.h", "stddef.h", "stdexcept",
	"stdint.h", "stdio.h", "stdlib.h", "stdnoreturn.h", "streambuf", "string",
	"string.h", "string_view", "strings.h", "syslog.h", "system_error", "termios.h",
	"tgmath.h", "thread", "threads.h", "time.h", "tuple", "type_traits", "typeindex",
	"typeinfo", "uchar.h", "unistd.h", "unordered_map", "unordered_set", "utility",
	"utime.h", "valarray", "variant", "vector", "wchar.h", "wctype.h", "wordexp.h",
};

static int cmp_header(const void *a, const void *b)
{
	return strcmp(a, *(const char *const *)b);
}

/*
 * "x.h" and <x.h> alike (the quotes are gone by now): the including file's
 * directory, the root, include/ and src/, then a unique "/x.h" suffix -- but
 * not for a standard header (<signal.h> is the system's, not whichever
 * signal.h the repository has somewhere else).
 */
static char *resolve_c(const struct import_ctx *ctx, const char *from, const char *target)
{
	static const char *const dirs[] = { "", "include", "src" };
	struct buf dir = BUF_INIT, tmp = BUF_INIT;
	char *ret = NULL;

	if (*target == '/')
		goto done;
	dir_of(&dir, from);
	ret = probe(ctx, &tmp, dir.buf, target, NULL);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(dirs); i++)
		ret = probe(ctx, &tmp, dirs[i], target, NULL);
	if (!ret && !bsearch(target, c_std_headers, ARRAY_SIZE(c_std_headers),
			     sizeof(c_std_headers[0]), cmp_header))
		ret = suffix_unique(ctx, target);
done:
	buf_release(&dir);
	buf_release(&tmp);
	return ret;
}

/* ---- Python ------------------------------------------------------------------- */

/* mod (a/b/c, '/'-separated) under dir as a module file or a package. */
static char *probe_py(const struct import_ctx *ctx, struct buf *tmp, const char *dir,
		      const char *mod)
{
	char *ret;

	if (!*mod)
		return probe(ctx, tmp, dir, "__init__.py", NULL);
	ret = probe(ctx, tmp, dir, mod, ".py");
	if (!ret) {
		char *pkg = xasprintf("%s/__init__.py", mod);

		ret = probe(ctx, tmp, dir, pkg, NULL);
		free(pkg);
	}
	return ret;
}

/* 1 if the root-relative directory dir holds the file name. */
static int dir_has(const struct import_ctx *ctx, struct buf *tmp, const char *dir, const char *name)
{
	return !make_path(tmp, dir, name, NULL) && exists(ctx, tmp->buf);
}

/*
 * A file found by its suffix suf (the module a/b/c as "a/b/c.py" or
 * "a/b/c/__init__.py") is importable only when its top-level package a is a
 * regular package (a/__init__.py) of a multi-level name, or, for a one-level
 * name, a package directly under a project root (a directory with
 * pyproject.toml, setup.py or setup.cfg).  A lone "pathlib.py" deep in a
 * package (pytest's src/_pytest/pathlib.py) is not the standard library's
 * pathlib: a package's directory is not on sys.path.
 */
static int py_suffix_ok(const struct import_ctx *ctx, struct buf *tmp, const char *path,
			const char *suf)
{
	static const char *const markers[] = { "pyproject.toml", "setup.py", "setup.cfg" };
	size_t n = strlen(path), m = strlen(suf);
	const char *slash = strchr(suf, '/');
	char *base, *top;
	int ok = 0;

	if (n < m || strcmp(path + n - m, suf))
		return 0;
	base = xstrndup(path, n > m ? n - m - 1 : 0);	/* the directory on sys.path */
	if (slash && strcmp(slash, "/__init__.py")) {
		top = xstrndup(suf, (size_t)(slash - suf));
		char *init = xasprintf("%s/__init__.py", top);

		ok = dir_has(ctx, tmp, base, init);
		free(init);
		free(top);
	} else if (slash) {
		for (size_t i = 0; !ok && i < ARRAY_SIZE(markers); i++)
			ok = dir_has(ctx, tmp, base, markers[i]);
	}
	free(base);
	return ok;
}

/*
 * Absolute "a.b.c": a/b/c.py or a/b/c/__init__.py on the search path: the
 * root, src/ and lib/ (src layout), and the importing file's own directory when
 * that is not a package (a script's directory is on sys.path; a package's is
 * not, so `import pathlib` in pkg/x.py is the standard library even beside a
 * pkg/pathlib.py).  Namespace packages (directories without __init__.py) are
 * found the same way.  Then, unless strict, "a.b" (c may be a name in a.b);
 * then a/b/c (unless strict, then a/b) as a unique suffix accepted by
 * py_suffix_ok().  Relative ".x", "..p.x", ".": from the importing file's
 * package directory, one level up per extra dot; unless strict, "..p.x" may
 * name x in p.  A module found nowhere is outside the repository (the standard
 * library, a third-party package): NULL.
 */
static char *resolve_python_mode(const struct import_ctx *ctx, const char *from,
				 const char *target, int strict)
{
	static const char *const roots[] = { "", "src", "lib" };
	static const int groups[] = { 0, 0, 1, 1 };
	struct buf dir = BUF_INIT, mod = BUF_INIT, tmp = BUF_INIT;
	size_t dots = strspn(target, ".");
	char *sufs[4] = { NULL, NULL, NULL, NULL };
	size_t nsufs = 0;
	int script_dir;
	char *ret = NULL;

	buf_addstr(&mod, target + dots);
	seps_to_slashes(&mod, 0, '.');
	if (strchr(target + dots, '/') || (mod.len && !clean_relative(mod.buf)))
		goto done;
	dir_of(&dir, from);
	if (dots) {
		for (size_t i = 1; i < dots; i++) {
			if (!dir.len)
				goto done;	/* above the root */
			dir_up(&dir);
		}
		ret = probe_py(ctx, &tmp, dir.buf, mod.buf);
		if (!ret && !strict && strchr(mod.buf, '/')) {
			/* `from .a.b import c` where b is a name in a */
			dir_up(&mod);
			ret = probe_py(ctx, &tmp, dir.buf, mod.buf);
		}
		goto done;
	}
	if (!mod.len)
		goto done;
	script_dir = dir.len && !dir_has(ctx, &tmp, dir.buf, "__init__.py");
	for (int drop = 0; !ret && drop < 2; drop++) {
		for (size_t i = 0; !ret && i < ARRAY_SIZE(roots); i++)
			ret = probe_py(ctx, &tmp, roots[i], mod.buf);
		if (!ret && script_dir)
			ret = probe_py(ctx, &tmp, dir.buf, mod.buf);
		if (ret || drop)
			break;
		sufs[nsufs++] = xasprintf("%s.py", mod.buf);
		sufs[nsufs++] = xasprintf("%s/__init__.py", mod.buf);
		if (strict || !strchr(mod.buf, '/'))
			break;
		/* `import a.b.c` where c is a name in a.b */
		dir_up(&mod);
		sufs[nsufs++] = xasprintf("%s.py", mod.buf);
		sufs[nsufs++] = xasprintf("%s/__init__.py", mod.buf);
	}
	if (!ret) {
		ret = suffix_match(ctx, (const char *const *)sufs, groups, nsufs);
		if (ret) {
			int ok = 0;

			for (size_t j = 0; !ok && j < nsufs; j++)
				ok = py_suffix_ok(ctx, &tmp, ret, sufs[j]);
			if (!ok)
				free(ret), ret = NULL;
		}
	}
done:
	for (size_t i = 0; i < ARRAY_SIZE(sufs); i++)
		free(sufs[i]);
	buf_release(&dir);
	buf_release(&mod);
	buf_release(&tmp);
	return ret;
}

static char *resolve_python(const struct import_ctx *ctx, const char *from, const char *target)
{
	return resolve_python_mode(ctx, from, target, 0);
}

/* ---- JavaScript, TypeScript --------------------------------------------------- */

/*
 * Relative specifiers only ("./x", "../x", "." and "..", or "/x" from the root):
 * the exact file, then with each extension, then dir/index.*; "./x.js" may name
 * "x.ts" (TypeScript's convention for ES modules).  Anything else is a package.
 */
static char *resolve_js(const struct import_ctx *ctx, const char *from, const char *target)
{
	static const char *const exts[] = {
		".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", ".json",
	};
	static const char *const index[] = {
		"index.ts", "index.tsx", "index.js", "index.jsx", "index.mjs",
	};
	static const struct { const char *js, *ts[2]; } js_to_ts[] = {
		{ ".js", { ".ts", ".tsx" } },
		{ ".jsx", { ".tsx", NULL } },
		{ ".mjs", { ".mts", NULL } },
		{ ".cjs", { ".cts", NULL } },
	};
	struct buf dir = BUF_INIT, base = BUF_INIT, tmp = BUF_INIT;
	char *ret = NULL;

	if (*target == '/') {
		if (make_path(&base, "", target, NULL) < 0)
			goto done;
	} else if (!strcmp(target, ".") || !strcmp(target, "..") ||
		   !strncmp(target, "./", 2) || !strncmp(target, "../", 3)) {
		dir_of(&dir, from);
		if (make_path(&base, dir.buf, target, NULL) < 0)
			goto done;
	} else {
		goto done;	/* a package */
	}

	ret = probe(ctx, &tmp, "", base.buf, NULL);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(exts); i++)
		ret = probe(ctx, &tmp, "", base.buf, exts[i]);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(js_to_ts); i++) {
		size_t n = strlen(js_to_ts[i].js);

		if (!has_suffix(base.buf, js_to_ts[i].js) || base.len == n)
			continue;
		for (size_t k = 0; !ret && k < 2 && js_to_ts[i].ts[k]; k++) {
			buf_reset(&tmp);
			buf_add(&tmp, base.buf, base.len - n);
			buf_addstr(&tmp, js_to_ts[i].ts[k]);
			if (exists(ctx, tmp.buf))
				ret = xstrdup(tmp.buf);
		}
	}
	for (size_t i = 0; !ret && i < ARRAY_SIZE(index); i++)
		ret = probe(ctx, &tmp, base.buf, index[i], NULL);
done:
	buf_release(&dir);
	buf_release(&base);
	buf_release(&tmp);
	return ret;
}

/* ---- Go ----------------------------------------------------------------------- */

/* A go.mod file read once per process (or known to be missing). */
struct gomod {
	struct gomod *next;	/* the next cached go.mod */
	char *path;		/* absolute path of the go.mod */
	char *module;		/* its module path; NULL when missing or without one */
};

static pthread_mutex_t gomod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gomod *gomods;	/* never freed: one entry per go.mod looked at */

/*
 * The module path declared by the go.mod at path (absolute; rel from the root),
 * or NULL.  Quiet.
 */
static char *read_gomod(const struct import_ctx *ctx, const char *path, const char *rel)
{
	FILE *f = NULL;
	char *line = NULL, *ret = NULL, *data = NULL;
	size_t alloc = 0, n = 0;

	if (!ctx->read)
		f = fopen(path, "r");
	else if (ctx->read(ctx, rel, &data, &n) == 0 && n)
		f = fmemopen(data, n, "r");
	if (!f) {
		free(data);
		return NULL;
	}
	while (!ret && getline(&line, &alloc, f) >= 0) {
		char *p = line, *e;

		while (isspace((unsigned char)*p))
			p++;
		if (strncmp(p, "module", 6) || !isspace((unsigned char)p[6]))
			continue;
		p += 7;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '"' || *p == '`') {
			e = strchr(p + 1, *p);
			p++;
		} else {
			char *comment;

			e = p + strcspn(p, " \t\r\n");
			comment = strstr(p, "//");
			if (comment && comment < e)
				e = comment;
		}
		if (e && e > p)
			ret = xstrndup(p, (size_t)(e - p));
	}
	free(line);
	fclose(f);
	free(data);
	return ret;
}

/* The module path of the go.mod at the absolute path; cached.  Thread-safe. */
static const char *gomod_module(const struct import_ctx *ctx, const char *path, const char *rel)
{
	struct gomod *g;

	pthread_mutex_lock(&gomod_lock);
	for (g = gomods; g; g = g->next)
		if (!strcmp(g->path, path))
			break;
	if (!g) {
		g = xmalloc(sizeof(*g));
		g->path = xstrdup(path);
		g->module = read_gomod(ctx, path, rel);
		g->next = gomods;
		gomods = g;
	}
	pthread_mutex_unlock(&gomod_lock);
	return g->module;	/* entries are immutable once added */
}

/* 1 if the root-relative directory dir ("" for the root) holds a .go file. */
static int dir_has_go(const struct import_ctx *ctx, const char *dir)
{
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (ctx->files) {
		const struct fileset *fs = ctx->files;
		char *prefix = *dir ? xasprintf("%s/", dir) : xstrdup("");
		size_t n = strlen(prefix);

		for (size_t i = lower_bound(fs, prefix); !ret && i < fs->nr; i++) {
			const char *p = fs->paths[i];

			if (strncmp(p, prefix, n))
				break;
			ret = !strchr(p + n, '/') && has_suffix(p + n, ".go");
		}
		free(prefix);
		return ret;
	}
	{
		char *abs = *dir ? xasprintf("%s/%s", ctx->root, dir) : xstrdup(ctx->root);

		d = opendir(abs);
		while (d && !ret && (de = readdir(d))) {
			struct stat st;
			char *f;

			if (!has_suffix(de->d_name, ".go"))
				continue;
			f = xasprintf("%s/%s", abs, de->d_name);
			ret = !stat(f, &st) && S_ISREG(st.st_mode);
			free(f);
		}
		if (d)
			closedir(d);
		free(abs);
	}
	return ret;
}

/*
 * An import path under the module path of the nearest go.mod (from the
 * importing file's directory up to the root) names a directory of that module:
 * returned when it holds a .go file ("." for a module at the root itself).
 */
static char *resolve_go(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct buf dir = BUF_INIT, tmp = BUF_INIT;
	const char *module = NULL;
	char *ret = NULL;

	dir_of(&dir, from);
	for (;;) {
		char *gm = dir.len ? xasprintf("%s/%s/go.mod", ctx->root, dir.buf)
				   : xasprintf("%s/go.mod", ctx->root);
		char *rel = dir.len ? xasprintf("%s/go.mod", dir.buf) : xstrdup("go.mod");

		module = gomod_module(ctx, gm, rel);
		free(gm);
		free(rel);
		if (module || !dir.len)
			break;
		dir_up(&dir);
	}
	if (module) {
		size_t n = strlen(module);

		if (!strncmp(target, module, n) && (target[n] == '/' || !target[n]) &&
		    !make_path(&tmp, dir.buf, target[n] ? target + n + 1 : "", NULL) &&
		    (!target[n] || clean_relative(target + n + 1)) &&
		    dir_has_go(ctx, tmp.buf))
			ret = xstrdup(tmp.buf);
		else if (!strcmp(target, module) && !dir.len && dir_has_go(ctx, ""))
			ret = xstrdup(".");
	}
	buf_release(&dir);
	buf_release(&tmp);
	return ret;
}

/* ---- Rust --------------------------------------------------------------------- */

/*
 * The file defining the module whose directory is moddir and whose path below
 * it is segs (nseg segments; '/'-separated in segs): moddir/segs.rs or
 * moddir/segs/mod.rs; for no segments, the module's own file: moddir.rs,
 * moddir/mod.rs, or lib.rs/main.rs when moddir is the crate's src.
 */
static char *probe_rs(const struct import_ctx *ctx, struct buf *tmp, const char *moddir,
		      const char *segs, const char *crate_src)
{
	char *ret;

	if (*segs) {
		char *mod = xasprintf("%s/mod.rs", segs);

		ret = probe(ctx, tmp, moddir, segs, ".rs");
		if (!ret)
			ret = probe(ctx, tmp, moddir, mod, NULL);
		free(mod);
		return ret;
	}
	if (!strcmp(moddir, crate_src)) {
		ret = probe(ctx, tmp, moddir, "lib.rs", NULL);
		if (!ret)
			ret = probe(ctx, tmp, moddir, "main.rs", NULL);
		return ret;
	}
	if (!*moddir)
		return NULL;
	ret = probe(ctx, tmp, "", moddir, ".rs");
	if (!ret)
		ret = probe(ctx, tmp, moddir, "mod.rs", NULL);
	return ret;
}

/*
 * "crate::a::b" from the crate's src/ (the nearest ancestor directory of the
 * importing file named src, else src/ at the root), "self::a" from the importing
 * file's module directory, "super::a" from its parent's; the last segment may be
 * an item of the module before it.  A path without those prefixes is tried from
 * the importing module (a child module) and is otherwise an external crate.  A
 * single name is also `mod foo;`: foo.rs or foo/mod.rs in the module directory,
 * then beside the file.
 */
static char *resolve_rust(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct buf dir = BUF_INIT, moddir = BUF_INIT, crate = BUF_INIT, segs = BUF_INIT;
	struct buf tmp = BUF_INIT;
	const char *base = strrchr(from, '/'), *p = target;
	size_t nseg;
	int rooted = 0;
	char *ret = NULL;

	base = base ? base + 1 : from;
	dir_of(&dir, from);

	/* the crate's src directory: the deepest "src" component of dir */
	buf_addstr(&crate, "src");
	for (const char *q = dir.buf; *q; ) {
		const char *e = strchrnul(q, '/');

		if (e - q == 3 && !memcmp(q, "src", 3)) {
			buf_reset(&crate);
			buf_add(&crate, dir.buf, (size_t)(e - dir.buf));
		}
		q = *e ? e + 1 : e;
	}

	/* the importing file's own module directory */
	buf_addstr(&moddir, dir.buf);
	if (strcmp(base, "mod.rs") && strcmp(base, "lib.rs") && strcmp(base, "main.rs")) {
		if (moddir.len)
			buf_addch(&moddir, '/');
		buf_add(&moddir, base, has_suffix(base, ".rs") ? strlen(base) - 3 : strlen(base));
	}

	if (!strncmp(p, "crate::", 7) || !strcmp(p, "crate")) {
		buf_reset(&moddir);
		buf_addstr(&moddir, crate.buf);
		p += p[5] ? 7 : 5;
		rooted = 1;
	} else if (!strncmp(p, "self::", 6) || !strcmp(p, "self")) {
		p += p[4] ? 6 : 4;
		rooted = 1;
	} else if (!strncmp(p, "super::", 7) || !strcmp(p, "super")) {
		while (!strncmp(p, "super::", 7) || !strcmp(p, "super")) {
			if (!moddir.len || !strcmp(moddir.buf, crate.buf))
				goto done;	/* above the crate */
			dir_up(&moddir);
			p += p[5] ? 7 : 5;
		}
		rooted = 1;
	} else if (!strncmp(p, "::", 2)) {
		goto done;	/* an external crate */
	}

	/* segs = the rest, '/'-separated */
	for (nseg = 0; *p; nseg++) {
		const char *e = strstr(p, "::");
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (!n || memchr(p, '/', n) || (n == 1 && *p == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			goto done;
		if (segs.len)
			buf_addch(&segs, '/');
		buf_add(&segs, p, n);
		p += n + (e ? 2 : 0);
	}

	if (!rooted && nseg == 1) {
		/* `mod foo;` (or `use foo;`): the module directory, then beside the file */
		ret = probe_rs(ctx, &tmp, moddir.buf, segs.buf, crate.buf);
		if (!ret)
			ret = probe_rs(ctx, &tmp, dir.buf, segs.buf, crate.buf);
		goto done;
	}
	ret = probe_rs(ctx, &tmp, moddir.buf, segs.buf, crate.buf);
	if (!ret && (rooted ? nseg >= 1 : nseg >= 2)) {
		/* the last segment is an item of the module before it */
		dir_up(&segs);
		ret = probe_rs(ctx, &tmp, moddir.buf, segs.buf, crate.buf);
	}
done:
	buf_release(&dir);
	buf_release(&moddir);
	buf_release(&crate);
	buf_release(&segs);
	buf_release(&tmp);
	return ret;
}

/* ---- Java --------------------------------------------------------------------- */

/*
 * "a.b.C" is a/b/C.java under a source root: first one of the importing file's
 * ancestor directories, then a unique suffix.  "a.b.C.m" (a static import, a
 * nested class) falls back to a/b/C.java when C looks like a class (capitalised).
 * "a.b.*" imports a package: NULL.
 */
static char *resolve_java(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct buf dir = BUF_INIT, rel = BUF_INIT, tmp = BUF_INIT;
	char *sufs[SUFFIX_MAX];
	int groups[SUFFIX_MAX];
	size_t nsufs = 0;
	char *ret = NULL;

	if (has_suffix(target, ".*") || strchr(target, '/'))
		goto done;
	buf_addstr(&rel, target);
	seps_to_slashes(&rel, 0, '.');
	if (!clean_relative(rel.buf))
		goto done;
	/* a/b/C/m.java, a/b/C.java: while what is left ends in a class name */
	for (;;) {
		char *last;

		sufs[nsufs] = xasprintf("%s.java", rel.buf);
		groups[nsufs] = (int)nsufs;
		nsufs++;
		last = memrchr(rel.buf, '/', rel.len);
		if (!last || nsufs == SUFFIX_MAX)
			break;
		buf_setlen(&rel, (size_t)(last - rel.buf));
		last = memrchr(rel.buf, '/', rel.len);
		if (!isupper((unsigned char)(last ? last[1] : rel.buf[0])))
			break;
	}
	/* source roots: the importing file's directory and its ancestors */
	for (size_t i = 0; !ret && i < nsufs; i++) {
		dir_of(&dir, from);
		for (;;) {
			ret = probe(ctx, &tmp, dir.buf, sufs[i], NULL);
			if (ret || !dir.len)
				break;
			dir_up(&dir);
		}
	}
	if (!ret)
		ret = suffix_match(ctx, (const char *const *)sufs, groups, nsufs);
	for (size_t i = 0; i < nsufs; i++)
		free(sufs[i]);
done:
	buf_release(&dir);
	buf_release(&rel);
	buf_release(&tmp);
	return ret;
}

/* ---- Ruby, PHP, shell --------------------------------------------------------- */

/*
 * The query cannot tell require from require_relative, so: beside the importing
 * file first, then lib/ and the root; ".rb" added when missing.
 */
static char *resolve_ruby(const struct import_ctx *ctx, const char *from, const char *target)
{
	static const char *const dirs[] = { "lib", "" };
	const char *ext = has_suffix(target, ".rb") ? "" : ".rb";
	struct buf dir = BUF_INIT, tmp = BUF_INIT;
	char *ret = NULL;

	if (*target == '/' || *target == '~')
		goto done;
	dir_of(&dir, from);
	ret = probe(ctx, &tmp, dir.buf, target, ext);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(dirs); i++)
		ret = probe(ctx, &tmp, dirs[i], target, ext);
done:
	buf_release(&dir);
	buf_release(&tmp);
	return ret;
}

/*
 * A namespace ("A\B\C", or a bare name without '/' or '.') is the file
 * A/B/C.php: at the root, then as a unique suffix, then B/C.php as a unique
 * suffix (a PSR-4 root maps the prefix A to a directory such as src/).
 * Otherwise a path: "/x.php" is `__DIR__ . '/x.php'`, from the file's
 * directory; a relative path is tried from the file's directory, then the root.
 */
static char *resolve_php(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct buf dir = BUF_INIT, tmp = BUF_INIT, rel = BUF_INIT;
	char *ret = NULL;

	dir_of(&dir, from);
	if (strchr(target, '\\') || (!strchr(target, '/') && !strchr(target, '.'))) {
		buf_addstr(&rel, target + strspn(target, "\\"));
		seps_to_slashes(&rel, 0, '\\');
		buf_addstr(&rel, ".php");
		if (!clean_relative(rel.buf))
			goto done;
		ret = probe(ctx, &tmp, "", rel.buf, NULL);
		if (!ret) {
			/* a PSR-4 root maps the vendor prefix to a directory: App\X -> src/X */
			static const int groups[] = { 0, 1 };
			const char *sufs[2];
			const char *slash = strchr(rel.buf, '/');

			sufs[0] = rel.buf;
			sufs[1] = slash && strchr(slash + 1, '/') ? slash + 1 : "";
			ret = suffix_match(ctx, sufs, groups, 2);
		}
		goto done;
	}
	ret = probe(ctx, &tmp, dir.buf, target, NULL);
	if (!ret && *target != '/')
		ret = probe(ctx, &tmp, "", target, NULL);
done:
	buf_release(&dir);
	buf_release(&tmp);
	buf_release(&rel);
	return ret;
}

/* source/. of a path: beside the file, then from the root. */
static char *resolve_shell(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct buf dir = BUF_INIT, tmp = BUF_INIT;
	char *ret = NULL;

	if (*target != '/' && *target != '~') {
		dir_of(&dir, from);
		ret = probe(ctx, &tmp, dir.buf, target, NULL);
		if (!ret)
			ret = probe(ctx, &tmp, "", target, NULL);
	}
	buf_release(&dir);
	buf_release(&tmp);
	return ret;
}

/* ---- dispatch ----------------------------------------------------------------- */

static const struct {
	const char *lang;
	char *(*resolve)(const struct import_ctx *ctx, const char *from, const char *target);
} resolvers[] = {
	{ "c", resolve_c },
	{ "cpp", resolve_c },
	{ "python", resolve_python },
	{ "javascript", resolve_js },
	{ "typescript", resolve_js },
	{ "tsx", resolve_js },
	{ "go", resolve_go },
	{ "rust", resolve_rust },
	{ "java", resolve_java },
	{ "ruby", resolve_ruby },
	{ "php", resolve_php },
	{ "bash", resolve_shell },
	/* csharp: namespaces are not files */
};

char *import_resolve(const struct import_ctx *ctx, const char *lang, const char *from,
		     const char *target)
{
	if (!ctx || !lang || !from || !target || !*target || *from == '/')
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(resolvers); i++) {
		char *ret;

		if (strcmp(resolvers[i].lang, lang))
			continue;
		ret = resolvers[i].resolve(ctx, from, target);
		if (ret && !strcmp(ret, from)) {
			/* `use self::item`, `from . import x` in __init__.py: not an edge */
			free(ret);
			ret = NULL;
		}
		return ret;
	}
	return NULL;
}

char *import_resolve_member(const struct import_ctx *ctx, const char *lang, const char *from,
			    const char *module, const char *name, char **target)
{
	char *t, *ret;

	*target = NULL;
	if (!ctx || !lang || !from || !module || !name || !*module || !*name || *from == '/' ||
	    strcmp(lang, "python") || strchr(name, '.') || !strcmp(name, "*"))
		return NULL;
	t = module[strlen(module) - 1] == '.' ? xasprintf("%s%s", module, name)
					      : xasprintf("%s.%s", module, name);
	ret = resolve_python_mode(ctx, from, t, 1);
	if (ret && !strcmp(ret, from)) {
		/* `from pkg import me` in pkg/me.py: a module, but no edge */
		free(ret);
		*target = t;
		return NULL;
	}
	if (ret)
		*target = t;
	else
		free(t);
	return ret;
}
