#!/bin/sh
# t0420-grep-rg: ci-grep where a ripgrep user expects rg's behaviour: the
# current directory searched and paths relative to it, paths outside the
# repository, hidden files, .ignore and .rgignore, -u, -r, --color, -s; with
# and without an index, compared with rg itself.

. "$(dirname "$0")/lib.sh"

if ! command -v rg >/dev/null 2>&1; then
	test_skip 'ci-grep as rg' 'rg (ripgrep) is not installed'
	test_done
fi

# ours/theirs: the same lines from ci-grep and from rg, in path order
ours() { ci-grep --no-json "$@"; }
theirs() { rg --no-heading -n --column --with-filename --sort path "$@"; }

test_expect_success 'setup: a repository with hidden files, ignore files and a lock file' '
	mkdir repo && (cd repo && git init -q) &&
	mkdir -p repo/.github/workflows repo/src/deep repo/docs repo/.cache &&
	printf "name: foo build\non: push\n" >repo/.github/workflows/ci.yml &&
	printf "foo = 1\n" >repo/.env &&
	printf "cached foo\n" >repo/.cache/c.txt &&
	printf "int foo(void);\nint bar;\n" >repo/src/a.c &&
	printf "foo foo\nbaz\n" >repo/src/deep/b.txt &&
	printf "a foo here\n" >repo/src/gen.txt &&
	printf "a foo there\n" >repo/src/keep.txt &&
	printf "foo docs\n" >repo/docs/readme.md &&
	printf "foo in a build output\n" >repo/docs/out.log &&
	printf "foo in a lock file\n" >repo/uv.lock &&
	printf "*.log\n" >repo/.gitignore &&
	printf "gen.txt\nkeep.txt\n" >repo/src/.ignore &&
	printf "!keep.txt\n" >repo/src/.rgignore &&
	printf "deep/\n" >repo/.ignore &&
	(cd repo && git add -A && git -c user.name=t -c user.email=t@t commit -q -m init) &&
	mkdir other && (cd other && git init -q) &&
	printf "root foo of other\n" >other/o.txt &&
	mkdir plain && printf "plain foo\n" >plain/p.txt
'

test_expect_success 'hidden files, .ignore and .rgignore: the counts of rg (the lock file aside)' '
	(cd repo && theirs -c foo -g "!uv.lock") >expect &&
	(cd repo && ours -c foo) >out &&
	test_cmp expect out &&
	! grep -e "^\\." -e "b.txt" -e "gen.txt" out &&
	test_grep "^src/keep.txt:1" out &&
	# the lock file is the one difference (generated); --include-vendored searches it as rg does
	(cd repo && theirs -c foo) >expect &&
	test_grep "^uv.lock:1" expect &&
	(cd repo && ours -c --include-vendored foo) >out &&
	test_cmp expect out
'

test_expect_success '--hidden, -u, -uu, -uuu, --files: as rg' '
	for a in --hidden -u -uu -uuu "--hidden --no-ignore"; do
		(cd repo && theirs -c $a -g "!.git" foo) >expect &&
		(cd repo && ours -c --include-vendored $a foo) >out &&
		test_cmp expect out || { echo "differs: $a"; return 1; }
	done &&
	(cd repo && ours -c --hidden foo) >out &&
	test_grep "^.github/workflows/ci.yml:1" out &&
	(cd repo && rg --files --sort path -g "!uv.lock") >expect &&
	(cd repo && ours --files) >out &&
	test_cmp expect out
'

test_expect_success 'a hidden path named is searched, as rg' '
	(cd repo && theirs foo .env .github) >expect &&
	(cd repo && ours foo .env .github) >out &&
	test_cmp expect out &&
	test_line_count = 2 out
'

test_expect_success 'below the root: the current directory, paths relative to it or as given' '
	(cd repo/src && theirs foo) >expect &&
	(cd repo/src && ours foo) >out &&
	test_cmp expect out &&
	test_grep "^keep.txt:1:" out &&
	(cd repo/src && ls $(ci-grep -l --no-json foo)) >listed &&
	(cd repo/src && ci-grep -l --no-json foo) >expect &&
	test_cmp expect listed &&
	# (the files of a tree in the order of their paths: rg gives the paths given in order)
	for args in "./" "../docs ." "../docs deep" "../src/a.c deep" "$PWD/repo/docs"; do
		(cd repo/src && theirs -c foo $args) >expect &&
		(cd repo/src && ours -c foo $args) >out &&
		test_cmp expect out || { echo "differs: $args"; return 1; }
	done &&
	(cd repo/src && ci-grep -c foo ../docs) >out &&
	echo "{\"_type\":\"count\",\"path\":\"../docs/readme.md\",\"count\":1}" >expect &&
	test_cmp expect out
'

test_expect_success 'paths outside the repository: searched as rg does, not refused' '
	(cd repo && theirs foo ../other ../plain/p.txt) >expect &&
	(cd repo && ours foo ../other ../plain/p.txt) >out &&
	test_cmp expect out &&
	test_line_count = 2 out &&
	echo "root:x:0:0:root:/root:/bin/sh" >passwd &&
	p="$PWD/passwd" &&
	(cd repo && ours root "$p") >out &&
	echo "$p:1:1:root:x:0:0:root:/root:/bin/sh" >expect &&
	test_cmp expect out &&
	(cd repo && test_status 1 ci-grep zzz_none ../other) &&
	(cd repo && test_status 2 ci-grep foo ../no-such-dir 2>../err) &&
	test_grep "cannot open .../no-such-dir." err
