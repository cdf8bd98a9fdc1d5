import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { sha256Hex } from "./hash.ts";
import { holdout, select, stableSample } from "./select.ts";

const make = (id: string, extra: Partial<FailureCase> = {}): FailureCase => ({
  id,
  input: { prompt: id },
  tags: [],
  status: "active",
  meta: {},
  ...extra,
});

const cases = [
  make("a", { split: "random", tags: ["color", "hard"] }),
  make("b", { split: "popular", tags: ["color"] }),
  make("c", { split: "random", tags: ["hard"], status: "archived" }),
  make("d", { split: "adversarial", tags: ["color", "hard"] }),
];

describe("select", () => {
  it("filters by split, by every tag, and leaves archived cases out unless asked", () => {
    expect(select(cases).map((c) => c.id)).toEqual(["a", "b", "d"]);
    expect(select(cases, { includeArchived: true }).map((c) => c.id)).toEqual(["a", "b", "c", "d"]);
    expect(select(cases, { split: "random" }).map((c) => c.id)).toEqual(["a"]);
    expect(select(cases, { split: ["random", "adversarial"] }).map((c) => c.id)).toEqual(["a", "d"]);
    expect(select(cases, { tags: ["color", "hard"] }).map((c) => c.id)).toEqual(["a", "d"]);
  });
  it("takes ids in the order given and names every missing one", () => {
    expect(select(cases, { ids: ["d", "c", "a"] }).map((c) => c.id)).toEqual(["d", "c", "a"]);
    expect(() => select(cases, { ids: ["a", "zz", "yy"] })).toThrow(/2 id\(s\) not in the dataset: 'zz', 'yy'/);
  });
  it("samples the N cases with the smallest sha256(id), keeping input order", () => {
    const many = Array.from({ length: 100 }, (_, i) => make(`id-${i}`));
    const sample = select(many, { sample: 7 });
    const expected = [...many].sort((x, y) => (sha256Hex(x.id) < sha256Hex(y.id) ? -1 : 1)).slice(0, 7);
    expect(new Set(sample.map((c) => c.id))).toEqual(new Set(expected.map((c) => c.id)));
    expect(sample.map((c) => many.indexOf(c))).toEqual([...sample.map((c) => many.indexOf(c))].sort((x, y) => x - y));
    expect(() => stableSample(many, -1)).toThrow(/whole number/);
  });
  it("a sample does not depend on the order of the cases", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 40 }), fc.nat(40), (ids, n) => {
        const a = stableSample(
          ids.map((id) => ({ id })),
          n,
        ).map((c) => c.id);
        const b = stableSample(
          [...ids].reverse().map((id) => ({ id })),
          n,
        ).map((c) => c.id);
        expect([...a].sort()).toEqual([...b].sort());
        expect(a.length).toBe(Math.min(n, ids.length));
      }),
    );
  });
});

describe("holdout", () => {
  const many = Array.from({ length: 2000 }, (_, i) => make(`case-${i}`, { cluster: `img-${i % 250}` }));
  it("never splits a cluster and seals about the fraction asked", () => {
    const { explore, sealed, sealedFraction } = holdout(many, 0.3, { by: "cluster" });
    const sealedClusters = new Set(sealed.map((c) => c.cluster));
    expect(explore.some((c) => sealedClusters.has(c.cluster))).toBe(false);
    expect(explore.length + sealed.length).toBe(many.length);
    expect(sealedFraction).toBeGreaterThan(0.2);
    expect(sealedFraction).toBeLessThan(0.4);
  });
  it("by id ignores clusters; adding cases never moves an existing case across", () => {
    const before = holdout(many.slice(0, 1000), 0.3, { by: "id" });
    const after = holdout(many, 0.3, { by: "id" });
    const sealedAfter = new Set(after.sealed.map((c) => c.id));
    for (const c of before.sealed) expect(sealedAfter.has(c.id)).toBe(true);
    for (const c of before.explore) expect(sealedAfter.has(c.id)).toBe(false);
    expect(holdout(many, 0, { by: "id" }).sealed).toEqual([]);
    expect(holdout(many, 1, { by: "id" }).explore).toEqual([]);
  });
  it("a different salt seals different cases; bad fractions are refused", () => {
    const a = holdout(many, 0.5, { by: "id" }).sealed.map((c) => c.id);
    const b = holdout(many, 0.5, { by: "id", salt: "other study" }).sealed.map((c) => c.id);
    expect(a).not.toEqual(b);
    expect(() => holdout(many, 1.5)).toThrow(/must lie in \[0, 1\]/);
  });
});
