#!/usr/bin/env python3
"""bench/eval/stats.py: the numbers of a localisation run, with their noise.

    stats.py [--boot N] [--seed S] [--json] <results.jsonl> [<other.jsonl>]

Reads the result records bench/eval/run.sh writes, one an instance and mode:
{id, repo, mode, got: [file, ...] best first, relevant: [file, ...],
got_chunks: [qualified name, ...] best first, relevant_spans: {file: [name]},
query_s, index_s}, and reports per mode, per repository and overall: n,
file-level Acc@1, R@5, R@10 and MRR, function-level Acc@1 and Acc@5 (a gold span's
function is the first chunk; among the first five chunks; over the instances that have spans),
each with a bootstrap 95% interval (resampling instances, --boot times,
random.Random(--seed)); the query time's p50 and p95 and the mean index time.

Then the paired differences, each with its interval: within one file, every
mode against the first mode; given a second file, each mode of the second
against the same mode of the first, over the instances (ids) both hold.  A
difference whose interval excludes 0 is marked '*'.

Standard library only; deterministic for a given seed.
"""
import argparse
import json
import random
import sys

PROG = "stats.py"
METRICS = ("acc1", "r5", "r10", "mrr", "fn_acc1", "fn_acc5")


def die(msg, code=2):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.exit(code)


def name_match(a, b):
    """A chunk's qualified name names a gold span: equal, or one ends with '.' + the other."""
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def metrics(r):
    got = r.get("got") or []
    rel = r.get("relevant") or []
    if not rel:
        return None
    relset = set(rel)
    first = next((i for i, p in enumerate(got) if p in relset), None)
    m = {
        "acc1": 1.0 if first == 0 else 0.0,
        "r5": len(relset.intersection(got[:5])) / len(relset),
        "r10": len(relset.intersection(got[:10])) / len(relset),
        "mrr": 1.0 / (first + 1) if first is not None else 0.0,
        "fn_acc1": None,
        "fn_acc5": None,
    }
    spans = r.get("relevant_spans") or {}
    gold = [(f, s) for f, ss in spans.items() for s in ss]
    if gold:
        chunks = r.get("got_chunks") or []
        hit = None
        for i, c in enumerate(chunks[:5]):
            # a chunk is "path:qualified name" or just the name
            cp, _, cn = c.rpartition(":") if ":" in c else ("", "", c)
            if any((not cp or cp == f) and name_match(cn, s) for f, s in gold):
                hit = i
                break
        m["fn_acc1"] = 1.0 if hit == 0 else 0.0
        m["fn_acc5"] = 1.0 if hit is not None else 0.0
    return m


def load(path):
    rows = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        die("cannot open '%s': %s" % (path, e.strerror), 3)
    with f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError:
                die("%s:%d: expected a JSON object" % (path, i), 3)
            if not isinstance(r, dict) or "id" not in r:
                die("%s:%d: expected a result record with an id" % (path, i), 3)
            m = metrics(r)
            if m is None:
                continue
            r["_m"] = m
            r.setdefault("mode", "default")
            r.setdefault("repo", "?")
            rows.append(r)
    return rows


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def pct(sorted_v, q):
    """Nearest-rank percentile of a sorted list."""
    if not sorted_v:
        return float("nan")
    k = int(q * len(sorted_v) + 0.999999999) - 1
    return sorted_v[min(max(k, 0), len(sorted_v) - 1)]


def boot_ci(v, boot, seed):
    """The mean of v and its bootstrap 95% interval (percentile method)."""
    if not v:
        return (float("nan"),) * 3
    rng = random.Random(seed)
    n = len(v)
    means = []
    for _ in range(boot):
        s = 0.0
        for _ in range(n):
            s += v[rng.randrange(n)]
        means.append(s / n)
    means.sort()
    return mean(v), means[int(0.025 * (boot - 1) + 0.5)], means[int(0.975 * (boot - 1) + 0.5)]


