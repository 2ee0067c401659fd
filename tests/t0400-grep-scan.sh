#!/bin/sh
# t0400-grep-scan: ci-grep without an index: output formats and options against
# golden outputs, exit codes and messages, the files it reads and skips, content
# that is bad or odd (CRLF, invalid UTF-8, no final newline, a binary file), a
# pattern that backtracks without end, SIGPIPE and a full disk.

. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository' '
	mkdir -p repo/src repo/lib repo/build repo/docs repo/tools && cd repo && git init -q &&
	printf "build/\n" >.gitignore &&
	printf "int foo(void);\nint food = 1;\n/* nothing */\nstatic int Foo;\nint x = foo();\n" >src/a.c &&
	printf "#include \"a.h\"\nvoid bar(void)\n{\n\tfoo();\n}\n" >src/b.c &&
	printf "def foo():\n    return FOO_SUSPEND\n" >lib/m.py &&
	printf "#!/usr/bin/env python3\nprint(\"foo\")\n" >tools/run &&
	printf "one foo\r\ntwo\r\nthree foo\r\n" >docs/crlf.txt &&
	printf "caf\351 foo\nplain\n\377\376 bar\n" >docs/latin1.txt &&
	printf "first\nlast foo" >docs/nonl.txt &&
	printf "foo\000binary\n" >docs/blob.dat &&
	printf "int foo_ignored;\n" >build/gen.c &&
	printf "p->text[p->pos] = a.b;\n" >src/odd.h
'

test_expect_success 'libgit2 is loaded where a repository may be, not elsewhere' '
	mkdir -p plain/sub &&
	printf "foo\n" >plain/sub/a.txt &&
	(cd plain && LD_DEBUG=libs ci-grep --no-json -l foo >../out 2>../err) &&
	echo sub/a.txt >expect &&
	test_cmp expect out &&
	! grep libgit2 err &&
	(cd repo && LD_DEBUG=libs ci-grep -l foo_ignored >../out 2>../err; test $? = 1) &&
	test_must_be_empty out &&
	grep libgit2 err >/dev/null
'

test_expect_success 'a literal, for people' '
	cat >expect <<-\EOF &&
	docs/crlf.txt:1:5:one foo
	docs/crlf.txt:3:7:three foo
	docs/latin1.txt:1:6:caf'"$(printf '\351')"' foo
	docs/nonl.txt:2:6:last foo
	lib/m.py:1:5:def foo():
	src/a.c:1:5:int foo(void);
	src/a.c:2:5:int food = 1;
	src/a.c:5:9:int x = foo();
	src/b.c:4:2:	foo();
	tools/run:2:8:print("foo")
	EOF
	(cd repo && ci-grep --no-json foo) >out &&
	test_cmp expect out
'

test_expect_success 'several -e: a line matching any of them, as rg does' '
	(cd repo && ci-grep --no-json -e "int food" -e "print\(") >out &&
	cat >expect <<-\EOF &&
	src/a.c:2:1:int food = 1;
	tools/run:2:1:print("foo")
	EOF
	test_cmp expect out &&
	(cd repo && ci-grep --no-json -F -e "print(" -e "x = foo()") >out &&
	cat >expect <<-\EOF &&
	src/a.c:5:5:int x = foo();
	tools/run:2:1:print("foo")
	EOF
	test_cmp expect out
'

test_expect_success 'the same as records, by default into a pipe' '
	cat >expect <<-\EOF &&
	{"_type":"match","path":"docs/crlf.txt","line":1,"col":5,"text":"one foo"}
	{"_type":"match","path":"docs/crlf.txt","line":3,"col":7,"text":"three foo"}
	{"_type":"match","path":"docs/latin1.txt","line":1,"col":6,"text":"caf\ufffd foo"}
	{"_type":"match","path":"docs/nonl.txt","line":2,"col":6,"text":"last foo"}
	{"_type":"match","path":"lib/m.py","line":1,"col":5,"text":"def foo():"}
	{"_type":"match","path":"src/a.c","line":1,"col":5,"text":"int foo(void);"}
	{"_type":"match","path":"src/a.c","line":2,"col":5,"text":"int food = 1;"}
	{"_type":"match","path":"src/a.c","line":5,"col":9,"text":"int x = foo();"}
	{"_type":"match","path":"src/b.c","line":4,"col":2,"text":"\tfoo();"}
	{"_type":"match","path":"tools/run","line":2,"col":8,"text":"print(\"foo\")"}
	EOF
	(cd repo && ci-grep foo) >out &&
	test_cmp_json expect out &&
	(cd repo && ci-grep --json foo) >out2 &&
	test_cmp out out2
'

test_expect_success 'below the root: the current directory is searched, paths relative to it (rg)' '
	(cd repo/src && ci-grep --no-json -l foo) >out &&
	(cd repo/src && rg -l --sort path foo) >expect &&
	test_cmp expect out &&
	test_line_count -gt 0 out &&
	(cd repo/src && ls $(ci-grep --no-json -l foo)) >listed &&
	test_cmp out listed &&
	(cd repo/src && ci-grep -l foo) >out &&
	sed "s/^/{\"_type\":\"match_file\",\"path\":\"/; s/\$/\"}/" expect >expect.json &&
	test_cmp expect.json out
'

