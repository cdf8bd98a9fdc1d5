/**
 * L4, written not run: the fine-tune a model too big to train here would
 * need, chosen from what the diagnosis established, with its data drawn from
 * the diagnosis-only pool (the exploration split; never a sealed case) and
 * its cost estimated at a stated GPU rate. The file says plainly that it was
 * not executed: it is a plan to run elsewhere, re-tested like every rung.
 */
import type { FailureCase, ModelSpec } from "../../core/index.ts";

/** The published on-demand rate the estimate uses (USD per H200 GPU-hour), and the hardware it assumes. */
export const H200 = {
  name: "NVIDIA H200 SXM",
  usdPerGpuHour: 2.3,
  /** Dense bf16 peak, FLOP/s. */
  peakFlops: 989e12,
  /** Model FLOPs utilisation assumed for a LoRA/SFT run (a typical measured range is 0.3–0.5). */
  utilisation: 0.35,
} as const;

/** What the diagnosis established, as the recipe chooses from it. */
export interface RecipeDiagnosis {
  /** The best SUPPORTED hypothesis, or null when none held on the sealed split. */
  readonly hypothesis: { readonly id: string; readonly signal: string; readonly mechanism: string } | null;
  /** True when the mechanism test (an attention write) moved failures as the hypothesis predicts. */
  readonly mechanismConfirmed: boolean;
  /** True for yes/no (POPE-style) tasks: preference pairs then have a natural wrong answer. */
  readonly yesNo: boolean;
  /** The failing cases of the diagnosis-only pool (exploration split, probe search): the data is drawn like them. */
  readonly pool: readonly FailureCase[];
  /** How many cases of the pool passed (the balance the data keeps). */
  readonly poolPassing: number;
  /** The failure mode the hypothesis describes, when modes were found (exploration split). */
  readonly mode?: {
    readonly id: string;
    readonly size: number;
    readonly caseIds: readonly string[];
    readonly defining: readonly { readonly signal: string }[];
  };
  /** Sealed (or repair-split) cases the re-test will use, against the unmodified baseline. */
  readonly retestN: number;
}

type Strategy = "grounding-lora" | "contrastive-dpo" | "counterfactual-sft" | "full-finetune";

/** Which strategy the diagnosis points at, with the reason in words. */
export function chooseStrategy(d: RecipeDiagnosis): { strategy: Strategy; why: string; reserve: Strategy[] } {
  const attention = d.hypothesis !== null && /^(attention|sink|rollout)/.test(d.hypothesis.signal);
  if (attention && d.mechanismConfirmed)
    return {
      strategy: "grounding-lora",
      why: `${d.hypothesis!.id} (${d.hypothesis!.signal}) is SUPPORTED and writing attention moved failures the predicted way: train the attention projections to ground on the image, the measured mechanism`,
      reserve: d.yesNo ? ["contrastive-dpo", "full-finetune"] : ["counterfactual-sft", "full-finetune"],
    };
  if (d.hypothesis !== null && d.yesNo)
    return {
      strategy: "contrastive-dpo",
      why: `${d.hypothesis.id} (${d.hypothesis.signal}) is SUPPORTED but no intervention confirmed a mechanism to target; on a yes/no task, pairs of the hallucinated and the correct answer on the failing pattern address the failure without assuming its cause`,
      reserve: ["counterfactual-sft", "full-finetune"],
    };
  if (d.hypothesis !== null)
    return {
      strategy: "counterfactual-sft",
      why: `${d.hypothesis.id} (${d.hypothesis.signal}) is SUPPORTED without a confirmed mechanism: supervised pairs that differ only in what the hypothesis names teach the model the distinction it misses`,
      reserve: ["full-finetune"],
    };
  return {
    strategy: "full-finetune",
    why: "no hypothesis held on the sealed split, so nothing says where to aim: only a broad fine-tune on more data of the failing kind is left, the costliest and least targeted choice — investigate further before paying for it",
    reserve: [],
  };
}

const METHODS: Record<Strategy, { method: string; targets: string; loss: string; rank?: number }> = {
  "grounding-lora": {
    method: "LoRA",
    targets: "the language model's attention projections (q_proj, k_proj, v_proj, o_proj), every layer",
    loss: "answer-token cross-entropy plus a grounding term: −log of the attention share on the image tokens at the answer position, weight 0.1",
    rank: 16,
  },
  "contrastive-dpo": {
    method: "LoRA + DPO",
    targets: "attention and MLP projections of the language model",
    loss: "DPO (β = 0.1) on (correct answer, hallucinated answer) pairs, reference = the unmodified model",
    rank: 16,
  },
  "counterfactual-sft": {
    method: "LoRA SFT",
    targets: "attention and MLP projections of the language model",
    loss: "answer-token cross-entropy on counterfactual pairs (the same question on an edited input whose answer flips)",
    rank: 16,
  },
  "full-finetune": {
    method: "full fine-tune",
    targets: "every weight of the language model (vision encoder frozen)",
    loss: "answer-token cross-entropy",
  },
};

/** Parameters of a decoder from its spec: 12·L·D² for the blocks (attention 4D², MLP ~8D²) plus the V·D embedding. */
export function approxParameters(spec: Pick<ModelSpec, "layers" | "hiddenSize" | "vocabSize">): number {
  return 12 * spec.layers * spec.hiddenSize * spec.hiddenSize + spec.vocabSize * spec.hiddenSize;
}

