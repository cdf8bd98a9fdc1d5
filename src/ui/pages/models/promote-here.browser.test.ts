import { deleteDB } from "idb";
import { afterEach, describe, expect, it } from "vitest";
import { LineageDb } from "../../../agent/lineage/lineage-db.browser.ts";
import type { Report, ReportRepair } from "../../../report/schema.ts";
import { ModelFolders } from "../../app/model-folders.ts";
import { promoteHere } from "./promote-here.ts";

const DB = "evalrx-promote-here-test";
const CACHE = "evalrx-promote-here-test";

/** A validated repair row as M5 writes it into a report (the fields `promote` reads). */
function row(tier: string, signature: string, candidate: string): ReportRepair {
  return {
    tier,
    candidate,
    signature,
    description: candidate,
    validated: true,
    n: 120,
    baselineFailures: 60,
    candidateFailures: 20,
    fixed: 42,
    broken: 2,
    delta: -40 / 120,
    p: 1e-6,
    e: 40,
    gamma: 0.0125,
    test: "cluster sign-flip",
    unit: "scene",
    eMethod: "e = 1/γ·1{p ≤ γ}",
    control: { fixed: 30, broken: 4, p: 1e-4, e: 40, beaten: true },
  } as unknown as ReportRepair;
}

/** A complete investigation of tiny-vlm whose M5 validated an L4 head adapter (merged folder kept in the page) and an L3b write. */
function report(weights: string): Report {
  return {
    kind: "investigate",
    runId: "inv-7",
    complete: true,
    provenance: {
      model: { key: "tiny-vlm" },
      data: { source: "pope.jsonl", fingerprint: "0c62da0605d0", n: 600 },
    },
    repairs: {
      candidates: [
        { ...row("L4", "lora:lm_head:r4:a8:steps300:seed1", "LoRA head adapter (rank 4)"), training: { weights } },
        row("L3b", "attention-bias:image:2", "attention +2 on image tokens"),
      ],
    },
  } as unknown as Report;
}

const text = async (blob: Blob | undefined) => (blob ? await blob.text() : undefined);

afterEach(async () => {
  await deleteDB(DB);
  await caches.delete(CACHE);
});

describe("promoteHere (real IndexedDB and Cache Storage)", () => {
  it("moves an L4 repair's merged folder to the promoted id, so the name the model loads under (files:<id>) finds its files after a reload", async () => {
    const folders = new ModelFolders(CACHE);
    const run = "tiny-vlm+lora-lm_head-r4-a8-steps300-seed1@inv-7";
    await folders.save(run, [
      { path: "config.json", file: new Blob(['{"model_type":"tiny-vlm"}']) },
      { path: "onnx/lm_head.onnx", file: new Blob(["merged head"]) },
    ]);
    const db = await LineageDb.open(DB);
    const record = await promoteHere(
      report(`files:${run}`),
      "lora:lm_head:r4:a8:steps300:seed1",
      { records: [], add: (r) => db.add(r), folders },
      { weights: `files:${run}` },
    );
    db.close();
    const id = "tiny-vlm+lora-lm_head-r4-a8-steps300-seed1";
    expect(record.id).toBe(id);
    expect(record.weights).toBe(`files:${id}`);

    // A reload: a new store handle and the lineage read back. The page loads the promoted model as
    // { kind: "files", key: <id> }, recorded as files:<id>; resuming a run on it reads the folder of that name.
    const again = await LineageDb.open(DB);
    const [stored] = (await again.read()).records;
    again.close();
    expect(stored!.weights).toBe(`files:${id}`);
    const files = await new ModelFolders(CACHE).files(id);
    expect([...files.keys()]).toEqual(["config.json", "onnx/lm_head.onnx"]);
    expect(await text(files.get("onnx/lm_head.onnx"))).toBe("merged head");
    // The run's copy is gone: one folder per promoted model on the Models page.
    expect((await folders.list()).map((f) => f.name)).toEqual([id]);
  });

  it("refuses an id a promoted model or a kept folder holds, writing nothing; a repair without a kept folder adds its record only", async () => {
    const folders = new ModelFolders(CACHE);
    const run = "tiny-vlm+lora-lm_head-r4-a8-steps300-seed1@inv-7";
    const id = "tiny-vlm+lora-lm_head-r4-a8-steps300-seed1";
    await folders.save(run, [{ path: "config.json", file: new Blob(["{}"]) }]);
    await folders.save(id, [{ path: "config.json", file: new Blob(["a folder the user added"]) }]);
    const db = await LineageDb.open(DB);
    const place = { records: [], add: (r: Parameters<LineageDb["add"]>[0]) => db.add(r), folders };
    const signature = "lora:lm_head:r4:a8:steps300:seed1";
    await expect(promoteHere(report(`files:${run}`), signature, place, { weights: `files:${run}` })).rejects.toThrow(
      `a model folder '${id}' is kept in this browser already; remove it on the Models page`,
    );
    expect(await text((await folders.files(id)).get("config.json"))).toBe("a folder the user added");
    expect((await db.read()).records).toEqual([]);

    const l3b = await promoteHere(report(`files:${run}`), "attention-bias:image:2", place);
    expect(l3b).toMatchObject({ id: "tiny-vlm+attention-bias-image-2", weights: "tiny-vlm" });
    await expect(
      promoteHere(report(`files:${run}`), "attention-bias:image:2", { ...place, records: [l3b] }),
    ).rejects.toThrow("a promoted model 'tiny-vlm+attention-bias-image-2' exists already in this browser");
    expect((await folders.list()).map((f) => f.name).sort()).toEqual([id, run].sort());
    db.close();
  });
});
