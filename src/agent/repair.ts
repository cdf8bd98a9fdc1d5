/**
 * M5: the mechanism test and the repair ladder. Every candidate is an eval
 * run of the sealed cases through a changed model (a rewritten prompt, a
 * scaffold around the unchanged model, internals read or written), compared
 * with the unmodified baseline on the same cases: exact McNemar on the
 * discordant pairs and the binomial-mixture e-value that the repair fixes more
 * cases than it breaks. Candidates are climbed tier by tier up to the ceiling;
 * the loop never raises the ceiling itself, it recommends.
 */
import { answerKey, gridPeak, rewrite } from "../analyzers/index.ts";
import type { FailureCase, GenerateOptions, ImagePixels, Model, ModelInput } from "../core/index.ts";
import { runEval, type Evaluator } from "../evals/index.ts";
import { eValueMcNemar, mcnemar } from "../stats/index.ts";
import type { Store } from "../store/index.ts";
import { cellCentre, zoom } from "./crop.ts";
import type { EventLog } from "./events.ts";

/** The repair ladder's tiers, lowest first: L1 prompt, L2 scaffolds, L3a internals read, L3b internals written, L4 fine-tune recipe. */
export const TIERS = ["L1", "L2", "L3a", "L3b", "L4"] as const;
export type Tier = (typeof TIERS)[number];

/** How every M5 comparison with the baseline is tested, as the report states it. */
export const MCNEMAR_E_METHOD =
  "exact McNemar p on discordant pairs; e-value = Beta(1,1) binomial-mixture likelihood ratio that fixed/(fixed+broken) > ½ (eValueMcNemar, one-sided)";

/** A model input decoder for scaffolds that change the image. */
export type DecodeImage = (bytes: Uint8Array) => ImagePixels;

/** One repair (or intervention) candidate: a tier, a stable signature, and the changed model it runs. */
export interface Candidate {
  readonly tier: Tier | "mechanism";
  /** Identical signatures are one candidate: never run twice. */
  readonly signature: string;
  readonly name: string;
  readonly description: string;
  readonly generate: (base: Model, input: ModelInput, options: GenerateOptions) => Promise<string>;
}

/** The base model wrapped so that `generate` runs the candidate (what `runEval` calls). */
export function candidateModel(base: Model, candidate: Candidate): Model {
  return {
    spec: base.spec,
    capabilities: base.capabilities,
    generate: (input, options = {}) => candidate.generate(base, input, options),
    forward: (input, capture) => base.forward(input, capture),
    dispose: async () => {},
  };
}

function majority(outputs: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const o of outputs) counts.set(answerKey(o), (counts.get(answerKey(o)) ?? 0) + 1);
  let best = answerKey(outputs[0]!),
    top = 0;
  // Ties go to the earliest answer (the unmodified one first).
  for (const o of outputs) {
    const c = counts.get(answerKey(o))!;
    if (c > top) {
      top = c;
      best = answerKey(o);
    }
  }
  return outputs.find((o) => answerKey(o) === best)!;
}

function pixelsOf(input: ModelInput, decode: DecodeImage | undefined): ImagePixels | undefined {
  if (!input.image) return undefined;
  if (!(input.image instanceof Uint8Array)) return input.image;
  return decode?.(input.image);
}

async function meanAnswerLogprob(base: Model, input: ModelInput, answer: string): Promise<number> {
  if (!answer.trim()) return -Infinity;
  const t = await base.forward(input, { answer, reductions: ["tokenLogprob"] });
  const lp = t.reductions.tokenLogprob;
  if (!lp || !t.answerPositions.length) return -Infinity;
  let s = 0;
  for (const p of t.answerPositions) s += lp.data[p]!;
  return s / t.answerPositions.length;
}

/** The attention-reweighting candidate (also the mechanism test when its sign follows the hypothesis). */
export function attentionBiasCandidate(tier: "L3b" | "mechanism", value: number, target: "image" | "sink"): Candidate {
  const positions = target === "image" ? ("image" as const) : [0];
  return {
    tier,
    signature: `attention-bias:${target}:${value}`,
    name: `attention ${value > 0 ? "+" : ""}${value} on ${target === "image" ? "image tokens" : "the first token"}`,
    description: `adds ${value} to the pre-softmax attention scores on ${target === "image" ? "every image token" : "the first token"}, every layer and head, at every generation step (attention_write)`,
    generate: (base, input, options) =>
      base.generate(input, { ...options, attentionBias: { positions, value } } as GenerateOptions),
  };
}

