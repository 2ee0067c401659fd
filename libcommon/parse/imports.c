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
 * would leave the root, so nothing outside the root is ever returned.  The
 * configuration files (importcfg.c) are read once, before, into ctx->config,
 * which the threads only read: there is no shared mutable state.
 */
#include "core/common.h"
#include "parse/imports.h"
#include "parse/importcfg.h"

#include <ctype.h>
#include <dirent.h>
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
 * The include directories compile_commands.json gives the file from: its own
 * entry's, else those of the entries of its directory (a header has no entry
 * of its own).  NULL when there are none.
 */
static const struct cc_incs *c_incs(const struct import_ctx *ctx, const char *from)
{
	const struct import_config *cfg = ctx->config;
	const struct cc_incs *inc;
	struct buf dir = BUF_INIT;

	if (!cfg || !cfg->cc_files_nr)
		return NULL;
	inc = importcfg_cc(cfg->cc_files, cfg->cc_files_nr, from);
	if (!inc) {
		dir_of(&dir, from);
		inc = importcfg_cc(cfg->cc_dirs, cfg->cc_dirs_nr, dir.buf);
		buf_release(&dir);
	}
	return inc;
}

/*
 * "x.h" and <x.h> alike (the quotes are gone by now): the including file's
 * directory, the -I/-iquote/-isystem directories of compile_commands.json (see
 * c_incs()), the root, include/ and src/, then a unique "/x.h" suffix -- but
 * not for a standard header (<signal.h> is the system's, not whichever
 * signal.h the repository has somewhere else).
 */
static char *resolve_c(const struct import_ctx *ctx, const char *from, const char *target)
{
	static const char *const dirs[] = { "", "include", "src" };
	struct buf dir = BUF_INIT, tmp = BUF_INIT;
	const struct cc_incs *inc;
	char *ret = NULL;

	if (*target == '/')
		goto done;
	dir_of(&dir, from);
	ret = probe(ctx, &tmp, dir.buf, target, NULL);
	inc = ret ? NULL : c_incs(ctx, from);
	for (size_t i = 0; !ret && inc && i < inc->dirs_nr; i++)
		ret = probe(ctx, &tmp, inc->dirs[i], target, NULL);
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
 * base (a normalised root-relative path) as a module: the exact file, then
 * with each extension, then "x.js" as "x.ts" (TypeScript's convention for ES
 * modules), then base/index.*.
 */
static char *probe_js(const struct import_ctx *ctx, struct buf *tmp, const char *base)
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
	size_t len = strlen(base);
	char *ret = *base ? probe(ctx, tmp, "", base, NULL) : NULL;

	for (size_t i = 0; !ret && *base && i < ARRAY_SIZE(exts); i++)
		ret = probe(ctx, tmp, "", base, exts[i]);
	for (size_t i = 0; !ret && i < ARRAY_SIZE(js_to_ts); i++) {
		size_t n = strlen(js_to_ts[i].js);

		if (!has_suffix(base, js_to_ts[i].js) || len == n)
			continue;
		for (size_t k = 0; !ret && k < 2 && js_to_ts[i].ts[k]; k++) {
			buf_reset(tmp);
			buf_add(tmp, base, len - n);
			buf_addstr(tmp, js_to_ts[i].ts[k]);
			if (exists(ctx, tmp->buf))
				ret = xstrdup(tmp->buf);
		}
	}
	for (size_t i = 0; !ret && i < ARRAY_SIZE(index); i++)
		ret = probe(ctx, tmp, base, index[i], NULL);
	return ret;
}

/* dir/rel (rel relative to dir, "*" in it replaced by star when star) as a module. */
static char *probe_js_in(const struct import_ctx *ctx, struct buf *tmp, const char *dir,
			 const char *rel, const char *star)
{
	struct buf sub = BUF_INIT, base = BUF_INIT;
	const char *st = star ? strchr(rel, '*') : NULL;
	char *ret = NULL;

	if (st) {
		buf_add(&sub, rel, (size_t)(st - rel));
		buf_addstr(&sub, star);
		buf_addstr(&sub, st + 1);
	} else {
		buf_addstr(&sub, rel);
	}
	if (*sub.buf != '/' && !strchr(sub.buf, '\\') && !make_path(&base, dir, sub.buf, NULL))
		ret = probe_js(ctx, tmp, base.buf);
	else if (!strcmp(sub.buf, ".") || !*sub.buf)
		ret = probe_js(ctx, tmp, dir);
	buf_release(&sub);
	buf_release(&base);
	return ret;
}

