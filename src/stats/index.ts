/**
 * `evalrx/stats`: the statistics every EvalRx verdict rests on. Pure functions over
 * plain arrays and typed arrays; no DOM, no Node; deterministic (seeded PRNG).
 */

// Intervals and estimates
export { wilson } from "./wilson.ts";
export { meanSE } from "./mean-se.ts";
export { clusteredSE } from "./clustered-se.ts";
export { clusterMean, type ClusterMean, type ClusterMeanOptions } from "./cluster-mean.ts";
export { estimate, FEW_CLUSTERS, type Estimate, type EstimateOptions } from "./estimate.ts";
export { passHatK } from "./pass-hat-k.ts";

// Paired comparisons
export { mcnemar } from "./mcnemar.ts";
export { newcombePaired } from "./newcombe-paired.ts";
export { pairedBootstrap, type BootstrapOptions, type BootstrapResult } from "./paired-bootstrap.ts";
export { adjustedPaired, type AdjustedPairedOptions } from "./adjusted-paired.ts";
export { comparePaired, type Comparison, type CompareOptions } from "./compare-paired.ts";

// Association tests (signal vs failure)
export { fisherExact } from "./fisher-exact.ts";
export { mannWhitneyU } from "./mann-whitney-u.ts";
export { spearman } from "./spearman.ts";
export { friedman } from "./friedman.ts";
export { clusterAssociation, type ClusterAssociation, type ClusterAssociationOptions } from "./cluster-association.ts";

// e-values and multiplicity
export { eValueBinomial, logEValueBinomial, type EValueOptions } from "./e-value-binomial.ts";
export { eValueMcNemar } from "./e-value-mcnemar.ts";
export { holm } from "./holm.ts";
export { benjaminiHochberg } from "./benjamini-hochberg.ts";
export { eBH } from "./e-bh.ts";

// Planning
export { pairedSampleSize, detectableDrop, type SampleSizeInput, type DetectableDropInput } from "./sample-size.ts";

export type { ClusterLabels } from "./validate.ts";
