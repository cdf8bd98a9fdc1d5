import { describe, expect, it } from "vitest";
import { Gate, gate, pairedTable, power, syntheticRun, type SyntheticCase } from "../src/evals/index.ts";
import {
  CASE_KINDS,
  calibrateJob,
  caseColumns,
  caseOutputs,
  compareJob,
  flipTable,
  gateCommand,
  powerJob,
  simulationsFor,
} from "./stats-jobs.ts";

// 40 both pass, 12 regressed, 1 fixed, 7 both fail: a clear regression at a 3-point tolerance.
const table = pairedTable({ both: 40, regressed: 12, fixed: 1, neither: 7 });
const base = syntheticRun({ id: "base", cases: table.a });
const cand = syntheticRun({ id: "cand", cases: table.b });

describe("compareJob", () => {
  it("gives the gate's own verdict and comparison for the pair", () => {
    const job = compareJob(base, cand, { tolerance: 0.03 });
    const direct = gate(cand, Gate({ baseline: "base", tolerance: 0.03 }), base);
    expect(job.gate).toEqual(direct);
    expect(job.gate?.verdict).toBe("fail");
    expect(job.comparison).toEqual(direct.comparison);
    expect(job.metrics[0]).toMatchObject({ metric: "pass", gated: true, regressed: 12, fixed: 1, verdict: "fail" });
    expect(job.metrics[0]!.line).toBe(direct.reasons.at(-1));
    expect(job.command).toBe("evalrx gate cand.run.json --baseline base.run.json --tolerance 0.03");
  });

  it("adds McNemar's e-value where the test is McNemar's, and none for the bootstrap", () => {
    const job = compareJob(base, cand, { tolerance: 0.03 });
    expect(job.metrics[0]!.method).toBe("mcnemar-newcombe");
    expect(job.metrics[0]!.eValue).toBeGreaterThan(20); // 12 of 13 discordant cases went one way
    const clustered = (id: string, cases: readonly SyntheticCase[]) =>
      syntheticRun({ id, clusterField: "scene", cases: cases.map((c, i) => ({ ...c, cluster: `s${i % 10}` })) });
    const boot = compareJob(clustered("base", table.a), clustered("cand", table.b), { tolerance: 0.03 });
    expect(boot.metrics[0]!.method).not.toBe("mcnemar-newcombe"); // the cluster-aware test, whichever issue 14 chose
    expect(boot.metrics[0]!.eValue).toBeUndefined();
  });

  it("compares runs of two evals without gating them, and says why", () => {
    const other = syntheticRun({ id: "other", evalKey: "another-eval", cases: table.b });
    const job = compareJob(base, other, { tolerance: 0.03 });
    expect(job.gate).toBeUndefined();
    expect(job.refused).toBe(
      "baseline 'base' is a run of eval 'synthetic-eval', not of 'another-eval'; choose a run of the same eval",
    );
    expect(job.warnings[0]).toBe("two different evals: 'synthetic-eval' and 'another-eval'");
    expect(job.metrics[0]!.verdict).toBe("fail");
  });

  it("counts the 2×2 the test read, and each run's own estimate", () => {
    const job = compareJob(base, cand, { tolerance: 0.03 });
    expect(job.flips).toMatchObject({ bothPass: 40, regressed: 12, fixed: 1, bothFail: 7, other: 0 });
    expect(job.estimates.map((e) => [e.run, e.summary.name, e.summary.mean])).toEqual([
      ["baseline", "pass", 52 / 60],
      ["candidate", "pass", 41 / 60],
    ]);
  });
});

