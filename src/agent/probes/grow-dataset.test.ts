import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../../core/index.ts";
import { toRgb } from "../../models/image.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import { FileStore } from "../../store/files.node.ts";
import { EventLog } from "../events.ts";
import { growDataset, reversalMeta } from "./grow-dataset.ts";
import { objectName, parseScene } from "./scene.ts";

const cases = readFileSync(join(REPO_ROOT, "public/demo/tiny-lm.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as FailureCase)
  .slice(0, 60);
const noImages = async () => {
  throw new Error("a text case has no image");
};

describe("reversalMeta", () => {
  it("measures an operand as the forge's case_meta does (the demo's own columns)", () => {
    for (const c of cases) {
      const digits = c.input.prompt.split(" ").slice(1, -1).map(Number);
      expect(reversalMeta(digits), c.id).toEqual(
        Object.fromEntries(Object.keys(reversalMeta(digits)).map((k) => [k, c.meta[k]])),
      );
    }
  });
});

const haveModel = existsSync(join(REPO_ROOT, "models/tiny-lm/onnx/model.onnx"));

describe.skipIf(!haveModel)("growDataset on tiny-lm's reversal cases (onnxruntime-node, file store)", () => {
  let model: OrtModel;
  beforeAll(async () => {
    model = await loadModel("tiny-lm");
  }, 60_000);
  afterAll(async () => {
    await model?.dispose();
  });

  it("stores the failing variants with provenance, recomputed columns and expected answers by construction; reused on resume", async () => {
    const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-grow-text-")));
    const log = new EventLog({ runId: "grow-text", now: () => Date.UTC(2026, 11, 1) });
    const dataset = { id: "tiny-lm-demo", cases };
    const grown = await growDataset({ store, model, dataset, images: noImages, budget: 120, seed: 1 }, log);
    expect(grown.added).toBeGreaterThan(0);
    expect(grown.cases).toHaveLength(60 + grown.added);
    const event = log.events.find((e) => e.type === "probes.searched")!.payload as Record<string, unknown>;
    expect(event).toMatchObject({ kind: "text", kept: grown.added, budget: 120 });
    const stored = await store.cases(grown.id);
    const synthesized = stored.filter((c) => c.tags.includes("synthesized"));
    expect(synthesized).toHaveLength(grown.added);
    for (const c of synthesized) {
      const p = c.meta.provenance as { parent: string; family: string; operand: number[]; edit: string };
      const parent = cases.find((x) => x.id === p.parent)!;
      // The digits the instruction applies to are the words between `reverse` and `=` that are digits.
      const words = c.input.prompt.trim().split(/\s+/);
      const operand = words.slice(words.indexOf("reverse") + 1, -1).filter((w) => /^\d$/.test(w));
      expect(c.expected, `${c.id}: ${c.input.prompt}`).toBe(operand.reverse().join(" "));
      if (p.family !== "operand") expect(c.expected, c.id).toBe(parent.expected);
      expect(c.meta.length, c.id).toBe(p.operand.length);
      expect(c.cluster).toBe(parent.cluster);
      expect(c.input.image).toBeUndefined();
    }
    const again = new EventLog({ runId: "grow-text-2" });
    const reused = await growDataset({ store, model, dataset, images: noImages, budget: 120, seed: 1 }, again);
    expect(reused).toMatchObject({ id: grown.id, added: grown.added });
    expect(again.events.find((e) => e.type === "probes.searched")!.payload).toMatchObject({ reused: true });
  }, 60_000);

  it("says plainly when no case can be edited with a known answer, and probes the dataset as it is", async () => {
    const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-grow-none-")));
    const log = new EventLog({ runId: "grow-none" });
    const other = cases.map((c) => ({ ...c, input: { prompt: `sum ${c.input.prompt.slice(8)}` } }));
    const grown = await growDataset(
      { store, model, dataset: { id: "sums", cases: other }, images: noImages, budget: 50, seed: 1 },
      log,
    );
    expect(grown).toMatchObject({ id: "sums", added: 0 });
    expect(log.events.find((e) => e.type === "problem")!.payload).toMatchObject({ what: "probe search" });
    // Photo questions without object boxes: said plainly, since no photo edit's answer would be known.
    const photos = cases.slice(0, 5).map((c) => ({
      ...c,
      input: { prompt: "Is there a dog in the image?", image: "images/a.jpg" },
      expected: "yes",
    }));
    const again = new EventLog({ runId: "grow-photos" });
    await growDataset(
      { store, model, dataset: { id: "photos", cases: photos }, images: noImages, budget: 50, seed: 1 },
      again,
    );
    expect(String(again.events.find((e) => e.type === "problem")!.payload["why"])).toMatch(
      /the 5 photo questions give no object boxes \(meta.boxes: \[\{ label, x, y, w, h \}\] in pixels\), so crops, occlusions and pastes cannot apply/,
    );
  });
});

const haveVlm = existsSync(join(REPO_ROOT, "models/tiny-vlm/onnx/decoder_model_merged.onnx"));

describe.skipIf(!haveVlm)("growDataset on photos with object boxes (tiny-vlm, file store)", () => {
  it("stores the occlusions, crops and pastes the model fails, with their boxes after the edit", async () => {
    const demo = join(REPO_ROOT, "public/demo");
    // The demo scenes stand in for photos, their boxes given in meta.boxes as a photo dataset gives them.
    const photos = readFileSync(join(demo, "pope.jsonl"), "utf8")
      .trim()
      .split("\n")
      .slice(0, 40)
      .map((line) => {
        const c = JSON.parse(line) as FailureCase;
        const image = toRgb(new Uint8Array(readFileSync(join(demo, c.input.image!))));
        const boxes = parseScene(image).objects.map((o) => ({
          label: objectName(o),
          x: o.box.x,
          y: o.box.y,
          w: o.box.size,
          h: o.box.size,
        }));
        return {
          ...c,
          input: { prompt: c.input.prompt.replace(" ?", " in the image ?"), image: c.input.image! },
          meta: { boxes },
        };
      });
    const vlm = await loadModel("tiny-vlm");
    try {
      const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-grow-photo-")));
      const log = new EventLog({ runId: "grow-photo" });
      const images = async (ref: string) => new Uint8Array(readFileSync(join(demo, ref)));
      const grown = await growDataset(
        { store, model: vlm, dataset: { id: "photos", cases: photos }, images, budget: 60, seed: 1 },
        log,
      );
      expect(log.events.find((e) => e.type === "probes.searched")!.payload).toMatchObject({
        kind: "photo",
        kept: grown.added,
      });
      expect(grown.added).toBeGreaterThan(0);
      for (const c of grown.cases.filter((x) => x.tags.includes("synthesized"))) {
        const asked = /is there a (\w+ \w+) in the image/.exec(c.input.prompt)![1]!;
        const boxes = c.meta.boxes as { label: string }[];
        expect(c.expected, c.id).toBe(boxes.some((b) => b.label === asked) ? "yes" : "no");
        expect(await store.getImage(c.input.image!), c.id).toBeDefined();
      }
    } finally {
      await vlm.dispose();
    }
  }, 90_000);
});
