/*
 * table.c: the tool tables (libcommon/mcp, mcp.h): the profiles compiled in
 * (share/mcp/<name>.json, embedded as mcp-profiles.c) or a table file, checked
 * for what the server relies on with their jq programs compiled (map.c); a
 * profile's configuration file; and tools/list.
 */
#include "mcp/internal.h"
#include "core/toml-json.h"

#include <unistd.h>

extern const char ci_mcp_profile_ci[], ci_mcp_profile_kit[], ci_mcp_profile_shaktiman[],
	ci_mcp_profile_abstract[], ci_mcp_profile_codebase_context[], ci_mcp_profile_bobbin[];

/* The profiles compiled in; issue 8 adds more. */
const struct mcp_profile mcp_profiles[] = {
	{ "ci", ci_mcp_profile_ci },
	{ "kit", ci_mcp_profile_kit },
	{ "shaktiman", ci_mcp_profile_shaktiman },
	{ "abstract", ci_mcp_profile_abstract },
	{ "codebase-context", ci_mcp_profile_codebase_context },
	{ "bobbin", ci_mcp_profile_bobbin },
};
const size_t mcp_profiles_nr = ARRAY_SIZE(mcp_profiles);

json_t *mcp_find_tool(struct mcp_server *srv, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(srv->table, "tools"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")), name))
			return t;
	return NULL;
}

json_t *mcp_tools_list(struct mcp_server *srv)
{
	json_t *tools = json_array(), *t;
	size_t i;

	json_array_foreach(json_object_get(srv->table, "tools"), i, t) {
		json_t *o = json_pack("{s:O, s:O, s:O}", "name", json_object_get(t, "name"),
				      "description", json_object_get(t, "description"),
				      "inputSchema", json_object_get(t, "inputSchema"));
		if (json_object_get(t, "title"))
			json_object_set(o, "title", json_object_get(t, "title"));
		if (json_object_get(t, "outputSchema"))
			json_object_set(o, "outputSchema", json_object_get(t, "outputSchema"));
		if (json_object_get(t, "annotations"))
			json_object_set(o, "annotations", json_object_get(t, "annotations"));
		json_array_append_new(tools, o);
	}
	return json_pack("{s:o}", "tools", tools);
}

/* What is wrong with the table's "config" and "resources"; NULL when nothing. */
static char *check_config_resources(struct mcp_server *srv, json_t *t, const char *name)
{
	json_t *res = json_object_get(t, "resources"), *r;
	size_t i;

	if (json_object_get(t, "config")) {
		json_t *cfg = json_object_get(t, "config");
		const char *file = json_string_value(json_object_get(cfg, "file"));
		char *err, *m;
		if (!file || !*file || *file == '/' || strstr(file, "..") || !json_object_get(cfg, "defaults"))
			return xasprintf("%s: \"config\" wants \"file\" (a path in the repository) and \"defaults\"",
					 name);
		if (mcp_map_compile(&srv->map, cfg, &err) < 0) {
			m = xasprintf("%s: config: %s", name, err);
			free(err);
			return m;
		}
	}
	json_array_foreach(res, i, r)
		if (!json_is_string(json_object_get(r, "uri")) || !json_is_string(json_object_get(r, "name")) ||
		    !json_is_array(json_object_get(r, "argv")))
			return xasprintf("%s: resource %zu wants \"uri\", \"name\" and \"argv\"", name, i);
	if (res && !json_is_array(res))
		return xasprintf("%s: \"resources\" must be an array", name);
	return NULL;
}

/* What is wrong with tool i, called tn; NULL when nothing. */
static char *check_tool(struct mcp_server *srv, json_t *tool, const char *name, size_t i)
{
	const char *tn = json_string_value(json_object_get(tool, "name"));
	json_t *schema = json_object_get(tool, "inputSchema"), *prop;
	const char *builtin = json_string_value(json_object_get(tool, "builtin")), *pn;
	char *err, *m, why[300];

	if (!tn)
		return xasprintf("%s: tool %zu has no \"name\"", name, i);
	if (!json_is_string(json_object_get(tool, "description")))
		return xasprintf("%s: tool '%s' has no \"description\"", name, tn);
	if (!json_is_object(schema) || !json_is_object(json_object_get(schema, "properties")))
		return xasprintf("%s: tool '%s' has no \"inputSchema\" with \"properties\"", name, tn);
	if (!builtin && !json_is_array(json_object_get(tool, "argv")) &&
	    !json_is_array(json_object_get(tool, "variants")))
		return xasprintf("%s: tool '%s' has neither \"argv\", \"variants\" nor \"builtin\"", name, tn);
	if (json_object_get(tool, "stdin")) {
		const char *in = json_string_value(json_object_get(tool, "stdin"));
		json_t *ip = in ? json_object_get(json_object_get(schema, "properties"), in) : NULL;
		if (!ip || strcmp(json_string_value(json_object_get(ip, "type")) ?: "", "string"))
			return xasprintf("%s: tool '%s': \"stdin\" must name a string parameter", name, tn);
	}
	if (builtin && strcmp(builtin, "read"))
		return xasprintf("%s: tool '%s': unknown builtin '%s'", name, tn, builtin);
	if (mcp_map_compile(&srv->map, tool, &err) < 0) {
		m = xasprintf("%s: tool '%s': %s", name, tn, err);
		free(err);
		return m;
	}
	json_object_foreach(json_object_get(schema, "properties"), pn, prop) {
		const char *re = json_string_value(json_object_get(prop, "pattern"));
		pcre2_code *code = re ? mcp_pattern_compile(re, why, sizeof(why)) : NULL;
		if (re && !code)
			return xasprintf("%s: tool '%s': parameter '%s': \"pattern\" %s", name, tn, pn, why);
		pcre2_code_free(code);
	}
	return NULL;
}

char *mcp_table_check(struct mcp_server *srv, json_t *t, const char *name)
{
	json_t *tools = json_object_get(t, "tools"), *tool;
	char *why;
	size_t i;

	if (!json_is_array(tools))
		return xasprintf("%s: the table has no \"tools\" array", name);
	if ((why = check_config_resources(srv, t, name)))
		return why;
	json_array_foreach(tools, i, tool)
		if ((why = check_tool(srv, tool, name, i)))
			return why;
	return NULL;
}

/* Check t, loaded from name, and serve it; dies when it is wrong. */
static void table_use(struct mcp_server *srv, json_t *t, const char *name)
{
	char *why = mcp_table_check(srv, t, name);

	if (why)
		die("%s", why);
	srv->table = t;
}

void mcp_load_table(struct mcp_server *srv, const char *file)
{
	json_error_t jerr;
	json_t *t = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);

	if (!t)
		die("%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
	table_use(srv, t, file);
}

int mcp_load_profile(struct mcp_server *srv, const char *name, int eager)
{
	json_error_t jerr;
	json_t *t = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mcp_profiles); i++)
		if (!strcmp(mcp_profiles[i].name, name)) {
			t = json_loads(mcp_profiles[i].json, 0, &jerr);
			if (!t)
				die("tool table %s: %d:%d: %s", name, jerr.line, jerr.column, jerr.text);
			/* the tests compile every program of these; --list-tools still does */
			mcp_map_lazy(&srv->map, !eager);
			table_use(srv, t, name);
			mcp_map_lazy(&srv->map, 0);
			return 0;
		}
	if (name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_")] == '\0' && *name) {
		char *paths[2] = { xasprintf("%s/share/mcp/%s.json", srv->bindir, name),
				   xasprintf("%s/mcp/%s.json", CI_PKGDATADIR, name) };
		for (i = 0; i < 2 && !srv->table; i++) {
			if (access(paths[i], R_OK) < 0)
				continue;
			t = json_load_file(paths[i], JSON_REJECT_DUPLICATES, &jerr);
			if (!t)
				die("%s:%d:%d: %s", paths[i], jerr.line, jerr.column, jerr.text);
			table_use(srv, t, paths[i]);
		}
		free(paths[0]);
		free(paths[1]);
		if (srv->table)
			return 0;
	}
	return -1;
}

