// SPDX-License-Identifier: MIT
// A real MCP client (the official TypeScript SDK's Client and
// StdioClientTransport) driving sbx-mcp through an agent's loop: create,
// run python3, write and read a file, list, snapshot, fork 2, destroy; then
// the errors an agent can cause, the server serving on after each.
// usage: node client.mjs  (sbx-mcp on PATH; SBX_ROOT and the rest inherited)
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const transport = new StdioClientTransport({
  command: "sbx-mcp",
  args: process.argv.slice(2),
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "sbx-test", version: "1.0.0" });
await client.connect(transport);

const step = (what) => console.log(`ok ${what}`);

// A tool's structured result, failing on a tool error.
async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`);
  assert.equal(r.content[0].type, "text");
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  return r.structuredContent;
}

const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(),
  ["create", "destroy", "fork", "list", "list_files", "read_file", "run", "select",
   "snapshot", "write_file"]);
for (const t of tools) assert.equal(t.inputSchema.type, "object");
step(`tools/list: ${tools.length} tools`);

const { sandbox_id: id } = await call("create",
  { manifest: { read_only_root: false, user: "1000:1000", resource_allocation: { memory_mb: 256 } } });
assert.match(id, /^sbx-[0-9a-f]{8}$/);
step(`create: ${id}`);

let r = await call("run", { sandbox_id: id, argv: ["python3", "-c", "print(6 * 7)"] });
assert.equal(r.exit_code, 0);
assert.equal(r.stdout, "42\n");
assert.equal(r.truncated, false);
assert.ok(r.trace.cpu_seconds_used > 0);
r = await call("run", { sandbox_id: id, command: "cat; echo oops >&2; exit 3", stdin: "in\n" });
assert.deepEqual([r.exit_code, r.stdout, r.stderr], [3, "in\n", "oops\n"]);
step("run: python3, a shell line with stdin, its status and streams");

// A persistent shell, as a bash tool keeps one: cd and export carry over.
await call("run", { sandbox_id: id, session: "main", command: "cd /tmp && export A=1" });
r = await call("run", { sandbox_id: id, session: "main", command: "echo $A $(pwd); false" });
assert.deepEqual([r.exit_code, r.stdout, r.session, r.ended], [1, "1 /tmp\n", "main", false]);
step("run in a session: cd and export carry over, each call's own status");

await call("write_file", { sandbox_id: id, path: "/home/sandbox/work/notes.txt", content: "héllo\n" });
r = await call("read_file", { sandbox_id: id, path: "/home/sandbox/work/notes.txt" });
assert.equal(r.content, "héllo\n");
await call("write_file", { sandbox_id: id, path: "/home/sandbox/work/bin", encoding: "base64",
  content: Buffer.from([0, 255, 1]).toString("base64") });
r = await call("read_file", { sandbox_id: id, path: "/home/sandbox/work/bin", encoding: "base64" });
assert.deepEqual([...Buffer.from(r.content, "base64")], [0, 255, 1]);
r = await call("list_files", { sandbox_id: id, path: "/home/sandbox/work" });
assert.deepEqual(r.entries.map((e) => [e.name, e.type, e.size]).sort(),
  [["bin", "file", 3], ["notes.txt", "file", 7]]);
step("write_file, read_file (utf-8 and base64), list_files");

const { snapshot_id: snap } = await call("snapshot", { sandbox_id: id });
const { sandbox_ids: kids } = await call("fork", { source: snap, count: 2 });
assert.equal(kids.length, 2);
for (const k of kids) {
  r = await call("run", { sandbox_id: k, command: "cat /home/sandbox/work/notes.txt; hostname" });
  assert.equal(r.stdout.split("\n")[0], "héllo");
}
r = await call("list", {});
assert.deepEqual(r.sandboxes.map((s) => s.sandbox_id).sort(), [id, ...kids].sort());
step(`snapshot ${snap}, fork 2: ${kids.join(" ")}`);

// Keep the first branch: its sibling goes, its snapshot heads the lineage.
await call("run", { sandbox_id: kids[0], command: "echo won > /home/sandbox/work/branch" });
const { snapshot_id: head } = await call("select", { winner: kids[0] });
assert.match(head, /^snap-/);
r = await call("list", {});
assert.deepEqual(r.sandboxes.map((s) => s.sandbox_id).sort(), [id, kids[0]].sort());
step(`select ${kids[0]}: snapshot ${head}`);

// Errors: each an error, and the server serves on.
await assert.rejects(client.callTool({ name: "no-such-tool", arguments: {} }),
  (err) => err.code === -32602 && /unknown tool/.test(err.message));
r = await client.callTool({ name: "create",
  arguments: { manifest: { resource_allocation: { memory_mb: 4096 } } } });
assert.equal(r.isError, true);
assert.match(r.content[0].text, /not allowed by the policy/);
r = await client.callTool({ name: "run", arguments: { sandbox_id: "sbx-00000000", command: "true" } });
assert.equal(r.isError, true);
assert.match(r.content[0].text, /no such sandbox/);
r = await client.callTool({ name: "run", arguments: { sandbox_id: id, argv: "true" } });
assert.equal(r.isError, true);
await client.ping();
step("unknown tool, a manifest beyond the policy, a stranger's ID, bad arguments: errors; ping");

for (const k of [id, kids[0]]) await call("destroy", { sandbox_id: k });
assert.deepEqual((await call("list", {})).sandboxes, []);
step("destroy");
await client.close();
