/**
 * `evalrx/agent`: the diagnosis loop. `investigate` runs M1–M5 on a model and a dataset; `exploreCases` runs
 * M2–M4 on an eval log with no model. Both return the report and the event log it was built from.
 */
export { investigate, type InvestigateOptions } from "./investigate.ts";
export { exploreCases, DEFAULT_QUESTION } from "./run-explore.ts";
export { runLoop, splitTable, type LoopOptions, type LoopResult } from "./loop.ts";
export {
  explore,
  screenRule,
  DEFAULT_SCREEN,
  type ExploreOptions,
  type ScreenRule,
  type SignalFinding,
} from "./explore.ts";
export { diagnose, type Hypothesis } from "./diagnose.ts";
export { verify } from "./verify.ts";
export { probe, modelKind, type ModelKind, type ProbeOptions, type ProbedCase } from "./probe.ts";
export {
  climb,
  ladder,
  pairedOutcome,
  TIERS,
  type Tier,
  type Candidate,
  type PairedOutcome,
  type RepairOptions,
} from "./repair.ts";
export { l4Recipe, chooseStrategy, H200, type L4Recipe, type RecipeDiagnosis } from "./l4/recipe.ts";
export {
  promote,
  promotable,
  loadPromoted,
  lineageChain,
  PromotionRefused,
  type LineageRecord,
} from "./lineage/index.ts";
export { typeSignal, typeSignals } from "./signals.ts";
export { pToE, thresholdE, familyWeights, CALIBRATORS, type Calibrator } from "./evalue.ts";
export type { ExperimentProtocol } from "./protocol.ts";
export { EventLog, parseEventLines, EVENT_SCHEMA_VERSION, type RunEvent, type Stage } from "./events.ts";
export { buildReport } from "./report.ts";
export {
  failureModes,
  assignMode,
  modeSignals,
  type FailureModes,
  type FailureMode,
  type FailureModeOptions,
} from "./modes/failure-modes.ts";
