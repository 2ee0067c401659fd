#!/bin/sh
# t0410-grep-index: ci-grep with an index gives what a scan gives.
#
# A corpus is generated with a fixed seed (awk), indexed with ci-index build, then
# searched for random literals and regular expressions, with and without -i, -w,
# -F, both ways: the outputs must be identical.  Then the tree is changed after
# indexing (a file edited in place, a file added, a file removed, a file whose
# size stays the same) and the two ways must still agree.

. "$(dirname "$0")/lib.sh"

if ! test -x "$CI_BUILD_DIR/ci-index"; then
	test_skip 'ci-grep with an index' 'ci-index is not built'
	test_done
fi

# The words of the corpus: identifiers as code has them, punctuation, numbers.
words='alpha beta gamma delta foo_bar FooBar fooBar BAR_BAZ spin_lock spin_unlock
mutex_lock mutex_unlock PM_SUSPEND PM_RESUME PM_SUSPEND_MAX x86 arm64 init exit probe
remove read write open close struct int char void return if else for while ( ) { }
; = + - * / < > 0 1 2 42 0x1f "str" foo bar baz qux quux printk kmalloc kfree
CONFIG_PM CONFIG_SMP dev->name dev->id ->ops .probe a.b __init __exit'

# gen_corpus <dir>: 120 files in 6 directories, lines of 0 to 12 random words
gen_corpus() {
	mkdir -p "$1" && cd "$1" && git init -q &&
	awk -v words="$words" 'BEGIN {
		srand(20240601)
		nw = split(words, w, /[ \n]+/)
		for (f = 0; f < 120; f++) {
			dir = "d" (f % 6)
			if (f % 2) dir = dir "/sub"
			system("mkdir -p " dir)
			file = dir "/f" f (f % 3 ? ".c" : ".txt")
			nl = 5 + int(rand() * 60)
			for (l = 0; l < nl; l++) {
				n = int(rand() * 13)
				line = ""
				for (k = 0; k < n; k++)
					line = line (k ? " " : "") w[1 + int(rand() * nw)]
				if (f == 7) line = line "\r"
				print line > file
			}
			close(file)
		}
		# three large files, many trigram segments each (one with CRLF
		# lines, one without a final newline), a rare word in a few lines
		for (f = 0; f < 3; f++) {
			file = f == 0 ? "d4/big0.c" : f == 1 ? "d5/sub/big1.txt" : "d2/big2.c"
			for (l = 0; l < 2500 + 500 * f; l++) {
				n = 1 + int(rand() * 12)
				line = ""
				for (k = 0; k < n; k++)
					line = line (k ? " " : "") w[1 + int(rand() * nw)]
				if (l % 997 == 500) line = line " rare_token_" f
				if (f == 1) line = line "\r"
				if (f == 2 && l == 3499) printf "%s", line > file
				else print line > file
			}
			close(file)
		}
	}' &&
	printf "caf\351 foo_bar\n\377 PM_SUSPEND here\n" >d0/latin1.txt &&
	printf "no final newline PM_RESUME" >d1/nonl.txt &&
	cd "$TRASH_DIRECTORY"
}

# gen_patterns: "<flags>\t<pattern>" lines, random, from the same words
gen_patterns() {
	awk -v words="$words" 'BEGIN {
		srand(7)
		nw = split(words, w, /[ \n]+/)
		# literal words, regex-quoted where needed
		for (i = 0; i < 40; i++) {
			x = w[1 + int(rand() * nw)]
			q = x; gsub(/[][(){}.*+?|^$\\]/, "\\\\&", q)
			f = rand() < 0.3 ? "-i" : rand() < 0.3 ? "-w" : "-"
			print f "\t" q
			print "-F\t" x
		}
		tmpl[1] = "%s.*%s"; tmpl[2] = "(%s|%s)"; tmpl[3] = "\\b%s\\s+%s"
		tmpl[4] = "[A-Z]+_%s"; tmpl[5] = "%s\\w*%s"; tmpl[6] = "(%s)?%s"
		tmpl[7] = "^%s"; tmpl[8] = "%s$"; tmpl[9] = "%s(?=\\s)"; tmpl[10] = "[a-f]%s{1,2}"
		for (i = 0; i < 60; i++) {
			a = w[1 + int(rand() * nw)]; b = w[1 + int(rand() * nw)]
			gsub(/[][(){}.*+?|^$\\]/, "\\\\&", a); gsub(/[][(){}.*+?|^$\\]/, "\\\\&", b)
			t = tmpl[1 + int(rand() * 10)]
			p = sprintf(t, a, b)
			f = rand() < 0.25 ? "-i" : rand() < 0.2 ? "-w" : "-"
			print f "\t" p
		}
	}'
}

