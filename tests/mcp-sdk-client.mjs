// tests/mcp-sdk-client.mjs: drive ci-mcp with the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk, installed by scripts/setup in deps/node).
//
//   node tests/mcp-sdk-client.mjs stdio <node_modules> <ci-mcp> <table> <pidfile>
//   node tests/mcp-sdk-client.mjs http <node_modules> <url> <token> <pidfile>
//
// Runs in the repository t1010-mcp-sdk.sh sets up: initialize, list the tools,
// call every tool with valid and invalid arguments, progress, logging, several
// calls in flight, cancellation (the call's process must be gone), and over HTTP
// the transport's checks (session, Origin, token).  Prints "ok <step>" for each
// step that passed; the first failure is an exception and exit 1.
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const [mode, nm, target, extra, pidfile] = process.argv.slice(2);
const sdk = (p) => import(path.join(nm, '@modelcontextprotocol/sdk/dist/esm', p));
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { LoggingMessageNotificationSchema } = await sdk('types.js');
const fs = await import('node:fs');

const step = (what) => console.log(`ok ${what}`);
const text = (r) => r.content.map((c) => c.text).join('\n');

const client = new Client({ name: 'ci-test', version: '1.0.0' });
let transport;
if (mode === 'stdio') {
	transport = new StdioClientTransport({
		command: target, args: ['--table', extra], cwd: process.cwd(), stderr: 'inherit',
		env: { ...process.env },
	});
} else {
	transport = new StreamableHTTPClientTransport(new URL(target), {
		requestInit: { headers: { Authorization: `Bearer ${extra}` } },
	});
}
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
await client.connect(transport);
assert.equal(client.getServerVersion().name, 'ci');
assert.ok(client.getServerCapabilities().tools);
step('initialize');

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const n of ['search', 'grep', 'symbols', 'references', 'read', 'context', 'related', 'impact',
	'history', 'status', 'sleep'])
	assert.ok(names.includes(n), `tools/list has ${n}`);
for (const t of tools)
	assert.equal(t.inputSchema.type, 'object');
step('tools/list');

// every tool with valid arguments: a result with structuredContent, no isError
const valid = [
	['search', { query: 'parse_header' }, (sc) => sc.results.some((h) => h.name === 'parse_header')],
	['grep', { pattern: 'parse_header', context: 1 }, (sc) => sc.count >= 2],
	['symbols', { file: 'src/reader.py' }, (sc) => sc.results.some((s) => s.name === 'Reader')],
	['symbols', { query: 'parse_header' }, (sc) => sc.results[0].name === 'parse_header'],
	['references', { symbol: 'parse_header' }, (sc) => sc.count >= 2],
	['read', { path: 'src/reader.py', start_line: 2, end_line: 2, context: 1 },
		(sc) => sc.start_line === 1 && sc.end_line === 3 && sc.text.includes('return')],
	['read', { path: 'src/reader.py', ref: 'HEAD~1' }, (sc) => !sc.text.includes('class Reader')],
	['context', { query: 'parse the header of a line' }, (sc) => sc.count >= 1],
	['related', { file: 'src/reader.py' }, (sc) => sc.results.some((r) => r.b === 'src/main.py' || r.a === 'src/main.py')],
	['impact', { target: 'src/reader.py' }, (sc) => sc.results.some((r) => r.path === 'src/main.py')],
	['history', { file: 'src/reader.py' }, (sc) => sc.results.filter((r) => r._type === 'commit').length === 2],
	['history', { query: 'reader' }, (sc) => sc.results.some((r) => r._type === 'commit')],
	['status', {}, (sc) => sc.results[0]._type === 'status' && sc.results[0].files >= 2],
	['status', { refresh: true }, (sc) => sc.results[0]._type === 'status'],
];
for (const [name, args, check] of valid) {
	const r = await client.callTool({ name, arguments: args });
	assert.ok(!r.isError, `${name} ${JSON.stringify(args)}: ${text(r)}`);
	assert.ok(r.structuredContent, `${name}: structuredContent`);
	assert.ok(check(r.structuredContent), `${name} ${JSON.stringify(args)}: ${JSON.stringify(r.structuredContent)}`);
	if (name === 'read')
		assert.equal(r.content[0].text, r.structuredContent.text);
	else
		assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
}
step('every tool with valid arguments');

