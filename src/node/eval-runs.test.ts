import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { fileJudgeCache, metricTolerances, pairsOption } from "./eval-runs.ts";

it("fileJudgeCache keeps verdicts across processes and skips a torn line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "evalrx-jc-"));
  try {
    const path = join(dir, "store", "judge-cache.jsonl");
    await fileJudgeCache(path).set("k1", { passed: true, reason: "fine" });
    appendFileSync(path, '{"key":"k2","pass');
    const again = fileJudgeCache(path);
    expect(await again.get("k1")).toEqual({ passed: true, reason: "fine" });
    expect(await again.get("k2")).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("pairsOption reads NAME=NUMBER pairs and bare names", () => {
  expect(pairsOption("metric", ["pass=0.03", "yesNo"], "pass=0.03")).toEqual({
    bare: ["yesNo"],
    pairs: { pass: 0.03 },
  });
  expect(() => pairsOption("metric", ["pass=x"], "pass=0.03")).toThrow(
    "--metric 'x' is not a number; e.g. --metric pass=0.03",
  );
});

it("metricTolerances: --tolerance is the pass rate's and bare metrics'; NAME=TOL its own", () => {
  expect(metricTolerances(0.03, undefined)).toEqual({ tolerance: 0.03, metrics: [] });
  expect(metricTolerances(undefined, ["yesNo"])).toEqual({ metrics: ["yesNo"] });
  expect(metricTolerances(0.03, ["yesNo=0.05"])).toEqual({
    tolerance: { yesNo: 0.05, pass: 0.03 },
    metrics: ["yesNo", "pass"],
  });
  expect(metricTolerances(0.02, ["chair", "yesNo=0.05"])).toEqual({
    tolerance: { yesNo: 0.05, chair: 0.02 },
    metrics: ["chair", "yesNo"],
  });
  expect(() => metricTolerances(undefined, ["chair", "yesNo=0.05"])).toThrow(
    "--metric chair has no tolerance; write --metric chair=0.03 or add --tolerance",
  );
});
