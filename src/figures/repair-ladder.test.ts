import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { netEffect, netText, repairLadder, type RepairLadderRow } from "./repair-ladder.ts";
import { walk, type SceneNode } from "./scene.ts";
import { prettySvg, sceneProblems, svgProblems } from "./testing.ts";
import { toSvg } from "./to-svg.ts";

/** The demo investigation's repair ladder (600 cases, seed 1, ceiling L3b; 210 sealed cases each). */
export const LADDER: RepairLadderRow[] = [
  { tier: "L1", candidate: "prompt rewrite 'context'", n: 210, fixed: 9, broken: 17, validated: false, p: 0.83 },
  { tier: "L1", candidate: "prompt rewrite 'restate'", n: 210, fixed: 1, broken: 8, validated: false, p: 0.927 },
  { tier: "L2", candidate: "self-consistency over paraphrases", n: 210, fixed: 0, broken: 0, validated: false, p: 0.5 },
  {
    tier: "L2",
    candidate: "crop and re-ask (four zoomed quadrants + full image)",
    n: 210,
    fixed: 8,
    broken: 28,
    validated: false,
    p: 0.992,
    control: { fixed: 12, broken: 25, beaten: false },
  },
  {
    tier: "L3a",
    candidate: "attention-guided crop, chosen by confidence",
    n: 210,
    fixed: 8,
    broken: 18,
    validated: false,
  },
  { tier: "L3b", candidate: "attention +2 on image tokens", n: 210, fixed: 14, broken: 2, validated: true, p: 0.001 },
];

const bars = (nodes: readonly SceneNode[]) =>
  [...walk(nodes)].filter(
    (n): n is Extract<SceneNode, { type: "rect" }> => n.type === "rect" && !!n.class?.startsWith("bar"),
  );
const zeroOf = (nodes: readonly SceneNode[]) => {
  const zero = [...walk(nodes)].find((n) => n.type === "line" && n.class === "zero-line");
  return zero?.type === "line" ? zero.x1 : Number.NaN;
};

describe("repairLadder", () => {
  it("draws the demo ladder as the golden file says", async () => {
    const scene = repairLadder(LADDER, { width: 720 });
    expect(sceneProblems(scene)).toEqual([]);
    await expect(prettySvg(toSvg(scene))).toMatchFileSnapshot("./snapshots/repair-ladder.svg");
  });

  it("points each bar the way fixed − broken says: 8 fixed and 28 broken points left, 14 fixed and 2 broken right", () => {
    const scene = repairLadder(LADDER, { width: 720 });
    const zero = zeroOf(scene.children);
    const byKey = new Map(bars(scene.children).map((b) => [b.key, b]));
    const crop = byKey.get("L2|crop and re-ask (four zoomed quadrants + full image)")!;
    expect(crop.x + crop.width).toBeCloseTo(zero, 6); // ends at zero …
    expect(crop.x).toBeLessThan(zero - 50); // … and reaches left: it harms
    expect(crop.class).toContain("harm");
    const help = byKey.get("L3b|attention +2 on image tokens")!;
    expect(help.x).toBeCloseTo(zero, 6);
    expect(help.width).toBeGreaterThan(20);
    expect(help.class).toContain("help");
    // Bar lengths are in proportion to (fixed − broken) / n.
    expect(crop.width / help.width).toBeCloseTo(20 / 12, 6);
    // Zero fixed and zero broken: a bar of no length, and its row says "no change".
    expect(byKey.get("L2|self-consistency over paraphrases")!.width).toBe(0);
    expect(scene.table.rows[2]![6]).toBe("no change");
    expect(netEffect({ n: 210, fixed: 8, broken: 28 })).toBeCloseTo(-20 / 210, 12);
    expect([netText(-20 / 210), netText(0), netText(16 / 210)]).toEqual(["−9.5 pts", "0 pts", "+7.6 pts"]);
  });

  it("writes the fixed and broken counts and the signed net change on each row", () => {
    const scene = repairLadder(LADDER, { width: 720 });
    const texts = [...walk(scene.children)].filter((n) => n.type === "text").map((n) => (n as { text: string }).text);
    expect(texts).toContain("fixed 8 · broken 28");
    expect(texts).toContain("−9.5 pts");
    expect(texts).toContain("+5.7 pts");
    expect(texts).toContain("validated ✓");
    expect(scene.table.rows[3]).toEqual([
      "L2",
      "crop and re-ask (four zoomed quadrants + full image)",
      "210",
      "8",
      "28",
      "−9.5 pts",
      "harms",
      "−6.2 pts",
      "no",
    ]);
    const control = [...walk(scene.children)].find((n) => n.class === "control");
    expect(control?.tip).toMatch(/yes-bias control −6.2 pts \(fixed 12, broken 25\); not beaten/);
  });

  it("names the argument that is wrong", () => {
    expect(() => repairLadder([{ ...LADDER[0]!, fixed: "9" as never }], { width: 600 })).toThrow(
      'repairLadder(): rows[0].fixed must be a number, got "9"',
    );
    expect(() => repairLadder(LADDER, { width: Number.NaN })).toThrow("repairLadder(): width must be a number of px");
  });

  it("keeps every mark inside the figure whatever the counts, and each bar on the side its sign says", () => {
    const row = fc.record({
      tier: fc.constantFrom("L1", "L2", "L3a", "L3b", "L4"),
      candidate: fc.string({ maxLength: 90 }),
      n: fc.integer({ min: 0, max: 5000 }),
      fixed: fc.integer({ min: 0, max: 5000 }),
      broken: fc.integer({ min: 0, max: 5000 }),
      validated: fc.boolean(),
      control: fc.option(
        fc.record({ fixed: fc.integer({ min: 0, max: 500 }), broken: fc.integer({ min: 0, max: 500 }) }),
      ),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), fc.integer({ min: 320, max: 1400 }), (drawn, width) => {
        const rows = drawn.map((r, i) => ({ ...r, candidate: `${i}: ${r.candidate}` }));
        const scene = repairLadder(rows, { width });
        expect(sceneProblems(scene)).toEqual([]);
        expect(svgProblems(toSvg(scene))).toEqual([]);
        const zero = zeroOf(scene.children);
        for (const b of bars(scene.children)) {
          const r = rows.find((d) => `${d.tier}|${d.candidate}` === b.key)!;
          if (r.fixed < r.broken) expect(b.x + b.width).toBeCloseTo(zero, 6);
          if (r.fixed > r.broken) expect(b.x).toBeCloseTo(zero, 6);
        }
      }),
      { numRuns: 120 },
    );
  });
});
