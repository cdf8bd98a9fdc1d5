import { describe, expect, it } from "vitest";
import { getSpec } from "../../models/specs/index.ts";
import type { ModelSource, ModelStatus } from "../../../workers/model.worker.ts";
import type { ModelFolders } from "./model-folders.ts";
import { ModelService } from "./model.svelte.ts";
import { Settings } from "./settings.svelte.ts";
import type { ModelClient } from "../runtime.ts";

const status = (key: string): ModelStatus => ({
  key,
  spec: getSpec(key)!,
  capabilities: ["generate"],
  attention: { kind: "exported" },
  choice: { device: "wasm", reason: "WASM was asked for" },
  backend: "ort",
  filesRead: [],
  fileHashes: {},
  fileBytes: {},
});

/** A model worker's client whose loads the test settles by hand; every other call stays pending. */
function fakeClient() {
  const loads: { source: ModelSource; settle: (outcome: ModelStatus | Error) => void }[] = [];
  const client = {
    call: () => new Promise(() => undefined),
    load: (source: ModelSource) =>
      new Promise<ModelStatus>((resolve, reject) =>
        loads.push({ source, settle: (o) => (o instanceof Error ? reject(o) : resolve(o)) }),
      ),
    onDeath: () => () => undefined,
  };
  return { client: client as unknown as ModelClient, loads };
}

function service() {
  const stored = new Map<string, string>();
  const storage = {
    getItem: (k: string) => stored.get(k) ?? null,
    setItem: (k: string, v: string) => void stored.set(k, v),
  };
  const folders = { list: async () => [] } as unknown as ModelFolders;
  const { client, loads } = fakeClient();
  return { models: new ModelService(new Settings(storage), client, storage, folders), loads };
}

const vlm: ModelSource = { kind: "bundled", key: "tiny-vlm" };
const lm: ModelSource = { kind: "bundled", key: "tiny-lm" };

describe("ModelService.ensure", () => {
  it("joins its own load in flight of the same model instead of starting another", async () => {
    const { models, loads } = service();
    const first = models.ensure(vlm); // a form preloading as it opens
    const second = models.ensure(vlm); // Start, clicked before the load ended
    expect(loads).toHaveLength(1);
    loads[0]!.settle(status("tiny-vlm"));
    expect(await first).toBe(await second);
    expect(models.loadedName).toBe("bundled:tiny-vlm");
    // Loaded: a later ensure loads nothing.
    await models.ensure(vlm);
    expect(loads).toHaveLength(1);
  });

  it("loads again after a failed load, rather than handing back the failure", async () => {
    const { models, loads } = service();
    const first = models.ensure(vlm);
    loads[0]!.settle(new Error("the worker ran out of memory"));
    await expect(first).rejects.toThrow("out of memory");
    const retry = models.ensure(vlm);
    expect(loads).toHaveLength(2);
    loads[1]!.settle(status("tiny-vlm"));
    expect((await retry).key).toBe("tiny-vlm");
  });

  it("starts a new load for another model, and does not join a load that a newer one superseded", async () => {
    const { models, loads } = service();
    const first = models.ensure(vlm);
    const other = models.ensure(lm); // newest wins: the first load's result is dropped
    expect(loads.map((l) => l.source)).toEqual([vlm, lm]);
    const again = models.ensure(vlm); // the tiny-vlm load in flight was superseded: a new one
    expect(loads.map((l) => l.source)).toEqual([vlm, lm, vlm]);
    loads[0]!.settle(status("tiny-vlm"));
    loads[1]!.settle(status("tiny-lm"));
    loads[2]!.settle(status("tiny-vlm"));
    await expect(first).rejects.toThrow("superseded");
    await expect(other).rejects.toThrow("superseded");
    expect((await again).key).toBe("tiny-vlm");
    expect(models.loadedName).toBe("bundled:tiny-vlm");
  });
});
