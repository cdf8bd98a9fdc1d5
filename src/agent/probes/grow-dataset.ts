/**
 * Probe search before M1: the seed cases' scene questions are edited and
 * reworded (`searchSceneProbes`), photos with object boxes occluded, cropped
 * and pasted into (`searchPhotoProbes`), or the text cases reworded, given
 * distractors and their operands edited (`searchTextProbes`, tiny-lm's
 * reversal task), the variants the model fails are kept, and
 * the seeds plus the kept cases are stored as a new version of the dataset,
 * which M1 then probes. Every kept case's expected answer follows from its
 * edit (never from the model), its provenance says where it came from, and it
 * keeps its parent's cluster, so the holdout seals a variant with its parent.
 */
import { encode as encodePng } from "fast-png";
import type { FailureCase, ImagePixels, Model } from "../../core/index.ts";
import { caseHash, datasetVersion, select } from "../../datasets/index.ts";
import { toRgb } from "../../models/image.ts";
import type { Store } from "../../store/index.ts";
import type { EventLog } from "../events.ts";
import type { Judge } from "../judge.ts";
import {
  askedObject,
  readBoxes,
  searchPhotoProbes,
  type PhotoSeed,
  type SynthesizedPhotoCase,
} from "./photo-probes.ts";
import { judgeParaphrases, type AskedTerms } from "./judge-paraphrases.ts";
import { COLOUR_NAMES, SHAPES } from "./scene.ts";
import { reversalOperand, searchTextProbes, type SynthesizedTextCase } from "./text-probes.ts";
import { searchSceneProbes, type SceneQuestion, type SynthesizedCase } from "./vlm-probes.ts";

const QUESTION = /^(<image>\s*)?is there a (\w+) (\w+) \?$/;

export interface GrowOptions {
  readonly store: Store;
  readonly model: Model;
  readonly dataset: { readonly id: string; readonly cases: readonly FailureCase[] };
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  /** Model calls in all (the seeds' own answers included). */
  readonly budget: number;
  readonly seed: number;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  /**
   * A judge LLM (the user's endpoint) asked for meaning-preserving rewordings of the seeds' yes/no questions:
   * each is checked (`checkParaphrase`) and those that pass form the `judge-paraphrase` family; the dropped ones
   * are logged with their reasons in `probes.searched`. Not asked for text cases (they are not yes/no questions).
   */
  readonly paraphraser?: Judge;
}

/** A probe search as a plan asks for it: its budget, and whether the judge also rewords the questions. */
export interface ProbeSearchPlan {
  readonly budget: number;
  readonly judgeParaphrases?: boolean;
}

export interface Grown {
  /** The dataset version M1 probes: the seed dataset's cases and the kept ones. */
  readonly id: string;
  readonly version: string;
  readonly cases: readonly FailureCase[];
  /** How many cases the search added. */
  readonly added: number;
}

/** Seed questions asked of the model before the search: a stable sample, a fifth of the budget at most. */
function seedCount(budget: number): number {
  return Math.max(1, Math.min(40, Math.floor(budget / 5)));
}

function png(image: { width: number; height: number; rgb: Uint8Array }): Uint8Array {
  return encodePng({ width: image.width, height: image.height, data: image.rgb, channels: 3 });
}

/**
 * Searches for failing variants of the dataset's scene questions, stores the
 * grown dataset (`<id>+probes-s<seed>-b<budget>`, reused when already stored,
 * so a resumed run does not search again) and logs `probes.searched` with the
 * failure rate per edit family against the seeds' rate.
 *
 * @example
 * const grown = await growDataset({ store, model, dataset, images, budget: 400, seed: 1 }, log);
 * grown.cases.filter((c) => c.tags.includes("synthesized")).length // the kept failing variants
 */
