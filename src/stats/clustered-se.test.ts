import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clusteredSE } from "./clustered-se.ts";
import { expectClose, loadFixture } from "./reference.node.ts";

describe("clusteredSE", () => {
  it("matches statsmodels' cluster-robust SE (no small-sample correction)", () => {
    const fx = loadFixture<[number[], number[]], number>("clusteredSE");
    for (const { args, expected } of fx.cases) {
      expectClose(clusteredSE(args[0], args[1]), expected, 1e-9, 1e-14, `clusteredSE(n=${args[0].length})`);
    }
  });

  it("gives the worked example", () => {
    expect(clusteredSE([1, 1, 0, 0], ["a", "a", "b", "b"])).toBeCloseTo(0.5 / Math.sqrt(2), 12);
  });

  it("does not depend on what the clusters are called or in which order cases come", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -5, max: 5 }), fc.integer({ min: 0, max: 4 })), {
          minLength: 1,
          maxLength: 30,
        }),
        (rows) => {
          const x = rows.map((r) => r[0]);
          const g = rows.map((r) => r[1]);
          const named = g.map((v) => `cluster-${v}`);
          const rev = [...rows].reverse();
          const a = clusteredSE(x, g);
          return (
            Math.abs(a - clusteredSE(x, named)) < 1e-12 &&
            Math.abs(
              a -
                clusteredSE(
                  rev.map((r) => r[0]),
                  rev.map((r) => r[1]),
                ),
            ) < 1e-12
          );
        },
      ),
    );
  });

  it("rejects mismatched lengths and bad labels", () => {
    expect(() => clusteredSE([1, 2], ["a"])).toThrow(/same length/);
    expect(() => clusteredSE([1, 2], ["a", null as unknown as string])).toThrow(TypeError);
  });
});
