#!/usr/bin/python3
"""graph-jedi.py: call edges of a Python repository according to jedi.

Usage: graph-jedi.py <repo>

For every tracked .py file, every name jedi reports that is followed by '('
(a call) is sent to jedi's goto (follow_imports=True); when that lands on a
function or class defined in a tracked file of the repository, one line
{"path":..,"line":..,"def_path":..,"def_line":..} is written (the call's file
and line, the definition's file and line of its name).  Sorted, unique.
Used by bench/graph.sh as the reference for ci-refs callers.
"""
import json
import os
import subprocess
import sys

import jedi

root = os.path.abspath(sys.argv[1])
files = subprocess.run(["git", "-C", root, "ls-files", "*.py"], capture_output=True,
                       text=True, check=True).stdout.split()
fileset = set(files)
# the repository first, then the standard library only: an installed copy of
# the same package (dist-packages) must not stand in for the repository's files
std = [p for p in sys.path if p and "-packages" not in p and os.path.isdir(p)]
project = jedi.Project(root, sys_path=[os.path.join(root, "src"), root] + std,
                       smart_sys_path=False)
edges = set()
for f in files:
    path = os.path.join(root, f)
    try:
        code = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    lines = code.split("\n")
    try:
        script = jedi.Script(code, path=path, project=project)
        names = script.get_names(all_scopes=True, definitions=False, references=True)
    except Exception:  # jedi gives up on some files
        continue
    for n in names:
        text = lines[n.line - 1] if n.line - 1 < len(lines) else ""
        rest = text[n.column + len(n.name):].lstrip()
        if not rest.startswith("("):
            continue
        try:
            targets = script.goto(n.line, n.column, follow_imports=True)
        except Exception:
            continue
        for t in targets:
            if t.type not in ("function", "class") or not t.module_path:
                continue
            rel = os.path.relpath(str(t.module_path), root)
            if rel in fileset and t.line:
                edges.add((f, n.line, rel, t.line))
for e in sorted(edges):
    print(json.dumps({"path": e[0], "line": e[1], "def_path": e[2], "def_line": e[3]}))
