/*
 * importcfg.c: read the files that decide where a repository's imports go --
 * go.mod, package.json, tsconfig.json/jsconfig.json, compile_commands.json --
 * and the Java source roots, once per walk (import_ctx_load()).
 *
 * The workload: ci-index build resolves every import of every file from
 * several threads; reading these files per import (or behind a lock) would
 * cost more than the resolution itself.  So they are all read up front, from
 * the walk's file set, into a struct import_config that the threads then only
 * read.  A config file that cannot be read or parsed is skipped quietly: a
 * broken tsconfig must not stop an index build.
 */
#include "core/common.h"
#include "parse/imports.h"
#include "parse/importcfg.h"

#include <ctype.h>

/* ---- helpers ------------------------------------------------------------------ */

/*
 * The normalised root-relative path dir/rel (rel relative, or absolute under
 * the root when root is given), malloc'd; NULL when it leaves the root.
 */
static char *norm_join(const char *root, const char *dir, const char *rel)
{
	struct buf b = BUF_INIT;
	const char *parts[2] = { dir, rel };

	if (*rel == '/') {
		size_t n = root ? strlen(root) : 0;

		if (!root || strncmp(rel, root, n) || (rel[n] && rel[n] != '/'))
			return NULL;
		parts[0] = "";
		parts[1] = rel + n;
	}
	for (int i = 0; i < 2; i++) {
		const char *s = parts[i];

		while (*s) {
			const char *e = strchrnul(s, '/');
			size_t n = (size_t)(e - s);

			if (n == 2 && s[0] == '.' && s[1] == '.') {
				char *slash;

				if (!b.len) {
					buf_release(&b);
					return NULL;
				}
				slash = memrchr(b.buf, '/', b.len);
				buf_setlen(&b, slash ? (size_t)(slash - b.buf) : 0);
			} else if (n && !(n == 1 && *s == '.')) {
				if (b.len)
					buf_addch(&b, '/');
				buf_add(&b, s, n);
			}
			s = *e ? e + 1 : e;
		}
	}
	return buf_detach(&b, NULL);
}

static char *dir_part(const char *p)
{
	const char *slash = strrchr(p, '/');

	return slash ? xstrndup(p, (size_t)(slash - p)) : xstrdup("");
}

static int has_suffix_str(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static const char *base_part(const char *p)
{
	const char *slash = strrchr(p, '/');

	return slash ? slash + 1 : p;
}

/* 1 if s is prefix...".json". */
static int has_prefix_json(const char *s, const char *prefix)
{
	size_t n = strlen(s);

	return !strncmp(s, prefix, strlen(prefix)) && n > 5 && !strcmp(s + n - 5, ".json");
}

/* 1 if a segment of p is node_modules (a vendored tree, not the repository's own). */
static int in_node_modules(const char *p)
{
	return !strncmp(p, "node_modules/", 13) || strstr(p, "/node_modules/");
}

int importcfg_read(const struct import_ctx *ctx, const char *rel, char **data, size_t *n)
{
	struct buf b = BUF_INIT;
	char *abs;
	FILE *f;

	*data = NULL;
	*n = 0;
	if (ctx->read) {
		char *d = NULL;
		size_t len = 0;

		if (ctx->read(ctx, rel, &d, &len) < 0)
			return -1;
		buf_add(&b, d ? d : "", len);	/* NUL-terminated */
		free(d);
		*data = buf_detach(&b, n);
		return 0;
	}
	abs = xasprintf("%s/%s", ctx->root, rel);
	f = fopen(abs, "r");
	free(abs);
	if (!f)
		return -1;
	for (;;) {
		size_t got;

		buf_grow(&b, 65536);
		got = fread(b.buf + b.len, 1, b.alloc - b.len - 1, f);
		if (!got)
			break;
		buf_setlen(&b, b.len + got);
	}
	if (ferror(f)) {
		fclose(f);
		buf_release(&b);
		return -1;
	}
	fclose(f);
	*data = buf_detach(&b, n);
	return 0;
}

/* The JSON (with comments, trailing commas) of the root-relative rel, or NULL. */
static json_t *read_json(const struct import_ctx *ctx, const char *rel)
{
	char *data;
	size_t n;
	json_t *j;

	if (importcfg_read(ctx, rel, &data, &n) < 0)
		return NULL;
	importcfg_strip_jsonc(data, n);
	j = json_loadb(data, n, 0, NULL);
	free(data);
	return j;
}

void importcfg_strip_jsonc(char *s, size_t n)
{
	/* pass 1: comments become blanks (newlines kept) */
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\' && i + 1 < n)
					i++;
		} else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
			for (; i < n && s[i] != '\n'; i++)
				s[i] = ' ';
		} else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
			size_t j = i + 2;

			while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
				j++;
			j = j + 1 < n ? j + 2 : n;
			for (; i < j; i++)
				if (s[i] != '\n')
					s[i] = ' ';
			i--;
		}
	}
	/* pass 2: a ',' followed by '}' or ']' goes */
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\' && i + 1 < n)
					i++;
		} else if (s[i] == ',') {
			size_t j = i + 1;

			while (j < n && isspace((unsigned char)s[j]))
				j++;
			if (j < n && (s[j] == '}' || s[j] == ']'))
				s[i] = ' ';
		}
	}
}

