import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { importDataset, type ImportedCase } from "../datasets/index.ts";
import { parseReport } from "../report/schema.ts";
import { syntheticLog, toCsv, toJsonl, type SyntheticRow } from "./bench/synthetic.ts";
import { parseEventLines, type RunEvent } from "./events.ts";
import schema from "./events.schema.json" with { type: "json" };
import { buildReport } from "./report.ts";
import { exploreCases } from "./run-explore.ts";
import type { CaseTable } from "./signals.ts";

async function cases(rows: readonly SyntheticRow[]): Promise<ImportedCase[]> {
  const { cases, problems } = await importDataset(toCsv(rows), { name: "log.csv", mapping: { label: "passed" } });
  expect(problems).toEqual([]);
  return cases;
}

const fast = { resamples: { explore: 100, sealed: 500 } } as const;

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)));
  return ajv.compile(schema);
}

describe("explore: M2–M4 over a seeded synthetic eval log", () => {
  it("SUPPORTS a planted signal, with direction, effects, sealed n, interval and e-value", async () => {
    const { report } = await exploreCases(await cases(syntheticLog({ seed: 11 }).rows), { seed: 1, ...fast });
    const h = report.hypotheses.find((x) => x.signal === "planted");
    expect(h).toBeDefined();
    expect(h!.verdict).toBe("SUPPORTED");
    expect(h!.direction).toBe("higher in failures");
    expect(h!.exploreEffect.value).toBeGreaterThan(0.6);
    expect(h!.sealedN).toBeGreaterThan(150);
    expect(h!.sealedEffect!.lo).toBeGreaterThan(0.5);
    expect(h!.sealedEffect!.hi).toBeGreaterThan(h!.sealedEffect!.lo!);
    expect(h!.eValue).toBeGreaterThanOrEqual(20);
    expect(h!.eMethod).toMatch(/calibrator/);
    // Identifier and constant columns are named with the reason they were not tested.
    expect(report.signals.untestable).toEqual(
      expect.arrayContaining([
        { name: "model_name", reason: expect.stringMatching(/constant/) },
        { name: "row", reason: expect.stringMatching(/identifier/) },
      ]),
    );
  });

  it("REFUTES a signal whose direction flips on the sealed split", async () => {
    // The signal raises failure on exploration cases and lowers it on sealed ones; the loop cannot know which are which.
    const base = syntheticLog({ seed: 5, effect: 1.5 }).rows;
    const first = await exploreCases(await cases(base), { seed: 1, ...fast });
    const sealedIds = new Set(
      first.events.find((e) => e.type === "sealed.opened") ? first.result.sealed.open("M4").ids : [],
    );
    const flipped = base.map((r) => (sealedIds.has(String(r.id)) ? { ...r, planted: -Number(r.planted) } : r));
    const { report } = await exploreCases(await cases(flipped), { seed: 1, ...fast });
    const h = report.hypotheses.find((x) => x.signal === "planted")!;
    expect(h.verdict).toBe("REFUTED");
    expect(h.sealedEffect!.hi).toBeLessThan(0.5);
  });

  it("every event matches the published JSON Schema, and the report folds from the log alone", async () => {
    const { report, events } = await exploreCases(await cases(syntheticLog({ seed: 3, clusterSize: 3 }).rows), {
      seed: 2,
      ...fast,
      now: () => Date.UTC(2026, 0, 1),
    });
    const validate = validator();
    for (const e of events) expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    events.forEach((e, i) => expect(e.seq).toBe(i));
    // Written to events.jsonl and read back, the log alone gives the same report.
    const text = events.map((e) => JSON.stringify(e)).join("\n") + "\n";
    expect(buildReport(parseEventLines(text))).toEqual(report);
    // And the report survives the untrusted-file validator.
    expect(parseReport(JSON.stringify(report))).toEqual(report);
    expect(report.provenance.holdout!.by).toBe("cluster");
    expect(report.hypotheses[0]!.sealedEffect!.method).toMatch(/cluster bootstrap/);
  });

  it("the schema rejects a malformed event", () => {
    const validate = validator();
    const good: RunEvent = {
      runId: "r",
      seq: 0,
      ts: "2026-01-01T00:00:00.000Z",
      stage: "M4",
      schema: 1,
      type: "hypothesis.decided",
      payload: { id: "H1", verdict: "MAYBE" },
    };
    expect(validate(good)).toBe(false);
    expect(validate({ ...good, type: "made.up", payload: {} })).toBe(false);
    // A split event must not carry anything about sealed labels.
    expect(
      validate({
        ...good,
        stage: "setup",
        type: "split.made",
        payload: { fraction: 0.4, by: "id", explore: { n: 3 }, sealed: { n: 2, failures: 1 } },
      }),
    ).toBe(false);
  });
});

