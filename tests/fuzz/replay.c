/*
 * replay.c: run a fuzz target over files, without libFuzzer (make check).
 *
 *   tests/fuzz-<target> <file or directory>...
 *
 * Each file is one input; a directory's files are run in name order.  Prints a TAP
 * line per file ("ok N - path"); a crash or a failed property aborts the process,
 * which the test script reports with the input's name.  Exit 0 when every input
 * ran, 2 when a path cannot be read.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int nr;
static FILE *tap;	/* the TAP lines: standard output as it was at the start */

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t n = 0, alloc = 0, r;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (n + 65536 > alloc) {
			alloc = (n + 65536) * 2;
			data = realloc(data, alloc);
			if (!data)
				abort();
		}
		r = fread(data + n, 1, alloc - n, f);
		n += r;
	} while (r > 0);
	if (ferror(f)) {
		perror(path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	/* an exact copy, as libFuzzer gives: a read past the end is caught */
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact)
		abort();
	memcpy(exact, data, n);
	free(data);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	fprintf(tap, "ok %d - %s\n", ++nr, path);
	fflush(tap);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t names_nr = 0, i;
	int ret = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	if (!(d = opendir(path))) {
		perror(path);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (names_nr + 1) * sizeof(*names));
		if (!names || !(names[names_nr] = malloc(strlen(path) + strlen(de->d_name) + 2)))
			abort();
		sprintf(names[names_nr++], "%s/%s", path, de->d_name);
	}
	closedir(d);
	qsort(names, names_nr, sizeof(*names), cmp_str);
	for (i = 0; i < names_nr; i++) {
		if (run_file(names[i]) < 0)
			ret = -1;
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	/* a target may send its own standard output elsewhere */
	if (!(tap = fdopen(dup(1), "w")))
		abort();
	for (i = 1; i < argc; i++)
		if (run_path(argv[i]) < 0)
			ret = 2;
	fprintf(tap, "1..%d\n", nr);
	fclose(tap);
	return ret;
}
