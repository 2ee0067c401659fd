/*
 * args.c: a tool call's arguments, checked and turned into the argv of the
 * command that answers it (libcommon/mcp, mcp.h).  Arguments are checked
 * against the subset of JSON Schema the tables use; parameters that are paths
 * are confined to the repository; argv is built from the table's groups of
 * elements, a "{param}" element replaced by the value as one whole element.
 */
#include "mcp/internal.h"

#include <ctype.h>

/* ---- validation against the tool's schema (the subset the tables use) ---- */

/* The characters (code points) of a UTF-8 string, as JSON Schema counts lengths. */
static size_t utf8_chars(json_t *v)
{
	const unsigned char *s = (const unsigned char *)json_string_value(v);
	size_t n = 0, len = json_string_length(v);

	for (size_t i = 0; i < len; i++)
		n += (s[i] & 0xc0) != 0x80;
	return n;
}

/* A schema's "pattern" compiled, or NULL with why (its message and offset) in why[0..n). */
pcre2_code *mcp_pattern_compile(const char *re, char *why, size_t n)
{
	int err;
	PCRE2_SIZE off;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off, NULL);

	if (!code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof(msg));
		snprintf(why, n, "%s at offset %zu", (const char *)msg, (size_t)off);
	}
	return code;
}

/* Does s match the schema's "pattern" (a regular expression, unanchored, as JSON Schema says)? */
static int pattern_matches(const char *re, const char *s)
{
	char why[300];
	pcre2_code *code = mcp_pattern_compile(re, why, sizeof(why));	/* mcp_table_check compiled it once */
	pcre2_match_data *md;
	int rc;

	if (!code)
		return 0;
	md = pcre2_match_data_create_from_pattern(code, NULL);
	rc = pcre2_match(code, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(code);
	return rc >= 0;
}

/* NULL if args fit the schema, else a malloc'd message naming the parameter. */
char *mcp_validate(json_t *schema, json_t *args)
{
	json_t *props = json_object_get(schema, "properties"), *req = json_object_get(schema, "required");
	const char *k;
	json_t *v;
	size_t i;

	if (!json_is_object(args))
		return xstrdup("arguments must be an object");
	json_array_foreach(req, i, v) {
		if (!json_object_get(args, json_string_value(v)))
			return xasprintf("missing required parameter '%s'", json_string_value(v));
	}
	json_object_foreach(args, k, v) {
		json_t *p = json_object_get(props, k);
		const char *type;

		if (!p)
			return xasprintf("unknown parameter '%s'", k);
		type = json_string_value(json_object_get(p, "type"));
		if (!type)
			continue;
		if (!strcmp(type, "string")) {
			json_t *en = json_object_get(p, "enum"), *e;
			json_t *mnl = json_object_get(p, "minLength"), *mxl = json_object_get(p, "maxLength");
			size_t j;
			int ok = !en;
			if (!json_is_string(v))
				return xasprintf("parameter '%s' must be a string", k);
			if (json_is_integer(mnl) && utf8_chars(v) < (size_t)json_integer_value(mnl))
				return xasprintf("parameter '%s' must not be empty", k);
			if (json_is_integer(mxl) && utf8_chars(v) > (size_t)json_integer_value(mxl))
				return xasprintf("parameter '%s' must be at most %lld characters long", k,
						 (long long)json_integer_value(mxl));
			if (memchr(json_string_value(v), '\0', json_string_length(v)))
				return xasprintf("parameter '%s' must not contain NUL characters", k);
			if (json_is_string(json_object_get(p, "pattern")) &&
			    !pattern_matches(json_string_value(json_object_get(p, "pattern")), json_string_value(v)))
				return xasprintf("parameter '%s' must match %s, got '%s'", k,
						 json_string_value(json_object_get(p, "pattern")), json_string_value(v));
			json_array_foreach(en, j, e)
				ok |= json_equal(e, v);
			if (!ok) {
				char *allowed = json_dumps(en, JSON_COMPACT);
				char *m = xasprintf("parameter '%s' must be one of %s", k, allowed);
				free(allowed);
				return m;
			}
		} else if (!strcmp(type, "integer") || !strcmp(type, "number")) {
			json_t *mn = json_object_get(p, "minimum"), *mx = json_object_get(p, "maximum");
			int integer = !strcmp(type, "integer");
			double x;
			if (integer ? !json_is_integer(v) : !json_is_number(v))
				return xasprintf("parameter '%s' must be %s", k, integer ? "an integer" : "a number");
			x = json_number_value(v);
			if ((mn && x < json_number_value(mn)) || (mx && x > json_number_value(mx))) {
				if (mn && mx)
					return xasprintf("parameter '%s' must be from %g to %g, got %g", k,
							 json_number_value(mn), json_number_value(mx), x);
				if (mn)
					return xasprintf("parameter '%s' must be at least %g, got %g", k,
							 json_number_value(mn), x);
				return xasprintf("parameter '%s' must be at most %g, got %g", k,
						 json_number_value(mx), x);
			}
		} else if (!strcmp(type, "boolean")) {
			if (!json_is_boolean(v))
				return xasprintf("parameter '%s' must be true or false", k);
		} else if (!strcmp(type, "array")) {
			const char *it = json_string_value(json_object_get(json_object_get(p, "items"), "type"));
			json_t *e;
			size_t j;
			if (!json_is_array(v))
				return xasprintf("parameter '%s' must be an array", k);
			json_t *items = json_object_get(p, "items");
			json_t *imn = json_object_get(items, "minLength"), *imx = json_object_get(items, "maxLength");
			json_array_foreach(v, j, e) {
				if (it && !strcmp(it, "string") &&
				    (!json_is_string(e) || memchr(json_string_value(e), '\0', json_string_length(e))))
					return xasprintf("parameter '%s' must be an array of strings", k);
				if (json_is_string(e) && json_is_integer(imn) && utf8_chars(e) < (size_t)json_integer_value(imn))
					return xasprintf("parameter '%s[%zu]' must not be empty", k, j);
				if (json_is_string(e) && json_is_integer(imx) && utf8_chars(e) > (size_t)json_integer_value(imx))
					return xasprintf("parameter '%s[%zu]' must be at most %lld characters long", k, j,
							 (long long)json_integer_value(imx));
				if (it && !strcmp(it, "integer") && !json_is_integer(e))
					return xasprintf("parameter '%s[%zu]' must be an integer", k, j);
			}
			if (json_is_integer(json_object_get(p, "minItems")) &&
			    json_array_size(v) < (size_t)json_integer_value(json_object_get(p, "minItems")))
				return json_integer_value(json_object_get(p, "minItems")) == 1 ?
				       xasprintf("parameter '%s' must not be empty", k) :
				       xasprintf("parameter '%s' must have at least %lld elements", k,
						 (long long)json_integer_value(json_object_get(p, "minItems")));
		}
	}
	return NULL;
}

/*
 * Resolve a client's path against the repository root; refuse what leaves it
 * (.., an absolute path elsewhere, a symlink out).  Returns a malloc'd
 * root-relative path, or NULL with *why set.
 */
char *mcp_confine(const char *root, const char *p, const char **why)
{
	char *abs = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", root, p);
	char *real = realpath(abs, NULL);
	size_t rl = strlen(root);
	char *rel = NULL;

	free(abs);
	if (!real) {
		*why = "does not exist";
		return NULL;
	}
	if (!strcmp(real, root))
		rel = xstrdup(".");
	else if (!strncmp(real, root, rl) && real[rl] == '/')
		rel = xstrdup(real + rl + 1);
	else
		*why = "is outside the repository";
	free(real);
	return rel;
}

/*
 * The same without the file system, for a path inside a commit: "a/./b" is
 * "a/b"; "..", and an absolute path not under the root, are refused.
 */
char *mcp_confine_lexical(const char *root, const char *p, const char **why)
{
	struct buf b = BUF_INIT;
	size_t rl = strlen(root);
	const char *s = p, *e;

	if (p[0] == '/') {
		if (strncmp(p, root, rl) || (p[rl] != '/' && p[rl]))
			goto outside;
		s = p + rl;
	}
	for (; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, '/');
		if (e == s || (e - s == 1 && s[0] == '.'))
			continue;
		if (e - s == 2 && s[0] == '.' && s[1] == '.')
			goto outside;
		if (b.len)
			buf_addch(&b, '/');
		buf_add(&b, s, (size_t)(e - s));
	}
	if (!b.len) {
		*why = "is not a file";
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
outside:
	*why = "is outside the repository";
	buf_release(&b);
	return NULL;
}

/* ---- argv templates ---- */

/* Words too common to look for in a lexical stand-in of a ranked search. */
static const char *const stopwords[] = {
	"about", "also", "because", "been", "being", "code", "could", "does", "doing", "done", "each",
	"file", "files", "find", "from", "function", "functions", "have", "here", "into", "just",
	"like", "made", "make", "more", "most", "only", "other", "over", "should", "show", "some",
	"such", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those",
	"used", "uses", "using", "what", "when", "where", "which", "while", "will", "with", "would",
};

static int is_stopword(const char *s, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(stopwords); i++)
		if (strlen(stopwords[i]) == n && !strncasecmp(s, stopwords[i], n))
			return 1;
	return 0;
}

