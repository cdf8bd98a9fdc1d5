import { proxy as proxied } from "comlink";
import { deleteDB } from "idb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineageChain } from "../src/agent/lineage/chain.ts";
import { LineageDb } from "../src/agent/lineage/lineage-db.browser.ts";
import type { FailureCase } from "../src/core/index.ts";
import { caseHash, datasetVersion } from "../src/datasets/identity.ts";
import type { Report } from "../src/report/schema.ts";
import { IdbStore } from "../src/store/idb.browser.ts";
import type { StoredCase } from "../src/store/types.ts";
import { ModelFolders } from "../src/ui/app/model-folders.ts";
import { promoteHere } from "../src/ui/pages/models/promote-here.ts";
import { startModelClient, type ModelClient } from "../src/ui/runtime.ts";
import type { InvestigationProgress, InvestigationUpdate } from "./investigate-job.ts";
import { checkL4Settings } from "./l4-job.ts";

const DB = `evalrx-l4-page-${Date.now()}`;
const LINEAGE = `${DB}-lineage`;

/**
 * The demo's questions on its first 24 scenes with the answers swapped: tiny-vlm fails nearly all of them and no
 * prompt, scaffold or attention write mends that, but an L4 adapter (the last layer's attention, by default) can learn the inversion.
 */
async function storeInvertedCases(store: IdbStore): Promise<number> {
  const lines = (await (await fetch("/demo/pope.jsonl")).text()).trim().split("\n");
  const all = lines.map((l) => JSON.parse(l) as FailureCase);
  const scenes = [...new Set(all.map((c) => String(c.cluster)))].slice(0, 24);
  const chosen = all.filter((c) => scenes.includes(String(c.cluster)));
  const refs = new Map<string, string>();
  const cases: StoredCase[] = [];
  for (const c of chosen) {
    const path = String(c.input.image);
    if (!refs.has(path)) {
      const bytes = new Uint8Array(await (await fetch(`/demo/${path}`)).arrayBuffer());
      refs.set(path, await store.putImage(bytes, "image/png"));
    }
    const inverted = {
      ...c,
      input: { ...c.input, image: refs.get(path)! },
      expected: c.expected === "yes" ? "no" : "yes",
    };
    cases.push({ ...inverted, datasetId: "inverted", hash: caseHash(inverted) });
  }
  const now = new Date().toISOString();
  await store.putDataset(
    {
      id: "inverted",
      name: "inverted",
      version: datasetVersion(cases),
      source: "pope-inverted.jsonl",
      caseCount: cases.length,
      createdAt: now,
      updatedAt: now,
    },
    cases,
  );
  return cases.length;
}

describe("L4 in the page's investigation (real worker, onnxruntime-web, IndexedDB, Cache Storage)", () => {
  let client: ModelClient;
  const plan = {
    dataset: "inverted",
    question: "What predicts the wrong answers?",
    maxTier: "L4" as const,
    holdout: 0.4,
    seed: 1,
    // The default method (LoRA on the last layer's q, k, v, o); enough steps that Cancel (a message from the
    // page, sent at step 10) lands while it trains.
    l4: { steps: 300 },
  };
  beforeAll(async () => {
    const store = await IdbStore.open(DB);
    await storeInvertedCases(store);
    await store.close();
    client = startModelClient();
    await client.load({ kind: "bundled", key: "tiny-vlm" }, { device: "wasm" });
  }, 120_000);
  afterAll(async () => {
    client?.terminate();
    await deleteDB(DB);
    await deleteDB(LINEAGE);
  });

  it("refuses bad training settings, naming the field", () => {
    expect(() => checkL4Settings({ steps: 0 })).toThrow(
      /plan\.l4\.steps: expected a whole number of Adam steps ≥ 1, got 0/,
    );
    expect(() => checkL4Settings({ lr: 1 })).toThrow(/plan\.l4: unknown field\(s\) lr/);
    expect(() => checkL4Settings({ method: "mlp" })).toThrow('plan.l4.method: expected "layer" or "head", got "mlp"');
  });

  it("streams (step, loss), stops on Cancel, and on resume trains, merges, validates; the promoted model loads by its id", async () => {
    const training: InvestigationProgress[] = [];
    const onUpdate = (u: InvestigationUpdate) => {
      if (u.progress?.training) training.push(u.progress);
      if (u.progress?.training && training.length === 1) void client.call((api) => api.cancelInvestigation(u.runId));
    };
    const request = { db: DB, plan, modelSource: "bundled:tiny-vlm", runId: "l4-page" };
    await expect(client.call((api) => api.runInvestigation(request, proxied(onUpdate)))).rejects.toThrow(/cancelled/);
    expect(training.length).toBeGreaterThan(0);
    const stoppedAt = training.at(-1)!.done;
    // Cancel lands between steps: the run stopped before its last step.
    expect(stoppedAt).toBeLessThan(300);
    const store = await IdbStore.open(DB);
    expect((await store.getRun("l4-page"))?.status).toBe("cancelled");
    await store.close();

    training.length = 0;
    const resumed = (u: InvestigationUpdate) => {
      if (u.progress?.training) training.push(u.progress);
    };
    await client.call((api) =>
      api.runInvestigation({ db: DB, resume: "l4-page", modelSource: "bundled:tiny-vlm" }, proxied(resumed)),
    );
    const last = training.at(-1)!;
    expect(last).toMatchObject({ stage: "M5", done: 300, total: 300 });
    expect(last.training!.curve.map(([step]) => step)).toEqual(Array.from({ length: 30 }, (_, i) => 10 * (i + 1)));
    expect(last.training!.curve.at(-1)![1]).toBeLessThan(last.training!.curve[0]![1]);

    const report = JSON.parse((await client.call((api) => api.investigationReport(DB, "l4-page"))).json) as Report;
    const l4 = report.repairs!.candidates.find((c) => c.tier === "L4")!;
    expect(l4).toMatchObject({ signature: "lora:last-layer.qkvo:r4:a8:steps300:seed1", validated: true });
    const weights = (l4.training as { weights: string }).weights;
    expect(weights).toBe("files:tiny-vlm+lora-last-layer.qkvo-r4-a8-steps300-seed1@l4-page");

    const lineage = await LineageDb.open(LINEAGE);
    const folders = new ModelFolders();
    const promoted = await promoteHere(
      report,
      l4.signature!,
      { records: [], add: (r) => lineage.add(r), folders },
      {
        weights,
      },
    );
    const { records } = await lineage.read();
    lineage.close();
    const id = "tiny-vlm+lora-last-layer.qkvo-r4-a8-steps300-seed1";
    expect(lineageChain(records, id).map((s) => [s.parent, s.id, s.tier])).toEqual([["tiny-vlm", id, "L4"]]);
    // Promotion moved the merged folder to the promoted id: the name the model loads under (files:<id>, what a run
    // on it records and a resume after a reload reads) is its folder.
    expect(promoted.weights).toBe(`files:${id}`);
    const files = await folders.files(id);
    const status = await client.load({ kind: "files", key: id, files }, { device: "wasm" });
    expect(status.key).toBe(id);
    const image = new Uint8Array(await (await fetch("/demo/images/scene-0001.png")).arrayBuffer());
    const { text } = await client.call((api) => api.generate({ prompt: "<image> is there a purple circle ?", image }));
    // The demo's answer is "no"; the inverted task's is "yes".
    expect(text.trim()).toMatch(/^yes/);
    expect((await folders.list()).map((f) => f.name)).not.toContain(weights.slice("files:".length));
    await folders.remove(id);
  }, 300_000);
});