/*
 * A profile's configuration file, read as the system it serves reads its own
 * (shaktiman's .shaktiman/shaktiman.toml): the table's "config" names a TOML
 * file in the repository and a jq program, "defaults", that turns its contents
 * into {tool: {parameter: default}} and refuses a bad value with error(...).
 * The defaults go into the tools' input schemas, so tools/list shows them and
 * calls get them.  No file: the table's defaults.  A file that does not parse
 * or holds a bad value: the server does not start, saying why.
 */
static json_t *config_defaults(struct mcp_server *srv, json_t *cfg, const char *path, char **err)
{
	json_t *doc, *defs;
	char *text, *e = NULL;
	json_error_t jerr;

	text = toml_file_json(path, &e);
	if (!text) {
		*err = xasprintf("%s: %s", path, e);
		free(e);
		return NULL;
	}
	doc = json_loads(text, 0, &jerr);
	free(text);
	if (!doc) {
		*err = xasprintf("%s: %s", path, jerr.text);
		return NULL;
	}
	defs = mcp_map_run(&srv->map, cfg, "defaults", doc, &e);
	json_decref(doc);
	if (!defs)
		*err = xasprintf("%s: %s", path, e ? e : "the defaults program gave nothing");
	else if (!json_is_object(defs))
		*err = xasprintf("%s: the defaults program gave no object", path);
	free(e);
	if (*err) {
		json_decref(defs);
		return NULL;
	}
	return defs;
}

int mcp_apply_config(struct mcp_server *srv, char **err)
{
	json_t *cfg = json_object_get(srv->table, "config"), *defs, *params, *v;
	const char *tn, *pn;
	char *path;

	*err = NULL;
	if (!cfg)
		return 0;
	path = xasprintf("%s/%s", srv->root, json_string_value(json_object_get(cfg, "file")));
	if (access(path, F_OK) < 0) {
		free(path);
		return 0;
	}
	if (!(defs = config_defaults(srv, cfg, path, err)))
		goto done;
	json_object_foreach(defs, tn, params) {
		json_t *tool = mcp_find_tool(srv, tn), *props;
		if (!tool || !json_is_object(params)) {
			*err = xasprintf("%s: no tool '%s' to set defaults of", path, tn);
			goto done;
		}
		props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
		json_object_foreach(params, pn, v) {
			json_t *prop = json_object_get(props, pn);
			if (!prop) {
				*err = xasprintf("%s: tool '%s' has no parameter '%s'", path, tn, pn);
				goto done;
			}
			json_object_set(prop, "default", v);
		}
	}
done:
	json_decref(defs);
	free(path);
	return *err ? -1 : 0;
}
