import { describe, expect, it } from "vitest";
import type { FailureCase } from "../../core/index.ts";
import { getSpec } from "../../models/specs/index.ts";
import { approxParameters, chooseStrategy, H200, l4Recipe, type RecipeDiagnosis } from "./recipe.ts";

const spec = getSpec("tiny-vlm")!;
const pool: FailureCase[] = Array.from({ length: 30 }, (_, i) => ({
  id: `explore-${i}`,
  input: { prompt: "<image> is there a red circle ?" },
  expected: "no",
  tags: [],
  status: "active",
  meta: {},
}));
const hypothesis = { id: "H1", signal: "attention.imageShare.pooled", mechanism: "failures attend less to the image" };
const base: RecipeDiagnosis = {
  hypothesis,
  mechanismConfirmed: true,
  yesNo: true,
  pool,
  poolPassing: 120,
  retestN: 210,
};

describe("the L4 recipe", () => {
  it("chooses its strategy from what the diagnosis established", () => {
    expect(chooseStrategy(base).strategy).toBe("grounding-lora");
    expect(chooseStrategy({ ...base, mechanismConfirmed: false }).strategy).toBe("contrastive-dpo");
    expect(chooseStrategy({ ...base, mechanismConfirmed: false, yesNo: false }).strategy).toBe("counterfactual-sft");
    expect(chooseStrategy({ ...base, hypothesis: null }).strategy).toBe("full-finetune");
    expect(chooseStrategy({ ...base, hypothesis: null }).why).toMatch(/investigate further before paying/);
  });

  it("is marked not executed, draws its seeds from the confirmed mode of the pool only, and states its rate", () => {
    const mode = {
      id: "mode-1",
      size: 12,
      caseIds: pool.slice(0, 12).map((c) => c.id),
      defining: [{ signal: "attention.imageShare.L0" }],
    };
    const r = l4Recipe(spec, { ...base, mode });
    expect(r).toMatchObject({ format: "evalrx-finetune-recipe", executed: false, base: "tiny-vlm" });
    expect(r.notice).toMatch(/^NOT EXECUTED/);
    expect(r.data.seedCount).toBe(12);
    expect(r.data.seedCases.every((id) => mode.caseIds.includes(id))).toBe(true);
    expect(r.data.drawnFrom).toMatch(
      /failure mode mode-1 \(12 failing exploration cases; defined by attention.imageShare.L0\)/,
    );
    expect(r.data.pairs).toBe(240);
    expect(r.method).toMatchObject({ name: "LoRA", rank: 16, alpha: 32 });
    expect(r.cost.rate).toMatch(/^\$2\.30 per GPU-hour/);
  });

  it("estimates cost from the spec's size: FLOPs = k·P·tokens at the stated utilisation, dollars at the stated rate", () => {
    const r = l4Recipe(spec, base, { gpus: 8 });
    const P = approxParameters(spec);
    expect(P).toBe(12 * spec.layers * spec.hiddenSize ** 2 + spec.vocabSize * spec.hiddenSize);
    const tokens = 2 * 600 * 2 * (36 + 48);
    const hours = (4 * P * tokens) / (H200.peakFlops * H200.utilisation) / 3600;
    expect(r.cost.trainGpuHours).toBeCloseTo(hours, 3 - Math.ceil(Math.log10(hours)));
    expect(r.cost.usd.total).toBeCloseTo((r.cost.trainGpuHours + r.cost.retestGpuHours) * 2.3, 2);
    // A 7B-class decoder (32 layers, D = 4096): the same recipe costs real GPU-hours.
    const big = l4Recipe({ ...spec, key: "big", layers: 32, hiddenSize: 4096, vocabSize: 32000 }, base);
    expect(big.cost.trainGpuHours).toBeGreaterThan(1e4 * r.cost.trainGpuHours);
    expect(() => l4Recipe(spec, { ...base, retestN: -1 })).toThrow(/retestN must be a count of cases, got -1/);
  });
});