export async function growDataset(o: GrowOptions, log: EventLog): Promise<Grown> {
  if (!Number.isInteger(o.budget) || o.budget < 10)
    throw new RangeError(`probe budget ${o.budget} must be a whole number of model calls, at least 10 (e.g. 400)`);
  // A search with the judge's paraphrases is another search: its dataset is stored apart.
  const id = `${o.dataset.id}+probes-s${o.seed}-b${o.budget}${o.paraphraser ? "-judge" : ""}`;
  const active = o.dataset.cases.filter((c) => c.status === "active");
  const scenes = active.filter((c) => c.input.image !== undefined && QUESTION.test(c.input.prompt.trim()));
  const texts = active.filter((c) => c.input.image === undefined && reversalOperand(c.input.prompt) !== undefined);
  const questions = active.filter((c) => c.input.image !== undefined && askedObject(c.input.prompt) !== undefined);
  const photos = questions.filter((c) => Array.isArray(c.meta["boxes"]));
  const kind = scenes.length > 0 ? "scene" : photos.length > 0 ? "photo" : texts.length > 0 ? "text" : undefined;
  const askable = kind === "scene" ? scenes : kind === "photo" ? photos : texts;
  if (!kind) {
    log.append("setup", "problem", {
      what: "probe search",
      why: questions.length
        ? `the ${questions.length} photo questions give no object boxes (meta.boxes: [{ label, x, y, w, h }] in pixels), so crops, occlusions and pastes cannot apply: without boxes no edit's expected answer is known by construction; M1 probes the dataset as it is`
        : 'no case asks a demo-scene question ("is there a <colour> <shape> ?" with an image), a photo question with object boxes (meta.boxes) or is a reversal case ("reverse <digits> =", tiny-lm\'s task), so there is nothing to edit with an expected answer known by construction; M1 probes the dataset as it is',
    });
    return { id: o.dataset.id, version: datasetVersion(o.dataset.cases), cases: o.dataset.cases, added: 0 };
  }
  const stored = await o.store.getDataset(id);
  if (stored) {
    const cases = await o.store.cases(id);
    const event = [...log.events].reverse().find((e) => e.type === "probes.searched");
    if (!event)
      log.append("setup", "probes.searched", {
        reused: true,
        dataset: { id, version: stored.version, cases: cases.length },
        note: `the grown dataset ${id} was already in the store (an earlier or interrupted run): reused, the search was not run again`,
      });
    return { id, version: stored.version, cases, added: cases.length - o.dataset.cases.length };
  }
  const seedCases = select(askable, { sample: seedCount(o.budget) });
  const parents = new Map(seedCases.map((c) => [c.id, c]));
  const kept: FailureCase[] = [];
  const perFamily = new Map<string, number>();
  const keep = (c: FailureCase) => {
    const family = (c.meta.provenance as { family: string }).family;
    perFamily.set(family, (perFamily.get(family) ?? 0) + 1);
    kept.push(c);
  };
  const common = { model: o.model, budget: o.budget, seed: o.seed, ...(o.signal ? { signal: o.signal } : {}) };
  let result: { seedCalls: number; seedFailures: number; rate: number; lift: number; search: SearchSummary };
  const paraphrased =
    o.paraphraser && kind !== "text"
      ? await judgeParaphrases(
          o.paraphraser,
          seedCases.map((c) => ({
            question: c.input.prompt.trim(),
            asked: askedTerms(kind, c.input.prompt, seedCases),
          })),
          o.signal ? { signal: o.signal } : {},
        )
      : undefined;
  if (paraphrased?.failed.length)
    log.append("setup", "problem", {
      what: "judge paraphrases",
      why: `the judge ${paraphrased.judge} did not answer ${paraphrased.failed.length} of ${paraphrased.requests} requests (first: ${paraphrased.failed[0]!.error}); the search goes on with the paraphrases it gave and the other families`,
    });
  const judged = paraphrased ? { judgeParaphrases: paraphrased.byQuestion } : {};
  if (kind === "scene") {
    const seeds: SceneQuestion[] = [];
    for (const c of seedCases)
      seeds.push({ id: c.id, prompt: c.input.prompt.trim(), image: toRgb(await o.images(c.input.image!, c)) });
    const found = await searchSceneProbes({ seeds, ...common, ...judged });
    result = found;
    for (const [k, s] of found.search.found.entries()) {
      const ref = await o.store.putImage(png(s.image), "image/png");
      keep(synthesizedSceneCase(s, parents.get(s.provenance.parent)!, ref, k));
    }
  } else if (kind === "photo") {
    const seeds: PhotoSeed[] = [];
    const problems: string[] = [];
    for (const c of seedCases) {
      const image = toRgb(await o.images(c.input.image!, c));
      const read = readBoxes(c.meta, image.width, image.height);
      if (read.boxes) seeds.push({ id: c.id, prompt: c.input.prompt.trim(), image, boxes: read.boxes });
      else problems.push(`case ${c.id}: ${read.problem}`);
    }
    if (problems.length)
      log.append("setup", "problem", {
        what: "probe search",
        why: `${problems.length} seed photos were left out, their boxes unusable: ${problems.slice(0, 5).join("; ")}`,
      });
    const found = await searchPhotoProbes({ seeds, ...common, ...judged });
    result = found;
    for (const [k, s] of found.search.found.entries()) {
      const ref = await o.store.putImage(png(s.image), "image/png");
      keep(synthesizedPhotoCase(s, parents.get(s.provenance.parent)!, ref, k));
    }
  } else {
    const found = await searchTextProbes({
      seeds: seedCases.map((c) => ({ id: c.id, prompt: c.input.prompt })),
      ...common,
    });
    result = found;
    for (const [k, s] of found.search.found.entries()) {
      keep(synthesizedTextCase(s, parents.get(s.provenance.parent)!, k));
    }
  }
  const cases = [...o.dataset.cases, ...kept];
  const version = datasetVersion(cases);
  const at = new Date((o.now ?? Date.now)()).toISOString();
  await o.store.putDataset(
    {
      id,
      name: id,
      version,
      source: `probe search on ${o.dataset.id}`,
      format: "jsonl",
      caseCount: cases.length,
      createdAt: at,
      updatedAt: at,
    },
    cases.map((c) => ({ ...c, datasetId: id, hash: caseHash(c) })),
  );
  const seedRate = result.seedCalls > 0 ? result.seedFailures / result.seedCalls : 0;
  log.append("setup", "probes.searched", {
    kind,
    budget: o.budget,
    seed: o.seed,
    seeds: seedCases.map((c) => c.id),
    seedCalls: result.seedCalls,
    seedFailures: result.seedFailures,
    seedRate,
    calls: result.search.calls,
    failures: result.search.failures,
    rate: result.rate,
    lift: Number.isFinite(result.lift) ? result.lift : null,
    stopped: result.search.stopped,
    families: result.search.families.map((f) => ({
      family: f.family,
      calls: f.calls,
      failures: f.failures,
      rate: f.calls > 0 ? f.failures / f.calls : null,
      kept: perFamily.get(f.family) ?? 0,
    })),
    kept: kept.length,
    ...(paraphrased
      ? {
          judgeParaphrases: {
            judge: paraphrased.judge,
            requests: paraphrased.requests,
            accepted: paraphrased.accepted,
            dropped: paraphrased.dropped.length,
            // Every dropped wording with why (the first 60): the check, not the judge, decides what is asked.
            droppedWordings: paraphrased.dropped.slice(0, 60),
            failed: paraphrased.failed.length,
          },
        }
      : o.paraphraser
        ? {
            judgeParaphrases: {
              skipped: "text cases are not yes/no questions: the judge was not asked for paraphrases",
            },
          }
        : {}),
    examples: kept.slice(0, 6).map((c) => ({
      id: c.id,
      prompt: c.input.prompt,
      expected: String(c.expected),
      ...(c.input.image !== undefined ? { image: c.input.image } : {}),
      parent: (c.meta.provenance as { parent: string }).parent,
      edit: (c.meta.provenance as { edit: string }).edit,
    })),
    dataset: { id, version, cases: cases.length, parent: o.dataset.id },
    note:
      (kind === "scene"
        ? "every kept case's expected answer follows from its edit (removing the asked object makes it 'no'), re-read from the edited pixels, never from the model under test; each keeps its parent's cluster, so the holdout seals a variant with its parent"
        : kind === "photo"
          ? "every kept case's expected answer follows from the photo's object boxes after the edit (an occlusion or a crop that removes every box of the asked object makes it 'no', a crop keeping one whole or a paste of it makes it 'yes'), never from the model under test; each keeps its parent's cluster, so the holdout seals a variant with its parent"
          : "every kept case's expected answer follows from its edit: a rewording or a distractor the task's grammar ignores keeps the seed's answer, an operand edit's answer is the edited digits reversed — never the model under test's; each keeps its parent's cluster, so the holdout seals a variant with its parent") +
      (paraphrased
        ? `; a judge's paraphrase (${paraphrased.accepted} of the wordings it gave passed the check: same asked object and attribute, one yes/no question, bounded length, no answer leak or negation) keeps the seed's image, so its answer is the seed's`
        : ""),
  });
  return { id, version, cases, added: kept.length };
}

