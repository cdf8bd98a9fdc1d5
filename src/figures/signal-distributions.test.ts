import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { walk } from "./scene.ts";
import { signalDistributions, type SignalDistribution } from "./signal-distributions.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

/** Three signals of the demo investigation's exploration split (390 cases, 52 failing). */
export const DISTRIBUTIONS: SignalDistribution[] = [
  {
    signal: "tokenEntropy.answer",
    note: "H2 · AUC 0.83, higher in failures",
    data: {
      type: "histogram",
      edges: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
      fail: [6, 5, 7, 9, 10, 8, 7],
      pass: [190, 60, 40, 22, 14, 8, 4],
    },
  },
  {
    signal: "meta.object_is_pair_member",
    note: "H4 · risk difference 0.12",
    data: { type: "counts", withSignal: [22, 110], without: [30, 280] },
  },
  {
    signal: "a.signal.whose.name.is.much.too.long.to.fit.in.its.panel.title",
    data: { type: "histogram", edges: [0, 1, 2, null], fail: [3, 4, 5], pass: [10, 0, 2] },
  },
];

describe("signalDistributions", () => {
  it("draws the demo signals as the golden file says", async () => {
    const scene = signalDistributions(DISTRIBUTIONS, { width: 960 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/signal-distributions.svg");
  });

  it("draws each group's share per bin, so groups of different sizes compare", () => {
    const scene = signalDistributions([DISTRIBUTIONS[0]!], { width: 400 });
    const rects = [...walk(scene.children)].filter((n) => n.type === "rect" && n.class?.startsWith("bar"));
    const first = rects.filter((r) => r.tip?.includes(" 0 to 0.1:"));
    expect(first.map((r) => r.tip)).toEqual([
      "tokenEntropy.answer in 0 to 0.1: 6 of 52 failing cases (11.5%)",
      "tokenEntropy.answer in 0 to 0.1: 190 of 338 passing cases (56.2%)",
    ]);
    const heights = first.map((r) => (r.type === "rect" ? r.height : 0));
    expect(heights[1]! / heights[0]!).toBeCloseTo(190 / 338 / (6 / 52), 6);
    expect(scene.table.rows[0]).toEqual(["tokenEntropy.answer", "0 to 0.1", "6", "190"]);
  });

  it("draws a binary signal's failure rate where present and absent, with the counts", () => {
    const scene = signalDistributions([DISTRIBUTIONS[1]!], { width: 400 });
    const texts = [...walk(scene.children)].filter((n) => n.type === "text").map((n) => (n as { text: string }).text);
    expect(texts).toEqual(expect.arrayContaining(["present", "absent", "22 of 110 fail", "30 of 280 fail"]));
    expect(scene.table.rows).toEqual([
      ["meta.object_is_pair_member", "present", "22", "88"],
      ["meta.object_is_pair_member", "absent", "30", "250"],
    ]);
  });

  it("skips a bin whose edge is not finite, and cuts a long name keeping it whole in the tip", () => {
    const scene = signalDistributions([DISTRIBUTIONS[2]!], { width: 300 });
    const title = [...walk(scene.children)].find((n) => n.class === "panel-title");
    expect(title?.tip).toBe(DISTRIBUTIONS[2]!.signal);
    expect(scene.table.rows.map((r) => r[1])).toEqual(["0 to 1", "1 to 2"]);
  });

  it("names the argument that is wrong", () => {
    expect(() =>
      signalDistributions([{ signal: "x", data: { type: "histogram", edges: [0, 1], fail: [1, 2], pass: [1, 2] } }], {
        width: 400,
      }),
    ).toThrow("signalDistributions(): signals[0].data must have one more edge than bins");
    expect(() => signalDistributions([{ signal: "x", data: { type: "pie" } as never }], { width: 400 })).toThrow(
      'signalDistributions(): signals[0].data.type must be "histogram" or "counts", got "pie"',
    );
  });

  it("keeps every mark inside the figure whatever the counts", () => {
    const n = fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constant(Number.NaN));
    const histogram = fc.integer({ min: 1, max: 14 }).chain((k) =>
      fc.record({
        type: fc.constant("histogram" as const),
        edges: fc.array(fc.oneof(fc.double({ min: -1e3, max: 1e3 }), fc.constant(null)), {
          minLength: k + 1,
          maxLength: k + 1,
        }),
        fail: fc.array(n, { minLength: k, maxLength: k }),
        pass: fc.array(n, { minLength: k, maxLength: k }),
      }),
    );
    const counts = fc.record({
      type: fc.constant("counts" as const),
      withSignal: fc.tuple(n, n),
      without: fc.tuple(n, n),
    });
    const signal = fc.record({ signal: fc.string({ maxLength: 60 }), data: fc.oneof(histogram, counts) });
    fc.assert(
      fc.property(fc.array(signal, { maxLength: 7 }), fc.integer({ min: 260, max: 1400 }), (signals, width) => {
        const scene = signalDistributions(signals as SignalDistribution[], { width });
        expect(sceneProblems(scene)).toEqual([]);
        expect(svgProblems(toSvg(scene))).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
