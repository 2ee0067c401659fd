/*
 * manifest.h: the dependencies a project's package manifests declare
 * (package.json, requirements.txt, pyproject.toml, go.mod, Cargo.toml), as
 * {manifest, name, version} objects, for `ci metadata` and `ci context`.
 */
#ifndef CI_CONTEXT_MANIFEST_H
#define CI_CONTEXT_MANIFEST_H

#include <jansson.h>

struct context_toml;

/*
 * The dependencies of the manifests in the current directory, a new array, in
 * the order package.json, requirements.txt, pyproject.toml, go.mod,
 * Cargo.toml.  A TOML file that does not parse is a warning and gives nothing
 * (toml NULL: the TOML manifests are left out).  Cannot fail.
 */
json_t *manifest_deps(const struct context_toml *toml);
/* The line manifests: requirements.txt lines, go.mod require lines, appended to deps. */
void manifest_deps_text(json_t *deps, const char *manifest);

#endif
