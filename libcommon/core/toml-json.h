/*
 * toml-json.h: a TOML file as JSON text, through toml++ (the one C++ unit of
 * libcommon, used by ci-mcp's profile configurations and ci's manifests; TOML
 * has no well-kept C parser in Debian).  A program that calls it links with
 * the C++ compiler and $(TOMLPP_LIBS).
 */
#ifndef TOML_JSON_H
#define TOML_JSON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parse the TOML file at path; return its tables as JSON text (malloc'd).
 * On failure return NULL and set *err (malloc'd) to "<line>:<column>: <what>"
 * or the reason the file could not be read.
 */
char *toml_file_json(const char *path, char **err);
/* The same for TOML text[0..len) already read from path (named in messages). */
char *toml_text_json(const char *text, size_t len, const char *path, char **err);

#ifdef __cplusplus
}
#endif

#endif
