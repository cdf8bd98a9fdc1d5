import type { ImagePixels, Model } from "../../core/model.ts";
import { extractYesNo } from "../../core/yes-no.ts";
import type { RgbImage } from "../../models/image.ts";
import { editScene, type SceneEdit } from "./scene-edit.ts";
import {
  COLOUR_NAMES,
  PARTNERS,
  SHAPES,
  objectName,
  parseScene,
  type Colour,
  type Scene,
  type Shape,
} from "./scene.ts";
import { JUDGE_PARAPHRASE_FAMILY } from "./judge-paraphrases.ts";
import type { ProbeFamily, Rng } from "./probe-search.ts";
import { searchFromSeeds, type SeedSearchResult, type SeedSearchSettings } from "./search-from-seeds.ts";

/** A seed: a yes/no existence question about a demo scene ("is there a red circle ?"). */
export interface SceneQuestion {
  readonly id: string;
  readonly prompt: string;
  readonly image: RgbImage;
}

/** What the search made and the model failed (or, for the seeds, answered). */
export interface SynthesizedCase {
  readonly id: string;
  readonly prompt: string;
  readonly image: RgbImage;
  /** Right by construction: "yes" exactly when the edited scene holds the asked object. */
  readonly expected: "yes" | "no";
  readonly answer: string;
  readonly provenance: {
    readonly synthesized: true;
    readonly parent: string;
    readonly family: string;
    readonly arm: string;
    /** A scene edit, or a rewording: a rule's template, or a judge's wording (`by: "judge"`) of the seed's question. */
    readonly edit: SceneEdit | { readonly kind: "paraphrase"; readonly template: string; readonly by?: "judge" };
    /** The objects the edited scene holds. */
    readonly objects: readonly string[];
  };
}

/** The edit families and their parameter regions, relative to the asked object. */
export const SCENE_FAMILIES: readonly ProbeFamily[] = [
  { name: "remove", arms: ["asked", "asked-beside-partner", "partner", "other"] },
  { name: "add", arms: ["asked", "partner", "partner-of-absent", "other"] },
  { name: "recolour", arms: ["asked", "into-asked", "other"] },
  { name: "move", arms: ["asked", "other"] },
  { name: "resize", arms: ["smaller", "larger"] },
  { name: "background", arms: ["darker", "lighter"] },
  { name: "paraphrase", arms: ["template"] },
];

/** Meaning-preserving rewordings in the bundled model's own vocabulary (`{o}` is the asked object). */
export const PARAPHRASES = [
  "is there the {o} ?",
  "there is a {o} ?",
  "the image , is there a {o} ?",
  "is there a {o} , yes or no ?",
];

const QUESTION = /^(<image>\s*)?is there a (\w+) (\w+) \?$/;

export interface VlmProbeOptions extends SeedSearchSettings {
  readonly seeds: readonly SceneQuestion[];
  readonly model: Model;
  /**
   * A judge's checked paraphrases of the seeds' questions (`judgeParaphrases`), by the seed's prompt: with any,
   * the family `judge-paraphrase` joins the default families.
   */
  readonly judgeParaphrases?: ReadonlyMap<string, readonly string[]>;
}

export type VlmProbeResult = SeedSearchResult<SynthesizedCase>;

/**
 * Which variants of these scene questions does the model get wrong? Asks the
 * seeds once, then runs {@link probeSearch} over scene edits and paraphrases
 * (the rules', and a judge's when given)
 * with the model as the verifier; every variant's expected answer follows from
 * the edit (removing the asked object makes it "no"), never from the model.
 *
 * @example
 * const r = await searchSceneProbes({ seeds, model, budget: 2000, seed: 1 }) // r.lift ≥ 3 on tiny-vlm
 */
