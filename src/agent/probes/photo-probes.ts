/**
 * Probe search for photos whose dataset gives object boxes: occlusions, crops
 * and pastes. Photos cannot be read back like the demo scenes, so the expected
 * answer follows from the boxes: an occlusion or a crop that removes every box
 * of the asked object makes it "no", a crop that keeps one whole, or a paste of
 * the asked object cut from another photo, makes it "yes"; an edit of another
 * object that does not touch the asked one's boxes keeps the answer.
 */
import type { Model } from "../../core/model.ts";
import { extractYesNo } from "../../core/yes-no.ts";
import type { RgbImage } from "../../models/image.ts";
import { JUDGE_PARAPHRASE_FAMILY } from "./judge-paraphrases.ts";
import type { ProbeFamily, Rng } from "./probe-search.ts";
import { searchFromSeeds, type SeedSearchResult, type SeedSearchSettings } from "./search-from-seeds.ts";
import { toPixels } from "./vlm-probes.ts";

/** One annotated object: its label and its box in pixels (`x`, `y` the top-left corner). */
export interface LabelledBox {
  readonly label: string;
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/** A seed: a yes/no existence question on a photo, with the photo's object boxes. */
export interface PhotoSeed {
  readonly id: string;
  readonly prompt: string;
  readonly image: RgbImage;
  readonly boxes: readonly LabelledBox[];
}

/** The edit, as recorded: what the expected answer is derived from. */
export type PhotoEdit =
  | { readonly kind: "occlude"; readonly rects: readonly Rect[] }
  | { readonly kind: "crop"; readonly rect: Rect }
  | { readonly kind: "paste"; readonly from: string; readonly label: string; readonly rect: Rect };

/** A judge's wording of the seed's question; the photo and its boxes are the seed's. */
export interface PhotoParaphrase {
  readonly kind: "paraphrase";
  readonly text: string;
  readonly by: "judge";
}

export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface SynthesizedPhotoCase {
  readonly id: string;
  readonly prompt: string;
  readonly image: RgbImage;
  /** Right by construction: "yes" exactly when a box of the asked object is left after the edit. */
  readonly expected: "yes" | "no";
  readonly answer: string;
  readonly provenance: {
    readonly synthesized: true;
    readonly parent: string;
    readonly family: string;
    readonly arm: string;
    readonly edit: PhotoEdit | PhotoParaphrase;
    /** The boxes of the edited photo (cut to a crop, less what an occluder or a paste covers whole). */
    readonly boxes: readonly LabelledBox[];
  };
}

export const PHOTO_FAMILIES: readonly ProbeFamily[] = [
  { name: "occlude", arms: ["asked", "other"] },
  { name: "crop", arms: ["without-asked", "around-asked"] },
  { name: "paste", arms: ["asked", "other"] },
];

/** The occluder's colour: flat mid grey. */
const OCCLUDER = 128;
/** Pixels added around an occluded box, so no edge of the object shows. */
const MARGIN = 2;
/** A crop keeps at least this share of each side. */
const MIN_CROP = 0.4;

const QUESTION = /^(?:<image>\s*)?is there an? (.+?)(?: in (?:the|this) (?:image|picture|photo))?\s*\?$/i;

/**
 * The object a yes/no existence question asks about, lower case, or undefined.
 *
 * @example askedObject("Is there a dog in the image?") // "dog"
 */
export function askedObject(prompt: string): string | undefined {
  const m = QUESTION.exec(prompt.trim());
  return m ? m[1]!.trim().toLowerCase() : undefined;
}

/**
 * A case's object boxes from `meta.boxes` (`[{ label, x, y, w, h }]`, pixels),
 * or the reason they are not usable.
 *
 * @example readBoxes({ boxes: [{ label: "dog", x: 4, y: 8, w: 20, h: 16 }] }, 64, 64) // { boxes: [...] }
 */
export function readBoxes(
  meta: Readonly<Record<string, unknown>>,
  width: number,
  height: number,
): { boxes?: LabelledBox[]; problem?: string } {
  const raw = meta["boxes"];
  if (!Array.isArray(raw)) return { problem: "meta.boxes is missing (expected [{ label, x, y, w, h }] in pixels)" };
  const boxes: LabelledBox[] = [];
  for (const [i, b] of raw.entries()) {
    const r = b as Record<string, unknown>;
    const [x, y, w, h] = [r["x"], r["y"], r["w"], r["h"]].map(Number) as [number, number, number, number];
    if (typeof r["label"] !== "string" || !r["label"].trim())
      return { problem: `meta.boxes[${i}].label: expected the object's name, got ${JSON.stringify(r["label"])}` };
    if (![x, y, w, h].every(Number.isFinite) || w < 1 || h < 1 || x < 0 || y < 0 || x + w > width || y + h > height)
      return {
        problem: `meta.boxes[${i}]: expected x, y, w, h inside the ${width}×${height} image with w, h ≥ 1, got ${JSON.stringify({ x: r["x"], y: r["y"], w: r["w"], h: r["h"] })}`,
      };
    boxes.push({ label: r["label"].trim().toLowerCase(), x, y, w, h });
  }
  return { boxes };
}

export interface PhotoProbeOptions extends SeedSearchSettings {
  readonly seeds: readonly PhotoSeed[];
  readonly model: Model;
  /** A judge's checked paraphrases of the seeds' questions, by the seed's prompt: with any, `judge-paraphrase` joins the families. */
  readonly judgeParaphrases?: ReadonlyMap<string, readonly string[]>;
}

export type PhotoProbeResult = SeedSearchResult<SynthesizedPhotoCase>;

/**
 * Which occlusions, crops and pastes of these photos does the model answer
 * wrongly? Asks the seeds once, then runs the probe tree (family, region,
 * seed) with the model as the verifier; every variant's expected answer
 * follows from the boxes after the edit, never from the model.
 *
 * @example
 * const r = await searchPhotoProbes({ seeds, model, budget: 400, seed: 1 }) // r.search.families: calls and failures per family
 */
export async function searchPhotoProbes(options: PhotoProbeOptions): Promise<PhotoProbeResult> {
  const seeds = options.seeds.map((s) => {
    const asked = askedObject(s.prompt);
    if (!asked)
      throw new RangeError(
        `searchPhotoProbes(): case ${s.id}: the prompt ${JSON.stringify(s.prompt)} is not "is there a <object> in the image ?"`,
      );
    return { ...s, asked };
  });
  if (seeds.length === 0) throw new RangeError("searchPhotoProbes(): needs at least one seed photo");
  // Patches to paste: every annotated object of every seed, cut from its photo.
  const patches = seeds.flatMap((s) => s.boxes.map((b) => ({ from: s.id, label: b.label, image: crop(s.image, b) })));
  const ask = async (prompt: string, image: RgbImage, expected: "yes" | "no") => {
    const answer = await options.model.generate({ prompt, image: toPixels(image) }, { maxNewTokens: 3 });
    return { answer, failed: extractYesNo(answer).answer !== expected };
  };
  let made = 0;
  return searchFromSeeds<SynthesizedPhotoCase>({
    ...options,
    families:
      options.families ??
      (options.judgeParaphrases?.size ? [...PHOTO_FAMILIES, JUDGE_PARAPHRASE_FAMILY] : PHOTO_FAMILIES),
    seedCount: seeds.length,
    askSeed: async (i) => {
      const s = seeds[i]!;
      return (await ask(s.prompt, s.image, s.boxes.some((b) => b.label === s.asked) ? "yes" : "no")).failed;
    },
    variant: (i, family, arm, rng) => {
      const s = seeds[i]!;
      const judged = options.judgeParaphrases?.get(s.prompt) ?? [];
      const wording =
        family === JUDGE_PARAPHRASE_FAMILY.name ? judged[rng.below(Math.max(1, judged.length))] : undefined;
      const v: { image: RgbImage; boxes: LabelledBox[]; edit: PhotoEdit | PhotoParaphrase } | undefined =
        family === JUDGE_PARAPHRASE_FAMILY.name
          ? wording !== undefined
            ? { image: s.image, boxes: [...s.boxes], edit: { kind: "paraphrase", text: wording, by: "judge" } }
            : undefined
          : photoVariant(s, s.asked, family, arm, rng, patches);
      if (!v) return undefined;
      return {
        id: `${s.id}~${family}-${arm}-${++made}`,
        prompt: wording ?? s.prompt,
        image: v.image,
        expected: v.boxes.some((b) => b.label === s.asked) ? "yes" : "no",
        answer: "",
        provenance: { synthesized: true, parent: s.id, family, arm, edit: v.edit, boxes: v.boxes },
      };
    },
    ask: (c) => ask(c.prompt, c.image, c.expected),
    // A rewording keeps the seed's photo, so the same wording of the same seed is the same case.
    identity: (c) => (c.provenance.edit.kind === "paraphrase" ? `${c.provenance.parent}\n${c.prompt}` : undefined),
  });
}

const intersects = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const covers = (a: Rect, b: Rect) => a.x <= b.x && a.y <= b.y && a.x + a.w >= b.x + b.w && a.y + a.h >= b.y + b.h;

/**
 * One edited photo, its boxes after the edit and the edit, or undefined when
 * the edit does not apply (no asked object to occlude, no room for a crop).
 *
 * @example photoVariant(seed, "dog", "occlude", "asked", rng, patches)?.boxes // the boxes less the dog's
 */
export function photoVariant(
  s: PhotoSeed,
  asked: string,
  family: string,
  arm: string,
  rng: Rng,
  patches: readonly { from: string; label: string; image: RgbImage }[],
): { image: RgbImage; boxes: LabelledBox[]; edit: PhotoEdit } | undefined {
  const { width, height } = s.image;
  const mine = s.boxes.filter((b) => b.label === asked);
  const others = s.boxes.filter((b) => b.label !== asked);
  const pick = <T>(xs: readonly T[]): T | undefined => (xs.length ? xs[rng.below(xs.length)] : undefined);
  const grow = (b: Rect): Rect => {
    const x = Math.max(0, b.x - MARGIN);
    const y = Math.max(0, b.y - MARGIN);
    return { x, y, w: Math.min(width, b.x + b.w + MARGIN) - x, h: Math.min(height, b.y + b.h + MARGIN) - y };
  };
  switch (`${family}:${arm}`) {
    case "occlude:asked":
    case "occlude:other": {
      let rects: Rect[];
      if (arm === "asked") rects = mine.map(grow);
      else {
        const b = pick(others.filter((o) => !mine.some((m) => intersects(grow(o), m))));
        rects = b ? [grow(b)] : [];
      }
      if (rects.length === 0) return undefined;
      const image = { width, height, rgb: Uint8Array.from(s.image.rgb) };
      for (const r of rects) fill(image, r, OCCLUDER);
      const boxes = s.boxes.filter((b) => !rects.some((r) => covers(r, b)));
      return { image, boxes, edit: { kind: "occlude", rects } };
    }
    case "crop:without-asked":
    case "crop:around-asked": {
      const target = arm === "around-asked" ? pick(mine) : undefined;
      if (arm === "around-asked" && !target) return undefined;
      for (let attempt = 0; attempt < 30; attempt++) {
        const w = Math.max(target?.w ?? 0, Math.round(width * (MIN_CROP + (1 - MIN_CROP) * rng.unit())));
        const h = Math.max(target?.h ?? 0, Math.round(height * (MIN_CROP + (1 - MIN_CROP) * rng.unit())));
        if (w >= width && h >= height) continue;
        const lo = (t: number | undefined, tw: number, side: number, size: number) =>
          t === undefined ? [0, side - size] : [Math.max(0, t + tw - size), Math.min(t, side - size)];
        const [x0, x1] = lo(target?.x, target?.w ?? 0, width, w) as [number, number];
        const [y0, y1] = lo(target?.y, target?.h ?? 0, height, h) as [number, number];
        if (x1 < x0 || y1 < y0) continue;
        const rect = { x: x0 + rng.below(x1 - x0 + 1), y: y0 + rng.below(y1 - y0 + 1), w, h };
        if (arm === "without-asked" && mine.some((m) => intersects(rect, m))) continue;
        const boxes = s.boxes.filter((b) => intersects(rect, b)).map((b) => clip(b, rect));
        return { image: crop(s.image, rect), boxes, edit: { kind: "crop", rect } };
      }
      return undefined;
    }
    case "paste:asked":
    case "paste:other": {
      if (arm === "asked" && mine.length > 0) return undefined;
      const patch = pick(
        patches.filter(
          (p) =>
            p.from !== s.id &&
            (arm === "asked" ? p.label === asked : p.label !== asked) &&
            p.image.width <= width * 0.6 &&
            p.image.height <= height * 0.6,
        ),
      );
      if (!patch) return undefined;
      for (let attempt = 0; attempt < 20; attempt++) {
        const rect = {
          x: rng.below(width - patch.image.width + 1),
          y: rng.below(height - patch.image.height + 1),
          w: patch.image.width,
          h: patch.image.height,
        };
        // Pasting another object over the asked one would hide it: not an edit that keeps the answer.
        if (arm === "other" && mine.some((m) => intersects(rect, m))) continue;
        const image = { width, height, rgb: Uint8Array.from(s.image.rgb) };
        paste(image, patch.image, rect);
        const boxes = [...s.boxes.filter((b) => !covers(rect, b)), { label: patch.label, ...rect }];
        return { image, boxes, edit: { kind: "paste", from: patch.from, label: patch.label, rect } };
      }
      return undefined;
    }
    default:
      throw new RangeError(
        `searchPhotoProbes(): no edit '${family}:${arm}'; families are ${JSON.stringify(PHOTO_FAMILIES)}`,
      );
  }
}

function clip(b: LabelledBox, r: Rect): LabelledBox {
  const x = Math.max(b.x, r.x);
  const y = Math.max(b.y, r.y);
  return {
    label: b.label,
    x: x - r.x,
    y: y - r.y,
    w: Math.min(b.x + b.w, r.x + r.w) - x,
    h: Math.min(b.y + b.h, r.y + r.h) - y,
  };
}

function crop(image: RgbImage, r: Rect): RgbImage {
  const rgb = new Uint8Array(r.w * r.h * 3);
  for (let y = 0; y < r.h; y++)
    rgb.set(
      image.rgb.subarray(3 * ((r.y + y) * image.width + r.x), 3 * ((r.y + y) * image.width + r.x + r.w)),
      3 * y * r.w,
    );
  return { width: r.w, height: r.h, rgb };
}

function fill(image: { width: number; rgb: Uint8Array }, r: Rect, level: number): void {
  for (let y = r.y; y < r.y + r.h; y++)
    image.rgb.fill(level, 3 * (y * image.width + r.x), 3 * (y * image.width + r.x + r.w));
}

function paste(image: { width: number; rgb: Uint8Array }, patch: RgbImage, r: Rect): void {
  for (let y = 0; y < r.h; y++)
    image.rgb.set(
      patch.rgb.subarray(3 * y * patch.width, 3 * (y + 1) * patch.width),
      3 * ((r.y + y) * image.width + r.x),
    );
}