/**
 * The ladder's candidates for a model, tier by tier (a candidate that needs
 * something the model cannot give is left out, with the reason).
 * Example: `ladder(model, { imageBiasSign: 1 }).map((c) => c.signature)` →
 * `["rewrite:context", "rewrite:restate", "self-consistency:3", "multi-crop:5", "attention-crop:rollout", …]`.
 */
export function ladder(
  model: Model,
  options: { readonly decodeImage?: DecodeImage; readonly imageBiasSign?: 1 | -1; readonly hasImages: boolean },
): { candidates: Candidate[]; skipped: { name: string; reason: string }[] } {
  const candidates: Candidate[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const r of ["context", "restate"]) {
    if (r === "context" && !options.hasImages) {
      skipped.push({ name: "L1 prompt rewrite 'context'", reason: "it refers to an image and the cases have none" });
      continue;
    }
    const rw = rewrite(r);
    candidates.push({
      tier: "L1",
      signature: `rewrite:${r}`,
      name: `prompt rewrite '${r}'`,
      description: rw.description,
      generate: (base, input, o) => base.generate({ ...input, prompt: rw.apply(input.prompt) }, o),
    });
  }
  candidates.push({
    tier: "L2",
    signature: "self-consistency:3",
    name: "self-consistency over paraphrases",
    description:
      "majority answer over the original prompt and the rewrites 'context' and 'restate' (ties: the original)",
    generate: async (base, input, o) =>
      majority([
        await base.generate(input, o),
        await base.generate({ ...input, prompt: rewrite("context").apply(input.prompt) }, o),
        await base.generate({ ...input, prompt: rewrite("restate").apply(input.prompt) }, o),
      ]),
  });
  const imageOk = options.hasImages && model.capabilities.has("image") && options.decodeImage !== undefined;
  if (imageOk) {
    const decode = options.decodeImage!;
    candidates.push({
      tier: "L2",
      signature: "multi-crop:5",
      name: "crop and re-ask (four zoomed quadrants + full image)",
      description:
        "asks on the full image and on four 60% windows centred on the quadrants, each scaled back up; majority answer (ties: the full image)",
      generate: async (base, input, o) => {
        const px = pixelsOf(input, decode);
        if (!px) return base.generate(input, o);
        const outs = [await base.generate(input, o)];
        for (const [cx, cy] of [
          [0.3, 0.3],
          [0.7, 0.3],
          [0.3, 0.7],
          [0.7, 0.7],
        ] as const)
          outs.push(await base.generate({ ...input, image: zoom(px, cx, cy, 0.6) }, o));
        return majority(outs);
      },
    });
    if (model.capabilities.has("attention"))
      candidates.push({
        tier: "L3a",
        signature: "attention-crop:rollout",
        name: "attention-guided crop, chosen by confidence",
        description:
          "reads the attention rollout to the image grid, zooms on its peak cell (50% window), asks again, and keeps whichever answer (full image or crop) the model gives the higher mean log-probability",
        generate: async (base, input, o) => {
          const px = pixelsOf(input, decode);
          const full = await base.generate(input, o);
          if (!px) return full;
          const t = await base.forward(input, { reductions: ["rollout"] });
          const grid = t.reductions.rollout;
          if (!grid) return full;
          const [rows, cols] = grid.shape as [number, number];
          const { cx, cy } = cellCentre(gridPeak(grid.data).argmax, rows, cols);
          const cropped: ModelInput = { ...input, image: zoom(px, cx, cy, 0.5) };
          const crop = await base.generate(cropped, o);
          if (answerKey(crop) === answerKey(full)) return full;
          return (await meanAnswerLogprob(base, cropped, crop)) > (await meanAnswerLogprob(base, input, full))
            ? crop
            : full;
        },
      });
    else skipped.push({ name: "L3a attention-guided crop", reason: "the model gives no attention" });
  } else
    skipped.push({
      name: "image scaffolds (multi-crop, attention-guided crop)",
      reason: options.hasImages ? "no image decoder was given" : "the cases have no images",
    });
  if (model.capabilities.has("attention_write") && options.hasImages) {
    const sign = options.imageBiasSign ?? 1;
    for (const v of [1, 2]) candidates.push(attentionBiasCandidate("L3b", sign * v, "image"));
  } else
    skipped.push({
      name: "L3b attention reweighting",
      reason: options.hasImages
        ? "the model exposes no attention_write input"
        : "the cases have no image tokens to reweight",
    });
  return { candidates, skipped };
}

