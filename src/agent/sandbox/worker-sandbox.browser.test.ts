import { describe, expect, it } from "vitest";
import { ESCAPE_ATTEMPTS, ONE_RECORD_INPUT } from "./escape-attempts.ts";
import { analysisRequest, type SandboxRequest } from "./protocol.ts";
import { workerSandbox } from "./worker-sandbox.browser.ts";

const request = (code: string): SandboxRequest => analysisRequest(code, ONE_RECORD_INPUT);
const TIME_MS = 1500;
const sandbox = workerSandbox({ timeMs: TIME_MS });

describe("workerSandbox (real Chromium worker)", () => {
  it("runs an analysis over the records and returns checked tables, figures and suggestions", async () => {
    const outcome = await sandbox.run(
      request(`
        const failed = input.records.filter((r) => r.failed).length;
        return {
          tables: [{ title: "failures", columns: ["n", "failed"], rows: [[input.records.length, failed]] }],
          figures: [{ kind: "bar", title: "x", x: ["a"], y: [1] }],
          suggestions: [{ signal: "x", direction: 1, why: "higher in the one failure" }],
        };`),
    );
    expect(outcome).toMatchObject({
      ok: true,
      output: {
        tables: [{ rows: [[1, 1]] }],
        figures: [{ kind: "bar" }],
        notes: [],
        suggestions: [{ signal: "x", direction: 1 }],
      },
    });
  });

  it("says which line of the analysis threw", async () => {
    const outcome = await sandbox.run(request("const a = 1;\nreturn missing.value;"));
    expect(outcome).toMatchObject({ ok: false, reason: "thrown" });
    expect(!outcome.ok && outcome.error).toMatch(/ReferenceError: missing is not defined \(analysis line 2\)/);
  });

  for (const attempt of ESCAPE_ATTEMPTS)
    it(`stops: ${attempt.name}`, async () => {
      const t0 = performance.now();
      const outcome = await sandbox.run(request(attempt.code));
      const took = performance.now() - t0;
      expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
      if (outcome.ok) return;
      expect(attempt.reasons, outcome.error).toContain(outcome.reason);
      if (attempt.says) expect(outcome.error).toMatch(attempt.says);
      // Stopped within its bound: the budget plus the worker's start.
      expect(took).toBeLessThan(TIME_MS + 10_000);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

  it("refuses a request of the wrong shape before any worker starts", async () => {
    const outcome = await sandbox.run({ ...request("return {}"), extra: 1 } as unknown as SandboxRequest);
    expect(outcome).toMatchObject({ ok: false, reason: "refused" });
    expect(!outcome.ok && outcome.error).toMatch(/request\.extra must be absent/);
  });

  it("refuses a worker that answers with a message of the wrong shape", async () => {
    const rogue = () =>
      new Worker(
        URL.createObjectURL(
          new Blob(["postMessage('ready'); onmessage = () => postMessage({ tables: 1 });"], {
            type: "text/javascript",
          }),
        ),
      );
    const outcome = await workerSandbox({ makeWorker: rogue }).run(request("return {}"));
    expect(outcome).toMatchObject({ ok: false, reason: "refused" });
    expect(!outcome.ok && outcome.error).toMatch(/reply must be JSON text/);
  });
});
