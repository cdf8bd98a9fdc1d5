import { describe, expect, it } from "vitest";
import { adjustedRand } from "./adjusted-rand.ts";
import { assignMode, failureModes, modeSignals } from "./failure-modes.ts";
import { plantedModes } from "./planted-modes.ts";

/** The found mode of each failing case ("none" never happens: every failing case is in a mode). */
function foundLabels(found: ReturnType<typeof failureModes>, ids: readonly string[]): string[] {
  const modeOf = new Map<string, string>();
  for (const mode of found.modes) for (const id of mode.caseIds) modeOf.set(id, mode.id);
  return ids.map((id) => modeOf.get(id) ?? "none");
}

describe("failureModes", () => {
  it("finds two planted modes (mean ARI ≥ 0.8, none under 0.75) over 20 seeds, each described by its own signal", () => {
    const aris: number[] = [];
    for (let seed = 1; seed <= 20; seed++) {
      const { table, signals, truth } = plantedModes({ seed });
      const found = failureModes(table, signals, { seed });
      expect(found.k, `seed ${seed}: ${found.why}`).toBe(2);
      const failingIds = table.ids.filter((_, i) => table.failed[i]);
      const planted = truth.filter((t) => t !== "pass");
      aris.push(adjustedRand(planted, foundLabels(found, failingIds)));
      expect(aris.at(-1), `seed ${seed}`).toBeGreaterThanOrEqual(0.75);
      const tops = found.modes.map((m) => m.defining[0]!.signal).sort();
      expect(tops, `seed ${seed}`).toEqual(["attention.imageShare", "uncertainty.entropy"]);
      for (const mode of found.modes) {
        const top = mode.defining[0]!;
        // The planted direction: image share down, entropy up, each by about 3 passing SDs.
        expect(Math.sign(top.effect)).toBe(top.signal === "attention.imageShare" ? -1 : 1);
        expect(Math.abs(top.effect)).toBeGreaterThan(2);
        expect(mode.representatives).toHaveLength(3);
        for (const id of mode.representatives) expect(mode.caseIds).toContain(id);
      }
    }
    expect(aris.reduce((s, a) => s + a, 0) / aris.length).toBeGreaterThanOrEqual(0.8);
  });

  it("does not report two modes where there is one, in each of 20 seeds", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { table, signals } = plantedModes({ seed, modeSizes: [80] });
      const found = failureModes(table, signals, { seed });
      expect(found.k, `seed ${seed}: ${JSON.stringify(found.criterion.map((r) => [r.k, r.gap, r.s]))}`).toBe(1);
      expect(found.modes[0]!.size).toBe(80);
      expect(found.modes[0]!.defining[0]!.signal).toBe("attention.imageShare");
    }
  });

  it("reports one mode when failures are unrelated to every signal", () => {
    for (let seed = 1; seed <= 10; seed++) {
      const { table, signals } = plantedModes({ seed, modeSizes: [], background: 80 });
      expect(failureModes(table, signals, { seed }).k, `seed ${seed}`).toBe(1);
    }
    // Seed 9's noise fools the gap statistic; the silhouette floor says why it is still one mode.
    const { table, signals } = plantedModes({ seed: 9, modeSizes: [], background: 80 });
    expect(failureModes(table, signals, { seed: 9 }).why).toMatch(
      /mean silhouette is 0\.\d\d, under 0.25 .* so one mode/,
    );
  });

  it("states its method and criterion, and gives the same modes for the same seed", () => {
    const { table, signals } = plantedModes({ seed: 7 });
    const a = failureModes(table, signals, { seed: 3 });
    const b = failureModes(table, signals, { seed: 3 });
    expect(b).toEqual(a);
    expect(a.method).toMatch(/k-means\+\+ .* seed 3.*gap statistic .*1-SE rule/);
    expect(a.why).toMatch(/^2 mode\(s\): the gap statistic's 1-SE rule/);
    expect(a.criterion.map((r) => r.k)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(a.criterion[1]!.silhouette).toBeGreaterThan(0.25);
    expect(a.criterion[0]!.silhouette).toBeUndefined();
    expect(a.modes.map((m) => m.id)).toEqual(["mode-1", "mode-2"]);
    expect(a.modes[0]!.size).toBeGreaterThanOrEqual(a.modes[1]!.size);
  });

  it("boundary contrast describes a mode against the passing cases that look most like it", () => {
    const { table, signals } = plantedModes({ seed: 2 });
    const found = failureModes(table, signals, { seed: 2, contrast: "boundary" });
    expect(found.contrast).toBe("boundary");
    expect(found.k).toBe(2);
    for (const mode of found.modes) {
      const top = mode.defining[0]!;
      expect(["attention.imageShare", "uncertainty.entropy"]).toContain(top.signal);
      // Against look-alike passing cases the gap is smaller than against all passing cases.
      const plain = failureModes(table, signals, { seed: 2 }).modes.find((m) => m.defining[0]!.signal === top.signal)!;
      expect(Math.abs(top.effect)).toBeLessThan(Math.abs(plain.defining[0]!.effect));
    }
  });

  it("places sealed cases by the rule fixed on exploration cases: mode signals that fail far more often", () => {
    const exploration = plantedModes({ seed: 11 });
    const sealed = plantedModes({ seed: 12 });
    const found = failureModes(exploration.table, exploration.signals, { seed: 11 });
    const [first, second] = modeSignals(found, sealed.signals);
    for (const signal of [first!, second!]) {
      expect(signal.kind).toBe("binary");
      let inMode = 0;
      let failedInMode = 0;
      signal.values.forEach((v, i) => {
        if (v === 1) {
          inMode++;
          if (sealed.table.failed[i]) failedInMode++;
        }
      });
      expect(inMode).toBeGreaterThan(20);
      // Passing cases that look like the mode land in it too; still it fails at over 3× the base rate, 80 / 600.
      expect(failedInMode / inMode).toBeGreaterThan((3 * 80) / 600);
    }
    expect(first!.tags).toContain("failure-mode");
    // A case at the passing cases' centre is in no mode.
    expect(assignMode(found.assignment, () => 0)).toBeUndefined();
  });

  it("refuses bad input with a message naming what is wrong", () => {
    const { table, signals } = plantedModes({ seed: 1 });
    expect(() => failureModes({ ...table, failed: table.failed.map(() => false) }, signals)).toThrow(
      /no case failed, so there are no failure modes/,
    );
    expect(() => failureModes(table, [{ ...signals[0]!, values: new Float64Array(3) }])).toThrow(
      /signal 'attention.imageShare' has 3 values for 600 cases/,
    );
    expect(() => failureModes(table, signals, { maxModes: 0 })).toThrow(/maxModes must be a positive integer, got 0/);
    expect(() => modeSignals(failureModes(table, signals), signals.slice(1))).toThrow(
      /found on signals \["attention.imageShare"\], which these cases do not have/,
    );
  });

  it("with too few failing cases to split, says so", () => {
    const { table, signals } = plantedModes({ seed: 1, modeSizes: [4, 4] });
    const found = failureModes(table, signals);
    expect(found.k).toBe(1);
    expect(found.why).toMatch(/8 failing case\(s\) cannot form two modes of at least 5/);
  });
});