# compare_all <repo> <patterns file> [<index flags>]: both ways agree on every pattern
compare_all() {
	while IFS="	" read -r flags pat; do
		test "$flags" = - && flags=
		(cd "$1" && ci-grep $flags --no-index -e "$pat" >../scan.out 2>../scan.err; echo $? >../scan.rc)
		(cd "$1" && ci-grep $flags ${3:-} -e "$pat" >../index.out 2>../index.err; echo $? >../index.rc)
		if ! cmp -s scan.out index.out || ! cmp -s scan.rc index.rc; then
			echo "pattern '$pat' (flags '$flags'): the index disagrees with the scan"
			diff scan.out index.out | head -5
			return 1
		fi
		test_must_be_empty index.err || return 1
	done <"$2"
}

test_expect_success 'setup: a generated corpus, indexed' '
	gen_corpus repo &&
	# the large files and the directories written long before the index (else
	# they are racy, and the files are read whole)
	touch -d @1600000000 repo/d4/big0.c repo/d5/sub/big1.txt repo/d2/big2.c &&
	(cd repo && find . -path ./.git -prune -o -type d -print | xargs touch -d @1600000000) &&
	(cd repo && ci-index --no-progress build) &&
	sqlite3 repo/.ci-index/index.db "SELECT count(*) FROM blobs WHERE length(segs) >= 8 * 10" >actual &&
	echo 3 >expect &&
	test_cmp expect actual &&
	test -f repo/.ci-index/index.db &&
	gen_patterns >patterns &&
	test_line_count = 140 patterns
'

test_expect_success 'the index is used and reads fewer files' '
	(cd repo && ci-grep --stats -c PM_SUSPEND_MAX >/dev/null 2>../err) &&
	test_grep "^ci-grep: index: " err &&
	test_grep "trigram query: \"PM_\"" err &&
	(cd repo && ci-grep --stats -c --no-index PM_SUSPEND_MAX >/dev/null 2>../err) &&
	test_grep "^ci-grep: scan: " err
'

test_expect_success 'the trigrams keep case: FooBar asks for its own, -i for every case' '
	(cd repo && ci-grep --stats -c FooBar >../a 2>../err) &&
	(cd repo && ci-grep --no-index -c FooBar >../b) &&
	test_cmp b a &&
	test_grep "trigram query: \"Foo\" AND \"ooB\"" err &&
	sed -n "s/^ci-grep: index: .* \([0-9]*\) trigram candidates.*/\1/p" err >n_case &&
	(cd repo && ci-grep --stats -c -i FooBar >../a 2>../err) &&
	(cd repo && ci-grep --no-index -c -i FooBar >../b) &&
	test_cmp b a &&
	test_grep "trigram query: .*\"foo\" OR \"Foo\" OR " err &&
	test_grep "\"FOO\"" err &&
	sed -n "s/^ci-grep: index: .* \([0-9]*\) trigram candidates.*/\1/p" err >n_icase &&
	test $(cat n_case) -lt $(cat n_icase) &&
	(cd repo && ci-grep -c "(?i)foobar" >../a && ci-grep --no-index -c "(?i)foobar" >../b) &&
	test_cmp b a
'

