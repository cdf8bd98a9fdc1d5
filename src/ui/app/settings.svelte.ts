import { DEFAULT_HUB, normalizeHub } from "../../models/hub.ts";

/** Which engine models run on: the measured choice ("auto"), or one the user insists on. */
export type DevicePreference = "auto" | "wasm" | "webgpu";

/** What the app remembers between visits (localStorage): small, validated on read, defaults documented here. */
export interface SettingsData {
  /** Engine for models: "auto" (default) runs the startup check and takes its choice. */
  readonly device: DevicePreference;
  /** Default drop that matters when comparing or gating two runs (default 0.03: three points). */
  readonly tolerance: number;
  /** Significance level of comparisons and gates (default 0.05). */
  readonly alpha: number;
  /** Where hub ids are downloaded from (default https://huggingface.co; a mirror or a local hub-shaped server). */
  readonly hub: string;
}

export const DEFAULT_SETTINGS: SettingsData = { device: "auto", tolerance: 0.03, alpha: 0.05, hub: DEFAULT_HUB };

const KEY = "evalrx:settings";

/**
 * Reads stored settings, keeping every valid field and replacing each invalid
 * one by its default (a hand-edited or older entry never breaks the app).
 *
 * @example readSettings('{"device":"wasm","tolerance":7}') // { device: "wasm", tolerance: 0.03, alpha: 0.05 }
 */
export function readSettings(raw: string | null): SettingsData {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = raw === null ? {} : JSON.parse(raw);
    if (value && typeof value === "object" && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // a broken entry: defaults
  }
  const share = (v: unknown, fallback: number) =>
    typeof v === "number" && Number.isFinite(v) && v > 0 && v < 1 ? v : fallback;
  const hub = (v: unknown) => {
    try {
      return typeof v === "string" ? normalizeHub(v) : DEFAULT_SETTINGS.hub;
    } catch {
      return DEFAULT_SETTINGS.hub;
    }
  };
  return {
    device: parsed["device"] === "wasm" || parsed["device"] === "webgpu" ? parsed["device"] : "auto",
    tolerance: share(parsed["tolerance"], DEFAULT_SETTINGS.tolerance),
    alpha: share(parsed["alpha"], DEFAULT_SETTINGS.alpha),
    hub: hub(parsed["hub"]),
  };
}

/** The user's settings as state; `update` validates, applies and remembers. */
export class Settings {
  device = $state<DevicePreference>(DEFAULT_SETTINGS.device);
  tolerance = $state(DEFAULT_SETTINGS.tolerance);
  alpha = $state(DEFAULT_SETTINGS.alpha);
  hub = $state(DEFAULT_SETTINGS.hub);
  readonly #storage: Pick<Storage, "getItem" | "setItem"> | undefined;

  constructor(storage: Pick<Storage, "getItem" | "setItem"> | undefined = globalThis.localStorage) {
    this.#storage = storage;
    const data = readSettings(storage?.getItem(KEY) ?? null);
    this.device = data.device;
    this.tolerance = data.tolerance;
    this.alpha = data.alpha;
    this.hub = data.hub;
  }

  /** Applies a change; throws (naming the field and what it takes) on an invalid value, changing nothing. */
  update(patch: Partial<SettingsData>): void {
    if (patch.hub !== undefined) patch = { ...patch, hub: normalizeHub(patch.hub) }; // throws, naming the field
    const next = { ...this.data, ...patch };
    const checked = readSettings(JSON.stringify(next));
    for (const field of Object.keys(patch) as (keyof SettingsData)[])
      if (checked[field] !== next[field])
        throw new RangeError(
          field === "device"
            ? `settings: device '${String(next.device)}' is not one of 'auto', 'wasm', 'webgpu'`
            : `settings: ${field} ${String(next[field])} must be a number strictly between 0 and 1, e.g. 0.05`,
        );
    this.device = checked.device;
    this.tolerance = checked.tolerance;
    this.alpha = checked.alpha;
    this.hub = checked.hub;
    this.#storage?.setItem(KEY, JSON.stringify(checked));
  }

  get data(): SettingsData {
    return { device: this.device, tolerance: this.tolerance, alpha: this.alpha, hub: this.hub };
  }
}
