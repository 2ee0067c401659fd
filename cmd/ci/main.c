/*
 * ci: one command in front of the others, as git is.
 *
 *   ci search --query <q> [--intent <i>] [--limit <n>] [--lang <l>]   ci-rank
 *   ci status                                                         ci-index status
 *   ci reindex [--incremental]                                        ci-index build|update
 *   ci refs --symbol <name> [--limit <n>]                             ci-refs refs
 *   ci cycles [--scope <path>]                                        ci-refs cycles
 *   ci metadata                              ci-index status + package manifests
 *   ci memory list|add|remove                       .codebase-context/memory.json
 *   ci style-guide [--query <q>] [--category <c>]   rules from the documentation
 *   ci patterns [--category <c>]            the index's imports + git history
 *   ci grep|index|rank|refs-raw|mcp|fleet <args>... ci-grep, ci-index, ci-rank, ci-refs, ci-mcp, ci-fleet
 *
 * The subcommands and their flags are those of the codebase-context CLI, so that
 * a script written against it works against ci: errors on stderr with exit code 1,
 * human-readable output on a terminal and --json (NDJSON records) for machines.
 * A mapped subcommand execs its program (found beside this binary first, then on
 * PATH, never through a shell); only on a terminal without --json does ci stay
 * and turn the records into lines of text.
 *
 * This file is the dispatcher; each group of subcommands is a file of cmd/ci/
 * (search, index, memory, patterns, style, records, feedback), their engines
 * in libcommon/context/.
 */
#include "ci.h"

const char ci_usage_text[] =
	"usage: ci [-h] <subcommand> [<args>]\n"
	"\n"
	"Subcommands (flags as in the codebase-context CLI; each takes --json):\n"
	"  search <q> | --query <q> [--intent explore|edit|refactor|migrate] [--limit <n>] [--lang <l>]\n"
	"           [--snippets]    ranked search (ci-rank), search quality, related memories;\n"
	"                           edit, refactor, migrate: the preflight card\n"
	"  metadata                 languages, file counts and dependencies (package.json,\n"
	"                           pyproject.toml, requirements.txt, go.mod, Cargo.toml)\n"
	"  status                   what the index holds (ci-index status)\n"
	"  reindex [--incremental]  build the index anew, or update it (ci-index)\n"
	"  refs --symbol <name> [--limit <n>]\n"
	"                           where a symbol is referenced (ci-refs refs)\n"
	"  cycles [--scope <path>]  import cycles (ci-refs cycles)\n"
	"  bundle --query <q> [--budget <n>] [--depth <n>] [--max-coupled <n>] [--threshold <x>]\n"
	"           [--limit <n>] [--agent <a>]\n"
	"                           a context bundle (ci-rank context), recorded as an injection\n"
	"  feedback submit --injection-id <id> --rating useful|noise|harmful [--agent] [--reason]\n"
	"  feedback list [--rating <r>] [--agent <a>] [--limit <n>]\n"
	"  feedback stats\n"
	"  feedback lineage store --feedback-ids <n,...> --action-type <t> --description <d>\n"
	"           [--bead <b>] [--commit-hash <h>] [--agent <a>]\n"
	"  feedback lineage list [--feedback-id <n>] [--bead <b>] [--commit-hash <h>] [--limit <n>]\n"
	"                           ratings of injections and what was done about them (in the index)\n"
	"  beads search --query <q> [--priority 1-4] [--status <s>] [--assignee <a>] [--limit <n>]\n"
	"           [--mode hybrid|keyword|semantic]\n"
	"                           the issues of .beads/issues.jsonl, ranked\n"
	"  archive search --query <q> [--source <name>] [--filter <name>] [--after <date>]\n"
	"           [--before <date>] [--limit <n>] [--mode hybrid|keyword|semantic]\n"
	"  archive recent --after <date> [--source <name>] [--limit <n>]\n"
	"                           dated Markdown and JSONL records of the sources in\n"
	"                           .bobbin/config.toml ([[archive.sources]])\n"
	"  grep-chunks --pattern <p> [--ignore-case] [--regex] [--type <kind>] [--limit <n>]\n"
	"                           exact or regex matches (ci-grep) by the indexed chunk\n"
	"                           holding them\n"
	"  memory list [--category <c>] [--type <t>] [--query <q>]\n"
	"  memory add --type <t> --category <c> --memory <text> [--reason <r>]\n"
	"  memory remove <id>       the team memory in .codebase-context/memory.json\n"
	"  style-guide [--query <q>] [--category <c>]\n"
	"                           rules from STYLE*, CONTRIBUTING* (their style sections),\n"
	"                           docs/**, .editorconfig, linter configuration, the README\n"
	"  context                  a Markdown overview: languages, dependencies, patterns, memory\n"
	"  patterns [--category all|di|state|testing|libraries]\n"
	"                           import patterns: frequencies, trends from git history\n"
	"  grep|index|rank|refs-raw|mcp|fleet <args>...\n"
	"                           run ci-grep, ci-index, ci-rank, ci-refs, ci-mcp or ci-fleet\n"
	"  help                     show this help\n"
	"\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n";


/* The programs of the pass-through subcommands. */
static const struct {
	const char *name;	/* the subcommand */
	const char *prog;	/* the program it runs */
} passthrough[] = {
	{ "grep", "ci-grep" },
	{ "index", "ci-index" },
	{ "rank", "ci-rank" },
	{ "refs-raw", "ci-refs" },
	{ "mcp", "ci-mcp" },
	{ "fleet", "ci-fleet" },
};

/* The subcommands ci answers itself (the codebase-context CLI). */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subcommands[] = {
	{ "search", cmd_search },
	{ "status", cmd_status },
	{ "reindex", cmd_reindex },
	{ "refs", cmd_refs },
	{ "grep-chunks", cmd_grep_chunks },
	{ "feedback", cmd_feedback },
	{ "bundle", cmd_bundle },
	{ "beads", cmd_beads },
	{ "archive", cmd_archive },
	{ "cycles", cmd_cycles },
	{ "metadata", cmd_metadata },
	{ "memory", cmd_memory },
	{ "context", cmd_context },
	{ "patterns", cmd_patterns },
	{ "style-guide", cmd_style_guide },
};

int main(int argc, char **argv)
{
	const char *sub;
	size_t i;

	util_init(argv[0]);
	if (argc < 2) {
		fputs(ci_usage_text, stderr);
		return EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		fputs(ci_usage_text, stdout);
		return close_stdout(EXIT_OK);
	}
	if (!strcmp(sub, "--version"))
		return print_version("ci");
	if (!strcmp(sub, "--list-options") && argc == 2) {
		fputs("--help\n--version\n", stdout);
		return close_stdout(EXIT_OK);
	}
	if (sub[0] == '-')
		usage_error(ci_usage_text, "unknown option '%s'", sub);
	for (i = 0; i < ARRAY_SIZE(passthrough); i++)
		if (!strcmp(sub, passthrough[i].name))
			run_exec(passthrough[i].prog, argv + 1);
	/* the commands below read their children's records: NDJSON, whatever the user's taste */
	unsetenv("CI_FORMAT");
	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(sub, subcommands[i].name))
			return subcommands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "%s: unknown subcommand '%s'\n", progname, sub);
	fputs(ci_usage_text, stderr);
	return EXIT_USAGE;
}
