import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModel, REPO_ROOT } from "./load.node.ts";
import type { OrtModel } from "./ort-model.ts";

/**
 * The numbers on the bundled models' cards (models/<name>/eval-reference.json,
 * written by the forge from PyTorch / its own export run) are reproduced by
 * our runtime on the demo set.
 */
interface DemoCase {
  id: string;
  input: { prompt: string; image?: string };
  expected: string;
  split: string;
}
const jsonl = (path: string) =>
  readFileSync(`${REPO_ROOT}${path}`, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as DemoCase);
const json = (path: string) => JSON.parse(readFileSync(`${REPO_ROOT}${path}`, "utf8"));
const image = (path: string) => new Uint8Array(readFileSync(`${REPO_ROOT}public/demo/${path}`));

describe("tiny-vlm's card, reproduced on the demo set", () => {
  const reference = json("models/tiny-vlm/eval-reference.json");
  const pope = jsonl("public/demo/pope.jsonl");
  let model: OrtModel;
  const answers = new Map<string, string>();
  beforeAll(async () => {
    model = await loadModel("tiny-vlm");
    const max = reference.decoding.max_new_tokens as number;
    for (const c of [...pope, ...jsonl("public/demo/captions.jsonl")]) {
      const input = { prompt: c.input.prompt, ...(c.input.image ? { image: image(c.input.image) } : {}) };
      answers.set(c.id, await model.generate(input, { maxNewTokens: max }));
    }
  }, 300_000);
  afterAll(() => model?.dispose());

  it("gives the reference greedy answer on every demo case", () => {
    const expected = reference.answers as Record<string, string>;
    const differing = [...answers]
      .filter(([id, a]) => expected[id] !== a)
      .map(([id, a]) => `${id}: ${a} ≠ ${expected[id]}`);
    expect(differing).toEqual([]);
    expect(answers.size).toBe(Object.keys(expected).length);
  });

  it("reproduces the POPE accuracy, yes-ratio and false-positive numbers per split", () => {
    const splits = Object.entries(
      reference.card.pope_demo as Record<string, Record<string, { k: number; n: number }>>,
    ).filter(([, card]) => card.accuracy !== undefined);
    expect(splits.map(([s]) => s)).toEqual(expect.arrayContaining(["random", "popular", "adversarial"]));
    for (const [split, card] of splits) {
      const cases = split === "all" ? pope : pope.filter((c) => c.split === split);
      const said = cases.map((c) => (answers.get(c.id) ?? "").trim().split(" ")[0]);
      const correct = cases.filter((c, i) => said[i] === c.expected).length;
      expect({ k: correct, n: cases.length }, split).toMatchObject({ k: card.accuracy!.k, n: card.accuracy!.n });
      const yesRatio = said.filter((s) => s === "yes").length / cases.length;
      expect(yesRatio).toBeCloseTo(card.yes_ratio as unknown as number, 4);
      const negatives = cases.filter((c) => c.expected === "no");
      const falseYes = negatives.filter((c) => (answers.get(c.id) ?? "").trim().startsWith("yes")).length;
      expect({ k: falseYes, n: negatives.length }).toMatchObject({
        k: card.false_positive_rate!.k,
        n: card.false_positive_rate!.n,
      });
    }
  });

  it("reproduces the co-occurrence hallucination rate (absent partner answered 'yes')", () => {
    const probes = pope.filter(
      (c) => (c as DemoCase & { meta: Record<string, unknown> }).meta.co_occurrence_partner_absent === true,
    );
    const hallucinated = probes.filter((c) => (answers.get(c.id) ?? "").trim().startsWith("yes")).length;
    const card = reference.card.pope_demo.co_occurrence_probes.hallucination as { k: number; n: number };
    expect({ k: hallucinated, n: probes.length }).toMatchObject({ k: card.k, n: card.n });
  });

  it("reproduces the per-case image-attention share of the last prompt token (1e-4)", async () => {
    const perCase = reference.image_attention_share.per_case as Record<string, number[]>;
    const H = model.spec.heads;
    for (const c of pope.filter((_, i) => i % 20 === 0)) {
      const trace = await model.forward(
        { prompt: c.input.prompt, image: image(c.input.image!) },
        { reductions: ["imageAttentionShare"] },
      );
      const share = trace.reductions.imageAttentionShare!;
      const perLayer = Array.from(
        { length: model.spec.layers },
        (_, l) => share.data.subarray(l * H, (l + 1) * H).reduce((a, b) => a + b, 0) / H,
      );
      perLayer.forEach((v, l) =>
        expect(Math.abs(v - perCase[c.id]![l]!), `${c.id} layer ${l}`).toBeLessThanOrEqual(1e-4),
      );
    }
  });
});

describe("tiny-lm's card, reproduced on the demo set", () => {
  it("gives the reference greedy answers and demo accuracy", async () => {
    const reference = json("models/tiny-lm/eval-reference.json");
    const cases = jsonl("public/demo/tiny-lm.jsonl");
    const model = await loadModel("tiny-lm");
    const differing: string[] = [];
    let correct = 0;
    for (const c of cases) {
      const answer = await model.generate(
        { prompt: c.input.prompt },
        { maxNewTokens: reference.decoding.max_new_tokens },
      );
      if (answer !== reference.answers[c.id]) differing.push(`${c.id}: ${answer} ≠ ${reference.answers[c.id]}`);
      if (answer === c.expected) correct++;
    }
    await model.dispose();
    expect(differing).toEqual([]);
    expect({ k: correct, n: cases.length }).toMatchObject({
      k: reference.card.demo_accuracy.k,
      n: reference.card.demo_accuracy.n,
    });
  }, 120_000);
});
