/*
 * fuzz.h: what every fuzz target in tests/fuzz/ shares.
 *
 * A target is one function, LLVMFuzzerTestOneInput(), called with one input at a
 * time.  Built with clang -fsanitize=fuzzer (make fuzz) it is driven by libFuzzer;
 * linked with replay.c (make check) it runs the checked-in corpus and regression
 * inputs under the build's own sanitizers.  A target returns 0; a property it
 * checks that fails calls fuzz_fail(), which aborts, so that both drivers stop
 * and report the input.
 */
#ifndef CI_FUZZ_H
#define CI_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Report a property that does not hold, then abort(). */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * A file holding data[0..n), for loaders that take a path: a memfd named by
 * /proc/self/fd/N, written into path (at least 32 bytes).  Returns the fd to
 * close, or -1.
 */
int fuzz_memfile(char *path, size_t path_size, const uint8_t *data, size_t n);

#endif