/* ---- go.mod ------------------------------------------------------------------- */

/* The next word of *p (a quoted string or up to a blank or "//"), malloc'd, or NULL. */
static char *gomod_word(const char **p)
{
	const char *s = *p, *e;
	char *ret;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '"' || *s == '`') {
		e = strchr(s + 1, *s);
		if (!e)
			return NULL;
		ret = xstrndup(s + 1, (size_t)(e - s - 1));
		*p = e + 1;
		return ret;
	}
	e = s + strcspn(s, " \t\r\n");
	if (e == s || !strncmp(s, "//", 2))
		return NULL;
	ret = xstrndup(s, (size_t)(e - s));
	*p = e;
	return ret;
}

/* One `old [v] => new [v]` line of a replace directive. */
static void gomod_replace(struct go_mod *g, const char *dir, const char *p)
{
	char *old = gomod_word(&p), *w, *local;

	if (!old)
		return;
	w = gomod_word(&p);
	if (w && strcmp(w, "=>")) {	/* a version */
		free(w);
		w = gomod_word(&p);
	}
	if (!w || strcmp(w, "=>")) {
		free(old);
		free(w);
		return;
	}
	free(w);
	w = gomod_word(&p);
	local = w && (!strncmp(w, "./", 2) || !strncmp(w, "../", 3)) ? norm_join(NULL, dir, w) : NULL;
	if (local) {
		ALLOC_GROW(g->replaces, g->replaces_nr + 1, g->replaces_alloc);
		g->replaces[g->replaces_nr].old = old;
		g->replaces[g->replaces_nr++].dir = local;
		old = NULL;
	}
	free(old);
	free(w);
}

void importcfg_parse_gomod(struct go_mod *g, const char *dir, const char *text)
{
	int in_replace = 0;

	memset(g, 0, sizeof(*g));
	g->dir = xstrdup(dir);
	while (*text) {
		const char *e = strchrnul(text, '\n');
		char *line = xstrndup(text, (size_t)(e - text));
		const char *p = line;

		while (isspace((unsigned char)*p))
			p++;
		if (in_replace) {
			if (*p == ')')
				in_replace = 0;
			else
				gomod_replace(g, dir, p);
		} else if (!strncmp(p, "module", 6) && isspace((unsigned char)p[6]) && !g->module) {
			p += 6;
			g->module = gomod_word(&p);
		} else if (!strncmp(p, "replace", 7) && isspace((unsigned char)p[7])) {
			p += 7;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '(')
				in_replace = 1;
			else
				gomod_replace(g, dir, p);
		}
		free(line);
		text = *e ? e + 1 : e;
	}
}

void importcfg_gomod_release(struct go_mod *g)
{
	for (size_t i = 0; i < g->replaces_nr; i++) {
		free(g->replaces[i].old);
		free(g->replaces[i].dir);
	}
	free(g->replaces);
	free(g->dir);
	free(g->module);
}