test_expect_success '-c and -l, for people and as records' '
	cat >expect <<-\EOF &&
	src/a.c:3
	src/b.c:1
	EOF
	(cd repo && ci-grep --no-json -c foo src) >out &&
	test_cmp expect out &&
	cat >expect <<-\EOF &&
	{"_type":"count","path":"src/a.c","count":3}
	{"_type":"count","path":"src/b.c","count":1}
	EOF
	(cd repo && ci-grep -c foo src) >out &&
	test_cmp expect out &&
	printf "src/a.c\nsrc/b.c\n" >expect &&
	(cd repo && ci-grep --no-json -l foo src) >out &&
	test_cmp expect out &&
	cat >expect <<-\EOF &&
	{"_type":"match_file","path":"src/a.c"}
	{"_type":"match_file","path":"src/b.c"}
	EOF
	(cd repo && ci-grep -l foo src) >out &&
	test_cmp expect out
'

test_expect_success '-i, -w, -F, a regex' '
	cat >expect <<-\EOF &&
	src/a.c:1:5:int foo(void);
	src/a.c:4:12:static int Foo;
	src/a.c:5:9:int x = foo();
	EOF
	(cd repo && ci-grep --no-json -i -w foo src/a.c) >out &&
	test_cmp expect out &&
	printf "src/odd.h:1:1:p->text[p->pos] = a.b;\n" >expect &&
	(cd repo && ci-grep --no-json -F "p->text[p->pos]") >out &&
	test_cmp expect out &&
	(cd repo && ci-grep --no-json -F -i "P->TEXT[") >out &&
	test_cmp expect out &&
	(cd repo && test_status 1 ci-grep --no-json -F "a*b") &&
	printf "lib/m.py:2:12:    return FOO_SUSPEND\n" >expect &&
	(cd repo && ci-grep --no-json -w "[A-Z]+_SUSPEND") >out &&
	test_cmp expect out &&
	printf "src/a.c:2:5:int food = 1;\n" >expect &&
	(cd repo && ci-grep --no-json "fo+d\\s*=") >out &&
	test_cmp expect out
'

test_expect_success '-i: every mix of cases, the Kelvin sign for k and the long s for s, as PCRE2 matches' '
	git init -q fold &&
	printf "MUTEX_LOCK here\nmutex_loc\342\204\252 kelvin\npm_\305\277u\305\277pend long s\nPm_SuSpEnD mixed\nnothing\nmutex_lock(&x)\nMuTeX_LoCk\nmutex lock\n" >fold/f.c &&
	for q in mutex_lock "MUTEX_LOC." "mutex_lo(c|x)k" "(?i)mutex_lock" "x_loc"; do
		(cd fold && ci-grep --no-index --no-json -i -e "$q" f.c) | cut -d: -f1,2 >out &&
		printf "f.c:%s\n" 1 2 6 7 >expect &&
		test_cmp expect out || return 1
	done &&
	for q in pm_suspend "PM_SU(s|x)PEND" "m_suspen."; do
		(cd fold && ci-grep --no-index --no-json -i -e "$q" f.c) | cut -d: -f1,2 >out &&
		printf "f.c:%s\n" 3 4 >expect &&
		test_cmp expect out || return 1
	done &&
	(cd fold && ci-grep --no-index --no-json -n -i mutex_lock f.c) >out.n &&
	(cd fold && ci-grep --no-index --no-json -i mutex_lock f.c) >out &&
	test_cmp out out.n &&
	(cd fold && ci-grep --no-index -c --stats -i mutex_lock f.c 2>../err) &&
	test_grep "prefilter search for .mutex_loc." err &&
	(cd fold && ci-grep --no-index -c --stats -i -F "MUTEX_LOCK(&" f.c 2>../err) >out &&
	test_grep "prefilter search for .mutex_loc." err &&
	test_grep "\"count\":1" out &&
	if test_have_prog rg; then
		for q in mutex_lock pm_suspend "lock|spend" "u.+x" "MUTEX LOCK" "x_LOC." "u[s]pend"; do
			(cd fold && ci-grep --no-index --no-json -i -e "$q" f.c) | cut -d: -f1,2 >out &&
			(cd fold && rg -n -i -e "$q" f.c | sed "s/^/f.c:/" | cut -d: -f1,2) >expect &&
			test_cmp expect out || return 1
		done
	fi
'

test_expect_success '\w, \d and \b are Unicode, as rg has them' '
	git init -q uni &&
	printf "na\303\257ve = 1\nnaive = 2\nx\331\243 = 3\ncaf\303\251s\n" >uni/u.py &&
	(cd uni && ci-grep --no-index --no-json -e "na\\w+ve" u.py) | cut -d: -f1,2 >out &&
	printf "u.py:%s\n" 1 2 >expect &&
	test_cmp expect out &&
	(cd uni && ci-grep --no-index --no-json -e "x\\d" u.py) | cut -d: -f1,2 >out &&
	echo u.py:3 >expect &&
	test_cmp expect out &&
	(cd uni && test_status 1 ci-grep --no-index --no-json -e "caf\\b" u.py) &&
	if test_have_prog rg; then
		for q in "na\\w+ve" "x\\d" "\\bcaf\\w+" "\\w\\W\\d"; do
			(cd uni && ci-grep --no-index --no-json -e "$q" u.py) | cut -d: -f1,2 >out &&
			(cd uni && rg -n -e "$q" u.py | sed "s/^/u.py:/" | cut -d: -f1,2) >expect &&
			test_cmp expect out || return 1
		done
	fi
