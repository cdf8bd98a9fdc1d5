/**
 * ONNX graphs as the runtime reads and edits them: reading the protobuf
 * (`onnx-read.ts`), finding and tapping attention (`attention-graph.ts`).
 * One entry so callers need not know how the code is split.
 */
export {
  readOnnxGraph,
  walkNodes,
  describeScope,
  attribute,
  functionKey,
  type OnnxGraph,
  type OnnxNode,
  type OnnxAttribute,
  type OnnxFunction,
  type GraphView,
  type TensorInfo,
  type ScopeStep,
} from "./onnx-read.ts";
export {
  discoverAttention,
  editAttention,
  fusedAttentionOps,
  FUSED_ATTENTION,
  type AttentionDiscovery,
  type AttentionEdit,
  type AttentionPlace,
  type AttentionSoftmax,
  type EditedGraph,
  type UnreadableAttention,
} from "./attention-graph.ts";
