import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { importDataset } from "../datasets/index.ts";
import { yesNo } from "../evals/index.ts";
import { toRgb } from "../models/image.ts";
import { loadModel, REPO_ROOT } from "../models/load.node.ts";
import type { OrtModel } from "../models/ort-model.ts";
import { FileStore } from "../store/files.node.ts";
import { memoised, STUDY_SET } from "./bench/mechanism.node.ts";
import { investigate } from "./investigate.ts";

/**
 * The end-to-end validity check on models with known truth (a short slice of `bench:validity`'s mechanism
 * section): planted-vlm's dim scenes lose their image attention to the `<s>` sink by design, and +2 on the image
 * tokens' scores undoes it; tiny-vlm has no such mechanism. Checked here: onnxruntime runs the planted model as
 * the forge measured it, the intervention repairs the dim scenes through onnxruntime, investigate finds the
 * attention hypothesis and its mechanism test moves failures the predicted way, and on tiny-vlm no mechanism is
 * confirmed. (Whether that mechanism test and the L3b repair also pass M5's α budget and yes-bias control is
 * measured over seeds in `bench:validity`, not asserted here: see src/agent/README.md.)
 */
const folder = join(REPO_ROOT, "models/planted-vlm");
const have = existsSync(join(folder, "onnx/decoder_model_merged.onnx"));
const reference = have
  ? (JSON.parse(readFileSync(join(folder, "eval-reference.json"), "utf8")) as {
      dim_scenes: string[];
      study: { dataset: string; scenes: number; dim_scenes: string[] };
      answers: Record<string, string>;
      answers_image_bias: Record<string, string>;
    })
  : undefined;
const image = (ref: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));
const question = { question: "What predicts the hallucinations?" };

let all: FailureCase[] = [];
let slice: FailureCase[] = [];
beforeAll(async () => {
  const imported = await importDataset(new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"))), {
    name: "pope.jsonl",
  });
  all = imported.cases;
  // Half the demo scenes, whole (a scene's six questions stay together as its cluster).
  slice = all.filter((c) => Number(/(\d+)$/.exec(String(c.cluster))![1]) <= 60);
});

describe.skipIf(!have)("planted-vlm: the mechanism the forge planted", () => {
  let model: OrtModel;
  beforeAll(async () => {
    model = await loadModel(folder);
  });
  afterAll(() => model?.dispose());

  it("onnxruntime reproduces the forge's PyTorch answers, with and without the +2 image-attention intervention", async () => {
    for (const c of slice.slice(0, 48)) {
      const input = { prompt: c.input.prompt, image: image(c.input.image!) };
      expect(await model.generate(input, { maxNewTokens: 24 }), c.id).toBe(reference!.answers[c.id]);
      expect(
        await model.generate(input, { maxNewTokens: 24, attentionBias: { positions: "image", value: 2 } }),
        `${c.id} with the intervention`,
      ).toBe(reference!.answers_image_bias[c.id]);
    }
  }, 60_000);

  it("through onnxruntime, +2 on the image tokens repairs the dim scenes (the planted failure) and not by saying yes", async () => {
    const dim = new Set(reference!.dim_scenes);
    const cases = slice.filter((c) => dim.has(String(c.cluster)));
    expect(cases.length).toBeGreaterThan(60);
    let plain = 0,
      repaired = 0,
      yes = 0;
    for (const c of cases) {
      const input = { prompt: c.input.prompt, image: image(c.input.image!) };
      const a = await model.generate(input, { maxNewTokens: 4 });
      const b = await model.generate(input, { maxNewTokens: 4, attentionBias: { positions: "image", value: 2 } });
      if (a.trim() === c.expected) plain++;
      if (b.trim() === c.expected) repaired++;
      if (b.trim() === "yes") yes++;
    }
    // The card: 54% → 86% on the demo set's dim scenes; the yes-ratio stays near the balanced half.
    expect(plain / cases.length).toBeLessThan(0.65);
    expect(repaired / cases.length).toBeGreaterThan(0.8);
    expect(Math.abs(yes / cases.length - 0.5)).toBeLessThan(0.15);
  }, 60_000);

  it("investigate (whole demo set, seed 1) SUPPORTS an attention hypothesis and its mechanism test lowers failures", async () => {
    const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-planted-")));
    const { report } = await investigate({
      store,
      model: memoised(model),
      dataset: { id: "pope", cases: all, source: "pope.jsonl", fingerprint: "planted-test" },
      evaluators: [yesNo()],
      images: async (ref) => image(ref),
      protocol: question,
      runId: "planted-1",
      seed: 1,
      // The mechanism test runs at any tier; L1 keeps the ladder short (bench:validity climbs to L3b).
      maxTier: "L1",
    });
    const attention = report.hypotheses.filter((h) => /^(attention\.image(Share|Ratio)|sink\.mass)/.test(h.signal));
    expect(attention.some((h) => h.verdict === "SUPPORTED")).toBe(true);
    expect(report.intervention).toMatchObject({ unit: "cluster" });
    expect(report.intervention!.interventionFailures).toBeLessThan(report.intervention!.baselineFailures);
  }, 170_000);
});

describe.skipIf(!have)("the mechanism study's cases (models/planted-vlm/study)", () => {
  it("are the card's held-out POPE set: 300 whole scenes, 1800 questions, and its dim scenes are the ones listed", async () => {
    const { cases, problems } = await importDataset(new Uint8Array(readFileSync(STUDY_SET)), { name: "pope.jsonl" });
    expect(problems).toEqual([]);
    expect(STUDY_SET.endsWith(reference!.study.dataset)).toBe(true);
    const scenes = new Map<string, FailureCase[]>();
    for (const c of cases) scenes.set(String(c.cluster), [...(scenes.get(String(c.cluster)) ?? []), c]);
    expect([cases.length, scenes.size]).toEqual([1800, reference!.study.scenes]);
    // The background level from the pixels, as the forge defines it (the mean of the grey pixels), says which are dim.
    const dim: string[] = [];
    for (const [scene, questions] of scenes) {
      expect(questions.length, scene).toBe(6);
      const { rgb } = toRgb(new Uint8Array(readFileSync(join(STUDY_SET, "..", questions[0]!.input.image!))));
      let sum = 0,
        grey = 0;
      for (let i = 0; i < rgb.length; i += 3)
        if (rgb[i] === rgb[i + 1] && rgb[i + 1] === rgb[i + 2]) {
          sum += rgb[i]!;
          grey++;
        }
      if (sum / grey < 200) dim.push(scene);
    }
    expect(dim.sort()).toEqual([...reference!.study.dim_scenes].sort());
    // The card's held-out row counts 558 questions on dim scenes: 93 scenes (about 30 on a seed's sealed split).
    expect(dim.length).toBe(93);
  });
});

describe("tiny-vlm: no planted mechanism, none confirmed", () => {
  it("investigate may find attention associated with failure, but the mechanism test does not confirm it", async () => {
    const model = await loadModel("tiny-vlm");
    try {
      const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-unplanted-")));
      const { report } = await investigate({
        store,
        model: memoised(model),
        dataset: { id: "pope", cases: slice, source: "pope.jsonl", fingerprint: "unplanted-test" },
        evaluators: [yesNo()],
        images: async (ref) => image(ref),
        protocol: question,
        runId: "unplanted-1",
        seed: 1,
        maxTier: "L3b",
      });
      expect(report.intervention?.causal ?? false).toBe(false);
      expect(report.repairs!.candidates.filter((c) => c.tier === "L3b").some((c) => c.validated)).toBe(false);
    } finally {
      await model.dispose();
    }
  }, 170_000);
});
