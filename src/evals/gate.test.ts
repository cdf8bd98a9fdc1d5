import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { describe, expect, it } from "vitest";
import { seededRng } from "../stats/rng.ts";
import { compare } from "./compare.ts";
import { gate, Gate } from "./gate.ts";
import { pairedTable, syntheticRun, type SyntheticCase } from "./synthetic.ts";

function pair(t: { both: number; regressed: number; fixed: number; neither: number }) {
  const { a, b } = pairedTable(t);
  return { base: syntheticRun({ id: "base", cases: a }), cand: syntheticRun({ id: "cand", cases: b }) };
}

describe("gate: worked examples against a baseline (McNemar + Newcombe)", () => {
  it("50 shared cases, 12 regressed and 0 fixed, tolerance 0.03 → fail", () => {
    const { base, cand } = pair({ both: 35, regressed: 12, fixed: 0, neither: 3 });
    const r = gate(cand, Gate({ baseline: "base", tolerance: 0.03 }), base);
    const t = r.comparison!.tests[0]!;
    // diff = (0 − 12) / 50; McNemar: 2 · P(X ≤ 0), X ~ Bin(12, ½) = 2 / 4096
    expect(t.diff).toBeCloseTo(-0.24, 12);
    expect(t.p).toBeCloseTo(2 / 4096, 15);
    expect(t.method).toBe("mcnemar-newcombe");
    expect(t.hi).toBeLessThan(-0.03);
    expect(r).toMatchObject({ verdict: "fail", exitCode: 1 });
    expect(r.reasons).toEqual([
      "pass: −24.0 pts [−37.1, −11.4] (95% CI), p = 0.000488 (exact McNemar, Newcombe interval; Holm), 12 regressed / 0 fixed of 50 — tolerance 3.0 pts → fail",
    ]);
  });

  it("50 shared cases, 6 regressed and 1 fixed, tolerance 0.03 → inconclusive: exit 0, or 2 under strict", () => {
    const { base, cand } = pair({ both: 40, regressed: 6, fixed: 1, neither: 3 });
    const r = gate(cand, Gate({ baseline: "base", tolerance: 0.03 }), base);
    const t = r.comparison!.tests[0]!;
    // McNemar: 2 · (C(7,0) + C(7,1)) / 2^7 = 16 / 128: not evidence of a drop, nor of its absence
    expect(t.p).toBe(0.125);
    expect(t.diff).toBeCloseTo(-0.1, 12);
    expect(t.lo).toBeLessThan(-0.03);
    expect(t.hi).toBeGreaterThan(-0.03);
    expect(r).toMatchObject({ verdict: "inconclusive", exitCode: 0 });
    expect(r.reasons[0]).toBe(
      "pass: −10.0 pts [−22.0, +1.1] (95% CI), p = 0.125 (exact McNemar, Newcombe interval; Holm), 6 regressed / 1 fixed of 50 — tolerance 3.0 pts → inconclusive",
    );
    expect(gate(cand, Gate({ baseline: "base", tolerance: 0.03, strict: true }), base)).toMatchObject({
      verdict: "inconclusive",
      exitCode: 2,
    });
  });

  it("400 shared cases, 2 regressed and 3 fixed, tolerance 0.03 → pass", () => {
    const { base, cand } = pair({ both: 380, regressed: 2, fixed: 3, neither: 15 });
    const r = gate(cand, Gate({ baseline: "base", tolerance: 0.03, strict: true }), base);
    expect(r.comparison!.tests[0]!.lo).toBeGreaterThanOrEqual(-0.03);
    expect(r).toMatchObject({ verdict: "pass", exitCode: 0 });
  });

  it("only unchanged shared cases are paired; changed ones are named in a warning", () => {
    const { a, b } = pairedTable({ both: 35, regressed: 12, fixed: 0, neither: 3 });
    // edit the 12 regressed cases in the candidate's dataset: they no longer count
    const edited = b.map((c, i) => (i >= 35 && i < 47 ? { ...c, hash: "edited" } : c));
    const r = gate(
      syntheticRun({ id: "cand", cases: edited }),
      Gate({ baseline: "base", tolerance: 0.03 }),
      syntheticRun({ id: "base", cases: a }),
    );
    expect(r.comparison!.cases).toMatchObject({ shared: 38, onlyBaseline: 0, onlyCandidate: 0 });
    expect(r.comparison!.tests[0]!.diff).toBe(0);
    expect(r.warnings.join("\n")).toMatch(/12 case\(s\) changed between the runs/);
  });

  it("several gated metrics: Holm-adjusted p, intervals at 1 − α/k; the rest exploratory (BH)", () => {
    const cases = (flip: boolean): SyntheticCase[] =>
      Array.from({ length: 60 }, (_, i) => {
        const acc: 0 | 1 = flip && i < 10 ? 0 : 1;
        const fmt = (i % 2) as 0 | 1;
        const extra: 0 | 1 = flip && i < 5 ? 0 : 1;
        return { id: `c${i}`, pass: [acc && fmt && extra ? 1 : 0], checks: { acc: [acc], fmt: [fmt], extra: [extra] } };
      });
    const r = gate(
      syntheticRun({ id: "cand", cases: cases(true) }),
      Gate({ baseline: "base", tolerance: { acc: 0.05, fmt: 0.05 } }),
      syntheticRun({ id: "base", cases: cases(false) }),
    );
    const by = Object.fromEntries(r.comparison!.tests.map((t) => [t.metric, t]));
    expect(by["acc"]).toMatchObject({ gated: true, adjustment: "holm", confidence: 0.975, regressed: 10, fixed: 0 });
    expect(by["fmt"]).toMatchObject({ gated: true, adjustment: "holm", diff: 0, pAdjusted: 1 });
    // Holm over {p_acc, 1}: the smaller is doubled
    expect(by["acc"]!.pAdjusted).toBeCloseTo(2 * by["acc"]!.p, 12);
    expect(by["extra"]).toMatchObject({ gated: false, adjustment: "benjamini-hochberg" });
    expect(by["extra"]!.verdict).toBeUndefined();
    expect(r.verdict).toBe("fail");
  });
});