test_expect_success '-i finds what PCRE2 folds: s as U+017F (long s), k as U+212A (Kelvin sign)' '
	printf "pm_\305\277u\305\277pend here\nthe \342\204\252ernel_task\n" >repo/d3/fold.c &&
	(cd repo && ci-index --no-progress update) &&
	for p in pm_suspend kernel_task; do
		(cd repo && ci-grep --no-json -i $p >../a && ci-grep --no-json --no-index -i $p >../b) &&
		test_cmp b a &&
		test_grep "^d3/fold.c:" a || return 1
	done
'

test_expect_success 'random literals and regexes: the index gives what the scan gives' '
	compare_all repo patterns
'

test_expect_success 'a newline in the pattern, however written: no line, indexed or not' '
	# the rare tokens end their lines: each pattern would match across the end
	printf "%s\n" "-	rare_token_0\\n" "-	rare_token_1\\r\\n" "-	rare_token_2\\x0a\\w" \
		"-i	RARE_TOKEN_0\\n" "-w	rare_token_0\\n" "-	rare_token_0[\\s\\S]" "-	rare_token_0\\R" \
		"-	(?s)rare_token_0." "-	rare_token_0\\s+\\w" "-	rare_token_(0|2)\\W" >nl-patterns &&
	compare_all repo nl-patterns &&
	while IFS="	" read -r flags pat; do
		test "$flags" = - && flags=
		(cd repo && test_status 1 ci-grep $flags -e "$pat" >../out) &&
		test_must_be_empty out || return 1
	done <nl-patterns
'

test_expect_success 'large files: only the segments that can match are read, with the same answers' '
	for f in "" -c -l "-m 1" -i; do
		(cd repo && ci-grep --stats $f rare_token_ >../a 2>../err) &&
		(cd repo && ci-grep --no-index $f rare_token_ >../b) &&
		test_cmp b a &&
		test_grep " MB, 3 by parts)" err || return 1
	done &&
	"$JQ" -r ".path + \":\" + (.line | tostring)" a >actual &&
	cat >expect <<-\EOF &&
	d2/big2.c:501
	d2/big2.c:1498
	d2/big2.c:2495
	d2/big2.c:3492
	d4/big0.c:501
	d4/big0.c:1498
	d4/big0.c:2495
	d5/sub/big1.txt:501
	d5/sub/big1.txt:1498
	d5/sub/big1.txt:2495
	EOF
	test_cmp expect actual &&
	(cd repo && ci-grep --stats -w rare_token_2 >../a 2>../err) &&
	(cd repo && ci-grep --no-index -w rare_token_2 >../b) &&
	test_cmp b a &&
	test_grep " MB, 1 by parts)" err &&
	(cd repo && ci-grep --stats -n "rare_token_1\\s*\$" >../a 2>../err) &&
	(cd repo && ci-grep --no-index -n "rare_token_1\\s*\$" >../b) &&
	test_cmp b a &&
	test_grep " MB, 1 by parts)" err
'

test_expect_success 'large files: context, a lookbehind or \\A read them whole' '
	(cd repo && ci-grep --stats -C 1 rare_token_0 >../a 2>../err) &&
	(cd repo && ci-grep --no-index -C 1 rare_token_0 >../b) &&
	test_cmp b a &&
	test_grep ", 0 by parts)" err &&
	(cd repo && ci-grep --stats "(?<=probe )rare_token_2" >../a 2>../err; test $? -le 1) &&
	(cd repo && ci-grep --no-index "(?<=probe )rare_token_2" >../b; test $? -le 1) &&
	test_cmp b a &&
	test_grep ", 0 by parts)" err &&
	(cd repo && ci-grep --stats "\\A.*rare_token_0" >../a 2>../err; test $? = 1) &&
	test_must_be_empty a &&
	test_grep ", 0 by parts)" err
'

