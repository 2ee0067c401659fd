#!/usr/bin/env python3
"""bench/eval/noisy.py: a localisation dataset made to read like issue reports.

    noisy.py [--seed S] [--repos DIR] <dataset.jsonl> >noisy.jsonl

Mined validation examples are commit messages: clean prose, no pasted output.
Issue reports carry what ranking must learn to discount: an issue template's
HTML comment, an environment section, a `pip list`, and the output of a test
run that names the repository's own test files.  This writes each instance
again with its query wrapped in such noise, so that rules about noise (ci-rank's
query parts, libcommon/rank/segment.c) can be checked on repositories they were
not written against.  The noise never names a relevant file: the test files in
the pasted run are drawn from the repository's tree at the base commit
(`git ls-tree`, clones under --repos as bench/eval/run.sh has them), leaving out
the instance's relevant files.  Deterministic for a seed.  Standard library only.

--repro adds what a report's reproduction would show: the lines the instance's
commit (its "commit" field, mined by scripts/mine-history) added to source
files whose path says "test" (by extension: .py, .js, .ts, .go, ...), at most
30, dedented, in a fenced code block after the message, the way a reporter
pastes the code that fails.  It is the commit's own test, so it uses
the code's public names as a reporter would; it may name a relevant file or
function (an import, a call) as real reports do.  --no-noise leaves out the
template, environment, pip list and test run (with --repro: the message and
the reproduction only).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import textwrap

FENCE = {".py": "python", ".js": "js", ".mjs": "js", ".ts": "ts", ".go": "go", ".rs": "rust",
         ".java": "java", ".rb": "ruby", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp"}
REPRO_LINES = 30

PACKAGES = [
    "attrs 23.1.0", "certifi 2023.7.22", "charset-normalizer 3.2.0", "click 8.1.7",
    "coverage 7.3.1", "docutils 0.20.1", "exceptiongroup 1.1.3", "filelock 3.12.4",
    "idna 3.4", "iniconfig 2.0.0", "Jinja2 3.1.2", "MarkupSafe 2.1.3", "mypy 1.5.1",
    "numpy 1.26.0", "packaging 23.1", "pip 23.2.1", "platformdirs 3.10.0",
    "pluggy 1.3.0", "Pygments 2.16.1", "pytest 7.4.2", "pytest-cov 4.1.0",
    "python-dateutil 2.8.2", "PyYAML 6.0.1", "setuptools 68.2.2", "six 1.16.0",
    "tomli 2.0.1", "tox 4.11.3", "typing_extensions 4.8.0", "urllib3 2.0.5",
    "virtualenv 20.24.5", "wheel 0.41.2",
]

TEMPLATE = """<!--
Thanks for taking the time to report this! Before you file, please search the
existing issues, include a minimal example, the full output, and your versions.
-->
"""


def test_files(repos, repo, commit, relevant):
    """The test-looking files of repo at commit, less the relevant ones."""
    src = "%s/%s" % (repos, repo.replace("/", "+"))
    res = subprocess.run(["git", "-C", src, "ls-tree", "-r", "--name-only", commit],
                         capture_output=True, text=True)
    if res.returncode:
        raise ValueError("cannot list %s at %s in %s: %s" % (repo, commit, src, res.stderr.strip()))
    out = res.stdout
    rel = set(relevant)
    return sorted(p for p in out.splitlines()
                  if "test" in p.lower() and p not in rel and not p.endswith("/"))


def repro(repos, d):
    """The lines d's commit added to test files, as a fenced block ("" if none)."""
    if not isinstance(d.get("commit"), str):
        raise ValueError('no "commit" field: --repro reads the fix commit of a mined record')
    src = "%s/%s" % (repos, d["repo"].replace("/", "+"))
    res = subprocess.run(["git", "-C", src, "diff", "-U0", "--no-color", "--no-ext-diff",
                          d["base_commit"], d["commit"]], capture_output=True, text=True,
                         errors="replace")
    if res.returncode:
        raise ValueError("cannot diff %s %s..%s in %s: %s" % (d["repo"], d["base_commit"][:10],
                                                              d["commit"][:10], src, res.stderr.strip()))
    added, lang, cur = [], "", None
    for line in res.stdout.split("\n"):
        if line.startswith("+++ "):
            p = line[4:]
            p = p[2:] if p.startswith("b/") else ""
            cur = p if "test" in p.lower() and os.path.splitext(p)[1].lower() in FENCE else None
            if cur and not lang:
                lang = FENCE.get(os.path.splitext(cur)[1].lower(), "")
        elif cur and line.startswith("+") and line[1:].strip():
            added.append(line[1:].rstrip())
            if len(added) == REPRO_LINES:
                break
    if not added:
        return ""
    code = textwrap.dedent("\n".join(added))
    return "\n\nSteps to reproduce:\n\n```%s\n%s\n```\n" % (lang, code)


def noise(rng, name, tests):
    """The environment section, a pip list and a test run's output."""
    lines = ["", "## Environment", "",
             "- OS: Ubuntu 22.04.3 LTS",
             "- Python version: 3.11.%d" % rng.randint(1, 8),
             "- %s version: %d.%d.%d" % (name, rng.randint(0, 9), rng.randint(0, 30), rng.randint(0, 9)),
             "", "<details>", "<summary>pip list</summary>", "", "```",
             "Package            Version", "------------------ ---------"]
    pkgs = rng.sample(PACKAGES, 20)
    lines += ["%-18s %s" % tuple(p.split()) for p in sorted(pkgs, key=str.lower)]
    lines += ["```", "</details>", "", "Output of the test run:", "", "```",
              "$ python -m pytest -x",
              "============================= test session starts ==============================",
              "platform linux -- Python 3.11.4, pytest-7.4.2, pluggy-1.3.0",
              "rootdir: /home/user/src/%s" % name,
              "plugins: cov-4.1.0",
              "collected %d items" % rng.randint(200, 900), ""]
    picked = rng.sample(tests, min(len(tests), 12)) if tests else []
    for k, t in enumerate(sorted(picked)):
        pct = (k + 1) * 100 // max(1, len(picked))
        lines.append("%s %s %s[%3d%%]" % (t, "." * rng.randint(5, 40), " " * 10, pct))
    lines += ["", "=========================== short test summary info ============================",
              "======================= 1 failed, %d passed in %.2fs =======================" %
              (rng.randint(150, 800), rng.uniform(1, 30)), "```", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repos", default="/var/tmp/ci-eval/repos")
    ap.add_argument("--repro", action="store_true",
                    help="add the commit's added test lines as a reproduction")
    ap.add_argument("--no-noise", action="store_true", help="no template, environment or test run")
    ap.add_argument("data")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with open(a.data) as f:
        for nr, line in enumerate(f, 1):
            try:
                d = json.loads(line)
                tests = [] if a.no_noise else test_files(a.repos, d["repo"], d["base_commit"],
                                                         d.get("relevant_files", []))
                code = repro(a.repos, d) if a.repro else ""
            except (ValueError, KeyError, TypeError) as e:
                sys.stderr.write("noisy.py: %s:%d: %s\n" % (a.data, nr, e))
                sys.exit(2)
            name = d["repo"].split("/")[1]
            q = d["query"].rstrip("\n") + code
            d["query"] = q.rstrip("\n") + "\n" if a.no_noise else TEMPLATE + q + "\n" + noise(rng, name, tests)
            sys.stdout.write(json.dumps(d) + "\n")


if __name__ == "__main__":
    main()
