import type { AttentionStatus } from "./attention-status.ts";
import { prepareAttention } from "./prepare-attention.ts";

/** The part of the Web Cache API transformers.js asks of `env.customCache`. */
export interface CacheLike {
  match(request: string): Promise<Response | undefined>;
  put(request: string, response: Response): Promise<void>;
}

/** Decoder files of transformers.js's layouts (any dtype suffix); encoders and embeddings are left alone. */
export const DECODER_FILE = /(^|\/)onnx\/(decoder_model_merged|model|decoder_model)(_[a-z0-9]+)?\.onnx$/;

/**
 * A transformers.js `env.customCache` that hands out decoder graphs with
 * their attention softmaxes tapped as `attentions.{i}` outputs (inside a
 * merged decoder's branches and local functions too, fused attention ops
 * decomposed first), so a hub or local model loaded through transformers.js
 * returns attention from a plain forward. `read` gets the original bytes for
 * a cache key (a local path or a URL) or undefined when it cannot; every other
 * file, and decoders whose attention is already exported or cannot be read,
 * pass through untouched (`statuses` says which and why).
 *
 * @example
 * env.useCustomCache = true;
 * env.customCache = attentionTapCache(async (key) => new Uint8Array(await (await fetch(key)).arrayBuffer()));
 * const out = await model({ input_ids, attention_mask }); // out["attentions.0"] …
 */
export function attentionTapCache(
  read: (key: string) => Promise<Uint8Array | undefined>,
  options: { readonly heads?: number } = {},
): CacheLike & {
  /** Decoders tapped so far: cache key → number of attention outputs added. */
  readonly tapped: Map<string, number>;
  /** Every decoder looked at: cache key → its attention status. */
  readonly statuses: Map<string, AttentionStatus>;
} {
  const tapped = new Map<string, number>();
  const statuses = new Map<string, AttentionStatus>();
  const done = new Map<string, Uint8Array>();
  const latest = new Map<string, Uint8Array>();
  const response = (bytes: Uint8Array) =>
    new Response(bytes.slice().buffer as ArrayBuffer, { headers: { "Content-Type": "application/octet-stream" } });
  return {
    tapped,
    statuses,
    async match(key) {
      if (!DECODER_FILE.test(key)) return undefined;
      const tail = key.slice(key.lastIndexOf("onnx/"));
      let bytes = done.get(key);
      if (!bytes) {
        const original = await read(key).catch(() => undefined);
        // transformers.js asks again under the remote cache key right after a local hit: answer with that tap.
        if (!original) return latest.get(tail) && response(latest.get(tail)!);
        const prepared = prepareAttention(original, { file: tail, ...(options.heads ? { heads: options.heads } : {}) });
        statuses.set(key, prepared.status);
        if (prepared.status.source === "exported" || !prepared.status.readable) return undefined;
        tapped.set(key, prepared.attentionOutputs.length);
        bytes = prepared.bytes;
        done.set(key, bytes);
      }
      latest.set(tail, bytes);
      return response(bytes);
    },
    async put() {},
  };
}