test_expect_success 'a large file changed with its size and time kept: its parts do not line up, it is read whole' '
	cp repo/d4/big0.c big0.orig &&
	# every byte one place earlier: the same size, no newline where it was
	{ tail -c +2 big0.orig && head -c 1 big0.orig; } >repo/d4/big0.c &&
	touch -d @1600000000 repo/d4/big0.c &&
	(cd repo && ci-grep --stats -n rare_token_0 >../a 2>../err) &&
	(cd repo && ci-grep --no-index -n rare_token_0 >../b) &&
	test_cmp b a &&
	test_grep " MB, 0 by parts)" err &&
	cp big0.orig repo/d4/big0.c &&
	touch -d @1600000000 repo/d4/big0.c &&
	(cd repo && ci-grep --stats -n rare_token_0 >../a 2>../err) &&
	test_grep " MB, 1 by parts)" err &&
	(cd repo && ci-grep --no-index -n rare_token_0 >../b) &&
	test_cmp b a
'

test_expect_success 'a large file edited: read whole, then by parts again after ci-index update' '
	sed -i "1000s/\$/ rare_token_0 again/" repo/d4/big0.c &&
	(cd repo && ci-grep --stats -n rare_token_0 >../a 2>../err) &&
	(cd repo && ci-grep --no-index -n rare_token_0 >../b) &&
	test_cmp b a &&
	test_grep " MB, 0 by parts)" err &&
	touch -d @1600000000 repo/d4/big0.c repo/d4 &&
	(cd repo && ci-index update) &&
	(cd repo && ci-grep --stats -n rare_token_0 >../a 2>../err) &&
	test_cmp b a &&
	test_grep " MB, 1 by parts)" err &&
	test_line_count = 4 a
'

test_expect_success 'the same with context, -c, -l and a path' '
	(cd repo && ci-grep -C 2 mutex_lock >../a && ci-grep --no-index -C 2 mutex_lock >../b) &&
	test_cmp b a &&
	(cd repo && ci-grep -c -i "pm_(suspend|resume)" >../a && ci-grep --no-index -c -i "pm_(suspend|resume)" >../b) &&
	test_cmp b a &&
	(cd repo && ci-grep -l "\\bkfree\\b" d2 >../a && ci-grep --no-index -l "\\bkfree\\b" d2 >../b) &&
	test_cmp b a &&
	(cd repo/d3 && ci-grep --no-json -g "*.txt" "spin_(un)?lock" >../../a && ci-grep --no-json -g "*.txt" --no-index "spin_(un)?lock" >../../b) &&
	test_cmp b a
'

# agree <flags...>: the search with the index (--check files, dirs and none, the
# tree as indexed) writes what a scan writes, with the same exit status
agree() {
	(cd repo && ci-grep --no-index "$@" >../scan.out 2>../scan.err; echo $? >../scan.rc) &&
	for check in files dirs none; do
		(cd repo && ci-grep --check $check "$@" >../index.out 2>../index.err; echo $? >../index.rc) &&
		test_cmp scan.out index.out && test_cmp scan.rc index.rc &&
		test_must_be_empty index.err || { echo "differs: --check $check $*"; return 1; }
	done
}

test_expect_success '-v, -L and --files read every file, not the trigram candidates' '
	# rare_token_1 is in one file: its trigrams select it alone
	agree -l rare_token_1 &&
	test_line_count = 1 scan.out &&
	agree -L rare_token_1 &&
	test_line_count -gt 100 scan.out &&
	! grep big1 scan.out &&
	agree -v rare_token_1 &&
	grep "\"path\":\"d0/f0.txt\"" scan.out >/dev/null &&
	agree -c -v -i "pm_suspend|\\bint\\b" &&
	agree -v -x "" &&
	agree --files &&
	test_line_count = $(cd repo && git ls-files -o --exclude-standard | grep -cv "^\.ci-index/") scan.out &&
	agree --files d3 &&
	agree -L -F -e "->ops" d1 d2
'

test_expect_success '-x, -o and -S: the index gives what the scan gives' '
	agree -x "" &&
	agree -x "int" &&
	agree -x -F "}" &&
	agree -x -i "foo_bar.*" &&
	agree -o "PM_[A-Z]+" &&
	agree -o -i -w "fooBar" &&
	test_line_count -gt 10 scan.out &&
	agree -S "foobar" &&
	agree -S "FooBar" &&
	agree -q rare_token_2 &&
	test_must_be_empty scan.out
