/**
 * Layer profiles in M2: for a signal measured at every layer (`name.L0`,
 * `name.L1`, … or the logit lens' `name.S0`, …), does it vary across layers
 * (Friedman test, blocks = exploration cases, treatments = layers), and at
 * which layer do failures differ most from passes (AUC per layer)?
 * Descriptive: it locates where to look; it is not one of the e-BH tests.
 */
import { friedman } from "../stats/index.ts";
import { auc } from "./effects.ts";
import { P_TO_E_METHOD, pToE } from "./evalue.ts";
import type { EventLog } from "./events.ts";
import type { TypedSignal } from "./signals.ts";

export interface LayerProfile {
  readonly family: string;
  readonly layers: readonly string[];
  readonly n: number;
  readonly statistic: number;
  readonly p: number;
  /** The p-value through the mixture calibrator (see `evalue.ts`). */
  readonly e: number;
  /** AUC of failure vs pass per layer (0.5 = no difference). */
  readonly auc: readonly number[];
  /** The layer whose AUC is farthest from 0.5. */
  readonly strongest: string;
}

/**
 * Friedman across layers for each layered family among `signals`; logs `layers.compared`.
 * Example: signals `attention.imageShare.L0..L2` → one profile `{ family: "attention.imageShare", p: 1e-9, strongest: "L2", … }`.
 */
export function compareLayers(
  signals: readonly TypedSignal[],
  failed: readonly boolean[],
  log: EventLog,
): LayerProfile[] {
  const families = new Map<string, TypedSignal[]>();
  for (const s of signals) {
    const m = /^(.*)\.([LS])(\d+)$/.exec(s.name);
    if (!m || s.kind === "binary") continue;
    const key = `${m[1]}|${m[2]}`;
    families.set(key, [...(families.get(key) ?? []), s]);
  }
  const profiles: LayerProfile[] = [];
  for (const [key, members] of families) {
    if (members.length < 3) continue;
    const family = key.split("|")[0]!;
    const sorted = [...members].sort((a, b) => Number(/\d+$/.exec(a.name)![0]) - Number(/\d+$/.exec(b.name)![0]));
    const rows: number[][] = [];
    const keep: number[] = [];
    for (let i = 0; i < failed.length; i++) {
      const row = sorted.map((s) => s.values[i]!);
      if (row.every(Number.isFinite)) {
        rows.push(row);
        keep.push(i);
      }
    }
    if (rows.length < 5) continue;
    let statistic: number, p: number;
    try {
      ({ statistic, p } = friedman(rows));
    } catch {
      continue; // every block ties all layers: nothing to compare
    }
    const aucs = sorted.map((s) => auc(s.values, failed, keep));
    let strongest = 0;
    aucs.forEach((a, k) => {
      if (Math.abs(a - 0.5) > Math.abs(aucs[strongest]! - 0.5)) strongest = k;
    });
    const layers = sorted.map((s) => /\.([LS]\d+)$/.exec(s.name)![1]!);
    profiles.push({
      family,
      layers,
      n: rows.length,
      statistic,
      p,
      e: pToE(p),
      auc: aucs,
      strongest: layers[strongest]!,
    });
  }
  if (profiles.length) log.append("M2", "layers.compared", { test: "friedman", eMethod: P_TO_E_METHOD, profiles });
  return profiles;
}
