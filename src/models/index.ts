/**
 * The model runtime, isomorphic part: specs, the ONNX Runtime model (with
 * platform seams injected), graph tap/edit, reductions. Platform entries:
 * `load.node.ts` (onnxruntime-node + fs) and `ort-session.browser.ts`.
 */
export { listSpecs, getSpec, inferSpec, textConfig, BUNDLED_SPECS } from "./specs/index.ts";
export {
  loadOrtModel,
  attentionSource,
  OrtModel,
  CancelledError,
  type AttentionSource,
  type Generation,
  type OrtGenerateOptions,
  type OrtLoadOptions,
} from "./ort-model.ts";
export {
  readOnnxGraph,
  discoverAttention,
  editAttention,
  type AttentionDiscovery,
  type AttentionEdit,
  type EditedGraph,
} from "./onnx-graph.ts";
export { prepareAttention, type PreparedAttention, type PrepareOptions } from "./prepare-attention.ts";
export { decomposeFusedAttention, type FusedOpReport } from "./fused/decompose.ts";
export { inlineFunctions } from "./inline-functions.ts";
export {
  describeAttention,
  type AttentionStatus,
  type AttentionSiteStatus,
  type AttentionPlaceStatus,
} from "./attention-status.ts";
export {
  inspectModel,
  inspectOnnxFile,
  planModel,
  formatInspection,
  plainSpec,
  type ModelInspection,
  type ModelFileReport,
  type PlainModelSpec,
  type RuntimeSupport,
} from "./inspect.ts";
export { resolveLayout, modelKind, DTYPE_SUFFIXES, type ModelKind, type FileRole, type Layout } from "./layout.ts";
export { wrap, wrapSession, type WrapOptions } from "./wrap.ts";
export { httpFiles, hubFileList } from "./http-files.ts";
export { MissingFileError, type FileSource, type Session, type SessionFactory, type PlainTensor } from "./session.ts";
export { toRgb, pixelValues, imageProcessing, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE } from "./image.ts";
