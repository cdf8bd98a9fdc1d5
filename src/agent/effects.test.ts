import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { auc, bootstrapEffect, countingEffect, spearmanRho } from "./effects.ts";

describe("effects", () => {
  it("the bootstrap's counting path gives auc's and spearmanRho's numbers on any resample", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.boolean()), { minLength: 2, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 2, maxLength: 60 }),
        (data, picks) => {
          const x = data.map((d) => d[0] / 2);
          const failed = data.map((d) => d[1]);
          const rows = x.map((_, i) => i);
          const sample = picks.map((p) => p % x.length);
          const a = countingEffect("numeric", x, rows)(failed, sample);
          const r = countingEffect("ordinal", x, rows)(failed, sample);
          const same = (u: number, v: number) => (Number.isNaN(u) ? Number.isNaN(v) : Math.abs(u - v) < 1e-12);
          return same(a, auc(x, failed, sample)) && same(r, spearmanRho(x, failed, sample));
        },
      ),
    );
  });

  it("reads the interval at the expanded-percentile levels and says when clusters are few", () => {
    const x = Array.from({ length: 60 }, (_, i) => i % 7);
    const failed = x.map((v) => v > 3);
    const rows = x.map((_, i) => i);
    const clusters = x.map((_, i) => `g${Math.floor(i / 6)}`);
    const iv = bootstrapEffect("numeric", x, failed, rows, clusters, { seed: 1, resamples: 200 });
    expect(iv.method).toMatch(
      /^cluster bootstrap \(expanded percentile, 200 resamples over 10 clusters; few clusters: approximate\)$/,
    );
    expect(iv.lo).toBeLessThanOrEqual(iv.hi);
    expect(bootstrapEffect("numeric", x, failed, rows, clusters, { seed: 1, resamples: 200 })).toEqual(iv);
  });
});