static void load_gomod(struct import_config *cfg, const struct import_ctx *ctx, const char *rel)
{
	char *data, *dir;
	size_t n;

	if (importcfg_read(ctx, rel, &data, &n) < 0)
		return;
	dir = dir_part(rel);
	ALLOC_GROW(cfg->gomods, cfg->gomods_nr + 1, cfg->gomods_alloc);
	importcfg_parse_gomod(&cfg->gomods[cfg->gomods_nr++], dir, data);
	free(dir);
	free(data);
}

/* ---- package.json, tsconfig.json ---------------------------------------------- */

static void load_package_json(struct import_config *cfg, const struct import_ctx *ctx, const char *rel)
{
	json_t *j = read_json(ctx, rel);
	const char *name = json_string_value(json_object_get(j, "name"));

	if (name && *name) {
		ALLOC_GROW(cfg->pkgs, cfg->pkgs_nr + 1, cfg->pkgs_alloc);
		cfg->pkgs[cfg->pkgs_nr].dir = dir_part(rel);
		cfg->pkgs[cfg->pkgs_nr].name = xstrdup(name);
		cfg->pkgs[cfg->pkgs_nr++].json = json_incref(j);
	}
	json_decref(j);
}

#define TS_EXTENDS_MAX 8	/* links of an "extends" chain followed */

/*
 * rel's "extends", root-relative, or NULL: a relative path, or a package of
 * the repository ("@acme/tsconfig/base.json" in its directory, a bare
 * "@acme/tsconfig" its tsconfig.json); of an array, the last that is either
 * (the one whose options win).  A package elsewhere is not followed.
 */
static char *ts_extends(const struct import_config *cfg, const struct import_ctx *ctx, json_t *j,
			const char *rel)
{
	json_t *e = json_object_get(j, "extends");
	size_t nr = json_is_array(e) ? json_array_size(e) : 1;
	char *dir = dir_part(rel), *ret = NULL;

	for (size_t i = nr; !ret && i-- > 0; ) {
		const char *s = json_string_value(json_is_array(e) ? json_array_get(e, i) : e);
		const struct js_pkg *pkg;
		size_t len;

		if (!s)
			continue;
		if (!strncmp(s, "./", 2) || !strncmp(s, "../", 3))
			ret = norm_join(NULL, dir, s);
		else if ((pkg = importcfg_pkg(cfg, s, &len)))
			ret = norm_join(NULL, pkg->dir, s[len] ? s + len + 1 : "tsconfig.json");
		if (ret && !strstr(base_part(ret), ".json")) {
			char *data;
			size_t n;

			if (importcfg_read(ctx, ret, &data, &n) < 0) {
				char *with = xasprintf("%s.json", ret);

				free(ret);
				ret = with;
			}
			free(data);
		}
	}
	free(dir);
	return ret;
}

/* rel's baseUrl and paths, each from the first config of its extends chain that sets it. */
static void load_tsconfig(struct import_config *cfg, const struct import_ctx *ctx, const char *rel)
{
	struct ts_config *t;
	char *cur = xstrdup(rel), *paths_dir = NULL;

	ALLOC_GROW(cfg->tsconfigs, cfg->tsconfigs_nr + 1, cfg->tsconfigs_alloc);
	t = &cfg->tsconfigs[cfg->tsconfigs_nr++];
	memset(t, 0, sizeof(*t));
	t->dir = dir_part(rel);
	for (int depth = 0; cur && depth <= TS_EXTENDS_MAX; depth++) {
		json_t *j = read_json(ctx, cur);
		json_t *co = json_object_get(j, "compilerOptions");
		const char *base = json_string_value(json_object_get(co, "baseUrl"));
		json_t *paths = json_object_get(co, "paths");
		char *dir = dir_part(cur), *next;

		if (!t->base_url && base)
			t->base_url = norm_join(NULL, dir, base);
		if (!t->paths && json_is_object(paths)) {
			t->paths = json_incref(paths);
			paths_dir = xstrdup(dir);
		}
		next = j ? ts_extends(cfg, ctx, j, cur) : NULL;
		free(dir);
		json_decref(j);
		free(cur);
		cur = next;
	}
	free(cur);
	if (t->paths) {
		t->paths_base = t->base_url ? xstrdup(t->base_url) : paths_dir;
		if (!t->base_url)
			paths_dir = NULL;
	}
	free(paths_dir);
}

