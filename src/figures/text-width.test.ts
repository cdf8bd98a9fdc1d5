import { describe, expect, it } from "vitest";
import { fitText, textWidth } from "./text-width.ts";

describe("textWidth and fitText", () => {
  it("measures from the width table", () => {
    expect(textWidth("pass", 12)).toBeCloseTo(25.344, 3); // (556 + 556 + 500 + 500) / 1000 × 12
    expect(textWidth("", 12)).toBe(0);
    expect(textWidth("MMM", 10)).toBeGreaterThan(textWidth("iii", 10) * 3);
    expect(textWidth("漢字", 10)).toBe(20);
  });

  it("cuts a label that does not fit, with an ellipsis, and leaves one that fits alone", () => {
    expect(fitText("pass", 100, 12)).toEqual({ text: "pass", cut: false });
    const cut = fitText("pope-adversarial-split", 60, 12);
    expect(cut.cut).toBe(true);
    expect(cut.text.endsWith("…")).toBe(true);
    expect(textWidth(cut.text, 12)).toBeLessThanOrEqual(60);
    expect("pope-adversarial-split".startsWith(cut.text.slice(0, -1))).toBe(true);
    expect(fitText("anything", 0, 12)).toEqual({ text: "…", cut: true });
  });

  it("counts characters, not UTF-16 units", () => {
    expect(textWidth("😀", 10)).toBe(10);
    expect(fitText("😀😀😀😀", 25, 10).text).toBe("😀…");
  });
});