describe("gate: the deterministic tiers", () => {
  const cases = (criticalFails: boolean, errors = 0): SyntheticCase[] =>
    Array.from({ length: 40 }, (_, i) => ({
      id: `c${i}`,
      pass: [i < errors ? null : i === 0 && criticalFails ? 0 : 1, 1],
      tags: i < 3 ? ["critical"] : [],
    }));

  it("a failing case tagged critical fails the run, with no statistics", () => {
    const r = gate(syntheticRun({ id: "r", cases: cases(true) }), Gate({}));
    expect(r).toMatchObject({ verdict: "fail", exitCode: 1, mustPass: { tag: "critical", cases: 3, failed: ["c0"] } });
    expect(r.reasons[0]).toMatch(/1 of 3 'critical' case\(s\) failed \(must pass, no statistics\): c0/);
    expect(gate(syntheticRun({ id: "r", cases: cases(false) }), Gate({})).verdict).toBe("pass");
    expect(gate(syntheticRun({ id: "r", cases: cases(true) }), Gate({ mustPassTag: null })).verdict).toBe("pass");
  });

  it("error budget: more than maxErrorRate of trials errored → error (exit 3)", () => {
    // 4 of 80 trials = 5%: within the default budget; 5 of 80 = 6.25%: over it
    const ok = gate(syntheticRun({ id: "r", cases: cases(false, 4) }), Gate({}));
    expect(ok.verdict).toBe("pass");
    expect(ok.warnings.join()).toMatch(/4 of 80 trials errored \(within the budget\)/);
    const bad = gate(syntheticRun({ id: "r", cases: cases(false, 5) }), Gate({}));
    expect(bad).toMatchObject({ verdict: "error", exitCode: 3, errors: { trials: 80, errored: 5, rate: 5 / 80 } });
    expect(bad.reasons[0]).toMatch(/5 of 80 trials errored \(6\.3% > the 5\.0% budget\)/);
    // error outranks fail
    expect(gate(syntheticRun({ id: "r", cases: cases(true, 5) }), Gate({})).verdict).toBe("error");
  });

  it("thresholds: a metric whose interval lies under its floor fails; one only under it by noise is inconclusive", () => {
    const run = syntheticRun({
      id: "r",
      cases: Array.from({ length: 50 }, (_, i) => ({ id: `c${i}`, pass: [i < 45 ? 1 : 0] })),
    });
    expect(gate(run, Gate({ threshold: 0.8 }))).toMatchObject({ verdict: "pass", exitCode: 0 });
    // Wilson 45/50 → [0.786, 0.957]: 0.95 is inside it, so a 90% run is not shown to be under 95%
    const r = gate(run, Gate({ threshold: 0.95 }));
    expect(r).toMatchObject({ verdict: "inconclusive", exitCode: 0 });
    expect(r.thresholds[0]).toMatchObject({ verdict: "inconclusive", passed: true });
    expect(r.reasons[0]).toBe(
      "pass: 90.0% [78.6, 95.7] (wilson, n = 50) is under the floor 95.0% but its interval reaches it: not shown to be below → inconclusive",
    );
    const low = gate(run, Gate({ threshold: 0.97 }));
    expect(low).toMatchObject({ verdict: "fail", exitCode: 1 });
    expect(low.reasons[0]).toBe("pass: 90.0% [78.6, 95.7] (wilson, n = 50) lies entirely under the floor 97.0% → fail");
  });

  it("a model exactly at its floor is failed about α/2 of the time, not half the time", () => {
    const rng = seededRng("test", 7);
    let fails = 0;
    let under = 0;
    for (let s = 0; s < 200; s++) {
      // 200 cases, each passing with probability 0.8: about half of these runs score under 80%
      const cases = Array.from({ length: 200 }, (_, i) => ({
        id: `c${i}`,
        pass: [uniformFloat64(rng) < 0.8 ? 1 : 0] as [0 | 1],
      }));
      const r = gate(syntheticRun({ id: `r${s}`, cases }), Gate({ threshold: 0.8 }));
      if (r.thresholds[0]!.mean < 0.8) under++;
      if (r.verdict === "fail") fails++;
    }
    expect(under).toBeGreaterThan(70);
    // α/2 = 2.5% of 200 is 5; ≤ 12 holds with probability > 0.99
    expect(fails).toBeLessThanOrEqual(12);
  });
});

