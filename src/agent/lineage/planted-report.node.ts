import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importDataset } from "../../datasets/index.ts";
import { yesNo } from "../../evals/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { FileStore } from "../../store/files.node.ts";
import { EventLog } from "../events.ts";
import { climb } from "../repair.ts";
import { buildReport } from "../report.ts";

/** The folder of the bundled model with a planted attention mechanism. */
export const PLANTED = join(REPO_ROOT, "models/planted-vlm");

/**
 * An investigation report whose M5 validated a repair on real weights, for the promotion tests: M5's ladder
 * run on planted-vlm (onnxruntime-node, the file store, the paired tests) over the 60 cases of ten of its dim
 * scenes, where the forge planted the mechanism that +2 on the image tokens' attention undoes (fixed 17,
 * broken 0). The baseline is the forge's own answers, which onnxruntime reproduces (planted.test.ts). The
 * yes-bias control is left out (no baseline outputs reach the ladder), so the paired test alone decides;
 * `investigate` always adds it. About 8 s. Writes `<dir>/report.json` and returns `dir`.
 */
export async function plantedDimReport(dir: string): Promise<string> {
  const ref = JSON.parse(readFileSync(join(PLANTED, "eval-reference.json"), "utf8")) as {
    dim_scenes: string[];
    answers: Record<string, string>;
  };
  const dim = new Set(ref.dim_scenes.slice(0, 10));
  const pope = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl")));
  const cases = (await importDataset(pope, { name: "pope.jsonl" })).cases.filter((c) => dim.has(String(c.cluster)));
  const model = await loadModel(PLANTED, { memo: true });
  const runId = "investigate-planted-dim";
  const log = new EventLog({ runId });
  const question = "What predicts the hallucinations?";
  const modelInfo = { key: model.spec.key, source: PLANTED };
  log.append("setup", "run.started", {
    kind: "investigate",
    question,
    seed: 1,
    alpha: 0.05,
    maxTier: "L3b",
    model: modelInfo,
  });
  const labels = { labelColumn: null, labelDistribution: { fail: 0, pass: 0 } };
  log.append("setup", "data.loaded", { source: "pope.jsonl", fingerprint: "dimscenes010", n: cases.length, ...labels });
  try {
    const store = await FileStore.open(join(dir, "store"));
    const images = async (image: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", image)));
    const baseline = new Map(cases.map((c) => [c.id, ref.answers[c.id]!.trim().startsWith(String(c.expected))]));
    const ctx = { store, model, dataset: { id: "pope" }, evaluators: [yesNo()], images, runId };
    await climb(ctx, cases, baseline, log, { maxTier: "L3b", alpha: 0.05, imageBiasSign: 1 });
  } finally {
    await model.dispose();
  }
  log.append("report", "run.finished", { cases: cases.length, failures: 0, verdicts: [] });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "report.json"), JSON.stringify(buildReport(log.events)));
  return dir;
}
