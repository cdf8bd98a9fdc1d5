import { describe, expect, it } from "vitest";
import { childSandbox, permissionFlag } from "./child-sandbox.node.ts";
import { ESCAPE_ATTEMPTS, ONE_RECORD_INPUT } from "./escape-attempts.ts";
import { analysisRequest, type SandboxRequest } from "./protocol.ts";

const request = (code: string): SandboxRequest => analysisRequest(code, ONE_RECORD_INPUT);
const TIME_MS = 1500;
const sandbox = childSandbox({ timeMs: TIME_MS, memoryMb: 48 });

describe("childSandbox (a real locked Node child)", () => {
  it("runs under this Node's permission model", () => {
    expect(permissionFlag()).toMatch(/^--(experimental-)?permission$/);
    expect(sandbox.describe).toContain("48 MB");
  });

  it("runs an analysis over the records and returns checked tables and suggestions", async () => {
    const outcome = await sandbox.run(
      request(`return {
        tables: [{ title: "n", columns: ["n"], rows: [[input.records.length]] }],
        suggestions: [{ signal: "x", direction: -1, why: "lower in failures" }],
      };`),
    );
    expect(outcome).toMatchObject({
      ok: true,
      output: { tables: [{ rows: [[1]] }], suggestions: [{ direction: -1 }] },
    });
  });

  it("says which line of the analysis threw", async () => {
    const outcome = await sandbox.run(request("const a = 1;\nreturn missing.value;"));
    expect(!outcome.ok && outcome.error).toMatch(/ReferenceError: missing is not defined \(analysis line 2\)/);
  });

  for (const attempt of ESCAPE_ATTEMPTS)
    it(`stops: ${attempt.name}`, async () => {
      const t0 = performance.now();
      const outcome = await sandbox.run(request(attempt.code));
      expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
      if (outcome.ok) return;
      expect(attempt.reasons, outcome.error).toContain(outcome.reason);
      if (attempt.says) expect(outcome.error).toMatch(attempt.says);
      expect(performance.now() - t0).toBeLessThan(TIME_MS + 5000);
    });

  it("stops a memory bomb by its memory bound, not its time", async () => {
    const outcome = await childSandbox({ timeMs: 20_000, memoryMb: 48 }).run(
      request("const keep = []; for (;;) keep.push(new Array(1e5).fill(Math.random()));"),
    );
    expect(outcome).toMatchObject({ ok: false, reason: "memory" });
    expect(!outcome.ok && outcome.error).toMatch(/memory bound of 48 MB/);
  });

  it("stops a promise loop (microtasks run inside the bounds too)", async () => {
    const outcome = await sandbox.run(request("const spin = () => Promise.resolve().then(spin); spin(); return {};"));
    // Each turn of the loop keeps a promise alive, so whichever bound comes first stops it.
    expect(outcome.ok).toBe(false);
    expect(["time", "memory"]).toContain(!outcome.ok && outcome.reason);
  });
});
