#!/bin/sh
# tests/fuzz/fuzz.sh: build the fuzz targets with clang's libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer, and run each for a while.  Run through `make fuzz`,
# which passes the compiler, flags, libraries and sources in FUZZ_* variables:
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS='chunk ndjson trigram models'] [FUZZ_SEED=N]
#
# Each target starts from its checked-in corpus (tests/fuzz/corpus/<target>/) and
# its regression inputs (tests/fuzz/regress/<target>/), and grows a working corpus
# in fuzz/corpus/<target>/ (in the build tree, kept between runs).  An input that
# crashes or breaks a property is left in fuzz/crashes/<target>/; copy it into
# tests/fuzz/regress/<target>/ with the fix, so make check replays it for good.
# Exit 1 if any target found something, 2 if a target could not be built.
set -u

seconds=$1
shift
: "${FUZZ_CC:?run through make fuzz}" "${FUZZ_SRCDIR:?}" "${FUZZ_SOURCES:?}"
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"

command -v "$FUZZ_CC" >/dev/null 2>&1 ||
	{ echo "fuzz: $FUZZ_CC not found (Debian packages clang and libclang-rt-dev)" >&2; exit 2; }
mkdir -p fuzz/obj || exit 2

# the libraries once, as objects built with clang's instrumentation
objs=
for src in $FUZZ_SOURCES; do
	case $src in *.c) ;; *) continue ;; esac
	path=$src
	[ -f "$path" ] || path=$FUZZ_SRCDIR/$src
	obj=fuzz/obj/$(printf '%s' "$src" | tr / _ | sed 's/\.c$/.o/')
	if [ ! -f "$obj" ] || [ "$path" -nt "$obj" ]; then
		# shellcheck disable=SC2086
		$FUZZ_CC $flags -fsanitize=fuzzer-no-link $FUZZ_CPPFLAGS -c "$path" -o "$obj.tmp" ||
			{ echo "fuzz: cannot compile $src" >&2; exit 2; }
		mv "$obj.tmp" "$obj"
	fi
	objs="$objs $obj"
done
# the libraries are instrumented for coverage (fuzzer-no-link); the targets link
# libFuzzer and its main
status=0
for t in "$@"; do
	extra= extra_obj= link=$FUZZ_CC
	case $t in
	trigram) extra="$FUZZ_SRCDIR/tests/trigram-eval.c" ;;
	mcp)	# the server's library (libcommon/mcp) is in the target, and libcommon's one C++ unit
		"${FUZZ_CXX:-clang++}" $flags -fsanitize=fuzzer-no-link -std=c++17 $FUZZ_CPPFLAGS \
			-c "$FUZZ_SRCDIR/libcommon/core/toml-json.cc" -o fuzz/obj/toml-json.o ||
			{ echo "fuzz: cannot compile libcommon/core/toml-json.cc" >&2; status=2; continue; }
		# and the fork server whose shard servers it starts (libcommon/index, not in libcommon.a)
		extra="$(echo "$FUZZ_SRCDIR"/libcommon/mcp/*.c) $FUZZ_SRCDIR/libcommon/index/fork-server.c mcp-profiles.c"
		extra_obj=fuzz/obj/toml-json.o
		link=${FUZZ_CXX:-clang++} ;;
	esac
	bin=fuzz/fuzz-$t
	# shellcheck disable=SC2086
	$link $flags -fsanitize=fuzzer $FUZZ_CPPFLAGS -I"$FUZZ_SRCDIR/tests" -I"$FUZZ_SRCDIR/cmd" -o "$bin" \
		$( [ $link = "$FUZZ_CC" ] || echo -x c ) "$FUZZ_SRCDIR/tests/fuzz/fuzz-$t.c" \
		"$FUZZ_SRCDIR/tests/fuzz/fuzz-util.c" $extra $( [ $link = "$FUZZ_CC" ] || echo -x none ) \
		$extra_obj $objs $FUZZ_LIBS ||
		{ echo "fuzz: cannot build $t" >&2; status=2; continue; }
	mkdir -p "fuzz/corpus/$t" "fuzz/crashes/$t"
	seeds=
	for d in "$FUZZ_SRCDIR/tests/fuzz/corpus/$t" "$FUZZ_SRCDIR/tests/fuzz/regress/$t"; do
		[ -d "$d" ] && seeds="$seeds $d"
	done
	echo "fuzz: $t for ${seconds}s" >&2
	# shellcheck disable=SC2086
	"$bin" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-artifact_prefix="fuzz/crashes/$t/" -print_final_stats=1 \
		"fuzz/corpus/$t" $seeds >"fuzz/$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz/$t.log" | tail -1)
	if [ $rc -ne 0 ]; then
		echo "fuzz: $t: FOUND something after ${runs:-?} runs: see fuzz/$t.log and fuzz/crashes/$t/" >&2
		grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz: )" "fuzz/$t.log" | head -5 >&2
		[ $status -eq 0 ] && status=1
	else
		echo "fuzz: $t: ${runs:-?} runs, nothing found" >&2
	fi
done
exit $status
