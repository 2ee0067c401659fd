/*
 * vec-tool: compare, check and rank the vectors of NDJSON records, for ci-embed's
 * tests (jq cannot read base64 float32) and its retrieval evaluation (bench/).
 *
 *   vec-tool cos <a> <b>          cosine of line i of <a> with line i of <b>, one a line
 *   vec-tool norm <a>             the L2 norm of each line's vector
 *   vec-tool maxdiff <a> <b>      the largest |a[k] - b[k]| of line i of <a> and of <b>
 *   vec-tool prefix <n> <a>       each line's first <n> values, L2-normalised, as
 *                                 {"n": <values it had>, "vec": [...]} (Matryoshka dims)
 *   vec-tool rank <queries> <chunks>
 *                                 for each query (a record with "vec" and "want":
 *                                 "<path>" or "<path>:<name>"), the rank of the
 *                                 first chunk it wants among <chunks> by cosine;
 *                                 then "mrr", "r@1", "r@5", "r@10" over all queries
 *
 * A vector is "vec": base64 of little-endian float32 (ci-embed) or an array of
 * numbers (the golden files).  Lines without one are skipped by norm and rank and
 * are an error for cos.  Exit 0, or 3 with a message.
 */
#include "core/common.h"

#include <math.h>

struct vec {
	float *v;
	size_t n;
	char *path, *name;	/* rank: the chunk's, or NULL */
	char *want;		/* rank: the query's "want", or NULL */
};

static int b64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decode "vec" of rec into v; 0, or -1 when there is none or it is malformed. */
static int get_vec(json_t *rec, struct vec *v)
{
	json_t *j = json_object_get(rec, "vec");

	v->v = NULL;
	v->n = 0;
	if (json_is_array(j)) {
		size_t i;
		v->n = json_array_size(j);
		v->v = xmalloc((v->n + 1) * sizeof(float));
		for (i = 0; i < v->n; i++)
			v->v[i] = (float)json_number_value(json_array_get(j, i));
		return 0;
	}
	if (json_is_string(j)) {
		const char *s = json_string_value(j);
		size_t len = strlen(s), i, o = 0;
		unsigned char *bytes = xmalloc(len * 3 / 4 + 4);
		unsigned acc = 0;
		int bits = 0;

		for (i = 0; i < len && s[i] != '='; i++) {
			int x = b64_value((unsigned char)s[i]);
			if (x < 0) {
				free(bytes);
				return -1;
			}
			acc = acc << 6 | (unsigned)x;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				bytes[o++] = (unsigned char)(acc >> bits);
			}
		}
		if (o % 4) {
			free(bytes);
			return -1;
		}
		v->n = o / 4;
		v->v = xmalloc((v->n + 1) * sizeof(float));
		for (i = 0; i < v->n; i++) {
			uint32_t u = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 |
				     (uint32_t)bytes[4 * i + 2] << 16 | (uint32_t)bytes[4 * i + 3] << 24;
			memcpy(&v->v[i], &u, 4);
		}
		free(bytes);
		return 0;
	}
	return -1;
}

/* Read the records of path (JSON objects, one a line; no "_type" needed); with
 * need_vec, every one must have a vector. */
static struct vec *load(const char *path, size_t *nr, int need_vec)
{
	FILE *f = fopen(path, "r");
	struct vec *out = NULL;
	size_t alloc = 0, cap = 0;
	char *line = NULL;
	ssize_t len;
	long lineno = 0;

	*nr = 0;
	if (!f)
		die("cannot open '%s'", path);
	while ((len = getline(&line, &cap, f)) > 0) {
		json_error_t jerr;
		json_t *rec;
		struct vec v;
		const char *s;

		lineno++;
		if (len == 1 && line[0] == '\n')
			continue;
		if (!(rec = json_loadb(line, (size_t)len, 0, &jerr)) || !json_is_object(rec))
			die("%s:%ld: not a JSON object", path, lineno);
		memset(&v, 0, sizeof(v));
		if (get_vec(rec, &v) < 0) {
			if (need_vec)
				die("%s:%ld: no vector", path, lineno);
			json_decref(rec);
			continue;
		}
		if ((s = json_string_value(json_object_get(rec, "path"))))
			v.path = xstrdup(s);
		if ((s = json_string_value(json_object_get(rec, "name"))))
			v.name = xstrdup(s);
		if ((s = json_string_value(json_object_get(rec, "want"))))
			v.want = xstrdup(s);
		ALLOC_GROW(out, *nr + 1, alloc);
		out[(*nr)++] = v;
		json_decref(rec);
	}
	if (ferror(f))
		die("cannot read '%s'", path);
	free(line);
	fclose(f);
	return out;
}

static double dot(const struct vec *a, const struct vec *b)
{
	double s = 0;
	size_t i;

	for (i = 0; i < a->n && i < b->n; i++)
		s += (double)a->v[i] * b->v[i];
	return s;
}

static double cosine(const struct vec *a, const struct vec *b)
{
	double na = sqrt(dot(a, a)), nb = sqrt(dot(b, b));

	return na > 0 && nb > 0 ? dot(a, b) / (na * nb) : 0;
}

