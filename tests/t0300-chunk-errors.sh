#!/bin/sh
# ci-chunk on bad input and failing output: the message, the exit status, and
# that nothing is lost (a file that cannot be parsed is still chunked by lines).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository with good and bad files' '
	git init -q repo &&
	printf "int ok(void)\n{\n\treturn 1;\n}\n" >repo/ok.c &&
	printf "def f():\n    return \"\\377\\376\"\n" >repo/latin1.py &&
	awk "BEGIN { for (i = 0; i < 400; i++) print \"# padding the binary sniff window\" }" >repo/nul.py &&
	printf "y = 2\000\n" >>repo/nul.py &&
	printf "int a;\000\n" >repo/binary.c &&
	printf "int crlf(void)\r\n{\r\n\treturn 0;\r\n}\r\n" >repo/crlf.c &&
	: >repo/empty.c &&
	printf "int nonl(void) { return 2; }" >repo/nonl.c
'

test_expect_success 'invalid UTF-8: a warning naming the file, chunked by lines, exit 0' '
	(cd repo && ci-chunk latin1.py >../out 2>../err) &&
	test_grep "^ci-chunk: warning: latin1.py: invalid UTF-8; chunked by lines$" err &&
	jq -r "select(._type==\"chunk\") | .kind" out >kinds &&
	echo lines >expect && test_cmp expect kinds &&
	jq -s -e "map(select(._type==\"file\"))[0].utf8 == false" out
'

test_expect_success 'invalid UTF-8 is replaced by U+FFFD in the text, never written raw' '
	jq -r "select(._type==\"chunk\") | .text" out >text &&
	grep -q "$(printf "\357\277\275")" text
'

test_expect_code 3 '--strict makes a degraded file an error' '
	cd repo && ci-chunk --strict latin1.py >/dev/null 2>&1
'

test_expect_success 'a NUL byte past the binary sniff: warning, chunked by lines' '
	(cd repo && ci-chunk nul.py >../out 2>../err) &&
	test_grep "nul.py: contains a NUL byte; chunked by lines" err &&
	jq -e -s "map(select(._type==\"chunk\")) | length > 0" out
'

test_expect_success 'a binary file named on the command line: warning, exit 1, no records' '
	(cd repo && test_status 1 ci-chunk binary.c >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "binary.c: skipped: binary" err &&
	test_grep "no files to read" err
'

test_expect_success 'CRLF: lines counted by newline, text keeps the carriage returns' '
	(cd repo && ci-chunk crlf.c >../out) &&
	jq -c "select(._type==\"chunk\") | [.kind, .name, .start_line, .end_line]" out >actual &&
	echo "[\"function\",\"crlf\",1,4]" >expect && test_cmp expect actual &&
	jq -r "select(._type==\"chunk\") | .text" out | head -1 | od -c | grep -q "\\\\r"
'

test_expect_success 'an empty file: a file record with 0 lines and no chunk' '
	(cd repo && ci-chunk empty.c >../out) &&
	jq -c . out >actual &&
	echo "{\"_type\":\"file\",\"path\":\"empty.c\",\"lang\":\"c\",\"size\":0,\"lines\":0,\"blob\":\"$(git hash-object repo/empty.c)\"}" >expect &&
	test_cmp expect actual
'

test_expect_success 'no final newline: the last line counts' '
	(cd repo && ci-chunk --chunks --no-files nonl.c >../out) &&
	jq -c "[.start_line, .end_line, .text]" out >actual &&
	echo "[1,1,\"int nonl(void) { return 2; }\"]" >expect && test_cmp expect actual
'

test_expect_success 'a 10 MB line is chunked (with no size limit), not dropped' '
	mkdir big && git -C big init -q &&
	awk "BEGIN { s = \"x\"; while (length(s) < 10485760) s = s s; printf \"%s\\n\", substr(s, 1, 10485760) }" >big/long.txt &&
	(cd big && ci-chunk --max-filesize 0 long.txt >../out) &&
	jq -s -e "map(select(._type==\"file\"))[0] | .size == 10485761 and .lines == 1" out &&
	jq -e -s "map(select(._type==\"chunk\") | .text | length) == [10485760]" out
'

test_expect_success 'a file over the size limit named on the command line: a warning' '
	(cd big && test_status 1 ci-chunk long.txt >../out 2>../err) &&
	test_grep "skipping .long.txt.: 10485761 bytes is over the size limit of 1048576" err
'

test_expect_code 3 'a path that does not exist is an I/O error' '
	cd repo && ci-chunk no-such-file.c >/dev/null 2>../err
'

test_expect_success '... with a message naming it' '
	test_grep "^ci-chunk: cannot open .no-such-file.c.: No such file or directory" err
'

test_expect_success 'an unreadable file: a warning, the others still chunked' '
	if test "$(id -u)" = 0; then
		# root reads everything: make the file unreadable another way
		mkfifo repo/fifo.c && (cd repo && ci-chunk fifo.c ok.c >../out 2>../err) &&
		test_grep "skipping .fifo.c.: not a regular file" err
	else
		cp repo/ok.c repo/secret.c && chmod 000 repo/secret.c &&
		(cd repo && ci-chunk secret.c ok.c >../out 2>../err)
		rc=$?; chmod 644 repo/secret.c; test $rc = 0 &&
		test_grep "secret.c: cannot read" err
	fi &&
	jq -e -s "map(select(._type==\"file\") | .path) == [\"ok.c\"]" out
'

test_expect_code 3 'a write error (a full disk) is exit 3' '
	cd repo && ci-chunk ok.c >/dev/full 2>../err
'

test_expect_success '... with a message' '
	test_grep "^ci-chunk: write error on standard output: No space left on device" err
'

test_expect_success 'a closed pipe ends ci-chunk quietly' '
	mkdir pipe && git -C pipe init -q &&
	for i in 1 2 3 4 5 6 7 8 9; do cp repo/ok.c pipe/ok$i.c; done &&
	(cd pipe && ci-chunk 2>../err | head -1 >../out) &&
	test_line_count = 1 out &&
	test_must_be_empty err
'

test_expect_code 2 'a bad option value is a usage error' '
	ci-chunk --max-chunk-lines 1 2>err
'

test_expect_success '... naming the option and the range' '
	test_grep "^ci-chunk: --max-chunk-lines: expected an integer from 2 to 100000, got .1.$" err
'

test_expect_code 2 '-j 0 is a usage error' '
	ci-chunk -j 0 2>/dev/null
'

test_expect_code 1 'a repository with nothing to read: exit 1 and a message' '
	git init -q void && cd void && ci-chunk 2>../err
'

test_expect_success '... the message says why' '
	test_grep "no files to read in this repository" err
'

test_done