/**
 * What a paraphrase of a seed's question must name and must not: the colour and shape of a demo-scene question
 * (no other colour or shape), the asked object of a photo question (no other object the seeds' boxes name).
 */
function askedTerms(kind: "scene" | "photo", prompt: string, seeds: readonly FailureCase[]): AskedTerms {
  if (kind === "scene") {
    const m = QUESTION.exec(prompt.trim())!;
    return { keep: [m[2]!, m[3]!], avoid: [...COLOUR_NAMES, ...SHAPES] };
  }
  const asked = askedObject(prompt)!;
  const labels = seeds.flatMap((c) =>
    Array.isArray(c.meta["boxes"]) ? (c.meta["boxes"] as { label?: unknown }[]).map((b) => String(b.label ?? "")) : [],
  );
  const keep = asked.split(/\s+/);
  return {
    keep,
    avoid: [...new Set(labels.flatMap((l) => l.toLowerCase().split(/\s+/)).filter((w) => w && !keep.includes(w)))],
  };
}

/** What the grown dataset needs of either search's result. */
interface SearchSummary {
  readonly calls: number;
  readonly failures: number;
  readonly stopped: string;
  readonly families: readonly { readonly family: string; readonly calls: number; readonly failures: number }[];
}

/**
 * tiny-lm's per-case columns (`models/forge/lmtask.py` `case_meta`) for an operand, so a synthesized case is
 * measured as its parent was.
 */
