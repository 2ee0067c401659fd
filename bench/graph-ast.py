#!/usr/bin/python3
"""graph-ast.py: an independent Python import graph, from the ast module.

Usage: graph-ast.py <repo>   (run from anywhere; paths are repo-relative)

Writes NDJSON: one {"_type":"edge","path":a,"resolved":b,"type_only":bool} per
import of a repository module by a repository module, then one
{"_type":"cycle","files":[...]} per strongly connected component of more than
one file (type-only edges left out), sorted.  The rules are written from the
language reference, not from ci's code: sys.path is the root, src/, lib/ and a
script's own directory (not a package's); `from m import n` imports m.n when
that is a module, else m; relative imports climb one package per extra dot;
`if TYPE_CHECKING:` bodies are type-only.  Imports inside functions count (they
run), as in ci.  Used by bench/graph.sh to check ci-refs deps and cycles.
"""
import ast
import json
import os
import subprocess
import sys

root = os.path.abspath(sys.argv[1])
files = subprocess.run(["git", "-C", root, "ls-files", "*.py"], capture_output=True,
                       text=True, check=True).stdout.split()
fileset = set(files)


def module_file(base, parts):
    """The file of module parts under directory base, or None."""
    p = "/".join([x for x in [base] + parts if x])
    if parts and p + ".py" in fileset:
        return p + ".py"
    if p and (p + "/__init__.py") in fileset:
        return p + "/__init__.py"
    return None


def is_package(d):
    return (d + "/__init__.py") in fileset


def resolve_abs(frm, name):
    parts = name.split(".")
    d = os.path.dirname(frm)
    bases = ["", "src", "lib"] + ([d] if d and not is_package(d) else [])
    for b in bases:
        f = module_file(b, parts)
        if f:
            return f
    return None


def resolve_rel(frm, level, name):
    d = os.path.dirname(frm)
    for _ in range(level - 1):
        if not d:
            return None
        d = os.path.dirname(d)
    parts = name.split(".") if name else []
    if not parts:
        return module_file(d, []) if d else None
    return module_file(d, parts)


def type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


edges = set()


def visit(frm, node, typed):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and type_checking(child.test):
            for s in child.body:
                visit_stmt(frm, s, True)
            for s in child.orelse:
                visit_stmt(frm, s, typed)
            continue
        visit_stmt(frm, child, typed)


def add(frm, to, typed):
    if to and to != frm:
        edges.add((frm, to, typed))


def visit_stmt(frm, s, typed):
    if isinstance(s, ast.Import):
        for a in s.names:
            f = resolve_abs(frm, a.name)
            if not f and "." in a.name:
                f = resolve_abs(frm, a.name.rsplit(".", 1)[0])
            add(frm, f, typed)
    elif isinstance(s, ast.ImportFrom):
        base = s.module or ""
        res = (lambda n: resolve_rel(frm, s.level, n)) if s.level else \
            (lambda n: resolve_abs(frm, n))
        plain = False
        for a in s.names:
            sub = res(base + "." + a.name if base else a.name) if a.name != "*" else None
            if sub:
                add(frm, sub, typed)
            else:
                plain = True
        if plain:
            f = res(base)
            if not f and s.level and "." in base:
                f = res(base.rsplit(".", 1)[0])
            if not f and not s.level and "." in base:
                f = res(base.rsplit(".", 1)[0])
            add(frm, f, typed)
    visit(frm, s, typed)


for f in files:
    try:
        tree = ast.parse(open(os.path.join(root, f), "rb").read())
    except (SyntaxError, ValueError):
        continue
    visit(f, tree, False)

# an edge that is typed in one place and not in another runs
typed_only = {}
for a, b, t in edges:
    typed_only[(a, b)] = typed_only.get((a, b), True) and t
for (a, b), t in sorted(typed_only.items()):
    print(json.dumps({"_type": "edge", "path": a, "resolved": b, "type_only": t}))

# Tarjan's SCC over the edges that run
adj = {}
for (a, b), t in typed_only.items():
    if not t:
        adj.setdefault(a, []).append(b)
index, low, stack, on, comps = {}, {}, [], set(), []
sys.setrecursionlimit(100000)


def strong(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in adj.get(v, []):
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            comps.append(sorted(comp))


for v in sorted(adj):
    if v not in index:
        strong(v)
for c in sorted(comps):
    print(json.dumps({"_type": "cycle", "files": c}))
