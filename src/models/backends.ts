import { encode as encodePng } from "fast-png";
import { CapabilityError, type Capability } from "../core/capability.ts";
import type { Backend, GenerateOptions, LoadOptions, Model, ModelInput, ModelSpec, Trace } from "../core/model.ts";
import { toRgb } from "./image.ts";
import { planModel, type ModelInspection, type ModelPlan } from "./inspect.ts";
import { loadOrtModel } from "./ort-model.ts";
import type { FileSource, SessionFactory } from "./session.ts";

/** A backend that can tell what it would give for a spec by reading the model's files, before loading anything. */
export interface InspectingBackend extends Backend {
  /** Reads config files and ONNX protobufs (no session) and says what a load would give, and why not more. */
  inspect(spec: ModelSpec, options?: LoadOptions): Promise<ModelInspection>;
}

function isInspecting(backend: Backend): backend is InspectingBackend {
  return typeof (backend as Partial<InspectingBackend>).inspect === "function";
}

/** Why an inspected model lacks `missing`, in a few words for the error message. */
function whyMissing(inspection: ModelInspection, missing: readonly Capability[]): string {
  const reasons: string[] = [];
  if (!inspection.runtime.runs && inspection.runtime.reason) reasons.push(inspection.runtime.reason);
  else {
    if (missing.some((c) => c === "attention" || c === "attention_write")) {
      const a = inspection.attention;
      if (!a.readable || !a.writable)
        reasons.push(
          `${a.file}: ${a.readable ? "the attention-bias edit cannot reach every softmax" : (a.reason ?? "attention not readable")}${a.advice ? ` (what to do: ${a.advice})` : ""}`,
        );
    }
    if (missing.includes("generate"))
      reasons.push(
        inspection.kind === "encoder" ? "an encoder-only model does not generate" : "the graph has no logits output",
      );
    if (missing.includes("hidden_states"))
      reasons.push("no hidden_states outputs, or no onnx/lm_head.onnx for the logit lens");
    if (missing.includes("image")) reasons.push("a text-only model");
  }
  return reasons.join("; ");
}

/**
 * Pairs a spec with a backend, refusing — before any session is created or
 * weight loaded — when the backend cannot give what is wanted: from the
 * backend's declared capabilities (attention from a black-box API), or, for a
 * backend that inspects (ort), from the model's config and ONNX protobufs,
 * with the reason in the message (a fused op it could not decompose, an
 * encoder-only model asked to generate).
 *
 * @example
 * await compose(getSpec("tiny-vlm")!, apiBackend({ baseUrl }), { want: ["attention"] })
 * // → throws CapabilityError: the api backend for tiny-vlm cannot provide 'attention'; …
 */
export async function compose(
  spec: ModelSpec,
  backend: Backend,
  options: LoadOptions & { readonly want?: readonly Capability[] } = {},
): Promise<Model> {
  const want = options.want ?? [];
  if (want.length && isInspecting(backend)) {
    const inspection = await backend.inspect(spec, options);
    const provided = new Set(inspection.capabilities);
    const missing = want.filter((c) => !provided.has(c));
    if (missing.length)
      throw new CapabilityError(
        missing,
        [...provided],
        `the ${backend.kind} backend for ${spec.key} (${whyMissing(inspection, missing)})`,
      );
  } else {
    const provided = backend.provides(spec);
    const missing = want.filter((c) => !provided.has(c));
    if (missing.length)
      throw new CapabilityError(missing, [...provided], `the ${backend.kind} backend for ${spec.key}`);
  }
  const model = await backend.load(spec, options);
  const lacking = want.filter((c) => !model.capabilities.has(c));
  if (lacking.length) {
    await model.dispose();
    throw new CapabilityError(lacking, [...model.capabilities], `${spec.key} as loaded`);
  }
  return model;
}

/**
 * The white-box backend: ONNX Runtime (web in a page or worker, node under
 * Node) through the injected session factory; files through `filesFor(spec)`.
 * It inspects before it loads, and the load reuses what the inspection read.
 */
