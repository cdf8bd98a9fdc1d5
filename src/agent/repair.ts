/**
 * M5: the mechanism test and the repair ladder. Every candidate is an eval
 * run of the M5 cases through a changed model (a rewritten prompt, a scaffold
 * around the unchanged model, internals read or written), compared with the
 * unmodified baseline on the same cases by a paired, cluster-aware one-sided
 * test (exact McNemar on independent cases, the cluster-robust t on clustered
 * ones), its p-value made an e-value at the candidate's share of one α budget
 * shared by the mechanism test and every candidate. On yes/no tasks a candidate
 * must also beat the yes-bias control: the unmodified model pushed toward the
 * answer the candidate favours by a logit shift that moves the yes-ratio as far
 * as the candidate did. Candidates are climbed tier by tier up to the ceiling;
 * the loop never raises the ceiling itself, it recommends.
 */
import { answerKey, gridPeak, rewrite } from "../analyzers/index.ts";
import type { FailureCase, GenerateOptions, ImagePixels, Model, ModelInput } from "../core/index.ts";
import { extractYesNo, runEval, type Evaluator } from "../evals/index.ts";
import { binomialCdf, tCdf } from "../stats/distributions.ts";
import { clusterMean } from "../stats/index.ts";
import type { Store } from "../store/index.ts";
import type { ClosesBehind } from "./closes-behind.ts";
import { cellCentre, zoom } from "./crop.ts";
import { thresholdE } from "./evalue.ts";
import type { EventLog } from "./events.ts";
import { inOrder } from "./in-order.ts";
import { l4Recipe, type RecipeDiagnosis } from "./l4/recipe.ts";

/** The repair ladder's tiers, lowest first: L1 prompt, L2 scaffolds, L3a internals read, L3b internals written, L4 fine-tune recipe. */
export const TIERS = ["L1", "L2", "L3a", "L3b", "L4"] as const;
export type Tier = (typeof TIERS)[number];

/**
 * Checks the ladder's rungs: `minTier` (the first rung run, default L1) and `maxTier` (the ceiling, or "none": no
 * M5) must be tiers, and the first rung must not lie above the ceiling. `names` says how the caller spells the two
 * options in its errors (the CLI's flags, or the library's field names).
 * Example: `tierRange("L3b", "L2")` throws "min tier 'L3b' lies above max tier 'L2': the ladder's first rung must
 * not exceed its ceiling (tiers, lowest first: L1, L2, L3a, L3b, L4)"; `tierRange(undefined, "L3b")` → `{ minTier: "L1", maxTier: "L3b" }`.
 */
export function tierRange(
  minTier: string | undefined,
  maxTier: string,
  names: { readonly min: string; readonly max: string } = { min: "min tier", max: "max tier" },
): { minTier: Tier; maxTier: Tier | "none" } {
  const allowed = TIERS.join(", ");
  if (maxTier !== "none" && !(TIERS as readonly string[]).includes(maxTier))
    throw new Error(`${names.max} '${maxTier}' must be one of ${allowed} or none`);
  if (minTier === undefined) return { minTier: "L1", maxTier: maxTier as Tier | "none" };
  if (!(TIERS as readonly string[]).includes(minTier))
    throw new Error(
      `${names.min} '${minTier}' must be one of ${allowed} (the ladder's first rung), and not above ${names.max}`,
    );
  if (maxTier === "none")
    throw new Error(`${names.min} '${minTier}' needs a ladder, but ${names.max} is none (M5 is skipped)`);
  if (TIERS.indexOf(minTier as Tier) > TIERS.indexOf(maxTier as Tier))
    throw new Error(
      `${names.min} '${minTier}' lies above ${names.max} '${maxTier}': the ladder's first rung must not exceed its ceiling (tiers, lowest first: ${allowed})`,
    );
  return { minTier: minTier as Tier, maxTier: maxTier as Tier };
}

