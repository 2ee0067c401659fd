# tests/couple-lib.sh: the fixture repository of the ci-couple tests, sourced after
# lib.sh by tests/t07*-couple-*.sh.
#
# make_couple_repo <dir> builds, with fixed authors and dates (one day apart from
# 1700000000, 2023-11-14T22:13:20Z), a small C project whose history has what
# ci-couple reads:
#
#   day 0  Alice   initial parser             src/parse.c src/parse.h src/main.c README.md
#   day 1  Alice   parse: handle numbers      src/parse.c src/parse.h
#   day 2  Bob     parse: strings, with tests src/parse.c src/parse.h tests/test_parse.c (new)
#   day 3  Bob     docs: usage                src/main.c README.md
#   day 5  Alice   rename parse.c to parser.c src/parse.c -> src/parser.c, src/parse.h
#   day 6  Bob     (feature) lexer            src/lexer.c (new) src/parser.c
#   day 7  Bob     (feature) lexer tests      src/lexer.c tests/test_parse.c
#   day 7  Alice   docs: mention the lexer    README.md
#   day 8  Alice   Merge branch 'feature'     (a merge: first parent is main)
#   day 9  Carol   generate tables            gen/t00.h ... gen/t59.h (60 files: huge)
#   day 10 Alice   parser: fix crash on empty input   src/parser.c src/parse.h
#
# couple_commit <day> <author> <message>: commit what is staged as <author>
# (<author>@example.com, lower-cased), authored and committed on that day.

couple_commit() {
	couple_date_=$((1700000000 + $1 * 86400))
	couple_email_=$(echo "$2" | tr 'A-Z' 'a-z')@example.com
	GIT_AUTHOR_NAME=$2 GIT_AUTHOR_EMAIL=$couple_email_ \
	GIT_AUTHOR_DATE="$couple_date_ +0000" GIT_COMMITTER_DATE="$couple_date_ +0000" \
		git commit -q -m "$3"
}

make_couple_repo() (
	mkdir -p "$1" && cd "$1" && git init -q &&
	mkdir -p src tests gen &&
	cat >src/parse.h <<-\EOF &&
	#ifndef PARSE_H
	#define PARSE_H
	struct parser {
		const char *text;
		int pos;
	};
	int parse(struct parser *p);
	#endif
	EOF
	cat >src/parse.c <<-\EOF &&
	#include <ctype.h>
	#include "parse.h"

	static void skip(struct parser *p)
	{
		while (isspace((unsigned char)p->text[p->pos]))
			p->pos++;
	}

	int parse(struct parser *p)
	{
		skip(p);
		return p->text[p->pos] != '\0';
	}
	EOF
	cat >src/main.c <<-\EOF &&
	#include <stdio.h>
	#include "parse.h"

	int main(int argc, char **argv)
	{
		struct parser p = { argc > 1 ? argv[1] : "", 0 };

		return parse(&p) ? 0 : 1;
	}
	EOF
	printf '# Example\n\nA tiny parser.\n' >README.md &&
	git add . && couple_commit 0 Alice "initial parser" &&

	cat >>src/parse.c <<-\EOF &&

	int parse_number(struct parser *p)
	{
		int n = 0;

		while (isdigit((unsigned char)p->text[p->pos])) {
			n = n * 10 + (p->text[p->pos] - '0');
			p->pos++;
		}
		return n;
	}
	EOF
	sed -i 's/^int parse(struct parser \*p);$/int parse(struct parser *p);\nint parse_number(struct parser *p);/' src/parse.h &&
	git add . && couple_commit 1 Alice "parse: handle numbers" &&

	cat >>src/parse.c <<-\EOF &&

	int parse_string(struct parser *p)
	{
		if (p->text[p->pos] != '"')
			return -1;
		for (p->pos++; p->text[p->pos] && p->text[p->pos] != '"'; p->pos++) {
			if (p->text[p->pos] == '\\' && p->text[p->pos + 1])
				p->pos++;
		}
		return p->text[p->pos] == '"' ? 0 : -1;
	}
	EOF
	sed -i 's/^int parse_number(struct parser \*p);$/int parse_number(struct parser *p);\nint parse_string(struct parser *p);/' src/parse.h &&
	cat >tests/test_parse.c <<-\EOF &&
	#include <assert.h>
	#include "../src/parse.h"

	int main(void)
	{
		struct parser p = { "\"ab\"", 0 };

		assert(parse_string(&p) == 0);
		return 0;
	}
	EOF
	git add . && couple_commit 2 Bob "parse: strings, with tests" &&

	sed -i 's/return parse(&p) ? 0 : 1;/if (argc > 2)\n\t\tfprintf(stderr, "usage: main [text]\\n");\n\treturn parse(\&p) ? 0 : 1;/' src/main.c &&
	printf '\nUsage: main [text]\n' >>README.md &&
	git add . && couple_commit 3 Bob "docs: usage" &&

	git mv src/parse.c src/parser.c &&
	sed -i 's/^static void skip/static inline void skip/' src/parser.c &&
	sed -i 's/^#endif$/\/* parser.c *\/\n#endif/' src/parse.h &&
	git add . && couple_commit 5 Alice "rename parse.c to parser.c" &&

	git checkout -q -b feature &&
	cat >src/lexer.c <<-\EOF &&
	#include "parse.h"

	int lex(struct parser *p)
	{
		int n = 0;

		while (p->text[p->pos]) {
			if (p->text[p->pos] == ' ' || p->text[p->pos] == '\t')
				n++;
			p->pos++;
		}
		return n;
	}
	EOF
	printf '\nint lex_all(struct parser *p) { return lex(p); }\n' >>src/parser.c &&
	git add . && couple_commit 6 Bob "lexer: count blanks" &&
	printf '\nint lex_reset(struct parser *p) { p->pos = 0; return 0; }\n' >>src/lexer.c &&
	printf '/* lexer */\n' >>tests/test_parse.c &&
	git add . && couple_commit 7 Bob "lexer: tests" &&

	git checkout -q main &&
	printf '\nThe lexer counts blanks.\n' >>README.md &&
	git add . && couple_commit 7 Alice "docs: mention the lexer" &&
	GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.com \
	GIT_AUTHOR_DATE="$((1700000000 + 8 * 86400)) +0000" \
	GIT_COMMITTER_DATE="$((1700000000 + 8 * 86400)) +0000" \
		git merge -q --no-ff -m "Merge branch 'feature'" feature &&

	for i in 0 1 2 3 4 5; do
		for j in 0 1 2 3 4 5 6 7 8 9; do
			echo "int t$i$j[] = { $i, $j };" >gen/t$i$j.h || return 1
		done
	done &&
	git add . && couple_commit 9 Carol "generate tables" &&

	sed -i 's/^int parse(struct parser \*p)$/int parse(struct parser *p) \/* never NULL *\//' src/parser.c &&
	cat >>src/parser.c <<-\EOF &&

	int parse_empty(struct parser *p)
	{
		if (!p || !p->text)
			return -1;
		return p->text[0] ? 1 : 0;
	}
	EOF
	sed -i 's/^int parse_string(struct parser \*p);$/int parse_string(struct parser *p);\nint parse_empty(struct parser *p);/' src/parse.h &&
	git add . && couple_commit 10 Alice "parser: fix crash on empty input"
)

