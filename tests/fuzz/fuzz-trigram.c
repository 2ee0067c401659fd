/*
 * fuzz-trigram.c: the regex -> trigram planner (libcommon/index/trigram.c) with PCRE2
 * as the oracle: an indexed search must find what a scan finds.
 *
 * Input: a flags byte (bit 0 -F, bit 1 -i, bit 2 phrases), the pattern up to
 * the first NUL, then lines of text.  Properties, for every line PCRE2 matches:
 * the FTS5 query and the lean query accept it (evaluated as the index would),
 * it holds the required string, and a literal pattern's lines are exactly the
 * lines holding the literal.
 */
#include "core/common.h"
#include "index/trigram.h"
#include "fuzz.h"
#include "../trigram-eval.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

static long df(const char *tri, void *data)
{
	(void)data;
	return (long)(((unsigned char)tri[0] * 31u + (unsigned char)tri[1]) % 5) * 7000;
}

static void check_line(const struct trigram_info *info, const char *lean, const char *pattern,
		       pcre2_code *re, pcre2_match_data *md, pcre2_match_context *mc,
		       const char *line, size_t len)
{
	int rc = pcre2_match(re, (PCRE2_SPTR)line, len, 0, 0, md, mc);
	int matched = rc >= 0;

	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
		return;	/* a limit: no verdict */
	if (info->query) {
		int q = trigram_eval_query(info->query, line);
		if (q < 0)
			fuzz_fail("pattern '%s': query %s does not parse", pattern, info->query);
		if (matched && !q)
			fuzz_fail("pattern '%s': query %s excludes the matching line '%s'",
				  pattern, info->query, line);
	}
	if (lean && matched && trigram_eval_query(lean, line) != 1)
		fuzz_fail("pattern '%s': lean query %s excludes the matching line '%s'", pattern, lean, line);
	if (!!lean != !!info->query)
		fuzz_fail("pattern '%s': lean query and query disagree on being NULL", pattern);
	if (matched && info->required && !memmem(line, len, info->required, info->required_len))
		fuzz_fail("pattern '%s': line '%s' matches without the required '%s'",
			  pattern, line, info->required);
	if (info->literal && !!memmem(line, len, info->literal, info->literal_len) != matched)
		fuzz_fail("pattern '%s': literal and regex disagree on '%s'", pattern, line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags;
	const uint8_t *nul;
	char *pattern, *text, *line, *save = NULL;
	struct trigram_info info;
	pcre2_code *re;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE;
	int err;
	PCRE2_SIZE off;
	char *lean;

	if (size < 2 || size > 4096)
		return 0;
	flags = data[0] & 3;
	if (data[0] & 4)
		flags |= TRIGRAM_PHRASES;
	data++;
	size--;
	nul = memchr(data, '\0', size);
	if (!nul)
		return 0;
	pattern = xstrndup((const char *)data, (size_t)(nul - data));
	text = xstrndup((const char *)nul + 1, size - (size_t)(nul - data) - 1);
	if (flags & TRIGRAM_ICASE)
		opts |= PCRE2_CASELESS;
	if (flags & TRIGRAM_FIXED)
		opts |= PCRE2_LITERAL;
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &err, &off, NULL);
	if (re) {
		md = pcre2_match_data_create_from_pattern(re, NULL);
		mc = pcre2_match_context_create(NULL);
		pcre2_set_match_limit(mc, 100000);
		pcre2_set_depth_limit(mc, 1000);
		trigram_analyze(&info, pattern, flags);
		lean = trigram_query_lean(pattern, flags, df, NULL);
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			check_line(&info, lean, pattern, re, md, mc, line, strlen(line));
		free(lean);
		trigram_info_release(&info);
		pcre2_match_context_free(mc);
		pcre2_match_data_free(md);
		pcre2_code_free(re);
	} else {
		/* the planner must not crash on what PCRE2 refuses either */
		trigram_analyze(&info, pattern, flags);
		trigram_info_release(&info);
	}
	free(pattern);
	free(text);
	return 0;
}
