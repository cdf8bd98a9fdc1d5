/**
 * `evalrx/evals`: evaluators, eval runs with repeats, and the statistics that
 * turn two runs into a verdict — Gate, compare, calibrate, power.
 */
export * from "./evaluators/index.ts";
export { defineEvaluator, runChecks, type EvaluatorDefinition } from "./evaluator.ts";
export { PASS_METRIC, type CheckContext, type CheckOutcome, type CheckResult, type Evaluator } from "./types.ts";
export {
  parseVerdict,
  modelJudge,
  openAICompatibleJudge,
  memoryJudgeCache,
  type Judge,
  type JudgeCache,
  type JudgeVerdict,
  type OpenAIJudgeOptions,
} from "./judge.ts";
export { comparability, fingerprintHash, type Fingerprint } from "./fingerprint.ts";
export {
  runView,
  evalConfig,
  metricValue,
  type RunView,
  type CaseView,
  type TrialView,
  type RunCaseInfo,
  type EvalRunConfig,
} from "./run-view.ts";
export { checkRunFile } from "./run-file.ts";
export { imageUses, plannedImages, type PlannedImages, type ReadImage } from "./planned-images.ts";
export { summarize, formatSummary, type EvalSummary, type MetricSummary } from "./summary.ts";
export {
  runEval,
  loadRun,
  resolveBaseline,
  rescore,
  trialSeed,
  type RunEvalOptions,
  type EvalRunResult,
  type GenerationSettings,
  type RescoreOptions,
} from "./run.ts";
export {
  compare,
  compareRuns,
  describeTest,
  exitCodeOf,
  pairedTest,
  sharedCases,
  toleranceVerdict,
  type CompareOptions,
  type CompareResult,
  type CompareRunsOptions,
  type MetricTest,
  type MetricVerdict,
  type RunComparison,
  type SharedCases,
} from "./compare.ts";
export {
  Gate,
  gate,
  gatedMetrics,
  gateMetricNames,
  validateGate,
  type GateInit,
  type GateResult,
  type GateVerdict,
  type ThresholdCheck,
} from "./gate.ts";
/**
 * `power` is the gate's power by simulation of its own rule (tolerance, repeats, clusters, test),
 * with the cases and repeats that reach a target; it is cheap enough for the page's power panel
 * in the stats worker (a few hundred simulated gates per point). `simulatedRuns` draws the same
 * pairs of runs, for checking a prediction against real `gate` calls.
 */
export {
  calibrate,
  discordance,
  power,
  simulatedRuns,
  type Calibration,
  type CalibrationRow,
  type CalibrateOptions,
  type PowerInput,
  type PowerResult,
} from "./calibrate.ts";
export { syntheticRun, pairedTable, type SyntheticCase, type SyntheticRun } from "./synthetic.ts";
export { parseEvalConfig, buildEvaluators, judgeFromSpec, type EvalConfig, type EvaluatorSpec } from "./config.ts";