'

test_expect_success '-w: a word character is one as rg has it (a mark after A makes no word A)' '
	# A+U+030A (an A with a ring), U+030A+A, A², A+ZWJ, A½, A, A+U+0663 (a
	# digit), A+U+20DD (an enclosing mark)
	printf "A\314\212 x\n\314\212A y\nA\302\262\nA\342\200\215\nA\302\275\nA x\nA\331\243\nA\342\203\235\n" >uni/w.txt &&
	(cd uni && ci-grep --no-index --no-json -w A w.txt) | cut -d: -f1,2 >out &&
	printf "w.txt:%s\n" 3 5 6 >expect &&
	test_cmp expect out &&
	(cd uni && ci-grep --no-index --no-json -w -F A w.txt) | cut -d: -f1,2 >out &&
	test_cmp expect out &&
	(cd uni && ci-grep --no-index --no-json -w -i a w.txt) | cut -d: -f1,2 >out &&
	test_cmp expect out &&
	if test_have_prog rg; then
		(cd uni && rg -n -w A w.txt | sed "s/^/w.txt:/" | cut -d: -f1,2) >expect &&
		test_cmp expect out
	fi
'

test_expect_success 'context lines, for people' '
	cat >expect <<-\EOF &&
	src/a.c:1:5:int foo(void);
	src/a.c:2:5:int food = 1;
	src/a.c-3-/* nothing */
	--
	src/b.c-3-{
	src/b.c:4:2:	foo();
	src/b.c-5-}
	EOF
	(cd repo && ci-grep --no-json -A 1 -B 1 -m 2 foo src/a.c src/b.c) >out &&
	test_cmp expect out &&
	cat >expect <<-\EOF &&
	src/a.c:1:5:int foo(void);
	src/a.c:2:5:int food = 1;
	src/a.c-3-/* nothing */
	src/a.c-4-static int Foo;
	src/a.c:5:9:int x = foo();
	EOF
	(cd repo && ci-grep --no-json -C 2 "foo\\b|food" src/a.c) >out &&
	test_cmp expect out
'

test_expect_success 'context lines as records' '
	cat >expect <<-\EOF &&
	{"_type":"match","path":"src/a.c","line":1,"col":5,"text":"int foo(void);","before":[],"after":["int food = 1;","/* nothing */"]}
	{"_type":"match","path":"src/a.c","line":2,"col":5,"text":"int food = 1;","before":["int foo(void);"],"after":["/* nothing */","static int Foo;"]}
	{"_type":"match","path":"src/a.c","line":5,"col":9,"text":"int x = foo();","before":["static int Foo;"],"after":[]}
	{"_type":"match","path":"docs/nonl.txt","line":2,"col":6,"text":"last foo","before":["first"],"after":[]}
	EOF
	(cd repo && ci-grep -B 1 -A 2 foo src/a.c docs/nonl.txt) >out &&
	sort expect >expect.sorted && sort out >out.sorted &&
	test_cmp expect.sorted out.sorted
'

test_expect_success '--max-count stops each file' '
	printf "src/a.c:1:5:int foo(void);\nsrc/b.c:4:2:\tfoo();\n" >expect &&
	(cd repo && ci-grep --no-json -m 1 foo src) >out &&
	test_cmp expect out &&
	(cd repo && ci-grep --no-json -c -m 2 foo src/a.c) >out &&
	echo "src/a.c:2" >expect &&
	test_cmp expect out
'

test_expect_success '-g includes and excludes, by name and by path' '
	printf "src/a.c\nsrc/b.c\n" >expect &&
	(cd repo && ci-grep --no-json -l -g "*.c" foo) >out &&
	test_cmp expect out &&
	printf "lib/m.py\ntools/run\n" >expect &&
	(cd repo && ci-grep --no-json -l -g "!src" -g "!docs" foo) >out &&
	test_cmp expect out &&
	printf "src/b.c\n" >expect &&
	(cd repo && ci-grep --no-json -l -g "src/**/b.*" foo) >out &&
	test_cmp expect out &&
	printf "docs/crlf.txt\ndocs/latin1.txt\n" >expect &&
	(cd repo && ci-grep --no-json -l -g "docs/*" -g "!nonl*" foo) >out &&
	test_cmp expect out
'

test_expect_success '-t by name and by #! line' '
	printf "lib/m.py\ntools/run\n" >expect &&
	(cd repo && ci-grep --no-json -l -t python foo) >out &&
	test_cmp expect out &&
	printf "lib/m.py\nsrc/a.c\nsrc/b.c\ntools/run\n" >expect &&
	(cd repo && ci-grep --no-json -l -t python -t c foo) >out &&
	test_cmp expect out
'

test_expect_success 'ignored and binary files are left out; a file named is read' '
	(cd repo && ci-grep --no-json -l foo) >out &&
	! grep build/ out &&
	! grep blob.dat out &&
	printf "build/gen.c:1:5:int foo_ignored;\n" >expect &&
	(cd repo && ci-grep --no-json foo build/gen.c) >out &&
	test_cmp expect out &&
	(cd repo && test_status 1 ci-grep zzz_none docs/blob.dat >../out 2>../err) &&
	test_must_be_empty out &&
	test_must_be_empty err
'

