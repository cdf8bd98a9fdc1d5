import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureOrtWasm } from "../src/models/ort-env.browser.ts";
import { loadOrtModel, type OrtModel } from "../src/models/ort-model.ts";
import { fetchFiles, webSessions } from "../src/models/ort-session.browser.ts";
import { getSpec } from "../src/models/specs/index.ts";
import { startModelHelper, type ModelHelper } from "./model-helper.ts";
import { modelPool } from "./model-pool.ts";

const readDemo = async (path: string) => new Uint8Array(await (await fetch(`/demo/${path}`)).arrayBuffer());

/** Every 40th demo case: prompt and image bytes. */
async function demoInputs(): Promise<{ prompt: string; image: Uint8Array }[]> {
  const lines = (await (await fetch("/demo/pope.jsonl")).text()).trim().split("\n");
  return Promise.all(
    lines
      .filter((_, i) => i % 40 === 0)
      .map(async (line) => {
        const c = JSON.parse(line) as { input: { prompt: string; image: string } };
        return { prompt: c.input.prompt, image: await readDemo(c.input.image) };
      }),
  );
}

describe("a helper model worker (the investigation's second copy of the model)", () => {
  const spec = getSpec("tiny-vlm")!;
  const where = new URL(`/${spec.source}/`, location.origin).href;
  let local: OrtModel;
  let helper: ModelHelper;
  const deaths: string[] = [];
  beforeAll(async () => {
    configureOrtWasm("/");
    local = await loadOrtModel(fetchFiles(where), webSessions("wasm"), { spec, key: spec.key, source: where });
    helper = await startModelHelper({ files: fetchFiles(where), spec, key: spec.key, source: where }, (reason) =>
      deaths.push(reason),
    );
  });
  afterAll(async () => {
    await helper?.close();
    await local?.dispose();
  });

  it("loads the model from the files this side reads, and answers and reads internals exactly as this copy does", async () => {
    const inputs = await demoInputs();
    for (const input of inputs) {
      expect(await helper.model.generate(input, { maxNewTokens: 8 })).toBe(
        await local.generate(input, { maxNewTokens: 8 }),
      );
      // The attention bias (L3b) runs the edited decoder, which the helper reads again through this side.
      const bias = { positions: "image" as const, value: 2 };
      expect(await helper.model.generate(input, { maxNewTokens: 8, attentionBias: bias })).toBe(
        await local.generate(input, { maxNewTokens: 8, attentionBias: bias }),
      );
      const capture = { answer: "yes", reductions: ["rollout" as const, "tokenLogprob" as const], logitsAt: [-1] };
      const [mine, theirs] = [await local.forward(input, capture), await helper.model.forward(input, capture)];
      expect(Array.from(theirs.reductions.rollout!.data)).toEqual(Array.from(mine.reductions.rollout!.data));
      expect(Array.from(theirs.logits!.values)).toEqual(Array.from(mine.logits!.values));
    }
    expect(deaths).toEqual([]);
  });

  it("in a pool with this copy, answers calls in flight side by side with the same answers as this copy alone", async () => {
    const inputs = await demoInputs();
    const pool = modelPool(local);
    pool.add(helper.model);
    const alone = [];
    for (const input of inputs) alone.push(await local.generate(input, { maxNewTokens: 8 }));
    const pooled = await Promise.all(inputs.map((input) => pool.model.generate(input, { maxNewTokens: 8 })));
    expect(pooled).toEqual(alone);
    const [mine, theirs] = pool.answered();
    expect(mine! + theirs!).toBe(inputs.length);
    expect(theirs).toBeGreaterThan(0);
  });

  it("refuses a folder with no model as the model worker does (the missing file crosses as MissingFileError)", async () => {
    await expect(
      startModelHelper(
        {
          files: fetchFiles(new URL("/models/no-such-model/", location.origin).href),
          spec,
          key: "x",
          source: "nowhere",
        },
        () => undefined,
      ),
    ).rejects.toThrow("nowhere has no config.json: not a model folder");
  });
});
