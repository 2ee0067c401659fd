/*
 * archive.c: the archive records of .bobbin/config.toml's sources: dated
 * Markdown files with frontmatter and JSONL files, read whole, a folder tree
 * per source (see docs.h).
 */
#include "core/common.h"
#include "context/context.h"
#include "context/docs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <time.h>
#include <sys/stat.h>

/* "YYYY-MM-DD" at s (a date field, or in a path as YYYY/MM/DD or YYYY-MM-DD) into out[11]. */
static int date_at(const char *s, char out[11])
{
	if (isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
	    isdigit((unsigned char)s[3]) && (s[4] == '-' || s[4] == '/') && isdigit((unsigned char)s[5]) &&
	    isdigit((unsigned char)s[6]) && s[7] == s[4] && isdigit((unsigned char)s[8]) && isdigit((unsigned char)s[9])) {
		snprintf(out, 11, "%.4s-%.2s-%.2s", s, s + 5, s + 8);
		return 1;
	}
	return 0;
}

static void date_of(const char *field, const char *path, char out[11])
{
	out[0] = '\0';
	if (field && date_at(field, out))
		return;
	for (; path && *path; path++)
		if (date_at(path, out))
			return;
}

int docs_date_ok(const char *v)
{
	char d[11];
	int y, m, dd;

	return strlen(v) == 10 && date_at(v, d) && v[4] == '-' && sscanf(v, "%d-%d-%d", &y, &m, &dd) == 3 &&
	       m >= 1 && m <= 12 && dd >= 1 && dd <= 31;
}

/* Add a record of source src to the docs. */
static void add_record(struct doc_set *ds, const struct archive_source *src, const char *rel,
		       json_t *meta, const char *body)
{
	const char *id = json_string_value(json_object_get(meta, "id"));
	const char *nf = src->name_field ? json_string_value(json_object_get(meta, src->name_field)) : NULL;
	const char *df = json_string_value(json_object_get(meta, "timestamp"));
	char *name, *content = ctx_cut_text(body, 500), epoch_day[11];
	json_t *ts = json_object_get(meta, "timestamp");
	struct doc *x;

	/* a JSONL timestamp in seconds (or milliseconds) since the epoch */
	if (json_is_number(ts) && json_number_value(ts) > 0 && json_number_value(ts) < 1e15) {
		double t = json_number_value(ts);
		time_t secs = (time_t)(t > 1e11 ? t / 1000 : t);
		struct tm tm;
		if (gmtime_r(&secs, &tm) && strftime(epoch_day, sizeof(epoch_day), "%Y-%m-%d", &tm))
			df = epoch_day;
	}

	if (!df)
		df = json_string_value(json_object_get(meta, "date"));
	name = nf ? xasprintf("%s/%s", nf, id ? id : rel) : xstrdup(id ? id : rel);
	x = doc_set_add(ds);
	date_of(df, rel, x->date);
	x->text = xasprintf("%s\n%s", name, body);
	x->rec = json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:s, s:s}", "_type", "archive_record", "id", id, "source",
			   src->name, "name", name, "date", x->date[0] ? x->date : NULL, "path", rel, "content", content);
	free(name);
	free(content);
}

