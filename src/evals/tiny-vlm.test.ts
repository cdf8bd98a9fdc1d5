import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { importDataset, select } from "../datasets/index.ts";
import { loadModel, REPO_ROOT } from "../models/load.node.ts";
import type { OrtModel } from "../models/ort-model.ts";
import { FileStore } from "../store/files.node.ts";
import { calibrate } from "./calibrate.ts";
import { chair } from "./evaluators/chair.ts";
import { yesNo } from "./evaluators/yes-no.ts";
import { gate, Gate } from "./gate.ts";
import { runEval } from "./run.ts";
import type { RunView } from "./run-view.ts";

// End to end in Node: the bundled tiny VLM on a stable sample of the demo POPE set, sampled
// generation with 3 repeats, three runs, then the A/A calibration over them.
describe("eval over the bundled tiny VLM and the demo dataset", () => {
  let dir: string;
  let store: FileStore;
  let model: OrtModel;
  let cases: FailureCase[];
  const runs: RunView[] = [];
  const demo = join(REPO_ROOT, "public/demo");

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "evalrx-vlm-"));
    store = await FileStore.open(dir);
    model = await loadModel("tiny-vlm");
    const imported = await importDataset(new Uint8Array(readFileSync(join(demo, "pope.jsonl"))), {
      name: "pope.jsonl",
    });
    expect(imported.problems).toEqual([]);
    cases = select(imported.cases, { sample: 60 });
  });
  afterAll(async () => {
    await model?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs three sampled evals with repeats = 3 and calibrates over them", async () => {
    const images = async (ref: string) => new Uint8Array(readFileSync(join(demo, ref)));
    for (let i = 0; i < 3; i++) {
      const { run, summary } = await runEval({
        store,
        dataset: { id: "pope", cases },
        model,
        evaluators: [yesNo()],
        repeats: 3,
        cluster: true,
        generation: { temperature: 0.7, maxNewTokens: 3 },
        images,
        evalKey: "pope-yesno",
        modelIdentity: { key: "tiny-vlm" },
      });
      expect(run.status).toBe("finished");
      expect(summary).toMatchObject({ cases: 60, trials: 180, errored: 0, repeats: 3 });
      expect(summary.pass!.method).toBe("clustered");
      expect(summary.pass!.lo).toBeLessThanOrEqual(summary.pass!.mean);
      expect(summary.passHatK!.value).toBeLessThanOrEqual(summary.pass!.mean);
      expect(summary.metrics["yesNo"]!.aggregate).toHaveProperty("yesRatio");
      expect(summary.latency!.p95).toBeGreaterThanOrEqual(summary.latency!.p50);
      expect(await store.items(run.id)).toHaveLength(180);
      runs.push(run);
    }
    // sampled and seeded per run: the three runs are independent draws, not copies
    const outputs = runs.map((r) => [...r.cases.values()].flatMap((c) => c.trials.map((t) => t.output)).join("|"));
    expect(new Set(outputs).size).toBe(3);

    const cal = calibrate(runs, { target: 0.05, simulations: 40, bootstrap: 500 });
    expect(cal).toMatchObject({ eval: "pope-yesno", cases: 60, repeats: 3 });
    expect(cal.rows.map((r) => r.repeats)).toEqual([1, 2, 3, 5]);
    expect(cal.observed).toHaveLength(3);
    expect(cal.flipRate).toBeGreaterThanOrEqual(0);
    expect(cal.flakyShare).toBeLessThanOrEqual(1);
    expect(cal.warnings).toEqual([]);

    // and the gate reads the same runs: the second against the first at the calibrated tolerance
    const g = gate(
      runs[1]!,
      Gate({ baseline: runs[0]!.id, tolerance: Math.min(0.99, cal.rows[2]!.tolerance + 0.01) }),
      runs[0],
    );
    expect(["pass", "inconclusive"]).toContain(g.verdict);
    expect(g.comparison!.tests[0]!.method).toBe("cluster-t");
  });

  it("CHAIR over the demo captions: per-case mentions vs objects present, CHAIR_s and CHAIR_i per run", async () => {
    const imported = await importDataset(new Uint8Array(readFileSync(join(demo, "captions.jsonl"))), {
      name: "captions.jsonl",
    });
    const captions = select(imported.cases, { sample: 20 });
    const vocabulary = [...new Set(imported.cases.flatMap((c) => c.meta["objects"] as string[]))].sort();
    const { run, summary } = await runEval({
      store,
      dataset: { id: "captions", cases: captions },
      model,
      evaluators: [chair(vocabulary)],
      generation: { maxNewTokens: 12 },
      images: async (ref) => new Uint8Array(readFileSync(join(demo, ref))),
    });
    const checks = [...run.cases.values()].map((c) => c.trials[0]!.checks["chair"]!);
    expect(checks.every((c) => !c.errored)).toBe(true);
    const mentioned = checks.reduce((n, c) => n + (c.data!["mentioned"] as number), 0);
    const hallucinated = checks.reduce((n, c) => n + (c.data!["hallucinated"] as number), 0);
    const aggregate = summary.metrics["chair"]!.aggregate!;
    expect(aggregate["CHAIR_s"]).toBeCloseTo(checks.filter((c) => !c.passed).length / 20, 12);
    if (mentioned > 0) expect(aggregate["CHAIR_i"]).toBeCloseTo(hallucinated / mentioned, 12);
  });
});