export interface PairedOutcome {
  readonly n: number;
  readonly baselineFailures: number;
  readonly candidateFailures: number;
  /** Failed in the baseline, passes with the candidate. */
  readonly fixed: number;
  /** Passed in the baseline, fails with the candidate. */
  readonly broken: number;
  readonly delta: number;
  readonly p: number;
  readonly e: number;
}

/**
 * Paired comparison with the baseline on the same cases.
 * Example: baseline [false, false, true], candidate [true, false, true] → `{ fixed: 1, broken: 0, delta: -1/3, p: 1, e: 1 }`.
 */
export function pairedOutcome(baseline: readonly boolean[], candidate: readonly boolean[]): PairedOutcome {
  if (baseline.length !== candidate.length)
    throw new Error(`pairedOutcome(): ${baseline.length} baseline cases vs ${candidate.length} candidate cases`);
  let fixed = 0,
    broken = 0,
    bf = 0,
    cf = 0;
  baseline.forEach((b, i) => {
    const c = candidate[i]!;
    if (!b) bf++;
    if (!c) cf++;
    if (!b && c) fixed++;
    if (b && !c) broken++;
  });
  const n = baseline.length;
  return {
    n,
    baselineFailures: bf,
    candidateFailures: cf,
    fixed,
    broken,
    delta: n ? (cf - bf) / n : NaN,
    p: mcnemar(broken, fixed),
    e: eValueMcNemar(broken, fixed, { alternative: "greater" }),
  };
}

export interface RepairContext {
  readonly store: Store;
  readonly model: Model;
  readonly dataset: { readonly id: string };
  readonly evaluators: readonly Evaluator[];
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  readonly runId: string;
  readonly maxNewTokens?: number;
  readonly signal?: AbortSignal;
}

function slug(signature: string): string {
  return signature.replace(/[^\w.-]+/g, "_");
}

/**
 * Runs one candidate on the sealed cases as a resumable eval run (a killed
 * run resumes without re-judging what it stored) and compares it with the baseline.
 */
