#!/bin/sh
# t0500-index-build: ci-index build, status, load and drop on a fixture repository
# (several languages, an ignored file, a binary and a generated file): the index
# holds what ci-chunk writes, `ci-chunk | ci-index load` gives the same tables as
# `build`, a bad record loses the whole load, and an index of another schema
# version or a corrupt file is reported by status and replaced by build and update.
#
# The tables are read with the sqlite3 shell (every table but chunks_fts, whose
# tokenizer only ci registers, can be read by it).

. "$(dirname "$0")/lib.sh"

if ! test_have_prog sqlite3; then
	test_skip 'ci-index tests' 'the sqlite3 shell is not installed (apt-get install sqlite3)'
	test_done
fi

# index_dump <db>: the contents of files, chunks, defs, refs and imports keyed by
# path (not by the ids of one database), and the trigrams of each file's text
index_dump() {
	sqlite3 -bail "$1" <<-\EOF
	.mode quote
	SELECT 'file', f.path, b.blob, b.lang, b.size, b.lines, b.exact, f.size, f.mtime
		FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path;
	SELECT 'chunk', f.path, c.start_line, c.end_line, c.kind, c.name, c.scope, c.signature, c.text
		FROM files f JOIN chunks c ON c.blob_id = f.blob_id ORDER BY 2, 3, 4;
	SELECT 'def', f.path, d.line, d.col, d.name, d.kind, d.end_line, d.scope
		FROM files f JOIN defs d ON d.blob_id = f.blob_id ORDER BY 2, 3, 4, 5, 6, 7, 8;
	SELECT 'ref', f.path, r.line, r.col, r.name, r.kind, r.scope
		FROM files f JOIN refs r ON r.blob_id = f.blob_id ORDER BY 2, 3, 4, 5, 6, 7;
	SELECT 'import', path, line, target, resolved FROM imports ORDER BY 2, 3, 4, 5;
	CREATE VIRTUAL TABLE temp.tri USING fts5vocab(main, chunks_tri, instance);
	SELECT 'trigrams', f.path, group_concat(t.term, ' ')
		FROM files f JOIN (SELECT doc, term FROM temp.tri ORDER BY doc, term) t ON t.doc = f.blob_id
		GROUP BY f.path ORDER BY f.path;
	EOF
}

# index_check <db>: what must hold in any index (prints the violations): rows
# point to rows that exist, the chunks of a blob tile its lines, both FTS5
# tables have a row for each chunk / blob and no other
index_check() {
	sqlite3 -bail "$1" <<-\EOF
	SELECT 'file without blob', path FROM files WHERE blob_id NOT IN (SELECT id FROM blobs);
	SELECT 'chunk without blob', id FROM chunks WHERE blob_id NOT IN (SELECT id FROM blobs);
	SELECT 'def without blob', name FROM defs WHERE blob_id NOT IN (SELECT id FROM blobs);
	SELECT 'ref without blob', name FROM refs WHERE blob_id NOT IN (SELECT id FROM blobs);
	SELECT 'vector without chunk', chunk_id FROM vectors WHERE chunk_id NOT IN (SELECT id FROM chunks);
	SELECT 'chunks do not tile', b.blob, b.lines, sum(c.end_line - c.start_line + 1), min(c.start_line)
		FROM blobs b LEFT JOIN chunks c ON c.blob_id = b.id GROUP BY b.id
		HAVING coalesce(sum(c.end_line - c.start_line + 1), 0) != b.lines
		    OR (b.lines > 0 AND min(c.start_line) != 1);
	SELECT 'chunk not in chunks_fts', id FROM chunks WHERE id NOT IN (SELECT id FROM chunks_fts_docsize);
	SELECT 'chunks_fts row without chunk', id FROM chunks_fts_docsize WHERE id NOT IN (SELECT id FROM chunks);
	SELECT 'blob not in chunks_tri', blob FROM blobs WHERE lines > 0 AND id NOT IN (SELECT id FROM chunks_tri_docsize);
	SELECT 'chunks_tri row without blob', id FROM chunks_tri_docsize WHERE id NOT IN (SELECT id FROM blobs);
	INSERT INTO chunks_tri(chunks_tri) VALUES ('integrity-check');
	EOF
}

# status_field <field> [<ci-index option>...]: one field of `ci-index status`
status_field() {
	status_field_=$1
	shift
	ci-index "$@" status >"$TEST_TMP/status" &&
	"$JQ" -r ".$status_field_" "$TEST_TMP/status"
}