def summarise(rows, boot, seed):
    out = {"n": len(rows)}
    for k in METRICS:
        v = [r["_m"][k] for r in rows if r["_m"][k] is not None]
        m, lo, hi = boot_ci(v, boot, seed)
        out[k] = {"mean": m, "lo": lo, "hi": hi, "n": len(v)}
    q = sorted(r.get("query_s", 0.0) * 1000 for r in rows)
    out["query_ms_p50"] = pct(q, 0.50)
    out["query_ms_p95"] = pct(q, 0.95)
    idx = {}
    for r in rows:
        if r.get("index_s", 0) > 0:
            idx[r["id"]] = r["index_s"]
    out["index_s_mean"] = mean(list(idx.values())) if idx else 0.0
    out["index_trees"] = len(idx)
    return out


def paired(a_rows, b_rows, boot, seed):
    """B - A per metric over the ids both have."""
    a = {r["id"]: r for r in a_rows}
    both = [(a[r["id"]], r) for r in b_rows if r["id"] in a]
    out = {"n": len(both)}
    for k in METRICS:
        d = [y["_m"][k] - x["_m"][k] for x, y in both if x["_m"][k] is not None and y["_m"][k] is not None]
        m, lo, hi = boot_ci(d, boot, seed)
        out[k] = {"mean": m, "lo": lo, "hi": hi, "n": len(d)}
    return out


def by(rows, key):
    g = {}
    for r in rows:
        g.setdefault(r[key], []).append(r)
    return g


def fmt(s):
    if s["n"] == 0:
        return "-"
    return "%.3f [%.3f,%.3f]" % (s["mean"], s["lo"], s["hi"])


def fmt_d(s):
    if s["n"] == 0:
        return "-"
    mark = "*" if s["lo"] > 0 or s["hi"] < 0 else ""
    return "%+.3f [%+.3f,%+.3f]%s" % (s["mean"], s["lo"], s["hi"], mark)


def main():
    ap = argparse.ArgumentParser(prog=PROG)
    ap.add_argument("results")
    ap.add_argument("other", nargs="?")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    a = ap.parse_args()
    if a.boot < 10:
        die("--boot: expected at least 10")
    rows = load(a.results)
    if not rows:
        die("%s: no result records" % a.results, 1)
    modes = []
    for r in rows:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    report = {"modes": {}, "paired": []}
    for mo in modes:
        mr = [r for r in rows if r["mode"] == mo]
        rep = {"all": summarise(mr, a.boot, a.seed), "repos": {}}
        for repo, rr in sorted(by(mr, "repo").items()):
            rep["repos"][repo] = summarise(rr, a.boot, a.seed)
        report["modes"][mo] = rep
    for mo in modes[1:]:
        report["paired"].append({"a": modes[0], "b": mo, "all": paired(
            [r for r in rows if r["mode"] == modes[0]], [r for r in rows if r["mode"] == mo], a.boot, a.seed)})
    if a.other:
        other = load(a.other)
        for mo in modes:
            orows = [r for r in other if r["mode"] == mo]
            if orows:
                report["paired"].append({"a": "%s (%s)" % (mo, a.results), "b": "%s (%s)" % (mo, a.other),
                                         "all": paired([r for r in rows if r["mode"] == mo], orows,
                                                       a.boot, a.seed)})
    if a.json:
        sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")
        return 0
    print("mode\trepo\tn\tAcc@1\tR@5\tR@10\tMRR\tfn Acc@1\tfn Acc@5\tp50 ms\tp95 ms\tindex s")
    for mo, rep in report["modes"].items():
        for name, s in list(rep["repos"].items()) + [("all", rep["all"])]:
            print("%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.2f" % (
                mo, name, s["n"], fmt(s["acc1"]), fmt(s["r5"]), fmt(s["r10"]), fmt(s["mrr"]),
                fmt(s["fn_acc1"]), fmt(s["fn_acc5"]), s["query_ms_p50"], s["query_ms_p95"], s["index_s_mean"]))
    for p in report["paired"]:
        s = p["all"]
        print("paired\t%s - %s\tn=%d\tAcc@1 %s\tR@5 %s\tR@10 %s\tMRR %s\tfn Acc@1 %s\tfn Acc@5 %s" % (
            p["b"], p["a"], s["n"], fmt_d(s["acc1"]), fmt_d(s["r5"]), fmt_d(s["r10"]), fmt_d(s["mrr"]),
            fmt_d(s["fn_acc1"]), fmt_d(s["fn_acc5"])))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
