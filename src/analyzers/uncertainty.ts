/**
 * Uncertainty of the answer: entropy of the next-token distribution where the
 * answer is predicted, and the log-probability of the answer tokens; and the
 * logit lens: at which layer the final answer becomes top-1.
 */
import { collect, meanByLabel, type Analyzer } from "./types.ts";

function f(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : "— (no such case)";
}

function answerStart(item: Parameters<NonNullable<Analyzer["signals"]>>[0]): number | undefined {
  const a = item.trace?.answerPositions;
  return a && a.length ? a[0]! : undefined;
}

/** Entropy (nats) of the distribution that predicts the first answer token. */
export const tokenEntropy: Analyzer = {
  name: "tokenEntropy",
  description: "entropy (nats) of the next-token distribution at the position that predicts the answer",
  tags: ["uncertainty"],
  requires: ["logits"],
  reductions: ["tokenEntropy"],
  parameters: { position: "the one predicting the first answer token" },
  signals(item): Record<string, number> {
    const t = item.trace?.reductions.tokenEntropy;
    const a = answerStart(item);
    if (!t || a === undefined || a < 1) return {};
    return { "tokenEntropy.answer": t.data[a - 1]! };
  },
  run(items) {
    const perCase = collect(items, (i) => tokenEntropy.signals!(i));
    const by = meanByLabel(items, perCase["tokenEntropy.answer"] ?? []);
    return {
      summary: `tokenEntropy: ${f(by.fail)} nats on failures vs ${f(by.pass)} on passes`,
      findings: { signals: Object.keys(perCase), byLabel: by },
      artifacts: { perCase },
    };
  },
};

/** Mean log-probability of the answer's tokens (its end token excluded). */
export const logprobEntropy: Analyzer = {
  name: "logprobEntropy",
  description: "mean log-probability the model gave its own answer tokens",
  tags: ["uncertainty"],
  requires: ["logits"],
  reductions: ["tokenLogprob"],
  parameters: { tokens: "the teacher-forced answer tokens" },
  signals(item): Record<string, number> {
    const t = item.trace?.reductions.tokenLogprob;
    const a = item.trace?.answerPositions;
    if (!t || !a || !a.length) return {};
    let s = 0;
    for (const p of a) s += t.data[p]!;
    return { "logprob.answer": s / a.length };
  },
  run(items) {
    const perCase = collect(items, (i) => logprobEntropy.signals!(i));
    const by = meanByLabel(items, perCase["logprob.answer"] ?? []);
    return {
      summary: `logprobEntropy: answer log-probability ${f(by.fail)} on failures vs ${f(by.pass)} on passes`,
      findings: { signals: Object.keys(perCase), byLabel: by },
      artifacts: { perCase },
    };
  },
};

/** The logit lens: the first state (0 = embeddings, l = after layer l) where the answer is top-1, and its probability per state. */
export const logitLens: Analyzer = {
  name: "logitLens",
  description: "logit lens: first layer at which the final answer token is top-1, and its probability per layer",
  tags: ["layer", "uncertainty"],
  requires: ["hidden_states"],
  reductions: ["logitLens"],
  parameters: { k: "top-k from the runtime (5)", position: "the one predicting the first answer token" },
  signals(item): Record<string, number> {
    const t = item.trace?.reductions.logitLens;
    const a = answerStart(item);
    if (!t || a === undefined) return {};
    const answer = item.trace!.tokenIds[a]!;
    const [S, K] = t.shape as [number, number, number];
    const out: Record<string, number> = {};
    let first = S; // never top-1 → one past the last state
    for (let s = 0; s < S; s++) {
      let prob = 0;
      for (let k = 0; k < K; k++) {
        const base = (s * K + k) * 2;
        if (t.data[base] === answer) {
          prob = t.data[base + 1]!;
          if (k === 0 && first === S) first = s;
        }
      }
      out[`logitLens.answerProb.S${s}`] = prob;
    }
    out["logitLens.top1Layer"] = first;
    return out;
  },
  run(items) {
    const perCase = collect(items, (i) => logitLens.signals!(i));
    const by = meanByLabel(items, perCase["logitLens.top1Layer"] ?? []);
    return {
      summary: `logitLens: the answer becomes top-1 at state ${f(by.fail, 2)} on failures vs ${f(by.pass, 2)} on passes (mean; 0 = embeddings)`,
      findings: { signals: Object.keys(perCase), byLabel: by },
      artifacts: { perCase },
    };
  },
};
