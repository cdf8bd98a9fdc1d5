import { describe, expect, it } from "vitest";
import { importDataset } from "../datasets/index.ts";
import { syntheticLog } from "./bench/synthetic.ts";
import { excludeColumns, MAX_COLUMN_NAME } from "./exclusions.ts";
import { exploreCases } from "./run-explore.ts";
import type { CaseTable } from "./signals.ts";

function table(n: number, columns: Record<string, (i: number, failed: boolean) => unknown>): CaseTable {
  const failed = Array.from({ length: n }, (_, i) => i % 3 === 0);
  return {
    ids: failed.map((_, i) => `c${i}`),
    failed,
    columns: new Map(Object.entries(columns).map(([name, f]) => [name, failed.map((fail, i) => f(i, fail))])),
  };
}

describe("excludeColumns", () => {
  it("leaves out the label's derived columns, perfect separators and over-long names; notes non-finite values", () => {
    const long = "x".repeat(MAX_COLUMN_NAME + 1);
    const t = table(120, {
      "score.match": (_, f) => (f ? 0 : 1),
      "answer.match": (_, f) => (f ? "No" : "Yes"),
      judge_says: (_, f) => (f ? "wrong" : "right"),
      latency: (i, f) => (f ? 2 : 1) + (i % 7) * 0.3,
      [long]: (i) => i % 5,
      entropy: (i) => (i % 10 === 0 ? NaN : i % 11 === 0 ? Infinity : (i % 4) / 4),
    });
    const { table: kept, notes } = excludeColumns(t, {
      derived: ["score.match", "answer.match", "explanation.match"],
      labelColumn: "score.match",
      holdout: 0.4,
      seed: 1,
    });
    expect([...kept.columns.keys()]).toEqual(["latency", "entropy"]);
    expect(notes.map((n) => [n.what, n.columns])).toEqual([
      ["leak", ["score.match", "answer.match"]],
      ["column", [long]],
      ["column", ["entropy"]],
      ["leak", ["judge_says"]],
    ]);
    expect(notes[0]!.why).toBe(
      "not tested as signals, being the label 'score.match' or scored from the same answer: 'score.match', 'answer.match'",
    );
    expect(notes[1]!.why).toMatch(/201-character name \(more than 200\): not tested/);
    expect(notes[2]!.why).toMatch(/'entropy' holds \d+ non-finite number\(s\) \(NaN or ±Infinity\), read as missing/);
    expect(notes[3]!.why).toMatch(
      /^'judge_says' separates pass from fail perfectly on the exploration split \(all \d+ failures on one side, all \d+ passes on the other\)/,
    );
  });

  it("a category whose levels are long texts is a problem of its column", () => {
    const t = table(90, { answer: (i) => `${"a long answer ".repeat(80)}${i % 3}`, noise: (i) => i % 4 });
    const { table: kept, notes } = excludeColumns(t, { holdout: 0.4, seed: 2 });
    expect([...kept.columns.keys()]).toEqual(["noise"]);
    expect(notes).toEqual([
      {
        columns: ["answer"],
        what: "column",
        why: "'answer' has a level 1121 characters long (a text, not a category): not tested",
      },
    ]);
  });

  it("a strong but imperfect signal stays, and so does everything when there is no label to protect", () => {
    const t = table(90, { almost: (i, f) => (i === 3 ? 0 : f ? 1 : 0), noise: (i) => i % 4 });
    const { table: kept, notes } = excludeColumns(t, { holdout: 0.4, seed: 2 });
    expect([...kept.columns.keys()]).toEqual(["almost", "noise"]);
    expect(notes).toEqual([]);
  });
});

describe("explore over an Inspect log", () => {
  it("the label re-encoded, and a second scorer that equals it, are reported as leaks; the planted column is the finding", async () => {
    const { rows } = syntheticLog({ seed: 5, n: 400, noise: 1 });
    const samples = rows.map((r, i) => ({
      id: i + 1,
      epoch: 1,
      input: [{ role: "user", content: String(r.prompt) }],
      target: "yes",
      scores: {
        match: { value: r.passed ? "C" : "I", answer: r.passed ? "yes" : "no", explanation: "compared" },
        strict: { value: r.passed ? 1 : 0 },
      },
      metadata: { planted: r.planted, noise: r.noise_num_0 },
    }));
    const log = JSON.stringify({ version: 2, status: "success", eval: { task: "t" }, samples });
    const imported = await importDataset(log, { name: "log.json", requireInput: false });
    expect(imported.label?.column).toBe("score.match");
    const { report } = await exploreCases(imported.cases, {
      labelColumn: imported.label!.column,
      derived: imported.label!.derived,
      seed: 3,
      resamples: { explore: 50, sealed: 200 },
    });
    expect(report.hypotheses.map((h) => h.signal)).toEqual(["metadata.planted"]);
    expect(report.hypotheses[0]!.verdict).toBe("SUPPORTED");
    const leaks = report.problems.filter((p) => p.what === "leak").map((p) => p.why);
    expect(leaks).toEqual([
      "not tested as signals, being the label 'score.match' or scored from the same answer: 'answer.match', 'explanation.match', 'score.match'",
      expect.stringMatching(/^'score.strict' separates pass from fail perfectly on the exploration split/),
    ]);
  });
});