test_expect_success 'a binary file named that matches: rg'\''s message for people, records as they are' '
	mkdir bin &&
	printf "x\000foo\n" >bin/b1.dat &&
	printf "foo\n\000x\nfoo\n" >bin/b2.dat &&
	printf "bar\000foo\n" >bin/b3.dat &&
	printf "foo\n" >bin/t.txt &&
	(cd bin && ci-grep --no-json foo b1.dat b2.dat b3.dat t.txt >../out) &&
	cat >expect <<-\EOF &&
	b1.dat: binary file matches (found "\0" byte around offset 1)
	b2.dat: binary file matches (found "\0" byte around offset 4)
	b3.dat: binary file matches (found "\0" byte around offset 3)
	t.txt:1:1:foo
	EOF
	test_cmp expect out &&
	(cd bin && rg --no-heading -n --column --sort path foo b1.dat b2.dat b3.dat t.txt >../expect) &&
	test_cmp expect out &&
	(cd bin && test_status 1 ci-grep --no-json zzz b1.dat >../out) &&
	test_must_be_empty out &&
	(cd bin && ci-grep --no-json -c foo b2.dat && ci-grep --no-json -l foo b1.dat) >out &&
	printf "b2.dat:2\nb1.dat\n" >expect &&
	test_cmp expect out &&
	(cd bin && ci-grep foo b1.dat) >out &&
	echo "{\"_type\":\"match\",\"path\":\"b1.dat\",\"line\":1,\"col\":3,\"text\":\"x\\u0000foo\"}" >expect &&
	test_cmp expect out &&
	(cd repo && ci-grep --no-json foo docs/blob.dat) >out &&
	echo "docs/blob.dat: binary file matches (found \"\\0\" byte around offset 3)" >expect &&
	test_cmp expect out
'

test_expect_success '-a searches binary files as text, named or not, as rg -a' '
	(cd bin && ci-grep --no-json -a foo b1.dat b2.dat b3.dat t.txt >../out) &&
	(cd bin && rg --no-heading -n --column --sort path -a foo b1.dat b2.dat b3.dat t.txt >../expect) &&
	test_cmp expect out &&
	test_grep "^b2.dat:3:1:foo\$" out &&
	(cd repo && ci-grep --no-json -l -a foo) >out &&
	test_grep "^docs/blob.dat\$" out &&
	(cd repo && ci-grep --no-json -a --files docs) >out &&
	test_grep "^docs/blob.dat\$" out &&
	(cd repo && ci-grep --no-json -l foo) >out &&
	! grep blob.dat out
'

test_expect_success 'CRLF: the text has no carriage return; invalid UTF-8 is searched' '
	(cd repo && ci-grep "three" docs/crlf.txt) >out &&
	"$JQ" -r .text out >text &&
	echo "three foo" >expect &&
	test_cmp expect text &&
	(cd repo && ci-grep --no-json -c "bar" docs/latin1.txt) >out &&
	echo "docs/latin1.txt:1" >expect &&
	test_cmp expect out &&
	(cd repo && ci-grep --no-json -c -i "FOO\$|BAR\$" docs/latin1.txt) >out &&
	echo "docs/latin1.txt:2" >expect &&
	test_cmp expect out &&
	(cd repo && test_status 1 ci-grep "caf. foo|^.+bar" docs/latin1.txt)
'

test_expect_success 'a match never spans lines' '
	(cd repo && test_status 1 ci-grep "int foo\\(void\\);\\s+int") &&
	(cd repo && ci-grep --no-json -c "food[^x]*" src/a.c) >out &&
	echo "src/a.c:1" >expect &&
	test_cmp expect out &&
	(cd repo && ci-grep --no-json -c "1;\\s*\$" src/a.c) >out &&
	test_cmp expect out
'

test_expect_success 'a newline, however written, matches no line' '
	# src/a.c: "int foo(void);" then "int food = 1;": each pattern would match
	# across that line end, and the first ones are plain literals
	for p in ";\\nint" "\\n" "\\x0a" "\\012" "\\x{a}" "\\o{12}" "[\\n]" "\\Q);\\E\\n" ";(?:\\n)int" \
		 "\\n+" ";\\n\\w+" ";[\\s\\S]int" ";\\Rint" ";\\vint" ";\\sint" ";[^a]int" "(?s);.int" \
		 ";\\s*int food" "void\\W+int" "(?i);\\nINT"; do
		(cd repo && ci-grep --no-json -c "$p" src/a.c >../out; echo $? >../status) &&
		echo 1 >expect &&
		test_cmp expect status &&
		test_must_be_empty out || { echo "pattern $p matched"; return 1; }
	done &&
	(cd repo && test_status 1 ci-grep -i -c ";\\nINT" src/a.c) &&
	(cd repo && test_status 1 ci-grep -w -c ";\\nint" src/a.c) &&
	(cd repo && test_status 1 ci-grep -c "\\n" src/a.c) &&
	# a lookbehind still sees the line before, as documented
	printf "src/a.c:2:1:int food = 1;\nsrc/a.c:5:1:int x = foo();\n" >expect &&
	(cd repo && ci-grep --no-json "(?<=;\\n)int" src/a.c) >out &&
	test_cmp expect out
'

