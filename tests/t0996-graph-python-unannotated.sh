#!/bin/sh
# t0996-graph-python-unannotated: `a.p.f()` where p is a @property with no
# return annotation (or a class attribute declared `p:` with nothing after the
# colon) crashed `ci-index build` in the call graph's Python resolver: the
# receiver's type was read from an annotation that is not there (a NULL passed
# to annotation_class(), a segmentation fault without ASan; found indexing
# structlog).  Now such a receiver has no known class: the call is left unbound
# (no guess), and the build succeeds.
. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'Python receivers without annotation' 'the python grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a property without a return annotation, used as a receiver' '
	git init -q repo &&
	cat >repo/m.py <<-\EOF &&
	class B:
	    def f(self):
	        return 1


	class A:
	    q: int

	    @property
	    def p(self):
	        return B()

	    def h(self):
	        return self.q.f()


	def g(a: A):
	    return a.p.f()


	def k(b: B):
	    return b.f()
	EOF
	(cd repo && ci-index --no-progress build 2>../err) &&
	test_must_be_empty err
'

test_expect_success 'the typed call is bound; the unannotated receivers are not, and nothing else breaks' '
	(cd repo && ci-refs callers f) >out &&
	jq -r "[.path, .line, .scope] | @tsv" out >got &&
	printf "m.py\t22\tk\n" >want &&
	test_cmp want got &&
	(cd repo && ci-refs callees g) >out2 &&
	jq -r ".binding" out2 >got2 &&
	echo null >want2 &&
	test_cmp want2 got2
'

test_done
