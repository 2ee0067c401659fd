#!/bin/sh
# t0210-chunk-tiling: what ci-chunk promises about every file, whatever its content.
#
# Checked with jq over (a) the inputs of every golden case, (b) ci's own source
# tree, (c) generated stress inputs (empty, blank, no final newline, CRLF, 50000
# nested parentheses, 5000 functions, a huge class, a 10 MB line):
#   - chunks tile the file: sorted, contiguous, from line 1 to the file's "lines"
#     (no chunk for an empty file);
#   - the chunks' texts joined with newlines are the file (but its final newline);
#   - a chunk's id is "<blob>:<start>-<end>", blob the file's `git hash-object`;
#   - chunks keep within --max-chunk-lines, blank lines and lines of closers
#     attached to them aside (a very few may not: a unit that cannot be cut);
#   - defs and refs point inside their file;
#   - a method's scope names its class, and a definition inside another has the
#     enclosing one in its scope;
#   - output is byte-identical across -j 1, -j 2 and -j 4, and across runs.

. "$(dirname "$0")/lib.sh"

golden=$CI_SRC_DIR/tests/golden/ci-chunk

# ---- the checks, as jq programs -------------------------------------------------

# Per file: tiling, texts, ids, def and ref lines.  Input: ci-chunk's records;
# $orig: [{path, text}] the files' contents; $blob: [{path, blob}] their git ids.
# Prints one line per problem.
cat >"$TEST_TMP/tiling.jq" <<\EOF
($orig | map({key: .path, value: .text}) | from_entries) as $text |
($blob | map({key: .path, value: .blob}) | from_entries) as $id |
reduce inputs as $r ({};
	if $r._type == "file" then .[$r.path].file = $r
	elif $r._type == "chunk" then .[$r.path].chunks += [$r]
	elif $r._type == "def" then .[$r.path].defs += [$r]
	elif $r._type == "ref" then .[$r.path].refs += [$r]
	else . end) |
