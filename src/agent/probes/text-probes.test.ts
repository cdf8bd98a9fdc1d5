import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import { seededRng } from "../../stats/rng.ts";
import { reversalOperand, searchTextProbes, textVariant, TEXT_FAMILIES, type TextSeed } from "./text-probes.ts";

const rows = readFileSync(join(REPO_ROOT, "public/demo/tiny-lm.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { id: string; input: { prompt: string }; expected: string });

/**
 * The answer a reader of the task's grammar gives, written apart from the generator: the digit words after the
 * word `reverse` and before `=`, reversed (lead-ins, separators and a distractor before the instruction are not digits
 * of the operand).
 */
function rederive(prompt: string): string {
  const words = prompt.trim().split(/\s+/);
  const start = words.indexOf("reverse");
  const end = words.indexOf("=", start);
  expect(start, prompt).toBeGreaterThanOrEqual(0);
  expect(end, prompt).toBe(words.length - 1);
  return words
    .slice(start + 1, end)
    .filter((w) => /^\d$/.test(w))
    .reverse()
    .join(" ");
}

describe("text variants", () => {
  it("each family's expected answer follows from the edit, for every arm and 30 draws", () => {
    const g = seededRng("text-variants", 1);
    const rng = {
      unit: () => (g.next() >>> 0) / 2 ** 32,
      below: (n: number) => Math.floor(((g.next() >>> 0) / 2 ** 32) * n),
    };
    let made = 0;
    for (const row of rows.slice(0, 30)) {
      const operand = reversalOperand(row.input.prompt)!;
      expect(operand.slice().reverse().join(" "), row.id).toBe(row.expected);
      for (const f of TEXT_FAMILIES)
        for (const arm of f.arms) {
          const v = textVariant(operand, f.name, arm, rng);
          if (!v) continue;
          made++;
          expect(rederive(v.prompt), `${f.name}:${arm} ${JSON.stringify(v.prompt)}`).toBe(
            v.operand.slice().reverse().join(" "),
          );
          if (f.name !== "operand") expect(v.operand, v.prompt).toEqual(operand);
          else expect(v.prompt).toBe(`reverse ${v.operand.join(" ")} =`);
        }
    }
    expect(made).toBeGreaterThan(30 * 10);
    expect(reversalOperand("reverse the digits 3 1 =")).toBeUndefined();
  });
});

const haveModel = existsSync(join(REPO_ROOT, "models/tiny-lm/onnx/model.onnx"));

describe.skipIf(!haveModel)("searchTextProbes on tiny-lm (onnxruntime-node)", () => {
  let model: OrtModel;
  beforeAll(async () => {
    model = await loadModel("tiny-lm");
  }, 60_000);
  afterAll(async () => {
    await model?.dispose();
  });

  it("keeps variants the model fails, more often than it fails the seeds, each expected answer re-derived from its text", async () => {
    // Seeds within the lengths the model was trained on (≤ 8 digits): it answers nearly all of them.
    const seeds: TextSeed[] = rows
      .filter((r) => reversalOperand(r.input.prompt)!.length <= 8)
      .slice(0, 30)
      .map((r) => ({ id: r.id, prompt: r.input.prompt }));
    const r = await searchTextProbes({ seeds, model, budget: 180, seed: 1 });
    expect(r.seedCalls).toBe(30);
    expect(r.search.calls).toBe(150);
    expect(r.search.found.length).toBe(r.search.failures);
    expect(r.rate).toBeGreaterThan(0.3);
    expect(r.rate).toBeGreaterThan(3 * (r.seedFailures / r.seedCalls));
    // Every family is tried (an unvisited node comes first); the rates per family are what the report shows.
    expect(r.search.families.every((f) => f.calls > 0)).toBe(true);
    for (const c of r.search.found) {
      expect(c.expected, c.id).toBe(rederive(c.prompt));
      expect(c.answer, c.id).not.toBe(c.expected);
      expect(seeds.map((s) => s.id)).toContain(c.provenance.parent);
      if (c.provenance.family !== "operand")
        expect(c.expected, c.id).toBe(rows.find((x) => x.id === c.provenance.parent)!.expected);
    }
    expect(await searchTextProbes({ seeds, model, budget: 60, seed: 1 })).toMatchObject({ seedCalls: 30 });
  }, 120_000);

  it("names a seed that is not a reversal case", async () => {
    await expect(
      searchTextProbes({ seeds: [{ id: "q", prompt: "what is 2 + 2 ?" }], model, budget: 5, seed: 1 }),
    ).rejects.toThrow(/case q: the prompt "what is 2 \+ 2 \?" is not "reverse <digits> ="/);
  });
});
