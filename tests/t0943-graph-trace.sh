#!/bin/sh
# t0943-graph-trace: ci-refs trace follows calls bound to their definitions
# (libcommon/graph/cgraph.c, trace.c): the shortest path first, every hop's
# definition and call site, a namesake's calls not followed, exit 1 with a
# message when there is no path or no definition.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python || ! test_have_lang c; then
	test_skip 'trace' 'the python and c grammars are not compiled in'
	test_done
fi

test_expect_success 'setup: two routes from a handler to the store, a namesake beside them' '
	git init -q repo &&
	write_lines web.py "from svc import save, audit" "" "def handle(req):" "    save(req)" "    return audit(req)" &&
	write_lines svc.py "from store import put" "" "def save(x):" "    return put(x)" "" \
		"def audit(x):" "    return log(x)" "" "def log(x):" "    return put(x)" &&
	write_lines store.py "def put(x):" "    return x" &&
	write_lines other.py "class Cache:" "    def put(self, x):" "        return x" "" \
		"    def fill(self):" "        return self.put(1)" &&
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

# hops <args>: each path as "name@path:line" joined by " > ", the call sites after
hops() {
	(cd repo && ci-refs --json trace "$@") >out &&
	"$JQ" -r "[.rank, .length, ([.hops[] | \"\\(.name)@\\(.path):\\(.line)\"] | join(\" > \")),
		([.hops[1:][] | .call | \"\\(.path):\\(.line)/\\(.binding)\"] | join(\" \"))] | @tsv" out
}

test_expect_success 'trace handle put: the short path first, then the long one' '
	hops handle put >actual &&
	printf "1\t2\thandle@web.py:3 > save@svc.py:3 > put@store.py:1\tweb.py:4/import svc.py:4/import\n" >expect &&
	printf "2\t3\thandle@web.py:3 > audit@svc.py:6 > log@svc.py:9 > put@store.py:1\tweb.py:5/import svc.py:7/local svc.py:10/import\n" >>expect &&
	test_cmp expect actual
'

test_expect_success 'the records name from and to as asked; --limit 1 keeps the shortest' '
	(cd repo && ci-refs --json --limit 1 trace handle store.put) >out &&
	"$JQ" -c "[.from, .to, .rank, .length]" out >actual &&
	echo "[\"handle\",\"store.put\",1,2]" >expect &&
	test_cmp expect actual
'

test_expect_success '--depth 2 leaves out the path of three calls' '
	hops --depth 2 handle put >actual &&
	test_line_count = 1 actual
'

test_expect_success 'a method reaches its namesake only through self: Cache.fill to Cache.put, not store.put' '
	hops Cache.fill put >actual &&
	printf "1\t1\tfill@other.py:5 > put@other.py:2\tother.py:6/member\n" >expect &&
	test_cmp expect actual &&
	(cd repo && test_status 1 ci-refs trace handle Cache.put 2>../err) &&
	test_grep "no call path from .handle. to .Cache.put. within 8 calls" err
'

test_expect_success 'no path backwards: exit 1 and a message' '
	(cd repo && test_status 1 ci-refs trace put handle 2>../err) &&
	test_grep "no call path from .put. to .handle." err
'

test_expect_success 'a name without a definition: exit 1 naming it' '
	(cd repo && test_status 1 ci-refs trace handle nosuch 2>../err) &&
	test_grep "no definition of .nosuch. in the index" err &&
	(cd repo && test_status 1 ci-refs trace nosuch put 2>../err) &&
	test_grep "no definition of .nosuch. in the index" err
'

test_expect_success 'usage: two arguments, --depth 1-30' '
	(cd repo && test_status 2 ci-refs trace handle 2>../err) &&
	test_grep "trace takes two arguments" err &&
	(cd repo && test_status 2 ci-refs --depth 0 trace handle put 2>../err) &&
	test_grep "at least 1" err &&
	(cd repo && test_status 2 ci-refs --depth 5 impact web.py 2>../err) &&
	test_grep "between 0 and 3" err
'

test_expect_success 'C: through a header to the function with a body, one path, not one more for the prototype' '
	write_lines c/api.h "int api_get(int x);" &&
	write_lines c/api.c "#include \"api.h\"" "static int twice(int x) { return 2 * x; }" "int api_get(int x)" "{" "\treturn twice(x);" "}" &&
	write_lines c/main.c "#include \"api.h\"" "int main(void)" "{" "\treturn api_get(1);" "}" &&
	(cd repo && git add . && git commit -qm c && ci-index update 2>/dev/null) &&
	hops main twice >actual &&
	printf "1\t2\tmain@c/main.c:2 > api_get@c/api.c:3 > twice@c/api.c:2\tc/main.c:4/import c/api.c:5/local\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'callers and callees --depth: calls level by level, each with its depth' '
	(cd repo && ci-refs --json --depth 3 callers store.put) >out &&
	"$JQ" -r "[.depth, .path, .line, .scope, .name, .binding] | @tsv" out >actual &&
	cat >expect <<-\EOF &&
	1	svc.py	4	save	put	import
	1	svc.py	10	log	put	import
	2	svc.py	7	audit	log	local
	2	web.py	4	handle	save	import
	3	web.py	5	handle	audit	import
	EOF
	test_cmp expect actual &&
	(cd repo && ci-refs --json --depth 2 callees handle) >out &&
	"$JQ" -r "[.depth, .scope, .name] | @tsv" out >actual &&
	printf "1\thandle\tsave\n1\thandle\taudit\n2\tsave\tput\n2\taudit\tlog\n" >expect &&
	test_cmp expect actual &&
	(cd repo && test_status 2 ci-refs --depth 11 callers put 2>../err) &&
	test_grep "between 1 and 10 for callers" err
'

test_expect_success 'deterministic, and quiet on a closed pipe' '
	(cd repo && ci-refs --json trace handle put && ci-refs --json trace handle put) >two &&
	sort -u two >uniq && test_line_count = 2 uniq &&
	(cd repo && ci-refs --json trace handle put | head -1 >/dev/null 2>../err) &&
	test_must_be_empty err
'

test_done