'

test_expect_success '-a: a binary file, which the index leaves out, is searched as a scan does' '
	printf "bin\000ary rare_token_1\n" >repo/d0/blob.dat &&
	agree -a -l rare_token_1 &&
	test_grep "d0/blob.dat" scan.out &&
	agree -a --no-json rare_token_1 &&
	agree -l rare_token_1 &&
	! grep blob.dat scan.out &&
	rm repo/d0/blob.dat
'

test_expect_success 'with an unchanged tree, only candidates are read, the rest stat'\''ed' '
	# make every directory older than the index, as in a tree indexed long after
	# it was written
	(cd repo && find . -path ./.git -prune -o -type d -print | xargs touch -d @1600000000) &&
	(cd repo && ci-grep --stats -c "zzz_not_there_at_all" >/dev/null 2>../err; test $? = 1) &&
	test_grep "^ci-grep: index: [0-9]* files to read, " err &&
	! grep "(walked)" err &&
	test_grep " \([0-9]*\) stat.ed (\1 unchanged)" err
'

test_expect_success 'a file edited in place after indexing is searched' '
	test -f repo/d0/f6.txt &&
	(cd repo && printf "brand_new_token here\n" >>d0/f6.txt) &&
	(cd repo && ci-grep --no-json brand_new_token) >out &&
	test_grep "^d0/f6.txt:[0-9]*:1:brand_new_token here\$" out &&
	(cd repo && ci-grep --stats brand_new_token >/dev/null 2>../err) &&
	! grep "(walked)" err &&
	head -n 40 patterns >some &&
	compare_all repo some
'

test_expect_success '--trust-index does not see that edit, but a scan does' '
	(cd repo && test_status 1 ci-grep --trust-index brand_new_token) &&
	(cd repo && ci-grep --trust-index --stats -c foo_bar >/dev/null 2>../err) &&
	test_grep " 0 stat.ed" err
'

test_expect_success 'a file whose token went away is not reported' '
	(cd repo && grep -l PM_SUSPEND_MAX d*/f*.c | head -n 1 >../victim) &&
	test -s victim &&
	(cd repo && sed "s/PM_SUSPEND_MAX/PM_SUSPEND_MIN/g" "$(cat ../victim)" >tmp && cat tmp >"$(cat ../victim)" && rm tmp) &&
	(cd repo && find . -path ./.git -prune -o -type d -print | xargs touch -d @1600000000) &&
	(cd repo && ci-grep -l PM_SUSPEND_MAX >../a; ci-grep -l --no-index PM_SUSPEND_MAX >../b) &&
	test_cmp b a &&
	! grep "$(cat victim)" a
'

test_expect_success 'a file added and a file removed after indexing' '
	(cd repo && printf "another_new_token\n" >d4/added.c && rm d0/f12.txt) &&
	(cd repo && ci-grep --no-json another_new_token) >out &&
	echo "d4/added.c:1:1:another_new_token" >expect &&
	test_cmp expect out &&
	(cd repo && ci-grep --stats another_new_token >/dev/null 2>../err) &&
	! grep "(walked)" err &&
	test_grep "^ci-grep: directories: [0-9]* recorded, [1-9][0-9]* changed" err &&
	compare_all repo some
'

test_expect_success 'ci-index update, then again the same answers' '
	(cd repo && ci-index --no-progress update) &&
	compare_all repo some
'

# old_times <dir>: every file and directory of repo (but .git) dated 2020, so that
# nothing is "racy" (modified within a second of the index) and an edit shows;
# a second later than the last time, so that no directory gets back the time
# an index recorded (which would hide a change, as it would from git)
old_times_n=1600000000
old_times() {
	old_times_n=$((old_times_n + 1)) &&
	(cd "$1" && find . -path ./.git -prune -o -path ./.ci-index -prune -o -print |
		xargs touch -h -d @$old_times_n)
}

