/*
 * patterns.h: the team's patterns, from the index's imports and the git
 * history: for each package the files import, in its category (di, state,
 * testing, libraries), how many files use it, its adoption in the category and
 * its trend (Rising, Stable, Declining); golden files (those using the most
 * patterns) and conflicts (two patterns of a category both above 20%).
 *
 * The caller reads the imports (patterns_imports() on the index's handle) and
 * the commit records (ci-couple history) and hands them to patterns_compute().
 */
#ifndef CI_CONTEXT_PATTERNS_H
#define CI_CONTEXT_PATTERNS_H

#include <time.h>
#include <sqlite3.h>
#include <jansson.h>

/* all, di, state, testing, libraries; NULL-ended. */
extern const char *const pattern_categories[];

/* Whether cat is one of pattern_categories. */
int pattern_category_ok(const char *cat);
/*
 * The package an import names: "@scope/pkg" for a scoped npm name, the module
 * path up to a known package for Go and Java, else the first segment ("os.path"
 * is "os", "lodash/fp" is "lodash").  NULL for a relative import.  Malloc'd.
 */
char *import_package(const char *target);
/* The category of a package: di, state or testing when known, else libraries. */
const char *package_category(const char *pkg);

/*
 * The imports of the index db as {file: [package, ...]} (external imports
 * only: those that resolve to no file of the repository), files and packages
 * sorted, into *out.  -1 on an SQLite error (said as "<sub>: <what>").
 */
int patterns_imports(json_t **out, sqlite3 *db, const char *sub);
/*
 * The patterns of category (or "all") from by_file (patterns_imports()) and
 * commits (commit records, newest first): {patterns: [...], goldenFiles:
 * [...], conflicts: [...]}, records of _type pattern, golden_file and
 * conflict.  A pattern is Rising when its files were first committed within
 * 90 days of the newest commit (and after the oldest), Declining when none was
 * touched in the 180 days before it, else Stable.  Cannot fail.
 */
json_t *patterns_compute(json_t *by_file, json_t *commits, const char *category);
/*
 * The memories (an array of memory.json's) that go with the patterns of a
 * category, as "memory" records scored at now: all of them for all, testing's
 * for testing, dependencies' for libraries, architecture's for di and state.
 */
json_t *patterns_memories(json_t *memories, const char *cat, time_t now);

#endif