// every tool with invalid arguments: isError, and the message names the parameter
const invalid = [
	['search', { query: 'x', limit: 0 }, /'limit' must be from 1 to 200/],
	['grep', {}, /'pattern'/],
	['grep', { pattern: 'x', context: 11 }, /'context' must be from 0 to 10/],
	['symbols', { kind: 'function' }, /file, query/],
	['references', { symbol: '' }, /'symbol' must not be empty/],
	['read', { path: '../outside.txt' }, /'path'.*outside the repository/],
	['read', { path: 'src/reader.py', start_line: 1000 }, /'start_line' must be from 1 to/],
	['read', { path: 'src/reader.py', ref: 'no-such-branch' }, /'ref'/],
	['context', { query: 'x', budget: 5 }, /'budget' must be from 10 to 100000/],
	['related', { file: '/etc/passwd' }, /'file'.*outside the repository/],
	['impact', { target: 3 }, /'target' must be a string/],
	['history', { file: 'src/reader.py', limit: 0 }, /'limit'/],
	['status', { refresh: 'yes' }, /'refresh' must be true or false/],
	['sleep', { seconds: -1 }, /'seconds'/],
];
for (const [name, args, re] of invalid) {
	const r = await client.callTool({ name, arguments: args });
	assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} is an error`);
	assert.match(text(r), re);
}
await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (e) => e.code === -32602);
step('every tool with invalid arguments');

// progress notifications for a call with a progress token
const seen = [];
let r = await client.callTool({ name: 'sleep', arguments: { seconds: 1 } }, undefined,
	{ onprogress: (p) => seen.push(p) });
assert.ok(!r.isError && r.structuredContent.results[0]._type === 'slept');
assert.ok(seen.length >= 1, 'progress notifications');
assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress), 'progress increases');
step('progress');

// logging/setLevel, then notifications/message
await client.setLoggingLevel('debug');
await client.callTool({ name: 'grep', arguments: { pattern: 'Reader' } });
assert.ok(logs.some((l) => l.level === 'debug' && /run ci-grep/.test(l.data)), JSON.stringify(logs));
// the index's news belong to no request: on stdout, or over HTTP on the GET stream
await client.callTool({ name: 'status', arguments: { refresh: true } });
for (let i = 0; i < 100 && !logs.some((l) => l.level === 'info' && /the index is up to date/.test(l.data)); i++)
	await sleep(100);
assert.ok(logs.some((l) => l.level === 'info' && /updating the index/.test(l.data)), JSON.stringify(logs));
assert.ok(logs.some((l) => l.level === 'info' && /the index is up to date/.test(l.data)), JSON.stringify(logs));
await client.setLoggingLevel('error');
await assert.rejects(client.request({ method: 'logging/setLevel', params: { level: 'loud' } },
	(await sdk('types.js')).EmptyResultSchema), (e) => e.code === -32602);
step('logging');

// several calls in flight: a ping answers while a slow call runs
let slowDone = false;
const slow = client.callTool({ name: 'sleep', arguments: { seconds: 2 } }).then((x) => { slowDone = true; return x; });
await sleep(200);
await client.ping();
const g = await client.callTool({ name: 'grep', arguments: { pattern: 'parse_header' } });
assert.ok(!slowDone, 'ping and grep answered while sleep runs');
assert.ok(g.structuredContent.count >= 2);
assert.ok(!(await slow).isError);
step('several calls in flight');

// cancellation: the call's process group is killed, nothing answers it
fs.rmSync(pidfile, { force: true });
const ac = new AbortController();
const cancelled = client.callTool({ name: 'sleep', arguments: { seconds: 60 } }, undefined, { signal: ac.signal });
for (let i = 0; i < 100 && !fs.existsSync(pidfile); i++)
	await sleep(100);
const pid = Number(fs.readFileSync(pidfile, 'utf8'));
assert.ok(pid > 0);
ac.abort('test');
await assert.rejects(cancelled);
let alive = true;
for (let i = 0; i < 100 && alive; i++) {
	try { process.kill(pid, 0); await sleep(100); } catch { alive = false; }
}
assert.ok(!alive, `the cancelled call's process ${pid} is gone`);
await client.ping();
step('cancellation');

