/*
 * ci-grep: exact and regex search over a repository, writing match records
 * (NDJSON) or path:line:col:text lines.
 *
 * Two ways to find the files worth reading, one way to read them:
 *
 *   - without an index, the walker's list (git's ignore rules, no binary, vendored,
 *     generated or huge files), read by N threads;
 *   - with an index (ci-index build), the files whose trigrams can hold a match
 *     (libcommon/index/trigram.c turns the pattern into an FTS5 query), plus every file
 *     that changed on disk since it was indexed, plus any file the index does not
 *     know when the tree's directories changed since.
 *
 * Either way each file is read whole and searched at once: a literal with a SIMD
 * pair-of-bytes search, a regex with PCRE2's JIT over the whole buffer in
 * multiline mode (not line by line: that is what makes it fast), or, when the
 * regex requires a literal, the literal first and the regex only on the lines
 * that hold it.  A line matches when the pattern matches inside it, so both
 * ways give the same lines; output is in path order, identical in both modes.
 *
 * Shaped by the Linux kernel (78,000 files, 1.3 GB) searched on a 2-core machine
 * against ripgrep, and by the worst patterns people write by accident ((a+)+$):
 * PCRE2's match limit bounds each start of a match, windows of start positions
 * bound each call of PCRE2 (bounded_match), a per-file time budget bounds a
 * file, and any of them becomes a warning naming the file and exit status 2
 * (results may be incomplete), never a hang.
 */
#include "core/common.h"
#include "fleet/fleet.h"
#include "index/fork-server.h"
#include "core/human.h"
#include "parse/walk.h"
#include "parse/lang.h"
#include "index/index.h"
#include "index/trigram.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <git2.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

static const char usage_text[] =
	"usage: ci-grep [options] <pattern> [<path>...]\n"
	"   or: ci-grep --files [options] [<path>...]\n"
	"   or: ci-grep --type-list\n"
	"\n"
	"Write the lines of the files under the current directory (or the paths given,\n"
	"in a repository or not) that match <pattern>, a PCRE2 regular expression, with\n"
	"paths relative to the current directory (or as given), as rg does.  With an\n"
	"index (ci-index build), only the files that can match are read.  As rg, hidden\n"
	"files and what .gitignore, .ignore and .rgignore list are left out; so are\n"
	"vendored trees, generated files and lock files.  NDJSON match records unless\n"
	"stdout is a terminal.\n"
	"\n"
	"  -e, --regexp <pattern>      the pattern (for one starting with '-')\n"
	"  -F, --fixed-strings         <pattern> is a literal string\n"
	"  -i, --ignore-case           match case-insensitively\n"
	"  -S, --smart-case            match case-insensitively unless <pattern> has an\n"
	"                              uppercase letter\n"
	"  -s, --case-sensitive        match case-sensitively (the default; the last of\n"
	"                              -i, -S and -s wins)\n"
	"  -w, --word-regexp           match whole words only\n"
	"  -x, --line-regexp           match whole lines only\n"
	"  -v, --invert-match          write the lines that do not match\n"
	"  -n, --line-number           accepted, as rg does: line numbers are always written\n"
	"  -A, --after-context <n>     show <n> lines after each matching line\n"
	"  -B, --before-context <n>    show <n> lines before each matching line\n"
	"  -C, --context <n>           show <n> lines before and after\n"
	"  -g, --glob <glob>           search only paths matching <glob>; '!<glob>' leaves\n"
	"                              them out (repeatable)\n"
	"  -t, --type <lang>           search only files in <lang>: c, python, py, ... (repeatable;\n"
	"                              --type-list lists them)\n"
	"  -m, --max-count <n>         stop reading a file after <n> matching lines\n"
	"  -o, --only-matching         write each match, not its line (context lines too,\n"
	"                              with -A, -B or -C, as rg)\n"
	"  -r, --replace <text>        write each match replaced by <text>: $1, ${name} are\n"
	"                              the pattern's groups, $0 the match, $$ a '$'\n"
	"  -q, --quiet                 write nothing; exit 0 at the first match\n"
	"  -l, --files-with-matches    write only the paths of files with a match\n"
	"  -L, --files-without-match   write only the paths of files without a match\n"
	"      --files                 write the paths of the files a search would read\n"
	"      --type-list             list the names -t accepts and exit\n"
	"  -c, --count                 write the number of matching lines of each file\n"
	"      --json                  write NDJSON records (the default unless on a terminal)\n"
	"      --color <when>          colour paths, line numbers and matches as rg: never,\n"
	"                              auto (on a terminal, the default) or always (--colour)\n"
	"      --no-json               write path:line:col:text lines (the default on a terminal;\n"
	"                              CI_FORMAT=text makes it the default everywhere, as\n"
	"                              `ci-grep -l --no-json x | xargs ...` wants)\n"
	"      --index <db>            use the index <db> (default: $CI_INDEX, else\n"
	"                              <root>/.ci-index/index.db when it exists)\n"
	"      --shards <set>          every index of a shard set (a directory or a\n"
	"                              manifest), merged by repository\n"
	"      --no-index              scan the files even if there is an index\n"
	"      --check <what>          what an indexed search checks for changes since the\n"
	"                              index: files (every directory and file: the results of\n"
	"                              a scan, the default), dirs (the directories only:\n"
	"                              misses files rewritten in place), none (nothing)\n"
	"      --trust-index           the same as --check none\n"
	"      --max-filesize <bytes>  skip files larger than this (default 1048576; 0: no limit)\n"
	"  -a, --text                  search binary files as text\n"
	"      --include-vendored      also search vendored and generated files\n"
	"      --hidden                also search hidden files and directories (names\n"
	"                              starting with '.'; .git is never searched)\n"
	"      --no-ignore             do not honour .gitignore, .git/info/exclude, .ignore\n"
	"                              and .rgignore\n"
	"  -u, --unrestricted          -u: --no-ignore; -uu: and --hidden; -uuu: and binary\n"
	"                              files found by the walk are searched too\n"
	"      --stats                 report on stderr what was read and how long it took\n"
	"  -j, --threads <n>           search with <n> threads (default: the number of CPUs)\n"
	"  -h, --help                  show this help and exit\n"
	"      --version               show the version and exit\n";

enum {
	OPT_JSON = 256, OPT_NO_JSON, OPT_INDEX, OPT_NO_INDEX, OPT_MAX_SIZE, OPT_VENDORED,
	OPT_NO_IGNORE, OPT_STATS, OPT_TRUST_INDEX, OPT_CHECK, OPT_FILES, OPT_TYPE_LIST,
	OPT_HIDDEN, OPT_COLOR,
};

/* What an indexed search checks of the tree (--check). */
enum check {
	CHECK_FILES,	/* every directory and every file: the same results as a scan */
	CHECK_DIRS,	/* the directories: files rewritten in place since the index are missed */
	CHECK_NONE,	/* nothing: the index's candidates only (--trust-index) */
};

static const struct option long_options[] = {
	{ "regexp", required_argument, NULL, 'e' },
	{ "fixed-strings", no_argument, NULL, 'F' },
	{ "ignore-case", no_argument, NULL, 'i' },
	{ "line-number", no_argument, NULL, 'n' },
	{ "word-regexp", no_argument, NULL, 'w' },
	{ "line-regexp", no_argument, NULL, 'x' },
	{ "smart-case", no_argument, NULL, 'S' },
	{ "case-sensitive", no_argument, NULL, 's' },
	{ "replace", required_argument, NULL, 'r' },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "colour", required_argument, NULL, OPT_COLOR },
	{ "hidden", no_argument, NULL, OPT_HIDDEN },
	{ "unrestricted", no_argument, NULL, 'u' },
	{ "invert-match", no_argument, NULL, 'v' },
	{ "only-matching", no_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "files-without-match", no_argument, NULL, 'L' },
	{ "files", no_argument, NULL, OPT_FILES },
	{ "type-list", no_argument, NULL, OPT_TYPE_LIST },
	{ "text", no_argument, NULL, 'a' },
	{ "after-context", required_argument, NULL, 'A' },
	{ "before-context", required_argument, NULL, 'B' },
	{ "context", required_argument, NULL, 'C' },
	{ "glob", required_argument, NULL, 'g' },
	{ "type", required_argument, NULL, 't' },
	{ "max-count", required_argument, NULL, 'm' },
	{ "files-with-matches", no_argument, NULL, 'l' },
	{ "count", no_argument, NULL, 'c' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "no-json", no_argument, NULL, OPT_NO_JSON },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "no-index", no_argument, NULL, OPT_NO_INDEX },
	{ "trust-index", no_argument, NULL, OPT_TRUST_INDEX },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "max-filesize", required_argument, NULL, OPT_MAX_SIZE },
	{ "include-vendored", no_argument, NULL, OPT_VENDORED },
	{ "no-ignore", no_argument, NULL, OPT_NO_IGNORE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "threads", required_argument, NULL, 'j' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct glob {
	const char *pat;	/* without the '!' and a leading '/' */
	int exclude;		/* '!': leave matching paths out */
	int has_slash;		/* matched against paths, not names */
};

struct options {
	const char *pattern;		/* as given */
	int fixed, icase, word;		/* -F, -i, -w */
	int line_regexp;		/* -x: the pattern matches the whole line */
	int invert;			/* -v: the lines that do not match */
	int only;			/* -o: each match, not its line */
	int quiet;			/* -q: no output, exit at the first match */
	int files_without;		/* -L */
	int list_files;			/* --files: the files, no pattern */
	int text;			/* -a: binary files are searched as text */
	int binary;			/* -uuu: binary files found by the walk are searched,
					   as named ones are ("binary file matches") */
	const char *replace;		/* -r: each match is written as this, or NULL */
	int color;			/* --color: escape sequences as rg's */
	const struct scope *scope;	/* the paths searched in this tree: what output
					   paths are relative to */
	struct walker *filter;		/* the index's files are checked against this
					   walker's hidden and .ignore rules, or NULL */
	int all_files;			/* -v, -L, --files: every file is read, not
					   the index's trigram candidates alone */
	long before, after;		/* -B, -A (-C sets both) */
	long max_count;			/* -m; 0: no limit */
	int files_only, count;		/* -l, -c */
	int json;			/* NDJSON out, else path:line:col:text */
	const char *index;		/* --index, or NULL */
	int no_index;			/* --no-index */
	int trust_index;		/* --check none (--trust-index): check nothing */
	int check;			/* --check: enum check */
	struct walk_opts walk;		/* walker rules */
	int walk_default;		/* walk options are the index's (the defaults) */
	int stats;			/* --stats */
	int threads;			/* -j */
	struct glob *globs;		/* -g, in order */
	size_t globs_nr, globs_alloc;
	int globs_include;		/* some glob is not an exclusion */
	const struct lang **langs;	/* -t */
	size_t langs_nr, langs_alloc;
};

/* ---- finding a literal: a SIMD search for a pair of its rarest bytes ---- */

/*
 * How common each byte is in source code (0 rarest, 255 most common), measured on
 * the Linux kernel's drivers; used to pick which bytes of a literal to look for.
 */
static const unsigned char byte_rank[256] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 251, 249, 9, 10, 11, 12, 13,
	14, 15, 16, 17, 124, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
	255, 173, 192, 171, 159, 172, 193, 165, 231, 232, 227, 181, 240, 225, 200, 199,
	248, 217, 213, 206, 197, 188, 190, 180, 198, 182, 179, 233, 174, 223, 221, 164,
	166, 219, 194, 215, 209, 229, 205, 195, 185, 216, 162, 178, 210, 208, 211, 204,
	207, 169, 220, 214, 222, 189, 183, 184, 191, 176, 167, 187, 170, 186, 161, 253,
	160, 245, 226, 242, 243, 254, 236, 224, 228, 247, 168, 212, 239, 234, 244, 241,
	238, 196, 250, 246, 252, 237, 230, 218, 235, 201, 177, 203, 175, 202, 163, 29,
	153, 137, 157, 30, 31, 125, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
	129, 130, 42, 147, 43, 44, 45, 46, 47, 143, 48, 49, 131, 141, 50, 51,
	145, 144, 52, 53, 150, 148, 54, 126, 132, 152, 55, 56, 57, 58, 59, 60,
	151, 127, 61, 62, 138, 142, 133, 63, 146, 64, 65, 66, 139, 67, 68, 69,
	70, 71, 155, 156, 128, 158, 72, 73, 74, 75, 76, 77, 78, 79, 140, 149,
	80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
	96, 97, 154, 98, 99, 134, 135, 136, 100, 101, 102, 103, 104, 105, 106, 107,
	108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123,
};

struct finder {
	const unsigned char *s;	/* the literal (lower-cased when icase) */
	size_t n;		/* its length */
	size_t i1, i2;		/* offsets of its two rarest bytes (i1 != i2 when n > 1) */
	unsigned char o1, o2;	/* ORed into those bytes of the text first: 0x20 for a
				   letter when icase, else 0 */
	int icase;		/* ASCII letters match either case */
	int avx2;		/* the CPU has AVX2 */
};

static inline unsigned char ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

/* How common c is, either case when icase (the commoner of the two). */
static unsigned rank_of(unsigned char c, int icase)
{
	unsigned r = byte_rank[c];

	if (icase && c >= 'a' && c <= 'z' && byte_rank[c - 0x20] > r)
		r = byte_rank[c - 0x20];
	return r;
}

/*
 * s[0..n) is found as it is, or with icase in any mix of ASCII cases, s
 * lower-cased: (byte | 0x20) is a lower-case letter only for that letter's
 * two cases.
 */
static void finder_init(struct finder *f, const char *s, size_t n, int icase)
{
	size_t i;

	f->s = (const unsigned char *)s;
	f->n = n;
	f->icase = icase;
	f->i1 = f->i2 = 0;
	for (i = 1; i < n; i++)
		if (rank_of(f->s[i], icase) < rank_of(f->s[f->i1], icase))
			f->i1 = i;
	f->i2 = f->i1 == 0 && n > 1 ? 1 : 0;
	for (i = 0; i < n; i++)
		if (i != f->i1 && rank_of(f->s[i], icase) < rank_of(f->s[f->i2], icase))
			f->i2 = i;
	f->o1 = icase && f->s[f->i1] >= 'a' && f->s[f->i1] <= 'z' ? 0x20 : 0;
	f->o2 = icase && f->s[f->i2] >= 'a' && f->s[f->i2] <= 'z' ? 0x20 : 0;
#ifdef HAVE_AVX2_PATH
	__builtin_cpu_init();
	f->avx2 = __builtin_cpu_supports("avx2");
#else
	f->avx2 = 0;
#endif
}

/* p[0..f->n) is the literal. */
static inline int finder_same(const struct finder *f, const unsigned char *p)
{
	size_t i;

	if (!f->icase)
		return !memcmp(p, f->s, f->n);
	for (i = 0; i < f->n; i++)
		if (ascii_lower(p[i]) != f->s[i])
			return 0;
	return 1;
}

/* Check candidate starts in the bit mask m (bit k: p + k). */
static inline const char *finder_check(const struct finder *f, const unsigned char *p, unsigned m)
{
	while (m) {
		unsigned k = (unsigned)__builtin_ctz(m);
		if (finder_same(f, p + k))
			return (const char *)(p + k);
		m &= m - 1;
	}
	return NULL;
}

/* The rare bytes of the literal at p. */
static inline int finder_rare(const struct finder *f, const unsigned char *p)
{
	return (p[f->i1] | f->o1) == f->s[f->i1] && (p[f->i2] | f->o2) == f->s[f->i2];
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2")))
static const char *finder_avx2(const struct finder *f, const unsigned char *p, const unsigned char *last)
{
	const __m256i v1 = _mm256_set1_epi8((char)f->s[f->i1]);
	const __m256i v2 = _mm256_set1_epi8((char)f->s[f->i2]);
	const __m256i o1 = _mm256_set1_epi8((char)f->o1);
	const __m256i o2 = _mm256_set1_epi8((char)f->o2);
	const char *r;

	/* every start in p .. p+31 is at most last, so every load is inside the text */
	while (p + 31 <= last) {
		__m256i a = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + f->i1)), o1);
		__m256i b = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + f->i2)), o2);
		unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, v1),
									      _mm256_cmpeq_epi8(b, v2)));
		if (m && (r = finder_check(f, p, m)))
			return r;
		p += 32;
	}
	for (; p <= last; p++)
		if (finder_rare(f, p) && finder_same(f, p))
			return (const char *)p;
	return NULL;
}
#endif

/* The first occurrence of the literal in hay[0..len), or NULL. */
static const char *finder_find(const struct finder *f, const char *hay, size_t len)
{
	const unsigned char *p = (const unsigned char *)hay, *last;

	if (f->n == 1 && !f->icase)
		return memchr(hay, f->s[0], len);
	if (len < f->n)
		return NULL;
	last = p + (len - f->n);
#ifdef HAVE_AVX2_PATH
	if (f->avx2)
		return finder_avx2(f, p, last);
#endif
#ifdef __SSE2__
	{
		const __m128i v1 = _mm_set1_epi8((char)f->s[f->i1]);
		const __m128i v2 = _mm_set1_epi8((char)f->s[f->i2]);
		const __m128i o1 = _mm_set1_epi8((char)f->o1);
		const __m128i o2 = _mm_set1_epi8((char)f->o2);
		const char *r;

		while (p + 15 <= last) {
			__m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + f->i1)), o1);
			__m128i b = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + f->i2)), o2);
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, v1),
									       _mm_cmpeq_epi8(b, v2)));
			if (m && (r = finder_check(f, p, m)))
				return r;
			p += 16;
		}
	}
#endif
	for (; p <= last; p++)
		if (finder_rare(f, p) && finder_same(f, p))
			return (const char *)p;
	return NULL;
}

