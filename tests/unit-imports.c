/*
 * unit-imports.c: TAP tests of import_resolve() and import_file_exists().
 *
 * Most cases run against a file set built in memory; Go (whose go.mod is read
 * from disk) and the no-file-set mode run against a fixture written to a
 * temporary directory, which also holds a file outside the root to check that
 * nothing outside the root is ever returned.
 */
#include "core/common.h"
#include "parse/imports.h"
#include "unit-imports-lib.h"

static void is_int(int got, int want, const char *desc)
{
	printf("%sok %d - %s\n", got == want ? "" : "not ", ++test_nr, desc);
	if (got != want) {
		printf("#   got %d, expected %d\n", got, want);
		failures++;
	}
}

/* The repository of the in-memory cases (sorted by main()). */
static const char *repo_files[] = {
	/* C and C++ */
	"src/a.h", "src/b.c", "src/util/u.h", "include/lib/api.h", "top.h", "main.cpp",
	"deep/only/unique.h", "x/dup.h", "y/dup.h", "deep/rank/signal.h", "deep/rank/r.c",
	"deep/cpp/vector",
	/* Python */
	"app.py", "pkg/__init__.py", "pkg/mod.py", "pkg/sub/__init__.py", "pkg/sub/leaf.py",
	"src/srcpkg/__init__.py", "src/srcpkg/m.py", "lib/libmod.py",
	"scripts/run.py", "scripts/helper.py", "deep/nest/uniq_py.py",
	"req/__init__.py", "req/api.py", "req/sessions.py", "req/models.py",
	"src/_pt/__init__.py", "src/_pt/pathlib.py", "src/_pt/main.py", "src/_pt/sub/__init__.py",
	"ns/sub/nsmod.py", "deep/pk/__init__.py", "deep/pk/m2.py",
	"proj/pyproject.toml", "proj/toppkg/__init__.py",
	/* JavaScript, TypeScript */
	"web/app.ts", "web/util.ts", "web/comp.tsx", "web/lib/index.ts", "web/data.json",
	"web/legacy.js", "web/esm.mjs", "web/types.d.ts", "web/exact.css", "web/m.ts",
	"web/v.tsx", "shared/s.js",
	/* Rust */
	"src/lib.rs", "src/a.rs", "src/a/b.rs", "src/a/c/mod.rs", "src/a/inner.rs",
	"src/net/mod.rs", "src/net/tcp.rs", "src/foo.rs",
	"crates/k/src/lib.rs", "crates/k/src/kmod.rs",
	/* Java */
	"app/src/main/java/com/ex/app/A.java", "app/src/main/java/com/ex/util/Helper.java",
	"lib/src/main/java/com/ex/model/M.java", "x/dup/D.java", "y/dup/D.java",
	/* Ruby */
	"lib/thing.rb", "lib/foo/version.rb", "spec/helper.rb", "spec/x_spec.rb",
	"root.rb", "up.rb",
	/* PHP */
	"public/index.php", "public/inc/header.php", "config.php", "src/Models/User.php",
	"app/Http/Kernel.php",
	/* shell */
	"scripts/lib/common.sh", "lib/util.sh",
};