if (mode === 'http') {
	const url = target;
	const auth = { Authorization: `Bearer ${extra}` };
	const accept = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' };
	const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
	let res = await fetch(url, { method: 'POST', headers: { ...accept }, body: ping });
	assert.equal(res.status, 401, 'no token');
	res = await fetch(url, { method: 'POST', headers: { ...accept, Authorization: 'Bearer wrong' }, body: ping });
	assert.equal(res.status, 401, 'wrong token');
	res = await fetch(url, { method: 'POST', headers: { ...accept, ...auth, Origin: 'https://evil.example' }, body: ping });
	assert.equal(res.status, 403, 'foreign Origin');
	res = await fetch(url, { method: 'POST', headers: { ...accept, ...auth }, body: ping });
	assert.equal(res.status, 400, 'no session');
	res = await fetch(url, { method: 'POST', headers: { ...accept, ...auth, 'Mcp-Session-Id': 'nope' }, body: ping });
	assert.equal(res.status, 404, 'unknown session');
	res = await fetch(url, { method: 'POST', headers: { ...accept, ...auth }, body: '{"jsonrpc":' });
	assert.equal(res.status, 400, 'parse error');
	assert.equal((await res.json()).error.code, -32700);
	res = await fetch(url.replace(/\/mcp$/, '/other'), { method: 'POST', headers: { ...accept, ...auth }, body: ping });
	assert.equal(res.status, 404, 'other path');
	res = await fetch(url, { method: 'PUT', headers: { ...auth }, body: ping });
	assert.equal(res.status, 405, 'PUT');
	const sid = transport.sessionId;
	assert.match(sid, /^[0-9a-f]{32}$/);
	res = await fetch(url, { method: 'POST', headers: { ...accept, ...auth, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' }, body: ping });
	assert.equal(res.status, 200);
	assert.deepEqual((await res.json()).result, {});
	// malformed input: answered, never a crash or a hang
	const post = (body) => fetch(url, { method: 'POST', headers: { ...accept, ...auth, 'Mcp-Session-Id': sid }, body });
	res = await post(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
	assert.equal(res.status, 400, 'invalid UTF-8');
	assert.equal((await res.json()).error.code, -32700);
	res = await post('{"jsonrpc":"2.0","id":7,"method":"ping","params":[]}');
	assert.equal((await res.json()).error.code, -32602, 'params of the wrong type');
	res = await post('[{"jsonrpc":"2.0","id":7,"method":"ping"}]');
	assert.equal(res.status, 400, 'a batch');
	res = await post(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"${'a'.repeat(10 << 20)}"}}`);
	assert.equal(res.status, 200, 'a 10 MB message');
	assert.deepEqual((await res.json()).result, {});
	res = await post('x'.repeat(17 << 20));
	assert.equal(res.status, 413, 'a body over 16 MiB');
	res = await post(ping);
	assert.equal(res.status, 200, 'still serving');
	step('HTTP checks');
	await transport.terminateSession();
	res = await fetch(url, { method: 'POST', headers: { ...accept, ...auth, 'Mcp-Session-Id': sid }, body: ping });
	assert.equal(res.status, 404, 'a deleted session');
	step('DELETE ends the session');
}
await client.close();
step('close');