/*
 * The key of the object map that matches spec, Node's and TypeScript's way:
 * the key itself, else the pattern "pre*post" with the longest "pre" that
 * matches (*star then gets what "*" stands for, malloc'd), else (prefix_dirs)
 * the longest "dir/" key that spec starts with (*star the rest).  NULL if none.
 */
static json_t *match_pattern(json_t *map, const char *spec, int prefix_dirs, char **star)
{
	const char *key, *best_key = NULL;
	json_t *v, *best = json_object_get(map, spec);
	size_t best_n = 0, n = strlen(spec);

	*star = NULL;
	if (best)
		return best;
	json_object_foreach(map, key, v) {
		const char *st = strchr(key, '*');
		size_t pre = st ? (size_t)(st - key) : strlen(key);
		size_t post = st ? strlen(st + 1) : 0;

		if (st ? (n < pre + post || strncmp(spec, key, pre) || strcmp(spec + n - post, st + 1))
		       : (!prefix_dirs || !has_suffix(key, "/") || strncmp(spec, key, pre)))
			continue;
		if (!best || pre > best_n) {
			best = v;
			best_n = pre;
			best_key = key;
		}
	}
	if (best) {
		const char *st = strchr(best_key, '*');

		*star = st ? xstrndup(spec + best_n, n - best_n - strlen(st + 1))
			   : xstrdup(spec + best_n);
	}
	return best;
}

#define JS_EXPORTS_DEPTH 8	/* nesting of conditions followed */

/*
 * An "exports" value -- a "./path" string, an array tried in order, an object
 * of conditions (import, require, module, node, default, types, in the
 * object's order), null -- as a file of the package at dir, or NULL.
 */
static char *js_exports_target(const struct import_ctx *ctx, struct buf *tmp, const char *dir,
			       json_t *v, const char *star, int depth)
{
	static const char *const conds[] = { "import", "require", "module", "node", "default", "types" };
	char *ret = NULL;

	if (depth > JS_EXPORTS_DEPTH)
		return NULL;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);

		return strncmp(s, "./", 2) ? NULL : probe_js_in(ctx, tmp, dir, s, star);
	}
	for (size_t i = 0; !ret && json_is_array(v) && i < json_array_size(v); i++)
		ret = js_exports_target(ctx, tmp, dir, json_array_get(v, i), star, depth + 1);
	if (json_is_object(v)) {
		const char *key;
		json_t *c;

		json_object_foreach(v, key, c) {
			for (size_t i = 0; !ret && i < ARRAY_SIZE(conds); i++)
				if (!strcmp(key, conds[i]))
					ret = js_exports_target(ctx, tmp, dir, c, star, depth + 1);
			if (ret)
				break;
		}
	}
	return ret;
}

/*
 * sub ("." or "./x") of the package pkg through its "exports", or NULL; *excluded
 * set when "exports" maps sub to null (the package hides it).
 */
static char *js_exports(const struct import_ctx *ctx, struct buf *tmp, const struct js_pkg *pkg,
			const char *sub, int *excluded)
{
	json_t *ex = json_object_get(pkg->json, "exports");
	const char *key;
	json_t *v;
	int subpaths = 0;
	char *star = NULL, *ret;

	if (!ex)
		return NULL;
	json_object_foreach(ex, key, v)
		subpaths |= *key == '.';
	if (!subpaths)	/* a string, an array, conditions: the package's "." */
		return strcmp(sub, ".") ? NULL : js_exports_target(ctx, tmp, pkg->dir, ex, NULL, 0);
	v = match_pattern(ex, sub, 1, &star);
	*excluded = json_is_null(v);
	ret = v ? js_exports_target(ctx, tmp, pkg->dir, v, star, 0) : NULL;
	free(star);
	return ret;
}