test_expect_success 'anchors and lookarounds see the line' '
	printf "src/a.c:1:1:int foo(void);\nsrc/a.c:2:1:int food = 1;\nsrc/a.c:5:1:int x = foo();\n" >expect &&
	(cd repo && ci-grep --no-json "^int" src/a.c) >out &&
	test_cmp expect out &&
	printf "src/a.c:1:14:int foo(void);\nsrc/a.c:2:13:int food = 1;\nsrc/a.c:4:15:static int Foo;\nsrc/a.c:5:14:int x = foo();\n" >expect &&
	(cd repo && ci-grep --no-json ";(?!\\s)" src/a.c) >out &&
	test_cmp expect out &&
	printf "src/a.c:4:12:static int Foo;\n" >expect &&
	(cd repo && ci-grep --no-json "(?<=int )Foo;\\z" src/a.c) >out &&
	test_cmp expect out
'

# ---- rg's options: the same lines as rg, given the same files ----

# ours <args>: ci-grep's lines; theirs <args>: rg's, with the column of the first
# match as ci-grep writes it, in path order
ours() { ci-grep --no-json "$@"; }
theirs() { rg --no-heading -n --column --sort path "$@"; }
# nocol: path:line:text, without ci-grep's column (rg -v writes none)
nocol() { sed "s/^\([^:]*:[0-9]*\):[0-9]*:/\1:/"; }

test_expect_success 'setup: files to compare with rg' '
	mkdir rgc && (cd rgc && git init -q) &&
	printf "ign.txt\n" >rgc/.gitignore &&
	printf "foo\nbar\nFoo bar\n\nfoofoo x foo\n" >rgc/a.txt &&
	printf "def foo():\n    pass\n" >rgc/b.py &&
	printf "echo FOO\n" >rgc/c.sh &&
	printf "nothing here\nlast line no newline" >rgc/d.txt &&
	printf "# title\n" >rgc/e.md &&
	printf "foo\n" >rgc/ign.txt &&
	mkdir rgc/sub && printf "int foo;\nconst f = () => 1;\n" >rgc/sub/f.c &&
	printf "let x = 1;\n" >rgc/sub/g.ts &&
	printf "rgc_files=\"a.txt b.py c.sh d.txt e.md sub/f.c sub/g.ts\"\n" >rgc.sh
'

test_expect_success '-v: the lines without a match, as rg -v (column 1)' '
	. ./rgc.sh &&
	for args in "foo" "-i foo" "-x foo" "-w foo" "-F ." "zzz" "^" "-m 1 o"; do
		(cd rgc && ours -v $args $rgc_files >../raw; echo $? >../rc) &&
		nocol <raw >out &&
		(cd rgc && theirs -v $args $rgc_files >../expect; echo $? >../rc-rg) &&
		test_cmp expect out && test_cmp rc-rg rc || { echo "differs: -v $args"; return 1; }
	done &&
	(cd rgc && ours -v foo a.txt) >out &&
	printf "a.txt:2:1:bar\na.txt:3:1:Foo bar\na.txt:4:1:\n" >expect &&
	test_cmp expect out &&
	(cd rgc && ci-grep -c -v foo a.txt d.txt) >out &&
	printf "%s\n" "{\"_type\":\"count\",\"path\":\"a.txt\",\"count\":3}" \
		"{\"_type\":\"count\",\"path\":\"d.txt\",\"count\":2}" >expect &&
	test_cmp expect out &&
	(cd rgc && test_status 1 ci-grep -v "" a.txt)
'

test_expect_success '-v with context, for people, as rg' '
	(cd rgc && ours -v -C 1 "foo|bar" a.txt d.txt | sed "s/^\([^:]*:[0-9]*\):[0-9]*:/\1:/" >../out) &&
	(cd rgc && rg --no-heading -n --sort path -v -C 1 "foo|bar" a.txt d.txt >../expect) &&
	test_cmp expect out
'

test_expect_success '-o: each match with its column, as rg -o --column' '
	. ./rgc.sh &&
	for args in "foo" "-i fo+" "-w foo" "o|x" "-F ()" "\\w+" "zzz"; do
		(cd rgc && ours -o $args $rgc_files >../out; echo $? >../rc) &&
		(cd rgc && theirs -o $args $rgc_files >../expect; echo $? >../rc-rg) &&
		test_cmp expect out && test_cmp rc-rg rc || { echo "differs: -o $args"; return 1; }
	done &&
	(cd rgc && ci-grep -o "fo+" a.txt) >out &&
	cat >expect <<-\EOF &&
	{"_type":"match","path":"a.txt","line":1,"col":1,"text":"foo"}
	{"_type":"match","path":"a.txt","line":5,"col":1,"text":"foo"}
	{"_type":"match","path":"a.txt","line":5,"col":4,"text":"foo"}
	{"_type":"match","path":"a.txt","line":5,"col":10,"text":"foo"}
	EOF
	test_cmp expect out &&
	# with context, the context lines and the matches of each line (rg)
	(cd rgc && ours -o -C 2 x a.txt) >out &&
	(cd rgc && theirs --with-filename -o -C 2 x a.txt) >expect &&
	test_cmp expect out &&
	(cd rgc && ours -o -A 1 "fo+" a.txt d.txt) >out &&
	(cd rgc && theirs -o -A 1 "fo+" a.txt d.txt) >expect &&
	test_cmp expect out &&
	# empty matches are not written (rg writes them, grep -o does not)
	(cd rgc && ours -o "o*" a.txt) >out &&
	printf "a.txt:1:2:oo\na.txt:3:2:oo\na.txt:5:2:oo\na.txt:5:5:oo\na.txt:5:11:oo\n" >expect &&
	test_cmp expect out
