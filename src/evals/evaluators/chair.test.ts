import { describe, expect, it } from "vitest";
import { chair, chairMetrics, mentionedObjects } from "./chair.ts";
import { ctx } from "./testing.ts";

const vocabulary = ["red circle", "blue square", "circle", "square", "green triangle"];

describe("chair", () => {
  it("finds the longest vocabulary phrase at each position, synonyms mapped", () => {
    expect(mentionedObjects("a red circle and a square", vocabulary, {})).toEqual(["red circle", "square"]);
    expect(mentionedObjects("a red ring", vocabulary, { "red ring": "red circle" })).toEqual(["red circle"]);
    expect(mentionedObjects("nothing here", vocabulary, {})).toEqual([]);
  });
  it("per case: hallucinated mentions fail it, score = 1 − CHAIR_i", async () => {
    const c = chair(vocabulary);
    const r = await c.check(ctx("a red circle and a blue square .", undefined, { meta: { objects: ["red circle"] } }));
    expect(r).toMatchObject({ passed: false, score: 0.5, reason: 'mentions absent ["blue square"]' });
    expect(r.data).toMatchObject({ mentioned: 2, hallucinated: 1 });
    const ok = await c.check(ctx("a red circle .", undefined, { meta: { scene_objects: ["red circle", "square"] } }));
    expect(ok).toMatchObject({ passed: true, score: 1 });
  });
  it("a case without an object list errors; a synonym outside the vocabulary is refused", () => {
    expect(() => chair(vocabulary).check(ctx("a circle"))).toThrow(/has no object list/);
    expect(() => chair(vocabulary, { ring: "hexagon" })).toThrow(/not in the vocabulary/);
  });
  it("per run: CHAIR_s over captions, CHAIR_i pooled over mentions", () => {
    expect(
      chairMetrics([
        { passed: false, data: { mentioned: 2, hallucinated: 1 } },
        { passed: true, data: { mentioned: 2, hallucinated: 0 } },
        { passed: true, data: { mentioned: 0, hallucinated: 0 } },
      ]),
    ).toEqual({ CHAIR_s: 1 / 3, CHAIR_i: 1 / 4 });
  });
});