/*
 * A bare specifier naming a package of the repository: the package.json with
 * that "name" (the longest that spec is or starts with, "name/sub").  Its
 * "exports" first; then, for the package itself, "module", "main", "types",
 * "typings", "source"; then the path in the package's directory (index files
 * included), then in its src/ (a package built to dist/ whose sources the
 * repository holds): an "exports" target missing from the repository (a build
 * output) falls through to those, but a subpath "exports" maps to null does not.  NULL when no package of the repository has the name: a
 * third-party package.
 */
static char *resolve_js_package(const struct import_ctx *ctx, struct buf *tmp, const char *spec)
{
	static const char *const fields[] = { "module", "main", "types", "typings", "source" };
	const struct js_pkg *pkg;
	size_t best;
	int excluded = 0;
	char *sub, *ret;

	if (!ctx->config || !(pkg = importcfg_pkg(ctx->config, spec, &best)))
		return NULL;
	sub = spec[best] ? xasprintf(".%s", spec + best) : xstrdup(".");
	ret = js_exports(ctx, tmp, pkg, sub, &excluded);
	if (excluded)
		goto done;
	for (size_t i = 0; !ret && !spec[best] && i < ARRAY_SIZE(fields); i++) {
		const char *f = json_string_value(json_object_get(pkg->json, fields[i]));

		if (f && *f != '/')
			ret = probe_js_in(ctx, tmp, pkg->dir, f, NULL);
	}
	if (!ret)
		ret = probe_js_in(ctx, tmp, pkg->dir, sub, NULL);
	if (!ret) {
		char *src = xasprintf("src/%s", sub);

		ret = probe_js_in(ctx, tmp, pkg->dir, src, NULL);
		free(src);
	}
done:
	free(sub);
	return ret;
}

/*
 * A bare specifier through the tsconfig.json (or jsconfig.json) nearest above
 * the importing file: its "paths" (the matching pattern, each target in
 * order, relative to baseUrl or else to the config that has "paths"), then
 * its "baseUrl".
 */
static char *resolve_js_tsconfig(const struct import_ctx *ctx, struct buf *tmp, const char *from,
				 const char *spec)
{
	const struct ts_config *t = NULL;
	struct buf dir = BUF_INIT;
	char *star = NULL, *ret = NULL;
	json_t *v;

	if (!ctx->config || !ctx->config->tsconfigs_nr)
		return NULL;
	dir_of(&dir, from);
	while (!(t = importcfg_tsconfig(ctx->config, dir.buf)) && dir.len)
		dir_up(&dir);
	buf_release(&dir);
	if (!t)
		return NULL;
	v = t->paths ? match_pattern(t->paths, spec, 0, &star) : NULL;
	for (size_t i = 0; !ret && json_is_array(v) && i < json_array_size(v); i++) {
		const char *s = json_string_value(json_array_get(v, i));

		if (s)
			ret = probe_js_in(ctx, tmp, t->paths_base, s, star ? star : "");
	}
	free(star);
	if (!ret && t->base_url)
		ret = probe_js_in(ctx, tmp, t->base_url, spec, NULL);
	return ret;
}

/*
 * Relative specifiers ("./x", "../x", "." and "..", or "/x" from the root):
 * probe_js().  A bare specifier: the nearest tsconfig's "paths" and "baseUrl"
 * (resolve_js_tsconfig()), then a package of the repository
 * (resolve_js_package()).  Anything else is a third-party package: NULL.
 */
static char *resolve_js(const struct import_ctx *ctx, const char *from, const char *target)
{
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
		ret = resolve_js_tsconfig(ctx, &tmp, from, target);
		if (!ret)
			ret = resolve_js_package(ctx, &tmp, target);
		goto done;
	}
	ret = probe_js(ctx, &tmp, base.buf);
done:
	buf_release(&dir);
	buf_release(&base);
	buf_release(&tmp);
	return ret;
}

/* ---- Go ----------------------------------------------------------------------- */

/* 1 if the root-relative directory dir ("" for the root) holds a file ending in ext. */
static int dir_has_ext(const struct import_ctx *ctx, const char *dir, const char *ext)
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
			ret = !strchr(p + n, '/') && has_suffix(p + n, ext);
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

			if (!has_suffix(de->d_name, ext))
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
 * The nearest go.mod from the directory dir up to the root: from ctx->config,
 * or, without one, read into *own (released by the caller).  NULL when none
 * declares a module.
 */