test_expect_success '--check dirs: added, removed, renamed files and saves by rename are seen' '
	old_times repo &&
	(cd repo && ci-index --no-progress update) &&
	(cd repo && ci-grep --stats --check dirs -c foo_bar >/dev/null 2>../err) &&
	test_grep "^ci-grep: directories: [0-9]* recorded, 0 changed" err &&
	test_grep " 0 stat.ed" err &&
	c_file=$(cd repo && ls d2/*.c | head -n 1) &&
	t_file=$(cd repo && ls d4/f* | head -n 1) &&
	s_file=$(cd repo && grep -l foo_bar d1/sub/*.c | head -n 1) &&
	(cd repo &&
	 printf "dirs_mode_token one\n" >d2/new_in_d2.c &&
	 mkdir -p d5/deeper && printf "dirs_mode_token two\n" >d5/deeper/x.c &&
	 mv "$t_file" d4/renamed.txt &&
	 sed "s/foo_bar/dirs_mode_token/" "$s_file" >d1/sub/tmp && mv d1/sub/tmp "$s_file" &&
	 rm "$c_file") &&
	(cd repo && ci-grep --no-json --check dirs -l dirs_mode_token >../a && ci-grep --no-json --no-index -l dirs_mode_token >../b) &&
	test_cmp b a &&
	test_grep "^d5/deeper/x.c\$" a &&
	test_grep "^$s_file\$" a &&
	(cd repo && ci-grep --stats --check dirs -c dirs_mode_token >/dev/null 2>../err) &&
	! grep "(walked)" err &&
	compare_all repo some --check=dirs &&
	compare_all repo some
'

test_expect_success '--check dirs: a directory empty when indexed, then given a file' '
	mkdir repo/d6 &&
	old_times repo &&
	(cd repo && ci-index --no-progress update) &&
	printf "empty_dir_token\n" >repo/d6/late.c &&
	(cd repo && ci-grep --check dirs --no-json empty_dir_token) >out &&
	echo "d6/late.c:1:1:empty_dir_token" >expect &&
	test_cmp expect out
'

test_expect_success '--check dirs misses a file rewritten in place, until ci-index update' '
	old_times repo &&
	(cd repo && ci-index --no-progress update) &&
	victim=$(cd repo && ls d0/*.txt | head -n 1) &&
	printf "in_place_token\n" >>"repo/$victim" &&
	(cd repo && test_status 1 ci-grep --check dirs in_place_token) &&
	(cd repo && ci-grep --no-json -l in_place_token) >out &&
	echo "$victim" >expect &&
	test_cmp expect out &&
	(cd repo && ci-index --no-progress update) &&
	(cd repo && ci-grep --no-json --check dirs -l in_place_token) >out &&
	test_cmp expect out
'

test_expect_success 'a file changed within a second of the index is read, whatever its mtime says' '
	old_times repo &&
	(cd repo && ci-index --no-progress update) &&
	(cd repo && ci-grep --stats --check dirs -c zzz_not_there >/dev/null 2>../err; test $? = 1) &&
	sed -n "s/^ci-grep: index: \([0-9]*\) files to read.*/\1/p" err >n0 &&
	racy=$(cd repo && ls d0/*.txt | head -n 1) &&
	sqlite3 repo/.ci-index/index.db "UPDATE meta SET value = '\''$racy'\'' || char(10) WHERE key = '\''racy'\''" &&
	(cd repo && ci-grep --stats --check dirs -c zzz_not_there >/dev/null 2>../err; test $? = 1) &&
	sed -n "s/^ci-grep: index: \([0-9]*\) files to read.*/\1/p" err >n1 &&
	test "$(cat n1)" = "$(($(cat n0) + 1))"
'

test_expect_success 'a racy file rewritten with its size and mtime kept is read with --check files too' '
	old_times repo &&
	(cd repo && ci-index --no-progress update) &&
	racy=$(cd repo && ls d0/*.txt | head -n 2 | tail -n 1) &&
	sqlite3 repo/.ci-index/index.db "UPDATE meta SET value = '\''$racy'\'' || char(10) WHERE key = '\''racy'\''" &&
	size=$(wc -c <"repo/$racy") &&
	awk -v n="$size" "BEGIN { s = \"\"; while (length(s) < n - 1) s = s \"Q\"; print s }" >"repo/$racy" &&
	test "$(wc -c <"repo/$racy")" = "$size" &&
	touch -h -d @$old_times_n "repo/$racy" &&
	(cd repo && ci-grep --no-json -l QQQQQQQQ) >out &&
	echo "$racy" >expect &&
	test_cmp expect out &&
	(cd repo && ci-grep --no-json --no-index -l QQQQQQQQ) >out &&
	test_cmp expect out
'

test_expect_success 'a new or changed .gitignore: the tree is walked, results still equal a scan' '
	old_times repo &&
	(cd repo && ci-index --no-progress update) &&
	printf "d2/\n" >repo/d1/.gitignore &&
	printf "d3/sub/\n" >repo/.gitignore &&
	(cd repo && ci-grep --stats --check dirs -c foo_bar >../a 2>../err) &&
	test_grep "(walked)" err &&
	(cd repo && ci-grep --no-index -c foo_bar >../b) &&
	test_cmp b a &&
	! grep "^d3/sub/" a &&
	(cd repo && ci-index --no-progress update) &&
	printf "d4/\n" >repo/.gitignore &&
	(cd repo && ci-grep --check dirs -c foo_bar >../a && ci-grep --no-index -c foo_bar >../b) &&
	test_cmp b a &&
	! grep "^d4/" a &&
	compare_all repo some --check=dirs
'

test_expect_success '--check: a bad value is a usage error' '
	(cd repo && test_status 2 ci-grep --check often foo 2>../err) &&
	test_grep "check: .often. is not files, dirs or none" err
'

test_expect_success '--index names the index; a missing one is an error' '
	(cd repo && ci-grep --index .ci-index/index.db -c foo_bar >../a && ci-grep --no-index -c foo_bar >../b) &&
	test_cmp b a &&
	(cd repo && test_status 2 ci-grep --index /no/such/index.db foo 2>../err) &&
	test_grep "no index at ./no/such/index.db." err &&
	(cd repo && CI_INDEX=/no/such/index.db ci-grep -c foo_bar >../a) &&
	test_cmp b a
'

test_expect_success 'a corrupt index: a warning, and the files are scanned' '
	cp -R repo broken && rm -f broken/.ci-index/index.db-wal broken/.ci-index/index.db-shm &&
	printf "this is not a database" >broken/.ci-index/index.db &&
	(cd broken && ci-grep -c foo_bar >../a 2>../err) &&
	(cd broken && ci-grep --no-index -c foo_bar >../b) &&
	test_cmp b a &&
	test_grep "warning: searching without the index" err
'

test_expect_success 'an index loaded with part of the tree (ci-index load): a search still equals a scan' '
	(cd repo && ci-chunk d1 | ci-index --index ../part.db load) &&
	sqlite3 part.db "SELECT count(*) FROM files WHERE path NOT LIKE '\''d1/%'\''" >actual &&
	echo 0 >expect &&
	test_cmp expect actual &&
	(cd repo && ci-grep --no-json --index ../part.db -l foo_bar >../a 2>../err) &&
	(cd repo && ci-grep --no-json --no-index -l foo_bar >../b) &&
	test_cmp b a &&
	test_must_be_empty err &&
	grep -v "^d1/" a >outside &&
	test_line_count -gt 0 outside &&
	compare_all repo some "--index ../part.db"
'

test_expect_success '--trust-index with a loaded index says it searched only the index' '
	(cd repo && ci-grep --no-json --trust-index --index ../part.db -l foo_bar >../a 2>../err) &&
	test_grep "warning: the index .*part.db. holds the records loaded into it, not a walk of the tree: --trust-index searched only its files" err &&
	! grep -v "^d1/" a
'

test_done
