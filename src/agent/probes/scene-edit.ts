import type { RgbImage } from "../../models/image.ts";
import { seededRng } from "../../stats/rng.ts";
import { COLOURS, parseScene, type Box, type Colour, type Scene, type SceneObject, type Shape } from "./scene.ts";

/** One edit of a demo scene; `object` indexes `scene.objects`. */
export type SceneEdit =
  | { readonly kind: "remove"; readonly object: number }
  | { readonly kind: "add"; readonly colour: Colour; readonly shape: Shape; readonly box: Box }
  | { readonly kind: "recolour"; readonly object: number; readonly colour: Colour }
  | { readonly kind: "move"; readonly object: number; readonly x: number; readonly y: number }
  | { readonly kind: "resize"; readonly object: number; readonly size: number }
  | { readonly kind: "background"; readonly level: number };

export interface EditedScene {
  readonly image: RgbImage;
  /** The scene the edit made, by construction (not read back from the pixels). */
  readonly scene: Scene;
}

/** The forge's background noise (±8) and object colour jitter (±18). */
const BACKGROUND_NOISE = 8;
const COLOUR_JITTER = 18;

/**
 * The scene with one edit applied, in pixels, and the objects it now holds.
 * Removing repaints an object's pixels with the canvas (and its noise);
 * adding, moving and resizing draw shapes as the forge does (PIL's ellipse,
 * inset rectangle and triangle); an edit that would overlap another object or
 * leave the canvas is refused (undefined), so the objects stay countable.
 * `seed` fixes the noise and jitter.
 *
 * @example editScene(image, scene, { kind: "remove", object: 0 }, 1)!.scene.objects.length // one fewer
 */
export function editScene(image: RgbImage, scene: Scene, edit: SceneEdit, seed: number): EditedScene | undefined {
  const rng = seededRng("editScene", seed);
  const noise = (spread: number) => (((rng.next() >>> 0) % (2 * spread + 1)) - spread) | 0;
  const rgb = new Uint8Array(image.rgb);
  const out: RgbImage = { width: image.width, height: image.height, rgb };
  const objects = [...scene.objects];
  const canvas = (p: number, level: number) => {
    const v = Math.max(0, Math.min(255, level + noise(BACKGROUND_NOISE)));
    rgb[3 * p] = rgb[3 * p + 1] = rgb[3 * p + 2] = v;
  };
  const erase = (o: SceneObject) => {
    for (const p of maskOf(o, image.width, image.height)) canvas(p, scene.background);
    // Anti-aliasing-free drawing leaves no fringe, but read-back boxes can be a pixel off: clear saturated leftovers.
    for (const p of boxPixels(o.box, image.width, image.height, 1)) if (saturated(rgb, p)) canvas(p, scene.background);
  };
  const draw = (o: SceneObject) => {
    const base = COLOURS[o.colour];
    const c = base.map((v) => Math.max(0, Math.min(255, v + noise(COLOUR_JITTER))));
    for (const p of maskOf(o, image.width, image.height)) rgb.set(c, 3 * p);
  };
  const fits = (o: SceneObject, except: number) =>
    o.box.x >= 0 &&
    o.box.y >= 0 &&
    o.box.x + o.box.size <= image.width &&
    o.box.y + o.box.size <= image.height &&
    objects.every((other, i) => i === except || apart(o.box, other.box));
  const object = "object" in edit ? objects[edit.object] : undefined;
  if ("object" in edit && !object) return undefined;
  switch (edit.kind) {
    case "remove":
      erase(object!);
      objects.splice(edit.object, 1);
      break;
    case "add": {
      const added = { colour: edit.colour, shape: edit.shape, box: edit.box };
      if (!fits(added, -1) || edit.box.size < 10) return undefined;
      draw(added);
      objects.push(added);
      break;
    }
    case "recolour": {
      if (edit.colour === object!.colour) return undefined;
      const recoloured = { ...object!, colour: edit.colour };
      erase(object!);
      draw(recoloured);
      objects[edit.object] = recoloured;
      break;
    }
    case "move":
    case "resize": {
      const moved: SceneObject =
        edit.kind === "move"
          ? { ...object!, box: { ...object!.box, x: edit.x, y: edit.y } }
          : {
              ...object!,
              box: {
                x: object!.box.x + Math.floor((object!.box.size - edit.size) / 2),
                y: object!.box.y + Math.floor((object!.box.size - edit.size) / 2),
                size: edit.size,
              },
            };
      if (!fits(moved, edit.object) || moved.box.size < 10) return undefined;
      erase(object!);
      draw(moved);
      objects[edit.object] = moved;
      break;
    }
    case "background": {
      const level = Math.max(0, Math.min(255, Math.round(edit.level)));
      for (let p = 0; p < image.width * image.height; p++) if (!saturated(rgb, p)) canvas(p, level);
      return { image: out, scene: { ...scene, background: level, objects } };
    }
  }
  return { image: out, scene: { ...scene, objects } };
}

/** The scene read back from the edited pixels: a check that the edit made what it says it made. */
export function rereadScene(edited: EditedScene): Scene {
  return parseScene(edited.image);
}

function saturated(rgb: Uint8Array, p: number): boolean {
  const r = rgb[3 * p]!;
  const g = rgb[3 * p + 1]!;
  const b = rgb[3 * p + 2]!;
  return Math.max(r, g, b) - Math.min(r, g, b) >= 60;
}

/** At least two pixels between boxes (the forge keeps one; two keeps read-back components apart). */
function apart(a: Box, b: Box): boolean {
  return a.x + a.size + 2 <= b.x || b.x + b.size + 2 <= a.x || a.y + a.size + 2 <= b.y || b.y + b.size + 2 <= a.y;
}

function* boxPixels(box: Box, width: number, height: number, margin = 0): Generator<number> {
  for (let y = Math.max(0, box.y - margin); y < Math.min(height, box.y + box.size + margin); y++)
    for (let x = Math.max(0, box.x - margin); x < Math.min(width, box.x + box.size + margin); x++) yield y * width + x;
}

/** The pixels PIL fills for the forge's shapes in an s×s box at (x, y). */
function maskOf(o: SceneObject, width: number, height: number): number[] {
  const { x, y, size: s } = o.box;
  const pixels: number[] = [];
  for (const p of boxPixels(o.box, width, height)) {
    const px = p % width;
    const py = (p - px) / width;
    let inside: boolean;
    if (o.shape === "circle") {
      const r = (s - 1) / 2;
      inside = ((px - x - r) / (r + 0.5)) ** 2 + ((py - y - r) / (r + 0.5)) ** 2 <= 1;
    } else if (o.shape === "square") {
      const m = Math.floor(s / 8);
      inside = px >= x + m && px <= x + s - 1 - m && py >= y + m && py <= y + s - 1 - m;
    } else {
      // Apex (x + (s−1)/2, y), base from (x, y + s − 1) to (x + s − 1, y + s − 1).
      const t = (py - y) / Math.max(1, s - 1);
      const half = ((s - 1) / 2) * t;
      inside = py <= y + s - 1 && Math.abs(px - (x + (s - 1) / 2)) <= half + 0.5;
    }
    if (inside) pixels.push(p);
  }
  return pixels;
}