describe("gate: comparability and bad input", () => {
  const base = syntheticRun({ id: "base", cases: [{ id: "a", pass: [1] }] });
  it("warns when fingerprints differ in anything but the model", () => {
    const cand = syntheticRun({
      id: "cand",
      cases: [{ id: "a", pass: [1] }],
      fingerprint: {
        datasetVersion: "v2",
        evaluators: { yesNo: "2" },
        generation: { temperature: 0.7, repeats: 1 },
        model: { key: "other-model" },
      },
    });
    const warnings = gate(cand, Gate({ baseline: "base", tolerance: 0.5 }), base).warnings;
    expect(warnings).toHaveLength(3);
    const w = warnings.join("\n");
    expect(w).toMatch(/different dataset versions \(synthetic → v2\)/);
    expect(w).toMatch(/different evaluator versions: yesNo \(absent\) → 2/);
    expect(w).toMatch(/different generation settings: temperature 0 → 0\.7/);
    expect(w).not.toMatch(/other-model/);
  });
  it("refuses a metric the eval lacks, a bad tolerance, a baseline of another eval", () => {
    expect(() => gate(base, Gate({ threshold: { acc: 0.5 } }))).toThrow(
      "the gate names 'acc', which is not a metric of this eval; metrics are ['pass']",
    );
    expect(() => Gate({ baseline: "latest", tolerance: 3 })).toThrow(/tolerance 3 for 'pass' is not in \(0, 1\)/);
    expect(() => Gate({ baseline: "latest" })).toThrow(/needs a tolerance/);
    const other = syntheticRun({ id: "o", evalKey: "other", cases: [{ id: "a", pass: [1] }] });
    expect(() => gate(base, Gate({ baseline: "o", tolerance: 0.1 }), other)).toThrow(
      /baseline 'o' is a run of eval 'other', not of 'synthetic-eval'/,
    );
  });
});

describe("compare", () => {
  it("without a tolerance reports differences and judges nothing", () => {
    const { base, cand } = pair({ both: 40, regressed: 6, fixed: 1, neither: 3 });
    const r = compare(base, cand);
    expect(r.verdict).toBeUndefined();
    expect(r.exitCode).toBeUndefined();
    expect(r.comparison.tests[0]).toMatchObject({ metric: "pass", p: 0.125, regressed: 6, fixed: 1 });
    expect(r.reasons[0]).not.toMatch(/→/);
  });
  it("with a tolerance decides like the gate", () => {
    const { base, cand } = pair({ both: 35, regressed: 12, fixed: 0, neither: 3 });
    expect(compare(base, cand, { tolerance: 0.03 })).toMatchObject({ verdict: "fail", exitCode: 1 });
  });
  it("clustered runs are compared by the cluster-robust t, with a warning under 20 clusters", () => {
    const mk = (id: string, drop: boolean) =>
      syntheticRun({
        id,
        clusterField: "cluster",
        cases: Array.from({ length: 60 }, (_, i) => ({
          id: `c${i}`,
          cluster: `img${Math.floor(i / 3)}`,
          pass: [drop && i % 3 === 0 ? 0 : 1, 1],
        })),
      });
    const r = compare(mk("a", false), mk("b", true));
    const t = r.comparison.tests[0]!;
    expect(t.method).toBe("cluster-t");
    expect(t.clusters).toBe(20);
    expect(r.warnings.join("\n")).not.toMatch(/only \d+ clusters/);
    expect(t.diff).toBeCloseTo(-10 / 60, 12);
    expect(t.hi).toBeLessThan(0);
  });
});
