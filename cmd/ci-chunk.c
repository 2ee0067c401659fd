/*
 * ci-chunk: parse files with tree-sitter and write file, chunk, def, ref and import
 * records (NDJSON), the first stage of every ci pipeline.
 *
 * Shaped by whole repositories (the Linux kernel: 70k files, 1.2 GB): files are
 * listed first (sorted, so output does not depend on readdir or thread timing),
 * then N workers read and chunk them while the main thread writes each file's
 * records in list order; workers never run more than a window ahead of the writer,
 * so memory stays bounded whatever the tree.
 */
#include "core/common.h"
#include "parse/chunkrun.h"

#include <getopt.h>

static const char usage_text[] =
	"usage: ci-chunk [options] [<path>...]\n"
	"\n"
	"Parse files with tree-sitter and write file, chunk, def, ref and import records\n"
	"(NDJSON) for each.  With no <path>, the repository containing the current directory.\n"
	"\n"
	"      --chunks                write chunk records\n"
	"      --symbols               write def records (definitions)\n"
	"      --refs                  write ref records (references)\n"
	"      --imports               write import records\n"
	"      --no-files              do not write file records\n"
	"                              (without any of the four above, all kinds are written)\n"
	"      --files-from <file>     read the paths from <file> ('-': standard input), one a line\n"
	"      --max-chunk-lines <n>   split units longer than <n> lines (default 100)\n"
	"      --max-filesize <bytes>  skip files larger than this (default 1048576; 0: no limit)\n"
	"      --include-vendored      also read vendored and generated files\n"
	"      --no-ignore             do not honour .gitignore, .git/info/exclude\n"
	"      --strict                exit 3 if a file had to be chunked by lines or was unreadable\n"
	"  -j, --threads <n>           parse with <n> threads (default: the number of CPUs)\n"
	"  -v, --verbose               report skipped files on stderr\n"
	"  -h, --help                  show this help and exit\n"
	"      --version               show the version and exit\n";

enum {
	OPT_CHUNKS = 256, OPT_SYMBOLS, OPT_REFS, OPT_IMPORTS, OPT_NO_FILES, OPT_FILES_FROM,
	OPT_MAX_LINES, OPT_MAX_SIZE, OPT_VENDORED, OPT_NO_IGNORE, OPT_STRICT,
};

