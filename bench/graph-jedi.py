#!/usr/bin/python3
"""graph-jedi.py: call edges of a Python repository according to jedi.

Usage: graph-jedi.py <repo>

For every tracked .py file, every name jedi reports that is followed by '('
(a call) is sent to jedi's goto (follow_imports=True); when that lands on a
function or class defined in a tracked file of the repository, one line
{"path":..,"line":..,"def_path":..,"def_line":..,"via":..} is written (the
call's file and line, the definition's file and line of its name, and how
jedi got there).  Sorted, unique.  Used by bench/graph.sh as the reference for
ci-refs callers.

How jedi is asked (the same for every call of every repository):
- jedi's recursion and execution limits are reset before each call, as
  jedi's own whole-file analysis (Script._analysis) resets them after each
  node: the limits belong to a Script's inference state, and once 200
  functions had been executed (total_function_execution_limit) the later
  calls of a long module were left unresolved (httpx/_client.py: 120 edges
  with one Script and no reset, 150 with the reset, 153 with a new Script
  for every call);
- a target that goto leaves on a re-export (`from ._make import make_class`
  in an __init__.py, where jedi's mapping from a .pyi stub back to the .py
  source stops) is followed with the target's own goto(follow_imports=True)
  until it no longer moves ("via": "goto+follow");
- when goto lands on no function or class (a variable or parameter: `s =
  attrs; s()`, `factory()`), jedi's infer() of the name is taken, kept when
  it is a function or class ("via": "infer");
- a call whose target is still an import statement (a re-export jedi did not
  get past: it happens where a package ships .pyi stubs, python-attrs' attr
  and attrs) is one jedi cannot judge: its line is written as
  {"path":..,"skip_from":line,"skip_to":line} and its edges are left out;
  bench/graph.sh leaves ci's edges on that line out too, and counts them.
"""
import ast
import json
import os
import subprocess
import sys

import jedi

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
files = subprocess.run(["git", "-C", root, "ls-files", "*.py"], capture_output=True,
                       text=True, check=True).stdout.split()
fileset = set(files)
# the repository first, then the standard library only: an installed copy of
# the same package (dist-packages) must not stand in for the repository's files
std = [p for p in sys.path if p and "-packages" not in p and os.path.isdir(p)]
project = jedi.Project(root, sys_path=[os.path.join(root, "src"), root] + std,
                       smart_sys_path=False)


def where(t):
    """(tracked path, line) of a jedi name, or None when outside the repository"""
    if not t.module_path or not t.line:
        return None
    rel = os.path.relpath(str(t.module_path), root)
    return (rel, t.line) if rel in fileset else None


def follow(t):
    """t followed past re-exports: its own goto until it no longer moves"""
    seen = set()
    while (t.module_path, t.line) not in seen and len(seen) < 8:
        seen.add((t.module_path, t.line))
        try:
            nxt = [u for u in t.goto(follow_imports=True) if u.type in ("function", "class")]
        except Exception:
            break
        if len(nxt) != 1 or (nxt[0].module_path, nxt[0].line) == (t.module_path, t.line):
            break
        t = nxt[0]
    return t


def calls_of(script, f, names):
    """the edges of the call names of one file"""
    out = set()
    for n in names:
        script._inference_state.reset_recursion_limitations()
        try:
            targets = script.goto(n.line, n.column, follow_imports=True)
        except Exception:
            continue
        found = [t for t in targets if t.type in ("function", "class")]
        via = "goto"
        if not found:
            try:
                found = [t for t in script.infer(n.line, n.column)
                         if t.type in ("function", "class")]
            except Exception:
                found = []
            via = "infer"
        for t in found:
            u = follow(t) if via == "goto" else t
            w = where(u)
            if w:
                v = via if (u.module_path, u.line) == (t.module_path, t.line) else "goto+follow"
                out.add((f, n.line, w[0], w[1], v))
    return out


def jedi_edges():
    """{(path, line, def_path, def_line): via} of every tracked file"""
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
        calls = []
        for n in names:
            text = lines[n.line - 1] if n.line - 1 < len(lines) else ""
            if text[n.column + len(n.name):].lstrip().startswith("("):
                calls.append(n)
        edges |= calls_of(script, f, calls)
    # one edge per (call, definition): the first way found
    best = {}
    for e in sorted(edges):
        best.setdefault(e[:4], e[4])
    return best


def import_lines(rel, memo):
    """the lines of rel's import statements"""
    if rel not in memo:
        memo[rel] = set()
        try:
            tree = ast.parse(open(os.path.join(root, rel), encoding="utf-8").read())
        except (SyntaxError, ValueError, UnicodeDecodeError, OSError):
            return memo[rel]
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                memo[rel].update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return memo[rel]


def emit(best):
    """the edges, then the call lines jedi cannot judge: where a target is
    still an import statement (a re-export jedi did not get past), the line
    is left out of the comparison on both sides, like clang's #define bodies"""
    memo = {}
    skip = {k[:2] for k in best if k[3] in import_lines(k[2], memo)}
    for k in sorted(best):
        if k[:2] not in skip:
            print(json.dumps({"path": k[0], "line": k[1], "def_path": k[2], "def_line": k[3],
                              "via": best[k]}))
    for p, line in sorted(skip):
        print(json.dumps({"path": p, "skip_from": line, "skip_to": line, "why": "re-export"}))


if __name__ == "__main__":
    emit(jedi_edges())
