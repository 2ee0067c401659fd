/*
 * manifest.c: dependencies from package manifests (see manifest.h).  Each
 * manifest is small and read once; TOML goes through the caller's parser.
 */
#include "core/common.h"
#include "context/context.h"
#include "context/manifest.h"

/* Append {manifest, name, version} to deps; a blank name is skipped. */
static void add_dep(json_t *deps, const char *manifest, const char *name, size_t name_len,
		    const char *version)
{
	char *n, *v;
	size_t v_len;

	while (name_len && (name[name_len - 1] == ' ' || name[name_len - 1] == '\t'))
		name_len--;
	if (!name_len)
		return;
	if (!version)
		version = "";
	version += strspn(version, " \t");
	v_len = strcspn(version, "\"'");	/* a quoted requirement ends at its quote */
	while (v_len && (version[v_len - 1] == ' ' || version[v_len - 1] == '\t'))
		v_len--;
	n = xstrndup(name, name_len);
	v = xstrndup(version, v_len);
	json_array_append_new(deps, json_pack("{s:s,s:s,s:s}", "manifest", manifest, "name", n,
					      "version", v));
	free(n);
	free(v);
}

/* package.json: the keys of dependencies and devDependencies. */
static void deps_package_json(json_t *deps)
{
	static const char *const sections[] = { "dependencies", "devDependencies" };
	json_t *pkg = json_load_file("package.json", 0, NULL), *v;
	const char *key;
	size_t i;

	if (!pkg)
		return;
	for (i = 0; i < ARRAY_SIZE(sections); i++)
		json_object_foreach(json_object_get(pkg, sections[i]), key, v)
			add_dep(deps, "package.json", key, strlen(key), json_string_value(v));
	json_decref(pkg);
}

/* The end of a requirement's name: "requests>=2 ; python_version..." */
static size_t req_name_len(const char *s)
{
	return strcspn(s, "=<>!~[; \t\"'@,");
}

/* The line manifests: requirements.txt lines, go.mod require lines. */
void manifest_deps_text(json_t *deps, const char *manifest)
{
	FILE *fp = fopen(manifest, "r");
	char *line = NULL;
	size_t cap = 0;
	int in_require = 0;

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		char *s = line, *e;

		s[strcspn(s, "\r\n")] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (!strcmp(manifest, "requirements.txt")) {
			s[strcspn(s, ";#")] = '\0';	/* no environment markers, no comment */
			if (*s != '-')
				add_dep(deps, manifest, s, req_name_len(s), s + req_name_len(s));
		} else if (in_require && *s == ')') {
			in_require = 0;
		} else if (!strncmp(s, "require (", 9) || !strcmp(s, "require(")) {
			in_require = 1;
		} else if (in_require || !strncmp(s, "require ", 8)) {
			if (!in_require)
				s += 8;
			e = s + strcspn(s, " \t");
			e += strspn(e, " \t");
			e[strcspn(e, " \t")] = '\0';	/* no "// indirect" */
			add_dep(deps, manifest, s, strcspn(s, " \t"), e);
		}
	}
	free(line);
	fclose(fp);
}

/* A requirement string "name>=1.2 ; marker" as a dependency. */
static void add_req(json_t *deps, const char *manifest, const char *req)
{
	size_t n = req_name_len(req);

	add_dep(deps, manifest, req, n, req + n);
}

/* name = "1" or name = { version = "1", ... } entries of a TOML table. */
static void add_table_deps(json_t *deps, const char *manifest, json_t *t)
{
	const char *name;
	json_t *v;

	json_object_foreach(t, name, v) {
		const char *ver = json_string_value(json_is_object(v) ? json_object_get(v, "version") : v);
		if (!strcmp(manifest, "pyproject.toml") && !strcmp(name, "python"))
			continue;	/* poetry's interpreter, not a package */
		add_dep(deps, manifest, name, strlen(name), ver ? ver : "");
	}
}

/* Requirement strings of an array (PEP 621, PEP 735). */
static void add_array_reqs(json_t *deps, const char *manifest, json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (json_is_string(v))
			add_req(deps, manifest, json_string_value(v));
}

/*
 * pyproject.toml and Cargo.toml, parsed with toml++ (toml_file_json): PEP 621's
 * [project] dependencies and optional-dependencies, PEP 735's dependency-groups,
 * Poetry's [tool.poetry.*dependencies] and groups; Cargo's dependencies,
 * dev-dependencies and build-dependencies, also under [target.*].  A file that
 * does not parse is a warning and gives nothing.
 */
static void deps_toml(json_t *deps, const char *manifest, const struct context_toml *toml)
{
	static const char *const cargo_kinds[] = { "dependencies", "dev-dependencies",
						   "build-dependencies" };
	char *err = NULL, *text;
	json_t *root, *t, *v;
	const char *key;
	size_t i;

	if (!toml || !toml->file_json || access(manifest, F_OK) < 0)
		return;
	text = toml->file_json(manifest, &err);
	root = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (!root) {
		warning("metadata: %s: %s", manifest, err ? err : "not TOML");
		free(err);
		return;
	}
	if (!strcmp(manifest, "pyproject.toml")) {
		json_t *project = json_object_get(root, "project");
		json_t *poetry = json_object_get(json_object_get(root, "tool"), "poetry");

		add_array_reqs(deps, manifest, json_object_get(project, "dependencies"));
		json_object_foreach(json_object_get(project, "optional-dependencies"), key, v)
			add_array_reqs(deps, manifest, v);
		json_object_foreach(json_object_get(root, "dependency-groups"), key, v)
			add_array_reqs(deps, manifest, v);
		add_table_deps(deps, manifest, json_object_get(poetry, "dependencies"));
		add_table_deps(deps, manifest, json_object_get(poetry, "dev-dependencies"));
		json_object_foreach(json_object_get(poetry, "group"), key, v)
			add_table_deps(deps, manifest, json_object_get(v, "dependencies"));
	} else {
		for (i = 0; i < ARRAY_SIZE(cargo_kinds); i++)
			add_table_deps(deps, manifest, json_object_get(root, cargo_kinds[i]));
		json_object_foreach(json_object_get(root, "target"), key, t)
			for (i = 0; i < ARRAY_SIZE(cargo_kinds); i++)
				add_table_deps(deps, manifest, json_object_get(t, cargo_kinds[i]));
	}
	json_decref(root);
}

json_t *manifest_deps(const struct context_toml *toml)
{
	static const char *const manifests[] = { "requirements.txt", "pyproject.toml", "go.mod",
						 "Cargo.toml" };
	json_t *deps = json_array();
	size_t i;

	deps_package_json(deps);
	for (i = 0; i < ARRAY_SIZE(manifests); i++) {
		if (strstr(manifests[i], ".toml"))
			deps_toml(deps, manifests[i], toml);
		else
			manifest_deps_text(deps, manifests[i]);
	}
	return deps;
}
