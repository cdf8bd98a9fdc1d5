import { describe, expect, it } from "vitest";
import type { CaptureOptions, GenerateOptions, Model, ModelInput, Trace } from "../src/core/model.ts";
import { getSpec } from "../src/models/specs/index.ts";
import { affinityKey, modelPool } from "./model-pool.ts";

/**
 * A copy of a model that answers after `ms` with its name and the prompt, and records what it ran and how many
 * calls it ran at once: what the pool's routing is judged by (the real copies are `model-helper.worker.ts`'s,
 * run by the investigate e2e).
 */
function copy(name: string, ms = 5) {
  const spec = getSpec("tiny-vlm")!;
  const ran: string[] = [];
  let open = 0;
  let most = 0;
  let fail: Error | undefined;
  const answer = async (input: ModelInput) => {
    most = Math.max(most, ++open);
    await new Promise((done) => setTimeout(done, ms));
    open--;
    if (fail) throw fail;
    ran.push(input.prompt);
    return `${name}:${input.prompt}`;
  };
  const model: Model = {
    spec,
    capabilities: spec.capabilities,
    generate: (input: ModelInput, _o?: GenerateOptions) => answer(input),
    forward: async (input: ModelInput, _c?: CaptureOptions) => ({ tokens: [await answer(input)] }) as unknown as Trace,
    dispose: async () => {},
  };
  return { model, ran, most: () => most, failWith: (e: Error) => (fail = e) };
}

const image = (seed: number) => Uint8Array.from({ length: 64 }, (_, i) => (i * 31 + seed * 7) & 0xff);

describe("modelPool", () => {
  it("without a helper, every call runs on the local copy, one at a time, in order", async () => {
    const local = copy("local");
    const pool = modelPool(local.model);
    const answers = await Promise.all(["a", "b", "c"].map((prompt) => pool.model.generate({ prompt })));
    expect(answers).toEqual(["local:a", "local:b", "local:c"]);
    expect(local.ran).toEqual(["a", "b", "c"]);
    expect(local.most()).toBe(1);
  });

  it("spreads calls in flight over two copies, each input on the copy its key names", async () => {
    const local = copy("local");
    const helper = copy("helper");
    const pool = modelPool(local.model);
    pool.add(helper.model);
    const inputs = Array.from({ length: 40 }, (_, i) => ({ prompt: `q${i}`, image: image(i % 7) }));
    const answers = await Promise.all(inputs.map((input) => pool.model.generate(input)));
    // Each call is answered once, with its own prompt, by the copy its key names.
    expect(answers.map((a) => a.split(":")[1])).toEqual(inputs.map((i) => i.prompt));
    expect(answers.map((a) => a.split(":")[0])).toEqual(
      // Five slots: the local copy owns two (its thread also runs the investigation), the helper three.
      inputs.map((i) => (affinityKey(i) % 5 < 2 ? "local" : "helper")),
    );
    expect(local.ran.length).toBeGreaterThan(5);
    expect(helper.ran.length).toBeGreaterThan(5);
    // The local copy answers one at a time; a helper is sent its calls at once and queues them in its worker.
    expect(local.most()).toBe(1);
    expect(helper.most()).toBe(helper.ran.length);
    expect(pool.answered()).toEqual([local.ran.length, helper.ran.length]);
  });

  it("sends an input asked again to the copy that answered it (which has its runs in memory)", async () => {
    const local = copy("local");
    const helper = copy("helper");
    const pool = modelPool(local.model);
    pool.add(helper.model);
    const inputs = Array.from({ length: 12 }, (_, i) => ({ prompt: `is there a cat ${i}?`, image: image(i) }));
    const first = await Promise.all(inputs.map((input) => pool.model.generate(input)));
    // Asked again later, one by one and with fresh copies of the bytes: the same copy each time.
    for (const [i, input] of inputs.entries())
      expect(await pool.model.generate({ prompt: input.prompt, image: Uint8Array.from(input.image) })).toBe(first[i]);
    expect(new Set(first.map((a) => a.split(":")[0]))).toEqual(new Set(["local", "helper"]));
  });

  it("answers the calls waiting for a copy that was taken out (its worker died) on the others", async () => {
    const local = copy("local");
    const helper = copy("helper", 20);
    const pool = modelPool(local.model);
    pool.add(helper.model);
    const calls = Array.from({ length: 6 }, (_, i) => pool.model.generate({ prompt: `q${i}`, image: image(i) }));
    helper.failWith(new Error("the helper model worker stopped: killed"));
    pool.remove(helper.model);
    const answers = await Promise.all(calls);
    expect(answers.every((a) => a.startsWith("local:"))).toBe(true);
    expect(answers.map((a) => a.split(":")[1])).toEqual(["q0", "q1", "q2", "q3", "q4", "q5"]);
  });

  it("passes a copy's own failure (a bad input) to the caller, and goes on", async () => {
    const local = copy("local");
    const pool = modelPool(local.model);
    local.failWith(new Error("the prompt is 90 tokens, over tiny-vlm's context length of 64: shorten it"));
    await expect(pool.model.generate({ prompt: "long" })).rejects.toThrow("over tiny-vlm's context length");
  });
});

describe("affinityKey", () => {
  it("is the same for equal inputs and differs when the image or the prompt does", () => {
    expect(affinityKey({ prompt: "is there a cat?", image: image(1) })).toBe(
      affinityKey({ prompt: "is there a cat?", image: Uint8Array.from(image(1)) }),
    );
    expect(affinityKey({ prompt: "x", image: image(1) })).not.toBe(affinityKey({ prompt: "x", image: image(2) }));
    expect(affinityKey({ prompt: "x", image: image(1) })).not.toBe(affinityKey({ prompt: "y", image: image(1) }));
    expect(affinityKey({ prompt: "abc" })).toBe(affinityKey({ prompt: "abc" }));
    expect(affinityKey({ prompt: "abc" })).not.toBe(affinityKey({ prompt: "abd" }));
    // Copies are picked by key % copies: about half of many inputs go to each of two.
    const odd = Array.from({ length: 200 }, (_, i) => affinityKey({ prompt: "q", image: image(i) }) % 2).filter(
      (k) => k === 1,
    ).length;
    expect(odd).toBeGreaterThan(70);
    expect(odd).toBeLessThan(130);
  });
});