static const struct go_mod *go_nearest(const struct import_ctx *ctx, const char *from,
				       struct go_mod *own)
{
	struct buf dir = BUF_INIT;
	const struct go_mod *g = NULL;

	dir_of(&dir, from);
	for (;;) {
		if (ctx->config) {
			g = importcfg_gomod(ctx->config, dir.buf);
		} else {
			char *rel = dir.len ? xasprintf("%s/go.mod", dir.buf) : xstrdup("go.mod");
			char *data;
			size_t n;

			if (importcfg_read(ctx, rel, &data, &n) == 0) {
				importcfg_parse_gomod(own, dir.buf, data);
				g = own;
				free(data);
			}
			free(rel);
		}
		if ((g && g->module) || !dir.len)
			break;
		if (g == own)
			importcfg_gomod_release(own);
		g = NULL;
		dir_up(&dir);
	}
	buf_release(&dir);
	if (g && !g->module) {
		if (g == own)
			importcfg_gomod_release(own);
		g = NULL;
	}
	return g;
}

/* The length of prefix when target is prefix or prefix/..., else 0. */
static size_t go_prefix(const char *target, const char *prefix)
{
	size_t n = strlen(prefix);

	return n && !strncmp(target, prefix, n) && (target[n] == '/' || !target[n]) ? n : 0;
}

/* dir/rest (rest after the n characters of a module path) when it holds .go files. */
static char *go_dir(const struct import_ctx *ctx, const char *dir, const char *target, size_t n)
{
	struct buf tmp = BUF_INIT;
	const char *rest = target[n] ? target + n + 1 : "";
	char *ret = NULL;

	if ((!*rest || clean_relative(rest)) && !make_path(&tmp, dir, rest, NULL) &&
	    dir_has_ext(ctx, tmp.buf, ".go"))
		ret = xstrdup(tmp.buf);
	else if (!*rest && !*dir && dir_has_ext(ctx, "", ".go"))
		ret = xstrdup(".");
	buf_release(&tmp);
	return ret;
}

/*
 * An import path names a package directory.  In order: a `replace` of the
 * importing module's go.mod (the nearest one above the importing file) that
 * points to a local directory, by the longest matching module path; then the
 * module of the repository (any go.mod: nested modules, a workspace of
 * several) whose module path is the longest prefix of the import path, the
 * nearest go.mod's module first.  Returned when the directory holds a .go file
 * ("." for the root).
 */
static char *resolve_go(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct go_mod own = { 0 };
	const struct go_mod *g = go_nearest(ctx, from, &own);
	const struct go_replace *rep = NULL;
	const struct go_mod *best = NULL;
	size_t n, best_n = 0;
	char *ret = NULL;

	for (size_t i = 0; g && i < g->replaces_nr; i++)
		if ((n = go_prefix(target, g->replaces[i].old)) > best_n)
			best_n = n, rep = &g->replaces[i];
	if (rep)
		ret = go_dir(ctx, rep->dir, target, best_n);
	if (!ret && g && (n = go_prefix(target, g->module)))
		best = g, best_n = n;
	else
		best_n = 0;
	for (size_t i = 0; !ret && ctx->config && i < ctx->config->gomods_nr; i++) {
		const struct go_mod *m = &ctx->config->gomods[i];

		if (m->module && (n = go_prefix(target, m->module)) > best_n)
			best = m, best_n = n;
	}
	if (!ret && best)
		ret = go_dir(ctx, best->dir, target, best_n);
	if (g == &own)
		importcfg_gomod_release(&own);
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

/* Length of the common directory prefix of the root-relative paths a and b. */
static size_t common_dirs(const char *a, const char *b)
{
	size_t n = 0;

	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i] == '/')
			n = i + 1;
	return n;
}

/*
 * rel (a class's path without extension, or a package directory when pkg)
 * under a source root: the importing file's ancestor directories, nearest
 * first, then the source roots of ctx->config (src/main/java and its kin),
 * the one sharing the longest directory prefix with the importing file first.
 */
