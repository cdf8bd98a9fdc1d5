import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toRgb } from "../../models/image.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import { seededRng } from "../../stats/rng.ts";
import {
  askedObject,
  photoVariant,
  PHOTO_FAMILIES,
  readBoxes,
  searchPhotoProbes,
  type LabelledBox,
  type PhotoEdit,
  type PhotoParaphrase,
  type PhotoSeed,
  type Rect,
} from "./photo-probes.ts";
import { objectName, parseScene } from "./scene.ts";

// The demo scenes stand in for photos: their boxes are read once from the pixels, as a dataset would give them.
const demo = join(REPO_ROOT, "public/demo");
const seeds: PhotoSeed[] = readFileSync(join(demo, "pope.jsonl"), "utf8")
  .trim()
  .split("\n")
  .slice(0, 30)
  .map((line) => {
    const r = JSON.parse(line) as { id: string; input: { prompt: string; image: string } };
    const image = toRgb(new Uint8Array(readFileSync(join(demo, r.input.image))));
    const boxes = parseScene(image).objects.map((o) => ({
      label: objectName(o),
      x: o.box.x,
      y: o.box.y,
      w: o.box.size,
      h: o.box.size,
    }));
    return { id: r.id, prompt: r.input.prompt, image, boxes };
  });

const intersects = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const inside = (a: Rect, b: Rect) => a.x <= b.x && a.y <= b.y && a.x + a.w >= b.x + b.w && a.y + a.h >= b.y + b.h;

/** The answer the original boxes and the recorded edit give, worked out apart from the generator. */
function rederive(boxes: readonly LabelledBox[], asked: string, edit: PhotoEdit | PhotoParaphrase): string {
  const mine = boxes.filter((b) => b.label === asked);
  if (edit.kind === "paraphrase") return mine.length ? "yes" : "no";
  if (edit.kind === "occlude") return mine.some((b) => !edit.rects.some((r) => inside(r, b))) ? "yes" : "no";
  if (edit.kind === "crop") return mine.some((b) => intersects(edit.rect, b)) ? "yes" : "no";
  return edit.label === asked || mine.some((b) => !inside(edit.rect, b)) ? "yes" : "no";
}

describe("photo edits", () => {
  it("give the answer the boxes give after the edit, and the pixels agree where they can be read back", () => {
    const g = seededRng("photo-variants", 1);
    const unit = () => (g.next() >>> 0) / 2 ** 32;
    const rng = { unit, below: (n: number) => Math.min(n - 1, Math.floor(unit() * n)) };
    const patches = seeds.flatMap((s) =>
      s.boxes.map((b) => {
        const rgb = new Uint8Array(b.w * b.h * 3);
        for (let y = 0; y < b.h; y++)
          rgb.set(
            s.image.rgb.subarray(3 * ((b.y + y) * s.image.width + b.x), 3 * ((b.y + y) * s.image.width + b.x + b.w)),
            3 * y * b.w,
          );
        return { from: s.id, label: b.label, image: { width: b.w, height: b.h, rgb } };
      }),
    );
    const made: Record<string, number> = {};
    for (const s of seeds) {
      const asked = askedObject(s.prompt)!;
      for (const f of PHOTO_FAMILIES)
        for (const arm of f.arms) {
          const v = photoVariant(s, asked, f.name, arm, rng, patches);
          if (!v) continue;
          made[`${f.name}:${arm}`] = (made[`${f.name}:${arm}`] ?? 0) + 1;
          const expected = v.boxes.some((b) => b.label === asked) ? "yes" : "no";
          expect(expected, `${s.id} ${f.name}:${arm}`).toBe(rederive(s.boxes, asked, v.edit));
          if (arm === "asked") expect(expected, `${s.id} ${f.name}:${arm}`).toBe(f.name === "occlude" ? "no" : "yes");
          if (f.name !== "crop") {
            const shown = parseScene(v.image).objects.map(objectName);
            expect(shown.includes(asked) ? "yes" : "no", `${s.id} ${f.name}:${arm} shows ${shown.join(", ")}`).toBe(
              expected,
            );
          }
        }
    }
    expect(Object.keys(made).sort()).toEqual(PHOTO_FAMILIES.flatMap((f) => f.arms.map((a) => `${f.name}:${a}`)).sort());
  });

  it("reads boxes from meta.boxes and names a bad one", () => {
    expect(readBoxes({ boxes: [{ label: "Dog", x: 1, y: 2, w: 3, h: 4 }] }, 10, 10)).toEqual({
      boxes: [{ label: "dog", x: 1, y: 2, w: 3, h: 4 }],
    });
    expect(readBoxes({}, 10, 10).problem).toMatch(/meta.boxes is missing \(expected \[\{ label, x, y, w, h \}\]/);
    expect(readBoxes({ boxes: [{ label: "dog", x: 8, y: 0, w: 5, h: 2 }] }, 10, 10).problem).toMatch(
      /meta.boxes\[0\]: expected x, y, w, h inside the 10×10 image/,
    );
    expect(askedObject("Is there a traffic light in the image?")).toBe("traffic light");
  });
});

const haveModel = existsSync(join(REPO_ROOT, "models/tiny-vlm/onnx/decoder_model_merged.onnx"));

describe.skipIf(!haveModel)("searchPhotoProbes on tiny-vlm (onnxruntime-node)", () => {
  let model: OrtModel;
  beforeAll(async () => {
    model = await loadModel("tiny-vlm");
  }, 60_000);
  afterAll(async () => {
    await model?.dispose();
  });

  it("keeps the edits the model fails, each expected answer the one the boxes give", async () => {
    const r = await searchPhotoProbes({ seeds: seeds.slice(0, 20), model, budget: 100, seed: 1 });
    expect(r.seedCalls).toBe(20);
    expect(r.search.calls).toBe(80);
    expect(r.search.found).toHaveLength(r.search.failures);
    expect(r.search.failures).toBeGreaterThan(0);
    expect(r.search.families.every((f) => f.calls > 0)).toBe(true);
    for (const c of r.search.found) {
      const parent = seeds.find((s) => s.id === c.provenance.parent)!;
      expect(c.expected, c.id).toBe(rederive(parent.boxes, askedObject(c.prompt)!, c.provenance.edit));
    }
  }, 120_000);
});
