/*
 * libcommon/fleet/xrefs.c: references across the repositories of a shard set
 * (the contract is xrefs.h): each shard's facts, then their resolution over
 * the merged answer.
 */
#include "core/common.h"
#include "fleet/xrefs.h"
#include "graph/refs.h"
#include "index/index.h"

#include <ctype.h>
#include <jansson.h>
#include <string.h>

int xrefs_wanted(const char *cmd)
{
	return cmd && (!strcmp(cmd, "refs") || !strcmp(cmd, "callers") || !strcmp(cmd, "impact"));
}

/* ---- a shard's facts ---- */

/* declared: the repository's manifest names it (else it is only a directory of it) */
static void fact_pkg(struct buf *out, const char *lang, const char *name, const char *dir, int declared)
{
	nd_begin(out, "xref_pkg");
	nd_str(out, "lang", lang);
	nd_str(out, "name", name);
	nd_str(out, "dir", dir);
	nd_bool(out, "declared", declared);
	nd_end(out);
}

/*
 * The distribution name of a Python project at root (pyproject.toml's
 * `name = "..."`, else setup.py's `name="..."`), as a module name: lower
 * case, "-" and "." as "_"; malloc'd, or NULL.
 */
static char *python_project(const char *root, unsigned have)
{
	static const char *const files[] = { "pyproject.toml", "setup.py", "setup.cfg" };
	char line[4096], *name = NULL;

	for (size_t k = 0; k < ARRAY_SIZE(files) && !name; k++) {
		char *p = have & (1u << k) ? xasprintf("%s/%s", root, files[k]) : NULL;
		FILE *f = p ? fopen(p, "r") : NULL;

		free(p);
		while (f && !name && fgets(line, sizeof(line), f)) {
			char *s = line + strspn(line, " \t"), *e;

			if (strncmp(s, "name", 4))
				continue;
			s += 4 + strspn(s + 4, " \t");
			if (*s != '=')
				continue;
			s += 1 + strspn(s + 1, " \t");
			if (*s == '"' || *s == '\'') {
				if (!(e = strchr(s + 1, *s)))
					continue;
				s++;
			} else {
				e = s + strcspn(s, " \t\r\n,#");
			}
			if (e > s)
				name = xstrndup(s, e - s);
		}
		if (f)
			fclose(f);
	}
	for (char *c = name; c && *c; c++)
		*c = *c == '-' || *c == '.' ? '_' : (char)tolower((unsigned char)*c);
	return name;
}

/*
 * The manifests at the top of the repository that its index has (only those
 * are read, from its checkout), as bits: 1 pyproject.toml, 2 setup.py, 4
 * setup.cfg, 8 package.json, 16 go.mod.
 */
static unsigned manifests(sqlite3 *db)
{
	static const char *const names[] = { "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod" };
	sqlite3_stmt *st;
	unsigned have = 0;

	if (sqlite3_prepare_v2(db, "SELECT path FROM files WHERE path IN ('pyproject.toml', 'setup.py', "
			       "'setup.cfg', 'package.json', 'go.mod')", -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW)
		for (size_t k = 0; k < ARRAY_SIZE(names); k++)
			if (!strcmp(refs_col(st, 0), names[k]))
				have |= 1u << k;
	sqlite3_finalize(st);
	return have;
}

/* Python: pkg/__init__.py or src/pkg/__init__.py, each a package of that name. */
static void facts_python(sqlite3 *db, const char *root, unsigned have, struct buf *out)
{
	char *project = python_project(root, have);
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT path FROM files WHERE path GLOB '*/__init__.py' ORDER BY path", -1, &st,
			       NULL) != SQLITE_OK) {
		free(project);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *p = refs_col(st, 0);
		size_t n = strlen(p) - strlen("/__init__.py");
		char *dir = xstrndup(p, n), *slash = strchr(dir, '/');

		if (!slash)
			fact_pkg(out, "python", dir, dir, project && !strcmp(project, dir));
		else if (!strncmp(dir, "src/", 4) && !strchr(slash + 1, '/'))
			fact_pkg(out, "python", slash + 1, dir, project && !strcmp(project, slash + 1));
		free(dir);
	}
	sqlite3_finalize(st);
	free(project);
}