/* Markdown: "---" frontmatter of "key: value" lines (a nested block's keys flattened), then the body. */
static void read_markdown(struct doc_set *ds, const struct archive_source *src, const char *rel,
			  const char *text)
{
	json_t *meta = json_object();
	const char *p = text, *body = text;

	if (!strncmp(p, "---\n", 4) || !strncmp(p, "---\r\n", 5)) {
		p += p[3] == '\r' ? 5 : 4;
		while (*p) {
			const char *e = strchr(p, '\n'), *colon;
			size_t l = e ? (size_t)(e - p) : strlen(p);
			if (l && p[l - 1] == '\r')	/* CRLF lines */
				l--;
			if (l == 3 && !strncmp(p, "---", 3)) {
				body = e ? e + 1 : p + l;
				break;
			}
			colon = memchr(p, ':', l);
			if (colon) {
				const char *k = p, *v = colon + 1;
				while (k < colon && (*k == ' ' || *k == '\t'))
					k++;
				while (v < p + l && (*v == ' ' || *v == '\t'))
					v++;
				if (colon > k && v < p + l) {
					char *key = xstrndup(k, (size_t)(colon - k)), *val = xstrndup(v, (size_t)(p + l - v));
					size_t vl = strlen(val);
					if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
						memmove(val, val + 1, vl - 2);
						val[vl - 2] = '\0';
					}
					json_t *jv = json_string(val);	/* NULL: not UTF-8 */
					json_object_set_new(meta, key, jv ? jv : json_null());
					free(key);
					free(val);
				}
			}
			p = e ? e + 1 : p + l;
		}
	}
	if (src->schema && (!json_string_value(json_object_get(meta, "schema")) ||
			    strcmp(json_string_value(json_object_get(meta, "schema")), src->schema))) {
		json_decref(meta);
		return;	/* another kind of record */
	}
	body += strspn(body, "\n");
	add_record(ds, src, rel, meta, body);
	json_decref(meta);
}

/* JSONL: a record a line; its text from text, content, body or message. */
static void read_jsonl(struct doc_set *ds, const struct archive_source *src, const char *rel,
		       const char *text)
{
	static const char *const keys[] = { "text", "content", "body", "message" };
	const char *p = text;
	size_t lineno = 0;

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		json_t *r;
		lineno++;
		if (l) {
			r = json_loadb(p, l, 0, NULL);
			if (!json_is_object(r)) {
				fprintf(stderr, "%s: %s/%s:%zu: not a JSON object, left out\n", progname, src->path, rel,
					lineno);
			} else {
				const char *body = NULL;
				char *at = xasprintf("%s:%zu", rel, lineno);
				for (size_t k = 0; k < ARRAY_SIZE(keys) && !body; k++)
					body = json_string_value(json_object_get(r, keys[k]));
				if (json_is_integer(json_object_get(r, "id")))
					json_object_set_new(r, "id", json_sprintf("%lld", (long long)json_integer_value(json_object_get(r, "id"))));
				add_record(ds, src, at, r, body ? body : "");
				free(at);
			}
			json_decref(r);
		}
		p = e ? e + 1 : p + l;
	}
}

/* The names in dir, but those starting with a dot, sorted, into *names; -1 when it cannot be read. */
static int list_dir(const struct archive_source *src, const char *dir, char ***names, size_t *nr)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	size_t al = 0;

	*names = NULL;
	*nr = 0;
	if (!dh)
		return error("archive: cannot read '%s' (source '%s'): %s", dir, src->name, strerror(errno));
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		ALLOC_GROW(*names, *nr + 1, al);
		(*names)[(*nr)++] = xstrdup(de->d_name);
	}
	closedir(dh);
	qsort(*names, *nr, sizeof(**names), ctx_cmp_str);
	return 0;
}

static int read_source_dir(struct doc_set *ds, const struct archive_source *src, const char *rel);

/* The file or folder name in src's rel (r: its path under src's path). */
static int read_source_entry(struct doc_set *ds, const struct archive_source *src, const char *r,
			     const char *name)
{
	char *full = xasprintf("%s/%s", src->path, r), *text = NULL;
	size_t len = 0, nl = strlen(name);
	struct stat st;
	int ret = 0;

	if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
		ret = read_source_dir(ds, src, r);
	} else if ((nl > 3 && !strcmp(name + nl - 3, ".md")) ||
		   (nl > 6 && !strcmp(name + nl - 6, ".jsonl"))) {
		if (read_file(full, &text, &len) < 0)
			ret = error("archive: cannot read '%s': %s", full, strerror(errno));
		else if (memchr(text, '\0', len))
			fprintf(stderr, "%s: %s: binary, left out\n", progname, full);
		else if (name[nl - 1] == 'd')
			read_markdown(ds, src, r, text);
		else
			read_jsonl(ds, src, r, text);
		free(text);
	}
	free(full);
	return ret;
}

