#!/bin/sh
# t0777-embed-pairs-debs: scripts/embed-pairs --debs reads the Python code of
# the Debian packages a list names (here one built by the test, found in the
# cache so nothing is downloaded): a documented function becomes a pair (its
# docstring's first sentence the query, taken out of the code), the manifest
# names module, package, version and the copyright file's licence; a module of
# a benchmark's repository (toolz: the ranking model's validation; rich:
# MULocBench) and a vendored copy are left out; --sources reads only what it names; an unknown
# source and a missing list are errors; a package that cannot be had is named on stderr.

. "$(dirname "$0")/lib.sh"

pairs=$CI_SRC_DIR/scripts/embed-pairs
if ! test_have_prog python3 || ! test_have_lang python || ! test_have_prog dpkg-deb; then
	test_skip 'scripts/embed-pairs' 'no python3, python grammar or dpkg-deb'
	test_done
fi

test_expect_success 'setup: a package with a module, a vendored copy and an excluded module' '
	d=pkg/usr/lib/python3/dist-packages &&
	mkdir -p pkg/DEBIAN $d/goodmod/_vendor $d/toolz $d/rich pkg/usr/share/doc/python3-fake &&
	printf "Package: python3-fake\nVersion: 1.2-3\nArchitecture: all\nMaintainer: T <t@example.org>\nDescription: test\n" >pkg/DEBIAN/control &&
	printf "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: debian/*\nLicense: GPL-2+\n\nFiles: *\nCopyright: 2020 T\nLicense: MIT\n" \
		>pkg/usr/share/doc/python3-fake/copyright &&
	cat >$d/goodmod/__init__.py <<-\EOF &&
	def parse_price(text):
	    """Parse a price written with a currency sign into cents.

	    More words that stay with the code.
	    """
	    sign, amount = text[0], text[1:]
	    return int(float(amount) * 100)


	def undocumented(x):
	    return x + 1
	EOF
	cat >$d/goodmod/_vendor/other.py <<-\EOF &&
	def vendored_helper(a, b):
	    """Combine two values from the vendored library copy."""
	    return (a, b)
	EOF
	cat >$d/toolz/core.py <<-\EOF &&
	def compose_all(*fs):
	    """Compose every function given from right to left."""
	    return fs
	EOF
	cat >$d/rich/console.py <<-\EOF &&
	def print_markup(text):
	    """Print text with its console markup rendered as styles."""
	    return text
	EOF
	mkdir -p out/debs &&
	dpkg-deb --root-owner-group -b pkg out/debs/python3-fake_1.2-3_all.deb >/dev/null &&
	printf "# test list\npython3-fake\n" >list
'

test_expect_success '--debs: the pair, its manifest line, nothing excluded' '
	/usr/bin/python3 "$pairs" --ci-chunk "$CI_BUILD_DIR/ci-chunk" --out out --sources python \
		--debs list 2>err &&
	test "$(wc -l <out/pairs.jsonl)" -eq 1 &&
	"$JQ" -e "select(.unit == \"py/goodmod\" and .name == \"parse_price\" and
		.query == \"Parse a price written with a currency sign into cents.\" and
		(.text | contains(\"More words that stay\")) and
		(.text | contains(\"currency sign\") | not))" out/pairs.jsonl >/dev/null &&
	printf "python: goodmod (python3-fake)\t1.2-3\tMIT\t1\t1\n" >expect &&
	tail -n +2 out/manifest.tsv >actual &&
	test_cmp expect actual &&
	! grep -q "toolz\|vendored_helper\|compose_all\|print_markup\|py/rich" out/pairs.jsonl &&
	test -d out/debs/x/python3-fake
'

test_expect_success 'the same list gives the same pairs (unpacked once, read again)' '
	cp out/pairs.jsonl first.jsonl &&
	/usr/bin/python3 "$pairs" --ci-chunk "$CI_BUILD_DIR/ci-chunk" --out out --sources python \
		--debs list 2>err &&
	test_cmp first.jsonl out/pairs.jsonl
'

test_expect_success 'an unknown source or a missing list is an error; a package that cannot be had is named' '
	{ /usr/bin/python3 "$pairs" --out out --sources python,go 2>err; test $? -eq 2; } &&
	grep -q "unknown source go" err &&
	test_must_fail /usr/bin/python3 "$pairs" --out out --sources python --debs no-such-list 2>err &&
	grep -q "embed-pairs: --debs no-such-list: No such file or directory" err &&
	printf "python3-fake\nci-no-such-package-t0777\n" >list2 &&
	/usr/bin/python3 "$pairs" --ci-chunk "$CI_BUILD_DIR/ci-chunk" --out out --sources python \
		--debs list2 2>err &&
	grep -q "cannot download ci-no-such-package-t0777 (left out)" err &&
	test "$(wc -l <out/pairs.jsonl)" -eq 1
'

test_done