/* JavaScript's package.json "name", Go's go.mod module path, from the checkout at root. */
static void facts_manifests(const char *root, unsigned have, struct buf *out)
{
	char *p, line[4096];
	json_t *j;
	FILE *f = NULL;

	if (have & 8) {
		p = xasprintf("%s/package.json", root);
		j = json_load_file(p, 0, NULL);
		if (j && json_is_string(json_object_get(j, "name")))
			fact_pkg(out, "javascript", json_string_value(json_object_get(j, "name")), "", 1);
		json_decref(j);
		free(p);
	}
	if (have & 16) {
		p = xasprintf("%s/go.mod", root);
		f = fopen(p, "r");
		free(p);
	}
	while (f && fgets(line, sizeof(line), f)) {
		char mod[4096];

		if (sscanf(line, " module %4095s", mod) == 1) {
			fact_pkg(out, "go", mod, "", 1);
			break;
		}
	}
	if (f)
		fclose(f);
}

/* Rows of sql (?1 bound to name, or none) as records of type: path, then line (and target). */
static void facts_rows(sqlite3 *db, const char *sql, const char *name, const char *type, struct buf *out)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		nd_begin(out, type);
		nd_str(out, "path", refs_col(st, 0));
		nd_int(out, "line", sqlite3_column_int64(st, 1));
		if (sqlite3_column_count(st) > 2)
			nd_str(out, "target", refs_col(st, 2));
		nd_end(out);
	}
	sqlite3_finalize(st);
}