# the fixture: C, Python, JavaScript, Go, shell, Markdown; an ignored directory
# and file, a binary file, a generated Go file, an empty file
make_repo() (
	mkdir -p "$1" && cd "$1" && git init -q &&
	mkdir -p src lib web gen tools docs build &&
	printf 'build/\n*.log\n' >.gitignore &&
	cat >src/parse.h <<-\EOF &&
	#ifndef PARSE_H
	#define PARSE_H
	struct parser {
		const char *text;
		int pos;
	};
	int parse(struct parser *p);
	#endif
	EOF
	cat >src/parse.c <<-\EOF &&
	#include <ctype.h>
	#include "parse.h"

	/* Skip blanks. */
	static void skip(struct parser *p)
	{
		while (isspace((unsigned char)p->text[p->pos]))
			p->pos++;
	}

	int parse(struct parser *p)
	{
		skip(p);
		return p->text[p->pos] != '\0';
	}
	EOF
	cat >lib/report.py <<-\EOF &&
	import json
	from os import path


	class Report:
	    def __init__(self, name):
	        self.name = name

	    def render(self):
	        return json.dumps({"name": self.name, "dir": path.dirname(self.name)})


	def main(argv):
	    print(Report(argv[1]).render())
	EOF
	cat >web/app.js <<-\EOF &&
	const fs = require('fs');
	const { render } = require('./view');

	function readConfig(p) {
		return JSON.parse(fs.readFileSync(p, 'utf8'));
	}

	module.exports = { readConfig, render };
	EOF
	cat >web/view.js <<-\EOF &&
	function render(x) {
		return `<p>${x}</p>`;
	}
	module.exports = { render };
	EOF
	cat >gen/api.go <<-\EOF &&
	package gen

	func Serve() int {
		return helper() + 1
	}

	func helper() int { return 41 }
	EOF
	cat >gen/types.go <<-\EOF &&
	// Code generated by protoc-gen-go. DO NOT EDIT.
	package gen

	type Msg struct{ ID int }
	EOF
	cat >tools/run.sh <<-\EOF &&
	#!/bin/sh
	. ./env.sh
	build() {
		make -j2 "$@"
	}
	build all
	EOF
	cat >docs/guide.md <<-\EOF &&
	# Guide

	How to parse.

	## Details

	Call `parse`.
	EOF
	: >docs/empty.txt &&
	printf 'PNG\000\001\002\003binary\n' >docs/logo.png &&
	echo 'int ignored;' >build/out.c &&
	echo noise >debug.log &&
	git add -A && git commit -q -m "a fixture"
)

test_expect_success 'setup: a repository with several languages' '
	make_repo repo &&
	(cd repo && ci-chunk >../chunk.nd) &&
	test -s chunk.nd
'

test_expect_success 'build: exit 0, nothing on stdout, the index in .ci-index' '
	(cd repo && ci-index build >../out 2>../err) &&
	test_must_be_empty out &&
	test_must_be_empty err &&
	test -f repo/.ci-index/index.db &&
	! test -e repo/.ci-index/index.db.new &&
	index_dump repo/.ci-index/index.db >build.dump &&
	index_check repo/.ci-index/index.db >check &&
	test_must_be_empty check
'

test_expect_success 'build: the index stays out of git' '
	echo "*" >expect &&
	test_cmp expect repo/.ci-index/.gitignore &&
	(cd repo && git status --porcelain) >out &&
	test_must_be_empty out
'

test_expect_success 'status: one record about the index' '
	(cd repo && ci-index status >../status) &&
	test_line_count = 1 status &&
	root=$(cd repo && pwd -P) &&
	head=$(cd repo && git rev-parse HEAD) &&
	"$JQ" -c "{_type, index, schema_version, root, commit, vectors, chunks_without_vectors, commits, commit_vectors, commits_without_vectors, couplings, model, vector_format, stale}" status >actual &&
	chunks=$("$JQ" .chunks status) &&
	cat >expect <<-EOF &&
	{"_type":"status","index":"$root/.ci-index/index.db","schema_version":3,"root":"$root","commit":"$head","vectors":0,"chunks_without_vectors":$chunks,"commits":0,"commit_vectors":0,"commits_without_vectors":0,"couplings":0,"model":null,"vector_format":null,"stale":0}
	EOF
	test_cmp_json expect actual &&
	"$JQ" -e ".created | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\$\")" status &&
	"$JQ" -e ".updated >= .created" status
