#!/bin/sh
# t0961-chunk-c-hidden: C constructs that made a function definition swallow
# the functions after it (Linux: 9 of the 21 definitions of kernel/ mm/ fs/
# net/ block/ lib/ holding a '}' in column 0, bench/README.md), parsed on a
# copy in which the chunker blanks what tree-sitter-c cannot read
# (libcommon/parse/cscan.c, cscan_hidden(); rules unit-tested by
# tests/unit-cscan): an #if group inside a function body whose branches each
# open a loop (lib/seq_buf.c), an if-else chain continued inside #ifdef
# (fs/f2fs/sysfs.c), braces split over two #ifdef groups (xfs_attr_leaf.c),
# lines that are a macro invocation alone with no ';' (kernel/trace/
# bpf_trace.c's BTF_ID_FLAGS, zstd's HUF_DGEN), and a #define continued over
# lines with a comment on each (net/core/pktgen.c).  Each function ends at its
# brace, and the calls in the branches kept are still references.  Kernel-style
# tabs: no <<-.  (split.c, the shape of xfs_attr3_leaf_moveents, is parsed
# right before too: on Linux, what made that function run 300 lines past its
# end is more of the file around it.)
. "$(dirname "$0")/lib.sh"

if ! test_have_lang c; then
	test_skip 'C hidden constructs' 'the c grammar is not compiled in'
	test_done
fi

test_expect_success 'setup: the six constructs, each followed by a function' '
	mkdir repo &&
	cat >repo/branches.c <<\EOF &&
int put_hex(const char *data, int len)
{
	int i, j = 0;

#ifdef __BIG_ENDIAN
	for (i = 0; i < len; i++) {
#else
	for (i = len - 1; i >= 0; i--) {
#endif
		emit_hi(data[i]);
		j++;
	}
	return j;
}

int after_loop(void)
{
	return 1;
}
EOF
	cat >repo/chain.c <<\EOF &&
static unsigned char *ptr_of(struct sbi *sbi, int type)
{
	if (type == GC_THREAD)
		return (unsigned char *)&sbi->gc_thread;
#if IS_ENABLED(CONFIG_FAULT_INJECTION)
	else if (type == FAULT_INFO)
		return (unsigned char *)fault_info(sbi);
#endif
	else if (type == CPRC_INFO)
		return (unsigned char *)cprc_info(sbi);
	return 0;
}

static int after_chain(void)
{
	return 2;
}
EOF
	cat >repo/split.c <<\EOF &&
void move_entries(struct leaf *s, int count)
{
	int i;

	for (i = 0; i < count; i++) {
#ifdef GROT
		if (s->flags & INCOMPLETE) {
			drop_entry(s, i);
		} else {
#endif /* GROT */
			copy_entry(s, i);
#ifdef GROT
		}
#endif /* GROT */
	}
	finish(s);
}

int after_split(void)
{
	return 3;
}
EOF
	cat >repo/lines.c <<\EOF &&
__diag_pop()

BTF_SET8_START(key_set)
BTF_ID_FLAGS(func, lookup_key, KF_ACQUIRE)
BTF_ID_FLAGS(func, key_put, KF_RELEASE)
BTF_SET8_END(key_set)

static int key_init(void)
{
	return register_set(&key_set);
}

HUF_DGEN(decompress_one)
HUF_DGEN(decompress_four)

size_t decompress(void *dst, int n)
{
	return decompress_one(dst, n);
}
EOF
	cat >repo/flags.c <<\EOF
#define PKT_FLAGS		\
	pf(IPV6)	/* IPv6 */	\
	pf(IPSRC_RND)	/* random */	\

#define pf(flag)	flag##_SHIFT,
enum pkt_flags {
	PKT_FLAGS
};
#undef pf

static int flags_show(int f)
{
	return show(f);
}

static int flags_store(int f)
{
	return store(f);
}
EOF
'

test_expect_success 'ci-chunk: each function ends at its closing brace' '
	(cd repo && ci-chunk --symbols --no-files branches.c chain.c split.c lines.c flags.c) >out &&
	"$JQ" -r "select(.kind == \"function\") | \"\(.path) \(.name) \(.line)-\(.end_line)\"" out >actual &&
	cat >expect <<-\EOF &&
	branches.c put_hex 1-14
	branches.c after_loop 16-19
	chain.c ptr_of 1-12
	chain.c after_chain 14-17
	flags.c flags_show 11-14
	flags.c flags_store 16-19
	lines.c key_init 8-11
	lines.c decompress 16-19
	split.c move_entries 1-17
	split.c after_split 19-22
	EOF
	test_cmp expect actual
'

test_expect_success 'ci-chunk: a macro giving a function its type, alone on the line over a prototype or a declarator, is no macro line (libyaml)' '
	printf "%s\n" "YAML_DECLARE(void)" "yaml_free(void *ptr);" "" "YAML_DECLARE(void)" "yaml_free(void *ptr)" "{" "	if (ptr) free(ptr);" "}" "" \
		"YAML_DECLARE(int)" "yaml_init(int *p," "	int n)" "{" "	yaml_free(p);" "	return n;" "}" >repo/decl.c &&
	(cd repo && ci-chunk --symbols --refs --no-files decl.c) >out &&
	"$JQ" -r "select(.kind == \"function\" or .kind == \"call\") | \"\(.kind) \(.name) \(.line)\"" out >actual &&
	printf "%s\n" "function yaml_free 2" "function yaml_free 5" "function yaml_init 11" "call free 7" "call yaml_free 14" >expect &&
	test_cmp expect actual
'

test_expect_success 'ci-chunk: the #define continued over commented lines is one macro' '
	(cd repo && ci-chunk --symbols --no-files flags.c) >out &&
	"$JQ" -r "select(.kind == \"macro\") | \"\(.name) \(.line)-\(.end_line)\"" out >actual &&
	cat >expect <<-\EOF &&
	PKT_FLAGS 1-4
	pf 5-5
	EOF
	test_cmp expect actual
'

test_expect_success 'ci-chunk: the calls of the code kept are references, with their function; so are the macro lines and the calls of a directive' '
	(cd repo && ci-chunk --refs --no-files branches.c chain.c lines.c split.c) >out &&
	"$JQ" -r "select(.kind == \"call\") | \"\(.path) \(.name) \(.line) \(.scope)\"" out >actual &&
	cat >expect <<-\EOF &&
	branches.c emit_hi 10 put_hex
	chain.c IS_ENABLED 5 ptr_of
	chain.c fault_info 7 ptr_of
	chain.c cprc_info 10 ptr_of
	lines.c __diag_pop 1 null
	lines.c BTF_SET8_START 3 null
	lines.c BTF_ID_FLAGS 4 null
	lines.c BTF_ID_FLAGS 5 null
	lines.c BTF_SET8_END 6 null
	lines.c register_set 10 key_init
	lines.c HUF_DGEN 13 null
	lines.c HUF_DGEN 14 null
	lines.c decompress_one 18 decompress
	split.c drop_entry 8 move_entries
	split.c copy_entry 11 move_entries
	split.c finish 16 move_entries
	EOF
	test_cmp expect actual
'

test_done
