#!/bin/sh
# bench/fault.sh: the long run of the fault-injection test (tests/t0526-index-fault.sh):
# many rounds of random edits, a ci-index update killed at a random moment, a
# normal update, and the index compared with a fresh build table by table.
#
#   bash bench/fault.sh [-n ROUNDS] [-s SEED]     (defaults: 200 rounds, seed 1)
#
# Run from a built tree; prints the TAP lines and exits non-zero if a round failed.
set -eu
rounds=200 seed=1
while getopts n:s: opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	s) seed=$OPTARG ;;
	*) echo "usage: bench/fault.sh [-n ROUNDS] [-s SEED]" >&2; exit 2 ;;
	esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
CI_FAULT_ROUNDS=$rounds CI_FAULT_SEED=$seed exec sh "$top/tests/t0526-index-fault.sh"