export async function searchSceneProbes(options: VlmProbeOptions): Promise<VlmProbeResult> {
  const seeds = options.seeds.map((s) => {
    const m = QUESTION.exec(s.prompt.trim());
    if (!m)
      throw new RangeError(
        `searchSceneProbes(): case ${s.id}: the prompt ${JSON.stringify(s.prompt)} is not "is there a <colour> <shape> ?"`,
      );
    const colour = m[2] as Colour;
    const shape = m[3] as Shape;
    if (!COLOUR_NAMES.includes(colour) || !SHAPES.includes(shape))
      throw new RangeError(
        `searchSceneProbes(): case ${s.id}: '${colour} ${shape}' is not an object of the demo scenes`,
      );
    return { ...s, asked: { colour, shape }, scene: parseScene(s.image) };
  });
  if (seeds.length === 0) throw new RangeError("searchSceneProbes(): needs at least one seed question");
  const ask = async (prompt: string, image: RgbImage, expected: "yes" | "no") => {
    const answer = await options.model.generate({ prompt, image: toPixels(image) }, { maxNewTokens: 3 });
    return { answer, failed: extractYesNo(answer).answer !== expected };
  };
  let made = 0;
  return searchFromSeeds<SynthesizedCase>({
    ...options,
    families:
      options.families ??
      (options.judgeParaphrases?.size ? [...SCENE_FAMILIES, JUDGE_PARAPHRASE_FAMILY] : SCENE_FAMILIES),
    seedCount: seeds.length,
    askSeed: async (i) => {
      const s = seeds[i]!;
      return (await ask(s.prompt, s.image, holds(s.scene, s.asked) ? "yes" : "no")).failed;
    },
    variant: (i, family, arm, rng) => {
      const s = seeds[i]!;
      const variant = makeVariant(s, family, arm, rng, options.judgeParaphrases);
      if (!variant) return undefined;
      return {
        id: `${s.id}~${family}-${arm}-${++made}`,
        prompt: variant.prompt,
        image: variant.image,
        expected: holds(variant.scene, s.asked) ? "yes" : "no",
        answer: "",
        provenance: {
          synthesized: true,
          parent: s.id,
          family,
          arm,
          edit: variant.edit,
          objects: variant.scene.objects.map(objectName),
        },
      };
    },
    ask: (c) => ask(c.prompt, c.image, c.expected),
    // A rewording keeps the seed's image, so the same wording of the same seed is the same case.
    identity: (c) => (c.provenance.edit.kind === "paraphrase" ? `${c.provenance.parent}\n${c.prompt}` : undefined),
  });
}

function holds(scene: Scene, asked: { colour: Colour; shape: Shape }): boolean {
  return scene.objects.some((o) => o.colour === asked.colour && o.shape === asked.shape);
}

type Seed = SceneQuestion & { asked: { colour: Colour; shape: Shape }; scene: Scene };

