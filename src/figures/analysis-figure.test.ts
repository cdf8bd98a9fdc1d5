import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { analysisFigure } from "./analysis-figure.ts";
import { analysisFigureTable, checkAnalysisFigureSpec } from "./analysis-figure-spec.ts";
import { walk, type Scene } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

/** What the rule policy's own analysis returns (STANDARD_ANALYSIS in src/agent/agentic/judges.ts), on planted-vlm-like signals. */
const standard = {
  kind: "bar",
  title: "Largest standardized differences",
  x: ["attention.imageShare.L1H2", "tokenEntropy.answer", "logitLens.answerProb.S2", "sinkMass.L0"],
  y: [-1.42, 0.81, -0.37, 0.12],
  xLabel: "signal",
  yLabel: "d (failures − passes)",
};

const nodes = (scene: Scene, type: string) => [...walk(scene.children)].filter((n) => n.type === type);
const texts = (scene: Scene) => nodes(scene, "text").map((n) => (n.type === "text" ? n.text : ""));

function sound(scene: Scene): void {
  expect(sceneProblems(scene)).toEqual([]);
  expect(svgProblems(toSvg(scene))).toEqual([]);
}

describe("analysisFigure", () => {
  it("draws the rule policy's bar figure as horizontal bars from zero, one per signal, as the golden file says", async () => {
    const scene = analysisFigure(standard, { width: 640, path: "A1 figures[0]" });
    sound(scene);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/analysis-figure-bar.svg");
    const bars = nodes(scene, "rect").filter((n) => n.class === "bar");
    expect(bars).toHaveLength(4);
    // The negative bar lies left of the zero line and the positive one right of it.
    const zero = nodes(scene, "line").find((n) => n.class === "zero-line");
    const x0 = zero?.type === "line" ? zero.x1 : Number.NaN;
    const [first, second] = bars;
    expect(first?.type === "rect" && first.x + first.width).toBeCloseTo(x0, 6);
    expect(second?.type === "rect" && second.x).toBeCloseTo(x0, 6);
    expect(scene.label).toBe(
      "Largest standardized differences: 4 bars; d (failures − passes) from −1.42 at attention.imageShare.L1H2 to 0.81 at tokenEntropy.answer",
    );
    expect(scene.table.columns.map((c) => c.label)).toEqual(["signal", "d (failures − passes)"]);
    expect(scene.table.rows[0]).toEqual(["attention.imageShare.L1H2", "−1.42"]);
    expect(texts(scene)).toContain("d (failures − passes)");
  });

  it("draws a scatter, a line over numbers (in x order) and over named steps, and a histogram of both kinds", async () => {
    const scatter = analysisFigure(
      {
        kind: "scatter",
        title: "Entropy by image share",
        x: [0.1, 0.4, 0.35, 0.9],
        y: [2.1, 1.2, 1.5, 0.3],
        xLabel: "image share",
        yLabel: "entropy",
      },
      { width: 560 },
    );
    sound(scatter);
    expect(nodes(scatter, "circle")).toHaveLength(4);
    await expect(prettySvg(toSvg(scatter))).toMatchFileSnapshot("./snapshots/analysis-figure-scatter.svg");

    const numeric = analysisFigure(
      { kind: "line", title: "AUC by layer", x: [2, 0, 1], y: [0.7, 0.52, 0.61], xLabel: "layer", yLabel: "AUC" },
      { width: 480 },
    );
    sound(numeric);
    const path = nodes(numeric, "path")[0];
    // Sorted by x: the path starts at layer 0 (the leftmost point) and ends at layer 2.
    const xs = path?.type === "path" ? [...path.d.matchAll(/[ML](-?[\d.]+),/g)].map((m) => Number(m[1])) : [];
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    const named = analysisFigure(
      { kind: "line", title: "Failure rate by step", x: ["explore", "sealed", "repair"], y: [0.4, 0.38, 0.2] },
      { width: 480 },
    );
    sound(named);
    expect(texts(named)).toEqual(expect.arrayContaining(["explore", "sealed", "repair"]));

    const bins = analysisFigure(
      {
        kind: "histogram",
        title: "Entropy of failures",
        x: [0, 0.5, 1, 1.5],
        y: [3, 9, 4, 0],
        xLabel: "entropy",
        yLabel: "cases",
      },
      { width: 480 },
    );
    sound(bins);
    await expect(prettySvg(toSvg(bins))).toMatchFileSnapshot("./snapshots/analysis-figure-histogram.svg");
    const rects = nodes(bins, "rect");
    expect(rects).toHaveLength(4);
    expect(rects[1]?.tip).toBe("entropy 0.5 to 1: cases 9");
    const labelled = analysisFigure(
      { kind: "histogram", title: "Cases per answer", x: ["yes", "no", "other"], y: [30, 25, 5] },
      { width: 400 },
    );
    sound(labelled);
    expect(nodes(labelled, "rect")).toHaveLength(3);
  });

  it("names the field and what was expected when a spec cannot be drawn, and its values still read as a table", () => {
    const cases: [unknown, string][] = [
      [null, "analysisFigure(): A1 figures[0] must be an object { kind, title, x, y }, got null"],
      [
        { ...standard, kind: "pie" },
        'analysisFigure(): A1 figures[0].kind must be one of bar, scatter, line, histogram, got "pie"',
      ],
      [{ ...standard, y: [1, 2] }, "analysisFigure(): A1 figures[0].y must be 4 values (one per x), got 2 values"],
      [{ ...standard, y: [1, 2, "3", 4] }, 'analysisFigure(): A1 figures[0].y[2] must be a finite number, got "3"'],
      [
        { ...standard, href: "javascript:alert(1)" },
        'analysisFigure(): A1 figures[0].href must be absent (allowed fields: kind, title, x, y, xLabel, yLabel), got "javascript:alert(1)"',
      ],
      [
        { ...standard, title: "t".repeat(501) },
        "analysisFigure(): A1 figures[0].title must be at most 500 characters, got 501 characters",
      ],
      [
        { kind: "scatter", title: "s", x: [1, "b"], y: [1, 2] },
        'analysisFigure(): A1 figures[0].x[1] must be a number (a scatter places each point by its x), got "b"',
      ],
      [
        { kind: "histogram", title: "h", x: [0, 1], y: [3, -1] },
        "analysisFigure(): A1 figures[0].y[1] must be a count ≥ 0 (a histogram's bars are counts), got −1",
      ],
      [
        { kind: "histogram", title: "h", x: [0, 2, 1], y: [3, 1, 1] },
        "analysisFigure(): A1 figures[0].x[2] must be a bin start above the one before it (2): a histogram's numeric x are increasing bin starts, got 1",
      ],
      [
        { kind: "line", title: "l", x: ["a", 2], y: [3, 1] },
        "analysisFigure(): A1 figures[0].x[1] must be a string like the other x values (a line runs over numbers or over named steps, not both), got 2",
      ],
      [
        {
          kind: "bar",
          title: "b",
          x: Array.from({ length: 51 }, (_, i) => `s${i}`),
          y: Array.from({ length: 51 }, () => 1),
        },
        "analysisFigure(): A1 figures[0].x must be at most 50 bars for a bar figure (each is named on the figure; more can be drawn as a histogram or a scatter), got 51",
      ],
      [
        { kind: "scatter", title: "s", x: Array.from({ length: 10_001 }, () => 1), y: [] },
        "analysisFigure(): A1 figures[0].x must be at most 10000 values, got 10001 values",
      ],
    ];
    for (const [spec, message] of cases) {
      expect(() => analysisFigure(spec, { width: 640, path: "A1 figures[0]" }), message).toThrow(
        new TypeError(message),
      );
      // Whatever the spec, its values come out as text rows.
      const table = analysisFigureTable(spec);
      for (const row of table.rows) for (const cell of row) expect(typeof cell).toBe("string");
    }
    expect(analysisFigureTable({ ...standard, y: [1, 2] }).rows.at(-1)).toEqual(["sinkMass.L0", "—"]);
    expect(analysisFigureTable({ kind: "bar", title: "t", x: [{}, ["a"]], y: [Number.NaN, 1] }).rows).toEqual([
      ["(an object)", "NaN"],
      ["(an array)", "1"],
    ]);
    expect(() => analysisFigure(standard, { width: 100 })).toThrow(
      new RangeError("analysisFigure(): width must be a number of px ≥ 240, got 100"),
    );
    expect(checkAnalysisFigureSpec(standard, "f").x).toEqual(standard.x);
  });

  it("draws markup in a spec as text, never as elements", () => {
    const evil = "<script>alert(1)</script><a href='x'>&amp;";
    const scene = analysisFigure(
      {
        kind: "bar",
        title: evil,
        x: [evil, "ok"],
        y: [1, 2],
        xLabel: evil,
        yLabel: "</svg><img src=x onerror=alert(1)>",
      },
      { width: 640 },
    );
    const svg = toSvg(scene);
    expect(svgProblems(svg)).toEqual([]);
    expect(svg).not.toMatch(/<script|<a |<img/);
    expect(svg).toContain("&lt;script&gt;");
    expect(scene.table.rows[0]![0]).toBe(evil); // the table is text too: its renderers escape it
  });

  it("says so when there is nothing to draw, and an empty spec is a sound scene", () => {
    for (const kind of ["bar", "scatter", "line", "histogram"]) {
      const scene = analysisFigure({ kind, title: "nothing", x: [], y: [] }, { width: 300 });
      sound(scene);
      expect(scene.label).toBe("nothing: no values to draw");
      expect(texts(scene)).toContain("The analysis returned no values for this figure.");
    }
  });

  it("on any spec, either throws naming itself or returns a scene inside its viewBox", () => {
    const value = fc.oneof(
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      fc.constantFrom(0, 1, -1, 1e-300, 1e300, Number.NaN, Infinity),
      fc.string({ maxLength: 30 }),
      fc.constantFrom(null, true, {}, "<b>&"),
    );
    const spec = fc.record(
      {
        kind: fc.constantFrom("bar", "scatter", "line", "histogram", "pie", 3),
        title: fc.oneof(fc.string({ maxLength: 60 }), fc.constant(7)),
        x: fc.array(value, { maxLength: 60 }),
        y: fc.array(value, { maxLength: 60 }),
        xLabel: fc.string({ maxLength: 40 }),
        yLabel: fc.string({ maxLength: 40 }),
      },
      { requiredKeys: ["kind", "title", "x", "y"] },
    );
    const numericSpec = fc
      .record({
        kind: fc.constantFrom("bar", "scatter", "line", "histogram"),
        title: fc.string({ maxLength: 60 }),
        x: fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 0, maxLength: 40 }),
      })
      .chain((s) =>
        fc
          .array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: s.x.length, maxLength: s.x.length })
          .map((y) => ({ ...s, x: s.kind === "histogram" ? [...new Set(s.x)].sort((a, b) => a - b) : s.x, y })),
      )
      .map((s) => ({ ...s, y: s.y.slice(0, s.x.length), x: s.x.slice(0, s.y.length) }));
    fc.assert(
      fc.property(fc.oneof(spec, numericSpec), fc.integer({ min: 240, max: 1400 }), (s, width) => {
        let scene: Scene;
        try {
          scene = analysisFigure(s, { width, path: "f" });
        } catch (e) {
          if (!(e instanceof TypeError && e.message.startsWith("analysisFigure(): f"))) throw e;
          return;
        }
        sound(scene);
      }),
      { numRuns: 300 },
    );
  });
});
