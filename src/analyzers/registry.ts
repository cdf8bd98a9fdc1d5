/**
 * The analyzers a model can run: every analyzer whose `requires` the model's
 * capabilities cover, ranked by how well its tags match the protocol's hints.
 */
import type { Capability } from "../core/index.ts";
import { attention, attentionEntropy, attentionRollout, attentionSink } from "./attention.ts";
import { chair } from "./chair.ts";
import { pope } from "./pope.ts";
import { promptContrast } from "./prompt-contrast.ts";
import type { Analyzer } from "./types.ts";
import { logitLens, logprobEntropy, tokenEntropy } from "./uncertainty.ts";

/** Every analyzer, in the order that breaks ties when `rankAnalyzers` scores them against the hints. */
export const ANALYZERS: readonly Analyzer[] = [
  attention,
  attentionSink,
  attentionEntropy,
  attentionRollout,
  logitLens,
  tokenEntropy,
  logprobEntropy,
  promptContrast,
  pope,
  chair,
];

export interface Availability {
  readonly analyzer: Analyzer;
  readonly runnable: boolean;
  /** What is missing when it cannot run. */
  readonly missing: readonly Capability[];
  /** How many of the hint tags it matches. */
  readonly score: number;
}

/**
 * Which analyzers can run on a model with `capabilities`, best match to `hints` first
 * (ties keep the registry's order).
 * Example: `rankAnalyzers(new Set(["generate"]), ["prompt"])` → promptContrast first and runnable; attention not runnable (missing 'attention').
 */
export function rankAnalyzers(capabilities: ReadonlySet<Capability>, hints: readonly string[] = []): Availability[] {
  return ANALYZERS.map((analyzer, order) => {
    const missing = analyzer.requires.filter((c) => !capabilities.has(c));
    const score = analyzer.tags.filter((t) => hints.includes(t)).length;
    return { analyzer, runnable: missing.length === 0, missing, score, order };
  })
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ order: _order, ...rest }) => rest);
}

/** The analyzer named `name`; throws naming the known ones. */
export function getAnalyzer(name: string): Analyzer {
  const a = ANALYZERS.find((x) => x.name === name);
  if (!a) throw new Error(`unknown analyzer '${name}'; known: ${ANALYZERS.map((x) => `'${x.name}'`).join(", ")}`);
  return a;
}
