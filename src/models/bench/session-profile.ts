/**
 * Where a model's time goes, per ONNX session: a `SessionFactory` wrapper that
 * counts runs and milliseconds by the session's file name (vision encoder,
 * token embeddings, decoder, lm head), the same on onnxruntime-node and -web.
 */
import type { SessionFactory } from "../session.ts";

/** Runs and milliseconds per session name. */
export type SessionProfile = Record<string, { runs: number; ms: number }>;

/**
 * `factory`, with every run of every session it makes counted into `profile`.
 *
 * @example
 * const profile: SessionProfile = {};
 * const model = await loadOrtModel(files, profiledSessions(nodeSessions, profile));
 * // profile["onnx/decoder_model_merged.onnx"] → { runs: 12, ms: 30.5 }
 */
export function profiledSessions(factory: SessionFactory, profile: SessionProfile): SessionFactory {
  return async (bytes, options) => {
    const session = await factory(bytes, options);
    const name = options.name;
    return {
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      async run(feeds, fetches) {
        const t0 = performance.now();
        try {
          return await session.run(feeds, fetches);
        } finally {
          const entry = (profile[name] ??= { runs: 0, ms: 0 });
          entry.runs++;
          entry.ms += performance.now() - t0;
        }
      },
      release: () => session.release(),
    };
  };
}

/**
 * `target` with every method call counted and timed into `profile` under `prefix.method` (until its promise
 * settles, for async methods).
 *
 * @example const store = profiledObject(fileStore, profile, "store"); // profile["store.appendItems"] → { runs, ms }
 */
export function profiledObject<T extends object>(target: T, profile: SessionProfile, prefix: string): T {
  return new Proxy(target, {
    get(obj, key, receiver) {
      const value: unknown = Reflect.get(obj, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        const t0 = performance.now();
        const done = () => {
          const entry = (profile[`${prefix}.${key}`] ??= { runs: 0, ms: 0 });
          entry.runs++;
          entry.ms += performance.now() - t0;
        };
        const out = (value as (...a: unknown[]) => unknown).apply(obj, args);
        if (out instanceof Promise) return out.finally(done);
        done();
        return out;
      };
    },
  });
}

/** The profile as lines, biggest first. */
export function profileLines(profile: SessionProfile): string[] {
  return Object.entries(profile)
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(
      ([name, p]) =>
        `${name.padEnd(44)} ${String(p.runs).padStart(6)} × ${(p.ms / Math.max(1, p.runs)).toFixed(3).padStart(8)} ms = ${p.ms.toFixed(0).padStart(7)} ms`,
    );
}