'

test_expect_success '-x and -S, as rg' '
	. ./rgc.sh &&
	for args in "-x foo" "-x -i foo" "-x -F foo" "-x \"foo|bar\"" "-x" "-x -w foo" "-w -x foo" \
		"-S foo" "-S Foo" "-S \\\\Sfoo" "-S -F FOO" "-S -e foo -e X"; do
		case $args in "-x") args="-x -e \"\"" ;; esac
		(cd rgc && eval "ours $args $rgc_files" >../out; echo $? >../rc) &&
		(cd rgc && eval "theirs $args $rgc_files" >../expect; echo $? >../rc-rg) &&
		test_cmp expect out && test_cmp rc-rg rc || { echo "differs: $args"; return 1; }
	done &&
	(cd rgc && ours -x -i "foo bar" a.txt) >out &&
	echo "a.txt:3:1:Foo bar" >expect &&
	test_cmp expect out &&
	# a CRLF line is whole without its \r, as its text is written
	(cd repo && ours -x -e two -e "one f.." docs/crlf.txt) >out &&
	printf "docs/crlf.txt:1:1:one foo\ndocs/crlf.txt:2:1:two\n" >expect &&
	test_cmp expect out
'

test_expect_success '-L: the files without a match, as rg --files-without-match; records as -l' '
	. ./rgc.sh &&
	(cd rgc && ours -L foo $rgc_files >../out; echo $? >../rc) &&
	(cd rgc && rg --sort path --files-without-match foo $rgc_files >../expect) &&
	test_cmp expect out &&
	echo 0 >expect && test_cmp expect rc &&
	printf "c.sh\nd.txt\ne.md\nsub/g.ts\n" >expect &&
	(cd rgc && ours -L -w foo) >out &&
	test_cmp expect out &&
	(cd rgc && rg --sort path --files-without-match -w foo) >expect &&
	test_cmp expect out &&
	(cd rgc && ci-grep -L -w foo) >out &&
	cat >expect <<-\EOF &&
	{"_type":"match_file","path":"c.sh"}
	{"_type":"match_file","path":"d.txt"}
	{"_type":"match_file","path":"e.md"}
	{"_type":"match_file","path":"sub/g.ts"}
	EOF
	test_cmp expect out &&
	(cd rgc && test_status 1 ci-grep -L . a.txt b.py >../out) &&
	test_must_be_empty out
'

test_expect_success '--files: the files a search reads, as rg --files; records as -l' '
	(cd rgc && ours --files >../out) &&
	(cd rgc && rg --files --sort path >../expect) &&
	test_cmp expect out &&
	(cd rgc && ours --files --hidden >../out) &&
	(cd rgc && rg --files --hidden -g "!.git" --sort path >../expect) &&
	test_cmp expect out &&
	! grep ign.txt out &&
	(cd rgc && ours --files sub b.py) >out &&
	printf "b.py\nsub/f.c\nsub/g.ts\n" >expect &&
	test_cmp expect out &&
	(cd rgc && ci-grep --files -t c) >out &&
	echo "{\"_type\":\"match_file\",\"path\":\"sub/f.c\"}" >expect &&
	test_cmp expect out &&
	(cd repo && ours --files docs) >out &&
	! grep blob.dat out &&
	test_grep "^docs/crlf.txt\$" out &&
	(cd rgc && test_status 2 ci-grep --files -e foo 2>../err) &&
	test_grep "takes no pattern" err
'

test_expect_success '-q: nothing written, exit 0 at a match (even beside an error), 1 without' '
	(cd rgc && ci-grep -q foo >../out 2>../err) &&
	test_must_be_empty out &&
	test_must_be_empty err &&
	(cd rgc && test_status 1 ci-grep -q zzz_none >../out) &&
	test_must_be_empty out &&
	(cd rgc && ci-grep -q -c foo a.txt no-such-file >../out 2>../err) &&
	test_must_be_empty out &&
	(cd rgc && rg -q foo a.txt no-such-file 2>/dev/null) &&
	(cd rgc && ci-grep -q -L foo d.txt) &&
	(cd rgc && test_status 1 ci-grep -q -L foo a.txt)
'

test_expect_success '-t takes rg'\''s type names; --type-list lists every name' '
	(cd rgc && ours -l -t py -t ts -t sh "[a-z]") >out &&
	printf "b.py\nc.sh\nsub/g.ts\n" >expect &&
	test_cmp expect out &&
	(cd rgc && rg --sort path -l -t py -t ts -t sh "[a-z]") >expect &&
	test_cmp expect out &&
	ci-grep --type-list >list &&
	test_grep "^py: python\$" list &&
	test_grep "^ts: typescript, tsx\$" list &&
	test_grep "^c: c\$" list &&
	sort -c list &&
	for t in $(cut -d: -f1 list); do
		(cd rgc && ci-grep -l -t "$t" zzz_none; test $? = 1) || { echo "-t $t"; return 1; }
	done &&
	(cd rgc && test_status 2 ci-grep -l -L foo 2>../err) &&
	test_grep "cannot be used together" err
'

test_expect_success 'the output does not depend on -j' '
	(cd repo && ci-grep -j 1 -C 1 o) >one &&
	(cd repo && ci-grep -j 4 -C 1 o) >four &&
	test_cmp one four
