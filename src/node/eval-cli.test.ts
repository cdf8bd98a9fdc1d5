import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { runEval, yesNo } from "../evals/index.ts";
import { ScriptedModel } from "../evals/testing.ts";
import { FileStore } from "../store/files.node.ts";

const bin = fileURLToPath(new URL("./bin.mjs", import.meta.url));
let dir: string;
let storeDir: string;

function evalrx(...args: string[]) {
  const r = spawnSync(bin, args, { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// 50 cases; case 0 must pass (tagged critical). Each run is written to a temp store by a scripted
// model whose answers decide which cases fail, so every exit code is known by construction.
const cases: FailureCase[] = Array.from({ length: 50 }, (_, i) => ({
  id: `c${String(i).padStart(2, "0")}`,
  input: { prompt: `question ${i}` },
  expected: "yes",
  tags: i === 0 ? ["critical"] : [],
  status: "active",
  meta: {},
}));
const index = (prompt: string) => Number(prompt.split(" ")[1]);

async function record(store: FileStore, id: string, fails: (i: number) => boolean, evalKey = "toy") {
  const model = new ScriptedModel((p) => (fails(index(p)) ? "no" : "yes"));
  await runEval({ store, dataset: { id: "toy", cases }, model, evaluators: [yesNo()], runId: id, evalKey });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-cli-"));
  storeDir = join(dir, "store");
  const store = await FileStore.open(storeDir);
  // base passes 0..46; "regressed" also fails 35..46 (12 regressed, 0 fixed: a fail);
  // "wobbly" fails 41..46 and passes 47 (6 regressed, 1 fixed: McNemar p = 0.125, inconclusive).
  await record(store, "base", (i) => i >= 47);
  await record(store, "regressed", (i) => i >= 35);
  await record(store, "wobbly", (i) => (i >= 41 && i <= 46) || i >= 48);
  await record(store, "critical-fails", (i) => i === 0 || i >= 47);
  await record(store, "other-eval", (i) => i >= 47, "another");
  const erroring = new ScriptedModel((p) => {
    if (index(p) < 5) throw new Error("server error");
    return "yes";
  });
  await runEval({
    store,
    dataset: { id: "toy", cases },
    model: erroring,
    evaluators: [yesNo()],
    runId: "erroring",
    evalKey: "toy",
  });
  writeFileSync(join(dir, "base.run.json"), JSON.stringify(await store.exportRun("base")));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("evalrx gate exit codes (the real binary)", () => {
  it("0 when nothing dropped, 1 on a regression, with the test and interval printed", () => {
    const ok = evalrx("gate", "base", "--threshold", "0.9", "--store", storeDir);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^PASS \(exit 0\)/);
    const bad = evalrx("gate", "regressed", "--baseline", "base", "--tolerance", "0.03", "--store", storeDir);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(
      "pass: −24.0 pts [−37.1, −11.4] (95% CI), p = 0.000488 (exact McNemar, Newcombe interval; Holm), 12 regressed / 0 fixed of 50 — tolerance 3.0 pts → fail",
    );
  });

  it("inconclusive exits 0, or 2 under --strict", () => {
    const args = ["gate", "wobbly", "--baseline", "base", "--tolerance", "0.03", "--store", storeDir];
    const lax = evalrx(...args);
    expect(lax.code).toBe(0);
    expect(lax.out).toMatch(/^INCONCLUSIVE \(exit 0\)/);
    expect(lax.out).toMatch(/p = 0\.125 .* 6 regressed \/ 1 fixed of 50/);
    expect(evalrx(...args, "--strict").code).toBe(2);
  });

  it("1 when a must-pass case fails; 3 when the error budget is spent", () => {
    const crit = evalrx("gate", "critical-fails", "--store", storeDir);
    expect(crit.code).toBe(1);
    expect(crit.out).toMatch(/1 of 1 'critical' case\(s\) failed/);
    const errs = evalrx("gate", "erroring", "--store", storeDir, "--json");
    expect(errs.code).toBe(3);
    expect(JSON.parse(errs.out)).toMatchObject({ verdict: "error", exitCode: 3, errors: { errored: 5, trials: 50 } });
  });

  it("3 with one line for an unknown run, an unknown metric, a bad tolerance, a baseline of another eval", () => {
    const cases = [
      [["gate", "nope", "--store", storeDir], /unknown run 'nope'/],
      [
        ["gate", "base", "--threshold", "acc=0.5", "--store", storeDir],
        /the gate names 'acc', which is not a metric of this eval; metrics are \['pass', 'yesNo'\]/,
      ],
      [
        ["gate", "regressed", "--baseline", "base", "--tolerance", "1.5", "--store", storeDir],
        /tolerance 1\.5 for 'pass' is not in \(0, 1\)/,
      ],
      [
        ["gate", "regressed", "--baseline", "other-eval", "--tolerance", "0.03", "--store", storeDir],
        /baseline 'other-eval' is a run of eval 'another', not of 'toy'/,
      ],
    ] as const;
    for (const [args, message] of cases) {
      const r = evalrx(...args);
      expect(r.code, args.join(" ")).toBe(3);
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).toMatch(message);
    }
  });

  it("a run file exported from the page can be the baseline", () => {
    const r = evalrx(
      "gate",
      "regressed",
      "--baseline",
      join(dir, "base.run.json"),
      "--tolerance",
      "0.03",
      "--store",
      storeDir,
    );
    expect(r.code).toBe(1);
  });
});

describe("evalrx compare, calibrate, power", () => {
  it("compare judges nothing without a tolerance (exit 0) and like the gate with one", () => {
    const r = evalrx("compare", "base", "regressed", "--store", storeDir);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/nothing judged/);
    expect(evalrx("compare", "base", "regressed", "--tolerance", "0.03", "--store", storeDir).code).toBe(1);
    // --tolerance stays the pass rate's when a --metric NAME=TOL gates another metric too (as in gate)
    const both = evalrx(
      "compare",
      "base",
      "regressed",
      "--tolerance",
      "0.03",
      "--metric",
      "yesNo=0.5",
      "--store",
      storeDir,
      "--json",
    );
    expect(both.code).toBe(1);
    const gated = JSON.parse(both.out).comparison.tests.filter((t: { gated: boolean }) => t.gated);
    expect(gated.map((t: { metric: string; verdict: string }) => [t.metric, t.verdict])).toEqual([
      ["pass", "fail"],
      ["yesNo", "pass"],
    ]);
  });
  it("calibrate refuses one run and tabulates two", () => {
    const one = evalrx("calibrate", "base", "--store", storeDir);
    expect(one.code).toBe(3);
    expect(one.err).toMatch(/at least two runs/);
    const two = evalrx(
      "calibrate",
      "base",
      "wobbly",
      "--target",
      "0.05",
      "--simulations",
      "20",
      "--store",
      storeDir,
      "--json",
    );
    expect(two.code).toBe(0);
    expect(JSON.parse(two.out).rows.map((r: { repeats: number }) => r.repeats)).toEqual([1, 2, 3, 5]);
  });
  it("power prints the gate's simulated power and the cases a drop needs", () => {
    const r = evalrx("power", "--drop", "0.08", "--tolerance", "0.03", "--n", "300", "--simulations", "100");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^the gate \(tolerance 3\.0 pts, 1 repeat\(s\), α = 0\.05, mcnemar-newcombe\) fails a 8\.0-point drop with probability \d+\.\d% ± \d+\.\d at n = 300 cases; \d+ cases reach 80%/,
    );
    expect(evalrx("power", "--discordance", "abc", "--drop", "0.05").code).toBe(3);
  });
});

