import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { importDataset } from "../datasets/index.ts";
import { yesNo } from "../evals/index.ts";
import { loadModel, REPO_ROOT } from "../models/load.node.ts";
import type { OrtModel } from "../models/ort-model.ts";
import { FileStore } from "../store/files.node.ts";
import { EventLog } from "./events.ts";
import { probe } from "./probe.ts";

let cases: FailureCase[] = [];
let model: OrtModel;
let dir: string;
beforeAll(async () => {
  const imported = await importDataset(new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"))), {
    name: "pope.jsonl",
  });
  // 4 scenes, six questions each, on 4 images; in the file's order, a scene's questions are not side by side.
  cases = imported.cases.filter((c) => Number(/(\d+)$/.exec(String(c.cluster))![1]) <= 4);
  model = await loadModel("tiny-vlm");
  dir = mkdtempSync(join(tmpdir(), "evalrx-probe-"));
});
afterAll(async () => {
  await model?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("M1 reads each image once to label the cases and once to probe them, however many questions it has", async () => {
  const reads = new Map<string, number>();
  const probed = await probe(
    {
      store: await FileStore.open(dir),
      model,
      dataset: { id: "pope", cases },
      evaluators: [yesNo()],
      images: async (ref) => {
        reads.set(ref, (reads.get(ref) ?? 0) + 1);
        return new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));
      },
      protocol: { question: "What predicts the hallucinations?" },
      runId: "inv",
      concurrency: 3,
    },
    new EventLog({ runId: "inv" }),
  );
  expect(probed.map((p) => p.case.id)).toEqual(cases.map((c) => c.id));
  const images = new Set(cases.map((c) => c.input.image));
  expect(images.size).toBe(4);
  expect(cases.length).toBe(24);
  expect(Object.fromEntries(reads)).toEqual(Object.fromEntries([...images].map((ref) => [ref, 2])));
}, 120_000);
