/**
 * Attention analyzers over the reductions of the teacher-forced forward, at
 * the positions that predict the answer: image-token share (per layer/head and
 * pooled, plus the most attended image cells), sink mass, entropy, rollout.
 */
import type { Result, TraceTensor } from "../core/index.ts";
import {
  collect,
  meanByLabel,
  type Analyzer,
  type AnalyzerArtifacts,
  type AnalyzerFindings,
  type ProbeItem,
} from "./types.ts";

/** Per-layer means over heads of a [layer, head] tensor. */
export function layerMeans(t: TraceTensor): number[] {
  const [L, H] = t.shape as [number, number];
  return Array.from({ length: L }, (_, l) => {
    let s = 0;
    for (let h = 0; h < H; h++) s += t.data[l * H + h]!;
    return s / H;
  });
}

function pooled(t: TraceTensor): number {
  let s = 0;
  for (const v of t.data) s += v;
  return s / t.data.length;
}

/** Largest share of a non-negative grid (the peak cell's share of the total) and its Shannon entropy (nats). */
export function gridPeak(data: ArrayLike<number>): { peak: number; entropy: number; argmax: number } {
  let total = 0,
    best = -Infinity,
    argmax = 0;
  for (let i = 0; i < data.length; i++) {
    total += data[i]!;
    if (data[i]! > best) {
      best = data[i]!;
      argmax = i;
    }
  }
  let entropy = 0;
  for (let i = 0; i < data.length; i++) {
    const p = data[i]! / (total || 1);
    if (p > 0) entropy -= p * Math.log(p);
  }
  return { peak: best / (total || 1), entropy, argmax };
}

function summaryOf(name: string, items: readonly ProbeItem[], perCase: Record<string, number[]>, main: string) {
  const values = perCase[main] ?? [];
  const by = meanByLabel(items, values);
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "— (no such case)");
  return `${name}: ${main} mean ${f(by.fail)} on failures vs ${f(by.pass)} on passes (${values.filter(Number.isFinite).length} cases)`;
}

function layeredAnalyzer(options: {
  name: string;
  description: string;
  tags: string[];
  reduction: "imageAttentionShare" | "sinkMass" | "attentionEntropy";
  prefix: string;
  extra?: (item: ProbeItem) => Record<string, number>;
}): Analyzer {
  const signals = (item: ProbeItem): Record<string, number> => {
    const t = item.trace?.reductions[options.reduction];
    if (!t) return {};
    const out: Record<string, number> = { [`${options.prefix}.pooled`]: pooled(t) };
    layerMeans(t).forEach((v, l) => (out[`${options.prefix}.L${l}`] = v));
    return { ...out, ...(options.extra?.(item) ?? {}) };
  };
  return {
    name: options.name,
    description: options.description,
    tags: options.tags,
    requires: ["attention"],
    reductions: [
      options.reduction,
      ...(options.reduction === "imageAttentionShare" ? (["imageAttentionMap"] as const) : []),
    ],
    parameters: { queries: "positions predicting the answer tokens", pooling: "mean over layers and heads" },
    signals,
    run(items): Result<AnalyzerFindings, AnalyzerArtifacts> {
      const perCase = collect(items, signals);
      const main = `${options.prefix}.pooled`;
      // Per layer × head means by label: the figure data behind "which heads differ".
      const heads: { layer: number; head: number; fail: number; pass: number }[] = [];
      const first = items.find((i) => i.trace?.reductions[options.reduction])?.trace?.reductions[options.reduction];
      if (first) {
        const [L, H] = first.shape as [number, number];
        for (let l = 0; l < L; l++)
          for (let h = 0; h < H; h++) {
            const v = items.map((i) => i.trace?.reductions[options.reduction]?.data[l * H + h] ?? NaN);
            heads.push({ layer: l, head: h, ...meanByLabel(items, v) });
          }
      }
      // The most attended image cells (last layer's map, mean over cases): where the model looks.
      const topCells: { cell: number; row: number; col: number; share: number }[] = [];
      const maps = items.map((i) => i.trace?.reductions.imageAttentionMap).filter((m) => m !== undefined);
      if (options.reduction === "imageAttentionShare" && maps.length) {
        const [L, R, C] = maps[0]!.shape as [number, number, number];
        const mean = new Float64Array(R * C);
        for (const m of maps) for (let k = 0; k < R * C; k++) mean[k]! += m.data[(L - 1) * R * C + k]! / maps.length;
        const total = mean.reduce((x, y) => x + y, 0) || 1;
        [...mean.keys()]
          .sort((a, b) => mean[b]! - mean[a]!)
          .slice(0, 3)
          .forEach((k) => topCells.push({ cell: k, row: Math.floor(k / C), col: k % C, share: mean[k]! / total }));
      }
      const top = topCells.length
        ? `; most attended image cells (row, col): ${topCells.map((c) => `(${c.row}, ${c.col}) ${(100 * c.share).toFixed(1)}%`).join(", ")}`
        : "";
      return {
        summary: summaryOf(options.name, items, perCase, main) + top,
        findings: {
          signals: Object.keys(perCase),
          byLabel: meanByLabel(items, perCase[main] ?? []),
          ...(topCells.length ? { topCells } : {}),
          heads,
        },
        artifacts: { perCase, heads },
      };
    },
  };
}

