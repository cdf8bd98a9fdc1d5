import { describe, expect, it } from "vitest";
import type { FailureCase, ImagePixels } from "../core/index.ts";
import type { Hypothesis } from "./diagnose.ts";
import { EventLog } from "./events.ts";
import { evidenceCases, logEvidence } from "./evidence.ts";
import type { ProbedCase } from "./probe.ts";
import type { CaseTable } from "./signals.ts";

/** Eight cases on four images (two questions each); odd ones fail; `share` falls as the case number rises. */
const CASES: FailureCase[] = Array.from({ length: 8 }, (_, i) => ({
  id: `c${i}`,
  input: { prompt: `is there a thing ${i}?`, image: `img${Math.floor(i / 2)}.png` },
  expected: "yes",
  tags: [],
  split: i < 4 ? "random" : "popular",
  status: "active",
  meta: {},
}));
const FAILED = CASES.map((_, i) => i % 2 === 1);
const PROBED: ProbedCase[] = CASES.map((c, i) => ({
  case: c,
  output: FAILED[i] ? "no" : "yes",
  passed: !FAILED[i],
  signals: {},
  rollout: [0.1 * i, 0.2, 0.3, 0.4],
}));
const TABLE: CaseTable = {
  ids: CASES.map((c) => c.id),
  failed: FAILED,
  columns: new Map<string, readonly unknown[]>([["share", CASES.map((_, i) => (i === 2 ? "" : 1 - i / 10))]]),
};
/** The fields of a hypothesis that the evidence reads: "share is lower in failures". */
const H1 = { id: "H1", signal: "share", column: "share", kind: "numeric", direction: -1 } as unknown as Hypothesis;

/** A 2 × 2 RGBA image whose first pixel says which image it is. */
const pixels = (ref: string): ImagePixels => {
  const data = new Uint8ClampedArray(16).fill(255);
  data[0] = Number(ref.replace(/\D/g, "")) * 40;
  return { width: 2, height: 2, data };
};

describe("evidenceCases", () => {
  it("picks the failing cases where the signal points the hypothesis' way most, and the passing cases where it points the other way", async () => {
    const reads: string[] = [];
    const evidence = await evidenceCases([H1], TABLE, PROBED, {
      perSide: 2,
      grid: { rows: 2, cols: 2 },
      images: async (ref) => (reads.push(ref), pixels(ref)),
    });
    const [h] = evidence.hypotheses;
    // Lower in failures: failing cases with the lowest share first (c7, c5); passing with the highest (c0, c4; c2 has none).
    expect(h!.failing.map((c) => c.id)).toEqual(["c7", "c5"]);
    expect(h!.passing.map((c) => c.id)).toEqual(["c0", "c4"]);
    expect(h!.failing[0]).toMatchObject({ answer: "no", expected: "yes", passed: false, split: "popular" });
    expect(h!.failing[0]!.value).toBeCloseTo(0.3, 12);
    expect(h!.failing[0]!.attention).toEqual([0.7, 0.2, 0.3, 0.4]);
    expect(evidence.split).toBe("exploration");
    expect(evidence.grid).toMatchObject({ rows: 2, cols: 2 });
    // Each image read once and embedded once, keyed by its content hash, as a PNG data: URL.
    expect(reads.sort()).toEqual(["img0.png", "img2.png", "img3.png"]);
    const keys = Object.keys(evidence.images);
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const image of Object.values(evidence.images)) expect(image.dataUrl).toMatch(/^data:image\/png;base64,/);
    expect(keys).toContain(h!.failing[0]!.image!.hash);
    expect(h!.failing[0]!.image!.ref).toBe("img3.png");
  });

  it("names an image it cannot read, or one too large to embed, without its bytes", async () => {
    const unreadable = await evidenceCases([H1], TABLE, PROBED, {
      perSide: 1,
      images: async () => {
        throw new Error("gone");
      },
    });
    expect(unreadable.hypotheses[0]!.failing[0]!.image).toEqual({ ref: "img3.png" });
    expect(unreadable.images).toEqual({});
    const large = await evidenceCases([H1], TABLE, PROBED, {
      perSide: 1,
      maxImageBytes: 10,
      images: async (r) => pixels(r),
    });
    expect(large.hypotheses[0]!.failing[0]!.image!.hash).toMatch(/^sha256:/);
    expect(large.images).toEqual({});
    // No grid given: no attention is attached.
    expect(large.hypotheses[0]!.failing[0]!.attention).toBeUndefined();
  });

  it("refuses a count per side outside 1–12, and logs what it picked as evidence.cases", async () => {
    await expect(evidenceCases([H1], TABLE, PROBED, { perSide: 0 })).rejects.toThrow(
      /perSide must be a whole number from 1 to 12, got 0/,
    );
    const log = new EventLog({ runId: "run-1" });
    await logEvidence(log, [H1], TABLE, PROBED, { perSide: 1 });
    const event = log.find("evidence.cases");
    expect(event?.stage).toBe("report");
    expect((event?.payload.hypotheses as { failing: { id: string }[] }[])[0]!.failing[0]!.id).toBe("c7");
  });
});
