/*
 * trigram.h: what a search pattern says about the text it can match.
 *
 * A trigram index answers "which files contain all of these three-character
 * strings"; to use it for a regular expression we need a query that every file
 * holding a match satisfies (Russ Cox, "Regular Expression Matching with a Trigram
 * Index", 2012).  trigram_query() computes that query for the PCRE2 syntax met in
 * practice, in the FTS5 syntax of SQLite's trigram tokenizer:
 *
 *	"abc" AND ("bcd" OR "xyz")
 *
 * or, for a table that keeps positions (TRIGRAM_PHRASES), with whole strings as
 * phrases, which FTS5 matches as substrings: "abcd" OR "xyz".
 *
 * The answer is always conservative: a file that could hold a match is never left
 * out.  Syntax it does not know, and patterns that give no trigram at all, give
 * NULL, which means "every file is a candidate".
 *
 * The same analysis also finds what a scan can use: whether the pattern is a plain
 * literal (searched with a byte search instead of a regex engine), and a literal
 * that every match contains (a prefilter: lines without it cannot match).
 */
#ifndef CI_TRIGRAM_H
#define CI_TRIGRAM_H

#include <stddef.h>

enum trigram_flags {
	TRIGRAM_FIXED = 1,	/* the pattern is a literal string, not a regex (-F) */
	TRIGRAM_ICASE = 2,	/* case-insensitive matching (-i) */
	TRIGRAM_WORD = 4,	/* whole words only (-w): adds nothing to the query */
	TRIGRAM_PHRASES = 8,	/* the table takes phrases (FTS5 detail=full): a string
				   becomes one phrase "abcd", not "abc" AND "bcd" */
};

struct trigram_info {
	char *query;		/* FTS5 query, or NULL: every file is a candidate */
	char *literal;		/* the pattern matches exactly this string (no anchor,
				   no class, case-sensitive), or NULL */
	size_t literal_len;	/* its length in bytes */
	char *required;		/* a string every match contains, case as written, or
				   NULL (always NULL when matching is case-insensitive) */
	size_t required_len;	/* its length in bytes */
	char *required_icase;	/* with case-insensitive matching: a string every
				   match contains in some case variant, as written,
				   or NULL */
	size_t required_icase_len; /* its length in bytes */
	int looks_ahead;	/* the pattern may look past the end of its match
				   (lookahead, \z, \Z, \G, or syntax not understood) */
	int gave_up;		/* syntax not understood: the query is NULL */
};

/*
 * Analyse pattern (a NUL-terminated PCRE2 pattern, or a literal with
 * TRIGRAM_FIXED) under flags (enum trigram_flags) into *out, whose strings are
 * malloc'd and released with trigram_info_release().  Cannot fail.
 */
void trigram_analyze(struct trigram_info *out, const char *pattern, unsigned flags);
void trigram_info_release(struct trigram_info *info);

/*
 * The FTS5 query for pattern, malloc'd, or NULL when every file is a candidate.
 * Trigram terms are lower-cased ASCII and quoted ('"' doubled).  Cannot fail.
 */
char *trigram_query(const char *pattern, unsigned flags);

/*
 * About how many rows of the trigram table hold the trigram tri (lower-cased, as
 * in a query); 0 when there are few or it is not known.
 */
typedef long (*trigram_df_fn)(const char *tri, void *data);

/*
 * The same query with the operands of each AND that cost more to look up than
 * they are likely to save left out: of the trigrams of "pm_suspend", "usp",
 * "pm_" and "_su" alone rule out nearly every row the other five would, for a
 * sixth of the index entries read.  Kept: the 3 rarest operands of an AND (an
 * OR costs the sum of its operands) that do not overlap each other by two
 * characters (neighbours in a string, which say about the same), and any other
 * held by fewer than 10,000 rows.  Still a query every row with a match
 * satisfies.
 */
char *trigram_query_lean(const char *pattern, unsigned flags, trigram_df_fn df, void *data);

#endif
