import type { ModelSpec } from "../../core/model.ts";
import type { PlainModelSpec } from "../../models/inspect.ts";
import type { BackendChoice, EngineCheck } from "../../models/backend-choice.ts";
import type { ModelStatus } from "../../../workers/model.worker.ts";

/** A spec as plain JSON (sets as arrays), to keep in localStorage and show. */
export type SpecView = PlainModelSpec;

/**
 * A spec as plain JSON. (inspect.ts has the same one-liner; importing it would
 * pull the graph inspection into the page's main bundle.)
 *
 * @example specView(getSpec("tiny-lm")!).modalities // ["text"]
 */
export function specView(spec: ModelSpec): SpecView {
  return { ...spec, modalities: [...spec.modalities], capabilities: [...spec.capabilities] };
}

/** What the app remembers of a model it loaded: shown on the Models page even when it is not loaded. */
export interface ModelSummary {
  /** `sourceName` of where it came from. */
  readonly name: string;
  readonly backend: ModelStatus["backend"];
  readonly spec: SpecView;
  /** What it gave when loaded with `backend`. */
  readonly capabilities: readonly string[];
  /** The attention status as the worker reported it: the full one when the runtime gave it, else the short form. */
  readonly attention: NonNullable<ModelStatus["attentionStatus"]> | ModelStatus["attention"];
  readonly choice: BackendChoice;
  /** Bytes of each file read. */
  readonly fileBytes: Readonly<Record<string, number>>;
  readonly bytes: number;
  readonly loadedAt: string;
}

/**
 * What to remember of a model just loaded from `name`.
 *
 * @example summarize("bundled:tiny-lm", status, new Date()).bytes // sum of its files' sizes
 */
export function summarize(name: string, status: ModelStatus, now: Date = new Date()): ModelSummary {
  const bytes = Object.values(status.fileBytes).reduce((sum, n) => sum + n, 0);
  return {
    name,
    backend: status.backend,
    spec: specView(status.spec),
    capabilities: [...status.capabilities],
    attention: status.attentionStatus ?? status.attention,
    choice: status.choice,
    fileBytes: status.fileBytes,
    bytes,
    loadedAt: now.toISOString(),
  };
}

/** Keys in localStorage. */
export const SUMMARIES_KEY = "evalrx:model-summaries";
export const ENGINE_CHECKS_KEY = "evalrx:engine-checks";
/** How many engine checks are remembered (one per adapter × ONNX Runtime version × thread count). */
const KEEP_CHECKS = 6;

function parseObject(raw: string | null): Record<string, unknown> {
  try {
    const value: unknown = raw === null ? {} : JSON.parse(raw);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Remembered summaries, by name; entries that are not summaries are dropped
 * (a hand-edited or older entry never breaks the page).
 *
 * @example readSummaries('{"bundled:tiny-lm": 3}') // {}
 */
export function readSummaries(raw: string | null): Record<string, ModelSummary> {
  const out: Record<string, ModelSummary> = {};
  for (const [name, value] of Object.entries(parseObject(raw))) {
    const s = value as Partial<ModelSummary> | null;
    if (s && typeof s === "object" && s.name === name && s.spec && typeof s.spec.family === "string" && s.attention)
      out[name] = s as ModelSummary;
  }
  return out;
}

/**
 * Remembered engine checks, newest first; entries without a key, device and
 * timings are dropped.
 *
 * @example readEngineChecks(null) // []
 */
export function readEngineChecks(raw: string | null): EngineCheck[] {
  return Object.values(parseObject(raw))
    .filter(
      (c): c is EngineCheck =>
        !!c &&
        typeof (c as EngineCheck).key === "string" &&
        ((c as EngineCheck).device === "wasm" || (c as EngineCheck).device === "webgpu") &&
        typeof (c as EngineCheck).wasmMs === "number" &&
        typeof (c as EngineCheck).logitScale === "number" &&
        typeof (c as EngineCheck).reason === "string",
    )
    .sort((a, b) => String(b.measuredAt).localeCompare(String(a.measuredAt)));
}

/**
 * The remembered checks with `check` added (replacing one of the same key),
 * the newest few kept, as the JSON to store.
 *
 * @example JSON.parse(rememberEngineCheck(null, check))[check.key].device // "wasm"
 */
export function rememberEngineCheck(raw: string | null, check: EngineCheck): string {
  const kept = [check, ...readEngineChecks(raw).filter((c) => c.key !== check.key)].slice(0, KEEP_CHECKS);
  return JSON.stringify(Object.fromEntries(kept.map((c) => [c.key, c])));
}