static const struct tcase mem_cases[] = {
	/* C and C++ */
	{ "c", "src/b.c", "a.h", "src/a.h" },
	{ "c", "src/b.c", "top.h", "top.h" },
	{ "c", "src/b.c", "lib/api.h", "include/lib/api.h" },
	{ "cpp", "main.cpp", "util/u.h", "src/util/u.h" },
	{ "c", "src/b.c", "unique.h", "deep/only/unique.h" },
	{ "c", "src/b.c", "only/unique.h", "deep/only/unique.h" },
	{ "c", "src/b.c", "dup.h", NULL },
	{ "c", "src/b.c", "stdio.h", NULL },
	/* a standard header is not the repository's namesake elsewhere ... */
	{ "c", "src/b.c", "signal.h", NULL },
	{ "cpp", "main.cpp", "vector", NULL },
	/* ... but the including file's own directory's is (#include "signal.h") */
	{ "c", "deep/rank/r.c", "signal.h", "deep/rank/signal.h" },
	{ "c", "src/b.c", "./../top.h", "top.h" },
	{ "c", "src/b.c", "util/../a.h", "src/a.h" },
	{ "c", "src/b.c", "util/./u.h", "src/util/u.h" },
	{ "c", "src/b.c", "../../etc/passwd", NULL },
	{ "c", "src/b.c", "/etc/passwd", NULL },
	{ "c", "src/b.c", "../../src/a.h", NULL },
	/* Python */
	{ "python", "app.py", "pkg.mod", "pkg/mod.py" },
	{ "python", "app.py", "pkg.sub", "pkg/sub/__init__.py" },
	{ "python", "app.py", "pkg", "pkg/__init__.py" },
	{ "python", "app.py", "pkg.mod.func", "pkg/mod.py" },
	{ "python", "app.py", "srcpkg.m", "src/srcpkg/m.py" },
	{ "python", "app.py", "libmod", "lib/libmod.py" },
	{ "python", "scripts/run.py", "helper", "scripts/helper.py" },
	/* deep/nest is no package (no __init__.py) nor on the path */
	{ "python", "app.py", "nest.uniq_py", NULL },
	{ "python", "app.py", "nest.uniq_py.func", NULL },
	{ "python", "app.py", "pk.m2", "deep/pk/m2.py" },	/* a package, by suffix */
	{ "python", "app.py", "pk.m2.f", "deep/pk/m2.py" },
	{ "python", "app.py", "m2", NULL },	/* one level: never by suffix */
	{ "python", "app.py", "toppkg", "proj/toppkg/__init__.py" },	/* under a project root */
	/* the standard library is not a package's own module of that name */
	{ "python", "src/_pt/main.py", "pathlib", NULL },
	{ "python", "src/_pt/sub/__init__.py", "pathlib", NULL },
	{ "python", "app.py", "pathlib", NULL },
	{ "python", "src/_pt/main.py", "_pt.pathlib", "src/_pt/pathlib.py" },
	{ "python", "src/_pt/main.py", ".pathlib", "src/_pt/pathlib.py" },
	{ "python", "src/_pt/sub/__init__.py", "..pathlib", "src/_pt/pathlib.py" },
	{ "python", "pkg/mod.py", "sub", NULL },	/* no implicit relative imports */
	/* namespace packages (no __init__.py) */
	{ "python", "app.py", "ns.sub.nsmod", "ns/sub/nsmod.py" },
	{ "python", "app.py", "ns.sub.nsmod.name", "ns/sub/nsmod.py" },
	{ "python", "app.py", "ns.sub", NULL },
	{ "python", "app.py", "os", NULL },
	{ "python", "app.py", "os.path", NULL },
	{ "python", "pkg/sub/leaf.py", ".", "pkg/sub/__init__.py" },
	{ "python", "pkg/sub/leaf.py", "..", "pkg/__init__.py" },
	{ "python", "pkg/sub/leaf.py", "..mod", "pkg/mod.py" },
	{ "python", "pkg/mod.py", ".sub.leaf", "pkg/sub/leaf.py" },
	{ "python", "pkg/mod.py", ".sub.leaf.name", "pkg/sub/leaf.py" },
	{ "python", "pkg/mod.py", ".nothere", NULL },
	{ "python", "pkg/mod.py", "....x", NULL },
	{ "python", "pkg/mod.py", "../../etc/passwd", NULL },
	/* JavaScript, TypeScript */
	{ "typescript", "web/app.ts", "./util", "web/util.ts" },
	{ "typescript", "web/app.ts", "./comp", "web/comp.tsx" },
	{ "typescript", "web/app.ts", "./lib", "web/lib/index.ts" },
	{ "typescript", "web/app.ts", "./lib/", "web/lib/index.ts" },
	{ "typescript", "web/app.ts", "./data.json", "web/data.json" },
	{ "typescript", "web/app.ts", "./data", "web/data.json" },
	{ "javascript", "web/legacy.js", "./esm", "web/esm.mjs" },
	{ "typescript", "web/app.ts", "./legacy", "web/legacy.js" },
	{ "typescript", "web/app.ts", "./types", "web/types.d.ts" },
	{ "typescript", "web/app.ts", "./m.js", "web/m.ts" },
	{ "tsx", "web/comp.tsx", "./v.js", "web/v.tsx" },
	{ "typescript", "web/app.ts", "./exact.css", "web/exact.css" },
	{ "typescript", "web/app.ts", "../shared/s", "shared/s.js" },
	{ "javascript", "web/legacy.js", "/shared/s.js", "shared/s.js" },
	{ "typescript", "web/app.ts", "react", NULL },
	{ "typescript", "web/app.ts", "@scope/pkg", NULL },
	{ "typescript", "web/app.ts", "util", NULL },
	{ "typescript", "web/app.ts", "./missing", NULL },
	{ "javascript", "web/legacy.js", "../../../etc/passwd", NULL },
	{ "javascript", "web/legacy.js", "/../etc/passwd", NULL },
	/* Rust */
	{ "rust", "src/lib.rs", "crate::a::b", "src/a/b.rs" },
	{ "rust", "src/lib.rs", "crate::a::b::Thing", "src/a/b.rs" },
	{ "rust", "src/lib.rs", "crate::a::c", "src/a/c/mod.rs" },
	{ "rust", "src/lib.rs", "crate::a::Item", "src/a.rs" },
	{ "rust", "src/a/b.rs", "crate::net::Socket", "src/net/mod.rs" },
	{ "rust", "src/a.rs", "crate::Thing", "src/lib.rs" },
	{ "rust", "src/lib.rs", "crate::Thing", NULL },	/* itself */
	{ "rust", "src/lib.rs", "foo", "src/foo.rs" },
	{ "rust", "src/lib.rs", "net", "src/net/mod.rs" },
	{ "rust", "src/a.rs", "inner", "src/a/inner.rs" },
	{ "rust", "src/a.rs", "foo", "src/foo.rs" },
	{ "rust", "src/net/mod.rs", "tcp", "src/net/tcp.rs" },
	{ "rust", "src/a/b.rs", "super::inner", "src/a/inner.rs" },
	{ "rust", "src/a/b.rs", "super::super::foo", "src/foo.rs" },
	{ "rust", "src/a/b.rs", "super::Thing", "src/a.rs" },
	{ "rust", "src/net/mod.rs", "self::tcp::Conn", "src/net/tcp.rs" },
	{ "rust", "src/net/tcp.rs", "self::x", NULL },	/* itself */
	{ "python", "pkg/__init__.py", ".", NULL },	/* itself */
	{ "rust", "src/lib.rs", "std::io", NULL },
	{ "rust", "src/lib.rs", "serde", NULL },
	{ "rust", "src/lib.rs", "::std::io", NULL },
	{ "rust", "src/lib.rs", "super::x", NULL },
	{ "rust", "crates/k/src/lib.rs", "crate::kmod", "crates/k/src/kmod.rs" },
	{ "rust", "crates/k/src/lib.rs", "crate::a::b", NULL },
	/* Java */
	{ "java", "app/src/main/java/com/ex/app/A.java", "com.ex.util.Helper",
	  "app/src/main/java/com/ex/util/Helper.java" },
	{ "java", "app/src/main/java/com/ex/app/A.java", "com.ex.util.Helper.help",
	  "app/src/main/java/com/ex/util/Helper.java" },
	{ "java", "app/src/main/java/com/ex/app/A.java", "com.ex.model.M",
	  "lib/src/main/java/com/ex/model/M.java" },
	{ "java", "app/src/main/java/com/ex/app/A.java", "com.ex.util.Helper.Inner.CONST",
	  "app/src/main/java/com/ex/util/Helper.java" },
	{ "java", "lib/src/main/java/com/ex/model/M.java", "com.ex.util.Helper",
	  "app/src/main/java/com/ex/util/Helper.java" },
	/* `import a.b.*` (the query drops ".*"): the package directory under a source
	   root (lib's is only known to a loaded configuration: unit-imports-config) */
	{ "java", "app/src/main/java/com/ex/app/A.java", "com.ex.model.*", NULL },
	{ "java", "app/src/main/java/com/ex/app/A.java", "com.ex.util", "app/src/main/java/com/ex/util" },
	{ "java", "app/src/main/java/com/ex/app/A.java", "java.util.List", NULL },
	{ "java", "app/src/main/java/com/ex/app/A.java", "dup.D", NULL },
	{ "java", "app/src/main/java/com/ex/app/A.java", "..etc.passwd", NULL },
	/* Ruby */
	{ "ruby", "spec/x_spec.rb", "helper", "spec/helper.rb" },
	{ "ruby", "spec/x_spec.rb", "helper.rb", "spec/helper.rb" },
	{ "ruby", "spec/x_spec.rb", "../up", "up.rb" },
	{ "ruby", "bin/tool.rb", "thing", "lib/thing.rb" },
	{ "ruby", "lib/foo.rb", "foo/version", "lib/foo/version.rb" },
	{ "ruby", "x.rb", "root", "root.rb" },
	{ "ruby", "x.rb", "json", NULL },
	{ "ruby", "spec/x_spec.rb", "..", NULL },
	{ "ruby", "spec/x_spec.rb", "../../etc/passwd", NULL },
	/* PHP */
	{ "php", "public/index.php", "inc/header.php", "public/inc/header.php" },
	{ "php", "public/index.php", "/inc/header.php", "public/inc/header.php" },
	{ "php", "public/index.php", "config.php", "config.php" },
	{ "php", "public/index.php", "../config.php", "config.php" },
	{ "php", "x.php", "App\\Http\\Kernel", "app/Http/Kernel.php" },
	{ "php", "x.php", "\\App\\Models\\User", "src/Models/User.php" },
	{ "php", "x.php", "Foo\\Bar", NULL },
	{ "php", "public/index.php", "../../etc/passwd", NULL },
	{ "php", "public/index.php", "/../../etc/passwd", NULL },
	/* C# */
	{ "csharp", "a.cs", "System.Text", NULL },
	{ "csharp", "a.cs", "App.Models", NULL },
	/* shell */
	{ "bash", "scripts/run.sh", "./lib/common.sh", "scripts/lib/common.sh" },
	{ "bash", "scripts/run.sh", "lib/util.sh", "lib/util.sh" },
	{ "bash", "scripts/run.sh", "../../etc/passwd", NULL },
	{ "bash", "scripts/run.sh", "/etc/passwd", NULL },
	{ "bash", "scripts/run.sh", "~/.bashrc", NULL },
	/* no rules */
	{ "cobol", "src/b.c", "a.h", NULL },
	{ "c", "src/b.c", "", NULL },
};

