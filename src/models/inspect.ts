/**
 * What a model folder (or hub id) is and what the white-box runtime can read
 * from it, decided from its config files and the ONNX protobufs alone —
 * before any session is created or weight is loaded. The same inspection
 * drives `evalrx model inspect`, the page's Models screen, `compose()`'s
 * negotiation and the loader.
 */
import type { Capability } from "../core/capability.ts";
import type { Modality, ModelSpec } from "../core/model.ts";
import { describeAttention, type AttentionStatus } from "./attention-status.ts";
import { resolveLayout, type FileRole, type Layout, type ModelKind } from "./layout.ts";
import { readOnnxGraph, type OnnxGraph } from "./onnx-read.ts";
import { prepareAttention, type PreparedAttention } from "./prepare-attention.ts";
import { MissingFileError, readJson, type FileSource } from "./session.ts";
import { GRID_IMAGE_FAMILIES, inferSpec, isImageModel, textConfig, type TextConfig } from "./specs/infer.ts";
import { getSpec } from "./specs/index.ts";

type Json = Record<string, unknown>;

/** A `ModelSpec` as plain data (arrays instead of sets), for JSON and worker messages. */
export type PlainModelSpec = Omit<ModelSpec, "modalities" | "capabilities"> & {
  readonly modalities: readonly Modality[];
  readonly capabilities: readonly Capability[];
};

/** A spec as plain data. */
export function plainSpec(spec: ModelSpec): PlainModelSpec {
  return { ...spec, modalities: [...spec.modalities], capabilities: [...spec.capabilities] };
}

