#!/bin/sh
# ci-chunk on hostile input found by fuzzing (issue 22): files that crashed it,
# nesting that crashed libtree-sitter 0.20.7, and scopes whose size grew with the
# square of the nesting.  Each is chunked (by lines where tree-sitter cannot be
# trusted) with a warning, and a repository holding them is still indexed.
. "$(dirname "$0")/lib.sh"

# tiles FILE OUT: the chunks of FILE in OUT cover its lines once each, in order
tiles() {
	lines=$(awk "END { print NR }" "$1") &&
	jq -s -e --argjson n "$lines" '
		[.[] | select(._type == "chunk")] as $c |
		($c | length) > 0 and $c[0].start_line == 1 and $c[-1].end_line == $n and
		([range(1; $c | length)] | all(. as $i | $c[$i].start_line == $c[$i - 1].end_line + 1))
	' "$2" >/dev/null
}

test_expect_success 'setup: hostile files' '
	git init -q repo &&
	printf "class{r(=\"\"){}(){" >repo/min.js &&
	cp repo/min.js repo/min.ts &&
	awk "BEGIN { printf \"void f(){\"; for (i = 0; i < 22000; i++) printf \"if(x){\" }" >repo/deep.c &&
	awk "BEGIN { for (i = 0; i < 22000; i++) print \"if true; then\" }" >repo/deep.sh &&
	awk "BEGIN { for (i = 0; i < 22000; i++) printf \"namespace a{\" }" >repo/deep.cpp &&
	awk "BEGIN { for (i = 0; i < 33000; i++) printf \"f(\" }" >repo/calls.c &&
	awk "BEGIN { for (i = 0; i < 30000; i++) print \"def f\" }" >repo/deep.rb &&
	awk "BEGIN { for (i = 0; i < 70000; i++) printf \"a = \" }" >repo/assign.c &&
	printf "int ok(void)\n{\n\treturn 1;\n}\n" >repo/ok.c
'

test_expect_success 'a 17-byte JavaScript file (a method at top level after error recovery)' '
	(cd repo && ci-chunk min.js >../out 2>../err) &&
	test_must_be_empty err &&
	tiles repo/min.js out
'

test_expect_success 'the same as TypeScript' '
	(cd repo && ci-chunk min.ts >../out 2>../err) &&
	test_must_be_empty err &&
	tiles repo/min.ts out
'

for f in deep.c deep.sh deep.cpp calls.c deep.rb; do
	test_expect_success "$f: too deep for tree-sitter, chunked by lines with a warning" "
		(cd repo && ci-chunk $f >../out 2>../err) &&
		test_grep \"^ci-chunk: warning: $f: nested too deeply for tree-sitter (over 4,096 levels); chunked by lines\\\$\" err &&
		jq -r 'select(._type == \"chunk\") | .kind' out | sort -u >kinds &&
		echo lines >expect && test_cmp expect kinds &&
		tiles repo/$f out
	"
done

test_expect_success 'a tree that libtree-sitter built wrong (its root stops short): by lines' '
	(cd repo && ci-chunk assign.c >../out 2>../err) &&
	test_grep "assign.c: nested too deeply for tree-sitter (over 65,535 constructs left open); chunked by lines" err &&
	tiles repo/assign.c out
'

test_expect_success 'Ruby modifiers and shell words are not counted as nesting' '
	awk "BEGIN { for (i = 0; i < 6000; i++) print \"x = 1 if y\" }" >repo/mods.rb &&
	awk "BEGIN { for (i = 0; i < 6000; i++) print \"echo if for while\" }" >repo/words.sh &&
	(cd repo && ci-chunk mods.rb words.sh >../out 2>../err) &&
	test_must_be_empty err
'

test_expect_success 'scopes keep their innermost names: output linear in the nesting' '
	awk "BEGIN { for (i = 0; i < 200; i++) printf \"namespace n%d { void f%d();\n\", i, i;
		     for (i = 0; i < 200; i++) print \"}\" }" >repo/nest.cpp &&
	(cd repo && ci-chunk --symbols nest.cpp >../out 2>../err) &&
	test_must_be_empty err &&
	jq -r "select(._type == \"def\" and .name == \"f199\") | .scope" out >actual &&
	echo "...n191.n192.n193.n194.n195.n196.n197.n198.n199" >expect &&
	test_cmp expect actual &&
	jq -r "select(._type == \"def\" and .name == \"f6\") | .scope" out >actual &&
	echo "n0.n1.n2.n3.n4.n5.n6" >expect &&
	test_cmp expect actual &&
	test $(wc -c <out) -lt $((60 * $(wc -c <repo/nest.cpp)))
'

test_expect_success 'a repository holding them all is indexed, and the good file with it' '
	(cd repo && ci-index build >../out 2>../err) &&
	test_grep "deep.c: nested too deeply" err &&
	(cd repo && ci-refs defs ok >../defs) &&
	jq -r .path defs >actual &&
	echo ok.c >expect && test_cmp expect actual &&
	(cd repo && ci-grep -l --no-json "if true" >../files) &&
	echo deep.sh >expect && test_cmp expect files
'

test_done