/* Newlines in p[0..n). */
static size_t count_newlines(const char *p, size_t n)
{
	size_t c = 0, i = 0;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + i));
		c += (size_t)__builtin_popcount((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
	}
#endif
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

/* ---- the matcher: how lines are found ---- */

enum match_kind {
	M_LITERAL,	/* a literal: the finder alone */
	M_PREFILTER,	/* the finder for a literal every match holds, then the regex on its line */
	M_BUFFER,	/* the regex over the whole buffer */
	M_LINES,	/* the regex line by line (it looks past the end of its match) */
	M_NONE,		/* nothing: every match would hold a newline */
};

/*
 * The bounds on a regex (see bounded_match).  PCRE2's match limit applies to each
 * start position of a pcre2_match() call, so one call is also given a window of
 * start positions: limit x window <= STEP_BUDGET.
 */
#define MATCH_LIMIT 2000000	/* PCRE2 backtracking steps for one start, at most
				   ($CI_GREP_MATCH_LIMIT) */
#define FIRST_LIMIT 1024	/* the limit tried first (patterns met in practice need
				   under 100 a start; \s+$ needs 57) */
#define STEP_BUDGET (1u << 25)	/* backtracking steps of one pcre2_match() call */
#define DEPTH_LIMIT 100000	/* PCRE2 nested backtracking (the interpreter, without JIT) */
#define HEAP_LIMIT_KIB 65536	/* the interpreter's backtracking frames, per thread */
#define FILE_BUDGET_MS 2000	/* time for one file before giving up on it
				   ($CI_GREP_FILE_TIME_MS) */
#define EXIT_INCOMPLETE EXIT_USAGE	/* 2: a limit stopped a search, results may be incomplete */
#define EXIT_ERROR EXIT_USAGE		/* 2: any error, whatever was written, as rg has it */

/* One step of the windows and limits a match is tried with (bounded_match). */
struct level {
	uint32_t limit;		/* PCRE2's match limit: steps for one start */
	size_t window;		/* start positions one call may try */
};

static struct level levels[8];	/* FIRST_LIMIT, x16 ..., up to the match limit */
static int levels_nr;
static int64_t file_budget_ns;	/* FILE_BUDGET_MS, or $CI_GREP_FILE_TIME_MS */

/* The levels for a match limit of max (at least 1). */
static void levels_init(uint32_t max)
{
	uint32_t l = FIRST_LIMIT;

	levels_nr = 0;
	for (;;) {
		if (l > max || levels_nr == (int)ARRAY_SIZE(levels) - 1)
			l = max;
		levels[levels_nr].limit = l;
		levels[levels_nr].window = STEP_BUDGET / l ? STEP_BUDGET / l : 1;
		levels_nr++;
		if (l == max)
			break;
		l *= 16;
	}
}

struct matcher {
	enum match_kind kind;		/* how */
	struct finder finder;		/* M_LITERAL, M_PREFILTER */
	char *literal;			/* the finder's literal */
	pcre2_code *re;			/* M_PREFILTER, M_BUFFER, M_LINES */
	struct trigram_info info;	/* what the pattern says */
	unsigned tflags;		/* the trigram_flags it was analysed with */
	const char *pattern;		/* as given */
	int line_local;			/* what it reports of a line depends on that line
					   alone: a file may be searched by parts of whole lines */
	int windowed;			/* a match may be looked for by windows of start
					   positions (no \G, no verb such as (*COMMIT)) */
	struct finder whole;		/* -i: the whole string every match holds
					   (whole_s, lower-cased), or whole.n == 0 */
	char *whole_s;
};

/* Any byte past ASCII in s[0..n)? (Such a character may fold to an ASCII one.) */
static int has_nonascii(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return 1;
	return 0;
}

/* s[0..n) with its ASCII letters lower-cased, malloc'd. */
static char *ascii_lower_dup(const char *s, size_t n)
{
	char *d = xstrndup(s, n);

	for (size_t i = 0; i < n; i++)
		d[i] = (char)ascii_lower((unsigned char)d[i]);
	return d;
}

/*
 * Under -i, can the line [p, p + n) hold a match?  Only if it holds m's whole
 * required string (all ASCII) in some mix of ASCII cases, or a byte past ASCII
 * (where PCRE2's Unicode folding may match s, k or another letter): a line of
 * ASCII without the string is left without asking PCRE2, most of the lines the
 * shorter prefilter finds ("pend" of "pm_suspend", as s and k are not in it).
 */
static int whole_may_match(const struct matcher *m, const char *p, size_t n)
{
	if (!m->whole.n || n < m->whole.n)
		return !m->whole.n;
	return has_nonascii(p, n) || finder_find(&m->whole, p, n) != NULL;
}

/* Per thread: the regex's scratch space. */
struct searcher {
	pcre2_match_data *md;		/* match data for re */
	pcre2_match_context *mctx;	/* limits and JIT stack */
	pcre2_jit_stack *jit_stack;	/* a bigger JIT stack than the default 32K */
	uint32_t limit;			/* the match limit set in mctx ... */
	PCRE2_SIZE offset_limit;	/* ... and the offset limit (PCRE2_UNSET: none) */
	char *rbuf;			/* the file read */
	size_t rbuf_alloc;		/* its size */
	struct buf disp;		/* the path of the file searched, as written */
};

/* The PCRE2 error message for code rc. */
static void pcre2_message(int rc, char *out, size_t n)
{
	if (pcre2_get_error_message(rc, (PCRE2_UCHAR *)out, n) < 0)
		snprintf(out, n, "PCRE2 error %d", rc);
}

/*
 * The longest run in s[0..n) of ASCII bytes other than k and s, either case,
 * into *run and *len; 0 when there is none.  Matched without regard to case,
 * the other ASCII bytes can only be themselves or their other ASCII case,
 * while k and s also match U+212A (Kelvin) and U+017F (long s) in PCRE2's and
 * Unicode's case folding, and no non-ASCII character matches an ASCII one
 * otherwise: a match holds the run as it is, up to ASCII case.
 */
static int icase_run(const char *s, size_t n, const char **run, size_t *len)
{
	size_t i, start = 0;

	*run = NULL;
	*len = 0;
	for (i = 0; i <= n; i++) {
		unsigned char c = i < n ? ascii_lower((unsigned char)s[i]) : 0;
		if (i < n && c < 0x80 && c != 'k' && c != 's' && c != 0)
			continue;
		if (i - start > *len) {
			*run = s + start;
			*len = i - start;
		}
		start = i + 1;
	}
	return *len > 0;
}

/* A word character for -w: rg's \w (Alphabetic, Mark, Nd, Pc, Join_Control). */
#define WORD_CLASS "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]"

/*
 * Compile the pattern and choose how to search.  An invalid pattern ends the
 * program with exit 2.
 */
static void matcher_init(struct matcher *m, const struct options *o)
{
	struct buf pat = BUF_INIT;
	const char *p, *run;
	size_t prefix_len = 0, run_len;
	uint32_t copts = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE;
	int err, literal_only;
	PCRE2_SIZE off;
	unsigned tflags = 0;

	memset(m, 0, sizeof(*m));
	if (strchr(o->pattern, '\n'))
		die_code(EXIT_USAGE, "the pattern holds a newline, but lines are matched one at a time");
	tflags = (o->fixed ? TRIGRAM_FIXED : 0) | (o->icase ? TRIGRAM_ICASE : 0) | (o->word ? TRIGRAM_WORD : 0);
	trigram_analyze(&m->info, o->pattern, tflags);
	m->tflags = tflags;
	m->pattern = o->pattern;

	/* a literal without -i, -w or -x never needs the regex engine */
	literal_only = !o->icase && !o->word && !o->line_regexp && m->info.literal && m->info.literal_len &&
		       !o->replace;	/* -r: the groups of 'f(o)' are wanted */
	/*
	 * Every line a search reports holds its match (the regex is matched
	 * within the line, the subject ending at its end); a lookbehind (or a
	 * verb) may see earlier lines and \A matches at the subject's start
	 * only: those need the whole file.
	 */
	m->line_local = o->fixed || (!strstr(o->pattern, "(?<") && !strstr(o->pattern, "(*") &&
				     !strstr(o->pattern, "\\A"));
	m->windowed = o->fixed || (!strstr(o->pattern, "(*") && !strstr(o->pattern, "\\G"));
	if (literal_only && memchr(m->info.literal, '\n', m->info.literal_len)) {
		/* 'c\nx', '\x0a': a match never spans lines (rg -P and pcre2grep agree) */
		m->kind = M_NONE;
		return;
	}
	if (literal_only) {
		m->kind = M_LITERAL;
		m->literal = xstrndup(m->info.literal, m->info.literal_len);
		finder_init(&m->finder, m->literal, m->info.literal_len, 0);
		return;
	}

	/*
	 * -w: not next to a word character as rg has it (Unicode's \w of UTS
	 * #18, Rust's regex: a letter or other alphabetic, a mark, a decimal
	 * digit, a connector, ZWJ/ZWNJ), so that A followed by U+030A (Å) is no
	 * word A, nor A followed by ZWJ, while A² is.  PCRE2's own \b (10.42)
	 * leaves marks out of \w: '\bA\b' does match there.
	 */
	if (o->line_regexp) {
		/* -x: the whole line (-w adds nothing); what the index looks for
		 * (the pattern's trigrams) is in every such line still */
		buf_addstr(&pat, "^(?:");
		prefix_len = pat.len;
	} else if (o->word) {
		buf_addstr(&pat, "(?<!" WORD_CLASS ")(?:");
		prefix_len = pat.len;
	}
	if (o->fixed) {
		for (p = o->pattern; *p; p++) {
			if ((unsigned char)*p < 0x80 && !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
							   (*p >= '0' && *p <= '9')))
				buf_addch(&pat, '\\');
			buf_addch(&pat, *p);
		}
	} else {
		buf_addstr(&pat, o->pattern);
	}
	if (o->line_regexp)
		buf_addstr(&pat, ")\\r?$");	/* a CRLF line's text ends before its \r */
	else if (o->word)
		buf_addstr(&pat, ")(?!" WORD_CLASS ")");
	if (o->icase)
		copts |= PCRE2_CASELESS;
	if (m->windowed)
		copts |= PCRE2_USE_OFFSET_LIMIT;
	m->re = pcre2_compile((PCRE2_SPTR)pat.buf, pat.len, copts, &err, &off, NULL);
	if (!m->re) {
		char msg[256];

		pcre2_message(err, msg, sizeof(msg));
		off = off > prefix_len ? off - prefix_len : 0;
		if (off > strlen(o->pattern))
			off = strlen(o->pattern);
		die_code(EXIT_USAGE, "invalid pattern '%s': %s at offset %zu%s", o->pattern, msg, (size_t)off,
			 o->fixed ? "" : " (use -F for a literal string)");
	}
	buf_release(&pat);
	pcre2_jit_compile(m->re, PCRE2_JIT_COMPLETE);	/* without JIT, the interpreter */

	if ((m->info.required && memchr(m->info.required, '\n', m->info.required_len)) ||
	    (m->info.required_icase && memchr(m->info.required_icase, '\n', m->info.required_icase_len))) {
		/* every match holds a newline ('foo\n\w+'): none lies within a line */
		m->kind = M_NONE;
	} else if (m->info.required && m->info.required_len >= 3) {
		m->kind = M_PREFILTER;
		m->literal = xstrndup(m->info.required, m->info.required_len);
		finder_init(&m->finder, m->literal, m->info.required_len, 0);
	} else if (m->info.required_icase && icase_run(m->info.required_icase, m->info.required_icase_len,
						      &run, &run_len) && run_len >= 3) {
		/* -i: a piece every match holds in some mix of ASCII cases, found
		 * as fast as a literal; each line found is matched by PCRE2 */
		m->kind = M_PREFILTER;
		m->literal = ascii_lower_dup(run, run_len);
		finder_init(&m->finder, m->literal, run_len, 1);
		if (m->info.required_icase_len > run_len &&
		    !has_nonascii(m->info.required_icase, m->info.required_icase_len)) {
			m->whole_s = ascii_lower_dup(m->info.required_icase, m->info.required_icase_len);
			finder_init(&m->whole, m->whole_s, m->info.required_icase_len, 1);
		}
	} else if (m->info.looks_ahead) {
		m->kind = M_LINES;
	} else {
		m->kind = M_BUFFER;
	}
}

static void matcher_release(struct matcher *m)
{
	if (m->re)
		pcre2_code_free(m->re);
	free(m->literal);
	free(m->whole_s);
	trigram_info_release(&m->info);
}

static void searcher_init(struct searcher *sr, const struct matcher *m)
{
	memset(sr, 0, sizeof(*sr));
	buf_init(&sr->disp, 0);
	if (!m->re)
		return;
	sr->md = pcre2_match_data_create_from_pattern(m->re, NULL);
	sr->mctx = pcre2_match_context_create(NULL);
	if (!sr->md || !sr->mctx)
		die("out of memory for PCRE2");
	sr->limit = levels[0].limit;
	sr->offset_limit = PCRE2_UNSET;
	pcre2_set_match_limit(sr->mctx, sr->limit);
	pcre2_set_depth_limit(sr->mctx, DEPTH_LIMIT);
	pcre2_set_heap_limit(sr->mctx, HEAP_LIMIT_KIB);
	sr->jit_stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, NULL);
	if (sr->jit_stack)
		pcre2_jit_stack_assign(sr->mctx, NULL, sr->jit_stack);
}

static void searcher_release(struct searcher *sr)
{
	if (sr->md)
		pcre2_match_data_free(sr->md);
	if (sr->mctx)
		pcre2_match_context_free(sr->mctx);
	if (sr->jit_stack)
		pcre2_jit_stack_free(sr->jit_stack);
	free(sr->rbuf);
	buf_release(&sr->disp);
}

/* ---- searching one file ---- */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One file being searched. */
struct fsearch {
	const struct options *o;	/* options */
	const struct matcher *m;	/* the pattern */
	struct searcher *sr;		/* scratch space */
	const char *path;		/* for output */
	const char *buf;		/* the content */
	size_t len;			/* its length */
	enum match_kind kind;		/* may drop from M_BUFFER to M_LINES */
	size_t counted_pos;		/* newlines counted up to here ... */
	long counted_line;		/* ... where this line starts */
	long last_printed;		/* human context: last line written (0: none) */
	size_t after_pos;		/* human context: next "after" line to write ... */
	long after_line;		/* ... its number ... */
	long after_left;		/* ... and how many more to write */
	long nmatch;			/* matching lines so far */
	int limit_hit;			/* a PCRE2 limit stopped an attempt */
	int timed_out;			/* the file's time budget ran out */
	int64_t deadline;		/* when it runs out */
	unsigned calls;			/* regex calls, to look at the clock now and then */
	size_t since_check;		/* start positions tried since the clock was read */
	int level;			/* levels[] in use (see bounded_match) */
	struct buf *out;		/* records or lines */
};

static size_t line_start(const char *buf, size_t lo, size_t p)
{
	const char *nl = p > lo ? memrchr(buf + lo, '\n', p - lo) : NULL;

	return nl ? (size_t)(nl - buf) + 1 : lo;
}

static size_t line_end(const char *buf, size_t p, size_t len)
{
	const char *nl = p < len ? memchr(buf + p, '\n', len - p) : NULL;

	return nl ? (size_t)(nl - buf) : len;
}

/*
 * Has the file's time run out?  The clock is read every 256 calls, after each
 * call that a match limit stopped, and once a level's worth of start positions
 * were tried: at most about 2 x STEP_BUDGET steps go by unchecked.
 */
static int out_of_time(struct fsearch *fs)
{
	if (fs->timed_out)
		return 1;
	if ((++fs->calls & 255) == 0 || fs->level > 0 || fs->since_check >= levels[0].window) {
		fs->since_check = 0;
		if (now_ns() >= fs->deadline)
			fs->timed_out = 1;
	}
	return fs->timed_out;
}

/* The first character start at or after p in buf[0..end) (UTF-8; end if none). */
static size_t char_start(const char *buf, size_t end, size_t p)
{
	while (p < end && ((unsigned char)buf[p] & 0xc0) == 0x80)
		p++;
	return p;
}

/*
 * The leftmost match in buf[0..end) starting at or after start: 1 with its
 * bounds in *ms and *me; 0 when there is none or the file's time ran out; -1
 * when a limit stopped the search (a pattern that is not windowed only).
 *
 * PCRE2's match limit bounds each start position, not a call: a call over n
 * starts may take n times the limit (\C*?x or \X*?x on a line of 300 KB takes
 * minutes), and the clock is only read between calls.  So a call is given a
 * window of start positions (pcre2_set_offset_limit) along with the limit,
 * their product at most STEP_BUDGET: first many starts with a small limit, and
 * where it is hit, the same starts again fewer at a time with a larger limit
 * (levels[]), up to the match limit for a few starts; where even that is hit,
 * the rest of the line is left (limit_hit), as a whole call on the line would
 * leave it, and the search goes on with the next line.  A level that found
 * its window clean steps back down.  The windows start on character starts, as
 * PCRE2's own advance does, and together try every start one call would: the
 * leftmost match is the same.  Normal patterns never leave level 0, where a
 * 1 MB file takes 32 calls instead of one.
 */
static int bounded_match(struct fsearch *fs, size_t end, size_t start, size_t *ms, size_t *me)
{
	const struct matcher *m = fs->m;
	struct searcher *sr = fs->sr;
	const char *buf = fs->buf;
	size_t p = start, last;
	PCRE2_SIZE *ov, offset_limit;
	uint32_t limit;
	int rc;

	while (p <= end) {
		if (out_of_time(fs))
			return 0;
		/* the common case, the whole rest at level 0, changes nothing in mctx */
		last = end;
		offset_limit = PCRE2_UNSET;
		limit = levels[levels_nr - 1].limit;
		if (m->windowed) {
			limit = levels[fs->level].limit;
			if (levels[fs->level].window <= end - p)
				offset_limit = last = p + levels[fs->level].window - 1;
		}
		if (limit != sr->limit)
			pcre2_set_match_limit(sr->mctx, sr->limit = limit);
		if (offset_limit != sr->offset_limit)
			pcre2_set_offset_limit(sr->mctx, sr->offset_limit = offset_limit);
		rc = pcre2_match(m->re, (PCRE2_SPTR)buf, end, p, 0, sr->md, sr->mctx);
		if (rc >= 0) {
			ov = pcre2_get_ovector_pointer(sr->md);
			*ms = ov[0];
			*me = ov[1];
			fs->since_check += (ov[0] > p ? ov[0] : p) - p + 1;	/* the starts tried */
			return 1;
		}
		fs->since_check += last - p + 1;
		if (rc == PCRE2_ERROR_NOMATCH) {
			if (last >= end)
				return 0;
			p = char_start(buf, end, last + 1);
			if (fs->level > 0)
				fs->level--;
			continue;
		}
		/* PCRE2_ERROR_MATCHLIMIT, DEPTHLIMIT, HEAPLIMIT, JIT_STACKLIMIT */
		if (!m->windowed) {
			fs->limit_hit = 1;
			return -1;
		}
		if (fs->level + 1 < levels_nr) {
			fs->level++;	/* the same starts, fewer at a time, a larger limit */
			continue;
		}
		/* a start in this line needs more than the match limit: leave the line */
		fs->limit_hit = 1;
		p = line_end(buf, p, end) + 1;
	}
	return 0;
}

