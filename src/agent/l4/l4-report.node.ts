import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FailureCase } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { yesNo } from "../../evals/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { FileStore } from "../../store/files.node.ts";
import { EventLog } from "../events.ts";
import { climb } from "../repair.ts";
import { buildReport } from "../report.ts";
import { nodeHeadAdapter } from "./executor.node.ts";

const TINY = join(REPO_ROOT, "models/tiny-vlm");

/** The demo's existence questions with the expected answer swapped: a task tiny-vlm fails almost everywhere. */
async function invertedCases(): Promise<FailureCase[]> {
  const pope = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl")));
  return (await importDataset(pope, { name: "pope.jsonl" })).cases.map((c) => ({
    ...c,
    expected: c.expected === "yes" ? "no" : "yes",
  }));
}

/**
 * An investigation report whose M5 climbed to L4 and validated the head adapter on real weights, for the
 * L4 and promotion tests: tiny-vlm (onnxruntime-node) on a task that inverts the demo's yes/no answers, so
 * the base model fails most cases and a head adapter trained on the 60 cases of ten other scenes of other scenes can learn
 * the inversion. The ladder L1–L3b runs first on the 48 M5 cases (eight scenes) (none of them validates), then L4 trains,
 * merges into `<dir>/l4/`, and is tested against the baseline and its yes-bias control. The baseline is
 * the model's reference answers (onnxruntime reproduces them). About 10 s. Writes `<dir>/report.json`
 * and `<dir>/events.jsonl`; returns the events.
 */
export async function invertedL4Report(dir: string) {
  const ref = JSON.parse(readFileSync(join(TINY, "eval-reference.json"), "utf8")) as {
    answers: Record<string, string>;
  };
  const all = (await invertedCases()).filter((c) => ref.answers[c.id] !== undefined);
  const scenes = [...new Set(all.map((c) => String(c.cluster)))];
  const m5Scenes = new Set(scenes.slice(0, 8));
  const poolScenes = new Set(scenes.slice(8, 18));
  const cases = all.filter((c) => m5Scenes.has(String(c.cluster)));
  const pool = all.filter((c) => poolScenes.has(String(c.cluster)));
  const model = await loadModel("tiny-vlm", { memo: true });
  const runId = "investigate-inverted-l4";
  const log = new EventLog({ runId });
  log.append("setup", "run.started", {
    kind: "investigate",
    question: "What predicts the wrong answers?",
    seed: 1,
    alpha: 0.05,
    maxTier: "L4",
    model: { key: model.spec.key, source: model.spec.source },
  });
  log.append("setup", "data.loaded", {
    source: "pope-inverted.jsonl",
    fingerprint: "inverted00001",
    n: cases.length + pool.length,
    labelColumn: null,
    labelDistribution: { fail: 0, pass: 0 },
  });
  const images = async (image: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", image)));
  const l4 = nodeHeadAdapter({
    cases: pool,
    sealed: new Set(cases.map((c) => c.id)),
    folder: TINY,
    out: join(dir, "l4"),
    images,
    // The inverted task is a readout a head adapter learns; this report is the head method's fixture.
    method: "head",
    train: { steps: 200, learningRate: 0.05, l2: 1e-3 },
  });
  try {
    const store = await FileStore.open(join(dir, "store"));
    const answer = (c: FailureCase) => ref.answers[c.id]!.trim();
    const baseline = new Map(cases.map((c) => [c.id, answer(c).startsWith(String(c.expected))]));
    const ctx = { store, model, dataset: { id: "pope-inverted" }, evaluators: [yesNo()], images, runId };
    await climb(ctx, cases, baseline, log, {
      maxTier: "L4",
      alpha: 0.05,
      l4,
      baselineOutputs: new Map(cases.map((c) => [c.id, answer(c)])),
    });
  } finally {
    await l4.dispose();
    await model.dispose();
  }
  log.append("report", "run.finished", { cases: cases.length, failures: 0, verdicts: [] });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "report.json"), JSON.stringify(buildReport(log.events)));
  writeFileSync(join(dir, "events.jsonl"), log.events.map((e) => JSON.stringify(e) + "\n").join(""));
  return log.events;
}
