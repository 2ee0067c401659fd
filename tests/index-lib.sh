# tests/index-lib.sh: what the index tests read from an index with sqlite3.
# Sourced after lib.sh.

# index_dump [--no-mtime] [--no-skipped] <db>: the contents of files, skipped,
# chunks, defs, refs and imports keyed by path (not by the ids of one database),
# and the trigrams of each file; --no-mtime leaves out the files' mtimes (an
# index of a commit has none), --no-skipped the files left out (records loaded
# from ci-chunk do not say them)
index_dump() {
	mt=", f.mtime" smt=", mtime" skipped=skipped
	while :; do
		case $1 in
		--no-mtime) mt= smt= ;;
		--no-skipped) skipped="skipped WHERE 0" ;;
		*) break ;;
		esac
		shift
	done
	sqlite3 -bail "$1" <<-EOF
	.mode quote
	SELECT 'file', f.path, b.blob, b.lang, b.size, b.lines, b.exact, b.segs, f.size$mt
		FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path;
	SELECT 'skipped', path, size$smt, reason FROM $skipped ORDER BY path;
	SELECT 'chunk', f.path, c.start_line, c.end_line, c.kind, c.name, c.scope, c.signature, c.text
		FROM files f JOIN chunks c ON c.blob_id = f.blob_id ORDER BY 2, 3, 4;
	SELECT 'def', f.path, d.line, d.col, d.name, d.kind, d.end_line, d.scope
		FROM files f JOIN defs d ON d.blob_id = f.blob_id ORDER BY 2, 3, 4, 5, 6, 7, 8;
	SELECT 'ref', f.path, r.line, r.col, r.name, r.kind, r.scope
		FROM files f JOIN refs r ON r.blob_id = f.blob_id ORDER BY 2, 3, 4, 5, 6, 7;
	SELECT 'import', path, line, target, resolved FROM imports ORDER BY 2, 3, 4, 5;
	CREATE VIRTUAL TABLE temp.tri USING fts5vocab(main, chunks_tri, instance);
	SELECT 'trigrams', f.path, t.seg, group_concat(t.term, ' ')
		FROM files f JOIN (SELECT DISTINCT doc >> 8 AS blob, doc & 255 AS seg, term FROM temp.tri ORDER BY 1, 2, 3) t
		ON t.blob = f.blob_id
		GROUP BY f.path, t.seg ORDER BY f.path, t.seg;
	EOF
}

# index_sql <db> <sql>: SQL on an index with ci's tokenizer (tests/index-sql.c)
index_sql() {
	"$CI_BUILD_DIR/tests/index-sql" "$@"
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
	SELECT 'import of no file', path FROM imports WHERE path NOT IN (SELECT path FROM files);
	SELECT 'path both indexed and skipped', path FROM files WHERE path IN (SELECT path FROM skipped);
	SELECT 'chunks do not tile', b.blob, b.lines, sum(c.end_line - c.start_line + 1), min(c.start_line)
		FROM blobs b LEFT JOIN chunks c ON c.blob_id = b.id GROUP BY b.id
		HAVING coalesce(sum(c.end_line - c.start_line + 1), 0) != b.lines
		    OR (b.lines > 0 AND min(c.start_line) != 1);
	SELECT 'chunk not in chunks_fts', id FROM chunks WHERE id NOT IN (SELECT id FROM chunks_fts_docsize);
	SELECT 'chunks_fts row without chunk', id FROM chunks_fts_docsize WHERE id NOT IN (SELECT id FROM chunks);
	SELECT 'blob not in chunks_tri', blob FROM blobs WHERE lines > 0 AND id NOT IN (SELECT id >> 8 FROM chunks_tri_docsize);
	SELECT 'chunks_tri row without blob', id FROM chunks_tri_docsize WHERE id >> 8 NOT IN (SELECT id FROM blobs);
	SELECT 'segments not as segs says', b.blob, count(t.id), length(b.segs) / 8 + 1
		FROM blobs b JOIN chunks_tri_docsize t ON t.id >> 8 = b.id GROUP BY b.id
		HAVING count(t.id) != coalesce(length(b.segs) / 8, 0) + 1 OR max(t.id & 255) != count(t.id) - 1;
	CREATE VIRTUAL TABLE temp.tri USING fts5vocab(main, chunks_tri, instance);
	SELECT DISTINCT 'trigram of no blob', doc FROM temp.tri WHERE doc >> 8 NOT IN (SELECT id FROM blobs);
	INSERT INTO chunks_tri(chunks_tri) VALUES ('integrity-check');
	EOF
	# term_df and chunk_sizes agree with chunks_fts, which the sqlite3 shell
	# cannot open (its tokenizer is ci's): the counts of fts5vocab, the sizes
	# of FTS5 itself (every row holding a term)
	index_sql "$1" "
	CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, row);
	SELECT 'term_df wrong', t.term, t.df, v.doc FROM term_df t LEFT JOIN temp.v v ON v.term = t.term
		WHERE coalesce(v.doc, 0) != t.df;
	WITH f AS MATERIALIZED (SELECT rowid AS id, fts_size(chunks_fts) AS sz FROM chunks_fts
		WHERE chunks_fts MATCH (SELECT coalesce(group_concat('\"' || term || '\"', ' OR '), 'ci_no_term')
					FROM temp.v))
	SELECT 'chunk size wrong', f.id, f.sz, size_at(s.sizes, f.id % 1024)
		FROM f LEFT JOIN chunk_sizes s ON s.block = f.id / 1024
		WHERE size_at(s.sizes, f.id % 1024) IS NOT f.sz;"
}

# gen_c <file> <name> <functions>: a C file of that many small functions, each
# calling helper()
gen_c() {
	awk -v name="$2" -v n="$3" 'BEGIN {
		printf "#include \"common.h\"\n\n"
		for (i = 0; i < n; i++)
			printf "int %s_%d(int x)\n{\n\treturn helper(x) + %d;\n}\n\n", name, i, i
	}' >"$1"
}

# gen_repo <n>: a git repository repo/ of n such files, src/f1.c ... src/f<n>.c,
# and the src/common.h they include, not yet committed
gen_repo() {
	mkdir -p repo/src &&
	(cd repo && git init -q) &&
	printf "int helper(int x);\n" >repo/src/common.h &&
	gen_repo_i_=1 &&
	while test $gen_repo_i_ -le "$1"; do
		gen_c repo/src/f$gen_repo_i_.c f$gen_repo_i_ 3 &&
		gen_repo_i_=$((gen_repo_i_ + 1)) || return 1
	done
}
