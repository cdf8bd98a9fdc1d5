import { describe, expect, it } from "vitest";
import { friedman } from "./friedman.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("friedman", () => {
  it("matches scipy.stats.friedmanchisquare", () => {
    const fx = loadFixture<[number[][]], { statistic: number; p: number }>("friedman");
    for (const { args, expected } of fx.cases) {
      const r = friedman(args[0]);
      const label = `friedman(${args[0].length}×${args[0][0]!.length})`;
      expectClose(r.statistic, expected.statistic, 1e-9, 1e-12, `${label} statistic`);
      expectClose(r.p, expected.p, 1e-9, 1e-13, `${label} p`);
    }
  });

  it("gives the worked example and does not care about row order", () => {
    const m = [
      [1, 2, 3],
      [2, 3, 1],
      [1, 3, 2],
      [1, 2, 3],
    ];
    const r = friedman(m);
    expect(r.statistic).toBeCloseTo(3.5, 12);
    expect(r.p).toBeCloseTo(0.17377, 5);
    expect(friedman([...m].reverse())).toEqual(r);
  });

  it("refuses ragged or fully tied matrices", () => {
    expect(() =>
      friedman([
        [1, 2, 3],
        [1, 2],
      ]),
    ).toThrow(/row 1 has 2/);
    expect(() =>
      friedman([
        [1, 1, 1],
        [2, 2, 2],
      ]),
    ).toThrow(/ties all treatments/);
    expect(() => friedman([])).toThrow(/at least one row/);
  });
});