static const struct option long_options[] = {
	{ "chunks", no_argument, NULL, OPT_CHUNKS },
	{ "symbols", no_argument, NULL, OPT_SYMBOLS },
	{ "refs", no_argument, NULL, OPT_REFS },
	{ "imports", no_argument, NULL, OPT_IMPORTS },
	{ "no-files", no_argument, NULL, OPT_NO_FILES },
	{ "files-from", required_argument, NULL, OPT_FILES_FROM },
	{ "max-chunk-lines", required_argument, NULL, OPT_MAX_LINES },
	{ "max-filesize", required_argument, NULL, OPT_MAX_SIZE },
	{ "include-vendored", no_argument, NULL, OPT_VENDORED },
	{ "no-ignore", no_argument, NULL, OPT_NO_IGNORE },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "threads", required_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct options {
	struct chunk_opts chunk;	/* what to write, chunk size */
	struct walk_opts walk;		/* walker rules */
	const char *files_from;		/* --files-from, or NULL */
	int strict;			/* --strict */
	int threads;			/* -j */
};

struct out_state {
	int degraded;		/* files chunked by lines or unreadable */
	size_t read_nr;		/* files read */
	unsigned long skipped[WALK_SKIP_MAX];	/* content-based skips */
};

/* Write one file's records and warnings, in list order. */
static int write_result(size_t i, const struct chunk_result *r, void *data)
{
	struct out_state *st = data;

	(void)i;
	if (r->warnings_len) {
		fflush(stdout);
		fwrite(r->warnings, 1, r->warnings_len, stderr);
	}
	if (r->degraded)
		st->degraded++;
	if (r->skipped)
		st->skipped[r->skipped]++;
	else if (r->records_len)
		st->read_nr++;
	if (r->records_len && fwrite(r->records, 1, r->records_len, stdout) != r->records_len)
		return -1;
	return ferror(stdout) ? -1 : 0;
}

/* Add a user-named path (file or directory) to the list. */
static int add_path(struct walker *w, const char *arg, struct walk_list *list)
{
	char *rel;
	int rc;

	if (walker_relpath(w, arg, &rel) < 0)
		return -1;
	rc = walker_walk(w, rel, 1, list);
	free(rel);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct walker w;
	struct walk_list list = { 0 }, all = { 0 };
	size_t i, read_nr = 0;
	unsigned want = 0;
	int c, errors = 0, degraded = 0, ret = EXIT_OK;
	struct out_state st;
	struct import_ctx ictx = { 0 };
	struct fileset fs;
	const char **paths = NULL;

	util_init(argv[0]);
	list_options(argc, argv, long_options);
	opterr = 0;
	memset(&o, 0, sizeof(o));
	o.chunk.max_lines = CHUNK_DEFAULT_MAX_LINES;
	o.walk.max_filesize = WALK_DEFAULT_MAX_FILESIZE;
	o.threads = online_cpus();

	while ((c = getopt_long(argc, argv, ":j:vh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_CHUNKS: want |= CHUNK_WANT_CHUNKS; break;
		case OPT_SYMBOLS: want |= CHUNK_WANT_DEFS; break;
		case OPT_REFS: want |= CHUNK_WANT_REFS; break;
		case OPT_IMPORTS: want |= CHUNK_WANT_IMPORTS; break;
		case OPT_NO_FILES: want |= 0x100; break;
		case OPT_FILES_FROM: o.files_from = optarg; break;
		case OPT_MAX_LINES:
			o.chunk.max_lines = (int)parse_long_arg(usage_text, "--max-chunk-lines",
								optarg, 2, 100000);
			break;
		case OPT_MAX_SIZE:
			o.walk.max_filesize = (uint64_t)parse_long_arg(usage_text, "--max-filesize",
								       optarg, 0, 1L << 40);
			break;
		case OPT_VENDORED: o.walk.include_vendored = 1; break;
		case OPT_NO_IGNORE: o.walk.no_ignore = 1; break;
		case OPT_STRICT: o.strict = 1; break;
		case 'j':
			o.threads = (int)parse_long_arg(usage_text, "--threads", optarg, 1, 256);
			break;
		case 'v': verbosity++; break;
		case OPT_VERSION:
			return print_version("ci-chunk");
		case 'h':
			fputs(usage_text, stdout);
			return close_stdout(EXIT_OK);
		default:
			usage_error(usage_text, "%s", bad_option(c, argc, argv));
		}
	}
	o.chunk.want = (want & ~0x100u) ? (want & ~0x100u) | CHUNK_WANT_FILES : CHUNK_WANT_ALL;
	if (want & 0x100)
		o.chunk.want &= ~(unsigned)CHUNK_WANT_FILES;
	if (!o.chunk.want)
		usage_error(usage_text, "--no-files leaves nothing to write");

	if (walker_open(&w, ".", &o.walk) < 0)
		return EXIT_IO;

	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (add_path(&w, argv[i], &list) < 0)
			errors++;
	if (o.files_from) {
		FILE *f = strcmp(o.files_from, "-") ? fopen(o.files_from, "r") : stdin;
		struct buf line = BUF_INIT;
		int ch;

		if (!f) {
			error_errno("cannot open '%s'", o.files_from);
			walker_close(&w);
			return EXIT_IO;
		}
		for (;;) {
			buf_reset(&line);
			while ((ch = getc(f)) != EOF && ch != '\n')
				buf_addch(&line, ch);
			if (line.len && line.buf[line.len - 1] == '\r')
				buf_setlen(&line, line.len - 1);
			if (line.len && add_path(&w, line.buf, &list) < 0)
				errors++;
			if (ch == EOF)
				break;
		}
		if (ferror(f))
			errors++, error_errno("cannot read '%s'", o.files_from);
		if (f != stdin)
			fclose(f);
		buf_release(&line);
	}
	if (optind == argc && !o.files_from)
		walker_walk(&w, "", 0, &list);

	walk_list_finish(&list);

	/*
	 * Every file of the repository is a possible import target: with paths
	 * given, walk the whole tree for the list (only when imports are wanted).
	 */
	if ((optind < argc || o.files_from) && (o.chunk.want & CHUNK_WANT_IMPORTS)) {
		walker_walk(&w, "", 0, &all);
		walk_list_finish(&all);
	}
	{
		const struct walk_list *tl = all.files_nr ? &all : &list;
		paths = walk_list_paths(tl);
		fs.paths = paths;
		fs.nr = tl->files_nr;
	}
	ictx.root = w.root;
	ictx.files = &fs;
	if (o.chunk.want & CHUNK_WANT_IMPORTS)
		import_ctx_load(&ictx);

	memset(&st, 0, sizeof(st));
	if (chunk_run(&w, &list, &o.chunk, &ictx, o.threads, NULL, write_result, &st) < 0)
		ret = EXIT_IO;
	degraded = st.degraded;
	read_nr = st.read_nr;
	for (i = 0; i < WALK_SKIP_MAX; i++)
		list.skipped[i] += st.skipped[i];
	if (verbosity) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "%zu files read", read_nr);
		for (i = 1; i < WALK_SKIP_MAX; i++)
			if (list.skipped[i])
				buf_addf(&b, ", %lu %s", list.skipped[i], walk_skip_name((enum walk_skip)i));
		fprintf(stderr, "%s: %s\n", progname, b.buf);
		buf_release(&b);
	}
	if (ret == EXIT_OK) {
		if (errors)
			ret = EXIT_IO;
		else if (o.strict && degraded)
			ret = EXIT_IO;
		else if (!read_nr) {
			error("no files to read%s", list.files_nr ? " (all skipped; -v says why)" :
			      optind == argc ? " in this repository" : "");
			ret = EXIT_NOTHING;
		}
	}
	import_ctx_release(&ictx);
	free(paths);
	walk_list_release(&list);
	walk_list_release(&all);
	walker_close(&w);
	return close_stdout(ret);
}