/* ---- compile_commands.json ---------------------------------------------------- */

/* Split a shell command line into words (quotes and backslashes), into *v. */
static void split_command(const char *s, char ***v, size_t *nr, size_t *alloc)
{
	struct buf w = BUF_INIT;

	while (*s) {
		int any = 0;

		while (isspace((unsigned char)*s))
			s++;
		buf_reset(&w);
		while (*s && !isspace((unsigned char)*s)) {
			any = 1;
			if (*s == '\'' || *s == '"') {
				char q = *s++;

				while (*s && *s != q) {
					if (q == '"' && *s == '\\' && s[1])
						s++;
					buf_addch(&w, *s++);
				}
				if (*s)
					s++;
			} else if (*s == '\\' && s[1]) {
				buf_addch(&w, s[1]);
				s += 2;
			} else {
				buf_addch(&w, *s++);
			}
		}
		if (any) {
			ALLOC_GROW(*v, *nr + 1, *alloc);
			(*v)[(*nr)++] = xstrdup(w.buf);
		}
	}
	buf_release(&w);
}

/* Add dir to inc's directories unless it is there. */
static void incs_add(struct cc_incs *inc, const char *dir)
{
	for (size_t i = 0; i < inc->dirs_nr; i++)
		if (!strcmp(inc->dirs[i], dir))
			return;
	ALLOC_GROW(inc->dirs, inc->dirs_nr + 1, inc->dirs_alloc);
	inc->dirs[inc->dirs_nr++] = xstrdup(dir);
}

/*
 * The cc_incs of v for key: the last one when it has that key, else a new
 * one.  A key may so appear more than once while loading (a database of
 * 30,000 entries is not searched 30,000 times); incs_merge() joins them.
 */
static struct cc_incs *incs_get(struct cc_incs **v, size_t *nr, size_t *alloc, const char *key)
{
	if (*nr && !strcmp((*v)[*nr - 1].key, key))
		return &(*v)[*nr - 1];
	ALLOC_GROW(*v, *nr + 1, *alloc);
	memset(&(*v)[*nr], 0, sizeof(**v));
	(*v)[*nr].key = xstrdup(key);
	(*v)[*nr].seq = *nr;
	return &(*v)[(*nr)++];
}