export function ortBackend(deps: {
  sessions: SessionFactory;
  filesFor: (spec: ModelSpec) => FileSource;
  /** The dtype variant to load (fp32 by default). */
  dtype?: string;
}): InspectingBackend {
  const plans = new WeakMap<ModelSpec, Promise<ModelPlan>>();
  const plan = (spec: ModelSpec) => {
    let p = plans.get(spec);
    if (!p) {
      p = planModel(deps.filesFor(spec), {
        key: spec.key,
        source: spec.source,
        spec,
        ...(deps.dtype ? { dtype: deps.dtype } : {}),
      });
      plans.set(spec, p);
      p.catch(() => plans.delete(spec));
    }
    return p;
  };
  return {
    kind: "ort",
    provides: (spec) => spec.capabilities,
    inspect: async (spec) => (await plan(spec)).inspection,
    async load(spec, options) {
      const planned = plans.get(spec);
      plans.delete(spec); // the plan holds the graphs' bytes: let them go once loaded
      return loadOrtModel(deps.filesFor(spec), deps.sessions, {
        ...options,
        spec,
        key: spec.key,
        source: spec.source,
        ...(deps.dtype ? { dtype: deps.dtype } : {}),
        ...(planned ? { plan: await planned } : {}),
      });
    },
  };
}

/** Where an OpenAI-compatible chat-completions endpoint lives. */
export interface ApiConfig {
  /** e.g. `http://localhost:8000/v1` (vLLM, TGI, Ollama, …). */
  readonly baseUrl: string;
  /** The served model name; defaults to the spec's key. */
  readonly model?: string;
  readonly apiKey?: string;
  /** Injected fetch (defaults to the global one). */
  readonly fetch?: typeof fetch;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function pngOf(image: NonNullable<ModelInput["image"]>): Uint8Array {
  if (image instanceof Uint8Array) {
    toRgb(image); // validates: PNG, within the size limits
    return image;
  }
  const { width, height, rgb } = toRgb(image);
  return encodePng({ width, height, data: rgb, channels: 3, depth: 8 });
}

/**
 * What a black-box backend (an API, transformers.js generation) can give for
 * a spec: answers, from images too when the model takes them — no internals.
 *
 * @example
 * blackBoxCapabilities(getSpec("tiny-vlm")!) // → Set { "generate", "image" }
 */
export function blackBoxCapabilities(spec: ModelSpec): Set<Capability> {
  return new Set<Capability>(spec.modalities.has("image") ? ["generate", "image"] : ["generate"]);
}

/**
 * The black-box backend: an OpenAI-compatible `/chat/completions` endpoint,
 * text and image inputs. It answers; it cannot show internals.
 */
export function apiBackend(config: ApiConfig): Backend {
  const provides = blackBoxCapabilities;
  return {
    kind: "api",
    provides,
    async load(spec) {
      const doFetch = config.fetch ?? fetch;
      const url = `${config.baseUrl.replace(/\/$/, "")}/chat/completions`;
      const capabilities = provides(spec);
      const model: Model = {
        spec,
        capabilities,
        async generate(input: ModelInput, options: GenerateOptions = {}): Promise<string> {
          if (options.attentionBias)
            throw new CapabilityError(["attention_write"], [...capabilities], `the api backend for ${spec.key}`);
          const text = input.prompt.replace(/<image>\s*/g, "").trim();
          const content: unknown[] = [{ type: "text", text }];
          if (input.image !== undefined)
            content.unshift({
              type: "image_url",
              image_url: { url: `data:image/png;base64,${base64(pngOf(input.image))}` },
            });
          const body = {
            model: config.model ?? spec.key,
            messages: [{ role: "user", content: input.image === undefined ? text : content }],
            max_tokens: options.maxNewTokens ?? 32,
            temperature: options.temperature ?? 0,
            ...(options.seed !== undefined ? { seed: options.seed } : {}),
            ...(options.topK !== undefined ? { top_k: options.topK } : {}),
            ...(options.stop?.length ? { stop: options.stop } : {}),
          };
          const response = await doFetch(url, {
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              ...(config.apiKey ? { Authorization: `Bearer ${config.apiKey}` } : {}),
            },
            body: JSON.stringify(body),
            ...(options.signal ? { signal: options.signal } : {}),
          });
          const raw = await response.text();
          if (!response.ok)
            throw new Error(`chat completions at ${url} answered ${response.status}: ${raw.slice(0, 200)}`);
          let parsed: { choices?: { message?: { content?: unknown } }[] };
          try {
            parsed = JSON.parse(raw);
          } catch (error) {
            throw new Error(`chat completions at ${url} did not answer JSON: ${raw.slice(0, 80)}`, { cause: error });
          }
          const answer = parsed.choices?.[0]?.message?.content;
          if (typeof answer !== "string")
            throw new Error(
              `chat completions at ${url}: expected choices[0].message.content, got ${raw.slice(0, 200)}`,
            );
          return answer.trim();
        },
        async forward(): Promise<Trace> {
          throw new CapabilityError(["attention", "logits"], [...capabilities], `the api backend for ${spec.key}`);
        },
        async dispose() {},
      };
      return model;
    },
  };
}