/* Does chunk c satisfy want ("<path>" or "<path>:<name>")? */
static int wanted(const struct vec *c, const char *want)
{
	const char *colon = strchr(want, ':');
	size_t plen = colon ? (size_t)(colon - want) : strlen(want);

	if (!c->path || strlen(c->path) != plen || strncmp(c->path, want, plen))
		return 0;
	return !colon || (c->name && !strcmp(c->name, colon + 1));
}

static void free_vecs(struct vec *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].v);
		free(v[i].path);
		free(v[i].name);
		free(v[i].want);
	}
	free(v);
}

int main(int argc, char **argv)
{
	struct vec *a, *b;
	size_t an, bn, i, j;

	util_init(argv[0]);
	if (argc == 4 && !strcmp(argv[1], "cos")) {
		a = load(argv[2], &an, 1);
		b = load(argv[3], &bn, 1);
		if (an != bn)
			die("'%s' has %zu vectors, '%s' %zu", argv[2], an, argv[3], bn);
		for (i = 0; i < an; i++) {
			if (a[i].n != b[i].n)
				die("line %zu: %zu and %zu dimensions", i + 1, a[i].n, b[i].n);
			printf("%.6f\n", cosine(&a[i], &b[i]));
		}
		free_vecs(a, an);
		free_vecs(b, bn);
	} else if (argc == 4 && !strcmp(argv[1], "maxdiff")) {
		a = load(argv[2], &an, 1);
		b = load(argv[3], &bn, 1);
		if (an != bn)
			die("'%s' has %zu vectors, '%s' %zu", argv[2], an, argv[3], bn);
		for (i = 0; i < an; i++) {
			double mx = 0;
			if (a[i].n != b[i].n)
				die("line %zu: %zu and %zu dimensions", i + 1, a[i].n, b[i].n);
			for (j = 0; j < a[i].n; j++)
				if (fabs((double)a[i].v[j] - b[i].v[j]) > mx)
					mx = fabs((double)a[i].v[j] - b[i].v[j]);
			printf("%.9f\n", mx);
		}
		free_vecs(a, an);
		free_vecs(b, bn);
	} else if (argc == 4 && !strcmp(argv[1], "prefix")) {
		size_t n = (size_t)atol(argv[2]);

		a = load(argv[3], &an, 1);
		for (i = 0; i < an; i++) {
			double ss = 0;
			if (!n || n > a[i].n)
				die("line %zu: %zu values, not %s", i + 1, a[i].n, argv[2]);
			for (j = 0; j < n; j++)
				ss += (double)a[i].v[j] * a[i].v[j];
			printf("{\"n\":%zu,\"vec\":[", a[i].n);
			for (j = 0; j < n; j++)
				printf("%s%.9g", j ? "," : "", ss > 0 ? a[i].v[j] / sqrt(ss) : 0.0);
			printf("]}\n");
		}
		free_vecs(a, an);
	} else if (argc == 3 && !strcmp(argv[1], "norm")) {
		a = load(argv[2], &an, 0);
		for (i = 0; i < an; i++)
			printf("%.6f\n", sqrt(dot(&a[i], &a[i])));
		free_vecs(a, an);
	} else if (argc == 4 && !strcmp(argv[1], "rank")) {
		double mrr = 0;
		size_t r1 = 0, r5 = 0, r10 = 0, q = 0;

		a = load(argv[2], &an, 0);
		b = load(argv[3], &bn, 0);
		for (i = 0; i < an; i++) {
			double best = -2;
			size_t rank = 0, top = 0;

			if (!a[i].want)
				continue;
			/* the best-scoring wanted chunk, then how many score higher */
			for (j = 0; j < bn; j++)
				if (wanted(&b[j], a[i].want)) {
					double c = cosine(&a[i], &b[j]);
					if (c > best)
						best = c;
				}
			if (best > -2) {
				double tc = -2;
				rank = 1;
				for (j = 0; j < bn; j++) {
					double c = cosine(&a[i], &b[j]);
					if (c > best)
						rank++;
					if (c > tc) {
						tc = c;
						top = j;
					}
				}
			}
			q++;
			printf("%zu\t%s\t%s:%s\n", rank, a[i].want, bn ? (b[top].path ? b[top].path : "") : "",
			       bn && b[top].name ? b[top].name : "");
			if (rank) {
				mrr += 1.0 / (double)rank;
				r1 += rank <= 1;
				r5 += rank <= 5;
				r10 += rank <= 10;
			}
		}
		if (q)
			printf("queries %zu mrr %.3f r@1 %.3f r@5 %.3f r@10 %.3f\n", q, mrr / (double)q,
			       (double)r1 / (double)q, (double)r5 / (double)q, (double)r10 / (double)q);
		free_vecs(a, an);
		free_vecs(b, bn);
	} else {
		fprintf(stderr, "usage: vec-tool cos <a> <b> | maxdiff <a> <b> | prefix <n> <a> | norm <a> |\n"
				"                rank <queries> <chunks>\n");
		return EXIT_USAGE;
	}
	return close_stdout(EXIT_OK);
}