/* ---- a fixture on disk -------------------------------------------------------- */

static const char *disk_files[] = {
	"root/go.mod", "root/main.go", "root/pkg/util/util.go", "root/pkg/util/sub/s.go",
	"root/pkg/empty/README.md", "root/sub/go.mod", "root/sub/main.go",
	"root/sub/x/x.go", "root/src/a.h", "root/src/b.c", "root/deep/unique.h",
	"root/pkg/mod.py", "root/web/util.ts", "root/web/lib/index.ts",
	"root/web/dir.ts/keep", "outside.h",
};

static const struct tcase go_cases[] = {
	{ "go", "main.go", "example.com/m/pkg/util", "pkg/util" },
	{ "go", "pkg/util/util.go", "example.com/m/pkg/util/sub", "pkg/util/sub" },
	{ "go", "main.go", "example.com/m", "." },
	{ "go", "main.go", "example.com/m/pkg/empty", NULL },
	{ "go", "main.go", "example.com/m/pkg", NULL },
	{ "go", "main.go", "example.com/m/nothere", NULL },
	{ "go", "main.go", "example.com/mx/pkg/util", NULL },
	{ "go", "main.go", "fmt", NULL },
	{ "go", "main.go", "github.com/other/lib", NULL },
	{ "go", "main.go", "example.com/m/../../outside", NULL },
	{ "go", "main.go", "example.com/m/pkg/../pkg/util", NULL },
	{ "go", "sub/main.go", "example.com/other/x", "sub/x" },
	{ "go", "sub/main.go", "example.com/other", "sub" },
	{ "go", "sub/main.go", "example.com/m/pkg/util", NULL },
};