/** One ONNX file of the model, as read from its protobuf. */
export interface ModelFileReport {
  readonly path: string;
  readonly role: FileRole;
  /** The dtype variant its name says (`fp32`, `fp16`, `q8`, `q4`, …). */
  readonly dtype: string;
  readonly bytes: number;
  /** The default-domain opset, and the other domains it imports (`com.microsoft`, …). */
  readonly opset: number;
  readonly domains: readonly string[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** Files holding weights stored outside the model (`*.onnx_data`). */
  readonly externalData: readonly string[];
  /** The attention status of this graph (decoder, encoders). */
  readonly attention?: AttentionStatus;
}

/** What the white-box (ort) runtime can do with the model. */
export interface RuntimeSupport {
  /** True when the ort runtime loads and runs this model. */
  readonly runs: boolean;
  /** Why it does not, and what to use instead. */
  readonly reason?: string;
}

/** Everything `inspectModel` learned, as plain data. */
export interface ModelInspection {
  readonly key: string;
  readonly source: string;
  readonly family: string;
  readonly kind: ModelKind;
  /** True when the spec is a registered one (bundled), false when inferred from config.json. */
  readonly registered: boolean;
  /** The spec (sizes from config.json; capabilities from the graphs). Absent when config.json lacks a size. */
  readonly spec?: PlainModelSpec;
  readonly files: readonly ModelFileReport[];
  /** Roles no file was found for, with the names tried. */
  readonly missing: readonly { readonly role: FileRole; readonly tried: readonly string[] }[];
  /** What the ort runtime can give for this model (what `compose(spec, ortBackend, { want })` negotiates on). */
  readonly capabilities: readonly Capability[];
  /** The attention status of the graph forwards run through (the decoder; an encoder-only model's encoder). */
  readonly attention: AttentionStatus;
  readonly runtime: RuntimeSupport;
  /** Anything else worth saying (a spec that could not be inferred, a dtype fallback). */
  readonly notes: readonly string[];
}

/** How to inspect. */
export interface InspectOptions {
  /** Registry key or folder name for the spec. */
  readonly key?: string;
  /** Where the files come from (for messages and the spec's `source`). */
  readonly source?: string;
  /** A registered spec to use instead of inferring one. */
  readonly spec?: ModelSpec;
  /** The dtype variant to prefer (default fp32; another is taken when it is missing). */
  readonly dtype?: string;
  /** The folder's file list, when known (a folder, dropped files): nothing is read to find files. */
  readonly list?: readonly string[];
}

/** What the loader needs to go on without reading anything twice. */
export interface LoadParts {
  readonly spec: ModelSpec;
  readonly config: Json;
  readonly text: TextConfig;
  readonly layout: Layout;
  readonly preprocessor?: Json;
  /** The primary graph (decoder, or the encoder of an encoder-only model), prepared for attention. */
  readonly primary: { readonly path: string; readonly prepared: PreparedAttention; readonly graph: OnnxGraph };
  /** Raw bytes of the other files read while inspecting, by path. */
  readonly bytes: ReadonlyMap<string, Uint8Array>;
}

/** An inspection, and either what the loader needs or why the model cannot be loaded. */
export interface ModelPlan {
  readonly inspection: ModelInspection;
  readonly load?: LoadParts;
  /** Why `load` is absent: no primary graph, or a spec that could not be inferred. */
  readonly problem?: string;
}

async function readOptional(files: FileSource, path: string): Promise<Json | undefined> {
  try {
    return await readJson(files, path);
  } catch (error) {
    if (error instanceof MissingFileError) return undefined;
    throw error;
  }
}

async function readConfig(files: FileSource, where: string): Promise<Json> {
  try {
    return await readJson(files, "config.json");
  } catch (error) {
    if (error instanceof MissingFileError)
      throw new Error(
        `${where} has no config.json: not a model folder (expected config.json, tokenizer.json and onnx/*.onnx)`,
        { cause: error },
      );
    throw error;
  }
}

function fileReport(path: string, role: FileRole, dtype: string, bytes: Uint8Array, graph: OnnxGraph) {
  return {
    path,
    role,
    dtype,
    bytes: bytes.length,
    opset: graph.opset,
    domains: [...graph.opsets.keys()].filter((d) => d !== ""),
    inputs: graph.inputs,
    outputs: graph.outputs,
    externalData: graph.externalData,
  };
}

/** Attention tensors a config implies for a graph of this role, and the heads to reshape 3-D ones with. */
function expectation(role: FileRole, kind: ModelKind, config: Json, text: TextConfig | undefined) {
  const vision = (config.vision_config as Json | undefined) ?? {};
  const n = (v: unknown) => (typeof v === "number" ? v : 0);
  if (role === "vision_encoder")
    return {
      layers: n(vision.num_hidden_layers),
      expected: n(vision.num_hidden_layers),
      heads: n(vision.num_attention_heads),
    };
  if (role === "embed_tokens") return { layers: 0, expected: 0, heads: 0 };
  if (!text) return { layers: 0, expected: 0, heads: 0 };
  if (kind === "encoder-decoder" || (kind === "image-text" && role === "encoder")) {
    if (role === "encoder") {
      const e = text.encoder ?? { layers: text.layers, heads: text.heads };
      return { layers: e.layers, expected: e.layers, heads: e.heads };
    }
    return { layers: text.layers, expected: 2 * text.layers, heads: text.heads };
  }
  return { layers: text.layers, expected: text.layers, heads: text.heads };
}

function runtimeSupport(kind: ModelKind, family: string, spec: ModelSpec | undefined): RuntimeSupport {
  if (!spec) return { runs: false, reason: "its config.json lacks sizes the runtime needs (see the notes)" };
  if (kind === "encoder-decoder")
    return {
      runs: false,
      reason: `the ort runtime runs decoder-only and encoder-only models; ${family} is an encoder-decoder: generate with the transformers backend (its attention is read from the graphs above)`,
    };
  if (kind === "image-text" && (!GRID_IMAGE_FAMILIES.has(family) || !spec.image))
    return {
      runs: false,
      reason: `the ort runtime prepares images for llava-layout models only; ${family}'s processor is not reproduced: generate with the transformers backend (its attention is read from the graphs above)`,
    };
  return { runs: true };
}

function unreadableStatus(file: string, reason: string, layers: number): AttentionStatus {
  return {
    file,
    source: "unreadable",
    found: 0,
    layers,
    expected: layers,
    readable: false,
    writable: false,
    sites: [],
    fused: [],
    inlined: [],
    unreachable: [],
    reason,
  };
}

/**
 * Inspects a model folder through `files` and returns the plan the loader
 * follows: the inspection, the spec, and the primary graph already prepared
 * (functions inlined, fused attention decomposed, softmaxes tapped). Reads
 * config files and ONNX protobufs; creates no session.
 */
export async function planModel(files: FileSource, options: InspectOptions = {}): Promise<ModelPlan> {
  const where = options.source ?? options.key ?? "the model folder";
  const config = await readConfig(files, where);
  const family = typeof config.model_type === "string" ? config.model_type : "unknown";
  const notes: string[] = [];
  const image = isImageModel(config) && GRID_IMAGE_FAMILIES.has(family);
  const preprocessor = image ? await readJson(files, "preprocessor_config.json") : undefined;
  const processor = image ? await readOptional(files, "processor_config.json") : undefined;
  let text: TextConfig | undefined;
  let inferred: ModelSpec | undefined;
  try {
    text = textConfig(config);
    inferred =
      options.spec ?? inferSpec(options.key ?? where, options.source ?? where, config, preprocessor, processor);
  } catch (error) {
    notes.push(`no spec: ${(error as Error).message}`);
  }
  const list = options.list ?? (await files.list?.());
  const layout = await resolveLayout(files, config, {
    ...(options.dtype ? { dtype: options.dtype } : {}),
    ...(list ? { list } : {}),
  });
  const kind = layout.kind;
  if (options.dtype)
    for (const f of layout.files)
      if (f.dtype !== options.dtype) notes.push(`${f.path}: no ${options.dtype} variant, took ${f.dtype}`);
  const reports: ModelFileReport[] = [];
  const bytes = new Map<string, Uint8Array>();
  let primary: LoadParts["primary"] | undefined;
  const primaryRole: FileRole = kind === "encoder" ? "encoder" : "decoder";
  for (const f of layout.files) {
    const raw = f.bytes ?? (await files(f.path));
    let graph: OnnxGraph;
    try {
      graph = readOnnxGraph(raw);
    } catch (error) {
      throw new Error(`${f.path} is not a readable ONNX model: ${(error as Error).message}`, { cause: error });
    }
    const base = fileReport(f.path, f.role, f.dtype, raw, graph);
    if (f.role === "embed_tokens") {
      reports.push(base);
      bytes.set(f.path, raw);
      continue;
    }
    const want = expectation(f.role, kind, config, text);
    const prepared = prepareAttention(raw, {
      file: f.path,
      layers: want.layers,
      expected: want.expected,
      ...(want.heads ? { heads: want.heads } : {}),
    });
    reports.push({ ...base, attention: prepared.status });
    if (f.role === primaryRole) primary = { path: f.path, prepared, graph };
    else bytes.set(f.path, raw);
  }
  const layers = text?.layers ?? 0;
  const missingPrimary = layout.missing.find((m) => m.role === primaryRole);
  const attention =
    primary?.prepared.status ??
    unreadableStatus(
      missingPrimary ? missingPrimary.tried.join(" or ") : "onnx/model.onnx",
      missingPrimary ? `no ${primaryRole} file: looked for ${missingPrimary.tried.join(", ")}` : "no graph",
      layers,
    );
  const runtime = runtimeSupport(kind, family, inferred);
  const capabilities = new Set<Capability>();
  if (runtime.runs && primary) {
    const outputs = new Set(primary.graph.outputs);
    if (outputs.has("logits")) {
      capabilities.add("logits");
      if (kind !== "encoder") capabilities.add("generate");
    }
    if (kind === "image-text") capabilities.add("image");
    if (attention.readable) capabilities.add("attention");
    if (attention.writable) capabilities.add("attention_write");
    if (primary.graph.outputs.some((o) => /^hidden_states\.\d+$/.test(o))) {
      const head = list
        ? list.includes("onnx/lm_head.onnx")
          ? true
          : undefined
        : await files("onnx/lm_head.onnx").catch(() => undefined);
      if (head instanceof Uint8Array) bytes.set("onnx/lm_head.onnx", head);
      if (head) capabilities.add("hidden_states");
    }
  }
  if (!runtime.runs && runtime.reason) notes.push(runtime.reason);
  const spec: ModelSpec | undefined = inferred ? { ...inferred, capabilities } : undefined;
  const inspection: ModelInspection = {
    key: options.key ?? options.spec?.key ?? where,
    source: options.source ?? options.spec?.source ?? where,
    family,
    kind,
    registered: !!options.spec && getSpec(options.spec.key) !== undefined,
    ...(spec ? { spec: plainSpec(spec) } : {}),
    files: reports,
    missing: layout.missing,
    capabilities: [...capabilities],
    attention,
    runtime,
    notes,
  };
  if (!primary) return { inspection, problem: `${where} lacks its ${primaryRole} graph: ${attention.reason}` };
  if (!spec || !text) return { inspection, problem: `${where}: ${notes.join("; ")}` };
  return {
    inspection,
    load: { spec, config, text, layout, ...(preprocessor ? { preprocessor } : {}), primary, bytes },
  };
}

/**
 * Inspects a model folder or hub id through `files`: its spec (registered or
 * inferred), its ONNX files and what each holds, the capabilities the ort
 * runtime can give, and the attention status — how many attention tensors a
 * forward returns against the layers the config declares, where each was
 * found, which fused ops were met and whether they were decomposed, and what
 * to do when attention cannot be read. Reads the config files and the ONNX
 * protobufs; creates no session.
 *
 * @example
 * const report = await inspectModel(nodeFiles("models/tiny-lm"), { key: "tiny-lm" });
 * report.attention.found // → 2; report.capabilities → ["logits", "generate", "attention", "attention_write", "hidden_states"]
 */
export async function inspectModel(files: FileSource, options: InspectOptions = {}): Promise<ModelInspection> {
  return (await planModel(files, options)).inspection;
}

/**
 * Inspects one ONNX file on its own (no config, no tokenizer): what the graph
 * holds and what attention it gives. It cannot be run as a model, so the
 * capabilities are what the graph allows.
 *
 * @example
 * inspectOnnxFile(bytes, "decoder_model_merged.onnx").attention.found // → 2
 */
export function inspectOnnxFile(bytes: Uint8Array, path: string): ModelInspection {
  const graph = readOnnxGraph(bytes);
  const prepared = prepareAttention(bytes, { file: path });
  const role: FileRole = /encoder/.test(path) && !/decoder/.test(path) ? "encoder" : "decoder";
  const capabilities: Capability[] = [];
  if (graph.outputs.includes("logits")) capabilities.push("logits");
  if (prepared.status.readable) capabilities.push("attention");
  if (prepared.status.writable) capabilities.push("attention_write");
  return {
    key: path,
    source: path,
    family: "unknown",
    kind: role === "encoder" ? "encoder" : "decoder",
    registered: false,
    files: [{ ...fileReport(path, role, "fp32", bytes, graph), attention: prepared.status }],
    missing: [],
    capabilities,
    attention: prepared.status,
    runtime: {
      runs: false,
      reason: "a single ONNX file: the runtime loads model folders (config.json, tokenizer.json, onnx/)",
    },
    notes: [
      "a single graph, without config.json: the layer count is unknown (attention.layers is 0) and batched 3-D attention stays [batch·heads, q, k]",
    ],
  };
}

/** A short text report of an inspection, as `evalrx model inspect` prints it. */
export function formatInspection(r: ModelInspection): string {
  const lines: string[] = [];
  lines.push(`${r.key} — ${r.family} (${r.kind}), spec ${r.registered ? "registered" : "inferred from config.json"}`);
  lines.push(`source: ${r.source}`);
  if (r.spec)
    lines.push(
      `sizes: ${r.spec.layers} layers, ${r.spec.heads} heads (${r.spec.kvHeads} KV), hidden ${r.spec.hiddenSize}, vocabulary ${r.spec.vocabSize}, context ${r.spec.contextLength === Number.MAX_SAFE_INTEGER ? "unbounded" : r.spec.contextLength}${r.spec.image ? `, image grid ${r.spec.image.grid.join("×")}` : ""}`,
    );
  lines.push(`capabilities: ${r.capabilities.length ? r.capabilities.join(", ") : "none on the ort runtime"}`);
  lines.push(`attention: ${describeAttention(r.attention)}`);
  if (r.attention.advice) lines.push(`  what to do: ${r.attention.advice}`);
  lines.push("files:");
  for (const f of r.files) {
    const mb = (f.bytes / 1e6).toFixed(f.bytes < 1e6 ? 3 : 1);
    lines.push(
      `  ${f.path} (${f.role}, ${f.dtype}, ${mb} MB, opset ${f.opset}${f.domains.length ? ` + ${f.domains.join(", ")}` : ""})`,
    );
    if (f.externalData.length) lines.push(`    weights in ${f.externalData.join(", ")}`);
    if (f.attention) {
      lines.push(`    attention: ${describeAttention(f.attention)}`);
      for (const s of f.attention.sites)
        lines.push(
          `      ${s.output}: ${s.places.map((p) => `${p.where}${p.layout === "3-D batched" ? " (3-D batched)" : ""}${p.origin ? ` [${p.origin}]` : ""}`).join("; ")}`,
        );
      for (const op of f.attention.fused)
        lines.push(
          `      ${op.op} '${op.node}' (${op.where}): ${op.decomposed ? `decomposed (${op.variant})` : `not decomposed — ${op.reason}`}`,
        );
      for (const fn of f.attention.inlined) lines.push(`      function ${fn.function}: inlined at ${fn.calls} call(s)`);
    }
  }
  for (const m of r.missing) lines.push(`  missing ${m.role}: looked for ${m.tried.join(", ")}`);
  if (r.runtime.reason) lines.push(`runtime: ${r.runtime.reason}`);
  for (const n of r.notes) if (n !== r.runtime.reason) lines.push(`note: ${n}`);
  return lines.join("\n");
}
