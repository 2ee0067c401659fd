#!/usr/bin/python3
"""graph-clang.py: call edges of a C repository according to clang.

Usage: graph-clang.py <repo>      (Debian python3-clang-14 and libclang1-14)

Every translation unit of the repository is parsed by libclang (the library
clangd is built on), with its command line from the repository's
compile_commands.json (at the top or under build/) when there is one, else
from a per-file list made here: `cc -std=gnu11 -I<every directory holding a
tracked .h> <file>.c` for each tracked .c file, plus $GRAPH_CFLAGS.  A first
pass records every function definition by its USR (the cross-translation-unit
key clangd's index uses: a static function's USR names its file); a second
pass takes every call expression whose callee is a function named in the
source text (not produced by a macro's expansion: those are calls ci cannot
see without a preprocessor) and, when the function is defined in a tracked
file, writes one line {"path":..,"line":..,"def_path":..,"def_line":..}: the
call's file and the line of the callee's name, the definition's file and the
line of its name.  Sorted, unique.  Then the text clang does not read as
code, where it cannot judge a call ci finds: one line
{"path":..,"skip_from":..,"skip_to":..} for each #define (its body) and each
region an #if left out (clang_getAllSkippedRanges).  Used by bench/graph.sh
as the reference for ci-refs callers on C.  Files that clang cannot fully
parse still give the calls it parsed; their count goes to stderr.
"""
import json
import os
import shlex
import subprocess
import sys

from ctypes import POINTER, Structure, c_uint

import clang.cindex as ci

root = os.path.abspath(sys.argv[1])
files = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], capture_output=True,
                       text=True, check=True).stdout.split()
fileset = set(files)
index = ci.Index.create()


def commands():
    """(file, args) of every translation unit."""
    for cdb in ("compile_commands.json", "build/compile_commands.json"):
        p = os.path.join(root, cdb)
        if os.path.exists(p):
            out = []
            for e in json.load(open(p)):
                args = e.get("arguments") or shlex.split(e["command"])
                f = os.path.normpath(os.path.join(e["directory"], e["file"]))
                # drop the compiler, the file and the output
                keep, skip = [], False
                for a in args[1:]:
                    if skip:
                        skip = False
                    elif a == "-o":
                        skip = True
                    elif a != "-c" and os.path.normpath(os.path.join(e["directory"], a)) != f:
                        keep.append(a)
                out.append((f, ["-working-directory=" + e["directory"]] + keep))
            return out
    dirs = sorted({os.path.dirname(f) for f in files if f.endswith(".h")})
    inc = ["-I" + os.path.join(root, d) for d in dirs] + ["-I" + root]
    extra = shlex.split(os.environ.get("GRAPH_CFLAGS", ""))
    return [(os.path.join(root, f), ["-std=gnu11"] + inc + extra) for f in files if f.endswith(".c")]


def rel(loc):
    """The tracked file of a location, or None."""
    if not loc.file:
        return None
    r = os.path.relpath(os.path.realpath(loc.file.name), os.path.realpath(root))
    return r if r in fileset else None


class RangeList(Structure):
    _fields_ = [("count", c_uint), ("ranges", POINTER(ci.SourceRange))]


ci.conf.lib.clang_getAllSkippedRanges.argtypes = [ci.TranslationUnit]
ci.conf.lib.clang_getAllSkippedRanges.restype = POINTER(RangeList)
ci.conf.lib.clang_disposeSourceRangeList.argtypes = [POINTER(RangeList)]

tus = []
bad = 0
skips = set()
for f, args in commands():
    try:
        tu = index.parse(f, args=args, options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    except ci.TranslationUnitLoadError:
        bad += 1
        continue
    if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
        bad += 1
    tus.append(tu)
    rl = ci.conf.lib.clang_getAllSkippedRanges(tu)
    for i in range(rl.contents.count):
        r = rl.contents.ranges[i]
        p = rel(r.start)
        if p:
            skips.add((p, r.start.line, r.end.line))
    ci.conf.lib.clang_disposeSourceRangeList(rl)
    for c in tu.cursor.get_children():
        if c.kind == ci.CursorKind.MACRO_DEFINITION:
            p = rel(c.extent.start)
            if p:
                skips.add((p, c.extent.start.line, c.extent.end.line))

# pass 1: the function definitions, by USR
defs = {}
for tu in tus:
    for c in tu.cursor.walk_preorder():
        if c.kind == ci.CursorKind.FUNCTION_DECL and c.is_definition():
            r = rel(c.location)
            if r:
                defs.setdefault(c.get_usr(), (r, c.location.line))

# pass 2: the calls written in the text
edges = set()
for tu in tus:
    for c in tu.cursor.walk_preorder():
        if c.kind != ci.CursorKind.CALL_EXPR:
            continue
        f = c.referenced
        if f is None or f.kind != ci.CursorKind.FUNCTION_DECL:
            continue
        d = defs.get(f.get_usr())
        if not d:
            continue
        # the callee's name: the first DECL_REF_EXPR below the call (through casts, parentheses)
        ref = next((x for x in c.walk_preorder() if x.kind == ci.CursorKind.DECL_REF_EXPR
                    and x.spelling == f.spelling), None)
        if ref is None:
            continue
        loc = ref.location
        r = rel(loc)
        if not r:
            continue
        # spelled where it is: not the product of a macro's expansion
        tok = next(iter(ref.get_tokens()), None)
        if tok is None or tok.spelling != f.spelling or tok.location.line != loc.line:
            continue
        edges.add((r, loc.line, d[0], d[1]))
if bad:
    print("graph-clang.py: %d of %d translation units had errors (their parsed calls are kept)"
          % (bad, len(tus)), file=sys.stderr)
for e in sorted(edges):
    print(json.dumps({"path": e[0], "line": e[1], "def_path": e[2], "def_line": e[3]}))
for k in sorted(skips):
    print(json.dumps({"path": k[0], "skip_from": k[1], "skip_to": k[2]}))
