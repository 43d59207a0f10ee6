// SPDX-License-Identifier: MIT
// Start the workflow with ID KEY (its sandboxes and snapshots are named
// KEY-...) and print its result as JSON: node start.mjs KEY [BRANCHES]
import { Client, Connection } from "@temporalio/client";

const [key, branches] = process.argv.slice(2);
if (!key) {
  console.error("usage: node start.mjs KEY [BRANCHES]");
  process.exit(64);
}
const connection = await Connection.connect({
  address: process.env.TEMPORAL_ADDRESS || "localhost:7233",
});
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || "default" });
const handle = await client.workflow.start("sandboxFlow", {
  taskQueue: process.env.SBX_TASK_QUEUE || "sbx",
  workflowId: key,
  args: [{ branches: Number(branches || 2) }],
});
console.log(JSON.stringify(await handle.result()));
await connection.close();