'

test_expect_success 'with an index: the same files and paths, the index used for its tree' '
	(cd repo && ci-index --no-progress build 2>/dev/null) &&
	(cd other && ci-index --no-progress build 2>/dev/null) &&
	for a in "" "--hidden" "-u" "--include-vendored"; do
		(cd repo && ours -c $a foo >../a && ours -c --no-index $a foo >../b) &&
		test_cmp b a || { echo "index differs: $a"; return 1; }
	done &&
	(cd repo && ci-grep --stats -c foo 2>../err >/dev/null) &&
	test_grep "^ci-grep: index: " err &&
	(cd repo/src && ci-grep --stats --no-json foo 2>../../err >../../a) &&
	test_grep "^ci-grep: index: " err &&
	(cd repo/src && theirs foo) >expect &&
	test_cmp expect a &&
	(cd repo && ci-grep --stats --no-json foo ../other 2>../err >../a) &&
	test_grep "^ci-grep: index: " err &&
	echo "../other/o.txt:1:6:root foo of other" >expect &&
	test_cmp expect a
'

test_expect_success 'an index reports no file a .ignore added since leaves out' '
	printf "readme.md\n" >repo/docs/.ignore &&
	(cd repo && ours -l foo >../a && ours -l --no-index foo >../b) &&
	test_cmp b a &&
	! grep readme.md a &&
	rm repo/docs/.ignore
'

test_expect_success '-r: matches replaced as rg, groups by number and name' '
	printf "a foo b\nfoo foo\nbc\n" >r.txt &&
	for r in "X" "[\$0]" "<\$1>" "\${1}a\$\$" "\$1a" "<\${w}>" "\$9" "\$"; do
		theirs -r "$r" "(?P<w>f)(o)o|c" r.txt >expect &&
		ours -r "$r" "(?P<w>f)(o)o|c" r.txt >out &&
		test_cmp expect out || { echo "differs: -r $r"; return 1; }
	done &&
	# (rg 13 counts the columns of -o -r in the replaced line: they are left out)
	rg --no-heading -n --with-filename -o -r "<\$0>" "o+" r.txt >expect &&
	ours -o -r "<\$0>" "o+" r.txt | sed "s/^\([^:]*:[0-9]*\):[0-9]*:/\1:/" >out &&
	test_cmp expect out &&
	theirs -r "-" "x*" r.txt >expect &&
	ours -r "-" "x*" r.txt >out &&
	test_cmp expect out &&
	theirs -F -r "(\$0)" "foo" r.txt >expect &&
	ours -F -r "(\$0)" "foo" r.txt >out &&
	test_cmp expect out &&
	ci-grep -r "F" "f" r.txt >out &&
	echo "{\"_type\":\"match\",\"path\":\"r.txt\",\"line\":1,\"col\":3,\"text\":\"a Foo b\"}" >expect &&
	head -n 1 out >first &&
	test_cmp expect first
'

test_expect_success '--color: rg escapes with always, none with never or in records' '
	for a in "foo" "-C 1 foo" "-c foo" "-l foo" "-o o+" "-r X foo"; do
		theirs --color=always $a r.txt >expect &&
		ours --color=always $a r.txt >out &&
		test_cmp expect out || { echo "differs: --color=always $a"; return 1; }
	done &&
	grep -q "$(printf "\\033")" out &&
	ours --color=never foo r.txt >out &&
	ours foo r.txt >expect &&
	test_cmp expect out &&
	ours --colour=always foo r.txt | sed "s/$(printf "\\033")\\[[0-9;]*m//g" >out &&
	test_cmp expect out &&
	ci-grep --json --color=always foo r.txt >out &&
	! grep -q "$(printf "\\033")" out &&
	test_status 2 ci-grep --color=sometimes foo r.txt 2>err &&
	test_grep "color: .sometimes. is not never, auto or always" err
'

test_expect_success '-s overrides -i and -S, the last one wins (rg)' '
	for a in "-i -s" "-s -i" "-S -s" "-s -S" "-i -S" "-S -i"; do
		theirs -c $a Foo r.txt >expect; echo $? >>expect
		ours -c $a Foo r.txt >out; echo $? >>out
		test_cmp expect out || { echo "differs: $a"; return 1; }
	done &&
	theirs -c -S foo r.txt >expect &&
	ours -c -S -s foo r.txt >out &&
	test_cmp expect out
'

test_expect_success 'an ignore file that cannot be read: a warning naming it, the search goes on' '
	git init -q loopy &&
	printf "needle\n" >loopy/a.txt &&
	ln -s .ignore loopy/.ignore &&
	(cd loopy && ci-grep --no-json -l needle) >out 2>err &&
	test_grep "cannot read .*\.ignore" err &&
	test "$(cat out)" = a.txt
'

test_done