/* One entry {directory, file, arguments|command} of the compilation database. */
static void load_cc_entry(struct import_config *cfg, const struct import_ctx *ctx, json_t *e)
{
	static const char *const flags[] = { "-I", "-iquote", "-isystem", "-idirafter" };
	const char *dir = json_string_value(json_object_get(e, "directory"));
	const char *file = json_string_value(json_object_get(e, "file"));
	json_t *args = json_object_get(e, "arguments");
	const char *cmd = json_string_value(json_object_get(e, "command"));
	char **argv = NULL, *abs, *rel, *fdir;
	size_t argc = 0, alloc = 0;
	struct cc_incs *fi, *di;

	if (!dir || *dir != '/' || !file)
		return;
	abs = *file == '/' ? xstrdup(file) : xasprintf("%s/%s", dir, file);
	rel = norm_join(ctx->root, "", abs);
	free(abs);
	if (!rel)
		return;	/* a file outside the repository */
	if (json_is_array(args)) {
		for (size_t i = 0; i < json_array_size(args); i++) {
			const char *a = json_string_value(json_array_get(args, i));

			ALLOC_GROW(argv, argc + 1, alloc);
			argv[argc++] = xstrdup(a ? a : "");
		}
	} else if (cmd) {
		split_command(cmd, &argv, &argc, &alloc);
	}
	fi = incs_get(&cfg->cc_files, &cfg->cc_files_nr, &cfg->cc_files_alloc, rel);
	fdir = dir_part(rel);
	di = incs_get(&cfg->cc_dirs, &cfg->cc_dirs_nr, &cfg->cc_dirs_alloc, fdir);
	for (size_t i = 0; i < argc; i++) {
		const char *path = NULL;

		for (size_t k = 0; !path && k < ARRAY_SIZE(flags); k++) {
			size_t n = strlen(flags[k]);

			if (strncmp(argv[i], flags[k], n))
				continue;
			path = argv[i][n] ? argv[i] + n : i + 1 < argc ? argv[++i] : NULL;
		}
		if (path) {
			char *inc = *path == '/' ? norm_join(ctx->root, "", path) : NULL;

			if (*path != '/') {
				char *a = xasprintf("%s/%s", dir, path);

				inc = norm_join(ctx->root, "", a);
				free(a);
			}
			if (inc) {
				incs_add(fi, inc);
				incs_add(di, inc);
			}
			free(inc);
		}
	}
	for (size_t i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(fdir);
	free(rel);
}

/* By key, then in the database's order. */
static int cmp_incs(const void *a, const void *b)
{
	const struct cc_incs *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sort v by key and join the entries of one key, their directories in the database's order. */
static void incs_merge(struct cc_incs *v, size_t *nr)
{
	size_t k = 0;

	qsort_unsorted(v, *nr, sizeof(*v), cmp_incs);
	for (size_t i = 0; i < *nr; i++) {
		if (k && !strcmp(v[k - 1].key, v[i].key)) {
			for (size_t d = 0; d < v[i].dirs_nr; d++) {
				incs_add(&v[k - 1], v[i].dirs[d]);
				free(v[i].dirs[d]);
			}
			free(v[i].dirs);
			free(v[i].key);
			continue;
		}
		v[k++] = v[i];
	}
	*nr = k;
}

/* compile_commands.json at the root, else in build/. */
static void load_compile_commands(struct import_config *cfg, const struct import_ctx *ctx)
{
	json_t *db = read_json(ctx, "compile_commands.json");

	if (!json_is_array(db)) {
		json_decref(db);
		db = read_json(ctx, "build/compile_commands.json");
	}
	for (size_t i = 0; json_is_array(db) && i < json_array_size(db); i++)
		load_cc_entry(cfg, ctx, json_array_get(db, i));
	json_decref(db);
	incs_merge(cfg->cc_files, &cfg->cc_files_nr);
	incs_merge(cfg->cc_dirs, &cfg->cc_dirs_nr);
}

static void incs_release(struct cc_incs *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		for (size_t k = 0; k < v[i].dirs_nr; k++)
			free(v[i].dirs[k]);
		free(v[i].dirs);
		free(v[i].key);
	}
	free(v);
}

int import_is_config(const char *path)
{
	static const char *const names[] = {
		"go.mod", "package.json", "tsconfig.json", "jsconfig.json", "compile_commands.json",
	};
	const char *base = base_part(path);

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(base, names[i]))
			return 1;
	return has_prefix_json(base, "tsconfig.");	/* tsconfig.base.json, an "extends" target */
}

/* ---- the whole configuration -------------------------------------------------- */

/* The Java source root of p ("m/src/main/java" for "m/src/main/java/a/B.java"), or NULL. */
static char *java_root(const char *p)
{
	static const char *const roots[] = {
		"src/main/java/", "src/test/java/", "src/main/kotlin/", "src/test/kotlin/",
	};

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		const char *s = strstr(p, roots[i]);

		while (s && s != p && s[-1] != '/')
			s = strstr(s + 1, roots[i]);
		if (s)
			return xstrndup(p, (size_t)(s - p) + strlen(roots[i]) - 1);
	}
	return NULL;
}

/* The package a Java or Kotlin file's text declares ("a.b.c", malloc'd), or NULL. */
static char *java_package(const char *s)
{
	const char *e;

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (!strncmp(s, "//", 2))
			s = strchrnul(s, '\n');
		else if (!strncmp(s, "/*", 2) && (e = strstr(s + 2, "*/")))
			s = e + 2;
		else if (*s == '@')	/* an annotation of the package (package-info.java, Kotlin's @file:) */
			s += 1 + strcspn(s + 1, " \t\r\n");
		else
			break;
	}
	if (strncmp(s, "package", 7) || !isspace((unsigned char)s[7]))
		return NULL;
	s += 8;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$");
	return e > s ? xstrndup(s, (size_t)(e - s)) : NULL;
}