to_entries[] | .key as $p | .value as $v | $v.file as $f | ($v.chunks // []) as $cs |
if $f == null then "\($p): records but no file record" else
	(if $id[$p] == null then "\($p): not a file of the tree" else empty end),
	(if $id[$p] != null and $f.blob != $id[$p] then
		"\($p): blob \($f.blob), git hash-object says \($id[$p])" else empty end),
	(if ($f.lines == 0) != ($cs | length == 0) then
		"\($p): \($f.lines) lines but \($cs | length) chunks" else empty end),
	(if ($cs | length) > 0 and $cs[0].start_line != 1 then
		"\($p): the first chunk starts at line \($cs[0].start_line)" else empty end),
	(if ($cs | length) > 0 and $cs[-1].end_line != $f.lines then
		"\($p): the last chunk ends at line \($cs[-1].end_line), the file has \($f.lines)"
	 else empty end),
	(range(1; $cs | length) as $i |
		if $cs[$i].start_line != $cs[$i - 1].end_line + 1 then
			"\($p): a chunk \($cs[$i].start_line)-\($cs[$i].end_line) follows one ending at \($cs[$i - 1].end_line)"
		else empty end),
	($cs[] | select(.start_line > .end_line) |
		"\($p): chunk \(.start_line)-\(.end_line) is empty"),
	($cs[] | select(.id != "\($f.blob):\(.start_line)-\(.end_line)") |
		"\($p): chunk id \(.id) is not <blob>:\(.start_line)-\(.end_line)"),
	($cs[] | select(.path != $p or .lang != $f.lang) |
		"\($p): chunk \(.start_line)-\(.end_line) says path \(.path), lang \(.lang)"),
	($cs[] | select((.text | split("\n") | length) != .end_line - .start_line + 1) |
		"\($p): chunk \(.start_line)-\(.end_line) has \(.text | split("\n") | length) lines of text"),
	(if $f.utf8 != false and $text[$p] != null and
	    ([$cs[].text] | join("\n")) != ($text[$p] | sub("\n$"; "")) then
		"\($p): the chunks joined are not the file" else empty end),
	(($v.defs // [])[] | select(.line < 1 or .line > $f.lines or .end_line < .line or
				   .end_line > $f.lines or .col < 1) |
		"\($p): def \(.name) at \(.line):\(.col)-\(.end_line) is not inside 1-\($f.lines)"),
	(($v.refs // [])[] | select(.line < 1 or .line > $f.lines or .col < 1) |
		"\($p): ref \(.name) at \(.line):\(.col) is not inside 1-\($f.lines)"),
	(($v.defs // []) + ($v.refs // []) | .[] | select(.path != $p or .lang != $f.lang) |
		"\($p): \(._type) \(.name) says path \(.path), lang \(.lang)")
end
EOF

# Chunk sizes: lines from the first to the last that is not blank or only
# punctuation (what the chunker attaches to the chunk before it), per chunk
# over $max; then a summary line "over <n> of <total>".
cat >"$TEST_TMP/sizes.jq" <<\EOF
def trivial: test("^[[:space:][:punct:]]*$") or test("^[[:space:]]*(end|fi|done|esac)[[:space:][:punct:]]*$");
[inputs | select(._type == "chunk") |
	(.text | split("\n") | map(trivial | not)) as $t |
	(($t | index(true)) // 0) as $a |
	(($t | rindex(true)) // 0) as $b |
	{path, start_line, end_line, kind, name, size: ($b - $a + 1)}] |
(map(select(.size > $max)) | .[] |
	"\(.path):\(.start_line)-\(.end_line): \(.kind) \(.name // "") has \(.size) lines") ,
"over \(map(select(.size > $max)) | length) of \(length)"
EOF

# Scopes, over all files of one run: a method's scope ends with the name of a
# class-like definition; a definition inside another (container) has that one's
# name in its scope.
cat >"$TEST_TMP/scopes.jq" <<\EOF
def typelike: (.kind | IN("class", "interface", "struct", "trait", "enum", "union", "record", "type")) or
	(.kind == "module" and .lang == "ruby");
def container: .kind | IN("class", "interface", "struct", "trait", "enum", "union", "record",
			  "type", "module", "namespace", "function", "method");
[inputs | select(._type == "def")] as $defs |
($defs | map(select(typelike) | .name) | unique) as $types |
($defs[] | select(.kind == "method") |
	if .scope == null then "\(.path):\(.line): method \(.name) has no scope"
	elif (.scope | split(".") | last) as $s | $types | any(.[]; . == $s) | not then
		"\(.path):\(.line): method \(.name) has scope \(.scope), which names no class-like definition"
	else empty end),
($defs | group_by(.path)[] | . as $file | $file[] | . as $x |
	[$file[] | select(container and . != $x and .end_line > .line and
		(.line < $x.line or (.line == $x.line and .col < $x.col)) and
		$x.line <= .end_line)] |
	(max_by([.line, .col]) // null) as $in |
	if $in != null and (("." + ($x.scope // "") + ".") | contains("." + $in.name + ".") | not) then
		"\($x.path):\($x.line): \($x.kind) \($x.name) is inside \($in.kind) \($in.name) (\($in.line)-\($in.end_line)) but has scope \($x.scope)"
	else empty end)
EOF

# ---- helpers ---------------------------------------------------------------------

# chunk_run <dir> <out> <args>...: ci-chunk in the repository <dir>, stdout to
# <out> (relative to the trash directory), stderr to <out>.err
chunk_run() {
	chunk_dir_=$1 chunk_out_=$2
	shift 2
	(cd "$chunk_dir_" && ci-chunk "$@") >"$chunk_out_" 2>"$chunk_out_.err"
}

# check_tiling <dir> <out>: the per-file invariants for the records in <out>,
# files read from the repository <dir>
check_tiling() {
	"$JQ" -r 'select(._type == "file") | .path' "$2" >"$2.paths" &&
	(cd "$1" && git hash-object --no-filters --stdin-paths) <"$2.paths" >"$2.blobs" &&
	paste "$2.paths" "$2.blobs" |
		"$JQ" -R 'split("\t") | {path: .[0], blob: .[1]}' >"$2.blob.json" &&
	while read -r p; do
		"$JQ" -Rs --arg p "$p" '{path: $p, text: .}' <"$1/$p" ||
		echo "cannot read $1/$p" >&7
	done <"$2.paths" >"$2.orig.json" &&
	"$JQ" -n -r --slurpfile orig "$2.orig.json" --slurpfile blob "$2.blob.json" \
		-f "$TEST_TMP/tiling.jq" "$2" >"$2.problems" &&
	test_must_be_empty "$2.problems"
}

# check_sizes <out> <max> [<allowed per thousand>]: chunks keep within <max>
# lines, but for a few (default 10 per 1000)
check_sizes() {
	"$JQ" -n -r --argjson max "$2" -f "$TEST_TMP/sizes.jq" "$1" >"$1.sizes" &&
	sizes_over_=$(tail -n 1 "$1.sizes" | cut -d" " -f2) &&
	sizes_all_=$(tail -n 1 "$1.sizes" | cut -d" " -f4) &&
	sed '$d' "$1.sizes" >&7 &&
	echo "$sizes_over_ of $sizes_all_ chunks over $2 lines, ${3:-10} per 1000 allowed" >&7 &&
	test $((sizes_over_ * 1000)) -le $((sizes_all_ * ${3:-10}))
}

# check_scopes <out>
check_scopes() {
	"$JQ" -n -r -f "$TEST_TMP/scopes.jq" "$1" >"$1.scopes" &&
	test_must_be_empty "$1.scopes"
}

# check_jobs <dir> <out> <args>...: -j 2, -j 4 and -j 4 again write what -j 1 wrote
# into <out>
check_jobs() {
	check_dir_=$1 check_out_=$2
	shift 2
	check_bad_=
	for j in 2 4 4; do
		chunk_run "$check_dir_" "$check_out_.j$j" -j $j "$@" &&
		cmp "$check_out_" "$check_out_.j$j" >&7 2>&1 &&
		cmp "$check_out_.err" "$check_out_.j$j.err" >&7 2>&1 ||
		check_bad_="$check_bad_ $j"
	done
	test -z "$check_bad_" || { echo "ci-chunk -j$check_bad_ $* differs from -j 1" >&7; false; }
}

# max_lines <args>: the --max-chunk-lines in <args>, or the default
max_lines() {
	max_=100
	while test $# -gt 0; do
		case $1 in
		--max-chunk-lines) max_=$2; shift ;;
		--max-chunk-lines=*) max_=${1#*=} ;;
		esac
		shift
	done
	echo "$max_"
}

# ---- (a) the golden inputs ------------------------------------------------------------

cases=$(cd "$golden" 2>/dev/null && ls -d */ 2>/dev/null | sed 's,/$,,')

test_expect_success 'there are golden cases' '
	test -n "$cases"
'

for c in $cases; do
	test_expect_success "golden $c: ci-chunk runs" '
		mkdir -p golden/$c &&
		(cd "$golden/$c" && tar -cf - --exclude=./args --exclude=./expected \
			--exclude=./expected-stderr .) | (cd golden/$c && tar -xf -) &&
		(cd golden/$c && git init -q) &&
		args=$(cat "$golden/$c/args") &&
		chunk_run golden/$c golden/$c.out -j 1 $args
	'
	test_expect_success "golden $c: chunks tile every file" '
		check_tiling golden/$c golden/$c.out
	'
	test_expect_success "golden $c: chunks keep within --max-chunk-lines" '
		check_sizes golden/$c.out $(max_lines $(cat "$golden/$c/args")) 0
	'
	test_expect_success "golden $c: methods and nested definitions are scoped" '
		check_scopes golden/$c.out
	'
	test_expect_success "golden $c: the same output with -j 2 and -j 4" '
		check_jobs golden/$c golden/$c.out $(cat "$golden/$c/args")
	'
done

# ---- (b) ci's own source tree ----------------------------------------------------------

test_expect_success 'setup: a copy of the source tree' '
	mkdir tree &&
	(cd "$CI_SRC_DIR" &&
	 dirs= &&
	 for d in cmd libcommon tests scripts share; do
		test -d $d && dirs="$dirs $d"
	 done &&
	 tar -cf - --exclude=./tests/trash --exclude=tests/trash --exclude="*.o" \
		--exclude="*.a" --exclude="*.log" --exclude="*.trs" $dirs) |
		(cd tree && tar -xf -) &&
	if test -f "$CI_SRC_DIR/.gitignore"; then cp "$CI_SRC_DIR/.gitignore" tree/; fi &&
	(cd tree && git init -q) &&
	test -f tree/libcommon/parse/chunk.c
'

test_expect_success 'source tree: ci-chunk runs' '
	chunk_run tree tree.out -j 1 cmd libcommon tests scripts share &&
	"$JQ" -r "select(._type == \"file\") | .lang // \"-\"" tree.out | sort | uniq -c >langs &&
	grep " c\$" langs
'

test_expect_success 'source tree: chunks tile every file' '
	check_tiling tree tree.out
'

test_expect_success 'source tree: chunks keep within --max-chunk-lines (but for 1%)' '
	check_sizes tree.out 100
'

test_expect_success 'source tree: methods and nested definitions are scoped' '
	grep -v "\"path\":\"tests/golden/" tree.out >tree-own.out &&
	check_scopes tree-own.out
'

test_expect_success 'source tree: the same output with -j 2 and -j 4' '
	check_jobs tree tree.out cmd libcommon tests scripts share
'

test_expect_success 'source tree: --max-chunk-lines 20 still tiles, and keeps within' '
	chunk_run tree tree20.out -j 4 --chunks --max-chunk-lines 20 cmd libcommon &&
	check_tiling tree tree20.out &&
	check_sizes tree20.out 20
'

# ---- (c) stress inputs -----------------------------------------------------------------

test_expect_success 'setup: stress inputs' '
	mkdir stress && (cd stress && git init -q) &&
	: >stress/empty.c &&
	: >stress/empty.py &&
	: >stress/empty.md &&
	printf "\n\n\n\n\n" >stress/blank.c &&
	printf "\n\n\n" >stress/blank.py &&
	printf "\n \n\t\n" >stress/blank.txt &&
	printf "}\n\n}\n" >stress/closers.c &&
	printf "int a;\n\nint f(void)\n{\n\treturn a;\n}" >stress/nonl.c &&
	printf "class A:\n    def f(self):\n        return 1" >stress/nonl.py &&
	printf "# T\n\ntext" >stress/nonl.md &&
	printf "x" >stress/onechar.txt &&
	printf "/* c */\r\nint f(void)\r\n{\r\n\treturn 0;\r\n}\r\n\r\nint g;\r\n" >stress/crlf.c &&
	printf "import os\r\n\r\n\r\nclass A:\r\n    def f(self):\r\n        return os.sep\r\n" >stress/crlf.py &&
	printf "# Title\r\n\r\ntext\r\n\r\n## Part\r\n\r\nmore\r\n" >stress/crlf.md &&
	printf "a\rb\rc\n" >stress/cr.txt &&
	awk "BEGIN { printf \"int x = \"; for (i = 0; i < 50000; i++) printf \"(\";
		printf \"1\"; for (i = 0; i < 50000; i++) printf \")\"; print \";\" }" >stress/nested.c &&
	awk "BEGIN { printf \"x = \"; for (i = 0; i < 50000; i++) printf \"(\";
		printf \"1\"; for (i = 0; i < 50000; i++) printf \")\"; print \"\" }" >stress/nested.py &&
	awk "BEGIN { print \"int f(void)\"; print \"{\"; for (i = 0; i < 2000; i++) print \"{\";
		for (i = 0; i < 2000; i++) print \"}\"; print \"}\" }" >stress/blocks.c &&
	awk "BEGIN { for (i = 0; i < 5000; i++)
		printf \"/* f%d */\nint f%d(int a)\n{\n\treturn a + %d;\n}\n\n\", i, i, i }" >stress/many.c &&
	awk "BEGIN { print \"static int table[] = {\"; for (i = 0; i < 3000; i++)
		printf \"\t%d,\n\", i; print \"};\" }" >stress/table.c &&
	awk "BEGIN { print \"def f():\"; for (i = 0; i < 400; i++)
		printf \"    x%d = %d\n\", i, i; print \"    return 0\" }" >stress/longfunc.py &&
	ls stress >stress.list &&
	test_line_count -gt 20 stress.list
'

test_expect_success 'stress: ci-chunk runs, no file left out' '
	chunk_run stress stress.out -j 1 . &&
	"$JQ" -r "select(._type == \"file\") | .path" stress.out | sort >read &&
	(cd stress && ls) | sort >all &&
	test_cmp all read
'

test_expect_success 'stress: chunks tile every file' '
	check_tiling stress stress.out
'

test_expect_success 'stress: an empty file has no chunk, a blank one a chunk' '
	"$JQ" -c "select(.path == \"empty.c\") | [._type, .lines]" stress.out >empty &&
	echo "[\"file\",0]" >expect &&
	test_cmp expect empty &&
	"$JQ" -c "select(.path == \"blank.c\" and ._type == \"chunk\") | [.start_line, .end_line]" \
		stress.out >blank &&
	echo "[1,5]" >expect &&
	test_cmp expect blank
'

test_expect_success 'stress: CRLF files are split into units like LF files' '
	"$JQ" -c "select(.path == \"crlf.c\" and ._type == \"chunk\") | [.kind, .name]" \
		stress.out >crlf &&
	grep "^\[\"function\",\"f\"\]\$" crlf &&
	"$JQ" -c "select(.path == \"crlf.py\" and ._type == \"chunk\") | [.kind, .name]" \
		stress.out >crlf &&
	grep "^\[\"method\",\"f\"\]\$" crlf &&
	"$JQ" -c "select(.path == \"crlf.md\" and ._type == \"chunk\") | .name" \
		stress.out >crlf &&
	grep "^\"Part\"\$" crlf
'

test_expect_success 'stress: 5000 functions, 5000 chunks and 5000 definitions' '
	"$JQ" -r "select(.path == \"many.c\") | ._type + \" \" + (.kind // \"\")" stress.out |
		sort | uniq -c | sed "s/^ *//" >many &&
	cat >expect <<-\EOF &&
	5000 chunk function
	5000 def function
	1 file 
	EOF
	test_cmp expect many
'

test_expect_success 'stress: the same output with -j 2 and -j 4' '
	check_jobs stress stress.out .
'

test_expect_success 'stress: a huge class with --max-chunk-lines 20' '
	awk "BEGIN {
		print \"class Huge:\"
		print \"    \\\"\\\"\\\"A class far longer than --max-chunk-lines.\\\"\\\"\\\"\"
		print \"\"
		for (i = 0; i < 60; i++) printf \"    field_%d = %d\n\", i, i
		for (m = 0; m < 300; m++) {
			print \"\"
			if (m % 10 == 0) print \"    @staticmethod\"
			printf \"    def method_%d(self, x):\n\", m
			n = (m % 10 == 3) ? 45 : 3
			for (k = 0; k < n; k++) printf \"        x = x + %d\n\", k
			print \"        return x\"
		}
	}" >stress/huge.py &&
	chunk_run stress huge.out -j 1 --max-chunk-lines 20 huge.py &&
	check_tiling stress huge.out &&
	check_sizes huge.out 20 0 &&
	"$JQ" -r "select(._type == \"chunk\" and .kind == \"method\") | .scope" huge.out |
		sort | uniq -c | sed "s/^ *//" >scopes &&
	echo "300 Huge" >expect &&
	test_cmp expect scopes &&
	"$JQ" -r "select(._type == \"def\" and .name == \"method_3\") | .scope" huge.out >scope &&
	echo Huge >expect &&
	test_cmp expect scope &&
	check_jobs stress huge.out --max-chunk-lines 20 huge.py
'

test_expect_success 'stress: a 10 MB line of text, with --max-filesize 0' '
	mkdir long && (cd long && git init -q) &&
	awk "BEGIN { for (i = 0; i < 1000000; i++) printf \"0123456789\"; print \"\" }" \
		>long/long.txt &&
	chunk_run long long.out -j 1 --max-filesize 0 long.txt &&
	check_tiling long long.out &&
	"$JQ" -c "select(._type == \"chunk\") | [.start_line, .end_line, (.text | length)]" \
		long.out >chunks &&
	echo "[1,1,10000000]" >expect &&
	test_cmp expect chunks
'

test_expect_success 'stress: a 10 MB line of C, with --max-filesize 0' '
	awk "BEGIN { printf \"int big[] = {\"; for (i = 0; i < 3400000; i++) printf \"10,\";
		print \"0};\" }" >long/long.c &&
	chunk_run long longc.out -j 1 --chunks --max-filesize 0 long.c &&
	check_tiling long longc.out
'

test_expect_success 'stress: a file over --max-filesize is skipped, with a warning' '
	test_status 1 chunk_run long skipped.out -j 1 long.txt &&
	test_must_be_empty skipped.out &&
	grep "long.txt" skipped.out.err
'

test_done