# couple_golden <name> <actual>: <actual> is tests/golden/ci-couple/<name>; with
# CI_REGEN_GOLDEN=1 in the environment, write it there instead (then review the
# change with `git diff tests/golden/ci-couple`).
couple_golden() {
	couple_g_=$CI_SRC_DIR/tests/golden/ci-couple/$1
	if test -n "${CI_REGEN_GOLDEN:-}"; then
		mkdir -p "$CI_SRC_DIR/tests/golden/ci-couple" && cp "$2" "$couple_g_"
		return
	fi
	test_cmp "$couple_g_" "$2"
}

# couple_index_upgrade: give the index of the current repository the columns that
# ci-couple reads when they are there (commit_files.status and old_path, commits.
# email, parents and merged_into) and fill them from `ci-couple history`, standing
# in for a `ci-index load` that stores them.  Needs the sqlite3 shell.
couple_index_upgrade() {
	couple_db_=${CI_INDEX:-.ci-index/index.db}
	for couple_col_ in "commit_files status TEXT" "commit_files old_path TEXT" \
		"commits email TEXT" "commits parents INTEGER" "commits merged_into TEXT"; do
		# shellcheck disable=SC2086 # three words on purpose
		set -- $couple_col_
		test -n "$(sqlite3 "$couple_db_" "SELECT 1 FROM pragma_table_info('$1') WHERE name = '$2'")" ||
			sqlite3 "$couple_db_" "ALTER TABLE $1 ADD COLUMN $2 $3" || return 1
	done
	cat >"$TEST_TMP/upgrade.jq" <<-\EOF
	def q: if . == null then "NULL" else "'" + (tostring | gsub("'"; "''")) + "'" end;
	select(._type == "commit") |
	"UPDATE commits SET email = \(.email | q), parents = \(.parents), merged_into = \(.merged_into | q) WHERE sha = \(.sha | q);",
	(.sha as $sha | .files[] |
	 "UPDATE commit_files SET status = \(.status | q), old_path = \(.old_path | q) WHERE sha = \($sha | q) AND path = \(.path | q);")
	EOF
	ci-couple --no-index history >"$TEST_TMP/upgrade.ndjson" &&
	"$JQ" -r -f "$TEST_TMP/upgrade.jq" "$TEST_TMP/upgrade.ndjson" >"$TEST_TMP/upgrade.sql" &&
	sqlite3 -bail "$couple_db_" <"$TEST_TMP/upgrade.sql"
}

# make_long_repo <dir> <n>: a linear history of <n> commits (fast-import), each
# changing one to three of 30 files, for the tests of the parallel walk.
make_long_repo() (
	mkdir -p "$1" && cd "$1" && git init -q &&
	awk -v N="$2" '
	function rnd(n) { seed = (seed * 16807) % 2147483647; return seed % n }
	BEGIN {
		seed = 7
		for (k = 1; k <= N; k++) {
			msg = "change " k
			printf "commit refs/heads/main\nmark :%d\n", k
			printf "author A <a@example.com> %d +0000\n", 1700000000 + k * 60
			printf "committer A <a@example.com> %d +0000\n", 1700000000 + k * 60
			printf "data %d\n%s\n", length(msg), msg
			if (k > 1) printf "from :%d\n", k - 1
			n = 1 + rnd(3)
			for (j = 0; j < n; j++) {
				f = rnd(30); v[f] = v[f] "line " k "\n"
				printf "M 100644 inline f%02d.txt\ndata %d\n%s\n", f, length(v[f]), v[f]
			}
		}
	}' | git fast-import --quiet && git checkout -q -f main
)