static const struct tcase disk_cases[] = {
	{ "c", "src/b.c", "a.h", "src/a.h" },
	{ "c", "src/b.c", "../src/./a.h", "src/a.h" },
	{ "c", "src/b.c", "../../outside.h", NULL },
	{ "c", "src/b.c", "../outside.h", NULL },
	{ "c", "src/b.c", "unique.h", NULL },	/* no suffix matching without a set */
	{ "c", "src/b.c", "src", NULL },	/* a directory */
	{ "python", "app.py", "pkg.mod", "pkg/mod.py" },
	{ "typescript", "web/app.ts", "./util", "web/util.ts" },
	{ "typescript", "web/app.ts", "./lib", "web/lib/index.ts" },
	{ "typescript", "web/app.ts", "./dir", NULL },
	{ "typescript", "web/app.ts", "../../outside.h", NULL },
};

/* `from module import name` (import_resolve_member()) */
static const struct {
	const char *from, *module, *name;	/* the import */
	const char *want, *want_target;		/* expected, or NULLs */
} member_cases[] = {
	{ "req/api.py", ".", "sessions", "req/sessions.py", ".sessions" },
	{ "req/api.py", ".", "models", "req/models.py", ".models" },
	{ "req/api.py", ".", "request", NULL, NULL },	/* a name in __init__.py */
	{ "req/api.py", ".sessions", "Session", NULL, NULL },
	{ "req/api.py", ".", "api", NULL, ".api" },	/* itself: a module, no edge */
	{ "req/api.py", ".", "*", NULL, NULL },
	{ "pkg/sub/leaf.py", "..", "mod", "pkg/mod.py", "..mod" },
	{ "pkg/sub/leaf.py", "..", "sub", "pkg/sub/__init__.py", "..sub" },
	{ "pkg/sub/leaf.py", "...", "x", NULL, NULL },	/* above the root */
	{ "app.py", "pkg", "mod", "pkg/mod.py", "pkg.mod" },
	{ "app.py", "pkg.sub", "leaf", "pkg/sub/leaf.py", "pkg.sub.leaf" },
	{ "app.py", "pkg", "func", NULL, NULL },
	{ "app.py", "ns.sub", "nsmod", "ns/sub/nsmod.py", "ns.sub.nsmod" },
	{ "app.py", "srcpkg", "m", "src/srcpkg/m.py", "srcpkg.m" },
	{ "src/_pt/main.py", "pathlib", "Path", NULL, NULL },
	{ "src/_pt/main.py", "os", "path", NULL, NULL },
};

