/**
 * The bundled demo scenes as objects: a few flat-coloured shapes (circle,
 * square, triangle in five colours) on a noisy light-grey canvas, as the forge
 * draws them (`models/forge/scenes.py`). Reading a scene back from its pixels
 * is what lets a scene edit know, by construction, what the edited image shows.
 */
import type { RgbImage } from "../../models/image.ts";

export const COLOURS = {
  red: [215, 40, 40],
  green: [40, 165, 60],
  blue: [45, 75, 215],
  yellow: [225, 195, 35],
  purple: [145, 55, 185],
} as const satisfies Record<string, readonly [number, number, number]>;
export type Colour = keyof typeof COLOURS;
export const COLOUR_NAMES = Object.keys(COLOURS) as Colour[];
export const SHAPES = ["circle", "square", "triangle"] as const;
export type Shape = (typeof SHAPES)[number];
/** The forge's co-occurrence pairs: each brings its partner along in training, the prior POPE's adversarial split tests. */
export const PARTNERS: Readonly<Record<string, string>> = {
  "red circle": "blue square",
  "blue square": "red circle",
  "green triangle": "yellow circle",
  "yellow circle": "green triangle",
  "purple square": "blue triangle",
  "blue triangle": "purple square",
};

export interface Box {
  readonly x: number;
  readonly y: number;
  /** The shape's side: the forge draws each shape in an s×s box. */
  readonly size: number;
}

export interface SceneObject {
  readonly colour: Colour;
  readonly shape: Shape;
  readonly box: Box;
}

export interface Scene {
  readonly width: number;
  readonly height: number;
  /** The canvas grey level (the median of the background pixels). */
  readonly background: number;
  readonly objects: readonly SceneObject[];
}

/** Objects are saturated; the canvas is grey (its channels within the forge's noise of each other). */
const MIN_CHROMA = 60;
/** Components smaller than this are noise, not objects (the forge's smallest shape covers about 40 pixels). */
const MIN_OBJECT_PIXELS = 15;

export function objectName(o: { colour: Colour; shape: Shape }): string {
  return `${o.colour} ${o.shape}`;
}

/**
 * What does this demo scene show? Its objects (colour, shape, box) and its
 * background level, read from the pixels: saturated pixels take the nearest
 * palette colour, 4-connected pixels of one colour form an object, and its
 * shape follows from how much of its box it fills (square ≈ 1, circle ≈ π/4,
 * triangle ≈ ½).
 *
 * @example parseScene(toRgb(png)).objects.map(objectName) // ["yellow triangle", "red circle"]
 */
export function parseScene(image: RgbImage): Scene {
  const { width, height, rgb } = image;
  if (rgb.length !== width * height * 3)
    throw new RangeError(`parseScene(): ${rgb.length} bytes are not a ${width}×${height} RGB image`);
  const colourAt = new Int8Array(width * height).fill(-1);
  const grey: number[] = [];
  for (let i = 0; i < width * height; i++) {
    const r = rgb[3 * i]!;
    const g = rgb[3 * i + 1]!;
    const b = rgb[3 * i + 2]!;
    if (Math.max(r, g, b) - Math.min(r, g, b) < MIN_CHROMA) {
      grey.push(Math.round((r + g + b) / 3));
      continue;
    }
    let best = 0;
    let bestDistance = Infinity;
    COLOUR_NAMES.forEach((name, c) => {
      const [cr, cg, cb] = COLOURS[name];
      const d = (r - cr) ** 2 + (g - cg) ** 2 + (b - cb) ** 2;
      if (d < bestDistance) {
        bestDistance = d;
        best = c;
      }
    });
    colourAt[i] = best;
  }
  const seen = new Uint8Array(width * height);
  const objects: SceneObject[] = [];
  const stack: number[] = [];
  for (let start = 0; start < width * height; start++) {
    if (colourAt[start] === -1 || seen[start]) continue;
    const colour = colourAt[start]!;
    let count = 0;
    let x0 = width;
    let y0 = height;
    let x1 = -1;
    let y1 = -1;
    stack.push(start);
    seen[start] = 1;
    while (stack.length > 0) {
      const p = stack.pop()!;
      count++;
      const x = p % width;
      const y = (p - x) / width;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
      for (const q of [x > 0 ? p - 1 : -1, x < width - 1 ? p + 1 : -1, p - width, p + width])
        if (q >= 0 && q < width * height && !seen[q] && colourAt[q] === colour) {
          seen[q] = 1;
          stack.push(q);
        }
    }
    if (count < MIN_OBJECT_PIXELS) continue;
    const w = x1 - x0 + 1;
    const h = y1 - y0 + 1;
    const fill = count / (w * h);
    const shape: Shape = fill > 0.9 ? "square" : fill > 0.66 ? "circle" : "triangle";
    // A square is drawn inset by size/8 in its box; give back the box the forge placed.
    const size = shape === "square" ? Math.round(Math.max(w, h) / (1 - 2 / 8)) : Math.max(w, h);
    const inset = shape === "square" ? Math.floor(size / 8) : 0;
    objects.push({ colour: COLOUR_NAMES[colour]!, shape, box: { x: x0 - inset, y: y0 - inset, size } });
  }
  grey.sort((a, b) => a - b);
  const background = grey.length > 0 ? grey[grey.length >> 1]! : 210;
  return { width, height, background, objects };
}
