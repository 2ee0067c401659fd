#!/bin/sh
# t0941-graph-c: C definitions and references where tree-sitter cannot see the
# preprocessor (libcommon/parse/cscan.c; its rules are unit-tested by
# tests/unit-cscan): an attribute macro such as __alloc_size(1) is no
# function's name or scope, a call in a function body is no definition (after
# an attribute macro, or after a loop macro `for_each_node(n) f(x);`), and the
# calls in #define bodies, continuation lines included, are references.  The
# fixture mirrors include/linux/slab.h (`<<-` strips its indentation).
. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'C graph' 'the c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: a slab.h look-alike, indexed' '
	git init -q repo &&
	cat >repo/slab.h <<-\EOF &&
	#define __alloc_size(x, ...) __attribute__((alloc_size(x)))
	void *__kmalloc(size_t size, gfp_t flags) __assume_kmalloc_alignment __alloc_size(1);

	static __always_inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)
	{
		return __kmalloc(size, flags);
	}

	static inline __alloc_size(1, 2) void *kmalloc_array(size_t n, size_t size, gfp_t flags)
	{
		size_t bytes;

		if (unlikely(check_mul_overflow(n, size, &bytes)))
			return NULL;
		return kmalloc(bytes, flags);
	}

	void *krealloc(const void *p, size_t new_size, gfp_t flags) __realloc_size(2);

	#define kmalloc_obj(x) \
		kmalloc(sizeof(x), \
			GFP_KERNEL)
	#define kzalloc_one(x) kmalloc(x, GFP_KERNEL | __GFP_ZERO)
	EOF
	cat >repo/mm.c <<-\EOF &&
	#include "slab.h"

	static void free_all(struct cg *cg)
	{
		int node;

		for_each_node(node)
			free_node_info(cg, node);
		kfree(cg);
	}

	void free_node_info(struct cg *cg, int node)
	{
		(void)kmalloc_array(1, 2, 0);
	}
	EOF
	(cd repo && git add . && git commit -qm init && ci-index build 2>/dev/null)
'

test_expect_success 'defs kmalloc: the one definition, no call; no attribute macro as a function' '
	(cd repo && ci-refs --json defs kmalloc) >out &&
	"$JQ" -c "{path, line, kind, scope}" out >actual &&
	echo "{\"path\":\"slab.h\",\"line\":4,\"kind\":\"function\",\"scope\":null}" >expect &&
	test_cmp_json expect actual &&
	(cd repo && ci-chunk --symbols --no-files slab.h mm.c) >out &&
	"$JQ" -r "select(.kind == \"function\") | \"\(.name) \(.line) \(.scope)\"" out >actual &&
	cat >expect <<-\EOF &&
	free_all 3 null
	free_node_info 12 null
	__kmalloc 2 null
	kmalloc 4 null
	kmalloc_array 9 null
	krealloc 18 null
	EOF
	test_cmp expect actual
'

test_expect_success 'refs kmalloc: in a function, in #define bodies and their continuation lines' '
	(cd repo && ci-refs --json refs kmalloc) >out &&
	"$JQ" -c "{path, line, col, scope}" out >actual &&
	cat >expect <<-\EOF &&
	{"path":"slab.h","line":15,"col":8,"scope":"kmalloc_array"}
	{"path":"slab.h","line":21,"col":1,"scope":null}
	{"path":"slab.h","line":23,"col":24,"scope":null}
	EOF
	test_cmp_json expect actual &&
	(cd repo && ci-refs --json refs free_node_info) >out &&
	"$JQ" -c "{path, line, kind, scope}" out >actual &&
	echo "{\"path\":\"mm.c\",\"line\":8,\"kind\":\"call\",\"scope\":\"free_all\"}" >expect &&
	test_cmp_json expect actual &&
	(cd repo && ci-refs --json refs __kmalloc) >out &&
	"$JQ" -c "{path, line, scope}" out >actual &&
	echo "{\"path\":\"slab.h\",\"line\":6,\"scope\":\"kmalloc\"}" >expect &&
	test_cmp_json expect actual
'

test_done
