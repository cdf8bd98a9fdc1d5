/**
 * The model runtime, isomorphic part: specs, the ONNX Runtime model (with
 * platform seams injected), graph tap/edit, reductions. Platform entries:
 * `load.node.ts` (onnxruntime-node + fs) and `ort-session.browser.ts`.
 */
export { listSpecs, getSpec, inferSpec, textConfig, BUNDLED_SPECS } from "./specs/index.ts";
export {
  loadOrtModel,
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
export { MissingFileError, type FileSource, type Session, type SessionFactory, type PlainTensor } from "./session.ts";
export { toRgb, pixelValues, imageProcessing, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE } from "./image.ts";
