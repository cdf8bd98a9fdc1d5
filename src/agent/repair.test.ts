import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FailureCase, Model, ModelInput } from "../core/index.ts";
import { yesNo } from "../evals/index.ts";
import { FileStore } from "../store/files.node.ts";
import { EventLog } from "./events.ts";
import { attentionBiasCandidate, climb, ladder, pairedOutcome } from "./repair.ts";

/** A deterministic text model (a test double for the ladder's bookkeeping): answers by a rule on the prompt. */
function ruleModel(answer: (input: ModelInput) => string, capabilities: string[] = ["generate"]): Model {
  return {
    spec: {
      key: "rule-model",
      family: "test",
      modalities: new Set(["text"]),
      source: "",
      files: [],
      layers: 1,
      heads: 1,
      kvHeads: 1,
      hiddenSize: 8,
      vocabSize: 10,
      contextLength: 64,
      capabilities: new Set(capabilities as never[]),
    },
    capabilities: new Set(capabilities as never[]),
    generate: async (input) => answer(input),
    forward: async () => {
      throw new Error("not used");
    },
    dispose: async () => {},
  };
}

const cases: FailureCase[] = Array.from({ length: 12 }, (_, i) => ({
  id: `c${i}`,
  input: { prompt: `is there a red circle ? ${i}` },
  expected: "yes",
  tags: [],
  status: "active",
  meta: {},
}));
const baseline = new Map(cases.map((c) => [c.id, false]));

async function store() {
  return FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-repair-")));
}

describe("repair ladder", () => {
  it("pairedOutcome counts fixed and broken cases and gives McNemar p and a one-sided e-value", () => {
    const o = pairedOutcome([false, false, false, true], [true, true, true, true]);
    expect(o).toMatchObject({ n: 4, baselineFailures: 3, candidateFailures: 0, fixed: 3, broken: 0, delta: -0.75 });
    expect(o.p).toBeCloseTo(0.25);
    expect(o.e).toBeGreaterThan(1);
    expect(pairedOutcome([true, true], [false, false]).e).toBeLessThan(1);
    expect(() => pairedOutcome([true], [])).toThrow(/1 baseline cases vs 0/);
  });

  it("every candidate has its own signature; the L3b +2 candidate is the mechanism test's intervention", () => {
    const { candidates, skipped } = ladder(
      ruleModel(() => "no", ["generate", "attention", "attention_write", "image"]),
      {
        hasImages: true,
        decodeImage: () => ({ width: 1, height: 1, data: new Uint8Array(4) }),
      },
    );
    const signatures = candidates.map((c) => c.signature);
    expect(new Set(signatures).size).toBe(signatures.length);
    expect(signatures).toContain(attentionBiasCandidate("mechanism", 2, "image").signature);
    expect(skipped).toEqual([]);
    expect(candidates.map((c) => c.tier)).toEqual(["L1", "L1", "L2", "L2", "L3a", "L3b", "L3b"]);
  });

  it("climbs tier by tier, stops at the first validated tier, and says so", async () => {
    // Text-only cases: the ladder's text rewrite ('restate') is the one that fixes them here.
    const model = ruleModel((input) => (/\?.*\?/.test(input.prompt) ? "yes" : "no"));
    const log = new EventLog({ runId: "r" });
    const ctx = {
      store: await store(),
      model,
      dataset: { id: "d" },
      evaluators: [yesNo()],
      images: async () => new Uint8Array(),
      runId: "r",
    };
    const { fixedBy } = await climb(ctx, cases, baseline, log, { maxTier: "L3b", alpha: 0.05 });
    expect(fixedBy).toBe("L1 prompt rewrite 'restate'");
    const tested = log.all("repair.tested").map((e) => e.payload);
    expect(tested.map((t) => t.tier)).toEqual(["L1"]);
    expect(tested[0]).toMatchObject({ fixed: 12, broken: 0, validated: true });
    // Text-only cases: the image scaffolds and reweighting are named as not tried, with the reason.
    expect(
      log
        .all("problem")
        .map((e) => e.payload.why)
        .join(" "),
    ).toMatch(/the cases have no images/);
    expect(log.find("repairs.finished")!.payload).toMatchObject({ fixedBy: "L1 prompt rewrite 'restate'" });
  });

  it("when nothing validates it recommends the next tier and never escalates; at L4 it writes a recipe, not executed", async () => {
    const model = ruleModel(() => "no");
    for (const maxTier of ["L2", "L4"] as const) {
      const log = new EventLog({ runId: "r" });
      const ctx = {
        store: await store(),
        model,
        dataset: { id: "d" },
        evaluators: [yesNo()],
        images: async () => new Uint8Array(),
        runId: `r-${maxTier}`,
      };
      const { fixedBy } = await climb(ctx, cases, baseline, log, { maxTier, alpha: 0.05 });
      expect(fixedBy).toBeNull();
      const done = log.find("repairs.finished")!.payload as { recommendation: string; recipe?: { executed: boolean } };
      if (maxTier === "L2") {
        expect(done.recommendation).toMatch(/raise the ceiling to L3a .*does not escalate itself/);
        expect(done.recipe).toBeUndefined();
        expect(log.all("repair.tested").every((e) => ["L1", "L2"].includes(String(e.payload.tier)))).toBe(true);
      } else {
        expect(done.recipe).toMatchObject({ executed: false });
        expect(done.recommendation).toMatch(/written, not executed/);
      }
    }
  });
});