describe("leakage guard: no sealed case reaches M2 or M3", () => {
  it("reads no sealed signal or label before the hypotheses are frozen", async () => {
    const timeline: string[] = [];
    // Wrap every signal column and the label so each read of a row is recorded in order with the events.
    const watch = (table: CaseTable): CaseTable => {
      const wrap = <T>(values: readonly T[]): readonly T[] =>
        new Proxy(values as T[], {
          get(target, key, receiver) {
            if (typeof key === "string" && /^\d+$/.test(key)) timeline.push(`read:${table.ids[Number(key)]}`);
            return Reflect.get(target, key, receiver);
          },
        });
      const columns = new Map<string, readonly unknown[]>();
      for (const [name, values] of table.columns) columns.set(name, wrap(values));
      return { ...table, failed: wrap(table.failed), columns };
    };
    const { events, result } = await exploreCases(await cases(syntheticLog({ seed: 7 }).rows), {
      seed: 1,
      ...fast,
      inspectTable: watch,
      sink: (e) => timeline.push(`event:${e.type}`),
    });
    expect(events.some((e) => e.type === "hypotheses.frozen")).toBe(true);
    const sealedIds = new Set(result.sealed.open("M4").ids);
    expect(sealedIds.size).toBeGreaterThan(100);
    const frozenAt = timeline.indexOf("event:hypotheses.frozen");
    const openedAt = timeline.indexOf("event:sealed.opened");
    expect(frozenAt).toBeGreaterThan(0);
    expect(openedAt).toBeGreaterThan(frozenAt);
    const early = timeline.slice(0, openedAt).filter((t) => t.startsWith("read:") && sealedIds.has(t.slice(5)));
    expect(early).toEqual([]);
    // …and the sealed rows are read after it (the check above is not vacuous).
    expect(timeline.slice(openedAt).some((t) => t.startsWith("read:") && sealedIds.has(t.slice(5)))).toBe(true);
    // The log proves the order on its own.
    const seq = (type: string) => events.find((e) => e.type === type)!.seq;
    for (const e of events.filter((x) => x.type === "hypothesis.stated"))
      expect(e.seq).toBeLessThan(seq("sealed.opened"));
    expect(seq("hypotheses.frozen")).toBeLessThan(seq("sealed.opened"));
  });

  it("refuses to open the sealed split before the hypotheses are frozen", async () => {
    const { SealedSplit } = await import("./sealed.ts");
    const { EventLog } = await import("./events.ts");
    const log = new EventLog({ runId: "r" });
    const sealed = new SealedSplit({ ids: ["a"], failed: [true], columns: new Map() }, [0], log);
    expect(() => sealed.open("M4")).toThrow(/before the hypotheses were frozen/);
  });
});

describe("bad input: a clear message, and the report says what could not be tested", () => {
  it("a file with no label column", async () => {
    const rows = syntheticLog({ seed: 1, n: 50 }).rows.map(({ passed: _passed, ...r }) => r);
    const { cases: imported } = await importDataset(toJsonl(rows), { name: "log.jsonl" });
    await expect(exploreCases(imported)).rejects.toThrow(/no label column.*--label COL/);
  });

  it("a label with one class only, and all cases failing", async () => {
    for (const passed of [true, false]) {
      const rows = syntheticLog({ seed: 1, n: 120 }).rows.map((r) => ({ ...r, passed }));
      const { report } = await exploreCases(await cases(rows), { seed: 1, ...fast });
      expect(report.problems.map((p) => p.why).join(" ")).toMatch(passed ? /all 120 cases pass/ : /all 120 cases fail/);
      expect(report.hypotheses).toEqual([]);
      expect(report.signals.tried).toBe(0);
      expect(report.signals.untestable.find((u) => u.name === "planted")!.reason).toMatch(
        passed ? /no exploration case fails/ : /every exploration case fails/,
      );
      expect(report.problems.some((p) => /sealed split.*unread/.test(p.why))).toBe(true);
    }
  });

  it("a constant signal is reported as untestable, the others still tested", async () => {
    const rows = syntheticLog({ seed: 4, n: 300 }).rows.map((r) => ({ ...r, temperature: 0.7 }));
    const { report } = await exploreCases(await cases(rows), { seed: 1, ...fast });
    expect(report.signals.untestable).toContainEqual({
      name: "temperature",
      reason: "constant: every case has the value '0.7'",
    });
    expect(report.signals.tested.some((s) => s.signal === "planted")).toBe(true);
  });
});