/* The shard's references to name, as refs writes them, typed xref_ref. */
static void facts_refs(struct ci_index *ix, const char *name, struct buf *out)
{
	struct refs_opts o = { .limit = 10000, .depth = -1, .mode = REFS_M_ALL };
	struct refs r;
	char *ob = NULL, *p;
	size_t on = 0;
	FILE *fp = open_memstream(&ob, &on);
	static const char occ[] = "{\"_type\":\"occurrence\"";

	if (!fp)
		return;
	refs_init(&r, ix, &o, fp);
	refs_occurrences(&r, name, 0, 1, 0);
	refs_release(&r);
	fclose(fp);
	for (p = ob; p && p < ob + on;) {
		char *nl = memchr(p, '\n', ob + on - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(ob + on - p);

		if (n > sizeof(occ) - 1 && !strncmp(p, occ, sizeof(occ) - 1)) {
			buf_addstr(out, "{\"_type\":\"xref_ref\"");
			buf_add(out, p + sizeof(occ) - 1, n - (sizeof(occ) - 1));
			buf_addch(out, '\n');
		}
		p += n + 1;
	}
	free(ob);
}

void xrefs_facts(struct ci_index *ix, const char *cmd, const char *arg, struct buf *out)
{
	sqlite3 *db = index_db(ix);
	struct buf quiet = BUF_INIT;
	char *scope = NULL, *name = NULL, *path = NULL, *colon;
	unsigned have;

	if (!xrefs_wanted(cmd) || !arg)
		return;
	util_report_to(&quiet);	/* what a fact's query says is not the answer's */
	have = manifests(db);
	facts_python(db, index_root(ix), have, out);
	facts_manifests(index_root(ix), have, out);
	if (!strcmp(cmd, "impact")) {
		path = xstrdup(arg);
		if ((colon = strrchr(path, ':')))
			*colon = '\0';
		facts_rows(db, "SELECT path, 0 FROM files WHERE path = ?1", path, "xref_file", out);
		facts_rows(db, "SELECT path, line, target FROM imports WHERE resolved IS NULL "
			   "ORDER BY path, line LIMIT 20000", NULL, "xref_import", out);
		if (colon) {
			refs_split_qualified(colon + 1, &scope, &name);
			facts_refs(ix, name, out);
		}
	} else {
		refs_split_qualified(arg, &scope, &name);
		facts_rows(db, "SELECT i.path, i.line, i.target FROM imports i WHERE i.resolved IS NULL AND i.path IN "
			   "(SELECT f.path FROM refs r JOIN files f ON f.blob_id = r.blob_id WHERE r.name = ?1) "
			   "ORDER BY i.path, i.line", name, "xref_import", out);
		facts_rows(db, "SELECT f.path, d.line FROM defs d JOIN files f ON f.blob_id = d.blob_id "
			   "WHERE d.name = ?1 ORDER BY f.path, d.line", name, "xref_def", out);
		if (!strcmp(cmd, "callers"))
			facts_refs(ix, name, out);
	}
	util_report_to(NULL);
	buf_release(&quiet);
	free(scope);
	free(name);
	free(path);
}

/* ---- the resolution ---- */

/* The facts of every shard, each a record with its "repo" (borrowed from recs). */
struct facts {
	json_t *pkgs, *imports, *defs, *refs, *files;	/* arrays of records */
};

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* path without its extension (after the last '/'), malloc'd */
static char *no_ext(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');

	return dot && (!slash || dot > slash) ? xstrndup(path, dot - path) : xstrdup(path);
}

/* Does the import target (as written in another repository) name path of pkg's repository? */
static int module_file(json_t *pkg, const char *target, const char *path)
{
	const char *lang = sget(pkg, "lang"), *name = sget(pkg, "name"), *dir = sget(pkg, "dir");
	size_t n = strlen(name);
	char sep = !strcmp(lang, "python") ? '.' : '/';
	char *base, *p0;
	int ok;

	if (!n || strncmp(target, name, n) || (target[n] && target[n] != sep))
		return 0;
	base = xasprintf("%s%s%s", dir, *dir && target[n] ? "/" : "", target[n] ? target + n + 1 : "");
	if (sep == '.')
		for (char *c = base; *c; c++)
			if (*c == '.')
				*c = '/';
	if (!strcmp(lang, "python")) {
		char *a = xasprintf("%s.py", base), *b = xasprintf("%s/__init__.py", base);

		ok = !strcmp(path, a) || !strcmp(path, b);
		free(a);
		free(b);
	} else if (!strcmp(lang, "go")) {
		const char *slash = strrchr(path, '/');
		size_t dl = slash ? (size_t)(slash - path) : 0;

		ok = strlen(base) == dl && !strncmp(path, base, dl);
	} else {
		/* a package's own name: its index; else the sub path, in src/ or lib/ too */
		const char *sub = *base ? base : "index";

		p0 = no_ext(path);
		ok = !strcmp(p0, sub) || (!strncmp(p0, "src/", 4) && !strcmp(p0 + 4, sub)) ||
		     (!strncmp(p0, "lib/", 4) && !strcmp(p0 + 4, sub));
		if (!ok && *base) {
			char *idx = xasprintf("%s/index", base);
			ok = !strcmp(p0, idx);
			free(idx);
		}
		free(p0);
	}
	free(base);
	return ok;
}

/* Is target pkg's module or one inside it? */
static int names_pkg(json_t *pkg, const char *target)
{
	const char *name = sget(pkg, "name");
	size_t n = strlen(name);
	char sep = !strcmp(sget(pkg, "lang"), "python") ? '.' : '/';

	return n && !strncmp(target, name, n) && (!target[n] || target[n] == sep);
}

/*
 * Does a package of repository repo make target name path?  (another
 * repository's import)  Where several repositories have a package of that
 * name, those whose manifest declares it publish it; a directory of the same
 * name elsewhere (a vendored copy) does not.
 */
static int resolves_to(const struct facts *f, const char *repo, const char *target, const char *path)
{
	int declared = 0;
	size_t i;
	json_t *p;

	json_array_foreach(f->pkgs, i, p)
		declared |= names_pkg(p, target) && json_is_true(json_object_get(p, "declared"));
	json_array_foreach(f->pkgs, i, p)
		if (!strcmp(sget(p, "repo"), repo) && (!declared || json_is_true(json_object_get(p, "declared"))) &&
		    module_file(p, target, path))
			return 1;
	return 0;
}

static void edge(FILE *out, json_t *imp, const char *repo, const char *path)
{
	json_t *e = json_pack("{s:s, s:s, s:s, s:O, s:s, s:{s:s, s:s}}", "_type", "import_edge", "repo",
			      sget(imp, "repo"), "path", sget(imp, "path"), "line", json_object_get(imp, "line"),
			      "target", sget(imp, "target"), "resolved", "repo", repo, "path", path);
	char *s = json_dumps(e, JSON_PRESERVE_ORDER | JSON_COMPACT);

	fprintf(out, "%s\n", s);
	free(s);
	json_decref(e);
}

/* callers and refs: the imports of another repository's file that defines the name. */
static long resolve_name(const struct facts *f, int callers, FILE *out)
{
	size_t i, k, m;
	json_t *imp, *def, *ref;
	long n = 0;

	json_array_foreach(f->imports, i, imp) {
		const char *from = sget(imp, "repo");

		json_array_foreach(f->defs, k, def) {
			const char *to = sget(def, "repo"), *dpath = sget(def, "path");

			if (!strcmp(from, to) || !resolves_to(f, to, sget(imp, "target"), dpath))
				continue;
			edge(out, imp, to, dpath);
			n++;
			if (!callers)
				continue;
			json_array_foreach(f->refs, m, ref) {
				json_t *o;
				char *s;

				if (strcmp(sget(ref, "repo"), from) || strcmp(sget(ref, "path"), sget(imp, "path")) ||
				    strcmp(sget(ref, "kind"), "call"))
					continue;
				o = json_deep_copy(ref);
				json_object_set_new(o, "_type", json_string("occurrence"));
				json_object_set_new(o, "binding", json_string("cross-repo"));
				json_object_set_new(o, "definition", json_pack("{s:s, s:s, s:O}", "repo", to, "path", dpath,
									  "line", json_object_get(def, "line")));
				s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT);
				fprintf(out, "%s\n", s);
				free(s);
				json_decref(o);
				n++;
			}
		}
	}
	return n;
}