/* An identifier rather than a word: has '_', a digit, or a capital after the start. */
static int is_identifier(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '_' || isdigit((unsigned char)s[i]) || (i && isupper((unsigned char)s[i])))
			return 1;
	return 0;
}

/*
 * "{query|words}": the query's words as a PCRE2 alternation, for a lexical
 * stand-in of a ranked search: its identifiers if it has any, else its words of
 * four or more letters that are not too common, else all of three or more; a
 * query without such words is matched literally.
 */
char *mcp_words_regex(const char *q)
{
	struct buf b = BUF_INIT;
	int n = 0;

	for (int pass = 0; pass < 3 && !n; pass++) {
		const char *p = q;
		while (*p && n < 12) {
			const char *s;
			size_t l;
			while (*p && !(isalnum((unsigned char)*p) || *p == '_'))
				p++;
			s = p;
			while (*p && (isalnum((unsigned char)*p) || *p == '_'))
				p++;
			l = (size_t)(p - s);
			if (l < 3 || (pass == 0 && !is_identifier(s, l)) ||
			    (pass == 1 && (l < 4 || is_stopword(s, l))))
				continue;
			buf_addstr(&b, n++ ? "|" : "(?:");
			buf_add(&b, s, l);
		}
	}
	if (n) {
		buf_addch(&b, ')');
		return buf_detach(&b, NULL);
	}
	for (const char *p = q; *p; p++) {
		if (!isalnum((unsigned char)*p) && !((unsigned char)*p & 0x80))
			buf_addch(&b, '\\');
		buf_addch(&b, *p);
	}
	return buf_detach(&b, NULL);
}

