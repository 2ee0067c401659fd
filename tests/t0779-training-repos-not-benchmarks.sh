#!/bin/sh
# t0779-training-repos-not-benchmarks: no repository that the ranking model is
# fitted, validated or measured on (bench/eval/manifest-history.tsv, every row
# whose split is not "left out ...") is in a public issue-localisation benchmark's list
# (bench/eval/benchmark-repos.tsv), compared without regard to case; and the
# check itself finds a listed repository when one is given.

. "$(dirname "$0")/lib.sh"

manifest=$CI_SRC_DIR/bench/eval/manifest-history.tsv
lists=$CI_SRC_DIR/bench/eval/benchmark-repos.tsv

# listed <manifest>: the repositories of a manifest not left out that a list names
listed() {
	awk -F "\t" "NR == FNR { if (\$0 !~ /^#/) bench[tolower(\$1)] = \$2; next }
		FNR > 1 && \$2 !~ /^left out/ && (tolower(\$1) in bench) {
			print \$1 \"\t\" bench[tolower(\$1)] }" "$lists" "$1"
}

test_expect_success 'the lists and the manifest are there, and not empty' '
	test "$(grep -vc "^#" "$lists")" -gt 1000 &&
	test "$(awk -F "\t" "\$2 == \"train\"" "$manifest" | wc -l)" -gt 0 &&
	test "$(awk -F "\t" "\$2 == \"validation\"" "$manifest" | wc -l)" -gt 0
'

test_expect_success 'no training or validation repository is in a benchmark list' '
	listed "$manifest" >hits &&
	test_must_be_empty hits
'

test_expect_success 'the check finds one that is (case aside), and not one left out' '
	printf "repository\tsplit\nTEXTUALIZE/Rich\ttrain\nmahmoud/boltons\tleft out (SWE-smith)\nhynek/structlog\tvalidation\npallets/Click\tmeasured\n" >m.tsv &&
	listed m.tsv >hits &&
	printf "TEXTUALIZE/Rich\tMULocBench\npallets/Click\tSWE-smith(python profile)\n" >expect &&
	test_cmp expect hits
'

test_done