/*
 * Does the regex match inside the line [bol, eol)?  The subject ends at eol, so
 * nothing past the line is seen; it starts at the file's start, so a lookbehind
 * sees the lines before, as it does in the whole-buffer search.
 */
static int line_match(struct fsearch *fs, size_t bol, size_t eol, size_t *col)
{
	size_t s, e;

	if (bounded_match(fs, eol, bol, &s, &e) <= 0)
		return 0;
	*col = s > bol ? s - bol + 1 : 1;
	return 1;
}

/*
 * The next matching line at or after pos (a line start): 1 with its bounds and the
 * column of its first match, or 0 when there is none.
 */
static int next_match(struct fsearch *fs, size_t pos, size_t *bol, size_t *eol, size_t *col)
{
	const char *buf = fs->buf, *hit;
	size_t len = fs->len, s, e;
	int rc;

	switch (fs->kind) {
	case M_LITERAL:
		if (pos >= len)
			return 0;
		hit = finder_find(&fs->m->finder, buf + pos, len - pos);
		if (!hit)
			return 0;
		s = (size_t)(hit - buf);
		*bol = line_start(buf, pos, s);
		*eol = line_end(buf, s, len);
		*col = s - *bol + 1;
		return 1;
	case M_PREFILTER:
		while (pos < len) {
			hit = finder_find(&fs->m->finder, buf + pos, len - pos);
			if (!hit)
				return 0;
			s = (size_t)(hit - buf);
			*bol = line_start(buf, pos, s);
			*eol = line_end(buf, s, len);
			if (whole_may_match(fs->m, buf + *bol, *eol - *bol) && line_match(fs, *bol, *eol, col))
				return 1;
			if (fs->timed_out)
				return 0;
			pos = *eol + 1;
		}
		return 0;
	case M_BUFFER:
		while (pos <= len) {
			rc = bounded_match(fs, len, pos, &s, &e);
			if (rc == 0)
				return 0;
			if (rc < 0) {
				/* too costly over the whole rest: give each line its own budget */
				fs->kind = M_LINES;
				return next_match(fs, pos, bol, eol, col);
			}
			if (s >= len && (len == 0 || buf[len - 1] == '\n'))
				return 0;	/* the empty string after the last line */
			*bol = line_start(buf, pos, s);
			*eol = line_end(buf, s, len);
			if (e <= *eol || e < s) {
				*col = s - *bol + 1;
				return 1;
			}
			/* the match runs over the line's end: does the line match alone? */
			if (line_match(fs, *bol, *eol, col))
				return 1;
			if (fs->timed_out)
				return 0;
			pos = *eol + 1;
		}
		return 0;
	case M_NONE:
		return 0;
	case M_LINES:
		while (pos < len) {
			*bol = pos;
			*eol = line_end(buf, pos, len);
			if (line_match(fs, *bol, *eol, col))
				return 1;
			if (fs->timed_out)
				return 0;
			pos = *eol + 1;
		}
		return 0;
	}
	return 0;
}

/* The number of the line starting at bol (bol at or after the last one asked). */
static long line_number(struct fsearch *fs, size_t bol)
{
	if (bol > fs->counted_pos) {
		fs->counted_line += (long)count_newlines(fs->buf + fs->counted_pos, bol - fs->counted_pos);
		fs->counted_pos = bol;
	}
	return fs->counted_line;
}

/* A line's text without its "\r\n" or "\n". */
static size_t text_len(const char *buf, size_t bol, size_t eol)
{
	return eol > bol && buf[eol - 1] == '\r' ? eol - bol - 1 : eol - bol;
}

/* rg's colours (--color): what it writes before a path, a line number, a match. */
#define COLOR_PATH "\033[0m\033[35m"
#define COLOR_LINE "\033[0m\033[32m"
#define COLOR_COL "\033[0m"
#define COLOR_MATCH "\033[0m\033[1m\033[31m"
#define COLOR_END "\033[0m"

/* A path for people, coloured with --color. */
static void add_path(struct buf *b, const struct options *o, const char *path)
{
	if (o->color)
		buf_addf(b, COLOR_PATH "%s" COLOR_END, path);
	else
		buf_addstr(b, path);
}

/*
 * The next match in the line [p, eol): 1 with its bounds (and, with a regex,
 * its groups in the searcher's match data), 0 when there is none.
 */
static int next_span(struct fsearch *fs, size_t p, size_t eol, size_t *s, size_t *e)
{
	const char *hit;

	if (fs->m->re)
		return bounded_match(fs, eol, p, s, e) > 0;
	hit = finder_find(&fs->m->finder, fs->buf + p, eol - p);
	if (!hit)
		return 0;
	*s = (size_t)(hit - fs->buf);
	*e = *s + fs->m->finder.n;
	return 1;
}

/*
 * -r: the replacement for the match [s, e) just found, as rg expands it: $$ is
 * a '$', $name or ${name} a group by number or name (the longest run of
 * letters, digits and '_' after a '$'), empty when it did not take part or
 * does not exist; a '$' followed by nothing of that is itself.
 */
static void add_replacement(struct fsearch *fs, size_t s, size_t e)
{
	const char *r = fs->o->replace, *name, *end;
	struct buf *b = fs->out;
	PCRE2_SIZE *ov = fs->m->re ? pcre2_get_ovector_pointer(fs->sr->md) : NULL;
	uint32_t ovn = fs->m->re ? pcre2_get_ovector_count(fs->sr->md) : 0;

	for (; *r; r++) {
		long g = -1;
		char *nm;

		if (*r != '$') {
			buf_addch(b, *r);
			continue;
		}
		if (r[1] == '$') {
			buf_addch(b, '$');
			r++;
			continue;
		}
		if (r[1] == '{') {
			name = r + 2;
			end = strchr(name, '}');
		} else {
			name = end = r + 1;
			while ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') ||
			       (*end >= '0' && *end <= '9') || *end == '_')
				end++;
		}
		if (!end || end == name) {
			buf_addch(b, '$');	/* not a reference */
			continue;
		}
		nm = xstrndup(name, (size_t)(end - name));
		if (strspn(nm, "0123456789") == strlen(nm))
			g = strlen(nm) < 6 ? atol(nm) : -1;
		else if (fs->m->re)
			g = pcre2_substring_number_from_name(fs->m->re, (PCRE2_SPTR)nm);
		free(nm);
		if (g == 0 && !ov)
			buf_add(b, fs->buf + s, e - s);
		else if (g >= 0 && ov && (uint32_t)g < ovn && ov[2 * g] != PCRE2_UNSET && ov[2 * g + 1] >= ov[2 * g])
			buf_add(b, fs->buf + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
		r = *end == '}' ? end : end - 1;
	}
}

/* The match [s, e) for people: replaced (-r), coloured (--color), or as it is. */
static void add_span(struct fsearch *fs, size_t s, size_t e)
{
	if (fs->o->color && (e > s || fs->o->replace))
		buf_addstr(fs->out, COLOR_MATCH);
	if (fs->o->replace)
		add_replacement(fs, s, e);
	else
		buf_add(fs->out, fs->buf + s, e - s);
	if (fs->o->color && (e > s || fs->o->replace))
		buf_addstr(fs->out, COLOR_END);
}

/*
 * The text of the matching line [bol, eol) without its line end, each match in
 * it replaced (-r: empty ones too, as rg) or coloured (--color).
 */
static void match_text(struct fsearch *fs, size_t bol, size_t eol)
{
	struct buf *b = fs->out;
	size_t end = bol + text_len(fs->buf, bol, eol), p = bol, copied = bol, s, e, n;

	if (!fs->o->replace && !fs->o->color) {
		buf_add(b, fs->buf + bol, end - bol);
		return;
	}
	while (p <= end && next_span(fs, p, end, &s, &e)) {
		buf_add(b, fs->buf + copied, s - copied);
		add_span(fs, s, e);
		if (e > s) {
			p = copied = e;
			continue;
		}
		if (s >= end) {
			copied = end;
			break;
		}
		n = char_start(fs->buf, end, s + 1);	/* an empty match: the next character */
		buf_add(b, fs->buf + s, n - s);
		p = copied = n;
	}
	if (copied < end)
		buf_add(b, fs->buf + copied, end - copied);
}

/*
 * path<sep>line<sep>[col:]text\n; a matching line (col set, and not -v) has
 * its matches replaced or coloured.
 */
static void human_line(struct fsearch *fs, char sep, long line, size_t col, size_t bol, size_t eol)
{
	struct buf *b = fs->out;
	const struct options *o = fs->o;

	add_path(b, o, fs->path);
	if (o->color)
		buf_addf(b, "%c" COLOR_LINE "%ld" COLOR_END "%c", sep, line, sep);
	else
		buf_addf(b, "%c%ld%c", sep, line, sep);
	if (col && o->color)
		buf_addf(b, COLOR_COL "%zu" COLOR_END ":", col);
	else if (col)
		buf_addf(b, "%zu:", col);
	if (col && !o->invert)
		match_text(fs, bol, eol);
	else
		buf_add(b, fs->buf + bol, text_len(fs->buf, bol, eol));
	buf_addch(b, '\n');
}

/* Human context: write the pending "after" lines up to line limit. */
static void flush_after(struct fsearch *fs, long limit)
{
	size_t e;

	while (fs->after_left > 0 && fs->after_pos < fs->len && fs->after_line <= limit) {
		e = line_end(fs->buf, fs->after_pos, fs->len);
		human_line(fs, '-', fs->after_line, 0, fs->after_pos, e);
		fs->last_printed = fs->after_line;
		fs->after_line++;
		fs->after_pos = e + 1;
		fs->after_left--;
	}
}

/* Up to n lines before bol (excluding line `floor` and earlier): their starts, nearest last. */
static size_t lines_before(const char *buf, size_t bol, long n, size_t *starts)
{
	size_t k = 0, b = bol;

	while (k < (size_t)n && b > 0) {
		b = line_start(buf, 0, b - 1);
		starts[k++] = b;
	}
	return k;
}

static void json_lines(struct buf *b, const char *key, const char *buf, const size_t *starts,
		       size_t nr, int reverse, size_t len)
{
	size_t i, s, e;

	nd_key(b, key);
	buf_addch(b, '[');
	for (i = 0; i < nr; i++) {
		s = starts[reverse ? nr - 1 - i : i];
		e = line_end(buf, s, len);
		if (i)
			buf_addch(b, ',');
		nd_json_string(b, buf + s, text_len(buf, s, e));
	}
	buf_addch(b, ']');
}

/*
 * -o: each non-empty match in the line [bol, eol), as a match record or a
 * path:line:col:match line.  Context is not written.
 */
static void only_matching(struct fsearch *fs, long line, size_t bol, size_t eol)
{
	size_t p = bol, s, e;

	while (p <= eol) {
		if (!next_span(fs, p, eol, &s, &e))
			break;
		if (e > s) {
			if (fs->o->json) {
				struct buf r = BUF_INIT, *out = fs->out;

				if (fs->o->replace) {
					fs->out = &r;
					add_replacement(fs, s, e);
					fs->out = out;
				}
				nd_begin(out, "match");
				nd_str(out, "path", fs->path);
				nd_int(out, "line", line);
				nd_int(out, "col", (long long)(s - bol + 1));
				if (fs->o->replace)
					nd_strn(out, "text", r.buf, r.len);
				else
					nd_strn(out, "text", fs->buf + s, e - s);
				nd_end(out);
				buf_release(&r);
			} else {
				add_path(fs->out, fs->o, fs->path);
				if (fs->o->color)
					buf_addf(fs->out, ":" COLOR_LINE "%ld" COLOR_END ":" COLOR_COL "%zu" COLOR_END ":",
						 line, s - bol + 1);
				else
					buf_addf(fs->out, ":%ld:%zu:", line, s - bol + 1);
				add_span(fs, s, e);
				buf_addch(fs->out, '\n');
			}
			p = e;
		} else {
			p = char_start(fs->buf, eol, s + 1);	/* an empty match: the next character */
			if (s >= eol)
				break;
		}
	}
}

/* A matching line (-v: one that does not match): write what the output mode wants. */
static void on_match(struct fsearch *fs, size_t bol, size_t eol, size_t col)
{
	const struct options *o = fs->o;
	long line;

	fs->nmatch++;
	if (o->count || o->files_only || o->files_without || o->quiet)
		return;
	line = line_number(fs, bol);
	if (o->only && !o->invert && (o->json || (!o->before && !o->after))) {
		only_matching(fs, line, bol, eol);
		return;
	}
	if (o->json) {
		struct buf *b = fs->out;
		size_t before[64], after[64], nb = 0, na = 0, *bs = before, *as = after, p;

		if (o->before > 64)
			bs = xmalloc((size_t)o->before * sizeof(*bs));
		if (o->after > 64)
			as = xmalloc((size_t)o->after * sizeof(*as));
		nd_begin(b, "match");
		nd_str(b, "path", fs->path);
		nd_int(b, "line", line);
		nd_int(b, "col", (long long)col);
		if (o->replace && !o->invert) {
			/* -r: the line with its matches replaced, as rg writes it */
			struct buf r = BUF_INIT;

			fs->out = &r;
			match_text(fs, bol, eol);
			fs->out = b;
			nd_strn(b, "text", r.buf, r.len);
			buf_release(&r);
		} else {
			nd_strn(b, "text", fs->buf + bol, text_len(fs->buf, bol, eol));
		}
		if (o->before) {
			nb = lines_before(fs->buf, bol, o->before, bs);
			json_lines(b, "before", fs->buf, bs, nb, 1, fs->len);
		}
		if (o->after) {
			for (p = eol + 1; na < (size_t)o->after && p < fs->len; p = line_end(fs->buf, p, fs->len) + 1)
				as[na++] = p;
			json_lines(b, "after", fs->buf, as, na, 0, fs->len);
		}
		nd_end(b);
		if (bs != before)
			free(bs);
		if (as != after)
			free(as);
		return;
	}
	if (o->before || o->after) {
		long first = line - o->before, k;
		size_t *starts;
		size_t n;

		flush_after(fs, line - 1);
		if (first <= fs->last_printed)
			first = fs->last_printed + 1;
		if (first < 1)
			first = 1;
		if (fs->last_printed && first > fs->last_printed + 1)
			buf_addstr(fs->out, "--\n");
		if (first < line) {
			starts = xmalloc((size_t)(line - first) * sizeof(*starts));
			n = lines_before(fs->buf, bol, line - first, starts);
			for (k = (long)n - 1; k >= 0; k--)
				human_line(fs, '-', line - 1 - k, 0, starts[k],
					   line_end(fs->buf, starts[k], fs->len));
			free(starts);
		}
		if (o->only && !o->invert)
			only_matching(fs, line, bol, eol);	/* rg -o -C: the matches, with context */
		else
			human_line(fs, ':', line, col, bol, eol);
		fs->last_printed = line;
		fs->after_pos = eol + 1;
		fs->after_line = line + 1;
		fs->after_left = o->after;
		return;
	}
	human_line(fs, ':', line, col, bol, eol);
}

/* Start the search of a file; its text is given by fsearch_part. */
static void fsearch_begin(struct fsearch *fs, const struct options *o, const struct matcher *m,
			  struct searcher *sr, const char *path, struct buf *out)
{
	memset(fs, 0, sizeof(*fs));
	fs->o = o;
	fs->m = m;
	fs->sr = sr;
	fs->path = path;
	fs->kind = m->kind;
	fs->out = out;
	fs->deadline = now_ns() + file_budget_ns;
}

/*
 * -v: the lines of fs->buf that do not match, each given to on_match (column 1).
 * Returns 1 when the search of the file is over.
 */
static int invert_part(struct fsearch *fs)
{
	const struct options *o = fs->o;
	size_t pos = 0, stop, p, e, bol, eol, col;
	int found;

	while (pos <= fs->len) {
		found = next_match(fs, pos, &bol, &eol, &col);
		if (fs->timed_out)
			return 1;	/* the lines after pos are not known not to match */
		stop = found ? bol : fs->len;
		for (p = pos; p < stop; p = e + 1) {
			e = line_end(fs->buf, p, fs->len);
			on_match(fs, p, e, 1);
			if (o->files_only || o->files_without || o->quiet ||
			    (o->max_count && fs->nmatch >= o->max_count))
				return 1;
		}
		if (!found)
			break;
		pos = eol + 1;
	}
	return 0;
}

/*
 * Search buf[0..len), the file's lines from line number line0 on (all of it, or
 * a part of whole lines: see struct plan), appending the output to the file's.
 * Returns 1 when the search of the file is over (-l, -m, out of time).
 */
static int fsearch_part(struct fsearch *fs, const char *buf, size_t len, long line0)
{
	const struct options *o = fs->o;
	size_t pos = 0, bol, eol, col;

	fs->buf = buf;
	fs->len = len;
	fs->counted_pos = 0;
	fs->counted_line = line0;
	if (o->invert)
		return invert_part(fs);
	while (pos <= len && next_match(fs, pos, &bol, &eol, &col)) {
		on_match(fs, bol, eol, col);
		if (o->files_only || o->files_without || o->quiet ||
		    (o->max_count && fs->nmatch >= o->max_count))
			return 1;
		pos = eol + 1;
	}
	return fs->timed_out;
}

/* What -l, -L and --files write of a file: a match_file record, or its path. */
static void file_line(struct buf *out, const struct options *o, const char *path)
{
	if (o->json) {
		nd_begin(out, "match_file");
		nd_str(out, "path", path);
		nd_end(out);
	} else {
		add_path(out, o, path);
		buf_addch(out, '\n');
	}
}

