import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FailureCase } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { nodeSessions } from "../../models/ort-session.node.ts";
import { headPool, SealedCaseRefused } from "./head-features.ts";
import { mergeHeadFiles } from "./head-merge.ts";
import { readFolder, writeFolder } from "./executor.node.ts";
import { headAdapterCandidate } from "./executor.ts";
import { adaptedLogits, trainHeadLora } from "./lora-head.ts";
import { noFreeLunch } from "./no-free-lunch.ts";

const FOLDER = join(REPO_ROOT, "models/tiny-vlm");
const images = async (ref: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));

async function demoCases(n: number): Promise<FailureCase[]> {
  const bytes = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl")));
  return (await importDataset(bytes, { name: "pope.jsonl" })).cases.slice(0, n);
}

describe("the L4 head adapter on tiny-vlm (onnxruntime-node)", () => {
  it("trains on the pool's hidden states, lowers the loss, and the merged folder gives the trained logits", async () => {
    const cases = await demoCases(24);
    const files = readFolder(FOLDER);
    const headBytes = files.get("onnx/lm_head.onnx")!;
    const model = await loadModel(FOLDER);
    try {
      const sealed = new Set(["pope-random-0100"]);
      const pool = await headPool(model, cases, { headBytes, sessions: nodeSessions, images, sealed });
      expect(pool.n).toBe(24); // one answer token per yes/no case
      expect(pool.projection).toMatchObject({ weight: "onnx::MatMul_34", dim: 64, vocab: 29 });
      // Aim the adapter at the opposite answer, so the slice has something to learn in a few steps.
      const yes = pool.y[cases.findIndex((c) => c.expected === "yes")]!;
      const no = pool.y[cases.findIndex((c) => c.expected === "no")]!;
      const flipped = { ...pool, y: pool.y.map((t) => (t === yes ? no : yes)) };
      const fit = await trainHeadLora(flipped, { steps: 60, seed: 2, learningRate: 0.05 });
      expect(fit.finalLoss).toBeLessThan(fit.initialLoss - 1);
      const { files: merged, changed } = mergeHeadFiles(files, "onnx/lm_head.onnx", pool.projection, fit.adapter);
      expect(changed).toEqual([
        "onnx/decoder_model_merged.onnx: onnx::MatMul_447",
        "onnx/decoder_untapped.onnx: onnx::MatMul_446",
        "onnx/lm_head.onnx: onnx::MatMul_34",
      ]);
      const dir = join(mkdtempSync(join(tmpdir(), "evalrx-l4-")), "tiny-vlm+lora");
      writeFolder(dir, merged);
      const tuned = await loadModel(dir);
      try {
        const expected = adaptedLogits(pool, fit.adapter);
        for (const i of [0, 5, 17]) {
          const c = cases[i]!;
          const t = await tuned.forward(
            { prompt: c.input.prompt, image: await images(c.input.image!) },
            { logitsAt: [-1] },
          );
          const row = expected.subarray(i * 29, (i + 1) * 29);
          t.logits!.values.forEach((v, j) => expect(v).toBeCloseTo(row[j]!, 3));
        }
        // It now answers the flipped answers it was trained toward.
        const c = cases[0]!;
        const answer = await tuned.generate({ prompt: c.input.prompt, image: await images(c.input.image!) });
        expect(answer.startsWith(c.expected === "yes" ? "no" : "yes")).toBe(true);
      } finally {
        await tuned.dispose();
      }
    } finally {
      await model.dispose();
    }
  });

  it("refuses a sealed case in the pool before reading anything, and a model without hidden states", async () => {
    const cases = await demoCases(4);
    const headBytes = new Uint8Array(readFileSync(join(FOLDER, "onnx/lm_head.onnx")));
    const reads: string[] = [];
    const model = await loadModel(FOLDER);
    try {
      const o = { headBytes, sessions: nodeSessions, images: async (ref: string) => (reads.push(ref), images(ref)) };
      const sealed = new Set([cases[2]!.id]);
      await expect(headPool(model, cases, { ...o, sealed })).rejects.toThrow(SealedCaseRefused);
      await expect(headPool(model, cases, { ...o, sealed })).rejects.toThrow(
        `1 sealed case(s) offered for training (${cases[2]!.id})`,
      );
      expect(reads).toEqual([]);
      const blind = {
        spec: model.spec,
        capabilities: new Set(["generate", "logits"] as const),
        generate: model.generate.bind(model),
        forward: model.forward.bind(model),
        dispose: async () => {},
      };
      await expect(headPool(blind, cases, { ...o, sealed: new Set() })).rejects.toThrow(/gives no hidden_states/);
    } finally {
      await model.dispose();
    }
  });

  it("the no-free-lunch check compares present objects and the random split with the baseline", () => {
    const c = (expected: string, split: string) =>
      ({
        id: `${expected}-${split}`,
        input: { prompt: "q" },
        expected,
        split,
        tags: [],
        status: "active",
        meta: {},
      }) as FailureCase;
    const cases = [c("yes", "random"), c("yes", "popular"), c("no", "random"), c("no", "adversarial")];
    const held = noFreeLunch(cases, [true, false, true, false], [true, true, true, true]);
    expect(held.holds).toBe(true);
    expect(held.slices.map((s) => [s.slice, s.n, s.baseline, s.candidate])).toEqual([
      ["present objects", 2, 0.5, 1],
      ["random split", 2, 1, 1],
    ]);
    const broke = noFreeLunch(cases, [true, true, true, false], [false, true, true, true]);
    expect(broke.holds).toBe(false);
    expect(broke.note).toMatch(/present objects: 100\.0% → 50\.0% \(n = 2, drops 50\.0%, over the 2\.0% margin\)/);
  });

  it("a training failure is named: every answer fails with the reason, and the logged record says it", async () => {
    const model = await loadModel(FOLDER);
    try {
      const l4 = headAdapterCandidate({
        method: "head",
        cases: await demoCases(2),
        sealed: new Set(),
        images,
        sessions: nodeSessions,
        files: async () => new Map([["config.json", new Uint8Array(2)]]),
        materialize: async () => {
          throw new Error("not reached");
        },
      });
      expect(l4.signature).toBe("lora:lm_head:r4:a8:steps300:seed1");
      await expect(l4.generate(model, { prompt: "<image> is there a red circle ?" }, {})).rejects.toThrow(
        /L4 training failed: L4: the model folder has no 'onnx\/lm_head.onnx'/,
      );
      expect(l4.training()).toEqual({ failed: expect.stringMatching(/^L4 training failed/) });
      expect(l4.failure()).toMatch(/has no 'onnx\/lm_head.onnx'/);
    } finally {
      await model.dispose();
    }
  });
});
