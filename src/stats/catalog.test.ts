/**
 * Checks over the whole catalog: every function the issue names is exported, documented with
 * a worked example, and on bad input either throws a RangeError/TypeError naming itself or
 * returns numbers (never NaN).
 */
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as stats from "./index.ts";

const CATALOG = [
  "wilson",
  "meanSE",
  "clusteredSE",
  "clusterMean",
  "estimate",
  "passHatK",
  "mcnemar",
  "newcombePaired",
  "adjustedPaired",
  "pairedBootstrap",
  "comparePaired",
  "fisherExact",
  "mannWhitneyU",
  "spearman",
  "friedman",
  "clusterAssociation",
  "eValueBinomial",
  "eValueMcNemar",
  "holm",
  "benjaminiHochberg",
  "eBH",
  "pairedSampleSize",
  "detectableDrop",
] as const;

const exported = stats as unknown as Record<string, (...args: unknown[]) => unknown>;

describe("the stats catalog", () => {
  it("exports every function of the catalog", () => {
    for (const name of CATALOG) expect(typeof exported[name], name).toBe("function");
  });

  it("documents every exported function with a doc comment and a worked example", () => {
    const dir = new URL("./", import.meta.url);
    const sources = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && !f.includes(".test.") && !f.endsWith(".node.ts"))
      .map((f) => readFileSync(new URL(f, dir), "utf8"))
      .join("\n");
    for (const name of Object.keys(exported).filter((k) => typeof exported[k] === "function")) {
      const at = sources.indexOf(`export function ${name}(`);
      expect(at, `${name} is defined in src/stats`).toBeGreaterThan(0);
      const before = sources.slice(0, at);
      const doc = before.slice(before.lastIndexOf("/**"));
      expect(doc.trimEnd().endsWith("*/"), `${name} has a doc comment right above it`).toBe(true);
      expect(doc, `${name}'s doc comment has an @example`).toContain("@example");
    }
  });

  it("never returns NaN and throws only RangeError/TypeError naming the function, whatever it is given", () => {
    const junk = fc.oneof(
      fc.constantFrom(
        Number.NaN,
        Infinity,
        -Infinity,
        -1,
        0.5,
        1e300,
        "3",
        null,
        undefined,
        true,
        {},
        [],
        [Number.NaN],
      ),
      fc.integer({ min: 0, max: 30 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.array(fc.integer({ min: -2, max: 3 }), { maxLength: 12 }),
      fc.array(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 2, maxLength: 3 }), { maxLength: 4 }),
      fc.record({
        discordance: fc.double({ min: 0, max: 1 }),
        drop: fc.double({ min: 0, max: 1 }),
        n: fc.integer({ min: 0, max: 50 }),
      }),
      fc.record({ alternative: fc.constantFrom("greater", "less", "both"), a: fc.double({ min: -1, max: 3 }) }),
      fc.record({
        seed: fc.integer(),
        replicates: fc.integer({ min: -1, max: 50 }),
        confidence: fc.double({ min: 0, max: 1 }),
      }),
    );
    const hasNaN = (v: unknown): boolean =>
      typeof v === "number"
        ? Number.isNaN(v)
        : typeof v === "object" && v !== null
          ? Object.values(v as object).some(hasNaN)
          : false;
    for (const name of CATALOG) {
      fc.assert(
        fc.property(fc.array(junk, { minLength: 0, maxLength: 5 }), (args) => {
          let out: unknown;
          try {
            out = exported[name]!(...args);
          } catch (e) {
            const named = (e instanceof RangeError || e instanceof TypeError) && e.message.startsWith(`${name}(): `);
            if (!named) throw new Error(`${name} threw ${String(e)}`, { cause: e });
            return true;
          }
          if (hasNaN(out)) throw new Error(`${name} returned NaN: ${JSON.stringify(out)}`);
          return true;
        }),
        { numRuns: 300 },
      );
    }
  });
});
