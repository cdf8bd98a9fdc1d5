import { expect, it } from "vitest";
import { EventLog } from "./events.ts";
import { compareLayers } from "./layers.ts";
import type { TypedSignal } from "./signals.ts";

it("compareLayers finds the layer where failures differ and tests variation across layers", () => {
  const n = 80;
  const failed = Array.from({ length: n }, (_, i) => i % 3 === 0);
  // Layer k has level k; only layer 2 separates failures from passes.
  const signal = (k: number): TypedSignal => ({
    name: `attention.imageShare.L${k}`,
    column: `attention.imageShare.L${k}`,
    kind: "numeric",
    tags: [],
    values: Float64Array.from({ length: n }, (_, i) => k + ((i * 7919) % 13) / 100 + (k === 2 && failed[i] ? 0.5 : 0)),
  });
  const log = new EventLog({ runId: "r" });
  const [profile] = compareLayers([signal(0), signal(1), signal(2)], failed, log);
  expect(profile!.family).toBe("attention.imageShare");
  expect(profile!.strongest).toBe("L2");
  expect(profile!.auc[2]).toBe(1);
  expect(profile!.p).toBeLessThan(1e-10);
  expect(log.events[0]!.type).toBe("layers.compared");
  // Fewer than three layers: nothing to compare.
  expect(compareLayers([signal(0), signal(1)], failed, new EventLog({ runId: "r" }))).toEqual([]);
});
