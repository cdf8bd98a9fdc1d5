import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forest, type ForestRow } from "./forest.ts";
import { walk } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

/** The demo investigation's hypotheses (600 cases, seed 1): AUCs and a risk difference. */
export const FOREST_ROWS: ForestRow[] = [
  {
    id: "H1",
    label: "H1 logitLens.answerProb.S2: lower in failures (merged: logprob.answer)",
    effect: "AUC",
    nullValue: 0.5,
    explore: { value: 0.162, lo: 0.099, hi: 0.238 },
    sealed: { value: 0.067, lo: 0.022, hi: 0.125 },
    ebh: true,
    verdict: "SUPPORTED",
  },
  {
    id: "H2",
    label: "H2 tokenEntropy.answer: higher in failures",
    effect: "AUC",
    nullValue: 0.5,
    explore: { value: 0.83, lo: 0.76, hi: 0.9 },
    sealed: { value: 0.933, lo: 0.874, hi: 0.979 },
    ebh: true,
    verdict: "SUPPORTED",
  },
  {
    id: "H3",
    label: "H3 meta.object_popularity_rank: higher in failures",
    effect: "AUC",
    nullValue: 0.5,
    explore: { value: 0.62, lo: 0.54, hi: 0.7 },
    sealed: { value: 0.518, lo: 0.384, hi: 0.656 },
    ebh: false,
    verdict: "INCONCLUSIVE",
  },
  {
    id: "H4",
    label: "H4 meta.object_is_pair_member: failure more likely when present",
    effect: "risk difference",
    nullValue: 0,
    explore: { value: 0.12, lo: 0.03, hi: 0.2 },
    sealed: { value: 0.087, lo: -0.068, hi: 0.212 },
    ebh: false,
    verdict: "INCONCLUSIVE",
  },
];

const x = (n: { type: string; cx?: number }) => n.cx ?? Number.NaN;

describe("forest", () => {
  it("draws the demo investigation's hypotheses as the golden file says", async () => {
    const scene = forest(FOREST_ROWS, { width: 720 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/forest.svg");
  });

  it("puts each effect kind in its own panel with its own scale and null line", () => {
    const scene = forest(FOREST_ROWS, { width: 720 });
    const titles = [...walk(scene.children)]
      .filter((n) => n.class === "panel-title")
      .map((n) => (n as { text: string }).text);
    expect(titles).toEqual(["AUC · null 0.5", "risk difference · null 0"]);
    const nulls = [...walk(scene.children)].filter((n) => n.type === "line" && n.class === "null-line");
    expect(nulls).toHaveLength(2);
    // The risk difference's null (0) sits inside its own axis, not at the AUC panel's 0 (the far left).
    const estimate = (key: string) => {
      const g = [...walk(scene.children)].find((n) => n.key === key);
      return g && g.type === "g"
        ? x(g.children.find((c) => c.class === "estimate") as { type: string; cx?: number })
        : NaN;
    };
    const [aucNull, rdNull] = nulls.map((n) => (n.type === "line" ? n.x1 : NaN));
    expect(estimate("H1|sealed")).toBeLessThan(aucNull!); // AUC 0.067 < 0.5
    expect(estimate("H2|sealed")).toBeGreaterThan(aucNull!); // AUC 0.933 > 0.5
    expect(estimate("H4|sealed")).toBeGreaterThan(rdNull!); // risk difference +0.087 > 0
    expect(rdNull!).toBeGreaterThan(240); // right of the label column: inside its own panel's axis
    expect(Math.abs(rdNull! - aucNull!)).toBeGreaterThan(20);
  });

  it("wraps long labels instead of cutting them, and keeps the full text as the tip when they still do not fit", () => {
    const long =
      "H9 a.very.long.signal.name.that.goes.on=and_on_and_on_and_on: failure more likely when present, and then some more words";
    const scene = forest([{ ...FOREST_ROWS[0]!, id: "H9", label: long }], { width: 480 });
    const lines = [...walk(scene.children)].filter((n) => n.type === "text" && n.class === "row-label");
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((l) => l.tip === long)).toBe(true);
    expect(sceneProblems(scene)).toEqual([]);
    const short = forest(FOREST_ROWS.slice(1, 2), { width: 720 });
    const label = [...walk(short.children)].filter((n) => n.type === "text" && n.class === "row-label");
    expect(label.map((l) => (l as { text: string }).text).join(" ")).toBe("H2 tokenEntropy.answer: higher in failures");
    expect(label.every((l) => !l.tip)).toBe(true);
  });

  it("marks e-BH survivors and says the verdict in words; a row without a sealed interval keeps its exploration one", () => {
    const scene = forest([{ ...FOREST_ROWS[0]!, sealed: null, ebh: null, verdict: undefined as never }], {
      width: 600,
    });
    const texts = [...walk(scene.children)].filter((n) => n.type === "text").map((n) => (n as { text: string }).text);
    expect(texts).toContain("e-BH —");
    expect(texts).toContain("not decided");
    expect([...walk(scene.children)].filter((n) => n.class?.includes("mark-interval")).map((n) => n.key)).toEqual([
      "H1|explore",
    ]);
    const decided = forest(FOREST_ROWS, { width: 720 });
    const marks = [...walk(decided.children)].filter((n) => n.class === "ebh").map((n) => (n as { text: string }).text);
    expect(marks).toEqual(["e-BH ✓", "e-BH ✓", "e-BH ✗", "e-BH ✗"]);
    expect(decided.table.rows[0]).toEqual([
      FOREST_ROWS[0]!.label,
      "AUC",
      "0.5",
      "0.162 [0.099, 0.238]",
      "0.067 [0.022, 0.125]",
      "yes",
      "SUPPORTED",
    ]);
  });

  it("names the argument that is wrong", () => {
    expect(() => forest("x" as never, { width: 600 })).toThrow('forest(): rows must be an array, got "x"');
    expect(() => forest([{ ...FOREST_ROWS[0]!, effect: 3 as never }], { width: 600 })).toThrow(
      "forest(): rows[0].effect must be a string, got 3",
    );
    expect(() => forest(FOREST_ROWS, { width: 100 })).toThrow("forest(): width must be a number of px ≥ 320, got 100");
  });

  it("keeps every mark inside the figure and every label escaped, whatever the rows hold", () => {
    const value = fc.oneof(fc.double({ min: -3, max: 3 }), fc.constantFrom(Number.NaN, Infinity, null, 0, 1, 0.5));
    const interval = fc.record({ value, lo: value, hi: value });
    const row = fc.record({
      id: fc.string({ maxLength: 6 }),
      label: fc.string({ maxLength: 120 }),
      effect: fc.constantFrom("AUC", "risk difference", "Spearman ρ", '<odd & "kind">'),
      nullValue: fc.constantFrom(0, 0.5),
      explore: interval,
      sealed: fc.option(interval),
      ebh: fc.option(fc.boolean()),
      verdict: fc.constantFrom("SUPPORTED", "REFUTED", "INCONCLUSIVE"),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), fc.integer({ min: 320, max: 1400 }), (rows, width) => {
        const scene = forest(rows as ForestRow[], { width });
        expect(sceneProblems(scene)).toEqual([]);
        expect(svgProblems(toSvg(scene))).toEqual([]);
        expect(scene.table.rows).toHaveLength(rows.length);
      }),
      { numRuns: 120 },
    );
  });
});
