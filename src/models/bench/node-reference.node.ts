/**
 * Reads a `{ model, cases, maxNewTokens }` request on stdin, runs it through
 * onnxruntime-node and prints the `DemoResult[]` as JSON: the Node side of the
 * Node/Chromium parity test (called from Vitest browser mode's `nodeModelRun`).
 */
import { readFile } from "node:fs/promises";
import { runDemoCases, type DemoInput } from "../demo-run.ts";
import { loadModel, REPO_ROOT } from "../load.node.ts";

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
  model: string;
  cases: DemoInput[];
  maxNewTokens?: number;
};
const model = await loadModel(request.model);
const results = await runDemoCases(
  model,
  request.cases,
  async (path) => new Uint8Array(await readFile(`${REPO_ROOT}public/demo/${path}`)),
  {
    ...(request.maxNewTokens ? { maxNewTokens: request.maxNewTokens } : {}),
  },
);
await model.dispose();
process.stdout.write(JSON.stringify(results));