'

test_expect_success 'status: the counts are those of ci-chunk' '
	"$JQ" -s -c "{
		files: map(select(._type == \"file\")) | length,
		chunks: map(select(._type == \"chunk\")) | length,
		defs: map(select(._type == \"def\")) | length,
		refs: map(select(._type == \"ref\")) | length,
		imports: map(select(._type == \"import\")) | length,
		blobs: map(select(._type == \"file\") | .blob) | unique | length,
		languages: (map(select(._type == \"file\") | .lang // \"text\") | group_by(.)
			| map({key: .[0], value: length}) | from_entries)
	}" chunk.nd >expect &&
	"$JQ" -c "{files, chunks, defs, refs, imports, blobs, languages}" status >actual &&
	test_cmp_json expect actual &&
	"$JQ" -e ".files > 5 and .chunks > 10 and .defs > 5 and .refs > 3 and .imports > 3" status
'

test_expect_success 'status: the files are those ci-chunk reads; binary and generated ones are skipped' '
	"$JQ" -r "select(._type == \"file\") | .path" chunk.nd >expect &&
	sqlite3 repo/.ci-index/index.db "SELECT path FROM files ORDER BY path" >actual &&
	test_cmp expect actual &&
	! grep -e "^build/" -e "debug.log" -e logo.png -e types.go actual &&
	cat >expect <<-\EOF &&
	docs/logo.png|binary
	gen/types.go|generated
	EOF
	sqlite3 repo/.ci-index/index.db "SELECT path, reason FROM skipped ORDER BY path" >actual &&
	test_cmp expect actual
'

test_expect_success 'status: the chunks, defs, refs and imports are those of ci-chunk' '
	"$JQ" -r "select(._type == \"chunk\") | [.path, .start_line, .end_line, .kind, .name // \"\"] | @tsv" chunk.nd |
		sort >expect &&
	sqlite3 -separator "	" -nullvalue "" repo/.ci-index/index.db "SELECT f.path, c.start_line, c.end_line, c.kind, c.name
		FROM files f JOIN chunks c USING (blob_id)" | sort >actual &&
	test_cmp expect actual &&
	"$JQ" -r "select(._type == \"def\") | [.path, .line, .col, .name, .kind] | @tsv" chunk.nd | sort >expect &&
	sqlite3 -separator "	" repo/.ci-index/index.db "SELECT f.path, d.line, d.col, d.name, d.kind
		FROM files f JOIN defs d USING (blob_id)" | sort >actual &&
	test_cmp expect actual &&
	"$JQ" -r "select(._type == \"ref\") | [.path, .line, .col, .name, .kind] | @tsv" chunk.nd | sort >expect &&
	sqlite3 -separator "	" repo/.ci-index/index.db "SELECT f.path, r.line, r.col, r.name, r.kind
		FROM files f JOIN refs r USING (blob_id)" | sort >actual &&
	test_cmp expect actual &&
	"$JQ" -r "select(._type == \"import\") | [.path, .line, .target, .resolved // \"-\"] | @tsv" chunk.nd | sort >expect &&
	sqlite3 -separator "	" -nullvalue - repo/.ci-index/index.db "SELECT path, line, target, resolved
		FROM imports" | sort >actual &&
	test_cmp expect actual
'

test_expect_success 'the trigram table finds a file by a piece of its text' '
	cat >expect <<-\EOF &&
	src/parse.c
	EOF
	sqlite3 repo/.ci-index/index.db >actual <<-\EOF &&
	SELECT f.path FROM files f WHERE f.blob_id IN
		(SELECT rowid FROM chunks_tri WHERE chunks_tri MATCH '\''iss AND ssp AND spa AND pac AND ace'\'');
	EOF
	test_cmp expect actual
'

test_expect_success 'status: index and source sizes, and their ratio' '
	"$JQ" -s "map(select(._type == \"file\") | .size) | add" chunk.nd >expect &&
	"$JQ" .source_bytes status >actual &&
	test_cmp expect actual &&
	db=repo/.ci-index/index.db &&
	bytes=$(( $(stat -c %s $db) + $(stat -c %s $db-wal 2>/dev/null || echo 0) )) &&
	"$JQ" -e ".index_bytes == $bytes and .index_bytes > 0" status &&
	"$JQ" -e "((.size_ratio - .index_bytes / .source_bytes) | fabs) < 1e-6 * .size_ratio" status
'

test_expect_success 'build: the index does not depend on -j' '
	(cd repo && ci-index -j 1 --index ../j1.db build && ci-index -j 4 --index ../j4.db build) &&
	index_dump j1.db >j1.dump &&
	index_dump j4.db >j4.dump &&
	test_cmp build.dump j1.dump &&
	test_cmp build.dump j4.dump
'

test_expect_success 'build: again over an existing index gives the same index' '
	(cd repo && ci-index build) &&
	index_dump repo/.ci-index/index.db >again.dump &&
	test_cmp build.dump again.dump &&
	! test -e repo/.ci-index/index.db.new
'

test_expect_success 'build <path>: the whole repository that contains it, from anywhere in it' '
	(cd repo/src && ci-index build) &&
	index_dump repo/.ci-index/index.db >sub.dump &&
	test_cmp build.dump sub.dump &&
	ci-index --index path.db build repo/web &&
	index_dump path.db >path.dump &&
	test_cmp build.dump path.dump
'

test_expect_success 'CI_INDEX names the index; --index wins over it' '
	(cd repo && CI_INDEX=../env.db ci-index build) &&
	test -f env.db &&
	index_dump env.db >env.dump &&
	test_cmp build.dump env.dump &&
	(cd repo && CI_INDEX=../env.db ci-index status) >env.status &&
	"$JQ" -e ".index == \"../env.db\" and .stale == 0" env.status &&
	(cd repo && CI_INDEX=../nowhere.db ci-index --index ../env.db status) >opt.status &&
	"$JQ" -e ".index == \"../env.db\"" opt.status &&
	! test -e nowhere.db
'

test_expect_success 'ci-chunk | ci-index load: the same index as build' '
	(cd repo && ci-chunk | ci-index --index ../loaded.db load >../out 2>../err) &&
	test_must_be_empty out &&
	test_must_be_empty err &&
	index_dump loaded.db >loaded.dump &&
	test_cmp build.dump loaded.dump &&
	index_check loaded.db >check &&
	test_must_be_empty check &&
	(cd repo && ci-index --index ../loaded.db status) >loaded.status &&
	"$JQ" -c "{files, chunks, defs, refs, imports, blobs, languages, source_bytes}" status >expect &&
	"$JQ" -c "{files, chunks, defs, refs, imports, blobs, languages, source_bytes}" loaded.status >actual &&
	test_cmp_json expect actual
'

test_expect_success 'load: loading the same records again changes nothing' '
	(cd repo && ci-index --index ../loaded.db load <../chunk.nd) &&
	index_dump loaded.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'load -v: counts what it stored' '
	(cd repo && ci-chunk src/parse.h >../ph.nd) &&
	n=$("$JQ" -s "map(select(._type == \"chunk\")) | length" ph.nd) &&
	(cd repo && ci-index -v --index ../small.db load <../ph.nd 2>../err) &&
	test_grep "^ci-index: loaded 1 files, $n chunks, " err
'

test_expect_success 'load: commit and coupling records' '
	cat >history.nd <<-\EOF &&
	{"_type":"commit","sha":"1111111111111111111111111111111111111111","time":1700000000,"author":"A U Thor","message":"first","files":["src/parse.c","src/parse.h"]}
	{"_type":"commit","sha":"2222222222222222222222222222222222222222","time":1700000100,"author":"A U Thor","message":"second","files":[{"path":"src/parse.c","added":3,"deleted":1}]}
	{"_type":"coupling","a":"src/parse.c","b":"src/parse.h","score":0.5,"co_changes":1,"last":1700000000}
	{"_type":"churn","path":"src/parse.c","commits":2}
	EOF
	(cd repo && ci-index --index ../loaded.db load <../history.nd) &&
	(cd repo && ci-index --index ../loaded.db status) >hist.status &&
	"$JQ" -e ".commits == 2 and .couplings == 1" hist.status &&
	cat >expect <<-\EOF &&
	2222222222222222222222222222222222222222|src/parse.c|3|1
	EOF
	sqlite3 loaded.db "SELECT sha, path, added, deleted FROM commit_files WHERE added IS NOT NULL" >actual &&
	test_cmp expect actual &&
	index_dump loaded.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'load: a chunk record with a vector stores it' '
	# 1.0 2.0 3.0 4.0 as little-endian float32
	vec=AACAPwAAAEAAAEBAAACAQA== &&
	"$JQ" -c "select(._type == \"file\" and .path == \"src/parse.h\")" chunk.nd >vec.nd &&
	"$JQ" -c "select(._type == \"chunk\" and .path == \"src/parse.h\") | . + {vec: \"$vec\", model: \"test-model\"}" chunk.nd >>vec.nd &&
	n=$(($(wc -l <vec.nd) - 1)) &&
	(cd repo && ci-index --index ../loaded.db load <../vec.nd) &&
	(cd repo && ci-index --index ../loaded.db status) >vec.status &&
	"$JQ" -e ".vectors == $n and .model == \"test-model\"" vec.status &&
	echo "$n|4|16|test-model" >expect &&
	sqlite3 loaded.db "SELECT count(*), min(dim), min(length(vec)), min(model) FROM vectors" >actual &&
	test_cmp expect actual &&
	sqlite3 loaded.db "SELECT hex(substr(vec, 9, 4)) FROM vectors LIMIT 1" >actual &&
	echo 00004040 >expect &&
	test_cmp expect actual
'

# test_load_error <name> <line> <pattern>: loading <name>.nd into loaded.db fails
# with exit 3, one message "ci-index: <stdin>:<line>:[<col>:] ..." matching <pattern>, and
# stores nothing
test_load_error() {
	index_dump loaded.db >"$TEST_TMP/before" &&
	(cd repo && test_status 3 ci-index --index ../loaded.db load <"../$1.nd" >../out 2>../err) &&
	test_must_be_empty out &&
	test_line_count = 1 err &&
	test_grep "^ci-index: <stdin>:$2:[0-9:]* $3" err &&
	index_dump loaded.db >"$TEST_TMP/after" &&
	test_cmp "$TEST_TMP/before" "$TEST_TMP/after"
}

test_expect_success 'setup: records of a new file' '
	printf "int fresh(void) { return 7; }\n" >repo/fresh.c &&
	(cd repo && ci-chunk fresh.c >../fresh.nd) &&
	rm repo/fresh.c &&
	test_line_count -ge 2 fresh.nd
'

test_expect_success 'load: a line that is not JSON stops it; nothing is stored' '
	{ cat fresh.nd && echo "{\"_type\":\"file\", oops" && cat fresh.nd; } >notjson.nd &&
	line=$(($(wc -l <fresh.nd) + 1)) &&
	test_load_error notjson $line ""
'

test_expect_success 'load: a record that is not an object, or has no _type' '
	{ cat fresh.nd && echo "[1,2]"; } >array.nd &&
	test_load_error array $(wc -l <array.nd) "" &&
	{ cat fresh.nd && echo "{\"path\":\"fresh.c\"}"; } >notype.nd &&
	test_load_error notype $(wc -l <notype.nd) ""
'

test_expect_success 'load: a chunk before its file record' '
	"$JQ" -c "select(._type == \"chunk\")" fresh.nd >chunkfirst.nd &&
	cat fresh.nd >>chunkfirst.nd &&
	test_load_error chunkfirst 1 ".*fresh.c"
'

test_expect_success 'load: a chunk after the file record of another file' '
	{ cat fresh.nd && "$JQ" -c "select(._type == \"file\" and .path == \"src/parse.h\")" chunk.nd &&
	  "$JQ" -c "select(._type == \"chunk\")" fresh.nd; } >otherfile.nd &&
	line=$(($(wc -l <fresh.nd) + 2)) &&
	test_load_error otherfile $line ".*fresh.c"
'

test_expect_success 'load: a file record whose path leaves the repository' '
	for p in ../evil.c a/../../evil.c /etc/evil.c .. a/../..; do
		{ cat fresh.nd && "$JQ" -c "select(._type == \"file\") | .path = \"$p\"" fresh.nd; } >leave.nd &&
		line=$(wc -l <leave.nd) &&
		test_load_error leave $line ".*leaves the repository" ||
		{ echo "path $p"; return 1; }
	done
'

test_expect_success 'load: a record without a required field' '
	{ cat fresh.nd && "$JQ" -c "select(._type == \"chunk\") | del(.text)" fresh.nd; } >notext.nd &&
	test_load_error notext $(wc -l <notext.nd) "chunk record" &&
	{ cat fresh.nd && "$JQ" -c "select(._type == \"file\") | del(.blob)" fresh.nd; } >noblob.nd &&
	test_load_error noblob $(wc -l <noblob.nd) "file record" &&
	{ cat fresh.nd && echo "{\"_type\":\"commit\",\"sha\":\"33\"}"; } >notime.nd &&
	test_load_error notime $(wc -l <notime.nd) "commit record"
'

test_expect_success 'load: a bad record into a new index stores nothing either' '
	(cd repo && test_status 3 ci-index --index ../new.db load <../chunkfirst.nd 2>../err) &&
	test_grep "^ci-index: <stdin>:1: " err &&
	if test -e new.db; then
		(cd repo && ci-index --index ../new.db status) >new.status &&
		"$JQ" -e ".files == 0 and .chunks == 0" new.status
	fi
'

test_expect_success 'load: empty input stores nothing and succeeds' '
	index_dump loaded.db >before &&
	(cd repo && ci-index --index ../loaded.db load </dev/null) &&
	index_dump loaded.db >after &&
	test_cmp before after
'

test_expect_success 'usage errors: exit 2, nothing done' '
	(cd repo &&
	 test_status 2 ci-index load extra </dev/null 2>../err1 &&
	 test_status 2 ci-index build a b 2>../err2 &&
	 test_status 2 ci-index status extra 2>../err3 &&
	 test_status 2 ci-index frobnicate 2>../err4 &&
	 test_status 2 ci-index 2>../err5 &&
	 test_status 2 ci-index -j 0 status 2>../err6) &&
	test_grep "^ci-index: .*unknown command .frobnicate." err4 &&
	test_grep "^usage: ci-index " err5 &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'status to a full disk: exit 3' '
	(cd repo && test_status 3 ci-index status >/dev/full 2>../err) &&
	test_grep "^ci-index: " err
'

test_expect_success 'drop: deletes the index and what goes with it' '
	(cd repo && ci-index drop >../out 2>../err) &&
	test_must_be_empty out &&
	test_must_be_empty err &&
	! test -e repo/.ci-index/index.db &&
	! test -e repo/.ci-index/index.db-wal &&
	! test -e repo/.ci-index/index.db-shm &&
	! test -e repo/.ci-index/index.db.new &&
	! test -e repo/.ci-index/index.db.lock
'

test_expect_success 'drop without an index: exit 1 and a message' '
	root=$(cd repo && pwd -P) &&
	(cd repo && test_status 1 ci-index drop >../out 2>../err) &&
	test_must_be_empty out &&
	echo "ci-index: no index at '\''$root/.ci-index/index.db'\''" >expect &&
	test_cmp expect err
'

test_expect_success 'status without an index: exit 1 and a message saying to build' '
	(cd repo && test_status 1 ci-index status >../out 2>../err) &&
	test_must_be_empty out &&
	test_line_count = 1 err &&
	test_grep "^ci-index: no index at .*: run .ci-index build." err
'

test_expect_success 'update without an index builds one' '
	(cd repo && ci-index update) &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

# put_schema_version <db> <n>
put_schema_version() {
	sqlite3 "$1" "UPDATE meta SET value = '$2' WHERE key = 'schema_version'"
}

test_expect_success 'status on an index of another schema version: exit 3, run build' '
	put_schema_version repo/.ci-index/index.db 99 &&
	(cd repo && test_status 3 ci-index status >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "schema version 99" err &&
	test_grep "ci-index build" err
'

test_expect_success 'update on an index of another schema version rebuilds it' '
	(cd repo && ci-index update >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "ci-index: " err &&
	(cd repo && ci-index status) >st &&
	"$JQ" -e ".schema_version == 3 and .stale == 0" st &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'build on an index of another schema version replaces it' '
	put_schema_version repo/.ci-index/index.db 0 &&
	(cd repo && test_must_fail ci-index status 2>/dev/null) &&
	(cd repo && ci-index build) &&
	echo 3 >expect &&
	(cd repo && status_field schema_version) >actual &&
	test_cmp expect actual &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'an index of schema version 2: readers say build, update rebuilds it, history kept' '
	(cd repo && ci-index build && ci-couple history | ci-index load) &&
	put_schema_version repo/.ci-index/index.db 2 &&
	(cd repo && test_status 3 ci-index status >../out 2>../err) &&
	test_must_be_empty out &&
	test_grep "schema version 2, this ci reads version 3" err &&
	test_grep "ci-index build" err &&
	(cd repo && test_status 3 ci-rank parse 2>../err) &&
	test_grep "schema version 2" err &&
	(cd repo && ci-index update 2>../err) &&
	test_grep "rebuilding" err &&
	(cd repo && status_field schema_version) >actual &&
	echo 3 >expect &&
	test_cmp expect actual &&
	(cd repo && status_field commits) >actual &&
	git -C repo rev-list --count HEAD >expect &&
	test_cmp expect actual &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'chunk text is stored compressed when long, and read back whole' '
	git init -q ztext &&
	awk "BEGIN { print \"def compressible_function_name(x):\"; for (i = 0; i < 40; i++) print \"    x = x + \" i \"  # the same comment again\"; print \"    return x\"; print \"\"; print \"def tiny(): pass\" }" >ztext/long.py &&
	(cd ztext && git add . && git -c user.name=t -c user.email=t@t commit -qm z && ci-index build) &&
	sqlite3 ztext/.ci-index/index.db "SELECT name, typeof(text), length(text) < 1000 FROM chunks ORDER BY start_line" >actual &&
	printf "%s\n" "compressible_function_name|blob|1" "tiny|text|1" >expect &&
	test_cmp expect actual &&
	(cd ztext && ci-chunk long.py) | "$JQ" -r "select(._type == \"chunk\" and .name == \"compressible_function_name\") | .text" >expect &&
	test_line_count = 43 expect &&
	(cd ztext && ci-rank --format full --limit 1 compressible_function_name) | "$JQ" -r "select(._type == \"hit\") | .text" >actual &&
	test_cmp expect actual &&
	(cd ztext && ci-rank --limit 1 "same comment again") | "$JQ" -r "select(._type == \"hit\") | .name" >actual &&
	echo compressible_function_name >expect &&
	test_cmp expect actual
'

# garbage <file> [<offset>] [<bytes>]: overwrite with text that is no database
garbage() {
	awk "BEGIN { for (i = 0; i < ${3:-8192} / 16; i++) printf \"garbage garbage \" }" |
		dd of="$1" bs=1 seek="${2:-0}" conv=notrunc 2>/dev/null
}

test_expect_success 'status on a corrupt file: exit 3, run build' '
	garbage repo/.ci-index/index.db &&
	(cd repo && test_status 3 ci-index status >../out 2>../err) &&
	test_must_be_empty out &&
	test_line_count = 1 err &&
	test_grep "corrupt\|not a" err &&
	test_grep "ci-index build" err
'

test_expect_success 'update on a corrupt file rebuilds it' '
	(cd repo && ci-index update) &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'build on a corrupt file replaces it' '
	garbage repo/.ci-index/index.db &&
	(cd repo && ci-index build) &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_expect_success 'an empty file, or an SQLite database that is not an index' '
	: >repo/.ci-index/index.db &&
	(cd repo && test_status 3 ci-index status 2>../err) &&
	test_grep "ci-index build" err &&
	(cd repo && ci-index build) &&
	rm -f repo/.ci-index/index.db* &&
	sqlite3 repo/.ci-index/index.db "CREATE TABLE t(x); INSERT INTO t VALUES (1)" &&
	(cd repo && test_status 3 ci-index status 2>../err) &&
	test_grep "not a ci index" err &&
	(cd repo && ci-index update) &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

# the first page of a table (page size from the database)
table_offset() {
	sqlite3 "$1" "SELECT (min(pageno) - 1) * (SELECT page_size FROM pragma_page_size)
		FROM dbstat WHERE name = '$2'"
}

test_expect_success 'a corrupt table: status fails, update and build rebuild' '
	(cd repo && ci-index build) &&
	off=$(table_offset repo/.ci-index/index.db files) &&
	test "$off" -gt 0 &&
	garbage repo/.ci-index/index.db $off 4096 &&
	(cd repo && test_must_fail ci-index status >../out 2>../err) &&
	test_grep "ci-index: " err &&
	(cd repo && ci-index update) &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual &&
	off=$(table_offset repo/.ci-index/index.db chunks) &&
	garbage repo/.ci-index/index.db $off 4096 &&
	(cd repo && ci-index build) &&
	index_dump repo/.ci-index/index.db >actual &&
	test_cmp build.dump actual
'

test_done
