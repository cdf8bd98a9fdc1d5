import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toRgb } from "../../models/image.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import { editScene } from "./scene-edit.ts";
import { objectName, parseScene } from "./scene.ts";
import { searchSceneProbes, type SceneQuestion } from "./vlm-probes.ts";

const demo = join(REPO_ROOT, "public/demo");
const rows = readFileSync(join(demo, "pope.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map(
    (line) =>
      JSON.parse(line) as { id: string; input: { prompt: string; image: string }; meta: { scene_objects: string[] } },
  );
const image = (ref: string) => toRgb(new Uint8Array(readFileSync(join(demo, ref))));

describe("demo scenes", () => {
  it("are read back from their pixels as the forge made them, every one of the 100", () => {
    const seen = new Set<string>();
    for (const row of rows) {
      if (seen.has(row.input.image)) continue;
      seen.add(row.input.image);
      const objects = parseScene(image(row.input.image)).objects.map(objectName).sort();
      expect(objects, row.input.image).toEqual([...row.meta.scene_objects].sort());
    }
    expect(seen.size).toBe(100);
  });

  it("show after an edit exactly the objects the edit says (re-read from the pixels)", () => {
    let checked = 0;
    for (let s = 1; s <= 30; s++) {
      const img = image(`images/scene-${String(s).padStart(4, "0")}.png`);
      const scene = parseScene(img);
      for (const edit of [
        { kind: "remove", object: 0 },
        { kind: "recolour", object: 0, colour: scene.objects[0]!.colour === "red" ? "green" : "red" },
        { kind: "move", object: 0, x: (s * 13) % 30, y: (s * 5) % 30 },
        { kind: "resize", object: 0, size: 10 + (s % 9) },
        { kind: "background", level: 150 + 3 * s },
        { kind: "add", colour: "purple", shape: "triangle", box: { x: (s * 7) % 30, y: (s * 11) % 30, size: 14 } },
      ] as const) {
        const edited = editScene(img, scene, edit, s);
        if (!edited) continue;
        checked++;
        expect(parseScene(edited.image).objects.map(objectName).sort(), `scene ${s} ${edit.kind}`).toEqual(
          edited.scene.objects.map(objectName).sort(),
        );
      }
    }
    expect(checked).toBeGreaterThan(120);
  });
});

const haveModel = existsSync(join(REPO_ROOT, "models/tiny-vlm/onnx/decoder_model_merged.onnx"));

describe.skipIf(!haveModel)("searchSceneProbes on tiny-vlm (onnxruntime-node)", () => {
  let model: OrtModel;
  beforeAll(async () => {
    model = await loadModel("tiny-vlm");
  }, 60_000);
  afterAll(async () => {
    await model?.dispose();
  });

  it("finds variants the model fails more often than it fails the seeds, each answer right by construction", async () => {
    const seeds: SceneQuestion[] = rows
      .slice(0, 40)
      .map((r) => ({ id: r.id, prompt: r.input.prompt, image: image(r.input.image) }));
    const r = await searchSceneProbes({ seeds, model, budget: 240, seed: 1 });
    expect(r.seedCalls).toBe(40);
    expect(r.search.calls).toBe(200);
    expect(r.search.found.length).toBe(r.search.failures);
    expect(r.lift).toBeGreaterThan(1.5);
    for (const c of r.search.found) {
      const asked = /is there a (\w+ \w+) \?/.exec(c.prompt)![1]!;
      const shown = parseScene(c.image).objects.map(objectName);
      expect(shown.sort(), c.id).toEqual([...c.provenance.objects].sort());
      expect(c.expected, c.id).toBe(shown.includes(asked) ? "yes" : "no");
      expect(c.provenance).toMatchObject({ synthesized: true });
      expect(seeds.map((s) => s.id)).toContain(c.provenance.parent);
    }
  }, 120_000);

  it("names a seed whose question it cannot edit", async () => {
    await expect(
      searchSceneProbes({
        seeds: [{ id: "x", prompt: "describe the image .", image: image("images/scene-0001.png") }],
        model,
        budget: 1,
        seed: 1,
      }),
    ).rejects.toThrow(/case x: the prompt "describe the image ." is not "is there a <colour> <shape> \?"/);
  });
});
