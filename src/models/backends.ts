import { encode as encodePng } from "fast-png";
import { CapabilityError, type Capability } from "../core/capability.ts";
import type { Backend, GenerateOptions, LoadOptions, Model, ModelInput, ModelSpec, Trace } from "../core/model.ts";
import { toRgb } from "./image.ts";
import { loadOrtModel } from "./ort-model.ts";
import type { FileSource, SessionFactory } from "./session.ts";

/**
 * Pairs a spec with a backend, refusing — before any file or weight is
 * fetched — when the backend cannot give what is wanted (e.g. attention from
 * a black-box API). A white-box load whose graph turns out to have fused
 * attention is refused after loading, with the reason.
 *
 * @example
 * await compose(getSpec("tiny-vlm")!, apiBackend({ baseUrl }), { want: ["attention"] })
 * // → throws CapabilityError: api backend for tiny-vlm cannot provide 'attention'; …
 */
export async function compose(
  spec: ModelSpec,
  backend: Backend,
  options: LoadOptions & { readonly want?: readonly Capability[] } = {},
): Promise<Model> {
  const want = options.want ?? [];
  const provided = backend.provides(spec);
  const missing = want.filter((c) => !provided.has(c));
  if (missing.length) throw new CapabilityError(missing, [...provided], `the ${backend.kind} backend for ${spec.key}`);
  const model = await backend.load(spec, options);
  const lacking = want.filter((c) => !model.capabilities.has(c));
  if (lacking.length) {
    await model.dispose();
    throw new CapabilityError(lacking, [...model.capabilities], `${spec.key} as loaded (see its attention status)`);
  }
  return model;
}

/**
 * The white-box backend: ONNX Runtime (web in a page or worker, node under
 * Node) through the injected session factory; files through `filesFor(spec)`.
 */
export function ortBackend(deps: { sessions: SessionFactory; filesFor: (spec: ModelSpec) => FileSource }): Backend {
  return {
    kind: "ort",
    provides: (spec) => spec.capabilities,
    load: (spec, options) =>
      loadOrtModel(deps.filesFor(spec), deps.sessions, { ...options, spec, key: spec.key, source: spec.source }),
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
