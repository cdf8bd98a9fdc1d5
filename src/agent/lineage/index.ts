export {
  parseLineageRecord,
  type LineageRecord,
  type LineageRead,
  type LineageStore,
  type PromotionEvidence,
} from "./record.ts";
export { promote, promotable, promotedId, PromotionRefused, type PromotionOptions } from "./promote.ts";
export { candidateFor, wrapRepair, loadPromoted } from "./wrapper.ts";
export { lineageChain, lineageLeaves, type LineageStep } from "./chain.ts";
