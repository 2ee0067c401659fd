#!/usr/bin/env python3
# bench/fleet-mcp.py <ci-mcp> <set> <n> [ci-mcp options...]: the latency of
# ci-mcp's tool calls over a shard set (SCALE.md).  Starts ci-mcp --shards <set>
# (stdio), times its startup until a first call is answered (with its shard
# servers: until they listen), then n timed calls of grep, search and
# references, one after another, each tool warmed by one call first; prints
# p50, p95 and max in milliseconds per tool.  Without the servers:
#   CI_SHARDS_SERVER=0 bench/fleet-mcp.py <ci-mcp> <set> <n> --no-shard-server
import json, subprocess, sys, time
exe, shards, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
opts = sys.argv[4:]
t0 = time.monotonic()
p = subprocess.Popen([exe, "--shards", shards] + opts, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True, bufsize=1)
ident = [0]
def call(name, args):
    ident[0] += 1
    msg = {"jsonrpc": "2.0", "id": ident[0], "method": "tools/call", "params": {"name": name, "arguments": args}}
    t = time.monotonic()
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("ci-mcp ended: " + p.stderr.read())
        r = json.loads(line)
        if r.get("id") == ident[0]:
            break
    dt = (time.monotonic() - t) * 1000
    res = r.get("result", {})
    sc = res.get("structuredContent", {})
    return dt, res.get("isError", False), sc.get("count")
tools = [("grep", {"pattern": "retry_backoff"}),
         ("search", {"query": "where is the retry backoff computed", "limit": 10}),
         ("references", {"symbol": "retry_backoff_1"})]
call("references", {"symbol": "retry_backoff_1"})
print("startup+first call: %.0f ms" % ((time.monotonic() - t0) * 1000))
for name, args in tools:
    call(name, args)
    ts = []
    for _ in range(n):
        dt, err, cnt = call(name, args)
        ts.append(dt)
    ts.sort()
    p50 = ts[len(ts) // 2]
    p95 = ts[min(len(ts) - 1, int(round(0.95 * (len(ts) - 1))))]
    print("%-10s n=%d p50 %.0f ms p95 %.0f ms max %.0f ms (count %s, error %s)" % (name, n, p50, p95, ts[-1], cnt, err))
p.stdin.close()
p.wait()
sys.stderr.write(p.stderr.read())
