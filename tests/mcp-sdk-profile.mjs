// tests/mcp-sdk-profile.mjs: call a ci-mcp profile's tools with the official MCP
// TypeScript SDK client, which checks each structuredContent against the tool's
// outputSchema.
//
//   node tests/mcp-sdk-profile.mjs <node_modules> <ci-mcp> <profile> <cases.json> [<ci-mcp option>...]
//
// cases.json is an array of [tool, arguments, expect]: expect "ok" (a result
// without isError), "isError" (a tool error), or an object whose keys and values
// structuredContent must have.  A tool "resource:<uri>" reads that resource
// instead (expect "ok": listed and read with text; "isError": an error).  Prints "ok <tool> <n>" for each case that held;
// the first failure is an exception and exit 1.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const [nm, ciMcp, profile, casesFile, ...extra] = process.argv.slice(2);
const sdk = (p) => import(path.join(nm, '@modelcontextprotocol/sdk/dist/esm', p));
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const client = new Client({ name: 'ci-profile-test', version: '1.0.0' });
await client.connect(new StdioClientTransport({
	command: ciMcp, args: ['--profile', profile, ...extra], cwd: process.cwd(), stderr: 'inherit',
	env: { ...process.env },
}));
const { tools } = await client.listTools();
const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
for (const t of new Set(cases.map((c) => c[0]).filter((t) => !t.startsWith('resource:'))))
	assert.ok(tools.some((x) => x.name === t && x.outputSchema), `tools/list has ${t} with an outputSchema`);
let n = 0;
for (const [tool, args, expect] of cases) {
	n++;
	if (tool.startsWith('resource:')) {	// ["resource:<uri>", {}, "ok" or "isError"]
		const uri = tool.slice(9);
		if (expect === 'isError') {
			await assert.rejects(client.readResource({ uri }), `${uri}: an error`);
		} else {
			const { resources } = await client.listResources();
			assert.ok(resources.some((x) => x.uri === uri), `resources/list has ${uri}`);
			const rr = await client.readResource({ uri });
			assert.equal(rr.contents[0].uri, uri);
			assert.ok(rr.contents[0].text.length > 0, `${uri}: text`);
		}
		console.log(`ok ${tool} ${n}`);
		continue;
	}
	const r = await client.callTool({ name: tool, arguments: args });
	if (expect === 'isError') {
		assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}: a tool error`);
	} else {
		assert.ok(!r.isError, `${tool} ${JSON.stringify(args)}: ${JSON.stringify(r.content)}`);
		assert.equal(typeof r.structuredContent, 'object');
		if (typeof expect === 'object')
			for (const [k, v] of Object.entries(expect))
				assert.deepEqual(r.structuredContent[k], v, `${tool} ${JSON.stringify(args)}: ${k}`);
	}
	console.log(`ok ${tool} ${n}`);
}
await client.close();