/* The value of a parameter as an argv element, or NULL (absent, or false). */
static char *param_text(json_t *args, json_t *schema, const char *name, int *is_bool)
{
	const char *bar = strchr(name, '|');
	char *pname = bar ? xstrndup(name, (size_t)(bar - name)) : xstrdup(name);
	json_t *v = json_object_get(args, pname);
	json_t *p = json_object_get(json_object_get(schema, "properties"), pname);
	char *r = NULL;

	free(pname);
	*is_bool = 0;
	if (!v && p)
		v = json_object_get(p, "default");
	if (!v || json_is_null(v))
		return NULL;
	if (json_is_boolean(v)) {
		*is_bool = 1;
		return json_is_true(v) ? xstrdup("") : NULL;
	}
	if (json_is_string(v))
		r = xstrdup(json_string_value(v));
	else if (json_is_integer(v))
		r = xasprintf("%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		r = xasprintf("%.17g", json_real_value(v));
	if (r && bar && !strcmp(bar + 1, "words")) {
		char *w = mcp_words_regex(r);
		free(r);
		r = w;
	}
	return r;
}

/* The array a group's "{param}" has as its value, or NULL. */
static json_t *group_array(json_t *g, json_t *args, const char **name)
{
	json_t *e;
	size_t j;

	json_array_foreach(g, j, e) {
		const char *s = json_string_value(e);
		size_t l = s ? strlen(s) : 0;
		if (l > 2 && s[0] == '{' && s[l - 1] == '}') {
			char *n = xstrndup(s + 1, l - 2);
			json_t *v = json_object_get(args, n);
			free(n);
			if (json_is_array(v)) {
				*name = s;
				return v;
			}
		}
	}
	return NULL;
}

/*
 * Build argv from groups of elements; returns a NULL-terminated malloc'd
 * vector.  A group whose parameter is an array is repeated for each element.
 */
char **mcp_build_argv(json_t *groups, json_t *args, json_t *schema)
{
	char **argv = NULL;
	size_t nr = 0, alloc = 0, i, j;
	json_t *g, *e;

	json_array_foreach(groups, i, g) {
		char *vals[16];
		size_t nv = 0;
		int skip = 0;
		const char *aname;
		json_t *arr = group_array(g, args, &aname);

		if (arr) {
			json_t *one = json_array(), *a2 = json_copy(args), *x;
			size_t k;
			char *n = xstrndup(aname + 1, strlen(aname) - 2);
			json_array_append(one, g);
			json_array_foreach(arr, k, x) {
				char **sub;
				json_object_set(a2, n, x);
				sub = mcp_build_argv(one, a2, schema);
				for (size_t m = 0; sub[m]; m++) {
					ALLOC_GROW(argv, nr + 2, alloc);
					argv[nr++] = sub[m];
				}
				free(sub);
			}
			free(n);
			json_decref(a2);
			json_decref(one);
			continue;
		}

		json_array_foreach(g, j, e) {
			const char *s = json_string_value(e);
			size_t l = s ? strlen(s) : 0;
			if (!s || nv >= ARRAY_SIZE(vals))
				break;
			if (l > 2 && s[0] == '{' && s[l - 1] == '}') {
				char *name = xstrndup(s + 1, l - 2);
				int is_bool;
				char *val = param_text(args, schema, name, &is_bool);
				free(name);
				if (!val) {
					skip = 1;
					break;
				}
				if (is_bool) {
					free(val);
					continue;	/* a flag: the group's other elements say it */
				}
				vals[nv++] = val;
			} else {
				vals[nv++] = xstrdup(s);
			}
		}
		for (j = 0; j < nv; j++) {
			if (skip) {
				free(vals[j]);
				continue;
			}
			ALLOC_GROW(argv, nr + 2, alloc);
			argv[nr++] = vals[j];
		}
	}
	ALLOC_GROW(argv, nr + 1, alloc);
	argv[nr] = NULL;
	return argv;
}

void mcp_free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/*
 * --shards: the "repo" parameter each tool gets (unless its table has one), and
 * the commands that search a shard set.  The set itself reaches them as
 * $CI_SHARDS (libcommon/fleet).
 */
const char mcp_shards_repo_key[] = "x-ci-shards-repo";	/* marks a tool's added "repo" */

void mcp_shards_tools(json_t *tbl)
{
	json_t *tool;
	size_t i;

	json_array_foreach(json_object_get(tbl, "tools"), i, tool) {
		json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");

		if (!json_is_object(props) || json_object_get(props, "repo"))
			continue;
		json_object_set_new(props, "repo", json_pack("{s:s, s:s}", "type", "string", "description",
			"Only this repository of the shard set (names separated by commas); "
			"without it, every repository."));
		json_object_set_new(tool, mcp_shards_repo_key, json_true());
	}
}

/* argv with `--shards-repo <repo>` after argv[0] when the call names a repository
 * and its command searches a shard set; the old argv is freed or returned. */
char **mcp_shards_argv(json_t *tool, json_t *args, char **argv)
{
	const char *repo = json_string_value(json_object_get(args, "repo"));
	static const char *const fanned[] = { "ci-grep", "ci-rank", "ci-refs" };
	size_t n = 0, i;
	char **nv;

	if (!repo || !*repo || !json_is_true(json_object_get(tool, mcp_shards_repo_key)) || !argv[0])
		return argv;
	for (i = 0; i < ARRAY_SIZE(fanned) && strcmp(argv[0], fanned[i]); i++)
		;
	if (i == ARRAY_SIZE(fanned))
		return argv;
	while (argv[n])
		n++;
	nv = xcalloc(n + 3, sizeof(*nv));
	nv[0] = argv[0];
	nv[1] = xstrdup("--shards-repo");
	nv[2] = xstrdup(repo);
	memcpy(nv + 3, argv + 1, n * sizeof(*nv));
	free(argv);
	return nv;
}

/* Which argv groups serve these arguments ("when": "param" or "param=value"). */
json_t *mcp_pick_argv(json_t *tool, json_t *args)
{
	json_t *vars = json_object_get(tool, "variants"), *v;
	size_t i;

	if (!vars)
		return json_object_get(tool, "argv");
	json_array_foreach(vars, i, v) {
		const char *when = json_string_value(json_object_get(v, "when"));
		const char *eq;
		if (!when)
			return json_object_get(v, "argv");
		eq = strchr(when, '=');
		if (eq) {
			char *k = xstrndup(when, (size_t)(eq - when));
			json_t *a = json_object_get(args, k);
			free(k);
			if (json_is_string(a) && !strcmp(json_string_value(a), eq + 1))
				return json_object_get(v, "argv");
		} else if (json_object_get(args, when) && !json_is_false(json_object_get(args, when))) {
			return json_object_get(v, "argv");
		}
	}
	return NULL;
}

