// SPDX-License-Identifier: MIT
// The worker: workflow.mjs (bundled here) and activities.mjs on the task
// queue sbx, against the Temporal server at TEMPORAL_ADDRESS.
//
//   TEMPORAL_ADDRESS=localhost:7233 SBX_ROOT=... node worker.mjs
import { fileURLToPath } from "node:url";
import { NativeConnection, Worker } from "@temporalio/worker";
import * as activities from "./activities.mjs";

const connection = await NativeConnection.connect({
  address: process.env.TEMPORAL_ADDRESS || "localhost:7233",
});
const worker = await Worker.create({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE || "default",
  taskQueue: process.env.SBX_TASK_QUEUE || "sbx",
  workflowsPath: fileURLToPath(new URL("./workflow.mjs", import.meta.url)),
  activities,
});
await worker.run();
