import { editAttention, readOnnxGraph, discoverAttention } from "./onnx-graph.ts";

/** The part of the Web Cache API transformers.js asks of `env.customCache`. */
export interface CacheLike {
  match(request: string): Promise<Response | undefined>;
  put(request: string, response: Response): Promise<void>;
}

/** Decoder files of transformers.js's layouts (any dtype suffix); encoders and embeddings are left alone. */
export const DECODER_FILE = /(^|\/)onnx\/(decoder_model_merged|model|decoder_model)(_[a-z0-9]+)?\.onnx$/;

/**
 * A transformers.js `env.customCache` that hands out decoder graphs with
 * their attention softmaxes tapped as `attentions.{i}` outputs, so a hub or
 * local model loaded through transformers.js returns attention from a plain
 * forward. `read` gets the original bytes for a cache key (a local path or a
 * URL) or undefined when it cannot; every other file, and decoders whose
 * attention is fused or already exported, pass through untouched.
 *
 * @example
 * env.useCustomCache = true;
 * env.customCache = attentionTapCache(async (key) => new Uint8Array(await (await fetch(key)).arrayBuffer()));
 * const out = await model({ input_ids, attention_mask }); // out["attentions.0"] …
 */
export function attentionTapCache(read: (key: string) => Promise<Uint8Array | undefined>): CacheLike & {
  /** Decoders tapped so far: cache key → number of attention outputs added. */
  readonly tapped: Map<string, number>;
} {
  const tapped = new Map<string, number>();
  const done = new Map<string, Uint8Array>();
  const latest = new Map<string, Uint8Array>();
  const response = (bytes: Uint8Array) =>
    new Response(bytes.slice().buffer as ArrayBuffer, { headers: { "Content-Type": "application/octet-stream" } });
  return {
    tapped,
    async match(key) {
      if (!DECODER_FILE.test(key)) return undefined;
      const tail = key.slice(key.lastIndexOf("onnx/"));
      let bytes = done.get(key);
      if (!bytes) {
        const original = await read(key).catch(() => undefined);
        // transformers.js asks again under the remote cache key right after a local hit: answer with that tap.
        if (!original) return latest.get(tail) && response(latest.get(tail)!);
        const graph = readOnnxGraph(original);
        if (graph.outputs.some((o) => o.startsWith("attentions.")) || discoverAttention(graph).unreadable)
          return undefined;
        const edit = editAttention(original, { tap: true });
        tapped.set(key, edit.attentionOutputs.length);
        bytes = edit.bytes;
        done.set(key, bytes);
      }
      latest.set(tail, bytes);
      return response(bytes);
    },
    async put() {},
  };
}
