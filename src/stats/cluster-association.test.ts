import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { describe, expect, it } from "vitest";
import { clusterAssociation } from "./cluster-association.ts";
import { seededRng } from "./rng.ts";

/** Clusters of `m` cases with a random intercept on the failure logit and a signal constant within clusters. */
function clusteredNull(seed: number, G: number, m: number, sd: number) {
  const rng = seededRng("test", seed);
  const u = () => uniformFloat64(rng);
  const normal = () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  const x: number[] = [];
  const y: number[] = [];
  const g: string[] = [];
  for (let c = 0; c < G; c++) {
    const re = sd * normal();
    const v = u() < 0.4 ? 1 : 0;
    for (let k = 0; k < m; k++) {
      x.push(v);
      y.push(u() < 1 / (1 + Math.exp(-(-0.85 + re))) ? 1 : 0);
      g.push(`c${c}`);
    }
  }
  return { x, y, g };
}

describe("clusterAssociation", () => {
  it("holds its level on a signal constant within clusters (where a case-level test rejects far too often)", () => {
    let rejects = 0;
    const runs = 200;
    for (let s = 0; s < runs; s++) {
      const { x, y, g } = clusteredNull(s, 40, 5, 2);
      if (clusterAssociation(x, y, g, { permutations: 199, seed: s }).p <= 0.05) rejects++;
    }
    // binomial(200, 0.05): ≤ 18 holds with probability > 0.99
    expect(rejects).toBeLessThanOrEqual(18);
  });

  it("finds a real cluster-level association, one-sided in the stated direction", () => {
    const x: number[] = [];
    const y: number[] = [];
    const g: string[] = [];
    for (let c = 0; c < 40; c++)
      for (let k = 0; k < 5; k++) {
        const v = c % 2;
        x.push(v);
        y.push((c * 7 + k) % 10 < (v ? 6 : 2) ? 1 : 0);
        g.push(`c${c}`);
      }
    const up = clusterAssociation(x, y, g, { alternative: "greater", permutations: 999, seed: 1 });
    expect(up.method).toBe("permutation");
    expect(up.p).toBeLessThan(0.01);
    expect(clusterAssociation(x, y, g, { alternative: "less", permutations: 999, seed: 1 }).p).toBeGreaterThan(0.9);
  });

  it("gives the worked example and refuses bad options by name", () => {
    const r = clusterAssociation(
      [1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0],
      [1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1],
      ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e", "f", "f"],
      { seed: 1 },
    );
    expect(r).toMatchObject({ method: "t", clusters: 6, permutations: 0 });
    expect(r.statistic).toBeCloseTo(1.9335, 4);
    expect(r.p).toBeCloseTo(0.1378, 4);
    expect(() => clusterAssociation([1, 2], [0, 1], ["a", "b"], { alternative: "up" as never })).toThrow(
      /^clusterAssociation\(\): alternative must be/,
    );
  });
});
