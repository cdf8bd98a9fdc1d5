import { seededRng } from "../../stats/rng.ts";
import type { CaseTable, TypedSignal } from "../signals.ts";

const INV_TWO_32 = 1 / 4294967296;

export interface PlantedModesOptions {
  readonly seed: number;
  /** Cases in all. Default 600. */
  readonly cases?: number;
  /** Failing cases per planted mode; its length is the number of modes (at most 2). Default [40, 40]. */
  readonly modeSizes?: readonly number[];
  /** How far each mode's own signal is shifted, in passing-case SDs. Default 3. */
  readonly shift?: number;
  /** Failing cases with no signature (failures no signal explains). Default 0. */
  readonly background?: number;
  /** Noise signals unrelated to anything. Default 18 numeric and 2 binary. */
  readonly noise?: number;
}

export interface PlantedModes {
  readonly table: CaseTable;
  readonly signals: TypedSignal[];
  /** Per case: "mode-a", "mode-b", "background" or "pass". */
  readonly truth: readonly string[];
}

/**
 * Cases whose failures come in known modes, for checking that clustering finds
 * them: mode a fails with a low `attention.imageShare` (shifted down), mode b
 * with a high `uncertainty.entropy` (shifted up); every other signal is noise.
 * Case order is shuffled so a mode is not a run of neighbouring ids.
 *
 * @example plantedModes({ seed: 1 }).truth.filter((t) => t === "mode-a").length // 40
 */
export function plantedModes(options: PlantedModesOptions): PlantedModes {
  const rng = seededRng("plantedModes", options.seed);
  const uniform = () => ((rng.next() >>> 0) + 0.5) * INV_TWO_32;
  const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  const n = options.cases ?? 600;
  const sizes = options.modeSizes ?? [40, 40];
  const shift = options.shift ?? 3;
  const background = options.background ?? 0;
  const noise = options.noise ?? 20;
  const labels = ["mode-a", "mode-b"];
  const truth: string[] = [];
  sizes.forEach((size, m) => truth.push(...new Array<string>(size).fill(labels[m]!)));
  truth.push(...new Array<string>(background).fill("background"));
  if (truth.length > n) throw new RangeError(`plantedModes(): ${truth.length} failing cases do not fit in ${n} cases`);
  truth.push(...new Array<string>(n - truth.length).fill("pass"));
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(uniform() * (i + 1));
    [truth[i], truth[j]] = [truth[j]!, truth[i]!];
  }
  const imageShare = Float64Array.from(truth, (t) => normal() - (t === "mode-a" ? shift : 0));
  const entropy = Float64Array.from(truth, (t) => normal() + (t === "mode-b" ? shift : 0));
  const signals: TypedSignal[] = [
    {
      name: "attention.imageShare",
      column: "attention.imageShare",
      kind: "numeric",
      values: imageShare,
      tags: ["attention"],
    },
    {
      name: "uncertainty.entropy",
      column: "uncertainty.entropy",
      kind: "numeric",
      values: entropy,
      tags: ["uncertainty"],
    },
  ];
  for (let s = 0; s < noise; s++) {
    const binary = s % 10 === 9;
    const name = binary ? `noise.flag${s}` : `noise.n${s}`;
    signals.push({
      name,
      column: name,
      kind: binary ? "binary" : "numeric",
      values: Float64Array.from(truth, () => (binary ? (uniform() < 0.3 ? 1 : 0) : normal())),
      ...(binary ? { level: "1" } : {}),
      tags: [],
    });
  }
  const ids = truth.map((_, i) => `case-${String(i).padStart(4, "0")}`);
  const table: CaseTable = {
    ids,
    failed: truth.map((t) => t !== "pass"),
    columns: new Map(signals.map((s) => [s.name, Array.from(s.values)])),
  };
  return { table, signals, truth };
}
