/**
 * Checks over the whole figure module, as src/stats/catalog.test.ts does for the statistics: every figure is
 * exported, answers a question in its doc comment with a worked example, and on any input either throws a
 * TypeError/RangeError naming itself or returns a scene that stays inside its viewBox; every other export is
 * documented with an example; and the lint rules keep DOM-bound d3 out of the library.
 */
import { readdirSync, readFileSync } from "node:fs";
import { ESLint } from "eslint";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as figures from "./index.ts";
import type { Scene } from "./scene.ts";
import { sceneProblems, svgProblems } from "./testing.ts";

const FIGURES = {
  "metric-intervals": "metricIntervals",
  "gate-intervals": "gateIntervals",
  "power-curve": "powerCurve",
  calibration: "calibration",
  forest: "forest",
  "signal-distributions": "signalDistributions",
  "attention-grid": "attentionGrid",
  "attention-overlay": "attentionOverlay",
  "repair-ladder": "repairLadder",
  "analysis-figure": "analysisFigure",
} as const;

const exported = figures as unknown as Record<string, unknown>;
const sources = (dir: URL) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".ts") && !f.includes(".test.") && f !== "testing.ts")
    .map((f) => readFileSync(new URL(f, dir), "utf8"))
    .join("\n");
const all = sources(new URL("./", import.meta.url)) + sources(new URL("./marks/", import.meta.url));

function docAbove(name: string): string {
  const at = all.search(new RegExp(`export (function\\*?|const) ${name}\\b`));
  expect(at, `${name} is defined in src/figures`).toBeGreaterThan(0);
  const before = all.slice(0, at);
  const doc = before.slice(before.lastIndexOf("/**"));
  expect(doc.trimEnd().endsWith("*/"), `${name} has a doc comment right above it`).toBe(true);
  return doc;
}

describe("the figure catalog", () => {
  it("has one figure per file, each exported and answering a question with a worked example", () => {
    for (const [file, name] of Object.entries(FIGURES)) {
      expect(typeof exported[name], name).toBe("function");
      const source = readFileSync(new URL(`./${file}.ts`, import.meta.url), "utf8");
      expect(source, `${file}.ts defines ${name}`).toContain(`export function ${name}(`);
      const doc = docAbove(name);
      const firstSentence = doc.replace(/^\/\*\*\s*\*?\s*/, "").split(/[.?]\s/)[0]!;
      expect(doc.slice(0, doc.indexOf("?") + 1), `${name}'s doc comment opens with its question`).toContain(
        firstSentence,
      );
      expect(doc, `${name}'s doc comment has an @example`).toContain("@example");
    }
  });

  it("documents every exported function with a doc comment and an example", () => {
    for (const name of Object.keys(exported).filter((k) => typeof exported[k] === "function"))
      expect(docAbove(name), `${name}'s doc comment has an @example`).toContain("@example");
  });

  it("on any input, each figure throws naming itself, or returns a scene inside its viewBox", () => {
    const junk = fc.oneof(
      fc.constantFrom(Number.NaN, Infinity, -1, 0, 0.5, "3", null, undefined, true, {}, [], [Number.NaN]),
      fc.integer({ min: -10, max: 2000 }),
      fc.array(
        fc.record({
          metric: fc.oneof(fc.string(), fc.integer()),
          mean: fc.oneof(fc.double(), fc.constant(undefined)),
          lo: fc.double(),
          hi: fc.double(),
          diff: fc.double(),
          gated: fc.boolean(),
          x: fc.double(),
          power: fc.double(),
          repeats: fc.integer({ min: -1, max: 9 }),
          tolerance: fc.double(),
        }),
        { maxLength: 4 },
      ),
      fc.record({
        width: fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.constant(Number.NaN)),
        along: fc.constantFrom("drop", "n", "x"),
        method: fc.constantFrom("m", undefined),
        target: fc.oneof(fc.double({ min: -1, max: 2 }), fc.constant(undefined)),
      }),
    );
    for (const name of Object.values(FIGURES)) {
      const figure = exported[name] as (...args: unknown[]) => Scene;
      fc.assert(
        fc.property(fc.array(junk, { maxLength: 3 }), (args) => {
          let scene: Scene;
          try {
            scene = figure(...args);
          } catch (e) {
            const named = (e instanceof RangeError || e instanceof TypeError) && e.message.startsWith(`${name}(): `);
            if (!named) throw new Error(`${name} threw ${String(e)}`, { cause: e });
            return;
          }
          expect(sceneProblems(scene)).toEqual([]);
          expect(svgProblems(figures.toSvg(scene))).toEqual([]);
        }),
        { numRuns: 200 },
      );
    }
  });

  it("keeps d3's DOM modules and the d3 umbrella out of library code, and allows the DOM-free ones", async () => {
    const eslint = new ESLint();
    const ids = async (code: string, filePath: string) => {
      const [result] = await eslint.lintText(code, { filePath });
      return result!.messages.map((m) => m.ruleId ?? m.message);
    };
    for (const module of ["d3", "d3-selection", "d3-axis", "d3-transition"])
      expect(
        await ids(`import * as m from "${module}";\nexport const x = m;\n`, "src/figures/example.ts"),
        module,
      ).toContain("no-restricted-imports");
    expect(
      await ids(
        'import { scaleLinear } from "d3-scale";\nimport { line } from "d3-shape";\nexport const x = [scaleLinear, line];\n',
        "src/figures/example.ts",
      ),
    ).toEqual([]);
    expect(
      await ids('import { select } from "d3-selection";\nexport const x = select;\n', "src/report/example.ts"),
    ).toContain("no-restricted-imports");
  });
});
