#!/bin/sh
# t0200-chunk-golden: ci-chunk's output on a small, realistic repository per
# language, compared byte for byte with what a person reviewed (ctags Units).
#
# Each tests/golden/ci-chunk/<case>/ is a tiny repository root: input files, `args`
# (one line: ci-chunk's arguments), `expected` (stdout) and `expected-stderr`.  The
# inputs are copied into the trash directory, `git init` makes that copy a
# repository, and `ci-chunk -j 1 $(cat args)` runs there; stdout, stderr and the
# exit status (0) must be as expected.  scripts/regen-golden rewrites the expected
# files from the current build, for review with `git diff`.
#
# ci requires every grammar: a case whose language has no grammar compiled in
# fails (it does not skip).

. "$(dirname "$0")/lib.sh"

golden=$CI_SRC_DIR/tests/golden/ci-chunk

# the languages that have a tree-sitter grammar (lang.c); a case needs the grammar
# of its own name and of every file its expected output names
grammar_langs='c cpp python javascript typescript tsx go rust java ruby csharp php bash'

# the languages one case needs, one a line
case_langs() {
	{
		echo "$1"
		"$JQ" -r 'select(._type == "file") | .lang // empty' "$golden/$1/expected" 2>/dev/null
	} | sort -u | while read -r l; do
		case " $grammar_langs " in
		*" $l "*) echo "$l" ;;
		esac
	done
}

cases=$(cd "$golden" 2>/dev/null && ls -d */ 2>/dev/null | sed 's,/$,,')

test_expect_success 'there are golden cases, one per language at least' '
	test -n "$cases" &&
	for l in $grammar_langs markdown text broken; do
		test -f "$golden/$l/args" || echo "no golden case for $l"
	done >missing &&
	test_must_be_empty missing
'

for c in $cases; do

for l in $(case_langs "$c"); do
	test_expect_success "$c: the $l grammar is compiled in" '
		test_have_lang "$l" || {
			echo "the tree-sitter grammar of $l is not built (CI_HAVE_LANGS=\"$CI_HAVE_LANGS\");"
			echo "ci requires every grammar: run scripts/setup, then ./configure"
			false
		}
	'
done

test_expect_success "$c: ci-chunk output is as expected" '
	test -f "$golden/$c/args" &&
	test -f "$golden/$c/expected" &&
	test -f "$golden/$c/expected-stderr" &&
	rm -rf "$c" && mkdir "$c" &&
	(cd "$golden/$c" && tar -cf - --exclude=./args --exclude=./expected \
		--exclude=./expected-stderr .) | (cd "$c" && tar -xf -) &&
	(cd "$c" && git init -q) &&
	args=$(cat "$golden/$c/args") &&
	(cd "$c" && test_status 0 ci-chunk -j 1 $args >../$c.out 2>../$c.err) &&
	test_cmp "$golden/$c/expected" $c.out &&
	test_cmp "$golden/$c/expected-stderr" $c.err
'

test_expect_success "$c: expected is valid NDJSON, a file record first" '
	"$JQ" -c . "$golden/$c/expected" >/dev/null &&
	head -n 1 "$golden/$c/expected" | "$JQ" -e "._type == \"file\"" >/dev/null
'

done

test_done