'

test_expect_success '-e for a pattern starting with a dash' '
	printf "x\n-v here\n" >repo/dash.txt &&
	printf "dash.txt:2:1:-v here\n" >expect &&
	(cd repo && ci-grep --no-json -e -v) >out &&
	test_cmp expect out
'

test_expect_code 1 'nothing matched: exit 1' '
	cd repo && ci-grep no-such-thing-anywhere
'

test_expect_success 'an invalid pattern: exit 2, the reason, the offset, a hint' '
	(cd repo && test_status 2 ci-grep "foo(bar" >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "^ci-grep: invalid pattern .foo(bar.: missing closing parenthesis at offset 7 (use -F for a literal string)" err &&
	(cd repo && ci-grep --no-json -F "foo(" src/a.c) >out &&
	test_line_count = 2 out
'

test_expect_success 'usage errors: exit 2' '
	test_status 2 ci-grep 2>err &&
	test_grep "no pattern" err &&
	(cd repo && test_status 2 ci-grep -t klingon foo 2>../err) &&
	test_grep "unknown language .klingon." err &&
	(cd repo && test_status 2 ci-grep -l -c foo 2>../err) &&
	test_grep "cannot be used together" err &&
	(cd repo && test_status 2 ci-grep -C -1 foo 2>../err) &&
	test_grep "context" err
'

test_expect_success 'a path that does not exist: exit 2, as rg' '
	(cd repo && test_status 2 ci-grep foo no/such/dir 2>../err) &&
	test_grep "no/such/dir" err &&
	(cd repo && rg foo no/such/dir 2>/dev/null; test $? = 2)
'

test_expect_success 'an error after matches were written: exit 2 all the same, as rg' '
	(cd repo && test_status 2 ci-grep --no-json foo src/b.c no/such/file >../out 2>../err) &&
	printf "src/b.c:4:2:\tfoo();\n" >expect &&
	test_cmp expect out &&
	test_grep "no/such/file" err &&
	(cd repo && rg foo src/b.c no/such/file >/dev/null 2>&1; test $? = 2) &&
	(cd repo && test_status 2 ci-grep -l foo src/b.c no/such/file >out 2>/dev/null) &&
	(cd repo && test_status 2 ci-grep -c zzz_none src/b.c no/such/file >out 2>/dev/null) &&
	(cd repo && test_status 2 ci-grep -L foo src/b.c no/such/file >out 2>/dev/null) &&
	(cd repo && test_status 2 ci-grep --files src/b.c no/such/file >out 2>/dev/null)
'

test_expect_success 'a pattern that backtracks without end ends quickly: a warning and exit 2' '
	awk "BEGIN { s = \"\"; for (i = 0; i < 5000; i++) s = s \"a\"; for (i = 0; i < 20; i++) print s \"b\"; print \"aaa\" }" >repo/long.txt &&
	(cd repo && timeout 60 ci-grep --no-json "(a+)+\$" long.txt >../out 2>../err; echo $? >../status) &&
	echo 2 >expect &&
	test_cmp expect status &&
	echo "long.txt:21:1:aaa" >expect &&
	test_cmp expect out &&
	test_grep "^ci-grep: warning: long.txt: .*match limit.*incomplete" err
'

test_expect_success 'results cut short in one file: exit 2, not 0 or 1, whatever matched elsewhere' '
	printf "int food = 1;\n" >repo/ok.txt &&
	printf "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n" >repo/bad.txt &&
	(cd repo && test_status 2 ci-grep --no-json -l "(a+)+\$|food" ok.txt bad.txt >../out 2>../err) &&
	echo ok.txt >expect &&
	test_cmp expect out &&
	test_grep "^ci-grep: warning: bad.txt: the pattern hit PCRE2.s match limit on some lines; results for this file may be incomplete" err &&
	(cd repo && test_status 2 ci-grep -c "(a+)+\$" bad.txt >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "bad.txt: .*incomplete" err &&
	rm repo/ok.txt repo/bad.txt
'

test_expect_success '$CI_GREP_MATCH_LIMIT and $CI_GREP_FILE_TIME_MS set the bounds' '
	printf "aaaaaaaaaaaaaaaaaaaaaaaaa\nc\n" >repo/fib.txt &&
	(cd repo && test_status 1 ci-grep "(a|aa)+c" fib.txt 2>../err) &&
	test_must_be_empty err &&
	(cd repo && CI_GREP_MATCH_LIMIT=100 test_status 2 ci-grep --no-json "(a|aa)+c|^c" fib.txt >../out 2>../err) &&
	echo "fib.txt:2:1:c" >expect &&
	test_cmp expect out &&
	test_grep "^ci-grep: warning: fib.txt: the pattern hit PCRE2.s match limit" err &&
	(cd repo && CI_GREP_FILE_TIME_MS=0 test_status 2 ci-grep "(a|aa)+c" fib.txt 2>../err) &&
	test_grep "^ci-grep: warning: fib.txt: gave up after 0 s: .*incomplete" err &&
	(cd repo && CI_GREP_MATCH_LIMIT=x test_status 2 ci-grep c fib.txt 2>../err) &&
	test_grep "^ci-grep: \$CI_GREP_MATCH_LIMIT: expected an integer from 1 to" err &&
	(cd repo && CI_GREP_FILE_TIME_MS=-1 test_status 2 ci-grep c fib.txt 2>../err) &&
	test_grep "^ci-grep: \$CI_GREP_FILE_TIME_MS: expected an integer from 0 to" err &&
	rm repo/fib.txt
'

test_expect_success 'one long costly match is bounded too (\\C*? on a line of 300 KB): exit 2' '
	# "á " 98304 times and a pattern that, from each start, looks to the end
	# of the line: minutes in one pcre2_match() call, which the file budget
	# (read between calls) never stopped
	awk "BEGIN { s = \"\\303\\241 \"; for (i = 0; i < 15; i++) s = s s; printf \"%s%s%s\\n\", s, s, s }" >repo/wide.txt &&
	test $(wc -c <repo/wide.txt) = 294913 &&
	one=$(printf "\331\241") &&
	for p in "\\C*?$one" "\\X*?$one"; do
		(cd repo && timeout 120 ci-grep --no-json "$p" wide.txt >../out 2>../err; echo $? >../status) &&
		echo 2 >expect &&
		test_cmp expect status &&
		test_must_be_empty out &&
		test_grep "^ci-grep: warning: wide.txt: .*incomplete" err || return 1
	done &&
	(cd repo && CI_GREP_FILE_TIME_MS=0 test_status 2 ci-grep "\\C*?$one" wide.txt 2>../err) &&
	test_grep "^ci-grep: warning: wide.txt: gave up after 0 s" err &&
	rm repo/wide.txt
'

test_expect_success 'a regex on a long line: every start tried once, on a character' '
	# three-byte characters: a start inside one would let \\C match a piece of it
	awk "BEGIN { s = \"\\342\\202\\254\"; for (i = 0; i < 15; i++) s = s s; print s s \"x needle7\" }" >repo/wide.txt &&
	euro=$(printf "\342\202\254") &&
	(cd repo && test_status 1 ci-grep "\\C$euro" wide.txt) &&
	(cd repo && test_status 1 ci-grep "\\C\\Cx" wide.txt) &&
	(cd repo && ci-grep "needle\\d" wide.txt) >out &&
	"$JQ" -c "[.line, .col]" out >actual &&
	echo "[1,196611]" >expect &&
	test_cmp expect actual &&
	rm repo/wide.txt
'

test_expect_success 'the size limit while the tree is scanned (files listed without their size)' '
	mkdir big && (cd big && git init -q &&
	awk "BEGIN { s = \"\"; for (i = 0; i < 3000; i++) s = s \"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghij\"; for (i = 0; i < 9; i++) print s; print \"needle\" }" >2m.txt &&
	head -c 149990 2m.txt >150k.txt && echo needle >>150k.txt &&
	head -c 89990 2m.txt >90k.txt && echo needle >>90k.txt &&
	head -c 65528 2m.txt >64k.txt && echo needle >>64k.txt &&
	echo needle >small.txt &&
	ci-grep -l needle >../out1 &&
	ci-grep -l --max-filesize 100000 needle >../out2 &&
	ci-grep -l --max-filesize 65535 needle >../out3 &&
	ci-grep -l --max-filesize 0 needle >../out4) &&
	printf "%s\n" 150k.txt 64k.txt 90k.txt small.txt >expect1 &&
	jq -r .path out1 >actual1 && test_cmp expect1 actual1 &&
	printf "%s\n" 64k.txt 90k.txt small.txt >expect2 &&
	jq -r .path out2 >actual2 && test_cmp expect2 actual2 &&
	printf "%s\n" 64k.txt small.txt >expect3 &&
	jq -r .path out3 >actual3 && test_cmp expect3 actual3 &&
	printf "%s\n" 150k.txt 2m.txt 64k.txt 90k.txt small.txt >expect4 &&
	jq -r .path out4 >actual4 && test_cmp expect4 actual4
'

test_expect_success 'a very long line' '
	awk "BEGIN { s = \"x\"; for (i = 0; i < 23; i++) s = s s; print s \"needle\" s }" >repo/huge.txt &&
	(cd repo && ci-grep -c needle --max-filesize 0 huge.txt) >out &&
	echo "{\"_type\":\"count\",\"path\":\"huge.txt\",\"count\":1}" >expect &&
	test_cmp expect out &&
	rm repo/huge.txt
'

test_expect_success 'stdout closed early (| head -1): quiet' '
	awk "BEGIN { for (i = 0; i < 200000; i++) print \"foo\", i }" >repo/many.txt &&
	(cd repo && ci-grep foo 2>../err | head -n 1 >../out) &&
	test_line_count = 1 out &&
	test_must_be_empty err
'

test_expect_success 'a full disk: exit 2 and a message' '
	(cd repo && test_status 2 ci-grep foo >/dev/full 2>../err) &&
	test_grep "^ci-grep: .*write error" err
'

test_expect_success 'CI_FORMAT=text: paths for xargs from -l into a pipe; json and an option win' '
	(cd repo && ci-grep -l foo >../json.out && CI_FORMAT=text ci-grep -l foo >../text.out) &&
	jq -r .path json.out >expect &&
	test_cmp expect text.out &&
	test_line_count -gt 0 text.out &&
	(cd repo && CI_FORMAT=text ci-grep -l --json foo) >out &&
	test_cmp json.out out &&
	(cd repo && CI_FORMAT=json ci-grep -l foo) >out &&
	test_cmp json.out out
'

test_done
