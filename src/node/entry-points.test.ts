import { describe, expect, it } from "vitest";

// The package's public entry points resolve by name (package.json "exports") and carry what their folders promise.
describe("library entry points", () => {
  it("evalrx exports the core contracts", async () => {
    const core = await import("evalrx");
    expect(core.CAPABILITIES).toContain("attention");
    expect(new core.CapabilityError(["attention"], ["generate"], "api backend").message).toContain("'attention'");
  });

  it("evalrx/stats, evalrx/evals, evalrx/datasets and evalrx/agent export their catalogs", async () => {
    const [stats, evals, datasets, agent] = await Promise.all([
      import("evalrx/stats"),
      import("evalrx/evals"),
      import("evalrx/datasets"),
      import("evalrx/agent"),
    ]);
    expect(stats.wilson(45, 50).map((x) => +x.toFixed(3))).toEqual([0.786, 0.957]);
    expect(typeof evals.gate).toBe("function");
    expect(typeof datasets.select).toBe("function");
    expect(typeof agent.investigate).toBe("function");
  });
});