export function reversalMeta(digits: readonly number[]): Record<string, number | boolean> {
  let run = 1;
  let longest = 1;
  for (let i = 1; i < digits.length; i++) {
    run = digits[i] === digits[i - 1] ? run + 1 : 1;
    longest = Math.max(longest, run);
  }
  return {
    length: digits.length,
    distinct_digits: new Set(digits).size,
    longest_run: longest,
    digit_sum: digits.reduce((s, d) => s + d, 0),
    starts_with_zero: digits[0] === 0,
    is_palindrome: digits.every((d, i) => d === digits[digits.length - 1 - i]),
  };
}

/** A kept photo edit as a dataset case: its boxes after the edit in `meta.boxes`. */
function synthesizedPhotoCase(s: SynthesizedPhotoCase, parent: FailureCase, image: string, k: number): FailureCase {
  const edit = s.provenance.edit;
  const where = (r: { x: number; y: number; w: number; h: number }) => `${r.w}×${r.h} at (${r.x}, ${r.y})`;
  const editText =
    edit.kind === "occlude"
      ? `occluded ${edit.rects.map(where).join(", ")}`
      : edit.kind === "crop"
        ? `cropped to ${where(edit.rect)}`
        : edit.kind === "paraphrase"
          ? `judge paraphrase '${edit.text}'`
          : `pasted the ${edit.label} of ${edit.from} at ${where(edit.rect)}`;
  return synthesizedCaseOf(s, parent, k, {
    image,
    editText,
    meta: { boxes: s.provenance.boxes.map((b) => ({ ...b })) },
  });
}

/** A kept text variant as a dataset case: the parent's columns recomputed for its operand. */
function synthesizedTextCase(s: SynthesizedTextCase, parent: FailureCase, k: number): FailureCase {
  const measured = reversalMeta(s.provenance.operand);
  return synthesizedCaseOf(s, parent, k, {
    editText: `${s.provenance.edit.kind} ${s.provenance.edit.arm}: ${s.provenance.edit.detail}`,
    meta: Object.fromEntries(Object.entries(measured).filter(([key]) => key in parent.meta)),
    provenance: { operand: [...s.provenance.operand] },
  });
}

/** A kept scene variant as a dataset case: the objects the edited scene holds in its provenance. */
function synthesizedSceneCase(s: SynthesizedCase, parent: FailureCase, image: string, k: number): FailureCase {
  const edit = s.provenance.edit;
  const editText =
    edit.kind === "paraphrase"
      ? `${edit.by === "judge" ? "judge " : ""}paraphrase '${edit.template}'`
      : `${edit.kind} ${JSON.stringify(edit).slice(0, 200)}`;
  return synthesizedCaseOf(s, parent, k, { image, editText, provenance: { objects: [...s.provenance.objects] } });
}

/**
 * A kept variant of any family as a dataset case: its parent's tags, split and cluster (so the holdout seals
 * a variant with its parent), provenance (synthesized, parent, family, region, the edit in words) in
 * `meta.provenance`; `image` is the edited image's store key, `meta` and `provenance` what the family adds.
 */
function synthesizedCaseOf(
  s: {
    readonly prompt: string;
    readonly expected: string;
    readonly provenance: { readonly family: string; readonly arm: string };
  },
  parent: FailureCase,
  k: number,
  what: {
    readonly image?: string;
    readonly editText: string;
    readonly meta?: Record<string, unknown>;
    readonly provenance?: Record<string, unknown>;
  },
): FailureCase {
  return {
    id: `${parent.id}~${s.provenance.family}-${k + 1}`,
    input: what.image !== undefined ? { prompt: s.prompt, image: what.image } : { prompt: s.prompt },
    expected: s.expected,
    tags: [...parent.tags.filter((t) => t !== "synthesized"), "synthesized", `probe:${s.provenance.family}`],
    ...(parent.split !== undefined ? { split: parent.split } : {}),
    cluster: parent.cluster ?? `id:${parent.id}`,
    status: "active",
    meta: {
      ...what.meta,
      provenance: {
        synthesized: true,
        parent: parent.id,
        family: s.provenance.family,
        arm: s.provenance.arm,
        edit: what.editText,
        ...what.provenance,
      },
    },
  };
}
