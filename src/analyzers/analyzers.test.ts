import { describe, expect, it } from "vitest";
import type { FailureCase, Trace, TraceTensor } from "../core/index.ts";
import {
  attention,
  attentionRollout,
  chairMetrics,
  gridPeak,
  logitLens,
  logprobEntropy,
  popeMetrics,
  rankAnalyzers,
  rewrite,
  tokenEntropy,
  type ProbeItem,
} from "./index.ts";

const tensor = (data: number[], shape: number[], axes: string[]): TraceTensor => ({
  data: Float32Array.from(data),
  shape,
  axes,
});

function kase(id: string, expected: string, extra: Partial<FailureCase> = {}): FailureCase {
  return {
    id,
    input: { prompt: "<image> is there a red circle ?" },
    expected,
    tags: [],
    status: "active",
    meta: {},
    ...extra,
  };
}

function trace(reductions: Trace["reductions"], answerAt = 5, answerId = 12): Trace {
  return {
    tokens: [],
    tokenIds: Int32Array.from([1, 4, 4, 5, 6, answerId, 2]),
    imagePositions: Int32Array.from([1, 2]),
    answerPositions: Int32Array.from([answerAt]),
    reductions,
  };
}

describe("trace analyzers turn reductions into per-case signals", () => {
  it("attention: pooled and per-layer image share, and the map's peak", () => {
    const item: ProbeItem = {
      case: kase("a", "yes"),
      output: "yes",
      passed: true,
      trace: trace({
        imageAttentionShare: tensor([0.2, 0.4, 0.6, 0.8], [2, 2], ["layer", "head"]),
        imageAttentionMap: tensor([1, 1, 1, 1, 0, 0, 0, 2], [2, 2, 2], ["layer", "row", "col"]),
      }),
    };
    const s = attention.signals!(item);
    expect(s["attention.imageShare.pooled"]).toBeCloseTo(0.5);
    expect(s["attention.imageShare.L0"]).toBeCloseTo(0.3);
    expect(s["attention.imageShare.L1"]).toBeCloseTo(0.7);
    expect(s["attention.imageMapPeak"]).toBe(1);
    expect(attention.requires).toEqual(["attention"]);
  });

  it("rollout: peak share and entropy of the grid", () => {
    expect(gridPeak([1, 1, 1, 1])).toMatchObject({ peak: 0.25, entropy: Math.log(4) });
    const item: ProbeItem = {
      case: kase("a", "no"),
      output: "no",
      passed: false,
      trace: trace({ rollout: tensor([0, 0, 0, 3], [2, 2], ["row", "col"]) }),
    };
    expect(attentionRollout.signals!(item)).toEqual({ "rollout.peak": 1, "rollout.entropy": 0 });
  });

  it("uncertainty: entropy where the answer is predicted, log-probability of the answer tokens", () => {
    const item: ProbeItem = {
      case: kase("a", "yes"),
      output: "yes",
      passed: true,
      trace: trace({
        tokenEntropy: tensor([9, 9, 9, 9, 0.7, 9, 9], [7], ["position"]),
        tokenLogprob: tensor([NaN, 0, 0, 0, 0, -0.25, 0], [7], ["position"]),
      }),
    };
    expect(tokenEntropy.signals!(item)).toEqual({ "tokenEntropy.answer": expect.closeTo(0.7, 5) });
    expect(logprobEntropy.signals!(item)).toEqual({ "logprob.answer": -0.25 });
  });

  it("logit lens: the first state where the answer is top-1, and its probability per state", () => {
    // 3 states × top-2 × (id, prob); the answer id is 12.
    const lens = tensor([7, 0.5, 12, 0.3, 12, 0.6, 7, 0.2, 12, 0.9, 3, 0.05], [3, 2, 2], ["state", "rank", "id|prob"]);
    const item: ProbeItem = { case: kase("a", "yes"), output: "yes", passed: true, trace: trace({ logitLens: lens }) };
    const s = logitLens.signals!(item);
    expect(s["logitLens.top1Layer"]).toBe(1);
    expect(s["logitLens.answerProb.S0"]).toBeCloseTo(0.3);
    expect(s["logitLens.answerProb.S2"]).toBeCloseTo(0.9);
  });

  it("a case without the reduction gets no signal (not a zero)", () => {
    expect(attention.signals!({ case: kase("a", "yes"), output: "yes", passed: true })).toEqual({});
  });
});

describe("run-level analyzers", () => {
  it("POPE metrics per split", () => {
    const items: ProbeItem[] = [
      { case: kase("1", "yes", { split: "random" }), output: "yes", passed: true },
      { case: kase("2", "no", { split: "random" }), output: "yes", passed: false },
      { case: kase("3", "yes", { split: "adversarial" }), output: "no", passed: false },
      { case: kase("4", "no", { split: "adversarial" }), output: "maybe", passed: false },
      { case: kase("5", "yes", { split: "adversarial" }), output: "i think yes", passed: true },
    ];
    const [all, random, adversarial] = popeMetrics(items);
    // Answers are read as the yesNo evaluator reads them ("i think yes" is yes), and an answer that is
    // neither yes nor no is reported as unknown and is wrong, as the evaluator's verdict (passed) says.
    expect(all).toMatchObject({
      split: "all",
      n: 5,
      accuracy: 0.4,
      precision: 2 / 3,
      recall: 2 / 3,
      yesRatio: 0.6,
      unknownShare: 0.2,
    });
    expect(all!.accuracy).toBe(items.filter((i) => i.passed).length / items.length);
    expect(random).toMatchObject({ split: "random", n: 2, accuracy: 0.5 });
    expect(adversarial).toMatchObject({ split: "adversarial", n: 3, accuracy: 1 / 3 });
  });

  it("CHAIR_i and CHAIR_s over captions", () => {
    const c = (objects: string[]) => kase("c", "", { meta: { objects } });
    const m = chairMetrics([
      { case: c(["red circle"]), output: "a red circle and a blue square .", passed: false },
      { case: c(["blue square"]), output: "a blue square .", passed: true },
    ]);
    expect(m).toEqual({ captions: 2, chairI: 1 / 3, chairS: 0.5 });
  });
});

describe("registry: what a model can run, ranked by the protocol's hints", () => {
  it("drops analyzers whose capabilities are missing and ranks by hint tags", () => {
    const blackBox = rankAnalyzers(new Set(["generate"]), ["prompt"]);
    expect(blackBox[0]!.analyzer.name).toBe("promptContrast");
    expect(blackBox.find((a) => a.analyzer.name === "attention")).toMatchObject({
      runnable: false,
      missing: ["attention"],
    });
    const white = rankAnalyzers(new Set(["generate", "logits", "attention", "hidden_states", "image"]), [
      "uncertainty",
    ]);
    expect(white.slice(0, 3).map((a) => a.analyzer.name)).toEqual(["logitLens", "tokenEntropy", "logprobEntropy"]);
    expect(white.every((a) => a.runnable)).toBe(true);
  });

  it("rewrites keep the image marker first and use the prompt's own words", () => {
    expect(rewrite("context").apply("<image> is there a red circle ?")).toBe(
      "<image> the image . is there a red circle ?",
    );
    expect(rewrite("restate").apply("is it ?")).toBe("is it ? is it ?");
    expect(() => rewrite("nope")).toThrow(/unknown rewrite 'nope'/);
  });
});