static void run_member_cases(const struct import_ctx *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(member_cases); i++) {
		char *target = NULL, *desc;
		char *got = import_resolve_member(ctx, "python", member_cases[i].from,
						  member_cases[i].module, member_cases[i].name, &target);

		desc = xasprintf("python: %s: from %s import %s", member_cases[i].from,
				 member_cases[i].module, member_cases[i].name);
		is_path(got, member_cases[i].want, desc);
		free(desc);
		desc = xasprintf("python: %s: from %s import %s: target", member_cases[i].from,
				 member_cases[i].module, member_cases[i].name);
		is_path(target, member_cases[i].want_target, desc);
		free(desc);
	}
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	struct fileset set, disk_set;
	struct import_ctx ctx = { "/nonexistent-root", &set, NULL, NULL, NULL };
	struct import_ctx dctx = { 0 };
	const char *disk_paths[ARRAY_SIZE(disk_files)];
	struct thread_arg args[4];
	pthread_t threads[4];
	size_t n = 0;
	char *root;

	util_init(argv[0]);
	qsort(repo_files, ARRAY_SIZE(repo_files), sizeof(*repo_files), cmp_str);
	set.paths = repo_files;
	set.nr = ARRAY_SIZE(repo_files);

	tmpdir = xasprintf("%s/ci-unit-imports.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		die_code(99, "cannot create a temporary directory");
	for (size_t i = 0; i < ARRAY_SIZE(disk_files); i++)
		write_file(disk_files[i], !strcmp(disk_files[i], "root/go.mod") ?
			   "// the module\nmodule example.com/m // trailing comment\n\ngo 1.21\n" :
			   !strcmp(disk_files[i], "root/sub/go.mod") ?
			   "module \"example.com/other\"\n" : "x\n");
	root = xasprintf("%s/root", tmpdir);
	for (size_t i = 0; i < ARRAY_SIZE(disk_files); i++)
		if (!strncmp(disk_files[i], "root/", 5))
			disk_paths[n++] = disk_files[i] + 5;
	qsort(disk_paths, n, sizeof(*disk_paths), cmp_str);
	disk_set.paths = disk_paths;
	disk_set.nr = n;

	printf("1..%zu\n", ARRAY_SIZE(mem_cases) + 2 * ARRAY_SIZE(go_cases) +
	       ARRAY_SIZE(disk_cases) + 2 * ARRAY_SIZE(member_cases) + 12);

	run_cases(&ctx, mem_cases, ARRAY_SIZE(mem_cases), "");
	run_member_cases(&ctx);
	{
		char *t = (char *)"x";

		is_path(import_resolve_member(&ctx, "c", "src/b.c", "a", "b", &t), NULL,
			"member: not for C");
		is_int(t == NULL, 1, "member: target NULL when not found");
	}

	is_int(import_file_exists(&ctx, "src/a.h"), 1, "exists: src/a.h");
	is_int(import_file_exists(&ctx, "src/./util/../a.h"), 1, "exists: src/./util/../a.h");
	is_int(import_file_exists(&ctx, "src"), 0, "exists: a directory is not a file");
	is_int(import_file_exists(&ctx, "nope.h"), 0, "exists: nope.h");
	is_int(import_file_exists(&ctx, "../src/a.h"), 0, "exists: ../src/a.h");

	dctx.root = root;
	dctx.files = &disk_set;
	run_cases(&dctx, go_cases, ARRAY_SIZE(go_cases), "set, ");
	dctx.files = NULL;
	run_cases(&dctx, go_cases, ARRAY_SIZE(go_cases), "disk, ");
	run_cases(&dctx, disk_cases, ARRAY_SIZE(disk_cases), "disk, ");

	is_int(import_file_exists(&dctx, "src/a.h"), 1, "disk exists: src/a.h");
	is_int(import_file_exists(&dctx, "web/dir.ts"), 0, "disk exists: a directory");
	is_int(import_file_exists(&dctx, "../outside.h"), 0, "disk exists: ../outside.h");
	is_int(import_file_exists(&dctx, "/etc/passwd"), 0, "disk exists: /etc/passwd");

	dctx.files = &disk_set;
	for (size_t i = 0; i < ARRAY_SIZE(threads); i++) {
		args[i] = (struct thread_arg){ &dctx, go_cases, ARRAY_SIZE(go_cases), 500, 0 };
		if (pthread_create(&threads[i], NULL, resolve_many, &args[i]))
			die_code(99, "cannot create a thread");
	}
	n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(threads); i++) {
		pthread_join(threads[i], NULL);
		n += (size_t)args[i].bad;
	}
	is_int((int)n, 0, "go: concurrent resolutions agree");

	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
	free(tmpdir);
	return failures ? 1 : 0;
}
