#!/bin/sh
# t0962-graph-impact-imports-index: the index keeps imports(resolved, path)
# and refs(name, blob_id) (share/schema.sql's imports_resolved_path and
# refs_name_blob), so that impact and the call walk read a file's importers,
# and a name's files, without the tables (Linux: impact of
# include/linux/slab.h:kmalloc 0.26 -> 0.16 s CPU, bench/README.md).  An
# index built before has imports(resolved) and refs(name) alone: impact then
# expands a level of 512 files or more by one pass over the imports, as it
# did; the answers are the same bytes either way, for a file and for a
# symbol, at each depth, and so are the callers.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'impact with either imports index' 'the c grammar is not compiled in'
	test_done
fi
if ! test_have_prog sqlite3; then
	test_skip 'impact with either imports index' 'no sqlite3 shell'
	test_done
fi

q() {
	sqlite3 repo/.ci-index/index.db "$1"
}

test_expect_success 'setup: core.h, 520 headers that include it, their .c files, a caller of a caller' '
	git init -q repo &&
	write_lines inc/core.h "int core_get(int x);" "int core_put(int x);" &&
	write_lines src/core.c "#include \"../inc/core.h\"" "int core_get(int x)" "{" "	return x;" "}" \
		"int core_put(int x)" "{" "	return core_get(x) + 1;" "}" &&
	i=0 &&
	while [ $i -lt 520 ]; do
		write_lines inc/h$i.h "#include \"core.h\"" "int w$i(int x);" &&
		write_lines src/c$i.c "#include \"../inc/core.h\"" "#include \"../inc/h$i.h\"" "int w$i(int x)" "{" \
			"	return core_get(x) + core_put(x);" "}"
		i=$((i + 1))
	done &&
	write_lines src/top.c "#include \"../inc/h7.h\"" "int top(void)" "{" "	return w7(1);" "}" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'a new index has imports(resolved, path) and refs(name, blob_id), not the one-column indexes' '
	q "SELECT name || \": \" || sql FROM sqlite_master WHERE type = '"'index'"' AND tbl_name IN ('"'imports'"', '"'refs'"') ORDER BY name" >actual &&
	cat >expect <<-\EOF &&
	imports_path: CREATE INDEX imports_path ON imports(path)
	imports_resolved_path: CREATE INDEX imports_resolved_path ON imports(resolved, path)
	refs_blob: CREATE INDEX refs_blob ON refs(blob_id)
	refs_name_blob: CREATE INDEX refs_name_blob ON refs(name, blob_id)
	EOF
	test_cmp expect actual
'

answers() {
	for a in inc/core.h src/core.c inc/h7.h src/core.c:core_get src/core.c:core_put inc/core.h:core_get; do
		for d in 1 2 3; do
			echo "== --depth $d impact $a" &&
			(cd repo && ci-refs --json --limit 10000 --depth $d impact $a) || return 1
		done
	done &&
	for n in core_get core_put w7; do
		echo "== callers $n" &&
		(cd repo && ci-refs --json --limit 10000 --depth 2 callers $n) || return 1
	done
}

test_expect_success 'the answers: every importer at its depth, the callers of a symbol first' '
	answers >new &&
	grep "^{" new | "$JQ" -r "select(.depth == 1) | .path" | sort -u >actual &&
	{ i=0; while [ $i -lt 520 ]; do echo inc/h$i.h; echo src/c$i.c; i=$((i + 1)); done
	  echo src/core.c; echo src/top.c; } | sort >expect &&
	test_cmp expect actual &&
	grep -c "\"call_depth\":1" new >calls &&
	test "$(cat calls)" -gt 1000
'

test_expect_success 'an index with imports(resolved) and refs(name) alone gives the same bytes' '
	q "DROP INDEX imports_resolved_path; CREATE INDEX imports_resolved ON imports(resolved);
	   DROP INDEX refs_name_blob; CREATE INDEX refs_name ON refs(name)" &&
	answers >old &&
	test_cmp new old
'

test_done
