/*
 * args.c: the arguments of a ci subcommand (--flag value, --flag=value,
 * booleans, positional words), its --help and --list-options, and its errors.
 */
#include "ci.h"

#include <errno.h>

/* "ci: <message>" on stderr, then exit with code. */
static void vfail(int code, const char *fmt, va_list ap) __attribute__((noreturn));
static void vfail(int code, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(code);
}

/*
 * A usage error of a subcommand (an unknown option, a missing or malformed
 * argument): the message, then exit 2, as every ci command does.
 */
void usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(EXIT_USAGE, fmt, ap);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(1, fmt, ap);
}

void fail_said(void)
{
	exit(1);
}

int flag_index(const char *const *list, const char *name, size_t len)
{
	int i;

	for (i = 0; list && list[i]; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], name, len))
			return i;
	return -1;
}

/*
 * Print the part of the usage about subcommand sub (the entries whose first word
 * is sub's, with their continuation lines) and exit 0: `ci search --help`.
 */
static void sub_help(const char *sub)
{
	size_t wl = strcspn(sub, " ");
	const char *p = ci_usage_text;
	int in = 0;

	printf("usage: ci %.*s ...\n\n", (int)wl, sub);
	while (*p) {
		size_t n = strcspn(p, "\n");
		if (n > 2 && p[0] == ' ' && p[1] == ' ' && p[2] != ' ')
			in = !strncmp(p + 2, sub, wl) && (p[2 + wl] == ' ' || p[2 + wl] == '\n');
		else if (n == 0 || p[0] != ' ')
			in = 0;
		if (in)
			printf("%.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	exit(close_stdout(EXIT_OK));
}

/*
 * --list-options of a subcommand, for completion scripts (scripts/gen-completions):
 * its flags, "--name=" for one that takes a value, one a line; exit 0.
 */
static void sub_list_options(const struct flags *f)
{
	int i;

	for (i = 0; f->names && f->names[i]; i++)
		printf("--%s=\n", f->names[i]);
	for (i = 0; f->bools && f->bools[i]; i++)
		printf("--%s\n", f->bools[i]);
	puts("--help");
	exit(close_stdout(EXIT_OK));
}

void parse_flags(struct flags *f, int argc, char **argv)
{
	int i, k;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq;
		size_t len;

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			sub_help(f->sub);
		if (!strcmp(a, "--list-options"))
			sub_list_options(f);

		if (a[0] != '-' || a[1] != '-' || !a[2]) {
			if (f->args_nr >= (int)ARRAY_SIZE(f->args))
				usage_fail("%s: too many arguments", f->sub);
			f->args[f->args_nr++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		if ((k = flag_index(f->names, a, len)) >= 0) {
			if (eq)
				f->values[k] = eq + 1;
			else if (i + 1 < argc)
				f->values[k] = argv[++i];
			else
				usage_fail("%s: option '--%s' needs a value", f->sub, a);
		} else if (!eq && (k = flag_index(f->bools, a, len)) >= 0) {
			f->set[k] = 1;
		} else {
			usage_fail("%s: unknown option '--%.*s'", f->sub, (int)len, a);
		}
	}
}

void parse_options(struct flags *f, int argc, char **argv, const char *use)
{
	parse_flags(f, argc, argv);
	if (f->args_nr && use)
		usage_fail("%s: unexpected argument '%s' (use --%s)", f->sub, f->args[0], use);
	if (f->args_nr)
		usage_fail("%s: unexpected argument '%s'", f->sub, f->args[0]);
}

const char *check_limit(const char *sub, const char *s, long max)
{
	char *end;
	long n;

	errno = 0;
	n = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || *end || end == s || n < 1 || n > max)
		usage_fail("%s: --limit must be a whole number from 1 to %ld, not '%s'", sub, max,
		     s ? s : "");
	return s;
}

const char *given(const char *v)
{
	return v && *v ? v : NULL;
}