export async function evaluateCandidate(
  ctx: RepairContext,
  candidate: Candidate,
  cases: readonly FailureCase[],
  baseline: ReadonlyMap<string, boolean>,
): Promise<PairedOutcome> {
  const runId = `${ctx.runId}-m5-${slug(candidate.signature)}`;
  const existing = await ctx.store.getRun(runId);
  if (existing?.status !== "finished")
    await runEval({
      store: ctx.store,
      dataset: { id: ctx.dataset.id, cases },
      model: candidateModel(ctx.model, candidate),
      evaluators: ctx.evaluators,
      runId,
      ...(existing ? { resume: runId } : {}),
      variant: candidate.signature,
      images: ctx.images,
      cluster: true,
      generation: { maxNewTokens: ctx.maxNewTokens ?? 24 },
      modelIdentity: { key: `${ctx.model.spec.key}+${candidate.signature}` },
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  if (ctx.signal?.aborted) throw new Error("cancelled during M5");
  const passed = new Map((await ctx.store.items(runId)).map((i) => [i.caseId, i.passed]));
  return pairedOutcome(
    cases.map((c) => baseline.get(c.id)!),
    cases.map((c) => {
      const p = passed.get(c.id);
      if (p === undefined) throw new Error(`M5: candidate run '${runId}' has no result for case '${c.id}'`);
      return p;
    }),
  );
}

export interface RepairOptions {
  readonly maxTier: Tier;
  readonly alpha: number;
  readonly decodeImage?: DecodeImage;
  /** +1: raise attention on image tokens (failures attend less to the image); −1: lower it. */
  readonly imageBiasSign?: 1 | -1;
  readonly hypothesis?: { readonly id: string; readonly signal: string; readonly mechanism: string } | null;
  /** Already-run candidates by signature (e.g. the mechanism test), reused instead of run twice. */
  readonly done?: ReadonlyMap<string, PairedOutcome>;
}

/**
 * Climbs the ladder up to `maxTier` on the sealed cases; logs `repair.tested`
 * per candidate and `repairs.finished` with the outcome and recommendation.
 * A candidate is validated when its e-value reaches K/α (K = the candidates
 * planned, a Bonferroni split of α over them) and it fixes more than it breaks.
 */
export async function climb(
  ctx: RepairContext,
  cases: readonly FailureCase[],
  baseline: ReadonlyMap<string, boolean>,
  log: EventLog,
  options: RepairOptions,
): Promise<{ fixedBy: string | null }> {
  const ceiling = TIERS.indexOf(options.maxTier);
  const { candidates, skipped } = ladder(ctx.model, {
    decodeImage: options.decodeImage,
    imageBiasSign: options.imageBiasSign,
    hasImages: cases.some((c) => c.input.image !== undefined),
  });
  const planned = candidates.filter((c) => TIERS.indexOf(c.tier as Tier) <= ceiling);
  for (const s of skipped) log.append("M5", "problem", { what: s.name, why: `not tried: ${s.reason}` });
  const threshold = Math.max(1, planned.length) / options.alpha;
  const tried = new Map(options.done ?? []);
  let fixedBy: string | null = null;
  for (const tier of TIERS.slice(0, ceiling + 1)) {
    if (tier === "L4") break;
    for (const candidate of planned.filter((c) => c.tier === tier)) {
      const reused = tried.get(candidate.signature);
      const outcome = reused ?? (await evaluateCandidate(ctx, candidate, cases, baseline));
      tried.set(candidate.signature, outcome);
      const validated = outcome.e >= threshold && outcome.fixed > outcome.broken;
      log.append("M5", "repair.tested", {
        tier,
        candidate: candidate.name,
        signature: candidate.signature,
        description:
          candidate.description +
          (reused ? " (result reused: the identical candidate already ran as the mechanism test)" : ""),
        ...outcome,
        eMethod: `${MCNEMAR_E_METHOD}; validated when e ≥ K/α = ${threshold.toFixed(0)} (K = ${planned.length} candidates) and fixed > broken`,
        validated,
      });
      if (validated && !fixedBy) fixedBy = `${tier} ${candidate.name}`;
    }
    if (fixedBy) break;
  }
  const next = TIERS[ceiling + 1];
  const recommendation = fixedBy
    ? `${fixedBy} repairs significantly more sealed cases than it breaks; re-test it on fresh cases before shipping`
    : options.maxTier === "L4"
      ? "no candidate up to L3b validated; the L4 fine-tune recipe below was written, not executed"
      : `no candidate up to ${options.maxTier} validated; raise the ceiling to ${next} (--max-tier ${next}) to go further — the loop does not escalate itself`;
  const recipe =
    options.maxTier === "L4" && !fixedBy
      ? fineTuneRecipe(ctx.model, cases, baseline, options.hypothesis ?? null)
      : undefined;
  log.append("M5", "repairs.finished", {
    maxTier: options.maxTier,
    fixedBy,
    recommendation,
    candidates: tried.size,
    ...(recipe ? { recipe } : {}),
  });
  return { fixedBy };
}

/** L4: a written fine-tune recipe (data from the confirmed failure mode, method, hyperparameters, estimated cost). Not executed. */
export function fineTuneRecipe(
  model: Model,
  cases: readonly FailureCase[],
  baseline: ReadonlyMap<string, boolean>,
  hypothesis: { readonly id: string; readonly signal: string; readonly mechanism: string } | null,
): Record<string, unknown> {
  const failing = cases.filter((c) => baseline.get(c.id) === false);
  const params = model.spec.layers * model.spec.hiddenSize * model.spec.hiddenSize * 12;
  const pairs = Math.max(200, failing.length * 20);
  return {
    executed: false,
    base: model.spec.key,
    targets: hypothesis
      ? `${hypothesis.id}: ${hypothesis.mechanism} (signal ${hypothesis.signal})`
      : "the failures on the sealed split (no supported mechanism)",
    data: {
      source: "new cases drawn like the failing ones (same question types, objects and splits), never the sealed cases",
      failingExamples: failing.slice(0, 10).map((c) => c.id),
      pairs,
      balance: "as many passing as failing patterns, so the repair cannot buy fixes with breaks",
    },
    method: "LoRA r=8 on the decoder's attention and MLP projections; answer-token loss only",
    hyperparameters: { epochs: 2, learningRate: 2e-4, batchSize: 32, loraAlpha: 16, seed: 1 },
    retest: `the ${cases.length} sealed cases vs the unmodified baseline, paired McNemar + e-value, plus a no-free-lunch check on passing cases`,
    estimatedCost: {
      approxParameters: params,
      approxTrainingFlops: 6 * params * pairs * 2 * 48,
      note: "a CPU minute for the bundled tiny model; for a 7B model about an hour on one large GPU",
    },
  };
}