/** Share of answer-position attention on image tokens, per layer/head and pooled; top attended image cells. */
export const attention: Analyzer = layeredAnalyzer({
  name: "attention",
  description: "share of the answer positions' attention on image tokens, per layer (mean over heads) and pooled",
  tags: ["attention", "image"],
  reduction: "imageAttentionShare",
  prefix: "attention.imageShare",
  extra: (item): Record<string, number> => {
    const out: Record<string, number> = {};
    const share = item.trace?.reductions.imageAttentionShare;
    const t = item.trace;
    if (share && t && t.imagePositions.length && t.answerPositions.length) {
      // Derived: attention per image token relative to a uniform spread over the keys the answer position sees.
      const visible = t.answerPositions[0]!;
      out["attention.imageRatio"] = pooled(share) / (t.imagePositions.length / visible);
    }
    const map = item.trace?.reductions.imageAttentionMap;
    if (!map) return out;
    const [L, R, C] = map.shape as [number, number, number];
    const last = map.data.subarray((L - 1) * R * C, L * R * C);
    return { ...out, "attention.imageMapPeak": gridPeak(last).peak };
  },
});

/** Attention mass the answer positions park on the first token. */
export const attentionSink: Analyzer = layeredAnalyzer({
  name: "attentionSink",
  description: "attention mass on the first token (the sink), per layer and pooled",
  tags: ["attention", "sink"],
  reduction: "sinkMass",
  prefix: "sink.mass",
});

/** Entropy of the answer positions' attention rows. */
export const attentionEntropy: Analyzer = layeredAnalyzer({
  name: "attentionEntropy",
  description: "entropy (nats) of the answer positions' attention, per layer and pooled",
  tags: ["attention"],
  reduction: "attentionEntropy",
  prefix: "attentionEntropy",
});

/** Attention rollout from the last prompt position to the image grid: how peaked it is. */
export const attentionRollout: Analyzer = {
  name: "attentionRollout",
  description: "attention rollout (Abnar & Zuidema 2020) to the image grid: peak cell share and entropy",
  tags: ["attention", "image"],
  requires: ["attention", "image"],
  reductions: ["rollout"],
  parameters: { residual: 0.5, query: "last prompt position" },
  signals(item): Record<string, number> {
    const t = item.trace?.reductions.rollout;
    if (!t) return {};
    const g = gridPeak(t.data);
    return { "rollout.peak": g.peak, "rollout.entropy": g.entropy };
  },
  run(items) {
    const perCase = collect(items, (i) => attentionRollout.signals!(i));
    // The mean rollout map of failures and of passes: the grid figure.
    const maps = { fail: [] as number[], pass: [] as number[] };
    for (const label of ["fail", "pass"] as const) {
      const chosen = items.filter((i) => (label === "fail") === !i.passed && i.trace?.reductions.rollout);
      const size = chosen[0]?.trace?.reductions.rollout?.data.length ?? 0;
      maps[label] = Array.from({ length: size }, (_, k) => {
        let s = 0;
        for (const i of chosen) s += i.trace!.reductions.rollout!.data[k]!;
        return s / chosen.length;
      });
    }
    return {
      summary: summaryOf("attentionRollout", items, perCase, "rollout.peak"),
      findings: { signals: Object.keys(perCase) },
      artifacts: { perCase, meanMaps: maps },
    };
  },
};