/* v to three decimals, as impact writes its signals: an integer when it is one */
static json_t *number3(double v)
{
	double r = (double)(long long)(v * 1000 + 0.5) / 1000;

	return r == (double)(long long)r ? json_integer((json_int_t)r) : json_real(r);
}

/* impact: the files of other repositories that import the file (depth 1). */
static long resolve_impact(const struct facts *f, const char *arg, FILE *out)
{
	char *path = xstrdup(arg), *colon = strrchr(path, ':');
	size_t i, k, m;
	json_t *file, *imp, *ref;
	long n = 0;

	if (colon)
		*colon = '\0';
	json_array_foreach(f->files, i, file) {
		const char *to = sget(file, "repo");

		json_array_foreach(f->imports, k, imp) {
			const char *from = sget(imp, "repo"), *ipath = sget(imp, "path");
			struct impact_hit h = { .imp = 1.0, .depth = 1 };
			json_t *o;
			char *s;

			if (!strcmp(from, to) || !resolves_to(f, to, sget(imp, "target"), path))
				continue;
			edge(out, imp, to, path);
			json_array_foreach(f->refs, m, ref)
				h.refs += !strcmp(sget(ref, "repo"), from) && !strcmp(sget(ref, "path"), ipath);
			h.ref = 1.0 - 1.0 / (1.0 + (double)h.refs / 2.0);
			o = json_pack("{s:s, s:s, s:s, s:o, s:{s:i, s:o, s:i, s:i}, s:i, s:I, s:s, s:{s:s, s:s}}",
				      "_type", "impact", "repo", from, "path", ipath,
				      "score", number3(impact_score(&h, REFS_M_ALL)),
				      "signals", "import", 1, "reference", number3(h.ref),
				      "coupling", 0, "semantic", 0, "depth", 1, "references", (json_int_t)h.refs,
				      "confidence", "syntactic", "via", "repo", to, "path", path);
			s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(6));
			fprintf(out, "%s\n", s);
			free(s);
			json_decref(o);
			n += 2;
		}
	}
	free(path);
	return n;
}

long xrefs_resolve(const char *cmd, const char *arg, const char *in, size_t len, FILE *out)
{
	struct facts f = { json_array(), json_array(), json_array(), json_array(), json_array() };
	const char *p = in, *end = in + len;
	struct buf fleet = BUF_INIT;
	long n = -1;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		static const char fx[] = "{\"_type\":\"xref_", fl[] = "{\"_type\":\"fleet\"";

		if (l >= sizeof(fx) - 1 && !strncmp(p, fx, sizeof(fx) - 1)) {
			json_t *j = json_loadb(p, l, 0, NULL);
			const char *t = sget(j, "_type") + 5;
			json_t *to = !strcmp(t, "pkg") ? f.pkgs : !strcmp(t, "import") ? f.imports :
				     !strcmp(t, "def") ? f.defs : !strcmp(t, "ref") ? f.refs :
				     !strcmp(t, "file") ? f.files : NULL;

			if (!j) {
				error("a record of the shards is not JSON: %.*s", (int)(l > 80 ? 80 : l), p);
				goto done;
			}
			if (to)
				json_array_append(to, j);
			json_decref(j);
		} else if (l >= sizeof(fl) - 1 && !strncmp(p, fl, sizeof(fl) - 1)) {
			buf_add(&fleet, p, l);
			buf_addch(&fleet, '\n');
		} else if (l) {
			fwrite(p, 1, l, out);
			fputc('\n', out);
		}
		p += l + 1;
	}
	n = !strcmp(cmd, "impact") ? resolve_impact(&f, arg, out) : resolve_name(&f, !strcmp(cmd, "callers"), out);
	fwrite(fleet.buf, 1, fleet.len, out);
done:
	json_decref(f.pkgs);
	json_decref(f.imports);
	json_decref(f.defs);
	json_decref(f.refs);
	json_decref(f.files);
	buf_release(&fleet);
	return n;
}