/* Every .md and .jsonl file under src's path/rel, in path order. */
static int read_source_dir(struct doc_set *ds, const struct archive_source *src, const char *rel)
{
	char *dir = *rel ? xasprintf("%s/%s", src->path, rel) : xstrdup(src->path);
	char **names;
	size_t nr, i;
	int ret = list_dir(src, dir, &names, &nr);

	for (i = 0; i < nr; i++) {
		char *r = *rel ? xasprintf("%s/%s", rel, names[i]) : xstrdup(names[i]);

		if (!ret)
			ret = read_source_entry(ds, src, r, names[i]);
		free(r);
		free(names[i]);
	}
	free(names);
	free(dir);
	return ret;
}

int archive_read_source(struct doc_set *ds, const struct archive_source *src)
{
	return read_source_dir(ds, src, "");
}

int archive_open(struct archive *a, const char *sub, const struct context_toml *toml)
{
	char *err = NULL, *text;
	json_t *arch, *srcs, *e;
	size_t i;
	json_error_t je;

	memset(a, 0, sizeof(*a));
	if (access(".bobbin/config.toml", F_OK) < 0)
		return error("%s: no archive sources configured ([[archive.sources]] in .bobbin/config.toml)", sub);
	text = toml->file_json(".bobbin/config.toml", &err);
	if (!text) {
		error("%s: .bobbin/config.toml: %s", sub, err ? err : "cannot read");
		free(err);
		return -1;
	}
	a->cfg = json_loads(text, 0, &je);
	free(text);
	arch = json_object_get(a->cfg, "archive");
	srcs = json_object_get(arch, "sources");
	if (!json_is_true(json_object_get(arch, "enabled")) || !json_array_size(srcs))
		return error("%s: no archive sources configured ([archive] enabled = true and [[archive.sources]] in "
			     ".bobbin/config.toml)", sub);
	a->src = xcalloc(json_array_size(srcs), sizeof(*a->src));
	json_array_foreach(srcs, i, e) {
		struct archive_source *s = &a->src[i];

		s->name = json_string_value(json_object_get(e, "name"));
		s->path = json_string_value(json_object_get(e, "path"));
		s->schema = json_string_value(json_object_get(e, "schema"));
		s->name_field = json_string_value(json_object_get(e, "name_field"));
		if (!s->name || !*s->name || !s->path || !*s->path)
			return error("%s: .bobbin/config.toml: archive source %zu needs a name and a path", sub, i + 1);
	}
	a->nr = json_array_size(srcs);
	return 0;
}

void archive_release(struct archive *a)
{
	free(a->src);
	json_decref(a->cfg);
	memset(a, 0, sizeof(*a));
}

const struct archive_source *archive_find(const struct archive *a, const char *name)
{
	for (size_t i = 0; i < a->nr; i++)
		if (!strcmp(a->src[i].name, name))
			return &a->src[i];
	return NULL;
}

void archive_filter(struct doc_set *ds, size_t first, const char *after, const char *before,
		    const char *filter)
{
	size_t j, k = first, fl = filter ? strlen(filter) : 0;
	struct doc *d = ds->d;

	for (j = first; j < ds->n; j++) {
		const char *name = json_string_value(json_object_get(d[j].rec, "name"));
		int keep = (!after || (d[j].date[0] && strcmp(d[j].date, after) >= 0)) &&
			   (!before || (d[j].date[0] && strcmp(d[j].date, before) <= 0)) &&
			   (!filter || (!strncmp(name, filter, fl) && name[fl] == '/'));
		if (keep) {
			d[k++] = d[j];
		} else {
			free(d[j].text);
			json_decref(d[j].rec);
		}
	}
	ds->n = k;
}
