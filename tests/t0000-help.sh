#!/bin/sh
# t0000-help: what every command and man page owes its user (git t0012, t0450).
#
# For each command of bin_PROGRAMS in Makefile.am: -h and --help print the usage on
# stdout and exit 0; an unknown option is one line of complaint plus the usage on
# stderr, exit 2; the SYNOPSIS of man/<cmd>.1 is the usage line; the options of the
# usage and of the man page's OPTIONS are the same.  For each page in man/: groff
# has nothing to warn about, and every EXAMPLES line starting with "$ " runs
# (exit 0, same output twice) on a small repository.

. "$(dirname "$0")/lib.sh"

# ---- what to check -----------------------------------------------------------------

# The programs of bin_PROGRAMS.
commands=$(ci_commands)

man_pages=$(cd "$CI_SRC_DIR" && ls man/*.[1-8] 2>/dev/null)

# man_section <page> <section>: the roff source of one .SH section, requests that
# only format (.nf, .PP, ...) and comments left out
man_section() {
	awk -v want="$2" '
		/^\.SH/ {
			s = $0; sub(/^\.SH[ \t]+/, "", s); gsub(/"/, "", s)
			on = (s == want); next
		}
		!on { next }
		/^\.\\"/ { next }
		/^\.(nf|fi|PP|LP|P|br|sp|ad|na|nh|hy|RS|RE|EX|EE|in)([ \t]|$)/ { next }
		{ print }' "$1"
}

# man_unescape: the roff escapes our pages use, as plain text
man_unescape() {
	sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\(ti/~/g' \
		-e 's/\\(ha/^/g' -e 's/\\(ga/`/g' -e 's/\\&//g' -e 's/\\f[BIRP]//g' \
		-e 's/\\e/\\/g'
}

# usage_lines <cmd>: the usage lines of `<cmd> -h`, without "usage: " / "   or: "
usage_lines() {
	"$1" -h | sed -n -e '/^$/q' -e 's/^usage: //p' -e 's/^ *or: //p'
}

# ---- the list of commands -------------------------------------------------------

test_expect_success 'Makefile.am lists the commands' '
	test -n "$commands"
'

test_expect_success 'every command has a man page and every .1 page a command' '
	printf "%s\n" $commands | sort >cmds &&
	(cd "$CI_SRC_DIR/man" && ls *.1) | sed "s/\.1\$//" | sort >pages &&
	test_cmp cmds pages
'

test_expect_success 'every man page is installed (dist_man_MANS)' '
	for page in $man_pages; do
		grep -q "^[ 	]*$page[ 	\\\\]*\$" "$CI_SRC_DIR/Makefile.am" ||
		{ echo "$page is not in Makefile.am"; return 1; }
	done
'

# ---- each command ----------------------------------------------------------------

for cmd in $commands; do

test_expect_success "$cmd: is built" '
	test -x "$CI_BUILD_DIR/$cmd"
'

test_expect_success "$cmd -h prints the usage on stdout" '
	$cmd -h >help 2>err &&
	test_must_be_empty err &&
	head -n 1 help >first &&
	test_grep "^usage: $cmd\( \|\$\)" first &&
	cp help "$TEST_TMP/$cmd.help"
'

test_expect_success "$cmd --help is -h" '
	$cmd --help >help 2>err &&
	test_must_be_empty err &&
	test_cmp "$TEST_TMP/$cmd.help" help
'

test_expect_success "$cmd --version: its name and the version of ci, exit 0" '
	$cmd --version >version 2>err &&
	test_must_be_empty err &&
	v=$(sed -n "s/^AC_INIT(\[ci\], \[\([^]]*\)\].*/\1/p" "$CI_SRC_DIR/configure.ac") &&
	test -n "$v" &&
	echo "$cmd (ci) $v" >expect &&
	test_cmp expect version
'

# a write error is exit 3, but 2 for ci-grep (any error, as rg has it)
full_status=3
test "$cmd" = ci-grep && full_status=2

test_expect_success "$cmd -h to a full disk fails with exit $full_status" '
	test_status $full_status $cmd -h >/dev/full 2>err &&
	test_grep "^$cmd: " err
'

test_expect_success "$cmd: an unknown option is a usage error" '
	test_status 2 "$CI_BUILD_DIR/$cmd" --no-such-option >out 2>err &&
	test_must_be_empty out &&
	sed -n 1p err >msg &&
	test_grep "^$cmd: .*no-such-option" msg &&
	sed 1d err >rest &&
	head -n 1 rest >usage &&
	head -n 1 "$TEST_TMP/$cmd.help" >expect &&
	test_cmp expect usage
'

test_expect_success "$cmd: SYNOPSIS of man/$cmd.1 is the usage" '
	man_section "$CI_SRC_DIR/man/$cmd.1" SYNOPSIS | man_unescape >synopsis &&
	usage_lines $cmd >usage &&
	test -s usage &&
	test_cmp usage synopsis
'

test_expect_success "$cmd: man/$cmd.1 has the sections of a command page" '
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$CI_SRC_DIR/man/$cmd.1" ||
		{ echo "no $s section"; return 1; }
	done
'

test_expect_success "$cmd: -h and the man page have the same options" '
	grep -o -- "--[a-z][a-z0-9-]*" "$TEST_TMP/$cmd.help" | sort -u >help-opts &&
	man_section "$CI_SRC_DIR/man/$cmd.1" OPTIONS | man_unescape |
		awk "/^\.TP/ { getline; print }" |
		grep -o -- "--[a-z][a-z0-9-]*" | sort -u >man-opts &&
	test_cmp help-opts man-opts
'

done

# ---- man pages ------------------------------------------------------------------------

for page in $man_pages; do
	if test_have_prog groff; then
		test_expect_success "$page: groff has no warnings" '
			groff -man -Tutf8 -ww -z "$CI_SRC_DIR/$page" >out 2>err &&
			test_must_be_empty out &&
			test_must_be_empty err
		'
	else
		test_skip "$page: groff has no warnings" "groff is not installed"
	fi
done

# ---- the EXAMPLES of the man pages ----------------------------------------------------

# The repository they run in: a C parser, a Python tool, a README; two commits.
make_example_repo() (
	mkdir -p "$1/src" "$1/tools" && cd "$1" && git init -q &&
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

	/* Skip blanks. */
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
	cat >README.md <<-\EOF &&
	# Example

	A tiny parser.

	## Use

	Run main.
	EOF
	git add . && git commit -q -m "a parser" &&
	cat >tools/report.py <<-\EOF &&
	import json
	import sys


	class Report:
	    def __init__(self, name):
	        self.name = name

	    def render(self):
	        return json.dumps({"name": self.name})


	def main():
	    print(Report(sys.argv[1]).render())
	EOF
	cat >>src/main.c <<-\EOF &&

	int unused(void)
	{
		return printf("unused\n");
	}
	EOF
	git add . && git commit -q -m "a report"
)

test_expect_success 'setup: the repository of the examples' '
	make_example_repo ex &&
	mkdir -p "$TEST_TMP/bin" &&
	if test "$JQ" != jq; then ln -sf "$JQ" "$TEST_TMP/bin/jq"; fi
'

# the examples, one a line: "<page> <command>"
for page in $man_pages; do
	man_section "$CI_SRC_DIR/$page" EXAMPLES | sed -n 's/^\$ //p' | man_unescape |
		sed "s,^,$page ,"
done >"$TEST_TMP/examples"

test_expect_success 'the man pages have examples' '
	test_grep "^man/ci-chunk.1 " "$TEST_TMP/examples"
'

# a pipeline fails if any of its commands fails
if test_have_prog bash; then
	example_shell='bash -o pipefail -c'
else
	example_shell='sh -c'
fi

while read -r page example; do
	test_expect_success "$page example: $(echo "$example" | tr -d '#')" '
		(
			cd ex &&
			PATH=$TEST_TMP/bin:$PATH &&
			$example_shell "$example" >../out1 &&
			$example_shell "$example" >../out2
		) &&
		test_cmp out1 out2
	'
done <"$TEST_TMP/examples"

test_done
