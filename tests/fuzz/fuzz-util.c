/*
 * fuzz-util.c: helpers of the fuzz targets (see fuzz.h).
 */
#define _GNU_SOURCE
#include "fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

int fuzz_memfile(char *path, size_t path_size, const uint8_t *data, size_t n)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < n) {
		ssize_t w = write(fd, data + done, n - done);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	snprintf(path, path_size, "/proc/self/fd/%d", fd);
	return fd;
}
