#!/bin/sh
# The fuzz targets of tests/fuzz/ over their checked-in corpora and regression
# inputs, built with the build's own sanitizers (no libFuzzer needed): every input
# that once crashed ci stays fixed.  `make fuzz` runs the same targets under
# libFuzzer to find new ones.
. "$(dirname "$0")/lib.sh"

fz=$CI_SRC_DIR/tests/fuzz

for t in chunk ndjson trigram models mcp embed; do
	test_expect_success "fuzz target $t: every corpus and regression input runs clean" "
		test -d \"$fz/corpus/$t\" &&
		set -- \"$fz/corpus/$t\" &&
		if test -d \"$fz/regress/$t\"; then set -- \"\$@\" \"$fz/regress/$t\"; fi &&
		\"$CI_BUILD_DIR/tests/fuzz-$t\" \"\$@\" >out 2>err &&
		n=\$(grep -c '^ok ' out) &&
		test \"\$n\" -gt 0 &&
		grep -q \"^1\\.\\.\$n\\\$\" out
	"
done

test_done