describe("evalrx eval", () => {
  it("runs the bundled tiny VLM on a demo sample into the store and prints its summary", () => {
    const config = join(dir, "pope.json");
    const dataset = fileURLToPath(new URL("../../public/demo/pope.jsonl", import.meta.url));
    writeFileSync(
      config,
      JSON.stringify({
        name: "pope-cli",
        dataset,
        select: { sample: 12 },
        model: "tiny-vlm",
        evaluators: ["yesNo"],
        repeats: 2,
        cluster: true,
        generation: { temperature: 0.7, maxNewTokens: 3 },
        gate: { threshold: 0 },
      }),
    );
    const r = evalrx("eval", config, "--store", storeDir);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^eval pope-cli · run pope-cli-\S+ \(finished\) · 12 cases × 2 repeat\(s\) = 24 trials, 0 errored/,
    );
    expect(r.out).toMatch(/^pass \d+\.\d% \[\d+\.\d%, \d+\.\d%\] \(clustered, n = 12\)/m);
    writeFileSync(
      config,
      JSON.stringify({ dataset, model: "tiny-vlm", evaluators: ["yesNo"], gate: { threshold: { acc: 0.5 } } }),
    );
    const bad = evalrx("eval", config, "--store", storeDir);
    expect(bad.code).toBe(3);
    expect(bad.err).toMatch(/the gate names 'acc'/);
  });
});
