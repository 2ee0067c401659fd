# tests/gstore-lib.sh: what the tests of the incremental graph store (t0983,
# t0984) compare: an index's stored graph answers against a fresh build's.
# Sourced after lib.sh.

# tables <dir>: the stored answers of dir's index, ids resolved
tables() {
	sqlite3 "$1/.ci-index/index.db" "
	SELECT f.path, d.name, d.kind, d.line, d.col, g.uses, g.self_calls, g.namesake_calls, g.entry
	FROM graph_defs g JOIN graph_files f ON f.id = g.fid JOIN defs d ON d.rowid = g.def ORDER BY 1, 2, 3, 4, 5;
	SELECT fa.path, fb.path, c.calls FROM graph_calls c JOIN graph_files fa ON fa.id = c.a
	JOIN graph_files fb ON fb.id = c.b ORDER BY 1, 2;
	SELECT path FROM graph_files ORDER BY 1;
	SELECT tok FROM graph_prefixes ORDER BY 1;
	SELECT version FROM graph_stamp; SELECT version FROM graph_base"
}

# answers <dir>: dead (every kind too) and arch, messages and statuses
answers() {
	for a in dead "--kind variable dead" "--lang c dead" arch; do
		(cd "$1" && ci-refs --json $a 2>&1; echo "exit $?") || return 1
	done
}

# same_as_built: repo's stored tables and answers are a fresh build's
same_as_built() {
	rm -rf fresh && cp -R repo fresh && rm -rf fresh/.ci-index &&
	(cd fresh && ci-index build 2>/dev/null) &&
	tables repo >t.updated && tables fresh >t.built &&
	test "$(wc -l <t.built)" -gt 10 &&
	test_cmp t.built t.updated &&
	answers repo >a.updated && answers fresh >a.built &&
	grep -q "\"_type\":\"dead\"" a.built &&
	test_cmp a.built a.updated
}

# update: ci-index -v update, its graph store line into path
update() {
	(cd repo && ci-index -v update 2>&1) >log &&
	grep "graph store:" log >path
}