/** How every M5 comparison is tested, as the report states it. */
export const M5_E_METHOD =
  "one-sided paired test that the candidate passes more cases (exact McNemar on the discordant pairs when cases are independent; cluster-robust t, CR2 with Bell–McCaffrey df, on the per-case differences when they share clusters — the unit is then the cluster); e = 1/γ·1{p ≤ γ}; one α budget over M5 split by a graphical procedure (Bretz et al. 2009): with a mechanism test, it gets γ = α/2 and the L candidates planned α/(2L) each, raised to α/L each when the mechanism test confirms (its share passed on); without one, α/L each — family-wise error ≤ α over M5";

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
  /** What the candidate must not break (L4's no-free-lunch check): it validates only when this holds too. */
  readonly noFreeLunch?: (
    cases: readonly FailureCase[],
    baseline: readonly boolean[],
    candidate: readonly boolean[],
  ) => { readonly holds: boolean };
  /** What training made the candidate (L4), logged beside its test once it ran. */
  readonly training?: () => object | undefined;
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

/** A candidate the model or the cases cannot give, the tiers it would have run at, and why. */
export interface SkippedCandidate {
  readonly name: string;
  readonly reason: string;
  readonly tiers: readonly Tier[];
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
): { candidates: Candidate[]; skipped: SkippedCandidate[] } {
  const candidates: Candidate[] = [];
  const skipped: SkippedCandidate[] = [];
  for (const r of ["context", "restate"]) {
    if (r === "context" && !options.hasImages) {
      skipped.push({
        name: "L1 prompt rewrite 'context'",
        reason: "it refers to an image and the cases have none",
        tiers: ["L1"],
      });
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
    else skipped.push({ name: "L3a attention-guided crop", reason: "the model gives no attention", tiers: ["L3a"] });
  } else
    skipped.push({
      name: "image scaffolds (multi-crop, attention-guided crop)",
      reason: options.hasImages ? "no image decoder was given" : "the cases have no images",
      tiers: ["L2", "L3a"],
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
      tiers: ["L3b"],
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
  /** One-sided p-value that the candidate passes more cases than the baseline. */
  readonly p: number;
  /** The all-or-nothing e-value at `gamma`. */
  readonly e: number;
  readonly gamma: number;
  readonly test: "mcnemar" | "cluster-t";
  readonly unit: "case" | "cluster";
  readonly clusters?: number;
}

/**
 * Paired comparison with the baseline on the same cases, one-sided for "the candidate passes
 * more". Independent cases: exact McNemar, p = P(X ≥ fixed), X ~ Bin(fixed + broken, ½).
 * With `clusters` holding several cases: the cluster-robust t (`clusterMean`) on the per-case
 * differences candidate − baseline, its standard error never below 1/(n + 2) (one more
 * disagreeing case), so a repair whose effect is + on some images and − on others is not
 * mistaken for one that helps. e = 1/γ·1{p ≤ γ} at the candidate's share γ of α (default 0.05).
 * Example: baseline [false, false, true], candidate [true, false, true] → `{ fixed: 1, broken: 0, delta: -1/3, p: 0.5, e: 0 }`.
 */
export function pairedOutcome(
  baseline: readonly boolean[],
  candidate: readonly boolean[],
  options: { readonly clusters?: readonly string[]; readonly gamma?: number } = {},
): PairedOutcome {
  if (baseline.length !== candidate.length)
    throw new Error(`pairedOutcome(): ${baseline.length} baseline cases vs ${candidate.length} candidate cases`);
  if (options.clusters && options.clusters.length !== baseline.length)
    throw new Error(`pairedOutcome(): ${options.clusters.length} clusters for ${baseline.length} cases`);
  const gamma = options.gamma ?? 0.05;
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
  const clustered = options.clusters !== undefined && new Set(options.clusters).size < n;
  let p: number;
  let groups: number | undefined;
  if (clustered) {
    const d = candidate.map((c, i) => (c ? 1 : 0) - (baseline[i] ? 1 : 0));
    const c = clusterMean(d, options.clusters!);
    groups = c.clusters;
    const se = Math.max(c.se, 1 / (n + 2));
    p = c.clusters < 2 ? 1 : Math.min(1, tCdf(-c.mean / se, c.df));
  } else {
    const k = fixed + broken;
    p = k === 0 ? 1 : Math.min(1, fixed === 0 ? 1 : 1 - binomialCdf(fixed - 1, k, 0.5));
  }
  return {
    n,
    baselineFailures: bf,
    candidateFailures: cf,
    fixed,
    broken,
    delta: n ? (cf - bf) / n : NaN,
    p,
    e: thresholdE(p, gamma),
    gamma,
    test: clustered ? "cluster-t" : "mcnemar",
    unit: clustered ? "cluster" : "case",
    ...(groups !== undefined ? { clusters: groups } : {}),
  };
}

/** The clusters of M5's cases for its paired tests, or undefined when no case names one. */
export function caseClusters(cases: readonly FailureCase[]): string[] | undefined {
  return cases.some((c) => c.cluster !== undefined) ? cases.map((c) => c.cluster ?? `id:${c.id}`) : undefined;
}

/** True when every case expects a yes/no answer (POPE-style): the yes-bias control applies. */
export function isYesNoTask(cases: readonly FailureCase[]): boolean {
  return (
    cases.length > 0 &&
    cases.every((c) =>
      ["yes", "no"].includes(
        String(c.expected ?? "")
          .trim()
          .toLowerCase(),
      ),
    )
  );
}

/** Share of outputs whose answer reads "yes" (the evaluators' own yes/no extraction). */
export function yesRatio(outputs: readonly string[]): number {
  if (!outputs.length) return NaN;
  return outputs.filter((o) => extractYesNo(o).answer === "yes").length / outputs.length;
}

const answerIds = new WeakMap<Model, Promise<{ yes: number; no: number }>>();

/** The token ids of "yes" and "no" as the model's tokenizer writes a first answer token. */
async function yesNoIds(model: Model, input: ModelInput): Promise<{ yes: number; no: number }> {
  let ids = answerIds.get(model);
  if (!ids) {
    const first = async (answer: string) => {
      const t = await model.forward(input, { answer });
      if (!t.answerPositions.length) throw new Error(`M5 control: the model gives no answer token for '${answer}'`);
      return t.tokenIds[t.answerPositions[0]!]!;
    };
    ids = (async () => ({ yes: await first("yes"), no: await first("no") }))();
    answerIds.set(model, ids);
  }
  return ids;
}

/**
 * The unmodified model's margin logit(yes) − logit(no) at the first answer token: greedy
 * decoding answers "yes" when it is positive (when yes and no are its two leading tokens).
 */
export async function yesNoMargin(model: Model, input: ModelInput): Promise<number> {
  const ids = await yesNoIds(model, input);
  const t = await model.forward(input, { logitsAt: [-1] });
  if (!t.logits) throw new Error("M5 control: the model returned no logits");
  const v = t.logits.values;
  return v[ids.yes]! - v[ids.no]!;
}

/**
 * The logit shift Δ on "yes" that makes `target` of these margins positive: the yes-bias
 * control answers "yes" exactly when margin + Δ > 0. Between two margins Δ sits halfway, so the
 * control's yes count is `target` unless margins tie.
 * Example: `yesShift([2, -1, 0.5, -3], 1)` → −1.25 (only the 2 stays positive).
 */
export function yesShift(margins: readonly number[], target: number): number {
  const sorted = [...margins].sort((a, b) => b - a);
  const k = Math.max(0, Math.min(sorted.length, Math.round(target)));
  if (sorted.length === 0) return 0;
  if (k === 0) return -sorted[0]! - 1;
  if (k === sorted.length) return -sorted[k - 1]! + 1;
  return -(sorted[k - 1]! + sorted[k]!) / 2;
}

/** The yes-bias control as a candidate: the unmodified model, its yes/no logits shifted by `shift`, greedy. */
export function yesShiftCandidate(shift: number): Candidate {
  const rounded = Number(shift.toFixed(4));
  return {
    tier: "mechanism",
    signature: `control:yes-shift:${rounded}`,
    name: `yes-bias control (logit(yes) ${rounded >= 0 ? "+" : ""}${rounded})`,
    description: `the unmodified model with ${rounded} added to the logit of "yes" against "no" at the first answer token: a one-way push toward ${rounded >= 0 ? "yes" : "no"} that moves the yes-ratio as far as the candidate did`,
    generate: async (base, input) => ((await yesNoMargin(base, input)) + rounded > 0 ? "yes" : "no"),
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
  /** Model calls kept in flight (default 1): more only pays when the model runs calls side by side (several workers). */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  /** Given, each candidate run's end is recorded behind the next candidate's judging; the caller settles them. */
  readonly closes?: ClosesBehind;
}

function slug(signature: string): string {
  return signature.replace(/[^\w.-]+/g, "_");
}

/** A candidate's eval run on the M5 cases: per case (in `cases` order) whether it passed and what it answered. */
export interface CandidateRun {
  readonly passed: readonly boolean[];
  readonly outputs: readonly string[];
}

/**
 * Runs one candidate on the M5 cases as a resumable eval run (a killed run resumes
 * without re-judging what it stored; a finished one is read back, never run twice).
 */
export async function runCandidate(
  ctx: RepairContext,
  candidate: Candidate,
  cases: readonly FailureCase[],
): Promise<CandidateRun> {
  const runId = `${ctx.runId}-m5-${slug(candidate.signature)}`;
  ctx.closes?.check();
  const existing = await ctx.store.getRun(runId);
  const ran =
    existing?.status === "finished"
      ? undefined
      : await runEval({
          store: ctx.store,
          dataset: { id: ctx.dataset.id, cases },
          model: candidateModel(ctx.model, candidate),
          evaluators: ctx.evaluators,
          runId,
          ...(existing ? { resume: runId } : {}),
          variant: candidate.signature,
          images: ctx.images,
          cluster: cases.some((c) => c.cluster !== undefined),
          generation: { maxNewTokens: ctx.maxNewTokens ?? 24 },
          ...(ctx.concurrency ? { concurrency: ctx.concurrency } : {}),
          modelIdentity: { key: `${ctx.model.spec.key}+${candidate.signature}` },
          ...(ctx.signal ? { signal: ctx.signal } : {}),
          ...(ctx.closes ? { closeBehind: (closed: Promise<void>) => ctx.closes!.add(closed) } : {}),
        });
  if (ctx.signal?.aborted) throw new Error("cancelled during M5");
  // The items the run just stored come back with it; a run finished earlier (a resume) is read back.
  const items = new Map((ran?.items ?? (await ctx.store.items(runId))).map((i) => [i.caseId, i]));
  const rows = cases.map((c) => {
    const item = items.get(c.id);
    if (item === undefined) throw new Error(`M5: candidate run '${runId}' has no result for case '${c.id}'`);
    return item;
  });
  return { passed: rows.map((r) => r.passed), outputs: rows.map((r) => r.output) };
}

/**
 * Runs one candidate on the M5 cases (see `runCandidate`) and compares it with the
 * baseline on them (`pairedOutcome`, cluster-aware, at level `gamma`).
 */
export async function evaluateCandidate(
  ctx: RepairContext,
  candidate: Candidate,
  cases: readonly FailureCase[],
  baseline: ReadonlyMap<string, boolean>,
  gamma = 0.05,
): Promise<PairedOutcome & { run: CandidateRun }> {
  const run = await runCandidate(ctx, candidate, cases);
  const clusters = caseClusters(cases);
  return {
    ...pairedOutcome(
      cases.map((c) => baseline.get(c.id)!),
      run.passed,
      { ...(clusters ? { clusters } : {}), gamma },
    ),
    run,
  };
}

/** Per split (the cases' `split`, e.g. POPE's random / popular / adversarial): what a candidate did there. */
export type SplitResults = Record<
  string,
  {
    readonly n: number;
    readonly fixed: number;
    readonly broken: number;
    readonly baselineYesRatio?: number;
    readonly candidateYesRatio?: number;
  }
>;

/** A candidate's fixed/broken counts (and yes-ratios on yes/no tasks) split by the cases' `split`. */
export function bySplit(
  cases: readonly FailureCase[],
  baseline: readonly boolean[],
  candidate: readonly boolean[],
  outputs?: { readonly baseline: readonly string[]; readonly candidate: readonly string[] },
): SplitResults {
  const out: Record<string, { n: number; fixed: number; broken: number; b: string[]; c: string[] }> = {};
  cases.forEach((c, i) => {
    const key = c.split ?? "all";
    const row = (out[key] ??= { n: 0, fixed: 0, broken: 0, b: [], c: [] });
    row.n++;
    if (!baseline[i] && candidate[i]) row.fixed++;
    if (baseline[i] && !candidate[i]) row.broken++;
    if (outputs) {
      row.b.push(outputs.baseline[i]!);
      row.c.push(outputs.candidate[i]!);
    }
  });
  return Object.fromEntries(
    Object.entries(out).map(([k, r]) => [
      k,
      {
        n: r.n,
        fixed: r.fixed,
        broken: r.broken,
        ...(outputs ? { baselineYesRatio: yesRatio(r.b), candidateYesRatio: yesRatio(r.c) } : {}),
      },
    ]),
  );
}

export interface RepairOptions {
  readonly maxTier: Tier;
  /**
   * The ladder's first rung (default L1): lower rungs are neither run nor counted in the α budget, so the rungs
   * that run share the ladder's α. The log and the report say the ladder started there.
   */
  readonly minTier?: Tier;
  readonly alpha: number;
  readonly decodeImage?: DecodeImage;
  /** +1: raise attention on image tokens (failures attend less to the image); −1: lower it. */
  readonly imageBiasSign?: 1 | -1;
  readonly hypothesis?: { readonly id: string; readonly signal: string; readonly mechanism: string } | null;
  /** Signatures of candidates already run as the mechanism test (their stored run is read back, not run again). */
  readonly done?: ReadonlySet<string>;
  /** How the ladder's share of M5's α came about (the mechanism test's split), as the report states it. */
  readonly budgetNote?: string;
  /** The baseline's answers on the M5 cases (for yes-ratios and the yes-bias control). */
  readonly baselineOutputs?: ReadonlyMap<string, string>;
  /** Where M5's cases come from, as the report states it ("reused: …" or a repair split). */
  readonly casesNote?: string;
  /** For the L4 recipe: the diagnosis-only pool (exploration failures, never a sealed case) and what M5 confirmed. */
  readonly recipe?: Omit<RecipeDiagnosis, "hypothesis" | "retestN" | "yesNo">;
  /** The L4 executor's candidate (a fine-tune that runs here): planned at L4, counted in the budget. */
  readonly l4?: Candidate;
}

/**
 * How M5 shares its α between the mechanism test and the ladder's L candidates: a graphical
 * procedure (Bretz et al. 2009) that puts the question the diagnosis asked first. With a mechanism
 * test it gets α/2 and each candidate α/(2L); when it confirms, its α/2 passes on to the ladder
 * (α/L each). Without one, each candidate gets α/L. Every path spends at most α, so the family-wise
 * error over M5 is ≤ α (Bonferroni over K = L + 1 gave the mechanism test only α/K).
 *
 * Example: `m5Budget(0.05, 7, true)` → `{ mechanism: 0.025, ladder: (confirmed) => confirmed ? 0.05 : 0.025 }`.
 */
export function m5Budget(
  alpha: number,
  candidates: number,
  mechanismTest: boolean,
): { mechanism: number; ladder: (confirmed: boolean) => number } {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`m5Budget(): alpha ${alpha} must lie in (0, 1)`);
  if (!mechanismTest) return { mechanism: 0, ladder: () => alpha };
  if (candidates === 0) return { mechanism: alpha, ladder: () => 0 };
  return { mechanism: alpha / 2, ladder: (confirmed) => (confirmed ? alpha : alpha / 2) };
}

/**
 * The ladder's candidates from `minTier` (default L1) up to `maxTier` that `climb` will try (so the α budget can be
 * set before M5 starts): only these are counted in it.
 */
export function plannedCandidates(
  model: Model,
  cases: readonly FailureCase[],
  options: Pick<RepairOptions, "minTier" | "maxTier" | "decodeImage" | "imageBiasSign" | "l4">,
): { planned: Candidate[]; skipped: SkippedCandidate[] } {
  const ceiling = TIERS.indexOf(options.maxTier);
  const floor = TIERS.indexOf(tierRange(options.minTier, options.maxTier).minTier);
  const { candidates, skipped } = ladder(model, {
    decodeImage: options.decodeImage,
    imageBiasSign: options.imageBiasSign,
    hasImages: cases.some((c) => c.input.image !== undefined),
  });
  const inRange = (tier: Tier | "mechanism") =>
    TIERS.indexOf(tier as Tier) >= floor && TIERS.indexOf(tier as Tier) <= ceiling;
  const planned = candidates.filter((c) => inRange(c.tier));
  if (options.l4 && ceiling >= TIERS.indexOf("L4")) planned.push(options.l4);
  // Below the first rung nothing runs anyway (`climb` says so once), so only the skips from it up are named.
  return { planned, skipped: skipped.filter((s) => s.tiers.some((t) => TIERS.indexOf(t) >= floor)) };
}

/**
 * Climbs the ladder from `minTier` (default L1) up to `maxTier` on the M5 cases; logs `repair.tested` per
 * candidate and `repairs.finished` with the outcome, the rungs that ran and the recommendation (a `problem`
 * names the rungs below `minTier`, not run). Within a rung every candidate runs; the climb stops after the
 * first rung with a validated candidate (the cheapest repair that works).
 * `alpha` is the ladder's share of M5's budget (all of it, or what the mechanism
 * test left, see `m5Budget`): with K candidates planned each gets γ = alpha/K. A candidate is validated when its one-sided
 * paired p-value against the baseline is ≤ γ (e = 1/γ) and it fixes more than it
 * breaks — and, on yes/no tasks, when it also beats its yes-bias control the
 * same way (both must hold, so no further α is spent).
 */
export async function climb(
  ctx: RepairContext,
  cases: readonly FailureCase[],
  baseline: ReadonlyMap<string, boolean>,
  log: EventLog,
  options: RepairOptions,
): Promise<{ fixedBy: string | null }> {
  const ceiling = TIERS.indexOf(options.maxTier);
  const { minTier } = tierRange(options.minTier, options.maxTier);
  const floor = TIERS.indexOf(minTier);
  const below = TIERS.slice(0, floor);
  if (below.length)
    log.append("M5", "problem", {
      what: `ladder rungs ${below.join(", ")}`,
      why: `not run: the ladder starts at ${minTier} (min tier ${minTier}); their candidates are neither run nor counted in the α budget, which the rungs from ${minTier} to ${options.maxTier} share`,
    });
  const { planned, skipped } = plannedCandidates(ctx.model, cases, options);
  for (const s of skipped) log.append("M5", "problem", { what: s.name, why: `not tried: ${s.reason}` });
  const K = Math.max(1, planned.length);
  const gamma = options.alpha / K;
  const startNote = below.length
    ? `the ladder started at ${minTier} (min tier): ${below.join(", ")} not run and not counted, so its ${options.alpha.toPrecision(3)} is shared by the ${planned.length} candidate(s) from ${minTier} to ${options.maxTier}, γ = ${gamma.toPrecision(3)} each`
    : undefined;
  const clusters = caseClusters(cases);
  const base = cases.map((c) => baseline.get(c.id)!);
  const yesNo = isYesNoTask(cases) && options.baselineOutputs !== undefined;
  const controlled = yesNo && ctx.model.capabilities.has("logits");
  if (yesNo && !controlled)
    log.append("M5", "problem", {
      what: "yes-bias control",
      why: "not run: the model gives no logits to shift (an API backend); candidates are validated against the baseline alone",
    });
  const baseOutputs = yesNo ? cases.map((c) => options.baselineOutputs!.get(c.id) ?? "") : undefined;
  let margins: number[] | undefined;
  const marginsFor = async () => {
    if (margins) return margins;
    const out: number[] = [];
    await inOrder(
      cases,
      ctx.concurrency ?? 1,
      async (c) => {
        if (ctx.signal?.aborted) throw new Error("cancelled during M5");
        const image = c.input.image !== undefined ? await ctx.images(c.input.image, c) : undefined;
        return yesNoMargin(ctx.model, { prompt: c.input.prompt, ...(image ? { image } : {}) });
      },
      (margin) => void out.push(margin),
    );
    return (margins = out);
  };
  let fixedBy: string | null = null;
  let tried = 0;
  const rungs: Tier[] = [];
  for (const tier of TIERS.slice(floor, ceiling + 1)) {
    if (tier === "L4" && !options.l4) break;
    for (const candidate of planned.filter((c) => c.tier === tier)) {
      if (rungs.at(-1) !== tier) rungs.push(tier);
      const outcome = await evaluateCandidate(ctx, candidate, cases, baseline, gamma);
      tried++;
      const { run, ...vsBaseline } = outcome;
      let control: Record<string, unknown> | undefined;
      let beatsControl = true;
      if (controlled) {
        const candidateYes = yesRatio(run.outputs);
        const shift = yesShift(await marginsFor(), Math.round(candidateYes * cases.length));
        const controlRun = await runCandidate(ctx, yesShiftCandidate(shift), cases);
        const vsControl = pairedOutcome(controlRun.passed, run.passed, { ...(clusters ? { clusters } : {}), gamma });
        beatsControl = vsControl.p <= gamma && vsControl.fixed > vsControl.broken;
        control = {
          shift: Number(shift.toFixed(4)),
          yesRatio: yesRatio(controlRun.outputs),
          failures: controlRun.passed.filter((p) => !p).length,
          fixed: vsControl.fixed,
          broken: vsControl.broken,
          p: vsControl.p,
          e: vsControl.e,
          beaten: beatsControl,
          bySplit: bySplit(cases, controlRun.passed, run.passed),
        };
      }
      const guard = candidate.noFreeLunch?.(cases, base, run.passed);
      const training = candidate.training?.();
      const validated =
        vsBaseline.p <= gamma && vsBaseline.fixed > vsBaseline.broken && beatsControl && (guard?.holds ?? true);
      const reused = options.done?.has(candidate.signature);
      log.append("M5", "repair.tested", {
        tier,
        candidate: candidate.name,
        signature: candidate.signature,
        description:
          candidate.description +
          (reused ? " (result reused: the identical candidate already ran as the mechanism test)" : ""),
        ...vsBaseline,
        eMethod: `${M5_E_METHOD}; here the ladder spends ${options.alpha.toPrecision(3)} over its ${K} candidates${below.length ? ` (from ${minTier}: ${below.join(", ")} not run)` : ""}, γ = ${gamma.toPrecision(3)}; validated when p ≤ γ and fixed > broken${controlled ? ", against the baseline and against the yes-bias control" : ""}`,
        validated,
        ...(baseOutputs ? { yesRatio: yesRatio(run.outputs), baselineYesRatio: yesRatio(baseOutputs) } : {}),
        bySplit: bySplit(
          cases,
          base,
          run.passed,
          baseOutputs ? { baseline: baseOutputs, candidate: run.outputs } : undefined,
        ),
        ...(control ? { control } : {}),
        ...(guard ? { noFreeLunch: guard } : {}),
        ...(training ? { training } : {}),
        ...(options.casesNote ? { cases: options.casesNote } : {}),
      });
      if (validated && !fixedBy) fixedBy = `${tier} ${candidate.name}`;
    }
    if (fixedBy) break;
  }
  const next = TIERS[ceiling + 1];
  const from = below.length ? ` from ${minTier}` : "";
  const recommendation = fixedBy
    ? `${fixedBy} repairs significantly more M5 cases than it breaks${controlled ? " and beats the yes-bias control" : ""}; re-test it on fresh cases before shipping`
    : options.maxTier === "L4"
      ? options.l4
        ? `no candidate${from} up to L4 validated (the L4 head adapter was trained here and re-tested); the fine-tune recipe below, for the adapters this executor does not train, was written, not executed`
        : `no candidate${from} up to L3b validated; the L4 fine-tune recipe below was written, not executed`
      : `no candidate${from} up to ${options.maxTier} validated; raise the ceiling to ${next} (--max-tier ${next}) to go further — the loop does not escalate itself`;
  const recipe =
    options.maxTier === "L4" && !fixedBy
      ? l4Recipe(ctx.model.spec, {
          hypothesis: options.hypothesis ?? null,
          mechanismConfirmed: options.recipe?.mechanismConfirmed ?? false,
          yesNo: isYesNoTask(cases),
          pool: options.recipe?.pool ?? [],
          poolPassing: options.recipe?.poolPassing ?? 0,
          ...(options.recipe?.mode ? { mode: options.recipe.mode } : {}),
          retestN: cases.length,
        })
      : undefined;
  const note = [options.budgetNote, startNote].filter(Boolean).join("; ");
  log.append("M5", "repairs.finished", {
    maxTier: options.maxTier,
    minTier,
    rungs,
    fixedBy,
    recommendation,
    candidates: tried,
    budget: { alpha: options.alpha, tests: K, gamma, ...(note ? { note } : {}) },
    ...(options.casesNote ? { cases: options.casesNote } : {}),
    ...(recipe ? { recipe } : {}),
  });
  return { fixedBy };
}
