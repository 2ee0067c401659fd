/*
 * style.c: `ci style-guide`, the rules of the project's style documents and
 * linter configuration (context/style.h), filtered by --query and --category.
 */
#include "ci.h"

#include "context/style.h"

int cmd_style_guide(int argc, char **argv)
{
	static const char *const names[] = { "query", "category", NULL };
	static const char *const bools[] = { "json", NULL };
	struct flags f = { .sub = "style-guide", .names = names, .bools = bools };
	struct style_guide sg;
	json_t *r;
	size_t i;
	int shown = 0;

	parse_options(&f, argc, argv, "query");
	if (f.values[0] && !*f.values[0])
		usage_fail("style-guide: --query must not be empty");
	if (f.values[1] && !*f.values[1])
		usage_fail("style-guide: --category must not be empty");
	style_guide_read(&sg, &ci_toml);
	if (!json_array_size(sg.sources))
		fail("style-guide: no style guide found (CONTRIBUTING.md, STYLE.md, docs/*style*.md, "
		     ".editorconfig or a README section on style)");
	json_array_foreach(sg.rules, i, r) {
		if (!style_rule_matches(r, f.values[0], f.values[1]))
			continue;
		shown++;
		if (want_json(f.set[0]))
			put_json(r);
		else
			printf("%s:%lld: [%s] %s\n", ctx_str(r, "file"),
			       (long long)json_integer_value(json_object_get(r, "line")),
			       ctx_str(r, "section"), ctx_str(r, "rule"));
	}
	if (!shown && !want_json(f.set[0]))
		puts("no style rules match");
	style_guide_release(&sg);
	return close_stdout(0);
}