/*
 * The source root of the Java or Kotlin file p outside the usual roots: the
 * directory whose path ends with the package its `package` line names
 * ("" when the package path is the whole directory), or NULL.  One file per
 * directory is read (cfg->java_dir_seen).
 */
static char *java_declared_root(struct import_config *cfg, const struct import_ctx *ctx, const char *p)
{
	char *dir = dir_part(p), *data = NULL, *pkg = NULL, *ret = NULL;
	size_t n, dn, pn;

	if ((!has_suffix_str(p, ".java") && !has_suffix_str(p, ".kt")) ||
	    (cfg->java_dir_seen && !strcmp(cfg->java_dir_seen, dir))) {
		free(dir);
		return NULL;
	}
	free(cfg->java_dir_seen);
	cfg->java_dir_seen = dir;
	if (importcfg_read(ctx, p, &data, &n) < 0 || !(pkg = java_package(data)))
		goto done;
	for (char *q = pkg; *q; q++)
		if (*q == '.')
			*q = '/';
	dn = strlen(dir);
	pn = strlen(pkg);
	if (dn == pn && !strcmp(dir, pkg))
		ret = xstrdup("");
	else if (dn > pn && dir[dn - pn - 1] == '/' && !strcmp(dir + dn - pn, pkg))
		ret = xstrndup(dir, dn - pn - 1);
done:
	free(data);
	free(pkg);
	return ret;
}

static int cmp_gomod(const void *a, const void *b)
{
	return strcmp(((const struct go_mod *)a)->dir, ((const struct go_mod *)b)->dir);
}

static int cmp_pkg(const void *a, const void *b)
{
	const struct js_pkg *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->dir, y->dir);
}

