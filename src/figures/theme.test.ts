import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CATEGORICAL, COLORS, diverging, sequential } from "./theme.ts";

describe("theme", () => {
  it("uses the same colours as the page's design tokens", () => {
    const css = readFileSync(new URL("../ui/styles/tokens.css", import.meta.url), "utf8");
    const tokens = Object.fromEntries(
      [...css.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1]!, m[2]!.toLowerCase()]),
    );
    for (const [name, value] of Object.entries(COLORS)) expect(`${name}: ${value}`).toBe(`${name}: ${tokens[name]}`);
  });

  it("keeps categorical colours distinct and the ramps defined for non-finite input", () => {
    expect(new Set(CATEGORICAL).size).toBe(CATEGORICAL.length);
    expect(sequential(Number.NaN)).toBe(COLORS.panel);
    expect(diverging(Infinity)).toBe(COLORS.panel);
    expect(sequential(0)).not.toBe(sequential(1));
    expect(sequential(2)).toBe(sequential(1));
  });
});
