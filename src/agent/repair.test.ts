import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { FailureCase, Model, ModelInput } from "../core/index.ts";
import { yesNo } from "../evals/index.ts";
import { FileStore } from "../store/files.node.ts";
import { EventLog } from "./events.ts";
import { investigate } from "./investigate.ts";
import {
  attentionBiasCandidate,
  climb,
  ladder,
  m5Budget,
  pairedOutcome,
  plannedCandidates,
  tierRange,
  yesShift,
} from "./repair.ts";

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

/** M5's context for `climb`: a fresh store, the yes/no evaluator, images as stand-in bytes. */
async function context(model: Model, runId: string) {
  return {
    store: await store(),
    model,
    dataset: { id: "d" },
    evaluators: [yesNo()],
    images: async () => new Uint8Array([1]),
    runId,
  };
}

describe("repair ladder", () => {
  it("pairedOutcome: one-sided exact McNemar on independent cases, e = 1/γ when p ≤ γ", () => {
    const o = pairedOutcome([false, false, false, true], [true, true, true, true]);
    expect(o).toMatchObject({ n: 4, baselineFailures: 3, candidateFailures: 0, fixed: 3, broken: 0, delta: -0.75 });
    expect(o).toMatchObject({ p: 0.125, e: 0, test: "mcnemar", unit: "case" });
    const many = pairedOutcome(new Array(12).fill(false), new Array(12).fill(true), { gamma: 0.01 });
    expect(many.p).toBeCloseTo(2 ** -12, 15);
    expect(many.e).toBe(100);
    expect(pairedOutcome([true, true], [false, false]).p).toBe(1);
    expect(() => pairedOutcome([true], [])).toThrow(/1 baseline cases vs 0/);
  });

  it("pairedOutcome with clusters: a repair that helps some images and hurts others as much is not a repair", () => {
    // 20 images × 5 questions: on even images the candidate fixes 3 cases, on odd ones it breaks 3
    const base: boolean[] = [];
    const cand: boolean[] = [];
    const clusters: string[] = [];
    for (let g = 0; g < 20; g++)
      for (let k = 0; k < 5; k++) {
        const touched = k < 3;
        base.push(g % 2 === 0 ? !touched : true);
        cand.push(g % 2 === 0 ? true : !touched);
        clusters.push(`img${g}`);
      }
    const flat = pairedOutcome(base, cand);
    const clustered = pairedOutcome(base, cand, { clusters });
    expect(flat.fixed).toBe(30);
    expect(clustered).toMatchObject({ test: "cluster-t", unit: "cluster", clusters: 20, e: 0 });
    expect(clustered.p).toBeGreaterThan(0.3);
    // the same repair on every image is found
    const good = pairedOutcome(
      base.map((_, i) => i % 5 >= 3),
      base.map(() => true),
      { clusters },
    );
    expect(good.p).toBeLessThan(1e-6);
  });

  it("yesShift picks the logit shift that makes the target number of margins positive", () => {
    expect(yesShift([2, -1, 0.5, -3], 1)).toBeCloseTo(-1.25, 12);
    expect(yesShift([2, -1, 0.5, -3], 3)).toBeCloseTo(2, 12);
    expect(yesShift([2, -1], 0)).toBe(-3);
    expect(yesShift([2, -1], 2)).toBe(2);
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
    const { fixedBy } = await climb(await context(model, "r"), cases, baseline, log, { maxTier: "L3b", alpha: 0.05 });
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

  it("a repair that only pushes toward 'yes' does not beat the yes-bias control; one that reads the case does", async () => {
    // 40 yes/no cases; the unmodified model answers by a margin logit(yes) − logit(no) per case:
    // it misses 10 "yes" cases (margin −0.6), and 10 "no" cases sit even closer to "yes" (−0.5).
    const margin = (i: number) => (i < 10 ? -0.6 : i < 20 ? 3 : i < 30 ? -0.5 : -4);
    const yn: FailureCase[] = Array.from({ length: 40 }, (_, i) => ({
      id: `q${i}`,
      input: { prompt: `is there a red circle ? ${i}` },
      expected: i < 20 ? "yes" : "no",
      tags: [],
      status: "active",
      meta: {},
    }));
    const index = (prompt: string) => Number(/\? (\d+)/.exec(prompt)![1]);
    const restated = (prompt: string) => prompt !== `is there a red circle ? ${index(prompt)}`;
    const marginModel = (rewrite: (i: number) => string): Model => {
      const m = ruleModel(
        (input) =>
          restated(input.prompt) ? rewrite(index(input.prompt)) : margin(index(input.prompt)) > 0 ? "yes" : "no",
        ["generate", "logits"],
      );
      return {
        ...m,
        forward: async (input, capture = {}) => {
          const values = new Float32Array(10);
          values[5] = margin(index(input.prompt));
          return {
            tokens: [],
            tokenIds: Int32Array.from([1, capture.answer === "no" ? 6 : 5]),
            imagePositions: new Int32Array(0),
            answerPositions: capture.answer ? Int32Array.from([1]) : new Int32Array(0),
            logits: { positions: Int32Array.from([0]), values, vocab: 10 },
            reductions: {},
          };
        },
      };
    };
    const baseYn = new Map(yn.map((c, i) => [c.id, (margin(i) > 0 ? "yes" : "no") === c.expected]));
    const outputs = new Map(yn.map((c, i) => [c.id, margin(i) > 0 ? "yes" : "no"]));
    const run = async (model: Model, id: string) => {
      const log = new EventLog({ runId: id });
      const ctx = {
        store: await store(),
        model,
        dataset: { id: "d" },
        evaluators: [yesNo()],
        images: async () => new Uint8Array(),
        runId: id,
      };
      await climb(ctx, yn, baseYn, log, { maxTier: "L1", alpha: 0.05, baselineOutputs: outputs });
      return log.all("repair.tested").map((e) => e.payload as Record<string, unknown>)[0]!;
    };
    // "restate" here just says yes more often: it fixes the ten missed yeses and breaks the ten near-zero noes
    const push = await run(
      marginModel((i) => (margin(i) > -1 ? "yes" : "no")),
      "push",
    );
    expect(push).toMatchObject({ fixed: 10, broken: 10, validated: false });
    expect(push.yesRatio).toBeCloseTo(30 / 40, 12);
    expect(push.baselineYesRatio).toBeCloseTo(10 / 40, 12);
    expect((push.control as { yesRatio: number; beaten: boolean }).beaten).toBe(false);
    // "restate" here answers every case right: it beats both the baseline and a push to the same yes-ratio
    const read = await run(
      marginModel((i) => (i < 20 ? "yes" : "no")),
      "read",
    );
    expect(read).toMatchObject({ fixed: 10, broken: 0, validated: true });
    const control = read.control as { shift: number; yesRatio: number; fixed: number; beaten: boolean };
    // pushed to the same yes-ratio, the unmodified model turns the near-zero noes into yeses first
    expect(control.yesRatio).toBeCloseTo(20 / 40, 12);
    expect(control).toMatchObject({ fixed: 20, beaten: true });
    expect(read.bySplit).toMatchObject({ all: { n: 40, fixed: 10, broken: 0 } });
  });

  it("--min-tier L3b starts the ladder at L3b: L1–L3a are neither run nor counted, and the log says so", async () => {
    // Image cases the model answers "no" to; a prompt rewrite (L1) or +image attention (L3b) makes it say "yes".
    const imageCases = cases.map((c) => ({ ...c, input: { ...c.input, image: `img${c.id}.png` } }));
    const model: Model = {
      ...ruleModel(() => "no", ["generate", "attention", "attention_write", "image"]),
      generate: async (input, options = {}) => {
        const bias = (options as { attentionBias?: { value: number } }).attentionBias;
        return /^is there a red circle \? \d+$/.test(input.prompt) && !(bias && bias.value > 0) ? "no" : "yes";
      },
    };
    const run = async (minTier?: "L3b") => {
      const log = new EventLog({ runId: "r" });
      const ctx = await context(model, `r-${minTier ?? "L1"}`);
      const { fixedBy } = await climb(ctx, imageCases, baseline, log, {
        maxTier: "L3b",
        alpha: 0.05,
        ...(minTier ? { minTier } : {}),
      });
      return { fixedBy, log };
    };
    // From L1 the cheapest rung that works wins, as before.
    expect((await run()).fixedBy).toMatch(/^L1 /);
    const { fixedBy, log } = await run("L3b");
    expect(fixedBy).toBe("L3b attention +1 on image tokens");
    expect(log.all("repair.tested").map((e) => e.payload.tier)).toEqual(["L3b", "L3b"]);
    const problems = log.all("problem").map((e) => e.payload);
    expect(problems).toEqual([
      expect.objectContaining({
        what: "ladder rungs L1, L2, L3a",
        why: expect.stringMatching(/^not run: the ladder starts at L3b/),
      }),
    ]);
    // The two L3b candidates share the ladder's α: γ = α/2, not α/7.
    const done = log.find("repairs.finished")!.payload;
    expect(done).toMatchObject({ minTier: "L3b", rungs: ["L3b"], budget: { tests: 2, gamma: 0.025 } });
    expect(String((done.budget as { note: string }).note)).toMatch(/started at L3b \(min tier\): L1, L2, L3a not run/);
    expect(plannedCandidates(model, imageCases, { minTier: "L3b", maxTier: "L3b" }).planned.map((c) => c.tier)).toEqual(
      ["L3b", "L3b"],
    );
  });

  it("a first rung above the ceiling is refused, naming the tiers (the library and the CLI)", async () => {
    expect(tierRange(undefined, "L3b")).toEqual({ minTier: "L1", maxTier: "L3b" });
    expect(() => tierRange("L3b", "L2")).toThrow(
      "min tier 'L3b' lies above max tier 'L2': the ladder's first rung must not exceed its ceiling (tiers, lowest first: L1, L2, L3a, L3b, L4)",
    );
    expect(() => tierRange("L9", "L3b")).toThrow(/min tier 'L9' must be one of L1, L2, L3a, L3b, L4/);
    expect(() => tierRange("L1", "none")).toThrow(/needs a ladder, but max tier is none/);
    // investigate() refuses both before anything runs: a bad range, and a resume whose ladder started elsewhere.
    const options = {
      store: await store(),
      model: ruleModel(() => "no"),
      dataset: { id: "d", cases, source: "d.jsonl", fingerprint: "f" },
      evaluators: [yesNo()],
      images: async () => new Uint8Array([1]),
      protocol: { question: "why?" },
      runId: "inv",
    };
    await expect(investigate({ ...options, minTier: "L3b", maxTier: "L2" })).rejects.toThrow(
      "min tier 'L3b' lies above max tier 'L2'",
    );
    const started = new EventLog({ runId: "inv" }).append("setup", "run.started", { kind: "investigate" });
    await expect(investigate({ ...options, minTier: "L3b", previous: [started] })).rejects.toThrow(
      "min tier is L3b where the interrupted run started its ladder at L1: resume it with the same min tier",
    );
    // The probe search's judge paraphrases need the judge that writes them (the fixed loop's `judge`).
    await expect(investigate({ ...options, searchProbes: { budget: 10, judgeParaphrases: true } })).rejects.toThrow(
      "judge paraphrases need a judge endpoint",
    );
    const bin = fileURLToPath(new URL("../node/bin.mjs", import.meta.url));
    const cli = spawnSync(bin, ["investigate", "--min-tier", "L3b", "--max-tier", "L2"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(cli.status).not.toBe(0);
    expect(cli.stderr).toMatch(/--min-tier 'L3b' lies above --max-tier 'L2': .*lowest first: L1, L2, L3a, L3b, L4/);
  }, 60_000);

  it("one α over M5: the mechanism test first at α/2, the ladder's half raised to all of α when it confirms", () => {
    const b = m5Budget(0.05, 7, true);
    expect(b.mechanism).toBe(0.025);
    expect([b.ladder(false), b.ladder(true)]).toEqual([0.025, 0.05]);
    // Whatever the mechanism test decides, at most α is spent: α/2 + α/2 when it does not confirm,
    // and when it confirms its null was rejected, so the ladder's α is the only one at risk.
    expect(b.mechanism + b.ladder(false)).toBeCloseTo(0.05, 15);
    expect(m5Budget(0.05, 7, false).ladder(false)).toBe(0.05);
    expect(m5Budget(0.05, 0, true)).toMatchObject({ mechanism: 0.05 });
    expect(() => m5Budget(1.5, 3, true)).toThrow("m5Budget(): alpha 1.5 must lie in (0, 1)");
  });
});