/*
 * End the search of a file: what -c, -l and -L write, the context left to write.
 * Returns the number of matching lines; *limited is set when a limit cut the
 * search short.
 */
static long fsearch_end(struct fsearch *fs, int *limited)
{
	const struct options *o = fs->o;
	struct buf *out = fs->out;

	if (!o->json && !o->count && !o->files_only && !o->files_without && !o->quiet && fs->buf)
		flush_after(fs, LONG_MAX);
	if (fs->nmatch && o->count) {
		if (o->json) {
			nd_begin(out, "count");
			nd_str(out, "path", fs->path);
			nd_int(out, "count", fs->nmatch);
			nd_end(out);
		} else {
			add_path(out, o, fs->path);
			buf_addf(out, ":%ld\n", fs->nmatch);
		}
	} else if (fs->nmatch && o->files_only) {
		file_line(out, o, fs->path);
	} else if (!fs->nmatch && o->files_without && !fs->timed_out && !fs->limit_hit) {
		file_line(out, o, fs->path);
	}
	*limited = fs->timed_out ? 2 : fs->limit_hit;
	return fs->nmatch;
}

/*
 * Search buf[0..len) and append the output for it to out.  Returns the number of
 * matching lines; *limited is set when a limit cut the search short.
 */
static long search_buffer(const struct options *o, const struct matcher *m, struct searcher *sr,
			  const char *path, const char *buf, size_t len, struct buf *out, int *limited)
{
	struct fsearch fs;

	fsearch_begin(&fs, o, m, sr, path, out);
	fsearch_part(&fs, buf, len, 1);
	return fsearch_end(&fs, limited);
}

/* ---- the files to search ---- */

enum target_mode {
	T_READ,		/* read and search it */
	T_VERIFY,	/* a candidate: read it if it is still a file to read (stat) */
	T_CHECK,	/* the index says it cannot match: read it only if it changed */
	T_SKIP,		/* checked: unchanged, or gone */
};

/*
 * The parts of an indexed file that may hold a match, when it is as indexed:
 * the trigram table's segments that matched the query (struct index_seg:
 * whole lines), neighbours merged, in order.
 */
struct plan {
	size_t nr;
	struct index_seg part[];
};

/* The plan for a candidate f, or NULL when all of it is to be read. */
static struct plan *plan_of(const struct index_file *f)
{
	struct index_seg runs[INDEX_SEG_MAX];
	struct plan *pl;
	int nr;

	if (!f->hits || !f->exact)
		return NULL;
	/* none (a damaged index), or the whole file: read it whole */
	nr = index_seg_runs(f->segs, f->segs_len, f->hits, runs);
	if (nr <= 0)
		return NULL;
	pl = xmalloc(sizeof(*pl) + (size_t)nr * sizeof(pl->part[0]));
	pl->nr = (size_t)nr;
	memcpy(pl->part, runs, (size_t)nr * sizeof(runs[0]));
	return pl;
}

struct target {
	char *path;		/* root-relative */
	const char *disp;	/* as written: relative to the current directory, or as
				   given (display_path; set by the worker that takes it) */
	struct plan *plan;	/* an indexed candidate as indexed: the parts to read, or NULL */
	uint64_t size;		/* as listed (walk) or indexed */
	int64_t mtime;		/* likewise */
	unsigned char mode;	/* enum target_mode */
	unsigned char explicit_;	/* named on the command line */
	unsigned char need_lang;	/* -t: the language depends on the content */
};

static const char *display_path(const struct scope *sc, const char *path, struct buf *b);
static int filtered_out(const struct options *o, const char *path);

/* One file's result, handed from a worker to the writer. */
struct slot {
	struct buf out;		/* records or lines */
	struct buf warn;	/* warnings, whole lines */
	int done;		/* the worker has finished it */
	int matched;		/* it has a matching line */
	int failed;		/* it could not be read */
	int limited;		/* a limit cut its search short: results may be incomplete */
};

struct targets {
	struct target *v;	/* the files */
	size_t nr, alloc;
};

#define WINDOW 1024

struct job {
	const struct options *o;	/* options */
	const struct matcher *m;	/* the pattern */
	struct walker *w;		/* the repository */
	int rootfd;			/* its root, for openat */
	struct targets *ts;		/* the files, sorted; grows while listing */
	size_t avail;			/* files listed so far: workers may take them */
	int listed;			/* the list is complete */
	struct slot *slots;		/* WINDOW slots; file i in slots[i % WINDOW] */
	size_t next;			/* next file to take */
	size_t written;			/* files written so far */
	size_t writer_waits;		/* the file the writer waits for, or SIZE_MAX */
	int workers_wait;		/* workers waiting for room in the window */
	pthread_mutex_t lock;		/* guards the above and the slots' done */
	pthread_cond_t work_cond;	/* room in the window */
	pthread_cond_t done_cond;	/* the writer's file is done */
	int parts;			/* the pattern allows reading files by their plans */
	int *wrote;			/* something was written (of this tree or one before) */
	/* counters (atomic) */
	unsigned long n_read;		/* files read */
	unsigned long n_parts;		/* of which read by their plans' parts */
	unsigned long long bytes;	/* bytes read */
};

#define MMAP_MIN (16u << 20)	/* files this large are mapped, not read */

/*
 * Read the file whole into the searcher's buffer (or map it).  Returns 0, 1 when
 * it vanished, -1 after adding a warning to s.
 */
static int load_file(struct job *jb, struct searcher *sr, struct target *t, struct slot *s,
		     const char **data, size_t *len, int *mapped)
{
	int fd = openat(jb->rootfd, t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	size_t want, have = 0;
	ssize_t n;
	struct stat st;

	*mapped = 0;
	if (fd < 0) {
		if (errno == ENOENT || errno == ELOOP)
			return 1;	/* gone, or now a symbolic link, since it was listed */
		buf_addf(&s->warn, "%s: %s: cannot open: %s\n", progname, t->disp, strerror(errno));
		return -1;
	}
	want = t->size;
	if (want >= MMAP_MIN && fstat(fd, &st) == 0 && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			*data = p;
			*len = (size_t)st.st_size;
			*mapped = 1;
			return 0;
		}
	}
	/* room for size + 1 bytes: a short read of a regular file is its end */
	if (sr->rbuf_alloc < want + 2) {
		free(sr->rbuf);
		sr->rbuf_alloc = want + 2 < 65536 ? 65536 : want + 2 + want / 8;
		sr->rbuf = xmalloc(sr->rbuf_alloc);
	}
	for (;;) {
		size_t room = sr->rbuf_alloc - 1 - have;

		if (!room) {
			/* it grew while we read */
			sr->rbuf_alloc *= 2;
			sr->rbuf = xrealloc(sr->rbuf, sr->rbuf_alloc);
			continue;
		}
		n = read(fd, sr->rbuf + have, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		have += (size_t)n;
		if ((size_t)n < room)
			break;
		/*
		 * Listed without its size (lazy_stat): the size limit is checked
		 * here, once the file fills the first buffer, before reading on.
		 */
		if (!want && !t->explicit_ && jb->o->walk.max_filesize && have == sr->rbuf_alloc - 1 &&
		    fstat(fd, &st) == 0 && (uint64_t)st.st_size > jb->o->walk.max_filesize) {
			close(fd);
			return 1;
		}
	}
	close(fd);
	sr->rbuf[have] = '\0';
	*data = sr->rbuf;
	*len = have;
	return 0;
fail:
	buf_addf(&s->warn, "%s: %s: cannot read: %s\n", progname, t->disp, strerror(errno));
	close(fd);
	return -1;
}

static int lang_wanted(const struct options *o, const struct lang *l)
{
	size_t i;

	for (i = 0; i < o->langs_nr; i++)
		if (o->langs[i] == l)
			return 1;
	return 0;
}

/* What a limit did to the search of path (fsearch_end's *limited), in its warnings. */
static void warn_limited(struct slot *s, const char *path, int limited)
{
	if (limited == 2)
		buf_addf(&s->warn, "%s: warning: %s: gave up after %.3g s: the pattern is too costly here;"
			 " results for this file are incomplete\n", progname, path, (double)file_budget_ns / 1e9);
	else if (limited)
		buf_addf(&s->warn, "%s: warning: %s: the pattern hit PCRE2's match limit on some lines;"
			 " results for this file may be incomplete\n", progname, path);
	if (limited)
		s->limited = 1;
}

/*
 * Search the parts of t its plan names (an unchanged indexed file).  Returns 0
 * when done, -1 after a warning, 1 when the file is not as indexed (its parts do
 * not start and end with its lines, or its size changed): read it whole.
 */
static int search_parts(struct job *jb, struct searcher *sr, struct target *t, struct slot *s)
{
	const struct plan *pl = t->plan;
	size_t i, total = 0, at = 0, lo, want, got;
	size_t *start = xmalloc(pl->nr * sizeof(*start)), *len = xmalloc(pl->nr * sizeof(*len));
	struct fsearch fs;
	ssize_t n;
	int fd, limited, ret = 0;

	for (i = 0; i < pl->nr; i++) {
		uint64_t end = pl->part[i].end == UINT64_MAX ? t->size : pl->part[i].end;
		if (end < pl->part[i].off || end > t->size) {
			ret = 1;	/* not this file's parts */
			goto out;
		}
		total += (size_t)(end - pl->part[i].off) + 3;
	}
	fd = openat(jb->rootfd, t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		if (errno != ENOENT && errno != ELOOP) {
			buf_addf(&s->warn, "%s: %s: cannot open: %s\n", progname, t->disp, strerror(errno));
			ret = -1;
		}
		goto out;	/* gone, or now a symbolic link */
	}
	if (sr->rbuf_alloc < total) {
		free(sr->rbuf);
		sr->rbuf_alloc = total < 65536 ? 65536 : total + total / 8;
		sr->rbuf = xmalloc(sr->rbuf_alloc);
	}
	for (i = 0; i < pl->nr && !ret; i++) {
		const struct index_seg *p = &pl->part[i];
		int last = p->end == UINT64_MAX;
		char *b = sr->rbuf + at;

		/* from the newline before the part to its end, and a byte past the file's */
		lo = p->off ? (size_t)p->off - 1 : 0;
		want = (size_t)((last ? t->size : p->end) - lo);
		got = 0;
		while (got < want + last) {
			n = pread(fd, b + got, want + last - got, (off_t)(lo + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				buf_addf(&s->warn, "%s: %s: cannot read: %s\n", progname, t->disp, strerror(errno));
				ret = -1;
				break;
			}
			if (!n)
				break;
			got += (size_t)n;
		}
		if (ret)
			break;
		if (got != want || (p->off && b[0] != '\n') || (!last && want && b[want - 1] != '\n')) {
			ret = 1;	/* changed in place since it was indexed */
			break;
		}
		__atomic_add_fetch(&jb->bytes, (unsigned long long)got, __ATOMIC_RELAXED);
		start[i] = at + (p->off ? 1 : 0);
		len[i] = want - (p->off ? 1 : 0);
		sr->rbuf[start[i] + len[i]] = '\0';
		at = start[i] + len[i] + 1;
	}
	close(fd);
	if (ret)
		goto out;
	__atomic_add_fetch(&jb->n_read, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&jb->n_parts, 1, __ATOMIC_RELAXED);
	fsearch_begin(&fs, jb->o, jb->m, sr, t->disp, &s->out);
	for (i = 0; i < pl->nr; i++)
		if (fsearch_part(&fs, sr->rbuf + start[i], len[i], pl->part[i].line))
			break;
	s->matched = fsearch_end(&fs, &limited) > 0;
	warn_limited(s, t->disp, limited);
out:
	free(start);
	free(len);
	return ret;
}

static void search_one(struct job *jb, struct searcher *sr, struct target *t, struct slot *s)
{
	const struct options *o = jb->o;
	const char *data;
	size_t len;
	int mapped, limited = 0, rc, binary;
	long n;
	enum walk_skip why;

	t->disp = display_path(o->scope, t->path, &sr->disp);
	if (t->plan && jb->parts && !t->need_lang && !t->explicit_) {
		/* indexed, so not skipped by the walker's rules, unless too large */
		if (o->walk.max_filesize && t->size > o->walk.max_filesize)
			return;
		rc = search_parts(jb, sr, t, s);
		if (rc <= 0) {
			s->failed = rc < 0;
			return;
		}
		buf_reset(&s->out);	/* nothing was written: read it whole */
	}
	rc = load_file(jb, sr, t, s, &data, &len, &mapped);
	if (rc) {
		s->failed = rc < 0;
		return;
	}
	__atomic_add_fetch(&jb->n_read, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&jb->bytes, (unsigned long long)len, __ATOMIC_RELAXED);
	if (o->walk.max_filesize && len > o->walk.max_filesize && !t->explicit_)
		goto done;	/* grew past the limit since it was listed or indexed */
	why = walk_classify(jb->w, t->path, data, len);
	/* a binary file is searched with -a, and when named (as rg: its lines are not written) */
	binary = why == WALK_BINARY && (o->text || o->binary || t->explicit_);
	if (binary)
		why = WALK_OK;
	if (why != WALK_OK && !(why == WALK_GENERATED && t->explicit_)) {
		if (t->explicit_ || verbosity)
			buf_addf(&s->warn, "%s: %s%s: skipped: %s\n", progname,
				 t->explicit_ ? "warning: " : "", t->disp, walk_skip_name(why));
		goto done;
	}
	if (t->need_lang && !lang_wanted(o, lang_detect(t->path, data, len < 256 ? len : 256)))
		goto done;
	if (o->list_files) {
		file_line(&s->out, o, t->disp);	/* --files: a file that would be searched */
		s->matched = 1;
		goto done;
	}
	n = search_buffer(o, jb->m, sr, t->disp, data, len, &s->out, &limited);
	if (binary && !o->text && n > 0 && !o->json && !o->count && !o->files_only && !o->files_without) {
		/* its lines, for people: what rg writes instead */
		buf_reset(&s->out);
		buf_addf(&s->out, "%s: binary file matches (found \"\\0\" byte around offset %zu)\n",
			 t->disp, (size_t)((const char *)memchr(data, '\0', len) - data));
	}
	/* -L: a file is selected when it has no match (and was searched to its end) */
	s->matched = o->files_without ? s->out.len > 0 : n > 0;
	warn_limited(s, t->disp, limited);
done:
	if (mapped)
		munmap((void *)data, len);
}

/*
 * Files are taken and handed back in batches: one lock a batch, not two a file
 * (with a lock per file, the workers, the writer and the lister spent more time
 * waking each other than reading on the Linux tree: 240,000 futex calls).
 */
#define BATCH 64

static void *worker(void *arg)
{
	struct job *jb = arg;
	struct searcher sr;
	struct target t[BATCH];
	size_t i0, n, k;

	searcher_init(&sr, jb->m);
	pthread_mutex_lock(&jb->lock);
	for (;;) {
		while (!(jb->next < jb->avail && jb->next < jb->written + WINDOW) &&
		       !(jb->listed && jb->next >= jb->avail)) {
			jb->workers_wait++;
			pthread_cond_wait(&jb->work_cond, &jb->lock);
			jb->workers_wait--;
		}
		if (jb->next >= jb->avail)
			break;
		i0 = jb->next;
		n = jb->avail - i0;
		if (n > jb->written + WINDOW - i0)
			n = jb->written + WINDOW - i0;
		if (n > BATCH)
			n = BATCH;
		jb->next += n;
		for (k = 0; k < n; k++)
			t[k] = jb->ts->v[i0 + k];	/* copies: the list may move as it grows */
		pthread_mutex_unlock(&jb->lock);

		for (k = 0; k < n; k++) {
			struct slot *s = &jb->slots[(i0 + k) % WINDOW];
			search_one(jb, &sr, &t[k], s);
			if (jb->o->quiet && s->matched)
				_exit(EXIT_OK);	/* -q: the answer is known, nothing was written */
			__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
		}

		pthread_mutex_lock(&jb->lock);
		if (jb->writer_waits >= i0 && jb->writer_waits < i0 + n)
			pthread_cond_signal(&jb->done_cond);
	}
	pthread_mutex_unlock(&jb->lock);
	searcher_release(&sr);
	return NULL;
}

static void *lister(void *arg);

/*
 * Search the files with nthreads workers, writing each file's output in order.
 * Returns EXIT_OK if something matched, EXIT_NOTHING if not, EXIT_ERROR after a
 * read or write error, else EXIT_INCOMPLETE when a limit cut the search of a
 * file short (whatever matched elsewhere).
 */
static int run(struct job *jb, int nthreads, int context_sep, int stream)
{
	pthread_t *tids = xcalloc((size_t)nthreads, sizeof(*tids)), ltid;
	int i, matched = 0, failed = 0, limited = 0;
	size_t f;

	jb->slots = xcalloc(WINDOW, sizeof(*jb->slots));
	for (f = 0; f < WINDOW; f++) {
		buf_init(&jb->slots[f].out, 0);
		buf_init(&jb->slots[f].warn, 0);
	}
	jb->writer_waits = SIZE_MAX;
	if (stream && pthread_create(&ltid, NULL, lister, jb))
		die("cannot start a thread");
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, jb))
			die("cannot start a thread");
	for (f = 0;;) {
		size_t end;

		/* wait for file f, then write it and the done files after it */
		pthread_mutex_lock(&jb->lock);
		while (!(f < jb->avail && __atomic_load_n(&jb->slots[f % WINDOW].done, __ATOMIC_ACQUIRE)) &&
		       !(jb->listed && f >= jb->avail)) {
			jb->writer_waits = f;
			pthread_cond_wait(&jb->done_cond, &jb->lock);
		}
		jb->writer_waits = SIZE_MAX;
		if (f >= jb->avail) {
			pthread_mutex_unlock(&jb->lock);
			break;
		}
		end = f + 1;
		while (end < jb->avail && end < f + WINDOW &&
		       __atomic_load_n(&jb->slots[end % WINDOW].done, __ATOMIC_ACQUIRE))
			end++;
		pthread_mutex_unlock(&jb->lock);

		for (; f < end; f++) {
			struct slot *s = &jb->slots[f % WINDOW];

			if (s->warn.len) {
				fflush(stdout);
				fwrite(s->warn.buf, 1, s->warn.len, stderr);
			}
			if (s->out.len && !jb->o->quiet) {
				if (context_sep && *jb->wrote)
					fputs("--\n", stdout);
				fwrite(s->out.buf, 1, s->out.len, stdout);
				*jb->wrote = 1;
			}
			matched |= s->matched;
			failed |= s->failed;
			limited |= s->limited;
			if (s->out.alloc > (1 << 20))
				buf_release(&s->out);
			else
				buf_reset(&s->out);
			buf_reset(&s->warn);
			s->matched = s->failed = s->limited = 0;
			s->done = 0;	/* no worker takes the slot before written passes it */
		}

		pthread_mutex_lock(&jb->lock);
		jb->written = f;
		if (jb->workers_wait)
			pthread_cond_broadcast(&jb->work_cond);
		pthread_mutex_unlock(&jb->lock);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	if (stream)
		pthread_join(ltid, NULL);
	for (f = 0; f < WINDOW; f++) {
		buf_release(&jb->slots[f].out);
		buf_release(&jb->slots[f].warn);
	}
	free(jb->slots);
	free(tids);
	if (failed)
		return EXIT_ERROR;
	if (limited)
		return EXIT_INCOMPLETE;
	return matched ? EXIT_OK : EXIT_NOTHING;
}

/* ---- choosing the files: globs, languages, paths ---- */

#define glob_match walk_glob_match	/* gitignore's globs (walk.h) */

/*
 * Does glob g select path?  A glob without '/' is matched against the file's
 * name and each directory's name; one with '/' against the whole path and each
 * leading directory path.
 */
static int glob_selects(const struct glob *g, const char *path)
{
	const char *p = path, *slash;
	char *part;
	int hit = 0;

	if (!g->has_slash) {
		for (;;) {
			slash = strchr(p, '/');
			part = slash ? xstrndup(p, (size_t)(slash - p)) : (char *)p;
			hit = glob_match(g->pat, part);
			if (slash)
				free(part);
			if (hit || !slash)
				return hit;
			p = slash + 1;
		}
	}
	if (glob_match(g->pat, path))
		return 1;
	for (slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
		part = xstrndup(path, (size_t)(slash - path));
		hit = glob_match(g->pat, part);
		free(part);
		if (hit)
			return 1;
	}
	return 0;
}

/* Do the -g globs let path through? */
static int globs_pass(const struct options *o, const char *path)
{
	size_t i;
	int included = !o->globs_include;

	for (i = 0; i < o->globs_nr; i++) {
		if (o->globs[i].exclude) {
			if (glob_selects(&o->globs[i], path))
				return 0;
		} else if (!included && glob_selects(&o->globs[i], path)) {
			included = 1;
		}
	}
	return included;
}

/*
 * Do the -t languages let path through?  0 no, 1 yes, 2 only the content can
 * tell (no language from the name: a shebang line may give one).
 */
static int langs_pass(const struct options *o, const char *path)
{
	const struct lang *l;

	if (!o->langs_nr)
		return 1;
	l = lang_detect(path, NULL, 0);
	if (!l)
		return 2;
	return lang_wanted(o, l);
}

/*
 * Add a file if the filters let it through; path is malloc'd: taken, or freed.
 * Returns the target added, or NULL.
 */
static struct target *add_target_own(struct targets *ts, const struct options *o, char *path, uint64_t size,
				     int64_t mtime, int mode, int explicit_)
{
	int lp;
	struct target *t;

	if (!explicit_ && (!globs_pass(o, path) || (o->filter && filtered_out(o, path)))) {
		free(path);
		return NULL;
	}
	lp = langs_pass(o, path);
	if (!lp) {
		free(path);
		return NULL;
	}
	ALLOC_GROW(ts->v, ts->nr + 1, ts->alloc);
	t = &ts->v[ts->nr++];
	t->path = path;
	t->plan = NULL;
	t->size = size;
	t->mtime = mtime;
	t->mode = (unsigned char)mode;
	t->explicit_ = (unsigned char)explicit_;
	t->need_lang = lp == 2;
	return t;
}

/* The same with path copied. */
static struct target *add_target(struct targets *ts, const struct options *o, const char *path, uint64_t size,
				 int64_t mtime, int mode, int explicit_)
{
	return add_target_own(ts, o, xstrdup(path), size, mtime, mode, explicit_);
}

static void targets_release(struct targets *ts)
{
	size_t i;

	for (i = 0; i < ts->nr; i++) {
		free(ts->v[i].path);
		free(ts->v[i].plan);
	}
	free(ts->v);
	memset(ts, 0, sizeof(*ts));
}

/*
 * The root-relative paths named on the command line in one tree, or the
 * current directory when none is named: none at all (nr 0) when that is the
 * root, where paths are written root-relative as they are.
 */
struct scope {
	char **rel;		/* the paths that exist */
	int *is_dir;		/* each is a directory */
	const char **disp;	/* each as the user wrote it: what the paths of the files
				   under it start with; "" for the current directory */
	size_t nr;
	int given;		/* paths were given (nr may be 0 if none exists) */
};

/* The entry of sc that path is under (the longest, the first of equals), or -1. */
static long scope_find(const struct scope *sc, const char *path)
{
	size_t i, l, best_len = 0;
	long best = -1;

	for (i = 0; i < sc->nr; i++) {
		l = strlen(sc->rel[i]);
		if (best >= 0 && l <= best_len)
			continue;
		if (!l || (!strncmp(path, sc->rel[i], l) && (path[l] == '/' || (!path[l] && !sc->is_dir[i])))) {
			best = (long)i;
			best_len = l;
		}
	}
	return best;
}

/*
 * The path of a file as rg writes it: relative to the current directory when
 * no path was given, else joined to the path given that holds it.  Returns
 * path itself or b's text.
 */
static const char *display_path(const struct scope *sc, const char *path, struct buf *b)
{
	long i;
	size_t l;
	const char *rest, *d;

	if (!sc || !sc->nr || (i = scope_find(sc, path)) < 0)
		return path;
	l = strlen(sc->rel[i]);
	rest = !l ? path : path[l] ? path + l + 1 : "";
	d = sc->disp[i];
	if (!*d)
		return rest;
	buf_reset(b);
	buf_addstr(b, d);
	if (*rest) {
		if (d[strlen(d) - 1] != '/')
			buf_addch(b, '/');
		buf_addstr(b, rest);
	}
	return b->buf;
}

/*
 * Is path one a walk from the path given that holds it would not reach?  The
 * index holds hidden files and follows git's rules only: its files are checked
 * against the walker's hidden and .ignore rules, below the path given.
 * NEEDSWORK: a '!' rule of a .ignore or .rgignore brings back a file that git's
 * rules leave out; the index does not hold it, so an indexed search misses it
 * (a scan, --no-index, finds it).
 */
static int filtered_out(const struct options *o, const char *path)
{
	const struct scope *sc = o->scope;
	long i = sc && sc->nr ? scope_find(sc, path) : -1;
	size_t from = 0;

	if (i >= 0 && *sc->rel[i])
		from = strlen(sc->rel[i]) + 1;
	if (from > strlen(path))
		return 0;	/* the file named */
	return walker_path_excluded(o->filter, path, from);
}

static int in_scope(const struct scope *sc, const char *path)
{
	size_t i, l;

	if (!sc->nr)
		return 1;
	for (i = 0; i < sc->nr; i++) {
		l = strlen(sc->rel[i]);
		if (!l)
			return 1;
		if (sc->is_dir[i] && !strncmp(path, sc->rel[i], l) && path[l] == '/')
			return 1;
	}
	return 0;
}

/* The walker's list for the scope, as targets to read. */
static int walk_targets(struct walker *w, const struct options *o, const struct scope *sc,
			struct targets *ts, struct walk_list *list)
{
	size_t i;
	int errors = 0;

	if (!sc->nr)
		walker_walk(w, "", 0, list);
	for (i = 0; i < sc->nr; i++)
		if (walker_walk(w, sc->rel[i], !sc->is_dir[i], list) < 0)
			errors++;
	walk_list_finish(list);
	for (i = 0; i < list->files_nr; i++)
		add_target(ts, o, list->files[i].path, list->files[i].size, list->files[i].mtime,
			   T_READ, list->files[i].explicit_);
	return errors;
}

/* ---- listing the whole tree while it is searched ---- */

/*
 * The walk of a large tree takes a good part of a search (a third of it on the
 * Linux tree), so the tree is walked in a thread of its own, one top-level entry
 * at a time, and each entry's files are handed to the workers as soon as they
 * are listed.  Entries are taken in the order of their paths ("arch-x" before
 * "arch/"), so the concatenated lists are sorted as one walk's would be.
 *
 * NEEDSWORK: the top level is filtered here by walk_dir()'s rules (private,
 * vendored and ignored directories, ignored files); walk.c could offer "walk
 * this entry as its parent would" so that the rules live in one place.
 */
struct unit {
	char *rel;		/* the entry, root-relative */
	char *key;		/* rel, plus '/' for a directory: the sort key */
};

static int cmp_unit(const void *a, const void *b)
{
	return strcmp(((const struct unit *)a)->key, ((const struct unit *)b)->key);
}

/* The top-level entries of the tree worth walking, sorted. */
static size_t top_units(struct walker *w, int rootfd, struct unit **out)
{
	static const char *const private_dirs[] = { ".git", ".hg", ".svn", ".ci-index" };
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct unit *u = NULL;
	size_t nr = 0, alloc = 0, k;
	struct stat st;
	char *probe;

	if (!d) {
		if (fd >= 0)
			close(fd);
		*out = NULL;
		return 0;
	}
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		int is_dir, skip = 0;

		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]) || w->opts.skip_hidden))
			continue;
		if (fstatat(rootfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		is_dir = S_ISDIR(st.st_mode);
		if (is_dir) {
			for (k = 0; k < ARRAY_SIZE(private_dirs); k++)
				if (!strcmp(name, private_dirs[k]))
					skip = 1;
			probe = xasprintf("%s/x", name);
			if (!w->opts.include_vendored && walk_is_vendored_path(probe))
				skip = 1;
			free(probe);
		} else if (!S_ISREG(st.st_mode)) {
			skip = 1;	/* symbolic links, special files */
		}
		if (skip || walker_is_ignored(w, name, is_dir))
			continue;
		ALLOC_GROW(u, nr + 1, alloc);
		u[nr].rel = xstrdup(name);
		u[nr].key = is_dir ? xasprintf("%s/", name) : xstrdup(name);
		nr++;
	}
	closedir(d);
	if (nr)
		qsort(u, nr, sizeof(*u), cmp_unit);
	*out = u;
	return nr;
}

