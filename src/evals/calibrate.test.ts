import { describe, expect, it } from "vitest";
import { newcombePaired } from "../stats/index.ts";
import { calibrate, discordance, power } from "./calibrate.ts";
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
  it("power: Connor's n = ((z₁₋α/₂√p_d + z₁₋β√(p_d − δ²)) / δ)²", () => {
    // ((1.95996·√0.1 + 0.84162·√0.0975) / 0.05)² = 311.3… → 312
    expect(power({ discordance: 0.1, drop: 0.05 })).toMatchObject({ n: 312, alpha: 0.05, power: 0.8 });
    const back = power({ discordance: 0.1, n: 312 });
    expect(back.drop).toBeLessThanOrEqual(0.05);
    expect(back.drop).toBeGreaterThan(0.049);
  });
});
