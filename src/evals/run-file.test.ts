import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { FileStore } from "../store/files.node.ts";
import type { RunExport } from "../store/types.ts";
import { yesNo } from "./evaluators/yes-no.ts";
import { compare } from "./compare.ts";
import { gate } from "./gate.ts";
import { checkRunFile } from "./run-file.ts";
import { loadRun, runEval } from "./run.ts";
import { ScriptedModel } from "./testing.ts";

const cases = (prefix: string): FailureCase[] =>
  Array.from({ length: 8 }, (_, i) => ({
    id: `${prefix}${i}`,
    input: { prompt: `question ${i}` },
    expected: "yes",
    tags: [],
    status: "active",
    meta: {},
  }));

let dir: string;
let file: RunExport;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "evalrx-run-file-"));
  const store = await FileStore.open(dir);
  const model = new ScriptedModel((p) => (p.endsWith("3") ? "no" : "yes"));
  await runEval({
    store,
    dataset: { id: "toy", cases: cases("c") },
    model,
    evaluators: [yesNo()],
    runId: "a",
    repeats: 2,
    evalKey: "toy",
  });
  await runEval({
    store,
    dataset: { id: "toy", cases: cases("d") },
    model,
    evaluators: [yesNo()],
    runId: "b",
    repeats: 2,
    evalKey: "toy",
  });
  file = JSON.parse(JSON.stringify(await store.exportRun("a")));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tampered = (edit: (f: { run: Record<string, unknown>; items: Record<string, unknown>[] }) => void) => {
  const copy = JSON.parse(JSON.stringify(file));
  edit(copy);
  return copy;
};

describe("checkRunFile: a run file is checked on read, naming the first item that does not fit", () => {
  it("reads an intact file and gives its view", () => {
    const { view } = checkRunFile(file, "a.run.json");
    expect(view!.cases.size).toBe(8);
    expect([...view!.cases.values()].every((c) => c.trials.length === 2)).toBe(true);
  });

  it("refuses verdicts that are not booleans, duplicates, out-of-plan repeats and verdicts that disagree with their checks", () => {
    const cases: [ReturnType<typeof tampered>, RegExp][] = [
      [tampered((f) => (f.items[0]!.passed = "yes")), /item 0 \(case 'c0'\) has verdict "yes"; expected true or false/],
      [tampered((f) => (f.items[0]!.passed = null)), /has verdict null; expected true or false/],
      [
        tampered((f) => f.items.push({ ...f.items[1]!, index: 99 })),
        /the item of case 'c0' repeat 1 has index 99, not its place in the plan \(1\)/,
      ],
      [
        tampered((f) => f.items.push({ ...f.items[1]!, index: 1 })),
        /item 16 \(case 'c0'\) repeats index 1; each item is stored once/,
      ],
      [
        tampered((f) => {
          f.items[1]!.repeat = 5;
        }),
        /the item of case 'c0' repeat 5 has repeat 5, outside the run's 2 repeat\(s\) \(0–1\)/,
      ],
      [
        tampered((f) => {
          // Case c3 failed (the model said no); marked passed with its failed check left in place.
          const failed = f.items.find((i) => i.caseId === "c3")!;
          failed.passed = true;
        }),
        /the item of case 'c3' repeat 0 is marked passed but a check failed or errored/,
      ],
      [
        tampered((f) => (f.items[0]!.passed = false)),
        /the item of case 'c0' repeat 0 is marked failed but every check passed/,
      ],
      [
        tampered((f) => (f.items[0]!.caseId = "zz")),
        /the item of case 'zz' repeat 0 is of a case the run did not plan/,
      ],
      [
        tampered((f) => ((f.items[0]!.checks as { name: string }[])[0]!.name = "acc")),
        /has a check 'acc', which is not an evaluator of this run/,
      ],
      [tampered((f) => (f.run.status = "done")), /the run's status is "done"/],
      [
        tampered((f) => ((f.run.config as { repeats: unknown }).repeats = "2")),
        /its config's repeats is "2", not a positive integer/,
      ],
    ];
    for (const [data, message] of cases) {
      expect(() => checkRunFile(data, "a.run.json")).toThrow(message);
      expect(() => checkRunFile(data, "a.run.json")).toThrow(/^a\.run\.json: /);
    }
  });
});

describe("nothing in common is an error, never a pass", () => {
  it("gate exits 3 and compare throws when the runs share no unchanged case", async () => {
    const a = checkRunFile(file).view!;
    // The same eval over other cases: no id in common.
    const b = await loadRun(await FileStore.open(dir), "b");
    const result = gate(b, { baseline: "a", tolerance: 0.05 }, a);
    expect(result.verdict).toBe("error");
    expect(result.exitCode).toBe(3);
    expect(result.reasons.join("\n")).toMatch(
      /runs 'a' and 'b' share no unchanged case \(0 changed, 8 only in 'a', 8 only in 'b'\)/,
    );
    expect(() => compare(a, b)).toThrow(/^compare: runs 'a' and 'b' share no unchanged case/);
    expect(() => compare(a, b, { tolerance: 0.03 })).toThrow(/there is nothing to compare, so there is no verdict/);
  });
});