/**
 * The L4 recipe as a plain object (the `finetune-recipe.json` a user runs elsewhere): strategy,
 * data, method, hyperparameters, re-test, and cost at `H200`'s stated rate. `executed` is false.
 *
 * @example l4Recipe(model.spec, diagnosis).strategy.chosen // "grounding-lora"
 */
export function l4Recipe(spec: ModelSpec, d: RecipeDiagnosis, options: { readonly gpus?: number } = {}) {
  if (!Number.isInteger(d.retestN) || d.retestN < 0)
    throw new RangeError(`l4Recipe(): retestN must be a count of cases, got ${d.retestN}`);
  const { strategy, why, reserve } = chooseStrategy(d);
  const m = METHODS[strategy];
  const gpus = options.gpus ?? 8;
  const params = approxParameters(spec);
  const modeIds = new Set(d.mode?.caseIds ?? []);
  const seeds = d.mode ? d.pool.filter((c) => modeIds.has(c.id)) : d.pool;
  // Twenty new examples per failing seed, at least 200; as many passing-pattern examples, so fixes are not bought with breaks.
  const pairs = Math.max(200, seeds.length * 20);
  const epochs = strategy === "full-finetune" ? 1 : 2;
  const tokensPerExample = (spec.image ? spec.image.grid[0] * spec.image.grid[1] : 0) + 48;
  const trainTokens = 2 * pairs * epochs * tokensPerExample;
  // FLOPs per token: 6P for full training; LoRA skips the frozen weights' gradients (~4P); DPO runs the reference too (+2P).
  const perToken = strategy === "full-finetune" ? 6 : strategy === "contrastive-dpo" ? 6 : 4;
  const trainFlops = perToken * params * trainTokens;
  const retestFlops = 2 * params * d.retestN * 2 * tokensPerExample;
  const hours = (flops: number) => flops / (H200.peakFlops * H200.utilisation) / 3600;
  const trainGpuHours = hours(trainFlops);
  const retestGpuHours = hours(retestFlops);
  const usd = (h: number) => Number((h * H200.usdPerGpuHour).toFixed(2));
  return {
    format: "evalrx-finetune-recipe",
    version: 1,
    executed: false,
    notice:
      "NOT EXECUTED. A plan written by the investigation for a model too big to train here; run it elsewhere, then re-test the result with evalrx on the held-out cases before promoting it.",
    base: spec.key,
    strategy: {
      chosen: strategy,
      why,
      reserve,
      target: d.hypothesis ? `${d.hypothesis.id}: ${d.hypothesis.mechanism} (signal ${d.hypothesis.signal})` : null,
    },
    data: {
      source:
        "the diagnosis-only pool: cases of the exploration split (and probe search) only — never a sealed or repair-split case",
      drawnFrom: d.mode
        ? `failure mode ${d.mode.id} (${d.mode.size} failing exploration cases; defined by ${d.mode.defining
            .slice(0, 3)
            .map((s) => s.signal)
            .join(", ")})`
        : `the ${d.pool.length} failing exploration cases`,
      seedCases: seeds.slice(0, 20).map((c) => c.id),
      seedCount: seeds.length,
      pairs,
      balance: `${pairs} examples like the failing seeds and ${pairs} like the ${d.poolPassing} passing exploration cases`,
      ...(strategy === "contrastive-dpo"
        ? { pairing: "chosen = the expected answer, rejected = the model's hallucinated answer on the same input" }
        : {}),
    },
    method: {
      name: m.method,
      targets: m.targets,
      loss: m.loss,
      ...(m.rank ? { rank: m.rank, alpha: 2 * m.rank, dropout: 0.05 } : {}),
    },
    hyperparameters: {
      epochs,
      learningRate: strategy === "full-finetune" ? 1e-5 : 2e-4,
      batchSize: 32,
      warmupSteps: Math.max(10, Math.round((2 * pairs * epochs) / 32 / 20)),
      precision: "bf16",
      seed: 1,
    },
    retest: {
      cases: d.retestN,
      against: "the unmodified baseline, on the same held-out cases",
      test: "the one-sided paired, cluster-aware test and e-value M5 uses for every rung",
      controls: [
        ...(d.yesNo
          ? ["the yes-bias control (the baseline pushed toward the repair's answer as far as it moved)"]
          : []),
        "no-free-lunch: what the repair must not break (cases that passed, other splits, a plain task)",
      ],
    },
    cost: {
      hardware: `${gpus} × ${H200.name}`,
      rate: `$${H200.usdPerGpuHour.toFixed(2)} per GPU-hour (on-demand list price; an assumption, not a quote)`,
      assumptions: `~${params.toExponential(2)} parameters (12·L·D² + V·D from the spec), ${tokensPerExample} tokens per example, ${perToken}·P FLOPs per training token (compute only: start-up, data loading and checkpoints come on top), ${Math.round(H200.utilisation * 100)}% of ${(H200.peakFlops / 1e12).toFixed(0)} TFLOP/s bf16`,
      trainGpuHours: Number(trainGpuHours.toPrecision(3)),
      retestGpuHours: Number(retestGpuHours.toPrecision(3)),
      wallHours: Number(((trainGpuHours + retestGpuHours) / gpus).toPrecision(3)),
      usd: { train: usd(trainGpuHours), retest: usd(retestGpuHours), total: usd(trainGpuHours + retestGpuHours) },
    },
  };
}

export type L4Recipe = ReturnType<typeof l4Recipe>;
