/**
 * Test helpers (Node only): the reference fixtures written by fixtures/make_fixtures.py
 * (SciPy / statsmodels) and a tolerance check that says which case failed and by how much.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";

export interface Fixture<A extends unknown[] = unknown[], E = unknown> {
  function: string;
  reference: string;
  tolerance: number;
  cases: { args: A; expected: E }[];
}

/** The committed reference cases for one function. */
export function loadFixture<A extends unknown[] = unknown[], E = unknown>(name: string): Fixture<A, E> {
  const text = readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8");
  return JSON.parse(text) as Fixture<A, E>;
}

/**
 * |actual − expected| ≤ rel·max(|actual|, |expected|) + abs. `abs` only absorbs rounding
 * at values that are zero up to cancellation (an interval end at 0, a correlation near 0).
 */
export function expectClose(actual: number, expected: number, rel: number, abs = 0, label = ""): void {
  if (actual === expected) return;
  const ok =
    Number.isFinite(actual) &&
    Number.isFinite(expected) &&
    Math.abs(actual - expected) <= rel * Math.max(Math.abs(actual), Math.abs(expected)) + abs;
  if (!ok) {
    const relErr = Math.abs(actual - expected) / Math.max(Math.abs(expected), Number.MIN_VALUE);
    expect.fail(`${label}: got ${actual}, reference ${expected} (relative error ${relErr.toExponential(2)})`);
  }
}
