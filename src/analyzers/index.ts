/** `evalrx/analyzers`: probes that turn a model's internals into per-case signals and run-level findings. */
export type { Analyzer, AnalyzerArtifacts, AnalyzerFindings, ProbeContext, ProbeItem } from "./types.ts";
export { collect, mean, meanByLabel } from "./types.ts";
export { attention, attentionSink, attentionEntropy, attentionRollout, layerMeans, gridPeak } from "./attention.ts";
export { tokenEntropy, logprobEntropy, logitLens } from "./uncertainty.ts";
export { promptContrast } from "./prompt-contrast.ts";
export { pope, popeMetrics, type PopeRow } from "./pope.ts";
export { chair, chairMetrics, mentioned } from "./chair.ts";
export { REWRITES, rewrite, answerKey, type Rewrite } from "./rewrites.ts";
export { ANALYZERS, rankAnalyzers, getAnalyzer, type Availability } from "./registry.ts";
