import { describe, expect, it } from "vitest";
import { EventLog } from "../events.ts";
import { runAnalysis } from "./analysis.ts";
import {
  analysisRequest,
  checkCode,
  overTime,
  readReply,
  runLocked,
  validateOutput,
  validateRequest,
  type SandboxRunner,
} from "./protocol.ts";
import { analysisInput } from "./records.ts";
import { runInRealm } from "./lockdown.ts";

describe("sandbox protocol", () => {
  it("keeps a well-formed output and fills the lists it omits", () => {
    expect(validateOutput({ notes: ["n"] })).toEqual({ tables: [], figures: [], notes: ["n"], suggestions: [] });
  });

  it("names the field that breaks the shape", () => {
    expect(() => validateOutput({ tables: [{ title: "t", columns: ["a", "b"], rows: [[1]] }] })).toThrow(
      "sandbox message: output.tables[0].rows[0] must be 2 cells (one per column), got 1 cells",
    );
    expect(() => validateOutput({ figures: [{ kind: "pie", title: "t", x: [], y: [] }] })).toThrow(
      /output\.figures\[0\]\.kind must be one of bar, scatter, line, histogram/,
    );
    expect(() => validateOutput({ figures: [{ kind: "bar", title: "t", x: [1, 2], y: [1] }] })).toThrow(
      "output.figures[0].y must be 2 values (one per x), got 1 values",
    );
    expect(() => validateOutput({ suggestions: [{ signal: "x", direction: 0, why: "" }] })).toThrow(
      /output\.suggestions\[0\]\.direction must be 1 \(higher in failures\) or -1/,
    );
    expect(() => validateOutput({ tables: Array.from({ length: 21 }, () => ({})) })).toThrow(
      "output.tables must be at most 20 entries, got 21 entries",
    );
  });

  it("refuses import anywhere in the code, with its line", () => {
    expect(() => checkCode("const a = 1;\nreturn import('x');")).toThrow(/code line 2 uses 'import'/);
    expect(checkCode("return { notes: ['important'] }")).toContain("important");
  });

  it("refuses requests and replies of the wrong shape", () => {
    expect(() => validateRequest({ protocol: 2, kind: "run", code: "", input: "{}" })).toThrow(
      "request.protocol must be 1, got 2",
    );
    expect(readReply("not json", 1)).toMatchObject({ ok: false, reason: "refused", error: /reply must be JSON text/ });
    expect(readReply('{"protocol":1,"kind":"result","output":{"tables":"x"}}', 1)).toMatchObject({
      ok: false,
      reason: "refused",
    });
    expect(readReply({ kind: "result" }, 1)).toMatchObject({ ok: false, reason: "refused" });
    expect(readReply('{"protocol":1,"kind":"error","error":"boom"}', 4)).toEqual({
      ok: false,
      reason: "thrown",
      error: "boom",
      ms: 4,
    });
  });

  it("runInRealm freezes the input and wraps the result", () => {
    const reply = runInRealm((input) => {
      (input as { records: unknown[] }).records.push(1);
      return {};
    }, '{"records":[]}');
    expect(JSON.parse(reply)).toMatchObject({ kind: "error", error: /not extensible/ });
  });
});

describe("runAnalysis", () => {
  const table = {
    ids: ["a", "b"],
    failed: [true, false],
    clusters: ["c1", "c2"],
    columns: new Map<string, unknown[]>([
      ["x", [1, Number.NaN]],
      ["kind", ["dim", { nested: 1 }]],
    ]),
  };

  it("sends the exploration records as JSON and fingerprints exactly that text", () => {
    const { input, json, fingerprint } = analysisInput(table);
    expect(input.records[1]).toEqual({ id: "b", failed: false, cluster: "c2", signals: { kind: null, x: null } });
    expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(analysisInput(table).fingerprint).toBe(fingerprint);
    expect(JSON.parse(json)).toEqual(input);
  });

  it("logs the code, fingerprint, runtime and output, and sets aside suggestions of unknown signals", async () => {
    const echo: SandboxRunner = {
      describe: "in-process test runner",
      run: async (request) =>
        readReply(
          runInRealm(
            () => ({
              suggestions: [
                { signal: "x", direction: 1, why: "w" },
                { signal: "nope", direction: 1, why: "w" },
              ],
            }),
            request.input,
          ),
          0,
        ),
    };
    const log = new EventLog({ runId: "r", now: () => 0 });
    const run = await runAnalysis(echo, "return {}", table, log, { id: "A1", author: "user", purpose: "test" });
    expect(run.outcome.ok && run.outcome.output.suggestions.map((s) => s.signal)).toEqual(["x"]);
    expect(run.setAside[0]!.why).toMatch(/'nope' is not a signal of the exploration records \(they have 2: kind, x\)/);
    const event = log.find("analysis.ran")!;
    expect(event.stage).toBe("M2");
    expect(event.payload).toMatchObject({
      id: "A1",
      code: "return {}",
      input: { split: "explore", n: 2, fingerprint: run.fingerprint },
      runtime: "in-process test runner",
      ok: true,
    });
  });
});

describe("runLocked (what both runtimes share)", () => {
  it("refuses a wrong request before the runtime starts", async () => {
    let starts = 0;
    const outcome = await runLocked({ protocol: 1, kind: "run", code: 1, input: "{}" }, undefined, "stopped", () => {
      starts++;
      return { stop: () => {}, ms: () => 0 };
    });
    expect(outcome).toMatchObject({ ok: false, reason: "refused" });
    expect(starts).toBe(0);
  });

  it("takes the first outcome, stops the runtime once, and a cancel settles as stopped", async () => {
    let stops = 0;
    const first = await runLocked(
      analysisRequest("return {}", "{}"),
      undefined,
      "the child was killed",
      (_r, settle) => {
        settle(overTime(10, "the child was killed", 11));
        settle({ ok: false, reason: "crashed", error: "later", ms: 12 });
        return { stop: () => stops++, ms: () => 11 };
      },
    );
    expect(first).toMatchObject({ ok: false, reason: "time", error: /time budget of 10 ms \(the child was killed\)/ });
    expect(stops).toBe(1);
    const cancel = new AbortController();
    const pending = runLocked(analysisRequest("return {}", "{}"), cancel.signal, "the worker was terminated", () => ({
      stop: () => stops++,
      ms: () => 5,
    }));
    cancel.abort();
    expect(await pending).toEqual({ ok: false, reason: "time", error: "cancelled: the worker was terminated", ms: 5 });
    expect(stops).toBe(2);
  });
});