describe("caseColumns", () => {
  it("sorts regressions first (largest drop first), then fixes, then the rest, with cases only one run has last", () => {
    const a = syntheticRun({
      id: "a",
      cases: [
        { id: "same-pass", pass: [1, 1] },
        { id: "fixed", pass: [0, 0] },
        { id: "dropped", pass: [1, 1] },
        { id: "regressed", pass: [1, 1] },
        { id: "edited", pass: [1, 1] },
        { id: "gone", pass: [1, 1] },
        { id: "flaky", pass: [1, 0] },
      ],
    });
    const b = syntheticRun({
      id: "b",
      cases: [
        { id: "same-pass", pass: [1, 1] },
        { id: "fixed", pass: [1, 1] },
        { id: "dropped", pass: [1, 0] },
        { id: "regressed", pass: [0, 0] },
        { id: "edited", pass: [1, 1], hash: "other" },
        { id: "new", pass: [1, 1] },
        { id: "flaky", pass: [0, 1] },
      ],
    });
    const cols = caseColumns(a, b);
    expect(cols.ids).toEqual(["regressed", "dropped", "fixed", "same-pass", "flaky", "edited", "gone", "new"]);
    expect([...cols.kind].map((k) => CASE_KINDS[k])).toEqual([
      "regressed",
      "dropped",
      "fixed",
      "both-pass",
      "both-flaky",
      "changed-case",
      "only-baseline",
      "only-candidate",
    ]);
    expect([...cols.baseline.slice(0, 3)]).toEqual([1, 1, 0]);
    expect([...cols.candidate.slice(0, 3)]).toEqual([0, 0.5, 1]);
    expect([...cols.differs]).toEqual([1, 1, 1, 0, 0, 1, 1, 1]);
  });

  it("marks a case whose answers differ under the same verdict", () => {
    const a = syntheticRun({ id: "a", cases: [{ id: "c", pass: [1] }] });
    const b = syntheticRun({ id: "b", cases: [{ id: "c", pass: [1] }] });
    const changed = {
      ...b,
      cases: new Map([["c", { ...b.cases.get("c")!, trials: [{ ...b.cases.get("c")!.trials[0]!, output: "Yes." }] }]]),
    };
    expect(CASE_KINDS[caseColumns(a, changed).kind[0]!]).toBe("answer-differs");
    expect(caseOutputs(a, changed, ["c", "missing"])).toEqual([
      { id: "c", baseline: [{ output: "", verdict: "pass" }], candidate: [{ output: "Yes.", verdict: "pass" }] },
      { id: "missing", baseline: [], candidate: [] },
    ]);
  });
});

describe("flipTable and gateCommand", () => {
  it("counts shares between 0 and 1 apart from the four cells", () => {
    expect(flipTable([1, 1, 0, 0, 0.5], [1, 0, 1, 0, 1])).toMatchObject({
      bothPass: 1,
      regressed: 1,
      fixed: 1,
      bothFail: 1,
      other: 1,
    });
  });

  it("writes the CLI's options for other gated metrics and α, and file names the shell can take", () => {
    expect(gateCommand("run b/1", "a", 0.05, ["pass", "yesNo"], 0.01)).toBe(
      "evalrx gate run_b_1.run.json --baseline a.run.json --tolerance 0.05 --metric pass --metric yesNo --alpha 0.01",
    );
  });
});

describe("powerJob", () => {
  it("asks the library's power twice: on the baseline's own cases, and for the cases a drop needs", () => {
    const job = powerJob(base, { drop: 0.08, tolerance: 0.03 });
    const rates = table.a.map((c) => c.pass[0] as number);
    expect(job.atRuns).toEqual(
      power({ drop: 0.08, tolerance: 0.03, repeats: 1, caseRates: rates, simulations: simulationsFor(60, 1) }),
    );
    expect(job.planning).toEqual(power({ drop: 0.08, tolerance: 0.03, repeats: 1, passRate: 52 / 60, flipRate: 0 }));
    expect(job.planning.casesForTarget).toBeGreaterThan(60);
    expect(job.baseline).toEqual({ cases: 60, passRate: 52 / 60, clusterSize: 1 });
    expect(job.commands).toEqual({
      atRuns: "evalrx power --runs base.run.json --drop 0.08 --tolerance 0.03 --repeats 1 --simulations 400",
      planning: "evalrx power --drop 0.08 --tolerance 0.03 --repeats 1 --pass-rate 0.8667 --flip-rate 0",
    });
  });

  it("runs fewer simulated gates on a big run, and refuses a run with almost no verdicts", () => {
    expect(simulationsFor(600, 1)).toBe(400);
    expect(simulationsFor(100_000, 3)).toBe(40);
    const empty = syntheticRun({ id: "empty", cases: [{ id: "c", pass: [null] }] });
    expect(() => powerJob(empty, { drop: 0.05, tolerance: 0.03 })).toThrow(
      "run 'empty' has 0 case(s) with a verdict: too few to simulate the gate on",
    );
  });
});

describe("calibrateJob", () => {
  it("is calibrate, refusing a single run with its message", () => {
    expect(() => calibrateJob([base], {})).toThrow(/calibrate needs at least two runs/);
    const job = calibrateJob([base, syntheticRun({ id: "base2", cases: table.a })], { target: 0.05, simulations: 10 });
    expect(job.runs).toEqual(["base", "base2"]);
  });
});
