import { describe, expect, it } from "vitest";
import { newcombePaired } from "../stats/index.ts";
import { calibrate, discordance, power, simulatedRuns } from "./calibrate.ts";
import { gate, Gate } from "./gate.ts";
import { syntheticRun, type SyntheticCase } from "./synthetic.ts";

const run = (id: string, cases: SyntheticCase[], codeVersion = "abc123") =>
  syntheticRun({ id, cases, fingerprint: { codeVersion } });

describe("calibrate", () => {
  it("40 cases that always pass: the A/A tolerance is the interval's own width, with no flakes", () => {
    const cases = Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, pass: [1] as const }));
    const got = calibrate([run("r1", [...cases]), run("r2", [...cases]), run("r3", [...cases])], {
      target: 0.03,
      simulations: 20,
    });
    // every simulated pair agrees on all 40 cases: the lower end is Newcombe's for 40 concordant passes
    const [lo] = newcombePaired(40, 0, 0, 0);
    expect(got.rows.map((r) => r.repeats)).toEqual([1, 2, 3, 5]);
    expect(got.rows[0]!.tolerance).toBe(Math.ceil(-lo * 1000 - 1e-9) / 1000);
    expect(got).toMatchObject({ cases: 40, flakyShare: 0, flipRate: 0, recommendedRepeats: null });
    expect(got.notes[0]).toMatch(/too noisy to gate at tolerance 3\.0 pts with 40 cases/);
  });

  it("measures flakes: flaky share, flip rate, and tolerance shrinking with repeats", () => {
    // 200 cases; 40 of them flip between runs (pass in 2 of 3 runs)
    const mk = (r: number): SyntheticCase[] =>
      Array.from({ length: 200 }, (_, i) => ({ id: `c${i}`, pass: [i < 40 ? (i % 3 === r ? 0 : 1) : 1] }));
    const got = calibrate([run("r1", mk(0)), run("r2", mk(1)), run("r3", mk(2))], {
      target: 0.06,
      simulations: 60,
      bootstrap: 1000,
    });
    expect(got.flakyShare).toBeCloseTo(40 / 200, 12);
    // each flaky case: 2 passes of 3 trials → unbiased P(two trials differ) = 2·2·1/(3·2) = 2/3
    expect(got.flipRate).toBeCloseTo((40 * (2 / 3)) / 200, 12);
    const tol = Object.fromEntries(got.rows.map((r) => [r.repeats, r.tolerance]));
    expect(tol[5]).toBeLessThan(tol[1]!);
    expect(got.observed).toHaveLength(3);
    expect(got.recommendedRepeats).toBe(got.rows.find((r) => r.tolerance <= 0.06)?.repeats ?? null);
    expect(got.rows.every((r) => r.aaPassAtTarget! >= 0 && r.aaPassAtTarget! <= 1)).toBe(true);
    // deterministic: the same runs give the same table
    const again = calibrate([run("r1", mk(0)), run("r2", mk(1)), run("r3", mk(2))], {
      target: 0.06,
      simulations: 60,
      bootstrap: 1000,
    });
    expect(again.rows).toEqual(got.rows);
  });

  it("refuses one run and runs of different evals; warns on different code versions", () => {
    const cases: SyntheticCase[] = [{ id: "a", pass: [1] }];
    expect(() => calibrate([run("r1", cases)])).toThrow(/at least two runs/);
    const other = syntheticRun({ id: "x", evalKey: "other", cases });
    expect(() => calibrate([run("r1", cases), other])).toThrow(
      /runs of one eval, not of \['synthetic-eval', 'other'\]/,
    );
    const got = calibrate([run("r1", cases, "aaa"), run("r2", cases, "bbb")], { simulations: 5 });
    expect(got.warnings[0]).toMatch(/different code versions \[aaa, bbb\]/);
  });
});