/* Hand the files of a sorted list to the workers. */
static void publish(struct job *jb, const struct walk_list *list)
{
	struct targets loc = { 0 };
	size_t i;

	for (i = 0; i < list->files_nr; i++)
		add_target(&loc, jb->o, list->files[i].path, list->files[i].size, list->files[i].mtime,
			   T_READ, list->files[i].explicit_);
	pthread_mutex_lock(&jb->lock);
	ALLOC_GROW(jb->ts->v, jb->ts->nr + loc.nr, jb->ts->alloc);
	if (loc.nr)
		memcpy(jb->ts->v + jb->ts->nr, loc.v, loc.nr * sizeof(*loc.v));
	jb->ts->nr += loc.nr;
	jb->avail = jb->ts->nr;
	if (jb->workers_wait)
		pthread_cond_broadcast(&jb->work_cond);
	pthread_cond_signal(&jb->done_cond);
	pthread_mutex_unlock(&jb->lock);
	free(loc.v);	/* the paths now belong to jb->ts */
}

static void *lister(void *arg)
{
	struct job *jb = arg;
	struct unit *u;
	size_t nr = top_units(jb->w, jb->rootfd, &u), i;

	for (i = 0; i < nr; i++) {
		struct walk_list sub = { 0 };

		walker_walk(jb->w, u[i].rel, 0, &sub);
		walk_list_finish(&sub);
		publish(jb, &sub);
		walk_list_release(&sub);
		free(u[i].rel);
		free(u[i].key);
	}
	free(u);
	pthread_mutex_lock(&jb->lock);
	jb->listed = 1;
	pthread_cond_broadcast(&jb->work_cond);
	pthread_cond_broadcast(&jb->done_cond);
	pthread_mutex_unlock(&jb->lock);
	return NULL;
}

/* ---- the index ---- */

/*
 * Does the index's trigram table match phrases (FTS5 detail=full)?  Then whole
 * strings are asked for, which is far more selective than their trigrams ANDed.
 * NEEDSWORK: this asks the table by the name index.h gives; index.c could tell.
 */