function makeVariant(
  s: Seed,
  family: string,
  arm: string,
  rng: Rng,
  judged: ReadonlyMap<string, readonly string[]> | undefined,
): { prompt: string; image: RgbImage; scene: Scene; edit: SyntheticEdit } | undefined {
  const askedName = objectName(s.asked);
  const objects = s.scene.objects;
  const indexOf = (name: string) => objects.findIndex((o) => objectName(o) === name);
  const pick = <T>(xs: readonly T[]) => (xs.length > 0 ? xs[rng.below(xs.length)] : undefined);
  const others = objects.map((o, i) => ({ o, i })).filter(({ o }) => objectName(o) !== askedName);
  const partner = PARTNERS[askedName];
  const size = () => 12 + rng.below(7);
  const box = () => {
    const side = size();
    return { x: rng.below(s.scene.width - side + 1), y: rng.below(s.scene.height - side + 1), size: side };
  };
  let edit: SceneEdit | undefined;
  switch (`${family}:${arm}`) {
    case "remove:asked":
      edit = indexOf(askedName) >= 0 ? { kind: "remove", object: indexOf(askedName) } : undefined;
      break;
    case "remove:asked-beside-partner":
      // The co-occurrence prior's test: the asked object goes, its partner stays in view.
      edit =
        indexOf(askedName) >= 0 && partner && indexOf(partner) >= 0
          ? { kind: "remove", object: indexOf(askedName) }
          : undefined;
      break;
    case "remove:partner":
      edit = partner && indexOf(partner) >= 0 ? { kind: "remove", object: indexOf(partner) } : undefined;
      break;
    case "remove:other": {
      const o = pick(others.filter(({ o }) => objectName(o) !== partner));
      edit = o ? { kind: "remove", object: o.i } : undefined;
      break;
    }
    case "add:asked":
      edit = indexOf(askedName) < 0 ? { kind: "add", ...s.asked, box: box() } : undefined;
      break;
    case "add:partner": {
      const [colour, shape] = (partner ?? "").split(" ") as [Colour, Shape];
      edit =
        partner && indexOf(askedName) >= 0 && indexOf(partner) < 0
          ? { kind: "add", colour, shape, box: box() }
          : undefined;
      break;
    }
    case "add:partner-of-absent": {
      // The asked object is absent; its partner appears, inviting the prior to answer "yes".
      const [colour, shape] = (partner ?? "").split(" ") as [Colour, Shape];
      edit =
        partner && indexOf(askedName) < 0 && indexOf(partner) < 0
          ? { kind: "add", colour, shape, box: box() }
          : undefined;
      break;
    }
    case "add:other": {
      const colour = pick(COLOUR_NAMES)!;
      const shape = pick(SHAPES)!;
      const name = `${colour} ${shape}`;
      edit = name !== askedName && indexOf(name) < 0 ? { kind: "add", colour, shape, box: box() } : undefined;
      break;
    }
    case "recolour:asked": {
      const at = indexOf(askedName);
      const colour = pick(COLOUR_NAMES.filter((c) => c !== s.asked.colour))!;
      edit =
        at >= 0 && indexOf(`${colour} ${s.asked.shape}`) < 0 ? { kind: "recolour", object: at, colour } : undefined;
      break;
    }
    case "recolour:into-asked": {
      const o = pick(others.filter(({ o }) => o.shape === s.asked.shape));
      edit = o && indexOf(askedName) < 0 ? { kind: "recolour", object: o.i, colour: s.asked.colour } : undefined;
      break;
    }
    case "recolour:other": {
      const o = pick(others);
      const colour = pick(COLOUR_NAMES)!;
      const name = o ? `${colour} ${o.o.shape}` : "";
      edit = o && name !== askedName && indexOf(name) < 0 ? { kind: "recolour", object: o.i, colour } : undefined;
      break;
    }
    case "move:asked":
    case "move:other": {
      const o = arm === "asked" ? (indexOf(askedName) >= 0 ? { i: indexOf(askedName) } : undefined) : pick(others);
      const b = box();
      edit = o ? { kind: "move", object: o.i, x: b.x, y: b.y } : undefined;
      break;
    }
    case "resize:smaller":
    case "resize:larger": {
      const at = indexOf(askedName) >= 0 ? indexOf(askedName) : pick(objects.map((_, i) => i));
      const now = at !== undefined ? objects[at]!.box.size : 0;
      const next = arm === "smaller" ? now - 2 - rng.below(5) : now + 2 + rng.below(6);
      edit = at !== undefined ? { kind: "resize", object: at, size: next } : undefined;
      break;
    }
    case "background:darker":
    case "background:lighter": {
      const step = 20 + rng.below(60);
      edit = { kind: "background", level: s.scene.background + (arm === "darker" ? -step : step) };
      break;
    }
    case "paraphrase:template": {
      const template = pick(PARAPHRASES)!;
      const prompt = `<image> ${template.replace("{o}", askedName)}`;
      return { prompt, image: s.image, scene: s.scene, edit: { kind: "paraphrase", template } };
    }
    case "judge-paraphrase:judge": {
      // The image is the seed's: the expected answer is the seed's, whatever the wording.
      const prompt = pick(judged?.get(s.prompt) ?? []);
      return prompt
        ? { prompt, image: s.image, scene: s.scene, edit: { kind: "paraphrase", template: prompt, by: "judge" } }
        : undefined;
    }
    default:
      throw new RangeError(
        `searchSceneProbes(): no edit '${family}:${arm}'; families are ${JSON.stringify(SCENE_FAMILIES)}`,
      );
  }
  if (!edit) return undefined;
  const edited = editScene(s.image, s.scene, edit, rng.below(2 ** 31));
  if (!edited) return undefined;
  return { prompt: s.prompt, image: edited.image, scene: edited.scene, edit };
}

type SyntheticEdit = SynthesizedCase["provenance"]["edit"];

/** RGB pixels as the RGBA pixels a model input takes (opaque). */
export function toPixels(image: RgbImage): ImagePixels {
  const data = new Uint8ClampedArray(image.width * image.height * 4).fill(255);
  for (let p = 0; p < image.width * image.height; p++) data.set(image.rgb.subarray(3 * p, 3 * p + 3), 4 * p);
  return { width: image.width, height: image.height, data };
}