describe("discordance and power", () => {
  it("discordance is the share of shared cases the runs disagree on", () => {
    const a = syntheticRun({ id: "a", cases: Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, pass: [1] })) });
    const b = syntheticRun({
      id: "b",
      cases: Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, pass: [i < 3 ? 0 : 1] })),
    });
    expect(discordance(a, b)).toEqual({ discordance: 0.3, n: 10 });
  });
  it("power predicts the gate's own fail rate (tolerance, repeats, clusters), checked against real gate calls", () => {
    const settings = [
      { n: 300, drop: 0.08, tolerance: 0.03 },
      { n: 240, drop: 0.1, tolerance: 0.03, repeats: 3, flipRate: 0.1, clusterSize: 6, icc: 0.3 },
    ];
    for (const st of settings) {
      const predicted = power({ ...st, simulations: 300, seed: 3 });
      let fails = 0;
      const runs = 300;
      for (let k = 0; k < runs; k++) {
        const { baseline, candidate } = simulatedRuns(st, 10_000 + k);
        const cluster = st.clusterSize ? { clusterField: "cluster" } : {};
        const r = gate(
          syntheticRun({ id: "cand", cases: candidate, ...cluster }),
          Gate({ baseline: "base", tolerance: st.tolerance, mustPassTag: null }),
          syntheticRun({ id: "base", cases: baseline, ...cluster }),
        );
        if (r.verdict === "fail") fails++;
      }
      const realized = fails / runs;
      // two independent estimates of the same probability: within 3.5 combined Monte Carlo errors
      const se = Math.sqrt((2 * realized * (1 - realized)) / runs) + 0.01;
      expect(Math.abs(predicted.power - realized), JSON.stringify(st)).toBeLessThan(3.5 * se);
      expect(predicted.mcError).toBeCloseTo(Math.sqrt((predicted.power * (1 - predicted.power)) / 300), 12);
    }
  });

  it("power counts the tolerance: a drop barely above it is failed far less often than at tolerance ≈ 0", () => {
    const strict = power({ n: 300, drop: 0.05, tolerance: 0.001, simulations: 200 });
    const loose = power({ n: 300, drop: 0.05, tolerance: 0.03, simulations: 200 });
    expect(strict.power).toBeGreaterThan(loose.power + 0.3);
    expect(power({ n: 300, drop: 0.02, tolerance: 0.03, simulations: 100 }).notes[0]).toMatch(
      /not above the tolerance/,
    );
  });

  it("power says how many cases and repeats reach the target, and the smallest drop n cases fail", () => {
    const r = power({ drop: 0.1, tolerance: 0.03, simulations: 200 });
    expect(r.casesForTarget).not.toBeNull();
    expect(r.n).toBe(r.casesForTarget);
    expect(r.power).toBeGreaterThanOrEqual(0.8);
    const below = r.curve.filter((p) => p.n < r.casesForTarget!);
    expect(below.every((p) => p.power < 0.8)).toBe(true);
    expect(r.summary).toMatch(/cases reach 80%/);
    const d = power({ n: 400, tolerance: 0.03, simulations: 200 });
    expect(d.drop).toBeGreaterThan(0.03);
    expect(d.drop).toBeLessThan(0.2);
    const flaky = power({ n: 200, drop: 0.1, tolerance: 0.03, flipRate: 0.2, simulations: 200 });
    expect(flaky.method).toBe("mcnemar-newcombe");
    expect(power({ n: 200, drop: 0.1, repeats: 3, flipRate: 0.2, simulations: 100 }).method).toBe("adjusted-t");
  });

  it("power refuses inputs it cannot simulate, naming them", () => {
    expect(() => power({ n: 100 })).not.toThrow();
    expect(() => power({})).toThrow(/give drop .* or n/);
    expect(() => power({ drop: 0.05, n: 100, flipRate: 0.7 })).toThrow(/flipRate 0.7 is not in \[0, 0.5\]/);
    expect(() => power({ drop: 0.05, n: 100, passRate: 0.95, flipRate: 0.2 })).toThrow(/cannot go with passRate/);
    expect(() => power({ drop: 0.05, n: 100, repeats: 0 })).toThrow(/repeats 0/);
  });
});