static int index_has_phrases(struct ci_index *ix)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(index_db(ix), "SELECT rowid FROM chunks_tri WHERE chunks_tri MATCH '\"abcd\"' LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

/* trigram_df_fn over the index's tri_df (statement data). */
static long tri_df_of(const char *tri, void *data)
{
	sqlite3_stmt *st = data;
	long df = 0;

	sqlite3_bind_text(st, 1, tri, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		df = (long)sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return df;
}

static double secs(int64_t a, int64_t b)
{
	return (double)(b - a) / 1e9;
}

struct ifile {
	char *path;		/* root-relative */
	struct plan *plan;	/* a candidate's parts to read (plan_of), or NULL */
	int64_t size, mtime;	/* when indexed */
	int exact;		/* its trigrams can be trusted */
	int candidate;		/* the trigram query says it may match */
};

struct ifiles {
	struct ifile *v;	/* sorted by path */
	size_t nr, alloc;
};

static int collect_file(const struct index_file *f, void *data)
{
	struct ifiles *fs = data;

	ALLOC_GROW(fs->v, fs->nr + 1, fs->alloc);
	fs->v[fs->nr].path = xstrdup(f->path);
	fs->v[fs->nr].size = f->size;
	fs->v[fs->nr].mtime = f->mtime;
	fs->v[fs->nr].exact = f->exact;
	fs->v[fs->nr].plan = plan_of(f);
	fs->v[fs->nr].candidate = 0;
	fs->nr++;
	return 0;
}

struct cand_cursor {
	struct ifiles *all;	/* every indexed file, sorted */
	size_t i;		/* where the last candidate was found */
	size_t nr;		/* candidates marked */
};

/* Mark a candidate in the sorted list (candidates come sorted too). */
static int mark_candidate(const struct index_file *f, void *data)
{
	struct cand_cursor *c = data;

	while (c->i < c->all->nr && strcmp(c->all->v[c->i].path, f->path) < 0)
		c->i++;
	if (c->i < c->all->nr && !strcmp(c->all->v[c->i].path, f->path)) {
		c->all->v[c->i].candidate = 1;
		c->nr++;
	}
	return 0;
}

static void ifiles_release(struct ifiles *fs)
{
	size_t i;

	for (i = 0; i < fs->nr; i++) {
		free(fs->v[i].path);
		free(fs->v[i].plan);
	}
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

/* "2024-01-02T03:04:05Z" as seconds since the epoch, or -1. */
static int64_t parse_stamp(const char *s)
{
	struct tm tm;
	char *end;

	if (!s)
		return -1;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return -1;
	return (int64_t)timegm(&tm);
}

/*
 * Has the set of files changed since the index was written?  Every directory
 * holding an indexed file (and each of their parents) is stat'ed: an entry added,
 * removed or renamed changes its directory's mtime.  So do the .gitignore files
 * among the indexed ones, since a rule changed there changes what a walk lists.
 */
static int tree_changed(int rootfd, const struct ifiles *fs, int64_t since)
{
	char *last = xstrdup(""), *dir;
	struct stat st;
	size_t i;
	const char *slash, *base;
	int changed = 0;

	if (fstat(rootfd, &st) < 0 || (int64_t)st.st_mtime >= since)
		changed = 1;
	for (i = 0; i < fs->nr && !changed; i++) {
		const char *p = fs->v[i].path;

		base = strrchr(p, '/');
		base = base ? base + 1 : p;
		if (!strcmp(base, ".gitignore") &&
		    (fstatat(rootfd, p, &st, 0) < 0 || st.st_size != fs->v[i].size ||
		     (int64_t)st.st_mtime != fs->v[i].mtime))
			changed = 1;
		/* each directory of the path not stat'ed yet (paths are sorted) */
		for (slash = strchr(p, '/'); slash && !changed; slash = strchr(slash + 1, '/')) {
			size_t l = (size_t)(slash - p);
			if (strlen(last) >= l && !strncmp(last, p, l) && (last[l] == '/' || !last[l]))
				continue;
			dir = xstrndup(p, l);
			if (fstatat(rootfd, dir, &st, 0) < 0 || (int64_t)st.st_mtime >= since)
				changed = 1;
			free(last);
			last = dir;
		}
	}
	free(last);
	return changed;
}

/*
 * Stat the T_CHECK files (those the index rules out) with nthreads threads: a
 * file whose size or modification time differs from the index's becomes T_READ,
 * the others T_SKIP.  This is most of the time of a selective indexed search on a
 * large tree (one stat per indexed file), hence the threads.
 */
struct check_job {
	struct targets *ts;		/* the files */
	int rootfd;			/* the root */
	uint64_t max_filesize;		/* a changed file over it is skipped */
	unsigned long checked;		/* files stat'ed (atomic) */
	unsigned long unchanged;	/* found unchanged (atomic) */
};

#define CHECK_BATCH 512

static void check_batch(size_t lo, size_t hi, void *arg)
{
	struct check_job *cj = arg;
	struct dir_stat ds = { .rootfd = cj->rootfd, .fd = -1 };
	size_t i;
	unsigned long checked = 0, unchanged = 0;
	struct stat st;

	for (i = lo; i < hi; i++) {
		struct target *t = &cj->ts->v[i];

		if (t->mode != T_CHECK && t->mode != T_VERIFY)
			continue;
		if (t->mode == T_CHECK)
			checked++;
		if (dir_stat(&ds, t->path, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (cj->max_filesize && (uint64_t)st.st_size > cj->max_filesize)) {
			t->mode = T_SKIP;	/* gone, or no longer a file to read */
		} else if (t->mode == T_CHECK && (uint64_t)st.st_size == t->size &&
			   (int64_t)st.st_mtime == t->mtime) {
			t->mode = T_SKIP;
			unchanged++;
		} else {
			if (t->plan && ((uint64_t)st.st_size != t->size || (int64_t)st.st_mtime != t->mtime)) {
				free(t->plan);	/* changed since it was indexed: read it whole */
				t->plan = NULL;
			}
			t->mode = T_READ;
			t->size = (uint64_t)st.st_size;
		}
	}
	dir_stat_release(&ds);
	__atomic_add_fetch(&cj->checked, checked, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cj->unchanged, unchanged, __ATOMIC_RELAXED);
}

/* Check the T_CHECK files, then keep only those to read.  *checked, *unchanged: counts. */
static void check_targets(struct targets *ts, int rootfd, const struct options *o, int trust,
			  unsigned long *checked, unsigned long *unchanged)
{
	struct check_job cj;
	size_t r, w;

	memset(&cj, 0, sizeof(cj));
	cj.ts = ts;
	cj.rootfd = rootfd;
	cj.max_filesize = o->walk.max_filesize;
	if (!trust)
		parallel_batches(ts->nr, CHECK_BATCH, o->threads, check_batch, &cj);
	for (r = w = 0; r < ts->nr; r++) {
		if (ts->v[r].mode != T_READ) {
			free(ts->v[r].path);
			free(ts->v[r].plan);
			continue;
		}
		ts->v[w++] = ts->v[r];
	}
	ts->nr = w;
	*checked = cj.checked;
	*unchanged = cj.unchanged;
}

struct plan_stats {
	const char *mode;		/* "scan" or "index" */
	int walked;			/* the tree was walked */
	size_t indexed;			/* files in the index */
	size_t candidates;		/* trigram candidates */
	int served;			/* ... told by the index's server */
	unsigned long checked;		/* indexed files stat'ed */
	unsigned long unchanged;	/* ... and found unchanged */
	char *query;			/* the trigram query */
	double t_files;			/* seconds: reading the index's file list */
	double t_query;			/* ... the trigram query */
	double t_tree;			/* ... checking the directories */
	double t_check;			/* ... checking the files */
	size_t dirs;			/* directories recorded in the index */
	size_t dirs_changed;		/* ... found changed (re-listed) */
	int all_clean;			/* the server saw nothing happen: none read */
	size_t relisted;		/* files listed in them */
};

/* ---- checking the tree by its directories ---- */

/*
 * An index written by ci-index records the directories its walk entered, with
 * their modification times (table dirs), the files holding ignore rules (meta
 * 'rules') and the files modified within a second of the walk (meta 'racy').
 * Adding, removing or renaming an entry changes its directory's mtime, and so
 * does an editor's "atomic save" (write a new file, rename it over the old one):
 * a directory whose mtime is what the index recorded holds the files the index
 * lists, under the same rules.  So instead of walking the tree, a search stats
 * each directory (5,000 on the Linux tree, against 78,000 files) and re-lists
 * only those that changed, plus any recorded within a second of the walk (their
 * mtime could hide a later change in the same clock tick: git's "racy" entries).
 *
 * What that cannot see is a file rewritten in place (same inode): only its own
 * mtime changes.  So the files are checked too (--check files, the default: one
 * stat per indexed file) unless the caller accepts that such a file is searched
 * as it was at the last `ci-index update` (--check dirs).  A change to the rules
 * (a .gitignore, .git/info/exclude, or git's index, since tracked files are never
 * ignored) makes the caller walk the whole tree instead.
 */
struct idir {
	char *path;		/* root-relative, "" for the root */
	int64_t mtime;		/* nanoseconds, as recorded */
	int changed;		/* re-list it */
	int clean;		/* the index's server saw nothing happen in it */
};

struct idirs {
	struct idir *v;		/* sorted by path */
	size_t nr, alloc;
	int served;		/* clean says what the index's server saw */
	int all_clean;		/* served, nothing happened anywhere: v not read */
	char **racy;		/* racy files, sorted */
	size_t racy_nr, racy_alloc;
};

static void idirs_release(struct idirs *d)
{
	size_t i;

	for (i = 0; i < d->nr; i++)
		free(d->v[i].path);
	free(d->v);
	for (i = 0; i < d->racy_nr; i++)
		free(d->racy[i]);
	free(d->racy);
	memset(d, 0, sizeof(*d));
}

static int cmp_idir(const void *a, const void *b)
{
	return strcmp(((const struct idir *)a)->path, ((const struct idir *)b)->path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct idir *idir_find(const struct idirs *d, const char *path)
{
	struct idir key;

	key.path = (char *)path;
	return d->nr ? bsearch(&key, d->v, d->nr, sizeof(*d->v), cmp_idir) : NULL;
}

/* The directory of path ("" at the top), in a buffer of the caller's. */
static const char *dir_of(const char *path, struct buf *b)
{
	const char *slash = strrchr(path, '/');

	buf_reset(b);
	if (slash)
		buf_add(b, path, (size_t)(slash - path));
	return b->buf;
}

/* Is the directory dir, or something under it, in the scope? */
static int dir_in_scope(const struct scope *sc, const char *dir)
{
	size_t i, l, dl = strlen(dir);

	if (!sc->nr)
		return 1;
	for (i = 0; i < sc->nr; i++) {
		l = strlen(sc->rel[i]);
		if (!l || !dl)
			return 1;
		/* dir is under the scope, or the scope is under dir */
		if (!strncmp(dir, sc->rel[i], l < dl ? l : dl) &&
		    (l == dl || (l < dl ? dir[l] == '/' : sc->rel[i][dl] == '/')))
			return 1;
	}
	return 0;
}

/* Stat the directories of the scope, in batches taken by threads. */
struct dir_check {
	struct idirs *d;		/* the directories */
	const struct scope *sc;		/* the scope */
	int rootfd;			/* the root */
	int64_t walked;			/* when the index's walk started, ns */
	size_t changed;			/* found changed (atomic) */
};

static void dir_check_batch(size_t lo, size_t hi, void *arg)
{
	struct dir_check *dc = arg;
	size_t i, changed = 0;
	struct stat sb;

	for (i = lo; i < hi; i++) {
		struct idir *e = &dc->d->v[i];

		if (!dir_in_scope(dc->sc, e->path) || e->clean)
			continue;
		if (fstatat(dc->rootfd, *e->path ? e->path : ".", &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(sb.st_mode) ||
		    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != e->mtime ||
		    e->mtime >= dc->walked - 1000000000) {
			e->changed = 1;
			changed++;
		}
	}
	__atomic_add_fetch(&dc->changed, changed, __ATOMIC_RELAXED);
}

/* The index searched (its path), for its server's socket. */
static const char *index_path_g;

/*
 * Ask the index's server (ci-index serve: ci-index's, beside this program) the
 * question q: 0 with its answer in *ans (malloc'd) and *body at the line after
 * its "STAMP <updated>", when it answers for the index as this search reads it
 * (its last update is the one that wrote the index); else 1 (*ans NULL).  A
 * question no server answers (none started, or it idled out) starts one for
 * the searches after this one, as `ci-index update` does, if its updates can
 * write the index.  CI_INDEX_SERVER=0 leaves the server out.
 */
static int server_ask(struct ci_index *ix, const char *q, char **ans, char **body)
{
	static char *exe, *sock, *looked;	/* looked: the index whose socket sock is */
	const char *updated = index_meta(ix, "updated");
	char *nl;
	int rc;

	*ans = NULL;
	if (server_env("CI_INDEX_SERVER") == SERVER_OFF || !index_path_g || !updated || !*updated)
		return 1;
	if (!looked || strcmp(looked, index_path_g)) {
		/* another tree's index (paths of several trees given) */
		free(looked);
		free(sock);
		sock = NULL;
		looked = xstrdup(index_path_g);
		if (!exe)
			exe = find_prog("ci-index");
		sock = strchr(exe, '/') ? fork_server_socket_of("index", index_path_g, exe) : NULL;
	}
	if (!sock)
		return 1;
	rc = fork_server_query(sock, q, ans, FORK_SERVER_SEARCH_MS);
	if (rc < 0) {
		/* none answered: one for the searches after this one (a server
		 * that is there but hung keeps its lock: another would not start) */
		if (rc != FORK_SERVER_HUNG && !access(index_path_g, W_OK))
			fork_server_spawn_of(exe, index_path_g, fork_server_idle("CI_INDEX_SERVER_IDLE", ENV_WARN));
		free(sock);
		sock = NULL;	/* asked once */
		return 1;
	}
	if (strncmp(*ans, "STAMP ", 6) || !(nl = strchr(*ans, '\n')) ||
	    (size_t)(nl - *ans - 6) != strlen(updated) || strncmp(*ans + 6, updated, strlen(updated))) {
		free(*ans);
		*ans = NULL;
		return 1;
	}
	*body = nl + 1;
	return 0;
}

/*
 * The directories where something happened since the index was written, as
 * the index's server (which watches the tree with inotify) knows them, sorted:
 * 0 with them in *dirs, or 1 when no server answers for this index
 * (server_ask) or it cannot vouch for the tree.
 */
static int server_dirty(struct ci_index *ix, char ***dirs, size_t *nr)
{
	char *ans, *p, *nl;
	size_t alloc = 0;

	*dirs = NULL;
	*nr = 0;
	if (server_ask(ix, "dirty", &ans, &p))
		return 1;
	for (; *p && (nl = strchr(p, '\n')); p = nl + 1) {
		ALLOC_GROW(*dirs, *nr + 1, alloc);
		(*dirs)[(*nr)++] = xstrndup(p, (size_t)(nl - p));
	}
	free(ans);
	if (*nr)
		qsort(*dirs, *nr, sizeof(**dirs), cmp_str);
	return 0;
}

static int cmp_ifile(const void *a, const void *b)
{
	return strcmp(((const struct ifile *)a)->path, ((const struct ifile *)b)->path);
}

/* One part "<off>,<end>,<line>" of a server's candidate line into *sg; the rest after it. */
static const char *parse_part(const char *p, struct index_seg *sg)
{
	char *e;
	long long end;

	sg->off = strtoull(p, &e, 10);
	if (*e != ',')
		return NULL;
	end = strtoll(e + 1, &e, 10);
	if (*e != ',' || end < -1)
		return NULL;
	sg->end = end < 0 ? UINT64_MAX : (uint64_t)end;
	sg->line = strtol(e + 1, &e, 10);
	return sg->line < 1 ? NULL : e;
}

/*
 * The candidates of the trigram query from the index's server (its "cand"
 * question: see srv_cand in ci-index.c), sorted by path, if it answers for
 * the index as this search reads it.  Returns 0, or 1 (ask the index).
 */
static int server_candidates(struct ci_index *ix, const char *query, struct ifiles *out)
{
	char *ans, *q = xasprintf("cand %s", query), *p, *nl;
	int ok = 1, rc = server_ask(ix, q, &ans, &p);

	free(q);
	if (rc)
		return 1;
	for (; *p && ok && (nl = strchr(p, '\n')); p = nl + 1) {
		struct ifile f = { 0 };
		struct index_seg parts[INDEX_SEG_MAX];
		size_t n = 0;
		char *e;

		*nl = '\0';
		if (*p == '-') {
			p++;
		} else {
			while (ok && n < INDEX_SEG_MAX) {
				const char *r = parse_part(p, &parts[n]);
				if (!r) {
					ok = 0;
					break;
				}
				n++;
				p = (char *)r;
				if (*p != ';')
					break;
				p++;
			}
		}
		if (!ok || *p != '\t')
			break;
		f.size = strtoll(p + 1, &e, 10);
		if (*e != '\t')
			break;
		f.mtime = strtoll(e + 1, &e, 10);
		if (*e != '\t' || (e[1] != '0' && e[1] != '1') || e[2] != '\t')
			break;
		f.exact = e[1] == '1';
		f.path = xstrdup(e + 3);
		if (n) {
			f.plan = xmalloc(sizeof(*f.plan) + n * sizeof(f.plan->part[0]));
			f.plan->nr = n;
			memcpy(f.plan->part, parts, n * sizeof(parts[0]));
		}
		ALLOC_GROW(out->v, out->nr + 1, out->alloc);
		out->v[out->nr++] = f;
	}
	if (!ok || *p) {
		/* not an answer this program understands: the index's own */
		free(ans);
		ifiles_release(out);
		return 1;
	}
	free(ans);
	if (out->nr)
		qsort(out->v, out->nr, sizeof(*out->v), cmp_ifile);
	return 0;
}

static void strings_free(char **v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(v[i]);
	free(v);
}

/*
 * Read the index's directories and racy files, and stat the directories in the
 * scope.  Returns 0, or 1 when the index has no such record (an older one) or
 * its rules changed: the caller walks instead.
 */
static int idirs_load(struct ci_index *ix, int rootfd, const struct scope *sc, int threads,
		      struct idirs *d, size_t *changed)
{
	sqlite3_stmt *st;
	const char *v = index_meta(ix, "walked_ns"), *r, *nl;
	int64_t walked;
	char **dirty = NULL;
	size_t dirty_nr = 0, i;
	int served;

	*changed = 0;
	if (!v || !*v)
		return 1;
	walked = (int64_t)atoll(v);
	if (!walk_rules_unchanged(index_meta(ix, "rules"), rootfd))
		return 1;
	r = index_meta(ix, "racy");
	for (; r && *r; r = nl + 1) {
		nl = strchr(r, '\n');
		if (!nl)
			break;
		ALLOC_GROW(d->racy, d->racy_nr + 1, d->racy_alloc);
		d->racy[d->racy_nr++] = xstrndup(r, (size_t)(nl - r));
	}
	if (d->racy_nr)
		qsort(d->racy, d->racy_nr, sizeof(*d->racy), cmp_str);
	served = server_dirty(ix, &dirty, &dirty_nr) == 0;
	if (served && !dirty_nr && !sc->nr) {
		/* the server saw nothing happen anywhere: no directory to look at */
		d->served = d->all_clean = 1;
		return 0;
	}
	if (sqlite3_prepare_v2(index_db(ix), "SELECT path, mtime FROM dirs", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(d->v, d->nr + 1, d->alloc);
		d->v[d->nr].path = xstrdup((const char *)sqlite3_column_text(st, 0));
		d->v[d->nr].mtime = sqlite3_column_int64(st, 1);
		d->v[d->nr].changed = 0;
		d->v[d->nr].clean = 0;
		d->nr++;
	}
	sqlite3_finalize(st);
	if (!d->nr)
		goto fail;	/* not even the root: not recorded */
	qsort(d->v, d->nr, sizeof(*d->v), cmp_idir);
	if (served) {
		/* what the server vouches for is neither stat'ed nor checked */
		for (i = 0; i < d->nr; i++) {
			const char *key = d->v[i].path;
			d->v[i].clean = !(dirty_nr && bsearch(&key, dirty, dirty_nr, sizeof(*dirty), cmp_str));
		}
		d->served = 1;
	}
	strings_free(dirty, dirty_nr);
	{
		struct dir_check dc = { d, sc, rootfd, walked, 0 };

		parallel_batches(d->nr, CHECK_BATCH, threads, dir_check_batch, &dc);
		*changed = dc.changed;
	}
	return 0;
fail:
	strings_free(dirty, dirty_nr);
	return 1;
}

/*
 * List what the changed directories hold now (and all of any directory that is
 * not in the index, found in them or named as the scope) into list.
 */
static void relist(struct walker *w, const struct idirs *d, const struct scope *sc, struct walk_list *list)
{
	size_t i, n;

	for (i = 0; i < d->nr; i++)
		if (d->v[i].changed)
			walker_list_dir(w, d->v[i].path, list);
	n = list->dirs_nr;
	for (i = 0; i < n; i++) {
		char *p;

		if (list->dirs[i].entered || idir_find(d, list->dirs[i].path))
			continue;
		p = xstrdup(list->dirs[i].path);	/* the walk may move the array */
		walker_walk(w, p, 0, list);
		free(p);
	}
	for (i = 0; i < sc->nr; i++)
		if (sc->is_dir[i] && !idir_find(d, sc->rel[i]))
			walker_walk(w, sc->rel[i], 0, list);
	walk_list_finish(list);
}

/*
 * Does a directory of list hold a .gitignore the index's rules do not list (a
 * new one)?  Looked for by name: a walk that leaves hidden files out does not
 * list it.
 */
static int new_rules(struct ci_index *ix, int rootfd, const struct walk_list *list)
{
	const char *rules = index_meta(ix, "rules");
	size_t i;
	int found = 0;

	for (i = 0; i < list->dirs_nr && !found; i++) {
		const char *d = list->dirs[i].path;
		char *p = *d ? xasprintf("%s/.gitignore", d) : xstrdup(".gitignore"), *line;

		if (list->dirs[i].entered && !faccessat(rootfd, p, F_OK, 0)) {
			line = xasprintf(" %s\n", p);
			found = !rules || !strstr(rules, line);
			free(line);
		}
		free(p);
	}
	return found;
}

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->mode - (int)y->mode;	/* T_READ first */
}

/* Sort the targets by path, one per path (T_READ wins). */
static void targets_sort(struct targets *ts)
{
	size_t i, j = 0;

	if (ts->nr)
		qsort(ts->v, ts->nr, sizeof(*ts->v), cmp_target);
	for (i = 0; i < ts->nr; i++) {
		if (j && !strcmp(ts->v[j - 1].path, ts->v[i].path)) {
			/* read whole if either says so (a racy file is never read by parts) */
			if (!ts->v[i].plan || !ts->v[j - 1].plan) {
				free(ts->v[j - 1].plan);
				ts->v[j - 1].plan = NULL;
			}
			free(ts->v[i].path);
			free(ts->v[i].plan);
			continue;
		}
		ts->v[j++] = ts->v[i];
	}
	ts->nr = j;
}

static int is_racy(const struct idirs *d, const char *path)
{
	return d->racy_nr && bsearch(&path, d->racy, d->racy_nr, sizeof(*d->racy), cmp_str);
}

/*
 * The files to search, checking the tree by its directories (see above): the
 * candidates and racy files in unchanged directories; what the changed ones
 * hold that is new, changed or a candidate; with --check files, every other
 * indexed file in an unchanged directory, to be stat'ed.  Returns 0, or 1 when
 * the index cannot tell (the caller walks).
 */
static int dir_targets(struct ci_index *ix, struct walker *w, int rootfd, const struct options *o,
		       const char *query, const struct scope *sc, struct targets *ts, struct plan_stats *ps)
{
	struct idirs d = { 0 };
	struct ifiles cand = { 0 }, all = { 0 };
	struct walk_list list = { 0 };
	struct buf dir = BUF_INIT;
	struct idir *e;
	sqlite3_stmt *look = NULL;
	size_t i, j;
	int64_t t0 = now_ns(), t1;
	int rc = 1;

	if (idirs_load(ix, rootfd, sc, o->threads, &d, &ps->dirs_changed))
		goto done;
	ps->dirs = d.nr;
	ps->all_clean = d.all_clean;
	t1 = now_ns();
	ps->t_tree = secs(t0, t1);

	if (query && d.served && server_candidates(ix, query, &cand) == 0) {
		rc = 0;		/* the server's map of the index: no join per candidate */
		ps->served = 1;
	} else if (query)
		rc = index_trigram_candidates(ix, query, collect_file, &cand);
	else
		rc = index_files(ix, collect_file, &cand);
	if (rc < 0)
		goto done;
	ps->candidates = cand.nr;
	t0 = now_ns();
	ps->t_query = secs(t1, t0);

	relist(w, &d, sc, &list);
	ps->relisted = list.files_nr;
	if (w->repo && !o->walk.no_ignore && new_rules(ix, rootfd, &list)) {
		rc = 1;		/* a new .gitignore: its rules reach below */
		goto done;
	}
	t1 = now_ns();
	ps->t_tree += secs(t0, t1);

	/*
	 * Candidates (and racy files) where the index still holds: stat'ed, then
	 * read by their plans if their size and time are still the indexed ones
	 * (the server's clean directories: read by their plans, not stat'ed)
	 */
	for (i = 0; i < cand.nr; i++) {
		const char *p = cand.v[i].path;
		struct target *t;
		int racy;
		if (!in_scope(sc, p) || ((e = idir_find(&d, dir_of(p, &dir))) && e->changed))
			continue;
		/* in a directory the server vouches for, a file is as indexed: no stat */
		racy = is_racy(&d, p);
		t = add_target(ts, o, p, (uint64_t)cand.v[i].size, cand.v[i].mtime,
			       (d.all_clean || (e && e->clean)) && !racy ? T_READ : T_VERIFY, 0);
		if (t && !racy) {
			t->plan = cand.v[i].plan;
			cand.v[i].plan = NULL;
		}
	}
	for (i = 0; i < d.racy_nr; i++) {
		const char *p = d.racy[i];
		if (!in_scope(sc, p) || ((e = idir_find(&d, dir_of(p, &dir))) && e->changed))
			continue;
		add_target(ts, o, p, 0, 0, T_VERIFY, 0);
	}
	if (o->check == CHECK_FILES && d.served) {
		/*
		 * The index's server vouches for its clean directories: only the
		 * files of the others are checked, read by a range of paths each
		 * (not the whole file list: 40 ms on the Linux tree).
		 */
		sqlite3_stmt *sub = NULL, *top = NULL, *rs;
		if (sqlite3_prepare_v2(index_db(ix), "SELECT path, size, mtime FROM files WHERE path > ?1 AND path < ?2",
				       -1, &sub, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(index_db(ix), "SELECT path, size, mtime FROM files WHERE instr(path, '/') = 0",
				       -1, &top, NULL) != SQLITE_OK) {
			sqlite3_finalize(sub);
			rc = -1;
			goto done;
		}
		for (i = 0; i < d.nr; i++) {
			struct idir *x = &d.v[i];
			char *lo = NULL, *hi = NULL;
			if (x->clean || x->changed || !dir_in_scope(sc, x->path))
				continue;
			rs = top;
			if (*x->path) {
				/* "dir/" < path < "dir0": '0' follows '/' */
				lo = xasprintf("%s/", x->path);
				hi = xasprintf("%s0", x->path);
				rs = sub;
				sqlite3_bind_text(rs, 1, lo, -1, SQLITE_STATIC);
				sqlite3_bind_text(rs, 2, hi, -1, SQLITE_STATIC);
			}
			while (sqlite3_step(rs) == SQLITE_ROW) {
				const char *p = (const char *)sqlite3_column_text(rs, 0);
				struct ifile key;
				if (strcmp(dir_of(p, &dir), x->path) || !in_scope(sc, p))
					continue;	/* in a subdirectory: its own */
				key.path = (char *)p;
				if (cand.nr && bsearch(&key, cand.v, cand.nr, sizeof(*cand.v), cmp_ifile))
					continue;	/* a candidate: read */
				add_target(ts, o, p, (uint64_t)sqlite3_column_int64(rs, 1), sqlite3_column_int64(rs, 2),
					   T_CHECK, 0);
				ps->indexed++;
			}
			sqlite3_reset(rs);
			free(lo);
			free(hi);
		}
		sqlite3_finalize(sub);
		sqlite3_finalize(top);
	} else if (o->check == CHECK_FILES) {
		if (index_file_stats(ix, collect_file, &all) < 0) {
			rc = -1;
			goto done;
		}
		ps->indexed = all.nr;
		for (i = j = 0; i < all.nr; i++) {
			const char *p = all.v[i].path;
			while (j < cand.nr && strcmp(cand.v[j].path, p) < 0)
				j++;
			if (j < cand.nr && !strcmp(cand.v[j].path, p))
				continue;	/* a candidate: read */
			if (!in_scope(sc, p) || ((e = idir_find(&d, dir_of(p, &dir))) && (e->changed || e->clean)))
				continue;
			add_target_own(ts, o, all.v[i].path, (uint64_t)all.v[i].size, all.v[i].mtime, T_CHECK, 0);
			all.v[i].path = NULL;	/* the target's now */
		}
	}
	/* what the changed directories hold: new or changed files, and candidates */
	look = NULL;
	if (list.files_nr &&
	    sqlite3_prepare_v2(index_db(ix), "SELECT size, mtime FROM files WHERE path = ?1", -1, &look, NULL) != SQLITE_OK) {
		rc = -1;
		goto done;
	}
	for (i = 0; i < list.files_nr; i++) {
		struct walk_file *f = &list.files[i];
		struct ifile key;
		int read = 1;

		if (!in_scope(sc, f->path))
			continue;
		key.path = f->path;
		if (!is_racy(&d, f->path) &&
		    !(cand.nr && bsearch(&key, cand.v, cand.nr, sizeof(*cand.v), cmp_ifile))) {
			sqlite3_bind_text(look, 1, f->path, -1, SQLITE_STATIC);
			if (sqlite3_step(look) == SQLITE_ROW &&
			    sqlite3_column_int64(look, 0) == (int64_t)f->size &&
			    sqlite3_column_int64(look, 1) == f->mtime)
				read = 0;	/* indexed as it is, and ruled out */
			sqlite3_reset(look);
		}
		if (read)
			add_target(ts, o, f->path, f->size, f->mtime, T_READ, 0);
	}
	t0 = now_ns();
	ps->t_tree += secs(t1, t0);
	/*
	 * Checked, then sorted: the list holds every indexed file (in path
	 * order, which keeps each directory's files together for dir_stat), of
	 * which few are left to read.  A path listed twice (a racy file that is
	 * also checked) is read if either says so.
	 */
	check_targets(ts, rootfd, o, 0, &ps->checked, &ps->unchanged);
	targets_sort(ts);
	ps->t_check = secs(t0, now_ns());
	rc = 0;
done:
	sqlite3_finalize(look);
	ifiles_release(&cand);
	ifiles_release(&all);
	walk_list_release(&list);
	idirs_release(&d);
	buf_release(&dir);
	return rc;
}


/*
 * The files to search with the index ix: its candidates, every indexed file to
 * be checked for a change, and when the tree's directories changed, the walker's
 * files that the index does not know.  Returns 0, or -1 when the index cannot be
 * used (the caller scans instead).
 */
static int index_targets(struct ci_index *ix, struct walker *w, int rootfd, const struct options *o,
			 const struct matcher *m, const struct scope *sc, struct targets *ts,
			 struct plan_stats *ps)
{
	struct ifiles all = { 0 };
	struct cand_cursor cc;
	size_t i, j;
	int64_t since;
	int walk = 0, rc;
	struct walk_list list = { 0 };
	int64_t t0 = now_ns(), t1;
	/* -v, -L, --files: a file without the pattern's trigrams is read too */
	char *query = m->info.query && !o->all_files ? xstrdup(m->info.query) : NULL;

	if (query && index_has_phrases(ix)) {
		free(query);
		query = trigram_query(m->pattern, m->tflags | TRIGRAM_PHRASES);
	} else if (query) {
		/* the common trigrams left out when rarer ones say nearly as much */
		sqlite3_stmt *df;
		if (sqlite3_prepare_v2(index_db(ix), "SELECT df FROM tri_df WHERE tri = ?1", -1, &df, NULL) == SQLITE_OK) {
			free(query);
			query = trigram_query_lean(m->pattern, m->tflags, tri_df_of, df);
			sqlite3_finalize(df);
		}
	}
	ps->query = query;	/* freed by the caller */

	/*
	 * A search is a short-lived reader touching scattered pages once: read()
	 * into SQLite's cache costs less than a page fault per page through a
	 * mapping (3x less for the file list on the Linux tree).
	 */
	sqlite3_exec(index_db(ix), "PRAGMA mmap_size = 0", NULL, NULL, NULL);
	for (i = 0; i < sc->nr; i++)
		if (!sc->is_dir[i])
			walk = 1;	/* a file named: it may be ignored, so not indexed */
	if (o->trust_index && o->walk_default && !walk) {
		/* the candidates alone: no file list, no directory or file checked */
		const char *v = index_meta(ix, "walked_ns");
		if (!v || !*v)
			warning("the index '%s' holds the records loaded into it, not a walk of the tree: "
				"--trust-index searched only its files", index_path_g ? index_path_g : "");
		if (query && server_candidates(ix, query, &all) == 0) {
			rc = 0;		/* the server's map of the index: no join per candidate */
			ps->served = 1;
		} else if (query)
			rc = index_trigram_candidates(ix, query, collect_file, &all);
		else
			rc = index_files(ix, collect_file, &all);
		if (rc < 0)
			return -1;
		ps->t_query = secs(t0, now_ns());
		ps->candidates = all.nr;
		for (i = 0; i < all.nr; i++) {
			struct target *t;
			if (!in_scope(sc, all.v[i].path))
				continue;
			t = add_target(ts, o, all.v[i].path, (uint64_t)all.v[i].size, all.v[i].mtime, T_READ, 0);
			if (t) {
				t->plan = all.v[i].plan;	/* trusted as indexed */
				all.v[i].plan = NULL;
			}
		}
		ifiles_release(&all);
		return 0;
	}

	if (!walk && o->walk_default) {
		/* the directories tell what changed, unless the index has no record */
		rc = dir_targets(ix, w, rootfd, o, query, sc, ts, ps);
		if (rc <= 0)
			return rc;
		t0 = now_ns();
	}

	if (index_files(ix, collect_file, &all) < 0)
		return -1;
	t1 = now_ns();
	ps->t_files = secs(t0, t1);
	ps->indexed = all.nr;
	memset(&cc, 0, sizeof(cc));
	cc.all = &all;
	if (query) {
		if (index_trigram_candidates(ix, query, mark_candidate, &cc) < 0) {
			ifiles_release(&all);
			return -1;
		}
	} else {
		for (i = 0; i < all.nr; i++)
			all.v[i].candidate = 1;
		cc.nr = all.nr;
	}
	ps->candidates = cc.nr;
	for (i = 0; i < all.nr; i++)
		if (!all.v[i].exact)
			all.v[i].candidate = 1;
	t0 = now_ns();
	ps->t_query = secs(t1, t0);

	/*
	 * The index lists the walker's files only for the default rules and an
	 * unchanged tree, and only if a walk of the tree wrote it: one filled by
	 * `ci-index load` (no "walked_ns") holds what it was given, perhaps one
	 * directory of many, and the tree's other files must be walked to.
	 */
	{
		const char *v = index_meta(ix, "walked_ns");
		if (!v || !*v)
			walk = 1;
	}
	since = parse_stamp(index_meta(ix, "updated"));
	if (!walk && (!o->walk_default || since < 0 || tree_changed(rootfd, &all, since)))
		walk = 1;
	t1 = now_ns();
	ps->t_tree = secs(t0, t1);

	if (walk) {
		ps->walked = 1;
		if (!sc->nr)
			walker_walk(w, "", 0, &list);
		for (i = 0; i < sc->nr; i++)
			walker_walk(w, sc->rel[i], !sc->is_dir[i], &list);
		walk_list_finish(&list);
		/* the walk's own stat tells what changed: no need to check again */
		for (i = j = 0; i < list.files_nr; i++) {
			struct walk_file *f = &list.files[i];
			int skip = 0;

			while (j < all.nr && strcmp(all.v[j].path, f->path) < 0)
				j++;
			if (j < all.nr && !strcmp(all.v[j].path, f->path) && !all.v[j].candidate &&
			    (int64_t)f->size == all.v[j].size && f->mtime == all.v[j].mtime && !f->explicit_)
				skip = 1;
			if (!skip)
				add_target(ts, o, f->path, f->size, f->mtime, T_READ, f->explicit_);
		}
		walk_list_release(&list);
	} else {
		for (i = 0; i < all.nr; i++) {
			if (!in_scope(sc, all.v[i].path))
				continue;
			add_target(ts, o, all.v[i].path, (uint64_t)all.v[i].size, all.v[i].mtime,
				   all.v[i].candidate ? T_READ : T_CHECK, 0);
		}
		check_targets(ts, rootfd, o, o->trust_index, &ps->checked, &ps->unchanged);
		ps->t_check = secs(t1, now_ns());
	}
	ifiles_release(&all);
	return 0;
}

/*
 * Search one tree: the repository (or the directory outside any) that holds
 * start, at the paths args[0..nr) as the user wrote them, or with none, the
 * current directory.  own_index: the tree of the current directory, where
 * --index and $CI_INDEX apply (another tree's index is its own).  *wrote says
 * whether something was written before (the "--" between files' context).
 * Returns run()'s exit status, or EXIT_ERROR.
 */
static int search_tree(struct options *o, const struct matcher *m, const char *start, char **args, size_t nr,
		       int own_index, int *wrote)
{
	struct walker w;
	struct targets ts = { 0 };
	struct walk_list list = { 0 };
	struct scope sc = { 0 };
	struct plan_stats ps;
	struct ci_index *ix = NULL;
	struct job jb;
	int ret = EXIT_OK, errors = 0, rootfd, rc, threads, stream = 0;
	size_t i;
	int64_t t0 = now_ns(), t1, t2;
	char *ipath = NULL, *here = NULL;

	memset(&ps, 0, sizeof(ps));
	if (walker_open(&w, start, &o->walk) < 0)
		return EXIT_ERROR;
	rootfd = open(w.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		error_errno("cannot open '%s'", w.root);
		walker_close(&w);
		return EXIT_ERROR;
	}
	sc.given = nr > 0;
	sc.rel = xcalloc(nr + 1, sizeof(*sc.rel));
	sc.is_dir = xcalloc(nr + 1, sizeof(*sc.is_dir));
	sc.disp = xcalloc(nr + 1, sizeof(*sc.disp));
	for (i = 0; i < nr; i++) {
		struct stat st;

		if (walker_relpath(&w, args[i], &sc.rel[sc.nr]) < 0) {
			errors++;
			continue;
		}
		sc.is_dir[sc.nr] = !*sc.rel[sc.nr] ||
			(fstatat(rootfd, sc.rel[sc.nr], &st, 0) == 0 && S_ISDIR(st.st_mode));
		sc.disp[sc.nr] = args[i];
		sc.nr++;
	}
	if (!nr && walker_relpath(&w, ".", &here) == 0 && *here) {
		/* below the root: the current directory, paths written relative to it */
		sc.rel[0] = here;
		here = NULL;
		sc.is_dir[0] = 1;
		sc.disp[0] = "";
		sc.nr = 1;
	}
	free(here);
	o->scope = &sc;
	if (sc.given && !sc.nr) {
		ret = EXIT_ERROR;	/* no path given exists: nothing to search */
		goto out;
	}

	/* the index, unless told not to */
	ps.mode = "scan";
	if (!o->no_index) {
		/* another tree's index is its own: --index and $CI_INDEX are this tree's */
		ipath = !own_index ? xasprintf("%s/.ci-index/index.db", w.root) :
			o->index ? xstrdup(o->index) : index_default_path(w.root);
		index_path_g = ipath;
		rc = index_open(&ix, ipath, INDEX_READONLY);
		if (rc == 1 && o->index && own_index) {
			error("no index at '%s' (ci-index build makes one)", ipath);
			ret = EXIT_ERROR;
			goto out;
		}
		if (rc < 0)
			warning("searching without the index");
		if (rc == 0 && strcmp(index_root(ix), w.root)) {
			warning("the index '%s' is for '%s', not '%s': searching without it", ipath,
				index_root(ix), w.root);
			index_close(ix);
			ix = NULL;
		}
		if (ix && index_meta(ix, "snapshot") && *index_meta(ix, "snapshot")) {
			/* a commit's files, not the work tree's: its answers would be another tree's */
			warning("the index '%s' is a snapshot of %s: searching the working tree without it",
				ipath, index_meta(ix, "snapshot"));
			index_close(ix);
			ix = NULL;
		}
	}
	/* the index holds hidden files, and follows no .ignore file */
	o->filter = ix && (o->walk.skip_hidden || o->walk.ignore_files) ? &w : NULL;
	if (ix && index_targets(ix, &w, rootfd, o, m, &sc, &ts, &ps) == 0) {
		ps.mode = "index";
	} else {
		o->filter = NULL;
		if (ix)
			warning("searching without the index");
		targets_release(&ts);
		ps.walked = 1;
		/* the whole tree is listed while it is searched; paths named, first */
		if (sc.nr)
			errors += walk_targets(&w, o, &sc, &ts, &list);
		else
			stream = 1;	/* only files from directories matter: no stat for what readdir types */
		w.opts.lazy_stat = stream;
	}
	t1 = now_ns();

	memset(&jb, 0, sizeof(jb));
	jb.o = o;
	jb.m = m;
	jb.w = &w;
	jb.rootfd = rootfd;
	jb.ts = &ts;
	/* context lines may lie outside the parts: files are read whole for them */
	jb.parts = m->line_local && !o->before && !o->after && !o->all_files;
	jb.avail = ts.nr;
	jb.listed = !stream;
	pthread_mutex_init(&jb.lock, NULL);
	pthread_cond_init(&jb.work_cond, NULL);
	pthread_cond_init(&jb.done_cond, NULL);
	threads = o->threads;
	if (!stream && threads > (int)ts.nr)
		threads = ts.nr ? (int)ts.nr : 1;
	jb.wrote = wrote;
	ret = run(&jb, threads, !o->json && !o->count && !o->files_only && (o->before || o->after), stream);
	pthread_mutex_destroy(&jb.lock);
	pthread_cond_destroy(&jb.work_cond);
	pthread_cond_destroy(&jb.done_cond);
	t2 = now_ns();
	if (errors && ret != EXIT_ERROR)
		ret = EXIT_ERROR;

	if (o->stats) {
		static const char *const kinds[] = { "literal", "prefilter", "regex", "regex by line", "no" };
		fflush(stdout);
		fprintf(stderr, "%s: %s: %zu files to read%s", progname, ps.mode, ts.nr,
			ps.walked ? " (walked)" : "");
		if (ix)
			fprintf(stderr, ", %zu indexed, %zu trigram candidates%s, %lu stat'ed (%lu unchanged)",
				ps.indexed, ps.candidates, ps.served ? " (the server's)" : "", ps.checked, ps.unchanged);
		fprintf(stderr, ", %lu read (%.1f MB, %lu by parts); %s search%s%s%s; list %.3f s, search %.3f s,"
			" total %.3f s\n", jb.n_read, (double)jb.bytes / 1e6, jb.n_parts, kinds[m->kind],
			m->literal ? " for '" : "", m->literal ? m->literal : "", m->literal ? "'" : "",
			secs(t0, t1), secs(t1, t2), secs(t0, t2));
		if (ix)
			fprintf(stderr, "%s: index: file list %.3f s, trigram query %.3f s, directories %.3f s,"
				" files checked %.3f s\n", progname, ps.t_files, ps.t_query, ps.t_tree, ps.t_check);
		if (ix && ps.dirs)
			fprintf(stderr, "%s: directories: %zu recorded, %zu changed, %zu files in them\n",
				progname, ps.dirs, ps.dirs_changed, ps.relisted);
		else if (ix && ps.all_clean)
			fprintf(stderr, "%s: directories: none changed (the index's server saw nothing happen)\n",
				progname);
		if (ps.query)
			fprintf(stderr, "%s: trigram query: %s\n", progname, ps.query);
	}
out:
	free(ps.query);
	if (ix)
		index_close(ix);
	index_path_g = NULL;
	free(ipath);
	for (i = 0; i < sc.nr; i++)
		free(sc.rel[i]);
	free(sc.rel);
	free(sc.is_dir);
	free(sc.disp);
	o->scope = NULL;
	o->filter = NULL;
	targets_release(&ts);
	walk_list_release(&list);
	close(rootfd);
	walker_close(&w);
	return ret;
}

/* The paths given that lie in one tree. */
struct tree {
	char *root;		/* its root, absolute */
	char **args;		/* the paths as given */
	size_t nr, alloc;
};

/*
 * The root of the tree that holds the path p as given (a repository's work
 * tree, or the directory itself outside any), malloc'd; here is the current
 * directory's tree, taken for the paths inside it without asking libgit2.
 * NULL after reporting when p does not exist (*errors counts it).
 */
static char *tree_root_of(const char *p, const char *here, int *errors)
{
	char *real = realpath(p, NULL), *dir, *slash, *root = NULL;
	struct stat st;
	struct walker tw;
	struct walk_opts wo = WALK_OPTS_INIT;
	size_t hl = here ? strlen(here) : 0;

	if (!real || stat(real, &st) < 0) {
		error_errno("cannot open '%s'", p);
		free(real);
		(*errors)++;
		return NULL;
	}
	if (here && (!strcmp(real, here) || (!strncmp(real, here, hl) && (real[hl] == '/' || !strcmp(here, "/"))))) {
		free(real);
		return xstrdup(here);
	}
	dir = real;
	if (!S_ISDIR(st.st_mode)) {
		slash = strrchr(real, '/');
		if (slash == real)
			slash[1] = '\0';	/* "/passwd": the root directory */
		else
			*slash = '\0';
	}
	if (walker_open(&tw, dir, &wo) == 0) {
		root = xstrdup(tw.root);
		walker_close(&tw);
	} else {
		(*errors)++;
	}
	free(real);
	return root;
}

/* ---- main ---- */

static void add_glob(struct options *o, const char *arg)
{
	struct glob *g;

	ALLOC_GROW(o->globs, o->globs_nr + 1, o->globs_alloc);
	g = &o->globs[o->globs_nr++];
	g->exclude = arg[0] == '!';
	if (g->exclude)
		arg++;
	while (*arg == '/')
		arg++;
	g->pat = arg;
	g->has_slash = !!strchr(arg, '/');
	if (!g->exclude)
		o->globs_include = 1;
	if (!*arg)
		usage_error(usage_text, "-g: empty glob");
}

/*
 * rg's type names for -t where they are not ci's language names (rg --type-list):
 * each selects the languages listed, separated by spaces.
 */
static const struct { const char *name, *langs; } type_aliases[] = {
	{ "config", "ini" }, { "cs", "csharp" }, { "docker", "dockerfile" },
	{ "js", "javascript" }, { "md", "markdown" }, { "py", "python" },
	{ "sh", "bash" }, { "ts", "typescript tsx" }, { "txt", "text" },
};

/* The languages -t name selects, space-separated (an alias's, or name itself), or NULL. */
static const char *type_langs(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(type_aliases); i++)
		if (!strcmp(type_aliases[i].name, name))
			return type_aliases[i].langs;
	return lang_by_name(name) ? name : NULL;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --type-list: each name -t accepts, sorted, with the languages it selects. */
static void print_type_list(void)
{
	const struct lang *const *all;
	const char **names = NULL;
	size_t nr = 0, alloc = 0, i;
	struct buf b = BUF_INIT;

	for (all = lang_all(); *all; all++) {
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = (*all)->name;
	}
	for (i = 0; i < ARRAY_SIZE(type_aliases); i++) {
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = type_aliases[i].name;
	}
	qsort(names, nr, sizeof(*names), cmp_strp);
	for (i = 0; i < nr; i++) {
		const char *p;

		buf_reset(&b);
		buf_addf(&b, "%s: ", names[i]);
		for (p = type_langs(names[i]); *p; p++) {
			if (*p == ' ')
				buf_addstr(&b, ", ");
			else
				buf_addch(&b, *p);
		}
		buf_addch(&b, '\n');
		fwrite(b.buf, 1, b.len, stdout);
	}
	buf_release(&b);
	free(names);
}

static void add_lang(struct options *o, const char *name)
{
	const char *langs = type_langs(name), *p, *e;
	const struct lang *const *all;
	struct buf b = BUF_INIT;

	if (!langs) {
		for (all = lang_all(); *all; all++)
			buf_addf(&b, "%s%s", b.len ? ", " : "", (*all)->name);
		usage_error(usage_text, "-t: unknown language '%s' (known: %s; --type-list lists rg's names too)",
			    name, b.buf);
	}
	for (p = langs; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ' ');
		buf_reset(&b);
		buf_add(&b, p, (size_t)(e - p));
		ALLOC_GROW(o->langs, o->langs_nr + 1, o->langs_alloc);
		o->langs[o->langs_nr++] = lang_by_name(b.buf);
		assert(o->langs[o->langs_nr - 1]);
	}
	buf_release(&b);
}

/*
 * -S: does the pattern hold an uppercase letter?  Not one after a backslash
 * (\S, \W, \p{Lu} are classes, not letters).
 * NEEDSWORK: ASCII letters only; rg also sees non-ASCII uppercase letters.
 */
static int has_uppercase(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\') {
			if (!p[1])
				break;
			p++;
			if ((*p == 'p' || *p == 'P' || *p == 'x') && p[1] == '{') {
				while (p[1] && *p != '}')
					p++;
			}
			continue;
		}
		if (*p >= 'A' && *p <= 'Z')
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct matcher m;
	int c, ret = EXIT_OK, json = -1, errors = 0, rc, wrote;
	int smart = 0, type_list = 0, unrestricted = 0, hidden = 0, color = -1;
	size_t i;
	static char outbuf[1 << 16];
	const char **patterns = NULL;
	size_t patterns_nr = 0, patterns_alloc = 0;
	static struct buf alt = BUF_INIT;	/* the -e patterns as one regex; lives as long as o */

	util_init_code(argv[0], EXIT_ERROR);	/* die(), a write error: 2, not 3 */
	list_options(argc, argv, long_options);
	if (fleet_wanted(argc, argv))	/* a shard set: libcommon/fleet */
		return close_stdout(fleet_main(FLEET_GREP, main, argc, argv));
	memset(&o, 0, sizeof(o));
	o.walk.max_filesize = WALK_DEFAULT_MAX_FILESIZE;
	o.threads = online_cpus();

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:FiwnA:B:C:g:t:m:lcj:hvoqLxSasr:u", long_options, NULL)) != -1) {
		switch (c) {
		case 'e':
			ALLOC_GROW(patterns, patterns_nr + 1, patterns_alloc);
			patterns[patterns_nr++] = optarg;
			break;
		case 'F': o.fixed = 1; break;
		case 'i': o.icase = 1; smart = 0; break;	/* the last of -i, -S, -s wins (rg) */
		case 's': o.icase = 0; smart = 0; break;
		case 'r': o.replace = optarg; break;
		case 'u': unrestricted++; break;
		case OPT_HIDDEN: hidden = 1; break;
		case OPT_COLOR:
			if (!strcmp(optarg, "never"))
				color = 0;
			else if (!strcmp(optarg, "always") || !strcmp(optarg, "ansi"))
				color = 1;
			else if (!strcmp(optarg, "auto"))
				color = -1;
			else
				usage_error(usage_text, "--color: '%s' is not never, auto or always", optarg);
			break;
		case 'n': break;	/* line numbers are always written (rg's -n) */
		case 'w': o.word = 1; o.line_regexp = 0; break;	/* the last of -w and -x wins, as in rg */
		case 'x': o.line_regexp = 1; o.word = 0; break;
		case 'S': smart = 1; o.icase = 0; break;
		case 'v': o.invert = 1; break;
		case 'o': o.only = 1; break;
		case 'q': o.quiet = 1; break;
		case 'a': o.text = 1; break;
		case 'L': o.files_without = 1; break;
		case OPT_FILES: o.list_files = 1; break;
		case OPT_TYPE_LIST: type_list = 1; break;
		case 'A': o.after = parse_long_arg(usage_text, "--after-context", optarg, 0, 1000000); break;
		case 'B': o.before = parse_long_arg(usage_text, "--before-context", optarg, 0, 1000000); break;
		case 'C':
			o.after = o.before = parse_long_arg(usage_text, "--context", optarg, 0, 1000000);
			break;
		case 'g': add_glob(&o, optarg); break;
		case 't': add_lang(&o, optarg); break;
		case 'm': o.max_count = parse_long_arg(usage_text, "--max-count", optarg, 1, LONG_MAX); break;
		case 'l': o.files_only = 1; break;
		case 'c': o.count = 1; break;
		case OPT_JSON: json = 1; break;
		case OPT_NO_JSON: json = 0; break;
		case OPT_INDEX: o.index = optarg; break;
		case OPT_NO_INDEX: o.no_index = 1; break;
		case OPT_TRUST_INDEX: o.check = CHECK_NONE; break;
		case OPT_CHECK:
			if (!strcmp(optarg, "files"))
				o.check = CHECK_FILES;
			else if (!strcmp(optarg, "dirs"))
				o.check = CHECK_DIRS;
			else if (!strcmp(optarg, "none"))
				o.check = CHECK_NONE;
			else
				usage_error(usage_text, "--check: '%s' is not files, dirs or none", optarg);
			break;
		case OPT_MAX_SIZE:
			o.walk.max_filesize = (uint64_t)parse_long_arg(usage_text, "--max-filesize",
								       optarg, 0, 1L << 40);
			break;
		case OPT_VENDORED: o.walk.include_vendored = 1; break;
		case OPT_NO_IGNORE: o.walk.no_ignore = 1; break;
		case OPT_STATS: o.stats = 1; break;
		case 'j': o.threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256); break;
		case OPT_VERSION:
			return print_version("ci-grep");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	if (patterns_nr == 1) {
		o.pattern = patterns[0];
	} else if (patterns_nr > 1) {
		/*
		 * Several -e: a line matching any of them, as with rg and grep.  One
		 * regex of alternatives, each in a group; with -F each is escaped.
		 */
		for (i = 0; i < patterns_nr; i++) {
			if (i)
				buf_addch(&alt, '|');
			buf_addstr(&alt, "(?:");
			for (const char *p = patterns[i]; *p; p++) {
				if (o.fixed && strchr("\\^$.[]|()?*+{}", *p))
					buf_addch(&alt, '\\');
				buf_addch(&alt, *p);
			}
			buf_addch(&alt, ')');
		}
		o.fixed = 0;
		o.pattern = alt.buf;
	}
	free(patterns);
	if (type_list) {
		print_type_list();
		return close_stdout(EXIT_OK);
	}
	if (o.list_files) {
		/* no pattern: every argument is a path; the matcher is never used */
		if (o.pattern)
			usage_error(usage_text, "--files takes no pattern");
		o.pattern = "";
	}
	if (!o.pattern) {
		if (optind >= argc)
			usage_error(usage_text, "no pattern given");
		o.pattern = argv[optind++];
	}
	if (o.files_only + o.count + o.files_without > 1)
		usage_error(usage_text, "-l, -L and -c cannot be used together");
	if (smart && !has_uppercase(o.pattern))
		o.icase = 1;
	/* -u: --no-ignore; -uu: and --hidden; -uuu: and binary files (rg) */
	if (unrestricted >= 1)
		o.walk.no_ignore = 1;
	if (unrestricted >= 2)
		hidden = 1;
	if (unrestricted >= 3)
		o.binary = 1;
	o.walk.skip_hidden = !hidden;
	o.walk.ignore_files = 1;
	if (o.replace && (o.list_files || o.invert))
		o.replace = NULL;	/* nothing to replace (rg ignores it too) */
	o.all_files = o.invert || o.files_without || o.list_files;
	/* the regex's bounds (tests set tiny ones) */
	levels_init((uint32_t)env_long("CI_GREP_MATCH_LIMIT", 1, UINT32_MAX, MATCH_LIMIT, ENV_DIE));
	file_budget_ns = env_long("CI_GREP_FILE_TIME_MS", 0, 86400000L, FILE_BUDGET_MS, ENV_DIE) * 1000000LL;
	if (o.index && o.no_index)
		usage_error(usage_text, "--index and --no-index cannot be used together");
	o.trust_index = o.check == CHECK_NONE;
	if (json < 0)	/* text or json: the format wherever output goes */
		json = human_env_format();
	o.json = json >= 0 ? json : !isatty(STDOUT_FILENO);
	/* -a: binary files, which an index leaves out, are walked to */
	o.walk_default = o.walk.max_filesize == WALK_DEFAULT_MAX_FILESIZE && !o.walk.include_vendored &&
			 !o.walk.no_ignore && !o.text && !o.binary;
	/* rg's colours on a terminal (not with NO_COLOR or TERM=dumb), never in records */
	if (color < 0)
		color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
			!(getenv("TERM") && !strcmp(getenv("TERM"), "dumb"));
	o.color = color && !o.json;
	if ((o.json && (o.count || o.files_only)) || o.files_without || o.quiet || o.list_files ||
	    (o.only && !o.invert && o.json))
		o.before = o.after = 0;	/* no lines are written, or (-o) only matches */
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	matcher_init(&m, &o);	/* exits 2 on a bad pattern */

	/*
	 * The trees to search: the current directory's, or the paths given,
	 * each in the tree (repository, or directory outside any) that holds it.
	 */
	wrote = 0;
	if (optind >= argc) {
		ret = search_tree(&o, &m, ".", NULL, 0, 1, &wrote);
	} else {
		struct tree *trees = NULL;
		size_t trees_nr = 0, trees_alloc = 0, k;
		char *here = NULL;
		int any_ok = 0, any_error = 0, here_repo = 0;

		{
			struct walker hw;
			if (walker_open(&hw, ".", &o.walk) == 0) {
				here = xstrdup(hw.root);
				here_repo = hw.repo != NULL;
				walker_close(&hw);
			}
		}
		for (c = optind; c < argc; c++) {
			/* outside a repository, a path below may be in one: ask for each */
			char *root = tree_root_of(argv[c], here_repo ? here : NULL, &errors);
			if (!root)
				continue;
			for (k = 0; k < trees_nr && strcmp(trees[k].root, root); k++)
				;
			if (k == trees_nr) {
				ALLOC_GROW(trees, trees_nr + 1, trees_alloc);
				memset(&trees[k], 0, sizeof(trees[k]));
				trees[k].root = root;
				trees_nr++;
			} else {
				free(root);
			}
			ALLOC_GROW(trees[k].args, trees[k].nr + 1, trees[k].alloc);
			trees[k].args[trees[k].nr++] = argv[c];
		}
		for (k = 0; k < trees_nr; k++) {
			int own = here && !strcmp(trees[k].root, here);
			rc = search_tree(&o, &m, own ? "." : trees[k].root, trees[k].args, trees[k].nr, own, &wrote);
			any_ok |= rc == EXIT_OK;
			any_error |= rc == EXIT_ERROR;
			free(trees[k].root);
			free(trees[k].args);
		}
		free(trees);
		free(here);
		ret = any_error || errors ? EXIT_ERROR : any_ok ? EXIT_OK : EXIT_NOTHING;
	}
	matcher_release(&m);
	free(o.globs);
	free(o.langs);
	return close_stdout(ret);
}