static int cmp_ts(const void *a, const void *b)
{
	const struct ts_config *x = a, *y = b;
	int c = strcmp(x->dir, y->dir);

	return c ? c : x->js - y->js;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * One file of the walk: a config file is read, a Java file may add a source
 * root.  tsconfig files wait for the second pass (tsconfig), when the packages
 * their "extends" may name are known.
 */
static void load_one(struct import_config *cfg, const struct import_ctx *ctx, const char *p,
		     int tsconfig)
{
	const char *base = base_part(p);
	char *jr;

	if (tsconfig) {
		if (!in_node_modules(p) && (!strcmp(base, "tsconfig.json") || !strcmp(base, "jsconfig.json"))) {
			load_tsconfig(cfg, ctx, p);
			cfg->tsconfigs[cfg->tsconfigs_nr - 1].js = base[0] == 'j';
		}
	} else if (!strcmp(base, "go.mod")) {
		load_gomod(cfg, ctx, p);
	} else if (in_node_modules(p)) {
		/* a package's own files */
	} else if (!strcmp(base, "package.json")) {
		load_package_json(cfg, ctx, p);
	} else if ((jr = java_root(p)) || (jr = java_declared_root(cfg, ctx, p))) {
		if (!cfg->java_roots_nr || strcmp(cfg->java_roots[cfg->java_roots_nr - 1], jr)) {
			ALLOC_GROW(cfg->java_roots, cfg->java_roots_nr + 1, cfg->java_roots_alloc);
			cfg->java_roots[cfg->java_roots_nr++] = jr;
		} else {
			free(jr);
		}
	}
}

/* Keep one tsconfig per directory: tsconfig.json over jsconfig.json. */
static void ts_dedup(struct import_config *cfg)
{
	size_t k = 0;

	qsort_unsorted(cfg->tsconfigs, cfg->tsconfigs_nr, sizeof(*cfg->tsconfigs), cmp_ts);
	for (size_t i = 0; i < cfg->tsconfigs_nr; i++) {
		struct ts_config *t = &cfg->tsconfigs[i];

		if (k && !strcmp(cfg->tsconfigs[k - 1].dir, t->dir)) {	/* a jsconfig.json */
			free(t->dir);
			free(t->base_url);
			free(t->paths_base);
			json_decref(t->paths);
			continue;
		}
		cfg->tsconfigs[k++] = *t;
	}
	cfg->tsconfigs_nr = k;
}

void import_ctx_load(struct import_ctx *ctx)
{
	struct import_config *cfg = xcalloc(1, sizeof(*cfg));

	for (int pass = 0; pass < 2; pass++) {
		static const char *const top[] = { "go.mod", "package.json", "tsconfig.json", "jsconfig.json" };

		for (size_t i = 0; ctx->files && i < ctx->files->nr; i++)
			load_one(cfg, ctx, ctx->files->paths[i], pass);
		for (size_t i = 0; !ctx->files && i < ARRAY_SIZE(top); i++)
			load_one(cfg, ctx, top[i], pass);
		if (!pass)
			qsort_unsorted(cfg->pkgs, cfg->pkgs_nr, sizeof(*cfg->pkgs), cmp_pkg);
	}
	load_compile_commands(cfg, ctx);
	qsort_unsorted(cfg->gomods, cfg->gomods_nr, sizeof(*cfg->gomods), cmp_gomod);
	ts_dedup(cfg);
	qsort_unsorted(cfg->java_roots, cfg->java_roots_nr, sizeof(*cfg->java_roots), cmp_str);
	{
		size_t k = 0;

		for (size_t i = 0; i < cfg->java_roots_nr; i++) {
			if (k && !strcmp(cfg->java_roots[k - 1], cfg->java_roots[i]))
				free(cfg->java_roots[i]);
			else
				cfg->java_roots[k++] = cfg->java_roots[i];
		}
		cfg->java_roots_nr = k;
	}
	ctx->config = cfg;
}

void import_ctx_release(struct import_ctx *ctx)
{
	struct import_config *cfg = ctx->config;

	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->gomods_nr; i++)
		importcfg_gomod_release(&cfg->gomods[i]);
	free(cfg->gomods);
	for (size_t i = 0; i < cfg->pkgs_nr; i++) {
		free(cfg->pkgs[i].dir);
		free(cfg->pkgs[i].name);
		json_decref(cfg->pkgs[i].json);
	}
	free(cfg->pkgs);
	for (size_t i = 0; i < cfg->tsconfigs_nr; i++) {
		free(cfg->tsconfigs[i].dir);
		free(cfg->tsconfigs[i].base_url);
		free(cfg->tsconfigs[i].paths_base);
		json_decref(cfg->tsconfigs[i].paths);
	}
	free(cfg->tsconfigs);
	incs_release(cfg->cc_files, cfg->cc_files_nr);
	incs_release(cfg->cc_dirs, cfg->cc_dirs_nr);
	for (size_t i = 0; i < cfg->java_roots_nr; i++)
		free(cfg->java_roots[i]);
	free(cfg->java_roots);
	free(cfg->java_dir_seen);
	free(cfg);
	ctx->config = NULL;
}

/* ---- lookups ------------------------------------------------------------------ */

const struct js_pkg *importcfg_pkg(const struct import_config *cfg, const char *spec, size_t *len)
{
	const struct js_pkg *pkg = NULL;

	*len = 0;
	for (size_t i = 0; i < cfg->pkgs_nr; i++) {
		size_t n = strlen(cfg->pkgs[i].name);

		if (n > *len && !strncmp(spec, cfg->pkgs[i].name, n) && (!spec[n] || spec[n] == '/'))
			pkg = &cfg->pkgs[i], *len = n;
	}
	return pkg;
}

const struct go_mod *importcfg_gomod(const struct import_config *cfg, const char *dir)
{
	size_t lo = 0, hi = cfg->gomods_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(dir, cfg->gomods[mid].dir);

		if (!c)
			return &cfg->gomods[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct ts_config *importcfg_tsconfig(const struct import_config *cfg, const char *dir)
{
	size_t lo = 0, hi = cfg->tsconfigs_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(dir, cfg->tsconfigs[mid].dir);

		if (!c)
			return &cfg->tsconfigs[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct cc_incs *importcfg_cc(const struct cc_incs *v, size_t nr, const char *key)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(key, v[mid].key);

		if (!c)
			return &v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