static char *java_probe_roots(const struct import_ctx *ctx, struct buf *tmp, const char *from,
			      const char *rel, int pkg)
{
	static const char *const exts[] = { ".java", ".kt" };
	const struct import_config *cfg = ctx->config;
	struct buf dir = BUF_INIT;
	char *ret = NULL;
	size_t best_n = 0;
	int ancestor;

	dir_of(&dir, from);
	for (;;) {
		for (size_t e = 0; !ret && e < ARRAY_SIZE(exts); e++)
			ret = pkg ? (!make_path(tmp, dir.buf, rel, NULL) && dir_has_ext(ctx, tmp->buf, exts[e])
				     ? xstrdup(tmp->buf) : NULL)
				  : probe(ctx, tmp, dir.buf, rel, exts[e]);
		if (ret || !dir.len)
			break;
		dir_up(&dir);
	}
	ancestor = ret != NULL;
	for (size_t i = 0; !ancestor && cfg && i < cfg->java_roots_nr; i++) {
		/* the nearest root that has it: the longest prefix shared with from */
		size_t n = common_dirs(from, cfg->java_roots[i]);
		char *got = NULL;

		if (ret && n <= best_n)
			continue;
		for (size_t e = 0; !got && e < ARRAY_SIZE(exts); e++)
			got = pkg ? (!make_path(tmp, cfg->java_roots[i], rel, NULL) &&
				     dir_has_ext(ctx, tmp->buf, exts[e]) ? xstrdup(tmp->buf) : NULL)
				  : probe(ctx, tmp, cfg->java_roots[i], rel, exts[e]);
		if (got) {
			free(ret);
			ret = got, best_n = n;
		}
	}
	buf_release(&dir);
	return ret;
}

/*
 * "a.b.C" is a/b/C.java (or a/b/C.kt) under a source root (java_probe_roots()),
 * then a unique suffix.  "a.b.C.m" (a static import, a nested class) falls back
 * to a/b/C.java when C looks like a class (capitalised); "a.b.C.*" (a static
 * on-demand import) is C's file.  Else "a.b" (the query drops the ".*" of an
 * on-demand import) names the package directory a/b under a source root,
 * returned when it holds .java or .kt files, as Go packages are.  Else NULL.
 */
static char *resolve_java(const struct import_ctx *ctx, const char *from, const char *target)
{
	struct buf rel = BUF_INIT, tmp = BUF_INIT;
	char *sufs[SUFFIX_MAX], *pkg = NULL;
	int groups[SUFFIX_MAX];
	size_t nsufs = 0;
	char *ret = NULL;

	if (strchr(target, '/'))
		goto done;
	buf_addstr(&rel, target);
	if (has_suffix(rel.buf, ".*"))
		buf_setlen(&rel, rel.len - 2);
	seps_to_slashes(&rel, 0, '.');
	if (!clean_relative(rel.buf))
		goto done;
	pkg = xstrdup(rel.buf);
	/* a/b/C/m, a/b/C: while what is left ends in a class name */
	for (;;) {
		char *last;

		sufs[nsufs] = xasprintf("%s.java", rel.buf);
		groups[nsufs] = (int)nsufs / 2;
		sufs[nsufs + 1] = xasprintf("%s.kt", rel.buf);
		groups[nsufs + 1] = (int)nsufs / 2;
		nsufs += 2;
		last = memrchr(rel.buf, '/', rel.len);
		if (!last || nsufs == SUFFIX_MAX)
			break;
		buf_setlen(&rel, (size_t)(last - rel.buf));
		last = memrchr(rel.buf, '/', rel.len);
		if (!isupper((unsigned char)(last ? last[1] : rel.buf[0])))
			break;
	}
	for (size_t i = 0; !ret && i < nsufs; i += 2) {
		char *r = xstrndup(sufs[i], strlen(sufs[i]) - 5);

		ret = java_probe_roots(ctx, &tmp, from, r, 0);
		free(r);
	}
	if (!ret)
		ret = suffix_match(ctx, (const char *const *)sufs, groups, nsufs);
	if (!ret)
		ret = java_probe_roots(ctx, &tmp, from, pkg, 1);
	for (size_t i = 0; i < nsufs; i++)
		free(sufs[i]);
done:
	free(pkg);
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
